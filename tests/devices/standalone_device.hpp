// What the device tests that run without Catch2 (kernel_timeout_test, kernel_checks_test) share:
// a watchdog that ends a run a kernel hangs, and the device under test.
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>

namespace duet::test {

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
