// OpenCL C printf for the GCN device: compiler/printf_lowering.hpp with the GCN device's hooks.
// Private to devices/gcn/codegen; no LLVM headers.
#pragma once

#include <string>

namespace llvm {
class Module;
}

namespace duet::rt {

/// Turns every printf call into one record in the printf buffer (core/printf_buffer.hpp) that
/// the runtime passes as hidden_printf_buffer (code object v5: at kImplicitPrintfBufferOffset
/// from the implicit-argument pointer; offsets reserved with an agent-scope atomic), and lists
/// the formats in `llvm.printf.fmts` ("id:argument count:sizes:format"), which the AMDGPU
/// backend copies into the code object's `amdhsa.printf`. Returns "error: ..." lines for calls
/// that cannot be lowered; empty when every call was.
std::string lowerGcnPrintf(llvm::Module& m);

} // namespace duet::rt
