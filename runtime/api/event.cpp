// Event entry points: waits, info, profiling, callbacks, user events.
#include "api/api.hpp"
#include "core/queue.hpp"

using namespace duet::api;

DUET_API cl_int CL_API_CALL clWaitForEvents(cl_uint num, const cl_event* list) {
    return guard("clWaitForEvents", [&]() -> cl_int {
        const char* api = "clWaitForEvents";
        if (num == 0 || !list)
            return report(api, nullptr, CL_INVALID_VALUE, "num_events is 0 or event_list is NULL");
        std::vector<Event*> events;
        for (cl_uint i = 0; i < num; ++i) {
            Event* e = from<Event>(list[i]);
            if (!e)
                return report(api, nullptr, CL_INVALID_EVENT,
                              "event_list[" + std::to_string(i) + "] is not a valid event");
            if (!events.empty() && e->context() != events.front()->context())
                return report(api, e->context(), CL_INVALID_CONTEXT,
                              "the events belong to different contexts");
            events.push_back(e);
        }
        cl_int r = waitForEvents(events);
        if (r != CL_SUCCESS)
            return report(api, events.front()->context(), r,
                          "a command in the list terminated abnormally");
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clGetEventInfo(cl_event event, cl_event_info param, size_t size,
                                           void* value, size_t* sizeRet) {
    return guard("clGetEventInfo", [&]() -> cl_int {
        const char* api = "clGetEventInfo";
        Event* e = from<Event>(event);
        if (!e)
            return report(api, nullptr, CL_INVALID_EVENT, "not a valid event");
        cl_int r;
        switch (param) {
        case CL_EVENT_COMMAND_QUEUE:
            r = infoValue<cl_command_queue>(size, value, sizeRet, e->queue());
            break;
        case CL_EVENT_CONTEXT:
            r = infoValue<cl_context>(size, value, sizeRet, e->context());
            break;
        case CL_EVENT_COMMAND_TYPE:
            r = infoValue<cl_command_type>(size, value, sizeRet, e->commandType());
            break;
        case CL_EVENT_COMMAND_EXECUTION_STATUS:
            r = infoValue<cl_int>(size, value, sizeRet, e->status());
            break;
        case CL_EVENT_REFERENCE_COUNT:
            r = infoValue<cl_uint>(size, value, sizeRet, e->refCount.load());
            break;
        default:
            return report(api, e->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, e->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clRetainEvent(cl_event event) {
    Event* e = from<Event>(event);
    if (!e)
        return report("clRetainEvent", nullptr, CL_INVALID_EVENT, "not a valid event");
    e->retain();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clReleaseEvent(cl_event event) {
    Event* e = from<Event>(event);
    if (!e)
        return report("clReleaseEvent", nullptr, CL_INVALID_EVENT, "not a valid event");
    e->release();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clGetEventProfilingInfo(cl_event event, cl_profiling_info param,
                                                    size_t size, void* value, size_t* sizeRet) {
    return guard("clGetEventProfilingInfo", [&]() -> cl_int {
        const char* api = "clGetEventProfilingInfo";
        Event* e = from<Event>(event);
        if (!e)
            return report(api, nullptr, CL_INVALID_EVENT, "not a valid event");
        if (e->isUser() || !e->queue() || !e->queue()->profiling())
            return report(api, e->context(), CL_PROFILING_INFO_NOT_AVAILABLE,
                          e->isUser() ? "user events have no profiling information"
                                      : "the queue was created without CL_QUEUE_PROFILING_ENABLE");
        if (param < CL_PROFILING_COMMAND_QUEUED || param > CL_PROFILING_COMMAND_COMPLETE)
            return report(api, e->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        if (e->status() > CL_COMPLETE)
            return report(api, e->context(), CL_PROFILING_INFO_NOT_AVAILABLE,
                          "the command has not completed yet");
        cl_ulong t = e->profile(int(param - CL_PROFILING_COMMAND_QUEUED));
        if (infoValue(size, value, sizeRet, t) != CL_SUCCESS)
            return report(api, e->context(), CL_INVALID_VALUE,
                          "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clSetEventCallback(cl_event event, cl_int type, Event::CallbackFn fn,
                                               void* userData) {
    return guard("clSetEventCallback", [&]() -> cl_int {
        const char* api = "clSetEventCallback";
        Event* e = from<Event>(event);
        if (!e)
            return report(api, nullptr, CL_INVALID_EVENT, "not a valid event");
        if (!fn)
            return report(api, e->context(), CL_INVALID_VALUE, "pfn_notify is NULL");
        if (type != CL_SUBMITTED && type != CL_RUNNING && type != CL_COMPLETE)
            return report(api, e->context(), CL_INVALID_VALUE,
                          "command_exec_callback_type must be CL_SUBMITTED, CL_RUNNING or "
                          "CL_COMPLETE");
        e->addCallback(type, fn, userData);
        return CL_SUCCESS;
    });
}

DUET_API cl_event CL_API_CALL clCreateUserEvent(cl_context context, cl_int* errcodeRet) {
    Call call("clCreateUserEvent", errcodeRet);
    return guardHandle<_cl_event>(call, [&]() -> cl_event {
        Context* c = from<Context>(context);
        if (!c)
            return call.fail(CL_INVALID_CONTEXT, "not a valid context");
        return call.ok(makeObject<Event>(retainRef(c), nullptr, CL_COMMAND_USER));
    });
}

DUET_API cl_int CL_API_CALL clSetUserEventStatus(cl_event event, cl_int status) {
    return guard("clSetUserEventStatus", [&]() -> cl_int {
        const char* api = "clSetUserEventStatus";
        Event* e = from<Event>(event);
        if (!e || !e->isUser())
            return report(api, nullptr, CL_INVALID_EVENT, "not a valid user event");
        if (status != CL_COMPLETE && status >= 0)
            return report(api, e->context(), CL_INVALID_VALUE,
                          "execution_status must be CL_COMPLETE or negative");
        if (e->status() <= CL_COMPLETE)
            return report(api, e->context(), CL_INVALID_OPERATION,
                          "the user event's status was already set");
        e->setStatus(status);
        return CL_SUCCESS;
    });
}
