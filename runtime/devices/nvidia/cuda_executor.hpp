// Running kernels on one NVIDIA GPU through the CUDA driver API: its primary context, managed
// memory for memory objects, a module per executable, argument marshalling by Duet's kernel
// ABI (codegen/ptx_module.hpp; image descriptors in managed memory, image_slots.hpp) and the
// launch plan's grids on one stream. No LLVM headers.
#pragma once

#include "core/device.hpp"
#include "core/printf_buffer.hpp"
#include "devices/nvidia/cuda_driver.hpp"
#include "devices/nvidia/image_slots.hpp"
#include "devices/nvidia/launch_plan.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace duet::rt {

class NvidiaExecutable;

namespace nvidia_device {

/// What a launch or a transfer reports: a CL status and, when it failed, why (for stderr and
/// the context's notification callback).
struct Outcome {
    cl_int status = CL_SUCCESS;
    std::string why;
};

/// What the driver says about a kernel's compiled function (cuFuncGetAttribute).
struct FunctionInfo {
    size_t maxThreads = 0;     ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (0: not reported)
    uint64_t staticShared = 0; ///< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (0 for Duet's PTX)
    uint64_t localBytes = 0;   ///< CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: per-thread local memory
};

/// One GPU's execution state. The context and stream are made on first use, so that listing
/// devices creates no CUDA context. Thread-safe: launches and transfers take the stream's mutex,
/// module loads the module cache's (never both at once, so that a query about a kernel does not
/// wait for a running one); whichever thread calls gets the primary context made current
/// (cached per thread). A kernel that prints holds the printf buffer (its own mutex, taken
/// before the stream's) from submit to finish.
class CudaExecutor final : public StorageAllocator {
public:
    /// `printfCapacity`: the data bytes of the printf buffer (CL_DEVICE_PRINTF_BUFFER_SIZE).
    CudaExecutor(const nvidia::CudaDriver& cuda, nvidia::cu::Device device,
                 nvidia::GridLimits limits, uint32_t maxSharedOptin, uint64_t printfCapacity);
    ~CudaExecutor() override;

    // StorageAllocator: cuMemAllocManaged (CU_MEM_ATTACH_GLOBAL) and cuMemHostRegister.
    // Memory the GPU touches first is prefetched to it at once, memory the host fills once
    // filled: a kernel's first touch of managed memory faults it over page by page, which costs
    // a first launch milliseconds for 16 MiB (~0.1 ms prefetched).
    char* allocate(size_t size, bool deviceFirst) override;
    void release(char* p) override;
    bool registerHost(void* p, size_t size, std::string& why) override;
    void unregisterHost(void* p) override;
    void hostWrote(char* p, size_t size) override { prefetch(p, size); }

    /// Queues a move of the managed memory [p, p + size) into the GPU's memory (`toHost`: into
    /// the host's) on a stream of its own: a hint that nothing waits for (the pages stay valid
    /// on both sides throughout). False when this GPU does not prefetch: no cuMemPrefetchAsync,
    /// no concurrent managed access, DUET_NVIDIA_PREFETCH=0, or the driver refused.
    bool prefetch(const void* p, size_t size, bool toHost = false);

    /// A CUDA stream: each command queue gets its own (kept in the queue's device state,
    /// whichever thread runs its commands), so two queues overlap on the GPU; work queued
    /// outside commands goes on the calling thread's own. Kept for reuse when its queue or
    /// thread ends.
    struct Lane;
    /// Gives `lane` back for another thread (the thread that had it has ended).
    void returnLane(Lane* lane);

