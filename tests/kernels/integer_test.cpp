// Integer builtins (OpenCL C §6.15.3) for every integer type, scalar and vector widths 3 and 4,
// against 128-bit host references; edge values (min, max, 0, +-1) and random inputs.
#include "kernel_harness.hpp"
#include "integer_reference.hpp"

#include <cstdint>
#include <sstream>

using namespace duet::test;

using namespace duet::test::ref;

namespace {
void checkType(const IntType& t) {
    const int bytes = t.bits / 8;
    const size_t n = 12 * 256;
    std::vector<unsigned char> in[3];
    Rng rng(t.bits * 7 + t.isSigned);
    const I128 edges[] = {0, 1, -1, tmin(t), tmax(t), tmin(t) + 1, tmax(t) - 1, 2, 3, 7};
    for (int a = 0; a < 3; ++a) {
        in[a].resize(n * bytes);
        for (size_t i = 0; i < n; ++i) {
            I128 v;
            if (i < 1000)
                v = wrap(t, edges[(i / (a == 0 ? 1 : a == 1 ? 10 : 100)) % 10]);
            else
                v = wrap(t, (I128)(rng.next() >> (rng.next() % 64)));
            uint64_t raw = (uint64_t)v;
            std::memcpy(&in[a][i * bytes], &raw, bytes);
        }
    }
    // mul24/mad24: keep x and y small enough that the product is defined.
    bool is32 = t.bits == 32;
    const bool hasCtz = KernelEnv::get().openclC20;
    std::ostringstream s;
    for (int w : {1, 3, 4}) {
        std::string T = std::string(t.name) + (w > 1 ? std::to_string(w) : "");
        std::string U = std::string(t.uname) + (w > 1 ? std::to_string(w) : "");
        auto ld = [&](const char* p) {
            return w == 1 ? std::string(p) + "[i]"
                          : "vload" + std::to_string(w) + "(i, " + std::string(p) + ")";
        };
        s << "kernel void k" << w << "(global const " << t.name << "* a, global const " << t.name
          << "* b, global const " << t.name << "* c, global " << t.name << "* out, uint n) {\n"
          << "  size_t i = get_global_id(0);\n"
          << "  " << T << " x = " << ld("a") << ", y = " << ld("b") << ", z = " << ld("c")
          << ";\n  " << T << " lo = min(y, z), hi = max(y, z);\n";
        for (int f = 0; f < kNumFns; ++f) {
            std::string fn = kFns[f], call;
            if (fn == "abs")
                call = "(" + T + ")abs(x)";
            else if (fn == "abs_diff")
                call = "as_" + T + "(abs_diff(x, y))";
            else if (fn == "clamp")
                call = "clamp(x, lo, hi)";
            else if (fn == "ctz")
                call = hasCtz ? "ctz(x)" : "x"; // ctz is OpenCL C 2.0
            else if (fn == "clz" || fn == "popcount")
                call = fn + "(x)";
            else if (fn == "mad_hi" || fn == "mad_sat")
                call = fn + "(x, y, z)";
            else if (fn == "mul24")
                call = is32 ? "mul24(x >> 17, y >> 17)" : "x";
            else if (fn == "mad24")
                call = is32 ? "mad24(x >> 17, y >> 17, z)" : "x";
            else
                call = fn + "(x, y)";
            if (fn == "abs" && w > 1)
                call = "as_" + T + "(abs(x))";
            std::string out = "out + " + std::to_string(f) + " * (size_t)n";
            if (w == 1)
                s << "  (" << out << ")[i] = " << call << ";\n";
            else
                s << "  vstore" << w << "(" << call << ", i, " << out << ");\n";
        }
        s << "}\n";
    }
    const std::string options = hasCtz ? KernelEnv::get().clStd20 : std::string();
    Program prog(s.str(), options);
    Buffer ba(in[0].size(), in[0].data()), bb(in[1].size(), in[1].data()),
        bc(in[2].size(), in[2].data()), bout(kNumFns * n * bytes);
    for (int w : {1, 3, 4}) {
        cl_kernel k = prog.kernel("k" + std::to_string(w));
        setArgs(k, ba, bb, bc, bout, static_cast<cl_uint>(n));
        run1D(k, n / w);
        std::vector<unsigned char> out = bout.read<unsigned char>(kNumFns * n * bytes);
        for (int f = 0; f < kNumFns; ++f) {
            size_t bad = 0, checked = 0;
            std::string first;
            for (size_t i = 0; i < n; ++i) {
                I128 x = load(t, &in[0][i * bytes]), y = load(t, &in[1][i * bytes]),
                     z = load(t, &in[2][i * bytes]);
                std::string fn = kFns[f];
                if (fn == "mul24" || fn == "mad24") {
                    x = shr(x, 17);
                    y = shr(y, 17);
                }
                I128 want;
                if (!reference(t, f, x, y, z, want) || (fn == "ctz" && !hasCtz))
                    continue;
                ++checked;
                I128 got = load(t, &out[(f * n + i) * bytes]);
                if (wrap(t, want) != got && bad++ == 0)
                    first = "x=" + std::to_string((long long)x) +
                            " y=" + std::to_string((long long)y) +
                            " z=" + std::to_string((long long)z) + " got " +
                            std::to_string((long long)got) + " want " +
                            std::to_string((long long)wrap(t, want));
            }
            INFO(kFns[f] << "(" << t.name << ") width " << w << ": " << bad << " wrong of "
                         << checked << "; first: " << first);
            CHECK(bad == 0);
        }
    }
}

} // namespace

