// Sub-group functions (OpenCL C 3.0 __opencl_c_subgroups) for the GCN device (the body:
// gpu/sub_group.h, shared with NVIDIA): a sub-group is the wave64, so everything is cross-lane
// permutes (ds_bpermute_b32) within the wave, with no LDS and no s_barrier; sub_group_barrier is
// a fence and a wave barrier, right in code that only some waves of the group reach.
typedef unsigned int uint;
typedef unsigned long ulong;

#define CONVERGENT __attribute__((convergent, always_inline))
#define INLINE static inline __attribute__((always_inline))
#define WORK_ITEM
#define LANES 64u
// ds_bpermute involves every active lane: no member mask.
#define WAVE_MASK() 0u

/// The value `v` of lane `src` of this wave (any lane number: only its low 6 bits count).
INLINE uint shuffle32(uint mask, uint v, uint src) {
    (void)mask;
    return (uint)__builtin_amdgcn_ds_bpermute((int)(src << 2), (int)v);
}

#include "../gpu/sub_group.h"

// ---- barrier --------------------------------------------------------------------------------
// A wave runs in lockstep: the barrier is ordering only. A work-group-scope fence makes the
// wave's LDS and global accesses before it complete (s_waitcnt) before those after it.

CONVERGENT void _Z17sub_group_barrierj(uint flags) {
    (void)flags;
    __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
    __builtin_amdgcn_wave_barrier();
}
// memory_scope is an enum (an int) in OpenCL C.
CONVERGENT void _Z17sub_group_barrierj12memory_scope(uint flags, int scope) {
    (void)scope;
    _Z17sub_group_barrierj(flags);
}