    /// Work on a lane's stream (a launch, a copy, a fill), not yet waited for; `start`/`end`
    /// bracket a launch that was timed.
    struct Submitted {
        nvidia::cu::EventHandle start = nullptr, end = nullptr;
        Lane* lane = nullptr; ///< whose stream
        /// Its place in the lane's order (0: nothing to wait for). Work up to a number known
        /// done needs no driver call: one wait covers every launch queued before it.
        uint64_t seq = 0;
        /// Held when the kernel prints: the GPU's printf buffer is this launch's until finish()
        /// has read it (one printf launch at a time per GPU, from any queue). A launch that
        /// holds it must be finished before its thread submits another that prints.
        std::unique_lock<std::mutex> printfLease;
        std::shared_ptr<DeviceExecutable> printfFormats; ///< whose formats the records name
        bool prints() const { return printfLease.owns_lock(); }
        /// Guarded builds (DUET_KERNEL_CHECKS, DUET_KERNEL_TIMEOUT): the launch's own guard
        /// record (nvidia::GuardRecord, device memory of the executor's pool), written on the
        /// stream before the grids (from `guardImage`: its header zeroed, the arguments' bounds)
        /// and read back by finish(), which words what stopped the launch; 0 for code built
        /// without guards. Such a launch is waited for in its own command, so that the failure
        /// is its own event's.
        nvidia::cu::DevicePtr guardRecord = 0;
        std::vector<uint64_t> guardImage;
        double timeoutSeconds = 0;
        std::chrono::steady_clock::time_point submittedAt;
        std::string kernel;
        /// DUET_KERNEL_CHECKS: the launch as submitted, for the message of a failed check.
        std::shared_ptr<const KernelLaunch> checked;
        bool guarded() const { return guardRecord != 0; }
    };
    /// Queues every grid of `launch` (entry: a KernelEntry of an NvidiaExecutable) on the
    /// stream, between two CUDA events when `timed`, and returns without waiting: finish()
    /// waits. A kernel that prints gets the printf buffer, reset on the stream (offset 0, the
    /// data the last launch wrote zeroed), in its launch block. On failure nothing is left to
    /// wait for.
    Outcome submit(const KernelLaunch& launch, bool timed, Submitted& out);
    /// Waits for a submitted launch (and what the stream ran before it); its GPU time in ns goes
    /// to `deviceNs` when it was timed (else 0). Releases its events. For a launch that prints,
    /// copies the printf buffer's records to the host and decodes them into `printed` (when not
    /// null and the kernel succeeded), then releases the buffer.
    Outcome finish(Submitted& launch, uint64_t& deviceNs, PrintfOutput* printed = nullptr);
    /// Tells the executor that `bytes` at `data` may change through work queued from now on (a
    /// write, copy, fill, unmap, GL acquire or a kernel writing an image): the CUDA arrays that
    /// hold a copy of those bytes for texture reads (3D images, image arrays) are copied again
    /// before the next launch that reads them. Cheap when there are none. Any thread.
    void noteWritten(const void* data, size_t bytes);
    /// CUDA arrays holding image copies (for tests and DUET_LOG).
    size_t arrayCount() const { return m_arrayCount.load(std::memory_order_relaxed); }
    /// CL_DEVICE_PRINTF_BUFFER_SIZE: the printf buffer's data bytes.
    uint64_t printfCapacity() const { return m_printfCapacity; }
    /// Queues a copy of `size` bytes between any two addresses (unified addressing) on the
    /// stream; finish() waits for it. A pageable host source is staged by the driver before
    /// this returns, so the caller may reuse it at once.
    Outcome copyAsync(void* dst, const void* src, size_t size, Submitted& out);
    /// copyAsync, then finish.
    Outcome copy(void* dst, const void* src, size_t size);
    /// Queues `pattern` (`patternSize` bytes, a divisor of `size`) repeated over `size` bytes
    /// at `dst` on the GPU: cuMemsetD8/16/32 for patterns of 1, 2 or 4 bytes; longer ones are
    /// copies of a replicated run, waited for here (`out` is then empty). Never through the
    /// host's page mappings: a host write to managed memory would move its pages to the host
    /// and the next kernel fault them back.
    Outcome fillAsync(void* dst, size_t size, const void* pattern, size_t patternSize,
                      Submitted& out);
    /// The driver's attributes of `entry` (a KernelEntry) of `exe`, loading its module on
    /// first use; false (with `why`) when the module or function does not load.
    bool describe(const std::shared_ptr<DeviceExecutable>& exe, const void* entry,
                  FunctionInfo& out, std::string* why = nullptr);
    /// Why `staticShared` + `dynamic` bytes of shared memory are more than a work-group of this
    /// GPU may use (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), for
    /// CL_OUT_OF_RESOURCES; empty when they fit.
    std::string sharedMemoryExcess(const nvidia::KernelEntry& entry, uint64_t staticShared,
                                   uint64_t dynamic) const;

