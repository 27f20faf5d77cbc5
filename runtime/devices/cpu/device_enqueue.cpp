// Device-side enqueue on the CPU device: enqueue_kernel, enqueue_marker, device events and the
// get_kernel_* queries as host functions, and the on-device queue of one host launch.
#include "devices/cpu/device_enqueue.hpp"

#include "core/context.hpp"
#include "core/device.hpp"
#include "core/program.hpp"
#include "core/queue.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace duet::rt::cpu {
namespace {

// OpenCL C's enqueue_kernel return codes (opencl-c-base.h).
constexpr int kClkSuccess = 0;
constexpr int kClkEnqueueFailure = -101;
constexpr int kClkInvalidQueue = -102;
constexpr int kClkInvalidNDRange = -160;
constexpr int kClkInvalidEventWaitList = -57;
constexpr int kClkDeviceQueueFull = -161;
constexpr int kClkInvalidArgSize = -51;
constexpr int kClkEventAllocationFailure = -100;
constexpr int kClkProfilingCommandExecTime = 1;

uint64_t nowNs() {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count());
}

/// A clk_event_t. Status follows the host's: CL_QUEUED .. CL_COMPLETE, or negative.
struct DeviceEvent {
    int refs = 0; ///< the kernels' references (retain_event/release_event)
    int status = CL_QUEUED;
    bool user = false;             ///< create_user_event
    int outstanding = 1;           ///< its command's own run plus children not complete
    int childError = 0;            ///< first failure of a child
    DeviceEvent* parent = nullptr; ///< the command whose completion waits for this one
    uint64_t start = 0, end = 0, complete = 0;
    uint64_t* profileOut = nullptr; ///< capture_event_profiling_info's destination
};

bool isNull(const void* e) {
    return !e || e == reinterpret_cast<const void*>(~uintptr_t(0));
}

/// One enqueue_kernel or enqueue_marker.
struct DeviceCommand {
    std::string kernelName; ///< empty for a marker
    NDRangeT nd{};
    std::unique_ptr<char, decltype(&std::free)> block{nullptr, &std::free};
    std::vector<size_t> localSizes;
    std::vector<DeviceEvent*> waits;
    DeviceEvent* event = nullptr;
    size_t charge = 0; ///< bytes of CL_QUEUE_SIZE held while queued
};

} // namespace

struct DeviceEnqueueState {
    std::mutex mutex; ///< leaf: everything below but the fields set by resolve()
    /// The host launch (begin() to drain()); what follows is looked up from it by resolve() the
    /// first time a kernel calls a hook, so a launch that enqueues nothing pays for nothing.
    const KernelLaunch* launch = nullptr;
    std::atomic<bool> resolved{false};
    std::mutex resolveMutex;
    // Set by resolve(), read-only until drain() ends.
    Ref<Program> program;
    std::shared_ptr<DeviceExecutable> executable;
    const Device* device = nullptr;
    Context* context = nullptr;
    // The command whose work-groups run now (null: the host's launch). Written by drain()
    // between launches only.
    DeviceEvent* current = nullptr;

    std::vector<std::unique_ptr<DeviceEvent>> events;
    std::unordered_set<DeviceEvent*> eventSet;
    size_t liveKernelEvents = 0; ///< events with kernel references (CL_DEVICE_MAX_ON_DEVICE_EVENTS)
    std::deque<std::unique_ptr<DeviceCommand>> ready;    ///< no wait list: FIFO
    std::vector<std::unique_ptr<DeviceCommand>> waiting; ///< with a wait list
    size_t usedBytes = 0;
    std::map<std::string, Ref<Kernel>> kernels; ///< block kernels by name (kernelsMutex)
    std::mutex kernelsMutex;

    void resolve() {
        std::lock_guard lock(resolveMutex);
        if (resolved.load(std::memory_order_relaxed) || !launch)
            return;
        Program* p = launch->kernel->program();
        executable = launch->executable;
        program = retainRef(p);
        context = launch->kernel->context();
        device = nullptr;
        for (const Device* d : p->devices())
            if (p->executable(d) == launch->executable)
                device = d;
        resolved.store(true, std::memory_order_release);
    }

