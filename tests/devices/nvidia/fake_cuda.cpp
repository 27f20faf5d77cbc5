// A stand-in for libcuda.so.1 (DUET_CUDA_LIBRARY) on machines without an NVIDIA driver: the
// entry points Duet resolves, describing two GPUs as the real driver would: an H100 (compute
// capability 9.0) and a Kepler board (3.5) that Duet cannot target. Memory is host memory
// (managed or not); modules keep their PTX text; cuLaunchKernel runs nothing but records the
// grid, block, dynamic shared bytes and each parameter's bytes (sizes from the PTX .entry), for
// the tests to check the kernel ABI (fake_cuda.hpp: the recording and failure injection), and
// calls a test's hook that may play the kernel's part (write printf records, say). Like
// the driver, functions have attributes (cuFuncGetAttribute; a test may set what they report)
// and a launch is refused with CUDA_ERROR_INVALID_VALUE when its block has more threads than
// MAX_THREADS_PER_BLOCK or it asks for more dynamic shared memory than
// MAX_DYNAMIC_SHARED_SIZE_BYTES allows (48 KiB less the static shared memory until
// cuFuncSetAttribute raises it, up to the GPU's opt-in limit).
#include "fake_cuda.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kNotInitialized = 3,
              kInvalidDevice = 101, kInvalidPtx = 218, kNotFound = 500,
              kHostMemoryAlreadyRegistered = 712, kNotSupported = 801;
bool initialised = false;
/// CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS (a GPU on Linux from Pascal on: 1).
std::atomic<int> concurrentManagedAccess{1};

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
    case 21:
        *v = d == 0 ? 131072 : 65536;
        break; // texture limits: 1D width
    case 22:
        *v = d == 0 ? 131072 : 65536;
        break; // 2D width
    case 23:
        *v = 65536;
        break; // 2D height
    case 24:
    case 25:
    case 26:
        *v = d == 0 ? 16384 : 4096;
        break; // 3D width, height, depth
    case 29:
    case 43:
        *v = 2048;
        break; // layers of 2D and 1D layered textures
    case 27:
    case 28:
    case 42:
        *v = 32768;
        break; // width and height of 2D and 1D layered textures
    case 69:
        *v = d == 0 ? 268435456 : 134217728;
        break; // 1D texture from linear memory
    case 14:
        *v = 512;
        break; // texture alignment
    case 51:
        *v = 32;
        break; // texture pitch alignment
    case 70:
        *v = 131072;
        break; // 2D texture from linear memory: width, height, pitch
    case 71:
        *v = 65000;
        break;
    case 72:
        *v = 2097120;
        break;
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
    case 89:   // concurrent managed access
        *v = concurrentManagedAccess;
        break;
    case 97:
        *v = g.sharedOptin;
        break;
    case 99:
    case 102: // virtual memory management (fake_cuda_vmm.cpp)
    case 103: // POSIX file descriptor handles
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
    case kOutOfMemory:
        *name = "CUDA_ERROR_OUT_OF_MEMORY";
        return kSuccess;
    case kInvalidPtx:
        *name = "CUDA_ERROR_INVALID_PTX";
        return kSuccess;
    case kNotFound:
        *name = "CUDA_ERROR_NOT_FOUND";
        return kSuccess;
    case kHostMemoryAlreadyRegistered:
        *name = "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
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

} // extern "C"

