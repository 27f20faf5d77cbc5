// finalizeForCpu: spir64 bitcode -> builtins linked -> work-group functions -> host code
// (O3, libmvec) -> ORC LLJIT, wrapped as a DeviceExecutable with its ELF program binary.
#include "compiler/analysis_managers.hpp"
#include "compiler/binary.hpp"
#include "compiler/llvm_util.hpp"
#include "compiler/options.hpp"
#include "compiler/save_temps.hpp"
#include "core/environment.hpp"
#include "devices/cpu/device_enqueue_hooks.hpp"
#include "devices/cpu/jit/builtin_library.hpp"
#include "devices/cpu/jit/cpu_toolchain.hpp"
#include "devices/cpu/jit/device_enqueue_lowering.hpp"
#include "devices/cpu/jit/guards.hpp"
#include "devices/cpu/jit/host_cpu.hpp"
#include "devices/cpu/jit/jit_memo.hpp"
#include "devices/cpu/jit/kernel_checks.hpp"
#include "devices/cpu/jit/libmvec.hpp"
#include "devices/cpu/jit/local_atomics.hpp"
#include "devices/cpu/jit/module_parts.hpp"
#include "devices/cpu/jit/opaque_types.hpp"
#include "devices/cpu/jit/printf.hpp"
#include "devices/cpu/jit/profiling.hpp"
#include "devices/cpu/jit/quick_tier.hpp"
#include "devices/cpu/jit/rsqrt_estimates.hpp"
#include "devices/cpu/jit/safe_division.hpp"
#include "devices/cpu/jit/streaming_stores.hpp"
#include "devices/cpu/jit/tier_up_queue.hpp"
#include "devices/cpu/jit/work_group.hpp"
#include "devices/cpu/jit/work_item_loops.hpp"
#include "devices/cpu/tiered_code.hpp"
#include "devices/cpu/work_group_abi.hpp"

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Operator.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/Transforms/Scalar/Scalarizer.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>

