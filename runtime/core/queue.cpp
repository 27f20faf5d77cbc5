// Queue worker: runs commands in order (or, out of order, as their wait lists complete).
#include "core/queue.hpp"
#include "core/context.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace duet::rt {

namespace {

thread_local Event* t_runningEvent = nullptr;
/// Where deferCompletion puts the running command's pending work (null: it may not defer).
thread_local std::unique_ptr<PendingWork>* t_deferSlot = nullptr;
/// The running command's queue's device state slot (null outside a command).
thread_local std::unique_ptr<QueueDeviceState>* t_queueState = nullptr;

using Shared = Queue::Shared;

/// How long the worker leaves work in flight to an application thread (finish, a wait) before
/// waiting for it itself: a caller that waits right after enqueueing (or is already spinning in
/// finish or a wait, which retry) does it without a thread hop.
constexpr cl_ulong kDrainGraceNs = 5'000;

/// How many remains of completed commands an enqueue frees (after its command is on its way):
/// more than the one command it adds, so that they never pile up, few enough that the GPU is
/// still busy with what was just submitted.
constexpr size_t kFreePerEnqueue = 2;

/// How many remains the worker leaves to the application's enqueues when it goes to sleep; it
/// frees the rest, so that a queue idle after a long stream of commands does not keep them.
constexpr size_t kKeptRemains = 32;

/// Releases each object in `refs` as many times as it appears there, then empties it.
void releaseAll(std::vector<Object*>& refs) {
    std::sort(refs.begin(), refs.end());
    for (size_t i = 0; i < refs.size();) {
        size_t j = i + 1;
        while (j < refs.size() && refs[j] == refs[i])
            ++j;
        refs[i]->release(uint32_t(j - i));
        i = j;
    }
    refs.clear();
}

/// Completes a command: drops what it holds (memory objects, kernels) before anyone can see it
/// complete, since a release right after a wait must be the last one; then sets its status.
/// Its payload and device work go to `sh.dying`, to be freed later (CommandPayload says why).
/// `released`: its payload's references were released already (drain).
void complete(Shared& sh, Command& cmd, std::unique_ptr<PendingWork> work, cl_int status,
              bool released = false) {
    cmd.run = nullptr;
    cmd.waitList.clear();
    if (cmd.payload && !released) {
        cmd.payload->collectRefs(sh.releasing);
        releaseAll(sh.releasing);
    }
    if (cmd.payload || work) {
        Remains remains(std::move(cmd.payload), std::move(work));
        if (sh.batched)
            sh.dying.push_back(std::move(remains));
    }
    if (Event* ev = cmd.event.get())
        ev->setStatus(status == CL_SUCCESS ? CL_COMPLETE : status);
}

bool inFlight(const std::vector<InFlight>& flying, const Event* e) {
    for (const InFlight& f : flying)
        if (f.cmd.event.get() == e)
            return true;
    return false;
}

/// Runs one command: waits for its dependencies, then executes it. Returns its pending device
/// work when it deferred completion (the caller completes it later), else completes it. The
/// caller holds `sh.running`.
std::unique_ptr<PendingWork> execute(Shared& sh, Command& cmd) {
    Event* ev = cmd.event.get(); // null: nobody can observe this command but the queue
    cl_int status = CL_SUCCESS;
    for (Ref<Event>& dep : cmd.waitList)
        if (!inFlight(sh.flying, dep.get()) && dep->wait() < 0) // in flight: ordered on the device
            status = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    std::unique_ptr<PendingWork> work;
    sh.started.fetch_add(1, std::memory_order_release);
    if (status == CL_SUCCESS) {
        if (ev)
            ev->setStatus(CL_RUNNING);
        t_runningEvent = ev;
        t_deferSlot = cmd.mayDefer ? &work : nullptr;
        t_queueState = &sh.deviceState;
        status = cmd.run();
        t_queueState = nullptr;
        t_deferSlot = nullptr;
        t_runningEvent = nullptr;
    }
    if (work && status == CL_SUCCESS)
        return work;
    complete(sh, cmd, std::move(work), status);
    return nullptr;
}

/// Waits for the device work of the commands in flight, oldest first, and completes them: all
/// of them, or up to and including the one of `until`. Returns how many completed. The caller
/// holds `sh.running`; the lock is not held.
size_t drain(Shared& sh, const Event* until = nullptr) {
    std::vector<InFlight>& flying = sh.flying;
    const size_t count = flying.size();
    size_t n = 0;
    if (!sh.batched) { // DUET_QUEUE_BATCH=0: one command after the other, as it was
        while (n < count) {
            InFlight& f = flying[n++];
            const bool last = until && f.cmd.event.get() == until;
            const cl_int status = f.work->wait(f.cmd.event.get());
            complete(sh, f.cmd, std::move(f.work), status);
            if (last)
                break;
        }
        flying.erase(flying.begin(), flying.begin() + ptrdiff_t(n));
        sh.flyingCount.store(uint32_t(flying.size()), std::memory_order_release);
        return n;
    }
    // The waits first: the device runs the commands in order, so the first wait mostly covers
    // the others.
    while (n < count) {
        InFlight& f = flying[n++];
        f.status = f.work->wait(f.cmd.event.get());
        if (until && f.cmd.event.get() == until)
            break;
    }
    // Then the references the commands hold, together: a kernel and buffers launched n times
    // lose n references in one atomic operation (the application's thread takes new ones
    // meanwhile: one cache-line transfer per object, not per command).
    std::vector<Object*>& refs = sh.releasing;
    for (size_t i = 0; i < n; ++i) {
        Command& cmd = flying[i].cmd;
        if (cmd.payload)
            cmd.payload->collectRefs(refs);
        if (cmd.queue)
            refs.push_back(cmd.queue.detach());
    }
    releaseAll(refs);
    for (size_t i = 0; i < n; ++i)
        complete(sh, flying[i].cmd, std::move(flying[i].work), flying[i].status, true);
    flying.erase(flying.begin(), flying.begin() + ptrdiff_t(n));
    sh.flyingCount.store(uint32_t(flying.size()), std::memory_order_release);
    return n;
}

/// Gives `running` back after `done` commands completed; wakes whoever waits for them and the
/// worker when something is left for it. Takes the lock.
void handBack(Shared& sh, size_t done) {
    std::lock_guard lock(sh.mutex);
    if (!sh.dying.empty()) {
        for (Remains& r : sh.dying)
            sh.dead.push_back(std::move(r));
        sh.dying.clear();
    }
    sh.completed += done;
    sh.running.store(false, std::memory_order_release);
    if (done && sh.waiters)
        sh.doneCv.notify_all();
    if (sh.workerSleeping && (!sh.pending.empty() || !sh.flying.empty()))
        sh.workCv.notify_one();
}

/// How many commands a queue keeps in flight at most.
constexpr size_t kMaxInFlight = 256;

/// How many commands of an in-order queue its worker takes under one lock.
constexpr size_t kWorkerBatch = 16;

/// Whether `cmd` can run while the commands in flight may still be running on the device: one
/// that may defer (a launch, a buffer write, copy or fill) and waits for nothing but them.
bool orderedAfter(const Command& cmd, const std::vector<InFlight>& flying) {
    if (!cmd.mayDefer || flying.size() >= kMaxInFlight)
        return false;
    for (const Ref<Event>& dep : cmd.waitList)
        if (dep->status() > CL_COMPLETE && !inFlight(flying, dep.get()))
            return false;
    return true;
}

/// Runs `cmd` on this thread, which holds `sh.running`, after what it must follow in flight;
/// keeps its device work in flight or counts it complete. Returns how many commands completed.
size_t runHere(Shared& sh, Command& cmd) {
    size_t done = 0;
    if (!orderedAfter(cmd, sh.flying))
        done += drain(sh);
    if (std::unique_ptr<PendingWork> work = execute(sh, cmd)) {
        sh.flying.push_back({std::move(cmd), std::move(work)});
        sh.flyingCount.store(uint32_t(sh.flying.size()), std::memory_order_release);
        return done;
    }
    // Dropping the command may release the last reference to the queue itself; only `sh` is
    // touched afterwards.
    cmd = Command{};
    return done + 1;
}

bool ready(const Command& cmd) {
    for (const Ref<Event>& dep : cmd.waitList)
        if (dep->status() > CL_COMPLETE)
            return false;
    return true;
}

/// Whether an in-order queue's command may run on the enqueuing thread now (Queue::enqueue):
/// the queue is idle and every event it waits for has completed or is its own in flight.
/// Called with the lock held.
bool mayRunInline(const Shared& sh, const Command& cmd, bool blocking) {
    if (sh.outOfOrder || !sh.pending.empty() || sh.running.load(std::memory_order_relaxed))
        return false;
    if (blocking ? !sh.inlineBlocking
                 : !(sh.inlineSubmit && cmd.mayDefer && sh.flying.empty() &&
                     sh.lastStretchCommands <= 1))
        return false;
    for (const Ref<Event>& dep : cmd.waitList)
        if (dep->status() > CL_COMPLETE && !inFlight(sh.flying, dep.get()))
            return false;
    return true;
}

/// Has `event`, a foreign event an out-of-order queue is waiting for, wake the queue's worker
/// when it completes. The event owns the watcher (Event::onComplete): one that never completes
/// frees it when it is destroyed. The watcher holds the queue's state weakly: it may complete
/// after the queue is gone.
void wakeOnCompletion(Event& event, const std::shared_ptr<Shared>& shared) {
    event.onComplete([weak = std::weak_ptr<Shared>(shared)](cl_int) {
        if (std::shared_ptr<Shared> sh = weak.lock()) {
            std::lock_guard lock(sh->mutex);
            ++sh->wakeups;
            sh->workCv.notify_one();
        }
    });
}

/// Picks the next command to run. In order: the front. Out of order: the first whose wait
/// list has completed; when none is, returns in `toWatch` the foreign events (user events,
/// other queues' commands) to be woken by. Called with the lock held.
bool takeNext(Shared& sh, Command& out, std::vector<Ref<Event>>& toWatch) {
    if (!sh.outOfOrder) {
        out = std::move(sh.pending.front());
        sh.pending.pop_front();
        sh.pendingCount.store(uint32_t(sh.pending.size()), std::memory_order_relaxed);
        return true;
    }
    for (auto it = sh.pending.begin(); it != sh.pending.end(); ++it)
        if (ready(*it)) {
            out = std::move(*it);
            sh.pending.erase(it);
            sh.pendingCount.store(uint32_t(sh.pending.size()), std::memory_order_relaxed);
            return true;
        }
    // Nothing ready: every blocker is either a command of this queue (its completion comes
    // back through this worker) or foreign (a user event or another queue's command). Every
    // foreign dependency is watched, complete or not: one that completed after the scan above
    // would otherwise wake nobody (its callback runs at once instead).
    for (Command& c : sh.pending) {
        if (c.watched)
            continue;
        c.watched = true;
        for (Ref<Event>& dep : c.waitList)
            if (dep->queue() != sh.owner)
                toWatch.push_back(dep);
    }
    return false;
}

/// The worker's spin between commands, without the lock: returns once there may be something
/// for it (a pending command while no other thread runs the queue, flying work nobody has
/// waited for within kDrainGraceNs, a stop), or when it has spun long enough to sleep instead.
void spinForWork(const Shared& sh) {
    uint64_t activity = sh.activity.load(std::memory_order_acquire);
    cl_ulong graceFrom = 0;
    // Where this process's threads run the commands, a bounded time (Queue::hostSpinNs); the
    // count of pauses otherwise.
    const cl_ulong spinFrom = sh.hostSpinNs ? nowNs() : 0;
    for (int idle = 0; idle < 4000; ++idle) {
        if (sh.hostSpinNs && idle % 16 == 15 && nowNs() - spinFrom > sh.hostSpinNs)
            return;
        if (sh.stop.load(std::memory_order_relaxed))
            return;
        const bool running = sh.running.load(std::memory_order_acquire);
        if (!running && sh.pendingCount.load(std::memory_order_acquire))
            return;
        if (!running && sh.flyingCount.load(std::memory_order_acquire)) {
            const uint64_t now = sh.activity.load(std::memory_order_acquire);
            if (now != activity || !graceFrom) {
                activity = now;
                graceFrom = nowNs();
            } else if (nowNs() - graceFrom > kDrainGraceNs) {
                return;
            }
            idle = 0; // work is in flight: keep watching it rather than sleep
        }
        __builtin_ia32_pause();
    }
}

void workerLoop(std::shared_ptr<Shared> shared) {
    Shared& sh = *shared;
    std::vector<Command> batch; // in-order: the commands taken under one lock
    std::unique_lock lock(sh.mutex);
    for (;;) {
        if (!sh.running.load(std::memory_order_relaxed)) {
            if (!sh.pending.empty() && !sh.outOfOrder && sh.batched) {
                // In order: the front commands at once, one lock for them all (an application
                // thread enqueueing meanwhile takes the same lock once a command).
                const size_t k = std::min(sh.pending.size(), kWorkerBatch);
                for (size_t i = 0; i < k; ++i) {
                    batch.push_back(std::move(sh.pending.front()));
                    sh.pending.pop_front();
                }
                sh.pendingCount.store(uint32_t(sh.pending.size()), std::memory_order_relaxed);
                sh.running.store(true, std::memory_order_relaxed);
                lock.unlock();
                size_t done = 0;
                for (Command& cmd : batch)
                    done += runHere(sh, cmd);
                batch.clear();
                handBack(sh, done);
                lock.lock();
                continue;
            }
            if (!sh.pending.empty()) {
                Command cmd;
                std::vector<Ref<Event>> toWatch;
                if (!takeNext(sh, cmd, toWatch)) {
                    uint64_t seen = sh.wakeups;
                    size_t count = sh.pending.size();
                    // Callbacks may run at once (the event just finished): never under our lock.
                    lock.unlock();
                    for (Ref<Event>& e : toWatch)
                        wakeOnCompletion(*e, shared);
                    toWatch.clear();
                    lock.lock();
                    sh.workerSleeping = true;
                    sh.workCv.wait(lock, [&] {
                        return sh.wakeups != seen || sh.pending.size() != count || sh.stop;
                    });
                    sh.workerSleeping = false;
                    continue;
                }
                sh.running.store(true, std::memory_order_relaxed);
                lock.unlock();
                size_t done = runHere(sh, cmd);
                handBack(sh, done);
                lock.lock();
                continue;
            }
            if (!sh.flying.empty()) {
                // Nothing more to submit: after a grace period in which no application thread
                // took it on, wait for the device here.
                lock.unlock();
                if (!sh.stop.load(std::memory_order_relaxed))
                    spinForWork(sh);
                lock.lock();
                if (sh.running.load(std::memory_order_relaxed) || !sh.pending.empty() ||
                    sh.flying.empty())
                    continue;
                sh.running.store(true, std::memory_order_relaxed);
                lock.unlock();
                size_t done = drain(sh);
                handBack(sh, done);
                lock.lock();
                continue;
            }
            if (sh.stop)
                return;
        }
        // Nothing for the worker now (or another thread runs the queue): spin briefly before
        // sleeping, since back-to-back enqueues are the common case.
        lock.unlock();
        spinForWork(sh);
        lock.lock();
        if (sh.stop || (!sh.running.load(std::memory_order_relaxed) &&
                        (!sh.pending.empty() || !sh.flying.empty())))
            continue;
        if (sh.dead.size() > kKeptRemains) {
            // Going to sleep with many completed commands' remains (the application enqueued a
            // long stream and stopped): free all but the newest, which its next enqueues reuse.
            const auto last = sh.dead.end() - ptrdiff_t(kKeptRemains);
            std::vector<Remains> doomed(std::make_move_iterator(sh.dead.begin()),
                                        std::make_move_iterator(last));
            sh.dead.erase(sh.dead.begin(), last);
            lock.unlock();
            doomed.clear();
            lock.lock();
            continue;
        }
        sh.workerSleeping = true;
        sh.workCv.wait(lock, [&] {
            return sh.stop || (!sh.running.load(std::memory_order_relaxed) &&
                               (!sh.pending.empty() || !sh.flying.empty()));
        });
        sh.workerSleeping = false;
    }
}

/// DUET_QUEUE_INLINE=0 keeps every command on the worker thread.
bool inlineAllowed() {
    static const bool allowed = [] {
        const char* v = std::getenv("DUET_QUEUE_INLINE");
        return !(v && std::strcmp(v, "0") == 0);
    }();
    return allowed;
}

/// DUET_QUEUE_BATCH=0: the queue's thread takes commands one at a time, and completing them frees
/// their remains at once (Queue::Shared::dead), each command releasing its own references.
bool batchAllowed() {
    static const bool allowed = [] {
        const char* v = std::getenv("DUET_QUEUE_BATCH");
        return !(v && std::strcmp(v, "0") == 0);
    }();
    return allowed;
}

/// DUET_QUEUE_BUSY_SPIN=0: waits sleep after kWaitSpinNs even while the queue is busy.
bool busySpinAllowed() {
    static const bool allowed = [] {
        const char* v = std::getenv("DUET_QUEUE_BUSY_SPIN");
        return !(v && std::strcmp(v, "0") == 0);
    }();
    return allowed;
}

} // namespace

