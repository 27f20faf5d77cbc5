// Runs the NVIDIA code generator's PTX on a real GPU through the CUDA driver API, laid out by
// the kernel ABI exactly as the launcher will (launch_plan.hpp), and checks the results against
// the host: the test programs of kernels.hpp, written as PTX by nvidia_codegen_test
// (DUET_TEST_PTX_DIR). No LLVM and no Duet runtime: it links only the driver loader, the PTX
// header reader, the launch planner and core's printf decoder, so it runs on a GPU host that has
// none of Duet's build dependencies. Exits 77 (skipped) without a driver or a GPU.
//
//   nvidia_gpu_abi_run <ptx-dir> [sm_90]
#include "core/printf_buffer.hpp"
#include "devices/nvidia/codegen/ptx_module.hpp"
#include "devices/nvidia/cuda_driver.hpp"
#include "devices/nvidia/launch_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <vector>

using namespace duet::nvidia;

namespace {

const CudaDriver* cuda = nullptr;
int failures = 0, checks = 0;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        ++checks;                                                                                  \
        if (!(cond)) {                                                                             \
            ++failures;                                                                            \
            std::printf("  FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                          \
            std::printf(__VA_ARGS__);                                                              \
            std::printf("\n");                                                                     \
        }                                                                                          \
    } while (0)

bool ok(cu::Result r, const char* what) {
    if (r == cu::kSuccess)
        return true;
    ++failures;
    std::printf("  FAIL %s: %s\n", what, cuda->errorText(r).c_str());
    return false;
}

struct Buffer {
    cu::DevicePtr p = 0;
    size_t bytes = 0;
    Buffer() = default;
    explicit Buffer(size_t n) : bytes(n) { ok(cuda->memAlloc(&p, n), "cuMemAlloc"); }
    template <class T> explicit Buffer(const std::vector<T>& v) : Buffer(v.size() * sizeof(T)) {
        ok(cuda->memcpyHtoD(p, v.data(), bytes), "cuMemcpyHtoD");
    }
    Buffer(const Buffer&) = delete;
    ~Buffer() {
        if (p)
            cuda->memFree(p);
    }
    template <class T> std::vector<T> read() const {
        std::vector<T> v(bytes / sizeof(T));
        ok(cuda->memcpyDtoH(v.data(), p, bytes), "cuMemcpyDtoH");
        return v;
    }
};

/// One kernel argument as clSetKernelArg would get it.
struct Arg {
    std::vector<unsigned char> bytes;
    size_t localBytes = 0; ///< a __local argument's size
    bool local = false;
};
template <class T> Arg val(const T& v) {
    Arg a;
    a.bytes.resize(sizeof v);
    std::memcpy(a.bytes.data(), &v, sizeof v);
    return a;
}
Arg buf(const Buffer& b) {
    return val(b.p);
}
Arg loc(size_t bytes) {
    Arg a;
    a.local = true;
    a.localBytes = bytes;
    return a;
}

struct Module {
    cu::Module handle = nullptr;
    PtxModule info;
    std::string name;
    ~Module() {
        if (handle)
            cuda->moduleUnload(handle);
    }
};

std::unique_ptr<Module> load(const std::string& dir, const std::string& program,
                             const std::string& sm) {
    auto m = std::make_unique<Module>();
    m->name = program;
    std::ifstream in(dir + "/" + program + "." + sm + ".ptx");
    std::stringstream text;
    text << in.rdbuf();
    const std::string ptx = text.str();
    if (ptx.empty()) {
        ++failures;
        std::printf("  FAIL: no PTX for %s in %s\n", program.c_str(), dir.c_str());
        return nullptr;
    }
    ReadPtxResult read = readPtxModule(ptx);
    if (!read.error.empty()) {
        ++failures;
        std::printf("  FAIL: %s: %s\n", program.c_str(), read.error.c_str());
        return nullptr;
    }
    m->info = read.module;
    char log[8192] = {}, info[8192] = {};
    cu::JitOption options[] = {cu::kJitErrorLogBuffer, cu::kJitErrorLogBufferSizeBytes,
                               cu::kJitInfoLogBuffer, cu::kJitInfoLogBufferSizeBytes};
    void* values[] = {log, reinterpret_cast<void*>(sizeof log - 1), info,
                      reinterpret_cast<void*>(sizeof info - 1)};
    cu::Result r = cuda->moduleLoadDataEx(&m->handle, ptx.c_str(), 4, options, values);
    if (r != cu::kSuccess) {
        ++failures;
        std::printf("  FAIL cuModuleLoadDataEx(%s): %s\n%s\n", program.c_str(),
                    cuda->errorText(r).c_str(), log);
        m->handle = nullptr;
        return nullptr;
    }
    return m;
}

/// Runs `kernel` over an NDRange as the launcher will. Returns false (and counts a failure) when
/// it could not.
bool run(Module& m, const std::string& kernel, unsigned dims, std::vector<size_t> offset,
         std::vector<size_t> global, std::vector<size_t> local, std::vector<Arg> args,
         uint64_t printfBuffer = 0) {
    auto e = std::find_if(m.info.kernels.begin(), m.info.kernels.end(),
                          [&](const KernelEntry& k) { return k.name == kernel; });
    if (e == m.info.kernels.end() || e->params != args.size() + 1) {
        ++failures;
        std::printf("  FAIL: kernel %s: not in the module or not %zu arguments\n", kernel.c_str(),
                    args.size());
        return false;
    }
    std::vector<size_t> localBytes;
    for (uint32_t i : e->localArgs) {
        if (!args[i].local) {
            ++failures;
            std::printf("  FAIL: kernel %s: argument %u should be __local\n", kernel.c_str(), i);
            return false;
        }
        localBytes.push_back(args[i].localBytes);
    }
    LaunchPlan plan =
        planLaunch(dims, offset, global, local, {e->localVariableBytes, localBytes}, printfBuffer);
    if (!plan.error.empty()) {
        ++failures;
        std::printf("  FAIL: plan for %s: %s\n", kernel.c_str(), plan.error.c_str());
        return false;
    }
    cu::Function f = nullptr;
    if (!ok(cuda->moduleGetFunction(&f, m.handle, kernel.c_str()), "cuModuleGetFunction"))
        return false;
    // As the launcher: above what the function allows now (48 KiB less its static shared
    // memory), opt in.
    int allowed = 0;
    if (!ok(cuda->funcGetAttribute(&allowed, cu::kFuncMaxDynamicSharedSizeBytes, f),
            "cuFuncGetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"))
        return false;
    if (plan.dynamicSharedBytes > uint32_t(allowed) &&
        !ok(cuda->funcSetAttribute(f, cu::kFuncMaxDynamicSharedSizeBytes,
                                   int(plan.dynamicSharedBytes)),
            "cuFuncSetAttribute"))
        return false;
    for (Grid& g : plan.grids) {
        std::vector<void*> params;
        size_t k = 0;
        for (size_t i = 0; i < args.size(); ++i)
            params.push_back(args[i].local ? static_cast<void*>(&plan.localOffsets[k++])
                                           : static_cast<void*>(args[i].bytes.data()));
        params.push_back(&g.launch);
        if (!ok(cuda->launchKernel(f, g.blocks[0], g.blocks[1], g.blocks[2], g.threads[0],
                                   g.threads[1], g.threads[2], plan.dynamicSharedBytes, nullptr,
                                   params.data(), nullptr),
                ("cuLaunchKernel " + kernel).c_str()))
            return false;
    }
    return ok(cuda->ctxSynchronize(), ("cuCtxSynchronize after " + kernel).c_str());
}

bool near(double got, double want, double rel, double abs = 0) {
    return std::fabs(got - want) <= std::max(abs, rel * std::fabs(want));
}

// ---- the checks ------------------------------------------------------------------------

void checkTriad(Module& m) {
    const size_t n = 1 << 20;
    std::vector<double> b(n), c(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = double(i), c[i] = 0.5 * double(i);
    Buffer db(b), dc(c), da(n * sizeof(double));
    if (run(m, "triad", 1, {0}, {n}, {256}, {buf(db), buf(dc), buf(da), val(3.0)})) {
        auto a = da.read<double>();
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i)
            bad += a[i] != b[i] + 3.0 * c[i];
        EXPECT(bad == 0, "triad: %zu wrong of %zu", bad, n);
    }
    std::vector<float> f4(4 * 1000, 1.0f);
    Buffer fb(f4), fc(f4), fa(f4.size() * sizeof(float));
    // 1000 work-items in groups of 128: a partial last group of 104.
    if (run(m, "triad_f4", 1, {0}, {1000}, {128}, {buf(fb), buf(fc), buf(fa), val(2.0f)})) {
        auto a = fa.read<float>();
        EXPECT(std::all_of(a.begin(), a.end(), [](float v) { return v == 3.0f; }),
               "triad_f4 (non-uniform)");
    }
}

void checkNbody(Module& m) {
    // 4000 bodies in groups of 256: the last group is partial (160), the tile loop follows it.
    const unsigned n = 4000;
    std::vector<float> pos(4 * n), vel(4 * n, 0.0f);
    for (unsigned i = 0; i < n; ++i) {
        pos[4 * i + 0] = std::sin(0.1f * float(i)) * 10.0f;
        pos[4 * i + 1] = std::cos(0.37f * float(i)) * 10.0f;
        pos[4 * i + 2] = float(i % 17) - 8.0f;
        pos[4 * i + 3] = 1.0f + float(i % 5) * 0.25f;
    }
    Buffer dp(pos), dv(vel), dout(pos.size() * sizeof(float));
    const float dt = 0.01f, eps2 = 0.05f;
    if (!run(m, "nbody", 1, {0}, {n}, {256},
             {buf(dp), buf(dv), buf(dout), loc(256 * 16), val(dt), val(eps2), val(n)}))
        return;
    auto v = dv.read<float>();
    double worst = 0;
    for (unsigned i = 0; i < n; i += 7) {
        double a[3] = {0, 0, 0};
        for (unsigned j = 0; j < n; ++j) {
            double d[3];
            for (int k = 0; k < 3; ++k)
                d[k] = double(pos[4 * j + k]) - double(pos[4 * i + k]);
            double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
            double inv = 1.0 / std::sqrt(r2);
            for (int k = 0; k < 3; ++k)
                a[k] += d[k] * pos[4 * j + 3] * inv * inv * inv;
        }
        for (int k = 0; k < 3; ++k)
            worst = std::max(worst, std::fabs(v[4 * i + k] - a[k] * dt) /
                                        std::max(1e-3, std::fabs(a[k] * dt)));
    }
    EXPECT(worst < 2e-3, "nbody velocity relative error %g", worst);
}

void checkReduce(Module& m) {
    // reduce_static (reqd_work_group_size 256, static __local): 3 full groups and a partial
    // one of 64, as a non-uniform NDRange runs it (.maxntid accepts the smaller block).
    const unsigned n = 256 * 3 + 64;
    std::vector<float> in(n, 1.0f);
    Buffer din(in), dout(4 * sizeof(float));
    if (run(m, "reduce_static", 1, {0}, {n}, {256}, {buf(din), buf(dout), val(n)})) {
        auto out = dout.read<float>();
        EXPECT(out[0] == 256 && out[2] == 256 && out[3] == 64, "reduce_static: %g %g %g %g", out[0],
               out[1], out[2], out[3]);
    }
    // reduce_arg: two __local arguments (long[128] then int[128]), a 2D range of 8x3 groups.
    std::vector<int> ints(1024 * 3);
    for (size_t i = 0; i < ints.size(); ++i)
        ints[i] = int(i % 7);
    Buffer di(ints), dl(24 * sizeof(int64_t));
    if (run(m, "reduce_arg", 2, {0, 0}, {1024, 3}, {128, 1},
            {buf(di), buf(dl), loc(128 * 8), loc(128 * 4)})) {
        auto out = dl.read<int64_t>();
        // Work-item (x, y) reads in[get_global_id(0)]: every row reads the same 1024 values.
        size_t bad = 0;
        for (unsigned gy = 0; gy < 3; ++gy)
            for (unsigned gx = 0; gx < 8; ++gx) {
                int64_t want = 0;
                for (unsigned i = 0; i < 128; ++i)
                    want += ints[gx * 128 + i];
                bad += out[gx + 8 * gy] != want;
            }
        EXPECT(bad == 0, "reduce_arg: %zu wrong group sums", bad);
    }
}

void checkLocalVariables(Module& m) {
    // big_locals: 64 KiB + 3 + a double16 of __local variables (65792 bytes), then the
    // __local argument: 65792 + 1 KiB of dynamic shared memory, so the launch opts in.
    const unsigned n = 256, groups = 2;
    Buffer dout(n * groups * sizeof(float));
    if (run(m, "big_locals", 1, {0}, {n * groups}, {n}, {buf(dout), loc(n * sizeof(float))})) {
        auto out = dout.read<float>();
        size_t bad = 0;
        for (unsigned g = 0; g < n * groups; ++g) {
            const unsigned l = g % n;
            double want = 0;
            for (unsigned i = l; i < 16384; i += n)
                want += 16383.0 - i;
            want += 2.0 * (n - 1 - l) + 6.0 + n;
            bad += out[g] != float(want);
        }
        EXPECT(bad == 0, "big_locals: %zu wrong of %u (out[0] = %g)", bad, n * groups, out[0]);
    }
    // stage's __local array at offset 0 on its own, at 128 and 64 in the kernels that call it
    // after using __local variables of their own.
    const struct {
        const char* kernel;
        int extra;
    } stages[] = {{"stage", 0}, {"stage_after_floats", 1}, {"stage_after_doubles", 2}};
    for (const auto& st : stages) {
        Buffer d(128 * sizeof(int));
        if (!run(m, st.kernel, 1, {0}, {128}, {64}, {buf(d)}))
            continue;
        auto out = d.read<int>();
        size_t bad = 0;
        for (unsigned g = 0; g < 128; ++g)
            bad += out[g] != 3 * int(63 - g % 64) + 15 + st.extra;
        EXPECT(bad == 0, "%s: %zu wrong (out[0] = %d)", st.kernel, bad, out[0]);
    }
}

void checkAtomics(Module& m) {
    const unsigned n = 1 << 16;
    std::vector<unsigned char> data(n);
    std::vector<uint32_t> want(256, 0);
    for (unsigned i = 0; i < n; ++i) {
        data[i] = (unsigned char)((i * 31 + 7) & 255);
        ++want[data[i]];
    }
    Buffer dd(data), db(std::vector<uint32_t>(256, 0));
    if (run(m, "histogram", 1, {0}, {4096}, {256}, {buf(dd), buf(db), loc(256 * 4), val(n)}))
        EXPECT(db.read<uint32_t>() == want, "histogram bins");

    Buffer p(std::vector<int32_t>(5, 0)), u(std::vector<uint32_t>{0xff, 0, 0, 9, 100}),
        f(std::vector<float>{0.0f});
    if (run(m, "atomics32", 1, {0}, {64}, {64}, {buf(p), buf(u), buf(f)})) {
        auto pv = p.read<int32_t>();
        auto uv = u.read<uint32_t>();
        EXPECT((pv == std::vector<int32_t>{64, -128, 3, -4, 5}), "atomics32 p %d %d %d %d %d",
               pv[0], pv[1], pv[2], pv[3], pv[4]);
        EXPECT((uv == std::vector<uint32_t>{6, 7, 0, 10, 36}), "atomics32 u %u %u %u %u %u", uv[0],
               uv[1], uv[2], uv[3], uv[4]);
        EXPECT(f.read<float>()[0] == 1.5f, "atomics32 float xchg");
    }
    Buffer p64(std::vector<int64_t>(5, 0)), u64(std::vector<uint64_t>{0xff, 0, 0, 9, 0, 100, 0});
    if (run(m, "atomics64", 1, {0}, {64}, {64}, {buf(p64), buf(u64), loc(8)})) {
        auto pv = p64.read<int64_t>();
        auto uv = u64.read<uint64_t>();
        EXPECT((pv == std::vector<int64_t>{64, -128, 3, -4, 5}), "atomics64 p");
        EXPECT((uv == std::vector<uint64_t>{6, 7, 0, 10, 64, 36, 2016}),
               "atomics64 u %llu %llu %llu %llu %llu %llu %llu", (unsigned long long)uv[0],
               (unsigned long long)uv[1], (unsigned long long)uv[2], (unsigned long long)uv[3],
               (unsigned long long)uv[4], (unsigned long long)uv[5], (unsigned long long)uv[6]);
    }
}

void checkC11(Module& m) {
    Buffer counter(std::vector<int32_t>{0, 0, 0}), wide(std::vector<int64_t>{-1}),
        out(256 * sizeof(int32_t));
    if (!run(m, "c11", 1, {0}, {256}, {64}, {buf(counter), buf(wide), buf(out), loc(4)}))
        return;
    auto c = counter.read<int32_t>();
    auto w = wide.read<int64_t>();
    EXPECT(c[0] == 512, "c11: counter %d, want 512", c[0]);
    EXPECT(c[2] == 1, "c11: compare-exchange succeeded %d times, want 1", c[2]);
    EXPECT(w[0] >= 255 && w[0] <= 511, "c11: max %lld", (long long)w[0]);
}

void checkMath(Module& m) {
    const size_t n = 256;
    std::vector<float> x(n);
    std::vector<double> xd(n);
    for (size_t i = 0; i < n; ++i)
        x[i] = 0.1f + 0.9f * float(i) / float(n), xd[i] = 0.1 + 0.9 * double(i) / double(n);
    Buffer dx(x), dv(std::vector<float>(4 * n, 0.5f));
    if (run(m, "math_f", 1, {0}, {n}, {64}, {buf(dx), buf(dv)})) {
        auto got = dx.read<float>();
        double worst = 0;
        for (size_t i = 0; i < n; ++i) {
            const double a = x[i];
            const double want =
                std::sin(a) + std::cos(a) + std::tan(a) + std::exp(a) + std::log(a + 2) +
                std::pow(a, 1.5) + std::sqrt(a) + 1 / std::sqrt(a + 1) + std::atan2(a, 2.0) +
                std::erf(a) + std::tgamma(a + 1) + (a * a + a) + std::sin(a) + std::cos(a) +
                std::exp(a) + std::log(a + 3) + std::exp2(a) + std::log2(a + 1) +
                std::pow(10.0, a) + std::log10(a + 1) + std::tan(a) + std::sin(a) + std::exp(a) +
                std::pow(a + 1, 0.5) + a / 3 + 1 / (a + 1) + std::sqrt(a) + std::cbrt(a) +
                std::hypot(a, 1.0) + std::fmod(a, 0.3f) + std::remainder(a, 0.7f) + a * 8 +
                std::logb(a + 1);
            worst = std::max(worst, std::fabs(got[i] - want) / std::fabs(want));
        }
        EXPECT(worst < 1e-4, "math_f relative error %g", worst);
    }
    Buffer ddx(xd), ddv(std::vector<double>(2 * n, 0.25));
    if (run(m, "math_d", 1, {0}, {n}, {64}, {buf(ddx), buf(ddv)})) {
        auto got = ddx.read<double>();
        auto gv = ddv.read<double>();
        double worst = 0;
        for (size_t i = 0; i < n; ++i) {
            const double a = xd[i];
            const double want = std::sin(a) + std::cos(a) + std::exp(a) + std::log(a + 2) +
                                std::pow(a, 2.5) + std::sqrt(a) + 1 / std::sqrt(a + 1) +
                                std::tgamma(a + 1) + std::erfc(a) +
                                std::sin(3.14159265358979323846 * a) + std::atan(a) +
                                std::fma(a, a, 1.0) + std::cbrt(a) + std::fmod(a, 0.3) +
                                std::lgamma(a + 1) + std::expm1(a) + std::log1p(a);
            worst = std::max(worst, std::fabs(got[i] - want) / std::fabs(want));
        }
        EXPECT(worst < 1e-13, "math_d relative error %g", worst);
        const double w = 0.25, wantV = std::sin(w) + std::exp(w) + std::floor(w) + 2 * w * w;
        EXPECT(near(gv[0], wantV, 1e-14) && near(gv[2 * n - 1], wantV, 1e-14),
               "math_d vector %g, want %g", gv[0], wantV);
    }
    std::vector<int32_t> xi(n);
    std::vector<uint32_t> y(4 * n);
    std::vector<int64_t> z(n);
    for (size_t i = 0; i < n; ++i) {
        xi[i] = int32_t(i * 3 + 1);
        z[i] = int64_t(i * 5 + 3);
        for (int k = 0; k < 4; ++k)
            y[4 * i + k] = uint32_t(i + k);
    }
    Buffer dxi(xi), dy(y), dz(z);
    if (run(m, "integer", 1, {0}, {n}, {64}, {buf(dxi), buf(dy), buf(dz)})) {
        auto gx = dxi.read<int32_t>();
        auto gy = dy.read<uint32_t>();
        auto gz = dz.read<int64_t>();
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) {
            const int32_t v = xi[i];
            const uint32_t u = uint32_t(v);
            const uint32_t want = uint32_t(int32_t((int64_t(v) * 3) >> 32) + 4) + uint32_t(v * 5) +
                                  uint32_t(v * 6 + 7) + uint32_t(__builtin_popcount(u)) +
                                  uint32_t(u ? __builtin_clz(u) : 32) + ((u << 3) | (u >> 29)) +
                                  uint32_t(std::abs(v - 9)) + uint32_t(v + 10) +
                                  uint32_t((int64_t(v) + 11) >> 1);
            bad += uint32_t(gx[i]) != want;
            for (int k = 0; k < 4; ++k) {
                const uint64_t yy = y[4 * i + k];
                const uint32_t wantY = uint32_t(std::min<uint64_t>(yy * 2 + 3, 0xffffffffu)) +
                                       65538u + uint32_t(float(yy) * 1.5f);
                bad += gy[4 * i + k] != wantY;
            }
            const int64_t zz = z[i];
            const int64_t half = int64_t(std::nearbyint(double(zz) * 0.5)); // round to even
            bad += gz[i] != 0 + half + int64_t(__builtin_clzll(uint64_t(zz)));
        }
        EXPECT(bad == 0, "integer: %zu wrong values", bad);
    }
}

/// The printf buffer's records, decoded by the runtime's own decoder (core/printf_buffer.hpp)
/// with the module's formats: the text the NVIDIA device prints.
void checkPrintf(Module& m) {
    const std::vector<float> x{1.25f, -2.5f};
    const char names[] = "alpha";
    Buffer dx(x), dn(std::vector<char>(names, names + sizeof names));
    const uint64_t capacity = 1 << 16;
    std::vector<unsigned char> init(duet::rt::kPrintfHeaderBytes + capacity, 0);
    duet::rt::initPrintfBuffer(init.data(), capacity);
    Buffer pb(init);
    if (!run(m, "hello", 1, {0}, {2}, {2}, {buf(dx), buf(dn)}, pb.p))
        return;
    auto bytes = pb.read<unsigned char>();
    uint64_t used = 0;
    std::memcpy(&used, bytes.data(), 8);
    const std::span<const unsigned char> records(bytes.data() + duet::rt::kPrintfHeaderBytes,
                                                 size_t(std::min(used, capacity)));
    const duet::rt::PrintfOutput out = duet::rt::decodePrintfRecords(records, used, m.info.printf);
    EXPECT(out.error.empty() && out.lostBytes == 0, "printf: %s (%llu bytes lost)",
           out.error.c_str(), (unsigned long long)out.lostBytes);
    EXPECT(out.records == 4, "printf: %llu records of %llu bytes:\n%s",
           (unsigned long long)out.records, (unsigned long long)used, out.text.c_str());
    char pointer[32];
    std::snprintf(pointer, sizeof pointer, "%p", reinterpret_cast<void*>(uintptr_t(dx.p)));
    const std::string tail = ", name alpha, literal ok, pointer " + std::string(pointer) + "\n";
    for (const std::string& line :
         {"work-item 0 of 2: x = 1.250000, as vector 1.250000,1.250000,1.250000,1.250000" + tail,
          "work-item 1 of 2: x = -2.500000, as vector -2.500000,-2.500000,-2.500000,-2.500000" +
              tail})
        EXPECT(out.text.find(line) != std::string::npos, "printf: no line \"%s\" in:\n%s",
               line.c_str(), out.text.c_str());
    size_t short1 = out.text.find("1a2\n"), short2 = std::string::npos;
    if (short1 != std::string::npos)
        short2 = out.text.find("1a2\n", short1 + 1);
    EXPECT(short2 != std::string::npos, "printf: \"%%d%%c%%ld\" twice in:\n%s", out.text.c_str());
}

void checkStructs(Module& m) {
    struct alignas(16) Body {
        float center[4];
        float radius;
        int32_t id;
        double mass;
        char tag[3];
    };
    struct Mixed {
        unsigned char a[2];
        alignas(8) int16_t b[4]; // short3: 8 bytes, 8-aligned
        uint64_t c;
    };
    static_assert(sizeof(Body) == 48 && sizeof(Mixed) == 24);
    Body body{{1, 2, 3, 4}, 2.0f, 7, 3.5, {1, 9, 3}};
    Mixed mixed{{5, 6}, {0, 0, 11, 0}, 13};
    const float v3[4] = {0, 17, 0, 0};
    const double d2[2] = {0, 19};
    signed char c16[16] = {1, 2, 3, 4};
    Buffer out(64 * 16);
    if (!run(m, "structs", 1, {0}, {64}, {64},
             {buf(out), val(body), val(mixed), val(v3), val(d2), val(c16)}))
        return;
    auto o = out.read<float>();
    const float want[4] = {1 * 2 + 7 + 5 + 1, 2 * 2 + 3.5f + 11 + 2, 3 * 2 + 9 + 17 + 3,
                           4 * 2 + 13 + 19 + 4};
    EXPECT(o[0] == want[0] && o[1] == want[1] && o[2] == want[2] && o[3] == want[3] &&
               o[63 * 4 + 3] == want[3],
           "structs: %g %g %g %g", o[0], o[1], o[2], o[3]);
}

void checkIds(Module& m) {
    const size_t off[3] = {5, 7, 11}, global[3] = {13, 6, 3}, local[3] = {4, 4, 2};
    const size_t count = 13 * 6 * 3;
    Buffer out(std::vector<uint64_t>(count * 16, ~0ull));
    if (!run(m, "ids", 3, {off[0], off[1], off[2]}, {global[0], global[1], global[2]},
             {local[0], local[1], local[2]}, {buf(out)}))
        return;
    auto o = out.read<uint64_t>();
    size_t bad = 0;
    for (size_t z = 0; z < global[2]; ++z)
        for (size_t y = 0; y < global[1]; ++y)
            for (size_t x = 0; x < global[0]; ++x) {
                const size_t lin = (z * global[1] + y) * global[0] + x;
                const uint64_t* r = &o[lin * 16];
                const size_t id[3] = {x, y, z};
                size_t lsz[3], lid[3];
                for (int d = 0; d < 3; ++d) {
                    const size_t group = id[d] / local[d];
                    lsz[d] = std::min(local[d], global[d] - group * local[d]);
                    lid[d] = id[d] % local[d];
                }
                const uint64_t want[16] = {x + off[0],
                                           y + off[1],
                                           z + off[2],
                                           off[0],
                                           off[1],
                                           off[2],
                                           lsz[0],
                                           local[0],
                                           (global[0] + local[0] - 1) / local[0],
                                           x / local[0],
                                           3,
                                           (lid[2] * lsz[1] + lid[1]) * lsz[0] + lid[0],
                                           global[0],
                                           lid[1],
                                           1,
                                           1};
                for (int k = 0; k < 16; ++k)
                    if (r[k] != want[k]) {
                        if (bad < 5)
                            std::printf("  ids: work-item (%zu,%zu,%zu) value %d: %llu, want "
                                        "%llu\n",
                                        x, y, z, k, (unsigned long long)r[k],
                                        (unsigned long long)want[k]);
                        ++bad;
                    }
            }
    EXPECT(bad == 0, "ids: %zu wrong values", bad);
}

void checkGeneric(Module& m) {
    const size_t n = 256;
    const std::vector<float> weights{1, 2, 3, 4, 5, 6, 7, 8};
    Buffer g(std::vector<int32_t>{0}), out(n * sizeof(float)), w(weights);
    if (!run(m, "generic_ptrs", 1, {0}, {n}, {64}, {buf(g), loc(4), buf(out), buf(w)}))
        return;
    auto o = out.read<float>();
    const float table[4] = {1, 2, 3, 4};
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
        bad += o[i] != table[i & 3] * weights[i & 7] + 1.0f + (1 + 2 + 3);
    EXPECT(bad == 0, "generic_ptrs: %zu wrong (the __constant argument read as global memory)",
           bad);
    EXPECT(g.read<int32_t>()[0] == 128, "generic_ptrs: to_global hits %d, want 128",
           g.read<int32_t>()[0]);
}

void checkCalls(Module& m, Module& helpers) {
    Buffer x(std::vector<float>(256, 1.5f));
    if (run(m, "scale_twice", 1, {0}, {256}, {128}, {buf(x), val(2.0f)}) &&
        run(m, "scale", 1, {0}, {256}, {128}, {buf(x), val(3.0f)})) {
        auto v = x.read<float>();
        EXPECT(std::all_of(v.begin(), v.end(), [](float f) { return f == 18.0f; }),
               "kernel calling kernel: %g", v[0]);
    }
    Buffer h(std::vector<uint64_t>(164, 0));
    if (run(helpers, "helpers", 1, {100}, {64}, {32}, {buf(h)})) {
        auto v = h.read<uint64_t>();
        size_t bad = 0;
        for (size_t gid = 100; gid < 164; ++gid)
            bad += v[gid] != 3 * (gid + 100);
        EXPECT(bad == 0 && v[0] == 0, "unoptimised helpers with a global offset: %zu wrong", bad);
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <ptx-dir> [sm_90]\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1], sm = argc > 2 ? argv[2] : "sm_90";
    std::string reason;
    cuda = CudaDriver::get(&reason);
    if (!cuda) {
        std::printf("SKIPPED: %s\n", reason.c_str());
        return 77;
    }
    int count = 0, version = 0;
    if (cuda->init(0) != cu::kSuccess || cuda->deviceGetCount(&count) != cu::kSuccess ||
        count == 0) {
        std::printf("SKIPPED: the CUDA driver has no GPU\n");
        return 77;
    }
    cuda->driverGetVersion(&version);
    cu::Device dev = 0;
    char name[256] = {};
    cuda->deviceGet(&dev, 0);
    cuda->deviceGetName(name, sizeof name - 1, dev);
    cu::Context ctx = nullptr;
    if (!ok(cuda->devicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
        !ok(cuda->ctxPushCurrent(ctx), "cuCtxPushCurrent"))
        return 1;
    std::printf("%s, CUDA driver %d.%d, PTX for %s from %s\n", name, version / 1000,
                version % 1000 / 10, sm.c_str(), dir.c_str());

    struct Step {
        const char* program;
        std::function<void(Module&)> check;
    };
    std::unique_ptr<Module> helpers = load(dir, "noinline_helpers", sm);
    const Step steps[] = {
        {"triad", checkTriad},
        {"nbody", checkNbody},
        {"reduce", checkReduce},
        {"local_variables", checkLocalVariables},
        {"atomics", checkAtomics},
        {"c11_atomics", checkC11},
        {"math", checkMath},
        {"printf", checkPrintf},
        {"structs_vectors", checkStructs},
        {"offsets_nonuniform", checkIds},
        {"generic_globals", checkGeneric},
        {"kernel_calls_kernel",
         [&](Module& m) {
             if (helpers)
                 checkCalls(m, *helpers);
         }},
    };
    for (const Step& s : steps) {
        const int before = failures;
        std::unique_ptr<Module> m = load(dir, s.program, sm);
        if (m)
            s.check(*m);
        std::printf("%s %s\n", failures == before ? "PASS" : "FAIL", s.program);
    }
    helpers.reset();
    cuda->ctxPopCurrent(&ctx);
    cuda->devicePrimaryCtxRelease(dev);
    std::printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
