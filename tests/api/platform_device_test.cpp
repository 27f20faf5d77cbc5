// Platform and device queries: every OpenCL 3.0 parameter answered, and the error cases.
#include "support/cl_test.hpp"

#include <CL/cl_ext.h>

#include <thread>

using namespace duet::test;

TEST_CASE("the platform is Duet and its queries are well formed", "[api][platform]") {
    cl_platform_id p = platformUnderTest();
    CHECK(platformString(p, CL_PLATFORM_NAME) == "Duet");
    CHECK(platformString(p, CL_PLATFORM_PROFILE) == "FULL_PROFILE");
    CHECK(platformString(p, CL_PLATFORM_VERSION).rfind("OpenCL 3.0 ", 0) == 0);
    CHECK(platformString(p, CL_PLATFORM_EXTENSIONS).find("cl_khr_icd") != std::string::npos);
    cl_version v = 0;
    REQUIRE_CL(clGetPlatformInfo(p, CL_PLATFORM_NUMERIC_VERSION, sizeof v, &v, nullptr));
    CHECK(CL_VERSION_MAJOR(v) == 3);

    char tiny[2];
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof tiny, tiny, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clGetPlatformInfo(p, 0x7fff, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clGetPlatformIDs(0, nullptr, nullptr));
}

TEST_CASE("device lookup by type and bad arguments", "[api][device][cpu]") {
    cl_platform_id p = platformUnderTest();
    cl_uint n = 0;
    REQUIRE_CL(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    CHECK(n >= 1);
    REQUIRE_CL(clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 0, nullptr, &n));
    CHECK_CL_ERR(CL_INVALID_DEVICE_TYPE, clGetDeviceIDs(p, 0, 0, nullptr, &n));
    CHECK_CL_ERR(CL_INVALID_DEVICE_TYPE,
                 clGetDeviceIDs(p, cl_device_type(1) << 40, 0, nullptr, &n));
    CHECK_CL_ERR(CL_DEVICE_NOT_FOUND,
                 clGetDeviceIDs(p, CL_DEVICE_TYPE_ACCELERATOR, 0, nullptr, &n));
    cl_device_id d = defaultDevice();
    CHECK_CL_ERR(CL_INVALID_VALUE, clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, &d, nullptr));
    CHECK_CL_ERR(CL_INVALID_PLATFORM, clGetDeviceIDs(reinterpret_cast<cl_platform_id>(d),
                                                     CL_DEVICE_TYPE_ALL, 1, &d, nullptr));
}

