// Facts about the host the devices run on, shared by the CPU device and the GCN model.
#include "core/device.hpp"

#include <sched.h>

#include <fstream>
#include <string>
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

std::array<size_t, 2> DeviceBackend::freeGlobalMemoryKiB() const {
    // MemAvailable: what the kernel says can be allocated without swapping.
    std::ifstream in("/proc/meminfo");
    std::string key;
    size_t kib = 0;
    while (in >> key >> kib) {
        if (key == "MemAvailable:")
            return {kib, kib};
        in.ignore(256, '\n');
    }
    return {0, 0};
}

} // namespace duet::rt
