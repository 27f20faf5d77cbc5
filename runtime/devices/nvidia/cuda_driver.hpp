// The CUDA driver API as Duet uses it, loaded at run time from libcuda.so.1 (dlopen + dlsym):
// no CUDA header or library at build time. Types, enum values and entry points are declared
// here from the CUDA Driver API reference (cuda.h of CUDA 12/13), only those Duet calls; the
// versioned names (`_v2`) are the symbols the current ABI exports for the unsuffixed API names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace duet::nvidia {

/// CUDA driver API types and constants (names as in cuda.h, without the CU/CU_ prefixes).
namespace cu {

using Result = int;            ///< CUresult
using Device = int;            ///< CUdevice
using DevicePtr = uint64_t;    ///< CUdeviceptr (unsigned long long on 64-bit hosts)
struct Ctx;                    ///< CUctx_st
struct Mod;                    ///< CUmod_st
struct Func;                   ///< CUfunc_st
struct Stream;                 ///< CUstream_st
struct Ev;                     ///< CUevent_st
using Context = Ctx*;          ///< CUcontext
using Module = Mod*;           ///< CUmodule
using Function = Func*;        ///< CUfunction
using StreamHandle = Stream*;  ///< CUstream
using EventHandle = Ev*;       ///< CUevent
struct ArrayStruct;            ///< CUarray_st
struct GraphicsResourceStruct; ///< CUgraphicsResource_st
using Array = ArrayStruct*;    ///< CUarray
using GraphicsResource = GraphicsResourceStruct*; ///< CUgraphicsResource

/// CUuuid: 16 bytes.
struct Uuid {
    unsigned char bytes[16];
};

/// CUmemorytype.
enum MemoryType : int {
    kMemoryTypeHost = 1,    ///< CU_MEMORYTYPE_HOST
    kMemoryTypeDevice = 2,  ///< CU_MEMORYTYPE_DEVICE
    kMemoryTypeArray = 3,   ///< CU_MEMORYTYPE_ARRAY
    kMemoryTypeUnified = 4, ///< CU_MEMORYTYPE_UNIFIED: any address of the unified address space
};

/// CUDA_MEMCPY2D (the _v2 layout).
struct Memcpy2D {
    size_t srcXInBytes, srcY;
    MemoryType srcMemoryType;
    const void* srcHost;
    DevicePtr srcDevice;
    Array srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    MemoryType dstMemoryType;
    void* dstHost;
    DevicePtr dstDevice;
    Array dstArray;
    size_t dstPitch;
    size_t widthInBytes, height;
};

/// CUDA_MEMCPY3D (the _v2 layout).
struct Memcpy3D {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    MemoryType srcMemoryType;
    const void* srcHost;
    DevicePtr srcDevice;
    Array srcArray;
    void* reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    MemoryType dstMemoryType;
    void* dstHost;
    DevicePtr dstDevice;
    Array dstArray;
    void* reserved1;
    size_t dstPitch, dstHeight;
    size_t widthInBytes, height, depth;
};

/// CUDA_ARRAY3D_DESCRIPTOR (the _v2 layout): Depth 0 for a 2D array.
struct Array3DDescriptor {
    size_t width, height, depth;
    int format; ///< CUarray_format
    unsigned numChannels, flags;
};

/// CUDA_ARRAY3D_* flags.
inline constexpr unsigned kArray3dLayered = 0x01; ///< CUDA_ARRAY3D_LAYERED: 1D or 2D layers

/// CUDA_RESOURCE_DESC for a CUDA array (resType kResourceTypeArray) or a pitch-linear 2D
/// resource (kResourceTypePitch2d); the driver reads the union as 128 bytes, then `flags`.
struct ResourceDesc {
    int resType; ///< CUresourcetype
    union {
        struct {
            Array hArray;
        } array;
        struct {
            DevicePtr devPtr;
            int format; ///< CUarray_format
            unsigned numChannels;
            size_t width, height, pitchInBytes;
        } pitch2D;
        int reserved[32];
    } res;
    unsigned flags; ///< must be zero
};
inline constexpr int kResourceTypeArray = 0;   ///< CU_RESOURCE_TYPE_ARRAY
inline constexpr int kResourceTypePitch2d = 3; ///< CU_RESOURCE_TYPE_PITCH2D

/// CUDA_TEXTURE_DESC.
struct TextureDesc {
    int addressMode[3]; ///< CUaddress_mode
    int filterMode;     ///< CUfilter_mode
    unsigned flags;     ///< CU_TRSF_*
    unsigned maxAnisotropy;
    int mipmapFilterMode;
    float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
    float borderColor[4];
    int reserved[12];
};
using TexObject = unsigned long long; ///< CUtexObject
/// CUaddress_mode.
inline constexpr int kAddressWrap = 0;   ///< CU_TR_ADDRESS_MODE_WRAP
inline constexpr int kAddressClamp = 1;  ///< CU_TR_ADDRESS_MODE_CLAMP (to edge)
inline constexpr int kAddressMirror = 2; ///< CU_TR_ADDRESS_MODE_MIRROR
inline constexpr int kAddressBorder = 3; ///< CU_TR_ADDRESS_MODE_BORDER
/// CUfilter_mode.
inline constexpr int kFilterPoint = 0;  ///< CU_TR_FILTER_MODE_POINT
inline constexpr int kFilterLinear = 1; ///< CU_TR_FILTER_MODE_LINEAR
/// CU_TRSF_* texture flags.
inline constexpr unsigned kTrsfReadAsInteger = 0x01;         ///< CU_TRSF_READ_AS_INTEGER
inline constexpr unsigned kTrsfNormalizedCoordinates = 0x02; ///< CU_TRSF_NORMALIZED_COORDINATES
inline constexpr unsigned kTrsfSrgb = 0x10;                  ///< CU_TRSF_SRGB
/// CUarray_format values.
enum ArrayFormat : int {
    kFormatUnsignedInt8 = 0x01,  ///< CU_AD_FORMAT_UNSIGNED_INT8
    kFormatUnsignedInt16 = 0x02, ///< CU_AD_FORMAT_UNSIGNED_INT16
    kFormatUnsignedInt32 = 0x03, ///< CU_AD_FORMAT_UNSIGNED_INT32
    kFormatSignedInt8 = 0x08,    ///< CU_AD_FORMAT_SIGNED_INT8
    kFormatSignedInt16 = 0x09,   ///< CU_AD_FORMAT_SIGNED_INT16
    kFormatSignedInt32 = 0x0a,   ///< CU_AD_FORMAT_SIGNED_INT32
    kFormatHalf = 0x10,          ///< CU_AD_FORMAT_HALF
    kFormatFloat = 0x20,         ///< CU_AD_FORMAT_FLOAT
};

/// CUgraphicsRegisterFlags.
inline constexpr unsigned kGraphicsRegisterNone = 0;         ///< ..._FLAGS_NONE
inline constexpr unsigned kGraphicsRegisterReadOnly = 1;     ///< ..._FLAGS_READ_ONLY
inline constexpr unsigned kGraphicsRegisterWriteDiscard = 2; ///< ..._FLAGS_WRITE_DISCARD
/// CUGLDeviceList: every CUDA device the current GL context runs on.
inline constexpr int kGlDeviceListAll = 1; ///< CU_GL_DEVICE_LIST_ALL

/// CUresult values Duet tells apart.
enum : Result {
    kSuccess = 0,                            ///< CUDA_SUCCESS
    kErrorInvalidValue = 1,                  ///< CUDA_ERROR_INVALID_VALUE
    kErrorOutOfMemory = 2,                   ///< CUDA_ERROR_OUT_OF_MEMORY
    kErrorNotInitialized = 3,                ///< CUDA_ERROR_NOT_INITIALIZED
    kErrorInsufficientDriver = 35,           ///< CUDA_ERROR_INSUFFICIENT_DRIVER
    kErrorNoDevice = 100,                    ///< CUDA_ERROR_NO_DEVICE
    kErrorInvalidPtx = 218,                  ///< CUDA_ERROR_INVALID_PTX
    kErrorUnsupportedPtxVersion = 222,       ///< CUDA_ERROR_UNSUPPORTED_PTX_VERSION
    kErrorLaunchOutOfResources = 701,        ///< CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    kErrorHostMemoryAlreadyRegistered = 712, ///< CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
    kErrorNotSupported = 801,                ///< CUDA_ERROR_NOT_SUPPORTED
};

/// CUdevice_attribute values Duet reads.
enum DeviceAttribute : int {
    kMaxThreadsPerBlock = 1,                ///< CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    kMaxBlockDimX = 2,                      ///< CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X
    kMaxBlockDimY = 3,                      ///< CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y
    kMaxBlockDimZ = 4,                      ///< CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z
    kMaxGridDimX = 5,                       ///< CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X
    kMaxGridDimY = 6,                       ///< CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y
    kMaxGridDimZ = 7,                       ///< CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z
    kMaxSharedMemoryPerBlock = 8,           ///< CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
    kTotalConstantMemory = 9,               ///< CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY
    kWarpSize = 10,                         ///< CU_DEVICE_ATTRIBUTE_WARP_SIZE
    kMaxRegistersPerBlock = 12,             ///< CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK
    kClockRate = 13,                        ///< CU_DEVICE_ATTRIBUTE_CLOCK_RATE (kHz)
    kTextureAlignment = 14,                 ///< CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT
    kMultiprocessorCount = 16,              ///< CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    kIntegrated = 18,                       ///< CU_DEVICE_ATTRIBUTE_INTEGRATED
    kCanMapHostMemory = 19,                 ///< CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY
    kComputeMode = 20,                      ///< CU_DEVICE_ATTRIBUTE_COMPUTE_MODE
    kMaxTexture1dWidth = 21,                ///< CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH
    kMaxTexture2dWidth = 22,                ///< CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH
    kMaxTexture2dHeight = 23,               ///< CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT
    kMaxTexture3dWidth = 24,                ///< CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH
    kMaxTexture3dHeight = 25,               ///< CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT
    kMaxTexture3dDepth = 26,                ///< CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH
    kMaxTexture2dLayeredWidth = 27,         ///< ..._MAXIMUM_TEXTURE2D_LAYERED_WIDTH
    kMaxTexture2dLayeredHeight = 28,        ///< ..._MAXIMUM_TEXTURE2D_LAYERED_HEIGHT
    kMaxTexture2dLayers = 29,               ///< ..._MAXIMUM_TEXTURE2D_LAYERED_LAYERS
    kEccEnabled = 32,                       ///< CU_DEVICE_ATTRIBUTE_ECC_ENABLED
    kPciBusId = 33,                         ///< CU_DEVICE_ATTRIBUTE_PCI_BUS_ID
    kPciDeviceId = 34,                      ///< CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID
    kMemoryClockRate = 36,                  ///< CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE (kHz)
    kGlobalMemoryBusWidth = 37,             ///< CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH (bits)
    kL2CacheSize = 38,                      ///< CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
    kMaxThreadsPerMultiprocessor = 39,      ///< CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
    kAsyncEngineCount = 40,                 ///< CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT
    kUnifiedAddressing = 41,                ///< CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING
    kMaxTexture1dLayeredWidth = 42,         ///< ..._MAXIMUM_TEXTURE1D_LAYERED_WIDTH
    kMaxTexture1dLayers = 43,               ///< ..._MAXIMUM_TEXTURE1D_LAYERED_LAYERS
    kPciDomainId = 50,                      ///< CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID
    kTexturePitchAlignment = 51,            ///< CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT
    kMaxTexture1dLinearWidth = 69,          ///< ..._MAXIMUM_TEXTURE1D_LINEAR_WIDTH
    kMaxTexture2dLinearWidth = 70,          ///< ..._MAXIMUM_TEXTURE2D_LINEAR_WIDTH
    kMaxTexture2dLinearHeight = 71,         ///< ..._MAXIMUM_TEXTURE2D_LINEAR_HEIGHT
    kMaxTexture2dLinearPitch = 72,          ///< ..._MAXIMUM_TEXTURE2D_LINEAR_PITCH
    kComputeCapabilityMajor = 75,           ///< CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    kComputeCapabilityMinor = 76,           ///< CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    kMaxSharedMemoryPerMultiprocessor = 81, ///< ..._MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    kConcurrentManagedAccess = 89,          ///< CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
    kMaxSharedMemoryPerBlockOptin = 97, ///< CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    kHostRegisterSupported = 99,        ///< CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED
    kVirtualMemoryManagement = 102,     ///< ..._VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED
    kPosixFdHandles = 103,              ///< ..._HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED
};

/// Virtual memory management (cuMemCreate and its kin): device memory exported as a POSIX file
/// descriptor, which GL imports (GL_EXT_memory_object_fd).
/// CUmemLocation.
struct MemLocation {
    int type; ///< CUmemLocationType: kMemLocationDevice
    int id;   ///< the device ordinal
};
/// CUmemAllocationProp.
struct MemAllocationProp {
    int type;                 ///< CUmemAllocationType: kMemAllocationPinned
    int requestedHandleTypes; ///< CUmemAllocationHandleType: kMemHandlePosixFd
    MemLocation location;
    void* win32HandleMetaData; ///< zero on POSIX
    struct {
        unsigned char compressionType, gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
};
/// CUmemAccessDesc.
struct MemAccessDesc {
    MemLocation location;
    int flags; ///< CUmemAccess_flags: kMemAccessReadWrite
};
using MemHandle = unsigned long long;            ///< CUmemGenericAllocationHandle
inline constexpr int kMemAllocationPinned = 1;   ///< CU_MEM_ALLOCATION_TYPE_PINNED
inline constexpr int kMemHandlePosixFd = 1;      ///< CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
inline constexpr int kMemLocationDevice = 1;     ///< CU_MEM_LOCATION_TYPE_DEVICE
inline constexpr int kMemAccessReadWrite = 3;    ///< CU_MEM_ACCESS_FLAGS_PROT_READWRITE
inline constexpr int kMemGranularityMinimum = 0; ///< CU_MEM_ALLOC_GRANULARITY_MINIMUM

/// CUcomputemode: a prohibited device accepts no context.
inline constexpr int kComputeModeProhibited = 2; ///< CU_COMPUTEMODE_PROHIBITED

/// CUfunction_attribute values Duet reads or sets.
enum FunctionAttribute : int {
    kFuncMaxThreadsPerBlock = 0,        ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    kFuncSharedSizeBytes = 1,           ///< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
    kFuncConstSizeBytes = 2,            ///< CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES
    kFuncLocalSizeBytes = 3,            ///< CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
    kFuncNumRegs = 4,                   ///< CU_FUNC_ATTRIBUTE_NUM_REGS
    kFuncPtxVersion = 5,                ///< CU_FUNC_ATTRIBUTE_PTX_VERSION
    kFuncBinaryVersion = 6,             ///< CU_FUNC_ATTRIBUTE_BINARY_VERSION
    kFuncMaxDynamicSharedSizeBytes = 8, ///< CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
};

/// CUjit_option values Duet passes to cuModuleLoadDataEx.
enum JitOption : int {
    kJitInfoLogBuffer = 3,           ///< CU_JIT_INFO_LOG_BUFFER
    kJitInfoLogBufferSizeBytes = 4,  ///< CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
    kJitErrorLogBuffer = 5,          ///< CU_JIT_ERROR_LOG_BUFFER
    kJitErrorLogBufferSizeBytes = 6, ///< CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
    kJitOptimizationLevel = 7,       ///< CU_JIT_OPTIMIZATION_LEVEL
    kJitLogVerbose = 12,             ///< CU_JIT_LOG_VERBOSE
};

/// cuMemHostRegister flags.
inline constexpr unsigned kMemHostRegisterPortable = 0x01;  ///< CU_MEMHOSTREGISTER_PORTABLE
inline constexpr unsigned kMemHostRegisterDeviceMap = 0x02; ///< CU_MEMHOSTREGISTER_DEVICEMAP
/// cuMemAllocManaged flags: the memory is accessible from any stream on any device.
inline constexpr unsigned kMemAttachGlobal = 0x1; ///< CU_MEM_ATTACH_GLOBAL
/// cuMemPrefetchAsync's destination for the host (CU_DEVICE_CPU).
inline constexpr Device kDeviceCpu = -1;
/// cuStreamCreate flags.
inline constexpr unsigned kStreamNonBlocking = 0x1; ///< CU_STREAM_NON_BLOCKING
/// cuEventCreate flags.
inline constexpr unsigned kEventDisableTiming = 0x2; ///< CU_EVENT_DISABLE_TIMING

} // namespace cu

/// The driver's entry points. Each member is the function of the same name without the `cu`
/// prefix (`init` is cuInit); where the ABI versions a function, the comment names the symbol.
/// Made once per process by CudaDriver::get; thread-safe as the driver API is.
struct CudaDriver {
    cu::Result (*init)(unsigned flags);
    cu::Result (*driverGetVersion)(int* version);
    cu::Result (*deviceGetCount)(int* count);
    cu::Result (*deviceGet)(cu::Device* device, int ordinal);
    cu::Result (*deviceGetName)(char* name, int length, cu::Device device);
    cu::Result (*deviceGetAttribute)(int* value, cu::DeviceAttribute attribute, cu::Device device);
    cu::Result (*deviceTotalMem)(size_t* bytes, cu::Device device); ///< cuDeviceTotalMem_v2
    cu::Result (*getErrorName)(cu::Result error, const char** name);
    cu::Result (*getErrorString)(cu::Result error, const char** text);
    cu::Result (*devicePrimaryCtxRetain)(cu::Context* context, cu::Device device);
    cu::Result (*devicePrimaryCtxRelease)(cu::Device device); ///< cuDevicePrimaryCtxRelease_v2
    cu::Result (*ctxPushCurrent)(cu::Context context);        ///< cuCtxPushCurrent_v2
    cu::Result (*ctxPopCurrent)(cu::Context* context);        ///< cuCtxPopCurrent_v2
    cu::Result (*ctxSetCurrent)(cu::Context context);
    cu::Result (*ctxSynchronize)();
    cu::Result (*memGetInfo)(size_t* free, size_t* total); ///< cuMemGetInfo_v2
    cu::Result (*moduleLoadDataEx)(cu::Module* module, const void* image, unsigned numOptions,
                                   cu::JitOption* options, void** optionValues);
    cu::Result (*moduleUnload)(cu::Module module);
    cu::Result (*moduleGetFunction)(cu::Function* function, cu::Module module, const char* name);
    /// cuModuleGetGlobal_v2: a module's `.global` variable (DUET_KERNEL_TIMEOUT's flag).
    cu::Result (*moduleGetGlobal)(cu::DevicePtr* pointer, size_t* bytes, cu::Module module,
                                  const char* name);
    cu::Result (*funcGetAttribute)(int* value, cu::FunctionAttribute attribute,
                                   cu::Function function);
    cu::Result (*funcSetAttribute)(cu::Function function, cu::FunctionAttribute attribute,
                                   int value);
    cu::Result (*launchKernel)(cu::Function function, unsigned gridX, unsigned gridY,
                               unsigned gridZ, unsigned blockX, unsigned blockY, unsigned blockZ,
                               unsigned sharedMemBytes, cu::StreamHandle stream,
                               void** kernelParams, void** extra);
    cu::Result (*memAlloc)(cu::DevicePtr* pointer, size_t bytes); ///< cuMemAlloc_v2
    cu::Result (*memAllocManaged)(cu::DevicePtr* pointer, size_t bytes, unsigned flags);
    cu::Result (*memFree)(cu::DevicePtr pointer); ///< cuMemFree_v2
    /// Unified addressing: host, device or managed pointers on either side.
    cu::Result (*memcpyAsync)(cu::DevicePtr dst, cu::DevicePtr src, size_t bytes,
                              cu::StreamHandle stream);
    cu::Result (*memsetD8Async)(cu::DevicePtr dst, unsigned char value, size_t count,
                                cu::StreamHandle stream);
    cu::Result (*memsetD16Async)(cu::DevicePtr dst, unsigned short value, size_t count,
                                 cu::StreamHandle stream);
    cu::Result (*memsetD32Async)(cu::DevicePtr dst, unsigned value, size_t count,
                                 cu::StreamHandle stream);
    cu::Result (*memcpyHtoD)(cu::DevicePtr dst, const void* src, size_t bytes); ///< cuMemcpyHtoD_v2
    cu::Result (*memcpyDtoH)(void* dst, cu::DevicePtr src, size_t bytes);       ///< cuMemcpyDtoH_v2
    cu::Result (*memHostRegister)(void* p, size_t bytes, unsigned flags); ///< cuMemHostRegister_v2
    cu::Result (*memHostUnregister)(void* p);
    /// cuMemHostGetDevicePointer_v2
    cu::Result (*memHostGetDevicePointer)(cu::DevicePtr* pointer, void* p, unsigned flags);
    cu::Result (*streamCreate)(cu::StreamHandle* stream, unsigned flags);
    cu::Result (*streamSynchronize)(cu::StreamHandle stream);
    cu::Result (*streamDestroy)(cu::StreamHandle stream); ///< cuStreamDestroy_v2
    cu::Result (*streamWaitEvent)(cu::StreamHandle stream, cu::EventHandle event, unsigned flags);
    cu::Result (*eventCreate)(cu::EventHandle* event, unsigned flags);
    cu::Result (*eventRecord)(cu::EventHandle event, cu::StreamHandle stream);
    cu::Result (*eventSynchronize)(cu::EventHandle event);
    cu::Result (*eventElapsedTime)(float* ms, cu::EventHandle start, cu::EventHandle end);
    cu::Result (*eventDestroy)(cu::EventHandle event); ///< cuEventDestroy_v2

