// OpenCL C printf for the CPU device: the host function that JIT-compiled kernels call.
// No LLVM headers: the executor and tests include it. Formatting is core's (printf_format).
#pragma once

#include "core/printf_format.hpp"

#include <cstdint>

namespace duet::rt {

/// Symbol name of the hook below, as generated code calls it.
inline constexpr const char* kPrintfHookName = "__duet_printf";

} // namespace duet::rt

/// The hook generated code calls for printf: formats, then writes the text in one piece to the
/// PrintfSink `printfCtx` (or stdout, under a process-wide mutex). Returns 0, or -1 when the
/// format is malformed (OpenCL's printf result).
extern "C" int __duet_printf(void* printfCtx, const char* format, const char* args,
                             const uint32_t* layout, uint32_t count);
