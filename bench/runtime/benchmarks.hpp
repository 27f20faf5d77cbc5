// The measurements of duet-bench: each runs the same host code on whichever platform it is given.
#pragma once

#include "seed_common.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace duet::bench {

/// Problem sizes and repetitions (full run or --quick).
struct Config {
    uint32_t bodies = 16384;
    int nbodySteps = 8;         ///< timed steps after the first one (timed alone)
    uint32_t nbodyChecked = 64; ///< bodies checked against the host reference
    /// Work-group size, as the N-body demo launches it (samples/nbody/nbody_sim.cpp: 256 where
    /// the kernel allows); halved while the kernel's limit or the body count forbids it.
    uint32_t nbodyLocal = 256;
    size_t triadElements = size_t(32) << 20;
    size_t minElements = size_t(16) << 20;
    int repeats = 10;         ///< timed runs of triad and min (best is reported)
    size_t launches = 20000;  ///< queued launches per latency sample
    size_t roundTrips = 2000; ///< blocking single launches
    int builds = 3;           ///< uncached builds (median is reported)
    size_t fftGroups = 2048;  ///< 1024-point transforms (one per work-group of 512)
    uint32_t fvSize = 1024;   ///< finite-volume grid side
    uint32_t transposeSize = 4096;
    size_t saxpyElements = size_t(32) << 20;
    uint32_t imageSize = 2048;  ///< side of the RGBA8 image the sampling figure reads
    uint32_t volumeSize = 256;  ///< width and height of the 3D figure's volume (depth a quarter)
    uint32_t mandelSize = 1024; ///< side of the Mandelbrot image (a multiple of 16)
    uint32_t mandelIterations = 512; ///< escape-time iterations at most
    uint32_t spmvRows = 100000;      ///< rows (and columns) of the CSR matrix
    uint32_t spmvRowMean = 32;       ///< mean nonzeros a row (lengths 0 to twice this)
    /// Which device of each platform runs the work: the first of this type, never another
    /// (CPU against CPU by default; GPU against GPU with --device gpu).
    cl_device_type deviceType = CL_DEVICE_TYPE_CPU;

    static Config quick();
};

/// What the table shows about one figure.
struct FigureInfo {
    std::string key;
    std::string label;
    std::string unit;
    bool higherIsBetter = true;
};

/// Every figure duet-bench produces, in table order (labels carry the configured sizes).
std::vector<FigureInfo> figureInfos(const Config& cfg);

/// One measured figure on one platform; `ok` false means the result was wrong or the run
/// failed, and `detail` says why (the value is then meaningless).
struct Figure {
    double value = 0;
    bool ok = false;
    std::string detail;
};

/// An opened platform: its first CPU device, a context and an in-order queue.
struct Session {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    seeds::Context context;
    seeds::Queue queue;
    std::string platformName, platformVersion, deviceName, deviceVersion, driverVersion;
    cl_uint computeUnits = 0;

    /// Opens the first platform whose name contains `nameSubstr`; throws seeds::ClError.
    static Session open(const std::string& nameSubstr, cl_device_type deviceType);
};

using Figures = std::map<std::string, Figure>;

// Helpers every benchmark file uses (benchmarks.cpp).
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0);
double median(std::vector<double> v);
Figure okFigure(double value, std::string detail = {});
Figure failFigure(std::string why);
/// clCreateBuffer; throws seeds::ClError naming `what`.
seeds::Buffer makeBuffer(cl_context context, cl_mem_flags flags, size_t bytes, void* host,
                         const char* what);

/// clEnqueueNDRangeKernel without offset or events; throws seeds::ClError naming `what`.
void enqueue(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* global,
             const size_t* local, const char* what);
/// Blocking read of a whole buffer's first `bytes`.
void readBuffer(cl_command_queue q, cl_mem mem, size_t bytes, void* dst);

/// Wall times of repeated runs: the best is the figure, the median shows how a loaded machine
/// spreads them.
struct Times {
    double best = std::numeric_limits<double>::infinity();
    double median = 0;
    std::string describe(int repeats) const;
};
/// Untimed runs of `launch` + clFinish until the code a runtime settles on is running: at least
/// one, then until kWarmUpSeconds have passed or kWarmUpMaxRuns were made. Runtimes compile
/// lazily or in tiers (Duet's CPU device switches to optimised code after 20 ms or 16 launches
/// of a kernel); the figures are steady speed, so one warm-up run is not enough for short
/// kernels.
inline constexpr double kWarmUpSeconds = 0.1;
inline constexpr int kWarmUpMaxRuns = 32;
void warmUp(Session& s, const std::function<void()>& launch);
/// `repeats` runs of `launch` + clFinish, each timed, after warmUp().
Times timeRuns(Session& s, int repeats, const std::function<void()>& launch);

/// Builds the benchmark source cfg.builds times, each uncached (fresh nonce); records
/// build_ms and returns the last program (null when every build failed).
seeds::Program benchBuild(Session& s, const Config& cfg, Figures& out);
/// nbody_first_ms, nbody_ginter, nbody_gflops.
void benchNbody(Session& s, cl_program program, const Config& cfg, Figures& out);
/// triad_gbs.
void benchTriad(Session& s, cl_program program, const Config& cfg, Figures& out);
/// min_gbs.
void benchMin(Session& s, cl_program program, const Config& cfg, Figures& out);
/// fft_gflops, fv_mcells, transpose_gbs, saxpy_gbs: GPU-style kernels (their own program,
/// built once, untimed) each checked against a host reference.
void benchPortable(Session& s, const Config& cfg, Figures& out);
/// mandel_mpix, spmv_gflops: GPU-style kernels whose work-items loop different numbers of
/// times (their own program, built once, untimed), each checked against a host reference.
void benchDivergent(Session& s, const Config& cfg, Figures& out);
/// launch_us, roundtrip_us, cycle_us.
void benchLaunch(Session& s, cl_program program, const Config& cfg, Figures& out);

} // namespace duet::bench