Event* runningCommandEvent() {
    return t_runningEvent;
}

std::unique_ptr<QueueDeviceState>* runningQueueState() {
    return t_queueState;
}

bool deferCompletion(std::unique_ptr<PendingWork>& work) {
    if (!t_deferSlot || *t_deferSlot || !work)
        return false;
    *t_deferSlot = std::move(work);
    return true;
}

Queue::Queue(Ref<Context> context, Device* device, cl_command_queue_properties properties,
             std::vector<cl_queue_properties> propertyList)
    : _cl_command_queue(kTag), m_context(std::move(context)), m_device(device),
      m_properties(properties), m_propertyList(std::move(propertyList)),
      m_shared(std::make_shared<Shared>()) {
    m_shared->outOfOrder = outOfOrder();
    m_shared->owner = this;
    m_shared->batched = batchAllowed();
    m_shared->dying.reserve(16);
    if (!onDevice() && inlineAllowed()) {
        m_shared->inlineBlocking = true;
        m_shared->inlineSubmit = device->backend().queuesDeviceWork();
    }
    // A waiter spinning on a busy queue takes a core: only where the device, not this process's
    // threads, runs the commands (the CUDA driver's own default spins in a wait likewise when the
    // process has fewer contexts than cores).
    m_shared->spinWhileBusy = device->backend().queuesDeviceWork() &&
                              std::thread::hardware_concurrency() > 1 && busySpinAllowed();
    if (!device->backend().queuesDeviceWork())
        m_shared->hostSpinNs = kHostSpinNs;
    m_worker = std::thread(workerLoop, m_shared);
}

