// Math builtins that replace libclc's where those break the OpenCL C full-profile limits (§7.4)
// on a GPU device that reports CL_FP_DENORM and correct IEEE special cases: one source for the
// GCN device (amdgcn, libclc's amdgcn--amdhsa.bc) and the NVIDIA device (nvptx64, libclc's
// nvptx64--nvidiacl.bc). Linked ahead of libclc, whose definitions are weak, so these win for
// every width. Found by the kernel suite (tests/kernels/math_test.cpp) on both devices:
// - float exp and exp2 return 0 where the result is a denormal (libclc clamps below
//   ln(FLT_MIN) instead of scaling into the denormal range); on nvptx libclc's half_exp and
//   half_exp2 carry the same code inlined, so they are replaced too;
// - float fmod, remainder and remquo flush denormal operands and results;
// - float erfc is up to 58 ulp off (near 8 on amdgcn, near 2 on nvptx; the limit is 16);
// - tgamma of negative arguments is inf (float, large negative arguments) or wrong (double,
//   everywhere including -0), because libclc computes exp(lgamma(|x|)) and then reflects in
//   float range;
// - double pow and powr get the C99/OpenCL special cases wrong (pow(1, inf) is inf).
// And where libclc is right but slow on a GPU: float sin, cos and sincos reduce every argument
// with an error-free product chain (and sincos runs that reduction twice, once for each
// result); below 105615 a three-step reduction by fma is as exact, and sincos shares it.
// Everything else stays libclc's. Only plain OpenCL C and clang builtins that both targets
// select without a library call (__builtin_ldexpf is v_ldexp_f32 on amdgcn, exact scaling
// multiplications on nvptx; fma, rint) and libclc functions both libraries define.
#include "builtins.h"

// libclc's implementations behind its public names (weak in both libraries).
double DUET_OVL __clc_pow(double, double);
// libclc's float argument reduction by pi/2 (any finite argument: the reduced value, its tail
// and the quadrant) and its kernels on [-pi/4, pi/4] that take the reduced value and tail.
int __clc_argReductionS(__private float* r, __private float* rr, float x);
float __clc_sinf_piby4(float x, float y);
float __clc_cosf_piby4(float x, float y);
// The double overloads called below. Declared by hand: once this file defines a float
// overload of a name, clang's lazily declared builtins no longer join that name's overload
// set, and exp(double) would quietly resolve to exp(float) (or recurse, for erfc and fmod).
double DUET_OVL exp(double);
double DUET_OVL erfc(double);
double DUET_OVL fmod(double, double);
double DUET_OVL remainder(double, double);
double DUET_OVL remquo(double, double, __private int*);

// ---- exp and exp2 (float) ----
// x = k*ln2 + r with |r| <= ln2/2, exp(r) by its Taylor series to r^7 (truncation below 0.1
// ulp there), then one ldexp: it rounds once into the denormal range, and overflows to inf.
DUET_INLINE float expReduced(float r) {
    float p = 0x1.a01a02p-13f; // 1/7!
    p = fma(p, r, 0x1.6c16c2p-10f); // 1/6!
    p = fma(p, r, 0x1.111112p-7f);  // 1/5!
    p = fma(p, r, 0x1.555556p-5f);  // 1/4!
    p = fma(p, r, 0x1.555556p-3f);  // 1/3!
    p = fma(p, r, 0.5f);
    p = fma(p, r, 1.0f);
    return fma(p, r, 1.0f);
}

DUET_CONST float exp(float x) {
    if (isnan(x))
        return x;
    if (x > 0x1.62e430p+6f) // ln(FLT_MAX)
        return INFINITY;
    if (x < -0x1.9fe368p+6f) // ln(2^-150): below half the smallest denormal
        return 0.0f;
    const float ln2Hi = 0x1.62e430p-1f;
    const float ln2Lo = (float)(0x1.62e42fefa39efp-1 - 0x1.62e430p-1);
    float k = rint(x * 0x1.715476p+0f);
    float r = fma(-k, ln2Hi, x); // exact: the difference fits in 24 bits
    r = fma(-k, ln2Lo, r);
    return __builtin_ldexpf(expReduced(r), (int)k);
}

