// Fuzzes build and link option strings (clBuildProgram, clCompileProgram, clLinkProgram):
// parseBuildOptions and splitOptionWords must answer every string, with a reason on rejection,
// and agree with each other.
#include "compiler/options.hpp"
#include "fuzz_check.hpp"

#include <cstring>
#include <string>

using namespace duet::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // Option strings are C strings: the API stops at the first NUL.
    std::string text(reinterpret_cast<const char*>(data), size);
    text.resize(std::strlen(text.c_str()));
    std::optional<std::vector<std::string>> words = splitOptionWords(text);
    for (OptionsKind kind : {OptionsKind::Compile, OptionsKind::Link}) {
        ParsedOptions p = parseBuildOptions(text, kind);
        FUZZ_CHECK(p.ok == p.error.empty(), "ok and error disagree");
        if (!words)
            FUZZ_CHECK(!p.ok, "an unterminated quote was accepted");
        if (!p.ok)
            continue;
        const BuildOptions& o = p.options;
        FUZZ_CHECK(o.optLevel <= 3, "optimisation level out of range");
        FUZZ_CHECK(o.clStd == 100 || o.clStd == 110 || o.clStd == 120 || o.clStd == 200 ||
                       o.clStd == 300,
                   "-cl-std outside the versions OpenCL C has");
        for (const std::string& d : o.defines)
            FUZZ_CHECK(!d.empty() && d[0] != '=', "a -D without a name");
        // Parsing is a function of the text: a second parse gives the same answer.
        ParsedOptions again = parseBuildOptions(text, kind);
        FUZZ_CHECK(again.ok && again.options.defines == o.defines &&
                       again.options.includeDirs == o.includeDirs,
                   "a second parse differs");
    }
    return 0;
}
