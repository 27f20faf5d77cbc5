// The quick tier's optimisation: a few function passes around the atomics' inlining.
#include "devices/cpu/jit/quick_tier.hpp"

#include "compiler/analysis_managers.hpp"
#include "devices/cpu/jit/libmvec.hpp"
#include "devices/cpu/jit/local_atomics.hpp"
#include "devices/cpu/jit/rsqrt_estimates.hpp"

#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>

namespace duet::rt::cpu {

using namespace llvm;

void quickOptimise(Module& m, TargetMachine& tm, bool unsafeMath) {
    inlineAtomicCallees(m);
    AnalysisManagers am;
    PassBuilder pb(&tm, {}, std::nullopt, am.instrumentation(m.getContext()));
    am.registerWith(pb);
    FunctionPassManager fpm;
    fpm.addPass(SROAPass(SROAOptions::ModifyCFG));
    fpm.addPass(EarlyCSEPass());
    fpm.addPass(SimplifyCFGPass());
    ModulePassManager mpm;
    mpm.addPass(createModuleToFunctionPassAdaptor(std::move(fpm)));
    mpm.addPass(GlobalDCEPass());
    mpm.run(m, am.module);
    sameLibmvecVariant(m, libmvecTarget(tm, m), unsafeMath);
    plainAtomics(m);
    rsqrtEstimates(m, tm.getTargetCPU().str(), tm.getTargetFeatureString().str());
}

} // namespace duet::rt::cpu
