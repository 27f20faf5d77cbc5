// The CPU builtin library read once per process: each build links only the functions it calls.
#pragma once

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace duet::rt::cpu {

/// Links into `m` the builtin library's definitions that `m` calls, directly or through other
/// builtins (what `Linker::LinkOnlyNeeded` with the whole library would link), through
/// compiler/library_closure: the library is parsed once per process, and a build no longer
/// parses its ~11,500 declarations. `DUET_CPU_SHARED_BUILTINS=0` (or `DUET_SHARED_BUILTINS=0`)
/// links the whole library lazily into each build instead (for comparisons; read at each call).
/// Thread-safe. Returns the error for the build log, empty on success.
std::string linkBuiltinLibrary(llvm::Module& m);

/// What `m` still calls that nothing defines once the library is linked (an OpenCL builtin the
/// library lacks, a user's function without a body, a host function such as `system`), as a
/// build-log report; empty when everything resolves: the runtime's hooks, the maths libraries
/// (libm, libmvec), the memory intrinsics' libc functions and the compiler's helpers.
std::string unresolvedFunctions(llvm::Module& m);

} // namespace duet::rt::cpu
