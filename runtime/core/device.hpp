// Platform and device objects; a device's behaviour lives behind the DeviceBackend interface.
#pragma once

#include "core/gl_interop.hpp"
#include "core/object.hpp"
#include "core/toolchain.hpp"

#include <CL/cl_ext.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace duet::rt {

class Device;
class Kernel;
struct KernelLaunch;
class Mem;
struct Strided;
struct BoxSize;

/// Every clGetDeviceInfo answer that is a plain value. Filled once by the backend.
struct DeviceInfo {
    cl_device_type type = CL_DEVICE_TYPE_CPU;
    std::string name, vendor, driverVersion, profile = "FULL_PROFILE", version, openclCVersion;
    std::string extensions; ///< space separated, as CL_DEVICE_EXTENSIONS
    std::vector<cl_name_version> extensionsWithVersion, openclCAllVersions, openclCFeatures,
        ilsWithVersion, builtInKernelsWithVersion;
    cl_version numericVersion = CL_MAKE_VERSION(3, 0, 0);
    cl_uint vendorId = 0, maxComputeUnits = 1, maxWorkItemDimensions = 3;
    size_t maxWorkItemSizes[3] = {4096, 4096, 4096};
    size_t maxWorkGroupSize = 4096;
    cl_uint preferredVectorWidth[7] = {}; ///< char short int long float double half
    cl_uint nativeVectorWidth[7] = {};
    cl_uint maxClockFrequency = 0, addressBits = 64;
    cl_ulong maxMemAllocSize = 0, globalMemSize = 0, globalMemCacheSize = 0;
    cl_ulong maxConstantBufferSize = 0, localMemSize = 0;
    cl_uint globalMemCachelineSize = 64, maxConstantArgs = 16, memBaseAddrAlign = 1024;
    cl_device_mem_cache_type globalMemCacheType = CL_READ_WRITE_CACHE;
    cl_device_local_mem_type localMemType = CL_GLOBAL;
    bool imageSupport = false;
    cl_uint maxReadImageArgs = 128, maxWriteImageArgs = 64, maxReadWriteImageArgs = 64;
    size_t image2dMaxWidth = 16384, image2dMaxHeight = 16384, image3dMaxWidth = 2048,
           image3dMaxHeight = 2048, image3dMaxDepth = 2048, imageMaxBufferSize = 65536 * 1024,
           imageMaxArraySize = 2048;
    cl_uint maxSamplers = 16, imagePitchAlignment = 1, imageBaseAddressAlignment = 1;
    /// Bytes the rows of images the runtime allocates are padded to (a power of two): the
    /// device reads aligned rows faster (NVIDIA: its texture pitch alignment). 1: tight rows.
    size_t imageRowAlignment = 1;
    size_t maxParameterSize = 1024;
    cl_device_fp_config singleFpConfig = 0, doubleFpConfig = 0, halfFpConfig = 0;
    size_t profilingTimerResolution = 1;
    bool endianLittle = true, available = true, compilerAvailable = true, linkerAvailable = true,
         errorCorrectionSupport = false, hostUnifiedMemory = true;
    cl_device_exec_capabilities executionCapabilities = CL_EXEC_KERNEL | CL_EXEC_NATIVE_KERNEL;
    cl_command_queue_properties queueProperties =
        CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
    size_t printfBufferSize = 1 << 20;
    bool preferredInteropUserSync = true;
    cl_uint partitionMaxSubDevices = 0;
    cl_device_svm_capabilities svmCapabilities = 0;
    cl_device_atomic_capabilities atomicMemoryCapabilities =
        CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
        CL_DEVICE_ATOMIC_ORDER_SEQ_CST | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM |
        CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP | CL_DEVICE_ATOMIC_SCOPE_DEVICE |
        CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
    cl_device_atomic_capabilities atomicFenceCapabilities = atomicMemoryCapabilities;
    bool genericAddressSpace = true, nonUniformWorkGroup = true, workGroupCollectives = false;
    /// Work-items per sub-group: runs of this many consecutive local linear ids, the last of a
    /// group may be smaller. 0: the device has no sub-groups (CL_DEVICE_MAX_NUM_SUB_GROUPS is
    /// 0, clGetKernelSubGroupInfo is CL_INVALID_OPERATION).
    cl_uint subGroupSize = 0;
    /// CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS (cl_khr_subgroups requires it).
    bool subGroupIndependentForwardProgress = false;
    cl_uint globalVariableMaxSize = 65536;
    size_t globalVariablePreferredTotalSize = 1 << 20;
    size_t preferredWorkGroupSizeMultiple = 16;
    cl_device_device_enqueue_capabilities deviceEnqueueCapabilities = 0;
    /// On-device queues (OpenCL 2.x device-side enqueue): all 0 on a device without them, as the
    /// spec asks (CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, _PREFERRED_SIZE, _MAX_SIZE,
    /// CL_DEVICE_MAX_ON_DEVICE_QUEUES, CL_DEVICE_MAX_ON_DEVICE_EVENTS).
    cl_command_queue_properties queueOnDeviceProperties = 0;
    cl_uint queueOnDevicePreferredSize = 0, queueOnDeviceMaxSize = 0;
    cl_uint maxOnDeviceQueues = 0, maxOnDeviceEvents = 0;
    /// CL_DEVICE_PIPE_SUPPORT and the pipe limits (0 on a device without pipes, as the spec
    /// asks).
    bool pipeSupport = false;
    cl_uint maxPipeArgs = 0, pipeMaxActiveReservations = 0, pipeMaxPacketSize = 0;
    std::string latestConformanceVersionPassed = "v0000-01-01-00";
    // cl_amd_device_attribute_query style extras
    std::string boardName;
    /// The GCN device answers the cl_amd_device_attribute_query queries below; others do not.
    bool amdAttributes = false;
    cl_device_topology_amd topology{}; ///< CL_DEVICE_TOPOLOGY_AMD (type 0: no PCI device)
    cl_uint simdPerComputeUnit = 0, simdWidth = 0, simdInstructionWidth = 0, wavefrontWidth = 0;
    cl_uint gfxipMajor = 0, gfxipMinor = 0, localMemSizePerComputeUnit = 0, localMemBanks = 0;
    cl_uint pcieId = 0; ///< CL_DEVICE_PCIE_ID_AMD: PCI device id (0: no PCI device)
    cl_uint globalMemChannels = 0, globalMemChannelBanks = 0, globalMemChannelBankWidth = 0;
    size_t preferredConstantBufferSize = 0;
    cl_uint asyncQueues = 0; ///< CL_DEVICE_AVAILABLE_ASYNC_QUEUES_AMD
    /// Why `available` is false (logged when the device is made), empty otherwise.
    std::string unavailableReason;
};

