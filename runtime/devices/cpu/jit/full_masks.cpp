// Masked vector loads and stores of __global memory given a fast path for a full mask.
#include "devices/cpu/jit/work_item_loops.hpp"

#include "core/environment.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

namespace duet::rt::wg {

using namespace llvm;

namespace {

constexpr unsigned kGlobalAddressSpace = 1; // spir's __global, kept through retargeting

/// A masked load or store through a __global pointer whose mask is not a constant.
bool isCandidate(const IntrinsicInst& ii) {
    const Intrinsic::ID id = ii.getIntrinsicID();
    if (id != Intrinsic::masked_load && id != Intrinsic::masked_store)
        return false;
    const bool load = id == Intrinsic::masked_load;
    const Value* ptr = ii.getArgOperand(load ? 0 : 1);
    const Value* mask = ii.getArgOperand(load ? 2 : 3);
    return ptr->getType()->getPointerAddressSpace() == kGlobalAddressSpace && !isa<Constant>(mask);
}

/// `masked.load/store(…, mask)` becomes `all(mask) ? plain load/store : masked.load/store`.
void addFullMaskPath(IntrinsicInst& ii) {
    const bool load = ii.getIntrinsicID() == Intrinsic::masked_load;
    Value* ptr = ii.getArgOperand(load ? 0 : 1);
    const Align align = cast<ConstantInt>(ii.getArgOperand(load ? 1 : 2))->getAlignValue();
    Value* mask = ii.getArgOperand(load ? 2 : 3);
    IRBuilder<> b(&ii);
    Value* full = b.CreateAndReduce(mask);
    Instruction* thenTerm = nullptr;
    Instruction* elseTerm = nullptr;
    SplitBlockAndInsertIfThenElse(full, &ii, &thenTerm, &elseTerm);
    b.SetInsertPoint(thenTerm);
    Instruction* plain =
        load ? static_cast<Instruction*>(b.CreateAlignedLoad(ii.getType(), ptr, align))
             : b.CreateAlignedStore(ii.getArgOperand(0), ptr, align);
    plain->copyMetadata(ii);
    BasicBlock* tail = ii.getParent();
    ii.moveBefore(elseTerm);
    if (!load)
        return;
    PHINode* phi = PHINode::Create(ii.getType(), 2, "", &tail->front());
    ii.replaceAllUsesWith(phi);
    phi->addIncoming(plain, thenTerm->getParent());
    phi->addIncoming(&ii, elseTerm->getParent());
}

} // namespace

bool fullMaskPathsEnabled() {
    return envSwitchOn("DUET_CPU_FULL_MASK_PATHS");
}

PreservedAnalyses FullMaskFastPaths::run(Function& f, FunctionAnalysisManager&) {
    SmallVector<IntrinsicInst*, 16> masked;
    for (BasicBlock& bb : f)
        for (Instruction& inst : bb)
            if (auto* ii = dyn_cast<IntrinsicInst>(&inst); ii && isCandidate(*ii))
                masked.push_back(ii);
    for (IntrinsicInst* ii : masked)
        addFullMaskPath(*ii);
    return masked.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}

} // namespace duet::rt::wg
