// CUDA-GL interop on a real NVIDIA GPU (the lent host): a GL context on the EGL device that runs
// the GPU (EGL_NV_device_cuda), Duet's NVIDIA device (DUET_DEVICES=cpu,nvidia; the CPU device is
// there for image support). clGetGLContextInfoKHR names the GPU, kernels write a shared VBO that
// GL reads back, maps and fills of an acquired buffer, textures (RGBA8 2D, R32F 3D, depth 32F)
// and a renderbuffer both ways, and the cost of an acquire + release pair of a 16 MiB VBO
// (printed), also for a VBO moved into the GPU's memory (cl_duet_gl_device_memory). Skipped (77)
// where there is no NVIDIA EGL device or no NVIDIA device in Duet. DUET_TEST_EGL_ANY=1 takes any
// EGL device instead (Mesa with the fake driver: the kernels' results then fail, everything else
// runs).
#define CATCH_CONFIG_RUNNER
#include "support/cl_test.hpp"

#define EGL_NO_X11
#include <EGL/egl.h>
#include <EGL/eglext.h>
#define GL_GLEXT_PROTOTYPES
#include <GL/glcorearb.h>

#include <CL/cl_gl.h>

#include "egl_gpu_context.hpp"
#include "gl_buffers.hpp"

#include <duet/interop/cl_ext_duet.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

EglGpuContext g_gl; // on the first NVIDIA EGL device (egl_gpu_context.hpp)

std::vector<cl_context_properties> glProperties() {
    return g_gl.properties(platformUnderTest());
}

cl_device_id firstDevice(cl_device_type type) {
    cl_device_id d = nullptr;
    cl_uint n = 0;
    if (clGetDeviceIDs(platformUnderTest(), type, 1, &d, &n) != CL_SUCCESS || n == 0)
        return nullptr;
    return d;
}

/// A context of the GPU (and the CPU device, for image support) shared with the GL context,
/// and a queue on the GPU.
struct Shared {
    cl_device_id gpu = firstDevice(CL_DEVICE_TYPE_GPU);
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    Shared() {
        std::vector<cl_device_id> devices{gpu};
        if (cl_device_id cpu = firstDevice(CL_DEVICE_TYPE_CPU))
            devices.push_back(cpu);
        auto props = glProperties();
        cl_int err = CL_SUCCESS;
        context = clCreateContext(props.data(), cl_uint(devices.size()), devices.data(), nullptr,
                                  nullptr, &err);
        REQUIRE_CL(err);
        queue = clCreateCommandQueueWithProperties(context, gpu, nullptr, &err);
        REQUIRE_CL(err);
    }
    ~Shared() {
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
};

/// "" when GL's buffer holds `expected` as GL's draws see it (a GL copy on the GPU, read back),
/// else the count and the first difference (short: the buffer has millions of values).
std::string differences(GLuint b, const std::vector<float>& expected) {
    std::vector<float> back = glBufferContentsOnGpu(b, expected.size());
    size_t wrong = 0, first = 0;
    for (size_t i = expected.size(); i-- > 0;)
        if (back[i] != expected[i]) {
            ++wrong;
            first = i;
        }
    if (!wrong)
        return {};
    return std::to_string(wrong) + " values differ, the first at " + std::to_string(first) + ": " +
           std::to_string(back[first]) + " for " + std::to_string(expected[first]);
}

const char* kKernels = R"(
kernel void scale(global float* v, float k) { size_t i = get_global_id(0); v[i] = v[i] * k; }
kernel void touch(global float* v) { v[0] += 1.0f; }
)";

template <class T>
void imageRoundTrip(Shared& s, cl_mem image, size_t w, size_t h, size_t d, size_t channels,
                    const std::vector<T>& before, const std::vector<T>& after) {
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &image, 0, nullptr, nullptr));
    std::vector<T> got(w * h * d * channels);
    const size_t origin[3] = {0, 0, 0}, region[3] = {w, h, d};
    REQUIRE_CL(clEnqueueReadImage(s.queue, image, CL_TRUE, origin, region, 0, 0, got.data(), 0,
                                  nullptr, nullptr));
    // A count, not the vectors: Catch would print megabytes.
    size_t wrong = 0;
    for (size_t i = 0; i < got.size(); ++i)
        wrong += !(got[i] == before[i]);
    CHECK(wrong == 0);
    REQUIRE_CL(clEnqueueWriteImage(s.queue, image, CL_TRUE, origin, region, 0, 0, after.data(), 0,
                                   nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &image, 0, nullptr, nullptr));
}

