// The CPU device: host-CPU device info, LLVM JIT builds, work-groups on a thread pool.
#include "core/device.hpp"
#include "core/device_enqueue.hpp"
#include "core/environment.hpp"
#include "core/image.hpp"
#include "core/kernel.hpp"
#include "core/memory.hpp"
#include "core/svm.hpp"
#include "devices/cpu/device_enqueue.hpp"
#include "devices/cpu/jit/cpu_toolchain.hpp"
#include "devices/cpu/jit/host_cpu.hpp"
#include "devices/cpu/launch_guard.hpp"
#include "devices/cpu/thread_pool.hpp"
#include "devices/cpu/tiered_code.hpp"
#include "devices/cpu/work_group_abi.hpp"
#include "duet/version.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <pthread.h>
#include <unistd.h>

namespace duet::rt {

namespace cpu {
namespace {

constexpr size_t kLocalMemSize = 256 * 1024;

/// The lowest address of the calling thread's stack (cached per thread: for the main thread
/// glibc reads /proc/self/maps). Null when unknown, which makes to_private() answer NULL.
char* threadStackLow() {
    thread_local char* low = [] {
        pthread_attr_t attr;
        void* addr = nullptr;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &attr) != 0)
            return static_cast<char*>(nullptr);
        if (pthread_attr_getstack(&attr, &addr, &size) != 0)
            addr = nullptr;
        pthread_attr_destroy(&attr);
        return static_cast<char*>(addr);
    }();
    return low;
}

constexpr size_t kLocalAlign = 128;

std::string readFirstLine(const char* path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

std::string cpuModelName() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            auto pos = line.find(':');
            if (pos != std::string::npos) {
                std::string n = line.substr(pos + 1);
                n.erase(0, n.find_first_not_of(' '));
                return n;
            }
        }
    return "Unknown CPU";
}

cl_uint cpuMaxMHz() {
    std::string khz = readFirstLine("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    if (!khz.empty())
        return cl_uint(std::strtoul(khz.c_str(), nullptr, 10) / 1000);
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("cpu MHz", 0) == 0)
            return cl_uint(std::strtod(line.substr(line.find(':') + 1).c_str(), nullptr));
    return 0;
}

/// Size in bytes of the largest data cache level the kernel reports (L3 or L2).
cl_ulong lastLevelCacheSize() {
    cl_ulong best = 0;
    for (int i = 0; i < 8; ++i) {
        std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
        std::string type = readFirstLine((base + "/type").c_str());
        if (type.empty())
            break;
        if (type == "Instruction")
            continue;
        std::string size = readFirstLine((base + "/size").c_str());
        cl_ulong v = std::strtoull(size.c_str(), nullptr, 10);
        if (!size.empty() && size.back() == 'K')
            v *= 1024;
        else if (!size.empty() && size.back() == 'M')
            v *= 1024 * 1024;
        best = std::max(best, v);
    }
    return best ? best : 1 << 20;
}

class CpuBackend final : public DeviceBackend {
public:
    CpuBackend(TargetSpec target, cl_ulong lastLevelCache, cl_uint subGroupSize)
        : m_toolchain(makeCpuToolchain(std::move(target))), m_pool(usableHostCores()),
          m_streamingBytes(streamingThreshold(lastLevelCache, m_pool.participants())),
          m_subGroupSize(subGroupSize) {}

    const Toolchain& toolchain() const override { return *m_toolchain; }

    cl_int runNDRange(const KernelLaunch& launch) override;

    void pickLocalSize(const Device& device, const Kernel& kernel, cl_uint dims,
                       const size_t* global, size_t* local) const override;

    // Buffer transfers: the device's memory is the host's, as in DeviceBackend's defaults,
    // but large copies run on the pool's threads (copyBytes).
    cl_int read(const Mem& src, size_t offset, size_t size, void* host) override {
        const char* from = src.data() + offset;
        if (from != host) // a USE_HOST_PTR buffer may be read into its own host memory
            copyBytes(host, from, size);
        return CL_SUCCESS;
    }
    cl_int write(Mem& dst, size_t offset, size_t size, const void* host) override {
        char* to = dst.data() + offset;
        if (to != host)
            copyBytes(to, host, size);
        return CL_SUCCESS;
    }
    cl_int copy(const Mem& src, size_t srcOffset, Mem& dst, size_t dstOffset,
                size_t size) override {
        copyBytes(dst.data() + dstOffset, src.data() + srcOffset, size);
        return CL_SUCCESS;
    }

private:
    /// DUET_CPU_PARALLEL_COPIES=0 copies on the queue's thread alone (for comparisons).
    const bool m_parallelCopies = envSwitchOn("DUET_CPU_PARALLEL_COPIES");
    /// Copies of at least this many bytes are spread over the pool: one thread copies at a
    /// fraction of the memory's bandwidth, and waking the others costs tens of microseconds.
    static constexpr size_t kParallelCopyBytes = size_t(2) << 20;
    /// Each participant claims pieces of this size (multiples of any page and cache line).
    static constexpr size_t kCopyPiece = size_t(256) << 10;

