// SPIR-V modules of the OpenCL environment: bounds-checked header and capability checks,
// validation, specialisation constants. No LLVM here (the IL fuzz target builds it alone).
#pragma once

#include "core/toolchain.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace duet::rt {

/// The SPIR-V versions Duet builds: what llvm-spirv 15 reads (CL_DEVICE_ILS_WITH_VERSION).
inline constexpr unsigned kSpirvMinorVersions = 5; ///< 1.0 .. 1.4

/// clCreateProgramWithIL's check of `il`: a whole number of 32-bit words with the SPIR-V magic
/// (either byte order), version 1.0-1.4, every instruction inside the module, the Kernel
/// capability and not Shader, the Physical64 addressing and OpenCL memory models; then
/// SPIRV-Tools' validator for the OpenCL environment (when the runtime was built with it).
/// CL_INVALID_VALUE with the reason otherwise. Never reads outside `il`.
ILCheckResult checkSpirvModule(std::span<const unsigned char> il);

/// `il` (checked by checkSpirvModule) as words in host byte order, with each specialisation
/// constant named in `values` given that value instead of its default. Values whose size does
/// not match the constant are left out (clSetProgramSpecializationConstant refuses them).
std::vector<uint32_t> specialiseSpirvModule(std::span<const unsigned char> il,
                                            const SpecConstantValues& values);

} // namespace duet::rt
