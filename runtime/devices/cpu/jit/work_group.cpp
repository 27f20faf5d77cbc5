// The work-group pass: kernels -> WorkGroupFn (region loops over work-items, barriers,
// per-work-item storage, __local memory, printf), see work_group.hpp.
//
// The scheme ("region loops", as in the AMD/Intel CPU runtimes and PoCL, without fibers):
//  1. Everything that depends on the work-item (work-item functions, barriers, printf,
//     __local variables) is inlined into the kernel, and the kernel into a new function
//     W(args, ctx) whose prologue loads the context and the arguments.
//  2. Each barrier gets a block of its own. A region starts at the kernel entry or at a barrier
//     and holds every block reachable from there without crossing another barrier.
//  3. Each region is cloned into a loop nest over local z, y, x (x innermost, so the loop
//     vectoriser maps work-items onto SIMD lanes). Reaching a barrier or the kernel's end ends
//     the work-item's turn; the (uniform) barrier reached picks the next region.
//  4. SSA values that can be live across a barrier, and private arrays used on both sides of
//     one, move to per-work-item storage: arrays of the group's size, indexed by the local
//     linear id (vectors as one array per component). Uniform values (a data-flow analysis
//     from the work-item ids) need a single slot, double-buffered where a region reads the old
//     value before redefining it.
//  5. Innermost loops that all work-items run the same number of times get implicit barriers
//     on their entry, back and exit edges: each iteration then runs as a loop over the
//     work-items, which the vectoriser widens (a loop over j inside the kernel would otherwise
//     keep every work-item's turn scalar). Groups under kMinSimdGroup items use a variant
//     without them.
#include "devices/cpu/jit/work_group.hpp"

#include "devices/cpu/jit/opaque_types.hpp"

#include "devices/cpu/work_group_abi.hpp"

#include <llvm/ADT/BitVector.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/ReplaceConstant.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>

namespace duet::rt {
namespace {

using namespace llvm;

constexpr unsigned kAsLocal = 3;
/// Groups smaller than this run the kernel variant without implicit loop barriers.
constexpr uint64_t kMinSimdGroup = 16;

enum class WorkItemFn {
    None,
    GlobalId,
    LocalId,
    LocalSize,
    EnqueuedLocalSize,
    NumGroups,
    GroupId,
    WorkDim,
    GlobalSize,
    GlobalOffset,
    LocalLinearId,
    GlobalLinearId,
    Barrier,
    Fence,
    Printf,
    ToGlobal, ///< clang's __to_global (to_global() on a generic pointer)
    ToLocal,
    ToPrivate,
    GetFence, ///< get_fence(const void*)
};

WorkItemFn classify(StringRef name) {
    static const std::map<std::string, WorkItemFn, std::less<>> names = {
        {"_Z13get_global_idj", WorkItemFn::GlobalId},
        {"_Z12get_local_idj", WorkItemFn::LocalId},
        {"_Z14get_local_sizej", WorkItemFn::LocalSize},
        {"_Z23get_enqueued_local_sizej", WorkItemFn::EnqueuedLocalSize},
        {"_Z14get_num_groupsj", WorkItemFn::NumGroups},
        {"_Z12get_group_idj", WorkItemFn::GroupId},
        {"_Z12get_work_dimv", WorkItemFn::WorkDim},
        {"_Z15get_global_sizej", WorkItemFn::GlobalSize},
        {"_Z17get_global_offsetj", WorkItemFn::GlobalOffset},
        {"_Z19get_local_linear_idv", WorkItemFn::LocalLinearId},
        {"_Z20get_global_linear_idv", WorkItemFn::GlobalLinearId},
        {"_Z7barrierj", WorkItemFn::Barrier},
        {"_Z18work_group_barrierj", WorkItemFn::Barrier},
        {"_Z18work_group_barrierj12memory_scope", WorkItemFn::Barrier},
        // One thread runs all work-items of a group, one after the other: a fence between
        // work-items of the group orders nothing that program order does not already order.
        {"_Z9mem_fencej", WorkItemFn::Fence},
        {"_Z14read_mem_fencej", WorkItemFn::Fence},
        {"_Z15write_mem_fencej", WorkItemFn::Fence},
        {"printf", WorkItemFn::Printf},
    };
    auto it = names.find(std::string_view(name.data(), name.size()));
    if (it != names.end())
        return it->second;
    // The generic address-space queries need the group's __local range and the stack.
    if (name == "__to_global")
        return WorkItemFn::ToGlobal;
    if (name == "__to_local")
        return WorkItemFn::ToLocal;
    if (name == "__to_private")
        return WorkItemFn::ToPrivate;
    if (name.starts_with("_Z9get_fenceP"))
        return WorkItemFn::GetFence;
    return WorkItemFn::None;
}

WorkItemFn classifyCall(const Instruction& inst) {
    auto* call = dyn_cast<CallBase>(&inst);
    if (!call)
        return WorkItemFn::None;
    Function* f = call->getCalledFunction();
    return f ? classify(f->getName()) : WorkItemFn::None;
}

/// True when `f` touches work-item state itself: such functions are inlined into kernels.
bool touchesWorkItemState(Function& f) {
    for (Instruction& inst : instructions(f)) {
        if (classifyCall(inst) != WorkItemFn::None)
            return true;
        for (Value* op : inst.operands()) {
            SmallVector<Value*, 8> work{op};
            while (!work.empty()) {
                Value* v = work.pop_back_val();
                if (auto* gv = dyn_cast<GlobalVariable>(v)) {
                    if (gv->getAddressSpace() == kAsLocal)
                        return true;
                } else if (auto* ce = dyn_cast<ConstantExpr>(v)) {
                    for (Value* sub : ce->operands())
                        work.push_back(sub);
                }
            }
        }
    }
    return false;
}

bool isKernel(const Function& f) {
    return f.getCallingConv() == CallingConv::SPIR_KERNEL || f.hasMetadata("kernel_arg_addr_space");
}

/// The values of the context and the placeholders for the current work-item, for one W.
struct Prologue {
    Value* workDim = nullptr;
    Value* globalOffset[3]{};
    Value* globalSize[3]{};
    Value* enqueuedLocalSize[3]{};
    Value* localSize[3]{};
    Value* numGroups[3]{};
    Value* groupId[3]{};
    Value* localMem = nullptr;
    Value* localMemEnd = nullptr;
    Value* stackLow = nullptr;
    Value* stackHigh = nullptr;
    Value* printfCtx = nullptr;
    Value* groupItems = nullptr; ///< work-items in this group (localSize product)
};

/// Placeholders for the local id and the local linear id, replaced in each region loop.
struct Placeholders {
    Function* localId[3]{};
    Function* linear = nullptr;
};

/// Which values may differ between the work-items of a group ("varying"), and which blocks
/// only some work-items may reach (inside the influence region of a varying branch).
struct Uniformity {
    SmallPtrSet<const Value*, 32> varying;
    SmallPtrSet<const BasicBlock*, 32> divergent;
    bool isVarying(const Value* v) const { return isa<AllocaInst>(v) || varying.contains(v); }
};

/// A forward data-flow analysis from the work-item ids. Loads from global or local memory at
/// a uniform address are uniform (a work-item seeing another's unsynchronised store would be
/// a data race); loads from private memory, atomics and calls that touch memory are varying.
/// A varying branch makes the blocks up to its immediate post-dominator divergent, and the
/// phis there and at the join varying.
Uniformity analyseUniformity(Function& w, BasicBlock* entry, const Placeholders& ph) {
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
            changed = true;
            BasicBlock* join = nullptr;
            if (DomTreeNode* node = pdt.getNode(&bb); node && node->getIDom())
                join = node->getIDom()->getBlock();
            if (join)
                joins.insert(join);
            SmallVector<BasicBlock*, 16> work;
            for (BasicBlock* s : successors(&bb))
                if (s != join && u.divergent.insert(s).second)
                    work.push_back(s);
            while (!work.empty()) {
                BasicBlock* b = work.pop_back_val();
                for (BasicBlock* s : successors(b))
                    if (s != join && u.divergent.insert(s).second)
                        work.push_back(s);
            }
        }
    }
    return u;
}

