// Device-side enqueue's session: wait lists, parent completion, profiling and the order children
// run in, for every device that has an on-device queue.
#include "core/device_enqueue.hpp"

#include "core/context.hpp"
#include "core/device.hpp"
#include "core/program.hpp"
#include "core/queue.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace duet::rt {
namespace {

bool isNullEvent(const void* e) {
    return !e || e == reinterpret_cast<const void*>(~uintptr_t(0));
}

} // namespace

uint64_t deviceEnqueueNowNs() {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count());
}

Queue* onDeviceQueue(void* handle) {
    if (!handle)
        return nullptr;
    auto* o = static_cast<Object*>(static_cast<_cl_command_queue*>(handle));
    if (!o->alive(Tag::Queue))
        return nullptr;
    auto* queue = static_cast<Queue*>(o);
    return queue->onDevice() ? queue : nullptr;
}

void reportDeviceEnqueue(DeviceInfo& info) {
    info.deviceEnqueueCapabilities =
        CL_DEVICE_QUEUE_SUPPORTED | CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT;
    info.queueOnDeviceProperties =
        CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
    info.queueOnDevicePreferredSize = 16 * 1024;
    info.queueOnDeviceMaxSize = 8 * 1024 * 1024;
    info.maxOnDeviceQueues = 4;
    info.maxOnDeviceEvents = 1024;
}

