// 3D images and 1D/2D image arrays on a real NVIDIA GPU (the lent host), sampled through the
// textures of their CUDA array copies: every sampler (normalized or not, each addressing mode,
// nearest and linear) on float, 8-bit normalized and 16-bit integer images, compared with the CPU
// device's results for the same coordinates (DUET_DEVICES=cpu,nvidia); then the images are
// rewritten (clEnqueueWriteImage, a kernel's writes, a fill) between launches, and the GPU's reads
// must follow. Skipped (77) where Duet has no NVIDIA device.
#define CATCH_CONFIG_RUNNER
#include "support/cl_test.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

cl_device_id firstDevice(cl_device_type type) {
    cl_device_id d = nullptr;
    cl_uint n = 0;
    if (clGetDeviceIDs(platformUnderTest(), type, 1, &d, &n) != CL_SUCCESS || n == 0)
        return nullptr;
    return d;
}

const char* kSource = R"CL(
#define SAMPLE(NAME, T, COORD, RT, READ)                                                          \
__kernel void NAME(read_only T img, sampler_t s, __global const float4* c, __global RT* out) { \
    size_t i = get_global_id(0);                                                               \
    out[i] = READ(img, s, COORD);                                                              \
}
SAMPLE(f3d, image3d_t, c[i], float4, read_imagef)
SAMPLE(f2da, image2d_array_t, c[i], float4, read_imagef)
SAMPLE(f1da, image1d_array_t, c[i].xy, float4, read_imagef)
SAMPLE(u3d, image3d_t, c[i], uint4, read_imageui)
SAMPLE(u2da, image2d_array_t, c[i], uint4, read_imageui)
SAMPLE(u1da, image1d_array_t, c[i].xy, uint4, read_imageui)
// Texel (x, y, z) becomes (x + 10y + 100z + v) / 1000 in every channel.
__kernel void stamp3d(write_only image3d_t img, float v) {
    int4 p = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);
    write_imagef(img, p, (float4)((p.x + 10 * p.y + 100 * p.z + v) / 1000.0f));
}
)CL";