Queue::~Queue() {
    if (onDevice())
        m_context->removeDeviceQueue(this, !(m_properties & CL_QUEUE_ON_DEVICE_DEFAULT));
    {
        std::lock_guard lock(m_shared->mutex);
        m_shared->stop = true;
        m_shared->workCv.notify_all();
    }
    if (m_worker.get_id() == std::this_thread::get_id())
        m_worker.detach();
    else
        m_worker.join();
}

Ref<Event> Queue::enqueue(cl_command_type type, std::span<Event* const> waitList,
                          std::function<cl_int()> run, bool fence, bool wantEvent, bool blocking,
                          std::unique_ptr<CommandPayload> payload) {
    // Remains of completed commands taken from the queue below; freed when this returns, after
    // the command is on its way (destroyed after the lock's scope), by the thread that made them
    // (its allocator gets the blocks back for its next commands).
    Remains doomed[kFreePerEnqueue];
    Command cmd;
    // An in-order queue orders and counts its commands itself: an event is only made when
    // someone can look at it (the caller, a blocking call, an out-of-order dependency).
    if (wantEvent || blocking || m_shared->outOfOrder) {
        cmd.event = adoptRef(makeObject<Event>(retainRef(m_context.get()), this, type));
        cmd.event->setProfile(0, nowNs());
        cmd.event->setStatus(CL_SUBMITTED);
    } else {
        cmd.queue = retainRef<_cl_command_queue>(this);
    }
    cmd.waitList.reserve(waitList.size());
    for (Event* e : waitList)
        cmd.waitList.push_back(retainRef(e));
    cmd.run = std::move(run);
    cmd.payload = std::move(payload);
    cmd.fence = fence;
    cmd.mayDefer =
        !m_shared->outOfOrder && (type == CL_COMMAND_NDRANGE_KERNEL || type == CL_COMMAND_TASK ||
                                  type == CL_COMMAND_WRITE_BUFFER ||
                                  type == CL_COMMAND_COPY_BUFFER || type == CL_COMMAND_FILL_BUFFER);
    Ref<Event> result = cmd.event;
    Shared& sh = *m_shared;
    {
        std::lock_guard lock(sh.mutex);
        for (Remains& r : doomed) {
            if (sh.dead.empty())
                break;
            r = std::move(sh.dead.back());
            sh.dead.pop_back();
        }
        if (blocking) {
            sh.lastStretchCommands = sh.stretchCommands;
            sh.stretchCommands = 0;
        } else if (cmd.mayDefer) {
            ++sh.stretchCommands;
        }
        if (mayRunInline(sh, cmd, blocking)) {
            sh.running.store(true, std::memory_order_relaxed);
            sh.activity.fetch_add(1, std::memory_order_release);
            sh.enqueued.fetch_add(1, std::memory_order_release);
        } else {
            if (sh.outOfOrder) {
                // Order around fences: a fence waits for everything before it, and everything
                // after waits for the last fence.
                std::erase_if(sh.outstanding,
                              [](const Ref<Event>& e) { return e->status() <= CL_COMPLETE; });
                if (fence)
                    for (Ref<Event>& e : sh.outstanding)
                        cmd.waitList.push_back(e);
                else if (sh.lastFence && sh.lastFence->status() > CL_COMPLETE)
                    cmd.waitList.push_back(sh.lastFence);
                if (fence)
                    sh.lastFence = result;
                sh.outstanding.push_back(result);
            }
            sh.pending.push_back(std::move(cmd));
            sh.pendingCount.store(uint32_t(sh.pending.size()), std::memory_order_release);
            sh.enqueued.fetch_add(1, std::memory_order_release);
            if (sh.workerSleeping && !sh.running.load(std::memory_order_relaxed))
                sh.workCv.notify_one();
            return result;
        }
    }
    // Inline: this thread holds `running`. The caller holds the queue, so it outlives this.
    handBack(sh, runHere(sh, cmd));
    return result;
}

