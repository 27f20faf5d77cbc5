// What the CPU JIT compiles, cut from a program's module: one kernel's part, a whole program's
// tier; and what it makes of a module: an object file, an assembly file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <llvm/ADT/StringRef.h>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace duet::rt::cpu {

/// One kernel's work-group function and what it reaches, on their own: every other
/// definition stays out, and what is cloned is private to the clone. Null when `entryName`
/// is not in `m`.
std::unique_ptr<llvm::Module> kernelPart(const llvm::Module& m, llvm::StringRef entryName);

/// A whole-program module (kernels that share program-scope variables) for one of the two
/// tiers, both in one JITDylib: each keeps its kernels' entries and its own copy of every
/// function and constant, but the variables exist once: the quick tier (compiled first)
/// defines them, with its entries renamed `<entry>.quick`; the optimised tier only declares
/// them.
void prepareWholeTier(llvm::Module& m, const std::vector<std::string>& entries, bool quick);

/// `m` as an object file for `tm`; empty if the target cannot emit one.
std::string emitObject(llvm::Module& m, llvm::TargetMachine& tm);

/// `m` as assembly for `tm` into the file `path`; returns the problem, if any, for the log.
std::string writeAssembly(llvm::Module& m, llvm::TargetMachine& tm, const std::string& path);

} // namespace duet::rt::cpu
