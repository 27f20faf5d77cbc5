// GL sharing with a surfaceless Mesa EGL context: context queries and creation, GL buffers
// written and read by kernels, GL sync events, and the error cases of cl_khr_gl_sharing.
#include "support/cl_test.hpp"
#include "support/surfaceless_egl.hpp"

#define EGL_NO_X11
#include <EGL/egl.h>
#include <EGL/eglext.h>
#define GL_GLEXT_PROTOTYPES
#include <GL/glcorearb.h>

#include <CL/cl_gl.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>

using namespace duet::test;

namespace {

/// A CL context shared with the test's EGL context, and a queue.
struct Shared {
    cl_platform_id platform = platformUnderTest();
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    Shared() {
        auto props = egl().properties(platform);
        REQUIRE_CL(clGetGLContextInfoKHR(props.data(), CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                         sizeof device, &device, nullptr));
        cl_int err = CL_SUCCESS;
        context = clCreateContext(props.data(), 1, &device, nullptr, nullptr, &err);
        REQUIRE_CL(err);
        queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
        REQUIRE_CL(err);
    }
    ~Shared() {
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
};

GLuint makeGlBuffer(size_t bytes, const void* data) {
    GLuint b = 0;
    glGenBuffers(1, &b);
    glBindBuffer(GL_ARRAY_BUFFER, b);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(bytes), data, GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return b;
}

const char* kKernels = R"(
kernel void scale(global float* v, float k) { size_t i = get_global_id(0); v[i] = v[i] * k + 1.0f; }
kernel void fill(global int* v) { v[get_global_id(0)] = (int)get_global_id(0) * 3; }
)";

/// The test context's GL renderer ("llvmpipe (LLVM ...)").
std::string glRenderer() {
    const GLubyte* r = glGetString(GL_RENDERER);
    return r ? reinterpret_cast<const char*>(r) : "";
}

} // namespace

TEST_CASE("extension strings and extension function addresses", "[gl]") {
    cl_platform_id p = platformUnderTest();
    std::string pext = platformString(p, CL_PLATFORM_EXTENSIONS);
    std::string dext = deviceString(defaultDevice(), CL_DEVICE_EXTENSIONS);
    for (const char* e : {"cl_khr_gl_sharing", "cl_khr_gl_event", "cl_khr_gl_depth_images"}) {
        CHECK(pext.find(e) != std::string::npos);
        CHECK(dext.find(e) != std::string::npos);
    }
    for (const char* fn :
         {"clGetGLContextInfoKHR", "clCreateFromGLBuffer", "clGetGLObjectInfo",
          "clEnqueueAcquireGLObjects", "clEnqueueReleaseGLObjects", "clCreateEventFromGLsyncKHR"}) {
        INFO(fn);
        CHECK(clGetExtensionFunctionAddressForPlatform(p, fn) != nullptr);
    }
    CHECK(clGetExtensionFunctionAddressForPlatform(p, "clNoSuchFunctionKHR") == nullptr);
}

TEST_CASE("clGetGLContextInfoKHR finds the Duet device", "[gl]") {
    cl_platform_id p = platformUnderTest();
    auto props = egl().properties(p);
    cl_device_id current = nullptr;
    size_t size = 0;
    REQUIRE_CL(clGetGLContextInfoKHR(props.data(), CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                     sizeof current, &current, &size));
    CHECK(size == sizeof(cl_device_id));
    REQUIRE_CL(
        clGetGLContextInfoKHR(props.data(), CL_DEVICES_FOR_GL_CONTEXT_KHR, 0, nullptr, &size));
    std::vector<cl_device_id> all(size / sizeof(cl_device_id));
    REQUIRE(!all.empty());
    REQUIRE_CL(clGetGLContextInfoKHR(props.data(), CL_DEVICES_FOR_GL_CONTEXT_KHR, size, all.data(),
                                     nullptr));
    // The current device is the first that can share: under Mesa the default (CPU) device; under
    // NVIDIA's GL with Duet's NVIDIA device present, that device (it maps GL's objects itself).
    CHECK(current == all.front());
    if (glRenderer().find("NVIDIA") == std::string::npos)
        CHECK(current == defaultDevice());
    REQUIRE_CL(clGetGLContextInfoKHR(props.data(), CL_DEVICES_FOR_GL_CONTEXT_KHR, size, all.data(),
                                     nullptr));
    CHECK(std::find(all.begin(), all.end(), current) != all.end());

    SECTION("errors") {
        CHECK_CL_ERR(CL_INVALID_VALUE, clGetGLContextInfoKHR(props.data(), 0x1234, sizeof current,
                                                             &current, nullptr));
        CHECK_CL_ERR(CL_INVALID_VALUE,
                     clGetGLContextInfoKHR(props.data(), CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, 1,
                                           &current, nullptr));
        // No GL context at all.
        cl_context_properties none[] = {CL_CONTEXT_PLATFORM, cl_context_properties(p), 0};
        CHECK_CL_ERR(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                     clGetGLContextInfoKHR(none, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                           sizeof current, &current, nullptr));
        // A GL context handle that is not one.
        int notAContext = 0;
        cl_context_properties bogus[] = {CL_CONTEXT_PLATFORM,
                                         cl_context_properties(p),
                                         CL_GL_CONTEXT_KHR,
                                         cl_context_properties(&notAContext),
                                         CL_EGL_DISPLAY_KHR,
                                         cl_context_properties(egl().display),
                                         0};
        CHECK_CL_ERR(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                     clGetGLContextInfoKHR(bogus, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                           sizeof current, &current, nullptr));
        // Two window systems at once.
        cl_context_properties two[] = {CL_CONTEXT_PLATFORM,
                                       cl_context_properties(p),
                                       CL_GL_CONTEXT_KHR,
                                       cl_context_properties(egl().context),
                                       CL_EGL_DISPLAY_KHR,
                                       cl_context_properties(egl().display),
                                       CL_GLX_DISPLAY_KHR,
                                       cl_context_properties(egl().display),
                                       0};
        CHECK_CL_ERR(CL_INVALID_OPERATION,
                     clGetGLContextInfoKHR(two, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                           sizeof current, &current, nullptr));
        // A window system this platform does not have (WGL).
        cl_context_properties wgl[] = {CL_CONTEXT_PLATFORM,
                                       cl_context_properties(p),
                                       CL_GL_CONTEXT_KHR,
                                       cl_context_properties(egl().context),
                                       CL_WGL_HDC_KHR,
                                       cl_context_properties(1),
                                       0};
        CHECK_CL_ERR(CL_INVALID_OPERATION,
                     clGetGLContextInfoKHR(wgl, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                           sizeof current, &current, nullptr));
        // (The ICD loader needs CL_CONTEXT_PLATFORM to route the call to Duet.)
        cl_context_properties unknown[] = {CL_CONTEXT_PLATFORM, cl_context_properties(p), 0x7777, 1,
                                           0};
        CHECK_CL_ERR(CL_INVALID_PROPERTY,
                     clGetGLContextInfoKHR(unknown, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                           sizeof current, &current, nullptr));
    }
}

TEST_CASE("context creation with GL properties", "[gl]") {
    cl_platform_id p = platformUnderTest();
    auto props = egl().properties(p);
    cl_device_id dev = defaultDevice();
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(props.data(), 1, &dev, nullptr, nullptr, &err);
    REQUIRE_CL(err);
    size_t size = 0;
    REQUIRE_CL(clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, 0, nullptr, &size));
    std::vector<cl_context_properties> back(size / sizeof(cl_context_properties));
    REQUIRE_CL(clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, size, back.data(), nullptr));
    CHECK(back == props);
    clReleaseContext(ctx);

    ctx = clCreateContextFromType(props.data(), CL_DEVICE_TYPE_ALL, nullptr, nullptr, &err);
    REQUIRE_CL(err);
    clReleaseContext(ctx);

    int notAContext = 0;
    cl_context_properties bogus[] = {CL_CONTEXT_PLATFORM,
                                     cl_context_properties(p),
                                     CL_GL_CONTEXT_KHR,
                                     cl_context_properties(&notAContext),
                                     CL_EGL_DISPLAY_KHR,
                                     cl_context_properties(egl().display),
                                     0};
    CHECK(clCreateContext(bogus, 1, &dev, nullptr, nullptr, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR, err);
    cl_context_properties twice[] = {CL_GL_CONTEXT_KHR,
                                     cl_context_properties(egl().context),
                                     CL_GL_CONTEXT_KHR,
                                     cl_context_properties(egl().context),
                                     CL_EGL_DISPLAY_KHR,
                                     cl_context_properties(egl().display),
                                     0};
    CHECK(clCreateContext(twice, 1, &dev, nullptr, nullptr, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_PROPERTY, err);
    cl_context_properties cgl[] = {CL_GL_CONTEXT_KHR, cl_context_properties(egl().context),
                                   CL_CGL_SHAREGROUP_KHR, cl_context_properties(1), 0};
    CHECK(clCreateContext(cgl, 1, &dev, nullptr, nullptr, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_OPERATION, err);
}

TEST_CASE("a GL buffer written by a kernel reads back with glGetBufferSubData", "[gl]") {
    Shared s;
    const size_t n = 1024;
    std::vector<float> init(n);
    std::iota(init.begin(), init.end(), 0.0f);
    GLuint vbo = makeGlBuffer(n * sizeof(float), init.data());
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    size_t memSize = 0;
    REQUIRE_CL(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof memSize, &memSize, nullptr));
    CHECK(memSize == n * sizeof(float));
    cl_gl_object_type type = 0;
    cl_GLuint name = 0;
    REQUIRE_CL(clGetGLObjectInfo(mem, &type, &name));
    CHECK(type == CL_GL_OBJECT_BUFFER);
    CHECK(name == vbo);

    cl_program prog = buildProgram(s.context, s.device, kKernels);
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    REQUIRE_CL(err);
    float factor = 2.0f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof mem, &mem));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof factor, &factor));

    // Not acquired yet: CL_INVALID_OPERATION.
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    cl_event acquired = nullptr;
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, &acquired));
    cl_command_type ct = 0;
    REQUIRE_CL(clGetEventInfo(acquired, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, nullptr));
    CHECK(ct == CL_COMMAND_ACQUIRE_GL_OBJECTS);
    clReleaseEvent(acquired);
    // Acquired twice: CL_INVALID_OPERATION.
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    // Released twice.
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    // No clFinish: GL commands after the release see the kernel's writes.

    std::vector<float> back(n, -1.0f);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glGetBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(n * sizeof(float)), back.data());
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    for (size_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(back[i] == float(i) * 2.0f + 1.0f);
    }

    // Released: the kernel may not use it again.
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(mem);
    glDeleteBuffers(1, &vbo);
}

