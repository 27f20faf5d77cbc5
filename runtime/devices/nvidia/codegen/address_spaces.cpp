// Address spaces on nvptx: clang's generic-pointer builtins (to_global & co), and the casts
// between two named address spaces that NVPTX cannot select, legalised or reported.
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Operator.h>
#include <llvm/IR/ReplaceConstant.h>

#include <vector>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

// nvptx address spaces: generic (also OpenCL private in clang's map), global, shared
// (OpenCL __local), const, local (PTX .local, private memory once allocas are lowered).
constexpr unsigned kGeneric = 0, kGlobal = 1, kShared = 3, kConst = 4, kLocal = 5;

/// The OpenCL C name of an nvptx address space, for messages.
std::string spaceName(unsigned as) {
    switch (as) {
    case kGeneric:
        return "generic";
    case kGlobal:
        return "__global";
    case kShared:
        return "__local";
    case kConst:
        return "__constant";
    case kLocal:
        return "__private";
    default:
        return "address space " + std::to_string(as);
    }
}

/// The intrinsic that converts a generic pointer into `as` (PTX cvta.to), if any.
Intrinsic::ID fromGeneric(unsigned as) {
    switch (as) {
    case kGlobal:
        return Intrinsic::nvvm_ptr_gen_to_global;
    case kShared:
        return Intrinsic::nvvm_ptr_gen_to_shared;
    case kConst:
        return Intrinsic::nvvm_ptr_gen_to_constant;
    case kLocal:
        return Intrinsic::nvvm_ptr_gen_to_local;
    default:
        return Intrinsic::not_intrinsic;
    }
}

/// An addrspacecast between two different non-generic address spaces: NVPTX's instruction
/// selector aborts the process on one ("Cannot cast between two non-generic address spaces").
bool betweenNamedSpaces(const Value* v) {
    const auto* cast = dyn_cast<AddrSpaceCastOperator>(v);
    return cast && cast->getSrcAddressSpace() != kGeneric &&
           cast->getDestAddressSpace() != kGeneric &&
           cast->getSrcAddressSpace() != cast->getDestAddressSpace();
}

/// The constant expressions inside `c` (itself included; through expressions and aggregates,
/// not into other globals) that are such casts.
void namedCastsIn(Constant* c, std::vector<Constant*>& out, SmallPtrSet<Constant*, 16>& seen) {
    if (!(isa<ConstantExpr>(c) || isa<ConstantAggregate>(c)) || !seen.insert(c).second)
        return;
    if (betweenNamedSpaces(c))
        out.push_back(c);
    for (Use& u : c->operands())
        if (auto* op = dyn_cast<Constant>(u.get()))
            namedCastsIn(op, out, seen);
}

/// The first addrspacecast to a non-generic space inside an initializer: the NVPTX asm printer
/// can only strip casts to generic there, and aborts on any other.
const AddrSpaceCastOperator* castToNamedIn(const Constant* c,
                                           SmallPtrSet<const Constant*, 16>& seen) {
    if (isa<GlobalValue>(c) || !seen.insert(c).second)
        return nullptr; // another global's initial value is that global's own
    if (const auto* cast = dyn_cast<AddrSpaceCastOperator>(c);
        cast && cast->getDestAddressSpace() != kGeneric)
        return cast;
    for (const Use& u : c->operands())
        if (const auto* op = dyn_cast<Constant>(u.get()))
            if (const AddrSpaceCastOperator* found = castToNamedIn(op, seen))
                return found;
    return nullptr;
}

/// A function that uses `g`, directly or through constant expressions.
const Function* firstUser(const Value& v) {
    for (const User* u : v.users()) {
        if (const auto* i = dyn_cast<Instruction>(u))
            return i->getFunction();
        if (isa<ConstantExpr>(u))
            if (const Function* f = firstUser(*u))
                return f;
    }
    return nullptr;
}

} // namespace

