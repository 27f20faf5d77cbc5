#include "devices/cpu/jit/streaming_stores.hpp"

#include "devices/cpu/jit/work_group.hpp"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <set>
#include <string>
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

/// A name for the buffer `ptr` points into, the same for every access through it: work-group
/// functions load each buffer's pointer from the argument table (`args[i]` points to its slot),
/// so it is the chain of loads and constant offsets down to a function argument; anything else
/// is named by the underlying object itself.
std::string bufferOf(const Value* ptr, const DataLayout& dl) {
    const Value* obj = getUnderlyingObject(ptr, 0);
    if (auto* a = dyn_cast<Argument>(obj))
        return "a" + std::to_string(a->getArgNo());
    if (auto* load = dyn_cast<LoadInst>(obj)) {
        APInt offset(dl.getIndexTypeSizeInBits(load->getPointerOperandType()), 0);
        const Value* base =
            load->getPointerOperand()->stripAndAccumulateConstantOffsets(dl, offset, true);
        return "L(" + bufferOf(base, dl) + "+" + std::to_string(offset.getSExtValue()) + ")";
    }
    return "v" + std::to_string(reinterpret_cast<uintptr_t>(obj));
}

/// The pointer (or vector of pointers) a load, masked load or gather of __global memory reads
/// through; null for anything else.
const Value* globalLoadPointer(const Instruction& i) {
    const Value* ptr = nullptr;
    if (auto* load = dyn_cast<LoadInst>(&i))
        ptr = load->getPointerOperand();
    else if (auto* call = dyn_cast<IntrinsicInst>(&i);
             call && (call->getIntrinsicID() == Intrinsic::masked_load ||
                      call->getIntrinsicID() == Intrinsic::masked_gather))
        ptr = call->getArgOperand(0);
    if (!ptr || ptr->getType()->getScalarType()->getPointerAddressSpace() != kAsGlobal)
        return nullptr;
    return ptr;
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

bool addStreamingVariant(Module& module, StringRef entry) {
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
    // A store to a buffer the kernel also reads (y = a * x + y) stays plain: the load has
    // brought the line into the cache already, so there is no read to skip, and a non-temporal
    // store to a cached line evicts it (saxpy on the lent host's Xeon: 144-158 GB/s streaming,
    // 196-400 plain).
    std::set<std::string> read;
    for (Function* f : code)
        for (Instruction& i : instructions(*f))
            if (const Value* ptr = globalLoadPointer(i))
                read.insert(bufferOf(ptr, dl));
    // The variants for narrow groups (`.lx1`: one work-item along x; `.serial`: groups under
    // a vector) keep their plain stores: copying them as well made SHOC sgemmNN's machine code
    // 1.5x as long (301 against 199 ms; it is part of every streaming kernel's compile), for
    // shapes that rarely stream.
    auto narrow = [&](const Function* f) {
        return f->getName() == entry.str() + kSingleXVariant ||
               f->getName() == entry.str() + kSerialVariant;
    };
    std::vector<StoreInst*> stores;
    std::set<Function*> storing{fn};
    for (Function* f : code)
        if (!narrow(f))
            for (Instruction& i : instructions(*f))
                if (auto* st = dyn_cast<StoreInst>(&i);
                    st && isCandidate(*st, dl) &&
                    !read.count(bufferOf(st->getPointerOperand(), dl))) {
                    stores.push_back(st);
                    storing.insert(f);
                }
    if (stores.empty())
        return false;

    // The copies: the entry, and the functions that hold such stores; calls between them go to
    // the copies, calls of the others to the originals.
    ValueToValueMapTy vmap;
    std::vector<std::pair<Function*, Function*>> copies;
    for (Function* f : code)
        if (storing.count(f)) {
            Function* c =
                Function::Create(f->getFunctionType(), f->getLinkage(), f->getAddressSpace(),
                                 streamingName(f->getName()), &module);
            vmap[f] = c;
            copies.push_back({f, c});
        }
    for (auto [f, c] : copies) {
        auto arg = c->arg_begin();
        for (Argument& a : f->args())
            vmap[&a] = &*arg++;
        SmallVector<ReturnInst*, 4> returns;
        CloneFunctionInto(c, f, vmap, CloneFunctionChangeType::LocalChangesOnly, returns);
    }

    LLVMContext& ctx = module.getContext();
    MDNode* nontemporal =
        MDNode::get(ctx, ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(ctx), 1)));
    for (StoreInst* original : stores) {
        auto* st = cast<StoreInst>(vmap[original]);
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