namespace {

struct Module {
    std::string ptx;
    /// `.global` variables asked for with cuModuleGetGlobal: zeroed host memory, the module's.
    std::map<std::string, std::unique_ptr<uint64_t[]>> globals;
};
struct Function {
    std::string name;
    std::vector<unsigned> paramBytes; ///< from the .entry's parameter list
    std::map<int, int> attributes;    ///< CUfunction_attribute -> value, under `mutex`
};

// CUfunction_attribute values the fake knows.
constexpr int kMaxThreadsPerBlock = 0, kSharedSizeBytes = 1, kMaxDynamicSharedSizeBytes = 8;

std::mutex mutex;
std::vector<DuetFakeLaunch> launches;
std::map<std::string, int> calls, failures;
std::map<int, int> funcAttributes; ///< the last value cuFuncSetAttribute set, by attribute
/// What a test asked cuFuncGetAttribute to answer: (kernel name or "" for all, attribute).
std::map<std::pair<std::string, int>, int> configuredAttributes;
DuetFakeLaunchHook launchHook = nullptr;     ///< duetFakeOnLaunch's
std::map<std::string, uint64_t> lastGlobals; ///< duetFakeGlobal's: the latest of each name
void* launchHookUser = nullptr;

/// A new function's attributes: the defaults, then what the test configured (for every
/// function, then for this name).
std::map<int, int> attributesOf(const std::string& name) {
    std::map<int, int> a{{kMaxThreadsPerBlock, 1024}, {kSharedSizeBytes, 0}};
    for (const std::string& key : {std::string(), name})
        for (const auto& [k, v] : configuredAttributes)
            if (k.first == key)
                a[k.second] = v;
    if (!a.count(kMaxDynamicSharedSizeBytes))
        a[kMaxDynamicSharedSizeBytes] = 49152 - std::min(49152, a[kSharedSizeBytes]);
    return a;
}
int contexts[2];
/// Bytes cuMemPrefetchAsync moved to each destination (-1: the host) since the last reset.
std::map<int, uint64_t> prefetched;
/// Stream handles: the n-th cuStreamCreate gives &streams[n - 1] (the last one when more).
int streams[64];
int streamsMade = 0;
std::map<unsigned long long, std::pair<FakeResourceDesc, FakeTextureDesc>> textures;
unsigned long long texturesMade = 0;

/// Counts a call of `name`; the CUresult a test asked it to fail with, or 0.
int enter(const char* name) {
    std::lock_guard lock(mutex);
    ++calls[name];
    auto it = failures.find(name);
    return it == failures.end() ? kSuccess : it->second;
}

/// The byte sizes of `name`'s parameters in the PTX: `.param .u64 x`, `.param .align 8 .b8 x[96]`.
std::vector<unsigned> entryParams(const std::string& ptx, const std::string& name) {
    std::vector<unsigned> out;
    size_t at = ptx.find(".entry " + name + "(");
    if (at == std::string::npos)
        return out;
    const size_t end = ptx.find(')', at);
    for (size_t p = ptx.find(".param", at); p < end; p = ptx.find(".param", p + 1)) {
        const size_t lineEnd = std::min(ptx.find_first_of(",)", p), end);
        const std::string decl = ptx.substr(p, lineEnd - p);
        unsigned bytes = 8;
        if (size_t b = decl.find('['); b != std::string::npos)
            bytes = unsigned(std::strtoul(decl.c_str() + b + 1, nullptr, 10));
        else if (decl.find("32 ") != std::string::npos)
            bytes = 4;
        else if (decl.find("16 ") != std::string::npos)
            bytes = 2;
        else if (decl.find("8 ") != std::string::npos && decl.find("64 ") == std::string::npos)
            bytes = 1;
        out.push_back(bytes);
    }
    return out;
}

void* hostAllocate(size_t bytes) {
    // 512: the texture alignment cuMemAlloc's allocations meet on the GPUs Duet runs on.
    void* p = std::aligned_alloc(512, (bytes + 511) / 512 * 512);
    if (p)
        std::memset(p, 0, bytes);
    return p;
}

// Fills: what a memset does, on the (host) memory behind the pointer.
template <class T> int fakeMemset(const char* name, uint64_t dst, T value, size_t count) {
    if (int e = enter(name))
        return e;
    T* p = reinterpret_cast<T*>(uintptr_t(dst));
    std::fill(p, p + count, value);
    return kSuccess;
}

} // namespace

