// GL sharing core: run-time loading of EGL/GL, property parsing, the runtime's shared GL
// context and its thread, and the context -> share bookkeeping.
#include "gl/gl_share.hpp"

#include "gl/gl_functions.hpp"

#include <CL/cl_gl.h>

#include <atomic>
#include <cassert>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <future>
#include <map>
#include <mutex>
#include <shared_mutex>
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
        load(f.eglQueryString, egl, "eglQueryString");
        if (f.eglGetProcAddress) {
            auto ext = [&](auto& fn, const char* name) {
                fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
                    f.eglGetProcAddress(name));
            };
            ext(f.eglQueryDisplayAttribEXT, "eglQueryDisplayAttribEXT");
            ext(f.eglQueryDeviceStringEXT, "eglQueryDeviceStringEXT");
            ext(f.eglQueryDeviceAttribEXT, "eglQueryDeviceAttribEXT");
        }
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
        load(f.glXQueryServerString, glx, "glXQueryServerString");
    }
    if (void* x11 = dlopen("libX11.so.6", RTLD_NOW | RTLD_LOCAL)) {
        load(f.XOpenDisplay, x11, "XOpenDisplay");
        load(f.XCloseDisplay, x11, "XCloseDisplay");
        load(f.XDisplayString, x11, "XDisplayString");
        load(f.XFree, x11, "XFree");
        load(f.XSync, x11, "XSync");
        load(f.XSetErrorHandler, x11, "XSetErrorHandler");
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
    gl(f.glIsTexture, "glIsTexture");
    gl(f.glIsRenderbuffer, "glIsRenderbuffer");
    gl(f.glBindTexture, "glBindTexture");
    gl(f.glBindRenderbuffer, "glBindRenderbuffer");
    gl(f.glGetTexLevelParameteriv, "glGetTexLevelParameteriv");
    gl(f.glGetRenderbufferParameteriv, "glGetRenderbufferParameteriv");
    gl(f.glGetTexImage, "glGetTexImage");
    gl(f.glTexSubImage1D, "glTexSubImage1D");
    gl(f.glTexSubImage2D, "glTexSubImage2D");
    gl(f.glTexSubImage3D, "glTexSubImage3D");
    gl(f.glPixelStorei, "glPixelStorei");
    gl(f.glGenFramebuffers, "glGenFramebuffers");
    gl(f.glDeleteFramebuffers, "glDeleteFramebuffers");
    gl(f.glBindFramebuffer, "glBindFramebuffer");
    gl(f.glFramebufferRenderbuffer, "glFramebufferRenderbuffer");
    gl(f.glFramebufferTexture2D, "glFramebufferTexture2D");
    gl(f.glReadPixels, "glReadPixels");
    gl(f.glGenTextures, "glGenTextures");
    gl(f.glDeleteTextures, "glDeleteTextures");
    gl(f.glTexImage2D, "glTexImage2D");
    gl(f.glBlitFramebuffer, "glBlitFramebuffer");
    gl(f.glReadBuffer, "glReadBuffer");
    gl(f.glFramebufferTextureLayer, "glFramebufferTextureLayer");
    gl(f.glGetString, "glGetString");
    gl(f.glGenBuffers, "glGenBuffers");
    gl(f.glDeleteBuffers, "glDeleteBuffers");
    gl(f.glBufferData, "glBufferData");
    gl(f.glGetIntegerv, "glGetIntegerv");
    gl(f.glGetStringi, "glGetStringi");
    gl(f.glGetUnsignedBytei_vEXT, "glGetUnsignedBytei_vEXT");
    gl(f.glCreateMemoryObjectsEXT, "glCreateMemoryObjectsEXT");
    gl(f.glDeleteMemoryObjectsEXT, "glDeleteMemoryObjectsEXT");
    gl(f.glMemoryObjectParameterivEXT, "glMemoryObjectParameterivEXT");
    gl(f.glImportMemoryFdEXT, "glImportMemoryFdEXT");
    gl(f.glBufferStorageMemEXT, "glBufferStorageMemEXT");
    gl(f.glCopyBufferSubData, "glCopyBufferSubData");
    gl(f.glGetNamedBufferParameteriv, "glGetNamedBufferParameteriv");
    gl(f.glTextureSubImage2D, "glTextureSubImage2D");

    return f;
}

