// Gathers and scatters whose lanes' addresses turn out consecutive when the kernel runs become
// vector loads and stores (work_item_loops.hpp, ConsecutiveGathers).
#include "devices/cpu/jit/work_item_loops.hpp"

#include "core/environment.hpp"

#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/GetElementPtrTypeIterator.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <algorithm>

namespace duet::rt::wg {

using namespace llvm;

namespace {

/// At most this many bytes in one wide access: four 512-bit registers.
constexpr uint64_t kMaxWideBytes = 256;

/// Where a gather or scatter's lanes point: `gep srcType, root, prefix..., vecIndex, suffix...`
/// plus constant byte offsets, with `vecIndex` the one index that differs between lanes. Two
/// accesses with the same root, type and indices up to `vecIndex` touch the same elements at
/// `offset` bytes apart, and a lane steps `stride` bytes when `vecIndex` steps by one.
struct Pattern {
    SmallVector<Value*, 4> key; ///< root, then the indices up to the varying one
    Type* srcType = nullptr;
    uint64_t stride = 0;
    int64_t offset = 0;
};

/// Constant byte offsets through GEPs of a vector of pointers with constant indices.
Value* stripConstantOffsets(Value* ptr, const DataLayout& dl, int64_t& offset) {
    while (auto* gep = dyn_cast<GEPOperator>(ptr)) {
        if (!gep->getPointerOperandType()->isVectorTy())
            break;
        APInt off(dl.getIndexTypeSizeInBits(gep->getType()), 0);
        if (!gep->accumulateConstantOffset(dl, off))
            break;
        offset += off.getSExtValue();
        ptr = gep->getPointerOperand();
    }
    return ptr;
}

/// The constant byte value of a constant index (a scalar or a splat), or false.
bool constantIndex(const Value* v, int64_t& out) {
    const auto* c = dyn_cast<Constant>(v);
    if (!c)
        return false;
    if (c->getType()->isVectorTy())
        c = c->getSplatValue();
    const auto* ci = dyn_cast_or_null<ConstantInt>(c);
    if (!ci)
        return false;
    out = ci->getSExtValue();
    return true;
}

bool describe(Value* ptr, const DataLayout& dl, Pattern& p) {
    Value* base = stripConstantOffsets(ptr, dl, p.offset);
    auto* gep = dyn_cast<GetElementPtrInst>(base);
    if (!gep || gep->getPointerOperandType()->isVectorTy())
        return false;
    p.key.push_back(gep->getPointerOperand());
    p.srcType = gep->getSourceElementType();
    bool varying = false;
    for (gep_type_iterator it = gep_type_begin(gep), end = gep_type_end(gep); it != end; ++it) {
        Value* idx = it.getOperand();
        int64_t c = 0;
        const bool isConst = constantIndex(idx, c);
        if (!varying) {
            p.key.push_back(idx);
            if (idx->getType()->isVectorTy() && !isConst) {
                if (it.isStruct())
                    return false;
                varying = true;
                p.stride = it.getSequentialElementStride(dl).getFixedValue();
            }
            continue;
        }
        if (!isConst)
            return false; // a second varying index
        if (StructType* st = it.getStructTypeOrNull())
            p.offset += int64_t(dl.getStructLayout(st)->getElementOffset(unsigned(c)));
        else
            p.offset += c * int64_t(it.getSequentialElementStride(dl).getFixedValue());
    }
    return varying && p.stride > 0;
}

struct Access {
    IntrinsicInst* call;
    int64_t offset;
};

struct Group {
    Pattern pattern;
    Value* mask;
    Type* vecType; ///< the gathered or scattered vector type, the same for every access
    bool load;
    SmallVector<Access, 4> accesses;
};

bool isGather(const IntrinsicInst& ii) {
    return ii.getIntrinsicID() == Intrinsic::masked_gather;
}

Value* pointerOf(IntrinsicInst& ii) {
    return ii.getArgOperand(isGather(ii) ? 0 : 1);
}

Value* maskOf(IntrinsicInst& ii) {
    return ii.getArgOperand(isGather(ii) ? 2 : 3);
}

Type* dataType(IntrinsicInst& ii) {
    return isGather(ii) ? ii.getType() : ii.getArgOperand(0)->getType();
}

/// Whether `g`'s accesses can be one wide access: elements of 4 or 8 bytes, each access at
/// a multiple of the element size within one lane's stride, no two at one place, the whole
/// within kMaxWideBytes.
bool fitsWide(Group& g, const DataLayout& dl, int64_t& minOffset, unsigned& perLane) {
    auto* vty = cast<FixedVectorType>(g.vecType);
    const uint64_t elem = dl.getTypeAllocSize(vty->getElementType());
    if ((elem != 4 && elem != 8) || vty->getNumElements() < 4 || g.pattern.stride % elem != 0)
        return false;
    minOffset = g.accesses.front().offset;
    int64_t maxOffset = minOffset;
    for (const Access& a : g.accesses) {
        minOffset = std::min(minOffset, a.offset);
        maxOffset = std::max(maxOffset, a.offset);
    }
    perLane = unsigned(g.pattern.stride / elem);
    if (uint64_t(maxOffset - minOffset) + elem > g.pattern.stride)
        return false;
    SmallVector<bool, 16> seen(perLane, false);
    for (const Access& a : g.accesses) {
        const int64_t rel = a.offset - minOffset;
        if (rel % int64_t(elem) != 0 || seen[size_t(rel / int64_t(elem))])
            return false;
        seen[size_t(rel / int64_t(elem))] = true;
    }
    return g.pattern.stride * vty->getNumElements() <= kMaxWideBytes;
}

/// Rewrites one group: a test that the first access's lanes step by the stride, a wide access
/// (masked where the lanes' mask or unused elements say so) when they do, each original access
/// under the test's other side. The accesses are in program order.
void rewrite(Group& g, const DataLayout& dl, int64_t minOffset, unsigned perLane) {
    auto* vty = cast<FixedVectorType>(g.vecType);
    const unsigned lanes = vty->getNumElements();
    Type* elemTy = vty->getElementType();
    const int64_t elem = int64_t(dl.getTypeAllocSize(elemTy));
    auto* wideTy = FixedVectorType::get(elemTy, lanes * perLane);
    auto element = [&](const Access& a) { return unsigned((a.offset - minOffset) / elem); };

    // The test and the wide access's address, before the first access: every access's
    // pointer is its pointer plus a constant.
    IntrinsicInst* first = g.accesses.front().call;
    IRBuilder<> b(first);
    Value* ptr = pointerOf(*first);
    Type* intPtr = dl.getIntPtrType(ptr->getType());
    Value* addrs = b.CreatePtrToInt(ptr, intPtr);
    Value* rel = b.CreateSub(addrs, b.CreateVectorSplat(lanes, b.CreateExtractElement(addrs, 0ul)));
    SmallVector<Constant*, 16> steps;
    for (unsigned i = 0; i < lanes; ++i)
        steps.push_back(ConstantInt::get(intPtr->getScalarType(), uint64_t(i) * g.pattern.stride));
    Value* consecutive =
        b.CreateFreeze(b.CreateAndReduce(b.CreateICmpEQ(rel, ConstantVector::get(steps))));
    Value* wideBase = b.CreateGEP(b.getInt8Ty(), b.CreateExtractElement(ptr, 0ul),
                                  b.getInt64(minOffset - g.accesses.front().offset));

    // The wide mask: lane i's mask for the elements an access uses, false for the others.
    SmallVector<int, 64> laneOf(lanes * perLane, -1);
    for (const Access& a : g.accesses)
        for (unsigned i = 0; i < lanes; ++i)
            laneOf[i * perLane + element(a)] = int(i);
    const bool allUsed = std::none_of(laneOf.begin(), laneOf.end(), [](int v) { return v < 0; });
    auto* maskC = dyn_cast<Constant>(g.mask);
    const bool fullMask = maskC && maskC->isAllOnesValue();
    auto wideMask = [&](IRBuilder<>& ib) -> Value* {
        SmallVector<int, 64> idx;
        for (int l : laneOf)
            idx.push_back(l < 0 ? int(lanes) : l); // element `lanes`: the zero vector's first
        return ib.CreateShuffleVector(g.mask, Constant::getNullValue(g.mask->getType()), idx);
    };
    const Align align(static_cast<uint64_t>(elem));
    const unsigned kinds[] = {LLVMContext::MD_tbaa, LLVMContext::MD_alias_scope,
                              LLVMContext::MD_noalias};

    if (g.load) {
        Instruction* thenTerm = SplitBlockAndInsertIfThen(consecutive, first, false);
        IRBuilder<> tb(thenTerm);
        auto* wide = cast<Instruction>(
            fullMask && allUsed ? static_cast<Value*>(tb.CreateAlignedLoad(wideTy, wideBase, align))
                                : tb.CreateMaskedLoad(wideTy, wideBase, align, wideMask(tb)));
        wide->copyMetadata(*first, kinds);
        BasicBlock* fast = thenTerm->getParent();
        PHINode* merged = PHINode::Create(wideTy, 2, "", &first->getParent()->front());
        merged->addIncoming(wide, fast);
        merged->addIncoming(PoisonValue::get(wideTy), fast->getSinglePredecessor());
        for (const Access& a : g.accesses) {
            IntrinsicInst* gather = a.call;
            Instruction* fastTerm = nullptr;
            Instruction* slowTerm = nullptr;
            SplitBlockAndInsertIfThenElse(consecutive, gather, &fastTerm, &slowTerm);
            IRBuilder<> fb(fastTerm);
            SmallVector<int, 16> pick;
            for (unsigned i = 0; i < lanes; ++i)
                pick.push_back(int(i * perLane + element(a)));
            Value* v = fb.CreateShuffleVector(merged, pick);
            Value* passthru = gather->getArgOperand(3);
            if (!isa<UndefValue>(passthru) && !fullMask) // UndefValue includes poison
                v = fb.CreateSelect(g.mask, v, passthru);
            BasicBlock* tail = gather->getParent();
            gather->moveBefore(slowTerm);
            PHINode* phi = PHINode::Create(gather->getType(), 2, "", &tail->front());
            gather->replaceAllUsesWith(phi);
            phi->addIncoming(v, fastTerm->getParent());
            phi->addIncoming(gather, slowTerm->getParent());
        }
        return;
    }

    // Stores: each scatter on the slow side, the interleaved values stored after the last.
    Value* slow = b.CreateNot(consecutive);
    BasicBlock* after = nullptr;
    for (const Access& a : g.accesses) {
        Instruction* slowTerm = SplitBlockAndInsertIfThen(slow, a.call, false);
        after = a.call->getParent();
        a.call->moveBefore(slowTerm);
    }
    Instruction* thenTerm = SplitBlockAndInsertIfThen(consecutive, &after->front(), false);
    IRBuilder<> tb(thenTerm);
    Value* wide = PoisonValue::get(wideTy);
    for (const Access& a : g.accesses) {
        SmallVector<int, 64> spread(lanes * perLane, -1);
        SmallVector<int, 64> merge;
        for (unsigned j = 0; j < lanes * perLane; ++j)
            merge.push_back(int(j));
        for (unsigned i = 0; i < lanes; ++i) {
            spread[i * perLane + element(a)] = int(i);
            merge[i * perLane + element(a)] = int(lanes * perLane + i * perLane + element(a));
        }
        Value* spreadV = tb.CreateShuffleVector(a.call->getArgOperand(0), spread);
        wide = tb.CreateShuffleVector(wide, spreadV, merge);
    }
    Instruction* store =
        fullMask && allUsed
            ? static_cast<Instruction*>(tb.CreateAlignedStore(wide, wideBase, align))
            : tb.CreateMaskedStore(wide, wideBase, align, wideMask(tb));
    store->copyMetadata(*first, kinds);
}

/// The gathers (or scatters) of one block in groups, each in program order: same pattern, mask
/// and type, with nothing between the group's first and last access that writes memory
/// (gathers: the wide load is at the first) or touches it at all (scatters: the wide store is
/// after the last).
SmallVector<Group, 8> groupsOf(BasicBlock& bb, const DataLayout& dl) {
    SmallVector<Group, 8> groups;
    SmallVector<size_t, 8> open;
    auto close = [&](auto shouldClose) {
        open.erase(std::remove_if(open.begin(), open.end(),
                                  [&](size_t i) { return shouldClose(groups[i]); }),
                   open.end());
    };
    for (Instruction& inst : bb) {
        auto* ii = dyn_cast<IntrinsicInst>(&inst);
        if (!ii || (ii->getIntrinsicID() != Intrinsic::masked_gather &&
                    ii->getIntrinsicID() != Intrinsic::masked_scatter)) {
            if (inst.mayWriteToMemory())
                close([](const Group&) { return true; });
            else if (inst.mayReadFromMemory())
                close([](const Group& g) { return !g.load; });
            continue;
        }
        const bool load = isGather(*ii);
        Pattern p;
        const bool known = isa<FixedVectorType>(dataType(*ii)) && describe(pointerOf(*ii), dl, p);
        Group* mine = nullptr;
        for (size_t i : open) {
            Group& g = groups[i];
            if (known && g.load == load && g.mask == maskOf(*ii) && g.vecType == dataType(*ii) &&
                g.pattern.key == p.key && g.pattern.srcType == p.srcType)
                mine = &g;
        }
        // A gather closes the scatter groups; a scatter every group but its own.
        close([&](const Group& g) { return &g != mine && (!g.load || !load); });
        if (mine) {
            mine->accesses.push_back({ii, p.offset});
            continue;
        }
        if (!known)
            continue;
        Group g;
        g.pattern = p;
        g.mask = maskOf(*ii);
        g.vecType = dataType(*ii);
        g.load = load;
        g.accesses.push_back({ii, p.offset});
        groups.push_back(std::move(g));
        open.push_back(groups.size() - 1);
    }
    return groups;
}

} // namespace

bool consecutiveGathersEnabled() {
    return envSwitchOn("DUET_CPU_CONSECUTIVE_GATHERS");
}

PreservedAnalyses ConsecutiveGathers::run(Function& f, FunctionAnalysisManager&) {
    const DataLayout& dl = f.getParent()->getDataLayout();
    SmallVector<BasicBlock*, 16> blocks;
    for (BasicBlock& bb : f)
        blocks.push_back(&bb);
    bool changed = false;
    for (BasicBlock* bb : blocks)
        for (Group& g : groupsOf(*bb, dl)) {
            int64_t minOffset = 0;
            unsigned perLane = 0;
            if (!fitsWide(g, dl, minOffset, perLane))
                continue;
            rewrite(g, dl, minOffset, perLane);
            changed = true;
        }
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace duet::rt::wg
