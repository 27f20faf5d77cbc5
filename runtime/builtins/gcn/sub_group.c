// Sub-group functions (OpenCL C 3.0 __opencl_c_subgroups) for the GCN device: a sub-group is the
// wave64, so everything is cross-lane permutes (ds_bpermute_b32) within the wave, with no LDS
// and no s_barrier; sub_group_barrier is a fence and a wave barrier, right in code that only
// some waves of the group reach.
//
// C, like work_group.c, with the mangled OpenCL C names. Work-items fill the waves in local
// linear id order (lane = id % 64, wave = id / 64); the last wave of a group may be partial,
// its lanes a prefix, and the steps below ignore lanes past it. Every lane of a sub-group must
// reach the collectives (as the spec says); lanes a branch turned off give undefined values.
#include <limits.h>

typedef unsigned int uint;
typedef unsigned long ulong;

#define CONVERGENT __attribute__((convergent, always_inline))
#define INLINE static inline __attribute__((always_inline))
#define WAVE 64u

// From Duet's gcn/workitem.cl.
ulong _Z12get_local_idj(uint dim);
ulong _Z14get_local_sizej(uint dim);
ulong _Z23get_enqueued_local_sizej(uint dim);

INLINE uint linearId(void) {
    return (uint)((_Z12get_local_idj(2) * _Z14get_local_sizej(1) + _Z12get_local_idj(1)) *
                      _Z14get_local_sizej(0) +
                  _Z12get_local_idj(0));
}

INLINE uint groupItems(void) {
    return (uint)(_Z14get_local_sizej(0) * _Z14get_local_sizej(1) * _Z14get_local_sizej(2));
}

INLINE uint enqueuedItems(void) {
    return (uint)(_Z23get_enqueued_local_sizej(0) * _Z23get_enqueued_local_sizej(1) *
                  _Z23get_enqueued_local_sizej(2));
}

/// Lanes of this work-item's wave that hold work-items.
INLINE uint waveItems(void) {
    const uint rest = groupItems() - (linearId() & ~(WAVE - 1));
    return rest < WAVE ? rest : WAVE;
}

// ---- work-item functions --------------------------------------------------------------------

uint _Z18get_sub_group_sizev(void) {
    return waveItems();
}
uint _Z22get_max_sub_group_sizev(void) {
    const uint n = enqueuedItems();
    return n < WAVE ? n : WAVE;
}
uint _Z18get_num_sub_groupsv(void) {
    return (groupItems() + WAVE - 1) / WAVE;
}
uint _Z27get_enqueued_num_sub_groupsv(void) {
    return (enqueuedItems() + WAVE - 1) / WAVE;
}
uint _Z16get_sub_group_idv(void) {
    return linearId() / WAVE;
}
uint _Z22get_sub_group_local_idv(void) {
    return linearId() % WAVE;
}

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

// ---- collectives ----------------------------------------------------------------------------

/// The value `v` of lane `src` of this wave (any lane number: only its low 6 bits count).
INLINE uint shuffle32(uint v, uint src) {
    return (uint)__builtin_amdgcn_ds_bpermute((int)(src << 2), (int)v);
}
INLINE ulong shuffle64(ulong v, uint src) {
    return (ulong)shuffle32((uint)v, src) | (ulong)shuffle32((uint)(v >> 32), src) << 32;
}

#define SHUFFLE_4(T)                                                                               \
    INLINE T shuffle_##T(T v, uint src) {                                                          \
        return __builtin_bit_cast(T, shuffle32(__builtin_bit_cast(uint, v), src));                 \
    }
#define SHUFFLE_8(T)                                                                               \
    INLINE T shuffle_##T(T v, uint src) {                                                          \
        return __builtin_bit_cast(T, shuffle64(__builtin_bit_cast(ulong, v), src));                \
    }
SHUFFLE_4(int)
SHUFFLE_4(uint)
SHUFFLE_4(float)
SHUFFLE_8(long)
SHUFFLE_8(ulong)
SHUFFLE_8(double)

#define OP_add(a, b) ((a) + (b))
#define OP_min(a, b) ((b) < (a) ? (b) : (a))
#define OP_max(a, b) ((b) > (a) ? (b) : (a))

// T, its mangling letter, an operation and its identity. Reduce: lane i folds in lane i + 2^k
// (lanes past the wave's end count as the identity), 6 steps, then every lane reads lane 0;
// scan: Hillis-Steele, 6 steps.
#define REDUCE_SCAN(T, M, OP, ID)                                                                  \
    CONVERGENT T _Z20sub_group_reduce_##OP##M(T x) {                                               \
        const uint lane = linearId() % WAVE, n = waveItems();                                      \
        T v = x;                                                                                   \
        for (uint off = WAVE / 2; off; off >>= 1) {                                                \
            const T other = shuffle_##T(v, lane + off);                                            \
            v = OP_##OP(v, lane + off < n ? other : (T)(ID));                                      \
        }                                                                                          \
        return shuffle_##T(v, 0);                                                                  \
    }                                                                                              \
    INLINE T scan_##OP##_##T(T x, uint lane) {                                                     \
        T v = x;                                                                                   \
        for (uint off = 1; off < WAVE; off <<= 1) {                                                \
            const T other = shuffle_##T(v, lane - off);                                            \
            if (lane >= off)                                                                       \
                v = OP_##OP(other, v);                                                             \
        }                                                                                          \
        return v;                                                                                  \
    }                                                                                              \
    CONVERGENT T _Z28sub_group_scan_inclusive_##OP##M(T x) {                                       \
        return scan_##OP##_##T(x, linearId() % WAVE);                                              \
    }                                                                                              \
    CONVERGENT T _Z28sub_group_scan_exclusive_##OP##M(T x) {                                       \
        const uint lane = linearId() % WAVE;                                                       \
        const T left = shuffle_##T(scan_##OP##_##T(x, lane), lane - 1);                            \
        return lane ? left : (T)(ID);                                                              \
    }

#define ALL_OF(T, M, MIN, MAX)                                                                     \
    REDUCE_SCAN(T, M, add, 0)                                                                      \
    REDUCE_SCAN(T, M, min, MAX)                                                                    \
    REDUCE_SCAN(T, M, max, MIN)                                                                    \
    CONVERGENT T _Z19sub_group_broadcast##M##j(T x, uint id) {                                     \
        return shuffle_##T(x, id);                                                                 \
    }

ALL_OF(int, i, INT_MIN, INT_MAX)
ALL_OF(uint, j, 0, UINT_MAX)
ALL_OF(long, l, LONG_MIN, LONG_MAX)
ALL_OF(ulong, m, 0, ULONG_MAX)
ALL_OF(float, f, -__builtin_inff(), __builtin_inff())
ALL_OF(double, d, -__builtin_inf(), __builtin_inf())

CONVERGENT int _Z13sub_group_alli(int predicate) {
    return _Z20sub_group_reduce_mini(predicate != 0);
}
CONVERGENT int _Z13sub_group_anyi(int predicate) {
    return _Z20sub_group_reduce_maxi(predicate != 0);
}