TEST_CASE("integer builtins on every integer type and width", "[kernels][integer]") {
    for (const IntType& t : kInts) {
        SECTION(t.name) {
            checkType(t);
        }
    }
}

TEST_CASE("upsample joins high and low halves", "[kernels][integer]") {
    Program prog("kernel void k(global const char* a, global const uchar* b, global short* s,"
                 " global ushort* us, global const int* c, global const uint* d,"
                 " global long* l, global ulong* ul, global const short* e,"
                 " global const ushort* f, global int* i32, global uint* u32) {\n"
                 "  size_t i = get_global_id(0);\n"
                 "  s[i] = upsample(a[i], b[i]);\n"
                 "  us[i] = upsample(as_uchar(a[i]), b[i]);\n"
                 "  l[i] = upsample(c[i], d[i]);\n"
                 "  ul[i] = upsample(as_uint(c[i]), d[i]);\n"
                 "  i32[i] = upsample(e[i], f[i]);\n"
                 "  u32[i] = upsample(as_ushort(e[i]), f[i]);\n"
                 "  if (i == 0) { int4 v = upsample((short4)(-1, 2, -3, 4), (ushort4)(5));"
                 " vstore4(v, 0, i32 + 1000); }\n}\n");
    const size_t n = 512;
    std::vector<int8_t> a(n);
    std::vector<uint8_t> b(n);
    std::vector<int32_t> c(n);
    std::vector<uint32_t> d(n);
    std::vector<int16_t> e(n);
    std::vector<uint16_t> f(n);
    Rng rng(3);
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = rng.next();
        a[i] = (int8_t)r;
        b[i] = (uint8_t)(r >> 8);
        c[i] = (int32_t)(r >> 16);
        d[i] = (uint32_t)(r >> 20);
        e[i] = (int16_t)(r >> 40);
        f[i] = (uint16_t)(r >> 48);
    }
    Buffer ba(a), bb(b), bs(n * 2), bus(n * 2), bc(c), bd(d), bl(n * 8), bul(n * 8), be(e), bf(f),
        bi(1004 * 4), bu(n * 4);
    cl_kernel k = prog.kernel("k");
    setArgs(k, ba, bb, bs, bus, bc, bd, bl, bul, be, bf, bi, bu);
    run1D(k, n);
    auto s = bs.read<int16_t>(n);
    auto us = bus.read<uint16_t>(n);
    auto l = bl.read<int64_t>(n);
    auto ul = bul.read<uint64_t>(n);
    auto i32 = bi.read<int32_t>(1004);
    auto u32 = bu.read<uint32_t>(n);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        bad += s[i] != (int16_t)((uint16_t)(uint8_t)a[i] << 8 | b[i]);
        bad += us[i] != (uint16_t)((uint16_t)(uint8_t)a[i] << 8 | b[i]);
        bad += l[i] != (int64_t)((uint64_t)(uint32_t)c[i] << 32 | d[i]);
        bad += ul[i] != ((uint64_t)(uint32_t)c[i] << 32 | d[i]);
        bad += i32[i] != (int32_t)((uint32_t)(uint16_t)e[i] << 16 | f[i]);
        bad += u32[i] != ((uint32_t)(uint16_t)e[i] << 16 | f[i]);
    }
    CHECK(bad == 0);
    CHECK(i32[1000] == (int32_t)0xffff0005);
    CHECK(i32[1001] == 0x00020005);
    CHECK(i32[1002] == (int32_t)0xfffd0005);
    CHECK(i32[1003] == 0x00040005);
}

