// Relational builtins (OpenCL C 3.0 §6.15.6): scalars return 0/1, vectors 0/-1 per component
// (which is what OpenCL C's own comparison operators give, so one body serves both).
#include "builtins.h"

#define DUET_REL(T, FMIN, FINF)                                                                \
    DUET_CONST __typeof__((T)0 == (T)0) isequal(T x, T y) { return x == y; }                   \
    DUET_CONST __typeof__((T)0 == (T)0) isnotequal(T x, T y) { return x != y; }                \
    DUET_CONST __typeof__((T)0 == (T)0) isgreater(T x, T y) { return x > y; }                  \
    DUET_CONST __typeof__((T)0 == (T)0) isgreaterequal(T x, T y) { return x >= y; }            \
    DUET_CONST __typeof__((T)0 == (T)0) isless(T x, T y) { return x < y; }                     \
    DUET_CONST __typeof__((T)0 == (T)0) islessequal(T x, T y) { return x <= y; }               \
    DUET_CONST __typeof__((T)0 == (T)0) islessgreater(T x, T y) { return x < y || x > y; }     \
    DUET_CONST __typeof__((T)0 == (T)0) isordered(T x, T y) { return x == x && y == y; }       \
    DUET_CONST __typeof__((T)0 == (T)0) isunordered(T x, T y) { return x != x || y != y; }     \
    DUET_CONST __typeof__((T)0 == (T)0) isnan(T x) { return x != x; }                          \
    DUET_CONST __typeof__((T)0 == (T)0) isinf(T x) {                                           \
        return __builtin_elementwise_abs(x) == (T)FINF;                                        \
    }                                                                                          \
    DUET_CONST __typeof__((T)0 == (T)0) isfinite(T x) {                                        \
        return __builtin_elementwise_abs(x) < (T)FINF;                                         \
    }                                                                                          \
    DUET_CONST __typeof__((T)0 == (T)0) isnormal(T x) {                                        \
        T a = __builtin_elementwise_abs(x);                                                    \
        return a >= (T)FMIN && a < (T)FINF;                                                    \
    }
#define DUET_REL_WIDTHS(S, FMIN, FINF)                                                         \
    DUET_REL(S, FMIN, FINF) DUET_REL(S##2, FMIN, FINF) DUET_REL(S##3, FMIN, FINF)              \
    DUET_REL(S##4, FMIN, FINF) DUET_REL(S##8, FMIN, FINF) DUET_REL(S##16, FMIN, FINF)
DUET_REL_WIDTHS(float, FLT_MIN, INFINITY)
DUET_REL_WIDTHS(double, DBL_MIN, (double)INFINITY)

// signbit: the sign bit read as a signed integer of the same size.
DUET_CONST int signbit(float x) { return DUET_AS(int, x) < 0; }
DUET_CONST int signbit(double x) { return DUET_AS(long, x) < 0; }
#define DUET_SIGNBIT_V(T, I)                                                                   \
    DUET_CONST I signbit(T x) { return DUET_AS(I, x) < (I)0; }
DUET_SIGNBIT_V(float2, int2)
DUET_SIGNBIT_V(float3, int3)
DUET_SIGNBIT_V(float4, int4)
DUET_SIGNBIT_V(float8, int8)
DUET_SIGNBIT_V(float16, int16)
DUET_SIGNBIT_V(double2, long2)
DUET_SIGNBIT_V(double3, long3)
DUET_SIGNBIT_V(double4, long4)
DUET_SIGNBIT_V(double8, long8)
DUET_SIGNBIT_V(double16, long16)

// any/all: the most significant bit of any/all components.
#define DUET_ANY_ALL(S)                                                                        \
    DUET_CONST int any(S x) { return x < (S)0; }                                               \
    DUET_CONST int all(S x) { return x < (S)0; }                                               \
    DUET_CONST int any(S##2 x) { return (x.x | x.y) < (S)0; }                                  \
    DUET_CONST int all(S##2 x) { return (x.x & x.y) < (S)0; }                                  \
    DUET_CONST int any(S##3 x) { return (x.x | x.y | x.z) < (S)0; }                            \
    DUET_CONST int all(S##3 x) { return (x.x & x.y & x.z) < (S)0; }                            \
    DUET_CONST int any(S##4 x) { return any(x.lo | x.hi); }                                    \
    DUET_CONST int all(S##4 x) { return all(x.lo & x.hi); }                                    \
    DUET_CONST int any(S##8 x) { return any(x.lo | x.hi); }                                    \
    DUET_CONST int all(S##8 x) { return all(x.lo & x.hi); }                                    \
    DUET_CONST int any(S##16 x) { return any(x.lo | x.hi); }                                   \
    DUET_CONST int all(S##16 x) { return all(x.lo & x.hi); }
DUET_ANY_ALL(char)
DUET_ANY_ALL(short)
DUET_ANY_ALL(int)
DUET_ANY_ALL(long)

// bitselect and select. T: the data type; I/U: the signed/unsigned integer type of its size.
// select's scalar form tests c != 0, its vector form the MSB of each component of c.
#define DUET_SELECT(T, I, U, SCALAR)                                                           \
    DUET_CONST T bitselect(T a, T b, T c) {                                                    \
        I ia = DUET_AS(I, a), ib = DUET_AS(I, b), ic = DUET_AS(I, c);                          \
        return DUET_AS(T, (I)((ia & ~ic) | (ib & ic)));                                        \
    }                                                                                          \
    DUET_CONST T select(T a, T b, I c) { return SCALAR ? (c ? b : a) : (c < (I)0 ? b : a); }   \
    DUET_CONST T select(T a, T b, U c) {                                                       \
        return SCALAR ? (c ? b : a) : (DUET_AS(I, c) < (I)0 ? b : a);                          \
    }
#define DUET_SELECT_WIDTHS(S, IS, US)                                                          \
    DUET_SELECT(S, IS, US, 1) DUET_SELECT(S##2, IS##2, US##2, 0)                               \
    DUET_SELECT(S##3, IS##3, US##3, 0) DUET_SELECT(S##4, IS##4, US##4, 0)                      \
    DUET_SELECT(S##8, IS##8, US##8, 0) DUET_SELECT(S##16, IS##16, US##16, 0)
DUET_SELECT_WIDTHS(char, char, uchar)
DUET_SELECT_WIDTHS(uchar, char, uchar)
DUET_SELECT_WIDTHS(short, short, ushort)
DUET_SELECT_WIDTHS(ushort, short, ushort)
DUET_SELECT_WIDTHS(int, int, uint)
DUET_SELECT_WIDTHS(uint, int, uint)
DUET_SELECT_WIDTHS(long, long, ulong)
DUET_SELECT_WIDTHS(ulong, long, ulong)
DUET_SELECT_WIDTHS(float, int, uint)
DUET_SELECT_WIDTHS(double, long, ulong)
