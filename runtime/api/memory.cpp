// Buffer entry points: creation, sub-buffers, info, read/write/copy/fill (+rect), map/unmap.
#include "api/api.hpp"
#include "core/memory.hpp"
#include "core/queue.hpp"
#include "core/svm.hpp"
#include "gl/gl_share.hpp"

#include <algorithm>
#include <cstring>

using namespace duet::api;

namespace duet::api {

/// Spec checks common to buffer and image flags. Returns CL_SUCCESS or CL_INVALID_VALUE with
/// `why` filled.
cl_int checkMemFlags(cl_mem_flags flags, std::string& why) {
    const cl_mem_flags known = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY |
                               CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR |
                               CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY |
                               CL_MEM_HOST_NO_ACCESS | CL_MEM_KERNEL_READ_AND_WRITE;
    if (flags & ~known)
        return why = "unknown cl_mem_flags bits", CL_INVALID_VALUE;
    if (__builtin_popcountll(flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY)) >
        1)
        return why = "more than one of CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, CL_MEM_READ_ONLY",
               CL_INVALID_VALUE;
    if ((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)))
        return why = "CL_MEM_USE_HOST_PTR with CL_MEM_ALLOC_HOST_PTR or CL_MEM_COPY_HOST_PTR",
               CL_INVALID_VALUE;
    if (__builtin_popcountll(
            flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)) > 1)
        return why = "more than one of CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY, "
                     "CL_MEM_HOST_NO_ACCESS",
               CL_INVALID_VALUE;
    return CL_SUCCESS;
}

/// Common preamble of enqueue calls on memory objects: queue, context, wait list.
Queue* checkQueue(const char* api, cl_command_queue queue, cl_int& err) {
    Queue* q = hostQueue(queue);
    if (!q)
        err = report(api, nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
    return q;
}

Mem* checkMem(const char* api, Queue* q, cl_mem mem, const char* what, cl_int& err,
              bool wantBuffer) {
    Mem* m = from<Mem>(mem);
    if (!m || (wantBuffer && m->type() != CL_MEM_OBJECT_BUFFER)) {
        err = report(api, q->context(), CL_INVALID_MEM_OBJECT,
                     std::string(what) + " is not a valid buffer");
        return nullptr;
    }
    if (m->context() != q->context()) {
        err = report(api, q->context(), CL_INVALID_CONTEXT,
                     std::string(what) + " belongs to another context than the queue");
        return nullptr;
    }
    // cl_khr_gl_sharing: objects made from GL objects "need to be acquired before they can be
    // used by any OpenCL commands queued to a command-queue".
    if (m->glUnacquired()) {
        err = report(api, q->context(), CL_INVALID_OPERATION,
                     std::string(what) + " was created from a GL object that is not acquired "
                                         "(clEnqueueAcquireGLObjects)");
        return nullptr;
    }
    return m;
}

bool hostCanRead(const Mem* m) {
    return !(m->flags() & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS));
}
bool hostCanWrite(const Mem* m) {
    return !(m->flags() & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS));
}

std::string badMapFlags(cl_map_flags flags) {
    if (flags & ~cl_map_flags(CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))
        return "unknown map_flags bits";
    if ((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE)))
        return "CL_MAP_WRITE_INVALIDATE_REGION with CL_MAP_READ or CL_MAP_WRITE";
    return {};
}

std::string mapForbidden(cl_map_flags flags, const Mem* m, const char* what) {
    if ((flags & CL_MAP_READ) && !hostCanRead(m))
        return std::string("CL_MAP_READ on ") + what + " the host may not read";
    if ((flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) && !hostCanWrite(m))
        return std::string("CL_MAP_WRITE on ") + what + " the host may not write";
    return {};
}

} // namespace duet::api

