// GL sharing with a surfaceless Mesa EGL context: context queries and creation, GL buffers
// written and read by kernels, GL sync events, and the error cases of cl_khr_gl_sharing.
#include "support/cl_test.hpp"

#define EGL_NO_X11
#include <EGL/egl.h>
#include <EGL/eglext.h>
#define GL_GLEXT_PROTOTYPES
#include <GL/glcorearb.h>

#include <CL/cl_gl.h>

#include <cstring>
#include <numeric>

using namespace duet::test;

namespace {

/// A surfaceless EGL display with a current desktop GL 3.3 core context (null when Mesa's
/// surfaceless platform is missing).
struct EglContext {
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLContext context = EGL_NO_CONTEXT;
    EglContext() {
        auto getPlatformDisplay = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
            eglGetProcAddress("eglGetPlatformDisplayEXT"));
        if (!getPlatformDisplay)
            return;
        display = getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
        if (display == EGL_NO_DISPLAY || !eglInitialize(display, nullptr, nullptr))
            return;
        eglBindAPI(EGL_OPENGL_API);
        const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
        context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);
        if (context != EGL_NO_CONTEXT)
            eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context);
    }
    ~EglContext() {
        if (context != EGL_NO_CONTEXT) {
            eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
            eglDestroyContext(display, context);
        }
    }
    bool ok() const { return context != EGL_NO_CONTEXT; }
    std::vector<cl_context_properties> properties(cl_platform_id p) const {
        return {CL_CONTEXT_PLATFORM, cl_context_properties(p),
                CL_GL_CONTEXT_KHR,   cl_context_properties(context),
                CL_EGL_DISPLAY_KHR,  cl_context_properties(display),
                0};
    }
};

EglContext& egl() {
    static EglContext e;
    if (!e.ok())
        FAIL("no surfaceless EGL context (Mesa's EGL_MESA_platform_surfaceless)");
    return e;
}

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

} // namespace

TEST_CASE("extension strings and extension function addresses", "[gl]") {
    cl_platform_id p = platformUnderTest();
    std::string pext = platformString(p, CL_PLATFORM_EXTENSIONS);
    std::string dext = deviceString(defaultDevice(), CL_DEVICE_EXTENSIONS);
    for (const char* e : {"cl_khr_gl_sharing", "cl_khr_gl_event"}) {
        CHECK(pext.find(e) != std::string::npos);
        CHECK(dext.find(e) != std::string::npos);
    }
    for (const char* fn : {"clGetGLContextInfoKHR", "clCreateFromGLBuffer", "clGetGLObjectInfo",
                           "clEnqueueAcquireGLObjects", "clEnqueueReleaseGLObjects",
                           "clCreateEventFromGLsyncKHR"}) {
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
    CHECK(current == defaultDevice());
    REQUIRE_CL(clGetGLContextInfoKHR(props.data(), CL_DEVICES_FOR_GL_CONTEXT_KHR, 0, nullptr,
                                     &size));
    std::vector<cl_device_id> all(size / sizeof(cl_device_id));
    REQUIRE(!all.empty());
    REQUIRE_CL(clGetGLContextInfoKHR(props.data(), CL_DEVICES_FOR_GL_CONTEXT_KHR, size,
                                     all.data(), nullptr));
    CHECK(std::find(all.begin(), all.end(), current) != all.end());

    SECTION("errors") {
        CHECK_CL_ERR(CL_INVALID_VALUE,
                     clGetGLContextInfoKHR(props.data(), 0x1234, sizeof current, &current,
                                           nullptr));
        CHECK_CL_ERR(CL_INVALID_VALUE,
                     clGetGLContextInfoKHR(props.data(), CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                           1, &current, nullptr));
        // No GL context at all.
        cl_context_properties none[] = {CL_CONTEXT_PLATFORM, cl_context_properties(p), 0};
        CHECK_CL_ERR(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                     clGetGLContextInfoKHR(none, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                           sizeof current, &current, nullptr));
        // A GL context handle that is not one.
        int notAContext = 0;
        cl_context_properties bogus[] = {CL_CONTEXT_PLATFORM, cl_context_properties(p),
                                         CL_GL_CONTEXT_KHR, cl_context_properties(&notAContext),
                                         CL_EGL_DISPLAY_KHR,
                                         cl_context_properties(egl().display), 0};
        CHECK_CL_ERR(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                     clGetGLContextInfoKHR(bogus, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                           sizeof current, &current, nullptr));
        // Two window systems at once.
        cl_context_properties two[] = {CL_CONTEXT_PLATFORM, cl_context_properties(p),
                                       CL_GL_CONTEXT_KHR, cl_context_properties(egl().context),
                                       CL_EGL_DISPLAY_KHR, cl_context_properties(egl().display),
                                       CL_GLX_DISPLAY_KHR, cl_context_properties(egl().display),
                                       0};
        CHECK_CL_ERR(CL_INVALID_OPERATION,
                     clGetGLContextInfoKHR(two, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                           sizeof current, &current, nullptr));
        // A window system this platform does not have (WGL).
        cl_context_properties wgl[] = {CL_CONTEXT_PLATFORM, cl_context_properties(p),
                                       CL_GL_CONTEXT_KHR, cl_context_properties(egl().context),
                                       CL_WGL_HDC_KHR, cl_context_properties(1), 0};
        CHECK_CL_ERR(CL_INVALID_OPERATION,
                     clGetGLContextInfoKHR(wgl, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR,
                                           sizeof current, &current, nullptr));
        // (The ICD loader needs CL_CONTEXT_PLATFORM to route the call to Duet.)
        cl_context_properties unknown[] = {CL_CONTEXT_PLATFORM, cl_context_properties(p),
                                           0x7777, 1, 0};
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
    cl_context_properties bogus[] = {CL_CONTEXT_PLATFORM, cl_context_properties(p),
                                     CL_GL_CONTEXT_KHR, cl_context_properties(&notAContext),
                                     CL_EGL_DISPLAY_KHR, cl_context_properties(egl().display), 0};
    CHECK(clCreateContext(bogus, 1, &dev, nullptr, nullptr, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR, err);
    cl_context_properties twice[] = {CL_GL_CONTEXT_KHR, cl_context_properties(egl().context),
                                     CL_GL_CONTEXT_KHR, cl_context_properties(egl().context),
                                     CL_EGL_DISPLAY_KHR, cl_context_properties(egl().display), 0};
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
                 clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &n, nullptr, 0, nullptr,
                                        nullptr));
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
                 clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &n, nullptr, 0, nullptr,
                                        nullptr));
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(mem);
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
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueAcquireGLObjects(s.queue, 1, nullptr, 0, nullptr,
                                                             nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueAcquireGLObjects(s.queue, 0, &mem, 0, nullptr,
                                                             nullptr));
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
    REQUIRE_CL(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                              nullptr));
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