    DeviceEvent* newEvent() {
        events.push_back(std::make_unique<DeviceEvent>());
        DeviceEvent* e = events.back().get();
        eventSet.insert(e);
        return e;
    }
    bool validEvent(const void* p) const {
        auto* e = static_cast<DeviceEvent*>(const_cast<void*>(p));
        return !isNull(p) && eventSet.count(e) && e->refs > 0;
    }
    void dropRef(DeviceEvent* e) {
        if (e->refs > 0 && --e->refs == 0)
            --liveKernelEvents;
    }
    /// One of `e`'s outstanding parts finished; completes it (and maybe its parent) at 0.
    void settle(DeviceEvent* e, int status) {
        if (status < 0 && !e->childError)
            e->childError = status;
        if (--e->outstanding > 0)
            return;
        e->complete = nowNs();
        if (!e->end)
            e->end = e->complete;
        e->status = e->childError ? e->childError : CL_COMPLETE;
        if (e->profileOut) {
            e->profileOut[0] = e->end - e->start;
            e->profileOut[1] = e->complete - e->start;
        }
        if (e->parent)
            settle(e->parent, e->status);
    }
    /// The Kernel object of a block kernel of the running program; null if there is none.
    Kernel* blockKernel(const char* name) {
        if (!name || !executable)
            return nullptr;
        std::lock_guard lock(kernelsMutex);
        auto it = kernels.find(name);
        if (it != kernels.end())
            return it->second.get();
        for (const KernelDesc& k : executable->kernels())
            if (k.name == name) {
                Ref<Kernel> kernel = adoptRef(makeObject<Kernel>(program, k));
                Kernel* raw = kernel.get();
                kernels.emplace(name, std::move(kernel));
                return raw;
            }
        return nullptr;
    }
    size_t workGroupLimit(Kernel& k) const { return device ? k.workGroupLimit(*device) : 1; }
};

