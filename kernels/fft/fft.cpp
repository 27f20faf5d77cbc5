// libduet-fft: plans (work-group shapes from the device's limits, one program per plan, twiddle
// tables) and enqueueing of the fft.cl kernels.
#include "duet/fft/fft.hpp"

#include "duet/cl_error_name.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace duet::fft {

namespace {

bool powerOfTwo(size_t n) {
    return n != 0 && (n & (n - 1)) == 0;
}

Status fail(cl_int code, std::string message) {
    return Status{code, "duet-fft: " + message};
}

std::string errorText(cl_int code) {
    return clErrorName(code);
}

Status clFail(cl_int code, const std::string& what) {
    return fail(code, what + " returned " + errorText(code));
}

// Points per work-item in fft.cl: 8, or all of them for n < 8.
size_t threadsPerSequence(size_t n) {
    return n < 8 ? 1 : n / 8;
}

struct Limits {
    size_t maxGroup = 0;
    size_t maxItems[3] = {};
    cl_ulong localBytes = 0;
    bool gpuLike = false;
};

// Largest power of two <= v (v >= 1).
size_t floorPow2(size_t v) {
    size_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

// Sequences per work-group: `target`, or less where the device's work-group size, work-item
// sizes (dimension `seqDim` holds the sequences) or local memory (all of it for one work-group)
// say so, and never more than the sequences there are.
size_t chooseGroup(size_t n, size_t count, size_t target, const Limits& lim, int seqDim,
                   size_t reserveLocal) {
    size_t threads = threadsPerSequence(n);
    size_t g = target;
    size_t byGroup = lim.maxGroup / threads;
    size_t byItems = lim.maxItems[seqDim];
    // Two halves of n complex floats per sequence (fft.cl's ping-pong).
    size_t byLocal = size_t((lim.localBytes - reserveLocal) / (2 * n * 2 * sizeof(cl_float)));
    g = std::min({g, byGroup, byItems, byLocal, floorPow2(std::max<size_t>(count, 1))});
    return g == 0 ? 0 : floorPow2(g);
}

} // namespace

double flops(const Desc& d) {
    double perBatch = 0;
    double points = double(d.nx) * double(d.ny);
    // 2D: ny transforms of nx points plus nx of ny points = 5 N log2 N with N = nx * ny.
    perBatch = 5.0 * points * std::log2(points);
    return perBatch * double(d.batch);
}

Status Plan::create(cl_context context, cl_device_id device, const Desc& desc,
                    std::unique_ptr<Plan>& out) {
    out.reset();
    // CL_INVALID_VALUE: sizes that are not powers of two, or none at all.
    if (!powerOfTwo(desc.nx) || desc.nx < 2)
        return fail(CL_INVALID_VALUE,
                    "nx = " + std::to_string(desc.nx) + " is not a power of two >= 2");
    if (!powerOfTwo(desc.ny) || (desc.ny != 1 && desc.ny < 2))
        return fail(CL_INVALID_VALUE,
                    "ny = " + std::to_string(desc.ny) + " is not 1 (1D) or a power of two >= 2");
    if (desc.batch == 0)
        return fail(CL_INVALID_VALUE, "batch = 0");
    if ((desc.groupX && !powerOfTwo(desc.groupX)) || (desc.groupY && !powerOfTwo(desc.groupY)))
        return fail(CL_INVALID_VALUE, "groupX / groupY must be 0 or a power of two");
    if (desc.nx * desc.ny * desc.batch > (size_t(1) << 31) / 2)
        return fail(CL_INVALID_VALUE, "more than 2^30 points (32-bit indices in the kernels)");

    // CL_INVALID_CONTEXT / CL_INVALID_DEVICE: handles the platform does not know.
    cl_uint refs = 0;
    if (!context || clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs,
                                     nullptr) != CL_SUCCESS)
        return fail(CL_INVALID_CONTEXT, "the context is not a valid cl_context");
    Limits lim;
    cl_device_type type = 0;
    if (!device || clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof lim.maxGroup,
                                   &lim.maxGroup, nullptr) != CL_SUCCESS)
        return fail(CL_INVALID_DEVICE, "the device is not a valid cl_device_id");
    clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof lim.maxItems, lim.maxItems,
                    nullptr);
    clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lim.localBytes, &lim.localBytes,
                    nullptr);
    clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    lim.gpuLike = !(type & CL_DEVICE_TYPE_CPU);

    auto plan = std::unique_ptr<Plan>(new Plan());
    plan->m_desc = desc;
    plan->m_context = context;
    const bool twoD = desc.ny > 1;

    // Work-group shapes. x: sequences are rows, about 256 work-items per group (measured on
    // Duet's CPU device: 64 was up to 4x slower at 256 points, the launch and barrier loops
    // amortised over too little work). y: sequences are adjacent columns, so that work-items
    // along dimension 0 (SIMD lanes on a CPU, a wavefront on a GPU) read neighbouring complex
    // values: 8 (64 bytes, a cache line) on a CPU, 16 (128 bytes) on a GPU.
    size_t countX = desc.ny * desc.batch;
    size_t countY = desc.nx * desc.batch;
    size_t targetX =
        desc.groupX ? desc.groupX : std::max<size_t>(1, 256 / threadsPerSequence(desc.nx));
    size_t targetY = desc.groupY ? desc.groupY : (lim.gpuLike ? 16 : 8);
    size_t reserve = 256; // what a device may keep for its own use of local memory
    plan->m_transpose = twoD && desc.columns == Desc::Columns::Transpose;
    plan->m_groupX = chooseGroup(desc.nx, countX, targetX, lim, 1, reserve);
    if (plan->m_transpose) // rows of the transposed array: ny points, nx * batch of them
        plan->m_groupY = chooseGroup(
            desc.ny, countY,
            desc.groupY ? desc.groupY : std::max<size_t>(1, 256 / threadsPerSequence(desc.ny)), lim,
            1, reserve);
    else if (twoD)
        plan->m_groupY = chooseGroup(desc.ny, countY, targetY, lim, 0, reserve);
    if (plan->m_groupX == 0 || (twoD && plan->m_groupY == 0))
        return fail(
            CL_INVALID_VALUE,
            "a sequence of " + std::to_string(twoD && plan->m_groupX ? desc.ny : desc.nx) +
                " points needs " +
                std::to_string(threadsPerSequence(twoD && plan->m_groupX ? desc.ny : desc.nx)) +
                " work-items and " +
                std::to_string((twoD && plan->m_groupX ? desc.ny : desc.nx) * 8) +
                " bytes of local memory in one work-group; the device allows " +
                std::to_string(lim.maxGroup) + " and " + std::to_string(lim.localBytes));
    if (desc.groupX && plan->m_groupX != desc.groupX)
        return fail(CL_INVALID_VALUE, "groupX = " + std::to_string(desc.groupX) +
                                          " does not fit the device (at most " +
                                          std::to_string(plan->m_groupX) + ")");
    if (twoD && desc.groupY && plan->m_groupY != desc.groupY)
        return fail(CL_INVALID_VALUE, "groupY = " + std::to_string(desc.groupY) +
                                          " does not fit the device (at most " +
                                          std::to_string(plan->m_groupY) + ")");

    size_t localPoints = plan->m_groupX * desc.nx;
    std::string options =
        "-DFFT_NX=" + std::to_string(desc.nx) + " -DFFT_GX=" + std::to_string(plan->m_groupX);
    if (plan->m_transpose) {
        // 16 x 16 tiles (8 x 8 where work-groups are smaller than 256).
        plan->m_tile =
            lim.maxGroup >= 256 && lim.maxItems[0] >= 16 && lim.maxItems[1] >= 16 ? 16 : 8;
        options += " -DFFT_NY=" + std::to_string(desc.ny) +
                   " -DFFT_GT=" + std::to_string(plan->m_groupY) +
                   " -DFFT_TILE=" + std::to_string(plan->m_tile);
        localPoints = std::max(localPoints, plan->m_groupY * desc.ny);
    } else if (twoD) {
        options +=
            " -DFFT_NY=" + std::to_string(desc.ny) + " -DFFT_GY=" + std::to_string(plan->m_groupY);
        localPoints = std::max(localPoints, plan->m_groupY * desc.ny);
    }
    options += " -DFFT_LOCAL_POINTS=" + std::to_string(localPoints);
    plan->m_options = options;

    cl_int err;
    const char* source = kernelSource();
    plan->m_program = clCreateProgramWithSource(context, 1, &source, nullptr, &err);
    if (err != CL_SUCCESS)
        return clFail(err, "clCreateProgramWithSource(fft.cl)");
    err = clBuildProgram(plan->m_program, 1, &device, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
        size_t size = 0;
        clGetProgramBuildInfo(plan->m_program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
        std::string log(size, '\0');
        clGetProgramBuildInfo(plan->m_program, device, CL_PROGRAM_BUILD_LOG, size, log.data(),
                              nullptr);
        return fail(err, "building fft.cl with '" + options + "' failed: " + log);
    }
    const char* names[3][2] = {{"fft_x_forward", "fft_x_inverse"},
                               {"fft_y_forward", "fft_y_inverse"},
                               {"fft_t_forward", "fft_t_inverse"}};
    if (plan->m_transpose) {
        plan->m_transposeKernel = clCreateKernel(plan->m_program, "fft_transpose", &err);
        if (err != CL_SUCCESS)
            return clFail(err, "clCreateKernel(fft_transpose)");
        plan->m_scratch = clCreateBuffer(context, CL_MEM_READ_WRITE, plan->bytes(), nullptr, &err);
        if (err != CL_SUCCESS)
            return clFail(err, "clCreateBuffer(transpose scratch)");
    }
    for (int axis = 0; axis < (twoD ? 2 : 1); ++axis) {
        int kernelAxis = axis == 1 && plan->m_transpose ? 2 : axis;
        for (int inv = 0; inv < 2; ++inv) {
            const char* name = names[kernelAxis][inv];
            plan->m_kernels[kernelAxis][inv] = clCreateKernel(plan->m_program, name, &err);
            if (err != CL_SUCCESS)
                return clFail(err, std::string("clCreateKernel(") + name + ")");
            size_t groupSize = 0;
            clGetKernelWorkGroupInfo(plan->m_kernels[kernelAxis][inv], device,
                                     CL_KERNEL_WORK_GROUP_SIZE, sizeof groupSize, &groupSize,
                                     nullptr);
            size_t n = axis ? desc.ny : desc.nx;
            size_t want = threadsPerSequence(n) * (axis ? plan->m_groupY : plan->m_groupX);
            if (groupSize && groupSize < want)
                return fail(CL_INVALID_VALUE,
                            std::string(name) + " runs at most " + std::to_string(groupSize) +
                                " work-items per group, it needs " + std::to_string(want) +
                                " (set a smaller groupX / groupY)");
        }
        // The twiddle table e^(-2 pi i k / n), k < n, in double precision.
        size_t n = axis ? desc.ny : desc.nx;
        if (axis == 1 && desc.ny == desc.nx) {
            plan->m_twiddles[1] = plan->m_twiddles[0];
            clRetainMemObject(plan->m_twiddles[1]);
            continue;
        }
        std::vector<cl_float2> table(n);
        for (size_t k = 0; k < n; ++k) {
            double a = -2.0 * std::numbers::pi * double(k) / double(n);
            table[k] = {{float(std::cos(a)), float(std::sin(a))}};
        }
        plan->m_twiddles[axis] = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                                n * sizeof(cl_float2), table.data(), &err);
        if (err != CL_SUCCESS)
            return clFail(err, "clCreateBuffer(twiddles)");
    }
    out = std::move(plan);
    return {};
}

