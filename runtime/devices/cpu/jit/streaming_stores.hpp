// Streaming (non-temporal) stores for kernels whose data does not fit in the caches.
// Private to the CPU code generator: includes LLVM headers.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

namespace duet::rt {

/// Adds `<entry>.streaming` to a module optimised already: a copy of the work-group function
/// `entry` whose vector stores to __global memory, and those of the functions it calls (its
/// `.simd` variant, copied as `<variant>.streaming` where it holds such stores; the
/// narrow-group `.lx1` and `.serial` variants keep plain stores),
/// are non-temporal stores, each guarded by a run-time check that its address is aligned to
/// the vector's size (the only form x86 stores non-temporally in one instruction; a misaligned
/// one stays a plain store). Non-temporal stores are weakly ordered: whoever runs the variant
/// fences (sfence) once after its last work-group, before it signals that the work is done —
/// not the function itself, since a fence per work-group waits for every group's lines to
/// reach memory and serialises the stream.
///
/// A store that misses the caches does not first read the line it overwrites: a kernel that
/// streams through buffers larger than the last-level cache moves a third less memory
/// (STREAM's triad: 3 arrays of traffic instead of 4). The variant is for such launches only;
/// when the data would have stayed in cache for the next kernel, plain stores are better.
///
/// A store to a buffer the kernel also reads (an in-place update) stays plain: its load has
/// already brought the line into the cache, and a non-temporal store to a cached line evicts it.
///
/// Returns false, leaving the module as it is, when the variant would not help or would be
/// wrong: no vector stores to __global memory the kernel does not read, a host other than x86-64,
/// or atomics and fences in the module (non-temporal stores are weakly ordered).
bool addStreamingVariant(llvm::Module& module, llvm::StringRef entry);

/// The name of `entry`'s streaming variant.
inline std::string streamingName(llvm::StringRef entry) {
    return entry.str() + ".streaming";
}

} // namespace duet::rt
