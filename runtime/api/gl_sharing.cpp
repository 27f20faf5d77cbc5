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

/// What a CL memory object made from a GL object remembers.
struct GlObject {
    std::shared_ptr<gl::Share> share;
    cl_gl_object_type type;
    GLuint name;
    bool acquired = false; ///< as of the latest enqueued acquire/release
    GLenum target = 0;     ///< textures: the texture_target given (a cube face, ...)
    GLint level = 0;
    GLenum transferFormat = 0, transferType = 0; ///< textures and renderbuffers
};

std::mutex g_objectsMutex;
std::map<const Mem*, GlObject> g_objects;

void CL_CALLBACK forgetObject(cl_mem mem, void*) {
    std::lock_guard lock(g_objectsMutex);
    g_objects.erase(static_cast<const Mem*>(mem));
}

GlObject* findObject(const Mem* m) {
    auto it = g_objects.find(m);
    return it == g_objects.end() ? nullptr : &it->second;
}

} // namespace

namespace duet::rt::gl {

bool usedWhileNotAcquired(const Mem* mem) {
    std::lock_guard lock(g_objectsMutex);
    for (const Mem* m = mem; m; m = m->parent())
        if (GlObject* o = findObject(m); o && !o->acquired)
            return true;
    return false;
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
        case CL_DEVICES_FOR_GL_CONTEXT_KHR: break;
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
        // A host copy filled at acquire and written back at release (only in the directions
        // the flags allow).
        char* storage = allocateStorage(size_t(size));
        if (!storage)
            return call.fail(CL_OUT_OF_HOST_MEMORY, "could not allocate the buffer's host copy");
        Mem* m = makeObject<Mem>(retainRef(c), CL_MEM_OBJECT_BUFFER, flags, size_t(size), nullptr,
                                 storage, true);
        {
            std::lock_guard lock(g_objectsMutex);
            g_objects[m] = GlObject{share, CL_GL_OBJECT_BUFFER, bufobj};
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

/// A framebuffer reading renderbuffer `rb` (on the GL thread).
GLuint readFramebuffer(const gl::GlFunctions& f, GLuint rb, GLenum format) {
    GLuint fbo = 0;
    f.glGenFramebuffers(1, &fbo);
    f.glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
    GLenum attach = format == GL_DEPTH_STENCIL     ? GL_DEPTH_STENCIL_ATTACHMENT
                    : format == GL_DEPTH_COMPONENT ? GL_DEPTH_ATTACHMENT
                                                   : GL_COLOR_ATTACHMENT0;
    f.glFramebufferRenderbuffer(GL_READ_FRAMEBUFFER, attach, GL_RENDERBUFFER, rb);
    return fbo;
}

/// GL -> CL copy at acquire (GL thread).
cl_int copyFromGl(Mem& m, const GlObject& o) {
    const auto& f = gl::glFunctions();
    if (o.type == CL_GL_OBJECT_BUFFER) {
        f.glBindBuffer(GL_COPY_READ_BUFFER, o.name);
        void* p = f.glMapBufferRange(GL_COPY_READ_BUFFER, 0, GLsizeiptr(m.size()),
                                     GL_MAP_READ_BIT);
        if (p) {
            std::memcpy(m.data(), p, m.size());
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
    std::vector<unsigned char> packed(packedSize(m));
    packedToImage(m, packed, false, &packed);
    f.glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    GLsizei w = GLsizei(m.desc.image_width);
    GLsizei h = GLsizei(std::max<size_t>(1, m.desc.image_height));
    if (o.type == CL_GL_OBJECT_RENDERBUFFER) {
        // Through a scratch texture of the same format, blitted into the renderbuffer.
        GLint internal = 0;
        f.glBindRenderbuffer(GL_RENDERBUFFER, o.name);
        f.glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_INTERNAL_FORMAT,
                                       &internal);
        f.glBindRenderbuffer(GL_RENDERBUFFER, 0);
        GLuint tex = 0, fbos[2] = {0, 0};
        f.glGenTextures(1, &tex);
        f.glBindTexture(GL_TEXTURE_2D, tex);
        f.glTexImage2D(GL_TEXTURE_2D, 0, internal, w, h, 0, o.transferFormat, o.transferType,
                       packed.data());
        f.glBindTexture(GL_TEXTURE_2D, 0);
        bool depth = isDepth(o.transferFormat);
        GLenum attach = o.transferFormat == GL_DEPTH_STENCIL ? GL_DEPTH_STENCIL_ATTACHMENT
                        : depth                             ? GL_DEPTH_ATTACHMENT
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
        f.glTexSubImage1D(o.target, o.level, 0, w, o.transferFormat, o.transferType,
                          packed.data());
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
                          "mem_objects[" + std::to_string(i) + "] was not created from a GL "
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
        if (GlObject* live = findObject(m.get()))
            live->acquired = acquired;
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
    cl_event own = nullptr;
    cl_int r = submit(q, type, numEvents, waitList, (event || waitHere) ? &own : nullptr, false,
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
                          for (auto& [m, o] : objects) {
                              bool clReads = !(m->flags() & CL_MEM_WRITE_ONLY);
                              bool clWrites = !(m->flags() & CL_MEM_READ_ONLY);
                              if (acquire && clReads)
                                  status = std::min(status, copyFromGl(*m, o));
                              else if (!acquire && clWrites)
                                  copyToGl(*m, o);
                          }
                          // Release: GL commands after the release event see CL's writes.
                          if (!acquire)
                              f.glFinish();
                      });
                      return status;
                  });
    if (r != CL_SUCCESS || !own)
        return r;
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
    case GL_TEXTURE_1D: return CL_MEM_OBJECT_IMAGE1D;
    case GL_TEXTURE_1D_ARRAY: return CL_MEM_OBJECT_IMAGE1D_ARRAY;
    case GL_TEXTURE_2D:
    case GL_TEXTURE_RECTANGLE:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_X:
    case GL_TEXTURE_CUBE_MAP_NEGATIVE_X:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_Y:
    case GL_TEXTURE_CUBE_MAP_NEGATIVE_Y:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_Z:
    case GL_TEXTURE_CUBE_MAP_NEGATIVE_Z: return CL_MEM_OBJECT_IMAGE2D;
    case GL_TEXTURE_2D_ARRAY: return CL_MEM_OBJECT_IMAGE2D_ARRAY;
    case GL_TEXTURE_3D: return CL_MEM_OBJECT_IMAGE3D;
    default: return 0;
    }
}

cl_gl_object_type objectTypeFor(cl_mem_object_type t) {
    switch (t) {
    case CL_MEM_OBJECT_IMAGE1D: return CL_GL_OBJECT_TEXTURE1D;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: return CL_GL_OBJECT_TEXTURE1D_ARRAY;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: return CL_GL_OBJECT_TEXTURE2D_ARRAY;
    case CL_MEM_OBJECT_IMAGE3D: return CL_GL_OBJECT_TEXTURE3D;
    default: return CL_GL_OBJECT_TEXTURE2D;
    }
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
    if (target == GL_TEXTURE_RECTANGLE && level != 0)
        return call.fail(CL_INVALID_MIP_LEVEL, "rectangle textures have only level 0");
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
        return call.fail(CL_INVALID_GL_OBJECT, what + " is not a texture of texture_target " +
                                                   std::to_string(target));
    if (w <= 0 || h <= 0)
        return call.fail(renderbuffer ? CL_INVALID_GL_OBJECT : CL_INVALID_MIP_LEVEL,
                         what + (renderbuffer ? " has no storage" : " has no level " +
                                                                       std::to_string(level)));
    auto fmt = gl::formatFromGl(unsigned(internal));
    if (!fmt)
        return call.fail(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
                         what + ": GL internal format " + std::to_string(internal) +
                             " has no OpenCL image format");
    cl_image_desc desc{};
    desc.image_type = type;
    desc.image_width = size_t(w);
    switch (type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: desc.image_array_size = size_t(h); break;
    case CL_MEM_OBJECT_IMAGE2D: desc.image_height = size_t(h); break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        desc.image_height = size_t(h);
        desc.image_array_size = size_t(d);
        break;
    case CL_MEM_OBJECT_IMAGE3D:
        desc.image_height = size_t(h);
        desc.image_depth = size_t(d);
        break;
    default: break;
    }
    cl_int err = CL_SUCCESS;
    cl_mem img = clCreateImage(context, flags, &fmt->cl, &desc, nullptr, &err);
    if (!img)
        return call.fail(err == CL_IMAGE_FORMAT_NOT_SUPPORTED ? CL_INVALID_IMAGE_FORMAT_DESCRIPTOR
                                                               : err,
                         what + ": the CL image could not be created (" +
                             std::string(errorName(err)) + ")");
    Mem* m = static_cast<Mem*>(img);
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
            {GL_TEXTURE_1D, GL_TEXTURE_1D_ARRAY, GL_TEXTURE_2D, GL_TEXTURE_2D_ARRAY,
             GL_TEXTURE_3D, GL_TEXTURE_RECTANGLE, GL_TEXTURE_CUBE_MAP_POSITIVE_X,
             GL_TEXTURE_CUBE_MAP_NEGATIVE_X, GL_TEXTURE_CUBE_MAP_POSITIVE_Y,
             GL_TEXTURE_CUBE_MAP_NEGATIVE_Y, GL_TEXTURE_CUBE_MAP_POSITIVE_Z,
             GL_TEXTURE_CUBE_MAP_NEGATIVE_Z});
    });
}
DUET_API cl_mem CL_API_CALL clCreateFromGLTexture2D(cl_context context, cl_mem_flags flags,
                                                    cl_GLenum target, cl_GLint level,
                                                    cl_GLuint texture, cl_int* errcodeRet) {
    Call call("clCreateFromGLTexture2D", errcodeRet);
    return guardHandle<_cl_mem>(call, [&] {
        return createFromGlImage(
            call, context, flags, target, level, texture,
            {GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE, GL_TEXTURE_CUBE_MAP_POSITIVE_X,
             GL_TEXTURE_CUBE_MAP_NEGATIVE_X, GL_TEXTURE_CUBE_MAP_POSITIVE_Y,
             GL_TEXTURE_CUBE_MAP_NEGATIVE_Y, GL_TEXTURE_CUBE_MAP_POSITIVE_Z,
             GL_TEXTURE_CUBE_MAP_NEGATIVE_Z});
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
                                                       cl_GLuint renderbuffer,
                                                       cl_int* errcodeRet) {
    Call call("clCreateFromGLRenderbuffer", errcodeRet);
    return guardHandle<_cl_mem>(call, [&] {
        return createFromGlImage(call, context, flags, 0, 0, renderbuffer, {});
    });
}

DUET_API cl_int CL_API_CALL clGetGLTextureInfo(cl_mem memobj, cl_gl_texture_info param,
                                               size_t size, void* value, size_t* sizeRet) {
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
        case CL_GL_TEXTURE_TARGET: r = infoValue<cl_GLenum>(size, value, sizeRet, o.target); break;
        case CL_GL_MIPMAP_LEVEL: r = infoValue<cl_GLint>(size, value, sizeRet, o.level); break;
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
