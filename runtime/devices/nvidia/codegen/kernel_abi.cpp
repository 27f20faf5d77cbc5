// The NVIDIA kernel ABI (ptx_module.hpp): hidden launch block parameter, __local arguments as
// dynamic shared memory offsets, work-item state and __local variables inlined into kernels,
// .maxntid.
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/ADT/SCCIterator.h>
#include <llvm/ADT/SetVector.h>
#include <llvm/Analysis/CallGraph.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <set>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

constexpr unsigned kShared = 3;
/// Rounds of inlining before giving up (a call chain that deep from a kernel to a work-item
/// function or a __local variable).
constexpr int kMaxInlineRounds = 256;

/// The launch block as an IR type (nvidia::LaunchBlock's layout).
StructType* launchBlockType(LLVMContext& c) {
    if (StructType* t = StructType::getTypeByName(c, "duet.nv.launch"))
        return t;
    Type* i32 = Type::getInt32Ty(c);
    Type* i64 = Type::getInt64Ty(c);
    return StructType::create(c,
                              {ArrayType::get(i64, 3), ArrayType::get(i64, 3),
                               ArrayType::get(i32, 3), ArrayType::get(i32, 3),
                               ArrayType::get(i32, 3), i32, i64},
                              "duet.nv.launch");
}

void annotate(Module& m, Function* f, StringRef key, uint32_t value) {
    LLVMContext& c = m.getContext();
    NamedMDNode* md = m.getOrInsertNamedMetadata("nvvm.annotations");
    md->addOperand(
        MDNode::get(c, {ValueAsMetadata::get(f), MDString::get(c, key),
                        ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(c), value))}));
}

/// A copy of kernel `k` as an ordinary internal function, for the calls other code makes to it.
Function* callableCopy(Function* k) {
    ValueToValueMapTy map;
    Function* copy = CloneFunction(k, map);
    copy->setName(k->getName() + ".duet.callable");
    copy->setLinkage(GlobalValue::InternalLinkage);
    copy->setCallingConv(CallingConv::C);
    copy->clearMetadata();
    return copy;
}

/// The kernel with the ABI's parameters: __local pointers as i64 offsets, then the launch
/// block by value, then (`guarded`) the guard record's address. Replaces `k` (its uses, name,
/// metadata) and returns the new function.
Function* rewriteSignature(Module& m, Function* k, GlobalVariable* localArgs,
                           std::vector<uint32_t>& localIndices, bool guarded) {
    LLVMContext& c = m.getContext();
    FunctionType* old = k->getFunctionType();
    SmallVector<Type*, 16> params;
    for (unsigned i = 0; i < old->getNumParams(); ++i) {
        Type* t = old->getParamType(i);
        if (t->isPointerTy() && t->getPointerAddressSpace() == kShared) {
            localIndices.push_back(i);
            params.push_back(Type::getInt64Ty(c));
        } else {
            params.push_back(t);
        }
    }
    params.push_back(PointerType::get(c, 0));
    if (guarded)
        params.push_back(PointerType::get(c, 1));
    FunctionType* type = FunctionType::get(old->getReturnType(), params, false);
    Function* f = Function::Create(type, k->getLinkage(), k->getAddressSpace(), "", &m);
    f->setCallingConv(k->getCallingConv());
    f->copyMetadata(k, 0);

    // Attributes: the kernel's own, each kept parameter's, nothing on offsets but noundef.
    AttributeList oldAttrs = k->getAttributes();
    SmallVector<AttributeSet, 16> paramAttrs;
    for (unsigned i = 0; i < old->getNumParams(); ++i)
        paramAttrs.push_back(std::find(localIndices.begin(), localIndices.end(), i) ==
                                     localIndices.end()
                                 ? oldAttrs.getParamAttrs(i)
                                 : AttributeSet::get(c, {Attribute::get(c, Attribute::NoUndef)}));
    AttrBuilder launch(c);
    launch.addByValAttr(launchBlockType(c));
    launch.addAlignmentAttr(Align(8));
    launch.addAttribute(Attribute::NoUndef);
    launch.addAttribute(Attribute::ReadOnly);
    launch.addAttribute(Attribute::NoCapture);
    paramAttrs.push_back(AttributeSet::get(c, launch));
    if (guarded) // the launch's own record: nothing else the kernel reaches points into it
        paramAttrs.push_back(AttributeSet::get(
            c, {Attribute::get(c, Attribute::NoUndef), Attribute::get(c, Attribute::NoAlias)}));
    f->setAttributes(
        AttributeList::get(c, oldAttrs.getFnAttrs(), oldAttrs.getRetAttrs(), paramAttrs));

    f->splice(f->begin(), k);
    IRBuilder<> b(&*f->getEntryBlock().getFirstInsertionPt());
    for (unsigned i = 0; i < old->getNumParams(); ++i) {
        Argument* from = k->getArg(i);
        Argument* to = f->getArg(i);
        to->setName(from->getName());
        if (to->getType() == from->getType()) {
            from->replaceAllUsesWith(to);
            continue;
        }
        // __local T* p: __duet_local_args + offset
        Value* p = b.CreateInBoundsGEP(b.getInt8Ty(), localArgs, to, from->getName() + ".local");
        from->replaceAllUsesWith(p);
    }
    f->getArg(old->getNumParams())->setName("duet.launch");
    if (guarded)
        f->getArg(old->getNumParams() + 1)->setName("duet.guard");
    k->replaceAllUsesWith(f); // !nvvm.annotations and the like
    f->takeName(k);
    k->eraseFromParent();
    return f;
}

