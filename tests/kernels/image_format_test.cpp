// Kernel image tests per format: host write -> read_image{f,i,ui}, write_image{f,i,ui} -> host
// read, for every format clGetSupportedImageFormats lists, on every image type; read_write
// images; depth images; get_image_* queries.
#include "kernels/image_ref.hpp"
#include "support/cl_test.hpp"

#include <cstring>
#include <random>

using namespace duet::test;
using namespace duet::test::img;

namespace {

struct TypeCase {
    cl_mem_object_type type;
    const char* clType;
    const char* coord; ///< OpenCL C coordinate expression over x, y, z
    size_t extent[3];  ///< NDRange = image box: x, y (1D array: layers), z (2D array: layers)
};

const TypeCase kTypes[] = {
    {CL_MEM_OBJECT_IMAGE1D, "image1d_t", "x", {7, 1, 1}},
    {CL_MEM_OBJECT_IMAGE1D_BUFFER, "image1d_buffer_t", "x", {9, 1, 1}},
    {CL_MEM_OBJECT_IMAGE1D_ARRAY, "image1d_array_t", "(int2)(x, y)", {5, 3, 1}},
    {CL_MEM_OBJECT_IMAGE2D, "image2d_t", "(int2)(x, y)", {5, 4, 1}},
    {CL_MEM_OBJECT_IMAGE2D_ARRAY, "image2d_array_t", "(int4)(x, y, z, 0)", {4, 3, 3}},
    {CL_MEM_OBJECT_IMAGE3D, "image3d_t", "(int4)(x, y, z, 0)", {4, 3, 2}},
};

/// Creates an image of `tc`'s type and extent (and the buffer behind a 1D buffer image).
cl_mem makeImage(WithQueue& w, const TypeCase& tc, const cl_image_format& f, cl_mem_flags flags,
                 cl_mem* backing) {
    cl_image_desc d{};
    d.image_type = tc.type;
    d.image_width = tc.extent[0];
    switch (tc.type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        d.image_array_size = tc.extent[1];
        break;
    case CL_MEM_OBJECT_IMAGE2D:
        d.image_height = tc.extent[1];
        break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        d.image_height = tc.extent[1];
        d.image_array_size = tc.extent[2];
        break;
    case CL_MEM_OBJECT_IMAGE3D:
        d.image_height = tc.extent[1];
        d.image_depth = tc.extent[2];
        break;
    default:
        break;
    }
    *backing = nullptr;
    if (tc.type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
        *backing = w.buffer(tc.extent[0] * texelBytes(f));
        d.buffer = *backing;
    }
    cl_int err;
    cl_mem m = clCreateImage(w.context, flags, &f, &d, nullptr, &err);
    INFO("clCreateImage " << formatName(f) << " " << tc.clType << ": " << errorName(err));
    REQUIRE(err == CL_SUCCESS);
    return m;
}

const char* readFn(Kind k) {
    return k == Kind::Float ? "read_imagef" : k == Kind::Int ? "read_imagei" : "read_imageui";
}
const char* writeFn(Kind k) {
    return k == Kind::Float ? "write_imagef" : k == Kind::Int ? "write_imagei" : "write_imageui";
}
const char* vec4(Kind k) {
    return k == Kind::Float ? "float4" : k == Kind::Int ? "int4" : "uint4";
}

std::string kernelSource(const TypeCase& tc, Kind k, const char* type) {
    std::string s = "#pragma OPENCL EXTENSION cl_khr_3d_image_writes : enable\n"
                    "#define IDX int x = get_global_id(0), y = get_global_id(1), "
                    "z = get_global_id(2); size_t i = (z * get_global_size(1) + y) * "
                    "get_global_size(0) + x;\n";
    s += "kernel void rd(read_only " + std::string(type) + " im, global " + vec4(k) +
         "* out) { IDX (void)y; (void)z; out[i] = " + readFn(k) + "(im, " + tc.coord + "); }\n";
    s += "kernel void wr(write_only " + std::string(type) + " im, global const " + vec4(k) +
         "* in) { IDX (void)y; (void)z; " + writeFn(k) + "(im, " + tc.coord + ", in[i]); }\n";
    return s;
}

/// Random texel bytes that are valid values of the format (finite floats and halves).
std::vector<unsigned char> randomTexels(const cl_image_format& f, size_t count, std::mt19937& rng) {
    std::vector<unsigned char> out(count * texelBytes(f));
    const unsigned n = channels(f.image_channel_order),
                   cb = channelBytes(f.image_channel_data_type);
    std::uniform_real_distribution<float> real(-4.0f, 4.0f);
    for (size_t t = 0; t < count; ++t)
        for (unsigned c = 0; c < n; ++c) {
            unsigned char* p = out.data() + (t * n + c) * cb;
            if (f.image_channel_data_type == CL_FLOAT) {
                float v = real(rng);
                std::memcpy(p, &v, 4);
            } else if (f.image_channel_data_type == CL_HALF_FLOAT) {
                uint16_t h = floatToHalf(real(rng));
                std::memcpy(p, &h, 2);
            } else {
                for (unsigned b = 0; b < cb; ++b)
                    p[b] = static_cast<unsigned char>(rng());
            }
        }
    return out;
}

/// Values a kernel writes: in and beyond the format's range, so that saturation and rounding
/// are exercised.
std::vector<std::array<double, 4>> randomValues(const cl_image_format& f, size_t count,
                                                std::mt19937& rng) {
    std::vector<std::array<double, 4>> out(count);
    const cl_channel_type t = f.image_channel_data_type;
    std::uniform_real_distribution<float> unorm(-0.25f, 1.25f), snorm(-1.25f, 1.25f),
        wide(-1000.0f, 1000.0f);
    std::uniform_int_distribution<int32_t> i32(INT32_MIN, INT32_MAX), small(-70000, 70000);
    for (auto& v : out)
        for (double& c : v) {
            switch (t) {
            case CL_UNORM_INT8:
            case CL_UNORM_INT16:
                c = unorm(rng);
                break;
            case CL_SNORM_INT8:
            case CL_SNORM_INT16:
                c = snorm(rng);
                break;
            case CL_HALF_FLOAT:
            case CL_FLOAT:
                c = wide(rng);
                break;
            case CL_SIGNED_INT32:
            case CL_UNSIGNED_INT32:
                c = double(i32(rng));
                break;
            default:
                c = double(small(rng));
                break;
            }
            if (kindOf(t) == Kind::UInt)
                c = double(uint32_t(int32_t(c)));
        }
    return out;
}

size_t boxCount(const TypeCase& tc) {
    return tc.extent[0] * tc.extent[1] * tc.extent[2];
}

/// One format on one image type: both directions, values checked against the reference.
void roundTrip(WithQueue& w, const TypeCase& tc, const cl_image_format& f, std::mt19937& rng) {
    const Kind k = kindOf(f.image_channel_data_type);
    const size_t n = boxCount(tc), e = texelBytes(f);
    const bool srgb = isSrgb(f.image_channel_order);
    cl_program prog = buildProgram(w.context, w.device, kernelSource(tc, k, tc.clType));
    cl_int err;
    cl_kernel rd = clCreateKernel(prog, "rd", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel wr = clCreateKernel(prog, "wr", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem backing;
    cl_mem image = makeImage(w, tc, f, CL_MEM_READ_WRITE, &backing);
    const size_t origin[3] = {0, 0, 0};

    // Host write -> read_image*.
    std::vector<unsigned char> texels = randomTexels(f, n, rng);
    REQUIRE_CL(clEnqueueWriteImage(w.queue, image, CL_TRUE, origin, tc.extent, 0, 0, texels.data(),
                                   0, nullptr, nullptr));
    cl_mem out = w.buffer(n * 16);
    REQUIRE_CL(clSetKernelArg(rd, 0, sizeof image, &image));
    REQUIRE_CL(clSetKernelArg(rd, 1, sizeof out, &out));
    REQUIRE_CL(
        clEnqueueNDRangeKernel(w.queue, rd, 3, nullptr, tc.extent, nullptr, 0, nullptr, nullptr));
    if (k == Kind::Float) {
        auto got = w.read<float>(out, n * 4);
        for (size_t t = 0; t < n; ++t) {
            auto want = unpack(f, texels.data() + t * e);
            for (int c = 0; c < 4; ++c) {
                double tol = srgb ? 2e-6 : std::fabs(want[c]) * 1e-6;
                INFO(formatName(f) << " " << tc.clType << " read texel " << t << " channel " << c
                                   << ": got " << got[t * 4 + c] << ", want " << want[c]);
                CHECK(std::fabs(got[t * 4 + c] - want[c]) <= tol);
            }
        }
    } else {
        auto got = w.read<int32_t>(out, n * 4);
        for (size_t t = 0; t < n; ++t) {
            auto want = unpack(f, texels.data() + t * e);
            for (int c = 0; c < 4; ++c) {
                INFO(formatName(f) << " " << tc.clType << " read texel " << t << " channel " << c
                                   << ": got " << got[t * 4 + c] << ", want " << want[c]);
                CHECK(got[t * 4 + c] == int32_t(int64_t(want[c])));
            }
        }
    }

    // write_image* -> host read.
    auto values = randomValues(f, n, rng);
    std::vector<unsigned char> in(n * 16);
    for (size_t t = 0; t < n; ++t)
        for (int c = 0; c < 4; ++c) {
            if (k == Kind::Float) {
                float v = float(values[t][c]);
                std::memcpy(in.data() + (t * 4 + c) * 4, &v, 4);
            } else {
                int32_t v = int32_t(int64_t(values[t][c]));
                std::memcpy(in.data() + (t * 4 + c) * 4, &v, 4);
            }
        }
    cl_mem inBuf = w.buffer(in.size(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in.data());
    REQUIRE_CL(clSetKernelArg(wr, 0, sizeof image, &image));
    REQUIRE_CL(clSetKernelArg(wr, 1, sizeof inBuf, &inBuf));
    REQUIRE_CL(
        clEnqueueNDRangeKernel(w.queue, wr, 3, nullptr, tc.extent, nullptr, 0, nullptr, nullptr));
    std::vector<unsigned char> got(n * e);
    REQUIRE_CL(clEnqueueReadImage(w.queue, image, CL_TRUE, origin, tc.extent, 0, 0, got.data(), 0,
                                  nullptr, nullptr));
    std::vector<unsigned char> want(e);
    for (size_t t = 0; t < n; ++t) {
        std::array<double, 4> v = values[t];
        if (k == Kind::Float)
            for (double& c : v)
                c = float(c); // what the kernel received
        pack(f, v, want.data());
        for (size_t b = 0; b < e; ++b) {
            INFO(formatName(f) << " " << tc.clType << " write texel " << t << " byte " << b
                               << " value " << v[b / channelBytes(f.image_channel_data_type)]
                               << ": got " << int(got[t * e + b]) << ", want " << int(want[b]));
            // sRGB encoding: within one step of the 8-bit result (the spec's tolerance).
            if (srgb && (b % 4) < 3)
                CHECK(std::abs(int(got[t * e + b]) - int(want[b])) <= 1);
            else
                CHECK(got[t * e + b] == want[b]);
        }
    }
    clReleaseMemObject(inBuf);
    clReleaseMemObject(out);
    clReleaseMemObject(image);
    if (backing)
        clReleaseMemObject(backing);
    clReleaseKernel(rd);
    clReleaseKernel(wr);
    clReleaseProgram(prog);
}

std::vector<cl_image_format> formatsFor(WithQueue& w, cl_mem_object_type type) {
    cl_uint n = 0;
    REQUIRE_CL(clGetSupportedImageFormats(w.context, CL_MEM_READ_WRITE, type, 0, nullptr, &n));
    std::vector<cl_image_format> f(n);
    REQUIRE_CL(
        clGetSupportedImageFormats(w.context, CL_MEM_READ_WRITE, type, n, f.data(), nullptr));
    return f;
}

} // namespace

TEST_CASE("every supported format round-trips through kernels on every image type",
          "[kernels][image][kernel]") {
    WithQueue w;
    std::mt19937 rng(1234);
    for (const TypeCase& tc : kTypes) {
        auto formats = formatsFor(w, tc.type);
        REQUIRE(formats.size() >= 40);
        for (const cl_image_format& f : formats) {
            if (f.image_channel_order == CL_DEPTH)
                continue; // depth formats: image2d_depth_t, below
            // Every format on 2D images; on the other types a spread of orders and types.
            bool wanted = tc.type == CL_MEM_OBJECT_IMAGE2D ||
                          f.image_channel_data_type == CL_UNORM_INT8 ||
                          f.image_channel_data_type == CL_HALF_FLOAT ||
                          f.image_channel_data_type == CL_SIGNED_INT16 ||
                          f.image_channel_data_type == CL_UNSIGNED_INT32;
            if (!wanted)
                continue;
            SECTION(std::string(tc.clType) + " " + formatName(f)) {
                roundTrip(w, tc, f, rng);
            }
        }
    }
}

TEST_CASE("depth images read and write a float", "[kernels][image][kernel][depth]") {
    WithQueue w;
    std::mt19937 rng(99);
    const char* src = R"(
const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
kernel void rd2(read_only image2d_depth_t im, global float* out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_image_width(im) + x] = read_imagef(im, (int2)(x, y));
    out[64 + y * get_image_width(im) + x] = read_imagef(im, s, (float2)(x + 0.5f, y + 0.5f));
}
kernel void wr2(write_only image2d_depth_t im, global const float* in) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagef(im, (int2)(x, y), in[y * get_image_width(im) + x]);
}
kernel void rda(read_only image2d_array_depth_t im, global float* out) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    size_t i = (z * get_image_height(im) + y) * get_image_width(im) + x;
    out[i] = read_imagef(im, (int4)(x, y, z, 0));
    out[64 + i] = read_imagef(im, s, (float4)(x + 0.5f, y + 0.5f, z, 0.0f));
}
kernel void wra(write_only image2d_array_depth_t im, global const float* in) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    write_imagef(im, (int4)(x, y, z, 0), in[(z * get_image_height(im) + y) * get_image_width(im) + x]);
}
)";
    cl_program prog = buildProgram(w.context, w.device, src);
    for (cl_channel_type t : {CL_FLOAT, CL_UNORM_INT16})
        for (bool array : {false, true}) {
            const cl_image_format f{CL_DEPTH, t};
            cl_image_desc d{};
            d.image_type = array ? CL_MEM_OBJECT_IMAGE2D_ARRAY : CL_MEM_OBJECT_IMAGE2D;
            d.image_width = 4;
            d.image_height = 3;
            d.image_array_size = array ? 2 : 0;
            const size_t region[3] = {4, 3, array ? 2u : 1u}, origin[3] = {0, 0, 0};
            const size_t n = region[0] * region[1] * region[2];
            cl_int err;
            cl_mem image = clCreateImage(w.context, CL_MEM_READ_WRITE, &f, &d, nullptr, &err);
            REQUIRE(err == CL_SUCCESS);
            INFO(formatName(f) << (array ? " array" : ""));

            auto texels = randomTexels(f, n, rng);
            if (t == CL_FLOAT) // depth is in [0, 1]
                for (size_t i = 0; i < n; ++i) {
                    float v = std::uniform_real_distribution<float>(0, 1)(rng);
                    std::memcpy(texels.data() + i * 4, &v, 4);
                }
            REQUIRE_CL(clEnqueueWriteImage(w.queue, image, CL_TRUE, origin, region, 0, 0,
                                           texels.data(), 0, nullptr, nullptr));
            cl_mem out = w.buffer(128 * sizeof(float));
            cl_kernel rd = clCreateKernel(prog, array ? "rda" : "rd2", &err);
            REQUIRE(err == CL_SUCCESS);
            REQUIRE_CL(clSetKernelArg(rd, 0, sizeof image, &image));
            REQUIRE_CL(clSetKernelArg(rd, 1, sizeof out, &out));
            REQUIRE_CL(clEnqueueNDRangeKernel(w.queue, rd, 3, nullptr, region, nullptr, 0, nullptr,
                                              nullptr));
            auto got = w.read<float>(out, 128);
            for (size_t i = 0; i < n; ++i) {
                double want = unpack(f, texels.data() + i * texelBytes(f))[0];
                CHECK(std::fabs(got[i] - want) <= 1e-6 * std::fabs(want));
                CHECK(std::fabs(got[64 + i] - want) <= 1e-6 * std::fabs(want));
            }

            std::vector<float> values(n);
            for (float& v : values)
                v = std::uniform_real_distribution<float>(-0.1f, 1.1f)(rng);
            cl_mem in = w.buffer(n * 4, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, values.data());
            cl_kernel wr = clCreateKernel(prog, array ? "wra" : "wr2", &err);
            REQUIRE(err == CL_SUCCESS);
            REQUIRE_CL(clSetKernelArg(wr, 0, sizeof image, &image));
            REQUIRE_CL(clSetKernelArg(wr, 1, sizeof in, &in));
            REQUIRE_CL(clEnqueueNDRangeKernel(w.queue, wr, 3, nullptr, region, nullptr, 0, nullptr,
                                              nullptr));
            std::vector<unsigned char> back(n * texelBytes(f)), want(4);
            REQUIRE_CL(clEnqueueReadImage(w.queue, image, CL_TRUE, origin, region, 0, 0,
                                          back.data(), 0, nullptr, nullptr));
            for (size_t i = 0; i < n; ++i) {
                pack(f, {values[i], 0, 0, 1}, want.data());
                CHECK(std::memcmp(back.data() + i * texelBytes(f), want.data(), texelBytes(f)) ==
                      0);
            }
            clReleaseKernel(rd);
            clReleaseKernel(wr);
            clReleaseMemObject(in);
            clReleaseMemObject(out);
            clReleaseMemObject(image);
        }
    clReleaseProgram(prog);
}

