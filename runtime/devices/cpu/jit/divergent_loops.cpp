// Work-item loops holding a loop whose trip count differs between work-items, linearised per
// chunk of V work-items (16: one or two vectors) so that the loop vectoriser widens them
// (issue 15).
//
// Before:  for lx: { A; while (cond) { C }; B }          (A and B any acyclic code, with ifs)
// After:   for c in 0, V, 2V ... < n:
//              for l < V: lx = c + l; if (lx < n) { A; state[l] = reached C ? at C : done }
//                         active[l] = state[l] == at C
//              do { any = 0; for l < V: if (active[l]) { one iteration of C;
//                                   active[l] = it loops again; if not, state[l] = its exit }
//                                       any |= active[l] } while (any)
//              for l < V: if (state[l] is an exit of C) { B from that exit; state[l] = done }
// Several loops one after another (A; C1; B1; C2; B2 ...: each B any acyclic code that may
// reach any later loop or skip it) get rounds and a lane loop after them each, in an order
// where code only leads to later loops; a lane's state says which loop it waits at, which exit
// it left one by, or that its turn is over. The lane loops are work-item loops of trip count V,
// declared parallel and vectorised V wide. Values crossing from one piece to another go through
// per-lane arrays ([V x T] allocas) unless they are a pure function of the local id and values from
// outside the loop, which are computed again where used (so B's `out[row]` stays a consecutive
// store).
#include "core/environment.hpp"
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
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <cstdlib>
#include <functional>

