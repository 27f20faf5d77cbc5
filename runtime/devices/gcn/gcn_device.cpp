// The GCN device: discovery through libdrm's amdgpu interface, GCN device info, and kernel
// launches (built as PM4 by dispatch.cpp) fed either to the software model through the PM4
// decoder or, on a real gfx9 GPU, to the amdgpu kernel driver (amdgpu_queue.cpp; untested on
// hardware, enabled only with DUET_AMDGPU_SUBMIT=1).
#include "core/context.hpp"
#include "core/device.hpp"
#include "core/device_enqueue.hpp"
#include "core/image.hpp"
#include "core/kernel.hpp"
#include "core/printf_buffer.hpp"
#include "core/queue.hpp"
#include "devices/gcn/amdgpu_queue.hpp"
#include "devices/gcn/amdgpu_target.hpp"
#include "devices/gcn/code_object.hpp"
#include "devices/gcn/device_enqueue_ring.hpp"
#include "devices/gcn/codegen/gcn_toolchain.hpp"
#include "devices/gcn/dispatch.hpp"
#include "devices/gcn/launch_guards.hpp"
#include "devices/gcn/model/model.hpp"
#include "devices/gcn/pm4.hpp"
#include "duet/version.hpp"

#include <amdgpu.h>
#include <amdgpu_drm.h>
#include <fcntl.h>
#include <unistd.h>
#include <xf86drm.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

namespace duet::rt {
namespace gcn_device {
namespace {

namespace pm4 = gcn::pm4;
using gcn::KernelEntry;

constexpr unsigned kMaxWorkGroupSize = 256; // LLVM's default flat work-group size for OpenCL
constexpr unsigned kLdsPerCu = 64 * 1024;
constexpr unsigned kModelClockMHz = 1500; // the modelled chip's nominal clock (Vega 10)
/// OpenCL C 3.0 features about the program's memory the GCN device supports: generic pointers
/// (FLAT), program-scope __global variables (data segments of the code object), work-group
/// collective functions and pipes (builtins/cpu/pipe.cl built for amdgcn).
constexpr const char* kGcnProgramFeatures =
    "__opencl_c_generic_address_space __opencl_c_program_scope_global_variables "
    "__opencl_c_work_group_collective_functions __opencl_c_pipes __opencl_c_subgroups";
/// The sub-group extensions of builtins/gcn/sub_group_ext.cl (a sub-group is the wave).
constexpr const char* kGcnSubGroupExtensions =
    "cl_khr_subgroup_ballot cl_khr_subgroup_non_uniform_vote "
    "cl_khr_subgroup_non_uniform_arithmetic cl_khr_subgroup_shuffle "
    "cl_khr_subgroup_shuffle_relative cl_khr_subgroup_clustered_reduce "
    "cl_khr_subgroup_extended_types cl_khr_subgroup_rotate";
/// Images are descriptors and texels in plain memory (builtins/cpu/image.cl built for amdgcn).
constexpr const char* kGcnImageFeatures =
    "__opencl_c_images __opencl_c_read_write_images __opencl_c_3d_image_writes";
/// C11 atomics at every order up to device scope: LLVM's AMDGPU memory model for gfx9
/// (agent-scope acquire/release/seq_cst sequences: s_waitcnt vmcnt(0), glc loads,
/// buffer_wbinvl1_vol), which the model executes with host fences and host atomics (model/
/// README) and real gfx9 guarantees with its L2 as the agent's point of coherence.
constexpr const char* kGcnAtomicFeatures = "__opencl_c_atomic_order_acq_rel "
                                           "__opencl_c_atomic_order_seq_cst "
                                           "__opencl_c_atomic_scope_device";
/// All-devices scope (memory_scope_all_svm_devices): only where the GPU shares coherent memory
/// with the host, the software model (README: what hardware would need).
constexpr const char* kGcnAllDevicesFeature = "__opencl_c_atomic_scope_all_devices";
/// Device-side enqueue (builtins/gcn/device_enqueue.cl writes records into a ring the backend
/// drains after each dispatch: device_enqueue_ring.*): on the software model only, the one
/// place it has run (README: what hardware would need).
constexpr const char* kGcnDeviceEnqueueFeature = "__opencl_c_device_enqueue";
constexpr cl_device_atomic_capabilities kGcnDeviceScopeAtomics =
    CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
    CL_DEVICE_ATOMIC_ORDER_SEQ_CST | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM |
    CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP | CL_DEVICE_ATOMIC_SCOPE_DEVICE;

/// How long a hardware dispatch may run before the queue gives up on it.
uint64_t hardwareTimeoutNs() {
    static const uint64_t ns = [] {
        uint64_t ms = 60000;
        if (const char* v = std::getenv("DUET_AMDGPU_TIMEOUT_MS"); v && *v) {
            char* end = nullptr;
            const unsigned long long parsed = std::strtoull(v, &end, 10);
            if (end && !*end && parsed > 0)
                ms = parsed;
            else
                std::fprintf(stderr,
                             "duet: DUET_AMDGPU_TIMEOUT_MS=%s is not a positive number "
                             "of milliseconds; using 60000\n",
                             v);
        }
        return ms * 1000000ull;
    }();
    return ns;
}

bool statsEnabled() {
    static const bool on = [] {
        const char* v = std::getenv("DUET_GCN_STATS");
        return v && *v && std::string(v) != "0";
    }();
    return on;
}

class GcnBackend final : public DeviceBackend {
public:
    /// With `queue`, dispatches go to that real GPU; without, to the software model.
    GcnBackend(TargetSpec target, unsigned computeUnits, std::string cannotRunReason,
               std::unique_ptr<gcn::AmdgpuQueue> queue = nullptr)
        : m_processor(target.cpuName), m_toolchain(makeGcnToolchain(std::move(target))),
          m_computeUnits(computeUnits), m_cannotRun(std::move(cannotRunReason)),
          m_hw(std::move(queue)), m_dispatch(computeUnits, m_hw != nullptr) {
#ifdef DUET_HAVE_GCN_MODEL
        if (m_cannotRun.empty() && !m_hw) {
            gcn::ModelConfig config;
            config.computeUnits = computeUnits;
            config.hostThreads = usableHostCores();
            m_model = std::make_unique<gcn::Model>(config);
        }
#endif
    }

