// compileSource: OpenCL C -> LLVM bitcode (spir64 for the CPU, amdgcn for GCN) with clang
// in-process.
#include "compiler/front_end.hpp"
#include "compiler/llvm_util.hpp"
#include "compiler/options.hpp"
#include "core/data_files.hpp"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/GlobalDecl.h>
#include <clang/AST/Mangle.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/SourceManager.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/MultiplexConsumer.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Metadata.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <filesystem>

#ifndef DUET_CLANG_RESOURCE_DIR
#error "DUET_CLANG_RESOURCE_DIR must name clang's resource directory"
#endif

namespace duet::rt {
namespace {

/// The name the program source has in diagnostics ("input.cl:3:7: error: ...").
constexpr const char* kMainFileName = "input.cl";
/// A second, in-memory home of clCompileProgram's headers, searched last (-I), so that
/// #include <name.h> finds them as well as #include "name.h".
constexpr const char* kHeaderDir = "/duet-input-headers";
/// An in-memory header included after clang's default one: #undefs of the header-only extension
/// macros clang defines for SPIR targets that the device does not list, and the macros of the
/// listed extensions clang does not define (kMacroOnlyExtensions).
constexpr const char* kExtensionsHeader = "/duet-internal/extensions.h";

/// The extensions opencl-c-base.h announces for SPIR targets (OpenCL C 2.0 and later) by
/// defining their macros; their functions are declared by those macros alone.
constexpr const char* kHeaderOnlyExtensions[] = {
    "cl_khr_subgroup_extended_types",   "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_ballot",           "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_shuffle",          "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_clustered_reduce", "cl_khr_subgroup_rotate",
};

/// Extensions of the language whose macro clang 19 does not define (or defines only from OpenCL
/// C 2.0 on) though they add nothing to declare: a device that lists one gets its macro in every
/// language version, as OpenCL C 3.0 §6.1 asks of every supported extension (CTS compiler
/// `compiler_defines_for_extensions`).
constexpr const char* kMacroOnlyExtensions[] = {
    "cl_khr_gl_depth_images",   // depth-stencil GL textures: formats, no new functions
    "cl_khr_srgb_image_writes", // write_imagef to sRGB images: the existing functions
};

bool lists(const TargetSpec& target, std::string_view e) {
    return std::find(target.clExtensions.begin(), target.clExtensions.end(), e) !=
           target.clExtensions.end();
}

/// kExtensionsHeader's text for `target`: empty when it lists every header-only extension and
/// none of the macro-only ones.
std::string extensionHeaderText(const TargetSpec& target) {
    std::string text;
    for (const char* e : kHeaderOnlyExtensions)
        if (!lists(target, e))
            text += std::string("#undef ") + e + "\n";
    for (const char* e : kMacroOnlyExtensions)
        if (lists(target, e))
            text += std::string("#ifndef ") + e + "\n#define " + e + " 1\n#endif\n";
    return text;
}

/// Remembers functions the user declared in the program's own files (not clang's headers, not
/// the implicit builtin declarations), by their IR name, so the linker can tell a missing user
/// function from a builtin still to be resolved against the builtin library.
class UserDeclRecorder final : public clang::ASTConsumer {
public:
    UserDeclRecorder(std::vector<std::string>& names, std::vector<std::string>& inlineDefs)
        : m_names(names), m_inlineDefs(inlineDefs) {}

    void Initialize(clang::ASTContext& ctx) override {
        m_ctx = &ctx;
        m_mangler.reset(ctx.createMangleContext());
    }

    bool HandleTopLevelDecl(clang::DeclGroupRef group) override {
        for (clang::Decl* d : group) {
            auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d);
            if (!fd || fd->isImplicit())
                continue;
            if (m_ctx->getSourceManager().isInSystemHeader(fd->getLocation()))
                continue;
            if (fd->doesThisDeclarationHaveABody()) {
                if (fd->isInlineSpecified() && fd->getStorageClass() == clang::SC_None &&
                    !fd->hasAttr<clang::OpenCLKernelAttr>())
                    m_inlineDefs.push_back(mangledName(fd));
                continue;
            }
            m_names.push_back(mangledName(fd));
        }
        return true;
    }

private:
    std::string mangledName(clang::FunctionDecl* fd) {
        std::string name;
        if (m_mangler->shouldMangleDeclName(fd)) {
            llvm::raw_string_ostream os(name);
            m_mangler->mangleName(clang::GlobalDecl(fd), os);
        } else {
            name = fd->getName().str();
        }
        return name;
    }

