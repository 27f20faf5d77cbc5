// The NVIDIA device: discovery through the CUDA driver API (loaded at run time), the device
// info of each GPU as it is, the PTX toolchain for it, and the backend that runs kernels and
// moves data through cuda_executor.hpp (memory objects in CUDA managed memory).
#include "core/context.hpp"
#include "core/device.hpp"
#include "core/kernel.hpp"
#include "core/printf_buffer.hpp"
#include "core/queue.hpp"
#include "core/transfer.hpp"
#include "devices/nvidia/codegen/nvidia_toolchain.hpp"
#include "devices/nvidia/cuda_driver.hpp"
#include "devices/nvidia/cuda_executor.hpp"
#include "devices/nvidia/cuda_gl.hpp"
#include "duet/version.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <unordered_map>

namespace duet::rt {
namespace nvidia_device {
namespace {

using nvidia::CudaDriver;
namespace cu = nvidia::cu;

constexpr cl_uint kNvidiaVendorId = 0x10de;
constexpr size_t kPrintfBufferBytes = 1 << 20; // CL_DEVICE_PRINTF_BUFFER_SIZE
/// PTX kernel parameters: 4 KiB in all; the launch block takes 96 and its alignment up to 8,
/// the guard record's address of a guarded build (DUET_KERNEL_CHECKS, DUET_KERNEL_TIMEOUT) 8.
constexpr size_t kMaxParameterBytes = 4096 - sizeof(nvidia::LaunchBlock) - 8 - 8;

/// Largest divisor of n that is at most `limit` (and, when `multiple` divides n, a multiple
/// of it).
size_t bestDivisor(size_t n, size_t limit, size_t multiple) {
    limit = std::max<size_t>(1, std::min(limit, n));
    if (n % multiple == 0)
        for (size_t l = limit / multiple * multiple; l >= multiple; l -= multiple)
            if (n % l == 0)
                return l;
    for (size_t l = limit; l >= 1; --l)
        if (n % l == 0)
            return l;
    return 1;
}

class NvidiaBackend final : public DeviceBackend {
public:
    NvidiaBackend(TargetSpec target, unsigned warpSize, const CudaDriver& cuda, cu::Device device,
                  nvidia::GridLimits limits, uint32_t maxSharedOptin, std::string name)
        : m_toolchain(makeNvidiaToolchain(std::move(target))), m_warpSize(warpSize),
          m_executor(cuda, device, limits, maxSharedOptin, kPrintfBufferBytes),
          m_name(std::move(name)) {}

