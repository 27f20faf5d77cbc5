// DUET_KERNEL_TIMEOUT on the NVIDIA device: loop back-edges poll the GPU's %globaltimer (every
// 1024th iteration) and a flag in device memory, and a work-item past its deadline sets the flag
// and exits. A running CUDA kernel cannot be stopped from the host, so the code stops itself.
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/ADT/DepthFirstIterator.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
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

unsigned insertTimeoutPolls(Module& m, uint64_t timeoutNs) {
    LLVMContext& ctx = m.getContext();
    Type* i32 = Type::getInt32Ty(ctx);
    Type* i64 = Type::getInt64Ty(ctx);
    auto* flag = new GlobalVariable(m, i32, false, GlobalValue::ExternalLinkage,
                                    ConstantInt::get(i32, 0), nvidia::kTimeoutFlagSymbol, nullptr,
                                    GlobalValue::NotThreadLocal, 1 /* global */);
    flag->setAlignment(Align(4));
    Function* timer = Intrinsic::getDeclaration(&m, Intrinsic::nvvm_read_ptx_sreg_globaltimer);
    Function* exitFn = Intrinsic::getDeclaration(&m, Intrinsic::nvvm_exit);
    unsigned polled = 0;
    for (Function& f : m) {
        if (f.isDeclaration())
            continue;
        std::vector<BackEdge> edges = backEdgesToPoll(f);
        if (edges.empty())
            continue;
        // The function's deadline, from the timer when it starts.
        IRBuilder<> entry(&*f.getEntryBlock().getFirstInsertionPt());
        Value* deadline = entry.CreateAdd(entry.CreateCall(timer, {}, "duet.start"),
                                          ConstantInt::get(i64, timeoutNs), "duet.deadline");
        // One exit block per function: set the flag, leave the work-item.
        BasicBlock* stop = BasicBlock::Create(ctx, "duet.timeout", &f);
        IRBuilder<> sb(stop);
        sb.CreateStore(ConstantInt::get(i32, 1), flag, /*isVolatile=*/true);
        sb.CreateCall(exitFn);
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
            Value* due = eb.CreateICmpEQ(eb.CreateAnd(next, kPollEvery - 1),
                                         ConstantInt::get(i32, 0), "duet.due");
            BasicBlock* slow = BasicBlock::Create(ctx, "duet.poll", &f);
            eb.CreateCondBr(due, slow, header);
            br->eraseFromParent();
            IRBuilder<> pb(slow);
            Value* late = pb.CreateICmpUGT(pb.CreateCall(timer, {}, "duet.now"), deadline);
            Value* seen = pb.CreateICmpNE(pb.CreateLoad(i32, flag, /*isVolatile=*/true),
                                          ConstantInt::get(i32, 0));
            pb.CreateCondBr(pb.CreateOr(late, seen, "duet.stop"), stop, header);
            // The header's phis: `slow` is a new predecessor with `edge`'s values; the counter
            // goes on from `next` on both.
            for (PHINode& phi : header->phis()) {
                if (&phi == count) {
                    phi.setIncomingValueForBlock(edge, next);
                    phi.addIncoming(next, slow);
                } else {
                    phi.addIncoming(phi.getIncomingValueForBlock(edge), slow);
                }
            }
            ++polled;
        }
    }
    return polled;
}

} // namespace duet::rt::nvptx
