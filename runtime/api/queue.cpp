// Command-queue entry points, markers, barriers, flush and finish.
#include "api/api.hpp"
#include "core/context.hpp"
#include "core/queue.hpp"

#include <optional>

using namespace duet::api;

namespace duet::api {

Queue* hostQueue(cl_command_queue queue) {
    Queue* q = from<Queue>(queue);
    return q && !q->onDevice() ? q : nullptr;
}

cl_int submit(Queue* queue, cl_command_type type, cl_uint numEvents, const cl_event* waitList,
              cl_event* eventOut, bool blocking, std::function<cl_int()> run, bool fence) {
    return handOut(enqueueCommand(*queue, type, submitOf(numEvents, waitList, blocking, eventOut),
                                  std::move(run), fence),
                   eventOut);
}

} // namespace duet::api

namespace {

cl_command_queue createQueue(Call& call, cl_context context, cl_device_id device,
                             cl_command_queue_properties props,
                             std::vector<cl_queue_properties> list, bool withProperties,
                             std::optional<cl_queue_properties> queueSize) {
    Context* c = from<Context>(context);
    if (!c)
        return call.fail(CL_INVALID_CONTEXT, "not a valid context");
    call.setContext(c);
    Device* d = from<Device>(device);
    if (!d || !c->hasDevice(d))
        return call.fail(CL_INVALID_DEVICE, "device is not valid or not in the context");
    const cl_command_queue_properties known = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                                              CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_ON_DEVICE |
                                              CL_QUEUE_ON_DEVICE_DEFAULT;
    if (props & ~known)
        return call.fail(CL_INVALID_VALUE, "unknown command-queue property bits");
    const bool onDevice = props & CL_QUEUE_ON_DEVICE;
    // CL_INVALID_VALUE: clCreateCommandQueue (OpenCL 1.x) knows no on-device queues.
    if (!withProperties && (props & (CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT)))
        return call.fail(CL_INVALID_VALUE, "on-device queues are created with "
                                           "clCreateCommandQueueWithProperties");
    // CL_INVALID_VALUE: ON_DEVICE_DEFAULT only with ON_DEVICE; an on-device queue must be
    // out of order; CL_QUEUE_SIZE only for an on-device queue (the spec's valid values).
    if ((props & CL_QUEUE_ON_DEVICE_DEFAULT) && !onDevice)
        return call.fail(CL_INVALID_VALUE,
                         "CL_QUEUE_ON_DEVICE_DEFAULT requires CL_QUEUE_ON_DEVICE");
    if (onDevice && !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
        return call.fail(CL_INVALID_VALUE,
                         "an on-device queue requires CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE");
    if (queueSize && !onDevice)
        return call.fail(CL_INVALID_VALUE, "CL_QUEUE_SIZE applies to on-device queues only");
    const DeviceInfo& info = d->info();
    if (queueSize && (*queueSize == 0 || *queueSize > info.queueOnDeviceMaxSize) &&
        info.queueOnDeviceMaxSize)
        return call.fail(CL_INVALID_VALUE,
                         "CL_QUEUE_SIZE " + std::to_string(*queueSize) +
                             " is not in 1..CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE (" +
                             std::to_string(info.queueOnDeviceMaxSize) + ")");
    // CL_INVALID_QUEUE_PROPERTIES: valid, but the device has no on-device queues.
    if (onDevice && !(info.deviceEnqueueCapabilities & CL_DEVICE_QUEUE_SUPPORTED))
        return call.fail(CL_INVALID_QUEUE_PROPERTIES,
                         "on-device queues are not supported on " + info.name +
                             " (CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES is 0)");
    if (onDevice &&
        (props & ~info.queueOnDeviceProperties & ~CL_QUEUE_ON_DEVICE & ~CL_QUEUE_ON_DEVICE_DEFAULT))
        return call.fail(CL_INVALID_QUEUE_PROPERTIES,
                         "properties beyond CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES");
    if (!onDevice)
        return call.ok(makeObject<Queue>(retainRef(c), d, props, std::move(list)));
    // The default on-device queue is one per context and device: asking for it again returns
    // it (retained), as the spec says.
    if (props & CL_QUEUE_ON_DEVICE_DEFAULT)
        if (Queue* existing = c->defaultDeviceQueue(d)) {
            existing->retain();
            return call.ok(existing);
        }
    // CL_OUT_OF_RESOURCES: more on-device queues than CL_DEVICE_MAX_ON_DEVICE_QUEUES (the
    // default one aside).
    if (!(props & CL_QUEUE_ON_DEVICE_DEFAULT) && !c->addDeviceQueue(d, info.maxOnDeviceQueues))
        return call.fail(CL_OUT_OF_RESOURCES,
                         "the context already has CL_DEVICE_MAX_ON_DEVICE_QUEUES (" +
                             std::to_string(info.maxOnDeviceQueues) + ") on-device queues");
    cl_command_queue handle = makeObject<Queue>(retainRef(c), d, props, std::move(list));
    Queue* q = from<Queue>(handle);
    q->setDeviceQueueSize(cl_uint(queueSize ? *queueSize : info.queueOnDevicePreferredSize));
    if (props & CL_QUEUE_ON_DEVICE_DEFAULT)
        c->setDefaultDeviceQueue(q);
    return call.ok(handle);
}

} // namespace

DUET_API cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context context, cl_device_id device,
                                                           cl_command_queue_properties props,
                                                           cl_int* errcodeRet) {
    Call call("clCreateCommandQueue", errcodeRet);
    return guardHandle<_cl_command_queue>(
        call, [&] { return createQueue(call, context, device, props, {}, false, {}); });
}

