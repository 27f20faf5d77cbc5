// duet-bench's divergent-loop kernels (escape-time Mandelbrot, CSR scalar SpMV): GPU-style
// OpenCL where each work-item's loop runs its own number of times.
#include "benchmarks.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace duet::bench {

using namespace duet::seeds;

namespace {

const char* const kDivergentKernels = R"CLC(
// Escape-time Mandelbrot: one work-item a pixel counts the iterations of z = z^2 + c until
// |z|^2 reaches 4 or max_iter. Pixels far outside the set leave after a few iterations, those
// inside run all max_iter, those near its border anything between. No contraction into fma,
// so that the host can compute every count exactly as the kernel does.
#pragma OPENCL FP_CONTRACT OFF
__kernel void mandel(__global uint *iters, uint width, uint height, float x0, float y0,
                     float step, uint max_iter)
{
    uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);
    if (x >= width || y >= height)
        return;
    float cr = x0 + (float)x * step;
    float ci = y0 + (float)y * step;
    float zr = 0.0f, zi = 0.0f, zr2 = 0.0f, zi2 = 0.0f;
    uint n = 0;
    while (n < max_iter && zr2 + zi2 < 4.0f) {
        zi = 2.0f * zr * zi + ci;
        zr = zr2 - zi2 + cr;
        zr2 = zr * zr;
        zi2 = zi * zi;
        ++n;
    }
    iters[y * width + x] = n;
}
// The pragma holds to the end of the source: the SpMV kernel below is contractable, as OpenCL C
// is by default (and as SHOC's is), so its multiply-add may be one fma.
#pragma OPENCL FP_CONTRACT ON

// y = A x for a CSR matrix, one work-item a row: the row's loop runs as many times as the row
// has nonzeros, and reads x through the column indices.
__kernel void spmv_csr_scalar(__global const float *values, __global const uint *columns,
                              __global const uint *row_start, __global const float *x,
                              __global float *y, uint rows)
{
    uint row = (uint)get_global_id(0);
    if (row >= rows)
        return;
    float sum = 0.0f;
    uint end = row_start[row + 1];
    for (uint k = row_start[row]; k < end; ++k)
        sum += values[k] * x[columns[k]];
    y[row] = sum;
}
)CLC";

Program buildDivergent(Session& s) {
    const char* text = kDivergentKernels;
    cl_int err = CL_SUCCESS;
    Program program(clCreateProgramWithSource(s.context, 1, &text, nullptr, &err));
    check(err, "clCreateProgramWithSource(divergent-loop kernels)");
    err = clBuildProgram(program, 1, &s.device, "", nullptr, nullptr);
    if (err != CL_SUCCESS)
        throw ClError("clBuildProgram(divergent-loop kernels): " + buildLog(program, s.device),
                      err);
    return program;
}

/// Timed runs of these rows: at least 20. A quick-size launch takes a few milliseconds, and
/// Duet's CPU device runs a kernel's quick code (no vectoriser, so nothing linearised) until
/// its launches have spent 20 ms or numbered 16: with three runs the quick sizes would time
/// that code, not the loops these rows are about.
int divergentRepeats(const Config& cfg) {
    return std::max(cfg.repeats, 20);
}

/// The host reference of one mandel pixel: the kernel's float operations in its order, each
/// rounded (the kernel turns contraction into fma off, and CMakeLists.txt this file's).
uint32_t hostMandel(float cr, float ci, uint32_t maxIter) {
    float zr = 0, zi = 0, zr2 = 0, zi2 = 0;
    uint32_t n = 0;
    while (n < maxIter && zr2 + zi2 < 4.0f) {
        zi = 2.0f * zr * zi + ci;
        zr = zr2 - zi2 + cr;
        zr2 = zr * zr;
        zi2 = zi * zi;
        ++n;
    }
    return n;
}

