// DUET_KERNEL_CHECKS on the NVIDIA device: the bounds checks of compiler/bounds_checks.hpp with
// bounds read from the launch's guard record (ptx_module.hpp: GuardRecord), and a failed check
// that records itself there (the first one of the launch, atomically) and exits the work-item;
// and barrier divergence, found through a few words of shared memory at every barrier.
#include "devices/nvidia/codegen/passes.hpp"

#include "compiler/bounds_checks.hpp"
#include "core/kernel_checks.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Operator.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <algorithm>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

constexpr unsigned kGlobal = 1, kShared = 3, kPrivate = 5;

/// Whether `v` is a call of the function named `name`.
bool callsFunction(const Value* v, StringRef name) {
    const auto* call = dyn_cast<CallInst>(v);
    const Function* callee = call ? call->getCalledFunction() : nullptr;
    return callee && callee->getName() == name;
}

/// `v` with GEPs and casts stripped.
const Value* strip(const Value* v) {
    while (const auto* op = dyn_cast<Operator>(v)) {
        const unsigned code = op->getOpcode();
        if (code != Instruction::GetElementPtr && code != Instruction::BitCast &&
            code != Instruction::AddrSpaceCast)
            break;
        v = op->getOperand(0);
    }
    return v;
}

/// The byte at `offset` of `base`.
Value* byteAt(IRBuilder<>& b, Value* base, uint64_t offset) {
    return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, offset);
}

