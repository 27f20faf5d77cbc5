// Vector inductions of loops that call out (libmvec) rebuilt from a scalar counter each
// iteration, so that no induction vector lives across the calls.
#include "devices/cpu/jit/work_item_loops.hpp"

#include "core/environment.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

namespace duet::rt::wg {

using namespace llvm;

namespace {

/// A call that is not an intrinsic: under the C calling convention (and libmvec's vector one)
/// it clobbers every vector register.
bool callsOut(const Loop& loop) {
    for (const BasicBlock* bb : loop.blocks())
        for (const Instruction& inst : *bb)
            if (const auto* call = dyn_cast<CallBase>(&inst);
                call && !isa<IntrinsicInst>(call) && !call->isInlineAsm())
                return true;
    return false;
}

/// The scalar `s` of `v == splat(s)`, when `s` does not change in `loop`; null otherwise.
Value* invariantSplat(Value* v, const Loop& loop) {
    if (auto* c = dyn_cast<Constant>(v))
        return c->getSplatValue();
    auto* shuffle = dyn_cast<ShuffleVectorInst>(v);
    if (!shuffle || !shuffle->isZeroEltSplat())
        return nullptr;
    auto* insert = dyn_cast<InsertElementInst>(shuffle->getOperand(0));
    auto* lane = insert ? dyn_cast<ConstantInt>(insert->getOperand(2)) : nullptr;
    if (!lane || !lane->isZero() || !loop.isLoopInvariant(insert->getOperand(1)))
        return nullptr;
    return insert->getOperand(1);
}

/// Rewrites `vi = phi [init, preheader], [vi + splat(step), latch]` as
/// `vi = init + splat(k)`, `k = phi [0, preheader], [k + step, latch]` (a scalar register).
bool rebuild(PHINode& phi, Loop& loop) {
    auto* ty = dyn_cast<FixedVectorType>(phi.getType());
    BasicBlock* pre = loop.getLoopPredecessor(); // not always a preheader this late
    BasicBlock* latch = loop.getLoopLatch();
    if (!ty || !ty->getElementType()->isIntegerTy() || !pre || !latch ||
        phi.getNumIncomingValues() != 2)
        return false;
    Value* init = phi.getIncomingValueForBlock(pre);
    auto* next = dyn_cast<BinaryOperator>(phi.getIncomingValueForBlock(latch));
    if (!next || next->getOpcode() != Instruction::Add || !loop.isLoopInvariant(init))
        return false;
    Value* stepVec = next->getOperand(0) == &phi   ? next->getOperand(1)
                     : next->getOperand(1) == &phi ? next->getOperand(0)
                                                   : nullptr;
    Value* step = stepVec ? invariantSplat(stepVec, loop) : nullptr;
    if (!step)
        return false;
    // The step may be a constant or a value defined before the loop; the increment sits
    // where the vector one did, so it reads its operand where that one did.
    IRBuilder<> hb(phi.getParent(), phi.getParent()->getFirstInsertionPt());
    PHINode* k = PHINode::Create(step->getType(), 2, phi.getName() + ".scalar");
    k->insertBefore(&phi);
    Value* vi = hb.CreateAdd(init, hb.CreateVectorSplat(ty->getNumElements(), k),
                             phi.getName() + ".rebuilt");
    IRBuilder<> lb(next);
    Value* kNext = lb.CreateAdd(k, step, k->getName() + ".next");
    k->addIncoming(ConstantInt::get(step->getType(), 0), pre);
    k->addIncoming(kNext, latch);
    phi.replaceAllUsesWith(vi);
    phi.eraseFromParent();
    if (next->use_empty())
        next->eraseFromParent();
    return true;
}

} // namespace

bool callLoopInductionsEnabled() {
    return envSwitchOn("DUET_CPU_CALL_LOOP_INDUCTIONS");
}

PreservedAnalyses ScalarInductionsInCallingLoops::run(Function& f, FunctionAnalysisManager& fam) {
    LoopInfo& li = fam.getResult<LoopAnalysis>(f);
    bool changed = false;
    for (Loop* loop : li.getLoopsInPreorder()) {
        if (!loop->isInnermost() || !callsOut(*loop))
            continue;
        SmallVector<PHINode*, 4> phis;
        for (PHINode& phi : loop->getHeader()->phis())
            phis.push_back(&phi);
        for (PHINode* phi : phis)
            changed |= rebuild(*phi, *loop);
    }
    if (!changed)
        return PreservedAnalyses::all();
    PreservedAnalyses pa;
    pa.preserveSet<CFGAnalyses>();
    return pa;
}

} // namespace duet::rt::wg
