// Software GCN model: real LLVM-compiled gfx900 kernels run on the model, checked against
// results computed on the host; plus the error paths and the statistics.
#include "gcn_compile.hpp"

#include <catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

using namespace gcntest;
using duet::gcn::DispatchResult;
using duet::gcn::DispatchStats;
using duet::gcn::InstClass;
using duet::gcn::Model;
using duet::gcn::ModelConfig;

namespace {

const char* const kPrelude = R"(
#define LID (__builtin_amdgcn_workitem_id_x())
#define GRP (__builtin_amdgcn_workgroup_id_x())
typedef unsigned int uint;
typedef unsigned long ulong;
)";

struct Result {
    DispatchResult result;
    DispatchStats stats;
};

Result run(const Kernel& k, Launch& l, uint32_t global, uint32_t local, unsigned threads = 2) {
    uint32_t g[3] = {global, 1, 1}, s[3] = {local, 1, 1};
    prepare(l, k, g, s);
    Model model(ModelConfig{.computeUnits = 64, .hostThreads = threads});
    Result r;
    r.result = model.dispatch(l.state, &r.stats);
    return r;
}

uint64_t ptr(const void* p) {
    return reinterpret_cast<uint64_t>(p);
}

} // namespace

TEST_CASE("vector add: launch, kernarg SMEM loads, global loads and stores", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void vadd(__global const float* a, __global const float* b, __global float* c, uint n) {
            uint i = GRP * 64 + LID;
            if (i < n) c[i] = a[i] + b[i] * 2.0f;
        })",
                             "vadd");
    const uint32_t n = 1000;
    std::vector<float> a(n), b(n), c(n, -1.0f);
    for (uint32_t i = 0; i < n; ++i)
        a[i] = float(i) * 0.5f, b[i] = 3.0f - float(i);
    Launch l;
    pushArg(l, ptr(a.data()));
    pushArg(l, ptr(b.data()));
    pushArg(l, ptr(c.data()));
    pushArg(l, n);
    Result r = run(k, l, 1024, 64);
    REQUIRE(r.result.error == "");
    for (uint32_t i = 0; i < n; ++i)
        REQUIRE(c[i] == a[i] + b[i] * 2.0f);
    CHECK(r.stats.workGroups == 16);
    CHECK(r.stats.wavefronts == 16);
    CHECK(r.stats.wavefrontInstructions[size_t(InstClass::Smem)] >= 16);
    CHECK(r.stats.wavefrontInstructions[size_t(InstClass::Valu)] > 0);
}

TEST_CASE("partial work-group from USE_THREAD_DIMENSIONS runs only the live lanes", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void fill(__global uint* out) { out[GRP * 64 + LID] = GRP * 1000 + LID; })",
                             "fill");
    std::vector<uint32_t> out(192, 0xdeadbeef);
    Launch l;
    pushArg(l, ptr(out.data()));
    Result r = run(k, l, 150, 64); // 2 full groups + 22 items
    REQUIRE(r.result.error == "");
    for (uint32_t i = 0; i < 192; ++i) {
        if (i < 150)
            REQUIRE(out[i] == (i / 64) * 1000 + i % 64);
        else
            REQUIRE(out[i] == 0xdeadbeef);
    }
    CHECK(r.stats.valuLaneOps < r.stats.valuInstructions * 64);
}

TEST_CASE("SALU, scalar loops and divergent per-lane loops with EXEC masking", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void loops(__global uint* out, uint iters) {
            uint lid = LID;
            uint acc = 0;
            for (uint i = 0; i < iters; ++i) acc = acc * 31u + (i ^ (i >> 3));   // uniform
            uint d = 0, x = lid;
            while (x != 1 && x != 0) { x = (x & 1) ? 3 * x + 1 : x >> 1; ++d; } // divergent
            out[GRP * 64 + lid] = acc + d * 7u + (lid % 3 == 0 ? 100u : 0u);
        })",
                             "loops");
    auto collatz = [](uint32_t x) {
        uint32_t d = 0;
        while (x != 1 && x != 0) {
            x = (x & 1) ? 3 * x + 1 : x >> 1;
            ++d;
        }
        return d;
    };
    const uint32_t iters = 77;
    uint32_t acc = 0;
    for (uint32_t i = 0; i < iters; ++i)
        acc = acc * 31u + (i ^ (i >> 3));
    std::vector<uint32_t> out(128);
    Launch l;
    pushArg(l, ptr(out.data()));
    pushArg(l, iters);
    Result r = run(k, l, 128, 64);
    REQUIRE(r.result.error == "");
    for (uint32_t i = 0; i < 128; ++i)
        REQUIRE(out[i] == acc + collatz(i % 64) * 7u + (i % 64 % 3 == 0 ? 100u : 0u));
    // Divergence: lanes idle while others iterate.
    CHECK(r.stats.laneUtilisation() < 0.9);
    CHECK(r.stats.laneUtilisation() > 0.0);
    CHECK(r.stats.wavefrontInstructions[size_t(InstClass::Branch)] > 2 * iters);
    CHECK(r.stats.wavefrontInstructions[size_t(InstClass::Salu)] > iters);
}

TEST_CASE("scalar ALU instructions through inline assembly", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void salu(__global uint* out, uint a, uint b) {
            uint r0, r1, r2, r3, r4, r5;
            __asm__ volatile("s_brev_b32 %0, %1" : "=s"(r0) : "s"(a));
            __asm__ volatile("s_bcnt1_i32_b32 %0, %1" : "=s"(r1) : "s"(a));
            __asm__ volatile("s_ff1_i32_b32 %0, %1" : "=s"(r2) : "s"(b));
            __asm__ volatile("s_bfe_u32 %0, %1, 0x80004" : "=s"(r3) : "s"(a));   // 8 bits at 4
            __asm__ volatile("s_bfe_i32 %0, %1, 0x80004" : "=s"(r4) : "s"(a));
            __asm__ volatile("s_flbit_i32 %0, %1" : "=s"(r5) : "s"(b));
            if (LID == 0) { out[0] = r0; out[1] = r1; out[2] = r2; out[3] = r3; out[4] = r4; out[5] = r5; }
        })",
                             "salu");
    std::vector<uint32_t> out(6);
    Launch l;
    pushArg(l, ptr(out.data()));
    pushArg(l, 0x12345f80u);
    pushArg(l, 0xfff0f000u);
    Result r = run(k, l, 64, 64);
    REQUIRE(r.result.error == "");
    CHECK(out[0] == 0x01fa2c48u);
    CHECK(out[1] == 12u);
    CHECK(out[2] == 12u);
    CHECK(out[3] == 0xf8u);
    CHECK(out[4] == 0xfffffff8u);
    CHECK(out[5] == 12u); // first bit differing from the sign, counted from the MSB
}

TEST_CASE("VALU float: IEEE fdiv expansion, sqrt, min/max NaN rules, conversions", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void fmath(__global const float* a, __global const float* b, __global float* q,
                            __global float* s, __global float* mn, __global int* cv) {
            uint i = GRP * 64 + LID;
            q[i] = a[i] / b[i];
            s[i] = __builtin_sqrtf(__builtin_fabsf(a[i]));
            mn[i] = __builtin_fminf(a[i], b[i]);
            cv[i] = (int)(a[i] * 1000.0f);
        })",
                             "fmath", {"-cl-fp32-correctly-rounded-divide-sqrt"});
    const uint32_t n = 256;
    std::vector<float> a(n), b(n), q(n), s(n), mn(n);
    std::vector<int32_t> cv(n);
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> mant(1.0f, 2.0f);
    std::uniform_int_distribution<int> ex(-40, 40);
    for (uint32_t i = 0; i < n; ++i) {
        a[i] = std::ldexp(mant(rng), ex(rng)) * (i & 1 ? -1.0f : 1.0f);
        b[i] = std::ldexp(mant(rng), ex(rng));
    }
    // Special values: zeros, infinities, NaN, denormals, huge/tiny quotients.
    a[0] = 0.0f, b[0] = 0.0f;
    a[1] = 1.0f, b[1] = 0.0f;
    a[2] = INFINITY, b[2] = INFINITY;
    a[3] = NAN, b[3] = 2.0f;
    a[4] = 1e-40f, b[4] = 3.0f;      // denormal numerator
    a[5] = 3.0e38f, b[5] = 1.0e-5f;  // overflow to inf
    a[6] = 1.0e-30f, b[6] = 1.0e20f; // underflows to a denormal quotient
    a[7] = 7.0f, b[7] = 1e-40f;      // denormal denominator
    a[8] = 1.0f, b[8] = 3.0e38f;     // huge denominator
    a[9] = 2.0f, b[9] = NAN;
    Launch l;
    for (void* p : {(void*)a.data(), (void*)b.data(), (void*)q.data(), (void*)s.data(),
                    (void*)mn.data(), (void*)cv.data()})
        pushArg(l, ptr(p));
    Result r = run(k, l, n, 64);
    REQUIRE(r.result.error == "");
    for (uint32_t i = 0; i < n; ++i) {
        INFO("i=" << i << " a=" << a[i] << " b=" << b[i] << " q=" << q[i]);
        float want = a[i] / b[i];
        if (std::isnan(want))
            REQUIRE(std::isnan(q[i]));
        else
            REQUIRE(q[i] == want); // correctly rounded, denormals included
        if (std::isnan(a[i]))
            REQUIRE(std::isnan(s[i]));
        else
            REQUIRE(s[i] == std::sqrt(std::fabs(a[i])));
        float wantMin = std::fmin(a[i], b[i]);
        if (std::isnan(wantMin))
            REQUIRE(std::isnan(mn[i]));
        else
            REQUIRE(mn[i] == wantMin); // NaN operand yields the other operand
    }
    CHECK(cv[10] == int32_t(a[10] * 1000.0f));
}

