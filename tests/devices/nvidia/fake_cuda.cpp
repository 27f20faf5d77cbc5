// A stand-in for libcuda.so.1 (DUET_CUDA_LIBRARY) on machines without an NVIDIA driver: the
// entry points Duet resolves, describing two GPUs as the real driver would: an H100 (compute
// capability 9.0) and a Kepler board (3.5) that Duet cannot target. Contexts, modules and
// launches fail with CUDA_ERROR_NOT_SUPPORTED: the NVIDIA device's discovery and compiler are
// what the tests using it exercise.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kNotInitialized = 3, kInvalidDevice = 101,
              kNotSupported = 801;
bool initialised = false;

struct Gpu {
    const char* name;
    int major, minor, sms, clockKHz, l2, sharedOptin, pciBus;
    size_t memory;
};
constexpr Gpu kGpus[] = {
    {"NVIDIA H100 80GB HBM3 (fake)", 9, 0, 132, 1980000, 52428800, 232448, 0x41, 85031714816ull},
    {"Tesla K40m (fake)", 3, 5, 15, 745000, 1572864, 49152, 0x82, 12079136768ull},
};

} // namespace

extern "C" {

int cuInit(unsigned flags) {
    if (flags != 0)
        return kInvalidValue;
    initialised = true;
    return kSuccess;
}
int cuDriverGetVersion(int* v) {
    *v = 13000;
    return kSuccess;
}
int cuDeviceGetCount(int* n) {
    if (!initialised)
        return kNotInitialized;
    *n = 2;
    return kSuccess;
}
int cuDeviceGet(int* d, int ordinal) {
    if (ordinal < 0 || ordinal > 1)
        return kInvalidDevice;
    *d = ordinal;
    return kSuccess;
}
int cuDeviceGetName(char* name, int length, int d) {
    if (d < 0 || d > 1)
        return kInvalidDevice;
    std::strncpy(name, kGpus[d].name, size_t(length));
    return kSuccess;
}
int cuDeviceTotalMem_v2(size_t* bytes, int d) {
    if (d < 0 || d > 1)
        return kInvalidDevice;
    *bytes = kGpus[d].memory;
    return kSuccess;
}
int cuDeviceGetAttribute(int* v, int attribute, int d) {
    if (d < 0 || d > 1)
        return kInvalidDevice;
    const Gpu& g = kGpus[d];
    switch (attribute) {
    case 1:
        *v = 1024;
        break; // max threads per block
    case 2:
    case 3:
        *v = 1024;
        break; // block dims x, y
    case 4:
        *v = 64;
        break; // block dim z
    case 5:
        *v = 2147483647;
        break; // grid dims
    case 6:
    case 7:
        *v = 65535;
        break;
    case 8:
        *v = 49152;
        break; // shared memory per block
    case 9:
        *v = 65536;
        break; // constant memory
    case 10:
        *v = 32;
        break; // warp size
    case 12:
        *v = 65536;
        break; // registers per block
    case 13:
        *v = g.clockKHz;
        break;
    case 16:
        *v = g.sms;
        break;
    case 18:
        *v = 0;
        break; // integrated
    case 19:
        *v = 1;
        break; // can map host memory
    case 20:
        *v = 0;
        break; // compute mode default
    case 32:
        *v = 1;
        break; // ECC
    case 33:
        *v = g.pciBus;
        break;
    case 34:
        *v = 0;
        break;
    case 36:
        *v = 2619000;
        break;
    case 37:
        *v = 5120;
        break;
    case 38:
        *v = g.l2;
        break;
    case 39:
        *v = 2048;
        break;
    case 40:
        *v = 3;
        break;
    case 41:
        *v = 1;
        break; // unified addressing
    case 50:
        *v = 0;
        break; // PCI domain
    case 75:
        *v = g.major;
        break;
    case 76:
        *v = g.minor;
        break;
    case 81:
        *v = g.sharedOptin + 1024;
        break; // per SM
    case 97:
        *v = g.sharedOptin;
        break;
    case 99:
        *v = 1;
        break;
    default:
        return kInvalidValue;
    }
    return kSuccess;
}
int cuGetErrorName(int error, const char** name) {
    switch (error) {
    case kSuccess:
        *name = "CUDA_SUCCESS";
        return kSuccess;
    case kInvalidValue:
        *name = "CUDA_ERROR_INVALID_VALUE";
        return kSuccess;
    case kNotInitialized:
        *name = "CUDA_ERROR_NOT_INITIALIZED";
        return kSuccess;
    case kInvalidDevice:
        *name = "CUDA_ERROR_INVALID_DEVICE";
        return kSuccess;
    case kNotSupported:
        *name = "CUDA_ERROR_NOT_SUPPORTED";
        return kSuccess;
    default:
        *name = nullptr;
        return kInvalidValue;
    }
}
int cuGetErrorString(int error, const char** text) {
    *text = error == kNotSupported ? "operation not supported (fake driver)" : "fake driver error";
    return kSuccess;
}

// Everything past discovery is not supported by the fake.
#define DUET_FAKE_UNSUPPORTED(name, ...)                                                           \
    int name(__VA_ARGS__) {                                                                        \
        return kNotSupported;                                                                      \
    }
DUET_FAKE_UNSUPPORTED(cuDevicePrimaryCtxRetain, void**, int)
DUET_FAKE_UNSUPPORTED(cuDevicePrimaryCtxRelease_v2, int)
DUET_FAKE_UNSUPPORTED(cuCtxPushCurrent_v2, void*)
DUET_FAKE_UNSUPPORTED(cuCtxPopCurrent_v2, void**)
DUET_FAKE_UNSUPPORTED(cuCtxSynchronize, void)
DUET_FAKE_UNSUPPORTED(cuMemGetInfo_v2, size_t*, size_t*)
DUET_FAKE_UNSUPPORTED(cuModuleLoadDataEx, void**, const void*, unsigned, int*, void**)
DUET_FAKE_UNSUPPORTED(cuModuleUnload, void*)
DUET_FAKE_UNSUPPORTED(cuModuleGetFunction, void**, void*, const char*)
DUET_FAKE_UNSUPPORTED(cuFuncGetAttribute, int*, int, void*)
DUET_FAKE_UNSUPPORTED(cuFuncSetAttribute, void*, int, int)
DUET_FAKE_UNSUPPORTED(cuLaunchKernel, void*, unsigned, unsigned, unsigned, unsigned, unsigned,
                      unsigned, unsigned, void*, void**, void**)
DUET_FAKE_UNSUPPORTED(cuMemAlloc_v2, uint64_t*, size_t)
DUET_FAKE_UNSUPPORTED(cuMemFree_v2, uint64_t)
DUET_FAKE_UNSUPPORTED(cuMemcpyHtoD_v2, uint64_t, const void*, size_t)
DUET_FAKE_UNSUPPORTED(cuMemcpyDtoH_v2, void*, uint64_t, size_t)
DUET_FAKE_UNSUPPORTED(cuMemHostRegister_v2, void*, size_t, unsigned)
DUET_FAKE_UNSUPPORTED(cuMemHostUnregister, void*)
DUET_FAKE_UNSUPPORTED(cuMemHostGetDevicePointer_v2, uint64_t*, void*, unsigned)
DUET_FAKE_UNSUPPORTED(cuStreamCreate, void**, unsigned)
DUET_FAKE_UNSUPPORTED(cuStreamSynchronize, void*)
DUET_FAKE_UNSUPPORTED(cuStreamDestroy_v2, void*)
}