    // For CUDA–GL interop (cuda_gl.cpp), which runs on runtime/gl's GL thread.
    /// Runs `work` with the primary context current on this thread and the stream mutex held,
    /// on the executor's shared stream (launches and copies of other threads wait meanwhile).
    /// What it queued there comes before whatever any lane queues afterwards (a barrier event
    /// each lane's stream waits for on the GPU), so kernels see a GL buffer mapped or an image
    /// copied by the acquire command before them.
    Outcome onStream(const std::function<Outcome(nvidia::cu::StreamHandle)>& work);
    const nvidia::CudaDriver& cuda() const { return m_cuda; }
    nvidia::cu::Device cudaDevice() const { return m_device; }
    std::string cudaError(const std::string& call, nvidia::cu::Result r) const;

private:
    struct Function {
        nvidia::cu::Function handle = nullptr;
        FunctionInfo info; ///< set at load, then read-only
        /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as the function has it now (48 KiB
        /// less its static shared memory until raised); read and raised under m_mutex.
        uint64_t dynamicSharedLimit = 0;
    };
    struct LoadedModule {
        std::weak_ptr<DeviceExecutable> owner; ///< the address may be reused once it expires
        nvidia::cu::Module module = nullptr;
        /// By KernelEntry and variant (true: its texture-only one, KernelEntry::texturedName).
        std::map<std::pair<const void*, bool>, Function> functions;
    };

    /// The primary context current on this thread and the stream made; a CUDA error otherwise.
    Outcome ready();
    /// The function of `entry` in `exe`'s module (loaded on first use), or with `textured` its
    /// texture-only variant. Takes m_modulesMutex; the Function stays where it is while `exe`
    /// lives.
    Outcome function(const std::shared_ptr<DeviceExecutable>& exe, const void* entry,
                     Function*& out, bool textured = false);
    /// `textured`: the kernel's texture-only variant (null: none), launched instead of `fn`
    /// where the launch's images and samplers meet its requirements.
    Outcome launchGrids(const KernelLaunch& launch, const nvidia::KernelEntry& entry, Function& fn,
                        Function* textured, Lane& lane, uint64_t printfBuffer, bool timed,
                        Submitted& out);
    /// The device address of `desc` for the launch being marshalled: its slot (image_slots.hpp),
    /// written first on the stream when it does not hold `desc` yet, with the texture objects
    /// a `sampled` (read_only) image is read through; `content`, when given, what the slot
    /// holds. Called with m_mutex.
    Outcome placeImage(const KernelImageDesc& desc, bool sampled, uint64_t& address,
                       const DeviceImageDesc** content = nullptr);
    /// Makes the texture objects of slot `slot` (texture_objects.hpp); an image or a sampler
    /// without one is read by the image library in software. Called with m_mutex.
    void makeTextures(size_t slot);
    /// The CUDA array copy of a 3D image or image array (texture_objects.hpp: ArrayCopy), made
    /// on first use; null (with the reason logged) where the driver will not make it. Called
    /// with m_mutex.
    nvidia::cu::Array imageArray(const KernelImageDesc& desc, const ArrayCopy& copy);
    /// Queues the copy of `desc`'s storage into its CUDA array where the storage may have
    /// changed since the last copy: after the work already on `lane`, before any lane's later
    /// work (a barrier). Nothing to do for images without an array. Called with m_mutex.
    Outcome refreshArray(const KernelImageDesc& desc, Lane& lane);
    /// Marks the arrays copied from bytes overlapping [begin, end) stale. Called with m_mutex.
    void markStale(const char* begin, const char* end);
    /// Destroys the arrays copied from the storage at `p` (being freed) and the texture objects
    /// that read them. Takes m_mutex.
    void dropArrays(const char* p);
    /// Forgets a slot whose write failed, destroying the texture objects made for it.
    void forgetSlot(const ImageSlots::Placement& p);
    /// m_textureLimits from the device's attributes (once, with the context).
    void readTextureLimits();
    /// m_prefetchStream, where the GPU prefetches (once, with the context).
    void preparePrefetches();
    /// Allocates the printf buffer on first use (device memory) and queues its reset on the
    /// stream. Under m_mutex and the printf lease.
    Outcome resetPrintfBuffer(Lane& lane);
    /// The records of the finished launch that holds the printf lease, decoded with the
    /// formats of `exe`; remembers how much to zero before the next launch.
    Outcome readPrintfBuffer(const DeviceExecutable& exe, PrintfOutput& out);
    void destroyEvents(Submitted& launch);
    /// Guarded launches: a record from the pool (or a new one, cuMemAlloc) for a kernel of
    /// `nargs` arguments, its image in `out.guardImage` (the header zeroed, each argument's
    /// bounds: `addresses` as marshalled), queued on `lane`'s stream into `out.guardRecord`.
    Outcome writeGuardRecord(const KernelLaunch& launch, const std::vector<uint64_t>& addresses,
                             Lane& lane, Submitted& out);
    /// After the launch: reads its record back, gives it to the pool again and says what stopped
    /// the launch (a failed check, the timeout), CL_OUT_OF_RESOURCES with the message.
    Outcome readGuardRecord(Submitted& launch);
    /// The running command's queue's lane, or outside commands the calling thread's (made on
    /// first use), its stream ordered after the latest barrier. Under m_mutex; null with `why`
    /// set when no stream can be made.
    Lane* submitLane(Outcome& why);
    /// A free lane, or a new one with a stream of its own.
    Lane* newLane(Outcome& why);
    /// Makes `lane`'s stream wait (on the GPU) for the latest barrier. Under m_mutex.
    Outcome followBarrier(Lane& lane);
    /// Makes what is queued on the shared stream so far a barrier for every lane. Under
    /// m_mutex.
    Outcome raiseBarrier();
    /// Numbers the work just queued on `lane` into `out` (under m_mutex).
    static void sequence(Lane& lane, Submitted& out);
    /// Records that `lane`'s work up to `seq` has finished.
    static void noteDone(Lane& lane, uint64_t seq);

