// The cl_khr_subgroup_* extensions of both GPU devices (ballot, non_uniform_vote,
// non_uniform_arithmetic, shuffle, shuffle_relative, rotate, clustered_reduce, extended_types), written
// once; a sub-group is the wave (gpu/sub_group.h has the core functions). OpenCL C, so that
// overloading mangles the vector types. The including file (gcn/sub_group_ext.cl,
// nvidia/sub_group_ext.cl) defines before including this:
//   LANES                        the wave's width (64u, 32u)
//   ulong activeLanes(void)      the lanes active where it is called (non-uniform functions act
//                                on those): GCN's EXEC, NVIDIA's activemask
//   ulong groupLanes(void)       the lanes of this work-item's sub-group, for the functions every
//                                work-item of it must reach (GCN: EXEC again; NVIDIA: the
//                                existing threads of the warp, which shfl.sync then waits for)
//   uint readLane32(ulong mask, uint v, uint j)
//                                lane j's v, j the same on every lane of `mask`
//   uint shuffle32(ulong mask, uint v, uint src)
//                                lane src's v, src per lane (a lane of `mask`)
//   ulong ballot(ulong mask, int predicate)
//                                the lanes of `mask` whose predicate is true
//   OVL                          the attributes of the functions (overloadable, and on NVIDIA
//                                always_inline: no call left for ptxas)
//   LANE_TREES                   (optional) defined: shuffle trees where every existing lane
//                                takes part (NVIDIA: a walk costs a shuffle per lane, a tree
//                                log2(LANES)); GCN's walk is v_readlane on scalar registers
//   uint uniformIndex(ulong mask, uint index)
//                                `index` as one value for the lanes of `mask` (GCN:
//                                readfirstlane, so readLane32 gets a scalar)
// Lane masks are 64-bit on both (NVIDIA's upper half is 0). Reductions and scans walk the mask's
// lanes in order (a loop the same on every lane, so it is right in any branch); lanes are local
// linear ids modulo LANES (work-items fill the waves in that order), the last wave of a group
// may be partial.

uint OVL get_sub_group_local_id(void);
uint OVL get_max_sub_group_size(void);

static inline ulong readLane64(ulong mask, ulong v, uint j) {
    return (ulong)readLane32(mask, (uint)v, j) | (ulong)readLane32(mask, (uint)(v >> 32), j) << 32;
}
static inline ulong shuffle64(ulong mask, ulong v, uint src) {
    return (ulong)shuffle32(mask, (uint)v, src) | (ulong)shuffle32(mask, (uint)(v >> 32), src)
                                                       << 32;
}

// Per scalar type: readLane_T (uniform lane), shuffle_T (per-lane lane).
#define MOVE(T, BITS, U, AS)                                                                   \
    static inline T readLane_##T(ulong mask, T v, uint j) {                                    \
        return AS(readLane##BITS(mask, (U)v, j));                                              \
    }                                                                                          \
    static inline T shuffle_##T(ulong mask, T v, uint src) {                                   \
        return AS(shuffle##BITS(mask, (U)v, src));                                             \
    }
#define CAST_char(x) ((char)(x))
#define CAST_uchar(x) ((uchar)(x))
#define CAST_short(x) ((short)(x))
#define CAST_ushort(x) ((ushort)(x))
#define CAST_int(x) ((int)(x))
#define CAST_uint(x) ((uint)(x))
#define CAST_long(x) ((long)(x))
#define CAST_ulong(x) ((ulong)(x))
MOVE(char, 32, uint, CAST_char)
MOVE(uchar, 32, uint, CAST_uchar)
MOVE(short, 32, uint, CAST_short)
MOVE(ushort, 32, uint, CAST_ushort)
MOVE(int, 32, uint, CAST_int)
MOVE(uint, 32, uint, CAST_uint)
MOVE(long, 64, ulong, CAST_long)
MOVE(ulong, 64, ulong, CAST_ulong)
static inline float readLane_float(ulong mask, float v, uint j) {
    return as_float(readLane32(mask, as_uint(v), j));
}
static inline float shuffle_float(ulong mask, float v, uint src) {
    return as_float(shuffle32(mask, as_uint(v), src));
}
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
static inline double readLane_double(ulong mask, double v, uint j) {
    return as_double(readLane64(mask, as_ulong(v), j));
}
static inline double shuffle_double(ulong mask, double v, uint src) {
    return as_double(shuffle64(mask, as_ulong(v), src));
}
#endif

