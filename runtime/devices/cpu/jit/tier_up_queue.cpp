// The background compile threads of tiered CPU code (a queue of jobs, one thread or a few, batch
// priority) and the tiering's settings: the budget, compiles ahead of need, the compile ratio.
#include "devices/cpu/jit/tier_up_queue.hpp"

#include "devices/cpu/tiered_code.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace duet::rt::cpu {
namespace {

/// The thread's niceness: DUET_CPU_TIER_UP_NICE (0-19), default 0. Measured on the 2-core host
/// (bench/README.md, "Tier-up in the background"): a lower priority makes the compile take
/// longer while launches run quick code, which costs more than the compile's share of the
/// cores (a kernel whose quick code was 15 times slower: 300 frames in 0.7-0.8 s at nice 0,
/// 1.1 s at 5, 1.8-2.4 s at 10), and the worst frame was no better. The thread is SCHED_BATCH
/// instead: it never preempts a launch's workers when they wake up.
int tierUpNice() {
    const char* env = std::getenv("DUET_CPU_TIER_UP_NICE");
    if (!env || !*env)
        return 0;
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (!end || *end != '\0' || n < 0 || n > 19)
        return 0;
    return static_cast<int>(n);
}

int usableCores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0
               ? CPU_COUNT(&set)
               : static_cast<int>(std::thread::hardware_concurrency());
}

constexpr unsigned kMaxThreads = 16;

/// Never destroyed (generated code and other threads may still call submitTierUp while the
/// process exits): stop() runs at exit instead, from the handler registered at start.
struct Queue {
    std::mutex mutex;
    std::condition_variable wake;
    std::condition_variable idle;           ///< a job ended (waitTierUpIdle)
    unsigned running = 0;                   ///< jobs the threads are running
    std::deque<std::function<void()>> jobs; ///< the launch lane
    /// The eager lane, with each job's key (promoteTierUp).
    std::deque<std::pair<const void*, std::function<void()>>> eagerJobs;
    std::vector<std::thread> threads; ///< started as tierUpThreads() asks, never fewer
    std::atomic<bool> stopping{false};
    std::atomic<uint64_t> submitted{0}, started{0}, installed{0}, dropped{0}, failed{0},
        launchPath{0}, taken{0}, eager{0}, promoted{0};

    static constexpr unsigned kExitHandlers = 32; ///< per thread
    static void stopAtExit();

    /// Thread `index`: takes jobs while it is one of the tierUpThreads() asked for now.
    void main(unsigned index) {
        unsigned exitHandlers = 0;
        // Linux scheduling policy and niceness are per thread (a thread is a task).
        sched_param batch{};
        pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);
        if (const int nice = tierUpNice(); nice > 0)
            setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
        pthread_setname_np(pthread_self(), "duet-tierup");
        std::unique_lock lock(mutex);
        for (;;) {
            wake.wait(lock, [&] {
                return stopping.load() ||
                       (index < tierUpThreads() && (!jobs.empty() || !eagerJobs.empty()));
            });
            if (stopping.load())
                return;
            std::function<void()> job;
            if (!jobs.empty()) {
                job = std::move(jobs.front());
                jobs.pop_front();
            } else {
                job = std::move(eagerJobs.front().second);
                eagerJobs.pop_front();
            }
            ++running;
            lock.unlock();
            job();
            job = nullptr; // what it held goes here, not under the lock
            // Static objects first made during that job (LLVM's, ours) are destroyed at exit
            // before the handlers registered earlier run: register another one after them, so
            // that exit waits for a compile in flight before it destroys what a compile uses.
            // The first jobs make them all; the count stays bounded.
            if (exitHandlers < kExitHandlers && !stopping.load()) {
                std::atexit(stopAtExit);
                ++exitHandlers;
            }
            lock.lock();
            --running;
            idle.notify_all();
        }
    }

    /// At exit: drops the queued jobs and waits for those running (each stops at its next
    /// step), so no compile touches LLVM while the process's static objects go away.
    void stop() {
        std::deque<std::function<void()>> unrun; // destroyed without the lock
        std::deque<std::pair<const void*, std::function<void()>>> unrunEager;
        {
            std::lock_guard lock(mutex);
            for (const std::thread& t : threads)
                if (t.get_id() == std::this_thread::get_id())
                    return; // exit() called from a job: nothing to wait for
            stopping.store(true);
            dropped.fetch_add(jobs.size() + eagerJobs.size());
            unrun.swap(jobs);
            unrunEager.swap(eagerJobs);
        }
        wake.notify_all();
        // No thread is started once `stopping` is set (submitTierUp looks under the lock).
        for (std::thread& t : threads)
            if (t.joinable())
                t.join();
    }
};

