// Bounds checks (DUET_CPU_CHECKS) and cancellation points (DUET_KERNEL_TIMEOUT) in CPU kernels,
// around the work-group pass; see kernel_checks.hpp.
#include "devices/cpu/jit/kernel_checks.hpp"

#include "devices/cpu/jit/guards.hpp"
#include "devices/cpu/work_group_abi.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Operator.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <cstddef>
#include <set>
#include <vector>

namespace duet::rt {
namespace {

using namespace llvm;
using cpu::AccessKind;
using cpu::kCancelledHookName;
using cpu::kCheckFailHookName;

/// Placeholders: `i64 (i32 slot)` reads WorkGroupContext::argBounds[slot]; `ptr ()` is
/// WorkGroupContext::cancel. lowerGuardPlaceholders replaces them.
constexpr const char* kBoundName = "__duet.guard.bound";
constexpr const char* kCancelName = "__duet.guard.cancel";
/// The id of a NULL pointer in the check-fail hook (no argument or variable).
constexpr uint32_t kNullId = 0xffffffffu;

bool isKernel(const Function& f) {
    return f.getCallingConv() == CallingConv::SPIR_KERNEL || f.hasMetadata("kernel_arg_addr_space");
}

std::vector<Function*> kernelsOf(Module& m) {
    std::vector<Function*> out;
    for (Function& f : m)
        if (!f.isDeclaration() && isKernel(f))
            out.push_back(&f);
    return out;
}

/// Whether kernel argument `a` is an image (its descriptor, core/image.hpp's KernelImageDesc).
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

/// Where a pointer comes from: known bounds; memory not checked by design (private memory, an
/// image's texels, which the image builtins keep inside the image, the collective functions'
/// scratch); or unknown.
enum class Origin : uint8_t { None, Known, Skip, Unknown };

Origin join(Origin a, Origin b) {
    if (a == Origin::None)
        return b;
    if (b == Origin::None || a == b)
        return a;
    return Origin::Unknown; // Known with Skip, or anything with Unknown
}

/// The bounds of one pointer at one place: [low, high) as i64, and the id the hook reports.
struct Shadow {
    Value* low;
    Value* high;
    Value* id;
};

/// Instruments one kernel.
class KernelChecker {
public:
    KernelChecker(Function& f, Function* bound, FunctionCallee fail, FunctionCallee globalId,
                  GlobalVariable* namesSlot)
        : m_f(f), m_ctx(f.getContext()), m_dl(f.getParent()->getDataLayout()), m_bound(bound),
          m_fail(fail), m_globalId(globalId), m_namesSlot(namesSlot),
          m_i64(Type::getInt64Ty(m_ctx)), m_i32(Type::getInt32Ty(m_ctx)) {}

    /// Checks every access; returns the number left unchecked (and counts checked ones).
    void run();
    unsigned checked() const { return m_checked; }
    unsigned unchecked() const { return m_unchecked; }
    /// The names table: each argument's name (empty when unknown), then each variable's.
    std::string namesText() const;

private:
    Origin originOf(Value* root);
    Shadow shadowAt(Value* p, Instruction* at);
    void check(Instruction* access, Value* ptr, Value* bytes, AccessKind kind, bool mayBeEmpty);
    void visit(Instruction& i);
    Value* toInt(Value* p, Instruction* at) { return new PtrToIntInst(p, m_i64, "chk.addr", at); }

