// Queue worker: runs commands in order (or, out of order, as their wait lists complete).
#include "core/queue.hpp"
#include "core/context.hpp"

#include <algorithm>

namespace duet::rt {

namespace {

thread_local Event* t_runningEvent = nullptr;
/// Where deferCompletion puts the running command's pending work (null: it may not defer).
thread_local std::unique_ptr<PendingWork>* t_deferSlot = nullptr;

/// A kernel launch whose device work may still run, and the command kept until it finished.
struct InFlight {
    Command cmd;
    std::unique_ptr<PendingWork> work;
};

/// Completes a command: drops what it holds (memory objects, kernels) before anyone can see it
/// complete, since a release right after a wait must be the last one; then sets its status.
void complete(Command& cmd, cl_int status) {
    cmd.run = nullptr;
    cmd.waitList.clear();
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
/// work when it deferred completion (the caller completes it later), else completes it.
std::unique_ptr<PendingWork> execute(Command& cmd, const std::vector<InFlight>& flying) {
    Event* ev = cmd.event.get(); // null: nobody can observe this command but the queue
    cl_int status = CL_SUCCESS;
    for (Ref<Event>& dep : cmd.waitList)
        if (!inFlight(flying, dep.get()) && dep->wait() < 0) // in flight: ordered on the device
            status = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    std::unique_ptr<PendingWork> work;
    if (status == CL_SUCCESS) {
        if (ev)
            ev->setStatus(CL_RUNNING);
        t_runningEvent = ev;
        t_deferSlot = cmd.mayDefer ? &work : nullptr;
        status = cmd.run();
        t_deferSlot = nullptr;
        t_runningEvent = nullptr;
    }
    if (work && status == CL_SUCCESS)
        return work;
    complete(cmd, status);
    return nullptr;
}

/// Waits for the device work of every command in flight, oldest first, and completes them.
/// Called without the queue's lock; takes it to count them.
void drain(const std::shared_ptr<Queue::Shared>& sh, std::vector<InFlight>& flying) {
    if (flying.empty())
        return;
    for (InFlight& f : flying) {
        cl_int status = f.work->wait(f.cmd.event.get());
        f.work.reset();
        complete(f.cmd, status);
    }
    const size_t n = flying.size();
    flying.clear(); // may drop the last reference to the queue: only `sh` is touched below
    std::lock_guard lock(sh->mutex);
    sh->completed += n;
    if (sh->waiters)
        sh->doneCv.notify_all();
}

/// Whether `cmd` can run while the commands in flight may still be running on the device: one
/// that may defer (a launch, a buffer write, copy or fill) and waits for nothing but them.
bool orderedAfter(const Command& cmd, const std::vector<InFlight>& flying) {
    if (!cmd.mayDefer || flying.size() >= 256)
        return false;
    for (const Ref<Event>& dep : cmd.waitList)
        if (dep->status() > CL_COMPLETE && !inFlight(flying, dep.get()))
            return false;
    return true;
}

bool ready(const Command& cmd) {
    for (const Ref<Event>& dep : cmd.waitList)
        if (dep->status() > CL_COMPLETE)
            return false;
    return true;
}

/// Completion callback of a foreign event an out-of-order queue is waiting for.
void CL_CALLBACK wakeQueue(cl_event, cl_int, void* data) {
    auto* weak = static_cast<std::weak_ptr<Queue::Shared>*>(data);
    if (auto sh = weak->lock()) {
        std::lock_guard lock(sh->mutex);
        ++sh->wakeups;
        sh->workCv.notify_one();
    }
    delete weak;
}

/// Picks the next command to run. In order: the front. Out of order: the first whose wait
/// list has completed; when none is, returns in `toWatch` the foreign events (user events,
/// other queues' commands) to be woken by. Called with the lock held.
bool takeNext(const std::shared_ptr<Queue::Shared>& sh, Command& out,
              std::vector<Ref<Event>>& toWatch) {
    if (!sh->outOfOrder) {
        out = std::move(sh->pending.front());
        sh->pending.pop_front();
        return true;
    }
    for (auto it = sh->pending.begin(); it != sh->pending.end(); ++it)
        if (ready(*it)) {
            out = std::move(*it);
            sh->pending.erase(it);
            return true;
        }
    // Nothing ready: every blocker is either a command of this queue (its completion comes
    // back through this worker) or foreign (a user event or another queue's command). Every
    // foreign dependency is watched, complete or not: one that completed after the scan above
    // would otherwise wake nobody (its callback runs at once instead).
    for (Command& c : sh->pending) {
        if (c.watched)
            continue;
        c.watched = true;
        for (Ref<Event>& dep : c.waitList)
            if (dep->queue() != sh->owner)
                toWatch.push_back(dep);
    }
    return false;
}

void workerLoop(std::shared_ptr<Queue::Shared> sh) {
    std::vector<InFlight> flying;
    std::unique_lock lock(sh->mutex);
    for (;;) {
        if (sh->pending.empty()) {
            if (!flying.empty()) { // nothing more to submit: wait for the device
                lock.unlock();
                drain(sh, flying);
                lock.lock();
                continue;
            }
            if (sh->stop)
                return;
            // Spin briefly before sleeping: back-to-back enqueues are the common case. The
            // counter is read without the lock, so a new command is seen within one pause.
            const uint64_t seen = sh->enqueued.load(std::memory_order_relaxed);
            lock.unlock();
            for (int i = 0; i < 4000; ++i) {
                __builtin_ia32_pause();
                if (sh->enqueued.load(std::memory_order_acquire) != seen ||
                    sh->stop.load(std::memory_order_relaxed))
                    break;
            }
            lock.lock();
            if (sh->pending.empty()) {
                sh->workerSleeping = true;
                sh->workCv.wait(lock, [&] { return !sh->pending.empty() || sh->stop; });
                sh->workerSleeping = false;
            }
            continue;
        }
        Command cmd;
        std::vector<Ref<Event>> toWatch;
        if (!takeNext(sh, cmd, toWatch)) {
            uint64_t seen = sh->wakeups;
            size_t count = sh->pending.size();
            // Callbacks may run at once (the event just finished): never under our lock.
            lock.unlock();
            for (Ref<Event>& e : toWatch)
                e->addCallback(CL_COMPLETE, wakeQueue, new std::weak_ptr<Queue::Shared>(sh));
            toWatch.clear();
            lock.lock();
            sh->workerSleeping = true;
            sh->workCv.wait(lock, [&] {
                return sh->wakeups != seen || sh->pending.size() != count || sh->stop;
            });
            sh->workerSleeping = false;
            continue;
        }
        lock.unlock();
        if (!orderedAfter(cmd, flying))
            drain(sh, flying);
        if (std::unique_ptr<PendingWork> work = execute(cmd, flying)) {
            flying.push_back({std::move(cmd), std::move(work)});
            lock.lock();
            continue;
        }
        // Dropping the command may release the last reference to the queue itself; only
        // `sh` is touched afterwards.
        cmd = Command{};
        lock.lock();
        ++sh->completed;
        if (sh->waiters)
            sh->doneCv.notify_all();
    }
}

} // namespace

Event* runningCommandEvent() {
    return t_runningEvent;
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
                          std::function<cl_int()> run, bool fence, bool wantEvent) {
    Command cmd;
    // An in-order queue orders and counts its commands itself: an event is only made when
    // someone can look at it (the caller, a blocking call, an out-of-order dependency).
    if (wantEvent || m_shared->outOfOrder) {
        cmd.event = adoptRef(makeObject<Event>(retainRef(m_context.get()), this, type));
        cmd.event->setProfile(0, nowNs());
        cmd.event->setStatus(CL_SUBMITTED);
    }
    cmd.waitList.reserve(waitList.size());
    for (Event* e : waitList)
        cmd.waitList.push_back(retainRef(e));
    cmd.run = std::move(run);
    cmd.fence = fence;
    cmd.mayDefer =
        !m_shared->outOfOrder && (type == CL_COMMAND_NDRANGE_KERNEL || type == CL_COMMAND_TASK ||
                                  type == CL_COMMAND_WRITE_BUFFER ||
                                  type == CL_COMMAND_COPY_BUFFER || type == CL_COMMAND_FILL_BUFFER);
    Ref<Event> result = cmd.event;
    {
        std::lock_guard lock(m_shared->mutex);
        Shared& sh = *m_shared;
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
        sh.enqueued.fetch_add(1, std::memory_order_release);
        if (sh.workerSleeping)
            sh.workCv.notify_one();
    }
    return result;
}

void Queue::finish() {
    uint64_t target = 0;
    {
        std::lock_guard lock(m_shared->mutex);
        target = m_shared->enqueued.load(std::memory_order_relaxed);
    }
    // A GPU round trip is a few microseconds, about what a futex wake-up costs: spin for up to
    // ~20 us first, then sleep.
    const cl_ulong spinUntil = nowNs() + 20'000;
    while (m_shared->completed.load(std::memory_order_acquire) < target) {
        __builtin_ia32_pause();
        if (nowNs() > spinUntil)
            break;
    }
    std::unique_lock lock(m_shared->mutex);
    if (m_shared->completed >= target)
        return;
    m_shared->waiters = true;
    m_shared->doneCv.wait(lock, [&] { return m_shared->completed >= target; });
}

} // namespace duet::rt
