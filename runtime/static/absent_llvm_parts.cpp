// Entry points of the LLVM parts the static-LLVM runtime (DUET_STATIC_LLVM) leaves out, answered
// by code that does nothing: Polly, and every target but X86, AMDGPU and NVPTX.
//
// Debian's LLVM lists Polly in llvm/Support/Extension.def, so clang's CodeGen (BackendUtil)
// registers Polly's plugin in each optimisation pipeline; its passes run only when asked for
// (-mllvm -polly), which Duet never does. lld's ELF driver initialises every target LLVM was
// built with (llvm::InitializeAllTargets and friends, for LTO), while Duet links only GCN code
// objects: the other targets need not register.
#include <llvm/Config/llvm-config.h>
#include <llvm/Passes/PassPlugin.h>

llvm::PassPluginLibraryInfo getPollyPluginInfo() {
    return {LLVM_PLUGIN_API_VERSION, "Polly (not linked)", LLVM_VERSION_STRING,
            [](llvm::PassBuilder&) {}};
}

#define DUET_ABSENT_TARGET(T)                                                                      \
    extern "C" void LLVMInitialize##T##TargetInfo() {}                                             \
    extern "C" void LLVMInitialize##T##Target() {}                                                 \
    extern "C" void LLVMInitialize##T##TargetMC() {}                                               \
    extern "C" void LLVMInitialize##T##AsmPrinter() {}                                             \
    extern "C" void LLVMInitialize##T##AsmParser() {}

// DUET_ABSENT_TARGET(Name) for each target in LLVM_TARGETS_TO_BUILD that the runtime does not
// link (written by runtime/CMakeLists.txt).
#include "absent_targets.inc"