DUET_API cl_command_queue CL_API_CALL
clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                   const cl_queue_properties* properties, cl_int* errcodeRet) {
    Call call("clCreateCommandQueueWithProperties", errcodeRet);
    return guardHandle<_cl_command_queue>(call, [&]() -> cl_command_queue {
        cl_command_queue_properties props = 0;
        std::vector<cl_queue_properties> list;
        std::optional<cl_queue_properties> queueSize;
        if (properties) {
            for (const cl_queue_properties* p = properties; *p; p += 2) {
                if (p[0] == CL_QUEUE_PROPERTIES)
                    props = p[1];
                else if (p[0] == CL_QUEUE_SIZE)
                    queueSize = p[1];
                else
                    return call.fail(CL_INVALID_VALUE,
                                     "unknown queue property " + std::to_string(p[0]));
                list.push_back(p[0]);
                list.push_back(p[1]);
            }
            list.push_back(0);
        }
        return createQueue(call, context, device, props, std::move(list), true, queueSize);
    });
}

DUET_API cl_int CL_API_CALL clRetainCommandQueue(cl_command_queue queue) {
    Queue* q = from<Queue>(queue);
    if (!q)
        return report("clRetainCommandQueue", nullptr, CL_INVALID_COMMAND_QUEUE,
                      "not a valid command queue");
    q->retain();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue queue) {
    Queue* q = from<Queue>(queue);
    if (!q)
        return report("clReleaseCommandQueue", nullptr, CL_INVALID_COMMAND_QUEUE,
                      "not a valid command queue");
    q->flush();
    q->release();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clGetCommandQueueInfo(cl_command_queue queue,
                                                  cl_command_queue_info param, size_t size,
                                                  void* value, size_t* sizeRet) {
    return guard("clGetCommandQueueInfo", [&]() -> cl_int {
        const char* api = "clGetCommandQueueInfo";
        Queue* q = from<Queue>(queue);
        if (!q)
            return report(api, nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
        cl_int r;
        switch (param) {
        case CL_QUEUE_CONTEXT:
            r = infoValue<cl_context>(size, value, sizeRet, q->context());
            break;
        case CL_QUEUE_DEVICE:
            r = infoValue<cl_device_id>(size, value, sizeRet, q->device());
            break;
        case CL_QUEUE_REFERENCE_COUNT:
            r = infoValue<cl_uint>(size, value, sizeRet, q->refCount.load());
            break;
        case CL_QUEUE_PROPERTIES:
            r = infoValue<cl_command_queue_properties>(size, value, sizeRet, q->properties());
            break;
        case CL_QUEUE_PROPERTIES_ARRAY:
            r = infoVector(size, value, sizeRet, q->propertyList());
            break;
        case CL_QUEUE_SIZE:
            if (!q->onDevice())
                return report(api, q->context(), CL_INVALID_COMMAND_QUEUE,
                              "CL_QUEUE_SIZE is only defined for on-device queues");
            r = infoValue<cl_uint>(size, value, sizeRet, q->deviceQueueSize());
            break;
        case CL_QUEUE_DEVICE_DEFAULT:
            r = infoValue<cl_command_queue>(size, value, sizeRet,
                                            q->context()->defaultDeviceQueue(q->device()));
            break;
        default:
            return report(api, q->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, q->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clSetCommandQueueProperty(cl_command_queue queue,
                                                      cl_command_queue_properties, cl_bool,
                                                      cl_command_queue_properties*) {
    Queue* q = from<Queue>(queue);
    if (!q)
        return report("clSetCommandQueueProperty", nullptr, CL_INVALID_COMMAND_QUEUE,
                      "not a valid command queue");
    return report("clSetCommandQueueProperty", q->context(), CL_INVALID_OPERATION,
                  "deprecated since OpenCL 1.1: queue properties are fixed at creation");
}

DUET_API cl_int CL_API_CALL clSetDefaultDeviceCommandQueue(cl_context context, cl_device_id device,
                                                           cl_command_queue queue) {
    return guard("clSetDefaultDeviceCommandQueue", [&]() -> cl_int {
        const char* api = "clSetDefaultDeviceCommandQueue";
        Context* c = from<Context>(context);
        // CL_INVALID_CONTEXT, CL_INVALID_DEVICE: not valid, or the device not in the context.
        if (!c)
            return report(api, nullptr, CL_INVALID_CONTEXT, "not a valid context");
        Device* d = from<Device>(device);
        if (!d || !c->hasDevice(d))
            return report(api, c, CL_INVALID_DEVICE, "device is not valid or not in the context");
        // CL_INVALID_OPERATION: the device cannot replace its default on-device queue.
        if (!(d->info().deviceEnqueueCapabilities & CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT))
            return report(api, c, CL_INVALID_OPERATION,
                          d->info().name + " has no replaceable default on-device queue "
                                           "(CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES)");
        // CL_INVALID_COMMAND_QUEUE: not an on-device queue of this context and device.
        Queue* q = from<Queue>(queue);
        if (!q || !q->onDevice() || q->context() != c || q->device() != d)
            return report(api, c, CL_INVALID_COMMAND_QUEUE,
                          "not a valid on-device queue of this context and device");
        c->setDefaultDeviceQueue(q);
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clFlush(cl_command_queue queue) {
    Queue* q = hostQueue(queue);
    if (!q)
        return report("clFlush", nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
    q->flush();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clFinish(cl_command_queue queue) {
    Queue* q = hostQueue(queue);
    if (!q)
        return report("clFinish", nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
    q->finish();
    return CL_SUCCESS;
}

namespace {

cl_int enqueueSync(const char* api, cl_command_queue queue, cl_command_type type, cl_uint num,
                   const cl_event* list, cl_event* event, bool allPrior) {
    return guard(api, [&]() -> cl_int {
        Queue* q = hostQueue(queue);
        if (!q)
            return report(api, nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
        if (cl_int e = checkWaitList(api, q->context(), num, list))
            return e;
        // In-order queues already order everything. Out of order, a barrier (and a marker
        // with no wait list) waits for all earlier commands and holds back later ones.
        bool fence = type == CL_COMMAND_BARRIER ? true : (allPrior && num == 0);
        return handOut(enqueueMarker(*q, type, fence, submitOf(num, list, false, event)), event);
    });
}

} // namespace

DUET_API cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue queue, cl_uint num,
                                                        const cl_event* list, cl_event* event) {
    return enqueueSync("clEnqueueMarkerWithWaitList", queue, CL_COMMAND_MARKER, num, list, event,
                       true);
}

DUET_API cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue queue, cl_uint num,
                                                         const cl_event* list, cl_event* event) {
    return enqueueSync("clEnqueueBarrierWithWaitList", queue, CL_COMMAND_BARRIER, num, list, event,
                       true);
}

DUET_API cl_int CL_API_CALL clEnqueueMarker(cl_command_queue queue, cl_event* event) {
    if (!event && hostQueue(queue))
        return report("clEnqueueMarker", hostQueue(queue)->context(), CL_INVALID_VALUE,
                      "event is NULL");
    return enqueueSync("clEnqueueMarker", queue, CL_COMMAND_MARKER, 0, nullptr, event, true);
}

DUET_API cl_int CL_API_CALL clEnqueueBarrier(cl_command_queue queue) {
    return enqueueSync("clEnqueueBarrier", queue, CL_COMMAND_BARRIER, 0, nullptr, nullptr, true);
}

DUET_API cl_int CL_API_CALL clEnqueueWaitForEvents(cl_command_queue queue, cl_uint num,
                                                   const cl_event* list) {
    Queue* q = hostQueue(queue);
    if (q && (num == 0 || !list))
        return report("clEnqueueWaitForEvents", q->context(), CL_INVALID_VALUE,
                      "num_events is 0 or event_list is NULL");
    return enqueueSync("clEnqueueWaitForEvents", queue, CL_COMMAND_BARRIER, num, list, nullptr,
                       false);
}
