// Math builtins (OpenCL C §6.15.2) against long double references, within the full-profile
// ULP limits of the spec, over edge cases (zeros, denormals, infinities, NaN, huge trig
// arguments) and random inputs, scalar and vector widths 3, 4 and 16.
#include "kernel_harness.hpp"
#include "math_reference.hpp"

#include <cfloat>
#include <cmath>
#include <limits>
#include <sstream>

using namespace duet::test;

using namespace duet::test::ref;

namespace {
template <class T> const char* typeName() {
    return sizeof(T) == 4 ? "float" : "double";
}

// The division operator is tested like a two-argument builtin (OpenCL C 3.0 section 7.4: 2.5 ulp
// for float unless -cl-fp32-correctly-rounded-divide-sqrt, correctly rounded for double).
std::string header(bool dbl) {
    return std::string(dbl ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") +
           "#define divide_operator(a, b) ((a) / (b))\n";
}

constexpr int kWidths[] = {1, 3, 16};

// One kernel per function and width, f_<w>_<j>: y[j*n + i] = names[j](x[i][, x2[i]]) over
// vloadN/vstoreN, all in one program (one build). Small kernels keep code generation fast
// for GPU targets, where one kernel of every function at width 16 takes minutes to compile.
std::string mathKernels(const char* type, const std::vector<std::string>& names, int arity) {
    std::ostringstream s;
    for (int w : kWidths) {
        std::string args = w == 1 ? "x[i]" : "vload" + std::to_string(w) + "(i, x)";
        std::string args2 = w == 1 ? "x2[i]" : "vload" + std::to_string(w) + "(i, x2)";
        for (size_t j = 0; j < names.size(); ++j) {
            s << "kernel void f_" << w << "_" << j << "(global const " << type
              << "* x, global const " << type << "* x2, global " << type << "* y, uint n) {\n"
              << "  size_t i = get_global_id(0);\n";
            std::string call = names[j] + "(" + args + (arity == 2 ? ", " + args2 : "") + ")";
            std::string out = "y + " + std::to_string(j) + " * (size_t)n";
            if (w == 1)
                s << "  (" << out << ")[i] = " << call << ";\n";
            else
                s << "  vstore" << w << "(" << call << ", i, " << out << ");\n";
            s << "}\n";
        }
    }
    return s.str();
}

/// Runs every f_<w>_<j> of the program over n elements.
void runWidth(Program& prog, int w, size_t functions, Buffer& bx, Buffer& bx2, Buffer& by,
              size_t n) {
    for (size_t j = 0; j < functions; ++j) {
        cl_kernel k = prog.kernel("f_" + std::to_string(w) + "_" + std::to_string(j));
        setArgs(k, bx, bx2, by, static_cast<cl_uint>(n));
        run1D(k, n / w);
    }
}

template <class T> void checkUnary() {
    const bool dbl = sizeof(T) == 8;
    std::vector<std::string> names;
    for (const Unary& u : kUnary)
        if ((dbl ? u.ulpDouble : u.ulpFloat) != kAny)
            names.push_back(u.name);
    Program prog(header(dbl) + mathKernels(typeName<T>(), names, 1));
    const size_t n = 16 * 3 * 256; // divisible by every width
    std::vector<T> x = inputs<T>(n, 1234);
    Buffer bx(x), bx2(x), by(names.size() * n * sizeof(T));
    for (int w : kWidths) {
        runWidth(prog, w, names.size(), bx, bx2, by, n);
        std::vector<T> all = by.read<T>(names.size() * n);
        size_t j = 0;
        for (const Unary& u : kUnary) {
            double limit = dbl ? u.ulpDouble : u.ulpFloat;
            if (limit == kAny)
                continue;
            const T* y = all.data() + (j++) * n;
            double worst = 0;
            size_t worstAt = 0, failures = 0;
            for (size_t i = 0; i < n; ++i) {
                double err = ulpError<T>(y[i], u.ref(static_cast<LD>(x[i])));
                if (err > std::max(limit, 0.5))
                    ++failures;
                if (err > worst) {
                    worst = err;
                    worstAt = i;
                }
            }
            INFO(typeName<T>() << " " << u.name << " width " << w << ": worst " << worst
                               << " ulp (limit " << limit << ") at x = " << std::hexfloat
                               << (LD)x[worstAt] << " got " << (LD)y[worstAt] << " want "
                               << u.ref(x[worstAt]) << std::defaultfloat << "; " << failures
                               << " of " << n << " inputs over the limit");
            CHECK(failures == 0);
        }
    }
}

template <class T> void checkBinary() {
    const bool dbl = sizeof(T) == 8;
    std::vector<std::string> names;
    for (const Binary& b : kBinary)
        if ((dbl ? b.ulpDouble : b.ulpFloat) != kAny)
            names.push_back(b.name);
    Program prog(header(dbl) + mathKernels(typeName<T>(), names, 2));
    // Every pair of special values, then random pairs.
    std::vector<T> sp = specialValues<T>();
    std::vector<T> x, x2;
    for (T a : sp)
        for (T b : sp) {
            x.push_back(a);
            x2.push_back(b);
        }
    const size_t n = (x.size() / 48 + 40) * 48;
    std::vector<T> ra = inputs<T>(n, 77), rb = inputs<T>(n, 99);
    for (size_t i = x.size(); i < n; ++i) {
        x.push_back(ra[i]);
        x2.push_back(rb[i]);
    }
    Buffer bx(x), bx2(x2), by(names.size() * n * sizeof(T));
    for (int w : kWidths) {
        runWidth(prog, w, names.size(), bx, bx2, by, n);
        std::vector<T> all = by.read<T>(names.size() * n);
        size_t j = 0;
        for (const Binary& b : kBinary) {
            double limit = dbl ? b.ulpDouble : b.ulpFloat;
            if (limit == kAny)
                continue;
            const T* y = all.data() + (j++) * n;
            double worst = 0;
            size_t worstAt = 0, failures = 0;
            for (size_t i = 0; i < n; ++i) {
                double err = ulpError<T>(y[i], b.ref(x[i], x2[i]));
                if (err > std::max(limit, 0.5))
                    ++failures;
                if (err > worst) {
                    worst = err;
                    worstAt = i;
                }
            }
            INFO(typeName<T>() << " " << b.name << " width " << w << ": worst " << worst
                               << " ulp (limit " << limit << ") at (" << std::hexfloat
                               << (LD)x[worstAt] << ", " << (LD)x2[worstAt] << ") got "
                               << (LD)y[worstAt] << " want " << b.ref(x[worstAt], x2[worstAt])
                               << std::defaultfloat << "; " << failures << " of " << n
                               << " inputs over the limit");
            CHECK(failures == 0);
        }
    }
}

// Functions with an int argument or result, and pointer out-parameters.
template <class T> void checkMixed() {
    const bool dbl = sizeof(T) == 8;
    const char* t = typeName<T>();
    std::ostringstream s;
    s << header(dbl);
    s << "kernel void k(global const " << t << "* x, global const " << t << "* x2,"
      << " global const int* n, global " << t << "* y, global int* iy) {\n"
      << "  size_t i = get_global_id(0);\n"
      << "  y[9*i+0] = pown(x[i], n[i]);\n"
      << "  y[9*i+1] = rootn(x[i], n[i]);\n"
      << "  y[9*i+2] = ldexp(x[i], n[i]);\n"
      << "  iy[4*i+0] = ilogb(x[i]);\n"
      << "  int e; y[9*i+3] = frexp(x[i], &e); iy[4*i+1] = e;\n"
      << "  " << t << " ip; y[9*i+4] = fract(x[i], &ip); y[9*i+5] = ip;\n"
      << "  " << t << " c; y[9*i+6] = sincos(x[i], &c); y[9*i+7] = c;\n"
      << "  int q; y[9*i+8] = remquo(x[i], x2[i], &q); iy[4*i+2] = q;\n"
      << "}\n";
    Program prog(s.str());
    const size_t count = 4096;
    std::vector<T> x = inputs<T>(count, 4321), x2 = inputs<T>(count, 8765);
    std::vector<int> n(count);
    Rng rng(5);
    for (size_t i = 0; i < count; ++i) {
        int r = static_cast<int>(rng.next() % 41) - 20;
        n[i] = i % 50 == 0 ? 0 : r;
        // remquo: keep |x/y| < 2^30 so the host gets the exact quotient in long double.
        if (std::isfinite(x[i]) && std::isfinite(x2[i]) && x2[i] != 0 &&
            fabsl((LD)x[i] / x2[i]) >= 0x1p30L)
            x2[i] = x[i] / (T)1000;
    }
    Buffer bx(x), bx2(x2), bn(n), by(count * 9 * sizeof(T)), biy(count * 4 * sizeof(int));
    cl_kernel k = prog.kernel("k");
    setArgs(k, bx, bx2, bn, by, biy);
    run1D(k, count);
    std::vector<T> y = by.read<T>(count * 9);
    std::vector<int> iy = biy.read<int>(count * 4);
    size_t bad = 0;
    for (size_t i = 0; i < count && bad < 20; ++i) {
        LD xv = x[i];
        auto check = [&](const char* what, double err, double limit) {
            if (err > std::max(limit, 0.5)) {
                ++bad;
                UNSCOPED_INFO(t << " " << what << " x=" << std::hexfloat << xv << " n=" << n[i]
                                << std::defaultfloat << " err " << err << " ulp");
            }
        };
        check("pown", ulpError<T>(y[9 * i], powl(xv, n[i])), 16);
        LD root;
        if (n[i] == 0 || (xv < 0 && n[i] % 2 == 0))
            root = NAN;
        else if (xv == 0)
            root =
                n[i] > 0 ? (n[i] % 2 ? xv : 0.0L) : (n[i] % 2 ? copysignl(INFINITY, xv) : INFINITY);
        else
            root = copysignl(powl(fabsl(xv), 1.0L / n[i]), xv);
        check("rootn", ulpError<T>(y[9 * i + 1], root), 16);
        check("ldexp", ulpError<T>(y[9 * i + 2], ldexpl(xv, n[i])), 0);
        int wantIlogb = std::isnan(xv)   ? INT_MAX
                        : xv == 0        ? INT_MIN
                        : std::isinf(xv) ? INT_MAX
                                         : ilogbl(xv);
        check("ilogb", iy[4 * i] == wantIlogb ? 0 : 1e9, 0);
        if (std::isfinite(xv)) {
            int e;
            LD m = frexpl(xv, &e);
            check("frexp", ulpError<T>(y[9 * i + 3], m) + (iy[4 * i + 1] == e ? 0 : 1e9), 0);
            LD fl = floorl(xv);
            LD fr = fminl((LD) static_cast<T>(xv - fl), (LD)std::nextafter((T)1, (T)0));
            check("fract", ulpError<T>(y[9 * i + 4], fr) + ulpError<T>(y[9 * i + 5], fl), 0);
            check("sincos(sin)", ulpError<T>(y[9 * i + 6], sinl(xv)), 4);
            check("sincos(cos)", ulpError<T>(y[9 * i + 7], cosl(xv)), 4);
        }
        LD yv = x2[i];
        if (std::isfinite(xv) && std::isfinite(yv) && yv != 0) {
            LD r = remainderl(xv, yv);
            long long q = llrintl((xv - r) / yv);
            int got = iy[4 * i + 2];
            bool okq = (std::llabs(q) % 128) == (std::abs(got) % 128) &&
                       (q == 0 || std::llabs(q) % 128 == 0 || (got < 0) == (q < 0));
            check("remquo", ulpError<T>(y[9 * i + 8], r) + (okq ? 0 : 1e9), 0);
        }
    }
    CHECK(bad == 0);
}

} // namespace

TEST_CASE("float math builtins are within the spec's ULP limits", "[kernels][math][float]") {
    checkUnary<float>();
}

TEST_CASE("float two-argument math builtins are within the spec's ULP limits",
          "[kernels][math][float]") {
    checkBinary<float>();
}

TEST_CASE("float math builtins with int and pointer arguments", "[kernels][math][float]") {
    checkMixed<float>();
}

TEST_CASE("double math builtins are within the spec's ULP limits", "[kernels][math][double]") {
    if (!KernelEnv::get().fp64)
        SUCCEED("device without cl_khr_fp64");
    else
        checkUnary<double>();
}

// One kernel computing 39 builtins on double16: 256 VGPRs, SGPRs spilled into VGPR lanes and
// tgamma called out of line. LLVM 19 split a spill VGPR's live range with a whole-wave copy
// into a VGPR whose inactive lanes still held a value (lost on the GCN device: sin and cos of
// element 0 wrong for ~3% of inputs); finalize_gcn.cpp pre-allocates those registers.
TEST_CASE("double16 sin and cos stay right in a kernel that spills SGPRs into VGPRs",
          "[kernels][math][double]") {
    if (!KernelEnv::get().fp64) {
        SUCCEED("device without cl_khr_fp64");
        return;
    }
    const char* names[] = {"acos",   "acosh", "acospi", "asin",  "asinh", "asinpi", "atan", "atanh",
                           "atanpi", "cbrt",  "ceil",   "cos",   "cosh",  "cospi",  "erfc", "erf",
                           "exp",    "exp2",  "exp10",  "expm1", "fabs",  "floor",  "log",  "log2",
                           "log10",  "log1p", "logb",   "rint",  "round", "rsqrt",  "sin",  "sinh",
                           "sinpi",  "sqrt",  "tan",    "tanh",  "tanpi", "tgamma", "trunc"};
    constexpr size_t kSin = 30, kCos = 11, kFunctions = std::size(names);
    std::ostringstream src;
    src << header(true) << "kernel void f(global const double* x, global double* y, uint n) {\n"
        << "  size_t i = get_global_id(0);\n";
    for (size_t j = 0; j < kFunctions; ++j)
        src << "  vstore16(" << names[j] << "(vload16(i, x)), i, y + " << j << " * (size_t)n);\n";
    src << "}\n";
    Program prog(src.str());
    const size_t n = 16 * 3 * 32;
    std::vector<double> x = inputs<double>(n, 1234);
    Buffer bx(x), by(kFunctions * n * sizeof(double));
    cl_kernel k = prog.kernel("f");
    setArgs(k, bx, by, static_cast<cl_uint>(n));
    run1D(k, n / 16);
    std::vector<double> y = by.read<double>(kFunctions * n);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        double es = ulpError<double>(y[kSin * n + i], sinl(x[i]));
        double ec = ulpError<double>(y[kCos * n + i], cosl(x[i]));
        if (es > 4 || ec > 4) {
            if (++bad <= 4)
                UNSCOPED_INFO("x[" << i << "] = " << std::hexfloat << x[i] << ": sin "
                                   << y[kSin * n + i] << ", cos " << y[kCos * n + i]
                                   << std::defaultfloat);
        }
    }
    CHECK(bad == 0);
}

