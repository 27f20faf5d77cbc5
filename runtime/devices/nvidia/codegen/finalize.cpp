// finalizeForNvidia: nvptx64 bitcode -> Duet's NVIDIA builtins and libclc linked (lazily) ->
// generic-pointer builtins, printf, the kernel ABI -> O3 with the NVPTX target machine -> PTX
// text with Duet's header; -save-temps writes each kernel's .ll and the module's .ptx. Also the
// NVIDIA program binaries (loadNvidiaBinary) and the Toolchain.
#include "core/data_files.hpp"
#include "core/program_cache.hpp"
#include "compiler/binary.hpp"
#include "compiler/bounds_checks.hpp"
#include "compiler/analysis_managers.hpp"
#include "compiler/llvm_util.hpp"
#include "compiler/options.hpp"
#include "compiler/save_temps.hpp"
#include "devices/nvidia/codegen/nvidia_toolchain.hpp"
#include "devices/nvidia/codegen/passes.hpp"

#include <llvm/ADT/SCCIterator.h>
#include <llvm/Analysis/CallGraph.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
extern const unsigned char duet_nvidia_builtins_bc[];
extern const unsigned char duet_nvidia_builtins_bc_end[];
}

#ifndef DUET_NVPTX_LIBCLC
#define DUET_NVPTX_LIBCLC "/usr/lib/clc/nvptx64--nvidiacl.bc"
#endif

