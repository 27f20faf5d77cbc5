// SVM and pipe entry points. SVM: clSVMAlloc/Free and the clEnqueueSVM* commands for devices
// that report CL_DEVICE_SVM_CAPABILITIES (core/svm.hpp keeps the allocations). Pipes: no device
// supports them (CL_DEVICE_PIPE_SUPPORT is CL_FALSE), so each answers with the spec's error.
#include "api/api.hpp"
#include "core/memory.hpp"
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
    Queue* q = from<Queue>(queue);
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

DUET_API cl_mem CL_API_CALL clCreatePipe(cl_context context, cl_mem_flags, cl_uint, cl_uint,
                                         const cl_pipe_properties*, cl_int* errcodeRet) {
    Call call("clCreatePipe", errcodeRet);
    Context* c = from<Context>(context);
    if (!c)
        return call.fail(CL_INVALID_CONTEXT, "not a valid context");
    call.setContext(c);
    return call.fail(CL_INVALID_OPERATION,
                     "no device supports pipes (CL_DEVICE_PIPE_SUPPORT is CL_FALSE)");
}

DUET_API cl_int CL_API_CALL clGetPipeInfo(cl_mem pipe, cl_pipe_info, size_t, void*, size_t*) {
    Mem* m = from<Mem>(pipe);
    return report("clGetPipeInfo", m ? m->context() : nullptr, CL_INVALID_MEM_OBJECT,
                  "not a pipe object");
}
