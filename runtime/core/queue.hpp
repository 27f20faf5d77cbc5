// Command queues: enqueue returns at once; one worker thread per queue runs the commands, or
// the calling thread when the queue is idle and the command only queues device work or blocks.
#pragma once

#include "core/command_payload.hpp"
#include "core/event.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace duet::rt {

/// One enqueued operation. `run` does the work on the queue's worker thread and returns
/// CL_SUCCESS or the (negative) execution status to give the event.
/// The event of the command the calling thread is running (null outside a command, or when
/// nothing can observe it): a backend reports modelled device time through it
/// (Event::setDeviceDuration).
Event* runningCommandEvent();

/// Device work that a command submitted and that may still be running (kernels on a GPU
/// stream). The queue completes the command once `wait` returns.
class PendingWork {
public:
    virtual ~PendingWork() = default;
    /// Blocks until the work has finished; returns CL_SUCCESS or a negative execution status.
    /// `event` (null when nobody can observe the command) may get the device's duration
    /// (Event::setDeviceDuration) before it completes.
    virtual cl_int wait(Event* event) = 0;
};

/// For a backend inside a command (on the queue's worker thread): instead of waiting for the
/// device work it submitted, the command hands `work` to its queue and returns CL_SUCCESS. The
/// queue keeps the command (and the memory objects it holds) until `work` finished and waits for
/// it before anything that is not ordered after it on the device: a command of another type, a
/// wait for another queue's or a user event, an empty queue, 256 outstanding commands. Only
/// kernel launches and buffer writes, copies and fills of in-order queues may defer (the device
/// queues them in order on one stream); false means the caller must wait itself.
bool deferCompletion(std::unique_ptr<PendingWork>& work);

/// What a device keeps per command queue (its GPU stream, say): made by the device inside the
/// queue's first command that needs it (runningQueueState), destroyed with the queue.
class QueueDeviceState {
public:
    virtual ~QueueDeviceState() = default;
};

/// Inside a command, on whichever thread runs it: the slot of the command's queue for the
/// device's per-queue state (null outside commands). Only one thread at a time runs a queue's
/// commands, so the state needs no lock of its own for that.
std::unique_ptr<QueueDeviceState>* runningQueueState();

/// The queue's lock: held for a few instructions at a time by an application thread and the
/// worker in turn, so a thread that finds it taken spins briefly before it sleeps (a futex wait
/// and wake-up cost more than the whole critical section).
class QueueMutex {
public:
    void lock() {
        for (int i = 0; i < 64; ++i) {
            if (m_mutex.try_lock())
                return;
            __builtin_ia32_pause();
        }
        m_mutex.lock();
    }
    bool try_lock() { return m_mutex.try_lock(); }
    void unlock() { m_mutex.unlock(); }

private:
    std::mutex m_mutex;
};

struct Command {
    Ref<Event> event;
    /// The queue, for a command without an event (an event holds its queue): a queue released
    /// while such a command still waits (on a user event, say) is destroyed after it ran, not
    /// in the release, which would wait for it.
    Ref<_cl_command_queue> queue;
    std::vector<Ref<Event>> waitList;
    std::function<cl_int()> run;
    /// What `run` works on, when it holds references (a launch): see CommandPayload.
    std::unique_ptr<CommandPayload> payload;
    /// Out-of-order queues: later commands wait for this one (barriers, list-less markers).
    bool fence = false;
    bool watched = false;  ///< completion callbacks already asked of its foreign events
    bool mayDefer = false; ///< in-order queue, launch or buffer write/copy/fill (deferCompletion)
};

/// A command whose device work may still run (deferCompletion), kept until it finished.
struct InFlight {
    Command cmd;
    std::unique_ptr<PendingWork> work;
    cl_int status = CL_SUCCESS; ///< what `work` returned (drain)
};

/// What is left of a completed command to free: its payload (references already released) and
/// its device work's record. Freed off the waiting thread's path (Queue::Shared::dead).
struct Remains {
    std::unique_ptr<CommandPayload> payload;
    std::unique_ptr<PendingWork> work;
    Remains() = default;
    Remains(std::unique_ptr<CommandPayload> p, std::unique_ptr<PendingWork> w)
        : payload(std::move(p)), work(std::move(w)) {}
    Remains(Remains&&) = default;
    Remains& operator=(Remains&& o) noexcept {
        forget();
        payload = std::move(o.payload);
        work = std::move(o.work);
        return *this;
    }
    ~Remains() { forget(); }

private:
    void forget() {
        if (payload)
            payload->forgetRefs();
    }
};

