// Thread pool: workers spin briefly for the next job, then sleep on a condition variable;
// each participant starts on its own share of a job, then helps with the others'.
#include "devices/cpu/thread_pool.hpp"

#include <chrono>

namespace duet::rt::cpu {

/// How long an idle worker polls for the next job before it sleeps.
constexpr std::chrono::microseconds kSpinTime{50};
/// How long the caller polls for chunks other participants still run before it yields.
constexpr std::chrono::microseconds kWaitSpinTime{20};

ThreadPool::ThreadPool(unsigned participants) : m_shares(participants ? participants : 1) {
    for (unsigned i = 1; i < participants; ++i)
        m_threads.emplace_back([this, i] { workerMain(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_generation.fetch_add(1);
    }
    m_cv.notify_all();
    for (auto& t : m_threads)
        t.join();
}

void ThreadPool::drain(unsigned worker, uint64_t tag) {
    const size_t n = m_shares.size();
    const uint64_t tagBits = tagBitsOf(tag);
    // Own share first, then the others in turn; a share found empty stays empty.
    for (size_t k = 0; k < n; ++k) {
        Share& s = m_shares[(worker + k) % n];
        uint64_t cur = s.cursor.load(std::memory_order_acquire);
        for (;;) {
            if ((cur & ~kIndexMask) != tagBits)
                return; // another job's share: ours is over
            const uint64_t begin = cur & kIndexMask;
            // Acquire: an `end` of a later job comes after that job's cursor (runErased), so
            // the claim below then fails.
            const uint64_t end = s.end.load(std::memory_order_acquire);
            if (begin >= end)
                break;
            // `end` and the chunk size may already be a later job's: then the claim fails.
            const uint64_t chunk = m_chunk.load(std::memory_order_relaxed);
            const uint64_t stop = begin + chunk < end ? begin + chunk : end;
            if (!s.cursor.compare_exchange_weak(cur, tagBits | stop, std::memory_order_acq_rel,
                                                std::memory_order_acquire))
                continue;
            m_tramp(m_fn, size_t(begin), size_t(stop), worker);
            m_done.fetch_add(size_t(stop - begin), std::memory_order_acq_rel);
            cur = s.cursor.load(std::memory_order_acquire);
        }
    }
}

void ThreadPool::runErased(size_t count, size_t chunk, void* fn, Trampoline tramp) {
    if (count == 0)
        return;
    std::lock_guard run(m_runMutex);
    if (m_threads.empty() || count <= chunk || uint64_t(count) > kIndexMask) {
        tramp(fn, 0, count, 0);
        return;
    }
    uint64_t tag;
    {
        std::lock_guard lock(m_mutex);
        m_chunk.store(chunk ? chunk : 1, std::memory_order_relaxed);
        m_fn = fn;
        m_tramp = tramp;
        m_done.store(0, std::memory_order_relaxed);
        tag = m_generation.load(std::memory_order_relaxed) + 1;
        const uint64_t tagBits = tagBitsOf(tag);
        // Share w is [count * w / n, count * (w + 1) / n): the same split for the same count.
        // The cursor (with the new tag) before the end: a worker still in the last job's loop
        // that reads the new end then fails its claim on the cursor. The other order let it
        // claim past the last job's end on the old cursor, run indices of no job and count them
        // into this one's m_done, which then never equalled `count`.
        const size_t n = m_shares.size();
        for (size_t w = 0; w < n; ++w) {
            m_shares[w].cursor.store(tagBits | (count * w / n), std::memory_order_relaxed);
            m_shares[w].end.store(count * (w + 1) / n, std::memory_order_release);
        }
        m_generation.store(tag, std::memory_order_release);
    }
    m_cv.notify_all();
    drain(0, tag);
    // Chunks other participants claimed may still be running: the job (and `fn`) must outlive
    // them. Workers that have not claimed anything yet never will. Spin only briefly, then
    // yield: a worker that still runs a chunk is often one the scheduler took its core from
    // (another process, the GL thread), and a spinning caller would keep it off the core it
    // needs to finish.
    const auto spinUntil = std::chrono::steady_clock::now() + kWaitSpinTime;
    bool yielding = false;
    for (unsigned i = 1; m_done.load(std::memory_order_acquire) != count; ++i) {
        if (yielding) {
            std::this_thread::yield();
            continue;
        }
        __builtin_ia32_pause();
        if (i % 64 == 0 && std::chrono::steady_clock::now() >= spinUntil)
            yielding = true;
    }
}

void ThreadPool::workerMain(unsigned index) {
    uint64_t seen = 0;
    for (;;) {
        // Spin a little: kernels often come back to back. Only a little, and bounded by time
        // (a pause takes 10 to 140 cycles depending on the CPU): every worker spins at once,
        // and on a machine with other work (or the application's own thread waking up from
        // clFinish) spinning workers take the cores that thread needs. With 20000 pauses
        // (0.5 ms on the 2-core EPYC) after every job, parallel min's median round was 1.2-1.4x
        // slower whenever another process ran.
        uint64_t gen = m_generation.load(std::memory_order_acquire);
        if (gen == seen) {
            const auto until = std::chrono::steady_clock::now() + kSpinTime;
            for (unsigned i = 1; gen == seen; ++i) {
                __builtin_ia32_pause();
                gen = m_generation.load(std::memory_order_acquire);
                if (i % 64 == 0 && std::chrono::steady_clock::now() >= until)
                    break;
            }
        }
        if (gen == seen) {
            std::unique_lock lock(m_mutex);
            m_cv.wait(lock, [&] { return m_generation.load() != seen; });
            gen = m_generation.load();
        }
        seen = gen;
        {
            std::lock_guard lock(m_mutex);
            if (m_stop)
                return;
        }
        drain(index, gen);
    }
}

} // namespace duet::rt::cpu