namespace duet::rt {
namespace {

using namespace llvm;
using cpu::emitObject;
using cpu::kernelPart;
using cpu::prepareWholeTier;
using cpu::writeAssembly;

constexpr uint16_t kEmX86_64 = 62;

/// Quick code (CodeGenOptLevel::None: fast instruction selection) with the register allocator
/// of optimised builds rather than the fast one, which keeps no value in a register from one
/// block to the next: a loop's values went through the stack at each iteration, and the CTS's
/// compare-exchange retry loops ran 1.6x slower for it. The greedy allocator costs the quick
/// compile about 3 ms more per kernel (5 -> 8 ms for that kernel). LLVM decides this with a
/// process-wide option (TargetPassConfig's `-optimize-regalloc`), so in a process with the CPU
/// device -cl-opt-disable builds get it too, on every device; it changes registers, never
/// results. Set once, before this
/// process's first code generation: at the CPU device's creation (initialiseCpuCodegen), before
/// any build on any device can run on another thread.
void optimiseQuickRegisters() {
    const auto& options = cl::getRegisteredOptions();
    if (auto it = options.find("optimize-regalloc"); it != options.end())
        it->second->addOccurrence(0, "optimize-regalloc", "true");
}

void initialiseLlvmOnce() {
    static std::once_flag once;
    std::call_once(once, [] {
        InitializeNativeTarget();
        InitializeNativeTargetAsmPrinter();
        InitializeNativeTargetAsmParser();
        // Vector maths for the loop vectoriser (LIBMVEC_X86): load it into the process so
        // both the check below and the JIT's symbol search find it.
        sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
        sys::DynamicLibrary::LoadLibraryPermanently(nullptr);
        optimiseQuickRegisters();
    });
}

/// Compiled lazily: clBuildProgram prepares the module (builtins linked, work-group
/// functions built and checked); each kernel is compiled the first time its entry is asked
/// for, and the binary's machine code only when the binary is asked for. So a build pays for
/// what the application uses, as on other CPU runtimes. A kernel's first code is quick code
/// (tiered_code.hpp) unless tiering is off, the kernels share the whole module or the build
/// asked for no optimisation; the executor asks for the optimised code once the kernel has run
/// long enough to pay for it.
class CpuExecutable final : public DeviceExecutable,
                            public cpu::TieredCode,
                            public std::enable_shared_from_this<CpuExecutable> {
public:
    const std::vector<KernelDesc>& kernels() const override { return m_kernels; }
    void* entry(size_t index) const override;
    void* streamingEntry(size_t index) const override;
    const std::string& binary() const override;
    /// The binary without .text: loading re-JITs from .llvmir, so storing it costs no
    /// compilation of kernels never launched.
    std::string cacheBinary() const override { return writeProgramBinary(m_binaryParts); }
    size_t globalVariableTotalSize() const override { return m_globalBytes; }
    ExecutionGuards guards() const override { return m_guards; }

    const cpu::TieredCode* tieredCode() const override { return this; }
    void* optimisedEntry(size_t index) const override;
    double quickBudgetLeftMs(size_t index) const override;
    void addQuickTime(size_t index, double ms, size_t workItems) const override;
    double predictQuickMs(size_t index, size_t workItems) const override;
    void* optimiseKernel(size_t index) const override;
    void* requestOptimised(size_t index, bool here, double predictedMs) const override;
    double expectedOptimiseMs(size_t index) const override;
    void noteStreamingLaunch(size_t index) const override {
        if (index < m_kernels.size())
            m_streamingLaunched[index].store(true, std::memory_order_relaxed);
    }
    /// Whether kernel `index`'s optimised code is made with its streaming variant: once it had
    /// a streaming launch, and always without tiers (no launch comes before that code).
    bool wantsStreaming(size_t index) const {
        return !m_wholeModule && (!tiered() || m_streamingLaunched[index].load());
    }
    /// A memo key for optimised code with the streaming variant, from the key without it.
    static std::string streamingKey(const std::string& key) { return key + "|streaming"; }
    /// Kernel `index`'s quick compile in milliseconds (0: not compiled yet).
    double quickCompileMs(size_t index) const;
    /// What DUET_LOG names: "kernel k", or all kernels of one module ("kernels a, b (one module)").
    std::string logSubject(size_t index) const;
    void* waitOptimised(size_t index, double timeoutMs) const override;
    void noteSwitch(size_t index, const char* where) const override;
    /// requestOptimised's `here`: compiles kernel `index` on the calling launch's path if its
    /// compile is not asked for yet or queued and not started (taken from the queue: the job
    /// then does nothing); if it is compiling already, returns what there is (null: quick code).
    void* compileOnLaunchPath(size_t index, std::atomic<uint8_t>& state, double predictedMs) const;

    std::shared_ptr<std::string> m_diagnostics; // outlives the JIT's LLVMContext
    std::unique_ptr<orc::LLJIT> m_jit;          // owns the code the entries point into
    std::vector<KernelDesc> m_kernels;
    std::vector<std::string> m_entryNames; ///< work-group function of each kernel
    std::unique_ptr<TargetMachine> m_tm;
    std::optional<orc::JITTargetMachineBuilder> m_jtmb; ///< for background compiles' own machines
    std::unique_ptr<TargetMachine> m_quickTm; ///< fast instruction selection; null: no tiering
    double m_tierBudgetMs = 0;                ///< quick-code time per kernel before optimising
    bool m_syncTierUp = false;  ///< DUET_CPU_TIER_UP_SYNC=1: optimise on the launch path
    bool m_eagerTierUp = false; ///< queue each kernel's optimised compile at its quick code
    unsigned m_optLevel = 3;
    std::string m_features;
    bool m_unsafeMath = false;
    size_t m_globalBytes = 0; ///< program-scope __global variables
    ExecutionGuards m_guards; ///< compiled into the code (DUET_CPU_CHECKS, DUET_KERNEL_TIMEOUT)
    /// Kernels share mutable program-scope globals: compile the module as a whole.
    bool m_wholeModule = false;
    ProgramBinary m_binaryParts; ///< all but .text, filled at build

    mutable std::mutex m_mutex; ///< guards everything below
    mutable orc::ThreadSafeContext m_context;
    mutable std::unique_ptr<Module> m_module; ///< prepared, unoptimised; null once all is JITted
    mutable std::vector<void*> m_entries;     ///< what entry() gave: quick or optimised code
    /// Optimised code, kNoVariant if it failed; written under m_mutex, read without it.
    std::unique_ptr<std::atomic<void*>[]> m_optimised;
    /// Each kernel's tier-up request (TierUp); a whole-module program's is its kernel 0's.
    std::unique_ptr<std::atomic<uint8_t>[]> m_tierUp;
    mutable std::condition_variable m_optimisedReady; ///< with m_mutex: an m_optimised written
    /// Each kernel's streaming-store variant of its optimised code (streaming_stores.hpp),
    /// null where there is none; written under m_mutex before the optimised code is published.
    std::unique_ptr<std::atomic<void*>[]> m_streaming;
    /// Kernels that had a streaming launch (noteStreamingLaunch): their optimised code is
    /// made with the variant (wantsStreaming).
    std::unique_ptr<std::atomic<bool>[]> m_streamingLaunched;
    static inline void* const kNoVariant = reinterpret_cast<void*>(1);
    mutable bool m_wholeAdded = false;
    mutable bool m_wholeQuickAdded = false; ///< the whole module's quick code is in the JIT
    std::shared_ptr<std::string> m_object = std::make_shared<std::string>(); ///< JIT objects
    /// The object the JIT made last (for the in-process memo, jit_memo.hpp).
    std::shared_ptr<std::string> m_lastObject = std::make_shared<std::string>();
    mutable std::string m_binary;

    mutable std::mutex m_tierMutex;                ///< guards m_quickMs only (a leaf)
    mutable std::vector<double> m_quickMs;         ///< time spent in each kernel's quick code
    mutable std::vector<unsigned> m_quickLaunches; ///< launches of each kernel's quick code
    mutable std::vector<double> m_quickCompileMs;  ///< each kernel's quick compile
    /// Each kernel's milliseconds per work-item on its last two launches that ran quick code
    /// throughout ([1] the last; 0: none measured).
    mutable std::vector<std::array<double, 2>> m_quickMsPerItem;

    /// Where a kernel's tier-up stands: not asked for, queued for the background thread (in
    /// its launch lane, or in its eager lane ahead of need: tierUpEager), compiling there,
    /// compiling on a launch's path (taken from the queue, or never queued), compiled (its
    /// switch not yet logged), switch logged. Only the background job moves a queued state to
    /// kCompiling and only a launch moves it to kLaunchPath (compare-and-swap): one of them
    /// compiles, never both. A launch asking for code queued eagerly moves it to the launch lane
    /// (kQueuedEager to kQueued, then promoteTierUp).
    enum TierUp : uint8_t {
        kNotAsked,
        kQueued,
        kCompiling,
        kLaunchPath,
        kReady,
        kSwitched,
        kQueuedEager
    };
    static bool queuedState(uint8_t s) { return s == kQueued || s == kQueuedEager; }
    /// Queues kernel `index`'s compile for the background thread in `lane` if nothing was asked
    /// for yet; false if something was.
    bool queueTierUp(size_t index, cpu::TierUpLane lane) const;
    /// The key of kernel `index`'s eager job (promoteTierUp): its tier-up state's address.
    const void* tierUpKey(size_t index) const { return &m_tierUp[m_wholeModule ? 0 : index]; }
    /// What a background compile needs, taken under m_mutex: it then runs without the
    /// executable (tierUpCompile).
    struct TierUpInput {
        size_t index = 0;
        std::string name;       ///< logSubject(index): the kernel, or the kernels of the module
        std::string bitcode;    ///< the kernel's part, or the whole module
        std::string memoKey;    ///< empty: no memo entry
        bool whole = false;     ///< the whole module, after its quick code (prepareWholeTier)
        bool streaming = false; ///< with the streaming variant (wantsStreaming)
        std::vector<std::string> entries;
        unsigned optLevel = 3;
        bool unsafeMath = false;
        std::optional<orc::JITTargetMachineBuilder> jtmb;
        std::chrono::steady_clock::time_point queued;
    };
    /// A background compile's product: the object, or why there is none.
    struct TierUpOutput {
        std::string object, error;
        std::vector<std::string> report;
        double optimiseMs = 0, codegenMs = 0;
    };
    /// The background compile thread's job for kernel `index` (tier_up_queue.hpp).
    static void tierUpJob(const std::weak_ptr<const CpuExecutable>& weak, size_t index,
                          std::chrono::steady_clock::time_point queued);
    /// Under m_mutex: the input of kernel `index`'s background compile; false when there is
    /// nothing to compile (done meanwhile, or from the memo: installed here).
    bool tierUpInput(size_t index, TierUpInput& in) const;
    /// Without the executable: optimises and compiles `in` in a context and a target machine
    /// of its own.
    static TierUpOutput tierUpCompile(const TierUpInput& in,
                                      const std::weak_ptr<const CpuExecutable>& weak);
    /// Under m_mutex: puts a background compile's object into the JIT and publishes its entries
    /// (dropped if a synchronous compile got there first); true if its object is the code now.
    bool tierUpInstall(const TierUpInput& in, TierUpOutput& out) const;
    /// DUET_LOG's line on a background compile's result (`error` empty: it succeeded).
    static void logTierUpInstall(const TierUpInput& in, const TierUpOutput& out,
                                 const std::string& error);
    /// m_mutex held: publishes kernel `index`'s optimised code (null: failed), after its
    /// streaming variant if it has one, and wakes waiters.
    void publishOptimised(size_t index, void* code) const;

private:
    Error addToJit(std::unique_ptr<Module> m) const;
    std::string memoKey(const Module& part) const { return memoKey(writeBitcode(part)); }
    std::string memoKey(const std::string& bitcode) const;
    /// m_mutex held, the whole module in the JIT: every kernel's optimised entry published.
    void publishWholeEntries() const;
    bool tiered() const { return m_quickTm != nullptr; }
    /// A kernel's part of the module and its memo key (memoKey; empty with the memo off).
    struct KernelPart {
        std::unique_ptr<Module> module;
        std::string key;
    };
    KernelPart keyedPart(size_t index) const;
    /// Compiles kernel `index` (m_mutex held): its quick code, or the optimised one; from
    /// `part` when the caller made it already (cachedOptimised).
    void* compileKernel(size_t index, bool quick, KernelPart part = {}) const;
    /// m_mutex held: kernel `index`'s optimised code compiled before, in this process or by an
    /// earlier one (the persistent code cache), put into the JIT; null if there is none (then
    /// `part` is left for the quick compile).
    void* cachedOptimised(size_t index, KernelPart& part) const;
};

/// The run-time guards to compile in, read at every build: DUET_KERNEL_CHECKS=1 (or
/// DUET_CPU_CHECKS=1: bounds checks), DUET_KERNEL_TIMEOUT=<seconds> (cancellation points).
ExecutionGuards guardsFromEnvironment(std::string& log) {
    return executionGuardsFromEnvironment(log);
}

/// Implicit barriers around uniform loops pay off once the vectoriser runs;
/// DUET_CPU_LOOP_BARRIERS=0 turns them off (for comparisons).
bool loopBarriersEnabled(const BuildOptions& o) {
    if (o.effectiveOptLevel() < 2)
        return false;
    return envSwitchOn("DUET_CPU_LOOP_BARRIERS");
}

/// Work-item loops are declared parallel for the loop vectoriser (wg::ParallelWorkItemLoops);
/// DUET_CPU_PARALLEL_LOOPS=0 leaves them to its dependence analysis (for comparisons).
bool parallelLoopsEnabled() {
    return envSwitchOn("DUET_CPU_PARALLEL_LOOPS");
}

/// Optimises `m` for the host; returns the vectoriser's verdicts (wg::WorkItemLoopReport).
std::vector<std::string> optimise(Module& m, TargetMachine& tm, unsigned optLevel,
                                  bool unsafeMath) {
    AnalysisManagers am;
    PipelineTuningOptions pto;
    pto.LoopVectorization = optLevel > 1;
    pto.SLPVectorization = optLevel > 1;
    pto.LoopUnrolling = optLevel > 0;
    PassBuilder pb(&tm, pto, std::nullopt, am.instrumentation(m.getContext()));
    wg::WorkItemLoopReport report(m.getContext());
    pb.registerVectorizerStartEPCallback(
        [&report, optLevel](FunctionPassManager& fpm, OptimizationLevel) {
            fpm.addPass(wg::AddressSpaceScopes());
            if (optLevel > 1 && wg::unitStepLoopsEnabled())
                fpm.addPass(wg::UnitStepLoops());
            // Work-item loops that hold a loop of per-work-item trip count, per vector of
            // work-items: lane loops ParallelWorkItemLoops then declares parallel.
            if (parallelLoopsEnabled() && optLevel > 1 && wg::divergentLoopsEnabled())
                fpm.addPass(wg::LinearisedDivergentLoops(&report));
            if (parallelLoopsEnabled())
                fpm.addPass(wg::ParallelWorkItemLoops(&report));
            if (optLevel > 1 && wg::lanewiseInnerLoopsEnabled())
                fpm.addPass(wg::LanewiseInnerLoops(&report));
        });
    if (optLevel > 1 && wg::callLoopInductionsEnabled())
        pb.registerOptimizerLastEPCallback([](ModulePassManager& mpm, OptimizationLevel) {
            mpm.addPass(createModuleToFunctionPassAdaptor(wg::ScalarInductionsInCallingLoops()));
        });
    pb.registerOptimizerLastEPCallback([optLevel](ModulePassManager& mpm, OptimizationLevel) {
        if (optLevel > 1 && parallelLoopsEnabled() && wg::divergentLoopsEnabled())
            mpm.addPass(createModuleToFunctionPassAdaptor(wg::PerLaneArraysInRegisters()));
        if (optLevel > 1 && wg::consecutiveGathersEnabled()) // before the next: its loads too
            mpm.addPass(createModuleToFunctionPassAdaptor(wg::ConsecutiveGathers()));
        if (optLevel > 1 && wg::fullMaskPathsEnabled())
            mpm.addPass(createModuleToFunctionPassAdaptor(wg::FullMaskFastPaths()));
    });
    const cpu::LibmvecTarget mvec = cpu::libmvecTarget(tm, m);
    TargetLibraryInfoImpl tlii(tm.getTargetTriple());
    tlii.addVectorizableFunctions(cpu::libmvecTable(mvec, unsafeMath));
    am.function.registerPass([&] { return TargetLibraryAnalysis(tlii); });
    am.registerWith(pb);
    ModulePassManager mpm;
    if (optLevel == 0) {
        mpm = pb.buildO0DefaultPipeline(OptimizationLevel::O0);
    } else {
        if (optLevel > 1) {
            // OpenCL vector types (float4 ...) would stop the loop vectoriser, which only
            // widens scalars: split them, so work-items become the SIMD dimension; the SLP
            // vectoriser regroups what the loop vectoriser leaves.
            FunctionPassManager fpm;
            ScalarizerPassOptions so;
            so.ScalarizeLoadStore = true;
            so.ScalarizeVariableInsertExtract = true;
            fpm.addPass(ScalarizerPass(so));
            mpm.addPass(createModuleToFunctionPassAdaptor(std::move(fpm)));
        }
        OptimizationLevel level = optLevel == 1 ? OptimizationLevel::O1 : OptimizationLevel::O3;
        mpm.addPass(pb.buildPerModuleDefaultPipeline(level));
    }
    mpm.run(m, am.module);
    cpu::sameLibmvecVariant(m, mvec, unsafeMath); // after the vectorisers: their calls stay
    cpu::plainAtomics(m); // after the vectorisers, never before them: it says why
    cpu::rsqrtEstimates(m, tm.getTargetCPU().str(), tm.getTargetFeatureString().str());
    cpu::realignWideSpills(m);
    return report.lines();
}

/// -save-temps[=prefix] (AMD's option): each kernel's optimised code as LLVM IR (.ll) and
/// as assembly (.s), `<prefix>_<kernel>.ll` / `.s` (prefix: compiler/save_temps.hpp, tag
/// "cpu"), and with tiering (`quickTm` not null) its quick code as `<prefix>_<kernel>.quick.s`.
/// The code is what the JIT runs for that kernel. Returns a log line per file problem.
std::string saveTemps(const Module& m, TargetMachine& tm, TargetMachine* quickTm,
                      const BuildOptions& o, const std::vector<WorkGroupKernelInfo>& kernels,
                      unsigned optLevel) {
    const std::string prefix = saveTempsPrefix(o, "cpu");
    std::string log;
    for (const WorkGroupKernelInfo& k : kernels) {
        std::unique_ptr<Module> part = kernelPart(m, k.entryName);
        if (!part)
            continue;
        const std::string base = prefix + "_" + k.name;
        if (quickTm) {
            std::unique_ptr<Module> quick = kernelPart(m, k.entryName);
            cpu::quickOptimise(*quick, *quickTm, o.effectiveUnsafeMath());
            log += writeAssembly(*quick, *quickTm, base + ".quick.s");
        }
        for (const std::string& l : optimise(*part, tm, optLevel, o.effectiveUnsafeMath()))
            log += "note: -save-temps: kernel " + k.name + ": " + l + "\n";
        std::string problem =
            writeTempFile(base + ".ll", [&](raw_pwrite_stream& ll) { part->print(ll, nullptr); });
        log += problem.empty() ? writeAssembly(*part, tm, base + ".s") : problem;
    }
    return log;
}

Error CpuExecutable::addToJit(std::unique_ptr<Module> m) const {
    return m_jit->addIRModule(orc::ThreadSafeModule(std::move(m), m_context));
}

/// Everything compiling `part` reads: its bitcode, the optimisation settings and the target
/// machine's (CPU, features, FP fusion), and the switches optimise() reads.
std::string CpuExecutable::memoKey(const std::string& bitcode) const {
    std::array<uint8_t, 32> digest = SHA256::hash(
        ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(bitcode.data()), bitcode.size()));
    std::string key(digest.begin(), digest.end());
    key += "|O" + std::to_string(m_optLevel) + (m_unsafeMath ? "|unsafe" : "|safe") +
           (parallelLoopsEnabled() ? "|parallel" : "|serial") +
           (wg::callLoopInductionsEnabled() ? "|callind" : "") +
           (wg::fullMaskPathsEnabled() ? "|fullmask" : "") +
           (wg::consecutiveGathersEnabled() ? "|congather" : "") +
           (wg::unitStepLoopsEnabled() ? "|ustep" : "") +
           (wg::lanewiseInnerLoopsEnabled() ? "|lanewise" : "") +
           (cpu::realignWideSpillsEnabled() ? "|realign" : "") + "|divloops" +
           std::to_string(int(wg::divergentLoopsMode())) + cpu::localAtomicsMemoKey() +
           cpu::rsqrtEstimatesMemoKey() + cpu::libmvecMemoKey() + "|" + m_tm->getTargetCPU().str() +
           "|" + m_tm->getTargetFeatureString().str() + "|" + m_features + "|fusion" +
           std::to_string(int(m_tm->Options.AllowFPOpFusion)) + "|cg" +
           std::to_string(int(m_tm->getOptLevel()));
    return key;
}

CpuExecutable::KernelPart CpuExecutable::keyedPart(size_t index) const {
    KernelPart p;
    p.module = kernelPart(*m_module, m_entryNames[index]);
    if (p.module && cpu::jitMemoEnabled())
        p.key = memoKey(*p.module);
    return p;
}

void* CpuExecutable::compileKernel(size_t index, bool quick, KernelPart given) const {
    const auto start = std::chrono::steady_clock::now();
    std::string symbol = m_entryNames[index];
    // Logged by the call that compiled (of a whole module: once, naming every kernel).
    bool compiled = !m_wholeModule;
    std::string key; ///< in the JIT memo
    std::shared_ptr<const cpu::JitMemoEntry> hit;
    bool fromDisk = false; ///< the hit came from the persistent code cache
    std::vector<std::string> report;
    std::string quickObject;
    if (m_wholeModule && quick) {
        symbol += ".quick";
        if (!m_wholeQuickAdded) {
            std::unique_ptr<Module> whole = CloneModule(*m_module);
            prepareWholeTier(*whole, m_entryNames, true);
            cpu::quickOptimise(*whole, *m_quickTm, m_unsafeMath);
            quickObject = emitObject(*whole, *m_quickTm);
            if (quickObject.empty()) {
                *m_diagnostics += "error: JIT: the host target emits no object files\n";
                return nullptr;
            }
            if (Error e = m_jit->addObjectFile(
                    MemoryBuffer::getMemBufferCopy(quickObject, "duet-quick-whole"))) {
                *m_diagnostics += "error: JIT: " + toString(std::move(e)) + "\n";
                return nullptr;
            }
            m_wholeQuickAdded = true;
            compiled = true;
        }
    } else if (m_wholeModule) {
        if (!m_wholeAdded) {
            // After quick code: its object defines the program's variables, this one uses them.
            if (m_wholeQuickAdded)
                prepareWholeTier(*m_module, m_entryNames, false);
            wg::logWorkItemLoops(optimise(*m_module, *m_tm, m_optLevel, m_unsafeMath));
            compiled = true;
            m_wholeAdded = true;
            if (Error e = addToJit(std::move(m_module))) {
                *m_diagnostics += "error: JIT: " + toString(std::move(e)) + "\n";
                return nullptr;
            }
        }
    } else {
        KernelPart keyed = given.module ? std::move(given) : keyedPart(index);
        std::unique_ptr<Module> part = std::move(keyed.module);
        if (!part)
            return nullptr;
        // An identical kernel module compiled before in this process (the same source built
        // again, as test suites do) gives its object: the same machine code, not compiled again.
        // Optimised code also from the persistent code cache (an earlier process compiled it).
        // The key is the module's before the quick code's rename, which follows from it.
        const bool streaming = !quick && wantsStreaming(index);
        key = keyed.key.empty() ? std::string()
              : quick           ? keyed.key + "|quick"
              : streaming       ? streamingKey(keyed.key)
                                : keyed.key;
        if (quick) {
            // Its own symbol: the optimised code of the same kernel joins the same JITDylib.
            symbol += ".quick";
            part->getFunction(m_entryNames[index])->setName(symbol);
        }
        const auto reach = quick ? cpu::MemoReach::Process : cpu::MemoReach::Disk;
        hit = key.empty() ? nullptr : cpu::findJitMemo(key, reach, &fromDisk);
        Error e = Error::success();
        if (hit) {
            e = m_jit->addObjectFile(MemoryBuffer::getMemBufferCopy(hit->object, "duet-jit-memo"));
            if (e && fromDisk) { // not an object this JIT takes: compiled again
                cpu::rejectJitMemo(key, true, toString(std::move(e)));
                e = Error::success();
                hit = nullptr;
            }
        }
        if (hit) {
            wg::logWorkItemLoops(hit->report);
        } else if (quick) {
            cpu::quickOptimise(*part, *m_quickTm, m_unsafeMath);
            quickObject = emitObject(*part, *m_quickTm);
            if (quickObject.empty()) {
                *m_diagnostics += "error: JIT: the host target emits no object files\n";
                return nullptr;
            }
            e = m_jit->addObjectFile(MemoryBuffer::getMemBufferCopy(quickObject, symbol));
        } else {
            report = optimise(*part, *m_tm, m_optLevel, m_unsafeMath);
            wg::logWorkItemLoops(report);
            if (streaming)
                addStreamingVariant(*part, m_entryNames[index]);
            e = addToJit(std::move(part));
        }
        if (e) {
            *m_diagnostics += "error: JIT: " + toString(std::move(e)) + "\n";
            return nullptr;
        }
    }
    const auto optimised = std::chrono::steady_clock::now();
    m_lastObject->clear();
    auto sym = m_jit->lookup(symbol);
    if (!sym) {
        *m_diagnostics += "error: JIT: " + toString(sym.takeError()) + "\n";
        return nullptr;
    }
    if (!hit && !key.empty()) {
        if (quick)
            cpu::storeJitMemo(key, cpu::JitMemoEntry{std::move(quickObject), {}});
        else if (!m_lastObject->empty())
            cpu::storeJitMemo(key, cpu::JitMemoEntry{*m_lastObject, std::move(report)},
                              cpu::MemoReach::Disk);
    }
    if (wg::cpuJitLogEnabled() && compiled) {
        using Ms = std::chrono::duration<double, std::milli>;
        const double total = Ms(std::chrono::steady_clock::now() - start).count();
        const char* what = quick ? "quick code" : "optimised code";
        const std::string subject = logSubject(index);
        if (hit)
            std::fprintf(stderr, "duet: cpu: %s: %s from %s in %.1f ms\n", subject.c_str(), what,
                         fromDisk ? "the code cache (an earlier process compiled it)"
                                  : "the in-process memo (an identical kernel was compiled before)",
                         total);
        else if (quick)
            std::fprintf(stderr,
                         "duet: cpu: %s: quick code in %.1f ms (optimised after %g ms "
                         "of launches, DUET_CPU_TIER_UP_MS, or %u launches)\n",
                         subject.c_str(), total, m_tierBudgetMs, cpu::kTierUpLaunches);
        else
            std::fprintf(stderr, "duet: cpu: %s: optimised in %.1f ms, machine code in %.1f ms\n",
                         subject.c_str(), Ms(optimised - start).count(),
                         total - Ms(optimised - start).count());
    }
    return sym->toPtr<void*>();
}

void* CpuExecutable::entry(size_t index) const {
    if (index >= m_entries.size())
        return nullptr;
    std::lock_guard lock(m_mutex);
    if (m_entries[index])
        return m_entries[index];
    if (void* code = m_optimised[index].load(); code && code != kNoVariant)
        return m_entries[index] = code;
    // (A whole program optimised already, for its binary, has no module left to compile.)
    if (tiered() && !(m_wholeModule && m_wholeAdded)) {
        const auto start = std::chrono::steady_clock::now();
        KernelPart part;
        if (void* code = cachedOptimised(index, part)) {
            publishOptimised(index, code);
            return m_entries[index] = code;
        }
        m_entries[index] = compileKernel(index, true, std::move(part));
        {
            std::lock_guard tierLock(m_tierMutex);
            m_quickCompileMs[index] =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
        }
        if (m_entries[index]) {
            if (m_eagerTierUp && !m_syncTierUp)
                queueTierUp(index, cpu::TierUpLane::Eager);
            return m_entries[index];
        }
    }
    m_entries[index] = compileKernel(index, false);
    publishOptimised(index, m_entries[index]);
    return m_entries[index];
}

void* CpuExecutable::cachedOptimised(size_t index, KernelPart& part) const {
    if (m_wholeModule || !m_module || !cpu::jitMemoEnabled())
        return nullptr;
    const auto start = std::chrono::steady_clock::now();
    part = keyedPart(index);
    if (!part.module || part.key.empty())
        return nullptr;
    // With the streaming variant (stored by a kernel that had streaming launches) first.
    std::string key = streamingKey(part.key);
    bool fromDisk = false;
    std::shared_ptr<const cpu::JitMemoEntry> hit =
        cpu::findJitMemo(key, cpu::MemoReach::Disk, &fromDisk);
    if (!hit)
        hit = cpu::findJitMemo(key = part.key, cpu::MemoReach::Disk, &fromDisk);
    if (!hit)
        return nullptr;
    const std::string& symbol = m_entryNames[index];
    void* code = nullptr;
    Error e = m_jit->addObjectFile(MemoryBuffer::getMemBufferCopy(hit->object, symbol));
    if (!e) {
        auto sym = m_jit->lookup(symbol);
        if (sym)
            code = sym->toPtr<void*>();
        else
            e = sym.takeError();
    }
    if (!code) { // quick code then, under its own symbol
        const std::string why = toString(std::move(e));
        cpu::rejectJitMemo(key, fromDisk, why);
        if (wg::cpuJitLogEnabled())
            std::fprintf(stderr, "duet: cpu: kernel %s: stored optimised code not used: %s\n",
                         m_kernels[index].name.c_str(), why.c_str());
        return nullptr;
    }
    wg::logWorkItemLoops(hit->report);
    if (wg::cpuJitLogEnabled())
        std::fprintf(
            stderr, "duet: cpu: kernel %s: optimised code from %s in %.1f ms, no quick code\n",
            m_kernels[index].name.c_str(),
            fromDisk ? "the code cache (an earlier process compiled it)"
                     : "the in-process memo (an identical kernel was optimised before)",
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    return code;
}

void* CpuExecutable::optimisedEntry(size_t index) const {
    if (index >= m_kernels.size())
        return nullptr;
    void* code = m_optimised[index].load(std::memory_order_acquire);
    return code == kNoVariant ? nullptr : code;
}

double CpuExecutable::quickBudgetLeftMs(size_t index) const {
    std::lock_guard lock(m_tierMutex);
    if (index >= m_quickMs.size() || m_quickLaunches[index] >= cpu::kTierUpLaunches)
        return 0.0;
    return m_tierBudgetMs - m_quickMs[index];
}

void CpuExecutable::addQuickTime(size_t index, double ms, size_t workItems) const {
    std::lock_guard lock(m_tierMutex);
    if (index < m_quickMs.size()) {
        m_quickMs[index] += ms;
        // A launch shorter than a millisecond is mostly the launch's own cost (waking the
        // pool): per work-item it would make a large launch after it look far longer than it is.
        if (workItems && ms >= 1.0)
            m_quickMsPerItem[index] = {m_quickMsPerItem[index][1], ms / double(workItems)};
        ++m_quickLaunches[index];
    }
}

void* CpuExecutable::optimiseKernel(size_t index) const {
    if (index >= m_kernels.size())
        return nullptr;
    std::lock_guard lock(m_mutex);
    if (!m_optimised[index].load()) {
        void* code = compileKernel(index, false);
        publishOptimised(index, code);
        if (code && m_wholeModule)
            publishWholeEntries();
        if (!code && wg::cpuJitLogEnabled())
            std::fprintf(stderr, "duet: cpu: %s: optimising failed, quick code goes on: %s",
                         logSubject(index).c_str(), m_diagnostics->c_str());
    }
    void* code = m_optimised[index].load();
    return code == kNoVariant ? nullptr : code;
}

void CpuExecutable::publishOptimised(size_t index, void* code) const {
    // The variant is made with the optimised code (addStreamingVariant), so it is in the same
    // object, whichever way that came: compiled here, from the memo or the code cache.
    auto streaming = code && !m_wholeModule && !m_streaming[index].load()
                         ? m_jit->lookup(streamingName(m_entryNames[index]))
                         : Expected<orc::ExecutorAddr>(orc::ExecutorAddr());
    if (!streaming) {
        consumeError(streaming.takeError());
    } else if (*streaming) {
        m_streaming[index].store(streaming->toPtr<void*>(), std::memory_order_release);
        if (wg::cpuJitLogEnabled())
            std::fprintf(stderr,
                         "duet: cpu: %s: with its streaming-store variant (for launches whose "
                         "buffers outgrow the cache)\n",
                         logSubject(index).c_str());
    }
    m_optimised[index].store(code ? code : kNoVariant, std::memory_order_release);
    m_optimisedReady.notify_all();
}

double CpuExecutable::predictQuickMs(size_t index, size_t workItems) const {
    std::lock_guard lock(m_tierMutex);
    if (index >= m_quickMsPerItem.size())
        return 0.0;
    // The lower of the last two launches' costs: one launch slowed down by the machine's load
    // (a frame loop's frame) does not make the next one look long.
    const auto [before, last] = m_quickMsPerItem[index];
    return (before > 0 ? std::min(before, last) : last) * double(workItems);
}

double CpuExecutable::expectedOptimiseMs(size_t index) const {
    std::lock_guard lock(m_tierMutex);
    // The quick compile times the process's ratio of optimised to quick compiles so far
    // (cpu::optimiseToQuickRatio); at least 30 ms (a quick compile from the memo says nothing
    // of the optimised one's cost).
    const double quick = index < m_quickCompileMs.size() ? m_quickCompileMs[index] : 0.0;
    return std::max(30.0, cpu::optimiseToQuickRatio() * quick);
}

double CpuExecutable::quickCompileMs(size_t index) const {
    std::lock_guard lock(m_tierMutex);
    return index < m_quickCompileMs.size() ? m_quickCompileMs[index] : 0.0;
}

std::string CpuExecutable::logSubject(size_t index) const {
    if (!m_wholeModule)
        return "kernel " + m_kernels[index].name;
    std::string names;
    for (const KernelDesc& k : m_kernels)
        names += (names.empty() ? "" : ", ") + k.name;
    return "kernels " + names + " (one module)";
}

void* CpuExecutable::requestOptimised(size_t index, bool here, double predictedMs) const {
    if (index >= m_kernels.size())
        return nullptr;
    if (void* code = optimisedEntry(index))
        return code;
    std::atomic<uint8_t>& state = m_tierUp[m_wholeModule ? 0 : index];
    if (here && !m_syncTierUp && tiered())
        return compileOnLaunchPath(index, state, predictedMs);
    if (m_syncTierUp || !tiered()) {
        void* code = optimiseKernel(index);
        uint8_t notAsked = kNotAsked;
        if (code)
            state.compare_exchange_strong(notAsked, kReady);
        return code;
    }
    if (queueTierUp(index, cpu::TierUpLane::Launch))
        return nullptr;
    // Queued ahead of need: launches wait for it now, so it goes before other eager compiles.
    uint8_t eager = kQueuedEager;
    if (state.compare_exchange_strong(eager, kQueued) && cpu::promoteTierUp(tierUpKey(index)) &&
        wg::cpuJitLogEnabled())
        std::fprintf(stderr,
                     "duet: cpu: %s: its compile ahead of need moved before the other "
                     "ones (its launches spent the budget)\n",
                     logSubject(index).c_str());
    return nullptr; // queued or compiling already (or failed: quick code it is)
}

bool CpuExecutable::queueTierUp(size_t index, cpu::TierUpLane lane) const {
    std::atomic<uint8_t>& state = m_tierUp[m_wholeModule ? 0 : index];
    const bool eager = lane == cpu::TierUpLane::Eager;
    uint8_t notAsked = kNotAsked;
    if (!state.compare_exchange_strong(notAsked, eager ? kQueuedEager : kQueued))
        return false;
    const auto queued = std::chrono::steady_clock::now();
    if (wg::cpuJitLogEnabled())
        std::fprintf(stderr,
                     "duet: cpu: %s: optimised code queued for the background "
                     "compile thread%s, quick code meanwhile\n",
                     logSubject(index).c_str(),
                     eager ? " ahead of need (DUET_CPU_TIER_UP_EAGER)" : "");
    cpu::submitTierUp([weak = weak_from_this(), index, queued] { tierUpJob(weak, index, queued); },
                      lane, eager ? tierUpKey(index) : nullptr);
    return true;
}

void* CpuExecutable::compileOnLaunchPath(size_t index, std::atomic<uint8_t>& state,
                                         double predictedMs) const {
    uint8_t from = state.load();
    // Not asked for, or queued and not started: this launch takes it. Compiling in the
    // background (or here, for another launch): the launch goes on with quick code.
    while ((from == kNotAsked || queuedState(from)) &&
           !state.compare_exchange_weak(from, kLaunchPath)) {
    }
    if (from != kNotAsked && !queuedState(from))
        return optimisedEntry(index);
    if (wg::cpuJitLogEnabled()) {
        char why[96] = "the launch runs longer than the compile";
        if (predictedMs > 0)
            std::snprintf(why, sizeof why,
                          "the launch's %.0f ms of quick code (predicted) outlast the compile",
                          predictedMs);
        std::fprintf(
            stderr, "duet: cpu: %s: optimised on the launch path%s: %s\n",
            logSubject(index).c_str(),
            queuedState(from) ? " (taken from the background queue before it started)" : "", why);
    }
    cpu::countTierUp(cpu::TierUpOutcome::LaunchPath);
    if (queuedState(from))
        cpu::countTierUp(cpu::TierUpOutcome::Taken);
    const auto start = std::chrono::steady_clock::now();
    void* code = optimiseKernel(index);
    if (code && !m_wholeModule)
        cpu::noteOptimiseToQuick(
            quickCompileMs(index),
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    state.store(kReady);
    return code;
}

void* CpuExecutable::waitOptimised(size_t index, double timeoutMs) const {
    if (index >= m_kernels.size())
        return nullptr;
    std::unique_lock lock(m_mutex);
    m_optimisedReady.wait_for(lock, std::chrono::duration<double, std::milli>(timeoutMs),
                              [&] { return m_optimised[index].load() != nullptr; });
    return optimisedEntry(index);
}

void CpuExecutable::noteSwitch(size_t index, const char* where) const {
    if (index >= m_kernels.size())
        return;
    std::atomic<uint8_t>& state = m_tierUp[m_wholeModule ? 0 : index];
    uint8_t ready = kReady;
    if (state.load(std::memory_order_relaxed) != kReady ||
        !state.compare_exchange_strong(ready, kSwitched) || !wg::cpuJitLogEnabled())
        return;
    std::fprintf(stderr, "duet: cpu: %s: launches switch to the optimised code (%s)\n",
                 logSubject(index).c_str(), where);
}

void CpuExecutable::tierUpJob(const std::weak_ptr<const CpuExecutable>& weak, size_t index,
                              std::chrono::steady_clock::time_point queued) {
    TierUpInput in;
    in.queued = queued;
    {
        std::shared_ptr<const CpuExecutable> self = weak.lock();
        if (!self || cpu::tierUpStopping()) {
            cpu::countTierUp(cpu::TierUpOutcome::Dropped);
            return; // released (or the process exits) before its turn: nothing to do
        }
        std::lock_guard lock(self->m_mutex);
        if (!self->tierUpInput(index, in))
            return;
        cpu::countTierUp(cpu::TierUpOutcome::Started);
    } // no reference while compiling: a release destroys the executable now, not after us
    TierUpOutput out = tierUpCompile(in, weak);
    std::shared_ptr<const CpuExecutable> self = weak.lock();
    if (!self || cpu::tierUpStopping()) {
        cpu::countTierUp(cpu::TierUpOutcome::Dropped);
        const bool keep = !out.object.empty() && out.error.empty() && !in.memoKey.empty();
        if (wg::cpuJitLogEnabled())
            std::fprintf(stderr, "duet: cpu: %s: background compile dropped (%s)%s\n",
                         in.name.c_str(), self ? "the process exits" : "its program was released",
                         keep ? ", its code kept in the code cache" : "");
        if (keep)
            cpu::storeJitMemo(in.memoKey, cpu::JitMemoEntry{std::move(out.object), out.report},
                              cpu::MemoReach::Disk);
        return;
    }
    bool installed = false;
    {
        std::lock_guard lock(self->m_mutex);
        installed = self->tierUpInstall(in, out);
    }
    // Kept for this process and the next ones, written without the lock launches take.
    if (installed && !in.memoKey.empty())
        cpu::storeJitMemo(in.memoKey, cpu::JitMemoEntry{std::move(out.object), out.report},
                          cpu::MemoReach::Disk);
}

void CpuExecutable::publishWholeEntries() const {
    for (size_t i = 0; i < m_kernels.size(); ++i) {
        if (m_optimised[i].load())
            continue;
        auto sym = m_jit->lookup(m_entryNames[i]);
        if (!sym)
            *m_diagnostics += "error: JIT: " + toString(sym.takeError()) + "\n";
        publishOptimised(i, sym ? sym->toPtr<void*>() : nullptr);
    }
}

bool CpuExecutable::tierUpInput(size_t index, TierUpInput& in) const {
    std::atomic<uint8_t>& state = m_tierUp[m_wholeModule ? 0 : index];
    uint8_t queued = state.load();
    while (queuedState(queued) && !state.compare_exchange_weak(queued, kCompiling)) {
    }
    if (!queuedState(queued))
        return false;                // a long launch took it from the queue (counted there)
    if (m_optimised[index].load()) { // compiled synchronously meanwhile
        state.store(kReady);
        cpu::countTierUp(cpu::TierUpOutcome::Installed);
        return false;
    }
    in.index = index;
    in.name = logSubject(index);
    in.entries = m_entryNames;
    in.optLevel = m_optLevel;
    in.unsafeMath = m_unsafeMath;
    in.jtmb = m_jtmb;
    if (m_wholeModule) {
        if (m_wholeAdded || !m_module) { // optimised already: its entries only to look up
            publishWholeEntries();
            state.store(kReady);
            cpu::countTierUp(cpu::TierUpOutcome::Installed);
            return false;
        }
        in.whole = m_wholeQuickAdded;
        in.bitcode = writeBitcode(*m_module);
        return true;
    }
    std::unique_ptr<Module> part = m_module ? kernelPart(*m_module, m_entryNames[index]) : nullptr;
    if (!part) {
        publishOptimised(index, nullptr);
        state.store(kReady);
        cpu::countTierUp(cpu::TierUpOutcome::Failed);
        return false;
    }
    in.bitcode = writeBitcode(*part);
    in.streaming = wantsStreaming(index);
    in.memoKey = !cpu::jitMemoEnabled() ? std::string()
                 : in.streaming         ? streamingKey(memoKey(in.bitcode))
                                        : memoKey(in.bitcode);
    if (!in.memoKey.empty()) {
        // Compiled meanwhile in this process (clCreateKernel looked on disk already).
        if (auto hit = cpu::findJitMemo(in.memoKey)) {
            TierUpOutput out;
            out.object = hit->object;
            out.report = hit->report;
            in.memoKey.clear(); // stored already
            tierUpInstall(in, out);
            return false;
        }
    }
    return true;
}

CpuExecutable::TierUpOutput
CpuExecutable::tierUpCompile(const TierUpInput& in,
                             const std::weak_ptr<const CpuExecutable>& weak) {
    using Ms = std::chrono::duration<double, std::milli>;
    TierUpOutput out;
    const auto start = std::chrono::steady_clock::now();
    if (wg::cpuJitLogEnabled())
        std::fprintf(stderr,
                     "duet: cpu: %s: background compile started (%.1f ms after it was "
                     "queued)\n",
                     in.name.c_str(), Ms(start - in.queued).count());
    LLVMContext ctx;
    std::shared_ptr<std::string> diagnostics = collectDiagnostics(ctx);
    std::string error;
    std::unique_ptr<Module> m = parseBitcode(in.bitcode, ctx, &error);
    orc::JITTargetMachineBuilder jtmb = *in.jtmb; // createTargetMachine is not const
    auto tm = jtmb.createTargetMachine();
    if (!m || !tm) {
        out.error = m ? toString(tm.takeError()) : error;
        if (!m && !tm)
            consumeError(tm.takeError());
        return out;
    }
    if (in.whole)
        prepareWholeTier(*m, in.entries, false);
    out.report = optimise(*m, **tm, in.optLevel, in.unsafeMath);
    if (in.streaming)
        addStreamingVariant(*m, in.entries[in.index]);
    const auto optimised = std::chrono::steady_clock::now();
    out.optimiseMs = Ms(optimised - start).count();
    // Its program released or the process exiting: the code is still worth its machine code
    // for the code cache (a later build or run loads it; exit waits for this compile anyway).
    if ((weak.expired() || cpu::tierUpStopping()) && (in.memoKey.empty() || !cpu::codeCacheOn()))
        return out; // no object: dropped by the caller
    out.object = emitObject(*m, **tm);
    out.codegenMs = Ms(std::chrono::steady_clock::now() - optimised).count();
    if (out.object.empty())
        out.error = "the host target emits no object files";
    if (!diagnostics->empty()) {
        out.error = *diagnostics;
        out.object.clear();
    }
    return out;
}

bool CpuExecutable::tierUpInstall(const TierUpInput& in, TierUpOutput& out) const {
    std::atomic<uint8_t>& state = m_tierUp[m_wholeModule ? 0 : in.index];
    const bool done = m_wholeModule ? m_wholeAdded : m_optimised[in.index].load() != nullptr;
    if (done) { // a synchronous compile (optimiseKernel, binary()) got there first
        if (m_wholeModule)
            publishWholeEntries();
        state.store(kReady);
        cpu::countTierUp(cpu::TierUpOutcome::Installed);
        return false;
    }
    const std::string symbol = m_entryNames[in.index];
    std::string error = out.error;
    void* code = nullptr;
    if (error.empty()) {
        if (Error e = m_jit->addObjectFile(MemoryBuffer::getMemBufferCopy(out.object, symbol))) {
            error = toString(std::move(e));
        } else if (auto sym = m_jit->lookup(symbol)) {
            code = sym->toPtr<void*>();
        } else {
            error = toString(sym.takeError());
        }
    }
    // Said before the code is published: a launch may switch to it (and its program be
    // released) at once.
    logTierUpInstall(in, out, code ? std::string() : error);
    if (m_wholeModule && code) {
        m_wholeAdded = true;
        m_module.reset(); // its code is in the JIT now
    }
    publishOptimised(in.index, code);
    if (m_wholeModule && code)
        publishWholeEntries();
    state.store(kReady);
    cpu::countTierUp(code ? cpu::TierUpOutcome::Installed : cpu::TierUpOutcome::Failed);
    if (code && !m_wholeModule)
        cpu::noteOptimiseToQuick(quickCompileMs(in.index), out.optimiseMs + out.codegenMs);
    return code != nullptr;
}

void CpuExecutable::logTierUpInstall(const TierUpInput& in, const TierUpOutput& out,
                                     const std::string& error) {
    if (!wg::cpuJitLogEnabled())
        return;
    if (!error.empty()) {
        std::fprintf(stderr, "duet: cpu: %s: optimising failed, quick code goes on: %s\n",
                     in.name.c_str(), error.c_str());
        return;
    }
    wg::logWorkItemLoops(out.report);
    if (out.optimiseMs == 0 && out.codegenMs == 0)
        std::fprintf(stderr,
                     "duet: cpu: %s: optimised code from the in-process memo, launches "
                     "switch to it at their next work-group\n",
                     in.name.c_str());
    else
        std::fprintf(stderr,
                     "duet: cpu: %s: background compile finished: optimised in %.1f ms, "
                     "machine code in %.1f ms; launches switch to it at their next work-group\n",
                     in.name.c_str(), out.optimiseMs, out.codegenMs);
}

void* CpuExecutable::streamingEntry(size_t index) const {
    return index < m_kernels.size() ? m_streaming[index].load(std::memory_order_acquire) : nullptr;
}

const std::string& CpuExecutable::binary() const {
    std::unique_lock lock(m_mutex);
    if (!m_binary.empty())
        return m_binary;
    ProgramBinary bin = m_binaryParts;
    if (m_wholeModule) {
        // The JIT compiles the whole module: its object is the machine code.
        lock.unlock();
        for (size_t i = 0; i < m_entries.size(); ++i)
            optimiseKernel(i);
        lock.lock();
        bin.text = *m_object;
    } else {
        std::unique_ptr<Module> whole = CloneModule(*m_module);
        optimise(*whole, *m_tm, m_optLevel, m_unsafeMath);
        SmallVector<char, 0> object;
        raw_svector_ostream os(object);
        legacy::PassManager pm;
        if (!m_tm->addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::ObjectFile)) {
            pm.run(*whole);
            bin.text.assign(object.begin(), object.end());
        }
    }
    m_binary = writeProgramBinary(bin);
    return m_binary;
}

/// The options the code generator follows: clBuildProgram's (compile) or clLinkProgram's
/// (link) set; ones it cannot parse are ignored with a warning in `log`.
BuildOptions codegenOptions(std::string_view options, std::string& log) {
    BuildOptions opts;
    ParsedOptions parsed = parseBuildOptions(effectiveBuildOptions(options), OptionsKind::Compile);
    if (!parsed.ok)
        parsed = parseBuildOptions(effectiveBuildOptions(options), OptionsKind::Link);
    if (parsed.ok)
        opts = parsed.options;
    else
        log += "warning: code generator ignores the options: " + parsed.error + "\n";
    return opts;
}

/// A prepared module, or why there is none; `retry`: building again without the implicit
/// loop barriers may succeed.
struct Prepared {
    std::unique_ptr<Module> module;
    std::string error;
    bool retry = false;
    double linkMs = 0; ///< reading the program's bitcode and linking the builtins it calls
};

/// Bitcode -> builtins linked -> work-group functions (their descriptions appended to
/// `wgKernels`), verified. `diagnostics` is what `ctx`'s handler collected.
Prepared prepareModule(const std::string& bitcode, LLVMContext& ctx, const std::string& diagnostics,
                       bool loopBarriers, bool spinYields, const ExecutionGuards& guards,
                       std::vector<WorkGroupKernelInfo>& wgKernels, std::string& notes) {
    Prepared p;
    std::string& error = p.error;
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<Module> m = parseBitcode(bitcode, ctx, &error);
    if (!m) {
        error = "error: invalid program bitcode: " + error;
        return p;
    }
    // The builtin library: only what the program calls (builtin_library.cpp).
    if (std::string e = cpu::linkBuiltinLibrary(*m); !e.empty()) {
        error = diagnostics + e;
        return p;
    }
    p.linkMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    lowerOpaqueTypes(*m);
    lowerDeviceEnqueue(*m);
    normaliseForCpu(*m);
    cpu::plainLocalVolatiles(*m);
    cpu::inlineAtomicsEarly(*m);
    const bool cancellable = guards.timeoutSeconds > 0;
    if (guards.boundsChecks || cancellable)
        inlineForGuards(*m, cancellable);
    if (guards.boundsChecks)
        notes = insertBoundsChecks(*m);
    if (cancellable)
        insertCancellationPoints(*m);
    if (!buildWorkGroupFunctions(*m, wgKernels, loopBarriers, guards.boundsChecks, spinYields,
                                 error)) {
        error = "error: " + error;
        p.retry = true;
        return p;
    }
    lowerDeferredChecks(*m);
    lowerGuardPlaceholders(*m);
    if (std::string missing = cpu::unresolvedFunctions(*m); !missing.empty()) {
        error = missing;
        return p;
    }
    std::string verifyLog;
    raw_string_ostream os(verifyLog);
    if (verifyModule(*m, &os)) {
        error = "error: internal: the work-group functions do not verify:\n" + os.str();
        p.retry = true;
        return p;
    }
    p.module = std::move(m);
    return p;
}

/// prepareModule. The implicit loop barriers are an optimisation: should the module they give
/// not verify (a bug of ours), build again without them (a warning in `log`) rather than fail
/// the user's build.
Prepared prepareModuleOrRetry(const std::string& bitcode, LLVMContext& ctx,
                              const std::string& diagnostics, const BuildOptions& opts,
                              const ExecutionGuards& guards,
                              std::vector<WorkGroupKernelInfo>& wgKernels, std::string& log) {
    const bool loopBarriers = loopBarriersEnabled(opts);
    // Independent forward progress between sub-groups, unless the program waives it.
    const bool spinYields = !opts.noSubgroupIfp;
    std::string notes;
    Prepared p = prepareModule(bitcode, ctx, diagnostics, loopBarriers, spinYields, guards,
                               wgKernels, notes);
    if (!p.module && p.retry && loopBarriers) {
        Prepared second =
            prepareModule(bitcode, ctx, diagnostics, false, spinYields, guards, wgKernels, notes);
        if (second.module)
            log += "warning: built without implicit loop barriers after: " + p.error + "\n";
        p = std::move(second);
    }
    if (p.module)
        log += notes;
    if (p.module && wg::cpuJitLogEnabled())
        for (const WorkGroupKernelInfo& k : wgKernels)
            if (k.spinLoops)
                std::fprintf(stderr,
                             "duet: cpu: kernel %s: %zu loop(s) may wait on an atomic read: they "
                             "yield to the other sub-groups every %u iterations "
                             "(-cl-no-subgroup-ifp: not)\n",
                             k.name.c_str(), k.spinLoops, unsigned(kSpinYieldEvery));
    return p;
}

/// DUET_CPU_TIER_UP_SYNC=1: optimised code compiled at the launch that spends the budget.
bool syncTierUp() {
    return envSwitchSet("DUET_CPU_TIER_UP_SYNC");
}

/// What the host code is generated for.
struct HostTarget {
    std::string cpu;      ///< the target's CPU, else the host's
    std::string features; ///< the target's features, else (no CPU named) the host's
    unsigned optLevel = 3;
    std::string vectorWidth; ///< prefer-vector-width
};

HostTarget hostTarget(const TargetSpec& target, const BuildOptions& opts) {
    HostTarget h;
    h.cpu = target.cpuName.empty() ? sys::getHostCPUName().str() : target.cpuName;
    h.features = target.cpuFeatures;
    if (h.features.empty() && target.cpuName.empty()) {
        SubtargetFeatures f;
        for (const auto& e : sys::getHostCPUFeatures())
            f.AddFeature(e.getKey(), e.getValue());
        h.features = f.getString();
    }
    h.optLevel = opts.effectiveOptLevel() == 0 ? 0 : opts.effectiveOptLevel() == 1 ? 1 : 3;
    return h;
}

/// The vector width for the target machine's CPU and features (a CPU named without features
/// has that CPU's): the device reports the same choice (cpu_device.cpp), so its preferred
/// vector widths and sub-group size are the lanes the work-item loops are widened to.
void chooseVectorWidth(HostTarget& h, const TargetMachine& tm) {
    const MCSubtargetInfo& sti = *tm.getMCSubtargetInfo();
    const CpuVectorWidth w =
        cpuVectorWidth(h.cpu, sti.checkFeatures("+avx512f"), sti.checkFeatures("+avx"));
    h.vectorWidth = std::to_string(w.bits);
    if (wg::cpuJitLogEnabled())
        std::fprintf(stderr, "duet: cpu: code for %s with %u-bit vectors (%s)\n", h.cpu.c_str(),
                     w.bits, w.why.c_str());
}

orc::JITTargetMachineBuilder machineBuilder(const HostTarget& h, const BuildOptions& opts) {
    orc::JITTargetMachineBuilder jtmb{Triple(sys::getProcessTriple())};
    jtmb.setCPU(h.cpu);
    {
        SubtargetFeatures f(h.features);
        jtmb.addFeatures(f.getFeatures());
    }
    jtmb.setCodeGenOptLevel(h.optLevel == 0 ? CodeGenOptLevel::None : CodeGenOptLevel::Aggressive);
    if (opts.effectiveMadEnable())
        jtmb.getOptions().AllowFPOpFusion = FPOpFusion::Fast;
    return jtmb;
}

/// Retargets the spir64 module to the host: triple, layout, each function's CPU and vectors.
void retarget(Module& m, const TargetMachine& tm, const HostTarget& h) {
    m.setTargetTriple(tm.getTargetTriple().str());
    m.setDataLayout(tm.createDataLayout());
    for (Function& f : m) {
        if (f.isDeclaration())
            continue;
        f.removeFnAttr("target-cpu");
        f.removeFnAttr("target-features");
        f.removeFnAttr("tune-cpu");
        f.addFnAttr("target-cpu", h.cpu);
        if (!h.features.empty())
            f.addFnAttr("target-features", h.features);
        f.addFnAttr("prefer-vector-width", h.vectorWidth);
    }
}

/// Kernels that share mutable program-scope variables must see one copy of them: sets
/// m_wholeModule, and counts the __global variables' bytes.
void noteProgramGlobals(const Module& m, CpuExecutable& exe) {
    for (const GlobalVariable& g : m.globals()) {
        if (g.isDeclaration() || g.hasAppendingLinkage())
            continue;
        // Kernel-scope __local variables stay behind unused once the work-group pass has
        // moved them into the group's local memory: they share nothing. (Counting them made
        // any program with a __local array compile whole, with no lazy JIT per kernel and no
        // streaming-store variants.)
        if (!g.isConstant() && !g.use_empty() && g.getAddressSpace() != 3)
            exe.m_wholeModule = true;
        if (g.getAddressSpace() == 1) // spir's __global
            exe.m_globalBytes += m.getDataLayout().getTypeAllocSize(g.getValueType());
    }
}

/// One LLJIT (one JITDylib) per executable; kernels are added as they are needed. Its objects
/// are kept for the program binary; symbols resolve to the printf hook and the process.
/// Returns the error for the build log, empty on success.
std::string createJit(CpuExecutable& exe, const orc::JITTargetMachineBuilder& jtmb) {
    auto jit = orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create();
    if (!jit)
        return "error: cannot create the JIT: " + toString(jit.takeError());
    exe.m_jit = std::move(*jit);
    orc::LLJIT& j = *exe.m_jit;
    cpu::attachPerfDump(j); // DUET_CPU_PERF=1
    j.getObjTransformLayer().setTransform(
        [object = exe.m_object, last = exe.m_lastObject](
            std::unique_ptr<MemoryBuffer> obj) -> Expected<std::unique_ptr<MemoryBuffer>> {
            object->append(obj->getBufferStart(), obj->getBufferSize());
            last->assign(obj->getBufferStart(), obj->getBufferSize());
            return obj;
        });
    orc::JITDylib& jd = j.getMainJITDylib();
    auto gen = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        j.getDataLayout().getGlobalPrefix());
    if (!gen)
        return "error: JIT symbol search: " + toString(gen.takeError());
    jd.addGenerator(std::move(*gen));
    orc::MangleAndInterner mangle(j.getExecutionSession(), j.getDataLayout());
    orc::SymbolMap hooks;
    const std::pair<const char*, orc::ExecutorAddr> hostHooks[] = {
        {kPrintfHookName, orc::ExecutorAddr::fromPtr(&__duet_printf)},
        {cpu::kCheckFailHookName, orc::ExecutorAddr::fromPtr(&__duet_check_fail)},
        {cpu::kCancelledHookName, orc::ExecutorAddr::fromPtr(&__duet_cancelled)},
        {cpu::kDeferredFailHookName, orc::ExecutorAddr::fromPtr(&__duet_check_fail_deferred)},
        {cpu::kCheckScanHookName, orc::ExecutorAddr::fromPtr(&__duet_check_scan)},
        {cpu::kBarrierCheckHookName, orc::ExecutorAddr::fromPtr(&__duet_check_barriers)}};
    for (const auto& [name, address] : hostHooks)
        hooks[mangle(name)] = {address, JITSymbolFlags::Exported | JITSymbolFlags::Callable};
    size_t enqueueHooks = 0;
    const cpu::DeviceEnqueueHook* enqueue = cpu::deviceEnqueueHooks(enqueueHooks);
    for (size_t i = 0; i < enqueueHooks; ++i)
        hooks[mangle(enqueue[i].name)] = {orc::ExecutorAddr::fromPtr(enqueue[i].address),
                                          JITSymbolFlags::Exported | JITSymbolFlags::Callable};
    if (Error e = jd.define(orc::absoluteSymbols(std::move(hooks))))
        return "error: JIT: " + toString(std::move(e));
    return {};
}

/// Kernel descriptions in the front end's order, completed with what the work-group pass
/// found, and each kernel's entry name. Returns the error for the build log, empty on success.
std::string describeCpuKernels(CpuExecutable& exe, const std::string& bitcode,
                               const std::vector<WorkGroupKernelInfo>& wgKernels) {
    exe.m_kernels = describeKernels(bitcode);
    for (KernelDesc& k : exe.m_kernels) {
        const WorkGroupKernelInfo* info = nullptr;
        for (const WorkGroupKernelInfo& w : wgKernels)
            if (w.name == k.name)
                info = &w;
        if (!info)
            return "error: internal: no work-group function for kernel " + k.name;
        k.hasBarrier = info->hasBarrier;
        k.usesPrintf = info->usesPrintf;
        k.observesGroups = info->observesGroups;
        k.staticLocalMemSize = info->staticLocalMemSize;
        // Per-work-item storage grows the stack with the group (bounds CL_KERNEL_WORK_GROUP_SIZE).
        k.privateMemSize = std::max(k.privateMemSize, info->perItemBytes);
        exe.m_entryNames.push_back(info->entryName);
    }
    return {};
}

} // namespace