/// Puts `from -> to` through a new empty block, which is returned.
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

/// Implicit barriers around innermost loops that every work-item runs the same number of
/// times (reached and left under uniform control): on the entry edge, the back edges and the
/// exit edges. Each iteration then runs as a loop over the work-items, which the loop
/// vectoriser widens, instead of a scalar loop inside one work-item's turn. Adding barriers
/// where all work-items arrive together does not change what a race-free kernel computes.
/// Returns the number of barriers added.
size_t insertLoopBarriers(Function& w, const Uniformity& u, std::vector<BasicBlock*>& barriers) {
    DominatorTree dt(w);
    LoopInfo li(dt);
    SmallPtrSet<BasicBlock*, 16> barrierSet(barriers.begin(), barriers.end());
    SmallVector<std::pair<BasicBlock*, BasicBlock*>, 16> edges;
    for (Loop* loop : li.getLoopsInPreorder()) {
        if (!loop->isInnermost() || u.divergent.contains(loop->getHeader()))
            continue;
        bool ok = true;
        for (BasicBlock* bb : loop->blocks())
            if (barrierSet.contains(bb))
                ok = false;
        SmallVector<BasicBlock*, 4> exiting;
        loop->getExitingBlocks(exiting);
        for (BasicBlock* bb : exiting) {
            auto* br = dyn_cast<BranchInst>(bb->getTerminator());
            if (!br || (br->isConditional() && u.isVarying(br->getCondition())))
                ok = false;
        }
        if (!ok)
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

class WorkGroupBuilder {
public:
    WorkGroupBuilder(Module& m, Placeholders& ph, Function* printfHook)
        : m_module(m), m_ctx(m.getContext()), m_ph(ph), m_printfHook(printfHook),
          m_i64(Type::getInt64Ty(m_ctx)), m_i32(Type::getInt32Ty(m_ctx)),
          m_ptr(PointerType::get(m_ctx, 0)) {}

    /// Builds the work-group function `name` of `kernel`; `loopBarriers` as for
    /// buildWorkGroupFunctions. Sets `loopBarriersAdded`.
    bool build(Function& kernel, const std::string& name, bool loopBarriers,
               WorkGroupKernelInfo& info, size_t& loopBarriersAdded, std::string& error);

private:
    void emitPrologue(IRBuilder<>& b, Argument* ctx);
    Value* localIdValue(IRBuilder<>& b, unsigned dim);
    Value* linearValue(IRBuilder<>& b);
    void lowerWorkItemCalls(Function& w);
    Value* lowerOne(CallInst* call, WorkItemFn kind);
    bool lowerPrintf(Function& w, std::string& error);
    uint64_t lowerLocalVariables(Function& w);
    bool buildRegions(Function& w, BasicBlock* entry, BasicBlock* start, BasicBlock* exit,
                      std::vector<BasicBlock*>& barriers, const Uniformity& uniformity,
                      unsigned& regionCount, std::string& error);

    Module& m_module;
    LLVMContext& m_ctx;
    Placeholders& m_ph;
    Function* m_printfHook;
    Type* m_i64;
    Type* m_i32;
    PointerType* m_ptr;
    Prologue m_pro;
};

void WorkGroupBuilder::emitPrologue(IRBuilder<>& b, Argument* ctx) {
    auto field = [&](size_t offset, Type* type, const char* name) -> Value* {
        Value* p = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), ctx, offset);
        return b.CreateAlignedLoad(type, p, Align(4), name);
    };
    auto field3 = [&](size_t offset, Value* out[3], const char* name) {
        for (unsigned d = 0; d < 3; ++d)
            out[d] = field(offset + 8 * d, m_i64, name);
    };
    m_pro.workDim = field(offsetof(WorkGroupContext, workDim), m_i32, "work_dim");
    field3(offsetof(WorkGroupContext, globalOffset), m_pro.globalOffset, "global_offset");
    field3(offsetof(WorkGroupContext, globalSize), m_pro.globalSize, "global_size");
    field3(offsetof(WorkGroupContext, enqueuedLocalSize), m_pro.enqueuedLocalSize,
           "enqueued_local_size");
    field3(offsetof(WorkGroupContext, localSize), m_pro.localSize, "local_size");
    // Group sizes are 1..kCpuMaxWorkGroupSize: with that range, the loop over the local ids
    // bounds them, and `(int)get_local_id(0) + 1` stays an affine index (no sign-extension
    // of a value that might wrap), which the loop vectoriser needs to widen it.
    MDNode* groupRange =
        MDBuilder(b.getContext()).createRange(APInt(64, 1), APInt(64, kCpuMaxWorkGroupSize + 1));
    for (unsigned d = 0; d < 3; ++d)
        for (Value* v : {m_pro.enqueuedLocalSize[d], m_pro.localSize[d]})
            cast<LoadInst>(v)->setMetadata(LLVMContext::MD_range, groupRange);
    field3(offsetof(WorkGroupContext, numGroups), m_pro.numGroups, "num_groups");
    field3(offsetof(WorkGroupContext, groupId), m_pro.groupId, "group_id");
    m_pro.localMem = field(offsetof(WorkGroupContext, localMem), m_ptr, "local_mem");
    m_pro.printfCtx = field(offsetof(WorkGroupContext, printfCtx), m_ptr, "printf_ctx");
    m_pro.localMemEnd = field(offsetof(WorkGroupContext, localMemEnd), m_ptr, "local_mem_end");
    m_pro.stackLow = field(offsetof(WorkGroupContext, stackLow), m_ptr, "stack_low");
    m_pro.stackHigh = field(offsetof(WorkGroupContext, stackHigh), m_ptr, "stack_high");
    m_pro.groupItems = b.CreateMul(b.CreateMul(m_pro.localSize[0], m_pro.localSize[1]),
                                   m_pro.localSize[2], "group_items");
}

Value* WorkGroupBuilder::localIdValue(IRBuilder<>& b, unsigned dim) {
    return b.CreateCall(m_ph.localId[dim]);
}

