// Region formation for the work-group pass: barrier-free regions, their loops over work-items.
#include "devices/cpu/jit/regions.hpp"

#include "devices/cpu/jit/guards.hpp"
#include "devices/cpu/jit/work_group.hpp"
#include "devices/cpu/jit/work_item_loops.hpp"

#include "devices/cpu/work_group_abi.hpp"

#include <llvm/ADT/BitVector.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/Analysis/Utils/Local.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <map>
#include <optional>

namespace duet::rt::wg {

using namespace llvm;

Uniformity analyseUniformity(Function& w, BasicBlock* entry, const Placeholders& ph,
                             const SmallPtrSetImpl<BasicBlock*>& groupBarriers) {
    PostDominatorTree pdt(w);
    Uniformity u;
    SmallPtrSet<const BasicBlock*, 16> joins;
    SmallPtrSet<const BasicBlock*, 16> varyingBranches;
    auto isPlaceholder = [&](const Function* f) {
        return f &&
               (f == ph.localId[0] || f == ph.localId[1] || f == ph.localId[2] || f == ph.linear);
    };
    auto anyVarying = [&](auto&& range) {
        for (const Value* v : range)
            if (u.isVarying(v))
                return true;
        return false;
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (BasicBlock& bb : w) {
            if (&bb == entry)
                continue;
            for (Instruction& inst : bb) {
                if (u.varying.contains(&inst))
                    continue;
                bool varying;
                if (auto* phi = dyn_cast<PHINode>(&inst)) {
                    varying = u.divergent.contains(&bb) || joins.contains(&bb) ||
                              anyVarying(phi->incoming_values());
                } else if (auto* call = dyn_cast<CallBase>(&inst)) {
                    varying = isPlaceholder(call->getCalledFunction()) ||
                              !call->doesNotAccessMemory() || anyVarying(call->args());
                } else if (auto* ld = dyn_cast<LoadInst>(&inst)) {
                    varying = !ld->isSimple() || u.isVarying(ld->getPointerOperand()) ||
                              isa<AllocaInst>(getUnderlyingObject(ld->getPointerOperand()));
                } else if (isa<AtomicRMWInst, AtomicCmpXchgInst>(inst)) {
                    varying = true;
                } else {
                    varying = anyVarying(inst.operands());
                }
                if (varying) {
                    u.varying.insert(&inst);
                    changed = true;
                }
            }
            Instruction* term = bb.getTerminator();
            Value* cond = nullptr;
            if (auto* br = dyn_cast<BranchInst>(term); br && br->isConditional())
                cond = br->getCondition();
            else if (auto* sw = dyn_cast<SwitchInst>(term))
                cond = sw->getCondition();
            if (!cond || !u.isVarying(cond) || !varyingBranches.insert(&bb).second)
                continue;
            BasicBlock* join = nullptr;
            if (DomTreeNode* node = pdt.getNode(&bb); node && node->getIDom())
                join = node->getIDom()->getBlock();
            // The blocks only some work-items reach: up to the join.
            SmallPtrSet<BasicBlock*, 16> region;
            SmallVector<BasicBlock*, 16> work;
            for (BasicBlock* s : successors(&bb))
                if (s != join && region.insert(s).second)
                    work.push_back(s);
            SmallVector<BasicBlock*, 4> barriersIn;
            while (!work.empty()) {
                BasicBlock* b = work.pop_back_val();
                if (groupBarriers.contains(b))
                    barriersIn.push_back(b);
                for (BasicBlock* s : successors(b))
                    if (s != join && region.insert(s).second)
                        work.push_back(s);
            }
            // Uniform control by the spec's rule for work-group barriers when every side but
            // the join's leads to a barrier on all its paths: a work-item taking it reaches the
            // barrier, so all take it. A barrier under a further branch (`if (flag)`) may be
            // reached by none, and then the group may part there.
            const bool barrierCertain =
                !barriersIn.empty() && llvm::all_of(successors(&bb), [&](BasicBlock* s) {
                    return s == join || llvm::any_of(barriersIn, [&](BasicBlock* b) {
                               return pdt.dominates(b, s);
                           });
                });
            if (barrierCertain)
                continue;
            changed = true;
            if (join)
                joins.insert(join);
            for (BasicBlock* b : region)
                u.divergent.insert(b);
        }
    }
    return u;
}

BasicBlock* splitEdgeBlock(BasicBlock* from, BasicBlock* to, const Twine& name) {
    BasicBlock* mid = BasicBlock::Create(from->getContext(), name, from->getParent(), to);
    BranchInst::Create(to, mid);
    Instruction* term = from->getTerminator();
    for (unsigned i = 0; i < term->getNumSuccessors(); ++i)
        if (term->getSuccessor(i) == to)
            term->setSuccessor(i, mid);
    for (PHINode& phi : to->phis()) {
        // One incoming entry per edge: keep one for the new block, drop duplicates.
        bool kept = false;
        for (int i = int(phi.getNumIncomingValues()) - 1; i >= 0; --i) {
            if (phi.getIncomingBlock(unsigned(i)) != from)
                continue;
            if (kept) {
                phi.removeIncomingValue(unsigned(i), false);
            } else {
                phi.setIncomingBlock(unsigned(i), mid);
                kept = true;
            }
        }
    }
    return mid;
}

namespace {} // namespace

bool getsLoopBarriers(const Loop& loop, const Uniformity& u,
                      const SmallPtrSetImpl<BasicBlock*>& barrierSet) {
    if (!loop.isInnermost() || u.divergent.contains(loop.getHeader()))
        return false;
    for (BasicBlock* bb : loop.blocks())
        if (barrierSet.contains(bb))
            return false;
    SmallVector<BasicBlock*, 4> exiting;
    loop.getExitingBlocks(exiting);
    for (BasicBlock* bb : exiting) {
        auto* br = dyn_cast<BranchInst>(bb->getTerminator());
        if (!br || (br->isConditional() && u.isVarying(br->getCondition())))
            return false;
    }
    return true;
}

size_t insertLoopBarriers(Function& w, const Uniformity& u, std::vector<BasicBlock*>& barriers) {
    DominatorTree dt(w);
    LoopInfo li(dt);
    SmallPtrSet<BasicBlock*, 16> barrierSet(barriers.begin(), barriers.end());
    SmallVector<std::pair<BasicBlock*, BasicBlock*>, 16> edges;
    for (Loop* loop : li.getLoopsInPreorder()) {
        if (!getsLoopBarriers(*loop, u, barrierSet))
            continue;
        // Entry and back edges: every edge into the header.
        SmallPtrSet<BasicBlock*, 4> preds;
        for (BasicBlock* p : predecessors(loop->getHeader()))
            if (preds.insert(p).second)
                edges.push_back({p, loop->getHeader()});
        SmallVector<Loop::Edge, 4> exits;
        loop->getExitEdges(exits);
        for (auto& [from, to] : exits)
            edges.push_back({const_cast<BasicBlock*>(from), const_cast<BasicBlock*>(to)});
    }
    for (auto& [from, to] : edges)
        barriers.push_back(splitEdgeBlock(from, to, "loop.barrier"));
    return edges.size();
}

namespace {

/// Blocks reachable from `from` (included) without entering `blocked`.
BitVector reachable(ArrayRef<unsigned> from, const std::vector<std::vector<unsigned>>& succ,
                    int blocked) {
    BitVector seen(unsigned(succ.size()));
    SmallVector<unsigned, 32> work;
    for (unsigned f : from)
        if (int(f) != blocked && !seen.test(f)) {
            seen.set(f);
            work.push_back(f);
        }
    while (!work.empty()) {
        unsigned n = work.pop_back_val();
        for (unsigned s : succ[n])
            if (int(s) != blocked && !seen.test(s)) {
                seen.set(s);
                work.push_back(s);
            }
    }
    return seen;
}

/// Where a use reads its value: the user, or for a phi the end of the incoming block.
Instruction* useSite(Use* u) {
    auto* user = cast<Instruction>(u->getUser());
    if (auto* phi = dyn_cast<PHINode>(user))
        return phi->getIncomingBlock(*u)->getTerminator();
    return user;
}

/// The block a use reads its value in (for a phi, the incoming block).
BasicBlock* useBlock(const Use& u) {
    auto* user = cast<Instruction>(u.getUser());
    if (auto* phi = dyn_cast<PHINode>(user))
        return phi->getIncomingBlock(u);
    return user->getParent();
}

size_t splitInductions(Function& w, Uniformity& u) {
    DominatorTree dt(w);
    LoopInfo li(dt);
    const DataLayout& dl = w.getParent()->getDataLayout();
    Type* i64 = Type::getInt64Ty(w.getContext());
    size_t rewritten = 0;
    for (Loop* loop : li.getLoopsInPreorder()) {
        BasicBlock* header = loop->getHeader();
        if (u.divergent.contains(header))
            continue;
        SmallVector<PHINode*, 4> phis;
        for (PHINode& phi : header->phis())
            if (phi.getType()->isPointerTy() && phi.getNumIncomingValues() == 2 &&
                u.isVarying(&phi))
                phis.push_back(&phi);
        for (PHINode* phi : phis) {
            // One incoming value is the phi advanced by GEPs with uniform indices (the step),
            // the other the start, from outside the loop.
            int step = -1;
            SmallVector<GetElementPtrInst*, 4> chain;
            for (unsigned k = 0; k < 2 && step < 0; ++k) {
                chain.clear();
                Value* v = phi->getIncomingValue(k);
                while (auto* gep = dyn_cast<GetElementPtrInst>(v)) {
                    bool uniformIndices = true;
                    for (Use& idx : gep->indices())
                        uniformIndices = uniformIndices && !u.isVarying(idx.get());
                    if (!uniformIndices)
                        break;
                    chain.push_back(gep);
                    v = gep->getPointerOperand();
                }
                if (v == phi && !chain.empty() && loop->contains(phi->getIncomingBlock(k)))
                    step = int(k);
            }
            if (step < 0)
                continue;
            const unsigned startEdge = 1 - unsigned(step);
            Value* start = phi->getIncomingValue(startEdge);
            BasicBlock* startBlock = phi->getIncomingBlock(startEdge);
            if (loop->contains(startBlock) || start->getType() != phi->getType())
                continue;
            if (auto* si = dyn_cast<Instruction>(start); si && !dt.dominates(si, phi))
                continue;
            BasicBlock* stepBlock = phi->getIncomingBlock(unsigned(step));
            IRBuilder<> b(header, header->getFirstInsertionPt());
            PHINode* off = b.CreatePHI(i64, 2, phi->getName() + ".off");
            Value* p = b.CreateGEP(b.getInt8Ty(), start, off, phi->getName() + ".at");
            IRBuilder<> sb(stepBlock->getTerminator());
            Value* next = off;
            for (auto it = chain.rbegin(); it != chain.rend(); ++it)
                next = sb.CreateAdd(next, sb.CreateSExtOrTrunc(emitGEPOffset(&sb, dl, *it), i64),
                                    "off.next");
            off->addIncoming(ConstantInt::get(i64, 0), startBlock);
            off->addIncoming(next, stepBlock);
            u.varying.insert(p);
            phi->replaceAllUsesWith(p);
            u.varying.erase(phi); // its address may be reused by a value made later
            phi->eraseFromParent();
            ++rewritten;
        }
    }
    return rewritten;
}

/// The region number of the kernel's end, as a region's target.
constexpr int kExit = -1;

/// buildRegions' state: the kernel's blocks numbered, the regions, the storage of values
/// live across barriers, and the region loops as they are built.
class RegionBuilder {
public:
    RegionBuilder(Function& w, BasicBlock* entry, BasicBlock* start, BasicBlock* exit,
                  const std::vector<BasicBlock*>& barriers,
                  const SmallPtrSetImpl<BasicBlock*>& subGroupBarriers,
                  const SmallPtrSetImpl<BasicBlock*>& yields, const Uniformity& uniformity,
                  const Placeholders& ph, const GroupShape& group)
        : m_w(w), m_ctx(w.getContext()), m_entry(entry), m_start(start), m_exit(exit),
          m_barriers(barriers), m_subGroupBarriers(subGroupBarriers), m_yields(yields),
          m_uniformity(uniformity), m_ph(ph), m_group(group), m_i64(Type::getInt64Ty(m_ctx)),
          m_i32(Type::getInt32Ty(m_ctx)), m_eb(entry->getTerminator()),
          m_resumable(!subGroupBarriers.empty()), m_rounds(!yields.empty()) {}

