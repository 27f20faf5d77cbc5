// -save-temps[=prefix] (AMD's build option), in one place for every device's code generator:
// file-name prefixes, per-kernel modules and writing the files. Includes LLVM headers: private
// to runtime/compiler and the devices' code generators.
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <set>
#include <string>
#include <string_view>

namespace duet::rt {

struct BuildOptions;

/// The prefix of one build's temporary files: the -save-temps=prefix given, else AMD-style
/// `_temp_<n>_<deviceTag>` in the working directory (or in the folder the prefix names when it
/// ends in '/'), n counting this process's builds for that tag ("cpu", "gfx900").
std::string saveTempsPrefix(const BuildOptions& options, std::string_view deviceTag);

/// Functions and variables `root` reaches through its instructions and initialisers.
std::set<const llvm::GlobalValue*> reachableFrom(const llvm::Function& root);

/// A copy of `m` holding `root` and what it reaches, nothing else (for a kernel's .ll).
std::unique_ptr<llvm::Module> cloneReachable(const llvm::Module& m, const llvm::Function& root);

/// Writes one temporary file through `write`. Returns "" or the build-log warning line that
/// says why the file could not be written.
std::string writeTempFile(const std::string& path,
                          llvm::function_ref<void(llvm::raw_pwrite_stream&)> write);

} // namespace duet::rt