// ---- operations and identities ----------------------------------------------------------------

#define OP_add(a, b) ((a) + (b))
#define OP_mul(a, b) ((a) * (b))
#define OP_min(a, b) ((b) < (a) ? (b) : (a))
#define OP_max(a, b) ((b) > (a) ? (b) : (a))
#define OP_and(a, b) ((a) & (b))
#define OP_or(a, b) ((a) | (b))
#define OP_xor(a, b) ((a) ^ (b))
#define OP_logical_and(a, b) ((a) && (b))
#define OP_logical_or(a, b) ((a) || (b))
#define OP_logical_xor(a, b) ((!(a)) != (!(b)))

#define ID_add(T, MIN, MAX) ((T)0)
#define ID_mul(T, MIN, MAX) ((T)1)
#define ID_min(T, MIN, MAX) (MAX)
#define ID_max(T, MIN, MAX) (MIN)
#define ID_and(T, MIN, MAX) ((T)~(T)0)
#define ID_or(T, MIN, MAX) ((T)0)
#define ID_xor(T, MIN, MAX) ((T)0)
#define ID_logical_and(T, MIN, MAX) (1)
#define ID_logical_or(T, MIN, MAX) (0)
#define ID_logical_xor(T, MIN, MAX) (0)

// Reduce, inclusive and exclusive scan over the lanes of `mask` (a uniform value), in lane
// order. The logical operations give 0 or 1.
#define WALK(T, OP, MIN, MAX)                                                                  \
    static inline T reduceLanes_##OP##_##T(T x, ulong mask) {                                  \
        T r = ID_##OP(T, MIN, MAX);                                                            \
        for (ulong m = mask; m; m &= m - 1)                                                    \
            r = (T)OP_##OP(r, readLane_##T(mask, x, (uint)__builtin_ctzl(m)));                       \
        return r;                                                                              \
    }                                                                                          \
    static inline T scanLanes_##OP##_##T(T x, ulong mask, bool inclusive) {                    \
        const uint lane = get_sub_group_local_id();                                            \
        T r = ID_##OP(T, MIN, MAX), mine = r;                                                  \
        for (ulong m = mask; m; m &= m - 1) {                                                  \
            const uint j = (uint)__builtin_ctzl(m);                                            \
            if (j == lane && !inclusive)                                                       \
                mine = r;                                                                      \
            r = (T)OP_##OP(r, readLane_##T(mask, x, j));                                             \
            if (j == lane && inclusive)                                                        \
                mine = r;                                                                      \
        }                                                                                      \
        return mine;                                                                           \
    }

#ifdef LANE_TREES
// Trees over a wave whose lanes [0, n) all take part (`mask`, that prefix): log2(LANES) shuffle
// steps instead of one per lane. Reduce within clusters of `size` lanes (a power of two): lane i
// folds in lane i + off (lanes past n count as the identity), then every lane reads its
// cluster's first lane. Scan: Hillis-Steele. The logical operations start from 0 or 1.
#define PREP_logical_and(x) ((x) != 0)
#define PREP_logical_or(x) ((x) != 0)
#define PREP_logical_xor(x) ((x) != 0)
#define PREP_add(x) (x)
#define PREP_mul(x) (x)
#define PREP_min(x) (x)
#define PREP_max(x) (x)
#define PREP_and(x) (x)
#define PREP_or(x) (x)
#define PREP_xor(x) (x)
#define TREE(T, OP, MIN, MAX)                                                                  \
    static inline T treeReduce_##OP##_##T(T x, ulong mask, uint size) {                        \
        const uint lane = get_sub_group_local_id(), n = (uint)__builtin_popcountl(mask);       \
        T v = (T)PREP_##OP(x);                                                                 \
        for (uint off = size / 2; off; off >>= 1) {                                            \
            const T other = shuffle_##T(mask, v, lane + off);                                  \
            v = (T)OP_##OP(v, lane + off < n ? other : (T)ID_##OP(T, MIN, MAX));               \
        }                                                                                      \
        return shuffle_##T(mask, v, lane & ~(size - 1));                                       \
    }                                                                                          \
    static inline T treeScan_##OP##_##T(T x, ulong mask, bool inclusive) {                     \
        const uint lane = get_sub_group_local_id();                                            \
        T v = (T)PREP_##OP(x);                                                                 \
        for (uint off = 1; off < LANES; off <<= 1) {                                           \
            const T other = shuffle_##T(mask, v, lane - off);                                  \
            if (lane >= off)                                                                   \
                v = (T)OP_##OP(other, v);                                                      \
        }                                                                                      \
        if (inclusive)                                                                         \
            return v;                                                                          \
        const T left = shuffle_##T(mask, v, lane - 1);                                         \
        return lane ? left : (T)ID_##OP(T, MIN, MAX);                                          \
    }
