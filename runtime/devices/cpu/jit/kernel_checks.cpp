// Bounds checks (DUET_CPU_CHECKS) and cancellation points (DUET_KERNEL_TIMEOUT) in CPU kernels,
// around the work-group pass; see kernel_checks.hpp.
#include "devices/cpu/jit/kernel_checks.hpp"

#include "compiler/bounds_checks.hpp"
#include "devices/cpu/jit/guards.hpp"
#include "devices/cpu/work_group_abi.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <cstddef>
#include <vector>

namespace duet::rt {
namespace {

using namespace llvm;
using cpu::kCancelledHookName;
using cpu::kCheckFailHookName;

/// Placeholders: `i64 (i32 slot)` reads WorkGroupContext::argBounds[slot]; `ptr ()` is
/// WorkGroupContext::cancel. lowerGuardPlaceholders replaces them.
constexpr const char* kBoundName = "__duet.guard.bound";
constexpr const char* kCancelName = "__duet.guard.cancel";

bool isKernel(const Function& f) {
    return f.getCallingConv() == CallingConv::SPIR_KERNEL || f.hasMetadata("kernel_arg_addr_space");
}

std::vector<Function*> kernelsOf(Module& m) {
    std::vector<Function*> out;
    for (Function& f : m)
        if (!f.isDeclaration() && isKernel(f))
            out.push_back(&f);
    return out;
}

/// The CPU's side of the checks (compiler/bounds_checks.hpp): bounds from the work-group
/// context (placeholders until the work-group pass), a failed check calls the check-fail hook.
class CpuCheckTarget final : public BoundsCheckTarget {
public:
    CpuCheckTarget(Function* bound, FunctionCallee fail, FunctionCallee globalId,
                   GlobalVariable* namesSlot)
        : m_bound(bound), m_fail(fail), m_globalId(globalId), m_namesSlot(namesSlot) {}

