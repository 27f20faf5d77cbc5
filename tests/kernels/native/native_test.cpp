// The CPU builtin library run natively, without any OpenCL runtime: generated OpenCL C
// wrappers (gen_wrappers.py) call the builtins as user code would, are linked with the
// library bitcode, retargeted to the host and linked into this test; the checks use the same
// host references as the kernel tests.
#include "../convert_reference.hpp"
#include "../half_reference.hpp"
#include "../integer_reference.hpp"
#include "../math_reference.hpp"

#include <algorithm>
#include <map>
#include <thread>
#include <sstream>
#include <string>

using namespace duet::test;
using namespace duet::test::ref;

extern "C" {
#define W(F, T, WIDTH, N) void N(const void*, const void*, void*, int);
#define C(D, S, SAT, MODE, WIDTH, N) void N(const void*, void*, int);
#define I(T, WIDTH, N) void N(const void*, const void*, const void*, void*, int);
#define H(T, MODE, N) void N(const void*, uint16_t*, int);
#include "native_wrappers.inc"
#undef W
#undef C
#undef I
#undef H
void n_mixed_float(const float*, const float*, const int*, float*, int*, int);
void n_mixed_double(const double*, const double*, const int*, double*, int*, int);
void n_vlh(const uint16_t*, float*, float*, float*, int);
void n_rel(const float*, const float*, int*, int*, int);
void n_atomics(int*, long*, int*, int, int);
}

