// Event state machine: status changes, profiling times, callbacks and waits.
#include "core/event.hpp"

#include "core/queue.hpp"

#include <time.h>

namespace duet::rt {

cl_ulong nowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return cl_ulong(ts.tv_sec) * 1000000000ull + cl_ulong(ts.tv_nsec);
}

Event::Event(Ref<Context> context, Queue* queue, cl_command_type type)
    : _cl_event(kTag), m_context(std::move(context)), m_queue(queue),
      m_queueRef(queue ? retainRef<_cl_command_queue>(queue) : Ref<_cl_command_queue>()),
      m_type(type), m_status(queue ? CL_QUEUED : CL_SUBMITTED) {}

Event::~Event() = default;

void Event::setStatus(cl_int status) {
    std::vector<Callback> due;
    {
        std::lock_guard lock(m_mutex);
        cl_int old = m_status.load(std::memory_order_relaxed);
        if (old <= CL_COMPLETE || (status > CL_COMPLETE && status >= old))
            return; // already final, or not a step forward
        cl_ulong t = nowNs();
        if (status == CL_SUBMITTED)
            m_times[1] = t;
        else if (status == CL_RUNNING)
            m_times[2] = t;
        else if (status <= CL_COMPLETE) {
            m_times[3] = m_times[4] = t;
            if (!m_times[2])
                m_times[2] = t;
            if (!m_times[1])
                m_times[1] = m_times[2];
            if (m_deviceNs && status == CL_COMPLETE)
                m_times[3] = m_times[4] = m_times[2] + m_deviceNs;
        }
        m_status.store(status, std::memory_order_release);
        // Callbacks registered for a state run once the event reaches or passes it; errors
        // count as reaching CL_COMPLETE.
        cl_int reached = status < 0 ? CL_COMPLETE : status;
        for (auto it = m_callbacks.begin(); it != m_callbacks.end();) {
            if (reached <= it->onStatus) {
                due.push_back(std::move(*it));
                it = m_callbacks.erase(it);
            } else {
                ++it;
            }
        }
        if (status <= CL_COMPLETE && m_waiters)
            m_cv.notify_all();
    }
    if (due.empty())
        return;
    // Keep the event alive while its callbacks run: one may release it.
    Ref<Event> self = retainRef(this);
    for (const Callback& c : due) {
        if (c.internal)
            c.internal(status);
        else
            c.fn(this, c.onStatus == CL_COMPLETE ? status : c.onStatus, c.userData);
    }
}

cl_int Event::wait() {
    cl_int s = m_status.load(std::memory_order_acquire);
    if (s <= CL_COMPLETE)
        return s;
    // A short spin catches the common case of a command about to finish; meanwhile the
    // command's device work in flight, when no other thread waits for it, is waited for here.
    // The spin goes on while the queue makes progress where it spins while busy
    // (Queue::spinsWhileBusy: its thread is submitting the GPU work before this command).
    const bool whileBusy = m_queue && m_queue->spinsWhileBusy();
    uint64_t seen = whileBusy ? m_queue->progress() : 0;
    // Where this process's threads run the queue's commands, a bounded time (Queue::hostSpinNs).
    const cl_ulong hostSpinNs = m_queue ? m_queue->hostSpinNs() : 0;
    const cl_ulong spinFrom = hostSpinNs ? nowNs() : 0;
    for (int i = 0; i < 2000; ++i) {
        if (hostSpinNs && i % 16 == 15 && nowNs() - spinFrom > hostSpinNs)
            break;
        if (m_queue && i % 8 == 0) {
            m_queue->completeInFlight(this);
            if (whileBusy && m_queue->progress() != seen) {
                seen = m_queue->progress();
                i = 0;
            }
        }
        s = m_status.load(std::memory_order_acquire);
        if (s <= CL_COMPLETE)
            return s;
        __builtin_ia32_pause();
    }
    std::unique_lock lock(m_mutex);
    m_waiters = true;
    m_cv.wait(lock, [&] { return m_status.load(std::memory_order_acquire) <= CL_COMPLETE; });
    return m_status.load(std::memory_order_acquire);
}

void Event::addCallback(cl_int onStatus, CallbackFn fn, void* userData) {
    cl_int now;
    {
        std::lock_guard lock(m_mutex);
        now = m_status.load(std::memory_order_relaxed);
        cl_int reached = now < 0 ? CL_COMPLETE : now;
        if (reached > onStatus) {
            m_callbacks.push_back({onStatus, fn, userData, {}});
            return;
        }
    }
    fn(this, onStatus == CL_COMPLETE ? now : onStatus, userData);
}

void Event::onComplete(std::function<void(cl_int)> fn) {
    cl_int now;
    {
        std::lock_guard lock(m_mutex);
        now = m_status.load(std::memory_order_relaxed);
        if (now > CL_COMPLETE) {
            m_callbacks.push_back({CL_COMPLETE, nullptr, nullptr, std::move(fn)});
            return;
        }
    }
    fn(now);
}

cl_int waitForEvents(std::span<Event* const> events) {
    cl_int result = CL_SUCCESS;
    for (Event* e : events)
        if (e->wait() < 0)
            result = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    return result;
}

} // namespace duet::rt