Plan::~Plan() {
    for (auto& axis : m_kernels)
        for (cl_kernel k : axis)
            if (k)
                clReleaseKernel(k);
    if (m_transposeKernel)
        clReleaseKernel(m_transposeKernel);
    for (cl_mem m : {m_twiddles[0], m_twiddles[1], m_scratch})
        if (m)
            clReleaseMemObject(m);
    if (m_program)
        clReleaseProgram(m_program);
}

Status Plan::enqueueAxis(cl_command_queue queue, int axis, bool inverse, cl_mem in, cl_mem out,
                         float scale, cl_uint numWait, const cl_event* wait, cl_event* event) {
    cl_kernel k = m_kernels[axis][inverse];
    const Desc& d = m_desc;
    const bool yAxis = axis == 1;
    cl_uint count, stride, dist, inner, slabDist;
    size_t n, g;
    if (axis == 0) { // rows: contiguous sequences
        n = d.nx;
        g = m_groupX;
        count = cl_uint(d.ny * d.batch);
        stride = 1;
        dist = cl_uint(d.nx);
        inner = count;
        slabDist = 0;
    } else if (axis == 2) { // rows of the transposed arrays
        n = d.ny;
        g = m_groupY;
        count = cl_uint(d.nx * d.batch);
        stride = 1;
        dist = cl_uint(d.ny);
        inner = count;
        slabDist = 0;
    } else { // columns of each 2D array
        n = d.ny;
        g = m_groupY;
        count = cl_uint(d.nx * d.batch);
        stride = cl_uint(d.nx);
        dist = 1;
        inner = cl_uint(d.nx);
        slabDist = cl_uint(d.nx * d.ny);
    }
    cl_int err = CL_SUCCESS;
    err |= clSetKernelArg(k, 0, sizeof(cl_mem), &in);
    err |= clSetKernelArg(k, 1, sizeof(cl_mem), &out);
    err |= clSetKernelArg(k, 2, sizeof(cl_mem), &m_twiddles[axis == 0 ? 0 : 1]); // by length
    err |= clSetKernelArg(k, 3, sizeof count, &count);
    err |= clSetKernelArg(k, 4, sizeof stride, &stride);
    err |= clSetKernelArg(k, 5, sizeof dist, &dist);
    err |= clSetKernelArg(k, 6, sizeof inner, &inner);
    err |= clSetKernelArg(k, 7, sizeof slabDist, &slabDist);
    err |= clSetKernelArg(k, 8, sizeof scale, &scale);
    if (err != CL_SUCCESS)
        return fail(CL_INVALID_KERNEL_ARGS, "clSetKernelArg failed for the FFT kernel");
    size_t threads = threadsPerSequence(n);
    size_t groups = (count + g - 1) / g;
    size_t global[2], local[2];
    if (!yAxis) {
        global[0] = threads, global[1] = groups * g;
        local[0] = threads, local[1] = g;
    } else {
        global[0] = groups * g, global[1] = threads;
        local[0] = g, local[1] = threads;
    }
    err = clEnqueueNDRangeKernel(queue, k, 2, nullptr, global, local, numWait, wait, event);
    if (err != CL_SUCCESS)
        return clFail(err, std::string("clEnqueueNDRangeKernel(fft_") + "xyt"[axis] +
                               (inverse ? "_inverse" : "_forward") + ")");
    return {};
}

