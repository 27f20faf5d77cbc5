// Platform and device entry points: discovery, clGetPlatformInfo, clGetDeviceInfo, timers.
#include "api/api.hpp"
#include "gl/gl_share.hpp"
#include "core/device.hpp"
#include "core/event.hpp"
#include "duet/version.hpp"

#include <CL/cl_ext.h>

#include <time.h>
#include <tuple>

using namespace duet::api;

namespace {

cl_int getPlatformIds(cl_uint num, cl_platform_id* platforms, cl_uint* numRet) {
    // CL_INVALID_VALUE: num_entries is 0 and platforms is not NULL, or both are NULL.
    if ((num == 0 && platforms) || (!platforms && !numRet))
        return report("clGetPlatformIDs", nullptr, CL_INVALID_VALUE,
                      "num_entries is 0 with a platforms array, or both outputs are NULL");
    Platform& p = Platform::get();
    if (platforms)
        platforms[0] = &p;
    if (numRet)
        *numRet = 1;
    return CL_SUCCESS;
}

Platform* platformOrDefault(cl_platform_id id) {
    if (!id)
        return &Platform::get();
    return from<Platform>(id);
}

} // namespace

DUET_API cl_int CL_API_CALL clGetPlatformIDs(cl_uint num, cl_platform_id* platforms,
                                             cl_uint* numRet) {
    return guard("clGetPlatformIDs", [&] { return getPlatformIds(num, platforms, numRet); });
}

DUET_API cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num, cl_platform_id* platforms,
                                                   cl_uint* numRet) {
    return guard("clIcdGetPlatformIDsKHR", [&] { return getPlatformIds(num, platforms, numRet); });
}

