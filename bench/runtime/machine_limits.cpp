// The host machine's STREAM triad bandwidth and FP32 FMA peak (machine_limits.hpp).
#include "machine_limits.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace duet::bench {

namespace {

using Clock = std::chrono::steady_clock;

/// Runs `work(thread)` on `threads` threads (the caller is thread 0) `rounds` times, all
/// starting together; returns the best round's wall time in seconds.
double bestParallelRound(unsigned threads, int rounds, const std::function<void(unsigned)>& work) {
    std::barrier sync(static_cast<std::ptrdiff_t>(threads));
    std::vector<std::jthread> helpers;
    for (unsigned t = 1; t < threads; ++t)
        helpers.emplace_back([&, t] {
            for (int r = 0; r < rounds; ++r) {
                sync.arrive_and_wait();
                work(t);
                sync.arrive_and_wait();
            }
        });
    double best = 1e30;
    for (int r = 0; r < rounds; ++r) {
        sync.arrive_and_wait();
        const Clock::time_point start = Clock::now();
        work(0);
        sync.arrive_and_wait();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    }
    return best;
}

struct FreeDeleter {
    void operator()(float* p) const { std::free(p); }
};
using FloatArray = std::unique_ptr<float[], FreeDeleter>;

FloatArray alignedFloats(size_t n) {
    const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    return FloatArray(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

void triadPlain(float* a, const float* b, const float* c, float s, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
        a[i] = b[i] + s * c[i];
}

#if defined(__x86_64__)
/// The triad with non-temporal stores, four floats at a time (SSE: every x86-64 has it);
/// `begin` and `end` are multiples of 4 and the arrays 16-byte aligned.
void triadStreaming(float* a, const float* b, const float* c, float s, size_t begin, size_t end) {
    const __m128 vs = _mm_set1_ps(s);
    for (size_t i = begin; i < end; i += 4)
        _mm_stream_ps(a + i, _mm_add_ps(_mm_load_ps(b + i), _mm_mul_ps(vs, _mm_load_ps(c + i))));
    _mm_sfence();
}

// FP32 FMA chains: enough independent accumulators to cover the FMA latency on every pipe of
// current cores (4 cycles x 2 pipes); a*m + c converges to c / (1 - m), no denormals, no
// overflow. Written once over GCC's vector types (this file is built with -ffp-contract=fast, so
// a*m + c is one FMA where the caller's target has them), instantiated in a function per target.
// Returns its flops (2 a lane an operation pair) and stores a sum nothing can drop.
constexpr int kChains = 12;

template <class V>
__attribute__((always_inline)) inline double chains(long iterations, float* sink) {
    constexpr int lanes = int(sizeof(V) / sizeof(float));
    V acc[kChains], m, c;
    for (int l = 0; l < lanes; ++l) {
        m[l] = 0.9999f;
        c[l] = 0.0001f;
    }
    for (int i = 0; i < kChains; ++i)
        acc[i] = c * float(i);
    for (long k = 0; k < iterations; ++k)
#pragma GCC unroll 12
        for (int i = 0; i < kChains; ++i)
            acc[i] = acc[i] * m + c;
    V sum = acc[0];
    for (int i = 1; i < kChains; ++i)
        sum += acc[i];
    *sink = 0;
    for (int l = 0; l < lanes; ++l)
        *sink += sum[l];
    return double(iterations) * kChains * lanes * 2;
}

typedef float Floats16 __attribute__((vector_size(64)));
typedef float Floats8 __attribute__((vector_size(32)));
typedef float Floats4 __attribute__((vector_size(16)));

__attribute__((target("avx512f,fma"))) double fmaChains512(long iterations, float* sink) {
    return chains<Floats16>(iterations, sink);
}

__attribute__((target("avx2,fma"))) double fmaChains256(long iterations, float* sink) {
    return chains<Floats8>(iterations, sink);
}

/// SSE has no FMA: a multiply and an add per lane, counted as two flops.
double mulAddChains128(long iterations, float* sink) {
    return chains<Floats4>(iterations, sink);
}
#endif

} // namespace

MachineLimits measureMachine(size_t elements, int repeats, unsigned threads) {
    MachineLimits limits;
    if (FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &limits.loadAverage) != 1)
            limits.loadAverage = -1;
        std::fclose(f);
    }
    if (threads == 0)
        threads = std::max(1u, std::thread::hardware_concurrency());
    limits.threads = threads;
    elements = elements / 64 * 64;
    FloatArray a = alignedFloats(elements), b = alignedFloats(elements),
               c = alignedFloats(elements);
    if (!a || !b || !c || elements == 0)
        return limits;
    // Each thread's share is a multiple of 16 floats (64 bytes), first touched by that thread.
    auto share = [&](unsigned t, size_t& begin, size_t& end) {
        const size_t blocks = elements / 16;
        begin = blocks * t / threads * 16;
        end = blocks * (t + 1) / threads * 16;
    };
    bestParallelRound(threads, 1, [&](unsigned t) {
        size_t begin, end;
        share(t, begin, end);
        for (size_t i = begin; i < end; ++i) {
            a[i] = 0.0f;
            b[i] = float(i % 1024);
            c[i] = float(i % 7);
        }
    });
    const double bytes = 3.0 * double(elements) * sizeof(float);
    float* pa = a.get();
    const float *pb = b.get(), *pc = c.get();
    double t = bestParallelRound(threads, repeats + 1, [&](unsigned th) {
        size_t begin, end;
        share(th, begin, end);
        triadPlain(pa, pb, pc, 3.0f, begin, end);
    });
    limits.streamGBs = bytes / t * 1e-9;
#if defined(__x86_64__)
    t = bestParallelRound(threads, repeats + 1, [&](unsigned th) {
        size_t begin, end;
        share(th, begin, end);
        triadStreaming(pa, pb, pc, 3.0f, begin, end);
    });
    limits.streamNtGBs = bytes / t * 1e-9;

    double (*chains)(long, float*) = mulAddChains128;
    limits.isa = "SSE (multiply + add)";
    if (__builtin_cpu_supports("avx512f")) {
        chains = fmaChains512;
        limits.isa = "AVX-512F FMA";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        chains = fmaChains256;
        limits.isa = "AVX2 FMA";
    }
    // About 0.05-0.1 s a round on current cores; the first round also wakes the clocks up.
    const long iterations = 20'000'000;
    std::vector<float> sinks(threads * 16);
    double flops = 0;
    t = bestParallelRound(threads, 3, [&](unsigned th) {
        const double f = chains(iterations, &sinks[th * 16]);
        if (th == 0)
            flops = f;
    });
    limits.peakGflops = flops * threads / t * 1e-9;
#endif
    return limits;
}

} // namespace duet::bench
