// The CPU device computes each maths function libmvec maps with one implementation: the same
// input gives the same bits in every work-item of a launch (vector lanes of a vectorised
// work-item loop, its scalar remainder, a ragged last group), in quick and in optimised code, and
// at 256- and 512-bit vectors where libmvec's variants agree (runtime/devices/cpu/README.md,
// "One implementation of each maths function"). DUET_CPU_TIER_UP_MS is set around each build:
// a minute keeps the launch in quick code, 0 compiles optimised code at once.
#include "support/cl_test.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

using duet::test::WithQueue;

constexpr size_t kItems = 20000; ///< 333 groups of 60 and a ragged one of 20
constexpr size_t kLocal = 60;    ///< not a multiple of 16 or 8: each group has a remainder
constexpr size_t kPeriod = 997;  ///< inputs repeat with this period, at every lane position

/// One kernel per element type; `T` is float or double. Each output row `k` holds function k of
/// the work-item's inputs `x` (in[i]) and `y` (in[n + i]).
std::string source(const char* type, const std::vector<std::string>& exprs) {
    std::string s = std::string(type == std::string("double")
                                    ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                                    : "") +
                    "__kernel void maths(__global const " + type + "* in, __global " + type +
                    "* out, uint n) {\n"
                    "    uint i = get_global_id(0);\n"
                    "    " +
                    type + " x = in[i], y = in[n + i];\n";
    for (size_t k = 0; k < exprs.size(); ++k)
        s += "    out[" + std::to_string(k) + " * n + i] = " + exprs[k] + ";\n";
    return s + "}\n";
}

/// The functions the kernels compute, with the host's reference for a sanity bound (the bits are
/// what the test compares; the reference only shows the results are the functions' values).
template <class T> struct Fn {
    const char* expr;
    T (*ref)(T, T);
};

template <class T> std::vector<Fn<T>> safeFunctions() {
    return {
        {"sin(x)", [](T x, T) { return std::sin(x); }},
        {"cos(x)", [](T x, T) { return std::cos(x); }},
        {"tan(x)", [](T x, T) { return std::tan(x); }},
        {"asin(x / 128)", [](T x, T) { return std::asin(x / 128); }},
        {"acos(x / 128)", [](T x, T) { return std::acos(x / 128); }},
        {"atan(x)", [](T x, T) { return std::atan(x); }},
        {"sinh(x / 8)", [](T x, T) { return std::sinh(x / 8); }},
        {"cosh(x / 8)", [](T x, T) { return std::cosh(x / 8); }},
        {"tanh(x / 8)", [](T x, T) { return std::tanh(x / 8); }},
        {"asinh(x)", [](T x, T) { return std::asinh(x); }},
        {"acosh(1 + fabs(x))", [](T x, T) { return std::acosh(1 + std::fabs(x)); }},
        {"atanh(x / 128)", [](T x, T) { return std::atanh(x / 128); }},
        {"erf(x / 16)", [](T x, T) { return std::erf(x / 16); }},
        {"erfc(x / 16)", [](T x, T) { return std::erfc(x / 16); }},
        {"atan2(x, y)", [](T x, T y) { return std::atan2(x, y); }},
        {"pow(fabs(x) / 16, y / 32)", [](T x, T y) { return std::pow(std::fabs(x) / 16, y / 32); }},
        {"hypot(x, y)", [](T x, T y) { return std::hypot(x, y); }},
    };
}