/// get_group_id(d) as i32: the launch block's group offset plus the CTA's id.
Value* groupId(Module& m, IRBuilder<>& b, Value* launch, unsigned d) {
    static const Intrinsic::ID ctaid[3] = {Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                           Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                           Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    Value* offset = b.CreateAlignedLoad(
        b.getInt32Ty(), byteAt(b, launch, offsetof(nvidia::LaunchBlock, groupOffset) + 4 * d),
        Align(4));
    return b.CreateAdd(offset, b.CreateCall(Intrinsic::getDeclaration(&m, ctaid[d])));
}

/// Stores `v` at byte `offset` of the guard record.
using StoreField = function_ref<void(Value* v, uint64_t offset)>;

/// The end of a failed check or a barrier divergence, with `b` before `end`, the block's
/// `unreachable`: the launch's first fault claims the record's fault fields (atom.cas on
/// faultTaken) and `write` fills them; then the launch is marked stopped by a check (the other
/// work-items leave at their next poll or barrier) and this work-item exits.
void recordFaultAndExit(Module& m, IRBuilder<>& b, Value* record,
                        function_ref<void(IRBuilder<>&, StoreField)> write) {
    Instruction* end = &*b.GetInsertPoint();
    Value* claim = b.CreateAtomicCmpXchg(
        byteAt(b, record, offsetof(nvidia::GuardRecord, faultTaken)), b.getInt32(0), b.getInt32(1),
        MaybeAlign(4), AtomicOrdering::Monotonic, AtomicOrdering::Monotonic);
    Value* won = b.CreateExtractValue(claim, 1, "chk.first");
    IRBuilder<> wb(SplitBlockAndInsertIfThen(won, end, false));
    write(wb, [&](Value* v, uint64_t offset) {
        wb.CreateAlignedStore(v, byteAt(wb, record, offset),
                              Align(v->getType()->getPrimitiveSizeInBits() == 64 ? 8 : 4));
    });
    IRBuilder<> eb(end);
    eb.CreateAtomicRMW(
        AtomicRMWInst::Or, byteAt(eb, record, offsetof(nvidia::GuardRecord, stopped)),
        eb.getInt32(nvidia::kStoppedByCheck), MaybeAlign(4), AtomicOrdering::Monotonic);
    eb.CreateCall(Intrinsic::getDeclaration(&m, Intrinsic::nvvm_exit));
}

class NvidiaCheckTarget final : public BoundsCheckTarget {
public:
    explicit NvidiaCheckTarget(Module& m)
        : m_m(m), m_ctx(m.getContext()), m_i32(Type::getInt32Ty(m_ctx)),
          m_i64(Type::getInt64Ty(m_ctx)) {
        m_guard = cast<Function>(
            m.getOrInsertFunction(kGuardRecordAccessor,
                                  FunctionType::get(PointerType::get(m_ctx, kGlobal), false))
                .getCallee());
        m_guard->setDoesNotAccessMemory();
        m_guard->setDoesNotThrow();
        m_guard->setWillReturn();
        m_launch = m.getOrInsertFunction(kLaunchBlockAccessor,
                                         FunctionType::get(PointerType::get(m_ctx, 0), false));
    }

    bool isPrivate(unsigned as) const override { return as == kPrivate; }
    PointerOrigin classify(Value* root) const override {
        // The launch block (a kernel parameter) and the printf buffer it names (an address the
        // printf lowering reads from it) are the runtime's; the guard record is the checks' own.
        if (callsFunction(root, kLaunchBlockAccessor) || callsFunction(root, kGuardRecordAccessor))
            return PointerOrigin::Skip;
        if (auto* cast = dyn_cast<IntToPtrInst>(root))
            if (auto* load = dyn_cast<LoadInst>(cast->getOperand(0));
                load && callsFunction(strip(load->getPointerOperand()), kLaunchBlockAccessor))
                return PointerOrigin::Skip;
        return PointerOrigin::None;
    }
    std::pair<Value*, Value*> argumentBounds(Argument& a, unsigned as, IRBuilder<>& b) override {
        const uint64_t at = sizeof(nvidia::GuardRecord) + 16 * uint64_t(a.getArgNo());
        Value* low = invariantLoad(b, at, "chk.low");
        Value* high = invariantLoad(b, at + 8, "chk.high");
        if (a.getType()->getPointerAddressSpace() == kShared) {
            // __local: [0, size) from the pointer the kernel got.
            Value* p = &a;
            if (as != kShared)
                p = b.CreateAddrSpaceCast(p, PointerType::get(m_ctx, as));
            Value* base = b.CreatePtrToInt(p, m_i64, "chk.base");
            low = b.CreateAdd(base, low, "chk.low");
            high = b.CreateAdd(base, high, "chk.high");
        }
        return {low, high};
    }
    bool failureReturns() const override { return false; }
    void fail(IRBuilder<>& b, const FailedCheck& c) override;
    /// The guard record's and the launch block's accessors (kernel_abi.cpp replaces them).
    Function* guard() const { return m_guard; }
    FunctionCallee launch() const { return m_launch; }

private:
    Value* invariantLoad(IRBuilder<>& b, uint64_t offset, const char* name) {
        LoadInst* l =
            b.CreateAlignedLoad(m_i64, byteAt(b, b.CreateCall(m_guard), offset), Align(8), name);
        l->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(m_ctx, {}));
        return l;
    }
    /// get_global_id(d) from the launch block and the special registers (workitem.cl's
    /// formula: the builtin itself may not be in the module).
    Value* globalId(IRBuilder<>& b, Value* launch, unsigned d);

    Module& m_m;
    LLVMContext& m_ctx;
    Type* m_i32;
    Type* m_i64;
    Function* m_guard;
    FunctionCallee m_launch;
};

Value* NvidiaCheckTarget::globalId(IRBuilder<>& b, Value* launch, unsigned d) {
    static const Intrinsic::ID tid[3] = {Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                         Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                         Intrinsic::nvvm_read_ptx_sreg_tid_z};
    auto field = [&](Type* t, uint64_t offset) {
        return b.CreateAlignedLoad(t, byteAt(b, launch, offset), Align(t == m_i64 ? 8 : 4));
    };
    Value* group = groupId(m_m, b, launch, d);
    Value* size = field(m_i32, offsetof(nvidia::LaunchBlock, enqueuedLocalSize) + 4 * d);
    Value* id = b.CreateMul(b.CreateZExt(group, m_i64), b.CreateZExt(size, m_i64));
    id =
        b.CreateAdd(id, b.CreateZExt(b.CreateCall(Intrinsic::getDeclaration(&m_m, tid[d])), m_i64));
    return b.CreateAdd(id, field(m_i64, offsetof(nvidia::LaunchBlock, globalOffset) + 8 * d),
                       "chk.gid");
}

