// Tiered compilation of CPU kernels: the executor's view of code that starts quick and is optimised
// once it has run long enough.
#pragma once

#include <cstddef>

namespace duet::rt::cpu {

/// A CPU executable whose kernels may first run as quick code: compiled with a light
/// optimisation pipeline and the fast instruction selector, a few milliseconds per kernel instead
/// of tens, so that programs built to be launched once or twice (test suites, one-off setup
/// kernels) do not pay for the full pipeline. The executor (cpu_device.cpp) measures the time
/// launches spend in quick code and, once that time reaches the kernel's budget
/// (`DUET_CPU_TIER_UP_MS`), asks for the optimised code without waiting for it: the process's
/// background compile thread (jit/tier_up_queue.hpp) compiles it while launches go on with quick
/// code, and launches switch to it at their next work-group once it is ready. Work-groups are
/// independent, so they may run either code. One exception: a launch that will run on for
/// longer than the expected compile has one participant compile while the others go on (the
/// launch outlasts the compile, so it does not wait for it), as a background compile competing
/// with the launch's workers for the cores would leave that long launch, and those after it, on
/// quick code far longer. Long is judged at the launch's start (predictQuickMs: the kernel's
/// quick-code cost per work-item on its last launch times this launch's work-items) and, for
/// the launch that spends the budget, by its progress. Such a launch takes a compile that is
/// queued and not started from the queue; one that is compiling in the background is left to
/// finish there (the launch goes on with quick code): never two compiles of one kernel.
///
/// Thread-safe; the executable must outlive the calls (the launch holds it). A background
/// compile holds no reference to the executable while it compiles: releasing the program
/// drops its result.
class TieredCode {
public:
    /// The optimised work-group function of kernel `index` if it is ready, else null (its
    /// entry() is quick code). Lock-free: the executor asks before each work-group.
    virtual void* optimisedEntry(size_t index) const = 0;
    /// Milliseconds kernel `index` may still spend in quick code before it is optimised; zero
    /// or less once the budget is spent or the kernel has had kTierUpLaunches launches.
    virtual double quickBudgetLeftMs(size_t index) const = 0;
    /// Adds `ms` spent running kernel `index`'s quick code to its account; a launch of
    /// `workItems` (0: unknown) that ran on quick code throughout for at least a millisecond
    /// also sets its cost per work-item for predictQuickMs.
    virtual void addQuickTime(size_t index, double ms, size_t workItems = 0) const = 0;
    /// How long a launch of `workItems` work-items of kernel `index` will run on quick code, in
    /// milliseconds: the cost per work-item of its last launches that ran quick code throughout
    /// (the lower of the last two), times `workItems` (0: no launch measured yet).
    virtual double predictQuickMs(size_t index, size_t workItems) const = 0;
    /// Optimises and compiles kernel `index` here and now (once: later calls return the same
    /// code); null if that failed (the quick code goes on serving, the reason is in DUET_LOG).
    virtual void* optimiseKernel(size_t index) const = 0;
    /// Asks for kernel `index`'s optimised code without waiting: queued once for the background
    /// compile thread. Returns the optimised code if it is ready already, else null.
    /// `DUET_CPU_TIER_UP_SYNC=1` (read at build: a test or a measurement sees the switch at a
    /// known launch) compiles here and now instead, as optimiseKernel. So does `here` (a launch
    /// that will run longer than the compile, see expectedOptimiseMs) unless the compile has
    /// started in the background (then null: the launch goes on with quick code); a compile
    /// queued and not started is taken from the queue (TierUpCounts::taken) and its job does
    /// nothing. `predictedMs`: the launch's quick-code time as predicted at its start (0: judged
    /// by its progress), for DUET_LOG.
    virtual void* requestOptimised(size_t index, bool here = false,
                                   double predictedMs = 0) const = 0;
    /// About how long kernel `index`'s optimised compile will take, in milliseconds: its quick
    /// compile's (as measured, load included) times optimiseToQuickRatio(), at least 30.
    virtual double expectedOptimiseMs(size_t index) const = 0;
    /// Waits at most `timeoutMs` for kernel `index`'s optimised code asked for before (a
    /// completion signal, not polling); the code, or null on a timeout, a failed compile or
    /// when nothing was asked for.
    virtual void* waitOptimised(size_t index, double timeoutMs) const = 0;
    /// Kernel `index` has a launch whose buffers outgrow the cache: its optimised code, if not
    /// compiled yet, is made with its streaming-store variant (DeviceExecutable::streamingEntry).
    /// Code made before runs such launches with plain stores.
    virtual void noteStreamingLaunch(size_t index) const = 0;
    /// The executor took kernel `index`'s optimised code for a launch (`where`: at its start or
    /// between two work-groups): the first time after a request, a DUET_LOG line says so.
    virtual void noteSwitch(size_t index, const char* where) const = 0;

protected:
    ~TieredCode() = default;
};

/// Launches after which a kernel is optimised however short they were: a kernel an
/// application launches again and again (a simulation's small pack and boundary kernels, 0.1 ms
/// each) would otherwise run quick code for hundreds of launches before its time reached the
/// budget, at a fraction of the optimised code's speed; programs built to be launched once or
/// twice stay below it.
inline constexpr unsigned kTierUpLaunches = 16;

/// How many times a kernel's quick compile its optimised compile takes, as this process has
/// measured it so far: 10 before any (the pipelines' ratio on small kernels, bench/README.md
/// "Tiered compilation"), then each optimised compile moves it halfway (geometrically) to its
/// own ratio. Measured on SHOC's GEMM: 40 (quick 15 ms, optimised 620 ms), so a fixed 10 judged
/// an 85 ms launch longer than half the compile and made it wait 620 ms for it.
double optimiseToQuickRatio();
/// Records one kernel's compiles: `quickMs` and `optimisedMs` in milliseconds (ignored when the
/// quick one is under a millisecond, a memo hit, or the optimised one is faster).
void noteOptimiseToQuick(double quickMs, double optimisedMs);

/// The quick-code budget per kernel in milliseconds: `DUET_CPU_TIER_UP_MS` (default 20; 0
/// turns tiering off: every kernel is optimised at its first clCreateKernel, as before).
double tierUpBudgetMs();

} // namespace duet::rt::cpu