    const Toolchain& toolchain() const override { return *m_toolchain; }
    std::string cannotRun() const override { return m_cannotRun; }
    cl_int runNDRange(const KernelLaunch& launch) override;
    void pickLocalSize(const Device& device, const Kernel& kernel, cl_uint dims,
                       const size_t* global, size_t* local) const override;

private:
    cl_int fail(const KernelLaunch& launch, cl_int code, const std::string& why) const {
        std::fprintf(stderr, "duet: GCN: kernel %s: %s\n", launch.kernel->name().c_str(),
                     why.c_str());
        return code;
    }
    /// Prints what the dispatch's printf calls recorded; reports overflow and bad records.
    void drainPrintf(const KernelLaunch& launch, const gcn::CodeObject& code);
    /// Runs a PM4 stream on the software model: the sink that decodes it. A dispatch stopped
    /// by `guards` (may be null) says how in `stopped` (timedOut, fault).
    std::string runOnModel(std::span<const uint32_t> stream, gcn::DispatchStats& stats,
                           const gcn::DispatchGuards* guards, gcn::DispatchResult& stopped);
    /// A launch stopped by its guards: the message to stderr and the context's callback,
    /// without our lock (the callback may enqueue on this device).
    static cl_int stoppedLaunch(const KernelLaunch& launch, std::unique_lock<std::mutex>& lock,
                                const std::string& why);
    /// One dispatch, under m_mutex: built, run, printf drained, what it enqueued collected.
    /// A dispatch stopped by its guards returns CL_OUT_OF_RESOURCES with the message in
    /// `stopped`; `modelled` accumulates the modelled GPU time.
    cl_int dispatchLocked(const KernelLaunch& launch, std::string& stopped, double& modelled);
    /// Starts device-side enqueue's session and ring for a host launch whose kernel may enqueue
    /// and has an on-device queue of this device (the context's default one, or a queue_t
    /// argument); false otherwise.
    bool beginDeviceEnqueue(const KernelLaunch& launch);
    /// Hardware sink: makes every host range the launch refers to GPU-visible (userptr BOs at
    /// GPU VA == host VA, so the addresses already written need no translation), then submits
    /// the same PM4 dwords and waits for the kernel's fence.
    std::string runOnHardware(std::span<const uint32_t> stream);
    /// DUET_GCN_STATS: one line per dispatch on stderr (the model's counters, or the time on
    /// hardware).
    void reportStats(const KernelLaunch& launch, const gcn::DispatchStats& stats, double modelled,
                     double seconds) const;

