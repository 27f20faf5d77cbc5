// What every device's build reads of the run-time guards: DUET_KERNEL_CHECKS (DUET_CPU_CHECKS)
// and DUET_KERNEL_TIMEOUT.
#include "core/toolchain.hpp"

#include <cmath>
#include <cstdlib>

namespace duet::rt {

namespace {

bool on(const char* name) {
    const char* e = std::getenv(name);
    return e && *e && *e != '0';
}

} // namespace

bool kernelChecksRequested() {
    // DUET_KERNEL_CHECKS decides when set; DUET_CPU_CHECKS (the CPU device's first name for
    // it) when not.
    if (const char* e = std::getenv("DUET_KERNEL_CHECKS"); e && *e)
        return *e != '0';
    return on("DUET_CPU_CHECKS");
}

ExecutionGuards executionGuardsFromEnvironment(std::string& log) {
    ExecutionGuards g;
    g.boundsChecks = kernelChecksRequested();
    if (const char* e = std::getenv("DUET_KERNEL_TIMEOUT"); e && *e) {
        char* end = nullptr;
        const double s = std::strtod(e, &end);
        if (end && *end == '\0' && std::isfinite(s) && s > 0)
            g.timeoutSeconds = s;
        else if (!(end && *end == '\0' && s == 0))
            log += std::string("warning: DUET_KERNEL_TIMEOUT=") + e +
                   " is not a number of seconds; kernels run without a timeout\n";
    }
    return g;
}

} // namespace duet::rt
