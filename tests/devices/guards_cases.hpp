// The run-time guard tests every device shares (guards_cases.cpp): what a device's guard test
// says about its device, and the program the shared and the device-only cases build.
#pragma once

#include "support/checked_kernels.hpp"
#include "support/guarded_context.hpp"

#include <string>

namespace duet::test {

/// What the shared guard cases need to know of the device they run on. Each device's guard test
/// (devices/cpu/cpu_guards_test.cpp, devices/gcn/gcn_guards_test.cpp) defines kGuardDevice and
/// compiles guards_cases.cpp with DUET_GUARDS_TAG, the device's test tag ("[cpu]", "[gcn]").
struct GuardDevice {
    cl_device_type type;        ///< which device of the platform under test
    const char* checksVariable; ///< what the ctest entry sets to 1; set to 0 for a reference build
    size_t group;               ///< the work-group size of launches that do not need a given one
    size_t timeoutGroup;        ///< the work-group size of the endless kernels
    double timeoutLimit;        ///< seconds a launch stopped after DUET_KERNEL_TIMEOUT=1 may take
    /// How the device words guarded_swap's divergence in group 1 when n = 100 (local ids 36-63
    /// skip the barrier): where the CPU device sees work-item 36 end, GCN sees its lane off.
    const char* guardedSwapDivergence;
};

extern const GuardDevice kGuardDevice;

/// A context on kGuardDevice's device.
struct Guarded : GuardedContext {
    Guarded() : GuardedContext(kGuardDevice.type) {}
};

/// The kernels of the guard tests: the overruns of support/checked_kernels.hpp, `add`, and
/// `shifted_copy`, which reads in[gid - 1] (before the start, work-item 0).
inline std::string guardKernels() {
    return std::string(kOverrunKernels) + kAddKernel + R"CL(
__kernel void shifted_copy(__global int* out, __global const int* in) {
    size_t i = get_global_id(0);
    out[i] = in[(int)i - 1];
}
)CL";
}

} // namespace duet::test
