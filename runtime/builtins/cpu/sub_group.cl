// Sub-group functions (OpenCL C 3.0 __opencl_c_subgroups) for the CPU device.
//
// A sub-group is a run of __duet_sub_group_width() consecutive local linear ids (the vector width
// in 32-bit lanes the code is generated for: WorkGroupContext::subGroupSize, which the work-group
// pass loads); the last one of a group may be smaller. The work-group pass runs a group one
// barrier-free region at a time, each a loop over its work-items; __duet_sub_group_barrier is a
// region boundary like barrier(), and the collectives are those of work_group.cl restricted to
// each sub-group's slice of the same scratch, with such barriers between their steps. Where only
// some sub-groups reach them (a branch uniform per sub-group only, as the spec allows), the pass
// makes the regions resumable: each work-item goes on from the barrier it reached, and a
// sub-group's barrier waits for the work-items that reached it (runtime/devices/cpu/README.md).
#include "builtins.h"

__local ulong* __duet_wg_scratch(void);
uint __duet_sub_group_width(void);
void __duet_sub_group_barrier(cl_mem_fence_flags flags);

DUET_INLINE uint duet_sg_lid(void) {
    return (uint)((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) +
                  get_local_id(0));
}

DUET_INLINE uint duet_sg_items(void) {
    return (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
}

DUET_INLINE uint duet_sg_enqueued_items(void) {
    return (uint)(get_enqueued_local_size(0) * get_enqueued_local_size(1) *
                  get_enqueued_local_size(2));
}

// ---- work-item functions --------------------------------------------------------------------

DUET_OVL uint get_max_sub_group_size(void) {
    const uint w = __duet_sub_group_width(), n = duet_sg_enqueued_items();
    return n < w ? n : w;
}

DUET_OVL uint get_num_sub_groups(void) {
    const uint w = __duet_sub_group_width();
    return (duet_sg_items() + w - 1) / w;
}

DUET_OVL uint get_enqueued_num_sub_groups(void) {
    const uint w = __duet_sub_group_width();
    return (duet_sg_enqueued_items() + w - 1) / w;
}

DUET_OVL uint get_sub_group_id(void) {
    return duet_sg_lid() / __duet_sub_group_width();
}

DUET_OVL uint get_sub_group_local_id(void) {
    return duet_sg_lid() % __duet_sub_group_width();
}

DUET_OVL uint get_sub_group_size(void) {
    const uint w = __duet_sub_group_width();
    const uint rest = duet_sg_items() - duet_sg_lid() / w * w;
    return rest < w ? rest : w;
}

// ---- barrier --------------------------------------------------------------------------------

DUET_OVL void sub_group_barrier(cl_mem_fence_flags flags) {
    __duet_sub_group_barrier(flags);
}

DUET_OVL void sub_group_barrier(cl_mem_fence_flags flags, memory_scope scope) {
    (void)scope;
    __duet_sub_group_barrier(flags);
}

// ---- broadcast, reduce, scan ----------------------------------------------------------------
// Each value goes to the scratch at its local linear id; a sub-group's values are then
// s[base .. base + n). Reduce: a pairwise tree over the slice (step k folds lane i + 2^k into lane
// i for i a multiple of 2^(k+1)), log2(width) steps, each one loop over the group's work-items.
// Scan: Hillis-Steele over two halves of the scratch, each step reading lanes of its own slice
// only. The step counts depend on the width alone, so every work-item meets the same barriers.

#define DUET_SG_SYNC() __duet_sub_group_barrier(CLK_LOCAL_MEM_FENCE)

#define DUET_OP_add(a, b) ((a) + (b))
#define DUET_OP_min(a, b) ((b) < (a) ? (b) : (a))
#define DUET_OP_max(a, b) ((b) > (a) ? (b) : (a))

#define DUET_SG_BROADCAST(T)                                                                   \
    DUET_OVL T sub_group_broadcast(T x, uint sub_group_local_id) {                             \
        __local T* s = (__local T*)__duet_wg_scratch();                                        \
        const uint lid = duet_sg_lid(), w = __duet_sub_group_width();                          \
        DUET_SG_SYNC();                                                                        \
        s[lid] = x;                                                                            \
        DUET_SG_SYNC();                                                                        \
        return s[lid / w * w + sub_group_local_id];                                            \
    }

#define DUET_SG_REDUCE_SCAN(T, OP, IDENTITY)                                                   \
    DUET_OVL T sub_group_reduce_##OP(T x) {                                                    \
        __local T* s = (__local T*)__duet_wg_scratch();                                        \
        const uint lid = duet_sg_lid(), w = __duet_sub_group_width();                          \
        const uint base = lid / w * w, lane = lid - base;                                      \
        const uint rest = duet_sg_items() - base, n = rest < w ? rest : w;                     \
        DUET_SG_SYNC();                                                                        \
        s[lid] = x;                                                                            \
        DUET_SG_SYNC();                                                                        \
        for (uint off = 1; off < w; off <<= 1) {                                               \
            if ((lane & (2 * off - 1)) == 0 && lane + off < n)                                 \
                s[lid] = DUET_OP_##OP(s[lid], s[lid + off]);                                   \
            DUET_SG_SYNC();                                                                    \
        }                                                                                      \
        return s[base];                                                                        \
    }                                                                                          \
    DUET_INLINE __local T* duet_sg_scan_##OP##_##T(T x, uint lid, uint lane) {                 \
        const uint w = __duet_sub_group_width();                                               \
        __local T* a = (__local T*)__duet_wg_scratch();                                        \
        __local T* b = a + duet_sg_items();                                                    \
        DUET_SG_SYNC();                                                                        \
        a[lid] = x;                                                                            \
        DUET_SG_SYNC();                                                                        \
        for (uint off = 1; off < w; off <<= 1) {                                               \
            T v = a[lid];                                                                      \
            if (lane >= off)                                                                   \
                v = DUET_OP_##OP(a[lid - off], v);                                             \
            b[lid] = v;                                                                        \
            DUET_SG_SYNC();                                                                    \
            __local T* t = a;                                                                  \
            a = b;                                                                             \
            b = t;                                                                             \
        }                                                                                      \
        return a;                                                                              \
    }                                                                                          \
    DUET_OVL T sub_group_scan_inclusive_##OP(T x) {                                            \
        const uint lid = duet_sg_lid(), lane = lid % __duet_sub_group_width();                 \
        return duet_sg_scan_##OP##_##T(x, lid, lane)[lid];                                     \
    }                                                                                          \
    DUET_OVL T sub_group_scan_exclusive_##OP(T x) {                                            \
        const uint lid = duet_sg_lid(), lane = lid % __duet_sub_group_width();                 \
        __local T* a = duet_sg_scan_##OP##_##T(x, lid, lane);                                  \
        return lane ? a[lid - 1] : (T)(IDENTITY);                                              \
    }

