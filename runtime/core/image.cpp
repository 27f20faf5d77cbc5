// Image formats, fill-colour packing and kernel image descriptors (and argument words).
#include "core/image.hpp"
#include "core/kernel.hpp"
#include "core/memory.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace duet::rt {

namespace {

bool isPacked(cl_channel_type t) {
    return t == CL_UNORM_SHORT_565 || t == CL_UNORM_SHORT_555 || t == CL_UNORM_INT_101010 ||
           t == CL_UNORM_INT_101010_2;
}

bool isEightBit(cl_channel_type t) {
    return t == CL_UNORM_INT8 || t == CL_SNORM_INT8 || t == CL_SIGNED_INT8 || t == CL_UNSIGNED_INT8;
}

/// The channel types every plain order (R, RG, RGBA) supports, in clGetSupportedImageFormats
/// order.
constexpr cl_channel_type kPlainTypes[] = {
    CL_UNORM_INT8,     CL_UNORM_INT16,    CL_SNORM_INT8,   CL_SNORM_INT16,
    CL_SIGNED_INT8,    CL_SIGNED_INT16,   CL_SIGNED_INT32, CL_UNSIGNED_INT8,
    CL_UNSIGNED_INT16, CL_UNSIGNED_INT32, CL_HALF_FLOAT,   CL_FLOAT,
};

/// For each stored channel, which RGBA component it holds.
std::array<int, 4> storedComponents(cl_channel_order order) {
    switch (order) {
    case CL_BGRA:
    case CL_sBGRA:
        return {2, 1, 0, 3};
    default:
        return {0, 1, 2, 3};
    }
}

float linearToSrgb(float c) {
    if (!(c > 0.0f))
        return 0.0f; // NaN and negatives
    if (c >= 1.0f)
        return 1.0f;
    return c <= 0.0031308f ? 12.92f * c : 1.055f * std::pow(c, 1.0f / 2.4f) - 0.055f;
}

template <class T> T saturate(double v, double lo, double hi) {
    return static_cast<T>(std::clamp(v, lo, hi));
}

} // namespace

uint16_t floatToHalf(float v) {
    _Float16 h = static_cast<_Float16>(v); // round to nearest even
    uint16_t u;
    std::memcpy(&u, &h, sizeof u);
    return u;
}

float halfToFloat(uint16_t u) {
    _Float16 h;
    std::memcpy(&h, &u, sizeof u);
    return static_cast<float>(h);
}

unsigned channelCount(cl_channel_order order) {
    switch (order) {
    case CL_R:
    case CL_A:
    case CL_Rx:
    case CL_INTENSITY:
    case CL_LUMINANCE:
    case CL_DEPTH:
    case CL_DEPTH_STENCIL: // kernels see the depth alone
        return 1;
    case CL_RG:
    case CL_RA:
    case CL_RGx:
        return 2;
    case CL_RGB:
    case CL_RGBx:
    case CL_sRGB:
    case CL_sRGBx:
        return 3;
    case CL_RGBA:
    case CL_BGRA:
    case CL_ARGB:
    case CL_ABGR:
    case CL_sRGBA:
    case CL_sBGRA:
        return 4;
    default:
        return 0;
    }
}

unsigned channelSize(cl_channel_type type) {
    switch (type) {
    case CL_SNORM_INT8:
    case CL_UNORM_INT8:
    case CL_SIGNED_INT8:
    case CL_UNSIGNED_INT8:
        return 1;
    case CL_SNORM_INT16:
    case CL_UNORM_INT16:
    case CL_SIGNED_INT16:
    case CL_UNSIGNED_INT16:
    case CL_HALF_FLOAT:
        return 2;
    case CL_SIGNED_INT32:
    case CL_UNSIGNED_INT32:
    case CL_FLOAT:
        return 4;
    default:
        return 0;
    }
}

bool isValidFormat(const cl_image_format& f) {
    const cl_channel_type t = f.image_channel_data_type;
    // cl_khr_gl_depth_images (only GL textures have it; see supportedFormats).
    if (f.image_channel_order == CL_DEPTH_STENCIL)
        return t == CL_UNORM_INT24 || t == CL_FLOAT;
    const bool known = channelSize(t) != 0 || isPacked(t);
    if (!known)
        return false;
    switch (f.image_channel_order) {
    case CL_R:
    case CL_A:
    case CL_Rx:
    case CL_RG:
    case CL_RA:
    case CL_RGx:
    case CL_RGBA:
        return !isPacked(t);
    case CL_INTENSITY:
    case CL_LUMINANCE:
        return t == CL_UNORM_INT8 || t == CL_UNORM_INT16 || t == CL_SNORM_INT8 ||
               t == CL_SNORM_INT16 || t == CL_HALF_FLOAT || t == CL_FLOAT;
    case CL_RGB:
    case CL_RGBx:
        return isPacked(t);
    case CL_ARGB:
    case CL_BGRA:
    case CL_ABGR:
        return isEightBit(t);
    case CL_sRGB:
    case CL_sRGBx:
    case CL_sRGBA:
    case CL_sBGRA:
        return t == CL_UNORM_INT8;
    case CL_DEPTH:
        return t == CL_UNORM_INT16 || t == CL_FLOAT;
    default:
        return false;
    }
}