    bool run(unsigned& regionCount, std::string& error);

private:
    /// Uniform values live across a barrier whose slot is double-buffered: work-items store
    /// the new value in `next`, read the old one from `cur`, and each region containing the
    /// definition ends by copying next to cur.
    struct UniformCopy {
        AllocaInst* cur;
        AllocaInst* next;
    };
    struct Region {
        BasicBlock* pre = nullptr;
        BasicBlock* done = nullptr;
        std::vector<int> targets; // next region ids, kExit
        Value* next = nullptr;    // the target picked by the last work-item (several targets)
    };
    /// Where a value live across a barrier is kept.
    enum class Slot { Single, DoubleBuffered, PerItem };
    /// A region's loop nest over local z, y, x (x innermost): the ids, the local linear id,
    /// the headers and the latches. `x` is null where GroupShape::singleX (no loop over x).
    struct LoopNest {
        PHINode *x, *y, *z;
        Value* linear;
        BasicBlock *zHead, *yHead, *xHead, *xLatch, *yLatch, *zLatch;
        BasicBlock* enter; ///< the block before zHead: `pre`, or after the active lanes' loop
    };

    void numberBlocks();
    BitVector throughBarrier(unsigned from, int blocked) const;
    void findRegions();
    bool stopsRegion(BasicBlock* bb) const;
    bool followsInRegion(BasicBlock* from, BasicBlock* to) const;
    void privatiseArrays();
    bool rematerialisable(Value* v, unsigned depth);
    bool isUniformLeaf(const Instruction* i) const;
    bool recomputable(const Instruction* i) const;
    Value* rematerialise(Value* v, IRBuilder<>& b);
    bool storeCrossingValues(std::string& error);
    bool storeCrossingValues(bool rematOnly, const DominatorTree& dt, std::string& error);
    Slot slotFor(unsigned di, Instruction* inst, ArrayRef<Use*> crossing) const;
    bool storeOnYieldEdges(unsigned di, Instruction* inst, ArrayRef<Use*> crossing,
                           const DominatorTree& dt, SmallVectorImpl<Instruction*>& at) const;
    void storePerItemVector(ArrayRef<Instruction*> at, Instruction* inst, ArrayRef<Use*> crossing);
    void storeInSlot(unsigned di, ArrayRef<Instruction*> at, Instruction* inst, Slot mode,
                     ArrayRef<Use*> crossing);
    void emitRegion(size_t k);
    LoopNest emitLoopNest(size_t k);
    bool usesActiveLanes(size_t k) const;
    BasicBlock* emitActiveLanes(size_t k, BasicBlock* from);
    void replaceActiveLanes(size_t k, ArrayRef<BasicBlock*> clones, const LoopNest& nest);
    void cloneMembers(size_t k, const LoopNest& nest, std::map<int, BasicBlock*>& exitBlocks);
    void linkRegions();
    BasicBlock* emitResumeDispatcher();
    BasicBlock* emitRoundDispatcher();
    Value* subGroupOf(IRBuilder<>& b, Value* linear) const {
        return b.CreateUDiv(linear, b.CreateZExt(m_group.subGroupWidth, m_i64));
    }
    bool eraseOriginals(std::string& error);
    Value* linearValue(IRBuilder<>& b) const { return b.CreateCall(m_ph.linear); }

    Function& m_w;
    LLVMContext& m_ctx;
    BasicBlock* m_entry;
    BasicBlock* m_start;
    BasicBlock* m_exit;
    const std::vector<BasicBlock*>& m_barriers;
    const SmallPtrSetImpl<BasicBlock*>& m_subGroupBarriers;
    const SmallPtrSetImpl<BasicBlock*>& m_yields;
    const Uniformity& m_uniformity;
    const Placeholders& m_ph;
    const GroupShape& m_group;
    Type* m_i64;
    Type* m_i32;
    IRBuilder<> m_eb; ///< allocates per-work-item storage, at the end of the prologue
    /// Resumable regions (buildRegions): m_state holds, per work-item, the region it resumes
    /// in (m_regions.size() once it has ended).
    bool m_resumable;
    AllocaInst* m_state = nullptr;
    /// Resumable regions run in rounds (buildRegions' `yields`): per sub-group, the region it
    /// runs this round (~0: none), and the region being run.
    bool m_rounds;
    AllocaInst* m_chosen = nullptr;
    AllocaInst* m_current = nullptr;
    /// Resumable regions that use the active lanes: per sub-group, the lanes that entered the
    /// region being run (emitActiveLanes).
    AllocaInst* m_activeLanes = nullptr;