TEST_CASE("one GL buffer shared by every device that can share with the GL context",
          "[gl][multi]") {
    cl_platform_id p = platformUnderTest();
    auto props = egl().properties(p);
    size_t size = 0;
    REQUIRE_CL(
        clGetGLContextInfoKHR(props.data(), CL_DEVICES_FOR_GL_CONTEXT_KHR, 0, nullptr, &size));
    std::vector<cl_device_id> devices(size / sizeof(cl_device_id));
    REQUIRE_CL(clGetGLContextInfoKHR(props.data(), CL_DEVICES_FOR_GL_CONTEXT_KHR, size,
                                     devices.data(), nullptr));
    // DUET_DEVICES=all: the CPU device and the GCN model (and the NVIDIA device under NVIDIA's
    // GL) share with GL.
    const char* which = std::getenv("DUET_DEVICES");
    if (which && std::string(which) == "all") {
        REQUIRE(devices.size() >= 2);
        int gpus = 0;
        for (cl_device_id d : devices) {
            cl_device_type type = 0;
            REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, nullptr));
            gpus += (type & CL_DEVICE_TYPE_GPU) != 0;
        }
        CHECK(gpus >= 1);
    }
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(props.data(), cl_uint(devices.size()), devices.data(), nullptr,
                                     nullptr, &err);
    REQUIRE_CL(err);
    std::vector<cl_command_queue> queues;
    for (cl_device_id d : devices) {
        queues.push_back(clCreateCommandQueueWithProperties(ctx, d, nullptr, &err));
        REQUIRE_CL(err);
    }
    const size_t n = 4096;
    std::vector<float> init(n);
    std::iota(init.begin(), init.end(), 0.0f);
    GLuint vbo = makeGlBuffer(n * sizeof(float), init.data());
    cl_mem mem = clCreateFromGLBuffer(ctx, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &kKernels, nullptr, &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clBuildProgram(prog, 0, nullptr, "", nullptr, nullptr)); // every device
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    REQUIRE_CL(err);
    const float factor = 2.0f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof mem, &mem));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof factor, &factor));
    // Each device in turn acquires the buffer, scales it in place and releases it; the
    // next device waits on the release.
    cl_event released = nullptr;
    for (cl_command_queue q : queues) {
        cl_uint waits = released ? 1 : 0;
        REQUIRE_CL(
            clEnqueueAcquireGLObjects(q, 1, &mem, waits, released ? &released : nullptr, nullptr));
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        if (released)
            clReleaseEvent(released);
        REQUIRE_CL(clEnqueueReleaseGLObjects(q, 1, &mem, 0, nullptr, &released));
        REQUIRE_CL(clFlush(q));
    }
    REQUIRE_CL(clWaitForEvents(1, &released));
    clReleaseEvent(released);

    std::vector<float> back(n, -1.0f);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glGetBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(n * sizeof(float)), back.data());
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    for (size_t i = 0; i < n; ++i) {
        float want = float(i);
        for (size_t d = 0; d < devices.size(); ++d)
            want = want * factor + 1.0f;
        INFO("element " << i << " after " << devices.size() << " devices");
        REQUIRE(back[i] == want);
    }
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(mem);
    for (cl_command_queue q : queues)
        clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    glDeleteBuffers(1, &vbo);
}

TEST_CASE("a buffer filled by GL after creation is what the kernel reads", "[gl]") {
    Shared s;
    const size_t n = 256;
    GLuint vbo = makeGlBuffer(n * sizeof(int), nullptr);
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_ONLY, vbo, &err);
    REQUIRE_CL(err);
    cl_mem out = clCreateBuffer(s.context, CL_MEM_WRITE_ONLY, n * sizeof(int), nullptr, &err);
    REQUIRE_CL(err);
    // GL writes after the CL object exists, with no glFinish: acquire synchronises.
    std::vector<int> data(n);
    for (size_t i = 0; i < n; ++i)
        data[i] = int(i * i) - 7;
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(n * sizeof(int)), data.data());
    glBindBuffer(GL_ARRAY_BUFFER, 0);

    cl_program prog = buildProgram(s.context, s.device,
                                   "kernel void neg(global const int* a, global int* b) {"
                                   " size_t i = get_global_id(0); b[i] = -a[i]; }");
    cl_kernel k = clCreateKernel(prog, "neg", &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof mem, &mem));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof out, &out));
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    std::vector<int> got(n);
    REQUIRE_CL(clEnqueueReadBuffer(s.queue, out, CL_TRUE, 0, n * sizeof(int), got.data(), 0,
                                   nullptr, nullptr));
    for (size_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(got[i] == -data[i]);
    }
    // Read-only: release does not write the host copy back over later GL data.
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(out);
    clReleaseMemObject(mem);
    glDeleteBuffers(1, &vbo);
}

TEST_CASE("GL object error cases", "[gl]") {
    Shared s;
    cl_int err = CL_SUCCESS;
    GLuint vbo = makeGlBuffer(64, nullptr);
    // Not a GL buffer object.
    CHECK(clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, 987654, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_GL_OBJECT, err);
    // A GL name with no data store.
    GLuint empty = 0;
    glGenBuffers(1, &empty);
    glBindBuffer(GL_ARRAY_BUFFER, empty);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    CHECK(clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, empty, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_GL_OBJECT, err);
    // Bad flags.
    CHECK(clCreateFromGLBuffer(s.context, CL_MEM_USE_HOST_PTR, vbo, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_VALUE, err);
    CHECK(clCreateFromGLBuffer(nullptr, CL_MEM_READ_WRITE, vbo, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_CONTEXT, err);

    // A context without GL sharing.
    WithQueue plain;
    CHECK(clCreateFromGLBuffer(plain.context, CL_MEM_READ_WRITE, vbo, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_CONTEXT, err);

    cl_mem clOnly = clCreateBuffer(s.context, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE_CL(err);
    cl_gl_object_type type;
    CHECK_CL_ERR(CL_INVALID_GL_OBJECT, clGetGLObjectInfo(clOnly, &type, nullptr));
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clGetGLObjectInfo(nullptr, &type, nullptr));
    CHECK_CL_ERR(CL_INVALID_GL_OBJECT,
                 clEnqueueAcquireGLObjects(s.queue, 1, &clOnly, 0, nullptr, nullptr));

    cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueAcquireGLObjects(s.queue, 1, nullptr, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueAcquireGLObjects(s.queue, 0, &mem, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_SUCCESS, clEnqueueAcquireGLObjects(s.queue, 0, nullptr, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE,
                 clEnqueueAcquireGLObjects(nullptr, 1, &mem, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_CONTEXT,
                 clEnqueueAcquireGLObjects(plain.queue, 1, &mem, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_EVENT_WAIT_LIST,
                 clEnqueueAcquireGLObjects(s.queue, 1, &mem, 1, nullptr, nullptr));
    // Release before acquire.
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    // Textures are not shared yet: a plain buffer has no texture information.
    CHECK_CL_ERR(CL_INVALID_GL_OBJECT,
                 clGetGLTextureInfo(mem, CL_GL_TEXTURE_TARGET, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(s.queue));
    clReleaseMemObject(mem);
    clReleaseMemObject(clOnly);
    glDeleteBuffers(1, &empty);
    glDeleteBuffers(1, &vbo);
}

TEST_CASE("clCreateEventFromGLsyncKHR completes when GL passes the fence", "[gl]") {
    Shared s;
    cl_int err = CL_SUCCESS;
    GLsync sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    glFlush();
    cl_event e = clCreateEventFromGLsyncKHR(s.context, reinterpret_cast<cl_GLsync>(sync), &err);
    REQUIRE_CL(err);
    cl_command_type ct = 0;
    REQUIRE_CL(clGetEventInfo(e, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, nullptr));
    CHECK(ct == CL_COMMAND_GL_FENCE_SYNC_OBJECT_KHR);
    REQUIRE_CL(clWaitForEvents(1, &e));
    cl_int status = 1;
    REQUIRE_CL(
        clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr));
    CHECK(status == CL_COMPLETE);
    // Commands can wait for it.
    cl_event marker = nullptr;
    REQUIRE_CL(clEnqueueMarkerWithWaitList(s.queue, 1, &e, &marker));
    REQUIRE_CL(clWaitForEvents(1, &marker));
    clReleaseEvent(marker);
    clReleaseEvent(e);
    glDeleteSync(sync);

    CHECK(clCreateEventFromGLsyncKHR(s.context, reinterpret_cast<cl_GLsync>(&err), &err) ==
          nullptr);
    CHECK_CL_ERR(CL_INVALID_GL_OBJECT, err);
    WithQueue plain;
    CHECK(clCreateEventFromGLsyncKHR(plain.context, nullptr, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_CONTEXT, err);
}

TEST_CASE("a GL sync event released with its context before it completes", "[gl]") {
    GLsync sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    glFlush();
    for (int i = 0; i < 20; ++i) {
        Shared s;
        cl_int err = CL_SUCCESS;
        cl_event e = clCreateEventFromGLsyncKHR(s.context, reinterpret_cast<cl_GLsync>(sync), &err);
        REQUIRE_CL(err);
        clReleaseEvent(e); // the context goes with `s`, the event's last reference is Duet's
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    glDeleteSync(sync);
}

namespace {
GLuint makeTexture(GLenum target, GLenum bindTarget, GLint internal, int w, int h, GLenum format,
                   GLenum type, const void* data) {
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(bindTarget, t);
    glTexImage2D(target, 0, internal, w, h, 0, format, type, data);
    glBindTexture(bindTarget, 0);
    return t;
}
} // namespace

TEST_CASE("GL textures: a kernel inverts an RGBA8 texture, GL reads the result", "[gl]") {
    Shared s;
    const int w = 8, h = 4;
    std::vector<unsigned char> px(w * h * 4);
    for (size_t i = 0; i < px.size(); ++i)
        px[i] = (unsigned char)(i * 7);
    GLuint src = makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, GL_RGBA8, w, h, GL_RGBA,
                             GL_UNSIGNED_BYTE, px.data());
    GLuint dst = makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, GL_RGBA8, w, h, GL_RGBA,
                             GL_UNSIGNED_BYTE, nullptr);
    cl_int err = CL_SUCCESS;
    cl_mem in = clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, src, &err);
    REQUIRE_CL(err);
    cl_mem out = clCreateFromGLTexture(s.context, CL_MEM_WRITE_ONLY, GL_TEXTURE_2D, 0, dst, &err);
    REQUIRE_CL(err);
    cl_image_format fmt{};
    REQUIRE_CL(clGetImageInfo(in, CL_IMAGE_FORMAT, sizeof fmt, &fmt, nullptr));
    CHECK(fmt.image_channel_order == CL_RGBA);
    CHECK(fmt.image_channel_data_type == CL_UNORM_INT8);
    cl_gl_object_type type = 0;
    REQUIRE_CL(clGetGLObjectInfo(in, &type, nullptr));
    CHECK(type == CL_GL_OBJECT_TEXTURE2D);
    cl_GLenum target = 0;
    cl_GLint level = -1;
    REQUIRE_CL(clGetGLTextureInfo(in, CL_GL_TEXTURE_TARGET, sizeof target, &target, nullptr));
    REQUIRE_CL(clGetGLTextureInfo(in, CL_GL_MIPMAP_LEVEL, sizeof level, &level, nullptr));
    CHECK(target == GL_TEXTURE_2D);
    CHECK(level == 0);

    cl_program prog = buildProgram(s.context, s.device, R"(
kernel void invert(read_only image2d_t a, write_only image2d_t b) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imageui(b, p, (uint4)(255) - convert_uint4(read_imagef(a, p) * 255.0f + 0.5f));
}
kernel void invertf(read_only image2d_t a, write_only image2d_t b) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imagef(b, p, (float4)(1.0f) - read_imagef(a, p));
})");
    cl_kernel k = clCreateKernel(prog, "invertf", &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof in, &in));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof out, &out));
    size_t global[2] = {w, h};
    CHECK_CL_ERR(CL_INVALID_OPERATION, clEnqueueNDRangeKernel(s.queue, k, 2, nullptr, global,
                                                              nullptr, 0, nullptr, nullptr));
    cl_mem both[2] = {in, out};
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 2, both, 0, nullptr, nullptr));
    REQUIRE_CL(
        clEnqueueNDRangeKernel(s.queue, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 2, both, 0, nullptr, nullptr));
    std::vector<unsigned char> back(px.size(), 0);
    glBindTexture(GL_TEXTURE_2D, dst);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, back.data());
    glBindTexture(GL_TEXTURE_2D, 0);
    for (size_t i = 0; i < px.size(); ++i) {
        INFO("byte " << i);
        REQUIRE(int(back[i]) == 255 - int(px[i]));
    }
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    glDeleteTextures(1, &src);
    glDeleteTextures(1, &dst);
}