namespace {

using MathFn = void (*)(const void*, const void*, void*, int);
using ConvFn = void (*)(const void*, void*, int);
using IntFn = void (*)(const void*, const void*, const void*, void*, int);
using HalfFn = void (*)(const void*, uint16_t*, int);

struct MathEntry {
    const char* name;
    const char* type;
    int width;
    MathFn fn;
};
struct ConvEntry {
    const char* dst;
    const char* src;
    int sat, mode, width;
    ConvFn fn;
};
struct IntEntry {
    const char* type;
    int width;
    IntFn fn;
};
struct HalfEntry {
    const char* type;
    int mode;
    HalfFn fn;
};

const MathEntry kMath[] = {
#define W(F, T, WIDTH, N) {F, T, WIDTH, N},
#define C(D, S, SAT, MODE, WIDTH, N)
#define I(T, WIDTH, N)
#define H(T, MODE, N)
#include "native_wrappers.inc"
#undef W
#undef C
#undef I
#undef H
};
const ConvEntry kConv[] = {
#define W(F, T, WIDTH, N)
#define C(D, S, SAT, MODE, WIDTH, N) {D, S, SAT, MODE, WIDTH, N},
#define I(T, WIDTH, N)
#define H(T, MODE, N)
#include "native_wrappers.inc"
#undef W
#undef C
#undef I
#undef H
};
const IntEntry kIntFns[] = {
#define W(F, T, WIDTH, N)
#define C(D, S, SAT, MODE, WIDTH, N)
#define I(T, WIDTH, N) {T, WIDTH, N},
#define H(T, MODE, N)
#include "native_wrappers.inc"
#undef W
#undef C
#undef I
#undef H
};
const HalfEntry kHalf[] = {
#define W(F, T, WIDTH, N)
#define C(D, S, SAT, MODE, WIDTH, N)
#define I(T, WIDTH, N)
#define H(T, MODE, N) {T, MODE, N},
#include "native_wrappers.inc"
#undef W
#undef C
#undef I
#undef H
};

template <class T> void checkMath() {
    const char* tn = sizeof(T) == 4 ? "float" : "double";
    const size_t n = 16 * 3 * 1024;
    std::vector<T> x = inputs<T>(n, 1234), x2 = inputs<T>(n, 4321), y(n);
    // Every pair of special values first, for the two-argument functions.
    std::vector<T> sp = specialValues<T>();
    std::vector<T> xb = x, x2b = x2;
    size_t k = 0;
    for (T a : sp)
        for (T b : sp) {
            xb[k] = a;
            x2b[k++] = b;
        }
    std::map<std::string, Ref1> un;
    std::map<std::string, Ref2> bin;
    std::map<std::string, double> limit;
    for (const Unary& u : kUnary) {
        un[u.name] = u.ref;
        limit[u.name] = sizeof(T) == 4 ? u.ulpFloat : u.ulpDouble;
    }
    for (const Binary& b : kBinary) {
        bin[b.name] = b.ref;
        limit[b.name] = sizeof(T) == 4 ? b.ulpFloat : b.ulpDouble;
    }
    for (const MathEntry& e : kMath) {
        if (std::string(e.type) != tn || !limit.count(e.name) || limit[e.name] == kAny)
            continue;
        bool binary = bin.count(e.name) != 0;
        const std::vector<T>& a = binary ? xb : x;
        const std::vector<T>& b = binary ? x2b : x2;
        e.fn(a.data(), b.data(), y.data(), static_cast<int>(n));
        double lim = std::max(limit[e.name], 0.5), worst = 0;
        size_t bad = 0, at = 0;
        for (size_t i = 0; i < n; ++i) {
            LD ref = binary ? bin[e.name](a[i], b[i]) : un[e.name](a[i]);
            double err = ulpError<T>(y[i], ref);
            bad += err > lim;
            if (err > worst) {
                worst = err;
                at = i;
            }
        }
        INFO(tn << " " << e.name << " width " << e.width << ": worst " << worst << " ulp (limit "
                << limit[e.name] << ") at " << std::hexfloat << (LD)a[at] << (binary ? ", " : "")
                << (binary ? (LD)b[at] : 0.0L) << " got " << (LD)y[at] << std::defaultfloat << "; "
                << bad << " of " << n << " over");
        CHECK(bad == 0);
    }
}

template <class T> void checkMixed(void (*fn)(const T*, const T*, const int*, T*, int*, int)) {
    const size_t count = 8192;
    std::vector<T> x = inputs<T>(count, 4321), x2 = inputs<T>(count, 8765);
    std::vector<int> nn(count);
    Rng rng(5);
    for (size_t i = 0; i < count; ++i) {
        nn[i] = i < 164 ? static_cast<int>(i % 41) - 20
                        : (i % 50 == 0 ? 0 : static_cast<int>(rng.next() % 41) - 20);
        if (i < 164) { // the extremes of the range with every small exponent
            const T ext[] = {std::numeric_limits<T>::max(), std::numeric_limits<T>::denorm_min(),
                             -std::numeric_limits<T>::max(), std::numeric_limits<T>::min()};
            x[i] = ext[i / 41];
        }
        if (std::isfinite(x[i]) && std::isfinite(x2[i]) && x2[i] != 0 &&
            fabsl((LD)x[i] / x2[i]) >= 0x1p30L)
            x2[i] = x[i] / (T)1000;
    }
    std::vector<T> y(count * 9);
    std::vector<int> iy(count * 4);
    fn(x.data(), x2.data(), nn.data(), y.data(), iy.data(), static_cast<int>(count));
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) {
        LD xv = x[i];
        auto check = [&](const char* what, double err, double lim) {
            if (err > std::max(lim, 0.5) && bad++ < 20)
                UNSCOPED_INFO(what << " x=" << std::hexfloat << xv << " y=" << (LD)x2[i]
                                   << " n=" << nn[i] << std::defaultfloat << " err " << err);
        };
        check("pown", ulpError<T>(y[9 * i], powl(xv, nn[i])), 16);
        LD root;
        if (nn[i] == 0 || (xv < 0 && nn[i] % 2 == 0))
            root = NAN;
        else if (xv == 0)
            root = nn[i] > 0 ? (nn[i] % 2 ? xv : 0.0L)
                             : (nn[i] % 2 ? copysignl(INFINITY, xv) : INFINITY);
        else
            root = copysignl(powl(fabsl(xv), 1.0L / nn[i]), xv);
        check("rootn", ulpError<T>(y[9 * i + 1], root), 16);
        check("ldexp", ulpError<T>(y[9 * i + 2], ldexpl(xv, nn[i])), 0);
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
                       (std::llabs(q) % 128 == 0 || (got < 0) == (q < 0));
            check("remquo", ulpError<T>(y[9 * i + 8], r) + (okq ? 0 : 1e9), 0);
        }
    }
    CHECK(bad == 0);
}

const TypeInfo& typeInfo(const std::string& name) {
    for (const TypeInfo& t : kTypes)
        if (name == t.name)
            return t;
    return kTypes[0];
}

} // namespace

TEST_CASE("native: float math within the spec's ULP limits", "[kernels][native][math]") {
    checkMath<float>();
    checkMixed<float>(n_mixed_float);
}

TEST_CASE("native: double math within the spec's ULP limits", "[kernels][native][math]") {
    checkMath<double>();
    checkMixed<double>(n_mixed_double);
}

