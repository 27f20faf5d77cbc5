// Atomics on __local and unshared __global memory as plain memory operations; the quick tier's
// inlining of atomics.
#include "devices/cpu/jit/local_atomics.hpp"

#include "compiler/analysis_managers.hpp"
#include "compiler/llvm_util.hpp"
#include "core/environment.hpp"
#include "devices/cpu/jit/work_group.hpp"
#include "devices/cpu/work_group_abi.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Operator.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/LowerAtomic.h>

#include <cstddef>

namespace duet::rt::cpu {

using namespace llvm;

namespace {

constexpr unsigned kLocalAddressSpace = 3; // spir's __local, kept through retargeting

} // namespace

bool isScopeMarkerName(StringRef name) {
    return isAtomicScopeMarker(name);
}

namespace {

/// builtins/cpu/atomics_as.cl's marker of the atomics with the system's scope: an identity on
/// their pointer, removed by plainUnsharedAtomics.
bool isScopeAllMarker(const Value* v) {
    const auto* call = dyn_cast<CallInst>(v);
    const Function* f = call ? call->getCalledFunction() : nullptr;
    return f && f->isDeclaration() && call->arg_size() == 1 && isScopeMarkerName(f->getName());
}

/// What a walk over a pointer's origins does with one value: go on through it (address
/// arithmetic, a cast, a phi, a select, the scope marker), stop there (an origin the caller
/// accepts; it may have pushed more values to walk), or give up.
enum class Origin { through, accepted, rejected };

/// Walks the values `ptr` may come from: `classify(v, work)` first, then, for `through`,
/// through GEPs, address-space casts and bitcasts, phis, selects and the scope marker
/// (`onMarker()` for each); anything else rejects. Returns false on the first rejection.
template <typename Classify, typename OnMarker>
bool walkOrigins(const Value* ptr, Classify&& classify, OnMarker&& onMarker) {
    SmallPtrSet<const Value*, 8> seen;
    SmallVector<const Value*, 8> work{ptr};
    while (!work.empty()) {
        const Value* v = work.pop_back_val();
        if (!seen.insert(v).second)
            continue;
        const Origin o = classify(v, work);
        if (o == Origin::rejected)
            return false;
        if (o == Origin::accepted)
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
        } else if (isScopeAllMarker(v)) {
            onMarker();
            work.push_back(cast<CallInst>(v)->getArgOperand(0));
        } else {
            return false;
        }
    }
    return true;
}

/// Whether `ptr` is an addrspace(3) pointer or comes from one through address arithmetic,
/// casts, phis, selects and the scope marker (__local is the group's alone) only; a __global or
/// private object, an argument, a load or a call's result rejects.
bool pointsToLocal(const Value* ptr) {
    return walkOrigins(
        ptr,
        [](const Value* v, SmallVectorImpl<const Value*>&) {
            if (!v->getType()->isPtrOrPtrVectorTy())
                return Origin::rejected;
            return v->getType()->getPointerAddressSpace() == kLocalAddressSpace ? Origin::accepted
                                                                                : Origin::through;
        },
        [] {});
}

/// `old = atomicrmw op p, v` -> `old = load p; store (old op v), p`. Returns `old`.
Value* plainRmw(AtomicRMWInst& rmw) {
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
    return old;
}

/// `{old, ok} = cmpxchg p, cmp, new` -> `old = load p; ok = old == cmp;
/// store (ok ? new : old), p`. Never fails spuriously, which `weak` allows. Returns `{old, ok}`.
Value* plainCmpXchg(AtomicCmpXchgInst& cx) {
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
    return result;
}

/// The objects an atomic's pointer may point at, as WorkGroupContext bits (bit i: argument i,
/// kUnsharedProgramScopeBit: program-scope variables), and whether it has the system's scope
/// (it went through __duet_scope_all). `bits` is 0 when some object has no bit.
struct AtomicTarget {
    uint64_t bits = 0;
    bool systemScope = false;
};

/// `ptr` reaches its objects through address arithmetic, casts, phis, selects and the scope
/// marker, and from a parameter of an internal function the work-group functions call to what
/// they pass; an object with a bit is a program-scope __global variable or a buffer argument,
/// which the work-group function's prologue loads from its slot, itself loaded from `args[i]`
/// (`args`: the function's first parameter). Anything else — a pointer loaded from memory (SVM,
/// fine-grain system pointers), another function's parameter, a call's result — has none.
/// A work-group function `__duet_wg_<name>(args, ctx)` (its streaming variant too).
bool isWorkGroupFunction(const Function& f) {
    return !f.isDeclaration() && !f.hasLocalLinkage() && f.arg_size() == 2 &&
           f.getName().starts_with(kWorkGroupEntryPrefix);
}

/// The work-group functions' calls of internal function `f`, or none when something else uses
/// it. In the optimised tier the kernel's body may end up in such functions (the work-group
/// pass's variants, argument promotion), the buffer pointers and the context their parameters.
SmallVector<const CallInst*, 2> workGroupCalls(const Function& f) {
    SmallVector<const CallInst*, 2> calls;
    if (!f.hasLocalLinkage())
        return {};
    for (const Use& u : f.uses()) {
        const auto* call = dyn_cast<CallInst>(u.getUser());
        if (!call || call->getCalledOperand() != &f || !isWorkGroupFunction(*call->getFunction()))
            return {};
        calls.push_back(call);
    }
    return calls;
}

AtomicTarget atomicTarget(const Value* ptr, const DataLayout& dl) {
    AtomicTarget target;
    auto classify = [&](const Value* v, SmallVectorImpl<const Value*>& work) {
        if (!v->getType()->isPointerTy())
            return Origin::rejected;
        if (const auto* gv = dyn_cast<GlobalVariable>(v)) {
            if (gv->getAddressSpace() == kLocalAddressSpace)
                return Origin::rejected; // not expected after the work-group pass
            target.bits |= uint64_t(1) << kUnsharedProgramScopeBit;
            return Origin::accepted;
        }
        if (const auto* param = dyn_cast<Argument>(v)) {
            // A parameter of an internal function the work-group functions call: what each
            // call passes.
            const SmallVector<const CallInst*, 2> calls = workGroupCalls(*param->getParent());
            for (const CallInst* call : calls)
                work.push_back(call->getArgOperand(param->getArgNo()));
            return calls.empty() ? Origin::rejected : Origin::accepted;
        }
        const auto* ld = dyn_cast<LoadInst>(v);
        if (!ld)
            return Origin::through;
        const auto* slot = dyn_cast<LoadInst>(ld->getPointerOperand());
        const Value* at = slot ? slot->getPointerOperand() : nullptr;
        APInt offset(at ? dl.getIndexTypeSizeInBits(at->getType()) : 64, 0);
        const Value* base = at ? at->stripAndAccumulateConstantOffsets(dl, offset, true) : nullptr;
        const uint64_t index = offset.getZExtValue() / sizeof(void*);
        const auto* args = dyn_cast_or_null<Argument>(base);
        if (ld->isAtomic() || !slot || slot->isAtomic() || !args || args->getArgNo() != 0 ||
            !isWorkGroupFunction(*args->getParent()) || offset.isNegative() ||
            offset.getZExtValue() % sizeof(void*) || index >= kUnsharedProgramScopeBit)
            return Origin::rejected;
        target.bits |= uint64_t(1) << index;
        return Origin::accepted;
    };
    if (!walkOrigins(ptr, classify, [&] { target.systemScope = true; }))
        target.bits = 0;
    return target;
}

/// `atomic` -> `if ((unshared & bits) == bits) <plain copy> else atomic`, the results joined.
void guardPlain(Instruction& atomic, Value* unshared, uint64_t bits) {
    IRBuilder<> b(&atomic);
    Value* want = b.getInt64(bits);
    Value* ok = b.CreateICmpEQ(b.CreateAnd(unshared, want), want, "unshared");
    Instruction* thenTerm = nullptr;
    Instruction* elseTerm = nullptr;
    SplitBlockAndInsertIfThenElse(ok, atomic.getIterator(), &thenTerm, &elseTerm);
    BasicBlock* tail = thenTerm->getSuccessor(0);
    Instruction* plain = atomic.clone();
    plain->insertBefore(thenTerm);
    atomic.moveBefore(elseTerm);
    Value* plainResult = nullptr;
    if (auto* st = dyn_cast<StoreInst>(plain))
        st->setAtomic(AtomicOrdering::NotAtomic);
    else if (auto* rmw = dyn_cast<AtomicRMWInst>(plain))
        plainResult = plainRmw(*rmw);
    else
        plainResult = plainCmpXchg(*cast<AtomicCmpXchgInst>(plain));
    if (!plainResult || atomic.use_empty())
        return;
    PHINode* phi = PHINode::Create(atomic.getType(), 2, atomic.getName() + ".joined");
    phi->insertBefore(tail->begin());
    atomic.replaceUsesWithIf(phi, [&](Use& u) { return u.getUser() != phi; });
    phi->addIncoming(plainResult, thenTerm->getParent());
    phi->addIncoming(&atomic, elseTerm->getParent());
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
            if (const auto* call = dyn_cast<CallBase>(&i);
                call && !isa<IntrinsicInst>(call) && !isScopeAllMarker(call))
                return 0;
            atomic = atomic || i.isAtomic();
            if (++size > kMaxInlinedInstructions)
                return 0;
        }
    return atomic ? size : 0;
}

} // namespace

