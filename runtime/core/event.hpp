// Events: command status, profiling timestamps, callbacks, waiting.
#pragma once

#include "core/context.hpp"
#include "core/object.hpp"

#include <condition_variable>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

namespace duet::rt {

class Queue;

/// Monotonic nanoseconds (CLOCK_MONOTONIC), the device and host timer of the CPU device.
cl_ulong nowNs();

class Event final : public _cl_event {
public:
    static constexpr Tag kTag = Tag::Event;
    /// A command's event (queue set) or a user event (queue null, status CL_SUBMITTED).
    Event(Ref<Context> context, Queue* queue, cl_command_type type);
    ~Event();

    Context* context() const { return m_context.get(); }
    Queue* queue() const { return m_queue; }
    cl_command_type commandType() const { return m_type; }
    cl_int status() const { return m_status.load(std::memory_order_acquire); }
    bool isUser() const { return m_type == CL_COMMAND_USER; }

    /// Moves the event to `status` (CL_SUBMITTED, CL_RUNNING, CL_COMPLETE or an error < 0),
    /// records the profiling time and runs callbacks. Never called with locks held.
    void setStatus(cl_int status);
    /// Blocks until complete or failed; returns the final status.
    cl_int wait();

    using CallbackFn = void(CL_CALLBACK*)(cl_event, cl_int, void*);
    void addCallback(cl_int onStatus, CallbackFn fn, void* userData);
    /// For the runtime's own watchers (an out-of-order queue waiting for a foreign event):
    /// `fn` runs once with the final status when the event completes or fails, at once when it
    /// already has, on the thread that completes it and without the event's lock. An event
    /// destroyed before it completed (a user event never set) destroys `fn` unrun, and with it
    /// what `fn` holds: the event owns it, nothing leaks.
    void onComplete(std::function<void(cl_int)> fn);
    /// Profiling time for CL_PROFILING_COMMAND_QUEUED..COMPLETE (index 0..4).
    cl_ulong profile(int index) const { return m_times[index]; }
    void setProfile(int index, cl_ulong t) { m_times[index] = t; }
    /// For a device that models its execution time (the GCN software model): the command took
    /// `ns` on the modelled device, so CL_PROFILING_COMMAND_END and _COMPLETE become START
    /// plus `ns` instead of the host's clock. Called by the command before it completes.
    void setDeviceDuration(cl_ulong ns) { m_deviceNs = ns; }

private:
    struct Callback {
        cl_int onStatus;
        CallbackFn fn;
        void* userData;
        std::function<void(cl_int)> internal; ///< set by onComplete instead of fn
    };
    Ref<Context> m_context;
    Queue* m_queue; ///< kept alive by the reference below
    Ref<_cl_command_queue> m_queueRef;
    cl_command_type m_type;
    std::atomic<cl_int> m_status;
    cl_ulong m_times[5] = {};
    cl_ulong m_deviceNs = 0; ///< 0: the host's clock times the command
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::vector<Callback> m_callbacks;
    bool m_waiters = false;
};

/// Waits for all events; returns CL_SUCCESS or CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
cl_int waitForEvents(std::span<Event* const> events);

} // namespace duet::rt