    bool isPrivate(unsigned as) const override { return as == 0; }
    PointerOrigin classify(Value* root) const override {
        // The collective functions' scratch: the executor's, per work-group.
        if (auto* call = dyn_cast<CallInst>(root))
            if (Function* callee = call->getCalledFunction();
                callee && callee->getName() == "__duet_wg_scratch")
                return PointerOrigin::Skip;
        return PointerOrigin::None;
    }
    std::pair<Value*, Value*> argumentBounds(Argument& a, unsigned, IRBuilder<>& b) override {
        const unsigned n = a.getArgNo();
        return {b.CreateCall(m_bound, {b.getInt32(2 * n)}, "chk.low"),
                b.CreateCall(m_bound, {b.getInt32(2 * n + 1)}, "chk.high")};
    }
    // The hook leaves by longjmp; to the code around a check it is a call that returns.
    bool failureReturns() const override { return true; }
    void fail(IRBuilder<>& b, const FailedCheck& c) override {
        Value* gid[3];
        for (unsigned d = 0; d < 3; ++d)
            gid[d] = b.CreateCall(m_globalId, {b.getInt32(d)});
        b.CreateCall(m_fail, {c.id, b.getInt32(uint32_t(c.kind)), c.address, c.low, c.high, c.bytes,
                              m_namesSlot, gid[0], gid[1], gid[2]});
    }

private:
    Function* m_bound;
    FunctionCallee m_fail, m_globalId;
    GlobalVariable* m_namesSlot;
};

} // namespace

void inlineForGuards(Module& module, bool everything) {
    rt::inlineForGuards(kernelsOf(module), everything);
}

std::string insertBoundsChecks(Module& module) {
    LLVMContext& ctx = module.getContext();
    auto* i64 = Type::getInt64Ty(ctx);
    auto* i32 = Type::getInt32Ty(ctx);
    auto* ptr = PointerType::get(ctx, 0);
    Function* bound = cast<Function>(
        module.getOrInsertFunction(kBoundName, FunctionType::get(i64, {i32}, false)).getCallee());
    bound->setDoesNotAccessMemory();
    bound->setDoesNotThrow();
    bound->setWillReturn();
    FunctionCallee fail = module.getOrInsertFunction(
        kCheckFailHookName,
        FunctionType::get(Type::getVoidTy(ctx), {i32, i32, i64, i64, i64, i64, ptr, i64, i64, i64},
                          false));
    if (auto* f = dyn_cast<Function>(fail.getCallee())) {
        // It never returns to the kernel (the hook leaves by longjmp): to the code around a
        // check, it touches nothing the kernel can see.
        f->addFnAttr(Attribute::Cold);
        f->setDoesNotThrow();
        f->setOnlyAccessesInaccessibleMemory();
    }
    FunctionCallee globalId =
        module.getOrInsertFunction("_Z13get_global_idj", FunctionType::get(i64, {i32}, false));
    std::string notes;
    for (Function* k : kernelsOf(module)) {
        // The names table is made once its size is known; its uses point at a stand-in first.
        // Address space 0 (spir's default for globals is 1): the hook takes a host pointer.
        auto* slot = new GlobalVariable(module, Type::getInt8Ty(ctx), true,
                                        GlobalValue::ExternalLinkage, nullptr, "__duet.chk.names",
                                        nullptr, GlobalValue::NotThreadLocal, 0u);
        CpuCheckTarget target(bound, fail, globalId, slot);
        const KernelCheckCounts counts = rt::insertBoundsChecks(*k, target);
        Constant* text =
            ConstantDataArray::getString(ctx, checkNamesTable(*k, counts.variables), false);
        auto* names = new GlobalVariable(module, text->getType(), true, GlobalValue::PrivateLinkage,
                                         text, "__duet.chk.names." + k->getName(), nullptr,
                                         GlobalValue::NotThreadLocal, 0u);
        slot->replaceAllUsesWith(names);
        slot->eraseFromParent();
        notes += uncheckedAccessesNote("DUET_CPU_CHECKS", *k, counts);
    }
    return notes;
}

void insertCancellationPoints(Module& module) {
    LLVMContext& ctx = module.getContext();
    auto* ptr = PointerType::get(ctx, 0);
    Function* flag = cast<Function>(
        module.getOrInsertFunction(kCancelName, FunctionType::get(ptr, false)).getCallee());
    flag->setDoesNotAccessMemory();
    flag->setDoesNotThrow();
    flag->setWillReturn();
    FunctionCallee cancelled = module.getOrInsertFunction(
        kCancelledHookName, FunctionType::get(Type::getVoidTy(ctx), false));
    if (auto* f = dyn_cast<Function>(cancelled.getCallee())) {
        f->addFnAttr(Attribute::Cold);
        f->setDoesNotThrow();
        f->setOnlyAccessesInaccessibleMemory();
    }
    MDNode* weights = MDBuilder(ctx).createBranchWeights(1, 1u << 20);
    for (Function* k : kernelsOf(module)) {
        DominatorTree dt(*k);
        std::vector<BasicBlock*> latches;
        for (BasicBlock& bb : *k)
            for (BasicBlock* succ : successors(&bb))
                if (dt.dominates(succ, &bb)) {
                    latches.push_back(&bb);
                    break;
                }
        for (BasicBlock* latch : latches) {
            Instruction* term = latch->getTerminator();
            IRBuilder<> b(term);
            LoadInst* v = b.CreateLoad(b.getInt8Ty(), b.CreateCall(flag), true, "cancel");
            Value* stop = b.CreateICmpNE(v, b.getInt8(0));
            Instruction* then = SplitBlockAndInsertIfThen(stop, term, false, weights);
            IRBuilder<>(then).CreateCall(cancelled);
        }
    }
}

void lowerGuardPlaceholders(Module& module) {
    for (const char* name : {kBoundName, kCancelName}) {
        Function* f = module.getFunction(name);
        if (!f)
            continue;
        const bool isBound = f->getName() == kBoundName;
        std::vector<CallInst*> calls;
        for (User* u : f->users())
            if (auto* c = dyn_cast<CallInst>(u))
                calls.push_back(c);
        for (CallInst* c : calls) {
            Function* w = c->getFunction();
            assert(w->arg_size() == 2 && "placeholders are only left in work-group functions");
            Value* ctxArg = w->getArg(1);
            IRBuilder<> b(c);
            MDNode* invariant = MDNode::get(b.getContext(), {});
            const size_t field = isBound ? offsetof(WorkGroupContext, argBounds)
                                         : offsetof(WorkGroupContext, cancel);
            LoadInst* p = b.CreateAlignedLoad(
                b.getPtrTy(), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), ctxArg, field), Align(8));
            p->setMetadata(LLVMContext::MD_invariant_load, invariant);
            Value* v = p;
            if (isBound) {
                LoadInst* l = b.CreateAlignedLoad(
                    b.getInt64Ty(), b.CreateInBoundsGEP(b.getInt64Ty(), p, {c->getArgOperand(0)}),
                    Align(8));
                l->setMetadata(LLVMContext::MD_invariant_load, invariant);
                v = l;
            }
            c->replaceAllUsesWith(v);
            c->eraseFromParent();
        }
        if (f->use_empty())
            f->eraseFromParent();
    }
}

} // namespace duet::rt
