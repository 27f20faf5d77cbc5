// Device-side enqueue on the CPU device: the host functions enqueue_kernel and its companions
// call (jit/device_enqueue_lowering.cpp points the calls at them), and the on-device queue of one
// host launch, whose child kernels run on the thread pool after their parent.
#pragma once

#include "core/kernel.hpp"
#include "devices/cpu/device_enqueue_hooks.hpp"

#include <CL/cl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace duet::rt::cpu {

/// clang's ndrange_t (opencl-c-base.h), as kernels pass it.
struct NDRangeT {
    uint32_t workDim;
    uint64_t offset[3];
    uint64_t global[3];
    uint64_t local[3];
};

/// Bytes of CL_QUEUE_SIZE one enqueued command takes besides its block literal.
inline constexpr size_t kDeviceCommandBytes = 128;

struct DeviceEnqueueState;

/// The on-device queue of one host launch: every command its kernels (and their children)
/// enqueue, with their device events. Owned by the CPU backend and used under its launch lock,
/// one host launch at a time; the hooks that kernels call reach it through a thread-local set
/// around each work-group range.
class DeviceEnqueueSession {
public:
    DeviceEnqueueSession();
    ~DeviceEnqueueSession();

    /// Runs a child launch to completion (the backend's launch path). Returns CL_SUCCESS or a
    /// negative execution status.
    using RunFn = std::function<cl_int(const KernelLaunch&)>;

    /// Starts a host launch: `launch` is the parent of whatever its work-items enqueue.
    void begin(const KernelLaunch& launch);
    /// Runs every command enqueued since begin() (and the commands those enqueue) once its
    /// wait list is complete; returns the first failure among them, else CL_SUCCESS. Drops the
    /// session's events and kernels.
    cl_int drain(const RunFn& run);

    /// For the pool threads: makes this session (and the command now running) the one that
    /// the calling thread's enqueue_kernel calls go to, until the scope ends.
    class ThreadScope {
    public:
        explicit ThreadScope(DeviceEnqueueSession& s);
        ~ThreadScope();

    private:
        void* m_previous;
    };

    DeviceEnqueueState& state() { return *m_state; }

private:
    std::unique_ptr<DeviceEnqueueState> m_state;
};

} // namespace duet::rt::cpu
