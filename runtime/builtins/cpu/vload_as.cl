// vloadn/vstoren, vload_half/vstore_half (all rounding modes) and their aligned "a" forms
// (OpenCL C 3.0 §6.15.11). Half values are handled as bits: no cl_khr_fp16 needed.
// Built twice: named address spaces (CL1.2 pass) and generic pointers (CL3.0 pass);
// __constant overloads exist in both languages with the same name, so only the CL1.2 pass
// defines them.
#include "builtins.h"

// ---- vloadn / vstoren: element-aligned vector access (3 goes per element: a 3-vector
// load would touch a fourth element) ----
#define DUET_UNALIGNED(S)                                                                      \
    typedef S##2 __attribute__((aligned(sizeof(S)))) duet_u_##S##2;                            \
    typedef S##4 __attribute__((aligned(sizeof(S)))) duet_u_##S##4;                            \
    typedef S##8 __attribute__((aligned(sizeof(S)))) duet_u_##S##8;                            \
    typedef S##16 __attribute__((aligned(sizeof(S)))) duet_u_##S##16;
DUET_FOREACH_INT(DUET_UNALIGNED)
DUET_FOREACH_FLOAT(DUET_UNALIGNED)

#define DUET_VLOAD_N(AS, S, N)                                                                 \
    DUET_OVL S##N vload##N(size_t offset, const AS S* p) {                                     \
        return *(const AS duet_u_##S##N*)(p + offset * N);                                     \
    }
#define DUET_VSTORE_N(AS, S, N)                                                                \
    DUET_OVL void vstore##N(S##N v, size_t offset, AS S* p) {                                  \
        *(AS duet_u_##S##N*)(p + offset * N) = v;                                              \
    }
#define DUET_VLOAD(AS, S)                                                                      \
    DUET_VLOAD_N(AS, S, 2) DUET_VLOAD_N(AS, S, 4) DUET_VLOAD_N(AS, S, 8)                       \
    DUET_VLOAD_N(AS, S, 16)                                                                    \
    DUET_OVL S##3 vload3(size_t offset, const AS S* p) {                                       \
        const AS S* q = p + offset * 3;                                                        \
        return (S##3)(q[0], q[1], q[2]);                                                       \
    }
#define DUET_VSTORE(AS, S)                                                                     \
    DUET_VSTORE_N(AS, S, 2) DUET_VSTORE_N(AS, S, 4) DUET_VSTORE_N(AS, S, 8)                    \
    DUET_VSTORE_N(AS, S, 16)                                                                   \
    DUET_OVL void vstore3(S##3 v, size_t offset, AS S* p) {                                    \
        AS S* q = p + offset * 3;                                                              \
        q[0] = v.x;                                                                            \
        q[1] = v.y;                                                                            \
        q[2] = v.z;                                                                            \
    }

// ---- half <-> float/double, exact and fenv-free ----
DUET_INLINE float duet_half_to_float(ushort h) {
    uint sign = (uint)(h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1fu)
        return DUET_AS(float, sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        float f = (float)m * 0x1p-24f; // subnormal half: exact in float
        return sign ? -f : f;
    }
    return DUET_AS(float, sign | ((e + 112u) << 23) | (m << 13));
}

// Rounding modes of the stores.
#define DUET_RTE 0
#define DUET_RTZ 1
#define DUET_RTP 2
#define DUET_RTN 3

// One correctly rounded step from double (float converts to double exactly) to half bits:
// count the half quanta in the value with integer arithmetic and round on the remainder.
DUET_INLINE ushort duet_to_half(double d, int mode) {
    ulong b = DUET_AS(ulong, d);
    ushort sign = (ushort)((b >> 48) & 0x8000u);
    ulong a = b & 0x7ffffffffffffffful;
    bool neg = sign != 0;
    if (a > 0x7ff0000000000000ul) // NaN: quiet, keep the top payload bits
        return sign | 0x7e00u | (ushort)((a >> 42) & 0x1ffu);
    if (a == 0x7ff0000000000000ul)
        return sign | 0x7c00u;
    int ef = (int)(a >> 52);
    ulong m = a & 0x000ffffffffffffful;
    int bigE = ef == 0 ? -1074 : ef - 1075; // value = m * 2^bigE
    if (ef != 0)
        m |= 1ul << 52;
    int e = ef - 1023;
    if (e > 15) {
        bool toInf = mode == DUET_RTE || (mode == DUET_RTP && !neg) || (mode == DUET_RTN && neg);
        return sign | (toInf ? 0x7c00u : 0x7bffu);
    }
    bool sub = e < -14;
    int qexp = (sub ? -14 : e) - 10; // exponent of one unit in the last place of the half
    int shift = qexp - bigE;         // >= 42 here
    ulong n = 0, rem = 0, halfq = 0;
    if (shift < 64) {
        n = m >> shift;
        rem = m & ((1ul << shift) - 1);
        halfq = 1ul << (shift - 1);
    } else {
        rem = m != 0 ? 1 : 0; // below half a quantum
        halfq = 2;
    }
    bool up = false;
    if (mode == DUET_RTE)
        up = rem > halfq || (rem == halfq && (n & 1));
    else if (mode == DUET_RTP)
        up = rem != 0 && !neg;
    else if (mode == DUET_RTN)
        up = rem != 0 && neg;
    n += up;
    uint bits = sub ? (uint)n : ((uint)(e + 14) << 10) + (uint)n;
    return sign | (ushort)bits;
}

