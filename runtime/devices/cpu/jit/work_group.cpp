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
//  4. Pointer inductions with a work-item-dependent start and a uniform step become the start
//     plus a uniform offset (regions.cpp, splitPointerInductions). SSA values that can be live
//     across a barrier, and private arrays used on both sides of one, move to per-work-item
//     storage: arrays of the group's size, indexed by the local
//     linear id (vectors as one array per component). Uniform values (a data-flow analysis
//     from the work-item ids) need a single slot, double-buffered where a region reads the old
//     value before redefining it.
//  5. Innermost loops that all work-items run the same number of times get implicit barriers
//     on their entry, back and exit edges: each iteration then runs as a loop over the
//     work-items, which the vectoriser widens (a loop over j inside the kernel would otherwise
//     keep every work-item's turn scalar). Groups under kMinSimdGroup items use a variant
//     without them; groups of one work-item along x one whose work-item loop runs along y
//     (`.lx1`), for kernels that use the other dimensions. Strided loops (`for (t = lid; t < n; t
//     += lsz)`) are first rewritten to run that many times too, with a guarded body
//     (strided_loops.cpp).
//  6. Before the loop vectoriser, the region loops over x are declared parallel
//     (work_item_loops.cpp): work-items of a region are independent.
//  7. Sub-group barriers (builtins/cpu/sub_group.cl) are barriers too. Where one is under a
//     varying branch (some sub-groups reach it, others not), the regions become resumable:
//     each work-item records the region it goes on in, a region loop runs only the work-items
//     waiting there, and a dispatcher picks the next region (sub-group barriers first, then the
//     group's barrier or the end); no uniform slots and no loop barriers then.
// regions.cpp holds the uniformity analysis, the loop barriers (5) and the regions with their
// storage (2-4); this file lowers work-item functions, printf and __local variables, and
// drives the steps.
#include "devices/cpu/jit/work_group.hpp"

#include "core/environment.hpp"
#include "core/image.hpp"

#include "devices/cpu/jit/opaque_types.hpp"
#include "devices/cpu/jit/regions.hpp"

#include "devices/cpu/work_group_abi.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/ReplaceConstant.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <map>