Value* WorkGroupBuilder::linearValue(IRBuilder<>& b) {
    return b.CreateCall(m_ph.linear);
}

Value* WorkGroupBuilder::lowerOne(CallInst* call, WorkItemFn kind) {
    IRBuilder<> b(call);
    // Per dimension value; dimensions past 2 give the spec's default.
    auto perDim = [&](auto&& valueOf, uint64_t outside) -> Value* {
        Value* dimArg = call->getArgOperand(0);
        if (auto* c = dyn_cast<ConstantInt>(dimArg)) {
            uint64_t d = c->getZExtValue();
            return d < 3 ? valueOf(unsigned(d)) : ConstantInt::get(m_i64, outside);
        }
        Value* v = ConstantInt::get(m_i64, outside);
        for (int d = 2; d >= 0; --d)
            v = b.CreateSelect(b.CreateICmpEQ(dimArg, ConstantInt::get(dimArg->getType(), d)),
                               valueOf(unsigned(d)), v);
        return v;
    };
    auto globalMinusOffset = [&](unsigned d) {
        return b.CreateAdd(b.CreateMul(m_pro.groupId[d], m_pro.enqueuedLocalSize[d]),
                           localIdValue(b, d));
    };
    switch (kind) {
    case WorkItemFn::GlobalId:
        return perDim(
            [&](unsigned d) { return b.CreateAdd(globalMinusOffset(d), m_pro.globalOffset[d]); },
            0);
    case WorkItemFn::LocalId:
        return perDim([&](unsigned d) { return localIdValue(b, d); }, 0);
    case WorkItemFn::LocalSize:
        return perDim([&](unsigned d) { return m_pro.localSize[d]; }, 1);
    case WorkItemFn::EnqueuedLocalSize:
        return perDim([&](unsigned d) { return m_pro.enqueuedLocalSize[d]; }, 1);
    case WorkItemFn::NumGroups:
        return perDim([&](unsigned d) { return m_pro.numGroups[d]; }, 1);
    case WorkItemFn::GroupId:
        return perDim([&](unsigned d) { return m_pro.groupId[d]; }, 0);
    case WorkItemFn::GlobalSize:
        return perDim([&](unsigned d) { return m_pro.globalSize[d]; }, 1);
    case WorkItemFn::GlobalOffset:
        return perDim([&](unsigned d) { return m_pro.globalOffset[d]; }, 0);
    case WorkItemFn::WorkDim:
        return m_pro.workDim;
    case WorkItemFn::LocalLinearId:
        return linearValue(b);
    case WorkItemFn::ToGlobal:
    case WorkItemFn::ToLocal:
    case WorkItemFn::ToPrivate:
    case WorkItemFn::GetFence: {
        // A generic pointer is a host address: __local blocks are one heap block per group
        // ([localMem, localMemEnd)); private memory (allocas, per-work-item storage) lives in
        // the frames between the thread's lowest stack address and the caller of W; anything
        // else (buffers, program-scope variables) is global. Known gap: a by-value struct
        // argument used in place (not copied to an alloca) sits in the runtime's heap block
        // and so counts as global.
        Value* p = b.CreatePtrToInt(call->getArgOperand(0), m_i64);
        auto within = [&](Value* lo, Value* hi) {
            return b.CreateAnd(b.CreateICmpUGE(p, b.CreatePtrToInt(lo, m_i64)),
                               b.CreateICmpULT(p, b.CreatePtrToInt(hi, m_i64)));
        };
        Value* local = within(m_pro.localMem, m_pro.localMemEnd);
        if (kind == WorkItemFn::GetFence) // CLK_LOCAL_MEM_FENCE or CLK_GLOBAL_MEM_FENCE
            return b.CreateSelect(local, b.getInt32(1), b.getInt32(2));
        Value* priv = within(m_pro.stackLow, m_pro.stackHigh);
        Value* in = kind == WorkItemFn::ToLocal     ? local
                    : kind == WorkItemFn::ToPrivate ? priv
                                                    : b.CreateNot(b.CreateOr(local, priv));
        auto* type = cast<PointerType>(call->getType());
        return b.CreateSelect(in, b.CreateAddrSpaceCast(call->getArgOperand(0), type),
                              ConstantPointerNull::get(type));
    }
    case WorkItemFn::GlobalLinearId: {
        Value* z = globalMinusOffset(2);
        Value* y = globalMinusOffset(1);
        Value* x = globalMinusOffset(0);
        return b.CreateAdd(
            b.CreateMul(b.CreateAdd(b.CreateMul(z, m_pro.globalSize[1]), y), m_pro.globalSize[0]),
            x);
    }
    default:
        return nullptr;
    }
}

void WorkGroupBuilder::lowerWorkItemCalls(Function& w) {
    SmallVector<std::pair<CallInst*, WorkItemFn>, 16> calls;
    for (Instruction& inst : instructions(w)) {
        WorkItemFn kind = classifyCall(inst);
        if (kind != WorkItemFn::None && kind != WorkItemFn::Barrier && kind != WorkItemFn::Printf)
            calls.push_back({cast<CallInst>(&inst), kind});
    }
    for (auto [call, kind] : calls) {
        if (kind == WorkItemFn::Fence) {
            call->eraseFromParent();
            continue;
        }
        Value* v = lowerOne(call, kind);
        if (v->getType() != call->getType() && v->getType()->isIntegerTy())
            v = IRBuilder<>(call).CreateZExtOrTrunc(v, call->getType());
        call->replaceAllUsesWith(v);
        call->eraseFromParent();
    }
}

bool WorkGroupBuilder::lowerPrintf(Function& w, std::string& error) {
    SmallVector<CallInst*, 4> calls;
    for (Instruction& inst : instructions(w))
        if (classifyCall(inst) == WorkItemFn::Printf)
            calls.push_back(cast<CallInst>(&inst));
    const DataLayout& dl = m_module.getDataLayout();
    BasicBlock& entry = w.getEntryBlock();
    for (CallInst* call : calls) {
        if (call->arg_size() == 0) {
            error = "printf called without a format";
            return false;
        }
        IRBuilder<> b(call);
        SmallVector<Type*, 8> types;
        for (unsigned i = 1; i < call->arg_size(); ++i)
            types.push_back(call->getArgOperand(i)->getType());
        const uint32_t count = uint32_t(types.size());
        Value* argsPtr = ConstantPointerNull::get(m_ptr);
        Value* layoutPtr = ConstantPointerNull::get(m_ptr);
        if (count) {
            StructType* st = StructType::get(m_ctx, types);
            const StructLayout* sl = dl.getStructLayout(st);
            IRBuilder<> eb(&entry, entry.getFirstInsertionPt());
            AllocaInst* storage = eb.CreateAlloca(st, nullptr, "printf.args");
            std::vector<uint32_t> layout;
            for (uint32_t i = 0; i < count; ++i) {
                b.CreateStore(call->getArgOperand(i + 1), b.CreateStructGEP(st, storage, i));
                layout.push_back(uint32_t(sl->getElementOffset(i)));
                layout.push_back(uint32_t(dl.getTypeAllocSize(types[i]).getFixedValue()));
            }
            auto* init = ConstantDataArray::get(m_ctx, layout);
            auto* gv =
                new GlobalVariable(m_module, init->getType(), true, GlobalValue::PrivateLinkage,
                                   init, "printf.layout", nullptr, GlobalValue::NotThreadLocal, 0u);
            argsPtr = storage;
            layoutPtr = gv;
        }
        Value* format = b.CreateAddrSpaceCast(call->getArgOperand(0), m_ptr);
        CallInst* hook = b.CreateCall(
            m_printfHook, {m_pro.printfCtx, format, argsPtr, layoutPtr, b.getInt32(count)});
        call->replaceAllUsesWith(hook);
        call->eraseFromParent();
    }
    return true;
}