/// The functions libmvec maps only under -cl-unsafe-math-optimizations (their OpenCL limits are
/// under its 4 ulp).
template <class T> std::vector<Fn<T>> unsafeFunctions() {
    return {
        {"exp(x / 8)", [](T x, T) { return std::exp(x / 8); }},
        {"exp2(x / 8)", [](T x, T) { return std::exp2(x / 8); }},
        {"exp10(x / 32)", [](T x, T) { return std::pow(T(10), x / 32); }},
        {"expm1(x / 8)", [](T x, T) { return std::expm1(x / 8); }},
        {"log(fabs(x) + 1)", [](T x, T) { return std::log(std::fabs(x) + 1); }},
        {"log2(fabs(x) + 1)", [](T x, T) { return std::log2(std::fabs(x) + 1); }},
        {"log10(fabs(x) + 1)", [](T x, T) { return std::log10(std::fabs(x) + 1); }},
        {"log1p(fabs(x))", [](T x, T) { return std::log1p(std::fabs(x)); }},
        {"cbrt(x)", [](T x, T) { return std::cbrt(x); }},
    };
}

/// kItems inputs x then kItems y, repeating every kPeriod work-items: x spread over [-100, 100],
/// a few near 0 and a few large.
template <class T> std::vector<T> inputs() {
    std::vector<T> base(2 * kPeriod);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t k = 0; k < base.size(); ++k) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const double u = double(s >> 11) / double(1ull << 53); // [0, 1)
        base[k] = T((u - 0.5) * 200);
        if (k % 50 == 7)
            base[k] = T((u - 0.5) * 1e-3);
        if (k % 50 == 9)
            base[k] = T((u - 0.5) * 1e5);
    }
    std::vector<T> in(2 * kItems);
    for (size_t i = 0; i < kItems; ++i) {
        in[i] = base[i % kPeriod];
        in[kItems + i] = base[kPeriod + i % kPeriod];
    }
    return in;
}

/// The results of `fns` over inputs<T>() with DUET_CPU_TIER_UP_MS=`budget` (and
/// DUET_CPU_VECTOR_WIDTH=`width` unless null) around the build.
template <class T>
std::vector<T> run(const std::vector<Fn<T>>& fns, const char* budget, const char* width,
                   const std::string& options) {
    WithQueue q;
    std::vector<std::string> exprs;
    for (const Fn<T>& f : fns)
        exprs.push_back(f.expr);
    const char* type = sizeof(T) == 4 ? "float" : "double";
    // The comment makes each build's source its own (no JIT memo entry shared across settings).
    const std::string src = std::string("// budget ") + budget + " width " +
                            (width ? width : "default") + "\n" + source(type, exprs);
    setenv("DUET_CPU_TIER_UP_MS", budget, 1);
    if (width)
        setenv("DUET_CPU_VECTOR_WIDTH", width, 1);
    cl_program p = duet::test::buildProgram(q.context, q.device, src, "-cl-std=CL2.0 " + options);
    unsetenv("DUET_CPU_TIER_UP_MS");
    unsetenv("DUET_CPU_VECTOR_WIDTH");
    cl_int e = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, "maths", &e);
    REQUIRE(e == CL_SUCCESS);
    std::vector<T> in = inputs<T>();
    cl_mem inBuf =
        q.buffer(in.size() * sizeof(T), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in.data());
    cl_mem outBuf = q.buffer(fns.size() * kItems * sizeof(T));
    const cl_uint n = kItems;
    REQUIRE(clSetKernelArg(k, 0, sizeof inBuf, &inBuf) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 1, sizeof outBuf, &outBuf) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 2, sizeof n, &n) == CL_SUCCESS);
    const size_t global = kItems, local = kLocal;
    e = clEnqueueNDRangeKernel(q.queue, k, 1, nullptr, &global, &local, 0, nullptr, nullptr);
    INFO(duet::test::errorName(e));
    REQUIRE(e == CL_SUCCESS);
    std::vector<T> out = q.read<T>(outBuf, fns.size() * kItems);
    clReleaseMemObject(inBuf);
    clReleaseMemObject(outBuf);
    clReleaseKernel(k);
    clReleaseProgram(p);
    // Near the host's values: the kernel computes what it says.
    for (size_t f = 0; f < fns.size(); ++f)
        for (size_t i = 0; i < kPeriod; ++i) {
            const T got = out[f * kItems + i];
            const T want = fns[f].ref(in[i], in[kItems + i]);
            INFO(fns[f].expr << " of x " << in[i] << ", y " << in[kItems + i] << ": " << got
                             << ", host " << want);
            if (std::isnan(want) || std::isinf(want)) {
                CHECK(std::memcmp(&got, &want, sizeof(T)) == 0);
                continue;
            }
            CHECK(std::fabs(got - want) <= T(1e-4) * std::max(T(1), std::fabs(want)));
        }
    return out;
}