class Queue final : public _cl_command_queue {
public:
    static constexpr Tag kTag = Tag::Queue;
    Queue(Ref<Context> context, Device* device, cl_command_queue_properties properties,
          std::vector<cl_queue_properties> propertyList);
    ~Queue();

    Context* context() const { return m_context.get(); }
    Device* device() const { return m_device; }
    cl_command_queue_properties properties() const { return m_properties; }
    const std::vector<cl_queue_properties>& propertyList() const { return m_propertyList; }
    bool profiling() const { return m_properties & CL_QUEUE_PROFILING_ENABLE; }
    /// An on-device queue (CL_QUEUE_ON_DEVICE): kernels enqueue on it (enqueue_kernel), the
    /// host does not; its commands live in the device's launches (core/device_enqueue.*: the
    /// session of one host launch), not in this object. It counts in its context's
    /// on-device queues from creation to destruction.
    bool onDevice() const { return m_properties & CL_QUEUE_ON_DEVICE; }
    /// CL_QUEUE_SIZE of an on-device queue, in bytes (0 for a host queue).
    cl_uint deviceQueueSize() const { return m_deviceQueueSize; }
    void setDeviceQueueSize(cl_uint bytes) { m_deviceQueueSize = bytes; }

    /// Creates the command's event and submits it; returns the event (the caller owns the
    /// returned reference). In-order queues run commands in enqueue order, each after its wait
    /// list; out-of-order queues run any command whose wait list has completed, and barriers
    /// and markers without a wait list (`fence`) order everything around them.
    /// `wantEvent` false lets an in-order queue skip the event (the result is then null).
    /// `blocking`: the caller waits for the command next (a blocking read, write or map).
    ///
    /// An idle in-order queue (nothing pending, no thread running its commands) runs the
    /// command on the calling thread instead of handing it to the worker, when that costs the
    /// caller nothing it would not wait for anyway: a blocking command, or (on a device whose
    /// commands only queue work on the device, DeviceBackend::queuesDeviceWork) a launch or
    /// buffer write, copy or fill while nothing is in flight, when the application waited after
    /// at most one such command the last time. Two thread hops less per round trip.
    /// `DUET_QUEUE_INLINE=0` turns it off.
    ///
    /// `payload` (may be null) is what `run` works on when it holds references (CommandPayload).
    Ref<Event> enqueue(cl_command_type type, std::span<Event* const> waitList,
                       std::function<cl_int()> run, bool fence = false, bool wantEvent = true,
                       bool blocking = false, std::unique_ptr<CommandPayload> payload = nullptr);
    bool outOfOrder() const { return m_properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE; }
    /// Blocks until every command enqueued so far has finished. Device work in flight that no
    /// other thread is waiting for is waited for (and its commands completed) on the calling
    /// thread.
    void finish();
    /// For a wait on `event`, a command of this queue: when its device work is in flight and
    /// no other thread runs this queue's commands, waits for it on the calling thread and
    /// completes it (and the commands before it). Returns at once otherwise.
    void completeInFlight(const Event* event);
    /// How long a thread waiting for this queue's work (finish, Event::wait) spins before it
    /// sleeps: kWaitSpinNs with no sign of progress. On a device whose commands only queue work
    /// on it (a GPU stream), the wait goes on spinning while the queue's thread keeps taking and
    /// completing commands: it is submitting a burst, the device works through it in
    /// microseconds, and the waiter then waits for the stream itself (completeInFlight), where
    /// sleeping first would add a futex wake-up (12-40 us on the lent GPU hosts) to every
    /// burst of launches + clFinish.
    static constexpr cl_ulong kWaitSpinNs = 20'000;
    /// The same while the queue's thread is inside a command (a launch the driver holds up
    /// because the GPU's queue is full takes 20 us and more).
    static constexpr cl_ulong kBusySpinNs = 100'000;
    bool spinsWhileBusy() const { return m_shared->spinWhileBusy; }
    /// On a device that does not queue its work on a GPU stream (DeviceBackend::queuesDeviceWork
    /// false: the CPU device and the GCN model run commands on this process's own threads, the
    /// queue's and the pool's), waits and the worker's wait for its next command spin at most
    /// kHostSpinNs, then sleep. Their spins are counted in `pause`s elsewhere (2,000 and 4,000),
    /// which take ~50 ns on the 2-core EPYC: 100 and 200 us, where a spinning thread takes a
    /// core from the threads doing the work whenever the host has no core to spare. 0 on
    /// devices that queue work on a GPU, which keep the counts. bench/README.md, "Waits on the
    /// CPU device", has the figures.
    cl_ulong hostSpinNs() const { return m_shared->hostSpinNs; }
    static constexpr cl_ulong kHostSpinNs = kWaitSpinNs;
    /// Changes whenever a command of this queue starts or completes.
    uint64_t progress() const {
        return m_shared->started.load(std::memory_order_acquire) +
               m_shared->completed.load(std::memory_order_acquire);
    }
    /// All commands are submitted at enqueue; flush has nothing left to do.
    void flush() {}

