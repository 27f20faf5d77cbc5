// Image and sampler entry points: creation (clCreateImage*, from buffers), info, supported
// formats, read/write/copy/fill/map of images and image<->buffer copies, samplers.
#include "core/image.hpp"
#include "api/api.hpp"
#include "core/memory.hpp"
#include "core/queue.hpp"
#include "gl/gl_share.hpp"

#include <algorithm>
#include <cstdio>

using namespace duet::api;

namespace {

bool isImageType(cl_mem_object_type t) {
    return t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
           t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D ||
           t == CL_MEM_OBJECT_IMAGE2D_ARRAY || t == CL_MEM_OBJECT_IMAGE3D;
}

bool isArray(cl_mem_object_type t) {
    return t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY;
}

bool is1D(cl_mem_object_type t) {
    return t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
           t == CL_MEM_OBJECT_IMAGE1D_ARRAY;
}

/// Limits of the context's image-capable devices (the smallest of each).
struct ImageLimits {
    bool any = false;
    size_t w2 = SIZE_MAX, h2 = SIZE_MAX, w3 = SIZE_MAX, h3 = SIZE_MAX, d3 = SIZE_MAX,
           buf = SIZE_MAX, arr = SIZE_MAX;
    cl_ulong maxAlloc = ~cl_ulong(0);
};

ImageLimits limitsOf(const Context* c) {
    ImageLimits l;
    for (const Device* d : c->devices()) {
        const DeviceInfo& i = d->info();
        if (!i.imageSupport)
            continue;
        l.any = true;
        l.w2 = std::min(l.w2, i.image2dMaxWidth);
        l.h2 = std::min(l.h2, i.image2dMaxHeight);
        l.w3 = std::min(l.w3, i.image3dMaxWidth);
        l.h3 = std::min(l.h3, i.image3dMaxHeight);
        l.d3 = std::min(l.d3, i.image3dMaxDepth);
        l.buf = std::min(l.buf, i.imageMaxBufferSize);
        l.arr = std::min(l.arr, i.imageMaxArraySize);
        l.maxAlloc = std::min(l.maxAlloc, i.maxMemAllocSize);
    }
    return l;
}

// clCreateImage's checks, one helper per error code group, in the spec's order.

// CL_INVALID_IMAGE_FORMAT_DESCRIPTOR: format NULL or not a combination the spec defines.
Status checkFormat(const cl_image_format* format) {
    if (!format)
        return makeError(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "image_format is NULL");
    if (!isValidFormat(*format))
        return makeError(
            CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "image_format (order 0x" + [&] {
                char b[64];
                std::snprintf(b, sizeof b, "%x, type 0x%x", format->image_channel_order,
                              format->image_channel_data_type);
                return std::string(b);
            }() + ") is not a valid channel order/type combination");
    return Status::success();
}

/// An image descriptor that passed the checks: the sizes of the dimensions its type has (1
/// for the others) and the pitches of the application's data (tight where it gave none).
struct ImageShape {
    cl_mem_object_type type = 0;
    bool has2 = false, has3 = false; ///< has a height; has a depth
    size_t w = 0, h = 0, d = 0, layers = 0;
    Mem* buffer = nullptr; ///< mem_object, for an image over a buffer
    size_t elem = 0;       ///< bytes per element
    size_t tightRow = 0;   ///< w * elem
    size_t rowPitch = 0, slicePitch = 0;
};

// CL_INVALID_IMAGE_DESCRIPTOR: type, sizes, mip/sample counts, mem_object, pitches.
Result<ImageShape> checkDescriptor(const Context* c, const cl_image_desc* desc, size_t elem,
                                   const void* hostPtr) {
    if (!desc)
        return makeError(CL_INVALID_IMAGE_DESCRIPTOR, "image_desc is NULL");
    ImageShape s;
    s.elem = elem;
    s.type = desc->image_type;
    const cl_mem_object_type type = s.type;
    if (!isImageType(type))
        return makeError(CL_INVALID_IMAGE_DESCRIPTOR, "image_type is not an image type");
    s.has2 = !is1D(type), s.has3 = type == CL_MEM_OBJECT_IMAGE3D;
    s.w = desc->image_width;
    s.h = s.has2 ? desc->image_height : 1;
    s.d = s.has3 ? desc->image_depth : 1;
    s.layers = isArray(type) ? desc->image_array_size : 1;
    if (s.w == 0 || s.h == 0 || s.d == 0 || s.layers == 0)
        return makeError(CL_INVALID_IMAGE_DESCRIPTOR,
                         "image_width, image_height, image_depth or image_array_size is 0 for "
                         "a dimension the image type has");
    if (desc->num_mip_levels != 0 || desc->num_samples != 0)
        return makeError(CL_INVALID_IMAGE_DESCRIPTOR, "num_mip_levels and num_samples must be 0");
    if (desc->mem_object) {
        s.buffer = from<Mem>(desc->mem_object);
        if (type != CL_MEM_OBJECT_IMAGE1D_BUFFER && type != CL_MEM_OBJECT_IMAGE2D)
            return makeError(CL_INVALID_IMAGE_DESCRIPTOR,
                             "mem_object must be NULL for this image type");
        if (!s.buffer || s.buffer->type() != CL_MEM_OBJECT_BUFFER || s.buffer->context() != c)
            return makeError(CL_INVALID_IMAGE_DESCRIPTOR,
                             "mem_object is not a buffer of this context (images from images "
                             "are not supported)");
    } else if (type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
        return makeError(CL_INVALID_IMAGE_DESCRIPTOR,
                         "CL_MEM_OBJECT_IMAGE1D_BUFFER needs a buffer in mem_object");
    }
    size_t rowPitch = desc->image_row_pitch, slicePitch = desc->image_slice_pitch;
    s.tightRow = s.w * elem;
    if (!hostPtr && !s.buffer && (rowPitch || slicePitch))
        return makeError(CL_INVALID_IMAGE_DESCRIPTOR,
                         "image_row_pitch and image_slice_pitch must be 0 when host_ptr is NULL");
    if (rowPitch && (rowPitch < s.tightRow || rowPitch % elem))
        return makeError(CL_INVALID_IMAGE_DESCRIPTOR,
                         "image_row_pitch is smaller than image_width * element size or not a "
                         "multiple of the element size");
    if (!rowPitch)
        rowPitch = s.tightRow;
    const bool hasSlices = s.has3 || isArray(type);
    const size_t tightSlice = type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? rowPitch : rowPitch * s.h;
    if (hasSlices && slicePitch && (slicePitch < tightSlice || slicePitch % rowPitch))
        return makeError(CL_INVALID_IMAGE_DESCRIPTOR,
                         "image_slice_pitch is smaller than the slice size or not a multiple "
                         "of the row pitch");
    if (!hasSlices || !slicePitch)
        slicePitch = tightSlice;
    s.rowPitch = rowPitch;
    s.slicePitch = slicePitch;
    return s;
}

// CL_INVALID_IMAGE_SIZE: the devices' limits. `bytes` is the size of the application's data.
Status checkSize(const ImageShape& s, const ImageLimits& lim, size_t bytes) {
    if (lim.any) {
        bool tooBig = false;
        switch (s.type) {
        case CL_MEM_OBJECT_IMAGE1D:
        case CL_MEM_OBJECT_IMAGE1D_ARRAY:
            tooBig = s.w > lim.w2;
            break;
        case CL_MEM_OBJECT_IMAGE1D_BUFFER:
            tooBig = s.w > lim.buf;
            break;
        case CL_MEM_OBJECT_IMAGE2D:
        case CL_MEM_OBJECT_IMAGE2D_ARRAY:
            tooBig = s.w > lim.w2 || s.h > lim.h2;
            break;
        case CL_MEM_OBJECT_IMAGE3D:
            tooBig = s.w > lim.w3 || s.h > lim.h3 || s.d > lim.d3;
            break;
        }
        if (isArray(s.type) && s.layers > lim.arr)
            tooBig = true;
        if (tooBig)
            return makeError(CL_INVALID_IMAGE_SIZE,
                             "image dimensions exceed the device's image size limits");
    }
    if (lim.any && !s.buffer && bytes > lim.maxAlloc)
        return makeError(CL_INVALID_IMAGE_SIZE, "image size exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    return Status::success();
}

// Images over a buffer: flags inherit from the buffer and may not contradict it. Otherwise
// host_ptr and the host-pointer flags go together (CL_INVALID_HOST_PTR). Completes `flags`.
Status checkBufferAndHostPtr(cl_mem_flags& flags, const ImageShape& s, const void* hostPtr,
                             size_t bytes) {
    if (s.buffer) {
        const cl_mem_flags bf = s.buffer->flags();
        if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))
            return makeError(CL_INVALID_VALUE, "host-pointer flags cannot be given for an image "
                                               "created from a buffer");
        if ((bf & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY)))
            return makeError(CL_INVALID_VALUE, "the buffer is CL_MEM_WRITE_ONLY");
        if ((bf & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY)))
            return makeError(CL_INVALID_VALUE, "the buffer is CL_MEM_READ_ONLY");
        if ((bf & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY))
            return makeError(CL_INVALID_VALUE, "the buffer is CL_MEM_HOST_WRITE_ONLY");
        if ((bf & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY))
            return makeError(CL_INVALID_VALUE, "the buffer is CL_MEM_HOST_READ_ONLY");
        if ((bf & CL_MEM_HOST_NO_ACCESS) &&
            (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY)))
            return makeError(CL_INVALID_VALUE, "the buffer is CL_MEM_HOST_NO_ACCESS");
        const cl_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
        const cl_mem_flags hostAccess =
            CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
        if (!(flags & access))
            flags |= bf & access;
        if (!(flags & hostAccess))
            flags |= bf & hostAccess;
        flags |= bf & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR);
        // cl_khr_image2d_from_buffer: CL_DEVICE_IMAGE_PITCH_ALIGNMENT is 1 texel, any pitch
        // that is a multiple of the element size works.
        if (bytes > s.buffer->size())
            return makeError(CL_INVALID_IMAGE_SIZE, "the buffer (" +
                                                        std::to_string(s.buffer->size()) +
                                                        " bytes) is smaller than the image (" +
                                                        std::to_string(bytes) + " bytes)");
        if (hostPtr)
            return makeError(CL_INVALID_HOST_PTR,
                             "host_ptr must be NULL for an image created from a buffer");
    } else {
        const bool wantsPtr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
        if (wantsPtr && !hostPtr)
            return makeError(CL_INVALID_HOST_PTR,
                             "host_ptr is NULL with CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR");
        if (!wantsPtr && hostPtr)
            return makeError(CL_INVALID_HOST_PTR,
                             "host_ptr given without CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR");
    }
    if (!(flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY)))
        flags |= CL_MEM_READ_WRITE;
    return Status::success();
}

