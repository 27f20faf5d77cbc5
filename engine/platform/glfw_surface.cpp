// A GLFW 3.3 window on X11 with a GL 3.3+ core GLX context, and its native X11/GLX handles.
#include "duet/engine/platform/surface.hpp"

#include "duet/engine/app/event.hpp"
#include "duet/engine/error.hpp"

#include <glad/gl.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#define GLFW_EXPOSE_NATIVE_X11
#define GLFW_EXPOSE_NATIVE_GLX
#include <GLFW/glfw3native.h>

#include <cstdlib>

namespace duet::engine {
namespace {

// GLFW reports errors through a global callback; keep the last one for the exception text.
thread_local std::string g_lastGlfwError;

void onGlfwError(int code, const char* text) {
    g_lastGlfwError =
        std::string(text ? text : "unknown") + " (GLFW error " + std::to_string(code) + ")";
}

class GlfwSurface final : public Surface {
public:
    explicit GlfwSurface(GLFWwindow* window) : m_window(window) {
        glfwSetWindowUserPointer(window, this);
        glfwSetKeyCallback(window, [](GLFWwindow* w, int key, int, int action, int mods) {
            self(w)->emit(Event{Event::Type::Key, key, action, mods, 0, 0});
        });
        glfwSetMouseButtonCallback(window, [](GLFWwindow* w, int button, int action, int mods) {
            self(w)->emit(Event{Event::Type::MouseButton, button, action, mods, 0, 0});
        });
        glfwSetCursorPosCallback(window, [](GLFWwindow* w, double x, double y) {
            self(w)->emit(Event{Event::Type::MouseMove, 0, 0, 0, x, y});
        });
        glfwSetScrollCallback(window, [](GLFWwindow* w, double x, double y) {
            self(w)->emit(Event{Event::Type::Scroll, 0, 0, 0, x, y});
        });
        glfwSetFramebufferSizeCallback(window, [](GLFWwindow* w, int width, int height) {
            self(w)->emit(Event{Event::Type::Resize, 0, 0, 0, double(width), double(height)});
        });
    }

    ~GlfwSurface() override {
        glfwDestroyWindow(m_window);
        glfwTerminate();
    }

    bool headless() const override { return false; }
    void makeCurrent() override { glfwMakeContextCurrent(m_window); }
    void swapBuffers() override { glfwSwapBuffers(m_window); }
    void pollEvents() override { glfwPollEvents(); }
    bool shouldClose() const override { return glfwWindowShouldClose(m_window); }
    void framebufferSize(int& width, int& height) const override {
        glfwGetFramebufferSize(m_window, &width, &height);
    }
    unsigned framebuffer() const override { return 0; }
    unsigned readBuffer() const override { return GL_BACK; }
    NativeGL native() const override {
        return NativeGL{NativeGL::Api::Glx, glfwGetX11Display(), glfwGetGLXContext(m_window),
                        glfwGetGLXWindow(m_window)};
    }
    std::string description() const override {
        const char* display = std::getenv("DISPLAY");
        return std::string("GLFW window on X11 ") + (display ? display : "?") + ", GLX, " +
               reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    }
    void* glfwWindow() const override { return m_window; }

private:
    static GlfwSurface* self(GLFWwindow* w) {
        return static_cast<GlfwSurface*>(glfwGetWindowUserPointer(w));
    }
    void emit(const Event& e) {
        if (m_handler)
            m_handler(e);
    }

    GLFWwindow* m_window;
};

} // namespace

std::unique_ptr<Surface> createGlfwSurface(const SurfaceDesc& desc) {
    if (desc.width <= 0 || desc.height <= 0)
        throw Error("window: bad size " + std::to_string(desc.width) + "x" +
                    std::to_string(desc.height));
    glfwSetErrorCallback(onGlfwError);
    g_lastGlfwError.clear();
    const char* display = std::getenv("DISPLAY");
    if (!glfwInit())
        throw Error(std::string("no OpenGL window: cannot open X display '") +
                    (display ? display : "") + "': " + g_lastGlfwError +
                    " (use --headless for EGL)");
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_API);
    glfwWindowHint(GLFW_CONTEXT_CREATION_API, GLFW_NATIVE_CONTEXT_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_DEPTH_BITS, 24);
    glfwWindowHint(GLFW_STENCIL_BITS, 8);
    glfwWindowHint(GLFW_VISIBLE, desc.visible ? GLFW_TRUE : GLFW_FALSE);
    GLFWwindow* window =
        glfwCreateWindow(desc.width, desc.height, desc.title.c_str(), nullptr, nullptr);
    if (!window) {
        std::string reason = g_lastGlfwError;
        glfwTerminate();
        throw Error("no OpenGL window: no GL 3.3 core GLX context on '" +
                    std::string(display ? display : "") + "': " + reason);
    }
    glfwMakeContextCurrent(window);
    auto surface = std::make_unique<GlfwSurface>(window);
    loadGL(reinterpret_cast<void* (*)(const char*)>(glfwGetProcAddress), "GLFW");
    glfwSwapInterval(desc.vsync ? 1 : 0);
    return surface;
}

} // namespace duet::engine
