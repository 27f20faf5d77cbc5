// SPIR opaque types -> pointers (see opaque_types.hpp): functions whose signature or body
// mention a target extension type are cloned with every such type remapped.
#include "devices/cpu/jit/opaque_types.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/AttributeMask.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

namespace duet::rt {
namespace {

using namespace llvm;

class OpaqueTypeMapper final : public ValueMapTypeRemapper {
public:
    explicit OpaqueTypeMapper(LLVMContext& ctx) : m_ptr(PointerType::get(ctx, 0)) {}

    Type* remapType(Type* t) override {
        if (auto* ext = dyn_cast<TargetExtType>(t))
            return ext->getName().starts_with("spirv.") ? m_ptr : t;
        if (auto* fn = dyn_cast<FunctionType>(t)) {
            SmallVector<Type*, 8> params;
            for (Type* p : fn->params())
                params.push_back(remapType(p));
            return FunctionType::get(remapType(fn->getReturnType()), params, fn->isVarArg());
        }
        if (auto* st = dyn_cast<StructType>(t); st && st->isLiteral()) {
            SmallVector<Type*, 8> elements;
            for (Type* e : st->elements())
                elements.push_back(remapType(e));
            return StructType::get(t->getContext(), elements, st->isPacked());
        }
        if (auto* at = dyn_cast<ArrayType>(t))
            return ArrayType::get(remapType(at->getElementType()), at->getNumElements());
        return t;
    }
    bool changes(Type* t) { return remapType(t) != t; }

private:
    PointerType* m_ptr;
};

/// clang writes CLK_NULL_RESERVE_ID as `bitcast (i64 -1 to target("spirv.ReserveId"))`, a
/// constant that remapping the type cannot keep (no bitcast turns an integer into a pointer):
/// it becomes an inttoptr.
class OpaqueConstantMaterializer final : public ValueMaterializer {
public:
    explicit OpaqueConstantMaterializer(OpaqueTypeMapper& mapper) : m_mapper(mapper) {}

    Value* materialize(Value* v) override {
        auto* ce = dyn_cast<ConstantExpr>(v);
        if (!ce || ce->getOpcode() != Instruction::BitCast)
            return nullptr;
        auto* ext = dyn_cast<TargetExtType>(ce->getType());
        if (!ext || !ext->getName().starts_with("spirv.") ||
            !ce->getOperand(0)->getType()->isIntegerTy())
            return nullptr;
        return ConstantExpr::getIntToPtr(ce->getOperand(0), m_mapper.remapType(ext));
    }

private:
    OpaqueTypeMapper& m_mapper;
};

bool mentionsOpaqueType(Function& f, OpaqueTypeMapper& mapper) {
    if (mapper.changes(f.getFunctionType()))
        return true;
    for (Instruction& inst : instructions(f)) {
        if (mapper.changes(inst.getType()))
            return true;
        for (Value* op : inst.operands())
            if (mapper.changes(op->getType()))
                return true;
        if (auto* a = dyn_cast<AllocaInst>(&inst); a && mapper.changes(a->getAllocatedType()))
            return true;
        if (auto* call = dyn_cast<CallBase>(&inst); call && mapper.changes(call->getFunctionType()))
            return true;
    }
    return false;
}

} // namespace

void lowerOpaqueTypes(llvm::Module& module) {
    using namespace llvm;
    LLVMContext& ctx = module.getContext();
    OpaqueTypeMapper mapper(ctx);
    std::vector<Function*> old;
    for (Function& f : module)
        if (mentionsOpaqueType(f, mapper))
            old.push_back(&f);
    if (!old.empty()) {
        ValueToValueMapTy vmap;
        OpaqueConstantMaterializer materializer(mapper);
        std::vector<Function*> fresh;
        for (Function* f : old) {
            auto* fnTy = cast<FunctionType>(mapper.remapType(f->getFunctionType()));
            Function* nf =
                Function::Create(fnTy, f->getLinkage(), f->getAddressSpace(), "", &module);
            nf->copyAttributesFrom(f);
            // Remember which kernel parameters were samplers: as pointers they look like
            // any other.
            for (unsigned i = 0; i < f->arg_size(); ++i) {
                auto* ext = dyn_cast<TargetExtType>(f->getArg(i)->getType());
                if (ext && ext->getName() == "spirv.Sampler")
                    nf->addParamAttr(i, Attribute::get(ctx, kSamplerParamAttr));
                // Attributes of the old type (if any) do not fit a pointer.
                if (ext)
                    nf->removeParamAttrs(
                        i, AttributeFuncs::typeIncompatible(PointerType::get(ctx, 0)));
            }
            vmap[f] = nf;
            fresh.push_back(nf);
        }
        for (size_t i = 0; i < old.size(); ++i) {
            Function* f = old[i];
            Function* nf = fresh[i];
            if (f->isDeclaration())
                continue;
            for (unsigned a = 0; a < f->arg_size(); ++a)
                vmap[f->getArg(a)] = nf->getArg(a);
            SmallVector<ReturnInst*, 4> returns;
            CloneFunctionInto(nf, f, vmap, CloneFunctionChangeType::GlobalChanges, returns, "",
                              nullptr, &mapper, &materializer);
        }
        for (size_t i = 0; i < old.size(); ++i) {
            old[i]->replaceAllUsesWith(fresh[i]);
            fresh[i]->takeName(old[i]);
        }
        for (Function* f : old)
            f->dropAllReferences();
        for (Function* f : old)
            f->eraseFromParent();
    }

    // The few functions that only convert between the opaque types and their contents.
    Type* i64 = Type::getInt64Ty(ctx);
    for (Function& f : make_early_inc_range(module)) {
        if (!f.isDeclaration())
            continue;
        StringRef name = f.getName();
        // Integer -> opaque value: sampler literals, reservation ids.
        const bool sampler =
            name == "__translate_sampler_initializer" || name == "__duet_make_reserve_id";
        // Opaque value -> the pointer it is: images, pipes (read_only and write_only forms).
        const bool imagePtr =
            name.contains("__duet_image_ptr") || name.starts_with("__duet_pipe_ptr");
        // Opaque value -> integer: sampler bits, reservation ids.
        const bool samplerBits =
            name.contains("__duet_sampler_bits") || name == "__duet_reserve_id_bits";
        if (!sampler && !imagePtr && !samplerBits)
            continue;
        for (User* u : make_early_inc_range(f.users())) {
            auto* call = dyn_cast<CallInst>(u);
            if (!call || call->getCalledFunction() != &f || call->arg_size() != 1)
                continue;
            IRBuilder<> b(call);
            Value* arg = call->getArgOperand(0);
            Type* ret = call->getType();
            Value* v = nullptr;
            if (sampler && arg->getType()->isIntegerTy() && ret->isPointerTy())
                v = b.CreateIntToPtr(b.CreateZExtOrTrunc(arg, i64), ret);
            else if (imagePtr && arg->getType()->isPointerTy() && ret->isPointerTy())
                v = b.CreatePointerBitCastOrAddrSpaceCast(arg, ret);
            else if (samplerBits && arg->getType()->isPointerTy() && ret->isIntegerTy())
                v = b.CreateZExtOrTrunc(b.CreatePtrToInt(arg, i64), ret);
            if (!v)
                continue; // a mismatched declaration: left for the undefined-symbol check
            call->replaceAllUsesWith(v);
            call->eraseFromParent();
        }
        if (f.use_empty())
            f.eraseFromParent();
    }
}

} // namespace duet::rt
