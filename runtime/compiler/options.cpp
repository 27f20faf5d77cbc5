// Parsing of OpenCL build/link option strings and the AMD/Duet environment overrides.
#include "compiler/options.hpp"

#include <cstdlib>
#include <cstring>

namespace duet::rt {

std::optional<std::vector<std::string>> splitOptionWords(std::string_view options) {
    std::vector<std::string> words;
    std::string word;
    bool inWord = false;
    char quote = 0;
    for (size_t i = 0; i < options.size(); ++i) {
        char c = options[i];
        if (quote) {
            if (c == quote) {
                quote = 0;
            } else if (c == '\\' && quote == '"' && i + 1 < options.size()) {
                word += options[++i];
            } else {
                word += c;
            }
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            if (inWord)
                words.push_back(std::move(word));
            word.clear();
            inWord = false;
            continue;
        }
        inWord = true;
        if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '\\' && i + 1 < options.size()) {
            word += options[++i];
        } else {
            word += c;
        }
    }
    if (quote)
        return std::nullopt;
    if (inWord)
        words.push_back(std::move(word));
    return words;
}

namespace {

bool isIdentifier(std::string_view s) {
    if (s.empty())
        return false;
    auto isAlpha = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    if (!isAlpha(s[0]))
        return false;
    for (char c : s)
        if (!isAlpha(c) && !(c >= '0' && c <= '9'))
            return false;
    return true;
}

/// A flag option that simply sets one bool; `linkToo` when §5.8.6 also allows it at link time.
struct FlagOption {
    const char* name;
    bool BuildOptions::* field;
    bool linkToo;
};

constexpr FlagOption kFlags[] = {
    {"-w", &BuildOptions::noWarnings, false},
    {"-Werror", &BuildOptions::warningsAsErrors, false},
    {"-cl-opt-disable", &BuildOptions::optDisable, false},
    {"-cl-mad-enable", &BuildOptions::madEnable, false},
    {"-cl-no-signed-zeros", &BuildOptions::noSignedZeros, true},
    {"-cl-unsafe-math-optimizations", &BuildOptions::unsafeMathOptimizations, true},
    {"-cl-finite-math-only", &BuildOptions::finiteMathOnly, true},
    {"-cl-fast-relaxed-math", &BuildOptions::fastRelaxedMath, true},
    {"-cl-denorms-are-zero", &BuildOptions::denormsAreZero, true},
    {"-cl-single-precision-constant", &BuildOptions::singlePrecisionConstant, false},
    {"-cl-fp32-correctly-rounded-divide-sqrt", &BuildOptions::fp32CorrectlyRoundedDivideSqrt,
     false},
    {"-cl-uniform-work-group-size", &BuildOptions::uniformWorkGroupSize, false},
    {"-cl-no-subgroup-ifp", &BuildOptions::noSubgroupIfp, true},
    {"-cl-strict-aliasing", &BuildOptions::strictAliasing, false},
    {"-cl-kernel-arg-info", &BuildOptions::kernelArgInfo, false},
    {"-g", &BuildOptions::debugInfo, false},
};

ParsedOptions fail(std::string message) {
    ParsedOptions r;
    r.ok = false;
    r.error = std::move(message);
    return r;
}

} // namespace

ParsedOptions parseBuildOptions(std::string_view options, OptionsKind kind) {
    auto words = splitOptionWords(options);
    if (!words)
        return fail("unterminated quote in options \"" + std::string(options) + "\"");

    const bool compile = kind == OptionsKind::Compile;
    ParsedOptions result;
    BuildOptions& o = result.options;
    const std::vector<std::string>& w = *words;
    for (size_t i = 0; i < w.size(); ++i) {
        const std::string& opt = w[i];

        bool matched = false;
        for (const FlagOption& f : kFlags) {
            if (opt == f.name && (compile || f.linkToo)) {
                o.*f.field = true;
                matched = true;
                break;
            }
        }
        if (matched)
            continue;

        if (!compile) {
            if (opt == "-create-library") {
                o.createLibrary = true;
                continue;
            }
            if (opt == "-enable-link-options") {
                o.enableLinkOptions = true;
                continue;
            }
            return fail("unknown or invalid linker option '" + opt + "'");
        }

        if (opt.rfind("-D", 0) == 0) {
            std::string def = opt.substr(2);
            if (def.empty()) {
                if (i + 1 >= w.size())
                    return fail("option '-D' needs a macro name");
                def = w[++i];
            }
            std::string name = def.substr(0, def.find('='));
            if (!isIdentifier(name))
                return fail("invalid macro name '" + name + "' in option '-D " + def + "'");
            o.defines.push_back(std::move(def));
            continue;
        }
        if (opt.rfind("-I", 0) == 0) {
            std::string dir = opt.substr(2);
            if (dir.empty()) {
                if (i + 1 >= w.size())
                    return fail("option '-I' needs a directory");
                dir = w[++i];
            }
            o.includeDirs.push_back(std::move(dir));
            continue;
        }
        if (opt.rfind("-cl-std=", 0) == 0) {
            std::string v = opt.substr(8);
            if (v == "CL1.0")
                o.clStd = 100;
            else if (v == "CL1.1")
                o.clStd = 110;
            else if (v == "CL1.2")
                o.clStd = 120;
            else if (v == "CL2.0")
                o.clStd = 200;
            else if (v == "CL3.0")
                o.clStd = 300;
            else
                return fail("unsupported OpenCL C version in option '" + opt +
                            "' (CL1.0, CL1.1, CL1.2, CL2.0 or CL3.0)");
            o.clStdGiven = true;
            continue;
        }
        if (opt.size() == 3 && opt[0] == '-' && opt[1] == 'O' && opt[2] >= '0' && opt[2] <= '3') {
            o.optLevel = unsigned(opt[2] - '0');
            continue;
        }
        if (opt == "-save-temps") {
            o.saveTemps = true;
            o.saveTempsPrefix.clear();
            continue;
        }
        if (opt.rfind("-save-temps=", 0) == 0) {
            o.saveTemps = true;
            o.saveTempsPrefix = opt.substr(12);
            continue;
        }
        return fail("unknown or invalid compiler option '" + opt + "'");
    }
    return result;
}

std::string effectiveBuildOptions(std::string_view userOptions) {
    auto env = [](const char* a, const char* b) -> const char* {
        if (const char* v = std::getenv(a))
            return v;
        return std::getenv(b);
    };
    std::string result(userOptions);
    if (const char* replace = env("DUET_BUILD_OPTIONS", "AMD_OCL_BUILD_OPTIONS"))
        result = replace;
    if (const char* append = env("DUET_BUILD_OPTIONS_APPEND", "AMD_OCL_BUILD_OPTIONS_APPEND")) {
        if (!result.empty() && *append)
            result += ' ';
        result += append;
    }
    return result;
}

} // namespace duet::rt