TEST_CASE("LDS reduction with barriers across the 4 waves of a 256-item group", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void reduce(__global const uint* in, __global uint* out) {
            __local uint tmp[256];
            uint lid = LID;
            tmp[lid] = in[GRP * 256 + lid];
            __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
            __builtin_amdgcn_s_barrier();
            __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
            for (uint s = 128; s > 0; s >>= 1) {
                if (lid < s) tmp[lid] += tmp[lid + s];
                __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
                __builtin_amdgcn_s_barrier();
                __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
            }
            if (lid == 0) out[GRP] = tmp[0];
        })",
                             "reduce");
    const uint32_t groups = 8;
    std::vector<uint32_t> in(groups * 256), out(groups);
    for (uint32_t i = 0; i < in.size(); ++i)
        in[i] = i * 7 + 3;
    Launch l;
    pushArg(l, ptr(in.data()));
    pushArg(l, ptr(out.data()));
    Result r = run(k, l, groups * 256, 256, 3);
    REQUIRE(r.result.error == "");
    for (uint32_t g = 0; g < groups; ++g) {
        uint64_t sum = 0;
        for (uint32_t i = 0; i < 256; ++i)
            sum += in[g * 256 + i];
        REQUIRE(out[g] == uint32_t(sum));
    }
    CHECK(r.stats.wavefronts == groups * 4);
    CHECK(r.stats.wavefrontInstructions[size_t(InstClass::Barrier)] >= groups * 4 * 9);
    CHECK(r.stats.wavefrontInstructions[size_t(InstClass::Lds)] > 0);
    CHECK(r.stats.ldsBytesPerGroup == 1024);
    std::string summary = r.stats.summary();
    CHECK(summary.find("wavefronts 32") != std::string::npos);
    CHECK(summary.find("barrier") != std::string::npos);
    CHECK(summary.find("occupancy") != std::string::npos);
}

// Checked barriers (DispatchGuards::checkBarriers), on hand-placed s_barrier instructions: the
// compiler would keep legal code from any of these shapes.
TEST_CASE("checked barriers: divergence within a wave, between waves, and EXEC 0", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void shapes(__global uint* out, uint shape) {
            uint wave = __builtin_amdgcn_readfirstlane(LID) / 64;
            if (shape == 0) {          // a legal barrier over two waves
                __asm__ volatile("s_barrier");
            } else if (shape == 1) {   // lanes 40-63 of wave 0 off at the barrier
                if (LID < 40 || wave == 1)
                    __asm__ volatile("s_barrier");
            } else if (shape == 2) {   // the two waves at two different barriers
                if (wave == 0)
                    __asm__ volatile("s_barrier");
                else
                    __asm__ volatile("s_nop 0\n s_barrier");
            } else {                   // wave 1 passes its barrier with EXEC 0, then ends
                if (wave == 1)
                    __asm__ volatile("s_mov_b64 s[40:41], exec\n s_mov_b64 exec, 0\n "
                                     "s_barrier\n s_mov_b64 exec, s[40:41]" ::: "s40", "s41");
                else
                    __asm__ volatile("s_nop 1\n s_barrier");
            }
            out[LID] = shape + 1;
        })",
                             "shapes");
    using duet::gcn::BarrierDivergence;
    struct Case {
        uint32_t shape;
        bool diverges;
        uint32_t first, other;
        BarrierDivergence::Stop firstStop, otherStop;
    };
    using Stop = BarrierDivergence::Stop;
    const Case cases[] = {{0, false, 0, 0, Stop::Barrier, Stop::Barrier},
                          {1, true, 0, 40, Stop::Barrier, Stop::Skipped},
                          {2, true, 0, 64, Stop::Barrier, Stop::Barrier},
                          {3, true, 0, 64, Stop::Barrier, Stop::End}};
    for (const Case& c : cases) {
        INFO("shape " << c.shape);
        std::vector<uint32_t> out(128, 0);
        Launch l;
        pushArg(l, ptr(out.data()));
        pushArg(l, c.shape);
        uint32_t g[3] = {128, 1, 1}, sz[3] = {128, 1, 1};
        prepare(l, k, g, sz);
        Model model(ModelConfig{.computeUnits = 8, .hostThreads = 1});
        // Unchecked, every shape runs to the end, as on hardware.
        REQUIRE(model.dispatch(l.state).error == "");
        CHECK(out == std::vector<uint32_t>(128, c.shape + 1));
        duet::gcn::DispatchGuards guards;
        guards.checkBarriers = true;
        DispatchResult r = model.dispatch(l.state, nullptr, &guards);
        REQUIRE(bool(r) == !c.diverges);
        if (!c.diverges)
            continue;
        REQUIRE(r.divergence);
        CHECK(r.error.find("barrier divergence") != std::string::npos);
        CHECK(r.divergence->localId[0][0] == c.first);
        CHECK(r.divergence->localId[1][0] == c.other);
        CHECK(r.divergence->stop[0] == c.firstStop);
        CHECK(r.divergence->stop[1] == c.otherStop);
    }
}

TEST_CASE("LDS bank conflicts: a stride-32 dword pattern serialises, stride 1 does not",
          "[gcn_model]") {
    auto conflicts = [](uint32_t stride) {
        Kernel k = compileKernel(std::string(kPrelude) + R"(
            __kernel void bank(__global uint* out, uint stride) {
                __local uint tmp[64 * 33];
                tmp[(LID * stride) % (64 * 33)] = LID;
                __builtin_amdgcn_s_barrier();
                out[LID] = tmp[(LID * stride) % (64 * 33)];
            })",
                                 "bank");
        std::vector<uint32_t> out(64);
        Launch l;
        pushArg(l, ptr(out.data()));
        pushArg(l, stride);
        Result r = run(k, l, 64, 64);
        REQUIRE(r.result.error == "");
        for (uint32_t i = 0; i < 64; ++i)
            REQUIRE(out[i] == i);
        return r.stats.ldsBankConflictCycles;
    };
    CHECK(conflicts(1) == 0);
    // stride 32: the 32 lanes of a half-wave all hit bank 0 -> 31 extra cycles per half-wave,
    // for the write and the read.
    CHECK(conflicts(32) == 2 * 2 * 31);
    CHECK(conflicts(2) == 2 * 2 * 1); // two distinct dwords in every even bank
    CHECK(conflicts(33) == 0);        // odd stride: every lane its own bank
}

TEST_CASE("LDS: overlapping lanes, broadcast reads and partial EXEC", "[gcn_model]") {
    // ds_write_b64 with lanes 4 bytes apart: each dword is written by two lanes; as on
    // hardware (and in the model's lane order), the higher lane's data stays. Then a b128
    // broadcast read (every lane the same address) in all lanes and in the odd lanes only.
    Kernel k = compileKernel(std::string(kPrelude) + R"CL(
        typedef uint uint4 __attribute__((ext_vector_type(4)));
        __kernel void overlap(__global uint* out) {
            __local uint lds[96];
            uint lid = LID;
            uint lo = lid, hi = lid + 100;
            __asm__ volatile("ds_write_b64 %0, %1\n s_waitcnt lgkmcnt(0)"
                             :: "v"(lid * 4), "v"((ulong)hi << 32 | lo) : "memory");
            if (lid < 31) lds[66 + lid] = lid * 3 + 1;
            __builtin_amdgcn_s_barrier();
            out[lid] = lds[lid];
            if (lid == 0) out[64] = lds[64];
            uint4 all;
            __asm__ volatile("ds_read_b128 %0, %1 offset:264\n s_waitcnt lgkmcnt(0)"
                             : "=v"(all) : "v"(0u) : "memory");
            out[65 + lid] = all.x + all.y * 10 + all.z * 100 + all.w * 1000;
            uint4 odd = (uint4)(7);
            if (lid & 1)
                __asm__ volatile("ds_read_b128 %0, %1 offset:8\n s_waitcnt lgkmcnt(0)"
                                 : "+v"(odd) : "v"(lid * 0) : "memory");
            out[129 + lid] = odd.x + odd.y + odd.z + odd.w;
        })CL",
                             "overlap");
    std::vector<uint32_t> out(193, 0xdeadbeef);
    Launch l;
    pushArg(l, ptr(out.data()));
    Result r = run(k, l, 64, 64);
    REQUIRE(r.result.error == "");
    for (uint32_t i = 0; i < 64; ++i)
        REQUIRE(out[i] == i); // lane i's low dword overwrote lane i-1's high one
    CHECK(out[64] == 163);    // lane 63's high dword
    // lds[66..69] = 1, 4, 7, 10
    for (uint32_t i = 0; i < 64; ++i)
        REQUIRE(out[65 + i] == 1 + 4 * 10 + 7 * 100 + 10 * 1000);
    for (uint32_t i = 0; i < 64; ++i)
        REQUIRE(out[129 + i] == ((i & 1) ? 2 + 3 + 4 + 5 : 4 * 7));
}

