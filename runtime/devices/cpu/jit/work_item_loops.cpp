// Work-item loops for the vectorisers: marked by the work-group pass, declared parallel before
// the loop vectoriser runs, and its verdict on each collected from its remarks.
#include "devices/cpu/jit/work_item_loops.hpp"

#include "core/environment.hpp"
#include "devices/cpu/jit/work_group.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

namespace duet::rt::wg {

using namespace llvm;

namespace {

constexpr const char* kMarker = "duet.work_item_loop";

/// True when `loopId` (an llvm.loop node) carries the work-item loop marker.
bool hasMarker(const MDNode* loopId) {
    if (!loopId)
        return false;
    for (const MDOperand& op : loopId->operands())
        if (auto* node = dyn_cast_or_null<MDNode>(op.get()); node && node->getNumOperands() > 0)
            if (auto* s = dyn_cast<MDString>(node->getOperand(0)); s && s->getString() == kMarker)
                return true;
    return false;
}

/// Per-work-item storage (regions.cpp) is an alloca sized by the group at run time; a private
/// object all work-items share has a constant size.
/// The per-lane arrays of LinearisedDivergentLoops are indexed by the lane, as that storage is by
/// the work-item.
bool isPerItemStorage(const Value* object) {
    auto* a = dyn_cast<AllocaInst>(object);
    return a && (!isa<ConstantInt>(a->getArraySize()) || a->getMetadata(kPerLaneMarker));
}

} // namespace

std::string whyNotParallel(const Loop& loop) {
    for (BasicBlock* bb : loop.blocks()) {
        for (Instruction& inst : *bb) {
            if (!inst.mayReadOrWriteMemory())
                continue;
            if (auto* ii = dyn_cast<IntrinsicInst>(&inst)) {
                if (ii->isAssumeLikeIntrinsic() || ii->isLifetimeStartOrEnd())
                    continue;
            }
            if (auto* call = dyn_cast<CallBase>(&inst)) {
                if (call->onlyReadsMemory() && !call->mayThrow())
                    continue; // reads only: no order between work-items to keep
                return "a call that may write memory (" +
                       (call->getCalledFunction() ? call->getCalledFunction()->getName().str()
                                                  : std::string("indirect")) +
                       ")";
            }
            if (inst.isAtomic())
                return "an atomic access";
            if (isa<AtomicRMWInst, AtomicCmpXchgInst, FenceInst>(inst))
                return "an atomic access";
            Value* ptr = getLoadStorePointerOperand(&inst);
            if (!ptr)
                return "an unknown memory access";
            if (auto* ld = dyn_cast<LoadInst>(&inst); ld && ld->isVolatile())
                return "a volatile access";
            if (auto* st = dyn_cast<StoreInst>(&inst); st && st->isVolatile())
                return "a volatile access";
            const unsigned as = ptr->getType()->getPointerAddressSpace();
            if (as == 1 || as == 2 || as == 3)
                continue; // __global, __constant, __local: shared, ordered only by barriers
            // Private or generic: only per-work-item storage is each work-item's own (and
            // constant tables, such as the builtins', are only read).
            SmallVector<const Value*, 4> objects;
            getUnderlyingObjects(ptr, objects, nullptr, 12);
            for (const Value* o : objects) {
                auto* gv = dyn_cast<GlobalVariable>(o);
                if (isa<LoadInst>(inst) && gv && gv->isConstant())
                    continue;
                if (!isPerItemStorage(o))
                    return "a private or generic access not provably per work-item";
            }
        }
    }
    return {};
}

namespace {

/// `existing` (an access group or a list of them, or null) with `group` added.
MDNode* addAccessGroup(LLVMContext& ctx, MDNode* existing, MDNode* group) {
    if (!existing)
        return group;
    SmallVector<Metadata*, 4> groups;
    if (existing->getNumOperands() == 0)
        groups.push_back(existing);
    else
        for (const MDOperand& op : existing->operands())
            groups.push_back(op.get());
    groups.push_back(group);
    return MDNode::get(ctx, groups);
}

} // namespace

bool isWorkItemLoopLatch(const Instruction* term) {
    return term && hasMarker(term->getMetadata(LLVMContext::MD_loop));
}

void markWorkItemLoop(BranchInst* latch, bool force, unsigned width) {
    LLVMContext& ctx = latch->getContext();
    SmallVector<Metadata*, 5> ops{nullptr, MDNode::get(ctx, {MDString::get(ctx, kMarker)})};
    if (force || width)
        ops.push_back(MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.vectorize.enable"),
                                        ConstantAsMetadata::get(ConstantInt::getTrue(ctx))}));
    auto i32 = [&](unsigned v) {
        return ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(ctx), v));
    };
    if (width)
        ops.push_back(
            MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.vectorize.width"), i32(width)}));
    // One vector per iteration: the loop vectoriser's vector body runs only while a whole
    // width times its interleave count of work-items is left, and the loop's trip count, the
    // group's size along x, is often just 16 (16x16 groups): interleaved 4 times, 8 or 16
    // lanes wide, the body never ran and every work-item took the scalar remainder. Its
    // iterations are independent, so the core overlaps them without the interleaving.
    // DUET_CPU_INTERLEAVE_ONE=0 leaves the count to the vectoriser (for comparisons).
    if (width || envSwitchOn("DUET_CPU_INTERLEAVE_ONE"))
        ops.push_back(MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.interleave.count"), i32(1)}));
    MDNode* id = MDNode::getDistinct(ctx, ops);
    id->replaceOperandWith(0, id);
    latch->setMetadata(LLVMContext::MD_loop, id);
}

PreservedAnalyses ParallelWorkItemLoops::run(Function& f, FunctionAnalysisManager& fam) {
    LoopInfo& li = fam.getResult<LoopAnalysis>(f);
    LLVMContext& ctx = f.getContext();
    bool changed = false;
    for (Loop* loop : li.getLoopsInPreorder()) {
        MDNode* id = loop->getLoopID();
        if (!hasMarker(id))
            continue;
        std::string why = loop->isInnermost()
                              ? whyNotParallel(*loop)
                              : std::string("it holds a loop of its own that was not split into "
                                            "work-item loops (a loop whose trip count differs "
                                            "between work-items)");
        if (!why.empty()) {
            if (report)
                report->noteScalar(loop->getHeader(), why);
            continue;
        }
        MDNode* group = MDNode::getDistinct(ctx, {});
        for (BasicBlock* bb : loop->blocks())
            for (Instruction& inst : *bb)
                if (inst.mayReadOrWriteMemory())
                    inst.setMetadata(
                        LLVMContext::MD_access_group,
                        addAccessGroup(ctx, inst.getMetadata(LLVMContext::MD_access_group), group));
        SmallVector<Metadata*, 4> ops{nullptr};
        for (unsigned i = 1; i < id->getNumOperands(); ++i)
            ops.push_back(id->getOperand(i));
        ops.push_back(MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.parallel_accesses"), group}));
        MDNode* newId = MDNode::getDistinct(ctx, ops);
        newId->replaceOperandWith(0, newId);
        loop->setLoopID(newId);
        changed = true;
    }
    if (!changed)
        return PreservedAnalyses::all();
    PreservedAnalyses pa;
    pa.preserveSet<CFGAnalyses>();
    return pa;
}

struct WorkItemLoopReport::State {
    struct Entry {
        std::string function, loop, verdict;
        std::vector<std::string> reasons;
    };
    std::vector<Entry> entries;
    std::vector<std::string> notes; ///< lines of their own, before the vectoriser's
    std::map<const Value*, size_t> byHeader;
    std::unique_ptr<DiagnosticHandler> previous;
};

namespace {

class RemarkHandler final : public DiagnosticHandler {
public:
    explicit RemarkHandler(WorkItemLoopReport::State& state) : m_state(state) {}

    bool isAnalysisRemarkEnabled(StringRef pass) const override { return pass == "loop-vectorize"; }
    bool isMissedOptRemarkEnabled(StringRef pass) const override {
        return pass == "loop-vectorize";
    }
    bool isPassedOptRemarkEnabled(StringRef pass) const override {
        return pass == "loop-vectorize";
    }
    bool isAnyRemarkEnabled() const override { return true; }

    bool handleDiagnostics(const DiagnosticInfo& di) override {
        auto* remark = dyn_cast<DiagnosticInfoIROptimization>(&di);
        if (!remark)
            return m_state.previous ? m_state.previous->handleDiagnostics(di) : false;
        if (remark->getPassName() != "loop-vectorize")
            return true;
        auto* header = dyn_cast_or_null<BasicBlock>(remark->getCodeRegion());
        if (!header || !isWorkItemHeader(*header))
            return true;
        auto [it, fresh] = m_state.byHeader.try_emplace(header, m_state.entries.size());
        if (fresh)
            m_state.entries.push_back(
                {header->getParent()->getName().str(), header->getName().str(), std::string(), {}});
        WorkItemLoopReport::State::Entry& e = m_state.entries[it->second];
        std::string msg = remark->getMsg();
        if (isa<OptimizationRemark>(remark)) {
            e.verdict = "vectorised (" + msg + ")";
        } else if (isa<OptimizationRemarkMissed>(remark)) {
            if (e.verdict.empty())
                e.verdict = "not vectorised";
        } else {
            // Analysis remarks carry the reason; "loop not vectorized: " is their prefix.
            StringRef m(msg);
            m.consume_front("loop not vectorized: ");
            if (!m.empty() && e.reasons.size() < 4)
                e.reasons.push_back(m.str());
        }
        return true;
    }

private:
    static bool isWorkItemHeader(const BasicBlock& header) {
        for (const BasicBlock* pred : predecessors(&header))
            if (hasMarker(pred->getTerminator()->getMetadata(LLVMContext::MD_loop)))
                return true;
        return false;
    }
    WorkItemLoopReport::State& m_state;
};

} // namespace

void WorkItemLoopReport::noteScalar(const BasicBlock* header, const std::string& why) {
    auto [it, fresh] = m_state->byHeader.try_emplace(header, m_state->entries.size());
    if (fresh)
        m_state->entries.push_back(
            {header->getParent()->getName().str(), header->getName().str(), std::string(), {}});
    m_state->entries[it->second].reasons.push_back(why);
}

void WorkItemLoopReport::note(const BasicBlock* header, const std::string& what) {
    m_state->notes.push_back(header->getParent()->getName().str() + ": work-item loop " +
                             header->getName().str() + ": " + what);
}

WorkItemLoopReport::WorkItemLoopReport(LLVMContext& ctx)
    : m_ctx(ctx), m_state(std::make_shared<State>()) {
    m_state->previous = ctx.getDiagnosticHandler();
    ctx.setDiagnosticHandler(std::make_unique<RemarkHandler>(*m_state));
}

WorkItemLoopReport::~WorkItemLoopReport() {
    m_ctx.setDiagnosticHandler(std::move(m_state->previous));
}

std::vector<std::string> WorkItemLoopReport::lines() const {
    std::vector<std::string> out = m_state->notes;
    for (const State::Entry& e : m_state->entries) {
        std::string line = e.function + ": work-item loop " + e.loop + ": ";
        if (e.verdict.rfind("vectorised", 0) == 0) {
            line += e.verdict;
        } else {
            line += "not vectorised, runs one work-item at a time";
            for (size_t i = 0; i < e.reasons.size(); ++i)
                line += (i ? "; " : ": ") + e.reasons[i];
        }
        out.push_back(std::move(line));
    }
    return out;
}

void logWorkItemLoops(const std::vector<std::string>& lines) {
    if (!cpuJitLogEnabled())
        return;
    const std::string prefix = kWorkGroupEntryPrefix;
    for (const std::string& l : lines) {
        // "__duet_wg_<kernel>[.<variant>]: ...": a whole program's report holds every kernel's.
        std::string kernel;
        if (l.rfind(prefix, 0) == 0)
            kernel = l.substr(prefix.size(), l.find_first_of(".:") - prefix.size());
        if (!kernel.empty())
            std::fprintf(stderr, "duet: cpu: kernel %s: %s\n", kernel.c_str(), l.c_str());
        else
            std::fprintf(stderr, "duet: cpu: %s\n", l.c_str());
    }
}

bool cpuJitLogEnabled() {
    static const bool on = [] {
        const char* v = std::getenv("DUET_LOG");
        return v && *v && std::string(v) != "0";
    }();
    return on;
}

} // namespace duet::rt::wg
