// Test support for tests that need an X server: an Xvfb server of the test's own on a free
// display number, and the exit code that tells ctest a test was skipped.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace duet::test {

/// The exit code ctest counts as "skipped" (SKIP_RETURN_CODE 77 on every test that may skip).
inline constexpr int kSkipExitCode = 77;

/// For main(): prints "SKIPPED: <why>" and returns kSkipExitCode, so the reason shows in the log.
int skipTest(const std::string& why);

/// Xvfb's path on $PATH; empty when Xvfb is not installed (then a test skips).
std::string xvfbPath();

/// An Xvfb server started on the first display number from `first` + pid % 50 (parallel tests
/// spread out) whose lock file and socket are free, with `args` (screens, -extension ...) and
/// -nolisten tcp -noreset. Waits up to 10 s for the socket; a server that exits lost a race for
/// its number and the next one is tried. Stopped (SIGTERM, waited for) when destroyed.
class XvfbServer {
public:
    XvfbServer(const std::vector<std::string>& args, int first);
    ~XvfbServer();
    XvfbServer(const XvfbServer&) = delete;
    XvfbServer& operator=(const XvfbServer&) = delete;

    bool running() const { return m_pid > 0; }
    const std::string& display() const { return m_display; } ///< ":N"
    pid_t pid() const { return m_pid; }

private:
    pid_t m_pid = -1;
    std::string m_display;
};

} // namespace duet::test
