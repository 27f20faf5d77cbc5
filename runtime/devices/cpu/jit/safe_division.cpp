// guardIntegerDivision: divisors of 0 (and INT_MIN / -1) replaced before x86's div can fault.
#include "devices/cpu/jit/safe_division.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PatternMatch.h>

#include <vector>

namespace duet::rt {

using namespace llvm;

namespace {

/// A constant divisor none of whose lanes is 0 (nor, for signed division, -1) needs no guard.
bool safeAsIs(const BinaryOperator& div) {
    const Value* d = div.getOperand(1);
    if (!isa<Constant>(d))
        return false;
    using namespace PatternMatch;
    if (div.getOpcode() == Instruction::SDiv || div.getOpcode() == Instruction::SRem)
        return match(d, m_CheckedInt([](const APInt& v) { return !v.isZero() && !v.isAllOnes(); }));
    return match(d, m_CheckedInt([](const APInt& v) { return !v.isZero(); }));
}

} // namespace

bool guardIntegerDivision(Module& module) {
    std::vector<BinaryOperator*> divisions;
    for (Function& f : module)
        for (Instruction& i : instructions(f))
            if (auto* b = dyn_cast<BinaryOperator>(&i)) {
                const unsigned op = b->getOpcode();
                if ((op == Instruction::SDiv || op == Instruction::UDiv ||
                     op == Instruction::SRem || op == Instruction::URem) &&
                    !safeAsIs(*b))
                    divisions.push_back(b);
            }
    for (BinaryOperator* div : divisions) {
        IRBuilder<> b(div);
        Value* x = div->getOperand(0);
        Value* d = div->getOperand(1);
        Type* t = d->getType();
        Value* bad = b.CreateICmpEQ(d, Constant::getNullValue(t), "div.zero");
        if (div->getOpcode() == Instruction::SDiv || div->getOpcode() == Instruction::SRem) {
            const unsigned bits = t->getScalarSizeInBits();
            Value* overflow =
                b.CreateAnd(b.CreateICmpEQ(x, ConstantInt::get(t, APInt::getSignedMinValue(bits))),
                            b.CreateICmpEQ(d, Constant::getAllOnesValue(t)), "div.overflow");
            bad = b.CreateOr(bad, overflow);
        }
        div->setOperand(1, b.CreateSelect(bad, ConstantInt::get(t, 1), d, "div.safe"));
    }
    return !divisions.empty();
}

} // namespace duet::rt
