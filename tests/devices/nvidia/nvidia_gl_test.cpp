// GL sharing on the NVIDIA device without a GPU: a surfaceless Mesa EGL context, the fake libcuda
// (fake_cuda_gl.cpp maps GL objects into host memory with GL and counts every call).
// [gl-interop]: DUET_GL_INTEROP=cuda makes the device take Mesa's context for one it runs
// (cuGLGetDevices, which the fake answers): clGetGLContextInfoKHR names it, GL buffers are
// registered once, mapped at each acquire (kernels get the mapped address), unmapped at each
// release, unregistered with the CL object, and the bytes travel both ways; a GL context on
// another GPU is refused; a failed map falls back to host copies. [gl-copies]: without the knob,
// Mesa's GL is not NVIDIA's: host copies, no driver call. [gl-images]: a context of the CPU and
// the NVIDIA device (images need a device with image support): textures and renderbuffers
// registered as images and copied to/from CUDA arrays, depth and sRGB through pixel buffers, and
// a buffer acquired on the CPU device's queue (copied on the "GPU", then a real CPU kernel).
#include "fake_cuda.hpp"
#include "support/cl_test.hpp"
#include "support/surfaceless_egl.hpp"

#define EGL_NO_X11
#include <EGL/egl.h>
#include <EGL/eglext.h>
#define GL_GLEXT_PROTOTYPES
#include <GL/glcorearb.h>

#include <CL/cl_gl.h>

#include "gl_buffers.hpp"

#include <duet/interop/cl_ext_duet.h>
#include <duet/interop/interop.hpp>

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

using namespace duet::test;

namespace {

/// The fake driver the runtime loaded, and its test entry points.
struct Fake {
    void* handle = nullptr;
    template <class Fn> Fn get(const char* name) {
        Fn fn = reinterpret_cast<Fn>(dlsym(handle, name));
        REQUIRE(fn);
        return fn;
    }
    Fake() {
        const char* path = std::getenv("DUET_CUDA_LIBRARY");
        REQUIRE(path);
        platformUnderTest(); // the platform loads the driver
        handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        REQUIRE(handle);
        calls = get<DuetFakeCallsFn>("duetFakeCalls");
        fail = get<DuetFakeFailFn>("duetFakeFail");
        launchCount = get<DuetFakeLaunchCountFn>("duetFakeLaunchCount");
        launchAt = get<DuetFakeLaunchAtFn>("duetFakeLaunchAt");
        setGlDevice = get<DuetFakeSetGlDeviceFn>("duetFakeSetGlDevice");
        lastMapped = get<DuetFakeLastMappedPointerFn>("duetFakeLastMappedPointer");
        liveAllocations = get<DuetFakeLiveAllocationsFn>("duetFakeLiveAllocations");
    }
    /// Waits (up to 5 s) for `entry` to have been called `n` times: unregistration is posted to
    /// the runtime's GL thread.
    bool waitForCalls(const char* entry, int n) {
        for (int i = 0; i < 500 && calls(entry) < n; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return calls(entry) >= n;
    }
    DuetFakeCallsFn calls;
    DuetFakeFailFn fail;
    DuetFakeLaunchCountFn launchCount;
    DuetFakeLaunchAtFn launchAt;
    DuetFakeSetGlDeviceFn setGlDevice;
    DuetFakeLastMappedPointerFn lastMapped;
    DuetFakeLiveAllocationsFn liveAllocations;
};

Fake& fake() {
    static Fake f;
    return f;
}

cl_device_id h100() {
    cl_uint n = 0;
    REQUIRE_CL(clGetDeviceIDs(platformUnderTest(), CL_DEVICE_TYPE_GPU, 0, nullptr, &n));
    std::vector<cl_device_id> gpus(n);
    REQUIRE_CL(clGetDeviceIDs(platformUnderTest(), CL_DEVICE_TYPE_GPU, n, gpus.data(), nullptr));
    REQUIRE(deviceString(gpus[0], CL_DEVICE_NAME).find("H100") != std::string::npos);
    return gpus[0];
}

/// What clGetGLContextInfoKHR answers for the test's GL context.
std::vector<cl_device_id> glDevices(cl_gl_context_info what) {
    return glContextDevices(egl().properties(), what);
}

/// A CL context on `devices` shared with the test's GL context, and a queue on the first.
struct Shared {
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    explicit Shared(std::vector<cl_device_id> devices) {
        auto props = egl().properties();
        cl_int err = CL_SUCCESS;
        context = clCreateContext(props.data(), cl_uint(devices.size()), devices.data(), nullptr,
                                  nullptr, &err);
        REQUIRE_CL(err);
        queue = clCreateCommandQueueWithProperties(context, devices[0], nullptr, &err);
        REQUIRE_CL(err);
    }
    ~Shared() {
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
};

std::vector<float> readBuffer(cl_command_queue q, cl_mem m, size_t n) {
    std::vector<float> out(n, -1.0f);
    REQUIRE_CL(
        clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof(float), out.data(), 0, nullptr, nullptr));
    return out;
}

const char* kScale = R"(
kernel void scale(global float* v, float k) { size_t i = get_global_id(0); v[i] = v[i] * k; }
)";

/// Launches `scale` over `n` items and returns the buffer address the fake driver got.
uint64_t launchScale(cl_command_queue q, cl_kernel k, cl_mem m, size_t n) {
    float two = 2.0f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof m, &m));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof two, &two));
    const int before = fake().launchCount();
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake().launchCount() > before);
    const DuetFakeLaunch* l = fake().launchAt(fake().launchCount() - 1);
    REQUIRE(l->paramBytes[0] == 8);
    uint64_t address = 0;
    std::memcpy(&address, l->param[0], 8);
    return address;
}

} // namespace