namespace {

cl_mem createBuffer(Call& call, cl_context context, const cl_mem_properties* properties,
                    cl_mem_flags flags, size_t size, void* hostPtr) {
    Context* c = from<Context>(context);
    if (!c)
        return call.fail(CL_INVALID_CONTEXT, "not a valid context");
    call.setContext(c);
    std::vector<cl_mem_properties> props;
    if (properties) {
        // No buffer properties are defined by the core specification.
        if (*properties)
            return call.fail(CL_INVALID_PROPERTY,
                             "unsupported memory property " + std::to_string(*properties));
        props.push_back(0);
    }
    std::string why;
    if (checkMemFlags(flags, why))
        return call.fail(CL_INVALID_VALUE, why);
    cl_ulong maxAlloc = ~cl_ulong(0);
    for (Device* d : c->devices())
        maxAlloc = std::min(maxAlloc, d->info().maxMemAllocSize);
    if (size == 0 || size > maxAlloc)
        return call.fail(CL_INVALID_BUFFER_SIZE,
                         size == 0 ? "size is 0"
                                   : "size exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                                         std::to_string(maxAlloc) + ")");
    bool wantsPtr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
    if (wantsPtr && !hostPtr)
        return call.fail(CL_INVALID_HOST_PTR,
                         "host_ptr is NULL with CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR");
    if (!wantsPtr && hostPtr)
        return call.fail(CL_INVALID_HOST_PTR,
                         "host_ptr given without CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR");
    if (!(flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY)))
        flags |= CL_MEM_READ_WRITE;
    // A CL_MEM_USE_HOST_PTR buffer over an SVM allocation "will succeed ... as long as the size
    // argument is no larger than the size argument passed in the original clSVMAlloc call".
    bool usesSvm = false;
    if (flags & CL_MEM_USE_HOST_PTR)
        if (std::optional<SvmAllocation> a = svmFind(hostPtr); a && a->context == c) {
            const size_t room = size_t(a->base + a->size - static_cast<char*>(hostPtr));
            if (size > room)
                return call.fail(CL_INVALID_BUFFER_SIZE,
                                 "size runs past the end of the SVM allocation host_ptr points "
                                 "into (" +
                                     std::to_string(room) + " bytes left)");
            usesSvm = true;
        }
    char* storage;
    bool owns = true;
    if (flags & CL_MEM_USE_HOST_PTR) {
        // Zero copy: the devices work in the application's memory (registered with the
        // context's device allocator where there is one).
        storage = static_cast<char*>(hostPtr);
        owns = false;
        std::string why;
        if (!c->registerHostMemory(hostPtr, size, why))
            return call.fail(CL_MEM_OBJECT_ALLOCATION_FAILURE,
                             "host_ptr cannot be shared with the context's devices: " + why);
    } else {
        const bool copies = flags & CL_MEM_COPY_HOST_PTR;
        storage = c->allocateStorage(size, copies);
        if (!storage)
            return call.fail(CL_MEM_OBJECT_ALLOCATION_FAILURE,
                             "could not allocate " + std::to_string(size) + " bytes");
        if (copies) {
            std::memcpy(storage, hostPtr, size);
            c->hostFilled(storage, size);
        }
    }
    Mem* m = makeObject<Mem>(retainRef(c), CL_MEM_OBJECT_BUFFER, flags, size,
                             (flags & CL_MEM_USE_HOST_PTR) ? hostPtr : nullptr, storage, owns);
    if (flags & CL_MEM_USE_HOST_PTR)
        m->markHostRegistered();
    m->properties = std::move(props);
    m->usesSvmPointer = usesSvm;
    return call.ok(m);
}

} // namespace

DUET_API cl_mem CL_API_CALL clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
                                           void* hostPtr, cl_int* errcodeRet) {
    Call call("clCreateBuffer", errcodeRet);
    return guardHandle<_cl_mem>(
        call, [&] { return createBuffer(call, context, nullptr, flags, size, hostPtr); });
}

DUET_API cl_mem CL_API_CALL clCreateBufferWithProperties(cl_context context,
                                                         const cl_mem_properties* properties,
                                                         cl_mem_flags flags, size_t size,
                                                         void* hostPtr, cl_int* errcodeRet) {
    Call call("clCreateBufferWithProperties", errcodeRet);
    return guardHandle<_cl_mem>(
        call, [&] { return createBuffer(call, context, properties, flags, size, hostPtr); });
}