    /// memcpy of non-overlapping ranges; from kParallelCopyBytes on, in pieces over the pool
    /// (one job at a time: a copy waits for a launch of another queue to finish, as launches do).
    void copyBytes(void* dst, const void* src, size_t size) {
        if (size < kParallelCopyBytes || m_pool.participants() < 2 || !m_parallelCopies) {
            std::memcpy(dst, src, size);
            return;
        }
        m_pool.run((size + kCopyPiece - 1) / kCopyPiece, 1, [&](size_t b, size_t e, unsigned) {
            const size_t from = b * kCopyPiece, to = std::min(size, e * kCopyPiece);
            std::memcpy(static_cast<char*>(dst) + from, static_cast<const char*>(src) + from,
                        to - from);
        });
    }

    /// A growable block aligned for any OpenCL C type.
    class AlignedBlock {
    public:
        bool reserve(size_t bytes) {
            if (bytes <= m_capacity)
                return true;
            size_t cap = std::max<size_t>(bytes, 2 * m_capacity);
            cap = (cap + kLocalAlign - 1) / kLocalAlign * kLocalAlign;
            char* p = static_cast<char*>(std::aligned_alloc(kLocalAlign, cap));
            if (!p)
                return false;
            m_p.reset(p);
            m_capacity = cap;
            return true;
        }
        char* data() const { return m_p.get(); }

    private:
        std::unique_ptr<char, decltype(&std::free)> m_p{nullptr, &std::free};
        size_t m_capacity = 0;
    };
    /// Per-participant scratch: __local memory and the argument pointer table.
    struct WorkerState {
        AlignedBlock local;
        AlignedBlock collective; ///< WorkGroupContext::collectiveScratch
        std::vector<void*> args;
        std::vector<void*> slots;
        std::vector<uint64_t> bounds; ///< WorkGroupContext::argBounds (checked kernels)
    };
    /// Per-launch scratch, reused from launch to launch.
    struct LaunchScratch {
        AlignedBlock values;
        std::vector<size_t> localOffsets;
        std::vector<void*> baseSlots, baseArgs;
        std::vector<KernelImageDesc> imageDescs;
        std::vector<uint64_t> baseBounds; ///< argument bounds less the __local ones
    };

    /// Launches whose __global buffers add up to this many bytes or more run the kernel's
    /// streaming-store variant: their data cannot stay in the last-level cache for the next
    /// kernel anyway, and non-temporal stores skip reading the lines they overwrite. The cache
    /// counted is the device's share of it, at most kCacheShare a thread: a virtual machine
    /// reports its host's whole cache (300 MiB on the lent host's 16 threads), most of which
    /// other cores use. There a 16x16 transpose of 2 x 64 MiB moved 73-94 GB/s with plain
    /// stores and 103-118 GB/s streaming. DUET_CPU_STREAMING_STORES=0 never, =1 always (for
    /// measurements).
    static size_t streamingThreshold(cl_ulong lastLevelCache, size_t threads) {
        if (const char* e = std::getenv("DUET_CPU_STREAMING_STORES"); e && *e)
            return *e == '0' ? SIZE_MAX : 0;
        constexpr size_t kCacheShare = size_t(4) << 20;
        return std::min<size_t>(lastLevelCache, kCacheShare * std::max<size_t>(1, threads));
    }
    /// Chunks of work-groups per participant and launch; DUET_CPU_CHUNKS overrides (for
    /// measurements).
    static size_t chunksPerParticipant() {
        if (const char* e = std::getenv("DUET_CPU_CHUNKS"); e && *e)
            return std::clamp<size_t>(std::strtoul(e, nullptr, 10), 1, 4096);
        return 32;
    }
    /// Whether `launch`'s buffers add up to the threshold: its kernel's optimised code then runs
    /// as its streaming variant where it has one.
    bool streamingLaunch(const KernelLaunch& launch) const;
    /// runNDRange, called with m_stateMutex held; a guarded launch that was stopped returns
    /// its error with the reason in `why`, for the caller to report once the lock is released.
    cl_int runLocked(const KernelLaunch& launch, std::string& why);

    std::unique_ptr<Toolchain> m_toolchain;
    ThreadPool m_pool;
    size_t m_streamingBytes;
    cl_uint m_subGroupSize; ///< DeviceInfo::subGroupSize, WorkGroupContext::subGroupSize
    size_t m_chunksPerParticipant = chunksPerParticipant();
    std::mutex m_stateMutex; ///< guards the scratch below
    LaunchScratch m_scratch;
    std::vector<WorkerState> m_workers{m_pool.participants()};
    Watchdog m_watchdog; ///< DUET_KERNEL_TIMEOUT
    /// The on-device queue of the launch being run (enqueue_kernel); under m_stateMutex.
    DeviceEnqueueSession m_enqueue;
};

bool CpuBackend::streamingLaunch(const KernelLaunch& launch) const {
    if (m_streamingBytes == SIZE_MAX || !launch.executable)
        return false;
    const KernelDesc& desc = launch.kernel->desc();
    size_t bytes = 0;
    for (size_t i = 0; i < launch.args.size(); ++i) {
        KernelArgKind kind = desc.args[i].kind;
        const Mem* mem = launch.args[i].mem.get();
        if (!mem || (kind != KernelArgKind::GlobalBuffer && kind != KernelArgKind::ConstantBuffer))
            continue;
        bool seen = false; // the same buffer passed twice is one footprint
        for (size_t j = 0; j < i && !seen; ++j)
            seen = launch.args[j].mem.get() == mem;
        if (!seen)
            bytes += mem->size();
    }
    return bytes >= m_streamingBytes;
}

