// How an NDRange becomes CUDA grids under Duet's NVIDIA kernel ABI (codegen/ptx_module.hpp):
// the grids, each one's launch block, the __local argument offsets and the dynamic shared memory.
// Pure arithmetic: no driver, no LLVM. The launcher (runNDRange) and the GPU checks use it.
#pragma once

#include "devices/nvidia/codegen/ptx_module.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace duet::nvidia {

/// One cuLaunchKernel.
struct Grid {
    std::array<uint32_t, 3> blocks{1, 1, 1};  ///< gridDim
    std::array<uint32_t, 3> threads{1, 1, 1}; ///< blockDim: the real work-group size
    LaunchBlock launch{};                     ///< the hidden last kernel parameter
};

struct LaunchPlan {
    std::vector<Grid> grids; ///< 1 for a uniform NDRange, up to 8 with partial work-groups
    /// The u64 value of each __local argument (byte offset into dynamic shared memory, after
    /// the kernel's __local variables), in KernelEntry::localArgs order.
    std::vector<uint64_t> localOffsets;
    uint32_t dynamicSharedBytes = 0; ///< cuLaunchKernel's sharedMemBytes: variables + arguments
    std::string error;               ///< why the NDRange cannot run this way (empty: fine)
};

/// What a launch puts in its dynamic shared memory (ptx_module.hpp, kLocalArgAlign): the
/// kernel's __local variables from offset 0, then its __local arguments.
struct SharedMemory {
    uint64_t variables = 0; ///< KernelEntry::localVariableBytes
    /// The sizes clSetKernelArg gave the __local arguments, in KernelEntry::localArgs order.
    std::span<const size_t> arguments;
};

/// The __local arguments' offsets (appended to `offsets` when given) and the total bytes of
/// dynamic shared memory for `shared`.
uint64_t layOutSharedMemory(const SharedMemory& shared, std::vector<uint64_t>* offsets = nullptr);

/// Limits of the GPU that shape a plan (cuDeviceGetAttribute values).
struct GridLimits {
    std::array<uint64_t, 3> maxBlocks{2147483647u, 65535u, 65535u}; ///< MAX_GRID_DIM_X/Y/Z
};

/// The grids for an NDRange of `workDim` dimensions (global sizes, offsets, local sizes as
/// clEnqueueNDRangeKernel validated them: local divides nothing in particular, partial last
/// work-groups allowed). `shared`: the kernel's __local variables and arguments;
/// `printfBuffer` the device address of the printf buffer (0: none).
LaunchPlan planLaunch(unsigned workDim, std::span<const size_t> offset,
                      std::span<const size_t> global, std::span<const size_t> local,
                      const SharedMemory& shared, uint64_t printfBuffer = 0,
                      const GridLimits& limits = {});

} // namespace duet::nvidia
