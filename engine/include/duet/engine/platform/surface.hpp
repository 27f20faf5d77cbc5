// The GL context and what it draws into: a GLFW window on X11 or a headless EGL surface.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace duet::engine {

struct Event;

/// Native handles of a GL context, as clGetGLContextInfoKHR and clCreateContext want them
/// (CL_EGL_DISPLAY_KHR / CL_GLX_DISPLAY_KHR and CL_GL_CONTEXT_KHR).
struct NativeGL {
    enum class Api { Egl, Glx }; ///< which of the two the handles below are
    Api api = Api::Egl;
    void* display = nullptr;    ///< EGLDisplay, or the X11 Display*
    void* context = nullptr;    ///< EGLContext, or the GLXContext
    unsigned long drawable = 0; ///< the GLXDrawable (X11 window) for Glx; 0 for Egl
};

/// What to create. Zero-initialised fields mean defaults.
struct SurfaceDesc {
    int width = 1280; ///< framebuffer size in pixels
    int height = 720;
    std::string title = "Duet"; ///< window title
    bool visible = true;        ///< window only; tests create hidden windows
    bool vsync = true;          ///< window only
};

/// A current GL 3.3+ core context plus its drawable. Thread affinity: the creating thread, which
/// is the thread the context is current on; every call is from that thread.
class Surface {
public:
    virtual ~Surface() = default;

    /// True for the EGL surface, false for a window.
    virtual bool headless() const = 0;
    /// Makes this context current on the calling thread again (e.g. after a foreign library
    /// changed it).
    virtual void makeCurrent() = 0;
    /// Presents the frame (window: glfwSwapBuffers; headless: eglSwapBuffers or nothing).
    virtual void swapBuffers() = 0;
    /// Dispatches window events to the handler given to setEventHandler; no-op headless.
    virtual void pollEvents() = 0;
    /// True once the user closed the window; never true headless.
    virtual bool shouldClose() const = 0;
    /// Size in pixels of what framebuffer() draws into.
    virtual void framebufferSize(int& width, int& height) const = 0;
    /// The GL framebuffer a frame is drawn into: 0 for a window or an EGL pbuffer, an engine-owned
    /// FBO for a surfaceless EGL context. Samples bind this, not 0.
    virtual unsigned framebuffer() const = 0;
    /// The colour buffer glReadBuffer takes for framebuffer() (GL_BACK or GL_COLOR_ATTACHMENT0).
    virtual unsigned readBuffer() const = 0;
    /// The context's native handles for OpenCL (clGetGLContextInfoKHR, clCreateContext).
    virtual NativeGL native() const = 0;
    /// One line saying what this is, e.g. "EGL surfaceless pbuffer, Mesa llvmpipe".
    virtual std::string description() const = 0;
    /// The GLFWwindow* for a window (the ImGui backend needs it); nullptr headless.
    virtual void* glfwWindow() const { return nullptr; }

    /// Receives window events (keys, mouse, scroll, resize) from pollEvents.
    void setEventHandler(std::function<void(const Event&)> handler) {
        m_handler = std::move(handler);
    }

protected:
    std::function<void(const Event&)> m_handler;
};

/// Creates a headless EGL context and makes it current, trying in order: EGL devices of real GPUs
/// (EGL_EXT_platform_device), Mesa's surfaceless platform, software EGL devices, the default
/// display. DUET_EGL_PLATFORM=device|surfaceless|default forces one; DUET_EGL_SURFACE=fbo skips
/// the pbuffer and renders into an FBO. Throws Error saying what each attempt answered.
std::unique_ptr<Surface> createEglSurface(const SurfaceDesc& desc);

/// Opens a GLFW window on X11 ($DISPLAY) with a GL 3.3+ core GLX context, made current.
/// Throws Error with GLFW's reason when there is no display or no such context.
std::unique_ptr<Surface> createGlfwSurface(const SurfaceDesc& desc);

/// Throws Error unless the current context is GL 3.3 or newer; loads glad's GL entry points.
/// Called by both surfaces after making their context current.
void loadGL(void* (*getProcAddress)(const char*), const std::string& what);

} // namespace duet::engine
