// runtimeDataPath: a data file beside the loaded runtime, else where LLVM's packages install it.
#include "core/data_files.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>

namespace duet::rt {

std::string runtimeDataPath(const std::string& relative, const std::string& installed) {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&runtimeDataPath), &info) || !info.dli_fname)
        return installed;
    std::error_code ec;
    std::filesystem::path beside = std::filesystem::path(info.dli_fname).parent_path() / relative;
    return std::filesystem::exists(beside, ec) ? beside.string() : installed;
}

} // namespace duet::rt