template <class T> bool sameBits(T a, T b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Every work-item's result has the bits of the first work-item with the same inputs.
template <class T>
void checkSameForSameInput(const std::vector<Fn<T>>& fns, const std::vector<T>& out,
                           const char* what) {
    for (size_t f = 0; f < fns.size(); ++f) {
        size_t differing = 0, first = 0;
        for (size_t i = kPeriod; i < kItems; ++i)
            if (!sameBits(out[f * kItems + i], out[f * kItems + i % kPeriod]) && !differing++)
                first = i;
        INFO(what << ": " << fns[f].expr << ": " << differing << " work-items differ from the "
                  << "first with their inputs, the first " << first << " (lane " << first % kLocal
                  << " of its group)");
        CHECK(differing == 0);
    }
}

template <class T>
void checkSameBits(const std::vector<Fn<T>>& fns, const std::vector<T>& a, const std::vector<T>& b,
                   const char* what) {
    for (size_t f = 0; f < fns.size(); ++f) {
        size_t differing = 0;
        for (size_t i = 0; i < kItems; ++i)
            differing += !sameBits(a[f * kItems + i], b[f * kItems + i]);
        INFO(what << ": " << fns[f].expr << ": " << differing << " work-items differ");
        CHECK(differing == 0);
    }
}

template <class T> void quickAndOptimised(const std::vector<Fn<T>>& fns, const std::string& opts) {
    const std::vector<T> quick = run<T>(fns, "60000", nullptr, opts);
    const std::vector<T> optimised = run<T>(fns, "0", nullptr, opts);
    checkSameForSameInput(fns, quick, "quick code");
    checkSameForSameInput(fns, optimised, "optimised code");
    checkSameBits(fns, quick, optimised, "quick vs optimised code");
}

} // namespace

TEST_CASE("same maths: float functions give the same bits in every work-item and tier",
          "[cpu][same_math]") {
    quickAndOptimised<float>(safeFunctions<float>(), "");
}

TEST_CASE("same maths: double functions give the same bits in every work-item and tier",
          "[cpu][same_math]") {
    quickAndOptimised<double>(safeFunctions<double>(), "");
}

TEST_CASE("same maths: under -cl-unsafe-math-optimizations exp, log, cbrt ... too",
          "[cpu][same_math]") {
    quickAndOptimised<float>(unsafeFunctions<float>(), "-cl-unsafe-math-optimizations");
    quickAndOptimised<double>(unsafeFunctions<double>(), "-cl-unsafe-math-optimizations");
}

TEST_CASE("same maths: each vector width is consistent in itself; sin and cos agree across them",
          "[cpu][same_math]") {
    const std::vector<Fn<float>> fns = safeFunctions<float>();
    std::map<std::string, std::vector<float>> byWidth;
    for (const char* width : {"256", "512"}) {
        const std::vector<float> quick = run<float>(fns, "60000", width, "");
        const std::vector<float> optimised = run<float>(fns, "0", width, "");
        checkSameForSameInput(fns, optimised, width);
        checkSameBits(fns, quick, optimised, width);
        byWidth[width] = optimised;
    }
    // AVX2's and AVX-512's sin and cos give the same bits (libmvec.cpp's measurements), so the
    // width changes none of them (on a host without AVX-512 both widths are 256 bits).
    const std::vector<Fn<float>> sinCos(fns.begin(), fns.begin() + 2);
    checkSameBits(sinCos, byWidth["256"], byWidth["512"], "256 vs 512 bits");
}
