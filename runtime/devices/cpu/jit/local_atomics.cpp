// Atomics on __local memory as plain memory operations; the quick tier's inlining of atomics.
#include "devices/cpu/jit/local_atomics.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Operator.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/LowerAtomic.h>

#include <cstdlib>

namespace duet::rt::cpu {

using namespace llvm;

namespace {

constexpr unsigned kLocalAddressSpace = 3; // spir's __local, kept through retargeting

/// Whether `ptr` is an addrspace(3) pointer or comes from one through address arithmetic,
/// casts, phis and selects only.
bool pointsToLocal(const Value* ptr) {
    SmallPtrSet<const Value*, 8> seen;
    SmallVector<const Value*, 8> work{ptr};
    while (!work.empty()) {
        const Value* v = work.pop_back_val();
        if (!seen.insert(v).second)
            continue;
        if (!v->getType()->isPtrOrPtrVectorTy())
            return false;
        if (v->getType()->getPointerAddressSpace() == kLocalAddressSpace)
            continue;
        if (const auto* gep = dyn_cast<GEPOperator>(v)) {
            work.push_back(gep->getPointerOperand());
        } else if (Operator::getOpcode(v) == Instruction::AddrSpaceCast ||
                   Operator::getOpcode(v) == Instruction::BitCast) {
            work.push_back(cast<Operator>(v)->getOperand(0));
        } else if (const auto* phi = dyn_cast<PHINode>(v)) {
            for (const Value* in : phi->incoming_values())
                work.push_back(in);
        } else if (const auto* sel = dyn_cast<SelectInst>(v)) {
            work.push_back(sel->getTrueValue());
            work.push_back(sel->getFalseValue());
        } else {
            return false; // a __global or private object, an argument, a load, a call...
        }
    }
    return true;
}

/// `old = atomicrmw op p, v` -> `old = load p; store (old op v), p`.
void plainRmw(AtomicRMWInst& rmw) {
    IRBuilder<> b(&rmw);
    Value* ptr = rmw.getPointerOperand();
    Value* val = rmw.getValOperand();
    LoadInst* old = b.CreateAlignedLoad(val->getType(), ptr, rmw.getAlign(), rmw.isVolatile());
    Value* updated = buildAtomicRMWValue(rmw.getOperation(), b, old, val);
    StoreInst* st = b.CreateAlignedStore(updated, ptr, rmw.getAlign(), rmw.isVolatile());
    old->setAAMetadata(rmw.getAAMetadata());
    st->setAAMetadata(rmw.getAAMetadata());
    old->takeName(&rmw);
    rmw.replaceAllUsesWith(old);
    rmw.eraseFromParent();
}

/// `{old, ok} = cmpxchg p, cmp, new` -> `old = load p; ok = old == cmp;
/// store (ok ? new : old), p`. Never fails spuriously, which `weak` allows.
void plainCmpXchg(AtomicCmpXchgInst& cx) {
    IRBuilder<> b(&cx);
    Value* ptr = cx.getPointerOperand();
    Value* desired = cx.getNewValOperand();
    LoadInst* old = b.CreateAlignedLoad(desired->getType(), ptr, cx.getAlign(), cx.isVolatile());
    Value* ok = b.CreateICmpEQ(old, cx.getCompareOperand());
    StoreInst* st =
        b.CreateAlignedStore(b.CreateSelect(ok, desired, old), ptr, cx.getAlign(), cx.isVolatile());
    old->setAAMetadata(cx.getAAMetadata());
    st->setAAMetadata(cx.getAAMetadata());
    Value* result = b.CreateInsertValue(PoisonValue::get(cx.getType()), old, 0);
    result = b.CreateInsertValue(result, ok, 1);
    cx.replaceAllUsesWith(result);
    cx.eraseFromParent();
}

/// The quick tier inlines callees of at most this many instructions: the builtin library's
/// largest atomic is compare_exchange_*_explicit with run-time orders (380); its switches fold
/// away once the orders are constants.
constexpr unsigned kMaxInlinedInstructions = 400;
/// And at most this many instructions inlined per module, so that a kernel of many atomic calls
/// with run-time orders does not make the quick tier slow.
constexpr unsigned kMaxInlinedPerModule = 20000;

/// Size of `f` when it is a candidate for the quick tier's inlining (defined, inlinable, holds an
/// atomic instruction, calls nothing but intrinsics, small), else 0.
unsigned inlineCandidateSize(const Function& f) {
    if (f.isDeclaration() || f.hasFnAttribute(Attribute::NoInline) || f.isVarArg())
        return 0;
    unsigned size = 0;
    bool atomic = false;
    for (const BasicBlock& bb : f)
        for (const Instruction& i : bb) {
            if (const auto* call = dyn_cast<CallBase>(&i); call && !isa<IntrinsicInst>(call))
                return 0;
            atomic = atomic || i.isAtomic();
            if (++size > kMaxInlinedInstructions)
                return 0;
        }
    return atomic ? size : 0;
}

bool switchedOn(const char* name) {
    const char* env = std::getenv(name);
    return !(env && env[0] == '0');
}

} // namespace

std::string localAtomicsMemoKey() {
    return std::string(switchedOn("DUET_CPU_PLAIN_LOCAL_ATOMICS") ? "|plainlocal" : "") +
           (switchedOn("DUET_CPU_QUICK_INLINE_ATOMICS") ? "|quickinline" : "") +
           (switchedOn("DUET_CPU_PLAIN_LOCAL_VOLATILE") ? "|plainvolatile" : "");
}

unsigned plainLocalVolatiles(Module& module) {
    if (!switchedOn("DUET_CPU_PLAIN_LOCAL_VOLATILE"))
        return 0;
    unsigned changed = 0;
    for (Function& f : module)
        for (BasicBlock& bb : f)
            for (Instruction& i : bb) {
                if (auto* ld = dyn_cast<LoadInst>(&i)) {
                    if (ld->isVolatile() && !ld->isAtomic() &&
                        pointsToLocal(ld->getPointerOperand())) {
                        ld->setVolatile(false);
                        ++changed;
                    }
                } else if (auto* st = dyn_cast<StoreInst>(&i)) {
                    if (st->isVolatile() && !st->isAtomic() &&
                        pointsToLocal(st->getPointerOperand())) {
                        st->setVolatile(false);
                        ++changed;
                    }
                } else if (auto* mi = dyn_cast<MemIntrinsic>(&i)) {
                    // A copy between __local and anything else stays volatile: the other side
                    // may be seen by other threads.
                    auto* transfer = dyn_cast<MemTransferInst>(mi);
                    if (mi->isVolatile() && pointsToLocal(mi->getRawDest()) &&
                        (!transfer || pointsToLocal(transfer->getRawSource()))) {
                        mi->setVolatile(ConstantInt::getFalse(mi->getContext()));
                        ++changed;
                    }
                }
            }
    return changed;
}

unsigned plainLocalAtomics(Module& module) {
    if (!switchedOn("DUET_CPU_PLAIN_LOCAL_ATOMICS"))
        return 0;
    SmallVector<Instruction*, 16> found;
    for (Function& f : module)
        for (BasicBlock& bb : f)
            for (Instruction& i : bb) {
                const Value* ptr = nullptr;
                if (auto* ld = dyn_cast<LoadInst>(&i); ld && ld->isAtomic())
                    ptr = ld->getPointerOperand();
                else if (auto* st = dyn_cast<StoreInst>(&i); st && st->isAtomic())
                    ptr = st->getPointerOperand();
                else if (auto* rmw = dyn_cast<AtomicRMWInst>(&i))
                    ptr = rmw->getPointerOperand();
                else if (auto* cx = dyn_cast<AtomicCmpXchgInst>(&i))
                    ptr = cx->getPointerOperand();
                if (ptr && pointsToLocal(ptr))
                    found.push_back(&i);
            }
    for (Instruction* i : found) {
        if (auto* ld = dyn_cast<LoadInst>(i))
            ld->setAtomic(AtomicOrdering::NotAtomic);
        else if (auto* st = dyn_cast<StoreInst>(i))
            st->setAtomic(AtomicOrdering::NotAtomic);
        else if (auto* rmw = dyn_cast<AtomicRMWInst>(i))
            plainRmw(*rmw);
        else
            plainCmpXchg(*cast<AtomicCmpXchgInst>(i));
    }
    return unsigned(found.size());
}

unsigned inlineAtomicCallees(Module& module) {
    if (!switchedOn("DUET_CPU_QUICK_INLINE_ATOMICS"))
        return 0;
    unsigned inlined = 0;
    unsigned budget = kMaxInlinedPerModule;
    // Two rounds: the builtins first, then a caller that held only calls of them.
    for (int round = 0; round < 2; ++round) {
        DenseMap<const Function*, unsigned> sizes;
        SmallVector<CallBase*, 16> calls;
        for (Function& f : module)
            for (BasicBlock& bb : f)
                for (Instruction& i : bb) {
                    auto* call = dyn_cast<CallBase>(&i);
                    Function* callee = call ? call->getCalledFunction() : nullptr;
                    if (!callee || callee == &f ||
                        callee->getFunctionType() != call->getFunctionType())
                        continue;
                    auto [it, fresh] = sizes.try_emplace(callee, 0);
                    if (fresh)
                        it->second = inlineCandidateSize(*callee);
                    if (it->second && it->second <= budget) {
                        budget -= it->second;
                        calls.push_back(call);
                    }
                }
        if (calls.empty())
            break;
        for (CallBase* call : calls) {
            InlineFunctionInfo info;
            if (InlineFunction(*call, info).isSuccess())
                ++inlined;
        }
    }
    return inlined;
}

} // namespace duet::rt::cpu
