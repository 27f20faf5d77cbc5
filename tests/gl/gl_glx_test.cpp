// GL sharing with a GLX context on an Xvfb server this test starts: context queries and
// creation with CL_GLX_DISPLAY_KHR, and GL buffers written and read by kernels.
#define CATCH_CONFIG_RUNNER
#include "support/cl_test.hpp"
#include "support/xvfb.hpp"

#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>
#include <GL/glx.h>

#include <CL/cl_gl.h>

#include <cstdio>
#include <numeric>

using namespace duet::test;

namespace {

Display* g_dpy = nullptr;
GLXContext g_ctx = nullptr;
GLXPbuffer g_pbuffer = 0;

/// A GL 3.3 core GLX context on a pbuffer, current on the main thread.
bool makeGlxContext() {
    const int attrs[] = {
        GLX_DRAWABLE_TYPE, GLX_PBUFFER_BIT, GLX_RENDER_TYPE, GLX_RGBA_BIT, GLX_RED_SIZE, 8, None};
    int n = 0;
    GLXFBConfig* configs = glXChooseFBConfig(g_dpy, DefaultScreen(g_dpy), attrs, &n);
    if (!configs || n < 1)
        return false;
    auto createAttribs = reinterpret_cast<PFNGLXCREATECONTEXTATTRIBSARBPROC>(
        glXGetProcAddressARB(reinterpret_cast<const GLubyte*>("glXCreateContextAttribsARB")));
    const int ctxAttrs[] = {GLX_CONTEXT_MAJOR_VERSION_ARB,
                            3,
                            GLX_CONTEXT_MINOR_VERSION_ARB,
                            3,
                            GLX_CONTEXT_PROFILE_MASK_ARB,
                            GLX_CONTEXT_CORE_PROFILE_BIT_ARB,
                            None};
    g_ctx = createAttribs(g_dpy, configs[0], nullptr, True, ctxAttrs);
    const int pb[] = {GLX_PBUFFER_WIDTH, 16, GLX_PBUFFER_HEIGHT, 16, None};
    g_pbuffer = glXCreatePbuffer(g_dpy, configs[0], pb);
    XFree(configs);
    return g_ctx && glXMakeContextCurrent(g_dpy, g_pbuffer, g_pbuffer, g_ctx);
}

std::vector<cl_context_properties> glxProperties(cl_platform_id p) {
    return {CL_CONTEXT_PLATFORM,
            cl_context_properties(p),
            CL_GL_CONTEXT_KHR,
            cl_context_properties(g_ctx),
            CL_GLX_DISPLAY_KHR,
            cl_context_properties(g_dpy),
            0};
}

} // namespace

int main(int argc, char** argv) {
    if (xvfbPath().empty())
        return skipTest("Xvfb is not installed (apt-get install xvfb); GLX sharing needs an X "
                        "server");
    XvfbServer xvfb({"-screen", "0", "640x480x24"}, 150);
    if (!xvfb.running()) {
        std::fprintf(stderr, "FAILED: Xvfb is installed but did not start on any display from "
                             ":150\n");
        return 1;
    }
    g_dpy = XOpenDisplay(xvfb.display().c_str());
    int rc = 1;
    if (!g_dpy || !makeGlxContext()) {
        std::fprintf(stderr, "no GLX context on Xvfb %s\n", xvfb.display().c_str());
    } else {
        rc = Catch::Session().run(argc, argv);
        glXMakeContextCurrent(g_dpy, None, None, nullptr);
        glXDestroyPbuffer(g_dpy, g_pbuffer);
        glXDestroyContext(g_dpy, g_ctx);
    }
    if (g_dpy)
        XCloseDisplay(g_dpy);
    return rc;
}

TEST_CASE("GLX: clGetGLContextInfoKHR and context creation with CL_GLX_DISPLAY_KHR", "[gl][glx]") {
    cl_platform_id p = platformUnderTest();
    auto props = glxProperties(p);
    cl_device_id dev = nullptr;
    REQUIRE_CL(clGetGLContextInfoKHR(props.data(), CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, sizeof dev,
                                     &dev, nullptr));
    CHECK(dev == defaultDevice());
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(props.data(), 1, &dev, nullptr, nullptr, &err);
    REQUIRE_CL(err);
    size_t size = 0;
    REQUIRE_CL(clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, 0, nullptr, &size));
    std::vector<cl_context_properties> back(size / sizeof(cl_context_properties));
    REQUIRE_CL(clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, size, back.data(), nullptr));
    CHECK(back == props);
    clReleaseContext(ctx);

    // A GLXContext handle that is not one, and two window systems at once.
    int notAContext = 0;
    cl_context_properties bogus[] = {CL_CONTEXT_PLATFORM,
                                     cl_context_properties(p),
                                     CL_GL_CONTEXT_KHR,
                                     cl_context_properties(&notAContext),
                                     CL_GLX_DISPLAY_KHR,
                                     cl_context_properties(g_dpy),
                                     0};
    CHECK_CL_ERR(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                 clGetGLContextInfoKHR(bogus, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, sizeof dev,
                                       &dev, nullptr));
    CHECK(clCreateContext(bogus, 1, &dev, nullptr, nullptr, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR, err);
    cl_context_properties two[] = {
        CL_CONTEXT_PLATFORM,          cl_context_properties(p),     CL_GL_CONTEXT_KHR,
        cl_context_properties(g_ctx), CL_GLX_DISPLAY_KHR,           cl_context_properties(g_dpy),
        CL_EGL_DISPLAY_KHR,           cl_context_properties(g_dpy), 0};
    CHECK(clCreateContext(two, 1, &dev, nullptr, nullptr, &err) == nullptr);
    CHECK_CL_ERR(CL_INVALID_OPERATION, err);
    // The application's context still works.
    CHECK(glXGetCurrentContext() == g_ctx);
}

TEST_CASE("GLX: GL buffers written and read by kernels", "[gl][glx]") {
    cl_platform_id p = platformUnderTest();
    auto props = glxProperties(p);
    cl_device_id dev = defaultDevice();
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(props.data(), 1, &dev, nullptr, nullptr, &err);
    REQUIRE_CL(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &err);
    REQUIRE_CL(err);

    const size_t n = 512;
    std::vector<int> init(n);
    std::iota(init.begin(), init.end(), 100);
    GLuint vbo = 0;
    glGenBuffers(1, &vbo);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(n * sizeof(int)), init.data(), GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);

    cl_mem mem = clCreateFromGLBuffer(ctx, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    cl_program prog = buildProgram(ctx, dev,
                                   "kernel void twice(global int* v) {"
                                   " size_t i = get_global_id(0); v[i] = v[i] * 2 - 1; }");
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof mem, &mem));
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueAcquireGLObjects(q, 1, &mem, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReleaseGLObjects(q, 1, &mem, 0, nullptr, nullptr));
    // No clFinish: GL commands after the release see the kernel's writes.

    std::vector<int> back(n, 0);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glGetBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(n * sizeof(int)), back.data());
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    for (size_t i = 0; i < n; ++i) {
        INFO("element " << i);
        REQUIRE(back[i] == init[i] * 2 - 1);
    }
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(mem);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    glDeleteBuffers(1, &vbo);
}