TEST_CASE("native: every conversion, every rounding mode and width", "[kernels][native][convert]") {
    const size_t n = 48 * 64;
    std::map<std::string, std::vector<unsigned char>> data;
    for (const TypeInfo& t : kTypes)
        data[t.name] = sourceData(t, n);
    size_t failing = 0;
    for (const ConvEntry& e : kConv) {
        const TypeInfo& d = typeInfo(e.dst);
        const TypeInfo& s = typeInfo(e.src);
        std::vector<unsigned char> out(n * 8);
        e.fn(data[e.src].data(), out.data(), static_cast<int>(n));
        size_t bad = 0;
        std::string first;
        for (size_t i = 0; i < n; ++i) {
            LD x = load(s, &data[e.src][i * s.bytes]);
            unsigned char want[8] = {};
            if (!expected(d, s, e.sat != 0, e.mode, x, want))
                continue;
            const unsigned char* got = &out[i * d.bytes];
            bool same =
                std::memcmp(got, want, d.bytes) == 0 ||
                (d.kind == Kind::Float && std::isnan(load(d, got)) && std::isnan(load(d, want)));
            if (!same && bad++ == 0) {
                std::ostringstream m;
                m << std::hexfloat << "x = " << x << " got " << load(d, got) << " want "
                  << load(d, want);
                first = m.str();
            }
        }
        if (bad && failing++ < 30)
            UNSCOPED_INFO("convert_" << e.dst << (e.width > 1 ? std::to_string(e.width) : "")
                                     << (e.sat ? "_sat" : "") << kModes[e.mode] << "(" << e.src
                                     << "): " << bad << " wrong; first " << first);
    }
    CHECK(failing == 0);
}

TEST_CASE("native: integer functions on every type and width", "[kernels][native][integer]") {
    for (const IntEntry& e : kIntFns) {
        const IntType* tp = nullptr;
        for (const IntType& t : kInts)
            if (std::string(e.type) == t.name)
                tp = &t;
        REQUIRE(tp);
        const IntType& t = *tp;
        const int bytes = t.bits / 8;
        const size_t n = 12 * 512;
        std::vector<unsigned char> in[3];
        Rng rng(t.bits * 7 + t.isSigned);
        const I128 edges[] = {0, 1, -1, tmin(t), tmax(t), tmin(t) + 1, tmax(t) - 1, 2, 3, 7};
        for (int a = 0; a < 3; ++a) {
            in[a].resize(n * bytes);
            for (size_t i = 0; i < n; ++i) {
                I128 v = i < 1000 ? wrap(t, edges[(i / (a == 0   ? 1
                                                        : a == 1 ? 10
                                                                 : 100)) %
                                                  10])
                                  : wrap(t, (I128)(rng.next() >> (rng.next() % 64)));
                uint64_t raw = (uint64_t)v;
                std::memcpy(&in[a][i * bytes], &raw, bytes);
            }
        }
        std::vector<unsigned char> out(kNumFns * n * bytes);
        e.fn(in[0].data(), in[1].data(), in[2].data(), out.data(), static_cast<int>(n));
        for (int f = 0; f < kNumFns; ++f) {
            size_t bad = 0;
            std::string first;
            for (size_t i = 0; i < n; ++i) {
                I128 x = load(t, &in[0][i * bytes]), y = load(t, &in[1][i * bytes]),
                     z = load(t, &in[2][i * bytes]);
                if (std::string(kFns[f]) == "mul24" || std::string(kFns[f]) == "mad24") {
                    x = shr(x, 17);
                    y = shr(y, 17);
                }
                I128 want;
                if (!reference(t, f, x, y, z, want))
                    continue;
                I128 got = load(t, &out[(f * n + i) * bytes]);
                if (wrap(t, want) != got && bad++ == 0)
                    first = "x=" + std::to_string((long long)x) +
                            " y=" + std::to_string((long long)y) +
                            " z=" + std::to_string((long long)z) + " got " +
                            std::to_string((long long)got) + " want " +
                            std::to_string((long long)wrap(t, want));
            }
            INFO(kFns[f] << "(" << t.name << ") width " << e.width << ": " << bad
                         << " wrong; first: " << first);
            CHECK(bad == 0);
        }
    }
}

