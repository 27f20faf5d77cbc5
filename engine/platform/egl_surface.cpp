// Headless GL: an EGL context on a GPU device, Mesa's surfaceless platform or the default display.
#include "duet/engine/platform/surface.hpp"

#include "duet/data_paths.hpp"
#include "duet/engine/error.hpp"

#include <glad/egl.h>
#include <glad/gl.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace duet::engine {
namespace {

bool hasExtension(const char* list, const char* name) {
    if (!list)
        return false;
    size_t n = std::strlen(name);
    for (const char* p = list; (p = std::strstr(p, name)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

std::string eglErrorName(EGLint e) {
    switch (e) {
    case EGL_SUCCESS:
        return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED:
        return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS:
        return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC:
        return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE:
        return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG:
        return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT:
        return "EGL_BAD_CONTEXT";
    case EGL_BAD_DISPLAY:
        return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH:
        return "EGL_BAD_MATCH";
    case EGL_BAD_PARAMETER:
        return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE:
        return "EGL_BAD_SURFACE";
    default:
        return "EGL error " + std::to_string(e);
    }
}

/// One display to try, and the words that describe it.
struct Candidate {
    EGLenum platform = 0; // 0: eglGetDisplay(EGL_DEFAULT_DISPLAY)
    void* nativeDisplay = nullptr;
    std::string name;
};

class EglSurface final : public Surface {
public:
    EglSurface(EGLDisplay display, EGLContext context, EGLSurface pbuffer, std::string description,
               int width, int height)
        : m_display(display), m_context(context), m_pbuffer(pbuffer),
          m_description(std::move(description)), m_width(width), m_height(height) {}

    ~EglSurface() override {
        if (m_fbo) {
            glDeleteFramebuffers(1, &m_fbo);
            glDeleteRenderbuffers(2, m_renderbuffers);
        }
        eglMakeCurrent(m_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (m_pbuffer != EGL_NO_SURFACE)
            eglDestroySurface(m_display, m_pbuffer);
        eglDestroyContext(m_display, m_context);
        eglTerminate(m_display);
    }

    /// Without a pbuffer there is no default framebuffer: make an RGBA8 + depth/stencil FBO.
    void createFramebuffer() {
        glGenRenderbuffers(2, m_renderbuffers);
        glBindRenderbuffer(GL_RENDERBUFFER, m_renderbuffers[0]);
        glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, m_width, m_height);
        glBindRenderbuffer(GL_RENDERBUFFER, m_renderbuffers[1]);
        glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH24_STENCIL8, m_width, m_height);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        glGenFramebuffers(1, &m_fbo);
        glBindFramebuffer(GL_FRAMEBUFFER, m_fbo);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER,
                                  m_renderbuffers[0]);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_STENCIL_ATTACHMENT, GL_RENDERBUFFER,
                                  m_renderbuffers[1]);
        GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
        if (status != GL_FRAMEBUFFER_COMPLETE)
            throw Error("EGL: offscreen framebuffer incomplete (status " + std::to_string(status) +
                        ")");
    }

    bool headless() const override { return true; }
    void makeCurrent() override { eglMakeCurrent(m_display, m_pbuffer, m_pbuffer, m_context); }
    void swapBuffers() override {
        // A pbuffer is single-buffered and an FBO has nothing to swap; flush so timings include
        // the submitted work.
        glFlush();
    }
    void pollEvents() override {}
    bool shouldClose() const override { return false; }
    void framebufferSize(int& width, int& height) const override {
        width = m_width;
        height = m_height;
    }
    unsigned framebuffer() const override { return m_fbo; }
    unsigned readBuffer() const override { return m_fbo ? GL_COLOR_ATTACHMENT0 : GL_BACK; }
    NativeGL native() const override {
        return NativeGL{NativeGL::Api::Egl, m_display, m_context, 0};
    }
    std::string description() const override { return m_description; }

private:
    EGLDisplay m_display;
    EGLContext m_context;
    EGLSurface m_pbuffer;
    std::string m_description;
    int m_width, m_height;
    GLuint m_fbo = 0;
    GLuint m_renderbuffers[2] = {0, 0};
};

std::vector<Candidate> candidates(const char* clientExtensions, const std::string& forced,
                                  std::string& notes) {
    std::vector<Candidate> hardware, software, result;
    // NVIDIA's EGL names enumeration and query together as EGL_EXT_device_base.
    bool devices = hasExtension(clientExtensions, "EGL_EXT_platform_device") &&
                   (hasExtension(clientExtensions, "EGL_EXT_device_enumeration") ||
                    hasExtension(clientExtensions, "EGL_EXT_device_base")) &&
                   eglQueryDevicesEXT;
    if (devices && (forced.empty() || forced == "device")) {
        EGLDeviceEXT list[16];
        EGLint count = 0;
        if (eglQueryDevicesEXT(16, list, &count)) {
            for (EGLint i = 0; i < count; ++i) {
                const char* ext = eglQueryDeviceStringEXT
                                      ? eglQueryDeviceStringEXT(list[i], EGL_EXTENSIONS)
                                      : nullptr;
                bool isSoftware = hasExtension(ext, "EGL_MESA_device_software");
                Candidate c{EGL_PLATFORM_DEVICE_EXT, list[i],
                            std::string("EGL device ") + std::to_string(i) +
                                (isSoftware ? " (software)" : "")};
                (isSoftware ? software : hardware).push_back(c);
            }
        }
    } else if (forced == "device") {
        notes += " EGL_EXT_platform_device is not offered;";
    }
    // Real GPUs first, then Mesa's surfaceless platform, then software devices, then default.
    result = hardware;
    if (hasExtension(clientExtensions, "EGL_MESA_platform_surfaceless") &&
        (forced.empty() || forced == "surfaceless"))
        result.push_back(
            Candidate{EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, "EGL surfaceless"});
    else if (forced == "surfaceless")
        notes += " EGL_MESA_platform_surfaceless is not offered;";
    result.insert(result.end(), software.begin(), software.end());
    if (forced.empty() || forced == "default")
        result.push_back(Candidate{0, nullptr, "EGL default display"});
    return result;
}

/// Tries one display; returns nullptr and appends the reason to `why` when it cannot serve.
std::unique_ptr<EglSurface> tryCandidate(const Candidate& c, const SurfaceDesc& desc,
                                         bool allowPbuffer, std::string& why) {
    auto fail = [&](const std::string& what) {
        EGLint error = eglGetError();
        why += " " + c.name + ": " + what +
               (error == EGL_SUCCESS ? std::string() : " (" + eglErrorName(error) + ")") + ";";
        return nullptr;
    };
    EGLDisplay display = c.platform ? eglGetPlatformDisplayEXT(c.platform, c.nativeDisplay, nullptr)
                                    : eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (display == EGL_NO_DISPLAY)
        return fail("no display");
    EGLint major = 0, minor = 0;
    if (!eglInitialize(display, &major, &minor))
        return fail("eglInitialize failed");
    // Reload with the display so its extensions (surfaceless_context, create_context) are known.
    gladLoaderLoadEGL(display);
    const char* displayExtensions = eglQueryString(display, EGL_EXTENSIONS);
    if (!eglBindAPI(EGL_OPENGL_API)) {
        eglTerminate(display);
        return fail("no desktop OpenGL API");
    }
    bool surfaceless = hasExtension(displayExtensions, "EGL_KHR_surfaceless_context");

    const EGLint pbufferConfig[] = {EGL_SURFACE_TYPE,
                                    EGL_PBUFFER_BIT,
                                    EGL_RENDERABLE_TYPE,
                                    EGL_OPENGL_BIT,
                                    EGL_RED_SIZE,
                                    8,
                                    EGL_GREEN_SIZE,
                                    8,
                                    EGL_BLUE_SIZE,
                                    8,
                                    EGL_ALPHA_SIZE,
                                    8,
                                    EGL_DEPTH_SIZE,
                                    24,
                                    EGL_STENCIL_SIZE,
                                    8,
                                    EGL_NONE};
    // EGL_SURFACE_TYPE defaults to EGL_WINDOW_BIT, which surfaceless displays never offer; 0
    // matches every config.
    const EGLint anyConfig[] = {EGL_SURFACE_TYPE,
                                0,
                                EGL_RENDERABLE_TYPE,
                                EGL_OPENGL_BIT,
                                EGL_RED_SIZE,
                                8,
                                EGL_GREEN_SIZE,
                                8,
                                EGL_BLUE_SIZE,
                                8,
                                EGL_NONE};
    EGLConfig config = nullptr;
    EGLint count = 0;
    bool pbuffer =
        allowPbuffer && eglChooseConfig(display, pbufferConfig, &config, 1, &count) && count > 0;
    if (!pbuffer) {
        if (!surfaceless) {
            eglTerminate(display);
            return fail("no pbuffer config and no EGL_KHR_surfaceless_context");
        }
        if (!eglChooseConfig(display, anyConfig, &config, 1, &count) || count == 0) {
            eglTerminate(display);
            return fail("no OpenGL config");
        }
    }

    const EGLint contextAttribs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                     3,
                                     EGL_CONTEXT_MINOR_VERSION,
                                     3,
                                     EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                     EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                     EGL_NONE};
    EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, contextAttribs);
    if (context == EGL_NO_CONTEXT) {
        eglTerminate(display);
        return fail("no OpenGL 3.3 core context");
    }
    EGLSurface surface = EGL_NO_SURFACE;
    if (pbuffer) {
        const EGLint pbufferAttribs[] = {EGL_WIDTH, desc.width, EGL_HEIGHT, desc.height, EGL_NONE};
        surface = eglCreatePbufferSurface(display, config, pbufferAttribs);
        if (surface == EGL_NO_SURFACE && !surfaceless) {
            eglDestroyContext(display, context);
            eglTerminate(display);
            return fail("eglCreatePbufferSurface failed");
        }
    }
    if (!eglMakeCurrent(display, surface, surface, context)) {
        if (surface != EGL_NO_SURFACE)
            eglDestroySurface(display, surface);
        eglDestroyContext(display, context);
        eglTerminate(display);
        return fail("eglMakeCurrent failed");
    }
    try {
        loadGL(reinterpret_cast<void* (*)(const char*)>(eglGetProcAddress), c.name);
    } catch (const Error& e) {
        eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (surface != EGL_NO_SURFACE)
            eglDestroySurface(display, surface);
        eglDestroyContext(display, context);
        eglTerminate(display);
        why += std::string(" ") + e.what() + ";";
        return nullptr;
    }

    const char* vendor = eglQueryString(display, EGL_VENDOR);
    std::string text = c.name + (surface != EGL_NO_SURFACE ? " pbuffer" : " FBO") + ", " +
                       (vendor ? vendor : "?") + " EGL " + std::to_string(major) + "." +
                       std::to_string(minor) + ", " +
                       reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    auto result = std::make_unique<EglSurface>(display, context, surface, std::move(text),
                                               desc.width, desc.height);
    if (surface == EGL_NO_SURFACE)
        result->createFramebuffer();
    return result;
}

} // namespace