/// A context and queue on one device, with the test program built for it.
struct On {
    cl_device_id device;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    cl_program program = nullptr;
    explicit On(cl_device_id d) : device(d) {
        cl_int err = CL_SUCCESS;
        context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        program = buildProgram(context, device, kSource, "-cl-std=CL3.0");
    }
    ~On() {
        clReleaseProgram(program);
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
    On(const On&) = delete;
};

struct Geometry {
    cl_mem_object_type type;
    const char* suffix; ///< of the kernels' names
    int size[3];        ///< width, height, depth or layers
    int dims;           ///< spatial dimensions
};
const Geometry kGeometries[] = {
    {CL_MEM_OBJECT_IMAGE3D, "3d", {19, 11, 7}, 3},
    {CL_MEM_OBJECT_IMAGE2D_ARRAY, "2da", {23, 9, 5}, 2},
    {CL_MEM_OBJECT_IMAGE1D_ARRAY, "1da", {37, 6, 1}, 1},
};

cl_mem makeImage(On& on, const Geometry& g, const cl_image_format& f, const void* texels) {
    cl_image_desc d{};
    d.image_type = g.type;
    d.image_width = size_t(g.size[0]);
    if (g.type == CL_MEM_OBJECT_IMAGE1D_ARRAY) {
        d.image_array_size = size_t(g.size[1]);
    } else {
        d.image_height = size_t(g.size[1]);
        (g.type == CL_MEM_OBJECT_IMAGE3D ? d.image_depth : d.image_array_size) = size_t(g.size[2]);
    }
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateImage(on.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &f, &d,
                             const_cast<void*>(texels), &err);
    REQUIRE(err == CL_SUCCESS);
    return m;
}

size_t texelCount(const Geometry& g) {
    return size_t(g.size[0]) * size_t(g.size[1]) * size_t(g.size[2]);
}

size_t channelsOf(const cl_image_format& f) {
    switch (f.image_channel_order) {
    case CL_RGBA:
    case CL_BGRA:
        return 4;
    case CL_RG:
        return 2;
    default:
        return 1;
    }
}

size_t texelBytes(const cl_image_format& f) {
    const size_t channels = channelsOf(f);
    switch (f.image_channel_data_type) {
    case CL_FLOAT:
        return 4 * channels;
    case CL_UNORM_INT8:
        return channels;
    default:
        return 2 * channels;
    }
}

std::vector<unsigned char> randomTexels(const Geometry& g, const cl_image_format& f,
                                        std::mt19937& rng) {
    std::vector<unsigned char> t(texelCount(g) * texelBytes(f));
    if (f.image_channel_data_type == CL_FLOAT) {
        for (size_t i = 0; i < t.size() / 4; ++i) {
            const float v = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
            std::memcpy(t.data() + 4 * i, &v, 4);
        }
    } else {
        for (unsigned char& b : t)
            b = static_cast<unsigned char>(rng());
    }
    return t;
}

struct Sampler {
    bool normalized;
    cl_addressing_mode addressing;
    cl_filter_mode filter;
};

std::vector<Sampler> allSamplers(bool linearToo) {
    std::vector<Sampler> out;
    for (bool n : {false, true})
        for (cl_addressing_mode a : {CL_ADDRESS_NONE, CL_ADDRESS_CLAMP_TO_EDGE, CL_ADDRESS_CLAMP,
                                     CL_ADDRESS_REPEAT, CL_ADDRESS_MIRRORED_REPEAT})
            for (cl_filter_mode f : {CL_FILTER_NEAREST, CL_FILTER_LINEAR}) {
                if ((!n && (a == CL_ADDRESS_REPEAT || a == CL_ADDRESS_MIRRORED_REPEAT)) ||
                    (!linearToo && f == CL_FILTER_LINEAR))
                    continue;
                out.push_back({n, a, f});
            }
    return out;
}

/// Coordinates inside the image for CL_ADDRESS_NONE (outside is undefined), well outside
/// otherwise; layers anywhere from -1 to layers + 1 (clamped by the spec).
std::vector<std::array<float, 4>> coordinates(const Geometry& g, const Sampler& s,
                                              std::mt19937& rng) {
    std::vector<std::array<float, 4>> out(512);
    const bool none = s.addressing == CL_ADDRESS_NONE;
    for (auto& c : out) {
        c = {0, 0, 0, 0};
        for (int k = 0; k < 3; ++k) {
            const float n = float(g.size[k]);
            if (k >= g.dims) { // the layer coordinate: unnormalized, rounded
                c[size_t(k)] = std::uniform_real_distribution<float>(-1.0f, n + 1.0f)(rng);
                continue;
            }
            const float lo = none ? 0.5f : -2.5f * n, hi = none ? n - 0.5f : 3.5f * n;
            float u = std::uniform_real_distribution<float>(lo, hi)(rng);
            // Not within 1/64 texel of a texel's edge: there the texture unit's fixed-point
            // coordinates may pick the neighbour a float floor() does not (seen on an H200 at
            // y = 0.636364 of 11 texels, 7.000004).
            if (const float frac = u - std::floor(u); frac < 1.0f / 64 || frac > 63.0f / 64)
                u += 1.0f / 32;
            c[size_t(k)] = s.normalized ? u / n : u;
        }
    }
    return out;
}

/// Runs `kernel` over `coords` on `on` and returns the 4 x 32-bit results of each.
std::vector<uint32_t> run(On& on, const std::string& kernel, cl_mem image, const Sampler& s,
                          const std::vector<std::array<float, 4>>& coords) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(on.program, kernel.c_str(), &err);
    REQUIRE(err == CL_SUCCESS);
    cl_sampler smp = clCreateSampler(on.context, s.normalized, s.addressing, s.filter, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem c =
        clCreateBuffer(on.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, coords.size() * 16,
                       const_cast<std::array<float, 4>*>(coords.data()), &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem out = clCreateBuffer(on.context, CL_MEM_WRITE_ONLY, coords.size() * 16, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof image, &image));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof smp, &smp));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof c, &c));
    REQUIRE_CL(clSetKernelArg(k, 3, sizeof out, &out));
    const size_t n = coords.size();
    REQUIRE_CL(clEnqueueNDRangeKernel(on.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    std::vector<uint32_t> got(4 * n);
    REQUIRE_CL(
        clEnqueueReadBuffer(on.queue, out, CL_TRUE, 0, 16 * n, got.data(), 0, nullptr, nullptr));
    clReleaseMemObject(out);
    clReleaseMemObject(c);
    clReleaseSampler(smp);
    clReleaseKernel(k);
    return got;
}

/// GPU against CPU: integers exactly; floats within 2^-20 for nearest (the same texel, converted
/// by the texture unit), and for linear filtering within 2^-7 of the largest sample (1 here),
/// the bound the Khronos CTS holds GPUs' 8-bit filtering weights to.
void compare(const std::vector<uint32_t>& gpu, const std::vector<uint32_t>& cpu, bool integer,
             const Sampler& s, const std::vector<std::array<float, 4>>& coords,
             const std::string& what) {
    REQUIRE(gpu.size() == cpu.size());
    const float tolerance = s.filter == CL_FILTER_LINEAR ? 1.0f / 128 : 1.0f / (1 << 20);
    int failures = 0;
    for (size_t i = 0; i < gpu.size() && failures < 5; ++i) {
        float g = 0, c = 0;
        std::memcpy(&g, &gpu[i], 4);
        std::memcpy(&c, &cpu[i], 4);
        const bool same = integer ? gpu[i] == cpu[i] : std::fabs(g - c) <= tolerance;
        if (same)
            continue;
        ++failures;
        const auto& at = coords[i / 4];
        INFO(what << " normalized " << s.normalized << " addressing 0x" << std::hex << s.addressing
                  << " filter 0x" << s.filter << std::dec << " at (" << at[0] << ", " << at[1]
                  << ", " << at[2] << ") channel " << i % 4 << ": GPU "
                  << (integer ? double(gpu[i]) : double(g)) << ", CPU "
                  << (integer ? double(cpu[i]) : double(c)));
        CHECK(same);
    }
}

struct Devices {
    On gpu{firstDevice(CL_DEVICE_TYPE_GPU)};
    On cpu{firstDevice(CL_DEVICE_TYPE_CPU)};
};

/// Every sampler on one geometry and format: the GPU's reads against the CPU's.
void checkFormat(Devices& d, const Geometry& g, const cl_image_format& f, std::mt19937& rng,
                 cl_mem gpuImage, cl_mem cpuImage) {
    const bool integer = f.image_channel_data_type == CL_UNSIGNED_INT16;
    const std::string kernel = std::string(integer ? "u" : "f") + g.suffix;
    for (const Sampler& s : allSamplers(!integer)) {
        const auto coords = coordinates(g, s, rng);
        compare(run(d.gpu, kernel, gpuImage, s, coords), run(d.cpu, kernel, cpuImage, s, coords),
                integer, s, coords, kernel);
    }
}

} // namespace

