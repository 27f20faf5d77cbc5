// cl_khr_gl_sharing and cl_khr_gl_event entry points: GL context queries, CL objects made
// from GL buffers, acquire/release commands, and events from GL sync objects.
#include "api/api.hpp"
#include "core/device.hpp"
#include "core/event.hpp"
#include "core/memory.hpp"
#include "core/queue.hpp"
#include "gl/gl_functions.hpp"
#include "gl/gl_share.hpp"

#include <CL/cl_gl.h>

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
                              f.glBindBuffer(GL_COPY_READ_BUFFER, o.name);
                              if (acquire && clReads) {
                                  void* p = f.glMapBufferRange(GL_COPY_READ_BUFFER, 0,
                                                               GLsizeiptr(m->size()),
                                                               GL_MAP_READ_BIT);
                                  if (!p) {
                                      status = CL_OUT_OF_RESOURCES;
                                  } else {
                                      std::memcpy(m->data(), p, m->size());
                                      f.glUnmapBuffer(GL_COPY_READ_BUFFER);
                                  }
                              } else if (!acquire && clWrites) {
                                  f.glBufferSubData(GL_COPY_READ_BUFFER, 0, GLsizeiptr(m->size()),
                                                    m->data());
                              }
                              f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
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

// Textures and renderbuffers need images (merged separately); until then they say so.
namespace {
cl_mem noImages(const char* api, cl_context context, cl_int* errcodeRet) {
    Call call(api, errcodeRet);
    Context* c = from<Context>(context);
    if (!c)
        return call.fail(CL_INVALID_CONTEXT, "not a valid context");
    call.setContext(c);
    return call.fail(CL_INVALID_OPERATION, "GL textures and renderbuffers are not supported yet");
}
} // namespace

DUET_API cl_mem CL_API_CALL clCreateFromGLTexture(cl_context context, cl_mem_flags, cl_GLenum,
                                                  cl_GLint, cl_GLuint, cl_int* errcodeRet) {
    return noImages("clCreateFromGLTexture", context, errcodeRet);
}
DUET_API cl_mem CL_API_CALL clCreateFromGLTexture2D(cl_context context, cl_mem_flags, cl_GLenum,
                                                    cl_GLint, cl_GLuint, cl_int* errcodeRet) {
    return noImages("clCreateFromGLTexture2D", context, errcodeRet);
}
DUET_API cl_mem CL_API_CALL clCreateFromGLTexture3D(cl_context context, cl_mem_flags, cl_GLenum,
                                                    cl_GLint, cl_GLuint, cl_int* errcodeRet) {
    return noImages("clCreateFromGLTexture3D", context, errcodeRet);
}
DUET_API cl_mem CL_API_CALL clCreateFromGLRenderbuffer(cl_context context, cl_mem_flags,
                                                       cl_GLuint, cl_int* errcodeRet) {
    return noImages("clCreateFromGLRenderbuffer", context, errcodeRet);
}

DUET_API cl_int CL_API_CALL clGetGLTextureInfo(cl_mem memobj, cl_gl_texture_info, size_t, void*,
                                               size_t*) {
    return guard("clGetGLTextureInfo", [&]() -> cl_int {
        Mem* m = from<Mem>(memobj);
        if (!m)
            return report("clGetGLTextureInfo", nullptr, CL_INVALID_MEM_OBJECT,
                          "not a valid memory object");
        // Only buffers can be shared so far, and a buffer has no texture information.
        return report("clGetGLTextureInfo", m->context(), CL_INVALID_GL_OBJECT,
                      "the memory object is not a GL texture");
    });
}

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
        // Polls on the GL thread without blocking it, so acquires behind it still run.
        Ref<Event> ref = retainRef(e);
        auto poll = std::make_shared<std::function<void()>>();
        *poll = [share, s, ref, poll]() mutable {
            GLenum r = gl::glFunctions().glClientWaitSync(s, GL_SYNC_FLUSH_COMMANDS_BIT, 0);
            if (r == GL_TIMEOUT_EXPIRED) {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                share->post(*poll);
                return;
            }
            ref->setStatus(r == GL_WAIT_FAILED ? CL_OUT_OF_RESOURCES : CL_COMPLETE);
            *poll = nullptr; // breaks the self-reference
        };
        share->post(*poll);
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
