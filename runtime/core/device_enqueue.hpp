// Device-side enqueue's session: the on-device queue of one host launch (the commands its
// kernels and their children enqueue, their device events, wait lists, parent completion,
// profiling, CL_QUEUE_SIZE accounting), shared by the devices. How records arrive is each
// device's front: the CPU's host functions (devices/cpu/device_enqueue.cpp), the GCN device's
// ring decoder (devices/gcn/device_enqueue_ring.cpp).
#pragma once

#include "core/kernel.hpp"

#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

namespace duet::rt {

/// OpenCL C's enqueue_kernel return codes (opencl-c-base.h spells only some of them).
namespace clk {
inline constexpr int kSuccess = 0;
inline constexpr int kEnqueueFailure = -101;
inline constexpr int kInvalidQueue = -102;
inline constexpr int kInvalidNDRange = -160;
inline constexpr int kInvalidEventWaitList = -57;
inline constexpr int kDeviceQueueFull = -161;
inline constexpr int kInvalidArgSize = -51;
inline constexpr int kEventAllocationFailure = -100;
inline constexpr int kProfilingCommandExecTime = 1;
} // namespace clk

/// An enqueue_kernel's ndrange (clang's ndrange_t on 64-bit targets).
struct DeviceNDRange {
    uint32_t workDim;
    uint64_t offset[3];
    uint64_t global[3];
    uint64_t local[3];
};

/// Fills `l`'s dimensions from `nd`: the local size as given, or (all 0) one the device picks:
/// the largest divisor of the global size in dimension 0 up to 64 work-items, 1 in the others.
/// False when `nd` is not a valid ndrange for a kernel of at most `limit` work-items per group.
bool resolveDeviceNDRange(const DeviceNDRange& nd, size_t limit, KernelLaunch& l);

/// The clock device events are stamped with (steady, nanoseconds).
uint64_t deviceEnqueueNowNs();

class Queue;
/// The on-device queue a queue_t (a cl_command_queue handle a kernel got as an argument or from
/// get_default_queue) names, or null: not a live queue, or a host queue.
Queue* onDeviceQueue(void* handle);

struct DeviceInfo;
/// What a device with device-side enqueue reports (the same on every Duet device): supported with
/// a replaceable default queue, out-of-order and profiling on-device queues, 16 KiB preferred and
/// 8 MiB largest CL_QUEUE_SIZE, 4 queues, 1024 events (the spec's full-profile minimums or more).
/// CL_QUEUE_SIZE bounds the records one launch holds at once; what a record takes is the
/// device's (cpu::kDeviceCommandBytes, the GCN ring's 112 bytes plus wait slots).
void reportDeviceEnqueue(DeviceInfo& info);

/// A clk_event_t. Status follows the host's: CL_QUEUED .. CL_COMPLETE, or negative.
struct DeviceEvent {
    int refs = 0; ///< the kernels' references (retain_event/release_event) where the front counts
    int status = CL_QUEUED;
    bool user = false;             ///< create_user_event
    int outstanding = 1;           ///< its command's own run plus children not complete
    int childError = 0;            ///< first failure of a child
    DeviceEvent* parent = nullptr; ///< the command whose completion waits for this one
    uint64_t start = 0, end = 0, complete = 0;
    uint64_t* profileOut = nullptr; ///< capture_event_profiling_info's destination
};

/// One enqueue_kernel (kernelName set) or enqueue_marker.
struct DeviceCommand {
    std::string kernelName; ///< the block kernel; empty for a marker
    DeviceNDRange nd{};
    std::unique_ptr<char, decltype(&std::free)> block{nullptr, &std::free};
    uint32_t blockBytes = 0; ///< the block literal's size (its first field)
    std::vector<size_t> localSizes;
    std::vector<DeviceEvent*> waits;
    DeviceEvent* event = nullptr;
    size_t charge = 0;  ///< bytes of CL_QUEUE_SIZE held while queued
    uint64_t order = 0; ///< when it was queued (the session's count)

    /// Copies the block literal (clang's layout: size, alignment, invoke, captures) into
    /// storage of its own alignment; false when out of memory.
    bool copyBlock(const void* literal);
};

/// The on-device queue of one host launch. A device's backend owns one and uses it under its
/// launch lock, one host launch at a time: begin(), the front's commands, drain(). Fields
/// marked (mutex) may be touched by the front's threads while the launch runs, under mutex.
class DeviceEnqueueSession {
public:
    DeviceEnqueueSession() = default;
    DeviceEnqueueSession(const DeviceEnqueueSession&) = delete;
    DeviceEnqueueSession& operator=(const DeviceEnqueueSession&) = delete;

