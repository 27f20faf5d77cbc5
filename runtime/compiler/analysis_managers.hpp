// The four analysis managers of LLVM's new pass manager, as every code generator sets them up.
// Private to the devices' code generators: includes LLVM's PassBuilder.
#pragma once

#include "core/environment.hpp"

#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>

#include <memory>

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

    /// The pass instrumentation to build the PassBuilder with (before registerWith): with
    /// DUET_VERIFY_EACH_PASS=1 in the environment, the IR is verified after every pass, and a
    /// pass that leaves it broken stops the process naming itself (a switch for tests and for
    /// debugging the code generators' own passes); null otherwise, no instrumentation.
    llvm::PassInstrumentationCallbacks* instrumentation(llvm::LLVMContext& ctx) {
        if (!envSwitchSet("DUET_VERIFY_EACH_PASS"))
            return nullptr;
        callbacks = std::make_unique<llvm::PassInstrumentationCallbacks>();
        standard = std::make_unique<llvm::StandardInstrumentations>(ctx, false, true);
        standard->registerCallbacks(*callbacks, &module);
        return callbacks.get();
    }

private:
    std::unique_ptr<llvm::PassInstrumentationCallbacks> callbacks;
    std::unique_ptr<llvm::StandardInstrumentations> standard; // destroyed first
};

} // namespace duet::rt
