// Which devices can share with an application's GL context: what the calling thread can learn
// about the GPU behind the context (EGL device, vendor, GL strings, device UUIDs), and each
// device's answer to it (DeviceBackend::glAffinity). clGetGLContextInfoKHR and clCreateContext
// ask here.
#include "core/device.hpp"
#include "gl/gl_functions.hpp"
#include "gl/gl_share.hpp"

#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>

namespace duet::rt::gl {

namespace {

bool hasWord(const char* list, std::string_view word) {
    if (!list)
        return false;
    std::istringstream in{std::string(list)};
    std::string w;
    while (in >> w)
        if (w == word)
            return true;
    return false;
}

/// With the application's GL context current on this thread: its strings, and the UUIDs of
/// GL_EXT_memory_object. Only queries that cannot fail are made (no glGetError: the error
/// state is the application's).
void readCurrentContext(const GlFunctions& f, GlContextFacts& facts) {
    if (!f.glGetString)
        return;
    if (auto* v = f.glGetString(GL_VENDOR))
        facts.vendor = reinterpret_cast<const char*>(v);
    if (auto* r = f.glGetString(GL_RENDERER))
        facts.renderer = reinterpret_cast<const char*>(r);
    const auto* version = reinterpret_cast<const char*>(f.glGetString(GL_VERSION));
    if (!version)
        return;
    // "4.6.0 NVIDIA 580.65" or "OpenGL ES 3.2 Mesa ...": glGetStringi from 3.0 on.
    std::string_view v(version);
    if (v.rfind("OpenGL ES ", 0) == 0)
        v.remove_prefix(10);
    if (v.empty() || v[0] < '3' || v[0] > '9' || !f.glGetIntegerv || !f.glGetStringi ||
        !f.glGetUnsignedBytei_vEXT)
        return;
    GLint n = 0;
    f.glGetIntegerv(GL_NUM_EXTENSIONS, &n);
    bool memoryObject = false;
    for (GLint i = 0; i < n && !memoryObject; ++i)
        if (auto* e = f.glGetStringi(GL_EXTENSIONS, GLuint(i)))
            memoryObject =
                std::string_view(reinterpret_cast<const char*>(e)) == "GL_EXT_memory_object";
    if (!memoryObject)
        return;
    GLint devices = 0;
    f.glGetIntegerv(kGlNumDeviceUuids, &devices);
    for (GLint i = 0; i < devices && i < 8; ++i) {
        std::array<uint8_t, 16> uuid{};
        f.glGetUnsignedBytei_vEXT(kGlDeviceUuid, GLuint(i), uuid.data());
        facts.uuids.push_back(uuid);
    }
}

/// EGL: the display's vendor and, through EGL_EXT_device_query, its device's CUDA ordinal
/// (EGL_NV_device_cuda). No context needs to be current.
void readEglDisplay(const GlFunctions& f, EGLDisplay dpy, GlContextFacts& facts) {
    if (f.eglQueryString)
        if (const char* v = f.eglQueryString(dpy, EGL_VENDOR))
            facts.vendor = v;
    if (!f.eglQueryDisplayAttribEXT || !f.eglQueryDeviceStringEXT || !f.eglQueryDeviceAttribEXT)
        return;
    const char* client =
        f.eglQueryString ? f.eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS) : nullptr;
    if (!hasWord(client, "EGL_EXT_device_query") && !hasWord(client, "EGL_EXT_device_base"))
        return;
    EGLAttrib device = 0;
    if (!f.eglQueryDisplayAttribEXT(dpy, EGL_DEVICE_EXT, &device) || !device)
        return;
    auto dev = reinterpret_cast<EGLDeviceEXT>(device);
    EGLAttrib cuda = -1;
    if (hasWord(f.eglQueryDeviceStringEXT(dev, EGL_EXTENSIONS), "EGL_NV_device_cuda") &&
        f.eglQueryDeviceAttribEXT(dev, kEglCudaDevice, &cuda))
        facts.cudaDevice = int(cuda);
}

} // namespace

GlContextFacts describeContext(const GlProperties& props) {
    GlContextFacts facts;
    const GlFunctions& f = glFunctions();
    if (props.api == WindowApi::Egl) {
        facts.current = f.eglGetCurrentContext && f.eglGetCurrentContext() == props.context;
        readEglDisplay(f, static_cast<EGLDisplay>(props.display), facts);
    } else if (props.api == WindowApi::Glx) {
        facts.current = f.glXGetCurrentContext && f.glXGetCurrentContext() == props.context;
        // The X screen's GLX vendor ("NVIDIA Corporation"), on the application's connection
        // (this thread, as parseProperties' queries).
        if (f.glXQueryServerString)
            if (const char* v =
                    f.glXQueryServerString(props.display, props.glxScreen, 1 /*GLX_VENDOR*/))
                facts.vendor = v;
    }
    if (facts.current)
        readCurrentContext(f, facts);
    return facts;
}

std::vector<std::pair<Device*, GlAffinity>> matchDevices(const GlProperties& props,
                                                         const std::vector<Device*>& devices) {
    const GlContextFacts facts = describeContext(props);
    std::vector<std::pair<Device*, GlAffinity>> out;
    for (Device* d : devices) {
        GlAffinity a;
        if (!d->hasExtension("cl_khr_gl_sharing")) {
            a = {GlAffinity::Kind::Foreign, d->info().name + " has no cl_khr_gl_sharing"};
        } else {
            a = d->backend().glAffinity(facts);
        }
        if (!a.why.empty()) {
            static std::mutex mutex;
            static std::set<std::string> said;
            bool fresh;
            {
                std::lock_guard lock(mutex);
                fresh = said.insert(a.why).second;
            }
            if (fresh)
                logNote(a.why);
        }
        out.emplace_back(d, std::move(a));
    }
    return out;
}

GlInterop* Share::interop() const {
    return m_interopDevice ? m_interopDevice->backend().glInterop() : nullptr;
}

} // namespace duet::rt::gl
