// Error names and the reporting path (DUET_LOG, context notify callback).
#include "duet/cl_error_name.hpp"
#include "api/api.hpp"

#include "core/event.hpp"

#include <cstdio>
#include <cstdlib>

namespace duet::api {

const char* errorName(cl_int code) {
    return clErrorName(code);
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
                          "event_wait_list[" + std::to_string(i) + "] belongs to another context");
    }
    return CL_SUCCESS;
}

} // namespace duet::api