TEST_CASE("read_write images read back what the kernel wrote", "[kernels][image][kernel]") {
    WithQueue w;
    const char* src = R"(
kernel void twice(read_write image2d_t im) {
    int2 c = (int2)(get_global_id(0), get_global_id(1));
    float4 v = read_imagef(im, c);
    write_imagef(im, c, v * 2.0f);
}
kernel void bump(read_write image3d_t im) {
    int4 c = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);
    write_imageui(im, c, read_imageui(im, c) + (uint4)(1, 2, 3, 4));
}
)";
    cl_program prog = buildProgram(w.context, w.device, src, "-cl-std=CL3.0");
    cl_int err;
    {
        const cl_image_format f{CL_RGBA, CL_FLOAT};
        std::vector<float> px(6 * 5 * 4);
        for (size_t i = 0; i < px.size(); ++i)
            px[i] = float(i) * 0.25f;
        cl_image_desc d{};
        d.image_type = CL_MEM_OBJECT_IMAGE2D;
        d.image_width = 6;
        d.image_height = 5;
        cl_mem im = clCreateImage(w.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &f, &d,
                                  px.data(), &err);
        REQUIRE(err == CL_SUCCESS);
        cl_kernel k = clCreateKernel(prog, "twice", &err);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof im, &im));
        const size_t g[2] = {6, 5}, origin[3] = {0, 0, 0}, region[3] = {6, 5, 1};
        REQUIRE_CL(clEnqueueNDRangeKernel(w.queue, k, 2, nullptr, g, nullptr, 0, nullptr, nullptr));
        std::vector<float> back(px.size());
        REQUIRE_CL(clEnqueueReadImage(w.queue, im, CL_TRUE, origin, region, 0, 0, back.data(), 0,
                                      nullptr, nullptr));
        for (size_t i = 0; i < px.size(); ++i)
            CHECK(back[i] == px[i] * 2.0f);
        clReleaseKernel(k);
        clReleaseMemObject(im);
    }
    {
        const cl_image_format f{CL_RGBA, CL_UNSIGNED_INT16};
        cl_image_desc d{};
        d.image_type = CL_MEM_OBJECT_IMAGE3D;
        d.image_width = 3;
        d.image_height = 2;
        d.image_depth = 2;
        std::vector<uint16_t> px(3 * 2 * 2 * 4);
        for (size_t i = 0; i < px.size(); ++i)
            px[i] = uint16_t(i * 1000 + 65000 * (i % 7 == 0)); // some saturate
        cl_mem im = clCreateImage(w.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &f, &d,
                                  px.data(), &err);
        REQUIRE(err == CL_SUCCESS);
        cl_kernel k = clCreateKernel(prog, "bump", &err);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof im, &im));
        const size_t g[3] = {3, 2, 2}, origin[3] = {0, 0, 0};
        REQUIRE_CL(clEnqueueNDRangeKernel(w.queue, k, 3, nullptr, g, nullptr, 0, nullptr, nullptr));
        std::vector<uint16_t> back(px.size());
        REQUIRE_CL(clEnqueueReadImage(w.queue, im, CL_TRUE, origin, g, 0, 0, back.data(), 0,
                                      nullptr, nullptr));
        for (size_t i = 0; i < px.size(); ++i)
            CHECK(back[i] == std::min<uint32_t>(65535, px[i] + 1 + i % 4));
        clReleaseKernel(k);
        clReleaseMemObject(im);
    }
    clReleaseProgram(prog);
}

