#include "devices/cpu/jit/streaming_stores.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <algorithm>
#include <vector>

namespace duet::rt {

using namespace llvm;

namespace {

constexpr unsigned kAsGlobal = 1; // spir's __global, kept through the host retarget

/// Vector stores to __global memory that x86 can store non-temporally (16, 32 or 64 bytes).
bool isCandidate(const StoreInst& st, const DataLayout& dl) {
    if (st.isVolatile() || st.isAtomic() || st.getPointerAddressSpace() != kAsGlobal)
        return false;
    Type* t = st.getValueOperand()->getType();
    if (!t->isVectorTy())
        return false;
    uint64_t bytes = dl.getTypeStoreSize(t).getFixedValue();
    return bytes == 16 || bytes == 32 || bytes == 64;
}

bool orders(const Instruction& i) {
    if (isa<FenceInst>(i) || isa<AtomicRMWInst>(i) || isa<AtomicCmpXchgInst>(i))
        return true;
    if (auto* l = dyn_cast<LoadInst>(&i))
        return l->isAtomic();
    if (auto* s = dyn_cast<StoreInst>(&i))
        return s->isAtomic();
    return false;
}

} // namespace

bool makeStreamingStores(Module& module, StringRef entry) {
    if (Triple(module.getTargetTriple()).getArch() != Triple::x86_64)
        return false;
    Function* fn = module.getFunction(entry);
    if (!fn || fn->isDeclaration())
        return false;
    const DataLayout& dl = module.getDataLayout();
    for (Function& f : module)
        for (Instruction& i : instructions(f))
            if (orders(i))
                return false;

    // The entry and the functions it calls: a 2D kernel's entry only picks its `.simd` or
    // `.lx1` variant (work_group.cpp), whose loops hold the stores.
    std::vector<Function*> code{fn};
    for (size_t k = 0; k < code.size(); ++k)
        for (Instruction& i : instructions(*code[k]))
            if (auto* call = dyn_cast<CallInst>(&i))
                if (Function* callee = call->getCalledFunction();
                    callee && !callee->isDeclaration() &&
                    std::find(code.begin(), code.end(), callee) == code.end())
                    code.push_back(callee);
    std::vector<StoreInst*> stores;
    for (Function* f : code)
        for (Instruction& i : instructions(*f))
            if (auto* st = dyn_cast<StoreInst>(&i); st && isCandidate(*st, dl))
                stores.push_back(st);
    if (stores.empty())
        return false;

    LLVMContext& ctx = module.getContext();
    MDNode* nontemporal =
        MDNode::get(ctx, ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(ctx), 1)));
    for (StoreInst* st : stores) {
        uint64_t bytes = dl.getTypeStoreSize(st->getValueOperand()->getType()).getFixedValue();
        IRBuilder<> b(st);
        Value* addr = b.CreatePtrToInt(st->getPointerOperand(), b.getInt64Ty());
        Value* aligned = b.CreateICmpEQ(b.CreateAnd(addr, bytes - 1), b.getInt64(0));
        Instruction* thenTerm = nullptr;
        Instruction* elseTerm = nullptr;
        SplitBlockAndInsertIfThenElse(aligned, st, &thenTerm, &elseTerm);
        auto* streaming = cast<StoreInst>(st->clone());
        streaming->setAlignment(Align(bytes));
        streaming->setMetadata(LLVMContext::MD_nontemporal, nontemporal);
        streaming->insertBefore(thenTerm);
        st->moveBefore(elseTerm);
    }
    return true;
}

} // namespace duet::rt
