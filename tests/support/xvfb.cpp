// Starting and stopping the tests' own Xvfb servers.
#include "support/xvfb.hpp"

#include "support/process.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace duet::test {

int skipTest(const std::string& why) {
    std::printf("SKIPPED: %s\n", why.c_str());
    std::fflush(stdout);
    return kSkipExitCode;
}

std::string xvfbPath() {
    return findInPath("Xvfb");
}

XvfbServer::XvfbServer(const std::vector<std::string>& args, int first) {
    const std::string xvfb = xvfbPath();
    if (xvfb.empty())
        return;
    for (int n = first + int(getpid() % 50); n < first + 200; ++n) {
        std::string number = std::to_string(n);
        if (pathExists("/tmp/.X" + number + "-lock") || pathExists("/tmp/.X11-unix/X" + number))
            continue;
        // The argument vector is built before fork: the child only calls execv and _exit.
        std::vector<std::string> all = {"Xvfb", ":" + number};
        all.insert(all.end(), args.begin(), args.end());
        all.insert(all.end(), {"-nolisten", "tcp", "-noreset"});
        std::vector<char*> argv;
        for (std::string& a : all)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t pid = fork();
        if (pid == 0) {
            execv(xvfb.c_str(), argv.data());
            _exit(127);
        }
        if (pid < 0)
            return;
        for (int i = 0; i < 200; ++i) {
            int status = 0;
            if (waitpid(pid, &status, WNOHANG) == pid)
                break;
            if (pathExists("/tmp/.X11-unix/X" + number)) {
                m_pid = pid;
                m_display = ":" + number;
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
    }
}

XvfbServer::~XvfbServer() {
    if (m_pid > 0) {
        kill(m_pid, SIGTERM);
        waitpid(m_pid, nullptr, 0);
    }
}

} // namespace duet::test