#define DUET_SG_ALL(T, MIN, MAX)                                                               \
    DUET_SG_BROADCAST(T)                                                                       \
    DUET_SG_REDUCE_SCAN(T, add, 0)                                                             \
    DUET_SG_REDUCE_SCAN(T, min, MAX)                                                           \
    DUET_SG_REDUCE_SCAN(T, max, MIN)

DUET_SG_ALL(int, INT_MIN, INT_MAX)
DUET_SG_ALL(uint, 0, UINT_MAX)
DUET_SG_ALL(long, LONG_MIN, LONG_MAX)
DUET_SG_ALL(ulong, 0, ULONG_MAX)
DUET_SG_ALL(float, -INFINITY, INFINITY)
DUET_SG_ALL(double, -INFINITY, INFINITY)

// ---- all, any -------------------------------------------------------------------------------

DUET_OVL int sub_group_all(int predicate) {
    return sub_group_reduce_min(predicate != 0 ? 1 : 0);
}

DUET_OVL int sub_group_any(int predicate) {
    return sub_group_reduce_max(predicate != 0 ? 1 : 0);
}

// ---- cl_khr_subgroup_extended_types: 8- and 16-bit integers, vectors --------------------------

DUET_SG_BROADCAST(char)
DUET_SG_BROADCAST(uchar)
DUET_SG_BROADCAST(short)
DUET_SG_BROADCAST(ushort)
#define DUET_SG_NARROW(T, MIN, MAX)                                                            \
    DUET_SG_REDUCE_SCAN(T, add, 0)                                                             \
    DUET_SG_REDUCE_SCAN(T, min, MAX)                                                           \
    DUET_SG_REDUCE_SCAN(T, max, MIN)
