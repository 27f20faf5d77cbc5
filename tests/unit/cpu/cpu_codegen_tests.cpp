// CPU code generator: compile OpenCL C, finalise for the CPU, run the work-group functions by
// hand over whole NDRanges, and compare with host references.
#include "compiler/binary.hpp"
#include "compiler/front_end.hpp"
#include "core/image.hpp"
#include "devices/cpu/jit/cpu_toolchain.hpp"
#include "devices/cpu/jit/host_cpu.hpp"
#include "devices/cpu/jit/jit_memo.hpp"
#include "devices/cpu/work_group_abi.hpp"
#include "devices/cpu/jit/printf.hpp"
#include "support/checked_kernels.hpp"

#include <catch.hpp>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace duet::rt;

namespace {

TargetSpec hostTarget() {
    TargetSpec t;
    // cpuName empty: the host CPU and its features
    return withCpuFrontEnd(t);
}

struct Built {
    FinalizeResult fin;
    std::string log;
    size_t index(const std::string& name) const {
        const auto& ks = fin.executable->kernels();
        for (size_t i = 0; i < ks.size(); ++i)
            if (ks[i].name == name)
                return i;
        FAIL("no kernel " << name);
        return 0;
    }
    WorkGroupFn fn(const std::string& name) const {
        return reinterpret_cast<WorkGroupFn>(fin.executable->entry(index(name)));
    }
    const KernelDesc& desc(const std::string& name) const {
        return fin.executable->kernels()[index(name)];
    }
};

Built build(const std::string& source, const std::string& options = "-cl-std=CL3.0") {
    Built b;
    CompileResult c = compileSource(source, options, {}, hostTarget());
    INFO(c.log);
    REQUIRE(c.status == CL_SUCCESS);
    b.fin = finalizeForCpu(c.bitcode, options, source, hostTarget());
    b.log = b.fin.log;
    INFO(b.fin.log);
    REQUIRE(b.fin.status == CL_SUCCESS);
    REQUIRE(b.fin.executable);
    return b;
}

/// The floats a vector of the host's chosen width holds: the CPU device's sub-group size.
unsigned hostLanes() {
    const std::string features = hostCpuFeatures();
    const bool avx512 = features.find("+avx512f") != std::string::npos;
    const bool avx = features.find("+avx2") != std::string::npos;
    return cpuVectorWidth(hostCpuName(), avx512, avx).bits / 32;
}

/// "vectorization width: N," for the floats a vector of the host's chosen width holds.
std::string hostLanesText() {
    return "vectorization width: " + std::to_string(hostLanes()) + ",";
}

/// Runs every work-group of an NDRange on this thread (non-uniform: trailing partial groups).
void runNDRange(WorkGroupFn fn, std::vector<void*> args, unsigned dims,
                std::array<size_t, 3> global, std::array<size_t, 3> local,
                std::array<size_t, 3> offset = {0, 0, 0}, uint64_t localMemSize = 0,
                void* printfCtx = nullptr) {
    for (unsigned d = dims; d < 3; ++d) {
        global[d] = 1;
        local[d] = 1;
        offset[d] = 0;
    }
    WorkGroupContext ctx{};
    ctx.workDim = dims;
    ctx.subGroupSize = hostLanes();
    size_t groups[3];
    for (unsigned d = 0; d < 3; ++d) {
        ctx.globalOffset[d] = offset[d];
        ctx.globalSize[d] = global[d];
        ctx.enqueuedLocalSize[d] = local[d];
        groups[d] = (global[d] + local[d] - 1) / local[d];
        ctx.numGroups[d] = groups[d];
    }
    std::vector<std::max_align_t> localMem(localMemSize / sizeof(std::max_align_t) + 1);
    ctx.localMem = reinterpret_cast<char*>(localMem.data());
    ctx.printfCtx = printfCtx;
    for (size_t gz = 0; gz < groups[2]; ++gz)
        for (size_t gy = 0; gy < groups[1]; ++gy)
            for (size_t gx = 0; gx < groups[0]; ++gx) {
                size_t g[3] = {gx, gy, gz};
                for (unsigned d = 0; d < 3; ++d) {
                    ctx.groupId[d] = g[d];
                    ctx.localSize[d] = std::min(local[d], global[d] - g[d] * local[d]);
                }
                fn(args.data(), &ctx);
            }
}

/// Holds pointer arguments: args[i] must point at a void* holding the address.
struct PtrArgs {
    std::vector<void*> storage;
    explicit PtrArgs(std::initializer_list<void*> ptrs) : storage(ptrs) {}
    void* at(size_t i) { return &storage[i]; }
};

std::string readFile(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// The body of `define ... @name(` in an LLVM IR text.
std::string functionText(const std::string& ir, const std::string& name) {
    size_t at = ir.find("@" + name + "(");
    while (at != std::string::npos && ir.rfind("define", at) < ir.rfind('\n', at))
        break;
    if (at == std::string::npos)
        return {};
    size_t end = ir.find("\n}\n", at);
    return ir.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

/// The lines of `log` that hold `tag`, each from the tag to the end of its line.
std::vector<std::string> linesWith(const std::string& log, const std::string& tag) {
    std::vector<std::string> lines;
    for (size_t at = 0; (at = log.find(tag, at)) != std::string::npos;) {
        const size_t end = log.find('\n', at);
        lines.push_back(log.substr(at, end - at));
        at = end;
    }
    return lines;
}

const char* kTriad = R"CL(
__kernel void triad(__global float* c, __global const float* a, __global const float* b,
                    float s) {
    size_t i = get_global_id(0);
    c[i] = a[i] + s * b[i];
}
)CL";

} // namespace

TEST_CASE("triad over a 1D range with offset and a partial last group", "[cpu][cpu_codegen]") {
    Built b = build(kTriad);
    const KernelDesc& k = b.desc("triad");
    CHECK_FALSE(k.hasBarrier);
    CHECK_FALSE(k.usesPrintf);
    const size_t n = 1000, off = 7;
    std::vector<float> a(n + off), bb(n + off), c(n + off, -1.0f);
    for (size_t i = 0; i < a.size(); ++i) {
        a[i] = float(i) * 0.5f;
        bb[i] = float(i % 13) - 3.0f;
    }
    float s = 1.5f;
    PtrArgs p{c.data(), a.data(), bb.data()};
    runNDRange(b.fn("triad"), {p.at(0), p.at(1), p.at(2), &s}, 1, {n, 1, 1}, {64, 1, 1},
               {off, 0, 0});
    for (size_t i = 0; i < off; ++i)
        REQUIRE(c[i] == -1.0f);
    for (size_t i = off; i < n + off; ++i)
        REQUIRE(c[i] == a[i] + s * bb[i]);
}

TEST_CASE("streaming-store variants: same results, aligned or not; none where they would be wrong",
          "[cpu][cpu_codegen]") {
    Built b = build(std::string(kTriad) + R"CL(
__kernel void scale4(__global float4* out, __global const float4* in, float s) {
    size_t i = get_global_id(0);
    out[i] = in[i] * s;
}
__kernel void count(__global float* out, __global const float* in, __global int* n) {
    size_t i = get_global_id(0);
    out[i] = in[i] + 1.0f;
    atomic_inc(n);
}
__kernel void axpy4(__global float4* y, __global const float4* x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
__kernel void reduce_only(__global const float* in, __global float* out) {
    if (get_global_id(0) == 0)
        out[0] = in[0];
}
// A 2D kernel: its entry only picks its .simd or .lx1 variant, whose loops hold the stores.
__kernel void scale2d(__global float* out, __global const float* in, float s, uint w) {
    size_t i = get_global_id(1) * w + get_global_id(0);
    out[i] = in[i] * s;
}
// A kernel-scope __local array elsewhere in the program must not make the program compile as
// a whole (which has no variants).
__kernel void with_local(__global float* out) {
    __local float tmp[64];
    tmp[get_local_id(0) % 64] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[0];
}
)CL");
    // The variants come with the optimised code (DUET_CPU_TIER_UP_MS=0 here: entry() makes it).
    for (const char* k : {"triad", "scale4", "count", "axpy4", "reduce_only", "scale2d"}) {
        REQUIRE(b.fn(k));
        CHECK(b.fin.executable->streamingEntry(b.index(k)) !=
              reinterpret_cast<void*>(b.fn(k))); // a variant, or none
    }
    // Kernels with atomics keep plain stores (non-temporal stores are weakly ordered), as do
    // kernels with no vector stores to __global memory.
    CHECK(b.fin.executable->streamingEntry(b.index("count")) == nullptr);
    CHECK(b.fin.executable->streamingEntry(b.index("reduce_only")) == nullptr);
    // Nor stores to a buffer the kernel reads: the load brought the line into the cache.
    CHECK(b.fin.executable->streamingEntry(b.index("axpy4")) == nullptr);
    auto triad = reinterpret_cast<WorkGroupFn>(b.fin.executable->streamingEntry(b.index("triad")));
    REQUIRE(triad);
    CHECK(b.fin.executable->streamingEntry(b.index("triad")) == reinterpret_cast<void*>(triad));

    // Offsets 0 (every vector store aligned) and 1, 3 (none aligned), partial last groups.
    for (size_t off : {size_t(0), size_t(1), size_t(3)}) {
        const size_t n = 4099;
        std::vector<float> a(n + off), bb(n + off), c(n + off, -1.0f);
        for (size_t i = 0; i < a.size(); ++i) {
            a[i] = float(i) * 0.25f;
            bb[i] = float(i % 29) - 7.0f;
        }
        float s = -2.5f;
        PtrArgs p{c.data(), a.data(), bb.data()};
        runNDRange(triad, {p.at(0), p.at(1), p.at(2), &s}, 1, {n, 1, 1}, {256, 1, 1}, {off, 0, 0});
        for (size_t i = 0; i < off; ++i)
            REQUIRE(c[i] == -1.0f);
        for (size_t i = off; i < n + off; ++i)
            REQUIRE(c[i] == a[i] + s * bb[i]);
    }

    void* scale4 = b.fin.executable->streamingEntry(b.index("scale4"));
    REQUIRE(scale4);
    const size_t n = 1000;
    alignas(64) static float out[4 * n + 4];
    std::vector<float> in(4 * n);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i);
    float s = 0.5f;
    // out + 4: float4-aligned as OpenCL requires, not aligned for wider vector stores.
    PtrArgs p{out + 4, in.data()};
    runNDRange(reinterpret_cast<WorkGroupFn>(scale4), {p.at(0), p.at(1), &s}, 1, {n, 1, 1},
               {100, 1, 1});
    CHECK(out[3] == 0.0f);
    for (size_t i = 0; i < in.size(); ++i)
        REQUIRE(out[i + 4] == in[i] * s);

    void* scale2d = b.fin.executable->streamingEntry(b.index("scale2d"));
    REQUIRE(scale2d);
    constexpr cl_uint kW = 96, kH = 12;
    cl_uint w = kW;
    alignas(64) static float out2d[kW * kH];
    std::vector<float> in2d(kW * kH);
    for (size_t i = 0; i < in2d.size(); ++i)
        in2d[i] = float(i) - 100.0f;
    PtrArgs p2{out2d, in2d.data()};
    runNDRange(reinterpret_cast<WorkGroupFn>(scale2d), {p2.at(0), p2.at(1), &s, &w}, 2, {kW, kH, 1},
               {32, 4, 1});
    for (size_t i = 0; i < in2d.size(); ++i)
        REQUIRE(out2d[i] == in2d[i] * s);
}

TEST_CASE("work-item functions over 2D and 3D ranges", "[cpu][cpu_codegen]") {
    Built b = build(R"CL(
__kernel void ids(__global ulong* out) {
    size_t gx = get_global_id(0) - get_global_offset(0);
    size_t gy = get_global_id(1) - get_global_offset(1);
    size_t gz = get_global_id(2) - get_global_offset(2);
    size_t lin = (gz * get_global_size(1) + gy) * get_global_size(0) + gx;
    __global ulong* o = out + lin * 12;
    o[0] = get_global_id(0); o[1] = get_global_id(1); o[2] = get_global_id(2);
    o[3] = get_local_id(0) + 100 * get_local_id(1) + 10000 * get_local_id(2);
    o[4] = get_local_size(0) + 100 * get_local_size(1) + 10000 * get_local_size(2);
    o[5] = get_group_id(0) + 100 * get_group_id(1) + 10000 * get_group_id(2);
    o[6] = get_num_groups(0) + 100 * get_num_groups(1) + 10000 * get_num_groups(2);
    o[7] = get_enqueued_local_size(0) + 100 * get_enqueued_local_size(1);
    o[8] = get_work_dim();
    o[9] = get_global_linear_id();
    o[10] = get_local_linear_id();
    uint d = (uint)(o[0] & 3); // a dimension only known at run time
    o[11] = get_global_size(d) + 1000 * get_local_id(d);
}
)CL");
    for (unsigned dims : {2u, 3u}) {
        std::array<size_t, 3> global{13, 7, dims == 3 ? 5u : 1u}, local{4, 3, dims == 3 ? 2u : 1u},
            offset{3, 2, dims == 3 ? 1u : 0u};
        const size_t total = global[0] * global[1] * global[2];
        std::vector<uint64_t> out(total * 12, ~0ull);
        PtrArgs p{out.data()};
        runNDRange(b.fn("ids"), {p.at(0)}, dims, global, local, offset);
        for (size_t z = 0; z < global[2]; ++z)
            for (size_t y = 0; y < global[1]; ++y)
                for (size_t x = 0; x < global[0]; ++x) {
                    size_t g[3] = {x, y, z};
                    size_t lin = (z * global[1] + y) * global[0] + x;
                    const uint64_t* o = &out[lin * 12];
                    size_t lid[3], lsz[3], grp[3], ngr[3];
                    for (int d = 0; d < 3; ++d) {
                        grp[d] = g[d] / local[d];
                        lid[d] = g[d] % local[d];
                        ngr[d] = (global[d] + local[d] - 1) / local[d];
                        lsz[d] = std::min(local[d], global[d] - grp[d] * local[d]);
                    }
                    INFO("dims " << dims << " item " << x << "," << y << "," << z);
                    REQUIRE(o[0] == x + offset[0]);
                    REQUIRE(o[1] == y + offset[1]);
                    REQUIRE(o[2] == z + offset[2]);
                    REQUIRE(o[3] == lid[0] + 100 * lid[1] + 10000 * lid[2]);
                    REQUIRE(o[4] == lsz[0] + 100 * lsz[1] + 10000 * lsz[2]);
                    REQUIRE(o[5] == grp[0] + 100 * grp[1] + 10000 * grp[2]);
                    REQUIRE(o[6] == ngr[0] + 100 * ngr[1] + 10000 * ngr[2]);
                    REQUIRE(o[7] == local[0] + 100 * local[1]);
                    REQUIRE(o[8] == dims);
                    REQUIRE(o[9] == lin);
                    REQUIRE(o[10] == (lid[2] * lsz[1] + lid[1]) * lsz[0] + lid[0]);
                    unsigned d = unsigned((x + offset[0]) & 3);
                    uint64_t expect = d < 3 ? global[d] + 1000 * lid[d] : 1;
                    REQUIRE(o[11] == expect);
                }
    }
}

TEST_CASE("barrier: reversal through local memory", "[cpu][cpu_codegen]") {
    const char* opts = GENERATE("-cl-std=CL3.0", "-cl-std=CL1.2 -cl-opt-disable");
    INFO(opts);
    Built b = build(R"CL(
__kernel void reverse(__global const int* in, __global int* out, __local int* tmp) {
    size_t l = get_local_id(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - l];
}
)CL",
                    opts);
    CHECK(b.desc("reverse").hasBarrier);
    const size_t n = 200, wg = 32;
    std::vector<int> in(n), out(n, -1), tmp(wg);
    for (size_t i = 0; i < n; ++i)
        in[i] = int(i * 3 + 1);
    PtrArgs p{in.data(), out.data(), tmp.data()};
    runNDRange(b.fn("reverse"), {p.at(0), p.at(1), p.at(2)}, 1, {n, 1, 1}, {wg, 1, 1});
    for (size_t i = 0; i < n; ++i) {
        size_t g = i / wg, l = i % wg, size = std::min(wg, n - g * wg);
        REQUIRE(out[i] == in[g * wg + size - 1 - l]);
    }
}

TEST_CASE("barriers in a loop: tree reduction in kernel-scope local memory", "[cpu][cpu_codegen]") {
    Built b = build(R"CL(
__kernel void reduce(__global const float* in, __global float* sums) {
    __local float scratch[64];
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (l < s)
            scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        sums[get_group_id(0)] = scratch[0];
}
)CL");
    const KernelDesc& k = b.desc("reduce");
    CHECK(k.hasBarrier);
    CHECK(k.staticLocalMemSize == 64 * sizeof(float));
    const size_t wg = 64, groups = 10, n = wg * groups;
    std::vector<float> in(n), sums(groups, -1.0f);
    for (size_t i = 0; i < n; ++i)
        in[i] = float(i % 17);
    PtrArgs p{in.data(), sums.data()};
    runNDRange(b.fn("reduce"), {p.at(0), p.at(1)}, 1, {n, 1, 1}, {wg, 1, 1}, {0, 0, 0},
               k.staticLocalMemSize);
    for (size_t g = 0; g < groups; ++g) {
        float expect = 0;
        for (size_t i = 0; i < wg; ++i)
            expect += in[g * wg + i];
        REQUIRE(sums[g] == expect);
    }
}

namespace {
const char* kNBody = R"CL(
__kernel void nbody(__global const float4* pos, __global float4* acc, int n, float eps2) {
    __local float4 tile[64];
    size_t i = get_global_id(0);
    size_t l = get_local_id(0);
    size_t ls = get_local_size(0);
    float4 p = pos[i];
    float3 a = (float3)(0.0f);
    for (int t = 0; t < n; t += ls) {
        tile[l] = pos[t + l];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < ls; ++j) {
            float4 q = tile[j];
            float3 d = q.xyz - p.xyz;
            float r2 = d.x * d.x + d.y * d.y + d.z * d.z + eps2;
            float inv = 1.0f / sqrt(r2);
            float s = q.w * inv * inv * inv;
            a += s * d;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc[i] = (float4)(a, 0.0f);
}
)CL";
}

const char* kNaiveNBody = R"CL(
__kernel void nbody(__global const float4* pos, __global float4* acc, int n, float eps2) {
    size_t i = get_global_id(0);
    float4 p = pos[i];
    float3 a = (float3)(0.0f);
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float3 d = q.xyz - p.xyz;
        float r2 = d.x * d.x + d.y * d.y + d.z * d.z + eps2;
        float inv = 1.0f / sqrt(r2);
        a += (q.w * inv * inv * inv) * d;
    }
    acc[i] = (float4)(a, 0.0f);
}
)CL";

TEST_CASE("barriers in a loop: tiled all-pairs N-body", "[cpu][cpu_codegen]") {
    const char* opts = GENERATE("-cl-std=CL3.0", "-cl-std=CL3.0 -cl-opt-disable");
    // The tiled kernel, and the plain one (no barrier: its uniform loop gets implicit ones).
    const bool tiled = GENERATE(true, false);
    INFO(opts << (tiled ? " tiled" : " plain"));
    Built b = build(tiled ? kNBody : kNaiveNBody, opts);
    const KernelDesc& k = b.desc("nbody");
    CHECK(k.hasBarrier == tiled);
    CHECK(k.staticLocalMemSize == (tiled ? 64 * 16 : 0));
    const int n = 256;
    // 64: the vectorised variant; 8: the one for groups too small to fill a vector.
    const size_t wg = GENERATE(64, 8);
    std::vector<std::array<float, 4>> pos(n), acc(n);
    for (int i = 0; i < n; ++i)
        pos[size_t(i)] = {std::sin(float(i)) * 10, std::cos(float(i) * 0.7f) * 10,
                          float(i % 11) - 5, 1.0f + float(i % 3)};
    float eps2 = 0.01f;
    int nn = n;
    PtrArgs p{pos.data(), acc.data()};
    runNDRange(b.fn("nbody"), {p.at(0), p.at(1), &nn, &eps2}, 1, {size_t(n), 1, 1}, {wg, 1, 1},
               {0, 0, 0}, k.staticLocalMemSize);
    for (int i = 0; i < n; ++i) {
        double a[3] = {0, 0, 0};
        for (int j = 0; j < n; ++j) {
            double d[3];
            for (int c = 0; c < 3; ++c)
                d[c] = double(pos[size_t(j)][c]) - pos[size_t(i)][c];
            double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
            double inv = 1.0 / std::sqrt(r2);
            double s = pos[size_t(j)][3] * inv * inv * inv;
            for (int c = 0; c < 3; ++c)
                a[c] += s * d[c];
        }
        for (int c = 0; c < 3; ++c) {
            INFO("group size " << wg << " body " << i << " component " << c);
            REQUIRE(acc[size_t(i)][c] == Approx(a[c]).epsilon(1e-3).margin(1e-2));
        }
    }
}

