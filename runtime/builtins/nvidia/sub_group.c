// Sub-group functions (OpenCL C 3.0 __opencl_c_subgroups, cl_khr_subgroups) for the NVIDIA device
// (the body: gpu/sub_group.h, shared with GCN): a sub-group is the warp of 32, so everything is
// shfl.sync within it over the member mask of the warp's existing threads (a partial last warp
// has fewer), with no shared memory; sub_group_barrier is bar.warp.sync over the same mask, after
// a fence where the scope is wider than the sub-group.
typedef unsigned int uint;
typedef unsigned long ulong;

// Inlined into the kernel: no call left for ptxas, and the shuffles see the kernel's registers.
#define CONVERGENT __attribute__((convergent, always_inline))
#define INLINE static inline __attribute__((always_inline))
#define WORK_ITEM __attribute__((always_inline))
#define LANES 32u

/// The warp's existing threads: all 32, or the prefix of a partial last warp of `items`.
INLINE uint memberMask(uint items) {
    return items >= 32 ? 0xffffffffu : (1u << items) - 1u;
}
#define WAVE_MASK() memberMask(waveItems())

/// Lane (src mod 32)'s v; every thread of `mask` calls it together (shfl.sync.idx).
INLINE uint shuffle32(uint mask, uint v, uint src) {
    return (uint)__nvvm_shfl_sync_idx_i32(mask, (int)v, (int)(src & 31), 0x1f);
}

#include "../gpu/sub_group.h"

// ---- barrier --------------------------------------------------------------------------------
// bar.warp.sync waits for the warp's existing threads (under Volta's independent thread
// scheduling they need not be converged before it) and orders memory among them: that is the
// sub-group scope. A wider scope first makes the thread's accesses visible at that scope
// (membar.cta: work-group; membar.gl: device, the widest the device reports). memory_scope is an
// enum (an int): work_item 0, work_group 1, device 2, all_svm_devices 3, sub_group 4.

CONVERGENT void _Z17sub_group_barrierj12memory_scope(uint flags, int scope) {
    const int wider = scope == 1 || scope == 2 || scope == 3; // than the sub-group
    if ((flags & 2u) && (scope == 2 || scope == 3)) // CLK_GLOBAL_MEM_FENCE at device scope
        __nvvm_membar_gl();
    else if ((flags & 3u) && wider) // local memory is the block's: work-group scope at most
        __nvvm_membar_cta();
    __nvvm_bar_warp_sync(WAVE_MASK());
}
CONVERGENT void _Z17sub_group_barrierj(uint flags) {
    _Z17sub_group_barrierj12memory_scope(flags, 4); // memory_scope_sub_group
}