/// Where an image's elements live, with the pitches they have there.
struct ImageStorage {
    char* data = nullptr;
    bool owns = false; ///< allocated for the image (else the buffer's or the application's)
    size_t rowPitch = 0, slicePitch = 0;
};

/// The buffer's memory, the application's (CL_MEM_USE_HOST_PTR) or a tight copy of its own,
/// filled from host_ptr with CL_MEM_COPY_HOST_PTR.
Result<ImageStorage> imageStorage(Context* c, const ImageShape& s, cl_mem_flags flags,
                                  void* hostPtr) {
    ImageStorage st;
    st.rowPitch = s.rowPitch;
    st.slicePitch = s.slicePitch;
    if (s.buffer) {
        st.data = s.buffer->data();
    } else if (flags & CL_MEM_USE_HOST_PTR) {
        // Zero copy: kernels work in the application's memory, with its pitches.
        st.data = static_cast<char*>(hostPtr);
    } else {
        // Rows padded to what the context's devices read fastest (NVIDIA: texture pitch
        // alignment); 1D arrays keep one tight row per layer.
        const bool is1dArray = s.type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
        const size_t align =
            is1dArray || s.type == CL_MEM_OBJECT_IMAGE1D ? 1 : c->imageRowAlignment();
        st.rowPitch = (s.tightRow + align - 1) / align * align;
        st.slicePitch = is1dArray ? s.tightRow : st.rowPitch * s.h;
        size_t tightBytes = st.slicePitch * s.d * s.layers;
        st.data = c->allocateStorage(tightBytes, flags & CL_MEM_COPY_HOST_PTR);
        if (!st.data)
            return makeError(CL_MEM_OBJECT_ALLOCATION_FAILURE,
                             "could not allocate " + std::to_string(tightBytes) + " bytes");
        st.owns = true;
        if (flags & CL_MEM_COPY_HOST_PTR) {
            const size_t hostRowStep = is1dArray ? s.slicePitch : s.rowPitch;
            const size_t rows = is1dArray ? s.layers : s.h;
            const size_t slices = is1dArray ? 1 : s.d * s.layers;
            const size_t storedRowStep = is1dArray ? st.slicePitch : st.rowPitch;
            copyBox(st.data, {0, storedRowStep, st.slicePitch}, static_cast<const char*>(hostPtr),
                    {0, hostRowStep, s.slicePitch}, {s.tightRow, rows, slices});
            c->hostFilled(st.data, tightBytes);
        }
    }
    return st;
}