TEST_CASE("division by zero and INT_MIN / -1 leave the process running", "[kernels][integer]") {
    // OpenCL C leaves these results undefined, but x86's div faults on them: a kernel once took
    // the whole process down with SIGFPE. The defined lanes around them must stay right.
    Program prog(R"(
kernel void k(global const int* x, global const int* y, global const long* lx,
              global const long* ly, global int* o, global long* lo) {
    size_t i = get_global_id(0);
    o[4 * i + 0] = x[i] / y[i];
    o[4 * i + 1] = x[i] % y[i];
    o[4 * i + 2] = (int)((uint)x[i] / (uint)y[i]);
    o[4 * i + 3] = (int)((uint)x[i] % (uint)y[i]);
    lo[2 * i + 0] = lx[i] / ly[i];
    lo[2 * i + 1] = lx[i] % ly[i];
    if (i == 0) {
        int4 v = vload4(0, x) / vload4(0, y);
        vstore4(v, 0, o + 16);
        vstore4(vload4(0, x) % vload4(0, y), 0, o + 20);
    }
}
)");
    const std::vector<int32_t> x = {INT32_MIN, 7, -7, 5};
    const std::vector<int32_t> y = {-1, 0, 3, 2};
    const std::vector<int64_t> lx = {INT64_MIN, 9, -9, 0};
    const std::vector<int64_t> ly = {-1, 0, 4, 0};
    Buffer bx(x), by(y), blx(lx), bly(ly), bo(24 * 4), blo(8 * 8);
    cl_kernel k = prog.kernel("k");
    setArgs(k, bx, by, blx, bly, bo, blo);
    run1D(k, 4); // reaching the reads below is the main check
    auto o = bo.read<int32_t>(24);
    auto lo = blo.read<int64_t>(8);
    // The defined lanes: -7 / 3, -7 % 3, 5 / 2, 5 % 2 and their unsigned forms; -9 / 4, -9 % 4.
    CHECK((o[8] == -2 && o[9] == -1));
    CHECK((o[10] == (int32_t)(0xfffffff9u / 3u) && o[11] == (int32_t)(0xfffffff9u % 3u)));
    CHECK((o[12] == 2 && o[13] == 1 && o[14] == 2 && o[15] == 1));
    CHECK((lo[4] == -2 && lo[5] == -1));
    CHECK((o[18] == -2 && o[19] == 2 && o[22] == -1 && o[23] == 1));
    // INT_MIN / 1 (unsigned) is defined too.
    CHECK((o[2] == (int32_t)(0x80000000u / 0xffffffffu) && o[3] == INT32_MIN));
}
