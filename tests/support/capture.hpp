// Capturing what a test's code (or the runtime under test: kernel printf) writes to stdout or
// stderr, through the file descriptor, so text written below stdio is caught too.
#pragma once

#include <catch.hpp>

#include <cstdio>
#include <string>
#include <unistd.h>
#include <utility>

namespace duet::test {

/// Runs `body` with file descriptor `which` (1: stdout, 2: stderr) sent to a temporary file;
/// returns what was written there. The descriptor is restored (and the file removed) even
/// when `body` throws (a failed REQUIRE inside it), so Catch2's report still gets through.
template <class F> std::string captureFd(int which, F&& body) {
    std::fflush(stdout);
    std::fflush(stderr);
    char path[] = "/tmp/duet-capture-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    unlink(path); // the open descriptor keeps the file readable
    struct Redirect {
        int which, fd, saved;
        Redirect(int w, int f) : which(w), fd(f), saved(dup(w)) { dup2(fd, which); }
        ~Redirect() {
            std::fflush(stdout);
            std::fflush(stderr);
            dup2(saved, which);
            close(saved);
        }
    };
    struct Close {
        int fd;
        ~Close() { close(fd); }
    } closeFd{fd};
    {
        Redirect redirect(which, fd);
        body();
    }
    std::string text;
    lseek(fd, 0, SEEK_SET);
    char buffer[4096];
    for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;)
        text.append(buffer, size_t(n));
    return text;
}

/// captureFd for stdout, where kernel printf writes.
template <class F> std::string captureStdout(F&& body) {
    return captureFd(1, std::forward<F>(body));
}

} // namespace duet::test