/// On the GL thread: whether mapping a buffer gives a pointer to the buffer's own store,
/// as on Mesa's software rasterisers, whose buffers are host memory. Evidence: a mapping
/// made after glBufferSubData returns the same address as the mapping before it and already
/// holds the new bytes. A driver that maps through a fresh staging copy fails this, and its
/// buffers then go through Duet's host copies (which move only the bytes the flags need).
/// `why` says what was seen.
bool probeInPlaceMapping(std::string& why) {
    const GlFunctions& f = glFunctions();
    if (!f.glGenBuffers || !f.glBufferData || !f.glMapBufferRange || !f.glUnmapBuffer) {
        why = "GL lacks glMapBufferRange";
        return false;
    }
    while (f.glGetError() != GL_NO_ERROR) {
    }
    constexpr GLsizeiptr kBytes = 4096, kPatched = 64;
    GLuint b = 0;
    f.glGenBuffers(1, &b);
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, b);
    f.glBufferData(GL_COPY_WRITE_BUFFER, kBytes, nullptr, GL_DYNAMIC_DRAW);
    const GLbitfield rw = GL_MAP_READ_BIT | GL_MAP_WRITE_BIT;
    auto* first =
        static_cast<unsigned char*>(f.glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, kBytes, rw));
    bool inPlace = false;
    if (!first) {
        why = "glMapBufferRange failed (GL error " + std::to_string(f.glGetError()) + ")";
    } else {
        std::memset(first, 0x5A, kBytes);
        f.glUnmapBuffer(GL_COPY_WRITE_BUFFER);
        unsigned char patch[kPatched];
        std::memset(patch, 0xA5, sizeof patch);
        f.glBufferSubData(GL_COPY_WRITE_BUFFER, 0, kPatched, patch);
        auto* second =
            static_cast<unsigned char*>(f.glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, kBytes, rw));
        if (!second) {
            why = "a second glMapBufferRange failed";
        } else {
            bool bytes = second[0] == 0xA5 && second[kPatched - 1] == 0xA5 &&
                         second[kPatched] == 0x5A && second[kBytes - 1] == 0x5A;
            inPlace = second == first && bytes;
            if (!bytes)
                why = "the mapping does not hold the buffer's bytes";
            else if (!inPlace)
                why = "mappings move between map calls (staging copies)";
            f.glUnmapBuffer(GL_COPY_WRITE_BUFFER);
        }
    }
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    f.glDeleteBuffers(1, &b);
    while (f.glGetError() != GL_NO_ERROR) {
    }
    return inPlace;
}

/// Process exit against GL threads. A context can die on a queue's worker thread after the
/// application has seen its last command complete, so a GL thread may still be working, or
/// tearing its context down, while the process exits and the GL driver's exit handlers free
/// the display under it (Mesa: heap corruption). Our exit handler, registered when the first
/// share starts (after the application's EGL/GLX set-up, hence run before the driver's),
/// closes the gate: it waits for the GL work in progress, and GL threads make no GL call
/// after it (their jobs are dropped unrun, their contexts left to the process's end).
struct ExitGate {
    std::shared_mutex mutex;
    bool closed = false; ///< guarded by mutex
};
ExitGate& exitGate() {
    static ExitGate* gate = new ExitGate; // never destroyed: GL threads may outlive statics
    return *gate;
}
void closeExitGate() {
    ExitGate& gate = exitGate();
    std::unique_lock lock(gate.mutex);
    gate.closed = true;
}

/// A share whose GL context lives on its own thread; subclasses create and destroy it there.
class ThreadShare : public Share {
public:
    explicit ThreadShare(const GlProperties& props) { m_props = props; }

    bool buffersInPlace() override {
        std::call_once(m_probeOnce, [this] {
            const char* env = std::getenv("DUET_GL_BUFFERS");
            if (env && std::string_view(env) == "copy") {
                m_inPlace = false;
                reportOnce("GL buffers are copied at acquire/release (DUET_GL_BUFFERS=copy)");
                return;
            }
            std::string why, renderer;
            run([&] {
                m_inPlace = probeInPlaceMapping(why);
                const GlFunctions& f = glFunctions();
                if (auto* r = f.glGetString ? f.glGetString(GL_RENDERER) : nullptr)
                    renderer = reinterpret_cast<const char*>(r);
            });
            reportOnce(m_inPlace
                           ? "GL buffers are shared in place (mapped at acquire; " + renderer + ")"
                           : "GL buffers are copied at acquire/release: " + why + " (" + renderer +
                                 ")");
        });
        return m_inPlace;
    }
    ~ThreadShare() override { assert(!m_thread.joinable() && "stop() before destruction"); }

