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

/// Functions that hold vectors wider than 16 bytes realign their stack frame ("stackrealign"):
/// the registers they spill are 32 or 64 bytes and the caller's stack is aligned to 16, and LLVM
/// cannot realign for spill slots it only finds it needs during register allocation, so they
/// went to slots as aligned as the frame happened to be. Half the time a spill and its reload
/// then split a cache line: the finite volumes' work-group function (120 spills and reloads of
/// ymm and zmm registers) ran 1.2x slower when the launching code's frame sat 16 or 48 bytes
/// off a 64-byte line than 0 or 32 (bench/README.md, session 36). The cost is a frame pointer.
/// DUET_CPU_REALIGN_SPILLS=0 turns it off (for comparisons; part of the JIT memo's key).
void realignWideSpills(llvm::Module& m);
bool realignWideSpillsEnabled();

/// `m` as an object file for `tm`; empty if the target cannot emit one.
std::string emitObject(llvm::Module& m, llvm::TargetMachine& tm);

/// `m` as assembly for `tm` into the file `path`; returns the problem, if any, for the log.
std::string writeAssembly(llvm::Module& m, llvm::TargetMachine& tm, const std::string& path);

} // namespace duet::rt::cpu
