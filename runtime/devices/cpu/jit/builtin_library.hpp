// The CPU builtin library read once per process: each build links only the functions it calls.
#pragma once

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace duet::rt::cpu {

/// Links into `m` the builtin library's definitions that `m` calls, directly or through other
/// builtins (what `Linker::LinkOnlyNeeded` with the whole library would link). The library is
/// parsed once per process into a context of its own; each call copies the closure of `m`'s
/// declarations out of it as a small bitcode module and links that into `m`'s context, so a
/// build no longer parses the library's ~11,500 declarations. `DUET_CPU_SHARED_BUILTINS=0`
/// links the whole library lazily into each build instead (for comparisons).
/// Thread-safe. Returns the error for the build log, empty on success.
std::string linkBuiltinLibrary(llvm::Module& m);

} // namespace duet::rt::cpu
