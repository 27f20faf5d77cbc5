// The GCN device's guards on the software model through the API: the cases every device shares
// (devices/guards_cases.cpp, compiled in with this file's kGuardDevice) and the model's own:
// uniform (scalar) __constant loads, 2D work-items, DUET_CPU_CHECKS as an alias, barrier
// divergence.
#include "devices/guards_cases.hpp"
#include "support/scoped_env.hpp"

#include <string>
#include <vector>

using namespace duet::test;

/// DUET_KERNEL_CHECKS is set by the ctest entry; launches in any size run one 64-wide wavefront
/// per group, the endless kernels four (so that the barrier waits across wavefronts).
const GuardDevice duet::test::kGuardDevice{
    CL_DEVICE_TYPE_GPU,
    "DUET_KERNEL_CHECKS",
    64,
    256,
    10.0,
    "work-item 36 skips a work-group barrier at which work-item 0 waits"};

namespace {

const char* kModelOverruns = R"CL(
__kernel void uniform_read(__global int* out, __constant int* table, int i) {
    out[get_global_id(0)] = table[i];
}
__kernel void grid(__global int* out, int width) {
    out[get_global_id(1) * width + get_global_id(0)] = 1;
}
)CL";

} // namespace

TEST_CASE("checked GCN dispatches check scalar loads and 2D work-items", "[gcn][checks]") {
    Guarded g;
    cl_program p = g.build(kModelOverruns);
    SECTION("a uniform __constant read past the end") {
        cl_kernel k = g.kernel(p, "uniform_read");
        std::vector<int> table(64, 9);
        cl_mem out = g.buffer(64 * sizeof(int));
        cl_mem t = g.buffer(table.size() * sizeof(int), table.data());
        setArg(k, 0, out);
        setArg(k, 1, t);
        setArg(k, 2, 63);
        CHECK(g.run(k, 64, 64) == CL_COMPLETE);
        CHECK(g.read<int>(out, 64) == std::vector<int>(64, 9));
        setArg(k, 2, 64);
        g.runStopped(k, 64, 64,
                     "kernel 'uniform_read': out-of-bounds read of 4 bytes at byte offset 256 of "
                     "argument 1 'table' (__constant int*, a buffer of 256 bytes) by work-item 0 "
                     "(global id)");
        clReleaseMemObject(out);
        clReleaseMemObject(t);
        clReleaseKernel(k);
    }
    SECTION("a 2D NDRange with an offset names the work-item's global id") {
        cl_kernel k = g.kernel(p, "grid");
        cl_mem out = g.buffer(16 * 16 * sizeof(int));
        setArg(k, 0, out);
        setArg(k, 1, 16);
        // Rows 2..17 with an offset of 2: the last two rows are past the end.
        size_t offset[2] = {0, 2}, global[2] = {16, 16}, local[2] = {16, 4};
        cl_event ev = nullptr;
        REQUIRE(clEnqueueNDRangeKernel(g.queue, k, 2, offset, global, local, 0, nullptr, &ev) ==
                CL_SUCCESS);
        clWaitForEvents(1, &ev);
        cl_int status = CL_COMPLETE;
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
        CHECK(status == CL_OUT_OF_RESOURCES);
        clReleaseEvent(ev);
        const std::string m = g.allMessages();
        INFO(m);
        // Work-groups run on several host threads, so which overrunning item is caught first
        // varies; each lies in rows 16 or 17, each message names one.
        CHECK(m.find("kernel 'grid': out-of-bounds write of 4 bytes at byte offset ") !=
              std::string::npos);
        CHECK((m.find(", 16) (global id)") != std::string::npos ||
               m.find(", 17) (global id)") != std::string::npos));
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    clReleaseProgram(p);
}

TEST_CASE("DUET_CPU_CHECKS is another name for DUET_KERNEL_CHECKS", "[gcn][checks]") {
    Guarded g;
    cl_program p;
    {
        ScopedEnv unset("DUET_KERNEL_CHECKS", nullptr);
        ScopedEnv alias("DUET_CPU_CHECKS", "1");
        p = g.build(guardKernels());
    }
    cl_program off;
    {
        ScopedEnv unset("DUET_KERNEL_CHECKS", "0");
        ScopedEnv alias("DUET_CPU_CHECKS", "1"); // DUET_KERNEL_CHECKS decides when set
        off = g.build(guardKernels());
    }
    cl_kernel fill = g.kernel(p, "fill");
    cl_kernel unchecked = g.kernel(off, "fill");
    // One past the end of a sub-buffer is still inside its parent: only a checked dispatch
    // stops there; the unchecked one writes the parent's next element and completes.
    std::vector<int> init(2048, -1);
    cl_mem parent = g.buffer(init.size() * sizeof(int), init.data());
    cl_buffer_region region{1024, 512 * sizeof(int)};
    cl_int e = CL_SUCCESS;
    cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
    REQUIRE(e == CL_SUCCESS);
    for (cl_kernel k : {fill, unchecked}) {
        setArg(k, 0, sub);
        setArg(k, 1, 1);
    }
    CHECK(g.run(fill, 512, 64) == CL_OUT_OF_RESOURCES);
    CHECK(g.messagesWith("out-of-bounds write") == 1);
    CHECK(g.run(unchecked, 512, 64) == CL_COMPLETE);
    CHECK(g.messagesWith("out-of-bounds write") == 1);
    CHECK(g.read<int>(parent, 2048)[256 + 512] == 7);
    clReleaseMemObject(sub);
    clReleaseMemObject(parent);
    clReleaseKernel(fill);
    clReleaseKernel(unchecked);
    clReleaseProgram(p);
    clReleaseProgram(off);
}

namespace {

// Barrier divergence on the model: a wave that ends while another waits, and a correct kernel
// with barriers in a loop over several waves (a lane off at an s_barrier its wave executes:
// guards_cases.cpp).
const char* kBarrierKernels = R"CL(
__kernel void second_wave_returns(__global int* out) {
    __local int t[128];
    int lid = get_local_id(0);
    if (lid >= 64) // the second wave, whole
        return;
    t[lid] = lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[lid ^ 1];
}
__kernel void tree_sum(__global const int* in, __global int* out) {
    __local int t[256];
    int lid = get_local_id(0);
    t[lid] = in[get_global_id(0)];
    for (int s = get_local_size(0) / 2; s > 0; s /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < s)
            t[lid] += t[lid + s];
    }
    if (lid == 0)
        out[get_group_id(0)] = t[0];
}
)CL";

} // namespace

