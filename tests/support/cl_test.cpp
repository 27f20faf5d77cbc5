// Test support: the platform under test, the fixtures and the CL error names.
#include "duet/cl_error_name.hpp"
#include "support/cl_test.hpp"

#include "support/icd_vendors.hpp"

namespace duet::test {

const char* errorName(cl_int code) {
    return clErrorName(code);
}

std::string platformString(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    clGetPlatformInfo(p, what, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

std::string deviceString(cl_device_id d, cl_device_info what) {
    size_t n = 0;
    clGetDeviceInfo(d, what, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetDeviceInfo(d, what, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

namespace {

std::vector<cl_platform_id> allPlatforms() {
    cl_uint n = 0;
    clGetPlatformIDs(0, nullptr, &n);
    std::vector<cl_platform_id> ps(n);
    if (n)
        clGetPlatformIDs(n, ps.data(), nullptr);
    return ps;
}

/// The first platform whose name contains `want`, or null; `seen` lists every platform's name.
cl_platform_id findPlatform(const std::string& want, std::string& seen) {
    cl_platform_id found = nullptr;
    for (cl_platform_id p : allPlatforms()) {
        std::string name = platformString(p, CL_PLATFORM_NAME);
        seen += " '" + name + "'";
        if (!found && name.find(want) != std::string::npos)
            found = p;
    }
    return found;
}

} // namespace

cl_platform_id platformUnderTest() {
    const char* env = std::getenv("DUET_TEST_PLATFORM");
    std::string want = env && *env ? env : "Duet";
    std::string seen;
    if (cl_platform_id p = findPlatform(want, seen))
        return p;
    FAIL("no OpenCL platform named like '" << want << "' (set DUET_TEST_PLATFORM); found:" << seen);
    return nullptr;
}

cl_platform_id platformNamed(const std::string& name) {
    std::string seen;
    cl_platform_id p = findPlatform(name, seen);
    INFO("no OpenCL platform named like '" << name << "'; found:" << seen);
    REQUIRE(p);
    return p;
}

cl_device_id defaultDevice() {
    cl_device_id d = nullptr;
    REQUIRE(clGetDeviceIDs(platformUnderTest(), CL_DEVICE_TYPE_DEFAULT, 1, &d, nullptr) ==
            CL_SUCCESS);
    return d;
}

std::string buildLog(cl_program p, cl_device_id d) {
    size_t n = 0;
    clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, n, s.data(), nullptr);
    return s;
}

cl_program buildProgram(cl_context ctx, cl_device_id dev, const std::string& source,
                        const std::string& options) {
    const char* src = source.c_str();
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    err = clBuildProgram(p, 1, &dev, options.c_str(), nullptr, nullptr);
    INFO("build log:\n" << buildLog(p, dev));
    REQUIRE(err == CL_SUCCESS);
    return p;
}

WithQueue::WithQueue(cl_command_queue_properties props) {
    platform = platformUnderTest();
    device = defaultDevice();
    cl_int err = CL_SUCCESS;
    cl_context_properties cp[] = {CL_CONTEXT_PLATFORM, cl_context_properties(platform), 0};
    context = clCreateContext(cp, 1, &device, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    queue = clCreateCommandQueue(context, device, props, &err);
    REQUIRE(err == CL_SUCCESS);
}

WithQueue::~WithQueue() {
    if (queue) {
        clFinish(queue);
        clReleaseCommandQueue(queue);
    }
    if (context)
        clReleaseContext(context);
}

cl_mem WithQueue::buffer(size_t bytes, cl_mem_flags flags, void* host) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, flags, bytes, host, &err);
    REQUIRE(err == CL_SUCCESS);
    return m;
}

ClOn::ClOn(const std::string& platformName, cl_device_type type) {
    useDuetAndPocl();
    platform = platformNamed(platformName);
    REQUIRE_CL(clGetDeviceIDs(platform, type, 1, &device, nullptr));
    cl_int err = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    REQUIRE_CL(err);
    queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
    REQUIRE_CL(err);
}

ClOn::~ClOn() {
    if (queue)
        clReleaseCommandQueue(queue);
    if (context)
        clReleaseContext(context);
}

cl_mem ClOn::buffer(size_t bytes, cl_mem_flags flags) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, flags, bytes, nullptr, &err);
    REQUIRE_CL(err);
    return m;
}

} // namespace duet::test