namespace duet::rt {

struct NvidiaExecutableBuilder {
    static std::shared_ptr<NvidiaExecutable> make(std::vector<KernelDesc> descs,
                                                  nvidia::PtxModule module, std::string ptx,
                                                  size_t globalBytes, std::string& error);
    static void setBinary(NvidiaExecutable& exe, std::string binary) {
        exe.m_binary = std::move(binary);
    }
};

void* NvidiaExecutable::entry(size_t index) const {
    return index < m_module.kernels.size()
               ? const_cast<nvidia::KernelEntry*>(&m_module.kernels[index])
               : nullptr;
}

namespace {

using namespace llvm;

constexpr const char* kTriple = "nvptx64-nvidia-cuda";
constexpr const char* kDefaultSm = "sm_90";
std::string_view additionsBitcode() {
    const auto* begin = reinterpret_cast<const char*>(duet_nvidia_builtins_bc);
    const auto* end = reinterpret_cast<const char*>(duet_nvidia_builtins_bc_end);
    return std::string_view(begin, size_t(end - begin));
}

/// "+ptx80" in a feature string -> 80; 0 when none.
unsigned ptxOfFeatures(std::string_view features) {
    size_t at = features.find("+ptx");
    if (at == std::string_view::npos)
        return 0;
    unsigned v = 0;
    const char* begin = features.data() + at + 4;
    std::from_chars(begin, features.data() + features.size(), v);
    return v;
}

std::string featuresOf(const TargetSpec& target) {
    return target.cpuFeatures.empty() ? "+ptx" + std::to_string(kPreferredPtx) : target.cpuFeatures;
}

/// Declarations nothing defines, reported at build time.
std::string unresolvedFunctions(Module& m) {
    return undefinedSymbolReport(m, "the NVIDIA device", [](StringRef name, std::string&) {
        // applyKernelAbi replaces the one, addTextureVariants reads and deletes the other
        return name == nvptx::kLaunchBlockAccessor || name == nvptx::kSoftwareReadMark ||
               name == nvptx::kSrgbQuery || name == nvptx::kTexturesOnly;
    });
}

void optimise(Module& m, TargetMachine& tm, unsigned optLevel) {
    AnalysisManagers am;
    PassBuilder pb(&tm, {}, std::nullopt, am.instrumentation(m.getContext()));
    nvptx::registerLoopUnrolling(pb);
    am.registerWith(pb);
    ModulePassManager mpm =
        optLevel == 0 ? pb.buildO0DefaultPipeline(OptimizationLevel::O0)
                      : pb.buildPerModuleDefaultPipeline(optLevel == 1 ? OptimizationLevel::O1
                                                                       : OptimizationLevel::O3);
    mpm.run(m, am.module);
}

/// The functions that still call themselves, directly or through others, once optimised: an
/// error. OpenCL C forbids recursion (section 6.11), and PTX for it would need a call stack
/// whose size ptxas cannot determine.
std::string recursiveFunctions(Module& m) {
    CallGraph graph(m);
    std::string out;
    for (scc_iterator<CallGraph*> it = scc_begin(&graph); !it.isAtEnd(); ++it) {
        if (!it.hasCycle())
            continue;
        for (const CallGraphNode* node : *it)
            if (const Function* f = node->getFunction(); f && !f->isDeclaration())
                out += "error: function '" + demangle(f->getName().str()) +
                       "' is recursive: OpenCL C does not allow recursion (section 6.11)\n";
    }
    return out;
}

/// The build options as the code generator reads them (compile or link options); what it
/// cannot read becomes a warning in `log`.
BuildOptions codegenOptions(std::string_view options, std::string& log) {
    ParsedOptions parsed = parseBuildOptions(effectiveBuildOptions(options), OptionsKind::Compile);
    if (!parsed.ok)
        parsed = parseBuildOptions(effectiveBuildOptions(options), OptionsKind::Link);
    if (parsed.ok)
        return parsed.options;
    log += "warning: code generator ignores the options: " + parsed.error + "\n";
    return {};
}

/// Debug information the NVPTX asm printer can write: LLVM 19's DWARF writer crashes (SIGSEGV in
/// constructCallSiteEntryDIEs: NVPTX's calls have no label after them) on a function whose
/// subprogram says all its calls are described, as clang's DWARF 5 -O -g output does. The
/// front end asks for DWARF 2 (withNvidiaFrontEnd), which has none; bitcode made otherwise (a
/// program binary) loses its debug information instead, with a warning in `log`.
void callSiteEntriesOrNoDebugInfo(Module& m, std::string& log) {
    for (const Function& f : m)
        if (const DISubprogram* sp = f.getSubprogram(); sp && sp->areAllCallsDescribed()) {
            StripDebugInfo(m);
            log += "warning: debug information dropped: the program asks for DWARF call-site "
                   "entries, which the NVIDIA code generator cannot write\n";
            return;
        }
}

/// Duet's additions first (they replace libclc's work-item functions and atomics), then
/// libclc, each lazily; then the generic-pointer builtins no library has.
bool linkBuiltins(Module& m, std::string& error) {
    std::string_view additions = additionsBitcode();
    if (!linkLazily(
            m,
            MemoryBufferRef(StringRef(additions.data(), additions.size()), "duet-nvidia-builtins"),
            "the NVIDIA builtin additions", error))
        return false;
    const MemoryBuffer* clc = libraryBitcode("clc/nvptx64--nvidiacl.bc", DUET_NVPTX_LIBCLC, error);
    if (!clc) {
        error = "error: " + error + "\n";
        return false;
    }
    if (!linkLazily(m, clc->getMemBufferRef(), "libclc", error))
        return false;
    // Images are plain memory, as on GCN: an image argument is the address of its descriptor
    // (a global pointer in nvptx's address space 1), a sampler its CLK_* bits (a pointer in
    // space 4, which constantPointersToGeneric retypes as generic without changing the value).
    defineImageAccessors(m);
    nvptx::defineGenericAddressBuiltins(m);
    return true;
}

/// Drops what LLVM 19's NVPTX backend keeps about `m` beyond the module's life, leaving `m`
/// empty; for a module that went through the NVPTX target's passes and will not be printed.
///
/// The backend caches each global's nvvm.annotations ("kernel", "maxntidx", ...) in one
/// process-wide map keyed by the addresses of the Module and of the global
/// (NVPTXUtilities.cpp), filled by whatever asks, the passes of any optimisation pipeline built
/// with the NVPTX target machine included (clang's in the front end, ours), and emptied only by
/// the NVPTX asm printer's doFinalization (clearAnnotationCache, which libLLVM does not
/// export). A module destroyed before printing leaves its entries behind; a later module
/// allocated at its address inherits them, and a function of it that takes the memory of a
/// dead kernel is a kernel to the backend: an .entry that stores a return value ("Unknown
/// symbol 'func_retval0'"), called like a function ("Illegal call target"), which ptxas and
/// the driver's JIT reject; or a kernel in the memory of a dead function is no .entry. Which
/// build it hits depends on what malloc reused. So the asm printer runs over `m` once emptied
/// (about a millisecond): its doFinalization drops the entries.
void releaseNvptxModule(Module& m, TargetMachine& tm) {
    m.dropAllReferences();
    while (!m.ifunc_empty())
        m.ifunc_begin()->eraseFromParent();
    while (!m.alias_empty())
        m.alias_begin()->eraseFromParent();
    while (!m.empty())
        m.begin()->eraseFromParent();
    while (!m.global_empty())
        m.global_begin()->eraseFromParent();
    while (!m.named_metadata_empty())
        m.eraseNamedMetadata(&*m.named_metadata_begin());
    m.setDataLayout(tm.createDataLayout());
    raw_null_ostream discard;
    legacy::PassManager pm;
    if (!tm.addPassesToEmitFile(pm, discard, nullptr, CodeGenFileType::AssemblyFile))
        pm.run(m);
}

/// The NVPTX target machine for `sm` with `features`; null with the reason in `error`.
std::unique_ptr<TargetMachine> makeTargetMachine(const std::string& sm, const std::string& features,
                                                 const TargetOptions& options,
                                                 CodeGenOptLevel level, std::string& error) {
    const Target* t = TargetRegistry::lookupTarget(kTriple, error);
    if (!t) {
        error = "no NVPTX code generator: " + error;
        return nullptr;
    }
    std::unique_ptr<TargetMachine> tm(
        t->createTargetMachine(kTriple, sm, features, options, std::nullopt, std::nullopt, level));
    if (!tm)
        error = "cannot create the NVPTX target machine for " + sm;
    return tm;
}

/// TargetSpec::releaseModule of the NVIDIA front end: clang's pipeline ran the NVPTX target's
/// passes over the module (initialiseNvptxTarget registered it), which then never reaches
/// the asm printer.
void releaseFrontEndModule(Module& m, const TargetSpec& target) {
    std::string error;
    std::unique_ptr<TargetMachine> tm =
        makeTargetMachine(target.cpuName.empty() ? kDefaultSm : target.cpuName, featuresOf(target),
                          TargetOptions(), CodeGenOptLevel::None, error);
    if (tm)
        releaseNvptxModule(m, *tm);
}

/// Bytes of the module's program-scope __global variables.
uint64_t globalVariableBytes(const Module& m) {
    uint64_t bytes = 0;
    for (const GlobalVariable& g : m.globals())
        if (!g.isDeclaration() && g.getAddressSpace() == 1)
            bytes += m.getDataLayout().getTypeAllocSize(g.getValueType());
    return bytes;
}

/// PTX names cannot hold '.': the backend renames such symbols ("reduce.part" ->
/// "reduce_$_part") but its DWARF (-g) still names the original, which ptxas rejects. Renames
/// them the same way first, so both agree.
void renameForPtx(Module& m) {
    for (GlobalValue& g : m.global_values())
        if (g.hasLocalLinkage() && g.getName().contains('.') && !g.getName().starts_with("llvm.")) {
            std::string name;
            for (char ch : g.getName())
                name += ch == '.' ? std::string("_$_") : std::string(1, ch);
            g.setName(name);
        }
}

/// DUET_KERNEL_TIMEOUT in microseconds as the PTX header records it (0: none).
uint64_t timeoutMicroseconds(const ExecutionGuards& guards) {
    return guards.timeoutSeconds > 0
               ? std::max<uint64_t>(1, uint64_t(guards.timeoutSeconds * 1e6 + 0.5))
               : 0;
}

/// Guarded builds, before the kernel ABI: every function a kernel calls inlined into it (each
/// that takes a pointer or touches memory; with a timeout every one, so that every loop can
/// reach the launch's guard record), then the bounds checks (kernel_checks.cpp).
std::string guardKernels(Module& m, const nvidia::PtxModule& module,
                         std::map<std::string, std::vector<std::string>>& checkNames,
                         std::string& log) {
    if (!module.guarded())
        return {};
    if (std::string cycle = recursiveFunctions(m); !cycle.empty())
        return cycle;
    std::vector<Function*> kernels;
    for (Function& f : m)
        if (nvptx::isKernel(f))
            kernels.push_back(&f);
    inlineForGuards(kernels, module.timeoutMicroseconds != 0);
    if (module.boundsChecks)
        log += nvptx::insertKernelChecks(m, checkNames);
    return {};
}

} // namespace

std::shared_ptr<NvidiaExecutable> NvidiaExecutableBuilder::make(std::vector<KernelDesc> descs,
                                                                nvidia::PtxModule module,
                                                                std::string ptx, size_t globalBytes,
                                                                std::string& error) {
    // module.kernels in the order of descs (describeKernels' order), one for one.
    std::vector<nvidia::KernelEntry> ordered;
    for (const KernelDesc& d : descs) {
        auto it = std::find_if(module.kernels.begin(), module.kernels.end(),
                               [&](const nvidia::KernelEntry& e) { return e.name == d.name; });
        if (it == module.kernels.end()) {
            error = "kernel " + d.name + " is missing from the PTX module";
            return nullptr;
        }
        const size_t hidden = module.guarded() ? 2 : 1; // the launch block, the guard record
        if (it->params != d.args.size() + hidden) {
            error = "kernel " + d.name + " has " + std::to_string(d.args.size()) +
                    " arguments but " + std::to_string(it->params) + " PTX parameters (expected " +
                    std::to_string(d.args.size() + hidden) + ")";
            return nullptr;
        }
        for (uint32_t a : it->localArgs)
            if (d.args[a].kind != KernelArgKind::LocalBuffer) {
                error = "kernel " + d.name + ": PTX parameter " + std::to_string(a) +
                        " is a __local offset but the argument is not a __local pointer";
                return nullptr;
            }
        ordered.push_back(*it);
    }
    if (ordered.size() != module.kernels.size()) {
        error = "the PTX module has kernels the program does not declare";
        return nullptr;
    }
    module.kernels = std::move(ordered);
    auto exe = std::make_shared<NvidiaExecutable>();
    exe->m_kernels = std::move(descs);
    for (size_t i = 0; i < exe->m_kernels.size(); ++i) {
        exe->m_kernels[i].staticLocalMemSize = module.kernels[i].localVariableBytes;
        exe->m_kernels[i].usesPrintf = module.kernels[i].usesPrintf;
    }
    exe->m_module = std::move(module);
    exe->m_ptx = std::move(ptx);
    exe->m_globalBytes = globalBytes;
    return exe;
}

void initialiseNvptxTarget() {
    static std::once_flag once;
    std::call_once(once, [] {
        LLVMInitializeNVPTXTargetInfo();
        LLVMInitializeNVPTXTarget();
        LLVMInitializeNVPTXTargetMC();
        LLVMInitializeNVPTXAsmPrinter();
    });
}

namespace {
/// Under DUET_LOG, where a code generation's time goes, printed when it ends.
struct PhaseLog {
    using Clock = std::chrono::steady_clock;
    bool on = program_cache::logEnabled();
    Clock::time_point last = Clock::now();
    std::string text;
    void mark(const char* phase) {
        if (!on)
            return;
        const Clock::time_point now = Clock::now();
        char b[64];
        std::snprintf(b, sizeof b, "%s%s %.1f", text.empty() ? "" : ", ", phase,
                      std::chrono::duration<double, std::milli>(now - last).count());
        text += b;
        last = now;
    }
    ~PhaseLog() {
        if (on && !text.empty())
            std::fprintf(stderr, "duet: NVIDIA code generation, ms: %s\n", text.c_str());
    }
};
} // namespace

FinalizeResult finalizeForNvidia(const std::string& bitcode, std::string_view options,
                                 std::string_view source, const TargetSpec& target) {
    initialiseNvptxTarget();
    PhaseLog phases;
    std::string log;
    const BuildOptions opts = codegenOptions(options, log);
    const std::string sm = target.cpuName.empty() ? kDefaultSm : target.cpuName;
    const std::string features = featuresOf(target);

    LLVMContext ctx;
    std::shared_ptr<std::string> diagnosticsLog = collectDiagnostics(ctx);
    const std::string& diagnostics = *diagnosticsLog;

    std::string error;
    std::unique_ptr<Module> m = parseBitcode(bitcode, ctx, &error);
    if (!m)
        return FinalizeResult::failure(log + "error: invalid program bitcode: " + error);
    if (!StringRef(m->getTargetTriple()).starts_with("nvptx64"))
        return FinalizeResult::failure(log + "error: the program was compiled for '" +
                                       m->getTargetTriple() +
                                       "', not for the NVIDIA device (nvptx64)");
    callSiteEntriesOrNoDebugInfo(*m, log);
    std::vector<KernelDesc> descs = describeKernels(bitcode);
    phases.mark("read");

    if (!linkBuiltins(*m, error))
        return FinalizeResult::failure(log + diagnostics + error);
    phases.mark("builtins");
    nvptx::relaxFloatSqrt(*m);

    // Which kernels print, before printf calls become stores.
    std::set<std::string> printing;
    if (Function* printf = m->getFunction("printf"))
        for (Function& f : *m)
            if (nvptx::isKernel(f) && reachableFrom(f).count(printf))
                printing.insert(f.getName().str());
    nvidia::PtxModule module;
    module.target = sm;
    module.ptxVersion = ptxOfFeatures(features);
    if (std::string errors = nvptx::lowerPrintf(*m, module.printf); !errors.empty())
        return FinalizeResult::failure(log + errors);
    if (std::string missing = unresolvedFunctions(*m); !missing.empty())
        return FinalizeResult::failure(log + missing);
    nvptx::constantPointersToGeneric(*m);

    // One target for every function (libclc's and the additions' carry clang's defaults).
    for (Function& f : *m) {
        if (f.isDeclaration())
            continue;
        f.removeFnAttr("target-cpu");
        f.removeFnAttr("target-features");
        f.addFnAttr("target-cpu", sm);
        f.addFnAttr("target-features", features);
    }
    applyFastMath(*m, opts);
    if (std::string errors = nvptx::legalizeForNvptx(*m); !errors.empty())
        return FinalizeResult::failure(log + errors);
    // DUET_KERNEL_CHECKS and DUET_KERNEL_TIMEOUT, read per build as on the other devices; the
    // PTX header records them.
    const ExecutionGuards guards = executionGuardsFromEnvironment(log);
    module.boundsChecks = guards.boundsChecks;
    module.timeoutMicroseconds = timeoutMicroseconds(guards);
    std::map<std::string, std::vector<std::string>> checkNames;
    if (std::string errors = guardKernels(*m, module, checkNames, log); !errors.empty())
        return FinalizeResult::failure(log + errors);
    if (std::string errors = nvptx::applyKernelAbi(*m, module.kernels, module.guarded());
        !errors.empty())
        return FinalizeResult::failure(log + errors);
    for (nvidia::KernelEntry& k : module.kernels) {
        k.usesPrintf = printing.count(k.name) != 0;
        k.checkNames = std::move(checkNames[k.name]);
    }

    std::string verifyLog;
    raw_string_ostream vos(verifyLog);
    if (verifyModule(*m, &vos))
        return FinalizeResult::failure(
            log + "error: internal: the linked module does not verify:\n" + vos.str());

    TargetOptions to;
    if (opts.effectiveMadEnable())
        to.AllowFPOpFusion = FPOpFusion::Fast;
    const unsigned optLevel = opts.effectiveOptLevel() == 0   ? 0
                              : opts.effectiveOptLevel() == 1 ? 1
                                                              : 3;
    std::unique_ptr<TargetMachine> tm = makeTargetMachine(
        sm, features, to, optLevel == 0 ? CodeGenOptLevel::None : CodeGenOptLevel::Aggressive,
        error);
    if (!tm)
        return FinalizeResult::failure(log + "error: " + error);
    // From the optimiser on, the NVPTX passes cache the module's annotations: the asm printer
    // (which drops them) sees the module before it goes, on the returns that skip the PTX too.
    struct Release {
        Module& m;
        TargetMachine& tm;
        bool printed = false;
        ~Release() {
            if (!printed)
                releaseNvptxModule(m, tm);
        }
    } release{*m, *tm};
    m->setTargetTriple(kTriple);
    m->setDataLayout(tm->createDataLayout());

    phases.mark("lowering");
    optimise(*m, *tm, optLevel);
    phases.mark("optimisation");
    if (!diagnostics.empty())
        return FinalizeResult::failure(log + diagnostics);
    // The optimiser may have made what the backend cannot select (or kept what it could not
    // remove): a second pass, and nothing goes to the backend that would abort there.
    if (std::string errors = nvptx::legalizeForNvptx(*m); !errors.empty())
        return FinalizeResult::failure(log + errors);
    if (std::string cycle = recursiveFunctions(*m); !cycle.empty())
        return FinalizeResult::failure(log + cycle);
    nvptx::relaxFloatDivision(*m);
    nvptx::widenVec3Initializers(*m);
    // DUET_KERNEL_TIMEOUT: loops poll the GPU's timer (kernel_timeout.cpp).
    if (module.timeoutMicroseconds) {
        unsigned missed = 0;
        const unsigned loops =
            nvptx::insertTimeoutPolls(*m, module.timeoutMicroseconds * 1000, missed);
        log +=
            "note: DUET_KERNEL_TIMEOUT: " + std::to_string(loops) + " loops poll the GPU timer\n";
        if (missed)
            log += "note: DUET_KERNEL_TIMEOUT: " + std::to_string(missed) +
                   " loops of functions not inlined into a kernel do not poll\n";
    }

    // Kernel-scope __local variables into dynamic shared memory (local_memory.cpp says why),
    // after optimisation: until here they are distinct objects to alias analysis.
    if (std::string errors = nvptx::lowerLocalVariables(*m, module.kernels); !errors.empty())
        return FinalizeResult::failure(log + errors);
    if (std::string errors = nvptx::addTextureVariants(*m, module.kernels); !errors.empty())
        return FinalizeResult::failure(log + errors);
    nvptx::removeSoftwareReadMarks(*m);
    module.globalBytes = globalVariableBytes(*m);
    renameForPtx(*m);
    // -save-temps: per kernel, the optimised IR it reaches; the module's PTX below.
    std::string tempPrefix;
    if (opts.saveTemps) {
        tempPrefix = saveTempsPrefix(opts, sm);
        for (const nvidia::KernelEntry& k : module.kernels)
            if (const Function* f = m->getFunction(k.name)) {
                std::unique_ptr<Module> part = cloneReachable(*m, *f);
                log += writeTempFile(tempPrefix + "_" + k.name + ".ll",
                                     [&](raw_pwrite_stream& ll) { part->print(ll, nullptr); });
            }
    }

    SmallVector<char, 0> text;
    {
        raw_svector_ostream os(text);
        legacy::PassManager pm;
        if (tm->addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::AssemblyFile))
            return FinalizeResult::failure(log + "error: the NVPTX backend cannot emit PTX");
        pm.run(*m);
        release.printed = true;
    }
    phases.mark("PTX");
    if (!diagnostics.empty())
        return FinalizeResult::failure(log + diagnostics);
    std::string ptx = nvidia::ptxHeader(module) + std::string(text.data(), text.size());
    if (opts.saveTemps)
        log += writeTempFile(tempPrefix + ".ptx", [&](raw_pwrite_stream& os) { os << ptx; });

