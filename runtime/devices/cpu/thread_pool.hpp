// Thread pool for running work-groups: the calling thread works too; one job at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace duet::rt::cpu {

class ThreadPool {
public:
    /// `participants` counts the calling thread: participants - 1 threads are started.
    explicit ThreadPool(unsigned participants);
    ~ThreadPool();
    unsigned participants() const { return unsigned(m_threads.size()) + 1; }

    /// Calls fn(begin, end, worker) over chunks of [0, count) on every participant, the caller
    /// being worker 0; returns when all chunks are done. Calls are serialised.
    template <class F> void run(size_t count, size_t chunk, F&& fn) {
        runErased(count, chunk, &fn, [](void* f, size_t b, size_t e, unsigned w) {
            (*static_cast<std::remove_reference_t<F>*>(f))(b, e, w);
        });
    }

private:
    using Trampoline = void (*)(void*, size_t, size_t, unsigned);
    void runErased(size_t count, size_t chunk, void* fn, Trampoline tramp);
    void workerMain(unsigned index);
    void drain(unsigned worker);

    std::vector<std::thread> m_threads;
    std::mutex m_runMutex; ///< one job at a time
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_stop = false;
    // The current job.
    std::atomic<uint64_t> m_generation{0};
    std::atomic<size_t> m_next{0};
    std::atomic<unsigned> m_busy{0};
    size_t m_count = 0, m_chunk = 1;
    void* m_fn = nullptr;
    Trampoline m_tramp = nullptr;
};

} // namespace duet::rt::cpu