namespace duet::rt {
namespace {

using namespace llvm;
using wg::Placeholders;
using wg::Uniformity;

constexpr unsigned kAsLocal = 3;
/// DUET_CPU_PHI_LANES=0 keeps the vector phis' unobserved lanes (for comparisons).
bool phiLanesEnabled() {
    return envSwitchOn("DUET_CPU_PHI_LANES");
}

/// How many times straight-line uniform loops are unrolled before their implicit barriers
/// (wg::unrollUniformLoops): DUET_CPU_UNIFORM_UNROLL, default 4; 0 or 1 leaves them (for
/// comparisons).
unsigned uniformLoopUnroll() {
    const char* env = std::getenv("DUET_CPU_UNIFORM_UNROLL");
    if (!env || !*env)
        return 4;
    return unsigned(std::min(16L, std::max(0L, std::strtol(env, nullptr, 10))));
}

/// Groups smaller than this run the kernel variant without implicit loop barriers.
constexpr uint64_t kMinSimdGroup = 16;

/// Whether kernel parameter `a` is an image: a pointer to the launch's KernelImageDesc.
bool isImageParam(const Argument& a) {
    const MDNode* types = a.getParent()->getMetadata("kernel_arg_type");
    if (!a.getType()->isPointerTy() || !types || a.getArgNo() >= types->getNumOperands())
        return false;
    auto* s = dyn_cast<MDString>(types->getOperand(a.getArgNo()));
    return s && s->getString().contains("image");
}
constexpr uint64_t kImageDescBytes = sizeof(KernelImageDesc);
constexpr uint64_t kImageDescAlign = alignof(KernelImageDesc);

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
    /// __duet_wg_scratch(): the collective functions' scratch (builtins/cpu/work_group.cl)
    CollectiveScratch,
    /// __duet_sub_group_width(): work-items per sub-group (builtins/cpu/sub_group.cl)
    SubGroupWidth,
    /// __duet_sub_group_barrier(flags): the group's barrier, taken for a sub-group's
    /// (builtins/cpu/sub_group.cl); an error where the group does not reach it as one
    SubGroupBarrier,
    /// __duet_sub_group_active(): the lanes of the work-item's sub-group that reached the last
    /// sub-group barrier with it (the non-uniform functions of builtins/cpu/sub_group.cl)
    SubGroupActive,
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
    if (name == "__duet_wg_scratch")
        return WorkItemFn::CollectiveScratch;
    if (name == "__duet_sub_group_width")
        return WorkItemFn::SubGroupWidth;
    if (name == "__duet_sub_group_barrier")
        return WorkItemFn::SubGroupBarrier;
    if (name == "__duet_sub_group_active")
        return WorkItemFn::SubGroupActive;
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

/// True when the work-items of `kernel` (work-item functions inlined) may run in groups of one
/// work-item along x and tell the other dimensions apart: it asks for a local or global id of
/// another dimension (or of one only known at run time) or a linear id.
bool usesHigherDimensions(Function& kernel) {
    // A required group size whose x is not 1 never launches a group of one work-item along x.
    if (const MDNode* md = kernel.getMetadata("reqd_work_group_size"); md && md->getNumOperands())
        if (auto* c = mdconst::dyn_extract<ConstantInt>(md->getOperand(0)); c && !c->isOne())
            return false;
    for (Instruction& inst : instructions(kernel)) {
        WorkItemFn kind = classifyCall(inst);
        if (kind == WorkItemFn::LocalLinearId || kind == WorkItemFn::GlobalLinearId)
            return true;
        if (kind != WorkItemFn::LocalId && kind != WorkItemFn::GlobalId)
            continue;
        auto* dim = dyn_cast<ConstantInt>(cast<CallInst>(inst).getArgOperand(0));
        if (!dim || !dim->isZero())
            return true;
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
    Value* collectiveScratch = nullptr;
    Value* subGroupWidth = nullptr; ///< i32, WorkGroupContext::subGroupSize
    Value* groupItems = nullptr;    ///< work-items in this group (localSize product)
};

/// Each barrier call of `w` becomes an empty block of its own (`barriers`, the sub-group
/// ones also in `subGroupBarriers`), between the code before and after it.
void splitAtBarriers(Function& w, std::vector<BasicBlock*>& barriers,
                     SmallPtrSetImpl<BasicBlock*>& subGroupBarriers) {
    SmallVector<CallInst*, 8> barrierCalls;
    for (Instruction& inst : instructions(w))
        if (WorkItemFn kind = classifyCall(inst);
            kind == WorkItemFn::Barrier || kind == WorkItemFn::SubGroupBarrier)
            barrierCalls.push_back(cast<CallInst>(&inst));
    for (CallInst* c : barrierCalls) {
        const bool subGroup = classifyCall(*c) == WorkItemFn::SubGroupBarrier;
        BasicBlock* bar = c->getParent()->splitBasicBlock(c, "barrier");
        bar->splitBasicBlock(c->getNextNode(), "after.barrier");
        c->eraseFromParent();
        barriers.push_back(bar);
        if (subGroup)
            subGroupBarriers.insert(bar);
    }
}

class WorkGroupBuilder {
public:
    WorkGroupBuilder(Module& m, Placeholders& ph, Function* printfHook, bool barrierChecks,
                     bool spinYields)
        : m_module(m), m_ctx(m.getContext()), m_ph(ph), m_printfHook(printfHook),
          m_barrierChecks(barrierChecks), m_spinYields(spinYields), m_i64(Type::getInt64Ty(m_ctx)),
          m_i32(Type::getInt32Ty(m_ctx)), m_ptr(PointerType::get(m_ctx, 0)) {}

    /// Builds the work-group function `name` of `kernel`; `loopBarriers` as for
    /// buildWorkGroupFunctions; `singleX`: specialised for groups of one work-item along x
    /// (get_local_size(0) is 1, get_local_id(0) is 0, the loop over y is the work-item loop).
    /// Sets `loopBarriersAdded`.
    bool build(Function& kernel, const std::string& name, bool loopBarriers, bool singleX,
               WorkGroupKernelInfo& info, size_t& loopBarriersAdded, std::string& error);

private:
    void emitPrologue(IRBuilder<>& b, Argument* ctx);
    Value* localIdValue(IRBuilder<>& b, unsigned dim);
    Value* linearValue(IRBuilder<>& b);
    void lowerWorkItemCalls(Function& w);
    Value* lowerOne(CallInst* call, WorkItemFn kind);
    bool lowerPrintf(Function& w, std::string& error);
    uint64_t lowerLocalVariables(Function& w);

    Module& m_module;
    LLVMContext& m_ctx;
    Placeholders& m_ph;
    Function* m_printfHook;
    bool m_barrierChecks; ///< buildWorkGroupFunctions' `barrierChecks`
    bool m_spinYields;    ///< buildWorkGroupFunctions' `spinYields`
    Type* m_i64;
    Type* m_i32;
    PointerType* m_ptr;
    Prologue m_pro;
    bool m_singleX = false; ///< the function being built is the singleX variant
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
    if (m_singleX) {
        cast<Instruction>(m_pro.localSize[0])->eraseFromParent();
        m_pro.localSize[0] = ConstantInt::get(m_i64, 1);
    }
    // Group sizes are 1..kCpuMaxWorkGroupSize: with that range, the loop over the local ids
    // bounds them, and `(int)get_local_id(0) + 1` stays an affine index (no sign-extension
    // of a value that might wrap), which the loop vectoriser needs to widen it.
    MDNode* groupRange =
        MDBuilder(b.getContext()).createRange(APInt(64, 1), APInt(64, kCpuMaxWorkGroupSize + 1));
    for (unsigned d = 0; d < 3; ++d)
        for (Value* v : {m_pro.enqueuedLocalSize[d], m_pro.localSize[d]})
            if (auto* load = dyn_cast<LoadInst>(v))
                load->setMetadata(LLVMContext::MD_range, groupRange);
    field3(offsetof(WorkGroupContext, numGroups), m_pro.numGroups, "num_groups");
    field3(offsetof(WorkGroupContext, groupId), m_pro.groupId, "group_id");
    m_pro.localMem = field(offsetof(WorkGroupContext, localMem), m_ptr, "local_mem");
    m_pro.printfCtx = field(offsetof(WorkGroupContext, printfCtx), m_ptr, "printf_ctx");
    m_pro.localMemEnd = field(offsetof(WorkGroupContext, localMemEnd), m_ptr, "local_mem_end");
    m_pro.stackLow = field(offsetof(WorkGroupContext, stackLow), m_ptr, "stack_low");
    m_pro.stackHigh = field(offsetof(WorkGroupContext, stackHigh), m_ptr, "stack_high");
    m_pro.collectiveScratch =
        field(offsetof(WorkGroupContext, collectiveScratch), m_ptr, "collective_scratch");
    m_pro.subGroupWidth = field(offsetof(WorkGroupContext, subGroupSize), m_i32, "sub_group_width");
    cast<LoadInst>(m_pro.subGroupWidth)
        ->setMetadata(LLVMContext::MD_range,
                      MDBuilder(b.getContext()).createRange(APInt(32, 1), APInt(32, 65)));
    m_pro.groupItems = b.CreateMul(b.CreateMul(m_pro.localSize[0], m_pro.localSize[1]),
                                   m_pro.localSize[2], "group_items");
}

Value* WorkGroupBuilder::localIdValue(IRBuilder<>& b, unsigned dim) {
    if (dim == 0 && m_singleX)
        return ConstantInt::get(m_i64, 0); // uniform, for the analysis too
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
    case WorkItemFn::CollectiveScratch:
        // One block per thread, shared by the group's work-items: a uniform pointer.
        return b.CreateAddrSpaceCast(m_pro.collectiveScratch, call->getType());
    case WorkItemFn::SubGroupWidth:
        return m_pro.subGroupWidth;
    case WorkItemFn::SubGroupActive:
        // Known per region only: the region loops replace it (buildRegions).
        return b.CreateCall(m_ph.active);
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
        if (kind != WorkItemFn::None && kind != WorkItemFn::Barrier &&
            kind != WorkItemFn::SubGroupBarrier && kind != WorkItemFn::Printf)
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
    // The block loaded as an addrspace(3) pointer, not cast from ctx->localMem: a pair of casts
    // (private -> __local -> generic) folds into one (private -> generic) in InstCombine, and the
    // variables' accesses would no longer be known as __local (cpu::plainLocalAtomics).
    auto* field = cast<LoadInst>(m_pro.localMem);
    Value* base = b.CreateAlignedLoad(PointerType::get(b.getContext(), kAsLocal),
                                      field->getPointerOperand(), field->getAlign(), "local_vars");
    uint64_t offset = 0;
    for (Constant* c : ordered) {
        auto* gv = cast<GlobalVariable>(c);
        uint64_t align = gv->getAlign() ? gv->getAlign()->value()
                                        : dl.getABITypeAlign(gv->getValueType()).value();
        offset = (offset + align - 1) / align * align;
        Value* local = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, offset, gv->getName());
        gv->replaceUsesWithIf(local, [&](Use& u) {
            auto* inst = dyn_cast<Instruction>(u.getUser());
            return inst && inst->getFunction() == &w;
        });
        offset += dl.getTypeAllocSize(gv->getValueType()).getFixedValue();
    }
    return offset;
}
bool WorkGroupBuilder::build(Function& kernel, const std::string& name, bool loopBarriers,
                             bool singleX, WorkGroupKernelInfo& info, size_t& loopBarriersAdded,
                             std::string& error) {
    m_singleX = singleX;
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
        LoadInst* value = b.CreateAlignedLoad(a.getType(), slot, Align(1), a.getName());
        if (isImageParam(a)) {
            // An image is the launch's descriptor (KernelImageDesc), never null and never
            // written by the kernel: its fields may be loaded ahead of the branches that use
            // them, so LICM hoists them (and the format tests on them) out of the loops that
            // read the image.
            MDBuilder md(m_ctx);
            auto bytes = [&](uint64_t n) {
                return MDNode::get(m_ctx, md.createConstant(ConstantInt::get(m_i64, n)));
            };
            value->setMetadata(LLVMContext::MD_dereferenceable, bytes(kImageDescBytes));
            value->setMetadata(LLVMContext::MD_align, bytes(kImageDescAlign));
            value->setMetadata(LLVMContext::MD_noundef, MDNode::get(m_ctx, {}));
        }
        callArgs.push_back(value);
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
    if (phiLanesEnabled())
        wg::dropUnusedPhiLanes(*w);

    // One exit block holding only `ret void`.
    BasicBlock* exit = nullptr;
    SmallVector<ReturnInst*, 2> rets;
    for (BasicBlock& bb : *w)
        if (auto* ret = dyn_cast<ReturnInst>(bb.getTerminator()))
            rets.push_back(ret);
    if (rets.empty()) { // `for (;;)` on every path: no end for the regions to lead to
        error = "kernel " + info.name + " never returns: every path through it loops forever";
        return false;
    }
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

    // Whether the kernel can tell its grouping (KernelDesc::observesGroups): every work-item
    // function it calls is in `w` now (a call left elsewhere is an error below).
    info.observesGroups = false;
    for (Argument& a : kernel.args())
        if (a.getType()->isPointerTy() && a.getType()->getPointerAddressSpace() == kAsLocal)
            info.observesGroups = true;
    for (Instruction& inst : instructions(*w))
        switch (classifyCall(inst)) {
        case WorkItemFn::None:
        case WorkItemFn::GlobalId:
        case WorkItemFn::WorkDim:
        case WorkItemFn::GlobalSize:
        case WorkItemFn::GlobalOffset:
        case WorkItemFn::GlobalLinearId:
        case WorkItemFn::Fence:
        case WorkItemFn::Printf:
        case WorkItemFn::ToGlobal:
        case WorkItemFn::ToPrivate:
        case WorkItemFn::GetFence:
            break;
        default:
            info.observesGroups = true;
        }
    lowerWorkItemCalls(*w);
    info.usesPrintf = false;
    for (Instruction& inst : instructions(*w))
        if (classifyCall(inst) == WorkItemFn::Printf)
            info.usesPrintf = true;
    if (!lowerPrintf(*w, error))
        return false;
    info.staticLocalMemSize = lowerLocalVariables(*w);
    info.observesGroups = info.observesGroups || info.staticLocalMemSize > 0;

    std::vector<BasicBlock*> barriers;
    SmallPtrSet<BasicBlock*, 8> subGroupBarriers;
    splitAtBarriers(*w, barriers, subGroupBarriers);
    info.hasBarrier = !barriers.empty();
    // Loops that may wait for another sub-group yield to the others every kSpinYieldEvery
    // iterations.
    SmallPtrSet<BasicBlock*, 8> yields;
    info.spinLoops = m_spinYields ? wg::insertSpinYields(*w, barriers, yields) : 0;
    for (BasicBlock* y : yields)
        subGroupBarriers.insert(y);
    // Work-group barriers make the branches above them uniform (analyseUniformity);
    // DUET_CPU_UNIFORM_BARRIER_BRANCHES=0 leaves them varying (for comparisons).
    SmallPtrSet<BasicBlock*, 8> groupBarriers;
    const char* barrierBranches = std::getenv("DUET_CPU_UNIFORM_BARRIER_BRANCHES");
    for (BasicBlock* bar : barriers)
        if (!subGroupBarriers.contains(bar) && !(barrierBranches && barrierBranches[0] == '0'))
            groupBarriers.insert(bar);
    // DUET_CPU_STRIDED_LOOPS=0 leaves strided loops as they are (for comparisons).
    const char* strided = std::getenv("DUET_CPU_STRIDED_LOOPS");
    if (loopBarriers && !(strided && strided[0] == '0'))
        wg::makeStridedLoopsUniform(*w, entry, m_ph, barriers, groupBarriers);
    Uniformity uniformity = wg::analyseUniformity(*w, entry, m_ph, groupBarriers);
    // A sub-group is a slice of the group that runs with the others, region by region, and its
    // barrier a region boundary. Where some work-items may reach one that others do not (a
    // branch uniform per sub-group only, as the spec allows), the regions become resumable:
    // each work-item resumes where it stopped (buildRegions). No implicit loop barriers then:
    // work-items of one group may be in different iterations of a loop.
    SmallPtrSet<BasicBlock*, 8> resumeAt;
    for (BasicBlock* bar : subGroupBarriers)
        if (uniformity.divergent.contains(bar) || !yields.empty())
            resumeAt = subGroupBarriers;
    if (!resumeAt.empty())
        loopBarriers = false;
    if (loopBarriers && wg::unrollUniformLoops(*w, uniformity, barriers, uniformLoopUnroll()))
        uniformity = wg::analyseUniformity(*w, entry, m_ph, groupBarriers);
    loopBarriersAdded = loopBarriers ? wg::insertLoopBarriers(*w, uniformity, barriers) : 0;
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
    // DUET_CPU_POINTER_INDUCTIONS=0 keeps varying pointer inductions as they are (comparisons).
    const char* inductions = std::getenv("DUET_CPU_POINTER_INDUCTIONS");
    if (!barriers.empty() && resumeAt.empty() && !(inductions && inductions[0] == '0'))
        wg::splitPointerInductions(*w, uniformity);
    const wg::GroupShape group{{m_pro.localSize[0], m_pro.localSize[1], m_pro.localSize[2]},
                               m_pro.groupItems,
                               singleX,
                               m_pro.subGroupWidth,
                               m_barrierChecks ? w->getArg(1) : nullptr};
    if (!wg::buildRegions(*w, entry, start, exit, barriers, resumeAt, yields, uniformity, m_ph,
                          group, info.regions, error))
        return false;
    // Per-work-item storage lives on the calling thread's stack, sized by the group.
    const DataLayout& dl = m_module.getDataLayout();
    for (Instruction& inst : *entry)
        if (auto* a = dyn_cast<AllocaInst>(&inst); a && a->getArraySize() == m_pro.groupItems)
            info.perItemBytes += dl.getTypeAllocSize(a->getAllocatedType()).getFixedValue();
    return true;
}

} // namespace

/// Whether `f` is an out-of-line path of the builtin library that loops call rarely (a texel
/// load of the less common image formats, runtime/builtins/cpu/image.cl): defined, local,
/// `cold` and `noinline`. It gets the preserve_most convention: a call then clobbers no register
/// the caller keeps a value in (the callee saves what it uses), so a loop around a rarely taken
/// call keeps its values in registers instead of on the stack.
static bool isRareLibraryPath(const llvm::Function& f) {
    return !f.isDeclaration() && f.hasLocalLinkage() && f.hasFnAttribute(llvm::Attribute::Cold) &&
           f.hasFnAttribute(llvm::Attribute::NoInline);
}

void normaliseForCpu(llvm::Module& module) {
    using namespace llvm;
    for (Function& f : module) {
        f.removeFnAttr(Attribute::Convergent);
        // clang marks every function of an -O0 (-cl-opt-disable) build optnone and noinline;
        // a noinline of its own (the builtin library's out-of-line paths) stays.
        if (f.hasFnAttribute(Attribute::OptimizeNone))
            f.removeFnAttr(Attribute::NoInline);
        f.removeFnAttr(Attribute::OptimizeNone);
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
    for (Function& f : module) {
        // Every use a direct call: a caller through a pointer would use the C convention.
        const bool onlyCalled = all_of(f.users(), [&f](const User* u) {
            const auto* call = dyn_cast<CallBase>(u);
            return call && call->getCalledOperand() == &f;
        });
        if (!isRareLibraryPath(f) || !onlyCalled)
            continue;
        f.setCallingConv(CallingConv::PreserveMost);
        for (User* u : f.users())
            cast<CallBase>(u)->setCallingConv(CallingConv::PreserveMost);
    }
}

/// The work-group variants each inline the kernel, so a function the kernels call gets a call
/// from each variant: a large helper two kernels called once each (gas dynamics' Riemann
/// solver) then had four calls, LLVM's inliner kept them calls, and the work-item loops around
/// them stayed scalar (the sweeps ran 6.5x slower once kernels got their .lx1 variant). A
/// function only kernels call, at most kInlineCalls times in all, is inlined into every variant
/// instead. A function marked noinline keeps its calls.
static void inlineKernelOnlyHelpers(llvm::Module& module,
                                    const std::vector<llvm::Function*>& kernelFns) {
    using namespace llvm;
    constexpr unsigned kInlineCalls = 4;
    for (Function& f : module) {
        if (f.isDeclaration() || f.use_empty() || f.hasFnAttribute(Attribute::NoInline) ||
            std::find(kernelFns.begin(), kernelFns.end(), &f) != kernelFns.end())
            continue;
        unsigned calls = 0;
        bool onlyKernels = true;
        for (User* u : f.users()) {
            auto* call = dyn_cast<CallBase>(u);
            if (!call || call->getCalledFunction() != &f ||
                std::find(kernelFns.begin(), kernelFns.end(), call->getFunction()) ==
                    kernelFns.end()) {
                onlyKernels = false;
                break;
            }
            ++calls;
        }
        if (onlyKernels && calls <= kInlineCalls)
            f.addFnAttr(Attribute::AlwaysInline);
    }
}

bool buildWorkGroupFunctions(llvm::Module& module, std::vector<WorkGroupKernelInfo>& kernels,
                             bool loopBarriers, bool barrierChecks, bool spinYields,
                             std::string& error) {
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
    // Not readnone: its value changes at every barrier.
    ph.active =
        Function::Create(phTy, GlobalValue::ExternalLinkage, "__duet.sub_group_active", module);
    ph.active->setDoesNotThrow();
    auto* ptr = PointerType::get(ctx, 0);
    Function* hook = module.getFunction("__duet_printf");
    if (!hook)
        hook =
            Function::Create(FunctionType::get(Type::getInt32Ty(ctx),
                                               {ptr, ptr, ptr, ptr, Type::getInt32Ty(ctx)}, false),
                             GlobalValue::ExternalLinkage, "__duet_printf", module);

    inlineKernelOnlyHelpers(module, kernelFns);

    WorkGroupBuilder builder(module, ph, hook, barrierChecks, spinYields);
    kernels.clear();
    for (Function* k : kernelFns) {
        WorkGroupKernelInfo info;
        const std::string entry = kWorkGroupEntryPrefix + k->getName().str();
        size_t added = 0;
        if (!builder.build(*k, entry, loopBarriers, false, info, added, error))
            return false;
        Function* general = module.getFunction(entry);
        Function* serial = nullptr;
        Function* singleX = nullptr;
        if (added) {
            // Small groups do not fill a vector: per-iteration region loops would only cost
            // there. Keep a variant without the loop barriers and pick one per group.
            general->setName(entry + ".simd");
            WorkGroupKernelInfo serialInfo;
            size_t none = 0;
            if (!builder.build(*k, entry + kSerialVariant, false, false, serialInfo, none, error))
                return false;
            serial = module.getFunction(entry + kSerialVariant);
            info.perItemBytes = std::max(info.perItemBytes, serialInfo.perItemBytes);
        }
        if (usesHigherDimensions(*k)) {
            // Groups of one work-item along x (1xN, as Stencil2D-style kernels launch) would
            // run the loop over x, whose vector body never runs, once per y: a variant whose
            // work-item loop runs along y instead.
            if (general->getName() == entry)
                general->setName(entry + ".simd");
            WorkGroupKernelInfo xInfo;
            size_t none = 0;
            if (!builder.build(*k, entry + kSingleXVariant, loopBarriers, true, xInfo, none, error))
                return false;
            singleX = module.getFunction(entry + kSingleXVariant);
            info.perItemBytes = std::max(info.perItemBytes, xInfo.perItemBytes);
        }
        if (serial || singleX) {
            // The entry point picks the variant from the group's shape.
            Function* w = Function::Create(general->getFunctionType(), GlobalValue::ExternalLinkage,
                                           entry, module);
            w->setAttributes(general->getAttributes());
            BasicBlock* bb = BasicBlock::Create(ctx, "entry", w);
            IRBuilder<> b(bb);
            Value* size[3];
            for (unsigned d = 0; d < 3; ++d) {
                Value* p = b.CreateConstInBoundsGEP1_64(
                    b.getInt8Ty(), w->getArg(1), offsetof(WorkGroupContext, localSize) + 8 * d);
                size[d] = b.CreateAlignedLoad(i64, p, Align(4));
            }
            auto call = [&](Function* callee) {
                callee->setLinkage(GlobalValue::InternalLinkage);
                // Kept apart, so that DUET_LOG and -save-temps name the variant of each loop.
                callee->addFnAttr(Attribute::NoInline);
                b.CreateCall(callee, {w->getArg(0), w->getArg(1)});
                b.CreateRetVoid();
            };
            auto choose = [&](Value* cond, Function* callee, const char* name) {
                BasicBlock* yes = BasicBlock::Create(ctx, name, w);
                BasicBlock* no = BasicBlock::Create(ctx, std::string("not.") + name, w);
                b.CreateCondBr(cond, yes, no);
                b.SetInsertPoint(yes);
                call(callee);
                b.SetInsertPoint(no);
            };
            if (serial)
                choose(b.CreateICmpULT(b.CreateMul(b.CreateMul(size[0], size[1]), size[2]),
                                       b.getInt64(kMinSimdGroup)),
                       serial, "small");
            if (singleX)
                choose(b.CreateICmpEQ(size[0], b.getInt64(1)), singleX, "single_x");
            call(general);
            info.entryName = entry;
        }
        kernels.push_back(std::move(info));
    }

    for (Function* f : {ph.localId[0], ph.localId[1], ph.localId[2], ph.linear, ph.active}) {
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