    const nvidia::CudaDriver& m_cuda;
    nvidia::cu::Device m_device;
    nvidia::GridLimits m_limits;
    uint32_t m_maxSharedOptin;

    std::once_flag m_contextOnce;
    nvidia::cu::Context m_context = nullptr;
    std::string m_contextError;

    std::mutex m_mutex; ///< the stream, Function::dynamicSharedLimit, registrations; a leaf
    /// The shared stream: GL interop, image descriptors. Every lane waits for what it held at
    /// the last barrier (m_barrier, recorded after it, the m_barrierCount-th) before its next
    /// work.
    nvidia::cu::StreamHandle m_stream = nullptr;
    /// Where prefetches go (null: this GPU does not prefetch; see prefetch()).
    nvidia::cu::StreamHandle m_prefetchStream = nullptr;
    nvidia::cu::EventHandle m_barrier = nullptr;
    uint64_t m_barrierCount = 0;
    std::mutex m_lanesMutex; ///< the two below; a leaf
    std::vector<std::unique_ptr<Lane>> m_lanes;
    std::vector<Lane*> m_freeLanes;
    std::map<void*, unsigned> m_registered; ///< cuMemHostRegister'ed pointers and their users
    std::mutex m_modulesMutex;              ///< the module cache; a leaf
    std::map<const DeviceExecutable*, LoadedModule> m_modules;
    /// Image descriptors (under m_mutex): slots shared by all launches, in chunks of managed
    /// memory (never freed: they live as long as the device), and which descriptor each holds.
    ImageSlots m_imageSlots;
    std::vector<DeviceImageDesc*> m_imageChunks;
    /// Pitch-linear texture limits (read with the context; all 0 without texture objects or
    /// with DUET_NVIDIA_TEXTURES=0).
    TextureLimits m_textureLimits;
    /// CUDA arrays holding copies of 3D images and image arrays for their texture objects,
    /// by descriptor bytes (under m_mutex); freed with the image's storage.
    struct ImageArray {
        nvidia::cu::Array array = nullptr;
        const char* begin = nullptr; ///< the linear bytes it copies
        const char* end = nullptr;
        bool stale = true; ///< the bytes may differ from the copy
        nvidia::cu::Memcpy3D copy{};
        KernelImageDesc desc{};
    };
    std::map<std::string, ImageArray> m_arrays;
    std::atomic<size_t> m_arrayCount{0};
    nvidia::cu::EventHandle m_laneMark = nullptr; ///< a lane's work before an array copy

    /// Guard records no launch holds (device memory), by size in bytes; a leaf.
    std::mutex m_guardMutex;
    std::multimap<size_t, nvidia::cu::DevicePtr> m_freeGuardRecords;

    /// The printf lease (Submitted::printfLease); guards the three below. Taken before m_mutex.
    std::mutex m_printfMutex;
    const uint64_t m_printfCapacity;
    nvidia::cu::DevicePtr m_printfBuffer = 0; ///< header + capacity, cuMemAlloc'ed on first use
    /// Data bytes that may be non-zero: what the last decoded launch used, the whole capacity
    /// after a launch whose records were not read.
    uint64_t m_printfDirty = 0;
};

} // namespace nvidia_device
} // namespace duet::rt