TEST_CASE("checked GCN dispatches report barrier divergence", "[gcn][checks][barrier]") {
    Guarded g;
    cl_program p = g.build(kBarrierKernels);
    SECTION("a wave that returns while the other waits at a barrier") {
        cl_kernel k = g.kernel(p, "second_wave_returns");
        cl_mem out = g.buffer(128 * sizeof(int));
        setArg(k, 0, out);
        g.runStopped(k, 128, 128,
                     "kernel 'second_wave_returns': barrier divergence in work-group (0, 0, 0): "
                     "work-item 64 reaches the end of the kernel while work-item 0 waits at a "
                     "work-group barrier");
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    SECTION("barriers in a loop over four waves: no divergence, the right sums") {
        cl_kernel k = g.kernel(p, "tree_sum");
        std::vector<int> in(1024);
        for (size_t i = 0; i < in.size(); ++i)
            in[i] = int(i % 97);
        cl_mem src = g.buffer(in.size() * sizeof(int), in.data());
        cl_mem out = g.buffer(4 * sizeof(int));
        setArg(k, 0, src);
        setArg(k, 1, out);
        REQUIRE(g.run(k, 1024, 256) == CL_COMPLETE);
        std::vector<int> want(4, 0);
        for (size_t i = 0; i < in.size(); ++i)
            want[i / 256] += in[i];
        CHECK(g.read<int>(out, 4) == want);
        CHECK(g.messagesWith("barrier divergence") == 0);
        clReleaseMemObject(src);
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    clReleaseProgram(p);
}