    std::vector<std::string>& m_names;
    std::vector<std::string>& m_inlineDefs;
    clang::ASTContext* m_ctx = nullptr;
    std::unique_ptr<clang::MangleContext> m_mangler;
};

/// EmitLLVMOnlyAction plus the user-declaration recorder.
class CompileAction final : public clang::EmitLLVMOnlyAction {
public:
    explicit CompileAction(llvm::LLVMContext* ctx) : clang::EmitLLVMOnlyAction(ctx) {}
    std::vector<std::string> userDeclarations;
    std::vector<std::string> inlineDefinitions; ///< plain `inline` (not static) definitions

protected:
    std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci,
                                                          llvm::StringRef inFile) override {
        std::vector<std::unique_ptr<clang::ASTConsumer>> consumers;
        consumers.push_back(clang::EmitLLVMOnlyAction::CreateASTConsumer(ci, inFile));
        if (!consumers.back())
            return nullptr;
        consumers.push_back(
            std::make_unique<UserDeclRecorder>(userDeclarations, inlineDefinitions));
        return std::make_unique<clang::MultiplexConsumer>(std::move(consumers));
    }
};

const char* clStdFlag(unsigned v) {
    switch (v) {
    case 100:
        return "-cl-std=CL1.0";
    case 110:
        return "-cl-std=CL1.1";
    case 200:
        return "-cl-std=CL2.0";
    case 300:
        return "-cl-std=CL3.0";
    default:
        return "-cl-std=CL1.2";
    }
}

/// clang's resource directory (opencl-c-base.h): a relocatable bundle's copy beside the runtime
/// (lib/clang/<major>), else the one LLVM's packages installed.
const std::string& clangResourceDir() {
    static const std::string dir = [] {
        std::filesystem::path installed(DUET_CLANG_RESOURCE_DIR);
        return runtimeDataPath((installed.parent_path().filename() / installed.filename()).string(),
                               installed);
    }();
    return dir;
}

/// The cc1 command line for one compilation (what the clang driver would pass, minus what a
/// host-less spir64 compile does not need).
std::vector<std::string> cc1Arguments(const BuildOptions& o, const TargetSpec& target,
                                      bool withHeaders) {
    // The device names the triple: the CPU device compiles through spir64 (retargeted to the
    // host after the work-group pass); GPU devices parse for their real target, so that address
    // spaces, the kernel calling convention and the ABI are their backend's from the start.
    // clang-format off
    std::vector<std::string> a = {
        "-triple", target.triple,
        // Same parsing mode as the builtin library (runtime/builtins/CMakeLists.txt), so mangled
        // builtin names agree; -fdeclare-opencl-builtins avoids parsing opencl-c.h.
        "-finclude-default-header", "-fdeclare-opencl-builtins",
        "-resource-dir", clangResourceDir(),
        // No host system headers: only clang's resource headers and the user's -I paths.
        "-nostdsysteminc",
        "-ffp-contract=on", "-ferror-limit", "50", "-main-file-name", kMainFileName,
    };
    // clang-format on
    a.insert(a.end(), target.frontEndArgs.begin(), target.frontEndArgs.end());
    a.push_back(clStdFlag(o.clStd));
    if (!extensionHeaderText(target).empty()) {
        a.push_back("-include");
        a.push_back(kExtensionsHeader);
    }

    std::string ext = "-cl-ext=-all";
    auto addExt = [&](const std::string& e) {
        if (!e.empty())
            ext += ",+" + e;
    };
    for (const std::string& e : target.clExtensions)
        addExt(e);
    if (target.fp64) {
        addExt("cl_khr_fp64");
        addExt("__opencl_c_fp64");
    }
    if (target.images)
        addExt("__opencl_c_images");
    a.push_back(ext);

    a.push_back("-fgnu89-inline"); // see compileSource: plain `inline` gets a body
    const unsigned opt = o.effectiveOptLevel();
    a.push_back("-O" + std::to_string(opt));
    if (opt == 0)
        a.push_back("-disable-O0-optnone"); // the device code generator still optimises
    // Checked kernels (DUET_KERNEL_CHECKS, read per build) name the argument an access overran.
    if (!o.saveTemps && !o.debugInfo && !target.keepValueNames && !kernelChecksRequested())
        a.push_back("-discard-value-names");

    // Spec options clang's cc1 knows under the same name (it derives the implied fast-math
    // flags and __FAST_RELAXED_MATH__ itself, as for the driver).
    struct Forward {
        bool BuildOptions::* field;
        const char* flag;
    };
    static constexpr Forward kForward[] = {
        {&BuildOptions::optDisable, "-cl-opt-disable"},
        {&BuildOptions::madEnable, "-cl-mad-enable"},
        {&BuildOptions::noSignedZeros, "-cl-no-signed-zeros"},
        {&BuildOptions::unsafeMathOptimizations, "-cl-unsafe-math-optimizations"},
        {&BuildOptions::finiteMathOnly, "-cl-finite-math-only"},
        {&BuildOptions::fastRelaxedMath, "-cl-fast-relaxed-math"},
        {&BuildOptions::singlePrecisionConstant, "-cl-single-precision-constant"},
        {&BuildOptions::fp32CorrectlyRoundedDivideSqrt, "-cl-fp32-correctly-rounded-divide-sqrt"},
        {&BuildOptions::kernelArgInfo, "-cl-kernel-arg-info"},
        {&BuildOptions::noWarnings, "-w"},
        {&BuildOptions::warningsAsErrors, "-Werror"},
    };
    for (const Forward& f : kForward)
        if (o.*f.field)
            a.push_back(f.flag);
    // Flush f32 denormals: a function attribute the CPU code generator honours.
    if (o.denormsAreZero)
        a.push_back("-fdenormal-fp-math-f32=preserve-sign,preserve-sign");
    // What the driver turns -cl-uniform-work-group-size into.
    if (o.uniformWorkGroupSize)
        a.push_back("-foffload-uniform-block");
    if (o.debugInfo) {
        a.push_back("-debug-info-kind=constructor");
        a.push_back("-dwarf-version=" + std::to_string(target.dwarfVersion));
    }
    // -cl-no-subgroup-ifp and -cl-strict-aliasing change nothing in the front end: the first
    // is a promise the CPU device does not need, the second is deprecated.

    // Before the user's -D options, as the spec's own predefined macro.
    a.push_back("-D__OPENCL_VERSION__=" + std::to_string(target.openclVersion));
    // Likewise __IMAGE_SUPPORT__ wherever the device has images: clang predefines it for SPIR
    // triples only, so the GCN and NVIDIA devices' kernels (amdgcn, nvptx64) lacked it.
    if (target.images && !target.triple.starts_with("spir"))
        a.push_back("-D__IMAGE_SUPPORT__=1");
    for (const std::string& d : o.defines) {
        a.push_back("-D");
        a.push_back(d);
    }
    for (const std::string& dir : o.includeDirs) {
        a.push_back("-I");
        a.push_back(dir);
    }
    if (withHeaders) {
        a.push_back("-I");
        a.push_back(kHeaderDir);
    }
    a.push_back("-x");
    a.push_back("cl");
    a.push_back(kMainFileName);
    return a;
}

} // namespace