// ---- vload_half / vloada_half ----
#define DUET_VLOAD_HALF(AS)                                                                    \
    DUET_OVL float vload_half(size_t offset, const AS half* p) {                               \
        return duet_half_to_float(((const AS ushort*)p)[offset]);                              \
    }                                                                                          \
    DUET_OVL float vloada_half(size_t offset, const AS half* p) { return vload_half(offset, p); } \
    DUET_OVL float2 vload_half2(size_t offset, const AS half* p) {                             \
        return (float2)(vload_half(offset * 2, p), vload_half(offset * 2 + 1, p));             \
    }                                                                                          \
    DUET_OVL float3 vload_half3(size_t offset, const AS half* p) {                             \
        return (float3)(vload_half(offset * 3, p), vload_half(offset * 3 + 1, p),              \
                        vload_half(offset * 3 + 2, p));                                        \
    }                                                                                          \
    DUET_OVL float4 vload_half4(size_t offset, const AS half* p) {                             \
        return (float4)(vload_half2(offset * 2, p), vload_half2(offset * 2 + 1, p));           \
    }                                                                                          \
    DUET_OVL float8 vload_half8(size_t offset, const AS half* p) {                             \
        return (float8)(vload_half4(offset * 2, p), vload_half4(offset * 2 + 1, p));           \
    }                                                                                          \
    DUET_OVL float16 vload_half16(size_t offset, const AS half* p) {                           \
        return (float16)(vload_half8(offset * 2, p), vload_half8(offset * 2 + 1, p));          \
    }                                                                                          \
    DUET_OVL float2 vloada_half2(size_t offset, const AS half* p) {                            \
        return vload_half2(offset, p);                                                         \
    }                                                                                          \
    DUET_OVL float3 vloada_half3(size_t offset, const AS half* p) {                            \
        return (float3)(vload_half(offset * 4, p), vload_half(offset * 4 + 1, p),              \
                        vload_half(offset * 4 + 2, p));                                        \
    }                                                                                          \
    DUET_OVL float4 vloada_half4(size_t offset, const AS half* p) {                            \
        return vload_half4(offset, p);                                                         \
    }                                                                                          \
    DUET_OVL float8 vloada_half8(size_t offset, const AS half* p) {                            \
        return vload_half8(offset, p);                                                         \
    }                                                                                          \
    DUET_OVL float16 vloada_half16(size_t offset, const AS half* p) {                          \
        return vload_half16(offset, p);                                                        \
    }

