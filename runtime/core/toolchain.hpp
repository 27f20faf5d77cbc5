// What core asks of a device's compiler: compile, link, finalise, load binaries. No LLVM here.
#pragma once

#include "core/kernel_desc.hpp"

#include <CL/cl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace duet::rt {

namespace cpu {
class TieredCode; // devices/cpu/tiered_code.hpp
}

/// A program header for clCompileProgram's input_headers.
struct HeaderSource {
    std::string includeName;
    std::string source;
};

struct CompileResult {
    cl_int status =
        CL_SUCCESS;      ///< CL_SUCCESS, CL_INVALID_COMPILER_OPTIONS, CL_COMPILE_PROGRAM_FAILURE
    std::string log;     ///< clang's diagnostics, verbatim
    std::string bitcode; ///< LLVM bitcode of the compiled object
};

struct LinkResult {
    cl_int status = CL_SUCCESS; ///< CL_SUCCESS, CL_INVALID_LINKER_OPTIONS, CL_LINK_PROGRAM_FAILURE
    std::string log;
    std::string bitcode; ///< the linked module (library or executable input)
};

/// Run-time guards an executable was built with (DUET_KERNEL_CHECKS or its older name
/// DUET_CPU_CHECKS, and DUET_KERNEL_TIMEOUT, read when the program is built): the CPU device
/// compiles them into the code and hands it the launch's argument bounds and a cancel flag; the
/// GCN model checks accesses and a deadline as it runs; the NVIDIA device polls a timer on loop
/// back-edges and checks accesses against bounds in a per-launch record.
struct ExecutionGuards {
    bool boundsChecks = false;   ///< global, constant (CPU, NVIDIA: also local) accesses checked
    double timeoutSeconds = 0.0; ///< > 0: launches running longer are stopped and fail
};

/// Whether checked kernels are asked for: DUET_KERNEL_CHECKS when set (any value but 0 is on),
/// else DUET_CPU_CHECKS.
bool kernelChecksRequested();

/// The guards a build made now gets. A DUET_KERNEL_TIMEOUT that is not a positive number of
/// seconds (nor 0) gets a warning in `log` and no timeout.
ExecutionGuards executionGuardsFromEnvironment(std::string& log);

/// Executable code for one device: what clBuildProgram/clLinkProgram produce in the end.
/// Thread-safe after creation; lives as long as any kernel made from it.
class DeviceExecutable {
public:
    virtual ~DeviceExecutable() = default;
    virtual const std::vector<KernelDesc>& kernels() const = 0;
    /// The device's handle of kernel `index` (in kernels() order), opaque to core: the CPU's
    /// work-group function, the GCN code object entry, the NVIDIA CUfunction.
    virtual void* entry(size_t index) const = 0;
    /// CPU: kernel `index`'s optimised code with non-temporal stores, for launches whose
    /// buffers exceed the last-level cache; made with the optimised code of a kernel that had
    /// such a launch (cpu::TieredCode::noteStreamingLaunch), so null until then, and where the
    /// variant would be the same code. Lock-free; never compiles. The thread that runs it must
    /// execute a store fence (sfence) after its last call.
    virtual void* streamingEntry(size_t /*index*/) const { return nullptr; }
    /// CPU: the executable's quick and optimised code per kernel (tiered compilation), for the
    /// device's executor; null elsewhere. (The code generators build without RTTI.)
    virtual const cpu::TieredCode* tieredCode() const { return nullptr; }
    /// The program binary for CL_PROGRAM_BINARIES: an ELF with .source, .llvmir, .text.
    virtual const std::string& binary() const = 0;
    /// What the persistent program cache stores: a binary loadBinary accepts and turns back into
    /// this executable. By default binary(); the CPU device leaves out the machine code, which it
    /// makes again on load anyway (and would otherwise compile every kernel to write).
    virtual std::string cacheBinary() const { return binary(); }
    /// Bytes of program-scope __global variables (CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE).
    virtual size_t globalVariableTotalSize() const { return 0; }
    /// The run-time guards compiled into the code (none by default).
    virtual ExecutionGuards guards() const { return {}; }
};

struct FinalizeResult {
    cl_int status = CL_SUCCESS; ///< CL_SUCCESS, CL_BUILD_PROGRAM_FAILURE, CL_LINK_PROGRAM_FAILURE
    std::string log;
    std::shared_ptr<DeviceExecutable> executable;

    /// CL_BUILD_PROGRAM_FAILURE with `log` (given a final newline).
    static FinalizeResult failure(std::string log) {
        FinalizeResult r;
        r.status = CL_BUILD_PROGRAM_FAILURE;
        r.log = std::move(log);
        if (!r.log.empty() && r.log.back() != '\n')
            r.log.push_back('\n');
        return r;
    }
};

