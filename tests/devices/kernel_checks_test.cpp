// DUET_KERNEL_CHECKS on whichever device DUET_DEVICES selects (the first of the Duet platform):
// out-of-bounds accesses through a buffer (a sub-buffer whose neighbour must stay untouched), a
// __local argument and a kernel-scope __local variable fail their events with
// CL_OUT_OF_RESOURCES and a message naming the kernel, the argument or variable, the byte offset
// and the work-item; so do barrier divergence (a barrier some work-items skip, two barriers in
// a branch: the group and two work-items named); the next kernel on the queue runs; an in-bounds
// launch of a checked build succeeds, barriers in a loop too. A plain program (no Catch2) to run by
// hand on a GPU host too; exit 0 pass, 1 fail, 77 skipped (no device). Sets DUET_KERNEL_CHECKS=1.
#include "standalone_device.hpp"
#include "support/checked_kernels.hpp"

#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

bool has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
}

constexpr size_t kItems = 1024, kLocal = 64;

/// Barrier kernels besides guarded_swap: the two halves of every group at two barriers; five
/// rounds of an exchange through __local memory, two barriers each.
constexpr const char* kBarrierKernels = R"CL(
__kernel void two_barriers(__global int* out) {
    __local int t[64];
    int lid = get_local_id(0);
    t[lid] = lid;
    if (lid < 32) {
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = t[lid ^ 1];
    } else {
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = -t[lid ^ 1];
    }
}
__kernel void loop_barriers(__global int* out) {
    __local int t[64];
    int lid = get_local_id(0), sum = 0;
    for (int round = 0; round < 5; ++round) {
        t[lid] = lid;
        barrier(CLK_LOCAL_MEM_FENCE);
        sum += t[lid ^ 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = sum;
}
)CL";
constexpr int kPattern = 12345;

cl_int statusOf(cl_event e) {
    cl_int s = CL_COMPLETE;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr);
    return s;
}

/// Runs `k` and then `add` on `q`; checks that `k` failed (or succeeded, `fails` false) and that
/// `add` completed. Returns the messages of the notify callback.
std::string runPair(cl_command_queue q, cl_kernel k, cl_kernel add, bool fails,
                    const std::string& what) {
    takeNotes();
    cl_event ran = nullptr, added = nullptr;
    cl_int e = clEnqueueNDRangeKernel(q, k, 1, nullptr, &kItems, &kLocal, 0, nullptr, &ran);
    expect(e == CL_SUCCESS, what + ": enqueue");
    e = clEnqueueNDRangeKernel(q, add, 1, nullptr, &kItems, &kLocal, 0, nullptr, &added);
    expect(e == CL_SUCCESS, what + ": enqueue add after it");
    clFinish(q);
    const cl_int s = statusOf(ran);
    expect(s == (fails ? CL_OUT_OF_RESOURCES : CL_COMPLETE),
           what + ": the event is " + (fails ? "CL_OUT_OF_RESOURCES" : "CL_COMPLETE") + " (got " +
               std::to_string(s) + ")");
    expect(statusOf(added) == CL_COMPLETE, what + ": the next kernel on the queue completes");
    clReleaseEvent(ran);
    clReleaseEvent(added);
    const std::string said = takeNotes();
    std::printf("      message: %s", said.empty() ? "(none)\n" : said.c_str());
    return said;
}

} // namespace

