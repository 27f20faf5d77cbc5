// SPIR-V -> LLVM bitcode for clCreateProgramWithIL programs: llvm-spirv-15 in a child process
// (LLVM 15 and 19 cannot share a process, and the module is untrusted input), its output
// (LLVM 15 bitcode, which LLVM 19 reads) brought to the state the OpenCL C front end leaves.
#include "compiler/front_end.hpp"
#include "compiler/llvm_util.hpp"
#include "compiler/options.hpp"
#include "compiler/spirv_module.hpp"
#include "compiler/spirv_retarget.hpp"
#include "core/data_files.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

#ifndef DUET_LLVM_SPIRV_DEFAULT
#define DUET_LLVM_SPIRV_DEFAULT ""
#endif

namespace duet::rt {
namespace {

/// The translator: $DUET_LLVM_SPIRV when set (empty: none; read at each call, tests change it),
/// else the one a relocatable bundle carries beside the runtime (lib/spirv/llvm-spirv, a script
/// that runs llvm-spirv-15 with the libraries it brings: scripts/bundle.sh --spirv), else the
/// path found at configure time (Debian's llvm-spirv-15).
std::string translatorPath() {
    if (const char* e = std::getenv("DUET_LLVM_SPIRV"))
        return e;
    static const std::string found = runtimeDataPath("spirv/llvm-spirv", DUET_LLVM_SPIRV_DEFAULT);
    return found;
}

bool translatorUsable() {
    const std::string p = translatorPath();
    return !p.empty() && ::access(p.c_str(), X_OK) == 0;
}

/// Seconds a translation may take ($DUET_SPIRV_TIMEOUT, default 60) before it is killed.
double translatorTimeout() {
    if (const char* e = std::getenv("DUET_SPIRV_TIMEOUT")) {
        char* end = nullptr;
        double v = std::strtod(e, &end);
        if (end != e && v > 0)
            return v;
    }
    return 60.0;
}

/// A private directory under $TMPDIR (or /tmp), removed with everything in it.
struct TempDir {
    std::string path;
    TempDir() {
        const char* base = std::getenv("TMPDIR");
        std::string templ = std::string(base && *base ? base : "/tmp") + "/duet-spirv-XXXXXX";
        if (::mkdtemp(templ.data()))
            path = templ;
    }
    ~TempDir() {
        if (!path.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    }
};

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Runs `argv` with no input and stdout and stderr into `logPath`; kills it after `timeout`
/// seconds. "" on exit status 0, else what went wrong.
std::string runChild(const std::vector<std::string>& argv, const std::string& logPath,
                     double timeout) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    // None of the application's descriptors (sockets, GL, other builds' files) go with it.
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return "cannot start " + argv[0] + ": " + std::strerror(rc);
    const auto start = std::chrono::steady_clock::now();
    auto pause = std::chrono::milliseconds(1);
    int status = 0;
    for (;;) {
        pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return std::string("waiting for the translator failed: ") + std::strerror(errno);
        std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
        if (spent.count() > timeout) {
            ::kill(pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.0f", timeout);
            return std::string("the translator did not finish within ") + buf +
                   " s (DUET_SPIRV_TIMEOUT) and was stopped";
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(20));
    }
    if (WIFSIGNALED(status))
        return "the translator died of signal " + std::to_string(WTERMSIG(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return "the translator exited with status " + std::to_string(WEXITSTATUS(status));
    return "";
}

/// The data layout clang 19 gives spir64 modules (the translator writes the older SPIR one),
/// so that an IL program's types are laid out as an OpenCL C program's are.
constexpr const char* kSpir64DataLayout =
    "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-G1";

/// True for the devices whose code generator takes spir64 modules (the CPU device).
bool spirTarget(const TargetSpec& target) {
    return llvm::StringRef(target.triple).starts_with("spir");
}

/// Brings the translator's module to the state the front end leaves for the device's code
/// generator; "" when done, else why not. A GPU device's module is retargeted from spir64 to its
/// triple (spirv_retarget.cpp).
std::string adopt(std::unique_ptr<llvm::Module>& module, const TargetSpec& target,
                  const BuildOptions& options) {
    llvm::Module& m = *module;
    m.setTargetTriple(spirTarget(target) ? target.triple : "spir64-unknown-unknown");
    m.setDataLayout(kSpir64DataLayout);
    for (llvm::Function& f : m) {
        // Argument names come from the module's OpName (--spirv-gen-kernel-arg-name-md); a
        // module without them has no argument information (CL_KERNEL_ARG_INFO_NOT_AVAILABLE).
        if (llvm::MDNode* names = f.getMetadata("kernel_arg_name")) {
            bool any = false;
            for (const llvm::MDOperand& op : names->operands())
                if (auto* s = llvm::dyn_cast_or_null<llvm::MDString>(op.get()))
                    any |= !s->getString().empty();
            if (!any)
                f.setMetadata("kernel_arg_name", nullptr);
        }
    }
    std::string verify;
    llvm::raw_string_ostream os(verify);
    if (llvm::verifyModule(m, &os)) {
        os.flush();
        return "the translated module is not valid LLVM IR: " + verify;
    }
    if (spirTarget(target))
        return "";
    // OpFDiv of floats has the accuracy of OpenCL C's `/` (2.5 ulp, SPIR-V OpenCL environment
    // §7.4) unless -cl-fp32-correctly-rounded-divide-sqrt: marked as clang marks it, so that a GPU
    // device divides as it does for OpenCL C (the CTS's spirv_new compares the two bit for bit).
    if (!options.fp32CorrectlyRoundedDivideSqrt) {
        llvm::MDNode* accuracy = llvm::MDBuilder(m.getContext()).createFPMath(2.5f);
        for (llvm::Function& f : m)
            for (llvm::BasicBlock& bb : f)
                for (llvm::Instruction& i : bb)
                    if (i.getOpcode() == llvm::Instruction::FDiv &&
                        i.getType()->getScalarType()->isFloatTy() &&
                        !i.getMetadata(llvm::LLVMContext::MD_fpmath))
                        i.setMetadata(llvm::LLVMContext::MD_fpmath, accuracy);
    }
    if (std::string why = retargetSpirModule(module, target); !why.empty())
        return "the module cannot be taken to this device (" + target.triple + "): " + why;
    if (llvm::verifyModule(*module, &os)) {
        os.flush();
        return "internal: the module retargeted to " + target.triple +
               " is not valid LLVM IR: " + verify;
    }
    return "";
}

} // namespace

std::vector<cl_name_version> FrontEndToolchain::ilVersions() const {
    std::vector<cl_name_version> out;
    if (!m_target.spirv || !translatorUsable())
        return out;
    for (unsigned minor = 0; minor < kSpirvMinorVersions; ++minor) {
        cl_name_version v{};
        v.version = CL_MAKE_VERSION(1, minor, 0);
        std::snprintf(v.name, sizeof v.name, "SPIR-V");
        out.push_back(v);
    }
    return out;
}

ILCheckResult FrontEndToolchain::checkIL(std::span<const unsigned char> il) const {
    if (ilVersions().empty())
        return {CL_INVALID_OPERATION,
                m_target.spirv ? "the SPIR-V translator (llvm-spirv-15; DUET_LLVM_SPIRV) is not "
                                 "installed"
                               : "the device does not build SPIR-V",
                0,
                {}};
    return checkSpirvModule(il);
}

CompileResult FrontEndToolchain::compileIL(std::span<const unsigned char> il,
                                           const SpecConstantValues& specValues,
                                           std::string_view options) const {
    CompileResult result;
    auto fail = [&](std::string why) {
        result.status = CL_COMPILE_PROGRAM_FAILURE;
        result.log += "error: " + why;
        if (result.log.back() != '\n')
            result.log += '\n';
        return result;
    };
    // The options are checked as for OpenCL C; those of the preprocessor (-D, -I) and -cl-std
    // have nothing to act on in a module, the rest reach the code generator through finalize.
    ParsedOptions parsed = parseBuildOptions(effectiveBuildOptions(options), OptionsKind::Compile);
    if (!parsed.ok) {
        result.status = CL_INVALID_COMPILER_OPTIONS;
        result.log = "error: " + parsed.error + "\n";
        return result;
    }
    if (!m_target.spirv)
        return fail("this device does not build SPIR-V (CL_DEVICE_IL_VERSION is empty)");
    const std::string translator = translatorPath();
    if (!translatorUsable())
        return fail("the SPIR-V translator '" + translator +
                    "' is not installed (package llvm-spirv-15; DUET_LLVM_SPIRV)");

    std::vector<uint32_t> words = specialiseSpirvModule(il, specValues);
    TempDir dir;
    if (dir.path.empty())
        return fail(std::string("cannot make a temporary directory: ") + std::strerror(errno));
    const std::string in = dir.path + "/module.spv", out = dir.path + "/module.bc",
                      log = dir.path + "/translator.log";
    {
        std::ofstream f(in, std::ios::binary);
        f.write(reinterpret_cast<const char*>(words.data()),
                std::streamsize(words.size() * sizeof(uint32_t)));
        if (!f)
            return fail("cannot write " + in);
    }
    // CL2.0 names: the translator calls the OpenCL C 2.0 builtins by the Itanium-mangled names
    // clang gives them (_Z13get_global_idj, atomic_fetch_add_explicit on generic pointers,
    // work_group_barrier), the ones the builtin libraries define; CL1.2 would call 1.2 atomics on
    // generic pointers, which OpenCL C has no overloads of.
    std::string why = runChild({translator, "-r", "--spirv-target-env=CL2.0",
                                "--spirv-gen-kernel-arg-name-md", "-o", out, in},
                               log, translatorTimeout());
    std::string message = readFile(log);
    if (!why.empty())
        return fail("translating the SPIR-V module to LLVM IR failed: " + why +
                    (message.empty() ? "" : ":\n" + message));

    llvm::LLVMContext ctx;
    std::string error;
    std::unique_ptr<llvm::Module> m = parseBitcode(readFile(out), ctx, &error);
    if (!m)
        return fail("the translator's output is not readable bitcode: " + error);
    if (std::string bad = adopt(m, m_target, parsed.options); !bad.empty())
        return fail(bad);
    result.log = message; // the translator's warnings, if any
    result.bitcode = writeBitcode(*m);
    return result;
}

} // namespace duet::rt