std::unique_ptr<Surface> createEglSurface(const SurfaceDesc& desc) {
    if (desc.width <= 0 || desc.height <= 0)
        throw Error("EGL: bad surface size " + std::to_string(desc.width) + "x" +
                    std::to_string(desc.height));
    if (!gladLoaderLoadEGL(EGL_NO_DISPLAY)) {
        // In a bundle run without its setup-env.sh: the bundle's GLVND libEGL is not on the
        // library path yet.
        const std::string advice = duet::bundleSetupAdvice(duet::bundleDirectory(), "glvnd",
                                                           std::getenv("LD_LIBRARY_PATH"));
        throw Error("no OpenGL: cannot load libEGL.so.1 (install libegl1 and a driver, e.g. "
                    "libegl-mesa0" +
                    (advice.empty() ? std::string() : "; " + advice) + ")");
    }
    const char* clientExtensions = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    const char* forcedEnv = std::getenv("DUET_EGL_PLATFORM");
    std::string forced = forcedEnv ? forcedEnv : "";
    const char* surfaceEnv = std::getenv("DUET_EGL_SURFACE");
    bool allowPbuffer = !(surfaceEnv && std::string(surfaceEnv) == "fbo");

    std::string why;
    if (!forced.empty() && forced != "device" && forced != "surfaceless" && forced != "default")
        why = " DUET_EGL_PLATFORM=" + forced + " is not one of device, surfaceless, default;";
    for (const Candidate& c : candidates(clientExtensions, forced, why)) {
        if (auto surface = tryCandidate(c, desc, allowPbuffer, why))
            return surface;
    }
    if (!why.empty() && why.back() == ';')
        why.pop_back();
    throw Error("no OpenGL: no headless EGL display gives a GL 3.3 core context:" + why);
}

} // namespace duet::engine
