// Thread pool for running work-groups: the calling thread works too; one job at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
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
    /// Participant w starts on the w-th contiguous share of [0, count) and takes chunks from
    /// the other shares once its own is done, so that launch after launch over the same range
    /// the same indices (work-groups, hence data) run on the same thread, near its caches.
    /// A job ends when its chunks are done, whether or not every worker got to run: on a
    /// loaded machine a worker that is not scheduled in time does not hold up the caller.
    template <class F> void run(size_t count, size_t chunk, F&& fn) {
        runErased(count, chunk, &fn, [](void* f, size_t b, size_t e, unsigned w) {
            (*static_cast<std::remove_reference_t<F>*>(f))(b, e, w);
        });
    }

private:
    using Trampoline = void (*)(void*, size_t, size_t, unsigned);
    void runErased(size_t count, size_t chunk, void* fn, Trampoline tramp);
    void workerMain(unsigned index);
    /// Runs chunks of job `tag` until none is left to claim.
    void drain(unsigned worker, uint64_t tag);

    /// A share's cursor: the job's tag in the top kTagBits, the next index below. A worker
    /// claims a chunk only while the tag is its job's, so one that wakes late, after its job
    /// ended, claims nothing (and reads no job state before a claim succeeds).
    static constexpr unsigned kTagBits = 20;
    static constexpr unsigned kIndexBits = 64 - kTagBits;
    static constexpr uint64_t kIndexMask = (uint64_t(1) << kIndexBits) - 1;
    /// Job `tag`'s bits in a cursor.
    static constexpr uint64_t tagBitsOf(uint64_t tag) {
        return (tag & ((uint64_t(1) << kTagBits) - 1)) << kIndexBits;
    }

    /// One participant's share of the current job: [cursor index, end).
    struct alignas(64) Share {
        std::atomic<uint64_t> cursor{0};
        std::atomic<uint64_t> end{0};
    };

    std::vector<std::thread> m_threads;
    std::vector<Share> m_shares;
    std::mutex m_runMutex; ///< one job at a time
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_stop = false;
    // The current job. Written by the caller before it publishes m_generation and read by
    // workers only after they claimed a chunk of it (the job cannot end before that chunk).
    std::atomic<uint64_t> m_generation{0};
    alignas(64) std::atomic<size_t> m_done{0}; ///< indices of the job run so far
    std::atomic<size_t> m_chunk{1}; ///< read before a claim, which fails if the job is over
    void* m_fn = nullptr;
    Trampoline m_tramp = nullptr;
};

} // namespace duet::rt::cpu