/// clCreateProgramWithBinary: recreate an executable (or a compiled object) from binary().
/// On success exactly one of `executable` or `bitcode` is set: a compiled-object binary
/// gives bitcode only.
struct LoadBinaryResult {
    cl_int status = CL_SUCCESS; ///< CL_SUCCESS or CL_INVALID_BINARY
    std::string log;
    std::shared_ptr<DeviceExecutable> executable;
    std::string bitcode;
    std::string source;
    cl_program_binary_type binaryType = CL_PROGRAM_BINARY_TYPE_NONE;

    /// CL_INVALID_BINARY with "error: `reason`" as the log.
    static LoadBinaryResult invalid(const std::string& reason) {
        LoadBinaryResult r;
        r.status = CL_INVALID_BINARY;
        r.log = "error: " + reason + "\n";
        return r;
    }
};

/// A SPIR-V module as clCreateProgramWithIL found it (Toolchain::checkIL).
struct ILCheckResult {
    cl_int status = CL_SUCCESS; ///< CL_SUCCESS or CL_INVALID_VALUE (CL_INVALID_OPERATION: no IL)
    std::string reason;         ///< why the module was refused, one readable line or more
    uint32_t version = 0;       ///< the module's SPIR-V version word: (major << 16) | (minor << 8)
    /// Each specialisation constant's SpecId and its size in bytes (a boolean is 1 byte), the
    /// sizes clSetProgramSpecializationConstant accepts.
    std::map<uint32_t, uint32_t> specConstantSizes;
};

/// Values given with clSetProgramSpecializationConstant: SpecId -> the bytes given.
using SpecConstantValues = std::map<uint32_t, std::string>;

/// A device's compiler as core's Program sees it. The OpenCL C front end (runtime/compiler)
/// implements compile, link and objectBinary for any target; each device adds finalize and
/// loadBinary (its code generation). Every member is thread-safe.
class Toolchain {
public:
    virtual ~Toolchain() = default;
    /// clCompileProgram (and the first half of clBuildProgram): OpenCL C -> bitcode.
    virtual CompileResult compile(std::string_view source, std::string_view options,
                                  std::span<const HeaderSource> headers) const = 0;
    /// clLinkProgram: bitcode objects -> one module. `createLibrary` skips the final checks.
    virtual LinkResult link(std::span<const std::string> objects, std::string_view options,
                            bool createLibrary) const = 0;
    /// Bitcode -> code the device runs. `options` are the build options (-cl-*, -save-temps);
    /// `source` is kept in the binary.
    virtual FinalizeResult finalize(const std::string& bitcode, std::string_view options,
                                    std::string_view source) const = 0;
    /// A CL_PROGRAM_BINARIES blob of this device back into an executable or object.
    virtual LoadBinaryResult loadBinary(std::span<const unsigned char> binary) const = 0;
    /// The persistent program cache's key (hex digits) for clBuildProgram of `source` with
    /// `options` on this device: everything the result depends on is hashed in. Empty: this
    /// build must not be cached (it reads files, writes -save-temps files, or the toolchain
    /// cannot tell what it depends on).
    virtual std::string cacheKey(std::string_view /*source*/, std::string_view /*options*/) const {
        return {};
    }
    /// Wraps bitcode of a compiled object or library as a program binary.
    virtual std::string objectBinary(const std::string& bitcode, std::string_view source,
                                     cl_program_binary_type type) const = 0;

    /// The intermediate languages this device builds (CL_DEVICE_ILS_WITH_VERSION): empty when
    /// it takes none (or the SPIR-V translator is not installed).
    virtual std::vector<cl_name_version> ilVersions() const { return {}; }
    /// clCreateProgramWithIL: checks a module without building it.
    virtual ILCheckResult checkIL(std::span<const unsigned char> /*il*/) const {
        return {CL_INVALID_OPERATION, "the device takes no intermediate language", 0, {}};
    }
    /// clBuildProgram/clCompileProgram of an IL program: the module, specialised with
    /// `specValues`, -> bitcode as compile() gives it (CL_COMPILE_PROGRAM_FAILURE with the
    /// translator's message in the log when it cannot be translated).
    virtual CompileResult compileIL(std::span<const unsigned char> /*il*/,
                                    const SpecConstantValues& /*specValues*/,
                                    std::string_view /*options*/) const {
        return {CL_COMPILE_PROGRAM_FAILURE,
                "error: this device does not build SPIR-V (CL_DEVICE_IL_VERSION is empty)\n",
                {}};
    }
};

} // namespace duet::rt