TEST_CASE("native: vload_half and vstore_half in every rounding mode", "[kernels][native][half]") {
    std::vector<uint16_t> h(65536);
    for (size_t i = 0; i < h.size(); ++i)
        h[i] = static_cast<uint16_t>(i);
    std::vector<float> f(65536), f4(65536), fa3(65536);
    n_vlh(h.data(), f.data(), f4.data(), fa3.data(), 65536);
    size_t bad = 0;
    for (size_t i = 0; i < 65536; ++i) {
        double want = halfValue(static_cast<uint16_t>(i));
        auto same = [&](float got) {
            return std::isnan(want) ? std::isnan(got)
                                    : (got == want && std::signbit(got) == std::signbit(want));
        };
        bad += !same(f[i]) + !same(f4[i]);
        if (i % 4 != 3)
            bad += !same(fa3[i / 4 * 3 + i % 4]);
    }
    CHECK(bad == 0);

    const size_t n = 1 << 16;
    std::vector<float> xf(n);
    std::vector<double> xd(n);
    Rng rng(11);
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = rng.next();
        uint32_t b = static_cast<uint32_t>(r);
        if (i % 2)
            b = (b & 0x8fffffffu) | 0x30000000u;
        std::memcpy(&xf[i], &b, 4);
        if (i % 3 == 0)
            xd[i] = std::ldexp(static_cast<double>(r >> 11), -53 - static_cast<int>(r % 40) + 17);
        else
            xd[i] = static_cast<double>(xf[i]) * (1.0 + 0x1p-40 * static_cast<double>(i % 7));
        if (i % 5 == 0)
            xd[i] = -xd[i];
    }
    std::vector<float> specials = relValues();
    for (size_t i = 0; i < specials.size(); ++i) {
        xf[i] = specials[i];
        xd[i] = specials[i];
    }
    xd[20] = 1.0 + 0x1p-11 + 0x1p-40;
    xd[21] = 65520.0 - 0x1p-30;
    for (const HalfEntry& e : kHalf) {
        std::vector<uint16_t> out(2 * n);
        bool isFloat = std::string(e.type) == "float";
        e.fn(isFloat ? (const void*)xf.data() : (const void*)xd.data(), out.data(),
             static_cast<int>(n));
        int mode = e.mode == 0 ? 0 : e.mode - 1;
        size_t wrong = 0;
        for (size_t i = 0; i < n; ++i) {
            long double x = isFloat ? (long double)xf[i] : (long double)xd[i];
            uint16_t want = toHalf(x, mode);
            for (int v = 0; v < 2; ++v) {
                uint16_t got = out[v * n + i];
                bool ok = std::isnan(x) ? ((got & 0x7c00) == 0x7c00 && (got & 0x3ff)) : got == want;
                if (!ok && wrong++ < 5)
                    UNSCOPED_INFO("vstore_half" << (v ? "4" : "") << kModes[e.mode] << "(" << e.type
                                                << " " << std::hexfloat << x << ") = 0x" << std::hex
                                                << got << " want 0x" << want << std::dec);
            }
        }
        CHECK(wrong == 0);
    }
}

TEST_CASE("native: relational builtins, scalar 1/0 and vector -1/0",
          "[kernels][native][relational]") {
    std::vector<float> vals = relValues(), a, b;
    for (float x : vals)
        for (float y : vals) {
            a.push_back(x);
            b.push_back(y);
        }
    std::vector<int> s(a.size() * 14), v(a.size() * 14);
    n_rel(a.data(), b.data(), s.data(), v.data(), static_cast<int>(a.size()));
    size_t bad = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        float x = a[i], y = b[i];
        bool want[14] = {x == y,
                         x != y,
                         x > y,
                         x >= y,
                         x < y,
                         x <= y,
                         x < y || x > y,
                         std::isfinite(x),
                         std::isinf(x),
                         std::isnan(x),
                         std::isnormal(x),
                         !std::isnan(x) && !std::isnan(y),
                         std::isnan(x) || std::isnan(y),
                         std::signbit(x)};
        for (int j = 0; j < 14; ++j)
            bad += s[i * 14 + j] != (want[j] ? 1 : 0) || v[i * 14 + j] != (want[j] ? -1 : 0);
    }
    CHECK(bad == 0);
}

TEST_CASE("native: atomics from concurrent host threads give exact results",
          "[kernels][native][atomics]") {
    const int threads = 4, iters = 20000;
    std::vector<int> c(16, 0);
    std::vector<long> l(8, 0);
    c[4] = 0;
    std::vector<std::vector<int>> olds(threads, std::vector<int>(iters));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] { n_atomics(c.data(), l.data(), olds[t].data(), iters, t); });
    for (auto& th : pool)
        th.join();
    const int n = threads * iters;
    CHECK(c[0] == n);
    CHECK(c[1] == 3 * n);
    CHECK(c[2] == -2 * n);
    CHECK(c[3] == n - 1);
    CHECK(c[4] == -(n - 1));
    CHECK(c[5] == 0x7fffffff);
    int x = 0;
    for (int i = 0; i < n; ++i)
        x ^= i;
    CHECK(c[6] == x);
    CHECK(c[7] == n);
    CHECK(l[0] == static_cast<long>(n) << 34);
    CHECK(l[1] == n);
    CHECK(l[2] == 5L * n);
    CHECK(c[8] == 2 * n);
    CHECK(c[9] == -n);
    CHECK(c[10] == 3 * n);
    CHECK(l[4] == 7L * n);
    CHECK(l[5] == n - 1);
    std::vector<int> all;
    for (auto& o : olds)
        all.insert(all.end(), o.begin(), o.end());
    std::sort(all.begin(), all.end());
    bool unique = true;
    for (int i = 0; i < n; ++i)
        unique &= all[i] == i;
    CHECK(unique); // atomic_inc handed out every old value once
}