TEST_CASE("global atomics are atomic across host threads, with returns", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void atom(volatile __global uint* counter, volatile __global int* mx,
                           __global uint* slots) {
            uint i = GRP * 64 + LID;
            uint old = __opencl_atomic_fetch_add((volatile __global atomic_uint*)counter, 1u,
                                                 __ATOMIC_RELAXED, __OPENCL_MEMORY_SCOPE_DEVICE);
            slots[old] = i;
            __opencl_atomic_fetch_max((volatile __global atomic_int*)mx, (int)(i * 37 % 1001),
                                      __ATOMIC_RELAXED, __OPENCL_MEMORY_SCOPE_DEVICE);
        })",
                             "atom");
    const uint32_t n = 64 * 64;
    uint32_t counter = 0;
    int32_t mx = -5;
    std::vector<uint32_t> slots(n, ~0u);
    Launch l;
    pushArg(l, ptr(&counter));
    pushArg(l, ptr(&mx));
    pushArg(l, ptr(slots.data()));
    Result r = run(k, l, n, 64, 4);
    REQUIRE(r.result.error == "");
    CHECK(counter == n);
    int32_t want = 0;
    for (uint32_t i = 0; i < n; ++i)
        want = std::max<int32_t>(want, int32_t(i * 37 % 1001));
    CHECK(mx == want);
    std::vector<uint32_t> sorted = slots;
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t i = 0; i < n; ++i)
        REQUIRE(sorted[i] == i); // every return value unique
}

TEST_CASE("scratch: a private array indexed dynamically goes through swizzled MUBUF",
          "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void priv(__global const uint* idx, __global uint* out) {
            uint p[48];
            uint lid = LID;
            for (uint i = 0; i < 48; ++i) p[i] = i * lid + 5;
            uint j = idx[GRP * 64 + lid] % 48;
            p[j] += 1000;
            out[GRP * 64 + lid] = p[j] + p[(j * 7) % 48];
        })",
                             "priv");
    REQUIRE((k.rsrc2 & 1) == 1); // SCRATCH_EN
    const uint32_t n = 256;
    std::vector<uint32_t> idx(n), out(n);
    for (uint32_t i = 0; i < n; ++i)
        idx[i] = i * 13 + 1;
    Launch l;
    pushArg(l, ptr(idx.data()));
    pushArg(l, ptr(out.data()));
    Result r = run(k, l, n, 64, 2);
    REQUIRE(r.result.error == "");
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t lid = i % 64, j = idx[i] % 48, j2 = (j * 7) % 48;
        uint32_t pj = j * lid + 5 + 1000, pj2 = j2 * lid + 5 + (j2 == j ? 1000 : 0);
        REQUIRE(out[i] == pj + pj2);
    }
    CHECK(r.stats.wavefrontInstructions[size_t(InstClass::Vmem)] > 0);
}

TEST_CASE("f64 and f16 arithmetic", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        #pragma OPENCL EXTENSION cl_khr_fp64 : enable
        #pragma OPENCL EXTENSION cl_khr_fp16 : enable
        __kernel void wide(__global const double* a, __global double* d, __global const half* h,
                           __global half* ho) {
            uint i = GRP * 64 + LID;
            double x = a[i];
            d[i] = __builtin_fma(x, x, 1.0) / (x + 3.0) + __builtin_sqrt(__builtin_fabs(x));
            half y = h[i];
            ho[i] = y * y + (half)0.5;
        })",
                             "wide", {"-cl-fp32-correctly-rounded-divide-sqrt"});
    const uint32_t n = 64;
    std::vector<double> a(n), d(n);
    std::vector<_Float16> h(n), ho(n);
    for (uint32_t i = 0; i < n; ++i)
        a[i] = 0.37 * i - 5.5, h[i] = _Float16(0.25f * float(i) - 3.0f);
    Launch l;
    pushArg(l, ptr(a.data()));
    pushArg(l, ptr(d.data()));
    pushArg(l, ptr(h.data()));
    pushArg(l, ptr(ho.data()));
    Result r = run(k, l, n, 64);
    REQUIRE(r.result.error == "");
    for (uint32_t i = 0; i < n; ++i) {
        double x = a[i];
        double want = std::fma(x, x, 1.0) / (x + 3.0) + std::sqrt(std::fabs(x));
        REQUIRE(d[i] == Approx(want).epsilon(1e-15));
        _Float16 y = h[i];
        REQUIRE(float(ho[i]) ==
                Approx(float(_Float16(float(_Float16(float(y) * float(y))) + 0.5f))).margin(1e-3));
    }
}

TEST_CASE("an instruction the model lacks stops the dispatch with its name and address",
          "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void img(__global uint* out) {
            out[LID] = 1;
            __asm__ volatile("image_load v[0:3], v0, s[0:7] dmask:0xf unorm" ::: "v0", "v1", "v2", "v3");
            out[LID] = 2;
        })",
                             "img");
    std::vector<uint32_t> out(64, 0);
    Launch l;
    pushArg(l, ptr(out.data()));
    Result r = run(k, l, 64, 64);
    REQUIRE_FALSE(r.result);
    CHECK(r.result.error.find("MIMG") != std::string::npos);
    CHECK(r.result.error.find("not implemented") != std::string::npos);
    CHECK(r.result.error.find("kernel offset 0x") != std::string::npos);
    CHECK(out[0] == 1); // the stores before it ran, the one after did not
}

TEST_CASE("out-of-range registers and bad register state are reported", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void many(__global float* out) {
            __asm__ volatile("v_mov_b32 v40, 1.0" ::: "v40");
            out[LID] = 1.0f;
        })",
                             "many");
    std::vector<float> out(64);
    {
        Launch l;
        pushArg(l, ptr(out.data()));
        uint32_t g[3] = {64, 1, 1}, s[3] = {64, 1, 1};
        prepare(l, k, g, s);
        l.state.pgmRsrc1 &= ~63u; // claim 4 VGPRs
        Model model(ModelConfig{});
        DispatchResult res = model.dispatch(l.state);
        REQUIRE_FALSE(res);
        CHECK(res.error.find("VGPR") != std::string::npos);
        CHECK(res.error.find("beyond the kernel's 4 VGPRs") != std::string::npos);
    }
    {
        // A kernel touching an SGPR beyond its allocation (inline asm writes s40).
        Kernel big = compileKernel(std::string(kPrelude) + R"(
            __kernel void sg(__global uint* out) {
                __asm__ volatile("s_mov_b32 s40, 7" ::: "s40");
                out[LID] = 1;
            })",
                                   "sg");
        Launch l;
        pushArg(l, ptr(out.data()));
        uint32_t g[3] = {64, 1, 1}, s[3] = {64, 1, 1};
        prepare(l, big, g, s);
        l.state.pgmRsrc1 = (l.state.pgmRsrc1 & ~(15u << 6)) | (3u << 6); // 32 SGPRs
        Model model(ModelConfig{});
        DispatchResult res = model.dispatch(l.state);
        REQUIRE_FALSE(res);
        CHECK(res.error.find("SGPR s40 beyond the kernel's 32 SGPRs") != std::string::npos);
        CHECK(res.error.find("s_mov_b32") != std::string::npos);
    }
    {
        Launch l;
        pushArg(l, ptr(out.data()));
        uint32_t g[3] = {64, 1, 1}, s[3] = {2048, 1, 1};
        prepare(l, k, g, s);
        Model model(ModelConfig{});
        DispatchResult res = model.dispatch(l.state);
        REQUIRE_FALSE(res);
        CHECK(res.error.find("work-group size") != std::string::npos);
    }
}

TEST_CASE("occupancy: VGPR-heavy kernels are limited by VGPRs, LDS-heavy by LDS", "[gcn_model]") {
    Kernel heavy = compileKernel(std::string(kPrelude) + R"(
        __kernel void heavy(__global float* out) {
            __asm__ volatile("v_mov_b32 v130, 0" ::: "v130");
            out[LID] = 1.0f;
        })",
                                 "heavy");
    std::vector<float> out(64);
    Launch l;
    pushArg(l, ptr(out.data()));
    Result r = run(heavy, l, 64, 64);
    REQUIRE(r.result.error == "");
    CHECK(r.stats.vgprs >= 131);
    CHECK(r.stats.wavesPerSimd == 1);
    CHECK(r.stats.occupancyLimit == "VGPRs");

    auto lds = duet::gcn::computeOccupancy(8, 16, 32768, 64);
    CHECK(lds.wavesPerSimd == 1); // 2 single-wave groups per CU
    CHECK(std::string(lds.limit) == "LDS");
    auto light = duet::gcn::computeOccupancy(24, 24, 0, 256);
    CHECK(light.wavesPerSimd == 10);
    CHECK(std::string(light.limit) == "none");
}

