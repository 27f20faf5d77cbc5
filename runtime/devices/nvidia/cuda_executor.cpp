// CUDA execution for the NVIDIA device: context, managed memory, modules, launches, copies.
#include "devices/nvidia/cuda_executor.hpp"

#include "core/image.hpp"
#include "core/kernel.hpp"
#include "core/kernel_checks.hpp"
#include "core/queue.hpp"
#include "devices/nvidia/codegen/nvidia_toolchain.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace duet::rt::nvidia_device {

namespace cu = nvidia::cu;

struct CudaExecutor::Lane {
    cu::StreamHandle stream = nullptr;
    std::atomic<uint64_t> seq{0};     ///< the number of the last work queued
    std::atomic<uint64_t> doneSeq{0}; ///< work up to this number has finished
    uint64_t barrierSeen = 0;         ///< the last barrier the stream waits for (m_mutex)
};

namespace {
/// The context each thread last made current (cuCtxSetCurrent is per thread).
thread_local cu::Context tCurrent = nullptr;
constexpr uint32_t kDefaultDynamicShared = 48 * 1024;

/// The lanes of the calling thread, one per GPU it submitted to; given back when it ends
/// (executors live as long as the process).
struct ThreadLanes {
    std::vector<std::pair<CudaExecutor*, CudaExecutor::Lane*>> lanes;
    ~ThreadLanes() {
        for (auto& [executor, lane] : lanes)
            executor->returnLane(lane);
    }
};
thread_local ThreadLanes tLanes;
} // namespace

CudaExecutor::CudaExecutor(const nvidia::CudaDriver& cuda, cu::Device device,
                           nvidia::GridLimits limits, uint32_t maxSharedOptin,
                           uint64_t printfCapacity)
    : m_cuda(cuda), m_device(device), m_limits(limits), m_maxSharedOptin(maxSharedOptin),
      m_printfCapacity(printfCapacity) {}

CudaExecutor::~CudaExecutor() {
    // Devices live as long as the process; the driver may already be tearing down at exit, so
    // the context is left to it (modules and the stream go with the primary context).
}

std::string CudaExecutor::cudaError(const std::string& call, cu::Result r) const {
    return call + " failed: " + m_cuda.errorText(r);
}

std::string CudaExecutor::sharedMemoryExcess(const nvidia::KernelEntry& entry,
                                             uint64_t staticShared, uint64_t dynamic) const {
    if (staticShared + dynamic <= m_maxSharedOptin)
        return {};
    const uint64_t args = dynamic - std::min(dynamic, entry.localVariableBytes);
    return "kernel " + entry.name + " needs " + std::to_string(staticShared + dynamic) +
           " bytes of local memory per work-group (" + std::to_string(entry.localVariableBytes) +
           " in __local variables, " + std::to_string(args) +
           " in __local arguments with their alignment" +
           (staticShared ? ", " + std::to_string(staticShared) + " static" : std::string()) +
           "); the GPU has " + std::to_string(m_maxSharedOptin) + " (CL_DEVICE_LOCAL_MEM_SIZE)";
}

Outcome CudaExecutor::ready() {
    std::call_once(m_contextOnce, [this] {
        if (cu::Result r = m_cuda.devicePrimaryCtxRetain(&m_context, m_device); r != cu::kSuccess)
            m_contextError = cudaError("cuDevicePrimaryCtxRetain", r);
        else if (cu::Result r = m_cuda.ctxSetCurrent(m_context); r != cu::kSuccess)
            m_contextError = cudaError("cuCtxSetCurrent", r);
        else if (cu::Result r = m_cuda.streamCreate(&m_stream, cu::kStreamNonBlocking);
                 r != cu::kSuccess)
            m_contextError = cudaError("cuStreamCreate", r);
        else
            tCurrent = m_context;
        if (m_contextError.empty()) {
            readTextureLimits();
            preparePrefetches();
        }
    });
    if (!m_contextError.empty())
        return {CL_OUT_OF_RESOURCES, m_contextError};
    if (tCurrent != m_context) {
        if (cu::Result r = m_cuda.ctxSetCurrent(m_context); r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES, cudaError("cuCtxSetCurrent", r)};
        tCurrent = m_context;
    }
    return {};
}

void CudaExecutor::readTextureLimits() {
    const char* env = std::getenv("DUET_NVIDIA_TEXTURES");
    if (!m_cuda.texObjectCreate || (env && std::string(env) == "0"))
        return;
    auto attribute = [&](cu::DeviceAttribute a) -> uint64_t {
        int v = 0;
        return m_cuda.deviceGetAttribute(&v, a, m_device) == cu::kSuccess && v > 0 ? uint64_t(v)
                                                                                   : 0;
    };
    TextureLimits t;
    t.alignment = attribute(cu::kTextureAlignment);
    t.pitchAlignment = attribute(cu::kTexturePitchAlignment);
    t.maxWidth = attribute(cu::kMaxTexture2dLinearWidth);
    t.maxHeight = attribute(cu::kMaxTexture2dLinearHeight);
    t.maxPitch = attribute(cu::kMaxTexture2dLinearPitch);
    if (m_cuda.array3DCreate) {
        // CUDA arrays for 3D images and image arrays; any limit missing: none.
        const uint64_t a[8] = {
            attribute(cu::kMaxTexture3dWidth),         attribute(cu::kMaxTexture3dHeight),
            attribute(cu::kMaxTexture3dDepth),         attribute(cu::kMaxTexture1dLayeredWidth),
            attribute(cu::kMaxTexture1dLayers),        attribute(cu::kMaxTexture2dLayeredWidth),
            attribute(cu::kMaxTexture2dLayeredHeight), attribute(cu::kMaxTexture2dLayers)};
        if (std::all_of(std::begin(a), std::end(a), [](uint64_t v) { return v > 0; })) {
            std::copy(a, a + 3, t.max3d);
            std::copy(a + 3, a + 5, t.maxLayered1d);
            std::copy(a + 5, a + 8, t.maxLayered2d);
        }
    }
    if (t.alignment && t.pitchAlignment && t.maxWidth && t.maxHeight && t.maxPitch)
        m_textureLimits = t;
}

char* CudaExecutor::allocate(size_t size, bool deviceFirst) {
    if (!ready().why.empty())
        return nullptr;
    cu::DevicePtr p = 0;
    if (m_cuda.memAllocManaged(&p, size ? size : 1, cu::kMemAttachGlobal) != cu::kSuccess)
        return nullptr;
    char* storage = reinterpret_cast<char*>(uintptr_t(p));
    if (deviceFirst && size)
        prefetch(storage, size);
    return storage;
}

