// SPIR opaque types (images, samplers, events, pipes, ...) -> plain pointers, for the CPU device.
// Private to the CPU code generator: includes LLVM headers.
#pragma once

#include <llvm/IR/Module.h>

namespace duet::rt {

/// Name of the parameter attribute that marks a kernel's sampler_t parameters once their type
/// is a plain pointer (the work-group pass loads them as a uint32_t, see compiler.hpp).
inline constexpr const char* kSamplerParamAttr = "duet.sampler";

/// Rewrites every `target("spirv.*")` type of `module` (clang's image*_t, sampler_t, event_t,
/// queue_t, clk_event_t, reserve_id_t, pipes) to `ptr`: the x86 code generator has no lowering
/// for target extension types. The contract with the builtin library (runtime/builtins/cpu):
///  - an image value is the `void*` the executor stores at the kernel's args[i] (its image
///    descriptor); `__duet_image_ptr(image)` (any overload; declared, not defined, in the
///    library) returns it as a `__global void*`;
///  - a sampler value is the 32-bit sampler (the encoding of a sampler_t literal, as
///    `__translate_sampler_initializer` receives it) zero-extended into the pointer;
///    `__duet_sampler_bits(sampler)` returns it as a `uint`;
///  - event_t and the other types carry whatever the library puts in them.
void lowerOpaqueTypes(llvm::Module& module);

} // namespace duet::rt