/// Where a device wants memory objects' storage: memory both the host and the device address
/// (the NVIDIA device: CUDA managed memory), so that every command and every device of a
/// context works on the same bytes through Mem::data(). A context takes the allocator of its
/// first device that has one; devices without one (CPU, GCN model) use host memory.
/// Thread-safe.
class StorageAllocator {
public:
    virtual ~StorageAllocator() = default;
    /// `size` bytes, at least 128-byte aligned; null when out of memory. `deviceFirst`: the
    /// device's kernels, not the host, touch them first, so memory that migrates may start out
    /// on the device (a hint).
    virtual char* allocate(size_t size, bool deviceFirst) = 0;
    virtual void release(char* p) = 0;
    /// Makes application memory (CL_MEM_USE_HOST_PTR) addressable by the device. False with
    /// `why` when it cannot.
    virtual bool registerHost(void* p, size_t size, std::string& why) = 0;
    virtual void unregisterHost(void* p) = 0;
    /// The host wrote [p, p + size) of this allocator's memory (a memory object's initial
    /// data) and the device's kernels come next: memory that migrates may move there now,
    /// ahead of them (a hint). Default: nothing.
    virtual void hostWrote(char* /*p*/, size_t /*size*/) {}
};

/// What a device knows about one kernel's needs beyond the executable's KernelDesc: a GPU
/// driver's attributes of the function it loaded. An empty field leaves the answer to core
/// (Kernel::limits: the device info and the KernelDesc).
struct KernelResources {
    /// The most work-items per work-group the compiled kernel takes (CL_KERNEL_WORK_GROUP_SIZE
    /// before the device's own limit).
    std::optional<size_t> workGroupSize;
    /// CL_KERNEL_LOCAL_MEM_SIZE: the kernel's local memory with its __local arguments as set
    /// now, laid out as a launch would (alignment included).
    std::optional<cl_ulong> localMemSize;
    std::optional<cl_ulong> privateMemSize; ///< CL_KERNEL_PRIVATE_MEM_SIZE, per work-item
};

