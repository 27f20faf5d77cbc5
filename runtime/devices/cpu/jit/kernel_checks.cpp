// Bounds checks (DUET_CPU_CHECKS) and cancellation points (DUET_KERNEL_TIMEOUT) in CPU kernels,
// around the work-group pass; see kernel_checks.hpp.
#include "devices/cpu/jit/kernel_checks.hpp"

#include "compiler/bounds_checks.hpp"
#include "devices/cpu/jit/guards.hpp"
#include "devices/cpu/jit/work_item_loops.hpp"
#include "devices/cpu/work_group_abi.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/PromoteMemToReg.h>

#include <algorithm>
#include <cstddef>
#include <map>
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
/// `void (ptr sites, ptr names, i32 code, i64 address, i64 gid0, i64 gid1, i64 gid2)`: the
/// work-item's deferred check failures so far (code: 1 + the failing site's index in `sites`,
/// 0 when none) must be reported here. lowerDeferredChecks replaces it.
constexpr const char* kFlushName = "__duet.chk.flush";

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
    CpuCheckTarget(Function& kernel, Function* bound, FunctionCallee fail, FunctionCallee globalId,
                   FunctionCallee flush, GlobalVariable* namesSlot, GlobalVariable* sitesSlot)
        : m_bound(bound), m_fail(fail), m_globalId(globalId), m_flush(flush),
          m_namesSlot(namesSlot), m_sitesSlot(sitesSlot) {
        IRBuilder<> b(&*kernel.getEntryBlock().getFirstInsertionPt());
        m_code = b.CreateAlloca(b.getInt32Ty(), nullptr, "chk.code");
        m_addr = b.CreateAlloca(b.getInt64Ty(), nullptr, "chk.where");
        b.CreateStore(b.getInt32(0), m_code);
        b.CreateStore(b.getInt64(0), m_addr);
    }

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
        flush(b); // a deferred failure of this work-item came first
        Value* gid[3];
        for (unsigned d = 0; d < 3; ++d)
            gid[d] = b.CreateCall(m_globalId, {b.getInt32(d)});
        b.CreateCall(m_fail, {c.id, b.getInt32(uint32_t(c.kind)), c.address, c.low, c.high, c.bytes,
                              m_namesSlot, gid[0], gid[1], gid[2]});
    }

    bool defersFailures() const override { return true; }
    void deferFailure(IRBuilder<>& b, const FailedCheck& c, Value* bad) override {
        m_sites.push_back({uint32_t(cast<ConstantInt>(c.id)->getZExtValue()), uint32_t(c.kind),
                           cast<ConstantInt>(c.bytes)->getZExtValue()});
        // The work-item's first failure is kept.
        Value* old = b.CreateLoad(b.getInt32Ty(), m_code);
        Value* first = b.CreateAnd(bad, b.CreateICmpEQ(old, b.getInt32(0)), "chk.first");
        b.CreateStore(b.CreateSelect(first, b.getInt32(uint32_t(m_sites.size())), old), m_code);
        Value* where = b.CreateLoad(b.getInt64Ty(), m_addr);
        b.CreateStore(b.CreateSelect(first, c.address, where), m_addr);
    }
    /// Emits the flush placeholder at `b` with the work-item's deferred failure so far.
    CallInst* flush(IRBuilder<>& b) {
        Value* gid[3];
        for (unsigned d = 0; d < 3; ++d)
            gid[d] = b.CreateCall(m_globalId, {b.getInt32(d)});
        return b.CreateCall(m_flush,
                            {m_sitesSlot, m_namesSlot, b.CreateLoad(b.getInt32Ty(), m_code),
                             b.CreateLoad(b.getInt64Ty(), m_addr), gid[0], gid[1], gid[2]});
    }
    /// After insertBoundsChecks: flushes before barriers (and calls that may hold one), the
    /// kernel's loops and its returns; the work-item's record in registers; the sites table.
    void finish(Function& k);

private:
    Function* m_bound;
    FunctionCallee m_fail, m_globalId, m_flush;
    GlobalVariable* m_namesSlot;
    GlobalVariable* m_sitesSlot;
    AllocaInst* m_code;
    AllocaInst* m_addr;
    std::vector<cpu::DeferredCheckSite> m_sites;
};

/// 2: a barrier; 1: a call that may hold one (a function the guards' inlining left, which
/// touches memory); 0: neither.
int barrierLike(const CallBase& call) {
    const Function* f = call.getCalledFunction();
    if (!f)
        return 1;
    if (f->isIntrinsic())
        return 0;
    if (f->getName().contains("barrier"))
        return 2;
    return !f->isDeclaration() && !f->doesNotAccessMemory() ? 1 : 0;
}