    // The kernel's blocks (all but the prologue), numbered.
    std::vector<BasicBlock*> m_blocks;
    DenseMap<BasicBlock*, unsigned> m_index;
    std::vector<std::vector<unsigned>> m_succ;
    BitVector m_isBarrier;
    std::vector<BitVector> m_barrierReach; ///< per barrier, the blocks it reaches (itself too)

    // Regions: entry 0 is the kernel's start, entry j + 1 barrier j.
    std::vector<BasicBlock*> m_entries;
    DenseMap<BasicBlock*, int> m_regionOfEntry;
    std::vector<std::vector<BasicBlock*>> m_members; ///< per region, in discovery order
    std::vector<BitVector> m_regionsOf;              ///< per block, the regions holding it
    std::vector<std::vector<UniformCopy>> m_copiesAfter;
    DenseMap<Instruction*, bool> m_rematMemo;

    std::vector<Region> m_regions;
    AllocaInst* m_nextSlot = nullptr;
    /// Barrier checks: per work-item, the region it goes on to; the AND and the OR of those over
    /// the region's work-items (equal when they all agree).
    AllocaInst* m_reached = nullptr;
    AllocaInst* m_reachedAnd = nullptr;
    AllocaInst* m_reachedOr = nullptr;
    BasicBlock* m_dispatch = nullptr;
};

void RegionBuilder::numberBlocks() {
    for (BasicBlock& bb : m_w)
        if (&bb != m_entry) {
            m_index[&bb] = unsigned(m_blocks.size());
            m_blocks.push_back(&bb);
        }
    const unsigned n = unsigned(m_blocks.size());
    m_succ.resize(n);
    for (unsigned i = 0; i < n; ++i)
        for (BasicBlock* s : successors(m_blocks[i]))
            m_succ[i].push_back(m_index.lookup(s));
    m_isBarrier.resize(n);
    for (BasicBlock* bb : m_barriers)
        m_isBarrier.set(m_index.lookup(bb));

    // Reach of each barrier block (itself included), for the liveness questions below.
    for (BasicBlock* bb : m_barriers)
        m_barrierReach.push_back(reachable({m_index.lookup(bb)}, m_succ, -1));
}

/// The blocks reachable from block `from` through a barrier (not entering block `blocked`,
/// when not -1).
BitVector RegionBuilder::throughBarrier(unsigned from, int blocked) const {
    BitVector out(unsigned(m_blocks.size()));
    BitVector r = reachable(m_succ[from], m_succ, blocked);
    for (size_t j = 0; j < m_barriers.size(); ++j)
        if (r.test(m_index.lookup(m_barriers[j]))) {
            if (blocked < 0)
                out |= m_barrierReach[j];
            else
                out |= reachable({m_index.lookup(m_barriers[j])}, m_succ, blocked);
        }
    return out;
}

/// A region holds the blocks reachable from its entry without crossing a barrier, in
/// discovery order.
void RegionBuilder::findRegions() {
    m_entries.push_back(m_start);
    m_entries.insert(m_entries.end(), m_barriers.begin(), m_barriers.end());
    for (size_t k = 0; k < m_entries.size(); ++k)
        m_regionOfEntry[m_entries[k]] = int(k);
    m_members.resize(m_entries.size());
    m_regionsOf.assign(m_blocks.size(), BitVector(unsigned(m_entries.size())));
    for (size_t k = 0; k < m_entries.size(); ++k) {
        SmallPtrSet<BasicBlock*, 32> seen{m_entries[k]};
        m_members[k].push_back(m_entries[k]);
        for (size_t i = 0; i < m_members[k].size(); ++i)
            for (BasicBlock* s : successors(m_members[k][i]))
                if (!stopsRegion(s) && seen.insert(s).second)
                    m_members[k].push_back(s);
        for (BasicBlock* bb : m_members[k])
            m_regionsOf[m_index.lookup(bb)].set(unsigned(k));
    }
    m_copiesAfter.resize(m_entries.size());
}

bool RegionBuilder::stopsRegion(BasicBlock* bb) const {
    return bb == m_exit || m_isBarrier.test(m_index.lookup(bb));
}

/// Within one region, without crossing a barrier: can `to` follow `from`?
bool RegionBuilder::followsInRegion(BasicBlock* from, BasicBlock* to) const {
    SmallPtrSet<BasicBlock*, 32> seen;
    SmallVector<BasicBlock*, 16> work{from};
    while (!work.empty()) {
        BasicBlock* bb = work.pop_back_val();
        for (BasicBlock* s : successors(bb)) {
            if (stopsRegion(s))
                continue; // leaves the region: a barrier block starts a later one
            if (s == to)
                return true;
            if (seen.insert(s).second)
                work.push_back(s);
        }
    }
    return false;
}

/// Private arrays used on both sides of a barrier: one copy per work-item.
void RegionBuilder::privatiseArrays() {
    SmallVector<AllocaInst*, 8> allocas;
    for (Instruction& inst : *m_entry)
        if (auto* a = dyn_cast<AllocaInst>(&inst))
            allocas.push_back(a);
    for (AllocaInst* a : allocas) {
        bool escapes = false;
        SmallPtrSet<Value*, 16> seen{a};
        SmallVector<Value*, 16> work{a};
        SmallVector<unsigned, 16> useBlocks;
        while (!work.empty()) {
            Value* v = work.pop_back_val();
            for (User* u : v->users()) {
                auto* inst = cast<Instruction>(u);
                if (isa<GetElementPtrInst, CastInst, SelectInst, PHINode>(inst)) {
                    if (isa<PtrToIntInst>(inst))
                        escapes = true;
                    else if (seen.insert(inst).second)
                        work.push_back(inst);
                }
                if (auto* st = dyn_cast<StoreInst>(inst); st && st->getValueOperand() == v)
                    escapes = true;
                if (inst->getParent() != m_entry)
                    useBlocks.push_back(m_index.lookup(inst->getParent()));
            }
        }
        bool perItem = escapes;
        for (size_t i = 0; i < useBlocks.size() && !perItem; ++i) {
            BitVector after = throughBarrier(useBlocks[i], -1);
            for (unsigned u : useBlocks)
                if (after.test(u))
                    perItem = true;
        }
        if (!perItem)
            continue;
        AllocaInst* items =
            m_eb.CreateAlloca(a->getAllocatedType(), m_group.items, a->getName() + ".items");
        items->setAlignment(a->getAlign());
        SmallVector<Use*, 8> uses;
        for (Use& u : a->uses())
            uses.push_back(&u);
        for (Use* u : uses) {
            IRBuilder<> b(useSite(u));
            u->set(b.CreateInBoundsGEP(a->getAllocatedType(), items, linearValue(b)));
        }
        a->eraseFromParent();
    }
}

/// Values that are cheap, pure functions of the work-item ids, the prologue (context,
/// arguments) and constants - addresses like `tile + lid + 1` - are computed again where a
/// barrier separates a use from them instead of living in per-work-item storage: the reload
/// would hide from the loop vectoriser that the address is consecutive across work-items (it
/// gave up on stencils through __local tiles).
bool RegionBuilder::rematerialisable(Value* v, unsigned depth) {
    auto* i = dyn_cast<Instruction>(v);
    if (!i || i->getParent() == m_entry)
        return true; // constants, arguments and the prologue dominate every region
    if (depth > 0 && !recomputable(i) && isUniformLeaf(i))
        return true; // used where the copy is: reloaded from its uniform slot there
    if (depth > 12)
        return false;
    if (auto it = m_rematMemo.find(i); it != m_rematMemo.end())
        return it->second;
    bool ok = recomputable(i);
    if (ok && !isa<CallInst>(i))
        for (Value* op : i->operands())
            ok = ok && rematerialisable(op, depth + 1);
    m_rematMemo[i] = ok;
    return ok;
}

/// Whether rematerialise() may copy `i` into a later region: work-item placeholders, GEPs,
/// casts, arithmetic that cannot trap, comparisons and selects (a guard like `x < w && y < h`
/// kept across a barrier was a per-work-item `i1` array, whose reload the vectoriser left
/// scalar).
bool RegionBuilder::recomputable(const Instruction* i) const {
    if (auto* call = dyn_cast<CallInst>(i)) {
        const Function* f = call->getCalledFunction();
        return f == m_ph.localId[0] || f == m_ph.localId[1] || f == m_ph.localId[2] ||
               f == m_ph.linear;
    }
    if (isa<PtrToIntInst, IntToPtrInst>(i))
        return false;
    return isa<GetElementPtrInst, CastInst, CmpInst, SelectInst>(i) ||
           (isa<BinaryOperator>(i) && !i->isIntDivRem());
}

/// A value computed again across a barrier may use a uniform value that is not itself computed
/// again (a phi, a load: a loop's uniform offset) as it is: that use is one more of the uniform
/// value, which storeCrossingValues' second pass then gives its single (or double-buffered)
/// slot. Not with resumable regions, where uniform values are per
/// work-item too; not where only some work-items define it.
bool RegionBuilder::isUniformLeaf(const Instruction* i) const {
    return !m_resumable && !m_uniformity.isVarying(i) &&
           !m_uniformity.divergent.contains(i->getParent()) && !i->getType()->isTokenTy() &&
           !i->getType()->isVoidTy();
}

Value* RegionBuilder::rematerialise(Value* v, IRBuilder<>& b) {
    auto* i = dyn_cast<Instruction>(v);
    if (!i || i->getParent() == m_entry || (!recomputable(i) && isUniformLeaf(i)))
        return v;
    Instruction* c = i->clone();
    for (Use& op : c->operands())
        op.set(rematerialise(op.get(), b));
    b.Insert(c, i->getName() + ".remat");
    return c;
}

/// SSA values live across a barrier: stored after their definition, loaded before each use
/// that a barrier may separate from it (or computed again there).
bool RegionBuilder::storeCrossingValues(std::string& error) {
    // Two passes: values computed again first (their copies may use uniform values, whose
    // crossing uses the second pass then sees), then the values that move to storage. Neither
    // changes the control flow, so one dominator tree serves both.
    const DominatorTree dt(m_w);
    for (int pass = 0; pass < 2; ++pass)
        if (!storeCrossingValues(pass == 0, dt, error))
            return false;
    return true;
}

bool RegionBuilder::storeCrossingValues(bool rematOnly, const DominatorTree& dt,
                                        std::string& error) {
    for (unsigned di = 0; di < unsigned(m_blocks.size()); ++di) {
        BasicBlock* def = m_blocks[di];
        std::optional<BitVector> cross;
        SmallVector<Instruction*, 16> values;
        for (Instruction& inst : *def)
            values.push_back(&inst);
        for (Instruction* inst : values) {
            if (inst->getType()->isVoidTy() || inst->use_empty())
                continue;
            SmallVector<Use*, 8> crossing;
            for (Use& u : inst->uses()) {
                BasicBlock* ub = useBlock(u);
                if (ub == def)
                    continue;
                if (!cross)
                    cross = throughBarrier(di, int(di));
                if (cross->test(m_index.lookup(ub)))
                    crossing.push_back(&u);
            }
            if (crossing.empty())
                continue;
            if (inst->getType()->isTokenTy()) {
                error = "a token value lives across a barrier";
                return false;
            }
            if (rematerialisable(inst, 0)) {
                for (Use* u : crossing) {
                    IRBuilder<> rb(useSite(u));
                    u->set(rematerialise(inst, rb));
                }
                continue;
            }
            if (rematOnly)
                continue;
            Slot mode = slotFor(di, inst, crossing);
            // Stored where it is defined, unless only yield points separate it from its uses.
            SmallVector<Instruction*, 4> at;
            if (mode != Slot::PerItem || !storeOnYieldEdges(di, inst, crossing, dt, at)) {
                at.assign(1,
                          isa<PHINode>(inst) ? &*def->getFirstInsertionPt() : inst->getNextNode());
            }
            if (mode == Slot::PerItem && isa<FixedVectorType>(inst->getType()))
                storePerItemVector(at, inst, crossing);
            else
                storeInSlot(di, at, inst, mode, crossing);
        }
    }
    return true;
}

/// Whether value `inst` (defined in block `di`) may be stored only on the edges into the yield
/// points it crosses, `at` their ends, instead of after its definition: a spin loop's values
/// then reach memory every kSpinYieldEvery iterations, not at each. That holds when the first
/// barrier on every path from the definition is a yield point (other barriers are entered
/// from anywhere), and no crossing use may follow the definition within a region (its clone
/// there reads the slot too, which must then hold this iteration's value). The value is live
/// into such a yield point only where the definition dominates it, and then its predecessors.
bool RegionBuilder::storeOnYieldEdges(unsigned di, Instruction* inst, ArrayRef<Use*> crossing,
                                      const DominatorTree& dt,
                                      SmallVectorImpl<Instruction*>& at) const {
    if (m_yields.empty())
        return false;
    for (Use* u : crossing)
        if (followsInRegion(m_blocks[di], useBlock(*u)))
            return false;
    BitVector seen(unsigned(m_blocks.size()));
    SmallVector<unsigned, 16> work(m_succ[di].begin(), m_succ[di].end());
    while (!work.empty()) {
        const unsigned b = work.pop_back_val();
        if (b == di || seen.test(b))
            continue;
        seen.set(b);
        BasicBlock* bb = m_blocks[b];
        if (!m_isBarrier.test(b)) {
            work.append(m_succ[b].begin(), m_succ[b].end());
            continue;
        }
        if (!m_yields.contains(bb))
            return false;
        if (!dt.dominates(inst->getParent(), bb))
            continue; // not live there
        for (BasicBlock* pred : predecessors(bb)) {
            if (pred->getSingleSuccessor() != bb)
                return false;
            at.push_back(pred->getTerminator());
        }
    }
    return !at.empty();
}

/// Where the value lives: one slot per work-item, unless it is uniform (defined under uniform
/// control with uniform operands). A uniform value needs one slot when no region both defines
/// and reads it across a barrier (every work-item stores the same bits); two (cur/next) when
/// such a region reads it only before defining it; otherwise one per work-item.
RegionBuilder::Slot RegionBuilder::slotFor(unsigned di, Instruction* inst,
                                           ArrayRef<Use*> crossing) const {
    Slot mode = Slot::Single;
    // Resumable regions: work-items of one group may be in different iterations of a loop, so
    // even a uniform value is per work-item.
    if (m_resumable || m_uniformity.isVarying(inst) ||
        m_uniformity.divergent.contains(m_blocks[di]))
        mode = Slot::PerItem;
    for (Use* u : crossing) {
        if (mode == Slot::PerItem)
            break;
        BasicBlock* ub = useBlock(*u);
        BitVector common = m_regionsOf[di];
        common &= m_regionsOf[m_index.lookup(ub)];
        if (common.any())
            mode = followsInRegion(m_blocks[di], ub) ? Slot::PerItem : Slot::DoubleBuffered;
    }
    return mode;
}

/// Per work-item vectors as one array per component (structure of arrays): the vectorised
/// work-item loop then reads them with plain vector loads.
void RegionBuilder::storePerItemVector(ArrayRef<Instruction*> at, Instruction* inst,
                                       ArrayRef<Use*> crossing) {
    Type* ty = inst->getType();
    auto* vecTy = cast<FixedVectorType>(ty);
    Type* elTy = vecTy->getElementType();
    const unsigned lanes = vecTy->getNumElements();
    SmallVector<AllocaInst*, 4> slots;
    for (unsigned e = 0; e < lanes; ++e)
        slots.push_back(
            m_eb.CreateAlloca(elTy, m_group.items, inst->getName() + ".wi" + std::to_string(e)));
    for (Instruction* where : at) {
        IRBuilder<> sb(where);
        Value* lin = linearValue(sb);
        for (unsigned e = 0; e < lanes; ++e)
            sb.CreateStore(sb.CreateExtractElement(inst, e),
                           sb.CreateInBoundsGEP(elTy, slots[e], lin));
    }
    for (Use* u : crossing) {
        IRBuilder<> lb(useSite(u));
        Value* l = linearValue(lb);
        Value* v = PoisonValue::get(ty);
        for (unsigned e = 0; e < lanes; ++e)
            v = lb.CreateInsertElement(
                v, lb.CreateLoad(elTy, lb.CreateInBoundsGEP(elTy, slots[e], l)), e);
        u->set(v);
    }
}

void RegionBuilder::storeInSlot(unsigned di, ArrayRef<Instruction*> at, Instruction* inst,
                                Slot mode, ArrayRef<Use*> crossing) {
    Type* ty = inst->getType();
    AllocaInst* slot = m_eb.CreateAlloca(ty, mode == Slot::PerItem ? m_group.items : nullptr,
                                         inst->getName() + ".wi");
    AllocaInst* storeSlot = slot;
    if (mode == Slot::DoubleBuffered) {
        storeSlot = m_eb.CreateAlloca(ty, nullptr, inst->getName() + ".next");
        for (unsigned k : m_regionsOf[di].set_bits())
            m_copiesAfter[k].push_back({slot, storeSlot});
    }
    auto slotAddress = [&](IRBuilder<>& ib, AllocaInst* base) -> Value* {
        return mode == Slot::PerItem ? ib.CreateInBoundsGEP(ty, base, linearValue(ib)) : base;
    };
    for (Instruction* where : at) {
        IRBuilder<> sb(where);
        sb.CreateStore(inst, slotAddress(sb, storeSlot));
    }
    for (Use* u : crossing) {
        IRBuilder<> lb(useSite(u));
        u->set(lb.CreateLoad(ty, slotAddress(lb, slot), inst->getName() + ".reload"));
    }
}

/// Region `k`'s blocks and loop nest: entry block `pre`, the nest over z, y, x around clones
/// of its members, and `done` once every work-item has reached a barrier or the end.
void RegionBuilder::emitRegion(size_t k) {
    Region& r = m_regions[k];
    std::map<int, bool> targetSeen;
    for (BasicBlock* bb : m_members[k])
        for (BasicBlock* s : successors(bb)) {
            if (s == m_exit)
                targetSeen[kExit] = true;
            else if (m_isBarrier.test(m_index.lookup(s)))
                targetSeen[m_regionOfEntry.lookup(s)] = true;
        }
    for (auto& [t, _] : targetSeen)
        r.targets.push_back(t);

    LoopNest nest = emitLoopNest(k);
    std::map<int, BasicBlock*> exitBlocks;
    cloneMembers(k, nest, exitBlocks);

    PHINode *x = nest.x, *y = nest.y, *z = nest.z;
    IRBuilder<> b(nest.xLatch);
    if (r.targets.size() > 1 && !m_resumable) {
        PHINode* next = b.CreatePHI(m_i32, unsigned(r.targets.size()), "next_region");
        for (int t : r.targets)
            next->addIncoming(b.getInt32(uint32_t(t)), exitBlocks[t]);
        r.next = next;
        if (m_group.barrierCheckCtx) {
            // Where this work-item goes on, for the check at the region's end (linkRegions).
            if (!m_reached) {
                m_reached = m_eb.CreateAlloca(m_i32, m_group.items, "reached");
                m_reachedAnd = m_eb.CreateAlloca(m_i32, nullptr, "reached.and");
                m_reachedOr = m_eb.CreateAlloca(m_i32, nullptr, "reached.or");
            }
            static_assert(uint32_t(kExit) == cpu::kReachedEnd, "the hook's end-of-kernel mark");
            b.CreateStore(next, b.CreateInBoundsGEP(m_i32, m_reached, nest.linear));
            // Reductions the vectoriser widens; the hook runs only when they differ.
            b.CreateStore(b.CreateAnd(b.CreateLoad(m_i32, m_reachedAnd), next), m_reachedAnd);
            b.CreateStore(b.CreateOr(b.CreateLoad(m_i32, m_reachedOr), next), m_reachedOr);
            IRBuilder<> pb(r.pre->getTerminator());
            pb.CreateStore(pb.getInt32(~0u), m_reachedAnd);
            pb.CreateStore(pb.getInt32(0), m_reachedOr);
        }
    }
    // The body of a strided loop: vectorised whatever the cost model says (kStridedBodyMarker).
    bool strided = false;
    for (BasicBlock* bb : m_members[k])
        strided = strided || bb->getTerminator()->getMetadata(kStridedBodyMarker);
    if (x) {
        Value* x1 = b.CreateAdd(x, ConstantInt::get(m_i64, 1));
        markWorkItemLoop(
            b.CreateCondBr(b.CreateICmpULT(x1, m_group.localSize[0]), nest.xHead, nest.yLatch),
            strided);
        x->addIncoming(ConstantInt::get(m_i64, 0), nest.yHead);
        x->addIncoming(x1, nest.xLatch);
    } else {
        b.CreateBr(nest.yLatch); // one work-item along x: the loop over y is the innermost
    }
    b.SetInsertPoint(nest.yLatch);
    Value* y1 = b.CreateAdd(y, ConstantInt::get(m_i64, 1));
    BranchInst* yBack =
        b.CreateCondBr(b.CreateICmpULT(y1, m_group.localSize[1]), nest.yHead, nest.zLatch);
    if (!x)
        markWorkItemLoop(yBack, strided);
    b.SetInsertPoint(nest.zLatch);
    Value* z1 = b.CreateAdd(z, ConstantInt::get(m_i64, 1));
    b.CreateCondBr(b.CreateICmpULT(z1, m_group.localSize[2]), nest.zHead, r.done);
    y->addIncoming(ConstantInt::get(m_i64, 0), nest.zHead);
    y->addIncoming(y1, nest.yLatch);
    z->addIncoming(ConstantInt::get(m_i64, 0), nest.enter);
    z->addIncoming(z1, nest.zLatch);
}

/// Region `k`'s blocks (`pre`, the loop headers and latches, `done`, in that order) and the
/// loop headers' ids.
RegionBuilder::LoopNest RegionBuilder::emitLoopNest(size_t k) {
    Region& r = m_regions[k];
    LoopNest nest;
    r.pre = BasicBlock::Create(m_ctx, "region" + std::to_string(k), &m_w);
    nest.zHead = BasicBlock::Create(m_ctx, "wi.z", &m_w);
    nest.yHead = BasicBlock::Create(m_ctx, "wi.y", &m_w);
    nest.xHead = BasicBlock::Create(m_ctx, "wi.x", &m_w);
    nest.xLatch = BasicBlock::Create(m_ctx, "wi.x.next", &m_w);
    nest.yLatch = BasicBlock::Create(m_ctx, "wi.y.next", &m_w);
    nest.zLatch = BasicBlock::Create(m_ctx, "wi.z.next", &m_w);
    r.done = BasicBlock::Create(m_ctx, "region" + std::to_string(k) + ".done", &m_w);
    nest.enter = r.pre;
    if (m_resumable && k > 0 && usesActiveLanes(k))
        nest.enter = emitActiveLanes(k, r.pre);
    IRBuilder<> b(nest.enter);
    b.CreateBr(nest.zHead);
    b.SetInsertPoint(nest.zHead);
    nest.z = b.CreatePHI(m_i64, 2, "lz");
    b.CreateBr(nest.yHead);
    b.SetInsertPoint(nest.yHead);
    nest.y = b.CreatePHI(m_i64, 2, "ly");
    Value* row = b.CreateMul(b.CreateAdd(b.CreateMul(nest.z, m_group.localSize[1]), nest.y),
                             m_group.localSize[0], "row");
    b.SetInsertPoint(nest.xHead);
    // A work-group function specialised for one work-item along x (GroupShape::singleX) has
    // no loop over x: local x is 0, and the loop over y is the work-item loop.
    nest.x = m_group.singleX ? nullptr : b.CreatePHI(m_i64, 2, "lx");
    nest.linear = m_group.singleX ? row : b.CreateAdd(row, nest.x, "local_linear");
    // Local ids are below kCpuMaxWorkGroupSize: said to the optimiser, `(int)lid + 1` folds
    // to an affine 64-bit index instead of a shl/ashr pair the vectoriser cannot follow
    // (assumptions feed the known bits instcombine folds with).
    for (PHINode* id : {nest.x, nest.y, nest.z})
        if (id)
            b.CreateAssumption(b.CreateICmpULT(id, ConstantInt::get(m_i64, kCpuMaxWorkGroupSize)));
    b.SetInsertPoint(nest.yHead);
    b.CreateBr(nest.xHead);
    return nest;
}

/// Whether region `k` asks for the active lanes of a sub-group.
bool RegionBuilder::usesActiveLanes(size_t k) const {
    for (BasicBlock* bb : m_members[k])
        for (Instruction& inst : *bb)
            if (auto* call = dyn_cast<CallInst>(&inst);
                call && call->getCalledFunction() == m_ph.active)
                return true;
    return false;
}

/// Before region `k`'s loop nest (resumable regions): one pass over the work-items' states that
/// sets, per sub-group, bit j when its work-item j waits at this region, i.e. reached the
/// barrier it starts at. The loop nest cannot tell by itself: a work-item that has run the region
/// already records where it goes on. Returns the block the loop nest starts after.
BasicBlock* RegionBuilder::emitActiveLanes(size_t k, BasicBlock* from) {
    if (!m_activeLanes)
        m_activeLanes = m_eb.CreateAlloca(m_i64, m_group.items, "active_lanes");
    BasicBlock* loop = BasicBlock::Create(m_ctx, "active" + std::to_string(k), &m_w);
    BasicBlock* done = BasicBlock::Create(m_ctx, "active" + std::to_string(k) + ".done", &m_w);
    IRBuilder<> b(from);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    PHINode* i = b.CreatePHI(m_i64, 2, "wi");
    PHINode* acc = b.CreatePHI(m_i64, 2, "lanes");
    Value* width = b.CreateZExt(m_group.subGroupWidth, m_i64);
    Value* lane = b.CreateURem(i, width);
    // A sub-group's first lane starts its mask afresh.
    Value* before = b.CreateSelect(b.CreateICmpEQ(lane, b.getInt64(0)), b.getInt64(0), acc);
    Value* state = b.CreateLoad(m_i32, b.CreateInBoundsGEP(m_i32, m_state, i));
    Value* here = b.CreateZExt(b.CreateICmpEQ(state, b.getInt32(uint32_t(k))), m_i64);
    Value* lanes = b.CreateOr(before, b.CreateShl(here, lane));
    b.CreateStore(lanes, b.CreateInBoundsGEP(m_i64, m_activeLanes, b.CreateUDiv(i, width)));
    Value* i1 = b.CreateAdd(i, b.getInt64(1));
    b.CreateCondBr(b.CreateICmpULT(i1, m_group.items), loop, done);
    i->addIncoming(b.getInt64(0), from);
    i->addIncoming(i1, loop);
    acc->addIncoming(b.getInt64(0), from);
    acc->addIncoming(lanes, loop);
    return done;
}

/// The active-lanes placeholders of region `k`'s clones: every lane where every work-item runs
/// the region (regions that are not resumable, and the first), else the lanes of the
/// work-item's sub-group that emitActiveLanes found waiting here.
void RegionBuilder::replaceActiveLanes(size_t k, ArrayRef<BasicBlock*> clones,
                                       const LoopNest& nest) {
    for (BasicBlock* c : clones)
        for (Instruction& inst : make_early_inc_range(*c)) {
            auto* call = dyn_cast<CallInst>(&inst);
            if (!call || call->getCalledFunction() != m_ph.active)
                continue;
            Value* v = ConstantInt::getAllOnesValue(m_i64);
            if (m_resumable && k > 0) {
                IRBuilder<> b(call);
                Value* sub = subGroupOf(b, nest.linear);
                v = b.CreateLoad(m_i64, b.CreateInBoundsGEP(m_i64, m_activeLanes, sub));
            }
            call->replaceAllUsesWith(v);
            call->eraseFromParent();
        }
}

/// Clones region `k`'s blocks into the loop nest: edges to a barrier or the end go to one
/// block per target (`exitBlocks`, which continue at the x latch), phis keep the region's
/// incoming edges only, and the work-item placeholders become the loop's ids.
void RegionBuilder::cloneMembers(size_t k, const LoopNest& nest,
                                 std::map<int, BasicBlock*>& exitBlocks) {
    const Region& r = m_regions[k];
    SmallPtrSet<BasicBlock*, 32> memberSet(m_members[k].begin(), m_members[k].end());
    ValueToValueMapTy vmap;
    std::vector<BasicBlock*> clones;
    for (BasicBlock* bb : m_members[k]) {
        BasicBlock* c = CloneBasicBlock(bb, vmap, ".r" + std::to_string(k), &m_w);
        vmap[bb] = c;
        clones.push_back(c);
    }
    for (int t : r.targets) {
        exitBlocks[t] = BasicBlock::Create(m_ctx, "to." + std::to_string(t), &m_w);
        if (m_resumable) {
            // The region this work-item resumes in.
            IRBuilder<> eb(exitBlocks[t]);
            const uint32_t next = t == kExit ? uint32_t(m_entries.size()) : uint32_t(t);
            eb.CreateStore(eb.getInt32(next), eb.CreateInBoundsGEP(m_i32, m_state, nest.linear));
        }
        BranchInst::Create(nest.xLatch, exitBlocks[t]);
    }
    for (BasicBlock* c : clones) {
        Instruction* term = c->getTerminator();
        for (unsigned s = 0; s < term->getNumSuccessors(); ++s) {
            BasicBlock* target = term->getSuccessor(s);
            if (target == m_exit)
                term->setSuccessor(s, exitBlocks[kExit]);
            else if (m_isBarrier.test(m_index.lookup(target)))
                term->setSuccessor(s, exitBlocks[m_regionOfEntry.lookup(target)]);
        }
        for (PHINode& phi : c->phis())
            for (int i = int(phi.getNumIncomingValues()) - 1; i >= 0; --i)
                if (!memberSet.contains(phi.getIncomingBlock(unsigned(i))))
                    phi.removeIncomingValue(unsigned(i), false);
    }
    for (BasicBlock* c : clones)
        for (Instruction& inst : *c)
            RemapInstruction(&inst, vmap, RF_NoModuleLevelChanges | RF_IgnoreMissingLocals);
    // Work-item placeholders -> this loop's indices.
    for (BasicBlock* c : clones) {
        for (Instruction& inst : make_early_inc_range(*c)) {
            auto* call = dyn_cast<CallInst>(&inst);
            if (!call)
                continue;
            Function* f = call->getCalledFunction();
            Value* v = nullptr;
            if (f == m_ph.localId[0])
                v = nest.x ? static_cast<Value*>(nest.x) : ConstantInt::get(m_i64, 0);
            else if (f == m_ph.localId[1])
                v = nest.y;
            else if (f == m_ph.localId[2])
                v = nest.z;
            else if (f == m_ph.linear)
                v = nest.linear;
            if (v) {
                call->replaceAllUsesWith(v);
                call->eraseFromParent();
            }
        }
    }
    replaceActiveLanes(k, clones, nest);
    IRBuilder<> b(nest.xHead);
    auto* body = cast<BasicBlock>(vmap[m_entries[k]]);
    if (!m_resumable || k == 0) {
        b.CreateBr(body); // every work-item starts in region 0
        return;
    }
    // Only the work-items waiting at this region's barrier run it (in rounds: of the sub-groups
    // that chose it).
    Value* here = b.CreateLoad(m_i32, b.CreateInBoundsGEP(m_i32, m_state, nest.linear));
    Value* runs = b.CreateICmpEQ(here, b.getInt32(uint32_t(k)));
    if (m_rounds) {
        Value* chosen =
            b.CreateLoad(m_i32, b.CreateInBoundsGEP(m_i32, m_chosen, subGroupOf(b, nest.linear)));
        runs = b.CreateAnd(runs, b.CreateICmpEQ(chosen, b.getInt32(uint32_t(k))));
    }
    b.CreateCondBr(runs, body, nest.xLatch);
}

/// Ties the regions together: a region with one successor jumps there, others go through the
/// dispatcher with the barrier the work-items reached.
void RegionBuilder::linkRegions() {
    BasicBlock* resume = m_rounds      ? emitRoundDispatcher()
                         : m_resumable ? emitResumeDispatcher()
                                       : nullptr;
    for (size_t k = 0; k < m_regions.size(); ++k) {
        Region& r = m_regions[k];
        IRBuilder<> b(r.done);
        for (const UniformCopy& c : m_copiesAfter[k])
            b.CreateStore(b.CreateLoad(c.next->getAllocatedType(), c.next), c.cur);
        if (resume) {
            if (m_rounds)
                b.CreateStore(b.getInt32(uint32_t(k)), m_current);
            b.CreateBr(resume);
        } else if (r.targets.size() == 1) {
            int t = r.targets[0];
            b.CreateBr(t == kExit ? m_exit : m_regions[size_t(t)].pre);
        } else if (r.targets.empty()) {
            b.CreateBr(m_exit); // the region never ends: this block is unreachable
        } else {
            if (!m_dispatch) {
                m_nextSlot = m_eb.CreateAlloca(m_i32, nullptr, "next_region");
                m_dispatch = BasicBlock::Create(m_ctx, "dispatch", &m_w);
                IRBuilder<> db(m_dispatch);
                auto* sw = db.CreateSwitch(db.CreateLoad(m_i32, m_nextSlot), m_exit,
                                           unsigned(m_regions.size()));
                for (size_t j = 0; j < m_regions.size(); ++j)
                    sw->addCase(db.getInt32(uint32_t(j)), m_regions[j].pre);
            }
            Value* differ = m_reached ? b.CreateICmpNE(b.CreateLoad(m_i32, m_reachedAnd),
                                                       b.CreateLoad(m_i32, m_reachedOr))
                                      : nullptr;
            Instruction* store = b.CreateStore(r.next, m_nextSlot);
            b.CreateBr(m_dispatch);
            if (differ) {
                // Work-items of the group went on to different regions: the hook names two.
                Instruction* fail = SplitBlockAndInsertIfThen(
                    differ, store, false, MDBuilder(m_ctx).createUnlikelyBranchWeights());
                FunctionCallee hook = m_w.getParent()->getOrInsertFunction(
                    cpu::kBarrierCheckHookName, b.getVoidTy(), b.getPtrTy(), b.getPtrTy());
                IRBuilder<>(fail).CreateCall(hook, {m_group.barrierCheckCtx, m_reached});
            }
        }
    }
    m_entry->getTerminator()->setSuccessor(0, m_regions[0].pre);
}

/// A loop over [0, n) after block `from`, for the dispatchers' scans: `body` gets a builder in
/// the loop's block, the index (`wi`) and the running value (`initial` at first), and returns
/// the next value. Returns the block after the loop and the last value there (`result`).
template <class Body>
std::pair<BasicBlock*, PHINode*> emitScan(Function& f, BasicBlock* from, Value* n, Value* initial,
                                          const std::string& name, const char* result,
                                          Body&& body) {
    LLVMContext& ctx = f.getContext();
    Type* i64 = Type::getInt64Ty(ctx);
    BasicBlock* loop = BasicBlock::Create(ctx, name, &f);
    BasicBlock* after = BasicBlock::Create(ctx, name + ".done", &f);
    IRBuilder<> b(from);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    PHINode* i = b.CreatePHI(i64, 2, "wi");
    PHINode* acc = b.CreatePHI(initial->getType(), 2, "acc");
    Value* next = body(b, i, acc);
    Value* i1 = b.CreateAdd(i, b.getInt64(1));
    b.CreateCondBr(b.CreateICmpULT(i1, n), loop, after);
    i->addIncoming(b.getInt64(0), from);
    i->addIncoming(i1, loop);
    acc->addIncoming(initial, from);
    acc->addIncoming(next, loop);
    IRBuilder<> ab(after);
    PHINode* last = ab.CreatePHI(initial->getType(), 1, result);
    last->addIncoming(next, loop);
    return {after, last};
}

/// The next region of resumable regions: the lowest-numbered one entered through a sub-group
/// barrier that some work-item waits at; else the lowest any waits at (the group's barrier, all
/// of them there in a valid kernel); the end once every work-item has ended.
BasicBlock* RegionBuilder::emitResumeDispatcher() {
    const uint32_t none = ~0u; // below it: a region, or m_regions.size() for "ended"
    // Regions entered through a sub-group barrier: as bits of a constant up to 63 regions (the
    // states are then below 64), else a table of flags indexed by the state (each non-uniform
    // sub-group call is one or two regions, so 30 of them in a branch pass 63).
    uint64_t subGroupEntries = 0;
    std::vector<uint8_t> flags(m_entries.size() + 1, 0);
    for (size_t k = 1; k < m_entries.size(); ++k)
        if (m_subGroupBarriers.contains(m_entries[k])) {
            flags[k] = 1;
            if (k < 64)
                subGroupEntries |= uint64_t(1) << k;
        }
    GlobalVariable* table = nullptr;
    if (m_entries.size() > 63) {
        Constant* init = ConstantDataArray::get(m_ctx, flags);
        table = new GlobalVariable(*m_w.getParent(), init->getType(), true,
                                   GlobalValue::PrivateLinkage, init, "sub_group_regions");
    }
    BasicBlock* dispatch = BasicBlock::Create(m_ctx, "resume", &m_w);
    // One scan over the work-items' states: `only` restricts it to the sub-group regions.
    auto scan = [&](BasicBlock* from, bool only, const char* name) {
        return emitScan(
            m_w, from, m_group.items, ConstantInt::get(m_i32, none), name, "next_region",
            [&](IRBuilder<>& b, Value* i, Value* best) -> Value* {
                Value* s = b.CreateLoad(m_i32, b.CreateInBoundsGEP(m_i32, m_state, i));
                Value* take = b.CreateICmpULT(s, best);
                if (only) {
                    Value* bit;
                    if (table)
                        bit =
                            b.CreateZExt(b.CreateLoad(b.getInt8Ty(),
                                                      b.CreateInBoundsGEP(b.getInt8Ty(), table, s)),
                                         m_i64);
                    else
                        bit = b.CreateAnd(
                            b.CreateLShr(b.getInt64(subGroupEntries), b.CreateZExt(s, m_i64)), 1);
                    take = b.CreateAnd(take, b.CreateICmpNE(bit, b.getInt64(0)));
                }
                return b.CreateSelect(take, s, best);
            });
    };
    auto [afterSub, sub] = scan(dispatch, true, "resume.sub");
    BasicBlock* all = BasicBlock::Create(m_ctx, "resume.all", &m_w);
    BasicBlock* go = BasicBlock::Create(m_ctx, "resume.go", &m_w);
    IRBuilder<> b(afterSub);
    b.CreateCondBr(b.CreateICmpNE(sub, b.getInt32(none)), go, all);
    auto [afterAll, any] = scan(all, false, "resume.any");
    IRBuilder<>(afterAll).CreateBr(go);
    b.SetInsertPoint(go);
    PHINode* next = b.CreatePHI(m_i32, 2, "resume_region");
    next->addIncoming(sub, afterSub);
    next->addIncoming(any, afterAll);
    auto* sw = b.CreateSwitch(next, m_exit, unsigned(m_regions.size()));
    for (size_t j = 1; j < m_regions.size(); ++j)
        sw->addCase(b.getInt32(uint32_t(j)), m_regions[j].pre);
    return dispatch;
}

/// The dispatcher of resumable regions that run in rounds (buildRegions' `yields`). Entered
/// after each region with m_current set: the next region of this round is the lowest that a
/// sub-group chose above the current one; with none left (or after region 0) a new round
/// begins. A new round chooses per sub-group, from its work-items' states, a yield point if any
/// waits at one, else the lowest sub-group barrier any waits at (keys `kind << 32 | region`,
/// the smallest wins). When no sub-group has one, every work-item waits at the group's barrier
/// or has ended: the lowest state is next, for every sub-group.
BasicBlock* RegionBuilder::emitRoundDispatcher() {
    const uint32_t none = ~0u;
    const uint64_t noKey = ~uint64_t(0);
    // Per state: 0 a yield point, 1 another sub-group barrier, 2 the group's barrier or the end.
    std::vector<uint8_t> kinds(m_entries.size() + 1, 2);
    for (size_t k = 1; k < m_entries.size(); ++k)
        kinds[k] = m_yields.contains(m_entries[k])             ? 0
                   : m_subGroupBarriers.contains(m_entries[k]) ? 1
                                                               : 2;
    Constant* init = ConstantDataArray::get(m_ctx, kinds);
    auto* table = new GlobalVariable(*m_w.getParent(), init->getType(), true,
                                     GlobalValue::PrivateLinkage, init, "region_kinds");

    BasicBlock* next = BasicBlock::Create(m_ctx, "round.next", &m_w);
    BasicBlock* fresh = BasicBlock::Create(m_ctx, "round", &m_w);
    BasicBlock* group = BasicBlock::Create(m_ctx, "round.group", &m_w);
    BasicBlock* go = BasicBlock::Create(m_ctx, "round.go", &m_w);
    IRBuilder<> b(next);
    Value* width = b.CreateZExt(m_group.subGroupWidth, m_i64);
    Value* subGroups = b.CreateUDiv(b.CreateAdd(m_group.items, b.CreateSub(width, b.getInt64(1))),
                                    width, "sub_groups");
    auto chosenAt = [&](IRBuilder<>& ib, Value* sg) {
        return ib.CreateInBoundsGEP(m_i32, m_chosen, sg);
    };
    auto loop = [&](BasicBlock* from, Value* n, Value* initial, const char* name, auto&& body) {
        return emitScan(m_w, from, n, initial, name, (std::string(name) + ".result").c_str(), body);
    };
    auto umin = [](IRBuilder<>& ib, Value* x, Value* y) {
        return ib.CreateSelect(ib.CreateICmpULT(x, y), x, y);
    };

    // The rest of this round: the lowest region chosen above the current one.
    BasicBlock* scanRest = BasicBlock::Create(m_ctx, "round.rest", &m_w);
    Value* current = b.CreateLoad(m_i32, m_current);
    b.CreateCondBr(b.CreateICmpEQ(current, b.getInt32(0)), fresh, scanRest);
    auto [afterRest, rest] =
        loop(scanRest, subGroups, b.getInt32(none), "round.rest.sg",
             [&](IRBuilder<>& lb, Value* sg, Value* best) {
                 Value* c = lb.CreateLoad(m_i32, chosenAt(lb, sg));
                 Value* later = lb.CreateICmpUGT(c, current);
                 return lb.CreateSelect(lb.CreateAnd(later, lb.CreateICmpULT(c, best)), c, best);
             });
    IRBuilder<> rb(afterRest);
    rb.CreateCondBr(rb.CreateICmpNE(rest, rb.getInt32(none)), go, fresh);

    // A new round: each sub-group's choice, then the lowest of them.
    auto [afterChoose, unused] = loop(
        fresh, m_group.items, b.getInt64(noKey), "round.choose",
        [&](IRBuilder<>& lb, Value* i, Value* acc) {
            Value* lane = lb.CreateURem(i, width);
            Value* before =
                lb.CreateSelect(lb.CreateICmpEQ(lane, lb.getInt64(0)), lb.getInt64(noKey), acc);
            Value* state = lb.CreateLoad(m_i32, lb.CreateInBoundsGEP(m_i32, m_state, i));
            Value* kind = lb.CreateZExt(
                lb.CreateLoad(lb.getInt8Ty(), lb.CreateInBoundsGEP(lb.getInt8Ty(), table, state)),
                m_i64);
            Value* key =
                lb.CreateSelect(lb.CreateICmpULT(kind, lb.getInt64(2)),
                                lb.CreateOr(lb.CreateShl(kind, 32), lb.CreateZExt(state, m_i64)),
                                lb.getInt64(noKey));
            Value* after = umin(lb, before, key);
            Value* region = lb.CreateSelect(lb.CreateICmpEQ(after, lb.getInt64(noKey)),
                                            lb.getInt32(none), lb.CreateTrunc(after, m_i32));
            lb.CreateStore(region, chosenAt(lb, lb.CreateUDiv(i, width)));
            return after;
        });
    (void)unused;
    auto [afterLowest, lowest] =
        loop(afterChoose, subGroups, b.getInt32(none), "round.lowest",
             [&](IRBuilder<>& lb, Value* sg, Value* best) {
                 return umin(lb, lb.CreateLoad(m_i32, chosenAt(lb, sg)), best);
             });
    IRBuilder<> lowB(afterLowest);
    lowB.CreateCondBr(lowB.CreateICmpNE(lowest, lowB.getInt32(none)), go, group);

    // Every sub-group at the group's barrier or ended: the lowest state, for all of them.
    auto [afterAny, any] = loop(
        group, m_group.items, b.getInt32(none), "round.any",
        [&](IRBuilder<>& lb, Value* i, Value* best) {
            return umin(lb, lb.CreateLoad(m_i32, lb.CreateInBoundsGEP(m_i32, m_state, i)), best);
        });
    auto [afterFill, filled] = loop(afterAny, subGroups, b.getInt32(0), "round.fill",
                                    [&](IRBuilder<>& lb, Value* sg, Value* acc) {
                                        lb.CreateStore(any, chosenAt(lb, sg));
                                        return acc;
                                    });
    (void)filled;
    IRBuilder<>(afterFill).CreateBr(go);

    b.SetInsertPoint(go);
    PHINode* target = b.CreatePHI(m_i32, 3, "round_region");
    target->addIncoming(rest, afterRest);
    target->addIncoming(lowest, afterLowest);
    target->addIncoming(any, afterFill);
    auto* sw = b.CreateSwitch(target, m_exit, unsigned(m_regions.size()));
    for (size_t j = 1; j < m_regions.size(); ++j)
        sw->addCase(b.getInt32(uint32_t(j)), m_regions[j].pre);
    return next;
}

/// Checks that every value a clone uses comes from its own region or the prologue, then
/// erases the original blocks (all but the exit).
bool RegionBuilder::eraseOriginals(std::string& error) {
    SmallPtrSet<BasicBlock*, 32> originalSet(m_blocks.begin(), m_blocks.end());
    originalSet.erase(m_exit);
    for (BasicBlock& bb : m_w) {
        if (originalSet.contains(&bb))
            continue;
        for (Instruction& inst : bb)
            for (Value* op : inst.operands())
                if (auto* def = dyn_cast<Instruction>(op);
                    def && originalSet.contains(def->getParent())) {
                    error = "internal error: value '" + def->getName().str() +
                            "' of kernel block '" + def->getParent()->getName().str() +
                            "' escapes its barrier region";
                    return false;
                }
    }
    for (BasicBlock* bb : m_blocks)
        if (bb != m_exit)
            bb->dropAllReferences();
    for (BasicBlock* bb : m_blocks)
        if (bb != m_exit)
            bb->eraseFromParent();
    return true;
}

bool RegionBuilder::run(unsigned& regionCount, std::string& error) {
    numberBlocks();
    findRegions();
    regionCount = unsigned(m_entries.size());
    if (!m_barriers.empty()) {
        privatiseArrays();
        if (!storeCrossingValues(error))
            return false;
    }
    m_regions.resize(m_entries.size());
    if (m_resumable) {
        m_state = m_eb.CreateAlloca(m_i32, m_group.items, "resume_region");
    }
    if (m_rounds) {
        // Per sub-group (at most one per work-item), and the region just run: region 0 runs
        // every work-item first, whatever was chosen.
        m_chosen = m_eb.CreateAlloca(m_i32, m_group.items, "round_region");
        m_current = m_eb.CreateAlloca(m_i32, nullptr, "round_current");
    }
    for (size_t k = 0; k < m_entries.size(); ++k)
        emitRegion(k);
    linkRegions();
    return eraseOriginals(error);
}

} // namespace

size_t splitPointerInductions(Function& w, Uniformity& u) {
    return splitInductions(w, u);
}

bool buildRegions(Function& w, BasicBlock* entry, BasicBlock* start, BasicBlock* exit,
                  const std::vector<BasicBlock*>& barriers,
                  const SmallPtrSetImpl<BasicBlock*>& subGroupBarriers,
                  const SmallPtrSetImpl<BasicBlock*>& yields, const Uniformity& uniformity,
                  const Placeholders& ph, const GroupShape& group, unsigned& regionCount,
                  std::string& error) {
    RegionBuilder builder(w, entry, start, exit, barriers, subGroupBarriers, yields, uniformity, ph,
                          group);
    return builder.run(regionCount, error);
}

} // namespace duet::rt::wg
