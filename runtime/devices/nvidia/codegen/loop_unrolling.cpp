// Full unrolling of short constant-count loops for the GPU: LLVM's default budget is a CPU's.
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

/// Marks a loop `llvm.loop.unroll.full` when it runs a constant count of at most
/// kMaxTripCount iterations and the unrolled copies come to at most kMaxUnrolledSize
/// instructions. LLVM's own threshold (300 at O3) keeps most loops with a few dozen
/// instructions rolled, and nested loops (an outer loop of stages around an inner loop of
/// work-items) always: on a GPU each iteration then pays for its counter, its branch and the
/// arithmetic on values that unrolling makes constants (shift counts, strides, divisors that
/// become powers of two). Loops that already carry unroll metadata (the program's own
/// `#pragma unroll`) are left as they are.
class MarkShortLoops : public PassInfoMixin<MarkShortLoops> {
public:
    static constexpr unsigned kMaxTripCount = 32;
    static constexpr unsigned kMaxUnrolledSize = 4096;

    PreservedAnalyses run(Loop& loop, LoopAnalysisManager&, LoopStandardAnalysisResults& ar,
                          LPMUpdater&) {
        if (hasUnrollTransformation(&loop) != TM_Unspecified)
            return PreservedAnalyses::all();
        const unsigned trips = ar.SE.getSmallConstantTripCount(&loop);
        if (trips < 2 || trips > kMaxTripCount)
            return PreservedAnalyses::all();
        unsigned size = 0;
        for (BasicBlock* block : loop.blocks())
            size += unsigned(block->sizeWithoutDebug());
        if (uint64_t(size) * trips > kMaxUnrolledSize)
            return PreservedAnalyses::all();
        addStringMetadataToLoop(&loop, "llvm.loop.unroll.full");
        return PreservedAnalyses::all(); // metadata only
    }
};

} // namespace

void registerLoopUnrolling(PassBuilder& pb) {
    pb.registerLateLoopOptimizationsEPCallback([](LoopPassManager& lpm, OptimizationLevel level) {
        if (level.getSpeedupLevel() >= 2)
            lpm.addPass(MarkShortLoops());
    });
}

} // namespace duet::rt::nvptx
