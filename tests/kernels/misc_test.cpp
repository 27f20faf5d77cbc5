// Relational (scalar 1/0, vector -1/0), select/bitselect/any/all, shuffle, vloadn/vstoren,
// vload_half/vstore_half in every rounding mode (against an exact search over all halves),
// common and geometric builtins.
#include "kernel_harness.hpp"
#include "generic_kinds.hpp"
#include "half_reference.hpp"

#include <cfloat>
#include <cstdio>
#include <cmath>
#include <limits>

using namespace duet::test;

using namespace duet::test::ref;

namespace {} // namespace

TEST_CASE("relational builtins: scalar 1/0, vector -1/0", "[kernels][relational]") {
    Program prog(R"(
#define REL(F) F(x, y)
kernel void k(global const float* a, global const float* b, global int* s, global int* v) {
    size_t i = get_global_id(0);
    float x = a[i], y = b[i];
    float4 x4 = (float4)(x), y4 = (float4)(y);
    int r[16];
    int4 q[16];
    r[0] = isequal(x, y); q[0] = isequal(x4, y4);
    r[1] = isnotequal(x, y); q[1] = isnotequal(x4, y4);
    r[2] = isgreater(x, y); q[2] = isgreater(x4, y4);
    r[3] = isgreaterequal(x, y); q[3] = isgreaterequal(x4, y4);
    r[4] = isless(x, y); q[4] = isless(x4, y4);
    r[5] = islessequal(x, y); q[5] = islessequal(x4, y4);
    r[6] = islessgreater(x, y); q[6] = islessgreater(x4, y4);
    r[7] = isfinite(x); q[7] = isfinite(x4);
    r[8] = isinf(x); q[8] = isinf(x4);
    r[9] = isnan(x); q[9] = isnan(x4);
    r[10] = isnormal(x); q[10] = isnormal(x4);
    r[11] = isordered(x, y); q[11] = isordered(x4, y4);
    r[12] = isunordered(x, y); q[12] = isunordered(x4, y4);
    r[13] = signbit(x); q[13] = signbit(x4);
    for (int j = 0; j < 14; ++j) {
        s[i * 14 + j] = r[j];
        v[i * 14 + j] = q[j].x & q[j].y & q[j].z & q[j].w;
        if (q[j].x != q[j].w) v[i * 14 + j] = 99;
    }
}
)");
    std::vector<float> vals = relValues(), a, b;
    for (float x : vals)
        for (float y : vals) {
            a.push_back(x);
            b.push_back(y);
        }
    Buffer ba(a), bb(b), bs(a.size() * 14 * 4), bv(a.size() * 14 * 4);
    cl_kernel k = prog.kernel("k");
    setArgs(k, ba, bb, bs, bv);
    run1D(k, a.size());
    std::vector<int> s = bs.read<int>(a.size() * 14), v = bv.read<int>(a.size() * 14);
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
        for (int j = 0; j < 14; ++j) {
            bool wrong = s[i * 14 + j] != (want[j] ? 1 : 0) || v[i * 14 + j] != (want[j] ? -1 : 0);
            if (wrong && bad++ < 10)
                UNSCOPED_INFO("relational " << j << " x=" << x << " y=" << y << " scalar "
                                            << s[i * 14 + j] << " vector " << v[i * 14 + j]);
        }
    }
    CHECK(bad == 0);
}

