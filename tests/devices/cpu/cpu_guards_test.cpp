// The CPU device's run-time guards through the API: the cases every device shares
// (devices/guards_cases.cpp, compiled in with this file's kGuardDevice) and the CPU's own:
// __local overruns and the build log's note on accesses a checked build cannot check.
#include "devices/guards_cases.hpp"

#include <string>

using namespace duet::test;

/// DUET_CPU_CHECKS (the CPU device's first name for DUET_KERNEL_CHECKS) is set by the ctest
/// entry; launches that need no particular work-group size run in groups of 32, the endless
/// kernels in groups of 16.
const GuardDevice duet::test::kGuardDevice{CL_DEVICE_TYPE_CPU, "DUET_CPU_CHECKS", 32, 16, 5.0};

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