TEST_CASE("GL textures: sRGB, depth, cube faces, renderbuffers and their errors", "[gl]") {
    Shared s;
    cl_int err = CL_SUCCESS;
    const int w = 4, h = 4;
    GLuint srgb = makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, GL_SRGB8_ALPHA8, w, h, GL_RGBA,
                              GL_UNSIGNED_BYTE, nullptr);
    std::vector<float> depthData(w * h);
    for (int i = 0; i < w * h; ++i)
        depthData[i] = float(i) / 16.0f;
    GLuint depth = makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, GL_DEPTH_COMPONENT32F, w, h,
                               GL_DEPTH_COMPONENT, GL_FLOAT, depthData.data());
    GLuint cube = 0;
    glGenTextures(1, &cube);
    glBindTexture(GL_TEXTURE_CUBE_MAP, cube);
    for (int f = 0; f < 6; ++f)
        glTexImage2D(GL_TEXTURE_CUBE_MAP_POSITIVE_X + f, 0, GL_R32F, w, w, 0, GL_RED, GL_FLOAT,
                     nullptr);
    glBindTexture(GL_TEXTURE_CUBE_MAP, 0);
    GLuint rgb =
        makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, GL_RGB8, w, h, GL_RGB, GL_UNSIGNED_BYTE, nullptr);

    auto format = [](cl_mem m) {
        cl_image_format f{};
        clGetImageInfo(m, CL_IMAGE_FORMAT, sizeof f, &f, nullptr);
        return f;
    };
    cl_mem m = clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, srgb, &err);
    REQUIRE_CL(err);
    CHECK(format(m).image_channel_order == CL_sRGBA);
    clReleaseMemObject(m);

    m = clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, depth, &err);
    REQUIRE_CL(err);
    CHECK(format(m).image_channel_order == CL_DEPTH);
    CHECK(format(m).image_channel_data_type == CL_FLOAT);
    // The depth values reach CL at acquire.
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &m, 0, nullptr, nullptr));
    std::vector<float> got(w * h, -1.0f);
    size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
    REQUIRE_CL(clEnqueueReadImage(s.queue, m, CL_TRUE, origin, region, 0, 0, got.data(), 0, nullptr,
                                  nullptr));
    CHECK(got == depthData);
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &m, 0, nullptr, nullptr));
    clReleaseMemObject(m);

    // DEPTH_COMPONENT16 and 24 share as CL_DEPTH too.
    for (GLint internal : {GL_DEPTH_COMPONENT16, GL_DEPTH_COMPONENT24}) {
        GLuint d = makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, internal, w, h, GL_DEPTH_COMPONENT,
                               GL_FLOAT, depthData.data());
        m = clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, d, &err);
        REQUIRE_CL(err);
        CHECK(format(m).image_channel_order == CL_DEPTH);
        clReleaseMemObject(m);
        glDeleteTextures(1, &d);
    }

    m = clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_CUBE_MAP_NEGATIVE_Y, 0, cube,
                              &err);
    REQUIRE_CL(err);
    cl_GLenum target = 0;
    REQUIRE_CL(clGetGLTextureInfo(m, CL_GL_TEXTURE_TARGET, sizeof target, &target, nullptr));
    CHECK(target == GL_TEXTURE_CUBE_MAP_NEGATIVE_Y);
    clReleaseMemObject(m);

    GLuint rb = 0;
    glGenRenderbuffers(1, &rb);
    glBindRenderbuffer(GL_RENDERBUFFER, rb);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    glBindRenderbuffer(GL_RENDERBUFFER, 0);
    m = clCreateFromGLRenderbuffer(s.context, CL_MEM_READ_WRITE, rb, &err);
    REQUIRE_CL(err);
    cl_gl_object_type type = 0;
    REQUIRE_CL(clGetGLObjectInfo(m, &type, nullptr));
    CHECK(type == CL_GL_OBJECT_RENDERBUFFER);
    CHECK_CL_ERR(CL_INVALID_GL_OBJECT,
                 clGetGLTextureInfo(m, CL_GL_TEXTURE_TARGET, sizeof target, &target, nullptr));
    clReleaseMemObject(m);

    // Errors.
    CHECK(clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, 424242, &err) ==
          nullptr);
    CHECK_CL_ERR(CL_INVALID_GL_OBJECT, err);
    CHECK(clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_3D, 0, srgb, &err) ==
          nullptr);
    CHECK_CL_ERR(CL_INVALID_GL_OBJECT, err); // a 2D texture named with another target
    CHECK(clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 3, srgb, &err) ==
          nullptr);
    CHECK_CL_ERR(CL_INVALID_MIP_LEVEL, err);
    CHECK(clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, rgb, &err) ==
          nullptr);
    CHECK_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, err);
    CHECK(clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_CUBE_MAP, 0, cube, &err) ==
          nullptr);
    CHECK_CL_ERR(CL_INVALID_VALUE, err);
    CHECK(clCreateFromGLTexture2D(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_3D, 0, srgb, &err) ==
          nullptr);
    CHECK_CL_ERR(CL_INVALID_VALUE, err);
    CHECK(clCreateFromGLRenderbuffer(s.context, CL_MEM_READ_ONLY, 31337, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_GL_OBJECT, err);
    glDeleteRenderbuffers(1, &rb);
    GLuint tex[] = {srgb, depth, cube, rgb};
    glDeleteTextures(4, tex);
}

namespace {

/// A 2D texture or renderbuffer of one internal format, filled with `data` (renderbuffers by a
/// blit from a texture of the same format), and read back through GL: glGetTexImage for
/// textures, a framebuffer and glReadPixels for renderbuffers (what an application would do).
struct GlSurface {
    GLuint name = 0;
    bool renderbuffer = false;
    bool depth = false;
    int w = 0, h = 0;
    GLenum format = 0, type = 0;

