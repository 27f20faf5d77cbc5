// GL sharing core: run-time loading of EGL/GL, property parsing, the runtime's shared GL
// context and its thread, and the context -> share bookkeeping.
#include "gl/gl_share.hpp"

#include "gl/gl_functions.hpp"

#include <CL/cl_gl.h>

#include <cassert>
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
    if (void* glx = dlopen("libGL.so.1", RTLD_NOW | RTLD_LOCAL)) {
        load(f.glXGetProcAddress, glx, "glXGetProcAddressARB");
        load(f.glXQueryContext, glx, "glXQueryContext");
        load(f.glXGetFBConfigs, glx, "glXGetFBConfigs");
        load(f.glXGetFBConfigAttrib, glx, "glXGetFBConfigAttrib");
        load(f.glXCreateNewContext, glx, "glXCreateNewContext");
        load(f.glXDestroyContext, glx, "glXDestroyContext");
        load(f.glXMakeContextCurrent, glx, "glXMakeContextCurrent");
        load(f.glXGetCurrentContext, glx, "glXGetCurrentContext");
        load(f.glXCreatePbuffer, glx, "glXCreatePbuffer");
        load(f.glXDestroyPbuffer, glx, "glXDestroyPbuffer");
    }
    if (void* x11 = dlopen("libX11.so.6", RTLD_NOW | RTLD_LOCAL)) {
        load(f.XOpenDisplay, x11, "XOpenDisplay");
        load(f.XCloseDisplay, x11, "XCloseDisplay");
        load(f.XDisplayString, x11, "XDisplayString");
        load(f.XFree, x11, "XFree");
    }
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

/// A share whose GL context lives on its own thread; subclasses create and destroy it there.
class ThreadShare : public Share {
public:
    explicit ThreadShare(const GlProperties& props) { m_props = props; }
    ~ThreadShare() override { assert(!m_thread.joinable() && "stop() before destruction"); }

    Status start() {
        std::promise<Status> started;
        auto ready = started.get_future();
        m_thread = std::thread([this, &started] {
            Status s = setUp();
            bool ok = s.ok();
            started.set_value(std::move(s));
            if (!ok)
                return;
            loop();
            tearDown();
        });
        return ready.get();
    }
    void stop() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_cv.notify_all();
        if (m_thread.joinable())
            m_thread.join();
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

protected:
    /// On the GL thread: create the shared context and make it current.
    virtual Status setUp() = 0;
    /// On the GL thread, after the last job.
    virtual void tearDown() = 0;

private:
    void loop() {
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock lock(m_mutex);
                m_cv.wait(lock, [&] { return m_stop || !m_jobs.empty(); });
                if (m_jobs.empty())
                    return;
                job = std::move(m_jobs.front());
                m_jobs.pop_front();
            }
            job();
        }
    }

    std::thread m_thread;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<std::function<void()>> m_jobs;
    bool m_stop = false;
};

/// The runtime's EGL context in the application's share group, surfaceless.
class EglShare final : public ThreadShare {
public:
    using ThreadShare::ThreadShare;
    ~EglShare() override { stop(); }

    bool appContextCurrent() const override {
        const GlFunctions& f = glFunctions();
        return f.eglGetCurrentContext && f.eglGetCurrentContext() == m_props.context;
    }
    void* fenceAppContext() override {
        const GlFunctions& f = glFunctions();
        if (!appContextCurrent())
            return nullptr;
        GLsync s = f.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        f.glFlush(); // the GL thread's wait must not depend on this thread flushing later
        return s;
    }

private:
    Status setUp() override {
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
            if (!f.eglChooseConfig(dpy, attrs, &config, 1, &n) || n != 1)
                return makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                                 "the EGL context's config cannot be found");
        }
        f.eglBindAPI(clientType == EGL_OPENGL_ES_API ? EGL_OPENGL_ES_API : EGL_OPENGL_API);
        EGLint esAttrs[] = {EGL_CONTEXT_CLIENT_VERSION, clientVersion, EGL_NONE};
        const EGLint none[] = {EGL_NONE};
        m_own = f.eglCreateContext(dpy, config, app,
                                   clientType == EGL_OPENGL_ES_API ? esAttrs : none);
        if (m_own == EGL_NO_CONTEXT)
            return makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                             "cannot create a GL context in the EGL context's share group (EGL "
                             "error " + std::to_string(f.eglGetError()) + ")");
        // Surfaceless (EGL_KHR_surfaceless_context): the runtime never draws.
        if (!f.eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, m_own)) {
            f.eglDestroyContext(dpy, m_own);
            return makeError(CL_INVALID_OPERATION, "cannot make the runtime's shared EGL "
                                                   "context current without a surface");
        }
        return Status::success();
    }
    void tearDown() override {
        const GlFunctions& f = glFunctions();
        auto dpy = static_cast<EGLDisplay>(m_props.display);
        f.eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        f.eglDestroyContext(dpy, m_own);
        f.eglReleaseThread();
    }

    EGLContext m_own = EGL_NO_CONTEXT;
};

