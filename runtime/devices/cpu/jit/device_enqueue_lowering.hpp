// Device-side enqueue calls made callable on the host, for the CPU device's code generator.
// Private to the CPU code generator: includes LLVM headers.
#pragma once

#include <llvm/IR/Module.h>

namespace duet::rt {

/// Rewrites the calls clang emits for enqueue_kernel and the get_kernel_* queries
/// (`__enqueue_kernel_basic`, `_basic_events`, `_varargs`, `_events_varargs`,
/// `__get_kernel_*_impl`) for the host functions of devices/cpu/device_enqueue.cpp: the block's
/// kernel (clang passes the address of `<kernel>_block_invoke_kernel`) becomes a pointer to its
/// name, which the runtime looks up in the program, and the ndrange_t passed `byval` is passed
/// by pointer. Returns true when the module calls any of them.
bool lowerDeviceEnqueue(llvm::Module& module);

} // namespace duet::rt
