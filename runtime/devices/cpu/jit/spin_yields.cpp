// Spin loops and their yield points: the CPU device's independent forward progress between
// sub-groups (insertSpinYields).
#include "devices/cpu/jit/regions.hpp"
#include "devices/cpu/jit/work_group.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>

namespace duet::rt::wg {

using namespace llvm;

namespace {

/// Whether `f`, or a function it calls (to `depth` levels), holds an atomic or volatile access
/// whose result a caller may see: an atomic or volatile load, a read-modify-write, a
/// compare-exchange.
bool readsAtomically(const Function* f, unsigned depth) {
    if (!f || f->isDeclaration() || depth == 0)
        return false;
    for (const Instruction& inst : instructions(*f)) {
        if (auto* ld = dyn_cast<LoadInst>(&inst); ld && (ld->isAtomic() || ld->isVolatile()))
            return true;
        if (isa<AtomicRMWInst, AtomicCmpXchgInst>(inst))
            return true;
        if (auto* call = dyn_cast<CallBase>(&inst);
            call && readsAtomically(call->getCalledFunction(), depth - 1))
            return true;
    }
    return false;
}

/// Whether a value of `roots` depends, inside `loop`, on what an atomic or volatile read returned:
/// through SSA operands, private variables (what the loop stores into them or hands to a call),
/// and calls to functions holding such reads. `merges` is set when the walk met a phi joining
/// paths inside the loop or a private variable, whose value may also depend on which branches
/// the loop took.
bool atomicallyRead(const Loop& loop, SmallVector<const Value*, 16> work, bool& merges) {
    SmallPtrSet<const Value*, 32> seen;
    SmallPtrSet<const Value*, 8> privates;
    while (!work.empty()) {
        auto* i = dyn_cast<Instruction>(work.pop_back_val());
        if (!i || !loop.contains(i) || !seen.insert(i).second)
            continue;
        if (auto* ld = dyn_cast<LoadInst>(i)) {
            if (ld->isAtomic() || ld->isVolatile())
                return true;
            const Value* base = getUnderlyingObject(ld->getPointerOperand());
            if (isa<AllocaInst>(base) && privates.insert(base).second) {
                merges = true;
                for (BasicBlock* bb : loop.blocks())
                    for (Instruction& other : *bb) {
                        if (auto* st = dyn_cast<StoreInst>(&other);
                            st && getUnderlyingObject(st->getPointerOperand()) == base)
                            work.push_back(st->getValueOperand());
                        else if (auto* call = dyn_cast<CallBase>(&other))
                            for (const Value* arg : call->args())
                                if (getUnderlyingObject(arg) == base)
                                    work.push_back(call);
                    }
            }
            work.push_back(ld->getPointerOperand());
            continue;
        }
        if (isa<AtomicRMWInst, AtomicCmpXchgInst>(i))
            return true;
        if (auto* call = dyn_cast<CallBase>(i);
            call && readsAtomically(call->getCalledFunction(), 3))
            return true;
        if (isa<PHINode>(i) && i->getParent() != loop.getHeader())
            merges = true; // a join inside the loop (a header's phis carry values round it)
        for (const Value* op : i->operands())
            work.push_back(op);
    }
    return false;
}

/// insertSpinYields' test: does an exit condition of `loop` depend on what an atomic or volatile
/// read returned? Directly (`while (atomic_load(&f) != v)`), or through a phi or private
/// variable while some branch in the loop does (`if (atomic_load(&f)) done = true;`).
bool waitsOnOthers(const Loop& loop) {
    auto conditions = [&](ArrayRef<BasicBlock*> blocks) {
        SmallVector<const Value*, 16> out;
        for (BasicBlock* bb : blocks) {
            const Instruction* term = bb->getTerminator();
            if (auto* br = dyn_cast<BranchInst>(term); br && br->isConditional())
                out.push_back(br->getCondition());
            else if (auto* sw = dyn_cast<SwitchInst>(term))
                out.push_back(sw->getCondition());
        }
        return out;
    };
    SmallVector<BasicBlock*, 4> exiting;
    loop.getExitingBlocks(exiting);
    bool merges = false;
    if (atomicallyRead(loop, conditions(exiting), merges))
        return true;
    bool unused = false;
    return merges && atomicallyRead(loop, conditions(loop.getBlocks()), unused);
}

} // namespace

size_t insertSpinYields(Function& w, std::vector<BasicBlock*>& barriers,
                        SmallPtrSetImpl<BasicBlock*>& yields) {
    DominatorTree dt(w);
    LoopInfo li(dt);
    SmallVector<Loop*, 4> spinning;
    for (Loop* loop : li.getLoopsInPreorder())
        if (waitsOnOthers(*loop))
            spinning.push_back(loop);
    Type* i32 = Type::getInt32Ty(w.getContext());
    for (Loop* loop : spinning) {
        // An iteration count, and at each back edge a check that takes the yield point every
        // kSpinYieldEvery iterations: a loop that ends by itself (a compare-exchange retry)
        // never leaves its region.
        BasicBlock* header = loop->getHeader();
        SmallVector<BasicBlock*, 4> latches;
        loop->getLoopLatches(latches);
        PHINode* count = PHINode::Create(i32, 4, "spin.count");
        count->insertBefore(header->begin());
        for (BasicBlock* p : predecessors(header))
            if (!loop->contains(p) && count->getBasicBlockIndex(p) < 0)
                count->addIncoming(ConstantInt::get(i32, 0), p);
        for (BasicBlock* latch : latches) {
            BasicBlock* check = splitEdgeBlock(latch, header, "spin.check");
            // `leave`, the edge into the yield point, is where RegionBuilder stores the values
            // that live on in the loop (storeCrossingValues).
            BasicBlock* leave = BasicBlock::Create(w.getContext(), "spin.leave", &w, header);
            BasicBlock* yield = BasicBlock::Create(w.getContext(), "spin.yield", &w, header);
            BranchInst::Create(yield, leave);
            BranchInst::Create(header, yield);
            check->getTerminator()->eraseFromParent();
            IRBuilder<> b(check);
            Value* next = b.CreateAdd(count, ConstantInt::get(i32, 1));
            Value* due = b.CreateICmpEQ(b.CreateAnd(next, kSpinYieldEvery - 1), b.getInt32(0));
            b.CreateCondBr(due, leave, header);
            for (PHINode& phi : header->phis())
                if (&phi != count)
                    phi.addIncoming(phi.getIncomingValueForBlock(check), yield);
            count->addIncoming(next, check);
            count->addIncoming(next, yield);
            barriers.push_back(yield);
            yields.insert(yield);
        }
    }
    return spinning.size();
}

} // namespace duet::rt::wg