void Queue::completeInFlight(const Event* event) {
    Shared& sh = *m_shared;
    if (!sh.flyingCount.load(std::memory_order_acquire) ||
        sh.running.load(std::memory_order_acquire))
        return;
    std::shared_ptr<Shared> keep = m_shared; // completing commands may drop the queue
    {
        std::lock_guard lock(sh.mutex);
        if (sh.running.load(std::memory_order_relaxed) || sh.flying.empty() ||
            (event && !inFlight(sh.flying, event)))
            return;
        sh.running.store(true, std::memory_order_relaxed);
        sh.activity.fetch_add(1, std::memory_order_release);
    }
    handBack(sh, drain(sh, event));
}

void Queue::finish() {
    Shared& sh = *m_shared;
    uint64_t target = 0;
    {
        std::lock_guard lock(sh.mutex);
        target = sh.enqueued.load(std::memory_order_relaxed);
        sh.lastStretchCommands = sh.stretchCommands;
        sh.stretchCommands = 0;
    }
    // A GPU round trip is a few microseconds, about what a futex wake-up costs: spin for up to
    // kWaitSpinNs first (longer while the queue is busy, spinsWhileBusy), then sleep.
    // Meanwhile, device work in flight with nothing pending behind it and no other thread on the
    // queue is waited for here, without a hop through the worker.
    uint64_t seen = progress();
    cl_ulong spinFrom = nowNs();
    while (sh.completed.load(std::memory_order_acquire) < target) {
        if (sh.flyingCount.load(std::memory_order_acquire) &&
            !sh.pendingCount.load(std::memory_order_acquire) &&
            !sh.running.load(std::memory_order_acquire))
            completeInFlight(nullptr);
        else
            __builtin_ia32_pause();
        const cl_ulong now = nowNs();
        if (sh.spinWhileBusy && progress() != seen) {
            seen = progress();
            spinFrom = now;
        } else if (now - spinFrom > (sh.spinWhileBusy && sh.running.load(std::memory_order_relaxed)
                                         ? kBusySpinNs
                                         : kWaitSpinNs)) {
            break;
        }
    }
    std::unique_lock lock(sh.mutex);
    if (sh.completed >= target)
        return;
    sh.waiters = true;
    sh.doneCv.wait(lock, [&] { return sh.completed >= target; });
}

} // namespace duet::rt
