// The host functions that the CPU device's generated code calls for device-side enqueue, by name
// (defined in device_enqueue.cpp; the JIT in jit/finalize.cpp binds them). No core types here.
#pragma once

#include <cstddef>

namespace duet::rt::cpu {

struct DeviceEnqueueHook {
    const char* name; ///< the symbol generated code calls (clang's or a builtin's mangled name)
    void* address;
};
/// Every hook; `count` receives their number.
const DeviceEnqueueHook* deviceEnqueueHooks(size_t& count);

} // namespace duet::rt::cpu
