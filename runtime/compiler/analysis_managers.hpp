// The four analysis managers of LLVM's new pass manager, as every code generator sets them up.
// Private to the devices' code generators: includes LLVM's PassBuilder.
#pragma once

#include <llvm/Passes/PassBuilder.h>

namespace duet::rt {

/// Loop, function, CGSCC and module analysis managers. Register a custom analysis (a target
/// library info, say) on `function` first, then call registerWith: the PassBuilder's defaults
/// do not replace what is registered already.
struct AnalysisManagers {
    llvm::LoopAnalysisManager loop;
    llvm::FunctionAnalysisManager function;
    llvm::CGSCCAnalysisManager cgscc;
    llvm::ModuleAnalysisManager module;

    /// Registers `pb`'s analyses with all four and connects them through their proxies.
    void registerWith(llvm::PassBuilder& pb) {
        pb.registerModuleAnalyses(module);
        pb.registerCGSCCAnalyses(cgscc);
        pb.registerFunctionAnalyses(function);
        pb.registerLoopAnalyses(loop);
        pb.crossRegisterProxies(loop, function, cgscc, module);
    }
};

} // namespace duet::rt
