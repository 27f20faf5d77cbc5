// The NVIDIA device through the OpenCL API (ICD loader), without a GPU. [no-driver]: with
// DUET_DEVICES=nvidia and no CUDA driver library, the platform has no device and says so with
// the spec's code. [fake-driver]: with tests/devices/nvidia/fake_cuda.cpp as the driver, the
// device info of what the driver reports, programs built to PTX through clBuildProgram, binaries,
// and enqueues refused with a reason (execution is not in this build).
#include "support/cl_test.hpp"

#include <CL/cl_ext.h>

#include <cstring>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

template <class T> T deviceValue(cl_device_id d, cl_device_info what) {
    T v{};
    REQUIRE_CL(clGetDeviceInfo(d, what, sizeof v, &v, nullptr));
    return v;
}

std::vector<cl_device_id> devices(cl_device_type type, cl_int& status) {
    cl_uint n = 0;
    status = clGetDeviceIDs(platformUnderTest(), type, 0, nullptr, &n);
    std::vector<cl_device_id> out(n);
    if (status == CL_SUCCESS && n)
        REQUIRE_CL(clGetDeviceIDs(platformUnderTest(), type, n, out.data(), nullptr));
    return out;
}

constexpr const char* kNbody = R"CL(
__kernel void nbody(__global const float4* pos, __global float4* acc, __local float4* tile,
                    float eps2) {
    size_t i = get_global_id(0), l = get_local_id(0), n = get_global_size(0);
    float4 p = pos[i];
    float3 a = (float3)(0.0f);
    for (size_t t = 0; t < n; t += get_local_size(0)) {
        tile[l] = pos[t + l];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (size_t j = 0; j < get_local_size(0); ++j) {
            float3 d = tile[j].xyz - p.xyz;
            float inv = rsqrt(dot(d, d) + eps2);
            a += d * (tile[j].w * inv * inv * inv);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc[i] = (float4)(a, 0.0f);
}
)CL";

} // namespace

TEST_CASE("without a CUDA driver, DUET_DEVICES=nvidia gives no device", "[nvidia][no-driver]") {
    cl_int status = CL_SUCCESS;
    std::vector<cl_device_id> all = devices(CL_DEVICE_TYPE_ALL, status);
    CHECK(status == CL_DEVICE_NOT_FOUND);
    CHECK(all.empty());
    devices(CL_DEVICE_TYPE_GPU, status);
    CHECK(status == CL_DEVICE_NOT_FOUND);
    // The platform itself is fine.
    CHECK(platformString(platformUnderTest(), CL_PLATFORM_NAME).find("Duet") != std::string::npos);
    cl_int err = CL_SUCCESS;
    cl_context_properties cp[] = {CL_CONTEXT_PLATFORM, cl_context_properties(platformUnderTest()),
                                  0};
    cl_context ctx = clCreateContextFromType(cp, CL_DEVICE_TYPE_GPU, nullptr, nullptr, &err);
    CHECK(ctx == nullptr);
    CHECK(err == CL_DEVICE_NOT_FOUND);
}