void CudaExecutor::preparePrefetches() {
    const char* env = std::getenv("DUET_NVIDIA_PREFETCH");
    int concurrent = 0;
    if (!m_cuda.memPrefetchAsync || (env && std::string(env) == "0") ||
        m_cuda.deviceGetAttribute(&concurrent, cu::kConcurrentManagedAccess, m_device) !=
            cu::kSuccess ||
        concurrent != 1)
        return;
    if (m_cuda.streamCreate(&m_prefetchStream, cu::kStreamNonBlocking) != cu::kSuccess)
        m_prefetchStream = nullptr;
}

bool CudaExecutor::prefetch(const void* p, size_t size, bool toHost) {
    if (!p || !size || !ready().why.empty() || !m_prefetchStream)
        return false;
    return m_cuda.memPrefetchAsync(cu::DevicePtr(reinterpret_cast<uintptr_t>(p)), size,
                                   toHost ? cu::kDeviceCpu : m_device,
                                   m_prefetchStream) == cu::kSuccess;
}

void CudaExecutor::release(char* p) {
    if (p && ready().why.empty()) {
        dropArrays(p);
        m_cuda.memFree(cu::DevicePtr(reinterpret_cast<uintptr_t>(p)));
    }
}

bool CudaExecutor::registerHost(void* p, size_t size, std::string& why) {
    if (Outcome o = ready(); !o.why.empty()) {
        why = o.why;
        return false;
    }
    std::lock_guard lock(m_mutex);
    if (auto it = m_registered.find(p); it != m_registered.end()) {
        ++it->second; // another buffer on the same host memory
        return true;
    }
    cu::Result r = m_cuda.memHostRegister(
        p, size ? size : 1, cu::kMemHostRegisterPortable | cu::kMemHostRegisterDeviceMap);
    // Memory inside a range registered by someone else is already device-accessible.
    if (r == cu::kErrorHostMemoryAlreadyRegistered)
        return true;
    if (r != cu::kSuccess) {
        why = "the NVIDIA device cannot use this host memory (CL_MEM_USE_HOST_PTR): " +
              cudaError("cuMemHostRegister", r);
        return false;
    }
    m_registered.emplace(p, 1u);
    return true;
}

void CudaExecutor::unregisterHost(void* p) {
    dropArrays(static_cast<const char*>(p));
    if (!ready().why.empty())
        return;
    std::lock_guard lock(m_mutex);
    auto it = m_registered.find(p);
    if (it == m_registered.end() || --it->second)
        return;
    m_registered.erase(it);
    m_cuda.memHostUnregister(p);
}

void CudaExecutor::returnLane(Lane* lane) {
    std::lock_guard lock(m_lanesMutex);
    m_freeLanes.push_back(lane);
}

namespace {
/// A command queue's lane (its stream), kept in the queue's device state: whichever thread
/// runs the queue's commands (its worker, or the application's thread for an idle queue) queues
/// them on the same stream, in order. Given back when the queue goes.
struct QueueLane final : QueueDeviceState {
    QueueLane(CudaExecutor& executor, CudaExecutor::Lane* lane) : executor(executor), lane(lane) {}
    ~QueueLane() override { executor.returnLane(lane); }
    CudaExecutor& executor;
    CudaExecutor::Lane* lane;
};
} // namespace

CudaExecutor::Lane* CudaExecutor::newLane(Outcome& why) {
    {
        std::lock_guard lock(m_lanesMutex);
        if (!m_freeLanes.empty()) {
            Lane* lane = m_freeLanes.back();
            m_freeLanes.pop_back();
            return lane;
        }
    }
    auto fresh = std::make_unique<Lane>();
    if (cu::Result r = m_cuda.streamCreate(&fresh->stream, cu::kStreamNonBlocking);
        r != cu::kSuccess) {
        why = {CL_OUT_OF_RESOURCES, cudaError("cuStreamCreate", r)};
        return nullptr;
    }
    Lane* lane = fresh.get();
    std::lock_guard lock(m_lanesMutex);
    m_lanes.push_back(std::move(fresh));
    return lane;
}

CudaExecutor::Lane* CudaExecutor::submitLane(Outcome& why) {
    Lane* lane = nullptr;
    if (std::unique_ptr<QueueDeviceState>* slot = runningQueueState()) {
        // Inside a command: its queue's lane. A queue has one device, so the state is ours.
        if (!*slot) {
            if (Lane* fresh = newLane(why))
                *slot = std::make_unique<QueueLane>(*this, fresh);
            else
                return nullptr;
        }
        lane = static_cast<QueueLane&>(**slot).lane;
    } else {
        // Outside commands (the GL thread's copies, say): the calling thread's lane.
        for (auto& [executor, l] : tLanes.lanes)
            if (executor == this)
                lane = l;
        if (!lane) {
            if (!(lane = newLane(why)))
                return nullptr;
            tLanes.lanes.emplace_back(this, lane);
        }
    }
    why = followBarrier(*lane);
    return why.why.empty() ? lane : nullptr;
}

Outcome CudaExecutor::followBarrier(Lane& lane) {
    // GPU-side: the stream waits for the shared stream's work up to the last barrier.
    if (lane.barrierSeen < m_barrierCount) {
        if (cu::Result r = m_cuda.streamWaitEvent(lane.stream, m_barrier, 0); r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES, cudaError("cuStreamWaitEvent", r)};
        lane.barrierSeen = m_barrierCount;
    }
    return {};
}

Outcome CudaExecutor::raiseBarrier() {
    if (!m_barrier)
        if (cu::Result r = m_cuda.eventCreate(&m_barrier, cu::kEventDisableTiming);
            r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES, cudaError("cuEventCreate", r)};
    if (cu::Result r = m_cuda.eventRecord(m_barrier, m_stream); r != cu::kSuccess)
        return {CL_OUT_OF_RESOURCES, cudaError("cuEventRecord", r)};
    ++m_barrierCount;
    return {};
}

void CudaExecutor::sequence(Lane& lane, Submitted& out) {
    out.lane = &lane;
    out.seq = lane.seq.fetch_add(1, std::memory_order_acq_rel) + 1;
}