namespace {

thread_local DeviceEnqueueState* t_state = nullptr;

/// The calling thread's on-device queue, resolved (null outside a launch).
DeviceEnqueueState* active() {
    DeviceEnqueueState* s = t_state;
    if (s && !s->resolved.load(std::memory_order_acquire))
        s->resolve();
    return s;
}

Queue* deviceQueue(void* q) {
    if (!q)
        return nullptr;
    auto* o = static_cast<Object*>(static_cast<_cl_command_queue*>(q));
    if (!o->alive(Tag::Queue))
        return nullptr;
    auto* queue = static_cast<Queue*>(o);
    return queue->onDevice() ? queue : nullptr;
}

/// The local size of a child launch: as given, or (all 0) one the device picks: a divisor of
/// the global size in dimension 0 up to 64 work-items, 1 in the others.
bool resolveNDRange(const NDRangeT& nd, size_t limit, KernelLaunch& l) {
    if (nd.workDim < 1 || nd.workDim > 3)
        return false;
    bool localGiven = false;
    size_t product = 1;
    for (uint32_t d = 0; d < nd.workDim; ++d) {
        if (nd.global[d] == 0)
            return false;
        localGiven = localGiven || nd.local[d] != 0;
    }
    l.workDim = nd.workDim;
    for (uint32_t d = 0; d < 3; ++d) {
        const bool used = d < nd.workDim;
        l.offset[d] = used ? nd.offset[d] : 0;
        l.global[d] = used ? nd.global[d] : 1;
        if (localGiven) {
            if (used && nd.local[d] == 0)
                return false;
            l.local[d] = used ? nd.local[d] : 1;
        } else {
            size_t best = 1;
            if (d == 0)
                for (size_t c = std::min<size_t>({64, limit, l.global[0]}); c >= 1; --c)
                    if (l.global[0] % c == 0) {
                        best = c;
                        break;
                    }
            l.local[d] = best;
        }
        product *= l.local[d];
    }
    return product <= limit;
}

int enqueueCommon(void* queue, int flags, const NDRangeT* nd, uint32_t numEvents,
                  void* const* waitList, void** eventRet, const char* name, const void* block,
                  uint32_t numLocals, const uint64_t* localSizes) {
    DeviceEnqueueState* s = active();
    Queue* q = deviceQueue(queue);
    if (!s || !s->device || !q)
        return kClkInvalidQueue;
    if (flags < 0 || flags > 2)
        return kClkEnqueueFailure;
    if ((numEvents > 0) != (waitList != nullptr))
        return kClkInvalidEventWaitList;
    for (uint32_t i = 0; i < numLocals; ++i)
        if (!localSizes || localSizes[i] == 0)
            return kClkInvalidArgSize;
    Kernel* kernel = name ? s->blockKernel(name) : nullptr;
    if (name && (!kernel || kernel->desc().args.size() != size_t(numLocals) + 1))
        return kClkInvalidArgSize;
    auto cmd = std::make_unique<DeviceCommand>();
    if (kernel) {
        KernelLaunch probe;
        if (!nd || !resolveNDRange(*nd, s->workGroupLimit(*kernel), probe))
            return kClkInvalidNDRange;
        cmd->kernelName = name;
        cmd->nd = *nd;
        cmd->localSizes.assign(localSizes, localSizes + numLocals);
        // The block literal starts with its size and alignment (clang's layout).
        uint32_t size = 0, align = 0;
        std::memcpy(&size, block, 4);
        std::memcpy(&align, static_cast<const char*>(block) + 4, 4);
        const size_t a = std::max<size_t>({align, 16, sizeof(void*)});
        const size_t rounded = (std::max<size_t>(size, 1) + a - 1) / a * a;
        cmd->block.reset(static_cast<char*>(std::aligned_alloc(a, rounded)));
        if (!cmd->block)
            return CL_OUT_OF_RESOURCES; // CLK_OUT_OF_RESOURCES has the same value
        std::memcpy(cmd->block.get(), block, size);
        cmd->charge = kDeviceCommandBytes + rounded;
    } else {
        cmd->charge = kDeviceCommandBytes;
    }
    std::lock_guard lock(s->mutex);
    for (uint32_t i = 0; i < numEvents; ++i) {
        if (!s->validEvent(waitList[i]))
            return kClkInvalidEventWaitList;
        cmd->waits.push_back(static_cast<DeviceEvent*>(waitList[i]));
    }
    if (s->usedBytes + cmd->charge > q->deviceQueueSize())
        return kClkDeviceQueueFull;
    if (eventRet && s->liveKernelEvents >= s->device->info().maxOnDeviceEvents)
        return kClkEventAllocationFailure;
    DeviceEvent* e = s->newEvent();
    if (kernel) {
        e->parent = s->current;
        if (e->parent)
            ++e->parent->outstanding;
    }
    if (eventRet) {
        e->refs = 1;
        ++s->liveKernelEvents;
        *eventRet = e;
    }
    cmd->event = e;
    s->usedBytes += cmd->charge;
    if (cmd->waits.empty())
        s->ready.push_back(std::move(cmd));
    else
        s->waiting.push_back(std::move(cmd));
    return kClkSuccess;
}

// Hooks: the names clang gives these calls (jit/device_enqueue_lowering.cpp passes the block
// kernel's name where clang passes its address, and the ndrange by pointer).
extern "C" {

int duetEnqueueKernelBasic(void* q, int flags, const NDRangeT* nd, const char* name,
                           const void* block) {
    return enqueueCommon(q, flags, nd, 0, nullptr, nullptr, name, block, 0, nullptr);
}

int duetEnqueueKernelBasicEvents(void* q, int flags, const NDRangeT* nd, uint32_t n,
                                 void* const* wait, void** ret, const char* name,
                                 const void* block) {
    return enqueueCommon(q, flags, nd, n, wait, ret, name, block, 0, nullptr);
}

int duetEnqueueKernelVarargs(void* q, int flags, const NDRangeT* nd, const char* name,
                             const void* block, uint32_t numLocals, const uint64_t* sizes) {
    return enqueueCommon(q, flags, nd, 0, nullptr, nullptr, name, block, numLocals, sizes);
}

int duetEnqueueKernelEventsVarargs(void* q, int flags, const NDRangeT* nd, uint32_t n,
                                   void* const* wait, void** ret, const char* name,
                                   const void* block, uint32_t numLocals, const uint64_t* sizes) {
    return enqueueCommon(q, flags, nd, n, wait, ret, name, block, numLocals, sizes);
}

int duetEnqueueMarker(void* q, uint32_t n, void* const* wait, void** ret) {
    if (n == 0 || !wait)
        return deviceQueue(q) && t_state ? kClkInvalidEventWaitList : kClkInvalidQueue;
    return enqueueCommon(q, 0, nullptr, n, wait, ret, nullptr, nullptr, 0, nullptr);
}

uint32_t duetKernelWorkGroupSize(const char* name, const void*) {
    DeviceEnqueueState* s = active();
    Kernel* k = s ? s->blockKernel(name) : nullptr;
    return k ? uint32_t(s->workGroupLimit(*k)) : 0;
}

uint32_t duetKernelPreferredMultiple(const char* name, const void*) {
    DeviceEnqueueState* s = active();
    Kernel* k = s ? s->blockKernel(name) : nullptr;
    return k && s->device ? uint32_t(s->device->info().preferredWorkGroupSizeMultiple) : 0;
}

/// Work-items per group of `nd` as a launch of `name` would run it (0 if invalid).
size_t groupItems(const NDRangeT* nd, const char* name) {
    DeviceEnqueueState* s = active();
    Kernel* k = s ? s->blockKernel(name) : nullptr;
    KernelLaunch l;
    if (!k || !nd || !resolveNDRange(*nd, s->workGroupLimit(*k), l))
        return 0;
    return l.local[0] * l.local[1] * l.local[2];
}

uint32_t duetKernelMaxSubGroupSize(const NDRangeT* nd, const char* name, const void*) {
    const size_t items = groupItems(nd, name);
    const size_t sg = t_state && t_state->device ? t_state->device->info().subGroupSize : 1;
    return uint32_t(std::min(items, sg));
}

uint32_t duetKernelSubGroupCount(const NDRangeT* nd, const char* name, const void*) {
    const size_t items = groupItems(nd, name);
    const size_t sg = t_state && t_state->device ? t_state->device->info().subGroupSize : 1;
    return uint32_t((items + sg - 1) / std::max<size_t>(sg, 1));
}

void* duetGetDefaultQueue() {
    DeviceEnqueueState* s = active();
    return s && s->context ? static_cast<_cl_command_queue*>(s->context->defaultDeviceQueue())
                           : nullptr;
}

void* duetCreateUserEvent() {
    DeviceEnqueueState* s = active();
    if (!s || !s->device)
        return reinterpret_cast<void*>(~uintptr_t(0));
    std::lock_guard lock(s->mutex);
    if (s->liveKernelEvents >= s->device->info().maxOnDeviceEvents)
        return reinterpret_cast<void*>(~uintptr_t(0)); // CLK_NULL_EVENT
    DeviceEvent* e = s->newEvent();
    e->user = true;
    e->refs = 1;
    e->status = CL_SUBMITTED;
    e->start = nowNs();
    ++s->liveKernelEvents;
    return e;
}

void duetRetainEvent(void* e) {
    DeviceEnqueueState* s = active();
    if (!s)
        return;
    std::lock_guard lock(s->mutex);
    if (s->validEvent(e))
        ++static_cast<DeviceEvent*>(e)->refs;
}

void duetReleaseEvent(void* e) {
    DeviceEnqueueState* s = active();
    if (!s)
        return;
    std::lock_guard lock(s->mutex);
    if (s->validEvent(e))
        s->dropRef(static_cast<DeviceEvent*>(e));
}

void duetSetUserEventStatus(void* p, int status) {
    DeviceEnqueueState* s = active();
    if (!s || (status != CL_COMPLETE && status >= 0))
        return;
    std::lock_guard lock(s->mutex);
    auto* e = static_cast<DeviceEvent*>(p);
    if (!s->validEvent(p) || !e->user || e->status <= CL_COMPLETE)
        return;
    s->settle(e, status);
}

bool duetIsValidEvent(void* e) {
    DeviceEnqueueState* s = active();
    if (!s)
        return false;
    std::lock_guard lock(s->mutex);
    return s->validEvent(e);
}

void duetCaptureEventProfilingInfo(void* p, int name, void* value) {
    DeviceEnqueueState* s = active();
    if (!s || name != kClkProfilingCommandExecTime || !value)
        return;
    std::lock_guard lock(s->mutex);
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

DeviceEnqueueSession::DeviceEnqueueSession() : m_state(std::make_unique<DeviceEnqueueState>()) {}
DeviceEnqueueSession::~DeviceEnqueueSession() = default;

DeviceEnqueueSession::ThreadScope::ThreadScope(DeviceEnqueueSession& s) : m_previous(t_state) {
    t_state = s.m_state.get();
}
DeviceEnqueueSession::ThreadScope::~ThreadScope() {
    t_state = static_cast<DeviceEnqueueState*>(m_previous);
}

void DeviceEnqueueSession::begin(const KernelLaunch& launch) {
    DeviceEnqueueState& s = *m_state;
    s.launch = &launch;
    s.current = nullptr;
    s.resolved.store(false, std::memory_order_relaxed);
}

cl_int DeviceEnqueueSession::drain(const RunFn& run) {
    DeviceEnqueueState& s = *m_state;
    if (!s.resolved.load(std::memory_order_acquire)) {
        s.launch = nullptr; // no kernel called a hook: nothing was enqueued
        return CL_SUCCESS;
    }
    cl_int result = CL_SUCCESS;
    for (;;) {
        std::unique_ptr<DeviceCommand> cmd;
        bool waitFailed = false;
        {
            std::lock_guard lock(s.mutex);
            if (!s.ready.empty()) {
                cmd = std::move(s.ready.front());
                s.ready.pop_front();
            } else {
                for (size_t i = 0; i < s.waiting.size() && !cmd; ++i) {
                    bool done = true;
                    for (DeviceEvent* w : s.waiting[i]->waits) {
                        done = done && w->status <= CL_COMPLETE;
                        waitFailed = waitFailed || w->status < 0;
                    }
                    if (done) {
                        cmd = std::move(s.waiting[i]);
                        s.waiting.erase(s.waiting.begin() + ptrdiff_t(i));
                    } else {
                        waitFailed = false;
                    }
                }
                if (!cmd && !s.waiting.empty()) {
                    // Waits nothing can end (a user event no kernel completes): fail them.
                    for (auto& c : s.waiting) {
                        c->event->start = nowNs();
                        s.settle(c->event, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
                        s.usedBytes -= c->charge;
                    }
                    s.waiting.clear();
                    if (result == CL_SUCCESS)
                        result = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
                    continue;
                }
            }
            if (!cmd)
                break;
            s.usedBytes -= cmd->charge;
            cmd->event->status = CL_RUNNING;
            cmd->event->start = nowNs();
            if (waitFailed || cmd->kernelName.empty()) {
                const cl_int st = waitFailed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : 0;
                s.settle(cmd->event, st);
                if (st < 0 && result == CL_SUCCESS)
                    result = st;
                continue;
            }
        }
        Kernel* kernel = s.blockKernel(cmd->kernelName.c_str());
        KernelLaunch l;
        l.kernel = retainRef(kernel);
        l.executable = s.executable;
        resolveNDRange(cmd->nd, s.workGroupLimit(*kernel), l);
        const auto& ks = s.executable->kernels();
        for (size_t i = 0; i < ks.size(); ++i)
            if (ks[i].name == cmd->kernelName)
                l.entry = s.executable->entry(i);
        l.args.resize(kernel->desc().args.size());
        l.args[0].set = true;
        l.args[0].viaSvm = true;
        l.args[0].svm = cmd->block.get();
        for (size_t i = 1; i < l.args.size(); ++i) {
            l.args[i].set = true;
            l.args[i].localSize = cmd->localSizes[i - 1];
        }
        cl_int st = l.entry ? CL_SUCCESS : CL_INVALID_KERNEL;
        if (st == CL_SUCCESS) {
            s.current = cmd->event;
            st = run(l);
            s.current = nullptr;
        }
        std::lock_guard lock(s.mutex);
        cmd->event->end = nowNs();
        s.settle(cmd->event, st < 0 ? st : 0);
        if (st < 0 && result == CL_SUCCESS)
            result = st;
    }
    std::lock_guard lock(s.mutex);
    s.events.clear();
    s.eventSet.clear();
    s.liveKernelEvents = 0;
    s.usedBytes = 0;
    {
        std::lock_guard klock(s.kernelsMutex);
        s.kernels.clear();
    }
    s.executable.reset();
    s.program = {};
    s.device = nullptr;
    s.context = nullptr;
    s.launch = nullptr;
    s.resolved.store(false, std::memory_order_relaxed);
    return result;
}

} // namespace duet::rt::cpu