/// Where every existing lane of the sub-group is active (the usual case), the trees.
#define IF_WHOLE(mask, tree)                                                                   \
    if ((mask) == groupLanes())                                                                \
        return tree;
/// Clustered reductions are uniform: always the tree.
#define CLUSTER_TREE(tree) return tree;
#else
#define TREE(T, OP, MIN, MAX)
#define IF_WHOLE(mask, tree)
#define CLUSTER_TREE(tree)
#endif

/// The lanes of this work-item's cluster of `size` (a power of two) that hold work-items.
static inline ulong clusterLanes(uint size) {
    const uint lane = get_sub_group_local_id();
    const ulong bits = size >= 64 ? ~0ul : ((1ul << size) - 1) << (lane & ~(size - 1));
    return bits & groupLanes();
}

// Non-uniform reduce/scans (active lanes) and clustered reduce, one operation and type.
#define ARITH(T, OP, MIN, MAX)                                                                 \
    WALK(T, OP, MIN, MAX)                                                                      \
    TREE(T, OP, MIN, MAX)                                                                      \
    OVL T sub_group_non_uniform_reduce_##OP(T x) {                                             \
        const ulong mask = activeLanes();                                                      \
        IF_WHOLE(mask, treeReduce_##OP##_##T(x, mask, LANES))                                  \
        return reduceLanes_##OP##_##T(x, mask);                                                \
    }                                                                                          \
    OVL T sub_group_non_uniform_scan_inclusive_##OP(T x) {                                     \
        const ulong mask = activeLanes();                                                      \
        IF_WHOLE(mask, treeScan_##OP##_##T(x, mask, true))                                     \
        return scanLanes_##OP##_##T(x, mask, true);                                            \
    }                                                                                          \
    OVL T sub_group_non_uniform_scan_exclusive_##OP(T x) {                                     \
        const ulong mask = activeLanes();                                                      \
        IF_WHOLE(mask, treeScan_##OP##_##T(x, mask, false))                                    \
        return scanLanes_##OP##_##T(x, mask, false);                                           \
    }                                                                                          \
    OVL T sub_group_clustered_reduce_##OP(T x, uint clustersize) {                             \
        CLUSTER_TREE(treeReduce_##OP##_##T(x, groupLanes(), clustersize))                      \
        /* The walk covers the wave; each lane keeps its own cluster's lanes. */               \
        const ulong mine = clusterLanes(clustersize);                                          \
        T r = ID_##OP(T, MIN, MAX);                                                            \
        const ulong all = groupLanes();                                                        \
        for (ulong m = all; m; m &= m - 1) {                                                   \
            const uint j = (uint)__builtin_ctzl(m);                                            \
            const T v = readLane_##T(all, x, j);                                               \
            if ((mine >> j) & 1)                                                               \
                r = (T)OP_##OP(r, v);                                                          \
        }                                                                                      \
        return r;                                                                              \
    }

#define ARITH_ALL(T, MIN, MAX)                                                                 \
    ARITH(T, add, MIN, MAX)                                                                    \
    ARITH(T, mul, MIN, MAX)                                                                    \
    ARITH(T, min, MIN, MAX)                                                                    \
    ARITH(T, max, MIN, MAX)
#define ARITH_BITS(T, MIN, MAX)                                                                \
    ARITH_ALL(T, MIN, MAX)                                                                     \
    ARITH(T, and, MIN, MAX)                                                                    \
    ARITH(T, or, MIN, MAX)                                                                     \
    ARITH(T, xor, MIN, MAX)