int main(int argc, char** argv) {
    if (!firstDevice(CL_DEVICE_TYPE_GPU) || !firstDevice(CL_DEVICE_TYPE_CPU)) {
        std::printf("skipped: needs Duet's NVIDIA and CPU devices (DUET_DEVICES=cpu,nvidia, "
                    "libcuda and a GPU)\n");
        return 77;
    }
    return Catch::Session().run(argc, argv);
}

TEST_CASE("3D images and image arrays: every sampler reads on the GPU as on the CPU, and the "
          "reads follow the images' contents",
          "[nvidia-gpu][image]") {
    Devices d;
    std::mt19937 rng(13);
    // BGRA and R: the channel orders the texture path swizzles (builtins/nvidia/texture.h).
    const cl_image_format formats[] = {{CL_RGBA, CL_FLOAT},
                                       {CL_RGBA, CL_UNORM_INT8},
                                       {CL_RG, CL_UNSIGNED_INT16},
                                       {CL_BGRA, CL_UNORM_INT8},
                                       {CL_R, CL_FLOAT}};
    for (const Geometry& g : kGeometries)
        for (const cl_image_format& f : formats) {
            INFO("image " << g.suffix << " format 0x" << std::hex << f.image_channel_order << "/0x"
                          << f.image_channel_data_type);
            auto texels = randomTexels(g, f, rng);
            cl_mem gpuImage = makeImage(d.gpu, g, f, texels.data());
            cl_mem cpuImage = makeImage(d.cpu, g, f, texels.data());
            checkFormat(d, g, f, rng, gpuImage, cpuImage);
            // New contents through clEnqueueWriteImage: the GPU's next reads see them.
            texels = randomTexels(g, f, rng);
            const size_t origin[3] = {0, 0, 0},
                         region[3] = {size_t(g.size[0]), size_t(g.size[1]),
                                      g.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1
                                                                            : size_t(g.size[2])};
            for (On* on : {&d.gpu, &d.cpu})
                REQUIRE_CL(clEnqueueWriteImage(on->queue, on == &d.gpu ? gpuImage : cpuImage,
                                               CL_TRUE, origin, region, 0, 0, texels.data(), 0,
                                               nullptr, nullptr));
            checkFormat(d, g, f, rng, gpuImage, cpuImage);
            clReleaseMemObject(cpuImage);
            clReleaseMemObject(gpuImage);
        }
}

