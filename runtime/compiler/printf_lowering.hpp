// OpenCL C printf for the GPU devices: each call becomes one record in a printf buffer (layout
// in core/printf_buffer.hpp), with a small hook per device for how a kernel finds the buffer and
// reserves space in it. For the devices' code generators; no LLVM headers.
#pragma once

#include <string>
#include <vector>

namespace llvm {
class IRBuilderBase;
class Module;
class Value;
} // namespace llvm

namespace duet::rt {

struct PrintfFormat;

/// What a device tells the printf lowering. Both hooks emit IR at the builder's insertion
/// point, inside `__duet_printf_alloc` (an internal always-inline function the printf calls
/// call, so the kernels end up with its body).
struct PrintfLoweringTarget {
    const char* deviceName = "this";  ///< for errors: "which the <deviceName> device cannot print"
    unsigned genericAddressSpace = 0; ///< where %s and %p pointers are cast to (flat, generic)
    unsigned globalAddressSpace = 1;  ///< where the buffer is
    /// The buffer's address (its header) as a `ptr addrspace(globalAddressSpace)`; a null
    /// pointer when the launch has none (every printf then returns -1).
    llvm::Value* (*bufferAddress)(llvm::IRBuilderBase& b) = nullptr;
    /// Adds `bytes` (i64) to the u64 at `offset` (the header's first word, a global pointer)
    /// atomically and returns the old value (i64). Relaxed is enough: the host reads the records
    /// once the kernel has finished; the scope must be every work-item of the launch.
    llvm::Value* (*reserve)(llvm::IRBuilderBase& b, llvm::Value* offset,
                            llvm::Value* bytes) = nullptr;
};

/// Turns every call of `printf` in `m` into one record in the buffer `target` names and
/// appends the formats it numbered (ids from 1, in the order first met; one per distinct format
/// and argument sizes) to `formats`. The front end must leave printf a plain call
/// (-fno-builtin-printf): clang's own lowerings are CUDA's vprintf on nvptx and, on AMDGPU, one
/// that copies a %s argument only when it is a literal. Here each string is measured and
/// copied at run time, wherever it lives (constant, global, local or private memory). printf
/// returns 0, or -1 when the record did not fit (OpenCL C 3.0 §6.15.14.3). Returns one
/// "error: ..." line per call that cannot be lowered (a format that is not a constant string, a
/// %s argument that is not a pointer, an argument printf cannot record) and for printf used
/// other than by calling it; empty when every call was lowered.
std::string lowerPrintf(llvm::Module& m, const PrintfLoweringTarget& target,
                        std::vector<PrintfFormat>& formats);

} // namespace duet::rt