TEST_CASE("double two-argument math builtins are within the spec's ULP limits",
          "[kernels][math][double]") {
    if (KernelEnv::get().fp64)
        checkBinary<double>();
}

TEST_CASE("double math builtins with int and pointer arguments", "[kernels][math][double]") {
    if (KernelEnv::get().fp64)
        checkMixed<double>();
}

// sin(+-0) = +-0 and cos(+-0) = 1, and NaN for infinities and NaN (C99 F.9.1.6-7): the GPU
// library's reduction runs on the signed argument and gives +0 for -0 unless it mends it.
TEST_CASE("float sin, cos and sincos keep the sign of zero and give NaN for infinities",
          "[kernels][math]") {
    Program prog("kernel void k(global const float* x, global float* y) {\n"
                 "  size_t i = get_global_id(0);\n"
                 "  float c; y[4*i] = sincos(x[i], &c); y[4*i+1] = c;\n"
                 "  y[4*i+2] = sin(x[i]); y[4*i+3] = cos(x[i]);\n}\n");
    const std::vector<float> x = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -0x1p-149f, 0x1p-149f};
    Buffer bx(x), by(4 * x.size() * sizeof(float));
    cl_kernel k = prog.kernel("k");
    setArgs(k, bx, by);
    run1D(k, x.size());
    std::vector<float> y = by.read<float>(4 * x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        INFO("x = " << std::hexfloat << x[i]);
        for (int j : {0, 2}) { // sincos's sine, sin
            if (std::isfinite(x[i])) {
                CHECK(y[4 * i + j] == x[i]);
                CHECK(std::signbit(y[4 * i + j]) == std::signbit(x[i]));
                CHECK(y[4 * i + j + 1] == 1.0f);
            } else {
                CHECK(std::isnan(y[4 * i + j]));
                CHECK(std::isnan(y[4 * i + j + 1]));
            }
        }
    }
}

TEST_CASE("fma is exact and mad is close", "[kernels][math]") {
    Program prog("kernel void k(global const float* a, global float* y) {\n"
                 "  size_t i = get_global_id(0);\n"
                 "  y[2*i] = fma(a[3*i], a[3*i+1], a[3*i+2]);\n"
                 "  y[2*i+1] = mad(a[3*i], a[3*i+1], a[3*i+2]);\n}\n");
    const size_t n = 4096;
    std::vector<float> a = inputs<float>(3 * n, 31);
    Buffer ba(a), by(2 * n * sizeof(float));
    cl_kernel k = prog.kernel("k");
    setArgs(k, ba, by);
    run1D(k, n);
    std::vector<float> y = by.read<float>(2 * n);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        LD ref = fmal(a[3 * i], a[3 * i + 1], a[3 * i + 2]); // exact in long double? close enough:
        // the product of two floats is exact in long double; only the sum rounds (64 bits).
        if (ulpError<float>(y[2 * i], ref) > 0.5001)
            ++bad;
    }
    CHECK(bad == 0);
}