DUET_API cl_mem CL_API_CALL clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                                              cl_buffer_create_type type, const void* info,
                                              cl_int* errcodeRet) {
    Call call("clCreateSubBuffer", errcodeRet);
    return guardHandle<_cl_mem>(call, [&]() -> cl_mem {
        Mem* parent = from<Mem>(buffer);
        if (!parent || parent->type() != CL_MEM_OBJECT_BUFFER || parent->parent())
            return call.fail(CL_INVALID_MEM_OBJECT, "buffer is not a valid buffer object or is "
                                                    "itself a sub-buffer");
        call.setContext(parent->context());
        std::string why;
        if (checkMemFlags(flags, why))
            return call.fail(CL_INVALID_VALUE, why);
        if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))
            return call.fail(CL_INVALID_VALUE, "host-pointer flags cannot be given for a "
                                               "sub-buffer");
        cl_mem_flags pf = parent->flags();
        if ((pf & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY)))
            return call.fail(CL_INVALID_VALUE, "the parent is CL_MEM_WRITE_ONLY");
        if ((pf & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY)))
            return call.fail(CL_INVALID_VALUE, "the parent is CL_MEM_READ_ONLY");
        if ((pf & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY))
            return call.fail(CL_INVALID_VALUE, "the parent is CL_MEM_HOST_WRITE_ONLY");
        if ((pf & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY))
            return call.fail(CL_INVALID_VALUE, "the parent is CL_MEM_HOST_READ_ONLY");
        if ((pf & CL_MEM_HOST_NO_ACCESS) &&
            (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY)))
            return call.fail(CL_INVALID_VALUE, "the parent is CL_MEM_HOST_NO_ACCESS");
        if (type != CL_BUFFER_CREATE_TYPE_REGION)
            return call.fail(CL_INVALID_VALUE, "buffer_create_type must be "
                                               "CL_BUFFER_CREATE_TYPE_REGION");
        if (!info)
            return call.fail(CL_INVALID_VALUE, "buffer_create_info is NULL");
        auto* region = static_cast<const cl_buffer_region*>(info);
        if (region->size == 0)
            return call.fail(CL_INVALID_BUFFER_SIZE, "region size is 0");
        if (region->origin > parent->size() || region->size > parent->size() - region->origin)
            return call.fail(CL_INVALID_VALUE, "region is out of the buffer's bounds");
        for (Device* d : parent->context()->devices())
            if (region->origin % (d->info().memBaseAddrAlign / 8))
                return call.fail(CL_MISALIGNED_SUB_BUFFER_OFFSET,
                                 "origin is not a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN (" +
                                     std::to_string(d->info().memBaseAddrAlign / 8) + " bytes)");
        // Unspecified access and host-access flags are inherited.
        const cl_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
        const cl_mem_flags hostAccess =
            CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
        if (!(flags & access))
            flags |= pf & access;
        if (!(flags & hostAccess))
            flags |= pf & hostAccess;
        flags |= pf & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR);
        void* hostPtr =
            parent->hostPtr() ? static_cast<char*>(parent->hostPtr()) + region->origin : nullptr;
        Mem* m = makeObject<Mem>(retainRef(parent->context()), CL_MEM_OBJECT_BUFFER, flags,
                                 region->size, hostPtr, parent->data() + region->origin, false);
        m->setParent(retainRef(parent), region->origin);
        return call.ok(m);
    });
}

