// Checked kernels (DUET_CPU_CHECKS) and cancellable kernels (DUET_KERNEL_TIMEOUT) for the CPU
// device: the passes around the work-group pass. Private to the CPU code generator.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

namespace duet::rt {

/// Before the other two passes: inlines into every kernel each function it calls that takes a
/// pointer or may touch memory (`everything`: each function it calls), so that every access
/// sees the kernel argument or program variable its pointer derives from, and every loop is
/// the kernel's own.
void inlineForGuards(llvm::Module& module, bool everything);

/// Before the work-group pass, after inlineForGuards: puts a bounds check before each load, store,
/// atomic and memory intrinsic through a __global, __constant, __local or generic pointer. A check
/// compares the accessed bytes with the launch's bounds of the argument the pointer derives
/// from (WorkGroupContext::argBounds; through GEPs, casts, selects and phis), or with the
/// variable's own extent; one that fails calls the check-fail hook (jit/guards.hpp) with the
/// argument, the address, the work-item's global id and the kernel's names table (argument
/// names, then variable names, each ending in NUL). Accesses through private memory are not
/// checked. Returns build-log notes: kernels with accesses whose pointers come from elsewhere
/// (loaded from memory, made from integers), which stay unchecked.
std::string insertBoundsChecks(llvm::Module& module);

/// Before the work-group pass: every loop back-edge of every kernel polls the launch's cancel
/// flag (WorkGroupContext::cancel) and calls the cancelled hook when it is set.
void insertCancellationPoints(llvm::Module& module);

/// After the work-group pass, before lowerGuardPlaceholders: reports the deferred check
/// failures insertBoundsChecks left to the end of each work-item's region. In a work-item loop
/// the vectoriser may widen (innermost, no calls), each work-item's record goes to per-work-item
/// arrays and one flag; after the loop, a set flag calls the scan hook, which reports the first
/// failing work-item in loop order. Elsewhere a failed record calls the deferred-fail hook at
/// once.
void lowerDeferredChecks(llvm::Module& module);

/// After the work-group pass: the placeholders the two passes above left in the work-group
/// functions become reads of their WorkGroupContext.
void lowerGuardPlaceholders(llvm::Module& module);

} // namespace duet::rt