GLuint glTexture(GLenum target) {
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(target, t);
    glTexParameteri(target, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(target, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    return t;
}

/// Three frames of acquire, `scale` doubling every value of `mem` (shared with GL buffer `vbo`,
/// holding `expected`), release; GL must read the doubled values after each.
void doubleThreeTimes(Shared& s, cl_mem mem, cl_kernel scale, GLuint vbo,
                      std::vector<float>& expected) {
    const size_t n = expected.size();
    float two = 2.0f;
    REQUIRE_CL(clSetKernelArg(scale, 0, sizeof mem, &mem));
    REQUIRE_CL(clSetKernelArg(scale, 1, sizeof two, &two));
    for (int frame = 0; frame < 3; ++frame) {
        glFlush();
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(s.queue, scale, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        for (float& v : expected)
            v *= 2.0f;
        INFO("frame " << frame);
        CHECK(differences(vbo, expected) == "");
    }
}

/// Inside an acquire of `mem`: maps its first 64 values, checks them against `expected` and
/// writes `value` at `index` through the map.
void mapAndPoke(Shared& s, cl_mem mem, const std::vector<float>& expected, size_t index,
                float value) {
    cl_int err = CL_SUCCESS;
    auto* p =
        static_cast<float*>(clEnqueueMapBuffer(s.queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                               64 * sizeof(float), 0, nullptr, nullptr, &err));
    REQUIRE_CL(err);
    CHECK(std::equal(p, p + 64, expected.begin()));
    p[index] = value;
    REQUIRE_CL(clEnqueueUnmapMemObject(s.queue, mem, p, 0, nullptr, nullptr));
}

/// The median of 201 frames of acquire, `kernel` over one work-item (when not null), release and
/// clFinish of `mem`, in us.
double pairMedianUs(Shared& s, cl_mem mem, cl_kernel kernel) {
    std::vector<double> us;
    for (int i = 0; i < 201; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        glFlush();
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        if (kernel) {
            size_t one = 1;
            REQUIRE_CL(clEnqueueNDRangeKernel(s.queue, kernel, 1, nullptr, &one, nullptr, 0,
                                              nullptr, nullptr));
        }
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(s.queue));
        us.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    if (std::string why = makeEglGpuContext(g_gl); !why.empty()) {
        std::printf("skipped: %s\n", why.c_str());
        return 77;
    }
    if (!firstDevice(CL_DEVICE_TYPE_GPU)) {
        std::printf("skipped: Duet has no NVIDIA device here (DUET_DEVICES=cpu,nvidia, libcuda)\n");
        return 77;
    }
    std::printf("GL: %s\n", g_gl.renderer.c_str());
    return Catch::Session().run(argc, argv);
}

TEST_CASE("the GPU that runs the GL context is the current device for it", "[nvidia-gl-gpu]") {
    auto props = glProperties();
    cl_device_id current = nullptr;
    size_t size = 0;
    REQUIRE_CL(clGetGLContextInfoKHR(props.data(), CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                     sizeof current, &current, &size));
    REQUIRE(size == sizeof current);
    CHECK(current == firstDevice(CL_DEVICE_TYPE_GPU));
}

TEST_CASE("kernels write a shared VBO in place; GL reads what they wrote", "[nvidia-gl-gpu]") {
    Shared s;
    // 16 MiB: mapped by the driver at each acquire; 1 MiB: copied by GL into memory the device
    // exported (up to DUET_GL_SHADOW_MAX, 8 MiB by default; mapped too when it is 0).
    const size_t mib = GENERATE(size_t(16), size_t(1));
    INFO(mib << " MiB VBO");
    const size_t n = (mib << 20) / sizeof(float);
    std::vector<float> init(n);
    for (size_t i = 0; i < n; ++i)
        init[i] = float(i % 4096);
    GLuint vbo = glBuffer(init);
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    cl_program prog = buildProgram(s.context, s.gpu, kKernels);
    cl_kernel scale = clCreateKernel(prog, "scale", &err);
    REQUIRE_CL(err);
    std::vector<float> expected = init;
    doubleThreeTimes(s, mem, scale, vbo, expected);

    SECTION("maps, fills and reads of the acquired buffer") {
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        mapAndPoke(s, mem, expected, 3, -3.0f);
        const float seven = 7.0f;
        REQUIRE_CL(clEnqueueFillBuffer(s.queue, mem, &seven, sizeof seven, 1024 * sizeof(float),
                                       256 * sizeof(float), 0, nullptr, nullptr));
        float last = 0;
        REQUIRE_CL(clEnqueueReadBuffer(s.queue, mem, CL_TRUE, (n - 1) * sizeof(float), sizeof last,
                                       &last, 0, nullptr, nullptr));
        CHECK(last == expected[n - 1]);
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        expected[3] = -3.0f;
        std::fill(expected.begin() + 1024, expected.begin() + 1280, seven);
        CHECK(differences(vbo, expected) == "");
    }

    SECTION("an acquire + release pair costs (printed)") {
        cl_kernel touch = clCreateKernel(prog, "touch", &err);
        REQUIRE_CL(err);
        REQUIRE_CL(clSetKernelArg(touch, 0, sizeof mem, &mem));
        for (bool withKernel : {false, true})
            std::printf("acquire%s + release of a %zu MiB VBO: median %.1f us (goal <= 50)\n",
                        withKernel ? " + 1-item kernel" : "", mib,
                        pairMedianUs(s, mem, withKernel ? touch : nullptr));
        clReleaseKernel(touch);
    }

    clReleaseKernel(scale);
    clReleaseProgram(prog);
    clReleaseMemObject(mem);
    glDeleteBuffers(1, &vbo);
}

TEST_CASE("VBOs made and freed one after another, each in its own context, stay shared",
          "[nvidia-gl-gpu]") {
    // Objects up to DUET_GL_SHADOW_MAX (8 MiB by default) go through device memory GL imports.
    // Freeing such an object and making the next (same GL names, a new CL context) once left
    // the application's copies in the freed import: later VBOs came back unchanged.
    for (int round = 0; round < 6; ++round) {
        const size_t mib = round % 2 ? 1 : 6;
        INFO("round " << round << ", " << mib << " MiB VBO");
        Shared s;
        const size_t n = (mib << 20) / sizeof(float);
        std::vector<float> expected(n);
        for (size_t i = 0; i < n; ++i)
            expected[i] = float((i + size_t(round)) % 1000);
        GLuint vbo = glBuffer(expected);
        cl_int err = CL_SUCCESS;
        cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
        REQUIRE_CL(err);
        cl_program prog = buildProgram(s.context, s.gpu, kKernels);
        cl_kernel scale = clCreateKernel(prog, "scale", &err);
        REQUIRE_CL(err);
        const float k = float(round + 2);
        REQUIRE_CL(clSetKernelArg(scale, 0, sizeof mem, &mem));
        REQUIRE_CL(clSetKernelArg(scale, 1, sizeof k, &k));
        glFlush();
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        float first = -1;
        REQUIRE_CL(clEnqueueReadBuffer(s.queue, mem, CL_TRUE, sizeof(float), sizeof first, &first,
                                       0, nullptr, nullptr));
        CHECK(first == expected[1]); // CL sees what GL holds
        REQUIRE_CL(
            clEnqueueNDRangeKernel(s.queue, scale, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(s.queue));
        for (float& v : expected)
            v *= k;
        CHECK(differences(vbo, expected) == ""); // GL sees what CL wrote
        clReleaseKernel(scale);
        clReleaseProgram(prog);
        clReleaseMemObject(mem);
        glDeleteBuffers(1, &vbo);
    }
}

TEST_CASE("textures and a renderbuffer travel both ways on the GPU", "[nvidia-gl-gpu]") {
    Shared s;
    cl_int err = CL_SUCCESS;
    // 8 KiB: packed by GL into memory the device exported (a CUDA array when
    // DUET_GL_SHADOW_MAX=0); 12 MiB: a CUDA array.
    SECTION("RGBA8 2D, small (imported memory) and large (a CUDA array)")
    for (size_t w : {size_t(64), size_t(3072)}) {
        const size_t h = w == 64 ? 32 : 1024;
        INFO(w << "x" << h);
        std::vector<uint8_t> texels(w * h * 4), next(texels.size());
        for (size_t i = 0; i < texels.size(); ++i) {
            texels[i] = uint8_t(i * 3);
            next[i] = uint8_t(255 - i);
        }
        GLuint tex = glTexture(GL_TEXTURE_2D);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, GLsizei(w), GLsizei(h), 0, GL_RGBA,
                     GL_UNSIGNED_BYTE, texels.data());
        cl_mem image =
            clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_2D, 0, tex, &err);
        REQUIRE_CL(err);
        imageRoundTrip(s, image, w, h, 1, 4, texels, next);
        std::vector<uint8_t> back(texels.size());
        glBindTexture(GL_TEXTURE_2D, tex);
        glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, back.data());
        CHECK(std::mismatch(back.begin(), back.end(), next.begin()).first - back.begin() ==
              std::ptrdiff_t(back.size()));
        clReleaseMemObject(image);
        glDeleteTextures(1, &tex);
    }
    SECTION("R32F 3D (a 3D CUDA array)") {
        const size_t w = 16, h = 8, d = 4;
        std::vector<float> voxels(w * h * d), next(voxels.size());
        std::iota(voxels.begin(), voxels.end(), 0.5f);
        for (size_t i = 0; i < next.size(); ++i)
            next[i] = -float(i);
        GLuint tex = glTexture(GL_TEXTURE_3D);
        glTexImage3D(GL_TEXTURE_3D, 0, GL_R32F, GLsizei(w), GLsizei(h), GLsizei(d), 0, GL_RED,
                     GL_FLOAT, voxels.data());
        cl_mem image =
            clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_3D, 0, tex, &err);
        REQUIRE_CL(err);
        imageRoundTrip(s, image, w, h, d, 1, voxels, next);
        std::vector<float> back(voxels.size());
        glBindTexture(GL_TEXTURE_3D, tex);
        glGetTexImage(GL_TEXTURE_3D, 0, GL_RED, GL_FLOAT, back.data());
        CHECK(back == next);
        clReleaseMemObject(image);
        glDeleteTextures(1, &tex);
    }
    SECTION("DEPTH_COMPONENT32F (a pixel buffer GL packs)") {
        const size_t w = 32, h = 16;
        std::vector<float> depth(w * h), next(depth.size());
        for (size_t i = 0; i < depth.size(); ++i) {
            depth[i] = float(i) / float(depth.size());
            next[i] = 1.0f - depth[i];
        }
        GLuint tex = glTexture(GL_TEXTURE_2D);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_DEPTH_COMPONENT32F, GLsizei(w), GLsizei(h), 0,
                     GL_DEPTH_COMPONENT, GL_FLOAT, depth.data());
        cl_mem image =
            clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_2D, 0, tex, &err);
        REQUIRE_CL(err);
        imageRoundTrip(s, image, w, h, 1, 1, depth, next);
        std::vector<float> back(depth.size());
        glBindTexture(GL_TEXTURE_2D, tex);
        glGetTexImage(GL_TEXTURE_2D, 0, GL_DEPTH_COMPONENT, GL_FLOAT, back.data());
        CHECK(back == next);
        clReleaseMemObject(image);
        glDeleteTextures(1, &tex);
    }
    SECTION("an RGBA8 renderbuffer") {
        GLuint rb = 0, fbo = 0;
        glGenRenderbuffers(1, &rb);
        glBindRenderbuffer(GL_RENDERBUFFER, rb);
        glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, 8, 4);
        glGenFramebuffers(1, &fbo);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb);
        glClearColor(0.0f, 0.0f, 1.0f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        std::vector<uint8_t> blue(8 * 4 * 4), white(blue.size(), 255);
        for (size_t i = 0; i < blue.size(); i += 4)
            blue[i + 2] = blue[i + 3] = 255;
        cl_mem image = clCreateFromGLRenderbuffer(s.context, CL_MEM_READ_WRITE, rb, &err);
        REQUIRE_CL(err);
        imageRoundTrip(s, image, 8, 4, 1, 4, blue, white);
        std::vector<uint8_t> back(blue.size());
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
        glReadPixels(0, 0, 8, 4, GL_RGBA, GL_UNSIGNED_BYTE, back.data());
        glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        CHECK(back == white);
        clReleaseMemObject(image);
        glDeleteFramebuffers(1, &fbo);
        glDeleteRenderbuffers(1, &rb);
    }
}

