// The work-group collective functions of both GPU devices, written once: a wave-level step with
// lane shuffles, then one slot of group memory per wave to combine the waves of a group. The
// including file (gcn/work_group.c, nvidia/work_group.c) is C, so that the slots can be a
// file-scope address-space-3 array; it defines before including this:
//   LANES                        the wave's width (64 on GCN, 32 on NVIDIA: a warp)
//   g_slots[]                    volatile ulong, one per wave of the largest work-group
//   uint shuffle32(uint mask, uint v, uint src)
//                                lane (src mod LANES)'s v; `mask` names the wave's existing
//                                lanes, all of which call it together (NVIDIA's shfl.sync
//                                needs it, GCN's ds_bpermute ignores it)
//   CONVERGENT, INLINE           function attributes (always inlined into the kernel)
// Work-items fill the waves in local linear id order (both GPUs do), so lane = id % LANES and
// wave = id / LANES, and the existing lanes of the last, partial wave are a prefix of it. The
// slots are volatile: other waves write them across a barrier. Every function starts with a
// barrier (the previous collective's readers are done with the slots), so each is itself a
// barrier, as the spec says of work-group functions. The functions carry their mangled OpenCL C
// names.
#include "collectives.h"

// From libclc.
__attribute__((convergent)) void _Z7barrierj(uint flags);

INLINE void localBarrier(void) {
    _Z7barrierj(1); // CLK_LOCAL_MEM_FENCE
}

/// The work-items of wave `wave` in a group of `n`: LANES, or the prefix a partial last wave has.
INLINE uint waveItems(uint n, uint wave) {
    return n - wave * LANES < LANES ? n - wave * LANES : LANES;
}
/// The lanes of a wave of `items` work-items, as a mask (the low 32 lanes: NVIDIA's only).
INLINE uint memberMask(uint items) {
    return items >= 32 ? 0xffffffffu : (1u << items) - 1u;
}
INLINE ulong shuffle64(uint mask, ulong v, uint src) {
    return (ulong)shuffle32(mask, (uint)v, src) | (ulong)shuffle32(mask, (uint)(v >> 32), src)
                                                      << 32;
}

// Each type: its bits as a ulong (slots), a lane shuffle.
#define BITS_4(T)                                                                                  \
    INLINE ulong toBits_##T(T v) {                                                                 \
        return __builtin_bit_cast(uint, v);                                                        \
    }                                                                                              \
    INLINE T fromBits_##T(ulong b) {                                                               \
        return __builtin_bit_cast(T, (uint)b);                                                     \
    }                                                                                              \
    INLINE T shuffle_##T(uint mask, T v, uint src) {                                               \
        return __builtin_bit_cast(T, shuffle32(mask, __builtin_bit_cast(uint, v), src));           \
    }
#define BITS_8(T)                                                                                  \
    INLINE ulong toBits_##T(T v) {                                                                 \
        return __builtin_bit_cast(ulong, v);                                                       \
    }                                                                                              \
    INLINE T fromBits_##T(ulong b) {                                                               \
        return __builtin_bit_cast(T, b);                                                           \
    }                                                                                              \
    INLINE T shuffle_##T(uint mask, T v, uint src) {                                               \
        return __builtin_bit_cast(T, shuffle64(mask, __builtin_bit_cast(ulong, v), src));          \
    }
BITS_4(int)
BITS_4(uint)
BITS_4(float)
BITS_8(long)
BITS_8(ulong)
BITS_8(double)

#define OP_add(a, b) ((a) + (b))
#define OP_min(a, b) ((b) < (a) ? (b) : (a))
#define OP_max(a, b) ((b) > (a) ? (b) : (a))