DUET_SG_NARROW(char, CHAR_MIN, CHAR_MAX)
DUET_SG_NARROW(uchar, 0, UCHAR_MAX)
DUET_SG_NARROW(short, SHRT_MIN, SHRT_MAX)
DUET_SG_NARROW(ushort, 0, USHRT_MAX)

// Vectors: one scalar broadcast per component (the scratch holds 16 bytes per work-item).
#define DUET_SG_BROADCAST_VEC(T, N)                                                            \
    DUET_OVL T##N sub_group_broadcast(T##N x, uint sub_group_local_id) {                       \
        T##N r;                                                                                \
        for (int c = 0; c < N; ++c)                                                            \
            ((T*)&r)[c] = sub_group_broadcast(((T*)&x)[c], sub_group_local_id);                \
        return r;                                                                              \
    }
#define DUET_SG_BROADCAST_VECS(T)                                                              \
    DUET_SG_BROADCAST_VEC(T, 2)                                                                \
    DUET_SG_BROADCAST_VEC(T, 3)                                                                \
    DUET_SG_BROADCAST_VEC(T, 4)                                                                \
    DUET_SG_BROADCAST_VEC(T, 8)                                                                \
    DUET_SG_BROADCAST_VEC(T, 16)
DUET_SG_BROADCAST_VECS(char)
DUET_SG_BROADCAST_VECS(uchar)
DUET_SG_BROADCAST_VECS(short)
DUET_SG_BROADCAST_VECS(ushort)
DUET_SG_BROADCAST_VECS(int)
DUET_SG_BROADCAST_VECS(uint)
DUET_SG_BROADCAST_VECS(long)
DUET_SG_BROADCAST_VECS(ulong)
DUET_SG_BROADCAST_VECS(float)
DUET_SG_BROADCAST_VECS(double)

// ---- cl_khr_subgroup_shuffle, _shuffle_relative, _rotate ----------------------------------------
// Every value to the scratch, then each work-item reads the one it names. A lane outside the
// sub-group gives an undefined value (here: the work-item's own), never a read out of bounds.
// Rotations count modulo the sub-group's width (a partial sub-group's missing lanes are outside
// it) or, clustered, within the power-of-two cluster of consecutive lanes.

