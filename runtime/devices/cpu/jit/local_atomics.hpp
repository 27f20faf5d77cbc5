// Atomics on __local memory as plain memory operations, and the quick tier's inlining of the
// functions that hold atomics. Private to the CPU code generator: includes LLVM headers.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

namespace duet::rt::cpu {

/// Turns every atomic access of __local memory in `module` into plain memory operations:
/// atomicrmw becomes load, operation, store; cmpxchg load, compare, select, store; atomic loads
/// and stores lose their ordering (volatility and alias metadata stay). Sound on the CPU device
/// because a work-group runs on one OS thread from its first work-item to its last (barriers are
/// region boundaries of one work-group function, not thread switches; device-side children run
/// after their parent, with __local memory of their own) and its __local memory is a block of
/// that thread's that no other thread touches while the group runs: no other thread can observe
/// or interleave with a __local access, whatever its order or scope. The work-items of a group
/// take turns only at region boundaries, so each one's read-modify-write is whole.
///
/// That holds only where each work-item's operations are scalar: in a vectorised work-item loop
/// one instruction would do several work-items' read-modify-writes at once and merge them. So
/// this runs after the vectorisers (which leave loops with atomics alone), at the end of either
/// tier's optimisation, never before it. An access is __local when its pointer is an
/// addrspace(3) value, or reaches one through GEPs, casts, phis and selects (a generic pointer
/// cast from a __local one, once its function is inlined); anything else — __global, generic
/// pointers of unknown origin — keeps its locked instruction, whatever the scope it names.
/// Returns the number of accesses changed. DUET_CPU_PLAIN_LOCAL_ATOMICS=0 turns it off (for
/// comparisons: __local atomics keep their locked instructions).
unsigned plainLocalAtomics(llvm::Module& module);

/// Clears the volatile flag of every non-atomic load, store and memory intrinsic of __local
/// memory in `module` (pointer as plainLocalAtomics judges it). Sound for the reason plain
/// __local atomics are: a group's __local memory is a block of one thread's that nothing else
/// reads or writes while the group runs, so no observer can tell a volatile access from a plain
/// one; each work-item's own accesses keep their order (work-items interleave only at region
/// boundaries, or lane by lane in a vectorised loop, which OpenCL allows without a barrier).
/// Runs before the work-group functions are built, in both tiers: a volatile access keeps a
/// work-item loop from being vectorised or a divergent loop from being linearised
/// (`whyNotParallel`), and GPU code marks its __local reduction buffers volatile out of habit
/// (SHOC's CSR-vector SpMV ran one work-item at a time). __global, private and generic volatile
/// accesses keep the flag. Returns the number of accesses changed.
/// DUET_CPU_PLAIN_LOCAL_VOLATILE=0 turns it off (for comparisons).
unsigned plainLocalVolatiles(llvm::Module& module);

/// The quick tier's one inlining: every call of a small function that holds atomic instructions
/// and calls nothing (the builtin library's atomic_* and atom_* functions; then, in a second
/// round, a user function that only called those), so that the memory order and scope a kernel
/// passes as constants select one atomic instruction at compile time instead of a switch at
/// each call, and a __local pointer reaches the atomic as one (plainLocalAtomics). Without it
/// quick code spent more in the call and the order switch than in the atomic itself.
/// Returns the number of calls inlined. DUET_CPU_QUICK_INLINE_ATOMICS=0 turns it off (for
/// comparisons).
unsigned inlineAtomicCallees(llvm::Module& module);

/// What the three switches above add to the JIT memo's key.
std::string localAtomicsMemoKey();

} // namespace duet::rt::cpu