uint64_t WorkGroupBuilder::lowerLocalVariables(Function& w) {
    SmallPtrSet<GlobalVariable*, 8> used;
    for (Instruction& inst : instructions(w)) {
        for (Value* op : inst.operands()) {
            SmallVector<Value*, 8> work{op};
            while (!work.empty()) {
                Value* v = work.pop_back_val();
                if (auto* gv = dyn_cast<GlobalVariable>(v)) {
                    if (gv->getAddressSpace() == kAsLocal)
                        used.insert(gv);
                } else if (auto* ce = dyn_cast<ConstantExpr>(v)) {
                    for (Value* sub : ce->operands())
                        work.push_back(sub);
                }
            }
        }
    }
    if (used.empty())
        return 0;
    // Module order, each at its alignment: the layout compiler/metadata.cpp reports too.
    const DataLayout& dl = m_module.getDataLayout();
    SmallVector<Constant*, 8> ordered;
    for (GlobalVariable& gv : m_module.globals())
        if (used.contains(&gv))
            ordered.push_back(&gv);
    convertUsersOfConstantsToInstructions(ordered, &w);
    IRBuilder<> b(w.getEntryBlock().getTerminator());
    uint64_t offset = 0;
    for (Constant* c : ordered) {
        auto* gv = cast<GlobalVariable>(c);
        uint64_t align = gv->getAlign() ? gv->getAlign()->value()
                                        : dl.getABITypeAlign(gv->getValueType()).value();
        offset = (offset + align - 1) / align * align;
        Value* p = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), m_pro.localMem, offset);
        Value* local = b.CreateAddrSpaceCast(p, gv->getType(), gv->getName());
        gv->replaceUsesWithIf(local, [&](Use& u) {
            auto* inst = dyn_cast<Instruction>(u.getUser());
            return inst && inst->getFunction() == &w;
        });
        offset += dl.getTypeAllocSize(gv->getValueType()).getFixedValue();
    }
    return offset;
}

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

