// What LLVM 19's NVPTX backend cannot select, rewritten before code generation: fences,
// ordered atomics, the float transcendental intrinsics (casts between address spaces:
// address_spaces.cpp).
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/ADT/StringRef.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <vector>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

constexpr unsigned kGeneric = 0, kShared = 3;

/// The membar for a fence at `scope` (none for a single thread). Clang gives every OpenCL
/// scope the system scope ("") on nvptx; the device reports no scope wider than the device, so
/// that is membar.gl.
std::optional<Intrinsic::ID> membarFor(LLVMContext& c, SyncScope::ID scope, unsigned addrSpace) {
    if (scope == SyncScope::SingleThread)
        return std::nullopt;
    SmallVector<StringRef, 8> names;
    c.getSyncScopeNames(names);
    StringRef name = scope < names.size() ? names[scope] : "";
    if (name == "workgroup" || name == "block" || name == "cta" || addrSpace == kShared)
        return Intrinsic::nvvm_membar_cta;
    return Intrinsic::nvvm_membar_gl;
}

bool stronger(AtomicOrdering o) {
    return o != AtomicOrdering::NotAtomic && o != AtomicOrdering::Unordered &&
           o != AtomicOrdering::Monotonic;
}
bool releases(AtomicOrdering o) {
    return o == AtomicOrdering::Release || o == AtomicOrdering::AcquireRelease ||
           o == AtomicOrdering::SequentiallyConsistent;
}
bool acquires(AtomicOrdering o) {
    return o == AtomicOrdering::Acquire || o == AtomicOrdering::AcquireRelease ||
           o == AtomicOrdering::SequentiallyConsistent;
}

/// Fences around one ordered atomic access, which becomes monotonic: fence.sc (membar) before
/// a release, after an acquire; both for seq_cst loads and stores. Stronger than the C11
/// mapping needs, never weaker.
void fenceAround(Instruction* inst, AtomicOrdering order, SyncScope::ID scope, unsigned as,
                 bool seqCstBoth) {
    std::optional<Intrinsic::ID> membar = membarFor(inst->getContext(), scope, as);
    if (!membar)
        return;
    Module* m = inst->getModule();
    Function* f = Intrinsic::getDeclaration(m, *membar);
    const bool seqCst = order == AtomicOrdering::SequentiallyConsistent;
    if (releases(order) || (seqCst && seqCstBoth))
        CallInst::Create(f, {}, "", inst);
    if (acquires(order) || (seqCst && seqCstBoth))
        CallInst::Create(f, {}, "", inst->getNextNode());
}

void legalizeAtomics(Module& m) {
    std::vector<Instruction*> work;
    for (Function& f : m)
        for (Instruction& i : instructions(f))
            if (isa<FenceInst>(i) || isa<AtomicRMWInst>(i) || isa<AtomicCmpXchgInst>(i) ||
                (isa<LoadInst>(i) && cast<LoadInst>(i).isAtomic()) ||
                (isa<StoreInst>(i) && cast<StoreInst>(i).isAtomic()))
                work.push_back(&i);
    for (Instruction* i : work) {
        if (auto* fence = dyn_cast<FenceInst>(i)) {
            if (std::optional<Intrinsic::ID> membar =
                    membarFor(m.getContext(), fence->getSyncScopeID(), kGeneric))
                CallInst::Create(Intrinsic::getDeclaration(&m, *membar), {}, "", fence);
            fence->eraseFromParent();
        } else if (auto* load = dyn_cast<LoadInst>(i)) {
            if (!stronger(load->getOrdering()))
                continue;
            fenceAround(load, load->getOrdering(), load->getSyncScopeID(),
                        load->getPointerAddressSpace(), true);
            load->setOrdering(AtomicOrdering::Monotonic);
        } else if (auto* store = dyn_cast<StoreInst>(i)) {
            if (!stronger(store->getOrdering()))
                continue;
            fenceAround(store, store->getOrdering(), store->getSyncScopeID(),
                        store->getPointerAddressSpace(), true);
            store->setOrdering(AtomicOrdering::Monotonic);
        } else if (auto* rmw = dyn_cast<AtomicRMWInst>(i)) {
            if (!stronger(rmw->getOrdering()))
                continue;
            fenceAround(rmw, rmw->getOrdering(), rmw->getSyncScopeID(),
                        rmw->getPointerAddressSpace(), false);
            rmw->setOrdering(AtomicOrdering::Monotonic);
        } else if (auto* cas = dyn_cast<AtomicCmpXchgInst>(i)) {
            if (!stronger(cas->getSuccessOrdering()) && !stronger(cas->getFailureOrdering()))
                continue;
            AtomicOrdering o = cas->getSuccessOrdering();
            if (acquires(cas->getFailureOrdering()) && !acquires(o))
                o = releases(o) ? AtomicOrdering::AcquireRelease : AtomicOrdering::Acquire;
            fenceAround(cas, o, cas->getSyncScopeID(), cas->getPointerAddressSpace(), false);
            cas->setSuccessOrdering(AtomicOrdering::Monotonic);
            cas->setFailureOrdering(AtomicOrdering::Monotonic);
        }
    }
}

