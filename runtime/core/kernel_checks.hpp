// What a failed bounds check of a checked kernel (DUET_KERNEL_CHECKS) reports, and its message:
// one record and one wording for every device that compiles the checks into its code.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <string>

namespace duet::rt {

struct KernelLaunch;

/// What an access that failed its bounds check was.
enum class AccessKind : uint32_t { Load = 0, Store = 1, Atomic = 2 };

/// The id of an access through a NULL pointer (no argument or variable).
inline constexpr uint32_t kCheckNullId = 0xffffffffu;

/// What stopped a checked launch.
enum class FaultKind : uint32_t {
    Bounds = 0,           ///< an access out of its bounds (the fields below up to globalId)
    BarrierDivergence = 1 ///< work-items of one group reached different barriers (the rest)
};

/// Where a work-item of a group stood when its region ended (BarrierDivergence). `Skipped`
/// (GCN): the work-item's lane was off when the rest of its wave executed the barrier.
enum class BarrierStop : uint32_t { Barrier = 0, End = 1, Skipped = 2 };

/// The first fault of a launch, as the check saw it: an out-of-bounds access, or a work-group
/// whose work-items left a barrier-free region for different barriers (CPU), or did not all
/// execute the same barrier (GCN).
struct CheckFault {
    FaultKind what = FaultKind::Bounds;
    uint32_t id = 0; ///< argument index, or (argument count + n) for the kernel's n-th variable
    AccessKind kind = AccessKind::Load;
    uint64_t address = 0;        ///< first byte accessed
    uint64_t low = 0, high = 0;  ///< the bounds it was checked against, [low, high)
    uint64_t bytes = 0;          ///< bytes accessed
    const char* names = nullptr; ///< argument names, then variable names, each ending in NUL
    uint64_t globalId[3] = {0, 0, 0};
    uint64_t groupId[3] = {0, 0, 0}; ///< BarrierDivergence: the group
    /// BarrierDivergence: local ids of the group's first work-item and of the first that went
    /// elsewhere, and where each stopped.
    uint64_t localId[2][3] = {};
    BarrierStop stop[2] = {BarrierStop::Barrier, BarrierStop::Barrier};
};

/// "__global ", "__constant ", "__local " or "": an argument's address space as a type names it.
const char* qualifierName(cl_kernel_arg_address_qualifier q);

/// The message of a launch stopped by a failed bounds check: kernel, argument (by index, name,
/// type and buffer) or variable, access, byte offset (from the pointer the kernel was given) and
/// work-item's global id. The same text on every device. A barrier divergence names the
/// work-group and the two work-items (local ids) and where each went.
std::string describeFault(const KernelLaunch& launch, const CheckFault& fault);

} // namespace duet::rt
