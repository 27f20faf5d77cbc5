// duet-bench's GPU-style kernels (local-memory FFT, float4 finite volumes, tiled transpose,
// saxpy): ordinary OpenCL as written for GPUs, not tuned to any CPU runtime.
#include "benchmarks.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <sstream>

namespace duet::bench {

using namespace duet::seeds;

namespace {

const char* const kPortableKernels = R"CLC(
// Radix-2 decimation-in-time FFT of FFT_N points per work-group, in __local memory: a
// bit-reversed load, FFT_LOG2N butterfly stages with a barrier after each, twiddles computed
// in place. Work-items stride over the butterflies, so any group size works.
#define FFT_N 1024
#define FFT_LOG2N 10

uint bit_reverse10(uint t)
{
    uint r = t;
    r = ((r >> 1) & 0x55555555u) | ((r & 0x55555555u) << 1);
    r = ((r >> 2) & 0x33333333u) | ((r & 0x33333333u) << 2);
    r = ((r >> 4) & 0x0F0F0F0Fu) | ((r & 0x0F0F0F0Fu) << 4);
    r = ((r >> 8) & 0x00FF00FFu) | ((r & 0x00FF00FFu) << 8);
    r = (r >> 16) | (r << 16);
    return r >> (32 - FFT_LOG2N);
}

__kernel void fft1024(__global const float2 *in, __global float2 *out, __local float2 *buf)
{
    const uint lid = (uint)get_local_id(0);
    const uint lsz = (uint)get_local_size(0);
    const size_t base = get_group_id(0) * FFT_N;
    for (uint t = lid; t < FFT_N; t += lsz)
        buf[bit_reverse10(t)] = in[base + t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s <= FFT_LOG2N; ++s) {
        const uint span = 1u << (s - 1);
        for (uint t = lid; t < FFT_N / 2; t += lsz) {
            uint j = t & (span - 1);
            uint i0 = ((t >> (s - 1)) << s) + j;
            uint i1 = i0 + span;
            float c;
            float sn = sincos(-M_PI_F * (float)j / (float)span, &c);
            float2 a = buf[i0];
            float2 b = buf[i1];
            float2 w = (float2)(b.x * c - b.y * sn, b.x * sn + b.y * c);
            buf[i0] = a + w;
            buf[i1] = a - w;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint t = lid; t < FFT_N; t += lsz)
        out[base + t] = buf[t];
}

// One explicit step of 2D Euler gas dynamics on a finite-volume grid: conserved state
// (rho, rho u, rho v, E) per cell as a float4, Rusanov fluxes through the four faces,
// transmissive borders (the neighbour across a border is the cell itself).
float4 fv_flux_x(float4 q, float gamma)
{
    float u = q.y / q.x;
    float p = (gamma - 1.0f) * (q.w - 0.5f * (q.y * q.y + q.z * q.z) / q.x);
    return (float4)(q.y, q.y * u + p, q.z * u, (q.w + p) * u);
}

float4 fv_flux_y(float4 q, float gamma)
{
    float v = q.z / q.x;
    float p = (gamma - 1.0f) * (q.w - 0.5f * (q.y * q.y + q.z * q.z) / q.x);
    return (float4)(q.z, q.y * v, q.z * v + p, (q.w + p) * v);
}

float fv_sound(float4 q, float gamma)
{
    float p = (gamma - 1.0f) * (q.w - 0.5f * (q.y * q.y + q.z * q.z) / q.x);
    return sqrt(gamma * fmax(p, 0.0f) / q.x);
}

float4 fv_rusanov_x(float4 l, float4 r, float gamma)
{
    float a = fmax(fabs(l.y / l.x) + fv_sound(l, gamma), fabs(r.y / r.x) + fv_sound(r, gamma));
    return 0.5f * (fv_flux_x(l, gamma) + fv_flux_x(r, gamma)) - 0.5f * a * (r - l);
}

float4 fv_rusanov_y(float4 l, float4 r, float gamma)
{
    float a = fmax(fabs(l.z / l.x) + fv_sound(l, gamma), fabs(r.z / r.x) + fv_sound(r, gamma));
    return 0.5f * (fv_flux_y(l, gamma) + fv_flux_y(r, gamma)) - 0.5f * a * (r - l);
}

__kernel void fv_step(__global const float4 *q, __global float4 *qn, uint nx, uint ny,
                      float dtdx, float dtdy, float gamma)
{
    int x = (int)get_global_id(0);
    int y = (int)get_global_id(1);
    if (x >= (int)nx || y >= (int)ny)
        return;
    int w = (int)nx;
    int xl = x > 0 ? x - 1 : x;
    int xr = x < w - 1 ? x + 1 : x;
    int yd = y > 0 ? y - 1 : y;
    int yu = y < (int)ny - 1 ? y + 1 : y;
    float4 c = q[y * w + x];
    float4 fl = fv_rusanov_x(q[y * w + xl], c, gamma);
    float4 fr = fv_rusanov_x(c, q[y * w + xr], gamma);
    float4 fd = fv_rusanov_y(q[yd * w + x], c, gamma);
    float4 fu = fv_rusanov_y(c, q[yu * w + x], gamma);
    qn[y * w + x] = c - dtdx * (fr - fl) - dtdy * (fu - fd);
}

// out = transpose(in) for a width x height matrix, through a 16x16 __local tile (one column
// of padding against bank conflicts); edge tiles are guarded.
#define TR_TILE 16
__kernel void transpose_tiled(__global const float *in, __global float *out, uint width,
                              uint height)
{
    __local float tile[TR_TILE][TR_TILE + 1];
    uint lx = (uint)get_local_id(0), ly = (uint)get_local_id(1);
    uint x = (uint)get_group_id(0) * TR_TILE + lx;
    uint y = (uint)get_group_id(1) * TR_TILE + ly;
    if (x < width && y < height)
        tile[ly][lx] = in[y * width + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    uint tx = (uint)get_group_id(1) * TR_TILE + lx;
    uint ty = (uint)get_group_id(0) * TR_TILE + ly;
    if (tx < height && ty < width)
        out[ty * height + tx] = tile[lx][ly];
}

__kernel void saxpy(__global const float *x, __global float *y, float a, uint n)
{
    uint i = (uint)get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}
)CLC";

Program buildPortable(Session& s) {
    const char* text = kPortableKernels;
    size_t length = std::char_traits<char>::length(text);
    cl_int err = CL_SUCCESS;
    Program program(clCreateProgramWithSource(s.context, 1, &text, &length, &err));
    check(err, "clCreateProgramWithSource(portable kernels)");
    err = clBuildProgram(program, 1, &s.device, "", nullptr, nullptr);
    if (err != CL_SUCCESS)
        throw ClError("clBuildProgram(portable kernels): " + buildLog(program, s.device), err);
    return program;
}

/// In-place iterative radix-2 FFT in double: the host reference for one 1024-point group.
void hostFft(std::vector<std::complex<double>>& a) {
    const size_t n = a.size();
    for (size_t i = 1, j = 0; i < n; ++i) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j)
            std::swap(a[i], a[j]);
    }
    for (size_t len = 2; len <= n; len <<= 1) {
        const double ang = -2.0 * M_PI / double(len);
        for (size_t i = 0; i < n; i += len)
            for (size_t k = 0; k < len / 2; ++k) {
                std::complex<double> w(std::cos(ang * double(k)), std::sin(ang * double(k)));
                std::complex<double> u = a[i + k], v = a[i + k + len / 2] * w;
                a[i + k] = u + v;
                a[i + k + len / 2] = u - v;
            }
    }
}

void benchFft(Session& s, cl_program program, const Config& cfg, Figures& out) {
    constexpr size_t kN = 1024;
    const size_t groups = cfg.fftGroups, points = groups * kN;
    Kernel kernel = createKernel(program, "fft1024");
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::vector<cl_float2> in(points);
    for (auto& v : in)
        v = {{unit(rng), unit(rng)}};
    const size_t bytes = points * sizeof(cl_float2);
    Buffer inBuf =
        makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in.data(), "fft in");
    Buffer outBuf = makeBuffer(s.context, CL_MEM_WRITE_ONLY, bytes, nullptr, "fft out");
    setArg(kernel, 0, inBuf.get());
    setArg(kernel, 1, outBuf.get());
    setLocalArg(kernel, 2, kN * sizeof(cl_float2));
    // 512 work-items (one butterfly each per stage) where the kernel may have them; fewer on a
    // device with smaller work-groups (the GCN device: 256), whose loops then take two each.
    size_t kernelMax = 0;
    check(clGetKernelWorkGroupInfo(kernel, s.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernelMax,
                                   &kernelMax, nullptr),
          "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    size_t local = 512;
    while (local > 1 && local > kernelMax)
        local /= 2;
    const size_t global = groups * local;
    Times times =
        timeRuns(s, cfg.repeats, [&] { enqueue(s.queue, kernel, 1, &global, &local, "fft1024"); });

    std::vector<cl_float2> got(points);
    readBuffer(s.queue, outBuf, bytes, got.data());
    // Every group against the host transform: error relative to the signal's norm (sqrt(N)
    // times the rms of a unit-range input), 1e-5 is ~100 float epsilons after 10 stages.
    std::vector<std::complex<double>> ref(kN);
    double worst = 0;
    for (size_t g = 0; g < groups; ++g) {
        for (size_t i = 0; i < kN; ++i)
            ref[i] = {in[g * kN + i].s[0], in[g * kN + i].s[1]};
        hostFft(ref);
        double norm = 0;
        for (size_t i = 0; i < kN; ++i)
            norm += std::norm(ref[i]);
        norm = std::sqrt(norm / double(kN));
        for (size_t i = 0; i < kN; ++i) {
            std::complex<double> d(got[g * kN + i].s[0], got[g * kN + i].s[1]);
            double err = std::abs(d - ref[i]) / norm;
            if (!(err <= 1e-5)) {
                std::ostringstream o;
                o << "wrong result: group " << g << " bin " << i << " = (" << d.real() << ", "
                  << d.imag() << "), host (" << ref[i].real() << ", " << ref[i].imag() << ")";
                out["fft_gflops"] = failFigure(o.str());
                return;
            }
            worst = std::max(worst, err);
        }
    }
    std::ostringstream detail;
    detail << times.describe(cfg.repeats) << ", " << groups << " groups x " << local
           << ", max rel error " << worst;
    out["fft_gflops"] = okFigure(5.0 * double(points) * 10 / times.best * 1e-9, detail.str());
}

/// The host reference of fv_step, in double.
struct HostFv {
    double gamma;
    using Q = std::array<double, 4>;
    double pressure(const Q& q) const {
        return (gamma - 1) * (q[3] - 0.5 * (q[1] * q[1] + q[2] * q[2]) / q[0]);
    }
    double sound(const Q& q) const { return std::sqrt(gamma * std::max(pressure(q), 0.0) / q[0]); }
    Q flux(const Q& q, int axis) const {
        double p = pressure(q), vel = q[1 + axis] / q[0];
        Q f = {q[1 + axis], q[1] * vel, q[2] * vel, (q[3] + p) * vel};
        f[1 + axis] += p;
        return f;
    }
    Q rusanov(const Q& l, const Q& r, int axis) const {
        double a = std::max(std::fabs(l[1 + axis] / l[0]) + sound(l),
                            std::fabs(r[1 + axis] / r[0]) + sound(r));
        Q fl = flux(l, axis), fr = flux(r, axis), f;
        for (int c = 0; c < 4; ++c)
            f[c] = 0.5 * (fl[c] + fr[c]) - 0.5 * a * (r[c] - l[c]);
        return f;
    }
};

void benchFiniteVolume(Session& s, cl_program program, const Config& cfg, Figures& out) {
    const uint32_t n = cfg.fvSize;
    const float gamma = 1.4f, dtdx = 0.1f, dtdy = 0.1f;
    Kernel kernel = createKernel(program, "fv_step");
    // A smooth density and pressure field with a shear flow: every flux term is exercised.
    std::vector<cl_float4> q(size_t(n) * n);
    for (uint32_t y = 0; y < n; ++y)
        for (uint32_t x = 0; x < n; ++x) {
            float fx = float(x) / float(n), fy = float(y) / float(n);
            float rho = 1.0f + 0.5f * std::sin(6.28318f * fx) * std::cos(6.28318f * fy);
            float u = 0.5f * std::tanh(20.0f * (fy - 0.5f)), v = 0.1f * std::sin(6.28318f * fx);
            float p = 2.5f + 0.2f * std::cos(12.566f * fy);
            q[size_t(y) * n + x] = {
                {rho, rho * u, rho * v, p / (gamma - 1.0f) + 0.5f * rho * (u * u + v * v)}};
        }
    const size_t bytes = q.size() * sizeof(cl_float4);
    Buffer qBuf =
        makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, q.data(), "fv q");
    Buffer qnBuf = makeBuffer(s.context, CL_MEM_WRITE_ONLY, bytes, nullptr, "fv qn");
    setArg(kernel, 0, qBuf.get());
    setArg(kernel, 1, qnBuf.get());
    setArg(kernel, 2, cl_uint(n));
    setArg(kernel, 3, cl_uint(n));
    setArg(kernel, 4, dtdx);
    setArg(kernel, 5, dtdy);
    setArg(kernel, 6, gamma);
    const size_t global[2] = {n, n}, local[2] = {16, 16};
    Times times =
        timeRuns(s, cfg.repeats, [&] { enqueue(s.queue, kernel, 2, global, local, "fv_step"); });
    std::vector<cl_float4> got(q.size());
    readBuffer(s.queue, qnBuf, bytes, got.data());

