// GL, EGL and GLX entry points the runtime loads at run time (no link-time GL dependency).
// Only the sharing sources include this header.
#pragma once

#define EGL_NO_X11
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

namespace duet::rt::gl {

/// Loaded once by libraries(); members are null when a library or symbol is missing.
struct GlFunctions {
    // EGL (libEGL.so.1)
    PFNEGLGETPROCADDRESSPROC eglGetProcAddress = nullptr;
    PFNEGLQUERYCONTEXTPROC eglQueryContext = nullptr;
    PFNEGLCHOOSECONFIGPROC eglChooseConfig = nullptr;
    PFNEGLCREATECONTEXTPROC eglCreateContext = nullptr;
    PFNEGLDESTROYCONTEXTPROC eglDestroyContext = nullptr;
    PFNEGLMAKECURRENTPROC eglMakeCurrent = nullptr;
    PFNEGLBINDAPIPROC eglBindAPI = nullptr;
    PFNEGLGETCURRENTCONTEXTPROC eglGetCurrentContext = nullptr;
    PFNEGLGETERRORPROC eglGetError = nullptr;
    PFNEGLRELEASETHREADPROC eglReleaseThread = nullptr;
    // GLX (libGL.so.1), as untyped pointers to keep Xlib headers out
    void* (*glXGetProcAddress)(const unsigned char*) = nullptr;
    // GL, through the window system's GetProcAddress
    PFNGLBINDBUFFERPROC glBindBuffer = nullptr;
    PFNGLISBUFFERPROC glIsBuffer = nullptr;
    PFNGLGETBUFFERPARAMETERIVPROC glGetBufferParameteriv = nullptr;
    PFNGLMAPBUFFERRANGEPROC glMapBufferRange = nullptr;
    PFNGLUNMAPBUFFERPROC glUnmapBuffer = nullptr;
    PFNGLBUFFERSUBDATAPROC glBufferSubData = nullptr;
    PFNGLFINISHPROC glFinish = nullptr;
    PFNGLFLUSHPROC glFlush = nullptr;
    PFNGLFENCESYNCPROC glFenceSync = nullptr;
    PFNGLCLIENTWAITSYNCPROC glClientWaitSync = nullptr;
    PFNGLDELETESYNCPROC glDeleteSync = nullptr;
    PFNGLISSYNCPROC glIsSync = nullptr;
    PFNGLGETERRORPROC glGetError = nullptr;

    bool hasEgl() const { return eglGetProcAddress && eglCreateContext && eglMakeCurrent; }
    bool hasGl() const { return glBindBuffer && glMapBufferRange && glFenceSync; }
};

} // namespace duet::rt::gl
