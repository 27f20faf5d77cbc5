// The GL <-> OpenCL image format table.
#include "gl/gl_formats.hpp"

#include <GL/glcorearb.h>

namespace duet::rt::gl {

namespace {

constexpr GlFormat kFormats[] = {
    // RGBA
    {GL_RGBA8, {CL_RGBA, CL_UNORM_INT8}, GL_RGBA, GL_UNSIGNED_BYTE, 4},
    {GL_RGBA16, {CL_RGBA, CL_UNORM_INT16}, GL_RGBA, GL_UNSIGNED_SHORT, 8},
    {GL_RGBA8I, {CL_RGBA, CL_SIGNED_INT8}, GL_RGBA_INTEGER, GL_BYTE, 4},
    {GL_RGBA16I, {CL_RGBA, CL_SIGNED_INT16}, GL_RGBA_INTEGER, GL_SHORT, 8},
    {GL_RGBA32I, {CL_RGBA, CL_SIGNED_INT32}, GL_RGBA_INTEGER, GL_INT, 16},
    {GL_RGBA8UI, {CL_RGBA, CL_UNSIGNED_INT8}, GL_RGBA_INTEGER, GL_UNSIGNED_BYTE, 4},
    {GL_RGBA16UI, {CL_RGBA, CL_UNSIGNED_INT16}, GL_RGBA_INTEGER, GL_UNSIGNED_SHORT, 8},
    {GL_RGBA32UI, {CL_RGBA, CL_UNSIGNED_INT32}, GL_RGBA_INTEGER, GL_UNSIGNED_INT, 16},
    {GL_RGBA16F, {CL_RGBA, CL_HALF_FLOAT}, GL_RGBA, GL_HALF_FLOAT, 8},
    {GL_RGBA32F, {CL_RGBA, CL_FLOAT}, GL_RGBA, GL_FLOAT, 16},
    // Unsized GL_RGBA textures are RGBA8 on every driver that shares them.
    {GL_RGBA, {CL_RGBA, CL_UNORM_INT8}, GL_RGBA, GL_UNSIGNED_BYTE, 4},
    // BGRA: GL stores it as RGBA8; CL sees the bytes in BGRA order.
    {GL_BGRA, {CL_BGRA, CL_UNORM_INT8}, GL_BGRA, GL_UNSIGNED_BYTE, 4},
    // sRGB
    {GL_SRGB8_ALPHA8, {CL_sRGBA, CL_UNORM_INT8}, GL_RGBA, GL_UNSIGNED_BYTE, 4},
    // R
    {GL_R8, {CL_R, CL_UNORM_INT8}, GL_RED, GL_UNSIGNED_BYTE, 1},
    {GL_R16, {CL_R, CL_UNORM_INT16}, GL_RED, GL_UNSIGNED_SHORT, 2},
    {GL_R8I, {CL_R, CL_SIGNED_INT8}, GL_RED_INTEGER, GL_BYTE, 1},
    {GL_R16I, {CL_R, CL_SIGNED_INT16}, GL_RED_INTEGER, GL_SHORT, 2},
    {GL_R32I, {CL_R, CL_SIGNED_INT32}, GL_RED_INTEGER, GL_INT, 4},
    {GL_R8UI, {CL_R, CL_UNSIGNED_INT8}, GL_RED_INTEGER, GL_UNSIGNED_BYTE, 1},
    {GL_R16UI, {CL_R, CL_UNSIGNED_INT16}, GL_RED_INTEGER, GL_UNSIGNED_SHORT, 2},
    {GL_R32UI, {CL_R, CL_UNSIGNED_INT32}, GL_RED_INTEGER, GL_UNSIGNED_INT, 4},
    {GL_R16F, {CL_R, CL_HALF_FLOAT}, GL_RED, GL_HALF_FLOAT, 2},
    {GL_R32F, {CL_R, CL_FLOAT}, GL_RED, GL_FLOAT, 4},
    // RG
    {GL_RG8, {CL_RG, CL_UNORM_INT8}, GL_RG, GL_UNSIGNED_BYTE, 2},
    {GL_RG16, {CL_RG, CL_UNORM_INT16}, GL_RG, GL_UNSIGNED_SHORT, 4},
    {GL_RG8I, {CL_RG, CL_SIGNED_INT8}, GL_RG_INTEGER, GL_BYTE, 2},
    {GL_RG16I, {CL_RG, CL_SIGNED_INT16}, GL_RG_INTEGER, GL_SHORT, 4},
    {GL_RG32I, {CL_RG, CL_SIGNED_INT32}, GL_RG_INTEGER, GL_INT, 8},
    {GL_RG8UI, {CL_RG, CL_UNSIGNED_INT8}, GL_RG_INTEGER, GL_UNSIGNED_BYTE, 2},
    {GL_RG16UI, {CL_RG, CL_UNSIGNED_INT16}, GL_RG_INTEGER, GL_UNSIGNED_SHORT, 4},
    {GL_RG32UI, {CL_RG, CL_UNSIGNED_INT32}, GL_RG_INTEGER, GL_UNSIGNED_INT, 8},
    {GL_RG16F, {CL_RG, CL_HALF_FLOAT}, GL_RG, GL_HALF_FLOAT, 4},
    {GL_RG32F, {CL_RG, CL_FLOAT}, GL_RG, GL_FLOAT, 8},
    // Depth (cl_khr_gl_depth_images). DEPTH_COMPONENT24 is not in that table; CL sees it as
    // CL_DEPTH / CL_FLOAT (GL converts on transfer, and a float holds 24 bits exactly), since
    // CL_DEPTH has no 24-bit type.
    {GL_DEPTH_COMPONENT16, {CL_DEPTH, CL_UNORM_INT16}, GL_DEPTH_COMPONENT, GL_UNSIGNED_SHORT, 2},
    {GL_DEPTH_COMPONENT32F, {CL_DEPTH, CL_FLOAT}, GL_DEPTH_COMPONENT, GL_FLOAT, 4},
    {GL_DEPTH_COMPONENT24, {CL_DEPTH, CL_FLOAT}, GL_DEPTH_COMPONENT, GL_FLOAT, 4},
    {GL_DEPTH24_STENCIL8,
     {CL_DEPTH_STENCIL, CL_UNORM_INT24},
     GL_DEPTH_STENCIL,
     GL_UNSIGNED_INT_24_8,
     4},
    {GL_DEPTH32F_STENCIL8,
     {CL_DEPTH_STENCIL, CL_FLOAT},
     GL_DEPTH_STENCIL,
     GL_FLOAT_32_UNSIGNED_INT_24_8_REV,
     8},
};

} // namespace

std::optional<GlFormat> formatFromGl(unsigned internalFormat) {
    for (const GlFormat& f : kFormats)
        if (f.internalFormat == internalFormat)
            return f;
    return std::nullopt;
}

std::optional<unsigned> glFromFormat(const cl_image_format& format) {
    for (const GlFormat& f : kFormats)
        if (f.cl.image_channel_order == format.image_channel_order &&
            f.cl.image_channel_data_type == format.image_channel_data_type)
            return f.internalFormat;
    return std::nullopt;
}

} // namespace duet::rt::gl
