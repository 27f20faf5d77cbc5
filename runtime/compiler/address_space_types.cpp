// Types with their pointers' address spaces changed (AddressSpaceTypes).
#include "compiler/address_space_types.hpp"

#include <llvm/ADT/SmallVector.h>

namespace duet::rt {

using namespace llvm;

Type* AddressSpaceTypes::remapType(Type* t) {
    auto it = m_done.find(t);
    if (it != m_done.end())
        return it->second;
    Type* r = remap(t);
    m_done[t] = r;
    return r;
}

Type* AddressSpaceTypes::remap(Type* t) {
    if (auto* p = dyn_cast<PointerType>(t))
        return remapPointer(p);
    if (auto* v = dyn_cast<VectorType>(t)) {
        Type* e = remapType(v->getElementType());
        return e == v->getElementType() ? t : VectorType::get(e, v->getElementCount());
    }
    if (auto* a = dyn_cast<ArrayType>(t)) {
        checkAggregate(t);
        Type* e = remapType(a->getElementType());
        return e == a->getElementType() ? t : ArrayType::get(e, a->getNumElements());
    }
    if (auto* f = dyn_cast<FunctionType>(t)) {
        SmallVector<Type*, 8> params;
        bool changed = false;
        for (Type* p : f->params()) {
            params.push_back(remapType(p));
            changed |= params.back() != p;
        }
        Type* ret = remapType(f->getReturnType());
        changed |= ret != f->getReturnType();
        return changed ? FunctionType::get(ret, params, f->isVarArg()) : t;
    }
    if (auto* s = dyn_cast<StructType>(t)) {
        if (s->isOpaque())
            return t;
        checkAggregate(t);
        SmallVector<Type*, 8> elements;
        bool changed = false;
        for (Type* e : s->elements()) {
            elements.push_back(remapType(e));
            changed |= elements.back() != e;
        }
        if (!changed)
            return t;
        if (s->isLiteral())
            return StructType::get(m_context, elements, s->isPacked());
        return StructType::create(m_context, elements, copyName(s), s->isPacked());
    }
    return t;
}

} // namespace duet::rt
