// Queue worker: runs commands in order, each once its wait list has finished.
#include "core/queue.hpp"

namespace duet::rt {

namespace {

/// Runs one command: waits for its dependencies, then executes and completes its event.
void execute(Command& cmd, bool profiling) {
    Event& ev = *cmd.event;
    cl_int status = CL_SUCCESS;
    for (Ref<Event>& dep : cmd.waitList)
        if (dep->wait() < 0)
            status = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    if (status == CL_SUCCESS) {
        ev.setStatus(CL_RUNNING);
        status = cmd.run();
    }
    (void)profiling;
    // Drop what the command holds (memory objects, kernels) before anyone can see it complete:
    // a release right after a wait must be the last one.
    cmd.run = nullptr;
    cmd.waitList.clear();
    ev.setStatus(status == CL_SUCCESS ? CL_COMPLETE : status);
}

void workerLoop(std::shared_ptr<Queue::Shared> sh, bool profiling) {
    std::unique_lock lock(sh->mutex);
    for (;;) {
        if (sh->pending.empty()) {
            if (sh->stop)
                return;
            // Spin briefly before sleeping: back-to-back enqueues are the common case.
            lock.unlock();
            for (int i = 0; i < 4000 && !sh->stop; ++i) {
                __builtin_ia32_pause();
                if (i % 64 == 0) {
                    std::lock_guard peek(sh->mutex);
                    if (!sh->pending.empty())
                        break;
                }
            }
            lock.lock();
            if (sh->pending.empty()) {
                sh->workerSleeping = true;
                sh->workCv.wait(lock, [&] { return !sh->pending.empty() || sh->stop; });
                sh->workerSleeping = false;
            }
            continue;
        }
        Command cmd = std::move(sh->pending.front());
        sh->pending.pop_front();
        lock.unlock();
        execute(cmd, profiling);
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

Queue::Queue(Ref<Context> context, Device* device, cl_command_queue_properties properties,
             std::vector<cl_queue_properties> propertyList)
    : _cl_command_queue(kTag), m_context(std::move(context)), m_device(device),
      m_properties(properties), m_propertyList(std::move(propertyList)),
      m_shared(std::make_shared<Shared>()) {
    m_worker = std::thread(workerLoop, m_shared, profiling());
}

Queue::~Queue() {
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
                          std::function<cl_int()> run) {
    Command cmd;
    cmd.event = adoptRef(makeObject<Event>(retainRef(m_context.get()), this, type));
    cmd.event->setProfile(0, nowNs());
    cmd.waitList.reserve(waitList.size());
    for (Event* e : waitList)
        cmd.waitList.push_back(retainRef(e));
    cmd.run = std::move(run);
    cmd.event->setStatus(CL_SUBMITTED);
    Ref<Event> result = cmd.event;
    {
        std::lock_guard lock(m_shared->mutex);
        m_shared->pending.push_back(std::move(cmd));
        ++m_shared->enqueued;
        if (m_shared->workerSleeping)
            m_shared->workCv.notify_one();
    }
    return result;
}

void Queue::finish() {
    std::unique_lock lock(m_shared->mutex);
    uint64_t target = m_shared->enqueued;
    if (m_shared->completed >= target)
        return;
    m_shared->waiters = true;
    m_shared->doneCv.wait(lock, [&] { return m_shared->completed >= target; });
}

} // namespace duet::rt
