// Sample smoke-test support: run a sample executable and collect its exit code and output.
#pragma once

#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace duet::test {

struct CommandResult {
    int exitCode = -1;
    std::string output; ///< stdout and stderr together
};

/// Runs `command` through the shell and waits for it.
inline CommandResult runCommand(const std::string &command) {
    CommandResult result;
    FILE *pipe = popen((command + " 2>&1").c_str(), "r");
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