TEST_CASE("select, bitselect, any, all and shuffle", "[kernels][relational]") {
    Program prog(R"(
kernel void k(global int* o, global float* f) {
    o[0] = select(1, 2, 0);
    o[1] = select(1, 2, 5);
    int4 s = select((int4)(1, 2, 3, 4), (int4)(10, 20, 30, 40), (int4)(-1, 0, 0x80000000, 1));
    vstore4(s, 0, o + 2);
    uint4 su = select((uint4)(1), (uint4)(2), (uint4)(0x80000000u, 0x7fffffffu, 0xffffffffu, 0));
    vstore4(as_int4(su), 0, o + 6);
    o[10] = any((int4)(0, 1, 2, -5));
    o[11] = any((int4)(0, 1, 2, 5));
    o[12] = all((int4)(-1, -2, -3, -4));
    o[13] = all((int4)(-1, -2, 3, -4));
    o[14] = any((char)-1);
    o[15] = all((long2)(-1, 0));
    o[16] = bitselect(0x0f0f0f0f, 0x33333333, 0x00ff00ff);
    float4 sf = select((float4)(1.0f), (float4)(2.0f), (int4)(0, -1, 0, -1));
    vstore4(sf, 0, f);
    f[4] = bitselect(1.0f, -1.0f, as_float(0x80000000u));
    float8 src = (float8)(0, 1, 2, 3, 4, 5, 6, 7);
    float4 sh = shuffle(src, (uint4)(7, 0, 9, 3)); // 9 & 7 = 1
    vstore4(sh, 0, f + 5);
    float4 sh2 = shuffle2((float4)(0, 1, 2, 3), (float4)(4, 5, 6, 7), (uint4)(4, 3, 15, 8));
    vstore4(sh2, 0, f + 9);
    int16 big = shuffle((int2)(5, 6), (uint16)(1));
    o[17] = big.sf;
}
)");
    Buffer bo(18 * 4), bf(13 * 4);
    cl_kernel k = prog.kernel("k");
    setArgs(k, bo, bf);
    run1D(k, 1);
    std::vector<int> o = bo.read<int>(18);
    std::vector<float> f = bf.read<float>(13);
    CHECK(o[0] == 1);
    CHECK(o[1] == 2);
    CHECK((o[2] == 10 && o[3] == 2 && o[4] == 30 && o[5] == 4));
    CHECK((o[6] == 2 && o[7] == 1 && o[8] == 2 && o[9] == 1));
    CHECK(o[10] == 1);
    CHECK(o[11] == 0);
    CHECK(o[12] == 1);
    CHECK(o[13] == 0);
    CHECK(o[14] == 1);
    CHECK(o[15] == 0);
    CHECK(o[16] == (0x0f0f0f0f & ~0x00ff00ff) + (0x33333333 & 0x00ff00ff));
    CHECK((f[0] == 1 && f[1] == 2 && f[2] == 1 && f[3] == 2));
    CHECK(f[4] == -1.0f);
    CHECK((f[5] == 7 && f[6] == 0 && f[7] == 1 && f[8] == 3));
    CHECK((f[9] == 4 && f[10] == 3 && f[11] == 7 && f[12] == 0));
    CHECK(o[17] == 6);
}

TEST_CASE("vloadn and vstoren at element alignment, including 3", "[kernels][vload]") {
    Program prog(R"(
kernel void k(global const int* in, global int* out, global const char* cin, global char* cout,
              global const float* fin, global float* fout) {
    size_t i = get_global_id(0);
    vstore3(vload3(i, in) + (int3)(1, 2, 3), i, out);
    vstore16(vload16(i, cin), i, cout);
    float8 v = vload8(0, fin + 1 + i); // misaligned for a float8
    vstore2(v.s01 + v.s67, 0, fout + 2 * i + 1);
}
)");
    const size_t n = 64;
    std::vector<int> in(3 * n);
    std::vector<char> cin(16 * n);
    std::vector<float> fin(n + 16);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = static_cast<int>(i * 3);
    for (size_t i = 0; i < cin.size(); ++i)
        cin[i] = static_cast<char>(i);
    for (size_t i = 0; i < fin.size(); ++i)
        fin[i] = static_cast<float>(i);
    std::vector<int> out0(3 * n + 1, -7);
    Buffer bin(in), bout(out0), bcin(cin), bcout(cin.size()), bfin(fin),
        bfout(std::vector<float>(2 * n + 2, -1.0f));
    cl_kernel k = prog.kernel("k");
    setArgs(k, bin, bout, bcin, bcout, bfin, bfout);
    run1D(k, n);
    std::vector<int> out = bout.read<int>(3 * n + 1);
    std::vector<char> cout = bcout.read<char>(cin.size());
    std::vector<float> fout = bfout.read<float>(2 * n + 2);
    size_t bad = 0;
    for (size_t i = 0; i < 3 * n; ++i)
        bad += out[i] != in[i] + static_cast<int>(i % 3 + 1);
    CHECK(out[3 * n] == -7); // vstore3 wrote 3 elements, not 4
    bad += cout != cin;
    for (size_t i = 0; i < n; ++i) {
        bad += fout[2 * i + 1] != fin[1 + i] + fin[7 + i];
        bad += fout[2 * i + 2] != fin[2 + i] + fin[8 + i];
    }
    CHECK(fout[0] == -1.0f);
    CHECK(bad == 0);
}