// T, its mangling letter, the operation, its identity.
#define REDUCE_SCAN(T, M, OP, ID)                                                                  \
    CONVERGENT T _Z21work_group_reduce_##OP##M(T x) {                                              \
        const uint id = linearId(), n = groupItems(), lane = id & (LANES - 1), wave = id / LANES;              \
        const uint inWave = waveItems(n, wave), mask = memberMask(inWave);                         \
        /* Lane i folds in lane i + off: lane 0 ends with the wave's value. */                     \
        T v = x;                                                                                   \
        for (uint off = LANES / 2; off; off >>= 1) {                                                      \
            const T other = shuffle_##T(mask, v, lane + off);                                      \
            v = OP_##OP(v, lane + off < inWave ? other : (T)(ID));                                 \
        }                                                                                          \
        localBarrier();                                                                            \
        if (lane == 0)                                                                             \
            g_slots[wave] = toBits_##T(v);                                                         \
        localBarrier();                                                                            \
        T r = fromBits_##T(g_slots[0]);                                                            \
        for (uint w = 1; w < (n + LANES - 1) / LANES; ++w)                                                   \
            r = OP_##OP(r, fromBits_##T(g_slots[w]));                                              \
        return r;                                                                                  \
    }                                                                                              \
    /* The inclusive scan within the wave; *prefix gets the waves before this one. */              \
    INLINE T scanWave_##OP##_##T(T x, uint* laneOut, uint* maskOut, T* prefix) {                   \
        const uint id = linearId(), n = groupItems(), lane = id & (LANES - 1), wave = id / LANES;              \
        const uint inWave = waveItems(n, wave), mask = memberMask(inWave);                         \
        T v = x;                                                                                   \
        for (uint off = 1; off < LANES; off <<= 1) {                                                  \
            const T other = shuffle_##T(mask, v, lane - off);                                      \
            if (lane >= off)                                                                       \
                v = OP_##OP(other, v);                                                             \
        }                                                                                          \
        localBarrier();                                                                            \
        if (lane == inWave - 1)                                                                    \
            g_slots[wave] = toBits_##T(v);                                                         \
        localBarrier();                                                                            \
        T p = (T)(ID);                                                                             \
        for (uint w = 0; w < wave; ++w)                                                            \
            p = OP_##OP(p, fromBits_##T(g_slots[w]));                                              \
        *laneOut = lane;                                                                           \
        *maskOut = mask;                                                                           \
        *prefix = p;                                                                               \
        return v;                                                                                  \
    }                                                                                              \
    CONVERGENT T _Z29work_group_scan_inclusive_##OP##M(T x) {                                      \
        uint lane, mask;                                                                           \
        T prefix;                                                                                  \
        const T v = scanWave_##OP##_##T(x, &lane, &mask, &prefix);                                 \
        return OP_##OP(prefix, v);                                                                 \
    }                                                                                              \
    CONVERGENT T _Z29work_group_scan_exclusive_##OP##M(T x) {                                      \
        uint lane, mask;                                                                           \
        T prefix;                                                                                  \
        const T v = scanWave_##OP##_##T(x, &lane, &mask, &prefix);                                 \
        const T left = shuffle_##T(mask, v, lane - 1);                                             \
        return OP_##OP(prefix, lane ? left : (T)(ID));                                             \
    }

#define BROADCAST(T, M)                                                                            \
    CONVERGENT T _Z20work_group_broadcast##M##m(T a, ulong x) {                                    \
        localBarrier();                                                                            \
        if (_Z12get_local_idj(0) == x)                                                             \
            g_slots[0] = toBits_##T(a);                                                            \
        localBarrier();                                                                            \
        return fromBits_##T(g_slots[0]);                                                           \
    }                                                                                              \
    CONVERGENT T _Z20work_group_broadcast##M##mm(T a, ulong x, ulong y) {                          \
        localBarrier();                                                                            \
        if (_Z12get_local_idj(0) == x && _Z12get_local_idj(1) == y)                                \
            g_slots[0] = toBits_##T(a);                                                            \
        localBarrier();                                                                            \
        return fromBits_##T(g_slots[0]);                                                           \
    }                                                                                              \
    CONVERGENT T _Z20work_group_broadcast##M##mmm(T a, ulong x, ulong y, ulong z) {                \
        localBarrier();                                                                            \
        if (_Z12get_local_idj(0) == x && _Z12get_local_idj(1) == y && _Z12get_local_idj(2) == z)   \
            g_slots[0] = toBits_##T(a);                                                            \
        localBarrier();                                                                            \
        return fromBits_##T(g_slots[0]);                                                           \
    }

#define ALL_OF(T, M, MIN, MAX)                                                                     \
    REDUCE_SCAN(T, M, add, 0)                                                                      \
    REDUCE_SCAN(T, M, min, MAX)                                                                    \
    REDUCE_SCAN(T, M, max, MIN)                                                                    \
    BROADCAST(T, M)

DUET_COLLECTIVE_TYPES(ALL_OF)

CONVERGENT int _Z14work_group_alli(int predicate) {
    return _Z21work_group_reduce_mini(predicate != 0);
}
CONVERGENT int _Z14work_group_anyi(int predicate) {
    return _Z21work_group_reduce_maxi(predicate != 0);
}
