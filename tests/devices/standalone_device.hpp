// What the device tests that run without Catch2 (kernel_timeout_test, kernel_checks_test) share:
// a watchdog that ends a run a kernel hangs, the device under test, the context's messages and
// the checks that print ok or FAIL.
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>

namespace duet::test {

inline std::mutex g_notesMutex;
inline std::string g_notes;

/// A context's notify callback: keeps each message (a line) for takeNotes().
inline void CL_CALLBACK note(const char* text, const void*, size_t, void*) {
    std::lock_guard lock(g_notesMutex);
    g_notes += std::string(text) + "\n";
}

/// The messages note() has kept since the last call, and forgets them.
inline std::string takeNotes() {
    std::lock_guard lock(g_notesMutex);
    std::string out;
    out.swap(g_notes);
    return out;
}

/// How many expect() calls have failed.
inline int g_failures = 0;

/// Prints "ok  : `what`" or "FAIL: `what`", counting the failures in g_failures.
inline void expect(bool ok, const std::string& what) {
    std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
    g_failures += !ok;
}

/// Set when the run has finished; until then the watchdog may end it.
inline std::atomic<bool> g_runDone{false};

/// Ends the process with status 1 and "FAIL: `failure`" unless g_runDone is set within `seconds`.
inline void startWatchdog(double seconds, std::string failure) {
    std::thread([seconds, failure = std::move(failure)] {
        const auto limit =
            std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (!g_runDone && std::chrono::steady_clock::now() < limit)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!g_runDone) {
            std::printf("FAIL: %s\n", failure.c_str());
            std::fflush(stdout);
            _exit(1);
        }
    }).detach();
}

/// The first device of the Duet platform (DUET_TEST_PLATFORM names another), with its name;
/// null when there is none.
inline cl_device_id deviceUnderTest(std::string& name) {
    const char* wanted = std::getenv("DUET_TEST_PLATFORM");
    cl_platform_id platform = nullptr;
    cl_platform_id platforms[16];
    cl_uint count = 0;
    if (clGetPlatformIDs(16, platforms, &count) == CL_SUCCESS)
        for (cl_uint i = 0; i < count && i < 16 && !platform; ++i) {
            char text[256] = {};
            clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof text - 1, text, nullptr);
            if (std::string(text).find(wanted && *wanted ? wanted : "Duet") != std::string::npos)
                platform = platforms[i];
        }
    cl_device_id device = nullptr;
    if (!platform ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS)
        return nullptr;
    char text[256] = {};
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof text - 1, text, nullptr);
    name = text;
    return device;
}

} // namespace duet::test
