// GL sharing core: run-time loading of EGL/GL, property parsing, the runtime's shared GL
// context and its thread, and the context -> share bookkeeping.
#include "gl/gl_share.hpp"

#include "gl/gl_functions.hpp"

#include <CL/cl_gl.h>

#include <condition_variable>
#include <deque>
#include <dlfcn.h>
#include <future>
#include <map>
#include <mutex>
#include <thread>

namespace duet::rt::gl {

namespace {

template <class F> void load(F& fn, void* lib, const char* name) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
}

GlFunctions loadFunctions() {
    GlFunctions f;
    // RTLD_LOCAL: the application's own GL loading stays untouched; glvnd routes calls to the
    // vendor of the current context either way.
    if (void* egl = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL)) {
        load(f.eglGetProcAddress, egl, "eglGetProcAddress");
        load(f.eglQueryContext, egl, "eglQueryContext");
        load(f.eglChooseConfig, egl, "eglChooseConfig");
        load(f.eglCreateContext, egl, "eglCreateContext");
        load(f.eglDestroyContext, egl, "eglDestroyContext");
        load(f.eglMakeCurrent, egl, "eglMakeCurrent");
        load(f.eglBindAPI, egl, "eglBindAPI");
        load(f.eglGetCurrentContext, egl, "eglGetCurrentContext");
        load(f.eglGetError, egl, "eglGetError");
        load(f.eglReleaseThread, egl, "eglReleaseThread");
    }
    if (void* glx = dlopen("libGL.so.1", RTLD_NOW | RTLD_LOCAL))
        load(f.glXGetProcAddress, glx, "glXGetProcAddressARB");
    auto gl = [&](auto& fn, const char* name) {
        void* p = nullptr;
        if (f.eglGetProcAddress)
            p = reinterpret_cast<void*>(f.eglGetProcAddress(name));
        if (!p && f.glXGetProcAddress)
            p = f.glXGetProcAddress(reinterpret_cast<const unsigned char*>(name));
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    gl(f.glBindBuffer, "glBindBuffer");
    gl(f.glIsBuffer, "glIsBuffer");
    gl(f.glGetBufferParameteriv, "glGetBufferParameteriv");
    gl(f.glMapBufferRange, "glMapBufferRange");
    gl(f.glUnmapBuffer, "glUnmapBuffer");
    gl(f.glBufferSubData, "glBufferSubData");
    gl(f.glFinish, "glFinish");
    gl(f.glFlush, "glFlush");
    gl(f.glFenceSync, "glFenceSync");
    gl(f.glClientWaitSync, "glClientWaitSync");
    gl(f.glDeleteSync, "glDeleteSync");
    gl(f.glIsSync, "glIsSync");
    gl(f.glGetError, "glGetError");
    return f;
}

/// The runtime's EGL context in the application's share group, current on its own thread.
class EglShare final : public Share {
public:
    explicit EglShare(const GlProperties& props) { m_props = props; }
    ~EglShare() override {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_cv.notify_all();
        if (m_thread.joinable())
            m_thread.join();
    }

    Status start() {
        std::promise<Status> started;
        auto ready = started.get_future();
        m_thread = std::thread([this, &started] { threadMain(started); });
        Status s = ready.get();
        return s;
    }

    void run(std::function<void()> job) override {
        std::promise<void> done;
        auto f = done.get_future();
        post([&] {
            job();
            done.set_value();
        });
        f.get();
    }
    void post(std::function<void()> job) override {
        {
            std::lock_guard lock(m_mutex);
            m_jobs.push_back(std::move(job));
        }
        m_cv.notify_one();
    }

    void* fenceAppContext() override {
        const GlFunctions& f = glFunctions();
        if (!f.eglGetCurrentContext || f.eglGetCurrentContext() != m_props.context)
            return nullptr;
        GLsync s = f.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        f.glFlush(); // the GL thread's wait must not depend on this thread flushing later
        return s;
    }

private:
    void threadMain(std::promise<Status>& started) {
        const GlFunctions& f = glFunctions();
        auto dpy = static_cast<EGLDisplay>(m_props.display);
        auto app = static_cast<EGLContext>(m_props.context);
        EGLint clientType = 0, clientVersion = 0, configId = 0;
        f.eglQueryContext(dpy, app, EGL_CONTEXT_CLIENT_TYPE, &clientType);
        f.eglQueryContext(dpy, app, EGL_CONTEXT_CLIENT_VERSION, &clientVersion);
        f.eglQueryContext(dpy, app, EGL_CONFIG_ID, &configId);
        EGLConfig config = nullptr; // EGL_NO_CONFIG_KHR when the application used none
        if (configId) {
            const EGLint attrs[] = {EGL_CONFIG_ID, configId, EGL_NONE};
            EGLint n = 0;
            if (!f.eglChooseConfig(dpy, attrs, &config, 1, &n) || n != 1) {
                started.set_value(makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                                            "the EGL context's config cannot be found"));
                return;
            }
        }
        f.eglBindAPI(clientType == EGL_OPENGL_ES_API ? EGL_OPENGL_ES_API : EGL_OPENGL_API);
        EGLint esAttrs[] = {EGL_CONTEXT_CLIENT_VERSION, clientVersion, EGL_NONE};
        const EGLint none[] = {EGL_NONE};
        EGLContext own = f.eglCreateContext(dpy, config, app,
                                            clientType == EGL_OPENGL_ES_API ? esAttrs : none);
        if (own == EGL_NO_CONTEXT) {
            started.set_value(makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                                        "cannot create a GL context in the EGL context's share "
                                        "group (EGL error " +
                                            std::to_string(f.eglGetError()) + ")"));
            return;
        }
        // Surfaceless (EGL_KHR_surfaceless_context): the runtime never draws.
        if (!f.eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, own)) {
            f.eglDestroyContext(dpy, own);
            started.set_value(makeError(CL_INVALID_OPERATION,
                                        "cannot make the runtime's shared EGL context current "
                                        "without a surface"));
            return;
        }
        started.set_value(Status::success());
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock lock(m_mutex);
                m_cv.wait(lock, [&] { return m_stop || !m_jobs.empty(); });
                if (m_jobs.empty())
                    break;
                job = std::move(m_jobs.front());
                m_jobs.pop_front();
            }
            job();
        }
        f.eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        f.eglDestroyContext(dpy, own);
        f.eglReleaseThread();
    }

    std::thread m_thread;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<std::function<void()>> m_jobs;
    bool m_stop = false;
};