extern "C" {

int cuDevicePrimaryCtxRetain(void** ctx, int d) {
    if (int e = enter("cuDevicePrimaryCtxRetain"))
        return e;
    if (d < 0 || d > 1)
        return kInvalidDevice;
    *ctx = &contexts[d];
    return kSuccess;
}
int cuDevicePrimaryCtxRelease_v2(int) {
    return enter("cuDevicePrimaryCtxRelease_v2");
}
int cuCtxSetCurrent(void*) {
    return enter("cuCtxSetCurrent");
}
int cuCtxPushCurrent_v2(void*) {
    return enter("cuCtxPushCurrent_v2");
}
int cuCtxPopCurrent_v2(void** ctx) {
    *ctx = &contexts[0];
    return enter("cuCtxPopCurrent_v2");
}
int cuCtxSynchronize() {
    return enter("cuCtxSynchronize");
}
int cuMemGetInfo_v2(size_t* free, size_t* total) {
    *free = *total = kGpus[0].memory;
    return enter("cuMemGetInfo_v2");
}

int cuModuleLoadDataEx(void** module, const void* image, unsigned n, int* options, void** values) {
    if (int e = enter("cuModuleLoadDataEx"))
        return e;
    std::string ptx = static_cast<const char*>(image);
    if (ptx.find("fake_jit_error") != std::string::npos) {
        // As ptxas would: the log goes into CU_JIT_ERROR_LOG_BUFFER (option 5, size option 6).
        const char* log = "ptxas fatal   : fake JIT failure in fake_jit_error (fake driver)";
        char* buffer = nullptr;
        size_t size = 0;
        for (unsigned i = 0; i < n; ++i) {
            if (options[i] == 5)
                buffer = static_cast<char*>(values[i]);
            if (options[i] == 6)
                size = size_t(reinterpret_cast<uintptr_t>(values[i]));
        }
        if (buffer && size) {
            std::strncpy(buffer, log, size - 1);
            buffer[size - 1] = 0;
        }
        return kInvalidPtx;
    }
    *module = new Module{std::move(ptx)};
    return kSuccess;
}
int cuModuleUnload(void* module) {
    delete static_cast<Module*>(module);
    return enter("cuModuleUnload");
}
int cuModuleGetFunction(void** function, void* module, const char* name) {
    if (int e = enter("cuModuleGetFunction"))
        return e;
    const std::string& ptx = static_cast<Module*>(module)->ptx;
    if (ptx.find(".entry " + std::string(name) + "(") == std::string::npos)
        return kNotFound;
    std::lock_guard lock(mutex);
    // Owned by the module (leaked).
    *function = new Function{name, entryParams(ptx, name), attributesOf(name)};
    return kSuccess;
}
int cuModuleGetGlobal_v2(uint64_t* pointer, size_t* bytes, void* module, const char* name) {
    if (int e = enter("cuModuleGetGlobal_v2"))
        return e;
    Module& m = *static_cast<Module*>(module);
    // `.global .align A .u32 name;` (or .u64, or `.b8 name[N]`), as the NVPTX backend writes it.
    const std::string n = name;
    size_t at = 0, size = 0;
    for (size_t line = 0; line < m.ptx.size() && !size; line = at + 1) {
        at = m.ptx.find('\n', line);
        if (at == std::string::npos)
            at = m.ptx.size();
        const std::string text = m.ptx.substr(line, at - line);
        if (text.find(".global") == std::string::npos)
            continue;
        if (text.find(" .u32 " + n + ";") != std::string::npos)
            size = 4;
        else if (text.find(" .u64 " + n + ";") != std::string::npos)
            size = 8;
        else if (size_t b = text.find(" " + n + "["); b != std::string::npos)
            size = std::strtoul(text.c_str() + b + n.size() + 2, nullptr, 10);
    }
    if (!size)
        return kNotFound;
    std::lock_guard lock(mutex);
    auto& storage = m.globals[n];
    if (!storage)
        storage = std::make_unique<uint64_t[]>((size + 7) / 8); // zeroed
    *pointer = uint64_t(reinterpret_cast<uintptr_t>(storage.get()));
    *bytes = size;
    lastGlobals[n] = *pointer;
    return kSuccess;
}
int cuFuncGetAttribute(int* value, int attribute, void* function) {
    if (int e = enter("cuFuncGetAttribute"))
        return e;
    std::lock_guard lock(mutex);
    const auto& a = static_cast<Function*>(function)->attributes;
    auto it = a.find(attribute);
    *value = it == a.end() ? 0 : it->second;
    return kSuccess;
}
int cuFuncSetAttribute(void* function, int attribute, int value) {
    if (int e = enter("cuFuncSetAttribute"))
        return e;
    std::lock_guard lock(mutex);
    auto& a = static_cast<Function*>(function)->attributes;
    // As the driver: dynamic shared memory up to the GPU's opt-in limit less the static.
    if (attribute == kMaxDynamicSharedSizeBytes &&
        (value < 0 || value > kGpus[0].sharedOptin - a[kSharedSizeBytes]))
        return kInvalidValue;
    if (attribute != kMaxDynamicSharedSizeBytes)
        return kNotSupported; // the others Duet never sets
    a[attribute] = value;
    funcAttributes[attribute] = value;
    return kSuccess;
}
int cuLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void* stream, void** params, void**) {
    if (int e = enter("cuLaunchKernel"))
        return e;
    const Function& f = *static_cast<Function*>(function);
    {
        std::lock_guard lock(mutex);
        const auto& a = f.attributes;
        if (uint64_t(bx) * by * bz > uint64_t(a.at(kMaxThreadsPerBlock)) ||
            shared > unsigned(a.at(kMaxDynamicSharedSizeBytes)))
            return kInvalidValue;
    }
    DuetFakeLaunch l{};
    std::strncpy(l.kernel, f.name.c_str(), sizeof l.kernel - 1);
    const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    for (int d = 0; d < 3; ++d) {
        l.grid[d] = g[d];
        l.block[d] = b[d];
    }
    l.sharedMemBytes = shared;
    l.params = unsigned(std::min<size_t>(f.paramBytes.size(), 32));
    for (unsigned i = 0; i < l.params; ++i) {
        l.paramBytes[i] = std::min(f.paramBytes[i], 96u);
        std::memcpy(l.param[i], params[i], l.paramBytes[i]);
    }
    DuetFakeLaunchHook hook = nullptr;
    void* user = nullptr;
    {
        std::lock_guard lock(mutex);
        l.waitsBefore = unsigned(calls["cuStreamSynchronize"] + calls["cuEventSynchronize"]);
        l.stream = stream ? unsigned(static_cast<int*>(stream) - streams) + 1 : 0;
        launches.push_back(l);
        hook = launchHook;
        user = launchHookUser;
    }
    if (hook)
        hook(&l, user);
    return kSuccess;
}

