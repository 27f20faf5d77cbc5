// Kernel code made visible to Linux perf. Private to the CPU code generator: includes LLVM
// headers.
#pragma once

#include <llvm/ExecutionEngine/Orc/LLJIT.h>

namespace duet::rt::cpu {

/// With DUET_CPU_PERF=1, every function the JIT links (each kernel's quick and optimised code,
/// its variants) is written, name and machine code, to a jitdump file, jit-<pid>.dump in
/// $JITDUMPDIR (default: the working directory), which `perf record -k 1` notes and
/// `perf inject --jit` turns into symbols and per-instruction profiles of the kernels
/// (runtime/devices/cpu/README.md, "Profiling kernels"). Off by default: it writes every
/// function's code to disk. Returns whether `jit` got the plugin that writes them.
bool attachPerfDump(llvm::orc::LLJIT& jit);

} // namespace duet::rt::cpu
