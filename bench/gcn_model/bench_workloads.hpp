// The model benchmark's workloads (N-body step, triad), shared by duet-gcn-model-bench (which
// compiles the kernels) and duet-gcn-model-replay (which loads saved code, no LLVM).
#pragma once

#include "gcn_compile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace gcnbench {

using namespace gcntest;
using duet::gcn::DispatchStats;
using duet::gcn::Model;
using duet::gcn::ModelConfig;

inline double cpuSeconds() {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct Figure {
    double seconds = 0, waveInst = 0, laneOps = 0;
    double cpu = 0; ///< process CPU seconds of the best run (all threads)
    DispatchStats stats;
};

inline Figure timeDispatch(Launch& l, unsigned threads, int reps) {
    Model model(ModelConfig{.computeUnits = 64, .hostThreads = threads});
    Figure best;
    for (int r = 0; r < reps; ++r) {
        DispatchStats s;
        double c0 = cpuSeconds();
        auto res = model.dispatch(l.state, &s);
        double cpu = cpuSeconds() - c0;
        if (!res) {
            std::fprintf(stderr, "dispatch failed: %s\n", res.error.c_str());
            std::exit(1);
        }
        if (r == 0 || s.seconds < best.seconds) {
            best.seconds = s.seconds;
            best.cpu = cpu;
            best.stats = s;
        }
    }
    best.waveInst = double(best.stats.totalInstructions()) / best.seconds;
    best.laneOps = double(best.stats.valuLaneOps) / best.seconds;
    return best;
}

inline void print(const char* name, unsigned threads, const Figure& f) {
    // Wall-clock rates, then rates per CPU-second (robust when other processes share the host).
    std::printf("%-6s %2u thr  %7.3f s  %7.2f M wave-inst/s  %8.2f M lane-ops/s  |  per CPU-s: "
                "%6.2f M wave-inst  %8.2f M lane-ops  (%llu wave-inst, VALU lanes %.0f%%)\n",
                name, threads, f.seconds, f.waveInst / 1e6, f.laneOps / 1e6,
                double(f.stats.totalInstructions()) / f.cpu / 1e6,
                double(f.stats.valuLaneOps) / f.cpu / 1e6,
                static_cast<unsigned long long>(f.stats.totalInstructions()),
                100.0 * f.stats.laneUtilisation());
}

inline uint64_t ptr(const void* p) {
    return reinterpret_cast<uint64_t>(p);
}

/// Runs both workloads on each host-thread count; returns a process exit code.
inline int runWorkloads(const Kernel& nbody, const Kernel& triad, bool quick,
                        const std::vector<unsigned>& threadCounts) {
    // N-body.
    const uint32_t bodies = quick ? 1024 : 4096;
    std::vector<float> pos(4 * bodies), vel(4 * bodies, 0.0f), posOut(4 * bodies),
        velOut(4 * bodies);
    for (uint32_t i = 0; i < bodies; ++i) {
        float t = float(i) * 0.61803398f;
        pos[4 * i + 0] = std::cos(t * 6.2831853f) * (1.0f + float(i % 97) / 97.0f);
        pos[4 * i + 1] = std::sin(t * 6.2831853f) * (1.0f + float(i % 89) / 89.0f);
        pos[4 * i + 2] = float(i % 31) / 31.0f - 0.5f;
        pos[4 * i + 3] = 1.0f / float(bodies);
    }
    const float dt = 0.001f, eps2 = 0.01f;
    Launch ln;
    pushArg(ln, ptr(pos.data()));
    pushArg(ln, ptr(vel.data()));
    pushArg(ln, ptr(posOut.data()));
    pushArg(ln, ptr(velOut.data()));
    pushArg(ln, bodies);
    pushArg(ln, dt);
    pushArg(ln, eps2);
    uint32_t g[3] = {bodies, 1, 1}, s[3] = {256, 1, 1};
    prepare(ln, nbody, g, s);
    Figure n1 = timeDispatch(ln, threadCounts.front(), quick ? 1 : 2);
    // Validate a few bodies against a double-precision host computation.
    for (uint32_t i = 0; i < bodies; i += bodies / 16) {
        double acc[3] = {0, 0, 0}, mag = 0;
        for (uint32_t j = 0; j < bodies; ++j) {
            double d[3] = {pos[4 * j] - double(pos[4 * i]), pos[4 * j + 1] - double(pos[4 * i + 1]),
                           pos[4 * j + 2] - double(pos[4 * i + 2])};
            double inv = 1.0 / std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2);
            double f = pos[4 * j + 3] * inv * inv * inv;
            for (int c = 0; c < 3; ++c)
                acc[c] += f * d[c], mag += std::fabs(f * d[c]);
        }
        for (int c = 0; c < 3; ++c) {
            if (std::fabs(velOut[4 * i + c] - acc[c] * dt) > 1e-4 * mag * dt + 1e-9) {
                std::printf("N-body FAIL: body %u component %d: model %g, host %g\n", i, c,
                            double(velOut[4 * i + c]), acc[c] * dt);
                return 1;
            }
        }
    }
    print("nbody", threadCounts.front(), n1);
    for (size_t t = 1; t < threadCounts.size(); ++t)
        print("nbody", threadCounts[t], timeDispatch(ln, threadCounts[t], quick ? 1 : 2));

    // Triad.
    const uint32_t n = quick ? (1u << 20) : (1u << 22);
    std::vector<float> a(n), b(n), c(n);
    for (uint32_t i = 0; i < n; ++i)
        b[i] = float(i % 1000), c[i] = float(i % 7);
    Launch lt;
    pushArg(lt, ptr(a.data()));
    pushArg(lt, ptr(b.data()));
    pushArg(lt, ptr(c.data()));
    pushArg(lt, 3.0f);
    uint32_t gt[3] = {n, 1, 1};
    prepare(lt, triad, gt, s);
    Figure t1 = timeDispatch(lt, threadCounts.front(), quick ? 2 : 3);
    for (uint32_t i = 0; i < n; ++i)
        if (a[i] != b[i] + 3.0f * c[i]) {
            std::printf("triad FAIL at %u\n", i);
            return 1;
        }
    print("triad", threadCounts.front(), t1);
    for (size_t t = 1; t < threadCounts.size(); ++t)
        print("triad", threadCounts[t], timeDispatch(lt, threadCounts[t], quick ? 2 : 3));
    std::printf("\nnbody: %llu VALU instructions, %u VGPRs, %u SGPRs, %u waves/SIMD (limit: %s)\n",
                static_cast<unsigned long long>(n1.stats.valuInstructions), n1.stats.vgprs,
                n1.stats.sgprs, n1.stats.wavesPerSimd, n1.stats.occupancyLimit.c_str());
    return 0;
}

} // namespace gcnbench