bool WorkGroupBuilder::buildRegions(Function& w, BasicBlock* entry, BasicBlock* start,
                                    BasicBlock* exit, std::vector<BasicBlock*>& barriers,
                                    const Uniformity& uniformity, unsigned& regionCount,
                                    std::string& error) {
    // Number the kernel's blocks (all but the prologue).
    std::vector<BasicBlock*> blocks;
    DenseMap<BasicBlock*, unsigned> index;
    for (BasicBlock& bb : w)
        if (&bb != entry) {
            index[&bb] = unsigned(blocks.size());
            blocks.push_back(&bb);
        }
    const unsigned n = unsigned(blocks.size());
    std::vector<std::vector<unsigned>> succ(n);
    for (unsigned i = 0; i < n; ++i)
        for (BasicBlock* s : successors(blocks[i]))
            succ[i].push_back(index.lookup(s));
    BitVector isBarrier(n);
    for (BasicBlock* bb : barriers)
        isBarrier.set(index.lookup(bb));

    // Reach of each barrier block (itself included), for the liveness questions below.
    std::vector<BitVector> barrierReach;
    for (BasicBlock* bb : barriers)
        barrierReach.push_back(reachable({index.lookup(bb)}, succ, -1));
    auto throughBarrier = [&](unsigned from, int blocked) {
        BitVector out(n);
        BitVector r = reachable(succ[from], succ, blocked);
        for (size_t j = 0; j < barriers.size(); ++j)
            if (r.test(index.lookup(barriers[j]))) {
                if (blocked < 0)
                    out |= barrierReach[j];
                else
                    out |= reachable({index.lookup(barriers[j])}, succ, blocked);
            }
        return out;
    };

    // Regions: entry 0 is the kernel's start, entry j + 1 barrier j. A region holds the blocks
    // reachable from its entry without crossing a barrier, in discovery order.
    std::vector<BasicBlock*> entries{start};
    entries.insert(entries.end(), barriers.begin(), barriers.end());
    DenseMap<BasicBlock*, int> regionOfEntry;
    for (size_t k = 0; k < entries.size(); ++k)
        regionOfEntry[entries[k]] = int(k);
    constexpr int kExit = -1;
    regionCount = unsigned(entries.size());
    auto stopsRegion = [&](BasicBlock* bb) {
        return bb == exit || isBarrier.test(index.lookup(bb));
    };
    std::vector<std::vector<BasicBlock*>> members(entries.size());
    std::vector<BitVector> regionsOf(n, BitVector(unsigned(entries.size())));
    for (size_t k = 0; k < entries.size(); ++k) {
        SmallPtrSet<BasicBlock*, 32> seen{entries[k]};
        members[k].push_back(entries[k]);
        for (size_t i = 0; i < members[k].size(); ++i)
            for (BasicBlock* s : successors(members[k][i]))
                if (!stopsRegion(s) && seen.insert(s).second)
                    members[k].push_back(s);
        for (BasicBlock* bb : members[k])
            regionsOf[index.lookup(bb)].set(unsigned(k));
    }
    // Within one region, without crossing a barrier: can `to` follow `from`?
    auto followsInRegion = [&](BasicBlock* from, BasicBlock* to) {
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
    };
    // Uniform values live across a barrier whose slot is double-buffered: work-items store the
    // new value in `next`, read the old one from `cur`, and each region containing the
    // definition ends by copying next to cur.
    struct UniformCopy {
        AllocaInst* cur;
        AllocaInst* next;
    };
    std::vector<std::vector<UniformCopy>> copiesAfter(entries.size());

    IRBuilder<> eb(entry->getTerminator());
    if (!barriers.empty()) {
        // Private arrays used on both sides of a barrier: one copy per work-item.
        SmallVector<AllocaInst*, 8> allocas;
        for (Instruction& inst : *entry)
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
                    if (inst->getParent() != entry)
                        useBlocks.push_back(index.lookup(inst->getParent()));
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
                eb.CreateAlloca(a->getAllocatedType(), m_pro.groupItems, a->getName() + ".items");
            items->setAlignment(a->getAlign());
            SmallVector<Use*, 8> uses;
            for (Use& u : a->uses())
                uses.push_back(&u);
            for (Use* u : uses) {
                auto* user = cast<Instruction>(u->getUser());
                Instruction* at = user;
                if (auto* phi = dyn_cast<PHINode>(user))
                    at = phi->getIncomingBlock(*u)->getTerminator();
                IRBuilder<> b(at);
                u->set(b.CreateInBoundsGEP(a->getAllocatedType(), items, linearValue(b)));
            }
            a->eraseFromParent();
        }

        // Values that are cheap, pure functions of the work-item ids, the prologue (context,
        // arguments) and constants - addresses like `tile + lid + 1` - are computed again
        // where a barrier separates a use from them instead of living in per-work-item
        // storage: the reload would hide from the loop vectoriser that the address is
        // consecutive across work-items (it gave up on stencils through __local tiles).
        DenseMap<Instruction*, bool> rematMemo;
        std::function<bool(Value*, unsigned)> rematerialisable = [&](Value* v, unsigned depth) {
            auto* i = dyn_cast<Instruction>(v);
            if (!i || i->getParent() == entry)
                return true; // constants, arguments and the prologue dominate every region
            if (depth > 12)
                return false;
            if (auto it = rematMemo.find(i); it != rematMemo.end())
                return it->second;
            bool ok = false;
            if (auto* call = dyn_cast<CallInst>(i)) {
                Function* f = call->getCalledFunction();
                ok = f == m_ph.localId[0] || f == m_ph.localId[1] || f == m_ph.localId[2] ||
                     f == m_ph.linear;
            } else if (isa<GetElementPtrInst, CastInst>(i) ||
                       (isa<BinaryOperator>(i) && !i->isIntDivRem())) {
                ok = !isa<PtrToIntInst, IntToPtrInst>(i);
                for (Value* op : i->operands())
                    ok = ok && rematerialisable(op, depth + 1);
            }
            rematMemo[i] = ok;
            return ok;
        };
        std::function<Value*(Value*, IRBuilder<>&)> rematerialise = [&](Value* v,
                                                                        IRBuilder<>& b) -> Value* {
            auto* i = dyn_cast<Instruction>(v);
            if (!i || i->getParent() == entry)
                return v;
            Instruction* c = i->clone();
            for (Use& op : c->operands())
                op.set(rematerialise(op.get(), b));
            b.Insert(c, i->getName() + ".remat");
            return c;
        };

        // SSA values live across a barrier: stored after their definition, loaded before
        // each use that a barrier may separate from it.
        for (unsigned di = 0; di < n; ++di) {
            BasicBlock* def = blocks[di];
            std::optional<BitVector> cross;
            SmallVector<Instruction*, 16> values;
            for (Instruction& inst : *def)
                values.push_back(&inst);
            for (Instruction* inst : values) {
                if (inst->getType()->isVoidTy() || inst->use_empty())
                    continue;
                SmallVector<Use*, 8> crossing;
                for (Use& u : inst->uses()) {
                    auto* user = cast<Instruction>(u.getUser());
                    BasicBlock* ub = user->getParent();
                    if (auto* phi = dyn_cast<PHINode>(user))
                        ub = phi->getIncomingBlock(u);
                    if (ub == def)
                        continue;
                    if (!cross)
                        cross = throughBarrier(di, int(di));
                    if (cross->test(index.lookup(ub)))
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
                        auto* user = cast<Instruction>(u->getUser());
                        Instruction* at = user;
                        if (auto* phi = dyn_cast<PHINode>(user))
                            at = phi->getIncomingBlock(*u)->getTerminator();
                        IRBuilder<> rb(at);
                        u->set(rematerialise(inst, rb));
                    }
                    continue;
                }
                // Where the value lives: one slot per work-item, unless it is uniform (defined
                // under uniform control with uniform operands). A uniform value needs one slot
                // when no region both defines and reads it across a barrier (every work-item
                // stores the same bits); two (cur/next) when such a region reads it only
                // before defining it; otherwise one per work-item.
                enum class Slot { Single, DoubleBuffered, PerItem } mode = Slot::Single;
                if (uniformity.isVarying(inst) || uniformity.divergent.contains(def))
                    mode = Slot::PerItem;
                for (Use* u : crossing) {
                    if (mode == Slot::PerItem)
                        break;
                    auto* user = cast<Instruction>(u->getUser());
                    BasicBlock* ub = user->getParent();
                    if (auto* phi = dyn_cast<PHINode>(user))
                        ub = phi->getIncomingBlock(*u);
                    BitVector common = regionsOf[di];
                    common &= regionsOf[index.lookup(ub)];
                    if (common.any())
                        mode = followsInRegion(def, ub) ? Slot::PerItem : Slot::DoubleBuffered;
                }
                Type* ty = inst->getType();
                auto* vecTy = dyn_cast<FixedVectorType>(ty);
                if (mode == Slot::PerItem && vecTy) {
                    // Per work-item vectors as one array per component (structure of arrays):
                    // the vectorised work-item loop then reads them with plain vector loads.
                    Type* elTy = vecTy->getElementType();
                    const unsigned lanes = vecTy->getNumElements();
                    SmallVector<AllocaInst*, 4> slots;
                    for (unsigned e = 0; e < lanes; ++e)
                        slots.push_back(eb.CreateAlloca(
                            elTy, m_pro.groupItems, inst->getName() + ".wi" + std::to_string(e)));
                    Instruction* after =
                        isa<PHINode>(inst) ? &*def->getFirstInsertionPt() : inst->getNextNode();
                    IRBuilder<> sb(after);
                    Value* lin = linearValue(sb);
                    for (unsigned e = 0; e < lanes; ++e)
                        sb.CreateStore(sb.CreateExtractElement(inst, e),
                                       sb.CreateInBoundsGEP(elTy, slots[e], lin));
                    for (Use* u : crossing) {
                        auto* user = cast<Instruction>(u->getUser());
                        Instruction* at = user;
                        if (auto* phi = dyn_cast<PHINode>(user))
                            at = phi->getIncomingBlock(*u)->getTerminator();
                        IRBuilder<> lb(at);
                        Value* l = linearValue(lb);
                        Value* v = PoisonValue::get(ty);
                        for (unsigned e = 0; e < lanes; ++e)
                            v = lb.CreateInsertElement(
                                v, lb.CreateLoad(elTy, lb.CreateInBoundsGEP(elTy, slots[e], l)), e);
                        u->set(v);
                    }
                    continue;
                }
                AllocaInst* slot =
                    eb.CreateAlloca(ty, mode == Slot::PerItem ? m_pro.groupItems : nullptr,
                                    inst->getName() + ".wi");
                AllocaInst* storeSlot = slot;
                if (mode == Slot::DoubleBuffered) {
                    storeSlot = eb.CreateAlloca(ty, nullptr, inst->getName() + ".next");
                    for (unsigned k : regionsOf[di].set_bits())
                        copiesAfter[k].push_back({slot, storeSlot});
                }
                auto slotAddress = [&](IRBuilder<>& at, AllocaInst* base) -> Value* {
                    return mode == Slot::PerItem ? at.CreateInBoundsGEP(ty, base, linearValue(at))
                                                 : base;
                };
                Instruction* after =
                    isa<PHINode>(inst) ? &*def->getFirstInsertionPt() : inst->getNextNode();
                IRBuilder<> sb(after);
                sb.CreateStore(inst, slotAddress(sb, storeSlot));
                for (Use* u : crossing) {
                    auto* user = cast<Instruction>(u->getUser());
                    Instruction* at = user;
                    if (auto* phi = dyn_cast<PHINode>(user))
                        at = phi->getIncomingBlock(*u)->getTerminator();
                    IRBuilder<> lb(at);
                    u->set(lb.CreateLoad(ty, slotAddress(lb, slot), inst->getName() + ".reload"));
                }
            }
        }
    }

    struct Region {
        BasicBlock* pre = nullptr;
        BasicBlock* done = nullptr;
        std::vector<int> targets; // next region ids, kExit
        Value* next = nullptr;    // the target picked by the last work-item (several targets)
    };
    std::vector<Region> regions(entries.size());
    AllocaInst* nextSlot = nullptr;
    BasicBlock* dispatch = nullptr;
    std::vector<BasicBlock*> original = blocks;
    SmallPtrSet<BasicBlock*, 32> originalSet(blocks.begin(), blocks.end());
    originalSet.erase(exit);

    for (size_t k = 0; k < entries.size(); ++k) {
        Region& r = regions[k];
        SmallPtrSet<BasicBlock*, 32> memberSet(members[k].begin(), members[k].end());
        std::map<int, bool> targetSeen;
        for (BasicBlock* bb : members[k])
            for (BasicBlock* s : successors(bb)) {
                if (s == exit)
                    targetSeen[kExit] = true;
                else if (isBarrier.test(index.lookup(s)))
                    targetSeen[regionOfEntry.lookup(s)] = true;
            }
        for (auto& [t, _] : targetSeen)
            r.targets.push_back(t);

        r.pre = BasicBlock::Create(m_ctx, "region" + std::to_string(k), &w);
        BasicBlock* zh = BasicBlock::Create(m_ctx, "wi.z", &w);
        BasicBlock* yh = BasicBlock::Create(m_ctx, "wi.y", &w);
        BasicBlock* xh = BasicBlock::Create(m_ctx, "wi.x", &w);
        BasicBlock* xl = BasicBlock::Create(m_ctx, "wi.x.next", &w);
        BasicBlock* yl = BasicBlock::Create(m_ctx, "wi.y.next", &w);
        BasicBlock* zl = BasicBlock::Create(m_ctx, "wi.z.next", &w);
        r.done = BasicBlock::Create(m_ctx, "region" + std::to_string(k) + ".done", &w);
        IRBuilder<> b(r.pre);
        b.CreateBr(zh);
        b.SetInsertPoint(zh);
        PHINode* z = b.CreatePHI(m_i64, 2, "lz");
        b.CreateBr(yh);
        b.SetInsertPoint(yh);
        PHINode* y = b.CreatePHI(m_i64, 2, "ly");
        Value* row = b.CreateMul(b.CreateAdd(b.CreateMul(z, m_pro.localSize[1]), y),
                                 m_pro.localSize[0], "row");
        b.SetInsertPoint(xh);
        PHINode* x = b.CreatePHI(m_i64, 2, "lx");
        Value* lin = b.CreateAdd(row, x, "local_linear");
        // Local ids are below kCpuMaxWorkGroupSize: said to the optimiser, `(int)lid + 1`
        // folds to an affine 64-bit index instead of a shl/ashr pair the vectoriser cannot
        // follow (assumptions feed the known bits instcombine folds with).
        for (PHINode* id : {x, y, z})
            b.CreateAssumption(b.CreateICmpULT(id, ConstantInt::get(m_i64, kCpuMaxWorkGroupSize)));
        b.SetInsertPoint(yh);
        b.CreateBr(xh);

        // Clone the region's blocks.
        ValueToValueMapTy vmap;
        std::vector<BasicBlock*> clones;
        for (BasicBlock* bb : members[k]) {
            BasicBlock* c = CloneBasicBlock(bb, vmap, ".r" + std::to_string(k), &w);
            vmap[bb] = c;
            clones.push_back(c);
        }
        std::map<int, BasicBlock*> exitBlocks;
        for (int t : r.targets) {
            exitBlocks[t] = BasicBlock::Create(m_ctx, "to." + std::to_string(t), &w);
            BranchInst::Create(xl, exitBlocks[t]);
        }
        for (BasicBlock* c : clones) {
            Instruction* term = c->getTerminator();
            for (unsigned s = 0; s < term->getNumSuccessors(); ++s) {
                BasicBlock* target = term->getSuccessor(s);
                if (target == exit)
                    term->setSuccessor(s, exitBlocks[kExit]);
                else if (isBarrier.test(index.lookup(target)))
                    term->setSuccessor(s, exitBlocks[regionOfEntry.lookup(target)]);
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
                    v = x;
                else if (f == m_ph.localId[1])
                    v = y;
                else if (f == m_ph.localId[2])
                    v = z;
                else if (f == m_ph.linear)
                    v = lin;
                if (v) {
                    call->replaceAllUsesWith(v);
                    call->eraseFromParent();
                }
            }
        }
        b.SetInsertPoint(xh);
        b.CreateBr(cast<BasicBlock>(vmap[entries[k]]));

        b.SetInsertPoint(xl);
        if (r.targets.size() > 1) {
            PHINode* next = b.CreatePHI(m_i32, unsigned(r.targets.size()), "next_region");
            for (int t : r.targets)
                next->addIncoming(b.getInt32(uint32_t(t)), exitBlocks[t]);
            r.next = next;
        }
        Value* x1 = b.CreateAdd(x, ConstantInt::get(m_i64, 1));
        b.CreateCondBr(b.CreateICmpULT(x1, m_pro.localSize[0]), xh, yl);
        b.SetInsertPoint(yl);
        Value* y1 = b.CreateAdd(y, ConstantInt::get(m_i64, 1));
        b.CreateCondBr(b.CreateICmpULT(y1, m_pro.localSize[1]), yh, zl);
        b.SetInsertPoint(zl);
        Value* z1 = b.CreateAdd(z, ConstantInt::get(m_i64, 1));
        b.CreateCondBr(b.CreateICmpULT(z1, m_pro.localSize[2]), zh, r.done);
        x->addIncoming(ConstantInt::get(m_i64, 0), yh);
        x->addIncoming(x1, xl);
        y->addIncoming(ConstantInt::get(m_i64, 0), zh);
        y->addIncoming(y1, yl);
        z->addIncoming(ConstantInt::get(m_i64, 0), r.pre);
        z->addIncoming(z1, zl);
    }

    // Tie the regions together: a region with one successor jumps there, others go through
    // the dispatcher with the barrier the work-items reached.
    for (size_t k = 0; k < regions.size(); ++k) {
        Region& r = regions[k];
        IRBuilder<> b(r.done);
        for (const UniformCopy& c : copiesAfter[k])
            b.CreateStore(b.CreateLoad(c.next->getAllocatedType(), c.next), c.cur);
        if (r.targets.size() == 1) {
            int t = r.targets[0];
            b.CreateBr(t == kExit ? exit : regions[size_t(t)].pre);
        } else if (r.targets.empty()) {
            b.CreateBr(exit); // the region never ends: this block is unreachable
        } else {
            if (!dispatch) {
                nextSlot = eb.CreateAlloca(m_i32, nullptr, "next_region");
                dispatch = BasicBlock::Create(m_ctx, "dispatch", &w);
                IRBuilder<> db(dispatch);
                auto* sw =
                    db.CreateSwitch(db.CreateLoad(m_i32, nextSlot), exit, unsigned(regions.size()));
                for (size_t j = 0; j < regions.size(); ++j)
                    sw->addCase(db.getInt32(uint32_t(j)), regions[j].pre);
            }
            b.CreateStore(r.next, nextSlot);
            b.CreateBr(dispatch);
        }
    }
    entry->getTerminator()->setSuccessor(0, regions[0].pre);

    // Every value a clone uses must come from its own region or the prologue.
    for (BasicBlock& bb : w) {
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
    for (BasicBlock* bb : original)
        if (bb != exit)
            bb->dropAllReferences();
    for (BasicBlock* bb : original)
        if (bb != exit)
            bb->eraseFromParent();
    return true;
}

