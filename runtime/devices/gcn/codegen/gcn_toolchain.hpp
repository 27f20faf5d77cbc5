// The GCN device's compiler: the OpenCL C front end for amdgcn, then libclc and Duet's GCN
// builtins, AMDGPU code generation, lld and the code object loader. No LLVM headers here.
#pragma once

#include "compiler/front_end.hpp"

#include <memory>

namespace duet::rt {

/// Target kind recorded in GCN program binaries (.note.duet).
inline constexpr uint32_t kGcnBinaryKind = 1;

/// Registers the AMDGPU target with LLVM (once). The GCN device's compiles call it first, so
/// that clang's optimisation pipeline always includes the AMDGPU passes.
void initialiseAmdgpuTarget();

/// Bitcode (amdgcn) -> libclc and Duet's GCN additions linked -> optimised -> AMDGPU machine
/// code -> lld -> an amdhsa code object (v5) loaded into host memory. The executable's entry()
/// is a `const gcn::KernelEntry*` (devices/gcn/code_object.hpp).
FinalizeResult finalizeForGcn(const std::string& bitcode, std::string_view options,
                              std::string_view source, const TargetSpec& target);

/// The GCN device's binaries: executables carry the code object in .text (e_machine
/// EM_AMDGPU) and are loaded from it without recompiling.
LoadBinaryResult loadGcnBinary(std::span<const unsigned char> binary, const TargetSpec& target);

/// `target` with the GCN front-end settings: the amdgcn triple, processor `target.cpuName`
/// (gfx900 when empty), printf kept as a call, the AMDGPU target initialiser, binary kind.
TargetSpec withGcnFrontEnd(TargetSpec target);

/// The GCN device's Toolchain for `target` (withGcnFrontEnd applied).
std::unique_ptr<Toolchain> makeGcnToolchain(TargetSpec target);

} // namespace duet::rt