void benchMandel(Session& s, cl_program program, const Config& cfg, Figures& out) {
    const uint32_t n = cfg.mandelSize, maxIter = cfg.mandelIterations;
    // [-2.1, 0.5] x [-1.3, 1.3]: the whole set, a fifth of the pixels inside it (max_iter),
    // most outside leaving within ten iterations, and the border's long escapes between.
    const float x0 = -2.1f, y0 = -1.3f, step = 2.6f / float(n);
    Kernel kernel = createKernel(program, "mandel");
    const size_t pixels = size_t(n) * n, bytes = pixels * sizeof(cl_uint);
    Buffer outBuf = makeBuffer(s.context, CL_MEM_WRITE_ONLY, bytes, nullptr, "mandel out");
    setArg(kernel, 0, outBuf.get());
    setArg(kernel, 1, cl_uint(n));
    setArg(kernel, 2, cl_uint(n));
    setArg(kernel, 3, x0);
    setArg(kernel, 4, y0);
    setArg(kernel, 5, step);
    setArg(kernel, 6, cl_uint(maxIter));
    const size_t global[2] = {n, n}, local[2] = {16, 16};
    const int repeats = divergentRepeats(cfg);
    Times times =
        timeRuns(s, repeats, [&] { enqueue(s.queue, kernel, 2, global, local, "mandel"); });
    std::vector<cl_uint> got(pixels);
    readBuffer(s.queue, outBuf, bytes, got.data());

    // Every pixel against the host. The kernel's arithmetic is exactly the host's (no fma, no
    // division or library call), but a device may still round differently (denormals flushed
    // to zero, say), and near the set's border one rounding moves an orbit's escape by an
    // iteration or more: so at most 1 pixel in 10,000 may differ (Duet and PoCL on the CPU:
    // none). A wrong kernel gets far more wrong: every pixel of a misplaced row, or a region.
    size_t differ = 0, firstBad = pixels;
    uint64_t iterations = 0;
    for (uint32_t y = 0; y < n; ++y)
        for (uint32_t x = 0; x < n; ++x) {
            const size_t i = size_t(y) * n + x;
            const uint32_t want = hostMandel(x0 + float(x) * step, y0 + float(y) * step, maxIter);
            iterations += want;
            if (got[i] != want) {
                ++differ;
                firstBad = std::min(firstBad, i);
            }
        }
    if (differ * 10000 > pixels) {
        std::ostringstream o;
        o << "wrong result: " << differ << " of " << pixels
          << " pixels' iteration counts differ from the host's (allowed 1 in 10,000), first ("
          << firstBad % n << ", " << firstBad / n << ") = " << got[firstBad] << ", host "
          << hostMandel(x0 + float(firstBad % n) * step, y0 + float(firstBad / n) * step, maxIter);
        out["mandel_mpix"] = failFigure(o.str());
        return;
    }
    std::ostringstream detail;
    detail << times.describe(repeats) << ", " << n << "x" << n << ", 16x16 groups, "
           << double(iterations) / double(pixels) << " iterations a pixel on average, " << differ
           << " pixels differ from the host";
    out["mandel_mpix"] = okFigure(double(pixels) / times.best * 1e-6, detail.str());
}

/// A square CSR matrix from a fixed seed: row lengths uniform in [0, 2 * mean] (about 1 row in
/// 2 * mean + 1 empty), random columns sorted within a row (repeats allowed), values and x in
/// [-1, 1].
struct Csr {
    std::vector<cl_uint> rowStart, columns;
    std::vector<float> values, x;
};

Csr makeCsr(uint32_t rows, uint32_t mean) {
    Csr m;
    std::mt19937 rng(15);
    std::uniform_int_distribution<uint32_t> length(0, 2 * mean), column(0, rows - 1);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    m.rowStart.reserve(size_t(rows) + 1);
    m.rowStart.push_back(0);
    for (uint32_t r = 0; r < rows; ++r) {
        const uint32_t len = length(rng);
        const size_t first = m.columns.size();
        for (uint32_t k = 0; k < len; ++k)
            m.columns.push_back(column(rng));
        std::sort(m.columns.begin() + std::ptrdiff_t(first), m.columns.end());
        m.rowStart.push_back(cl_uint(m.columns.size()));
    }
    m.values.resize(m.columns.size());
    for (float& v : m.values)
        v = unit(rng);
    m.x.resize(rows);
    for (float& v : m.x)
        v = unit(rng);
    return m;
}