    // Optional: null when the library lacks them (CUDA–GL interop is then unavailable, the
    // device shares GL objects through host copies; glInteropMissing says which).
    /// cuDeviceGetUuid_v2 (or cuDeviceGetUuid)
    cu::Result (*deviceGetUuid)(cu::Uuid* uuid, cu::Device device);
    /// cuMemcpy2DAsync_v2
    cu::Result (*memcpy2DAsync)(const cu::Memcpy2D* copy, cu::StreamHandle stream);
    /// cuMemcpy3DAsync_v2
    cu::Result (*memcpy3DAsync)(const cu::Memcpy3D* copy, cu::StreamHandle stream);
    /// cuGLGetDevices_v2: the CUDA devices of the GL context current on the calling thread.
    cu::Result (*glGetDevices)(unsigned* count, cu::Device* devices, unsigned capacity,
                               int deviceList);
    cu::Result (*graphicsGLRegisterBuffer)(cu::GraphicsResource* resource, unsigned buffer,
                                           unsigned flags);
    cu::Result (*graphicsGLRegisterImage)(cu::GraphicsResource* resource, unsigned image,
                                          unsigned target, unsigned flags);
    cu::Result (*graphicsUnregisterResource)(cu::GraphicsResource resource);
    cu::Result (*graphicsMapResources)(unsigned count, cu::GraphicsResource* resources,
                                       cu::StreamHandle stream);
    cu::Result (*graphicsUnmapResources)(unsigned count, cu::GraphicsResource* resources,
                                         cu::StreamHandle stream);
    /// cuGraphicsResourceGetMappedPointer_v2
    cu::Result (*graphicsResourceGetMappedPointer)(cu::DevicePtr* pointer, size_t* size,
                                                   cu::GraphicsResource resource);
    cu::Result (*graphicsSubResourceGetMappedArray)(cu::Array* array, cu::GraphicsResource resource,
                                                    unsigned arrayIndex, unsigned mipLevel);
    /// cuArray3DGetDescriptor_v2
    cu::Result (*array3DGetDescriptor)(cu::Array3DDescriptor* descriptor, cu::Array array);
    /// The CUDA–GL entry points the library lacks ("cuGraphicsGLRegisterBuffer, ..."); empty
    /// when it has them all.
    std::string glInteropMissing;