Status Plan::enqueueTranspose(cl_command_queue queue, cl_mem in, cl_mem out, size_t nx, size_t ny,
                              cl_uint numWait, const cl_event* wait, cl_event* event) {
    cl_uint x = cl_uint(nx), y = cl_uint(ny);
    cl_int err = CL_SUCCESS;
    err |= clSetKernelArg(m_transposeKernel, 0, sizeof(cl_mem), &in);
    err |= clSetKernelArg(m_transposeKernel, 1, sizeof(cl_mem), &out);
    err |= clSetKernelArg(m_transposeKernel, 2, sizeof x, &x);
    err |= clSetKernelArg(m_transposeKernel, 3, sizeof y, &y);
    if (err != CL_SUCCESS)
        return fail(CL_INVALID_KERNEL_ARGS, "clSetKernelArg failed for fft_transpose");
    size_t t = m_tile;
    size_t global[3] = {(nx + t - 1) / t * t, (ny + t - 1) / t * t, m_desc.batch};
    size_t local[3] = {t, t, 1};
    err = clEnqueueNDRangeKernel(queue, m_transposeKernel, 3, nullptr, global, local, numWait, wait,
                                 event);
    if (err != CL_SUCCESS)
        return clFail(err, "clEnqueueNDRangeKernel(fft_transpose)");
    return {};
}