void CpuCheckTarget::finish(Function& k) {
    LLVMContext& ctx = k.getContext();
    Module& m = *k.getParent();
    std::vector<Instruction*> before;   // flushes with the record kept after them
    std::vector<Instruction*> barriers; // flushes after which the record starts again
    if (!m_sites.empty()) {
        DominatorTree dt(k);
        LoopInfo loops(dt);
        for (Loop* l : loops)
            if (BasicBlock* pre = l->getLoopPreheader())
                before.push_back(pre->getTerminator());
        for (Instruction& i : instructions(k)) {
            if (isa<ReturnInst>(i))
                before.push_back(&i);
            else if (auto* call = dyn_cast<CallBase>(&i);
                     call && call->getCalledFunction() != m_fail.getCallee() &&
                     call->getCalledFunction() != m_flush.getCallee())
                if (int kind = barrierLike(*call))
                    (kind == 2 ? barriers : before).push_back(&i);
        }
    }
    for (Instruction* at : before) {
        IRBuilder<> b(at);
        flush(b);
    }
    for (Instruction* at : barriers) {
        IRBuilder<> b(at);
        flush(b);
        // Nothing of the record lives across a barrier: the region before it reported it.
        b.CreateStore(b.getInt32(0), m_code);
        b.CreateStore(b.getInt64(0), m_addr);
    }
    DominatorTree dt(k);
    PromoteMemToReg({m_code, m_addr}, dt);
    // Flushes that can see no failure (before any deferred check) go.
    std::vector<CallInst*> dead;
    for (User* u : cast<Function>(m_flush.getCallee())->users())
        if (auto* c = dyn_cast<CallInst>(u); c && c->getFunction() == &k)
            if (auto* code = dyn_cast<ConstantInt>(c->getArgOperand(2)); code && code->isZero())
                dead.push_back(c);
    for (CallInst* c : dead) {
        std::vector<Instruction*> gids;
        for (unsigned d = 4; d < 7; ++d)
            if (auto* g = dyn_cast<Instruction>(c->getArgOperand(d)))
                gids.push_back(g);
        c->eraseFromParent();
        for (Instruction* g : gids)
            if (g->use_empty())
                g->eraseFromParent();
    }
    // The sites table: {id, kind, bytes} per deferred check, in code order.
    auto* i32 = Type::getInt32Ty(ctx);
    auto* i64 = Type::getInt64Ty(ctx);
    StructType* siteTy = StructType::get(ctx, {i32, i32, i64});
    std::vector<Constant*> rows;
    for (const cpu::DeferredCheckSite& site : m_sites)
        rows.push_back(ConstantStruct::get(siteTy, {ConstantInt::get(i32, site.id),
                                                    ConstantInt::get(i32, site.kind),
                                                    ConstantInt::get(i64, site.bytes)}));
    if (rows.empty())
        rows.push_back(Constant::getNullValue(siteTy));
    Constant* table = ConstantArray::get(ArrayType::get(siteTy, rows.size()), rows);
    auto* sites = new GlobalVariable(m, table->getType(), true, GlobalValue::PrivateLinkage, table,
                                     "__duet.chk.sites." + k.getName(), nullptr,
                                     GlobalValue::NotThreadLocal, 0u);
    m_sitesSlot->replaceAllUsesWith(sites);
    m_sitesSlot->eraseFromParent();
}

/// Whether the vectoriser may widen work-item loop `l` once its flushes are stores: innermost,
/// one latch, one exit, and no call that writes memory (a check's or a poll's hook, printf).
bool vectorisableWorkItemLoop(const Loop& l, const Function* flush) {
    BasicBlock* latch = l.getLoopLatch();
    if (!l.isInnermost() || !latch || !l.getLoopPreheader() || !l.getExitBlock() ||
        l.getExitingBlock() != latch || !wg::isWorkItemLoopLatch(latch->getTerminator()))
        return false;
    for (BasicBlock* bb : l.blocks())
        for (Instruction& i : *bb)
            if (auto* call = dyn_cast<CallBase>(&i))
                if (call->getCalledFunction() != flush && !isa<IntrinsicInst>(call) &&
                    !call->onlyReadsMemory())
                    return false;
    return true;
}

/// How the scan after a work-item loop gets the global ids of the loop's `k`-th work-item:
/// start + k * step where both are known before the loop, else from a per-work-item array.
struct GidPlan {
    Value* start[3] = {nullptr, nullptr, nullptr};
    Value* step[3] = {nullptr, nullptr, nullptr};
};