int main() {
    setenv("DUET_KERNEL_CHECKS", "1", 1);
    // A kernel that never ends (a work-item stopped before a barrier holding the others up)
    // would hang the test: give up after two minutes.
    startWatchdog(120, "a launch did not end within 120 s");
    std::string deviceName;
    cl_device_id device = deviceOrSkip("kernel_checks_test", deviceName);
    if (!device)
        return 77;
    std::printf("kernel_checks_test: %s, DUET_KERNEL_CHECKS=1\n", deviceName.c_str());
    cl_int e = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &device, note, nullptr, &e);
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &e);
    std::string log;
    cl_program p = buildOrReport(ctx, device, std::string(kOverrunKernels) + kAddKernel, log);
    if (!p)
        return 1;
    expect(!has(log, "not checked"), "every access of the program is checked");
    cl_kernel fill = clCreateKernel(p, "fill", &e);
    cl_kernel tileSum = clCreateKernel(p, "tile_sum", &e);
    cl_kernel sums = clCreateKernel(p, "sums", &e);
    cl_kernel add = clCreateKernel(p, "add", &e);

    // `out` and `neighbour`: two adjacent sub-buffers of one buffer, so that out[1024] is
    // neighbour[0] in memory.
    std::vector<int> init(2 * kItems, kPattern);
    cl_mem both = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                 init.size() * sizeof(int), init.data(), &e);
    cl_buffer_region first{0, kItems * sizeof(int)},
        second{kItems * sizeof(int), kItems * sizeof(int)};
    cl_mem out = clCreateSubBuffer(both, 0, CL_BUFFER_CREATE_TYPE_REGION, &first, &e);
    cl_mem neighbour = clCreateSubBuffer(both, 0, CL_BUFFER_CREATE_TYPE_REGION, &second, &e);
    expect(e == CL_SUCCESS, "two adjacent sub-buffers");
    std::vector<int> zeros(kItems, 0);
    cl_mem data = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                 kItems * sizeof(int), zeros.data(), &e);
    const int three = 3;
    clSetKernelArg(add, 0, sizeof data, &data);
    clSetKernelArg(add, 1, sizeof three, &three);
    int rounds = 0; // launches of `add` so far

    // A write one past the end of `out`, by work-item 1023.
    const int shift = 1;
    clSetKernelArg(fill, 0, sizeof out, &out);
    clSetKernelArg(fill, 1, sizeof shift, &shift);
    std::string m = runPair(q, fill, add, true, "buffer overrun");
    ++rounds;
    expect(has(m, "kernel 'fill': out-of-bounds write of 4 bytes at byte offset 4096 of argument "
                  "0 'out' (__global int*, a sub-buffer of 4096 bytes) by work-item 1023 (global "
                  "id)"),
           "the message names kernel, argument, offset and work-item");
    std::vector<int> got(kItems, 0);
    clEnqueueReadBuffer(q, neighbour, CL_TRUE, 0, kItems * sizeof(int), got.data(), 0, nullptr,
                        nullptr);
    bool untouched = true;
    for (int v : got)
        untouched &= v == kPattern;
    expect(untouched, "the neighbouring sub-buffer is untouched");

    // A __local argument of 64 floats, written at [64] by each group's last work-item.
    cl_mem scratch = clCreateBuffer(ctx, CL_MEM_READ_WRITE, kItems * sizeof(float), nullptr, &e);
    clSetKernelArg(tileSum, 0, sizeof scratch, &scratch);
    clSetKernelArg(tileSum, 1, kLocal * sizeof(float), nullptr);
    m = runPair(q, tileSum, add, true, "__local argument overrun");
    ++rounds;
    expect(has(m, "kernel 'tile_sum': out-of-bounds write of 4 bytes at byte offset 256 of "
                  "argument 1 'tile' (__local float*, 256 bytes per work-group) by work-item "),
           "the message names the __local argument and its size");

    // A kernel-scope __local variable of 16 ints, written by 64 work-items per group.
    clSetKernelArg(sums, 0, sizeof scratch, &scratch);
    m = runPair(q, sums, add, true, "__local variable overrun");
    ++rounds;
    expect(has(m, "kernel 'sums': out-of-bounds write of 4 bytes at byte offset ") &&
               has(m, " of variable 'sums.part' (64 bytes) by work-item "),
           "the message names the __local variable");

    // Barrier divergence: in group 1 (global ids 64-127) of guarded_swap with n = 100, local ids
    // 0-35 wait at the barrier and 36-63 end the kernel. The CPU and the NVIDIA device (this
    // test's two) word it alike: the group, work-item 0 and the first that went elsewhere.
    std::string barrierLog;
    cl_program bp =
        buildOrReport(ctx, device, std::string(kGuardedSwapKernel) + kBarrierKernels, barrierLog);
    if (!bp)
        return 1;
    cl_kernel swap = clCreateKernel(bp, "guarded_swap", &e);
    cl_kernel twoBarriers = clCreateKernel(bp, "two_barriers", &e);
    cl_kernel loopBarriers = clCreateKernel(bp, "loop_barriers", &e);
    std::vector<int> minusSeven(kItems, -7);
    cl_mem swapped = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                    kItems * sizeof(int), minusSeven.data(), &e);
    const int partial = 100;
    clSetKernelArg(swap, 0, sizeof swapped, &swapped);
    clSetKernelArg(swap, 1, sizeof partial, &partial);
    m = runPair(q, swap, add, true, "a barrier some work-items of group 1 skip");
    ++rounds;
    expect(has(m, "kernel 'guarded_swap': barrier divergence in work-group (1, 0, 0): ") &&
               has(m, "the launch was stopped (DUET_KERNEL_CHECKS)"),
           "the message names the kernel and the group");
    expect(has(m, "work-item 36 reaches the end of the kernel while work-item 0 waits at a "
                  "work-group barrier"),
           "the message names work-item 36, which ended, and work-item 0, at the barrier");
    // Work-items 0-31 at one barrier, 32-63 at another.
    clSetKernelArg(twoBarriers, 0, sizeof swapped, &swapped);
    m = runPair(q, twoBarriers, add, true, "two barriers in the two sides of a branch");
    ++rounds;
    // Every group diverges: which one reports first depends on the device's scheduling.
    expect(has(m, "kernel 'two_barriers': barrier divergence in work-group ("),
           "the message names the kernel and a group");
    expect(has(m, "work-item 32 waits at a different work-group barrier than work-item 0"),
           "the message names the two barriers' first work-items");
    // Whole groups in range, and barriers in a uniform loop (ten, more than the check's slots):
    // no report, the right results.
    const int whole = int(kItems);
    clSetKernelArg(swap, 1, sizeof whole, &whole);
    m = runPair(q, swap, add, false, "guarded_swap over whole groups");
    ++rounds;
    expect(m.empty(), "no message for a barrier every work-item reaches");
    std::vector<int> swappedOut(kItems, 0);
    clEnqueueReadBuffer(q, swapped, CL_TRUE, 0, kItems * sizeof(int), swappedOut.data(), 0, nullptr,
                        nullptr);
    expect(swappedOut == guardedSwapWanted(whole, whole), "guarded_swap swapped every pair");
    clSetKernelArg(loopBarriers, 0, sizeof swapped, &swapped);
    m = runPair(q, loopBarriers, add, false, "barriers in a uniform loop");
    ++rounds;
    expect(m.empty(), "no message for barriers in a uniform loop");
    clEnqueueReadBuffer(q, swapped, CL_TRUE, 0, kItems * sizeof(int), swappedOut.data(), 0, nullptr,
                        nullptr);
    bool looped = true;
    for (size_t i = 0; i < kItems; ++i) // each round adds the neighbour's (i ^ 1) lid
        looped &= swappedOut[i] == 5 * int((i ^ 1) % kLocal);
    expect(looped, "the loop's barriers ordered each round's exchange");
    clReleaseMemObject(swapped);
    for (cl_kernel k : {swap, twoBarriers, loopBarriers})
        clReleaseKernel(k);
    clReleaseProgram(bp);

    // In bounds: the checked build runs and writes what it should.
    const int none = 0;
    clSetKernelArg(fill, 1, sizeof none, &none);
    m = runPair(q, fill, add, false, "in bounds");
    ++rounds;
    expect(m.empty(), "no message for a launch in bounds");
    clEnqueueReadBuffer(q, out, CL_TRUE, 0, kItems * sizeof(int), got.data(), 0, nullptr, nullptr);
    bool filled = true;
    for (int v : got)
        filled &= v == 7;
    expect(filled, "the in-bounds launch wrote every element");
    clEnqueueReadBuffer(q, data, CL_TRUE, 0, kItems * sizeof(int), got.data(), 0, nullptr, nullptr);
    bool added = true;
    for (int v : got)
        added &= v == 3 * rounds;
    expect(added, "each add after a stopped kernel ran (" + std::to_string(3 * rounds) + ")");

    clReleaseMemObject(scratch);
    clReleaseMemObject(data);
    clReleaseMemObject(out);
    clReleaseMemObject(neighbour);
    clReleaseMemObject(both);
    for (cl_kernel k : {fill, tileSum, sums, add})
        clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    g_runDone = true;
    std::printf("kernel_checks_test: %s (%d failures)\n", g_failures ? "FAILED" : "passed",
                g_failures);
    return g_failures ? 1 : 0;
}