TEST_CASE("libclc math builtins (a wide instruction mix) match the host", "[gcn_model]") {
    Kernel k = compileKernel(R"(
        __kernel void math(__global const float* x, __global float* out, __global const double* dx,
                           __global double* dout, __global const int* ix, __global int* iout) {
            size_t i = get_global_id(0);
            float v = x[i];
            __global float* o = out + i * 16;
            o[0] = sin(v); o[1] = cos(v); o[2] = exp(v * 0.1f); o[3] = log(fabs(v) + 1.0f);
            o[4] = pow(fabs(v) + 0.5f, 1.7f); o[5] = tanh(v * 0.2f); o[6] = cbrt(v);
            o[7] = atan2(v, 3.0f); o[8] = sqrt(fabs(v)); o[9] = rsqrt(fabs(v) + 1.0f);
            o[10] = floor(v) + ceil(v) * 2.0f + round(v) * 4.0f; o[11] = fmod(v, 3.0f);
            o[12] = ldexp(v, 5); o[13] = native_recip(2.0f); o[14] = erf(v * 0.1f); o[15] = exp2(v * 0.1f);
            double d = dx[i];
            __global double* od = dout + i * 4;
            od[0] = sin(d); od[1] = exp(d * 0.01); od[2] = log(fabs(d) + 1.0); od[3] = d / 7.0;
            int n = ix[i];
            __global int* oi = iout + i * 6;
            oi[0] = popcount(n); oi[1] = clz(n); oi[2] = mul_hi(n, 0x12345); oi[3] = rotate(n, 7);
            oi[4] = sub_sat(n, 0x7ffffff0); oi[5] = convert_int_sat_rte(v * 1e8f);
        })",
                             "math", {"libclc"});
    const uint32_t n = 128;
    std::vector<float> x(n), out(n * 16);
    std::vector<double> dx(n), dout(n * 4);
    std::vector<int32_t> ix(n), iout(n * 6);
    for (uint32_t i = 0; i < n; ++i) {
        x[i] = (float(i) - 64.0f) * 0.731f;
        dx[i] = (double(i) - 64.0) * 1234.567; // large arguments reach sin's Payne-Hanek path
        ix[i] = int32_t(i * 0x9e3779b9u);
    }
    Launch l;
    for (void* p : {(void*)x.data(), (void*)out.data(), (void*)dx.data(), (void*)dout.data(),
                    (void*)ix.data(), (void*)iout.data()})
        pushArg(l, ptr(p));
    Result r = run(k, l, n, 64);
    REQUIRE(r.result.error == "");
    auto near = [](double got, double want, double rel) {
        if (std::isinf(want) || std::isnan(want))
            return got == want || (std::isnan(got) && std::isnan(want));
        return std::fabs(got - want) <= rel * std::max(1.0, std::fabs(want));
    };
    for (uint32_t i = 0; i < n; ++i) {
        float v = x[i];
        const float* o = &out[i * 16];
        INFO("i=" << i << " v=" << v);
        CHECK(near(o[0], std::sin(v), 1e-6));
        CHECK(near(o[1], std::cos(v), 1e-6));
        CHECK(near(o[2], std::exp(v * 0.1f), 1e-6));
        CHECK(near(o[3], std::log(std::fabs(v) + 1.0f), 1e-6));
        CHECK(near(o[4], std::pow(std::fabs(v) + 0.5f, 1.7f), 1e-5));
        CHECK(near(o[5], std::tanh(v * 0.2f), 1e-6));
        INFO("cbrt " << o[6] << " want " << std::cbrt(v));
        CHECK(near(o[6], std::cbrt(v), 1e-6));
        CHECK(near(o[7], std::atan2(v, 3.0f), 1e-6));
        CHECK(near(o[8], std::sqrt(std::fabs(v)), 1e-7));
        CHECK(near(o[9], 1.0 / std::sqrt(std::fabs(v) + 1.0f), 1e-6));
        CHECK(o[10] == std::floor(v) + std::ceil(v) * 2.0f + std::round(v) * 4.0f);
        CHECK(o[11] == std::fmod(v, 3.0f));
        CHECK(o[12] == std::ldexp(v, 5));
        CHECK(near(o[13], 0.5, 1e-6));
        CHECK(near(o[14], std::erf(v * 0.1f), 1e-6));
        CHECK(near(o[15], std::exp2(v * 0.1f), 1e-6));
        const double* od = &dout[i * 4];
        double d = dx[i];
        CHECK(near(od[0], std::sin(d), 1e-14));
        CHECK(near(od[1], std::exp(d * 0.01), 1e-14));
        CHECK(near(od[2], std::log(std::fabs(d) + 1.0), 1e-14));
        CHECK(od[3] == d / 7.0);
        const int32_t* oi = &iout[i * 6];
        int32_t m = ix[i];
        CHECK(oi[0] == std::popcount(uint32_t(m)));
        CHECK(oi[1] == (m ? std::countl_zero(uint32_t(m)) : 32));
        CHECK(oi[2] == int32_t((int64_t(m) * 0x12345) >> 32));
        CHECK(uint32_t(oi[3]) == std::rotl(uint32_t(m), 7));
        CHECK(oi[4] == int32_t(std::clamp<int64_t>(int64_t(m) - 0x7ffffff0, INT32_MIN, INT32_MAX)));
        double scaled = double(v * 1e8f);
        CHECK(oi[5] == int32_t(std::clamp<double>(std::nearbyint(scaled), INT32_MIN, INT32_MAX)));
    }
}

TEST_CASE("libclc cbrt", "[gcn_model]") {
    Kernel k = compileKernel(R"(
        __kernel void k(__global float* a, __global const float* b) {
            size_t i = get_global_id(0);
            a[i] = cbrt(b[i]);
        })",
                             "k", {"libclc"});
    std::vector<float> x(64), out(64);
    for (uint32_t i = 0; i < 64; ++i)
        x[i] = (float(i) - 32.0f) * 0.731f;
    Launch l;
    pushArg(l, ptr(out.data()));
    pushArg(l, ptr(x.data()));
    Result r = run(k, l, 64, 64);
    REQUIRE(r.result.error == "");
    for (uint32_t i = 0; i < 64; ++i) {
        INFO("x=" << x[i] << " got " << out[i]);
        CHECK(std::fabs(out[i] - std::cbrt(x[i])) <=
              1e-6f * std::max(1.0f, std::fabs(std::cbrt(x[i]))));
    }
}

TEST_CASE("calls, 64-bit division, local atomics, vectors and half conversions (libclc)",
          "[gcn_model]") {
    Kernel k = compileKernel(
        R"(
        __attribute__((noinline)) ulong mix(ulong a, ulong b, __private uint* scratch, uint n) {
            for (uint i = 0; i < n; ++i) scratch[i] = (uint)(a >> (i % 64)) ^ (uint)b;
            ulong s = 0;
            for (uint i = 0; i < n; ++i) s += scratch[(i * 7) % n];
            return a / (b | 1) + a % (b | 1) + s;
        }
        __kernel void misc(__global const ulong* a, __global ulong* q, __global uint* hist,
                           __global const float4* v4, __global float* dots, __global half* hs) {
            __local uint bins[16];
            uint lid = get_local_id(0);
            size_t i = get_global_id(0);
            if (lid < 16) bins[lid] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            uint scratch[40];
            q[i] = mix(a[i], a[i] >> 17, scratch, 20 + (uint)(i % 20));
            atomic_inc(&bins[(uint)(a[i] % 16)]);
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < 16) atomic_add(&hist[lid], bins[lid]);
            float4 x = v4[i];
            dots[i] = dot(x, (float4)(1.0f, 2.0f, 3.0f, 4.0f));
            vstore_half(x.x * 3.0f, i, hs);
        })",
        "misc", {"libclc", "-cl-std=CL1.2"}); // libclc 19 has no generic-space vstore_half
    const uint32_t n = 256;
    std::vector<uint64_t> a(n), q(n);
    std::vector<uint32_t> hist(16, 0);
    std::vector<float> v4(4 * n), dots(n);
    std::vector<uint16_t> hs(n);
    for (uint32_t i = 0; i < n; ++i) {
        a[i] = 0x9e3779b97f4a7c15ull * (i + 1);
        for (int c = 0; c < 4; ++c)
            v4[4 * i + c] = float(i) * 0.25f + float(c);
    }
    Launch l;
    for (void* p : {(void*)a.data(), (void*)q.data(), (void*)hist.data(), (void*)v4.data(),
                    (void*)dots.data(), (void*)hs.data()})
        pushArg(l, ptr(p));
    Result r = run(k, l, n, 128);
    REQUIRE(r.result.error == "");
    std::vector<uint32_t> wantHist(16, 0);
    for (uint32_t i = 0; i < n; ++i) {
        uint64_t x = a[i], y = x >> 17;
        uint32_t m = 20 + i % 20;
        uint32_t scratch[40];
        for (uint32_t j = 0; j < m; ++j)
            scratch[j] = uint32_t(x >> (j % 64)) ^ uint32_t(y);
        uint64_t s = 0;
        for (uint32_t j = 0; j < m; ++j)
            s += scratch[(j * 7) % m];
        REQUIRE(q[i] == x / (y | 1) + x % (y | 1) + s);
        ++wantHist[x % 16];
        const float* v = &v4[4 * i];
        REQUIRE(dots[i] == Approx(v[0] + 2 * v[1] + 3 * v[2] + 4 * v[3]).epsilon(1e-6));
        REQUIRE(hs[i] == std::bit_cast<uint16_t>(_Float16(v[0] * 3.0f)));
    }
    CHECK(hist == wantHist);
}

