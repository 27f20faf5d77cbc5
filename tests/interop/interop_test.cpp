// libduet-interop: the engine makes the GL context, interop the CL context (on Duet and on PoCL),
// host-copy round trips of GL buffers, textures and renderbuffers, and the "nothing can share"
// error.
#include "support/cl_test.hpp"
#include "support/icd_vendors.hpp"

#include "duet/engine/gfx/gl.hpp"
#include "duet/engine/platform/surface.hpp"
#include "duet/interop/interop.hpp"

#include <catch.hpp>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using duet::interop::AcquireScope;
using duet::interop::Context;
using duet::interop::Mode;

void textureFormatsOn(const std::string& platform);

namespace {

std::unique_ptr<duet::engine::Surface>& surface() {
    static std::unique_ptr<duet::engine::Surface> s;
    if (!s) {
        duet::test::useDuetAndPocl();
        duet::engine::SurfaceDesc desc;
        desc.width = 64;
        desc.height = 64;
        s = duet::engine::createEglSurface(desc);
    }
    return s;
}

duet::interop::GLHandles handles() {
    duet::engine::NativeGL n = surface()->native();
    duet::interop::GLHandles h;
    h.api = n.api == duet::engine::NativeGL::Api::Egl ? duet::interop::GLHandles::Api::Egl
                                                      : duet::interop::GLHandles::Api::Glx;
    h.display = n.display;
    h.context = n.context;
    return h;
}

std::string platformName(cl_platform_id p) {
    return duet::test::platformString(p, CL_PLATFORM_NAME);
}

std::unique_ptr<Context> contextOn(const std::string& platform) {
    duet::interop::Options options;
    options.platform = platform;
    return Context::create(handles(), options);
}

cl_kernel buildKernel(Context& ctx, const char* source, const char* name) {
    cl_int err;
    cl_program program = clCreateProgramWithSource(ctx.context(), 1, &source, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_device_id device = ctx.device();
    err = clBuildProgram(program, 1, &device, "", nullptr, nullptr);
    if (err != CL_SUCCESS)
        FAIL("build failed: " << duet::test::buildLog(program, device));
    cl_kernel kernel = clCreateKernel(program, name, &err);
    REQUIRE(err == CL_SUCCESS);
    clReleaseProgram(program); // the kernel keeps it alive
    return kernel;
}

using duet::test::platformsUnderTest;

const char* kScaleSource = R"(
__kernel void scale(__global float *v) {
    int i = get_global_id(0);
    v[i] = v[i] * 2.0f + (float)i;
}
)";

// Kept apart: a device without images does not build image kernels.
const char* kImageSource = R"(
__kernel void swap_rb(__read_only image2d_t src, __write_only image2d_t dst) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 c = read_imagef(src, p);
    write_imagef(dst, p, (float4)(c.z, c.y, c.x, 1.0f - c.w));
}
)";

} // namespace

TEST_CASE("interop creates the CL context for the engine's GL context on each platform",
          "[interop]") {
    REQUIRE(surface());
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        std::unique_ptr<Context> ctx = contextOn(platform);
        REQUIRE(ctx);
        CHECK(platformName(ctx->platform()) == platform);
        CHECK(ctx->context() != nullptr);
        CHECK(ctx->queue() != nullptr);
        // A platform with cl_khr_gl_sharing for this GL context must get real sharing (Duet once
        // its GL side is in); one without (PoCL) the host-copy path.
        char extensions[4096] = {};
        clGetPlatformInfo(ctx->platform(), CL_PLATFORM_EXTENSIONS, sizeof extensions - 1,
                          extensions, nullptr);
        std::string list = " " + std::string(extensions) + " ";
        bool sharing = list.find(" cl_khr_gl_sharing ") != std::string::npos;
        CHECK(ctx->mode() == (sharing ? Mode::Sharing : Mode::HostCopy));
        CHECK(ctx->description().find(platform) == 0);
    }
}