TEST_CASE("clGetGLContextInfoKHR names the NVIDIA device that runs the GL context",
          "[gl-interop]") {
    fake().setGlDevice(0);
    std::vector<cl_device_id> current = glDevices(CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR);
    REQUIRE(current.size() == 1);
    CHECK(current[0] == h100());
    std::vector<cl_device_id> all = glDevices(CL_DEVICES_FOR_GL_CONTEXT_KHR);
    CHECK(all == current); // the Kepler board is not available
    CHECK(fake().calls("cuGLGetDevices_v2") > 0);
}

TEST_CASE("a GL context on another GPU: no device, and clCreateContext refuses the H100",
          "[gl-interop]") {
    fake().setGlDevice(1);
    CHECK(glDevices(CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR).empty());
    CHECK(glDevices(CL_DEVICES_FOR_GL_CONTEXT_KHR).empty());
    auto props = egl().properties();
    cl_device_id d = h100();
    cl_int err = CL_SUCCESS;
    std::string notes;
    auto note = [](const char* m, const void*, size_t, void* self) {
        *static_cast<std::string*>(self) += m;
    };
    cl_context ctx = clCreateContext(props.data(), 1, &d, note, &notes, &err);
    CHECK(ctx == nullptr);
    CHECK_CL_ERR(CL_INVALID_OPERATION, err);
    // The reason reaches pfn_notify: the GPU that runs the GL context.
    INFO(notes);
    CHECK(notes.find("another GPU, CUDA device 1") != std::string::npos);
    // By type: the device is left out, and then there is none.
    ctx = clCreateContextFromType(props.data(), CL_DEVICE_TYPE_GPU, nullptr, nullptr, &err);
    CHECK(ctx == nullptr);
    CHECK_CL_ERR(CL_INVALID_OPERATION, err);
    fake().setGlDevice(0);
}

