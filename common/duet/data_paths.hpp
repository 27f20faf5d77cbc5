// Where programs find the source tree's data (kernels/, shaders/) and the build's other programs,
// both in the build tree and in a relocatable bundle (scripts/bundle.sh) where the paths compiled
// in do not exist: there, data lives in share/duet/ and programs in bin/, beside the folder of the
// running executable (bin/ or tests/).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace duet {

/// The folder holding the running executable, or an empty path if /proc cannot say.
inline std::filesystem::path executableDirectory() {
    std::error_code ec;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : exe.parent_path();
}

/// A data folder of the source tree (`name` is "kernels" or "shaders"): `$envVar` when set, else
/// a bundle's share/duet/<name> when the executable sits in one, else `compiledIn`.
inline std::string dataDirectory(const char* envVar, const char* name, const char* compiledIn) {
    if (const char* dir = std::getenv(envVar); dir && *dir)
        return dir;
    std::error_code ec;
    std::filesystem::path bundled = executableDirectory() / ".." / "share" / "duet" / name;
    if (std::filesystem::is_directory(bundled, ec))
        return bundled.lexically_normal().string();
    return compiledIn;
}

/// Another program of the build, given its build-tree path: in a bundle, the program of the same
/// name in bin/; elsewhere `compiledIn`.
inline std::string programPath(const char* compiledIn) {
    std::error_code ec;
    std::filesystem::path bundled =
        executableDirectory() / ".." / "bin" / std::filesystem::path(compiledIn).filename();
    if (std::filesystem::is_regular_file(bundled, ec))
        return bundled.lexically_normal().string();
    return compiledIn;
}

} // namespace duet