    GlSurface(bool rb, GLint internal, int width, int height, GLenum fmt, GLenum ty,
              const void* data)
        : renderbuffer(rb), depth(fmt == GL_DEPTH_COMPONENT), w(width), h(height), format(fmt),
          type(ty) {
        if (!rb) {
            name = makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, internal, w, h, fmt, ty, data);
            return;
        }
        glGenRenderbuffers(1, &name);
        glBindRenderbuffer(GL_RENDERBUFFER, name);
        glRenderbufferStorage(GL_RENDERBUFFER, GLenum(internal), w, h);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        if (!data)
            return;
        GLuint tex = makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, internal, w, h, fmt, ty, data);
        GLuint from = framebuffer(tex, false), to = framebuffer(name, true);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, from);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, to);
        glBlitFramebuffer(0, 0, w, h, 0, 0, w, h, depth ? GL_DEPTH_BUFFER_BIT : GL_COLOR_BUFFER_BIT,
                          GL_NEAREST);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        GLuint fbs[] = {from, to};
        glDeleteFramebuffers(2, fbs);
        glDeleteTextures(1, &tex);
        REQUIRE(glGetError() == GL_NO_ERROR);
    }
    ~GlSurface() {
        if (renderbuffer)
            glDeleteRenderbuffers(1, &name);
        else
            glDeleteTextures(1, &name);
    }
    GlSurface(const GlSurface&) = delete;
    GlSurface& operator=(const GlSurface&) = delete;

    GLuint framebuffer(GLuint object, bool isRenderbuffer) const {
        GLuint fb = 0;
        glGenFramebuffers(1, &fb);
        glBindFramebuffer(GL_FRAMEBUFFER, fb);
        GLenum attachment = depth ? GL_DEPTH_ATTACHMENT : GL_COLOR_ATTACHMENT0;
        if (isRenderbuffer)
            glFramebufferRenderbuffer(GL_FRAMEBUFFER, attachment, GL_RENDERBUFFER, object);
        else
            glFramebufferTexture2D(GL_FRAMEBUFFER, attachment, GL_TEXTURE_2D, object, 0);
        if (depth) {
            glDrawBuffer(GL_NONE);
            glReadBuffer(GL_NONE);
        }
        REQUIRE(glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        return fb;
    }

    cl_mem share(cl_context context, cl_mem_flags flags, cl_int* err) const {
        return renderbuffer ? clCreateFromGLRenderbuffer(context, flags, name, err)
                            : clCreateFromGLTexture(context, flags, GL_TEXTURE_2D, 0, name, err);
    }

    template <typename T> std::vector<T> read(size_t components) const {
        std::vector<T> out(size_t(w) * h * components);
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        if (renderbuffer) {
            GLuint fb = framebuffer(name, true);
            glBindFramebuffer(GL_READ_FRAMEBUFFER, fb);
            glReadPixels(0, 0, w, h, format, type, out.data());
            glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
            glDeleteFramebuffers(1, &fb);
        } else {
            glBindTexture(GL_TEXTURE_2D, name);
            glGetTexImage(GL_TEXTURE_2D, 0, format, type, out.data());
            glBindTexture(GL_TEXTURE_2D, 0);
        }
        REQUIRE(glGetError() == GL_NO_ERROR);
        return out;
    }
};

float srgbToLinear(float c) {
    return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}
float linearToSrgb(float c) {
    return c <= 0.0031308f ? c * 12.92f : 1.055f * std::pow(c, 1.0f / 2.4f) - 0.055f;
}

} // namespace

// What an application does with a shared texture or renderbuffer on whichever device the GL
// context's CL context runs on (the suite runs again with DUET_DEVICES=gcn): a kernel samples
// it with read_imagef and a sampler, writes another with write_imagef, and GL reads the
// result once the objects are released.
TEST_CASE("GL textures and renderbuffers: a kernel samples one and writes another",
          "[gl][images]") {
    Shared s;
    cl_device_type devType = 0;
    REQUIRE_CL(clGetDeviceInfo(s.device, CL_DEVICE_TYPE, sizeof devType, &devType, nullptr));
    if (const char* which = std::getenv("DUET_DEVICES"); which && std::string(which) == "gcn")
        REQUIRE(devType == CL_DEVICE_TYPE_GPU); // the GCN model, not the CPU device
    INFO("device " << deviceString(s.device, CL_DEVICE_NAME));
    cl_int err = CL_SUCCESS;
    cl_program prog = buildProgram(s.context, s.device, R"(
constant sampler_t kNormalized =
    CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
// Colour: 1 - rgb with red and blue swapped (a channel order mix-up shows), alpha kept.
kernel void invert(read_only image2d_t a, write_only image2d_t b, sampler_t s) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 v = read_imagef(a, s, (float2)(p.x + 0.5f, p.y + 0.5f));
    write_imagef(b, p, (float4)(1.0f - v.z, 1.0f - v.y, 1.0f - v.x, v.w));
}
kernel void invertDepth(read_only image2d_depth_t a, write_only image2d_depth_t b) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float2 c = (float2)((p.x + 0.5f) / get_image_width(a), (p.y + 0.5f) / get_image_height(a));
    write_imagef(b, p, 1.0f - read_imagef(a, kNormalized, c));
})");
    cl_kernel invert = clCreateKernel(prog, "invert", &err);
    REQUIRE_CL(err);
    cl_kernel invertDepth = clCreateKernel(prog, "invertDepth", &err);
    REQUIRE_CL(err);
    const cl_sampler_properties sprops[] = {CL_SAMPLER_NORMALIZED_COORDS,
                                            CL_FALSE,
                                            CL_SAMPLER_ADDRESSING_MODE,
                                            CL_ADDRESS_CLAMP_TO_EDGE,
                                            CL_SAMPLER_FILTER_MODE,
                                            CL_FILTER_NEAREST,
                                            0};
    cl_sampler sampler = clCreateSamplerWithProperties(s.context, sprops, &err);
    REQUIRE_CL(err);
    const int w = 8, h = 4, n = w * h;
    size_t global[2] = {w, h};

    // Shares src (read-only) and dst (write-only), checks their CL format, runs `k` on them
    // (failing before the acquire and after the release, as the spec says), and leaves the
    // result in dst for GL.
    auto run = [&](const GlSurface& src, const GlSurface& dst, cl_kernel k, cl_channel_order order,
                   cl_channel_type channelType) {
        cl_mem in = src.share(s.context, CL_MEM_READ_ONLY, &err);
        REQUIRE_CL(err);
        cl_mem out = dst.share(s.context, CL_MEM_WRITE_ONLY, &err);
        REQUIRE_CL(err);
        for (cl_mem m : {in, out}) {
            cl_image_format fmt{};
            REQUIRE_CL(clGetImageInfo(m, CL_IMAGE_FORMAT, sizeof fmt, &fmt, nullptr));
            CHECK(fmt.image_channel_order == order);
            CHECK(fmt.image_channel_data_type == channelType);
            cl_gl_object_type type = 0;
            REQUIRE_CL(clGetGLObjectInfo(m, &type, nullptr));
            CHECK(type == (src.renderbuffer ? CL_GL_OBJECT_RENDERBUFFER : CL_GL_OBJECT_TEXTURE2D));
        }
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof in, &in));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof out, &out));
        if (k == invert)
            REQUIRE_CL(clSetKernelArg(k, 2, sizeof sampler, &sampler));
        CHECK_CL_ERR(CL_INVALID_OPERATION, clEnqueueNDRangeKernel(s.queue, k, 2, nullptr, global,
                                                                  nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &in, 0, nullptr, nullptr));
        // Only the source acquired is not enough either.
        CHECK_CL_ERR(CL_INVALID_OPERATION, clEnqueueNDRangeKernel(s.queue, k, 2, nullptr, global,
                                                                  nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &out, 0, nullptr, nullptr));
        cl_mem both[2] = {in, out};
        REQUIRE_CL(
            clEnqueueNDRangeKernel(s.queue, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 2, both, 0, nullptr, nullptr));
        CHECK_CL_ERR(CL_INVALID_OPERATION, clEnqueueNDRangeKernel(s.queue, k, 2, nullptr, global,
                                                                  nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(s.queue));
        clReleaseMemObject(in);
        clReleaseMemObject(out);
    };

    for (bool rb : {false, true}) {
        INFO((rb ? "renderbuffers" : "textures"));
        SECTION(std::string("RGBA8 ") + (rb ? "renderbuffers" : "textures")) {
            std::vector<unsigned char> px(n * 4);
            for (size_t i = 0; i < px.size(); ++i)
                px[i] = (unsigned char)(i * 7 + 3);
            GlSurface src(rb, GL_RGBA8, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
            GlSurface dst(rb, GL_RGBA8, w, h, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
            run(src, dst, invert, CL_RGBA, CL_UNORM_INT8);
            std::vector<unsigned char> back = dst.read<unsigned char>(4);
            for (int i = 0; i < n; ++i) {
                INFO("texel " << i);
                const unsigned char* p = &px[i * 4];
                CHECK(int(back[i * 4 + 0]) == 255 - p[2]);
                CHECK(int(back[i * 4 + 1]) == 255 - p[1]);
                CHECK(int(back[i * 4 + 2]) == 255 - p[0]);
                CHECK(int(back[i * 4 + 3]) == p[3]);
            }
        }
        SECTION(std::string("RGBA32F ") + (rb ? "renderbuffers" : "textures")) {
            std::vector<float> px(n * 4);
            for (size_t i = 0; i < px.size(); ++i)
                px[i] = float(int(i % 37) - 12) * 0.125f;
            GlSurface src(rb, GL_RGBA32F, w, h, GL_RGBA, GL_FLOAT, px.data());
            GlSurface dst(rb, GL_RGBA32F, w, h, GL_RGBA, GL_FLOAT, nullptr);
            run(src, dst, invert, CL_RGBA, CL_FLOAT);
            std::vector<float> back = dst.read<float>(4);
            for (int i = 0; i < n; ++i) {
                INFO("texel " << i);
                const float* p = &px[i * 4];
                CHECK(back[i * 4 + 0] == 1.0f - p[2]);
                CHECK(back[i * 4 + 1] == 1.0f - p[1]);
                CHECK(back[i * 4 + 2] == 1.0f - p[0]);
                CHECK(back[i * 4 + 3] == p[3]);
            }
        }
        for (GLint internal : {GL_DEPTH_COMPONENT32F, GL_DEPTH_COMPONENT24}) {
            SECTION(std::string(internal == GL_DEPTH_COMPONENT24 ? "DEPTH24 " : "DEPTH32F ") +
                    (rb ? "renderbuffers" : "textures")) {
                std::vector<float> depth(n);
                for (int i = 0; i < n; ++i)
                    depth[i] = float((i * 13) % n) / float(n);
                GlSurface src(rb, internal, w, h, GL_DEPTH_COMPONENT, GL_FLOAT, depth.data());
                GlSurface dst(rb, internal, w, h, GL_DEPTH_COMPONENT, GL_FLOAT, nullptr);
                run(src, dst, invertDepth, CL_DEPTH, CL_FLOAT);
                std::vector<float> back = dst.read<float>(1);
                // 24-bit depth is a unorm in GL: two rounding steps of 2^-24 each at most.
                const double margin = internal == GL_DEPTH_COMPONENT24 ? 2.5 / 16777215.0 : 0.0;
                for (int i = 0; i < n; ++i) {
                    INFO("texel " << i);
                    CHECK(back[i] == Approx(1.0 - depth[i]).margin(margin).epsilon(0));
                }
            }
        }
    }
    // sRGB textures (renderbuffers would go through glReadPixels/blits, whose sRGB handling
    // depends on GL_FRAMEBUFFER_SRGB): read_imagef linearises, write_imagef encodes.
    SECTION("SRGB8_ALPHA8 textures") {
        std::vector<unsigned char> px(n * 4);
        for (size_t i = 0; i < px.size(); ++i)
            px[i] = (unsigned char)(i * 29 + 5);
        GlSurface src(false, GL_SRGB8_ALPHA8, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
        GlSurface dst(false, GL_SRGB8_ALPHA8, w, h, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        run(src, dst, invert, CL_sRGBA, CL_UNORM_INT8);
        std::vector<unsigned char> back = dst.read<unsigned char>(4);
        auto expect = [](unsigned char b) {
            float linear = 1.0f - srgbToLinear(float(b) / 255.0f);
            return int(std::lround(linearToSrgb(linear) * 255.0f));
        };
        for (int i = 0; i < n; ++i) {
            INFO("texel " << i);
            const unsigned char* p = &px[i * 4];
            // The spec's sRGB conversions allow some error: one step of 8 bits.
            CHECK(std::abs(int(back[i * 4 + 0]) - expect(p[2])) <= 1);
            CHECK(std::abs(int(back[i * 4 + 1]) - expect(p[1])) <= 1);
            CHECK(std::abs(int(back[i * 4 + 2]) - expect(p[0])) <= 1);
            CHECK(int(back[i * 4 + 3]) == p[3]); // alpha is linear
        }
    }
    clReleaseSampler(sampler);
    clReleaseKernel(invert);
    clReleaseKernel(invertDepth);
    clReleaseProgram(prog);
}

TEST_CASE("GL textures of every target and mip levels travel both ways", "[gl]") {
    Shared s;
    struct Case {
        GLenum target;
        int w, h, d; ///< GL sizes (h: layers of a 1D array, d: layers or depth)
        int level;
    };
    const Case cases[] = {{GL_TEXTURE_1D, 16, 1, 1, 0},      {GL_TEXTURE_1D_ARRAY, 8, 3, 1, 0},
                          {GL_TEXTURE_2D, 8, 4, 1, 1},       {GL_TEXTURE_RECTANGLE, 6, 5, 1, 0},
                          {GL_TEXTURE_2D_ARRAY, 4, 4, 3, 0}, {GL_TEXTURE_3D, 4, 3, 2, 0}};
    for (const Case& c : cases) {
        INFO("target 0x" << std::hex << c.target << std::dec << " level " << c.level);
        GLuint t = 0;
        glGenTextures(1, &t);
        glBindTexture(c.target, t);
        // Level 0 and, for level 1 cases, level 1 at half size.
        for (int lv = 0; lv <= c.level; ++lv) {
            int w = c.w << (c.level - lv),
                h = c.target == GL_TEXTURE_1D_ARRAY || c.h == 1 ? c.h : c.h << (c.level - lv);
            std::vector<float> init(size_t(w) * h * c.d, 0.0f);
            if (c.target == GL_TEXTURE_1D)
                glTexImage1D(c.target, lv, GL_R32F, w, 0, GL_RED, GL_FLOAT, init.data());
            else if (c.target == GL_TEXTURE_2D_ARRAY || c.target == GL_TEXTURE_3D)
                glTexImage3D(c.target, lv, GL_R32F, w, h, c.d, 0, GL_RED, GL_FLOAT, init.data());
            else
                glTexImage2D(c.target, lv, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, init.data());
        }
        const size_t n = size_t(c.w) * c.h * c.d;
        std::vector<float> data(n);
        for (size_t i = 0; i < n; ++i)
            data[i] = float(i) + 0.5f;
        if (c.target == GL_TEXTURE_1D)
            glTexSubImage1D(c.target, c.level, 0, c.w, GL_RED, GL_FLOAT, data.data());
        else if (c.target == GL_TEXTURE_2D_ARRAY || c.target == GL_TEXTURE_3D)
            glTexSubImage3D(c.target, c.level, 0, 0, 0, c.w, c.h, c.d, GL_RED, GL_FLOAT,
                            data.data());
        else
            glTexSubImage2D(c.target, c.level, 0, 0, c.w, c.h, GL_RED, GL_FLOAT, data.data());
        glBindTexture(c.target, 0);

        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, c.target, c.level, t, &err);
        REQUIRE_CL(err);
        size_t origin[3] = {0, 0, 0};
        size_t region[3] = {size_t(c.w), size_t(c.h), size_t(c.d)};
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &m, 0, nullptr, nullptr));
        std::vector<float> got(n, -1.0f);
        REQUIRE_CL(clEnqueueReadImage(s.queue, m, CL_TRUE, origin, region, 0, 0, got.data(), 0,
                                      nullptr, nullptr));
        CHECK(got == data);
        for (float& v : data)
            v = -v;
        REQUIRE_CL(clEnqueueWriteImage(s.queue, m, CL_TRUE, origin, region, 0, 0, data.data(), 0,
                                       nullptr, nullptr));
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &m, 0, nullptr, nullptr));
        std::vector<float> back(n, 0.0f);
        glBindTexture(c.target, t);
        glGetTexImage(c.target, c.level, GL_RED, GL_FLOAT, back.data());
        glBindTexture(c.target, 0);
        CHECK(back == data);
        clReleaseMemObject(m);
        glDeleteTextures(1, &t);
    }
}