cl_int CpuBackend::runNDRange(const KernelLaunch& launch) {
    // One launch at a time owns the scratch (the pool runs one job at a time anyway); reusing
    // it keeps allocation off the launch path.
    std::unique_lock lock(m_stateMutex);
    std::string why;
    // Kernels enqueued by the launch's work-items (and by theirs) run after it, on the same
    // pool, before the launch's event completes: the spec's parent/child semantics.
    m_enqueue.begin(launch);
    cl_int status = runLocked(launch, why);
    if (status == CL_SUCCESS) {
        status = m_enqueue.drain([&](const KernelLaunch& child) {
            std::string childWhy;
            const cl_int st = runLocked(child, childWhy);
            if (why.empty())
                why = childWhy;
            return st;
        });
    } else {
        m_enqueue.drain(
            [](const KernelLaunch&) { return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST; });
    }
    if (status == CL_SUCCESS || why.empty())
        return status;
    // A stopped launch: reported without our lock (the callback may enqueue on this device).
    lock.unlock();
    std::fprintf(stderr, "duet: cpu: %s\n", why.c_str());
    launch.kernel->context()->notify(why);
    return status;
}

/// The launch's kernel in its executable's order, or SIZE_MAX.
size_t kernelIndex(const KernelLaunch& launch) {
    const auto& kernels = launch.executable->kernels();
    for (size_t k = 0; k < kernels.size(); ++k)
        if (kernels[k].name == launch.kernel->desc().name)
            return k;
    return SIZE_MAX;
}

/// One launch's use of tiered code (tiered_code.hpp): the optimised code once there is some
/// (its streaming variant for a streaming launch, where it has one); quick code until then. When
/// the kernel's budget is spent (before the launch, or by this launch between two work-groups) the
/// optimised code is asked for without waiting: the background compile thread makes it while the
/// participants go on with quick code, and each takes it at its next work-group once it is ready. A
/// launch predicted to outlast the compile has its first participant compile instead
/// (TieredCode::requestOptimised's `here`).
class LaunchTier {
public:
    /// Picks the code the launch starts with into `fn` (the kernel's entry: quick code, or
    /// optimised code where it has no tiers); `streaming`: the launch's buffers are over the
    /// threshold (streamingLaunch); `groups` and `items`: its work-groups and work-items.
    LaunchTier(const KernelLaunch& launch, bool streaming, WorkGroupFn& fn, size_t groups,
               size_t items)
        : m_groups(groups), m_items(items) {
        m_tiered = launch.executable ? launch.executable->tieredCode() : nullptr;
        m_index = m_tiered ? kernelIndex(launch) : SIZE_MAX;
        if (streaming && m_index != SIZE_MAX) {
            m_executable = launch.executable;
            m_tiered->noteStreamingLaunch(m_index); // before any compile this launch asks for
        }
        if (m_index == SIZE_MAX) {
            m_tiered = nullptr;
        } else if (void* optimised = m_tiered->optimisedEntry(m_index)) {
            fn = pick(optimised);
            m_tiered->noteSwitch(m_index, "at the start of a launch");
            m_tiered = nullptr;
        } else {
            // Predicted to outlast the compile (and to spend what is left of the budget): its
            // first participant compiles at its first work-group while the others go on
            // (next()), rather than the thread, whose compile would compete with this launch's
            // workers and leave it on quick code. The cost per work-item comes from earlier
            // launches, so a long launch after short ones of the same kernel is seen.
            m_budgetMs = m_tiered->quickBudgetLeftMs(m_index);
            const double predicted = m_tiered->predictQuickMs(m_index, m_items);
            m_compileHere = m_groups > 1 && predicted >= m_budgetMs && predicted >= longMs();
            if (m_compileHere) {
                m_budgetMs = 0;
                m_predictedMs = predicted;
            }
        }
        if (m_tiered && m_budgetMs <= 0) {
            if (!m_compileHere) {
                m_requested.store(true, std::memory_order_relaxed);
                if (void* optimised = m_tiered->requestOptimised(m_index)) {
                    fn = pick(optimised);
                    m_tiered->noteSwitch(m_index, "at the start of a launch");
                    m_tiered = nullptr;
                }
            }
        }
        m_fn.store(fn);
        if (m_tiered)
            m_start = std::chrono::steady_clock::now();
    }
    /// True while the launch runs quick code and may tier up.
    bool quick() const { return m_tiered != nullptr; }
    /// The code for the next work-group (quick() only): the optimised code once it is ready
    /// (one atomic load per group), else quick code; asks for the optimised code once this
    /// launch spends the budget.
    WorkGroupFn next() {
        if (m_switched.load(std::memory_order_relaxed))
            return m_fn.load(std::memory_order_acquire);
        if (void* optimised = m_tiered->optimisedEntry(m_index)) {
            const WorkGroupFn code = pick(optimised);
            m_fn.store(code, std::memory_order_release);
            if (!m_switched.exchange(true))
                m_tiered->noteSwitch(m_index, "between two work-groups of a launch");
            return code;
        }
        if (m_requested.load(std::memory_order_relaxed))
            return m_fn.load(std::memory_order_acquire); // asked for: waiting for it
        // Counted only until the request: the count is for its estimate, and a shared counter
        // touched by every work-group would cost each participant a contended line meanwhile.
        const size_t started = m_started.fetch_add(1, std::memory_order_relaxed);
        if (elapsedMs() >= m_budgetMs && !m_requested.exchange(true)) {
            // This launch spent the budget: if what is left of it will outlast the compile,
            // this participant compiles it while the others go on.
            const double elapsed = elapsedMs();
            const double left =
                started ? elapsed * double(m_groups - started) / double(started) : 0.0;
            const bool here = m_compileHere || left >= longMs();
            if (void* optimised = m_tiered->requestOptimised(m_index, here, m_predictedMs)) {
                m_fn.store(pick(optimised), std::memory_order_release);
                m_switched.store(true);
                m_tiered->noteSwitch(m_index, "between two work-groups of a launch");
            }
        }
        return m_fn.load(std::memory_order_acquire);
    }
    /// After the launch: the time it spent in quick code goes on the kernel's account.
    void finish() {
        if (m_tiered && !m_switched.load())
            m_tiered->addQuickTime(m_index, elapsedMs(), m_items);
    }

private:
    /// `optimised`, or its streaming variant for a streaming launch where it has one.
    WorkGroupFn pick(void* optimised) const {
        void* s = m_executable ? m_executable->streamingEntry(m_index) : nullptr;
        return reinterpret_cast<WorkGroupFn>(s ? s : optimised);
    }
    /// Quick-code time (left) from which a launch is long: half the expected compile, at
    /// least 30 ms. Compiling on such a launch's path ends it at most about half a compile
    /// later than quick code would, and every launch after it runs optimised code; left to the
    /// background thread, the compile competes with the launch's workers on a busy machine and
    /// took 2-4 times as long (SHOC's sgemmNN at load 5: 4.3 s against 1.2-2.7 s on the
    /// launch path), the kernel on quick code all that time. Measured, the progress estimate
    /// of the launch that spends the budget came within 5% of the compile's estimate (SGEMM's
    /// first launch at load 5: 718 against 670 ms, 1234 against 1205), so the full compile as
    /// the bar left it to chance which side a long launch fell on.
    double longMs() const { return std::max(30.0, 0.5 * m_tiered->expectedOptimiseMs(m_index)); }
    double elapsedMs() const {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_start)
            .count();
    }
    const cpu::TieredCode* m_tiered = nullptr;
    const DeviceExecutable* m_executable = nullptr; ///< a streaming launch's
    size_t m_index = SIZE_MAX;
    double m_budgetMs = 0;
    std::chrono::steady_clock::time_point m_start;
    std::atomic<WorkGroupFn> m_fn{nullptr};
    size_t m_groups = 0;                  ///< the launch's work-groups
    size_t m_items = 0;                   ///< the launch's work-items
    bool m_compileHere = false;           ///< the first participant compiles (long launches)
    double m_predictedMs = 0;             ///< quick-code time predicted at the start (if long)
    std::atomic<size_t> m_started{0};     ///< work-groups begun on quick code
    std::atomic<bool> m_requested{false}; ///< the optimised code was asked for
    std::atomic<bool> m_switched{false};  ///< m_fn is the optimised code
};

