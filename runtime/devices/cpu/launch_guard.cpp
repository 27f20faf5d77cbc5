// Argument bounds and the timeout watchdog of guarded CPU launches.
#include "devices/cpu/launch_guard.hpp"

#include "core/image.hpp"
#include "core/svm.hpp"

#include <cstdio>
#include <set>

namespace duet::rt::cpu {

namespace {

/// Prints `line` on stderr the first time it is seen in this process.
void warnOnce(const std::string& line) {
    static std::mutex mutex;
    static std::set<std::string> said;
    std::lock_guard lock(mutex);
    if (said.insert(line).second)
        std::fprintf(stderr, "duet: cpu: %s\n", line.c_str());
}

} // namespace

void argumentBounds(const KernelLaunch& launch, size_t index, const void* imageDesc,
                    uint64_t* bounds) {
    const KernelDesc& desc = launch.kernel->desc();
    const ArgValue& a = launch.args[index];
    uint64_t low = 0, high = 0;
    switch (desc.args[index].kind) {
    case KernelArgKind::GlobalBuffer:
    case KernelArgKind::ConstantBuffer:
        if (a.mem) {
            low = reinterpret_cast<uintptr_t>(a.mem->data());
            high = low + a.mem->size();
        } else if (a.svm) {
            if (std::optional<SvmAllocation> s = svmFind(a.svm)) {
                low = reinterpret_cast<uintptr_t>(s->base);
                high = low + s->size;
            } else {
                high = UINT64_MAX;
                warnOnce("kernel " + desc.name + ": argument " + std::to_string(index) +
                         " is a pointer into no SVM allocation: its accesses are not checked");
            }
        }
        break;
    case KernelArgKind::Image:
        low = reinterpret_cast<uintptr_t>(imageDesc);
        high = low + sizeof(KernelImageDesc);
        break;
    default:
        break;
    }
    bounds[2 * index] = low;
    bounds[2 * index + 1] = high;
}

Watchdog::~Watchdog() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

void Watchdog::arm(LaunchGuard& guard, std::chrono::steady_clock::time_point deadline) {
    std::lock_guard lock(m_mutex);
    if (!m_thread.joinable())
        m_thread = std::thread([this] { main(); });
    m_armed = &guard;
    m_deadline = deadline;
    m_cv.notify_all();
}

void Watchdog::disarm() {
    std::lock_guard lock(m_mutex);
    m_armed = nullptr;
}

void Watchdog::main() {
    std::unique_lock lock(m_mutex);
    while (!m_stop) {
        if (!m_armed) {
            m_cv.wait(lock);
            continue;
        }
        if (m_cv.wait_until(lock, m_deadline) == std::cv_status::timeout && m_armed &&
            std::chrono::steady_clock::now() >= m_deadline) {
            m_armed->timedOut.store(true);
            m_armed->cancel.store(1, std::memory_order_release);
            m_armed = nullptr;
        }
    }
}

} // namespace duet::rt::cpu
