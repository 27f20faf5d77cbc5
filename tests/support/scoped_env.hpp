// ScopedEnv: an environment variable set (or unset) for one scope, for tests of what the runtime
// reads from the environment at each build (DUET_KERNEL_TIMEOUT, DUET_KERNEL_CHECKS, ...).
#pragma once

#include <cstdlib>
#include <string>

namespace duet::test {

/// Sets `name` to `value` (or, with null, unsets it) until the end of the scope, then restores
/// what it was.
struct ScopedEnv {
    std::string name, old;
    bool had = false;
    ScopedEnv(const char* n, const char* value) : name(n) {
        const char* o = std::getenv(n);
        had = o != nullptr;
        if (had)
            old = o;
        if (value)
            setenv(n, value, 1);
        else
            unsetenv(n);
    }
    ~ScopedEnv() {
        if (had)
            setenv(name.c_str(), old.c_str(), 1);
        else
            unsetenv(name.c_str());
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
};

} // namespace duet::test