    Status start() {
        static std::once_flag exitHandler;
        std::call_once(exitHandler, [] { std::atexit(closeExitGate); });
        std::promise<Status> started;
        auto ready = started.get_future();
        m_thread = std::thread([this, &started] {
            Status s = setUp();
            bool ok = s.ok();
            started.set_value(std::move(s));
            if (!ok)
                return;
            loop();
            std::shared_lock gate(exitGate().mutex);
            if (!exitGate().closed)
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
        assert(m_thread.get_id() != std::this_thread::get_id() &&
               "the GL thread must not drop the last reference to its share");
        if (m_thread.joinable() && m_thread.get_id() != std::this_thread::get_id())
            m_thread.join();
    }

    void run(std::function<void()> job) override {
        std::promise<void> done;
        auto f = done.get_future();
        {
            std::lock_guard lock(m_mutex);
            m_jobs.push_back({std::move(job), &done});
        }
        m_cv.notify_one();
        f.get();
    }
    void post(std::function<void()> job) override {
        {
            std::lock_guard lock(m_mutex);
            m_jobs.push_back({std::move(job), nullptr});
        }
        m_cv.notify_one();
    }

protected:
    /// On the GL thread: create the shared context and make it current.
    virtual Status setUp() = 0;
    /// On the GL thread, after the last job.
    virtual void tearDown() = 0;

private:
    /// A job, and for run() the promise its caller waits on.
    struct Job {
        std::function<void()> work;
        std::promise<void>* done;
    };

    void loop() {
        for (;;) {
            Job job;
            {
                std::unique_lock lock(m_mutex);
                m_cv.wait(lock, [&] { return m_stop || !m_jobs.empty(); });
                if (m_jobs.empty())
                    return;
                job = std::move(m_jobs.front());
                m_jobs.pop_front();
            }
            {
                std::shared_lock gate(exitGate().mutex);
                if (!exitGate().closed)
                    job.work();
                else // exiting: unrun, and not destroyed (what it holds may call GL)
                    new std::function<void()>(std::move(job.work));
            }
            if (job.done)
                job.done->set_value();
        }
    }

    static void reportOnce(const std::string& message) {
        static std::atomic<bool> said{false};
        if (!said.exchange(true))
            logNote(message);
    }

    std::once_flag m_probeOnce;
    bool m_inPlace = false;
    std::thread m_thread;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Job> m_jobs;
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
        m_gles = clientType == EGL_OPENGL_ES_API;
        f.eglBindAPI(m_gles ? EGL_OPENGL_ES_API : EGL_OPENGL_API);
        EGLint esAttrs[] = {EGL_CONTEXT_CLIENT_VERSION, clientVersion, EGL_NONE};
        const EGLint none[] = {EGL_NONE};
        m_own =
            f.eglCreateContext(dpy, config, app, clientType == EGL_OPENGL_ES_API ? esAttrs : none);
        if (m_own == EGL_NO_CONTEXT)
            return makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                             "cannot create a GL context in the EGL context's share group (EGL "
                             "error " +
                                 std::to_string(f.eglGetError()) + ")");
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
        int configId = m_props.glxConfigId, screen = m_props.glxScreen;
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

std::atomic<int> g_xErrors{0};
int countXError(void*, void*) {
    ++g_xErrors;
    return 0;
}

/// glXQueryContext for the FBConfig id and screen, with X errors counted instead of fatal.
bool queryGlxContext(const GlFunctions& f, GlProperties& p) {
    static std::mutex mutex; // one handler swap at a time within the runtime
    std::lock_guard lock(mutex);
    auto previous = f.XSetErrorHandler(&countXError);
    int before = g_xErrors.load();
    int a = f.glXQueryContext(p.display, p.context, 0x8013 /*GLX_FBCONFIG_ID*/, &p.glxConfigId);
    int b = f.glXQueryContext(p.display, p.context, 0x800C /*GLX_SCREEN*/, &p.glxScreen);
    f.XSync(p.display, 0);
    f.XSetErrorHandler(previous);
    return a == 0 && b == 0 && g_xErrors.load() == before;
}

/// Context -> share. Never destroyed (like the handle quarantine): a context whose last
/// reference a queue's worker drops late is still in it at exit, and destroying its share then,
/// from the map's static destructor, would tear its GL context down after the GL driver's own
/// exit handlers (Mesa: heap corruption, "corrupted size vs. prev_size").
struct Shares {
    std::mutex mutex;
    std::map<const Context*, std::shared_ptr<Share>> map;
};
Shares& shares() {
    static Shares* s = new Shares;
    return *s;
}

} // namespace

void logNote(const std::string& message) {
    static const bool log = [] {
        const char* v = std::getenv("DUET_LOG");
        return v && *v && std::string_view(v) != "0";
    }();
    if (log)
        std::fprintf(stderr, "duet: %s\n", message.c_str());
}

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
        case CL_GL_CONTEXT_KHR:
            out.context = v;
            break;
        case CL_EGL_DISPLAY_KHR:
            egl = v;
            displays += v != nullptr;
            break;
        case CL_GLX_DISPLAY_KHR:
            glx = v;
            displays += v != nullptr;
            break;
        case CL_WGL_HDC_KHR:
            displays += v != nullptr;
            break;
        case CL_CGL_SHAREGROUP_KHR:
            cgl = v != nullptr;
            displays += cgl;
            break;
        default:
            break;
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
        // On the calling thread: the application's Display is used on no other. An unknown
        // GLXContext makes glvnd raise an X error; a handler catches it for the moment.
        if (!queryGlxContext(f, out))
            return makeError(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                             "CL_GL_CONTEXT_KHR is not a GLX context of CL_GLX_DISPLAY_KHR");
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
    Shares& all = shares();
    std::lock_guard lock(all.mutex);
    all.map[context] = std::move(share);
}

void detachShare(const Context* context) {
    std::shared_ptr<Share> dying;
    {
        Shares& all = shares();
        std::lock_guard lock(all.mutex);
        auto it = all.map.find(context);
        if (it == all.map.end())
            return;
        dying = std::move(it->second);
        all.map.erase(it);
    }
    // Joins the GL thread outside the lock.
}

std::shared_ptr<Share> shareOf(const Context* context) {
    Shares& all = shares();
    std::lock_guard lock(all.mutex);
    auto it = all.map.find(context);
    return it == all.map.end() ? nullptr : it->second;
}

} // namespace duet::rt::gl