ARITH_BITS(char, CHAR_MIN, CHAR_MAX)
ARITH_BITS(uchar, 0, UCHAR_MAX)
ARITH_BITS(short, SHRT_MIN, SHRT_MAX)
ARITH_BITS(ushort, 0, USHRT_MAX)
ARITH_BITS(int, INT_MIN, INT_MAX)
ARITH_BITS(uint, 0, UINT_MAX)
ARITH_BITS(long, LONG_MIN, LONG_MAX)
ARITH_BITS(ulong, 0, ULONG_MAX)
ARITH_ALL(float, -INFINITY, INFINITY)
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
ARITH_ALL(double, -INFINITY, INFINITY)
#endif
ARITH(int, logical_and, 0, 1)
ARITH(int, logical_or, 0, 1)
ARITH(int, logical_xor, 0, 1)

// ---- cl_khr_subgroup_extended_types: the core collectives for 8- and 16-bit integers ----------
// (whole sub-group, as the core functions: the walk over the active lanes is the sub-group).

#ifdef LANE_TREES
#define NARROW_OP(T, OP)                                                                       \
    OVL T sub_group_reduce_##OP(T x) { return treeReduce_##OP##_##T(x, groupLanes(), LANES); } \
    OVL T sub_group_scan_inclusive_##OP(T x) {                                                 \
        return treeScan_##OP##_##T(x, groupLanes(), true);                                     \
    }                                                                                          \
    OVL T sub_group_scan_exclusive_##OP(T x) {                                                 \
        return treeScan_##OP##_##T(x, groupLanes(), false);                                    \
    }
#else
#define NARROW_OP(T, OP)                                                                       \
    OVL T sub_group_reduce_##OP(T x) { return reduceLanes_##OP##_##T(x, groupLanes()); }       \
    OVL T sub_group_scan_inclusive_##OP(T x) {                                                 \
        return scanLanes_##OP##_##T(x, groupLanes(), true);                                    \
    }                                                                                          \
    OVL T sub_group_scan_exclusive_##OP(T x) {                                                 \
        return scanLanes_##OP##_##T(x, groupLanes(), false);                                   \
    }
#endif
#define NARROW(T)                                                                              \
    NARROW_OP(T, add)                                                                          \
    NARROW_OP(T, min)                                                                          \
    NARROW_OP(T, max)
NARROW(char)
NARROW(uchar)
NARROW(short)
NARROW(ushort)

// ---- broadcasts: scalars and vectors ----------------------------------------------------------
// sub_group_broadcast (extended_types for vectors and narrow scalars) and
// sub_group_non_uniform_broadcast (ballot): the index is uniform, so v_readlane.

#define BCAST_SCALAR(T)                                                                        \
    OVL T sub_group_non_uniform_broadcast(T x, uint index) {                                   \
        const ulong mask = activeLanes();                                                      \
        return readLane_##T(mask, x, uniformIndex(mask, index));                               \
    }                                                                                          \
    OVL T sub_group_broadcast_first(T x) {                                                     \
        const ulong mask = activeLanes();                                                      \
        return readLane_##T(mask, x, (uint)__builtin_ctzl(mask));                              \
    }
#define BCAST_VEC(T, N)                                                                        \
    static inline T##N broadcast_##T##N(ulong mask, T##N x, uint index) {                      \
        T##N r;                                                                                \
        const uint j = uniformIndex(mask, index);                                              \
        for (int c = 0; c < N; ++c)                                                            \
            ((T*)&r)[c] = readLane_##T(mask, ((T*)&x)[c], j);                                  \
        return r;                                                                              \
    }                                                                                          \
    OVL T##N sub_group_non_uniform_broadcast(T##N x, uint index) {                             \
        return broadcast_##T##N(activeLanes(), x, index);                                      \
    }                                                                                          \
    OVL T##N sub_group_broadcast(T##N x, uint index) {                                         \
        return broadcast_##T##N(groupLanes(), x, index);                                       \
    }
#define BCAST(T)                                                                               \
    BCAST_SCALAR(T)                                                                            \
    BCAST_VEC(T, 2)                                                                            \
    BCAST_VEC(T, 3)                                                                            \
    BCAST_VEC(T, 4)                                                                            \
    BCAST_VEC(T, 8)                                                                            \
    BCAST_VEC(T, 16)
