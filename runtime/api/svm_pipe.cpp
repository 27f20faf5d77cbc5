// SVM and pipe entry points. SVM: clSVMAlloc/Free and the clEnqueueSVM* commands for devices
// that report CL_DEVICE_SVM_CAPABILITIES (core/svm.hpp keeps the allocations). Pipes:
// clCreatePipe and clGetPipeInfo for contexts with a device that reports CL_DEVICE_PIPE_SUPPORT
// (core/pipe.hpp lays out the storage the builtin library's pipe functions work on).
#include "api/api.hpp"
#include "core/memory.hpp"
#include "core/pipe.hpp"
#include "core/queue.hpp"
#include "core/svm.hpp"

#include <algorithm>

using namespace duet::api;

namespace duet::api {

cl_device_svm_capabilities contextSvmCapabilities(const Context& ctx) {
    cl_device_svm_capabilities caps = 0;
    for (const Device* d : ctx.devices())
        caps |= d->info().svmCapabilities;
    return caps;
}

} // namespace duet::api

namespace {

/// The queue of an SVM command, or null with `err` reported: CL_INVALID_COMMAND_QUEUE, and
/// CL_INVALID_OPERATION when the queue's device does not support SVM.
Queue* svmQueue(const char* api, cl_command_queue queue, cl_int& err) {
    Queue* q = hostQueue(queue);
    if (!q) {
        err = report(api, nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
        return nullptr;
    }
    if (!q->device()->info().svmCapabilities) {
        err = report(api, q->context(), CL_INVALID_OPERATION,
                     q->device()->info().name +
                         " does not support SVM (CL_DEVICE_SVM_CAPABILITIES is 0)");
        return nullptr;
    }
    return q;
}

/// Why `p` cannot be used with `q` (a pointer into another context's SVM allocation, or, where
/// the device has no fine-grain system SVM, no SVM allocation of the context at all); empty
/// when it can.
std::string foreignPointer(const Queue& q, const void* p, const char* what) {
    std::optional<SvmAllocation> a = svmFind(p);
    if (a && a->context != q.context())
        return std::string(what) + " points into an SVM allocation of another context";
    if (!a && !(q.device()->info().svmCapabilities & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM))
        return std::string(what) + " is not inside an SVM allocation of the queue's context";
    return {};
}

} // namespace

DUET_API void* CL_API_CALL clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size,
                                      cl_uint alignment) {
    const char* api = "clSVMAlloc";
    try {
        Context* c = from<Context>(context);
        // The spec's failures all return NULL; the reason goes to the context's callback.
        if (!c) {
            report(api, nullptr, CL_INVALID_CONTEXT, "not a valid context");
            return nullptr;
        }
        const cl_device_svm_capabilities caps = contextSvmCapabilities(*c);
        if (!caps) {
            report(api, c, CL_INVALID_OPERATION,
                   "no device of the context supports SVM (CL_DEVICE_SVM_CAPABILITIES is 0)");
            return nullptr;
        }
        const cl_svm_mem_flags known = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY |
                                       CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;
        std::string why;
        if (flags & ~known)
            why = "unknown cl_svm_mem_flags bits";
        else if (__builtin_popcountll(
                     flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY)) > 1)
            why = "more than one of CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, CL_MEM_READ_ONLY";
        else if ((flags & CL_MEM_SVM_ATOMICS) && !(flags & CL_MEM_SVM_FINE_GRAIN_BUFFER))
            why = "CL_MEM_SVM_ATOMICS without CL_MEM_SVM_FINE_GRAIN_BUFFER";
        else if ((flags & CL_MEM_SVM_FINE_GRAIN_BUFFER) &&
                 !(caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER))
            why = "CL_MEM_SVM_FINE_GRAIN_BUFFER but no device of the context supports "
                  "fine-grain buffer SVM";
        else if ((flags & CL_MEM_SVM_ATOMICS) && !(caps & CL_DEVICE_SVM_ATOMICS))
            why = "CL_MEM_SVM_ATOMICS but no device of the context supports SVM atomics";
        if (!why.empty()) {
            report(api, c, CL_INVALID_VALUE, why);
            return nullptr;
        }
        cl_ulong maxAlloc = ~cl_ulong(0);
        for (const Device* d : c->devices())
            maxAlloc = std::min(maxAlloc, d->info().maxMemAllocSize);
        if (size == 0 || size > maxAlloc) {
            report(api, c, CL_INVALID_VALUE,
                   size == 0 ? "size is 0"
                             : "size exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                                   std::to_string(maxAlloc) + ")");
            return nullptr;
        }
        if ((alignment & (alignment - 1)) || alignment > kSvmMaxAlignment) {
            report(api, c, CL_INVALID_VALUE,
                   "alignment " + std::to_string(alignment) +
                       " is not a power of two or exceeds the largest supported (" +
                       std::to_string(kSvmMaxAlignment) + ")");
            return nullptr;
        }
        void* p = svmAllocate(*c, flags, size, alignment);
        if (!p)
            report(api, c, CL_OUT_OF_HOST_MEMORY,
                   "could not allocate " + std::to_string(size) + " bytes");
        return p;
    } catch (const std::bad_alloc&) {
        report(api, nullptr, CL_OUT_OF_HOST_MEMORY, "out of host memory");
        return nullptr;
    }
}

