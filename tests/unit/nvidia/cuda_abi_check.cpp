// Offline check of devices/nvidia/cuda_driver.hpp against a CUDA toolkit's cuda.h, built only
// where one is installed (Duet itself never includes cuda.h): every enum value Duet declares
// equals cuda.h's, every entry point resolves the symbol cuda.h maps the API name to (the
// versioned `_v2` ones), and each declared signature has cuda.h's arity and parameter sizes.
#include "devices/nvidia/cuda_driver.hpp"

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdio>
#include <string_view>

namespace cu = duet::nvidia::cu;
using duet::nvidia::CudaDriver;

#define DUET_STR2(x) #x
#define DUET_STR(x) DUET_STR2(x)

namespace {

template <class R, class... A> constexpr auto shape(R (*)(A...)) {
    return std::array<size_t, sizeof...(A) + 1>{sizeof(R), sizeof(A)...};
}
template <class M> constexpr auto memberShape() {
    return shape(static_cast<M>(nullptr));
}

} // namespace

// Enum values.
#define DUET_SAME(ours, theirs) static_assert(int(ours) == int(theirs), #ours " != " #theirs)
DUET_SAME(cu::kSuccess, CUDA_SUCCESS);
DUET_SAME(cu::kErrorInvalidValue, CUDA_ERROR_INVALID_VALUE);
DUET_SAME(cu::kErrorOutOfMemory, CUDA_ERROR_OUT_OF_MEMORY);
DUET_SAME(cu::kErrorNotInitialized, CUDA_ERROR_NOT_INITIALIZED);
DUET_SAME(cu::kErrorNoDevice, CUDA_ERROR_NO_DEVICE);
DUET_SAME(cu::kErrorInvalidPtx, CUDA_ERROR_INVALID_PTX);
DUET_SAME(cu::kErrorUnsupportedPtxVersion, CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
DUET_SAME(cu::kErrorLaunchOutOfResources, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
DUET_SAME(cu::kErrorHostMemoryAlreadyRegistered, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
DUET_SAME(cu::kMaxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
DUET_SAME(cu::kMaxBlockDimX, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
DUET_SAME(cu::kMaxBlockDimY, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
DUET_SAME(cu::kMaxBlockDimZ, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
DUET_SAME(cu::kMaxGridDimX, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
DUET_SAME(cu::kMaxGridDimY, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
DUET_SAME(cu::kMaxGridDimZ, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
DUET_SAME(cu::kMaxSharedMemoryPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
DUET_SAME(cu::kTotalConstantMemory, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
DUET_SAME(cu::kWarpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
DUET_SAME(cu::kMaxRegistersPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
DUET_SAME(cu::kMaxTexture1dWidth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
DUET_SAME(cu::kMaxTexture2dWidth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
DUET_SAME(cu::kMaxTexture2dHeight, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
DUET_SAME(cu::kMaxTexture3dWidth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH);
DUET_SAME(cu::kMaxTexture3dHeight, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT);
DUET_SAME(cu::kMaxTexture3dDepth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
DUET_SAME(cu::kMaxTexture2dLayers, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS);
DUET_SAME(cu::kMaxTexture1dLayers, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS);
DUET_SAME(cu::kMaxTexture1dLinearWidth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH);
DUET_SAME(cu::kClockRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
DUET_SAME(cu::kMultiprocessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
DUET_SAME(cu::kIntegrated, CU_DEVICE_ATTRIBUTE_INTEGRATED);
DUET_SAME(cu::kCanMapHostMemory, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
DUET_SAME(cu::kComputeMode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
DUET_SAME(cu::kEccEnabled, CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
DUET_SAME(cu::kPciBusId, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
DUET_SAME(cu::kPciDeviceId, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
DUET_SAME(cu::kMemoryClockRate, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
DUET_SAME(cu::kGlobalMemoryBusWidth, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
DUET_SAME(cu::kL2CacheSize, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
DUET_SAME(cu::kMaxThreadsPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
DUET_SAME(cu::kAsyncEngineCount, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
DUET_SAME(cu::kUnifiedAddressing, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
DUET_SAME(cu::kPciDomainId, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
DUET_SAME(cu::kComputeCapabilityMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
DUET_SAME(cu::kComputeCapabilityMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
DUET_SAME(cu::kMaxSharedMemoryPerMultiprocessor,
          CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
DUET_SAME(cu::kMaxSharedMemoryPerBlockOptin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
DUET_SAME(cu::kConcurrentManagedAccess, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
DUET_SAME(cu::kHostRegisterSupported, CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED);
DUET_SAME(cu::kComputeModeProhibited, CU_COMPUTEMODE_PROHIBITED);
DUET_SAME(cu::kFuncMaxThreadsPerBlock, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
DUET_SAME(cu::kFuncSharedSizeBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
DUET_SAME(cu::kFuncConstSizeBytes, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
DUET_SAME(cu::kFuncLocalSizeBytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
DUET_SAME(cu::kFuncNumRegs, CU_FUNC_ATTRIBUTE_NUM_REGS);
DUET_SAME(cu::kFuncPtxVersion, CU_FUNC_ATTRIBUTE_PTX_VERSION);
DUET_SAME(cu::kFuncBinaryVersion, CU_FUNC_ATTRIBUTE_BINARY_VERSION);
DUET_SAME(cu::kFuncMaxDynamicSharedSizeBytes, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
DUET_SAME(cu::kJitInfoLogBuffer, CU_JIT_INFO_LOG_BUFFER);
DUET_SAME(cu::kJitInfoLogBufferSizeBytes, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
DUET_SAME(cu::kJitErrorLogBuffer, CU_JIT_ERROR_LOG_BUFFER);
DUET_SAME(cu::kJitErrorLogBufferSizeBytes, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
DUET_SAME(cu::kJitOptimizationLevel, CU_JIT_OPTIMIZATION_LEVEL);
DUET_SAME(cu::kJitLogVerbose, CU_JIT_LOG_VERBOSE);
DUET_SAME(cu::kMemHostRegisterPortable, CU_MEMHOSTREGISTER_PORTABLE);
DUET_SAME(cu::kMemHostRegisterDeviceMap, CU_MEMHOSTREGISTER_DEVICEMAP);
DUET_SAME(cu::kStreamNonBlocking, CU_STREAM_NON_BLOCKING);
DUET_SAME(cu::kMemAttachGlobal, CU_MEM_ATTACH_GLOBAL);
DUET_SAME(cu::kDeviceCpu, CU_DEVICE_CPU); // cuMemPrefetchAsync's host (the v1 symbol Duet calls)
static_assert(sizeof(cu::DevicePtr) == sizeof(CUdeviceptr));
static_assert(sizeof(cu::Device) == sizeof(CUdevice));
static_assert(sizeof(cu::Result) == sizeof(CUresult));

// Entry points: the symbol cuda_driver.cpp resolves is the one cuda.h names, and the member's
// signature has cuda.h's shape. (cuda.h maps some names to per-thread-stream variants only when
// CUDA_API_PER_THREAD_DEFAULT_STREAM is defined; Duet uses the default ones.)
#define DUET_CHECK(member, api, symbol)                                                            \
    static_assert(std::string_view(DUET_STR(api)) == symbol, #api " is not " symbol);              \
    static_assert(memberShape<decltype(CudaDriver::member)>() == shape(&api),                      \
                  #member " does not have the shape of " #api);
DUET_CHECK(init, cuInit, "cuInit")
DUET_CHECK(driverGetVersion, cuDriverGetVersion, "cuDriverGetVersion")
DUET_CHECK(deviceGetCount, cuDeviceGetCount, "cuDeviceGetCount")
DUET_CHECK(deviceGet, cuDeviceGet, "cuDeviceGet")
DUET_CHECK(deviceGetName, cuDeviceGetName, "cuDeviceGetName")
DUET_CHECK(deviceGetAttribute, cuDeviceGetAttribute, "cuDeviceGetAttribute")
DUET_CHECK(deviceTotalMem, cuDeviceTotalMem, "cuDeviceTotalMem_v2")
DUET_CHECK(getErrorName, cuGetErrorName, "cuGetErrorName")
DUET_CHECK(getErrorString, cuGetErrorString, "cuGetErrorString")
DUET_CHECK(devicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
DUET_CHECK(devicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
DUET_CHECK(ctxPushCurrent, cuCtxPushCurrent, "cuCtxPushCurrent_v2")
DUET_CHECK(ctxPopCurrent, cuCtxPopCurrent, "cuCtxPopCurrent_v2")
DUET_CHECK(ctxSetCurrent, cuCtxSetCurrent, "cuCtxSetCurrent")
DUET_CHECK(ctxSynchronize, cuCtxSynchronize, "cuCtxSynchronize")
DUET_CHECK(memGetInfo, cuMemGetInfo, "cuMemGetInfo_v2")
DUET_CHECK(moduleLoadDataEx, cuModuleLoadDataEx, "cuModuleLoadDataEx")
DUET_CHECK(moduleUnload, cuModuleUnload, "cuModuleUnload")
DUET_CHECK(moduleGetFunction, cuModuleGetFunction, "cuModuleGetFunction")
DUET_CHECK(moduleGetGlobal, cuModuleGetGlobal, "cuModuleGetGlobal_v2")
DUET_CHECK(funcGetAttribute, cuFuncGetAttribute, "cuFuncGetAttribute")
DUET_CHECK(funcSetAttribute, cuFuncSetAttribute, "cuFuncSetAttribute")
DUET_CHECK(launchKernel, cuLaunchKernel, "cuLaunchKernel")
DUET_CHECK(memAlloc, cuMemAlloc, "cuMemAlloc_v2")
DUET_CHECK(memAllocManaged, cuMemAllocManaged, "cuMemAllocManaged")
DUET_CHECK(memFree, cuMemFree, "cuMemFree_v2")
DUET_CHECK(memcpyAsync, cuMemcpyAsync, "cuMemcpyAsync")
DUET_CHECK(memcpyHtoD, cuMemcpyHtoD, "cuMemcpyHtoD_v2")
DUET_CHECK(memcpyDtoH, cuMemcpyDtoH, "cuMemcpyDtoH_v2")
DUET_CHECK(memHostRegister, cuMemHostRegister, "cuMemHostRegister_v2")
DUET_CHECK(memHostUnregister, cuMemHostUnregister, "cuMemHostUnregister")
DUET_CHECK(memHostGetDevicePointer, cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2")
DUET_CHECK(streamCreate, cuStreamCreate, "cuStreamCreate")
DUET_CHECK(streamSynchronize, cuStreamSynchronize, "cuStreamSynchronize")
DUET_CHECK(streamDestroy, cuStreamDestroy, "cuStreamDestroy_v2")
DUET_CHECK(texObjectCreate, cuTexObjectCreate, "cuTexObjectCreate")
DUET_CHECK(texObjectDestroy, cuTexObjectDestroy, "cuTexObjectDestroy")
DUET_CHECK(array3DCreate, cuArray3DCreate, "cuArray3DCreate_v2")
DUET_CHECK(arrayDestroy, cuArrayDestroy, "cuArrayDestroy")

// Texture objects: attributes, enums, flags and the two descriptors' layouts.
DUET_SAME(cu::kTextureAlignment, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
DUET_SAME(cu::kTexturePitchAlignment, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
DUET_SAME(cu::kMaxTexture2dLinearWidth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH);
DUET_SAME(cu::kMaxTexture2dLinearHeight, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT);
DUET_SAME(cu::kMaxTexture2dLinearPitch, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH);
DUET_SAME(cu::kResourceTypePitch2d, CU_RESOURCE_TYPE_PITCH2D);
DUET_SAME(cu::kResourceTypeArray, CU_RESOURCE_TYPE_ARRAY);
DUET_SAME(cu::kArray3dLayered, CUDA_ARRAY3D_LAYERED);
DUET_SAME(cu::kMaxTexture2dLayeredWidth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH);
DUET_SAME(cu::kMaxTexture2dLayeredHeight, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT);
DUET_SAME(cu::kMaxTexture1dLayeredWidth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH);
DUET_SAME(cu::kAddressWrap, CU_TR_ADDRESS_MODE_WRAP);
DUET_SAME(cu::kAddressClamp, CU_TR_ADDRESS_MODE_CLAMP);
DUET_SAME(cu::kAddressMirror, CU_TR_ADDRESS_MODE_MIRROR);
DUET_SAME(cu::kAddressBorder, CU_TR_ADDRESS_MODE_BORDER);
DUET_SAME(cu::kFilterPoint, CU_TR_FILTER_MODE_POINT);
DUET_SAME(cu::kFilterLinear, CU_TR_FILTER_MODE_LINEAR);
DUET_SAME(cu::kTrsfReadAsInteger, CU_TRSF_READ_AS_INTEGER);
DUET_SAME(cu::kTrsfNormalizedCoordinates, CU_TRSF_NORMALIZED_COORDINATES);
DUET_SAME(cu::kTrsfSrgb, CU_TRSF_SRGB);
DUET_SAME(cu::kFormatUnsignedInt8, CU_AD_FORMAT_UNSIGNED_INT8);
DUET_SAME(cu::kFormatUnsignedInt16, CU_AD_FORMAT_UNSIGNED_INT16);
DUET_SAME(cu::kFormatUnsignedInt32, CU_AD_FORMAT_UNSIGNED_INT32);
DUET_SAME(cu::kFormatSignedInt8, CU_AD_FORMAT_SIGNED_INT8);
DUET_SAME(cu::kFormatSignedInt16, CU_AD_FORMAT_SIGNED_INT16);
DUET_SAME(cu::kFormatSignedInt32, CU_AD_FORMAT_SIGNED_INT32);
DUET_SAME(cu::kFormatHalf, CU_AD_FORMAT_HALF);
DUET_SAME(cu::kFormatFloat, CU_AD_FORMAT_FLOAT);
static_assert(sizeof(cu::ResourceDesc) == sizeof(CUDA_RESOURCE_DESC));
static_assert(offsetof(cu::ResourceDesc, res.pitch2D.devPtr) ==
              offsetof(CUDA_RESOURCE_DESC, res.pitch2D.devPtr));
static_assert(offsetof(cu::ResourceDesc, res.pitch2D.format) ==
              offsetof(CUDA_RESOURCE_DESC, res.pitch2D.format));
static_assert(offsetof(cu::ResourceDesc, res.pitch2D.numChannels) ==
              offsetof(CUDA_RESOURCE_DESC, res.pitch2D.numChannels));
static_assert(offsetof(cu::ResourceDesc, res.pitch2D.width) ==
              offsetof(CUDA_RESOURCE_DESC, res.pitch2D.width));
static_assert(offsetof(cu::ResourceDesc, res.pitch2D.height) ==
              offsetof(CUDA_RESOURCE_DESC, res.pitch2D.height));
static_assert(offsetof(cu::ResourceDesc, res.pitch2D.pitchInBytes) ==
              offsetof(CUDA_RESOURCE_DESC, res.pitch2D.pitchInBytes));
static_assert(offsetof(cu::ResourceDesc, flags) == offsetof(CUDA_RESOURCE_DESC, flags));
static_assert(offsetof(cu::ResourceDesc, res.array.hArray) ==
              offsetof(CUDA_RESOURCE_DESC, res.array.hArray));
static_assert(sizeof(cu::TextureDesc) == sizeof(CUDA_TEXTURE_DESC));
static_assert(offsetof(cu::TextureDesc, filterMode) == offsetof(CUDA_TEXTURE_DESC, filterMode));
static_assert(offsetof(cu::TextureDesc, flags) == offsetof(CUDA_TEXTURE_DESC, flags));
static_assert(offsetof(cu::TextureDesc, borderColor) == offsetof(CUDA_TEXTURE_DESC, borderColor));
static_assert(sizeof(cu::TexObject) == sizeof(CUtexObject));

int main() {
    std::printf("cuda_driver.hpp agrees with cuda.h (CUDA %d.%d)\n", CUDA_VERSION / 1000,
                CUDA_VERSION % 1000 / 10);
    return 0;
}
