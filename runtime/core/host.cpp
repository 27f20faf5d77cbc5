// Facts about the host the devices run on, shared by the CPU device and the GCN model.
#include "core/device.hpp"

#include <sched.h>

#include <thread>

namespace duet::rt {

unsigned usableHostCores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return unsigned(n);
    }
    // More than CPU_SETSIZE cores, or no affinity support: every core the system reports.
    return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace duet::rt
