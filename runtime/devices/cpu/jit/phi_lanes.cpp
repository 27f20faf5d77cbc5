// Vector lanes that only feed themselves around a loop, dropped at the phis (regions.hpp,
// dropUnusedPhiLanes).
#include "devices/cpu/jit/regions.hpp"

#include <llvm/ADT/APInt.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>

namespace duet::rt::wg {

using namespace llvm;

namespace {

/// The lanes of vector values that some use outside a lane-wise cycle observes ("demanded"),
/// as a least fixed point: lanes flow backwards from the uses that observe them (stores,
/// calls, returns, anything not known to be lane-wise) through lane-wise operations,
/// shuffles, insertions and phis. A lane that reaches only other undemanded lanes is demanded
/// nowhere, however many times it goes round a loop.
class DemandedLanes {
public:
    explicit DemandedLanes(Function& f) {
        for (Instruction& i : instructions(f))
            if (isa<FixedVectorType>(i.getType()))
                m_work.push_back(&i);
        while (!m_work.empty()) {
            Instruction* i = m_work.pop_back_val();
            APInt d = fromUsers(*i);
            APInt& known = lanes(*i);
            if (d == known)
                continue;
            known = d;
            for (Value* op : i->operands())
                if (auto* oi = dyn_cast<Instruction>(op); oi && isa<FixedVectorType>(op->getType()))
                    m_work.push_back(oi);
        }
    }

    /// The lanes of `v` (a fixed-vector instruction) that are demanded.
    const APInt& of(Instruction& v) { return lanes(v); }

private:
    APInt& lanes(Instruction& v) {
        auto it = m_lanes.find(&v);
        if (it == m_lanes.end())
            it = m_lanes
                     .try_emplace(
                         &v, APInt::getZero(cast<FixedVectorType>(v.getType())->getNumElements()))
                     .first;
        return it->second;
    }

    /// Whether `u`'s result lane j depends only on its vector operands' lane j.
    static bool laneWise(const Instruction& u, const Value& operand) {
        auto* uty = dyn_cast<FixedVectorType>(u.getType());
        auto* oty = dyn_cast<FixedVectorType>(operand.getType());
        if (!uty || !oty || uty->getNumElements() != oty->getNumElements())
            return false;
        if (isa<BinaryOperator>(u) || isa<UnaryOperator>(u) || isa<CmpInst>(u) || isa<PHINode>(u) ||
            isa<FreezeInst>(u))
            return true;
        if (auto* c = dyn_cast<CastInst>(&u))
            return c->getOpcode() != Instruction::BitCast ||
                   uty->getElementType()->getScalarSizeInBits() ==
                       oty->getElementType()->getScalarSizeInBits();
        if (auto* s = dyn_cast<SelectInst>(&u))
            return s->getCondition() != &operand || s->getCondition()->getType()->isVectorTy();
        if (auto* ii = dyn_cast<IntrinsicInst>(&u)) {
            const Intrinsic::ID id = ii->getIntrinsicID();
            if (!isTriviallyVectorizable(id))
                return false;
            for (unsigned a = 0; a < ii->arg_size(); ++a)
                if (ii->getArgOperand(a) == &operand && isVectorIntrinsicWithScalarOpAtArg(id, a))
                    return false;
            return true;
        }
        return false;
    }

