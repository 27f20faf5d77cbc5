// Test support without OpenCL or GL: running a command for its exit code and output, finding a
// program on $PATH, reading a whole file.
#pragma once

#include <string>

namespace duet::test {

/// What a command printed and how it ended.
struct CommandResult {
    int exitCode = -1;  ///< -1: killed by a signal (a crash) or not started
    std::string output; ///< stdout and stderr together
};

/// Runs `command` through the shell (stderr joined to stdout) and waits for it.
CommandResult runCommand(const std::string& command);

/// The full path of `program` in a $PATH folder (executable), or empty when there is none.
std::string findInPath(const std::string& program);

/// The whole file at `path` (empty when it cannot be read).
std::string readFile(const std::string& path);

/// True when `path` names an existing file or folder.
bool pathExists(const std::string& path);

} // namespace duet::test
