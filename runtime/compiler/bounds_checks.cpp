// Bounds checks of checked kernels, the part every device shares: pointer origins and the
// comparisons (bounds_checks.hpp).
#include "compiler/bounds_checks.hpp"

#include "compiler/llvm_util.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Operator.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <set>

namespace duet::rt {
namespace {

using namespace llvm;
using Origin = PointerOrigin;

/// OpenCL C's capture_event_profiling_info(clk_event_t, clk_profiling_info, global void*): its
/// device's runtime writes two 64-bit values at the destination when the event completes, after
/// the kernel; the call is checked as that write.
constexpr const char* kCaptureProfilingInfo =
    "_Z28capture_event_profiling_info12ocl_clkeventiPU3AS1v";
constexpr uint64_t kCaptureProfilingInfoBytes = 16;
constexpr uint64_t kProfilingCommandExecTime = 1; ///< CLK_PROFILING_COMMAND_EXEC_TIME

/// Whether kernel argument `a` is an image (a pointer to its descriptor).
bool isImageArgument(const Argument& a) {
    const MDNode* types = a.getParent()->getMetadata("kernel_arg_type");
    if (!types || a.getArgNo() >= types->getNumOperands())
        return false;
    auto* s = dyn_cast<MDString>(types->getOperand(a.getArgNo()));
    return s && s->getString().contains("image");
}

bool worthInlining(const Function& callee, bool everything) {
    if (callee.isDeclaration())
        return false;
    if (everything || !callee.doesNotAccessMemory() || callee.getReturnType()->isPointerTy())
        return true;
    for (const Argument& a : callee.args())
        if (a.getType()->isPointerTy())
            return true;
    return false;
}

/// Follows GEPs and casts (instructions or constant expressions) to the pointer they start from.
Value* stripToRoot(Value* v) {
    for (;;) {
        if (auto* call = dyn_cast<CallInst>(v)) {
            const Function* callee = call->getCalledFunction();
            if (callee && call->arg_size() == 1 && isAtomicScopeMarker(callee->getName())) {
                v = call->getArgOperand(0);
                continue;
            }
            return v;
        }
        auto* op = dyn_cast<Operator>(v);
        if (!op)
            return v;
        switch (op->getOpcode()) {
        case Instruction::GetElementPtr:
        case Instruction::BitCast:
        case Instruction::AddrSpaceCast:
            v = op->getOperand(0);
            continue;
        default:
            return v;
        }
    }
}

/// Whether `i` is a call of capture_event_profiling_info (as clang declares it).
bool isCaptureProfilingInfo(const Instruction& i) {
    const auto* call = dyn_cast<CallInst>(&i);
    const Function* callee = call ? call->getCalledFunction() : nullptr;
    return callee && callee->getName() == kCaptureProfilingInfo && call->arg_size() == 3 &&
           call->getArgOperand(1)->getType()->isIntegerTy() &&
           call->getArgOperand(2)->getType()->isPointerTy();
}

Origin join(Origin a, Origin b) {
    if (a == Origin::None || b == Origin::None)
        return a == Origin::None ? b : a;
    if (a == b)
        return a;
    if (a == Origin::Null && b != Origin::Unknown)
        return b; // NULL or known bounds, NULL or memory not checked
    if (b == Origin::Null && a != Origin::Unknown)
        return a;
    return Origin::Unknown; // Known with Skip, or anything with Unknown
}

/// The bounds of one pointer at one place: [low, high) as i64, and the id a failure reports.
struct Shadow {
    Value* low;
    Value* high;
    Value* id;
};

/// Instruments one kernel.
class KernelChecker {
public:
    KernelChecker(Function& f, BoundsCheckTarget& target)
        : m_f(f), m_target(target), m_ctx(f.getContext()), m_dl(f.getParent()->getDataLayout()),
          m_i64(Type::getInt64Ty(m_ctx)), m_i32(Type::getInt32Ty(m_ctx)) {}