Outcome CudaExecutor::function(const std::shared_ptr<DeviceExecutable>& exe, const void* entry,
                               Function*& out, bool textured) {
    // This device's executables are all NvidiaExecutable (its toolchain makes them); the code
    // generator is built without RTTI, so no dynamic_cast.
    const auto* nv = static_cast<const NvidiaExecutable*>(exe.get());
    if (!nv || !entry)
        return {CL_INVALID_PROGRAM_EXECUTABLE, "the kernel has no NVIDIA executable"};
    std::lock_guard lock(m_modulesMutex);
    LoadedModule& m = m_modules[exe.get()];
    if (m.module && m.owner.expired()) { // an executable freed and another at its address
        m_cuda.moduleUnload(m.module);
        m = LoadedModule{};
    }
    if (!m.module) {
        char info[8192] = {}, error[8192] = {};
        cu::JitOption options[] = {cu::kJitInfoLogBuffer, cu::kJitInfoLogBufferSizeBytes,
                                   cu::kJitErrorLogBuffer, cu::kJitErrorLogBufferSizeBytes};
        void* values[] = {info, reinterpret_cast<void*>(uintptr_t(sizeof info - 1)), error,
                          reinterpret_cast<void*>(uintptr_t(sizeof error - 1))};
        cu::Result r = m_cuda.moduleLoadDataEx(&m.module, nv->ptx().c_str(), 4, options, values);
        if (r != cu::kSuccess) {
            m_modules.erase(exe.get());
            std::string why = "the CUDA driver could not load the program's PTX (" +
                              nv->module().target + "): " + cudaError("cuModuleLoadDataEx", r);
            if (error[0])
                why += "\nJIT log:\n" + std::string(error);
            return {CL_OUT_OF_RESOURCES, why};
        }
        m.owner = exe;
        if (info[0])
            nvidia::logNvidia("NVIDIA: JIT: " + std::string(info));
    }
    auto [it, fresh] = m.functions.try_emplace(std::pair(entry, textured));
    Function& fn = it->second;
    if (fresh) {
        const auto* ke = static_cast<const nvidia::KernelEntry*>(entry);
        const std::string& name = textured ? ke->texturedName : ke->name;
        if (cu::Result r = m_cuda.moduleGetFunction(&fn.handle, m.module, name.c_str());
            r != cu::kSuccess) {
            m.functions.erase(it);
            return {CL_INVALID_KERNEL, cudaError("cuModuleGetFunction", r) + " for " + name};
        }
        // What ptxas made of the kernel for this GPU: register pressure can lower the block
        // size below the device's 1024; spills and private arrays are local memory.
        auto attribute = [&](cu::FunctionAttribute a, int fallback) {
            int v = 0;
            return m_cuda.funcGetAttribute(&v, a, fn.handle) == cu::kSuccess && v >= 0 ? v
                                                                                       : fallback;
        };
        fn.info.maxThreads = size_t(attribute(cu::kFuncMaxThreadsPerBlock, 0));
        fn.info.staticShared = uint64_t(attribute(cu::kFuncSharedSizeBytes, 0));
        fn.info.localBytes = uint64_t(attribute(cu::kFuncLocalSizeBytes, 0));
        const uint64_t defaultDynamic =
            kDefaultDynamicShared - std::min<uint64_t>(fn.info.staticShared, kDefaultDynamicShared);
        fn.dynamicSharedLimit =
            uint64_t(attribute(cu::kFuncMaxDynamicSharedSizeBytes, int(defaultDynamic)));
    }
    out = &fn;
    return {};
}

bool CudaExecutor::describe(const std::shared_ptr<DeviceExecutable>& exe, const void* entry,
                            FunctionInfo& out, std::string* why) {
    Outcome o = ready();
    Function* fn = nullptr;
    if (o.why.empty())
        o = function(exe, entry, fn);
    if (!o.why.empty()) {
        if (why)
            *why = o.why;
        return false;
    }
    out = fn->info;
    return true;
}

Outcome CudaExecutor::submit(const KernelLaunch& launch, bool timed, Submitted& out) {
    if (Outcome o = ready(); !o.why.empty())
        return o;
    const auto* entry = static_cast<const nvidia::KernelEntry*>(launch.entry);
    if (!entry)
        return {CL_INVALID_PROGRAM_EXECUTABLE, "the kernel has no NVIDIA entry"};
    const std::shared_ptr<DeviceExecutable>& exe = launch.kernel->executable(launch.executable);
    Function* fn = nullptr;
    if (Outcome o = function(exe, launch.entry, fn); !o.why.empty())
        return o;
    // Its texture-only variant, for launches whose images all go through textures: without
    // it (a driver that will not load it) the kernel runs as it is.
    Function* textured = nullptr;
    if (!entry->texturedName.empty() && m_textureLimits.alignment &&
        !function(exe, launch.entry, textured, true).why.empty())
        textured = nullptr;
    // A kernel that prints has the GPU's one printf buffer from its reset (queued here, before
    // its grids) until finish() has read the records back; other launches do not wait for it.
    if (entry->usesPrintf) {
        out.printfLease = std::unique_lock(m_printfMutex);
        out.printfFormats = exe;
    }
    std::lock_guard lock(m_mutex);
    Outcome why;
    Lane* lane = submitLane(why);
    if (!lane)
        return why;
    uint64_t printfBuffer = 0;
    if (out.prints()) {
        if (Outcome o = resetPrintfBuffer(*lane); !o.why.empty())
            return o;
        printfBuffer = m_printfBuffer;
    }
    return launchGrids(launch, *entry, *fn, textured, *lane, printfBuffer, timed, out);
}

Outcome CudaExecutor::resetPrintfBuffer(Lane& lane) {
    if (!m_printfBuffer) {
        // Device memory, not managed: the host touches it only through copies, so its pages
        // never move (and no host access can overlap another queue's kernel).
        cu::DevicePtr p = 0;
        if (cu::Result r = m_cuda.memAlloc(&p, kPrintfHeaderBytes + m_printfCapacity);
            r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES, cudaError("cuMemAlloc", r) + " for the " +
                                             std::to_string(m_printfCapacity) +
                                             "-byte printf buffer (CL_DEVICE_PRINTF_BUFFER_SIZE)"};
        unsigned char header[kPrintfHeaderBytes];
        initPrintfBuffer(header, m_printfCapacity); // the capacity is never written again
        if (cu::Result r = m_cuda.memcpyHtoD(p, header, sizeof header); r != cu::kSuccess) {
            m_cuda.memFree(p);
            return {CL_OUT_OF_RESOURCES, cudaError("cuMemcpyHtoD", r) + " (printf buffer)"};
        }
        m_printfBuffer = p;
        m_printfDirty = m_printfCapacity; // cuMemAlloc does not zero
    }
    // Ordered before the kernel on the stream: the data the last launch wrote zeroed (the
    // decoder stops at an id of 0), the offset 0.
    cu::Result r = cu::kSuccess;
    if (m_printfDirty)
        r = m_cuda.memsetD8Async(m_printfBuffer + kPrintfHeaderBytes, 0, size_t(m_printfDirty),
                                 lane.stream);
    if (r == cu::kSuccess)
        r = m_cuda.memsetD32Async(m_printfBuffer, 0, 2, lane.stream);
    if (r != cu::kSuccess)
        return {CL_OUT_OF_RESOURCES, cudaError("cuMemsetAsync", r) + " (printf buffer)"};
    m_printfDirty = m_printfCapacity; // until readPrintfBuffer knows how much the launch used
    return {};
}