TEST_CASE("cross-lane: DPP, ds_swizzle, ds_bpermute, readlane; packed half2 (VOP3P)",
          "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        #pragma OPENCL EXTENSION cl_khr_fp16 : enable
        typedef half half2 __attribute__((ext_vector_type(2)));
        __kernel void xlane(__global int* out, __global const half2* h, __global half2* ho) {
            int lid = (int)LID;
            int v = lid * 10 + 1;
            out[lid * 8 + 0] = __builtin_amdgcn_update_dpp(-1, v, 0x111, 0xf, 0xf, false); // row_shr:1
            out[lid * 8 + 1] = __builtin_amdgcn_update_dpp(-1, v, 0x1b, 0xf, 0xf, false);  // quad_perm [3,2,1,0]
            out[lid * 8 + 2] = __builtin_amdgcn_update_dpp(-1, v, 0x140, 0xf, 0xf, false); // row_mirror
            out[lid * 8 + 3] = __builtin_amdgcn_ds_swizzle(v, 0x041f);                      // xor 1 (bitmask mode)
            out[lid * 8 + 4] = __builtin_amdgcn_ds_bpermute(((lid + 5) % 64) * 4, v);
            out[lid * 8 + 5] = __builtin_amdgcn_readlane(v, 17);
            out[lid * 8 + 6] = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
            out[lid * 8 + 7] = __builtin_amdgcn_update_dpp(-1, v, 0x101, 0xf, 0xf, true);  // row_shl:1, bound_ctrl
            half2 x = h[lid];
            ho[lid] = x * x + (half2)((half)1.0, (half)-2.0);
        })",
                             "xlane");
    std::vector<int32_t> out(64 * 8);
    std::vector<_Float16> h(128), ho(128);
    for (int i = 0; i < 128; ++i)
        h[i] = _Float16(0.125f * float(i) - 4.0f);
    Launch l;
    pushArg(l, ptr(out.data()));
    pushArg(l, ptr(h.data()));
    pushArg(l, ptr(ho.data()));
    Result r = run(k, l, 64, 64);
    REQUIRE(r.result.error == "");
    auto val = [](int lane) { return lane * 10 + 1; };
    for (int lane = 0; lane < 64; ++lane) {
        INFO("lane " << lane);
        const int32_t* o = &out[lane * 8];
        // row_shr:1 without bound_ctrl: the first lane of each row of 16 keeps `old` (-1).
        CHECK(o[0] == (lane % 16 == 0 ? -1 : val(lane - 1)));
        CHECK(o[1] == val((lane & ~3) + 3 - (lane & 3)));
        CHECK(o[2] == val((lane & ~15) + 15 - (lane & 15)));
        CHECK(o[3] == val(lane ^ 1));
        CHECK(o[4] == val((lane + 5) % 64));
        CHECK(o[5] == val(17));
        CHECK(o[6] == lane);
        // row_shl:1 with bound_ctrl: out-of-row source reads 0.
        CHECK(o[7] == (lane % 16 == 15 ? 0 : val(lane + 1)));
    }
    for (int i = 0; i < 128; ++i) {
        float x = float(h[i]);
        float want = float(_Float16(float(_Float16(x * x)) + (i % 2 ? -2.0f : 1.0f)));
        // fma contraction is allowed: accept either rounding.
        float fused = float(_Float16(std::fma(x, x, i % 2 ? -2.0f : 1.0f)));
        REQUIRE((float(ho[i]) == want || float(ho[i]) == fused));
    }
    CHECK(r.stats.wavefrontInstructions[size_t(InstClass::Lds)] >= 2);
}

TEST_CASE("byte/pack VALU ops and DS d16/mskor through inline assembly", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"CL(
        __kernel void bytes(__global const uint* in, __global uint* out) {
            __local uint lds[64];
            uint lid = LID;
            uint a = in[lid], b = in[lid + 64], c = in[lid + 128];
            uint r[8];
            __asm__ volatile("v_sad_u8 %0, %1, %2, %3" : "=v"(r[0]) : "v"(a), "v"(b), "v"(c));
            __asm__ volatile("v_lerp_u8 %0, %1, %2, %3" : "=v"(r[1]) : "v"(a), "v"(b), "v"(c));
            __asm__ volatile("v_msad_u8 %0, %1, %2, %3" : "=v"(r[2]) : "v"(a), "v"(b), "v"(c));
            __asm__ volatile("v_sat_pk_u8_i16 %0, %1" : "=v"(r[3]) : "v"(a));
            float f = (float)(lid * 5) - 20.0f;
            __asm__ volatile("v_cvt_pk_u8_f32 %0, %1, 2, %2" : "=v"(r[4]) : "v"(f), "v"(c));
            lds[lid] = 0x11223344u;
            __builtin_amdgcn_s_barrier();
            uint v = c;
            __asm__ volatile("ds_read_u16_d16_hi %0, %1 offset:0\n s_waitcnt lgkmcnt(0)" : "+v"(v) : "v"(lid * 4));
            r[5] = v;
            __asm__ volatile("ds_mskor_b32 %0, %1, %2\n s_waitcnt lgkmcnt(0)" :: "v"(lid * 4), "v"(0xff00ff00u), "v"(a & 0xff00ff00u));
            r[6] = lds[lid];
            __asm__ volatile("ds_write_b16_d16_hi %0, %1 offset:2\n s_waitcnt lgkmcnt(0)" :: "v"(lid * 4), "v"(b));
            r[7] = lds[lid];
            for (int i = 0; i < 8; ++i) out[lid * 8 + i] = r[i];
        })CL",
                             "bytes");
    std::vector<uint32_t> in(192), out(64 * 8);
    for (uint32_t i = 0; i < 192; ++i)
        in[i] = (i * 0x9e3779b9u) ^ (i << 7);
    Launch l;
    pushArg(l, ptr(in.data()));
    pushArg(l, ptr(out.data()));
    Result r = run(k, l, 64, 64);
    REQUIRE(r.result.error == "");
    auto byte = [](uint32_t x, int i) { return int((x >> (8 * i)) & 255); };
    for (uint32_t lane = 0; lane < 64; ++lane) {
        uint32_t a = in[lane], b = in[lane + 64], c = in[lane + 128];
        const uint32_t* o = &out[lane * 8];
        INFO("lane " << lane);
        uint32_t sad = c, msad = c, lerp = 0;
        for (int i = 0; i < 4; ++i) {
            sad += uint32_t(std::abs(byte(a, i) - byte(b, i)));
            if (byte(b, i))
                msad += uint32_t(std::abs(byte(a, i) - byte(b, i)));
            lerp |= uint32_t(((byte(a, i) + byte(b, i) + (byte(c, i) & 1)) >> 1) & 255) << (8 * i);
        }
        CHECK(o[0] == sad);
        CHECK(o[1] == lerp);
        CHECK(o[2] == msad);
        auto sat = [](int v) { return uint32_t(std::clamp(v, 0, 255)); };
        CHECK(o[3] == (sat(int16_t(a)) | sat(int16_t(a >> 16)) << 8));
        float f = float(lane * 5) - 20.0f;
        uint32_t cv = uint32_t(std::clamp(std::nearbyint(f), 0.0f, 255.0f));
        CHECK(o[4] == ((c & ~0xff0000u) | cv << 16));
        CHECK(o[5] == ((c & 0xffffu) | 0x33440000u));
        uint32_t m = (0x11223344u & ~0xff00ff00u) | (a & 0xff00ff00u);
        CHECK(o[6] == m);
        CHECK(o[7] == ((m & 0xffffu) | (b & 0xffff0000u)));
    }
}

TEST_CASE("FLAT through generic pointers: global, LDS and private apertures", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __attribute__((noinline)) void bump(uint* p, uint n, uint v) {   // generic pointer
            for (uint i = 0; i < n; ++i) p[i] += v + i;
        }
        __kernel void gen(__global uint* g, __global uint* out, uint n) {
            __local uint l[64 * 4];
            uint priv[8];
            uint lid = LID;
            for (uint i = 0; i < 4; ++i) l[lid * 4 + i] = lid * 100 + i;
            for (uint i = 0; i < 8; ++i) priv[i] = i * 3 + lid;
            bump(g + lid * 4, n, 1);
            bump(l + lid * 4, n, 2);
            bump(priv + (lid % 4), n, 3);
            for (uint i = 0; i < 4; ++i) out[lid * 12 + i] = l[lid * 4 + i];
            for (uint i = 0; i < 8; ++i) out[lid * 12 + 4 + i] = priv[i];
        })",
                             "gen");
    std::vector<uint32_t> g(256), out(64 * 12);
    for (uint32_t i = 0; i < 256; ++i)
        g[i] = i * 7;
    Launch l;
    pushArg(l, ptr(g.data()));
    pushArg(l, ptr(out.data()));
    pushArg(l, 4u);
    Result r = run(k, l, 64, 64);
    REQUIRE(r.result.error == "");
    for (uint32_t lane = 0; lane < 64; ++lane) {
        INFO("lane " << lane);
        for (uint32_t i = 0; i < 4; ++i) {
            CHECK(g[lane * 4 + i] == (lane * 4 + i) * 7 + 1 + i);
            CHECK(out[lane * 12 + i] == lane * 100 + i + 2 + i);
        }
        for (uint32_t i = 0; i < 8; ++i) {
            uint32_t want = i * 3 + lane;
            uint32_t first = lane % 4;
            if (i >= first && i < first + 4)
                want += 3 + (i - first);
            CHECK(out[lane * 12 + 4 + i] == want);
        }
    }
    CHECK(r.stats.wavefrontInstructions[size_t(InstClass::Flat)] > 0);
}

