// libduet-interop: an OpenCL context paired with a current GL context, through the public
// OpenCL API only (cl_khr_gl_sharing where a platform has it, host copies where it does not).
#pragma once

#include <CL/cl.h>
#include <CL/cl_gl.h>

#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace duet::interop {

/// An interop failure a user can act on; what() is one readable line (or a short list).
class Error : public std::runtime_error {
public:
    /// `what`: the readable reason; `code`: the OpenCL error behind it, if any.
    Error(std::string what, cl_int code = CL_SUCCESS)
        : std::runtime_error(std::move(what)), m_code(code) {}
    /// The OpenCL error behind it, CL_SUCCESS when there is none.
    cl_int code() const { return m_code; }

private:
    cl_int m_code;
};

/// The spec's name of an OpenCL error code ("CL_INVALID_VALUE"), or "CL_UNKNOWN_ERROR(<n>)".
std::string errorName(cl_int code);

/// Throws Error naming `what` and the code unless `code` is CL_SUCCESS.
void check(cl_int code, const char* what);

/// Raw native handles of the current GL context (no GLFW): EGLDisplay/EGLContext or the X11
/// Display* and GLXContext.
struct GLHandles {
    enum class Api { Egl, Glx }; ///< which kind of handles these are
    Api api = Api::Egl;
    void* display = nullptr; ///< EGLDisplay, or the X11 Display*
    void* context = nullptr; ///< EGLContext, or the GLXContext
};

/// How CL objects reach GL: real sharing (cl_khr_gl_sharing) or copies through host memory.
enum class Mode { Sharing, HostCopy };

/// What Context::create may choose.
struct Options {
    std::string platform; ///< platform name substring; empty: any
    std::string device;   ///< device name substring; empty: any
    /// Fall back to host copies when no platform can share with the GL context. Off:
    /// Context::create throws the "nothing can share" error instead.
    bool allowHostCopy = true;
    /// Use host copies even where a platform can share with the GL context (on the device that
    /// could share): for comparisons of the two paths, as the GL interop benchmark makes.
    bool forceHostCopy = false;
    /// Command queue with CL_QUEUE_PROFILING_ENABLE (kernel times from events).
    bool profiling = true;
    /// With GL sharing: the context spans every device of the chosen platform that can share
    /// with the GL context (clGetGLContextInfoKHR's CL_DEVICES_FOR_GL_CONTEXT_KHR), not only the
    /// chosen one; queue() stays on the chosen device. For applications that split work across
    /// devices of one context, as the SC09 ocean does (queueCPU and queueGPU).
    bool spanSharingDevices = false;
};

class SharedObject;

/// A CL context (one device, one in-order queue) paired with the GL context that was current when
/// it was created. Create shared objects only from here, after the CL context exists (the order the
/// AMD APP guide requires). GL thread only; the GL context must be current for every call.
class Context {
public:
    /// Finds the platform and device that can share with the current GL context by asking
    /// clGetGLContextInfoKHR on every ICD platform (filtered by options), and creates the context.
    /// When none can share and options.allowHostCopy is set, takes the named platform/device (by
    /// default Duet's CPU device, else the first device) in host-copy mode and prints once to
    /// stderr "interop: <platform> has no cl_khr_gl_sharing; using host copies". Otherwise throws
    /// Error naming the GL renderer and every CL device seen with why it did not fit.
    static std::unique_ptr<Context> create(const GLHandles& gl, const Options& options);

    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    /// Sharing or host copies, as create() decided.
    Mode mode() const { return m_mode; }
    /// The CL objects, owned by this Context (released with it): use them for programs,
    /// kernels and buffers of your own.
    cl_platform_id platform() const { return m_platform; }
    cl_device_id device() const { return m_device; }
    cl_context context() const { return m_context; }
    /// One in-order queue on device(); shared objects are acquired and released on it.
    cl_command_queue queue() const { return m_queue; }
    /// "Duet / Duet CPU (host copies)" and the like.
    std::string description() const;
    /// True when acquire/release synchronise through cl_khr_gl_event (glFlush / clFlush)
    /// rather than glFinish / clFinish.
    bool glEvents() const { return m_glEvents; }

