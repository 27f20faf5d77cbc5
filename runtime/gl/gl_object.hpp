// CL memory objects made from GL objects: the state each keeps (a Mem::Attachment), how they are
// made, and the acquire/release commands that hand them between GL and CL.
#pragma once

#include "core/event.hpp"
#include "core/gl_interop.hpp"
#include "core/memory.hpp"
#include "core/result.hpp"

#include <CL/cl_gl.h>

#include <memory>
#include <mutex>
#include <span>
#include <string>

namespace duet::rt {
class Queue;
} // namespace duet::rt

namespace duet::rt::gl {

class Share;

/// What a CL memory object made from a GL object remembers. Owned by that Mem (Mem::attach)
/// and destroyed with it. Everything is fixed at creation except `mapped` (GL thread) and the
/// latest in-place acquire (under the object's own mutex, a leaf lock). GL enums and names are
/// `unsigned` here to keep GL headers out.
class GlObject final : public Mem::Attachment {
public:
    GlObject(std::shared_ptr<Share> glShare, cl_gl_object_type glType, unsigned glName);
    /// Released while acquired in place: GL must get its buffer back unmapped, or the
    /// application's draws with it fail. Posts the unmap to the GL thread (no command of the
    /// object is left by now) and returns without waiting.
    ~GlObject() override;

    /// In place: waits for the latest enqueued acquire (a failed acquire leaves the host
    /// copy, which is still memory). Any thread, no lock held while waiting.
    void settleStorage() const override;
    /// Remembers `acquire` as the latest enqueued acquire (settleStorage).
    void noteAcquire(Ref<Event> acquire);
    /// Remembers `release` as the latest enqueued release; whether it has not finished yet.
    void noteRelease(Ref<Event> release);
    bool releasePending() const;

    const std::shared_ptr<Share> share;
    const cl_gl_object_type type;
    const unsigned name;
    unsigned target = 0;                           ///< textures: the texture_target given
    int level = 0;                                 ///< textures: the mipmap level shared
    unsigned transferFormat = 0, transferType = 0; ///< textures and renderbuffers
    /// Buffers shared in place: mapped at acquire, unmapped at release (else host copies).
    bool inPlace = false;
    /// In place: CL's storage is GL's mapping now (else the host copy). Touched on the GL
    /// thread only, or by the destructor once no command can run.
    bool mapped = false;