    HostFv host{gamma};
    auto at = [&](int x, int y) {
        const cl_float4& v = q[size_t(y) * n + size_t(x)];
        return HostFv::Q{v.s[0], v.s[1], v.s[2], v.s[3]};
    };
    const int w = int(n);
    for (int y = 0; y < w; ++y)
        for (int x = 0; x < w; ++x) {
            HostFv::Q c = at(x, y);
            HostFv::Q fl = host.rusanov(at(std::max(x - 1, 0), y), c, 0);
            HostFv::Q fr = host.rusanov(c, at(std::min(x + 1, w - 1), y), 0);
            HostFv::Q fd = host.rusanov(at(x, std::max(y - 1, 0)), c, 1);
            HostFv::Q fu = host.rusanov(c, at(x, std::min(y + 1, w - 1)), 1);
            for (int k = 0; k < 4; ++k) {
                double want = c[k] - dtdx * (fr[k] - fl[k]) - dtdy * (fu[k] - fd[k]);
                double have = got[size_t(y) * n + size_t(x)].s[k];
                // Fluxes of magnitude ~10 differenced in float: 1e-5 absolute plus relative.
                if (!(std::fabs(have - want) <= 1e-5 + 1e-5 * std::fabs(want))) {
                    std::ostringstream o;
                    o << "wrong result: cell (" << x << ", " << y << ") component " << k << " = "
                      << have << ", host " << want;
                    out["fv_mcells"] = failFigure(o.str());
                    return;
                }
            }
        }
    std::ostringstream detail;
    detail << times.describe(cfg.repeats) << ", " << n << "x" << n << ", 16x16 groups";
    out["fv_mcells"] = okFigure(double(n) * n / times.best * 1e-6, detail.str());
}

