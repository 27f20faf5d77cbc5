// Conversion builtins convert_<T>[n][_sat][_rte|_rtz|_rtp|_rtn] (OpenCL C §6.4.3) for every
// pair of char..ulong, float, double, against exact host references (long double holds every
// source value exactly): saturation incl. NaN -> 0, every rounding mode, scalar and vectors.
#include "kernel_harness.hpp"
#include "convert_reference.hpp"

#include <cfloat>
#include <cmath>
#include <limits>
#include <sstream>

using namespace duet::test;

using namespace duet::test::ref;

namespace {
struct Variant {
    const TypeInfo* dst;
    bool sat;
    int mode;
    std::string fn(int width) const {
        return std::string("convert_") + dst->name + (width > 1 ? std::to_string(width) : "") +
               (sat ? "_sat" : "") + kModes[mode];
    }
};

void checkFrom(const TypeInfo& src, bool fp64) {
    std::vector<Variant> variants;
    for (const TypeInfo& d : kTypes) {
        if (!fp64 && d.bytes == 8 && d.kind == Kind::Float)
            continue;
        for (int sat = 0; sat < (d.kind == Kind::Int ? 2 : 1); ++sat)
            for (int m = 0; m < 5; ++m)
                variants.push_back({&d, sat != 0, m});
    }
    const size_t n = 48 * 40;
    std::vector<unsigned char> in = sourceData(src, n);
    // Output slot of variant j: n elements of 8 bytes (the widest destination).
    std::ostringstream s;
    if (fp64)
        s << "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    const int widths[] = {1, 3, 4, 16};
    for (int w : widths) {
        s << "kernel void c" << w << "(global const " << src.name
          << "* x, global uchar* out, uint n) {\n  size_t i = get_global_id(0);\n";
        std::string xv = w == 1 ? "x[i]" : "vload" + std::to_string(w) + "(i, x)";
        for (size_t j = 0; j < variants.size(); ++j) {
            std::string p = "(global " + std::string(variants[j].dst->name) + "*)(out + " +
                            std::to_string(j * n * 8) + "ul)";
            if (w == 1)
                s << "  (" << p << ")[i] = " << variants[j].fn(1) << "(" << xv << ");\n";
            else
                s << "  vstore" << w << "(" << variants[j].fn(w) << "(" << xv << "), i, " << p
                  << ");\n";
        }
        s << "}\n";
    }
    Program prog(s.str());
    Buffer bx(in.size(), in.data()), bout(variants.size() * n * 8);
    for (int w : widths) {
        cl_kernel k = prog.kernel("c" + std::to_string(w));
        std::vector<unsigned char> zero(variants.size() * n * 8, 0);
        setArgs(k, bx, bout, static_cast<cl_uint>(n));
        run1D(k, n / w);
        std::vector<unsigned char> out = bout.read<unsigned char>(zero.size());
        for (size_t j = 0; j < variants.size(); ++j) {
            const Variant& v = variants[j];
            size_t bad = 0;
            std::string first;
            for (size_t i = 0; i < n; ++i) {
                LD x = load(src, &in[i * src.bytes]);
                unsigned char want[8] = {};
                if (!expected(*v.dst, src, v.sat, v.mode, x, want))
                    continue;
                const unsigned char* got = &out[j * n * 8 + i * v.dst->bytes];
                bool same = std::memcmp(got, want, v.dst->bytes) == 0;
                if (!same && v.dst->kind == Kind::Float)
                    same = std::isnan(load(*v.dst, got)) && std::isnan(load(*v.dst, want));
                if (!same && bad++ == 0) {
                    std::ostringstream m;
                    m << std::hexfloat << "x = " << x << " got " << load(*v.dst, got) << " want "
                      << load(*v.dst, want);
                    first = m.str();
                }
            }
            INFO(v.fn(w) << "(" << src.name << (w > 1 ? std::to_string(w) : "") << "): " << bad
                         << " wrong of " << n << "; first: " << first);
            CHECK(bad == 0);
        }
    }
}

} // namespace

TEST_CASE("conversions from every integer type", "[kernels][convert]") {
    bool fp64 = KernelEnv::get().fp64;
    for (const TypeInfo& t : kTypes)
        if (t.kind == Kind::Int)
            checkFrom(t, fp64);
}

TEST_CASE("conversions from float", "[kernels][convert]") {
    checkFrom(kTypes[8], KernelEnv::get().fp64);
}

TEST_CASE("conversions from double", "[kernels][convert]") {
    if (KernelEnv::get().fp64)
        checkFrom(kTypes[9], true);
}