TEST_CASE("GL buffer textures share as image1d_buffer", "[gl]") {
    Shared s;
    const int n = 32;
    std::vector<float> data(n * 4);
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = float(i) * 0.25f;
    GLuint buf = makeGlBuffer(data.size() * sizeof(float), data.data());
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_BUFFER, tex);
    glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA32F, buf);
    glBindTexture(GL_TEXTURE_BUFFER, 0);
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_BUFFER, 0, tex, &err);
    REQUIRE_CL(err);
    cl_gl_object_type type = 0;
    REQUIRE_CL(clGetGLObjectInfo(m, &type, nullptr));
    CHECK(type == CL_GL_OBJECT_TEXTURE_BUFFER);
    cl_program prog = buildProgram(s.context, s.device, R"(
kernel void twice(write_only image1d_buffer_t img) {
    int i = get_global_id(0);
    write_imagef(img, i, (float4)(4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3) * 0.5f);
})");
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof m, &m));
    size_t global = n;
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &m, 0, nullptr, nullptr));
    // GL's texels reach CL at acquire.
    std::vector<float> got(data.size(), -1.0f);
    size_t origin[3] = {0, 0, 0}, region[3] = {size_t(n), 1, 1};
    REQUIRE_CL(clEnqueueReadImage(s.queue, m, CL_TRUE, origin, region, 0, 0, got.data(), 0, nullptr,
                                  nullptr));
    CHECK(got == data);
    REQUIRE_CL(
        clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &m, 0, nullptr, nullptr));
    std::vector<float> back(data.size(), 0.0f);
    glBindBuffer(GL_ARRAY_BUFFER, buf);
    glGetBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(back.size() * sizeof(float)), back.data());
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    for (size_t i = 0; i < data.size(); ++i) {
        INFO("float " << i);
        REQUIRE(back[i] == data[i] * 2.0f);
    }
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(m);
    glDeleteTextures(1, &tex);
    glDeleteBuffers(1, &buf);
}

namespace {

/// Acquires `mem`, maps all of it for reading and writing and returns the host pointer CL
/// hands out (the caller unmaps and releases).
int* acquireAndMap(Shared& s, cl_mem mem, size_t bytes) {
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    cl_int err = CL_SUCCESS;
    void* p = clEnqueueMapBuffer(s.queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                 nullptr, nullptr, &err);
    REQUIRE_CL(err);
    return static_cast<int*>(p);
}

/// GL's own mapping of `vbo` right now (mapped and unmapped again by the test's context).
void* glMapping(GLuint vbo, size_t bytes) {
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    void* q = glMapBufferRange(GL_ARRAY_BUFFER, 0, GLsizeiptr(bytes), GL_MAP_READ_BIT);
    glUnmapBuffer(GL_ARRAY_BUFFER);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return q;
}

std::vector<int> glBufferInts(GLuint vbo, size_t n) {
    std::vector<int> back(n, -1);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glGetBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(n * sizeof(int)), back.data());
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return back;
}

} // namespace