void benchTranspose(Session& s, cl_program program, const Config& cfg, Figures& out) {
    const uint32_t w = cfg.transposeSize, h = cfg.transposeSize;
    Kernel kernel = createKernel(program, "transpose_tiled");
    std::vector<float> in(size_t(w) * h);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i & 0xFFFFFF);
    const size_t bytes = in.size() * sizeof(float);
    Buffer inBuf = makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in.data(),
                              "transpose in");
    Buffer outBuf = makeBuffer(s.context, CL_MEM_WRITE_ONLY, bytes, nullptr, "transpose out");
    setArg(kernel, 0, inBuf.get());
    setArg(kernel, 1, outBuf.get());
    setArg(kernel, 2, cl_uint(w));
    setArg(kernel, 3, cl_uint(h));
    const size_t global[2] = {w, h}, local[2] = {16, 16};
    Times times = timeRuns(s, cfg.repeats,
                           [&] { enqueue(s.queue, kernel, 2, global, local, "transpose_tiled"); });
    std::vector<float> got(in.size());
    readBuffer(s.queue, outBuf, bytes, got.data());
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
            if (got[size_t(x) * h + y] != in[size_t(y) * w + x]) {
                std::ostringstream o;
                o << "wrong result: out[" << x << "][" << y << "] = " << got[size_t(x) * h + y]
                  << ", want " << in[size_t(y) * w + x];
                out["transpose_gbs"] = failFigure(o.str());
                return;
            }
    std::ostringstream detail;
    detail << times.describe(cfg.repeats) << ", read + write counted";
    out["transpose_gbs"] = okFigure(2.0 * double(bytes) / times.best * 1e-9, detail.str());
}

