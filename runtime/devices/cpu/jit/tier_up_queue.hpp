// The process's background compile threads for tiered CPU code (tiered_code.hpp): optimised
// compiles queued off the launch path.
#pragma once

#include <cstdint>
#include <functional>

namespace duet::rt::cpu {

/// Which of the thread's two queues a compile waits in: the launch lane's jobs (a kernel that
/// has spent its quick-code budget: launches are waiting for its code) all run before the eager
/// lane's (a kernel compiled ahead of need when it was created, tierUpEager()).
enum class TierUpLane : uint8_t { Launch, Eager };

/// Queues `job` for the background compile threads: tierUpThreads() per process, started as
/// calls ask for them, SCHED_BATCH (`DUET_CPU_TIER_UP_NICE` lowers their priority further,
/// default 0), each running jobs one at a time, the launch lane's first, each lane in the order
/// queued (with several threads, jobs start in that order and run side by side). Never waits for
/// a compile. A job must hold no strong reference to what it compiles for while it waits (a
/// released program must not wait for it) and must stop at its next step once
/// tierUpStopping() is true. `key` names an eager job for promoteTierUp (null: none). At
/// process exit the queued jobs are dropped, unrun, and exit waits only for those running.
/// Thread-safe.
void submitTierUp(std::function<void()> job, TierUpLane lane = TierUpLane::Launch,
                  const void* key = nullptr);

/// Waits until no job is queued or running (tests: a compile an earlier case left running must
/// not store its code into the next case's cache folder). Returns at once while exiting; never
/// returns while a job waits forever.
void waitTierUpIdle();

/// Moves the eager jobs queued with `key` to the end of the launch lane (a launch now waits for
/// what was compiled ahead of need); false when none is queued (started, done or never queued).
bool promoteTierUp(const void* key);

/// Whether kernels are compiled ahead of need: each kernel's optimised code queued in the eager
/// lane as soon as its quick code exists, so the optimised code comes about one compile after
/// clCreateKernel instead of after the quick-code budget plus a compile. `DUET_CPU_TIER_UP_EAGER`
/// (1 or 0, read at each build); by default on where the process may run on 4 cores or more
/// (the thread then takes at most a quarter of them from launches), off on fewer, where a
/// compile thread busy with kernels a test suite launches once would take half the machine.
bool tierUpEager();

/// How many compile threads take jobs: `DUET_CPU_TIER_UP_THREADS` (1-16, read at each call),
/// else with compiles ahead of need (tierUpEager()) a quarter of the usable cores, 1 to 4 (16
/// cores: 4, so a program's kernels are optimised side by side), else 1.
unsigned tierUpThreads();

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
    uint64_t eager = 0;    ///< of `submitted`, queued in the eager lane
    uint64_t promoted = 0; ///< eager jobs moved to the launch lane
};
TierUpCounts tierUpCounts();
/// A job's outcome, for tierUpCounts().
enum class TierUpOutcome { Started, Installed, Dropped, Failed, LaunchPath, Taken };
void countTierUp(TierUpOutcome outcome);

} // namespace duet::rt::cpu
