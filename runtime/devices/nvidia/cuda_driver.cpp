// Loading the CUDA driver API with dlopen/dlsym, and naming its error codes.
#include "devices/nvidia/cuda_driver.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <utility>

namespace duet::nvidia {

void logNvidia(const std::string& message) {
    static const bool on = [] {
        const char* v = std::getenv("DUET_LOG");
        return v && *v && std::string(v) != "0";
    }();
    if (on)
        std::fprintf(stderr, "duet: %s\n", message.c_str());
}

std::unique_ptr<CudaDriver> loadCudaDriver(const char* library, std::string& reason) {
    dlerror();
    void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        reason = std::string("cannot load the CUDA driver library ") + library + ": " +
                 (why ? why : "unknown error") + " (no NVIDIA driver installed?)";
        return nullptr;
    }
    auto driver = std::make_unique<CudaDriver>();
    driver->library = std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });
    std::string missing;
    auto resolve = [&](auto& member, const char* symbol) {
        void* p = dlsym(handle, symbol);
        if (!p)
            missing += std::string(missing.empty() ? "" : ", ") + symbol;
        member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(p);
    };
    CudaDriver& d = *driver;
    resolve(d.init, "cuInit");
    resolve(d.driverGetVersion, "cuDriverGetVersion");
    resolve(d.deviceGetCount, "cuDeviceGetCount");
    resolve(d.deviceGet, "cuDeviceGet");
    resolve(d.deviceGetName, "cuDeviceGetName");
    resolve(d.deviceGetAttribute, "cuDeviceGetAttribute");
    resolve(d.deviceTotalMem, "cuDeviceTotalMem_v2");
    resolve(d.getErrorName, "cuGetErrorName");
    resolve(d.getErrorString, "cuGetErrorString");
    resolve(d.devicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    resolve(d.devicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    resolve(d.ctxPushCurrent, "cuCtxPushCurrent_v2");
    resolve(d.ctxPopCurrent, "cuCtxPopCurrent_v2");
    resolve(d.ctxSetCurrent, "cuCtxSetCurrent");
    resolve(d.ctxSynchronize, "cuCtxSynchronize");
    resolve(d.memGetInfo, "cuMemGetInfo_v2");
    resolve(d.moduleLoadDataEx, "cuModuleLoadDataEx");
    resolve(d.moduleUnload, "cuModuleUnload");
    resolve(d.moduleGetFunction, "cuModuleGetFunction");
    resolve(d.moduleGetGlobal, "cuModuleGetGlobal_v2");
    resolve(d.funcGetAttribute, "cuFuncGetAttribute");
    resolve(d.funcSetAttribute, "cuFuncSetAttribute");
    resolve(d.launchKernel, "cuLaunchKernel");
    resolve(d.memAlloc, "cuMemAlloc_v2");
    resolve(d.memAllocManaged, "cuMemAllocManaged");
    resolve(d.memFree, "cuMemFree_v2");
    resolve(d.memcpyAsync, "cuMemcpyAsync");
    resolve(d.memsetD8Async, "cuMemsetD8Async");
    resolve(d.memsetD16Async, "cuMemsetD16Async");
    resolve(d.memsetD32Async, "cuMemsetD32Async");
    resolve(d.memcpyHtoD, "cuMemcpyHtoD_v2");
    resolve(d.memcpyDtoH, "cuMemcpyDtoH_v2");
    resolve(d.memHostRegister, "cuMemHostRegister_v2");
    resolve(d.memHostUnregister, "cuMemHostUnregister");
    resolve(d.memHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
    resolve(d.streamCreate, "cuStreamCreate");
    resolve(d.streamSynchronize, "cuStreamSynchronize");
    resolve(d.streamDestroy, "cuStreamDestroy_v2");
    resolve(d.streamWaitEvent, "cuStreamWaitEvent");
    resolve(d.eventCreate, "cuEventCreate");
    resolve(d.eventRecord, "cuEventRecord");
    resolve(d.eventSynchronize, "cuEventSynchronize");
    resolve(d.eventElapsedTime, "cuEventElapsedTime");
    resolve(d.eventDestroy, "cuEventDestroy_v2");
    if (missing.empty()) {
        // CUDA–GL interop: optional, the device falls back to host copies without it.
        std::string& lacks = d.glInteropMissing;
        auto optional = [&](auto& member, const char* symbol) {
            void* p = dlsym(handle, symbol);
            if (!p)
                lacks += std::string(lacks.empty() ? "" : ", ") + symbol;
            member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(p);
        };
        optional(d.deviceGetUuid, "cuDeviceGetUuid_v2");
        if (!d.deviceGetUuid) {
            lacks.clear();
            optional(d.deviceGetUuid, "cuDeviceGetUuid");
        }
        optional(d.memcpy2DAsync, "cuMemcpy2DAsync_v2");
        optional(d.memcpy3DAsync, "cuMemcpy3DAsync_v2");
        optional(d.glGetDevices, "cuGLGetDevices_v2");
        optional(d.graphicsGLRegisterBuffer, "cuGraphicsGLRegisterBuffer");
        optional(d.graphicsGLRegisterImage, "cuGraphicsGLRegisterImage");
        optional(d.graphicsUnregisterResource, "cuGraphicsUnregisterResource");
        optional(d.graphicsMapResources, "cuGraphicsMapResources");
        optional(d.graphicsUnmapResources, "cuGraphicsUnmapResources");
        optional(d.graphicsResourceGetMappedPointer, "cuGraphicsResourceGetMappedPointer_v2");
        optional(d.graphicsSubResourceGetMappedArray, "cuGraphicsSubResourceGetMappedArray");
        optional(d.array3DGetDescriptor, "cuArray3DGetDescriptor_v2");
        std::string glLacks = std::exchange(lacks, std::string());
        optional(d.memGetAllocationGranularity, "cuMemGetAllocationGranularity");
        optional(d.memCreate, "cuMemCreate");
        optional(d.memRelease, "cuMemRelease");
        optional(d.memExportToShareableHandle, "cuMemExportToShareableHandle");
        optional(d.memAddressReserve, "cuMemAddressReserve");
        optional(d.memAddressFree, "cuMemAddressFree");
        optional(d.memMap, "cuMemMap");
        optional(d.memUnmap, "cuMemUnmap");
        optional(d.memSetAccess, "cuMemSetAccess");
        d.memoryExportMissing = std::exchange(lacks, std::move(glLacks));
        glLacks = std::exchange(lacks, std::string());
        optional(d.memPrefetchAsync, "cuMemPrefetchAsync");
        optional(d.texObjectCreate, "cuTexObjectCreate");
        optional(d.texObjectDestroy, "cuTexObjectDestroy");
        if (!d.texObjectCreate || !d.texObjectDestroy)
            d.texObjectCreate = nullptr, d.texObjectDestroy = nullptr;
        optional(d.array3DCreate, "cuArray3DCreate_v2");
        optional(d.arrayDestroy, "cuArrayDestroy");
        if (!d.array3DCreate || !d.arrayDestroy || !d.memcpy3DAsync || !d.texObjectCreate)
            d.array3DCreate = nullptr, d.arrayDestroy = nullptr;
        lacks = std::move(glLacks);
    }
    if (!missing.empty()) {
        reason = std::string("the CUDA driver library ") + library +
                 " lacks entry points Duet needs (" + missing +
                 "): a driver older than CUDA 11, or not NVIDIA's libcuda";
        return nullptr;
    }
    return driver;
}

const CudaDriver* CudaDriver::get(std::string* reason) {
    // Never freed, so never dlclosed: devices live as long as the process, and at exit work
    // still runs that calls the driver (GL objects of released contexts unregistered by their
    // GL thread while static destructors run), after this function's statics would be gone.
    static std::once_flag once;
    static CudaDriver* driver = nullptr;
    static std::string* why = new std::string;
    std::call_once(once, [] {
        const char* library = std::getenv("DUET_CUDA_LIBRARY");
        driver = loadCudaDriver(library && *library ? library : "libcuda.so.1", *why).release();
        if (!driver)
            logNvidia("NVIDIA: " + *why);
    });
    if (!driver && reason)
        *reason = *why;
    return driver;
}

std::string CudaDriver::errorText(cu::Result error) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (getErrorName(error, &name) != cu::kSuccess || !name)
        return "CUDA error " + std::to_string(error);
    std::string out = name;
    if (getErrorString(error, &text) == cu::kSuccess && text)
        out += std::string(": ") + text;
    return out;
}

} // namespace duet::nvidia