namespace duet::rt::wg {

using namespace llvm;

namespace {

/// Piece bits: the code before any loop is segment 0, the code after the i-th loop to run
/// segment i + 1 (blocks reached from several places are in several segments); the i-th loop
/// itself has a bit of its own.
unsigned segmentBit(unsigned segment) {
    return 1u << (2 * segment);
}
unsigned loopBit(unsigned i) {
    return 2u << (2 * i);
}
constexpr unsigned kMaxLoops = 8;

/// One work-item loop to linearise, as analysed before anything changes.
struct Plan {
    Loop* outer = nullptr;
    BasicBlock *header = nullptr, *latch = nullptr, *preheader = nullptr, *exit = nullptr;
    struct Inner {
        Loop* loop;
        BasicBlock* header;
        SmallVector<BasicBlock*, 4> exits; ///< the next segment starts at each
    };
    std::vector<Inner> inners; ///< in the order they run
    PHINode* lx = nullptr;
    /// Other inductions of the work-item loop (a pointer or a narrower index advancing with the
    /// local id): phi, start and step, the last two expanded in the preheader.
    struct Induction {
        PHINode* phi;
        Value *start, *step;
    };
    std::vector<Induction> inductions;
    Value* tripCount = nullptr;             ///< work-items in the loop, expanded in the preheader
    DenseMap<BasicBlock*, unsigned> pieces; ///< piece bits of each block of the outer loop
    unsigned lanes = 0;                     ///< work-items a chunk
    unsigned oneVector = 0;                 ///< work-items in one of the function's vectors
    bool isInnerHeader(BasicBlock* bb) const {
        return any_of(inners, [&](const Inner& in) { return in.header == bb; });
    }
};

/// Marks with `bit` the blocks of `outer` reachable from `from` without taking the latch's
/// branch or entering one of `stops` (the inner loops' headers); returns the stops it reaches.
SmallPtrSet<BasicBlock*, 8> reach(ArrayRef<BasicBlock*> from, const Loop& outer, BasicBlock* latch,
                                  const SmallPtrSetImpl<BasicBlock*>& stops, unsigned bit,
                                  DenseMap<BasicBlock*, unsigned>& pieces) {
    SmallVector<BasicBlock*, 16> work(from.begin(), from.end());
    SmallPtrSet<BasicBlock*, 32> seen(from.begin(), from.end());
    SmallPtrSet<BasicBlock*, 8> reached;
    while (!work.empty()) {
        BasicBlock* bb = work.pop_back_val();
        pieces[bb] |= bit;
        if (bb == latch)
            continue;
        for (BasicBlock* s : successors(bb)) {
            if (stops.contains(s))
                reached.insert(s);
            else if (outer.contains(s) && seen.insert(s).second)
                work.push_back(s);
        }
    }
    return reached;
}

/// Lanes per chunk: 16 work-items (8 where the loop loads or stores doubles or 64-bit
/// integers), two of the function's vectors where one holds fewer. A round's cost beyond the
/// loop's own work (which lanes go on, whether any does, the loop's branch) is then shared by 16
/// lanes, and a loop-carried chain (an escape loop's z = z^2 + c) has two independent vectors in
/// flight: with 256-bit vectors a Mandelbrot kernel ran 1.51x as fast (bench/README.md, session
/// 35), as fast as 16 lanes in one 512-bit vector. Not more than 16: a chunk wider than a
/// 16-wide group's row runs with lanes off (32 lanes at 512 bits: 0.65x). Groups whose rows
/// fit one vector get a copy of the loop at one vector a chunk (versionForShortRows).
/// DUET_CPU_DIVERGENT_TWO_VECTORS=0 keeps one vector a chunk (for comparisons).
struct Lanes {
    unsigned chunk = 0, oneVector = 0;
};
Lanes lanesFor(const Function& f, const Loop& outer) {
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
    if (bits < 128)
        return {};
    const unsigned one = bits / widest, target = 512 / widest;
    return {one < target && envSwitchOn("DUET_CPU_DIVERGENT_TWO_VECTORS") ? 2 * one : one, one};
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

/// Orders `p.inners` so that code only leads from a loop to later ones and marks every block's
/// pieces; the reason it cannot, empty when it can.
std::string orderLoops(Plan& p) {
    SmallPtrSet<BasicBlock*, 8> headers;
    for (const Plan::Inner& in : p.inners)
        headers.insert(in.header);
    // Which loop headers each segment reaches: from the work-item loop's header, from a loop's
    // exits (scratch piece bits; the real ones follow the order).
    DenseMap<BasicBlock*, unsigned> scratch;
    std::vector<SmallPtrSet<BasicBlock*, 8>> leadsTo;
    for (const Plan::Inner& in : p.inners)
        leadsTo.push_back(reach(in.exits, *p.outer, p.latch, headers, 1, scratch));
    // A loop runs once every loop whose code after it leads to it has run.
    std::vector<Plan::Inner> order;
    std::vector<bool> placed(p.inners.size(), false);
    while (order.size() < p.inners.size()) {
        bool progress = false;
        for (size_t i = 0; i < p.inners.size(); ++i) {
            if (placed[i])
                continue;
            bool ready = true;
            for (size_t j = 0; j < p.inners.size(); ++j)
                if (!placed[j] && leadsTo[j].contains(p.inners[i].header))
                    ready = false;
            if (ready) {
                placed[i] = progress = true;
                order.push_back(p.inners[i]);
            }
        }
        if (!progress)
            return p.inners.size() == 1 ? "the code after its loop goes back into it"
                                        : "the code after one of its loops goes back into it "
                                          "or an earlier one";
    }
    p.inners = std::move(order);
    reach({p.header}, *p.outer, p.latch, headers, segmentBit(0), p.pieces);
    for (unsigned i = 0; i < p.inners.size(); ++i) {
        reach(p.inners[i].exits, *p.outer, p.latch, headers, segmentBit(i + 1), p.pieces);
        for (BasicBlock* bb : p.inners[i].loop->blocks())
            p.pieces[bb] |= loopBit(i);
    }
    for (BasicBlock* bb : p.outer->blocks()) {
        const unsigned bits = p.pieces.lookup(bb);
        const bool inLoop =
            any_of(p.inners, [&](const Plan::Inner& in) { return in.loop->contains(bb); });
        if (!bits || (inLoop && llvm::popcount(bits) != 1))
            return p.inners.size() == 1 ? "the code around its loop is not acyclic"
                                        : "the code around its loops is not acyclic";
    }
    return {};
}

/// The reason `outer` cannot be linearised, empty when `p` is filled in and it can; `lanes`
/// overrides lanesFor's chunk when not 0.
std::string plan(Loop& outer, ScalarEvolution& se, Plan& p, unsigned lanes = 0) {
    if (outer.getSubLoops().size() > kMaxLoops)
        return "it holds more than " + std::to_string(kMaxLoops) + " loops";
    for (Loop* inner : outer.getSubLoops())
        if (!inner->isInnermost())
            return "its loop holds a loop of its own";
    if (std::string why = whyNotParallel(outer); !why.empty())
        return why;
    const bool several = outer.getSubLoops().size() > 1;
    for (Loop* inner : outer.getSubLoops()) {
        const SCEV* innerTrips = se.getBackedgeTakenCount(inner);
        if (!isa<SCEVCouldNotCompute>(innerTrips) && se.isLoopInvariant(innerTrips, &outer))
            return several ? "one of its loops runs equally often in every work-item"
                           : "its loop runs equally often in every work-item";
    }
    p.outer = &outer;
    p.header = outer.getHeader();
    p.latch = outer.getLoopLatch();
    p.preheader = outer.getLoopPreheader();
    p.exit = outer.getExitBlock();
    for (Loop* inner : outer.getSubLoops()) {
        Plan::Inner in{inner, inner->getHeader(), {}};
        inner->getUniqueExitBlocks(in.exits);
        if (in.exits.empty() || in.exits.size() > 8)
            return "its loop has no exit or more than 8";
        if (!inner->getLoopPreheader() || !inner->getLoopLatch() || !inner->hasDedicatedExits())
            return "its loop is not in simplified form";
        if (inner->contains(p.latch))
            return "the work-item loop is not in simplified form";
        p.inners.push_back(std::move(in));
    }
    if (!p.latch || !p.preheader || !p.exit || outer.getExitingBlock() != p.latch ||
        pred_size(p.header) != 2)
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
    if (std::string why = orderLoops(p); !why.empty())
        return why;
    for (BasicBlock* s : successors(p.latch))
        if (s != p.header && s != p.exit)
            return "the work-item loop is not in simplified form";
    if (divergentLoopsMode() == DivergentLoops::WhereCheaper)
        for (const Plan::Inner& in : p.inners)
            if (std::string why = gatherBound(*in.loop); !why.empty())
                return why;
    const Lanes l = lanesFor(*p.header->getParent(), outer);
    p.lanes = lanes ? lanes : l.chunk;
    p.oneVector = l.oneVector;
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
    Value* stateSlot(IRBuilder<>& b, Value* lane);
    /// A lane's state: 0 its turn is over (or it has none), atLoop(i) it waits at the i-th
    /// loop to run, leftBy(i, k) it left that loop by its k-th exit.
    uint8_t atLoop(unsigned i) const { return uint8_t(1 + i); }
    uint8_t leftBy(unsigned i, unsigned k) const { return uint8_t(1 + kMaxLoops + 8 * i + k); }
    BasicBlock* segment(unsigned seg, BasicBlock* from, Value* chunk);
    BasicBlock* rounds(unsigned i, BasicBlock* from, Value* chunk);
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
    AllocaInst* m_state = nullptr; ///< [V x i8]: each lane's state
    /// [V x i8]: 1 where the lane waits at the next loop to run (its state says so too; the
    /// rounds test this flag, which stays in a mask register, not the state).
    AllocaInst* m_active = nullptr;
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
    const char* suffix = bit == segmentBit(0) ? ".pre" : bit & 0xAAAAAAAAu ? ".loop" : ".post";
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
                !(piecesOf(to) & bit) || m_p.isInnerHeader(to))
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

Value* Linearise::stateSlot(IRBuilder<>& b, Value* lane) {
    return b.CreateInBoundsGEP(m_state->getAllocatedType(), m_state, {b.getInt64(0), lane});
}

/// The lane loop running segment `seg` (0: from the work-item loop's header; i + 1: from the
/// i-th loop's exits) for each lane whose state says it starts there, after `from` (which it
/// ends); returns the block after it, still without a terminator.
BasicBlock* Linearise::segment(unsigned seg, BasicBlock* from, Value* chunk) {
    const std::string base = m_p.header->getName().str();
    Lane lane = laneLoop(from, seg == 0 ? ".lanes.pre" : ".lanes.post", chunk);
    BranchInst::Create(lane.head, from);
    // Leaving the segment: for a loop (the lane waits there) or at the end of the turn.
    DenseMap<BasicBlock*, BasicBlock*> enter;
    DenseMap<BasicBlock*, uint8_t> enterState;
    for (unsigned i = 0; i < m_p.inners.size(); ++i) {
        BasicBlock* e = BasicBlock::Create(m_ctx, base + ".enter", &m_f);
        BranchInst::Create(lane.latch, e);
        enter[m_p.inners[i].header] = e;
        enterState[e] = atLoop(i);
    }
    BasicBlock* finished = BasicBlock::Create(m_ctx, base + ".finished", &m_f);
    BranchInst::Create(lane.latch, finished);
    SmallVector<BasicBlock*, 4> entries;
    if (seg == 0)
        entries.push_back(m_p.header);
    else
        entries.append(m_p.inners[seg - 1].exits.begin(), m_p.inners[seg - 1].exits.end());
    std::vector<BasicBlock*> bodies = clonePiece(
        segmentBit(seg), entries, lane, [&](BasicBlock* to) { return enter.lookup(to); }, finished);
    // Ways out the segment never takes go (no block without predecessors in a lane loop).
    for (auto& [header, e] : enter)
        if (pred_empty(e)) {
            enterState.erase(e);
            e->eraseFromParent();
        }
    if (pred_empty(finished)) {
        finished->eraseFromParent();
        finished = nullptr;
    }
    IRBuilder<> b(lane.head);
    Value* was = nullptr;
    if (seg == 0) {
        b.CreateCondBr(b.CreateICmpULT(lane.lx, m_p.tripCount), bodies[0], lane.latch);
    } else {
        // The exit the lane left the loop by, if it did now; otherwise it keeps its state.
        was = b.CreateLoad(m_i8, stateSlot(b, lane.l), "state");
        for (size_t k = 0; k < bodies.size(); ++k) {
            BasicBlock* next = k + 1 < bodies.size()
                                   ? BasicBlock::Create(m_ctx, base + ".exit.test", &m_f)
                                   : lane.latch;
            b.CreateCondBr(b.CreateICmpEQ(was, b.getInt8(leftBy(seg - 1, unsigned(k)))), bodies[k],
                           next);
            b.SetInsertPoint(next);
        }
    }
    b.SetInsertPoint(lane.latch);
    PHINode* state = b.CreatePHI(m_i8, 4, "state.next");
    for (BasicBlock* pred : predecessors(lane.latch)) {
        Value* v = was ? was : b.getInt8(0);
        if (finished && pred == finished)
            v = b.getInt8(0);
        else if (uint8_t at = enterState.lookup(pred))
            v = b.getInt8(at);
        state->addIncoming(v, pred);
    }
    b.CreateStore(state, stateSlot(b, lane.l));
    if (seg < m_p.inners.size())
        b.CreateStore(
            b.CreateZExt(b.CreateICmpEQ(state, b.getInt8(atLoop(seg))), m_i8),
            b.CreateInBoundsGEP(m_active->getAllocatedType(), m_active, {b.getInt64(0), lane.l}));
    BasicBlock* done =
        BasicBlock::Create(m_ctx, base + (seg == 0 ? ".lanes.pre.done" : ".lanes.post.done"), &m_f);
    closeLane(lane, done);
    return done;
}

/// Rounds of the i-th loop after `from` (which it ends): one iteration for each lane waiting
/// at it, until none is; returns the block after them, still without a terminator.
BasicBlock* Linearise::rounds(unsigned i, BasicBlock* from, Value* chunk) {
    const Plan::Inner& in = m_p.inners[i];
    const std::string base = m_p.header->getName().str();
    BasicBlock* doHead = BasicBlock::Create(m_ctx, base + ".rounds", &m_f);
    BasicBlock* doLatch = BasicBlock::Create(m_ctx, base + ".rounds.next", &m_f);
    BranchInst::Create(doHead, from);
    Lane loop = laneLoop(doHead, ".lanes.loop", chunk);
    BranchInst::Create(loop.head, doHead);
    // The phi goes with the lane's, before the lane's id laneLoop computed.
    IRBuilder<> b(loop.head, loop.head->getFirstInsertionPt());
    PHINode* any = b.CreatePHI(m_i8, 2, "any");
    any->addIncoming(b.getInt8(0), doHead);
    b.SetInsertPoint(loop.head);
    Value* activeSlot =
        b.CreateInBoundsGEP(m_active->getAllocatedType(), m_active, {b.getInt64(0), loop.l});
    Value* on = b.CreateLoad(m_i8, activeSlot, "active");
    Value* was = b.CreateLoad(m_i8, stateSlot(b, loop.l), "state");
    BasicBlock* again = BasicBlock::Create(m_ctx, base + ".again", &m_f);
    BranchInst::Create(loop.latch, again);
    DenseMap<BasicBlock*, BasicBlock*> stops;
    DenseMap<BasicBlock*, uint8_t> stopState;
    for (unsigned k = 0; k < in.exits.size(); ++k) {
        BasicBlock* stop = BasicBlock::Create(m_ctx, base + ".stop", &m_f);
        BranchInst::Create(loop.latch, stop);
        stops[in.exits[k]] = stop;
        stopState[stop] = leftBy(i, k);
    }
    BasicBlock* body = clonePiece(
        loopBit(i), {in.header}, loop,
        [&](BasicBlock* to) { return to == in.header ? again : stops.lookup(to); }, loop.latch)[0];
    b.CreateCondBr(b.CreateICmpNE(on, b.getInt8(0)), body, loop.latch);
    b.SetInsertPoint(loop.latch);
    PHINode* still = b.CreatePHI(m_i8, 3, "still");
    PHINode* state = b.CreatePHI(m_i8, 3, "state.next");
    for (BasicBlock* pred : predecessors(loop.latch)) {
        still->addIncoming(b.getInt8(pred == again ? 1 : 0), pred);
        // Lanes going on keep their state (at this loop), as do lanes not at it.
        uint8_t k = stopState.lookup(pred);
        state->addIncoming(k ? b.getInt8(k) : was, pred);
    }
    b.CreateStore(still, activeSlot);
    b.CreateStore(state, stateSlot(b, loop.l));
    Value* anyNext = b.CreateOr(any, still, "any.next");
    any->addIncoming(anyNext, loop.latch);
    closeLane(loop, doLatch);
    BasicBlock* after = BasicBlock::Create(m_ctx, base + ".lanes.post.start", &m_f);
    b.SetInsertPoint(doLatch);
    b.CreateCondBr(b.CreateICmpNE(anyNext, b.getInt8(0)), doHead, after);
    return after;
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
    for (const Plan::Inner& in : m_p.inners) {
        demotePhis(in.header);
        for (BasicBlock* e : in.exits)
            demotePhis(e);
    }
    splitCrossingValues();
    m_state = laneArray(m_i8, "state.lanes");
    m_active = laneArray(m_i8, "active.lanes");
    const std::string base = m_p.header->getName().str();

    // The loop over chunks of `lanes` work-items: the code before the loops, then each loop's
    // rounds and the code after it.
    BasicBlock* chunkHead = BasicBlock::Create(m_ctx, base + ".chunk", &m_f);
    BasicBlock* chunkLatch = BasicBlock::Create(m_ctx, base + ".chunk.next", &m_f);
    IRBuilder<> b(chunkHead);
    PHINode* chunk = b.CreatePHI(m_ty, 2, "chunk");
    chunk->addIncoming(ConstantInt::get(m_ty, 0), m_p.preheader);
    BasicBlock* at = segment(0, chunkHead, chunk);
    for (unsigned i = 0; i < m_p.inners.size(); ++i)
        at = segment(i + 1, rounds(i, at, chunk), chunk);
    BranchInst::Create(chunkLatch, at);
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

/// A planned loop whose chunk is two vectors, copied for groups whose rows (its trip count)
/// fit one vector: the preheader picks the copy when they do, which runs one vector a chunk
/// instead of leaving half of each chunk idle (8x8 groups at 256 bits: 0.82x as fast with 16
/// lanes, session 35). Returns the copy (in `li` and `dt`), null where the trip count is a
/// constant (the chunk then fits it) or the chunk is one vector already.
Loop* versionForShortRows(Plan& p, LoopInfo& li, DominatorTree& dt) {
    if (p.lanes <= p.oneVector || isa<Constant>(p.tripCount))
        return nullptr;
    BasicBlock* pre = p.preheader;
    BasicBlock* wide = SplitEdge(pre, p.header, &dt, &li);
    ValueToValueMapTy vmap;
    SmallVector<BasicBlock*, 32> blocks;
    Loop* narrow = cloneLoopWithPreheader(wide, pre, p.outer, vmap, ".short", &li, &dt, blocks);
    remapInstructionsInBlocks(blocks, vmap);
    auto* narrowLatch = cast<BasicBlock>(vmap[p.latch]);
    for (PHINode& phi : p.exit->phis()) // values from outside the loop (plan checked)
        phi.addIncoming(phi.getIncomingValueForBlock(p.latch), narrowLatch);
    IRBuilder<> b(pre->getTerminator());
    b.CreateCondBr(b.CreateICmpULE(p.tripCount,
                                   ConstantInt::get(p.tripCount->getType(), p.oneVector),
                                   "short.rows"),
                   cast<BasicBlock>(vmap[wide]), wide);
    pre->getTerminator()->eraseFromParent();
    dt.recalculate(*pre->getParent());
    return narrow;
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
        const unsigned chunk = p.lanes, one = p.oneVector;
        Loop* narrow = versionForShortRows(p, li, dt);
        if (narrow) {
            // Both copies planned again: the preheaders and exits changed.
            se.forgetLoop(loop);
            simplifyLoop(loop, &dt, &li, &se, &ac, nullptr, false);
            simplifyLoop(narrow, &dt, &li, &se, &ac, nullptr, false);
            p = Plan();
            Plan q;
            why = plan(*loop, se, p, chunk);
            if (why.empty())
                why = plan(*narrow, se, q, one);
            if (!why.empty()) { // both copies stay as they are: still the kernel's code
                if (report)
                    report->note(loop->getHeader(), "not linearised once copied: " + why);
                simplified = true;
                continue;
            }
            plans.push_back(std::move(q));
        }
        if (report)
            report->note(
                loop->getHeader(),
                (p.inners.size() == 1
                     ? std::string("inner loop linearised, ")
                     : std::to_string(p.inners.size()) + " inner loops linearised, ") +
                    std::to_string(p.lanes) + " work-items a chunk" +
                    (narrow ? " (" + std::to_string(one) + " where the group's rows fit one vector)"
                            : std::string()));
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
