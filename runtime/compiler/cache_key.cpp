// The persistent program cache's key: a SHA-256 of everything a clBuildProgram result depends on.
#include "compiler/front_end.hpp"
#include "compiler/options.hpp"

#include <clang/Basic/Version.h>
#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/SHA256.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <elf.h>
#include <link.h>

extern char** environ;

namespace duet::rt {
namespace {

/// The GNU build ID of the loaded object holding `address` (libduet-opencl.so, libLLVM,
/// libclang-cpp), else its path, size and modification time; empty when none is found.
std::string objectIdentity(const void* address) {
    struct Search {
        uintptr_t address;
        std::string identity;
    } search{reinterpret_cast<uintptr_t>(address), {}};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto& s = *static_cast<Search*>(data);
            bool inside = false;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
                if (ph.p_type == PT_LOAD && s.address >= start && s.address < start + ph.p_memsz)
                    inside = true;
            }
            if (!inside)
                return 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                if (ph.p_type != PT_NOTE)
                    continue;
                const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
                const char* end = p + ph.p_memsz;
                while (p + sizeof(ElfW(Nhdr)) <= end) {
                    ElfW(Nhdr) n;
                    std::memcpy(&n, p, sizeof n);
                    const char* name = p + sizeof n;
                    const char* desc = name + ((n.n_namesz + 3) & ~3u);
                    if (desc + n.n_descsz > end)
                        break;
                    if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 &&
                        std::memcmp(name, "GNU", 4) == 0) {
                        s.identity = "build-id:" + std::string(desc, n.n_descsz);
                        return 1;
                    }
                    p = desc + ((n.n_descsz + 3) & ~3u);
                }
            }
            // No build ID: the file's path, size and time (a relink changes them).
            std::string path =
                info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
            std::error_code ec;
            const auto size = std::filesystem::file_size(path, ec);
            const auto time = std::filesystem::last_write_time(path, ec);
            s.identity = "file:" + path + ":" + std::to_string(size) + ":" +
                         std::to_string(time.time_since_epoch().count());
            return 1;
        },
        &search);
    return search.identity;
}

/// What never changes in this process: the code of Duet (its embedded builtin libraries
/// included), LLVM and clang, and the host CPU the CPU device generates code for.
const std::string& processIdentity() {
    static const std::string id = [] {
        std::string s = "duet-program-cache-1\n";
        s += "duet " + objectIdentity(reinterpret_cast<const void*>(&programCacheKey)) + "\n";
        s += "llvm " LLVM_VERSION_STRING " " +
             objectIdentity(reinterpret_cast<const void*>(&llvm::sys::getProcessTriple)) + "\n";
        s += "clang " + clang::getClangFullVersion() + " " +
             objectIdentity(reinterpret_cast<const void*>(&clang::getClangFullVersion)) + "\n";
        s += "host " + llvm::sys::getHostCPUName().str() + " ";
        for (const auto& f : llvm::sys::getHostCPUFeatures())
            s += (f.getValue() ? "+" : "-") + f.getKey().str() + ",";
        s += "\n";
        return s;
    }();
    return id;
}

/// A file the build reads: its path, size and modification time ("missing" when absent).
std::string fileIdentity(const std::filesystem::path& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec)
        return path.string() + ":missing";
    const auto time = std::filesystem::last_write_time(path, ec);
    return path.string() + ":" + std::to_string(size) + ":" +
           std::to_string(time.time_since_epoch().count());
}

/// Environment variables that may change generated code or logs: every DUET_* (DUET_CPU_CHECKS,
/// DUET_KERNEL_TIMEOUT, DUET_CPU_VECTOR_WIDTH, DUET_BUILD_OPTIONS, ...) except the cache's own
/// and DUET_LOG, and AMD's build-option variables. Sorted, so their order does not matter.
/// DUET_CPU_TIER_UP_* are left out too: they say when code is optimised, not how.
std::string environmentIdentity() {
    std::vector<std::string> vars;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view v(*e);
        const std::string_view name = v.substr(0, v.find('='));
        if (name.starts_with("DUET_")) {
            if (name == "DUET_LOG" || name == "DUET_CACHE" || name == "DUET_CACHE_DIR" ||
                name == "DUET_CACHE_MAX_MB" || name.starts_with("DUET_CPU_TIER_UP"))
                continue;
        } else if (!name.starts_with("AMD_OCL_BUILD_OPTIONS")) {
            continue;
        }
        vars.emplace_back(v);
    }
    std::sort(vars.begin(), vars.end());
    std::string s;
    for (const std::string& v : vars)
        s += v + '\0';
    return s;
}