TEST_CASE("private arrays and values live across a barrier", "[cpu][cpu_codegen]") {
    Built b = build(R"CL(
__kernel void priv(__global int* out, __local int* shared, int k) {
    int mine[8];
    size_t g = get_global_id(0);
    size_t l = get_local_id(0);
    int v = (int)g * 3 + k;
    for (int i = 0; i < 8; ++i)
        mine[i] = (int)g * 10 + i;
    shared[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    int other = shared[(l + 1) % get_local_size(0)];
    int sum = 0;
    for (int i = 0; i < 8; ++i)
        sum += mine[(i + k) & 7] * (i + 1);
    out[g] = sum + v * 1000 + other * 100000;
}
)CL");
    const size_t n = 48, wg = 16;
    std::vector<int> out(n, -1), shared(wg);
    int k = 5;
    PtrArgs p{out.data(), shared.data()};
    runNDRange(b.fn("priv"), {p.at(0), p.at(1), &k}, 1, {n, 1, 1}, {wg, 1, 1});
    for (size_t g = 0; g < n; ++g) {
        int sum = 0;
        for (int i = 0; i < 8; ++i)
            sum += (int(g) * 10 + ((i + k) & 7)) * (i + 1);
        size_t grp = g / wg, l = g % wg;
        int other = int(grp * wg + (l + 1) % wg) * 3 + k;
        REQUIRE(out[g] == sum + (int(g) * 3 + k) * 1000 + other * 100000);
    }
}

TEST_CASE("struct arguments by value", "[cpu][cpu_codegen]") {
    Built b = build(R"CL(
typedef struct { float scale; int shift; double bias; char tag; } Params;
__kernel void apply(__global double* out, Params p) {
    size_t i = get_global_id(0);
    p.shift += 1; // the kernel's copy, not the caller's
    out[i] = (double)(p.scale * (float)(i + p.shift)) + p.bias + p.tag;
}
)CL");
    struct Params {
        float scale;
        int shift;
        double bias;
        char tag;
    } params{2.0f, 3, 0.25, 7};
    const size_t n = 37;
    std::vector<double> out(n);
    PtrArgs p{out.data()};
    runNDRange(b.fn("apply"), {p.at(0), &params}, 1, {n, 1, 1}, {8, 1, 1});
    CHECK(params.shift == 3);
    for (size_t i = 0; i < n; ++i)
        REQUIRE(out[i] == double(2.0f * float(i + 4)) + 0.25 + 7);
}

TEST_CASE("a kernel calling another kernel", "[cpu][cpu_codegen]") {
    Built b = build(R"CL(
__kernel void fill(__global int* out, int v) { out[get_global_id(0)] = v + (int)get_local_id(0); }
__kernel void twice(__global int* out, __global int* out2) {
    fill(out, 100);
    fill(out2, 200);
}
)CL");
    const size_t n = 20;
    std::vector<int> o1(n), o2(n);
    PtrArgs p{o1.data(), o2.data()};
    runNDRange(b.fn("twice"), {p.at(0), p.at(1)}, 1, {n, 1, 1}, {5, 1, 1});
    for (size_t i = 0; i < n; ++i) {
        REQUIRE(o1[i] == 100 + int(i % 5));
        REQUIRE(o2[i] == 200 + int(i % 5));
    }
}

namespace {
struct CaptureSink : PrintfSink {
    std::mutex mutex;
    std::vector<std::string> lines;
    void write(std::string_view text) override {
        std::lock_guard<std::mutex> lock(mutex);
        lines.emplace_back(text);
    }
};
} // namespace

TEST_CASE("printf with scalars, vectors and strings", "[cpu][cpu_codegen]") {
    Built b = build(R"CL(
__kernel void hello(int k) {
    size_t i = get_global_id(0);
    float4 f = (float4)(1.5f, -2.0f, 3.25f, (float)i);
    short2 s = (short2)(-3, (short)i);
    printf("item %d k=%d f=%v4hlf s=%v2hd %s %.2f %c%%\n", (int)i, k, f, s, "ok", 0.5f, 'x');
}
)CL");
    CHECK(b.desc("hello").usesPrintf);
    CaptureSink sink;
    int k = 42;
    runNDRange(b.fn("hello"), {&k}, 1, {3, 1, 1}, {3, 1, 1}, {0, 0, 0}, 0, &sink);
    REQUIRE(sink.lines.size() == 3);
    for (int i = 0; i < 3; ++i) {
        std::string expect = "item " + std::to_string(i) + " k=42 f=1.500000,-2.000000,3.250000," +
                             std::to_string(i) + ".000000 s=-3," + std::to_string(i) +
                             " ok 0.50 x%\n";
        REQUIRE(sink.lines[size_t(i)] == expect);
    }
}

TEST_CASE("printf formatting rules", "[cpu][cpu_codegen]") {
    auto format = [](const char* fmt, std::vector<std::vector<char>> args, std::string& out) {
        std::string buf;
        std::vector<uint32_t> layout;
        for (auto& a : args) {
            layout.push_back(uint32_t(buf.size()));
            layout.push_back(uint32_t(a.size()));
            buf.append(a.begin(), a.end());
            buf.append((8 - buf.size() % 8) % 8, '\0');
        }
        return formatOpenClPrintf(fmt, buf.data(), layout.data(), uint32_t(args.size()), out);
    };
    // Sized up front and filled with memcpy: GCC 12 takes vector::insert of a byte range here
    // for a write past the end (-Wstringop-overflow).
    auto bytesOf = [](auto... v) {
        std::vector<char> b((sizeof(v) + ...));
        size_t at = 0;
        ((std::memcpy(b.data() + at, &v, sizeof(v)), at += sizeof(v)), ...);
        return b;
    };
    std::string out;
    CHECK(format("%d|%5.1f|%hhd|%x", {bytesOf(-7), bytesOf(2.25), bytesOf(0x1ff), bytesOf(255u)},
                 out));
    CHECK(out == "-7|  2.2|-1|ff");
    out.clear();
    // float3 occupies four floats; half vectors; %hlf on a scalar is lenient.
    CHECK(format(
        "%v3hlf %v2hx %hlf",
        {bytesOf(1.0f, 2.0f, 3.0f, 0.0f), bytesOf(uint16_t(0xab), uint16_t(0xcd)), bytesOf(0.5)},
        out));
    CHECK(out == "1.000000,2.000000,3.000000 ab,cd 0.500000");
    out.clear();
    CHECK(format("%v2hf", {bytesOf(uint16_t(0x3c00), uint16_t(0xc000))}, out));
    CHECK(out == "1.000000,-2.000000");
    out.clear();
    CHECK_FALSE(format("%d %d", {bytesOf(1)}, out)); // missing argument
    CHECK_FALSE(format("%v5d", {bytesOf(1)}, out));  // no such vector size
}

TEST_CASE("an undefined function fails the build and is named in the log", "[cpu][cpu_codegen]") {
    const std::string src = R"CL(
int helper_that_does_not_exist(int x);
__kernel void k(__global int* out) { out[0] = helper_that_does_not_exist(3); }
)CL";
    CompileResult c = compileSource(src, "-cl-std=CL3.0", {}, hostTarget());
    REQUIRE(c.status == CL_SUCCESS);
    FinalizeResult f = finalizeForCpu(c.bitcode, "-cl-std=CL3.0", src, hostTarget());
    CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
    CHECK_FALSE(f.executable);
    CHECK(f.log.find("helper_that_does_not_exist") != std::string::npos);
}

TEST_CASE("a prototype of a host function is not a way into the host", "[cpu][cpu_codegen]") {
    const std::string src = R"CL(
int system(const __constant char* command);
__kernel void k(__global int* out) { out[0] = system("true"); }
)CL";
    CompileResult c = compileSource(src, "-cl-std=CL3.0", {}, hostTarget());
    REQUIRE(c.status == CL_SUCCESS);
    FinalizeResult f = finalizeForCpu(c.bitcode, "-cl-std=CL3.0", src, hostTarget());
    CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
    CHECK(f.log.find("'system'") != std::string::npos);
}

TEST_CASE("entries run from many threads at once", "[cpu][cpu_codegen]") {
    Built b = build(kTriad);
    WorkGroupFn fn = b.fn("triad");
    const size_t n = 4096;
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            std::vector<float> a(n, float(t)), bb(n, 2.0f), c(n, 0.0f);
            float s = 3.0f;
            PtrArgs p{c.data(), a.data(), bb.data()};
            runNDRange(fn, {p.at(0), p.at(1), p.at(2), &s}, 1, {n, 1, 1}, {128, 1, 1});
            ok[size_t(t)] =
                std::all_of(c.begin(), c.end(), [&](float v) { return v == float(t) + 6.0f; });
        });
    for (auto& th : threads)
        th.join();
    for (int v : ok)
        CHECK(v == 1);
}

TEST_CASE("the program binary holds source, bitcode and the object code", "[cpu][cpu_codegen]") {
    Built b = build(kTriad);
    const std::string& bin = b.fin.executable->binary();
    REQUIRE(bin.size() > 64);
    CHECK(bin.compare(0, 4,
                      "\x7f"
                      "ELF") == 0);
    ReadProgramBinaryResult parsed = readProgramBinary(
        std::span(reinterpret_cast<const unsigned char*>(bin.data()), bin.size()));
    REQUIRE(parsed.status == CL_SUCCESS);
    CHECK(parsed.binary.type == CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    CHECK(parsed.binary.source == kTriad);
    CHECK_FALSE(parsed.binary.bitcode.empty());
    // .text: the relocatable x86-64 object the JIT linked.
    REQUIRE(parsed.binary.text.size() > 64);
    CHECK(parsed.binary.text.compare(0, 4,
                                     "\x7f"
                                     "ELF") == 0);
    CHECK(parsed.binary.machine == 62);
    LoadBinaryResult again = loadCpuBinary(
        std::span(reinterpret_cast<const unsigned char*>(bin.data()), bin.size()), hostTarget());
    INFO(again.log);
    REQUIRE(again.status == CL_SUCCESS);
    REQUIRE(again.executable);
    auto fn = reinterpret_cast<WorkGroupFn>(again.executable->entry(0));
    std::vector<float> a(16, 1.0f), bb(16, 2.0f), c(16, 0.0f);
    float s = 0.5f;
    PtrArgs p{c.data(), a.data(), bb.data()};
    runNDRange(fn, {p.at(0), p.at(1), p.at(2), &s}, 1, {16, 1, 1}, {16, 1, 1});
    for (float v : c)
        REQUIRE(v == 2.0f);
}

TEST_CASE("-save-temps writes IR and assembly; the triad's work-item loop is vectorised",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string prefix = (dir / "t").string();
    Built b = build(kTriad, "-cl-std=CL3.0 -save-temps=" + prefix);
    std::string ir = readFile(prefix + "_triad.ll");
    std::string asmText = readFile(prefix + "_triad.s");
    REQUIRE_FALSE(ir.empty());
    REQUIRE_FALSE(asmText.empty());
    std::string wg = functionText(ir, "__duet_wg_triad");
    REQUIRE_FALSE(wg.empty());
    // Work-items on SIMD lanes: vector loads/stores of floats in the work-group function.
    CHECK(wg.find("x float>") != std::string::npos);
    // 256-bit vectors by default (DUET_CPU_VECTOR_WIDTH), 512 when asked for.
    if (__builtin_cpu_supports("avx2") || __builtin_cpu_supports("avx512f"))
        CHECK(
            (asmText.find("ymm") != std::string::npos || asmText.find("zmm") != std::string::npos));
    fs::remove_all(dir);
}

TEST_CASE("checked builds (DUET_KERNEL_CHECKS=1) keep triad and saxpy vectorised",
          "[cpu][cpu_codegen][checks]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_chk_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prefix = (dir / "t").string();
    const std::string src = std::string(kTriad) + R"CL(
__kernel void saxpy(__global float* y, __global const float* x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
__kernel void guarded(__global float* y, __global const float* x, uint n) {
    size_t i = get_global_id(0);
    if (i < n)
        y[i] = 2.0f * x[i];
}
)CL";
    ::setenv("DUET_KERNEL_CHECKS", "1", 1);
    Built b = build(src, "-cl-std=CL3.0 -save-temps=" + prefix);
    ::unsetenv("DUET_KERNEL_CHECKS");
    const std::string& log = b.log;
    INFO(log);
    for (const char* k : {"triad", "saxpy", "guarded"}) {
        const std::string simd = std::string("kernel ") + k + ": __duet_wg_" + k + ".simd";
        CHECK(log.find(simd + ": work-item loop") != std::string::npos);
        size_t at = 0;
        while ((at = log.find(simd + ": work-item loop ", at)) != std::string::npos) {
            size_t end = log.find('\n', at);
            std::string line = log.substr(at, end - at);
            INFO(line);
            // Vectorised; the cost model may pick fewer lanes than unchecked (8 floats instead of
            // 16 with 512-bit vectors on Zen 5, the checks' 64-bit address compares).
            CHECK(line.find(": vectorised (") != std::string::npos);
            at = end;
        }
    }
    // The checks are there: the per-work-item records' scan after the vector loop, and the
    // accesses made under the checks' masks.
    const std::string ir = readFile(prefix + "_triad.ll");
    const std::string wg = functionText(ir, "__duet_wg_triad.simd");
    REQUIRE_FALSE(wg.empty());
    CHECK(wg.find("@__duet_check_scan(") != std::string::npos);
    CHECK(wg.find("x float>") != std::string::npos);
    CHECK(wg.find("@__duet_check_fail(") == std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("checked builds look for barrier divergence where a region may end at two places only",
          "[cpu][cpu_codegen][checks]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_bdiv_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string src = std::string(duet::test::kGuardedSwapKernel) + R"CL(
__kernel void reverse(__global int* out) {
    __local int t[64];
    int lid = get_local_id(0);
    t[lid] = lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[63 - lid];
}
)CL";
    auto irOf = [&](const char* checks, const char* kernel) {
        const std::string prefix = (dir / checks).string();
        ::setenv("DUET_KERNEL_CHECKS", checks, 1);
        Built b = build(src, "-cl-std=CL3.0 -save-temps=" + prefix);
        ::unsetenv("DUET_KERNEL_CHECKS");
        return readFile(prefix + "_" + kernel + ".ll");
    };
    const std::string checked = irOf("1", "guarded_swap");
    REQUIRE(checked.find("@__duet_wg_guarded_swap") != std::string::npos);
    // The branch's region ends at the barrier or the end: checked, off the common path.
    CHECK(checked.find("call void @__duet_check_barriers(") != std::string::npos);
    CHECK(checked.find("reached.and") != std::string::npos);
    // One place to go on to: nothing to check. Unchecked: nothing at all.
    CHECK(irOf("1", "reverse").find("__duet_check_barriers") == std::string::npos);
    const std::string plain = irOf("0", "guarded_swap");
    REQUIRE(plain.find("@__duet_wg_guarded_swap") != std::string::npos);
    CHECK(plain.find("__duet_check_barriers") == std::string::npos);
    CHECK(plain.find("reached") == std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("the tiled N-body inner loop runs as vectorised work-item loops", "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_nb_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string prefix = (dir / "t").string();
    Built b = build(kNBody, "-cl-std=CL3.0 -save-temps=" + prefix);
    // The module holds only this kernel's work-group function(s) and what they call.
    std::string wg = readFile(prefix + "_nbody.ll");
    REQUIRE(wg.find("@__duet_wg_nbody(") != std::string::npos);
    // The body's square root and division widened across work-items, not per work-item.
    CHECK(wg.find("@llvm.sqrt.v") != std::string::npos);
    CHECK(wg.find("fdiv <") != std::string::npos);
    // The tile index is uniform: no gathers from local memory.
    CHECK(wg.find("masked.gather") == std::string::npos);
    fs::remove_all(dir);
}

namespace {

/// Occurrences of `what` in `text`.
size_t countOf(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

/// Sets an environment variable for one scope (the work-group pass reads it at each build).
struct ScopedEnv {
    std::string name;
    ScopedEnv(const char* n, const char* value) : name(n) { setenv(n, value, 1); }
    ~ScopedEnv() { unsetenv(name.c_str()); }
};

} // namespace

namespace {

/// One code-load record of a jitdump file.
struct DumpedCode {
    std::string name;
    uint64_t address = 0;
    std::string code;
};

/// The T at byte `at` of `bytes`, in the host's (little-endian) order.
template <class T> T loadAt(const std::string& bytes, size_t at) {
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    return v;
}

/// The code-load records of a jitdump file (perf's format); fails the test on a bad header.
std::vector<DumpedCode> readJitDump(const std::string& bytes) {
    auto u32 = [&](size_t at) { return loadAt<uint32_t>(bytes, at); };
    auto u64 = [&](size_t at) { return loadAt<uint64_t>(bytes, at); };
    REQUIRE(bytes.size() >= 40);
    CHECK(u32(0) == 0x4A695444u); // "JiTD" as a little-endian word
    CHECK(u32(4) == 1);           // version
    REQUIRE(u32(8) == 40);        // the header's size
    CHECK(u32(12) == 62);         // EM_X86_64
    CHECK(u32(20) == uint32_t(::getpid()));
    std::vector<DumpedCode> records;
    for (size_t at = 40; at + 16 <= bytes.size();) {
        const uint32_t id = u32(at), size = u32(at + 4);
        REQUIRE(size >= 16);
        REQUIRE(at + size <= bytes.size());
        if (id == 0) { // JIT_CODE_LOAD: pid, tid, vma, code address, size, index, name, code
            REQUIRE(size >= 56);
            DumpedCode d;
            d.address = u64(at + 32);
            CHECK(u64(at + 24) == d.address);
            const uint64_t codeSize = u64(at + 40);
            const size_t nameEnd = bytes.find('\0', at + 56);
            REQUIRE(nameEnd != std::string::npos);
            d.name = bytes.substr(at + 56, nameEnd - (at + 56));
            REQUIRE(nameEnd + 1 + codeSize == at + size);
            d.code = bytes.substr(nameEnd + 1, codeSize);
            records.push_back(std::move(d));
        }
        at += size;
    }
    return records;
}

} // namespace

// Profiling kernels with Linux perf (runtime/devices/cpu/README.md, "Profiling kernels"): with
// DUET_CPU_PERF=1 every function the JIT links is written, name, address and machine code, to
// $JITDUMPDIR/jit-<pid>.dump, the file `perf inject --jit` reads. The entry's record is the code
// the entry pointer runs; the work-group pass's variants, local symbols of the object, are named
// too.
TEST_CASE("DUET_CPU_PERF=1 writes the JIT's functions to a jitdump file for perf",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("duet_cg_perf_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path file = dir / ("jit-" + std::to_string(::getpid()) + ".dump");
    {
        ScopedEnv perf("DUET_CPU_PERF", "1");
        ScopedEnv where("JITDUMPDIR", dir.c_str());
        const char* source = R"CL(
__kernel void scale2d(__global float* out, __global const float* in, uint w, float s) {
    size_t x = get_global_id(0), y = get_global_id(1);
    out[y * w + x] = s * in[y * w + x];
}
)CL";
        Built b = build(source);
        WorkGroupFn fn = b.fn("scale2d");
        std::vector<float> in(64 * 8), out(in.size(), 0.0f);
        for (size_t i = 0; i < in.size(); ++i)
            in[i] = float(i);
        cl_uint w = 64;
        float s = 3.0f;
        PtrArgs p{out.data(), in.data()};
        runNDRange(fn, {p.at(0), p.at(1), &w, &s}, 2, {64, 8, 1}, {16, 4, 1});
        for (size_t i = 0; i < in.size(); ++i)
            REQUIRE(out[i] == 3.0f * in[i]);
        REQUIRE(fs::exists(file));
        const std::vector<DumpedCode> records = readJitDump(readFile(file));
        std::string joined;
        for (const DumpedCode& d : records)
            joined += d.name + " ";
        INFO("records: " << joined);
        const auto entry = std::find_if(records.begin(), records.end(), [&](const DumpedCode& d) {
            return d.address == reinterpret_cast<uint64_t>(fn);
        });
        REQUIRE(entry != records.end());
        CHECK(entry->name.find("scale2d") != std::string::npos);
        REQUIRE_FALSE(entry->code.empty());
        CHECK(std::memcmp(entry->code.data(), reinterpret_cast<const void*>(fn),
                          entry->code.size()) == 0);
        // The variants (.simd ...) are internal functions: named from the object's symbols.
        const size_t named =
            size_t(std::count_if(records.begin(), records.end(), [](const DumpedCode& d) {
                return d.name.rfind("__duet_wg_scale2d.", 0) == 0 && !d.code.empty();
            }));
        CHECK(named >= 1);
    }
    std::error_code ignored;
    fs::remove_all(dir, ignored);
}

// Issue 15: the tile loop is uniform and straight-line, so it is unrolled four times before its
// implicit barriers: each region loop over the work-items then does four interactions per
// work-item, the accumulators in registers across them, instead of one per region with the
// accumulators through per-work-item storage (N-body 6.7 -> 12 G interactions/s with groups of
// 64 on the 2-core Zen 5 host). DUET_CPU_UNIFORM_UNROLL=1 leaves the loop as it was.
TEST_CASE("uniform straight-line loops are unrolled before their implicit barriers",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_unroll_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto sqrtCalls = [&](const char* unroll) {
        ScopedEnv env("DUET_CPU_UNIFORM_UNROLL", unroll);
        std::string prefix = (dir / (std::string("u") + unroll)).string();
        Built b = build(kNBody, "-cl-std=CL3.0 -save-temps=" + prefix);
        std::string wg = functionText(readFile(prefix + "_nbody.ll"), "__duet_wg_nbody.simd");
        REQUIRE_FALSE(wg.empty());
        return countOf(wg, "@llvm.sqrt.v");
    };
    const size_t once = sqrtCalls("1"), unrolled = sqrtCalls("4");
    INFO("vector square roots: " << once << " as written, " << unrolled << " unrolled");
    CHECK(once >= 1);
    // Four bodies in the unrolled loop's vector loop, one in the remainder loop's.
    CHECK(unrolled >= once + 4);
    fs::remove_all(dir);
}

// Issue 15: the front end widens `float3 a` to four lanes; the fourth (`a.w += s * (q.w - p.w)`)
// goes round the tile loop and nowhere else, yet across the barriers it was computed per
// work-item and kept in per-work-item storage: a subtraction and a multiply-add per interaction
// (N-body 10.5 -> 11.0 G interactions/s on the 2-core Zen 4 host). wg::dropUnusedPhiLanes cuts
// it at the phis; DUET_CPU_PHI_LANES=0 leaves it.
TEST_CASE("a float3 accumulator's unused fourth lane is not computed", "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_lanes_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto subtractions = [&](const char* lanes) {
        ScopedEnv env("DUET_CPU_PHI_LANES", lanes);
        std::string prefix = (dir / (std::string("l") + lanes)).string();
        Built b = build(kNBody, "-cl-std=CL3.0 -save-temps=" + prefix);
        std::string wg = functionText(readFile(prefix + "_nbody.ll"), "__duet_wg_nbody.simd");
        REQUIRE_FALSE(wg.empty());
        return countOf(wg, "fsub <");
    };
    const size_t all = subtractions("0"), used = subtractions("1");
    INFO("vector subtractions: " << all << " with every lane, " << used << " without the unused");
    // d = q.xyz - p.xyz: three subtractions an interaction instead of four.
    CHECK(used * 4 <= all * 3);
    CHECK(used > 0);
    fs::remove_all(dir);
}

// GPU code marks its __local reduction buffers volatile out of habit (warp-synchronous code):
// a volatile access kept every work-item loop touching the buffer from being vectorised, one
// work-item at a time (SHOC's CSR-vector SpMV). __local memory is the running thread's alone, so
// the flag goes (cpu::plainLocalVolatiles); a volatile __global access keeps it.
TEST_CASE("volatile __local accesses do not keep work-item loops scalar", "[cpu][cpu_codegen]") {
    const std::string src = R"CL(
__kernel void sums(__global const float* in, __global float* out, __global volatile int* seen) {
    __local volatile float part[128];
    int lid = get_local_id(0);
    part[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = get_local_size(0) / 2; step > 0; step /= 2) {
        if (lid < step)
            part[lid] += part[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        out[get_group_id(0)] = part[0];
        seen[get_group_id(0)] = 1;
    }
}
)CL";
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_vol_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto buildWith = [&](const char* plain) {
        ScopedEnv env("DUET_CPU_PLAIN_LOCAL_VOLATILE", plain);
        return build(src, "-cl-std=CL3.0 -save-temps=" + (dir / plain).string());
    };
    const std::string loop = ": work-item loop "; // one line per loop of the one kernel
    {
        Built kept = buildWith("0"); // as before: the volatile accesses keep their loops scalar
        INFO(kept.log);
        CHECK(kept.log.find(loop) != std::string::npos);
        CHECK(kept.log.find("a volatile access") != std::string::npos);
    }
    Built b = buildWith("1");
    INFO(b.log);
    CHECK(b.log.find("a volatile access") == std::string::npos);
    size_t loops = 0;
    for (size_t at = b.log.find(loop); at != std::string::npos; at = b.log.find(loop, at + 1)) {
        const std::string line = b.log.substr(at, b.log.find('\n', at) - at);
        INFO(line);
        CHECK(line.find(": vectorised (") != std::string::npos);
        ++loops;
    }
    CHECK(loops >= 2); // the first store and the reduction's step
    // The __global flag store stays volatile.
    const std::string ir = readFile(dir / "1_sums.ll");
    CHECK(ir.find("store volatile i32 1, ptr addrspace(1)") != std::string::npos);
    CHECK(ir.find("volatile float") == std::string::npos);

    const size_t n = 128 * 8;
    std::vector<float> in(n), out(8, -1.0f);
    std::vector<int> seen(8, 0);
    for (size_t i = 0; i < n; ++i)
        in[i] = float(i % 97) * 0.5f;
    PtrArgs p{in.data(), out.data(), seen.data()};
    runNDRange(b.fn("sums"), {p.at(0), p.at(1), p.at(2)}, 1, {n, 1, 1}, {128, 1, 1}, {0, 0, 0},
               b.desc("sums").staticLocalMemSize);
    for (size_t g = 0; g < 8; ++g) {
        // Every partial sum is a multiple of 0.5 below 2^24: exact in any order.
        double want = 0;
        for (size_t i = 0; i < 128; ++i)
            want += in[g * 128 + i];
        CHECK(out[g] == float(want));
        CHECK(seen[g] == 1);
    }
    fs::remove_all(dir);
}

// A work-group barrier under a branch makes the branch uniform (OpenCL: every work-item of the
// group takes it the same way if any reaches the barrier). GPU code guards its per-row work so
// (`if (row < rows) { ...; barrier; reduce }`, rows a multiple of the group): the values under
// it, the reduction's step among them, keep uniform slots, so `part[lid + step]` is a
// consecutive access, not a gather and a scatter per step (DUET_CPU_UNIFORM_BARRIER_BRANCHES=0
// gives the code before).
TEST_CASE("a branch around a work-group barrier is uniform", "[cpu][cpu_codegen]") {
    const std::string src = R"CL(
__kernel void rows(__global const float* in, __global float* out, int rows) {
    __local float part[128];
    int lid = get_local_id(0);
    int row = get_global_id(0) / 128;
    if (row < rows) {
        part[lid] = in[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int step = get_local_size(0) / 2; step > 0; step >>= 1) {
            if (lid < step)
                part[lid] += part[lid + step];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0)
            out[row] = part[0];
    }
}
)CL";
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_ubb_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto gathers = [&](const char* uniform) {
        ScopedEnv env("DUET_CPU_UNIFORM_BARRIER_BRANCHES", uniform);
        Built b = build(src, "-cl-std=CL3.0 -save-temps=" + (dir / uniform).string());
        const std::string ir = readFile(dir / (std::string(uniform) + "_rows.ll"));
        REQUIRE(ir.find("@__duet_wg_rows") != std::string::npos);
        // Run it: 6 rows of 128, the sums exact (multiples of 0.25 below 2^24).
        const size_t rows = 6, n = rows * 128;
        std::vector<float> in(n), out(rows, -1.0f);
        for (size_t i = 0; i < n; ++i)
            in[i] = float((i * 7) % 31) * 0.25f;
        int count = int(rows);
        PtrArgs p{in.data(), out.data()};
        runNDRange(b.fn("rows"), {p.at(0), p.at(1), &count}, 1, {n, 1, 1}, {128, 1, 1}, {0, 0, 0},
                   b.desc("rows").staticLocalMemSize);
        for (size_t r = 0; r < rows; ++r) {
            double want = 0;
            for (size_t i = 0; i < 128; ++i)
                want += in[r * 128 + i];
            CHECK(out[r] == float(want));
        }
        return countOf(ir, "masked.gather") + countOf(ir, "masked.scatter");
    };
    const size_t before = gathers("0"), now = gathers("1");
    INFO("gathers and scatters: " << before << " with the branch varying, " << now << " uniform");
    CHECK(before > 0);
    CHECK(now == 0);
    fs::remove_all(dir);
}

// The rule above holds only where a work-item taking the branch must reach the barrier. Under a
// further branch (`if (flag)`, 0 here) no work-item may reach it, and then the group may part at
// the outer branch: its values vary, and the loop under it gets no implicit barriers (which
// made 10 of 64 results wrong when the outer branch was taken as uniform).
TEST_CASE("a barrier no work-item reaches leaves its branch varying", "[cpu][cpu_codegen]") {
    const std::string src = R"CL(
__kernel void maybe(__global const float* in, __global float* out, int n, int flag) {
    int lid = get_local_id(0);
    float acc = 0.0f;
    if (lid < 10) {
        for (int j = 0; j < n; ++j)
            acc += in[j];
        if (flag)
            barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = acc + (float)lid;
}
)CL";
    Built b = build(src);
    std::vector<float> in(16), out(128, -1.0f);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i) * 0.5f;
    for (int n : {0, 1, 5, 16}) {
        int flag = 0;
        PtrArgs p{in.data(), out.data()};
        runNDRange(b.fn("maybe"), {p.at(0), p.at(1), &n, &flag}, 1, {128, 1, 1}, {64, 1, 1});
        float sum = 0.0f;
        for (int j = 0; j < n; ++j)
            sum += in[size_t(j)];
        for (size_t i = 0; i < 128; ++i) {
            INFO("n " << n << " work-item " << i);
            CHECK(out[i] == (i % 64 < 10 ? sum : 0.0f) + float(i % 64));
        }
    }
}

// KernelDesc::observesGroups: false only for kernels that cannot tell how their work-items are
// grouped, which the CPU device may then group freely (a smaller last group even in 1.2).
TEST_CASE("the work-group pass knows which kernels observe their grouping", "[cpu][cpu_codegen]") {
    const std::string src = R"CL(
__kernel void blind(__global float* y, __global const float* x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i] + (float)get_global_size(0) + (float)get_global_offset(0);
}
__kernel void lid(__global uint* o) { o[get_global_id(0)] = get_local_id(0); }
__kernel void lsize(__global uint* o) { o[get_global_id(0)] = get_local_size(0); }
__kernel void group(__global uint* o) { o[get_global_id(0)] = get_group_id(0); }
__kernel void groups(__global uint* o) { o[get_global_id(0)] = get_num_groups(0); }
__kernel void bar(__global uint* o) { barrier(CLK_GLOBAL_MEM_FENCE); o[get_global_id(0)] = 1; }
__kernel void localArg(__global uint* o, __local uint* s) { o[get_global_id(0)] = 1; }
__kernel void localVar(__global uint* o) {
    __local uint s[4];
    size_t i = get_global_id(0);
    o[i] = s[i & 3];
    s[i & 3] = (uint)i;
}
__kernel void reduce(__global uint* o) { o[get_global_id(0)] = work_group_reduce_add(1u); }
)CL";
    Built b = build(src, "-cl-std=CL3.0");
    CHECK_FALSE(b.desc("blind").observesGroups);
    for (const char* k :
         {"lid", "lsize", "group", "groups", "bar", "localArg", "localVar", "reduce"}) {
        INFO(k);
        CHECK(b.desc(k).observesGroups);
    }
}

// rsqrt: AVX-512's estimate and one Newton step where chosen (Intel's AVX-512 cores by default,
// DUET_CPU_RSQRT_ESTIMATE=1 here), the correctly rounded square root and division otherwise; the
// special values (rsqrt(+-0) = +-inf, rsqrt(inf) = 0, NaN below 0) kept in both.
TEST_CASE("rsqrt: AVX-512 estimate and a Newton step, or sqrt and division", "[cpu][cpu_codegen]") {
    if (hostCpuFeatures().find("+avx512vl") == std::string::npos) {
        SUCCEED("no AVX-512VL on this host: the estimate is never used");
        return;
    }
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_rsqrt_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const char* src = R"CL(
__kernel void k(__global const float* x, __global float* y) {
    size_t i = get_global_id(0);
    y[i] = rsqrt(x[i]);
}
)CL";
    for (const char* mode : {"1", "0"}) {
        ScopedEnv env("DUET_CPU_RSQRT_ESTIMATE", mode);
        std::string prefix = (dir / (std::string("r") + mode)).string();
        Built b = build(src, "-cl-std=CL3.0 -save-temps=" + prefix);
        std::string text = readFile(prefix + "_k.s");
        INFO("DUET_CPU_RSQRT_ESTIMATE=" << mode);
        const bool estimate = mode[0] == '1';
        CHECK((text.find("vrsqrt14ps") != std::string::npos) == estimate);
        CHECK((text.find("vsqrtps") != std::string::npos) == !estimate);
        // x = 0 and infinity are fixed up by one instruction, not a test and a select.
        CHECK((text.find("vfixupimmps") != std::string::npos) == estimate);
        std::vector<float> x = {
            0.0f, -0.0f, INFINITY, -1.0f, NAN,    0x1p-149f,   0x1p-126f,        FLT_MAX,
            1.0f, 2.0f,  3.0f,     0.25f, 1e-30f, 123456.789f, 0x1.fffffep+127f, 7.0f};
        std::vector<float> y(x.size(), 42.0f);
        PtrArgs p{x.data(), y.data()};
        runNDRange(b.fn("k"), {p.at(0), p.at(1)}, 1, {x.size(), 1, 1}, {x.size(), 1, 1});
        for (size_t i = 0; i < x.size(); ++i) {
            INFO("x = " << std::hexfloat << x[i] << " -> " << y[i] << std::defaultfloat);
            if (std::isnan(x[i]) || x[i] < 0) {
                CHECK(std::isnan(y[i]));
            } else if (x[i] == 0) {
                CHECK(std::isinf(y[i]));
                CHECK(std::signbit(y[i]) == std::signbit(x[i]));
            } else {
                const long double ref = 1.0L / std::sqrt(static_cast<long double>(x[i]));
                int e = 0;
                std::frexp(static_cast<double>(ref), &e);
                const long double ulp = std::ldexp(1.0L, std::max(e - 24, -149));
                CHECK(std::fabs(static_cast<long double>(y[i]) - ref) <= 2 * ulp);
            }
        }
    }
    fs::remove_all(dir);
}

