// GuardedContext: the fixture of the run-time guard tests (checked kernels, kernel timeouts)
// on any device: a context whose notify callback collects the runtime's messages, and the few
// calls those tests make (build, buffers, a launch's final status).
#pragma once

#include "support/cl_test.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

namespace duet::test {

/// A context on the platform under test's first device of `type`, whose notify callback
/// collects the messages (the guards' reports arrive there), and the calls the guard tests make.
struct GuardedContext {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    std::mutex mutex;
    std::vector<std::string> messages;

    explicit GuardedContext(cl_device_type type) {
        platform = platformUnderTest();
        REQUIRE(clGetDeviceIDs(platform, type, 1, &device, nullptr) == CL_SUCCESS);
        cl_int e = CL_SUCCESS;
        context = clCreateContext(nullptr, 1, &device, &GuardedContext::notify, this, &e);
        REQUIRE(e == CL_SUCCESS);
        queue = clCreateCommandQueue(context, device, 0, &e);
        REQUIRE(e == CL_SUCCESS);
    }
    ~GuardedContext() {
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
    GuardedContext(const GuardedContext&) = delete;

    static void CL_CALLBACK notify(const char* text, const void*, size_t, void* self) {
        auto* g = static_cast<GuardedContext*>(self);
        std::lock_guard lock(g->mutex);
        g->messages.emplace_back(text);
    }
    std::string allMessages() {
        std::lock_guard lock(mutex);
        std::string all;
        for (const std::string& m : messages)
            all += m + "\n";
        return all;
    }
    size_t messagesWith(const std::string& text) {
        std::lock_guard lock(mutex);
        return size_t(std::count_if(messages.begin(), messages.end(), [&](const std::string& m) {
            return m.find(text) != std::string::npos;
        }));
    }
    cl_program build(const std::string& source, const char* options = "") {
        cl_int e = CL_SUCCESS;
        const char* text = source.c_str();
        cl_program p = clCreateProgramWithSource(context, 1, &text, nullptr, &e);
        REQUIRE(e == CL_SUCCESS);
        e = clBuildProgram(p, 1, &device, options, nullptr, nullptr);
        INFO(buildLog(p, device));
        REQUIRE(e == CL_SUCCESS);
        return p;
    }
    cl_kernel kernel(cl_program p, const char* name) {
        cl_int e = CL_SUCCESS;
        cl_kernel k = clCreateKernel(p, name, &e);
        REQUIRE(e == CL_SUCCESS);
        return k;
    }
    cl_mem buffer(size_t bytes, const void* init = nullptr) {
        cl_int e = CL_SUCCESS;
        cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0),
                                  bytes, const_cast<void*>(init), &e);
        REQUIRE(e == CL_SUCCESS);
        return m;
    }
    template <class T> std::vector<T> read(cl_mem m, size_t count) {
        std::vector<T> out(count);
        REQUIRE(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, count * sizeof(T), out.data(), 0, nullptr,
                                    nullptr) == CL_SUCCESS);
        return out;
    }
    /// Runs `k` over `global` (and `local`, when not 0) and returns its event's final status.
    cl_int run(cl_kernel k, size_t global, size_t local = 0) {
        cl_event ev = nullptr;
        REQUIRE(clEnqueueNDRangeKernel(queue, k, 1, nullptr, &global, local ? &local : nullptr, 0,
                                       nullptr, &ev) == CL_SUCCESS);
        clWaitForEvents(1, &ev);
        cl_int status = CL_COMPLETE;
        REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                               nullptr) == CL_SUCCESS);
        clReleaseEvent(ev);
        return status;
    }
    /// Runs `k` like run(), checks that the launch was stopped (CL_OUT_OF_RESOURCES) and that
    /// the messages so far include `message`; returns the messages.
    std::string runStopped(cl_kernel k, size_t global, size_t local, const std::string& message) {
        const cl_int status = run(k, global, local);
        INFO(errorName(status));
        CHECK(status == CL_OUT_OF_RESOURCES);
        std::string all = allMessages();
        CHECK_THAT(all, Catch::Contains(message));
        return all;
    }
};

template <class T> void setArg(cl_kernel k, cl_uint i, const T& v) {
    REQUIRE(clSetKernelArg(k, i, sizeof(T), &v) == CL_SUCCESS);
}

} // namespace duet::test