Outcome CudaExecutor::readPrintfBuffer(const DeviceExecutable& exe, PrintfOutput& out) {
    if (Outcome o = ready(); !o.why.empty())
        return o;
    // The kernel has finished and nothing else writes the buffer while the lease is held:
    // synchronous copies (the null stream does not wait for the non-blocking stream's work).
    unsigned char header[kPrintfHeaderBytes];
    cu::Result r = m_cuda.memcpyDtoH(header, m_printfBuffer, sizeof header);
    uint64_t offset = 0;
    std::memcpy(&offset, header, 8);
    std::vector<unsigned char> records(size_t(std::min(offset, m_printfCapacity)));
    if (r == cu::kSuccess && !records.empty())
        r = m_cuda.memcpyDtoH(records.data(), m_printfBuffer + kPrintfHeaderBytes, records.size());
    if (r != cu::kSuccess)
        return {CL_OUT_OF_RESOURCES, cudaError("cuMemcpyDtoH", r) + " (reading printf output)"};
    m_printfDirty = records.size();
    const auto& nv = static_cast<const NvidiaExecutable&>(exe);
    out = decodePrintfRecords(records, offset, nv.module().printf);
    return {};
}

void CudaExecutor::destroyEvents(Submitted& launch) {
    for (cu::EventHandle* e : {&launch.start, &launch.end})
        if (*e) {
            m_cuda.eventDestroy(*e);
            *e = nullptr;
        }
}

void CudaExecutor::noteDone(Lane& lane, uint64_t seq) {
    uint64_t done = lane.doneSeq.load(std::memory_order_relaxed);
    while (done < seq && !lane.doneSeq.compare_exchange_weak(done, seq, std::memory_order_release,
                                                             std::memory_order_relaxed)) {
    }
}

Outcome CudaExecutor::finish(Submitted& launch, uint64_t& deviceNs, PrintfOutput* printed) {
    deviceNs = 0;
    // Not under m_mutex: other threads keep submitting while this one waits. The stream runs
    // in order, so a wait for the stream covers everything queued before it: a queue that
    // completes 256 launches makes one driver call, not 256.
    cu::Result r = cu::kSuccess;
    Lane* lane = launch.lane;
    if (launch.end) {
        r = m_cuda.eventSynchronize(launch.end);
        if (r == cu::kSuccess && lane)
            noteDone(*lane, launch.seq);
    } else if (lane && launch.seq > lane->doneSeq.load(std::memory_order_acquire)) {
        const uint64_t upTo = lane->seq.load(std::memory_order_acquire); // queued before the wait
        r = m_cuda.streamSynchronize(lane->stream);
        if (r == cu::kSuccess)
            noteDone(*lane, upTo);
    }
    if (r == cu::kSuccess && launch.start && launch.end) {
        float ms = 0;
        if (m_cuda.eventElapsedTime(&ms, launch.start, launch.end) == cu::kSuccess && ms > 0)
            deviceNs = uint64_t(double(ms) * 1e6);
    }
    const bool timed = launch.end != nullptr;
    destroyEvents(launch);
    Outcome printing;
    if (launch.prints()) {
        if (r == cu::kSuccess && printed && launch.printfFormats)
            printing = readPrintfBuffer(*launch.printfFormats, *printed);
        launch.printfFormats.reset();
        launch.printfLease.unlock();
    }
    if (r != cu::kSuccess)
        return {CL_OUT_OF_RESOURCES,
                cudaError(timed ? "cuEventSynchronize" : "cuStreamSynchronize", r) +
                    " (the GPU work failed)"};
    if (launch.guarded())
        if (Outcome o = readGuardRecord(launch); o.status != CL_SUCCESS)
            return o;
    return printing;
}

Outcome CudaExecutor::writeGuardRecord(const KernelLaunch& launch,
                                       const std::vector<uint64_t>& addresses, Lane& lane,
                                       Submitted& out) {
    const KernelDesc& desc = launch.kernel->desc();
    const size_t nargs = launch.args.size();
    // The header zeroed, then [low, high) per argument (ptx_module.hpp: GuardRecord).
    std::vector<uint64_t>& image = out.guardImage;
    image.assign(nvidia::guardRecordBytes(nargs) / 8, 0);
    uint64_t* bounds = image.data() + sizeof(nvidia::GuardRecord) / 8;
    for (size_t i = 0; i < nargs; ++i) {
        const ArgValue& a = launch.args[i];
        uint64_t size = 0;
        switch (desc.args[i].kind) {
        case KernelArgKind::GlobalBuffer:
        case KernelArgKind::ConstantBuffer:
            size = a.mem ? a.mem->size() : 0;
            break;
        case KernelArgKind::Image:
            size = a.mem ? sizeof(DeviceImageDesc) : 0;
            break;
        case KernelArgKind::LocalBuffer: // from the kernel's own pointer
            bounds[2 * i + 1] = a.localSize;
            continue;
        default:
            continue;
        }
        bounds[2 * i] = addresses[i];
        bounds[2 * i + 1] = addresses[i] + size;
    }
    const size_t bytes = image.size() * 8;
    cu::DevicePtr record = 0;
    {
        std::lock_guard lock(m_guardMutex);
        if (auto it = m_freeGuardRecords.find(bytes); it != m_freeGuardRecords.end()) {
            record = it->second;
            m_freeGuardRecords.erase(it);
        }
    }
    if (!record)
        if (cu::Result r = m_cuda.memAlloc(&record, bytes); r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES,
                    cudaError("cuMemAlloc", r) + " for the launch's guard record (" +
                        std::to_string(bytes) + " bytes; DUET_KERNEL_CHECKS/TIMEOUT)"};
    // From `image`, which lives as long as the launch: the copy may read it after this returns.
    if (cu::Result r = m_cuda.memcpyAsync(
            record, cu::DevicePtr(reinterpret_cast<uintptr_t>(image.data())), bytes, lane.stream);
        r != cu::kSuccess) {
        std::lock_guard lock(m_guardMutex);
        m_freeGuardRecords.emplace(bytes, record);
        return {CL_OUT_OF_RESOURCES, cudaError("cuMemcpyAsync", r) + " (the guard record)"};
    }
    const ExecutionGuards guards = launch.executable->guards();
    out.guardRecord = record;
    out.timeoutSeconds = guards.timeoutSeconds;
    out.submittedAt = std::chrono::steady_clock::now();
    out.kernel = desc.name;
    if (guards.boundsChecks)
        out.checked = std::make_shared<const KernelLaunch>(launch);
    return {};
}

