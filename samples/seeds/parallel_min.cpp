// The parallel-min kernels (two stages of atomics) and the host code that sizes and runs them.
#include "parallel_min.hpp"

#include <algorithm>
#include <stdexcept>

namespace duet::seeds {

const char* const kParallelMinSource = R"CLC(
#pragma OPENCL EXTENSION cl_khr_local_int32_extended_atomics : enable
#pragma OPENCL EXTENSION cl_khr_global_int32_extended_atomics : enable

// Stage 1: every work-item takes the minimum of its share of the input, four uints per load;
// the work-group agrees on one value through a __local atomic, and its first work-item folds
// that value into a global slot (several groups share a slot, so the slot update is atomic).
__kernel void min_stage1(__global const uint4 *src, uint vec4Count, uint chunked,
                         __local uint *groupMin, __global uint *slots, uint slotCount)
{
    uint gid = (uint)get_global_id(0);
    uint items = (uint)get_global_size(0);
    uint first, step, end;
    if (chunked) {
        // Contiguous chunks: one core streams through its own cache lines.
        uint per = (vec4Count + items - 1) / items;
        first = gid * per;
        step = 1;
        end = min(first + per, vec4Count);
    } else {
        // Interleaved: neighbouring work-items touch neighbouring addresses.
        first = gid;
        step = items;
        end = vec4Count;
    }
    uint4 m = (uint4)(UINT_MAX);
    for (uint i = first; i < end; i += step)
        m = min(m, src[i]);
    uint mine = min(min(m.x, m.y), min(m.z, m.w));

    if (get_local_id(0) == 0)
        *groupMin = UINT_MAX;
    barrier(CLK_LOCAL_MEM_FENCE);
    atom_min(groupMin, mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        atom_min(&slots[get_group_id(0) % slotCount], *groupMin);
}

// Stage 2: one work-item per slot folds the slots into result[0].
__kernel void min_reduce(__global const uint *slots, __global uint *result)
{
    atom_min(result, slots[get_global_id(0)]);
}
)CLC";

ParallelMinPlan planParallelMin(cl_device_id device, cl_kernel stage1) {
    cl_uint units = 1;
    cl_device_type type = 0;
    size_t kernelMax = 1;
    check(clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr),
          "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)");
    check(clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, nullptr),
          "clGetDeviceInfo(CL_DEVICE_TYPE)");
    check(clGetKernelWorkGroupInfo(stage1, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernelMax,
                                   &kernelMax, nullptr),
          "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    ParallelMinPlan plan;
    plan.chunked = (type & CL_DEVICE_TYPE_CPU) ? 1 : 0;
    plan.local = std::min<size_t>(64, kernelMax);
    // Enough groups to keep every unit busy and balance the tail; GPUs want more in flight.
    plan.groups = size_t(std::max<cl_uint>(units, 1)) * (plan.chunked ? 4 : 16);
    plan.slots = std::min<size_t>(plan.groups, 32);
    return plan;
}

ParallelMin::ParallelMin(cl_context context, cl_device_id device, cl_program program, cl_mem src,
                         size_t count)
    : stage1(createKernel(program, "min_stage1")), reduce(createKernel(program, "min_reduce")) {
    if (count == 0 || count % 4 != 0 || count / 4 > 0xffffffffu)
        throw std::invalid_argument("parallel min needs a non-zero multiple of 4 uints "
                                    "(below 2^34)");
    vec4Count = cl_uint(count / 4);
    plan = planParallelMin(device, stage1);
    cl_int err = CL_SUCCESS;
    slots = Buffer(
        clCreateBuffer(context, CL_MEM_READ_WRITE, plan.slots * sizeof(cl_uint), nullptr, &err));
    check(err, "clCreateBuffer(slots)");
    result = Buffer(clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_uint), nullptr, &err));
    check(err, "clCreateBuffer(result)");

    setArg(stage1, 0, src);
    setArg(stage1, 1, vec4Count);
    setArg(stage1, 2, plan.chunked);
    setLocalArg(stage1, 3, sizeof(cl_uint));
    setArg(stage1, 4, slots.get());
    setArg(stage1, 5, cl_uint(plan.slots));
    setArg(reduce, 0, slots.get());
    setArg(reduce, 1, result.get());
}

void ParallelMin::setChunked(bool chunked) {
    plan.chunked = chunked ? 1 : 0;
    setArg(stage1, 2, plan.chunked);
}

void ParallelMin::enqueue(cl_command_queue queue) const {
    const cl_uint ones = 0xffffffffu;
    check(clEnqueueFillBuffer(queue, slots, &ones, sizeof ones, 0, plan.slots * sizeof(cl_uint), 0,
                              nullptr, nullptr),
          "clEnqueueFillBuffer(slots)");
    check(clEnqueueFillBuffer(queue, result, &ones, sizeof ones, 0, sizeof(cl_uint), 0, nullptr,
                              nullptr),
          "clEnqueueFillBuffer(result)");
    const size_t global = plan.groups * plan.local;
    check(clEnqueueNDRangeKernel(queue, stage1, 1, nullptr, &global, &plan.local, 0, nullptr,
                                 nullptr),
          "clEnqueueNDRangeKernel(min_stage1)");
    check(clEnqueueNDRangeKernel(queue, reduce, 1, nullptr, &plan.slots, nullptr, 0, nullptr,
                                 nullptr),
          "clEnqueueNDRangeKernel(min_reduce)");
}

cl_uint ParallelMin::read(cl_command_queue queue) const {
    cl_uint value = 0;
    check(clEnqueueReadBuffer(queue, result, CL_TRUE, 0, sizeof value, &value, 0, nullptr, nullptr),
          "clEnqueueReadBuffer(result)");
    return value;
}

} // namespace duet::seeds