int cuMemAlloc_v2(uint64_t* p, size_t bytes) {
    if (int e = enter("cuMemAlloc_v2"))
        return e;
    *p = uint64_t(reinterpret_cast<uintptr_t>(hostAllocate(bytes)));
    return *p ? kSuccess : kOutOfMemory;
}
int cuMemAllocManaged(uint64_t* p, size_t bytes, unsigned flags) {
    if (int e = enter("cuMemAllocManaged"))
        return e;
    if (flags != 1 && flags != 2)
        return kInvalidValue;
    *p = uint64_t(reinterpret_cast<uintptr_t>(hostAllocate(bytes)));
    return *p ? kSuccess : kOutOfMemory;
}
int cuMemPrefetchAsync(uint64_t p, size_t bytes, int destination, void* stream) {
    if (int e = enter("cuMemPrefetchAsync"))
        return e;
    if (!p || !bytes || destination < -1 || destination >= 2)
        return kInvalidValue;
    (void)stream;
    std::lock_guard lock(mutex);
    prefetched[destination] += bytes;
    return kSuccess;
}
int cuMemFree_v2(uint64_t p) {
    std::free(reinterpret_cast<void*>(uintptr_t(p)));
    return enter("cuMemFree_v2");
}
int cuMemcpyHtoD_v2(uint64_t dst, const void* src, size_t bytes) {
    std::memcpy(reinterpret_cast<void*>(uintptr_t(dst)), src, bytes);
    return enter("cuMemcpyHtoD_v2");
}
int cuMemcpyDtoH_v2(void* dst, uint64_t src, size_t bytes) {
    std::memcpy(dst, reinterpret_cast<const void*>(uintptr_t(src)), bytes);
    return enter("cuMemcpyDtoH_v2");
}
int cuMemcpyAsync(uint64_t dst, uint64_t src, size_t bytes, void*) {
    if (int e = enter("cuMemcpyAsync"))
        return e;
    std::memmove(reinterpret_cast<void*>(uintptr_t(dst)),
                 reinterpret_cast<const void*>(uintptr_t(src)), bytes);
    return kSuccess;
}
int cuMemsetD8Async(uint64_t dst, unsigned char v, size_t n, void*) {
    return fakeMemset("cuMemsetD8Async", dst, v, n);
}
int cuMemsetD16Async(uint64_t dst, unsigned short v, size_t n, void*) {
    return fakeMemset("cuMemsetD16Async", dst, v, n);
}
int cuMemsetD32Async(uint64_t dst, unsigned v, size_t n, void*) {
    return fakeMemset("cuMemsetD32Async", dst, v, n);
}
int cuMemHostRegister_v2(void*, size_t, unsigned flags) {
    if (int e = enter("cuMemHostRegister_v2"))
        return e;
    return flags & ~3u ? kInvalidValue : kSuccess;
}
int cuMemHostUnregister(void*) {
    return enter("cuMemHostUnregister");
}
int cuMemHostGetDevicePointer_v2(uint64_t* d, void* p, unsigned) {
    *d = uint64_t(reinterpret_cast<uintptr_t>(p));
    return enter("cuMemHostGetDevicePointer_v2");
}
int cuStreamCreate(void** stream, unsigned) {
    if (int e = enter("cuStreamCreate"))
        return e;
    std::lock_guard lock(mutex);
    *stream = &streams[std::min(streamsMade++, 63)];
    return kSuccess;
}
int cuStreamWaitEvent(void*, void*, unsigned) {
    return enter("cuStreamWaitEvent");
}
int cuStreamSynchronize(void*) {
    return enter("cuStreamSynchronize");
}
int cuStreamDestroy_v2(void*) {
    return enter("cuStreamDestroy_v2");
}
// Events: the stand-in runs everything at once, so an event is complete when recorded and every
// interval between two of them is a microsecond.
int cuEventCreate(void** event, unsigned) {
    if (int e = enter("cuEventCreate"))
        return e;
    *event = new char;
    return kSuccess;
}
int cuEventRecord(void*, void*) {
    return enter("cuEventRecord");
}
int cuEventSynchronize(void*) {
    return enter("cuEventSynchronize");
}
int cuEventElapsedTime(float* ms, void*, void*) {
    *ms = 0.001f;
    return enter("cuEventElapsedTime");
}
int cuEventDestroy_v2(void* event) {
    delete static_cast<char*>(event);
    return enter("cuEventDestroy_v2");
}