/// What a kind of device does: compile for itself and run kernels. Implementations are
/// thread-safe; runNDRange blocks until every work-group finished.
class DeviceBackend {
public:
    virtual ~DeviceBackend() = default;
    /// The device's compiler (front end + its code generation); lives as long as the backend.
    virtual const Toolchain& toolchain() const = 0;
    /// The device's storage allocator, or null when host memory serves (the default).
    virtual StorageAllocator* storageAllocator() { return nullptr; }
    /// Runs every work-group of `launch`. Returns CL_SUCCESS or an execution error.
    virtual cl_int runNDRange(const KernelLaunch& launch) = 0;
    /// Whether launches and buffer writes, copies and fills only queue work on the device and
    /// return (deferCompletion), so that an idle queue may submit them on the application's
    /// thread (Queue::enqueue). False where a command does the work itself (the CPU device, the
    /// GCN model).
    virtual bool queuesDeviceWork() const { return false; }
    /// Work-group size picked when clEnqueueNDRangeKernel gets no local size.
    /// Why this device cannot execute kernels at all (enqueues fail with CL_OUT_OF_RESOURCES
    /// and this reason); empty when it can.
    virtual std::string cannotRun() const { return {}; }
    /// CL_DEVICE_GLOBAL_FREE_MEMORY_AMD: free global memory and the largest free block, in
    /// KiB. By default the device's memory is the host's, so both are the host's available
    /// memory.
    virtual std::array<size_t, 2> freeGlobalMemoryKiB() const;
    virtual void pickLocalSize(const Device& device, const Kernel& kernel, cl_uint dims,
                               const size_t* global, size_t* local) const = 0;
    /// What the device knows of `kernel` (built for `device`) that its KernelDesc does not
    /// say, for clGetKernelWorkGroupInfo and clEnqueueNDRangeKernel's checks (Kernel::limits).
    /// Called on application threads, with no lock of core's held; may load the kernel's code.
    /// By default nothing: the CPU and GCN devices' code generators fill the KernelDesc.
    virtual KernelResources kernelResources(const Device& /*device*/,
                                            const Kernel& /*kernel*/) const {
        return {};
    }

    // Data movement. Commands (core/commands.hpp) call these on their queue's worker thread once
    // the command's wait list has completed, with ranges already checked against the objects.
    // The defaults (core/transfer.cpp) work on host storage, Mem::data(), where the CPU and GCN
    // devices keep memory objects; a device with memory of its own overrides them. Each returns
    // CL_SUCCESS or the command's (negative) execution status. Offsets count bytes from the
    // object's start; an image's are bytes of its storage (core/image.hpp: texelOffset).

    /// Copies `size` bytes at `offset` of `src` to `host`.
    virtual cl_int read(const Mem& src, size_t offset, size_t size, void* host);
    /// Copies `size` bytes from `host` to `dst` at `offset`.
    virtual cl_int write(Mem& dst, size_t offset, size_t size, const void* host);
    /// Copies `size` bytes of `src` at `srcOffset` to `dst` at `dstOffset`; the two ranges do
    /// not overlap.
    virtual cl_int copy(const Mem& src, size_t srcOffset, Mem& dst, size_t dstOffset, size_t size);
    /// Box forms of read, write and copy: buffer rects, image regions and image<->buffer
    /// copies. `hostAt` is the layout of the host side.
    virtual cl_int readRect(const Mem& src, const Strided& srcAt, void* host, const Strided& hostAt,
                            const BoxSize& box);
    virtual cl_int writeRect(Mem& dst, const Strided& dstAt, const void* host,
                             const Strided& hostAt, const BoxSize& box);
    virtual cl_int copyRect(const Mem& src, const Strided& srcAt, Mem& dst, const Strided& dstAt,
                            const BoxSize& box);
    /// Repeats `pattern` (`patternSize` bytes, a divisor of box.width) along every row of the box
    /// at `at`: a buffer fill is one row, an image fill repeats one texel.
    virtual cl_int fill(Mem& dst, const Strided& at, const BoxSize& box, const void* pattern,
                        size_t patternSize);
    /// A map hands the host `m`'s host storage (Mem::data()) at `at` until the unmap: makes those
    /// bytes current for `flags`. By default the host storage is the memory: nothing to do.
    virtual cl_int map(Mem& m, const Strided& at, const BoxSize& box, cl_map_flags flags);
    /// Ends the map of `m` that handed out `ptr` (a device with memory of its own writes back
    /// what the host may have written; it keeps what map() needs to know about the region).
    /// By default nothing to do.
    virtual cl_int unmap(Mem& m, void* ptr);
    /// clEnqueueMigrateMemObjects: moves `m` to this device, or to the host with
    /// CL_MIGRATE_MEM_OBJECT_HOST. By default there is one memory: nothing to do.
    virtual cl_int migrate(Mem& m, cl_mem_migration_flags flags);