Outcome CudaExecutor::readGuardRecord(Submitted& launch) {
    // The launch has finished (finish waited): a synchronous copy of the header.
    nvidia::GuardRecord record{};
    const cu::Result r = m_cuda.memcpyDtoH(&record, launch.guardRecord, sizeof record);
    {
        std::lock_guard lock(m_guardMutex);
        m_freeGuardRecords.emplace(launch.guardImage.size() * 8, launch.guardRecord);
    }
    launch.guardRecord = 0;
    launch.guardImage.clear();
    std::shared_ptr<const KernelLaunch> checked = std::move(launch.checked);
    if (r != cu::kSuccess)
        return {CL_OUT_OF_RESOURCES, cudaError("cuMemcpyDtoH", r) + " (the guard record)"};
    if ((record.stopped & nvidia::kStoppedByCheck) && record.faultTaken && checked) {
        // The first work-item whose access failed its check wrote the fault and exited; the
        // others ran on (each access of theirs checked too) or left at their next poll.
        // Worded as on every device.
        const auto* entry = static_cast<const nvidia::KernelEntry*>(checked->entry);
        const size_t nargs = checked->args.size();
        std::string names; // the arguments', then the variables' (empty: KernelDesc's)
        for (size_t i = 0; i < std::max(nargs, entry->checkNames.size()); ++i)
            names += (i < entry->checkNames.size() ? entry->checkNames[i] : "") + '\0';
        CheckFault f;
        f.id = record.faultId;
        f.kind = AccessKind(record.faultKind);
        f.address = record.faultAddress;
        f.low = record.faultLow;
        f.high = record.faultHigh;
        f.bytes = record.faultBytes;
        f.names = names.c_str();
        for (int d = 0; d < 3; ++d)
            f.globalId[d] = record.faultGlobalId[d];
        if (record.faultKind == nvidia::kFaultBarrierDivergence) {
            // Local ids packed z << 32 | y << 16 | x, the first work-item 0's (ptx_module.hpp).
            f.what = FaultKind::BarrierDivergence;
            for (int d = 0; d < 3; ++d) {
                f.groupId[d] = record.faultGlobalId[d];
                f.localId[0][d] = (record.faultLow >> (16 * d)) & 0xffff;
                f.localId[1][d] = (record.faultHigh >> (16 * d)) & 0xffff;
            }
            f.stop[0] = BarrierStop(record.faultAddress);
            f.stop[1] = BarrierStop(record.faultBytes);
            return {CL_OUT_OF_RESOURCES, describeFault(*checked, f)};
        }
        if (f.id != kCheckNullId && f.id >= std::max(nargs, entry->checkNames.size()))
            return {CL_OUT_OF_RESOURCES, "kernel '" + launch.kernel +
                                             "': a bounds check failed (DUET_KERNEL_CHECKS) "
                                             "with an unknown argument or variable " +
                                             std::to_string(f.id)};
        return {CL_OUT_OF_RESOURCES, describeFault(*checked, f)};
    }
    if (record.stopped & nvidia::kStoppedByCheck)
        return {CL_OUT_OF_RESOURCES, "kernel '" + launch.kernel +
                                         "': a bounds check failed (DUET_KERNEL_CHECKS) but left "
                                         "no record of the access"};
    if (record.stopped) {
        // A work-item past the deadline marked the record and exited; the others followed.
        const double ran =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - launch.submittedAt)
                .count();
        char text[200];
        std::snprintf(text, sizeof text,
                      "kernel '%s' ran longer than DUET_KERNEL_TIMEOUT=%g s and was stopped "
                      "after %.2f s",
                      launch.kernel.c_str(), launch.timeoutSeconds, ran);
        return {CL_OUT_OF_RESOURCES, text};
    }
    return {};
}

namespace {

/// Whether every read the texture-only variant of `entry` makes goes through a texture object:
/// each requirement's image has the class it asks for, a texture for its sampler, and is not
/// sRGB.
/// `images`: what each image argument's slot holds (null for other arguments).
bool texturesServe(const nvidia::KernelEntry& entry, const KernelLaunch& launch,
                   const std::vector<const DeviceImageDesc*>& images) {
    for (const nvidia::TextureRequirement& r : entry.textureRequirements) {
        if (r.image >= images.size() || !images[r.image])
            return false;
        const DeviceImageDesc& d = *images[r.image];
        uint32_t bits = r.samplerBits;
        if (r.samplerArg >= 0) {
            if (size_t(r.samplerArg) >= launch.args.size() ||
                launch.kernel->desc().args[size_t(r.samplerArg)].kind != KernelArgKind::Sampler)
                return false;
            bits = uint32_t(samplerArgWord(launch.args[size_t(r.samplerArg)]));
        }
        // The variant reads sRGB images as float textures (texture.h: __duet_textures_srgb).
        if (d.textureClass != r.textureClass || d.swizzle >= kSwizzleSrgba ||
            !d.textures[samplerKey(bits)])
            return false;
    }
    return true;
}

} // namespace

