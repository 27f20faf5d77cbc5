// Math builtins (OpenCL C 3.0 §6.15.2) without pointer arguments, float and double, all widths.
// Hard functions map onto LLVM intrinsics or glibc libm (the JIT resolves libm/libmvec);
// functions libm lacks (the *pi family, rootn, pown, powr, rsqrt, ...) are built here from
// libm pieces with enough care to stay inside the full-profile ULP limits.
#include "builtins.h"

// libm functions with no clang builtin spelling that reaches them under OpenCL C.
float duet_lgammaf_r(float, __private int*) __asm__("lgammaf_r");
double duet_lgamma_r(double, __private int*) __asm__("lgamma_r");

// Scalar float and double from libm, plus every vector width.
#define DUET_LIBM_1(NAME)                                                                      \
    DUET_CONST float NAME(float x) { return __builtin_##NAME##f(x); }                          \
    DUET_CONST double NAME(double x) { return __builtin_##NAME(x); }                           \
    DUET_VEC_1(DUET_CONST, float, NAME, float)                                                 \
    DUET_VEC_1(DUET_CONST, double, NAME, double)

#define DUET_LIBM_2(NAME)                                                                      \
    DUET_CONST float NAME(float x, float y) { return __builtin_##NAME##f(x, y); }              \
    DUET_CONST double NAME(double x, double y) { return __builtin_##NAME(x, y); }              \
    DUET_VEC_2VV(DUET_CONST, float, NAME, float, float)                                        \
    DUET_VEC_2VV(DUET_CONST, double, NAME, double, double)

DUET_LIBM_1(acos)
DUET_LIBM_1(acosh)
DUET_LIBM_1(asin)
DUET_LIBM_1(asinh)
DUET_LIBM_1(atan)
DUET_LIBM_1(atanh)
DUET_LIBM_1(cos)
DUET_LIBM_1(cosh)
DUET_LIBM_1(erf)
DUET_LIBM_1(erfc)
DUET_LIBM_1(exp)
DUET_LIBM_1(exp2)
DUET_LIBM_1(exp10)
DUET_LIBM_1(expm1)
DUET_LIBM_1(log)
DUET_LIBM_1(log2)
DUET_LIBM_1(log10)
DUET_LIBM_1(log1p)
DUET_LIBM_1(logb)
DUET_LIBM_1(sin)
DUET_LIBM_1(sinh)
DUET_LIBM_1(tan)
DUET_LIBM_1(tanh)
DUET_LIBM_1(tgamma)
DUET_LIBM_1(ceil)
DUET_LIBM_1(floor)
DUET_LIBM_1(trunc)
DUET_LIBM_1(round)
DUET_LIBM_1(rint)
DUET_LIBM_1(sqrt)
DUET_LIBM_1(fabs)

// cbrt: glibc's double cbrt is off by up to 4 ulp (the spec allows 2); one Newton step with
// y^3 formed exactly (fma) brings it under 1. Far from 1 the value is first scaled by 2^(3k).
DUET_CONST float cbrt(float x) { return __builtin_cbrtf(x); }
DUET_CONST double cbrt(double x) {
    double ax = __builtin_fabs(x);
    if (ax == 0.0 || __builtin_isinf(ax) || x != x)
        return __builtin_cbrt(x);
    int k = ax < 0x1p-900 ? 100 : (ax > 0x1p900 ? -100 : 0); // scale by 2^(3k)
    double xs = __builtin_ldexp(x, 3 * k);
    double y = __builtin_cbrt(xs);
    double y2 = y * y, y2lo = __builtin_fma(y, y, -y2);
    double y3 = y2 * y, y3lo = __builtin_fma(y2, y, -y3) + y2lo * y;
    double d = (y3 - xs) + y3lo; // y^3 - x, nearly exact (y3 and xs are close)
    y = y - d / (3.0 * y2);
    return __builtin_ldexp(y, -k);
}
DUET_VEC_1(DUET_CONST, float, cbrt, float)
DUET_VEC_1(DUET_CONST, double, cbrt, double)

DUET_LIBM_2(atan2)
DUET_LIBM_2(copysign)
DUET_LIBM_2(fmod)
DUET_LIBM_2(hypot)
DUET_LIBM_2(pow)
DUET_LIBM_2(remainder)
DUET_LIBM_2(nextafter)

// fmax/fmin: llvm.maxnum/minnum return the other operand for one NaN, as the spec asks.
DUET_CONST float fmax(float x, float y) { return __builtin_fmaxf(x, y); }
DUET_CONST double fmax(double x, double y) { return __builtin_fmax(x, y); }
DUET_CONST float fmin(float x, float y) { return __builtin_fminf(x, y); }
DUET_CONST double fmin(double x, double y) { return __builtin_fmin(x, y); }
DUET_VEC_2VV(DUET_CONST, float, fmax, float, float)
DUET_VEC_2VV(DUET_CONST, double, fmax, double, double)
DUET_VEC_2VV(DUET_CONST, float, fmin, float, float)
DUET_VEC_2VV(DUET_CONST, double, fmin, double, double)
DUET_VEC_2VS(DUET_CONST, float, fmax, float, float)
DUET_VEC_2VS(DUET_CONST, double, fmax, double, double)
DUET_VEC_2VS(DUET_CONST, float, fmin, float, float)
DUET_VEC_2VS(DUET_CONST, double, fmin, double, double)

DUET_CONST float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
DUET_CONST double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
DUET_VEC_3VVV(DUET_CONST, float, fma, float, float, float)
DUET_VEC_3VVV(DUET_CONST, double, fma, double, double, double)

// mad may trade accuracy for speed; a separate multiply and add is fast everywhere.
DUET_CONST float mad(float a, float b, float c) { return a * b + c; }
DUET_CONST double mad(double a, double b, double c) { return a * b + c; }
DUET_VEC_3VVV(DUET_CONST, float, mad, float, float, float)
DUET_VEC_3VVV(DUET_CONST, double, mad, double, double, double)

#define DUET_FLOAT_GENERIC(T, ABS)                                                             \
    DUET_CONST T fdim(T x, T y) {                                                              \
        if (x > y)                                                                             \
            return x - y;                                                                      \
        return (x != x || y != y) ? x + y : (T)0;                                              \
    }                                                                                          \
    DUET_CONST T maxmag(T x, T y) {                                                            \
        T ax = ABS(x), ay = ABS(y);                                                            \
        return ax > ay ? x : (ay > ax ? y : fmax(x, y));                                       \
    }                                                                                          \
    DUET_CONST T minmag(T x, T y) {                                                            \
        T ax = ABS(x), ay = ABS(y);                                                            \
        return ax < ay ? x : (ay < ax ? y : fmin(x, y));                                       \
    }                                                                                          \
    DUET_VEC_2VV(DUET_CONST, T, fdim, T, T)                                                    \
    DUET_VEC_2VV(DUET_CONST, T, maxmag, T, T)                                                  \
    DUET_VEC_2VV(DUET_CONST, T, minmag, T, T)
DUET_FLOAT_GENERIC(float, __builtin_fabsf)
DUET_FLOAT_GENERIC(double, __builtin_fabs)

// ---- ilogb, ldexp, nan, lgamma ----
// ilogb by frexp: handles denormals; OpenCL's FP_ILOGB0 is INT_MIN and FP_ILOGBNAN INT_MAX
// (glibc on x86 uses INT_MIN for both, so libm's ilogb cannot be used directly).
DUET_CONST int ilogb(float x) {
    if (x != x)
        return FP_ILOGBNAN;
    if (x == 0.0f)
        return FP_ILOGB0;
    if (__builtin_isinf(x))
        return INT_MAX;
    int e;
    __builtin_frexpf(x, &e);
    return e - 1;
}
DUET_CONST int ilogb(double x) {
    if (x != x)
        return FP_ILOGBNAN;
    if (x == 0.0)
        return FP_ILOGB0;
    if (__builtin_isinf(x))
        return INT_MAX;
    int e;
    __builtin_frexp(x, &e);
    return e - 1;
}
DUET_VEC_1(DUET_CONST, int, ilogb, float)
DUET_VEC_1(DUET_CONST, int, ilogb, double)

DUET_CONST float ldexp(float x, int n) { return __builtin_ldexpf(x, n); }
DUET_CONST double ldexp(double x, int n) { return __builtin_ldexp(x, n); }
DUET_VEC_2VV(DUET_CONST, float, ldexp, float, int)
DUET_VEC_2VV(DUET_CONST, double, ldexp, double, int)
DUET_VEC_2VS(DUET_CONST, float, ldexp, float, int)
DUET_VEC_2VS(DUET_CONST, double, ldexp, double, int)

DUET_CONST float nan(uint code) { return DUET_AS(float, 0x7fc00000u | (code & 0x003fffffu)); }
DUET_CONST double nan(ulong code) {
    return DUET_AS(double, 0x7ff8000000000000ul | (code & 0x0007fffffffffffful));
}
DUET_VEC_1(DUET_CONST, float, nan, uint)
DUET_VEC_1(DUET_CONST, double, nan, ulong)

DUET_CONST float lgamma(float x) {
    int sign;
    return duet_lgammaf_r(x, &sign);
}
DUET_CONST double lgamma(double x) {
    int sign;
    return duet_lgamma_r(x, &sign);
}
DUET_VEC_1(DUET_CONST, float, lgamma, float)
DUET_VEC_1(DUET_CONST, double, lgamma, double)

// ---- the *pi family ----
// pi as a double-double: pi*r is formed to ~2^-100 relative, so only the final libm call
// rounds. Arguments are first reduced exactly (fmod by 2, reflections by Sterbenz-exact
// subtractions) to |r| <= 1/4, where sin, cos and tan are well conditioned.
#define DUET_PI_HI 0x1.921fb54442d18p+1
#define DUET_PI_LO 0x1.1a62633145c07p-53

// Returns hi and stores lo such that hi + lo ~= pi * r.
DUET_INLINE double duet_pi_mul(double r, __private double* lo) {
    double hi = DUET_PI_HI * r;
    *lo = __builtin_fma(DUET_PI_HI, r, -hi) + DUET_PI_LO * r;
    return hi;
}
// sin(pi r), cos(pi r), tan(pi r) for |r| <= 1/4, first-order corrected for the low part.
DUET_INLINE double duet_sinpi_kernel(double r) {
    double lo, hi = duet_pi_mul(r, &lo);
    return __builtin_sin(hi) + lo * __builtin_cos(hi);
}
DUET_INLINE double duet_cospi_kernel(double r) {
    double lo, hi = duet_pi_mul(r, &lo);
    return __builtin_cos(hi) - lo * __builtin_sin(hi);
}
DUET_INLINE double duet_tanpi_kernel(double r) {
    double lo, hi = duet_pi_mul(r, &lo);
    double t = __builtin_tan(hi);
    return t + lo * (1.0 + t * t);
}

DUET_INLINE double duet_sinpi(double x) {
    if (__builtin_isinf(x) || x != x)
        return x - x;
    double r = __builtin_fmod(__builtin_fabs(x), 2.0);
    bool neg = x < 0;
    if (r >= 1.0) {
        r -= 1.0;
        neg = !neg;
    }
    if (r > 0.5)
        r = 1.0 - r;
    double s = r <= 0.25 ? duet_sinpi_kernel(r) : duet_cospi_kernel(0.5 - r);
    if (s == 0.0)
        return __builtin_copysign(0.0, x);
    return neg ? -s : s;
}
DUET_INLINE double duet_cospi(double x) {
    if (__builtin_isinf(x) || x != x)
        return x - x;
    double r = __builtin_fmod(__builtin_fabs(x), 2.0);
    if (r > 1.0)
        r = 2.0 - r;
    bool neg = false;
    if (r > 0.5) {
        r = 1.0 - r;
        neg = true;
    }
    double c = r <= 0.25 ? duet_cospi_kernel(r) : duet_sinpi_kernel(0.5 - r);
    if (c == 0.0)
        return 0.0;
    return neg ? -c : c;
}
DUET_INLINE double duet_tanpi(double x) {
    if (__builtin_isinf(x) || x != x)
        return x - x;
    double ax = __builtin_fabs(x);
    double r = __builtin_fmod(ax, 1.0);
    bool odd = __builtin_fmod(ax, 2.0) >= 1.0; // parity of trunc(|x|)
    if (r == 0.0)
        return __builtin_copysign(0.0, odd ? -x : x);
    if (r == 0.5) {
        // tanpi(n + 1/2) is +inf for even n, -inf for odd n (n = floor(x)).
        bool floorOdd = x >= 0 ? odd : !odd;
        return floorOdd ? -INFINITY : INFINITY;
    }
    bool flip = false;
    if (r > 0.5) {
        r = 1.0 - r;
        flip = true;
    }
    double t = r <= 0.25 ? duet_tanpi_kernel(r) : 1.0 / duet_tanpi_kernel(0.5 - r);
    if (flip)
        t = -t;
    return x < 0 ? -t : t;
}

DUET_CONST float sinpi(float x) { return (float)duet_sinpi(x); }
DUET_CONST double sinpi(double x) { return duet_sinpi(x); }
DUET_CONST float cospi(float x) { return (float)duet_cospi(x); }
DUET_CONST double cospi(double x) { return duet_cospi(x); }
DUET_CONST float tanpi(float x) { return (float)duet_tanpi(x); }
DUET_CONST double tanpi(double x) { return duet_tanpi(x); }
DUET_VEC_1(DUET_CONST, float, sinpi, float)
DUET_VEC_1(DUET_CONST, double, sinpi, double)
DUET_VEC_1(DUET_CONST, float, cospi, float)
DUET_VEC_1(DUET_CONST, double, cospi, double)
DUET_VEC_1(DUET_CONST, float, tanpi, float)
DUET_VEC_1(DUET_CONST, double, tanpi, double)

// Inverse *pi: float goes through double (one final rounding); double multiplies by 1/pi,
// a few ulp at most against the spec's 5 (6 for atan2pi).
#define DUET_M_1_PI 0x1.45f306dc9c883p-2
DUET_CONST float acospi(float x) { return (float)(__builtin_acos((double)x) * DUET_M_1_PI); }
DUET_CONST double acospi(double x) { return __builtin_acos(x) * DUET_M_1_PI; }
DUET_CONST float asinpi(float x) { return (float)(__builtin_asin((double)x) * DUET_M_1_PI); }
DUET_CONST double asinpi(double x) { return __builtin_asin(x) * DUET_M_1_PI; }
DUET_CONST float atanpi(float x) { return (float)(__builtin_atan((double)x) * DUET_M_1_PI); }
DUET_CONST double atanpi(double x) { return __builtin_atan(x) * DUET_M_1_PI; }
DUET_CONST float atan2pi(float y, float x) {
    return (float)(__builtin_atan2((double)y, (double)x) * DUET_M_1_PI);
}
DUET_CONST double atan2pi(double y, double x) { return __builtin_atan2(y, x) * DUET_M_1_PI; }
DUET_VEC_1(DUET_CONST, float, acospi, float)
DUET_VEC_1(DUET_CONST, double, acospi, double)
DUET_VEC_1(DUET_CONST, float, asinpi, float)
DUET_VEC_1(DUET_CONST, double, asinpi, double)
DUET_VEC_1(DUET_CONST, float, atanpi, float)
DUET_VEC_1(DUET_CONST, double, atanpi, double)
DUET_VEC_2VV(DUET_CONST, float, atan2pi, float, float)
DUET_VEC_2VV(DUET_CONST, double, atan2pi, double, double)

// ---- powers and roots ----
// pown(x, n) is C99 pow with an integer exponent (exact in double), special cases included.
DUET_CONST float pown(float x, int n) { return (float)__builtin_pow((double)x, (double)n); }
DUET_CONST double pown(double x, int n) { return __builtin_pow(x, (double)n); }
DUET_VEC_2VV(DUET_CONST, float, pown, float, int)
DUET_VEC_2VV(DUET_CONST, double, pown, double, int)

// powr: pow restricted to x >= 0, with the spec's own NaN cases.
#define DUET_POWR(T, POW, FABS)                                                                \
    DUET_CONST T powr(T x, T y) {                                                              \
        if (x < 0 || x != x || y != y)                                                         \
            return (T)NAN;                                                                     \
        if ((x == 0 && y == 0) || (__builtin_isinf(x) && y == 0) ||                           \
            (x == 1 && __builtin_isinf(y)))                                                    \
            return (T)NAN;                                                                     \
        return POW(FABS(x), y);                                                                \
    }                                                                                          \
    DUET_VEC_2VV(DUET_CONST, T, powr, T, T)
DUET_POWR(float, __builtin_powf, __builtin_fabsf)
DUET_POWR(double, __builtin_pow, __builtin_fabs)

// rootn: special cases by hand; the magnitude from pow(|x|, 1/n). For double, 1/n is rounded,
// which costs up to |log x| ulp, so one Newton step on y^n = |x| restores the last bits.
DUET_INLINE double duet_rootn(double x, int n, bool refine) {
    if (n == 0 || x != x)
        return NAN;
    bool odd = (n & 1) != 0;
    if (x < 0 && !odd)
        return NAN;
    if (x == 0) {
        if (n > 0)
            return odd ? x : 0.0;
        return odd ? __builtin_copysign(INFINITY, x) : INFINITY;
    }
    double ax = __builtin_fabs(x);
    if (__builtin_isinf(ax)) {
        double m = n > 0 ? INFINITY : 0.0;
        return x < 0 ? -m : m;
    }
    // Tiny or huge x: scale by 2^(+-|n| k) so y^n stays normal and finite in the
    // refinement; the root scales by 2^(+-k). Large |n| needs no refinement (the error of
    // 1/n shrinks with n).
    int k = 0;
    int an = n < 0 ? -n : n;
    if (refine && (ax < 0x1p-960 || ax > 0x1p960) && an <= 1000) {
        k = (64 + an - 1) / an;
        if (ax > 1.0)
            k = -k;
        ax = __builtin_ldexp(ax, an * k);
    }
    double y = __builtin_pow(ax, 1.0 / (double)n);
    if (refine && y != 0 && !__builtin_isinf(y)) {
        double yn = __builtin_pow(y, (double)n);
        if (yn != 0 && !__builtin_isinf(yn) && __builtin_fabs(yn) >= 0x1p-1022) {
            double q = ax / yn;
            y = y + y * ((q - 1.0) / (double)n);
        }
    }
    if (k != 0)
        y = __builtin_ldexp(y, n > 0 ? -k : k);
    return x < 0 ? -y : y;
}
DUET_CONST float rootn(float x, int n) { return (float)duet_rootn(x, n, false); }
DUET_CONST double rootn(double x, int n) { return duet_rootn(x, n, true); }
DUET_VEC_2VV(DUET_CONST, float, rootn, float, int)
DUET_VEC_2VV(DUET_CONST, double, rootn, double, int)

// Single precision throughout (a widening to double cost the N-body kernel's inner loop a third
// of its speed): correctly rounded sqrt and division, at most 1.49 ulp (exhaustively checked
// against long double; the limit is 2). Both carry `arcp`, the library's only such pair: the
// CPU JIT rewrites it into AVX-512's estimate and a Newton step on Intel's AVX-512 cores (at most
// 1.04 ulp; devices/cpu/jit/rsqrt_estimates.hpp), and into the plain division elsewhere.
DUET_CONST float rsqrt(float x) {
#pragma clang fp reciprocal(on)
    return 1.0f / __builtin_sqrtf(x);
}
DUET_CONST double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
DUET_VEC_1(DUET_CONST, float, rsqrt, float)
DUET_VEC_1(DUET_CONST, double, rsqrt, double)

// ---- half_* and native_*: the full-precision functions satisfy both contracts ----
#define DUET_ALIAS_1(NAME, TARGET)                                                             \
    DUET_CONST float NAME(float x) { return TARGET(x); }                                       \
    DUET_VEC_1(DUET_CONST, float, NAME, float)
#define DUET_ALIAS_2(NAME, TARGET)                                                             \
    DUET_CONST float NAME(float x, float y) { return TARGET(x, y); }                           \
    DUET_VEC_2VV(DUET_CONST, float, NAME, float, float)

DUET_CONST float duet_divide(float x, float y) { return x / y; }
DUET_CONST float duet_recip(float x) { return 1.0f / x; }

#define DUET_REDUCED(P)                                                                        \
    DUET_ALIAS_1(P##cos, cos)                                                                  \
    DUET_ALIAS_2(P##divide, duet_divide)                                                       \
    DUET_ALIAS_1(P##exp, exp)                                                                  \
    DUET_ALIAS_1(P##exp2, exp2)                                                                \
    DUET_ALIAS_1(P##exp10, exp10)                                                              \
    DUET_ALIAS_1(P##log, log)                                                                  \
    DUET_ALIAS_1(P##log2, log2)                                                                \
    DUET_ALIAS_1(P##log10, log10)                                                              \
    DUET_ALIAS_2(P##powr, powr)                                                                \
    DUET_ALIAS_1(P##recip, duet_recip)                                                         \
    DUET_ALIAS_1(P##rsqrt, rsqrt)                                                              \
    DUET_ALIAS_1(P##sin, sin)                                                                  \
    DUET_ALIAS_1(P##sqrt, sqrt)                                                                \
    DUET_ALIAS_1(P##tan, tan)
DUET_REDUCED(half_)
DUET_REDUCED(native_)