    // What the header says must be what the PTX says.
    nvidia::ReadPtxResult check = nvidia::readPtxModule(ptx);
    if (!check.error.empty() || check.module.target != sm)
        return FinalizeResult::failure(
            log + "error: internal: the PTX module does not read back: " +
            (check.error.empty() ? "target " + check.module.target : check.error));
    module.ptxVersion = check.module.ptxVersion;

    std::string exeError;
    const size_t globalBytes = size_t(module.globalBytes);
    std::shared_ptr<NvidiaExecutable> exe = NvidiaExecutableBuilder::make(
        std::move(descs), std::move(module), ptx, globalBytes, exeError);
    if (!exe)
        return FinalizeResult::failure(log + "error: internal: " + exeError);

    ProgramBinary bin;
    bin.type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
    bin.targetKind = kNvidiaBinaryKind;
    bin.targetName = sm;
    bin.options = std::string(options);
    bin.source = std::string(source);
    bin.bitcode = bitcode;
    bin.text = std::move(ptx);
    bin.machine = kEmCuda;
    NvidiaExecutableBuilder::setBinary(*exe, writeProgramBinary(bin));
    phases.mark("executable");

    FinalizeResult r;
    r.log = std::move(log);
    r.executable = std::move(exe);
    return r;
}

LoadBinaryResult loadNvidiaBinary(std::span<const unsigned char> binary, const TargetSpec& target) {
    auto fail = &LoadBinaryResult::invalid;
    ProgramBinary b;
    if (std::optional<LoadBinaryResult> done = startGpuBinaryLoad(binary, "nvptx64", "NVIDIA", b))
        return std::move(*done);
    LoadBinaryResult result;
    result.binaryType = b.type;
    result.source = b.source;
    if (b.targetKind != kNvidiaBinaryKind)
        return fail("the executable was built for the " + targetKindName(b.targetKind) +
                    " device, not NVIDIA");
    const std::string sm = target.cpuName.empty() ? kDefaultSm : target.cpuName;
    const unsigned ptxLimit = ptxOfFeatures(featuresOf(target));
    if (b.machine == kEmCuda && !b.text.empty() && b.targetName == sm) {
        nvidia::ReadPtxResult ptx = nvidia::readPtxModule(b.text);
        if (!ptx.error.empty() && !ptx.otherVersion)
            return fail("the binary's PTX cannot be used: " + ptx.error);
        if (ptx.error.empty() && ptx.module.target != sm)
            return fail("the binary's PTX targets " + ptx.module.target + " but its note says " +
                        b.targetName);
        // The guards the PTX has are the ones this load would build with (the binary was made
        // under another DUET_KERNEL_TIMEOUT or DUET_KERNEL_CHECKS: rebuilt below).
        std::string guardLog;
        const ExecutionGuards wanted = executionGuardsFromEnvironment(guardLog);
        if (ptx.error.empty() && (!ptxLimit || ptx.module.ptxVersion <= ptxLimit) &&
            ptx.module.timeoutMicroseconds == timeoutMicroseconds(wanted) &&
            ptx.module.boundsChecks == wanted.boundsChecks) {
            // The PTX is what runs: no recompilation.
            std::string error;
            const size_t globalBytes = ptx.module.globalBytes;
            std::shared_ptr<NvidiaExecutable> exe = NvidiaExecutableBuilder::make(
                describeKernels(b.bitcode), std::move(ptx.module), b.text, globalBytes, error);
            if (!exe)
                return fail("the binary's PTX does not match its bitcode: " + error);
            NvidiaExecutableBuilder::setBinary(
                *exe, std::string(reinterpret_cast<const char*>(binary.data()), binary.size()));
            result.executable = std::move(exe);
            return result;
        }
    }
    // Built for another processor, a newer PTX ISA than this device's driver takes, by another
    // version of Duet's kernel ABI, under other guards, or without code: rebuild
    // from the bitcode.
    FinalizeResult fin = finalizeForNvidia(b.bitcode, b.options, b.source, target);
    if (fin.status != CL_SUCCESS || !fin.executable)
        return fail("the executable in the binary could not be rebuilt for " + sm + ":\n" +
                    fin.log);
    result.log = std::move(fin.log);
    result.executable = std::move(fin.executable);
    return result;
}

