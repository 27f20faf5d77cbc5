// Error names, platform and device selection, program building for the seeds and duet-bench.
#include "duet/cl_error_name.hpp"
#include "seed_common.hpp"

#include <CL/cl_ext.h>
#include <CL/cl_gl.h>

#include <cstdio>
#include <exception>

namespace duet::seeds {

std::string errorName(cl_int code) {
    return clErrorName(code);
}

ClError::ClError(std::string what, cl_int code)
    : std::runtime_error(what + ": " + errorName(code)), m_code(code) {}

void check(cl_int code, const char* what) {
    if (code != CL_SUCCESS)
        throw ClError(what, code);
}

std::string platformName(cl_platform_id platform) {
    size_t size = 0;
    check(clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size),
          "clGetPlatformInfo(CL_PLATFORM_NAME)");
    std::string name(size, '\0');
    check(clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, name.data(), nullptr),
          "clGetPlatformInfo(CL_PLATFORM_NAME)");
    while (!name.empty() && name.back() == '\0')
        name.pop_back();
    return name;
}

static std::string deviceString(cl_device_id device, cl_device_info what, const char* call) {
    size_t size = 0;
    check(clGetDeviceInfo(device, what, 0, nullptr, &size), call);
    std::string s(size, '\0');
    check(clGetDeviceInfo(device, what, size, s.data(), nullptr), call);
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

std::string deviceName(cl_device_id device) {
    return deviceString(device, CL_DEVICE_NAME, "clGetDeviceInfo(CL_DEVICE_NAME)");
}

int deviceVersion(cl_device_id device) {
    std::string v = deviceString(device, CL_DEVICE_VERSION, "clGetDeviceInfo(CL_DEVICE_VERSION)");
    int major = 0, minor = 0;
    // The spec fixes the format: "OpenCL<space><major.minor><space><vendor-specific>".
    if (std::sscanf(v.c_str(), "OpenCL %d.%d", &major, &minor) != 2)
        return 0;
    return major * 10 + minor;
}

cl_platform_id findPlatform(std::string_view nameSubstr) {
    cl_uint count = 0;
    cl_int err = clGetPlatformIDs(0, nullptr, &count);
    // The ICD loader says CL_PLATFORM_NOT_FOUND_KHR when it finds no vendor at all.
    if (err == CL_PLATFORM_NOT_FOUND_KHR)
        count = 0;
    else
        check(err, "clGetPlatformIDs");
    std::vector<cl_platform_id> ids(count);
    if (count)
        check(clGetPlatformIDs(count, ids.data(), nullptr), "clGetPlatformIDs");
    std::string seen;
    for (cl_platform_id id : ids) {
        std::string name = platformName(id);
        if (name.find(nameSubstr) != std::string::npos)
            return id;
        seen += (seen.empty() ? "" : ", ") + ("\"" + name + "\"");
    }
    throw ClError("no OpenCL platform whose name contains \"" + std::string(nameSubstr) +
                      "\" (platforms: " + (seen.empty() ? "none" : seen) + ")",
                  CL_DEVICE_NOT_FOUND);
}

cl_device_id firstDevice(cl_platform_id platform, cl_device_type type, bool fallbackToAny) {
    cl_device_id device = nullptr;
    cl_uint count = 0;
    cl_int err = clGetDeviceIDs(platform, type, 1, &device, &count);
    if (err == CL_DEVICE_NOT_FOUND && fallbackToAny)
        err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &count);
    check(err, "clGetDeviceIDs");
    return device;
}

cl_command_queue createQueue(cl_context context, cl_device_id device,
                             cl_command_queue_properties props) {
    cl_int err = CL_SUCCESS;
    cl_command_queue queue = nullptr;
    if (deviceVersion(device) >= 20) {
        const cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, props, 0};
        queue = clCreateCommandQueueWithProperties(context, device, props ? list : nullptr, &err);
        check(err, "clCreateCommandQueueWithProperties");
    } else {
        queue = clCreateCommandQueue(context, device, props, &err);
        check(err, "clCreateCommandQueue");
    }
    return queue;
}

std::string buildLog(cl_program program, cl_device_id device) {
    size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
            CL_SUCCESS ||
        size == 0)
        return {};
    std::string log(size, '\0');
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) !=
        CL_SUCCESS)
        return {};
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
        log.pop_back();
    return log;
}

cl_program buildProgram(cl_context context, cl_device_id device, const std::string& source,
                        const std::string& options) {
    const char* text = source.c_str();
    size_t length = source.size();
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &text, &length, &err);
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
        if (err == CL_BUILD_PROGRAM_FAILURE)
            std::fprintf(stderr, "build log:\n%s\n", buildLog(program, device).c_str());
        clReleaseProgram(program);
        throw ClError("clBuildProgram", err);
    }
    return program;
}

Context createContext(cl_platform_id platform, cl_device_id device) {
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                           reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(props, 1, &device, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    return Context(context);
}

Kernel createKernel(cl_program program, const char* name) {
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, name, &err);
    if (err != CL_SUCCESS)
        throw ClError(std::string("clCreateKernel(") + name + ")", err);
    return Kernel(kernel);
}

void setLocalArg(cl_kernel kernel, cl_uint index, size_t bytes) {
    cl_int err = clSetKernelArg(kernel, index, bytes, nullptr);
    if (err != CL_SUCCESS)
        throw ClError("clSetKernelArg(" + std::to_string(index) + ", __local)", err);
}

int runMain(const char* tool, const std::function<int()>& body) {
    try {
        return body();
    } catch (const ClError& e) {
        std::fprintf(stderr, "%s: FAIL: %s (%d)\n", tool, e.what(), e.code());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: FAIL: %s\n", tool, e.what());
    }
    return 1;
}

} // namespace duet::seeds
