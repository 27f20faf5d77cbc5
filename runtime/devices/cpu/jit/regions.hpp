// Region formation for the work-group pass: uniformity, implicit loop barriers, region loops.
// Private to work_group.cpp and regions.cpp (LLVM headers); the scheme is in work_group.cpp.
#pragma once

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

#include <cstdint>
#include <string>
#include <vector>

namespace duet::rt::wg {

/// Placeholders for the local id and the local linear id, replaced in each region loop, and for
/// the active lanes of the work-item's sub-group (`active`, `i64 ()`: bit j for sub-group local
/// id j when that work-item entered the region through the same barrier; every lane where all
/// work-items run the region). `active` may read memory, so nothing moves it across a barrier.
struct Placeholders {
    llvm::Function* localId[3]{};
    llvm::Function* linear = nullptr;
    llvm::Function* active = nullptr;
};

/// Which values may differ between the work-items of a group ("varying"), and which blocks
/// only some work-items may reach (inside the influence region of a varying branch).
struct Uniformity {
    llvm::SmallPtrSet<const llvm::Value*, 32> varying;
    llvm::SmallPtrSet<const llvm::BasicBlock*, 32> divergent;
    bool isVarying(const llvm::Value* v) const {
        return llvm::isa<llvm::AllocaInst>(v) || varying.contains(v);
    }
};

/// A forward data-flow analysis from the work-item ids over the work-group function `w`
/// (`entry` is its prologue). Loads from global or local memory at a uniform address are
/// uniform (a work-item seeing another's unsynchronised store would be a data race); loads
/// from private memory, atomics and calls that touch memory are varying. A varying branch
/// makes the blocks up to its immediate post-dominator divergent, and the phis there and at
/// the join varying — unless each side of the branch (but the join) leads on all its paths to
/// a work-group barrier (`groupBarriers`): OpenCL requires every work-item of the group to take
/// such a branch the same way if any reaches the barrier (`if (row < rows) { ...; barrier(); reduce
/// }` in GPU code, with rows a multiple of the group), so it is uniform control, as the regions
/// already treat it (the barrier reached picks the next region), and the values under it keep
/// uniform slots.
Uniformity analyseUniformity(llvm::Function& w, llvm::BasicBlock* entry, const Placeholders& ph,
                             const llvm::SmallPtrSetImpl<llvm::BasicBlock*>& groupBarriers);

/// Vector phis whose lanes no use outside a loop observes (`float3 acc` widened to four lanes by
/// the front end: the fourth goes round the loop, `acc.w += s * d.w`, and nowhere else) keep
/// only the observed ones: each incoming value becomes a shuffle with the others poison, so
/// what computed them dies, instead of being computed per work-item and, where the phi lives
/// across a barrier, stored and loaded through per-work-item storage. Returns the number of
/// phis trimmed.
size_t dropUnusedPhiLanes(llvm::Function& w);

/// Whether `loop` gets implicit barriers (below): innermost, reached under uniform control, no
/// barrier inside, left only by uniform branches.
bool getsLoopBarriers(const llvm::Loop& loop, const Uniformity& u,
                      const llvm::SmallPtrSetImpl<llvm::BasicBlock*>& barrierSet);

/// Loops that get implicit barriers and whose body is one straight-line block (`for (j = 0; j <
/// n; ++j) { ... tile[j] ... }`: N-body's tile loop, a GEMM's inner product) unrolled `count`
/// times, with a remainder loop for the trip counts that are no multiple of it, before the
/// barriers go in. Each region loop over the work-items then runs `count` iterations per
/// work-item instead of one: values carried from one iteration to the next (the accumulators)
/// stay in registers across them instead of going through per-work-item storage each time, and
/// the region loop's own cost (its bounds, the vectoriser's checks, the storage addresses) is
/// paid once per `count` iterations. Bodies over kMaxUnrolledBody instructions are left alone.
/// Returns the number of loops unrolled. `u` must be computed again afterwards.
size_t unrollUniformLoops(llvm::Function& w, const Uniformity& u,
                          const std::vector<llvm::BasicBlock*>& barriers, unsigned count);

/// Implicit barriers around innermost loops that every work-item runs the same number of
/// times (reached and left under uniform control): on the entry edge, the back edges and the
/// exit edges, as new blocks appended to `barriers`. Each iteration then runs as a loop over
/// the work-items, which the loop vectoriser widens, instead of a scalar loop inside one
/// work-item's turn. Adding barriers where all work-items arrive together does not change what
/// a race-free kernel computes. Returns the number of barriers added.
size_t insertLoopBarriers(llvm::Function& w, const Uniformity& u,
                          std::vector<llvm::BasicBlock*>& barriers);

/// Puts the edge `from -> to` through a new empty block named `name`, which is returned (`to`'s
/// phis take it as their incoming block).
llvm::BasicBlock* splitEdgeBlock(llvm::BasicBlock* from, llvm::BasicBlock* to,
                                 const llvm::Twine& name);

/// Independent forward progress between sub-groups (cl_khr_subgroups): loops whose exit may wait
/// for another work-item (`while (atomic_load(&flag) != turn);`, a lock taken by exchange or
/// compare-exchange) count their iterations, and every kSpinYieldEvery-th back edge goes through
/// a yield point, a new block appended to `barriers` and to `yields`. The regions then become
/// resumable and the dispatcher takes turns between sub-groups (buildRegions), so a sub-group
/// spinning on another's store lets that one run; a loop that ends sooner never yields. A loop
/// qualifies when the condition of one of its exits depends, inside the loop, on the result of
/// an atomic load, read-modify-write or compare-exchange, or a volatile load (through SSA values,
/// private variables stored in the loop, and calls to functions holding such accesses), or on a
/// join of paths inside the loop while one of its branches does. A compare-exchange retry loop
/// qualifies too: which loops truly wait is not decidable. Returns the number of loops given
/// yield points.
size_t insertSpinYields(llvm::Function& w, std::vector<llvm::BasicBlock*>& barriers,
                        llvm::SmallPtrSetImpl<llvm::BasicBlock*>& yields);

/// Strided loops, `for (t = lid + a; t < n; t += s)` with a, n and s uniform (after the front
/// end's rotation: a guard `start < n`, a do-while on `t + s < n`), become loops every work-item
/// runs the same number of times: while `a + k s < n` (the iterations of local id 0, the most
/// of any work-item), each iteration's body guarded by the work-item's own `t < n`, header phis
/// carried through skipped iterations. The implicit loop barriers can then split them into
/// work-item loops (a loop whose trip count depends on the local id otherwise keeps each
/// work-item's turn scalar). Innermost loops without barriers only; `entry` is the prologue.
/// Assumes `a + lid` does not wrap (then local id 0 has the most iterations); the local ids are
/// below kCpuMaxWorkGroupSize, so only a start within that of the type's end could.
/// Returns the number of loops rewritten.
/// `groupBarriers`: the work-group ones among `barriers` (analyseUniformity).
size_t makeStridedLoopsUniform(llvm::Function& w, llvm::BasicBlock* entry, const Placeholders& ph,
                               const std::vector<llvm::BasicBlock*>& barriers,
                               const llvm::SmallPtrSetImpl<llvm::BasicBlock*>& groupBarriers);

/// Pointer inductions whose start differs between work-items and whose step is uniform
/// (`p = base + lid; do { ... p += 4 * lda; } while (...)` around barriers) become the start
/// plus a uniform byte offset: `p = start + off`, with `off` a phi of its own from 0. The offset
/// is then one uniform slot across barriers and `p` is computed again where a barrier separates
/// a use from it (like `start`, a function of the local ids), so the vectorised work-item loops
/// see consecutive addresses instead of a pointer per work-item reloaded from per-work-item
/// storage and used through gathers. New varying values are added to `u`. Returns the number
/// of inductions rewritten.
size_t splitPointerInductions(llvm::Function& w, Uniformity& u);

/// The group's shape as the prologue of the work-group function loaded it.
struct GroupShape {
    llvm::Value* localSize[3]{};
    llvm::Value* items = nullptr; ///< the product of localSize
    /// localSize[0] is the constant 1 (a variant specialised for groups of one work-item along
    /// x): no loop over x, and the loop over y is the work-item loop the vectoriser widens.
    bool singleX = false;
    llvm::Value* subGroupWidth = nullptr; ///< i32, WorkGroupContext::subGroupSize
    /// Checked kernels (DUET_KERNEL_CHECKS): the WorkGroupContext pointer. Each work-item then
    /// records the barrier it reached at the end of a region that may end at several, and the
    /// region's end calls the barrier-check hook (jit/guards.hpp): work-items of one group that
    /// part there broke the barrier rule. Null: no check, the code is as it was.
    llvm::Value* barrierCheckCtx = nullptr;
};

/// Turns the kernel body of `w` into region loops: `entry` is the prologue (per-work-item
/// storage is allocated there), `start` the kernel's first block, `exit` the block holding
/// only `ret void`, `barriers` one empty block per barrier. A region starts at `start` or at a
/// barrier and holds the blocks reachable from there without crossing another; each is cloned
/// into a loop nest over the local ids, values and private arrays live across a barrier move to
/// per-work-item storage (one slot, or two, for uniform values), and the original blocks are
/// erased. Sets `regionCount`; returns false and sets `error` on what it cannot handle.
///
/// `subGroupBarriers` (a subset of `barriers`) non-empty makes the regions resumable: some
/// work-items may wait at a barrier others never reach (a sub-group's, under a branch that is
/// uniform per sub-group only). Each work-item then keeps the region it resumes in, a region
/// loop runs only the work-items waiting there, every value live across a barrier gets one slot
/// per work-item, and a dispatcher picks the next region: one entered through a sub-group
/// barrier while any work-item waits at one (a sub-group proceeds alone), else the region the
/// others wait for (the group's barrier or the end).
///
/// `yields` (insertSpinYields' blocks, a subset of `subGroupBarriers`) non-empty: the dispatcher
/// works in rounds instead, choosing one region per sub-group: a yield point where any of its
/// work-items waits at one (its lanes still spinning run before its others go past the next
/// sub-group barrier), else the lowest sub-group barrier its work-items wait at. A round runs
/// each chosen region once, in order, for the sub-groups that chose it, so every sub-group that
/// is not waiting at the group's barrier takes a step each round; when none can, the group's
/// barrier (or the end) comes next for all.
bool buildRegions(llvm::Function& w, llvm::BasicBlock* entry, llvm::BasicBlock* start,
                  llvm::BasicBlock* exit, const std::vector<llvm::BasicBlock*>& barriers,
                  const llvm::SmallPtrSetImpl<llvm::BasicBlock*>& subGroupBarriers,
                  const llvm::SmallPtrSetImpl<llvm::BasicBlock*>& yields,
                  const Uniformity& uniformity, const Placeholders& ph, const GroupShape& group,
                  unsigned& regionCount, std::string& error);

} // namespace duet::rt::wg