extern "C" int duetFakeIsArray(const void* array); // fake_cuda_gl.cpp

// Texture objects: checked as the driver checks a pitch-linear resource or a CUDA array (one
// cuArray3DCreate_v2 made: duetFakeIsArray), kept until destroyed.
int cuTexObjectCreate(unsigned long long* object, const FakeResourceDesc* res,
                      const FakeTextureDesc* tex, const void* view) {
    if (int e = enter("cuTexObjectCreate"))
        return e;
    const auto& p = res->pitch2D;
    const bool normalized = tex->flags & 0x02, integer = tex->flags & 0x01;
    if (view || res->flags || (integer && tex->filterMode == 1))
        return kInvalidValue;
    if (res->resType == 0 && !duetFakeIsArray(res->array.hArray))
        return kInvalidValue;
    if (res->resType != 0 &&
        (res->resType != 3 || p.devPtr % 512 || p.pitchInBytes % 32 ||
         (p.numChannels != 1 && p.numChannels != 2 && p.numChannels != 4) || !p.width ||
         !p.height || p.width > 131072 || p.height > 65000 || p.pitchInBytes > 2097120))
        return kInvalidValue;
    for (int m : tex->addressMode)
        if (m < 0 || m > 3 || (!normalized && (m == 0 || m == 2)))
            return kInvalidValue;
    std::lock_guard lock(mutex);
    *object = ++texturesMade;
    textures[*object] = {*res, *tex};
    return kSuccess;
}
int cuTexObjectDestroy(unsigned long long object) {
    if (int e = enter("cuTexObjectDestroy"))
        return e;
    std::lock_guard lock(mutex);
    return textures.erase(object) ? kSuccess : kInvalidValue;
}
int duetFakeLiveTextures() {
    std::lock_guard lock(mutex);
    return int(textures.size());
}
int duetFakeTexture(unsigned long long object, FakeResourceDesc* res, FakeTextureDesc* tex) {
    std::lock_guard lock(mutex);
    auto it = textures.find(object);
    if (it == textures.end())
        return 0;
    *res = it->second.first;
    *tex = it->second.second;
    return 1;
}

