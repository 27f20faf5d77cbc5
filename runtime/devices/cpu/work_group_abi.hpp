// The CPU device's kernel ABI: the work-group function generated code exports and the launch
// context it reads. Shared by the code generator (jit/) and the executor (cpu_device.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace duet::rt {

/// The CPU device's largest work-group (CL_DEVICE_MAX_WORK_GROUP_SIZE and every
/// CL_DEVICE_MAX_WORK_ITEM_SIZES entry). Generated code relies on it: local sizes and ids
/// are known to fit, so index arithmetic in int stays affine for the vectoriser.
inline constexpr size_t kCpuMaxWorkGroupSize = 4096;

/// Per-work-group launch context, read by generated code at fixed offsets. POD, keep in sync
/// with the work-group pass (runtime/devices/cpu).
struct WorkGroupContext {
    uint32_t workDim;
    /// Work-items per sub-group (DeviceInfo::subGroupSize): sub-groups are runs of this many
    /// consecutive local linear ids (builtins/cpu/sub_group.cl). 1..64.
    uint32_t subGroupSize;
    uint64_t globalOffset[3];
    uint64_t globalSize[3];
    uint64_t enqueuedLocalSize[3]; ///< the local size of the NDRange
    uint64_t localSize[3];         ///< this group's size (smaller for a trailing partial group)
    uint64_t numGroups[3];
    uint64_t groupId[3];
    char* localMem;  ///< this thread's block for kernel-scope __local variables
    void* printfCtx; ///< opaque, handed to the host printf hook
    /// End of this group's __local blocks (kernel-scope variables and __local arguments):
    /// to_local() and get_fence() answer from [localMem, localMemEnd).
    char* localMemEnd;
    /// The stack span that holds every work-item's private memory: from the running thread's
    /// lowest stack address up to the frame that calls the WorkGroupFn (stacks grow down).
    /// to_private() answers from [stackLow, stackHigh).
    char* stackLow;
    char* stackHigh;
    /// This thread's scratch for the work-group collective functions (builtins/cpu/
    /// work_group.cl): kCollectiveScratchPerItem bytes per work-item of the largest group.
    char* collectiveScratch;
    /// Kernels built with DUET_CPU_CHECKS: [low, high) of each argument, two per argument
    /// (buffers, sub-buffers, SVM allocations, this group's __local blocks; 0 and ~0 where the
    /// extent is unknown). Null otherwise.
    const uint64_t* argBounds;
    /// Kernels built with checks or DUET_KERNEL_TIMEOUT: non-zero asks the work-items to stop
    /// (polled at loop back-edges); points at jit/guards.hpp's LaunchGuard::cancel. Null
    /// otherwise.
    const uint8_t* cancel;
    /// Memory no other agent reaches while this launch runs (jit/local_atomics.hpp,
    /// plainUnsharedAtomics): bit i (i < 63) for argument i's buffer, bit
    /// kUnsharedProgramScopeBit for the program's __global variables. Set only when one thread
    /// runs the whole launch; an atomic of the system's scope whose memory is all in set bits
    /// runs as plain loads and stores, the others keep the host's locked instructions.
    uint64_t unsharedMemory;
    /// The same for atomics of device scope or narrower, which need be atomic only with respect
    /// to this device's work-items: bit i for every buffer or SVM argument (a superset of
    /// unsharedMemory's bits). Set only when one thread runs the whole launch.
    uint64_t deviceOnlyMemory;
};

/// WorkGroupContext::unsharedMemory's bit for program-scope __global variables; arguments from
/// 63 on have no bit (their atomics stay locked).
inline constexpr unsigned kUnsharedProgramScopeBit = 63;

/// Bytes of WorkGroupContext::collectiveScratch per work-item: two values of the widest type
/// the collective functions take (a scan's two halves of 8-byte values).
inline constexpr size_t kCollectiveScratchPerItem = 16;

/// Entry of one kernel compiled for the CPU: runs every work-item of one work-group.
/// `args[i]` points at the storage of argument i: the value bytes for Value; a `void*` holding
/// the address for buffers, __local blocks, images; a `uint32_t` sampler value for Sampler.
using WorkGroupFn = void (*)(void* const* args, const WorkGroupContext* ctx);

} // namespace duet::rt
