// Integer builtins (OpenCL C 3.0 §6.15.3) and cl_khr_extended_bit_ops, every type and width.
// Most bodies are written once for scalars and vectors alike (OpenCL C vector operators);
// bit counts and 64-bit high products go per component.
#include "builtins.h"

// M(T, U, S, BITS): T the (vector) type, U its unsigned twin, S its scalar element type.
#define DUET_INT_WIDTHS(M, S, US, BITS)                                                        \
    M(S, US, S, BITS) M(S##2, US##2, S, BITS) M(S##3, US##3, S, BITS) M(S##4, US##4, S, BITS)  \
    M(S##8, US##8, S, BITS) M(S##16, US##16, S, BITS)
#define DUET_ALL_INTS(M)                                                                       \
    DUET_INT_WIDTHS(M, char, uchar, 8) DUET_INT_WIDTHS(M, uchar, uchar, 8)                     \
    DUET_INT_WIDTHS(M, short, ushort, 16) DUET_INT_WIDTHS(M, ushort, ushort, 16)               \
    DUET_INT_WIDTHS(M, int, uint, 32) DUET_INT_WIDTHS(M, uint, uint, 32)                       \
    DUET_INT_WIDTHS(M, long, ulong, 64) DUET_INT_WIDTHS(M, ulong, ulong, 64)

#define DUET_INT_GENERIC(T, U, S, BITS)                                                        \
    DUET_CONST U abs(T x) {                                                                    \
        U u = DUET_AS(U, x);                                                                   \
        return x < (T)0 ? (U)0 - u : u;                                                        \
    }                                                                                          \
    /* max - min in unsigned arithmetic: no select, which LLVM 19's AMDGPU backend gets    \
       wrong on char3/char4 (it drops the select of bytes 1 and 3). */                          \
    DUET_CONST U abs_diff(T x, T y) {                                                          \
        return DUET_AS(U, (T)__builtin_elementwise_max(x, y)) -                                \
               DUET_AS(U, (T)__builtin_elementwise_min(x, y));                                 \
    }                                                                                          \
    DUET_CONST T hadd(T x, T y) { return (x >> (T)1) + (y >> (T)1) + (x & y & (T)1); }         \
    DUET_CONST T rhadd(T x, T y) { return (x >> (T)1) + (y >> (T)1) + ((x | y) & (T)1); }      \
    DUET_CONST T max(T x, T y) { return __builtin_elementwise_max(x, y); }                     \
    DUET_CONST T min(T x, T y) { return __builtin_elementwise_min(x, y); }                     \
    DUET_CONST T clamp(T x, T lo, T hi) {                                                      \
        return __builtin_elementwise_min(__builtin_elementwise_max(x, lo), hi);                \
    }                                                                                          \
    DUET_CONST T rotate(T v, T i) {                                                            \
        U u = DUET_AS(U, v);                                                                   \
        U n = DUET_AS(U, i) & (U)(BITS - 1);                                                   \
        return DUET_AS(T, (U)((u << n) | (u >> (((U)0 - n) & (U)(BITS - 1)))));               \
    }                                                                                          \
    DUET_CONST T bitfield_insert(T base, T insert, uint offset, uint count) {                  \
        U ones = count >= BITS ? (U)~(U)0 : (U)(((U)1 << (U)count) - (U)1);                    \
        U mask = (U)(ones << (U)offset);                                                       \
        if (count == 0)                                                                        \
            mask = (U)0;                                                                       \
        U b = DUET_AS(U, base), in = DUET_AS(U, insert);                                       \
        return DUET_AS(T, (U)((b & ~mask) | ((U)(in << (U)offset) & mask)));                   \
    }

DUET_ALL_INTS(DUET_INT_GENERIC)

// Elementwise builtins promote small scalars to int (add_sat of two chars would not saturate),
// so they serve vectors only; scalars are spelled out below.
#define DUET_INT_VEC_ONLY(T, U, S, BITS)                                                       \
    DUET_CONST T add_sat(T x, T y) { return __builtin_elementwise_add_sat(x, y); }             \
    DUET_CONST T sub_sat(T x, T y) { return __builtin_elementwise_sub_sat(x, y); }             \
    DUET_CONST T bit_reverse(T x) {                                                            \
        return DUET_AS(T, __builtin_elementwise_bitreverse(DUET_AS(U, x)));                    \
    }
#define DUET_INT_VEC_ONLY_WIDTHS(S, US, BITS)                                                  \
    DUET_INT_VEC_ONLY(S##2, US##2, S, BITS) DUET_INT_VEC_ONLY(S##3, US##3, S, BITS)            \
    DUET_INT_VEC_ONLY(S##4, US##4, S, BITS) DUET_INT_VEC_ONLY(S##8, US##8, S, BITS)            \
    DUET_INT_VEC_ONLY(S##16, US##16, S, BITS)
DUET_INT_VEC_ONLY_WIDTHS(char, uchar, 8)
DUET_INT_VEC_ONLY_WIDTHS(uchar, uchar, 8)
DUET_INT_VEC_ONLY_WIDTHS(short, ushort, 16)
DUET_INT_VEC_ONLY_WIDTHS(ushort, ushort, 16)
DUET_INT_VEC_ONLY_WIDTHS(int, uint, 32)
DUET_INT_VEC_ONLY_WIDTHS(uint, uint, 32)
DUET_INT_VEC_ONLY_WIDTHS(long, ulong, 64)
DUET_INT_VEC_ONLY_WIDTHS(ulong, ulong, 64)

#define DUET_SAT_NARROW(S, LO, HI)                                                             \
    DUET_CONST S add_sat(S x, S y) {                                                           \
        int r = (int)x + (int)y;                                                               \
        return (S)(r < LO ? LO : (r > HI ? HI : r));                                           \
    }                                                                                          \
    DUET_CONST S sub_sat(S x, S y) {                                                           \
        int r = (int)x - (int)y;                                                               \
        return (S)(r < LO ? LO : (r > HI ? HI : r));                                           \
    }
DUET_SAT_NARROW(char, CHAR_MIN, CHAR_MAX)
DUET_SAT_NARROW(uchar, 0, UCHAR_MAX)
DUET_SAT_NARROW(short, SHRT_MIN, SHRT_MAX)
DUET_SAT_NARROW(ushort, 0, USHRT_MAX)
#define DUET_SAT_WIDE(S)                                                                       \
    DUET_CONST S add_sat(S x, S y) { return __builtin_elementwise_add_sat(x, y); }             \
    DUET_CONST S sub_sat(S x, S y) { return __builtin_elementwise_sub_sat(x, y); }
DUET_SAT_WIDE(int)
DUET_SAT_WIDE(uint)
DUET_SAT_WIDE(long)
DUET_SAT_WIDE(ulong)
#define DUET_BITREV(S, U, BITS)                                                                \
    DUET_CONST S bit_reverse(S x) { return (S)__builtin_bitreverse##BITS((U)x); }
DUET_BITREV(char, uchar, 8)
DUET_BITREV(uchar, uchar, 8)
DUET_BITREV(short, ushort, 16)
DUET_BITREV(ushort, ushort, 16)
DUET_BITREV(int, uint, 32)
DUET_BITREV(uint, uint, 32)
DUET_BITREV(long, ulong, 64)
DUET_BITREV(ulong, ulong, 64)

// Vector with scalar bounds.
#define DUET_INT_VS(T, U, S, BITS)                                                             \
    DUET_CONST T max(T x, S y) { return __builtin_elementwise_max(x, (T)y); }                  \
    DUET_CONST T min(T x, S y) { return __builtin_elementwise_min(x, (T)y); }                  \
    DUET_CONST T clamp(T x, S lo, S hi) {                                                      \
        return __builtin_elementwise_min(__builtin_elementwise_max(x, (T)lo), (T)hi);          \
    }
#define DUET_INT_VS_WIDTHS(S, US, BITS)                                                        \
    DUET_INT_VS(S##2, US##2, S, BITS) DUET_INT_VS(S##3, US##3, S, BITS)                        \
    DUET_INT_VS(S##4, US##4, S, BITS) DUET_INT_VS(S##8, US##8, S, BITS)                        \
    DUET_INT_VS(S##16, US##16, S, BITS)
DUET_INT_VS_WIDTHS(char, uchar, 8)
DUET_INT_VS_WIDTHS(uchar, uchar, 8)
DUET_INT_VS_WIDTHS(short, ushort, 16)
DUET_INT_VS_WIDTHS(ushort, ushort, 16)
DUET_INT_VS_WIDTHS(int, uint, 32)
DUET_INT_VS_WIDTHS(uint, uint, 32)
DUET_INT_VS_WIDTHS(long, ulong, 64)
DUET_INT_VS_WIDTHS(ulong, ulong, 64)

// ---- scalar-only cores, then vectors per component ----
#define DUET_INT_SCALAR(S, U, BITS)                                                            \
    DUET_CONST S clz(S x) { return (S)__builtin_clzg((U)x, BITS); }                            \
    DUET_CONST S ctz(S x) { return (S)__builtin_ctzg((U)x, BITS); }                            \
    DUET_CONST S popcount(S x) { return (S)__builtin_popcountg((U)x); }                        \
    DUET_CONST U bitfield_extract_unsigned(S base, uint offset, uint count) {                  \
        if (count == 0)                                                                        \
            return (U)0;                                                                       \
        U v = (U)((U)base >> (U)offset);                                                       \
        return count >= BITS ? v : (U)(v & (U)(((U)1 << (U)count) - (U)1));                    \
    }                                                                                          \
    DUET_VEC_1(DUET_CONST, S, clz, S)                                                          \
    DUET_VEC_1(DUET_CONST, S, ctz, S)                                                          \
    DUET_VEC_1(DUET_CONST, S, popcount, S)                                                     \
    DUET_VEC_3VSS(DUET_CONST, U, bitfield_extract_unsigned, S, uint, uint)

DUET_INT_SCALAR(char, uchar, 8)
DUET_INT_SCALAR(uchar, uchar, 8)
DUET_INT_SCALAR(short, ushort, 16)
DUET_INT_SCALAR(ushort, ushort, 16)
DUET_INT_SCALAR(int, uint, 32)
DUET_INT_SCALAR(uint, uint, 32)
DUET_INT_SCALAR(long, ulong, 64)
DUET_INT_SCALAR(ulong, ulong, 64)

// bitfield_extract_signed: shift the field to the top, then arithmetic-shift it down.
#define DUET_EXTRACT_SIGNED(S, U, BITS)                                                        \
    DUET_CONST S bitfield_extract_signed(S base, uint offset, uint count) {                    \
        if (count == 0)                                                                        \
            return (S)0;                                                                       \
        U v = (U)((U)base << (U)(BITS - count - offset));                                      \
        return (S)((S)v >> (S)(BITS - count));                                                 \
    }                                                                                          \
    DUET_VEC_3VSS(DUET_CONST, S, bitfield_extract_signed, S, uint, uint)
DUET_EXTRACT_SIGNED(char, uchar, 8)
DUET_EXTRACT_SIGNED(short, ushort, 16)
DUET_EXTRACT_SIGNED(int, uint, 32)
DUET_EXTRACT_SIGNED(long, ulong, 64)
#define DUET_EXTRACT_SIGNED_U(S, SS)                                                           \
    DUET_CONST SS bitfield_extract_signed(S base, uint offset, uint count) {                   \
        return bitfield_extract_signed((SS)base, offset, count);                               \
    }                                                                                          \
    DUET_VEC_3VSS(DUET_CONST, SS, bitfield_extract_signed, S, uint, uint)
DUET_EXTRACT_SIGNED_U(uchar, char)
DUET_EXTRACT_SIGNED_U(ushort, short)
DUET_EXTRACT_SIGNED_U(uint, int)
DUET_EXTRACT_SIGNED_U(ulong, long)

// ---- high products and saturating multiply-add ----
// 64x64 -> 128 unsigned product as (hi, lo).
DUET_INLINE ulong duet_umul128(ulong a, ulong b, __private ulong* lo) {
    ulong a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    ulong p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    ulong mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
// Signed: the unsigned high part corrected for negative operands.
DUET_INLINE long duet_smul128(long a, long b, __private ulong* lo) {
    ulong hi = duet_umul128((ulong)a, (ulong)b, lo);
    if (a < 0)
        hi -= (ulong)b;
    if (b < 0)
        hi -= (ulong)a;
    return (long)hi;
}

#define DUET_MUL_HI_NARROW(S, W, BITS)                                                         \
    DUET_CONST S mul_hi(S x, S y) { return (S)(((W)x * (W)y) >> BITS); }                       \
    DUET_CONST S mad_hi(S a, S b, S c) { return (S)(mul_hi(a, b) + c); }
DUET_MUL_HI_NARROW(char, short, 8)
DUET_MUL_HI_NARROW(uchar, ushort, 8)
DUET_MUL_HI_NARROW(short, int, 16)
DUET_MUL_HI_NARROW(ushort, uint, 16)
DUET_MUL_HI_NARROW(int, long, 32)
DUET_MUL_HI_NARROW(uint, ulong, 32)
DUET_CONST long mul_hi(long x, long y) {
    ulong lo;
    return duet_smul128(x, y, &lo);
}
DUET_CONST ulong mul_hi(ulong x, ulong y) {
    ulong lo;
    return duet_umul128(x, y, &lo);
}
DUET_CONST long mad_hi(long a, long b, long c) { return (long)((ulong)mul_hi(a, b) + (ulong)c); }
DUET_CONST ulong mad_hi(ulong a, ulong b, ulong c) { return mul_hi(a, b) + c; }

// mad_sat for 8..32 bits: exact in a wider type, then clamped.
#define DUET_MAD_SAT_NARROW(S, W, LO, HI)                                                      \
    DUET_CONST S mad_sat(S a, S b, S c) {                                                      \
        W r = (W)a * (W)b + (W)c;                                                              \
        return (S)(r < (W)LO ? (W)LO : (r > (W)HI ? (W)HI : r));                               \
    }
DUET_MAD_SAT_NARROW(char, int, CHAR_MIN, CHAR_MAX)
DUET_MAD_SAT_NARROW(uchar, uint, 0, UCHAR_MAX)
DUET_MAD_SAT_NARROW(short, int, SHRT_MIN, SHRT_MAX)
DUET_MAD_SAT_NARROW(ushort, uint, 0, USHRT_MAX)
DUET_MAD_SAT_NARROW(int, long, INT_MIN, INT_MAX)
DUET_MAD_SAT_NARROW(uint, ulong, 0, UINT_MAX)
DUET_CONST ulong mad_sat(ulong a, ulong b, ulong c) {
    ulong lo, hi = duet_umul128(a, b, &lo);
    ulong sum = lo + c;
    hi += sum < lo;
    return hi != 0 ? ULONG_MAX : sum;
}
DUET_CONST long mad_sat(long a, long b, long c) {
    ulong lo;
    long hi = duet_smul128(a, b, &lo);
    ulong sum = lo + (ulong)c;
    hi += (long)(sum < lo) + (c < 0 ? -1 : 0);
    // Representable iff the high word is the sign extension of the low word.
    if (hi == ((long)sum >> 63))
        return (long)sum;
    return hi < 0 ? LONG_MIN : LONG_MAX;
}

#define DUET_INT_VEC_HI(S)                                                                     \
    DUET_VEC_2VV(DUET_CONST, S, mul_hi, S, S)                                                  \
    DUET_VEC_3VVV(DUET_CONST, S, mad_hi, S, S, S)                                              \
    DUET_VEC_3VVV(DUET_CONST, S, mad_sat, S, S, S)
DUET_FOREACH_INT(DUET_INT_VEC_HI)

// ---- 24-bit multiply: only the low 24 bits matter; wrap in unsigned to stay defined ----
DUET_CONST int mul24(int x, int y) { return (int)((uint)x * (uint)y); }
DUET_CONST uint mul24(uint x, uint y) { return x * y; }
DUET_CONST int mad24(int x, int y, int z) { return (int)((uint)x * (uint)y + (uint)z); }
DUET_CONST uint mad24(uint x, uint y, uint z) { return x * y + z; }
DUET_VEC_2VV(DUET_CONST, int, mul24, int, int)
DUET_VEC_2VV(DUET_CONST, uint, mul24, uint, uint)
DUET_VEC_3VVV(DUET_CONST, int, mad24, int, int, int)
DUET_VEC_3VVV(DUET_CONST, uint, mad24, uint, uint, uint)

// ---- upsample(hi, lo) = (hi << bits) | lo ----
#define DUET_UPSAMPLE(H, L, W, UW, BITS)                                                       \
    DUET_CONST W upsample(H hi, L lo) { return (W)(((UW)(W)hi << BITS) | (UW)lo); }            \
    DUET_VEC_2VV(DUET_CONST, W, upsample, H, L)
DUET_UPSAMPLE(char, uchar, short, ushort, 8)
DUET_UPSAMPLE(uchar, uchar, ushort, ushort, 8)
DUET_UPSAMPLE(short, ushort, int, uint, 16)
DUET_UPSAMPLE(ushort, ushort, uint, uint, 16)
DUET_UPSAMPLE(int, uint, long, ulong, 32)
DUET_UPSAMPLE(uint, uint, ulong, ulong, 32)

// ---- cl_khr_integer_dot_product: 4x8-bit dot products, plain and saturating-accumulate ----
#define DUET_DOT8(A, B, R)                                                                     \
    DUET_CONST R dot(A##4 a, B##4 b) {                                                         \
        return (R)a.x * (R)b.x + (R)a.y * (R)b.y + (R)a.z * (R)b.z + (R)a.w * (R)b.w;          \
    }                                                                                          \
    DUET_CONST R dot_acc_sat(A##4 a, B##4 b, R acc) { return add_sat(dot(a, b), acc); }
DUET_DOT8(uchar, uchar, uint)
DUET_DOT8(char, char, int)
DUET_DOT8(uchar, char, int)
DUET_DOT8(char, uchar, int)

#define DUET_DOT8_PACKED(TAG, A, B, R)                                                         \
    DUET_CONST R dot_4x8packed_##TAG##_##R(uint a, uint b) {                                   \
        return dot(DUET_AS(A##4, a), DUET_AS(B##4, b));                                        \
    }                                                                                          \
    DUET_CONST R dot_acc_sat_4x8packed_##TAG##_##R(uint a, uint b, R acc) {                    \
        return dot_acc_sat(DUET_AS(A##4, a), DUET_AS(B##4, b), acc);                           \
    }
DUET_DOT8_PACKED(uu, uchar, uchar, uint)
DUET_DOT8_PACKED(ss, char, char, int)
DUET_DOT8_PACKED(us, uchar, char, int)
DUET_DOT8_PACKED(su, char, uchar, int)