void benchSaxpy(Session& s, cl_program program, const Config& cfg, Figures& out) {
    const size_t n = cfg.saxpyElements;
    const float a = 2.0f;
    Kernel kernel = createKernel(program, "saxpy");
    // Small integers: y grows by 2x per run and stays exact (below 2^24) over every run, so
    // the check can demand equality after all of them.
    std::vector<float> x(n), y(n);
    for (size_t i = 0; i < n; ++i) {
        x[i] = float(i & 15);
        y[i] = float((i >> 4) & 1023);
    }
    Buffer xBuf = makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float),
                             x.data(), "saxpy x");
    Buffer yBuf = makeBuffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float),
                             y.data(), "saxpy y");
    setArg(kernel, 0, xBuf.get());
    setArg(kernel, 1, yBuf.get());
    setArg(kernel, 2, a);
    setArg(kernel, 3, cl_uint(n));
    int runs = 0;
    Times times = timeRuns(s, cfg.repeats, [&] {
        enqueue(s.queue, kernel, 1, &n, nullptr, "saxpy");
        ++runs;
    });
    std::vector<float> got(n);
    readBuffer(s.queue, yBuf, n * sizeof(float), got.data());
    for (size_t i = 0; i < n; ++i) {
        float want = y[i] + float(runs) * a * x[i];
        if (got[i] != want) {
            std::ostringstream o;
            o << "wrong result after " << runs << " runs: y[" << i << "] = " << got[i] << ", want "
              << want;
            out["saxpy_gbs"] = failFigure(o.str());
            return;
        }
    }
    std::ostringstream detail;
    detail << times.describe(cfg.repeats) << ", 3 arrays counted";
    out["saxpy_gbs"] = okFigure(3.0 * double(n) * sizeof(float) / times.best * 1e-9, detail.str());
}