Status Plan::enqueue(cl_command_queue queue, Direction direction, cl_mem in, cl_mem out,
                     float scale, cl_uint numWait, const cl_event* wait, cl_event* event) {
    if (event)
        *event = nullptr;
    // CL_INVALID_COMMAND_QUEUE, CL_INVALID_CONTEXT: the queue must belong to the plan's context.
    cl_context queueContext = nullptr;
    if (!queue || clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queueContext, &queueContext,
                                        nullptr) != CL_SUCCESS)
        return fail(CL_INVALID_COMMAND_QUEUE, "the queue is not a valid cl_command_queue");
    if (queueContext != m_context)
        return fail(CL_INVALID_CONTEXT, "the queue belongs to another context than the plan");
    // CL_INVALID_MEM_OBJECT, CL_INVALID_BUFFER_SIZE: buffers of this context holding bytes().
    for (cl_mem m : {in, out}) {
        const char* which = m == in ? "input" : "output";
        cl_mem_object_type type = 0;
        size_t size = 0;
        cl_context memContext = nullptr;
        if (!m || clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof type, &type, nullptr) != CL_SUCCESS ||
            type != CL_MEM_OBJECT_BUFFER ||
            clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, nullptr) != CL_SUCCESS ||
            clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof memContext, &memContext, nullptr) !=
                CL_SUCCESS)
            return fail(CL_INVALID_MEM_OBJECT,
                        std::string("the ") + which + " is not a valid buffer object");
        if (memContext != m_context)
            return fail(CL_INVALID_CONTEXT,
                        std::string("the ") + which + " buffer belongs to another context");
        if (size < bytes())
            return fail(CL_INVALID_BUFFER_SIZE,
                        std::string("the ") + which + " buffer holds " + std::to_string(size) +
                            " bytes, the plan needs " + std::to_string(bytes()));
    }
    const bool inverse = direction == Direction::Inverse;
    if (m_desc.ny == 1)
        return enqueueAxis(queue, 0, inverse, in, out, scale, numWait, wait, event);
    cl_event rows = nullptr;
    Status s = enqueueAxis(queue, 0, inverse, in, out, 1.0f, numWait, wait, &rows);
    if (!s)
        return s;
    if (!m_transpose) {
        s = enqueueAxis(queue, 1, inverse, out, out, scale, 1, &rows, event);
        clReleaseEvent(rows);
        return s;
    }
    // out -> scratch (transposed), rows of scratch in place, scratch -> out.
    cl_event step[2] = {};
    s = enqueueTranspose(queue, out, m_scratch, m_desc.nx, m_desc.ny, 1, &rows, &step[0]);
    clReleaseEvent(rows);
    if (!s)
        return s;
    s = enqueueAxis(queue, 2, inverse, m_scratch, m_scratch, scale, 1, &step[0], &step[1]);
    clReleaseEvent(step[0]);
    if (!s)
        return s;
    s = enqueueTranspose(queue, m_scratch, out, m_desc.ny, m_desc.nx, 1, &step[1], event);
    clReleaseEvent(step[1]);
    return s;
}

} // namespace duet::fft
