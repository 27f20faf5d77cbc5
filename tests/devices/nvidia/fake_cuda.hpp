// What tests/devices/nvidia/fake_cuda.cpp records and lets a test control, as C entry points the
// test resolves with dlsym in the same library the runtime loaded (DUET_CUDA_LIBRARY).
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

/// One cuLaunchKernel as the fake saw it; parameters copied with the sizes the PTX .entry
/// declares (the fake parses the module's text).
struct DuetFakeLaunch {
    char kernel[64];
    unsigned grid[3], block[3], sharedMemBytes;
    unsigned params;
    unsigned paramBytes[32];
    unsigned char param[32][96];
    unsigned waitsBefore; ///< cuStreamSynchronize and cuEventSynchronize calls before this launch
    unsigned stream;      ///< which stream: the order cuStreamCreate made it in, from 1
};

using DuetFakeLaunchCountFn = int (*)();
using DuetFakeLaunchAtFn = const DuetFakeLaunch* (*)(int index);
/// Calls of a driver entry point so far ("cuMemAllocManaged", "cuMemHostRegister_v2", ...).
using DuetFakeCallsFn = int (*)(const char* entryPoint);
/// The next calls of `entryPoint` fail with CUresult `error` (0: succeed again).
using DuetFakeFailFn = void (*)(const char* entryPoint, int error);
/// Forgets launches and call counts.
using DuetFakeResetFn = void (*)();
/// Bytes cuMemPrefetchAsync moved to `destination` (a device ordinal, -1: the host) since the
/// last reset.
using DuetFakePrefetchedFn = uint64_t (*)(int destination);
/// What CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS answers from now on (1 at first; a
/// context made before keeps what it read).
using DuetFakeSetConcurrentManagedAccessFn = void (*)(int value);
/// The last value cuFuncSetAttribute set for `attribute` (-1: never set).
using DuetFakeFuncAttributeFn = int (*)(int attribute);
/// What cuFuncGetAttribute answers for `attribute` of the functions named `kernel` (every
/// function when null) loaded from now on; -1 restores the default (MAX_THREADS_PER_BLOCK 1024,
/// MAX_DYNAMIC_SHARED_SIZE_BYTES 48 KiB less SHARED_SIZE_BYTES, everything else 0).
/// duetFakeReset forgets them.
using DuetFakeSetFuncAttributeFn = void (*)(const char* kernel, int attribute, int value);
/// Plays a kernel: called at each cuLaunchKernel once the fake has recorded it (`launch`: the
/// parameters as recorded, the launch block last), on the launching thread with none of the
/// fake's locks held. Device memory is host memory here, so a hook can write what the kernel
/// would (printf records into the buffer the launch block names).
using DuetFakeLaunchHook = void (*)(const DuetFakeLaunch* launch, void* user);
/// Sets the hook (null: none); duetFakeReset removes it.
using DuetFakeOnLaunchFn = void (*)(DuetFakeLaunchHook hook, void* user);

/// The address cuModuleGetGlobal last gave for a `.global` variable called `name` (host memory
/// owned by its module; 0: never asked for), so that a launch hook can write it as the kernel
/// would.
using DuetFakeGlobalFn = uint64_t (*)(const char* name);

/// The guard record of a launch of a guarded build (DUET_KERNEL_CHECKS, DUET_KERNEL_TIMEOUT), laid
/// out as devices/nvidia/codegen/ptx_module.hpp's GuardRecord, then two u64 per argument (its
/// bounds). Its address is the launch's last parameter (host memory in the fake), so that a
/// launch hook can plant what a stopped kernel writes there.
struct DuetFakeGuardRecord {
    uint32_t stopped; ///< 1: timed out, 2: a check failed
    uint32_t faultTaken;
    uint64_t start;
    uint32_t faultId, faultKind;
    uint64_t faultAddress, faultLow, faultHigh, faultBytes;
    uint64_t faultGlobalId[3];
    /// [low, high) of argument `i` (the words after the header).
    uint64_t* bounds(unsigned i) { return reinterpret_cast<uint64_t*>(this + 1) + 2 * i; }
};
static_assert(sizeof(DuetFakeGuardRecord) == 80);

/// The guard record of a recorded launch (its last parameter).
inline DuetFakeGuardRecord* duetFakeGuardRecordOf(const DuetFakeLaunch* l) {
    uint64_t address = 0;
    if (l->params < 2 || l->paramBytes[l->params - 1] != 8)
        return nullptr;
    __builtin_memcpy(&address, l->param[l->params - 1], 8);
    return reinterpret_cast<DuetFakeGuardRecord*>(uintptr_t(address));
}

// CUDA-GL interop (fake_cuda_gl.cpp).
/// The CUDA device cuGLGetDevices names for the current GL context (default 0; -1: it fails,
/// as for a GL context that is not NVIDIA's).
using DuetFakeSetGlDeviceFn = void (*)(int device);
/// The address the latest cuGraphicsResourceGetMappedPointer gave (host memory in the fake).
using DuetFakeLastMappedPointerFn = uint64_t (*)();
/// GL objects registered so far (buffers and images).
using DuetFakeRegisteredCountFn = int (*)();
/// cuMemCreate allocations not yet released (fake_cuda_vmm.cpp).
using DuetFakeLiveAllocationsFn = int (*)();

/// The driver's structures as fake_cuda_gl.cpp reads them (cuda.h's _v2 layouts).
struct FakeMemcpy2D {
    size_t srcXInBytes, srcY;
    int srcMemoryType;
    const void* srcHost;
    uint64_t srcDevice;
    void* srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    int dstMemoryType;
    void* dstHost;
    uint64_t dstDevice;
    void* dstArray;
    size_t dstPitch;
    size_t widthInBytes, height;
};
struct FakeMemcpy3D {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void* srcHost;
    uint64_t srcDevice;
    void* srcArray;
    void* reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void* dstHost;
    uint64_t dstDevice;
    void* dstArray;
    void* reserved1;
    size_t dstPitch, dstHeight;
    size_t widthInBytes, height, depth;
};
/// CUDA_RESOURCE_DESC (pitch-linear 2D) and CUDA_TEXTURE_DESC as the fake reads them.
struct FakeResourceDesc {
    int resType;
    union {
        struct {
            uint64_t devPtr;
            int format;
            unsigned numChannels;
            size_t width, height, pitchInBytes;
        } pitch2D;
        struct {
            void* hArray;
        } array;
        int reserved[32];
    };
    unsigned flags;
};
struct FakeTextureDesc {
    int addressMode[3];
    int filterMode;
    unsigned flags;
    unsigned maxAnisotropy;
    int mipmapFilterMode;
    float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
    float borderColor[4];
    int reserved[12];
};
/// Texture objects made and not destroyed.
using DuetFakeLiveTexturesFn = int (*)();
/// CUDA arrays made by cuArray3DCreate_v2 and not destroyed.
using DuetFakeLiveArraysFn = int (*)();
/// The bytes of such an array (layer after layer, rows packed), null when it is not one.
using DuetFakeArrayBytesFn = const unsigned char* (*)(const void* array, size_t* bytes);
/// What texture object `object` was made with (0: no such live object).
using DuetFakeTextureFn = int (*)(unsigned long long object, FakeResourceDesc* res,
                                  FakeTextureDesc* tex);
struct FakeArrayDescriptor {
    size_t width, height, depth;
    int format;
    unsigned numChannels, flags;
};
}
