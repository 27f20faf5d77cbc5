// DUET_KERNEL_TIMEOUT on the NVIDIA device: loop back-edges poll the GPU's %globaltimer (every
// 1024th iteration) and the launch's guard record in device memory, and a work-item past the
// launch's deadline marks the record and exits. A running CUDA kernel cannot be stopped from the
// host, so the code stops itself.
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/ADT/DepthFirstIterator.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <map>
#include <vector>

namespace duet::rt::nvptx {

using namespace llvm;

namespace {

constexpr unsigned kPollEvery = 1024;        ///< iterations between two reads of the timer
constexpr unsigned kBoundedTripCount = 4096; ///< loops that never run longer are not polled

/// One back-edge to poll: `latch` -> `header` of a loop.
struct BackEdge {
    BasicBlock* latch;
    BasicBlock* header;
};

/// The back-edges of `f`'s loops that may run long.
std::vector<BackEdge> backEdgesToPoll(Function& f) {
    DominatorTree dt(f);
    LoopInfo li(dt);
    TargetLibraryInfoImpl tlii(Triple(f.getParent()->getTargetTriple()));
    TargetLibraryInfo tli(tlii, &f);
    AssumptionCache ac(f);
    ScalarEvolution se(f, tli, ac, dt, li);
    std::vector<BackEdge> edges;
    for (Loop* top : li)
        for (Loop* l : depth_first(top)) {
            const unsigned max = se.getSmallConstantMaxTripCount(l);
            if (max && max <= kBoundedTripCount)
                continue;
            SmallVector<BasicBlock*, 4> latches;
            l->getLoopLatches(latches);
            for (BasicBlock* latch : latches) {
                // One edge to the header per latch (a switch with two cases to it is left out:
                // splitting one of two identical edges would need both rewritten).
                unsigned toHeader = 0;
                for (BasicBlock* s : successors(latch))
                    toHeader += s == l->getHeader();
                if (toHeader == 1)
                    edges.push_back({latch, l->getHeader()});
            }
        }
    return edges;
}

} // namespace

namespace {

/// The code of one poll, `check` -> header or `stop`: reads the timer and the record, sets the
/// launch's start if this is its first poll, and decides. Returns the block that branches back
/// to the header (the header's new predecessor).
BasicBlock* emitPoll(BasicBlock* slow, BasicBlock* header, BasicBlock* stop, PHINode* why,
                     Argument* record, uint64_t timeoutNs) {
    Function& f = *slow->getParent();
    Module& m = *f.getParent();
    LLVMContext& ctx = f.getContext();
    Type* i32 = Type::getInt32Ty(ctx);
    Type* i64 = Type::getInt64Ty(ctx);
    IRBuilder<> pb(slow);
    Value* now = pb.CreateCall(
        Intrinsic::getDeclaration(&m, Intrinsic::nvvm_read_ptx_sreg_globaltimer), {}, "duet.now");
    Value* startAt =
        pb.CreateConstInBoundsGEP1_64(pb.getInt8Ty(), record, offsetof(nvidia::GuardRecord, start));
    LoadInst* seen = pb.CreateAlignedLoad(i32, record, Align(4), /*isVolatile=*/true);
    LoadInst* start = pb.CreateAlignedLoad(i64, startAt, Align(8), /*isVolatile=*/true);
    // The launch's first poll sets its start: one deadline for every work-item and grid.
    BasicBlock* claim = BasicBlock::Create(ctx, "duet.start", &f);
    BasicBlock* decide = BasicBlock::Create(ctx, "duet.decide", &f);
    pb.CreateCondBr(pb.CreateICmpEQ(start, ConstantInt::get(i64, 0)), claim, decide);
    IRBuilder<> cb(claim);
    Value* old = cb.CreateExtractValue(
        cb.CreateAtomicCmpXchg(startAt, ConstantInt::get(i64, 0), now, MaybeAlign(8),
                               AtomicOrdering::Monotonic, AtomicOrdering::Monotonic),
        0);
    Value* claimed =
        cb.CreateSelect(cb.CreateICmpEQ(old, ConstantInt::get(i64, 0)), now, old, "duet.first");
    cb.CreateBr(decide);
    IRBuilder<> db(decide);
    PHINode* from = db.CreatePHI(i64, 2, "duet.launch_start");
    from->addIncoming(start, slow);
    from->addIncoming(claimed, claim);
    Value* late = db.CreateICmpUGT(now, db.CreateAdd(from, ConstantInt::get(i64, timeoutNs)));
    Value* stopped = db.CreateICmpNE(seen, ConstantInt::get(i32, 0));
    why->addIncoming(db.CreateZExt(late, i32), decide);
    db.CreateCondBr(db.CreateOr(late, stopped, "duet.stop"), stop, header);
    return decide;
}

/// Polls the back-edges of kernel `f` (its guard record the last parameter).
void pollKernel(Function& f, const std::vector<BackEdge>& edges, uint64_t timeoutNs) {
    LLVMContext& ctx = f.getContext();
    Type* i32 = Type::getInt32Ty(ctx);
    Argument* record = f.getArg(f.arg_size() - 1);
    // One exit block per kernel: mark the record (timed out, when this poll found it late),
    // leave the work-item.
    BasicBlock* stop = BasicBlock::Create(ctx, "duet.timeout", &f);
    IRBuilder<> sb(stop);
    PHINode* why = sb.CreatePHI(i32, unsigned(edges.size()), "duet.why");
    sb.CreateAtomicRMW(AtomicRMWInst::Or, record, why, MaybeAlign(4), AtomicOrdering::Monotonic);
    sb.CreateCall(Intrinsic::getDeclaration(f.getParent(), Intrinsic::nvvm_exit));
    sb.CreateUnreachable();

    std::map<BasicBlock*, PHINode*> counters; // per loop header
    for (const BackEdge& e : edges) {
        BasicBlock* header = e.header;
        PHINode*& count = counters[header];
        if (!count) {
            IRBuilder<> hb(&*header->getFirstInsertionPt());
            count = hb.CreatePHI(i32, 4, "duet.iterations");
            for (BasicBlock* pred : predecessors(header))
                count->addIncoming(ConstantInt::get(i32, 0), pred);
        }
        // latch -> [edge: count, every kPollEvery-th to slow] -> header
        BasicBlock* edge = SplitEdge(e.latch, header);
        edge->setName("duet.backedge");
        // SplitEdge moved the header's incoming values from the latch to `edge`, the
        // counter's 0 too: it counts on from here instead.
        Instruction* br = edge->getTerminator();
        IRBuilder<> eb(br);
        Value* next = eb.CreateAdd(count, ConstantInt::get(i32, 1), "duet.next");
        Value* due = eb.CreateICmpEQ(eb.CreateAnd(next, kPollEvery - 1), ConstantInt::get(i32, 0),
                                     "duet.due");
        BasicBlock* slow = BasicBlock::Create(ctx, "duet.poll", &f);
        eb.CreateCondBr(due, slow, header);
        br->eraseFromParent();
        BasicBlock* back = emitPoll(slow, header, stop, why, record, timeoutNs);
        // The header's phis: `back` is a new predecessor with `edge`'s values; the counter
        // goes on from `next` on both.
        for (PHINode& phi : header->phis()) {
            if (&phi == count) {
                phi.setIncomingValueForBlock(edge, next);
                phi.addIncoming(next, back);
            } else {
                phi.addIncoming(phi.getIncomingValueForBlock(edge), back);
            }
        }
    }
}

} // namespace

unsigned insertTimeoutPolls(Module& m, uint64_t timeoutNs, unsigned& missed) {
    unsigned polled = 0;
    missed = 0;
    for (Function& f : m) {
        if (f.isDeclaration())
            continue;
        std::vector<BackEdge> edges = backEdgesToPoll(f);
        if (edges.empty())
            continue;
        if (!isKernel(f)) {
            missed += unsigned(edges.size());
            continue;
        }
        pollKernel(f, edges, timeoutNs);
        polled += unsigned(edges.size());
    }
    return polled;
}

} // namespace duet::rt::nvptx