TEST_CASE("16-bit mads: gfx9 op_sel form keeps the other half, the legacy (gfx8) one zeroes it",
          "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"CL(
        __kernel void mad16(__global const uint* in, __global uint* out) {
            uint lid = LID;
            uint a = in[lid], b = in[lid + 64], c = in[lid + 128], r0 = 0xffff0000u, r1 = 0xabcd0000u, r2 = 0x12345678u;
            __asm__ volatile("v_mad_legacy_u16 %0, %1, %2, %3" : "+v"(r0) : "v"(a), "v"(b), "v"(c));
            __asm__ volatile("v_mad_u16 %0, %1, %2, %3 op_sel:[1,0,0,0]" : "+v"(r1) : "v"(a), "v"(b), "v"(c));
            __asm__ volatile("v_mad_u16 %0, %1, %2, %3 op_sel:[0,0,0,1]" : "+v"(r2) : "v"(a), "v"(b), "v"(c));
            out[lid * 3] = r0; out[lid * 3 + 1] = r1; out[lid * 3 + 2] = r2;
        })CL",
                             "mad16");
    std::vector<uint32_t> in(192), out(192);
    for (uint32_t i = 0; i < 192; ++i)
        in[i] = i * 0x01234567u + 0x89abu;
    Launch l;
    pushArg(l, ptr(in.data()));
    pushArg(l, ptr(out.data()));
    Result r = run(k, l, 64, 64);
    REQUIRE(r.result.error == "");
    for (uint32_t lane = 0; lane < 64; ++lane) {
        uint32_t a = in[lane], b = in[lane + 64], c = in[lane + 128];
        uint16_t lo = uint16_t(uint16_t(a) * uint16_t(b) + uint16_t(c));
        uint16_t hiA = uint16_t(uint16_t(a >> 16) * uint16_t(b) + uint16_t(c));
        CHECK(out[lane * 3] == lo);                      // legacy encoding: high half zeroed
        CHECK(out[lane * 3 + 1] == (0xabcd0000u | hiA)); // gfx9 form: high half kept
        CHECK(out[lane * 3 + 2] == ((uint32_t(lo) << 16) | 0x5678u)); // op_sel dst: high half
    }
}

TEST_CASE("a kernel that never ends is stopped by the instruction limit", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void spin(volatile __global uint* flag) {
            while (*flag == 0) { }
        })",
                             "spin");
    // One wave, and four that take turns (time slices): each wave's count reaches the limit.
    for (uint32_t items : {64u, 256u}) {
        INFO(items << " work-items in the group");
        uint32_t flag = 0;
        Launch l;
        pushArg(l, ptr(&flag));
        uint32_t g[3] = {items, 1, 1}, s[3] = {items, 1, 1};
        prepare(l, k, g, s);
        Model model(ModelConfig{.hostThreads = 1, .maxWaveInstructions = 100000});
        DispatchStats stats;
        DispatchResult res = model.dispatch(l.state, &stats);
        REQUIRE_FALSE(res);
        CHECK(res.error.find("exceeded 100000 instructions") != std::string::npos);
    }
}

TEST_CASE("waves of a group make independent forward progress", "[gcn_model][ifp]") {
    // Wave w spins on a global flag wave w + 1 sets, so the last wave must run first; then on an
    // LDS flag wave w - 1 sets. Lane 0 of each wave takes a ticket after each wait. A model that
    // ran a wave until its barrier or end would spin in wave 0 forever: the instruction limit
    // turns that into an error instead of a hang.
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void chain(__global uint* flags, __global uint* tickets, __global uint* counter) {
            __local uint lflags[4];
            uint lid = LID, w = lid / 64, g = GRP;
            if (lid < 4) lflags[lid] = 0;
            __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
            __builtin_amdgcn_s_barrier();
            __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
            if (w < 3)
                while (__atomic_load_n(&flags[g * 4 + w + 1], __ATOMIC_ACQUIRE) == 0) { }
            if (lid % 64 == 0)
                tickets[g * 8 + w] = __atomic_fetch_add(&counter[g], 1u, __ATOMIC_RELAXED);
            __atomic_store_n(&flags[g * 4 + w], 1u, __ATOMIC_RELEASE);
            if (w > 0)
                while (__atomic_load_n(&lflags[w - 1], __ATOMIC_ACQUIRE) == 0) { }
            if (lid % 64 == 0)
                tickets[g * 8 + 4 + w] = __atomic_fetch_add(&counter[g], 1u, __ATOMIC_RELAXED);
            __atomic_store_n(&lflags[w], 1u, __ATOMIC_RELEASE);
        })",
                             "chain");
    const uint32_t groups = 6;
    std::vector<uint32_t> flags(groups * 4), tickets(groups * 8, ~0u), counter(groups);
    Launch l;
    pushArg(l, ptr(flags.data()));
    pushArg(l, ptr(tickets.data()));
    pushArg(l, ptr(counter.data()));
    uint32_t g[3] = {groups * 256, 1, 1}, s[3] = {256, 1, 1};
    prepare(l, k, g, s);
    Model model(ModelConfig{.hostThreads = 2, .maxWaveInstructions = 2000000});
    DispatchStats stats;
    DispatchResult res = model.dispatch(l.state, &stats);
    REQUIRE(res.error == "");
    for (uint32_t grp = 0; grp < groups; ++grp)
        for (uint32_t w = 0; w < 4; ++w) {
            INFO("group " << grp << ", wave " << w);
            CHECK(tickets[grp * 8 + w] == 3 - w);
            CHECK(tickets[grp * 8 + 4 + w] == 4 + w);
        }
    CHECK(stats.wavefronts == groups * 4);
}

TEST_CASE("time slices count each instruction once", "[gcn_model][ifp]") {
    // The same waves in groups of one wave (never sliced) and of four (sliced every few thousand
    // instructions): the same results and the same instruction counts per class.
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void busy(__global uint* out, uint n) {
            uint x = GRP * 1000 + LID;
            for (uint i = 0; i < n; ++i) x = x * 1664525u + 1013904223u;
            out[GRP * 1000 + LID] = x;
        })",
                             "busy");
    auto runWith = [&](uint32_t local, std::vector<uint32_t>& out) {
        Launch l;
        pushArg(l, ptr(out.data()));
        pushArg(l, 5000u);
        uint32_t g[3] = {local, 1, 1}, s[3] = {local, 1, 1};
        prepare(l, k, g, s);
        Model model(ModelConfig{.hostThreads = 1});
        DispatchStats stats;
        REQUIRE(model.dispatch(l.state, &stats).error == "");
        return stats;
    };
    // Each wave runs the same instructions, so four waves count four times one wave's; the one
    // wave is the four-wave group's first (group 0 in both).
    std::vector<uint32_t> a(256), b(256);
    const DispatchStats four = runWith(256, a);
    const DispatchStats one = runWith(64, b);
    for (uint32_t i = 0; i < 64; ++i)
        REQUIRE(a[i] == b[i]);
    for (size_t c = 0; c < size_t(InstClass::Count); ++c) {
        INFO("class " << c);
        CHECK(four.wavefrontInstructions[c] == 4 * one.wavefrontInstructions[c]);
    }
    CHECK(four.wavefrontInstructions[size_t(InstClass::Valu)] > 4 * 5000);
}

TEST_CASE("a wave at s_sleep lets the other waves of its group run", "[gcn_model][ifp]") {
    // Wave 0 waits for wave 1 with s_sleep in its loop; the instruction limit is below the time
    // slice, so only the hand-over at s_sleep lets wave 1 set the flag in time.
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        __kernel void sleepy(__global uint* flag, __global uint* out) {
            uint lid = LID;
            if (lid < 64) {
                while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0)
                    __builtin_amdgcn_s_sleep(2);
                out[lid] = 1;
            } else {
                uint x = lid;
                for (uint i = 0; i < 20; ++i) x = x * 3u + 1u;
                out[lid] = x;
                __atomic_store_n(flag, 1u, __ATOMIC_RELEASE);
            }
        })",
                             "sleepy");
    uint32_t flag = 0;
    std::vector<uint32_t> out(128);
    Launch l;
    pushArg(l, ptr(&flag));
    pushArg(l, ptr(out.data()));
    uint32_t g[3] = {128, 1, 1}, s[3] = {128, 1, 1};
    prepare(l, k, g, s);
    Model model(ModelConfig{.hostThreads = 1, .maxWaveInstructions = 2000});
    DispatchResult res = model.dispatch(l.state);
    REQUIRE(res.error == "");
    for (uint32_t i = 0; i < 128; ++i) {
        uint32_t x = i;
        for (int j = 0; j < 20; ++j)
            x = x * 3u + 1u;
        REQUIRE(out[i] == (i < 64 ? 1u : x));
    }
}

TEST_CASE("IEEE fdiv expansion over random bit patterns (all exponents, denormals)",
          "[gcn_model]") {
    for (const char* denorm : {"", "-fdenormal-fp-math-f32=preserve-sign"}) {
        INFO("options: " << denorm);
        std::vector<std::string> opts = {"-cl-fp32-correctly-rounded-divide-sqrt"};
        if (*denorm)
            opts.push_back(denorm);
        Kernel k = compileKernel(std::string(kPrelude) + R"(
            __kernel void fdiv(__global const float* a, __global const float* b, __global float* q) {
                uint i = GRP * 64 + LID;
                q[i] = a[i] / b[i];
            })",
                                 "fdiv", opts);
        const uint32_t n = 8192;
        std::vector<float> a(n), b(n), q(n);
        std::mt19937 rng(7);
        for (uint32_t i = 0; i < n; ++i) {
            a[i] = std::bit_cast<float>(uint32_t(rng()));
            b[i] = std::bit_cast<float>(uint32_t(rng()));
            if (i % 4 == 1)
                b[i] = std::bit_cast<float>(uint32_t(rng()) & 0x807fffffu); // denormal
            if (i % 4 == 2)
                a[i] = std::bit_cast<float>(uint32_t(rng()) & 0x807fffffu);
        }
        Launch l;
        pushArg(l, ptr(a.data()));
        pushArg(l, ptr(b.data()));
        pushArg(l, ptr(q.data()));
        Result r = run(k, l, n, 64);
        REQUIRE(r.result.error == "");
        bool daz = *denorm != 0;
        auto flush = [&](float x) {
            return daz && std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
        };
        unsigned bad = 0;
        for (uint32_t i = 0; i < n; ++i) {
            float want = flush(flush(a[i]) / flush(b[i]));
            bool ok = std::isnan(want)
                          ? std::isnan(q[i])
                          : std::bit_cast<uint32_t>(q[i]) == std::bit_cast<uint32_t>(want);
            if (!ok && bad++ < 5)
                UNSCOPED_INFO("a=" << a[i] << " b=" << b[i] << " got " << q[i] << " want " << want);
        }
        CHECK(bad == 0);
    }
}