DUET_API void CL_API_CALL clSVMFree(cl_context context, void* ptr) {
    const char* api = "clSVMFree";
    Context* c = from<Context>(context);
    if (!c) {
        report(api, nullptr, CL_INVALID_CONTEXT, "not a valid context");
        return;
    }
    if (ptr && !svmFree(*c, ptr))
        report(api, c, CL_INVALID_VALUE,
               "svm_pointer was not returned by clSVMAlloc for this context (nothing freed)");
}

DUET_API cl_int CL_API_CALL clEnqueueSVMFree(cl_command_queue queue, cl_uint num, void** pointers,
                                             void(CL_CALLBACK* fn)(cl_command_queue, cl_uint,
                                                                   void**, void*),
                                             void* userData, cl_uint numEvents,
                                             const cl_event* list, cl_event* event) {
    return guard("clEnqueueSVMFree", [&]() -> cl_int {
        const char* api = "clEnqueueSVMFree";
        cl_int err;
        Queue* q = svmQueue(api, queue, err);
        if (!q)
            return err;
        // CL_INVALID_VALUE: the count and the array disagree.
        if ((num == 0) != (pointers == nullptr))
            return report(api, q->context(), CL_INVALID_VALUE,
                          "num_svm_pointers is 0 with svm_pointers given, or svm_pointers is "
                          "NULL with num_svm_pointers not 0");
        std::vector<void*> list2(pointers, pointers + num);
        if (!fn)
            for (void* p : list2) {
                if (!p)
                    continue;
                std::optional<SvmAllocation> a = svmFind(p);
                if (!a || a->context != q->context() || a->base != p)
                    return report(api, q->context(), CL_INVALID_VALUE,
                                  "svm_pointers holds a pointer that clSVMAlloc did not return "
                                  "for the queue's context");
            }
        if (cl_int e = checkWaitList(api, q->context(), numEvents, list))
            return e;
        return handOut(enqueueSvmFree(*q, std::move(list2), fn, userData,
                                      submitOf(numEvents, list, false, event)),
                       event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueSVMMemcpy(cl_command_queue queue, cl_bool blocking, void* dst,
                                               const void* src, size_t size, cl_uint numEvents,
                                               const cl_event* list, cl_event* event) {
    return guard("clEnqueueSVMMemcpy", [&]() -> cl_int {
        const char* api = "clEnqueueSVMMemcpy";
        cl_int err;
        Queue* q = svmQueue(api, queue, err);
        if (!q)
            return err;
        // CL_INVALID_VALUE: dst_ptr or src_ptr is NULL.
        if (!dst || !src)
            return report(api, q->context(), CL_INVALID_VALUE, "dst_ptr or src_ptr is NULL");
        for (auto [p, what] :
             {std::pair<const void*, const char*>{dst, "dst_ptr"}, {src, "src_ptr"}})
            if (std::optional<SvmAllocation> a = svmFind(p); a && a->context != q->context())
                return report(api, q->context(), CL_INVALID_VALUE,
                              std::string(what) +
                                  " points into an SVM allocation of another context");
        // CL_MEM_COPY_OVERLAP
        auto d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
        if (size && d < s + size && s < d + size)
            return report(api, q->context(), CL_MEM_COPY_OVERLAP,
                          "the source and destination ranges overlap");
        if (cl_int e = checkWaitList(api, q->context(), numEvents, list))
            return e;
        return handOut(
            enqueueSvmMemcpy(*q, dst, src, size, submitOf(numEvents, list, blocking, event)),
            event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueSVMMemFill(cl_command_queue queue, void* ptr,
                                                const void* pattern, size_t patternSize,
                                                size_t size, cl_uint numEvents,
                                                const cl_event* list, cl_event* event) {
    return guard("clEnqueueSVMMemFill", [&]() -> cl_int {
        const char* api = "clEnqueueSVMMemFill";
        cl_int err;
        Queue* q = svmQueue(api, queue, err);
        if (!q)
            return err;
        // CL_INVALID_VALUE: svm_ptr NULL or misaligned, pattern NULL, pattern_size not a
        // power of two up to 128, size not a multiple of pattern_size.
        if (!ptr)
            return report(api, q->context(), CL_INVALID_VALUE, "svm_ptr is NULL");
        if (!pattern || patternSize == 0 || patternSize > 128 || (patternSize & (patternSize - 1)))
            return report(api, q->context(), CL_INVALID_VALUE,
                          "pattern is NULL or pattern_size is not one of 1, 2, 4, ..., 128");
        if (reinterpret_cast<uintptr_t>(ptr) % patternSize)
            return report(api, q->context(), CL_INVALID_VALUE,
                          "svm_ptr is not aligned to pattern_size");
        if (size % patternSize)
            return report(api, q->context(), CL_INVALID_VALUE,
                          "size is not a multiple of pattern_size");
        if (std::string why = foreignPointer(*q, ptr, "svm_ptr"); !why.empty())
            return report(api, q->context(), CL_INVALID_VALUE, why);
        if (cl_int e = checkWaitList(api, q->context(), numEvents, list))
            return e;
        return handOut(enqueueSvmMemFill(*q, ptr, pattern, patternSize, size,
                                         submitOf(numEvents, list, false, event)),
                       event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueSVMMap(cl_command_queue queue, cl_bool blocking,
                                            cl_map_flags flags, void* ptr, size_t size,
                                            cl_uint numEvents, const cl_event* list,
                                            cl_event* event) {
    return guard("clEnqueueSVMMap", [&]() -> cl_int {
        const char* api = "clEnqueueSVMMap";
        cl_int err;
        Queue* q = svmQueue(api, queue, err);
        if (!q)
            return err;
        // CL_INVALID_VALUE: svm_ptr NULL, size 0, bad map_flags.
        if (!ptr || size == 0)
            return report(api, q->context(), CL_INVALID_VALUE, "svm_ptr is NULL or size is 0");
        if (std::string why = badMapFlags(flags); !why.empty())
            return report(api, q->context(), CL_INVALID_VALUE, why);
        if (std::string why = foreignPointer(*q, ptr, "svm_ptr"); !why.empty())
            return report(api, q->context(), CL_INVALID_VALUE, why);
        if (std::optional<SvmAllocation> a = svmFind(ptr);
            a && size > size_t(a->base + a->size - static_cast<char*>(ptr)))
            return report(api, q->context(), CL_INVALID_VALUE,
                          "svm_ptr + size runs past the end of its SVM allocation");
        if (cl_int e = checkWaitList(api, q->context(), numEvents, list))
            return e;
        return handOut(
            enqueueSvmOrderOnly(*q, CL_COMMAND_SVM_MAP, submitOf(numEvents, list, blocking, event)),
            event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueSVMUnmap(cl_command_queue queue, void* ptr, cl_uint numEvents,
                                              const cl_event* list, cl_event* event) {
    return guard("clEnqueueSVMUnmap", [&]() -> cl_int {
        const char* api = "clEnqueueSVMUnmap";
        cl_int err;
        Queue* q = svmQueue(api, queue, err);
        if (!q)
            return err;
        // CL_INVALID_VALUE: svm_ptr NULL.
        if (!ptr)
            return report(api, q->context(), CL_INVALID_VALUE, "svm_ptr is NULL");
        if (std::string why = foreignPointer(*q, ptr, "svm_ptr"); !why.empty())
            return report(api, q->context(), CL_INVALID_VALUE, why);
        if (cl_int e = checkWaitList(api, q->context(), numEvents, list))
            return e;
        return handOut(
            enqueueSvmOrderOnly(*q, CL_COMMAND_SVM_UNMAP, submitOf(numEvents, list, false, event)),
            event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueSVMMigrateMem(cl_command_queue queue, cl_uint num,
                                                   const void** pointers, const size_t* sizes,
                                                   cl_mem_migration_flags flags, cl_uint numEvents,
                                                   const cl_event* list, cl_event* event) {
    return guard("clEnqueueSVMMigrateMem", [&]() -> cl_int {
        const char* api = "clEnqueueSVMMigrateMem";
        cl_int err;
        Queue* q = svmQueue(api, queue, err);
        if (!q)
            return err;
        // CL_INVALID_VALUE: no pointers, unknown flags, a range outside every SVM allocation
        // of the context.
        if (num == 0 || !pointers)
            return report(api, q->context(), CL_INVALID_VALUE,
                          "num_svm_pointers is 0 or svm_pointers is NULL");
        if (flags & ~cl_mem_migration_flags(CL_MIGRATE_MEM_OBJECT_HOST |
                                            CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))
            return report(api, q->context(), CL_INVALID_VALUE, "unknown flags bits");
        for (cl_uint i = 0; i < num; ++i) {
            std::optional<SvmAllocation> a = pointers[i] ? svmFind(pointers[i]) : std::nullopt;
            const std::string at = "svm_pointers[" + std::to_string(i) + "]";
            if (!a || a->context != q->context())
                return report(api, q->context(), CL_INVALID_VALUE,
                              at + " is not inside an SVM allocation of the queue's context");
            const size_t n = sizes ? sizes[i] : 0;
            if (n > size_t(a->base + a->size - static_cast<const char*>(pointers[i])))
                return report(api, q->context(), CL_INVALID_VALUE,
                              at + " + sizes[" + std::to_string(i) +
                                  "] runs past the end of its SVM allocation");
        }
        if (cl_int e = checkWaitList(api, q->context(), numEvents, list))
            return e;
        return handOut(enqueueSvmOrderOnly(*q, CL_COMMAND_SVM_MIGRATE_MEM,
                                           submitOf(numEvents, list, false, event)),
                       event);
    });
}

DUET_API cl_mem CL_API_CALL clCreatePipe(cl_context context, cl_mem_flags flags, cl_uint packetSize,
                                         cl_uint maxPackets, const cl_pipe_properties* properties,
                                         cl_int* errcodeRet) {
    Call call("clCreatePipe", errcodeRet);
    return guardHandle<_cl_mem>(call, [&]() -> cl_mem {
        // CL_INVALID_CONTEXT
        Context* c = from<Context>(context);
        if (!c)
            return call.fail(CL_INVALID_CONTEXT, "not a valid context");
        call.setContext(c);
        // CL_INVALID_OPERATION: "if no devices in context support pipes".
        cl_uint maxPacketSize = 0;
        for (const Device* d : c->devices())
            if (d->info().pipeSupport)
                maxPacketSize = std::max(maxPacketSize, d->info().pipeMaxPacketSize);
        if (!maxPacketSize)
            return call.fail(CL_INVALID_OPERATION, "no device of the context supports pipes "
                                                   "(CL_DEVICE_PIPE_SUPPORT is CL_FALSE)");
        // CL_INVALID_VALUE: "Only CL_MEM_READ_WRITE and CL_MEM_HOST_NO_ACCESS can be specified
        // when creating a pipe object"; 0 means both.
        if (flags & ~cl_mem_flags(CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS))
            return call.fail(CL_INVALID_VALUE, "flags may hold only CL_MEM_READ_WRITE and "
                                               "CL_MEM_HOST_NO_ACCESS for a pipe");
        if (flags == 0)
            flags = CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS; // CL_MEM_FLAGS reports the default
        // CL_INVALID_VALUE: properties must be NULL (no pipe properties are defined; an empty
        // list, a lone 0, is accepted as meaning the same).
        if (properties && *properties)
            return call.fail(CL_INVALID_VALUE, "properties must be NULL: OpenCL defines no pipe "
                                               "properties");
        // CL_INVALID_PIPE_SIZE: packet size 0 or above CL_DEVICE_PIPE_MAX_PACKET_SIZE of every
        // device, or max packets 0.
        if (packetSize == 0 || packetSize > maxPacketSize)
            return call.fail(CL_INVALID_PIPE_SIZE,
                             "pipe_packet_size " + std::to_string(packetSize) +
                                 (packetSize ? " exceeds CL_DEVICE_PIPE_MAX_PACKET_SIZE (" +
                                                   std::to_string(maxPacketSize) + ")"
                                             : " is 0"));
        if (maxPackets == 0)
            return call.fail(CL_INVALID_PIPE_SIZE, "pipe_max_packets is 0");
        // CL_MEM_OBJECT_ALLOCATION_FAILURE: more than a memory object may hold.
        cl_ulong maxAlloc = ~cl_ulong(0);
        for (const Device* d : c->devices())
            maxAlloc = std::min(maxAlloc, d->info().maxMemAllocSize);
        const size_t bytes = pipeStorageSize(packetSize, maxPackets);
        if (maxPackets > kPipeMaxPackets || bytes == 0 || bytes > maxAlloc)
            return call.fail(CL_MEM_OBJECT_ALLOCATION_FAILURE,
                             std::to_string(maxPackets) + " packets of " +
                                 std::to_string(packetSize) +
                                 " bytes exceed CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                                 std::to_string(maxAlloc) + ") or 2^29 packets");
        Result<Mem*> pipe = createPipe(*c, flags, packetSize, maxPackets);
        if (!pipe)
            return call.fail(pipe.error());
        return call.ok(*pipe);
    });
}

DUET_API cl_int CL_API_CALL clGetPipeInfo(cl_mem pipe, cl_pipe_info param, size_t size, void* value,
                                          size_t* sizeRet) {
    return guard("clGetPipeInfo", [&]() -> cl_int {
        const char* api = "clGetPipeInfo";
        // CL_INVALID_MEM_OBJECT: not a valid pipe object.
        Mem* m = from<Mem>(pipe);
        if (!m || m->type() != CL_MEM_OBJECT_PIPE)
            return report(api, m ? m->context() : nullptr, CL_INVALID_MEM_OBJECT,
                          "not a pipe object");
        cl_int r;
        switch (param) {
        case CL_PIPE_PACKET_SIZE:
            r = infoValue<cl_uint>(size, value, sizeRet, m->pipePacketSize);
            break;
        case CL_PIPE_MAX_PACKETS:
            r = infoValue<cl_uint>(size, value, sizeRet, m->pipeMaxPackets);
            break;
        case CL_PIPE_PROPERTIES:
            // Created with NULL properties: the answer is empty (size 0).
            r = writeInfo(size, value, sizeRet, nullptr, 0);
            break;
        default:
            // CL_INVALID_VALUE: param_name is not a pipe query.
            return report(api, m->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        // CL_INVALID_VALUE: param_value_size smaller than the answer.
        if (r != CL_SUCCESS)
            return report(api, m->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}