TargetSpec withNvidiaFrontEnd(TargetSpec target) {
    target.triple = kTriple;
    if (target.cpuName.empty())
        target.cpuName = kDefaultSm;
    target.cpuFeatures = featuresOf(target);
    target.images = true;
    // printf stays a call, lowered by the finaliser into Duet's printf buffer (clang would make
    // it CUDA's vprintf). clang defines the atomic scope feature macro and that of the work-group
    // collective functions only for SPIR targets; the device has both (builtins/nvidia), so
    // their functions are declared.
    target.frontEndArgs = {"-target-cpu",
                           target.cpuName,
                           "-target-feature",
                           target.cpuFeatures,
                           "-fno-builtin-printf",
                           "-D",
                           "__opencl_c_atomic_scope_device=1",
                           "-D",
                           "__opencl_c_work_group_collective_functions=1"};
    // Likewise the header-only sub-group extensions the device lists (builtins/nvidia/
    // sub_group_ext.cl): their macros declare their functions.
    for (const std::string& e : target.clExtensions)
        if (e.starts_with("cl_khr_subgroup_")) {
            target.frontEndArgs.push_back("-D");
            target.frontEndArgs.push_back(e + "=1");
        }
    target.initialiseTarget = &initialiseNvptxTarget;
    target.releaseModule = &releaseFrontEndModule;
    target.binaryKind = kNvidiaBinaryKind;
    // SPIR-V: the translator's spir64 modules are retargeted to nvptx64 by the front end
    // (compiler/spirv_retarget.cpp), then built like OpenCL C.
    target.spirv = true;
    // DWARF 2, as clang's driver does for NVPTX: the asm printer writes version 2 whatever the
    // module asks, and from version 5 clang asks for call-site entries, which crash LLVM 19's
    // DWARF writer on NVPTX calls (callSiteEntriesOrNoDebugInfo).
    target.dwarfVersion = 2;
    return target;
}

std::unique_ptr<Toolchain> makeNvidiaToolchain(TargetSpec target) {
    // libclc is read from disk at build time: a new one must not meet old cache entries.
    target.cacheKeyFiles.push_back(runtimeDataPath("clc/nvptx64--nvidiacl.bc", DUET_NVPTX_LIBCLC));
    return std::make_unique<FrontEndToolchain>(withNvidiaFrontEnd(std::move(target)),
                                               &finalizeForNvidia, &loadNvidiaBinary);
}

} // namespace duet::rt
