// DUET_KERNEL_CHECKS on the NVIDIA device: the bounds checks of compiler/bounds_checks.hpp with
// bounds read from the launch's guard record (ptx_module.hpp: GuardRecord), and a failed check
// that records itself there (the first one of the launch, atomically) and exits the work-item.
#include "devices/nvidia/codegen/passes.hpp"

#include "compiler/bounds_checks.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Operator.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

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

private:
    Value* at(IRBuilder<>& b, Value* base, uint64_t offset) {
        return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, offset);
    }
    Value* invariantLoad(IRBuilder<>& b, uint64_t offset, const char* name) {
        LoadInst* l =
            b.CreateAlignedLoad(m_i64, at(b, b.CreateCall(m_guard), offset), Align(8), name);
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
    static const Intrinsic::ID ctaid[3] = {Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                           Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                           Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    static const Intrinsic::ID tid[3] = {Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                         Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                         Intrinsic::nvvm_read_ptx_sreg_tid_z};
    auto field = [&](Type* t, uint64_t offset) {
        return b.CreateAlignedLoad(t, at(b, launch, offset), Align(t == m_i64 ? 8 : 4));
    };
    Value* group = b.CreateAdd(field(m_i32, offsetof(nvidia::LaunchBlock, groupOffset) + 4 * d),
                               b.CreateCall(Intrinsic::getDeclaration(&m_m, ctaid[d])));
    Value* size = field(m_i32, offsetof(nvidia::LaunchBlock, enqueuedLocalSize) + 4 * d);
    Value* id = b.CreateMul(b.CreateZExt(group, m_i64), b.CreateZExt(size, m_i64));
    id =
        b.CreateAdd(id, b.CreateZExt(b.CreateCall(Intrinsic::getDeclaration(&m_m, tid[d])), m_i64));
    return b.CreateAdd(id, field(m_i64, offsetof(nvidia::LaunchBlock, globalOffset) + 8 * d),
                       "chk.gid");
}

void NvidiaCheckTarget::fail(IRBuilder<>& b, const FailedCheck& c) {
    Instruction* end = &*b.GetInsertPoint(); // the block's `unreachable`
    Value* record = b.CreateCall(m_guard);
    // The first failure of the launch claims the fault fields.
    Value* claim = b.CreateAtomicCmpXchg(at(b, record, offsetof(nvidia::GuardRecord, faultTaken)),
                                         b.getInt32(0), b.getInt32(1), MaybeAlign(4),
                                         AtomicOrdering::Monotonic, AtomicOrdering::Monotonic);
    Value* won = b.CreateExtractValue(claim, 1, "chk.first");
    Instruction* write = SplitBlockAndInsertIfThen(won, end, false);
    IRBuilder<> wb(write);
    auto store = [&](Value* v, uint64_t offset) {
        wb.CreateAlignedStore(v, at(wb, record, offset), Align(v->getType() == m_i64 ? 8 : 4));
    };
    store(c.id, offsetof(nvidia::GuardRecord, faultId));
    store(wb.getInt32(uint32_t(c.kind)), offsetof(nvidia::GuardRecord, faultKind));
    store(c.address, offsetof(nvidia::GuardRecord, faultAddress));
    store(c.low, offsetof(nvidia::GuardRecord, faultLow));
    store(c.high, offsetof(nvidia::GuardRecord, faultHigh));
    store(c.bytes, offsetof(nvidia::GuardRecord, faultBytes));
    Value* launch = wb.CreateCall(m_launch);
    for (unsigned d = 0; d < 3; ++d)
        store(globalId(wb, launch, d), offsetof(nvidia::GuardRecord, faultGlobalId) + 8 * d);
    // Stopped by a check (the other work-items leave at their next poll), then this one exits.
    IRBuilder<> eb(end);
    eb.CreateAtomicRMW(AtomicRMWInst::Or, at(eb, record, offsetof(nvidia::GuardRecord, stopped)),
                       eb.getInt32(nvidia::kStoppedByCheck), MaybeAlign(4),
                       AtomicOrdering::Monotonic);
    eb.CreateCall(Intrinsic::getDeclaration(&m_m, Intrinsic::nvvm_exit));
}

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
    }
    return notes;
}

} // namespace duet::rt::nvptx