const char* const kImageKernel = R"CLC(
// Image sampling: each work-item averages four bilinear samples (normalized coordinates, clamp
// to edge, linear filtering) of an RGBA8 image, a quarter texel apart, into one float.
__kernel void resample(read_only image2d_t src, sampler_t smp, __global float *out, uint w,
                       uint h, float zoom)
{
    uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);
    if (x >= w || y >= h)
        return;
    float2 size = (float2)((float)w, (float)h);
    float2 c = ((float2)((float)x, (float)y) + 0.5f) * zoom / size;
    float2 d = 0.25f / size;
    float4 v = read_imagef(src, smp, c) + read_imagef(src, smp, c + (float2)(d.x, 0.0f)) +
               read_imagef(src, smp, c + (float2)(0.0f, d.y)) + read_imagef(src, smp, c + d);
    out[y * w + x] = dot(v, (float4)(0.0625f));
}
)CLC";

/// Bilinear sample of an RGBA8 image at normalized (u, v), clamp to edge, in double: the
/// reference for resample.
double hostBilinear(const std::vector<uint8_t>& img, uint32_t w, uint32_t h, double u, double v,
                    int channel) {
    const double x = u * w - 0.5, y = v * h - 0.5;
    const double fx = std::floor(x), fy = std::floor(y), a = x - fx, b = y - fy;
    auto texel = [&](double tx, double ty) {
        const uint32_t cx = uint32_t(std::clamp(tx, 0.0, double(w - 1)));
        const uint32_t cy = uint32_t(std::clamp(ty, 0.0, double(h - 1)));
        return img[(size_t(cy) * w + cx) * 4 + size_t(channel)] / 255.0;
    };
    return (1 - a) * (1 - b) * texel(fx, fy) + a * (1 - b) * texel(fx + 1, fy) +
           (1 - a) * b * texel(fx, fy + 1) + a * b * texel(fx + 1, fy + 1);
}