BCAST(char)
BCAST(uchar)
BCAST(short)
BCAST(ushort)
BCAST(int)
BCAST(uint)
BCAST(long)
BCAST(ulong)
BCAST(float)
#ifdef cl_khr_fp64
BCAST(double)
#endif
#define BCAST_NARROW(T)                                                                        \
    OVL T sub_group_broadcast(T x, uint index) {                                               \
        const ulong mask = groupLanes();                                                       \
        return readLane_##T(mask, x, uniformIndex(mask, index));                               \
    }
BCAST_NARROW(char)
BCAST_NARROW(uchar)
BCAST_NARROW(short)
BCAST_NARROW(ushort)

// ---- shuffles ---------------------------------------------------------------------------------
// Rotations count modulo the sub-group's size (a partial wave's missing lanes give an undefined
// value) or, clustered, within the power-of-two cluster of consecutive lanes.

#define SHUFFLE(T)                                                                             \
    OVL T sub_group_shuffle(T x, uint index) { return shuffle_##T(groupLanes(), x, index); }   \
    OVL T sub_group_shuffle_xor(T x, uint mask) {                                              \
        return shuffle_##T(groupLanes(), x, get_sub_group_local_id() ^ mask);                  \
    }                                                                                          \
    OVL T sub_group_shuffle_up(T x, uint delta) {                                              \
        return shuffle_##T(groupLanes(), x, get_sub_group_local_id() - delta);                 \
    }                                                                                          \
    OVL T sub_group_shuffle_down(T x, uint delta) {                                            \
        return shuffle_##T(groupLanes(), x, get_sub_group_local_id() + delta);                 \
    }                                                                                          \
    OVL T sub_group_rotate(T x, int delta) {                                                   \
        const uint lane = (get_sub_group_local_id() + (uint)delta) % get_max_sub_group_size(); \
        return shuffle_##T(groupLanes(), x, lane);                                             \
    }                                                                                          \
    OVL T sub_group_clustered_rotate(T x, int delta, uint clustersize) {                       \
        const uint lane = get_sub_group_local_id(), size = clustersize ? clustersize : 1;      \
        return shuffle_##T(groupLanes(), x, (lane & ~(size - 1)) + (lane + (uint)delta) % size); \
    }
SHUFFLE(char)
SHUFFLE(uchar)
SHUFFLE(short)
SHUFFLE(ushort)
SHUFFLE(int)
SHUFFLE(uint)
SHUFFLE(long)
SHUFFLE(ulong)
SHUFFLE(float)
#ifdef cl_khr_fp64
SHUFFLE(double)
#endif

// ---- votes ------------------------------------------------------------------------------------

OVL int sub_group_elect(void) {
    return get_sub_group_local_id() == (uint)__builtin_ctzl(activeLanes());
}

OVL int sub_group_non_uniform_all(int predicate) {
    return ballot(activeLanes(), predicate == 0) == 0;
}

OVL int sub_group_non_uniform_any(int predicate) {
    return ballot(activeLanes(), predicate != 0) != 0;
}

#define ALL_EQUAL(T)                                                                           \
    OVL int sub_group_non_uniform_all_equal(T x) {                                             \
        const ulong mask = activeLanes();                                                      \
        const T first = readLane_##T(mask, x, (uint)__builtin_ctzl(mask));                     \
        return ballot(mask, x != first) == 0;                                                  \
    }
ALL_EQUAL(char)
ALL_EQUAL(uchar)
ALL_EQUAL(short)
ALL_EQUAL(ushort)
ALL_EQUAL(int)
ALL_EQUAL(uint)
ALL_EQUAL(long)
ALL_EQUAL(ulong)
ALL_EQUAL(float)
#ifdef cl_khr_fp64
ALL_EQUAL(double)
#endif

// ---- ballots ----------------------------------------------------------------------------------
// A wave uses the first LANES (64 or 32) bits of a ballot; the arithmetic on them is shared
// with the CPU device (ballot_masks.h).

#define DUET_BALLOT_OVL OVL
#include "ballot_masks.h"

OVL uint4 sub_group_ballot(int predicate) {
    return duet_ballot_of(ballot(activeLanes(), predicate != 0));
}
