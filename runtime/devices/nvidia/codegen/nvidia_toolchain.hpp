// The NVIDIA device's compiler: the OpenCL C front end for nvptx64, then Duet's NVIDIA builtins
// and libclc, the NVPTX backend to PTX text, and its program binaries. No LLVM headers here.
#pragma once

#include "compiler/front_end.hpp"
#include "devices/nvidia/codegen/ptx_module.hpp"

#include <memory>
#include <string>

namespace duet::rt {

/// Target kind recorded in NVIDIA program binaries (.note.duet; compiler/binary.hpp).
inline constexpr uint32_t kNvidiaBinaryKind = 2;
/// ELF e_machine of the binary's .text (PTX text): EM_CUDA.
inline constexpr uint16_t kEmCuda = 190;
/// The PTX ISA the code generator writes unless the GPU needs a newer one or the driver takes
/// only an older one: 8.0 (CUDA 12.0), checked with ptxas and the driver on sm_90.
inline constexpr unsigned kPreferredPtx = 80;

/// Registers the NVPTX target with LLVM (once). The NVIDIA device's compiles call it first, so
/// that clang's optimisation pipeline includes the NVPTX passes.
void initialiseNvptxTarget();

/// What the code generator targets for one GPU.
struct NvptxTargetChoice {
    std::string sm;     ///< LLVM processor ("sm_90"); empty when no target fits
    unsigned ptx = 0;   ///< PTX ISA, major*10 + minor
    std::string reason; ///< why no target fits (sm empty)
};

/// The newest PTX ISA the driver of CUDA version `driverVersion` (cuDriverGetVersion:
/// 1000*major + 10*minor) JIT-compiles; 0 when the version is unknown or too old.
unsigned maxPtxForDriver(int driverVersion);

/// The target for a GPU of compute capability `major`.`minor` under a driver of CUDA version
/// `driverVersion` (0: unknown). The processor is the newest one LLVM 19 knows that is not newer
/// than the GPU (PTX for sm_90 runs on later GPUs through the driver's JIT; never an
/// arch-specific "a" target, which would not). The PTX ISA is kPreferredPtx, raised to what the
/// processor needs and lowered to what the driver accepts.
NvptxTargetChoice chooseNvptxTarget(int major, int minor, int driverVersion);

/// Bitcode (nvptx64) -> Duet's NVIDIA builtins and libclc linked (lazily, only what is needed)
/// -> kernel ABI (launch block, __local offsets) -> O3 -> NVPTX backend -> PTX text with Duet's
/// header (devices/nvidia/codegen/ptx_module.hpp). The executable's entry() is a
/// `const nvidia::KernelEntry*`. Uses target.cpuName ("sm_90") and target.cpuFeatures
/// ("+ptx80").
FinalizeResult finalizeForNvidia(const std::string& bitcode, std::string_view options,
                                 std::string_view source, const TargetSpec& target);

/// The NVIDIA device's binaries: executables carry the PTX in .text (e_machine EM_CUDA) and are
/// used as they are when built for the same processor and a PTX ISA the target accepts;
/// otherwise rebuilt from .llvmir.
LoadBinaryResult loadNvidiaBinary(std::span<const unsigned char> binary, const TargetSpec& target);

/// What finalizeForNvidia and loadNvidiaBinary make: PTX text and what the launcher needs to
/// run its kernels. kernels()[i] and module().kernels[i] are the same kernel; entry(i) points at
/// the latter. Immutable once made.
class NvidiaExecutable final : public DeviceExecutable {
public:
    const std::vector<KernelDesc>& kernels() const override { return m_kernels; }
    void* entry(size_t index) const override;
    const std::string& binary() const override { return m_binary; }
    size_t globalVariableTotalSize() const override { return m_globalBytes; }
    /// DUET_KERNEL_CHECKS and DUET_KERNEL_TIMEOUT as the PTX has them.
    ExecutionGuards guards() const override {
        ExecutionGuards g;
        g.boundsChecks = m_module.boundsChecks;
        g.timeoutSeconds = double(m_module.timeoutMicroseconds) / 1e6;
        return g;
    }

    /// The PTX text (Duet's header first), what cuModuleLoadDataEx takes.
    const std::string& ptx() const { return m_ptx; }
    const nvidia::PtxModule& module() const { return m_module; }

private:
    friend struct NvidiaExecutableBuilder;
    std::vector<KernelDesc> m_kernels;
    nvidia::PtxModule m_module;
    std::string m_ptx, m_binary;
    size_t m_globalBytes = 0;
};

/// What the NVIDIA device implements, space separated: OpenCL extensions (CL_DEVICE_EXTENSIONS)
/// and OpenCL C 3.0 optional features (CL_DEVICE_OPENCL_C_FEATURES). Images included (plain
/// memory read by software, as on GCN).
extern const char* const kNvidiaExtensions;
extern const char* const kNvidiaFeatures;

/// The TargetSpec of an NVIDIA GPU: processor `sm`, PTX ISA `ptx`, the extensions and features
/// above for clang (withNvidiaFrontEnd not yet applied).
TargetSpec nvidiaTarget(const std::string& sm, unsigned ptx);

/// `target` with the NVIDIA front-end settings: the nvptx64 triple, processor and PTX ISA
/// (sm_90 and +ptx80 when empty), printf kept as a call (lowered to Duet's printf buffer, not
/// CUDA's vprintf), the atomic scope macro clang defines only for SPIR, the NVPTX target
/// initialiser and binary kind, images on.
TargetSpec withNvidiaFrontEnd(TargetSpec target);

/// The NVIDIA device's Toolchain for `target` (withNvidiaFrontEnd applied).
std::unique_ptr<Toolchain> makeNvidiaToolchain(TargetSpec target);

} // namespace duet::rt