/// For fake_cuda_gl.cpp: counts a call and gives the failure a test injected.
int duetFakeEnter(const char* name) {
    return enter(name);
}

// What fake_cuda.hpp declares for the tests.
int duetFakeLaunchCount() {
    std::lock_guard lock(mutex);
    return int(launches.size());
}
const DuetFakeLaunch* duetFakeLaunchAt(int i) {
    std::lock_guard lock(mutex);
    return i >= 0 && size_t(i) < launches.size() ? &launches[size_t(i)] : nullptr;
}
int duetFakeCalls(const char* name) {
    std::lock_guard lock(mutex);
    auto it = calls.find(name);
    return it == calls.end() ? 0 : it->second;
}
void duetFakeFail(const char* name, int error) {
    std::lock_guard lock(mutex);
    if (error)
        failures[name] = error;
    else
        failures.erase(name);
}
uint64_t duetFakePrefetched(int destination) {
    std::lock_guard lock(mutex);
    auto it = prefetched.find(destination);
    return it == prefetched.end() ? 0 : it->second;
}
void duetFakeSetConcurrentManagedAccess(int value) {
    concurrentManagedAccess = value;
}
void duetFakeReset() {
    std::lock_guard lock(mutex);
    launches.clear();
    calls.clear();
    prefetched.clear();
    funcAttributes.clear();
    configuredAttributes.clear();
    launchHook = nullptr;
    launchHookUser = nullptr;
}
int duetFakeFuncAttribute(int attribute) {
    std::lock_guard lock(mutex);
    auto it = funcAttributes.find(attribute);
    return it == funcAttributes.end() ? -1 : it->second;
}
uint64_t duetFakeGlobal(const char* name) {
    std::lock_guard lock(mutex);
    auto it = lastGlobals.find(name);
    return it == lastGlobals.end() ? 0 : it->second;
}
void duetFakeOnLaunch(DuetFakeLaunchHook hook, void* user) {
    std::lock_guard lock(mutex);
    launchHook = hook;
    launchHookUser = user;
}
void duetFakeSetFuncAttribute(const char* kernel, int attribute, int value) {
    std::lock_guard lock(mutex);
    const std::pair<std::string, int> key{kernel ? kernel : "", attribute};
    if (value < 0)
        configuredAttributes.erase(key);
    else
        configuredAttributes[key] = value;
}
}
