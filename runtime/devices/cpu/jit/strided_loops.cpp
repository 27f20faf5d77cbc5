// Strided work-item loops (`for (t = lid; t < n; t += lsz)`) rewritten with a uniform trip
// count and a guarded body, so that the implicit loop barriers can split them into work-item
// loops.
#include "devices/cpu/jit/regions.hpp"
#include "devices/cpu/jit/work_item_loops.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <cstdlib>
#include <optional>

namespace duet::rt::wg {

using namespace llvm;

namespace {

/// A loop in the shape the rewrite handles, and what it needs to know about it.
struct StridedLoop {
    Loop* loop = nullptr;
    BasicBlock *header = nullptr, *latch = nullptr, *exit = nullptr, *pred = nullptr;
    PHINode* iv = nullptr; ///< t
    Value* step = nullptr; ///< uniform
    Value* bound = nullptr;
    CmpInst::Predicate pred_ = CmpInst::ICMP_ULT; ///< the loop goes on while `t pred bound`
    bool guarded = false;            ///< `guard` branches to the exit when `start pred bound` fails
    BasicBlock* guard = nullptr;     ///< `pred` or a block shortly before it
    BasicBlock* guardInto = nullptr; ///< the guard's successor towards the loop
};

/// True when `v` is a sum of uniform values and one local id through integer casts.
bool sumWithLocalId(Value* v, const Uniformity& u, const Placeholders& ph, int& ids,
                    unsigned depth = 0) {
    if (!u.isVarying(v))
        return true;
    if (depth > 8 || isa<AllocaInst>(v))
        return false;
    if (auto* call = dyn_cast<CallInst>(v)) {
        Function* f = call->getCalledFunction();
        ++ids;
        return f == ph.localId[0] || f == ph.localId[1] || f == ph.localId[2] || f == ph.linear;
    }
    if (isa<TruncInst, ZExtInst, SExtInst>(v))
        return sumWithLocalId(cast<Instruction>(v)->getOperand(0), u, ph, ids, depth + 1);
    if (auto* bin = dyn_cast<BinaryOperator>(v); bin && bin->getOpcode() == Instruction::Add)
        return sumWithLocalId(bin->getOperand(0), u, ph, ids, depth + 1) &&
               sumWithLocalId(bin->getOperand(1), u, ph, ids, depth + 1);
    return false;
}

/// `v`'s value for local id 0 where `v` is a sum of uniform values and one local id (through
/// integer casts): the smallest value over the work-items, computed before `at`. Null when `v`
/// has another shape.
Value* atLocalIdZero(Value* v, const Uniformity& u, const Placeholders& ph, Instruction* at,
                     bool& sawId, unsigned depth = 0) {
    if (!u.isVarying(v))
        return v;
    if (depth > 8 || isa<AllocaInst>(v))
        return nullptr;
    if (auto* call = dyn_cast<CallInst>(v)) {
        Function* f = call->getCalledFunction();
        if (!sawId &&
            (f == ph.localId[0] || f == ph.localId[1] || f == ph.localId[2] || f == ph.linear)) {
            sawId = true;
            return ConstantInt::get(v->getType(), 0);
        }
        return nullptr;
    }
    IRBuilder<> b(at);
    if (auto* cast = dyn_cast<CastInst>(v)) {
        if (!isa<TruncInst, ZExtInst, SExtInst>(cast))
            return nullptr;
        Value* op = atLocalIdZero(cast->getOperand(0), u, ph, at, sawId, depth + 1);
        return op ? b.CreateCast(cast->getOpcode(), op, cast->getType()) : nullptr;
    }
    if (auto* bin = dyn_cast<BinaryOperator>(v); bin && bin->getOpcode() == Instruction::Add) {
        Value* l = atLocalIdZero(bin->getOperand(0), u, ph, at, sawId, depth + 1);
        Value* r = l ? atLocalIdZero(bin->getOperand(1), u, ph, at, sawId, depth + 1) : nullptr;
        return r ? b.CreateAdd(l, r) : nullptr;
    }
    return nullptr;
}

/// Normalises `cond` (continue when true, else negate) to `lhs pred rhs`; false when it is not
/// an integer compare.
bool continueCondition(Value* cond, bool continueOnTrue, Value*& lhs, Value*& rhs,
                       CmpInst::Predicate& pred) {
    auto* cmp = dyn_cast<ICmpInst>(cond);
    if (!cmp)
        return false;
    pred = continueOnTrue ? cmp->getPredicate() : cmp->getInversePredicate();
    lhs = cmp->getOperand(0);
    rhs = cmp->getOperand(1);
    return true;
}

/// Makes `lhs pred rhs` read `x pred' other` with `x` first; false when `x` is neither side.
bool orient(Value* x, Value*& lhs, Value*& rhs, CmpInst::Predicate& pred) {
    if (lhs == x)
        return true;
    if (rhs != x)
        return false;
    std::swap(lhs, rhs);
    pred = CmpInst::getSwappedPredicate(pred);
    return true;
}

bool isIncreasingBound(CmpInst::Predicate p) {
    return p == CmpInst::ICMP_ULT || p == CmpInst::ICMP_SLT || p == CmpInst::ICMP_ULE ||
           p == CmpInst::ICMP_SLE;
}

std::optional<StridedLoop> match(Loop* loop, const Uniformity& u, const Placeholders& ph,
                                 const SmallPtrSetImpl<BasicBlock*>& barrierSet) {
    StridedLoop s;
    s.loop = loop;
    s.header = loop->getHeader();
    s.latch = loop->getLoopLatch();
    s.exit = loop->getExitBlock();
    s.pred = loop->getLoopPredecessor();
    if (!loop->isInnermost() || !s.latch || !s.exit || !s.pred ||
        loop->getExitingBlock() != s.latch)
        return std::nullopt;
    for (BasicBlock* bb : loop->blocks())
        if (barrierSet.contains(bb))
            return std::nullopt;
    auto* br = dyn_cast<BranchInst>(s.latch->getTerminator());
    if (!br || !br->isConditional())
        return std::nullopt;
    Value *lhs, *rhs;
    if (!continueCondition(br->getCondition(), br->getSuccessor(0) == s.header, lhs, rhs, s.pred_))
        return std::nullopt;
    // t.next = t + step, compared with a uniform bound the loop does not compute.
    for (PHINode& phi : s.header->phis()) {
        auto* next = dyn_cast<BinaryOperator>(phi.getIncomingValueForBlock(s.latch));
        if (!next || next->getOpcode() != Instruction::Add)
            continue;
        Value* step = next->getOperand(0) == &phi   ? next->getOperand(1)
                      : next->getOperand(1) == &phi ? next->getOperand(0)
                                                    : nullptr;
        Value *l = lhs, *r = rhs;
        CmpInst::Predicate p = s.pred_;
        if (!step || !orient(next, l, r, p))
            continue;
        s.iv = &phi;
        s.step = step;
        s.bound = r;
        s.pred_ = p;
        break;
    }
    if (!s.iv || !isIncreasingBound(s.pred_) || u.isVarying(s.step) || u.isVarying(s.bound))
        return std::nullopt;
    for (Value* v : {s.step, s.bound})
        if (auto* i = dyn_cast<Instruction>(v); i && loop->contains(i))
            return std::nullopt;
    Value* start = s.iv->getIncomingValueForBlock(s.pred);
    if (!u.isVarying(start))
        return std::nullopt; // already uniform: the loop barriers take it as it is
    int ids = 0;
    if (!sumWithLocalId(start, u, ph, ids) || ids != 1)
        return std::nullopt;
    // A guard before the loop (at most a few speculatable blocks before it) must test
    // `start pred bound`, or the same through integer casts of a local id (below 4096: the
    // casts are exact).
    BasicBlock* into = s.header;
    BasicBlock* at = s.pred;
    for (unsigned depth = 0; depth < 4 && at; ++depth) {
        auto* br = dyn_cast<BranchInst>(at->getTerminator());
        if (!br)
            return std::nullopt;
        if (br->isConditional()) {
            s.guard = at;
            s.guardInto = into;
            break;
        }
        for (Instruction& inst : *at)
            if (!inst.isTerminator() && !isSafeToSpeculativelyExecute(&inst))
                at = nullptr;
        if (!at)
            break;
        into = at;
        at = at->getSinglePredecessor();
    }
    if (s.guard) {
        auto* br = cast<BranchInst>(s.guard->getTerminator());
        BasicBlock* other =
            br->getSuccessor(0) == s.guardInto ? br->getSuccessor(1) : br->getSuccessor(0);
        Value *gl, *gr;
        CmpInst::Predicate gp;
        auto idCast = [&](Value* v) {
            Value* stripped = v;
            while (isa<TruncInst, ZExtInst, SExtInst>(stripped))
                stripped = cast<Instruction>(stripped)->getOperand(0);
            auto* call = dyn_cast<CallInst>(stripped);
            Function* f = call ? call->getCalledFunction() : nullptr;
            bool id = f && (f == ph.localId[0] || f == ph.localId[1] || f == ph.localId[2] ||
                            f == ph.linear);
            return id ? stripped : nullptr;
        };
        auto sameBound = [&](Value* a, Value* b) {
            auto* ca = dyn_cast<ConstantInt>(a);
            auto* cb = dyn_cast<ConstantInt>(b);
            return a == b || (ca && cb && !ca->isNegative() && !cb->isNegative() &&
                              ca->getZExtValue() == cb->getZExtValue());
        };
        bool ok =
            other == s.exit &&
            continueCondition(br->getCondition(), br->getSuccessor(0) == s.guardInto, gl, gr, gp);
        if (ok && !orient(start, gl, gr, gp)) {
            Value* id = idCast(start);
            ok = id && (idCast(gl) == id || idCast(gr) == id);
            if (ok && idCast(gr) == id) {
                std::swap(gl, gr);
                gp = CmpInst::getSwappedPredicate(gp);
            }
        }
        if (!ok || gp != s.pred_ || !sameBound(gr, s.bound))
            return std::nullopt;
        s.guarded = true;
    } else if (cast<BranchInst>(s.pred->getTerminator())->isConditional()) {
        return std::nullopt;
    }
    // The exit is the loop's alone (with the guard): a block of its own when it is not.
    SmallVector<BasicBlock*, 2> ours{s.latch};
    if (s.guarded)
        ours.push_back(s.guard);
    for (BasicBlock* p : predecessors(s.exit))
        if (!is_contained(ours, p)) {
            s.exit = SplitBlockPredecessors(s.exit, ours, ".strided");
            break;
        }
    if (!s.exit)
        return std::nullopt;
    // Values leave the loop only through the exit's phis, as a header phi's next value (with
    // the phi's start on the guard's edge) or a value from outside the loop.
    for (BasicBlock* bb : loop->blocks())
        for (Instruction& inst : *bb)
            for (User* user : inst.users()) {
                auto* ui = cast<Instruction>(user);
                if (loop->contains(ui))
                    continue;
                if (!isa<PHINode>(ui) || ui->getParent() != s.exit)
                    return std::nullopt;
            }
    for (PHINode& phi : s.exit->phis()) {
        Value* fromLoop = phi.getIncomingValueForBlock(s.latch);
        Value* fromGuard = s.guarded ? phi.getIncomingValueForBlock(s.guard) : nullptr;
        auto* def = dyn_cast<Instruction>(fromLoop);
        if (!def || !loop->contains(def)) {
            if (s.guarded && fromGuard != fromLoop)
                return std::nullopt;
            continue;
        }
        bool ok = false;
        for (PHINode& hp : s.header->phis())
            if (hp.getIncomingValueForBlock(s.latch) == fromLoop &&
                (!s.guarded || hp.getIncomingValueForBlock(s.pred) == fromGuard))
                ok = true;
        if (!ok)
            return std::nullopt;
    }
    return s;
}

/// The rewrite: a new header tests `t pred bound` (this work-item still has an iteration) and
/// skips the body when not; a new latch merges the header phis' values and loops while
/// `base pred bound`, base being t of local id 0, the work-item with the most iterations.
bool rewrite(StridedLoop& s, const Uniformity& u, const Placeholders& ph) {
    LLVMContext& ctx = s.header->getContext();
    Function* f = s.header->getParent();
    Value* start = s.iv->getIncomingValueForBlock(s.pred);
    bool sawId = false;
    Value* base0 = atLocalIdZero(start, u, ph, s.pred->getTerminator(), sawId);
    if (!base0 || !sawId)
        return false;
    BasicBlock* nh = BasicBlock::Create(ctx, "strided.head", f, s.header);
    BasicBlock* nl = BasicBlock::Create(ctx, "strided.latch", f, s.exit);
    IRBuilder<> hb(nh), lb(nl);
    std::vector<PHINode*> headerPhis;
    for (PHINode& phi : s.header->phis())
        headerPhis.push_back(&phi);
    PHINode* basePhi = hb.CreatePHI(start->getType(), 2, "strided.base");
    PHINode* ivNew = nullptr;
    PHINode* ivMerged = nullptr;
    DenseMap<Value*, PHINode*> mergedOfNext; ///< a header phi's next value -> its merged value
    for (PHINode* phi : headerPhis) {
        PHINode* carried = hb.CreatePHI(phi->getType(), 2, phi->getName() + ".carried");
        PHINode* merged = lb.CreatePHI(phi->getType(), 2, phi->getName() + ".merged");
        Value* next = phi->getIncomingValueForBlock(s.latch);
        carried->addIncoming(phi->getIncomingValueForBlock(s.pred), s.pred);
        carried->addIncoming(merged, nl);
        merged->addIncoming(carried, nh);
        merged->addIncoming(next == phi ? static_cast<Value*>(carried) : next, s.latch);
        mergedOfNext[next] = merged;
        if (phi == s.iv) {
            ivNew = carried;
            ivMerged = merged;
        }
        phi->replaceAllUsesWith(carried);
        phi->eraseFromParent();
    }
    // In the iterations a work-item runs, its t is its start plus the distance local id 0's t
    // has come (a work-item still active has run every iteration so far): a function of the
    // local ids plus a uniform offset, which the regions compute again where a barrier
    // separates a use from it, so the body's accesses at t stay consecutive across work-items.
    // The carried t, kept per work-item across the barriers, would be reloaded and make them
    // gathers. A work-item that is done stays done by this t too: it only grows (without
    // wrapping, as assumed above). The carried t remains for what the loop leaves with.
    // DUET_CPU_STRIDED_OFFSETS=0 keeps the carried t (for comparisons).
    const char* offsets = std::getenv("DUET_CPU_STRIDED_OFFSETS");
    Value* ivAt = ivNew;
    if (!(offsets && offsets[0] == '0')) {
        ivAt = hb.CreateAdd(start, hb.CreateSub(basePhi, base0, "strided.off"), "strided.t");
        for (Use& use : make_early_inc_range(ivNew->uses()))
            if (use.getUser() != ivMerged)
                use.set(ivAt);
    }
    Value* active = hb.CreateICmp(s.pred_, ivAt, s.bound, "strided.active");
    hb.CreateCondBr(active, s.header, nl)->setMetadata(kStridedBodyMarker, MDNode::get(ctx, {}));
    Value* baseNext = lb.CreateAdd(basePhi, s.step, "strided.base.next");
    lb.CreateCondBr(lb.CreateICmp(s.pred_, baseNext, s.bound), nh, s.exit);
    basePhi->addIncoming(base0, s.pred);
    basePhi->addIncoming(baseNext, nl);
    // The exit's phis: from the new latch, a header phi's merged value for its next value.
    for (PHINode& phi : s.exit->phis()) {
        if (s.guarded)
            phi.removeIncomingValue(s.guard, false);
        int i = phi.getBasicBlockIndex(s.latch);
        Value* v = phi.getIncomingValue(unsigned(i));
        if (auto it = mergedOfNext.find(v); it != mergedOfNext.end())
            v = it->second;
        phi.setIncomingBlock(unsigned(i), nl);
        phi.setIncomingValue(unsigned(i), v);
    }
    // The old latch goes on to the new one; the predecessor enters through the new header.
    Instruction* latchTerm = s.latch->getTerminator();
    BranchInst::Create(nl, latchTerm);
    latchTerm->eraseFromParent();
    if (s.guarded) {
        Instruction* guardTerm = s.guard->getTerminator();
        BranchInst::Create(s.guardInto, guardTerm);
        guardTerm->eraseFromParent();
    }
    Instruction* predTerm = s.pred->getTerminator();
    for (unsigned i = 0; i < predTerm->getNumSuccessors(); ++i)
        if (predTerm->getSuccessor(i) == s.header)
            predTerm->setSuccessor(i, nh);
    // Nothing leaves with t: the carried and merged t only feed each other.
    if (ivNew->hasOneUse() && ivMerged->hasOneUse() && ivMerged->user_back() == ivNew) {
        ivNew->replaceAllUsesWith(PoisonValue::get(ivNew->getType()));
        ivMerged->replaceAllUsesWith(PoisonValue::get(ivMerged->getType()));
        ivMerged->eraseFromParent();
        ivNew->eraseFromParent();
    }
    return true;
}

} // namespace

size_t makeStridedLoopsUniform(Function& w, BasicBlock* entry, const Placeholders& ph,
                               const std::vector<BasicBlock*>& barriers,
                               const SmallPtrSetImpl<BasicBlock*>& groupBarriers) {
    SmallPtrSet<BasicBlock*, 16> barrierSet(barriers.begin(), barriers.end());
    SmallPtrSet<BasicBlock*, 16> tried;
    size_t done = 0;
    // One loop at a time, each with the uniformity of the code as it is now: a rewrite changes
    // the blocks around its neighbours and adds values (a loop may start where another ended).
    for (unsigned round = 0; round < 64; ++round) {
        const Uniformity u = analyseUniformity(w, entry, ph, groupBarriers);
        DominatorTree dt(w);
        LoopInfo li(dt);
        std::optional<StridedLoop> found;
        for (Loop* loop : li.getLoopsInPreorder()) {
            if (tried.contains(loop->getHeader()))
                continue;
            tried.insert(loop->getHeader());
            found = match(loop, u, ph, barrierSet);
            if (found)
                break;
        }
        if (!found)
            break;
        if (rewrite(*found, u, ph))
            ++done;
    }
    return done;
}

} // namespace duet::rt::wg
