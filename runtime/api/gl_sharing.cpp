// cl_khr_gl_sharing and cl_khr_gl_event entry points: argument checks in the spec's order, then
// runtime/gl (GL objects, acquire/release, GL sync events) or core does the work.
#include "api/api.hpp"
#include "core/device.hpp"
#include "core/event.hpp"
#include "core/memory.hpp"
#include "core/queue.hpp"
#include "gl/gl_object.hpp"
#include "gl/gl_share.hpp"

#include <CL/cl_gl.h>
#include <GL/glcorearb.h>

#include <algorithm>
#include <initializer_list>
#include <span>

using namespace duet::api;
namespace gl = duet::rt::gl;

DUET_API cl_int CL_API_CALL clGetGLContextInfoKHR(const cl_context_properties* properties,
                                                  cl_gl_context_info param, size_t size,
                                                  void* value, size_t* sizeRet) {
    return guard("clGetGLContextInfoKHR", [&]() -> cl_int {
        const char* api = "clGetGLContextInfoKHR";
        for (const cl_context_properties* p = properties; p && *p; p += 2) {
            // CL_INVALID_PLATFORM: CL_CONTEXT_PLATFORM names no Duet platform.
            if (p[0] == CL_CONTEXT_PLATFORM) {
                if (!from<Platform>(reinterpret_cast<cl_platform_id>(p[1])))
                    return report(api, nullptr, CL_INVALID_PLATFORM,
                                  "CL_CONTEXT_PLATFORM is not a Duet platform");
            } else if (!gl::isGlProperty(p[0]) && p[0] != CL_CONTEXT_INTEROP_USER_SYNC) {
                // CL_INVALID_PROPERTY: a property name this call does not know.
                return report(api, nullptr, CL_INVALID_PROPERTY,
                              "unsupported property " + std::to_string(p[0]));
            }
        }
        // CL_INVALID_OPERATION / CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR: conflicting or
        // unsupported window-system bindings, a GL context that is not one.
        auto props = gl::parseProperties(properties);
        if (!props)
            return report(api, nullptr, props.error().code, props.error().message);
        // CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR: no GL context given.
        if (!props->sharing())
            return report(api, nullptr, CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                          "no CL_GL_CONTEXT_KHR in properties");
        // The devices that run the GL context and reach its objects themselves (CUDA-GL on
        // the NVIDIA device that runs an NVIDIA GL context) first, then those that share
        // through host copies or mappings (every other device with cl_khr_gl_sharing); not
        // those that cannot share with it (a GPU other than the GL context's: the reason goes
        // to DUET_LOG).
        std::vector<Device*> available;
        for (Device* d : Platform::get().devices())
            if (d->info().available)
                available.push_back(d);
        std::vector<cl_device_id> devices, copying;
        for (auto& [d, affinity] : gl::matchDevices(*props, available)) {
            if (affinity.kind == duet::rt::GlAffinity::Kind::Interop)
                devices.push_back(d);
            else if (affinity.kind == duet::rt::GlAffinity::Kind::Copies)
                copying.push_back(d);
        }
        devices.insert(devices.end(), copying.begin(), copying.end());
        switch (param) {
        case CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR:
            if (devices.size() > 1)
                devices.resize(1);
            break;
        case CL_DEVICES_FOR_GL_CONTEXT_KHR:
            break;
        default:
            // CL_INVALID_VALUE: param_name is not one of the two queries.
            return report(api, nullptr, CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        // CL_INVALID_VALUE: param_value_size is smaller than the answer.
        if (infoVector(size, value, sizeRet, devices) != CL_SUCCESS)
            return report(api, nullptr, CL_INVALID_VALUE,
                          "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

namespace {

/// The GL share of a context handle; null with the call failed (CL_INVALID_CONTEXT).
std::shared_ptr<gl::Share> checkGlContext(Call& call, cl_context context, Context*& c) {
    // CL_INVALID_CONTEXT: not a valid context.
    c = from<Context>(context);
    if (!c) {
        call.fail(CL_INVALID_CONTEXT, "not a valid context");
        return nullptr;
    }
    call.setContext(c);
    // CL_INVALID_CONTEXT: the context was not created from a GL context.
    auto share = gl::shareOf(c);
    if (!share)
        call.fail(CL_INVALID_CONTEXT, "the context was not created from a GL context");
    return share;
}

/// CL_INVALID_VALUE unless `flags` is exactly one of the three access flags.
bool checkGlFlags(Call& call, cl_mem_flags flags) {
    if (flags == CL_MEM_READ_ONLY || flags == CL_MEM_WRITE_ONLY || flags == CL_MEM_READ_WRITE)
        return true;
    call.fail(CL_INVALID_VALUE, "flags must be exactly one of CL_MEM_READ_WRITE, "
                                "CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY");
    return false;
}

} // namespace

namespace {

/// clCreateFromGLBuffer and clCreateFromGLBufferInDeviceMemoryDUET: the same checks, then `make`.
using MakeGlBuffer = duet::rt::Result<Mem*> (*)(Context&, std::shared_ptr<gl::Share>, cl_mem_flags,
                                                unsigned);
cl_mem createFromGlBuffer(const char* api, cl_context context, cl_mem_flags flags, cl_GLuint bufobj,
                          cl_int* errcodeRet, MakeGlBuffer make) {
    Call call(api, errcodeRet);
    return guardHandle<_cl_mem>(call, [&]() -> cl_mem {
        Context* c = nullptr;
        auto share = checkGlContext(call, context, c);
        if (!share)
            return nullptr;
        if (!checkGlFlags(call, flags))
            return nullptr;
        auto made = make(*c, std::move(share), flags, bufobj);
        if (!made)
            return call.fail(made.error());
        return call.ok(*made);
    });
}

} // namespace

DUET_API cl_mem CL_API_CALL clCreateFromGLBuffer(cl_context context, cl_mem_flags flags,
                                                 cl_GLuint bufobj, cl_int* errcodeRet) {
    // CL_INVALID_GL_OBJECT: bufobj is not a GL buffer object or has no data store (asked on the
    // GL thread); CL_OUT_OF_HOST_MEMORY.
    return createFromGlBuffer("clCreateFromGLBuffer", context, flags, bufobj, errcodeRet,
                              &gl::createFromBuffer);
}

// cl_duet_gl_device_memory (declared for applications in the interop library's
// <duet/interop/cl_ext_duet.h>; found with clGetExtensionFunctionAddressForPlatform).
DUET_API cl_mem CL_API_CALL clCreateFromGLBufferInDeviceMemoryDUET(cl_context context,
                                                                   cl_mem_flags flags,
                                                                   cl_GLuint bufobj,
                                                                   cl_int* errcodeRet) {
    // CL_INVALID_GL_OBJECT: bufobj is not a GL buffer object, has no data store or has
    // immutable storage; CL_INVALID_OPERATION: no device of the context can hold the store, GL
    // imports none of its memory, or the GL context is not current here.
    return createFromGlBuffer("clCreateFromGLBufferInDeviceMemoryDUET", context, flags, bufobj,
                              errcodeRet, &gl::createFromBufferInDeviceMemory);
}

DUET_API cl_int CL_API_CALL clGetGLObjectInfo(cl_mem memobj, cl_gl_object_type* type,
                                              cl_GLuint* name) {
    return guard("clGetGLObjectInfo", [&]() -> cl_int {
        const char* api = "clGetGLObjectInfo";
        // CL_INVALID_MEM_OBJECT: not a valid memory object.
        Mem* m = from<Mem>(memobj);
        if (!m)
            return report(api, nullptr, CL_INVALID_MEM_OBJECT, "not a valid memory object");
        // CL_INVALID_GL_OBJECT: no GL object is associated with memobj.
        const gl::GlObject* o = gl::glObjectOf(*m);
        if (!o)
            return report(api, m->context(), CL_INVALID_GL_OBJECT,
                          "the memory object was not created from a GL object");
        if (type)
            *type = o->type;
        if (name)
            *name = o->name;
        return CL_SUCCESS;
    });
}

namespace {

/// The CL image for `tex`: through clCreateImage, so that its checks (the devices' image size
/// limits, supported formats) apply as to any image, or gl::createDepthStencilImage for the
/// CL_DEPTH_STENCIL images clCreateImage refuses. Null with the call failed.
Mem* makeClImage(Call& call, Context& c, cl_mem_flags flags, const gl::GlImage& tex) {
    cl_image_desc desc = tex.desc;
    cl_int err = CL_SUCCESS;
    cl_mem texels = nullptr; // a texture buffer's image lives in a CL buffer of its own
    if (desc.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
        texels = clCreateBuffer(&c, flags, desc.image_width * tex.bytesPerTexel, nullptr, &err);
        if (!texels)
            return call.fail(err, tex.what + ": no CL buffer for its texels");
        desc.buffer = texels;
    }
    cl_mem img = nullptr;
    if (tex.format.image_channel_order == CL_DEPTH_STENCIL) {
        auto made = gl::createDepthStencilImage(c, flags, tex.format, desc);
        img = made ? *made : nullptr;
        err = made ? CL_SUCCESS : made.error().code;
    } else {
        img = clCreateImage(&c, flags, &tex.format, &desc, nullptr, &err);
    }
    if (texels)
        clReleaseMemObject(texels); // the image keeps it
    if (!img)
        return call.fail(
            err == CL_IMAGE_FORMAT_NOT_SUPPORTED ? CL_INVALID_IMAGE_FORMAT_DESCRIPTOR : err,
            tex.what + ": the CL image could not be created (" + std::string(errorName(err)) + ")");
    return static_cast<Mem*>(img);
}

/// clCreateFromGLTexture* and clCreateFromGLRenderbuffer: `target` 0 means a renderbuffer.
cl_mem createFromGlImage(Call& call, cl_context context, cl_mem_flags flags, cl_GLenum target,
                         cl_GLint level, cl_GLuint name, std::initializer_list<cl_GLenum> allowed) {
    Context* c = nullptr;
    auto share = checkGlContext(call, context, c);
    if (!share)
        return nullptr;
    if (!checkGlFlags(call, flags))
        return nullptr;
    const bool renderbuffer = target == 0;
    // CL_INVALID_VALUE: texture_target is not one this call shares.
    if (!renderbuffer && (!gl::imageTypeFor(target) ||
                          std::find(allowed.begin(), allowed.end(), target) == allowed.end()))
        return call.fail(CL_INVALID_VALUE, "texture_target " + std::to_string(target) +
                                               " cannot be shared by this call");
    // CL_INVALID_MIP_LEVEL: miplevel is negative, or not 0 where the target has one level.
    if (level < 0)
        return call.fail(CL_INVALID_MIP_LEVEL, "miplevel is negative");
    if ((target == GL_TEXTURE_RECTANGLE || target == GL_TEXTURE_BUFFER) && level != 0)
        return call.fail(CL_INVALID_MIP_LEVEL, "rectangle and buffer textures have only level 0");
    // CL_INVALID_GL_OBJECT (no such texture of texture_target, or renderbuffer),
    // CL_INVALID_MIP_LEVEL (no such level), CL_INVALID_IMAGE_FORMAT_DESCRIPTOR (an internal
    // format CL cannot share): asked on the GL thread.
    auto tex = gl::describeImage(*share, target, level, name);
    if (!tex)
        return call.fail(tex.error());
    Mem* m = makeClImage(call, *c, flags, *tex);
    if (!m)
        return nullptr;
    gl::shareImage(*m, std::move(share), *tex);
    return call.ok(m);
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
        // CL_INVALID_MEM_OBJECT: not a valid memory object.
        Mem* m = from<Mem>(memobj);
        if (!m)
            return report(api, nullptr, CL_INVALID_MEM_OBJECT, "not a valid memory object");
        // CL_INVALID_GL_OBJECT: no GL texture is associated with memobj.
        const gl::GlObject* o = gl::glObjectOf(*m);
        if (!o || o->type == CL_GL_OBJECT_BUFFER || o->type == CL_GL_OBJECT_RENDERBUFFER)
            return report(api, m->context(), CL_INVALID_GL_OBJECT,
                          "the memory object is not a GL texture");
        cl_int r;
        switch (param) {
        case CL_GL_TEXTURE_TARGET:
            r = infoValue<cl_GLenum>(size, value, sizeRet, o->target);
            break;
        case CL_GL_MIPMAP_LEVEL:
            r = infoValue<cl_GLint>(size, value, sizeRet, o->level);
            break;
        default:
            // CL_INVALID_VALUE: param_name is not a texture query.
            return report(api, m->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        // CL_INVALID_VALUE: param_value_size is smaller than the answer.
        if (r != CL_SUCCESS)
            return report(api, m->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

namespace {

/// clEnqueueAcquireGLObjects and clEnqueueReleaseGLObjects.
cl_int enqueueGlObjects(const char* api, cl_command_queue queue, cl_uint num, const cl_mem* mems,
                        cl_uint numEvents, const cl_event* waitList, cl_event* event,
                        bool acquire) {
    // CL_INVALID_COMMAND_QUEUE: not a valid command queue.
    Queue* q = hostQueue(queue);
    if (!q)
        return report(api, nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
    Context* ctx = q->context();
    // CL_INVALID_VALUE: num_objects is 0 and mem_objects is not NULL, or the other way round.
    if ((num == 0) != (mems == nullptr))
        return report(api, ctx, CL_INVALID_VALUE, "num_objects and mem_objects disagree");
    // CL_INVALID_MEM_OBJECT: an entry of mem_objects is not a valid memory object.
    std::vector<Mem*> objects(num);
    for (cl_uint i = 0; i < num; ++i)
        if (!(objects[i] = from<Mem>(mems[i])))
            return report(api, ctx, CL_INVALID_MEM_OBJECT,
                          "mem_objects[" + std::to_string(i) + "] is not a valid memory object");
    // CL_INVALID_CONTEXT: the queue's context was not created from a GL context.
    auto share = gl::shareOf(ctx);
    if (!share)
        return report(api, ctx, CL_INVALID_CONTEXT,
                      "the queue's context was not created from a GL context");
    for (cl_uint i = 0; i < num; ++i) {
        const std::string which = "mem_objects[" + std::to_string(i) + "]";
        // CL_INVALID_CONTEXT: an object belongs to another context.
        if (objects[i]->context() != ctx)
            return report(api, ctx, CL_INVALID_CONTEXT, which + " is of another context");
        // CL_INVALID_GL_OBJECT: an object was not created from a GL object.
        if (!gl::glObjectOf(*objects[i]))
            return report(api, ctx, CL_INVALID_GL_OBJECT,
                          which + " was not created from a GL object");
        // CL_INVALID_OPERATION: acquiring an acquired object, releasing one not acquired (as
        // of the latest enqueued acquire or release).
        bool acquired = objects[i]->glState.load() == Mem::GlState::Acquired;
        if (acquired == acquire)
            return report(api, ctx, CL_INVALID_OPERATION,
                          which + " is " + (acquire ? "already acquired" : "not acquired"));
    }
    // CL_INVALID_EVENT_WAIT_LIST: event_wait_list and num_events disagree, or a bad event.
    if (cl_int e = checkWaitList(api, ctx, numEvents, waitList))
        return e;
    std::span<Event* const> waits(reinterpret_cast<Event* const*>(waitList), numEvents);
    Ref<Event> done =
        acquire ? gl::enqueueAcquire(*q, std::move(share), objects, waits, event != nullptr)
                : gl::enqueueRelease(*q, std::move(share), objects, waits, event != nullptr);
    if (event)
        *event = done.detach();
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

DUET_API cl_event CL_API_CALL clCreateEventFromGLsyncKHR(cl_context context, cl_GLsync sync,
                                                         cl_int* errcodeRet) {
    Call call("clCreateEventFromGLsyncKHR", errcodeRet);
    return guardHandle<_cl_event>(call, [&]() -> cl_event {
        Context* c = nullptr;
        auto share = checkGlContext(call, context, c);
        if (!share)
            return nullptr;
        // CL_INVALID_GL_OBJECT: sync is not a GL sync object of the share group (asked on the
        // GL thread).
        auto made = gl::createEventFromSync(*c, std::move(share), sync);
        if (!made)
            return call.fail(made.error());
        return call.ok(*made);
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
    DUET_GL_FN(clCreateFromGLBufferInDeviceMemoryDUET)
#undef DUET_GL_FN
    return nullptr;
}
