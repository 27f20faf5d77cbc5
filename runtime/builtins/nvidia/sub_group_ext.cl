// The cl_khr_subgroup_* extensions on the NVIDIA device (the body: gpu/sub_group_ext.h, shared
// with GCN), a sub-group being the warp of 32 (sub_group.c holds the core functions).
//
// Non-uniform functions act on the threads converged where they are called: activemask. Under
// Volta's independent thread scheduling that is not always every thread a branch let in (a
// warp may run a branch's threads in more than one pass), and the spec's "active work-items"
// are those that execute the call together. The functions every work-item of a sub-group must
// reach (shuffles, clustered reductions, the 8/16-bit and vector collectives) use the member
// mask of the warp's existing threads instead, which shfl.sync waits for. Lane moves are
// shfl.sync.idx (per 32 bits), ballots vote.sync.ballot.

#define LANES 32u
// Shuffle trees, not lane walks, where every existing thread of the warp takes part.
#define LANE_TREES
// Inlined into the kernel: no call left for ptxas, and the shuffles see the kernel's registers.
#define OVL __attribute__((overloadable, always_inline))

static inline ulong activeLanes(void) {
    return (ulong)__nvvm_activemask();
}
uint __attribute__((overloadable)) get_sub_group_size(void);

/// The warp's existing threads: all 32, or the prefix of a partial last warp.
static inline ulong groupLanes(void) {
    const uint n = get_sub_group_size();
    return n >= 32 ? 0xfffffffful : (1ul << n) - 1;
}

/// Lane j's v; every lane of `mask` calls it together.
static inline uint readLane32(ulong mask, uint v, uint j) {
    return (uint)__nvvm_shfl_sync_idx_i32((uint)mask, (int)v, (int)(j & 31), 0x1f);
}
/// Lane src's v, src per lane (the same instruction: shfl.sync takes any source lane).
static inline uint shuffle32(ulong mask, uint v, uint src) {
    return (uint)__nvvm_shfl_sync_idx_i32((uint)mask, (int)v, (int)(src & 31), 0x1f);
}
static inline ulong ballot(ulong mask, int predicate) {
    return (ulong)__nvvm_vote_ballot_sync((uint)mask, predicate != 0);
}
/// shfl.sync takes a per-lane source: nothing to make uniform.
static inline uint uniformIndex(ulong mask, uint index) {
    (void)mask;
    return index;
}

#include "../gpu/sub_group_ext.h"