void benchSpmv(Session& s, cl_program program, const Config& cfg, Figures& out) {
    const uint32_t rows = cfg.spmvRows;
    Csr m = makeCsr(rows, cfg.spmvRowMean);
    const size_t nnz = m.values.size();
    Kernel kernel = createKernel(program, "spmv_csr_scalar");
    Buffer valuesBuf = makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                  nnz * sizeof(float), m.values.data(), "spmv values");
    Buffer columnsBuf = makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                   nnz * sizeof(cl_uint), m.columns.data(), "spmv columns");
    Buffer startBuf =
        makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                   m.rowStart.size() * sizeof(cl_uint), m.rowStart.data(), "spmv row starts");
    Buffer xBuf = makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             m.x.size() * sizeof(float), m.x.data(), "spmv x");
    Buffer yBuf =
        makeBuffer(s.context, CL_MEM_WRITE_ONLY, size_t(rows) * sizeof(float), nullptr, "spmv y");
    setArg(kernel, 0, valuesBuf.get());
    setArg(kernel, 1, columnsBuf.get());
    setArg(kernel, 2, startBuf.get());
    setArg(kernel, 3, xBuf.get());
    setArg(kernel, 4, yBuf.get());
    setArg(kernel, 5, cl_uint(rows));
    // 128 work-items a group, the last group partly past the last row (the kernel's guard).
    const size_t local = 128, global = (size_t(rows) + local - 1) / local * local;
    const int repeats = divergentRepeats(cfg);
    Times times = timeRuns(
        s, repeats, [&] { enqueue(s.queue, kernel, 1, &global, &local, "spmv_csr_scalar"); });
    std::vector<float> got(rows);
    readBuffer(s.queue, yBuf, got.size() * sizeof(float), got.data());

    // Every row against a double-precision sum. A float sum of at most 2 * mean products in
    // [-1, 1] in any order is within a few hundred epsilons of the sum of their magnitudes;
    // 1e-5 of that magnitude allows that and nothing for a dropped or repeated term.
    for (uint32_t r = 0; r < rows; ++r) {
        double want = 0, magnitude = 0;
        for (cl_uint k = m.rowStart[r]; k < m.rowStart[r + 1]; ++k) {
            const double term = double(m.values[k]) * double(m.x[m.columns[k]]);
            want += term;
            magnitude += std::fabs(term);
        }
        if (!(std::fabs(double(got[r]) - want) <= 1e-5 * magnitude)) {
            std::ostringstream o;
            o << "wrong result: y[" << r << "] = " << got[r] << ", host " << want << " (row of "
              << m.rowStart[r + 1] - m.rowStart[r] << " nonzeros)";
            out["spmv_gflops"] = failFigure(o.str());
            return;
        }
    }
    std::ostringstream detail;
    detail << times.describe(repeats) << ", " << nnz << " nonzeros, groups of 128";
    out["spmv_gflops"] = okFigure(2.0 * double(nnz) / times.best * 1e-9, detail.str());
}

} // namespace

void benchDivergent(Session& s, const Config& cfg, Figures& out) {
    Program program = buildDivergent(s);
    const std::pair<const char*, void (*)(Session&, cl_program, const Config&, Figures&)>
        benches[] = {{"mandel_mpix", benchMandel}, {"spmv_gflops", benchSpmv}};
    for (auto [key, fn] : benches) {
        try {
            fn(s, program, cfg, out);
        } catch (const std::exception& e) {
            out[key] = failFigure(e.what());
        }
    }
}

} // namespace duet::bench