TEST_CASE("interop defaults to Duet when no platform can share", "[interop]") {
    REQUIRE(surface());
    std::unique_ptr<Context> ctx = Context::create(handles(), {});
    CHECK(platformName(ctx->platform()) == "Duet");
}

TEST_CASE("a VBO written by a kernel reads back through glGetBufferSubData", "[interop]") {
    REQUIRE(surface());
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        std::unique_ptr<Context> ctx = contextOn(platform);
        const int n = 1000;
        std::vector<float> initial(n);
        for (int i = 0; i < n; ++i)
            initial[i] = float(i % 17) - 3.0f;
        GLuint vbo = 0;
        glGenBuffers(1, &vbo);
        glBindBuffer(GL_ARRAY_BUFFER, vbo);
        glBufferData(GL_ARRAY_BUFFER, n * sizeof(float), initial.data(), GL_DYNAMIC_DRAW);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        {
            auto shared = ctx->shareBuffer(vbo, CL_MEM_READ_WRITE);
            cl_kernel kernel = buildKernel(*ctx, kScaleSource, "scale");
            for (int round = 0; round < 2; ++round) {
                // GL changes the buffer between rounds: the next acquire must see it.
                if (round == 1) {
                    glBindBuffer(GL_ARRAY_BUFFER, vbo);
                    glBufferSubData(GL_ARRAY_BUFFER, 0, n * sizeof(float), initial.data());
                    glBindBuffer(GL_ARRAY_BUFFER, 0);
                }
                AcquireScope scope(*ctx, {shared.get()});
                cl_mem mem = shared->mem();
                REQUIRE(clSetKernelArg(kernel, 0, sizeof mem, &mem) == CL_SUCCESS);
                size_t global = n;
                REQUIRE(clEnqueueNDRangeKernel(ctx->queue(), kernel, 1, nullptr, &global, nullptr,
                                               0, nullptr, nullptr) == CL_SUCCESS);
                scope.release();
                std::vector<float> back(n, -1.0f);
                glBindBuffer(GL_ARRAY_BUFFER, vbo);
                glGetBufferSubData(GL_ARRAY_BUFFER, 0, n * sizeof(float), back.data());
                glBindBuffer(GL_ARRAY_BUFFER, 0);
                int wrong = 0;
                for (int i = 0; i < n; ++i)
                    wrong += back[i] != initial[i] * 2.0f + float(i);
                CHECK(wrong == 0);
            }
            clReleaseKernel(kernel);
        }
        glDeleteBuffers(1, &vbo);
        CHECK(glGetError() == GL_NO_ERROR);
    }
}

