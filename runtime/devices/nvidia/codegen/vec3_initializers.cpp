// Three-element vectors in global initializers, widened to four before code generation: LLVM
// 19's NVPTX asm printer writes a <3 x T> element of an initializer as its 3 elements, without
// the padding to its 4-element allocation size, so every later element of the variable lands at
// the wrong address (a `__constant float3 table[6]` is read shifted by 4 bytes per element).
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/GlobalVariable.h>

#include <vector>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

/// `t` with every <3 x T> (in arrays and structs, at any depth) made <4 x T>; `t` itself when
/// it has none.
Type* widened(Type* t) {
    if (auto* v = dyn_cast<FixedVectorType>(t))
        return v->getNumElements() == 3 ? FixedVectorType::get(v->getElementType(), 4) : t;
    if (auto* a = dyn_cast<ArrayType>(t)) {
        Type* e = widened(a->getElementType());
        return e == a->getElementType() ? t : ArrayType::get(e, a->getNumElements());
    }
    if (auto* s = dyn_cast<StructType>(t)) {
        std::vector<Type*> members;
        bool changed = false;
        for (Type* m : s->elements()) {
            members.push_back(widened(m));
            changed |= members.back() != m;
        }
        return changed ? StructType::get(t->getContext(), members, s->isPacked()) : t;
    }
    return t;
}

/// `c` as a constant of `type` (widened(c's type)): the same elements, each widened vector
/// gaining a zero last element.
Constant* widenedConstant(Constant* c, Type* type) {
    if (c->getType() == type)
        return c;
    if (isa<ConstantAggregateZero>(c))
        return Constant::getNullValue(type);
    if (isa<PoisonValue>(c))
        return PoisonValue::get(type);
    if (isa<UndefValue>(c))
        return UndefValue::get(type);
    std::vector<Constant*> elements;
    if (auto* v = dyn_cast<FixedVectorType>(type)) {
        for (unsigned i = 0; i < 3; ++i)
            elements.push_back(c->getAggregateElement(i));
        elements.push_back(Constant::getNullValue(v->getElementType()));
        return ConstantVector::get(elements);
    }
    if (auto* a = dyn_cast<ArrayType>(type)) {
        for (uint64_t i = 0; i < a->getNumElements(); ++i)
            elements.push_back(
                widenedConstant(c->getAggregateElement(unsigned(i)), a->getElementType()));
        return ConstantArray::get(a, elements);
    }
    auto* s = cast<StructType>(type);
    for (unsigned i = 0; i < s->getNumElements(); ++i)
        elements.push_back(widenedConstant(c->getAggregateElement(i), s->getElementType(i)));
    return ConstantStruct::get(s, elements);
}

} // namespace

void widenVec3Initializers(Module& m) {
    const DataLayout& dl = m.getDataLayout();
    std::vector<GlobalVariable*> globals;
    for (GlobalVariable& g : m.globals())
        if (g.hasInitializer() && widened(g.getValueType()) != g.getValueType())
            globals.push_back(&g);
    for (GlobalVariable* g : globals) {
        Type* type = widened(g->getValueType());
        // Same size and member offsets (a <3 x T> is allocated as <4 x T>): only then.
        if (dl.getTypeAllocSize(type) != dl.getTypeAllocSize(g->getValueType()))
            continue;
        auto* wide = new GlobalVariable(
            m, type, g->isConstant(), g->getLinkage(), widenedConstant(g->getInitializer(), type),
            "", g, g->getThreadLocalMode(), g->getAddressSpace(), g->isExternallyInitialized());
        wide->copyAttributesFrom(g);
        wide->setAlignment(g->getAlign().value_or(dl.getPrefTypeAlign(g->getValueType())));
        wide->takeName(g);
        g->replaceAllUsesWith(wide);
        g->eraseFromParent();
    }
}

} // namespace duet::rt::nvptx
