// Host reference for image tests: texel packing/unpacking per format and the sampling rules of
// the OpenCL C specification §8 (addressing, filtering, border colour), written from the spec.
#pragma once

#include <CL/cl.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

namespace duet::test::img {

using F4 = std::array<float, 4>;
using I4 = std::array<int32_t, 4>;

enum class Kind { Float, Int, UInt };

inline Kind kindOf(cl_channel_type t) {
    switch (t) {
    case CL_SIGNED_INT8:
    case CL_SIGNED_INT16:
    case CL_SIGNED_INT32:
        return Kind::Int;
    case CL_UNSIGNED_INT8:
    case CL_UNSIGNED_INT16:
    case CL_UNSIGNED_INT32:
        return Kind::UInt;
    default:
        return Kind::Float;
    }
}

inline unsigned channels(cl_channel_order o) {
    switch (o) {
    case CL_R:
    case CL_DEPTH:
        return 1;
    case CL_RG:
        return 2;
    default:
        return 4;
    }
}

inline unsigned channelBytes(cl_channel_type t) {
    switch (t) {
    case CL_UNORM_INT8:
    case CL_SNORM_INT8:
    case CL_SIGNED_INT8:
    case CL_UNSIGNED_INT8:
        return 1;
    case CL_UNORM_INT16:
    case CL_SNORM_INT16:
    case CL_SIGNED_INT16:
    case CL_UNSIGNED_INT16:
    case CL_HALF_FLOAT:
        return 2;
    default:
        return 4;
    }
}

inline size_t texelBytes(const cl_image_format& f) {
    return channels(f.image_channel_order) * channelBytes(f.image_channel_data_type);
}

inline bool isSrgb(cl_channel_order o) {
    return o == CL_sRGBA || o == CL_sBGRA;
}
inline bool isBgra(cl_channel_order o) {
    return o == CL_BGRA || o == CL_sBGRA;
}
inline bool hasAlpha(cl_channel_order o) {
    return o == CL_RGBA || o == CL_BGRA || o == CL_sRGBA || o == CL_sBGRA;
}

inline float halfToFloat(uint16_t h) {
    _Float16 v;
    std::memcpy(&v, &h, 2);
    return float(v);
}
inline uint16_t floatToHalf(float f) {
    _Float16 v = _Float16(f);
    uint16_t h;
    std::memcpy(&h, &v, 2);
    return h;
}

inline double srgbToLinear(double c) {
    return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}
inline double linearToSrgb(double c) {
    if (!(c > 0))
        return 0;
    if (c >= 1)
        return 1;
    return c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1 / 2.4) - 0.055;
}

/// Stored channel i of `p` as a float (normalized and float types) or integer.
inline double channelValue(cl_channel_type t, const unsigned char* p, unsigned i) {
    auto get = [&](auto v) {
        std::memcpy(&v, p + i * sizeof v, sizeof v);
        return v;
    };
    switch (t) {
    case CL_UNORM_INT8:
        return get(uint8_t()) / 255.0;
    case CL_UNORM_INT16:
        return get(uint16_t()) / 65535.0;
    case CL_SNORM_INT8:
        return std::max(-1.0, get(int8_t()) / 127.0);
    case CL_SNORM_INT16:
        return std::max(-1.0, get(int16_t()) / 32767.0);
    case CL_HALF_FLOAT:
        return halfToFloat(get(uint16_t()));
    case CL_FLOAT:
        return get(float());
    case CL_SIGNED_INT8:
        return get(int8_t());
    case CL_SIGNED_INT16:
        return get(int16_t());
    case CL_SIGNED_INT32:
        return get(int32_t());
    case CL_UNSIGNED_INT8:
        return get(uint8_t());
    case CL_UNSIGNED_INT16:
        return get(uint16_t());
    case CL_UNSIGNED_INT32:
        return get(uint32_t());
    }
    return 0;
}

/// A texel as RGBA (read_imagef / read_imagei / read_imageui before filtering), in double.
inline std::array<double, 4> unpack(const cl_image_format& f, const unsigned char* p) {
    std::array<double, 4> r = {0, 0, 0, 1};
    unsigned n = channels(f.image_channel_order);
    for (unsigned i = 0; i < n; ++i)
        r[i] = channelValue(f.image_channel_data_type, p, i);
    if (isBgra(f.image_channel_order))
        std::swap(r[0], r[2]);
    if (isSrgb(f.image_channel_order))
        for (int i = 0; i < 3; ++i)
            r[i] = srgbToLinear(r[i]);
    return r;
}

