// Geometric builtins (OpenCL C 3.0 §6.15.5): float and double, widths 1 to 4.
// Float lengths are summed in double (no overflow, no underflow, one rounding at the end);
// double lengths scale by the largest component first.
#include "builtins.h"

// The spec lets geometric functions contract (mad, fma): dot does, where the library otherwise
// builds with contraction off, so a dot of three is a multiply and two fused multiply-adds
// (llvm.fmuladd: fused where the target has a fast fma). cross does not: cross(a, a) stays 0.
#define DUET_CONTRACT _Pragma("OPENCL FP_CONTRACT ON")
#define DUET_DOT(T)                                                                            \
    DUET_CONST T dot(T a, T b) { return a * b; }                                               \
    DUET_CONST T dot(T##2 a, T##2 b) {                                                         \
        DUET_CONTRACT return a.x * b.x + a.y * b.y;                                            \
    }                                                                                          \
    DUET_CONST T dot(T##3 a, T##3 b) {                                                         \
        DUET_CONTRACT return a.x * b.x + a.y * b.y + a.z * b.z;                                \
    }                                                                                          \
    DUET_CONST T dot(T##4 a, T##4 b) {                                                         \
        DUET_CONTRACT return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;                    \
    }                                                                                          \
    DUET_CONST T##3 cross(T##3 a, T##3 b) {                                                    \
        return (T##3)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);    \
    }                                                                                          \
    DUET_CONST T##4 cross(T##4 a, T##4 b) {                                                    \
        return (T##4)(cross(a.xyz, b.xyz), (T)0);                                              \
    }
DUET_DOT(float)
DUET_DOT(double)

// Float: exact squares and sums in double.
#define DUET_GEOM_FLOAT(VT, DT)                                                                \
    DUET_CONST float length(VT p) {                                                            \
        DT d = __builtin_convertvector(p, DT);                                                 \
        return (float)__builtin_sqrt(dot(d, d));                                               \
    }
DUET_CONST float length(float p) { return __builtin_fabsf(p); }
DUET_GEOM_FLOAT(float2, double2)
DUET_GEOM_FLOAT(float3, double3)
DUET_GEOM_FLOAT(float4, double4)

// Double: scale by the largest magnitude so the squares neither overflow nor underflow.
DUET_CONST double length(double p) { return __builtin_fabs(p); }
#define DUET_GEOM_DOUBLE(VT, N, MAXABS)                                                        \
    DUET_CONST double length(VT p) {                                                           \
        VT a = __builtin_elementwise_abs(p);                                                   \
        double m = MAXABS;                                                                     \
        if (m == 0.0 || __builtin_isinf(m) || m != m)                                          \
            return m != m ? m : (__builtin_isinf(m) ? m : 0.0);                                \
        /* N, not the vector's size: a 3-vector is stored as 4 and its 4th lane is undefined. */ \
        for (int i = 0; i < N; ++i)                                                            \
            if (a[i] != a[i])                                                                  \
                return a[i];                                                                   \
        /* A power-of-two scale keeps the scaling exact. */                                    \
        int e;                                                                                 \
        __builtin_frexp(m, &e);                                                                \
        VT s = __builtin_ldexp(1.0, -e) * p;                                                   \
        return __builtin_ldexp(__builtin_sqrt(dot(s, s)), e);                                  \
    }
DUET_GEOM_DOUBLE(double2, 2, __builtin_fmax(a.x, a.y))
DUET_GEOM_DOUBLE(double3, 3, __builtin_fmax(__builtin_fmax(a.x, a.y), a.z))
DUET_GEOM_DOUBLE(double4, 4, __builtin_fmax(__builtin_fmax(a.x, a.y), __builtin_fmax(a.z, a.w)))

#define DUET_DISTANCE(T)                                                                       \
    DUET_CONST T distance(T a, T b) { return length(a - b); }                                  \
    DUET_CONST T distance(T##2 a, T##2 b) { return length(a - b); }                            \
    DUET_CONST T distance(T##3 a, T##3 b) { return length(a - b); }                            \
    DUET_CONST T distance(T##4 a, T##4 b) { return length(a - b); }
DUET_DISTANCE(float)
DUET_DISTANCE(double)

// normalize: zero vectors are returned as is; infinities count as +-1 and the rest as 0.
// Float vectors are normalised in double (a length above FLT_MAX, or squares below FLT_MIN, do
// not matter there); double vectors are first scaled by a power of two near their largest
// magnitude, so that their length neither overflows nor loses the small components.
#define DUET_NORMALIZE_PREP(T, N)                                                              \
    bool anyInf = false, allZero = true;                                                       \
    for (int i = 0; i < N; ++i) {                                                              \
        anyInf |= __builtin_isinf(p[i]);                                                       \
        allZero &= p[i] == (T)0;                                                               \
    }                                                                                          \
    if (allZero)                                                                               \
        return p;                                                                              \
    if (anyInf)                                                                                \
        for (int i = 0; i < N; ++i)                                                            \
            p[i] = __builtin_isinf(p[i]) ? (p[i] > 0 ? (T)1 : (T)-1) : (T)0 * p[i];
#define DUET_NORMALIZE_FLOAT(VT, DT, N)                                                        \
    DUET_CONST VT normalize(VT p) {                                                            \
        DUET_NORMALIZE_PREP(float, N)                                                          \
        DT d = __builtin_convertvector(p, DT);                                                 \
        return __builtin_convertvector(d / __builtin_sqrt(dot(d, d)), VT);                     \
    }
#define DUET_NORMALIZE_DOUBLE(VT, N)                                                           \
    DUET_CONST VT normalize(VT p) {                                                            \
        DUET_NORMALIZE_PREP(double, N)                                                         \
        double m = 0.0;                                                                        \
        for (int i = 0; i < N; ++i)                                                            \
            m = __builtin_fmax(m, __builtin_fabs(p[i]));                                       \
        int e;                                                                                 \
        __builtin_frexp(m, &e);                                                                \
        p *= __builtin_ldexp(1.0, -e);                                                         \
        return p / length(p);                                                                  \
    }
DUET_NORMALIZE_FLOAT(float2, double2, 2)
DUET_NORMALIZE_FLOAT(float3, double3, 3)
DUET_NORMALIZE_FLOAT(float4, double4, 4)
DUET_NORMALIZE_DOUBLE(double2, 2)
DUET_NORMALIZE_DOUBLE(double3, 3)
DUET_NORMALIZE_DOUBLE(double4, 4)
DUET_CONST float normalize(float p) { return normalize((float2)(p, 0.0f)).x; }
DUET_CONST double normalize(double p) { return normalize((double2)(p, 0.0)).x; }

// fast_*: float only; plain float arithmetic.
#define DUET_FAST(VT)                                                                          \
    DUET_CONST float fast_length(VT p) { return __builtin_sqrtf(dot(p, p)); }                  \
    DUET_CONST float fast_distance(VT a, VT b) { return fast_length(a - b); }                  \
    DUET_CONST VT fast_normalize(VT p) {                                                       \
        float d = dot(p, p);                                                                   \
        return d == 0.0f ? p : p * (1.0f / __builtin_sqrtf(d));                                \
    }
DUET_FAST(float)
DUET_FAST(float2)
DUET_FAST(float3)
DUET_FAST(float4)
