// The CPU builtin library: each build links the closure of its calls (compiler/library_closure).
#include "devices/cpu/jit/builtin_library.hpp"

#include "compiler/library_closure.hpp"
#include "compiler/llvm_util.hpp"
#include "core/environment.hpp"

namespace duet::rt::cpu {

std::string linkBuiltinLibrary(llvm::Module& m) {
    const bool shared = envSwitchOn("DUET_CPU_SHARED_BUILTINS") && sharedLibrariesEnabled();
    std::string error =
        linkLibraryClosure(m, cpuBuiltinLibraryBitcode(), "builtin library", shared);
    return error;
}

} // namespace duet::rt::cpu
