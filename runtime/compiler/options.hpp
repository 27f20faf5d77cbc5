// OpenCL build and link options (OpenCL 3.0 §5.8.4, §5.8.6, plus AMD's extras), parsed once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::rt {

/// Everything the compiler and the code generators need to know from an option string.
/// Default-constructed means "no options given".
struct BuildOptions {
    /// OpenCL C version as 100 * major + 10 * minor. No -cl-std means 1.2 (§5.8.4.5).
    unsigned clStd = 120;
    bool clStdGiven = false;

    /// -D name[=definition], in order, as "name" or "name=definition".
    std::vector<std::string> defines;
    /// -I dir, in order, as written (relative to the process working directory).
    std::vector<std::string> includeDirs;

    bool noWarnings = false;       ///< -w
    bool warningsAsErrors = false; ///< -Werror

    /// 0..3 from -O<n> (AMD); -cl-opt-disable forces 0. Default 2.
    unsigned optLevel = 2;
    bool optDisable = false; ///< -cl-opt-disable

    bool madEnable = false;                      ///< -cl-mad-enable
    bool noSignedZeros = false;                  ///< -cl-no-signed-zeros
    bool unsafeMathOptimizations = false;        ///< -cl-unsafe-math-optimizations
    bool finiteMathOnly = false;                 ///< -cl-finite-math-only
    bool fastRelaxedMath = false;                ///< -cl-fast-relaxed-math
    bool denormsAreZero = false;                 ///< -cl-denorms-are-zero
    bool singlePrecisionConstant = false;        ///< -cl-single-precision-constant
    bool fp32CorrectlyRoundedDivideSqrt = false; ///< -cl-fp32-correctly-rounded-divide-sqrt
    bool uniformWorkGroupSize = false;           ///< -cl-uniform-work-group-size
    bool noSubgroupIfp = false;                  ///< -cl-no-subgroup-ifp
    bool strictAliasing = false;                 ///< -cl-strict-aliasing (deprecated, no effect)
    bool kernelArgInfo = false;                  ///< -cl-kernel-arg-info
    bool debugInfo = false;                      ///< -g

    /// -save-temps[=prefix] (AMD): the code generator writes intermediate files. An empty
    /// prefix with saveTemps set means "in the working directory, default name".
    bool saveTemps = false;
    std::string saveTempsPrefix;

    // Link-only options (§5.8.6).
    bool createLibrary = false;     ///< -create-library
    bool enableLinkOptions = false; ///< -enable-link-options

    /// Fast-math implications the spec defines: -cl-fast-relaxed-math implies
    /// -cl-finite-math-only and -cl-unsafe-math-optimizations, which implies
    /// -cl-no-signed-zeros and -cl-mad-enable.
    bool effectiveFiniteMathOnly() const { return finiteMathOnly || fastRelaxedMath; }
    bool effectiveUnsafeMath() const { return unsafeMathOptimizations || fastRelaxedMath; }
    bool effectiveNoSignedZeros() const { return noSignedZeros || effectiveUnsafeMath(); }
    bool effectiveMadEnable() const { return madEnable || effectiveUnsafeMath(); }
    /// The optimisation level after -cl-opt-disable.
    unsigned effectiveOptLevel() const { return optDisable ? 0 : optLevel; }
};

/// Which option set a string is checked against.
enum class OptionsKind {
    Compile, ///< clCompileProgram / clBuildProgram: every §5.8.4 option
    Link,    ///< clLinkProgram: -create-library, -enable-link-options, link-time -cl-* subset
};

struct ParsedOptions {
    bool ok = true;
    std::string error; ///< one line naming the offending option, when !ok
    BuildOptions options;
};

/// Parses an option string. Options are separated by blanks; single or double quotes group
/// a word containing blanks ("-I 'my dir'"). Unknown or malformed options give ok = false.
/// Pure: no environment variables are read (see effectiveBuildOptions).
ParsedOptions parseBuildOptions(std::string_view options, OptionsKind kind);

/// The build options after the environment overrides, as AMD's runtime applies them:
/// DUET_BUILD_OPTIONS, else AMD_OCL_BUILD_OPTIONS, replaces `userOptions`;
/// DUET_BUILD_OPTIONS_APPEND, else AMD_OCL_BUILD_OPTIONS_APPEND, is appended.
/// compileSource applies it; code generators given the user's build options should too.
std::string effectiveBuildOptions(std::string_view userOptions);

/// Splits an option string into words (quotes group, backslash escapes the next character).
/// Returns nullopt on an unterminated quote.
std::optional<std::vector<std::string>> splitOptionWords(std::string_view options);

} // namespace duet::rt