    const Toolchain& toolchain() const override { return *m_toolchain; }
    /// Every memory object of a context with this device lives in CUDA managed memory: the
    /// same address on the host and the GPU, so Mem::data() is the kernel's pointer too.
    StorageAllocator* storageAllocator() override { return &m_executor; }
    /// Queues the grids on the stream. Inside an in-order queue's command the queue waits for
    /// them later (deferCompletion), so back-to-back launches overlap the GPU's work instead of
    /// each waiting for the one before; elsewhere it waits here. A kernel that prints is always
    /// waited for here: its output is printed before its command completes, and the GPU's one
    /// printf buffer it holds is free again before this queue's next printf kernel asks for it
    /// (deferred, it would still hold it then, and the queue's thread would wait for itself).
    /// Launches and buffer writes, copies and fills are queued on the stream; an idle queue
    /// submits them on the application's thread.
    bool queuesDeviceWork() const override { return true; }
    cl_int runNDRange(const KernelLaunch& launch) override {
        Event* event = runningCommandEvent();
        const bool timed = event && event->queue() && event->queue()->profiling();
        CudaExecutor::Submitted submitted;
        if (Outcome o = m_executor.submit(launch, timed, submitted); !o.why.empty() || o.status)
            return report(launch.kernel->context(), "kernel " + launch.kernel->name(), o);
        // A launch that prints, or that a failed check or the timeout may stop
        // (DUET_KERNEL_CHECKS, DUET_KERNEL_TIMEOUT: its guard record), is waited for in its own
        // command, so that its event is the one that fails.
        const bool waitHere = submitted.prints() || submitted.guarded();
        std::unique_ptr<PendingWork> work = std::make_unique<StreamCompletion>(
            m_executor, std::move(submitted), *launch.kernel->context(), launch.kernel.get());
        if (!waitHere && deferCompletion(work))
            return CL_SUCCESS;
        return work->wait(event);
    }
    // Transfers through the driver (DMA rather than host page faults on managed memory). A
    // read waits (the driver copies into pageable memory synchronously anyway); writes,
    // copies and fills are queued on the stream and, inside an in-order queue's command,
    // completed later like launches, so a fill before a kernel costs no round trip.
    cl_int read(const Mem& src, size_t offset, size_t size, void* host) override {
        return report(src.context(), "read", m_executor.copy(host, src.data() + offset, size));
    }
    cl_int write(Mem& dst, size_t offset, size_t size, const void* host) override {
        m_executor.noteWritten(dst.data() + offset, size);
        CudaExecutor::Submitted work;
        Outcome o = m_executor.copyAsync(dst.data() + offset, host, size, work);
        return complete(*dst.context(), "write", o, std::move(work));
    }
    cl_int copy(const Mem& src, size_t srcOffset, Mem& dst, size_t dstOffset,
                size_t size) override {
        m_executor.noteWritten(dst.data() + dstOffset, size);
        CudaExecutor::Submitted work;
        Outcome o =
            m_executor.copyAsync(dst.data() + dstOffset, src.data() + srcOffset, size, work);
        return complete(*dst.context(), "copy", o, std::move(work));
    }
    cl_int fill(Mem& dst, const Strided& at, const BoxSize& box, const void* pattern,
                size_t patternSize) override {
        m_executor.noteWritten(dst.data(), dst.size());
        if (box.rows != 1 || box.slices != 1) // image fills: one texel over rows and slices
            return DeviceBackend::fill(dst, at, box, pattern, patternSize);
        CudaExecutor::Submitted work;
        Outcome o =
            m_executor.fillAsync(dst.data() + at.offset, box.width, pattern, patternSize, work);
        return complete(*dst.context(), "fill", o, std::move(work));
    }
    // GL buffers acquired through CUDA-GL interop live in GL's device memory (cuda_gl.hpp):
    // the host-side commands on them are staged (buffer fills are the GPU's already); every
    // other object is managed memory, which core's host defaults reach directly. Touched by the
    // host, its pages move to the host; once the host is done with them (after a rect transfer,
    // at the unmap) they are sent back ahead of the next kernel (Context::hostFilled: in a
    // context of this GPU alone), which would otherwise fault them back one by one.
    cl_int readRect(const Mem& src, const Strided& srcAt, void* host, const Strided& hostAt,
                    const BoxSize& box) override {
        if (src.storageOnDevice())
            return report(src.context(), "read", m_staging.readRect(src, srcAt, host, hostAt, box));
        cl_int status = DeviceBackend::readRect(src, srcAt, host, hostAt, box);
        backToGpu(src, srcAt, box);
        return status;
    }
    cl_int writeRect(Mem& dst, const Strided& dstAt, const void* host, const Strided& hostAt,
                     const BoxSize& box) override {
        m_executor.noteWritten(dst.data(), dst.size());
        if (dst.storageOnDevice())
            return report(dst.context(), "write",
                          m_staging.writeRect(dst, dstAt, host, hostAt, box));
        cl_int status = DeviceBackend::writeRect(dst, dstAt, host, hostAt, box);
        backToGpu(dst, dstAt, box);
        return status;
    }
    cl_int copyRect(const Mem& src, const Strided& srcAt, Mem& dst, const Strided& dstAt,
                    const BoxSize& box) override {
        m_executor.noteWritten(dst.data(), dst.size());
        if (src.storageOnDevice() || dst.storageOnDevice())
            return report(dst.context(), "copy", m_staging.copyRect(src, srcAt, dst, dstAt, box));
        cl_int status = DeviceBackend::copyRect(src, srcAt, dst, dstAt, box);
        backToGpu(src, srcAt, box);
        backToGpu(dst, dstAt, box);
        return status;
    }
    cl_int map(Mem& m, const Strided& at, const BoxSize& box, cl_map_flags flags) override {
        if (!m.storageOnDevice()) {
            if (migrates(m)) {
                std::lock_guard lock(m_mapsMutex);
                m_mapped.emplace(m.hostData() + at.offset, extent(at, box));
            }
            return CL_SUCCESS;
        }
        return report(m.context(), "map", m_staging.map(m, at, box, flags));
    }
    cl_int unmap(Mem& m, void* ptr) override {
        // The host may have written through the map (CUDA arrays copied from it are stale).
        m_executor.noteWritten(m.data(), m.size());
        size_t bytes = 0; // of a map of managed memory, whatever the storage is now
        {
            std::lock_guard lock(m_mapsMutex);
            if (auto it = m_mapped.find(ptr); it != m_mapped.end()) {
                bytes = it->second;
                m_mapped.erase(it);
            }
        }
        if (bytes && migrates(m))
            m.context()->hostFilled(static_cast<char*>(ptr), bytes);
        return report(m.context(), "unmap", m_staging.unmap(m, ptr));
    }
    /// clEnqueueMigrateMemObjects: managed memory prefetched to this GPU or to the host.
    cl_int migrate(Mem& m, cl_mem_migration_flags flags) override {
        if (migrates(m))
            m_executor.prefetch(m.data(), m.size(), flags & CL_MIGRATE_MEM_OBJECT_HOST);
        return CL_SUCCESS;
    }
    GlAffinity glAffinity(const GlContextFacts& facts) const override {
        return cudaGlAffinity(m_executor, m_name, facts);
    }
    GlInterop* glInterop() override { return &m_glInterop; }