TEST_CASE("GL buffers are shared in place while acquired (zero copy on llvmpipe)", "[gl]") {
    Shared s;
    const size_t n = 4096, bytes = n * sizeof(int);
    std::vector<int> init(n);
    std::iota(init.begin(), init.end(), 0);
    GLuint vbo = makeGlBuffer(bytes, init.data());
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);

    // Written through CL's pointer, read by GL.
    int* p = acquireAndMap(s, mem, bytes);
    CHECK(std::equal(init.begin(), init.end(), p));
    for (size_t i = 0; i < n; ++i)
        p[i] = int(i) * 3;
    REQUIRE_CL(clEnqueueUnmapMemObject(s.queue, mem, p, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    std::vector<int> back = glBufferInts(vbo, n);
    for (size_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(back[i] == int(i) * 3);
    }
    // Zero copy: the pointer CL handed out is GL's own store of the buffer. llvmpipe keeps
    // buffers in host memory and maps them in place; other drivers may not.
    if (glRenderer().find("llvmpipe") != std::string::npos)
        CHECK(glMapping(vbo, bytes) == static_cast<void*>(p));
    else
        WARN("renderer '" << glRenderer() << "': zero copy not checked");

    // GL gives the buffer new storage between acquires: kernels follow it.
    std::vector<int> fresh(n, 5);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(bytes), fresh.data(), GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    cl_buffer_region half{bytes / 2, bytes / 2};
    cl_mem upper =
        clCreateSubBuffer(mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &half, &err);
    REQUIRE_CL(err);
    cl_program prog = buildProgram(s.context, s.device,
                                   "kernel void add(global int* v, int k) {"
                                   " v[get_global_id(0)] += k; }");
    cl_kernel k = clCreateKernel(prog, "add", &err);
    REQUIRE_CL(err);
    int seven = 7, hundred = 100;
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof mem, &mem));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof seven, &seven));
    REQUIRE_CL(clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    // A sub-buffer views the GL buffer's storage of this acquire too.
    const size_t halfN = n / 2;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof upper, &upper));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof hundred, &hundred));
    REQUIRE_CL(
        clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &halfN, nullptr, 0, nullptr, nullptr));
    // Transfers resolve the storage when they run, after the acquire.
    int firstTwo[2] = {-1, -1};
    REQUIRE_CL(clEnqueueReadBuffer(s.queue, mem, CL_TRUE, 0, sizeof firstTwo, firstTwo, 0, nullptr,
                                   nullptr));
    CHECK(firstTwo[0] == 12);
    CHECK(firstTwo[1] == 12);
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    back = glBufferInts(vbo, n);
    for (size_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(back[i] == (i < halfN ? 12 : 112));
    }
    // After the release GL may draw with it again: it is not left mapped.
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    GLint mapped = 1;
    glGetBufferParameteriv(GL_ARRAY_BUFFER, GL_BUFFER_MAPPED, &mapped);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    CHECK(mapped == GL_FALSE);
    // Released while acquired: GL gets the buffer back unmapped.
    REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(s.queue));
    clReleaseKernel(k);
    clReleaseMemObject(upper);
    clReleaseMemObject(mem);
    clReleaseProgram(prog);
    clReleaseContext(s.context); // the GL thread runs the unmap before it stops
    clReleaseCommandQueue(s.queue);
    s.context = nullptr;
    s.queue = nullptr;
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    mapped = 1;
    glGetBufferParameteriv(GL_ARRAY_BUFFER, GL_BUFFER_MAPPED, &mapped);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    CHECK(mapped == GL_FALSE);
    glDeleteBuffers(1, &vbo);
}

TEST_CASE("DUET_GL_BUFFERS=copy shares GL buffers through host copies", "[gl]") {
    setenv("DUET_GL_BUFFERS", "copy", 1);
    Shared s;
    const size_t n = 1024, bytes = n * sizeof(int);
    std::vector<int> init(n);
    std::iota(init.begin(), init.end(), 1);
    GLuint vbo = makeGlBuffer(bytes, init.data());
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
    unsetenv("DUET_GL_BUFFERS"); // read once, when the context's first GL buffer is made
    REQUIRE_CL(err);
    int* p = acquireAndMap(s, mem, bytes);
    CHECK(std::equal(init.begin(), init.end(), p));
    for (size_t i = 0; i < n; ++i)
        p[i] = -int(i);
    REQUIRE_CL(clEnqueueUnmapMemObject(s.queue, mem, p, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
    std::vector<int> back = glBufferInts(vbo, n);
    for (size_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(back[i] == -int(i));
    }
    CHECK(glMapping(vbo, bytes) != static_cast<void*>(p)); // a host copy, not GL's store
    clReleaseMemObject(mem);
    glDeleteBuffers(1, &vbo);
}

TEST_CASE("GL buffers of immutable storage without map or update bits travel both ways", "[gl]") {
    // glBufferStorage with no flags refuses glMapBufferRange and glBufferSubData: the copies
    // go through a scratch buffer on the GPU, in place or through DUET_GL_BUFFERS=copy.
    for (bool copies : {false, true}) {
        CAPTURE(copies);
        if (copies)
            setenv("DUET_GL_BUFFERS", "copy", 1);
        Shared s;
        const size_t n = 2048, bytes = n * sizeof(int);
        std::vector<int> init(n);
        std::iota(init.begin(), init.end(), 10);
        GLuint vbo = 0;
        glGenBuffers(1, &vbo);
        glBindBuffer(GL_ARRAY_BUFFER, vbo);
        glBufferStorage(GL_ARRAY_BUFFER, GLsizeiptr(bytes), init.data(), 0);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        REQUIRE(glGetError() == GL_NO_ERROR);
        cl_int err = CL_SUCCESS;
        cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
        unsetenv("DUET_GL_BUFFERS");
        REQUIRE_CL(err);
        cl_program prog = buildProgram(s.context, s.device,
                                       "kernel void add(global int* v, int k) {"
                                       " v[get_global_id(0)] += k; }");
        cl_kernel k = clCreateKernel(prog, "add", &err);
        REQUIRE_CL(err);
        const int five = 5;
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof mem, &mem));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof five, &five));
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        cl_event released = nullptr;
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, &released));
        CHECK(clWaitForEvents(1, &released) == CL_SUCCESS);
        clReleaseEvent(released);
        std::vector<int> back = glBufferInts(vbo, n);
        for (size_t i = 0; i < n; ++i) {
            INFO("element " << i);
            REQUIRE(back[i] == int(i) + 15);
        }
        clReleaseKernel(k);
        clReleaseProgram(prog);
        clReleaseMemObject(mem);
        glDeleteBuffers(1, &vbo);
    }
}

