// Work-item loops holding a loop whose trip count differs between work-items, linearised per
// chunk of V work-items (one vector) so that the loop vectoriser widens them (issue 15).
//
// Before:  for lx: { A; while (cond) { C }; B }          (A and B any acyclic code, with ifs)
// After:   for c in 0, V, 2V ... < n:
//              for l < V: lx = c + l; if (lx < n) { A; active[l] = reached C } else active[l] = 0
//              do { any = 0; for l < V: if (active[l]) { one iteration of C;
//                                                        active[l] = it loops again }
//                                       any |= active[l] } while (any)
//              for l < V: if (entered[l]) B
// The three lane loops are work-item loops of trip count V, declared parallel and vectorised V
// wide. Values crossing from one piece to another go through per-lane arrays ([V x T] allocas)
// unless they are a pure function of the local id and values from outside the loop, which are
// computed again where used (so B's `out[row]` stays a consecutive store).
#include "devices/cpu/jit/work_item_loops.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/IR/Dominators.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <cstdlib>
#include <functional>

namespace duet::rt::wg {

using namespace llvm;

namespace {

enum Piece : unsigned { kBefore = 1, kInner = 2, kAfter = 4 };

/// One work-item loop to linearise, as analysed before anything changes.
struct Plan {
    Loop* outer = nullptr;
    Loop* inner = nullptr;
    BasicBlock *header = nullptr, *latch = nullptr, *preheader = nullptr, *exit = nullptr;
    BasicBlock* innerHeader = nullptr;
    SmallVector<BasicBlock*, 4> innerExits; ///< piece kAfter starts at each
    PHINode* lx = nullptr;
    /// Other inductions of the work-item loop (a pointer or a narrower index advancing with the
    /// local id): phi, start and step, the last two expanded in the preheader.
    struct Induction {
        PHINode* phi;
        Value *start, *step;
    };
    std::vector<Induction> inductions;
    Value* tripCount = nullptr;             ///< work-items in the loop, expanded in the preheader
    DenseMap<BasicBlock*, unsigned> pieces; ///< Piece bits of each block of the outer loop
    unsigned lanes = 0;
};

/// Blocks of `outer` reachable from `from` without taking the latch's branch or entering `stop`.
void reach(BasicBlock* from, const Loop& outer, BasicBlock* latch, BasicBlock* stop, unsigned bit,
           DenseMap<BasicBlock*, unsigned>& pieces) {
    SmallVector<BasicBlock*, 16> work{from};
    SmallPtrSet<BasicBlock*, 32> seen{from};
    while (!work.empty()) {
        BasicBlock* bb = work.pop_back_val();
        pieces[bb] |= bit;
        if (bb == latch)
            continue;
        for (BasicBlock* s : successors(bb))
            if (s != stop && outer.contains(s) && seen.insert(s).second)
                work.push_back(s);
    }
}

/// Lanes per chunk: the function's vectors of 32-bit values, or of 64-bit ones where the loop
/// loads or stores doubles or 64-bit integers (then one vector per lane loop still).
unsigned lanesFor(const Function& f, const Loop& outer) {
    unsigned bits = 0;
    f.getFnAttribute("prefer-vector-width").getValueAsString().getAsInteger(10, bits);
    unsigned widest = 32;
    for (BasicBlock* bb : outer.blocks())
        for (Instruction& i : *bb) {
            Type* t = isa<StoreInst>(i)  ? cast<StoreInst>(i).getValueOperand()->getType()
                      : isa<LoadInst>(i) ? i.getType()
                                         : nullptr;
            if (t && !t->isPointerTy() && t->getScalarSizeInBits() > widest)
                widest = t->getScalarSizeInBits();
        }
    return bits >= 128 ? bits / widest : 0;
}

/// Whether gathers would cost more than the loop's arithmetic gains: each memory access of the
/// inner loop becomes a gather or scatter over the lanes (the lanes' addresses differ), and on
/// the Zen 5 host that measured it SHOC Spmv's CSR-scalar loop (3 accesses, 1 fused
/// multiply-add an iteration) ran 2x slower linearised, a Mandelbrot escape loop (no access,
/// 11 floating-point operations) 6.7x faster (runtime/devices/cpu/README.md). Empty: linearise.
std::string gatherBound(const Loop& inner) {
    unsigned accesses = 0, flops = 0;
    for (BasicBlock* bb : inner.blocks())
        for (Instruction& i : *bb) {
            if (isa<LoadInst, StoreInst>(i))
                ++accesses;
            else if (i.getType()->isFPOrFPVectorTy() || isa<FCmpInst>(i))
                flops += isa<IntrinsicInst>(i) &&
                                 cast<IntrinsicInst>(i).getIntrinsicID() == Intrinsic::fmuladd
                             ? 2
                             : 1;
        }
    if (accesses == 0 || flops >= 4 * accesses)
        return {};
    return "its loop's " + std::to_string(accesses) +
           (accesses == 1 ? " memory access" : " memory accesses") +
           " an iteration would be gathers outweighing its " + std::to_string(flops) +
           " floating-point operations (DUET_CPU_DIVERGENT_LOOPS=all linearises it anyway)";
}

/// The reason `outer` cannot be linearised, empty when `p` is filled in and it can.
std::string plan(Loop& outer, ScalarEvolution& se, Plan& p) {
    if (outer.getSubLoops().size() != 1)
        return "it holds several loops";
    Loop* inner = outer.getSubLoops().front();
    if (!inner->isInnermost())
        return "its loop holds a loop of its own";
    if (std::string why = whyNotParallel(outer); !why.empty())
        return why;
    const SCEV* innerTrips = se.getBackedgeTakenCount(inner);
    if (!isa<SCEVCouldNotCompute>(innerTrips) && se.isLoopInvariant(innerTrips, &outer))
        return "its loop runs equally often in every work-item";
    p.outer = &outer;
    p.inner = inner;
    p.header = outer.getHeader();
    p.latch = outer.getLoopLatch();
    p.preheader = outer.getLoopPreheader();
    p.exit = outer.getExitBlock();
    p.innerHeader = inner->getHeader();
    inner->getUniqueExitBlocks(p.innerExits);
    if (p.innerExits.empty() || p.innerExits.size() > 8)
        return "its loop has no exit or more than 8";
    if (!inner->getLoopPreheader() || !inner->getLoopLatch() || !inner->hasDedicatedExits())
        return "its loop is not in simplified form";
    if (!p.latch || !p.preheader || !p.exit || outer.getExitingBlock() != p.latch ||
        inner->contains(p.latch) || pred_size(p.header) != 2)
        return "the work-item loop is not in simplified form";
    std::vector<std::pair<PHINode*, const SCEVAddRecExpr*>> others;
    for (PHINode& phi : p.header->phis()) {
        auto* ar =
            se.isSCEVable(phi.getType()) ? dyn_cast<SCEVAddRecExpr>(se.getSCEV(&phi)) : nullptr;
        if (!ar || ar->getLoop() != &outer || !ar->isAffine() ||
            !se.isLoopInvariant(ar->getStart(), &outer) ||
            !se.isLoopInvariant(ar->getStepRecurrence(se), &outer))
            return "the work-item loop carries values between work-items";
        if (!p.lx && ar->getStart()->isZero() && ar->getStepRecurrence(se)->isOne())
            p.lx = &phi;
        else
            others.push_back({&phi, ar});
    }
    const SCEV* trips = se.getBackedgeTakenCount(&outer);
    if (!p.lx || isa<SCEVCouldNotCompute>(trips) || trips->getType() != p.lx->getType())
        return "the work-item loop's trip count is not known";
    for (BasicBlock* bb : outer.blocks())
        for (Instruction& i : *bb) {
            if (isa<AllocaInst>(i) || isa<IndirectBrInst, CallBrInst, InvokeInst>(i))
                return "an instruction it cannot move (alloca, indirect branch)";
            for (User* u : i.users())
                if (!outer.contains(cast<Instruction>(u)))
                    return "values of the work-item loop are used after it";
        }
    reach(p.header, outer, p.latch, p.innerHeader, kBefore, p.pieces);
    for (BasicBlock* e : p.innerExits)
        reach(e, outer, p.latch, p.innerHeader, kAfter, p.pieces);
    for (BasicBlock* bb : inner->blocks())
        p.pieces[bb] |= kInner;
    for (BasicBlock* bb : outer.blocks())
        if (!p.pieces.count(bb) || (p.pieces[bb] & kInner && p.pieces[bb] != kInner))
            return "the code around its loop is not acyclic";
    for (BasicBlock* s : successors(p.latch))
        if (s != p.header && s != p.exit)
            return "the work-item loop is not in simplified form";
    for (auto& [bb, bits] : p.pieces)
        if (bits & kAfter && is_contained(successors(bb), p.innerHeader))
            return "the code after its loop goes back into it";
    if (divergentLoopsMode() == DivergentLoops::WhereCheaper)
        if (std::string why = gatherBound(*inner); !why.empty())
            return why;
    p.lanes = lanesFor(*p.header->getParent(), outer);
    if (p.lanes < 2)
        return "no vector width";
    SCEVExpander expander(se, p.header->getModule()->getDataLayout(), "wi.count");
    p.tripCount = expander.expandCodeFor(se.getAddExpr(trips, se.getOne(trips->getType())),
                                         p.lx->getType(), p.preheader->getTerminator());
    for (auto [phi, ar] : others) {
        const SCEV* step = ar->getStepRecurrence(se);
        p.inductions.push_back(
            {phi, expander.expandCodeFor(ar->getStart(), nullptr, p.preheader->getTerminator()),
             expander.expandCodeFor(step, step->getType(), p.preheader->getTerminator())});
    }
    return {};
}

/// Rewrites one planned work-item loop; `lanePh` and `lxPh` stand for the lane and the local id
/// until each piece is cloned.
class Linearise {
public:
    Linearise(Plan& p, Instruction* lanePh, Instruction* lxPh)
        : m_p(p), m_f(*p.header->getParent()), m_ctx(m_f.getContext()), m_lanePh(lanePh),
          m_lxPh(lxPh), m_i8(Type::getInt8Ty(m_ctx)), m_ty(p.lx->getType()) {}
    void run();

private:
    unsigned piecesOf(BasicBlock* bb) const { return m_p.pieces.lookup(bb); }
    AllocaInst* laneArray(Type* t, const Twine& name);
    Value* laneSlot(IRBuilder<>& b, AllocaInst* a);
    void demotePhis(BasicBlock* bb);
    bool rematerialisable(Value* v, unsigned depth) const;
    Value* rematerialise(Value* v, Instruction* before, DenseMap<Value*, Value*>& done);
    void splitCrossingValues();
    struct Lane {
        BasicBlock *head, *latch;
        PHINode* l;
        Value* lx;
    };
    Lane laneLoop(BasicBlock* pre, const Twine& name, Value* chunk);
    void closeLane(Lane& lane, BasicBlock* exit);
    /// Clones the blocks of piece `bit`; `redirect(original successor)` gives the block a
    /// cloned edge leaving the piece goes to. Returns the clones of `entries`.
    std::vector<BasicBlock*> clonePiece(unsigned bit, ArrayRef<BasicBlock*> entries,
                                        const Lane& lane,
                                        const std::function<BasicBlock*(BasicBlock*)>& redirect,
                                        BasicBlock* end);

