// Loop unrolling for the GPU: full unrolling of short constant-count loops (LLVM's default
// budget is a CPU's) and runtime unrolling of short loops that wait on global memory.
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

/// Marks a loop `llvm.loop.unroll.full` when it runs a constant count of at most
/// kMaxTripCount iterations and the unrolled copies come to at most kMaxUnrolledSize
/// instructions, or `llvm.loop.unroll.count` 4 when it is a short loop waiting on memory
/// (waitsOnMemory). LLVM's own threshold (300 at O3) keeps most loops with a few dozen
/// instructions rolled, and nested loops (an outer loop of stages around an inner loop of
/// work-items) always: on a GPU each iteration then pays for its counter, its branch and the
/// arithmetic on values that unrolling makes constants (shift counts, strides, divisors that
/// become powers of two). Loops that already carry unroll metadata (the program's own
/// `#pragma unroll`) are left as they are.
class MarkShortLoops : public PassInfoMixin<MarkShortLoops> {
public:
    static constexpr unsigned kMaxTripCount = 32;
    static constexpr unsigned kMaxUnrolledSize = 4096;

    /// Runtime unrolling: loops with a count known only at run time, at most this many
    /// instructions, that load from memory other than `__local` and private.
    static constexpr unsigned kRuntimeCount = 4;
    static constexpr unsigned kMaxRuntimeBodySize = 64;

    PreservedAnalyses run(Loop& loop, LoopAnalysisManager&, LoopStandardAnalysisResults& ar,
                          LPMUpdater&) {
        if (hasUnrollTransformation(&loop) != TM_Unspecified)
            return PreservedAnalyses::all();
        unsigned size = 0;
        for (BasicBlock* block : loop.blocks())
            size += unsigned(block->sizeWithoutDebug());
        const unsigned trips = ar.SE.getSmallConstantTripCount(&loop);
        if (trips >= 2 && trips <= kMaxTripCount && uint64_t(size) * trips <= kMaxUnrolledSize)
            addStringMetadataToLoop(&loop, "llvm.loop.unroll.full");
        else if (trips == 0 && size <= kMaxRuntimeBodySize && waitsOnMemory(loop, ar.SE))
            addStringMetadataToLoop(&loop, "llvm.loop.unroll.count", kRuntimeCount);
        return PreservedAnalyses::all(); // metadata only
    }

private:
    /// An innermost loop with one exit, whose count the loop's entry can compute, that loads
    /// from global, constant or generic memory and calls nothing convergent (a barrier in the
    /// loop would forbid the remainder). Each iteration of such a loop waits for its load:
    /// on a GPU, with `for (k = lid; k < count; k += lsz)` folds the commonest case, four
    /// iterations in one put four loads in flight where one was. LLVM's own partial unrolling
    /// for NVPTX stops at a quarter of its threshold, which the SLP vectoriser's shuffles of
    /// a vector accumulator already exceed.
    static bool waitsOnMemory(const Loop& loop, ScalarEvolution& se) {
        if (!loop.isInnermost() || !loop.getExitingBlock() || !loop.getExitBlock() ||
            isa<SCEVCouldNotCompute>(se.getBackedgeTakenCount(&loop)))
            return false;
        bool loads = false;
        for (BasicBlock* block : loop.blocks())
            for (Instruction& inst : *block) {
                if (auto* call = dyn_cast<CallBase>(&inst); call && call->isConvergent())
                    return false;
                if (auto* load = dyn_cast<LoadInst>(&inst)) {
                    const unsigned as = load->getPointerAddressSpace();
                    loads = loads || (as != kSharedAddressSpace && as != kLocalAddressSpace);
                }
            }
        return loads;
    }

    static constexpr unsigned kSharedAddressSpace = 3; // OpenCL __local
    static constexpr unsigned kLocalAddressSpace = 5;  // private memory
};

} // namespace

void registerLoopUnrolling(PassBuilder& pb) {
    pb.registerLateLoopOptimizationsEPCallback([](LoopPassManager& lpm, OptimizationLevel level) {
        if (level.getSpeedupLevel() >= 2)
            lpm.addPass(MarkShortLoops());
    });
}

} // namespace duet::rt::nvptx