    // Through the context's interop device (Share::interop, gl_interop.cpp): fixed at creation
    // except the two flags, which only the GL thread touches.
    /// The device's registration of the GL object, or of `pixelBuffer`; null: host copies.
    std::unique_ptr<GlInterop::Resource> resource;
    /// Images the device cannot register (depth, sRGB, 1D): GL packs them into this pixel
    /// buffer of the runtime's, which the device maps (0: none).
    unsigned pixelBuffer = 0;
    /// Registered as an image (else a buffer: the GL buffer or `pixelBuffer`).
    bool resourceIsImage = false;
    /// Small objects: a GL buffer of the runtime's whose storage is device memory the device
    /// exported (`resource` is that GlInterop::ExportedMemory) and `memoryObject` imported
    /// (GL_EXT_memory_object_fd). GL copies or packs the object into it at acquire and back at
    /// release; the device never maps anything (0: not used).
    unsigned shadowBuffer = 0, memoryObject = 0;
    /// The GL buffer's own data store is device memory the device exported (`resource` is that
    /// GlInterop::ExportedMemory): clCreateFromGLBufferInDeviceMemoryDUET moved it there. Nothing
    /// moves at acquire or release; the device's queues use the memory where it is.
    bool deviceStore = false;
    /// The latest acquire went through the device (a failed map falls back to host copies).
    bool viaInterop = false;
    /// A buffer whose storage is the device's mapping now (zero copy), since that acquire.
    bool zeroCopy = false;
    /// A release left GL's copy out of the shadow to the application's context (set on the GL
    /// thread, read by the releasing thread once the command has run).
    bool appCopyDue = false;
    /// Whether acquires move the CL object's storage (in place, or a buffer through the
    /// device): maps then wait for the latest acquire (settleStorage).
    bool movesStorage() const { return inPlace || (resource && type == CL_GL_OBJECT_BUFFER); }

private:
    mutable std::mutex m_mutex;
    Ref<Event> m_lastAcquire, m_lastRelease; ///< guarded by m_mutex
};

/// The GL state of `m`, null when `m` was not made from a GL object.
GlObject* glObjectOf(const Mem& m);

/// clCreateFromGLBuffer after its argument checks: reads the buffer's size on the GL thread
/// and makes the CL buffer (in place or a host copy, as the share decides). Errors:
/// CL_INVALID_GL_OBJECT (not a buffer object, or one without a data store),
/// CL_OUT_OF_HOST_MEMORY (no host copy).
Result<Mem*> createFromBuffer(Context& context, std::shared_ptr<Share> share, cl_mem_flags flags,
                              unsigned buffer);

/// clCreateFromGLBufferInDeviceMemoryDUET after its argument checks: moves the data store of GL
/// buffer `buffer` into memory of the share's interop device that GL imports
/// (GL_EXT_memory_object_fd), in the application's GL context, which must be current on the
/// calling thread, keeping the buffer's name, size, contents and bindings; then makes the CL
/// buffer over that memory. Errors: CL_INVALID_GL_OBJECT (not a buffer object, no data store,
/// immutable storage), CL_INVALID_OPERATION (no interop device, it exports no memory, GL
/// imports none, the application's context is not current), CL_OUT_OF_RESOURCES and
/// CL_MEM_OBJECT_ALLOCATION_FAILURE (the device's memory). A failure leaves the GL buffer as it
/// was.
Result<Mem*> createFromBufferInDeviceMemory(Context& context, std::shared_ptr<Share> share,
                                            cl_mem_flags flags, unsigned buffer);

/// A GL texture level or renderbuffer as a CL image will see it.
struct GlImage {
    cl_gl_object_type type = 0; ///< CL_GL_OBJECT_TEXTURE2D, ..., CL_GL_OBJECT_RENDERBUFFER
    unsigned name = 0;
    unsigned target = 0; ///< 0 for a renderbuffer
    int level = 0;
    cl_image_format format{};
    unsigned transferFormat = 0, transferType = 0, bytesPerTexel = 0;
    cl_image_desc desc{};        ///< type and sizes; no pitches, no buffer
    std::string what;            ///< "texture 7" / "renderbuffer 3", for messages
    unsigned internalFormat = 0; ///< GL's, e.g. GL_RGBA8
};

/// The CL image type for a texture target, 0 when CL cannot share that target.
cl_mem_object_type imageTypeFor(unsigned target);

/// Reads level `level` of texture `name` bound to `target` (renderbuffer `name` when `target`
/// is 0) on the GL thread. Errors: CL_INVALID_GL_OBJECT (no such object, another target's
/// texture, a renderbuffer without storage), CL_INVALID_MIP_LEVEL (no such level),
/// CL_INVALID_IMAGE_FORMAT_DESCRIPTOR (an internal format CL cannot share).
Result<GlImage> describeImage(Share& share, unsigned target, int level, unsigned name);

/// The CL image of a depth-stencil texture or renderbuffer (cl_khr_gl_depth_images), which
/// clCreateImage refuses. Errors: CL_INVALID_IMAGE_FORMAT_DESCRIPTOR (not 2D or a 2D array),
/// CL_MEM_OBJECT_ALLOCATION_FAILURE.
Result<Mem*> createDepthStencilImage(Context& context, cl_mem_flags flags,
                                     const cl_image_format& format, const cl_image_desc& desc);

/// Makes `image`, just created for `gl` and not yet handed out, share it.
void shareImage(Mem& image, std::shared_ptr<Share> share, const GlImage& gl);

/// clEnqueueAcquireGLObjects / clEnqueueReleaseGLObjects after their argument checks (every
/// object a GL object of the queue's context, in the other state): flips the objects' glState
/// now and enqueues the command that maps or copies them on the GL thread. A release with the
/// application's GL context current on this thread returns once it has run (cl_khr_gl_event).
/// Returns the command's event when `wantEvent` (may be null otherwise).
Ref<Event> enqueueAcquire(Queue& queue, std::shared_ptr<Share> share, std::span<Mem* const> objects,
                          std::span<Event* const> waitList, bool wantEvent);
Ref<Event> enqueueRelease(Queue& queue, std::shared_ptr<Share> share, std::span<Mem* const> objects,
                          std::span<Event* const> waitList, bool wantEvent);

/// clCreateEventFromGLsyncKHR after its argument checks: an event that completes when the GL
/// sync object `sync` is signalled, polled on the GL thread. Errors: CL_INVALID_GL_OBJECT when
/// `sync` is not a sync object of the share group.
Result<Event*> createEventFromSync(Context& context, std::shared_ptr<Share> share, void* sync);

} // namespace duet::rt::gl