FinalizeResult finalizeForCpu(const std::string& bitcode, std::string_view options,
                              std::string_view source, const TargetSpec& target) {
    initialiseLlvmOnce();
    std::string log;
    const BuildOptions opts = codegenOptions(options, log);

    auto tsctx = std::make_unique<LLVMContext>();
    LLVMContext& ctx = *tsctx;
    std::shared_ptr<std::string> diagnostics = collectDiagnostics(ctx);
    std::vector<WorkGroupKernelInfo> wgKernels;
    const ExecutionGuards guards = guardsFromEnvironment(log);
    const auto start = std::chrono::steady_clock::now();
    Prepared prepared =
        prepareModuleOrRetry(bitcode, ctx, *diagnostics, opts, guards, wgKernels, log);
    if (!prepared.module)
        return FinalizeResult::failure(log + prepared.error);
    if (wg::cpuJitLogEnabled()) {
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        std::fprintf(stderr,
                     "duet: cpu: build: bitcode read and builtins linked in %.1f ms, work-group "
                     "functions and checks in %.1f ms (machine code: at each kernel's first "
                     "launch)\n",
                     prepared.linkMs, ms - prepared.linkMs);
    }
    std::unique_ptr<Module> m = std::move(prepared.module);

    HostTarget host = hostTarget(target, opts);
    orc::JITTargetMachineBuilder jtmb = machineBuilder(host, opts);
    auto tm = jtmb.createTargetMachine();
    if (!tm)
        return FinalizeResult::failure(
            log + "error: no code generator for the host: " + toString(tm.takeError()));
    chooseVectorWidth(host, **tm);
    retarget(*m, **tm, host);
    guardIntegerDivision(*m);
    applyFastMath(*m, opts);

    auto exe = std::make_shared<CpuExecutable>();
    exe->m_diagnostics = diagnostics; // the context's handler writes there while the JIT lives
    exe->m_optLevel = host.optLevel;
    exe->m_features = host.features;
    exe->m_unsafeMath = opts.effectiveUnsafeMath();
    exe->m_guards = guards;
    noteProgramGlobals(*m, *exe);
    // Tiered: quick code first, unless the build asked for no optimisation (its code is quick
    // already).
    if (const double budget = cpu::tierUpBudgetMs(); budget > 0 && host.optLevel > 0) {
        orc::JITTargetMachineBuilder quick = jtmb;
        quick.setCodeGenOptLevel(CodeGenOptLevel::None);
        if (auto qtm = quick.createTargetMachine()) {
            exe->m_quickTm = std::move(*qtm);
            exe->m_tierBudgetMs = budget;
        } else {
            consumeError(qtm.takeError()); // no quick tier: every kernel optimised at once
        }
    }
    if (opts.saveTemps)
        log += saveTemps(*m, **tm, exe->m_quickTm.get(), opts, wgKernels, host.optLevel);

    if (std::string error = createJit(*exe, jtmb); !error.empty())
        return FinalizeResult::failure(log + error);
    if (std::string error = describeCpuKernels(*exe, bitcode, wgKernels); !error.empty())
        return FinalizeResult::failure(log + error);
    if (!diagnostics->empty())
        return FinalizeResult::failure(log + *diagnostics);
    exe->m_entries.assign(exe->m_kernels.size(), nullptr);
    exe->m_streaming = std::make_unique<std::atomic<void*>[]>(exe->m_kernels.size());
    exe->m_streamingLaunched = std::make_unique<std::atomic<bool>[]>(exe->m_kernels.size());
    exe->m_optimised = std::make_unique<std::atomic<void*>[]>(exe->m_kernels.size());
    exe->m_tierUp = std::make_unique<std::atomic<uint8_t>[]>(exe->m_kernels.size());
    for (size_t i = 0; i < exe->m_kernels.size(); ++i) {
        exe->m_optimised[i].store(nullptr);
        exe->m_tierUp[i].store(CpuExecutable::kNotAsked);
    }
    exe->m_quickMs.assign(exe->m_kernels.size(), 0.0);
    exe->m_quickCompileMs.assign(exe->m_kernels.size(), 0.0);
    exe->m_quickMsPerItem.assign(exe->m_kernels.size(), {0.0, 0.0});
    exe->m_quickLaunches.assign(exe->m_kernels.size(), 0);
    exe->m_tm = std::move(*tm);
    exe->m_jtmb = jtmb;
    exe->m_syncTierUp = syncTierUp();
    exe->m_eagerTierUp = cpu::tierUpEager();
    exe->m_module = std::move(m);
    exe->m_context = orc::ThreadSafeContext(std::move(tsctx));

    ProgramBinary& bin = exe->m_binaryParts;
    bin.type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
    bin.targetKind = kCpuBinaryKind;
    bin.targetName = host.cpu;
    bin.options = std::string(options);
    bin.source = std::string(source);
    bin.bitcode = bitcode;
    bin.machine = kEmX86_64;

    FinalizeResult r;
    r.log = std::move(log);
    r.executable = std::move(exe);
    return r;
}

void initialiseCpuCodegen() {
    initialiseLlvmOnce();
}

} // namespace duet::rt
