// Shared helpers of the API shims: handle checks, info answers, error reporting.
#pragma once

#include "core/commands.hpp"
#include "core/context.hpp"
#include "core/result.hpp"
#include "core/object.hpp"

#include <CL/cl.h>

#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

namespace duet::api {

using namespace duet::rt;

/// The object behind a handle if it is a live object of type T, else null.
template <class T, class H> T* from(H handle) {
    if (!handle)
        return nullptr;
    auto* o = static_cast<Object*>(handle);
    return o->alive(T::kTag) ? static_cast<T*>(o) : nullptr;
}

/// The queue behind a handle if it is a live host command-queue; null for an on-device queue
/// (CL_QUEUE_ON_DEVICE: the host enqueues nothing there, so enqueue calls, clFlush and clFinish
/// answer CL_INVALID_COMMAND_QUEUE as for any handle that is not a valid host command-queue).
rt::Queue* hostQueue(cl_command_queue queue);

/// Name of an error code ("CL_INVALID_VALUE").
const char* errorName(cl_int code);

/// Reports a failed call: DUET_LOG to stderr and the context's notify callback. Returns code.
cl_int report(const char* api, const Context* ctx, cl_int code, const std::string& reason);

/// For entry points returning a handle: writes errcode_ret and reports failures.
class Call {
public:
    Call(const char* api, cl_int* errcodeRet) : m_api(api), m_errcodeRet(errcodeRet) {}
    void setContext(const Context* c) { m_ctx = c; }
    /// Reports and returns null (for `return call.fail(...)` in handle-returning shims).
    /// Context creation: failures also go to the application's pfn_notify ("errors during
    /// context creation", as the spec allows), there being no context to report through.
    void setCreationNotify(ContextNotifyFn notify, void* userData) {
        m_notify = notify;
        m_userData = userData;
    }
    std::nullptr_t fail(cl_int code, const std::string& reason) {
        report(m_api, m_ctx, code, reason);
        if (m_notify) {
            const std::string message = std::string(m_api) + ": " + errorName(code) + ": " + reason;
            m_notify(message.c_str(), nullptr, 0, m_userData);
        }
        if (m_errcodeRet)
            *m_errcodeRet = code;
        return nullptr;
    }
    std::nullptr_t fail(const Error& e) { return fail(e.code, e.message); }
    template <class T> T* ok(T* result) {
        if (m_errcodeRet)
            *m_errcodeRet = CL_SUCCESS;
        return result;
    }
    const char* api() const { return m_api; }

private:
    const char* m_api;
    cl_int* m_errcodeRet;
    const Context* m_ctx = nullptr;
    ContextNotifyFn m_notify = nullptr;
    void* m_userData = nullptr;
};

/// Runs a shim body, turning allocation failure into CL_OUT_OF_HOST_MEMORY.
template <class F> cl_int guard(const char* api, F&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return report(api, nullptr, CL_OUT_OF_HOST_MEMORY, "out of host memory");
    } catch (...) {
        return report(api, nullptr, CL_OUT_OF_RESOURCES, "internal error");
    }
}
template <class R, class F> R* guardHandle(Call& call, F&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return call.fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
    } catch (...) {
        return call.fail(CL_OUT_OF_RESOURCES, "internal error");
    }
}

/// clGet*Info answer rules: size check, copy, size_ret.
inline cl_int writeInfo(size_t size, void* value, size_t* sizeRet, const void* src,
                        size_t srcSize) {
    if (value) {
        if (size < srcSize)
            return CL_INVALID_VALUE;
        if (srcSize)
            std::memcpy(value, src, srcSize);
    }
    if (sizeRet)
        *sizeRet = srcSize;
    return CL_SUCCESS;
}
template <class T> cl_int infoValue(size_t size, void* value, size_t* sizeRet, const T& v) {
    return writeInfo(size, value, sizeRet, &v, sizeof(T));
}
inline cl_int infoString(size_t size, void* value, size_t* sizeRet, const std::string& s) {
    return writeInfo(size, value, sizeRet, s.c_str(), s.size() + 1);
}
template <class T>
cl_int infoVector(size_t size, void* value, size_t* sizeRet, const std::vector<T>& v) {
    return writeInfo(size, value, sizeRet, v.data(), v.size() * sizeof(T));
}

/// The SVM capabilities of any device of `ctx`, or-ed together (0: no device supports SVM).
cl_device_svm_capabilities contextSvmCapabilities(const Context& ctx);

/// Checks an event wait list (spec order: null/count mismatch, then each event's validity
/// and context). Returns CL_SUCCESS or the error, reported.
cl_int checkWaitList(const char* api, const Context* ctx, cl_uint num, const cl_event* list);

} // namespace duet::api

/// Marks an OpenCL entry point for export (the rest of the library is hidden).
#define DUET_API extern "C" __attribute__((visibility("default")))

namespace duet::rt {
class Mem;
class Queue;
} // namespace duet::rt

namespace duet::api {

/// Memory-object checks shared by the buffer and image entry points (api/memory.cpp).
/// CL_INVALID_VALUE with `why` for conflicting or unknown cl_mem_flags, else CL_SUCCESS.
cl_int checkMemFlags(cl_mem_flags flags, std::string& why);
/// The queue behind a handle, or null with `err` reported.
Queue* checkQueue(const char* api, cl_command_queue queue, cl_int& err);
/// A memory object of the queue's context (a buffer unless `wantBuffer` is false), or null
/// with `err` reported.
Mem* checkMem(const char* api, Queue* q, cl_mem mem, const char* what, cl_int& err,
              bool wantBuffer = true);
bool hostCanRead(const Mem* m);
bool hostCanWrite(const Mem* m);
/// Why map_flags are invalid (CL_INVALID_VALUE); empty when they are fine.
std::string badMapFlags(cl_map_flags flags);
/// Why the host access flags of `m` forbid this map (CL_INVALID_OPERATION); empty if allowed.
std::string mapForbidden(cl_map_flags flags, const Mem* m, const char* what);

/// The Submit of an enqueue's checked wait list, blocking flag and event argument.
inline Submit submitOf(cl_uint numEvents, const cl_event* waitList, bool blocking,
                       const cl_event* eventOut) {
    return {{reinterpret_cast<Event* const*>(waitList), numEvents}, blocking, eventOut != nullptr};
}
/// Hands an enqueued command's event out through `eventOut` (when not null); returns the
/// enqueue's status.
inline cl_int handOut(Enqueued enqueued, cl_event* eventOut) {
    if (eventOut)
        *eventOut = enqueued.event.detach();
    return enqueued.status;
}

/// Enqueues `run` on `queue` after the wait list (core's enqueueCommand); hands the event out
/// and, when blocking, waits for it. The wait list must have been checked.
cl_int submit(Queue* queue, cl_command_type type, cl_uint numEvents, const cl_event* waitList,
              cl_event* eventOut, bool blocking, std::function<cl_int()> run, bool fence = false);

} // namespace duet::api
