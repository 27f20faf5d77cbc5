// cl_khr_gl_sharing and cl_khr_gl_event entry points: GL context queries, CL objects made
// from GL buffers, acquire/release commands, and events from GL sync objects.
#include "api/api.hpp"
#include "core/device.hpp"
#include "core/event.hpp"
#include "core/memory.hpp"
#include "core/queue.hpp"
#include "gl/gl_functions.hpp"
#include "gl/gl_formats.hpp"
#include "gl/gl_share.hpp"
#include "core/image.hpp"

#include <CL/cl_gl.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

using namespace duet::api;
namespace gl = duet::rt::gl;

namespace {

/// A GL buffer shared in place, as the GL thread sees it (touched there only, or once no
/// command can run any more).
struct Mapping {
    bool mapped = false; ///< CL's storage is GL's mapping (else the host copy, this acquire)
};

/// What a CL memory object made from a GL object remembers.
struct GlObject {
    std::shared_ptr<gl::Share> share;
    cl_gl_object_type type;
    GLuint name;
    bool acquired = false; ///< as of the latest enqueued acquire/release
    GLenum target = 0;     ///< textures: the texture_target given (a cube face, ...)
    GLint level = 0;
    GLenum transferFormat = 0, transferType = 0; ///< textures and renderbuffers
    /// Buffers shared in place: mapped at acquire, unmapped at release (null: host copies).
    std::shared_ptr<Mapping> mapping;
    Ref<Event> lastAcquire; ///< in place: the latest enqueued acquire (settleStorage)
};

std::mutex g_objectsMutex;
std::map<const Mem*, GlObject> g_objects;

void CL_CALLBACK forgetObject(cl_mem mem, void*) {
    GlObject gone;
    {
        std::lock_guard lock(g_objectsMutex);
        auto it = g_objects.find(static_cast<const Mem*>(mem));
        if (it == g_objects.end())
            return;
        gone = std::move(it->second);
        g_objects.erase(it);
    }
    // Released while acquired: GL must get its buffer back unmapped, or the application's
    // draws with it fail. No command of this object is left, so the state is final; the job
    // holds no reference to the share (the GL thread must not drop the last one).
    if (gone.mapping && gone.mapping->mapped) {
        GLuint name = gone.name;
        gone.share->post([name] {
            const auto& f = gl::glFunctions();
            f.glBindBuffer(GL_COPY_WRITE_BUFFER, name);
            f.glUnmapBuffer(GL_COPY_WRITE_BUFFER);
            f.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        });
    }
    // `gone` (its share and event references) goes here, outside the lock.
}

GlObject* findObject(const Mem* m) {
    auto it = g_objects.find(m);
    return it == g_objects.end() ? nullptr : &it->second;
}

} // namespace

namespace duet::rt::gl {

void settleStorage(const Mem* mem) {
    const Mem* owner = mem;
    while (owner->parent() || owner->bufferRef)
        owner = owner->parent() ? owner->parent() : owner->bufferRef.get();
    if (owner->glState.load(std::memory_order_relaxed) == Mem::GlState::None)
        return; // not a GL object: its storage never moves
    Ref<Event> pending;
    {
        std::lock_guard lock(g_objectsMutex);
        GlObject* o = findObject(owner);
        if (!o || !o->mapping)
            return;
        pending = o->lastAcquire;
    }
    if (pending)
        pending->wait(); // a failed acquire leaves the host copy, which is still memory
}

} // namespace duet::rt::gl

