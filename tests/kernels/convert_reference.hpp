// Host references for the conversion builtins: exact expected bytes of every convert_*.
#pragma once

#include "kernel_harness.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace duet::test::ref {
namespace { // each test executable includes a reference once

using LD = long double;

enum class Kind { Int, Float };
struct TypeInfo {
    const char* name;
    Kind kind;
    int bytes;
    bool isSigned;
};
const TypeInfo kTypes[] = {
    {"char", Kind::Int, 1, true},    {"uchar", Kind::Int, 1, false},
    {"short", Kind::Int, 2, true},   {"ushort", Kind::Int, 2, false},
    {"int", Kind::Int, 4, true},     {"uint", Kind::Int, 4, false},
    {"long", Kind::Int, 8, true},    {"ulong", Kind::Int, 8, false},
    {"float", Kind::Float, 4, true}, {"double", Kind::Float, 8, true},
};
const char* kModes[] = {"", "_rte", "_rtz", "_rtp", "_rtn"};

LD intMin(const TypeInfo& t) {
    return t.isSigned ? -ldexpl(1, t.bytes * 8 - 1) : 0;
}
LD intMax(const TypeInfo& t) {
    return t.isSigned ? ldexpl(1, t.bytes * 8 - 1) - 1 : ldexpl(1, t.bytes * 8) - 1;
}

// Raw value <-> long double.
LD load(const TypeInfo& t, const unsigned char* p) {
    switch (t.bytes * 2 + (t.kind == Kind::Float ? 100 : 0) + (t.isSigned ? 1 : 0)) {
    case 3:
        return *reinterpret_cast<const int8_t*>(p);
    case 2:
        return *reinterpret_cast<const uint8_t*>(p);
    case 5:
        return *reinterpret_cast<const int16_t*>(p);
    case 4:
        return *reinterpret_cast<const uint16_t*>(p);
    case 9:
        return *reinterpret_cast<const int32_t*>(p);
    case 8:
        return *reinterpret_cast<const uint32_t*>(p);
    case 17:
        return *reinterpret_cast<const int64_t*>(p);
    case 16:
        return *reinterpret_cast<const uint64_t*>(p);
    case 109:
        return *reinterpret_cast<const float*>(p);
    case 117:
        return *reinterpret_cast<const double*>(p);
    }
    return NAN;
}
void store(const TypeInfo& t, LD v, unsigned char* p) {
    switch (t.bytes * 2 + (t.kind == Kind::Float ? 100 : 0) + (t.isSigned ? 1 : 0)) {
    case 3:
        *reinterpret_cast<int8_t*>(p) = (int8_t)v;
        break;
    case 2:
        *reinterpret_cast<uint8_t*>(p) = (uint8_t)v;
        break;
    case 5:
        *reinterpret_cast<int16_t*>(p) = (int16_t)v;
        break;
    case 4:
        *reinterpret_cast<uint16_t*>(p) = (uint16_t)v;
        break;
    case 9:
        *reinterpret_cast<int32_t*>(p) = (int32_t)v;
        break;
    case 8:
        *reinterpret_cast<uint32_t*>(p) = (uint32_t)v;
        break;
    case 17:
        *reinterpret_cast<int64_t*>(p) = (int64_t)v;
        break;
    case 16:
        *reinterpret_cast<uint64_t*>(p) = (uint64_t)v;
        break;
    case 109:
        *reinterpret_cast<float*>(p) = (float)v;
        break;
    case 117:
        *reinterpret_cast<double*>(p) = (double)v;
        break;
    }
}

// Directed rounding of an exact value to float or double: round to nearest, then step one
// ulp if the result lies on the wrong side.
template <class T> T roundTo(LD v, int mode) {
    if (std::isnan(v))
        return std::numeric_limits<T>::quiet_NaN();
    T r = static_cast<T>(v);
    LD back = r;
    if (mode == 2) // rtz
        mode = v < 0 ? 3 : 4;
    if (mode == 3 && back < v)
        r = std::nextafter(r, std::numeric_limits<T>::infinity());
    if (mode == 4 && back > v)
        r = std::nextafter(r, -std::numeric_limits<T>::infinity());
    return r;
}

LD roundInt(LD v, int mode, bool fromFloat) {
    if (!fromFloat)
        return v;
    switch (mode) {
    case 1: { // ties to even
        LD f = floorl(v), d = v - f;
        if (d > 0.5L || (d == 0.5L && fmodl(f, 2) != 0))
            f += 1;
        return f;
    }
    case 3:
        return ceill(v);
    case 4:
        return floorl(v);
    default:
        return truncl(v); // default and rtz
    }
}

// Expected bytes of convert_<dst><sat><mode>(v); false when the result is undefined.
bool expected(const TypeInfo& dst, const TypeInfo& src, bool sat, int mode, LD v,
              unsigned char* out) {
    if (dst.kind == Kind::Float) {
        int m = mode == 0 ? 1 : mode;
        if (dst.bytes == 4) {
            float f = roundTo<float>(v, m);
            std::memcpy(out, &f, 4);
        } else {
            double d = roundTo<double>(v, m);
            std::memcpy(out, &d, 8);
        }
        return true;
    }
    bool fromFloat = src.kind == Kind::Float;
    if (std::isnan(v)) {
        if (!sat)
            return false;
        store(dst, 0, out);
        return true;
    }
    LD r = roundInt(v, mode, fromFloat);
    LD lo = intMin(dst), hi = intMax(dst);
    if (r < lo || r > hi) {
        if (sat) {
            store(dst, r < lo ? lo : hi, out);
            return true;
        }
        if (fromFloat || dst.isSigned)
            return false; // undefined (float) or implementation-defined (signed)
        // Unsigned destination from an integer: modulo 2^bits.
        LD mod = ldexpl(1, dst.bytes * 8);
        LD w = fmodl(r, mod);
        if (w < 0)
            w += mod;
        store(dst, w, out);
        return true;
    }
    store(dst, r, out);
    return true;
}

// Interesting source values, stored in the source type when representable.
std::vector<LD> candidateValues() {
    std::vector<LD> v = {0,
                         1,
                         2,
                         3,
                         0.5L,
                         1.5L,
                         2.5L,
                         0.49999997L,
                         0.75L,
                         126.5L,
                         127.5L,
                         128.5L,
                         255.5L,
                         256.5L,
                         32767.5L,
                         65535.5L,
                         2147483647.5L,
                         4294967295.5L,
                         1e10L,
                         1e19L,
                         1e30L,
                         1e300L,
                         0x1p-140L,
                         0x1p-1070L,
                         0x1.fffffep127L,
                         0x1p24L + 1,
                         0x1p24L + 3,
                         0x1p25L + 2,
                         0x1p53L + 1,
                         0x1p53L + 3,
                         0x1p31L,
                         0x1p32L,
                         0x1p63L,
                         0x1p64L,
                         0x1p63L - 512,
                         0x1p64L - 1024,
                         0x1p31L - 64,
                         0x1p32L - 128,
                         12345678.9L,
                         0.1L,
                         1e-45L};
    for (int b : {8, 16, 32, 64})
        for (LD d : {-1.0L, 0.0L, 1.0L}) {
            v.push_back(ldexpl(1, b - 1) + d);
            v.push_back(ldexpl(1, b) + d);
        }
    size_t n = v.size();
    for (size_t i = 0; i < n; ++i)
        v.push_back(-v[i]);
    v.push_back(INFINITY);
    v.push_back(-INFINITY);
    v.push_back(NAN);
    return v;
}

std::vector<unsigned char> sourceData(const TypeInfo& t, size_t count) {
    std::vector<unsigned char> data(count * t.bytes);
    size_t i = 0;
    for (LD c : candidateValues()) {
        if (i >= count)
            break;
        if (t.kind == Kind::Int &&
            (std::isnan(c) || c != truncl(c) || c < intMin(t) || c > intMax(t)))
            continue;
        store(t, c, &data[i * t.bytes]);
        if (t.kind == Kind::Float && !std::isnan(c) && load(t, &data[i * t.bytes]) != c)
            continue; // not exact in this type: let a random value take the slot
        ++i;
    }
    Rng rng(t.bytes * 131 + t.isSigned);
    for (; i < count; ++i) {
        uint64_t r = rng.next();
        if (t.kind == Kind::Float && i % 3 == 0) { // moderate values with fractions
            LD x = (LD)(int64_t)(r >> 1) * ldexpl(1, -(int)(r % 70));
            store(t, x, &data[i * t.bytes]);
        } else {
            std::memcpy(&data[i * t.bytes], &r, t.bytes);
        }
    }
    return data;
}

} // namespace
} // namespace duet::test::ref
