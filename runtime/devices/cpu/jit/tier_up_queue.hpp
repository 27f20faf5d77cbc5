// The process's background compile thread for tiered CPU code (tiered_code.hpp): optimised
// compiles queued off the launch path.
#pragma once

#include <cstdint>
#include <functional>

namespace duet::rt::cpu {

/// Queues `job` for the background compile thread: one thread per process, started at the first
/// call, SCHED_BATCH (`DUET_CPU_TIER_UP_NICE` lowers its priority further, default 0), running
/// jobs one at a time in the order queued. Never waits for a compile. A job must hold
/// no strong reference to what it compiles for while it waits (a released program must not
/// wait for it) and must stop at its next step once tierUpStopping() is true. At process exit
/// the queued jobs are dropped, unrun, and exit waits only for the one running. Thread-safe.
void submitTierUp(std::function<void()> job);

/// True once the process is exiting (the jobs still queued are dropped).
bool tierUpStopping();

/// What became of the background compiles so far in the process (tests, DUET_LOG).
struct TierUpCounts {
    uint64_t submitted = 0; ///< jobs queued
    uint64_t started = 0;   ///< compiles begun by the thread
    uint64_t installed = 0; ///< optimised code published (or found compiled meanwhile)
    uint64_t dropped = 0;   ///< the program was released (or the process exits) first
    uint64_t failed = 0;    ///< the compile failed: quick code goes on
    /// Compiled on a long launch's path instead (tiered_code.hpp), and of those, taken from
    /// the queue before the thread started them (their jobs do nothing).
    uint64_t launchPath = 0, taken = 0;
};
TierUpCounts tierUpCounts();
/// A job's outcome, for tierUpCounts().
enum class TierUpOutcome { Started, Installed, Dropped, Failed, LaunchPath, Taken };
void countTierUp(TierUpOutcome outcome);

} // namespace duet::rt::cpu