size_t elementSize(const cl_image_format& f) {
    const cl_channel_type t = f.image_channel_data_type;
    // GL's packings: 24-bit depth over 8-bit stencil in one 32-bit word
    // (GL_UNSIGNED_INT_24_8), or a float depth then a word holding the stencil
    // (GL_FLOAT_32_UNSIGNED_INT_24_8_REV).
    if (f.image_channel_order == CL_DEPTH_STENCIL)
        return t == CL_FLOAT ? 8 : 4;
    if (t == CL_UNORM_SHORT_565 || t == CL_UNORM_SHORT_555)
        return 2;
    if (t == CL_UNORM_INT_101010 || t == CL_UNORM_INT_101010_2)
        return 4;
    if ((f.image_channel_order == CL_sRGBx || f.image_channel_order == CL_sRGB))
        return 3; // not supported; size as the specification lays it out
    return size_t(channelCount(f.image_channel_order)) * channelSize(t);
}

std::vector<cl_image_format> supportedFormats(cl_mem_object_type type, cl_mem_flags flags) {
    (void)flags; // every format below supports read, write and read-write kernels
    std::vector<cl_image_format> out;
    for (cl_channel_order o : {CL_R, CL_RG, CL_RGBA})
        for (cl_channel_type t : kPlainTypes)
            out.push_back({o, t});
    for (cl_channel_type t : {CL_UNORM_INT8, CL_SNORM_INT8, CL_SIGNED_INT8, CL_UNSIGNED_INT8})
        out.push_back({CL_BGRA, t});
    out.push_back({CL_sRGBA, CL_UNORM_INT8});
    out.push_back({CL_sBGRA, CL_UNORM_INT8});
    // cl_khr_depth_images: depth formats exist for 2D images and 2D image arrays only.
    // CL_DEPTH_STENCIL is not listed: cl_khr_gl_depth_images images "can only be created
    // using the clCreateFromGLTexture API", so clCreateImage never accepts it.
    if (type == CL_MEM_OBJECT_IMAGE2D || type == CL_MEM_OBJECT_IMAGE2D_ARRAY) {
        out.push_back({CL_DEPTH, CL_UNORM_INT16});
        out.push_back({CL_DEPTH, CL_FLOAT});
    }
    return out;
}

bool isSupportedFormat(const cl_image_format& f, cl_mem_object_type type, cl_mem_flags flags) {
    for (const cl_image_format& s : supportedFormats(type, flags))
        if (s.image_channel_order == f.image_channel_order &&
            s.image_channel_data_type == f.image_channel_data_type)
            return true;
    return false;
}

void packFillColor(const cl_image_format& f, const void* color, unsigned char* out) {
    const cl_channel_order order = f.image_channel_order;
    const cl_channel_type type = f.image_channel_data_type;
    const unsigned n = channelCount(order);
    const unsigned size = channelSize(type);
    const std::array<int, 4> comp = storedComponents(order);
    const bool srgb = order == CL_sRGBA || order == CL_sBGRA;
    const float* fc = static_cast<const float*>(color);
    const int32_t* ic = static_cast<const int32_t*>(color);
    const uint32_t* uc = static_cast<const uint32_t*>(color);
    for (unsigned i = 0; i < n; ++i) {
        const int c = comp[i];
        unsigned char* dst = out + size_t(i) * size;
        float fv = fc[c];
        if (srgb && c < 3)
            fv = linearToSrgb(fv);
        // Normalized conversions round to nearest even, as write_imagef does.
        auto norm = [&](double scale, double lo, double hi) {
            if (std::isnan(fv))
                return 0.0;
            return std::nearbyint(std::clamp(double(fv), lo, hi) * scale);
        };
        switch (type) {
        case CL_UNORM_INT8:
            *dst = static_cast<uint8_t>(norm(255.0, 0.0, 1.0));
            break;
        case CL_UNORM_INT16: {
            uint16_t v = static_cast<uint16_t>(norm(65535.0, 0.0, 1.0));
            std::memcpy(dst, &v, 2);
            break;
        }
        case CL_SNORM_INT8:
            *dst = static_cast<uint8_t>(static_cast<int8_t>(norm(127.0, -1.0, 1.0)));
            break;
        case CL_SNORM_INT16: {
            int16_t v = static_cast<int16_t>(norm(32767.0, -1.0, 1.0));
            std::memcpy(dst, &v, 2);
            break;
        }
        case CL_HALF_FLOAT: {
            uint16_t v = floatToHalf(fv);
            std::memcpy(dst, &v, 2);
            break;
        }
        case CL_FLOAT:
            std::memcpy(dst, &fv, 4);
            break;
        case CL_SIGNED_INT8:
            *dst = static_cast<uint8_t>(saturate<int8_t>(ic[c], -128, 127));
            break;
        case CL_SIGNED_INT16: {
            int16_t v = saturate<int16_t>(ic[c], -32768, 32767);
            std::memcpy(dst, &v, 2);
            break;
        }
        case CL_SIGNED_INT32:
            std::memcpy(dst, &ic[c], 4);
            break;
        case CL_UNSIGNED_INT8:
            *dst = saturate<uint8_t>(uc[c], 0, 255);
            break;
        case CL_UNSIGNED_INT16: {
            uint16_t v = saturate<uint16_t>(uc[c], 0, 65535);
            std::memcpy(dst, &v, 2);
            break;
        }
        case CL_UNSIGNED_INT32:
            std::memcpy(dst, &uc[c], 4);
            break;
        default:
            break;
        }
    }
}

