// Sampler tests: every addressing x filter x coordinate mode on 1D, 1D array, 2D, 2D array
// and 3D images against the host reference of §8; border colours with and without alpha;
// sRGB conversion before filtering; integer formats; sampler literals and integer coordinates.
#include "kernels/image_ref.hpp"
#include "support/cl_test.hpp"

#include <algorithm>
#include <map>
#include <random>

using namespace duet::test;
using namespace duet::test::img;

namespace {

struct Geometry {
    cl_mem_object_type type;
    const char* clType;
    int dims;     ///< spatial dimensions
    int layerArg; ///< index of the layer in the coordinate vector, -1 without
    int coordWidth;
    int size[3]; ///< width, height, depth
    int layers;
};

const Geometry kGeometries[] = {
    {CL_MEM_OBJECT_IMAGE1D, "image1d_t", 1, -1, 1, {7, 1, 1}, 1},
    {CL_MEM_OBJECT_IMAGE1D_ARRAY, "image1d_array_t", 1, 1, 2, {6, 1, 1}, 3},
    {CL_MEM_OBJECT_IMAGE2D, "image2d_t", 2, -1, 2, {5, 4, 1}, 1},
    {CL_MEM_OBJECT_IMAGE2D_ARRAY, "image2d_array_t", 2, 2, 4, {4, 5, 1}, 3},
    {CL_MEM_OBJECT_IMAGE3D, "image3d_t", 3, -1, 4, {4, 3, 3}, 1},
};

const char* coordExpr(int w) {
    return w == 1 ? "c[i].x" : w == 2 ? "c[i].xy" : "c[i]";
}

cl_mem makeImage(WithQueue& w, const Geometry& g, const cl_image_format& f, const void* data) {
    cl_image_desc d{};
    d.image_type = g.type;
    d.image_width = g.size[0];
    if (g.dims > 1)
        d.image_height = g.size[1];
    if (g.dims > 2)
        d.image_depth = g.size[2];
    if (g.layerArg >= 0)
        d.image_array_size = g.layers;
    cl_int err;
    cl_mem m = clCreateImage(w.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &f, &d,
                             const_cast<void*>(data), &err);
    REQUIRE(err == CL_SUCCESS);
    return m;
}

/// Coordinates for `sm`: a grid through texel centres and edges plus random points, inside
/// the image for CL_ADDRESS_NONE (outside is undefined there), well outside otherwise.
std::vector<std::array<float, 4>> coordinates(const Geometry& g, const SamplerDesc& sm,
                                              std::mt19937& rng) {
    std::vector<std::array<float, 4>> out;
    const bool none = sm.addressing == CL_ADDRESS_NONE;
    auto range = [&](int k) -> std::pair<float, float> {
        float n = float(g.size[k]);
        float lo = none ? (sm.filter == CL_FILTER_LINEAR ? 0.5f : 0.0f) : -2.5f * n;
        float hi = none ? (sm.filter == CL_FILTER_LINEAR ? n - 0.5f : n - 0.001f) : 3.5f * n;
        if (sm.normalized)
            return {lo / n, hi / n};
        return {lo, hi};
    };
    for (int i = 0; i < 160; ++i) {
        std::array<float, 4> c{0, 0, 0, 0};
        for (int k = 0; k < g.dims; ++k) {
            auto [lo, hi] = range(k);
            if (i < 40) {
                // Texel centres, quarter and edge positions.
                float n = float(g.size[k]);
                float u = std::clamp(float(i % 13) * 0.25f + float(k), lo * (sm.normalized ? n : 1),
                                     hi * (sm.normalized ? n : 1));
                c[k] = sm.normalized ? u / n : u;
            } else {
                c[k] = std::uniform_real_distribution<float>(lo, hi)(rng);
            }
        }
        if (g.layerArg >= 0)
            c[g.layerArg] =
                std::uniform_real_distribution<float>(-1.0f, float(g.layers) + 1.0f)(rng);
        out.push_back(c);
    }
    return out;
}

/// Runs `read_image<f|i|ui>(image, sampler, coord)` for each coordinate and compares with
/// the reference. `texels` are in the image's own layout (tightly packed).
/// Programs built so far in one test case, by source: a build costs far more than a launch.
struct ProgramCache {
    std::map<std::string, cl_program> programs;
    cl_program get(WithQueue& w, const std::string& src) {
        auto it = programs.find(src);
        if (it != programs.end())
            return it->second;
        return programs[src] = buildProgram(w.context, w.device, src);
    }
    ~ProgramCache() {
        for (auto& [src, p] : programs)
            clReleaseProgram(p);
    }
};

void checkSampling(WithQueue& w, ProgramCache& cache, const Geometry& g, const cl_image_format& f,
                   const std::vector<unsigned char>& texels, const SamplerDesc& sm,
                   std::mt19937& rng, double tolerance) {
    const Kind k = kindOf(f.image_channel_data_type);
    const char* fn = k == Kind::Float ? "read_imagef"
                     : k == Kind::Int ? "read_imagei"
                                      : "read_imageui";
    const char* rt = k == Kind::Float ? "float4" : k == Kind::Int ? "int4" : "uint4";
    std::string src = std::string("kernel void s(read_only ") + g.clType +
                      " im, sampler_t smp, global const float4* c, global " + rt +
                      "* out) { size_t i = get_global_id(0); out[i] = " + fn + "(im, smp, " +
                      coordExpr(g.coordWidth) + "); }\n";
    cl_program prog = cache.get(w, src);
    cl_int err;
    cl_kernel kern = clCreateKernel(prog, "s", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem image = makeImage(w, g, f, texels.data());
    cl_sampler smp = clCreateSampler(w.context, sm.normalized, sm.addressing, sm.filter, &err);
    REQUIRE(err == CL_SUCCESS);
    auto coords = coordinates(g, sm, rng);
    cl_mem cbuf =
        w.buffer(coords.size() * 16, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, coords.data());
    cl_mem out = w.buffer(coords.size() * 16);
    REQUIRE_CL(clSetKernelArg(kern, 0, sizeof image, &image));
    REQUIRE_CL(clSetKernelArg(kern, 1, sizeof smp, &smp));
    REQUIRE_CL(clSetKernelArg(kern, 2, sizeof cbuf, &cbuf));
    REQUIRE_CL(clSetKernelArg(kern, 3, sizeof out, &out));
    const size_t n = coords.size();
    REQUIRE_CL(clEnqueueNDRangeKernel(w.queue, kern, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    auto gotF = w.read<float>(out, n * 4);
    auto gotI = w.read<int32_t>(out, n * 4);

    const size_t e = texelBytes(f);
    const size_t rowBytes = g.size[0] * e;
    const size_t sliceBytes = rowBytes * (g.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : g.size[1]);
    const int zExtent = g.layerArg >= 0 ? g.layers : g.size[2];
    auto fetch = [&](int x, int y, int z) -> std::array<double, 4> {
        if (x < 0 || y < 0 || z < 0 || x >= g.size[0] || y >= g.size[1] || z >= zExtent)
            return {0, 0, 0, hasAlpha(f.image_channel_order) ? 0.0 : 1.0};
        return unpack(f, texels.data() + z * sliceBytes + y * rowBytes + x * e);
    };
    // Integer formats are only defined with nearest filtering.
    SamplerDesc ref = sm;
    // GPU texture units turn normalized coordinates into fixed point: at a texel edge (the grid
    // below puts points there), nearest filtering may pick either neighbour, as the Khronos CTS
    // allows. There the texel 10^-4 of a texel to either side, in each dimension, is accepted too.
    cl_uint vendor = 0;
    REQUIRE_CL(clGetDeviceInfo(w.device, CL_DEVICE_VENDOR_ID, sizeof vendor, &vendor, nullptr));
    const bool edgeEither = vendor == 0x10DE && sm.normalized && sm.filter == CL_FILTER_NEAREST;
    for (size_t i = 0; i < n; ++i) {
        float c[3] = {coords[i][0], coords[i][1], coords[i][2]};
        int layer = g.layerArg >= 0 ? layerIndex(coords[i][g.layerArg], g.layers) : 0;
        auto want = sample(ref, g.dims, g.size, c, layer, fetch);
        if (edgeEither) {
            // Each dimension on its own side of its edge: every combination.
            for (int sides = 0; sides < (1 << g.dims); ++sides) {
                float nudged[3] = {c[0], c[1], c[2]};
                for (int k = 0; k < g.dims; ++k)
                    nudged[k] += (sides >> k & 1 ? 1e-4f : -1e-4f) / float(g.size[k]);
                auto other = sample(ref, g.dims, g.size, nudged, layer, fetch);
                bool matches = true;
                for (int ch = 0; ch < 4; ++ch)
                    matches = matches && (k == Kind::Float
                                              ? std::fabs(gotF[i * 4 + ch] - other[ch]) <= tolerance
                                              : gotI[i * 4 + ch] == int32_t(int64_t(other[ch])));
                if (matches)
                    want = other;
            }
        }
        for (int ch = 0; ch < 4; ++ch) {
            INFO(
                g.clType << " " << formatName(f) << " normalized=" << sm.normalized
                         << " addressing=0x" << std::hex << sm.addressing << " filter=0x"
                         << sm.filter << std::dec << " coord (" << coords[i][0] << ", "
                         << coords[i][1] << ", " << coords[i][2] << ", " << coords[i][3]
                         << ") channel " << ch << ": got "
                         << (k == Kind::Float ? double(gotF[i * 4 + ch]) : double(gotI[i * 4 + ch]))
                         << ", want " << want[ch]);
            if (k == Kind::Float)
                CHECK(std::fabs(gotF[i * 4 + ch] - want[ch]) <= tolerance);
            else
                CHECK(gotI[i * 4 + ch] == int32_t(int64_t(want[ch])));
        }
    }
    clReleaseMemObject(cbuf);
    clReleaseMemObject(out);
    clReleaseMemObject(image);
    clReleaseSampler(smp);
    clReleaseKernel(kern);
}

std::vector<SamplerDesc> allSamplers() {
    std::vector<SamplerDesc> out;
    for (cl_bool norm : {CL_FALSE, CL_TRUE})
        for (cl_addressing_mode am : {CL_ADDRESS_NONE, CL_ADDRESS_CLAMP_TO_EDGE, CL_ADDRESS_CLAMP,
                                      CL_ADDRESS_REPEAT, CL_ADDRESS_MIRRORED_REPEAT})
            for (cl_filter_mode fm : {CL_FILTER_NEAREST, CL_FILTER_LINEAR}) {
                if (!norm && (am == CL_ADDRESS_REPEAT || am == CL_ADDRESS_MIRRORED_REPEAT))
                    continue; // invalid combination
                out.push_back({norm == CL_TRUE, am, fm});
            }
    return out;
}

std::vector<unsigned char> randomImage(const Geometry& g, const cl_image_format& f,
                                       std::mt19937& rng) {
    size_t n = size_t(g.size[0]) * g.size[1] * g.size[2] * g.layers;
    std::vector<unsigned char> t(n * texelBytes(f));
    if (f.image_channel_data_type == CL_FLOAT) {
        for (size_t i = 0; i < t.size() / 4; ++i) {
            float v = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
            std::memcpy(t.data() + i * 4, &v, 4);
        }
    } else if (f.image_channel_data_type == CL_HALF_FLOAT) {
        for (size_t i = 0; i < t.size() / 2; ++i) {
            uint16_t h = floatToHalf(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng));
            std::memcpy(t.data() + i * 2, &h, 2);
        }
    } else {
        for (auto& b : t)
            b = static_cast<unsigned char>(rng());
    }
    return t;
}

// Linear filtering: the reference filters in double; the device in float (the spec allows
// an implementation-defined precision, far coarser than this). GPUs filter in their texture
// units with 8-bit fractional weights (Duet's NVIDIA device reads through CUDA textures): for
// them the bound the Khronos CTS holds linear filtering to, 2^-7 relative to the largest sample
// (every sample here is at most 1 in magnitude).
/// Linear filtering's tolerance: the software filter is exact to float rounding; NVIDIA's texture
/// unit (the NVIDIA device samples through it, as NVIDIA's own OpenCL does) weighs texels with 8
/// fractional bits, an error of up to 1/512 of the values' range (2 here: [-1, 1]) for each
/// interpolated dimension: 1/128 in 1D and 2D, 3/256 in 3D (trilinear, seen at 0.0104 on an
/// H200 with SNORM_INT16 and half texels).
double linearTolerance(const WithQueue& w, const Geometry& g) {
    cl_uint vendor = 0;
    REQUIRE_CL(clGetDeviceInfo(w.device, CL_DEVICE_VENDOR_ID, sizeof vendor, &vendor, nullptr));
    return vendor == 0x10DE ? std::max(2, g.dims) / 256.0 : 2e-5;
}

} // namespace

TEST_CASE("every sampler mode on every image type matches the reference",
          "[kernels][image][sampler]") {
    WithQueue w;
    ProgramCache cache;
    std::mt19937 rng(7);
    const cl_image_format f{CL_RGBA, CL_FLOAT};
    for (const Geometry& g : kGeometries) {
        auto texels = randomImage(g, f, rng);
        for (const SamplerDesc& sm : allSamplers())
            checkSampling(w, cache, g, f, texels, sm, rng,
                          sm.filter == CL_FILTER_LINEAR ? linearTolerance(w, g) : 0.0);
    }
}

TEST_CASE("border colours, sRGB and normalized formats under filtering",
          "[kernels][image][sampler]") {
    WithQueue w;
    ProgramCache cache;
    std::mt19937 rng(8);
    const Geometry& g2 = kGeometries[2];
    const Geometry& g3 = kGeometries[4];
    const cl_image_format formats[] = {
        {CL_R, CL_FLOAT},                                     // border (0, 0, 0, 1): no alpha
        {CL_RG, CL_UNORM_INT16},                              // border (0, 0, 0, 1)
        {CL_BGRA, CL_UNORM_INT8},  {CL_sRGBA, CL_UNORM_INT8}, // linearised before filtering
        {CL_sBGRA, CL_UNORM_INT8}, {CL_RGBA, CL_SNORM_INT16}, {CL_RGBA, CL_HALF_FLOAT},
    };
    for (const cl_image_format& f : formats)
        for (const Geometry* g : {&g2, &g3}) {
            auto texels = randomImage(*g, f, rng);
            for (const SamplerDesc& sm : allSamplers())
                checkSampling(w, cache, *g, f, texels, sm, rng,
                              sm.filter == CL_FILTER_LINEAR ? linearTolerance(w, *g) : 2e-6);
        }
}

TEST_CASE("integer formats sample with nearest filtering and integer borders",
          "[kernels][image][sampler]") {
    WithQueue w;
    ProgramCache cache;
    std::mt19937 rng(9);
    for (const cl_image_format& f :
         {cl_image_format{CL_RGBA, CL_UNSIGNED_INT16}, cl_image_format{CL_R, CL_SIGNED_INT32},
          cl_image_format{CL_RG, CL_SIGNED_INT8}})
        for (const Geometry& g : kGeometries) {
            auto texels = randomImage(g, f, rng);
            for (const SamplerDesc& sm : allSamplers())
                if (sm.filter == CL_FILTER_NEAREST)
                    checkSampling(w, cache, g, f, texels, sm, rng, 0.0);
        }
}

TEST_CASE("sampler literals and integer coordinates", "[kernels][image][sampler]") {
    WithQueue w;
    const char* src = R"(
constant sampler_t global_smp = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
kernel void k(read_only image2d_t im, global float4* out) {
    const sampler_t local_smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
    out[0] = read_imagef(im, global_smp, (float2)(1.1f, -0.3f));
    out[1] = read_imagef(im, local_smp, (int2)(2, 1));
    out[2] = read_imagef(im, local_smp, (int2)(-1, 1));
    out[3] = read_imagef(im, local_smp, (float2)(3.7f, 2.2f));
}
)";
    std::mt19937 rng(10);
    const Geometry& g = kGeometries[2];
    const cl_image_format f{CL_RGBA, CL_FLOAT};
    auto texels = randomImage(g, f, rng);
    cl_program prog = buildProgram(w.context, w.device, src);
    cl_int err;
    cl_kernel k = clCreateKernel(prog, "k", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem image = makeImage(w, g, f, texels.data());
    cl_mem out = w.buffer(4 * 16);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof image, &image));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof out, &out));
    const size_t one = 1;
    REQUIRE_CL(clEnqueueNDRangeKernel(w.queue, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
    auto got = w.read<float>(out, 16);
    auto fetch = [&](int x, int y, int) -> std::array<double, 4> {
        if (x < 0 || y < 0 || x >= g.size[0] || y >= g.size[1])
            return {0, 0, 0, 0};
        return unpack(f, texels.data() + (y * g.size[0] + x) * 16);
    };
    const SamplerDesc repeatLinear{true, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR};
    const SamplerDesc clampNearest{false, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST};
    const float c0[3] = {1.1f, -0.3f, 0}, c1[3] = {2, 1, 0}, c2[3] = {-1, 1, 0},
                c3[3] = {3.7f, 2.2f, 0};
    std::array<double, 4> want[4] = {sample(repeatLinear, 2, g.size, c0, 0, fetch),
                                     sample(clampNearest, 2, g.size, c1, 0, fetch),
                                     sample(clampNearest, 2, g.size, c2, 0, fetch),
                                     sample(clampNearest, 2, g.size, c3, 0, fetch)};
    for (int i = 0; i < 4; ++i)
        for (int c = 0; c < 4; ++c) {
            INFO("read " << i << " channel " << c);
            CHECK(std::fabs(got[i * 4 + c] - want[i][c]) <= linearTolerance(w, g));
        }
    // The clamped read outside is the border colour, the integer read a texel exactly.
    CHECK(got[8] == 0.0f);
    CHECK(got[11] == 0.0f);
    clReleaseMemObject(image);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
}

TEST_CASE("images and samplers pass through helper functions, unoptimised and across linked "
          "programs",
          "[kernels][image][sampler]") {
    WithQueue w;
    const char* helperSrc = R"(
float4 fetch_twice(read_only image2d_t im, sampler_t s, float2 c) {
    return read_imagef(im, s, c) + read_imagef(im, s, c);
}
)";
    const char* kernelSrc = R"(
float4 fetch_twice(read_only image2d_t im, sampler_t s, float2 c);
kernel void k(read_only image2d_t im, sampler_t s, global float4* out) {
    sampler_t copy = s;
    out[get_global_id(0)] = fetch_twice(im, copy, (float2)(get_global_id(0) + 0.5f, 1.5f));
}
)";
    std::mt19937 rng(11);
    const Geometry& g = kGeometries[2];
    const cl_image_format f{CL_RGBA, CL_FLOAT};
    auto texels = randomImage(g, f, rng);
    cl_int err;
    cl_mem image = makeImage(w, g, f, texels.data());
    cl_sampler smp =
        clCreateSampler(w.context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &err);
    REQUIRE(err == CL_SUCCESS);
    for (const char* options : {"-cl-opt-disable", "-g -cl-opt-disable", ""}) {
        INFO("options: " << options);
        cl_program parts[2];
        const char* srcs[2] = {helperSrc, kernelSrc};
        for (int i = 0; i < 2; ++i) {
            parts[i] = clCreateProgramWithSource(w.context, 1, &srcs[i], nullptr, &err);
            REQUIRE(err == CL_SUCCESS);
            REQUIRE_CL(clCompileProgram(parts[i], 1, &w.device, options, 0, nullptr, nullptr,
                                        nullptr, nullptr));
        }
        cl_program prog =
            clLinkProgram(w.context, 1, &w.device, "", 2, parts, nullptr, nullptr, &err);
        INFO(buildLog(prog, w.device));
        REQUIRE(err == CL_SUCCESS);
        cl_kernel k = clCreateKernel(prog, "k", &err);
        REQUIRE(err == CL_SUCCESS);
        cl_mem out = w.buffer(5 * 16);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof image, &image));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof smp, &smp));
        REQUIRE_CL(clSetKernelArg(k, 2, sizeof out, &out));
        const size_t n = 5;
        REQUIRE_CL(
            clEnqueueNDRangeKernel(w.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        auto got = w.read<float>(out, 20);
        for (size_t x = 0; x < 5; ++x)
            for (int c = 0; c < 4; ++c) {
                float v;
                std::memcpy(&v, texels.data() + ((1 * g.size[0] + x) * 4 + c) * 4, 4);
                CHECK(got[x * 4 + c] == v + v);
            }
        clReleaseMemObject(out);
        clReleaseKernel(k);
        clReleaseProgram(prog);
        clReleaseProgram(parts[0]);
        clReleaseProgram(parts[1]);
    }
    clReleaseSampler(smp);
    clReleaseMemObject(image);
}
