// The host functions that the CPU device's generated code calls for device-side enqueue, by name:
// device_enqueue.cpp defines and registers them, the JIT (jit/finalize.cpp) binds them. The
// table is kept in jit/device_enqueue_lowering.cpp, so that the code generator does not pull the
// runtime's objects into programs that link it alone (its unit tests). No core types here.
#pragma once

#include <cstddef>

namespace duet::rt::cpu {

struct DeviceEnqueueHook {
    const char* name; ///< the symbol generated code calls (clang's or a builtin's mangled name)
    void* address;
};
/// Every hook; `count` receives their number (0 until device_enqueue.cpp registered them, as it
/// does when it is linked in: a program with enqueue_kernel then fails to build, naming them).
const DeviceEnqueueHook* deviceEnqueueHooks(size_t& count);
/// Called once, by device_enqueue.cpp's static initialiser.
void registerDeviceEnqueueHooks(const DeviceEnqueueHook* hooks, size_t count);

} // namespace duet::rt::cpu