/// Lowers the flushes of one work-group function (lowerDeferredChecks).
class DeferredLowering {
public:
    DeferredLowering(Function& w, FunctionCallee failHook, FunctionCallee scanHook)
        : m_w(w), m_ctx(w.getContext()), m_fail(failHook), m_scan(scanHook) {}

    void run(const std::vector<CallInst*>& flushes, const Function* flush) {
        DominatorTree dt(m_w);
        LoopInfo loops(dt);
        // In the flushes' order (the IR's), so that the lowering is the same from run to run.
        std::vector<std::pair<Loop*, std::vector<CallInst*>>> perLoop;
        std::vector<CallInst*> inPlace;
        for (CallInst* c : flushes) {
            Loop* l = loops.getLoopFor(c->getParent());
            if (!l || !vectorisableWorkItemLoop(*l, flush) || !fewSites(c)) {
                inPlace.push_back(c);
                continue;
            }
            auto it = std::find_if(perLoop.begin(), perLoop.end(),
                                   [l](const auto& e) { return e.first == l; });
            if (it == perLoop.end())
                it = perLoop.insert(perLoop.end(), {l, {}});
            it->second.push_back(c);
        }
        // Each global id the loop's flushes report: the same for every work-item, or the loop's
        // count times a step from a start (both expanded before the loop), or else recorded per
        // work-item. Planned while the analyses hold, before anything changes.
        TargetLibraryInfoImpl tlii(Triple(m_w.getParent()->getTargetTriple()));
        TargetLibraryInfo tli(tlii);
        AssumptionCache ac(m_w);
        ScalarEvolution se(m_w, tli, ac, dt, loops);
        SCEVExpander expander(se, m_w.getParent()->getDataLayout(), "chk.gid");
        std::map<Loop*, GidPlan> plans;
        for (auto& [l, cs] : perLoop) {
            GidPlan& plan = plans[l];
            Instruction* at = l->getLoopPreheader()->getTerminator();
            for (unsigned d = 0; d < 3; ++d) {
                const SCEV* g = se.getSCEV(cs.front()->getArgOperand(4 + d));
                bool same = true;
                for (CallInst* c : cs)
                    same = same && se.getSCEV(c->getArgOperand(4 + d)) == g;
                if (!same || !g->getType()->isIntegerTy(64))
                    continue;
                if (se.isLoopInvariant(g, l) && expander.isSafeToExpandAt(g, at)) {
                    plan.start[d] = expander.expandCodeFor(g, g->getType(), at);
                    plan.step[d] = ConstantInt::get(g->getType(), 0);
                } else if (auto* ar = dyn_cast<SCEVAddRecExpr>(g);
                           ar && ar->getLoop() == l && ar->isAffine() &&
                           se.isLoopInvariant(ar->getStart(), l) &&
                           se.isLoopInvariant(ar->getStepRecurrence(se), l) &&
                           expander.isSafeToExpandAt(ar->getStart(), at) &&
                           expander.isSafeToExpandAt(ar->getStepRecurrence(se), at)) {
                    plan.start[d] = expander.expandCodeFor(ar->getStart(), g->getType(), at);
                    plan.step[d] =
                        expander.expandCodeFor(ar->getStepRecurrence(se), g->getType(), at);
                }
            }
        }
        expander.clear();
        for (CallInst* c : inPlace)
            lowerInPlace(c);
        for (auto& [l, cs] : perLoop)
            lowerInLoop(l->getLoopPreheader(), l->getHeader(), l->getLoopLatch(), l->getExitBlock(),
                        plans[l], cs);
    }

private:
    Value* ctxArg() { return m_w.getArg(1); }
    /// Codes fit the per-work-item byte: the kernel's sites table has fewer than 256 rows.
    static bool fewSites(const CallInst* c) {
        auto* table = dyn_cast<GlobalVariable>(c->getArgOperand(0));
        auto* type = table ? dyn_cast<ArrayType>(table->getValueType()) : nullptr;
        return type && type->getNumElements() < 256;
    }
    /// `if (code) fail(...)` where the flush was.
    void lowerInPlace(CallInst* c) {
        IRBuilder<> b(c);
        Value* bad = b.CreateICmpNE(c->getArgOperand(2), b.getInt32(0), "chk.failed");
        Instruction* then = SplitBlockAndInsertIfThen(
            bad, c, false, MDBuilder(m_ctx).createBranchWeights(1, 1u << 20));
        IRBuilder<>(then).CreateCall(m_fail,
                                     {c->getArgOperand(0), c->getArgOperand(1), ctxArg(),
                                      c->getArgOperand(2), c->getArgOperand(3), c->getArgOperand(4),
                                      c->getArgOperand(5), c->getArgOperand(6)});
        c->eraseFromParent();
    }
    /// Per-work-item arrays of the group's size (per-work-item storage to ParallelWorkItemLoops),
    /// made once per function at its entry.
    AllocaInst* array(Type* t, const char* name) {
        IRBuilder<> b(&*m_w.getEntryBlock().getFirstInsertionPt());
        if (!m_items) {
            Value* n = nullptr;
            for (unsigned d = 0; d < 3; ++d) {
                Value* p = b.CreateConstInBoundsGEP1_64(
                    b.getInt8Ty(), ctxArg(), offsetof(WorkGroupContext, localSize) + 8 * d);
                Value* v = b.CreateAlignedLoad(b.getInt64Ty(), p, Align(8));
                n = n ? b.CreateMul(n, v) : v;
            }
            m_items = n;
            b.SetInsertPoint(cast<Instruction>(n)->getNextNode());
        } else {
            b.SetInsertPoint(cast<Instruction>(m_items)->getNextNode());
        }
        return b.CreateAlloca(t, m_items, name);
    }
    void lowerInLoop(BasicBlock* pre, BasicBlock* header, BasicBlock* latch, BasicBlock* exit,
                     const GidPlan& plan, const std::vector<CallInst*>& cs) {
        auto* i64 = Type::getInt64Ty(m_ctx);
        if (!m_codes) {
            // One byte per work-item (a kernel has fewer than 256 deferred checks: see run()).
            m_codes = array(Type::getInt8Ty(m_ctx), "chk.codes");
            m_addrs = array(i64, "chk.addrs");
            // Codes start at 0 and stay 0: a failure recorded in them never returns.
            IRBuilder<> b(m_w.getEntryBlock().getTerminator());
            b.CreateMemSet(m_codes, b.getInt8(0), m_items, Align(1));
            m_any = IRBuilder<>(&*m_w.getEntryBlock().getFirstInsertionPt())
                        .CreateAlloca(Type::getInt8Ty(m_ctx), nullptr, "chk.any");
        }
        bool varying[3];
        for (unsigned d = 0; d < 3; ++d)
            varying[d] = !plan.start[d];
        for (unsigned d = 0; d < 3; ++d)
            if (varying[d] && !m_gids[d])
                m_gids[d] = array(i64, "chk.gids");
        IRBuilder<> pb(pre->getTerminator());
        pb.CreateStore(pb.getInt8(0), m_any);
        // The loop's own count of work-items, from 0: the arrays' index.
        IRBuilder<> hb(&*header->begin());
        PHINode* k = hb.CreatePHI(i64, 2, "chk.k");
        IRBuilder<> lb(latch->getTerminator());
        Value* next = lb.CreateAdd(k, lb.getInt64(1), "chk.k.next");
        k->addIncoming(hb.getInt64(0), pre);
        k->addIncoming(next, latch);
        for (CallInst* c : cs) {
            IRBuilder<> b(c);
            b.CreateStore(b.CreateTrunc(c->getArgOperand(2), b.getInt8Ty()),
                          b.CreateInBoundsGEP(b.getInt8Ty(), m_codes, k));
            b.CreateStore(c->getArgOperand(3), b.CreateInBoundsGEP(i64, m_addrs, k));
            for (unsigned d = 0; d < 3; ++d)
                if (varying[d])
                    b.CreateStore(c->getArgOperand(4 + d), b.CreateInBoundsGEP(i64, m_gids[d], k));
            Value* failed =
                b.CreateZExt(b.CreateICmpNE(c->getArgOperand(2), b.getInt32(0)), b.getInt8Ty());
            b.CreateStore(b.CreateOr(b.CreateLoad(b.getInt8Ty(), m_any), failed), m_any);
        }
        // After the loop: a set flag scans the records.
        BasicBlock* after = SplitEdge(latch, exit);
        IRBuilder<> ab(&*after->getFirstInsertionPt());
        Value* any = ab.CreateICmpNE(ab.CreateLoad(ab.getInt8Ty(), m_any), ab.getInt8(0));
        Instruction* then = SplitBlockAndInsertIfThen(
            any, &*ab.GetInsertPoint(), false, MDBuilder(m_ctx).createBranchWeights(1, 1u << 20));
        IRBuilder<> tb(then);
        CallInst* first = cs.front();
        (void)header;
        Value* none = ConstantPointerNull::get(tb.getPtrTy());
        Value* zero = tb.getInt64(0);
        tb.CreateCall(m_scan, {first->getArgOperand(0), first->getArgOperand(1), ctxArg(), next,
                               m_codes, m_addrs, varying[0] ? m_gids[0] : none,
                               varying[1] ? m_gids[1] : none, varying[2] ? m_gids[2] : none,
                               varying[0] ? zero : plan.start[0], varying[1] ? zero : plan.start[1],
                               varying[2] ? zero : plan.start[2], varying[0] ? zero : plan.step[0],
                               varying[1] ? zero : plan.step[1], varying[2] ? zero : plan.step[2]});
        for (CallInst* c : cs)
            c->eraseFromParent();
    }