    /// State shared with the worker thread, which may outlive the queue object by a moment
    /// (the worker can drop the last reference to its own queue).
    struct Shared {
        QueueMutex mutex;
        std::condition_variable_any workCv, doneCv;
        std::deque<Command> pending;
        /// Commands whose device work may still run, oldest first; only the thread that holds
        /// `running` touches it.
        std::vector<InFlight> flying;
        /// Completed commands' remains, by the thread that holds `running`; handed to `dead`
        /// when it gives `running` back.
        std::vector<Remains> dying;
        /// drain's list of references to release together (kept for its capacity).
        std::vector<Object*> releasing;
        /// Remains to free, under `mutex`: the application's thread frees a few in each enqueue
        /// (after its command is on its way), the worker all but the newest 32 before it sleeps.
        std::vector<Remains> dead;
        /// False (DUET_QUEUE_BATCH=0): the worker takes one command at a time, remains are freed
        /// at once, each completed command releases its own references.
        bool batched = true;
        /// A thread runs this queue's commands or completes its flying ones: the worker or an
        /// application thread (an inline enqueue, finish, a wait). Written under `mutex`; the
        /// counts below mirror `pending` and `flying` for the worker's spin, which reads
        /// without the lock.
        std::atomic<bool> running{false};
        std::atomic<uint32_t> pendingCount{0}, flyingCount{0};
        /// Bumped whenever an application thread takes `running`: the worker, about to wait
        /// for flying work itself, gives way to a caller that is already doing it.
        std::atomic<uint64_t> activity{0};
        bool inlineBlocking = false, inlineSubmit = false; ///< see Queue::enqueue
        /// Launches and buffer writes, copies and fills enqueued since the application last
        /// waited for the queue (finish or a blocking command), and how many the last such
        /// stretch had: an application that enqueues several between waits keeps its thread
        /// free (the worker submits them), one that waits after each submits inline.
        uint32_t stretchCommands = 0, lastStretchCommands = 0;
        std::unique_ptr<QueueDeviceState> deviceState;
        /// Written under `mutex`; read without it by the worker's spin.
        std::atomic<uint64_t> enqueued{0};
        /// Written under `mutex`; read without it by finish()'s spin.
        std::atomic<uint64_t> completed{0};
        /// Commands started (by whichever thread runs them); read by waits' spins (progress()).
        std::atomic<uint64_t> started{0};
        bool spinWhileBusy = false; ///< see Queue::spinsWhileBusy
        cl_ulong hostSpinNs = 0;    ///< see Queue::hostSpinNs
        /// Set under `mutex`; also read without it by the worker's spin (TSan saw that read race
        /// with ~Queue's write while it was a plain bool).
        std::atomic<bool> stop{false};
        bool workerSleeping = false, waiters = false;
        bool outOfOrder = false;
        const void* owner = nullptr; ///< the Queue, to tell its own events from foreign ones
        /// Out-of-order: events of commands not known complete, and the last fence's event.
        std::vector<Ref<Event>> outstanding;
        Ref<Event> lastFence;
        /// Bumped by completion callbacks of foreign events an out-of-order queue waits for.
        uint64_t wakeups = 0;
    };

private:
    Ref<Context> m_context;
    Device* m_device;
    cl_command_queue_properties m_properties;
    std::vector<cl_queue_properties> m_propertyList;
    cl_uint m_deviceQueueSize = 0;
    std::shared_ptr<Shared> m_shared;
    std::thread m_worker;
};

} // namespace duet::rt
