// Test support implementation.
#include "support/cl_test.hpp"

namespace duet::test {

const char* errorName(cl_int code) {
    switch (code) {
#define E(x)                                                                                   \
    case x:                                                                                    \
        return #x;
        E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE)
        E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES)
        E(CL_OUT_OF_HOST_MEMORY) E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP)
        E(CL_IMAGE_FORMAT_MISMATCH) E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE)
        E(CL_MAP_FAILURE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) E(CL_COMPILE_PROGRAM_FAILURE)
        E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE) E(CL_DEVICE_PARTITION_FAILED)
        E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE)
        E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
        E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
        E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
        E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
        E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
        E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
        E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
        E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
        E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT)
        E(CL_INVALID_OPERATION) E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_GLOBAL_WORK_SIZE)
        E(CL_INVALID_PROPERTY) E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS)
        E(CL_INVALID_LINKER_OPTIONS)
#undef E
    case -1000:
        return "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR";
    case -1001:
        return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
        return "CL_UNKNOWN_ERROR";
    }
}

std::string platformString(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    clGetPlatformInfo(p, what, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, s.data(), nullptr);
    if (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

std::string deviceString(cl_device_id d, cl_device_info what) {
    size_t n = 0;
    clGetDeviceInfo(d, what, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetDeviceInfo(d, what, n, s.data(), nullptr);
    if (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

cl_platform_id platformUnderTest() {
    const char* env = std::getenv("DUET_TEST_PLATFORM");
    std::string want = env && *env ? env : "Duet";
    cl_uint n = 0;
    clGetPlatformIDs(0, nullptr, &n);
    std::vector<cl_platform_id> ps(n);
    if (n)
        clGetPlatformIDs(n, ps.data(), nullptr);
    for (cl_platform_id p : ps)
        if (platformString(p, CL_PLATFORM_NAME).find(want) != std::string::npos)
            return p;
    FAIL("no OpenCL platform named like '" << want << "' (set DUET_TEST_PLATFORM)");
    return nullptr;
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

} // namespace duet::test
