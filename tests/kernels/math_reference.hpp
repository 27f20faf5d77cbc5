// Host references for the math builtins: long double functions, ULP error, input sets.
#pragma once

#include "kernel_harness.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace duet::test::ref {
namespace { // each test executable includes a reference once

using LD = long double;
using Ref1 = LD (*)(LD);
using Ref2 = LD (*)(LD, LD);

constexpr double kAny = -1; // no ULP bound (undefined accuracy)
const LD kPi = 3.141592653589793238462643383279502884L;

// sinpi/cospi/tanpi references: exact reduction in long double, then the libm function.
LD refSinpi(LD x) {
    if (std::isinf(x) || std::isnan(x))
        return NAN;
    LD r = fmodl(fabsl(x), 2.0L);
    bool neg = x < 0;
    if (r >= 1) {
        r -= 1;
        neg = !neg;
    }
    if (r > 0.5L)
        r = 1 - r;
    LD s = sinl(kPi * r);
    if (s == 0)
        return copysignl(0, x);
    return neg ? -s : s;
}
LD refCospi(LD x) {
    if (std::isinf(x) || std::isnan(x))
        return NAN;
    LD r = fmodl(fabsl(x), 2.0L);
    if (r > 1)
        r = 2 - r;
    bool neg = false;
    if (r > 0.5L) {
        r = 1 - r;
        neg = true;
    }
    // Near r = 1/2 cos(pi r) cancels: take sin(pi (1/2 - r)), with 1/2 - r exact.
    LD c = r > 0.25L ? sinl(kPi * (0.5L - r)) : cosl(kPi * r);
    return neg ? -c : c;
}
LD refTanpi(LD x) {
    if (std::isinf(x) || std::isnan(x))
        return NAN;
    LD ax = fabsl(x);
    LD r = fmodl(ax, 1.0L);
    bool odd = fmodl(ax, 2.0L) >= 1;
    if (r == 0)
        return copysignl(0, odd ? -x : x);
    if (r == 0.5L) {
        bool floorOdd = x >= 0 ? odd : !odd;
        return floorOdd ? -INFINITY : INFINITY;
    }
    bool flip = r > 0.5L;
    if (flip)
        r = 1 - r;
    LD t = r > 0.25L ? 1.0L / tanl(kPi * (0.5L - r)) : tanl(kPi * r);
    if (flip)
        t = -t;
    return x < 0 ? -t : t;
}
LD refPowr(LD x, LD y) {
    if (x < 0 || std::isnan(x) || std::isnan(y))
        return NAN;
    if ((x == 0 && y == 0) || (std::isinf(x) && y == 0) || (x == 1 && std::isinf(y)))
        return NAN;
    return powl(fabsl(x), y);
}
LD refMaxmag(LD x, LD y) {
    if (fabsl(x) > fabsl(y))
        return x;
    if (fabsl(y) > fabsl(x))
        return y;
    return fmaxl(x, y);
}
LD refMinmag(LD x, LD y) {
    if (fabsl(x) < fabsl(y))
        return x;
    if (fabsl(y) < fabsl(x))
        return y;
    return fminl(x, y);
}

struct Unary {
    const char* name;
    double ulpFloat;
    double ulpDouble;
    Ref1 ref;
};
struct Binary {
    const char* name;
    double ulpFloat;
    double ulpDouble;
    Ref2 ref;
};

// OpenCL C 3.0, table "ULP values for single/double precision built-in math functions".
const Unary kUnary[] = {
    {"acos", 4, 4, [](LD x) { return acosl(x); }},
    {"acosh", 4, 4, [](LD x) { return acoshl(x); }},
    {"acospi", 5, 5, [](LD x) { return acosl(x) / kPi; }},
    {"asin", 4, 4, [](LD x) { return asinl(x); }},
    {"asinh", 4, 4, [](LD x) { return asinhl(x); }},
    {"asinpi", 5, 5, [](LD x) { return asinl(x) / kPi; }},
    {"atan", 5, 5, [](LD x) { return atanl(x); }},
    {"atanh", 5, 5, [](LD x) { return atanhl(x); }},
    {"atanpi", 5, 5, [](LD x) { return atanl(x) / kPi; }},
    {"cbrt", 2, 2, [](LD x) { return cbrtl(x); }},
    {"ceil", 0, 0, [](LD x) { return ceill(x); }},
    {"cos", 4, 4, [](LD x) { return cosl(x); }},
    {"cosh", 4, 4, [](LD x) { return coshl(x); }},
    {"cospi", 4, 4, refCospi},
    {"erfc", 16, 16, [](LD x) { return erfcl(x); }},
    {"erf", 16, 16, [](LD x) { return erfl(x); }},
    {"exp", 3, 3, [](LD x) { return expl(x); }},
    {"exp2", 3, 3, [](LD x) { return exp2l(x); }},
    {"exp10", 3, 3, [](LD x) { return powl(10.0L, x); }},
    {"expm1", 3, 3, [](LD x) { return expm1l(x); }},
    {"fabs", 0, 0, [](LD x) { return fabsl(x); }},
    {"floor", 0, 0, [](LD x) { return floorl(x); }},
    {"log", 3, 3, [](LD x) { return logl(x); }},
    {"log2", 3, 3, [](LD x) { return log2l(x); }},
    {"log10", 3, 3, [](LD x) { return log10l(x); }},
    {"log1p", 2, 2, [](LD x) { return log1pl(x); }},
    {"logb", 0, 0, [](LD x) { return logbl(x); }},
    {"rint", 0, 0, [](LD x) { return rintl(x); }},
    {"round", 0, 0, [](LD x) { return roundl(x); }},
    {"rsqrt", 2, 2, [](LD x) { return 1.0L / sqrtl(x); }},
    {"sin", 4, 4, [](LD x) { return sinl(x); }},
    {"sinh", 4, 4, [](LD x) { return sinhl(x); }},
    {"sinpi", 4, 4, refSinpi},
    {"sqrt", 3, 0, [](LD x) { return sqrtl(x); }},
    {"tan", 5, 5, [](LD x) { return tanl(x); }},
    {"tanh", 5, 5, [](LD x) { return tanhl(x); }},
    {"tanpi", 6, 6, refTanpi},
    {"tgamma", 16, 16, [](LD x) { return tgammal(x); }},
    {"trunc", 0, 0, [](LD x) { return truncl(x); }},
    // Reduced-precision forms (float only): half_ has 8192 ulp.
    {"half_cos", 8192, kAny, [](LD x) { return cosl(x); }},
    {"half_exp", 8192, kAny, [](LD x) { return expl(x); }},
    {"half_log", 8192, kAny, [](LD x) { return logl(x); }},
    {"half_sqrt", 8192, kAny, [](LD x) { return sqrtl(x); }},
    {"half_recip", 8192, kAny, [](LD x) { return 1.0L / x; }},
};

const Binary kBinary[] = {
    {"atan2", 6, 6, [](LD y, LD x) { return atan2l(y, x); }},
    {"atan2pi", 6, 6, [](LD y, LD x) { return atan2l(y, x) / kPi; }},
    {"copysign", 0, 0, [](LD x, LD y) { return copysignl(x, y); }},
    {"fdim", 0, 0, [](LD x, LD y) { return fdiml(x, y); }},
    {"fmax", 0, 0, [](LD x, LD y) { return fmaxl(x, y); }},
    {"fmin", 0, 0, [](LD x, LD y) { return fminl(x, y); }},
    {"fmod", 0, 0, [](LD x, LD y) { return fmodl(x, y); }},
    {"hypot", 4, 4, [](LD x, LD y) { return hypotl(x, y); }},
    {"maxmag", 0, 0, refMaxmag},
    {"minmag", 0, 0, refMinmag},
    {"pow", 16, 16, [](LD x, LD y) { return powl(x, y); }},
    {"powr", 16, 16, refPowr},
    {"remainder", 0, 0, [](LD x, LD y) { return remainderl(x, y); }},
    {"divide_operator", 2.5, 0, [](LD x, LD y) { return x / y; }},
    {"half_divide", 8192, kAny, [](LD x, LD y) { return x / y; }},
};

// Error of `got` against the exact `ref`, in ulps of T at ref (denormal ulp below the normal
// range). NaN must match NaN; a reference that rounds to infinity must give that infinity.
template <class T> double ulpError(T got, LD ref) {
    constexpr double kBad = 1e30;
    if (std::isnan(ref))
        return std::isnan(got) ? 0 : kBad;
    if (std::isnan(got))
        return kBad;
    if (std::isinf(ref) || std::isinf(got))
        return got == static_cast<T>(ref) ? 0 : kBad;
    constexpr int digits = std::numeric_limits<T>::digits;
    constexpr int minExp = std::numeric_limits<T>::min_exponent;
    int e = minExp;
    if (ref != 0)
        frexpl(ref, &e);
    LD ulp = ldexpl(1.0L, std::max(e, minExp) - digits);
    return static_cast<double>(fabsl(static_cast<LD>(got) - ref) / ulp);
}

template <class T> std::vector<T> specialValues() {
    using L = std::numeric_limits<T>;
    std::vector<T> v = {0,
                        1,
                        2,
                        0.5,
                        3,
                        10,
                        100,
                        0.1,
                        0.999,
                        1.001,
                        1e-3,
                        1e-10,
                        1e10,
                        1e30,
                        (T)3.14159265358979,
                        (T)1.5707963267949,
                        (T)0.25,
                        (T)0.75,
                        (T)1.5,
                        (T)2.5,
                        (T)1e6 + (T)0.5,
                        (T)12345.678,
                        (T)88.5,
                        (T)-88.5,
                        (T)700,
                        L::min(),
                        L::denorm_min(),
                        L::min() - L::denorm_min(),
                        L::max(),
                        L::epsilon(),
                        L::infinity(),
                        (T)1e-40,
                        (T)16777217,
                        (T)4.5e15,
                        (T)1e20,
                        (T)1e37,
                        (T)7e22};
    size_t n = v.size();
    for (size_t i = 0; i < n; ++i)
        v.push_back(-v[i]);
    v.push_back(L::quiet_NaN());
    return v;
}

template <class T> std::vector<T> inputs(size_t count, uint64_t seed) {
    std::vector<T> v = specialValues<T>();
    Rng rng(seed);
    while (v.size() < count) {
        uint64_t r = rng.next();
        T x;
        if (v.size() % 4 == 0) { // uniform in [-8, 8]: the interesting region of most functions
            x = static_cast<T>((static_cast<double>(r >> 11) * 0x1p-53 - 0.5) * 16);
        } else if constexpr (sizeof(T) == 4) {
            uint32_t b = static_cast<uint32_t>(r >> 32);
            std::memcpy(&x, &b, 4);
        } else {
            std::memcpy(&x, &r, 8);
        }
        if (!std::isnan(x))
            v.push_back(x);
    }
    v.resize(count);
    return v;
}

} // namespace
} // namespace duet::test::ref
