// Work-item loops for the vectorisers: the marker regions.cpp puts on them, the pass that
// declares them parallel, and the vectoriser's verdict on each. Private to devices/cpu/jit.
#pragma once

#include <llvm/IR/PassManager.h>

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class BasicBlock;
class BranchInst;
class Instruction;
class LLVMContext;
} // namespace llvm

namespace duet::rt::wg {

/// Marks `latch` (the back-edge branch of a region's innermost loop over local x) as a
/// work-item loop. `force`: vectorise it whatever the cost model says
/// (llvm.loop.vectorize.enable), for the bodies of strided loops (kStridedBodyMarker).
void markWorkItemLoop(llvm::BranchInst* latch, bool force = false);

/// Whether `term` is the back-edge branch of a work-item loop (markWorkItemLoop).
bool isWorkItemLoopLatch(const llvm::Instruction* term);

/// Metadata kind on the branch that enters a rewritten strided loop's body (strided_loops.cpp):
/// the work-item loop of the region holding it is vectorised whatever LLVM's cost model says.
/// Work-items striding over an array is the GPU idiom the work-item loops exist for; the cost
/// model, seeing the body's gathers and scatters without the per-work-item values the region
/// no longer stores, picked one work-item at a time for the first iterations of duet-bench
/// FFT's float2 copy loops, which had been vectorised before.
inline constexpr const char* kStridedBodyMarker = "duet.strided_body";

/// Declares marked work-item loops parallel (llvm.loop.parallel_accesses with one access group
/// over the loop's memory accesses), so the loop vectoriser needs no dependence proof or
/// run-time overlap checks between work-items: within a barrier-free region, the work-items of
/// a group cannot observe each other's non-atomic accesses (that would be a data race, OpenCL
/// C 3.0 §6.15.12 / the 1.2 memory model). A loop stays as it is when it holds an atomic or
/// volatile access, a call that writes memory, or a private access that is not provably to
/// per-work-item storage (a private array all work-items of the loop share).
/// Loops it leaves alone are noted in `report` (when not null) with the reason.
class WorkItemLoopReport;
struct ParallelWorkItemLoops : llvm::PassInfoMixin<ParallelWorkItemLoops> {
    explicit ParallelWorkItemLoops(WorkItemLoopReport* report = nullptr) : report(report) {}
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
    WorkItemLoopReport* report;
};

/// After the vectorisers: in an innermost loop that calls a function (libmvec's sin, exp, ...),
/// every integer vector induction `vi = phi [init, pre], [vi + splat(step), latch]` becomes
/// `init + splat(k)` with a scalar counter `k`. The calls clobber every vector register, so a
/// vector induction lives in a stack slot across them, and where the register allocator spills
/// it decides the speed: in duet-bench's FFT butterflies (two libmvec calls per vector
/// iteration) it stored the work-item index vector at the top of each iteration and loaded it
/// straight back into the index and twiddle arithmetic, 4-11% of the kernel, depending only on
/// what else the loop kept alive (runtime/devices/cpu/README.md). Rebuilt from the counter
/// (a broadcast and an add), the index vector is dead before the first call.
/// DUET_CPU_CALL_LOOP_INDUCTIONS=0 leaves the inductions as the vectoriser made them.
struct ScalarInductionsInCallingLoops : llvm::PassInfoMixin<ScalarInductionsInCallingLoops> {
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};
bool callLoopInductionsEnabled();

/// After the vectorisers: each masked vector load or store of __global memory whose mask is
/// not a constant (a guard such as `if (x < w && y < h)` in a vectorised work-item loop) gets
/// a branch to a plain load or store when every lane is on, which it is for all but the edge
/// groups. Masked accesses of memory outside the cache are slow where measured: on Zen 5 the
/// bench's guarded 16x16 transpose of 4096² floats ran at 0.54-0.69 of its 256-bit speed with
/// 512-bit masked accesses, and 1.1-1.5x faster without the guard (runtime/devices/cpu/
/// README.md, "Vector width"). DUET_CPU_FULL_MASK_PATHS=0 leaves them as the vectoriser made
/// them.
struct FullMaskFastPaths : llvm::PassInfoMixin<FullMaskFastPaths> {
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};
bool fullMaskPathsEnabled();

/// What the loop vectoriser did with each work-item loop of one optimisation run, collected
/// from its remarks while an instance lives (the context's previous handler is restored on
/// destruction). Other diagnostics go to the previous handler.
class WorkItemLoopReport {
public:
    explicit WorkItemLoopReport(llvm::LLVMContext& ctx);
    ~WorkItemLoopReport();
    WorkItemLoopReport(const WorkItemLoopReport&) = delete;
    WorkItemLoopReport& operator=(const WorkItemLoopReport&) = delete;

    /// One line per work-item loop the vectoriser looked at: "<function>: vectorised (...)" or
    /// "<function>: not vectorised: <reasons>" (the loop then runs one work-item at a time).
    std::vector<std::string> lines() const;
    /// Records that the work-item loop at `header` stays scalar, and why.
    void noteScalar(const llvm::BasicBlock* header, const std::string& why);

    struct State;

private:
    llvm::LLVMContext& m_ctx;
    std::shared_ptr<State> m_state;
};

/// DUET_LOG set (and not "0"): the CPU compiler prints its work-item loop reports to stderr.
bool cpuJitLogEnabled();

} // namespace duet::rt::wg
