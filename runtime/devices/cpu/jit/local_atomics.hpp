// Atomics on __local memory, and on __global memory no other agent shares in a launch, as plain
// memory operations; the quick tier's inlining of the functions that hold atomics. Private to
// the CPU code generator: includes LLVM headers.
#pragma once

#include <llvm/ADT/SmallPtrSet.h>
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

/// Guards every __global read-modify-write, compare-exchange and seq_cst store of a work-group
/// function whose memory is only buffer arguments and program-scope variables with
/// `if (<all that memory unshared in this launch>) <plain memory operations> else <atomic>`,
/// the test reading a WorkGroupContext mask (bit i: argument i; the executor's decision, per
/// launch), then removes the library's scope markers. The executor sets bits only for a launch
/// that one thread runs from its first work-group to its last (the CPU device runs one launch
/// at a time, so no other work-item of this device runs meanwhile). Atomics of device scope or
/// narrower need be atomic only with respect to this device's work-items, so they read
/// `deviceOnlyMemory`, where every buffer and SVM argument has its bit. Atomics of the system's
/// scope (memory_scope_all_svm_devices and the 1.x functions, whose pointer went through the
/// library's `__duet_scope_all` marker) read `unsharedMemory`, where an argument has its bit
/// only when no other agent may touch it during the launch: not an SVM allocation with
/// CL_MEM_SVM_ATOMICS (the host and other devices may use atomics on it concurrently), nor a
/// buffer over one, nor a pointer outside any allocation (fine-grain system SVM); a buffer's
/// contents other agents see only at synchronisation points. In such a launch the memory order
/// and scope of those atomics order nothing observable, and each work-item's operation is whole
/// (work-items take turns only at region boundaries, as in plainLocalAtomics, and this too runs
/// after the vectorisers). Internal functions only work-group functions call (the optimised
/// tier's variants, their buffers and context promoted to parameters) are guarded too, a
/// parameter followed to what each call passes. Pointers of other origins (loaded from memory,
/// another function's parameters) keep the locked instruction. Returns the number of instructions
/// guarded. DUET_CPU_PLAIN_UNSHARED_ATOMICS=0 turns it off (comparisons: __global atomics stay
/// locked in every launch).
unsigned plainUnsharedAtomics(llvm::Module& module);

/// plainLocalAtomics, then plainUnsharedAtomics: the end of either tier's optimisation, after
/// the vectorisers, never before them (both say why). Returns the instructions changed.
unsigned plainAtomics(llvm::Module& module);

/// Whether `name` is the builtin library's marker of system-scope atomics (`__duet_scope_all`,
/// builtins/cpu/atomics_as.cl): declared, never defined; plainUnsharedAtomics removes its calls.
bool isScopeMarkerName(llvm::StringRef name);

/// The one inlining before the optimised tier's (inlineAtomicsEarly runs it on the whole
/// program before the work-group pass; quickOptimise again on a kernel's part, which then finds
/// only what the per-module budget left): every call of a small function that holds atomic
/// instructions and calls nothing (the builtin library's atomic_* and atom_* functions; then, in a
/// second round, a user function that only called those), so that the memory order and scope a
/// kernel passes as constants select one atomic instruction at compile time instead of a switch at
/// each call, and a __local pointer reaches the atomic as one (plainLocalAtomics). Without it
/// quick code spent more in the call and the order switch than in the atomic itself.
/// Returns the number of calls inlined, and adds the functions that received them to `callers`
/// when given. DUET_CPU_QUICK_INLINE_ATOMICS=0 turns it off (for comparisons).
unsigned inlineAtomicCallees(llvm::Module& module,
                             llvm::SmallPtrSetImpl<llvm::Function*>* callers = nullptr);

/// inlineAtomicCallees before the work-group pass, then the private variables of the functions
/// that received the atomics promoted to SSA values: a compare-exchange's `expected` is then a
/// value, not a variable whose address the call took. Where a barrier or a spin loop's yield
/// point splits the kernel into regions, such a variable used on both sides became one copy per
/// work-item in memory, read and written at every iteration of a retry loop (twice as slow in
/// both tiers); as a value it is stored for the next region only where it crosses. Returns the
/// number of functions that received atomics.
unsigned inlineAtomicsEarly(llvm::Module& module);

/// What the four switches above add to the JIT memo's key.
std::string localAtomicsMemoKey();

} // namespace duet::rt::cpu