#define DUET_SG_SHUFFLE(T)                                                                     \
    DUET_INLINE T duet_sg_from_##T(T x, uint lane, bool valid) {                               \
        __local T* s = (__local T*)__duet_wg_scratch();                                        \
        const uint lid = duet_sg_lid(), w = __duet_sub_group_width();                          \
        const uint base = lid / w * w, rest = duet_sg_items() - base;                          \
        DUET_SG_SYNC();                                                                        \
        s[lid] = x;                                                                            \
        DUET_SG_SYNC();                                                                        \
        return valid && lane < (rest < w ? rest : w) ? s[base + lane] : x;                     \
    }                                                                                          \
    DUET_OVL T sub_group_shuffle(T x, uint index) {                                            \
        return duet_sg_from_##T(x, index, true);                                               \
    }                                                                                          \
    DUET_OVL T sub_group_shuffle_xor(T x, uint mask) {                                         \
        return duet_sg_from_##T(x, get_sub_group_local_id() ^ mask, true);                     \
    }                                                                                          \
    DUET_OVL T sub_group_shuffle_up(T x, uint delta) {                                         \
        const uint lane = get_sub_group_local_id();                                            \
        return duet_sg_from_##T(x, lane - delta, delta <= lane);                               \
    }                                                                                          \
    DUET_OVL T sub_group_shuffle_down(T x, uint delta) {                                       \
        return duet_sg_from_##T(x, get_sub_group_local_id() + delta, true);                    \
    }                                                                                          \
    DUET_OVL T sub_group_rotate(T x, int delta) {                                              \
        const uint w = get_max_sub_group_size();                                               \
        return duet_sg_from_##T(x, (get_sub_group_local_id() + (uint)delta) % w, true);        \
    }                                                                                          \
    DUET_OVL T sub_group_clustered_rotate(T x, int delta, uint clustersize) {                  \
        const uint lane = get_sub_group_local_id(), size = clustersize ? clustersize : 1;      \
        return duet_sg_from_##T(x, (lane & ~(size - 1)) + (lane + (uint)delta) % size, true);  \
    }
DUET_SG_SHUFFLE(char)
DUET_SG_SHUFFLE(uchar)
DUET_SG_SHUFFLE(short)
DUET_SG_SHUFFLE(ushort)
DUET_SG_SHUFFLE(int)
DUET_SG_SHUFFLE(uint)
DUET_SG_SHUFFLE(long)
DUET_SG_SHUFFLE(ulong)
DUET_SG_SHUFFLE(float)
DUET_SG_SHUFFLE(double)

// ---- cl_khr_subgroup_clustered_reduce ---------------------------------------------------------
// Every value to the scratch, then each work-item folds its cluster's (clustersize, a power of
// two up to the sub-group's width, consecutive lanes).

#define DUET_OP_mul(a, b) ((a) * (b))
#define DUET_OP_and(a, b) ((a) & (b))
#define DUET_OP_or(a, b) ((a) | (b))
#define DUET_OP_xor(a, b) ((a) ^ (b))
#define DUET_OP_logical_and(a, b) ((a) && (b))
#define DUET_OP_logical_or(a, b) ((a) || (b))
#define DUET_OP_logical_xor(a, b) ((!(a)) != (!(b)))

#define DUET_SG_CLUSTERED(T, OP, IDENTITY)                                                     \
    DUET_OVL T sub_group_clustered_reduce_##OP(T x, uint clustersize) {                        \
        __local T* s = (__local T*)__duet_wg_scratch();                                        \
        const uint lid = duet_sg_lid(), w = __duet_sub_group_width();                          \
        const uint base = lid / w * w, rest = duet_sg_items() - base;                          \
        const uint n = rest < w ? rest : w, size = clustersize ? clustersize : 1;              \
        const uint first = (lid - base) / size * size;                                         \
        const uint end = first + size < n ? first + size : n;                                  \
        DUET_SG_SYNC();                                                                        \
        s[lid] = x;                                                                            \
        DUET_SG_SYNC();                                                                        \
        T r = (T)(IDENTITY);                                                                   \
        for (uint j = first; j < end; ++j)                                                     \
            r = (T)DUET_OP_##OP(r, s[base + j]);                                               \
        return r;                                                                              \
    }
#define DUET_SG_CLUSTERED_ARITH(T, MIN, MAX)                                                   \
    DUET_SG_CLUSTERED(T, add, 0)                                                               \
    DUET_SG_CLUSTERED(T, mul, 1)                                                               \
    DUET_SG_CLUSTERED(T, min, MAX)                                                             \
    DUET_SG_CLUSTERED(T, max, MIN)
