// Files the runtime reads at run time (clang's resource headers, libclc's bitcode), found beside
// the runtime first: a relocatable bundle (scripts/bundle.sh) carries them next to
// libduet-opencl.so, on hosts where LLVM is not installed.
#pragma once

#include <string>

namespace duet::rt {

/// `relative` under the folder of the file the runtime was loaded from (libduet-opencl.so, or an
/// executable that links the runtime in) when it exists there; otherwise `installed`.
/// Thread-safe; touches the file system on each call, so callers keep the answer.
std::string runtimeDataPath(const std::string& relative, const std::string& installed);

} // namespace duet::rt