// The remainder loop runs the trip counts that are no multiple of the unroll count, down to 0,
// and values carried by the loop (the sum, the pointer) leave it right.
TEST_CASE("unrolled uniform loops: every trip count, carried values, 1D and 2D groups",
          "[cpu][cpu_codegen]") {
    const char* src = R"CL(
__kernel void k(__global const float* in, __global float* out, int m) {
    size_t i = get_global_id(0) + get_global_size(0) * get_global_id(1);
    float x = (float)(get_local_id(0) + 1) + 0.5f * (float)get_local_id(1);
    float sum = 0.0f;
    __global const float* p = in;
    for (int j = 0; j < m; ++j) {
        sum = sum + x * p[0];
        p += 2;
    }
    out[i] = sum + (float)(p - in);
}
)CL";
    const char* unroll = GENERATE("4", "1");
    ScopedEnv env("DUET_CPU_UNIFORM_UNROLL", unroll);
    Built b = build(src);
    std::vector<float> in(64);
    for (size_t j = 0; j < in.size(); ++j)
        in[j] = float(j % 7) - 2.5f;
    const std::array<size_t, 3> local =
        GENERATE(std::array<size_t, 3>{32, 1, 1}, std::array<size_t, 3>{16, 4, 1});
    const size_t gx = 64, gy = local[1] == 1 ? 1 : 8;
    for (int m : {0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 31}) {
        std::vector<float> out(gx * gy, -1.0f);
        PtrArgs p{in.data(), out.data()};
        runNDRange(b.fn("k"), {p.at(0), p.at(1), &m}, 2, {gx, gy, 1}, local);
        for (size_t y = 0; y < gy; ++y)
            for (size_t xg = 0; xg < gx; ++xg) {
                const float x = float(xg % local[0] + 1) + 0.5f * float(y % local[1]);
                float sum = 0.0f;
                for (int j = 0; j < m; ++j)
                    sum = sum + x * in[size_t(2 * j)];
                INFO("unroll " << unroll << " m " << m << " item " << xg << "," << y);
                REQUIRE(out[y * gx + xg] == sum + float(2 * m));
            }
    }
}

// Issue 15: a loop whose step is a run-time value (`i += step`, 1 for contiguous chunks) has no
// trip count LLVM can compute, so the loop vectoriser left it scalar even when step is 1.
// wg::versionUnitStepLoops adds a copy for step == 1; every step must still give the loop as
// written, including ones that wrap the counter past UINT_MAX and empty ranges.
TEST_CASE("loops with a run-time step: a vectorised copy for step 1, every step exact",
          "[cpu][cpu_codegen]") {
    const char* src = R"CL(
__kernel void k(__global const uint* src, uint first, uint end, uint step, __global uint* out) {
    uint m = 0xffffffffu, count = 0;
    for (uint i = first; i < end; i += step) {
        m = min(m, src[i & 1023u] + (uint)get_global_id(0));
        ++count;
    }
    out[2 * get_global_id(0)] = m;
    out[2 * get_global_id(0) + 1] = count;
}
)CL";
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_ustep_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    // The copy's loop is widened: more vector minima than without it (the work-item loops
    // have their own).
    size_t vectorMins[2] = {};
    for (int on = 0; on < 2; ++on) {
        ScopedEnv env("DUET_CPU_UNIT_STEP_LOOPS", on ? "1" : "0");
        const std::string prefix = (dir / ("v" + std::to_string(on))).string();
        Built probe = build(src, "-cl-std=CL3.0 -save-temps=" + prefix);
        const std::string wg = readFile(prefix + "_k.ll");
        CHECK((wg.find("step.is.1") != std::string::npos) == bool(on));
        vectorMins[on] = countOf(wg, "@llvm.umin.v");
    }
    INFO("vector umin calls: " << vectorMins[0] << " without the copy, " << vectorMins[1]
                               << " with it");
    CHECK(vectorMins[1] > vectorMins[0]);
    const char* mode = GENERATE("1", "0");
    ScopedEnv env("DUET_CPU_UNIT_STEP_LOOPS", mode);
    Built b = build(src);
    INFO("DUET_CPU_UNIT_STEP_LOOPS=" << mode);
    std::vector<uint32_t> data(1024);
    for (size_t j = 0; j < data.size(); ++j)
        data[j] = uint32_t((j * 2654435761u) % 100000u) + 5u;
    struct Case {
        uint32_t first, end, step;
    };
    const Case cases[] = {{0, 1024, 1},
                          {3, 1000, 1},
                          {5, 900, 3},
                          {0, 1024, 7},
                          {100, 50, 1},
                          {100, 100, 1},
                          {0xfffffff0u, 0xffffffffu, 1},
                          {0xfffffff0u, 0xffffffffu, 5},
                          {0xfffffff0u, 0xfffffffeu, 0x80000001u}};
    for (const Case& c : cases) {
        std::vector<uint32_t> out(2 * 32, 0);
        PtrArgs p{data.data(), out.data()};
        uint32_t first = c.first, end = c.end, step = c.step;
        runNDRange(b.fn("k"), {p.at(0), &first, &end, &step, p.at(1)}, 1, {32, 1, 1}, {32, 1, 1});
        for (uint32_t g = 0; g < 32; ++g) {
            uint32_t m = 0xffffffffu, count = 0;
            for (uint32_t i = c.first; i < c.end; i += c.step) {
                m = std::min(m, data[i & 1023u] + g);
                ++count;
            }
            INFO("first " << c.first << " end " << c.end << " step " << c.step << " item " << g);
            REQUIRE(out[2 * g] == m);
            REQUIRE(out[2 * g + 1] == count);
        }
    }
    fs::remove_all(dir);
}

// The parallel-min seed's loop: each work-item takes the minimum of its own chunk of uint4s, so
// its work-item loop runs one work-item at a time. The loop vectoriser would widen the inner loop
// by regrouping the Scalarizer's four lane loads with shuffles; left to the SLP vectoriser, the
// loop takes each uint4 whole. Both ways give the minimum of every chunk, empty ones included.
TEST_CASE("inner loops over OpenCL vectors of a serial work-item loop keep the vectors whole",
          "[cpu][cpu_codegen]") {
    const char* src = R"CL(
__kernel void k(__global const uint4* src, uint count, uint per, __global uint* out) {
    uint first = (uint)get_global_id(0) * per;
    uint end = min(first + per, count);
    uint4 m = (uint4)(0xffffffffu);
    for (uint i = first; i < end; ++i)
        m = min(m, src[i]);
    out[get_global_id(0)] = min(min(m.x, m.y), min(m.z, m.w));
}
)CL";
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_lanewise_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (int on = 0; on < 2; ++on) {
        ScopedEnv env("DUET_CPU_LANEWISE_LOOPS", on ? "1" : "0");
        const std::string prefix = (dir / ("l" + std::to_string(on))).string();
        Built probe = build(src, "-cl-std=CL3.0 -save-temps=" + prefix);
        const std::string ll = readFile(prefix + "_k.ll");
        INFO("DUET_CPU_LANEWISE_LOOPS=" << on);
        // On: not widened (no loop carries the vectoriser's mark), one uint4 minimum an element.
        CHECK((ll.find("llvm.loop.isvectorized") == std::string::npos) == bool(on));
        CHECK((ll.find("@llvm.umin.v4i32") != std::string::npos) == bool(on));
    }
    fs::remove_all(dir);
    const char* mode = GENERATE("1", "0");
    ScopedEnv env("DUET_CPU_LANEWISE_LOOPS", mode);
    Built b = build(src);
    INFO("DUET_CPU_LANEWISE_LOOPS=" << mode);
    std::vector<uint32_t> data(4 * 1000);
    for (size_t j = 0; j < data.size(); ++j)
        data[j] = uint32_t((j * 2654435761u) % 1000003u) + 9u;
    for (uint32_t per : {0u, 1u, 7u, 31u, 33u, 40u}) {
        uint32_t count = 1000;
        std::vector<uint32_t> out(32, 0);
        PtrArgs p{data.data(), out.data()};
        runNDRange(b.fn("k"), {p.at(0), &count, &per, p.at(1)}, 1, {32, 1, 1}, {32, 1, 1});
        for (uint32_t g = 0; g < 32; ++g) {
            uint32_t want = 0xffffffffu;
            for (uint32_t i = g * per; i < std::min(g * per + per, count); ++i)
                for (uint32_t c = 0; c < 4; ++c)
                    want = std::min(want, data[4 * i + c]);
            INFO("per " << per << " item " << g);
            REQUIRE(out[g] == want);
        }
    }
}

// A loop with a run-time step and a per-work-item start, no memory accesses: the divergent-loop
// pass linearises it per vector of work-items. With the step-1 copy in front of it, both copies
// must still be linearised (the copy must not cost the work-item loop its vector lanes), and
// every step must give what the loop as written gives.
TEST_CASE("loops with a run-time step and per-work-item starts: both copies still linearised",
          "[cpu][cpu_codegen]") {
    const char* src = R"CL(
__kernel void k(__global uint* out, uint end, uint step) {
    uint s = (uint)get_global_id(0), count = 0;
    for (uint i = (uint)get_global_id(0) % 7u; i < end; i += step) {
        s = (s * 1103515245u + i) ^ (s >> 7);
        ++count;
    }
    out[2 * get_global_id(0)] = s;
    out[2 * get_global_id(0) + 1] = count;
}
)CL";
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_ustepdiv_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    ::unsetenv("DUET_CPU_DIVERGENT_LOOPS");
    for (const char* mode : {"1", "0"}) {
        ScopedEnv env("DUET_CPU_UNIT_STEP_LOOPS", mode);
        INFO("DUET_CPU_UNIT_STEP_LOOPS=" << mode);
        // -save-temps: the verdicts of the work-item loops go into the build log.
        Built b = build(src, "-cl-std=CL3.0 -save-temps=" + (dir / mode).string());
        WorkGroupFn fn = b.fn("k"); // compiled now, under this setting
        INFO(b.log);
        CHECK(std::regex_search(
            b.log, std::regex(mode[0] == '1' ? "kernel k: [^\\n]*: 2 inner loops linearised"
                                             : "kernel k: [^\\n]*: inner loop linearised")));
        struct Case {
            uint32_t end, step;
        };
        const Case cases[] = {{300, 1}, {300, 2}, {300, 5},
                              {3, 1},   {0, 1},   {0xfffffff0u, 0xfffffffdu}};
        for (const Case& c : cases) {
            std::vector<uint32_t> out(2 * 48, 0);
            PtrArgs p{out.data()};
            uint32_t end = c.end, step = c.step;
            runNDRange(fn, {p.at(0), &end, &step}, 1, {48, 1, 1}, {24, 1, 1});
            for (uint32_t g = 0; g < 48; ++g) {
                uint32_t s = g, count = 0;
                for (uint32_t i = g % 7u; i < c.end; i += c.step) {
                    s = (s * 1103515245u + i) ^ (s >> 7);
                    ++count;
                }
                INFO("end " << c.end << " step " << c.step << " item " << g);
                REQUIRE(out[2 * g] == s);
                REQUIRE(out[2 * g + 1] == count);
            }
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("-cl-opt-disable and fast-math options still compute the triad", "[cpu][cpu_codegen]") {
    for (const char* opts : {"-cl-std=CL3.0 -cl-opt-disable", "-cl-std=CL3.0 -cl-fast-relaxed-math",
                             "-cl-std=CL3.0 -cl-mad-enable -cl-no-signed-zeros"}) {
        INFO(opts);
        Built b = build(kTriad, opts);
        const size_t n = 100;
        std::vector<float> a(n, 1.0f), bb(n), c(n, 0.0f);
        for (size_t i = 0; i < n; ++i)
            bb[i] = float(i);
        float s = 2.0f;
        PtrArgs p{c.data(), a.data(), bb.data()};
        runNDRange(b.fn("triad"), {p.at(0), p.at(1), p.at(2), &s}, 1, {n, 1, 1}, {16, 1, 1});
        for (size_t i = 0; i < n; ++i)
            REQUIRE(c[i] == 1.0f + 2.0f * float(i));
    }
}

TEST_CASE("programs finalised on several threads at once", "[cpu][cpu_codegen]") {
    CompileResult c = compileSource(kNBody, "-cl-std=CL3.0", {}, hostTarget());
    REQUIRE(c.status == CL_SUCCESS);
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            FinalizeResult f = finalizeForCpu(c.bitcode, "-cl-std=CL3.0", kNBody, hostTarget());
            ok[size_t(t)] =
                f.status == CL_SUCCESS && f.executable && f.executable->entry(0) != nullptr;
        });
    for (auto& th : threads)
        th.join();
    for (int v : ok)
        CHECK(v == 1);
}