/// The image object over checked arguments and its storage.
Mem* makeImage(Context* c, const ImageShape& s, cl_mem_flags flags, void* hostPtr,
               const cl_image_format& format, const ImageStorage& st, size_t bytes,
               std::vector<cl_mem_properties> props) {
    const size_t size = s.buffer ? bytes : st.slicePitch * s.d * s.layers;
    Mem* m = makeObject<Mem>(retainRef(c), s.type, flags, size,
                             (flags & CL_MEM_USE_HOST_PTR) ? hostPtr : nullptr, st.data, st.owns);
    m->properties = std::move(props);
    m->format = format;
    m->elementSize = s.elem;
    m->rowPitch = st.rowPitch;
    m->slicePitch = st.slicePitch;
    cl_image_desc nd{};
    nd.image_type = s.type;
    nd.image_width = s.w;
    nd.image_height = s.has2 ? s.h : 0;
    nd.image_depth = s.has3 ? s.d : 0;
    nd.image_array_size = isArray(s.type) ? s.layers : 0;
    nd.image_row_pitch = st.rowPitch;
    nd.image_slice_pitch = st.slicePitch;
    nd.mem_object = s.buffer;
    m->desc = nd;
    if (s.buffer) {
        m->bufferRef = retainRef(s.buffer);
        m->viewOf(*s.buffer, 0); // follows the buffer's storage (GL buffers shared in place)
    }
    return m;
}

cl_mem createImage(Call& call, cl_context context, const cl_mem_properties* properties,
                   cl_mem_flags flags, const cl_image_format* format, const cl_image_desc* desc,
                   void* hostPtr) {
    Context* c = from<Context>(context);
    if (!c)
        return call.fail(CL_INVALID_CONTEXT, "not a valid context");
    call.setContext(c);
    std::vector<cl_mem_properties> props;
    if (properties) {
        if (*properties)
            return call.fail(CL_INVALID_PROPERTY,
                             "unsupported memory property " + std::to_string(*properties));
        props.push_back(0);
    }
    std::string why;
    if (checkMemFlags(flags, why))
        return call.fail(CL_INVALID_VALUE, why);
    if (Status st = checkFormat(format); !st)
        return call.fail(st.error());
    Result<ImageShape> shape = checkDescriptor(c, desc, elementSize(*format), hostPtr);
    if (!shape)
        return call.fail(shape.error());
    const ImageShape& s = *shape;
    const ImageLimits lim = limitsOf(c);
    // Without slices, slicePitch is rowPitch * height: one formula for every type.
    const size_t bytes = s.slicePitch * s.d * s.layers;
    if (Status st = checkSize(s, lim, bytes); !st)
        return call.fail(st.error());
    if (Status st = checkBufferAndHostPtr(flags, s, hostPtr, bytes); !st)
        return call.fail(st.error());

    if (!lim.any)
        return call.fail(CL_INVALID_OPERATION,
                         "no device in the context supports images (CL_DEVICE_IMAGE_SUPPORT is "
                         "CL_FALSE)");
    if (!isSupportedFormat(*format, s.type, flags))
        return call.fail(CL_IMAGE_FORMAT_NOT_SUPPORTED,
                         "the image format is not supported for this image type (see "
                         "clGetSupportedImageFormats)");
    Result<ImageStorage> storage = imageStorage(c, s, flags, hostPtr);
    if (!storage)
        return call.fail(storage.error());
    return call.ok(makeImage(c, s, flags, hostPtr, *format, *storage, bytes, std::move(props)));
}