DUET_CONST float exp2(float x) {
    if (isnan(x))
        return x;
    if (x >= 128.0f)
        return INFINITY;
    if (x < -152.0f)
        return 0.0f;
    float k = rint(x);
    float r = (x - k) * 0x1.62e430p-1f; // x - k is exact; the product's rounding costs < 0.5 ulp
    return __builtin_ldexpf(expReduced(r), (int)k);
}

#ifdef __NVPTX__
// libclc's nvptx half_exp and half_exp2 are its flushing exp and exp2, inlined when libclc was
// built (amdgcn's are the hardware exp2, which keeps denormals): the functions above serve.
DUET_CONST float half_exp(float x) { return exp(x); }
DUET_CONST float half_exp2(float x) { return exp2(x); }
#endif

// ---- float functions computed in double ----
// Every float is exact in double, and fmod/remainder/remquo results are exact in float too, so
// libclc's double versions (which keep denormals and pass the double limits) answer exactly.
DUET_CONST float fmod(float x, float y) { return (float)fmod((double)x, (double)y); }
DUET_CONST float remainder(float x, float y) { return (float)remainder((double)x, (double)y); }
DUET_INLINE float remquoFloat(float x, float y, __private int* quo) {
    return (float)remquo((double)x, (double)y, quo);
}
DUET_CONST float erfc(float x) { return (float)erfc((double)x); }

// ---- tgamma ----
// Stirling's series for y >= 10 with the Bernoulli terms to B16 (remainder below 2^-60):
// Gamma(y) = y^(y-1/2) e^-y sqrt(2 pi) e^c(y). Returned as two factors, h = y^(y/2-1/4) and
// the rest, so that reflection can divide by Gamma(y) beyond DBL_MAX (y up to 200).
DUET_INLINE double stirlingCorrection(double y) {
    double z = 1.0 / y, z2 = z * z;
    double c = -3617.0 / 122400.0;
    c = fma(c, z2, 1.0 / 156.0);
    c = fma(c, z2, -691.0 / 360360.0);
    c = fma(c, z2, 1.0 / 1188.0);
    c = fma(c, z2, -1.0 / 1680.0);
    c = fma(c, z2, 1.0 / 1260.0);
    c = fma(c, z2, -1.0 / 360.0);
    c = fma(c, z2, 1.0 / 12.0);
    return c * z;
}

// Gamma(x) = h * rest for 0 < x <= 200, returned as (h, rest). Below 10 the argument is shifted up,
// Gamma(x) = Gamma(x + n) / (x (x+1) ... (x+n-1)); x + i is rounded, so the rounding errors are
// carried separately (two-sum) and folded back to first order: through the digamma function
// for Gamma(x + n), and through each factor for the product.
DUET_INLINE double2 gammaSplit(double x) {
    double y = x, prod = 1.0, err = 0.0, prodErr = 0.0;
    while (y < 10.0) {
        prod *= y;
        prodErr += err / y;
        double s = y + 1.0;
        double bp = s - y, ap = s - bp;
        err += (y - ap) + (1.0 - bp); // y + 1 == s + this, exactly
        y = s;
    }
    double h = __clc_pow(y, 0.5 * y - 0.25); // the exponent is exact for y < 2^51
    double digamma = log(y) - 0.5 / y - 1.0 / (12.0 * y * y);
    double fix = 1.0 + (err * digamma - prodErr);
    double rest = h * exp(-y) * (0x1.40d931ff62705p+1 * exp(stirlingCorrection(y))) * fix / prod;
    return (double2)(h, rest);
}