/// Whether no agent but the launch may touch argument `a`'s memory while it runs
/// (WorkGroupContext::unsharedMemory): a buffer, unless it was made over an SVM allocation with
/// CL_MEM_SVM_ATOMICS, or such an allocation's pointer without that flag. The host and other
/// devices may use atomics on CL_MEM_SVM_ATOMICS memory while a kernel runs, and on any host
/// pointer (fine-grain system SVM); a buffer's contents they see only at synchronisation points.
bool unsharedDuringLaunch(const ArgValue& a) {
    const void* host = nullptr;
    if (a.mem) {
        const Mem* root = a.mem.get();
        while (root->parent())
            root = root->parent();
        if (!(root->flags() & CL_MEM_USE_HOST_PTR))
            return true;
        host = root->hostPtr();
    } else if (a.viaSvm && a.svm) {
        host = a.svm;
    } else {
        return false;
    }
    const std::optional<SvmAllocation> svm = svmFind(host);
    if (!svm)
        return a.mem.get() != nullptr; // a buffer over plain host memory; a system pointer is not
    return !(svm->flags & CL_MEM_SVM_ATOMICS);
}

/// WorkGroupContext::unsharedMemory and deviceOnlyMemory of a launch that one thread runs
/// (jit/local_atomics.hpp, plainUnsharedAtomics): __global atomics on that memory run as plain
/// operations. Atomics of device scope or narrower need only be atomic with respect to this
/// device's work-items: any buffer or SVM argument (the host's and other devices' accesses to
/// the same object would be races in their scope); the system's scope only memory no other
/// agent may touch (unsharedDuringLaunch).
void markUnsharedMemory(const KernelLaunch& launch, WorkGroupContext& ctx) {
    const KernelDesc& desc = launch.kernel->desc();
    ctx.unsharedMemory = ctx.deviceOnlyMemory = uint64_t(1) << kUnsharedProgramScopeBit;
    for (size_t i = 0; i < std::min<size_t>(launch.args.size(), kUnsharedProgramScopeBit); ++i) {
        if (desc.args[i].kind != KernelArgKind::GlobalBuffer || !launch.args[i].globalPointer())
            continue;
        ctx.deviceOnlyMemory |= uint64_t(1) << i;
        if (unsharedDuringLaunch(launch.args[i]))
            ctx.unsharedMemory |= uint64_t(1) << i;
    }
}

