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
class Loop;
class LLVMContext;
} // namespace llvm

namespace duet::rt::wg {

/// Marks `latch` (the back-edge branch of a region's innermost loop over local x) as a
/// work-item loop. `force`: vectorise it whatever the cost model says
/// (llvm.loop.vectorize.enable), for the bodies of strided loops (kStridedBodyMarker).
/// `width` (not 0): vectorise it `width` work-items wide (the lane loops of
/// LinearisedDivergentLoops, whose trip count is that width). Never interleaved: one vector an
/// iteration, so groups as narrow as one vector run the vector body (DUET_CPU_INTERLEAVE_ONE=0
/// leaves the count to the vectoriser where no width is given).
void markWorkItemLoop(llvm::BranchInst* latch, bool force = false, unsigned width = 0);

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

/// Before the loop vectoriser (and before ParallelWorkItemLoops): a work-item loop that holds
/// one innermost loop whose trip count differs between work-items (SpMV's row loop, a
/// Mandelbrot escape loop, a BFS vertex's edges) runs per chunk of V work-items, V the lanes of
/// the function's prefer-vector-width: a lane loop runs the code before the inner loop for
/// each work-item of the chunk; `do { for each lane still looping: one iteration } while (any
/// lane still loops)`; a lane loop runs the code after it. Values that cross between the three
/// live in per-lane arrays (`[V x T]`, marked kPerLaneMarker), or are computed again where they
/// are a pure function of the local id. Each lane loop is a work-item loop of trip count V,
/// vectorised V wide: a work-item that loops 10,000 times keeps only its own chunk's lanes
/// waiting, not the group. Work-item loops with more or nested inner loops, inner loops with
/// several exits, atomics or calls that write memory stay as they are, and `report` (when not
/// null) says why. DUET_CPU_DIVERGENT_LOOPS=0 turns it off (part of the JIT memo's key).
struct LinearisedDivergentLoops : llvm::PassInfoMixin<LinearisedDivergentLoops> {
    explicit LinearisedDivergentLoops(WorkItemLoopReport* report = nullptr) : report(report) {}
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
    WorkItemLoopReport* report;
};
bool divergentLoopsEnabled();
/// DUET_CPU_DIVERGENT_LOOPS: `0` off, `all` every loop it can handle, otherwise (the default)
/// only loops whose arithmetic outweighs the gathers their memory accesses become.
enum class DivergentLoops { Off, WhereCheaper, All };
DivergentLoops divergentLoopsMode();

/// After the vectorisers: the lane loops' masked loads and stores of a whole per-lane array
/// (kPerLaneMarker) become plain ones (a store of `select(mask, new, old)`), and SROA keeps the
/// arrays in registers. A masked store forwards nothing to the next round's load (on Zen 5 the
/// load waits for the store to retire), and a masked access keeps the array in memory.
struct PerLaneArraysInRegisters : llvm::PassInfoMixin<PerLaneArraysInRegisters> {
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};

/// Metadata kind on the per-lane arrays of LinearisedDivergentLoops: each lane loop iteration
/// touches only its own element, as with per-work-item storage.
inline constexpr const char* kPerLaneMarker = "duet.per_lane";

/// Why the memory accesses of `loop` (all its blocks, inner loops included) cannot be declared
/// parallel between work-items; empty when they can.
std::string whyNotParallel(const llvm::Loop& loop);

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

/// Before the loop vectoriser: loops whose counter steps by a value known only at run time
/// (`for (i = first; i < end; i += step)`, step 1 for contiguous chunks and the item count
/// otherwise; BLAS-style `incx`), whose trip count LLVM therefore cannot compute (the counter
/// may wrap), so the vectoriser leaves them scalar, each get a copy with the step the constant
/// 1, run when `step == 1`, the loop as it was otherwise. Innermost loops of one exit, taken on a
/// comparison of the counter with a loop-invariant bound, short, without convergent calls; at
/// most four a function. Strided work-item loops (`t += get_local_size(0)`) are split into
/// work-item loops before this runs (makeStridedLoopsUniform). DUET_CPU_UNIT_STEP_LOOPS=0
/// leaves the loops as they are.
struct UnitStepLoops : llvm::PassInfoMixin<UnitStepLoops> {
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};
bool unitStepLoopsEnabled();

/// After the vectorisers: gathers and scatters through `gep T, p, <lanes x idx>` (plus constant
/// offsets: the fields of a float4 or a struct) whose lanes turn out, when the kernel runs, to
/// point at consecutive elements become one vector load or store of the elements of all the
/// group's accesses, with shuffles, behind a test of the lanes' addresses; others stay gathers.
/// The loop vectoriser makes gathers of accesses whose consecutiveness it cannot prove, such
/// as `q[y * w + x]` with 32-bit index arithmetic (which may wrap) or a clamped neighbour
/// `q[y * w + max(x - 1, 0)]`. DUET_CPU_CONSECUTIVE_GATHERS=0 leaves them gathers.
struct ConsecutiveGathers : llvm::PassInfoMixin<ConsecutiveGathers> {
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};
bool consecutiveGathersEnabled();

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

/// __global/__constant and __local memory never overlap (local memory is a block of its own
/// per work-group), but LLVM cannot know it for the host, and its loop-access analysis will
/// not compare pointers of two address spaces at run time: a work-item loop that reads a
/// buffer and writes a __local tile stayed scalar. Accesses through addrspace(1)/(2) and
/// addrspace(3) pointers get alias scopes that say so, just before the vectorisers run (after
/// inlining, so the builtins' accesses are covered too). Generic pointers stay unmarked.
struct AddressSpaceScopes : llvm::PassInfoMixin<AddressSpaceScopes> {
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};

/// Before the loop vectoriser: the inner loops of a work-item loop that runs one work-item at
/// a time (its inner loop's trip count differs between work-items and it was not linearised)
/// that read or write OpenCL vectors lane by lane get llvm.loop.vectorize.enable = false when
/// their arithmetic is light (fewer than 4 operations a memory access). The Scalarizer splits
/// `uint4 v = p[i]` into four loads 4 bytes apart, each advancing 16 bytes an iteration; the
/// loop vectoriser widens such a loop by loading whole lines and regrouping the lanes with
/// shuffles (on Zen 5, 16 vpermt2d and spills for 512 bytes of the parallel-min seed's
/// `m = min(m, src[i])`), while the SLP vectoriser puts the four lanes back into one `uint4`
/// operation. Measured there: 1.5 ms widened, 1.1 ms left to SLP for 64 MiB, the memory's
/// speed (bench/README.md, session 29). Loops with more arithmetic an access keep the loop
/// vectoriser, whose wider vectors then pay for the shuffles. `report` (when not null) notes
/// each loop. DUET_CPU_LANEWISE_LOOPS=0 leaves them to the loop vectoriser (the JIT memo's
/// key says which).
struct LanewiseInnerLoops : llvm::PassInfoMixin<LanewiseInnerLoops> {
    explicit LanewiseInnerLoops(WorkItemLoopReport* report = nullptr) : report(report) {}
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
    WorkItemLoopReport* report;
};
bool lanewiseInnerLoopsEnabled();

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
    /// Records a line of its own about the work-item loop at `header` (before the vectoriser's:
    /// what LinearisedDivergentLoops did with it, or why not).
    void note(const llvm::BasicBlock* header, const std::string& what);

    struct State;

private:
    llvm::LLVMContext& m_ctx;
    std::shared_ptr<State> m_state;
};

/// DUET_LOG set (and not "0"): the CPU compiler prints its work-item loop reports to stderr.
bool cpuJitLogEnabled();

/// Under DUET_LOG, `lines` (WorkItemLoopReport::lines() of one kernel's compile or of a whole
/// program's) on stderr, each under the kernel whose work-group function (or variant of it)
/// the line names.
void logWorkItemLoops(const std::vector<std::string>& lines);

} // namespace duet::rt::wg