TEST_CASE("image, sampler and event types reach code generation as pointers",
          "[cpu][cpu_codegen]") {
    // The image is passed through a helper and a sampler literal is used; nothing reads
    // pixels (that is the builtin library's part), so the kernel checks the plumbing only.
    Built b = build(R"CL(
__global void* __duet_image_ptr(read_only image2d_t img) __attribute__((overloadable));
uint __duet_sampler_bits(sampler_t s) __attribute__((overloadable));
__global void* pass(read_only image2d_t img) { return __duet_image_ptr(img); }
__kernel void plumb(read_only image2d_t img, sampler_t s, __global ulong* out) {
    const sampler_t lit = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
    out[0] = (ulong)pass(img);
    out[1] = __duet_sampler_bits(s);
    out[2] = __duet_sampler_bits(lit);
    out[3] = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
}
)CL");
    int fakeImage = 0;
    void* img = &fakeImage;
    uint32_t sampler = 0x1234;
    std::vector<uint64_t> out(4, 0);
    PtrArgs p{out.data()};
    runNDRange(b.fn("plumb"), {&img, &sampler, p.at(0)}, 1, {1, 1, 1}, {1, 1, 1});
    CHECK(out[0] == reinterpret_cast<uint64_t>(img));
    CHECK(out[1] == 0x1234);
    CHECK(out[3] != 0);
    CHECK(out[2] == out[3]);
}

namespace {
/// Control flow around barriers and uniform/divergent loops, each work-item writing a value a
/// host loop can predict.
const char* kControl = R"CL(
__kernel void control(__global const int* count, __global int* out, __local int* sh, int n) {
    size_t g = get_global_id(0);
    size_t l = get_local_id(0);
    size_t ls = get_local_size(0);
    int before = (int)g * 7;                 // lives across every barrier below
    int acc = 0;
    if (n > 0) {                             // uniform branch around a barrier
        sh[l] = (int)l;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += sh[ls - 1 - l];
    }
    for (int i = 0; i < n; ++i) {            // barrier in a loop with a uniform break
        sh[l] = i + (int)l;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += sh[(l + 1) % ls];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i == 2)
            break;
    }
    int c = count[0];
    for (int k = 0; k < c; ++k)              // uniform trip count read from memory
        acc += k * (int)(g % 3);
    for (int k = 0; k < (int)(g % 5); ++k)   // divergent trip count
        acc += 2;
    if (l < 3)                               // uniform loop in divergent code
        for (int k = 0; k < n; ++k)
            acc += 100;
    for (int a = 0; a < 3; ++a)              // nested uniform loops
        for (int b = 0; b < c; ++b)
            acc += a * b + (int)l;
    if (get_group_id(0) == 1)                // uniform early return
        return;
    out[g] = acc + before;
}
)CL";

int controlReference(size_t g, size_t l, size_t wg, int n, int c) {
    int acc = 0;
    if (n > 0)
        acc += int(wg - 1 - l);
    for (int i = 0; i < n; ++i) {
        acc += i + int((l + 1) % wg);
        if (i == 2)
            break;
    }
    for (int k = 0; k < c; ++k)
        acc += k * int(g % 3);
    acc += 2 * int(g % 5);
    if (l < 3)
        acc += 100 * n;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < c; ++b)
            acc += a * b + int(l);
    return acc + int(g) * 7;
}
} // namespace

TEST_CASE("control flow around barriers, uniform and divergent loops", "[cpu][cpu_codegen]") {
    // Both code shapes: with implicit loop barriers (default) and without.
    const char* mode = GENERATE("1", "0", "O0");
    ::setenv("DUET_CPU_LOOP_BARRIERS", mode, 1);
    Built b =
        build(kControl, std::string("-cl-std=CL3.0") + (mode[0] == 'O' ? " -cl-opt-disable" : ""));
    ::unsetenv("DUET_CPU_LOOP_BARRIERS");
    const size_t wg = GENERATE(32, 4);
    const size_t n = 3 * wg + wg / 2;
    for (int loops : {0, 5}) {
        int count = 4;
        std::vector<int> out(n, -1), sh(wg);
        PtrArgs p{&count, out.data(), sh.data()};
        runNDRange(b.fn("control"), {p.at(0), p.at(1), p.at(2), &loops}, 1, {n, 1, 1}, {wg, 1, 1});
        for (size_t g = 0; g < n; ++g) {
            INFO("loop barriers " << mode << ", group size " << wg << ", n " << loops << ", item "
                                  << g);
            size_t group = g / wg;
            size_t size = std::min(wg, n - group * wg);
            if (group == 1)
                REQUIRE(out[g] == -1);
            else
                REQUIRE(out[g] == controlReference(g, g - group * wg, size, loops, count));
        }
    }
}

TEST_CASE("2D tiled matrix multiply with barriers (region loops over y and x)",
          "[cpu][cpu_codegen]") {
    Built b = build(R"CL(
#define TS 8
__kernel void matmul(__global const float* A, __global const float* B, __global float* C,
                     int M, int N, int K) {
    __local float As[TS][TS];
    __local float Bs[TS][TS];
    int col = get_global_id(0), row = get_global_id(1);
    int lc = get_local_id(0), lr = get_local_id(1);
    float acc = 0.0f;
    for (int t = 0; t < K; t += TS) {
        As[lr][lc] = A[row * K + t + lc];
        Bs[lr][lc] = B[(t + lr) * N + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; ++k)
            acc += As[lr][k] * Bs[k][lc];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * N + col] = acc;
}
)CL");
    CHECK(b.desc("matmul").staticLocalMemSize == 2 * 8 * 8 * sizeof(float));
    const int M = 24, N = 32, K = 40;
    std::vector<float> A(size_t(M * K)), B(size_t(K * N)), C(size_t(M * N), -1.0f);
    for (size_t i = 0; i < A.size(); ++i)
        A[i] = float(int(i % 7) - 3);
    for (size_t i = 0; i < B.size(); ++i)
        B[i] = float(int(i % 5) - 2) * 0.5f;
    int m = M, n = N, k = K;
    PtrArgs p{A.data(), B.data(), C.data()};
    runNDRange(b.fn("matmul"), {p.at(0), p.at(1), p.at(2), &m, &n, &k}, 2,
               {size_t(N), size_t(M), 1}, {8, 8, 1}, {0, 0, 0},
               b.desc("matmul").staticLocalMemSize);
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c) {
            float expect = 0;
            for (int i = 0; i < K; ++i)
                expect += A[size_t(r * K + i)] * B[size_t(i * N + c)];
            INFO("row " << r << " col " << c);
            REQUIRE(C[size_t(r * N + c)] == Approx(expect));
        }
}

TEST_CASE("bitonic sort in local memory (barrier in nested loops)", "[cpu][cpu_codegen]") {
    const char* mode = GENERATE("1", "0");
    ::setenv("DUET_CPU_LOOP_BARRIERS", mode, 1);
    Built b = build(R"CL(
__kernel void bitonic(__global int* data) {
    __local int s[256];
    uint l = get_local_id(0), n = get_local_size(0);
    size_t base = get_group_id(0) * n;
    s[l] = data[base + l];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 2; k <= n; k <<= 1) {
        for (uint j = k >> 1; j > 0; j >>= 1) {
            uint ixj = l ^ j;
            if (ixj > l) {
                int a = s[l], c = s[ixj];
                bool up = (l & k) == 0;
                if ((a > c) == up) {
                    s[l] = c;
                    s[ixj] = a;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    data[base + l] = s[l];
}
)CL");
    ::unsetenv("DUET_CPU_LOOP_BARRIERS");
    const size_t wg = GENERATE(256, 16);
    const size_t groups = 5, n = wg * groups;
    std::vector<int> data(n);
    uint32_t seed = 12345;
    for (int& v : data) {
        seed = seed * 1664525u + 1013904223u;
        v = int(seed >> 8) % 1000 - 500;
    }
    std::vector<int> expect = data;
    for (size_t g = 0; g < groups; ++g)
        std::sort(expect.begin() + long(g * wg), expect.begin() + long((g + 1) * wg));
    PtrArgs p{data.data()};
    runNDRange(b.fn("bitonic"), {p.at(0)}, 1, {n, 1, 1}, {wg, 1, 1}, {0, 0, 0},
               b.desc("bitonic").staticLocalMemSize);
    INFO("loop barriers " << mode << ", group size " << wg);
    CHECK(data == expect);
}

namespace {

// GPU-style kernels of the shapes issue 15 names: a float4 flux stencil with divisions, sqrt
// and border selects (2D), a 16x16 local-tile transpose, and strided work-item loops over
// local memory (a butterfly pass per barrier, a strided sum whose value leaves the loop).
const char* kGpuStyle = R"CL(
float4 flux(float4 q, float g) {
    float u = q.y / q.x;
    float p = (g - 1.0f) * (q.w - 0.5f * q.y * u);
    return (float4)(q.y, q.y * u + p, q.z * u, (q.w + p) * u);
}
__kernel void fv(__global const float4* q, __global float4* o, int n, float g) {
    int x = (int)get_global_id(0), y = (int)get_global_id(1);
    if (x >= n || y >= n)
        return;
    int xl = x > 0 ? x - 1 : x, xr = x < n - 1 ? x + 1 : x;
    float4 c = q[y * n + x], l = q[y * n + xl], r = q[y * n + xr];
    float a = sqrt(g * fabs(c.w) / c.x);
    o[y * n + x] = c - 0.125f * (flux(r, g) - flux(l, g)) + 0.0625f * a * (r - 2.0f * c + l);
}
__kernel void tr(__global const float* in, __global float* out, uint w, uint h) {
    __local float tile[16][17];
    uint lx = get_local_id(0), ly = get_local_id(1);
    uint x = get_group_id(0) * 16 + lx, y = get_group_id(1) * 16 + ly;
    if (x < w && y < h)
        tile[ly][lx] = in[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    uint tx = get_group_id(1) * 16 + lx, ty = get_group_id(0) * 16 + ly;
    if (tx < h && ty < w)
        out[ty * h + tx] = tile[lx][ly];
}
__kernel void strided(__global const float* in, __global float* out, __global float* sums,
                      __local float* buf, uint n) {
    uint lid = get_local_id(0), lsz = get_local_size(0);
    size_t base = get_group_id(0) * n;
    for (uint t = lid; t < n; t += lsz)
        buf[t] = in[base + t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < n; s <<= 1) {
        for (uint t = lid; t < n / 2; t += lsz) {
            uint i0 = (t / s) * 2 * s + t % s;
            if (i0 + s < n)
                buf[i0 + s] = buf[i0 + s] * 0.5f + buf[i0];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float sum = 0.0f;
    for (uint t = lid; t < n; t += lsz) {
        out[base + t] = buf[t];
        sum += buf[t];
    }
    sums[get_global_id(0)] = sum;
}
)CL";

/// Results of the three kernels for one build (the entries are compiled on first use).
struct GpuStyleResults {
    std::vector<float> fv, tr, out, sums;
};

GpuStyleResults runGpuStyle(const Built& b, size_t stridedGroup) {
    GpuStyleResults r;
    const int n = 37; // partial 16x16 groups
    std::vector<float> q(size_t(n) * n * 4);
    for (size_t i = 0; i < q.size(); i += 4) {
        q[i] = 1.0f + float(i % 13) * 0.25f;
        q[i + 1] = float(int(i % 7) - 3) * 0.5f;
        q[i + 2] = float(i % 5) * 0.125f;
        q[i + 3] = 2.0f + float(i % 11);
    }
    r.fv.assign(q.size(), -1.0f);
    float g = 1.4f;
    int nv = n;
    PtrArgs fp{q.data(), r.fv.data()};
    runNDRange(b.fn("fv"), {fp.at(0), fp.at(1), &nv, &g}, 2, {size_t(n), size_t(n), 1},
               {16, 16, 1});

    const cl_uint w = 45, h = 29;
    std::vector<float> in(size_t(w) * h);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i);
    r.tr.assign(in.size(), -1.0f);
    PtrArgs tp{in.data(), r.tr.data()};
    cl_uint wv = w, hv = h;
    runNDRange(b.fn("tr"), {tp.at(0), tp.at(1), &wv, &hv}, 2, {48, 32, 1}, {16, 16, 1}, {0, 0, 0},
               16 * 17 * sizeof(float));

    cl_uint len = 100; // not a multiple of the group size
    const size_t groups = 3;
    std::vector<float> src(groups * len), buf(len);
    for (size_t i = 0; i < src.size(); ++i)
        src[i] = float(i % 17);
    r.out.assign(src.size(), -1.0f);
    r.sums.assign(groups * stridedGroup, -1.0f);
    PtrArgs sp{src.data(), r.out.data(), r.sums.data(), buf.data()};
    runNDRange(b.fn("strided"), {sp.at(0), sp.at(1), sp.at(2), sp.at(3), &len}, 1,
               {groups * stridedGroup, 1, 1}, {stridedGroup, 1, 1});
    return r;
}

} // namespace

TEST_CASE("GPU-style kernels: work-item loops vectorised, results as the scalar work-item loops",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_gpu_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prefix = (dir / "t").string();
    Built vec = build(kGpuStyle, "-cl-std=CL3.0 -save-temps=" + prefix);
    // The build log tells what the loop vectoriser did with each work-item loop.
    const std::string& log = vec.log;
    INFO(log);
    for (const char* k : {"fv", "tr", "strided"}) {
        const std::string tag = std::string("kernel ") + k + ": ";
        CHECK(log.find(tag) != std::string::npos);
        // The group-sized variants (`.simd`, beside `.serial` for small groups and `.lx1` for
        // groups of one work-item along x): every work-item loop on SIMD lanes.
        std::string simd = tag + "__duet_wg_" + k + ".simd";
        CHECK(log.find(simd + ": work-item loop") != std::string::npos);
        size_t at = 0;
        while ((at = log.find(simd + ": work-item loop ", at)) != std::string::npos) {
            size_t end = log.find('\n', at);
            std::string line = log.substr(at, end - at);
            INFO(line);
            CHECK(line.find(": vectorised (") != std::string::npos);
            // The host's vectors: 8 floats with 256 bits, 16 with 512 (Zen 5's default).
            if (__builtin_cpu_supports("avx2"))
                CHECK(line.find(hostLanesText()) != std::string::npos);
            at = end;
        }
    }
    std::string ir = readFile(prefix + "_strided.ll");
    CHECK(ir.find("x float>") != std::string::npos);
    fs::remove_all(dir);

    // The same kernels without the parallel declaration, the implicit loop barriers and the
    // strided-loop rewrite: one work-item at a time, as before them.
    ::setenv("DUET_CPU_PARALLEL_LOOPS", "0", 1);
    ::setenv("DUET_CPU_LOOP_BARRIERS", "0", 1);
    Built scalar = build(kGpuStyle);
    for (const char* k : {"fv", "tr", "strided"})
        scalar.fn(k); // compiled now, under these settings
    ::unsetenv("DUET_CPU_PARALLEL_LOOPS");
    ::unsetenv("DUET_CPU_LOOP_BARRIERS");
    INFO(scalar.log);
    CHECK(scalar.log.find("vectorised (") == std::string::npos);

    for (size_t group : {size_t(64), size_t(8)}) { // 8: the variant for small groups
        INFO("strided group size " << group);
        GpuStyleResults a = runGpuStyle(vec, group), s = runGpuStyle(scalar, group);
        CHECK(a.fv == s.fv);
        CHECK(a.tr == s.tr);
        CHECK(a.out == s.out);
        CHECK(a.sums == s.sums);
        // And both right: the transpose exactly, the strided passes against the host.
        for (cl_uint y = 0; y < 29; ++y)
            for (cl_uint x = 0; x < 45; ++x)
                REQUIRE(a.tr[size_t(x) * 29 + y] == float(y * 45 + x));
        const cl_uint len = 100;
        for (size_t gi = 0; gi < 3; ++gi) {
            std::vector<float> buf(len);
            for (cl_uint t = 0; t < len; ++t)
                buf[t] = float((gi * len + t) % 17);
            for (cl_uint s = 1; s < len; s <<= 1)
                for (cl_uint t = 0; t < len / 2; ++t) {
                    cl_uint i0 = (t / s) * 2 * s + t % s;
                    if (i0 + s < len)
                        buf[i0 + s] = buf[i0 + s] * 0.5f + buf[i0];
                }
            for (cl_uint t = 0; t < len; ++t)
                REQUIRE(a.out[gi * len + t] == buf[t]);
            for (size_t l = 0; l < group; ++l) {
                float sum = 0.0f;
                for (size_t t = l; t < len; t += group)
                    sum += buf[t];
                REQUIRE(a.sums[gi * group + l] == sum);
            }
        }
    }
}

namespace {

// Every work-item function of a 3D range, a value and __local data across a barrier, a loop
// all work-items run equally often.
const char* kShape = R"CL(
__kernel void shape(__global const float* in, __global float* out, __local float* sh, int taps) {
    size_t gx = get_global_id(0), gy = get_global_id(1), gz = get_global_id(2);
    size_t i = (gz * get_global_size(1) + gy) * get_global_size(0) + gx;
    size_t l = get_local_linear_id();
    size_t items = get_local_size(0) * get_local_size(1) * get_local_size(2);
    float self = in[i] * 2.0f + (float)get_local_id(0) + 0.25f * (float)get_local_id(2);
    sh[l] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    float acc = 0.0f;
    for (int k = 0; k < taps; ++k)
        acc += sh[min(l + (size_t)k, items - 1)] * (float)(k + 1);
    out[i] = acc + self;
}
)CL";

std::vector<float> runShape(const Built& b, std::array<size_t, 3> global,
                            std::array<size_t, 3> local, const std::vector<float>& in) {
    std::vector<float> out(in.size(), -1.0f), sh(local[0] * local[1] * local[2]);
    int taps = 5;
    PtrArgs p{const_cast<float*>(in.data()), out.data(), sh.data()};
    runNDRange(b.fn("shape"), {p.at(0), p.at(1), p.at(2), &taps}, 3, global, local);
    return out;
}

} // namespace

TEST_CASE("work-item loops take one vector per iteration: 16-wide groups run the vector body",
          "[cpu][cpu_codegen]") {
    // The loop vectoriser's body runs while width x interleave count work-items are left; with
    // its own count (4 here) a 16x16 group's loop over x, 16 long, ran only the scalar
    // remainder. The work-group pass asks for one vector per iteration.
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_ic_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prefix = (dir / "t").string();
    const char* src = R"CL(
__kernel void scale2d(__global const float* in, __global float* out, uint w, uint h) {
    uint x = get_global_id(0), y = get_global_id(1);
    if (x < w && y < h)
        out[y * w + x] = 2.0f * in[y * w + x] + 1.0f;
}
)CL";
    Built b = build(src, "-cl-std=CL3.0 -save-temps=" + prefix);
    WorkGroupFn fn = b.fn("scale2d");
    INFO(b.log);
    const auto loops =
        linesWith(b.log, "kernel scale2d: __duet_wg_scale2d.simd: work-item loop wi.x");
    CHECK(!loops.empty());
    for (const std::string& line : loops) {
        INFO(line);
        CHECK(line.find(": vectorised (") != std::string::npos);
        CHECK(line.find("interleaved count: 1)") != std::string::npos);
    }
    // The vector body's guard in the loop over x: at most 16 work-items needed.
    const std::string simd =
        functionText(readFile(prefix + "_scale2d.ll"), "__duet_wg_scale2d.simd");
    const std::string guard = "%min.iters.check = icmp ult i64 %";
    size_t checks = 0;
    for (size_t at = 0; (at = simd.find(guard, at)) != std::string::npos; ++checks) {
        const size_t comma = simd.find(", ", at);
        const unsigned needed = unsigned(std::stoul(simd.substr(comma + 2)));
        INFO(simd.substr(at, simd.find('\n', at) - at));
        CHECK(needed <= 16);
        at = comma;
    }
    CHECK(checks > 0);
    fs::remove_all(dir);
    // Results in 16x16 groups, partial ones at the right and top edges.
    const cl_uint w = 40, h = 24;
    std::vector<float> in(w * h), out(w * h, -1.0f);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(int(i % 37) - 18) * 0.25f;
    float* pin = in.data();
    float* pout = out.data();
    cl_uint cw = w, ch = h;
    runNDRange(fn, {&pin, &pout, &cw, &ch}, 2, {w, h, 1}, {16, 16, 1});
    for (size_t i = 0; i < in.size(); ++i) {
        INFO("item " << i);
        CHECK(out[i] == 2.0f * in[i] + 1.0f);
    }
}

TEST_CASE("a guard on the ids kept across a barrier is computed again: both regions vectorised",
          "[cpu][cpu_codegen]") {
    // `x < w && y < h` guards the load into the tile and the store after the barrier. Kept in
    // per-work-item storage it was an array of i1 whose reload left the second region's loop
    // scalar; comparisons and selects of ids and arguments are now computed again there.
    const char* src = R"CL(
__kernel void tile_copy(__global const float* in, __global float* out, uint w, uint h) {
    __local float tile[16][17];
    uint lx = get_local_id(0), ly = get_local_id(1);
    uint x = get_group_id(0) * 16 + lx, y = get_group_id(1) * 16 + ly;
    bool inside = x < w && y < h;
    if (inside)
        tile[ly][lx] = in[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (inside)
        out[y * w + x] = tile[ly][lx] + (lx == 15 ? 0.5f : 0.0f);
}
)CL";
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_guard_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    Built b = build(src, "-cl-std=CL3.0 -save-temps=" + (dir / "t").string());
    WorkGroupFn fn = b.fn("tile_copy");
    fs::remove_all(dir);
    INFO(b.log);
    const auto loops =
        linesWith(b.log, "kernel tile_copy: __duet_wg_tile_copy.simd: work-item loop ");
    CHECK(loops.size() == 2); // one loop over x in each region
    for (const std::string& line : loops) {
        INFO(line);
        CHECK(line.find(": vectorised (") != std::string::npos);
    }
    const cl_uint w = 40, h = 24;
    std::vector<float> in(w * h), out(w * h, -1.0f);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(int(i % 29) - 14);
    float* pin = in.data();
    float* pout = out.data();
    cl_uint cw = w, ch = h;
    runNDRange(fn, {&pin, &pout, &cw, &ch}, 2, {48, 32, 1}, {16, 16, 1}, {0, 0, 0},
               b.desc("tile_copy").staticLocalMemSize);
    for (size_t i = 0; i < in.size(); ++i) {
        INFO("item " << i);
        CHECK(out[i] == in[i] + (i % w % 16 == 15 ? 0.5f : 0.0f));
    }
}

TEST_CASE("groups of one work-item along x run their work-item loops along y, vectorised",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_lx1_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prefix = (dir / "t").string();
    Built vec = build(kShape, "-cl-std=CL3.0 -save-temps=" + prefix);
    vec.fn("shape");
    INFO(vec.log);
    // The variant for 1xN groups: its work-item loops run along y and are vectorised.
    const std::string tag = "kernel shape: __duet_wg_shape.lx1: work-item loop wi.y";
    CHECK(vec.log.find(tag) != std::string::npos);
    for (const std::string& line : linesWith(vec.log, tag)) {
        INFO(line);
        CHECK(line.find(": vectorised (") != std::string::npos);
        if (__builtin_cpu_supports("avx2"))
            CHECK(line.find(hostLanesText()) != std::string::npos);
    }
    // The entry point picks it for groups of one work-item along x.
    std::string entry = functionText(readFile(prefix + "_shape.ll"), "__duet_wg_shape");
    CHECK(entry.find("icmp eq i64") != std::string::npos);
    CHECK(entry.find("@__duet_wg_shape.lx1(") != std::string::npos);
    // Not built where a required group size rules the shape out.
    for (const char* reqd : {"", "__attribute__((reqd_work_group_size(16, 2, 1)))"}) {
        const std::string src = std::string("__kernel ") + reqd +
                                " void req(__global float* o) {\n"
                                "    o[get_global_id(1) * get_global_size(0) + get_global_id(0)] "
                                "= 1.0f;\n}\n";
        Built req = build(src, "-cl-std=CL3.0 -save-temps=" + prefix);
        req.fn("req");
        INFO(src);
        CHECK((readFile(prefix + "_req.ll").find("__duet_wg_req.lx1") == std::string::npos) ==
              (*reqd != 0));
    }
    fs::remove_all(dir);

    // Results equal to the unvectorised work-item loops, and to the host's.
    ::setenv("DUET_CPU_PARALLEL_LOOPS", "0", 1);
    ::setenv("DUET_CPU_LOOP_BARRIERS", "0", 1);
    Built scalar = build(kShape);
    scalar.fn("shape");
    ::unsetenv("DUET_CPU_PARALLEL_LOOPS");
    ::unsetenv("DUET_CPU_LOOP_BARRIERS");
    const std::array<size_t, 3> global{3, 64, 2};
    std::vector<float> in(global[0] * global[1] * global[2]);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(int(i % 23) - 11) * 0.5f;
    // 1x32 and 1x8x2 (the variant), 1x20 (a partial 1x4 group: the small-group variant),
    // 1x5x2 (small), 3x16 (the general one).
    for (std::array<size_t, 3> local :
         {std::array<size_t, 3>{1, 32, 1}, {1, 8, 2}, {1, 20, 1}, {1, 5, 2}, {3, 16, 1}}) {
        INFO("local " << local[0] << "x" << local[1] << "x" << local[2]);
        std::vector<float> a = runShape(vec, global, local, in);
        CHECK(a == runShape(scalar, global, local, in));
        for (size_t gz = 0; gz < global[2]; ++gz)
            for (size_t gy = 0; gy < global[1]; ++gy)
                for (size_t gx = 0; gx < global[0]; ++gx) {
                    size_t size[3], lid[3], base[3];
                    const size_t g[3] = {gx, gy, gz};
                    for (unsigned d = 0; d < 3; ++d) {
                        base[d] = g[d] / local[d] * local[d];
                        size[d] = std::min(local[d], global[d] - base[d]);
                        lid[d] = g[d] - base[d];
                    }
                    const size_t items = size[0] * size[1] * size[2];
                    auto at = [&](size_t l) {
                        size_t x = l % size[0], y = l / size[0] % size[1],
                               z = l / size[0] / size[1];
                        return in[((base[2] + z) * global[1] + base[1] + y) * global[0] + base[0] +
                                  x];
                    };
                    const size_t l = (lid[2] * size[1] + lid[1]) * size[0] + lid[0];
                    float acc = 0.0f;
                    for (size_t k = 0; k < 5; ++k)
                        acc += at(std::min(l + k, items - 1)) * float(k + 1);
                    const size_t i = (gz * global[1] + gy) * global[0] + gx;
                    const float self = in[i] * 2.0f + float(lid[0]) + 0.25f * float(lid[2]);
                    INFO("item " << gx << "," << gy << "," << gz);
                    REQUIRE(a[i] == Approx(acc + self));
                }
    }
}

namespace {

// A pointer per work-item advanced by a uniform step around barriers (SHOC's GEMM walks A so).
const char* kWalk = R"CL(
__kernel void walk(__global const float* a, __global float* out, __local float* sh, int lda,
                   int steps) {
    int lid = get_local_id(0);
    __global const float* p = a + get_group_id(0) * get_local_size(0) + lid;
    float acc = 0.0f;
    int k = 0;
    do {
        sh[lid] = p[0];
        barrier(CLK_LOCAL_MEM_FENCE);
        p += lda;
        acc += sh[lid] * p[0] + (float)k;
        p += lda;
        barrier(CLK_LOCAL_MEM_FENCE);
        ++k;
    } while (k < steps);
    out[get_global_id(0)] = acc;
}
)CL";

std::vector<float> runWalk(const Built& b, size_t global, size_t local) {
    const int lda = int(global), steps = 5;
    std::vector<float> a(size_t(lda) * (2 * steps + 1)), out(global, -1.0f), sh(local);
    for (size_t i = 0; i < a.size(); ++i)
        a[i] = float(int(i % 19) - 9) * 0.25f;
    int ldaArg = lda, stepsArg = steps;
    PtrArgs p{a.data(), out.data(), sh.data()};
    runNDRange(b.fn("walk"), {p.at(0), p.at(1), p.at(2), &ldaArg, &stepsArg}, 1, {global, 1, 1},
               {local, 1, 1});
    for (size_t g = 0; g < global; ++g) {
        float acc = 0.0f;
        for (int k = 0; k < steps; ++k)
            acc += a[size_t(2 * k) * size_t(lda) + g] * a[size_t(2 * k + 1) * size_t(lda) + g] +
                   float(k);
        INFO("item " << g);
        REQUIRE(out[g] == Approx(acc));
    }
    return out;
}

} // namespace

TEST_CASE("a large helper two 2D kernels call is inlined into every variant, vectorised",
          "[cpu][cpu_codegen]") {
    // The shape of gas dynamics' sweeps: each kernel calls a long helper once. Each kernel has a
    // general and a 1xN variant, so the helper would have four calls, which LLVM's inliner
    // leaves calls, and the work-item loops around a call stay scalar.
    std::string helper = "static float4 update(__global const float4* in, size_t at, int s) {\n"
                         "    float4 a = in[at - s], b = in[at], c = in[at + s];\n"
                         "    float4 r = (float4)(0.0f);\n";
    for (int i = 0; i < 40; ++i)
        helper += "    r += sqrt(fabs(a * " + std::to_string(i + 1) + ".0f - b)) / (c + " +
                  std::to_string(i + 2) + ".0f);\n    a = b - r; b = c + a;\n";
    helper += "    return r;\n}\n";
    const std::string src =
        helper + "__kernel void sx(__global const float4* in, __global float4* out, int pitch) {\n"
                 "    size_t at = (get_global_id(1) + 1) * pitch + get_global_id(0) + 1;\n"
                 "    out[at] = update(in, at, 1);\n}\n"
                 "__kernel void sy(__global const float4* in, __global float4* out, int pitch) {\n"
                 "    size_t at = (get_global_id(1) + 1) * pitch + get_global_id(0) + 1;\n"
                 "    out[at] = update(in, at, pitch);\n}\n";
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_helper_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    Built b = build(src, "-cl-std=CL3.0 -save-temps=" + (dir / "t").string());
    b.fn("sx");
    b.fn("sy");
    fs::remove_all(dir);
    INFO(b.log);
    for (const char* k : {"sx", "sy"})
        for (const char* variant : {".simd: work-item loop wi.x", ".lx1: work-item loop wi.y"}) {
            const std::string tag = "kernel " + std::string(k) + ": __duet_wg_" + k + variant;
            const size_t at = b.log.find(tag);
            REQUIRE(at != std::string::npos);
            const std::string line = b.log.substr(at, b.log.find('\n', at) - at);
            INFO(line);
            CHECK(line.find(": vectorised (") != std::string::npos);
        }
}

TEST_CASE("pointer inductions across barriers: a uniform offset, consecutive accesses",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_walk_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto simdText = [&](const char* tag) {
        const std::string prefix = (dir / tag).string();
        Built b = build(kWalk, "-cl-std=CL3.0 -save-temps=" + prefix);
        b.fn("walk");
        return std::pair{b, functionText(readFile(prefix + "_walk.ll"), "__duet_wg_walk")};
    };
    auto [split, splitIr] = simdText("split");
    ::setenv("DUET_CPU_POINTER_INDUCTIONS", "0", 1);
    auto [kept, keptIr] = simdText("kept");
    ::unsetenv("DUET_CPU_POINTER_INDUCTIONS");
    fs::remove_all(dir);
    INFO(split.log);
    REQUIRE_FALSE(splitIr.empty());
    REQUIRE_FALSE(keptIr.empty());
    // Kept as a pointer per work-item, p is reloaded from per-work-item storage and read
    // through gathers; split, it is the start (a function of the local id) plus one offset.
    CHECK(keptIr.find("masked.gather") != std::string::npos);
    CHECK(splitIr.find("masked.gather") == std::string::npos);
    CHECK(splitIr.find("load <") != std::string::npos);
    // Same results, and the host's, for groups of 64 and 8 work-items.
    for (size_t local : {size_t(64), size_t(8)}) {
        INFO("group size " << local);
        CHECK(runWalk(split, 192, local) == runWalk(kept, 192, local));
    }
}

namespace {

// A grid-strided accumulation into __local memory (each work-item walks the input from its own
// start by a uniform step), then one sum per group; `last` keeps each work-item's induction
// after the loop.
const char* kStrided = R"CL(
__kernel void strided_sum(__global const float* in, __global float* out, __global uint* last,
                          __local float* acc, uint n) {
    const uint lid = get_local_id(0);
    uint i = get_group_id(0) * get_local_size(0) * 2 + lid;
    const uint grid = get_local_size(0) * 2 * get_num_groups(0);
    acc[lid] = 0.0f;
    while (i < n) {
        acc[lid] += in[i] - 0.5f * in[i + get_local_size(0)];
        i += grid;
    }
    last[get_global_id(0)] = i;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        float s = 0.0f;
        for (uint k = 0; k < get_local_size(0); ++k)
            s += acc[k];
        out[get_group_id(0)] = s;
    }
}
)CL";