/// write_image{f,i,ui} of `v` (float values for normalized/float formats, integer values for
/// integer formats) into one texel, with the spec's conversions (round to nearest even,
/// saturation).
inline void pack(const cl_image_format& f, const std::array<double, 4>& in, unsigned char* out) {
    std::array<double, 4> v = in;
    if (isSrgb(f.image_channel_order))
        for (int i = 0; i < 3; ++i)
            v[i] = linearToSrgb(v[i]);
    if (isBgra(f.image_channel_order))
        std::swap(v[0], v[2]);
    unsigned n = channels(f.image_channel_order);
    for (unsigned i = 0; i < n; ++i) {
        unsigned char* d = out + i * channelBytes(f.image_channel_data_type);
        auto put = [&](auto x) { std::memcpy(d, &x, sizeof x); };
        // Normalized: the kernel computes v * scale in float, then rounds to nearest even.
        auto norm = [&](float scale, double lo, double hi) {
            float s = float(v[i]) * scale;
            if (std::isnan(s))
                return 0.0;
            return std::clamp(std::nearbyint(double(s)), lo, hi);
        };
        auto sat = [&](double lo, double hi) { return std::clamp(v[i], lo, hi); };
        switch (f.image_channel_data_type) {
        case CL_UNORM_INT8:
            put(uint8_t(norm(255.0f, 0, 255)));
            break;
        case CL_UNORM_INT16:
            put(uint16_t(norm(65535.0f, 0, 65535)));
            break;
        case CL_SNORM_INT8:
            put(int8_t(norm(127.0f, -128, 127)));
            break;
        case CL_SNORM_INT16:
            put(int16_t(norm(32767.0f, -32768, 32767)));
            break;
        case CL_HALF_FLOAT:
            put(floatToHalf(float(v[i])));
            break;
        case CL_FLOAT:
            put(float(v[i]));
            break;
        case CL_SIGNED_INT8:
            put(int8_t(sat(-128, 127)));
            break;
        case CL_SIGNED_INT16:
            put(int16_t(sat(-32768, 32767)));
            break;
        case CL_SIGNED_INT32:
            put(int32_t(v[i]));
            break;
        case CL_UNSIGNED_INT8:
            put(uint8_t(sat(0, 255)));
            break;
        case CL_UNSIGNED_INT16:
            put(uint16_t(sat(0, 65535)));
            break;
        case CL_UNSIGNED_INT32:
            put(uint32_t(v[i]));
            break;
        }
    }
}

// ---- Sampling (§8.2) --------------------------------------------------------------------------

struct SamplerDesc {
    bool normalized;
    cl_addressing_mode addressing;
    cl_filter_mode filter;
};

inline int floorI(float f) {
    return int(std::floor(f));
}

/// Nearest: texel index along one dimension (may be -1 or size: border).
inline int nearestIndex(float s, int size, const SamplerDesc& sm) {
    switch (sm.addressing) {
    case CL_ADDRESS_REPEAT: {
        float u = (s - std::floor(s)) * float(size);
        int i = floorI(u);
        return i > size - 1 ? i - size : i;
    }
    case CL_ADDRESS_MIRRORED_REPEAT: {
        float sp = std::fabs(s - 2.0f * std::nearbyint(0.5f * s));
        return std::min(floorI(sp * float(size)), size - 1);
    }
    case CL_ADDRESS_CLAMP_TO_EDGE:
        return std::clamp(floorI(sm.normalized ? s * float(size) : s), 0, size - 1);
    default: // CLAMP (NONE is only tested inside the image)
        return std::clamp(floorI(sm.normalized ? s * float(size) : s), -1, size);
    }
}

struct LinearTaps {
    int i0, i1;
    float a;
};

