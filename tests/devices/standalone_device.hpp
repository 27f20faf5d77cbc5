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
#include <vector>

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

/// deviceUnderTest(), or null after printing "`program`: SKIPPED: no device ..." (the program
/// then exits with 77).
inline cl_device_id deviceOrSkip(const char* program, std::string& name) {
    cl_device_id device = deviceUnderTest(name);
    if (!device) {
        const char* devices = std::getenv("DUET_DEVICES");
        std::printf("%s: SKIPPED: no device of the Duet platform (DUET_DEVICES=%s)\n", program,
                    devices ? devices : "");
    }
    return device;
}

/// `source` built for `device` in `ctx`, with its build log in `log`; null after printing
/// "FAIL: build: error N" and the log when the build fails.
inline cl_program buildOrReport(cl_context ctx, cl_device_id device, const std::string& source,
                                std::string& log) {
    const char* text = source.c_str();
    cl_int e = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(ctx, 1, &text, nullptr, &e);
    if (e == CL_SUCCESS)
        e = clBuildProgram(p, 1, &device, "", nullptr, nullptr);
    std::vector<char> chars(1 << 16);
    clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, chars.size() - 1, chars.data(), nullptr);
    log = chars.data();
    if (e == CL_SUCCESS)
        return p;
    std::printf("FAIL: build: error %d\n%s", e, log.c_str());
    if (p)
        clReleaseProgram(p);
    return nullptr;
}

} // namespace duet::test