TEST_CASE("f64 division expansion over random bit patterns", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        #pragma OPENCL EXTENSION cl_khr_fp64 : enable
        __kernel void ddiv(__global const double* a, __global const double* b, __global double* q) {
            uint i = GRP * 64 + LID;
            q[i] = a[i] / b[i];
        })",
                             "ddiv");
    const uint32_t n = 8192;
    std::vector<double> a(n), b(n), q(n);
    std::mt19937_64 rng(11);
    for (uint32_t i = 0; i < n; ++i) {
        a[i] = std::bit_cast<double>(uint64_t(rng()));
        b[i] = std::bit_cast<double>(uint64_t(rng()));
        if (i % 4 == 1)
            b[i] = std::bit_cast<double>(uint64_t(rng()) & 0x800fffffffffffffull);
        if (i % 4 == 2)
            a[i] = std::bit_cast<double>(uint64_t(rng()) & 0x800fffffffffffffull);
        if (i % 8 == 3)
            a[i] = std::ldexp(1.0 + double(i), -1000), b[i] = std::ldexp(3.0, 40);
    }
    Launch l;
    pushArg(l, ptr(a.data()));
    pushArg(l, ptr(b.data()));
    pushArg(l, ptr(q.data()));
    Result r = run(k, l, n, 64);
    REQUIRE(r.result.error == "");
    unsigned bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
        double want = a[i] / b[i];
        bool ok = std::isnan(want) ? std::isnan(q[i])
                                   : std::bit_cast<uint64_t>(q[i]) == std::bit_cast<uint64_t>(want);
        if (!ok && bad++ < 5)
            UNSCOPED_INFO("a=" << a[i] << " b=" << b[i] << " got " << q[i] << " want " << want);
    }
    CHECK(bad == 0);
}

TEST_CASE("f32 arithmetic, rounding and conversions over random bit patterns", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        #pragma OPENCL EXTENSION cl_khr_fp16 : enable
        #pragma OPENCL EXTENSION cl_khr_fp64 : enable
        __kernel void ops(__global const float* a, __global const float* b, __global const float* c,
                          __global float* o, __global int* io, __global half* ho, __global double* dout) {
            uint i = GRP * 64 + LID;
            float x = a[i], y = b[i], z = c[i];
            __global float* r = o + i * 12;
            r[0] = x + y; r[1] = x * y; r[2] = __builtin_fmaf(x, y, z); r[3] = __builtin_sqrtf(x);
            r[4] = __builtin_floorf(x); r[5] = __builtin_ceilf(x); r[6] = __builtin_truncf(x);
            r[7] = __builtin_rintf(x); r[8] = __builtin_fminf(x, y); r[9] = __builtin_fmaxf(x, y);
            r[10] = (float)__builtin_astype(y, int); r[11] = (float)__builtin_astype(z, uint);
            io[i * 2] = (__builtin_fabsf(x) < 2.0e9f) ? (int)x : 0;
            io[i * 2 + 1] = (x >= 0.0f && x < 4.0e9f) ? (int)(uint)x : 0;
            ho[i] = (half)x;
            dout[i] = (double)x * (double)y;
        })",
                             "ops", {"-cl-fp32-correctly-rounded-divide-sqrt"});
    const uint32_t n = 4096;
    std::vector<float> a(n), b(n), c(n), o(n * 12);
    std::vector<int32_t> io(n * 2);
    std::vector<_Float16> ho(n);
    std::vector<double> dout(n);
    std::mt19937 rng(3);
    for (uint32_t i = 0; i < n; ++i) {
        a[i] = std::bit_cast<float>(uint32_t(rng()));
        b[i] = std::bit_cast<float>(uint32_t(rng()));
        c[i] = std::bit_cast<float>(uint32_t(rng()));
        if (i % 3 == 0)
            a[i] = std::ldexp(float(rng() % 100000) - 50000.0f, -int(rng() % 8)); // mid-range
        if (i % 5 == 0)
            a[i] = std::bit_cast<float>(uint32_t(rng()) & 0x807fffffu); // denormal
    }
    Launch l;
    for (void* p : {(void*)a.data(), (void*)b.data(), (void*)c.data(), (void*)o.data(),
                    (void*)io.data(), (void*)ho.data(), (void*)dout.data()})
        pushArg(l, ptr(p));
    Result r = run(k, l, n, 64);
    REQUIRE(r.result.error == "");
    auto same = [](float got, float want) {
        return std::isnan(want) ? std::isnan(got)
                                : std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(want);
    };
    // OpenCL fmin/fmax: a NaN argument (quiet or signalling) yields the other one (glibc's
    // fmin returns NaN for a signalling NaN).
    auto fminCl = [](float p, float q) {
        return std::isnan(p) ? q : std::isnan(q) ? p : std::fmin(p, q);
    };
    auto fmaxCl = [](float p, float q) {
        return std::isnan(p) ? q : std::isnan(q) ? p : std::fmax(p, q);
    };
    unsigned bad[16] = {};
    for (uint32_t i = 0; i < n; ++i) {
        float x = a[i], y = b[i], z = c[i];
        const float* got = &o[i * 12];
        float want[12] = {x + y,
                          x * y,
                          std::fma(x, y, z),
                          std::sqrt(x),
                          std::floor(x),
                          std::ceil(x),
                          std::trunc(x),
                          std::nearbyint(x),
                          fminCl(x, y),
                          fmaxCl(x, y),
                          float(std::bit_cast<int32_t>(y)),
                          float(std::bit_cast<uint32_t>(z))};
        for (int j = 0; j < 12; ++j)
            if (!same(got[j], want[j]) && bad[j]++ < 3)
                UNSCOPED_INFO("op " << j << " x=" << x << " y=" << y << " got " << got[j]
                                    << " want " << want[j]);
        int32_t wi = std::fabs(x) < 2.0e9f ? int32_t(x) : 0;
        int32_t wu = (x >= 0.0f && x < 4.0e9f) ? int32_t(uint32_t(x)) : 0;
        if (io[i * 2] != wi && bad[12]++ < 3)
            UNSCOPED_INFO("f2i x=" << x << " got " << io[i * 2]);
        if (io[i * 2 + 1] != wu && bad[13]++ < 3)
            UNSCOPED_INFO("f2u x=" << x << " got " << io[i * 2 + 1]);
        _Float16 h = _Float16(x);
        bool hok = std::isnan(float(h))
                       ? std::isnan(float(ho[i]))
                       : std::bit_cast<uint16_t>(ho[i]) == std::bit_cast<uint16_t>(h);
        if (!hok && bad[14]++ < 3)
            UNSCOPED_INFO("f2h x=" << x << " got " << float(ho[i]));
        double wd = double(x) * double(y);
        if (!(std::isnan(wd) ? std::isnan(dout[i]) : dout[i] == wd) && bad[15]++ < 3)
            UNSCOPED_INFO("f64 mul x=" << x << " got " << dout[i]);
    }
    for (int j = 0; j < 16; ++j)
        CHECK(bad[j] == 0);
}

TEST_CASE("v_trig_preop_f64 returns the 53-bit segments of 2/pi", "[gcn_model]") {
    Kernel k = compileKernel(std::string(kPrelude) + R"(
        #pragma OPENCL EXTENSION cl_khr_fp64 : enable
        __kernel void preop(__global const double* x, __global double* out) {
            uint lid = LID;
            out[lid] = __builtin_amdgcn_trig_preop(x[lid], (int)(lid % 4));
        })",
                             "preop");
    std::vector<double> x(64), out(64);
    for (int i = 0; i < 64; ++i)
        x[i] = i < 32 ? 1.5 : std::ldexp(1.25, 70 + i * 10); // some above 2^54
    Launch l;
    pushArg(l, ptr(x.data()));
    pushArg(l, ptr(out.data()));
    Result r = run(k, l, 64, 64);
    REQUIRE(r.result.error == "");
    // 2/pi = 0.636619772367581343..., segment 0 is its first 53 bits (truncated).
    CHECK(out[0] == 0.6366197723675813); // 0x3fe45f306dc9c882
    CHECK(std::bit_cast<uint64_t>(out[0]) == 0x3fe45f306dc9c882ull);
    // The segments add up to 2/pi far beyond double precision: s0 + s1 + s2 in long double.
    long double sum = (long double)out[0] + out[1] + out[2];
    CHECK(std::fabs(sum - 0.636619772367581343075535053490057448L) < 1e-18L);
    CHECK(out[1] > 0);
    CHECK(out[1] < std::ldexp(1.0, -52));
    CHECK(out[2] < std::ldexp(1.0, -105));
    // Large inputs start further into the fraction (biased exponent above 1077).
    CHECK(out[40] != out[0]);
}