TEST_CASE("vload_half reads every half exactly", "[kernels][vload][half]") {
    Program prog(R"(
kernel void k(global const half* h, global float* f, global float* f4, global float* fa3) {
    size_t i = get_global_id(0);
    f[i] = vload_half(i, h);
    if (i % 4 == 0) vstore4(vload_half4(i / 4, h), i / 4, f4);
    if (i % 4 == 0) vstore3(vloada_half3(i / 4, h), i / 4, fa3);
}
)");
    std::vector<uint16_t> h(65536);
    for (size_t i = 0; i < h.size(); ++i)
        h[i] = static_cast<uint16_t>(i);
    Buffer bh(h), bf(65536 * 4), bf4(65536 * 4), bfa3(65536 * 4);
    cl_kernel k = prog.kernel("k");
    setArgs(k, bh, bf, bf4, bfa3);
    run1D(k, 65536);
    std::vector<float> f = bf.read<float>(65536), f4 = bf4.read<float>(65536),
                       fa3 = bfa3.read<float>(65536 / 4 * 3);
    size_t bad = 0;
    for (size_t i = 0; i < 65536; ++i) {
        double want = halfValue(static_cast<uint16_t>(i));
        auto same = [&](float got) {
            return std::isnan(want) ? std::isnan(got)
                                    : (got == want && std::signbit(got) == std::signbit(want));
        };
        bad += !same(f[i]);
        bad += !same(f4[i]);
        if (i % 4 != 3)
            bad += !same(fa3[i / 4 * 3 + i % 4]);
    }
    CHECK(bad == 0);
}

TEST_CASE("vstore_half rounds correctly in every mode", "[kernels][vload][half]") {
    const char* modes[] = {"", "_rte", "_rtz", "_rtp", "_rtn"};
    std::string src = "kernel void k(global const float* x, global half* h, uint n) {\n"
                      "  size_t i = get_global_id(0);\n";
    for (int m = 0; m < 5; ++m) {
        std::string off = std::to_string(m) + " * (size_t)n";
        src += std::string("  vstore_half") + modes[m] + "(x[i], i, h + 2 * " + off + ");\n";
        src += std::string("  if (i % 4 == 0) vstore_half4") + modes[m] +
               "(vload4(i / 4, x), i / 4, h + 2 * " + off + " + n);\n";
    }
    src += "}\n";
    Program prog(src);
    std::vector<float> x = {0.0f,       -0.0f,       1.0f,        65504.0f,     65519.99f,
                            65520.0f,   65536.0f,    1e10f,       -65520.0f,    -1e10f,
                            kInf,       -kInf,       kNan,        0x1p-24f,     0x1p-25f,
                            0x1.8p-25f, 0x1p-26f,    -0x1p-25f,   0x1.004p0f,   0x1.002p0f,
                            0x1.006p0f, 0x1.0021p0f, 0x1p-14f,    0x1.ff8p-15f, FLT_MIN,
                            1e-40f,     -1e-40f,     3.14159265f, -2.71828f,    1000.1f};
    Rng rng(11);
    while (x.size() < 4096) {
        uint32_t b = static_cast<uint32_t>(rng.next());
        if (x.size() % 2)
            b = (b & 0x8fffffffu) | 0x30000000u; // exponents in and around the half range
        float v;
        std::memcpy(&v, &b, 4);
        x.push_back(v);
    }
    const size_t n = x.size();
    Buffer bx(x), bh(5 * 2 * n * 2);
    cl_kernel k = prog.kernel("k");
    setArgs(k, bx, bh, static_cast<cl_uint>(n));
    run1D(k, n);
    std::vector<uint16_t> h = bh.read<uint16_t>(5 * 2 * n);
    size_t bad = 0;
    for (int m = 0; m < 5; ++m) {
        int mode = m == 0 ? 0 : m - 1;
        for (size_t i = 0; i < n; ++i) {
            uint16_t want = toHalf(x[i], mode);
            for (int vec = 0; vec < 2; ++vec) {
                uint16_t got = h[2 * m * n + vec * n + i];
                bool ok =
                    std::isnan(x[i]) ? ((got & 0x7c00) == 0x7c00 && (got & 0x3ff)) : got == want;
                if (!ok && bad++ < 10)
                    UNSCOPED_INFO("vstore_half" << (vec ? "4" : "") << modes[m] << "("
                                                << std::hexfloat << x[i] << ") = 0x" << std::hex
                                                << got << ", want 0x" << want << std::dec);
            }
        }
    }
    CHECK(bad == 0);
}