struct StridedResult {
    std::vector<float> sums;
    std::vector<uint32_t> last;
    bool operator==(const StridedResult&) const = default;
};

StridedResult runStrided(const Built& b, size_t groups, size_t local, uint32_t n) {
    const size_t grid = 2 * local * groups;
    std::vector<float> in(n + local), acc(local);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(int(i % 23) - 11) * 0.125f;
    StridedResult r{std::vector<float>(groups, -1.0f), std::vector<uint32_t>(groups * local, 7)};
    uint32_t nArg = n;
    PtrArgs p{in.data(), r.sums.data(), r.last.data(), acc.data()};
    runNDRange(b.fn("strided_sum"), {p.at(0), p.at(1), p.at(2), p.at(3), &nArg}, 1,
               {groups * local, 1, 1}, {local, 1, 1});
    for (size_t g = 0; g < groups; ++g) {
        float s = 0.0f;
        for (size_t l = 0; l < local; ++l) {
            float a = 0.0f;
            uint32_t i = uint32_t(g * local * 2 + l);
            for (; i < n; i += uint32_t(grid))
                a += in[i] - 0.5f * in[i + local];
            s += a;
            INFO("group " << g << " item " << l);
            REQUIRE(r.last[g * local + l] == i);
        }
        INFO("group " << g);
        REQUIRE(r.sums[g] == Approx(s));
    }
    return r;
}

} // namespace

TEST_CASE("strided loops: the induction is its start plus a uniform offset, no gathers",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_strided_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto irOf = [&](const char* tag) {
        const std::string prefix = (dir / tag).string();
        Built b = build(kStrided, "-cl-std=CL3.0 -save-temps=" + prefix);
        b.fn("strided_sum");
        return std::pair{b, readFile(prefix + "_strided_sum.ll")};
    };
    auto [split, splitIr] = irOf("split");
    // DUET_CPU_STRIDED_LOOPS=0: each work-item runs its own loop, one work-item at a time.
    ::setenv("DUET_CPU_STRIDED_LOOPS", "0", 1);
    auto [scalar, scalarIr] = irOf("scalar");
    ::unsetenv("DUET_CPU_STRIDED_LOOPS");
    fs::remove_all(dir);
    INFO(split.log);
    REQUIRE_FALSE(splitIr.empty());
    // The input read at i through vector loads (masked: the guard of the work-item's own
    // iterations), not gathers through an i reloaded per work-item.
    CHECK(splitIr.find("masked.gather") == std::string::npos);
    CHECK(splitIr.find("@llvm.masked.load.v") != std::string::npos);
    // The same sums and the same inductions after the loop as the per-work-item loops: n a
    // multiple of the grid, and not (work-items leave after different iteration counts).
    for (uint32_t n : {uint32_t(4 * 2 * 64 * 3), uint32_t(4 * 2 * 64 * 3 - 77), uint32_t(50)}) {
        INFO("n " << n);
        CHECK(runStrided(split, 3, 64, n) == runStrided(scalar, 3, 64, n));
    }
}

namespace {

// A radix-2 FFT of 64 points per group in __local memory, as duet-bench's (bench/runtime):
// butterflies in a strided loop whose work-item loop calls libmvec's sin and cos.
const char* kLocalFft = R"CL(
__kernel void fft64(__global const float2* in, __global float2* out, __local float2* buf) {
    const uint lid = get_local_id(0), lsz = get_local_size(0);
    const size_t base = get_group_id(0) * 64;
    for (uint t = lid; t < 64; t += lsz)
        buf[t] = in[base + t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s <= 6; ++s) {
        const uint span = 1u << (s - 1);
        for (uint t = lid; t < 32; t += lsz) {
            uint j = t & (span - 1);
            uint i0 = ((t >> (s - 1)) << s) + j;
            float c;
            float sn = sincos(-M_PI_F * (float)j / (float)span, &c);
            float2 a = buf[i0], b = buf[i0 + span];
            float2 w = (float2)(b.x * c - b.y * sn, b.x * sn + b.y * c);
            buf[i0] = a + w;
            buf[i0 + span] = a - w;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint t = lid; t < 64; t += lsz)
        out[base + t] = buf[t];
}
)CL";

std::vector<float> runLocalFft(const Built& b, size_t local) {
    const size_t groups = 5;
    std::vector<float> in(groups * 64 * 2), out(in.size(), -1.0f);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(int(i * 37 % 101) - 50) / 50.0f;
    std::vector<float> buf(64 * 2);
    PtrArgs p{in.data(), out.data(), buf.data()};
    runNDRange(b.fn("fft64"), {p.at(0), p.at(1), p.at(2)}, 1, {groups * local, 1, 1},
               {local, 1, 1});
    return out;
}

/// Whether a block of `fn` (an IR function's text) both calls a vector function of libmvec and
/// has a vector phi: an induction vector carried across the calls.
bool vectorPhiBesideLibmvecCall(const std::string& fn) {
    size_t at = 0;
    while (at < fn.size()) {
        size_t end = fn.find("\n\n", at);
        const std::string block = fn.substr(at, end == std::string::npos ? end : end - at);
        if (block.find("@_ZGV") != std::string::npos && block.find(" = phi <") != std::string::npos)
            return true;
        if (end == std::string::npos)
            break;
        at = end + 2;
    }
    return false;
}

} // namespace

TEST_CASE("work-item loops that call libmvec carry no induction vector across the calls",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_callind_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto irOf = [&](const char* tag) {
        const std::string prefix = (dir / tag).string();
        Built b = build(kLocalFft, "-cl-std=CL3.0 -save-temps=" + prefix);
        b.fn("fft64");
        return std::pair{b, functionText(readFile(prefix + "_fft64.ll"), "__duet_wg_fft64.simd")};
    };
    auto [rebuilt, rebuiltIr] = irOf("rebuilt");
    ::setenv("DUET_CPU_CALL_LOOP_INDUCTIONS", "0", 1);
    auto [carried, carriedIr] = irOf("carried");
    ::unsetenv("DUET_CPU_CALL_LOOP_INDUCTIONS");
    // One work-item at a time (no parallel loops, no loop barriers): the scalar reference.
    ::setenv("DUET_CPU_PARALLEL_LOOPS", "0", 1);
    ::setenv("DUET_CPU_LOOP_BARRIERS", "0", 1);
    Built scalar = build(kLocalFft);
    scalar.fn("fft64");
    ::unsetenv("DUET_CPU_PARALLEL_LOOPS");
    ::unsetenv("DUET_CPU_LOOP_BARRIERS");
    fs::remove_all(dir);
    INFO(rebuilt.log);
    REQUIRE_FALSE(rebuiltIr.empty());
    // The butterflies' work-item loop is vectorised with libmvec's sin and cos.
    CHECK(rebuiltIr.find("@_ZGV") != std::string::npos);
    // The vectoriser's inductions (the work-item index as i32 and i64 vectors) are phis of the
    // loop that calls out; rebuilt, the loop's index vectors come from its scalar counter.
    CHECK(vectorPhiBesideLibmvecCall(carriedIr));
    CHECK_FALSE(vectorPhiBesideLibmvecCall(rebuiltIr));
    CHECK(rebuiltIr.find(".rebuilt") != std::string::npos);
    // Same bits as the inductions carried (the index arithmetic is exact), and as the scalar
    // work-item loops up to the vector sin and cos; 16 work-items: the strided loops run 4 and
    // 2 iterations, 32: 2 and 1.
    for (size_t local : {size_t(16), size_t(32)}) {
        INFO("group size " << local);
        const std::vector<float> a = runLocalFft(rebuilt, local);
        CHECK(a == runLocalFft(carried, local));
        const std::vector<float> s = runLocalFft(scalar, local);
        REQUIRE(a.size() == s.size());
        for (size_t i = 0; i < a.size(); ++i) {
            INFO("value " << i);
            REQUIRE(a[i] == Approx(s[i]).margin(1e-4));
        }
    }
}

namespace {

// Each row sums table entries at the indices it lists, the table a CL_RG/CL_FLOAT image whose
// texels hold doubles (read back with as_double), as GPU codes keep read-only data in images.
const char* kImageRows = R"CL(
constant sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
__kernel void image_rows(read_only image2d_t table, __global const int* idx,
                         __global const int* start, __global double* out, int width) {
    const int row = get_global_id(0);
    double sum = 0.0;
    for (int j = start[row]; j < start[row + 1]; ++j) {
        const int k = idx[j];
        const uint4 t = read_imageui(table, smp, (int2)(k % width, k / width));
        sum += as_double((uint2)(t.x, t.y));
    }
    out[row] = sum;
}
)CL";

/// Runs image_rows over a width x height table of the given format (texels of 8 bytes), rows of
/// varying length, indices partly outside the table (the border colour: (0, 0) in x and y).
std::vector<double> runImageRows(const Built& b, cl_channel_order order, cl_channel_type type) {
    const int width = 37, height = 5, rows = 96;
    std::vector<uint32_t> texels(size_t(width) * height * 2);
    for (size_t i = 0; i < texels.size(); ++i) // doubles as CL_FLOAT pairs, or 4 ushorts
        texels[i] = uint32_t(i * 2654435761u) ^ 0x3FF00000u;
    std::vector<int> start(rows + 1), idx;
    std::mt19937 rng(5);
    for (int r = 0; r < rows; ++r) {
        start[size_t(r)] = int(idx.size());
        for (int j = 0; j < r % 13; ++j)
            idx.push_back(int(rng() % (width * height + 40)) - 20);
    }
    start[rows] = int(idx.size());
    KernelImageDesc d{};
    d.data = reinterpret_cast<char*>(texels.data());
    d.elementSize = 8;
    d.rowPitch = uint64_t(width) * 8;
    d.slicePitch = d.rowPitch * height;
    d.width = width;
    d.height = height;
    d.depth = d.arraySize = 1;
    d.channelOrder = int32_t(order);
    d.channelType = int32_t(type);
    d.imageType = CL_MEM_OBJECT_IMAGE2D;
    d.channels = order == CL_RG ? 2 : 4;
    d.readPath = imageReadPath(cl_image_format{order, type}, 8);
    std::vector<double> out(rows, -1.0);
    int widthArg = width;
    PtrArgs p{&d, idx.data(), start.data(), out.data()};
    runNDRange(b.fn("image_rows"), {p.at(0), p.at(1), p.at(2), p.at(3), &widthArg}, 1,
               {size_t(rows), 1, 1}, {32, 1, 1});
    for (int r = 0; r < rows; ++r) {
        double want = 0.0;
        for (int j = start[size_t(r)]; j < start[size_t(r) + 1]; ++j) {
            const int k = idx[size_t(j)], x = k % width, y = k / width;
            uint32_t xy[2] = {0, 0};
            if (x >= 0 && x < width && y >= 0 && y < height) {
                const uint32_t* t = texels.data() + (size_t(y) * width + x) * 2;
                if (type == CL_FLOAT) {
                    xy[0] = t[0];
                    xy[1] = t[1];
                } else { // CL_UNSIGNED_INT16: channels x and y, each a ushort
                    xy[0] = t[0] & 0xFFFFu;
                    xy[1] = t[0] >> 16;
                }
            }
            double v;
            std::memcpy(&v, xy, sizeof v);
            want += v;
        }
        INFO("row " << r);
        REQUIRE(std::memcmp(&out[size_t(r)], &want, sizeof want) == 0);
    }
    return out;
}

} // namespace