/// Replaces the calls of `accessor` in each of `kernels` with the kernel's parameter `fromEnd`
/// places before its last.
void replaceAccessor(Function* accessor, ArrayRef<Function*> kernels, unsigned fromEnd) {
    for (Function* k : kernels) {
        Argument* param = k->getArg(k->arg_size() - 1 - fromEnd);
        std::vector<CallInst*> calls;
        for (Instruction& i : instructions(*k))
            if (auto* call = dyn_cast<CallInst>(&i); call && call->getCalledFunction() == accessor)
                calls.push_back(call);
        for (CallInst* call : calls) {
            call->replaceAllUsesWith(param);
            call->eraseFromParent();
        }
    }
}

/// Erases internal functions nothing uses any more (inlined everywhere), repeatedly.
void eraseUnusedFunctions(Module& m) {
    for (bool erased = true; erased;) {
        erased = false;
        for (Function& f : make_early_inc_range(m))
            if (!f.isDeclaration() && f.hasLocalLinkage() && f.use_empty()) {
                f.eraseFromParent();
                erased = true;
            }
    }
}

} // namespace

bool isKernel(const Function& f) {
    if (f.isDeclaration())
        return false;
    if (f.getCallingConv() == CallingConv::PTX_Kernel)
        return true;
    const NamedMDNode* md = f.getParent()->getNamedMetadata("nvvm.annotations");
    if (!md)
        return false;
    for (const MDNode* node : md->operands()) {
        if (node->getNumOperands() < 3)
            continue;
        auto* fn = mdconst::dyn_extract_or_null<Function>(node->getOperand(0));
        auto* key = dyn_cast_or_null<MDString>(node->getOperand(1).get());
        auto* value = mdconst::dyn_extract_or_null<ConstantInt>(node->getOperand(2));
        if (fn == &f && key && key->getString() == "kernel" && value && value->isOne())
            return true;
    }
    return false;
}

