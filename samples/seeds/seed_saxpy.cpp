// seed-saxpy: y = a*x + y through the Khronos C++ bindings (opencl.hpp), checked on the host.
#include "seed_common.hpp"

#include <cstdio>

#include <CLI/CLI.hpp>

// Debian 12's opencl.hpp (2023.02.06) calls cl::detail::getContextPlatformVersion whenever
// CL_HPP_MINIMUM_OPENCL_VERSION < 200 (to choose clCreateCommandQueue or ...WithProperties at
// run time) but defines it only when the minimum is below 120. With the minimum at 120 we
// declare it before the header and define it after.
#if CL_HPP_MINIMUM_OPENCL_VERSION >= 120 && CL_HPP_MINIMUM_OPENCL_VERSION < 200
namespace cl::detail {
static cl_uint getContextPlatformVersion(cl_context context);
} // namespace cl::detail
#define DUET_CLHPP_CONTEXT_VERSION_SHIM 1
#endif

#include <CL/opencl.hpp>

#ifdef DUET_CLHPP_CONTEXT_VERSION_SHIM
namespace cl::detail {
// (major << 16) | minor of the platform of the context's first device, as the header expects.
static cl_uint getContextPlatformVersion(cl_context context) {
    cl_device_id device = nullptr;
    cl_platform_id platform = nullptr;
    if (clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, nullptr) !=
            CL_SUCCESS ||
        clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) !=
            CL_SUCCESS)
        return 0;
    char version[256] = {};
    if (clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof version - 1, version, nullptr) !=
        CL_SUCCESS)
        return 0;
    unsigned major = 0, minor = 0;
    if (std::sscanf(version, "OpenCL %u.%u", &major, &minor) != 2)
        return 0;
    return (major << 16) | minor;
}
} // namespace cl::detail
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

using namespace duet::seeds;

static const char* kSource = R"CLC(
__kernel void saxpy(float a, __global const float *x, __global float *y, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}
)CLC";

// The bindings say CL_DEVICE_NOT_FOUND by exception; fall back to any device type then.
static cl::Device pickDevice(const cl::Platform& platform) {
    std::vector<cl::Device> devices;
    try {
        platform.getDevices(CL_DEVICE_TYPE_CPU, &devices);
    } catch (const cl::Error& e) {
        if (e.err() != CL_DEVICE_NOT_FOUND)
            throw;
    }
    if (devices.empty())
        platform.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    return devices.front();
}

int main(int argc, char** argv) {
    std::string platformSubstr = "Duet";
    cl_uint n = 1000003; // not a multiple of any work-group size: exercises the tail guard
    float a = 2.5f;
    CLI::App app{"SAXPY through the OpenCL C++ bindings, checked against the host."};
    app.add_option("--platform", platformSubstr, "platform whose name contains this")
        ->capture_default_str();
    app.add_option("-n,--count", n, "vector length")
        ->capture_default_str()
        ->check(CLI::Range(cl_uint(1), cl_uint(1) << 28));
    app.add_option("-a", a, "the scalar a")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    return runMain("seed-saxpy", [&] {
        try {
            cl::Platform platform(findPlatform(platformSubstr), /*retainObject=*/true);
            cl::Device device = pickDevice(platform);
            cl::Context context(device);
            cl::CommandQueue queue(context, device);

            cl::Program program(context, kSource);
            try {
                program.build(device);
            } catch (const cl::BuildError& e) {
                for (const auto& [dev, log] : e.getBuildLog())
                    std::fprintf(stderr, "build log:\n%s\n", log.c_str());
                throw;
            }

            std::mt19937 rng(1234);
            std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
            std::vector<float> x(n), y(n);
            for (cl_uint i = 0; i < n; ++i) {
                x[i] = dist(rng);
                y[i] = dist(rng);
            }

            cl::Buffer dx(context, x.begin(), x.end(), /*readOnly=*/true);
            cl::Buffer dy(context, y.begin(), y.end(), /*readOnly=*/false);
            cl::KernelFunctor<float, cl::Buffer, cl::Buffer, cl_uint> saxpy(program, "saxpy");
            const size_t local = 64;
            const size_t global = (n + local - 1) / local * local;
            saxpy(cl::EnqueueArgs(queue, cl::NDRange(global), cl::NDRange(local)), a, dx, dy, n);
            std::vector<float> result(n);
            cl::copy(queue, dy, result.begin(), result.end());

            // The device may contract a*x+y into one fma or not: allow a few ulps of the terms.
            const double eps = std::numeric_limits<float>::epsilon();
            size_t bad = 0, firstBad = 0;
            for (cl_uint i = 0; i < n; ++i) {
                double ref = double(a) * x[i] + y[i];
                double tol = 4 * eps * (std::fabs(double(a) * x[i]) + std::fabs(y[i]));
                if (!(std::fabs(result[i] - ref) <= tol) && bad++ == 0)
                    firstBad = i;
            }
            std::string where =
                platform.getInfo<CL_PLATFORM_NAME>() + " / " + device.getInfo<CL_DEVICE_NAME>();
            // getInfo strings from the bindings may keep the terminating NUL.
            where.erase(std::remove(where.begin(), where.end(), '\0'), where.end());
            if (bad) {
                std::printf("seed-saxpy: FAIL %zu of %u elements wrong (first at %zu: %g, host "
                            "%g) on %s\n",
                            bad, n, firstBad, result[firstBad],
                            double(a) * x[firstBad] + y[firstBad], where.c_str());
                return 1;
            }
            std::printf("seed-saxpy: PASS %u elements of y = %g*x + y match the host on %s\n", n, a,
                        where.c_str());
            return 0;
        } catch (const cl::Error& e) {
            throw ClError(e.what(), e.err()); // the bindings name the call; we add the code
        }
    });
}
