// Host references for half conversions (exact, by search over every half) and relational inputs.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace duet::test::ref {
namespace { // each test executable includes a reference once

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

std::vector<float> relValues() {
    return {0.0f,  -0.0f, 1.0f,    -1.0f,       2.5f,    kInf,
            -kInf, kNan,  FLT_MIN, FLT_MIN / 4, FLT_MAX, -FLT_MIN / 2};
}

// Exact value of a half bit pattern.
double halfValue(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0    ? std::ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : std::ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

// Correctly rounded half of x for mode 0 rte, 1 rtz, 2 rtp, 3 rtn, by search over the
// finite halves (0x7c00, infinity, counts as the value 2^16 for rounding).
uint16_t toHalf(long double x, int mode) {
    if (std::isnan(x))
        return 0x7e00;
    uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    long double a = fabsl(x);
    if (std::isinf(a))
        return sign | 0x7c00;
    uint16_t lo = 0, hi = 0x7bff;
    if (a >= halfValue(0x7bff)) {
        lo = 0x7bff;
    } else {
        while (lo < hi) { // largest h with value <= a
            uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
            if (halfValue(mid) <= a)
                lo = mid;
            else
                hi = static_cast<uint16_t>(mid - 1);
        }
    }
    long double below = halfValue(lo);
    long double above = lo == 0x7bff ? 65536.0L : halfValue(static_cast<uint16_t>(lo + 1));
    uint16_t up = static_cast<uint16_t>(lo + 1);
    if (a == below)
        return sign | lo;
    bool neg = sign != 0;
    switch (mode) {
    case 0: {
        long double dl = a - below, du = above - a;
        if (dl < du || (dl == du && (lo & 1) == 0))
            return sign | lo;
        return sign | up;
    }
    case 1:
        return sign | lo;
    case 2:
        return sign | (neg ? lo : up);
    default:
        return sign | (neg ? up : lo);
    }
}

} // namespace
} // namespace duet::test::ref
