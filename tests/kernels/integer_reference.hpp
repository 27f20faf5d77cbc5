// Host references for the integer builtins, in 128-bit arithmetic.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace duet::test::ref {
namespace { // each test executable includes a reference once

using I128 = __int128;

struct IntType {
    const char* name;
    const char* uname;
    int bits;
    bool isSigned;
    const char* wide; ///< upsample result, or nullptr
};
const IntType kInts[] = {
    {"char", "uchar", 8, true, "short"},  {"uchar", "uchar", 8, false, "ushort"},
    {"short", "ushort", 16, true, "int"}, {"ushort", "ushort", 16, false, "uint"},
    {"int", "uint", 32, true, "long"},    {"uint", "uint", 32, false, "ulong"},
    {"long", "ulong", 64, true, nullptr}, {"ulong", "ulong", 64, false, nullptr},
};

I128 tmin(const IntType& t) {
    return t.isSigned ? -(I128(1) << (t.bits - 1)) : 0;
}
I128 tmax(const IntType& t) {
    return t.isSigned ? (I128(1) << (t.bits - 1)) - 1 : (I128(1) << t.bits) - 1;
}
// Reduce modulo 2^bits into the type's range.
I128 wrap(const IntType& t, I128 v) {
    I128 mod = I128(1) << t.bits;
    v %= mod;
    if (v < 0)
        v += mod;
    if (t.isSigned && v > tmax(t))
        v -= mod;
    return v;
}
I128 sat(const IntType& t, I128 v) {
    return v < tmin(t) ? tmin(t) : (v > tmax(t) ? tmax(t) : v);
}
I128 asUnsigned(const IntType& t, I128 v) {
    return wrap({t.uname, t.uname, t.bits, false, nullptr}, v);
}

// Floor division by 2^k for negative values too.
I128 shr(I128 v, int k) {
    return v >= 0 ? v >> k : -((-v + (I128(1) << k) - 1) >> k);
}

I128 load(const IntType& t, const unsigned char* p) {
    uint64_t raw = 0;
    std::memcpy(&raw, p, t.bits / 8);
    I128 v = raw;
    return wrap(t, v);
}

const char* kFns[] = {"abs",   "abs_diff", "add_sat", "sub_sat",  "hadd",   "rhadd",
                      "clamp", "clz",      "ctz",     "popcount", "mad_hi", "mad_sat",
                      "max",   "min",      "mul_hi",  "rotate",   "mul24",  "mad24"};
constexpr int kNumFns = sizeof(kFns) / sizeof(kFns[0]);

// Reference of function f on (x, y, z); false when not applicable to this type.
bool reference(const IntType& t, int f, I128 x, I128 y, I128 z, I128& r) {
    const int b = t.bits;
    std::string n = kFns[f];
    I128 lo = std::min(y, z), hi = std::max(y, z);
    if (n == "abs")
        r = asUnsigned(t, x < 0 ? -x : x);
    else if (n == "abs_diff")
        r = asUnsigned(t, x > y ? x - y : y - x);
    else if (n == "add_sat")
        r = sat(t, x + y);
    else if (n == "sub_sat")
        r = sat(t, x - y);
    else if (n == "hadd")
        r = shr(x + y, 1);
    else if (n == "rhadd")
        r = shr(x + y + 1, 1);
    else if (n == "clamp")
        r = x < lo ? lo : (x > hi ? hi : x);
    else if (n == "clz" || n == "ctz" || n == "popcount") {
        unsigned __int128 u = (unsigned __int128)asUnsigned(t, x);
        int c = 0;
        if (n == "clz")
            for (int i = b - 1; i >= 0 && !((u >> i) & 1); --i)
                ++c;
        else if (n == "ctz")
            for (int i = 0; i < b && !((u >> i) & 1); ++i)
                ++c;
        else
            for (int i = 0; i < b; ++i)
                c += (u >> i) & 1;
        r = c;
    } else if (n == "mul_hi" || n == "mad_hi") {
        // Exact product needs up to 128 bits: split so nothing overflows.
        I128 p;
        if (b < 64 || t.isSigned)
            p = shr(x * y, b); // exact: |x*y| < 2^126
        else
            p = (I128)(((unsigned __int128)x * (unsigned __int128)y) >> 64);
        r = n == "mul_hi" ? wrap(t, p) : wrap(t, p + z);
    } else if (n == "mad_sat") {
        if (b == 64 && !t.isSigned) {
            unsigned __int128 p = (unsigned __int128)x * (unsigned __int128)y;
            if (p >> 64) {
                r = tmax(t);
                return true;
            }
            r = sat(t, (I128)p + z);
            return true;
        }
        r = sat(t, x * y + z);
    } else if (n == "max")
        r = std::max(x, y);
    else if (n == "min")
        r = std::min(x, y);
    else if (n == "rotate") {
        int k = (int)(asUnsigned(t, y) % b);
        unsigned __int128 u = (unsigned __int128)asUnsigned(t, x);
        unsigned __int128 m = b == 128 ? ~(unsigned __int128)0 : ((unsigned __int128)1 << b) - 1;
        r = wrap(t, (I128)(((u << k) | (k ? u >> (b - k) : 0)) & m));
    } else if (n == "mul24" || n == "mad24") {
        if (b != 32)
            return false;
        r = wrap(t, x * y + (n == "mad24" ? z : 0));
    } else
        return false;
    return true;
}

} // namespace
} // namespace duet::test::ref
