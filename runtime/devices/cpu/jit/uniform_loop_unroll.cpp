// Straight-line uniform loops unrolled before the implicit loop barriers (regions.hpp,
// unrollUniformLoops).
#include "devices/cpu/jit/regions.hpp"

#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/OptimizationRemarkEmitter.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/LoopUtils.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>
#include <llvm/Transforms/Utils/UnrollLoop.h>

namespace duet::rt::wg {

using namespace llvm;

namespace {

/// Bodies longer than this stay as they are: `count` copies of a long body would cost compile
/// time and registers for little (a long body already amortises its region loop).
constexpr size_t kMaxUnrolledBody = 160;

/// A loop whose body is its header alone (header == latch == the only exiting block), short
/// enough, with a trip count the remainder code can compute.
bool unrollable(Loop& loop, ScalarEvolution& se) {
    if (loop.getNumBlocks() != 1 || !loop.getLoopLatch() || !loop.getExitingBlock())
        return false;
    BasicBlock* body = loop.getHeader();
    if (body->size() > kMaxUnrolledBody)
        return false;
    for (Instruction& i : *body)
        if (auto* call = dyn_cast<CallBase>(&i); call && call->isConvergent())
            return false; // the remainder loop would run it under other conditions
    return !isa<SCEVCouldNotCompute>(se.getExitCount(&loop, loop.getExitingBlock()));
}

} // namespace

size_t unrollUniformLoops(Function& w, const Uniformity& u,
                          const std::vector<BasicBlock*>& barriers, unsigned count) {
    if (count < 2)
        return 0;
    DominatorTree dt(w);
    LoopInfo li(dt);
    SmallPtrSet<BasicBlock*, 16> barrierSet(barriers.begin(), barriers.end());
    SmallVector<Loop*, 8> candidates;
    for (Loop* loop : li.getLoopsInPreorder())
        if (getsLoopBarriers(*loop, u, barrierSet))
            candidates.push_back(loop);
    if (candidates.empty())
        return 0;
    TargetLibraryInfoImpl tlii(Triple(w.getParent()->getTargetTriple()));
    TargetLibraryInfo tli(tlii, &w);
    AssumptionCache ac(w);
    ScalarEvolution se(w, tli, ac, dt, li);
    TargetTransformInfo tti(w.getParent()->getDataLayout());
    OptimizationRemarkEmitter ore(&w);
    size_t unrolled = 0;
    for (Loop* loop : candidates) {
        if (!unrollable(*loop, se))
            continue;
        simplifyLoop(loop, &dt, &li, &se, &ac, nullptr, false);
        formLCSSA(*loop, dt, &li, &se);
        if (!loop->isLoopSimplifyForm() || !loop->isLCSSAForm(dt))
            continue;
        UnrollLoopOptions options;
        options.Count = count;
        options.Force = true;
        options.Runtime = true;
        options.AllowExpensiveTripCount = true;
        options.UnrollRemainder = false;
        options.ForgetAllSCEV = false;
        if (UnrollLoop(loop, options, &li, &se, &dt, &ac, &tti, &ore, true) !=
            LoopUnrollResult::Unmodified)
            ++unrolled;
    }
    return unrolled;
}

} // namespace duet::rt::wg