/// One float value through the approximate PTX instructions.
Value* approximate(IRBuilder<>& b, Intrinsic::ID id, Value* x, bool ftz) {
    Module* m = b.GetInsertBlock()->getModule();
    auto call = [&](Intrinsic::ID plain, Intrinsic::ID flush, Value* v) {
        return b.CreateCall(Intrinsic::getDeclaration(m, ftz ? flush : plain), {v});
    };
    auto sin = [&](Value* v) {
        return call(Intrinsic::nvvm_sin_approx_f, Intrinsic::nvvm_sin_approx_ftz_f, v);
    };
    auto cos = [&](Value* v) {
        return call(Intrinsic::nvvm_cos_approx_f, Intrinsic::nvvm_cos_approx_ftz_f, v);
    };
    auto ex2 = [&](Value* v) {
        return call(Intrinsic::nvvm_ex2_approx_f, Intrinsic::nvvm_ex2_approx_ftz_f, v);
    };
    auto lg2 = [&](Value* v) {
        return call(Intrinsic::nvvm_lg2_approx_f, Intrinsic::nvvm_lg2_approx_ftz_f, v);
    };
    auto k = [&](double c) { return ConstantFP::get(b.getFloatTy(), c); };
    switch (id) {
    case Intrinsic::sin:
        return sin(x);
    case Intrinsic::cos:
        return cos(x);
    case Intrinsic::tan:
        return b.CreateFDiv(sin(x), cos(x));
    case Intrinsic::exp2:
        return ex2(x);
    case Intrinsic::exp:
        return ex2(b.CreateFMul(x, k(1.4426950408889634)));
    case Intrinsic::exp10:
        return ex2(b.CreateFMul(x, k(3.3219280948873622)));
    case Intrinsic::log2:
        return lg2(x);
    case Intrinsic::log:
        return b.CreateFMul(lg2(x), k(0.6931471805599453));
    case Intrinsic::log10:
        return b.CreateFMul(lg2(x), k(0.3010299956639812));
    default:
        return nullptr;
    }
}

bool isTranscendental(Intrinsic::ID id) {
    switch (id) {
    case Intrinsic::sin:
    case Intrinsic::cos:
    case Intrinsic::tan:
    case Intrinsic::exp:
    case Intrinsic::exp2:
    case Intrinsic::exp10:
    case Intrinsic::log:
    case Intrinsic::log2:
    case Intrinsic::log10:
    case Intrinsic::pow:
        return true;
    default:
        return false;
    }
}

std::string legalizeTranscendentals(Module& m) {
    std::string errors;
    std::vector<IntrinsicInst*> work;
    for (Function& f : m)
        for (Instruction& i : instructions(f))
            if (auto* ii = dyn_cast<IntrinsicInst>(&i);
                ii && isTranscendental(ii->getIntrinsicID()))
                work.push_back(ii);
    for (IntrinsicInst* ii : work) {
        Type* t = ii->getType();
        Type* element = t->getScalarType();
        const Intrinsic::ID id = ii->getIntrinsicID();
        if (!element->isFloatTy() || id == Intrinsic::pow) {
            std::string type;
            raw_string_ostream os(type);
            t->print(os);
            errors += "error: internal: the NVPTX code generator of LLVM 19 has no instruction "
                      "for " +
                      Intrinsic::getBaseName(id).str() + " on " + os.str() + " (in function '" +
                      demangle(ii->getFunction()->getName().str()) + "')\n";
            continue;
        }
        const Function* f = ii->getFunction();
        const bool ftz =
            f->getFnAttribute("denormal-fp-math-f32").getValueAsString().starts_with("preserve");
        IRBuilder<> b(ii);
        b.setFastMathFlags(ii->getFastMathFlags());
        Value* result;
        if (auto* vt = dyn_cast<FixedVectorType>(t)) {
            result = PoisonValue::get(vt);
            for (unsigned e = 0; e < vt->getNumElements(); ++e)
                result = b.CreateInsertElement(
                    result,
                    approximate(b, id, b.CreateExtractElement(ii->getArgOperand(0), e), ftz), e);
        } else {
            result = approximate(b, id, ii->getArgOperand(0), ftz);
        }
        ii->replaceAllUsesWith(result);
        ii->eraseFromParent();
    }
    return errors;
}

} // namespace

std::string legalizeForNvptx(Module& m) {
    legalizeAtomics(m);
    std::string errors = legalizeTranscendentals(m);
    return errors + legalizeAddressSpaceCasts(m);
}

} // namespace duet::rt::nvptx