std::string localAtomicsMemoKey() {
    return std::string(envSwitchOn("DUET_CPU_PLAIN_LOCAL_ATOMICS") ? "|plainlocal" : "") +
           (envSwitchOn("DUET_CPU_QUICK_INLINE_ATOMICS") ? "|quickinline" : "") +
           (envSwitchOn("DUET_CPU_PLAIN_LOCAL_VOLATILE") ? "|plainvolatile" : "") +
           (envSwitchOn("DUET_CPU_PLAIN_UNSHARED_ATOMICS") ? "|plainunshared" : "");
}

unsigned plainLocalVolatiles(Module& module) {
    if (!envSwitchOn("DUET_CPU_PLAIN_LOCAL_VOLATILE"))
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
    if (!envSwitchOn("DUET_CPU_PLAIN_LOCAL_ATOMICS"))
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

/// Replaces every call of the scope marker by its pointer.
void removeScopeMarkers(Module& module) {
    SmallVector<Function*, 4> markers;
    for (Function& f : module)
        if (f.isDeclaration() && isScopeMarkerName(f.getName()))
            markers.push_back(&f);
    for (Function* f : markers) {
        for (User* u : make_early_inc_range(f->users()))
            if (auto* call = dyn_cast<CallInst>(u); call && isScopeAllMarker(call)) {
                call->replaceAllUsesWith(call->getArgOperand(0));
                call->eraseFromParent();
            }
        if (f->use_empty())
            f->eraseFromParent();
    }
}

unsigned plainUnsharedAtomics(Module& module) {
    if (!envSwitchOn("DUET_CPU_PLAIN_UNSHARED_ATOMICS")) {
        removeScopeMarkers(module);
        return 0;
    }
    const DataLayout& dl = module.getDataLayout();
    unsigned guarded = 0;
    for (Function& f : module) {
        // The context: a work-group function's second parameter, or the parameter of an
        // internal function its callers all pass their context to.
        Value* ctx = nullptr;
        if (isWorkGroupFunction(f)) {
            ctx = f.getArg(1);
        } else if (const SmallVector<const CallInst*, 2> calls = workGroupCalls(f);
                   !calls.empty()) {
            for (Argument& param : f.args())
                if (param.getType()->isPointerTy() &&
                    llvm::all_of(calls, [&](const CallInst* call) {
                        return call->getArgOperand(param.getArgNo()) ==
                               call->getFunction()->getArg(1);
                    }))
                    ctx = &param;
        }
        if (!ctx)
            continue;
        SmallVector<std::pair<Instruction*, AtomicTarget>, 16> found;
        for (BasicBlock& bb : f)
            for (Instruction& i : bb) {
                const Value* ptr = nullptr;
                // Atomic loads, and stores short of seq_cst, are plain moves on x86 already.
                if (auto* st = dyn_cast<StoreInst>(&i);
                    st && st->getOrdering() == AtomicOrdering::SequentiallyConsistent)
                    ptr = st->getPointerOperand();
                else if (auto* rmw = dyn_cast<AtomicRMWInst>(&i))
                    ptr = rmw->getPointerOperand();
                else if (auto* cx = dyn_cast<AtomicCmpXchgInst>(&i))
                    ptr = cx->getPointerOperand();
                if (!ptr || ptr->getType()->getPointerAddressSpace() == kLocalAddressSpace)
                    continue;
                if (AtomicTarget t = atomicTarget(ptr, dl); t.bits)
                    found.emplace_back(&i, t);
            }
        if (found.empty())
            continue;
        IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
        auto field = [&](size_t offset, const char* name) {
            return b.CreateAlignedLoad(b.getInt64Ty(),
                                       b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), ctx, offset),
                                       Align(8), name);
        };
        Value* unshared = field(offsetof(WorkGroupContext, unsharedMemory), "unshared_memory");
        Value* device = field(offsetof(WorkGroupContext, deviceOnlyMemory), "device_only_memory");
        for (auto [inst, target] : found)
            guardPlain(*inst, target.systemScope ? unshared : device, target.bits);
        guarded += unsigned(found.size());
    }
    removeScopeMarkers(module);
    return guarded;
}

unsigned plainAtomics(Module& module) {
    const unsigned local = plainLocalAtomics(module);
    return local + plainUnsharedAtomics(module);
}

unsigned inlineAtomicCallees(Module& module, SmallPtrSetImpl<Function*>* callers) {
    if (!envSwitchOn("DUET_CPU_QUICK_INLINE_ATOMICS"))
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
            Function* caller = call->getFunction();
            InlineFunctionInfo info;
            if (InlineFunction(*call, info).isSuccess()) {
                ++inlined;
                if (callers)
                    callers->insert(caller);
            }
        }
    }
    return inlined;
}

unsigned inlineAtomicsEarly(Module& module) {
    SmallPtrSet<Function*, 8> callers;
    if (!inlineAtomicCallees(module, &callers))
        return 0;
    // SROA, not mem2reg: the builtins take generic pointers, so the variables' addresses reach
    // them through an addrspacecast, which only SROA sees through.
    AnalysisManagers am;
    PassBuilder pb;
    am.registerWith(pb);
    SROAPass sroa(SROAOptions::PreserveCFG);
    for (Function* f : callers)
        sroa.run(*f, am.function);
    return unsigned(callers.size());
}

} // namespace duet::rt::cpu