    /// A CL buffer for GL buffer object `buffer` (its current size). flags: CL_MEM_READ_ONLY,
    /// CL_MEM_WRITE_ONLY or CL_MEM_READ_WRITE, what CL kernels do with it. In host-copy mode a
    /// write-only buffer is never uploaded on acquire; `glWrites = false` says GL never changes
    /// the contents after creation, so the CL copy stays current and is not uploaded either.
    /// In sharing mode, `glWrites = false` also lets the buffer move into the device's memory
    /// where the device lists cl_duet_gl_device_memory (<duet/interop/cl_ext_duet.h>: Duet's
    /// NVIDIA device under NVIDIA's GL): acquire and release then move nothing, and the buffer's
    /// storage becomes immutable (GL draws from it, but glBufferData, glBufferSubData and maps
    /// fail). Where the move fails, the buffer is shared as it is, reported once on stderr.
    std::unique_ptr<SharedObject> shareBuffer(unsigned buffer, cl_mem_flags flags,
                                              bool glWrites = true);
    /// A CL image for level `level` of a 2D texture (GL_TEXTURE_2D or GL_TEXTURE_RECTANGLE):
    /// colour (RGBA8, SRGB8_ALPHA8, RGBA16F, RGBA32F, R32F, RG32F) or depth (DEPTH_COMPONENT16,
    /// DEPTH_COMPONENT32F). In sharing mode, where the platform answers CL_INVALID_OPERATION
    /// (it shares buffers only), the object falls back to host copies, reported once.
    std::unique_ptr<SharedObject> shareTexture(unsigned target, int level, unsigned texture,
                                               cl_mem_flags flags);
    /// A CL image for a renderbuffer, same formats as shareTexture.
    std::unique_ptr<SharedObject> shareRenderbuffer(unsigned renderbuffer, cl_mem_flags flags);

private:
    friend class AcquireScope;
    Context() = default;
    void acquire(const std::vector<SharedObject*>& objects);
    void release(const std::vector<SharedObject*>& objects);
    void reportImageFallback(const char* api);
    cl_mem bufferInDeviceMemory(unsigned buffer, cl_mem_flags flags);

    Mode m_mode = Mode::HostCopy;
    cl_platform_id m_platform = nullptr;
    cl_device_id m_device = nullptr;
    cl_context m_context = nullptr;
    cl_command_queue m_queue = nullptr;
    bool m_glEvents = false;
    bool m_imageFallbackReported = false;
    /// cl_duet_gl_device_memory: 1 listed by the device, 0 not, -1 not asked yet.
    int m_deviceMemory = -1;
    std::string m_platformName, m_deviceName;
};

/// One GL object seen from CL. mem() is valid for kernels only inside an AcquireScope.
class SharedObject {
public:
    /// Releases the CL object; the GL object stays (it is the caller's).
    virtual ~SharedObject();
    /// The CL buffer or image to pass to kernels.
    cl_mem mem() const { return m_mem; }
    /// Host-copy mode: copies GL's contents into the CL object (skipped where not needed).
    virtual void upload(cl_command_queue) {}
    /// Host-copy mode: copies the CL object's contents back into GL.
    virtual void download(cl_command_queue) {}
    /// True when this object travels by host copies (always in host-copy mode; in sharing mode
    /// for images the platform cannot share, e.g. a runtime that shares buffers only).
    virtual bool hostCopy() const { return true; }
    /// True when the GL buffer's store is the device's memory (cl_duet_gl_device_memory).
    virtual bool inDeviceMemory() const { return false; }

protected:
    SharedObject() = default;
    cl_mem m_mem = nullptr;
};

/// Acquires a frame's shared objects with one clEnqueueAcquireGLObjects (or one round of uploads)
/// and releases them all with one call when it ends. GL must not touch the objects meanwhile.
class AcquireScope {
public:
    /// Acquires `objects` for CL on context.queue() (throws Error when that fails). GL must have
    /// finished with them: the scope flushes or finishes GL as Context::glEvents() says.
    AcquireScope(Context& context, std::initializer_list<SharedObject*> objects);
    AcquireScope(Context& context, std::vector<SharedObject*> objects);
    /// Releases them unless release() did; errors here are reported on stderr, not thrown.
    ~AcquireScope();
    AcquireScope(const AcquireScope&) = delete;
    AcquireScope& operator=(const AcquireScope&) = delete;
    /// Releases now, reporting errors by exception (the destructor cannot); idempotent.
    void release();

private:
    Context& m_context;
    std::vector<SharedObject*> m_objects;
    bool m_released = false;
};

} // namespace duet::interop