    /// Managed memory of this context's allocator: not the application's (USE_HOST_PTR), not
    /// GL's device memory while shared (where a prefetch would be refused anyway).
    static bool migrates(const Mem& m) {
        return !(m.flags() & CL_MEM_USE_HOST_PTR) && !m.storageOnDevice();
    }
    static size_t extent(const Strided& at, const BoxSize& box) {
        return box.width + (box.rows - 1) * at.rowPitch + (box.slices - 1) * at.slicePitch;
    }
    static void backToGpu(const Mem& m, const Strided& at, const BoxSize& box) {
        if (migrates(m) && box.bytes())
            m.context()->hostFilled(m.hostData() + at.offset, extent(at, box));
    }
    void pickLocalSize(const Device& device, const Kernel& kernel, cl_uint dims,
                       const size_t* global, size_t* local) const override {
        const KernelDesc& desc = kernel.desc();
        if (desc.reqdWorkGroupSize[0]) {
            for (cl_uint d = 0; d < dims; ++d)
                local[d] = desc.reqdWorkGroupSize[d];
            return;
        }
        // Whole warps where the global size allows, 256 work-items at most (8 warps: enough
        // blocks per SM to hide latency, few enough registers to always fit), and never more
        // than the compiled kernel takes (CL_KERNEL_WORK_GROUP_SIZE: kernelResources).
        size_t budget = std::min<size_t>(256, kernel.workGroupLimit(device));
        for (cl_uint d = 0; d < dims; ++d) {
            size_t want = budget;
            if (d == 0 && dims > 1)
                want = std::min<size_t>(budget, global[0] % 32 == 0 ? 32 : 16);
            local[d] = bestDivisor(global[d], want, d == 0 ? m_warpSize : 1);
            budget = std::max<size_t>(1, budget / local[d]);
        }
    }