TEST_CASE("a kernel's writes to a 3D image and a fill reach the next launch's texture reads",
          "[nvidia-gpu][image]") {
    Devices d;
    const Geometry& g = kGeometries[0];
    const cl_image_format f{CL_RGBA, CL_FLOAT};
    std::mt19937 rng(5);
    auto texels = randomTexels(g, f, rng);
    cl_mem image = makeImage(d.gpu, g, f, texels.data());
    const Sampler nearest{false, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST};
    std::vector<std::array<float, 4>> centres;
    for (int z = 0; z < g.size[2]; ++z)
        for (int y = 0; y < g.size[1]; ++y)
            for (int x = 0; x < g.size[0]; ++x)
                centres.push_back({x + 0.5f, y + 0.5f, z + 0.5f, 0.0f});
    auto valueAt = [&](size_t i, float v) {
        const auto& c = centres[i];
        return (std::floor(c[0]) + 10 * std::floor(c[1]) + 100 * std::floor(c[2]) + v) / 1000.0f;
    };
    cl_int err = CL_SUCCESS;
    cl_kernel stamp = clCreateKernel(d.gpu.program, "stamp3d", &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(stamp, 0, sizeof image, &image));
    const size_t global[3] = {size_t(g.size[0]), size_t(g.size[1]), size_t(g.size[2])};
    run(d.gpu, "f3d", image, nearest, centres); // the array copy exists and is current
    for (float v : {1.0f, 2.0f, 3.0f}) {
        REQUIRE_CL(clSetKernelArg(stamp, 1, sizeof v, &v));
        REQUIRE_CL(clEnqueueNDRangeKernel(d.gpu.queue, stamp, 3, nullptr, global, nullptr, 0,
                                          nullptr, nullptr));
        const std::vector<uint32_t> got = run(d.gpu, "f3d", image, nearest, centres);
        int wrong = 0;
        for (size_t i = 0; i < centres.size(); ++i) {
            float r = 0;
            std::memcpy(&r, &got[4 * i], 4);
            wrong += std::fabs(r - valueAt(i, v)) > 1e-6f; // the kernel's division: 2.5 ulp
        }
        INFO("after the kernel's writes with v = " << v);
        CHECK(wrong == 0);
    }
    const float fill[4] = {0.25f, 0.5f, 0.75f, 1.0f};
    const size_t origin[3] = {0, 0, 0};
    REQUIRE_CL(clEnqueueFillImage(d.gpu.queue, image, fill, origin, global, 0, nullptr, nullptr));
    const std::vector<uint32_t> got = run(d.gpu, "f3d", image, nearest, centres);
    int wrong = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        float r = 0;
        std::memcpy(&r, &got[i], 4);
        wrong += r != fill[i % 4];
    }
    CHECK(wrong == 0);
    clReleaseKernel(stamp);
    clReleaseMemObject(image);
}
