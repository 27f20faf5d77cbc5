// Loops whose step is only known at run time, versioned for a step of 1 (work_item_loops.hpp,
// UnitStepLoops).
#include "devices/cpu/jit/work_item_loops.hpp"

#include "core/environment.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>
#include <llvm/Transforms/Utils/LoopUtils.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <cstdio>
#include <cstdlib>

namespace duet::rt::wg {

using namespace llvm;

namespace {

/// Loops longer than this are left alone (the copy would cost more compile time than it saves).
constexpr size_t kMaxBody = 120;
/// At most this many loops of one kernel are versioned.
constexpr size_t kMaxLoops = 4;

/// The loop-invariant, non-constant step of `loop`'s counter when the loop is a candidate:
/// innermost, in simplified form, short, no convergent calls, one exit, taken on a comparison
/// of the counter (or its next value) with a loop-invariant bound, and a trip count
/// ScalarEvolution cannot compute as written.
Value* symbolicStep(Loop& loop, ScalarEvolution& se) {
    BasicBlock* header = loop.getHeader();
    BasicBlock* latch = loop.getLoopLatch();
    BasicBlock* exiting = loop.getExitingBlock();
    if (!loop.isInnermost() || !latch || !exiting || !loop.getUniqueExitBlock())
        return nullptr;
    size_t size = 0;
    for (BasicBlock* bb : loop.blocks())
        for (Instruction& i : *bb) {
            if (auto* call = dyn_cast<CallBase>(&i); call && call->isConvergent())
                return nullptr;
            ++size;
        }
    if (size > kMaxBody || !isa<SCEVCouldNotCompute>(se.getBackedgeTakenCount(&loop)))
        return nullptr;
    auto* br = dyn_cast<BranchInst>(exiting->getTerminator());
    auto* cmp = br && br->isConditional() ? dyn_cast<ICmpInst>(br->getCondition()) : nullptr;
    if (!cmp)
        return nullptr;
    for (PHINode& phi : header->phis()) {
        if (!phi.getType()->isIntegerTy() || phi.getBasicBlockIndex(latch) < 0)
            continue;
        auto* next = dyn_cast<BinaryOperator>(phi.getIncomingValueForBlock(latch));
        if (!next || next->getOpcode() != Instruction::Add)
            continue;
        Value* step = next->getOperand(0) == &phi   ? next->getOperand(1)
                      : next->getOperand(1) == &phi ? next->getOperand(0)
                                                    : nullptr;
        if (!step || isa<Constant>(step) || !loop.isLoopInvariant(step))
            continue;
        for (unsigned k = 0; k < 2; ++k) {
            Value* counter = cmp->getOperand(k);
            if ((counter == &phi || counter == next) &&
                loop.isLoopInvariant(cmp->getOperand(1 - k)))
                return step;
        }
    }
    return nullptr;
}

/// Versions `loop` (simplified, LCSSA): a copy whose step is the constant 1 runs when `step`
/// is 1, the loop as it was otherwise. Both leave to the same exit block.
void version(Loop& loop, Value* step, DominatorTree& dt, LoopInfo& li) {
    BasicBlock* header = loop.getHeader();
    BasicBlock* exit = loop.getExitBlock();
    // An empty block of its own before the loop, so the copy's preheader copies nothing else.
    BasicBlock* check = loop.getLoopPreheader();
    BasicBlock* ph = SplitEdge(check, header, &dt, &li);
    ValueToValueMapTy vmap;
    vmap[step] = ConstantInt::get(step->getType(), 1);
    SmallVector<BasicBlock*, 8> blocks;
    Loop* copy = cloneLoopWithPreheader(ph, check, &loop, vmap, ".unit", &li, &dt, blocks);
    remapInstructionsInBlocks(blocks, vmap);
    BasicBlock* copyPh = copy->getLoopPreheader();
    // The exit's phis (LCSSA: every use after the loop goes through one) take the copy's values.
    for (PHINode& phi : exit->phis())
        for (unsigned k = 0, n = phi.getNumIncomingValues(); k < n; ++k)
            if (loop.contains(phi.getIncomingBlock(k))) {
                Value* v = phi.getIncomingValue(k);
                auto it = vmap.find(v);
                phi.addIncoming(it != vmap.end() ? static_cast<Value*>(it->second) : v,
                                cast<BasicBlock>(vmap[phi.getIncomingBlock(k)]));
            }
    Instruction* old = check->getTerminator();
    IRBuilder<> b(old);
    Value* unit = b.CreateICmpEQ(step, ConstantInt::get(step->getType(), 1), "step.is.1");
    b.CreateCondBr(unit, copyPh, ph);
    old->eraseFromParent();
}

/// The versioning of `w`'s candidate loops; returns how many were versioned. `changed` is set
/// when the IR changed at all (a candidate put in simplified and LCSSA form counts).
size_t versionUnitStepLoops(Function& w, bool& changed) {
    TargetLibraryInfoImpl tlii(Triple(w.getParent()->getTargetTriple()));
    SmallPtrSet<BasicBlock*, 8> done; ///< headers of loops looked at (and of the copies)
    size_t versioned = 0;
    while (versioned < kMaxLoops) {
        // Fresh analyses for each loop: versioning changes the dominators of the exits.
        DominatorTree dt(w);
        LoopInfo li(dt);
        TargetLibraryInfo tli(tlii, &w);
        AssumptionCache ac(w);
        ScalarEvolution se(w, tli, ac, dt, li);
        Loop* found = nullptr;
        Value* step = nullptr;
        for (Loop* loop : li.getLoopsInPreorder()) {
            // Only a candidate is touched: analyses of the others stay valid.
            if (!done.insert(loop->getHeader()).second || !symbolicStep(*loop, se))
                continue;
            changed |= simplifyLoop(loop, &dt, &li, &se, &ac, nullptr, false);
            changed |= formLCSSA(*loop, dt, &li, &se);
            if (loop->isLoopSimplifyForm() && loop->isLCSSAForm(dt) && loop->getExitBlock() &&
                (step = symbolicStep(*loop, se))) {
                found = loop;
                break;
            }
        }
        if (!found)
            break;
        version(*found, step, dt, li);
        changed = true;
        for (Loop* loop : li.getLoopsInPreorder())
            done.insert(loop->getHeader());
        ++versioned;
    }
    return versioned;
}

} // namespace

bool unitStepLoopsEnabled() {
    return envSwitchOn("DUET_CPU_UNIT_STEP_LOOPS");
}

PreservedAnalyses UnitStepLoops::run(Function& f, FunctionAnalysisManager&) {
    bool changed = false;
    const size_t n = versionUnitStepLoops(f, changed);
    if (n && cpuJitLogEnabled())
        std::fprintf(stderr,
                     "duet: cpu: %s: %zu loop(s) stepping by a run-time value copied for a "
                     "step of 1\n",
                     f.getName().str().c_str(), n);
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace duet::rt::wg