bool WorkGroupBuilder::build(Function& kernel, const std::string& name, bool loopBarriers,
                             WorkGroupKernelInfo& info, size_t& loopBarriersAdded,
                             std::string& error) {
    info.name = kernel.getName().str();
    info.entryName = name;
    auto* fnTy = FunctionType::get(Type::getVoidTy(m_ctx), {m_ptr, m_ptr}, false);
    Function* w = Function::Create(fnTy, GlobalValue::ExternalLinkage, info.entryName, m_module);
    w->addFnAttr(Attribute::NoUnwind);
    for (unsigned i = 0; i < 2; ++i) {
        w->addParamAttr(i, Attribute::NoAlias);
        w->addParamAttr(i, Attribute::NoCapture);
        w->addParamAttr(i, Attribute::ReadOnly);
    }
    Argument* argsArg = w->getArg(0);
    Argument* ctxArg = w->getArg(1);
    argsArg->setName("args");
    ctxArg->setName("ctx");

    BasicBlock* entry = BasicBlock::Create(m_ctx, "entry", w);
    IRBuilder<> b(entry);
    emitPrologue(b, ctxArg);
    SmallVector<Value*, 8> callArgs;
    for (Argument& a : kernel.args()) {
        Value* slot =
            b.CreateAlignedLoad(m_ptr, b.CreateConstInBoundsGEP1_64(m_ptr, argsArg, a.getArgNo()),
                                Align(8), "arg" + std::to_string(a.getArgNo()));
        if (a.hasByValAttr()) {
            callArgs.push_back(slot); // the call copies it (byval), per work-item
            continue;
        }
        if (kernel.getAttributes().hasParamAttr(a.getArgNo(), kSamplerParamAttr)) {
            // A sampler argument is its 32-bit value (see opaque_types.hpp).
            Value* bits = b.CreateAlignedLoad(m_i32, slot, Align(1), a.getName());
            callArgs.push_back(b.CreateIntToPtr(b.CreateZExt(bits, m_i64), a.getType()));
            continue;
        }
        callArgs.push_back(b.CreateAlignedLoad(a.getType(), slot, Align(1), a.getName()));
    }
    Instruction* lastPrologue = &entry->back();
    CallInst* call = b.CreateCall(&kernel, callArgs);
    b.CreateRetVoid();

    InlineFunctionInfo ifi;
    if (!InlineFunction(*call, ifi).isSuccess()) {
        error = "cannot inline kernel " + info.name;
        return false;
    }
    BasicBlock* start = entry->splitBasicBlock(lastPrologue->getNextNode(), "kernel.start");
    removeUnreachableBlocks(*w);

    // One exit block holding only `ret void`.
    BasicBlock* exit = nullptr;
    SmallVector<ReturnInst*, 2> rets;
    for (BasicBlock& bb : *w)
        if (auto* ret = dyn_cast<ReturnInst>(bb.getTerminator()))
            rets.push_back(ret);
    if (rets.size() == 1) {
        exit = rets[0]->getParent()->splitBasicBlock(rets[0], "kernel.exit");
    } else {
        exit = BasicBlock::Create(m_ctx, "kernel.exit", w);
        ReturnInst::Create(m_ctx, exit);
        for (ReturnInst* ret : rets) {
            BranchInst::Create(exit, ret->getParent());
            ret->eraseFromParent();
        }
    }

    lowerWorkItemCalls(*w);
    info.usesPrintf = false;
    for (Instruction& inst : instructions(*w))
        if (classifyCall(inst) == WorkItemFn::Printf)
            info.usesPrintf = true;
    if (!lowerPrintf(*w, error))
        return false;
    info.staticLocalMemSize = lowerLocalVariables(*w);

    std::vector<BasicBlock*> barriers;
    SmallVector<CallInst*, 8> barrierCalls;
    for (Instruction& inst : instructions(*w))
        if (classifyCall(inst) == WorkItemFn::Barrier)
            barrierCalls.push_back(cast<CallInst>(&inst));
    for (CallInst* c : barrierCalls) {
        BasicBlock* bar = c->getParent()->splitBasicBlock(c, "barrier");
        bar->splitBasicBlock(c->getNextNode(), "after.barrier");
        c->eraseFromParent();
        barriers.push_back(bar);
    }
    info.hasBarrier = !barriers.empty();
    Uniformity uniformity = analyseUniformity(*w, entry, m_ph);
    loopBarriersAdded = loopBarriers ? insertLoopBarriers(*w, uniformity, barriers) : 0;
    if (!barriers.empty()) {
        // Lifetimes would span several region loops; per-work-item storage has none.
        SmallVector<Instruction*, 16> markers;
        for (Instruction& inst : instructions(*w))
            if (auto* ii = dyn_cast<IntrinsicInst>(&inst); ii && ii->isLifetimeStartOrEnd())
                markers.push_back(ii);
        for (Instruction* i : markers)
            i->eraseFromParent();
    }
    // Barriers on paths that never return leave dead blocks behind; drop them first.
    removeUnreachableBlocks(*w);
    std::erase_if(barriers, [&](BasicBlock* bb) {
        for (BasicBlock& live : *w)
            if (&live == bb)
                return false;
        return true;
    });
    if (!buildRegions(*w, entry, start, exit, barriers, uniformity, info.regions, error))
        return false;
    // Per-work-item storage lives on the calling thread's stack, sized by the group.
    const DataLayout& dl = m_module.getDataLayout();
    for (Instruction& inst : *entry)
        if (auto* a = dyn_cast<AllocaInst>(&inst); a && a->getArraySize() == m_pro.groupItems)
            info.perItemBytes += dl.getTypeAllocSize(a->getAllocatedType()).getFixedValue();
    return true;
}

} // namespace

