// Device-side enqueue on the CPU device, its front: the host functions enqueue_kernel and its
// companions call (jit/device_enqueue_lowering.cpp points the calls at them). They hand their
// commands to the launch's core::DeviceEnqueueSession (core/device_enqueue.hpp), whose children
// the backend runs on the thread pool after their parent.
#pragma once

#include "core/device_enqueue.hpp"
#include "devices/cpu/device_enqueue_hooks.hpp"

#include <cstddef>

namespace duet::rt::cpu {

/// Bytes of CL_QUEUE_SIZE one enqueued command takes besides its block literal.
inline constexpr size_t kDeviceCommandBytes = 128;

/// For the pool threads: makes `session` (and the command now running) the one that the
/// calling thread's enqueue_kernel calls go to, until the scope ends.
class DeviceEnqueueThreadScope {
public:
    explicit DeviceEnqueueThreadScope(DeviceEnqueueSession& session);
    ~DeviceEnqueueThreadScope();
    DeviceEnqueueThreadScope(const DeviceEnqueueThreadScope&) = delete;
    DeviceEnqueueThreadScope& operator=(const DeviceEnqueueThreadScope&) = delete;

private:
    DeviceEnqueueSession* m_previous;
};

} // namespace duet::rt::cpu