cl_int CpuBackend::runLocked(const KernelLaunch& launch, std::string& why) {
    const KernelDesc& desc = launch.kernel->desc();
    auto fn = reinterpret_cast<WorkGroupFn>(launch.entry);
    const bool streaming = streamingLaunch(launch);

    size_t groups[3], total = 1;
    for (int d = 0; d < 3; ++d) {
        groups[d] = (launch.global[d] + launch.local[d] - 1) / launch.local[d];
        total *= groups[d];
    }
    LaunchTier tier(launch, streaming, fn, total,
                    launch.global[0] * launch.global[1] * launch.global[2]);
    const size_t nargs = launch.args.size();
    // Chunks small enough to balance, large enough to amortise the dispatch (a claim is one
    // compare-and-swap on the share's own cache line). Small, because a chunk a participant
    // has claimed is the work that waits whenever the scheduler takes its core away (another
    // process, the GL thread): with 8 per participant, 1/16 of a launch on 2 cores.
    const size_t participants = m_pool.participants();
    const size_t chunk = std::max<size_t>(1, total / (participants * m_chunksPerParticipant));
    const size_t used = total <= chunk ? 1 : participants;

    LaunchScratch& s = m_scratch;
    const ExecutionGuards guards =
        launch.executable ? launch.executable->guards() : ExecutionGuards{};
    const bool guarded = guards.boundsChecks || guards.timeoutSeconds > 0;

    // __local layout per work-group: kernel-scope variables first, then each __local
    // argument, every block aligned for the widest type.
    auto roundUp = [](size_t n) { return (n + kLocalAlign - 1) / kLocalAlign * kLocalAlign; };
    size_t localBytes = roundUp(desc.staticLocalMemSize);
    s.localOffsets.assign(nargs, 0);
    size_t valueBytes = 0;
    for (size_t i = 0; i < nargs; ++i) {
        if (desc.args[i].kind == KernelArgKind::LocalBuffer) {
            s.localOffsets[i] = localBytes;
            localBytes += roundUp(launch.args[i].localSize);
        }
        valueBytes += roundUp(launch.args[i].bytes.size());
    }
    // By-value arguments go into one block where each sits at a 128-byte boundary, so code
    // may load them with the alignment of any OpenCL C type (double16 included).
    if (!s.values.reserve(valueBytes))
        return CL_OUT_OF_HOST_MEMORY;

    s.imageDescs.resize(std::max(s.imageDescs.size(), nargs));

    // Argument table shared by all participants except for __local slots.
    s.baseSlots.assign(nargs, nullptr);
    s.baseArgs.assign(nargs, nullptr);
    size_t valueOffset = 0;
    for (size_t i = 0; i < nargs; ++i) {
        const ArgValue& a = launch.args[i];
        switch (desc.args[i].kind) {
        case KernelArgKind::Value:
        case KernelArgKind::Sampler:
            std::memcpy(s.values.data() + valueOffset, a.bytes.data(), a.bytes.size());
            s.baseArgs[i] = s.values.data() + valueOffset;
            valueOffset += roundUp(a.bytes.size());
            break;
        case KernelArgKind::GlobalBuffer:
        case KernelArgKind::ConstantBuffer:
            s.baseSlots[i] = a.globalPointer();
            break;
        case KernelArgKind::Image:
            // Kernels see an image as a pointer to its descriptor (core/image.hpp).
            makeKernelImageDesc(*a.mem, s.imageDescs[i]);
            s.baseSlots[i] = &s.imageDescs[i];
            break;
        case KernelArgKind::LocalBuffer:
            break;
        }
    }
    if (guards.boundsChecks) {
        s.baseBounds.assign(2 * nargs, 0);
        for (size_t i = 0; i < nargs; ++i)
            cpu::argumentBounds(launch, i, &s.imageDescs[i], s.baseBounds.data());
    }

    WorkGroupContext base{};
    base.workDim = launch.workDim;
    base.subGroupSize = m_subGroupSize;
    for (int d = 0; d < 3; ++d) {
        base.globalOffset[d] = launch.offset[d];
        base.globalSize[d] = launch.global[d];
        base.enqueuedLocalSize[d] = launch.local[d];
        base.numGroups[d] = groups[d];
    }
    if (used == 1) // no other work-item runs meanwhile (the device runs a launch at a time)
        markUnsharedMemory(launch, base);

    for (size_t wi = 0; wi < used; ++wi) {
        WorkerState& w = m_workers[wi];
        if (!w.local.reserve(localBytes) ||
            !w.collective.reserve(kCpuMaxWorkGroupSize * kCollectiveScratchPerItem))
            return CL_OUT_OF_RESOURCES;
        w.slots = s.baseSlots;
        w.args = s.baseArgs;
        if (guards.boundsChecks)
            w.bounds = s.baseBounds;
        for (size_t i = 0; i < nargs; ++i) {
            if (desc.args[i].kind == KernelArgKind::LocalBuffer) {
                w.slots[i] = w.local.data() + s.localOffsets[i];
                if (guards.boundsChecks) {
                    w.bounds[2 * i] = reinterpret_cast<uintptr_t>(w.slots[i]);
                    w.bounds[2 * i + 1] = w.bounds[2 * i] + launch.args[i].localSize;
                }
            }
            if (!w.args[i])
                w.args[i] = &w.slots[i];
        }
    }

    cpu::LaunchGuard guard;

    // No object with a destructor here: a failed check leaves by longjmp (cpu::runGuarded).
    auto runRange = [&](size_t begin, size_t end, unsigned worker) {
        WorkerState& w = m_workers[worker];
        WorkGroupContext ctx = base;
        if (guarded) {
            ctx.argBounds = guards.boundsChecks ? w.bounds.data() : nullptr;
            ctx.cancel = reinterpret_cast<const uint8_t*>(&guard.cancel);
        }
        ctx.localMem = w.local.data();
        ctx.localMemEnd = ctx.localMem + localBytes;
        ctx.collectiveScratch = w.collective.data();
        // Every private object of the group's work-items lives in the frames below this one
        // (the WorkGroupFn's and its callees'), above the thread's lowest stack address.
        ctx.stackLow = threadStackLow();
        ctx.stackHigh = ctx.stackLow ? static_cast<char*>(__builtin_frame_address(0)) : nullptr;
        for (size_t g = begin; g < end; ++g) {
            if (guarded && guard.cancel.load(std::memory_order_relaxed)) {
                guard.abandoned.store(true, std::memory_order_relaxed);
                return;
            }
            size_t id[3] = {g % groups[0], (g / groups[0]) % groups[1],
                            g / (groups[0] * groups[1])};
            for (int d = 0; d < 3; ++d) {
                ctx.groupId[d] = id[d];
                size_t start = id[d] * launch.local[d];
                ctx.localSize[d] = std::min(launch.local[d], launch.global[d] - start);
            }
            WorkGroupFn run = tier.quick() ? tier.next() : fn;
            run(w.args.data(), &ctx);
        }
    };
    auto runGroups = [&](size_t begin, size_t end, unsigned worker) {
        DeviceEnqueueThreadScope enqueueScope(m_enqueue);
        if (!guarded) {
            runRange(begin, end, worker);
        } else {
            struct Call {
                decltype(runRange)* range;
                size_t begin, end;
                unsigned worker;
            } call{&runRange, begin, end, worker};
            auto body = [](void* p) {
                auto* c = static_cast<Call*>(p);
                (*c->range)(c->begin, c->end, c->worker);
            };
            if (!cpu::runGuarded(guard, body, &call))
                guard.abandoned.store(true, std::memory_order_relaxed);
        }
#if defined(__x86_64__)
        // The streaming variant's non-temporal stores are weakly ordered: drain them (if it
        // ran) before the pool (or the queue) tells anyone that this part of the launch is done.
        if (streaming)
            __builtin_ia32_sfence();
#endif
    };
    // The clock is read only when a timeout is set: an unguarded launch pays nothing for it.
    std::chrono::steady_clock::time_point start;
    if (guards.timeoutSeconds > 0) {
        start = std::chrono::steady_clock::now();
        m_watchdog.arm(guard, start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::duration<double>(guards.timeoutSeconds)));
    }
    if (used == 1)
        runGroups(0, total, 0);
    else
        m_pool.run(total, chunk, runGroups);
    if (guards.timeoutSeconds > 0)
        m_watchdog.disarm();
    tier.finish();
    if (!guarded || !guard.abandoned.load())
        return CL_SUCCESS;
    // Hardware reports a faulting or killed kernel as CL_OUT_OF_RESOURCES too.
    if (guard.faulted.load()) {
        why = describeFault(launch, guard.fault);
    } else {
        const double ran =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        char text[160];
        std::snprintf(text, sizeof text,
                      "kernel '%s' ran longer than DUET_KERNEL_TIMEOUT=%g s and was stopped "
                      "after %.2f s",
                      desc.name.c_str(), guards.timeoutSeconds, ran);
        why = text;
    }
    return CL_OUT_OF_RESOURCES;
}