DUET_API cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform, cl_platform_info param,
                                              size_t size, void* value, size_t* sizeRet) {
    return guard("clGetPlatformInfo", [&]() -> cl_int {
        const char* api = "clGetPlatformInfo";
        Platform* p = platformOrDefault(platform);
        if (!p)
            return report(api, nullptr, CL_INVALID_PLATFORM, "not a Duet platform");
        cl_int r;
        switch (param) {
        case CL_PLATFORM_PROFILE:
            r = infoString(size, value, sizeRet, "FULL_PROFILE");
            break;
        case CL_PLATFORM_VERSION:
            r = infoString(size, value, sizeRet, "OpenCL 3.0 Duet " DUET_VERSION);
            break;
        case CL_PLATFORM_NUMERIC_VERSION:
            r = infoValue<cl_version>(size, value, sizeRet, CL_MAKE_VERSION(3, 0, 0));
            break;
        case CL_PLATFORM_NAME:
            r = infoString(size, value, sizeRet, "Duet");
            break;
        case CL_PLATFORM_VENDOR:
            r = infoString(size, value, sizeRet, "Duet");
            break;
        case CL_PLATFORM_EXTENSIONS:
            r = infoString(size, value, sizeRet, p->extensions());
            break;
        case CL_PLATFORM_EXTENSIONS_WITH_VERSION:
            r = infoVector(size, value, sizeRet, p->extensionsWithVersion());
            break;
        case CL_PLATFORM_HOST_TIMER_RESOLUTION:
            r = infoValue<cl_ulong>(size, value, sizeRet, 1);
            break;
        case CL_PLATFORM_ICD_SUFFIX_KHR:
            r = infoString(size, value, sizeRet, "Duet");
            break;
        default:
            return report(api, nullptr, CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, nullptr, r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform, cl_device_type type,
                                           cl_uint num, cl_device_id* devices, cl_uint* numRet) {
    return guard("clGetDeviceIDs", [&]() -> cl_int {
        const char* api = "clGetDeviceIDs";
        Platform* p = platformOrDefault(platform);
        if (!p)
            return report(api, nullptr, CL_INVALID_PLATFORM, "not a Duet platform");
        const cl_device_type known = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU |
                                     CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR |
                                     CL_DEVICE_TYPE_CUSTOM;
        if (type != CL_DEVICE_TYPE_ALL && (type == 0 || (type & ~known)))
            return report(api, nullptr, CL_INVALID_DEVICE_TYPE, "device_type is not valid");
        if ((num == 0 && devices) || (!devices && !numRet))
            return report(api, nullptr, CL_INVALID_VALUE,
                          "num_entries is 0 with a devices array, or both outputs are NULL");
        std::vector<Device*> found;
        for (Device* d : p->devices()) {
            if (type == CL_DEVICE_TYPE_ALL || (type & d->info().type))
                found.push_back(d);
        }
        // CL_DEVICE_TYPE_DEFAULT: the first device (the fastest; the CPU when listed — the
        // modelled GCN device never is the default over it, being far slower).
        if ((type & CL_DEVICE_TYPE_DEFAULT) && found.empty() && !p->devices().empty()) {
            Device* pick = p->devices().front();
            for (Device* d : p->devices())
                if (d->info().type & CL_DEVICE_TYPE_CPU) {
                    pick = d;
                    break;
                }
            found.push_back(pick);
        }
        if (found.empty())
            return report(api, nullptr, CL_DEVICE_NOT_FOUND, "no device of the requested type");
        if (devices)
            for (cl_uint i = 0; i < num && i < found.size(); ++i)
                devices[i] = found[i];
        if (numRet)
            *numRet = cl_uint(found.size());
        return CL_SUCCESS;
    });
}

// cl_amd_device_attribute_query values clinfo asks for that the Khronos header lacks.
#ifndef CL_DEVICE_MAX_REAL_TIME_COMPUTE_QUEUES_AMD
#define CL_DEVICE_MAX_REAL_TIME_COMPUTE_QUEUES_AMD 0x404D
#define CL_DEVICE_MAX_REAL_TIME_COMPUTE_UNITS_AMD 0x404E
#endif

namespace {

/// CL_DEVICE_PROFILING_TIMER_OFFSET_AMD: profiling timestamps count CLOCK_MONOTONIC
/// nanoseconds; this offset turns them into nanoseconds since the Unix epoch.
cl_ulong profilingTimerOffsetNs() {
    timespec real{}, mono{};
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    auto ns = [](const timespec& t) {
        return cl_ulong(t.tv_sec) * 1000000000ull + cl_ulong(t.tv_nsec);
    };
    return ns(real) - ns(mono);
}

/// Where clGetDeviceInfo writes its answer, and typed writers for the common value types.
struct InfoOut {
    size_t size;
    void* value;
    size_t* sizeRet;
    auto writers() const {
        auto v = [this](auto x) { return infoValue(size, value, sizeRet, x); };
        auto s = [this](const std::string& x) { return infoString(size, value, sizeRet, x); };
        auto b = [this](bool x) {
            return infoValue<cl_bool>(size, value, sizeRet, x ? CL_TRUE : CL_FALSE);
        };
        auto u = [this](cl_uint x) { return infoValue<cl_uint>(size, value, sizeRet, x); };
        auto z = [this](size_t x) { return infoValue<size_t>(size, value, sizeRet, x); };
        auto ul = [this](cl_ulong x) { return infoValue<cl_ulong>(size, value, sizeRet, x); };
        return std::tuple{v, s, b, u, z, ul};
    }
};

/// A group's answer for a parameter it does not know (the caller tries the next group; in the
/// end it becomes CL_INVALID_VALUE).
constexpr cl_int kNotAnswered = CL_INVALID_OPERATION;

/// Compute units, work-group limits, vector widths, clocks, images.
cl_int computeInfo(const Device* d, const DeviceInfo& i, cl_device_info param, const InfoOut& out) {
    auto [v, s, b, u, z, ul] = out.writers();
    (void)d, (void)v, (void)s, (void)b, (void)u, (void)z, (void)ul;
    switch (param) {
    case CL_DEVICE_TYPE:
        return v(i.type);
    case CL_DEVICE_VENDOR_ID:
        return u(i.vendorId);
    case CL_DEVICE_MAX_COMPUTE_UNITS:
        return u(i.maxComputeUnits);
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS:
        return u(i.maxWorkItemDimensions);
    case CL_DEVICE_MAX_WORK_ITEM_SIZES:
        return writeInfo(out.size, out.value, out.sizeRet, i.maxWorkItemSizes,
                         sizeof i.maxWorkItemSizes);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE:
        return z(i.maxWorkGroupSize);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR:
        return u(i.preferredVectorWidth[0]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT:
        return u(i.preferredVectorWidth[1]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT:
        return u(i.preferredVectorWidth[2]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG:
        return u(i.preferredVectorWidth[3]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT:
        return u(i.preferredVectorWidth[4]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE:
        return u(i.preferredVectorWidth[5]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF:
        return u(i.preferredVectorWidth[6]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR:
        return u(i.nativeVectorWidth[0]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT:
        return u(i.nativeVectorWidth[1]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_INT:
        return u(i.nativeVectorWidth[2]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG:
        return u(i.nativeVectorWidth[3]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT:
        return u(i.nativeVectorWidth[4]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE:
        return u(i.nativeVectorWidth[5]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF:
        return u(i.nativeVectorWidth[6]);
    case CL_DEVICE_MAX_CLOCK_FREQUENCY:
        return u(i.maxClockFrequency);
    case CL_DEVICE_ADDRESS_BITS:
        return u(i.addressBits);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
        return ul(i.maxMemAllocSize);
    case CL_DEVICE_IMAGE_SUPPORT:
        return b(i.imageSupport);
    case CL_DEVICE_MAX_READ_IMAGE_ARGS:
        return u(i.imageSupport ? i.maxReadImageArgs : 0);
    case CL_DEVICE_MAX_WRITE_IMAGE_ARGS:
        return u(i.imageSupport ? i.maxWriteImageArgs : 0);
    case CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS:
        return u(i.imageSupport ? i.maxReadWriteImageArgs : 0);
    case CL_DEVICE_IMAGE2D_MAX_WIDTH:
        return z(i.imageSupport ? i.image2dMaxWidth : 0);
    case CL_DEVICE_IMAGE2D_MAX_HEIGHT:
        return z(i.imageSupport ? i.image2dMaxHeight : 0);
    case CL_DEVICE_IMAGE3D_MAX_WIDTH:
        return z(i.imageSupport ? i.image3dMaxWidth : 0);
    case CL_DEVICE_IMAGE3D_MAX_HEIGHT:
        return z(i.imageSupport ? i.image3dMaxHeight : 0);
    case CL_DEVICE_IMAGE3D_MAX_DEPTH:
        return z(i.imageSupport ? i.image3dMaxDepth : 0);
    case CL_DEVICE_IMAGE_MAX_BUFFER_SIZE:
        return z(i.imageSupport ? i.imageMaxBufferSize : 0);
    case CL_DEVICE_IMAGE_MAX_ARRAY_SIZE:
        return z(i.imageSupport ? i.imageMaxArraySize : 0);
    case CL_DEVICE_MAX_SAMPLERS:
        return u(i.imageSupport ? i.maxSamplers : 0);
    case CL_DEVICE_IMAGE_PITCH_ALIGNMENT:
        return u(i.imageSupport ? i.imagePitchAlignment : 0);
    case CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT:
        return u(i.imageSupport ? i.imageBaseAddressAlignment : 0);
    case CL_DEVICE_MAX_PARAMETER_SIZE:
        return z(i.maxParameterSize);
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN:
        return u(i.memBaseAddrAlign);
    case CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE:
        return u(128);
    default:
        break;
    }
    return kNotAnswered;
}

/// Floating-point configuration, memory and caches, queues and capabilities.
cl_int memoryInfo(const Device* d, const DeviceInfo& i, cl_device_info param, const InfoOut& out) {
    auto [v, s, b, u, z, ul] = out.writers();
    (void)d, (void)v, (void)s, (void)b, (void)u, (void)z, (void)ul;
    switch (param) {
    case CL_DEVICE_SINGLE_FP_CONFIG:
        return v(i.singleFpConfig);
    case CL_DEVICE_DOUBLE_FP_CONFIG:
        return v(i.doubleFpConfig);
    case CL_DEVICE_HALF_FP_CONFIG:
        return v(i.halfFpConfig);
    case CL_DEVICE_GLOBAL_MEM_CACHE_TYPE:
        return v(i.globalMemCacheType);
    case CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE:
        return u(i.globalMemCachelineSize);
    case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE:
        return ul(i.globalMemCacheSize);
    case CL_DEVICE_GLOBAL_MEM_SIZE:
        return ul(i.globalMemSize);
    case CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE:
        return ul(i.maxConstantBufferSize);
    case CL_DEVICE_MAX_CONSTANT_ARGS:
        return u(i.maxConstantArgs);
    case CL_DEVICE_LOCAL_MEM_TYPE:
        return v(i.localMemType);
    case CL_DEVICE_LOCAL_MEM_SIZE:
        return ul(i.localMemSize);
    case CL_DEVICE_ERROR_CORRECTION_SUPPORT:
        return b(i.errorCorrectionSupport);
    case CL_DEVICE_HOST_UNIFIED_MEMORY:
        return b(i.hostUnifiedMemory);
    case CL_DEVICE_PROFILING_TIMER_RESOLUTION:
        return z(i.profilingTimerResolution);
    case CL_DEVICE_ENDIAN_LITTLE:
        return b(i.endianLittle);
    case CL_DEVICE_AVAILABLE:
        return b(i.available);
    case CL_DEVICE_COMPILER_AVAILABLE:
        return b(i.compilerAvailable);
    case CL_DEVICE_LINKER_AVAILABLE:
        return b(i.linkerAvailable);
    case CL_DEVICE_EXECUTION_CAPABILITIES:
        return v(i.executionCapabilities);
    case CL_DEVICE_QUEUE_ON_HOST_PROPERTIES:
        return v(i.queueProperties);
    case CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES:
        return v(i.queueOnDeviceProperties);
    case CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE:
        return u(i.queueOnDevicePreferredSize);
    case CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE:
        return u(i.queueOnDeviceMaxSize);
    case CL_DEVICE_MAX_ON_DEVICE_QUEUES:
        return u(i.maxOnDeviceQueues);
    case CL_DEVICE_MAX_ON_DEVICE_EVENTS:
        return u(i.maxOnDeviceEvents);
    default:
        break;
    }
    return kNotAnswered;
}

/// Names, versions, extensions, features, partitioning, SVM, atomics, pipes.
cl_int identityInfo(const Device* d, const DeviceInfo& i, cl_device_info param,
                    const InfoOut& out) {
    auto [v, s, b, u, z, ul] = out.writers();
    (void)d, (void)v, (void)s, (void)b, (void)u, (void)z, (void)ul;
    switch (param) {
    case CL_DEVICE_BUILT_IN_KERNELS:
        return s("");
    case CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION:
        return infoVector(out.size, out.value, out.sizeRet, i.builtInKernelsWithVersion);
    case CL_DEVICE_PLATFORM:
        return v(static_cast<cl_platform_id>(d->platform()));
    case CL_DEVICE_NAME:
        return s(i.name);
    case CL_DEVICE_VENDOR:
        return s(i.vendor);
    case CL_DRIVER_VERSION:
        return s(i.driverVersion);
    case CL_DEVICE_PROFILE:
        return s(i.profile);
    case CL_DEVICE_VERSION:
        return s(i.version);
    case CL_DEVICE_NUMERIC_VERSION:
        return v(i.numericVersion);
    case CL_DEVICE_OPENCL_C_VERSION:
        return s(i.openclCVersion);
    case CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR:
        return v(cl_version(CL_MAKE_VERSION(1, 2, 0)));
    case CL_DEVICE_OPENCL_C_ALL_VERSIONS:
        return infoVector(out.size, out.value, out.sizeRet, i.openclCAllVersions);
    case CL_DEVICE_OPENCL_C_FEATURES:
        return infoVector(out.size, out.value, out.sizeRet, i.openclCFeatures);
    case CL_DEVICE_EXTENSIONS:
        return s(i.extensions);
    case CL_DEVICE_EXTENSIONS_WITH_VERSION:
        return infoVector(out.size, out.value, out.sizeRet, i.extensionsWithVersion);
    case CL_DEVICE_ILS_WITH_VERSION: // what the device's compiler takes (SPIR-V: translator)
        return infoVector(out.size, out.value, out.sizeRet, d->backend().toolchain().ilVersions());
    case CL_DEVICE_IL_VERSION: {
        std::string ils;
        for (const cl_name_version& v : d->backend().toolchain().ilVersions())
            ils += (ils.empty() ? "" : " ") + std::string(v.name) + "_" +
                   std::to_string(CL_VERSION_MAJOR(v.version)) + "." +
                   std::to_string(CL_VERSION_MINOR(v.version));
        return s(ils);
    }
    case CL_DEVICE_PRINTF_BUFFER_SIZE:
        return z(i.printfBufferSize);
    case CL_DEVICE_PREFERRED_INTEROP_USER_SYNC:
        return b(i.preferredInteropUserSync);
    case CL_DEVICE_PARENT_DEVICE:
        return v(cl_device_id(nullptr));
    case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
        return u(0);
    case CL_DEVICE_PARTITION_PROPERTIES:
    case CL_DEVICE_PARTITION_TYPE: {
        // Not partitionable: the spec's answer is a single 0 property (partition type: none).
        if (param == CL_DEVICE_PARTITION_TYPE)
            return writeInfo(out.size, out.value, out.sizeRet, nullptr, 0);
        cl_device_partition_property none = 0;
        return v(none);
    }
    case CL_DEVICE_PARTITION_AFFINITY_DOMAIN:
        return v(cl_device_affinity_domain(0));
    case CL_DEVICE_REFERENCE_COUNT:
        return u(1);
    case CL_DEVICE_SVM_CAPABILITIES:
        return v(i.svmCapabilities);
    case CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT:
    case CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT:
    case CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT:
        return u(0);
    case CL_DEVICE_MAX_PIPE_ARGS:
        return u(i.maxPipeArgs);
    case CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS:
        return u(i.pipeMaxActiveReservations);
    case CL_DEVICE_PIPE_MAX_PACKET_SIZE:
        return u(i.pipeMaxPacketSize);
    case CL_DEVICE_PIPE_SUPPORT:
        return b(i.pipeSupport);
    case CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE:
        return z(i.globalVariableMaxSize);
    case CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE:
        return z(i.globalVariablePreferredTotalSize);
    case CL_DEVICE_MAX_NUM_SUB_GROUPS:
        // The sub-groups of the largest work-group.
        if (i.subGroupSize == 0)
            return u(0);
        return u(static_cast<cl_uint>((i.maxWorkGroupSize + i.subGroupSize - 1) / i.subGroupSize));
    case CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
        return b(i.subGroupIndependentForwardProgress);
    case CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES:
        return v(i.atomicMemoryCapabilities);
    case CL_DEVICE_ATOMIC_FENCE_CAPABILITIES:
        return v(i.atomicFenceCapabilities);
    case CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT:
        return b(i.nonUniformWorkGroup);
    case CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT:
        return b(i.workGroupCollectives);
    case CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT:
        return b(i.genericAddressSpace);
    case CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES:
        return v(i.deviceEnqueueCapabilities);
    case CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
        return z(i.preferredWorkGroupSizeMultiple);
    case CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED:
        return s(i.latestConformanceVersionPassed);
    case CL_DEVICE_BOARD_NAME_AMD:
        if (i.boardName.empty())
            break;
        return s(i.boardName);
    default:
        break;
    }
    return kNotAnswered;
}

/// cl_amd_device_attribute_query: only devices that report it answer.
cl_int amdInfo(const Device* d, const DeviceInfo& i, cl_device_info param, const InfoOut& out) {
    auto [v, s, b, u, z, ul] = out.writers();
    (void)d, (void)v, (void)s, (void)b, (void)u, (void)z, (void)ul;
    switch (param) {
    case CL_DEVICE_TOPOLOGY_AMD:
        return v(i.topology);
    case CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD:
        return u(i.simdPerComputeUnit);
    case CL_DEVICE_SIMD_WIDTH_AMD:
        return u(i.simdWidth);
    case CL_DEVICE_SIMD_INSTRUCTION_WIDTH_AMD:
        return u(i.simdInstructionWidth);
    case CL_DEVICE_WAVEFRONT_WIDTH_AMD:
        return u(i.wavefrontWidth);
    case CL_DEVICE_GFXIP_MAJOR_AMD:
        return u(i.gfxipMajor);
    case CL_DEVICE_GFXIP_MINOR_AMD:
        return u(i.gfxipMinor);
    case CL_DEVICE_LOCAL_MEM_SIZE_PER_COMPUTE_UNIT_AMD:
        return u(i.localMemSizePerComputeUnit);
    case CL_DEVICE_LOCAL_MEM_BANKS_AMD:
        return u(i.localMemBanks);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE_AMD:
        return z(i.maxWorkGroupSize);
    case CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_AMD:
        return z(i.preferredWorkGroupSizeMultiple);
    case CL_DEVICE_PCIE_ID_AMD:
        return u(i.pcieId);
    case CL_DEVICE_GLOBAL_FREE_MEMORY_AMD:
        return v(d->backend().freeGlobalMemoryKiB());
    case CL_DEVICE_GLOBAL_MEM_CHANNELS_AMD:
        return u(i.globalMemChannels);
    case CL_DEVICE_GLOBAL_MEM_CHANNEL_BANKS_AMD:
        return u(i.globalMemChannelBanks);
    case CL_DEVICE_GLOBAL_MEM_CHANNEL_BANK_WIDTH_AMD:
        return u(i.globalMemChannelBankWidth);
    case CL_DEVICE_PREFERRED_CONSTANT_BUFFER_SIZE_AMD:
        return z(i.preferredConstantBufferSize);
    case CL_DEVICE_PROFILING_TIMER_OFFSET_AMD:
        return v(profilingTimerOffsetNs());
    case CL_DEVICE_THREAD_TRACE_SUPPORTED_AMD:
        return b(false);
    case CL_DEVICE_AVAILABLE_ASYNC_QUEUES_AMD:
        return u(i.asyncQueues);
    case CL_DEVICE_MAX_REAL_TIME_COMPUTE_QUEUES_AMD:
        return u(0);
    case CL_DEVICE_MAX_REAL_TIME_COMPUTE_UNITS_AMD:
        return u(0);
    default:
        break;
    }
    return kNotAnswered;
}

cl_int deviceInfo(Device* d, cl_device_info param, size_t size, void* value, size_t* sizeRet) {
    const DeviceInfo& i = d->info();
    const InfoOut out{size, value, sizeRet};
    for (auto group : {computeInfo, memoryInfo, identityInfo})
        if (cl_int r = group(d, i, param, out); r != kNotAnswered)
            return r;
    if (i.amdAttributes)
        return amdInfo(d, i, param, out);
    return kNotAnswered; // unknown parameter (turned into CL_INVALID_VALUE)
}

} // namespace

DUET_API cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device, cl_device_info param, size_t size,
                                            void* value, size_t* sizeRet) {
    return guard("clGetDeviceInfo", [&]() -> cl_int {
        const char* api = "clGetDeviceInfo";
        Device* d = from<Device>(device);
        if (!d)
            return report(api, nullptr, CL_INVALID_DEVICE, "not a valid device");
        cl_int r = deviceInfo(d, param, size, value, sizeRet);
        if (r == CL_INVALID_OPERATION)
            return report(
                api, nullptr, CL_INVALID_VALUE, "unknown param_name 0x" + [&] {
                    char buf[16];
                    std::snprintf(buf, sizeof buf, "%x", param);
                    return std::string(buf);
                }());
        if (r != CL_SUCCESS)
            return report(api, nullptr, r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clCreateSubDevices(cl_device_id device,
                                               const cl_device_partition_property* props, cl_uint,
                                               cl_device_id*, cl_uint*) {
    return guard("clCreateSubDevices", [&]() -> cl_int {
        if (!from<Device>(device))
            return report("clCreateSubDevices", nullptr, CL_INVALID_DEVICE, "not a valid device");
        (void)props;
        // CL_DEVICE_PARTITION_PROPERTIES reports no partition type, so every request is one
        // the device does not support.
        return report("clCreateSubDevices", nullptr, CL_INVALID_VALUE,
                      "this device cannot be partitioned (CL_DEVICE_PARTITION_PROPERTIES is 0)");
    });
}

DUET_API cl_int CL_API_CALL clRetainDevice(cl_device_id device) {
    return from<Device>(device)
               ? CL_SUCCESS
               : report("clRetainDevice", nullptr, CL_INVALID_DEVICE, "not a valid device");
}

DUET_API cl_int CL_API_CALL clReleaseDevice(cl_device_id device) {
    return from<Device>(device)
               ? CL_SUCCESS
               : report("clReleaseDevice", nullptr, CL_INVALID_DEVICE, "not a valid device");
}

DUET_API cl_int CL_API_CALL clGetDeviceAndHostTimer(cl_device_id device, cl_ulong* deviceTs,
                                                    cl_ulong* hostTs) {
    if (!from<Device>(device))
        return report("clGetDeviceAndHostTimer", nullptr, CL_INVALID_DEVICE, "not a valid device");
    if (!deviceTs || !hostTs)
        return report("clGetDeviceAndHostTimer", nullptr, CL_INVALID_VALUE,
                      "device_timestamp or host_timestamp is NULL");
    *deviceTs = *hostTs = nowNs(); // one clock serves both on the CPU device
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clGetHostTimer(cl_device_id device, cl_ulong* hostTs) {
    if (!from<Device>(device))
        return report("clGetHostTimer", nullptr, CL_INVALID_DEVICE, "not a valid device");
    if (!hostTs)
        return report("clGetHostTimer", nullptr, CL_INVALID_VALUE, "host_timestamp is NULL");
    *hostTs = nowNs();
    return CL_SUCCESS;
}

DUET_API void* CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                                    const char* name) {
    if (!from<Platform>(platform) || !name)
        return nullptr;
    if (std::string_view(name) == "clIcdGetPlatformIDsKHR")
        return reinterpret_cast<void*>(&clIcdGetPlatformIDsKHR);
    if (std::string_view(name) == "clGetKernelSubGroupInfoKHR")
        return reinterpret_cast<void*>(&clGetKernelSubGroupInfoKHR);
    return duet::rt::gl::extensionFunction(name);
}

DUET_API void* CL_API_CALL clGetExtensionFunctionAddress(const char* name) {
    return clGetExtensionFunctionAddressForPlatform(&Platform::get(), name);
}

DUET_API cl_int CL_API_CALL clUnloadCompiler() {
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clUnloadPlatformCompiler(cl_platform_id platform) {
    if (!from<Platform>(platform))
        return report("clUnloadPlatformCompiler", nullptr, CL_INVALID_PLATFORM,
                      "not a Duet platform");
    return CL_SUCCESS;
}