ImageBox imageBox(const Mem& m) {
    const cl_image_desc& d = m.desc;
    const size_t e = m.elementSize;
    switch (m.type()) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        return {{d.image_width, d.image_array_size, 1}, {e, m.slicePitch, m.slicePitch}};
    case CL_MEM_OBJECT_IMAGE2D:
        return {{d.image_width, d.image_height, 1}, {e, m.rowPitch, m.slicePitch}};
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        return {{d.image_width, d.image_height, d.image_array_size}, {e, m.rowPitch, m.slicePitch}};
    case CL_MEM_OBJECT_IMAGE3D:
        return {{d.image_width, d.image_height, d.image_depth}, {e, m.rowPitch, m.slicePitch}};
    default: // 1D, 1D buffer
        return {{d.image_width, 1, 1}, {e, m.rowPitch, m.slicePitch}};
    }
}

size_t texelOffset(const Mem& m, const size_t* origin) {
    ImageBox b = imageBox(m);
    return origin[0] * b.stride[0] + origin[1] * b.stride[1] + origin[2] * b.stride[2];
}

Strided imageRegion(const Mem& m, const size_t* origin) {
    ImageBox b = imageBox(m);
    return {origin[0] * b.stride[0] + origin[1] * b.stride[1] + origin[2] * b.stride[2],
            b.stride[1], b.stride[2]};
}

BoxSize imageRegionSize(const Mem& m, const size_t* region) {
    return {region[0] * m.elementSize, region[1], region[2]};
}

int32_t imageReadPath(const cl_image_format& f, size_t elementSize) {
    if (elementSize == 0 || (elementSize & (elementSize - 1)) != 0)
        return kImageReadAny;
    const cl_channel_order o = f.image_channel_order;
    const cl_channel_type t = f.image_channel_data_type;
    int32_t path = kImageReadAny;
    if ((o == CL_R || o == CL_RG || o == CL_RGBA) &&
        (t == CL_FLOAT || t == CL_SIGNED_INT32 || t == CL_UNSIGNED_INT32))
        path = kImageReadPlain32;
    else if (o == CL_RGBA && t == CL_UNORM_INT8)
        path = kImageReadRgba8;
    else if (o == CL_BGRA && t == CL_UNORM_INT8)
        path = kImageReadBgra8;
    if (path == kImageReadAny)
        return kImageReadAny;
    return path | int32_t(std::countr_zero(elementSize)) << 4;
}

void makeKernelImageDesc(const Mem& m, KernelImageDesc& out) {
    const cl_image_desc& d = m.desc;
    out = {};
    out.data = m.data();
    out.rowPitch = m.rowPitch;
    out.slicePitch = m.slicePitch;
    out.width = int32_t(d.image_width);
    out.height = int32_t(std::max<size_t>(1, d.image_height));
    out.depth = int32_t(std::max<size_t>(1, d.image_depth));
    out.arraySize = int32_t(std::max<size_t>(1, d.image_array_size));
    out.elementSize = int32_t(m.elementSize);
    out.channelOrder = int32_t(m.format.image_channel_order);
    out.channelType = int32_t(m.format.image_channel_data_type);
    out.imageType = int32_t(m.type());
    out.channels = int32_t(channelCount(m.format.image_channel_order));
    out.readPath = imageReadPath(m.format, m.elementSize);
}

KernelImageDesc imageArgDesc(const ArgValue& arg) {
    KernelImageDesc desc{};
    if (arg.mem)
        makeKernelImageDesc(*arg.mem, desc);
    return desc;
}

uint64_t samplerArgWord(const ArgValue& arg) {
    uint32_t bits = 0;
    std::memcpy(&bits, arg.bytes.data(), std::min<size_t>(sizeof bits, arg.bytes.size()));
    return bits;
}

} // namespace duet::rt