TEST_CASE("textures and renderbuffers round-trip through a kernel", "[interop]") {
    REQUIRE(surface());
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        std::unique_ptr<Context> ctx = contextOn(platform);
        cl_bool images = CL_FALSE;
        clGetDeviceInfo(ctx->device(), CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
        if (!images) {
            WARN(platform << " has no image support; texture sharing not tested there");
            continue;
        }
        const int w = 16, h = 8;
        std::vector<unsigned char> pixels(w * h * 4);
        for (int i = 0; i < w * h; ++i) {
            pixels[i * 4 + 0] = (unsigned char)(i * 3);
            pixels[i * 4 + 1] = (unsigned char)(i * 5);
            pixels[i * 4 + 2] = (unsigned char)(255 - i);
            pixels[i * 4 + 3] = (unsigned char)(i % 200);
        }
        GLuint tex[2] = {0, 0}, rb = 0;
        glGenTextures(2, tex);
        for (GLuint t : tex) {
            glBindTexture(GL_TEXTURE_2D, t);
            glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                         pixels.data());
        }
        glBindTexture(GL_TEXTURE_2D, 0);
        glGenRenderbuffers(1, &rb);
        glBindRenderbuffer(GL_RENDERBUFFER, rb);
        glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        {
            auto src = ctx->shareTexture(GL_TEXTURE_2D, 0, tex[0], CL_MEM_READ_ONLY);
            auto dst = ctx->shareTexture(GL_TEXTURE_2D, 0, tex[1], CL_MEM_WRITE_ONLY);
            auto dstRb = ctx->shareRenderbuffer(rb, CL_MEM_WRITE_ONLY);
            cl_kernel kernel = buildKernel(*ctx, kImageSource, "swap_rb");
            {
                AcquireScope scope(*ctx, {src.get(), dst.get(), dstRb.get()});
                size_t global[2] = {w, h};
                for (cl_mem out : {dst->mem(), dstRb->mem()}) {
                    cl_mem in = src->mem();
                    REQUIRE(clSetKernelArg(kernel, 0, sizeof in, &in) == CL_SUCCESS);
                    REQUIRE(clSetKernelArg(kernel, 1, sizeof out, &out) == CL_SUCCESS);
                    REQUIRE(clEnqueueNDRangeKernel(ctx->queue(), kernel, 2, nullptr, global,
                                                   nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
                }
            }
            clReleaseKernel(kernel);
        }
        std::vector<unsigned char> fromTex(w * h * 4), fromRb(w * h * 4);
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glBindTexture(GL_TEXTURE_2D, tex[1]);
        glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, fromTex.data());
        glBindTexture(GL_TEXTURE_2D, 0);
        GLuint fbo = 0;
        glGenFramebuffers(1, &fbo);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
        glFramebufferRenderbuffer(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb);
        glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, fromRb.data());
        glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        glDeleteFramebuffers(1, &fbo);
        int wrongTex = 0, wrongRb = 0;
        for (int i = 0; i < w * h; ++i) {
            const unsigned char expect[4] = {pixels[i * 4 + 2], pixels[i * 4 + 1],
                                             pixels[i * 4 + 0],
                                             (unsigned char)(255 - pixels[i * 4 + 3])};
            for (int c = 0; c < 4; ++c) {
                wrongTex += std::abs(int(fromTex[i * 4 + c]) - int(expect[c])) > 1;
                wrongRb += std::abs(int(fromRb[i * 4 + c]) - int(expect[c])) > 1;
            }
        }
        CHECK(wrongTex == 0);
        CHECK(wrongRb == 0);
        glDeleteTextures(2, tex);
        glDeleteRenderbuffers(1, &rb);
        CHECK(glGetError() == GL_NO_ERROR);
    }
}

TEST_CASE("an unsupported GL object gets CL_INVALID_GL_OBJECT, not a crash", "[interop]") {
    REQUIRE(surface());
    std::unique_ptr<Context> ctx = Context::create(handles(), {});
    if (ctx->mode() != Mode::HostCopy)
        return; // the platform's own clCreateFromGLBuffer answers then
    try {
        ctx->shareBuffer(424242, CL_MEM_READ_WRITE);
        FAIL("no error for a buffer name GL never made");
    } catch (const duet::interop::Error& e) {
        CHECK(e.code() == CL_INVALID_GL_OBJECT);
    }
    glGetError();
}

TEST_CASE("when nothing can share, one error names the GL renderer and every device seen",
          "[interop]") {
    REQUIRE(surface());
    std::string renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    duet::interop::Options options;
    options.allowHostCopy = false;
    if (duet::test::havePocl()) {
        options.platform = "Portable";
        try {
            Context::create(handles(), options);
            FAIL("PoCL has no cl_khr_gl_sharing, yet a sharing context was made");
        } catch (const duet::interop::Error& e) {
            std::string message = e.what();
            INFO(message);
            CHECK(e.code() == CL_DEVICE_NOT_FOUND);
            CHECK(message.find("GL renderer '" + renderer + "'") != std::string::npos);
            CHECK(message.find("[Portable Computing Language / ") != std::string::npos);
            CHECK(message.find("no cl_khr_gl_sharing") != std::string::npos);
            CHECK(message.find('\n') == std::string::npos);
        }
    }
    options.platform = "no such platform";
    try {
        Context::create(handles(), options);
        FAIL("a context on a platform that does not exist");
    } catch (const duet::interop::Error& e) {
        std::string message = e.what();
        CHECK(message.find(renderer) != std::string::npos);
        CHECK(message.find("devices seen: none") != std::string::npos);
    }
}