    Plan& m_p;
    Function& m_f;
    LLVMContext& m_ctx;
    Instruction *m_lanePh, *m_lxPh;
    Type *m_i8, *m_ty;
};

AllocaInst* Linearise::laneArray(Type* t, const Twine& name) {
    BasicBlock& entry = m_f.getEntryBlock();
    IRBuilder<> b(&entry, entry.getFirstInsertionPt());
    AllocaInst* a = b.CreateAlloca(ArrayType::get(t, m_p.lanes), nullptr, name);
    a->setMetadata(kPerLaneMarker, MDNode::get(m_ctx, {}));
    return a;
}

Value* Linearise::laneSlot(IRBuilder<>& b, AllocaInst* a) {
    return b.CreateInBoundsGEP(a->getAllocatedType(), a, {b.getInt64(0), m_lanePh});
}

/// The phis of `bb` (the inner loop's header or exit: their incoming edges cross pieces)
/// become a per-lane array, stored at the end of each incoming block and loaded in `bb`.
void Linearise::demotePhis(BasicBlock* bb) {
    for (PHINode& phi : make_early_inc_range(bb->phis())) {
        AllocaInst* a = laneArray(phi.getType(), phi.getName() + ".lanes");
        for (unsigned i = 0; i < phi.getNumIncomingValues(); ++i) {
            IRBuilder<> b(phi.getIncomingBlock(i)->getTerminator());
            b.CreateStore(phi.getIncomingValue(i), laneSlot(b, a));
        }
        IRBuilder<> b(&*bb->getFirstInsertionPt());
        phi.replaceAllUsesWith(b.CreateLoad(phi.getType(), laneSlot(b, a), phi.getName()));
        phi.eraseFromParent();
    }
}

/// `v` is the local id, a value from outside the loop, or a pure, cheap function of them.
bool Linearise::rematerialisable(Value* v, unsigned depth) const {
    auto* i = dyn_cast<Instruction>(v);
    if (!i || i == m_lxPh || !m_p.outer->contains(i))
        return true;
    if (depth > 6 || !(isa<BinaryOperator, CastInst, GetElementPtrInst, CmpInst, SelectInst>(i)) ||
        !isSafeToSpeculativelyExecute(i))
        return false;
    for (Value* op : i->operands())
        if (!rematerialisable(op, depth + 1))
            return false;
    return true;
}

Value* Linearise::rematerialise(Value* v, Instruction* before, DenseMap<Value*, Value*>& done) {
    auto* i = dyn_cast<Instruction>(v);
    if (!i || i == m_lxPh || !m_p.outer->contains(i))
        return v;
    if (Value* c = done.lookup(v))
        return c;
    Instruction* c = i->clone();
    for (Use& op : c->operands())
        op.set(rematerialise(op.get(), before, done));
    c->insertBefore(before);
    c->setName(i->getName() + ".again");
    done[v] = c;
    return c;
}

/// Values defined in one piece and used in another: computed again there, or through a
/// per-lane array (stored after the definition, loaded before the use).
void Linearise::splitCrossingValues() {
    std::vector<std::pair<Instruction*, Use*>> crossing;
    for (BasicBlock* bb : m_p.outer->blocks())
        for (Instruction& i : *bb)
            for (Use& u : i.uses()) {
                auto* user = cast<Instruction>(u.getUser());
                BasicBlock* at = isa<PHINode>(user) ? cast<PHINode>(user)->getIncomingBlock(u)
                                                    : user->getParent();
                if (piecesOf(at) & ~piecesOf(bb))
                    crossing.push_back({&i, &u});
            }
    DenseMap<Instruction*, AllocaInst*> arrays;
    for (auto [def, use] : crossing) {
        auto* user = cast<Instruction>(use->getUser());
        Instruction* at = isa<PHINode>(user)
                              ? cast<PHINode>(user)->getIncomingBlock(*use)->getTerminator()
                              : user;
        if (rematerialisable(def, 0)) {
            DenseMap<Value*, Value*> done;
            use->set(rematerialise(def, at, done));
            continue;
        }
        AllocaInst*& a = arrays[def];
        if (!a) {
            a = laneArray(def->getType(), def->getName() + ".lanes");
            IRBuilder<> b(isa<PHINode>(def) ? &*def->getParent()->getFirstInsertionPt()
                                            : def->getNextNode());
            b.CreateStore(def, laneSlot(b, a));
        }
        IRBuilder<> b(at);
        use->set(b.CreateLoad(def->getType(), laneSlot(b, a), def->getName() + ".reload"));
    }
}

/// A lane loop's head after `pre` (l from 0, lx = chunk + l); closed by closeLane.
Linearise::Lane Linearise::laneLoop(BasicBlock* pre, const Twine& name, Value* chunk) {
    Lane lane;
    lane.head = BasicBlock::Create(m_ctx, m_p.header->getName() + name, &m_f);
    lane.latch = BasicBlock::Create(m_ctx, m_p.header->getName() + name + ".next", &m_f);
    IRBuilder<> b(lane.head);
    lane.l = b.CreatePHI(b.getInt64Ty(), 2, "lane");
    lane.l->addIncoming(b.getInt64(0), pre);
    lane.lx = b.CreateAdd(chunk, b.CreateZExtOrTrunc(lane.l, m_ty), "lx");
    return lane;
}

void Linearise::closeLane(Lane& lane, BasicBlock* exit) {
    IRBuilder<> b(lane.latch);
    Value* next = b.CreateAdd(lane.l, b.getInt64(1), "lane.next", true, true);
    BranchInst* br = b.CreateCondBr(b.CreateICmpULT(next, b.getInt64(m_p.lanes)), lane.head, exit);
    lane.l->addIncoming(next, lane.latch);
    markWorkItemLoop(br, true, m_p.lanes);
}

std::vector<BasicBlock*>
Linearise::clonePiece(unsigned bit, ArrayRef<BasicBlock*> entries, const Lane& lane,
                      const std::function<BasicBlock*(BasicBlock*)>& redirect, BasicBlock* end) {
    ValueToValueMapTy vmap;
    std::vector<std::pair<BasicBlock*, BasicBlock*>> clones;
    const char* suffix = bit == kBefore ? ".pre" : bit == kInner ? ".loop" : ".post";
    for (BasicBlock& bb : m_f)
        if (piecesOf(&bb) & bit)
            clones.push_back({&bb, nullptr});
    for (auto& [bb, c] : clones) {
        c = CloneBasicBlock(bb, vmap, suffix, &m_f);
        vmap[bb] = c;
        for (PHINode& phi : c->phis())
            for (int i = int(phi.getNumIncomingValues()) - 1; i >= 0; --i)
                if (!(piecesOf(phi.getIncomingBlock(unsigned(i))) & bit))
                    phi.removeIncomingValue(unsigned(i), false);
    }
    for (auto& [bb, c] : clones) {
        Instruction* term = c->getTerminator();
        term->setMetadata(LLVMContext::MD_loop, nullptr);
        if (bb == m_p.latch) { // the end of a work-item's turn
            term->eraseFromParent();
            BranchInst::Create(end, c);
            continue;
        }
        for (unsigned s = 0; s < term->getNumSuccessors(); ++s)
            if (BasicBlock* to = term->getSuccessor(s);
                !(piecesOf(to) & bit) || to == m_p.innerHeader)
                term->setSuccessor(s, redirect(to));
    }
    vmap[m_lanePh] = lane.l;
    vmap[m_lxPh] = lane.lx;
    for (auto& [bb, c] : clones)
        for (Instruction& i : *c)
            RemapInstruction(&i, vmap, RF_NoModuleLevelChanges | RF_IgnoreMissingLocals);
    std::vector<BasicBlock*> out;
    for (BasicBlock* e : entries)
        out.push_back(cast<BasicBlock>(vmap[e]));
    return out;
}

void Linearise::run() {
    // m_lxPh stands in for the local id while the pieces are cut out (a call of an undefined
    // function, erased by the pass once run() returns); each piece maps it to its lane's id.
    // Other inductions: start + step * local id, computed again in each piece.
    for (const Plan::Induction& ind : m_p.inductions) {
        IRBuilder<> b(&*m_p.header->getFirstInsertionPt());
        Value* k = b.CreateSExtOrTrunc(m_lxPh, ind.step->getType());
        Value* v = ind.phi->getType()->isPointerTy()
                       ? b.CreateGEP(b.getInt8Ty(), ind.start, b.CreateMul(ind.step, k))
                       : b.CreateAdd(ind.start, b.CreateMul(ind.step, k));
        ind.phi->replaceAllUsesWith(v);
        ind.phi->eraseFromParent();
    }
    m_p.lx->replaceAllUsesWith(m_lxPh);
    m_p.lx->eraseFromParent();
    demotePhis(m_p.innerHeader);
    for (BasicBlock* e : m_p.innerExits)
        demotePhis(e);
    splitCrossingValues();
    AllocaInst* active = laneArray(m_i8, "active.lanes");
    AllocaInst* entered = laneArray(m_i8, "entered.lanes");
    const std::string base = m_p.header->getName().str();

    // The loop over chunks of `lanes` work-items.
    BasicBlock* chunkHead = BasicBlock::Create(m_ctx, base + ".chunk", &m_f);
    BasicBlock* chunkLatch = BasicBlock::Create(m_ctx, base + ".chunk.next", &m_f);
    IRBuilder<> b(chunkHead);
    PHINode* chunk = b.CreatePHI(m_ty, 2, "chunk");
    chunk->addIncoming(ConstantInt::get(m_ty, 0), m_p.preheader);

    // Before: each work-item up to its loop; active[l] = entered[l] = it reached the loop.
    Lane pre = laneLoop(chunkHead, ".lanes.pre", chunk);
    b.CreateBr(pre.head);
    BasicBlock* enter = BasicBlock::Create(m_ctx, base + ".enter", &m_f);
    BranchInst::Create(pre.latch, enter);
    BasicBlock* preBody =
        clonePiece(kBefore, {m_p.header}, pre, [&](BasicBlock*) { return enter; }, pre.latch)[0];
    b.SetInsertPoint(pre.head);
    b.CreateCondBr(b.CreateICmpULT(pre.lx, m_p.tripCount), preBody, pre.latch);
    b.SetInsertPoint(pre.latch);
    PHINode* flag = b.CreatePHI(m_i8, 4, "reached");
    for (BasicBlock* from : predecessors(pre.latch))
        flag->addIncoming(b.getInt8(from == enter ? 1 : 0), from);
    b.CreateStore(flag,
                  b.CreateInBoundsGEP(active->getAllocatedType(), active, {b.getInt64(0), pre.l}));
    b.CreateStore(
        flag, b.CreateInBoundsGEP(entered->getAllocatedType(), entered, {b.getInt64(0), pre.l}));

    // The loop: one iteration per active lane, until none is.
    BasicBlock* doHead = BasicBlock::Create(m_ctx, base + ".rounds", &m_f);
    BasicBlock* doLatch = BasicBlock::Create(m_ctx, base + ".rounds.next", &m_f);
    BasicBlock* preExit = BasicBlock::Create(m_ctx, base + ".lanes.pre.done", &m_f);
    BranchInst::Create(doHead, preExit);
    closeLane(pre, preExit);
    Lane loop = laneLoop(doHead, ".lanes.loop", chunk);
    BranchInst::Create(loop.head, doHead);
    b.SetInsertPoint(loop.head);
    PHINode* any = b.CreatePHI(m_i8, 2, "any");
    any->addIncoming(b.getInt8(0), doHead);
    Value* on = b.CreateLoad(
        m_i8, b.CreateInBoundsGEP(active->getAllocatedType(), active, {b.getInt64(0), loop.l}));
    // entered[l] becomes 1 + the exit the lane leaves by.
    Value* how = b.CreateLoad(
        m_i8, b.CreateInBoundsGEP(entered->getAllocatedType(), entered, {b.getInt64(0), loop.l}));
    BasicBlock* again = BasicBlock::Create(m_ctx, base + ".again", &m_f);
    BranchInst::Create(loop.latch, again);
    DenseMap<BasicBlock*, BasicBlock*> stops;
    DenseMap<BasicBlock*, unsigned> exitIndex;
    for (BasicBlock* e : m_p.innerExits) {
        exitIndex[e] = unsigned(stops.size()) + 1;
        stops[e] = BasicBlock::Create(m_ctx, base + ".stop", &m_f);
        BranchInst::Create(loop.latch, stops[e]);
    }
    BasicBlock* loopBody = clonePiece(
        kInner, {m_p.innerHeader}, loop,
        [&](BasicBlock* to) { return to == m_p.innerHeader ? again : stops.lookup(to); },
        loop.latch)[0];
    b.CreateCondBr(b.CreateICmpNE(on, b.getInt8(0)), loopBody, loop.latch);
    b.SetInsertPoint(loop.latch);
    PHINode* still = b.CreatePHI(m_i8, 3, "still");
    PHINode* exitBy = b.CreatePHI(m_i8, 3, "exit.by");
    for (BasicBlock* from : predecessors(loop.latch)) {
        still->addIncoming(b.getInt8(from == again ? 1 : 0), from);
        unsigned k = 0;
        for (auto& [e, stop] : stops)
            if (stop == from)
                k = exitIndex[e];
        exitBy->addIncoming(k ? b.getInt8(uint8_t(k)) : how, from);
    }
    b.CreateStore(still,
                  b.CreateInBoundsGEP(active->getAllocatedType(), active, {b.getInt64(0), loop.l}));
    b.CreateStore(
        exitBy, b.CreateInBoundsGEP(entered->getAllocatedType(), entered, {b.getInt64(0), loop.l}));
    Value* anyNext = b.CreateOr(any, still, "any.next");
    any->addIncoming(anyNext, loop.latch);
    closeLane(loop, doLatch);
    BasicBlock* postPre = BasicBlock::Create(m_ctx, base + ".lanes.post.start", &m_f);
    b.SetInsertPoint(doLatch);
    b.CreateCondBr(b.CreateICmpNE(anyNext, b.getInt8(0)), doHead, postPre);

    // After: each work-item that entered the loop, from its exit to the end of its turn.
    Lane post = laneLoop(postPre, ".lanes.post", chunk);
    BranchInst::Create(post.head, postPre);
    std::vector<BasicBlock*> postBodies = clonePiece(
        kAfter, m_p.innerExits, post, [&](BasicBlock*) -> BasicBlock* { return nullptr; },
        post.latch);
    b.SetInsertPoint(post.head);
    Value* was = b.CreateLoad(
        m_i8, b.CreateInBoundsGEP(entered->getAllocatedType(), entered, {b.getInt64(0), post.l}));
    // The exit each lane left by (1, 2 ...; 0: it never entered the loop).
    for (size_t k = 0; k < postBodies.size(); ++k) {
        BasicBlock* next = k + 1 < postBodies.size()
                               ? BasicBlock::Create(m_ctx, base + ".exit.test", &m_f)
                               : post.latch;
        b.CreateCondBr(b.CreateICmpEQ(was, b.getInt8(uint8_t(k + 1))), postBodies[k], next);
        b.SetInsertPoint(next);
    }
    closeLane(post, chunkLatch);
    b.SetInsertPoint(chunkLatch);
    Value* nextChunk = b.CreateAdd(chunk, ConstantInt::get(m_ty, m_p.lanes), "chunk.next");
    b.CreateCondBr(b.CreateICmpULT(nextChunk, m_p.tripCount), chunkHead, m_p.exit);
    chunk->addIncoming(nextChunk, chunkLatch);

    // The original loop goes; its preheader and exit join the chunk loop.
    m_p.preheader->getTerminator()->replaceSuccessorWith(m_p.header, chunkHead);
    m_p.exit->replacePhiUsesWith(m_p.latch, chunkLatch);
    std::vector<BasicBlock*> old(m_p.outer->blocks().begin(), m_p.outer->blocks().end());
    for (BasicBlock* bb : old)
        bb->dropAllReferences();
    for (BasicBlock* bb : old)
        bb->eraseFromParent();
}

} // namespace

DivergentLoops divergentLoopsMode() {
    const char* env = std::getenv("DUET_CPU_DIVERGENT_LOOPS");
    if (env && env[0] == '0')
        return DivergentLoops::Off;
    if (env && std::string(env) == "all")
        return DivergentLoops::All;
    return DivergentLoops::WhereCheaper;
}

bool divergentLoopsEnabled() {
    return divergentLoopsMode() != DivergentLoops::Off;
}

PreservedAnalyses LinearisedDivergentLoops::run(Function& f, FunctionAnalysisManager& fam) {
    LoopInfo& li = fam.getResult<LoopAnalysis>(f);
    ScalarEvolution& se = fam.getResult<ScalarEvolutionAnalysis>(f);
    DominatorTree& dt = fam.getResult<DominatorTreeAnalysis>(f);
    AssumptionCache& ac = fam.getResult<AssumptionAnalysis>(f);
    std::vector<Plan> plans;
    bool simplified = false;
    for (Loop* loop : li.getLoopsInPreorder()) {
        if (loop->isInnermost() ||
            !isWorkItemLoopLatch(loop->getLoopLatch() ? loop->getLoopLatch()->getTerminator()
                                                      : nullptr))
            continue;
        // Preheaders and dedicated exits, as the loop vectoriser would give them.
        simplified |= simplifyLoop(loop, &dt, &li, &se, &ac, nullptr, false);
        Plan p;
        std::string why = plan(*loop, se, p);
        if (!why.empty()) {
            if (report)
                report->note(loop->getHeader(), "not linearised: " + why);
            continue;
        }
        if (report)
            report->note(loop->getHeader(), "inner loop linearised, " + std::to_string(p.lanes) +
                                                " work-items a chunk");
        plans.push_back(std::move(p));
    }
    if (plans.empty())
        return simplified ? PreservedAnalyses::none() : PreservedAnalyses::all();
    Module& m = *f.getParent();
    for (Plan& p : plans) {
        FunctionCallee ph = m.getOrInsertFunction("duet.divergent.placeholder", p.lx->getType());
        IRBuilder<> b(p.preheader->getTerminator());
        auto* lanePh = cast<Instruction>(b.CreateCall(
            m.getOrInsertFunction("duet.divergent.lane", b.getInt64Ty()), {}, "lane.ph"));
        auto* lxPh = cast<Instruction>(b.CreateCall(ph, {}, "lx.ph"));
        Linearise(p, lanePh, lxPh).run();
        lanePh->eraseFromParent();
        lxPh->eraseFromParent();
    }
    for (const char* name : {"duet.divergent.placeholder", "duet.divergent.lane"})
        if (Function* d = m.getFunction(name); d && d->use_empty())
            d->eraseFromParent();
    return PreservedAnalyses::none();
}

PreservedAnalyses PerLaneArraysInRegisters::run(Function& f, FunctionAnalysisManager& fam) {
    if (f.isDeclaration())
        return PreservedAnalyses::all();
    const DataLayout& dl = f.getParent()->getDataLayout();
    bool changed = false;
    for (Instruction& i : f.getEntryBlock()) {
        auto* a = dyn_cast<AllocaInst>(&i);
        if (!a || !a->getMetadata(kPerLaneMarker))
            continue;
        const TypeSize size = dl.getTypeAllocSize(a->getAllocatedType());
        for (User* u : make_early_inc_range(a->users())) {
            auto* call = dyn_cast<IntrinsicInst>(u);
            if (!call)
                continue;
            const bool store = call->getIntrinsicID() == Intrinsic::masked_store;
            if (!store && call->getIntrinsicID() != Intrinsic::masked_load)
                continue;
            Type* ty = store ? call->getArgOperand(0)->getType() : call->getType();
            Value* mask = call->getArgOperand(store ? 3 : 2);
            if (call->getArgOperand(store ? 1 : 0) != a || dl.getTypeStoreSize(ty) != size)
                continue; // not the whole array
            IRBuilder<> b(call);
            Value* old = b.CreateAlignedLoad(ty, a, a->getAlign());
            if (store) {
                b.CreateAlignedStore(b.CreateSelect(mask, call->getArgOperand(0), old), a,
                                     a->getAlign());
            } else {
                Value* pass = call->getArgOperand(3);
                call->replaceAllUsesWith(
                    isa<PoisonValue, UndefValue>(pass) ? old : b.CreateSelect(mask, old, pass));
            }
            call->eraseFromParent();
            changed = true;
        }
    }
    if (!changed)
        return PreservedAnalyses::all();
    fam.invalidate(f, PreservedAnalyses::none());
    SROAPass(SROAOptions::PreserveCFG).run(f, fam);
    return PreservedAnalyses::none();
}

} // namespace duet::rt::wg