#define DUET_SG_CLUSTERED_BITS(T, MIN, MAX)                                                    \
    DUET_SG_CLUSTERED_ARITH(T, MIN, MAX)                                                       \
    DUET_SG_CLUSTERED(T, and, ~(T)0)                                                           \
    DUET_SG_CLUSTERED(T, or, 0)                                                                \
    DUET_SG_CLUSTERED(T, xor, 0)
DUET_SG_CLUSTERED_BITS(char, CHAR_MIN, CHAR_MAX)
DUET_SG_CLUSTERED_BITS(uchar, 0, UCHAR_MAX)
DUET_SG_CLUSTERED_BITS(short, SHRT_MIN, SHRT_MAX)
DUET_SG_CLUSTERED_BITS(ushort, 0, USHRT_MAX)
DUET_SG_CLUSTERED_BITS(int, INT_MIN, INT_MAX)
DUET_SG_CLUSTERED_BITS(uint, 0, UINT_MAX)
DUET_SG_CLUSTERED_BITS(long, LONG_MIN, LONG_MAX)
DUET_SG_CLUSTERED_BITS(ulong, 0, ULONG_MAX)
DUET_SG_CLUSTERED_ARITH(float, -INFINITY, INFINITY)
DUET_SG_CLUSTERED_ARITH(double, -INFINITY, INFINITY)
DUET_SG_CLUSTERED(int, logical_and, 1)
DUET_SG_CLUSTERED(int, logical_or, 0)
DUET_SG_CLUSTERED(int, logical_xor, 0)

// ---- cl_khr_subgroup_ballot, _non_uniform_vote, _non_uniform_arithmetic -----------------------
// These act on the work-items of the sub-group that reach the call together (the active ones).
// Each is a region boundary (__duet_sub_group_barrier) and __duet_sub_group_active() gives the
// lanes of this sub-group that entered the region with the work-item: where only some
// work-items reach the call (a work-item-dependent branch or loop), the work-group pass makes
// the regions resumable and each region's loop runs exactly those (runtime/devices/cpu/README.md);
// elsewhere every lane of the sub-group. Values go through the scratch as above; each active
// work-item then reads its sub-group's slots in lane order, keeping the active lanes' (a loop of
// the width's trip count, 8 or 16, the same for every work-item: where the regions are not
// resumable, the implicit loop barriers make each step a vectorised work-item loop; a walk over
// the mask's bits took about twice as long. A fixed 16 steps, unrolled so that resumable regions
// vectorise too, was slower: gathers).

ulong __duet_sub_group_active(void);

/// The lanes of this work-item's sub-group that hold work-items.
DUET_INLINE ulong duet_sg_lanes(void) {
    const uint w = __duet_sub_group_width();
    const uint rest = duet_sg_items() - duet_sg_lid() / w * w, n = rest < w ? rest : w;
    return n >= 64 ? ~0ul : (1ul << n) - 1;
}

/// After a region boundary: the lanes of this sub-group that reached it.
DUET_INLINE ulong duet_sg_active_lanes(void) {
    DUET_SG_SYNC();
    return __duet_sub_group_active() & duet_sg_lanes();
}

/// Puts x in this work-item's slot; afterwards `s` is the sub-group's first slot and `mask` the
/// active lanes. Two boundaries: the first lets the previous collective's readers finish.
#define DUET_SG_SHARE(T, x)                                                                    \
    __local T* s = (__local T*)__duet_wg_scratch();                                            \
    const uint lid = duet_sg_lid(), lane = lid % __duet_sub_group_width();                     \
    DUET_SG_SYNC();                                                                            \
    s[lid] = (x);                                                                              \
    const ulong mask = duet_sg_active_lanes();                                                 \
    s += lid - lane