    Function& m_f;
    LLVMContext& m_ctx;
    const DataLayout& m_dl;
    Function* m_bound;
    FunctionCallee m_fail, m_globalId;
    GlobalVariable* m_namesSlot;
    Type* m_i64;
    Type* m_i32;
    DenseMap<Value*, Origin> m_origin;
    DenseMap<PHINode*, Shadow> m_phiShadows;
    std::vector<GlobalVariable*> m_vars; ///< variables by id - argument count
    unsigned m_checked = 0, m_unchecked = 0;
};

Origin KernelChecker::originOf(Value* root) {
    if (auto it = m_origin.find(root); it != m_origin.end())
        return it->second;
    // Every phi and select reachable from `root` through pointer operands, then a fixpoint:
    // a merge is known only when all it merges is.
    std::vector<Instruction*> merges;
    std::vector<Value*> work{root};
    std::set<Value*> seen;
    auto leaf = [&](Value* v) -> Origin {
        if (auto* a = dyn_cast<Argument>(v))
            return a->getParent() == &m_f && a->getType()->getPointerAddressSpace() != 0
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
        if (auto* call = dyn_cast<CallInst>(v))
            if (Function* callee = call->getCalledFunction();
                callee && callee->getName() == "__duet_wg_scratch")
                return Origin::Skip;
        if (isa<ConstantPointerNull>(v))
            return Origin::Known;
        return Origin::Unknown;
    };
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
    Value* root = stripToRoot(p);
    if (auto* a = dyn_cast<Argument>(root)) {
        IRBuilder<> b(at);
        const unsigned n = a->getArgNo();
        return {b.CreateCall(m_bound, {b.getInt32(2 * n)}, "chk.low"),
                b.CreateCall(m_bound, {b.getInt32(2 * n + 1)}, "chk.high"), b.getInt32(n)};
    }
    if (auto* gv = dyn_cast<GlobalVariable>(root)) {
        unsigned index = 0;
        while (index < m_vars.size() && m_vars[index] != gv)
            ++index;
        if (index == m_vars.size())
            m_vars.push_back(gv);
        const uint64_t size = m_dl.getTypeAllocSize(gv->getValueType()).getFixedValue();
        Value* low = toInt(gv, at);
        Value* high = BinaryOperator::CreateAdd(low, ConstantInt::get(m_i64, size), "chk.high", at);
        return {low, high, ConstantInt::get(m_i32, m_f.arg_size() + index)};
    }
    if (isa<ConstantPointerNull>(root)) {
        Constant* zero = ConstantInt::get(m_i64, 0);
        return {zero, zero, ConstantInt::get(m_i32, kNullId)};
    }
    if (auto* sel = dyn_cast<SelectInst>(root)) {
        Shadow t = shadowAt(sel->getTrueValue(), at);
        Shadow f = shadowAt(sel->getFalseValue(), at);
        IRBuilder<> b(at);
        Value* c = sel->getCondition();
        return {b.CreateSelect(c, t.low, f.low), b.CreateSelect(c, t.high, f.high),
                b.CreateSelect(c, t.id, f.id)};
    }
    auto* phi = cast<PHINode>(root);
    if (auto it = m_phiShadows.find(phi); it != m_phiShadows.end())
        return it->second;
    const unsigned n = phi->getNumIncomingValues();
    Shadow s{PHINode::Create(m_i64, n, "chk.low", phi), PHINode::Create(m_i64, n, "chk.high", phi),
             PHINode::Create(m_i32, n, "chk.id", phi)};
    m_phiShadows[phi] = s;
    DenseMap<BasicBlock*, Shadow> perBlock; // a block listed twice must give the same values
    for (unsigned i = 0; i < n; ++i) {
        BasicBlock* from = phi->getIncomingBlock(i);
        auto it = perBlock.find(from);
        if (it == perBlock.end())
            it = perBlock.insert({from, shadowAt(phi->getIncomingValue(i), from->getTerminator())})
                     .first;
        cast<PHINode>(s.low)->addIncoming(it->second.low, from);
        cast<PHINode>(s.high)->addIncoming(it->second.high, from);
        cast<PHINode>(s.id)->addIncoming(it->second.id, from);
    }
    return s;
}

void KernelChecker::check(Instruction* access, Value* ptr, Value* bytes, AccessKind kind,
                          bool mayBeEmpty) {
    const unsigned as = ptr->getType()->getPointerAddressSpace();
    if (as == 0)
        return; // private memory: not checked
    switch (originOf(stripToRoot(ptr))) {
    case Origin::Skip:
        return;
    case Origin::Known:
        break;
    default:
        ++m_unchecked;
        return;
    }
    ++m_checked;
    Shadow s = shadowAt(ptr, access);
    IRBuilder<> b(access);
    Value* addr = toInt(ptr, access);
    Value* end = b.CreateAdd(addr, bytes, "chk.end");
    Value* bad = b.CreateOr(b.CreateICmpULT(addr, s.low), b.CreateICmpUGT(end, s.high), "chk.bad");
    if (mayBeEmpty)
        bad = b.CreateAnd(bad, b.CreateICmpNE(bytes, ConstantInt::get(m_i64, 0)));
    MDNode* weights = MDBuilder(m_ctx).createBranchWeights(1, 1u << 20);
    Instruction* then = SplitBlockAndInsertIfThen(bad, access, false, weights);
    IRBuilder<> cb(then);
    Value* gid[3];
    for (unsigned d = 0; d < 3; ++d)
        gid[d] = cb.CreateCall(m_globalId, {cb.getInt32(d)});
    cb.CreateCall(m_fail, {s.id, cb.getInt32(uint32_t(kind)), addr, s.low, s.high, bytes,
                           m_namesSlot, gid[0], gid[1], gid[2]});
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
    else if (auto* mi = dyn_cast<MemIntrinsic>(&i)) {
        IRBuilder<> b(mi);
        Value* len = b.CreateZExtOrTrunc(mi->getLength(), m_i64);
        check(mi, mi->getRawDest(), len, AccessKind::Store, true);
        if (auto* mt = dyn_cast<MemTransferInst>(mi))
            check(mt, mt->getRawSource(), len, AccessKind::Load, true);
    }
}

void KernelChecker::run() {
    std::vector<Instruction*> accesses;
    for (Instruction& i : instructions(m_f))
        if (isa<LoadInst, StoreInst, AtomicRMWInst, AtomicCmpXchgInst, MemIntrinsic>(i))
            accesses.push_back(&i);
    for (Instruction* i : accesses)
        visit(*i);
}

std::string KernelChecker::namesText() const {
    std::string text;
    const MDNode* md = m_f.getMetadata("kernel_arg_name");
    for (const Argument& a : m_f.args()) {
        std::string name = a.getName().str();
        if (md && a.getArgNo() < md->getNumOperands())
            if (auto* s = dyn_cast<MDString>(md->getOperand(a.getArgNo())))
                name = s->getString().str();
        text += name;
        text.push_back('\0');
    }
    for (const GlobalVariable* gv : m_vars) {
        text += gv->getName().str();
        text.push_back('\0');
    }
    return text;
}

} // namespace

void inlineForGuards(Module& module, bool everything) {
    for (Function* k : kernelsOf(module))
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

std::string insertBoundsChecks(Module& module) {
    LLVMContext& ctx = module.getContext();
    auto* i64 = Type::getInt64Ty(ctx);
    auto* i32 = Type::getInt32Ty(ctx);
    auto* ptr = PointerType::get(ctx, 0);
    Function* bound = cast<Function>(
        module.getOrInsertFunction(kBoundName, FunctionType::get(i64, {i32}, false)).getCallee());
    bound->setDoesNotAccessMemory();
    bound->setDoesNotThrow();
    bound->setWillReturn();
    FunctionCallee fail = module.getOrInsertFunction(
        kCheckFailHookName,
        FunctionType::get(Type::getVoidTy(ctx), {i32, i32, i64, i64, i64, i64, ptr, i64, i64, i64},
                          false));
    if (auto* f = dyn_cast<Function>(fail.getCallee())) {
        // It never returns to the kernel (the hook leaves by longjmp): to the code around a
        // check, it touches nothing the kernel can see.
        f->addFnAttr(Attribute::Cold);
        f->setDoesNotThrow();
        f->setOnlyAccessesInaccessibleMemory();
    }
    FunctionCallee globalId =
        module.getOrInsertFunction("_Z13get_global_idj", FunctionType::get(i64, {i32}, false));
    std::string notes;
    for (Function* k : kernelsOf(module)) {
        // The names table is made once its size is known; its uses point at a stand-in first.
        // Address space 0 (spir's default for globals is 1): the hook takes a host pointer.
        auto* slot = new GlobalVariable(module, Type::getInt8Ty(ctx), true,
                                        GlobalValue::ExternalLinkage, nullptr, "__duet.chk.names",
                                        nullptr, GlobalValue::NotThreadLocal, 0u);
        KernelChecker checker(*k, bound, fail, globalId, slot);
        checker.run();
        Constant* text = ConstantDataArray::getString(ctx, checker.namesText(), false);
        auto* names = new GlobalVariable(module, text->getType(), true, GlobalValue::PrivateLinkage,
                                         text, "__duet.chk.names." + k->getName(), nullptr,
                                         GlobalValue::NotThreadLocal, 0u);
        slot->replaceAllUsesWith(names);
        slot->eraseFromParent();
        if (checker.unchecked())
            notes += "note: DUET_CPU_CHECKS: kernel " + k->getName().str() + ": " +
                     std::to_string(checker.unchecked()) + " of " +
                     std::to_string(checker.unchecked() + checker.checked()) +
                     " memory accesses are not checked (their pointers are loaded from memory "
                     "or made from integers, not derived from an argument or a program "
                     "variable)\n";
    }
    return notes;
}

void insertCancellationPoints(Module& module) {
    LLVMContext& ctx = module.getContext();
    auto* ptr = PointerType::get(ctx, 0);
    Function* flag = cast<Function>(
        module.getOrInsertFunction(kCancelName, FunctionType::get(ptr, false)).getCallee());
    flag->setDoesNotAccessMemory();
    flag->setDoesNotThrow();
    flag->setWillReturn();
    FunctionCallee cancelled = module.getOrInsertFunction(
        kCancelledHookName, FunctionType::get(Type::getVoidTy(ctx), false));
    if (auto* f = dyn_cast<Function>(cancelled.getCallee())) {
        f->addFnAttr(Attribute::Cold);
        f->setDoesNotThrow();
        f->setOnlyAccessesInaccessibleMemory();
    }
    MDNode* weights = MDBuilder(ctx).createBranchWeights(1, 1u << 20);
    for (Function* k : kernelsOf(module)) {
        DominatorTree dt(*k);
        std::vector<BasicBlock*> latches;
        for (BasicBlock& bb : *k)
            for (BasicBlock* succ : successors(&bb))
                if (dt.dominates(succ, &bb)) {
                    latches.push_back(&bb);
                    break;
                }
        for (BasicBlock* latch : latches) {
            Instruction* term = latch->getTerminator();
            IRBuilder<> b(term);
            LoadInst* v = b.CreateLoad(b.getInt8Ty(), b.CreateCall(flag), true, "cancel");
            Value* stop = b.CreateICmpNE(v, b.getInt8(0));
            Instruction* then = SplitBlockAndInsertIfThen(stop, term, false, weights);
            IRBuilder<>(then).CreateCall(cancelled);
        }
    }
}

void lowerGuardPlaceholders(Module& module) {
    for (const char* name : {kBoundName, kCancelName}) {
        Function* f = module.getFunction(name);
        if (!f)
            continue;
        const bool isBound = f->getName() == kBoundName;
        std::vector<CallInst*> calls;
        for (User* u : f->users())
            if (auto* c = dyn_cast<CallInst>(u))
                calls.push_back(c);
        for (CallInst* c : calls) {
            Function* w = c->getFunction();
            assert(w->arg_size() == 2 && "placeholders are only left in work-group functions");
            Value* ctxArg = w->getArg(1);
            IRBuilder<> b(c);
            MDNode* invariant = MDNode::get(b.getContext(), {});
            const size_t field = isBound ? offsetof(WorkGroupContext, argBounds)
                                         : offsetof(WorkGroupContext, cancel);
            LoadInst* p = b.CreateAlignedLoad(
                b.getPtrTy(), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), ctxArg, field), Align(8));
            p->setMetadata(LLVMContext::MD_invariant_load, invariant);
            Value* v = p;
            if (isBound) {
                LoadInst* l = b.CreateAlignedLoad(
                    b.getInt64Ty(), b.CreateInBoundsGEP(b.getInt64Ty(), p, {c->getArgOperand(0)}),
                    Align(8));
                l->setMetadata(LLVMContext::MD_invariant_load, invariant);
                v = l;
            }
            c->replaceAllUsesWith(v);
            c->eraseFromParent();
        }
        if (f->use_empty())
            f->eraseFromParent();
    }
}

} // namespace duet::rt
