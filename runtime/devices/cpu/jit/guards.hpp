// Run-time guards of CPU kernels (DUET_CPU_CHECKS, DUET_KERNEL_TIMEOUT): the hooks generated code
// calls and the per-thread state they use. No LLVM headers: the executor includes it.
#pragma once

#include "core/kernel_checks.hpp"
#include "devices/cpu/work_group_abi.hpp"

#include <atomic>
#include <csetjmp>
#include <cstdint>

namespace duet::rt::cpu {

/// Symbol names of the hooks below, as generated code calls them.
inline constexpr const char* kCheckFailHookName = "__duet_check_fail";
inline constexpr const char* kCancelledHookName = "__duet_cancelled";
inline constexpr const char* kDeferredFailHookName = "__duet_check_fail_deferred";
inline constexpr const char* kCheckScanHookName = "__duet_check_scan";
inline constexpr const char* kBarrierCheckHookName = "__duet_check_barriers";

/// What a work-item records at the end of a checked region (__duet_check_barriers): the
/// region it goes on to, or this for the end of the kernel.
inline constexpr uint32_t kReachedEnd = 0xffffffffu;

/// One check whose failure is deferred (jit/kernel_checks.cpp): generated code keeps a table of
/// them per kernel and records, per work-item, 1 + the index of its first failing one.
struct DeferredCheckSite {
    uint32_t id;   ///< the argument, or kCheckNullId
    uint32_t kind; ///< AccessKind
    uint64_t bytes;
};

// The access kinds and the fault record are every device's (core/kernel_checks.hpp).
using rt::AccessKind;
using rt::CheckFault;

/// One guarded launch. `cancel` is what generated code polls (WorkGroupContext::cancel):
/// non-zero stops every participant at its next check, loop back-edge or work-group.
struct LaunchGuard {
    std::atomic<uint8_t> cancel{0};
    std::atomic<bool> faulted{false};
    std::atomic<bool> timedOut{false};
    std::atomic<bool> abandoned{false}; ///< some work-group did not run to its end
    CheckFault fault;                   ///< written once, by whoever set `faulted` first
};

/// Runs `body(data)` with `guard` as the calling thread's launch guard: a failed check or a
/// cancellation inside returns false at once (generated code is left with longjmp; it holds no
/// resources). True when `body` returned normally. `body` must not own objects with
/// destructors in the frames the jump skips.
bool runGuarded(LaunchGuard& guard, void (*body)(void*), void* data);

} // namespace duet::rt::cpu

/// Generated code calls this when an access fails its bounds check: records the first fault of
/// the launch, cancels the launch and leaves the work-group (never returns).
extern "C" void __duet_check_fail(uint32_t id, uint32_t kind, uint64_t address, uint64_t low,
                                  uint64_t high, uint64_t bytes, const char* names, uint64_t gid0,
                                  uint64_t gid1, uint64_t gid2);
/// Generated code calls this when it sees the launch's cancel flag set: leaves the work-group
/// (never returns).
extern "C" void __duet_cancelled();
/// Generated code calls this where a work-item's deferred check failed (`code`: 1 + the site's
/// index): the argument's bounds from the work-group context, then as __duet_check_fail.
extern "C" void __duet_check_fail_deferred(const duet::rt::cpu::DeferredCheckSite* sites,
                                           const char* names, const duet::rt::WorkGroupContext* ctx,
                                           uint32_t code, uint64_t address, uint64_t gid0,
                                           uint64_t gid1, uint64_t gid2);
/// After a vectorised work-item loop in which some deferred check failed: the first of its `n`
/// work-items (in loop order) whose code is not 0 fails as __duet_check_fail_deferred. The
/// global ids of the loop's i-th work-item: `gidsD[i]` where the loop recorded them per
/// work-item, else `gidD + i * stepD`.
extern "C" void __duet_check_scan(const duet::rt::cpu::DeferredCheckSite* sites, const char* names,
                                  const duet::rt::WorkGroupContext* ctx, uint64_t n,
                                  const uint8_t* codes, const uint64_t* addresses,
                                  const uint64_t* gids0, const uint64_t* gids1,
                                  const uint64_t* gids2, uint64_t gid0, uint64_t gid1,
                                  uint64_t gid2, uint64_t step0, uint64_t step1, uint64_t step2);
/// Checked kernels, after a region that may end at several barriers (or the end): `reached`
/// holds, per work-item of the group (local linear id), the region it goes on to, kReachedEnd
/// for the end. All equal: returns. Else records a barrier divergence naming the group, its
/// work-item 0 and the first work-item that went elsewhere, and fails as __duet_check_fail.
extern "C" void __duet_check_barriers(const duet::rt::WorkGroupContext* ctx,
                                      const uint32_t* reached);