Outcome CudaExecutor::launchGrids(const KernelLaunch& launch, const nvidia::KernelEntry& entry,
                                  Function& fn, Function* textured, Lane& lane,
                                  uint64_t printfBuffer, bool timed, Submitted& out) {
    const KernelDesc& desc = launch.kernel->desc();
    const size_t nargs = launch.args.size();
    const bool guarded =
        static_cast<const NvidiaExecutable&>(*launch.executable).module().guarded();
    if (entry.params != nargs + 1 + (guarded ? 1 : 0) || desc.args.size() != nargs)
        return {CL_INVALID_KERNEL, "the PTX entry " + entry.name + " has " +
                                       std::to_string(entry.params) + " parameters for " +
                                       std::to_string(nargs) + " arguments"};
    std::vector<size_t> localBytes;
    for (uint32_t i : entry.localArgs)
        localBytes.push_back(i < nargs ? launch.args[i].localSize : 0);
    const size_t wd = launch.workDim;
    nvidia::LaunchPlan plan =
        nvidia::planLaunch(launch.workDim, std::span(launch.offset.data(), wd),
                           std::span(launch.global.data(), wd), std::span(launch.local.data(), wd),
                           {entry.localVariableBytes, localBytes}, printfBuffer, m_limits);
    if (!plan.error.empty())
        return {CL_INVALID_GLOBAL_WORK_SIZE, plan.error};
    size_t groupSize =
        launch.local[0] * (wd > 1 ? launch.local[1] : 1) * (wd > 2 ? launch.local[2] : 1);
    if (fn.info.maxThreads > 0 && groupSize > fn.info.maxThreads)
        return {CL_INVALID_WORK_GROUP_SIZE,
                "work-group of " + std::to_string(groupSize) + " work-items; " + entry.name +
                    " compiled for this GPU takes at most " + std::to_string(fn.info.maxThreads) +
                    " (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)"};
    // clEnqueueNDRangeKernel checked the same total (kernelResources); the arguments may have
    // changed since, so again, before the driver would refuse the launch.
    const uint64_t dynamic = plan.dynamicSharedBytes;
    if (std::string why = sharedMemoryExcess(entry, fn.info.staticShared, dynamic); !why.empty())
        return {CL_OUT_OF_RESOURCES, why};
    // kernelParams: each argument's bytes, then the launch block. An image is the address of
    // its descriptor, a sampler its CLK_* bits (core/image.hpp: the GPU devices' words).
    m_imageSlots.beginLaunch();
    std::vector<uint64_t> words(nargs, 0);
    std::vector<void*> params(nargs + 2, nullptr); // the arguments, launch block, guard record
    std::vector<const DeviceImageDesc*> images(textured ? nargs : 0, nullptr);
    size_t nextLocal = 0;
    for (size_t i = 0; i < nargs; ++i) {
        const ArgValue& a = launch.args[i];
        switch (desc.args[i].kind) {
        case KernelArgKind::Value:
            params[i] = const_cast<unsigned char*>(a.bytes.data());
            break;
        case KernelArgKind::GlobalBuffer:
        case KernelArgKind::ConstantBuffer:
            words[i] = a.mem ? uint64_t(reinterpret_cast<uintptr_t>(a.mem->data())) : 0;
            params[i] = &words[i];
            break;
        case KernelArgKind::LocalBuffer:
            words[i] = nextLocal < plan.localOffsets.size() ? plan.localOffsets[nextLocal++] : 0;
            params[i] = &words[i];
            break;
        case KernelArgKind::Image:
            if (a.mem) {
                const KernelImageDesc image = imageArgDesc(a);
                const bool readOnly =
                    desc.args[i].accessQualifier == CL_KERNEL_ARG_ACCESS_READ_ONLY;
                if (Outcome o =
                        placeImage(image, readOnly, words[i], textured ? &images[i] : nullptr);
                    !o.why.empty())
                    return o;
                // An array copy follows the image's bytes; a kernel that may write them makes
                // the copies stale for the launches after it.
                if (readOnly) {
                    if (Outcome o = refreshArray(image, lane); !o.why.empty())
                        return o;
                } else if (m_arrayCount.load(std::memory_order_relaxed)) {
                    markStale(image.data, image.data + a.mem->size());
                }
            }
            params[i] = &words[i];
            break;
        case KernelArgKind::Sampler:
            words[i] = samplerArgWord(a);
            params[i] = &words[i];
            break;
        }
    }
    // The texture-only variant where no read needs software (the same arguments, fewer
    // registers: texture_variants.cpp).
    Function& run = textured && texturesServe(entry, launch, images) ? *textured : fn;
    // Dynamic shared memory beyond what the function allows now (48 KiB less its static
    // shared memory, until raised): opt in, once per function and size.
    if (dynamic > run.dynamicSharedLimit) {
        if (cu::Result r = m_cuda.funcSetAttribute(run.handle, cu::kFuncMaxDynamicSharedSizeBytes,
                                                   int(dynamic));
            r != cu::kSuccess)
            return {
                CL_OUT_OF_RESOURCES,
                cudaError("cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
                              std::to_string(dynamic) + ")",
                          r)};
        run.dynamicSharedLimit = dynamic;
    }

    // Descriptors just written on the shared stream: the lane waits for them.
    if (Outcome o = followBarrier(lane); !o.why.empty())
        return o;
    // Guarded builds: the launch's record (its bounds, what stops it), its address the last
    // parameter.
    if (guarded) {
        if (Outcome o = writeGuardRecord(launch, words, lane, out); !o.why.empty())
            return o;
        params[nargs + 1] = &out.guardRecord;
    }
    // Profiling: CUDA events around the grids give the GPU's own time for the command (without
    // them when the driver will not make them: the host clock's time then).
    if (timed && (m_cuda.eventCreate(&out.start, 0) != cu::kSuccess ||
                  m_cuda.eventCreate(&out.end, 0) != cu::kSuccess ||
                  m_cuda.eventRecord(out.start, lane.stream) != cu::kSuccess))
        destroyEvents(out);
    for (const nvidia::Grid& g : plan.grids) {
        nvidia::LaunchBlock block = g.launch;
        params[nargs] = &block;
        cu::Result r = m_cuda.launchKernel(run.handle, g.blocks[0], g.blocks[1], g.blocks[2],
                                           g.threads[0], g.threads[1], g.threads[2],
                                           uint32_t(dynamic), lane.stream, params.data(), nullptr);
        if (r != cu::kSuccess) {
            // Grids already queued must finish before the caller drops the arguments.
            uint64_t ignored = 0;
            sequence(lane, out);
            finish(out, ignored);
            return {CL_OUT_OF_RESOURCES, cudaError("cuLaunchKernel", r)};
        }
    }
    if (out.end && m_cuda.eventRecord(out.end, lane.stream) != cu::kSuccess) {
        m_cuda.eventDestroy(out.end);
        out.end = nullptr;
    }
    sequence(lane, out);
    return {};
}