    /// The driver's word on the kernel compiled for this GPU (its module loaded on first use):
    /// CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (register pressure can make it less than the
    /// device's 1024), the shared memory a launch would take with the __local arguments as set
    /// (static + the variables + the arguments, laid out as the launch will), and
    /// CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES. A module the driver refuses answers nothing but the
    /// shared memory; the launch then fails with the JIT's log.
    KernelResources kernelResources(const Device& device, const Kernel& kernel) const override {
        const auto* entry = static_cast<const nvidia::KernelEntry*>(kernel.entry(&device));
        if (!entry)
            return {};
        KernelResources r;
        FunctionInfo fn;
        if (m_executor.describe(kernel.executable(&device), entry, fn)) {
            if (fn.maxThreads)
                r.workGroupSize = fn.maxThreads;
            r.privateMemSize = fn.localBytes;
        }
        std::vector<size_t> argBytes;
        for (uint32_t i : entry->localArgs)
            argBytes.push_back(i < kernel.args().size() ? kernel.args()[i].localSize : 0);
        const uint64_t dynamic = nvidia::layOutSharedMemory({entry->localVariableBytes, argBytes});
        r.localMemSize = fn.staticShared + dynamic;
        return r;
    }

private:
    /// Stream work (a launch or a transfer) the queue waits for later: the stream (or the
    /// launch's end event) is waited for, a launch's GPU time goes to the event, its printf
    /// output to stdout, and a failure is reported as the command's own would be.
    class StreamCompletion final : public PendingWork {
    public:
        /// `context` and `kernel` (null for a transfer) outlive this: the queue keeps the
        /// command, and what it holds, until then.
        StreamCompletion(CudaExecutor& executor, CudaExecutor::Submitted submitted,
                         const Context& context, const Kernel* kernel, const char* what = "")
            : m_executor(executor), m_submitted(std::move(submitted)), m_context(context),
              m_kernel(kernel), m_what(what) {}
        ~StreamCompletion() override {
            uint64_t ignored = 0;
            if (m_submitted.start || m_submitted.end || m_submitted.prints() ||
                m_submitted.guarded())
                m_executor.finish(m_submitted, ignored);
        }
        cl_int wait(Event* event) override {
            uint64_t deviceNs = 0;
            PrintfOutput printed;
            Outcome o = m_executor.finish(m_submitted, deviceNs, &printed);
            if (m_kernel) {
                // The records in buffer order, in one write, before the command completes
                // (OpenCL C 3.0 §6.15.14.1); what did not fit is reported, as the GCN device
                // does.
                writePrintfOutput(printed);
                for (const std::string& problem :
                     printfProblems(printed, m_executor.printfCapacity()))
                    report(&m_context, what(), {CL_SUCCESS, problem});
            }
            if (event && deviceNs)
                event->setDeviceDuration(deviceNs);
            if (o.status == CL_SUCCESS && o.why.empty())
                return CL_SUCCESS;
            return report(&m_context, what(), o);
        }

    private:
        std::string what() const { return m_kernel ? "kernel " + m_kernel->name() : m_what; }

        CudaExecutor& m_executor;
        CudaExecutor::Submitted m_submitted;
        const Context& m_context;
        const Kernel* m_kernel;
        const char* m_what;
    };

    /// Completes the transfer `work` that `o` says was queued: later (deferCompletion) inside
    /// an in-order queue's command, else now.
    cl_int complete(const Context& context, const char* what, const Outcome& o,
                    CudaExecutor::Submitted work) {
        if (o.status != CL_SUCCESS || !o.why.empty())
            return report(&context, what, o);
        if (!work.seq)
            return CL_SUCCESS; // nothing was queued (an empty transfer, a waited-for fill)
        std::unique_ptr<PendingWork> pending =
            std::make_unique<StreamCompletion>(m_executor, std::move(work), context, nullptr, what);
        if (deferCompletion(pending))
            return CL_SUCCESS;
        return pending->wait(runningCommandEvent());
    }

    /// A failure goes to stderr (as the GCN device's) and to the context's callback.
    static cl_int report(const Context* context, const std::string& what, const Outcome& o) {
        if (o.status != CL_SUCCESS || !o.why.empty()) {
            const std::string message = "NVIDIA: " + what + ": " + o.why;
            std::fprintf(stderr, "duet: %s\n", message.c_str());
            if (context)
                context->notify(message);
        }
        return o.status;
    }