TEST_CASE("image reads in a loop: 32-bit channels read as whole texels, no format switch",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_img_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prefix = (dir / "t").string();
    Built b = build(kImageRows, "-cl-std=CL3.0 -save-temps=" + prefix);
    b.fn("image_rows");
    const std::string ir = readFile(prefix + "_image_rows.ll");
    fs::remove_all(dir);
    std::string wg;
    for (size_t at = ir.find("define "); at != std::string::npos; at = ir.find("define ", at + 1))
        if (ir.find("@__duet_wg_image_rows", at) < ir.find('\n', at))
            wg += ir.substr(at, ir.find("\n}\n", at) - at);
    REQUIRE_FALSE(wg.empty());
    // The texel of 32-bit channels is one load of 8 bytes; the other formats' switches on the
    // channel type (their cases CL_SIGNED_INT8 = 4311, CL_UNORM_INT8 = 4306) are out of line.
    CHECK(wg.find("i32 4311, label") == std::string::npos);
    CHECK(wg.find("i32 4306, label") == std::string::npos);
    CHECK((wg.find("load <2 x i32>") != std::string::npos ||
           wg.find("load i64") != std::string::npos ||
           wg.find("load double") != std::string::npos));
    // Out of line and preserve_most: the loop's values stay in registers across the call.
    CHECK(wg.find("call preserve_mostcc <4 x i32> @duet_load_any_i") != std::string::npos);
    // The same sums as the host's, bit for bit: 32-bit channels (the fast path), 16-bit ones
    // (out of line), and the border colour outside the table.
    runImageRows(b, CL_RG, CL_FLOAT);
    runImageRows(b, CL_RGBA, CL_UNSIGNED_INT16);
}

const char* kImageGather = R"CL(
constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |
                          CLK_FILTER_NEAREST;
__kernel void image_gather(read_only image2d_t table, __global const int* idx,
                           __global float* out, int width) {
    const int i = get_global_id(0);
    const int k = idx[i];
    out[i] = read_imagef(table, edge, (int2)(k % width, k / width)).x; // BGRA: byte 2
}
)CL";

TEST_CASE("image reads gathered across work-items: the read path is tested by bits, the loop "
          "vectorised, BGRA swapped",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_gather_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prefix = (dir / "t").string();
    Built b = build(kImageGather, "-cl-std=CL3.0 -save-temps=" + prefix);
    b.fn("image_gather");
    const std::string ir = readFile(prefix + "_image_gather.ll");
    fs::remove_all(dir);
    // A chain of tests of the read path's value became a switch, which LLVM neither unswitched
    // nor vectorised: the loop ran one work-item at a time. (A read whose four channels are all
    // used keeps vector values, which LLVM's loop vectoriser does not widen: known gap.)
    CHECK(ir.find("masked.gather") != std::string::npos);

    const int width = 19, height = 7, n = 256;
    std::vector<uint32_t> words(size_t(width) * height * 4);
    for (size_t i = 0; i < words.size(); ++i)
        words[i] = uint32_t(i * 2654435761u) & 0x3FFFFFFFu; // finite floats, any bytes
    std::vector<int> idx(n);
    std::mt19937 rng(11);
    for (int& k : idx)
        k = int(rng() % (width * height + 30)) - 15; // partly outside: clamped to the edge
    auto run = [&](cl_channel_order order, cl_channel_type type) {
        const cl_image_format f{order, type};
        KernelImageDesc d{};
        d.data = reinterpret_cast<char*>(words.data());
        d.elementSize = int32_t(elementSize(f));
        d.rowPitch = uint64_t(width) * uint64_t(d.elementSize);
        d.slicePitch = d.rowPitch * height;
        d.width = width;
        d.height = height;
        d.depth = d.arraySize = 1;
        d.channelOrder = int32_t(order);
        d.channelType = int32_t(type);
        d.imageType = CL_MEM_OBJECT_IMAGE2D;
        d.channels = int32_t(channelCount(order));
        d.readPath = imageReadPath(f, size_t(d.elementSize));
        std::vector<float> out(size_t(n), -1.0f);
        int widthArg = width;
        PtrArgs p{&d, idx.data(), out.data()};
        runNDRange(b.fn("image_gather"), {p.at(0), p.at(1), p.at(2), &widthArg}, 1,
                   {size_t(n), 1, 1}, {64, 1, 1});
        for (int i = 0; i < n; ++i) {
            const int k = idx[size_t(i)];
            const int x = std::clamp(k % width, 0, width - 1);
            const int y = std::clamp(k / width, 0, height - 1);
            const size_t at = size_t(y) * width + size_t(x);
            float want[4];
            if (type == CL_FLOAT) {
                std::memcpy(want, &words[at], 4);
                want[1] = want[2] = 0.0f;
                want[3] = 1.0f;
            } else {
                unsigned char bytes[4];
                std::memcpy(bytes, &words[at], 4);
                for (int c = 0; c < 4; ++c)
                    want[c] = float(bytes[c]) * (1.0f / 255.0f);
                if (order == CL_BGRA)
                    std::swap(want[0], want[2]);
            }
            INFO("format " << order << "/" << type << ", work-item " << i);
            REQUIRE(out[size_t(i)] == want[0]);
        }
    };
    run(CL_R, CL_FLOAT);
    run(CL_RGBA, CL_UNORM_INT8);
    run(CL_BGRA, CL_UNORM_INT8);
}

TEST_CASE("image read paths: the formats read inline and their element size as a shift",
          "[cpu][cpu_codegen]") {
    auto path = [](cl_channel_order o, cl_channel_type t) {
        const cl_image_format f{o, t};
        return imageReadPath(f, elementSize(f));
    };
    CHECK(path(CL_R, CL_FLOAT) == (kImageReadPlain32 | 2 << 4));
    CHECK(path(CL_RG, CL_SIGNED_INT32) == (kImageReadPlain32 | 3 << 4));
    CHECK(path(CL_RGBA, CL_UNSIGNED_INT32) == (kImageReadPlain32 | 4 << 4));
    CHECK(path(CL_RGBA, CL_UNORM_INT8) == (kImageReadRgba8 | 2 << 4));
    CHECK(path(CL_BGRA, CL_UNORM_INT8) == (kImageReadBgra8 | 2 << 4));
    // Everything else reads through the general, out-of-line load.
    CHECK(path(CL_RGBA, CL_UNORM_INT16) == kImageReadAny);
    CHECK(path(CL_BGRA, CL_SNORM_INT8) == kImageReadAny);
    CHECK(path(CL_sRGBA, CL_UNORM_INT8) == kImageReadAny);
    CHECK(path(CL_R, CL_HALF_FLOAT) == kImageReadAny);
    CHECK(path(CL_DEPTH, CL_FLOAT) == kImageReadAny);
    CHECK(path(CL_sRGB, CL_UNORM_INT8) == kImageReadAny); // 3 bytes a texel
}

TEST_CASE("a kernel built again in the process takes its machine code from the JIT memo",
          "[cpu][cpu_codegen]") {
    // The same source twice: the second build's kernel comes from the in-process memo and runs
    // as the first did. The same source with other options that change the code (fast maths),
    // or a different source, compiles afresh.
    // A kernel name no other test case uses: the memo lives as long as this process.
    auto renamed = [](std::string text) {
        text.replace(text.find("void triad("), 11, "void memo_triad(");
        return text;
    };
    const std::string source = renamed(kTriad) + "// jit memo test\n";
    auto run = [](const Built& b) {
        std::vector<float> a(100), x(100), c(100, -1.0f);
        for (size_t i = 0; i < a.size(); ++i) {
            a[i] = float(i) * 0.25f;
            x[i] = 3.0f - float(i);
        }
        float s = 1.5f;
        PtrArgs p{c.data(), a.data(), x.data()};
        runNDRange(b.fn("memo_triad"), {p.at(0), p.at(1), p.at(2), &s}, 1, {100}, {16});
        return c;
    };
    const size_t before = cpu::jitMemoHits();
    Built first = build(source);
    const std::vector<float> expected = run(first);
    CHECK(cpu::jitMemoHits() == before);
    for (size_t i = 0; i < expected.size(); ++i)
        REQUIRE(expected[i] == float(i) * 0.25f + 1.5f * (3.0f - float(i)));
    Built second = build(source);
    CHECK(run(second) == expected);
    CHECK(cpu::jitMemoHits() == before + 1);
    CHECK(second.fin.executable->entry(0) != first.fin.executable->entry(0));
    Built fast = build(source, "-cl-std=CL3.0 -cl-fast-relaxed-math");
    run(fast);
    CHECK(cpu::jitMemoHits() == before + 1);
    Built other = build(renamed(kTriad) + "// another source\n");
    // A comment changes nothing in the kernel's module: that is a hit too.
    CHECK(run(other) == expected);
    CHECK(cpu::jitMemoHits() == before + 2);
    setenv("DUET_CPU_JIT_MEMO", "0", 1);
    Built off = build(source);
    CHECK(run(off) == expected);
    unsetenv("DUET_CPU_JIT_MEMO");
    CHECK(cpu::jitMemoHits() == before + 2);
}

namespace {

// A kernel with divergent control flow: each work-item takes one of two arms by its data.
const char* kBranchy = R"CL(
__kernel void branchy(__global const float* in, __global float* out, float k) {
    size_t i = get_global_id(0);
    float v = in[i];
    if (v > 0.5f)
        v = sqrt(v) * k + 1.0f / v;
    else
        v = v * v - k;
    out[i] = v;
}
)CL";

/// The log lines of the work-item loops of kernel `k`'s group-sized work-group function
/// (`__duet_wg_<k>`, or its `.simd` variant where there are several).
std::vector<std::string> workItemLoopLines(const std::string& log, const std::string& k) {
    std::vector<std::string> lines;
    for (const std::string& fn : {"__duet_wg_" + k + ": ", "__duet_wg_" + k + ".simd: "}) {
        const std::string tag = "kernel " + k + ": " + fn + "work-item loop ";
        for (size_t at = log.find(tag); at != std::string::npos; at = log.find(tag, at + 1))
            lines.push_back(log.substr(at, log.find('\n', at) - at));
    }
    return lines;
}

/// Builds the GPU-style kernels and `branchy` for `cpu` (empty: the host) with
/// DUET_CPU_VECTOR_WIDTH=`width` (empty: unset) and -save-temps under `prefix`.
/// `source` built for CPU `cpu` (empty: the host) with `options`, `kernels` compiled now (the
/// switches in the environment apply to them).
Built buildForCpu(const std::string& source, const std::string& cpu, const std::string& options,
                  std::initializer_list<const char*> kernels) {
    TargetSpec target;
    target.cpuName = cpu; // its own features: code for it runs only on such a CPU
    target = withCpuFrontEnd(target);
    CompileResult c = compileSource(source, options, {}, target);
    INFO(c.log);
    REQUIRE(c.status == CL_SUCCESS);
    Built b;
    b.fin = finalizeForCpu(c.bitcode, options, source, target);
    b.log = b.fin.log;
    INFO(b.log);
    REQUIRE(b.fin.status == CL_SUCCESS);
    for (const char* k : kernels)
        b.fn(k);
    return b;
}

Built buildForWidth(const std::string& cpu, const std::string& width, const std::string& prefix) {
    if (width.empty())
        ::unsetenv("DUET_CPU_VECTOR_WIDTH");
    else
        ::setenv("DUET_CPU_VECTOR_WIDTH", width.c_str(), 1);
    Built b =
        buildForCpu(std::string(kGpuStyle) + kBranchy, cpu, "-cl-std=CL3.0 -save-temps=" + prefix,
                    {"fv", "tr", "strided", "branchy"});
    ::unsetenv("DUET_CPU_VECTOR_WIDTH");
    return b;
}

} // namespace

TEST_CASE("vector width: the default per CPU, and DUET_CPU_VECTOR_WIDTH", "[cpu][cpu_codegen]") {
    const char* saved = std::getenv("DUET_CPU_VECTOR_WIDTH");
    const std::string savedWidth = saved ? saved : "";
    ::unsetenv("DUET_CPU_VECTOR_WIDTH");
    // Intel's AVX-512 cores from Ice Lake on and Zen 5: 512 bits (measured faster); Zen 4 and
    // the Skylake-SP family (not measured): 256.
    for (const char* cpu : {"icelake-server", "sapphirerapids", "emeraldrapids", "graniterapids",
                            "icelake-client", "tigerlake", "rocketlake", "znver5"}) {
        INFO(cpu);
        const CpuVectorWidth w = cpuVectorWidth(cpu, true, true);
        CHECK(w.bits == 512);
        CHECK(w.why.find("512 bits measured faster") != std::string::npos);
    }
    for (const char* cpu : {"znver4", "skylake-avx512", "cascadelake", "cooperlake"}) {
        INFO(cpu);
        CHECK(cpuVectorWidth(cpu, true, true).bits == 256);
    }
    CHECK(cpuVectorWidth("sapphirerapids", false, true).bits == 256); // AVX-512 off: its name
    CHECK(cpuVectorWidth("skylake", false, true).bits == 256);        // says nothing then
    CHECK(cpuVectorWidth("nehalem", false, false).bits == 128);
    ::setenv("DUET_CPU_VECTOR_WIDTH", "256", 1);
    CHECK(cpuVectorWidth("sapphirerapids", true, true).bits == 256);
    CHECK(cpuVectorWidth("sapphirerapids", true, true).why == "DUET_CPU_VECTOR_WIDTH");
    ::setenv("DUET_CPU_VECTOR_WIDTH", "512", 1);
    CHECK(cpuVectorWidth("znver4", true, true).bits == 512);
    CHECK(cpuVectorWidth("skylake", false, true).bits == 256); // capped at the registers
    ::setenv("DUET_CPU_VECTOR_WIDTH", "1024", 1);
    const CpuVectorWidth ignored = cpuVectorWidth("icelake-server", true, true);
    CHECK(ignored.bits == 512);
    CHECK(ignored.why.find("ignored") != std::string::npos);
    if (savedWidth.empty())
        ::unsetenv("DUET_CPU_VECTOR_WIDTH");
    else
        ::setenv("DUET_CPU_VECTOR_WIDTH", savedWidth.c_str(), 1);
}

namespace {

/// The assembly of function `name` in a `.s` text: from its label to its end marker.
std::string asmFunction(const std::string& s, const std::string& name) {
    const size_t at = s.find("\n" + name + ":\n");
    if (at == std::string::npos)
        return {};
    const size_t end = s.find(".Lfunc_end", at);
    return s.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

} // namespace

TEST_CASE("functions holding vectors wider than 16 bytes realign their stack frame",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_realign_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prefix = (dir / "t").string();
    // `wide`: float4 arithmetic across work-items, vectorised (and spilling at 256 bits);
    // `narrow`: an atomic per work-item, no vector.
    Built b = build(R"CL(
__kernel void wide(__global const float4* u, __global float4* out, float g) {
    size_t i = get_global_id(0);
    float4 a = u[i], c = u[i + 1];
    float pa = (g - 1.0f) * (a.w - 0.5f * (a.y * a.y + a.z * a.z) / a.x);
    float pc = (g - 1.0f) * (c.w - 0.5f * (c.y * c.y + c.z * c.z) / c.x);
    float s = fmax(fabs(a.y / a.x) + sqrt(g * pa / a.x), fabs(c.y / c.x) + sqrt(g * pc / c.x));
    out[i] = 0.5f * (a + c) - 0.5f * s * (c - a) + (float4)(0.0f, pa, pc, s);
}
__kernel void narrow(__global int* counter) {
    atomic_inc(counter);
}
)CL",
                    "-cl-std=CL3.0 -save-temps=" + prefix);
    const std::string s = readFile(prefix + "_wide.s"), n = readFile(prefix + "_narrow.s");
    fs::remove_all(dir);
    const std::string wide = asmFunction(s, "__duet_wg_wide"),
                      narrow = asmFunction(n, "__duet_wg_narrow");
    INFO(wide);
    REQUIRE(!wide.empty());
    REQUIRE(!narrow.empty());
    // 32-byte vectors with AVX2, 64 with AVX-512: the prologue realigns the frame (to its
    // slots' alignment: 32 or 64 where it spills such registers).
    if (__builtin_cpu_supports("avx2")) {
        std::smatch m;
        REQUIRE(std::regex_search(wide, m, std::regex("andq\\s+\\$-([0-9]+), %rsp")));
        if (std::regex_search(wide,
                              std::regex("vmov[a-z0-9]*\\s+%[yz]mm[0-9]+, -?[0-9]+\\(%r[sb]p\\)")))
            CHECK(std::stoi(m[1].str()) >= 32);
    }
    CHECK(narrow.find("andq\t$-") == std::string::npos);
    // The realigned code computes what it did.
    std::vector<cl_float4> u(65), out(64);
    for (size_t i = 0; i < u.size(); ++i)
        u[i] = {{1.0f + 0.01f * float(i), 0.1f * float(i % 7), -0.05f, 2.5f + 0.02f * float(i)}};
    float g = 1.4f;
    PtrArgs p{u.data(), out.data()};
    runNDRange(b.fn("wide"), {p.at(0), p.at(1), &g}, 1, {64, 1, 1}, {16, 1, 1});
    for (size_t i = 0; i < out.size(); ++i) {
        const cl_float4 a = u[i], c = u[i + 1];
        const float pa =
            (g - 1.0f) * (a.s[3] - 0.5f * (a.s[1] * a.s[1] + a.s[2] * a.s[2]) / a.s[0]);
        const float pc =
            (g - 1.0f) * (c.s[3] - 0.5f * (c.s[1] * c.s[1] + c.s[2] * c.s[2]) / c.s[0]);
        const float sp = std::fmax(std::fabs(a.s[1] / a.s[0]) + std::sqrt(g * pa / a.s[0]),
                                   std::fabs(c.s[1] / c.s[0]) + std::sqrt(g * pc / c.s[0]));
        const float add[4] = {0.0f, pa, pc, sp};
        for (int k = 0; k < 4; ++k)
            CHECK(out[i].s[k] ==
                  Approx(0.5f * (a.s[k] + c.s[k]) - 0.5f * sp * (c.s[k] - a.s[k]) + add[k])
                      .epsilon(1e-5));
    }
}

TEST_CASE("vector width: 16 lanes with 512-bit vectors on AVX-512; 8 with 256 and on AVX2",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    const char* saved = std::getenv("DUET_CPU_VECTOR_WIDTH");
    const std::string savedWidth = saved ? saved : "";
    fs::path dir = fs::temp_directory_path() / ("duet_cg_width_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    struct Want {
        const char* cpu;   ///< LLVM CPU name: code is generated for it, not run
        const char* width; ///< DUET_CPU_VECTOR_WIDTH, "" unset (the default)
        unsigned lanes;    ///< floats per vector in every work-item loop
    };
    // A float4 kernel, a barrier kernel, strided loops, divergent control flow; Intel's and
    // AMD's AVX-512 cores (512 bits by default but on Zen 4 and Skylake-SP), an AVX2-only core
    // (512 asked for: capped at its 256-bit registers).
    const Want wants[] = {{"skylake-avx512", "512", 16},
                          {"znver4", "512", 16},
                          {"znver5", "512", 16},
                          {"skylake-avx512", "", 8},
                          {"skylake-avx512", "256", 8},
                          {"sapphirerapids", "", 16},
                          {"znver5", "", 16},
                          {"znver5", "256", 8},
                          {"skylake", "512", 8},
                          {"skylake", "", 8},
                          {"znver4", "", 8}};
    for (const Want& w : wants) {
        INFO("cpu " << w.cpu << ", DUET_CPU_VECTOR_WIDTH=" << w.width);
        const std::string prefix = (dir / (std::string(w.cpu) + "_" + w.width)).string();
        Built b = buildForWidth(w.cpu, w.width, prefix);
        INFO(b.log);
        const std::string lanes = "vectorization width: " + std::to_string(w.lanes) + ",";
        const bool avx2Only = std::string(w.cpu) == "skylake";
        for (const char* k : {"fv", "tr", "strided", "branchy"}) {
            INFO("kernel " << k);
            // On an AVX2-only core LLVM's cost model keeps fv's loop scalar (its guarded float4
            // stores would be scalar there, with no masked scatter): a known gap
            // (runtime/devices/cpu/README.md, "Vector width").
            if (avx2Only && std::string(k) == "fv")
                continue;
            const std::vector<std::string> lines = workItemLoopLines(b.log, k);
            REQUIRE_FALSE(lines.empty());
            for (const std::string& line : lines) {
                INFO(line);
                CHECK(line.find(lanes) != std::string::npos);
            }
            const std::string ir = readFile(prefix + "_" + k + ".ll");
            const std::string asmText = readFile(prefix + "_" + k + ".s");
            REQUIRE_FALSE(ir.empty());
            REQUIRE_FALSE(asmText.empty());
            const bool wide = w.lanes == 16;
            CHECK((ir.find("<16 x float>") != std::string::npos) == wide);
            CHECK(ir.find("<8 x float>") != std::string::npos);
            // 512-bit float arithmetic or moves in zmm registers; no zmm at all on AVX2. (With
            // 256 bits on AVX-512 zmm still appear: gathers' 8 x i64 indices, SLP's choices.)
            const std::regex zmmFloat(
                "\tv(add|sub|mul|div|sqrt|max|min|fn?m(add|sub)[0-9]+|movu|mova)ps\t[^\n]*%zmm");
            const bool zmmFloats = std::regex_search(asmText, zmmFloat);
            if (wide)
                CHECK(zmmFloats);
            if (avx2Only)
                CHECK(asmText.find("%zmm") == std::string::npos);
            CHECK(asmText.find("%ymm") != std::string::npos);
        }
    }
    fs::remove_all(dir);
    if (!savedWidth.empty())
        ::setenv("DUET_CPU_VECTOR_WIDTH", savedWidth.c_str(), 1);
}

