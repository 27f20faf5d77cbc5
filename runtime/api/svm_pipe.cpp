// SVM and pipe entry points: no device supports them (CL_DEVICE_SVM_CAPABILITIES is 0,
// CL_DEVICE_PIPE_SUPPORT is CL_FALSE), so each answers with the spec's error for that case.
#include "api/api.hpp"
#include "core/memory.hpp"
#include "core/queue.hpp"

using namespace duet::api;

namespace {
cl_int noSvm(const char* api, cl_command_queue queue) {
    Queue* q = from<Queue>(queue);
    if (!q)
        return report(api, nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
    return report(api, q->context(), CL_INVALID_OPERATION,
                  "no device supports SVM (CL_DEVICE_SVM_CAPABILITIES is 0)");
}
} // namespace

DUET_API void* CL_API_CALL clSVMAlloc(cl_context context, cl_svm_mem_flags, size_t, cl_uint) {
    Context* c = from<Context>(context);
    report("clSVMAlloc", c, CL_INVALID_OPERATION,
           "no device supports SVM (CL_DEVICE_SVM_CAPABILITIES is 0)");
    return nullptr;
}

DUET_API void CL_API_CALL clSVMFree(cl_context, void*) {}

DUET_API cl_int CL_API_CALL clEnqueueSVMFree(cl_command_queue queue, cl_uint, void**,
                                             void(CL_CALLBACK*)(cl_command_queue, cl_uint, void**,
                                                                void*),
                                             void*, cl_uint, const cl_event*, cl_event*) {
    return noSvm("clEnqueueSVMFree", queue);
}

DUET_API cl_int CL_API_CALL clEnqueueSVMMemcpy(cl_command_queue queue, cl_bool, void*, const void*,
                                               size_t, cl_uint, const cl_event*, cl_event*) {
    return noSvm("clEnqueueSVMMemcpy", queue);
}

DUET_API cl_int CL_API_CALL clEnqueueSVMMemFill(cl_command_queue queue, void*, const void*, size_t,
                                                size_t, cl_uint, const cl_event*, cl_event*) {
    return noSvm("clEnqueueSVMMemFill", queue);
}

DUET_API cl_int CL_API_CALL clEnqueueSVMMap(cl_command_queue queue, cl_bool, cl_map_flags, void*,
                                            size_t, cl_uint, const cl_event*, cl_event*) {
    return noSvm("clEnqueueSVMMap", queue);
}

DUET_API cl_int CL_API_CALL clEnqueueSVMUnmap(cl_command_queue queue, void*, cl_uint,
                                              const cl_event*, cl_event*) {
    return noSvm("clEnqueueSVMUnmap", queue);
}

DUET_API cl_int CL_API_CALL clEnqueueSVMMigrateMem(cl_command_queue queue, cl_uint, const void**,
                                                   const size_t*, cl_mem_migration_flags, cl_uint,
                                                   const cl_event*, cl_event*) {
    return noSvm("clEnqueueSVMMigrateMem", queue);
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