void normaliseForCpu(llvm::Module& module) {
    using namespace llvm;
    for (Function& f : module) {
        f.removeFnAttr(Attribute::Convergent);
        f.removeFnAttr(Attribute::OptimizeNone);
        f.removeFnAttr(Attribute::NoInline);
        if (f.getCallingConv() == CallingConv::SPIR_FUNC ||
            f.getCallingConv() == CallingConv::SPIR_KERNEL)
            f.setCallingConv(CallingConv::C);
        for (Instruction& inst : instructions(f))
            if (auto* call = dyn_cast<CallBase>(&inst)) {
                call->removeFnAttr(Attribute::Convergent);
                call->removeFnAttr(Attribute::NoInline);
                if (call->getCallingConv() == CallingConv::SPIR_FUNC ||
                    call->getCallingConv() == CallingConv::SPIR_KERNEL)
                    call->setCallingConv(CallingConv::C);
            }
    }
}

bool buildWorkGroupFunctions(llvm::Module& module, std::vector<WorkGroupKernelInfo>& kernels,
                             bool loopBarriers, std::string& error) {
    using namespace llvm;
    LLVMContext& ctx = module.getContext();
    std::vector<Function*> kernelFns;
    for (Function& f : module)
        if (!f.isDeclaration() && isKernel(f))
            kernelFns.push_back(&f);

    // Functions that must be inlined into kernels: those touching work-item state, their
    // callers, and kernels (a kernel may call another).
    SmallPtrSet<Function*, 16> mustInline;
    for (Function& f : module)
        if (!f.isDeclaration() && (isKernel(f) || touchesWorkItemState(f)))
            mustInline.insert(&f);
    for (bool changed = true; changed;) {
        changed = false;
        for (Function& f : module) {
            if (f.isDeclaration() || mustInline.contains(&f))
                continue;
            for (Instruction& inst : instructions(f))
                if (auto* call = dyn_cast<CallBase>(&inst))
                    if (Function* callee = call->getCalledFunction();
                        callee && mustInline.contains(callee)) {
                        mustInline.insert(&f);
                        changed = true;
                        break;
                    }
        }
    }
    for (Function* k : kernelFns) {
        for (unsigned round = 0;; ++round) {
            SmallVector<CallBase*, 16> calls;
            for (Instruction& inst : instructions(*k))
                if (auto* call = dyn_cast<CallBase>(&inst))
                    if (Function* callee = call->getCalledFunction();
                        callee && !callee->isDeclaration() && mustInline.contains(callee))
                        calls.push_back(call);
            if (calls.empty())
                break;
            if (round > 64) {
                error = "kernel " + k->getName().str() +
                        ": recursive calls are not allowed in OpenCL C";
                return false;
            }
            for (CallBase* call : calls) {
                if (call->getCalledFunction() == k) {
                    error = "kernel " + k->getName().str() + " calls itself";
                    return false;
                }
                InlineFunctionInfo ifi;
                if (!InlineFunction(*call, ifi).isSuccess()) {
                    error = "cannot inline " + call->getCalledFunction()->getName().str() +
                            " into kernel " + k->getName().str();
                    return false;
                }
            }
        }
    }

    Placeholders ph;
    auto* i64 = Type::getInt64Ty(ctx);
    auto* phTy = FunctionType::get(i64, false);
    const char* phNames[] = {"__duet.local_id.x", "__duet.local_id.y", "__duet.local_id.z"};
    for (unsigned d = 0; d < 3; ++d)
        ph.localId[d] = Function::Create(phTy, GlobalValue::ExternalLinkage, phNames[d], module);
    ph.linear = Function::Create(phTy, GlobalValue::ExternalLinkage, "__duet.local_linear", module);
    for (Function* f : {ph.localId[0], ph.localId[1], ph.localId[2], ph.linear}) {
        f->setDoesNotAccessMemory();
        f->setDoesNotThrow();
    }
    auto* ptr = PointerType::get(ctx, 0);
    Function* hook = module.getFunction("__duet_printf");
    if (!hook)
        hook =
            Function::Create(FunctionType::get(Type::getInt32Ty(ctx),
                                               {ptr, ptr, ptr, ptr, Type::getInt32Ty(ctx)}, false),
                             GlobalValue::ExternalLinkage, "__duet_printf", module);

    WorkGroupBuilder builder(module, ph, hook);
    kernels.clear();
    for (Function* k : kernelFns) {
        WorkGroupKernelInfo info;
        const std::string entry = "__duet_wg_" + k->getName().str();
        size_t added = 0;
        if (!builder.build(*k, entry, loopBarriers, info, added, error))
            return false;
        if (added) {
            // Small groups do not fill a vector: per-iteration region loops would only cost
            // there. Keep a variant without the loop barriers and pick one per group.
            Function* simd = module.getFunction(entry);
            simd->setName(entry + ".simd");
            WorkGroupKernelInfo serialInfo;
            size_t none = 0;
            if (!builder.build(*k, entry + ".serial", false, serialInfo, none, error))
                return false;
            Function* serial = module.getFunction(entry + ".serial");
            simd->setLinkage(GlobalValue::InternalLinkage);
            serial->setLinkage(GlobalValue::InternalLinkage);
            Function* w = Function::Create(simd->getFunctionType(), GlobalValue::ExternalLinkage,
                                           entry, module);
            w->setAttributes(simd->getAttributes());
            BasicBlock* bb = BasicBlock::Create(ctx, "entry", w);
            IRBuilder<> b(bb);
            Value* items = b.getInt64(1);
            for (unsigned d = 0; d < 3; ++d) {
                Value* p = b.CreateConstInBoundsGEP1_64(
                    b.getInt8Ty(), w->getArg(1), offsetof(WorkGroupContext, localSize) + 8 * d);
                items = b.CreateMul(items, b.CreateAlignedLoad(i64, p, Align(4)));
            }
            BasicBlock* small = BasicBlock::Create(ctx, "small", w);
            BasicBlock* large = BasicBlock::Create(ctx, "large", w);
            b.CreateCondBr(b.CreateICmpULT(items, b.getInt64(kMinSimdGroup)), small, large);
            for (auto [block, callee] : {std::pair{small, serial}, std::pair{large, simd}}) {
                IRBuilder<> cb(block);
                cb.CreateCall(callee, {w->getArg(0), w->getArg(1)});
                cb.CreateRetVoid();
            }
            info.entryName = entry;
            info.perItemBytes = std::max(info.perItemBytes, serialInfo.perItemBytes);
        }
        kernels.push_back(std::move(info));
    }

    for (Function* f : {ph.localId[0], ph.localId[1], ph.localId[2], ph.linear}) {
        if (!f->use_empty()) {
            error = "internal error: a work-item id outside any region loop";
            return false;
        }
        f->eraseFromParent();
    }
    // The kernels and what was inlined into them are no longer called.
    for (Function* k : kernelFns)
        k->dropAllReferences();
    for (Function* k : kernelFns)
        k->eraseFromParent();
    for (bool changed = true; changed;) {
        changed = false;
        for (Function& f : make_early_inc_range(module))
            if (mustInline.contains(&f) && f.use_empty() && !f.isDeclaration()) {
                mustInline.erase(&f);
                f.eraseFromParent();
                changed = true;
            }
    }
    if (!hook->use_empty())
        return true;
    hook->eraseFromParent();
    return true;
}

} // namespace duet::rt
