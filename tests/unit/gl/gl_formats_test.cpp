// The GL <-> OpenCL image format table: the AMD guide's formats, sRGB, depth, and round trips.
#include "gl/gl_formats.hpp"

#include <GL/glcorearb.h>
#include <catch.hpp>

using duet::rt::gl::formatFromGl;
using duet::rt::gl::glFromFormat;

namespace {
void checkFormat(unsigned gl, cl_channel_order order, cl_channel_type type, unsigned bytes) {
    INFO("GL internal format 0x" << std::hex << gl);
    auto f = formatFromGl(gl);
    REQUIRE(f);
    CHECK(f->cl.image_channel_order == order);
    CHECK(f->cl.image_channel_data_type == type);
    CHECK(f->bytesPerTexel == bytes);
}
} // namespace

TEST_CASE("GL formats map to the CL formats of the sharing table", "[gl]") {
    checkFormat(GL_RGBA8, CL_RGBA, CL_UNORM_INT8, 4);
    checkFormat(GL_RGBA16, CL_RGBA, CL_UNORM_INT16, 8);
    checkFormat(GL_RGBA32F, CL_RGBA, CL_FLOAT, 16);
    checkFormat(GL_RGBA16F, CL_RGBA, CL_HALF_FLOAT, 8);
    checkFormat(GL_RGBA32UI, CL_RGBA, CL_UNSIGNED_INT32, 16);
    checkFormat(GL_RGBA8I, CL_RGBA, CL_SIGNED_INT8, 4);
    checkFormat(GL_R32F, CL_R, CL_FLOAT, 4);
    checkFormat(GL_RG16UI, CL_RG, CL_UNSIGNED_INT16, 4);
    checkFormat(GL_SRGB8_ALPHA8, CL_sRGBA, CL_UNORM_INT8, 4);
    checkFormat(GL_DEPTH_COMPONENT16, CL_DEPTH, CL_UNORM_INT16, 2);
    checkFormat(GL_DEPTH_COMPONENT24, CL_DEPTH, CL_FLOAT, 4);
    checkFormat(GL_DEPTH_COMPONENT32F, CL_DEPTH, CL_FLOAT, 4);
    checkFormat(GL_DEPTH24_STENCIL8, CL_DEPTH_STENCIL, CL_UNORM_INT24, 4);
    // Integer formats travel as *_INTEGER client formats.
    CHECK(formatFromGl(GL_RGBA32I)->transferFormat == GL_RGBA_INTEGER);
    CHECK(formatFromGl(GL_DEPTH24_STENCIL8)->transferType == GL_UNSIGNED_INT_24_8);
}

TEST_CASE("formats CL cannot share are refused, and the table round-trips", "[gl]") {
    CHECK_FALSE(formatFromGl(GL_RGB8));
    CHECK_FALSE(formatFromGl(GL_COMPRESSED_RGBA));
    CHECK_FALSE(formatFromGl(GL_R11F_G11F_B10F));
    for (unsigned gl : {GL_RGBA8, GL_RGBA32F, GL_R8UI, GL_RG32I, GL_SRGB8_ALPHA8,
                        GL_DEPTH_COMPONENT32F, GL_DEPTH24_STENCIL8}) {
        INFO("GL internal format 0x" << std::hex << gl);
        auto f = formatFromGl(gl);
        REQUIRE(f);
        CHECK(glFromFormat(f->cl) == gl);
    }
    CHECK_FALSE(glFromFormat(cl_image_format{CL_ARGB, CL_SNORM_INT16}));
}