    // cl_khr_gl_sharing (core/gl_interop.hpp); runtime/gl decides when these run. By default a
    // device shares any GL context's objects through host copies and has no access of its own.

    /// How this device stands to the GL context that `facts` describe. Runs on the thread of
    /// clGetGLContextInfoKHR or clCreateContext, which may have that GL context current.
    virtual GlAffinity glAffinity(const GlContextFacts& facts) const {
        (void)facts;
        return {};
    }
    /// The device's own access to GL objects' memory; null when it has none (the default).
    virtual GlInterop* glInterop() { return nullptr; }
};

class Platform;

class Device final : public _cl_device_id {
public:
    static constexpr Tag kTag = Tag::Device;
    Device(Platform* platform, std::unique_ptr<DeviceBackend> backend, DeviceInfo info);

    Platform* platform() const { return m_platform; }
    const DeviceInfo& info() const { return m_info; }
    DeviceBackend& backend() const { return *m_backend; }
    bool hasExtension(std::string_view ext) const;

private:
    Platform* m_platform;
    std::unique_ptr<DeviceBackend> m_backend;
    DeviceInfo m_info;
};

/// The one "Duet" platform. Devices are made once, on first use, from DUET_DEVICES
/// ("cpu", "gcn", "all", comma separated; default "all"). Platform and devices are never freed.
class Platform final : public _cl_platform_id {
public:
    static constexpr Tag kTag = Tag::Platform;
    static Platform& get();

    const std::vector<Device*>& devices() const { return m_devices; }
    bool owns(const Device* d) const;
    const std::string& extensions() const { return m_extensions; }
    std::vector<cl_name_version> extensionsWithVersion() const;

private:
    Platform();
    std::vector<Device*> m_devices;
    std::string m_extensions;
};

/// Host cores this process may run on: the scheduler affinity mask (taskset, cgroup cpusets),
/// not every core of the machine, so thread pools never oversubscribe a restricted process.
unsigned usableHostCores();

/// One device a kind found on this machine: its backend and its filled DeviceInfo.
using DiscoveredDevice = std::pair<std::unique_ptr<DeviceBackend>, DeviceInfo>;

/// A kind of device ("cpu", "gcn", ...). Each device folder registers its kind with a
/// DeviceKindRegistrar at static initialisation; the platform asks every registered kind that
/// DUET_DEVICES names for its devices when it is first used. Core names no device.
struct DeviceKind {
    const char* name; ///< the DUET_DEVICES word
    /// Where the kind's devices come in the platform's list with DUET_DEVICES=all (lower
    /// first): the CPU device (CL_DEVICE_TYPE_DEFAULT) is 0.
    int order;
    /// Devices of this kind on this machine (may be none; unavailable ones carry a reason).
    std::vector<DiscoveredDevice> (*discover)();
};

/// Registers `kind` (from a static object's constructor in the device's folder).
struct DeviceKindRegistrar {
    explicit DeviceKindRegistrar(const DeviceKind& kind);
};

/// Splits an extension string into cl_name_version entries (all version 1.0.0).
std::vector<cl_name_version> namesWithVersion(std::string_view spaceSeparated,
                                              cl_version version = CL_MAKE_VERSION(1, 0, 0));

} // namespace duet::rt
