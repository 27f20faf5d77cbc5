// The OpenCL C front end: source -> LLVM bitcode, linking, kernel metadata, object binaries,
// for any target a device names. Knows no device. No LLVM headers here.
#pragma once

#include "core/toolchain.hpp"

#include <CL/cl.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
}

namespace duet::rt {

/// What a build needs to know about the target device; each device fills one.
struct TargetSpec {
    /// The triple clang parses for: "spir64-unknown-unknown" (the CPU device, retargeted to
    /// the host after its work-group pass), "amdgcn-amd-amdhsa", "nvptx64-nvidia-cuda".
    std::string triple = "spir64-unknown-unknown";
    std::string cpuName;     ///< LLVM CPU name for code generation ("znver4", "gfx900")
    std::string cpuFeatures; ///< LLVM feature string ("+avx512f,...")
    /// OpenCL C features and extensions the device reports, passed to clang as -cl-ext.
    std::vector<std::string> clExtensions;
    bool fp64 = true;
    bool images = true;
    /// The OpenCL C versions the device lists in CL_DEVICE_OPENCL_C_ALL_VERSIONS, as
    /// 100 * major + 10 * minor: -cl-std naming another fails the compile with a build log
    /// saying so (OpenCL 3.0 §5.8.6.5). By default what a 3.0 device without the 2.0 feature
    /// set lists.
    std::vector<unsigned> clStdVersions = {100, 110, 120, 300};
    /// The device's OpenCL version as an integer (CL_DEVICE_VERSION "OpenCL 3.0 ..." is 300):
    /// the value of __OPENCL_VERSION__, which the OpenCL C specification requires and clang
    /// leaves to the platform to define.
    unsigned openclVersion = 300;
    /// Extra cc1 arguments of this device ("-target-cpu", "gfx900", "-fno-builtin-printf").
    std::vector<std::string> frontEndArgs;
    /// The DWARF version of -g builds (clang's driver picks it per target the same way).
    unsigned dwarfVersion = 5;
    /// Registers the device's LLVM target before the first compile, so that clang's
    /// optimisation pipeline includes the target's passes (null: nothing to register).
    void (*initialiseTarget)() = nullptr;
    /// Called with the front end's module after its bitcode is written (or the build failed),
    /// right before it is destroyed, on the compiling thread: drops what the target's passes
    /// in clang's pipeline keep about it beyond its life (null: nothing to drop). The module
    /// may be left empty.
    void (*releaseModule)(llvm::Module& module, const TargetSpec& target) = nullptr;
    /// The target kind recorded in this device's program binaries (.note.duet; binary.hpp).
    uint32_t binaryKind = 0;
    /// Keep the names of values (kernel arguments) in the bitcode, for a code generator that
    /// reports them (the CPU device's checked kernels name the argument an access overran).
    bool keepValueNames = false;
    /// The device builds SPIR-V (clCreateProgramWithIL) through the translator
    /// (spirv_translate.cpp): its code generator takes the spir64 modules the translator gives.
    bool spirv = false;
    /// Files the device's code generator reads at build time (libclc's bitcode): their path,
    /// size and modification time are part of the program cache key.
    std::vector<std::string> cacheKeyFiles;
};

/// clCompileProgram (and the first half of clBuildProgram): OpenCL C -> bitcode.
/// Thread-safe: each call builds its own clang instance.
CompileResult compileSource(std::string_view source, std::string_view options,
                            std::span<const HeaderSource> headers, const TargetSpec& target);

/// The persistent program cache's key (64 hex digits) of clBuildProgram for `target`: a SHA-256
/// of the source, the options (as given and after the *_BUILD_OPTIONS variables), the target,
/// the code of Duet, LLVM and clang (build IDs), the host CPU, `target.cacheKeyFiles` and the
/// DUET_* environment (less DUET_CPU_TIER_UP_*: they say when code is optimised, not how). Empty
/// when the build must not be cached: -I, -save-temps, options that do not parse, or a source that
/// says `include` or `import` outside comments (it may read files).
std::string programCacheKey(std::string_view source, std::string_view options,
                            const TargetSpec& target);

/// The persistent code cache's key (64 hex digits) of machine code a device compiled from
/// `what` (a digest of the module and every setting of its compile): a SHA-256 of `what`, the
/// code of Duet, LLVM and clang (build IDs), the host CPU and the DUET_* environment (as
/// programCacheKey's).
std::string codeCacheKey(std::string_view what);

/// clLinkProgram: bitcode objects -> one module. `createLibrary` skips the final checks.
LinkResult linkBitcode(std::span<const std::string> objects, std::string_view options,
                       bool createLibrary);

/// Kernel metadata of a compiled or linked module (for CL_PROGRAM_KERNEL_NAMES and clCreateKernel).
/// Returns an empty vector on unreadable input.
std::vector<KernelDesc> describeKernels(const std::string& bitcode);

/// Wraps bitcode of a compiled object or library as a binary (ELF with .llvmir [+ .source]).
std::string makeObjectBinary(const std::string& bitcode, std::string_view source,
                             cl_program_binary_type type);

/// A device's code generation: bitcode -> its executable, and its program binaries back.
using FinalizeFn = FinalizeResult (*)(const std::string& bitcode, std::string_view options,
                                      std::string_view source, const TargetSpec& target);
using LoadBinaryFn = LoadBinaryResult (*)(std::span<const unsigned char> binary,
                                          const TargetSpec& target);

/// A device's Toolchain: the front end (compile, link, object binaries) for `target`, and the
/// device's own code generation (`finalize`, `loadBinary`) for the rest.
class FrontEndToolchain final : public Toolchain {
public:
    FrontEndToolchain(TargetSpec target, FinalizeFn finalize, LoadBinaryFn loadBinary)
        : m_target(std::move(target)), m_finalize(finalize), m_loadBinary(loadBinary) {}
    const TargetSpec& target() const { return m_target; }

    CompileResult compile(std::string_view source, std::string_view options,
                          std::span<const HeaderSource> headers) const override {
        return compileSource(source, options, headers, m_target);
    }
    LinkResult link(std::span<const std::string> objects, std::string_view options,
                    bool createLibrary) const override {
        return linkBitcode(objects, options, createLibrary);
    }
    FinalizeResult finalize(const std::string& bitcode, std::string_view options,
                            std::string_view source) const override {
        return m_finalize(bitcode, options, source, m_target);
    }
    LoadBinaryResult loadBinary(std::span<const unsigned char> binary) const override {
        return m_loadBinary(binary, m_target);
    }
    std::string cacheKey(std::string_view source, std::string_view options) const override {
        return programCacheKey(source, options, m_target);
    }
    std::string objectBinary(const std::string& bitcode, std::string_view source,
                             cl_program_binary_type type) const override {
        return makeObjectBinary(bitcode, source, type);
    }
    // SPIR-V (spirv_translate.cpp): only where TargetSpec::spirv is set and the translator is
    // installed.
    std::vector<cl_name_version> ilVersions() const override;
    ILCheckResult checkIL(std::span<const unsigned char> il) const override;
    CompileResult compileIL(std::span<const unsigned char> il, const SpecConstantValues& specValues,
                            std::string_view options) const override;

private:
    TargetSpec m_target;
    FinalizeFn m_finalize;
    LoadBinaryFn m_loadBinary;
};

} // namespace duet::rt