/// Whether the source may read files: `include` (#include, __has_include) or `import` (#import)
/// anywhere outside comments, string literals included, after line splices are joined.
/// Conservative: such builds are not cached, since the files they read are not in the key.
bool mayReadFiles(std::string_view source) {
    std::string text;
    text.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\\') { // a splice: clang allows blanks between '\' and the newline
            size_t j = i + 1;
            while (j < source.size() &&
                   (source[j] == ' ' || source[j] == '\t' || source[j] == '\r'))
                ++j;
            if (j < source.size() && source[j] == '\n') {
                i = j;
                continue;
            }
        }
        text.push_back(source[i]);
    }
    std::string code; // the text less its comments
    code.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (c == '"' || c == '\'') { // a literal: kept whole, so "/*" in it opens no comment
            size_t j = i + 1;
            while (j < text.size() && text[j] != c && text[j] != '\n')
                j += text[j] == '\\' ? 2 : 1;
            j = std::min(j + 1, text.size());
            code.append(text, i, j - i);
            i = j;
        } else if (text.compare(i, 2, "//") == 0) {
            i = text.find('\n', i);
            if (i == std::string::npos)
                break;
        } else if (text.compare(i, 2, "/*") == 0) {
            const size_t end = text.find("*/", i + 2);
            if (end == std::string::npos)
                break;
            code.push_back(' ');
            i = end + 2;
        } else {
            code.push_back(c);
            ++i;
        }
    }
    return code.find("include") != std::string::npos || code.find("import") != std::string::npos;
}

std::string hexDigits(const std::array<uint8_t, 32>& digest) {
    static const char* hex = "0123456789abcdef";
    std::string key;
    for (uint8_t b : digest) {
        key += hex[b >> 4];
        key += hex[b & 15];
    }
    return key;
}

} // namespace

std::string programCacheKey(std::string_view source, std::string_view options,
                            const TargetSpec& target) {
    const std::string effective = effectiveBuildOptions(options);
    ParsedOptions parsed = parseBuildOptions(effective, OptionsKind::Compile);
    // Bad options are not cached: the build reports them.
    if (!parsed.ok || parsed.options.saveTemps || !parsed.options.includeDirs.empty() ||
        mayReadFiles(source))
        return {};

    llvm::SHA256 h;
    auto add = [&h](std::string_view field) {
        const uint64_t size = field.size();
        h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&size), sizeof size));
        h.update(llvm::StringRef(field.data(), field.size()));
    };
    add(processIdentity());
    add(target.triple);
    add(target.cpuName);
    add(target.cpuFeatures);
    for (const std::string& e : target.clExtensions)
        add(e);
    add(std::to_string(target.fp64) + std::to_string(target.images) + " " +
        std::to_string(target.openclVersion) + " " + std::to_string(target.dwarfVersion) + " " +
        std::to_string(target.binaryKind) + " " + std::to_string(target.keepValueNames));
    for (unsigned v : target.clStdVersions)
        add(std::to_string(v));
    for (const std::string& a : target.frontEndArgs)
        add(a);
    for (const std::string& f : target.cacheKeyFiles)
        add(fileIdentity(f));
#ifdef DUET_CLANG_RESOURCE_DIR
    add(fileIdentity(std::filesystem::path(DUET_CLANG_RESOURCE_DIR) / "include" /
                     "opencl-c-base.h"));
#endif
    add(environmentIdentity());
    add(options);
    add(effective);
    add(source);
    return hexDigits(h.final());
}

std::string codeCacheKey(std::string_view what) {
    const std::string environment = environmentIdentity();
    llvm::SHA256 h;
    for (std::string_view field :
         {std::string_view("duet-code-cache-1"), std::string_view(processIdentity()),
          std::string_view(environment), what}) {
        const uint64_t size = field.size();
        h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&size), sizeof size));
        h.update(llvm::StringRef(field.data(), field.size()));
    }
    return hexDigits(h.final());
}

} // namespace duet::rt