void NvidiaCheckTarget::fail(IRBuilder<>& b, const FailedCheck& c) {
    recordFaultAndExit(m_m, b, b.CreateCall(m_guard), [&](IRBuilder<>& wb, StoreField store) {
        store(c.id, offsetof(nvidia::GuardRecord, faultId));
        store(wb.getInt32(uint32_t(c.kind)), offsetof(nvidia::GuardRecord, faultKind));
        store(c.address, offsetof(nvidia::GuardRecord, faultAddress));
        store(c.low, offsetof(nvidia::GuardRecord, faultLow));
        store(c.high, offsetof(nvidia::GuardRecord, faultHigh));
        store(c.bytes, offsetof(nvidia::GuardRecord, faultBytes));
        Value* launch = wb.CreateCall(m_launch);
        for (unsigned d = 0; d < 3; ++d)
            store(globalId(wb, launch, d), offsetof(nvidia::GuardRecord, faultGlobalId) + 8 * d);
    });
}

/// Barrier divergence. Every `bar.sync 0` of a kernel (a barrier site, numbered from 1) is
/// preceded by each work-item adding itself to the site's record and followed by a look at it:
/// the smallest `site << 48 | packed local id` (the lowest site's first work-item), the smallest
/// `(0xffff - site) << 48 | packed local id` (the highest site's first), the count of work-items
/// that arrived and the site of work-item 0. Exited work-items release a barrier (PTX `exit`), so a
/// work-item that returned early shows as a count below the block's size (each `ret` first
/// records the smallest packed local id that ended); work-items at two different barriers meet
/// at the same `bar.sync 0` and show as two sites. Records rotate over three slots, so that
/// work-item 0 can clear the slot two barriers ahead without a barrier of its own: every
/// work-item has read that slot before arriving at the current barrier, and nobody writes it
/// before the next one.
class BarrierChecks {
public:
    BarrierChecks(Function& k, FunctionCallee guard, FunctionCallee launch)
        : m_k(k), m_m(*k.getParent()), m_ctx(k.getContext()), m_i32(Type::getInt32Ty(m_ctx)),
          m_i64(Type::getInt64Ty(m_ctx)), m_guard(guard), m_launch(launch) {}

    /// Returns the number of barrier sites instrumented.
    unsigned run() {
        SmallVector<CallInst*, 8> sites;
        SmallVector<ReturnInst*, 4> returns;
        for (BasicBlock& bb : m_k)
            for (Instruction& i : bb) {
                if (auto* call = dyn_cast<CallInst>(&i)) {
                    const Function* callee = call->getCalledFunction();
                    if (callee && callee->getIntrinsicID() == Intrinsic::nvvm_barrier0)
                        sites.push_back(call);
                } else if (auto* ret = dyn_cast<ReturnInst>(&i)) {
                    returns.push_back(ret);
                }
            }
        if (sites.empty())
            return 0;
        auto* ty = ArrayType::get(m_i64, kWords);
        m_state = new GlobalVariable(m_m, ty, false, GlobalValue::InternalLinkage,
                                     UndefValue::get(ty), m_k.getName() + ".duet_barrier_check",
                                     nullptr, GlobalValue::NotThreadLocal, kShared);
        m_state->setAlignment(Align(8));
        entry();
        for (ReturnInst* r : returns) {
            IRBuilder<> b(r);
            b.CreateAtomicRMW(AtomicRMWInst::UMin, word(b, kEnd), packedLocalId(b), MaybeAlign(8),
                              AtomicOrdering::Monotonic);
        }
        for (size_t i = 0; i < sites.size(); ++i) // sites past 0xfffe share the last number
            instrument(sites[i], std::min<uint64_t>(i + 1, 0xfffe));
        return unsigned(sites.size());
    }

private:
    // The words of the shared record: per slot the two smallest keys, the count and work-item
    // 0's site; then the smallest packed local id that returned.
    static constexpr unsigned kLow = 0, kHigh = 3, kCount = 6, kSite0 = 9, kEnd = 12, kWords = 13;
    static constexpr uint64_t kIdBits = 48, kIdMask = (uint64_t(1) << kIdBits) - 1;