DUET_CONST double tgamma(double x) {
    if (isnan(x))
        return x;
    if (x == 0.0)
        return copysign((double)INFINITY, x);
    if (x > 0.0) {
        if (x > 171.625)
            return INFINITY;
        double2 g = gammaSplit(x);
        return g.x * g.y;
    }
    if (isinf(x) || rint(x) == x)
        return NAN; // poles, and every double below -2^52 is an integer
    double s = sinpi(x);
    if (x < -200.0)
        return copysign(0.0, s); // below DBL_TRUE_MIN even next to a pole; sign of sin(pi x)
    if (x > -1.0) {
        // Gamma(x) = Gamma(x + 1) / x: x + 1 rounds by at most 2^-54, where digamma is small.
        // (Not a recursive call: recursion makes the AMDGPU backend use a dynamic stack.)
        double2 g = gammaSplit(x + 1.0);
        return g.x * g.y / x;
    }
    // Reflection: Gamma(x) = -pi / (x sin(pi x) Gamma(-x)); the division by h comes last, so
    // only the final result underflows (once, into the denormals).
    double2 g = gammaSplit(-x);
    return ((-M_PI / (x * s)) / g.y) / g.x;
}

DUET_CONST float tgamma(float x) { return (float)tgamma((double)x); }

// ---- sin, cos and sincos (float) ----
// |x| = q*pi/2 + r. Below 105615 (q < 2^16), pi/2 in three parts: the first, 0x1.921fb4p+0,
// ends in zero bits, so |x| - q*part1 is exact (a multiple of 2^-24 below 1); the other two
// fmas round once each; then minimax polynomials on [-pi/4, pi/4] of degree 7 (sin) and 8
// (cos). Every float below 105615, through a host port of this path against long double
// sinl/cosl: at most 1.56 ulp, where section 7.4 allows 4 (tests/kernels/math_test.cpp checks
// the devices themselves). Above, libclc's reduction (Payne-Hanek for the largest) and its
// kernels that take the reduced value's tail, out of line: a kernel that calls sincos in an
// unrolled loop carries one copy of that path, not one per iteration.
DUET_INLINE float sinPiby4(float r) {
    float z = r * r;
    float p = fma(z, -0x1.9943f2p-13f, 0x1.11073cp-7f);
    p = fma(z, p, -0x1.555546p-3f);
    return fma(z * r, p, r);
}

DUET_INLINE float cosPiby4(float r) {
    float z = r * r;
    float p = fma(z, 0x1.99eb9cp-16f, -0x1.6c0c34p-10f);
    p = fma(z, p, 0x1.55554ap-5f);
    return fma(z * z, p, fma(z, -0.5f, 1.0f));
}

/// sin and cos of q*pi/2 + r from the reduced argument's sine and cosine and q & 3.
DUET_INLINE float2 byQuadrant(float s, float c, int quadrant) {
    float sinQ = (quadrant & 1) ? c : s;
    float cosQ = (quadrant & 1) ? s : c;
    sinQ = quadrant > 1 ? -sinQ : sinQ;
    cosQ = (quadrant == 1 || quadrant == 2) ? -cosQ : cosQ;
    return (float2)(sinQ, cosQ);
}

__attribute__((noinline)) static float2 sinCosLarge(float ax) {
    float r, rr;
    int quadrant = __clc_argReductionS(&r, &rr, ax);
    return byQuadrant(__clc_sinf_piby4(r, rr), __clc_cosf_piby4(r, rr), quadrant);
}

// Below 105615 the reduction runs on x itself, sign and all: rint, the fmas and the odd
// polynomial are symmetric, and q & 3 of a negative q is the quadrant of x, so the results are
// those of |x| with the sine's sign set, bit for bit (checked for every float in range), with
// no sign fix-up and no NaN test on the common path: NaN and infinities fail the comparison and
// take the large path. The one exception is -0, whose reduction gives +0.
DUET_INLINE float sinCosCore(float x, __private float* cosOut) {
    if (fabs(x) < 105615.0f) {
        float q = rint(x * 0x1.45f306p-1f); // 2/pi
        float r = fma(q, -0x1.921fb4p+0f, x);
        r = fma(q, -0x1.4442d2p-24f, r);
        r = fma(q, 0x1.ee59dap-50f, r); // the third part is negative
        float2 sc = byQuadrant(sinPiby4(r), cosPiby4(r), (int)q & 3);
        *cosOut = sc.y;
        return x == 0.0f ? x : sc.x;
    }
    float2 sc = sinCosLarge(fabs(x));
    bool finite = isfinite(x);
    *cosOut = finite ? sc.y : NAN;
    return finite ? copysign(1.0f, x) * sc.x : NAN;
}

