// Math builtins with pointer out-parameters: fract, modf, sincos, frexp, lgamma_r, remquo.
// Built twice: named address spaces (CL1.2 pass) and generic pointers (CL3.0 pass).
#include "builtins.h"

float duet_lgammaf_r(float, __private int*) __asm__("lgammaf_r");
double duet_lgamma_r(double, __private int*) __asm__("lgamma_r");

// ---- scalar cores, out-parameter in private memory ----
#define DUET_CORES(T, S, ONE_MINUS_ULP)                                                        \
    DUET_INLINE T duet_fract_##T(T x, __private T* ip) {                                       \
        T fl = __builtin_floor##S(x);                                                          \
        *ip = fl;                                                                              \
        if (x != x)                                                                            \
            return x;                                                                          \
        if (__builtin_isinf(x))                                                                \
            return __builtin_copysign##S((T)0, x);                                             \
        return __builtin_fmin##S(x - fl, ONE_MINUS_ULP);                                       \
    }                                                                                          \
    DUET_INLINE T duet_modf_##T(T x, __private T* ip) {                                        \
        T i = __builtin_trunc##S(x);                                                           \
        *ip = i;                                                                               \
        if (__builtin_isinf(x))                                                                \
            return __builtin_copysign##S((T)0, x);                                             \
        return __builtin_copysign##S(x - i, x);                                                \
    }                                                                                          \
    DUET_INLINE T duet_sincos_##T(T x, __private T* c) {                                       \
        *c = __builtin_cos##S(x);                                                              \
        return __builtin_sin##S(x);                                                            \
    }                                                                                          \
    DUET_INLINE T duet_frexp_##T(T x, __private int* e) {                                      \
        int ex = 0;                                                                            \
        T m = __builtin_frexp##S(x, &ex);                                                      \
        *e = (__builtin_isinf(x) || x != x) ? 0 : ex;                                          \
        return m;                                                                              \
    }
DUET_CORES(float, f, 0x1.fffffep-1f)
DUET_CORES(double, , 0x1.fffffffffffffp-1)

DUET_INLINE float duet_lgamma_r_float(float x, __private int* s) { return duet_lgammaf_r(x, s); }
DUET_INLINE double duet_lgamma_r_double(double x, __private int* s) {
    return duet_lgamma_r(x, s);
}

// remquo: the spec wants 7 low bits of the quotient (glibc guarantees 3). The remainder is
// libm's (exact); the low bits come from fmod(|x|, 128|y|), which is exact and leaves a
// quotient below 128 that a rounded division recovers exactly.
DUET_INLINE double duet_remquo_core(double x, double y, __private int* quo, bool isFloat) {
    *quo = 0;
    if (x != x || y != y || __builtin_isinf(x) || y == 0)
        return NAN;
    double r = __builtin_remainder(x, y);
    double ay = __builtin_fabs(y), ax = __builtin_fabs(x);
    if (__builtin_isinf(ay))
        return x;
    double m = 128.0 * ay;
    double xr = (!isFloat && __builtin_isinf(m)) ? ax : __builtin_fmod(ax, m);
    double rr = __builtin_remainder(xr, ay);
    int q = (int)__builtin_rint((xr - rr) / ay) & 127;
    *quo = ((x < 0) != (y < 0)) ? -q : q;
    return r;
}
DUET_INLINE float duet_remquo_float(float x, float y, __private int* quo) {
    // In double, 128*|y| never overflows and every step is exact for float inputs.
    return (float)duet_remquo_core(x, y, quo, true);
}
DUET_INLINE double duet_remquo_double(double x, double y, __private int* quo) {
    return duet_remquo_core(x, y, quo, false);
}

#define DUET_MATH_AS(AS)                                                                       \
    DUET_OUT1(AS, fract, float, float, duet_fract_float)                                       \
    DUET_OUT1(AS, fract, double, double, duet_fract_double)                                    \
    DUET_OUT1(AS, modf, float, float, duet_modf_float)                                         \
    DUET_OUT1(AS, modf, double, double, duet_modf_double)                                      \
    DUET_OUT1(AS, sincos, float, float, duet_sincos_float)                                     \
    DUET_OUT1(AS, sincos, double, double, duet_sincos_double)                                  \
    DUET_OUT1(AS, frexp, float, int, duet_frexp_float)                                         \
    DUET_OUT1(AS, frexp, double, int, duet_frexp_double)                                       \
    DUET_OUT1(AS, lgamma_r, float, int, duet_lgamma_r_float)                                   \
    DUET_OUT1(AS, lgamma_r, double, int, duet_lgamma_r_double)                                 \
    DUET_OUT2(AS, remquo, float, int, duet_remquo_float)                                       \
    DUET_OUT2(AS, remquo, double, int, duet_remquo_double)

#if DUET_GENERIC_PASS
DUET_MATH_AS()
#else
// __private first: the vector forms of every space split through private temporaries.
DUET_MATH_AS(__private)
DUET_MATH_AS(__global)
DUET_MATH_AS(__local)
#endif
