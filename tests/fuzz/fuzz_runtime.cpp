// The runtime-driving fuzz targets' shared set-up (fuzz_runtime.hpp): the CPU device, queries,
// and libFuzzer extra counters as coverage of outcomes.
#include "fuzz_runtime.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <vector>

namespace duet::fuzz {
namespace {

Runtime g_runtime;

// libFuzzer reads counters in this section as coverage (Linux, -fsanitize=fuzzer).
constexpr size_t kFeatures = 1 << 14;
__attribute__((used, section("__libfuzzer_extra_counters"))) uint8_t g_features[kFeatures];

[[noreturn]] void fail(const char* what, cl_int err) {
    std::fprintf(stderr, "fuzz: %s failed (%d): is Duet's CPU device available?\n", what, err);
    std::abort();
}

} // namespace

void openCpuDevice() {
    setenv("DUET_DEVICES", "cpu", 0);
    cl_uint n = 0;
    cl_int err = clGetPlatformIDs(1, &g_runtime.platform, &n);
    if (err != CL_SUCCESS || n == 0)
        fail("clGetPlatformIDs", err);
    err = clGetDeviceIDs(g_runtime.platform, CL_DEVICE_TYPE_CPU, 1, &g_runtime.device, nullptr);
    if (err != CL_SUCCESS)
        fail("clGetDeviceIDs(CL_DEVICE_TYPE_CPU)", err);
    g_runtime.context = clCreateContext(nullptr, 1, &g_runtime.device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS)
        fail("clCreateContext", err);
}

const Runtime& runtime() {
    return g_runtime;
}

std::string buildLog(cl_program program, cl_device_id device) {
    size_t n = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS)
        return {};
    std::string s(n, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

std::string kernelName(cl_kernel kernel) {
    size_t n = 0;
    if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &n) != CL_SUCCESS)
        return {};
    std::string s(n, '\0');
    clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

void bumpFeature(size_t id) {
    uint8_t& c = g_features[(id * 0x9E3779B97F4A7C15ull >> 20) % kFeatures];
    if (c < 255)
        ++c;
}

void diagnosticFeatures(const std::string& log) {
    std::istringstream lines(log);
    std::string line;
    while (std::getline(lines, line)) {
        size_t at = line.find("error: ");
        if (at == std::string::npos)
            at = line.find("warning: ");
        if (at == std::string::npos)
            continue;
        // Keep the message's words, drop what is between quotes (names, types, values).
        std::string key;
        bool quoted = false;
        for (size_t i = at; i < line.size(); ++i) {
            if (line[i] == '\'')
                quoted = !quoted;
            else if (!quoted)
                key += line[i];
        }
        bumpFeature(std::hash<std::string>{}(key));
    }
}

} // namespace duet::fuzz
