// The GL state of CL memory objects made from GL objects, and their creation from GL buffers,
// textures and renderbuffers (the GL queries and the objects; argument checks are the API's).
#include "gl/gl_object.hpp"

#include "core/image.hpp"
#include "gl/gl_formats.hpp"
#include "gl/gl_functions.hpp"
#include "gl/gl_device_access.hpp"
#include "gl/gl_share.hpp"
#include "gl/gl_transfer.hpp"

#include <algorithm>
#include <atomic>

namespace duet::rt::gl {

GlObject::GlObject(std::shared_ptr<Share> glShare, cl_gl_object_type glType, unsigned glName)
    : share(std::move(glShare)), type(glType), name(glName) {}

GlObject::~GlObject() {
    // The jobs hold no reference to the share: the GL thread must not drop the last one.
    if (mapped) {
        unsigned buffer = name;
        share->post([buffer] { unmapBuffer(buffer); });
    }
    // The device unmaps and unregisters on the GL thread, then the pixel buffer goes. Memory
    // GL imported goes the other way: GL lets go of it before the device frees it.
    if (resource || pixelBuffer) {
        std::shared_ptr<GlInterop::Resource> registration(std::move(resource));
        share->post(
            [registration, pbo = pixelBuffer, shadow = shadowBuffer, mo = memoryObject]() mutable {
                deleteShadow(shadow, mo);
                registration.reset();
                deletePixelBuffer(pbo);
            });
    }
}

void GlObject::settleStorage() const {
    if (!movesStorage())
        return;
    Ref<Event> pending;
    {
        std::lock_guard lock(m_mutex);
        pending = m_lastAcquire;
    }
    if (pending)
        pending->wait(); // a failed acquire leaves the host copy, which is still memory
}

void GlObject::noteAcquire(Ref<Event> acquire) {
    Ref<Event> previous;
    std::lock_guard lock(m_mutex);
    previous = std::exchange(m_lastAcquire, std::move(acquire));
    // `previous` goes after the lock (declared before it): its last reference may run code.
}

void GlObject::noteRelease(Ref<Event> release) {
    Ref<Event> previous;
    std::lock_guard lock(m_mutex);
    previous = std::exchange(m_lastRelease, std::move(release));
}

bool GlObject::releasePending() const {
    std::lock_guard lock(m_mutex);
    return m_lastRelease && m_lastRelease->status() > CL_COMPLETE;
}

GlObject* glObjectOf(const Mem& m) {
    return dynamic_cast<GlObject*>(m.attachment());
}

void settleStorage(const Mem* mem) {
    mem->settleStorage();
}

Result<Mem*> createFromBuffer(Context& context, std::shared_ptr<Share> share, cl_mem_flags flags,
                              unsigned buffer) {
    GLint size = 0;
    bool isBuffer = false;
    share->run([&] {
        const auto& f = glFunctions();
        isBuffer = f.glIsBuffer(buffer);
        if (!isBuffer)
            return;
        f.glBindBuffer(GL_COPY_READ_BUFFER, buffer);
        f.glGetBufferParameteriv(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &size);
        f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
    });
    if (!isBuffer)
        return makeError(CL_INVALID_GL_OBJECT,
                         std::to_string(buffer) + " is not a GL buffer object");
    if (size <= 0)
        return makeError(CL_INVALID_GL_OBJECT,
                         "GL buffer " + std::to_string(buffer) + " has no data store");
    // In place where the driver maps buffers in place: the CL buffer's storage is GL's
    // mapping between acquire and release. Otherwise (and for an acquire whose mapping
    // fails) a host copy filled at acquire and written back at release, only in the
    // directions the flags allow.
    // Through the context's interop device (CUDA-GL) when it has one: registered once here,
    // mapped at every acquire, and the CL buffer's storage is that mapping on its queues.
    auto state = std::make_unique<GlObject>(share, CL_GL_OBJECT_BUFFER, buffer);
    char* storage = context.allocateStorage(size_t(size));
    if (!storage)
        return makeError(CL_OUT_OF_HOST_MEMORY, "could not allocate the buffer's host copy");
    Mem* m = makeObject<Mem>(retainRef(&context), CL_MEM_OBJECT_BUFFER, flags, size_t(size),
                             nullptr, storage, true);
    if (!attachInterop(*share, *m, *state, 0)) {
        // GL's mapping is host memory: in place only where that serves every device of the
        // context (not an NVIDIA device's, which needs memory of its allocator).
        if (context.hostMemoryIsStorage()) {
            state->inPlace = share->buffersInPlace();
        } else {
            static std::atomic<bool> said{false};
            if (!said.exchange(true))
                logNote("GL buffers are copied at acquire/release: the context's devices "
                        "cannot use GL's host mappings in place");
        }
    }
    m->attach(std::move(state));
    m->glState.store(Mem::GlState::Released);
    return m;
}

Result<Mem*> createFromBufferInDeviceMemory(Context& context, std::shared_ptr<Share> share,
                                            cl_mem_flags flags, unsigned buffer) {
    if (!share->interop())
        return makeError(CL_INVALID_OPERATION,
                         "no device of the context runs its GL context (CUDA-GL interop on the "
                         "NVIDIA device under NVIDIA's GL): only such a device's memory can be a "
                         "GL buffer's store");
    if (!share->appContextCurrent())
        return makeError(CL_INVALID_OPERATION,
                         "the context's GL context is not current on the calling thread: the "
                         "buffer's store is replaced in it");
    // The application's context is current here: asked there, with its binding put back.
    const auto& f = glFunctions();
    if (!f.glIsBuffer(buffer))
        return makeError(CL_INVALID_GL_OBJECT,
                         std::to_string(buffer) + " is not a GL buffer object");
    GLint size = 0, immutable = 0, bound = 0;
    f.glGetIntegerv(GL_COPY_READ_BUFFER_BINDING, &bound);
    f.glBindBuffer(GL_COPY_READ_BUFFER, buffer);
    f.glGetBufferParameteriv(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &size);
    f.glGetBufferParameteriv(GL_COPY_READ_BUFFER, GL_BUFFER_IMMUTABLE_STORAGE, &immutable);
    f.glBindBuffer(GL_COPY_READ_BUFFER, GLuint(bound));
    const std::string name = "GL buffer " + std::to_string(buffer);
    if (size <= 0)
        return makeError(CL_INVALID_GL_OBJECT, name + " has no data store");
    if (immutable)
        return makeError(CL_INVALID_GL_OBJECT,
                         name + " has immutable storage (glBufferStorage): GL gives it no other "
                                "store");
    // The CL buffer's own storage serves the queues of the context's other devices (copies on
    // the GPU at acquire and release); the interop device's queues use the store itself.
    char* storage = context.allocateStorage(size_t(size));
    if (!storage)
        return makeError(CL_OUT_OF_HOST_MEMORY, "could not allocate the buffer's host copy");
    auto state = std::make_unique<GlObject>(share, CL_GL_OBJECT_BUFFER, buffer);
    if (Status s = moveBufferToDevice(*share, *state, size_t(size), storage); !s) {
        // After a failed copy on the device the buffer has moved (its contents are lost): the
        // state must still let go of what it holds, on the GL thread.
        state.reset();
        context.freeStorage(storage);
        return s.error();
    }
    Mem* m = makeObject<Mem>(retainRef(&context), CL_MEM_OBJECT_BUFFER, flags, size_t(size),
                             nullptr, storage, true);
    m->attach(std::move(state));
    m->glState.store(Mem::GlState::Released);
    return m;
}

cl_mem_object_type imageTypeFor(unsigned target) {
    switch (target) {
    case GL_TEXTURE_1D:
        return CL_MEM_OBJECT_IMAGE1D;
    case GL_TEXTURE_1D_ARRAY:
        return CL_MEM_OBJECT_IMAGE1D_ARRAY;
    case GL_TEXTURE_2D:
    case GL_TEXTURE_RECTANGLE:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_X:
    case GL_TEXTURE_CUBE_MAP_NEGATIVE_X:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_Y:
    case GL_TEXTURE_CUBE_MAP_NEGATIVE_Y:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_Z:
    case GL_TEXTURE_CUBE_MAP_NEGATIVE_Z:
        return CL_MEM_OBJECT_IMAGE2D;
    case GL_TEXTURE_2D_ARRAY:
        return CL_MEM_OBJECT_IMAGE2D_ARRAY;
    case GL_TEXTURE_3D:
        return CL_MEM_OBJECT_IMAGE3D;
    case GL_TEXTURE_BUFFER:
        return CL_MEM_OBJECT_IMAGE1D_BUFFER;
    default:
        return 0;
    }
}

namespace {

cl_gl_object_type objectTypeFor(cl_mem_object_type t) {
    switch (t) {
    case CL_MEM_OBJECT_IMAGE1D:
        return CL_GL_OBJECT_TEXTURE1D;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        return CL_GL_OBJECT_TEXTURE1D_ARRAY;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        return CL_GL_OBJECT_TEXTURE2D_ARRAY;
    case CL_MEM_OBJECT_IMAGE3D:
        return CL_GL_OBJECT_TEXTURE3D;
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
        return CL_GL_OBJECT_TEXTURE_BUFFER;
    default:
        return CL_GL_OBJECT_TEXTURE2D;
    }
}

/// What the GL thread reads of a texture level or renderbuffer.
struct GlLevel {
    bool exists = false, bound = false;
    GLint w = 0, h = 0, d = 0, internal = 0;
};

/// On the GL thread: level `level` of texture `name` at `target` (renderbuffer when 0).
GlLevel queryLevel(unsigned target, int level, unsigned name) {
    const auto& f = glFunctions();
    GlLevel q;
    while (f.glGetError() != GL_NO_ERROR) {
    }
    if (target == 0) {
        q.exists = f.glIsRenderbuffer(name);
        if (!q.exists)
            return q;
        f.glBindRenderbuffer(GL_RENDERBUFFER, name);
        f.glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_WIDTH, &q.w);
        f.glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_HEIGHT, &q.h);
        f.glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_INTERNAL_FORMAT,
                                       &q.internal);
        f.glBindRenderbuffer(GL_RENDERBUFFER, 0);
        q.bound = true;
        q.d = 1;
        return q;
    }
    q.exists = f.glIsTexture(name);
    if (!q.exists)
        return q;
    GLenum bt = bindTarget(target);
    f.glBindTexture(bt, name);
    q.bound = f.glGetError() == GL_NO_ERROR; // another target's texture fails to bind
    if (q.bound) {
        f.glGetTexLevelParameteriv(target, level, GL_TEXTURE_WIDTH, &q.w);
        f.glGetTexLevelParameteriv(target, level, GL_TEXTURE_HEIGHT, &q.h);
        f.glGetTexLevelParameteriv(target, level, GL_TEXTURE_DEPTH, &q.d);
        f.glGetTexLevelParameteriv(target, level, GL_TEXTURE_INTERNAL_FORMAT, &q.internal);
        f.glBindTexture(bt, 0);
    }
    if (f.glGetError() != GL_NO_ERROR)
        q.w = 0; // level out of range
    return q;
}

} // namespace