std::string applyKernelAbi(Module& m, std::vector<nvidia::KernelEntry>& entries, bool guarded) {
    std::vector<Function*> kernels;
    for (Function& f : m)
        if (isKernel(f))
            kernels.push_back(&f);

    // Calls to a kernel go to an ordinary copy of it: PTX cannot call an .entry.
    for (Function* k : kernels) {
        std::vector<CallInst*> calls;
        for (User* u : k->users())
            if (auto* call = dyn_cast<CallInst>(u); call && call->getCalledOperand() == k)
                calls.push_back(call);
        if (calls.empty())
            continue;
        Function* copy = callableCopy(k);
        for (CallInst* call : calls) {
            call->setCalledFunction(copy);
            call->setCallingConv(CallingConv::C);
        }
    }
    // Only the kernels stay visible: the optimiser drops what they do not reach.
    std::set<Function*> kernelSet(kernels.begin(), kernels.end());
    for (Function& f : m)
        if (!f.isDeclaration() && !kernelSet.count(&f))
            f.setLinkage(GlobalValue::InternalLinkage);

    GlobalVariable* localArgs = nullptr;
    for (Function*& k : kernels) {
        bool hasLocal = false;
        for (Argument& a : k->args())
            hasLocal |=
                a.getType()->isPointerTy() && a.getType()->getPointerAddressSpace() == kShared;
        if (hasLocal && !localArgs)
            localArgs = dynamicSharedMemory(m);
        nvidia::KernelEntry e;
        e.params = uint32_t(k->arg_size() + 1 + (guarded ? 1 : 0));
        k = rewriteSignature(m, k, localArgs, e.localArgs, guarded);
        e.name = k->getName().str();
        if (MDNode* reqd = k->getMetadata("reqd_work_group_size");
            reqd && reqd->getNumOperands() == 3) {
            static const char* keys[3] = {"maxntidx", "maxntidy", "maxntidz"};
            for (unsigned d = 0; d < 3; ++d)
                if (auto* v = mdconst::dyn_extract_or_null<ConstantInt>(reqd->getOperand(d)))
                    e.reqdWorkGroupSize[d] = uint32_t(v->getZExtValue());
            if (e.reqdWorkGroupSize[0] && e.reqdWorkGroupSize[1] && e.reqdWorkGroupSize[2])
                for (unsigned d = 0; d < 3; ++d)
                    annotate(m, k, keys[d], e.reqdWorkGroupSize[d]);
            else
                e.reqdWorkGroupSize = {0, 0, 0};
        }
        entries.push_back(std::move(e));
    }
    kernelSet = std::set<Function*>(kernels.begin(), kernels.end());

    // Every function that reaches the launch block accessor or a kernel-scope __local variable
    // is inlined into the kernels: the launch block is a kernel parameter, and each kernel lays
    // its __local variables out in dynamic shared memory on its own (lowerLocalVariables), so
    // a function that two kernels call must not hold one offset for both.
    Function* accessor = m.getFunction(kLaunchBlockAccessor);
    Function* guard = m.getFunction(kGuardRecordAccessor);
    std::vector<Function*> seeds;
    if (accessor)
        seeds.push_back(accessor);
    if (guard)
        seeds.push_back(guard);
    for (Function& f : m)
        if (!f.isDeclaration() && !kernelSet.count(&f) && usesLocalVariables(f))
            seeds.push_back(&f);
    if (std::string errors = inlineIntoKernels(m, seeds); !errors.empty())
        return errors;
    if (guard) {
        if (!guarded)
            return "error: internal: guard record accessed in a build without guards\n";
        replaceAccessor(guard, kernels, 0);
    }
    if (!accessor) {
        if (guard && guard->use_empty())
            guard->eraseFromParent();
        return {};
    }
    replaceAccessor(accessor, kernels, guarded ? 1 : 0);
    // What still calls the accessor is unreachable from the kernels, or recursive.
    eraseUnusedFunctions(m);
    std::string errors;
    for (User* u : accessor->users())
        if (auto* call = dyn_cast<CallBase>(u))
            errors += "error: function '" + demangle(call->getFunction()->getName().str()) +
                      "' uses work-item functions but cannot be inlined into its kernel (it is "
                      "recursive: OpenCL C does not allow recursion, section 6.11)\n";
    if (guard)
        for (User* u : guard->users())
            if (auto* call = dyn_cast<CallBase>(u))
                errors += "error: internal: function '" +
                          demangle(call->getFunction()->getName().str()) +
                          "' has bounds checks but is not inlined into a kernel\n";
    if (errors.empty() && accessor->use_empty())
        accessor->eraseFromParent();
    if (errors.empty() && guard && guard->use_empty())
        guard->eraseFromParent();
    return errors;
}

