// Bitcode libraries (builtins) read once per process: each build links only the functions it calls.
#pragma once

#include <string>
#include <string_view>

namespace llvm {
class Module;
} // namespace llvm

namespace duet::rt {

/// Links into `m` the definitions of the bitcode library `library` that `m` calls, directly or
/// through other functions of the library: what `Linker::LinkOnlyNeeded` with the whole library
/// links. The library is parsed once per process into a context of its own (keyed by the
/// address of its bytes, which must live as long as the process); each call copies the closure
/// of `m`'s declarations out of it as a small bitcode module, in the library's order and use-list
/// order, and links that into `m`'s context, so a build no longer reads the library's thousands
/// of declarations. `name` names the library in errors. `shared` false links the whole library
/// lazily into each build instead (for comparisons). Thread-safe. Returns the error for the build
/// log (one line, no newline), empty on success.
std::string linkLibraryClosure(llvm::Module& m, std::string_view library, const std::string& name,
                               bool shared);

/// False when `DUET_SHARED_BUILTINS=0` asks every device to link whole libraries (read at each
/// call).
bool sharedLibrariesEnabled();

} // namespace duet::rt