TEST_CASE("sRGB, float and depth textures travel both ways", "[interop]") {
    REQUIRE(surface());
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        textureFormatsOn(platform);
    }
}

void textureFormatsOn(const std::string& platform) {
    std::unique_ptr<Context> ctx = contextOn(platform);
    cl_bool images = CL_FALSE;
    clGetDeviceInfo(ctx->device(), CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
    if (!images)
        return;
    struct Case {
        GLenum internal, format, type;
        size_t bytes;
    };
    const Case cases[] = {{GL_SRGB8_ALPHA8, GL_RGBA, GL_UNSIGNED_BYTE, 4},
                          {GL_R32F, GL_RED, GL_FLOAT, 4},
                          {GL_RGBA32F, GL_RGBA, GL_FLOAT, 16},
                          {GL_DEPTH_COMPONENT32F, GL_DEPTH_COMPONENT, GL_FLOAT, 4}};
    const int w = 8, h = 4;
    for (const Case& c : cases) {
        INFO("GL internal format 0x" << std::hex << c.internal);
        // Bytes that are valid in every format: floats in [0, 1).
        std::vector<unsigned char> before(w * h * c.bytes), after(before.size()),
            seen(before.size());
        for (size_t i = 0; i < before.size() / 4; ++i) {
            float a = float(i % 97) / 128.0f, b = float((i * 7) % 89) / 128.0f;
            std::memcpy(&before[i * 4], &a, 4);
            std::memcpy(&after[i * 4], &b, 4);
        }
        GLuint tex = 0;
        glGenTextures(1, &tex);
        glBindTexture(GL_TEXTURE_2D, tex);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        glTexImage2D(GL_TEXTURE_2D, 0, GLint(c.internal), w, h, 0, c.format, c.type, before.data());
        glBindTexture(GL_TEXTURE_2D, 0);
        REQUIRE(glGetError() == GL_NO_ERROR);
        std::unique_ptr<duet::interop::SharedObject> shared;
        try {
            shared = ctx->shareTexture(GL_TEXTURE_2D, 0, tex, CL_MEM_READ_WRITE);
        } catch (const duet::interop::Error& e) {
            glDeleteTextures(1, &tex);
            if (e.code() == CL_IMAGE_FORMAT_NOT_SUPPORTED ||
                e.code() == CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) {
                WARN("skipped: " << e.what());
                continue;
            }
            throw;
        }
        size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
        {
            AcquireScope scope(*ctx, {shared.get()});
            REQUIRE(clEnqueueReadImage(ctx->queue(), shared->mem(), CL_TRUE, origin, region, 0, 0,
                                       seen.data(), 0, nullptr, nullptr) == CL_SUCCESS);
            REQUIRE(clEnqueueWriteImage(ctx->queue(), shared->mem(), CL_TRUE, origin, region, 0, 0,
                                        after.data(), 0, nullptr, nullptr) == CL_SUCCESS);
        }
        CHECK(seen == before);
        std::vector<unsigned char> back(after.size());
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glBindTexture(GL_TEXTURE_2D, tex);
        glGetTexImage(GL_TEXTURE_2D, 0, c.format, c.type, back.data());
        glBindTexture(GL_TEXTURE_2D, 0);
        CHECK(back == after);
        shared.reset();
        glDeleteTextures(1, &tex);
        CHECK(glGetError() == GL_NO_ERROR);
    }
}
