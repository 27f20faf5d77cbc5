// Where programs find the source tree's data (kernels/, shaders/) and the build's other programs,
// both in the build tree and in a relocatable bundle (scripts/bundle.sh) where the paths compiled
// in do not exist: there, data lives in share/duet/ and programs in bin/, beside the folder of the
// running executable (bin/ or tests/), whose messages about libraries the host lacks point at the
// bundle's setup-env.sh.
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

/// The top folder of the relocatable bundle whose bin/ or tests/ is `exeDir` (by default the
/// running executable's folder): the folder above it, when that holds setup-env.sh and
/// lib/libduet-opencl.so; else an empty path.
inline std::filesystem::path
bundleDirectory(const std::filesystem::path& exeDir = executableDirectory()) {
    if (exeDir.empty())
        return {};
    std::filesystem::path dir = exeDir.lexically_normal();
    if (!dir.has_filename()) // "bin/"
        dir = dir.parent_path();
    const std::filesystem::path top = dir.parent_path();
    std::error_code ec;
    if (std::filesystem::is_regular_file(top / "setup-env.sh", ec) &&
        std::filesystem::is_regular_file(top / "lib" / "libduet-opencl.so", ec))
        return top;
    return {};
}

/// For the message of a program that cannot load a library a bundle carries in lib/`folder`
/// ("glvnd": libEGL.so.1): when `bundle` (bundleDirectory()) has that folder and
/// `ldLibraryPath` (LD_LIBRARY_PATH; may be null) does not name it, which setup-env.sh would have
/// done on a host that lacks the library, the advice to source setup-env.sh; else empty.
inline std::string bundleSetupAdvice(const std::filesystem::path& bundle, const char* folder,
                                     const char* ldLibraryPath) {
    std::error_code ec;
    const std::filesystem::path dir = bundle / "lib" / folder;
    if (bundle.empty() || !std::filesystem::is_directory(dir, ec))
        return {};
    const std::filesystem::path want = std::filesystem::weakly_canonical(dir, ec);
    const std::string paths = ldLibraryPath ? ldLibraryPath : "";
    for (size_t at = 0; at <= paths.size();) {
        size_t end = paths.find(':', at);
        if (end == std::string::npos)
            end = paths.size();
        const std::string entry = paths.substr(at, end - at);
        if (!entry.empty() && std::filesystem::weakly_canonical(entry, ec) == want)
            return {};
        at = end + 1;
    }
    const std::string script = (bundle / "setup-env.sh").string();
    return "this program is in a Duet bundle: source its setup-env.sh first (. " + script +
           ", or run " + script + " PROGRAM ...), which adds the bundle's lib/" + folder +
           " where the host lacks its libraries";
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