/// Why commands other than kernels may not use image `m` now (CL_INVALID_OPERATION), or empty.
std::string unusableImage(const Mem& m, const char* what) {
    // cl_khr_gl_depth_images: CL_DEPTH_STENCIL images "cannot be used as arguments to
    // clEnqueueReadImage, ..., clEnqueueMapImage and clEnqueueFillImage".
    if (m.format.image_channel_order == CL_DEPTH_STENCIL)
        return std::string(what) + " is a CL_DEPTH_STENCIL image, which only kernels may use";
    // cl_khr_gl_sharing: GL objects must be acquired before any command uses them.
    if (m.glUnacquired())
        return std::string(what) + " was created from a GL object that is not acquired "
                                   "(clEnqueueAcquireGLObjects)";
    return {};
}

/// The image behind `mem` if it is a live image of the queue's context, else reports.
Mem* checkImage(const char* api, Queue* q, cl_mem mem, const char* what, cl_int& err) {
    Mem* m = from<Mem>(mem);
    if (!m || !m->isImage()) {
        err = report(api, q->context(), CL_INVALID_MEM_OBJECT,
                     std::string(what) + " is not a valid image");
        return nullptr;
    }
    if (m->context() != q->context()) {
        err = report(api, q->context(), CL_INVALID_CONTEXT,
                     std::string(what) + " belongs to another context than the queue");
        return nullptr;
    }
    if (std::string why = unusableImage(*m, what); !why.empty()) {
        err = report(api, q->context(), CL_INVALID_OPERATION, why);
        return nullptr;
    }
    return m;
}

/// origin/region rules of image transfers (CL_INVALID_VALUE). Empty when valid.
std::string checkRegion(const Mem& m, const size_t* origin, const size_t* region,
                        const char* which) {
    if (!origin || !region)
        return std::string(which) + " origin or region is NULL";
    if (!region[0] || !region[1] || !region[2])
        return std::string(which) + " region has a 0 component";
    const cl_mem_object_type t = m.type();
    if ((t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER) &&
        (origin[1] || region[1] != 1))
        return std::string(which) + " image is 1D: origin[1] must be 0 and region[1] 1";
    if (t != CL_MEM_OBJECT_IMAGE3D && t != CL_MEM_OBJECT_IMAGE2D_ARRAY &&
        (origin[2] || region[2] != 1))
        return std::string(which) + " image has no third dimension: origin[2] must be 0 and "
                                    "region[2] 1";
    ImageBox box = imageBox(m);
    for (int i = 0; i < 3; ++i)
        if (origin[i] > box.extent[i] || region[i] > box.extent[i] - origin[i])
            return std::string(which) + " origin + region is out of the image's bounds";
    return {};
}

cl_int rwImage(const char* api, bool read, cl_command_queue queue, cl_mem image, cl_bool blocking,
               const size_t* origin, const size_t* region, size_t rowPitch, size_t slicePitch,
               void* ptr, cl_uint num, const cl_event* list, cl_event* event) {
    cl_int err = CL_SUCCESS;
    Queue* q = checkQueue(api, queue, err);
    if (!q)
        return err;
    Mem* m = checkImage(api, q, image, "image", err);
    if (!m)
        return err;
    std::string why = checkRegion(*m, origin, region, "image");
    if (why.empty() && !ptr)
        why = "ptr is NULL";
    const size_t elem = m->elementSize;
    const cl_mem_object_type t = m->type();
    if (why.empty()) {
        if (rowPitch == 0)
            rowPitch = region[0] * elem;
        else if (rowPitch < region[0] * elem)
            why = "row_pitch is smaller than region[0] * element size";
    }
    if (why.empty()) {
        if (t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
            t == CL_MEM_OBJECT_IMAGE2D) {
            if (slicePitch)
                why = "slice_pitch must be 0 for a 1D or 2D image";
        } else {
            size_t min = t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? rowPitch : rowPitch * region[1];
            if (slicePitch == 0)
                slicePitch = min;
            else if (slicePitch < min)
                why = "slice_pitch is smaller than the size of one slice of the region";
        }
    }
    if (!why.empty())
        return report(api, q->context(), CL_INVALID_VALUE, why);
    if (cl_int e = checkWaitList(api, q->context(), num, list))
        return e;
    if (read ? !hostCanRead(m) : !hostCanWrite(m))
        return report(api, q->context(), CL_INVALID_OPERATION,
                      "the image's host access flags forbid this transfer");
    Submit how = submitOf(num, list, blocking, event);
    if (read)
        return handOut(
            enqueueReadImage(*q, retainRef(m), origin, region, rowPitch, slicePitch, ptr, how),
            event);
    return handOut(
        enqueueWriteImage(*q, retainRef(m), origin, region, rowPitch, slicePitch, ptr, how), event);
}