    KernelCheckCounts run();

private:
    Origin leaf(Value* v) const;
    Origin originOf(Value* root);
    Shadow shadowAt(Value* p, Instruction* at);
    void check(Instruction* access, Value* ptr, Value* bytes, AccessKind kind, bool mayBeEmpty);
    bool deferrable(Instruction* access, Value* ptr, const Shadow& s) const;
    void deferCheck(Instruction* access, const FailedCheck& c, Value* bad);
    void visit(Instruction& i);
    /// `v` as an i64 address comparable with pointers in address space `as`.
    Value* addressIn(Value* v, unsigned as, IRBuilder<>& b) {
        if (v->getType()->getPointerAddressSpace() != as)
            v = b.CreateAddrSpaceCast(v, PointerType::get(m_ctx, as));
        return b.CreatePtrToInt(v, m_i64, "chk.addr");
    }

    Function& m_f;
    BoundsCheckTarget& m_target;
    LLVMContext& m_ctx;
    const DataLayout& m_dl;
    Type* m_i64;
    Type* m_i32;
    DenseMap<Value*, Origin> m_origin;
    DenseMap<std::pair<PHINode*, unsigned>, Shadow> m_phiShadows;
    KernelCheckCounts m_counts;
    SmallPtrSet<Instruction*, 32> m_inLoop; ///< accesses in a loop of the kernel
};

Origin KernelChecker::leaf(Value* v) const {
    if (Origin o = m_target.classify(v); o != Origin::None)
        return o;
    if (auto* a = dyn_cast<Argument>(v))
        return a->getParent() == &m_f && !a->hasByValAttr() &&
                       !m_target.isPrivate(a->getType()->getPointerAddressSpace())
                   ? Origin::Known
                   : Origin::Skip; // byval structs: the work-item's own copy
    if (auto* gv = dyn_cast<GlobalVariable>(v))
        return !gv->isDeclaration() && gv->getValueType()->isSized() ? Origin::Known
                                                                     : Origin::Unknown;
    if (isa<AllocaInst>(v))
        return Origin::Skip;
    if (auto* load = dyn_cast<LoadInst>(v)) // an image's texel pointer
        if (auto* a = dyn_cast<Argument>(stripToRoot(load->getPointerOperand()));
            a && a->getParent() == &m_f && isImageArgument(*a))
            return Origin::Skip;
    if (isa<ConstantPointerNull>(v))
        return Origin::Null;
    return Origin::Unknown;
}

Origin KernelChecker::originOf(Value* root) {
    if (auto it = m_origin.find(root); it != m_origin.end())
        return it->second;
    // Every phi and select reachable from `root` through pointer operands, then a fixpoint:
    // a merge is known only when all it merges is.
    std::vector<Instruction*> merges;
    std::vector<Value*> work{root};
    std::set<Value*> seen;
    while (!work.empty()) {
        Value* v = stripToRoot(work.back());
        work.pop_back();
        if (!seen.insert(v).second || m_origin.count(v))
            continue;
        if (auto* phi = dyn_cast<PHINode>(v)) {
            merges.push_back(phi);
            for (Value* in : phi->incoming_values())
                work.push_back(in);
        } else if (auto* sel = dyn_cast<SelectInst>(v)) {
            merges.push_back(sel);
            work.push_back(sel->getTrueValue());
            work.push_back(sel->getFalseValue());
        } else {
            m_origin[v] = leaf(v);
        }
    }
    for (Instruction* i : merges)
        m_origin[i] = Origin::None;
    for (bool changed = true; changed;) {
        changed = false;
        for (Instruction* i : merges) {
            Origin o = Origin::None;
            if (auto* phi = dyn_cast<PHINode>(i)) {
                for (Value* in : phi->incoming_values())
                    o = join(o, m_origin.lookup(stripToRoot(in)));
            } else {
                auto* sel = cast<SelectInst>(i);
                o = join(m_origin.lookup(stripToRoot(sel->getTrueValue())),
                         m_origin.lookup(stripToRoot(sel->getFalseValue())));
            }
            if (o != m_origin[i]) {
                m_origin[i] = o;
                changed = true;
            }
        }
    }
    for (Instruction* i : merges)
        if (m_origin[i] == Origin::None)
            m_origin[i] = Origin::Unknown;
    return m_origin.lookup(root);
}

Shadow KernelChecker::shadowAt(Value* p, Instruction* at) {
    // Bounds are addresses in the space of `p` (the access's, or a merge's on the way to it).
    const unsigned as = p->getType()->getPointerAddressSpace();
    Value* root = stripToRoot(p);
    IRBuilder<> b(at);
    if (auto* a = dyn_cast<Argument>(root)) {
        auto [low, high] = m_target.argumentBounds(*a, as, b);
        return {low, high, b.getInt32(a->getArgNo())};
    }
    if (auto* gv = dyn_cast<GlobalVariable>(root)) {
        unsigned index = 0;
        while (index < m_counts.variables.size() && m_counts.variables[index] != gv)
            ++index;
        if (index == m_counts.variables.size())
            m_counts.variables.push_back(gv);
        const uint64_t size = m_dl.getTypeAllocSize(gv->getValueType()).getFixedValue();
        Value* low = addressIn(gv, as, b);
        Value* high = b.CreateAdd(low, ConstantInt::get(m_i64, size), "chk.high");
        return {low, high, ConstantInt::get(m_i32, m_f.arg_size() + index)};
    }
    if (isa<ConstantPointerNull>(root)) {
        Constant* zero = ConstantInt::get(m_i64, 0);
        return {zero, zero, ConstantInt::get(m_i32, kCheckNullId)};
    }
    if (auto* sel = dyn_cast<SelectInst>(root)) {
        Shadow t = shadowAt(sel->getTrueValue(), at);
        Shadow f = shadowAt(sel->getFalseValue(), at);
        Value* c = sel->getCondition();
        return {b.CreateSelect(c, t.low, f.low), b.CreateSelect(c, t.high, f.high),
                b.CreateSelect(c, t.id, f.id)};
    }
    auto* phi = cast<PHINode>(root);
    if (auto it = m_phiShadows.find({phi, as}); it != m_phiShadows.end())
        return it->second;
    const unsigned n = phi->getNumIncomingValues();
    Shadow s{PHINode::Create(m_i64, n, "chk.low", phi), PHINode::Create(m_i64, n, "chk.high", phi),
             PHINode::Create(m_i32, n, "chk.id", phi)};
    m_phiShadows[{phi, as}] = s;
    DenseMap<BasicBlock*, Shadow> perBlock; // a block listed twice must give the same values
    for (unsigned i = 0; i < n; ++i) {
        BasicBlock* from = phi->getIncomingBlock(i);
        auto it = perBlock.find(from);
        if (it == perBlock.end()) {
            // In the access's address space: a cast of the incoming pointer to it, at the edge.
            Value* in = phi->getIncomingValue(i);
            Instruction* term = from->getTerminator();
            if (in->getType()->getPointerAddressSpace() != as)
                in = IRBuilder<>(term).CreateAddrSpaceCast(in, PointerType::get(m_ctx, as));
            it = perBlock.insert({from, shadowAt(in, term)}).first;
        }
        cast<PHINode>(s.low)->addIncoming(it->second.low, from);
        cast<PHINode>(s.high)->addIncoming(it->second.high, from);
        cast<PHINode>(s.id)->addIncoming(it->second.id, from);
    }
    return s;
}

void KernelChecker::check(Instruction* access, Value* ptr, Value* bytes, AccessKind kind,
                          bool mayBeEmpty) {
    if (m_target.isPrivate(ptr->getType()->getPointerAddressSpace()))
        return; // private memory: not checked
    switch (originOf(stripToRoot(ptr))) {
    case Origin::Skip:
        return;
    case Origin::Known:
    case Origin::Null:
        break;
    default:
        ++m_counts.unchecked;
        return;
    }
    ++m_counts.checked;
    Shadow s = shadowAt(ptr, access);
    IRBuilder<> b(access);
    Value* addr = b.CreatePtrToInt(ptr, m_i64, "chk.addr");
    Value* end = b.CreateAdd(addr, bytes, "chk.end");
    Value* bad = b.CreateOr(b.CreateICmpULT(addr, s.low), b.CreateICmpUGT(end, s.high), "chk.bad");
    if (mayBeEmpty)
        bad = b.CreateAnd(bad, b.CreateICmpNE(bytes, ConstantInt::get(m_i64, 0)));
    if (!mayBeEmpty && deferrable(access, ptr, s)) {
        deferCheck(access, {s.id, kind, addr, s.low, s.high, bytes}, bad);
        return;
    }
    MDNode* weights = MDBuilder(m_ctx).createBranchWeights(1, 1u << 20);
    Instruction* then = SplitBlockAndInsertIfThen(bad, access, !m_target.failureReturns(), weights);
    IRBuilder<> fb(then);
    m_target.fail(fb, {s.id, kind, addr, s.low, s.high, bytes});
}

bool KernelChecker::deferrable(Instruction* access, Value* ptr, const Shadow& s) const {
    if (!m_target.defersFailures() || m_inLoop.contains(access) || !isa<ConstantInt>(s.id))
        return false;
    // Inside a loop of the kernel a failure must stop it at once (the loop may not end); merged
    // pointers (selects, phis) have bounds per work-item.
    Value* root = stripToRoot(ptr);
    if (!isa<Argument, ConstantPointerNull>(root))
        return false;
    if (auto* l = dyn_cast<LoadInst>(access))
        return l->isSimple();
    auto* st = dyn_cast<StoreInst>(access);
    return st && st->isSimple();
}

void KernelChecker::deferCheck(Instruction* access, const FailedCheck& c, Value* bad) {
    ++m_counts.deferred;
    IRBuilder<> b(access);
    m_target.deferFailure(b, c, bad);
    // The access only where its check passes; a load that fails gives zero.
    Instruction* then =
        SplitBlockAndInsertIfThen(b.CreateNot(bad, "chk.ok"), access, false,
                                  MDBuilder(m_ctx).createBranchWeights(1u << 20, 1));
    BasicBlock* head = then->getParent()->getSinglePredecessor();
    access->moveBefore(then);
    if (access->getType()->isVoidTy())
        return;
    BasicBlock* tail = then->getSuccessor(0);
    PHINode* phi = PHINode::Create(access->getType(), 2, access->getName() + ".chk", tail->begin());
    access->replaceAllUsesWith(phi);
    phi->addIncoming(access, then->getParent());
    phi->addIncoming(Constant::getNullValue(access->getType()), head);
}

void KernelChecker::visit(Instruction& i) {
    auto size = [&](Type* t) {
        return ConstantInt::get(m_i64, m_dl.getTypeStoreSize(t).getFixedValue());
    };
    if (auto* l = dyn_cast<LoadInst>(&i))
        check(l, l->getPointerOperand(), size(l->getType()),
              l->isAtomic() ? AccessKind::Atomic : AccessKind::Load, false);
    else if (auto* s = dyn_cast<StoreInst>(&i))
        check(s, s->getPointerOperand(), size(s->getValueOperand()->getType()),
              s->isAtomic() ? AccessKind::Atomic : AccessKind::Store, false);
    else if (auto* a = dyn_cast<AtomicRMWInst>(&i))
        check(a, a->getPointerOperand(), size(a->getValOperand()->getType()), AccessKind::Atomic,
              false);
    else if (auto* x = dyn_cast<AtomicCmpXchgInst>(&i))
        check(x, x->getPointerOperand(), size(x->getCompareOperand()->getType()),
              AccessKind::Atomic, false);
    else if (auto* call = dyn_cast<CallInst>(&i); call && isCaptureProfilingInfo(*call)) {
        // capture_event_profiling_info writes only for its one name and a destination that is
        // not NULL (NULL is ignored); anything else is a check of 0 bytes, which passes.
        IRBuilder<> b(call);
        Value* name = call->getArgOperand(1);
        Value* dest = call->getArgOperand(2);
        Value* writes = b.CreateAnd(
            b.CreateICmpEQ(name, ConstantInt::get(name->getType(), kProfilingCommandExecTime)),
            b.CreateIsNotNull(dest), "chk.capture");
        check(call, dest,
              b.CreateSelect(writes, ConstantInt::get(m_i64, kCaptureProfilingInfoBytes),
                             ConstantInt::get(m_i64, 0)),
              AccessKind::Store, true);
    } else if (auto* mi = dyn_cast<MemIntrinsic>(&i)) {
        IRBuilder<> b(mi);
        Value* len = b.CreateZExtOrTrunc(mi->getLength(), m_i64);
        check(mi, mi->getRawDest(), len, AccessKind::Store, true);
        if (auto* mt = dyn_cast<MemTransferInst>(mi))
            check(mt, mt->getRawSource(), len, AccessKind::Load, true);
    }
}

KernelCheckCounts KernelChecker::run() {
    std::vector<Instruction*> accesses;
    DominatorTree dt(m_f);
    LoopInfo loops(dt);
    for (Instruction& i : instructions(m_f))
        if (isa<LoadInst, StoreInst, AtomicRMWInst, AtomicCmpXchgInst, MemIntrinsic>(i) ||
            isCaptureProfilingInfo(i)) {
            accesses.push_back(&i);
            if (loops.getLoopFor(i.getParent()))
                m_inLoop.insert(&i);
        }
    for (Instruction* i : accesses)
        visit(*i);
    return m_counts;
}

} // namespace

KernelCheckCounts insertBoundsChecks(Function& kernel, BoundsCheckTarget& target) {
    return KernelChecker(kernel, target).run();
}

std::string checkNamesTable(const Function& kernel, ArrayRef<GlobalVariable*> variables) {
    std::string text;
    const MDNode* md = kernel.getMetadata("kernel_arg_name");
    for (const Argument& a : kernel.args()) {
        std::string name = a.getName().str();
        if (md && a.getArgNo() < md->getNumOperands())
            if (auto* s = dyn_cast<MDString>(md->getOperand(a.getArgNo())))
                name = s->getString().str();
        text += name;
        text.push_back('\0');
    }
    for (const GlobalVariable* gv : variables) {
        text += gv->getName().str();
        text.push_back('\0');
    }
    return text;
}

std::string uncheckedAccessesNote(const char* variable, const Function& kernel,
                                  const KernelCheckCounts& counts) {
    if (!counts.unchecked)
        return {};
    return "note: " + std::string(variable) + ": kernel " + kernel.getName().str() + ": " +
           std::to_string(counts.unchecked) + " of " +
           std::to_string(counts.unchecked + counts.checked) +
           " memory accesses are not checked (their pointers are loaded from memory or made "
           "from integers, not derived from an argument or a program variable)\n";
}

void inlineForGuards(ArrayRef<Function*> kernels, bool everything) {
    for (Function* k : kernels)
        for (unsigned round = 0; round < 64; ++round) {
            std::vector<CallBase*> calls;
            for (Instruction& inst : instructions(*k))
                if (auto* call = dyn_cast<CallBase>(&inst))
                    if (Function* callee = call->getCalledFunction();
                        callee && callee != k && worthInlining(*callee, everything))
                        calls.push_back(call);
            if (calls.empty())
                break;
            for (CallBase* call : calls) {
                InlineFunctionInfo ifi;
                (void)InlineFunction(*call, ifi); // what stays a call stays unchecked
            }
        }
}

} // namespace duet::rt
