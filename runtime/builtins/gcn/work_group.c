// Work-group collective functions for the GCN device: wave-level steps with cross-lane
// permutes (ds_bpermute_b32), then one LDS slot per wave to combine the waves of a group.
//
// C, not OpenCL C, so that the LDS exchange can be a file-scope address-space-3 array (OpenCL C
// allows __local variables only in kernels); the functions carry their mangled OpenCL C names.
// A work-group of at most 256 work-items (CL_DEVICE_MAX_WORK_GROUP_SIZE) is at most four wave64s;
// work-items fill the waves in local linear id order, so lane = id % 64 and wave = id / 64, and
// the active lanes of the last, partial wave are a prefix of it. The LDS slots are volatile: the
// compiler must not assume it sees every write (other waves make them across a barrier).
// Every function starts with a barrier (the previous collective's readers are done with the
// slots) and so is itself a barrier, as the spec says of work-group functions.
#include <limits.h>

typedef unsigned int uint;
typedef unsigned long ulong;

// Inlined into the kernel: no call, and the permutes see the kernel's own registers.
#define CONVERGENT __attribute__((convergent, always_inline))
#define INLINE static inline __attribute__((always_inline))

// From libclc (barrier) and Duet's gcn/workitem.cl (work-item functions).
__attribute__((convergent)) void _Z7barrierj(uint flags);
ulong _Z12get_local_idj(uint dim);
ulong _Z14get_local_sizej(uint dim);

#define WAVES 4 // 256 / 64
static __attribute__((address_space(3), loader_uninitialized)) volatile ulong g_slots[WAVES];

INLINE void localBarrier(void) {
    _Z7barrierj(1);
} // CLK_LOCAL_MEM_FENCE

INLINE uint linearId(void) {
    return (uint)((_Z12get_local_idj(2) * _Z14get_local_sizej(1) + _Z12get_local_idj(1)) *
                      _Z14get_local_sizej(0) +
                  _Z12get_local_idj(0));
}

INLINE uint groupItems(void) {
    return (uint)(_Z14get_local_sizej(0) * _Z14get_local_sizej(1) * _Z14get_local_sizej(2));
}

/// The value `v` of lane `src` of this wave (any lane number: only its low 6 bits count).
INLINE uint shuffle32(uint v, uint src) {
    return (uint)__builtin_amdgcn_ds_bpermute((int)(src << 2), (int)v);
}
INLINE ulong shuffle64(ulong v, uint src) {
    return (ulong)shuffle32((uint)v, src) | (ulong)shuffle32((uint)(v >> 32), src) << 32;
}

// Each type: its bits as a ulong (slots), a lane shuffle, its identities.
#define BITS_4(T)                                                                                  \
    INLINE ulong toBits_##T(T v) {                                                                 \
        return __builtin_bit_cast(uint, v);                                                        \
    }                                                                                              \
    INLINE T fromBits_##T(ulong b) {                                                               \
        return __builtin_bit_cast(T, (uint)b);                                                     \
    }                                                                                              \
    INLINE T shuffle_##T(T v, uint src) {                                                          \
        return __builtin_bit_cast(T, shuffle32(__builtin_bit_cast(uint, v), src));                 \
    }
#define BITS_8(T)                                                                                  \
    INLINE ulong toBits_##T(T v) {                                                                 \
        return __builtin_bit_cast(ulong, v);                                                       \
    }                                                                                              \
    INLINE T fromBits_##T(ulong b) {                                                               \
        return __builtin_bit_cast(T, b);                                                           \
    }                                                                                              \
    INLINE T shuffle_##T(T v, uint src) {                                                          \
        return __builtin_bit_cast(T, shuffle64(__builtin_bit_cast(ulong, v), src));                \
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

// T, its mangling letter, an identity of add/min/max.
#define REDUCE_SCAN(T, M, OP, ID)                                                                  \
    CONVERGENT T _Z21work_group_reduce_##OP##M(T x) {                                              \
        const uint id = linearId(), n = groupItems(), lane = id & 63, wave = id >> 6;              \
        const uint inWave = n - (wave << 6) < 64 ? n - (wave << 6) : 64;                           \
        /* Lane i folds in lane i + off: lane 0 ends with the wave's value. */                     \
        T v = x;                                                                                   \
        for (uint off = 32; off; off >>= 1) {                                                      \
            const T other = shuffle_##T(v, lane + off);                                            \
            v = OP_##OP(v, lane + off < inWave ? other : (T)(ID));                                 \
        }                                                                                          \
        localBarrier();                                                                            \
        if (lane == 0)                                                                             \
            g_slots[wave] = toBits_##T(v);                                                         \
        localBarrier();                                                                            \
        T r = fromBits_##T(g_slots[0]);                                                            \
        for (uint w = 1; w < (n + 63) >> 6; ++w)                                                   \
            r = OP_##OP(r, fromBits_##T(g_slots[w]));                                              \
        return r;                                                                                  \
    }                                                                                              \
    /* The inclusive scan within the wave; *prefix gets the waves before this one. */              \
    INLINE T scanWave_##OP##_##T(T x, uint* laneOut, T* prefix) {                                  \
        const uint id = linearId(), n = groupItems(), lane = id & 63, wave = id >> 6;              \
        const uint inWave = n - (wave << 6) < 64 ? n - (wave << 6) : 64;                           \
        T v = x;                                                                                   \
        for (uint off = 1; off < 64; off <<= 1) {                                                  \
            const T other = shuffle_##T(v, lane - off);                                            \
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
        *prefix = p;                                                                               \
        return v;                                                                                  \
    }                                                                                              \
    CONVERGENT T _Z29work_group_scan_inclusive_##OP##M(T x) {                                      \
        uint lane;                                                                                 \
        T prefix;                                                                                  \
        const T v = scanWave_##OP##_##T(x, &lane, &prefix);                                        \
        return OP_##OP(prefix, v);                                                                 \
    }                                                                                              \
    CONVERGENT T _Z29work_group_scan_exclusive_##OP##M(T x) {                                      \
        uint lane;                                                                                 \
        T prefix;                                                                                  \
        const T v = scanWave_##OP##_##T(x, &lane, &prefix);                                        \
        const T left = shuffle_##T(v, lane - 1);                                                   \
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

ALL_OF(int, i, INT_MIN, INT_MAX)
ALL_OF(uint, j, 0, UINT_MAX)
ALL_OF(long, l, LONG_MIN, LONG_MAX)
ALL_OF(ulong, m, 0, ULONG_MAX)
ALL_OF(float, f, -__builtin_inff(), __builtin_inff())
ALL_OF(double, d, -__builtin_inf(), __builtin_inf())

CONVERGENT int _Z14work_group_alli(int predicate) {
    return _Z21work_group_reduce_mini(predicate != 0);
}
CONVERGENT int _Z14work_group_anyi(int predicate) {
    return _Z21work_group_reduce_maxi(predicate != 0);
}

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