/// Runs a device-enqueue kernel `(out, handle)` over `items` work-items with `ring` as its
/// default queue (hidden_default_queue, code object v5).
Result runWithRing(const Kernel& k, std::vector<int32_t>& out, uint64_t* handle,
                   std::vector<uint64_t>& ring, uint32_t items) {
    Launch l;
    pushArg(l, ptr(out.data()));
    pushArg(l, ptr(handle));
    l.kernargs.resize(256, 0);
    const uint64_t q = ptr(ring.data());
    std::memcpy(l.kernargs.data() + 16 + 104, &q, 8);
    return run(k, l, items, 64);
}

TEST_CASE("device enqueue: lanes append launch records to the ring until it is full",
          "[gcn_model][device_enqueue]") {
    // builtins/gcn/device_enqueue.cl on the model: 128 work-items (two waves) each enqueue a
    // block into a ring with room for 100 records; the head's device-scope atomic hands out
    // distinct slots, the rest get CLK_DEVICE_QUEUE_FULL. The "block" is a literal laid out
    // as clang lays one out (size, align, invoke, captures), so no block kernel is needed.
    Kernel k = compileKernel(
        std::string(kPrelude) + R"(
        int __enqueue_kernel_basic(queue_t q, int flags, private ndrange_t* nd, void* handle,
                                   void* block);
        typedef struct { int size; int align; ulong invoke; uint gid; uint pad; } lit_t;
        __kernel void ring_writer(__global int* rets, __global ulong* handle) {
            uint i = GRP * 64 + LID;
            lit_t b = { (int)sizeof(lit_t), 8, 0, i, 7u };
            ndrange_t nd = ndrange_1D((size_t)i + 1);
            rets[i] = __enqueue_kernel_basic(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL,
                                             &nd, (void*)handle, (void*)&b);
        })",
        "ring_writer",
        {"libclc", "-cl-std=CL2.0", "-mlink-builtin-bitcode", DUET_TEST_GCN_BUILTINS_BC});
    constexpr uint32_t kHeader = 56, kRecord = 112 + 24, kRoom = 100, kItems = 128;
    std::vector<uint64_t> ring((kHeader + kRoom * kRecord) / 8 + 1, 0);
    auto* h = reinterpret_cast<uint32_t*>(ring.data());
    h[0] = 0x44524e47u;     // magic
    h[1] = kRoom * kRecord; // record bytes
    ring[3] = 0;            // events offset (no pool)
    ring[4] = kHeader;      // records offset
    std::vector<int32_t> rets(kItems, 1);
    // The block kernel's handle as the runtime fills it: index 0, 256 work-items per group at
    // most, preferred multiple 64.
    uint64_t handle[2] = {256ull << 32, 64};
    Result r = runWithRing(k, rets, handle, ring, kItems);
    REQUIRE(r.result.error == "");
    CHECK(std::count(rets.begin(), rets.end(), 0) == int(kRoom));
    CHECK(std::count(rets.begin(), rets.end(), -161) == int(kItems - kRoom)); // QUEUE_FULL
    CHECK(h[3] == kItems - kRoom);                                            // full counter
    std::vector<bool> seen(kItems, false);
    const auto* recs = reinterpret_cast<const unsigned char*>(ring.data()) + kHeader;
    for (uint32_t n = 0; n < kRoom; ++n) {
        const unsigned char* rec = recs + n * kRecord;
        auto u32 = [&](size_t o) {
            uint32_t v;
            std::memcpy(&v, rec + o, 4);
            return v;
        };
        auto u64 = [&](size_t o) {
            uint64_t v;
            std::memcpy(&v, rec + o, 8);
            return v;
        };
        REQUIRE(u32(0) == kRecord); // published length
        CHECK(u32(4) == 1);         // a kernel
        CHECK(u64(8) == ptr(handle));
        CHECK(u32(16) == 1); // CLK_ENQUEUE_FLAGS_WAIT_KERNEL
        CHECK(u32(20) == 1); // work_dim
        const uint64_t global = u64(48);
        CHECK(u32(104) == 24); // block bytes
        const uint32_t gid = u32(112 + 16);
        REQUIRE(gid < kItems);
        CHECK(global == gid + 1);
        CHECK(rets[gid] == 0);
        CHECK(!seen[gid]);
        seen[gid] = true;
        CHECK(u32(112) == 24); // the literal's size, copied
        CHECK(u32(112 + 20) == 7);
    }
}

TEST_CASE("device enqueue: events, wait lists, markers and __local sizes in the ring",
          "[gcn_model][device_enqueue]") {
    Kernel k = compileKernel(
        std::string(kPrelude) + R"(
        int __enqueue_kernel_basic(queue_t q, int flags, private ndrange_t* nd, void* handle,
                                   void* block);
        int __enqueue_kernel_basic_events(queue_t q, int flags, private ndrange_t* nd, uint n,
                                          const clk_event_t* wait, clk_event_t* ret,
                                          void* handle, void* block);
        int __enqueue_kernel_events_varargs(queue_t q, int flags, private ndrange_t* nd, uint n,
                                            const clk_event_t* wait, clk_event_t* ret,
                                            void* handle, void* block, uint nl,
                                            private size_t* sizes);
        typedef struct { int size; int align; ulong invoke; uint gid; uint pad; } lit_t;
        __kernel void events(__global int* out, __global ulong* handle) {
            if (LID != 0) return;
            queue_t q = get_default_queue();
            clk_event_t u = create_user_event(), e, m;
            out[0] = is_valid_event(u);
            lit_t b = { (int)sizeof(lit_t), 8, 0, 5u, 0u };
            ndrange_t nd = ndrange_1D(64, 64), bad = ndrange_1D(1024, 512); // past the handle's 256
            size_t sizes[2] = {16, 32};
            out[1] = __enqueue_kernel_events_varargs(q, CLK_ENQUEUE_FLAGS_NO_WAIT, &nd, 1, &u, &e,
                                                     (void*)handle, (void*)&b, 2, sizes);
            out[2] = enqueue_marker(q, 1, &e, &m);
            out[3] = enqueue_marker(q, 0, 0, &m);
            set_user_event_status(u, CL_COMPLETE);
            retain_event(e);
            release_event(e);
            release_event(u);
            out[4] = is_valid_event(u);
            out[5] = is_valid_event(e);
            out[6] = __enqueue_kernel_basic(q, 0, &bad, (void*)handle, (void*)&b);
            out[7] = __enqueue_kernel_basic_events(q, 0, &nd, 1, &u, 0, (void*)handle, (void*)&b);
        })",
        "events", {"libclc", "-cl-std=CL2.0", "-mlink-builtin-bitcode", DUET_TEST_GCN_BUILTINS_BC});
    constexpr uint32_t kHeader = 56, kEvent = 40, kEvents = 4, kRecords = 1024;
    constexpr uint32_t kRecordsAt = kHeader + kEvents * kEvent;
    std::vector<uint64_t> ring((kRecordsAt + kRecords) / 8, 0);
    auto* h = reinterpret_cast<uint32_t*>(ring.data());
    h[0] = 0x44524e47u;
    h[1] = kRecords;
    h[4] = kEvents;
    ring[3] = kHeader;
    ring[4] = kRecordsAt;
    std::vector<int32_t> out(8, 99);
    uint64_t handle[2] = {256ull << 32, 64};
    Result r = runWithRing(k, out, handle, ring, 64);
    REQUIRE(r.result.error == "");
    CHECK(out == std::vector<int32_t>{1, 0, 0, -57, 0, 1, -160, -57});
    const auto* bytes = reinterpret_cast<const unsigned char*>(ring.data());
    auto u32 = [&](size_t o) {
        uint32_t v;
        std::memcpy(&v, bytes + o, 4);
        return v;
    };
    CHECK(u32(20) == 3); // events handed out: the user event, the kernel's, the marker's
    // Event slots: refs, status, user.
    CHECK(u32(kHeader + 0) == 0); // user event released
    CHECK(u32(kHeader + 4) == 0); // CL_COMPLETE
    CHECK(u32(kHeader + 8) == 1);
    CHECK(u32(kHeader + kEvent) == 1);     // the kernel's: retained then released once
    CHECK(u32(kHeader + kEvent + 4) == 3); // CL_QUEUED
    CHECK(u32(kHeader + 2 * kEvent) == 1);
    // The kernel record: wait slot 0, __local sizes 16 and 32, returned event slot 1.
    const uint32_t rec0 = kRecordsAt, len0 = 128 + 24;
    CHECK(u32(rec0) == len0);
    CHECK(u32(rec0 + 4) == 1);
    CHECK(u32(rec0 + 96) == 1);   // wait count
    CHECK(u32(rec0 + 100) == 2);  // __local count
    CHECK(u32(rec0 + 104) == 24); // block bytes
    CHECK(u32(rec0 + 108) == 1);  // event slot
    CHECK(u32(rec0 + 112) == 0);
    CHECK(u32(rec0 + 116) == 16);
    CHECK(u32(rec0 + 120) == 32);
    CHECK(u32(rec0 + 128 + 16) == 5); // the literal's capture
    // The marker: waits on the kernel's event, returns slot 2.
    const uint32_t rec1 = rec0 + len0;
    CHECK(u32(rec1) == 120);
    CHECK(u32(rec1 + 4) == 2);
    CHECK(u32(rec1 + 96) == 1);
    CHECK(u32(rec1 + 108) == 2);
    CHECK(u32(rec1 + 112) == 1);
    CHECK(u32(8) == len0 + 120); // head: nothing else reserved
}