TEST_CASE("512-bit vectors compute what 256-bit vectors do", "[cpu][cpu_codegen]") {
    if (!__builtin_cpu_supports("avx512f")) {
        WARN("skipped: this host has no AVX-512 to run 512-bit code on (compiled, not run, "
             "above)");
        return;
    }
    namespace fs = std::filesystem;
    const char* saved = std::getenv("DUET_CPU_VECTOR_WIDTH");
    const std::string savedWidth = saved ? saved : "";
    fs::path dir = fs::temp_directory_path() / ("duet_cg_w512_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    Built narrow = buildForWidth("", "256", (dir / "n").string());
    Built wide = buildForWidth("", "512", (dir / "w").string());
    for (const Built* b : {&narrow, &wide})
        for (const char* k : {"fv", "tr", "strided", "branchy"})
            for (const std::string& line : workItemLoopLines(b->log, k))
                CHECK(line.find(b == &wide ? "width: 16," : "width: 8,") != std::string::npos);
    for (size_t group : {size_t(64), size_t(16), size_t(8)}) {
        INFO("strided group size " << group);
        GpuStyleResults a = runGpuStyle(narrow, group), b = runGpuStyle(wide, group);
        CHECK(a.fv == b.fv);
        CHECK(a.tr == b.tr);
        CHECK(a.out == b.out);
        CHECK(a.sums == b.sums);
    }
    // Divergent arms across the 16 lanes, a partial last group (1000 = 15 * 64 + 40).
    const size_t n = 1000;
    std::vector<float> in(n), outN(n, -1.0f), outW(n, -2.0f);
    for (size_t i = 0; i < n; ++i)
        in[i] = float((i * 37) % 101) / 100.0f;
    float k = 3.0f;
    PtrArgs pn{in.data(), outN.data()}, pw{in.data(), outW.data()};
    runNDRange(narrow.fn("branchy"), {pn.at(0), pn.at(1), &k}, 1, {n, 1, 1}, {64, 1, 1});
    runNDRange(wide.fn("branchy"), {pw.at(0), pw.at(1), &k}, 1, {n, 1, 1}, {64, 1, 1});
    CHECK(outN == outW);
    for (size_t i = 0; i < n; ++i) {
        const float v = in[i];
        const float want = v > 0.5f ? std::sqrt(v) * k + 1.0f / v : v * v - k;
        REQUIRE(std::fabs(outW[i] - want) <= 1e-5f * std::fabs(want) + 1e-6f);
    }
    fs::remove_all(dir);
    if (!savedWidth.empty())
        ::setenv("DUET_CPU_VECTOR_WIDTH", savedWidth.c_str(), 1);
}

TEST_CASE("guarded __global vector accesses get a plain path for a full mask",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_mask_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    // The transpose's guarded read and write (`if (x < w && y < h)`), 16 lanes.
    const std::regex plainLoad("load <16 x float>, ptr addrspace\\(1\\)");
    const std::regex plainStore("store <16 x float> [^\\n]*, ptr addrspace\\(1\\)");
    Built with = buildForWidth("skylake-avx512", "512", (dir / "with").string());
    std::string ir = readFile((dir / "with").string() + "_tr.ll");
    CHECK(ir.find("@llvm.masked.load.v16f32.p1(") != std::string::npos);
    CHECK(ir.find("@llvm.masked.store.v16f32.p1(") != std::string::npos);
    CHECK(ir.find("@llvm.vector.reduce.and.v16i1(") != std::string::npos);
    CHECK(std::regex_search(ir, plainLoad));
    CHECK(std::regex_search(ir, plainStore));
    ::setenv("DUET_CPU_FULL_MASK_PATHS", "0", 1);
    Built without = buildForWidth("skylake-avx512", "512", (dir / "without").string());
    ::unsetenv("DUET_CPU_FULL_MASK_PATHS");
    ir = readFile((dir / "without").string() + "_tr.ll");
    CHECK(ir.find("@llvm.masked.store.v16f32.p1(") != std::string::npos);
    CHECK_FALSE(std::regex_search(ir, plainLoad));
    CHECK_FALSE(std::regex_search(ir, plainStore));
    fs::remove_all(dir);
}

// __local atomics are plain memory operations on the CPU device (a work-group runs on one
// thread: devices/cpu/jit/local_atomics.hpp); __global ones keep their locked instructions
// whatever scope they name. Both tiers: the quick code (-save-temps' .quick.s) and the
// optimised code (.s).
TEST_CASE("__local atomics have no lock prefix in either tier; __global ones keep it",
          "[cpu][cpu_codegen][atomics]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_atomics_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prefix = (dir / "a").string();
    const char* src = R"CL(
void add_local(volatile local atomic_int* p, int v) {
    atomic_fetch_add_explicit(p, v, memory_order_acq_rel, memory_scope_work_group);
}
kernel void loc(global int* out, volatile local atomic_int* arg) {
    local int c[2];
    local atomic_int a[3];
    uint l = get_local_id(0);
    if (l == 0) {
        c[0] = 0; c[1] = 0;
        atomic_init(&a[0], 0); atomic_init(&a[1], 0); atomic_init(&a[2], 0);
        atomic_init(&arg[0], 0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int o = atomic_inc(&c[0]);
    atomic_fetch_add_explicit(&a[0], 1, memory_order_seq_cst, memory_scope_work_group);
    int e = 0;
    atomic_compare_exchange_strong(&a[1], &e, (int)l);
    o += atomic_exchange(&a[2], (int)l);
    atomic_store(&arg[0], o);
    add_local(&a[0], 1);
    atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_seq_cst, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0)
        out[get_group_id(0)] = atomic_load(&a[0]) + c[0];
}
kernel void glob(volatile global atomic_int* g, volatile global int* h) {
    atomic_fetch_add_explicit(&g[0], 1, memory_order_relaxed, memory_scope_work_group);
    int e = 0;
    atomic_compare_exchange_strong_explicit(&g[1], &e, 1, memory_order_relaxed,
                                            memory_order_relaxed, memory_scope_work_group);
    atomic_inc(&h[0]);
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_device);
}
)CL";
    // Tiering on for this build (the test's environment turns it off), so the quick code is
    // written too.
    const char* saved = std::getenv("DUET_CPU_TIER_UP_MS");
    const std::string savedValue = saved ? saved : "";
    ::setenv("DUET_CPU_TIER_UP_MS", "20", 1);
    Built b = build(src, "-cl-std=CL3.0 -save-temps=" + prefix);
    if (saved)
        ::setenv("DUET_CPU_TIER_UP_MS", savedValue.c_str(), 1);
    else
        ::unsetenv("DUET_CPU_TIER_UP_MS");
    const std::regex locked("\\block\\b|\\bxchg[bwlq]?\\b|\\bmfence\\b");
    for (const char* tier : {".s", ".quick.s"}) {
        INFO("tier " << tier);
        const std::string local = readFile(prefix + "_loc" + tier);
        const std::string global = readFile(prefix + "_glob" + tier);
        REQUIRE_FALSE(local.empty());
        REQUIRE_FALSE(global.empty());
        CHECK_FALSE(std::regex_search(local, locked));
        CHECK(global.find("lock") != std::string::npos);
        // The device-scope fence over __global memory stays a hardware fence.
        CHECK((global.find("mfence") != std::string::npos ||
               global.find("lock or") != std::string::npos));
    }
    // The quick code runs and counts exactly: 2 groups of 64, each counter its group's alone.
    std::vector<int> out(2, -1), argBlock(16);
    PtrArgs p{out.data(), argBlock.data()};
    runNDRange(b.fn("loc"), {p.at(0), p.at(1)}, 1, {128, 1, 1}, {64, 1, 1}, {0, 0, 0},
               b.desc("loc").staticLocalMemSize);
    CHECK(out[0] == 3 * 64);
    CHECK(out[1] == 3 * 64);
    fs::remove_all(dir);
}

namespace {

// Work-item loops holding a loop whose trip count differs between work-items (issue 15): SHOC
// Spmv's CSR-scalar kernel (a row per work-item), a Mandelbrot escape loop over a 2D range,
// and a BFS-like loop over a vertex's edges that writes other vertices' levels, after an early
// return.
const char* kDivergent = R"CL(
__kernel void csr(__global const float* restrict val, __global const float* restrict vec,
                  __global const int* restrict cols, __global const int* restrict rowDelimiters,
                  const int dim, __global float* restrict out) {
    int myRow = get_global_id(0);
    if (myRow < dim) {
        float t = 0.0f;
        int start = rowDelimiters[myRow];
        int end = rowDelimiters[myRow + 1];
        for (int j = start; j < end; j++)
            t += val[j] * vec[cols[j]];
        out[myRow] = t;
    }
}
__kernel void mandel(__global int* out, __global float* mag, float x0, float y0, float step,
                     int maxIter) {
    int px = get_global_id(0), py = get_global_id(1);
    float cr = x0 + px * step, ci = y0 + py * step;
    float zr = 0.0f, zi = 0.0f;
    int it = 0;
    while (it < maxIter && zr * zr + zi * zi < 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        ++it;
    }
    out[py * get_global_size(0) + px] = it;
    mag[py * get_global_size(0) + px] = zr * zr + zi * zi;
}
__kernel void edges(__global const int* restrict first, __global const int* restrict adj,
                    __global int* level, int cur, int n, __global int* changed) {
    int v = get_global_id(0);
    if (v >= n || level[v] != cur)
        return;
    int found = 0;
    for (int e = first[v]; e < first[v + 1]; ++e) {
        int u = adj[e];
        if (level[u] < 0) {
            level[u] = cur + 1;
            ++found;
        }
    }
    changed[v] = found;
}
)CL";

struct DivergentResults {
    std::vector<float> csr, mag;
    std::vector<int> mandel, levels, changed;
};

/// Runs the three kernels: `local` work-items per group along x (2D for mandel: local x 12
/// or `local`, local y 3; 1 x 20 for `local` 5).
DivergentResults runDivergent(const Built& b, size_t local) {
    DivergentResults r;
    // CSR: 203 rows (not a multiple of 8 or 16), rows of 0 to 40 entries, row 77 of 20,000.
    const int rows = 203;
    std::vector<int> delim{0}, cols;
    std::vector<float> val, vec(rows);
    std::mt19937 rng(7);
    for (int row = 0; row < rows; ++row) {
        int len = row == 77 ? 20000 : (row % 5 == 0 ? 0 : int(rng() % 41));
        for (int k = 0; k < len; ++k) {
            cols.push_back(int(rng() % rows));
            val.push_back(float(rng() % 100) / 10.0f);
        }
        delim.push_back(int(cols.size()));
    }
    for (float& v : vec)
        v = float(rng() % 100) / 10.0f;
    r.csr.assign(rows + 5, -1.0f);
    int dim = rows;
    PtrArgs p{val.data(), vec.data(), cols.data(), delim.data(), r.csr.data()};
    runNDRange(b.fn("csr"), {p.at(0), p.at(1), p.at(2), p.at(3), &dim, p.at(4)}, 1,
               {size_t(rows + 5), 1, 1}, {local, 1, 1});
    // Mandelbrot: 60 x 35, escape counts from 1 to 5000 (one point in the set).
    const size_t w = 60, h = 35;
    r.mandel.assign(w * h, -1);
    r.mag.assign(w * h, -1.0f);
    float x0 = -2.0f, y0 = -1.0f, step = 0.05f;
    int maxIter = 5000;
    PtrArgs q{r.mandel.data(), r.mag.data()};
    // Local size 5: groups of 1 x 20 (the variant for one work-item along x, `.lx1`).
    runNDRange(b.fn("mandel"), {q.at(0), q.at(1), &x0, &y0, &step, &maxIter}, 2, {w, h, 1},
               local == 5 ? std::array<size_t, 3>{1, 20, 1}
                          : std::array<size_t, 3>{std::min<size_t>(local, 12), 3, 1});
    // BFS over a graph of 300 vertices, some of degree 0, one of degree 3,000, level by level.
    const int n = 300;
    std::vector<int> first{0}, adj;
    for (int v = 0; v < n; ++v) {
        int deg = v == 150 ? 3000 : (v % 7 == 0 ? 0 : int(rng() % 6));
        for (int k = 0; k < deg; ++k)
            adj.push_back(int(rng() % n));
        first.push_back(int(adj.size()));
    }
    r.levels.assign(n, -1);
    r.levels[150] = 0;
    r.changed.assign(n, -1);
    for (int cur = 0; cur < 12; ++cur) {
        PtrArgs e{first.data(), adj.data(), r.levels.data(), r.changed.data()};
        runNDRange(b.fn("edges"), {e.at(0), e.at(1), e.at(2), &cur, const_cast<int*>(&n), e.at(3)},
                   1, {size_t(n + 3), 1, 1}, {local, 1, 1});
    }
    // The host's answers, so that both builds are checked, not only equal.
    for (int row = 0; row < rows; ++row) {
        float t = 0.0f;
        for (int j = delim[size_t(row)]; j < delim[size_t(row) + 1]; ++j)
            t += val[size_t(j)] * vec[size_t(cols[size_t(j)])];
        REQUIRE(r.csr[size_t(row)] == Approx(t).epsilon(1e-5));
    }
    CHECK(r.mandel[17 * w + 40] == maxIter); // (0, -0.15): in the set
    CHECK(r.mandel[0] == 1);
    return r;
}

/// "vectorization width: N," for the lane loops of a function over 32-bit values.
std::string laneLoopsLine(const std::string& log, const std::string& kernel, const char* piece,
                          bool shortRows = false) {
    const std::string tag = "kernel " + kernel + ": __duet_wg_" + kernel;
    size_t at = log.find(tag);
    while (at != std::string::npos) {
        size_t end = log.find('\n', at);
        std::string line = log.substr(at, end - at);
        if (line.find(std::string(".lanes.") + piece + ":") != std::string::npos &&
            (line.find(".short.lanes.") != std::string::npos) == shortRows)
            return line;
        at = log.find(tag, end);
    }
    return {};
}

} // namespace

TEST_CASE("loops with per-work-item trip counts run linearised per vector of work-items (issue 15)",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_divloops_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prefix = (dir / "t").string();
    // The default: only where the loop's arithmetic outweighs the gathers its memory accesses
    // become: Mandelbrot's loop (no access) is linearised, the CSR row's (3 accesses, one
    // multiply-add) and the edge loop's are not.
    ::unsetenv("DUET_CPU_DIVERGENT_LOOPS");
    Built def = build(kDivergent, "-cl-std=CL3.0 -save-temps=" + (dir / "def").string());
    {
        INFO(def.log);
        CHECK(
            std::regex_search(def.log, std::regex("kernel mandel: __duet_wg_mandel.simd: "
                                                  "work-item loop [^:]*: inner loop linearised")));
        for (const char* k : {"csr", "edges"})
            CHECK(std::regex_search(def.log, std::regex(std::string("kernel ") + k +
                                                        ": .*not linearised: .*outweighing")));
    }
    // `all`: every loop it can handle.
    ::setenv("DUET_CPU_DIVERGENT_LOOPS", "all", 1);
    Built lin = build(kDivergent, "-cl-std=CL3.0 -save-temps=" + prefix);
    for (const char* k : {"csr", "mandel", "edges"})
        lin.fn(k);
    ::setenv("DUET_CPU_DIVERGENT_LOOPS", "0", 1);
    Built off = build(kDivergent, "-cl-std=CL3.0 -save-temps=" + (dir / "off").string());
    for (const char* k : {"csr", "mandel", "edges"})
        off.fn(k); // compiled now, under this setting
    ::unsetenv("DUET_CPU_DIVERGENT_LOOPS");
    INFO(lin.log);
    // A chunk is 16 work-items: one 512-bit vector of floats, two 256-bit ones; where it is two,
    // a copy at one vector a chunk runs groups whose rows fit one vector.
    const unsigned chunk = std::min(std::max(hostLanes(), 16u), 2 * hostLanes());
    const bool twoVectors = chunk > hostLanes();
    const std::string lanes = "vectorization width: " + std::to_string(chunk) + ",";
    const std::string shortLanes = "vectorization width: " + std::to_string(hostLanes()) + ",";
    for (const char* k : {"csr", "mandel", "edges"}) {
        INFO("kernel " << k);
        // The work-item loop of each is linearised, its three lane loops vectorised 16 lanes
        // wide (16 floats with 512-bit vectors, two vectors of 8 with 256).
        const std::regex linearised(
            std::string("kernel ") + k + ": __duet_wg_" + k +
            "[.a-z0-9]*: work-item loop wi\\.[xy][.a-z]*: inner loop linearised, " +
            std::to_string(chunk) + " work-items a chunk" +
            (twoVectors ? " \\(" + std::to_string(hostLanes()) +
                              " where the group's rows fit one vector\\)"
                        : std::string("\n")));
        CHECK(std::regex_search(lin.log, linearised));
        for (const char* piece : {"pre", "loop", "post"}) {
            const std::string line = laneLoopsLine(lin.log, k, piece);
            INFO(piece << ": " << line);
            CHECK(line.find(": vectorised (") != std::string::npos);
            if (__builtin_cpu_supports("avx2"))
                CHECK(line.find(lanes) != std::string::npos);
            // The copy for short rows, one vector wide.
            const std::string narrow = laneLoopsLine(lin.log, k, piece, true);
            INFO(piece << " (short rows): " << narrow);
            CHECK(narrow.empty() != twoVectors);
            if (twoVectors && __builtin_cpu_supports("avx2"))
                CHECK(narrow.find(shortLanes) != std::string::npos);
        }
        // Off: the loop stays one work-item at a time, as before.
        CHECK(off.log.find("linearised") == std::string::npos);
        const std::regex scalar(std::string("kernel ") + k + ": __duet_wg_" + k +
                                "[.a-z0-9]*: work-item loop wi\\.[xy][.a-z]*: not vectorised");
        CHECK(std::regex_search(off.log, scalar));
    }
    // The loop's round over the lanes is vector code: gathers for the CSR row's entries.
    const std::string ir = functionText(readFile(prefix + "_csr.ll"), "__duet_wg_csr");
    CHECK(ir.find("@llvm.masked.gather") != std::string::npos);
    fs::remove_all(dir);

    // The same results as the work-items one at a time, bit for bit (the same operations in
    // the same order per work-item), for groups that are and are not multiples of the lanes,
    // and that do and do not fit one vector.
    for (size_t local : {size_t(64), size_t(24), size_t(16), size_t(12), size_t(8), size_t(5)}) {
        INFO("group size " << local);
        DivergentResults a = runDivergent(lin, local), s = runDivergent(off, local);
        CHECK(a.csr == s.csr);
        CHECK(a.mandel == s.mandel);
        CHECK(a.mag == s.mag);
        CHECK(a.levels == s.levels);
        CHECK(a.changed == s.changed);
        DivergentResults d = runDivergent(def, local);
        CHECK(d.csr == s.csr);
        CHECK(d.mandel == s.mandel);
        CHECK(d.mag == s.mag);
        CHECK(d.levels == s.levels);
    }
}

namespace {

// More shapes around a loop of per-work-item trip count: a `break` (two exits, values used
// after), the loop's result deciding a branch after it, an if/else joining after, doubles
// (half the lanes), an integer loop with no memory access (Collatz), the loop in the region
// after a barrier reading __local memory, and two loops one after the other in one work-item.
const char* kDivergentShapes = R"CL(
__kernel void find(__global const int* a, __global const int* len, int key, __global int* out) {
    int i = get_global_id(0);
    int n = len[i], at = -1, k = 0;
    for (k = 0; k < n; ++k)
        if (a[i * 64 + k] == key) { at = k; break; }
    if (at >= 0)
        out[i] = at * 1000 + k;
    else
        out[i] = -k;
}
__kernel void collatz(__global int* steps, __global long* peak, int base) {
    int i = get_global_id(0);
    long x = base + i, top = x;
    int s = 0;
    if (i % 3 == 0) {
        while (x != 1) { x = (x & 1) ? 3 * x + 1 : x / 2; top = max(top, x); ++s; }
    } else {
        s = -1;
    }
    steps[i] = s;
    peak[i] = top;
}
__kernel void newton(__global const double* v, __global double* r, __global int* its) {
    int i = get_global_id(0);
    double a = v[i], x = a > 1.0 ? a : 1.0;
    int it = 0;
    while (fabs(x * x - a) > 1e-12 * a && it < 100) { x = 0.5 * (x + a / x); ++it; }
    r[i] = x;
    its[i] = it;
}
__kernel void after_barrier(__global const float* in, __global float* out, __local float* tile) {
    int l = get_local_id(0), g = get_global_id(0);
    tile[l] = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    float acc = 0.0f;
    for (int k = 0; k <= l % 7; ++k)
        acc += tile[(l + k) % get_local_size(0)] * (float)(k + 1);
    out[g] = acc;
}
__kernel void two_loops(__global const int* n, __global int* out) {
    int i = get_global_id(0), s = 0;
    for (int k = 0; k < n[i]; ++k) s += n[k];
    for (int k = 0; k < n[i] / 2; ++k) s ^= n[2 * k];
    out[i] = s;
}
)CL";

struct ShapeResults {
    std::vector<int> find, steps, its, two;
    std::vector<int64_t> peak;
    std::vector<double> root;
    std::vector<float> tiles;
    bool operator==(const ShapeResults& o) const {
        return find == o.find && steps == o.steps && its == o.its && two == o.two &&
               peak == o.peak && root == o.root && tiles == o.tiles;
    }
};