bool sameFormat(const cl_image_format& a, const cl_image_format& b) {
    return a.image_channel_order == b.image_channel_order &&
           a.image_channel_data_type == b.image_channel_data_type;
}

cl_int samplerFlagsOk(cl_bool normalized, cl_addressing_mode am, cl_filter_mode fm,
                      std::string& why) {
    if (normalized != CL_TRUE && normalized != CL_FALSE)
        return why = "normalized_coords must be CL_TRUE or CL_FALSE", CL_INVALID_VALUE;
    if (am < CL_ADDRESS_NONE || am > CL_ADDRESS_MIRRORED_REPEAT)
        return why = "unknown addressing mode", CL_INVALID_VALUE;
    if (fm != CL_FILTER_NEAREST && fm != CL_FILTER_LINEAR)
        return why = "unknown filter mode", CL_INVALID_VALUE;
    if (!normalized && (am == CL_ADDRESS_REPEAT || am == CL_ADDRESS_MIRRORED_REPEAT))
        return why = "CL_ADDRESS_REPEAT and CL_ADDRESS_MIRRORED_REPEAT need normalized "
                     "coordinates",
               CL_INVALID_VALUE;
    return CL_SUCCESS;
}

cl_sampler createSampler(Call& call, cl_context context, cl_bool normalized, cl_addressing_mode am,
                         cl_filter_mode fm, std::vector<cl_sampler_properties> props) {
    Context* c = from<Context>(context);
    if (!c)
        return call.fail(CL_INVALID_CONTEXT, "not a valid context");
    call.setContext(c);
    std::string why;
    if (samplerFlagsOk(normalized, am, fm, why))
        return call.fail(CL_INVALID_VALUE, why);
    if (!limitsOf(c).any)
        return call.fail(CL_INVALID_OPERATION,
                         "no device in the context supports images (CL_DEVICE_IMAGE_SUPPORT is "
                         "CL_FALSE)");
    return call.ok(makeObject<Sampler>(retainRef(c), normalized, am, fm, std::move(props)));
}

} // namespace

// ---- Creation and info ----------------------------------------------------------------------

DUET_API cl_mem CL_API_CALL clCreateImage(cl_context context, cl_mem_flags flags,
                                          const cl_image_format* format, const cl_image_desc* desc,
                                          void* hostPtr, cl_int* errcodeRet) {
    Call call("clCreateImage", errcodeRet);
    return guardHandle<_cl_mem>(
        call, [&] { return createImage(call, context, nullptr, flags, format, desc, hostPtr); });
}

DUET_API cl_mem CL_API_CALL clCreateImageWithProperties(
    cl_context context, const cl_mem_properties* properties, cl_mem_flags flags,
    const cl_image_format* format, const cl_image_desc* desc, void* hostPtr, cl_int* errcodeRet) {
    Call call("clCreateImageWithProperties", errcodeRet);
    return guardHandle<_cl_mem>(
        call, [&] { return createImage(call, context, properties, flags, format, desc, hostPtr); });
}

DUET_API cl_mem CL_API_CALL clCreateImage2D(cl_context context, cl_mem_flags flags,
                                            const cl_image_format* format, size_t width,
                                            size_t height, size_t rowPitch, void* hostPtr,
                                            cl_int* errcodeRet) {
    Call call("clCreateImage2D", errcodeRet);
    return guardHandle<_cl_mem>(call, [&]() -> cl_mem {
        // OpenCL 1.1: zero sizes are CL_INVALID_IMAGE_SIZE here, not a descriptor error.
        if (from<Context>(context) && (width == 0 || height == 0)) {
            call.setContext(from<Context>(context));
            return call.fail(CL_INVALID_IMAGE_SIZE, "image_width or image_height is 0");
        }
        cl_image_desc d{};
        d.image_type = CL_MEM_OBJECT_IMAGE2D;
        d.image_width = width;
        d.image_height = height;
        d.image_row_pitch = rowPitch;
        return createImage(call, context, nullptr, flags, format, &d, hostPtr);
    });
}

DUET_API cl_mem CL_API_CALL clCreateImage3D(cl_context context, cl_mem_flags flags,
                                            const cl_image_format* format, size_t width,
                                            size_t height, size_t depth, size_t rowPitch,
                                            size_t slicePitch, void* hostPtr, cl_int* errcodeRet) {
    Call call("clCreateImage3D", errcodeRet);
    return guardHandle<_cl_mem>(call, [&]() -> cl_mem {
        // OpenCL 1.1: a 3D image has depth > 1.
        if (from<Context>(context) && (width == 0 || height == 0 || depth <= 1)) {
            call.setContext(from<Context>(context));
            return call.fail(CL_INVALID_IMAGE_SIZE,
                             "image_width or image_height is 0 or image_depth <= 1");
        }
        cl_image_desc d{};
        d.image_type = CL_MEM_OBJECT_IMAGE3D;
        d.image_width = width;
        d.image_height = height;
        d.image_depth = depth;
        d.image_row_pitch = rowPitch;
        d.image_slice_pitch = slicePitch;
        return createImage(call, context, nullptr, flags, format, &d, hostPtr);
    });
}