Result<GlImage> describeImage(Share& share, unsigned target, int level, unsigned name) {
    const bool renderbuffer = target == 0;
    GlLevel q;
    share.run([&] { q = queryLevel(target, level, name); });
    GlImage out;
    out.what = (renderbuffer ? "renderbuffer " : "texture ") + std::to_string(name);
    if (!q.exists)
        return makeError(CL_INVALID_GL_OBJECT, out.what + " is not a GL " +
                                                   (renderbuffer ? "renderbuffer" : "texture") +
                                                   " object");
    if (!q.bound)
        return makeError(CL_INVALID_GL_OBJECT, out.what + " is not a texture of texture_target " +
                                                   std::to_string(target));
    if (q.w <= 0 || q.h <= 0)
        return makeError(renderbuffer ? CL_INVALID_GL_OBJECT : CL_INVALID_MIP_LEVEL,
                         out.what + (renderbuffer ? " has no storage"
                                                  : " has no level " + std::to_string(level)));
    auto fmt = formatFromGl(unsigned(q.internal));
    if (!fmt)
        return makeError(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, out.what + ": GL internal format " +
                                                                 std::to_string(q.internal) +
                                                                 " has no OpenCL image format");
    const cl_mem_object_type type = renderbuffer ? CL_MEM_OBJECT_IMAGE2D : imageTypeFor(target);
    out.type = renderbuffer ? CL_GL_OBJECT_RENDERBUFFER : objectTypeFor(type);
    out.name = name;
    out.target = target;
    out.level = level;
    out.format = fmt->cl;
    out.transferFormat = fmt->transferFormat;
    out.transferType = fmt->transferType;
    out.bytesPerTexel = fmt->bytesPerTexel;
    out.internalFormat = unsigned(q.internal);
    cl_image_desc& desc = out.desc;
    desc.image_type = type;
    desc.image_width = size_t(q.w);
    switch (type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        desc.image_array_size = size_t(q.h);
        break;
    case CL_MEM_OBJECT_IMAGE2D:
        desc.image_height = size_t(q.h);
        break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        desc.image_height = size_t(q.h);
        desc.image_array_size = size_t(q.d);
        break;
    case CL_MEM_OBJECT_IMAGE3D:
        desc.image_height = size_t(q.h);
        desc.image_depth = size_t(q.d);
        break;
    default:
        break;
    }
    return out;
}