// ---- vstore_half / vstorea_half, T = float or double, SUFFIX = rounding mode ----
#define DUET_VSTORE_HALF(AS, T, SUFFIX, MODE)                                                  \
    DUET_OVL void vstore_half##SUFFIX(T v, size_t offset, AS half* p) {                        \
        ((AS ushort*)p)[offset] = duet_to_half((double)v, MODE);                               \
    }                                                                                          \
    DUET_OVL void vstorea_half##SUFFIX(T v, size_t offset, AS half* p) {                       \
        vstore_half##SUFFIX(v, offset, p);                                                     \
    }                                                                                          \
    DUET_OVL void vstore_half2##SUFFIX(T##2 v, size_t offset, AS half* p) {                    \
        vstore_half##SUFFIX(v.x, offset * 2, p);                                               \
        vstore_half##SUFFIX(v.y, offset * 2 + 1, p);                                           \
    }                                                                                          \
    DUET_OVL void vstore_half3##SUFFIX(T##3 v, size_t offset, AS half* p) {                    \
        vstore_half##SUFFIX(v.x, offset * 3, p);                                               \
        vstore_half##SUFFIX(v.y, offset * 3 + 1, p);                                           \
        vstore_half##SUFFIX(v.z, offset * 3 + 2, p);                                           \
    }                                                                                          \
    DUET_OVL void vstore_half4##SUFFIX(T##4 v, size_t offset, AS half* p) {                    \
        vstore_half2##SUFFIX(v.lo, offset * 2, p);                                             \
        vstore_half2##SUFFIX(v.hi, offset * 2 + 1, p);                                         \
    }                                                                                          \
    DUET_OVL void vstore_half8##SUFFIX(T##8 v, size_t offset, AS half* p) {                    \
        vstore_half4##SUFFIX(v.lo, offset * 2, p);                                             \
        vstore_half4##SUFFIX(v.hi, offset * 2 + 1, p);                                         \
    }                                                                                          \
    DUET_OVL void vstore_half16##SUFFIX(T##16 v, size_t offset, AS half* p) {                  \
        vstore_half8##SUFFIX(v.lo, offset * 2, p);                                             \
        vstore_half8##SUFFIX(v.hi, offset * 2 + 1, p);                                         \
    }                                                                                          \
    DUET_OVL void vstorea_half2##SUFFIX(T##2 v, size_t offset, AS half* p) {                   \
        vstore_half2##SUFFIX(v, offset, p);                                                    \
    }                                                                                          \
    DUET_OVL void vstorea_half3##SUFFIX(T##3 v, size_t offset, AS half* p) {                   \
        vstore_half##SUFFIX(v.x, offset * 4, p);                                               \
        vstore_half##SUFFIX(v.y, offset * 4 + 1, p);                                           \
        vstore_half##SUFFIX(v.z, offset * 4 + 2, p);                                           \
    }                                                                                          \
    DUET_OVL void vstorea_half4##SUFFIX(T##4 v, size_t offset, AS half* p) {                   \
        vstore_half4##SUFFIX(v, offset, p);                                                    \
    }                                                                                          \
    DUET_OVL void vstorea_half8##SUFFIX(T##8 v, size_t offset, AS half* p) {                   \
        vstore_half8##SUFFIX(v, offset, p);                                                    \
    }                                                                                          \
    DUET_OVL void vstorea_half16##SUFFIX(T##16 v, size_t offset, AS half* p) {                 \
        vstore_half16##SUFFIX(v, offset, p);                                                   \
    }
#define DUET_VSTORE_HALF_MODES(AS, T)                                                          \
    DUET_VSTORE_HALF(AS, T, , DUET_RTE)                                                        \
    DUET_VSTORE_HALF(AS, T, _rte, DUET_RTE)                                                    \
    DUET_VSTORE_HALF(AS, T, _rtz, DUET_RTZ)                                                    \
    DUET_VSTORE_HALF(AS, T, _rtp, DUET_RTP)                                                    \
    DUET_VSTORE_HALF(AS, T, _rtn, DUET_RTN)

#define DUET_LOADS(AS)                                                                         \
    DUET_VLOAD(AS, char) DUET_VLOAD(AS, uchar) DUET_VLOAD(AS, short) DUET_VLOAD(AS, ushort)    \
    DUET_VLOAD(AS, int) DUET_VLOAD(AS, uint) DUET_VLOAD(AS, long) DUET_VLOAD(AS, ulong)        \
    DUET_VLOAD(AS, float) DUET_VLOAD(AS, double) DUET_VLOAD_HALF(AS)
#define DUET_STORES(AS)                                                                        \
    DUET_VSTORE(AS, char) DUET_VSTORE(AS, uchar) DUET_VSTORE(AS, short)                        \
    DUET_VSTORE(AS, ushort) DUET_VSTORE(AS, int) DUET_VSTORE(AS, uint) DUET_VSTORE(AS, long)   \
    DUET_VSTORE(AS, ulong) DUET_VSTORE(AS, float) DUET_VSTORE(AS, double)                      \
    DUET_VSTORE_HALF_MODES(AS, float) DUET_VSTORE_HALF_MODES(AS, double)

#if DUET_GENERIC_PASS
DUET_LOADS()
DUET_STORES()
#else
DUET_LOADS(__private)
DUET_STORES(__private)
DUET_LOADS(__global)
DUET_STORES(__global)
DUET_LOADS(__local)
DUET_STORES(__local)
DUET_LOADS(__constant)
#endif
