// The work-group pass: turns OpenCL kernels into work-group functions (loops over work-items
// around barrier-free regions). Private to the CPU code generator: includes LLVM headers.
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>
#include <string>
#include <vector>

namespace duet::rt {

/// How a kernel's work-group function is named: this, then the kernel's name (and, for the
/// variants it chooses between, `.<variant>`).
inline constexpr const char* kWorkGroupEntryPrefix = "__duet_wg_";
/// The suffixes of the variants for narrow groups: groups under a vector without loop barriers
/// (`.serial`), groups of one work-item along x (`.lx1`). The general one is `.simd`.
inline constexpr const char* kSerialVariant = ".serial";
inline constexpr const char* kSingleXVariant = ".lx1";

/// How many iterations a loop that may wait for another work-item runs between yield points
/// (buildWorkGroupFunctions' `spinYields`, wg::insertSpinYields). A power of two.
inline constexpr uint32_t kSpinYieldEvery = 256;

/// What the pass learnt about one kernel.
struct WorkGroupKernelInfo {
    std::string name;      ///< the kernel's name
    std::string entryName; ///< its work-group function, `__duet_wg_<name>`
    bool hasBarrier = false;
    bool usesPrintf = false;
    bool observesGroups = true;      ///< KernelDesc::observesGroups
    uint64_t staticLocalMemSize = 0; ///< bytes of kernel-scope __local variables in ctx->localMem
    unsigned regions = 0;            ///< barrier-free regions (1 without barriers)
    /// Bytes of per-work-item storage (values and private arrays live across barriers) that
    /// the work-group function allocates on its caller's stack for each work-item of a group.
    uint64_t perItemBytes = 0;
    /// Loops that may wait for another work-item and yield at each iteration (spinYields).
    size_t spinLoops = 0;
};

/// Rewrites every kernel of `module` (spir_kernel functions, builtin library already linked)
/// into a WorkGroupFn `void __duet_wg_<name>(void* const* args, const WorkGroupContext* ctx)`:
/// work-item functions read the context, barriers split the kernel into regions that each run
/// as a loop over all work-items, values and private arrays live across a barrier move to
/// per-work-item storage, __local variables become offsets into ctx->localMem, printf calls
/// the host hook. The original kernels and the functions inlined into them are removed.
/// `loopBarriers`: also split at innermost loops with a uniform trip count, so that their
/// iterations run as vectorisable loops over the work-items (an optimisation).
/// `barrierChecks` (checked kernels): the end of each region that may go on to several barriers
/// checks that every work-item of the group goes to the same one (wg::GroupShape).
/// `spinYields`: independent forward progress between sub-groups (wg::insertSpinYields): loops
/// that may wait for another work-item yield at each iteration; false under -cl-no-subgroup-ifp.
/// Returns false and sets `error` on input it cannot handle (recursion, ...).
bool buildWorkGroupFunctions(llvm::Module& module, std::vector<WorkGroupKernelInfo>& kernels,
                             bool loopBarriers, bool barrierChecks, bool spinYields,
                             std::string& error);

/// Removes `convergent`, `optnone` and `noinline`, and turns the SPIR calling conventions into
/// the C one, on every function and call of `module` (none of them mean anything on the CPU).
void normaliseForCpu(llvm::Module& module);

} // namespace duet::rt