void CpuBackend::pickLocalSize(const Device& device, const Kernel& kernel, cl_uint dims,
                               const size_t* global, size_t* local) const {
    const KernelDesc& desc = kernel.desc();
    if (desc.reqdWorkGroupSize[0]) {
        for (cl_uint d = 0; d < dims; ++d)
            local[d] = desc.reqdWorkGroupSize[d];
        return;
    }
    // Work-items of a group are a loop in one thread: big groups amortise per-group work and
    // fill SIMD lanes; keep enough groups to feed every core. Sizes divide the global size so
    // that OpenCL 1.2 programs get uniform groups. Where the program allows non-uniform groups
    // (OpenCL C 2.0 and later: the runtime may then choose them with no local size given), a
    // size with no divisor near the wanted one gets the wanted size and a smaller last group
    // instead: the conversions CTS launches ceil(2^k / 3) work-items (2 x a prime), which
    // uniform groups cut into groups of 1 or 2, each a call of the work-group function.
    // A kernel that cannot tell its grouping (KernelDesc::observesGroups: saxpy-like kernels
    // that only use global ids) gets the same, whatever its OpenCL C version: groups of 1 for
    // a prime global size made a 1.2 saxpy over 1,000,003 floats 14 times slower.
    const bool ragged =
        device.info().nonUniformWorkGroup &&
        (kernel.allowsNonUniform(&device) || !kernel.descFor(&device).observesGroups);
    size_t participants = m_pool.participants();
    size_t budget = std::min<size_t>(1024, kernel.workGroupLimit(device));
    for (cl_uint d = 0; d < dims; ++d) {
        size_t want = budget;
        if (d == 0) {
            size_t others = 1;
            for (cl_uint e = 1; e < dims; ++e)
                others *= global[e];
            // Leave at least 4 groups per participant when the range allows it.
            size_t perGroup = global[0] * others / (participants * 4);
            want = std::clamp<size_t>(perGroup, 16, budget);
        }
        const size_t top = std::min(want, global[d]);
        // A divisor down to half the wanted size is as good; below that a ragged last group is
        // cheaper (and the search stops there: it is on every launch).
        const size_t lowest = ragged ? std::max<size_t>(1, top / 2) : 1;
        size_t best = ragged ? top : 1;
        for (size_t l = top; l >= lowest; --l)
            if (global[d] % l == 0) {
                best = l;
                break;
            }
        local[d] = best;
        budget = std::max<size_t>(1, budget / best);
    }
}

} // namespace
} // namespace cpu

