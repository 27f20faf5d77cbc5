// A surfaceless Mesa EGL display with a current desktop GL 3.3 core context, for tests of GL
// sharing without a display (header-only: the tests that use it link EGL themselves).
#pragma once

#include "support/cl_test.hpp"

#define EGL_NO_X11
#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <CL/cl_gl.h>

#include <vector>

namespace duet::test {

/// The context is current on the thread that made it; null (ok() false) when Mesa's surfaceless
/// platform is missing.
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
        const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                3,
                                EGL_CONTEXT_MINOR_VERSION,
                                3,
                                EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                EGL_NONE};
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
    EglContext(const EglContext&) = delete;
    EglContext& operator=(const EglContext&) = delete;
    bool ok() const { return context != EGL_NO_CONTEXT; }
    /// clCreateContext properties sharing with this context on platform `p`.
    std::vector<cl_context_properties> properties(cl_platform_id p = platformUnderTest()) const {
        return {CL_CONTEXT_PLATFORM,
                cl_context_properties(p),
                CL_GL_CONTEXT_KHR,
                cl_context_properties(context),
                CL_EGL_DISPLAY_KHR,
                cl_context_properties(display),
                0};
    }
};

/// The process's context, made on first use (the test fails without one).
inline EglContext& egl() {
    static EglContext e;
    if (!e.ok())
        FAIL("no surfaceless EGL context (Mesa's EGL_MESA_platform_surfaceless)");
    return e;
}

} // namespace duet::test