/// The runtime's GLX context in the application's share group. It talks to the X server on
/// its own Display connection, so the application's connection is never used from the GL
/// thread (Xlib connections are not thread-safe without XInitThreads).
class GlxShare final : public ThreadShare {
public:
    using ThreadShare::ThreadShare;
    ~GlxShare() override { stop(); }

    bool appContextCurrent() const override {
        const GlFunctions& f = glFunctions();
        return f.glXGetCurrentContext && f.glXGetCurrentContext() == m_props.context;
    }
    void* fenceAppContext() override {
        const GlFunctions& f = glFunctions();
        if (!appContextCurrent())
            return nullptr;
        GLsync s = f.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        f.glFlush();
        return s;
    }

private:
    Status setUp() override {
        const GlFunctions& f = glFunctions();
        int configId = 0, screen = 0;
        if (f.glXQueryContext(m_props.display, m_props.context, kGlxFbconfigId, &configId) != 0 ||
            f.glXQueryContext(m_props.display, m_props.context, kGlxScreen, &screen) != 0)
            return makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                             "CL_GL_CONTEXT_KHR is not a GLX context of CL_GLX_DISPLAY_KHR");
        m_dpy = f.XOpenDisplay(f.XDisplayString(m_props.display));
        if (!m_dpy)
            return makeError(CL_INVALID_OPERATION, "cannot open a second connection to the X "
                                                   "server of CL_GLX_DISPLAY_KHR");
        // The config with the application's id, looked up by hand: Mesa's glXChooseFBConfig
        // does not honour GLX_FBCONFIG_ID alone.
        int n = 0;
        void** configs = f.glXGetFBConfigs(m_dpy, screen, &n);
        void* config = nullptr;
        for (int i = 0; i < n && !config; ++i) {
            int id = 0;
            if (f.glXGetFBConfigAttrib(m_dpy, configs[i], kGlxFbconfigId, &id) == 0 &&
                id == configId)
                config = configs[i];
        }
        if (configs)
            f.XFree(configs);
        if (!config) {
            tearDown();
            return makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                             "the GLX context's FBConfig (id " + std::to_string(configId) +
                                 ") cannot be found");
        }
        m_own = f.glXCreateNewContext(m_dpy, config, kGlxRgbaType, m_props.context, 1);
        if (!m_own) {
            tearDown();
            return makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                             "cannot create a GLX context in the application's share group");
        }
        // A 1x1 pbuffer where the config has one; GL 3.0+ contexts may also go without.
        const int pbAttrs[] = {kGlxPbufferWidth, 1, kGlxPbufferHeight, 1, 0};
        int drawableType = 0;
        f.glXGetFBConfigAttrib(m_dpy, config, kGlxDrawableType, &drawableType);
        if (drawableType & kGlxPbufferBit)
            m_pbuffer = f.glXCreatePbuffer(m_dpy, config, pbAttrs);
        if (!f.glXMakeContextCurrent(m_dpy, m_pbuffer, m_pbuffer, m_own)) {
            tearDown();
            return makeError(CL_INVALID_OPERATION,
                             "cannot make the runtime's shared GLX context current");
        }
        return Status::success();
    }
    void tearDown() override {
        const GlFunctions& f = glFunctions();
        if (!m_dpy)
            return;
        f.glXMakeContextCurrent(m_dpy, 0, 0, nullptr);
        if (m_own)
            f.glXDestroyContext(m_dpy, m_own);
        if (m_pbuffer)
            f.glXDestroyPbuffer(m_dpy, m_pbuffer);
        f.XCloseDisplay(m_dpy);
        m_dpy = nullptr;
        m_own = nullptr;
        m_pbuffer = 0;
    }

    static constexpr int kGlxScreen = 0x800C, kGlxFbconfigId = 0x8013, kGlxRgbaType = 0x8014,
                         kGlxDrawableType = 0x8010, kGlxPbufferBit = 0x4,
                         kGlxPbufferHeight = 0x8040, kGlxPbufferWidth = 0x8041;
    void* m_dpy = nullptr;
    void* m_own = nullptr;
    unsigned long m_pbuffer = 0;
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
        if (!f.hasGlx() || !f.hasGl())
            return makeError(CL_INVALID_OPERATION, "libGL.so.1, libX11.so.6 or their GLX entry "
                                                   "points are missing");
        // (glvnd reports an unknown GLXContext as an X error, so the handle itself is checked
        // when the runtime's context is created, through glXQueryContext on the GL thread.)
        return out;
    }
    return makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                     "CL_GL_CONTEXT_KHR needs CL_EGL_DISPLAY_KHR or CL_GLX_DISPLAY_KHR");
}

Result<std::shared_ptr<Share>> createShare(const GlProperties& props) {
    if (props.api == WindowApi::Egl) {
        auto share = std::make_shared<EglShare>(props);
        if (Status s = share->start(); !s)
            return s.error();
        return std::shared_ptr<Share>(std::move(share));
    }
    auto share = std::make_shared<GlxShare>(props);
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
