// Float division and square root at the precision OpenCL C asks for, not more: div.full.f32 and
// sqrt.approx.f32 where the front end allows 2.5 and 3 ulp, instead of the IEEE-rounded
// instructions LLVM's NVPTX back end and libclc always emit.
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Operator.h>

#include <string>
#include <vector>

namespace duet::rt::nvptx {
namespace {

using namespace llvm;

/// div.full.f32 (max 2 ulp over the whole range): LLVM 19 has no intrinsic for it, and its
/// back end picks the division from a process-wide option, so it is written as inline PTX.
/// The call says it touches no memory: an inline asm call that may write memory splits the
/// back end's load-store vectoriser's chains, and the float4 loads around a division became
/// two scalar loads and a float2 one.
Value* fullRangeDivide(IRBuilder<>& b, Value* x, Value* y) {
    Type* f = b.getFloatTy();
    InlineAsm* div = InlineAsm::get(FunctionType::get(f, {f, f}, false), "div.full.f32 $0, $1, $2;",
                                    "=f,f,f", /*hasSideEffects=*/false);
    CallInst* call = b.CreateCall(div, {x, y});
    call->setDoesNotAccessMemory();
    call->setDoesNotThrow();
    call->addFnAttr(Attribute::WillReturn);
    return call;
}

/// Whether `d` may be less precise than correctly rounded: clang marks an OpenCL C float
/// division with !fpmath 2.5 unless -cl-fp32-correctly-rounded-divide-sqrt is given.
bool relaxed(const BinaryOperator& d) {
    const auto* op = dyn_cast<FPMathOperator>(&d);
    return op && op->getFPAccuracy() >= 2.0f;
}

/// Whether `name` is the mangled float sqrt of OpenCL C, scalar or vector.
bool floatSqrt(StringRef name) {
    static const char* const kNames[] = {"_Z4sqrtf",     "_Z4sqrtDv2_f", "_Z4sqrtDv3_f",
                                         "_Z4sqrtDv4_f", "_Z4sqrtDv8_f", "_Z4sqrtDv16_f"};
    for (const char* n : kNames)
        if (name == n)
            return true;
    return false;
}

} // namespace

void relaxFloatSqrt(Module& m) {
    std::vector<CallInst*> calls;
    for (Function& f : m)
        for (Instruction& i : instructions(f))
            if (auto* call = dyn_cast<CallInst>(&i)) {
                const Function* callee = call->getCalledFunction();
                const auto* op = dyn_cast<FPMathOperator>(call);
                if (callee && floatSqrt(callee->getName()) && op && op->getFPAccuracy() >= 3.0f)
                    calls.push_back(call);
            }
    for (CallInst* call : calls) {
        IRBuilder<> b(call);
        Value* x = call->getArgOperand(0);
        auto approx = [&](Value* lane) {
            return b.CreateIntrinsic(Intrinsic::nvvm_sqrt_approx_f, {}, {lane});
        };
        Value* result = nullptr;
        if (auto* v = dyn_cast<FixedVectorType>(call->getType())) {
            result = PoisonValue::get(v);
            for (unsigned lane = 0; lane < v->getNumElements(); ++lane)
                result =
                    b.CreateInsertElement(result, approx(b.CreateExtractElement(x, lane)), lane);
        } else {
            result = approx(x);
        }
        result->takeName(call);
        call->replaceAllUsesWith(result);
        call->eraseFromParent();
    }
}

void relaxFloatDivision(Module& m) {
    for (Function& f : m) {
        std::vector<BinaryOperator*> divisions;
        for (Instruction& i : instructions(f))
            if (auto* d = dyn_cast<BinaryOperator>(&i);
                d && d->getOpcode() == Instruction::FDiv && d->getType()->isFPOrFPVectorTy() &&
                d->getType()->getScalarType()->isFloatTy() && relaxed(*d))
                divisions.push_back(d);
        for (BinaryOperator* d : divisions) {
            IRBuilder<> b(d);
            Value* x = d->getOperand(0);
            Value* y = d->getOperand(1);
            Value* result = nullptr;
            if (auto* v = dyn_cast<FixedVectorType>(d->getType())) {
                result = PoisonValue::get(v);
                for (unsigned lane = 0; lane < v->getNumElements(); ++lane)
                    result =
                        b.CreateInsertElement(result,
                                              fullRangeDivide(b, b.CreateExtractElement(x, lane),
                                                              b.CreateExtractElement(y, lane)),
                                              lane);
            } else {
                result = fullRangeDivide(b, x, y);
            }
            result->takeName(d);
            d->replaceAllUsesWith(result);
            d->eraseFromParent();
        }
    }
}

} // namespace duet::rt::nvptx
