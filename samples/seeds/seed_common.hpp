// Small helpers shared by the console seeds and duet-bench: error names, platform pick by name.
#pragma once

#include <CL/cl.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace duet::seeds {

/// The spec's name of an OpenCL error code ("CL_INVALID_VALUE"), or "CL_UNKNOWN_ERROR(<n>)".
std::string errorName(cl_int code);

/// An OpenCL call that failed: which call, and the code it returned.
class ClError : public std::runtime_error {
public:
    ClError(std::string what, cl_int code);
    cl_int code() const { return m_code; }

private:
    cl_int m_code;
};

/// Throws ClError naming `what` unless `code` is CL_SUCCESS.
void check(cl_int code, const char* what);

/// The first platform whose CL_PLATFORM_NAME contains `nameSubstr`. Throws ClError
/// (CL_DEVICE_NOT_FOUND) listing the platforms that exist when none matches.
cl_platform_id findPlatform(std::string_view nameSubstr);

/// The first device of `type` on `platform`; with `fallbackToAny`, the first device of any
/// type when the platform has none of `type`.
cl_device_id firstDevice(cl_platform_id platform, cl_device_type type, bool fallbackToAny);

std::string platformName(cl_platform_id platform);
std::string deviceName(cl_device_id device);
/// CL_DEVICE_VERSION's "major.minor" as major * 10 + minor (30 for OpenCL 3.0).
int deviceVersion(cl_device_id device);

/// A command queue made the way the device's OpenCL version allows (clCreateCommandQueue
/// before 2.0, clCreateCommandQueueWithProperties from 2.0).
cl_command_queue createQueue(cl_context context, cl_device_id device,
                             cl_command_queue_properties props);

/// The device's build log for `program` (empty when there is none).
std::string buildLog(cl_program program, cl_device_id device);

/// Creates and builds `source` for `device`. On CL_BUILD_PROGRAM_FAILURE prints the build log
/// to stderr, releases the program and throws.
cl_program buildProgram(cl_context context, cl_device_id device, const std::string& source,
                        const std::string& options);

/// Runs `body` and turns exceptions into one "<tool>: FAIL: ..." line on stderr and exit code 1.
int runMain(const char* tool, const std::function<int()>& body);

/// Owning handle for OpenCL objects: releases on destruction, moves but does not copy.
template <typename T, cl_int (*Release)(T)> class Handle {
public:
    Handle() = default;
    explicit Handle(T h) : m_h(h) {}
    Handle(Handle&& o) noexcept : m_h(o.m_h) { o.m_h = nullptr; }
    Handle& operator=(Handle&& o) noexcept {
        if (this != &o) {
            reset();
            m_h = o.m_h;
            o.m_h = nullptr;
        }
        return *this;
    }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() { reset(); }

    void reset() {
        if (m_h)
            Release(m_h);
        m_h = nullptr;
    }
    T get() const { return m_h; }
    operator T() const { return m_h; }

private:
    T m_h = nullptr;
};

using Context = Handle<cl_context, clReleaseContext>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Buffer = Handle<cl_mem, clReleaseMemObject>;
using Program = Handle<cl_program, clReleaseProgram>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;
using Event = Handle<cl_event, clReleaseEvent>;

/// clCreateContext for one device, checked.
Context createContext(cl_platform_id platform, cl_device_id device);
/// clCreateKernel, checked.
Kernel createKernel(cl_program program, const char* name);

/// clSetKernelArg for a value argument, checked (the call named by argument index).
template <typename T> void setArg(cl_kernel kernel, cl_uint index, const T& value) {
    // Catches passing a Handle (whose size is not the handle's) instead of its .get().
    static_assert(std::is_trivially_copyable_v<T>, "pass plain OpenCL handles or values");
    cl_int err = clSetKernelArg(kernel, index, sizeof(T), &value);
    if (err != CL_SUCCESS)
        throw ClError("clSetKernelArg(" + std::to_string(index) + ")", err);
}
/// clSetKernelArg for a __local argument of `bytes` bytes, checked.
void setLocalArg(cl_kernel kernel, cl_uint index, size_t bytes);

} // namespace duet::seeds