TEST_CASE("every OpenCL 3.0 device query is answered", "[api][device]") {
    cl_device_id d = defaultDevice();
    const cl_device_info params[] = {CL_DEVICE_TYPE,
                                     CL_DEVICE_VENDOR_ID,
                                     CL_DEVICE_MAX_COMPUTE_UNITS,
                                     CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
                                     CL_DEVICE_MAX_WORK_ITEM_SIZES,
                                     CL_DEVICE_MAX_WORK_GROUP_SIZE,
                                     CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,
                                     CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
                                     CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,
                                     CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
                                     CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
                                     CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
                                     CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,
                                     CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,
                                     CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
                                     CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,
                                     CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG,
                                     CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
                                     CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
                                     CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF,
                                     CL_DEVICE_MAX_CLOCK_FREQUENCY,
                                     CL_DEVICE_ADDRESS_BITS,
                                     CL_DEVICE_MAX_MEM_ALLOC_SIZE,
                                     CL_DEVICE_IMAGE_SUPPORT,
                                     CL_DEVICE_MAX_READ_IMAGE_ARGS,
                                     CL_DEVICE_MAX_WRITE_IMAGE_ARGS,
                                     CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS,
                                     CL_DEVICE_IL_VERSION,
                                     CL_DEVICE_ILS_WITH_VERSION,
                                     CL_DEVICE_IMAGE2D_MAX_WIDTH,
                                     CL_DEVICE_IMAGE2D_MAX_HEIGHT,
                                     CL_DEVICE_IMAGE3D_MAX_WIDTH,
                                     CL_DEVICE_IMAGE3D_MAX_HEIGHT,
                                     CL_DEVICE_IMAGE3D_MAX_DEPTH,
                                     CL_DEVICE_IMAGE_MAX_BUFFER_SIZE,
                                     CL_DEVICE_IMAGE_MAX_ARRAY_SIZE,
                                     CL_DEVICE_MAX_SAMPLERS,
                                     CL_DEVICE_IMAGE_PITCH_ALIGNMENT,
                                     CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT,
                                     CL_DEVICE_MAX_PIPE_ARGS,
                                     CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS,
                                     CL_DEVICE_PIPE_MAX_PACKET_SIZE,
                                     CL_DEVICE_MAX_PARAMETER_SIZE,
                                     CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                                     CL_DEVICE_SINGLE_FP_CONFIG,
                                     CL_DEVICE_DOUBLE_FP_CONFIG,
                                     CL_DEVICE_GLOBAL_MEM_CACHE_TYPE,
                                     CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE,
                                     CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
                                     CL_DEVICE_GLOBAL_MEM_SIZE,
                                     CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE,
                                     CL_DEVICE_MAX_CONSTANT_ARGS,
                                     CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE,
                                     CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE,
                                     CL_DEVICE_LOCAL_MEM_TYPE,
                                     CL_DEVICE_LOCAL_MEM_SIZE,
                                     CL_DEVICE_ERROR_CORRECTION_SUPPORT,
                                     CL_DEVICE_PROFILING_TIMER_RESOLUTION,
                                     CL_DEVICE_ENDIAN_LITTLE,
                                     CL_DEVICE_AVAILABLE,
                                     CL_DEVICE_COMPILER_AVAILABLE,
                                     CL_DEVICE_LINKER_AVAILABLE,
                                     CL_DEVICE_EXECUTION_CAPABILITIES,
                                     CL_DEVICE_QUEUE_ON_HOST_PROPERTIES,
                                     CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES,
                                     CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE,
                                     CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE,
                                     CL_DEVICE_MAX_ON_DEVICE_QUEUES,
                                     CL_DEVICE_MAX_ON_DEVICE_EVENTS,
                                     CL_DEVICE_BUILT_IN_KERNELS,
                                     CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION,
                                     CL_DEVICE_PLATFORM,
                                     CL_DEVICE_NAME,
                                     CL_DEVICE_VENDOR,
                                     CL_DRIVER_VERSION,
                                     CL_DEVICE_PROFILE,
                                     CL_DEVICE_VERSION,
                                     CL_DEVICE_NUMERIC_VERSION,
                                     CL_DEVICE_OPENCL_C_VERSION,
                                     CL_DEVICE_OPENCL_C_ALL_VERSIONS,
                                     CL_DEVICE_OPENCL_C_FEATURES,
                                     CL_DEVICE_EXTENSIONS,
                                     CL_DEVICE_EXTENSIONS_WITH_VERSION,
                                     CL_DEVICE_PRINTF_BUFFER_SIZE,
                                     CL_DEVICE_PREFERRED_INTEROP_USER_SYNC,
                                     CL_DEVICE_PARENT_DEVICE,
                                     CL_DEVICE_PARTITION_MAX_SUB_DEVICES,
                                     CL_DEVICE_PARTITION_PROPERTIES,
                                     CL_DEVICE_PARTITION_AFFINITY_DOMAIN,
                                     CL_DEVICE_PARTITION_TYPE,
                                     CL_DEVICE_REFERENCE_COUNT,
                                     CL_DEVICE_SVM_CAPABILITIES,
                                     CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT,
                                     CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT,
                                     CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT,
                                     CL_DEVICE_MAX_NUM_SUB_GROUPS,
                                     CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
                                     CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
                                     CL_DEVICE_ATOMIC_FENCE_CAPABILITIES,
                                     CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT,
                                     CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
                                     CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT,
                                     CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES,
                                     CL_DEVICE_PIPE_SUPPORT,
                                     CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                     CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED,
                                     CL_DEVICE_HALF_FP_CONFIG,
                                     CL_DEVICE_HOST_UNIFIED_MEMORY};
    for (cl_device_info param : params) {
        size_t size = 12345;
        cl_int err = clGetDeviceInfo(d, param, 0, nullptr, &size);
        INFO("param 0x" << std::hex << param);
        CHECK(err == CL_SUCCESS);
        CHECK(size != 12345);
        std::vector<unsigned char> buf(size + 1);
        CHECK(clGetDeviceInfo(d, param, size, buf.data(), nullptr) == CL_SUCCESS);
    }
    CHECK_CL_ERR(CL_INVALID_VALUE, clGetDeviceInfo(d, 0x7fff, 0, nullptr, nullptr));
    cl_uint tooSmall;
    CHECK_CL_ERR(CL_INVALID_VALUE, clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof tooSmall,
                                                   &tooSmall, nullptr));
    // A live handle of another type (the loader can route it; Duet must reject it).
    CHECK_CL_ERR(CL_INVALID_DEVICE,
                 clGetDeviceInfo(reinterpret_cast<cl_device_id>(platformUnderTest()),
                                 CL_DEVICE_NAME, 0, nullptr, nullptr));
}

TEST_CASE("device answers are truthful for the host CPU", "[api][device][cpu]") {
    cl_device_id d = defaultDevice();
    cl_device_type type;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, nullptr));
    CHECK(type == CL_DEVICE_TYPE_CPU);
    cl_uint cus = 0;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, nullptr));
    CHECK(cus == std::thread::hardware_concurrency());
    CHECK(deviceString(d, CL_DEVICE_VERSION).rfind("OpenCL 3.0", 0) == 0);
    CHECK(deviceString(d, CL_DEVICE_EXTENSIONS).find("cl_khr_fp64") != std::string::npos);
    size_t sizes[3];
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, nullptr));
    size_t wg;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr));
    CHECK(sizes[0] <= wg);
    // The partition type of a root device is an empty list.
    size_t n = 99;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_PARTITION_TYPE, 0, nullptr, &n));
    CHECK(n == 0);
    cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_uint num;
    CHECK_CL_ERR(CL_INVALID_VALUE, clCreateSubDevices(d, props, 0, nullptr, &num));
}
