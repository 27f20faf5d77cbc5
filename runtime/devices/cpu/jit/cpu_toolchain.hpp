// The CPU device's compiler: the OpenCL C front end plus work-group functions, optimisation and
// the ORC JIT (finalize.cpp), and its program binaries. No LLVM headers here.
#pragma once

#include "compiler/front_end.hpp"

#include <memory>

namespace duet::rt {

/// Target kind recorded in CPU program binaries (.note.duet).
inline constexpr uint32_t kCpuBinaryKind = 0;

/// Bitcode -> machine code for the CPU (work-group functions, optimisation, JIT).
/// `options` are the build options (for -cl-* flags, -save-temps). `source` is kept in the binary.
FinalizeResult finalizeForCpu(const std::string& bitcode, std::string_view options,
                              std::string_view source, const TargetSpec& target);

/// A CPU program binary back into an executable (re-JIT from its .llvmir) or an object.
LoadBinaryResult loadCpuBinary(std::span<const unsigned char> binary, const TargetSpec& target);

/// `target` with the CPU device's front-end settings (spir64, binary kind).
TargetSpec withCpuFrontEnd(TargetSpec target);

/// LLVM's native target, libmvec and the process-wide code generation settings the CPU
/// device's code relies on, once per process. makeCpuToolchain calls it, so it runs when the
/// device is created, before any build on any device (finalize.cpp).
void initialiseCpuCodegen();

/// The CPU device's Toolchain for `target` (spir64 parsing, host code generation).
std::unique_ptr<Toolchain> makeCpuToolchain(TargetSpec target);

} // namespace duet::rt