TEST_CASE("commands using GL objects that are not acquired fail", "[gl]") {
    // cl_khr_gl_sharing: GL objects "need to be acquired before they can be used by any
    // OpenCL commands queued to a command-queue"; Duet answers CL_INVALID_OPERATION.
    Shared s;
    cl_int err = CL_SUCCESS;
    const size_t bytes = 256;
    GLuint vbo = makeGlBuffer(bytes, nullptr);
    cl_mem buf = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    cl_buffer_region region{0, 128};
    cl_mem sub =
        clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    REQUIRE_CL(err);
    cl_mem plain = clCreateBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    REQUIRE_CL(err);
    const int w = 4, h = 4;
    GLuint tex = makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, GL_RGBA8, w, h, GL_RGBA,
                             GL_UNSIGNED_BYTE, nullptr);
    cl_mem img = clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_2D, 0, tex, &err);
    REQUIRE_CL(err);
    cl_image_format fmt{CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = w;
    desc.image_height = h;
    cl_mem plainImg = clCreateImage(s.context, CL_MEM_READ_WRITE, &fmt, &desc, nullptr, &err);
    REQUIRE_CL(err);

    std::vector<unsigned char> host(bytes);
    size_t origin[3] = {0, 0, 0}, rgn[3] = {w, h, 1}, rect[3] = {16, 2, 1};
    const float color[4] = {0, 0, 0, 0};
    const int pattern = 0;
    size_t rowPitch = 0;
    auto all = [&](cl_int want) {
        CHECK_CL_ERR(want, clEnqueueReadBuffer(s.queue, buf, CL_TRUE, 0, bytes, host.data(), 0,
                                               nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueWriteBuffer(s.queue, buf, CL_TRUE, 0, bytes, host.data(), 0,
                                                nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueReadBuffer(s.queue, sub, CL_TRUE, 0, 128, host.data(), 0,
                                               nullptr, nullptr));
        CHECK_CL_ERR(want,
                     clEnqueueCopyBuffer(s.queue, buf, plain, 0, 0, bytes, 0, nullptr, nullptr));
        CHECK_CL_ERR(want,
                     clEnqueueCopyBuffer(s.queue, plain, buf, 0, 0, bytes, 0, nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueFillBuffer(s.queue, buf, &pattern, sizeof pattern, 0, bytes, 0,
                                               nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueReadBufferRect(s.queue, buf, CL_TRUE, origin, origin, rect, 0,
                                                   0, 0, 0, host.data(), 0, nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueCopyBufferRect(s.queue, plain, buf, origin, origin, rect, 0, 0,
                                                   0, 0, 0, nullptr, nullptr));
        cl_int e = CL_SUCCESS;
        void* p = clEnqueueMapBuffer(s.queue, buf, CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr,
                                     nullptr, &e);
        CHECK_CL_ERR(want, e);
        if (p)
            REQUIRE_CL(clEnqueueUnmapMemObject(s.queue, buf, p, 0, nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueReadImage(s.queue, img, CL_TRUE, origin, rgn, 0, 0, host.data(),
                                              0, nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueWriteImage(s.queue, img, CL_TRUE, origin, rgn, 0, 0,
                                               host.data(), 0, nullptr, nullptr));
        CHECK_CL_ERR(want,
                     clEnqueueFillImage(s.queue, img, color, origin, rgn, 0, nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueCopyImage(s.queue, plainImg, img, origin, origin, rgn, 0,
                                              nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueCopyImageToBuffer(s.queue, img, plain, origin, rgn, 0, 0,
                                                      nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueCopyBufferToImage(s.queue, plain, img, 0, origin, rgn, 0,
                                                      nullptr, nullptr));
        CHECK_CL_ERR(want, clEnqueueMigrateMemObjects(s.queue, 1, &buf, 0, 0, nullptr, nullptr));
        p = clEnqueueMapImage(s.queue, img, CL_TRUE, CL_MAP_READ, origin, rgn, &rowPitch, nullptr,
                              0, nullptr, nullptr, &e);
        CHECK_CL_ERR(want, e);
        if (p)
            REQUIRE_CL(clEnqueueUnmapMemObject(s.queue, img, p, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(s.queue));
    };
    SECTION("never acquired") {
        all(CL_INVALID_OPERATION);
    }
    SECTION("acquired: every command works") {
        cl_mem both[2] = {buf, img};
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 2, both, 0, nullptr, nullptr));
        all(CL_SUCCESS);
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 2, both, 0, nullptr, nullptr));
        SECTION("and released again: they fail") {
            all(CL_INVALID_OPERATION);
        }
    }
    clReleaseMemObject(plainImg);
    clReleaseMemObject(img);
    clReleaseMemObject(plain);
    clReleaseMemObject(sub);
    clReleaseMemObject(buf);
    glDeleteTextures(1, &tex);
    glDeleteBuffers(1, &vbo);
}

TEST_CASE("depth-stencil textures share as CL_DEPTH_STENCIL both ways", "[gl]") {
    Shared s;
    cl_int err = CL_SUCCESS;
    const int w = 8, h = 4, n = w * h;
    cl_program prog = buildProgram(s.context, s.device, R"(
kernel void readDepth(read_only image2d_depth_t d, global float* out) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    out[p.y * get_image_width(d) + p.x] = read_imagef(d, p);
}
kernel void writeDepth(write_only image2d_depth_t d) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imagef(d, p, (float)(p.y * get_image_width(d) + p.x) / 64.0f);
})");
    cl_kernel readK = clCreateKernel(prog, "readDepth", &err);
    REQUIRE_CL(err);
    cl_kernel writeK = clCreateKernel(prog, "writeDepth", &err);
    REQUIRE_CL(err);
    cl_mem out = clCreateBuffer(s.context, CL_MEM_WRITE_ONLY, n * sizeof(float), nullptr, &err);
    REQUIRE_CL(err);
    size_t global[2] = {w, h};
    auto expectedWritten = [](int i) { return float(i) / 64.0f; };

    SECTION("GL_DEPTH24_STENCIL8 <-> CL_DEPTH_STENCIL, CL_UNORM_INT24") {
        std::vector<uint32_t> texels(n);
        for (int i = 0; i < n; ++i)
            texels[i] = (uint32_t(i) * 500000u) << 8 | uint32_t(200 + i % 50); // depth | stencil
        GLuint tex = makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, GL_DEPTH24_STENCIL8, w, h,
                                 GL_DEPTH_STENCIL, GL_UNSIGNED_INT_24_8, texels.data());
        for (cl_mem_flags flags : {CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY}) {
            INFO("flags " << flags);
            cl_mem m = clCreateFromGLTexture(s.context, flags, GL_TEXTURE_2D, 0, tex, &err);
            REQUIRE_CL(err);
            cl_image_format fmt{};
            REQUIRE_CL(clGetImageInfo(m, CL_IMAGE_FORMAT, sizeof fmt, &fmt, nullptr));
            CHECK(fmt.image_channel_order == CL_DEPTH_STENCIL);
            CHECK(fmt.image_channel_data_type == CL_UNORM_INT24);
            size_t elem = 0;
            REQUIRE_CL(clGetImageInfo(m, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, nullptr));
            CHECK(elem == 4);
            REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &m, 0, nullptr, nullptr));
            if (flags == CL_MEM_READ_WRITE) { // GL -> CL
                REQUIRE_CL(clSetKernelArg(readK, 0, sizeof m, &m));
                REQUIRE_CL(clSetKernelArg(readK, 1, sizeof out, &out));
                REQUIRE_CL(clEnqueueNDRangeKernel(s.queue, readK, 2, nullptr, global, nullptr, 0,
                                                  nullptr, nullptr));
                std::vector<float> got(n);
                REQUIRE_CL(clEnqueueReadBuffer(s.queue, out, CL_TRUE, 0, n * sizeof(float),
                                               got.data(), 0, nullptr, nullptr));
                for (int i = 0; i < n; ++i) {
                    INFO("texel " << i);
                    CHECK(got[i] == Approx(double(texels[i] >> 8) / 16777215.0).epsilon(1e-6));
                }
                // cl_khr_gl_depth_images: no host transfers of CL_DEPTH_STENCIL images.
                size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
                CHECK_CL_ERR(CL_INVALID_OPERATION,
                             clEnqueueReadImage(s.queue, m, CL_TRUE, origin, region, 0, 0,
                                                got.data(), 0, nullptr, nullptr));
                size_t pitch = 0;
                CHECK(clEnqueueMapImage(s.queue, m, CL_TRUE, CL_MAP_READ, origin, region, &pitch,
                                        nullptr, 0, nullptr, nullptr, &err) == nullptr);
                CHECK_CL_ERR(CL_INVALID_OPERATION, err);
            }
            // CL -> GL: depth written, GL's stencil kept (also when CL only writes).
            REQUIRE_CL(clSetKernelArg(writeK, 0, sizeof m, &m));
            REQUIRE_CL(clEnqueueNDRangeKernel(s.queue, writeK, 2, nullptr, global, nullptr, 0,
                                              nullptr, nullptr));
            REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &m, 0, nullptr, nullptr));
            std::vector<uint32_t> back(n, 0);
            glBindTexture(GL_TEXTURE_2D, tex);
            glGetTexImage(GL_TEXTURE_2D, 0, GL_DEPTH_STENCIL, GL_UNSIGNED_INT_24_8, back.data());
            glBindTexture(GL_TEXTURE_2D, 0);
            for (int i = 0; i < n; ++i) {
                INFO("texel " << i);
                CHECK(back[i] >> 8 == uint32_t(std::lround(expectedWritten(i) * 16777215.0)));
                CHECK((back[i] & 0xFF) == (texels[i] & 0xFF));
            }
            clReleaseMemObject(m);
        }
        glDeleteTextures(1, &tex);
    }
    SECTION("GL_DEPTH32F_STENCIL8 <-> CL_DEPTH_STENCIL, CL_FLOAT") {
        struct Texel {
            float depth;
            uint32_t stencil; ///< low 8 bits (GL_FLOAT_32_UNSIGNED_INT_24_8_REV)
        };
        std::vector<Texel> texels(n);
        for (int i = 0; i < n; ++i)
            texels[i] = {float(i) / 40.0f, uint32_t(10 + i)};
        GLuint tex =
            makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, GL_DEPTH32F_STENCIL8, w, h, GL_DEPTH_STENCIL,
                        GL_FLOAT_32_UNSIGNED_INT_24_8_REV, texels.data());
        cl_mem m = clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_2D, 0, tex, &err);
        REQUIRE_CL(err);
        cl_image_format fmt{};
        REQUIRE_CL(clGetImageInfo(m, CL_IMAGE_FORMAT, sizeof fmt, &fmt, nullptr));
        CHECK(fmt.image_channel_order == CL_DEPTH_STENCIL);
        CHECK(fmt.image_channel_data_type == CL_FLOAT);
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &m, 0, nullptr, nullptr));
        REQUIRE_CL(clSetKernelArg(readK, 0, sizeof m, &m));
        REQUIRE_CL(clSetKernelArg(readK, 1, sizeof out, &out));
        REQUIRE_CL(clEnqueueNDRangeKernel(s.queue, readK, 2, nullptr, global, nullptr, 0, nullptr,
                                          nullptr));
        std::vector<float> got(n);
        REQUIRE_CL(clEnqueueReadBuffer(s.queue, out, CL_TRUE, 0, n * sizeof(float), got.data(), 0,
                                       nullptr, nullptr));
        for (int i = 0; i < n; ++i) {
            INFO("texel " << i);
            CHECK(got[i] == texels[i].depth);
        }
        REQUIRE_CL(clSetKernelArg(writeK, 0, sizeof m, &m));
        REQUIRE_CL(clEnqueueNDRangeKernel(s.queue, writeK, 2, nullptr, global, nullptr, 0, nullptr,
                                          nullptr));
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &m, 0, nullptr, nullptr));
        std::vector<Texel> back(n, Texel{-1.0f, 0});
        glBindTexture(GL_TEXTURE_2D, tex);
        glGetTexImage(GL_TEXTURE_2D, 0, GL_DEPTH_STENCIL, GL_FLOAT_32_UNSIGNED_INT_24_8_REV,
                      back.data());
        glBindTexture(GL_TEXTURE_2D, 0);
        for (int i = 0; i < n; ++i) {
            INFO("texel " << i);
            CHECK(back[i].depth == expectedWritten(i));
            CHECK((back[i].stencil & 0xFF) == texels[i].stencil);
        }
        clReleaseMemObject(m);
        glDeleteTextures(1, &tex);
    }
    SECTION("CL_DEPTH_STENCIL exists for GL textures only") {
        cl_uint count = 0;
        REQUIRE_CL(clGetSupportedImageFormats(s.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0,
                                              nullptr, &count));
        std::vector<cl_image_format> formats(count);
        REQUIRE_CL(clGetSupportedImageFormats(s.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D,
                                              count, formats.data(), nullptr));
        for (const cl_image_format& f : formats)
            CHECK(f.image_channel_order != CL_DEPTH_STENCIL);
        cl_image_format fmt{CL_DEPTH_STENCIL, CL_UNORM_INT24};
        cl_image_desc desc{};
        desc.image_type = CL_MEM_OBJECT_IMAGE2D;
        desc.image_width = w;
        desc.image_height = h;
        CHECK(clCreateImage(s.context, CL_MEM_READ_ONLY, &fmt, &desc, nullptr, &err) == nullptr);
        CHECK_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED, err);
        // A depth-stencil image is a depth image to kernels: not an image2d_t.
        GLuint tex = makeTexture(GL_TEXTURE_2D, GL_TEXTURE_2D, GL_DEPTH24_STENCIL8, w, h,
                                 GL_DEPTH_STENCIL, GL_UNSIGNED_INT_24_8, nullptr);
        cl_mem m = clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, tex, &err);
        REQUIRE_CL(err);
        cl_program p2 =
            buildProgram(s.context, s.device, "kernel void colour(read_only image2d_t i) {}");
        cl_kernel colour = clCreateKernel(p2, "colour", &err);
        REQUIRE_CL(err);
        CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(colour, 0, sizeof m, &m));
        clReleaseKernel(colour);
        clReleaseProgram(p2);
        clReleaseMemObject(m);
        glDeleteTextures(1, &tex);
    }
    REQUIRE_CL(clFinish(s.queue));
    clReleaseMemObject(out);
    clReleaseKernel(readK);
    clReleaseKernel(writeK);
    clReleaseProgram(prog);
}