std::string legalizeAddressSpaceCasts(Module& m) {
    // Constant expressions such as `addrspacecast (ptr addrspace(1) @g to ptr addrspace(3))`
    // (folded from two casts through generic) become instructions first.
    std::vector<Constant*> constants;
    SmallPtrSet<Constant*, 16> seen;
    for (Function& f : m)
        for (Instruction& i : instructions(f))
            for (Use& u : i.operands())
                if (auto* c = dyn_cast<Constant>(u.get()))
                    namedCastsIn(c, constants, seen);
    if (!constants.empty())
        convertUsersOfConstantsToInstructions(constants, nullptr, true, /*IncludeSelf=*/true);

    // Each cast goes through generic again, which is what the program said: the conversion
    // to generic stays a cast, the one out of it becomes nvvm.ptr.gen.to.*, which neither the
    // optimiser nor the code generator's own IR passes fold back into a single cast.
    std::vector<AddrSpaceCastInst*> work;
    for (Function& f : m)
        for (Instruction& i : instructions(f))
            if (auto* cast = dyn_cast<AddrSpaceCastInst>(&i);
                cast && betweenNamedSpaces(cast) && fromGeneric(cast->getDestAddressSpace()))
                work.push_back(cast);
    PointerType* generic = PointerType::get(m.getContext(), kGeneric);
    for (AddrSpaceCastInst* cast : work) {
        IRBuilder<> b(cast);
        Value* g = b.CreateAddrSpaceCast(cast->getPointerOperand(), generic);
        Value* named = b.CreateIntrinsic(fromGeneric(cast->getDestAddressSpace()),
                                         {cast->getType(), generic}, {g}, nullptr, cast->getName());
        cast->replaceAllUsesWith(named);
        cast->eraseFromParent();
    }

    // What is left would abort the process in the backend: reported instead.
    std::string errors;
    for (Function& f : m)
        for (Instruction& i : instructions(f)) {
            std::vector<Constant*> inside;
            SmallPtrSet<Constant*, 16> visited;
            for (Use& u : i.operands())
                if (auto* c = dyn_cast<Constant>(u.get()))
                    namedCastsIn(c, inside, visited);
            if (betweenNamedSpaces(&i) || !inside.empty()) {
                const auto* asc = cast<AddrSpaceCastOperator>(
                    betweenNamedSpaces(&i) ? static_cast<Value*>(&i) : inside.front());
                errors += "error: internal: a pointer cast from " +
                          spaceName(asc->getSrcAddressSpace()) + " to " +
                          spaceName(asc->getDestAddressSpace()) + " memory in function '" +
                          demangle(f.getName().str()) +
                          "' that the NVPTX code generator cannot translate\n";
            }
        }
    for (GlobalVariable& g : m.globals()) {
        if (!g.hasInitializer())
            continue;
        SmallPtrSet<const Constant*, 16> visited;
        const AddrSpaceCastOperator* cast = castToNamedIn(g.getInitializer(), visited);
        if (!cast)
            continue;
        const std::string pointer = " holds a " + spaceName(cast->getDestAddressSpace()) +
                                    " pointer (NULL included) made from a " +
                                    spaceName(cast->getSrcAddressSpace()) + " one";
        // clang's copy of a local aggregate's initial value ("__const.<function>.<name>").
        const Function* user = g.hasLocalLinkage() ? firstUser(g) : nullptr;
        if (user)
            errors += "error: in function '" + demangle(user->getName().str()) +
                      "': the initial value of a local variable (clang's constant '" +
                      g.getName().str() + "')" + pointer +
                      ": the NVIDIA device cannot place such an address in constant data; "
                      "assign that member separately\n";
        else
            errors += "error: program-scope variable '" + g.getName().str() +
                      "' is initialised with a value that" + pointer +
                      ": the NVIDIA device cannot store such an address in an initial value; "
                      "assign it in a kernel instead\n";
    }
    return errors;
}

void defineGenericAddressBuiltins(Module& m) {
    LLVMContext& c = m.getContext();
    PointerType* generic = PointerType::get(c, kGeneric);
    for (Function& f : m) {
        if (!f.isDeclaration() || f.arg_size() != 1 || f.getArg(0)->getType() != generic)
            continue;
        StringRef name = f.getName();
        const bool fence = name.starts_with("_Z9get_fenceP") && f.getReturnType()->isIntegerTy(32);
        Intrinsic::ID test = Intrinsic::not_intrinsic;
        unsigned target = 0;
        if (name == "__to_global") {
            test = Intrinsic::nvvm_isspacep_global;
            target = kGlobal;
        } else if (name == "__to_local") {
            test = Intrinsic::nvvm_isspacep_shared;
            target = kShared;
        } else if (name == "__to_private") {
            // OpenCL private is generic (0) in clang's nvptx address-space map; the memory
            // behind it is PTX .local.
            test = Intrinsic::nvvm_isspacep_local;
            target = kGeneric;
        }
        if (!fence &&
            (test == Intrinsic::not_intrinsic || f.getReturnType() != PointerType::get(c, target)))
            continue;
        f.setLinkage(GlobalValue::InternalLinkage);
        f.addFnAttr(Attribute::AlwaysInline);
        f.addFnAttr(Attribute::NoUnwind);
        f.setSubprogram(nullptr); // with -g: a declaration's !dbg is not a definition's
        IRBuilder<> b(BasicBlock::Create(c, "entry", &f));
        Value* p = f.getArg(0);
        if (fence) { // CLK_LOCAL_MEM_FENCE for shared memory, CLK_GLOBAL_MEM_FENCE otherwise
            Value* shared = b.CreateIntrinsic(Intrinsic::nvvm_isspacep_shared, {}, {p});
            b.CreateRet(b.CreateSelect(shared, b.getInt32(1), b.getInt32(2)));
            continue;
        }
        auto* type = PointerType::get(c, target);
        // NULL as clang spells it for the space (CodeGen's NVPTX getNullPointer): the generic
        // null cast to __local (cvta.to.shared of 0, not 0), a zero pointer elsewhere. The
        // program compares with that, so a "not in this space" answer must be exactly it.
        Constant* null =
            target == kShared
                ? ConstantExpr::getAddrSpaceCast(ConstantPointerNull::get(generic), type)
                : static_cast<Constant*>(ConstantPointerNull::get(type));
        Value* in = b.CreateIntrinsic(test, {}, {p});
        // A plain cast, so that the optimiser removes the round trip of a pointer made generic
        // from this space; one from another space is left for legalizeAddressSpaceCasts.
        Value* cast = target == kGeneric ? p : b.CreateAddrSpaceCast(p, type);
        b.CreateRet(b.CreateSelect(in, cast, null));
    }
}

} // namespace duet::rt::nvptx