    // Optional too: memory GL imports (CudaGlInterop::exportMemory); memoryExportMissing names
    // what the library lacks.
    cu::Result (*memGetAllocationGranularity)(size_t* granularity,
                                              const cu::MemAllocationProp* prop, int option);
    cu::Result (*memCreate)(cu::MemHandle* handle, size_t bytes, const cu::MemAllocationProp* prop,
                            unsigned long long flags);
    cu::Result (*memRelease)(cu::MemHandle handle);
    cu::Result (*memExportToShareableHandle)(void* shareable, cu::MemHandle handle, int type,
                                             unsigned long long flags);
    cu::Result (*memAddressReserve)(cu::DevicePtr* pointer, size_t bytes, size_t alignment,
                                    cu::DevicePtr addr, unsigned long long flags);
    cu::Result (*memAddressFree)(cu::DevicePtr pointer, size_t bytes);
    cu::Result (*memMap)(cu::DevicePtr pointer, size_t bytes, size_t offset, cu::MemHandle handle,
                         unsigned long long flags);
    cu::Result (*memUnmap)(cu::DevicePtr pointer, size_t bytes);
    cu::Result (*memSetAccess)(cu::DevicePtr pointer, size_t bytes, const cu::MemAccessDesc* desc,
                               size_t count);
    std::string memoryExportMissing;

