// rsqrt through AVX-512's estimate and one Newton step (rsqrt_estimates.hpp).
#include "devices/cpu/jit/rsqrt_estimates.hpp"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/PatternMatch.h>

#include <cstdlib>

namespace duet::rt::cpu {

using namespace llvm;

namespace {

/// DUET_CPU_RSQRT_ESTIMATE=0|1 when set, else the default for `cpu`: not on AMD's cores (Zen 5
/// divides fast: N-body measured slower with the estimate), on elsewhere (Intel's AVX-512 cores
/// divide and take square roots of 512-bit vectors on one port).
bool enabled(StringRef cpu) {
    if (const char* env = std::getenv("DUET_CPU_RSQRT_ESTIMATE"); env && *env)
        return env[0] == '1';
    return !cpu.starts_with("znver");
}

/// Whether the comma-separated `features` turns `name` (e.g. "+avx512f") on: whole entries
/// only ("+avx512f" is not "+avx512fp16").
bool hasFeature(StringRef features, StringRef name) {
    SmallVector<StringRef, 64> parts;
    features.split(parts, ',');
    bool on = false;
    for (StringRef p : parts)
        if (p.trim() == name)
            on = true;
        else if (p.trim() == ("-" + name.drop_front()).str())
            on = false;
    return on;
}

/// The rewrite of `div` = `fdiv arcp 1.0, sqrt(x)` into the estimate and a Newton step, with
/// the lanes padded to the estimate instruction's 4, 8 or 16 (`vl`: AVX-512VL, for 4 and 8).
Value* estimate(IRBuilder<>& b, Value* x, bool vl) {
    Type* ty = x->getType();
    auto* vty = dyn_cast<FixedVectorType>(ty);
    const unsigned lanes = vty ? vty->getNumElements() : 1;
    const unsigned width = lanes <= 4 ? 4 : lanes <= 8 ? 8 : 16;
    if (width < 16 && !vl)
        return nullptr;
    Type* f32 = b.getFloatTy();
    auto* wide = FixedVectorType::get(f32, width);
    Value* in;
    if (!vty) {
        in = b.CreateVectorSplat(width, x);
    } else if (lanes == width) {
        in = x;
    } else {
        // Pad with copies of lane 0: no lane computes on an undefined (maybe denormal) value.
        SmallVector<int, 16> mask;
        for (unsigned i = 0; i < width; ++i)
            mask.push_back(i < lanes ? int(i) : 0);
        in = b.CreateShuffleVector(x, x, mask);
    }
    const Intrinsic::ID id = width == 16  ? Intrinsic::x86_avx512_rsqrt14_ps_512
                             : width == 8 ? Intrinsic::x86_avx512_rsqrt14_ps_256
                                          : Intrinsic::x86_avx512_rsqrt14_ps_128;
    Value* y = b.CreateIntrinsic(
        id, {}, {in, ConstantAggregateZero::get(wide), b.getIntN(width == 16 ? 16 : 8, -1)});
    // y1 = y + (y/2) * (1 - (x*y)*y): the residual with one rounding (fma), the step with one.
    Value* xy = b.CreateFMul(in, y);
    Value* one = ConstantFP::get(wide, 1.0);
    Value* residual = b.CreateIntrinsic(Intrinsic::fma, {wide}, {b.CreateFNeg(xy), y, one});
    Value* halfY = b.CreateFMul(y, ConstantFP::get(wide, 0.5));
    Value* refined = b.CreateIntrinsic(Intrinsic::fma, {wide}, {halfY, residual, y});
    // x = +-0 must give +-inf and x = +inf +0, where the step makes NaN (0 * inf): one
    // vfixupimmps classifies x and replaces those lanes. Its table has a nibble per class of x
    // (QNaN, SNaN, zero, +1, -inf, +inf, negative, positive), saying what the lane becomes:
    // 0 keeps the step's result (NaN already for negative x and NaN), 6 is infinity with x's
    // sign, 8 is +0. A denormal x is "positive" (DAZ is off), as the estimate treats it.
    constexpr int kKeep = 0, kSignedInf = 6, kPlusZero = 8;
    const uint32_t table = uint32_t(kSignedInf) << 8 | uint32_t(kPlusZero) << 20 | kKeep;
    Value* tbl = ConstantInt::get(FixedVectorType::get(b.getInt32Ty(), width), table);
    Value* result = width == 16
                        ? b.CreateIntrinsic(
                              Intrinsic::x86_avx512_mask_fixupimm_ps_512, {},
                              {refined, in, tbl, b.getInt32(0), b.getInt16(0xffff), b.getInt32(4)})
                        : b.CreateIntrinsic(width == 8 ? Intrinsic::x86_avx512_mask_fixupimm_ps_256
                                                       : Intrinsic::x86_avx512_mask_fixupimm_ps_128,
                                            {}, {refined, in, tbl, b.getInt32(0), b.getInt8(0xff)});
    if (!vty)
        return b.CreateExtractElement(result, uint64_t(0));
    if (lanes == width)
        return result;
    SmallVector<int, 16> mask;
    for (unsigned i = 0; i < lanes; ++i)
        mask.push_back(int(i));
    return b.CreateShuffleVector(result, result, mask);
}

} // namespace

unsigned rsqrtEstimates(Module& module, const std::string& cpu, const std::string& features) {
    using namespace PatternMatch;
    const bool avx512 = enabled(cpu) && hasFeature(features, "+avx512f");
    const bool vl = avx512 && hasFeature(features, "+avx512vl");
    unsigned rewritten = 0;
    for (Function& f : module) {
        SmallVector<BinaryOperator*, 8> divisions;
        for (BasicBlock& bb : f)
            for (Instruction& i : bb)
                if (i.getOpcode() == Instruction::FDiv && i.hasAllowReciprocal() &&
                    i.getType()->getScalarType()->isFloatTy())
                    divisions.push_back(cast<BinaryOperator>(&i));
        for (BinaryOperator* div : divisions) {
            Value* x = nullptr;
            auto* sqrt = dyn_cast<IntrinsicInst>(div->getOperand(1));
            const bool pattern = match(div->getOperand(0), m_FPOne()) && sqrt &&
                                 sqrt->getIntrinsicID() == Intrinsic::sqrt &&
                                 (x = sqrt->getArgOperand(0));
            auto* vty = dyn_cast<FixedVectorType>(div->getType());
            const bool fits = !vty || vty->getNumElements() <= 16;
            if (!div->isFast() && pattern && avx512 && fits) {
                IRBuilder<> b(div);
                if (Value* est = estimate(b, x, vl)) {
                    est->takeName(div);
                    div->replaceAllUsesWith(est);
                    div->eraseFromParent();
                    if (sqrt->use_empty())
                        sqrt->eraseFromParent();
                    ++rewritten;
                    continue;
                }
            }
            // Kept as a division: correctly rounded, so the back end's own estimate (without
            // the special cases) must not replace it. Under -cl-fast-relaxed-math (`fast`,
            // which includes no-infinities) the back end's estimate is what the user asked for.
            if (!div->isFast()) {
                div->setHasAllowReciprocal(false);
                if (pattern)
                    sqrt->setHasAllowReciprocal(false);
            }
        }
    }
    return rewritten;
}

std::string rsqrtEstimatesMemoKey() {
    const char* env = std::getenv("DUET_CPU_RSQRT_ESTIMATE");
    return env && *env ? std::string("|rsqrt") + env[0] : std::string();
}

} // namespace duet::rt::cpu
