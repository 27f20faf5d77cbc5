// Thread pool: workers spin briefly for the next job, then sleep on a condition variable.
#include "devices/cpu/thread_pool.hpp"

namespace duet::rt::cpu {

ThreadPool::ThreadPool(unsigned participants) {
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

void ThreadPool::drain(unsigned worker) {
    for (;;) {
        size_t begin = m_next.fetch_add(m_chunk, std::memory_order_relaxed);
        if (begin >= m_count)
            break;
        size_t end = begin + m_chunk < m_count ? begin + m_chunk : m_count;
        m_tramp(m_fn, begin, end, worker);
    }
}

void ThreadPool::runErased(size_t count, size_t chunk, void* fn, Trampoline tramp) {
    if (count == 0)
        return;
    std::lock_guard run(m_runMutex);
    if (m_threads.empty() || count <= chunk) {
        tramp(fn, 0, count, 0);
        return;
    }
    {
        std::lock_guard lock(m_mutex);
        m_count = count;
        m_chunk = chunk ? chunk : 1;
        m_fn = fn;
        m_tramp = tramp;
        m_next.store(0, std::memory_order_relaxed);
        m_busy.store(unsigned(m_threads.size()), std::memory_order_relaxed);
        m_generation.fetch_add(1, std::memory_order_release);
    }
    m_cv.notify_all();
    drain(0);
    // Wait for the helpers to leave the job before it goes out of scope.
    while (m_busy.load(std::memory_order_acquire) != 0)
        __builtin_ia32_pause();
}

void ThreadPool::workerMain(unsigned index) {
    uint64_t seen = 0;
    for (;;) {
        // Spin a little: kernels often come back to back.
        uint64_t gen = m_generation.load(std::memory_order_acquire);
        for (int i = 0; gen == seen && i < 20000; ++i) {
            __builtin_ia32_pause();
            gen = m_generation.load(std::memory_order_acquire);
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
        drain(index);
        m_busy.fetch_sub(1, std::memory_order_acq_rel);
    }
}

} // namespace duet::rt::cpu