    /// The lanes of `v` its users demand, from what is known of theirs.
    APInt fromUsers(Instruction& v) {
        const unsigned n = cast<FixedVectorType>(v.getType())->getNumElements();
        APInt d = APInt::getZero(n);
        for (User* user : v.users()) {
            auto* u = dyn_cast<Instruction>(user);
            if (!u)
                return APInt::getAllOnes(n);
            if (auto* e = dyn_cast<ExtractElementInst>(u)) {
                auto* idx = dyn_cast<ConstantInt>(e->getIndexOperand());
                if (!idx)
                    return APInt::getAllOnes(n);
                if (idx->getValue().ult(n))
                    d.setBit(unsigned(idx->getZExtValue()));
                continue;
            }
            if (auto* s = dyn_cast<ShuffleVectorInst>(u)) {
                if (!isa<FixedVectorType>(s->getType()))
                    return APInt::getAllOnes(n);
                const APInt& du = lanes(*s);
                for (unsigned r = 0; r < du.getBitWidth(); ++r) {
                    const int m = s->getMaskValue(r);
                    if (!du[r] || m < 0)
                        continue;
                    if (unsigned(m) < n && s->getOperand(0) == &v)
                        d.setBit(unsigned(m));
                    if (unsigned(m) >= n && s->getOperand(1) == &v)
                        d.setBit(unsigned(m) - n);
                }
                continue;
            }
            if (auto* ins = dyn_cast<InsertElementInst>(u)) {
                if (ins->getOperand(0) != &v)
                    return APInt::getAllOnes(n); // v is the inserted element (a vector?)
                APInt du = lanes(*ins);
                if (auto* idx = dyn_cast<ConstantInt>(ins->getOperand(2));
                    idx && idx->getValue().ult(n))
                    du.clearBit(unsigned(idx->getZExtValue()));
                d |= du;
                continue;
            }
            if (!laneWise(*u, v))
                return APInt::getAllOnes(n);
            d |= lanes(*u);
        }
        return d;
    }

    DenseMap<Instruction*, APInt> m_lanes;
    SmallVector<Instruction*, 64> m_work;
};

} // namespace

size_t dropUnusedPhiLanes(Function& w) {
    DemandedLanes demanded(w);
    size_t dropped = 0;
    SmallVector<PHINode*, 16> phis;
    for (BasicBlock& bb : w)
        for (PHINode& p : bb.phis())
            if (isa<FixedVectorType>(p.getType()))
                phis.push_back(&p);
    // One shuffle per value and set of lanes, right after the value: phis that take the same
    // value (a loop's and its exit's) share it, so it stays one value across barriers.
    DenseMap<std::pair<Value*, APInt>, Value*> shuffles;
    auto kept = [&](Value* in, const APInt& d) -> Value* {
        const unsigned n = d.getBitWidth();
        if (isa<PoisonValue>(in))
            return in;
        if (auto* c = dyn_cast<Constant>(in)) {
            SmallVector<Constant*, 16> elems;
            for (unsigned j = 0; j < n; ++j) {
                Constant* e = d[j] ? c->getAggregateElement(j)
                                   : PoisonValue::get(c->getType()->getScalarType());
                if (!e)
                    return in;
                elems.push_back(e);
            }
            return ConstantVector::get(elems);
        }
        if (auto* i = dyn_cast<Instruction>(in); i && i->isTerminator())
            return in; // an invoke's result: kept whole (correct, only not trimmed)
        auto [it, added] = shuffles.try_emplace({in, d}, nullptr);
        if (!added)
            return it->second;
        BasicBlock::iterator at;
        if (auto* a = dyn_cast<Argument>(in))
            at = a->getParent()->getEntryBlock().getFirstInsertionPt();
        else if (auto* phi = dyn_cast<PHINode>(in))
            at = phi->getParent()->getFirstInsertionPt();
        else
            at = std::next(cast<Instruction>(in)->getIterator());
        SmallVector<int, 16> mask;
        for (unsigned j = 0; j < n; ++j)
            mask.push_back(d[j] ? int(j) : -1);
        IRBuilder<> b(at->getParent(), at);
        return it->second = b.CreateShuffleVector(in, mask, in->getName() + ".lanes");
    };
    for (PHINode* p : phis) {
        const APInt d = demanded.of(*p);
        if (d.isAllOnes())
            continue;
        // Each incoming value keeps the demanded lanes only: the cycle through the undemanded
        // ones is cut, and what computed them dies (per-work-item storage would otherwise keep
        // them alive across barriers).
        for (unsigned k = 0; k < p->getNumIncomingValues(); ++k)
            p->setIncomingValue(k, kept(p->getIncomingValue(k), d));
        ++dropped;
    }
    return dropped;
}

} // namespace duet::rt::wg