TEST_CASE("32-bit channels read with the other type's function give their stored bits",
          "[kernels][image][kernel]") {
    // Undefined in the spec, but what GPUs and PoCL do and GPU codes rely on: a double kept as
    // a CL_RG/CL_FLOAT texel, read back with as_double2(read_imagei(...)). Duet returned 0.
    WithQueue w;
    const char* src = R"(
constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
kernel void bits(read_only image2d_t fl, read_only image2d_t in, global uint* o) {
    int x = get_global_id(0);
    int2 c = (int2)(x % 3, x / 3);
    int4 a = read_imagei(fl, s, c);   // sampled
    uint4 b = read_imageui(fl, c);    // sampler-less
    float4 f = read_imagef(in, s, c); // the other way: an integer image read as float
    o[6 * x + 0] = a.x; o[6 * x + 1] = a.y;
    o[6 * x + 2] = b.x; o[6 * x + 3] = b.y;
    o[6 * x + 4] = as_uint(f.x); o[6 * x + 5] = as_uint(f.y);
}
)";
    cl_program prog = buildProgram(w.context, w.device, src);
    const size_t n = 3 * 2;
    std::vector<float> fl(2 * n);
    std::vector<uint32_t> in(2 * n);
    for (size_t i = 0; i < 2 * n; ++i) {
        fl[i] = -1.5f * float(i) + 0.125f; // no integer conversion of these gives the bits
        in[i] = 0x3f800001u + uint32_t(i) * 0x01234567u;
    }
    cl_image_desc d{};
    d.image_type = CL_MEM_OBJECT_IMAGE2D;
    d.image_width = 3;
    d.image_height = 2;
    cl_int err;
    const cl_image_format ff{CL_RG, CL_FLOAT}, fi{CL_RG, CL_UNSIGNED_INT32};
    cl_mem imf =
        clCreateImage(w.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &ff, &d, fl.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem imi =
        clCreateImage(w.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &fi, &d, in.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem out = w.buffer(6 * n * sizeof(uint32_t));
    cl_kernel k = clCreateKernel(prog, "bits", &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof imf, &imf));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof imi, &imi));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof out, &out));
    REQUIRE_CL(clEnqueueNDRangeKernel(w.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    std::vector<uint32_t> got = w.read<uint32_t>(out, 6 * n);
    for (size_t x = 0; x < n; ++x) {
        uint32_t f0, f1;
        std::memcpy(&f0, &fl[2 * x], 4);
        std::memcpy(&f1, &fl[2 * x + 1], 4);
        INFO("texel " << x);
        CHECK(got[6 * x + 0] == f0);
        CHECK(got[6 * x + 1] == f1);
        CHECK(got[6 * x + 2] == f0);
        CHECK(got[6 * x + 3] == f1);
        CHECK(got[6 * x + 4] == in[2 * x]);
        CHECK(got[6 * x + 5] == in[2 * x + 1]);
    }
    clReleaseKernel(k);
    clReleaseMemObject(out);
    clReleaseMemObject(imi);
    clReleaseMemObject(imf);
    clReleaseProgram(prog);
}

TEST_CASE("get_image_* queries answer the image's geometry and format",
          "[kernels][image][kernel]") {
    WithQueue w;
    const char* src = R"(
kernel void q1(read_only image1d_t a, read_only image1d_buffer_t b, write_only image1d_array_t c,
               global int* o) {
    o[0] = get_image_width(a); o[1] = get_image_channel_order(a);
    o[2] = get_image_channel_data_type(a);
    o[3] = get_image_width(b); o[4] = get_image_channel_data_type(b);
    o[5] = get_image_width(c); o[6] = (int)get_image_array_size(c);
}
kernel void q2(read_only image2d_t a, write_only image2d_array_t b, read_only image3d_t c,
               read_only image2d_depth_t d, read_only image2d_array_depth_t e, global int* o) {
    int2 da = get_image_dim(a);
    o[0] = get_image_width(a); o[1] = get_image_height(a); o[2] = da.x; o[3] = da.y;
    o[4] = get_image_width(b); o[5] = get_image_height(b); o[6] = (int)get_image_array_size(b);
    int4 dc = get_image_dim(c);
    o[7] = get_image_width(c); o[8] = get_image_height(c); o[9] = get_image_depth(c);
    o[10] = dc.x; o[11] = dc.y; o[12] = dc.z; o[13] = dc.w;
    o[14] = get_image_width(d); o[15] = get_image_height(d); o[16] = get_image_channel_order(d);
    o[17] = get_image_channel_data_type(d);
    o[18] = (int)get_image_array_size(e); o[19] = get_image_dim(e).y;
    o[20] = get_image_channel_order(c); o[21] = get_image_channel_data_type(c);
}
)";
    cl_program prog = buildProgram(w.context, w.device, src);
    cl_int err;
    auto make = [&](cl_mem_object_type t, cl_image_format f, size_t wd, size_t h, size_t d,
                    size_t layers, cl_mem buffer = nullptr) {
        cl_image_desc desc{};
        desc.image_type = t;
        desc.image_width = wd;
        desc.image_height = h;
        desc.image_depth = d;
        desc.image_array_size = layers;
        desc.buffer = buffer;
        cl_mem m = clCreateImage(w.context, CL_MEM_READ_WRITE, &f, &desc, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        return m;
    };
    cl_mem buf = w.buffer(1024);
    cl_mem a1 = make(CL_MEM_OBJECT_IMAGE1D, {CL_RG, CL_SNORM_INT16}, 17, 0, 0, 0);
    cl_mem b1 = make(CL_MEM_OBJECT_IMAGE1D_BUFFER, {CL_R, CL_HALF_FLOAT}, 33, 0, 0, 0, buf);
    cl_mem c1 = make(CL_MEM_OBJECT_IMAGE1D_ARRAY, {CL_RGBA, CL_UNORM_INT8}, 5, 0, 0, 7);
    cl_mem a2 = make(CL_MEM_OBJECT_IMAGE2D, {CL_BGRA, CL_UNORM_INT8}, 11, 13, 0, 0);
    cl_mem b2 = make(CL_MEM_OBJECT_IMAGE2D_ARRAY, {CL_R, CL_FLOAT}, 6, 4, 0, 9);
    cl_mem c3 = make(CL_MEM_OBJECT_IMAGE3D, {CL_sRGBA, CL_UNORM_INT8}, 3, 5, 8, 0);
    cl_mem d2 = make(CL_MEM_OBJECT_IMAGE2D, {CL_DEPTH, CL_UNORM_INT16}, 21, 2, 0, 0);
    cl_mem e2 = make(CL_MEM_OBJECT_IMAGE2D_ARRAY, {CL_DEPTH, CL_FLOAT}, 2, 10, 0, 4);
    cl_mem out = w.buffer(64 * sizeof(int));

    cl_kernel k1 = clCreateKernel(prog, "q1", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem args1[] = {a1, b1, c1, out};
    for (cl_uint i = 0; i < 4; ++i)
        REQUIRE_CL(clSetKernelArg(k1, i, sizeof(cl_mem), &args1[i]));
    const size_t one = 1;
    REQUIRE_CL(clEnqueueNDRangeKernel(w.queue, k1, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
    auto o = w.read<int>(out, 7);
    CHECK(o == std::vector<int>{17, CL_RG, CL_SNORM_INT16, 33, CL_HALF_FLOAT, 5, 7});

    cl_kernel k2 = clCreateKernel(prog, "q2", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem args2[] = {a2, b2, c3, d2, e2, out};
    for (cl_uint i = 0; i < 6; ++i)
        REQUIRE_CL(clSetKernelArg(k2, i, sizeof(cl_mem), &args2[i]));
    REQUIRE_CL(clEnqueueNDRangeKernel(w.queue, k2, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
    o = w.read<int>(out, 22);
    CHECK(o == std::vector<int>{11,       13,
                                11,       13,
                                6,        4,
                                9,        3,
                                5,        8,
                                3,        5,
                                8,        0,
                                21,       2,
                                CL_DEPTH, CL_UNORM_INT16,
                                4,        10,
                                CL_sRGBA, CL_UNORM_INT8});
    for (cl_mem m : {a1, b1, c1, a2, b2, c3, d2, e2, out, buf})
        clReleaseMemObject(m);
    clReleaseKernel(k1);
    clReleaseKernel(k2);
    clReleaseProgram(prog);
}