Queue& queue() {
    static Queue* q = new Queue;
    return *q;
}

void Queue::stopAtExit() {
    queue().stop();
}

} // namespace

void submitTierUp(std::function<void()> job, TierUpLane lane, const void* key) {
    Queue& q = queue();
    {
        std::lock_guard lock(q.mutex);
        if (q.stopping.load())
            return; // exiting: dropped
        if (q.threads.empty())
            std::atexit(Queue::stopAtExit);
        for (unsigned want = tierUpThreads(); q.threads.size() < want;) {
            const unsigned index = static_cast<unsigned>(q.threads.size());
            q.threads.emplace_back([&q, index] { q.main(index); });
        }
        if (lane == TierUpLane::Eager) {
            q.eagerJobs.emplace_back(key, std::move(job));
            q.eager.fetch_add(1);
        } else {
            q.jobs.push_back(std::move(job));
        }
        q.submitted.fetch_add(1);
    }
    q.wake.notify_all(); // the threads not asked for now sleep on
}

void waitTierUpIdle() {
    Queue& q = queue();
    std::unique_lock lock(q.mutex);
    q.idle.wait(lock, [&q] {
        return q.stopping.load() || (q.running == 0 && q.jobs.empty() && q.eagerJobs.empty());
    });
}

bool promoteTierUp(const void* key) {
    if (!key)
        return false;
    Queue& q = queue();
    std::lock_guard lock(q.mutex);
    bool moved = false;
    for (auto it = q.eagerJobs.begin(); it != q.eagerJobs.end();) {
        if (it->first != key) {
            ++it;
            continue;
        }
        q.jobs.push_back(std::move(it->second));
        it = q.eagerJobs.erase(it);
        q.promoted.fetch_add(1);
        moved = true;
    }
    return moved;
}

bool tierUpEager() {
    if (const char* env = std::getenv("DUET_CPU_TIER_UP_EAGER"); env && *env)
        return env[0] == '1';
    return usableCores() >= 4;
}

unsigned tierUpThreads() {
    if (const char* env = std::getenv("DUET_CPU_TIER_UP_THREADS"); env && *env) {
        char* end = nullptr;
        const unsigned long n = std::strtoul(env, &end, 10);
        if (end && *end == '\0' && n >= 1)
            return static_cast<unsigned>(std::min<unsigned long>(n, kMaxThreads));
    }
    if (!tierUpEager())
        return 1;
    return static_cast<unsigned>(std::clamp(usableCores() / 4, 1, 4));
}

TierUpCounts tierUpCounts() {
    const Queue& q = queue();
    return {q.submitted.load(), q.started.load(), q.installed.load(),
            q.dropped.load(),   q.failed.load(),  q.launchPath.load(),
            q.taken.load(),     q.eager.load(),   q.promoted.load()};
}

void countTierUp(TierUpOutcome outcome) {
    Queue& q = queue();
    (outcome == TierUpOutcome::Started      ? q.started
     : outcome == TierUpOutcome::Installed  ? q.installed
     : outcome == TierUpOutcome::Dropped    ? q.dropped
     : outcome == TierUpOutcome::LaunchPath ? q.launchPath
     : outcome == TierUpOutcome::Taken      ? q.taken
                                            : q.failed)
        .fetch_add(1);
}

bool tierUpStopping() {
    return queue().stopping.load(std::memory_order_relaxed);
}

namespace {
/// The natural logarithm of optimiseToQuickRatio (an average of logarithms: one kernel 100
/// times slower to optimise does not outweigh ten at 10).
std::atomic<double> g_logOptimiseRatio{std::log(10.0)};
} // namespace

double optimiseToQuickRatio() {
    return std::exp(g_logOptimiseRatio.load(std::memory_order_relaxed));
}

void noteOptimiseToQuick(double quickMs, double optimisedMs) {
    // A quick compile under a millisecond came from the memo, an optimised one faster than
    // the quick one too: neither says what a compile costs.
    if (quickMs < 1.0 || optimisedMs < quickMs)
        return;
    const double sample = std::log(std::min(optimisedMs / quickMs, 1000.0));
    double old = g_logOptimiseRatio.load(std::memory_order_relaxed);
    while (!g_logOptimiseRatio.compare_exchange_weak(old, 0.5 * old + 0.5 * sample,
                                                     std::memory_order_relaxed)) {
    }
}

double tierUpBudgetMs() {
    const char* env = std::getenv("DUET_CPU_TIER_UP_MS");
    if (!env || !*env)
        return 20.0;
    char* end = nullptr;
    const double ms = std::strtod(env, &end);
    if (!end || *end != '\0' || std::isnan(ms))
        return 20.0; // not a number: the default
    return ms > 0 ? ms : 0.0;
}

} // namespace duet::rt::cpu