DUET_API cl_int CL_API_CALL clRetainMemObject(cl_mem mem) {
    Mem* m = from<Mem>(mem);
    if (!m)
        return report("clRetainMemObject", nullptr, CL_INVALID_MEM_OBJECT, "not a memory object");
    m->retain();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clReleaseMemObject(cl_mem mem) {
    Mem* m = from<Mem>(mem);
    if (!m)
        return report("clReleaseMemObject", nullptr, CL_INVALID_MEM_OBJECT, "not a memory object");
    m->release();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clSetMemObjectDestructorCallback(cl_mem mem, Mem::DestructorFn fn,
                                                             void* userData) {
    return guard("clSetMemObjectDestructorCallback", [&]() -> cl_int {
        Mem* m = from<Mem>(mem);
        if (!m)
            return report("clSetMemObjectDestructorCallback", nullptr, CL_INVALID_MEM_OBJECT,
                          "not a memory object");
        if (!fn)
            return report("clSetMemObjectDestructorCallback", m->context(), CL_INVALID_VALUE,
                          "pfn_notify is NULL");
        m->addDestructorCallback(fn, userData);
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clGetMemObjectInfo(cl_mem mem, cl_mem_info param, size_t size,
                                               void* value, size_t* sizeRet) {
    return guard("clGetMemObjectInfo", [&]() -> cl_int {
        const char* api = "clGetMemObjectInfo";
        Mem* m = from<Mem>(mem);
        if (!m)
            return report(api, nullptr, CL_INVALID_MEM_OBJECT, "not a memory object");
        cl_int r;
        switch (param) {
        case CL_MEM_TYPE:
            r = infoValue<cl_mem_object_type>(size, value, sizeRet, m->type());
            break;
        case CL_MEM_FLAGS:
            r = infoValue<cl_mem_flags>(size, value, sizeRet, m->flags());
            break;
        case CL_MEM_SIZE:
            r = infoValue<size_t>(size, value, sizeRet, m->size());
            break;
        case CL_MEM_HOST_PTR:
            r = infoValue<void*>(size, value, sizeRet, m->hostPtr());
            break;
        case CL_MEM_MAP_COUNT:
            r = infoValue<cl_uint>(size, value, sizeRet, m->mapCount.load());
            break;
        case CL_MEM_REFERENCE_COUNT:
            r = infoValue<cl_uint>(size, value, sizeRet, m->refCount.load());
            break;
        case CL_MEM_CONTEXT:
            r = infoValue<cl_context>(size, value, sizeRet, m->context());
            break;
        case CL_MEM_ASSOCIATED_MEMOBJECT:
            r = infoValue<cl_mem>(size, value, sizeRet,
                                  m->parent() ? static_cast<cl_mem>(m->parent())
                                              : static_cast<cl_mem>(m->bufferRef.get()));
            break;
        case CL_MEM_OFFSET:
            r = infoValue<size_t>(size, value, sizeRet, m->offset());
            break;
        case CL_MEM_USES_SVM_POINTER: {
            const Mem* owner = m->parent() ? m->parent() : m;
            r = infoValue<cl_bool>(size, value, sizeRet,
                                   owner->usesSvmPointer ? CL_TRUE : CL_FALSE);
            break;
        }
        case CL_MEM_PROPERTIES:
            r = infoVector(size, value, sizeRet, m->properties);
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

namespace {

/// clEnqueueReadBuffer and clEnqueueWriteBuffer: the same checks, the copy's direction apart.
cl_int enqueueTransfer(const char* api, bool read, cl_command_queue queue, cl_mem buffer,
                       cl_bool blocking, size_t offset, size_t size, void* ptr, cl_uint num,
                       const cl_event* list, cl_event* event) {
    cl_int err = CL_SUCCESS;
    Queue* q = checkQueue(api, queue, err);
    if (!q)
        return err;
    Mem* m = checkMem(api, q, buffer, "buffer", err);
    if (!m)
        return err;
    if (offset > m->size() || size > m->size() - offset || size == 0 || !ptr)
        return report(api, q->context(), CL_INVALID_VALUE,
                      !ptr ? "ptr is NULL" : "offset/size out of bounds or size is 0");
    if (cl_int e = checkWaitList(api, q->context(), num, list))
        return e;
    if (read ? !hostCanRead(m) : !hostCanWrite(m))
        return report(api, q->context(), CL_INVALID_OPERATION,
                      read ? "buffer was created with CL_MEM_HOST_WRITE_ONLY or "
                             "CL_MEM_HOST_NO_ACCESS"
                           : "buffer was created with CL_MEM_HOST_READ_ONLY or "
                             "CL_MEM_HOST_NO_ACCESS");
    Submit how = submitOf(num, list, blocking, event);
    if (read)
        return handOut(enqueueReadBuffer(*q, retainRef(m), offset, size, ptr, how), event);
    return handOut(enqueueWriteBuffer(*q, retainRef(m), offset, size, ptr, how), event);
}

} // namespace

DUET_API cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer,
                                                cl_bool blocking, size_t offset, size_t size,
                                                void* ptr, cl_uint num, const cl_event* list,
                                                cl_event* event) {
    return guard("clEnqueueReadBuffer", [&] {
        return enqueueTransfer("clEnqueueReadBuffer", true, queue, buffer, blocking, offset, size,
                               ptr, num, list, event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer,
                                                 cl_bool blocking, size_t offset, size_t size,
                                                 const void* ptr, cl_uint num, const cl_event* list,
                                                 cl_event* event) {
    return guard("clEnqueueWriteBuffer", [&] {
        return enqueueTransfer("clEnqueueWriteBuffer", false, queue, buffer, blocking, offset, size,
                               const_cast<void*>(ptr), num, list, event);
    });
}

namespace {

/// Whether [a, a+n) and [b, b+m) overlap in the same storage.
bool overlaps(const char* a, size_t n, const char* b, size_t m) {
    return a < b + m && b < a + n;
}

} // namespace

DUET_API cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue queue, cl_mem srcBuf,
                                                cl_mem dstBuf, size_t srcOffset, size_t dstOffset,
                                                size_t size, cl_uint num, const cl_event* list,
                                                cl_event* event) {
    return guard("clEnqueueCopyBuffer", [&]() -> cl_int {
        const char* api = "clEnqueueCopyBuffer";
        cl_int err = CL_SUCCESS;
        Queue* q = checkQueue(api, queue, err);
        if (!q)
            return err;
        Mem* s = checkMem(api, q, srcBuf, "src_buffer", err);
        if (!s)
            return err;
        Mem* d = checkMem(api, q, dstBuf, "dst_buffer", err);
        if (!d)
            return err;
        if (size == 0 || srcOffset > s->size() || size > s->size() - srcOffset ||
            dstOffset > d->size() || size > d->size() - dstOffset)
            return report(api, q->context(), CL_INVALID_VALUE,
                          "offsets/size out of bounds or size is 0");
        if (cl_int e = checkWaitList(api, q->context(), num, list))
            return e;
        char* src = s->data() + srcOffset;
        char* dst = d->data() + dstOffset;
        if (overlaps(src, size, dst, size))
            return report(api, q->context(), CL_MEM_COPY_OVERLAP,
                          "source and destination regions overlap");
        return handOut(enqueueCopyBuffer(*q, retainRef(s), retainRef(d), srcOffset, dstOffset, size,
                                         submitOf(num, list, false, event)),
                       event);
    });
}

namespace {

/// Normalises and checks a rect's pitches against a memory of `limit` bytes (spec rules of
/// clEnqueueReadBufferRect). Returns empty string on success, else the reason.
std::string checkRect(const size_t* origin, const size_t* region, size_t& rowPitch,
                      size_t& slicePitch, size_t limit, const char* which) {
    if (!origin || !region)
        return std::string(which) + " origin or region is NULL";
    if (region[0] == 0 || region[1] == 0 || region[2] == 0)
        return "a region dimension is 0";
    if (rowPitch == 0)
        rowPitch = region[0];
    else if (rowPitch < region[0])
        return std::string(which) + "_row_pitch is smaller than region[0]";
    if (slicePitch == 0)
        slicePitch = region[1] * rowPitch;
    else if (slicePitch < region[1] * rowPitch || slicePitch % rowPitch)
        return std::string(which) + "_slice_pitch is smaller than region[1] * row pitch or not "
                                    "a multiple of it";
    size_t last = (origin[2] + region[2] - 1) * slicePitch +
                  (origin[1] + region[1] - 1) * rowPitch + origin[0] + region[0];
    if (last > limit)
        return std::string("the ") + which + " region is out of bounds";
    return {};
}

cl_int enqueueRect(const char* api, cl_command_type type, cl_command_queue queue, cl_mem buffer,
                   cl_bool blocking, const size_t* bufOrigin, const size_t* hostOrigin,
                   const size_t* region, size_t bufRow, size_t bufSlice, size_t hostRow,
                   size_t hostSlice, void* ptr, cl_uint num, const cl_event* list,
                   cl_event* event) {
    cl_int err = CL_SUCCESS;
    Queue* q = checkQueue(api, queue, err);
    if (!q)
        return err;
    Mem* m = checkMem(api, q, buffer, "buffer", err);
    if (!m)
        return err;
    std::string why = checkRect(bufOrigin, region, bufRow, bufSlice, m->size(), "buffer");
    if (why.empty())
        why = checkRect(hostOrigin, region, hostRow, hostSlice, ~size_t(0), "host");
    if (why.empty() && !ptr)
        why = "ptr is NULL";
    if (!why.empty())
        return report(api, q->context(), CL_INVALID_VALUE, why);
    if (cl_int e = checkWaitList(api, q->context(), num, list))
        return e;
    bool read = type == CL_COMMAND_READ_BUFFER_RECT;
    if (read ? !hostCanRead(m) : !hostCanWrite(m))
        return report(api, q->context(), CL_INVALID_OPERATION,
                      "the buffer's host access flags forbid this transfer");
    Submit how = submitOf(num, list, blocking, event);
    if (read)
        return handOut(enqueueReadBufferRect(*q, retainRef(m), bufOrigin, hostOrigin, region,
                                             bufRow, bufSlice, hostRow, hostSlice, ptr, how),
                       event);
    return handOut(enqueueWriteBufferRect(*q, retainRef(m), bufOrigin, hostOrigin, region, bufRow,
                                          bufSlice, hostRow, hostSlice, ptr, how),
                   event);
}

} // namespace

DUET_API cl_int CL_API_CALL clEnqueueReadBufferRect(cl_command_queue queue, cl_mem buffer,
                                                    cl_bool blocking, const size_t* bufOrigin,
                                                    const size_t* hostOrigin, const size_t* region,
                                                    size_t bufRow, size_t bufSlice, size_t hostRow,
                                                    size_t hostSlice, void* ptr, cl_uint num,
                                                    const cl_event* list, cl_event* event) {
    return guard("clEnqueueReadBufferRect", [&] {
        return enqueueRect("clEnqueueReadBufferRect", CL_COMMAND_READ_BUFFER_RECT, queue, buffer,
                           blocking, bufOrigin, hostOrigin, region, bufRow, bufSlice, hostRow,
                           hostSlice, ptr, num, list, event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueWriteBufferRect(cl_command_queue queue, cl_mem buffer,
                                                     cl_bool blocking, const size_t* bufOrigin,
                                                     const size_t* hostOrigin, const size_t* region,
                                                     size_t bufRow, size_t bufSlice, size_t hostRow,
                                                     size_t hostSlice, const void* ptr, cl_uint num,
                                                     const cl_event* list, cl_event* event) {
    return guard("clEnqueueWriteBufferRect", [&] {
        return enqueueRect("clEnqueueWriteBufferRect", CL_COMMAND_WRITE_BUFFER_RECT, queue, buffer,
                           blocking, bufOrigin, hostOrigin, region, bufRow, bufSlice, hostRow,
                           hostSlice, const_cast<void*>(ptr), num, list, event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueCopyBufferRect(cl_command_queue queue, cl_mem srcBuf,
                                                    cl_mem dstBuf, const size_t* srcOrigin,
                                                    const size_t* dstOrigin, const size_t* region,
                                                    size_t srcRow, size_t srcSlice, size_t dstRow,
                                                    size_t dstSlice, cl_uint num,
                                                    const cl_event* list, cl_event* event) {
    return guard("clEnqueueCopyBufferRect", [&]() -> cl_int {
        const char* api = "clEnqueueCopyBufferRect";
        cl_int err = CL_SUCCESS;
        Queue* q = checkQueue(api, queue, err);
        if (!q)
            return err;
        Mem* s = checkMem(api, q, srcBuf, "src_buffer", err);
        if (!s)
            return err;
        Mem* d = checkMem(api, q, dstBuf, "dst_buffer", err);
        if (!d)
            return err;
        std::string why = checkRect(srcOrigin, region, srcRow, srcSlice, s->size(), "src");
        if (why.empty())
            why = checkRect(dstOrigin, region, dstRow, dstSlice, d->size(), "dst");
        if (why.empty() && s == d && (srcRow != dstRow || srcSlice != dstSlice))
            why = "src and dst are the same buffer but their pitches differ";
        if (!why.empty())
            return report(api, q->context(), CL_INVALID_VALUE, why);
        if (cl_int e = checkWaitList(api, q->context(), num, list))
            return e;
        if (s->data() == d->data() ||
            (s->parent() ? s->parent() : s) == (d->parent() ? d->parent() : d)) {
            // Same storage: overlap if any pair of rows overlaps (spec: CL_MEM_COPY_OVERLAP).
            for (size_t z = 0; z < region[2]; ++z)
                for (size_t y = 0; y < region[1]; ++y) {
                    const char* a = s->data() + (srcOrigin[2] + z) * srcSlice +
                                    (srcOrigin[1] + y) * srcRow + srcOrigin[0];
                    for (size_t z2 = 0; z2 < region[2]; ++z2)
                        for (size_t y2 = 0; y2 < region[1]; ++y2) {
                            const char* b = d->data() + (dstOrigin[2] + z2) * dstSlice +
                                            (dstOrigin[1] + y2) * dstRow + dstOrigin[0];
                            if (overlaps(a, region[0], b, region[0]))
                                return report(api, q->context(), CL_MEM_COPY_OVERLAP,
                                              "source and destination regions overlap");
                        }
                }
        }
        return handOut(enqueueCopyBufferRect(*q, retainRef(s), retainRef(d), srcOrigin, dstOrigin,
                                             region, srcRow, srcSlice, dstRow, dstSlice,
                                             submitOf(num, list, false, event)),
                       event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue queue, cl_mem buffer,
                                                const void* pattern, size_t patternSize,
                                                size_t offset, size_t size, cl_uint num,
                                                const cl_event* list, cl_event* event) {
    return guard("clEnqueueFillBuffer", [&]() -> cl_int {
        const char* api = "clEnqueueFillBuffer";
        cl_int err = CL_SUCCESS;
        Queue* q = checkQueue(api, queue, err);
        if (!q)
            return err;
        Mem* m = checkMem(api, q, buffer, "buffer", err);
        if (!m)
            return err;
        if (!pattern || patternSize == 0 || patternSize > 128 || (patternSize & (patternSize - 1)))
            return report(api, q->context(), CL_INVALID_VALUE,
                          "pattern is NULL or pattern_size is not one of 1, 2, 4, ..., 128");
        if (offset % patternSize || size % patternSize || offset > m->size() ||
            size > m->size() - offset)
            return report(api, q->context(), CL_INVALID_VALUE,
                          "offset/size out of bounds or not multiples of pattern_size");
        if (cl_int e = checkWaitList(api, q->context(), num, list))
            return e;
        return handOut(enqueueFillBuffer(*q, retainRef(m), pattern, patternSize, offset, size,
                                         submitOf(num, list, false, event)),
                       event);
    });
}

DUET_API void* CL_API_CALL clEnqueueMapBuffer(cl_command_queue queue, cl_mem buffer,
                                              cl_bool blocking, cl_map_flags flags, size_t offset,
                                              size_t size, cl_uint num, const cl_event* list,
                                              cl_event* event, cl_int* errcodeRet) {
    Call call("clEnqueueMapBuffer", errcodeRet);
    return guardHandle<void>(call, [&]() -> void* {
        const char* api = call.api();
        Queue* q = hostQueue(queue);
        if (!q)
            return call.fail(CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
        call.setContext(q->context());
        Mem* m = from<Mem>(buffer);
        if (!m || m->type() != CL_MEM_OBJECT_BUFFER)
            return call.fail(CL_INVALID_MEM_OBJECT, "buffer is not a valid buffer");
        if (m->context() != q->context())
            return call.fail(CL_INVALID_CONTEXT, "buffer belongs to another context");
        if (offset > m->size() || size > m->size() - offset || size == 0)
            return call.fail(CL_INVALID_VALUE, "offset/size out of bounds or size is 0");
        if (std::string why = badMapFlags(flags); !why.empty())
            return call.fail(CL_INVALID_VALUE, why);
        if (cl_int e = checkWaitList(api, q->context(), num, list)) {
            if (errcodeRet)
                *errcodeRet = e;
            return nullptr;
        }
        if (std::string why = mapForbidden(flags, m, "a buffer"); !why.empty())
            return call.fail(CL_INVALID_OPERATION, why);
        if (m->glUnacquired())
            return call.fail(CL_INVALID_OPERATION, "buffer was created from a GL object that is "
                                                   "not acquired (clEnqueueAcquireGLObjects)");
        // The map hands out the buffer's host storage. A GL buffer shared in place lives in GL's
        // mapping once its acquire has run: wait for that.
        duet::rt::gl::settleStorage(m);
        Mapped mapped = enqueueMapBuffer(*q, retainRef(m), flags, offset, size,
                                         submitOf(num, list, blocking, event));
        void* ptr = mapped.ptr;
        if (cl_int st = handOut(std::move(mapped), event); st != CL_SUCCESS)
            return call.fail(st, "a command in the wait list failed");
        return call.ok(ptr);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue queue, cl_mem mem, void* ptr,
                                                    cl_uint num, const cl_event* list,
                                                    cl_event* event) {
    return guard("clEnqueueUnmapMemObject", [&]() -> cl_int {
        const char* api = "clEnqueueUnmapMemObject";
        cl_int err = CL_SUCCESS;
        Queue* q = checkQueue(api, queue, err);
        if (!q)
            return err;
        Mem* m = checkMem(api, q, mem, "memobj", err, false);
        if (!m)
            return err;
        char* base = m->hostData(); // where maps point
        size_t extent = m->isImage() ? m->slicePitch * std::max<size_t>(1, m->desc.image_depth) *
                                           std::max<size_t>(1, m->desc.image_array_size)
                                     : m->size();
        if (!ptr || static_cast<char*>(ptr) < base ||
            static_cast<char*>(ptr) >= base + std::max<size_t>(extent, 1))
            return report(api, q->context(), CL_INVALID_VALUE,
                          "mapped_ptr was not returned by a map of this memory object");
        if (cl_int e = checkWaitList(api, q->context(), num, list))
            return e;
        return handOut(enqueueUnmap(*q, retainRef(m), ptr, submitOf(num, list, false, event)),
                       event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueMigrateMemObjects(cl_command_queue queue, cl_uint numMem,
                                                       const cl_mem* mems,
                                                       cl_mem_migration_flags flags, cl_uint num,
                                                       const cl_event* list, cl_event* event) {
    return guard("clEnqueueMigrateMemObjects", [&]() -> cl_int {
        const char* api = "clEnqueueMigrateMemObjects";
        cl_int err = CL_SUCCESS;
        Queue* q = checkQueue(api, queue, err);
        if (!q)
            return err;
        if (numMem == 0 || !mems)
            return report(api, q->context(), CL_INVALID_VALUE,
                          "num_mem_objects is 0 or mem_objects is NULL");
        for (cl_uint i = 0; i < numMem; ++i)
            if (!checkMem(api, q, mems[i], "mem_objects[i]", err, false))
                return err;
        if (flags & ~cl_mem_migration_flags(CL_MIGRATE_MEM_OBJECT_HOST |
                                            CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))
            return report(api, q->context(), CL_INVALID_VALUE, "unknown flags bits");
        if (cl_int e = checkWaitList(api, q->context(), num, list))
            return e;
        std::span<Mem* const> objects(reinterpret_cast<Mem* const*>(mems), numMem);
        return handOut(enqueueMigrate(*q, objects, flags, submitOf(num, list, false, event)),
                       event);
    });
}