DUET_CONST float sin(float x) {
    float c;
    return sinCosCore(x, &c);
}

DUET_CONST float cos(float x) {
    float c;
    sinCosCore(x, &c);
    return c;
}

// ---- pow and powr (double): the special cases of §7.5.1 / C99 F.9.4.4 first ----
DUET_INLINE bool isOddInteger(double y) {
    return fabs(y) < 0x1p53 && rint(y) == y && fmod(fabs(y), 2.0) == 1.0;
}

DUET_CONST double pow(double x, double y) {
    if (y == 0.0 || x == 1.0)
        return 1.0;
    if (isnan(x) || isnan(y))
        return x + y;
    double ax = fabs(x);
    if (isinf(y)) {
        if (ax == 1.0)
            return 1.0;
        return (ax < 1.0) == (y < 0.0) ? INFINITY : 0.0;
    }
    bool odd = isOddInteger(y);
    if (x == 0.0) {
        if (y < 0.0)
            return odd ? copysign((double)INFINITY, x) : INFINITY;
        return odd ? x : 0.0;
    }
    if (isinf(x)) {
        double r = y < 0.0 ? 0.0 : INFINITY;
        return x < 0.0 && odd ? -r : r;
    }
    if (x < 0.0 && rint(y) != y)
        return NAN;
    return __clc_pow(x, y);
}

DUET_CONST double powr(double x, double y) {
    if (isnan(x) || isnan(y) || x < 0.0)
        return NAN;
    if (x == 0.0) {
        if (y == 0.0)
            return NAN;
        return y < 0.0 ? INFINITY : 0.0;
    }
    if (isinf(x)) {
        if (y == 0.0)
            return NAN;
        return y < 0.0 ? 0.0 : INFINITY;
    }
    if (x == 1.0)
        return isinf(y) ? NAN : 1.0;
    if (y == 0.0)
        return 1.0;
    if (isinf(y))
        return (x < 1.0) == (y < 0.0) ? INFINITY : 0.0;
    return __clc_pow(x, y);
}

DUET_VEC_1(DUET_CONST, float, exp, float)
DUET_VEC_1(DUET_CONST, float, exp2, float)
#ifdef __NVPTX__
DUET_VEC_1(DUET_CONST, float, half_exp, float)
DUET_VEC_1(DUET_CONST, float, half_exp2, float)
#endif
DUET_VEC_1(DUET_CONST, float, erfc, float)
DUET_VEC_1(DUET_CONST, float, tgamma, float)
DUET_VEC_1(DUET_CONST, float, sin, float)
DUET_VEC_1(DUET_CONST, float, cos, float)
DUET_VEC_1(DUET_CONST, double, tgamma, double)
DUET_VEC_2VV(DUET_CONST, float, fmod, float, float)
DUET_VEC_2VV(DUET_CONST, float, remainder, float, float)
DUET_VEC_2VV(DUET_CONST, double, pow, double, double)
DUET_VEC_2VV(DUET_CONST, double, powr, double, double)
#ifdef __NVPTX__
// ldexp: libclc's nvptx float ldexp flushes denormal operands and results, and its double one
// loses NaN; LLVM's ldexp intrinsic (integer exponent arithmetic on NVPTX) is exact.
DUET_CONST float ldexp(float x, int n) {
    return __builtin_ldexpf(x, n);
}
DUET_CONST double ldexp(double x, int n) {
    return __builtin_ldexp(x, n);
}
DUET_VEC_2VV(DUET_CONST, float, ldexp, float, int)
DUET_VEC_2VS(DUET_CONST, float, ldexp, float, int)
DUET_VEC_2VV(DUET_CONST, double, ldexp, double, int)
DUET_VEC_2VS(DUET_CONST, double, ldexp, double, int)
#endif
DUET_OUT1(__private, sincos, float, float, sinCosCore)
DUET_OUT1(__global, sincos, float, float, sinCosCore)
DUET_OUT1(__local, sincos, float, float, sinCosCore)
DUET_OUT2(__private, remquo, float, int, remquoFloat)
DUET_OUT2(__global, remquo, float, int, remquoFloat)
DUET_OUT2(__local, remquo, float, int, remquoFloat)