DUET_API cl_int CL_API_CALL clGetSupportedImageFormats(cl_context context, cl_mem_flags flags,
                                                       cl_mem_object_type type, cl_uint num,
                                                       cl_image_format* formats, cl_uint* numRet) {
    return guard("clGetSupportedImageFormats", [&]() -> cl_int {
        const char* api = "clGetSupportedImageFormats";
        Context* c = from<Context>(context);
        if (!c)
            return report(api, nullptr, CL_INVALID_CONTEXT, "not a valid context");
        std::string why;
        if (checkMemFlags(flags, why))
            return report(api, c, CL_INVALID_VALUE, why);
        if (!isImageType(type))
            return report(api, c, CL_INVALID_VALUE, "image_type is not an image type");
        if (num == 0 && formats)
            return report(api, c, CL_INVALID_VALUE,
                          "num_entries is 0 and image_formats is not NULL");
        std::vector<cl_image_format> list;
        if (limitsOf(c).any)
            list = supportedFormats(type, flags);
        if (formats)
            std::copy_n(list.begin(), std::min<size_t>(num, list.size()), formats);
        if (numRet)
            *numRet = cl_uint(list.size());
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clGetImageInfo(cl_mem image, cl_image_info param, size_t size,
                                           void* value, size_t* sizeRet) {
    return guard("clGetImageInfo", [&]() -> cl_int {
        const char* api = "clGetImageInfo";
        Mem* m = from<Mem>(image);
        if (!m || !m->isImage())
            return report(api, m ? m->context() : nullptr, CL_INVALID_MEM_OBJECT,
                          "not a valid image object");
        const cl_mem_object_type t = m->type();
        cl_int r;
        switch (param) {
        case CL_IMAGE_FORMAT:
            r = infoValue<cl_image_format>(size, value, sizeRet, m->format);
            break;
        case CL_IMAGE_ELEMENT_SIZE:
            r = infoValue<size_t>(size, value, sizeRet, m->elementSize);
            break;
        case CL_IMAGE_ROW_PITCH:
            r = infoValue<size_t>(size, value, sizeRet, m->rowPitch);
            break;
        case CL_IMAGE_SLICE_PITCH:
            // 0 for images without slices or layers.
            r = infoValue<size_t>(size, value, sizeRet,
                                  (t == CL_MEM_OBJECT_IMAGE3D || isArray(t)) ? m->slicePitch : 0);
            break;
        case CL_IMAGE_WIDTH:
            r = infoValue<size_t>(size, value, sizeRet, m->desc.image_width);
            break;
        case CL_IMAGE_HEIGHT:
            r = infoValue<size_t>(size, value, sizeRet, m->desc.image_height);
            break;
        case CL_IMAGE_DEPTH:
            r = infoValue<size_t>(size, value, sizeRet, m->desc.image_depth);
            break;
        case CL_IMAGE_ARRAY_SIZE:
            r = infoValue<size_t>(size, value, sizeRet, m->desc.image_array_size);
            break;
        case CL_IMAGE_BUFFER:
            r = infoValue<cl_mem>(size, value, sizeRet, m->bufferRef.get());
            break;
        case CL_IMAGE_NUM_MIP_LEVELS:
        case CL_IMAGE_NUM_SAMPLES:
            r = infoValue<cl_uint>(size, value, sizeRet, 0);
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

// ---- Transfers ------------------------------------------------------------------------------

DUET_API cl_int CL_API_CALL clEnqueueReadImage(cl_command_queue queue, cl_mem image,
                                               cl_bool blocking, const size_t* origin,
                                               const size_t* region, size_t rowPitch,
                                               size_t slicePitch, void* ptr, cl_uint num,
                                               const cl_event* list, cl_event* event) {
    return guard("clEnqueueReadImage", [&] {
        return rwImage("clEnqueueReadImage", true, queue, image, blocking, origin, region, rowPitch,
                       slicePitch, ptr, num, list, event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueWriteImage(cl_command_queue queue, cl_mem image,
                                                cl_bool blocking, const size_t* origin,
                                                const size_t* region, size_t rowPitch,
                                                size_t slicePitch, const void* ptr, cl_uint num,
                                                const cl_event* list, cl_event* event) {
    return guard("clEnqueueWriteImage", [&] {
        return rwImage("clEnqueueWriteImage", false, queue, image, blocking, origin, region,
                       rowPitch, slicePitch, const_cast<void*>(ptr), num, list, event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueCopyImage(cl_command_queue queue, cl_mem srcImage,
                                               cl_mem dstImage, const size_t* srcOrigin,
                                               const size_t* dstOrigin, const size_t* region,
                                               cl_uint num, const cl_event* list, cl_event* event) {
    return guard("clEnqueueCopyImage", [&]() -> cl_int {
        const char* api = "clEnqueueCopyImage";
        cl_int err = CL_SUCCESS;
        Queue* q = checkQueue(api, queue, err);
        if (!q)
            return err;
        Mem* s = checkImage(api, q, srcImage, "src_image", err);
        if (!s)
            return err;
        Mem* d = checkImage(api, q, dstImage, "dst_image", err);
        if (!d)
            return err;
        if (!sameFormat(s->format, d->format))
            return report(api, q->context(), CL_IMAGE_FORMAT_MISMATCH,
                          "src_image and dst_image have different image formats");
        std::string why = checkRegion(*s, srcOrigin, region, "src");
        if (why.empty())
            why = checkRegion(*d, dstOrigin, region, "dst");
        if (!why.empty())
            return report(api, q->context(), CL_INVALID_VALUE, why);
        if (s == d) {
            bool overlap = true;
            for (int i = 0; i < 3; ++i)
                if (srcOrigin[i] + region[i] <= dstOrigin[i] ||
                    dstOrigin[i] + region[i] <= srcOrigin[i])
                    overlap = false;
            if (overlap)
                return report(api, q->context(), CL_MEM_COPY_OVERLAP,
                              "source and destination regions overlap");
        }
        if (cl_int e = checkWaitList(api, q->context(), num, list))
            return e;
        return handOut(enqueueCopyImage(*q, retainRef(s), retainRef(d), srcOrigin, dstOrigin,
                                        region, submitOf(num, list, false, event)),
                       event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueFillImage(cl_command_queue queue, cl_mem image,
                                               const void* color, const size_t* origin,
                                               const size_t* region, cl_uint num,
                                               const cl_event* list, cl_event* event) {
    return guard("clEnqueueFillImage", [&]() -> cl_int {
        const char* api = "clEnqueueFillImage";
        cl_int err = CL_SUCCESS;
        Queue* q = checkQueue(api, queue, err);
        if (!q)
            return err;
        Mem* m = checkImage(api, q, image, "image", err);
        if (!m)
            return err;
        std::string why = !color ? "fill_color is NULL" : checkRegion(*m, origin, region, "image");
        if (!why.empty())
            return report(api, q->context(), CL_INVALID_VALUE, why);
        if (cl_int e = checkWaitList(api, q->context(), num, list))
            return e;
        return handOut(enqueueFillImage(*q, retainRef(m), color, origin, region,
                                        submitOf(num, list, false, event)),
                       event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueCopyImageToBuffer(cl_command_queue queue, cl_mem srcImage,
                                                       cl_mem dstBuffer, const size_t* srcOrigin,
                                                       const size_t* region, size_t dstOffset,
                                                       cl_uint num, const cl_event* list,
                                                       cl_event* event) {
    return guard("clEnqueueCopyImageToBuffer", [&]() -> cl_int {
        const char* api = "clEnqueueCopyImageToBuffer";
        cl_int err = CL_SUCCESS;
        Queue* q = checkQueue(api, queue, err);
        if (!q)
            return err;
        Mem* s = checkImage(api, q, srcImage, "src_image", err);
        if (!s)
            return err;
        Mem* d = checkMem(api, q, dstBuffer, "dst_buffer", err, true);
        if (!d)
            return err;
        std::string why = checkRegion(*s, srcOrigin, region, "src");
        if (why.empty()) {
            size_t bytes = region[0] * region[1] * region[2] * s->elementSize;
            if (dstOffset > d->size() || bytes > d->size() - dstOffset)
                why = "dst_offset + the region's size is out of the buffer's bounds";
        }
        if (!why.empty())
            return report(api, q->context(), CL_INVALID_VALUE, why);
        if (s->bufferRef && s->bufferRef.get() == (d->parent() ? d->parent() : d))
            return report(api, q->context(), CL_MEM_COPY_OVERLAP,
                          "src_image was created from dst_buffer");
        if (cl_int e = checkWaitList(api, q->context(), num, list))
            return e;
        return handOut(enqueueCopyImageToBuffer(*q, retainRef(s), retainRef(d), srcOrigin, region,
                                                dstOffset, submitOf(num, list, false, event)),
                       event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueCopyBufferToImage(cl_command_queue queue, cl_mem srcBuffer,
                                                       cl_mem dstImage, size_t srcOffset,
                                                       const size_t* dstOrigin,
                                                       const size_t* region, cl_uint num,
                                                       const cl_event* list, cl_event* event) {
    return guard("clEnqueueCopyBufferToImage", [&]() -> cl_int {
        const char* api = "clEnqueueCopyBufferToImage";
        cl_int err = CL_SUCCESS;
        Queue* q = checkQueue(api, queue, err);
        if (!q)
            return err;
        Mem* s = checkMem(api, q, srcBuffer, "src_buffer", err, true);
        if (!s)
            return err;
        Mem* d = checkImage(api, q, dstImage, "dst_image", err);
        if (!d)
            return err;
        std::string why = checkRegion(*d, dstOrigin, region, "dst");
        if (why.empty()) {
            size_t bytes = region[0] * region[1] * region[2] * d->elementSize;
            if (srcOffset > s->size() || bytes > s->size() - srcOffset)
                why = "src_offset + the region's size is out of the buffer's bounds";
        }
        if (!why.empty())
            return report(api, q->context(), CL_INVALID_VALUE, why);
        if (d->bufferRef && d->bufferRef.get() == (s->parent() ? s->parent() : s))
            return report(api, q->context(), CL_MEM_COPY_OVERLAP,
                          "dst_image was created from src_buffer");
        if (cl_int e = checkWaitList(api, q->context(), num, list))
            return e;
        return handOut(enqueueCopyBufferToImage(*q, retainRef(s), retainRef(d), srcOffset,
                                                dstOrigin, region,
                                                submitOf(num, list, false, event)),
                       event);
    });
}

DUET_API void* CL_API_CALL clEnqueueMapImage(cl_command_queue queue, cl_mem image, cl_bool blocking,
                                             cl_map_flags flags, const size_t* origin,
                                             const size_t* region, size_t* rowPitchOut,
                                             size_t* slicePitchOut, cl_uint num,
                                             const cl_event* list, cl_event* event,
                                             cl_int* errcodeRet) {
    Call call("clEnqueueMapImage", errcodeRet);
    return guardHandle<void>(call, [&]() -> void* {
        const char* api = call.api();
        Queue* q = hostQueue(queue);
        if (!q)
            return call.fail(CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
        call.setContext(q->context());
        Mem* m = from<Mem>(image);
        if (!m || !m->isImage())
            return call.fail(CL_INVALID_MEM_OBJECT, "image is not a valid image");
        if (m->context() != q->context())
            return call.fail(CL_INVALID_CONTEXT, "image belongs to another context");
        std::string why = checkRegion(*m, origin, region, "image");
        if (!why.empty())
            return call.fail(CL_INVALID_VALUE, why);
        if (!rowPitchOut)
            return call.fail(CL_INVALID_VALUE, "image_row_pitch is NULL");
        const cl_mem_object_type t = m->type();
        if (!slicePitchOut && (t == CL_MEM_OBJECT_IMAGE3D || isArray(t)))
            return call.fail(CL_INVALID_VALUE,
                             "image_slice_pitch is NULL for a 3D image or an image array");
        if (std::string why = badMapFlags(flags); !why.empty())
            return call.fail(CL_INVALID_VALUE, why);
        if (cl_int e = checkWaitList(api, q->context(), num, list)) {
            if (errcodeRet)
                *errcodeRet = e;
            return nullptr;
        }
        if (std::string why = mapForbidden(flags, m, "an image"); !why.empty())
            return call.fail(CL_INVALID_OPERATION, why);
        if (std::string why = unusableImage(*m, "image"); !why.empty())
            return call.fail(CL_INVALID_OPERATION, why);
        // The map hands out the image's host storage, with its own pitches (an image over a GL
        // buffer shared in place: once the buffer's acquire has mapped it).
        duet::rt::gl::settleStorage(m);
        Mapped mapped = enqueueMapImage(*q, retainRef(m), flags, origin, region,
                                        submitOf(num, list, blocking, event));
        void* ptr = mapped.ptr;
        *rowPitchOut = mapped.rowPitch;
        if (slicePitchOut)
            *slicePitchOut = mapped.slicePitch;
        if (cl_int st = handOut(std::move(mapped), event); st != CL_SUCCESS)
            return call.fail(st, "a command in the wait list failed");
        return call.ok(ptr);
    });
}

// ---- Samplers -------------------------------------------------------------------------------

DUET_API cl_sampler CL_API_CALL clCreateSampler(cl_context context, cl_bool normalized,
                                                cl_addressing_mode am, cl_filter_mode fm,
                                                cl_int* errcodeRet) {
    Call call("clCreateSampler", errcodeRet);
    return guardHandle<_cl_sampler>(
        call, [&] { return createSampler(call, context, normalized, am, fm, {}); });
}

DUET_API cl_sampler CL_API_CALL clCreateSamplerWithProperties(
    cl_context context, const cl_sampler_properties* properties, cl_int* errcodeRet) {
    Call call("clCreateSamplerWithProperties", errcodeRet);
    return guardHandle<_cl_sampler>(call, [&]() -> cl_sampler {
        cl_bool normalized = CL_TRUE;
        cl_addressing_mode am = CL_ADDRESS_CLAMP;
        cl_filter_mode fm = CL_FILTER_NEAREST;
        std::vector<cl_sampler_properties> props;
        if (properties) {
            Context* c = from<Context>(context);
            if (!c)
                return call.fail(CL_INVALID_CONTEXT, "not a valid context");
            call.setContext(c);
            bool seen[3] = {};
            const cl_sampler_properties* p = properties;
            for (; *p; p += 2) {
                int idx = p[0] == CL_SAMPLER_NORMALIZED_COORDS ? 0
                          : p[0] == CL_SAMPLER_ADDRESSING_MODE ? 1
                          : p[0] == CL_SAMPLER_FILTER_MODE     ? 2
                                                               : -1;
                if (idx < 0)
                    return call.fail(CL_INVALID_VALUE,
                                     "unknown sampler property " + std::to_string(p[0]));
                if (seen[idx])
                    return call.fail(CL_INVALID_VALUE,
                                     "sampler property " + std::to_string(p[0]) + " given twice");
                seen[idx] = true;
                if (idx == 0)
                    normalized = cl_bool(p[1]);
                else if (idx == 1)
                    am = cl_addressing_mode(p[1]);
                else
                    fm = cl_filter_mode(p[1]);
            }
            props.assign(properties, p + 1);
        }
        return createSampler(call, context, normalized, am, fm, std::move(props));
    });
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

DUET_API cl_int CL_API_CALL clGetSamplerInfo(cl_sampler sampler, cl_sampler_info param, size_t size,
                                             void* value, size_t* sizeRet) {
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
