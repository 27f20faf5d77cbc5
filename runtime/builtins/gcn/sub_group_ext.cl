// The cl_khr_subgroup_* extensions on the GCN device (the body: gpu/sub_group_ext.h, shared with
// NVIDIA), a sub-group being the wave64 (sub_group.c holds the core functions).
//
// Non-uniform functions act on the wave's active lanes: the EXEC mask where they are called
// (__builtin_amdgcn_read_exec); in code every lane of a sub-group reaches, EXEC is its existing
// lanes, so the uniform functions read it too. Reductions and scans walk the lanes with
// v_readlane (a scalar loop); shuffles are one ds_bpermute per 32 bits.

#define LANES 64u
#define OVL __attribute__((overloadable))

static inline ulong activeLanes(void) {
    return __builtin_amdgcn_read_exec();
}
static inline ulong groupLanes(void) {
    return __builtin_amdgcn_read_exec();
}

/// Lane j's v (j the same on every lane: v_readlane).
static inline uint readLane32(ulong mask, uint v, uint j) {
    (void)mask;
    return (uint)__builtin_amdgcn_readlane((int)v, (int)j);
}
/// Lane src's v, src per lane (ds_bpermute; src must be an active lane).
static inline uint shuffle32(ulong mask, uint v, uint src) {
    (void)mask;
    return (uint)__builtin_amdgcn_ds_bpermute((int)(src << 2), (int)v);
}
/// The active lanes whose predicate is true (EXEC is the mask).
static inline ulong ballot(ulong mask, int predicate) {
    (void)mask;
    return __builtin_amdgcn_ballot_w64(predicate != 0);
}
/// A scalar register's copy of the index (the first active lane's).
static inline uint uniformIndex(ulong mask, uint index) {
    (void)mask;
    return (uint)__builtin_amdgcn_readfirstlane((int)index);
}

#include "../gpu/sub_group_ext.h"