TEST_CASE("a GL buffer is registered once, mapped at acquire, unmapped at release",
          "[gl-interop]") {
    fake().setGlDevice(0);
    Shared s({h100()});
    const size_t n = 4096;
    std::vector<float> init(n);
    std::iota(init.begin(), init.end(), 1.0f);
    GLuint vbo = glBuffer(init);
    const int registers = fake().calls("cuGraphicsGLRegisterBuffer");
    const int maps = fake().calls("cuGraphicsMapResources");
    const int unmaps = fake().calls("cuGraphicsUnmapResources");
    const int unregisters = fake().calls("cuGraphicsUnregisterResource");
    const int exports = fake().calls("cuMemExportToShareableHandle");
    const int releases = fake().calls("cuMemRelease");
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    // With DUET_GL_SHADOW_MAX (set by ctest) a small buffer goes first to device memory GL
    // imports: the driver exported some, Mesa's
    // GL (which imports only its own) refused it, and the memory was freed at once. The buffer
    // is registered instead, and later objects of this context no longer try.
    CHECK(fake().calls("cuMemExportToShareableHandle") == exports + 1);
    CHECK(fake().calls("cuMemRelease") == releases + 1);
    CHECK(fake().liveAllocations() == 0);
    CHECK(fake().calls("cuGraphicsGLRegisterBuffer") == registers + 1);
    CHECK(fake().calls("cuGraphicsMapResources") == maps);

    cl_program prog = buildProgram(s.context, h100(), kScale);
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    REQUIRE_CL(err);

    std::vector<float> expected = init;
    const int frames = 3;
    for (int frame = 0; frame < frames; ++frame) {
        INFO("frame " << frame);
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(s.queue));
        CHECK(fake().calls("cuGraphicsMapResources") == maps + frame + 1);
        CHECK(fake().calls("cuGraphicsUnmapResources") == unmaps + frame);
        // The map went to the device's shared stream; the queue's own stream waits for it
        // (once) before its next work.
        const int streamWaits = fake().calls("cuStreamWaitEvent");
        // The CL buffer holds GL's bytes (read through the driver from the mapping).
        CHECK(readBuffer(s.queue, mem, n) == expected);
        // Zero copy: the kernel gets the mapped address itself.
        const uint64_t address = launchScale(s.queue, k, mem, n);
        CHECK(address == fake().lastMapped());
        CHECK(fake().calls("cuStreamWaitEvent") == streamWaits + 1);
        // The fake runs no kernel: do its work in the mapped memory, as the GPU would.
        auto* gpu = reinterpret_cast<float*>(uintptr_t(address));
        for (size_t i = 0; i < n; ++i)
            gpu[i] = expected[i] = expected[i] * 2.0f;
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        CHECK(fake().calls("cuGraphicsUnmapResources") == unmaps + frame + 1);
        // Released with the GL context current here: GL sees CL's writes now.
        CHECK(glBufferContents(vbo, n) == expected);
    }
    CHECK(fake().calls("cuGraphicsGLRegisterBuffer") == registers + 1);
    CHECK(fake().calls("cuMemExportToShareableHandle") == exports + 1);

    SECTION("host-side commands on the mapped buffer: maps, fills, rect transfers") {
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        auto* p = static_cast<float*>(
            clEnqueueMapBuffer(s.queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                               n * sizeof(float), 0, nullptr, nullptr, &err));
        REQUIRE_CL(err);
        // The host gets its own copy of the mapped bytes, not the device's address.
        CHECK(uint64_t(reinterpret_cast<uintptr_t>(p)) != fake().lastMapped());
        CHECK(std::vector<float>(p, p + n) == expected);
        p[0] = 1234.0f;
        p[n - 1] = 5678.0f;
        REQUIRE_CL(clEnqueueUnmapMemObject(s.queue, mem, p, 0, nullptr, nullptr));
        const float pattern = 7.0f;
        REQUIRE_CL(clEnqueueFillBuffer(s.queue, mem, &pattern, sizeof pattern, 16 * sizeof(float),
                                       16 * sizeof(float), 0, nullptr, nullptr));
        const size_t origin[3] = {32 * sizeof(float), 0, 0}, host[3] = {0, 0, 0},
                     region[3] = {4 * sizeof(float), 2, 1};
        const float rect[8] = {-1, -2, -3, -4, -5, -6, -7, -8};
        REQUIRE_CL(clEnqueueWriteBufferRect(s.queue, mem, CL_TRUE, origin, host, region,
                                            64 * sizeof(float), 0, 4 * sizeof(float), 0, rect, 0,
                                            nullptr, nullptr));
        float back[8] = {};
        REQUIRE_CL(clEnqueueReadBufferRect(s.queue, mem, CL_TRUE, origin, host, region,
                                           64 * sizeof(float), 0, 4 * sizeof(float), 0, back, 0,
                                           nullptr, nullptr));
        CHECK(std::equal(back, back + 8, rect));
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        expected[0] = 1234.0f;
        expected[n - 1] = 5678.0f;
        for (size_t i = 16; i < 32; ++i)
            expected[i] = pattern;
        for (size_t i = 0; i < 4; ++i) {
            expected[32 + i] = rect[i];
            expected[32 + 64 + i] = rect[4 + i];
        }
        CHECK(glBufferContents(vbo, n) == expected);
    }

    SECTION("a failed map falls back to host copies for that acquire") {
        fake().fail("cuGraphicsMapResources", 999);
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(s.queue)); // the acquire has run (and its map failed)
        fake().fail("cuGraphicsMapResources", 0);
        CHECK(readBuffer(s.queue, mem, n) == expected);
        const float one = 1.0f;
        REQUIRE_CL(
            clEnqueueWriteBuffer(s.queue, mem, CL_TRUE, 0, sizeof one, &one, 0, nullptr, nullptr));
        const int unmapsBefore = fake().calls("cuGraphicsUnmapResources");
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        CHECK(fake().calls("cuGraphicsUnmapResources") == unmapsBefore); // nothing was mapped
        expected[0] = one;
        CHECK(glBufferContents(vbo, n) == expected);
    }

    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(mem);
    CHECK(fake().waitForCalls("cuGraphicsUnregisterResource", unregisters + 1));
    glDeleteBuffers(1, &vbo);
}

