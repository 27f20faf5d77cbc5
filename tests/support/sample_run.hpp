// Sample and solver test support: the platforms to test on, and running a sample executable for
// its exit code and output. Include after support/icd_vendors.hpp (for havePocl()).
#pragma once

#include "support/icd_vendors.hpp"

#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace duet::test {

struct CommandResult {
    int exitCode = -1;
    std::string output; ///< stdout and stderr together
};

/// Duet always, PoCL where its ICD is installed: names as platform-name substrings.
inline std::vector<std::string> platformsUnderTest() {
    std::vector<std::string> names = {"Duet"};
    if (havePocl())
        names.push_back("Portable Computing Language");
    return names;
}

/// Runs `command` through the shell and waits for it.
inline CommandResult runCommand(const std::string& command) {
    CommandResult result;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe)
        return result;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
        result.output.append(buffer, n);
    int status = pclose(pipe);
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

} // namespace duet::test