ShapeResults runShapes(const Built& b, size_t local) {
    ShapeResults r;
    const size_t n = 77;
    std::vector<int> a(n * 64), len(n);
    for (size_t i = 0; i < n; ++i) {
        len[i] = int((i * 13) % 65);
        for (size_t k = 0; k < 64; ++k)
            a[i * 64 + k] = int((i * 7 + k * 3) % 50);
    }
    int key = 42;
    r.find.assign(n, 7777);
    PtrArgs p{a.data(), len.data(), r.find.data()};
    runNDRange(b.fn("find"), {p.at(0), p.at(1), &key, p.at(2)}, 1, {n, 1, 1}, {local, 1, 1});
    r.steps.assign(n, 7777);
    r.peak.assign(n, 7777);
    int base = 1;
    PtrArgs q{r.steps.data(), r.peak.data()};
    runNDRange(b.fn("collatz"), {q.at(0), q.at(1), &base}, 1, {n, 1, 1}, {local, 1, 1});
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = i == 40 ? 1e30 : double(i) * 0.75;
    r.root.assign(n, -1.0);
    r.its.assign(n, 7777);
    PtrArgs s{v.data(), r.root.data(), r.its.data()};
    runNDRange(b.fn("newton"), {s.at(0), s.at(1), s.at(2)}, 1, {n, 1, 1}, {local, 1, 1});
    std::vector<float> in(n * 2);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i % 11) - 3.0f;
    r.tiles.assign(in.size(), -1.0f);
    std::vector<float> tile(local);
    PtrArgs t{in.data(), r.tiles.data(), tile.data()};
    // Whole groups: a barrier needs every work-item of a group.
    const size_t whole = in.size() / local * local;
    runNDRange(b.fn("after_barrier"), {t.at(0), t.at(1), t.at(2)}, 1, {whole, 1, 1}, {local, 1, 1});
    r.two.assign(n, 7777);
    PtrArgs w{len.data(), r.two.data()};
    runNDRange(b.fn("two_loops"), {w.at(0), w.at(1)}, 1, {n, 1, 1}, {local, 1, 1});
    // The host's answers for two of them.
    for (size_t i = 0; i < n; ++i) {
        int at = -1, k = 0;
        for (k = 0; k < len[i]; ++k)
            if (a[i * 64 + size_t(k)] == key) {
                at = k;
                break;
            }
        REQUIRE(r.find[i] == (at >= 0 ? at * 1000 + k : -k));
        int64_t x = int64_t(i) + 1, top = x;
        int steps = 0;
        while (i % 3 == 0 && x != 1) {
            x = (x & 1) ? 3 * x + 1 : x / 2;
            top = std::max(top, x);
            ++steps;
        }
        REQUIRE(r.steps[i] == (i % 3 == 0 ? steps : -1));
        REQUIRE(r.peak[i] == top);
    }
    return r;
}

} // namespace

TEST_CASE("linearised loops: breaks, branches after, doubles, barriers, two loops in sequence",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_divshapes_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    ::setenv("DUET_CPU_DIVERGENT_LOOPS", "all", 1);
    Built lin = build(kDivergentShapes, "-cl-std=CL3.0 -save-temps=" + (dir / "t").string());
    // Each kernel's code is made at its first fn(), under the setting of that moment.
    for (const char* k : {"find", "collatz", "newton", "after_barrier", "two_loops"})
        lin.fn(k);
    ::setenv("DUET_CPU_DIVERGENT_LOOPS", "0", 1);
    Built off = build(kDivergentShapes);
    for (const char* k : {"find", "collatz", "newton", "after_barrier", "two_loops"})
        off.fn(k);
    ::unsetenv("DUET_CPU_DIVERGENT_LOOPS");
    fs::remove_all(dir);
    INFO(lin.log);
    for (const char* k : {"find", "collatz", "newton", "after_barrier"})
        CHECK(std::regex_search(
            lin.log, std::regex(std::string("kernel ") + k + ": [^\\n]*: inner loop linearised")));
    // Doubles: 8 lanes where floats have 16 (half the lanes of the function's vectors).
    if (__builtin_cpu_supports("avx2"))
        CHECK(std::regex_search(lin.log, std::regex("kernel newton: [^\\n]*lanes.loop: "
                                                    "vectorised \\(vectorized loop "
                                                    "\\(vectorization width: (4|8),")));
    CHECK(std::regex_search(
        lin.log,
        std::regex("kernel two_loops: [^\\n]*: 2 inner loops linearised, [0-9]+ work-items")));
    for (size_t local : {size_t(32), size_t(20), size_t(7), size_t(3)}) {
        INFO("group size " << local);
        CHECK(runShapes(lin, local) == runShapes(off, local));
    }
}

namespace {

// Several loops of per-work-item trip count in one work-item: one after another, with values
// carried from one to the next, loops skipped by some work-items (the second reached straight
// from the code before the first), an early return between them, a `break`, a do-while, three
// in a row; and loops nested in a loop (SHOC BFS's shape), which stay one work-item at a time.
const char* kDivergentSequences = R"CL(
#pragma OPENCL FP_CONTRACT OFF
__kernel void seq_skip(__global const uint* n, __global uint* out) {
    uint i = get_global_id(0), s = i + 1;
    if (i & 1)
        for (uint k = 0; k < n[i]; ++k)
            s = s * 3u + k;
    if (s % 5u == 0) {
        out[i] = 0xFFFFFFFFu;
        return;
    }
    uint steps = 0;
    while (s > 10u) {
        s = s / 2u + (s & 1u);
        ++steps;
    }
    out[i] = s * 1000u + steps;
}
__kernel void seq_three(__global const float* v, __global float* out, __global int* its) {
    int i = get_global_id(0);
    float x = v[i];
    int a = 0, b = 0, c = 0;
    while (x > 1.0f && a < 50) { x = x * 0.5f + 0.1f; ++a; }
    for (b = 0; b < i % 9; ++b) {
        if (x > 0.9f)
            break;
        x = x * 1.5f;
    }
    float y = x;
    do { y = y * y + 0.01f; ++c; } while (y < 0.8f && c < 40);
    out[i] = x + y;
    its[i] = a * 10000 + b * 100 + c;
}
__kernel void nested(__global const int* n, __global int* out) {
    int i = get_global_id(0), s = 0;
    for (int k = 0; k < n[i]; ++k)
        for (int j = 0; j < k; ++j)
            s += j ^ k;
    out[i] = s;
}
)CL";

struct SequenceResults {
    std::vector<uint32_t> skip;
    std::vector<float> three;
    std::vector<int> its, nested;
    bool operator==(const SequenceResults& o) const {
        return skip == o.skip && three == o.three && its == o.its && nested == o.nested;
    }
};

SequenceResults runSequences(const Built& b, size_t local) {
    SequenceResults r;
    const size_t n = 83;
    std::vector<uint32_t> len(n);
    for (size_t i = 0; i < n; ++i)
        len[i] = uint32_t((i * 29) % 23);
    r.skip.assign(n, 7777);
    PtrArgs p{len.data(), r.skip.data()};
    runNDRange(b.fn("seq_skip"), {p.at(0), p.at(1)}, 1, {n, 1, 1}, {local, 1, 1});
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = float((i * 37) % 101) * 0.7f;
    r.three.assign(n, -1.0f);
    r.its.assign(n, 7777);
    PtrArgs q{v.data(), r.three.data(), r.its.data()};
    runNDRange(b.fn("seq_three"), {q.at(0), q.at(1), q.at(2)}, 1, {n, 1, 1}, {local, 1, 1});
    std::vector<int> small(n);
    for (size_t i = 0; i < n; ++i)
        small[i] = int(i % 13);
    r.nested.assign(n, 7777);
    PtrArgs w{small.data(), r.nested.data()};
    runNDRange(b.fn("nested"), {w.at(0), w.at(1)}, 1, {n, 1, 1}, {local, 1, 1});
    // The host's answers.
    for (size_t i = 0; i < n; ++i) {
        uint32_t s = uint32_t(i) + 1;
        if (i & 1)
            for (uint32_t k = 0; k < len[i]; ++k)
                s = s * 3u + k;
        uint32_t want = 0xFFFFFFFFu;
        if (s % 5u != 0) {
            uint32_t steps = 0;
            for (; s > 10u; ++steps)
                s = s / 2u + (s & 1u);
            want = s * 1000u + steps;
        }
        REQUIRE(r.skip[i] == want);
        float x = v[i];
        int a = 0, b = 0, c = 0;
        for (; x > 1.0f && a < 50; ++a)
            x = x * 0.5f + 0.1f;
        for (b = 0; b < int(i % 9); ++b) {
            if (x > 0.9f)
                break;
            x = x * 1.5f;
        }
        float y = x;
        do {
            y = y * y + 0.01f;
            ++c;
        } while (y < 0.8f && c < 40);
        REQUIRE(r.its[i] == a * 10000 + b * 100 + c);
        REQUIRE(r.three[i] == x + y);
        int t = 0;
        for (int k = 0; k < small[i]; ++k)
            for (int j = 0; j < k; ++j)
                t += j ^ k;
        REQUIRE(r.nested[i] == t);
    }
    return r;
}

} // namespace

TEST_CASE("several loops in sequence in one work-item are linearised, each in its own rounds; "
          "nested ones are not",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_divseq_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    // The default: none of these loops touches memory, so each sequence is linearised.
    // (-save-temps: every kernel compiled at the build, its log lines in Built::log.)
    ::unsetenv("DUET_CPU_DIVERGENT_LOOPS");
    Built lin = build(kDivergentSequences, "-cl-std=CL3.0 -save-temps=" + (dir / "t").string());
    ::setenv("DUET_CPU_DIVERGENT_LOOPS", "0", 1);
    Built off = build(kDivergentSequences, "-cl-std=CL3.0 -save-temps=" + (dir / "off").string());
    for (const char* k : {"seq_skip", "seq_three", "nested"})
        off.fn(k);
    ::unsetenv("DUET_CPU_DIVERGENT_LOOPS");
    fs::remove_all(dir);
    INFO(lin.log);
    CHECK(std::regex_search(lin.log, std::regex("kernel seq_skip: [^\\n]*: 2 inner loops "
                                                "linearised, [0-9]+ work-items a chunk")));
    CHECK(std::regex_search(lin.log, std::regex("kernel seq_three: [^\\n]*: 3 inner loops "
                                                "linearised, [0-9]+ work-items a chunk")));
    CHECK(std::regex_search(lin.log, std::regex("kernel nested: [^\\n]*not linearised: its loop "
                                                "holds a loop of its own")));
    CHECK(!std::regex_search(lin.log, std::regex("kernel nested: [^\\n]*inner loops? linearised")));
    // Every lane loop of the sequences is vector code: one before the loops, then rounds and a
    // lane loop after each loop.
    for (auto [k, loops] : {std::pair<const char*, int>{"seq_skip", 2}, {"seq_three", 3}}) {
        INFO("kernel " << k);
        const std::regex laneLoop(
            std::string("kernel ") + k + ": __duet_wg_" + k +
            "[.a-z0-9]*: work-item loop [^:]*\\.lanes\\.(pre|loop|post)[0-9]*: "
            "vectorised \\(");
        auto first = std::sregex_iterator(lin.log.begin(), lin.log.end(), laneLoop);
        CHECK(std::distance(first, std::sregex_iterator()) >= 1 + 2 * loops);
    }
    // Off: one work-item at a time, as before.
    CHECK(off.log.find("linearised,") == std::string::npos);
    CHECK(std::regex_search(off.log, std::regex("kernel seq_three: [^\\n]*: not vectorised")));
    for (size_t local : {size_t(64), size_t(24), size_t(16), size_t(5)}) {
        INFO("group size " << local);
        CHECK(runSequences(lin, local) == runSequences(off, local));
    }
}

// Issue 15: gathers and scatters whose lanes turn out consecutive when the kernel runs become
// vector loads and stores behind a test of the addresses (devices/cpu/jit/work_item_loops.hpp,
// ConsecutiveGathers): `q[y * w + x]` with int indices (which may wrap, so the vectoriser
// cannot prove it consecutive), a clamped neighbour, a struct's fields, indices read from
// memory. Each kernel runs with consecutive, shifted, reversed and random indices and partial
// groups; its results must be those of the build without the rewrite, bit for bit, and the
// host's.
namespace {

const char* kGathers = R"CL(
typedef struct { float a; float b; float c; int tag; } rec;
__kernel void stencil(__global const float4* q, __global float4* out, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    int xl = x > 0 ? x - 1 : x;
    int xr = x < w - 1 ? x + 1 : x;
    float4 c = q[y * w + x];
    float4 l = q[y * w + xl];
    float4 r = q[y * w + xr];
    out[y * w + x] = (l + r) * 0.25f + (float4)(c.w, c.z, c.y, c.x);
}
__kernel void through(__global const float* in, __global float* out, __global const int* idx,
                      int n) {
    int i = get_global_id(0);
    if (i < n)
        out[idx[i]] = in[idx[i]] * 2.0f + 1.0f;
}
__kernel void fields(__global const rec* r, __global float2* out, int n) {
    int i = get_global_id(0);
    if (i < n)
        out[i] = (float2)(r[i].a - r[i].c, (float)r[i].tag);
}
__kernel void swap2(__global double2* p, __global const int* idx) {
    int i = idx[get_global_id(0)];
    double2 v = p[i];
    p[i] = (double2)(v.y, v.x + 1.0);
}
)CL";

Built buildGathers(const std::string& cpu, const char* rewrite, const std::string& prefix) {
    ScopedEnv env("DUET_CPU_CONSECUTIVE_GATHERS", rewrite);
    ScopedEnv width("DUET_CPU_VECTOR_WIDTH", cpu.empty() ? "" : "512");
    if (cpu.empty())
        ::unsetenv("DUET_CPU_VECTOR_WIDTH");
    return buildForCpu(kGathers, cpu, "-cl-std=CL3.0 -save-temps=" + prefix,
                       {"stencil", "through", "fields", "swap2"});
}

/// Index patterns over n elements: consecutive, shifted with a wrap, pairs swapped, reversed,
/// random.
std::vector<std::vector<int>> indexPatterns(int n) {
    std::vector<std::vector<int>> all(5, std::vector<int>(size_t(n)));
    std::mt19937 rng(7);
    for (int i = 0; i < n; ++i) {
        all[0][size_t(i)] = i;
        all[1][size_t(i)] = (i + 5) % n;
        all[2][size_t(i)] = (i ^ 1) < n ? (i ^ 1) : i;
        all[3][size_t(i)] = n - 1 - i;
        all[4][size_t(i)] = i;
    }
    std::shuffle(all[4].begin(), all[4].end(), rng);
    return all;
}

} // namespace

TEST_CASE("gathers whose lanes are consecutive at run time: vector loads and stores",
          "[cpu][cpu_codegen]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_gath_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    {
        // The code for a 16-lane AVX-512 host: the float4 loads and the store of `stencil`
        // become 64-float accesses (four registers) with the gathers kept for the other case;
        // `swap2`'s double2 load and store, 16 doubles.
        buildGathers("skylake-avx512", "1", (dir / "on").string());
        const std::string on = readFile(dir / "on_stencil.ll");
        CHECK(std::regex_search(on, std::regex("(masked\\.load\\.v64f32|load <64 x float>)")));
        CHECK(std::regex_search(on, std::regex("(masked\\.store\\.v64f32|store <64 x float>)")));
        CHECK(on.find("@llvm.masked.gather.v16f32") != std::string::npos);
        const std::string swap = readFile(dir / "on_swap2.ll");
        CHECK(std::regex_search(swap, std::regex("(masked\\.load\\.v16f64|load <16 x double>)")));
        CHECK(std::regex_search(swap, std::regex("(masked\\.store\\.v16f64|store <16 x double>)")));
        buildGathers("skylake-avx512", "0", (dir / "off").string());
        const std::string off = readFile(dir / "off_stencil.ll");
        CHECK(off.find("@llvm.masked.gather.v16f32") != std::string::npos);
        CHECK(off.find("v64f32") == std::string::npos);
        CHECK(off.find("<64 x float>") == std::string::npos);
    }

    // Both builds for this host, run over the same inputs.
    Built on = buildGathers("", "1", (dir / "hon").string());
    Built off = buildGathers("", "0", (dir / "hoff").string());
    const float sentinel = -12345.0f;
    for (auto [w, h] : {std::pair<int, int>{37, 9}, {64, 4}, {1, 3}, {16, 16}}) {
        std::vector<float> q(size_t(w * h * 4));
        for (size_t i = 0; i < q.size(); ++i)
            q[i] = float(i % 113) * 0.25f - 7.0f;
        std::array<std::vector<float>, 2> outs;
        for (int v = 0; v < 2; ++v) {
            outs[size_t(v)].assign(q.size() + 64, sentinel);
            PtrArgs p{q.data(), outs[size_t(v)].data()};
            const size_t gw = size_t((w + 15) / 16 * 16), gh = size_t((h + 15) / 16 * 16);
            runNDRange((v ? on : off).fn("stencil"), {p.at(0), p.at(1), &w, &h}, 2, {gw, gh, 1},
                       {16, 16, 1});
        }
        INFO("w " << w << " h " << h);
        CHECK(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(float)) == 0);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const int xl = x > 0 ? x - 1 : x, xr = x < w - 1 ? x + 1 : x;
                for (int c = 0; c < 4; ++c) {
                    const float want =
                        (q[size_t((y * w + xl) * 4 + c)] + q[size_t((y * w + xr) * 4 + c)]) *
                            0.25f +
                        q[size_t((y * w + x) * 4 + 3 - c)];
                    CHECK(outs[1][size_t((y * w + x) * 4 + c)] == Approx(want).margin(1e-5));
                }
            }
        for (size_t i = q.size(); i < outs[1].size(); ++i)
            CHECK(outs[1][i] == sentinel); // lanes past the edge store nothing
    }

    for (int n : {1000, 64, 13}) {
        std::vector<float> in(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i)
            in[size_t(i)] = float(i) * 0.5f - 3.0f;
        for (const std::vector<int>& idx : indexPatterns(n)) {
            std::array<std::vector<float>, 2> outs;
            for (int v = 0; v < 2; ++v) {
                outs[size_t(v)].assign(size_t(n) + 64, sentinel);
                PtrArgs p{in.data(), outs[size_t(v)].data(), const_cast<int*>(idx.data())};
                runNDRange((v ? on : off).fn("through"), {p.at(0), p.at(1), p.at(2), &n}, 1,
                           {size_t((n + 63) / 64 * 64), 1, 1}, {64, 1, 1});
            }
            INFO("n " << n << " idx[0..2] " << idx[0] << "," << idx[1 % n] << "," << idx[2 % n]);
            CHECK(outs[0] == outs[1]);
            for (int i = 0; i < n; ++i)
                CHECK(outs[1][size_t(idx[size_t(i)])] == in[size_t(idx[size_t(i)])] * 2.0f + 1.0f);
            for (size_t i = size_t(n); i < outs[1].size(); ++i)
                CHECK(outs[1][i] == sentinel);

            // double2 loads and stores of one buffer through the same indices.
            std::array<std::vector<double>, 2> p2;
            for (int v = 0; v < 2; ++v) {
                p2[size_t(v)].resize(size_t(n) * 2);
                for (size_t i = 0; i < p2[size_t(v)].size(); ++i)
                    p2[size_t(v)][i] = double(i) * 1.5;
                PtrArgs p{p2[size_t(v)].data(), const_cast<int*>(idx.data())};
                runNDRange((v ? on : off).fn("swap2"), {p.at(0), p.at(1)}, 1, {size_t(n), 1, 1},
                           {size_t(n) % 8 == 0 ? 8u : 1u, 1, 1});
            }
            CHECK(p2[0] == p2[1]);
            for (int i = 0; i < n; ++i) {
                CHECK(p2[1][size_t(i) * 2] == double(i * 2 + 1) * 1.5);
                CHECK(p2[1][size_t(i) * 2 + 1] == double(i * 2) * 1.5 + 1.0);
            }
        }
        // A struct's fields: two floats 8 bytes apart and an int, 16 bytes a record.
        struct Rec {
            float a, b, c;
            int tag;
        };
        std::vector<Rec> r(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i)
            r[size_t(i)] = {float(i) * 3.0f, -1.0f, float(i % 7), i * 5 - 100};
        std::array<std::vector<float>, 2> outs;
        for (int v = 0; v < 2; ++v) {
            outs[size_t(v)].assign(size_t(n) * 2 + 64, sentinel);
            PtrArgs p{r.data(), outs[size_t(v)].data()};
            runNDRange((v ? on : off).fn("fields"), {p.at(0), p.at(1), &n}, 1,
                       {size_t((n + 31) / 32 * 32), 1, 1}, {32, 1, 1});
        }
        CHECK(outs[0] == outs[1]);
        for (int i = 0; i < n; ++i) {
            CHECK(outs[1][size_t(i) * 2] == float(i) * 3.0f - float(i % 7));
            CHECK(outs[1][size_t(i) * 2 + 1] == float(i * 5 - 100));
        }
        for (size_t i = size_t(n) * 2; i < outs[1].size(); ++i)
            CHECK(outs[1][i] == sentinel);
    }
    fs::remove_all(dir);
}

// A compare-exchange retry loop gets a yield point (it may wait for another sub-group), so its
// kernel's regions are resumable and the values the loop carries live in per-work-item storage
// across the yield. They reach that storage only on the way to the yield point (`spin.leave`),
// once every kSpinYieldEvery iterations, not at each iteration where they are defined; and
// `expected`, whose address the builtin takes, is a value by then, not a per-work-item variable
// in memory. Each work-item claims one ticket: the tickets are 0..n-1 once each.
TEST_CASE("a spin loop's values reach memory on the way to its yield point only",
          "[cpu][cpu_codegen]") {
    const std::string src = R"CL(
__kernel void claim(volatile __global atomic_int* counter, __global int* got) {
    int expected = atomic_load(counter);
    int tries = 0;
    while (!atomic_compare_exchange_strong(counter, &expected, expected + 1))
        ++tries;
    got[get_global_id(0)] = expected + (tries > 1000000 ? 1 : 0);
}
)CL";
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet_cg_spin_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prefix = (dir / "t").string();
    Built b = build(src, "-cl-std=CL3.0 -save-temps=" + prefix);
    INFO(b.log);
    const std::string ir = readFile(prefix + "_claim.ll");
    REQUIRE_FALSE(ir.empty());
    // Private stores (no address space: per-work-item storage, the dispatcher's state) by block.
    const std::regex label(R"(^([A-Za-z0-9._]+):)");
    const std::regex privateStore(R"(^\s+store [^,]+, ptr %)");
    std::string block = "entry";
    size_t onLeave = 0;
    std::istringstream lines(functionText(ir, "__duet_wg_claim"));
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_search(line, m, label)) {
            block = m[1];
            continue;
        }
        if (!std::regex_search(line, privateStore))
            continue;
        INFO(block << ": " << line);
        const bool leave = block.rfind("spin.leave", 0) == 0;
        onLeave += leave ? 1 : 0;
        // The loop nests' and the dispatcher's bookkeeping may store; the loop's body may not.
        CHECK((leave || block.rfind("wi.", 0) == 0 || block.rfind("round.", 0) == 0 ||
               block.rfind("vector.", 0) == 0 || block == "entry"));
    }
    CHECK(onLeave >= 2); // the ticket and the try count, at least
    CHECK(ir.find("expected.addr") == std::string::npos);

    const size_t n = 64 * 5;
    std::vector<int> counter(1, 0), got(n, -1);
    PtrArgs p{counter.data(), got.data()};
    runNDRange(b.fn("claim"), {p.at(0), p.at(1)}, 1, {n, 1, 1}, {64, 1, 1});
    CHECK(counter[0] == int(n));
    std::sort(got.begin(), got.end());
    for (size_t i = 0; i < n; ++i)
        CHECK(got[i] == int(i));
    fs::remove_all(dir);
}