TEST_CASE("vstore_half from double rounds once", "[kernels][vload][half]") {
    if (!KernelEnv::get().fp64)
        return;
    Program prog(R"(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void k(global const double* x, global half* h, uint n) {
    size_t i = get_global_id(0);
    vstore_half_rte(x[i], i, h);
    vstore_half_rtz(x[i], i, h + n);
    vstore_half_rtp(x[i], i, h + 2 * n);
    vstore_half_rtn(x[i], i, h + 3 * n);
}
)");
    // Just above a half-way point: rounding through float first would tie and go to even.
    std::vector<double> x = {1.0 + 0x1p-11 + 0x1p-40,
                             1.0 + 0x1p-11,
                             1.0 + 3 * 0x1p-11 - 0x1p-45,
                             -(1.0 + 0x1p-11 + 0x1p-40),
                             65520.0 - 0x1p-30,
                             0x1p-25 + 0x1p-60,
                             1e300,
                             -1e-300,
                             0.1,
                             2.0 / 3.0};
    const size_t n = x.size();
    Buffer bx(x), bh(4 * n * 2);
    cl_kernel k = prog.kernel("k");
    setArgs(k, bx, bh, static_cast<cl_uint>(n));
    run1D(k, n);
    std::vector<uint16_t> h = bh.read<uint16_t>(4 * n);
    size_t bad = 0;
    for (int m = 0; m < 4; ++m)
        for (size_t i = 0; i < n; ++i)
            if (h[m * n + i] != toHalf(x[i], m) && bad++ < 10)
                UNSCOPED_INFO("mode " << m << " x=" << std::hexfloat << x[i] << " got 0x"
                                      << std::hex << h[m * n + i] << " want 0x" << toHalf(x[i], m)
                                      << std::dec);
    CHECK(bad == 0);
}

TEST_CASE("common and geometric builtins", "[kernels][common][geometric]") {
    Program prog(R"(
kernel void k(global float* o) {
    o[0] = clamp(5.0f, 1.0f, 3.0f);
    o[1] = degrees(M_PI_F);
    o[2] = radians(180.0f);
    o[3] = mix(1.0f, 3.0f, 0.25f);
    o[4] = step(1.0f, 0.5f);
    o[5] = step(1.0f, 1.0f);
    o[6] = smoothstep(0.0f, 2.0f, 1.0f);
    o[7] = sign(-3.0f);
    o[8] = sign(0.0f);
    o[9] = dot((float4)(1, 2, 3, 4), (float4)(5, 6, 7, 8));
    float3 c = cross((float3)(1, 0, 0), (float3)(0, 1, 0));
    o[10] = c.x; o[11] = c.y; o[12] = c.z;
    o[13] = length((float3)(3, 4, 12));
    o[14] = distance((float2)(1, 1), (float2)(4, 5));
    float4 nv = normalize((float4)(0, 3, 0, 4));
    o[15] = nv.y; o[16] = nv.w;
    o[17] = fast_length((float2)(3, 4));
    o[18] = length((float2)(3e30f, 4e30f));
    o[19] = length((float2)(3e-30f, 4e-30f));
    float2 ni = normalize((float2)(INFINITY, 1.0f));
    o[20] = ni.x; o[21] = ni.y;
    float4 z = normalize((float4)(0.0f));
    o[22] = z.x + z.y + z.z + z.w;
    float3 m = max((float3)(1, 5, 3), 2.0f);
    o[23] = m.x + m.y + m.z;
    o[24] = sign(NAN);
    o[25] = fast_normalize((float2)(0, 2)).y;
}
)");
    Buffer bo(26 * 4);
    cl_kernel k = prog.kernel("k");
    setArgs(k, bo);
    run1D(k, 1);
    std::vector<float> o = bo.read<float>(26);
    auto near = [](float got, double want, double rel) {
        return std::fabs(got - want) <= rel * std::fabs(want) + 1e-30;
    };
    CHECK(o[0] == 3.0f);
    CHECK(near(o[1], 180.0, 1e-6));
    CHECK(near(o[2], 3.14159265358979, 1e-6));
    CHECK(o[3] == 1.5f);
    CHECK(o[4] == 0.0f);
    CHECK(o[5] == 1.0f);
    CHECK(o[6] == 0.5f);
    CHECK(o[7] == -1.0f);
    CHECK(o[8] == 0.0f);
    CHECK(o[9] == 70.0f);
    CHECK((o[10] == 0 && o[11] == 0 && o[12] == 1));
    CHECK(near(o[13], 13.0, 1e-6));
    CHECK(near(o[14], 5.0, 1e-6));
    CHECK((near(o[15], 0.6, 1e-6) && near(o[16], 0.8, 1e-6)));
    CHECK(near(o[17], 5.0, 1e-3));
    CHECK(near(o[18], 5e30, 1e-6));  // no overflow in the squares
    CHECK(near(o[19], 5e-30, 1e-6)); // no underflow in the squares
    CHECK((o[20] == 1.0f && o[21] == 0.0f));
    CHECK(o[22] == 0.0f);
    CHECK(o[23] == 10.0f);
    CHECK(o[24] == 0.0f);
    CHECK(near(o[25], 1.0, 1e-3));
}

