// Work-group collective functions for the NVIDIA device (the body: gpu/work_group.h): warp-level
// steps with shfl.sync, then one shared-memory slot per warp to combine the warps of a block (a
// work-group is a CUDA block of at most 1024 threads, CL_DEVICE_MAX_WORK_GROUP_SIZE: 32 warps).
// Only a warp's existing threads take part in its shuffles (the member mask of a partial warp).
typedef unsigned int uint;
typedef unsigned long ulong;

// Inlined into the kernel: no call left for ptxas, and the shuffles see the kernel's registers.
#define CONVERGENT __attribute__((convergent, always_inline))
#define INLINE static inline __attribute__((always_inline))

#define LANES 32
static __attribute__((address_space(3), loader_uninitialized)) volatile ulong g_slots[1024 / LANES];

/// Lane (src mod 32)'s v; every thread of `mask` calls it together (shfl.sync.idx).
INLINE uint shuffle32(uint mask, uint v, uint src) {
    return (uint)__nvvm_shfl_sync_idx_i32(mask, (int)v, (int)(src & 31), 0x1f);
}

#include "../gpu/work_group.h"
