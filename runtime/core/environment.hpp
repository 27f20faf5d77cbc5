// Switches read from the environment, shared by every layer. Header-only; part of core.
#pragma once

#include <cstdlib>

namespace duet::rt {

/// A switch that is on unless the environment sets `name` to a value starting with `0`
/// (`DUET_CPU_PHI_LANES=0`, ...). Read at each call: tests and benchmarks flip such switches
/// between builds, and the JIT memo's key records the value each build saw.
inline bool envSwitchOn(const char* name) {
    const char* value = std::getenv(name);
    return !(value && value[0] == '0');
}

/// A switch that is off unless the environment sets `name` to a value starting with `1`
/// (`DUET_CPU_PERF=1`, `DUET_VERIFY_EACH_PASS=1`, ...). Read at each call, as envSwitchOn.
inline bool envSwitchSet(const char* name) {
    const char* value = std::getenv(name);
    return value && value[0] == '1';
}

} // namespace duet::rt