namespace {

std::unique_ptr<DeviceBackend> makeCpuBackend(DeviceInfo& info) {
    unsigned cores = usableHostCores();
    info.type = CL_DEVICE_TYPE_CPU;
    info.name = cpu::cpuModelName();
    info.vendor = "Duet";
    info.vendorId = 0x10006; // Khronos-assigned vendor ids are for hardware; this is a private one
    info.driverVersion = DUET_VERSION;
    info.version = "OpenCL 3.0 Duet";
    info.numericVersion = CL_MAKE_VERSION(3, 0, 0);
    info.openclCVersion = "OpenCL C 1.2 Duet";
    info.maxComputeUnits = cores;
    info.maxClockFrequency = cpu::cpuMaxMHz();
    long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    info.globalMemSize = cl_ulong(pages) * cl_ulong(pageSize);
    info.maxMemAllocSize = std::max<cl_ulong>(info.globalMemSize / 4, 128ull << 20);
    info.globalMemCacheSize = cpu::lastLevelCacheSize();
    info.globalMemCachelineSize = 64;
    info.maxConstantBufferSize = info.maxMemAllocSize;
    info.localMemSize = cpu::kLocalMemSize;
    info.localMemType = CL_GLOBAL;
    info.memBaseAddrAlign = 1024; // bits
    info.maxWorkGroupSize = kCpuMaxWorkGroupSize;
    info.maxWorkItemSizes[0] = info.maxWorkItemSizes[1] = info.maxWorkItemSizes[2] =
        kCpuMaxWorkGroupSize;
    info.profilingTimerResolution = 1;
    info.singleFpConfig = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST |
                          CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_FMA |
                          CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
    info.doubleFpConfig = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST |
                          CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_FMA;
    info.halfFpConfig = 0;

    TargetSpec target;
    target.binaryKind = kCpuBinaryKind;
    target.cpuName = hostCpuName();
    target.cpuFeatures = hostCpuFeatures();
    // Checked kernels (DUET_KERNEL_CHECKS) name the argument an access overran.
    if (kernelChecksRequested())
        target.keepValueNames = true;
    bool avx512 = target.cpuFeatures.find("+avx512f") != std::string::npos;
    bool avx = target.cpuFeatures.find("+avx,") != std::string::npos ||
               target.cpuFeatures.find("+avx2") != std::string::npos;
    // The preferred widths are the vectors code is generated for (jit/finalize.cpp makes the
    // same choice per build: 512 bits on the AVX-512 cores where they measured faster, else
    // 256 with AVX; DUET_CPU_VECTOR_WIDTH overrides).
    const cl_uint bytes = cpuVectorWidth(target.cpuName, avx512, avx).bits / 8;
    // char short int long float double half
    cl_uint widths[7] = {bytes, bytes / 2, bytes / 4, bytes / 8, bytes / 4, bytes / 8, 0};
    std::copy(widths, widths + 7, info.preferredVectorWidth);
    // Native widths are the ISA's registers, whatever code generation prefers.
    const cl_uint nativeBytes = avx512 ? 64 : avx ? 32 : 16;
    cl_uint native[7] = {nativeBytes,
                         nativeBytes / 2,
                         nativeBytes / 4,
                         nativeBytes / 8,
                         nativeBytes / 4,
                         nativeBytes / 8,
                         0};
    std::copy(native, native + 7, info.nativeVectorWidth);
    info.preferredWorkGroupSizeMultiple = bytes / 4;
    // A sub-group is as many work-items as the generated code's vectors hold 32-bit lanes (8
    // with 256-bit vectors): consecutive local linear ids, run region by region with the rest of
    // the group (builtins/cpu/sub_group.cl). Independent forward progress between them, which
    // cl_khr_subgroups requires: a loop that may wait for another work-item yields to the other
    // sub-groups at each iteration (jit/regions.hpp, insertSpinYields), unless the program is
    // built with -cl-no-subgroup-ifp. So OpenCL 3.0's __opencl_c_subgroups feature,
    // cl_khr_subgroups, and the cl_khr_subgroup_* extensions.
    info.subGroupSize = bytes / 4;
    info.subGroupIndependentForwardProgress = true;

    info.extensions = "cl_khr_byte_addressable_store cl_khr_fp64 "
                      "cl_khr_global_int32_base_atomics cl_khr_global_int32_extended_atomics "
                      "cl_khr_local_int32_base_atomics cl_khr_local_int32_extended_atomics "
                      "cl_khr_int64_base_atomics cl_khr_int64_extended_atomics "
                      "cl_khr_icd cl_khr_extended_versioning cl_khr_3d_image_writes "
                      "cl_khr_depth_images cl_khr_image2d_from_buffer cl_khr_srgb_image_writes "
                      "cl_khr_gl_sharing cl_khr_gl_event cl_khr_gl_depth_images "
                      // builtins/cpu/sub_group.cl; the non-uniform ones (ballot, votes,
                      // arithmetic) act on the work-items waiting at their region boundary
                      "cl_khr_subgroups cl_khr_subgroup_shuffle cl_khr_subgroup_shuffle_relative "
                      "cl_khr_subgroup_clustered_reduce cl_khr_subgroup_extended_types "
                      "cl_khr_subgroup_ballot cl_khr_subgroup_non_uniform_vote "
                      "cl_khr_subgroup_non_uniform_arithmetic cl_khr_subgroup_rotate";
    info.extensionsWithVersion = namesWithVersion(info.extensions);
    info.openclCAllVersions = {
        {CL_MAKE_VERSION(1, 0, 0), "OpenCL C"}, {CL_MAKE_VERSION(1, 1, 0), "OpenCL C"},
        {CL_MAKE_VERSION(1, 2, 0), "OpenCL C"}, {CL_MAKE_VERSION(2, 0, 0), "OpenCL C"},
        {CL_MAKE_VERSION(3, 0, 0), "OpenCL C"},
    };
    std::string features = "__opencl_c_int64 __opencl_c_fp64 __opencl_c_atomic_order_acq_rel "
                           "__opencl_c_atomic_order_seq_cst __opencl_c_atomic_scope_device "
                           "__opencl_c_atomic_scope_all_devices "
                           "__opencl_c_generic_address_space "
                           "__opencl_c_program_scope_global_variables __opencl_c_images "
                           "__opencl_c_read_write_images __opencl_c_3d_image_writes "
                           "__opencl_c_work_group_collective_functions __opencl_c_pipes "
                           "__opencl_c_subgroups __opencl_c_device_enqueue";
    info.openclCFeatures = namesWithVersion(features, CL_MAKE_VERSION(3, 0, 0));
    info.genericAddressSpace = true;
    // builtins/cpu/work_group.cl with the work-group pass's scratch (WorkGroupContext).
    info.workGroupCollectives = true;
    // Images live in host memory; the limits are the 1.2 full-profile minimums or more.
    info.imageSupport = true;
    info.imagePitchAlignment = 1;
    info.imageBaseAddressAlignment = 1;
    info.nonUniformWorkGroup = true;
    // Pipes (builtins/cpu/pipe.cl over core/pipe.hpp's layout): packets are copied with
    // memcpy and reservations are positions in the ring, so neither limit is the hardware's;
    // these are generous values above the spec's minimums (16 arguments, 1 reservation,
    // 1024-byte packets).
    info.pipeSupport = true;
    info.maxPipeArgs = 16;
    info.pipeMaxActiveReservations = 65536;
    info.pipeMaxPacketSize = 65536;
    // Device-side enqueue (devices/cpu/device_enqueue.*): a child kernel is a record in its
    // launch's on-device queue, run on the thread pool once its parent's work-groups are done.
    // CL_QUEUE_SIZE bounds the records a launch may hold at once (cpu::kDeviceCommandBytes
    // each, plus the block literal).
    reportDeviceEnqueue(info);
    // Kernels run in the host's address space, in host threads: every host address is an SVM
    // pointer, and atomics on it are the host's own.
    info.svmCapabilities = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER |
                           CL_DEVICE_SVM_FINE_GRAIN_SYSTEM | CL_DEVICE_SVM_ATOMICS;

    std::istringstream ext(info.extensions + " " + features);
    std::string w;
    while (ext >> w)
        if (w != "cl_khr_icd" && w != "cl_khr_extended_versioning")
            target.clExtensions.push_back(w);
    target.fp64 = true;
    target.images = true;
    target.clStdVersions.clear();
    for (const cl_name_version& v : info.openclCAllVersions)
        target.clStdVersions.push_back(100 * CL_VERSION_MAJOR(v.version) +
                                       10 * CL_VERSION_MINOR(v.version));
    return std::make_unique<cpu::CpuBackend>(std::move(target), info.globalMemCacheSize,
                                             info.subGroupSize);
}

std::vector<DiscoveredDevice> discoverCpu() {
    std::vector<DiscoveredDevice> out;
    DeviceInfo info;
    auto backend = makeCpuBackend(info);
    out.emplace_back(std::move(backend), std::move(info));
    return out;
}

/// The host CPU, first in the platform's list: it is CL_DEVICE_TYPE_DEFAULT.
const DeviceKindRegistrar kRegisterCpu{DeviceKind{"cpu", 0, &discoverCpu}};

} // namespace

} // namespace duet::rt