CompileResult compileSource(std::string_view source, std::string_view options,
                            std::span<const HeaderSource> headers, const TargetSpec& target) {
    CompileResult result;
    const std::string effective = effectiveBuildOptions(options);
    ParsedOptions parsed = parseBuildOptions(effective, OptionsKind::Compile);
    if (!parsed.ok) {
        result.status = CL_INVALID_COMPILER_OPTIONS;
        result.log = "error: " + parsed.error + "\n";
        return result;
    }

    // "Calls to clBuildProgram or clCompileProgram with the -cl-std=CLX.Y option will fail to
    // compile the program for any devices [that do not list] OpenCL C X.Y" (§5.8.6.5).
    const unsigned std = parsed.options.clStd;
    if (parsed.options.clStdGiven &&
        std::find(target.clStdVersions.begin(), target.clStdVersions.end(), std) ==
            target.clStdVersions.end()) {
        std::string listed;
        for (unsigned v : target.clStdVersions)
            listed += (listed.empty() ? "" : ", ") + std::to_string(v / 100) + "." +
                      std::to_string(v / 10 % 10);
        result.status = CL_COMPILE_PROGRAM_FAILURE;
        result.log = "error: -cl-std=CL" + std::to_string(std / 100) + "." +
                     std::to_string(std / 10 % 10) +
                     ": the device does not support this OpenCL C version "
                     "(CL_DEVICE_OPENCL_C_ALL_VERSIONS lists " +
                     listed + ")\n";
        return result;
    }
    if (target.initialiseTarget)
        target.initialiseTarget();
    llvm::raw_string_ostream logStream(result.log);
    std::vector<std::string> args = cc1Arguments(parsed.options, target, !headers.empty());
    std::vector<const char*> argv;
    argv.reserve(args.size());
    for (const std::string& s : args)
        argv.push_back(s.c_str());

    // Diagnostics of the command line itself (should not happen: options were checked).
    auto invocation = std::make_shared<clang::CompilerInvocation>();
    {
        llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diagOpts = new clang::DiagnosticOptions;
        clang::TextDiagnosticPrinter printer(logStream, diagOpts.get());
        clang::DiagnosticsEngine diags(new clang::DiagnosticIDs, diagOpts, &printer, false);
        if (!clang::CompilerInvocation::CreateFromArgs(*invocation, argv, diags) ||
            diags.hasErrorOccurred()) {
            logStream.flush();
            result.status = CL_INVALID_COMPILER_OPTIONS;
            return result;
        }
    }

    clang::CompilerInstance ci;
    ci.setInvocation(invocation);
    clang::DiagnosticOptions& diagOpts = ci.getDiagnosticOpts();
    diagOpts.ShowColors = false;
    auto* printer = new clang::TextDiagnosticPrinter(logStream, &diagOpts);
    ci.createDiagnostics(printer, /*ShouldOwnClient=*/true);
    ci.setVerboseOutputStream(logStream); // "N errors generated." belongs in the log too

    // Source and headers live in memory, layered over a private view of the real file system
    // (its own working directory object, so concurrent builds never chdir). Both layers share
    // the process's working directory: "input.cl" and the headers appear there, relative -I
    // paths and #include "file" of real files work as in a command-line compiler.
    auto physical = llvm::vfs::createPhysicalFileSystem();
    llvm::ErrorOr<std::string> cwd = physical->getCurrentWorkingDirectory();
    const std::string workDir = cwd ? *cwd : std::string("/");
    auto memFs = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    memFs->setCurrentWorkingDirectory(workDir);
    memFs->addFile(kMainFileName, 0,
                   llvm::MemoryBuffer::getMemBufferCopy(
                       llvm::StringRef(source.data(), source.size()), kMainFileName));
    if (std::string text = extensionHeaderText(target); !text.empty())
        memFs->addFile(kExtensionsHeader, 0,
                       llvm::MemoryBuffer::getMemBufferCopy(text, kExtensionsHeader));
    for (const HeaderSource& h : headers) {
        if (h.includeName.empty())
            continue;
        memFs->addFile(h.includeName, 0,
                       llvm::MemoryBuffer::getMemBufferCopy(h.source, h.includeName));
        if (!llvm::sys::path::is_absolute(h.includeName))
            memFs->addFile(std::string(kHeaderDir) + "/" + h.includeName, 0,
                           llvm::MemoryBuffer::getMemBufferCopy(h.source, h.includeName));
    }
    auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(std::move(physical));
    overlay->pushOverlay(memFs);
    overlay->setCurrentWorkingDirectory(workDir);
    ci.createFileManager(overlay);
    ci.createSourceManager(ci.getFileManager());

    llvm::LLVMContext llvmCtx;
    CompileAction action(&llvmCtx);
    const bool ok = ci.ExecuteAction(action);
    std::unique_ptr<llvm::Module> module = action.takeModule();
    // Before the module goes, on every return below (TargetSpec::releaseModule).
    struct Release {
        llvm::Module* module;
        const TargetSpec& target;
        ~Release() {
            if (module && target.releaseModule)
                target.releaseModule(*module, target);
        }
    } release{module.get(), target};
    logStream.flush();
    if (!ok || !module || ci.getDiagnostics().hasErrorOccurred()) {
        result.status = CL_COMPILE_PROGRAM_FAILURE;
        if (result.log.empty())
            result.log = "error: compilation failed\n";
        return result;
    }

    // A plain `inline` definition is, by C99's rule, no external definition: a call the
    // optimiser does not inline (any call at -O0) would be left undefined. OpenCL programs
    // written for other implementations rely on it working, as `inline` does in C++: clang
    // emits the body (-fgnu89-inline) and it becomes linkonce_odr, so the copies that
    // separately compiled objects carry from a shared header merge at clLinkProgram.
    for (const std::string& name : action.inlineDefinitions)
        if (llvm::Function* f = module->getFunction(name);
            f && !f->isDeclaration() && f->hasExternalLinkage())
            f->setLinkage(llvm::GlobalValue::LinkOnceODRLinkage);

    // Record user-declared functions this object leaves undefined (see kUserDeclarationsMD).
    std::vector<llvm::Metadata*> undefined;
    for (const std::string& name : action.userDeclarations) {
        llvm::Function* f = module->getFunction(name);
        if (f && f->isDeclaration())
            undefined.push_back(llvm::MDString::get(llvmCtx, name));
    }
    if (!undefined.empty()) {
        llvm::NamedMDNode* md = module->getOrInsertNamedMetadata(kUserDeclarationsMD);
        md->addOperand(llvm::MDNode::get(llvmCtx, undefined));
    }

    result.bitcode = writeBitcode(*module);
    return result;
}

} // namespace duet::rt
