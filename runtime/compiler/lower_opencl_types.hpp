// Lowering of OpenCL's opaque types (images, samplers) to plain values the CPU code generator
// can handle. Private to the compiler: includes LLVM headers.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

namespace duet::rt {

/// Rewrites every function signature, call, instruction and constant of `module` that uses
/// the SPIR-V target extension types clang emits for spir64:
///  - `target("spirv.Image", ...)` becomes `ptr addrspace(1)`, a pointer to the image's
///    KernelImageDesc (core/image.hpp; the executor passes one per image argument);
///  - `target("spirv.Sampler")` becomes `i32`, the CLK_* bits of the sampler.
/// Then it resolves the glue calls: `__translate_sampler_initializer(i32 x)` (sampler literals)
/// becomes `x`, and the builtin library's accessors `__duet_image_desc(image)` and
/// `__duet_sampler_bits(sampler)` (any overload) become their argument. Run on the linked
/// module (program + builtin library), before the work-group pass. Returns false and sets
/// `error` when something is left it cannot rewrite.
bool lowerOpenCLTypes(llvm::Module& module, std::string& error);

} // namespace duet::rt