    Value* word(IRBuilder<>& b, unsigned index, Value* slot = nullptr) {
        Value* i = b.getInt32(index);
        if (slot)
            i = b.CreateAdd(i, slot);
        return b.CreateInBoundsGEP(m_state->getValueType(), m_state, {b.getInt32(0), i});
    }
    Value* sreg(IRBuilder<>& b, Intrinsic::ID id) {
        return b.CreateZExt(b.CreateCall(Intrinsic::getDeclaration(&m_m, id)), m_i64);
    }
    /// z << 32 | y << 16 | x: ordered as the work-items' linear local ids.
    Value* packedLocalId(IRBuilder<>& b) {
        Value* x = sreg(b, Intrinsic::nvvm_read_ptx_sreg_tid_x);
        Value* y = sreg(b, Intrinsic::nvvm_read_ptx_sreg_tid_y);
        Value* z = sreg(b, Intrinsic::nvvm_read_ptx_sreg_tid_z);
        return b.CreateOr(b.CreateOr(b.CreateShl(z, 32), b.CreateShl(y, 16)), x, "bar.lid");
    }
    void clearSlot(IRBuilder<>& b, Value* slot) {
        b.CreateStore(b.getInt64(~uint64_t(0)), word(b, kLow, slot));
        b.CreateStore(b.getInt64(~uint64_t(0)), word(b, kHigh, slot));
        b.CreateStore(b.getInt64(0), word(b, kCount, slot));
        b.CreateStore(b.getInt64(0), word(b, kSite0, slot));
    }
    /// Work-item 0 clears the three slots and the end word, then a barrier: the record is ready
    /// before anyone's first barrier. The slot counter is a private variable (a register).
    void entry() {
        BasicBlock& bb = m_k.getEntryBlock();
        m_gen = new AllocaInst(m_i32, m_m.getDataLayout().getAllocaAddrSpace(), "bar.gen",
                               bb.getFirstInsertionPt());
        // After the entry block's allocas: they stay in the entry block, where SROA takes them.
        BasicBlock::iterator it = bb.getFirstInsertionPt();
        while (isa<AllocaInst>(*it))
            ++it;
        IRBuilder<> b(&*it);
        b.CreateStore(b.getInt32(0), m_gen);
        Value* first = b.CreateICmpEQ(packedLocalId(b), b.getInt64(0));
        Instruction* at = &*b.GetInsertPoint();
        Instruction* then = SplitBlockAndInsertIfThen(first, at, false);
        IRBuilder<> tb(then);
        for (unsigned s = 0; s < 3; ++s)
            clearSlot(tb, tb.getInt32(s));
        tb.CreateStore(tb.getInt64(~uint64_t(0)), word(tb, kEnd));
        IRBuilder<> ab(at);
        ab.CreateCall(Intrinsic::getDeclaration(&m_m, Intrinsic::nvvm_barrier0));
    }
    void instrument(CallInst* barrier, uint64_t site) {
        IRBuilder<> b(barrier);
        Value* gen = b.CreateLoad(m_i32, m_gen, "bar.slot");
        Value* lid = packedLocalId(b);
        Value* key = b.CreateOr(lid, b.getInt64(site << kIdBits));
        // One work-item per group of lanes that got here together does the atomics for them:
        // the lowest lane, whose local id is their smallest (a warp's lanes are consecutive in
        // the linear local id), adding their count. Lanes that arrive apart come as groups of
        // their own, each adding itself. With the atomics per work-item, checked N-body ran at
        // 102 G interactions/s on an H200, 191 this way (unchecked 425).
        Value* mask = b.CreateCall(Intrinsic::getDeclaration(&m_m, Intrinsic::nvvm_activemask));
        Value* lane =
            b.CreateCall(Intrinsic::getDeclaration(&m_m, Intrinsic::nvvm_read_ptx_sreg_laneid));
        Value* leader =
            b.CreateICmpEQ(lane, b.CreateIntrinsic(Intrinsic::cttz, {m_i32}, {mask, b.getTrue()}));
        Value* arrived = b.CreateZExt(b.CreateIntrinsic(Intrinsic::ctpop, {m_i32}, {mask}), m_i64);
        Value* isFirst = b.CreateICmpEQ(lid, b.getInt64(0));
        {
            Instruction* then = SplitBlockAndInsertIfThen(leader, barrier, false);
            IRBuilder<> tb(then);
            auto rmw = [&](AtomicRMWInst::BinOp op, unsigned w, Value* v) {
                tb.CreateAtomicRMW(op, word(tb, w, gen), v, MaybeAlign(8),
                                   AtomicOrdering::Monotonic);
            };
            rmw(AtomicRMWInst::UMin, kLow, key);
            rmw(AtomicRMWInst::UMin, kHigh,
                tb.CreateOr(lid, tb.getInt64((0xffff - site) << kIdBits)));
            rmw(AtomicRMWInst::Add, kCount, arrived);
        }
        {
            Instruction* then = SplitBlockAndInsertIfThen(isFirst, barrier, false);
            IRBuilder<> tb(then);
            tb.CreateStore(tb.getInt64(site), word(tb, kSite0, gen));
        }
        // After the barrier: what arrived, then work-item 0 clears the slot two ahead.
        IRBuilder<> a(barrier->getNextNode());
        Value* low = a.CreateLoad(m_i64, word(a, kLow, gen), "bar.low");
        Value* high = a.CreateLoad(m_i64, word(a, kHigh, gen), "bar.high");
        Value* count = a.CreateLoad(m_i64, word(a, kCount, gen), "bar.count");
        Value* site0 = a.CreateLoad(m_i64, word(a, kSite0, gen), "bar.site0");
        Value* ended = a.CreateLoad(m_i64, word(a, kEnd), "bar.ended");
        Value* ahead = a.CreateURem(a.CreateAdd(gen, a.getInt32(2)), a.getInt32(3));
        Value* next = a.CreateURem(a.CreateAdd(gen, a.getInt32(1)), a.getInt32(3));
        a.CreateStore(next, m_gen);
        Value* size = a.CreateMul(a.CreateMul(sreg(a, Intrinsic::nvvm_read_ptx_sreg_ntid_x),
                                              sreg(a, Intrinsic::nvvm_read_ptx_sreg_ntid_y)),
                                  sreg(a, Intrinsic::nvvm_read_ptx_sreg_ntid_z));
        Value* someEnded = a.CreateICmpNE(count, size);
        Value* lowSite = a.CreateLShr(low, kIdBits);
        Value* highSite = a.CreateSub(a.getInt64(0xffff), a.CreateLShr(high, kIdBits));
        Value* twoSites = a.CreateICmpNE(lowSite, highSite);
        Value* diverged = a.CreateOr(someEnded, twoSites, "bar.diverged");
        Instruction* rest = &*a.GetInsertPoint();
        {
            Instruction* then =
                SplitBlockAndInsertIfThen(a.CreateAnd(isFirst, a.CreateNot(diverged)), rest, false);
            IRBuilder<> tb(then);
            clearSlot(tb, ahead);
        }
        MDBuilder md(m_ctx);
        IRBuilder<> fb(
            SplitBlockAndInsertIfThen(diverged, rest, true, md.createBranchWeights(1, 1 << 20)));
        // Work-item 0 is the first work-item of the report, the second one went elsewhere.
        Value* lowId = fb.CreateAnd(low, fb.getInt64(kIdMask));
        Value* highId = fb.CreateAnd(high, fb.getInt64(kIdMask));
        Value* zeroEnded = fb.CreateICmpEQ(ended, fb.getInt64(0));
        Value* atBarrier = fb.getInt64(uint64_t(BarrierStop::Barrier));
        Value* atEnd = fb.getInt64(uint64_t(BarrierStop::End));
        Value* otherAtSite = fb.CreateSelect(fb.CreateICmpEQ(site0, lowSite), highId, lowId);
        Value* other =
            fb.CreateSelect(someEnded, fb.CreateSelect(zeroEnded, lowId, ended), otherAtSite);
        Value* stop0 = fb.CreateSelect(fb.CreateAnd(someEnded, zeroEnded), atEnd, atBarrier);
        Value* stop1 =
            fb.CreateSelect(fb.CreateAnd(someEnded, fb.CreateNot(zeroEnded)), atEnd, atBarrier);
        report(fb, stop0, other, stop1);
    }
    /// The divergence into the record's fault fields (ptx_module.hpp: kFaultBarrierDivergence)
    /// if it is the launch's first fault; the launch stops, this work-item exits.
    void report(IRBuilder<>& b, Value* stop0, Value* other, Value* stop1) {
        recordFaultAndExit(m_m, b, b.CreateCall(m_guard), [&](IRBuilder<>& wb, StoreField store) {
            store(wb.getInt32(0), offsetof(nvidia::GuardRecord, faultId));
            store(wb.getInt32(nvidia::kFaultBarrierDivergence),
                  offsetof(nvidia::GuardRecord, faultKind));
            store(stop0, offsetof(nvidia::GuardRecord, faultAddress));
            store(wb.getInt64(0), offsetof(nvidia::GuardRecord, faultLow)); // work-item 0
            store(other, offsetof(nvidia::GuardRecord, faultHigh));
            store(stop1, offsetof(nvidia::GuardRecord, faultBytes));
            Value* launch = wb.CreateCall(m_launch);
            for (unsigned d = 0; d < 3; ++d)
                store(wb.CreateZExt(groupId(m_m, wb, launch, d), m_i64),
                      offsetof(nvidia::GuardRecord, faultGlobalId) + 8 * d);
        });
    }

    Function& m_k;
    Module& m_m;
    LLVMContext& m_ctx;
    Type* m_i32;
    Type* m_i64;
    FunctionCallee m_guard, m_launch;
    GlobalVariable* m_state = nullptr;
    AllocaInst* m_gen = nullptr;
};

} // namespace

std::string insertKernelChecks(Module& m, std::map<std::string, std::vector<std::string>>& names) {
    std::vector<Function*> kernels;
    for (Function& f : m)
        if (isKernel(f))
            kernels.push_back(&f);
    NvidiaCheckTarget target(m);
    std::string notes;
    for (Function* k : kernels) {
        const KernelCheckCounts counts = insertBoundsChecks(*k, target);
        // The arguments' names, then the variables' (the table the CPU device's hook gets).
        std::vector<std::string>& out = names[k->getName().str()];
        const std::string table = checkNamesTable(*k, counts.variables);
        for (size_t at = 0; at < table.size(); at = table.find('\0', at) + 1)
            out.emplace_back(table.c_str() + at);
        notes += uncheckedAccessesNote("DUET_KERNEL_CHECKS", *k, counts);
        BarrierChecks(*k, target.guard(), target.launch()).run();
    }
    return notes;
}

} // namespace duet::rt::nvptx
