// The CPU device's run-time guards through the API: the cases every device shares
// (devices/guards_cases.cpp, compiled in with this file's kGuardDevice) and the CPU's own:
// __local overruns, the build log's note on accesses a checked build cannot check, and barrier
// divergence (work-items of one group parting at a barrier: the work-group pass's check).
#include "devices/guards_cases.hpp"
#include "support/scoped_env.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace duet::test;

/// DUET_CPU_CHECKS (the CPU device's first name for DUET_KERNEL_CHECKS) is set by the ctest
/// entry; launches that need no particular work-group size run in groups of 32, the endless
/// kernels in groups of 16.
const GuardDevice duet::test::kGuardDevice{
    CL_DEVICE_TYPE_CPU,
    "DUET_CPU_CHECKS",
    32,
    16,
    5.0,
    "work-item 36 reaches the end of the kernel while work-item 0 waits at a work-group barrier"};

TEST_CASE("checked kernels stop at a __local overrun", "[cpu][checks]") {
    Guarded g;
    cl_program p = g.build(guardKernels());
    SECTION("a __local argument") {
        cl_kernel k = g.kernel(p, "tile_sum");
        cl_mem out = g.buffer(64 * sizeof(float));
        setArg(k, 0, out);
        REQUIRE(clSetKernelArg(k, 1, 64 * sizeof(float), nullptr) == CL_SUCCESS);
        // One group: one faulting work-item.
        g.runStopped(k, 64, 64,
                     "kernel 'tile_sum': out-of-bounds write of 4 bytes at byte offset 256 of "
                     "argument 1 'tile' (__local float*, 256 bytes per work-group) by work-item "
                     "63 (global id)");
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    SECTION("a kernel-scope __local variable") {
        cl_kernel k = g.kernel(p, "sums");
        cl_mem out = g.buffer(32 * sizeof(int));
        setArg(k, 0, out);
        // clang names a kernel-scope variable <kernel>.<name>.
        g.runStopped(k, 32, 32,
                     "kernel 'sums': out-of-bounds write of 4 bytes at byte offset 64 of "
                     "variable 'sums.part' (64 bytes) by work-item 16 (global id)");
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    clReleaseProgram(p);
}

TEST_CASE("checked builds say which accesses they cannot check", "[cpu][checks]") {
    Guarded g;
    // A pointer made from an integer read from memory derives from no argument.
    cl_program p = g.build(R"CL(
__kernel void chase(__global const ulong* table, __global int* out) {
    __global const int* p = (__global const int*)table[0];
    out[0] = *p;
}
__kernel void plain(__global int* out) { out[get_global_id(0)] = 1; }
)CL");
    const std::string log = buildLog(p, g.device);
    INFO(log);
    CHECK(log.find("note: DUET_CPU_CHECKS: kernel chase: 1 of 3 memory accesses are not checked") !=
          std::string::npos);
    CHECK(log.find("kernel plain:") == std::string::npos);
    clReleaseProgram(p);
}

// Checked accesses outside the kernel's loops defer their failures to the end of the work-item's
// region (jit/kernel_checks.cpp): the work-item loops stay vectorised, and a failing lane's access
// is not made. The message is the one the first failing work-item in loop order gives.
namespace {
const char* kLaneKernels = R"CL(
__kernel void scale(__global float* out, __global float* in, float s) {
    size_t i = get_global_id(0);
    out[i] = s * in[i];
}
__kernel void every_third(__global int* out, __global int* in) {
    size_t i = get_global_id(0);
    if (i % 3 == 1)
        out[i] = in[i + 20];
}
)CL";
} // namespace

TEST_CASE("a vectorised checked loop stops at a lane that is not the first, writing nothing past "
          "the end",
          "[cpu][checks]") {
    Guarded g;
    cl_program p = g.build(kLaneKernels);
    cl_kernel k = g.kernel(p, "scale");
    std::vector<float> init(64, -1.0f), in(64);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i);
    // `out` is the first 13 floats of a live buffer: work-items 13-15 would write into it.
    cl_mem parent = g.buffer(init.size() * sizeof(float), init.data());
    cl_buffer_region region{0, 13 * sizeof(float)};
    cl_int e = CL_SUCCESS;
    cl_mem out = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
    REQUIRE(e == CL_SUCCESS);
    cl_mem src = g.buffer(in.size() * sizeof(float), in.data());
    setArg(k, 0, out);
    setArg(k, 1, src);
    setArg(k, 2, 2.0f);
    g.runStopped(k, 16, 16,
                 "kernel 'scale': out-of-bounds write of 4 bytes at byte offset 52 of argument 0 "
                 "'out' (__global float*, a sub-buffer of 52 bytes) by work-item 13 (global id)");
    CHECK(g.messagesWith("out-of-bounds") == 1);
    const std::vector<float> after = g.read<float>(parent, init.size());
    for (size_t i = 0; i < 13; ++i)
        CHECK(after[i] == 2.0f * float(i)); // the work-items before the failing one
    for (size_t i = 13; i < after.size(); ++i)
        REQUIRE(after[i] == -1.0f); // the parent past the sub-buffer: untouched
    clReleaseMemObject(src);
    clReleaseMemObject(out);
    clReleaseMemObject(parent);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("a divergent (masked) checked read fails at the first work-item that reads past the "
          "end",
          "[cpu][checks]") {
    Guarded g;
    cl_program p = g.build(kLaneKernels);
    cl_kernel k = g.kernel(p, "every_third");
    std::vector<int> zeros(32, 0), in(32);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = int(100 + i);
    cl_mem out = g.buffer(zeros.size() * sizeof(int), zeros.data());
    cl_mem src = g.buffer(in.size() * sizeof(int), in.data());
    setArg(k, 0, out);
    setArg(k, 1, src);
    // Work-items 1, 4, 7, 10 read in[21..30]; 13 reads in[33], 132 bytes in.
    g.runStopped(k, 32, 32,
                 "kernel 'every_third': out-of-bounds read of 4 bytes at byte offset 132 of "
                 "argument 1 'in' (__global int*, a buffer of 128 bytes) by work-item 13 (global "
                 "id)");
    CHECK(g.messagesWith("out-of-bounds") == 1);
    const std::vector<int> after = g.read<int>(out, 32);
    for (int i : {1, 4, 7, 10})
        CHECK(after[size_t(i)] == 100 + i + 20);
    CHECK(after[0] == 0);
    CHECK(after[2] == 0);
    // In bounds everywhere: the same kernel gives the host's results.
    std::vector<int> big(64);
    for (size_t i = 0; i < big.size(); ++i)
        big[i] = int(7 * i);
    cl_mem src2 = g.buffer(big.size() * sizeof(int), big.data());
    cl_mem out2 = g.buffer(zeros.size() * sizeof(int), zeros.data());
    setArg(k, 0, out2);
    setArg(k, 1, src2);
    REQUIRE(g.run(k, 32, 32) == CL_COMPLETE);
    const std::vector<int> ok = g.read<int>(out2, 32);
    for (size_t i = 0; i < ok.size(); ++i)
        REQUIRE(ok[i] == (i % 3 == 1 ? int(7 * (i + 20)) : 0));
    clReleaseMemObject(out2);
    clReleaseMemObject(src2);
    clReleaseMemObject(src);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

// Barrier divergence: the work-group pass runs a branch or loop around a work-group barrier as
// uniform control (the spec's rule), so a kernel that breaks the rule computed wrong results in
// silence. Checked builds compare, at the end of each region that may end at several barriers,
// where every work-item of the group went (jit/regions.cpp, __duet_check_barriers).
namespace {
const std::string kBarrierKernels = std::string(kGuardedSwapKernel) + R"CL(
__kernel void item_trips(__global int* out) {
    __local int t[64];
    int lid = get_local_id(0);
    int sum = 0;
    for (int i = 0; i <= lid % 3; ++i) {
        t[lid] = i + lid;
        barrier(CLK_LOCAL_MEM_FENCE);
        sum += t[lid ^ 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = sum;
}
__kernel void early_return(__global int* out) {
    __local int t[64];
    int lid = get_local_id(0);
    if (lid == 5)
        return;
    t[lid] = lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[lid ^ 1];
}
__kernel void two_barriers(__global int* out) {
    __local int t[64];
    int lid = get_local_id(0);
    t[lid] = lid;
    if (lid < 3) {
        barrier(CLK_LOCAL_MEM_FENCE);
        out[lid] = t[lid ^ 1];
    } else {
        barrier(CLK_GLOBAL_MEM_FENCE);
        out[lid] = t[lid ^ 1] + 1;
    }
}
__kernel void rows_in_range(__global int* out, int rows) {
    __local int t[16];
    int lid = get_local_id(1) * 4 + get_local_id(0);
    if (get_global_id(1) < rows) {
        t[lid] = lid;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(1) * 8 + get_global_id(0)] = t[15 - lid];
    }
}
__kernel void uniform_branches(__global int* out, int flag) {
    __local int t[64];
    int gid = get_global_id(0), lid = get_local_id(0);
    int v = gid;
    if (flag) {
        t[lid] = gid;
        barrier(CLK_LOCAL_MEM_FENCE);
        v = t[lid ^ 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (get_group_id(0) == 1) {
        t[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        v = t[63 - lid] + 1000;
    }
    out[gid] = v;
}
)CL";

} // namespace

TEST_CASE("checked kernels report barrier divergence", "[cpu][checks][barrier]") {
    Guarded g;
    cl_program p = g.build(kBarrierKernels);
    SECTION("a loop around a barrier whose trip count differs between work-items") {
        cl_kernel k = g.kernel(p, "item_trips");
        cl_mem out = g.buffer(64 * sizeof(int));
        setArg(k, 0, out);
        g.runStopped(k, 64, 64,
                     "kernel 'item_trips': barrier divergence in work-group (0, 0, 0): "
                     "work-item 1 waits at a work-group barrier while work-item 0 reaches the "
                     "end of the kernel (local ids");
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    SECTION("a return before a barrier") {
        cl_kernel k = g.kernel(p, "early_return");
        cl_mem out = g.buffer(64 * sizeof(int));
        setArg(k, 0, out);
        g.runStopped(k, 64, 64,
                     "kernel 'early_return': barrier divergence in work-group (0, 0, 0): "
                     "work-item 5 reaches the end of the kernel while work-item 0 waits at a "
                     "work-group barrier");
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    SECTION("a 2D range: the group and the work-items by their local ids") {
        cl_kernel k = g.kernel(p, "rows_in_range");
        cl_mem out = g.buffer(64 * sizeof(int));
        setArg(k, 0, out);
        setArg(k, 1, 6); // group (0, 1): local rows 0-1 in range, 2-3 not
        const size_t global[2] = {8, 8}, local[2] = {4, 4};
        cl_event ev = nullptr;
        REQUIRE(clEnqueueNDRangeKernel(g.queue, k, 2, nullptr, global, local, 0, nullptr, &ev) ==
                CL_SUCCESS);
        clWaitForEvents(1, &ev);
        cl_int status = CL_COMPLETE;
        REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                               nullptr) == CL_SUCCESS);
        clReleaseEvent(ev);
        CHECK(status == CL_OUT_OF_RESOURCES);
        CHECK_THAT(g.allMessages(),
                   Catch::Contains("kernel 'rows_in_range': barrier divergence in work-group "
                                   "(0, 1, 0): work-item (0, 2) reaches the end of the kernel "
                                   "while work-item (0, 0) waits at a work-group barrier"));
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    SECTION("two branches, each to a barrier of its own") {
        cl_kernel k = g.kernel(p, "two_barriers");
        cl_mem out = g.buffer(64 * sizeof(int));
        setArg(k, 0, out);
        g.runStopped(k, 64, 64,
                     "kernel 'two_barriers': barrier divergence in work-group (0, 0, 0): "
                     "work-item 3 waits at a different work-group barrier than work-item 0");
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    clReleaseProgram(p);
}

TEST_CASE("checked kernels with uniform branches around barriers run clean",
          "[cpu][checks][barrier]") {
    Guarded g;
    cl_program p = g.build(kBarrierKernels);
    cl_kernel k = g.kernel(p, "uniform_branches");
    cl_mem out = g.buffer(128 * sizeof(int));
    setArg(k, 0, out);
    for (int flag : {0, 1}) {
        INFO("flag " << flag);
        setArg(k, 1, flag);
        REQUIRE(g.run(k, 128, 64) == CL_COMPLETE);
        const std::vector<int> got = g.read<int>(out, 128);
        for (int gid = 0; gid < 128; ++gid) {
            auto v = [&](int i) { return flag ? i ^ 1 : i; };
            const int want = gid < 64 ? v(gid) : v(64 + (63 - (gid - 64))) + 1000;
            REQUIRE(got[size_t(gid)] == want);
        }
    }
    // A divergent branch with whole groups in range: every work-item of a group agrees.
    cl_kernel swap = g.kernel(p, "guarded_swap");
    const std::vector<int> init(192, -7);
    cl_mem out2 = g.buffer(init.size() * sizeof(int), init.data());
    setArg(swap, 0, out2);
    setArg(swap, 1, 128);
    REQUIRE(g.run(swap, 192, 64) == CL_COMPLETE);
    CHECK(g.read<int>(out2, 192) == guardedSwapWanted(128, 192));
    INFO(g.allMessages());
    CHECK(g.messagesWith("barrier divergence") == 0);
    clReleaseMemObject(out2);
    clReleaseMemObject(out);
    clReleaseKernel(swap);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("unchecked builds do not look for barrier divergence", "[cpu][checks][barrier]") {
    ScopedEnv off(kGuardDevice.checksVariable, "0");
    Guarded g;
    cl_program p = g.build(kBarrierKernels);
    cl_kernel k = g.kernel(p, "guarded_swap");
    const std::vector<int> init(128, -7);
    cl_mem out = g.buffer(init.size() * sizeof(int), init.data());
    setArg(k, 0, out);
    setArg(k, 1, 100);
    // Nothing stops the launch; the work-group pass's rule for barrier branches decides what it
    // computes (documented: runtime/devices/cpu/README.md).
    REQUIRE(g.run(k, 128, 64) == CL_COMPLETE);
    CHECK(g.messagesWith("barrier divergence") == 0);
    const std::vector<int> got = g.read<int>(out, 128);
    const std::vector<int> want = guardedSwapWanted(100, 128);
    CHECK(std::equal(got.begin(), got.begin() + 64, want.begin())); // group 0: all in range
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
}