    std::string m_processor; ///< "gfx900"
    std::unique_ptr<Toolchain> m_toolchain;
    unsigned m_computeUnits;
    std::string m_cannotRun;
    std::unique_ptr<gcn::AmdgpuQueue> m_hw; ///< the real GPU's queue; null on the model
#ifdef DUET_HAVE_GCN_MODEL
    std::unique_ptr<gcn::Model> m_model;
#endif
    std::mutex m_mutex;         ///< one launch at a time owns the dispatch builder
    DispatchBuilder m_dispatch; ///< the host memory of the launch in flight
    /// Device-side enqueue of the host launch in flight (under m_mutex): the session its
    /// children queue into and the ring the kernels write them to.
    DeviceEnqueueSession m_enqueue;
    DeviceEnqueueRing m_ring;
    /// The host launch's host ranges (checked dispatches): its children may reach them too.
    std::vector<std::pair<const void*, uint64_t>> m_launchRanges;
};

std::string GcnBackend::runOnModel(std::span<const uint32_t> stream, gcn::DispatchStats& stats,
                                   const gcn::DispatchGuards* guards,
                                   gcn::DispatchResult& stopped) {
    pm4::DecodeResult decoded = pm4::decode(stream);
    if (!decoded)
        return decoded.error;
    for (const pm4::Command& c : decoded.commands) {
        switch (c.kind) {
        case pm4::Command::Kind::Dispatch: {
#ifdef DUET_HAVE_GCN_MODEL
            gcn::DispatchState state = c.dispatch;
            state.scratchBase = m_dispatch.scratchAddress(); // the queue's scratch
            gcn::DispatchResult r = m_model->dispatch(state, &stats, guards);
            if (!r) {
                stopped.timedOut = r.timedOut;
                stopped.fault = std::move(r.fault);
                stopped.divergence = r.divergence;
                return r.error;
            }
#else
            (void)stats;
            (void)guards;
            (void)stopped;
            return "the software GCN model is not part of this build";
#endif
            break;
        }
        case pm4::Command::Kind::Fence: {
            // Every earlier dispatch has finished (the model blocks): the end-of-pipe write.
            uint64_t value = c.fence.value;
            if (c.fence.dataSel == pm4::kDataSelGpuClock)
                value = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
            if (c.fence.dataSel == pm4::kDataSel32)
                std::memcpy(reinterpret_cast<void*>(c.fence.address), &value, 4);
            else
                std::memcpy(reinterpret_cast<void*>(c.fence.address), &value, 8);
            break;
        }
        case pm4::Command::Kind::Acquire:
        case pm4::Command::Kind::Event:
            break; // host memory is coherent with the model: nothing to flush
        }
    }
    return {};
}

std::string GcnBackend::runOnHardware(std::span<const uint32_t> stream) {
    for (auto [p, bytes] : m_dispatch.hostRanges())
        if (std::string e = m_hw->useHostRange(p, bytes); !e.empty()) {
            m_hw->dropPending();
            return "making host memory GPU-visible: " + e;
        }
    return m_hw->submitAndWait(stream, hardwareTimeoutNs());
}

void GcnBackend::drainPrintf(const KernelLaunch& launch, const gcn::CodeObject& code) {
    // One write per dispatch, before the command is marked complete.
    const PrintfOutput out = m_dispatch.drainPrintf(code);
    writePrintfOutput(out);
    for (const std::string& problem : printfProblems(out, kPrintfBufferBytes))
        fail(launch, CL_SUCCESS, problem);
}

cl_int GcnBackend::stoppedLaunch(const KernelLaunch& launch, std::unique_lock<std::mutex>& lock,
                                 const std::string& why) {
    lock.unlock();
    std::fprintf(stderr, "duet: GCN: %s\n", why.c_str());
    launch.kernel->context()->notify(why);
    // Hardware reports a faulting or killed kernel as CL_OUT_OF_RESOURCES too (as the CPU
    // device does).
    return CL_OUT_OF_RESOURCES;
}

cl_int GcnBackend::runNDRange(const KernelLaunch& launch) {
    if (!m_cannotRun.empty())
        return fail(launch, CL_OUT_OF_RESOURCES, m_cannotRun);
    std::unique_lock lock(m_mutex);
    std::string stopped; // a launch stopped by its guards: the message, reported unlocked
    double modelled = 0;
    const bool enqueues = beginDeviceEnqueue(launch);
    cl_int status = dispatchLocked(launch, stopped, modelled);
    if (enqueues) {
        // Kernels the launch's work-items enqueued (and theirs) run after it, each through the
        // same path, before the launch's event completes: the spec's parent/child semantics.
        if (status == CL_SUCCESS)
            status = m_enqueue.drain([&](const KernelLaunch& child) {
                std::string childStopped;
                const cl_int st = dispatchLocked(child, childStopped, modelled);
                if (stopped.empty())
                    stopped = childStopped;
                return st;
            });
        else
            m_enqueue.drain(
                [](const KernelLaunch&) { return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST; });
        m_ring.end();
    }
    // Profiling on the model: the modelled GPU's time, not the host's (the same for every run),
    // children included.
    if (!m_hw && status == CL_SUCCESS)
        if (Event* ev = runningCommandEvent())
            ev->setDeviceDuration(std::max<cl_ulong>(1, cl_ulong(modelled * 1e9 + 0.5)));
    if (!stopped.empty())
        stoppedLaunch(launch, lock, stopped);
    return status;
}

bool GcnBackend::beginDeviceEnqueue(const KernelLaunch& launch) {
    // Only the model reports device-side enqueue (README: hardware is untested).
    if (m_hw || !DispatchBuilder::wantsDefaultQueue(launch))
        return false;
    m_enqueue.begin(launch);
    m_enqueue.resolve();
    const Device* device = m_enqueue.device();
    // The ring's room: the default on-device queue's CL_QUEUE_SIZE, or the largest of the
    // on-device queues passed as queue_t arguments (the launch's commands share one ring).
    size_t bytes = 0;
    if (Queue* q = m_enqueue.context() ? m_enqueue.context()->defaultDeviceQueue(device) : nullptr)
        bytes = q->deviceQueueSize();
    const KernelDesc& desc = launch.kernel->desc();
    for (size_t i = 0; i < desc.args.size() && i < launch.args.size(); ++i)
        if (desc.args[i].typeName == "queue_t")
            if (const Queue* q = onDeviceQueueArgument(launch.args[i]); q && q->device() == device)
                bytes = std::max<size_t>(bytes, q->deviceQueueSize());
    if (device && bytes && m_ring.begin(bytes, device->info().maxOnDeviceEvents))
        return true;
    // No on-device queue here: get_default_queue() is null, enqueue_kernel answers
    // CLK_INVALID_QUEUE. (Out of host memory for the ring reads the same.)
    m_enqueue.drain([](const KernelLaunch&) { return CL_INVALID_OPERATION; });
    return false;
}

cl_int GcnBackend::dispatchLocked(const KernelLaunch& launch, std::string& stopped,
                                  double& modelled) {
    // Guards (DUET_KERNEL_CHECKS, DUET_KERNEL_TIMEOUT) as the program was built: on the model
    // only (a real GPU has its fence timeout, DUET_AMDGPU_TIMEOUT_MS).
    ExecutionGuards guards = launch.executable ? launch.executable->guards() : ExecutionGuards{};
    if (m_hw && (guards.boundsChecks || guards.timeoutSeconds > 0)) {
        static std::once_flag said;
        std::call_once(said, [] {
            std::fprintf(stderr, "duet: GCN: DUET_KERNEL_CHECKS and DUET_KERNEL_TIMEOUT work on "
                                 "the software model only; kernels on the GPU run unguarded\n");
        });
        guards = {};
    }
    // The launch's ring, when it has one and the kernel may enqueue; a child (current() set)
    // may also reach what its host launch was given.
    DispatchBuilder::DefaultQueue queue;
    const bool ringed = m_ring.active() && DispatchBuilder::wantsDefaultQueue(launch);
    const bool child = m_ring.active() && m_enqueue.current();
    if (ringed) {
        queue.address = m_ring.arm(m_enqueue);
        queue.range = m_ring.range();
        queue.device = m_enqueue.device();
    }
    if (child)
        queue.inherited = &m_launchRanges;
    std::string why;
    if (cl_int err =
            m_dispatch.build(launch, why, guards.boundsChecks, ringed || child ? &queue : nullptr);
        err != CL_SUCCESS)
        return why.empty() ? err : fail(launch, err, why);
    if (m_ring.active() && !child && guards.boundsChecks)
        m_launchRanges = m_dispatch.hostRanges();
    const auto* entry = static_cast<const KernelEntry*>(launch.entry);

    gcn::DispatchStats stats;
    const auto t0 = std::chrono::steady_clock::now();
    gcn::DispatchGuards modelGuards;
    const bool guarded = guards.boundsChecks || guards.timeoutSeconds > 0;
    if (guarded)
        modelGuards =
            dispatchGuards(guards.timeoutSeconds, guards.boundsChecks, m_dispatch.hostRanges());
    gcn::DispatchResult stoppedBy;
    std::string sinkError =
        m_hw ? runOnHardware(m_dispatch.dwords())
             : runOnModel(m_dispatch.dwords(), stats, guarded ? &modelGuards : nullptr, stoppedBy);
    if (m_dispatch.usesPrintf())
        drainPrintf(launch, *entry->codeObject); // also what ran before a failure
    // Hardware reports a faulting or killed kernel as CL_OUT_OF_RESOURCES too (as the CPU
    // device does).
    if (stoppedBy.fault) {
        stopped = describeFault(launch, *stoppedBy.fault);
        return CL_OUT_OF_RESOURCES;
    }
    if (stoppedBy.divergence) {
        stopped = describeDivergence(launch, *stoppedBy.divergence);
        return CL_OUT_OF_RESOURCES;
    }
    if (stoppedBy.timedOut) {
        const double ran =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        stopped = describeTimeout(launch, guards.timeoutSeconds, ran);
        return CL_OUT_OF_RESOURCES;
    }
    if (!sinkError.empty())
        return fail(launch, CL_OUT_OF_RESOURCES, sinkError);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!m_dispatch.fenceWritten())
        return fail(launch, CL_OUT_OF_RESOURCES,
                    "the dispatch's end-of-pipe fence was not written");
    // What the dispatch enqueued becomes the session's: children of the command now running.
    if (ringed)
        m_ring.collect(m_enqueue, *launch.executable);
    const double dispatchModelled =
        m_hw ? 0.0 : stats.modelledSeconds(m_model->config().computeUnits, kModelClockMHz * 1e6);
    modelled += dispatchModelled;
    if (statsEnabled())
        reportStats(launch, stats, dispatchModelled, seconds);
    return CL_SUCCESS;
}

void GcnBackend::reportStats(const KernelLaunch& launch, const gcn::DispatchStats& stats,
                             double modelled, double seconds) const {
    if (m_hw) {
        std::fprintf(stderr,
                     "duet: GCN dispatch %s on %s hardware: global %zux%zux%zu local %zux%zux%zu: "
                     "%llu work-groups; %.3f ms from submission to fence\n",
                     launch.kernel->name().c_str(), m_processor.c_str(), launch.global[0],
                     launch.global[1], launch.global[2], launch.local[0], launch.local[1],
                     launch.local[2], (unsigned long long)m_dispatch.workGroups(), seconds * 1e3);
    } else {
        uint64_t total = 0;
        std::string classes;
        for (size_t i = 0; i < stats.wavefrontInstructions.size(); ++i) {
            total += stats.wavefrontInstructions[i];
            if (stats.wavefrontInstructions[i])
                classes += std::string(classes.empty() ? "" : ", ") +
                           gcn::instClassName(static_cast<gcn::InstClass>(i)) + " " +
                           std::to_string(stats.wavefrontInstructions[i]);
        }
        const double util =
            stats.valuInstructions
                ? 100.0 * double(stats.valuLaneOps) / (double(stats.valuInstructions) * kWaveSize)
                : 0.0;
        const double secs = stats.seconds > 0 ? stats.seconds : seconds;
        std::fprintf(stderr,
                     "duet: GCN dispatch %s: global %zux%zux%zu local %zux%zux%zu: %llu "
                     "work-groups, %llu wavefronts, %llu wave instructions (%s); VALU lane "
                     "utilisation %.1f%%; LDS bank-conflict cycles %llu; occupancy %u waves/SIMD "
                     "(limit: %s; %u VGPRs, %u SGPRs, %u bytes LDS); modelled GPU time %.1f us "
                     "(%llu bytes of vector memory); model %.3f ms, %.2f M wave-instructions/s\n",
                     launch.kernel->name().c_str(), launch.global[0], launch.global[1],
                     launch.global[2], launch.local[0], launch.local[1], launch.local[2],
                     (unsigned long long)stats.workGroups, (unsigned long long)stats.wavefronts,
                     (unsigned long long)total, classes.empty() ? "none counted" : classes.c_str(),
                     util, (unsigned long long)stats.ldsBankConflictCycles, stats.wavesPerSimd,
                     stats.occupancyLimit.empty() ? "?" : stats.occupancyLimit.c_str(), stats.vgprs,
                     stats.sgprs, stats.ldsBytesPerGroup, modelled * 1e6,
                     (unsigned long long)stats.vmemBytes, secs * 1e3,
                     secs > 0 ? double(total) / secs / 1e6 : 0.0);
    }
}

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

void GcnBackend::pickLocalSize(const Device& device, const Kernel& kernel, cl_uint dims,
                               const size_t* global, size_t* local) const {
    const KernelDesc& desc = kernel.desc();
    if (desc.reqdWorkGroupSize[0]) {
        for (cl_uint d = 0; d < dims; ++d)
            local[d] = desc.reqdWorkGroupSize[d];
        return;
    }
    // Whole wavefronts: 64 work-items, or 4 waves (256) in one dimension, dividing the global
    // size so that OpenCL 1.2 programs get uniform groups; 2D/3D take 64 along x where they
    // can (16x16 otherwise).
    size_t budget = std::min<size_t>(kMaxWorkGroupSize, kernel.workGroupLimit(device));
    for (cl_uint d = 0; d < dims; ++d) {
        size_t want = budget;
        if (d == 0 && dims > 1)
            want = std::min<size_t>(budget, global[0] % 64 == 0 ? 64 : 16);
        size_t l = bestDivisor(global[d], want, d == 0 ? kWaveSize : 1);
        local[d] = l;
        budget = std::max<size_t>(1, budget / l);
    }
}

// ---- Device info -----------------------------------------------------------------------

void fillCommonInfo(DeviceInfo& info, unsigned computeUnits) {
    info.type = CL_DEVICE_TYPE_GPU;
    info.vendor = "Duet";
    info.vendorId = 0x1002; // the chip family's PCI vendor: kernels tuned for AMD GCN apply
    info.driverVersion = DUET_VERSION;
    info.version = "OpenCL 3.0 Duet";
    info.numericVersion = CL_MAKE_VERSION(3, 0, 0);
    info.openclCVersion = "OpenCL C 1.2 Duet";
    info.maxComputeUnits = computeUnits;
    info.maxWorkItemDimensions = 3;
    info.maxWorkGroupSize = kMaxWorkGroupSize;
    info.maxWorkItemSizes[0] = info.maxWorkItemSizes[1] = info.maxWorkItemSizes[2] =
        kMaxWorkGroupSize;
    // GCN's preference: scalar code per work-item, packed bytes and shorts.
    const cl_uint widths[7] = {4, 2, 1, 1, 1, 1, 0};
    std::copy(widths, widths + 7, info.preferredVectorWidth);
    std::copy(widths, widths + 7, info.nativeVectorWidth);
    info.addressBits = 64;
    long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    // Buffers are host memory the model (or, later, the GPU through userptr) reads directly.
    info.globalMemSize = cl_ulong(pages) * cl_ulong(pageSize);
    info.maxMemAllocSize = std::max<cl_ulong>(info.globalMemSize / 4, 128ull << 20);
    info.globalMemCacheType = CL_READ_WRITE_CACHE;
    info.globalMemCacheSize = 4u << 20; // Vega 10's L2
    info.globalMemCachelineSize = 64;
    info.maxConstantBufferSize = info.maxMemAllocSize;
    info.maxConstantArgs = 8;
    info.localMemType = CL_LOCAL;
    info.localMemSize = kLdsPerGroup;
    info.memBaseAddrAlign = 1024;
    // Images are descriptors and texels in plain memory read by ordinary loads (the CPU
    // device's image library compiled for amdgcn), not T#/S# resources: the model has no MIMG.
    info.imageSupport = true;
    info.imagePitchAlignment = 1;
    info.imageBaseAddressAlignment = 1;
    info.singleFpConfig = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_FMA;
    info.doubleFpConfig = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST |
                          CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_FMA;
    info.halfFpConfig = 0;
    info.profilingTimerResolution = 1;
    info.executionCapabilities = CL_EXEC_KERNEL;
    info.printfBufferSize = kPrintfBufferBytes;
    info.preferredWorkGroupSizeMultiple = kWaveSize;
    info.nonUniformWorkGroup = true; // hidden_remainder_* and partial work-groups
    info.genericAddressSpace = true; // FLAT through the LDS/private apertures (finalize_gcn.cpp)
    // builtins/gcn/work_group.c: cross-lane permutes within a wave, LDS across the waves.
    info.workGroupCollectives = true;
    // Pipes: builtins/cpu/pipe.cl built for amdgcn, lock-free on agent-scope atomics (the
    // global atomics cl_khr_global_int32_base_atomics already relies on; on the model, host
    // atomics). Same limits as the CPU device's: nothing in the ring bounds them.
    info.pipeSupport = true;
    info.maxPipeArgs = 16;
    info.pipeMaxActiveReservations = 65536;
    info.pipeMaxPacketSize = 65536;
    // builtins/gcn/sub_group.c: a sub-group is the wave. OpenCL 3.0's __opencl_c_subgroups
    // feature here; cl_khr_subgroups, which requires independent forward progress between the
    // waves of a group, only on the model (below), which gives each wave a time slice (model/
    // README). Real gfx9 schedules a group's waves independently too, but the hardware path is
    // untested, so it claims nothing more (README).
    info.subGroupSize = kWaveSize;
    // SVM: none on hardware (userptr BOs get GPU addresses other than the host's; README), the
    // model sets its own below.
    info.svmCapabilities = 0;
    // Program-scope variables live in the loaded code object; the 3.0 minimum and default.
    info.globalVariableMaxSize = 64 * 1024;
    info.globalVariablePreferredTotalSize = 1 << 20;
    // Device scope at every order (kGcnAtomicFeatures); the model adds all-devices scope.
    info.atomicMemoryCapabilities = kGcnDeviceScopeAtomics;
    info.atomicFenceCapabilities = kGcnDeviceScopeAtomics;
    info.extensions = "cl_khr_byte_addressable_store cl_khr_fp64 "
                      "cl_khr_global_int32_base_atomics cl_khr_global_int32_extended_atomics "
                      "cl_khr_local_int32_base_atomics cl_khr_local_int32_extended_atomics "
                      "cl_khr_int64_base_atomics cl_khr_int64_extended_atomics "
                      "cl_khr_icd cl_khr_extended_versioning cl_amd_device_attribute_query "
                      "cl_khr_3d_image_writes cl_khr_depth_images cl_khr_image2d_from_buffer "
                      "cl_khr_srgb_image_writes " +
                      std::string(kGcnSubGroupExtensions);
    info.extensionsWithVersion = namesWithVersion(info.extensions);
    info.openclCAllVersions = {
        {CL_MAKE_VERSION(1, 0, 0), "OpenCL C"},
        {CL_MAKE_VERSION(1, 1, 0), "OpenCL C"},
        {CL_MAKE_VERSION(1, 2, 0), "OpenCL C"},
        {CL_MAKE_VERSION(3, 0, 0), "OpenCL C"},
    };
    info.openclCFeatures =
        namesWithVersion("__opencl_c_int64 __opencl_c_fp64 " + std::string(kGcnProgramFeatures) +
                             " " + kGcnImageFeatures + " " + kGcnAtomicFeatures,
                         CL_MAKE_VERSION(3, 0, 0));
    info.amdAttributes = true;
    info.simdPerComputeUnit = 4;
    info.simdWidth = 16;
    info.simdInstructionWidth = 1;
    info.wavefrontWidth = kWaveSize;
    info.localMemSizePerComputeUnit = kLdsPerCu;
    info.localMemBanks = 32;
    // Memory system of the gfx900 (Vega 10) part the model stands for. The model does not
    // simulate channel or bank conflicts; these are the figures kernels tune against.
    info.globalMemChannels = 16;
    info.globalMemChannelBanks = 16;
    info.globalMemChannelBankWidth = 256;
    info.preferredConstantBufferSize = 16 * 1024;
    info.asyncQueues = 1; // one PM4 stream is fed at a time (hardware: one compute ring)
}

/// The compiler's view of a GCN device; `model`: the software model, which reports
/// memory_scope_all_devices (kGcnAllDevicesFeature), cl_khr_subgroups, device-side enqueue
/// (kGcnDeviceEnqueueFeature) and so OpenCL C 2.0.
TargetSpec gcnTarget(const std::string& cpu, bool model) {
    TargetSpec t;
    t.cpuName = cpu;
    t.fp64 = true;
    t.images = true;
    // Checked dispatches (DUET_KERNEL_CHECKS) name the argument an access overran: the IR's
    // argument names reach the code object's metadata.
    t.keepValueNames = kernelChecksRequested();
    t.clExtensions = {"cl_khr_byte_addressable_store",
                      "cl_khr_global_int32_base_atomics",
                      "cl_khr_global_int32_extended_atomics",
                      "cl_khr_local_int32_base_atomics",
                      "cl_khr_local_int32_extended_atomics",
                      "cl_khr_int64_base_atomics",
                      "cl_khr_int64_extended_atomics",
                      "__opencl_c_int64",
                      "cl_khr_3d_image_writes",
                      "cl_khr_depth_images"};
    std::istringstream features{std::string(kGcnProgramFeatures) + " " + kGcnImageFeatures + " " +
                                kGcnSubGroupExtensions + " " + kGcnAtomicFeatures + " " +
                                (model ? kGcnAllDevicesFeature : "") + " " +
                                (model ? kGcnDeviceEnqueueFeature : "")};
    for (std::string f; features >> f;)
        t.clExtensions.push_back(f);
    // clang defines the macro (and accepts its pragma) from OpenCL C 2.0 on.
    if (model)
        t.clExtensions.push_back("cl_khr_subgroups");
    // Listed by the device (the GL ones by the model, which shares GL objects); their macros
    // come from the compiler's extension header (compiler/compile.cpp, kMacroOnlyExtensions).
    t.clExtensions.push_back("cl_khr_srgb_image_writes");
    if (model) {
        t.clExtensions.push_back("cl_khr_gl_depth_images");
        t.clStdVersions = {100, 110, 120, 200, 300};
    }
    return t;
}

std::string cannotRunWithoutModel() {
#ifdef DUET_HAVE_GCN_MODEL
    return {};
#else
    return "the software GCN model is not part of this build (devices/gcn/model), so the GCN "
           "device compiles kernels but cannot run them";
#endif
}

bool submitEnabled() {
    const char* v = std::getenv("DUET_AMDGPU_SUBMIT");
    return v && std::string(v) == "1";
}

/// Every AMD GPU the amdgpu kernel driver exposes, with its real properties. gfx9 chips get a
/// hardware queue when DUET_AMDGPU_SUBMIT=1; the others are listed, unavailable, with why.
std::vector<std::pair<std::unique_ptr<DeviceBackend>, DeviceInfo>> discoverAmdGpus() {
    std::vector<std::pair<std::unique_ptr<DeviceBackend>, DeviceInfo>> out;
    drmDevicePtr devices[16];
    int count = drmGetDevices2(0, devices, 16);
    if (count <= 0)
        return out;
    for (int i = 0; i < count; ++i) {
        drmDevicePtr dev = devices[i];
        if (dev->bustype != DRM_BUS_PCI || dev->deviceinfo.pci->vendor_id != 0x1002 ||
            !(dev->available_nodes & (1 << DRM_NODE_RENDER)))
            continue;
        const std::string node = dev->nodes[DRM_NODE_RENDER];
        int fd = open(node.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            std::fprintf(stderr, "duet: GCN: AMD GPU %s skipped: cannot open it: %s\n",
                         node.c_str(), std::strerror(errno));
            continue;
        }
        uint32_t major = 0, minor = 0;
        amdgpu_device_handle handle = nullptr;
        if (int r = amdgpu_device_initialize(fd, &major, &minor, &handle); r != 0) {
            std::fprintf(stderr,
                         "duet: GCN: AMD GPU %s skipped: amdgpu_device_initialize failed: %s\n",
                         node.c_str(), std::strerror(-r));
            close(fd);
            continue;
        }
        amdgpu_gpu_info gpu{};
        amdgpu_heap_info vram{}, gtt{};
        const int infoError = amdgpu_query_gpu_info(handle, &gpu);
        if (infoError)
            std::fprintf(stderr, "duet: GCN: AMD GPU %s: amdgpu_query_gpu_info failed: %s\n",
                         node.c_str(), std::strerror(-infoError));
        if (int r = amdgpu_query_heap_info(handle, AMDGPU_GEM_DOMAIN_VRAM, 0, &vram))
            std::fprintf(stderr, "duet: GCN: AMD GPU %s: VRAM heap query failed: %s\n",
                         node.c_str(), std::strerror(-r));
        if (int r = amdgpu_query_heap_info(handle, AMDGPU_GEM_DOMAIN_GTT, 0, &gtt))
            std::fprintf(stderr, "duet: GCN: AMD GPU %s: GTT heap query failed: %s\n", node.c_str(),
                         std::strerror(-r));
        const char* marketing = amdgpu_get_marketing_name(handle);
        const std::string name = marketing ? marketing : "AMD GPU";
        amdgpu_device_deinitialize(handle);
        close(fd);

        gcn::AmdgpuTargetChoice choice;
        if (infoError == 0)
            choice = gcn::chooseAmdgpuTarget(gpu.family_id, gpu.chip_external_rev, submitEnabled());
        else
            choice.reason = "amdgpu_query_gpu_info failed, so the chip is not known";

        DeviceInfo info;
        const unsigned cus = infoError == 0 && gpu.cu_active_number ? gpu.cu_active_number : 1;
        fillCommonInfo(info, cus);
        info.vendor = "Advanced Micro Devices, Inc.";
        info.name = name + (choice.target.empty() ? "" : " (" + choice.target + ")");
        info.boardName = name;
        if (infoError == 0) {
            info.maxClockFrequency = cl_uint(gpu.max_engine_clk / 1000);
            info.gfxipMajor = choice.gfxMajor;
            info.gfxipMinor = choice.gfxMinor;
        }
        // Buffers are host memory the GPU reads through userptr BOs (GTT), so GTT bounds what
        // kernels can reach at once; VRAM holds none of them.
        if (gtt.heap_size) {
            info.globalMemSize = gtt.heap_size;
            info.maxMemAllocSize = std::max<cl_ulong>(gtt.heap_size / 4, 128ull << 20);
        }
        const drmPciBusInfoPtr bus = dev->businfo.pci;
        info.topology.pcie.type = CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD;
        info.topology.pcie.bus = cl_char(bus->bus);
        info.topology.pcie.device = cl_char(bus->dev);
        info.topology.pcie.function = cl_char(bus->func);
        info.pcieId = dev->deviceinfo.pci->device_id;

        std::unique_ptr<gcn::AmdgpuQueue> queue;
        if (choice.available) {
            std::string error;
            queue = gcn::AmdgpuQueue::open(node, error);
            if (!queue) {
                choice.available = false;
                choice.reason = "cannot set up a compute queue: " + error;
                std::fprintf(stderr, "duet: GCN: AMD GPU %s: %s\n", node.c_str(),
                             choice.reason.c_str());
            }
        }
        info.available = choice.available;
        info.unavailableReason = choice.reason;
        const std::string cpu = choice.target.empty() ? "gfx900" : choice.target;
        out.emplace_back(std::make_unique<GcnBackend>(gcnTarget(cpu, false), cus, choice.reason,
                                                      std::move(queue)),
                         std::move(info));
    }
    drmFreeDevices(devices, count);
    return out;
}

} // namespace
} // namespace gcn_device