Outcome CudaExecutor::fillAsync(void* dst, size_t size, const void* pattern, size_t patternSize,
                                Submitted& out) {
    if (Outcome o = ready(); !o.why.empty())
        return o;
    if (!size)
        return {};
    const cu::DevicePtr d = cu::DevicePtr(reinterpret_cast<uintptr_t>(dst));
    std::lock_guard lock(m_mutex);
    Outcome why;
    Lane* lane = submitLane(why);
    if (!lane)
        return why;
    const cu::StreamHandle stream = lane->stream;
    cu::Result r = cu::kSuccess;
    if (patternSize == 1) {
        r = m_cuda.memsetD8Async(d, *static_cast<const unsigned char*>(pattern), size, stream);
    } else if (patternSize == 2) {
        uint16_t v = 0;
        std::memcpy(&v, pattern, 2);
        r = m_cuda.memsetD16Async(d, v, size / 2, stream);
    } else if (patternSize == 4) {
        uint32_t v = 0;
        std::memcpy(&v, pattern, 4);
        r = m_cuda.memsetD32Async(d, v, size / 4, stream);
    } else {
        // Longer patterns (up to 128 bytes): one staged run of them, copied as often as needed
        // and waited for each time, since the run is reused.
        std::vector<char> run(std::min<size_t>(size, size_t(1) << 20) / patternSize * patternSize);
        for (size_t at = 0; at < run.size(); at += patternSize)
            std::memcpy(run.data() + at, pattern, patternSize);
        for (size_t done = 0; done < size && r == cu::kSuccess; done += run.size()) {
            const size_t n = std::min(run.size(), size - done);
            r = m_cuda.memcpyAsync(d + done, cu::DevicePtr(reinterpret_cast<uintptr_t>(run.data())),
                                   n, stream);
            if (r == cu::kSuccess)
                r = m_cuda.streamSynchronize(stream);
        }
        if (r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES, cudaError("cuMemcpyAsync", r) + " (fill)"};
        return {};
    }
    if (r != cu::kSuccess)
        return {CL_OUT_OF_RESOURCES, cudaError("cuMemsetAsync", r)};
    sequence(*lane, out);
    return {};
}

Outcome CudaExecutor::placeImage(const KernelImageDesc& desc, bool sampled, uint64_t& address,
                                 const DeviceImageDesc** content) {
    constexpr size_t kChunk = ImageSlots::kSlotsPerChunk;
    // Only an image that textures can read gets a slot of its own for its reads.
    sampled = sampled && m_textureLimits.alignment && textureSource(desc, m_textureLimits);
    ImageSlots::Placement p = m_imageSlots.place(desc, sampled);
    if (p.grow) {
        cu::DevicePtr chunk = 0;
        if (cu::Result r = m_cuda.memAllocManaged(&chunk, kChunk * sizeof(DeviceImageDesc),
                                                  cu::kMemAttachGlobal);
            r != cu::kSuccess) {
            m_imageSlots.forget(p);
            return {CL_OUT_OF_RESOURCES,
                    cudaError("cuMemAllocManaged", r) + " (image descriptors)"};
        }
        m_imageChunks.push_back(reinterpret_cast<DeviceImageDesc*>(uintptr_t(chunk)));
    }
    DeviceImageDesc* slot = m_imageChunks[p.slot / kChunk] + p.slot % kChunk;
    if (p.write) {
        // On the shared stream, then a barrier: every lane's later launches (this one too) see
        // it, and no managed page moves to the host. The driver copies the source before
        // returning. A slot that held another descriptor may still be read by launches of any
        // lane: all of them finish first (rare: past kMaxSlots descriptors), and so may its
        // texture objects.
        cu::Result r = p.reused ? m_cuda.ctxSynchronize() : cu::kSuccess;
        if (p.reused && r == cu::kSuccess)
            for (uint64_t t : p.retired)
                if (t)
                    m_cuda.texObjectDestroy(t);
        if (r == cu::kSuccess && sampled)
            makeTextures(p.slot);
        if (r == cu::kSuccess)
            r = m_cuda.memcpyAsync(
                cu::DevicePtr(reinterpret_cast<uintptr_t>(slot)),
                cu::DevicePtr(reinterpret_cast<uintptr_t>(&m_imageSlots.content(p.slot))),
                sizeof(DeviceImageDesc), m_stream);
        if (r == cu::kSuccess) {
            if (Outcome o = raiseBarrier(); !o.why.empty()) {
                p.grow = false;
                forgetSlot(p);
                return o;
            }
        }
        if (r != cu::kSuccess) {
            p.grow = false; // the chunk exists now
            forgetSlot(p);
            return {CL_OUT_OF_RESOURCES, cudaError("cuMemcpyAsync", r) + " (image descriptor)"};
        }
    }
    address = uint64_t(reinterpret_cast<uintptr_t>(slot));
    if (content)
        *content = &m_imageSlots.content(p.slot);
    return {};
}

namespace {
/// The bytes an image's storage spans from its descriptor (texel (0,0,0) on).
size_t imageBytes(const KernelImageDesc& d) {
    const uint64_t layers =
        d.imageType == CL_MEM_OBJECT_IMAGE3D ? uint64_t(d.depth) : uint64_t(d.arraySize);
    return size_t(d.slicePitch * (layers ? layers : 1));
}
std::string arrayKey(const KernelImageDesc& d) {
    return std::string(reinterpret_cast<const char*>(&d), sizeof d);
}
/// "WxH", or "WxHxD" for 3D images and arrays (D: depth or layers), for DUET_LOG.
std::string extent(const KernelImageDesc& d) {
    const bool deep = d.imageType == CL_MEM_OBJECT_IMAGE3D ||
                      d.imageType == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
                      d.imageType == CL_MEM_OBJECT_IMAGE2D_ARRAY;
    return std::to_string(d.width) + "x" + std::to_string(d.height) +
           (deep
                ? "x" + std::to_string(d.imageType == CL_MEM_OBJECT_IMAGE3D ? d.depth : d.arraySize)
                : std::string());
}
} // namespace

