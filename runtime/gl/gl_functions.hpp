// GL, EGL and GLX entry points the runtime loads at run time (no link-time GL dependency).
// Only the sharing sources include this header.
#pragma once

#define EGL_NO_X11
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

namespace duet::rt::gl {

/// GL_EXT_memory_object (glext.h, which the core header leaves out).
constexpr GLenum kGlNumDeviceUuids = 0x9596;        ///< GL_NUM_DEVICE_UUIDS_EXT
constexpr GLenum kGlDeviceUuid = 0x9597;            ///< GL_DEVICE_UUID_EXT
constexpr GLenum kGlDedicatedMemoryObject = 0x9581; ///< GL_DEDICATED_MEMORY_OBJECT_EXT
constexpr GLenum kGlHandleTypeOpaqueFd = 0x9586;    ///< GL_HANDLE_TYPE_OPAQUE_FD_EXT
/// EGL_NV_device_cuda's attribute of an EGL device: its CUDA ordinal.
constexpr EGLint kEglCudaDevice = 0x323A; ///< EGL_CUDA_DEVICE_NV

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
    PFNEGLQUERYSTRINGPROC eglQueryString = nullptr;
    // EGL_EXT_device_query (through eglGetProcAddress; null without it)
    PFNEGLQUERYDISPLAYATTRIBEXTPROC eglQueryDisplayAttribEXT = nullptr;
    PFNEGLQUERYDEVICESTRINGEXTPROC eglQueryDeviceStringEXT = nullptr;
    PFNEGLQUERYDEVICEATTRIBEXTPROC eglQueryDeviceAttribEXT = nullptr;
    // GLX (libGL.so.1), as untyped pointers to keep Xlib headers out
    // (Display*, GLXContext, GLXFBConfig as void*, GLXDrawable as unsigned long.)
    void* (*glXGetProcAddress)(const unsigned char*) = nullptr;
    int (*glXQueryContext)(void*, void*, int, int*) = nullptr;
    void** (*glXGetFBConfigs)(void*, int, int*) = nullptr;
    int (*glXGetFBConfigAttrib)(void*, void*, int, int*) = nullptr;
    void* (*glXCreateNewContext)(void*, void*, int, void*, int) = nullptr;
    void (*glXDestroyContext)(void*, void*) = nullptr;
    int (*glXMakeContextCurrent)(void*, unsigned long, unsigned long, void*) = nullptr;
    void* (*glXGetCurrentContext)() = nullptr;
    unsigned long (*glXCreatePbuffer)(void*, void*, const int*) = nullptr;
    void (*glXDestroyPbuffer)(void*, unsigned long) = nullptr;
    const char* (*glXQueryServerString)(void*, int, int) = nullptr;
    // Xlib (libX11.so.6)
    void* (*XOpenDisplay)(const char*) = nullptr;
    int (*XCloseDisplay)(void*) = nullptr;
    char* (*XDisplayString)(void*) = nullptr;
    int (*XFree)(void*) = nullptr;
    int (*XSync)(void*, int) = nullptr;
    using XErrorHandler = int (*)(void*, void*);
    XErrorHandler (*XSetErrorHandler)(XErrorHandler) = nullptr;
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
    PFNGLISTEXTUREPROC glIsTexture = nullptr;
    PFNGLISRENDERBUFFERPROC glIsRenderbuffer = nullptr;
    PFNGLBINDTEXTUREPROC glBindTexture = nullptr;
    PFNGLBINDRENDERBUFFERPROC glBindRenderbuffer = nullptr;
    PFNGLGETTEXLEVELPARAMETERIVPROC glGetTexLevelParameteriv = nullptr;
    PFNGLGETRENDERBUFFERPARAMETERIVPROC glGetRenderbufferParameteriv = nullptr;
    PFNGLGETTEXIMAGEPROC glGetTexImage = nullptr;
    PFNGLTEXSUBIMAGE1DPROC glTexSubImage1D = nullptr;
    PFNGLTEXSUBIMAGE2DPROC glTexSubImage2D = nullptr;
    PFNGLTEXSUBIMAGE3DPROC glTexSubImage3D = nullptr;
    PFNGLPIXELSTOREIPROC glPixelStorei = nullptr;
    PFNGLGENFRAMEBUFFERSPROC glGenFramebuffers = nullptr;
    PFNGLDELETEFRAMEBUFFERSPROC glDeleteFramebuffers = nullptr;
    PFNGLBINDFRAMEBUFFERPROC glBindFramebuffer = nullptr;
    PFNGLFRAMEBUFFERRENDERBUFFERPROC glFramebufferRenderbuffer = nullptr;
    PFNGLFRAMEBUFFERTEXTURE2DPROC glFramebufferTexture2D = nullptr;
    PFNGLREADPIXELSPROC glReadPixels = nullptr;
    PFNGLGENTEXTURESPROC glGenTextures = nullptr;
    PFNGLDELETETEXTURESPROC glDeleteTextures = nullptr;
    PFNGLTEXIMAGE2DPROC glTexImage2D = nullptr;
    PFNGLBLITFRAMEBUFFERPROC glBlitFramebuffer = nullptr;
    PFNGLREADBUFFERPROC glReadBuffer = nullptr;
    PFNGLFRAMEBUFFERTEXTURELAYERPROC glFramebufferTextureLayer = nullptr;
    PFNGLGETSTRINGPROC glGetString = nullptr;
    PFNGLGENBUFFERSPROC glGenBuffers = nullptr;
    PFNGLDELETEBUFFERSPROC glDeleteBuffers = nullptr;
    PFNGLBUFFERDATAPROC glBufferData = nullptr;
    PFNGLGETINTEGERVPROC glGetIntegerv = nullptr;
    PFNGLGETSTRINGIPROC glGetStringi = nullptr;
    /// GL_EXT_memory_object (device UUIDs). GLVND hands out an entry point even where the
    /// context lacks the extension: callers check GL_EXTENSIONS first (gl_context_devices.cpp).
    void(APIENTRYP glGetUnsignedBytei_vEXT)(GLenum, GLuint, GLubyte*) = nullptr;
    /// GL_EXT_memory_object(_fd): device memory as a buffer's storage (gl_device_access.cpp).
    void(APIENTRYP glCreateMemoryObjectsEXT)(GLsizei, GLuint*) = nullptr;
    void(APIENTRYP glDeleteMemoryObjectsEXT)(GLsizei, const GLuint*) = nullptr;
    void(APIENTRYP glMemoryObjectParameterivEXT)(GLuint, GLenum, const GLint*) = nullptr;
    void(APIENTRYP glImportMemoryFdEXT)(GLuint, GLuint64, GLenum, GLint) = nullptr;
    void(APIENTRYP glBufferStorageMemEXT)(GLenum, GLsizeiptr, GLuint, GLuint64) = nullptr;
    PFNGLCOPYBUFFERSUBDATAPROC glCopyBufferSubData = nullptr;
    /// GL 4.5 direct state access: a buffer's size and a texture upload in the application's own
    /// context without binding its objects (gl_device_access.cpp).
    PFNGLGETNAMEDBUFFERPARAMETERIVPROC glGetNamedBufferParameteriv = nullptr;
    PFNGLTEXTURESUBIMAGE2DPROC glTextureSubImage2D = nullptr;

    bool hasEgl() const { return eglGetProcAddress && eglCreateContext && eglMakeCurrent; }
    bool hasGlx() const {
        return glXQueryContext && glXGetFBConfigs && glXCreateNewContext && glXMakeContextCurrent &&
               XOpenDisplay && XDisplayString && XSync && XSetErrorHandler;
    }
    bool hasGl() const { return glBindBuffer && glMapBufferRange && glFenceSync; }
};

} // namespace duet::rt::gl