bool resolveDeviceNDRange(const DeviceNDRange& nd, size_t limit, KernelLaunch& l) {
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

bool DeviceCommand::copyBlock(const void* literal) {
    uint32_t size = 0, align = 0;
    std::memcpy(&size, literal, 4);
    std::memcpy(&align, static_cast<const char*>(literal) + 4, 4);
    const size_t a = std::max<size_t>({align, 16, sizeof(void*)});
    if (a & (a - 1))
        return false; // not a literal clang made
    const size_t rounded = (std::max<size_t>(size, 1) + a - 1) / a * a;
    block.reset(static_cast<char*>(std::aligned_alloc(a, rounded)));
    if (!block)
        return false;
    std::memcpy(block.get(), literal, size);
    blockBytes = size;
    return true;
}

void DeviceEnqueueSession::begin(const KernelLaunch& launch) {
    m_launch = &launch;
    m_current = nullptr;
    m_resolved.store(false, std::memory_order_relaxed);
}

void DeviceEnqueueSession::resolve() {
    std::lock_guard lock(m_resolveMutex);
    if (m_resolved.load(std::memory_order_relaxed) || !m_launch)
        return;
    Program* p = m_launch->kernel->program();
    m_executable = m_launch->executable;
    m_program = retainRef(p);
    m_context = m_launch->kernel->context();
    m_device = nullptr;
    for (const Device* d : p->devices())
        if (p->executable(d).get() == m_launch->executable)
            m_device = d;
    m_resolved.store(true, std::memory_order_release);
}

DeviceEvent* DeviceEnqueueSession::newEvent() {
    m_events.push_back(std::make_unique<DeviceEvent>());
    DeviceEvent* e = m_events.back().get();
    m_eventSet.insert(e);
    return e;
}

bool DeviceEnqueueSession::validEvent(const void* p) const {
    auto* e = static_cast<DeviceEvent*>(const_cast<void*>(p));
    return !isNullEvent(p) && m_eventSet.count(e) && e->refs > 0;
}

void DeviceEnqueueSession::dropRef(DeviceEvent* e) {
    if (e->refs > 0 && --e->refs == 0)
        --liveKernelEvents;
}

void DeviceEnqueueSession::settle(DeviceEvent* e, int status) {
    // Iterative: a chain of children thousands deep (a kernel enqueueing its own next pass)
    // completes its ancestors in one go.
    while (e) {
        if (status < 0 && !e->childError)
            e->childError = status;
        if (--e->outstanding > 0)
            return;
        e->complete = deviceEnqueueNowNs();
        if (!e->end)
            e->end = e->complete;
        e->status = e->childError ? e->childError : CL_COMPLETE;
        if (e->profileOut) {
            e->profileOut[0] = e->end - e->start;
            e->profileOut[1] = e->complete - e->start;
        }
        status = e->status;
        e = e->parent;
    }
}

void DeviceEnqueueSession::queue(std::unique_ptr<DeviceCommand> cmd) {
    DeviceEvent* e = cmd->event;
    if (!cmd->kernelName.empty()) {
        e->parent = m_current;
        if (e->parent)
            ++e->parent->outstanding;
    }
    m_usedBytes += cmd->charge;
    cmd->order = m_nextOrder++;
    if (cmd->waits.empty())
        m_ready.push_back(std::move(cmd));
    else
        m_waiting.push_back(std::move(cmd));
}

Kernel* DeviceEnqueueSession::blockKernel(const char* name) {
    if (!name || !m_executable)
        return nullptr;
    std::lock_guard lock(m_kernelsMutex);
    auto it = m_kernels.find(name);
    if (it != m_kernels.end())
        return it->second.get();
    for (const KernelDesc& k : m_executable->kernels())
        if (k.name == name) {
            Ref<Kernel> kernel = adoptRef(makeObject<Kernel>(m_program, k));
            Kernel* raw = kernel.get();
            m_kernels.emplace(name, std::move(kernel));
            return raw;
        }
    return nullptr;
}

std::unique_ptr<DeviceCommand> DeviceEnqueueSession::nextReady(bool& waitFailed, cl_int& result) {
    for (;;) {
        waitFailed = false;
        // The earliest queued command that may start: the head of the no-wait-list FIFO or the
        // first waiting command whose events completed, whichever came first (a stream of
        // commands without wait lists must not starve one whose events are done).
        size_t waiter = m_waiting.size();
        bool failed = false;
        for (size_t i = 0; i < m_waiting.size(); ++i) {
            if (!m_ready.empty() && m_waiting[i]->order > m_ready.front()->order)
                break;
            bool done = true;
            failed = false;
            for (DeviceEvent* w : m_waiting[i]->waits) {
                done = done && w->status <= CL_COMPLETE;
                failed = failed || w->status < 0;
            }
            if (done) {
                waiter = i;
                break;
            }
        }
        if (waiter < m_waiting.size()) {
            std::unique_ptr<DeviceCommand> cmd = std::move(m_waiting[waiter]);
            m_waiting.erase(m_waiting.begin() + ptrdiff_t(waiter));
            waitFailed = failed;
            return cmd;
        }
        if (!m_ready.empty()) {
            std::unique_ptr<DeviceCommand> cmd = std::move(m_ready.front());
            m_ready.pop_front();
            return cmd;
        }
        if (m_waiting.empty())
            return nullptr;
        // Waits nothing can end (a user event no kernel completes): fail them.
        for (auto& c : m_waiting) {
            c->event->start = deviceEnqueueNowNs();
            settle(c->event, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
            m_usedBytes -= c->charge;
        }
        m_waiting.clear();
        if (result == CL_SUCCESS)
            result = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
}

cl_int DeviceEnqueueSession::childLaunch(const DeviceCommand& cmd, KernelLaunch& l) {
    Kernel* kernel = blockKernel(cmd.kernelName.c_str());
    if (!kernel)
        return CL_INVALID_KERNEL;
    const KernelDesc& desc = kernel->desc();
    if (desc.args.size() != cmd.localSizes.size() + 1)
        return CL_INVALID_KERNEL_ARGS;
    if (!resolveDeviceNDRange(cmd.nd, workGroupLimit(*kernel), l))
        return CL_INVALID_WORK_GROUP_SIZE;
    l.kernel = retainRef(kernel);
    l.executable = m_executable;
    const auto& ks = m_executable->kernels();
    for (size_t i = 0; i < ks.size(); ++i)
        if (ks[i].name == cmd.kernelName)
            l.entry = m_executable->entry(i);
    if (!l.entry)
        return CL_INVALID_KERNEL;
    l.args.resize(desc.args.size());
    // Argument 0 is the block literal: by value where the block kernel takes it so (amdgcn),
    // else its address.
    ArgValue& block = l.args[0];
    block.set = true;
    if (desc.args[0].kind == KernelArgKind::Value) {
        block.bytes.assign(cmd.block.get(), cmd.block.get() + cmd.blockBytes);
        block.bytes.resize(std::max<size_t>(desc.args[0].size, cmd.blockBytes));
    } else {
        block.viaSvm = true;
        block.svm = cmd.block.get();
    }
    for (size_t i = 1; i < l.args.size(); ++i) {
        l.args[i].set = true;
        l.args[i].localSize = cmd.localSizes[i - 1];
    }
    return CL_SUCCESS;
}

cl_int DeviceEnqueueSession::drain(const RunFn& run) {
    if (!m_resolved.load(std::memory_order_acquire)) {
        m_launch = nullptr; // no kernel asked for the queue: nothing was enqueued
        return CL_SUCCESS;
    }
    cl_int result = CL_SUCCESS;
    for (;;) {
        std::unique_ptr<DeviceCommand> cmd;
        {
            std::lock_guard lock(m_mutex);
            bool waitFailed = false;
            cmd = nextReady(waitFailed, result);
            if (!cmd)
                break;
            m_usedBytes -= cmd->charge;
            cmd->event->status = CL_RUNNING;
            cmd->event->start = deviceEnqueueNowNs();
            if (waitFailed || cmd->kernelName.empty()) {
                const cl_int st = waitFailed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : 0;
                settle(cmd->event, st);
                if (st < 0 && result == CL_SUCCESS)
                    result = st;
                continue;
            }
        }
        KernelLaunch l;
        cl_int st = childLaunch(*cmd, l);
        if (st == CL_SUCCESS) {
            m_current = cmd->event;
            st = run(l);
            m_current = nullptr;
        }
        std::lock_guard lock(m_mutex);
        cmd->event->end = deviceEnqueueNowNs();
        settle(cmd->event, st < 0 ? st : 0);
        if (st < 0 && result == CL_SUCCESS)
            result = st;
    }
    reset();
    return result;
}

void DeviceEnqueueSession::reset() {
    std::lock_guard lock(m_mutex);
    m_events.clear();
    m_eventSet.clear();
    liveKernelEvents = 0;
    m_usedBytes = 0;
    m_nextOrder = 0;
    {
        std::lock_guard klock(m_kernelsMutex);
        m_kernels.clear();
    }
    m_executable = nullptr;
    m_program = {};
    m_device = nullptr;
    m_context = nullptr;
    m_launch = nullptr;
    m_resolved.store(false, std::memory_order_relaxed);
}

} // namespace duet::rt
