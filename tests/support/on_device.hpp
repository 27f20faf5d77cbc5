// Running one program on each of Duet's devices (DUET_DEVICES=cpu,gcn) to compare the GCN
// device's results with the CPU device's.
#pragma once

#include "support/cl_test.hpp"

#include <string>
#include <utility>
#include <vector>

namespace duet::test {

/// One device's context, in-order queue and built program (the build must succeed).
struct OnDevice {
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    cl_program program = nullptr;
    OnDevice(cl_device_id d, const std::string& source, const std::string& options = "")
        : device(d) {
        cl_int e = CL_SUCCESS;
        context = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &e);
        REQUIRE_CL(e);
        queue = clCreateCommandQueueWithProperties(context, d, nullptr, &e);
        REQUIRE_CL(e);
        program = buildProgram(context, d, source, options);
        REQUIRE(program);
    }
    ~OnDevice() {
        clReleaseProgram(program);
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
    OnDevice(const OnDevice&) = delete;
    OnDevice& operator=(const OnDevice&) = delete;
    cl_kernel kernel(const char* name) {
        cl_int e = CL_SUCCESS;
        cl_kernel k = clCreateKernel(program, name, &e);
        REQUIRE_CL(e);
        return k;
    }
    /// A read-write buffer, initialised from `init` when given.
    cl_mem buffer(size_t bytes, const void* init = nullptr) {
        cl_int e = CL_SUCCESS;
        cl_mem m = clCreateBuffer(context, init ? CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE, bytes,
                                  const_cast<void*>(init), &e);
        REQUIRE_CL(e);
        return m;
    }
    template <class T> std::vector<T> read(cl_mem m, size_t count) {
        std::vector<T> v(count);
        REQUIRE_CL(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, count * sizeof(T), v.data(), 0,
                                       nullptr, nullptr));
        return v;
    }
    /// A 1D launch (local size 0: the device picks), waited for.
    void run(cl_kernel k, size_t global, size_t local = 0) {
        REQUIRE_CL(clEnqueueNDRangeKernel(queue, k, 1, nullptr, &global, local ? &local : nullptr,
                                          0, nullptr, nullptr));
        REQUIRE_CL(clFinish(queue));
    }
};

/// The platform's first device of `type` (CL_DEVICE_TYPE_CPU: the CPU device, _GPU: GCN).
inline cl_device_id deviceOfType(cl_device_type type) {
    cl_device_id d = nullptr;
    REQUIRE_CL(clGetDeviceIDs(platformUnderTest(), type, 1, &d, nullptr));
    return d;
}

/// The CPU and the GCN device of the Duet platform, in the order tests compare them.
inline std::pair<cl_device_id, cl_device_id> cpuAndGcn() {
    return {deviceOfType(CL_DEVICE_TYPE_CPU), deviceOfType(CL_DEVICE_TYPE_GPU)};
}

} // namespace duet::test