    /// Runs a child launch to completion (the backend's launch path). Returns CL_SUCCESS or a
    /// negative execution status.
    using RunFn = std::function<cl_int(const KernelLaunch&)>;

    /// Starts a host launch: `launch` is the parent of whatever its work-items enqueue.
    void begin(const KernelLaunch& launch);
    /// Looks up program, executable, device and context of the launch, once; the front calls
    /// it the first time a kernel needs the queue, so a launch that enqueues nothing pays for
    /// nothing. Thread-safe.
    void resolve();
    bool resolved() const { return m_resolved.load(std::memory_order_acquire); }
    /// Runs every command queued since begin() (and the commands those queue) once its wait
    /// list is complete; returns the first failure among them, else CL_SUCCESS. Drops the
    /// session's events and kernels.
    cl_int drain(const RunFn& run);

    // ---- For the fronts (after resolve()) ----
    std::mutex& mutex() { return m_mutex; }
    const Device* device() const { return m_device; }
    Context* context() const { return m_context; }
    /// The command whose work-items run now (null: the host's launch).
    DeviceEvent* current() const { return m_current; }
    /// A new event, owned by the session until drain() ends (mutex).
    DeviceEvent* newEvent();
    /// Whether `p` is one of this session's events with a kernel reference (mutex).
    bool validEvent(const void* p) const;
    /// Drops a kernel reference of `e` (mutex).
    void dropRef(DeviceEvent* e);
    /// One of `e`'s outstanding parts finished with `status` (0 or negative); completes it, and
    /// maybe its parent, when none is left (mutex).
    void settle(DeviceEvent* e, int status);
    /// Queues `cmd`, whose event is set: a kernel becomes a child of current(); its charge
    /// counts against CL_QUEUE_SIZE until it starts (mutex).
    void queue(std::unique_ptr<DeviceCommand> cmd);
    /// Bytes of CL_QUEUE_SIZE that queued commands hold (mutex).
    size_t usedBytes() const { return m_usedBytes; }
    /// Events holding kernel references (CL_DEVICE_MAX_ON_DEVICE_EVENTS), where counted (mutex).
    size_t liveKernelEvents = 0;
    /// The Kernel object of block kernel `name` of the running program; null if there is none.
    Kernel* blockKernel(const char* name);
    /// CL_KERNEL_WORK_GROUP_SIZE of `k` on the session's device.
    size_t workGroupLimit(Kernel& k) const { return m_device ? k.workGroupLimit(*m_device) : 1; }

private:
    /// The earliest queued command whose wait list is complete (mutex); null when none is.
    /// Fails the waiting commands nothing can complete any more.
    std::unique_ptr<DeviceCommand> nextReady(bool& waitFailed, cl_int& result);
    /// The child launch of kernel command `cmd`; CL_SUCCESS or why it cannot run.
    cl_int childLaunch(const DeviceCommand& cmd, KernelLaunch& l);
    void reset();

    std::mutex m_mutex; ///< leaf: everything below but the fields set by resolve()
    /// The host launch (begin() to drain()); what follows is looked up from it by resolve().
    const KernelLaunch* m_launch = nullptr;
    std::atomic<bool> m_resolved{false};
    std::mutex m_resolveMutex;
    // Set by resolve(), read-only until drain() ends.
    Ref<Program> m_program;
    DeviceExecutable* m_executable = nullptr; ///< the parent's; its kernel keeps it alive
    const Device* m_device = nullptr;
    Context* m_context = nullptr;
    DeviceEvent* m_current = nullptr; ///< written by drain() between launches only

    std::vector<std::unique_ptr<DeviceEvent>> m_events;
    std::unordered_set<DeviceEvent*> m_eventSet;
    std::deque<std::unique_ptr<DeviceCommand>> m_ready;    ///< no wait list: FIFO
    std::vector<std::unique_ptr<DeviceCommand>> m_waiting; ///< with a wait list
    size_t m_usedBytes = 0;
    uint64_t m_nextOrder = 0;
    std::map<std::string, Ref<Kernel>> m_kernels; ///< block kernels by name (m_kernelsMutex)
    std::mutex m_kernelsMutex;
};

} // namespace duet::rt