namespace {

/// GCN devices: one per AMD GPU libdrm finds, else one software-modelled gfx900.
std::vector<DiscoveredDevice> discoverGcn() {
    using namespace gcn_device;
    auto devices = discoverAmdGpus();
    // No usable AMD GPU (none found, or each unavailable: not gfx9, no DUET_AMDGPU_SUBMIT=1,
    // no queue), or DUET_GCN_MODEL=1: one modelled gfx900 besides what was found, so the GCN
    // device still runs kernels.
    const char* forceModel = std::getenv("DUET_GCN_MODEL");
    const bool anyAvailable = std::any_of(devices.begin(), devices.end(),
                                          [](const auto& d) { return d.second.available; });
    if (!anyAvailable || (forceModel && std::string(forceModel) == "1")) {
        unsigned cus = 64;
        if (const char* env = std::getenv("DUET_GCN_CUS"); env && *env) {
            long v = std::strtol(env, nullptr, 10);
            if (v >= 1 && v <= 1024)
                cus = unsigned(v);
            else
                std::fprintf(stderr,
                             "duet: DUET_GCN_CUS=%s is not a CU count (1..1024); "
                             "using 64\n",
                             env);
        }
        DeviceInfo info;
        fillCommonInfo(info, cus);
        info.name = "GCN gfx900 (software model)";
        info.boardName =
            "Duet software model of an AMD GCN 5 GPU (gfx900, " + std::to_string(cus) + " CUs)";
        info.maxClockFrequency = kModelClockMHz;
        info.gfxipMajor = 9;
        info.gfxipMinor = 0;
        // The model runs in the host's address space (global memory is host memory, global
        // atomics are host atomics, its fences host fences: model/README): an SVM buffer is
        // usable as is, coarse- or fine-grain, and kernels' atomics are atomic with the host's
        // and other devices' on the same memory: all-devices scope and SVM atomics. Not
        // fine-grain system (hardware maps only registered ranges; README).
        info.svmCapabilities = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER |
                               CL_DEVICE_SVM_ATOMICS;
        info.atomicMemoryCapabilities |= CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
        info.atomicFenceCapabilities |= CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
        info.openclCFeatures.push_back(
            namesWithVersion(kGcnAllDevicesFeature, CL_MAKE_VERSION(3, 0, 0)).front());
        // The model runs each wave of a group for a time slice, then the next (model/README,
        // "Execution"): a wave spinning on another's store does not starve it, which is the
        // independent forward progress cl_khr_subgroups requires.
        info.subGroupIndependentForwardProgress = true;
        info.extensions += " cl_khr_subgroups";
        // Device-side enqueue (device_enqueue_ring.*, builtins/gcn/device_enqueue.cl): children
        // are ring records the backend runs after their parent's fence, each as a dispatch of
        // its own. CL_QUEUE_SIZE bounds the records queued at once (112 bytes each plus wait
        // slots, __local sizes and the block literal).
        reportDeviceEnqueue(info);
        info.openclCFeatures.push_back(
            namesWithVersion(kGcnDeviceEnqueueFeature, CL_MAKE_VERSION(3, 0, 0)).front());
        // With it, everything OpenCL C 2.0 requires is there: generic address space, pipes,
        // program-scope variables, SVM, C11 atomics at all-devices scope, read-write images,
        // work-group collectives, device-side enqueue.
        info.openclCAllVersions.insert(info.openclCAllVersions.begin() + 3,
                                       {CL_MAKE_VERSION(2, 0, 0), "OpenCL C"});
        // topology stays type 0: the model has no PCI location
        // The model's device memory is host memory, so GL buffers are shared the way the CPU
        // device shares them (runtime/gl: GL's own mapping while acquired, or host copies),
        // and GL textures (depth and sRGB too) become images the kernels read as plain memory.
        info.extensions += " cl_khr_gl_sharing cl_khr_gl_event cl_khr_gl_depth_images";
        info.extensionsWithVersion = namesWithVersion(info.extensions);
        devices.emplace_back(
            std::make_unique<GcnBackend>(gcnTarget("gfx900", true), cus, cannotRunWithoutModel()),
            std::move(info));
    }
    return devices;
}

const DeviceKindRegistrar kRegisterGcn{DeviceKind{"gcn", 1, &discoverGcn}};

} // namespace

} // namespace duet::rt