inline LinearTaps linearTaps(float s, int size, const SamplerDesc& sm) {
    LinearTaps t{};
    float u;
    switch (sm.addressing) {
    case CL_ADDRESS_REPEAT:
        u = (s - std::floor(s)) * float(size);
        t.i0 = floorI(u - 0.5f);
        t.i1 = t.i0 + 1;
        if (t.i0 < 0)
            t.i0 += size;
        if (t.i1 > size - 1)
            t.i1 -= size;
        break;
    case CL_ADDRESS_MIRRORED_REPEAT:
        u = std::fabs(s - 2.0f * std::nearbyint(0.5f * s)) * float(size);
        t.i0 = std::max(floorI(u - 0.5f), 0);
        t.i1 = std::min(floorI(u - 0.5f) + 1, size - 1);
        break;
    case CL_ADDRESS_CLAMP_TO_EDGE:
        u = sm.normalized ? s * float(size) : s;
        t.i0 = std::clamp(floorI(u - 0.5f), 0, size - 1);
        t.i1 = std::clamp(floorI(u - 0.5f) + 1, 0, size - 1);
        break;
    default:
        u = sm.normalized ? s * float(size) : s;
        t.i0 = std::clamp(floorI(u - 0.5f), -1, size);
        t.i1 = std::clamp(floorI(u - 0.5f) + 1, -1, size);
        break;
    }
    float x = u - 0.5f;
    t.a = x - std::floor(x);
    return t;
}

/// Samples a (w, h, d) box of texels. `fetch(x, y, z)` returns a texel already converted to
/// RGBA, or the border colour outside. `coord` holds the spatial coordinates (dims of them).
inline std::array<double, 4>
sample(const SamplerDesc& sm, int dims, const int size[3], const float coord[3], int layerZ,
       const std::function<std::array<double, 4>(int, int, int)>& fetch) {
    if (sm.filter == CL_FILTER_NEAREST) {
        int i[3] = {0, 0, layerZ};
        for (int k = 0; k < dims; ++k)
            i[k] = nearestIndex(coord[k], size[k], sm);
        return fetch(i[0], i[1], i[2]);
    }
    LinearTaps t[3] = {{0, 0, 0}, {0, 0, 0}, {layerZ, layerZ, 0}};
    for (int k = 0; k < dims; ++k)
        t[k] = linearTaps(coord[k], size[k], sm);
    std::array<double, 4> r{};
    for (int dz = 0; dz < (dims > 2 ? 2 : 1); ++dz)
        for (int dy = 0; dy < (dims > 1 ? 2 : 1); ++dy)
            for (int dx = 0; dx < 2; ++dx) {
                double w = (dx ? t[0].a : 1 - t[0].a);
                if (dims > 1)
                    w *= dy ? t[1].a : 1 - t[1].a;
                if (dims > 2)
                    w *= dz ? t[2].a : 1 - t[2].a;
                auto v =
                    fetch(dx ? t[0].i1 : t[0].i0, dy ? t[1].i1 : t[1].i0, dz ? t[2].i1 : t[2].i0);
                for (int c = 0; c < 4; ++c)
                    r[c] += w * v[c];
            }
    return r;
}

/// Array layer index from a coordinate: clamp(rint(v), 0, layers - 1).
inline int layerIndex(float v, int layers) {
    return std::clamp(int(std::nearbyint(v)), 0, layers - 1);
}

inline std::string formatName(const cl_image_format& f) {
    auto order = [](cl_channel_order o) -> std::string {
        switch (o) {
        case CL_R:
            return "R";
        case CL_RG:
            return "RG";
        case CL_RGBA:
            return "RGBA";
        case CL_BGRA:
            return "BGRA";
        case CL_sRGBA:
            return "sRGBA";
        case CL_sBGRA:
            return "sBGRA";
        case CL_DEPTH:
            return "DEPTH";
        default:
            return "order?" + std::to_string(o);
        }
    };
    auto type = [](cl_channel_type t) -> std::string {
        switch (t) {
        case CL_UNORM_INT8:
            return "UNORM_INT8";
        case CL_UNORM_INT16:
            return "UNORM_INT16";
        case CL_SNORM_INT8:
            return "SNORM_INT8";
        case CL_SNORM_INT16:
            return "SNORM_INT16";
        case CL_SIGNED_INT8:
            return "SIGNED_INT8";
        case CL_SIGNED_INT16:
            return "SIGNED_INT16";
        case CL_SIGNED_INT32:
            return "SIGNED_INT32";
        case CL_UNSIGNED_INT8:
            return "UNSIGNED_INT8";
        case CL_UNSIGNED_INT16:
            return "UNSIGNED_INT16";
        case CL_UNSIGNED_INT32:
            return "UNSIGNED_INT32";
        case CL_HALF_FLOAT:
            return "HALF_FLOAT";
        case CL_FLOAT:
            return "FLOAT";
        default:
            return "type?" + std::to_string(t);
        }
    };
    return order(f.image_channel_order) + "/" + type(f.image_channel_data_type);
}

} // namespace duet::test::img
