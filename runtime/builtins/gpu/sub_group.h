// The core sub-group functions of both GPU devices (OpenCL C 3.0 __opencl_c_subgroups), written
// once: a sub-group is the hardware wave (GCN's wave64, NVIDIA's warp of 32), so everything is
// lane shuffles within it, with no local memory and no work-group barrier. The including file
// (gcn/sub_group.c, nvidia/sub_group.c) is C, with the functions under their mangled OpenCL C
// names, and defines before including this:
//   LANES                        the wave's width as an unsigned constant (64u, 32u)
//   WAVE_MASK()                  the lanes of this work-item's wave that hold work-items, as
//                                the mask shuffle32 takes (may call waveItems(), defined here)
//   uint shuffle32(uint mask, uint v, uint src)
//                                lane (src mod LANES)'s v; every lane of `mask` calls it
//                                together (NVIDIA's shfl.sync needs the mask, GCN's ds_bpermute
//                                ignores it)
//   CONVERGENT, INLINE           function attributes (always inlined into the kernel)
//   WORK_ITEM                    the attributes of the work-item functions (NVIDIA inlines
//                                them too: no call left for ptxas)
// and sub_group_barrier itself (a device's own fence and wave barrier).
//
// Work-items fill the waves in local linear id order (lane = id % LANES, wave = id / LANES: both
// GPUs do, NVIDIA's threadIdx.x fastest, then y, then z); the last wave of a group may be
// partial, its lanes a prefix, and the steps below ignore lanes past it. Every lane of a
// sub-group must reach the collectives (as the spec says); lanes a branch turned off give
// undefined values.
#include "collectives.h"

// From the device's workitem.cl.
ulong _Z23get_enqueued_local_sizej(uint dim);

INLINE uint enqueuedItems(void) {
    return (uint)(_Z23get_enqueued_local_sizej(0) * _Z23get_enqueued_local_sizej(1) *
                  _Z23get_enqueued_local_sizej(2));
}

/// Lanes of this work-item's wave that hold work-items.
INLINE uint waveItems(void) {
    const uint rest = groupItems() - (linearId() & ~(LANES - 1));
    return rest < LANES ? rest : LANES;
}

// ---- work-item functions --------------------------------------------------------------------

WORK_ITEM uint _Z18get_sub_group_sizev(void) {
    return waveItems();
}
WORK_ITEM uint _Z22get_max_sub_group_sizev(void) {
    const uint n = enqueuedItems();
    return n < LANES ? n : LANES;
}
WORK_ITEM uint _Z18get_num_sub_groupsv(void) {
    return (groupItems() + LANES - 1) / LANES;
}
WORK_ITEM uint _Z27get_enqueued_num_sub_groupsv(void) {
    return (enqueuedItems() + LANES - 1) / LANES;
}
WORK_ITEM uint _Z16get_sub_group_idv(void) {
    return linearId() / LANES;
}
WORK_ITEM uint _Z22get_sub_group_local_idv(void) {
    return linearId() % LANES;
}

// ---- collectives ----------------------------------------------------------------------------

INLINE ulong shuffle64(uint mask, ulong v, uint src) {
    return (ulong)shuffle32(mask, (uint)v, src) | (ulong)shuffle32(mask, (uint)(v >> 32), src)
                                                      << 32;
}

#define SHUFFLE_4(T)                                                                               \
    INLINE T shuffle_##T(uint mask, T v, uint src) {                                               \
        return __builtin_bit_cast(T, shuffle32(mask, __builtin_bit_cast(uint, v), src));           \
    }
#define SHUFFLE_8(T)                                                                               \
    INLINE T shuffle_##T(uint mask, T v, uint src) {                                               \
        return __builtin_bit_cast(T, shuffle64(mask, __builtin_bit_cast(ulong, v), src));          \
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
// (lanes past the wave's end count as the identity), log2(LANES) steps, then every lane reads
// lane 0; scan: Hillis-Steele, log2(LANES) steps.
#define REDUCE_SCAN(T, M, OP, ID)                                                                  \
    CONVERGENT T _Z20sub_group_reduce_##OP##M(T x) {                                               \
        const uint lane = linearId() % LANES, n = waveItems(), mask = WAVE_MASK();                 \
        T v = x;                                                                                   \
        for (uint off = LANES / 2; off; off >>= 1) {                                               \
            const T other = shuffle_##T(mask, v, lane + off);                                      \
            v = OP_##OP(v, lane + off < n ? other : (T)(ID));                                      \
        }                                                                                          \
        return shuffle_##T(mask, v, 0);                                                            \
    }                                                                                              \
    INLINE T scan_##OP##_##T(T x, uint lane, uint mask) {                                          \
        T v = x;                                                                                   \
        for (uint off = 1; off < LANES; off <<= 1) {                                               \
            const T other = shuffle_##T(mask, v, lane - off);                                      \
            if (lane >= off)                                                                       \
                v = OP_##OP(other, v);                                                             \
        }                                                                                          \
        return v;                                                                                  \
    }                                                                                              \
    CONVERGENT T _Z28sub_group_scan_inclusive_##OP##M(T x) {                                       \
        return scan_##OP##_##T(x, linearId() % LANES, WAVE_MASK());                                \
    }                                                                                              \
    CONVERGENT T _Z28sub_group_scan_exclusive_##OP##M(T x) {                                       \
        const uint lane = linearId() % LANES, mask = WAVE_MASK();                                  \
        const T left = shuffle_##T(mask, scan_##OP##_##T(x, lane, mask), lane - 1);               \
        return lane ? left : (T)(ID);                                                              \
    }

#define ALL_OF(T, M, MIN, MAX)                                                                     \
    REDUCE_SCAN(T, M, add, 0)                                                                      \
    REDUCE_SCAN(T, M, min, MAX)                                                                    \
    REDUCE_SCAN(T, M, max, MIN)                                                                    \
    CONVERGENT T _Z19sub_group_broadcast##M##j(T x, uint id) {                                     \
        return shuffle_##T(WAVE_MASK(), x, id);                                                    \
    }

DUET_COLLECTIVE_TYPES(ALL_OF)

CONVERGENT int _Z13sub_group_alli(int predicate) {
    return _Z20sub_group_reduce_mini(predicate != 0);
}
CONVERGENT int _Z13sub_group_anyi(int predicate) {
    return _Z20sub_group_reduce_maxi(predicate != 0);
}