TEST_CASE("cl_duet_gl_device_memory: a GL buffer that cannot move stays as it was",
          "[gl-interop]") {
    fake().setGlDevice(0);
    CHECK(deviceString(h100(), CL_DEVICE_EXTENSIONS).find("cl_duet_gl_device_memory") !=
          std::string::npos);
    auto create = reinterpret_cast<clCreateFromGLBufferInDeviceMemoryDUET_fn>(
        clGetExtensionFunctionAddressForPlatform(platformUnderTest(),
                                                 "clCreateFromGLBufferInDeviceMemoryDUET"));
    REQUIRE(create);
    auto props = egl().properties();
    cl_device_id d = h100();
    cl_int err = CL_SUCCESS;
    std::string notes;
    auto note = [](const char* m, const void*, size_t, void* self) {
        *static_cast<std::string*>(self) += std::string(m) + "\n";
    };
    cl_context context = clCreateContext(props.data(), 1, &d, note, &notes, &err);
    REQUIRE_CL(err);
    const size_t n = 1024;
    std::vector<float> init(n);
    std::iota(init.begin(), init.end(), 1.0f);
    GLuint vbo = glBuffer(init);
    auto isImmutable = [](GLuint b) {
        GLint v = -1;
        glBindBuffer(GL_ARRAY_BUFFER, b);
        glGetBufferParameteriv(GL_ARRAY_BUFFER, GL_BUFFER_IMMUTABLE_STORAGE, &v);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        return v;
    };

    SECTION("Mesa's GL imports only its own memory: CL_INVALID_OPERATION, the buffer unchanged") {
        const int exports = fake().calls("cuMemExportToShareableHandle");
        cl_mem mem = create(context, CL_MEM_READ_WRITE, vbo, &err);
        CHECK(mem == nullptr);
        CHECK_CL_ERR(CL_INVALID_OPERATION, err);
        INFO(notes);
        CHECK(notes.find("GL did not take memory of") != std::string::npos);
        CHECK(fake().calls("cuMemExportToShareableHandle") == exports + 1);
        CHECK(fake().liveAllocations() == 0); // the memory GL refused is freed
        CHECK(isImmutable(vbo) == GL_FALSE);
        CHECK(glBufferContents(vbo, n) == init);
        // And the standard call still shares it.
        mem = clCreateFromGLBuffer(context, CL_MEM_READ_WRITE, vbo, &err);
        REQUIRE_CL(err);
        clReleaseMemObject(mem);
    }
    SECTION("bad arguments") {
        CHECK(create(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, vbo, &err) == nullptr);
        CHECK_CL_ERR(CL_INVALID_VALUE, err);
        CHECK(create(nullptr, CL_MEM_READ_WRITE, vbo, &err) == nullptr);
        CHECK_CL_ERR(CL_INVALID_CONTEXT, err);
        CHECK(create(context, CL_MEM_READ_WRITE, vbo + 1000, &err) == nullptr);
        CHECK_CL_ERR(CL_INVALID_GL_OBJECT, err);
        GLuint empty = 0;
        glGenBuffers(1, &empty);
        glBindBuffer(GL_ARRAY_BUFFER, empty);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        CHECK(create(context, CL_MEM_READ_WRITE, empty, &err) == nullptr);
        CHECK_CL_ERR(CL_INVALID_GL_OBJECT, err);
        glDeleteBuffers(1, &empty);
        // Immutable storage cannot take another store.
        GLuint fixed = 0;
        glGenBuffers(1, &fixed);
        glBindBuffer(GL_ARRAY_BUFFER, fixed);
        glBufferStorage(GL_ARRAY_BUFFER, 4096, nullptr, 0);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        notes.clear();
        CHECK(create(context, CL_MEM_READ_WRITE, fixed, &err) == nullptr);
        CHECK_CL_ERR(CL_INVALID_GL_OBJECT, err);
        CHECK(notes.find("immutable storage") != std::string::npos);
        glDeleteBuffers(1, &fixed);
        // The GL context must be current on the calling thread.
        EGLContext current = eglGetCurrentContext();
        EGLDisplay display = eglGetCurrentDisplay();
        REQUIRE(eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT));
        notes.clear();
        CHECK(create(context, CL_MEM_READ_WRITE, vbo, &err) == nullptr);
        CHECK_CL_ERR(CL_INVALID_OPERATION, err);
        CHECK(notes.find("not current on the calling thread") != std::string::npos);
        REQUIRE(eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, current));
        CHECK(isImmutable(vbo) == GL_FALSE);
    }
    glDeleteBuffers(1, &vbo);
    clReleaseContext(context);
}