TEST_CASE("a VBO moved into the GPU's memory (cl_duet_gl_device_memory) travels with no copy",
          "[nvidia-gl-gpu]") {
    Shared s;
    REQUIRE(deviceString(s.gpu, CL_DEVICE_EXTENSIONS).find("cl_duet_gl_device_memory") !=
            std::string::npos);
    auto create = reinterpret_cast<clCreateFromGLBufferInDeviceMemoryDUET_fn>(
        clGetExtensionFunctionAddressForPlatform(platformUnderTest(),
                                                 "clCreateFromGLBufferInDeviceMemoryDUET"));
    REQUIRE(create);
    const size_t n = (size_t(16) << 20) / sizeof(float);
    std::vector<float> expected(n);
    for (size_t i = 0; i < n; ++i)
        expected[i] = float(i % 4096);
    GLuint vbo = glBuffer(expected);
    // A vertex array that points at the buffer before the move still draws from it after.
    GLuint vao = 0;
    glGenVertexArrays(1, &vao);
    glBindVertexArray(vao);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 0, nullptr);
    glEnableVertexAttribArray(0);
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    cl_int err = CL_SUCCESS;
    cl_mem mem = create(s.context, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    // The buffer keeps its contents; its storage is the device's memory now (immutable).
    GLint immutable = 0;
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glGetBufferParameteriv(GL_ARRAY_BUFFER, GL_BUFFER_IMMUTABLE_STORAGE, &immutable);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    CHECK(immutable == GL_TRUE);
    CHECK(differences(vbo, expected) == "");
    GLint attribBuffer = 0;
    glBindVertexArray(vao);
    glGetVertexAttribiv(0, GL_VERTEX_ATTRIB_ARRAY_BUFFER_BINDING, &attribBuffer);
    glBindVertexArray(0);
    CHECK(GLuint(attribBuffer) == vbo);

    cl_program prog = buildProgram(s.context, s.gpu, kKernels);
    cl_kernel scale = clCreateKernel(prog, "scale", &err);
    REQUIRE_CL(err);
    doubleThreeTimes(s, mem, scale, vbo, expected);

    SECTION("host-side commands and GL's own copies of the moved buffer") {
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        mapAndPoke(s, mem, expected, 5, -5.0f);
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        expected[5] = -5.0f;
        CHECK(differences(vbo, expected) == ""); // a GL copy out of the store
        // GL writes into the store on the GPU, and CL sees it at the next acquire.
        GLuint other = glBuffer(std::vector<float>(64, 9.0f));
        glBindBuffer(GL_COPY_READ_BUFFER, other);
        glBindBuffer(GL_COPY_WRITE_BUFFER, vbo);
        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0,
                            GLsizeiptr(64 * sizeof(float)));
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        glDeleteBuffers(1, &other);
        std::fill(expected.begin(), expected.begin() + 64, 9.0f);
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        mapAndPoke(s, mem, expected, 6, -6.0f);
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        expected[6] = -6.0f;
        CHECK(differences(vbo, expected) == "");
    }

    SECTION("an acquire + release pair costs (printed)") {
        for (int warm = 0; warm < 5; ++warm) {
            REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
            REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        }
        std::printf("acquire + release of a 16 MiB VBO in the GPU's memory: median %.1f us "
                    "(goal <= 50)\n",
                    pairMedianUs(s, mem, nullptr));
    }

    clReleaseKernel(scale);
    clReleaseProgram(prog);
    clReleaseMemObject(mem);
    REQUIRE_CL(clFinish(s.queue));
    // The memory stays GL's after the CL object is gone.
    CHECK(differences(vbo, expected) == "");
    glDeleteVertexArrays(1, &vao);
    glDeleteBuffers(1, &vbo);
}
