// What the loop vectoriser is told before it runs: that __global and __local memory never
// overlap, and which inner loops of work-item loops it should leave to the SLP vectoriser.
#include "devices/cpu/jit/work_item_loops.hpp"

#include "core/environment.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Metadata.h>

#include <vector>

namespace duet::rt::wg {

using namespace llvm;

PreservedAnalyses AddressSpaceScopes::run(Function& f, FunctionAnalysisManager&) {
    LLVMContext& ctx = f.getContext();
    MDBuilder mdb(ctx);
    MDNode* domain = mdb.createAnonymousAliasScopeDomain("duet.address-spaces");
    MDNode* global = mdb.createAnonymousAliasScope(domain, "global");
    MDNode* local = mdb.createAnonymousAliasScope(domain, "local");
    MDNode* globalList = MDNode::get(ctx, {global});
    MDNode* localList = MDNode::get(ctx, {local});
    bool changed = false;
    for (Instruction& i : instructions(f)) {
        Value* ptr = getLoadStorePointerOperand(&i);
        if (!ptr)
            continue;
        unsigned as = ptr->getType()->getPointerAddressSpace();
        bool isLocal = as == 3;
        if (!isLocal && as != 1 && as != 2)
            continue;
        i.setMetadata(LLVMContext::MD_alias_scope,
                      MDNode::concatenate(i.getMetadata(LLVMContext::MD_alias_scope),
                                          isLocal ? localList : globalList));
        i.setMetadata(LLVMContext::MD_noalias,
                      MDNode::concatenate(i.getMetadata(LLVMContext::MD_noalias),
                                          isLocal ? globalList : localList));
        changed = true;
    }
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

namespace {

/// One memory access of a loop whose address advances by a constant step an iteration.
struct Stream {
    const SCEV* start;
    int64_t step;
};

/// What an iteration of innermost loop `l` does: its memory accesses, and its other
/// computations (arithmetic, comparisons, selects, intrinsic calls: the counter's too).
struct LoopBody {
    unsigned accesses = 0;
    unsigned operations = 0;
    bool lanes = false; ///< two accesses are lanes of one element (laneStreams())
};

/// True when two of `streams` advance by the same step and start less than a step apart: the
/// lanes of one vector (or struct) element an iteration, as the Scalarizer leaves an OpenCL
/// `uint4 v = p[i]`.
bool laneStreams(ScalarEvolution& se, const std::vector<Stream>& streams) {
    for (size_t i = 0; i < streams.size(); ++i)
        for (size_t j = i + 1; j < streams.size(); ++j) {
            if (streams[i].step != streams[j].step)
                continue;
            const auto* d =
                dyn_cast<SCEVConstant>(se.getMinusSCEV(streams[j].start, streams[i].start));
            if (!d)
                continue;
            const int64_t apart = d->getAPInt().getSExtValue();
            const int64_t step = streams[i].step < 0 ? -streams[i].step : streams[i].step;
            if (apart != 0 && apart < step && -apart < step)
                return true;
        }
    return false;
}

LoopBody inspect(const Loop& l, ScalarEvolution& se) {
    LoopBody body;
    std::vector<Stream> streams;
    const DataLayout& dl = l.getHeader()->getDataLayout();
    for (BasicBlock* bb : l.blocks())
        for (Instruction& i : *bb) {
            if (Value* ptr = getLoadStorePointerOperand(&i)) {
                ++body.accesses;
                Type* t = isa<LoadInst>(i) ? i.getType()
                                           : cast<StoreInst>(i).getValueOperand()->getType();
                const auto* rec = dyn_cast<SCEVAddRecExpr>(se.getSCEV(ptr));
                if (!rec || rec->getLoop() != &l || !rec->isAffine())
                    continue;
                const auto* step = dyn_cast<SCEVConstant>(rec->getStepRecurrence(se));
                const int64_t size = int64_t(dl.getTypeStoreSize(t).getFixedValue());
                if (!step)
                    continue;
                const int64_t s = step->getAPInt().getSExtValue();
                if (s > size || -s > size) // not a plain stream of consecutive elements
                    streams.push_back({rec->getStart(), s});
                continue;
            }
            if (auto* ii = dyn_cast<IntrinsicInst>(&i);
                ii && (ii->isAssumeLikeIntrinsic() || ii->isLifetimeStartOrEnd()))
                continue;
            if (isa<BinaryOperator, CmpInst, SelectInst, UnaryOperator, IntrinsicInst>(i))
                ++body.operations;
        }
    body.lanes = laneStreams(se, streams);
    return body;
}

/// Adds llvm.loop.vectorize.enable = false to `l`'s loop metadata (keeping what is there).
void disableLoopVectoriser(Loop& l) {
    LLVMContext& ctx = l.getHeader()->getContext();
    SmallVector<Metadata*, 4> ops{nullptr};
    if (MDNode* id = l.getLoopID())
        for (unsigned i = 1; i < id->getNumOperands(); ++i)
            ops.push_back(id->getOperand(i));
    ops.push_back(MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.vectorize.enable"),
                                    ConstantAsMetadata::get(ConstantInt::getFalse(ctx))}));
    MDNode* id = MDNode::getDistinct(ctx, ops);
    id->replaceOperandWith(0, id);
    l.setLoopID(id);
}

} // namespace

PreservedAnalyses LanewiseInnerLoops::run(Function& f, FunctionAnalysisManager& fam) {
    LoopInfo& li = fam.getResult<LoopAnalysis>(f);
    ScalarEvolution& se = fam.getResult<ScalarEvolutionAnalysis>(f);
    for (Loop* outer : li.getLoopsInPreorder()) {
        BasicBlock* latch = outer->getLoopLatch();
        if (outer->isInnermost() || !latch || !isWorkItemLoopLatch(latch->getTerminator()))
            continue;
        for (Loop* inner : outer->getLoopsInPreorder()) {
            BasicBlock* innerLatch = inner->getLoopLatch();
            if (!inner->isInnermost() || !innerLatch ||
                isWorkItemLoopLatch(innerLatch->getTerminator()))
                continue;
            const LoopBody body = inspect(*inner, se);
            if (!body.lanes || body.operations >= 4 * body.accesses)
                continue;
            disableLoopVectoriser(*inner);
            if (report)
                report->note(outer->getHeader(),
                             "its inner loop " + inner->getHeader()->getName().str() +
                                 " reads or writes vectors lane by lane (" +
                                 std::to_string(body.accesses) + " accesses, " +
                                 std::to_string(body.operations) +
                                 " operations an iteration): left to the SLP vectoriser, which "
                                 "keeps the vectors whole");
        }
    }
    return PreservedAnalyses::all(); // loop metadata only: no analysis reads it
}

bool lanewiseInnerLoopsEnabled() {
    return envSwitchOn("DUET_CPU_LANEWISE_LOOPS");
}

} // namespace duet::rt::wg