    // Optional: moving managed memory ahead of its use (null without it: pages move on first
    // touch).
    cu::Result (*memPrefetchAsync)(cu::DevicePtr pointer, size_t bytes, cu::Device destination,
                                   cu::StreamHandle stream);

    // Optional: texture objects, through which kernels sample images (null without them: the
    // image library reads texels itself).
    cu::Result (*texObjectCreate)(cu::TexObject* object, const cu::ResourceDesc* resource,
                                  const cu::TextureDesc* texture, const void* view);
    cu::Result (*texObjectDestroy)(cu::TexObject object);
    /// Optional too: CUDA arrays that hold a copy of 3D images and image arrays for their texture
    /// objects (null without them, or without cuMemcpy3DAsync: those images read in software).
    /// cuArray3DCreate_v2.
    cu::Result (*array3DCreate)(cu::Array* array, const cu::Array3DDescriptor* descriptor);
    cu::Result (*arrayDestroy)(cu::Array array);

    /// The process's driver: libcuda.so.1 (or $DUET_CUDA_LIBRARY) loaded and every entry point
    /// resolved, once. Null when that fails; `reason` (if given) then says why, and under
    /// DUET_LOG=1 the reason was printed once. cuInit is not called here.
    static const CudaDriver* get(std::string* reason = nullptr);

    /// "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected" (cuGetErrorName and
    /// cuGetErrorString), or "CUDA error <n>" for a code the driver does not know.
    std::string errorText(cu::Result error) const;

    /// Keeps the library loaded while the driver lives (dlclose on destruction; get()'s driver
    /// is never destroyed).
    std::shared_ptr<void> library;
};

/// Loads `library` (a dlopen name or path) and resolves every entry point; null with `reason`
/// set when the library is missing or lacks one. Not cached: CudaDriver::get uses it once.
std::unique_ptr<CudaDriver> loadCudaDriver(const char* library, std::string& reason);

/// Prints "duet: <message>" to stderr when DUET_LOG is set.
void logNvidia(const std::string& message);

} // namespace duet::nvidia
