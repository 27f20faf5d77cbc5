// Device-side enqueue on the CPU device, its front: enqueue_kernel, enqueue_marker, device events
// and the get_kernel_* queries as host functions working on the launch's DeviceEnqueueSession.
#include "devices/cpu/device_enqueue.hpp"

#include "core/context.hpp"
#include "core/device.hpp"
#include "core/queue.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

namespace duet::rt::cpu {
namespace {

thread_local DeviceEnqueueSession* t_session = nullptr;

/// The calling thread's on-device queue, resolved (null outside a launch).
DeviceEnqueueSession* active() {
    DeviceEnqueueSession* s = t_session;
    if (s && !s->resolved())
        s->resolve();
    return s;
}

int enqueueCommon(void* queue, int flags, const DeviceNDRange* nd, uint32_t numEvents,
                  void* const* waitList, void** eventRet, const char* name, const void* block,
                  uint32_t numLocals, const uint64_t* localSizes) {
    DeviceEnqueueSession* s = active();
    Queue* q = onDeviceQueue(queue);
    if (!s || !s->device() || !q)
        return clk::kInvalidQueue;
    if (flags < 0 || flags > 2)
        return clk::kEnqueueFailure;
    if ((numEvents > 0) != (waitList != nullptr))
        return clk::kInvalidEventWaitList;
    for (uint32_t i = 0; i < numLocals; ++i)
        if (!localSizes || localSizes[i] == 0)
            return clk::kInvalidArgSize;
    Kernel* kernel = name ? s->blockKernel(name) : nullptr;
    if (name && (!kernel || kernel->desc().args.size() != size_t(numLocals) + 1))
        return clk::kInvalidArgSize;
    auto cmd = std::make_unique<DeviceCommand>();
    cmd->charge = kDeviceCommandBytes;
    if (kernel) {
        KernelLaunch probe;
        if (!nd || !resolveDeviceNDRange(*nd, s->workGroupLimit(*kernel), probe))
            return clk::kInvalidNDRange;
        cmd->kernelName = name;
        cmd->nd = *nd;
        cmd->localSizes.assign(localSizes, localSizes + numLocals);
        if (!cmd->copyBlock(block))
            return CL_OUT_OF_RESOURCES; // CLK_OUT_OF_RESOURCES has the same value
        cmd->charge += (cmd->blockBytes + 15) / 16 * 16;
    }
    std::lock_guard lock(s->mutex());
    for (uint32_t i = 0; i < numEvents; ++i) {
        if (!s->validEvent(waitList[i]))
            return clk::kInvalidEventWaitList;
        cmd->waits.push_back(static_cast<DeviceEvent*>(waitList[i]));
    }
    if (s->usedBytes() + cmd->charge > q->deviceQueueSize())
        return clk::kDeviceQueueFull;
    if (eventRet && s->liveKernelEvents >= s->device()->info().maxOnDeviceEvents)
        return clk::kEventAllocationFailure;
    DeviceEvent* e = s->newEvent();
    if (eventRet) {
        e->refs = 1;
        ++s->liveKernelEvents;
        *eventRet = e;
    }
    cmd->event = e;
    s->queue(std::move(cmd));
    return clk::kSuccess;
}

// Hooks: the names clang gives these calls (jit/device_enqueue_lowering.cpp passes the block
// kernel's name where clang passes its address, and the ndrange by pointer).
extern "C" {

int duetEnqueueKernelBasic(void* q, int flags, const DeviceNDRange* nd, const char* name,
                           const void* block) {
    return enqueueCommon(q, flags, nd, 0, nullptr, nullptr, name, block, 0, nullptr);
}

int duetEnqueueKernelBasicEvents(void* q, int flags, const DeviceNDRange* nd, uint32_t n,
                                 void* const* wait, void** ret, const char* name,
                                 const void* block) {
    return enqueueCommon(q, flags, nd, n, wait, ret, name, block, 0, nullptr);
}

int duetEnqueueKernelVarargs(void* q, int flags, const DeviceNDRange* nd, const char* name,
                             const void* block, uint32_t numLocals, const uint64_t* sizes) {
    return enqueueCommon(q, flags, nd, 0, nullptr, nullptr, name, block, numLocals, sizes);
}

int duetEnqueueKernelEventsVarargs(void* q, int flags, const DeviceNDRange* nd, uint32_t n,
                                   void* const* wait, void** ret, const char* name,
                                   const void* block, uint32_t numLocals, const uint64_t* sizes) {
    return enqueueCommon(q, flags, nd, n, wait, ret, name, block, numLocals, sizes);
}

int duetEnqueueMarker(void* q, uint32_t n, void* const* wait, void** ret) {
    if (n == 0 || !wait)
        return onDeviceQueue(q) && t_session ? clk::kInvalidEventWaitList : clk::kInvalidQueue;
    return enqueueCommon(q, 0, nullptr, n, wait, ret, nullptr, nullptr, 0, nullptr);
}

uint32_t duetKernelWorkGroupSize(const char* name, const void*) {
    DeviceEnqueueSession* s = active();
    Kernel* k = s ? s->blockKernel(name) : nullptr;
    return k ? uint32_t(s->workGroupLimit(*k)) : 0;
}

uint32_t duetKernelPreferredMultiple(const char* name, const void*) {
    DeviceEnqueueSession* s = active();
    Kernel* k = s ? s->blockKernel(name) : nullptr;
    return k && s->device() ? uint32_t(s->device()->info().preferredWorkGroupSizeMultiple) : 0;
}

/// Work-items per group of `nd` as a launch of `name` would run it (0 if invalid).
size_t groupItems(const DeviceNDRange* nd, const char* name) {
    DeviceEnqueueSession* s = active();
    Kernel* k = s ? s->blockKernel(name) : nullptr;
    KernelLaunch l;
    if (!k || !nd || !resolveDeviceNDRange(*nd, s->workGroupLimit(*k), l))
        return 0;
    return l.local[0] * l.local[1] * l.local[2];
}

uint32_t duetKernelMaxSubGroupSize(const DeviceNDRange* nd, const char* name, const void*) {
    const size_t items = groupItems(nd, name);
    const size_t sg =
        t_session && t_session->device() ? t_session->device()->info().subGroupSize : 1;
    return uint32_t(std::min(items, sg));
}

uint32_t duetKernelSubGroupCount(const DeviceNDRange* nd, const char* name, const void*) {
    const size_t items = groupItems(nd, name);
    const size_t sg =
        t_session && t_session->device() ? t_session->device()->info().subGroupSize : 1;
    return uint32_t((items + sg - 1) / std::max<size_t>(sg, 1));
}

void* duetGetDefaultQueue() {
    DeviceEnqueueSession* s = active();
    return s && s->context()
               ? static_cast<_cl_command_queue*>(s->context()->defaultDeviceQueue(s->device()))
               : nullptr;
}

void* duetCreateUserEvent() {
    DeviceEnqueueSession* s = active();
    if (!s || !s->device())
        return reinterpret_cast<void*>(~uintptr_t(0));
    std::lock_guard lock(s->mutex());
    if (s->liveKernelEvents >= s->device()->info().maxOnDeviceEvents)
        return reinterpret_cast<void*>(~uintptr_t(0)); // CLK_NULL_EVENT
    DeviceEvent* e = s->newEvent();
    e->user = true;
    e->refs = 1;
    e->status = CL_SUBMITTED;
    e->start = deviceEnqueueNowNs();
    ++s->liveKernelEvents;
    return e;
}

void duetRetainEvent(void* e) {
    DeviceEnqueueSession* s = active();
    if (!s)
        return;
    std::lock_guard lock(s->mutex());
    if (s->validEvent(e))
        ++static_cast<DeviceEvent*>(e)->refs;
}

void duetReleaseEvent(void* e) {
    DeviceEnqueueSession* s = active();
    if (!s)
        return;
    std::lock_guard lock(s->mutex());
    if (s->validEvent(e))
        s->dropRef(static_cast<DeviceEvent*>(e));
}

void duetSetUserEventStatus(void* p, int status) {
    DeviceEnqueueSession* s = active();
    if (!s || (status != CL_COMPLETE && status >= 0))
        return;
    std::lock_guard lock(s->mutex());
    auto* e = static_cast<DeviceEvent*>(p);
    if (!s->validEvent(p) || !e->user || e->status <= CL_COMPLETE)
        return;
    s->settle(e, status);
}

bool duetIsValidEvent(void* e) {
    DeviceEnqueueSession* s = active();
    if (!s)
        return false;
    std::lock_guard lock(s->mutex());
    return s->validEvent(e);
}

void duetCaptureEventProfilingInfo(void* p, int name, void* value) {
    DeviceEnqueueSession* s = active();
    if (!s || name != clk::kProfilingCommandExecTime || !value)
        return;
    std::lock_guard lock(s->mutex());
    auto* e = static_cast<DeviceEvent*>(p);
    if (!s->validEvent(p) || e->user)
        return;
    auto* out = static_cast<uint64_t*>(value);
    if (e->status == CL_COMPLETE) {
        out[0] = e->end - e->start;
        out[1] = e->complete - e->start;
    } else {
        e->profileOut = out;
    }
}

} // extern "C"

const DeviceEnqueueHook kHooks[] = {
    {"__enqueue_kernel_basic", reinterpret_cast<void*>(&duetEnqueueKernelBasic)},
    {"__enqueue_kernel_basic_events", reinterpret_cast<void*>(&duetEnqueueKernelBasicEvents)},
    {"__enqueue_kernel_varargs", reinterpret_cast<void*>(&duetEnqueueKernelVarargs)},
    {"__enqueue_kernel_events_varargs", reinterpret_cast<void*>(&duetEnqueueKernelEventsVarargs)},
    {"__get_kernel_work_group_size_impl", reinterpret_cast<void*>(&duetKernelWorkGroupSize)},
    {"__get_kernel_preferred_work_group_size_multiple_impl",
     reinterpret_cast<void*>(&duetKernelPreferredMultiple)},
    {"__get_kernel_max_sub_group_size_for_ndrange_impl",
     reinterpret_cast<void*>(&duetKernelMaxSubGroupSize)},
    {"__get_kernel_sub_group_count_for_ndrange_impl",
     reinterpret_cast<void*>(&duetKernelSubGroupCount)},
    {"_Z17get_default_queuev", reinterpret_cast<void*>(&duetGetDefaultQueue)},
    {"_Z14enqueue_marker9ocl_queuejPU3AS4K12ocl_clkeventPU3AS4S0_",
     reinterpret_cast<void*>(&duetEnqueueMarker)},
    {"_Z17create_user_eventv", reinterpret_cast<void*>(&duetCreateUserEvent)},
    {"_Z12retain_event12ocl_clkevent", reinterpret_cast<void*>(&duetRetainEvent)},
    {"_Z13release_event12ocl_clkevent", reinterpret_cast<void*>(&duetReleaseEvent)},
    {"_Z21set_user_event_status12ocl_clkeventi", reinterpret_cast<void*>(&duetSetUserEventStatus)},
    {"_Z14is_valid_event12ocl_clkevent", reinterpret_cast<void*>(&duetIsValidEvent)},
    {"_Z28capture_event_profiling_info12ocl_clkeventiPU3AS1v",
     reinterpret_cast<void*>(&duetCaptureEventProfilingInfo)},
};

const bool kRegistered = [] {
    registerDeviceEnqueueHooks(kHooks, std::size(kHooks));
    return true;
}();

} // namespace

DeviceEnqueueThreadScope::DeviceEnqueueThreadScope(DeviceEnqueueSession& session)
    : m_previous(t_session) {
    t_session = &session;
}
DeviceEnqueueThreadScope::~DeviceEnqueueThreadScope() {
    t_session = m_previous;
}

} // namespace duet::rt::cpu