void benchImage(Session& s, const Config& cfg, Figures& out) {
    cl_bool images = CL_FALSE;
    check(clGetDeviceInfo(s.device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr),
          "clGetDeviceInfo(CL_DEVICE_IMAGE_SUPPORT)");
    if (!images) {
        out["image_gsamples"] = failFigure("the device has no image support");
        return;
    }
    const char* text = kImageKernel;
    cl_int err = CL_SUCCESS;
    Program program(clCreateProgramWithSource(s.context, 1, &text, nullptr, &err));
    check(err, "clCreateProgramWithSource(resample)");
    if (clBuildProgram(program, 1, &s.device, "", nullptr, nullptr) != CL_SUCCESS)
        throw ClError("clBuildProgram(resample): " + buildLog(program, s.device),
                      CL_BUILD_PROGRAM_FAILURE);
    Kernel kernel = createKernel(program, "resample");
    const uint32_t w = cfg.imageSize, h = cfg.imageSize;
    std::vector<uint8_t> texels(size_t(w) * h * 4);
    std::mt19937 rng(7);
    for (uint8_t& t : texels)
        t = uint8_t(rng() & 0xFF);
    const cl_image_format rgba8{CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = w;
    desc.image_height = h;
    Buffer image(clCreateImage(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &rgba8, &desc,
                               texels.data(), &err));
    check(err, "clCreateImage(resample source)");
    cl_sampler sampler =
        clCreateSampler(s.context, CL_TRUE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_LINEAR, &err);
    check(err, "clCreateSampler");
    std::unique_ptr<_cl_sampler, decltype(&clReleaseSampler)> keep(sampler, clReleaseSampler);
    Buffer outBuf = makeBuffer(s.context, CL_MEM_WRITE_ONLY, size_t(w) * h * sizeof(float), nullptr,
                               "resample out");
    const float zoom = 0.75f;
    setArg(kernel, 0, image.get());
    check(clSetKernelArg(kernel, 1, sizeof sampler, &sampler), "clSetKernelArg(sampler)");
    setArg(kernel, 2, outBuf.get());
    setArg(kernel, 3, cl_uint(w));
    setArg(kernel, 4, cl_uint(h));
    setArg(kernel, 5, zoom);
    const size_t global[2] = {w, h}, local[2] = {16, 16};
    Times times =
        timeRuns(s, cfg.repeats, [&] { enqueue(s.queue, kernel, 2, global, local, "resample"); });
    std::vector<float> got(size_t(w) * h);
    readBuffer(s.queue, outBuf, got.size() * sizeof(float), got.data());
    // Every 97th pixel against the double-precision reference. GPUs filter with 8-bit
    // fractions (a quarter of a unorm8 step at most here), so 0.01 leaves room for that and
    // nothing for a wrong texel.
    for (size_t i = 0; i < got.size(); i += 97) {
        const uint32_t x = uint32_t(i % w), y = uint32_t(i / w);
        const double u = (x + 0.5) * zoom / w, v = (y + 0.5) * zoom / h;
        const double du = 0.25 / w, dv = 0.25 / h;
        double want = 0;
        for (int c = 0; c < 4; ++c)
            want += hostBilinear(texels, w, h, u, v, c) + hostBilinear(texels, w, h, u + du, v, c) +
                    hostBilinear(texels, w, h, u, v + dv, c) +
                    hostBilinear(texels, w, h, u + du, v + dv, c);
        want *= 0.0625;
        if (!(std::fabs(got[i] - want) <= 0.01)) {
            std::ostringstream o;
            o << "wrong result: out[" << x << "][" << y << "] = " << got[i] << ", want " << want;
            out["image_gsamples"] = failFigure(o.str());
            return;
        }
    }
    std::ostringstream detail;
    detail << times.describe(cfg.repeats) << ", " << w << "x" << h << " RGBA8, 4 samples a pixel";
    out["image_gsamples"] = okFigure(4.0 * double(w) * h / times.best * 1e-9, detail.str());
}

const char* const kVolumeKernels = R"CLC(
// Volume sampling: each work-item averages four trilinear samples (normalized coordinates,
// clamp to edge, linear filtering) of an RGBA8 3D image, a quarter texel apart along x, y, z.
__kernel void resample3d(read_only image3d_t src, sampler_t smp, __global float *out, uint w,
                         uint h, uint d, float zoom)
{
    uint x = (uint)get_global_id(0), y = (uint)get_global_id(1), z = (uint)get_global_id(2);
    if (x >= w || y >= h || z >= d)
        return;
    float4 size = (float4)((float)w, (float)h, (float)d, 1.0f);
    float4 c = ((float4)((float)x, (float)y, (float)z, 0.0f) + 0.5f) * zoom / size;
    float4 q = 0.25f / size;
    float4 v = read_imagef(src, smp, c) + read_imagef(src, smp, c + (float4)(q.x, 0, 0, 0)) +
               read_imagef(src, smp, c + (float4)(0, q.y, 0, 0)) +
               read_imagef(src, smp, c + (float4)(0, 0, q.z, 0));
    out[((size_t)z * h + y) * w + x] = dot(v, (float4)(0.0625f));
}
// The 2D figure's kernel on layer 0 of a 2D image array (Duet on NVIDIA: a layered CUDA array,
// block-linear, where a 2D image is a pitch-linear texture): the layout's cost alone.
__kernel void resampleLayer(read_only image2d_array_t src, sampler_t smp, __global float *out,
                            uint w, uint h, uint d, float zoom)
{
    uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);
    if (x >= w || y >= h)
        return;
    float2 size = (float2)((float)w, (float)h);
    float2 c = ((float2)((float)x, (float)y) + 0.5f) * zoom / size;
    float2 q = 0.25f / size;
    float4 v = read_imagef(src, smp, (float4)(c, 0, 0)) +
               read_imagef(src, smp, (float4)(c.x + q.x, c.y, 0, 0)) +
               read_imagef(src, smp, (float4)(c.x, c.y + q.y, 0, 0)) +
               read_imagef(src, smp, (float4)(c + q, 0, 0));
    out[y * w + x] = dot(v, (float4)(0.0625f));
}
)CLC";

