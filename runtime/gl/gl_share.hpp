// The runtime's side of GL sharing: the application's GL context named in the context
// properties, and the runtime's own GL context in its share group, driven by one GL thread.
#pragma once

#include "core/gl_interop.hpp"
#include "core/result.hpp"

#include <CL/cl.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duet::rt {
class Context;
class Device;
class Mem;
} // namespace duet::rt

namespace duet::rt::gl {

enum class WindowApi { None, Egl, Glx };

/// The GL entries of a cl_context_properties list.
struct GlProperties {
    WindowApi api = WindowApi::None;
    void* display = nullptr;            ///< EGLDisplay or X11 Display*
    void* context = nullptr;            ///< EGLContext or GLXContext
    int glxConfigId = 0, glxScreen = 0; ///< GLX: the context's FBConfig id and screen
    bool sharing() const { return context != nullptr; }
};

/// True for the property names of cl_khr_gl_sharing (so the generic property check accepts
/// them and leaves their meaning to parseProperties).
bool isGlProperty(cl_context_properties name);

/// Reads and checks the GL entries of a 0-terminated property list (null: none). Errors as
/// the cl_khr_gl_sharing spec names them (CL_INVALID_OPERATION for unsupported or conflicting
/// window-system bindings, CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR for a GL context that is not
/// one). Loads libEGL / libGL on first use.
Result<GlProperties> parseProperties(const cl_context_properties* props);

/// The runtime's GL context, shared with the application's, and the thread it is current on.
/// Thread affinity: every GL call of the runtime happens on that thread (run/post); the
/// object itself may be used from any thread.
class Share {
public:
    virtual ~Share() = default;
    const GlProperties& properties() const { return m_props; }

    /// Runs `job` on the GL thread and waits for it.
    virtual void run(std::function<void()> job) = 0;
    /// Queues `job` on the GL thread and returns at once.
    virtual void post(std::function<void()> job) = 0;

    /// Called on the application's thread before an acquire: when the application's GL
    /// context is current there, puts a fence into its command stream (flushed) and returns
    /// it, so the GL thread waits for the application's GL work without a glFinish. Null when
    /// the application's context is not current (the application must then have finished).
    virtual void* fenceAppContext() = 0;
    /// True when the application's GL context is current on the calling thread.
    virtual bool appContextCurrent() const = 0;

    /// True when the contexts are OpenGL ES ones (no glGetTexImage: textures are read back
    /// through a framebuffer).
    bool gles() const { return m_gles; }

    /// Whether CL buffers made from GL buffers live in GL's own storage while acquired
    /// (mapped at acquire, unmapped at release) rather than in host copies. Decided once per
    /// share by a probe on the GL thread (see gl_share.cpp), or copies when the environment
    /// has DUET_GL_BUFFERS=copy; the outcome is reported once per process under DUET_LOG.
    /// Not to be called on the GL thread.
    virtual bool buffersInPlace() = 0;

    /// The context's device that reaches GL objects' memory itself (CUDA-GL interop: its
    /// glAffinity is Interop), chosen at clCreateContext; null when GL objects go through host
    /// copies. Set once, before the context is handed out.
    Device* interopDevice() const { return m_interopDevice; }
    void setInteropDevice(Device* device) { m_interopDevice = device; }
    /// That device's GlInterop (null without one).
    GlInterop* interop() const;
    /// Whether GL objects may go through device memory GL imports (gl_device_access.cpp): not
    /// known yet (-1), yes (1), no (0). Touched on the GL thread only.
    int importsMemory = -1;

protected:
    GlProperties m_props;
    bool m_gles = false;
    Device* m_interopDevice = nullptr;
};

/// What the calling thread can find out about the device behind the GL context of `props`:
/// the EGL display's device (EGL_EXT_device_query, EGL_NV_device_cuda), the vendor, and with the
/// context current here its GL_VENDOR, GL_RENDERER and device UUIDs (gl_context_devices.cpp).
GlContextFacts describeContext(const GlProperties& props);

/// How each of `devices` stands to the GL context of `props` (DeviceBackend::glAffinity; a
/// device without cl_khr_gl_sharing is Foreign). Each reason is printed once under DUET_LOG.
std::vector<std::pair<Device*, GlAffinity>> matchDevices(const GlProperties& props,
                                                         const std::vector<Device*>& devices);

/// Creates the runtime's GL context in the share group of `props` and its thread.
Result<std::shared_ptr<Share>> createShare(const GlProperties& props);

/// Entry points of GL used by the sharing code, valid on the GL thread.
struct GlFunctions;
const GlFunctions& glFunctions();

/// Context bookkeeping: the share a context was created with (null when none).
void attachShare(const Context* context, std::shared_ptr<Share> share);
void detachShare(const Context* context);
std::shared_ptr<Share> shareOf(const Context* context);

/// For commands that hand out a pointer when enqueued (maps): when `mem` is, or views, a GL
/// buffer shared in place, waits until its latest enqueued acquire has run, so that data()
/// is GL's mapping. Returns at once for every other object. The same as mem->settleStorage()
/// (core code calls that; the GL state answers through Mem::Attachment).
void settleStorage(const Mem* mem);

/// Prints "duet: <message>" to stderr when DUET_LOG is set (notes, not errors).
void logNote(const std::string& message);

/// The cl_khr_gl_sharing / cl_khr_gl_event entry points by name (null when unknown).
void* extensionFunction(std::string_view name);

} // namespace duet::rt::gl
