// __constant pointers as generic pointers on the NVIDIA device.
//
// Clang puts OpenCL __constant in nvptx address space 4, PTX's .const state space: a load
// through such a pointer is `ld.const`, which reads the module's constant bank. That is right
// for program-scope __constant variables (they live in the bank) and wrong for a __constant
// kernel argument, which is a buffer in global memory: `ld.const` at its address reads the
// bank, not the buffer. So every pointer of address space 4 becomes a generic pointer (space
// 0): functions, arguments, instructions and constants are retyped, and each __constant
// variable stays in .const but is used through its generic address (cvta.const). Generic
// loads reach both; the NVPTX backend treats generic kernel pointer parameters as global and
// InferAddressSpaces gives a variable's loads back their ld.const.
#include "devices/nvidia/codegen/passes.hpp"
#include "compiler/address_space_types.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <vector>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

constexpr unsigned kConstant = 4, kGeneric = 0;

/// Types with every `ptr addrspace(4)` in them made `ptr`.
class ConstantToGeneric final : public AddressSpaceTypes {
public:
    using AddressSpaceTypes::AddressSpaceTypes;

private:
    Type* remapPointer(PointerType* p) override {
        return p->getAddressSpace() == kConstant ? PointerType::get(m_context, kGeneric) : p;
    }
    std::string copyName(StructType* s) override { return (s->getName() + ".generic").str(); }
};

/// The declaration of intrinsic `f` with its overloaded types remapped.
Function* remappedIntrinsic(Function* f, ConstantToGeneric& types) {
    SmallVector<Type*, 4> overloads;
    if (!Intrinsic::getIntrinsicSignature(f, overloads))
        return nullptr;
    for (Type*& t : overloads)
        t = types.remapType(t);
    return Intrinsic::getDeclaration(f->getParent(), f->getIntrinsicID(), overloads);
}

/// Constant expressions that make a __constant pointer generic are already what the mapping
/// wants: they map to themselves (rebuilding them would make a cast within one space).
void seedGenericCasts(Constant* c, ValueToValueMapTy& map, SmallPtrSetImpl<Constant*>& seen) {
    if (!seen.insert(c).second)
        return;
    if (auto* ce = dyn_cast<ConstantExpr>(c);
        ce && ce->getOpcode() == Instruction::AddrSpaceCast &&
        ce->getOperand(0)->getType()->getPointerAddressSpace() == kConstant &&
        ce->getType()->getPointerAddressSpace() == kGeneric) {
        map[ce] = ce;
        return;
    }
    if (isa<GlobalValue>(c))
        return;
    for (Use& op : c->operands())
        if (auto* oc = dyn_cast<Constant>(op.get()))
            seedGenericCasts(oc, map, seen);
}

} // namespace

void constantPointersToGeneric(Module& m) {
    LLVMContext& c = m.getContext();
    ConstantToGeneric types(c);
    ValueToValueMapTy map;

    // Variables: those whose type holds __constant pointers are remade; every __constant
    // variable is used through its generic address.
    std::vector<std::pair<GlobalVariable*, GlobalVariable*>> remade;
    for (GlobalVariable& g : m.globals()) {
        GlobalVariable* now = &g;
        Type* t = types.remapType(g.getValueType());
        if (t != g.getValueType()) {
            now = new GlobalVariable(m, t, g.isConstant(), g.getLinkage(), nullptr, "", &g,
                                     g.getThreadLocalMode(), g.getAddressSpace(),
                                     g.isExternallyInitialized());
            now->copyAttributesFrom(&g);
            remade.push_back({&g, now});
        }
        map[&g] = g.getAddressSpace() == kConstant
                      ? ConstantExpr::getAddrSpaceCast(now, PointerType::get(c, kGeneric))
                      : static_cast<Value*>(now);
    }

    // Functions whose type changes get a new function with the body moved over.
    std::vector<std::pair<Function*, Function*>> replaced;
    for (Function& f : m) {
        FunctionType* t = cast<FunctionType>(types.remapType(f.getFunctionType()));
        if (t == f.getFunctionType())
            continue;
        Function* now;
        if (f.isIntrinsic()) {
            now = remappedIntrinsic(&f, types);
            if (!now)
                continue; // left as it is: the verifier names it
        } else {
            // In f's place, so that kernels keep the source's order in the PTX.
            now = Function::Create(t, f.getLinkage(), f.getAddressSpace(), "");
            m.getFunctionList().insert(f.getIterator(), now);
            now->copyAttributesFrom(&f);
            now->copyMetadata(&f, 0);
            now->splice(now->begin(), &f);
            for (unsigned i = 0; i < f.arg_size(); ++i) {
                now->getArg(i)->setName(f.getArg(i)->getName());
                map[f.getArg(i)] = now->getArg(i);
            }
        }
        map[&f] = now;
        replaced.push_back({&f, now});
    }
    if (remade.empty() && replaced.empty()) {
        bool anyConstantPointer = false;
        for (GlobalVariable& g : m.globals())
            anyConstantPointer |= g.getAddressSpace() == kConstant && !g.use_empty();
        if (!anyConstantPointer)
            return;
    }

    SmallPtrSet<Constant*, 32> seen;
    for (Function& f : m)
        for (Instruction& i : instructions(f))
            for (Use& op : i.operands())
                if (auto* oc = dyn_cast<Constant>(op.get()))
                    seedGenericCasts(oc, map, seen);

    for (Function& f : m)
        if (!f.isDeclaration())
            RemapFunction(f, map, RF_IgnoreMissingLocals | RF_ReuseAndMutateDistinctMDs, &types);
    for (auto& [old, now] : remade)
        if (old->hasInitializer())
            now->setInitializer(
                MapValue(old->getInitializer(), map, RF_ReuseAndMutateDistinctMDs, &types));

    // Casts that now stay in one space (a __constant pointer made generic, cast to generic).
    for (Function& f : m) {
        std::vector<Instruction*> same;
        for (Instruction& i : instructions(f))
            if (auto* cast = dyn_cast<AddrSpaceCastInst>(&i);
                cast && cast->getSrcAddressSpace() == cast->getDestAddressSpace())
                same.push_back(cast);
        for (Instruction* i : same) {
            i->replaceAllUsesWith(i->getOperand(0));
            i->eraseFromParent();
        }
    }

    for (auto& [old, now] : replaced) {
        old->replaceAllUsesWith(now); // what still names it: !nvvm.annotations
        if (!now->isIntrinsic())
            now->takeName(old);
        old->eraseFromParent();
    }
    for (auto& [old, now] : remade) {
        now->takeName(old);
        if (!old->use_empty())
            old->replaceAllUsesWith(now);
        old->eraseFromParent();
    }
}

} // namespace duet::rt::nvptx