TEST_CASE("a driver's GPUs become devices with what the driver reports", "[nvidia][fake-driver]") {
    cl_int status = CL_SUCCESS;
    std::vector<cl_device_id> gpus = devices(CL_DEVICE_TYPE_GPU, status);
    REQUIRE(status == CL_SUCCESS);
    REQUIRE(gpus.size() == 2);
    cl_device_id h100 = gpus[0], kepler = gpus[1];

    CHECK(deviceString(h100, CL_DEVICE_NAME) == "NVIDIA H100 80GB HBM3 (fake)");
    CHECK(deviceString(h100, CL_DEVICE_VENDOR) == "NVIDIA Corporation");
    CHECK(deviceValue<cl_uint>(h100, CL_DEVICE_VENDOR_ID) == 0x10de);
    CHECK(deviceValue<cl_device_type>(h100, CL_DEVICE_TYPE) == CL_DEVICE_TYPE_GPU);
    CHECK(deviceValue<cl_bool>(h100, CL_DEVICE_AVAILABLE) == CL_TRUE);
    CHECK(deviceValue<cl_uint>(h100, CL_DEVICE_MAX_COMPUTE_UNITS) == 132);
    CHECK(deviceValue<cl_uint>(h100, CL_DEVICE_MAX_CLOCK_FREQUENCY) == 1980);
    CHECK(deviceValue<size_t>(h100, CL_DEVICE_MAX_WORK_GROUP_SIZE) == 1024);
    size_t sizes[3] = {};
    REQUIRE_CL(clGetDeviceInfo(h100, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, nullptr));
    CHECK(sizes[0] == 1024);
    CHECK(sizes[2] == 64);
    CHECK(deviceValue<cl_ulong>(h100, CL_DEVICE_GLOBAL_MEM_SIZE) == 85031714816ull);
    CHECK(deviceValue<cl_ulong>(h100, CL_DEVICE_LOCAL_MEM_SIZE) == 232448);
    CHECK(deviceValue<cl_device_local_mem_type>(h100, CL_DEVICE_LOCAL_MEM_TYPE) == CL_LOCAL);
    CHECK(deviceValue<cl_ulong>(h100, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE) == 52428800);
    CHECK(deviceValue<cl_bool>(h100, CL_DEVICE_ERROR_CORRECTION_SUPPORT) == CL_TRUE);
    CHECK(deviceValue<cl_bool>(h100, CL_DEVICE_IMAGE_SUPPORT) == CL_FALSE);
    CHECK(deviceValue<size_t>(h100, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE) == 32);
    CHECK(deviceString(h100, CL_DEVICE_VERSION).rfind("OpenCL 3.0", 0) == 0);
    const std::string ext = deviceString(h100, CL_DEVICE_EXTENSIONS);
    CHECK(ext.find("cl_khr_fp64") != std::string::npos);
    CHECK(ext.find("cl_khr_int64_base_atomics") != std::string::npos);
    CHECK(ext.find("image") == std::string::npos);
    CHECK(ext.find("cl_khr_gl_sharing") == std::string::npos);
    size_t bytes = 0;
    REQUIRE_CL(clGetDeviceInfo(h100, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &bytes));
    std::vector<cl_name_version> features(bytes / sizeof(cl_name_version));
    REQUIRE_CL(clGetDeviceInfo(h100, CL_DEVICE_OPENCL_C_FEATURES, bytes, features.data(), nullptr));
    std::string names;
    for (const cl_name_version& f : features)
        names += std::string(f.name) + " ";
    CHECK(names.find("__opencl_c_generic_address_space") != std::string::npos);
    CHECK(names.find("__opencl_c_fp64") != std::string::npos);
    CHECK(names.find("__opencl_c_images") == std::string::npos);
    CHECK(deviceValue<cl_bool>(h100, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT) == CL_TRUE);

    // The Kepler board is listed, not available, with the reason in the logs.
    CHECK(deviceString(kepler, CL_DEVICE_NAME) == "Tesla K40m (fake)");
    CHECK(deviceValue<cl_bool>(kepler, CL_DEVICE_AVAILABLE) == CL_FALSE);
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &kepler, nullptr, nullptr, &err);
    CHECK(ctx == nullptr);
    CHECK(err == CL_DEVICE_NOT_AVAILABLE);
}

TEST_CASE("programs build to PTX through the API; enqueues say execution is missing",
          "[nvidia][fake-driver]") {
    cl_int status = CL_SUCCESS;
    std::vector<cl_device_id> gpus = devices(CL_DEVICE_TYPE_GPU, status);
    REQUIRE(gpus.size() == 2);
    cl_device_id dev = gpus[0];
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);

    // A build failure keeps clang's log.
    const char* bad = "__kernel void k(__global int* p) { *p = ; }";
    cl_program broken = clCreateProgramWithSource(ctx, 1, &bad, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK_CL_ERR(CL_BUILD_PROGRAM_FAILURE, clBuildProgram(broken, 1, &dev, "", nullptr, nullptr));
    CHECK(buildLog(broken, dev).find("error: expected expression") != std::string::npos);
    clReleaseProgram(broken);

    cl_program p = buildProgram(ctx, dev, kNbody, "-cl-fast-relaxed-math");
    size_t size = 0;
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
    std::vector<unsigned char> binary(size);
    unsigned char* ptr = binary.data();
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr));
    const std::string text(binary.begin(), binary.end());
    CHECK(text.rfind("\x7f"
                     "ELF",
                     0) == 0);
    CHECK(text.find(".target sm_90") != std::string::npos);
    CHECK(text.find(".entry nbody(") != std::string::npos);

    // The binary makes the same program again, without recompiling.
    const unsigned char* in = binary.data();
    cl_int binStatus = CL_SUCCESS;
    cl_program again = clCreateProgramWithBinary(ctx, 1, &dev, &size, &in, &binStatus, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(binStatus == CL_SUCCESS);
    REQUIRE_CL(clBuildProgram(again, 1, &dev, "", nullptr, nullptr));

    cl_kernel k = clCreateKernel(again, "nbody", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_ulong localBytes = 0;
    REQUIRE_CL(clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof localBytes,
                                        &localBytes, nullptr));
    CHECK(localBytes == 0);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1024 * 16, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const float eps2 = 0.01f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof buf, &buf));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof buf, &buf));
    REQUIRE_CL(clSetKernelArg(k, 2, 256 * 16, nullptr));
    REQUIRE_CL(clSetKernelArg(k, 3, sizeof eps2, &eps2));
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const size_t global = 1024, local = 256;
    CHECK_CL_ERR(CL_OUT_OF_RESOURCES,
                 clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    clReleaseCommandQueue(q);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(again);
    clReleaseProgram(p);
    clReleaseContext(ctx);
}
