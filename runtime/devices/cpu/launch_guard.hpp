// The CPU executor's side of checked and cancellable kernels: argument bounds for the checks,
// the watchdog of DUET_KERNEL_TIMEOUT (core/kernel_checks.hpp words a failed check).
#pragma once

#include "core/kernel.hpp"
#include "devices/cpu/jit/guards.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace duet::rt::cpu {

/// [low, high) of argument `index` of `launch` for the bounds checks, into `bounds[2 * index]`
/// and `bounds[2 * index + 1]`: a buffer's or sub-buffer's bytes, the SVM allocation an SVM
/// pointer points into, an image's descriptor at `imageDesc`. __local arguments are the
/// executor's (each participant's block). NULL gives an empty range; a pointer into no known
/// allocation gives everything (unchecked), with a line on stderr once per kernel argument.
void argumentBounds(const KernelLaunch& launch, size_t index, const void* imageDesc,
                    uint64_t* bounds);

/// One thread that stops launches which run past their deadline (DUET_KERNEL_TIMEOUT): it sets
/// their LaunchGuard's `timedOut` and `cancel`. Started on first use. One launch armed at a
/// time (the CPU backend runs one launch at a time). Thread-safe.
class Watchdog {
public:
    ~Watchdog();
    void arm(LaunchGuard& guard, std::chrono::steady_clock::time_point deadline);
    /// After this returns the watchdog no longer touches the guard armed before.
    void disarm();

private:
    void main();
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::thread m_thread;
    LaunchGuard* m_armed = nullptr;
    std::chrono::steady_clock::time_point m_deadline;
    bool m_stop = false;
};

} // namespace duet::rt::cpu