DUET_API cl_int CL_API_CALL clGetGLContextInfoKHR(const cl_context_properties* properties,
                                                  cl_gl_context_info param, size_t size,
                                                  void* value, size_t* sizeRet) {
    return guard("clGetGLContextInfoKHR", [&]() -> cl_int {
        const char* api = "clGetGLContextInfoKHR";
        for (const cl_context_properties* p = properties; p && *p; p += 2) {
            if (p[0] == CL_CONTEXT_PLATFORM) {
                if (!from<Platform>(reinterpret_cast<cl_platform_id>(p[1])))
                    return report(api, nullptr, CL_INVALID_PLATFORM,
                                  "CL_CONTEXT_PLATFORM is not a Duet platform");
            } else if (!gl::isGlProperty(p[0]) && p[0] != CL_CONTEXT_INTEROP_USER_SYNC) {
                return report(api, nullptr, CL_INVALID_PROPERTY,
                              "unsupported property " + std::to_string(p[0]));
            }
        }
        auto props = gl::parseProperties(properties);
        if (!props)
            return report(api, nullptr, props.error().code, props.error().message);
        if (!props->sharing())
            return report(api, nullptr, CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                          "no CL_GL_CONTEXT_KHR in properties");
        // Every Duet device can share: it works on host copies or mappings of GL data.
        std::vector<cl_device_id> devices;
        for (Device* d : Platform::get().devices())
            if (d->hasExtension("cl_khr_gl_sharing"))
                devices.push_back(d);
        switch (param) {
        case CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR:
            if (devices.size() > 1)
                devices.resize(1);
            break;
        case CL_DEVICES_FOR_GL_CONTEXT_KHR:
            break;
        default:
            return report(api, nullptr, CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (infoVector(size, value, sizeRet, devices) != CL_SUCCESS)
            return report(api, nullptr, CL_INVALID_VALUE,
                          "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

DUET_API cl_mem CL_API_CALL clCreateFromGLBuffer(cl_context context, cl_mem_flags flags,
                                                 cl_GLuint bufobj, cl_int* errcodeRet) {
    Call call("clCreateFromGLBuffer", errcodeRet);
    return guardHandle<_cl_mem>(call, [&]() -> cl_mem {
        Context* c = from<Context>(context);
        if (!c)
            return call.fail(CL_INVALID_CONTEXT, "not a valid context");
        call.setContext(c);
        auto share = gl::shareOf(c);
        if (!share)
            return call.fail(CL_INVALID_CONTEXT, "the context was not created from a GL context");
        if (flags != CL_MEM_READ_ONLY && flags != CL_MEM_WRITE_ONLY && flags != CL_MEM_READ_WRITE)
            return call.fail(CL_INVALID_VALUE, "flags must be exactly one of CL_MEM_READ_WRITE, "
                                               "CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY");
        GLint size = 0;
        bool isBuffer = false;
        share->run([&] {
            const auto& f = gl::glFunctions();
            isBuffer = f.glIsBuffer(bufobj);
            if (!isBuffer)
                return;
            f.glBindBuffer(GL_COPY_READ_BUFFER, bufobj);
            f.glGetBufferParameteriv(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &size);
            f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
        });
        if (!isBuffer)
            return call.fail(CL_INVALID_GL_OBJECT,
                             std::to_string(bufobj) + " is not a GL buffer object");
        if (size <= 0)
            return call.fail(CL_INVALID_GL_OBJECT,
                             "GL buffer " + std::to_string(bufobj) + " has no data store");
        // In place where the driver maps buffers in place: the CL buffer's storage is GL's
        // mapping between acquire and release. Otherwise (and for an acquire whose mapping
        // fails) a host copy filled at acquire and written back at release, only in the
        // directions the flags allow.
        bool inPlace = share->buffersInPlace();
        char* storage = allocateStorage(size_t(size));
        if (!storage)
            return call.fail(CL_OUT_OF_HOST_MEMORY, "could not allocate the buffer's host copy");
        Mem* m = makeObject<Mem>(retainRef(c), CL_MEM_OBJECT_BUFFER, flags, size_t(size), nullptr,
                                 storage, true);
        m->glState.store(Mem::GlState::Released);
        {
            std::lock_guard lock(g_objectsMutex);
            GlObject o{share, CL_GL_OBJECT_BUFFER, bufobj};
            if (inPlace)
                o.mapping = std::make_shared<Mapping>();
            g_objects[m] = std::move(o);
        }
        m->addDestructorCallback(&forgetObject, nullptr);
        return call.ok(m);
    });
}

DUET_API cl_int CL_API_CALL clGetGLObjectInfo(cl_mem memobj, cl_gl_object_type* type,
                                              cl_GLuint* name) {
    return guard("clGetGLObjectInfo", [&]() -> cl_int {
        Mem* m = from<Mem>(memobj);
        if (!m)
            return report("clGetGLObjectInfo", nullptr, CL_INVALID_MEM_OBJECT,
                          "not a valid memory object");
        std::lock_guard lock(g_objectsMutex);
        GlObject* o = findObject(m);
        if (!o)
            return report("clGetGLObjectInfo", m->context(), CL_INVALID_GL_OBJECT,
                          "the memory object was not created from a GL object");
        if (type)
            *type = o->type;
        if (name)
            *name = o->name;
        return CL_SUCCESS;
    });
}

namespace {

/// Tightly packed texels of `m` <-> its storage (whose rows may be padded).
void packedToImage(const Mem& m, const std::vector<unsigned char>& packed, bool toImage,
                   std::vector<unsigned char>* out) {
    ImageBox b = imageBox(m);
    size_t row = b.extent[0] * m.elementSize;
    for (size_t z = 0; z < b.extent[2]; ++z)
        for (size_t y = 0; y < b.extent[1]; ++y) {
            char* img = m.data() + z * b.stride[2] + y * b.stride[1];
            size_t at = (z * b.extent[1] + y) * row;
            if (toImage)
                std::memcpy(img, packed.data() + at, row);
            else
                std::memcpy(out->data() + at, img, row);
        }
}

size_t packedSize(const Mem& m) {
    ImageBox b = imageBox(m);
    return b.extent[0] * b.extent[1] * b.extent[2] * m.elementSize;
}

GLenum bindTarget(GLenum target) {
    if (target >= GL_TEXTURE_CUBE_MAP_POSITIVE_X && target <= GL_TEXTURE_CUBE_MAP_NEGATIVE_Z)
        return GL_TEXTURE_CUBE_MAP;
    return target;
}

bool isDepth(GLenum format) {
    return format == GL_DEPTH_COMPONENT || format == GL_DEPTH_STENCIL;
}

/// The framebuffer attachment for data of client format `format`.
GLenum attachmentFor(GLenum format) {
    return format == GL_DEPTH_STENCIL     ? GL_DEPTH_STENCIL_ATTACHMENT
           : format == GL_DEPTH_COMPONENT ? GL_DEPTH_ATTACHMENT
                                          : GL_COLOR_ATTACHMENT0;
}

/// A framebuffer reading renderbuffer `rb` (on the GL thread).
GLuint readFramebuffer(const gl::GlFunctions& f, GLuint rb, GLenum format) {
    GLuint fbo = 0;
    f.glGenFramebuffers(1, &fbo);
    f.glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
    f.glFramebufferRenderbuffer(GL_READ_FRAMEBUFFER, attachmentFor(format), GL_RENDERBUFFER, rb);
    return fbo;
}

/// OpenGL ES has no glGetTexImage: each layer of the shared level is attached to a read
/// framebuffer and read with glReadPixels, tightly packed into `out` (GL thread).
void readTextureThroughFramebuffer(const gl::GlFunctions& f, const Mem& m, const GlObject& o,
                                   unsigned char* out) {
    ImageBox b = imageBox(m);
    const size_t layerBytes = b.extent[0] * b.extent[1] * m.elementSize;
    const bool layered = o.target == GL_TEXTURE_2D_ARRAY || o.target == GL_TEXTURE_3D;
    const GLenum attach = attachmentFor(o.transferFormat);
    GLuint fbo = 0;
    f.glGenFramebuffers(1, &fbo);
    f.glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
    for (size_t z = 0; z < b.extent[2]; ++z) {
        if (layered)
            f.glFramebufferTextureLayer(GL_READ_FRAMEBUFFER, attach, o.name, o.level, GLint(z));
        else
            f.glFramebufferTexture2D(GL_READ_FRAMEBUFFER, attach, o.target, o.name, o.level);
        f.glReadPixels(0, 0, GLsizei(b.extent[0]), GLsizei(b.extent[1]), o.transferFormat,
                       o.transferType, out + z * layerBytes);
    }
    f.glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    f.glDeleteFramebuffers(1, &fbo);
}

/// The buffer object (and byte offset) behind a buffer texture, as of now (GL thread).
void textureBufferStore(const gl::GlFunctions& f, GLuint texture, GLint& buffer, GLint& offset) {
    f.glBindTexture(GL_TEXTURE_BUFFER, texture);
    f.glGetTexLevelParameteriv(GL_TEXTURE_BUFFER, 0, GL_TEXTURE_BUFFER_DATA_STORE_BINDING, &buffer);
    f.glGetTexLevelParameteriv(GL_TEXTURE_BUFFER, 0, GL_TEXTURE_BUFFER_OFFSET, &offset);
    f.glBindTexture(GL_TEXTURE_BUFFER, 0);
}

/// GL -> CL copy at acquire (GL thread).
cl_int copyFromGl(Mem& m, const GlObject& o) {
    const auto& f = gl::glFunctions();
    if (o.type == CL_GL_OBJECT_BUFFER) {
        f.glBindBuffer(GL_COPY_READ_BUFFER, o.name);
        void* p = f.glMapBufferRange(GL_COPY_READ_BUFFER, 0, GLsizeiptr(m.size()), GL_MAP_READ_BIT);
        if (p) {
            std::memcpy(m.data(), p, m.size());
            f.glUnmapBuffer(GL_COPY_READ_BUFFER);
        }
        f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
        return p ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
    }
    if (o.type == CL_GL_OBJECT_TEXTURE_BUFFER) {
        GLint buffer = 0, offset = 0;
        textureBufferStore(f, o.name, buffer, offset);
        f.glBindBuffer(GL_COPY_READ_BUFFER, GLuint(buffer));
        size_t bytes = packedSize(m);
        void* p =
            f.glMapBufferRange(GL_COPY_READ_BUFFER, offset, GLsizeiptr(bytes), GL_MAP_READ_BIT);
        if (p) {
            std::memcpy(m.data(), p, bytes);
            f.glUnmapBuffer(GL_COPY_READ_BUFFER);
        }
        f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
        return p ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
    }
    std::vector<unsigned char> packed(packedSize(m));
    f.glPixelStorei(GL_PACK_ALIGNMENT, 1);
    if (o.type == CL_GL_OBJECT_RENDERBUFFER) {
        GLuint fbo = readFramebuffer(f, o.name, o.transferFormat);
        f.glReadPixels(0, 0, GLsizei(m.desc.image_width), GLsizei(m.desc.image_height),
                       o.transferFormat, o.transferType, packed.data());
        f.glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        f.glDeleteFramebuffers(1, &fbo);
    } else if (o.share->gles()) {
        readTextureThroughFramebuffer(f, m, o, packed.data());
    } else {
        f.glBindTexture(bindTarget(o.target), o.name);
        f.glGetTexImage(o.target, o.level, o.transferFormat, o.transferType, packed.data());
        f.glBindTexture(bindTarget(o.target), 0);
    }
    packedToImage(m, packed, true, nullptr);
    return f.glGetError() == GL_NO_ERROR ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
}

/// CL -> GL copy at release (GL thread).
void copyToGl(Mem& m, const GlObject& o) {
    const auto& f = gl::glFunctions();
    if (o.type == CL_GL_OBJECT_BUFFER) {
        f.glBindBuffer(GL_COPY_READ_BUFFER, o.name);
        f.glBufferSubData(GL_COPY_READ_BUFFER, 0, GLsizeiptr(m.size()), m.data());
        f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
        return;
    }
    if (o.type == CL_GL_OBJECT_TEXTURE_BUFFER) {
        GLint buffer = 0, offset = 0;
        textureBufferStore(f, o.name, buffer, offset);
        f.glBindBuffer(GL_COPY_READ_BUFFER, GLuint(buffer));
        f.glBufferSubData(GL_COPY_READ_BUFFER, offset, GLsizeiptr(packedSize(m)), m.data());
        f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
        return;
    }
    std::vector<unsigned char> packed(packedSize(m));
    packedToImage(m, packed, false, &packed);
    f.glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    GLsizei w = GLsizei(m.desc.image_width);
    GLsizei h = GLsizei(std::max<size_t>(1, m.desc.image_height));
    if (o.type == CL_GL_OBJECT_RENDERBUFFER) {
        // Through a scratch texture of the same format, blitted into the renderbuffer.
        GLint internal = 0;
        f.glBindRenderbuffer(GL_RENDERBUFFER, o.name);
        f.glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_INTERNAL_FORMAT, &internal);
        f.glBindRenderbuffer(GL_RENDERBUFFER, 0);
        GLuint tex = 0, fbos[2] = {0, 0};
        f.glGenTextures(1, &tex);
        f.glBindTexture(GL_TEXTURE_2D, tex);
        f.glTexImage2D(GL_TEXTURE_2D, 0, internal, w, h, 0, o.transferFormat, o.transferType,
                       packed.data());
        f.glBindTexture(GL_TEXTURE_2D, 0);
        bool depth = isDepth(o.transferFormat);
        GLenum attach = o.transferFormat == GL_DEPTH_STENCIL ? GL_DEPTH_STENCIL_ATTACHMENT
                        : depth                              ? GL_DEPTH_ATTACHMENT
                                                             : GL_COLOR_ATTACHMENT0;
        f.glGenFramebuffers(2, fbos);
        f.glBindFramebuffer(GL_READ_FRAMEBUFFER, fbos[0]);
        f.glFramebufferTexture2D(GL_READ_FRAMEBUFFER, attach, GL_TEXTURE_2D, tex, 0);
        f.glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fbos[1]);
        f.glFramebufferRenderbuffer(GL_DRAW_FRAMEBUFFER, attach, GL_RENDERBUFFER, o.name);
        GLbitfield mask = o.transferFormat == GL_DEPTH_STENCIL
                              ? GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT
                          : depth ? GL_DEPTH_BUFFER_BIT
                                  : GL_COLOR_BUFFER_BIT;
        f.glBlitFramebuffer(0, 0, w, h, 0, 0, w, h, mask, GL_NEAREST);
        f.glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        f.glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
        f.glDeleteFramebuffers(2, fbos);
        f.glDeleteTextures(1, &tex);
        return;
    }
    GLenum bt = bindTarget(o.target);
    f.glBindTexture(bt, o.name);
    switch (m.type()) {
    case CL_MEM_OBJECT_IMAGE1D:
        f.glTexSubImage1D(o.target, o.level, 0, w, o.transferFormat, o.transferType, packed.data());
        break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        f.glTexSubImage2D(o.target, o.level, 0, 0, w, GLsizei(m.desc.image_array_size),
                          o.transferFormat, o.transferType, packed.data());
        break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        f.glTexSubImage3D(o.target, o.level, 0, 0, 0, w, h, GLsizei(m.desc.image_array_size),
                          o.transferFormat, o.transferType, packed.data());
        break;
    case CL_MEM_OBJECT_IMAGE3D:
        f.glTexSubImage3D(o.target, o.level, 0, 0, 0, w, h, GLsizei(m.desc.image_depth),
                          o.transferFormat, o.transferType, packed.data());
        break;
    default:
        f.glTexSubImage2D(o.target, o.level, 0, 0, w, h, o.transferFormat, o.transferType,
                          packed.data());
    }
    f.glBindTexture(bt, 0);
}

/// Acquire of a buffer shared in place (GL thread): maps it and points the CL buffer at the
/// mapping. False when GL does not map it (the acquire then copies).
bool mapInPlace(Mem& m, const GlObject& o, bool clReads, bool clWrites) {
    const auto& f = gl::glFunctions();
    // GL forbids unsynchronised maps for reading. Where CL only writes, the acquire's wait
    // for the application's GL work (or its glFinish) is all the synchronisation needed.
    GLbitfield access = (clReads ? GL_MAP_READ_BIT : 0) | (clWrites ? GL_MAP_WRITE_BIT : 0);
    if (!clReads)
        access |= GL_MAP_UNSYNCHRONIZED_BIT;
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, o.name);
    GLint size = 0;
    f.glGetBufferParameteriv(GL_COPY_WRITE_BUFFER, GL_BUFFER_SIZE, &size);
    void* p = size_t(size) >= m.size()
                  ? f.glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, GLsizeiptr(m.size()), access)
                  : nullptr;
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    if (!p) {
        while (f.glGetError() != GL_NO_ERROR) {
        }
        static std::atomic<bool> said{false};
        if (!said.exchange(true))
            gl::logNote("GL buffer " + std::to_string(o.name) +
                        (size_t(size) < m.size() ? " shrank since clCreateFromGLBuffer"
                                                 : " could not be mapped") +
                        "; this acquire copies instead");
        return false;
    }
    m.setStorage(static_cast<char*>(p));
    o.mapping->mapped = true;
    return true;
}

/// Release of a buffer acquired in place (GL thread): CL's view goes back to the host copy
/// and GL gets its buffer back.
void unmapInPlace(Mem& m, const GlObject& o) {
    const auto& f = gl::glFunctions();
    m.setStorage(nullptr);
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, o.name);
    f.glUnmapBuffer(GL_COPY_WRITE_BUFFER);
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    o.mapping->mapped = false;
}

/// Shared checks of acquire and release; on success fills `objects` and flips their state.
cl_int checkGlObjects(const char* api, Queue* q, cl_uint num, const cl_mem* mems, bool acquire,
                      std::vector<std::pair<Ref<Mem>, GlObject>>& objects) {
    Context* ctx = q->context();
    // CL_INVALID_VALUE: num_objects and mem_objects disagree.
    if ((num == 0) != (mems == nullptr))
        return report(api, ctx, CL_INVALID_VALUE, "num_objects and mem_objects disagree");
    for (cl_uint i = 0; i < num; ++i)
        if (!from<Mem>(mems[i]))
            return report(api, ctx, CL_INVALID_MEM_OBJECT,
                          "mem_objects[" + std::to_string(i) + "] is not a valid memory object");
    // CL_INVALID_CONTEXT: the queue's context was not created from a GL context, or an
    // object belongs to another context.
    if (!gl::shareOf(ctx))
        return report(api, ctx, CL_INVALID_CONTEXT,
                      "the queue's context was not created from a GL context");
    std::lock_guard lock(g_objectsMutex);
    for (cl_uint i = 0; i < num; ++i) {
        Mem* m = static_cast<Mem*>(mems[i]);
        if (m->context() != ctx)
            return report(api, ctx, CL_INVALID_CONTEXT,
                          "mem_objects[" + std::to_string(i) + "] is of another context");
        GlObject* o = findObject(m);
        if (!o)
            return report(api, ctx, CL_INVALID_GL_OBJECT,
                          "mem_objects[" + std::to_string(i) +
                              "] was not created from a GL "
                              "object");
        if (o->acquired == acquire)
            return report(api, ctx, CL_INVALID_OPERATION,
                          "mem_objects[" + std::to_string(i) + "] is " +
                              (acquire ? "already acquired" : "not acquired"));
    }
    for (cl_uint i = 0; i < num; ++i) {
        Mem* m = static_cast<Mem*>(mems[i]);
        objects.emplace_back(retainRef(m), *findObject(m));
    }
    return CL_SUCCESS;
}

void setAcquired(const std::vector<std::pair<Ref<Mem>, GlObject>>& objects, bool acquired) {
    std::lock_guard lock(g_objectsMutex);
    for (auto& [m, o] : objects)
        if (GlObject* live = findObject(m.get())) {
            live->acquired = acquired;
            m->glState.store(acquired ? Mem::GlState::Acquired : Mem::GlState::Released);
        }
}

/// Remembers `acquire` as the latest acquire of the objects shared in place (settleStorage).
void noteAcquire(const std::vector<std::pair<Ref<Mem>, GlObject>>& objects, Event* acquire) {
    std::lock_guard lock(g_objectsMutex);
    for (auto& [m, o] : objects)
        if (GlObject* live = findObject(m.get()); live && live->mapping)
            live->lastAcquire = retainRef(acquire);
}

cl_int enqueueGlObjects(const char* api, cl_command_queue queue, cl_uint num, const cl_mem* mems,
                        cl_uint numEvents, const cl_event* waitList, cl_event* event,
                        bool acquire) {
    Queue* q = from<Queue>(queue);
    if (!q)
        return report(api, nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
    std::vector<std::pair<Ref<Mem>, GlObject>> objects;
    if (cl_int e = checkGlObjects(api, q, num, mems, acquire, objects))
        return e;
    if (cl_int e = checkWaitList(api, q->context(), numEvents, waitList))
        return e;
    auto share = gl::shareOf(q->context());
    // Acquire: the application's GL work issued so far must be done before CL reads.
    void* fence = acquire ? share->fenceAppContext() : nullptr;
    setAcquired(objects, acquire);
    cl_command_type type = acquire ? CL_COMMAND_ACQUIRE_GL_OBJECTS : CL_COMMAND_RELEASE_GL_OBJECTS;
    // Release with the application's GL context current here: GL commands the application
    // issues after this call must see CL's writes (cl_khr_gl_event's implicit
    // synchronisation), so the call returns once the release has run.
    bool waitHere = !acquire && share->appContextCurrent();
    bool inPlace = std::any_of(objects.begin(), objects.end(),
                               [](const auto& mo) { return mo.second.mapping != nullptr; });
    bool wantEvent = event || waitHere || (acquire && inPlace);
    std::vector<std::pair<Ref<Mem>, GlObject>> touched; // for noteAcquire
    if (acquire && inPlace)
        touched = objects;
    cl_event own = nullptr;
    cl_int r = submit(q, type, numEvents, waitList, wantEvent ? &own : nullptr, false,
                      [share, fence, acquire, objects = std::move(objects)]() -> cl_int {
                          cl_int status = CL_SUCCESS;
                          share->run([&] {
                              const auto& f = gl::glFunctions();
                              if (fence) {
                                  auto s = static_cast<GLsync>(fence);
                                  while (f.glClientWaitSync(s, GL_SYNC_FLUSH_COMMANDS_BIT,
                                                            1000000000) == GL_TIMEOUT_EXPIRED) {
                                  }
                                  f.glDeleteSync(s);
                              }
                              bool copied = false;
                              for (auto& [m, o] : objects) {
                                  bool clReads = !(m->flags() & CL_MEM_WRITE_ONLY);
                                  bool clWrites = !(m->flags() & CL_MEM_READ_ONLY);
                                  if (o.mapping) {
                                      if (acquire && mapInPlace(*m, o, clReads, clWrites))
                                          continue;
                                      if (!acquire && o.mapping->mapped) {
                                          unmapInPlace(*m, o);
                                          continue;
                                      }
                                  }
                                  // A depth-stencil image's stencil is GL's alone: CL writes
                                  // only depth, so the copy written back at release must start
                                  // from GL's texels even when CL never reads them.
                                  bool keepsGl = m->format.image_channel_order == CL_DEPTH_STENCIL;
                                  if (acquire && (clReads || (keepsGl && clWrites)))
                                      status = std::min(status, copyFromGl(*m, o));
                                  else if (!acquire && clWrites) {
                                      copyToGl(*m, o);
                                      copied = true;
                                  }
                              }
                              // Release: GL commands after the release event see CL's writes.
                              // Copies are GL commands to finish; unmapping leaves CL's writes
                              // in GL's own store already, so a flush does.
                              if (!acquire) {
                                  if (copied)
                                      f.glFinish();
                                  else
                                      f.glFlush();
                              }
                          });
                          return status;
                      });
    if (r != CL_SUCCESS || !own)
        return r;
    if (acquire && inPlace)
        noteAcquire(touched, static_cast<Event*>(own));
    if (waitHere)
        static_cast<Event*>(own)->wait();
    if (event)
        *event = own;
    else
        clReleaseEvent(own);
    return CL_SUCCESS;
}

} // namespace

DUET_API cl_int CL_API_CALL clEnqueueAcquireGLObjects(cl_command_queue queue, cl_uint num,
                                                      const cl_mem* mems, cl_uint numEvents,
                                                      const cl_event* waitList, cl_event* event) {
    return guard("clEnqueueAcquireGLObjects", [&] {
        return enqueueGlObjects("clEnqueueAcquireGLObjects", queue, num, mems, numEvents, waitList,
                                event, true);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueReleaseGLObjects(cl_command_queue queue, cl_uint num,
                                                      const cl_mem* mems, cl_uint numEvents,
                                                      const cl_event* waitList, cl_event* event) {
    return guard("clEnqueueReleaseGLObjects", [&] {
        return enqueueGlObjects("clEnqueueReleaseGLObjects", queue, num, mems, numEvents, waitList,
                                event, false);
    });
}

namespace {

/// The CL image type for a texture target, 0 when CL cannot share that target.
cl_mem_object_type imageTypeFor(GLenum target) {
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

/// The CL image of a depth-stencil texture or renderbuffer (cl_khr_gl_depth_images). Made
/// here rather than by clCreateImage, which accepts no CL_DEPTH_STENCIL format: such images
/// "can only be created using the clCreateFromGLTexture API". 2D images and 2D arrays only,
/// as for CL_DEPTH; tightly packed host storage in GL's own packing.
cl_mem createDepthStencil(Context* c, cl_mem_flags flags, const cl_image_format& format,
                          const cl_image_desc& desc, cl_int& err) {
    if (desc.image_type != CL_MEM_OBJECT_IMAGE2D &&
        desc.image_type != CL_MEM_OBJECT_IMAGE2D_ARRAY) {
        err = CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
        return nullptr;
    }
    const size_t elem = elementSize(format);
    const size_t row = desc.image_width * elem, slice = row * desc.image_height;
    const size_t layers = std::max<size_t>(1, desc.image_array_size);
    char* storage = allocateStorage(slice * layers);
    if (!storage) {
        err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return nullptr;
    }
    Mem* m = makeObject<Mem>(retainRef(c), desc.image_type, flags, slice * layers, nullptr, storage,
                             true);
    m->format = format;
    m->elementSize = elem;
    m->rowPitch = row;
    m->slicePitch = slice;
    m->desc = desc;
    m->desc.image_row_pitch = row;
    m->desc.image_slice_pitch = slice;
    err = CL_SUCCESS;
    return m;
}

/// clCreateFromGLTexture* and clCreateFromGLRenderbuffer: `target` 0 means a renderbuffer.
cl_mem createFromGlImage(Call& call, cl_context context, cl_mem_flags flags, GLenum target,
                         GLint level, GLuint name, std::initializer_list<GLenum> allowed) {
    Context* c = from<Context>(context);
    if (!c)
        return call.fail(CL_INVALID_CONTEXT, "not a valid context");
    call.setContext(c);
    auto share = gl::shareOf(c);
    if (!share)
        return call.fail(CL_INVALID_CONTEXT, "the context was not created from a GL context");
    if (flags != CL_MEM_READ_ONLY && flags != CL_MEM_WRITE_ONLY && flags != CL_MEM_READ_WRITE)
        return call.fail(CL_INVALID_VALUE, "flags must be exactly one of CL_MEM_READ_WRITE, "
                                           "CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY");
    bool renderbuffer = target == 0;
    cl_mem_object_type type = renderbuffer ? CL_MEM_OBJECT_IMAGE2D : imageTypeFor(target);
    if (!renderbuffer &&
        (!type || std::find(allowed.begin(), allowed.end(), target) == allowed.end()))
        return call.fail(CL_INVALID_VALUE, "texture_target " + std::to_string(target) +
                                               " cannot be shared by this call");
    if (level < 0)
        return call.fail(CL_INVALID_MIP_LEVEL, "miplevel is negative");
    if ((target == GL_TEXTURE_RECTANGLE || target == GL_TEXTURE_BUFFER) && level != 0)
        return call.fail(CL_INVALID_MIP_LEVEL, "rectangle and buffer textures have only level 0");
    bool exists = false, bound = false;
    GLint w = 0, h = 0, d = 0, internal = 0;
    share->run([&] {
        const auto& f = gl::glFunctions();
        while (f.glGetError() != GL_NO_ERROR) {
        }
        if (renderbuffer) {
            exists = f.glIsRenderbuffer(name);
            if (!exists)
                return;
            f.glBindRenderbuffer(GL_RENDERBUFFER, name);
            f.glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_WIDTH, &w);
            f.glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_HEIGHT, &h);
            f.glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_INTERNAL_FORMAT,
                                           &internal);
            f.glBindRenderbuffer(GL_RENDERBUFFER, 0);
            bound = true;
            d = 1;
            return;
        }
        exists = f.glIsTexture(name);
        if (!exists)
            return;
        GLenum bt = bindTarget(target);
        f.glBindTexture(bt, name);
        bound = f.glGetError() == GL_NO_ERROR; // another target's texture fails to bind
        if (bound) {
            f.glGetTexLevelParameteriv(target, level, GL_TEXTURE_WIDTH, &w);
            f.glGetTexLevelParameteriv(target, level, GL_TEXTURE_HEIGHT, &h);
            f.glGetTexLevelParameteriv(target, level, GL_TEXTURE_DEPTH, &d);
            f.glGetTexLevelParameteriv(target, level, GL_TEXTURE_INTERNAL_FORMAT, &internal);
            f.glBindTexture(bt, 0);
        }
        if (f.glGetError() != GL_NO_ERROR)
            w = 0; // level out of range
    });
    std::string what = (renderbuffer ? "renderbuffer " : "texture ") + std::to_string(name);
    if (!exists)
        return call.fail(CL_INVALID_GL_OBJECT, what + " is not a GL " +
                                                   (renderbuffer ? "renderbuffer" : "texture") +
                                                   " object");
    if (!bound)
        return call.fail(CL_INVALID_GL_OBJECT,
                         what + " is not a texture of texture_target " + std::to_string(target));
    if (w <= 0 || h <= 0)
        return call.fail(
            renderbuffer ? CL_INVALID_GL_OBJECT : CL_INVALID_MIP_LEVEL,
            what + (renderbuffer ? " has no storage" : " has no level " + std::to_string(level)));
    auto fmt = gl::formatFromGl(unsigned(internal));
    if (!fmt)
        return call.fail(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, what + ": GL internal format " +
                                                                 std::to_string(internal) +
                                                                 " has no OpenCL image format");
    cl_image_desc desc{};
    desc.image_type = type;
    desc.image_width = size_t(w);
    switch (type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        desc.image_array_size = size_t(h);
        break;
    case CL_MEM_OBJECT_IMAGE2D:
        desc.image_height = size_t(h);
        break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        desc.image_height = size_t(h);
        desc.image_array_size = size_t(d);
        break;
    case CL_MEM_OBJECT_IMAGE3D:
        desc.image_height = size_t(h);
        desc.image_depth = size_t(d);
        break;
    default:
        break;
    }
    cl_int err = CL_SUCCESS;
    cl_mem texels = nullptr; // a texture buffer's image lives in a CL buffer of its own
    if (type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
        texels = clCreateBuffer(context, flags, size_t(w) * fmt->bytesPerTexel, nullptr, &err);
        if (!texels)
            return call.fail(err, what + ": no CL buffer for its texels");
        desc.buffer = texels;
    }
    cl_mem img = fmt->cl.image_channel_order == CL_DEPTH_STENCIL
                     ? createDepthStencil(c, flags, fmt->cl, desc, err)
                     : clCreateImage(context, flags, &fmt->cl, &desc, nullptr, &err);
    if (texels)
        clReleaseMemObject(texels); // the image keeps it
    if (!img)
        return call.fail(
            err == CL_IMAGE_FORMAT_NOT_SUPPORTED ? CL_INVALID_IMAGE_FORMAT_DESCRIPTOR : err,
            what + ": the CL image could not be created (" + std::string(errorName(err)) + ")");
    Mem* m = static_cast<Mem*>(img);
    m->glState.store(Mem::GlState::Released);
    {
        std::lock_guard lock(g_objectsMutex);
        GlObject o{share, renderbuffer ? CL_GL_OBJECT_RENDERBUFFER : objectTypeFor(type), name};
        o.target = target;
        o.level = level;
        o.transferFormat = fmt->transferFormat;
        o.transferType = fmt->transferType;
        g_objects[m] = std::move(o);
    }
    m->addDestructorCallback(&forgetObject, nullptr);
    return call.ok(img);
}

} // namespace

DUET_API cl_mem CL_API_CALL clCreateFromGLTexture(cl_context context, cl_mem_flags flags,
                                                  cl_GLenum target, cl_GLint level,
                                                  cl_GLuint texture, cl_int* errcodeRet) {
    Call call("clCreateFromGLTexture", errcodeRet);
    return guardHandle<_cl_mem>(call, [&] {
        return createFromGlImage(
            call, context, flags, target, level, texture,
            {GL_TEXTURE_1D, GL_TEXTURE_1D_ARRAY, GL_TEXTURE_2D, GL_TEXTURE_2D_ARRAY, GL_TEXTURE_3D,
             GL_TEXTURE_RECTANGLE, GL_TEXTURE_CUBE_MAP_POSITIVE_X, GL_TEXTURE_CUBE_MAP_NEGATIVE_X,
             GL_TEXTURE_CUBE_MAP_POSITIVE_Y, GL_TEXTURE_CUBE_MAP_NEGATIVE_Y,
             GL_TEXTURE_CUBE_MAP_POSITIVE_Z, GL_TEXTURE_CUBE_MAP_NEGATIVE_Z, GL_TEXTURE_BUFFER});
    });
}
DUET_API cl_mem CL_API_CALL clCreateFromGLTexture2D(cl_context context, cl_mem_flags flags,
                                                    cl_GLenum target, cl_GLint level,
                                                    cl_GLuint texture, cl_int* errcodeRet) {
    Call call("clCreateFromGLTexture2D", errcodeRet);
    return guardHandle<_cl_mem>(call, [&] {
        return createFromGlImage(call, context, flags, target, level, texture,
                                 {GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE,
                                  GL_TEXTURE_CUBE_MAP_POSITIVE_X, GL_TEXTURE_CUBE_MAP_NEGATIVE_X,
                                  GL_TEXTURE_CUBE_MAP_POSITIVE_Y, GL_TEXTURE_CUBE_MAP_NEGATIVE_Y,
                                  GL_TEXTURE_CUBE_MAP_POSITIVE_Z, GL_TEXTURE_CUBE_MAP_NEGATIVE_Z});
    });
}
DUET_API cl_mem CL_API_CALL clCreateFromGLTexture3D(cl_context context, cl_mem_flags flags,
                                                    cl_GLenum target, cl_GLint level,
                                                    cl_GLuint texture, cl_int* errcodeRet) {
    Call call("clCreateFromGLTexture3D", errcodeRet);
    return guardHandle<_cl_mem>(call, [&] {
        return createFromGlImage(call, context, flags, target, level, texture, {GL_TEXTURE_3D});
    });
}
DUET_API cl_mem CL_API_CALL clCreateFromGLRenderbuffer(cl_context context, cl_mem_flags flags,
                                                       cl_GLuint renderbuffer, cl_int* errcodeRet) {
    Call call("clCreateFromGLRenderbuffer", errcodeRet);
    return guardHandle<_cl_mem>(
        call, [&] { return createFromGlImage(call, context, flags, 0, 0, renderbuffer, {}); });
}

DUET_API cl_int CL_API_CALL clGetGLTextureInfo(cl_mem memobj, cl_gl_texture_info param, size_t size,
                                               void* value, size_t* sizeRet) {
    return guard("clGetGLTextureInfo", [&]() -> cl_int {
        const char* api = "clGetGLTextureInfo";
        Mem* m = from<Mem>(memobj);
        if (!m)
            return report(api, nullptr, CL_INVALID_MEM_OBJECT, "not a valid memory object");
        GlObject o;
        {
            std::lock_guard lock(g_objectsMutex);
            GlObject* found = findObject(m);
            if (!found || found->type == CL_GL_OBJECT_BUFFER ||
                found->type == CL_GL_OBJECT_RENDERBUFFER)
                return report(api, m->context(), CL_INVALID_GL_OBJECT,
                              "the memory object is not a GL texture");
            o = *found;
        }
        cl_int r;
        switch (param) {
        case CL_GL_TEXTURE_TARGET:
            r = infoValue<cl_GLenum>(size, value, sizeRet, o.target);
            break;
        case CL_GL_MIPMAP_LEVEL:
            r = infoValue<cl_GLint>(size, value, sizeRet, o.level);
            break;
        default:
            return report(api, m->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, m->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

namespace {

/// A GL sync object an event waits for.
struct SyncPoll {
    Ref<Event> event;
    GLsync sync = nullptr;
    gl::Share* share = nullptr;
};

/// Polls on the GL thread without blocking it, so acquires queued behind still run.
void pollSync(std::shared_ptr<SyncPoll> st) {
    st->share->post([st] {
        GLenum r = gl::glFunctions().glClientWaitSync(st->sync, GL_SYNC_FLUSH_COMMANDS_BIT, 0);
        if (r == GL_TIMEOUT_EXPIRED) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            pollSync(st);
            return;
        }
        Ref<Event> e = std::move(st->event);
        e->setStatus(r == GL_WAIT_FAILED ? CL_OUT_OF_RESOURCES : CL_COMPLETE);
        // The last reference may take the context and its GL thread with it: drop it on
        // another thread, never on the GL thread it would join.
        std::thread([e = std::move(e)] {}).detach();
    });
}

} // namespace

DUET_API cl_event CL_API_CALL clCreateEventFromGLsyncKHR(cl_context context, cl_GLsync sync,
                                                         cl_int* errcodeRet) {
    Call call("clCreateEventFromGLsyncKHR", errcodeRet);
    return guardHandle<_cl_event>(call, [&]() -> cl_event {
        Context* c = from<Context>(context);
        if (!c)
            return call.fail(CL_INVALID_CONTEXT, "not a valid context");
        call.setContext(c);
        auto share = gl::shareOf(c);
        if (!share)
            return call.fail(CL_INVALID_CONTEXT, "the context was not created from a GL context");
        bool valid = false;
        auto s = reinterpret_cast<GLsync>(sync);
        share->run([&] { valid = sync && gl::glFunctions().glIsSync(s); });
        if (!valid)
            return call.fail(CL_INVALID_GL_OBJECT, "sync is not a GL sync object of the share "
                                                   "group");
        Event* e = makeObject<Event>(retainRef(c), nullptr, CL_COMMAND_GL_FENCE_SYNC_OBJECT_KHR);
        auto state = std::make_shared<SyncPoll>();
        state->event = retainRef(e);
        state->sync = s;
        state->share = share.get(); // alive while the event (and so its context) is
        pollSync(state);
        return call.ok(e);
    });
}

void* duet::rt::gl::extensionFunction(std::string_view name) {
#define DUET_GL_FN(fn)                                                                             \
    if (name == #fn)                                                                               \
        return reinterpret_cast<void*>(&::fn);
    DUET_GL_FN(clGetGLContextInfoKHR)
    DUET_GL_FN(clCreateFromGLBuffer)
    DUET_GL_FN(clCreateFromGLTexture)
    DUET_GL_FN(clCreateFromGLTexture2D)
    DUET_GL_FN(clCreateFromGLTexture3D)
    DUET_GL_FN(clCreateFromGLRenderbuffer)
    DUET_GL_FN(clGetGLObjectInfo)
    DUET_GL_FN(clGetGLTextureInfo)
    DUET_GL_FN(clEnqueueAcquireGLObjects)
    DUET_GL_FN(clEnqueueReleaseGLObjects)
    DUET_GL_FN(clCreateEventFromGLsyncKHR)
#undef DUET_GL_FN
    return nullptr;
}