Result<Mem*> createDepthStencilImage(Context& context, cl_mem_flags flags,
                                     const cl_image_format& format, const cl_image_desc& desc) {
    // Made here rather than by clCreateImage, which accepts no CL_DEPTH_STENCIL format: such
    // images "can only be created using the clCreateFromGLTexture API". 2D images and 2D
    // arrays only, as for CL_DEPTH; tightly packed host storage in GL's own packing.
    if (desc.image_type != CL_MEM_OBJECT_IMAGE2D && desc.image_type != CL_MEM_OBJECT_IMAGE2D_ARRAY)
        return makeError(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
                         "depth-stencil images are 2D images or 2D arrays");
    const size_t elem = elementSize(format);
    const size_t row = desc.image_width * elem, slice = row * desc.image_height;
    const size_t layers = std::max<size_t>(1, desc.image_array_size);
    char* storage = context.allocateStorage(slice * layers);
    if (!storage)
        return makeError(CL_MEM_OBJECT_ALLOCATION_FAILURE,
                         "could not allocate " + std::to_string(slice * layers) + " bytes");
    Mem* m = makeObject<Mem>(retainRef(&context), desc.image_type, flags, slice * layers, nullptr,
                             storage, true);
    m->format = format;
    m->elementSize = elem;
    m->rowPitch = row;
    m->slicePitch = slice;
    m->desc = desc;
    m->desc.image_row_pitch = row;
    m->desc.image_slice_pitch = slice;
    return m;
}

void shareImage(Mem& image, std::shared_ptr<Share> share, const GlImage& gl) {
    auto state = std::make_unique<GlObject>(std::move(share), gl.type, gl.name);
    state->target = gl.target;
    state->level = gl.level;
    state->transferFormat = gl.transferFormat;
    state->transferType = gl.transferType;
    attachInterop(*state->share, image, *state, gl.internalFormat);
    image.attach(std::move(state));
    image.glState.store(Mem::GlState::Released);
}

} // namespace duet::rt::gl
