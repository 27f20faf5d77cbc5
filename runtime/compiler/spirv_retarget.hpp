// Retargeting the translator's spir64 modules (clCreateProgramWithIL) to a GPU device's triple.
// Private to runtime/compiler: spirv_translate.cpp calls it; no LLVM headers here.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace llvm {
class Module;
}

namespace duet::rt {

struct TargetSpec;

/// Rewrites `m` (spir64, as the translator's module is adopted) into the module clang's front
/// end would have produced for `target.triple` from the same OpenCL C: every address space
/// mapped to the target's (clang's own map for OpenCL C), the target's data layout, the
/// Itanium-mangled names of functions with pointer parameters spelled with the target's address
/// space qualifiers, calling conventions, kernel markers and attributes, __local/private NULL as
/// clang writes it. Returns "" when done (`m` replaced by the new module), else why not (`m` is
/// left as it was).
std::string retargetSpirModule(std::unique_ptr<llvm::Module>& m, const TargetSpec& target);

/// The name `mangled` (an Itanium-mangled OpenCL C function name as clang gives spir64, whose
/// pointer parameters carry SPIR address spaces) with its pointer parameters' address space
/// qualifiers rewritten: `qualifiers[n]` is what SPIR address space n (private, global,
/// constant, local, generic) is spelled as on the target ("U3AS1", or "" for none). Empty when
/// the name uses grammar this does not follow (then it is left as it is). For tests.
std::string respellAddressSpaces(std::string_view mangled, const std::string (&qualifiers)[5]);

} // namespace duet::rt