TEST_CASE("an OpenGL ES 3 context shares textures and buffers", "[gl][gles]") {
    // OpenGL ES has no glGetTexImage or glGetBufferSubData: Duet reads textures back through
    // a framebuffer, and this test reads through one and through glMapBufferRange.
    EglContext& desktop = egl();
    eglBindAPI(EGL_OPENGL_ES_API);
    const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    EGLContext es = eglCreateContext(desktop.display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);
    eglBindAPI(EGL_OPENGL_API);
    if (es == EGL_NO_CONTEXT) {
        WARN("no OpenGL ES 3 context on this EGL display: not tested");
        return;
    }
    REQUIRE(eglMakeCurrent(desktop.display, EGL_NO_SURFACE, EGL_NO_SURFACE, es));
    INFO("GL_VERSION " << reinterpret_cast<const char*>(glGetString(GL_VERSION)));

    cl_platform_id platform = platformUnderTest();
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     cl_context_properties(platform),
                                     CL_GL_CONTEXT_KHR,
                                     cl_context_properties(es),
                                     CL_EGL_DISPLAY_KHR,
                                     cl_context_properties(desktop.display),
                                     0};
    cl_device_id device = nullptr;
    REQUIRE_CL(clGetGLContextInfoKHR(props, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, sizeof device,
                                     &device, nullptr));
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(props, 1, &device, nullptr, nullptr, &err);
    REQUIRE_CL(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
    REQUIRE_CL(err);

    const int w = 8, h = 4, layers = 2;
    std::vector<unsigned char> px(size_t(w) * h * 4 * layers);
    for (size_t i = 0; i < px.size(); ++i)
        px[i] = (unsigned char)(i * 5 + 3);
    GLuint tex = 0, arr = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, w, h);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
    glBindTexture(GL_TEXTURE_2D, 0);
    glGenTextures(1, &arr);
    glBindTexture(GL_TEXTURE_2D_ARRAY, arr);
    glTexStorage3D(GL_TEXTURE_2D_ARRAY, 1, GL_RGBA8, w, h, layers);
    glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, w, h, layers, GL_RGBA, GL_UNSIGNED_BYTE,
                    px.data());
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
    REQUIRE(glGetError() == GL_NO_ERROR);

    cl_mem img = clCreateFromGLTexture(context, CL_MEM_READ_WRITE, GL_TEXTURE_2D, 0, tex, &err);
    REQUIRE_CL(err);
    cl_mem layered =
        clCreateFromGLTexture(context, CL_MEM_READ_ONLY, GL_TEXTURE_2D_ARRAY, 0, arr, &err);
    REQUIRE_CL(err);
    cl_mem both[2] = {img, layered};
    REQUIRE_CL(clEnqueueAcquireGLObjects(queue, 2, both, 0, nullptr, nullptr));
    // GL ES -> CL, through Duet's framebuffer read-back.
    std::vector<unsigned char> got(px.size(), 0);
    size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1}, arrayRegion[3] = {w, h, layers};
    REQUIRE_CL(clEnqueueReadImage(queue, layered, CL_TRUE, origin, arrayRegion, 0, 0, got.data(), 0,
                                  nullptr, nullptr));
    CHECK(got == px);
    std::fill(got.begin(), got.end(), 0);
    REQUIRE_CL(clEnqueueReadImage(queue, img, CL_TRUE, origin, region, 0, 0, got.data(), 0, nullptr,
                                  nullptr));
    CHECK(std::equal(got.begin(), got.begin() + w * h * 4, px.begin()));
    // CL -> GL ES.
    cl_program prog = buildProgram(context, device, R"(
kernel void invert(read_write image2d_t a) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imagef(a, p, (float4)(1.0f) - read_imagef(a, p));
})",
                                   "-cl-std=CL3.0");
    cl_kernel k = clCreateKernel(prog, "invert", &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof img, &img));
    size_t global[2] = {w, h};
    REQUIRE_CL(clEnqueueNDRangeKernel(queue, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(queue, 2, both, 0, nullptr, nullptr));
    GLuint fbo = 0;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    std::vector<unsigned char> back(size_t(w) * h * 4, 0);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, back.data());
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
    for (size_t i = 0; i < back.size(); ++i) {
        INFO("byte " << i);
        REQUIRE(int(back[i]) == 255 - int(px[i]));
    }

    // A depth texture reaches CL too (Mesa's GL ES reads depth with GL_NV_read_depth).
    std::vector<float> depthData(size_t(w) * h);
    for (size_t i = 0; i < depthData.size(); ++i)
        depthData[i] = float(i) / 64.0f;
    GLuint depthTex = 0;
    glGenTextures(1, &depthTex);
    glBindTexture(GL_TEXTURE_2D, depthTex);
    glTexStorage2D(GL_TEXTURE_2D, 1, GL_DEPTH_COMPONENT32F, w, h);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_DEPTH_COMPONENT, GL_FLOAT, depthData.data());
    glBindTexture(GL_TEXTURE_2D, 0);
    cl_mem depthImg =
        clCreateFromGLTexture(context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, depthTex, &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clEnqueueAcquireGLObjects(queue, 1, &depthImg, 0, nullptr, nullptr));
    std::vector<float> gotDepth(depthData.size(), -1.0f);
    REQUIRE_CL(clEnqueueReadImage(queue, depthImg, CL_TRUE, origin, region, 0, 0, gotDepth.data(),
                                  0, nullptr, nullptr));
    CHECK(gotDepth == depthData);
    REQUIRE_CL(clEnqueueReleaseGLObjects(queue, 1, &depthImg, 0, nullptr, nullptr));
    clReleaseMemObject(depthImg);
    glDeleteTextures(1, &depthTex);

    // A buffer, read back with glMapBufferRange (ES has no glGetBufferSubData).
    const size_t n = 512;
    GLuint vbo = makeGlBuffer(n * sizeof(float), nullptr);
    cl_mem buf = clCreateFromGLBuffer(context, CL_MEM_WRITE_ONLY, vbo, &err);
    REQUIRE_CL(err);
    cl_program fillProg = buildProgram(context, device, kKernels);
    cl_kernel fill = clCreateKernel(fillProg, "fill", &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clSetKernelArg(fill, 0, sizeof buf, &buf));
    REQUIRE_CL(clEnqueueAcquireGLObjects(queue, 1, &buf, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(queue, fill, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(queue, 1, &buf, 0, nullptr, nullptr));
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    auto* mapped = static_cast<const int*>(
        glMapBufferRange(GL_ARRAY_BUFFER, 0, GLsizeiptr(n * sizeof(int)), GL_MAP_READ_BIT));
    REQUIRE(mapped);
    for (size_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(mapped[i] == int(i) * 3);
    }
    glUnmapBuffer(GL_ARRAY_BUFFER);
    glBindBuffer(GL_ARRAY_BUFFER, 0);

    clReleaseKernel(fill);
    clReleaseProgram(fillProg);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(buf);
    clReleaseMemObject(img);
    clReleaseMemObject(layered);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    glDeleteBuffers(1, &vbo);
    GLuint texs[2] = {tex, arr};
    glDeleteTextures(2, texs);
    eglMakeCurrent(desktop.display, EGL_NO_SURFACE, EGL_NO_SURFACE, desktop.context);
    eglDestroyContext(desktop.display, es);
}

TEST_CASE("an image made from a GL buffer shared in place follows its storage", "[gl]") {
    Shared s;
    const size_t w = 16, h = 8, bytes = w * h * 4;
    GLuint vbo = makeGlBuffer(bytes, nullptr);
    cl_int err = CL_SUCCESS;
    cl_mem buf = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    cl_image_format fmt{CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = w;
    desc.image_height = h;
    desc.mem_object = buf;
    cl_mem img = clCreateImage(s.context, CL_MEM_READ_WRITE, &fmt, &desc, nullptr, &err);
    REQUIRE_CL(err);
    cl_program prog = buildProgram(s.context, s.device, R"(
kernel void paint(write_only image2d_t img, uint k) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imageui(img, p, (uint4)(p.x, p.y, k, 255));
})");
    cl_kernel k = clCreateKernel(prog, "paint", &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof img, &img));
    size_t global[2] = {w, h};
    for (cl_uint round = 1; round <= 2; ++round) {
        INFO("round " << round);
        // New GL storage each round: the image must land in the one of this acquire.
        std::vector<unsigned char> zeros(bytes, 0);
        glBindBuffer(GL_ARRAY_BUFFER, vbo);
        glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(bytes), zeros.data(), GL_DYNAMIC_DRAW);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof round, &round));
        // The image is over a GL object: unusable until the buffer is acquired.
        CHECK_CL_ERR(CL_INVALID_OPERATION, clEnqueueNDRangeKernel(s.queue, k, 2, nullptr, global,
                                                                  nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueAcquireGLObjects(s.queue, 1, &buf, 0, nullptr, nullptr));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(s.queue, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueReleaseGLObjects(s.queue, 1, &buf, 0, nullptr, nullptr));
        std::vector<unsigned char> back(bytes, 0);
        glBindBuffer(GL_ARRAY_BUFFER, vbo);
        glGetBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(bytes), back.data());
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        for (size_t y = 0; y < h; ++y)
            for (size_t x = 0; x < w; ++x) {
                INFO("texel " << x << "," << y);
                const unsigned char* t = &back[(y * w + x) * 4];
                REQUIRE(int(t[0]) == int(x));
                REQUIRE(int(t[1]) == int(y));
                REQUIRE(int(t[2]) == int(round));
                REQUIRE(int(t[3]) == 255);
            }
    }
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(img);
    clReleaseMemObject(buf);
    glDeleteBuffers(1, &vbo);
}