TEST_CASE("geometric builtins at the ends of the range", "[kernels][geometric]") {
    // normalize of float vectors whose length exceeds FLT_MAX came back as zeros (the length
    // overflowed to infinity), and length/distance of double3 read the vector's undefined 4th lane.
    Program prog(R"(
kernel void k(global const float* x, global float* o) {
    float big = x[0]; // 3e38f: the squares overflow float, the length exceeds FLT_MAX
    float2 n2 = normalize((float2)(big, big));
    float3 n3 = normalize((float3)(-big, 0.0f, big));
    float4 n4 = normalize((float4)(big, 1e11f, -big, big));
    o[0] = n2.x; o[1] = n2.y;
    o[2] = n3.x; o[3] = n3.y; o[4] = n3.z;
    o[5] = n4.x; o[6] = n4.y; o[7] = n4.z; o[8] = n4.w;
}
)");
    Buffer bx(std::vector<float>{3e38f});
    Buffer bo(9 * 4);
    cl_kernel k = prog.kernel("k");
    setArgs(k, bx, bo);
    run1D(k, 1);
    std::vector<float> o = bo.read<float>(9);
    auto near = [](double got, double want, double rel) {
        return std::fabs(got - want) <= rel * std::fabs(want) + 1e-300;
    };
    const double r2 = std::sqrt(0.5);
    CHECK((near(o[0], r2, 1e-6) && near(o[1], r2, 1e-6)));
    CHECK((near(o[2], -r2, 1e-6) && o[3] == 0.0f && near(o[4], r2, 1e-6)));
    CHECK((near(o[5], 1 / std::sqrt(3.0), 1e-6) && near(o[6], 1e11 / 3e38 / std::sqrt(3.0), 1e-5) &&
           near(o[7], -1 / std::sqrt(3.0), 1e-6) && near(o[8], 1 / std::sqrt(3.0), 1e-6)));

    if (!KernelEnv::get().fp64)
        return;
    Program progD(R"(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void k(global const double* x, global double* o) {
    double t = x[0]; // 2^-23: tiny, but far from underflow
    double3 a = (double3)(-t, -t, -t);
    o[0] = length(a);
    o[1] = distance(a, (double3)(0.0));
    double h = x[1]; // DBL_MAX: the length overflows double
    double3 n = normalize((double3)(h, -h, 0.0));
    o[2] = n.x; o[3] = n.y; o[4] = n.z;
}
)");
    Buffer bxd(std::vector<double>{0x1p-23, DBL_MAX});
    Buffer bod(5 * 8);
    cl_kernel kd = progD.kernel("k");
    setArgs(kd, bxd, bod);
    run1D(kd, 1);
    std::vector<double> d = bod.read<double>(5);
    CHECK(near(d[0], std::sqrt(3.0) * 0x1p-23, 1e-15));
    CHECK(near(d[1], std::sqrt(3.0) * 0x1p-23, 1e-15));
    CHECK((near(d[2], r2, 1e-15) && near(d[3], -r2, 1e-15) && d[4] == 0.0));
}

