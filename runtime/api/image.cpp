// Image and sampler entry points. No device supports images yet (CL_DEVICE_IMAGE_SUPPORT is
// CL_FALSE), so creation fails with the spec's CL_INVALID_OPERATION.
#include "api/api.hpp"
#include "core/memory.hpp"
#include "core/queue.hpp"

using namespace duet::api;

namespace {

bool contextHasImages(const Context* c) {
    for (const Device* d : c->devices())
        if (d->info().imageSupport)
            return true;
    return false;
}

std::nullptr_t noImages(Call& call, cl_context context) {
    Context* c = from<Context>(context);
    if (!c)
        return call.fail(CL_INVALID_CONTEXT, "not a valid context");
    call.setContext(c);
    return call.fail(CL_INVALID_OPERATION,
                     "no device in the context supports images (CL_DEVICE_IMAGE_SUPPORT is "
                     "CL_FALSE)");
}

cl_int noImageObject(const char* api, cl_command_queue queue) {
    Queue* q = from<Queue>(queue);
    if (!q)
        return report(api, nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
    return report(api, q->context(), CL_INVALID_MEM_OBJECT, "not a valid image object");
}

} // namespace

DUET_API cl_mem CL_API_CALL clCreateImage(cl_context context, cl_mem_flags, const cl_image_format*,
                                          const cl_image_desc*, void*, cl_int* errcodeRet) {
    Call call("clCreateImage", errcodeRet);
    return noImages(call, context);
}

DUET_API cl_mem CL_API_CALL clCreateImageWithProperties(cl_context context,
                                                        const cl_mem_properties*, cl_mem_flags,
                                                        const cl_image_format*,
                                                        const cl_image_desc*, void*,
                                                        cl_int* errcodeRet) {
    Call call("clCreateImageWithProperties", errcodeRet);
    return noImages(call, context);
}

DUET_API cl_mem CL_API_CALL clCreateImage2D(cl_context context, cl_mem_flags,
                                            const cl_image_format*, size_t, size_t, size_t,
                                            void*, cl_int* errcodeRet) {
    Call call("clCreateImage2D", errcodeRet);
    return noImages(call, context);
}

DUET_API cl_mem CL_API_CALL clCreateImage3D(cl_context context, cl_mem_flags,
                                            const cl_image_format*, size_t, size_t, size_t,
                                            size_t, size_t, void*, cl_int* errcodeRet) {
    Call call("clCreateImage3D", errcodeRet);
    return noImages(call, context);
}

DUET_API cl_int CL_API_CALL clGetSupportedImageFormats(cl_context context, cl_mem_flags flags,
                                                       cl_mem_object_type type, cl_uint num,
                                                       cl_image_format* formats,
                                                       cl_uint* numRet) {
    Context* c = from<Context>(context);
    if (!c)
        return report("clGetSupportedImageFormats", nullptr, CL_INVALID_CONTEXT,
                      "not a valid context");
    (void)flags;
    (void)type;
    if (num == 0 && formats)
        return report("clGetSupportedImageFormats", c, CL_INVALID_VALUE,
                      "num_entries is 0 and image_formats is not NULL");
    if (numRet)
        *numRet = contextHasImages(c) ? 0 : 0; // no device supports images: no formats
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clGetImageInfo(cl_mem image, cl_image_info, size_t, void*, size_t*) {
    Mem* m = from<Mem>(image);
    return report("clGetImageInfo", m ? m->context() : nullptr, CL_INVALID_MEM_OBJECT,
                  "not a valid image object");
}

DUET_API cl_int CL_API_CALL clEnqueueReadImage(cl_command_queue queue, cl_mem, cl_bool,
                                               const size_t*, const size_t*, size_t, size_t,
                                               void*, cl_uint, const cl_event*, cl_event*) {
    return noImageObject("clEnqueueReadImage", queue);
}

DUET_API cl_int CL_API_CALL clEnqueueWriteImage(cl_command_queue queue, cl_mem, cl_bool,
                                                const size_t*, const size_t*, size_t, size_t,
                                                const void*, cl_uint, const cl_event*,
                                                cl_event*) {
    return noImageObject("clEnqueueWriteImage", queue);
}

DUET_API cl_int CL_API_CALL clEnqueueCopyImage(cl_command_queue queue, cl_mem, cl_mem,
                                               const size_t*, const size_t*, const size_t*,
                                               cl_uint, const cl_event*, cl_event*) {
    return noImageObject("clEnqueueCopyImage", queue);
}

DUET_API cl_int CL_API_CALL clEnqueueFillImage(cl_command_queue queue, cl_mem, const void*,
                                               const size_t*, const size_t*, cl_uint,
                                               const cl_event*, cl_event*) {
    return noImageObject("clEnqueueFillImage", queue);
}

DUET_API cl_int CL_API_CALL clEnqueueCopyImageToBuffer(cl_command_queue queue, cl_mem, cl_mem,
                                                       const size_t*, const size_t*, size_t,
                                                       cl_uint, const cl_event*, cl_event*) {
    return noImageObject("clEnqueueCopyImageToBuffer", queue);
}

DUET_API cl_int CL_API_CALL clEnqueueCopyBufferToImage(cl_command_queue queue, cl_mem, cl_mem,
                                                       size_t, const size_t*, const size_t*,
                                                       cl_uint, const cl_event*, cl_event*) {
    return noImageObject("clEnqueueCopyBufferToImage", queue);
}

DUET_API void* CL_API_CALL clEnqueueMapImage(cl_command_queue queue, cl_mem, cl_bool,
                                             cl_map_flags, const size_t*, const size_t*,
                                             size_t*, size_t*, cl_uint, const cl_event*,
                                             cl_event*, cl_int* errcodeRet) {
    cl_int e = noImageObject("clEnqueueMapImage", queue);
    if (errcodeRet)
        *errcodeRet = e;
    return nullptr;
}

DUET_API cl_sampler CL_API_CALL clCreateSampler(cl_context context, cl_bool, cl_addressing_mode,
                                                cl_filter_mode, cl_int* errcodeRet) {
    Call call("clCreateSampler", errcodeRet);
    return noImages(call, context);
}

DUET_API cl_sampler CL_API_CALL clCreateSamplerWithProperties(cl_context context,
                                                              const cl_sampler_properties*,
                                                              cl_int* errcodeRet) {
    Call call("clCreateSamplerWithProperties", errcodeRet);
    return noImages(call, context);
}

DUET_API cl_int CL_API_CALL clRetainSampler(cl_sampler sampler) {
    Sampler* s = from<Sampler>(sampler);
    if (!s)
        return report("clRetainSampler", nullptr, CL_INVALID_SAMPLER, "not a valid sampler");
    s->retain();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clReleaseSampler(cl_sampler sampler) {
    Sampler* s = from<Sampler>(sampler);
    if (!s)
        return report("clReleaseSampler", nullptr, CL_INVALID_SAMPLER, "not a valid sampler");
    s->release();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clGetSamplerInfo(cl_sampler sampler, cl_sampler_info param,
                                             size_t size, void* value, size_t* sizeRet) {
    return guard("clGetSamplerInfo", [&]() -> cl_int {
        const char* api = "clGetSamplerInfo";
        Sampler* s = from<Sampler>(sampler);
        if (!s)
            return report(api, nullptr, CL_INVALID_SAMPLER, "not a valid sampler");
        cl_int r;
        switch (param) {
        case CL_SAMPLER_REFERENCE_COUNT:
            r = infoValue<cl_uint>(size, value, sizeRet, s->refCount.load());
            break;
        case CL_SAMPLER_CONTEXT:
            r = infoValue<cl_context>(size, value, sizeRet, s->context());
            break;
        case CL_SAMPLER_NORMALIZED_COORDS:
            r = infoValue<cl_bool>(size, value, sizeRet, s->normalizedCoords);
            break;
        case CL_SAMPLER_ADDRESSING_MODE:
            r = infoValue<cl_addressing_mode>(size, value, sizeRet, s->addressingMode);
            break;
        case CL_SAMPLER_FILTER_MODE:
            r = infoValue<cl_filter_mode>(size, value, sizeRet, s->filterMode);
            break;
        case CL_SAMPLER_PROPERTIES:
            r = infoVector(size, value, sizeRet, s->properties);
            break;
        default:
            return report(api, s->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, s->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}
