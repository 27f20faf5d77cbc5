// Common builtins (OpenCL C 3.0 §6.15.4) for float and double, every width.
#include "builtins.h"

#define DUET_COMMON(T, S, M_180_PI, M_PI_180)                                                  \
    DUET_CONST T clamp(T x, T lo, T hi) {                                                      \
        return __builtin_fmin##S(__builtin_fmax##S(x, lo), hi);                                \
    }                                                                                          \
    DUET_CONST T degrees(T r) { return r * (T)M_180_PI; }                                      \
    DUET_CONST T radians(T d) { return d * (T)M_PI_180; }                                      \
    DUET_CONST T max(T x, T y) { return __builtin_fmax##S(x, y); }                             \
    DUET_CONST T min(T x, T y) { return __builtin_fmin##S(x, y); }                             \
    DUET_CONST T mix(T x, T y, T a) { return x + (y - x) * a; }                                \
    DUET_CONST T step(T edge, T x) { return x < edge ? (T)0 : (T)1; }                          \
    DUET_CONST T smoothstep(T e0, T e1, T x) {                                                 \
        T t = clamp((x - e0) / (e1 - e0), (T)0, (T)1);                                         \
        return t * t * ((T)3 - (T)2 * t);                                                      \
    }                                                                                          \
    DUET_CONST T sign(T x) {                                                                   \
        if (x > (T)0)                                                                          \
            return (T)1;                                                                       \
        if (x < (T)0)                                                                          \
            return (T)-1;                                                                      \
        return x == x ? x : (T)0;                                                              \
    }                                                                                          \
    DUET_VEC_3VVV(DUET_CONST, T, clamp, T, T, T)                                               \
    DUET_VEC_3VSS(DUET_CONST, T, clamp, T, T, T)                                               \
    DUET_VEC_1(DUET_CONST, T, degrees, T)                                                      \
    DUET_VEC_1(DUET_CONST, T, radians, T)                                                      \
    DUET_VEC_2VV(DUET_CONST, T, max, T, T)                                                     \
    DUET_VEC_2VS(DUET_CONST, T, max, T, T)                                                     \
    DUET_VEC_2VV(DUET_CONST, T, min, T, T)                                                     \
    DUET_VEC_2VS(DUET_CONST, T, min, T, T)                                                     \
    DUET_VEC_3VVV(DUET_CONST, T, mix, T, T, T)                                                 \
    DUET_VEC_3VVS(DUET_CONST, T, mix, T, T, T)                                                 \
    DUET_VEC_2VV(DUET_CONST, T, step, T, T)                                                    \
    DUET_VEC_3VVV(DUET_CONST, T, smoothstep, T, T, T)                                          \
    DUET_VEC_3SSV(DUET_CONST, T, smoothstep, T, T, T)                                          \
    DUET_VEC_1(DUET_CONST, T, sign, T)

DUET_COMMON(float, f, 0x1.ca5dc1a63c1f8p+5, 0x1.1df46a2529d39p-6)
DUET_COMMON(double, , 0x1.ca5dc1a63c1f8p+5, 0x1.1df46a2529d39p-6)

// step(scalar edge, vector x).
#define DUET_STEP_SV(T)                                                                        \
    DUET_CONST T##2 step(T e, T##2 x) { return (T##2)(step(e, x.lo), step(e, x.hi)); }         \
    DUET_CONST T##3 step(T e, T##3 x) { return (T##3)(step(e, x.x), step(e, x.y), step(e, x.z)); } \
    DUET_CONST T##4 step(T e, T##4 x) { return (T##4)(step(e, x.lo), step(e, x.hi)); }         \
    DUET_CONST T##8 step(T e, T##8 x) { return (T##8)(step(e, x.lo), step(e, x.hi)); }         \
    DUET_CONST T##16 step(T e, T##16 x) { return (T##16)(step(e, x.lo), step(e, x.hi)); }
DUET_STEP_SV(float)
DUET_STEP_SV(double)
