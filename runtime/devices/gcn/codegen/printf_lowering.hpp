// OpenCL C printf for the GCN device, in the module the finalizer links (finalize_gcn.cpp).
// Private to runtime/compiler; no LLVM headers.
#pragma once

#include <string>

namespace llvm {
class Module;
}

namespace duet::rt {

/// Turns every printf call into one record in the printf buffer (layout in
/// core/printf_buffer.hpp) and lists the formats in `llvm.printf.fmts`, which the
/// AMDGPU backend copies into the code object's `amdhsa.printf`. The front end leaves printf
/// a plain call (-fno-builtin-printf): clang's own AMDGPU lowering copies a %s argument only
/// when it is a literal and writes "???" for every other string. Here each string is measured
/// and copied at run time, wherever it lives (constant, global, local or private memory).
/// Also defines `__duet_printf_alloc`, which reserves a record. Returns "error: ..." lines for
/// calls that cannot be lowered (a format that is not a constant string, a %s argument that is not
/// a pointer); empty when every call was.
std::string lowerGcnPrintf(llvm::Module& m);

} // namespace duet::rt