    std::unique_ptr<Toolchain> m_toolchain;
    unsigned m_warpSize;
    /// Mutable: the module cache behind pickLocalSize's function limit.
    mutable CudaExecutor m_executor;
    std::mutex m_mapsMutex; ///< m_mapped; a leaf
    /// Live maps of managed memory: the pointer handed out and the bytes it spans.
    std::unordered_multimap<const void*, size_t> m_mapped;
    std::string m_name;
    CudaGlInterop m_glInterop{m_executor};
    DeviceStorageStaging m_staging{m_executor};
};

struct Attributes {
    const CudaDriver& cuda;
    cu::Device device;
    std::string failures;
    int operator()(cu::DeviceAttribute a, int fallback = 0) {
        int v = 0;
        if (cu::Result r = cuda.deviceGetAttribute(&v, a, device); r != cu::kSuccess) {
            failures += " attribute " + std::to_string(int(a)) + ": " + cuda.errorText(r) + ";";
            return fallback;
        }
        return v;
    }
    /// `limit`, lowered to attribute `a` where the driver reports a smaller positive value; a
    /// refusal is no failure (the limit stands).
    size_t atMost(size_t limit, cu::DeviceAttribute a) const {
        int v = 0;
        if (cuda.deviceGetAttribute(&v, a, device) != cu::kSuccess || v <= 0)
            return limit;
        return std::min(limit, size_t(v));
    }
};

/// Images: descriptors and texels in plain (managed) memory, written by software and read
/// through CUDA texture objects where those can (texture_objects.hpp), else by software
/// (builtins/cpu/image.cl built for nvptx64), as on the GCN device; the formats are core's
/// (supportedFormats: sRGBA and depth included). Sizes are core's defaults, lowered to CUDA's
/// texture limits where those are stricter. Rows of images the runtime allocates are padded to
/// the texture pitch alignment, so that every 2D image qualifies for textures.
void describeImages(DeviceInfo& info, const Attributes& attr) {
    info.imageSupport = true;
    info.maxReadImageArgs = 128;
    info.maxWriteImageArgs = info.maxReadWriteImageArgs = 64;
    info.maxSamplers = 16;
    // 1D images share the 2D width limit (CL_DEVICE_IMAGE2D_MAX_WIDTH).
    info.image2dMaxWidth = attr.atMost(attr.atMost(info.image2dMaxWidth, cu::kMaxTexture2dWidth),
                                       cu::kMaxTexture1dWidth);
    info.image2dMaxHeight = attr.atMost(info.image2dMaxHeight, cu::kMaxTexture2dHeight);
    info.image3dMaxWidth = attr.atMost(info.image3dMaxWidth, cu::kMaxTexture3dWidth);
    info.image3dMaxHeight = attr.atMost(info.image3dMaxHeight, cu::kMaxTexture3dHeight);
    info.image3dMaxDepth = attr.atMost(info.image3dMaxDepth, cu::kMaxTexture3dDepth);
    info.imageMaxBufferSize = attr.atMost(info.imageMaxBufferSize, cu::kMaxTexture1dLinearWidth);
    info.imageMaxArraySize = attr.atMost(
        attr.atMost(info.imageMaxArraySize, cu::kMaxTexture2dLayers), cu::kMaxTexture1dLayers);
    // Software reads any pitch and base address (image2d_from_buffer).
    info.imagePitchAlignment = info.imageBaseAddressAlignment = 1;
    const size_t pitch = attr.atMost(4096, cu::kTexturePitchAlignment);
    info.imageRowAlignment = pitch < 4096 && (pitch & (pitch - 1)) == 0 ? pitch : 1;
}

std::string versionText(int cudaVersion) {
    return std::to_string(cudaVersion / 1000) + "." + std::to_string(cudaVersion % 1000 / 10);
}

/// One GPU's DeviceInfo from what the driver reports.
DiscoveredDevice describeGpu(const CudaDriver& cuda, int ordinal, int driverVersion) {
    DeviceInfo info;
    info.type = CL_DEVICE_TYPE_GPU;
    info.vendor = "NVIDIA Corporation";
    info.vendorId = kNvidiaVendorId;
    info.driverVersion = DUET_VERSION " (CUDA " + versionText(driverVersion) + ")";
    info.version = "OpenCL 3.0 Duet";
    info.numericVersion = CL_MAKE_VERSION(3, 0, 0);
    info.openclCVersion = "OpenCL C 1.2 Duet";
    info.openclCAllVersions = {
        {CL_MAKE_VERSION(1, 0, 0), "OpenCL C"},
        {CL_MAKE_VERSION(1, 1, 0), "OpenCL C"},
        {CL_MAKE_VERSION(1, 2, 0), "OpenCL C"},
        {CL_MAKE_VERSION(3, 0, 0), "OpenCL C"},
    };
    info.openclCFeatures = namesWithVersion(kNvidiaFeatures, CL_MAKE_VERSION(3, 0, 0));
    // GL sharing: CUDA-GL interop with an NVIDIA GL context on this GPU, host copies with
    // any other (runtime/gl); not compiler features, so not in the code generator's list.
    // Depth textures become CL_DEPTH images, which kernels read like any other.
    info.extensions = std::string(kNvidiaExtensions) +
                      " cl_khr_gl_sharing cl_khr_gl_event cl_khr_gl_depth_images";
    info.extensionsWithVersion = namesWithVersion(info.extensions);

    cu::Device device = 0;
    char name[256] = {};
    size_t totalMem = 0;
    std::string failures;
    if (cu::Result r = cuda.deviceGet(&device, ordinal); r != cu::kSuccess)
        failures += " cuDeviceGet: " + cuda.errorText(r) + ";";
    if (cu::Result r = cuda.deviceGetName(name, sizeof name - 1, device); r != cu::kSuccess)
        failures += " cuDeviceGetName: " + cuda.errorText(r) + ";";
    if (cu::Result r = cuda.deviceTotalMem(&totalMem, device); r != cu::kSuccess)
        failures += " cuDeviceTotalMem: " + cuda.errorText(r) + ";";
    Attributes attr{cuda, device, {}};
    const int major = attr(cu::kComputeCapabilityMajor), minor = attr(cu::kComputeCapabilityMinor);
    const int sms = attr(cu::kMultiprocessorCount, 1);
    const int warp = attr(cu::kWarpSize, 32);
    const int maxThreads = attr(cu::kMaxThreadsPerBlock, 1024);
    const int blockDim[3] = {attr(cu::kMaxBlockDimX, 1024), attr(cu::kMaxBlockDimY, 1024),
                             attr(cu::kMaxBlockDimZ, 64)};
    const int sharedPerBlock = attr(cu::kMaxSharedMemoryPerBlock, 48 * 1024);
    nvidia::GridLimits grid;
    grid.maxBlocks = {uint64_t(attr(cu::kMaxGridDimX, 2147483647)),
                      uint64_t(attr(cu::kMaxGridDimY, 65535)),
                      uint64_t(attr(cu::kMaxGridDimZ, 65535))};
    const int sharedOptin = attr(cu::kMaxSharedMemoryPerBlockOptin, sharedPerBlock);
    const int sharedPerSm = attr(cu::kMaxSharedMemoryPerMultiprocessor);
    const int clockKHz = attr(cu::kClockRate);
    const int l2 = attr(cu::kL2CacheSize);
    const int constantBytes = attr(cu::kTotalConstantMemory, 64 * 1024);
    const int ecc = attr(cu::kEccEnabled);
    const int unified = attr(cu::kUnifiedAddressing);
    const int integrated = attr(cu::kIntegrated);
    const int computeMode = attr(cu::kComputeMode);
    const int pciDomain = attr(cu::kPciDomainId), pciBus = attr(cu::kPciBusId),
              pciDevice = attr(cu::kPciDeviceId);
    // cl_duet_gl_device_memory: GL buffers' stores in this GPU's memory, which the driver
    // exports as file descriptors for GL to import (runtime/gl, clCreateFromGLBufferInDevice-
    // MemoryDUET). A GL that imports none makes that call fail with the reason.
    auto has = [&](cu::DeviceAttribute a) { // a refusal is no failure: just not offered
        int v = 0;
        return cuda.deviceGetAttribute(&v, a, device) == cu::kSuccess && v != 0;
    };
    if (cuda.memoryExportMissing.empty() && has(cu::kVirtualMemoryManagement) &&
        has(cu::kPosixFdHandles)) {
        info.extensions += " cl_duet_gl_device_memory";
        info.extensionsWithVersion = namesWithVersion(info.extensions);
    }
    failures += attr.failures;

    info.name = name[0] ? name : "NVIDIA GPU";
    info.maxComputeUnits = cl_uint(std::max(1, sms));
    info.maxWorkItemDimensions = 3;
    info.maxWorkGroupSize = size_t(std::max(1, maxThreads));
    for (int d = 0; d < 3; ++d)
        info.maxWorkItemSizes[d] = size_t(std::max(1, std::min(blockDim[d], maxThreads)));
    // Scalar code per work-item: each of the warp's lanes is one work-item (as NVIDIA's OpenCL).
    const cl_uint widths[7] = {1, 1, 1, 1, 1, 1, 0};
    std::copy(widths, widths + 7, info.preferredVectorWidth);
    std::copy(widths, widths + 7, info.nativeVectorWidth);
    info.maxClockFrequency = cl_uint(clockKHz / 1000);
    info.addressBits = 64;
    info.globalMemSize = totalMem;
    info.maxMemAllocSize =
        std::max<cl_ulong>(totalMem / 4, std::min<cl_ulong>(totalMem, 128ull << 20));
    info.globalMemCacheType = CL_READ_WRITE_CACHE;
    info.globalMemCacheSize = cl_ulong(std::max(0, l2));
    info.globalMemCachelineSize = 128;
    info.maxConstantBufferSize = cl_ulong(constantBytes);
    info.maxConstantArgs = 9;
    // Shared memory a block may use when the kernel opts in (cuFuncSetAttribute
    // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES above 48 KiB, which the launcher does).
    info.localMemType = CL_LOCAL;
    info.localMemSize = cl_ulong(std::max(sharedPerBlock, sharedOptin));
    info.memBaseAddrAlign = 1024; // bits: core's 128-byte storage alignment
    describeImages(info, attr);
    info.maxParameterSize = kMaxParameterBytes;
    // div.rn / sqrt.rn unless -cl-fast-relaxed-math: correctly rounded by default.
    info.singleFpConfig = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_FMA |
                          CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
    info.doubleFpConfig = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST |
                          CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_FMA;
    info.halfFpConfig = 0;
    info.profilingTimerResolution = 1;
    info.errorCorrectionSupport = ecc != 0;
    info.hostUnifiedMemory = integrated != 0;
    info.executionCapabilities = CL_EXEC_KERNEL;
    info.printfBufferSize = kPrintfBufferBytes;
    info.preferredWorkGroupSizeMultiple = size_t(std::max(1, warp));
    info.nonUniformWorkGroup = true; // partial work-groups run as grids of their own
    info.genericAddressSpace = true;
    info.workGroupCollectives = true; // builtins/nvidia/work_group.c
    // A sub-group is the warp (builtins/nvidia/sub_group.c): work-items fill warps in local
    // linear id order, as CUDA fills them by threadIdx (x fastest), which is get_local_id. The
    // warps of a block are all resident on one SM and each is scheduled on its own: one spinning
    // on another's store does not starve it, which is independent forward progress as the spec
    // defines it (cl_khr_subgroups requires it).
    // The builtins' width is 32 (LANES), every NVIDIA GPU's warp size.
    info.subGroupSize = 32;
    info.subGroupIndependentForwardProgress = true;
    info.globalVariableMaxSize = 64 * 1024;
    info.globalVariablePreferredTotalSize = 1 << 20;
    info.atomicMemoryCapabilities =
        CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
        CL_DEVICE_ATOMIC_ORDER_SEQ_CST | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM |
        CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP | CL_DEVICE_ATOMIC_SCOPE_DEVICE;
    info.atomicFenceCapabilities = info.atomicMemoryCapabilities;
    info.svmCapabilities = 0;
    info.topology.pcie.type = CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD;
    info.topology.pcie.bus = cl_char(pciBus);
    info.topology.pcie.device = cl_char(pciDevice);
    info.topology.pcie.function = 0;

    NvptxTargetChoice target = chooseNvptxTarget(major, minor, driverVersion);
    std::string reason;
    if (!failures.empty())
        reason = "the CUDA driver did not describe the device:" + failures;
    else if (target.sm.empty())
        reason = target.reason;
    else if (computeMode == cu::kComputeModeProhibited)
        reason = "the GPU's compute mode is 'prohibited' (nvidia-smi -c): no context may use it";
    info.available = reason.empty();
    info.unavailableReason = reason;

    char pci[64];
    std::snprintf(pci, sizeof pci, "%04x:%02x:%02x", unsigned(pciDomain), unsigned(pciBus),
                  unsigned(pciDevice));
    nvidia::logNvidia(
        "NVIDIA: device " + std::to_string(ordinal) + ": " + info.name + ", compute capability " +
        std::to_string(major) + "." + std::to_string(minor) + " -> " +
        (target.sm.empty() ? std::string("no target")
                           : target.sm + " PTX " + std::to_string(target.ptx / 10) + "." +
                                 std::to_string(target.ptx % 10)) +
        ", " + std::to_string(sms) + " SMs at " + std::to_string(clockKHz / 1000) + " MHz, " +
        std::to_string(totalMem >> 20) + " MiB, shared memory " + std::to_string(sharedPerBlock) +
        " B per block (" + std::to_string(sharedOptin) + " opt-in, " + std::to_string(sharedPerSm) +
        " per SM), L2 " + std::to_string(l2) + " B, warp " + std::to_string(warp) + ", ECC " +
        (ecc ? "on" : "off") + ", unified addressing " + (unified ? "yes" : "no") + ", PCI " + pci);

    const std::string sm = target.sm.empty() ? "sm_90" : target.sm;
    const unsigned ptx = target.sm.empty() ? kPreferredPtx : target.ptx;
    return {std::make_unique<NvidiaBackend>(
                nvidiaTarget(sm, ptx), unsigned(std::max(1, warp)), cuda, device, grid,
                uint32_t(std::max(sharedPerBlock, sharedOptin)), info.name),
            std::move(info)};
}

} // namespace
} // namespace nvidia_device

namespace {

/// One device per GPU the CUDA driver reports; none when there is no driver or no GPU (the
/// reason is printed under DUET_LOG=1).
std::vector<DiscoveredDevice> discoverNvidia() {
    std::vector<DiscoveredDevice> out;
    std::string reason;
    const nvidia::CudaDriver* cuda = nvidia::CudaDriver::get(&reason);
    if (!cuda)
        return out;
    if (nvidia::cu::Result r = cuda->init(0); r != nvidia::cu::kSuccess) {
        nvidia::logNvidia("NVIDIA: cuInit failed: " + cuda->errorText(r));
        return out;
    }
    int version = 0, count = 0;
    if (nvidia::cu::Result r = cuda->driverGetVersion(&version); r != nvidia::cu::kSuccess)
        nvidia::logNvidia("NVIDIA: cuDriverGetVersion failed: " + cuda->errorText(r));
    if (nvidia::cu::Result r = cuda->deviceGetCount(&count); r != nvidia::cu::kSuccess) {
        nvidia::logNvidia("NVIDIA: cuDeviceGetCount failed: " + cuda->errorText(r));
        return out;
    }
    nvidia::logNvidia("NVIDIA: CUDA driver " + std::to_string(version / 1000) + "." +
                      std::to_string(version % 1000 / 10) + ", " + std::to_string(count) +
                      " device(s)");
    for (int i = 0; i < count; ++i)
        out.push_back(nvidia_device::describeGpu(*cuda, i, version));
    return out;
}

const DeviceKindRegistrar kRegisterNvidia{DeviceKind{"nvidia", 2, &discoverNvidia}};

} // namespace

} // namespace duet::rt
