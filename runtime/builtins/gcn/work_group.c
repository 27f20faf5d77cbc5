// Work-group collective functions for the GCN device (the body: gpu/work_group.h): wave-level
// steps with cross-lane permutes (ds_bpermute_b32), then one LDS slot per wave to combine the
// waves of a group. A work-group of at most 256 work-items (CL_DEVICE_MAX_WORK_GROUP_SIZE) is at
// most four wave64s.
typedef unsigned int uint;
typedef unsigned long ulong;

// Inlined into the kernel: no call, and the permutes see the kernel's own registers.
#define CONVERGENT __attribute__((convergent, always_inline))
#define INLINE static inline __attribute__((always_inline))

#define LANES 64
static __attribute__((address_space(3), loader_uninitialized)) volatile ulong g_slots[256 / LANES];

/// The value `v` of lane `src` of this wave (any lane number: only its low 6 bits count); every
/// active lane takes part, so the member mask is not needed.
INLINE uint shuffle32(uint mask, uint v, uint src) {
    (void)mask;
    return (uint)__builtin_amdgcn_ds_bpermute((int)(src << 2), (int)v);
}

#include "../gpu/work_group.h"

// ---- work_group_barrier (OpenCL C 2.0 and 3.0) ----------------------------------------------
// libclc has only the 1.x barrier. With a scope wider than the work-group, global writes before
// the barrier are made visible at agent (device) scope first; memory_scope is an enum (an int):
// work_item 0, work_group 1, device 2, all_svm_devices 3, sub_group 4.

CONVERGENT void _Z18work_group_barrierj(uint flags) {
    _Z7barrierj(flags);
}
CONVERGENT void _Z18work_group_barrierj12memory_scope(uint flags, int scope) {
    if ((flags & 2u) && (scope == 2 || scope == 3)) // CLK_GLOBAL_MEM_FENCE at device scope
        __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent");
    _Z7barrierj(flags);
}