#define DUET_SG_NON_UNIFORM(T, OP, IDENTITY)                                                   \
    DUET_INLINE T duet_sg_fold_##OP##_##T(__local const T* s, ulong lanes) {                   \
        T r = (T)(IDENTITY);                                                                   \
        const uint w = __duet_sub_group_width();                                               \
        for (uint j = 0; j < w; ++j)                                                           \
            r = (lanes >> j) & 1 ? (T)DUET_OP_##OP(r, s[j]) : r;                               \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T sub_group_non_uniform_reduce_##OP(T x) {                                        \
        DUET_SG_SHARE(T, x);                                                                   \
        return duet_sg_fold_##OP##_##T(s, mask);                                               \
    }                                                                                          \
    DUET_OVL T sub_group_non_uniform_scan_inclusive_##OP(T x) {                                \
        DUET_SG_SHARE(T, x);                                                                   \
        return duet_sg_fold_##OP##_##T(s, mask & ((2ul << lane) - 1));                         \
    }                                                                                          \
    DUET_OVL T sub_group_non_uniform_scan_exclusive_##OP(T x) {                                \
        DUET_SG_SHARE(T, x);                                                                   \
        return duet_sg_fold_##OP##_##T(s, mask & ((1ul << lane) - 1));                         \
    }
#define DUET_SG_NON_UNIFORM_ARITH(T, MIN, MAX)                                                 \
    DUET_SG_NON_UNIFORM(T, add, 0)                                                             \
    DUET_SG_NON_UNIFORM(T, mul, 1)                                                             \
    DUET_SG_NON_UNIFORM(T, min, MAX)                                                           \
    DUET_SG_NON_UNIFORM(T, max, MIN)
#define DUET_SG_NON_UNIFORM_BITS(T, MIN, MAX)                                                  \
    DUET_SG_NON_UNIFORM_ARITH(T, MIN, MAX)                                                     \
    DUET_SG_NON_UNIFORM(T, and, ~(T)0)                                                         \
    DUET_SG_NON_UNIFORM(T, or, 0)                                                              \
    DUET_SG_NON_UNIFORM(T, xor, 0)
DUET_SG_NON_UNIFORM_BITS(char, CHAR_MIN, CHAR_MAX)
DUET_SG_NON_UNIFORM_BITS(uchar, 0, UCHAR_MAX)
DUET_SG_NON_UNIFORM_BITS(short, SHRT_MIN, SHRT_MAX)
DUET_SG_NON_UNIFORM_BITS(ushort, 0, USHRT_MAX)
DUET_SG_NON_UNIFORM_BITS(int, INT_MIN, INT_MAX)
DUET_SG_NON_UNIFORM_BITS(uint, 0, UINT_MAX)
DUET_SG_NON_UNIFORM_BITS(long, LONG_MIN, LONG_MAX)
DUET_SG_NON_UNIFORM_BITS(ulong, 0, ULONG_MAX)
DUET_SG_NON_UNIFORM_ARITH(float, -INFINITY, INFINITY)
DUET_SG_NON_UNIFORM_ARITH(double, -INFINITY, INFINITY)
DUET_SG_NON_UNIFORM(int, logical_and, 1)
DUET_SG_NON_UNIFORM(int, logical_or, 0)
DUET_SG_NON_UNIFORM(int, logical_xor, 0)

// Votes.

DUET_OVL int sub_group_elect(void) {
    return get_sub_group_local_id() == (uint)__builtin_ctzl(duet_sg_active_lanes());
}

DUET_OVL int sub_group_non_uniform_all(int predicate) {
    DUET_SG_SHARE(int, predicate != 0);
    return duet_sg_fold_logical_and_int(s, mask);
}

DUET_OVL int sub_group_non_uniform_any(int predicate) {
    DUET_SG_SHARE(int, predicate != 0);
    return duet_sg_fold_logical_or_int(s, mask);
}

#define DUET_SG_ALL_EQUAL(T)                                                                   \
    DUET_OVL int sub_group_non_uniform_all_equal(T x) {                                        \
        DUET_SG_SHARE(T, x);                                                                   \
        const T first = s[__builtin_ctzl(mask)];                                               \
        const uint w = __duet_sub_group_width();                                               \
        int equal = 1;                                                                         \
        for (uint j = 0; j < w; ++j)                                                           \
            equal &= !((mask >> j) & 1) || s[j] == first;                                      \
        return equal;                                                                          \
    }