void CudaExecutor::makeTextures(size_t slot) {
    const DeviceImageDesc& d = m_imageSlots.content(slot);
    if (!m_textureLimits.alignment)
        return;
    std::string why;
    std::optional<TextureSource> source = textureSource(d.image, m_textureLimits, &why);
    if (!source) {
        nvidia::logNvidia("image " + extent(d.image) + " read in software: " + why);
        return;
    }
    if (source->array) {
        source->resource.res.array.hArray = imageArray(d.image, *source->array);
        if (!source->resource.res.array.hArray)
            return;
    }
    uint64_t handles[kSamplerKeys] = {};
    for (unsigned key = 0; key < kSamplerKeys; ++key) {
        cu::TextureDesc t{};
        if (!textureDesc(*source, key, t))
            continue;
        cu::TexObject object = 0;
        if (cu::Result r = m_cuda.texObjectCreate(&object, &source->resource, &t, nullptr);
            r != cu::kSuccess) {
            // That sampler reads in software; say so once per image.
            if (why.empty()) {
                why = cudaError("cuTexObjectCreate", r);
                nvidia::logNvidia("image " + extent(d.image) + ", sampler key " +
                                  std::to_string(key) + " read in software: " + why);
            }
            continue;
        }
        handles[key] = object;
    }
    m_imageSlots.setTextures(slot, source->cls, source->swizzle, handles);
}

cu::Array CudaExecutor::imageArray(const KernelImageDesc& desc, const ArrayCopy& copy) {
    const std::string key = arrayKey(desc);
    if (auto it = m_arrays.find(key); it != m_arrays.end())
        return it->second.array;
    ImageArray a;
    if (cu::Result r = m_cuda.array3DCreate(&a.array, &copy.array); r != cu::kSuccess) {
        nvidia::logNvidia("image " + extent(desc) +
                          " read in software: " + cudaError("cuArray3DCreate", r));
        return nullptr;
    }
    a.begin = desc.data;
    a.end = desc.data + imageBytes(desc);
    a.copy = copy.copy;
    a.copy.dstArray = a.array;
    a.desc = desc;
    m_arrays.emplace(key, a);
    m_arrayCount.fetch_add(1, std::memory_order_relaxed);
    return a.array;
}

Outcome CudaExecutor::refreshArray(const KernelImageDesc& desc, Lane& lane) {
    if (!m_arrayCount.load(std::memory_order_relaxed) ||
        (desc.imageType != CL_MEM_OBJECT_IMAGE3D && desc.imageType != CL_MEM_OBJECT_IMAGE1D_ARRAY &&
         desc.imageType != CL_MEM_OBJECT_IMAGE2D_ARRAY))
        return {};
    auto it = m_arrays.find(arrayKey(desc));
    if (it == m_arrays.end() || !it->second.stale)
        return {};
    // On the shared stream once the lane's work so far (a kernel that wrote the image, say) is
    // done; then a barrier, so that every lane's later launches read the new copy.
    if (!m_laneMark)
        if (cu::Result r = m_cuda.eventCreate(&m_laneMark, cu::kEventDisableTiming);
            r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES, cudaError("cuEventCreate", r)};
    cu::Result r = m_cuda.eventRecord(m_laneMark, lane.stream);
    if (r == cu::kSuccess)
        r = m_cuda.streamWaitEvent(m_stream, m_laneMark, 0);
    if (r == cu::kSuccess)
        r = m_cuda.memcpy3DAsync(&it->second.copy, m_stream);
    if (r != cu::kSuccess)
        return {CL_OUT_OF_RESOURCES, cudaError("cuMemcpy3DAsync", r) + " (image " + extent(desc) +
                                         " into its CUDA array)"};
    it->second.stale = false;
    return raiseBarrier();
}

void CudaExecutor::noteWritten(const void* data, size_t bytes) {
    if (!m_arrayCount.load(std::memory_order_relaxed) || !data)
        return;
    std::lock_guard lock(m_mutex);
    const char* begin = static_cast<const char*>(data);
    markStale(begin, begin + (bytes ? bytes : 1));
}

void CudaExecutor::markStale(const char* begin, const char* end) {
    for (auto& [key, a] : m_arrays)
        if (a.begin < end && begin < a.end)
            a.stale = true;
}

void CudaExecutor::dropArrays(const char* p) {
    if (!m_arrayCount.load(std::memory_order_relaxed))
        return;
    std::lock_guard lock(m_mutex);
    bool synced = false;
    for (auto it = m_arrays.begin(); it != m_arrays.end();) {
        if (!(it->second.begin <= p && p < it->second.end)) {
            ++it;
            continue;
        }
        // Launches that read the array are done when the storage is freed; the wait covers a
        // queue that has not yet noticed.
        if (!synced)
            synced = m_cuda.ctxSynchronize() == cu::kSuccess;
        for (uint64_t t : m_imageSlots.drop(it->second.desc, true))
            m_cuda.texObjectDestroy(t);
        m_cuda.arrayDestroy(it->second.array);
        it = m_arrays.erase(it);
        m_arrayCount.fetch_sub(1, std::memory_order_relaxed);
    }
}

void CudaExecutor::forgetSlot(const ImageSlots::Placement& p) {
    for (uint64_t t : m_imageSlots.content(p.slot).textures)
        if (t)
            m_cuda.texObjectDestroy(t);
    m_imageSlots.forget(p);
}

Outcome CudaExecutor::copyAsync(void* dst, const void* src, size_t size, Submitted& out) {
    if (Outcome o = ready(); !o.why.empty())
        return o;
    if (!size || dst == src)
        return {};
    std::lock_guard lock(m_mutex);
    Outcome why;
    Lane* lane = submitLane(why);
    if (!lane)
        return why;
    if (cu::Result r =
            m_cuda.memcpyAsync(cu::DevicePtr(reinterpret_cast<uintptr_t>(dst)),
                               cu::DevicePtr(reinterpret_cast<uintptr_t>(src)), size, lane->stream);
        r != cu::kSuccess)
        return {CL_OUT_OF_RESOURCES, cudaError("cuMemcpyAsync", r)};
    sequence(*lane, out);
    return {};
}

Outcome CudaExecutor::copy(void* dst, const void* src, size_t size) {
    Submitted work;
    if (Outcome o = copyAsync(dst, src, size, work); !o.why.empty() || o.status)
        return o;
    uint64_t ignored = 0;
    return finish(work, ignored);
}

Outcome CudaExecutor::onStream(const std::function<Outcome(cu::StreamHandle)>& work) {
    if (Outcome o = ready(); !o.why.empty())
        return o;
    std::lock_guard lock(m_mutex);
    Outcome o = work(m_stream);
    if (o.status == CL_SUCCESS && o.why.empty())
        o = raiseBarrier();
    return o;
}

} // namespace duet::rt::nvidia_device