TEST_CASE("libduet-interop asks the device for its memory once, then shares buffers as they are",
          "[gl-interop]") {
    fake().setGlDevice(0);
    duet::interop::GLHandles gl;
    gl.display = eglGetCurrentDisplay();
    gl.context = eglGetCurrentContext();
    duet::interop::Options options;
    options.platform = "Duet";
    auto ctx = duet::interop::Context::create(gl, options);
    REQUIRE(ctx->mode() == duet::interop::Mode::Sharing);
    std::vector<float> init(1024, 3.0f);
    GLuint vbo[3] = {glBuffer(init), glBuffer(init), glBuffer(init)};
    // GL only draws this one: the device lists cl_duet_gl_device_memory, so the move is asked
    // for (the device exports memory for it); Mesa refuses the memory and the buffer is shared
    // as it is.
    const int exports = fake().calls("cuMemExportToShareableHandle");
    auto drawn = ctx->shareBuffer(vbo[0], CL_MEM_READ_WRITE, false);
    CHECK(fake().calls("cuMemExportToShareableHandle") == exports + 1);
    CHECK_FALSE(drawn->inDeviceMemory());
    CHECK_FALSE(drawn->hostCopy());
    // Not asked again in this context; a buffer GL writes is never moved.
    auto next = ctx->shareBuffer(vbo[1], CL_MEM_WRITE_ONLY, false);
    CHECK_FALSE(next->inDeviceMemory());
    auto written = ctx->shareBuffer(vbo[2], CL_MEM_READ_WRITE, true);
    CHECK_FALSE(written->inDeviceMemory());
    written.reset();
    drawn.reset();
    next.reset();
    ctx.reset();
    glDeleteBuffers(3, vbo);
}

