// Error names and the reporting path (DUET_LOG, context notify callback).
#include "api/api.hpp"

#include "core/event.hpp"

#include <cstdio>
#include <cstdlib>

namespace duet::api {

const char* errorName(cl_int code) {
    switch (code) {
#define E(x)                                                                                   \
    case x:                                                                                    \
        return #x;
        E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE)
        E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES)
        E(CL_OUT_OF_HOST_MEMORY) E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP)
        E(CL_IMAGE_FORMAT_MISMATCH) E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE)
        E(CL_MAP_FAILURE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) E(CL_COMPILE_PROGRAM_FAILURE)
        E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE) E(CL_DEVICE_PARTITION_FAILED)
        E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE)
        E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
        E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
        E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
        E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
        E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
        E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
        E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
        E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
        E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT)
        E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT) E(CL_INVALID_BUFFER_SIZE)
        E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
        E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS)
        E(CL_INVALID_LINKER_OPTIONS) E(CL_INVALID_DEVICE_PARTITION_COUNT)
        E(CL_INVALID_PIPE_SIZE) E(CL_INVALID_DEVICE_QUEUE) E(CL_INVALID_SPEC_ID)
        E(CL_MAX_SIZE_RESTRICTION_EXCEEDED)
#undef E
    case -1000:
        return "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR";
    case -1001:
        return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
        return "CL_UNKNOWN_ERROR";
    }
}

cl_int report(const char* api, const Context* ctx, cl_int code, const std::string& reason) {
    static const bool log = [] {
        const char* v = std::getenv("DUET_LOG");
        return v && *v && std::string(v) != "0";
    }();
    std::string msg = std::string(api) + ": " + errorName(code) + ": " + reason;
    if (log)
        std::fprintf(stderr, "duet: %s\n", msg.c_str());
    if (ctx)
        ctx->notify(msg);
    return code;
}

cl_int checkWaitList(const char* api, const Context* ctx, cl_uint num, const cl_event* list) {
    // CL_INVALID_EVENT_WAIT_LIST: list null with num > 0, or non-null with num == 0, or an
    // invalid event. CL_INVALID_CONTEXT: an event from another context.
    if ((num == 0) != (list == nullptr))
        return report(api, ctx, CL_INVALID_EVENT_WAIT_LIST,
                      num ? "num_events_in_wait_list > 0 but event_wait_list is NULL"
                          : "event_wait_list is not NULL but num_events_in_wait_list is 0");
    for (cl_uint i = 0; i < num; ++i) {
        Event* e = from<Event>(list[i]);
        if (!e)
            return report(api, ctx, CL_INVALID_EVENT_WAIT_LIST,
                          "event_wait_list[" + std::to_string(i) + "] is not a valid event");
        if (ctx && e->context() != ctx)
            return report(api, ctx, CL_INVALID_CONTEXT,
                          "event_wait_list[" + std::to_string(i) +
                              "] belongs to another context");
    }
    return CL_SUCCESS;
}

} // namespace duet::api