std::mutex g_sharesMutex;
std::map<const Context*, std::shared_ptr<Share>> g_shares;

} // namespace

const GlFunctions& glFunctions() {
    static const GlFunctions f = loadFunctions();
    return f;
}

bool isGlProperty(cl_context_properties name) {
    switch (name) {
    case CL_GL_CONTEXT_KHR:
    case CL_EGL_DISPLAY_KHR:
    case CL_GLX_DISPLAY_KHR:
    case CL_WGL_HDC_KHR:
    case CL_CGL_SHAREGROUP_KHR:
        return true;
    default:
        return false;
    }
}

Result<GlProperties> parseProperties(const cl_context_properties* props) {
    GlProperties out;
    void* egl = nullptr;
    void* glx = nullptr;
    int displays = 0;
    bool cgl = false;
    for (const cl_context_properties* p = props; p && *p; p += 2) {
        void* v = reinterpret_cast<void*>(p[1]);
        switch (p[0]) {
        case CL_GL_CONTEXT_KHR: out.context = v; break;
        case CL_EGL_DISPLAY_KHR: egl = v; displays += v != nullptr; break;
        case CL_GLX_DISPLAY_KHR: glx = v; displays += v != nullptr; break;
        case CL_WGL_HDC_KHR: displays += v != nullptr; break;
        case CL_CGL_SHAREGROUP_KHR: cgl = v != nullptr; displays += cgl; break;
        default: break;
        }
    }
    // CL_INVALID_OPERATION: more than one window-system attribute, CGL with a GL context, or a
    // window-system binding this platform does not have.
    if (displays > 1)
        return makeError(CL_INVALID_OPERATION,
                         "more than one of CL_CGL_SHAREGROUP_KHR, CL_EGL_DISPLAY_KHR, "
                         "CL_GLX_DISPLAY_KHR and CL_WGL_HDC_KHR is set");
    if (cgl && out.context)
        return makeError(CL_INVALID_OPERATION,
                         "CL_CGL_SHAREGROUP_KHR and CL_GL_CONTEXT_KHR are both set");
    if (cgl || (displays == 1 && !egl && !glx))
        return makeError(CL_INVALID_OPERATION, "only EGL and GLX sharing exist on this platform");
    if (!out.context)
        return out; // a display alone shares nothing
    const GlFunctions& f = glFunctions();
    if (egl) {
        out.api = WindowApi::Egl;
        out.display = egl;
        if (!f.hasEgl() || !f.hasGl())
            return makeError(CL_INVALID_OPERATION, "libEGL.so.1 or its GL entry points are "
                                                   "missing");
        EGLint id = 0;
        if (!f.eglQueryContext(static_cast<EGLDisplay>(egl), static_cast<EGLContext>(out.context),
                               EGL_CONTEXT_CLIENT_TYPE, &id))
            return makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                             "CL_GL_CONTEXT_KHR is not an EGL context of CL_EGL_DISPLAY_KHR");
        return out;
    }
    if (glx) {
        out.api = WindowApi::Glx;
        out.display = glx;
        return makeError(CL_INVALID_OPERATION, "GLX sharing is not implemented yet");
    }
    return makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                     "CL_GL_CONTEXT_KHR needs CL_EGL_DISPLAY_KHR or CL_GLX_DISPLAY_KHR");
}

Result<std::shared_ptr<Share>> createShare(const GlProperties& props) {
    if (props.api != WindowApi::Egl)
        return makeError(CL_INVALID_OPERATION, "GLX sharing is not implemented yet");
    auto share = std::make_shared<EglShare>(props);
    if (Status s = share->start(); !s)
        return s.error();
    return std::shared_ptr<Share>(std::move(share));
}

void attachShare(const Context* context, std::shared_ptr<Share> share) {
    std::lock_guard lock(g_sharesMutex);
    g_shares[context] = std::move(share);
}

void detachShare(const Context* context) {
    std::shared_ptr<Share> dying;
    {
        std::lock_guard lock(g_sharesMutex);
        auto it = g_shares.find(context);
        if (it == g_shares.end())
            return;
        dying = std::move(it->second);
        g_shares.erase(it);
    }
    // Joins the GL thread outside the lock.
}

std::shared_ptr<Share> shareOf(const Context* context) {
    std::lock_guard lock(g_sharesMutex);
    auto it = g_shares.find(context);
    return it == g_shares.end() ? nullptr : it->second;
}

} // namespace duet::rt::gl