DUET_SG_ALL_EQUAL(char)
DUET_SG_ALL_EQUAL(uchar)
DUET_SG_ALL_EQUAL(short)
DUET_SG_ALL_EQUAL(ushort)
DUET_SG_ALL_EQUAL(int)
DUET_SG_ALL_EQUAL(uint)
DUET_SG_ALL_EQUAL(long)
DUET_SG_ALL_EQUAL(ulong)
DUET_SG_ALL_EQUAL(float)
DUET_SG_ALL_EQUAL(double)

// Broadcasts. The index names an active lane (the spec leaves any other undefined: here the
// work-item's own value, never a read outside the sub-group's slots). Vectors move 16 bytes (a
// work-item's scratch) per round, so a double16 is 8 rounds, not 16.

#define DUET_SG_NU_BROADCAST(T)                                                                \
    DUET_OVL T sub_group_non_uniform_broadcast(T x, uint index) {                              \
        DUET_SG_SHARE(T, x);                                                                   \
        return index < 64 && ((mask >> index) & 1) ? s[index] : x;                             \
    }                                                                                          \
    DUET_OVL T sub_group_broadcast_first(T x) {                                                \
        DUET_SG_SHARE(T, x);                                                                   \
        return s[__builtin_ctzl(mask)];                                                        \
    }
#define DUET_SG_NU_BROADCAST_VEC(T, N)                                                         \
    DUET_OVL T##N sub_group_non_uniform_broadcast(T##N x, uint index) {                        \
        union {                                                                                \
            T##N v;                                                                            \
            ulong2 q[(sizeof(T##N) + 15) / 16];                                                \
        } u;                                                                                   \
        u.v = x;                                                                               \
        for (uint c = 0; c < (sizeof(T##N) + 15) / 16; ++c) {                                  \
            DUET_SG_SHARE(ulong2, u.q[c]);                                                     \
            if (index < 64 && ((mask >> index) & 1))                                           \
                u.q[c] = s[index];                                                             \
        }                                                                                      \
        return u.v;                                                                            \
    }
#define DUET_SG_NU_BROADCASTS(T)                                                               \
    DUET_SG_NU_BROADCAST(T)                                                                    \
    DUET_SG_NU_BROADCAST_VEC(T, 2)                                                             \
    DUET_SG_NU_BROADCAST_VEC(T, 3)                                                             \
    DUET_SG_NU_BROADCAST_VEC(T, 4)                                                             \
    DUET_SG_NU_BROADCAST_VEC(T, 8)                                                             \
    DUET_SG_NU_BROADCAST_VEC(T, 16)
DUET_SG_NU_BROADCASTS(char)
DUET_SG_NU_BROADCASTS(uchar)
DUET_SG_NU_BROADCASTS(short)
DUET_SG_NU_BROADCASTS(ushort)
DUET_SG_NU_BROADCASTS(int)
DUET_SG_NU_BROADCASTS(uint)
DUET_SG_NU_BROADCASTS(long)
DUET_SG_NU_BROADCASTS(ulong)
DUET_SG_NU_BROADCASTS(float)
DUET_SG_NU_BROADCASTS(double)

// Ballots: a sub-group uses the first __duet_sub_group_width() (8 or 16) bits; the arithmetic
// on them needs no other work-item (gpu/ballot_masks.h, shared with the GPU devices).

#define DUET_BALLOT_OVL DUET_OVL
#include "../gpu/ballot_masks.h"

DUET_OVL uint4 sub_group_ballot(int predicate) {
    DUET_SG_SHARE(int, predicate != 0);
    const uint w = __duet_sub_group_width();
    ulong bits = 0;
    for (uint j = 0; j < w; ++j)
        bits |= s[j] ? mask & (1ul << j) : 0;
    return duet_ballot_of(bits);
}