TEST_CASE("__OPENCL_VERSION__ is the device's OpenCL version", "[kernels][preprocessor]") {
    // The OpenCL C specification requires the macro; clang leaves it to the platform.
    Program prog(R"(
kernel void k(global int* o) {
#ifdef __OPENCL_VERSION__
    o[0] = __OPENCL_VERSION__;
#else
    o[0] = -1;
#endif
    o[1] = __OPENCL_C_VERSION__;
}
)");
    Buffer bo(2 * 4);
    cl_kernel k = prog.kernel("k");
    setArgs(k, bo);
    run1D(k, 1);
    std::vector<int> o = bo.read<int>(2);
    char version[256] = {};
    REQUIRE(clGetDeviceInfo(KernelEnv::get().device, CL_DEVICE_VERSION, sizeof version, version,
                            nullptr) == CL_SUCCESS);
    int major = 0, minor = 0;
    REQUIRE(std::sscanf(version, "OpenCL %d.%d", &major, &minor) == 2);
    CHECK(o[0] == major * 100 + minor * 10);
    CHECK(o[1] >= 100);
    CHECK(o[1] <= o[0]);
}

TEST_CASE("__IMAGE_SUPPORT__ is 1 exactly where the device supports images",
          "[kernels][preprocessor]") {
    // The OpenCL C specification's predefined macro (CTS basic kernel_preprocessor_macros and
    // kernel_numeric_constants check it); clang predefines it for SPIR targets only, and the GCN
    // device builds for amdgcn: its kernels lacked it.
    Program prog(R"(
kernel void k(global int* o) {
#ifdef __IMAGE_SUPPORT__
    o[0] = __IMAGE_SUPPORT__;
#else
    o[0] = -1;
#endif
}
)");
    Buffer bo(4);
    cl_kernel k = prog.kernel("k");
    setArgs(k, bo);
    run1D(k, 1);
    cl_bool images = CL_FALSE;
    REQUIRE(clGetDeviceInfo(KernelEnv::get().device, CL_DEVICE_IMAGE_SUPPORT, sizeof images,
                            &images, nullptr) == CL_SUCCESS);
    CHECK(bo.read<int>(1)[0] == (images ? 1 : -1));
}

TEST_CASE("to_global/to_local/to_private/get_fence on generic pointers", "[kernels][generic]") {
    const KernelEnv& env = KernelEnv::get();
    cl_bool generic = CL_FALSE;
    REQUIRE(clGetDeviceInfo(env.device, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, sizeof generic,
                            &generic, nullptr) == CL_SUCCESS);
    if (env.platformName.find("Duet") != std::string::npos)
        REQUIRE(generic == CL_TRUE); // both Duet devices claim the generic address space
    if (!generic) {
        WARN("not run: the device has no OpenCL C 2.0 generic address space");
        return;
    }
    // Each generic pointer's answers as bits: to_global 1, to_local 2, to_private 4, and 8 when
    // get_fence says CLK_LOCAL_MEM_FENCE (16 for CLK_GLOBAL_MEM_FENCE). Pointers into global
    // buffers and program-scope variables, kernel-scope and argument __local blocks, private
    // arrays and scalars (one of them live across a barrier), and NULL; the casts back are
    // dereferenced.
    Program prog(kGenericKindsSource, "-cl-std=CL3.0");
    const size_t n = 256, local = 64;
    std::vector<int> g(n);
    for (size_t i = 0; i < n; ++i)
        g[i] = int(i * 11 % 97);
    Buffer bg(g), out(n * 16 * sizeof(int));
    cl_kernel k = prog.kernel("kinds");
    setArgs(k, bg, LocalBytes{local * sizeof(int)}, out);
    run1D(k, n, local);
    const std::vector<int> r = out.read<int>(n * 16);
    const int global = 1 | 16, localKind = 2 | 8, priv = 4 | 16;
    for (size_t i = 0; i < n; ++i) {
        INFO("work-item " << i);
        const int* o = &r[16 * i];
        const size_t li = i % local, next = i - li + (li + 1) % local;
        CHECK(o[0] == global);
        CHECK(o[1] == localKind);
        CHECK(o[2] == localKind);
        CHECK(o[3] == priv);
        CHECK(o[4] == 7);
        CHECK(o[5] == global);
        CHECK(o[6] == priv);
        CHECK(o[7] == g[i]);
        CHECK(o[8] == int(next * 3));
        CHECK(o[9] == int(i + (i & 3)));
        CHECK(o[10] == 5);
        CHECK(o[11] == (priv | int(i + 3) << 8));
        CHECK(o[12] == 1);
    }
}