/// Trilinear sample of an RGBA8 volume at normalized (u, v, t), clamp to edge, in double.
double hostTrilinear(const std::vector<uint8_t>& img, const uint32_t n[3], const double at[3],
                     int channel) {
    double f[3], base[3];
    for (int k = 0; k < 3; ++k) {
        const double x = at[k] * n[k] - 0.5;
        base[k] = std::floor(x);
        f[k] = x - base[k];
    }
    double sum = 0;
    for (int corner = 0; corner < 8; ++corner) {
        double weight = 1;
        size_t index = 0, stride = 1;
        for (int k = 0; k < 3; ++k) {
            const int bit = corner >> k & 1;
            weight *= bit ? f[k] : 1 - f[k];
            index += size_t(std::clamp(base[k] + bit, 0.0, double(n[k] - 1))) * stride;
            stride *= n[k];
        }
        sum += weight * img[index * 4 + size_t(channel)] / 255.0;
    }
    return sum;
}

/// "volume_gsamples" (a w x w x w/4 3D image) or, with `layered`, "layered_gsamples" (the 2D
/// figure's w x w image as layer 0 of a 2D array of one layer).
void benchVolume(Session& s, const Config& cfg, Figures& out, bool layered) {
    const char* key = layered ? "layered_gsamples" : "volume_gsamples";
    cl_bool images = CL_FALSE;
    check(clGetDeviceInfo(s.device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr),
          "clGetDeviceInfo(CL_DEVICE_IMAGE_SUPPORT)");
    if (!images) {
        out[key] = failFigure("the device has no image support");
        return;
    }
    const char* text = kVolumeKernels;
    cl_int err = CL_SUCCESS;
    Program program(clCreateProgramWithSource(s.context, 1, &text, nullptr, &err));
    check(err, "clCreateProgramWithSource(resample3d)");
    if (clBuildProgram(program, 1, &s.device, "", nullptr, nullptr) != CL_SUCCESS)
        throw ClError("clBuildProgram(resample3d): " + buildLog(program, s.device),
                      CL_BUILD_PROGRAM_FAILURE);
    Kernel kernel = createKernel(program, layered ? "resampleLayer" : "resample3d");
    const uint32_t n[3] = {layered ? cfg.imageSize : cfg.volumeSize,
                           layered ? cfg.imageSize : cfg.volumeSize,
                           layered ? 1u : cfg.volumeSize / 4};
    std::vector<uint8_t> texels(size_t(n[0]) * n[1] * n[2] * 4);
    std::mt19937 rng(11);
    for (uint8_t& t : texels)
        t = uint8_t(rng() & 0xFF);
    const cl_image_format rgba8{CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc{};
    desc.image_type = layered ? CL_MEM_OBJECT_IMAGE2D_ARRAY : CL_MEM_OBJECT_IMAGE3D;
    desc.image_width = n[0];
    desc.image_height = n[1];
    (layered ? desc.image_array_size : desc.image_depth) = n[2];
    Buffer image(clCreateImage(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &rgba8, &desc,
                               texels.data(), &err));
    check(err, layered ? "clCreateImage(2D array)" : "clCreateImage(3D)");
    cl_sampler sampler =
        clCreateSampler(s.context, CL_TRUE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_LINEAR, &err);
    check(err, "clCreateSampler");
    std::unique_ptr<_cl_sampler, decltype(&clReleaseSampler)> keep(sampler, clReleaseSampler);
    const size_t pixels = size_t(n[0]) * n[1] * n[2];
    Buffer outBuf =
        makeBuffer(s.context, CL_MEM_WRITE_ONLY, pixels * sizeof(float), nullptr, "resample3d out");
    const float zoom = 0.75f;
    setArg(kernel, 0, image.get());
    check(clSetKernelArg(kernel, 1, sizeof sampler, &sampler), "clSetKernelArg(sampler)");
    setArg(kernel, 2, outBuf.get());
    for (cl_uint a = 0; a < 3; ++a)
        setArg(kernel, 3 + a, cl_uint(n[a]));
    setArg(kernel, 6, zoom);
    const size_t global[3] = {n[0], n[1], n[2]}, local[3] = {16, 16, 1};
    Times times = timeRuns(s, cfg.repeats, [&] {
        enqueue(s.queue, kernel, layered ? 2 : 3, global, local,
                layered ? "resampleLayer" : "resample3d");
    });
    std::vector<float> got(pixels);
    readBuffer(s.queue, outBuf, got.size() * sizeof(float), got.data());
    // Every 97th voxel against the double-precision reference (8-bit filter weights: 0.01).
    for (size_t i = 0; i < got.size(); i += 97) {
        const uint32_t p[3] = {uint32_t(i % n[0]), uint32_t(i / n[0] % n[1]),
                               uint32_t(i / (size_t(n[0]) * n[1]))};
        double want = 0;
        for (int sample = 0; sample < 4; ++sample) {
            double at[3];
            for (int k = 0; k < 3; ++k)
                at[k] = (p[k] + 0.5) * (layered && k == 2 ? 1.0 : zoom) / n[k] +
                        (sample == k + 1 ? 0.25 / n[k] : 0.0);
            if (layered) {
                at[2] = 0.5;
                if (sample == 3)
                    at[0] += 0.25 / n[0], at[1] += 0.25 / n[1];
            }
            for (int c = 0; c < 4; ++c)
                want += hostTrilinear(texels, n, at, c);
        }
        want *= 0.0625;
        if (!(std::fabs(got[i] - want) <= 0.01)) {
            std::ostringstream o;
            o << "wrong result: out[" << p[0] << "][" << p[1] << "][" << p[2] << "] = " << got[i]
              << ", want " << want;
            out[key] = failFigure(o.str());
            return;
        }
    }
    std::ostringstream detail;
    detail << times.describe(cfg.repeats) << ", " << n[0] << "x" << n[1] << "x" << n[2]
           << " RGBA8, 4 samples a pixel";
    out[key] = okFigure(4.0 * double(pixels) / times.best * 1e-9, detail.str());
}

} // namespace

void benchPortable(Session& s, const Config& cfg, Figures& out) {
    Program program = buildPortable(s);
    const std::pair<const char*, void (*)(Session&, cl_program, const Config&, Figures&)>
        benches[] = {{"fft_gflops", benchFft},
                     {"fv_mcells", benchFiniteVolume},
                     {"transpose_gbs", benchTranspose},
                     {"saxpy_gbs", benchSaxpy}};
    for (auto [key, fn] : benches) {
        try {
            fn(s, program, cfg, out);
        } catch (const std::exception& e) {
            out[key] = failFigure(e.what());
        }
    }
    try {
        benchImage(s, cfg, out);
    } catch (const std::exception& e) {
        out["image_gsamples"] = failFigure(e.what());
    }
    for (bool layered : {false, true}) {
        try {
            benchVolume(s, cfg, out, layered);
        } catch (const std::exception& e) {
            out[layered ? "layered_gsamples" : "volume_gsamples"] = failFigure(e.what());
        }
    }
}

} // namespace duet::bench