std::string inlineIntoKernels(Module& m, ArrayRef<Function*> seeds) {
    std::vector<Function*> kernels;
    for (Function& f : m)
        if (isKernel(f))
            kernels.push_back(&f);
    const std::set<Function*> kernelSet(kernels.begin(), kernels.end());
    // The seeds that have a body, and every function that calls one of them, directly or not.
    SetVector<Function*> reaching;
    SmallVector<Function*, 16> work;
    for (Function* f : seeds) {
        if (!f->isDeclaration() && !kernelSet.count(f))
            reaching.insert(f);
        work.push_back(f);
    }
    while (!work.empty()) {
        Function* f = work.pop_back_val();
        for (User* u : f->users())
            if (auto* call = dyn_cast<CallBase>(u))
                if (Function* caller = call->getFunction(); caller && reaching.insert(caller))
                    work.push_back(caller);
    }
    if (reaching.empty())
        return {};
    // A recursive function cannot be inlined: OpenCL C forbids recursion, say so.
    std::string errors;
    {
        CallGraph graph(m);
        for (scc_iterator<CallGraph*> it = scc_begin(&graph); !it.isAtEnd(); ++it) {
            if (!it.hasCycle())
                continue;
            for (const CallGraphNode* node : *it)
                if (Function* f = node->getFunction(); f && reaching.contains(f))
                    errors += "error: function '" + demangle(f->getName().str()) +
                              "' is recursive and uses work-item functions or __local variables: "
                              "OpenCL C does not allow recursion (section 6.11)\n";
        }
    }
    if (!errors.empty())
        return errors;
    for (Function* f : reaching)
        if (!kernelSet.count(f)) {
            f->removeFnAttr(Attribute::NoInline);
            f->removeFnAttr(Attribute::OptimizeNone);
            f->addFnAttr(Attribute::AlwaysInline);
        }
    for (int round = 0;; ++round) {
        std::vector<CallBase*> calls;
        for (Function* k : kernels)
            for (Instruction& i : instructions(*k))
                if (auto* call = dyn_cast<CallBase>(&i))
                    if (Function* callee = call->getCalledFunction();
                        callee && reaching.contains(callee) && !callee->isDeclaration() &&
                        !kernelSet.count(callee))
                        calls.push_back(call);
        if (calls.empty())
            break;
        if (round == kMaxInlineRounds)
            return "error: internal: calls to functions that use work-item functions or __local "
                   "variables nested more than " +
                   std::to_string(kMaxInlineRounds) + " deep\n";
        for (CallBase* call : calls) {
            InlineFunctionInfo info;
            InlineResult r = InlineFunction(*call, info);
            if (!r.isSuccess())
                errors += "error: internal: cannot inline '" +
                          demangle(call->getCalledFunction()->getName().str()) + "' into kernel '" +
                          call->getFunction()->getName().str() + "': " + r.getFailureReason() +
                          "\n";
        }
        if (!errors.empty())
            return errors;
    }
    eraseUnusedFunctions(m);
    return {};
}

bool usesLocalVariables(const Function& f) {
    for (const Instruction& i : instructions(f))
        for (const Value* op : i.operands()) {
            SmallVector<const Value*, 8> work{op};
            while (!work.empty()) {
                const Value* v = work.pop_back_val();
                if (const auto* g = dyn_cast<GlobalVariable>(v)) {
                    if (isLocalVariable(*g))
                        return true;
                } else if (const auto* ce = dyn_cast<ConstantExpr>(v)) {
                    for (const Value* sub : ce->operands())
                        work.push_back(sub);
                }
            }
        }
    return false;
}

bool isLocalVariable(const GlobalVariable& g) {
    return g.getAddressSpace() == kShared && g.getName() != kLocalArgsSymbol;
}

GlobalVariable* dynamicSharedMemory(Module& m) {
    if (GlobalVariable* g = m.getNamedGlobal(kLocalArgsSymbol))
        return g;
    auto* g = new GlobalVariable(m, ArrayType::get(Type::getInt8Ty(m.getContext()), 0), false,
                                 GlobalValue::ExternalLinkage, nullptr, kLocalArgsSymbol, nullptr,
                                 GlobalValue::NotThreadLocal, kShared);
    g->setAlignment(Align(nvidia::kLocalArgAlign));
    return g;
}

} // namespace duet::rt::nvptx