    Function& m_w;
    LLVMContext& m_ctx;
    FunctionCallee m_fail, m_scan;
    Value* m_items = nullptr;
    AllocaInst* m_codes = nullptr;
    AllocaInst* m_addrs = nullptr;
    AllocaInst* m_gids[3] = {nullptr, nullptr, nullptr};
    AllocaInst* m_any = nullptr;
};

} // namespace

void lowerDeferredChecks(Module& module) {
    Function* flush = module.getFunction(kFlushName);
    if (!flush)
        return;
    LLVMContext& ctx = module.getContext();
    auto* i32 = Type::getInt32Ty(ctx);
    auto* i64 = Type::getInt64Ty(ctx);
    auto* ptr = PointerType::get(ctx, 0);
    auto* voidTy = Type::getVoidTy(ctx);
    FunctionCallee failHook = module.getOrInsertFunction(
        cpu::kDeferredFailHookName,
        FunctionType::get(voidTy, {ptr, ptr, ptr, i32, i64, i64, i64, i64}, false));
    FunctionCallee scanHook = module.getOrInsertFunction(
        cpu::kCheckScanHookName,
        FunctionType::get(
            voidTy, {ptr, ptr, ptr, i64, ptr, ptr, ptr, ptr, ptr, i64, i64, i64, i64, i64, i64},
            false));
    for (FunctionCallee hook : {failHook, scanHook})
        if (auto* f = dyn_cast<Function>(hook.getCallee())) {
            f->addFnAttr(Attribute::Cold);
            f->setDoesNotThrow();
        }
    std::map<Function*, std::vector<CallInst*>> perFunction;
    for (User* u : flush->users())
        if (auto* c = dyn_cast<CallInst>(u))
            perFunction[c->getFunction()].push_back(c);
    for (auto& [w, calls] : perFunction) {
        assert(w->arg_size() == 2 && "flushes are only left in work-group functions");
        DeferredLowering(*w, failHook, scanHook).run(calls, flush);
    }
    if (flush->use_empty())
        flush->eraseFromParent();
}

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
    FunctionCallee flush = module.getOrInsertFunction(
        kFlushName,
        FunctionType::get(Type::getVoidTy(ctx), {ptr, ptr, i32, i64, i64, i64, i64}, false));
    if (auto* f = dyn_cast<Function>(flush.getCallee())) {
        f->setDoesNotThrow();
        f->setWillReturn();
        f->setOnlyAccessesInaccessibleMemory();
    }
    std::string notes;
    for (Function* k : kernelsOf(module)) {
        // The names table is made once its size is known; its uses point at a stand-in first.
        // Address space 0 (spir's default for globals is 1): the hook takes a host pointer.
        auto* slot = new GlobalVariable(module, Type::getInt8Ty(ctx), true,
                                        GlobalValue::ExternalLinkage, nullptr, "__duet.chk.names",
                                        nullptr, GlobalValue::NotThreadLocal, 0u);
        auto* sitesSlot = new GlobalVariable(
            module, Type::getInt8Ty(ctx), true, GlobalValue::ExternalLinkage, nullptr,
            "__duet.chk.sites", nullptr, GlobalValue::NotThreadLocal, 0u);
        CpuCheckTarget target(*k, bound, fail, globalId, flush, slot, sitesSlot);
        const KernelCheckCounts counts = rt::insertBoundsChecks(*k, target);
        target.finish(*k);
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
            // At the function's entry: the same for the whole work-group, and a load in a
            // conditional block (a check under `if (i < n)`) would stay in the work-item loop, an
            // access the loop vectoriser cannot prove per work-item.
            IRBuilder<> b(&*w->getEntryBlock().getFirstInsertionPt());
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
