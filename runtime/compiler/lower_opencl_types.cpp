// lowerOpenCLTypes: spirv.Image -> pointer to the image descriptor, spirv.Sampler -> i32.
//
// clang 19 gives spir64 images and samplers target extension types, which no CPU code
// generator can lower. The pass recreates each function whose signature mentions them with
// plain types, moves the body over, and remaps every instruction (types, call signatures,
// constants) through ValueMapper with a type remapper. The builtin library reaches the
// descriptor behind an image through `__duet_image_desc(image)`, a declaration only: once
// images are pointers, such a call is the identity and is folded here (likewise
// `__duet_sampler_bits`). Sampler literals arrive as `__translate_sampler_initializer(i32)`,
// whose argument already is the CLK_* value the library decodes.
#include "compiler/lower_opencl_types.hpp"

#include <llvm/IR/AttributeMask.h>
#include <llvm/IR/Attributes.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <vector>

namespace duet::rt {
namespace {

using namespace llvm;

constexpr unsigned kGlobalAddressSpace = 1; // spir64: images are global memory

class OpaqueTypeRemapper final : public ValueMapTypeRemapper {
  public:
    explicit OpaqueTypeRemapper(LLVMContext& ctx)
        : m_image(PointerType::get(ctx, kGlobalAddressSpace)), m_sampler(Type::getInt32Ty(ctx)) {}

    Type* remapType(Type* t) override {
        if (auto* te = dyn_cast<TargetExtType>(t)) {
            if (te->getName() == "spirv.Image")
                return m_image;
            if (te->getName() == "spirv.Sampler")
                return m_sampler;
            return t;
        }
        if (auto* ft = dyn_cast<FunctionType>(t)) {
            bool changed = false;
            Type* ret = remapType(ft->getReturnType());
            changed |= ret != ft->getReturnType();
            SmallVector<Type*, 8> params;
            for (Type* p : ft->params()) {
                params.push_back(remapType(p));
                changed |= params.back() != p;
            }
            return changed ? FunctionType::get(ret, params, ft->isVarArg()) : t;
        }
        if (auto* at = dyn_cast<ArrayType>(t)) {
            Type* e = remapType(at->getElementType());
            return e != at->getElementType() ? ArrayType::get(e, at->getNumElements()) : t;
        }
        if (auto* st = dyn_cast<StructType>(t); st && st->isLiteral()) {
            bool changed = false;
            SmallVector<Type*, 8> elems;
            for (Type* e : st->elements()) {
                elems.push_back(remapType(e));
                changed |= elems.back() != e;
            }
            return changed ? StructType::get(t->getContext(), elems, st->isPacked()) : t;
        }
        return t;
    }

    bool changes(Type* t) { return remapType(t) != t; }

  private:
    Type* m_image;
    Type* m_sampler;
};

bool bodyMentions(Function& f, OpaqueTypeRemapper& mapper) {
    for (Instruction& inst : instructions(f)) {
        if (mapper.changes(inst.getType()))
            return true;
        if (auto* a = dyn_cast<AllocaInst>(&inst); a && mapper.changes(a->getAllocatedType()))
            return true;
        if (auto* cb = dyn_cast<CallBase>(&inst); cb && mapper.changes(cb->getFunctionType()))
            return true;
        for (Value* op : inst.operands())
            if (mapper.changes(op->getType()))
                return true;
    }
    return false;
}

/// Folds every call of the functions `match` accepts into its first argument.
bool foldIdentityCalls(Module& m, bool (*match)(StringRef), std::string& error) {
    std::vector<Function*> fns;
    for (Function& f : m)
        if (match(f.getName()))
            fns.push_back(&f);
    for (Function* f : fns) {
        if (!f->isDeclaration()) {
            error = "internal: " + f->getName().str() + " must not be defined by the program";
            return false;
        }
        for (User* u : make_early_inc_range(f->users())) {
            auto* call = dyn_cast<CallBase>(u);
            if (!call || call->getCalledFunction() != f || call->arg_size() != 1 ||
                call->getArgOperand(0)->getType() != call->getType()) {
                error = "internal: unexpected use of " + f->getName().str();
                return false;
            }
            call->replaceAllUsesWith(call->getArgOperand(0));
            call->eraseFromParent();
        }
        if (f->use_empty())
            f->eraseFromParent();
    }
    return true;
}

} // namespace

bool lowerOpenCLTypes(Module& module, std::string& error) {
    OpaqueTypeRemapper mapper(module.getContext());

    // New signatures first, so that every call can be remapped against its final callee.
    ValueToValueMapTy vmap;
    std::vector<Function*> oldFns, rewritten;
    for (Function& f : module)
        if (mapper.changes(f.getFunctionType()))
            oldFns.push_back(&f);
    for (Function* f : oldFns) {
        auto* type = cast<FunctionType>(mapper.remapType(f->getFunctionType()));
        Function* nf = Function::Create(type, f->getLinkage(), f->getAddressSpace(), "", &module);
        nf->takeName(f);
        nf->copyAttributesFrom(f);
        nf->copyMetadata(f, 0);
        for (unsigned i = 0; i < type->getNumParams(); ++i)
            if (type->getParamType(i) != f->getFunctionType()->getParamType(i))
                nf->removeParamAttrs(i, AttributeFuncs::typeIncompatible(type->getParamType(i)));
        if (type->getReturnType() != f->getReturnType())
            nf->removeRetAttrs(AttributeFuncs::typeIncompatible(type->getReturnType()));
        nf->splice(nf->begin(), f);
        for (auto [oldArg, newArg] : zip(f->args(), nf->args())) {
            newArg.takeName(&oldArg);
            vmap[&oldArg] = &newArg;
        }
        // Function values are all `ptr`: uses (callees included) move over as they are; the
        // remapping below fixes the call signatures.
        f->replaceAllUsesWith(nf);
        if (!nf->isDeclaration())
            rewritten.push_back(nf);
    }
    for (Function& f : module) {
        if (f.isDeclaration())
            continue;
        bool isNew = std::find(rewritten.begin(), rewritten.end(), &f) != rewritten.end();
        if (isNew || bodyMentions(f, mapper))
            RemapFunction(f, vmap, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges, &mapper);
    }
    vmap.clear();
    for (Function* f : oldFns) {
        f->dropAllReferences();
        f->eraseFromParent();
    }

    auto isSamplerInit = [](StringRef n) { return n == "__translate_sampler_initializer"; };
    auto isAccessor = [](StringRef n) {
        return n.starts_with("_Z17__duet_image_desc") || n.starts_with("_Z19__duet_sampler_bits");
    };
    if (!foldIdentityCalls(module, isSamplerInit, error) ||
        !foldIdentityCalls(module, isAccessor, error))
        return false;

    for (Function& f : module) {
        if (mapper.changes(f.getFunctionType()) ||
            (!f.isDeclaration() && bodyMentions(f, mapper))) {
            error = "internal: image or sampler values left in " + f.getName().str();
            return false;
        }
    }
    for (GlobalVariable& g : module.globals())
        if (mapper.changes(g.getValueType())) {
            error = "image or sampler global variable '" + g.getName().str() + "' is not supported";
            return false;
        }
    return true;
}

} // namespace duet::rt
