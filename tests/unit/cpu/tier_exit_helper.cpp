// Helper of cpu_tiering_test: queues background compiles of optimised code, then lets the
// process exit while they are queued or running (`tier_exit_helper <kernels> <ms> return|exit`).
#include "compiler/front_end.hpp"
#include "devices/cpu/jit/cpu_toolchain.hpp"
#include "devices/cpu/tiered_code.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <unistd.h>

using namespace duet::rt;

int main(int argc, char** argv) {
    if (argc != 4)
        return 2;
    const int kernels = std::atoi(argv[1]);
    const int ms = std::atoi(argv[2]);
    const std::string how = argv[3];
    unsetenv("DUET_CPU_TIER_UP_SYNC");
    unsetenv("DUET_CPU_TIER_UP_MS");
    // Kernels of their own (the pid in their names): no JIT memo entry from an earlier run.
    std::string source;
    for (int k = 0; k < kernels; ++k)
        source += "__kernel void exit_" + std::to_string(k) + "_" + std::to_string(getpid()) +
                  R"((__global float* out, __global const float* in, uint n) {
    size_t i = get_global_id(0);
    float h = in[i];
    for (uint k = 0; k < n; ++k)
        h = sqrt(h * 1.5f + (float)k) - sin(h);
    out[i] = h;
}
)";
    TargetSpec target = withCpuFrontEnd(TargetSpec{});
    CompileResult c = compileSource(source, "", {}, target);
    if (c.status != CL_SUCCESS) {
        std::fprintf(stderr, "tier-exit: build failed: %s\n", c.log.c_str());
        return 1;
    }
    FinalizeResult f = finalizeForCpu(c.bitcode, "", source, target);
    if (f.status != CL_SUCCESS || !f.executable || !f.executable->tieredCode()) {
        std::fprintf(stderr, "tier-exit: finalize failed: %s\n", f.log.c_str());
        return 1;
    }
    const cpu::TieredCode* tiered = f.executable->tieredCode();
    for (int k = 0; k < kernels; ++k) {
        if (!f.executable->entry(size_t(k))) {
            std::fprintf(stderr, "tier-exit: no quick code for kernel %d\n", k);
            return 1;
        }
        tiered->requestOptimised(size_t(k));
    }
    std::printf("tier-exit: %d queued\n", kernels);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    if (how == "exit")
        std::exit(0); // the executable is never released: exit with its compiles in flight
    return 0;         // f (and its executable) destroyed first, then the statics
}