TEST_CASE("a Mesa GL context without DUET_GL_INTEROP=cuda: host copies, no CUDA-GL call",
          "[gl-copies]") {
    std::vector<cl_device_id> current = glDevices(CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR);
    REQUIRE(current.size() == 1);
    CHECK(current[0] == h100()); // it can share, through host copies
    Shared s({h100()});
    std::vector<float> init(256);
    std::iota(init.begin(), init.end(), 0.5f);
    GLuint vbo = glBuffer(init);
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    CHECK(readBuffer(s.queue, mem, init.size()) == init);
    std::vector<float> next(init.size(), 3.0f);
    REQUIRE_CL(clEnqueueWriteBuffer(s.queue, mem, CL_TRUE, 0, next.size() * sizeof(float),
                                    next.data(), 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    CHECK(glBufferContents(vbo, next.size()) == next);
    clReleaseMemObject(mem);
    // Only a device that runs the GL context can hold a GL buffer's store.
    auto create = reinterpret_cast<clCreateFromGLBufferInDeviceMemoryDUET_fn>(
        clGetExtensionFunctionAddressForPlatform(platformUnderTest(),
                                                 "clCreateFromGLBufferInDeviceMemoryDUET"));
    REQUIRE(create);
    CHECK(create(s.context, CL_MEM_READ_WRITE, vbo, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_OPERATION, err);
    CHECK(fake().calls("cuMemExportToShareableHandle") == 0);
    glDeleteBuffers(1, &vbo);
    CHECK(fake().calls("cuGraphicsGLRegisterBuffer") == 0);
    CHECK(fake().calls("cuGraphicsMapResources") == 0);
    CHECK(fake().calls("cuGLGetDevices_v2") == 0);
}

namespace {

cl_device_id cpuDevice() {
    cl_device_id d = nullptr;
    REQUIRE_CL(clGetDeviceIDs(platformUnderTest(), CL_DEVICE_TYPE_CPU, 1, &d, nullptr));
    return d;
}

GLuint glTexture(GLenum target) {
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(target, t);
    glTexParameteri(target, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(target, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    return t;
}

template <class T>
std::vector<T> readImage(cl_command_queue q, cl_mem image, size_t w, size_t h, size_t d,
                         size_t channels) {
    std::vector<T> out(w * h * d * channels);
    const size_t origin[3] = {0, 0, 0}, region[3] = {w, h, d};
    REQUIRE_CL(clEnqueueReadImage(q, image, CL_TRUE, origin, region, 0, 0, out.data(), 0, nullptr,
                                  nullptr));
    return out;
}

template <class T>
void writeImage(cl_command_queue q, cl_mem image, size_t w, size_t h, size_t d,
                const std::vector<T>& texels) {
    const size_t origin[3] = {0, 0, 0}, region[3] = {w, h, d};
    REQUIRE_CL(clEnqueueWriteImage(q, image, CL_TRUE, origin, region, 0, 0, texels.data(), 0,
                                   nullptr, nullptr));
}

/// Acquire, check CL sees `before`, write `after`, release, and return what GL reads then.
template <class T>
void roundTrip(Shared& s, cl_mem image, size_t w, size_t h, size_t d, size_t channels,
               const std::vector<T>& before, const std::vector<T>& after) {
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &image, 0, nullptr, nullptr));
    CHECK(readImage<T>(s.queue, image, w, h, d, channels) == before);
    writeImage(s.queue, image, w, h, d, after);
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &image, 0, nullptr, nullptr));
}

} // namespace

TEST_CASE("textures and renderbuffers through CUDA arrays and pixel buffers", "[gl-images]") {
    fake().setGlDevice(0);
    std::vector<cl_device_id> current = glDevices(CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR);
    REQUIRE(current.size() == 1);
    CHECK(current[0] == h100());
    CHECK(glDevices(CL_DEVICES_FOR_GL_CONTEXT_KHR).size() == 2); // and the CPU device
    Shared s({h100(), cpuDevice()});
    cl_int err = CL_SUCCESS;
    const int images = fake().calls("cuGraphicsGLRegisterImage");
    const int buffers = fake().calls("cuGraphicsGLRegisterBuffer");

    SECTION("a 2D RGBA8 texture, registered as an image") {
        const size_t w = 8, h = 4;
        std::vector<uint8_t> texels(w * h * 4), next(w * h * 4);
        std::iota(texels.begin(), texels.end(), uint8_t(0));
        for (size_t i = 0; i < next.size(); ++i)
            next[i] = uint8_t(255 - i);
        GLuint tex = glTexture(GL_TEXTURE_2D);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, GLsizei(w), GLsizei(h), 0, GL_RGBA,
                     GL_UNSIGNED_BYTE, texels.data());
        cl_mem image =
            clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_2D, 0, tex, &err);
        REQUIRE_CL(err);
        CHECK(fake().calls("cuGraphicsGLRegisterImage") == images + 1);
        const int copies = fake().calls("cuMemcpy2DAsync_v2");
        roundTrip(s, image, w, h, 1, 4, texels, next);
        CHECK(fake().calls("cuMemcpy2DAsync_v2") == copies + 2); // array -> image -> array
        std::vector<uint8_t> back(w * h * 4);
        glBindTexture(GL_TEXTURE_2D, tex);
        glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, back.data());
        CHECK(back == next);
        clReleaseMemObject(image);
        glDeleteTextures(1, &tex);
    }

    SECTION("a 2D array, a 3D texture and a cube face") {
        const size_t w = 4, h = 3, layers = 3;
        std::vector<float> texels(w * h * layers * 4), next(texels.size());
        std::iota(texels.begin(), texels.end(), 0.25f);
        for (size_t i = 0; i < next.size(); ++i)
            next[i] = -float(i);
        GLuint arr = glTexture(GL_TEXTURE_2D_ARRAY);
        glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, GL_RGBA32F, GLsizei(w), GLsizei(h), GLsizei(layers), 0,
                     GL_RGBA, GL_FLOAT, texels.data());
        cl_mem a =
            clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_2D_ARRAY, 0, arr, &err);
        REQUIRE_CL(err);
        roundTrip(s, a, w, h, layers, 4, texels, next);
        std::vector<float> back(texels.size());
        glBindTexture(GL_TEXTURE_2D_ARRAY, arr);
        glGetTexImage(GL_TEXTURE_2D_ARRAY, 0, GL_RGBA, GL_FLOAT, back.data());
        CHECK(back == next);

        std::vector<float> voxels(w * h * layers), voxelsNext(voxels.size());
        std::iota(voxels.begin(), voxels.end(), 10.0f);
        for (size_t i = 0; i < voxels.size(); ++i)
            voxelsNext[i] = float(i) * 0.5f;
        GLuint vol = glTexture(GL_TEXTURE_3D);
        glTexImage3D(GL_TEXTURE_3D, 0, GL_R32F, GLsizei(w), GLsizei(h), GLsizei(layers), 0, GL_RED,
                     GL_FLOAT, voxels.data());
        cl_mem v = clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_3D, 0, vol, &err);
        REQUIRE_CL(err);
        roundTrip(s, v, w, h, layers, 1, voxels, voxelsNext);
        std::vector<float> volBack(voxels.size());
        glBindTexture(GL_TEXTURE_3D, vol);
        glGetTexImage(GL_TEXTURE_3D, 0, GL_RED, GL_FLOAT, volBack.data());
        CHECK(volBack == voxelsNext);

        GLuint cube = glTexture(GL_TEXTURE_CUBE_MAP);
        std::vector<uint8_t> face(4 * 4 * 4, 9), faceNext(face.size(), 200);
        for (GLenum f = GL_TEXTURE_CUBE_MAP_POSITIVE_X; f <= GL_TEXTURE_CUBE_MAP_NEGATIVE_Z; ++f)
            glTexImage2D(f, 0, GL_RGBA8, 4, 4, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                         f == GL_TEXTURE_CUBE_MAP_POSITIVE_Y ? face.data() : nullptr);
        cl_mem c = clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE,
                                         GL_TEXTURE_CUBE_MAP_POSITIVE_Y, 0, cube, &err);
        REQUIRE_CL(err);
        roundTrip(s, c, 4, 4, 1, 4, face, faceNext);
        std::vector<uint8_t> faceBack(face.size());
        glBindTexture(GL_TEXTURE_CUBE_MAP, cube);
        glGetTexImage(GL_TEXTURE_CUBE_MAP_POSITIVE_Y, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                      faceBack.data());
        CHECK(faceBack == faceNext);
        CHECK(fake().calls("cuGraphicsGLRegisterImage") == images + 3);
        for (cl_mem m : {a, v, c})
            clReleaseMemObject(m);
        GLuint texs[] = {arr, vol, cube};
        glDeleteTextures(3, texs);
    }

    SECTION("a renderbuffer") {
        GLuint rb = 0;
        glGenRenderbuffers(1, &rb);
        glBindRenderbuffer(GL_RENDERBUFFER, rb);
        glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, 4, 2);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        GLuint fbo = 0;
        glGenFramebuffers(1, &fbo);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb);
        glClearColor(1.0f, 0.0f, 0.0f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        cl_mem image = clCreateFromGLRenderbuffer(s.context, CL_MEM_READ_WRITE, rb, &err);
        REQUIRE_CL(err);
        CHECK(fake().calls("cuGraphicsGLRegisterImage") == images + 1);
        std::vector<uint8_t> red(4 * 2 * 4), green(red.size());
        for (size_t i = 0; i < red.size(); i += 4) {
            red[i] = 255, red[i + 3] = 255;
            green[i + 1] = 255, green[i + 3] = 255;
        }
        roundTrip(s, image, 4, 2, 1, 4, red, green);
        std::vector<uint8_t> back(red.size());
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
        glReadPixels(0, 0, 4, 2, GL_RGBA, GL_UNSIGNED_BYTE, back.data());
        glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        CHECK(back == green);
        clReleaseMemObject(image);
        glDeleteFramebuffers(1, &fbo);
        glDeleteRenderbuffers(1, &rb);
    }

    SECTION("depth and sRGB textures go through pixel buffers that GL packs and unpacks") {
        const size_t w = 8, h = 8;
        std::vector<float> depth(w * h), depthNext(w * h);
        for (size_t i = 0; i < depth.size(); ++i) {
            depth[i] = float(i) / float(depth.size());
            depthNext[i] = 1.0f - depth[i];
        }
        GLuint dt = glTexture(GL_TEXTURE_2D);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_DEPTH_COMPONENT32F, GLsizei(w), GLsizei(h), 0,
                     GL_DEPTH_COMPONENT, GL_FLOAT, depth.data());
        cl_mem d = clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_2D, 0, dt, &err);
        REQUIRE_CL(err);
        CHECK(fake().calls("cuGraphicsGLRegisterImage") == images);       // CUDA cannot map depth
        CHECK(fake().calls("cuGraphicsGLRegisterBuffer") == buffers + 1); // its pixel buffer
        roundTrip(s, d, w, h, 1, 1, depth, depthNext);
        std::vector<float> back(depth.size());
        glBindTexture(GL_TEXTURE_2D, dt);
        glGetTexImage(GL_TEXTURE_2D, 0, GL_DEPTH_COMPONENT, GL_FLOAT, back.data());
        CHECK(back == depthNext);

        std::vector<uint8_t> srgb(w * h * 4), srgbNext(srgb.size());
        std::iota(srgb.begin(), srgb.end(), uint8_t(3));
        for (size_t i = 0; i < srgbNext.size(); ++i)
            srgbNext[i] = uint8_t(i * 7);
        GLuint st = glTexture(GL_TEXTURE_2D);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_SRGB8_ALPHA8, GLsizei(w), GLsizei(h), 0, GL_RGBA,
                     GL_UNSIGNED_BYTE, srgb.data());
        cl_mem sm = clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_2D, 0, st, &err);
        REQUIRE_CL(err);
        CHECK(fake().calls("cuGraphicsGLRegisterBuffer") == buffers + 2);
        roundTrip(s, sm, w, h, 1, 4, srgb, srgbNext); // the encoded bytes, unconverted
        std::vector<uint8_t> srgbBack(srgb.size());
        glBindTexture(GL_TEXTURE_2D, st);
        glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, srgbBack.data());
        CHECK(srgbBack == srgbNext);
        clReleaseMemObject(d);
        clReleaseMemObject(sm);
        GLuint texs[] = {dt, st};
        glDeleteTextures(2, texs);
    }

    SECTION("a buffer acquired on the CPU device's queue: a copy on the GPU, then CPU kernels") {
        cl_command_queue cpuQueue =
            clCreateCommandQueueWithProperties(s.context, cpuDevice(), nullptr, &err);
        REQUIRE_CL(err);
        std::vector<float> init(1024);
        std::iota(init.begin(), init.end(), 0.0f);
        GLuint vbo = glBuffer(init);
        cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
        REQUIRE_CL(err);
        cl_program prog = buildProgram(s.context, cpuDevice(), kScale);
        cl_kernel k = clCreateKernel(prog, "scale", &err);
        REQUIRE_CL(err);
        float two = 2.0f;
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof mem, &mem));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof two, &two));
        const int maps = fake().calls("cuGraphicsMapResources");
        REQUIRE_CL(clEnqueueAcquireGLObjects(cpuQueue, 1, &mem, 0, nullptr, nullptr));
        const size_t n = init.size();
        REQUIRE_CL(
            clEnqueueNDRangeKernel(cpuQueue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueReleaseGLObjects(cpuQueue, 1, &mem, 0, nullptr, nullptr));
        CHECK(fake().calls("cuGraphicsMapResources") == maps + 1);
        std::vector<float> expected(n);
        for (size_t i = 0; i < n; ++i)
            expected[i] = init[i] * 2.0f;
        CHECK(glBufferContents(vbo, n) == expected);
        clReleaseKernel(k);
        clReleaseProgram(prog);
        clReleaseMemObject(mem);
        clReleaseCommandQueue(cpuQueue);
        glDeleteBuffers(1, &vbo);
    }
}
