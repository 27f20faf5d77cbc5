// duet-bench measurements: N-body, triad, parallel min, launch latency, uncached build time.
#include "benchmarks.hpp"

#include "bench_kernels.hpp"
#include "parallel_min.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>

namespace duet::bench {

using namespace duet::seeds;

namespace {

std::string deviceString(cl_device_id d, cl_device_info what) {
    size_t size = 0;
    check(clGetDeviceInfo(d, what, 0, nullptr, &size), "clGetDeviceInfo");
    std::string s(size, '\0');
    check(clGetDeviceInfo(d, what, size, s.data(), nullptr), "clGetDeviceInfo");
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

void enqueue1D(cl_command_queue q, cl_kernel k, size_t global, const size_t* local,
               const char* what) {
    cl_int err = clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, local, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        throw ClError(std::string("clEnqueueNDRangeKernel(") + what + ")", err);
}

} // namespace

void enqueue(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* global,
             const size_t* local, const char* what) {
    cl_int err = clEnqueueNDRangeKernel(q, k, dims, nullptr, global, local, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        throw ClError(std::string("clEnqueueNDRangeKernel(") + what + ")", err);
}

void readBuffer(cl_command_queue q, cl_mem mem, size_t bytes, void* dst) {
    check(clEnqueueReadBuffer(q, mem, CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
}

std::string Times::describe(int repeats) const {
    std::ostringstream o;
    o << "best of " << repeats << " " << best * 1e3 << " ms, median " << median * 1e3 << " ms";
    return o.str();
}

void warmUp(Session& s, const std::function<void()>& launch) {
    const auto start = Clock::now();
    for (int runs = 0; runs < kWarmUpMaxRuns; ++runs) {
        launch();
        check(clFinish(s.queue), "clFinish");
        if (secondsSince(start) >= kWarmUpSeconds)
            break;
    }
}

Times timeRuns(Session& s, int repeats, const std::function<void()>& launch) {
    warmUp(s, launch);
    std::vector<double> all;
    for (int r = 0; r < repeats; ++r) {
        auto t = Clock::now();
        launch();
        check(clFinish(s.queue), "clFinish");
        all.push_back(secondsSince(t));
    }
    Times t;
    std::sort(all.begin(), all.end());
    t.best = all.front();
    t.median = all[all.size() / 2];
    return t;
}

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Figure okFigure(double value, std::string detail) {
    return Figure{value, true, std::move(detail)};
}

Figure failFigure(std::string why) {
    return Figure{0, false, std::move(why)};
}

Buffer makeBuffer(cl_context context, cl_mem_flags flags, size_t bytes, void* host,
                  const char* what) {
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context, flags, bytes, host, &err);
    if (err != CL_SUCCESS)
        throw ClError(std::string("clCreateBuffer(") + what + ")", err);
    return Buffer(mem);
}

Config Config::quick() {
    Config c;
    c.bodies = 4096;
    c.nbodySteps = 3;
    c.nbodyChecked = 32;
    c.triadElements = size_t(4) << 20;
    c.minElements = size_t(4) << 20;
    c.repeats = 3;
    c.launches = 2000;
    c.roundTrips = 200;
    c.builds = 2;
    c.fftGroups = 256;
    c.fvSize = 256;
    c.transposeSize = 1024;
    c.saxpyElements = size_t(4) << 20;
    c.imageSize = 512;
    c.volumeSize = 64;
    c.mandelSize = 256;
    c.spmvRows = 16000;
    return c;
}

std::vector<FigureInfo> figureInfos(const Config& cfg) {
    auto mi = [](size_t n) {
        return n % (1 << 20) == 0 ? std::to_string(n >> 20) + " Mi" : std::to_string(n);
    };
    return {
        {"build_ms", "clBuildProgram, medium source, uncached (median)", "ms", false},
        {"nbody_first_ms", "N-body " + std::to_string(cfg.bodies) + ", first step (lazy JIT)", "ms",
         false},
        {"nbody_ginter", "N-body " + std::to_string(cfg.bodies) + " bodies, best step", "G inter/s",
         true},
        {"nbody_gflops", "N-body at 20 flop/interaction", "GFLOP/s", true},
        {"triad_gbs", "triad a=b+s*c, " + mi(cfg.triadElements) + " floats", "GB/s", true},
        {"min_gbs", "parallel min, " + mi(cfg.minElements) + " uints", "GB/s", true},
        {"fft_gflops",
         "FFT 1024-pt radix-2 in __local, " + std::to_string(cfg.fftGroups) + " groups", "GFLOP/s",
         true},
        {"fv_mcells", "float4 finite volumes " + std::to_string(cfg.fvSize) + "^2, 16x16 groups",
         "Mcell/s", true},
        {"transpose_gbs",
         "16x16 tiled transpose " + std::to_string(cfg.transposeSize) + "^2 floats", "GB/s", true},
        {"saxpy_gbs", "saxpy y=a*x+y, " + mi(cfg.saxpyElements) + " floats", "GB/s", true},
        {"image_gsamples",
         "bilinear read_imagef, " + std::to_string(cfg.imageSize) + "^2 RGBA8 image", "G samples/s",
         true},
        {"volume_gsamples",
         "trilinear read_imagef, " + std::to_string(cfg.volumeSize) + "^2x" +
             std::to_string(cfg.volumeSize / 4) + " RGBA8 3D image",
         "G samples/s", true},
        {"layered_gsamples",
         "bilinear read_imagef, " + std::to_string(cfg.imageSize) + "^2 RGBA8 2D array layer",
         "G samples/s", true},
        {"mandel_mpix",
         "Mandelbrot " + std::to_string(cfg.mandelSize) + "^2, at most " +
             std::to_string(cfg.mandelIterations) + " iterations",
         "Mpixel/s", true},
        {"spmv_gflops",
         "CSR scalar SpMV, " + std::to_string(cfg.spmvRows) + " rows of 0-" +
             std::to_string(2 * cfg.spmvRowMean),
         "GFLOP/s", true},
        {"launch_us", "kernel launches, " + std::to_string(cfg.launches) + " queued + clFinish",
         "us/launch", false},
        {"roundtrip_us", "enqueue + clFinish round trip (median)", "us", false},
        {"cycle_us",
         "blocking write + launch + read between host work, less it (median of " +
             std::to_string(cfg.roundTrips) + ")",
         "us", false},
    };
}

Session Session::open(const std::string& nameSubstr, cl_device_type deviceType) {
    Session s;
    s.platform = findPlatform(nameSubstr);
    // The comparison is device type against the same type: no fallback to another one.
    s.device = firstDevice(s.platform, deviceType, false);
    s.context = createContext(s.platform, s.device);
    s.queue = Queue(createQueue(s.context, s.device, 0));
    s.platformName = seeds::platformName(s.platform);
    size_t size = 0;
    check(clGetPlatformInfo(s.platform, CL_PLATFORM_VERSION, 0, nullptr, &size),
          "clGetPlatformInfo(CL_PLATFORM_VERSION)");
    s.platformVersion.resize(size);
    check(
        clGetPlatformInfo(s.platform, CL_PLATFORM_VERSION, size, s.platformVersion.data(), nullptr),
        "clGetPlatformInfo(CL_PLATFORM_VERSION)");
    while (!s.platformVersion.empty() && s.platformVersion.back() == '\0')
        s.platformVersion.pop_back();
    s.deviceName = seeds::deviceName(s.device);
    s.deviceVersion = deviceString(s.device, CL_DEVICE_VERSION);
    s.driverVersion = deviceString(s.device, CL_DRIVER_VERSION);
    check(clGetDeviceInfo(s.device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof s.computeUnits,
                          &s.computeUnits, nullptr),
          "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)");
    return s;
}

// ---------------------------------------------------------------------------------------------
// Build time. A fresh nonce per build defeats every program cache keyed on source or options
// (PoCL's on-disk cache is also switched off through POCL_KERNEL_CACHE=0 by main()).

Program benchBuild(Session& s, const Config& cfg, Figures& out) {
    std::random_device entropy;
    std::mt19937_64 rng((uint64_t(entropy()) << 32) ^ entropy() ^
                        uint64_t(Clock::now().time_since_epoch().count()));
    std::vector<double> buildMs;
    Program last;
    for (int r = 0; r < cfg.builds; ++r) {
        uint64_t nonce = rng();
        std::string source = benchSource(nonce);
        std::string options = benchBuildOptions(nonce);
        const char* text = source.c_str();
        size_t length = source.size();
        cl_int err = CL_SUCCESS;
        Program program(clCreateProgramWithSource(s.context, 1, &text, &length, &err));
        check(err, "clCreateProgramWithSource");
        auto t0 = Clock::now();
        err = clBuildProgram(program, 1, &s.device, options.c_str(), nullptr, nullptr);
        double ms = secondsSince(t0) * 1e3;
        if (err != CL_SUCCESS) {
            std::string log = buildLog(program, s.device);
            out["build_ms"] = failFigure("clBuildProgram: " + errorName(err) +
                                         (log.empty() ? "" : ": " + log.substr(0, 400)));
            return {};
        }
        // A build counts only if every kernel came out of it.
        size_t kernelCount = 0;
        check(clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof kernelCount, &kernelCount,
                               nullptr),
              "clGetProgramInfo(CL_PROGRAM_NUM_KERNELS)");
        size_t namesSize = 0;
        check(clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &namesSize),
              "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)");
        std::string names(namesSize, '\0');
        check(clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, namesSize, names.data(), nullptr),
              "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)");
        names = ";" + std::string(names.c_str()) + ";";
        for (const std::string& want : benchKernelNames()) {
            if (names.find(";" + want + ";") == std::string::npos) {
                out["build_ms"] = failFigure("built program lacks kernel " + want +
                                             " (CL_PROGRAM_KERNEL_NAMES: " + names + ")");
                return {};
            }
        }
        if (kernelCount != benchKernelNames().size()) {
            out["build_ms"] =
                failFigure("CL_PROGRAM_NUM_KERNELS is " + std::to_string(kernelCount) + ", want " +
                           std::to_string(benchKernelNames().size()));
            return {};
        }
        buildMs.push_back(ms);
        last = std::move(program);
    }
    std::ostringstream detail;
    detail << cfg.builds << " builds of " << benchSource(0).size() << " bytes, "
           << benchKernelNames().size() << " kernels; min "
           << *std::min_element(buildMs.begin(), buildMs.end()) << " ms";
    out["build_ms"] = okFigure(median(buildMs), detail.str());
    return last;
}

// ---------------------------------------------------------------------------------------------
// All-pairs N-body.

void benchNbody(Session& s, cl_program program, const Config& cfg, Figures& out) {
    const uint32_t n = cfg.bodies;
    const float dt = 0.005f, eps2 = 0.0025f;
    Kernel kernel = createKernel(program, "nbody_step");

    size_t kernelMax = 0;
    check(clGetKernelWorkGroupInfo(kernel, s.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernelMax,
                                   &kernelMax, nullptr),
          "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    size_t local = cfg.nbodyLocal;
    while (local > 1 && (local > kernelMax || n % local != 0))
        local /= 2;

    std::mt19937 rng(42);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f), massDist(0.5f, 1.5f);
    std::vector<cl_float4> pos(n), vel(n);
    for (uint32_t i = 0; i < n; ++i) {
        pos[i] = {{unit(rng), unit(rng), unit(rng), massDist(rng) / float(n)}};
        vel[i] = {{0.1f * unit(rng), 0.1f * unit(rng), 0.1f * unit(rng), 0.0f}};
    }
    const size_t bytes = n * sizeof(cl_float4);
    Buffer posBuf[2] = {
        makeBuffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, pos.data(), "pos"),
        makeBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, "pos'")};
    Buffer velBuf[2] = {
        makeBuffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, vel.data(), "vel"),
        makeBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, "vel'")};
    setLocalArg(kernel, 4, local * sizeof(cl_float4));
    setArg(kernel, 5, cl_uint(n));
    setArg(kernel, 6, dt);
    setArg(kernel, 7, eps2);
    auto step = [&](int from) {
        setArg(kernel, 0, posBuf[from].get());
        setArg(kernel, 1, velBuf[from].get());
        setArg(kernel, 2, posBuf[1 - from].get());
        setArg(kernel, 3, velBuf[1 - from].get());
        enqueue1D(s.queue, kernel, n, &local, "nbody_step");
    };

    // First step: timed on its own (it pays for any lazy code generation), then checked.
    auto t0 = Clock::now();
    step(0);
    check(clFinish(s.queue), "clFinish");
    double firstMs = secondsSince(t0) * 1e3;
    std::vector<cl_float4> pos1(n), vel1(n);
    readBuffer(s.queue, posBuf[1], bytes, pos1.data());
    readBuffer(s.queue, velBuf[1], bytes, vel1.data());

    // Host reference in double for a spread of bodies. The tolerance scales with the sum of
    // the magnitudes of the terms (float summation of n terms), not with their cancelled sum.
    std::string bad;
    const uint32_t checked = std::min(cfg.nbodyChecked, n);
    for (uint32_t k = 0; k < checked && bad.empty(); ++k) {
        uint32_t i = uint32_t((uint64_t(k) * n) / checked + (k * 37u) % std::max(1u, n / checked));
        i = std::min(i, n - 1);
        const cl_float4& p = pos[i];
        double acc[3] = {0, 0, 0}, magnitudes = 0;
        for (uint32_t j = 0; j < n; ++j) {
            double d[3] = {double(pos[j].s[0]) - p.s[0], double(pos[j].s[1]) - p.s[1],
                           double(pos[j].s[2]) - p.s[2]};
            double dist2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            double inv = 1.0 / std::sqrt(dist2 + double(eps2));
            double sc = double(pos[j].s[3]) * inv * inv * inv;
            for (int c = 0; c < 3; ++c)
                acc[c] += sc * d[c];
            magnitudes += sc * std::sqrt(dist2);
        }
        for (int c = 0; c < 3 && bad.empty(); ++c) {
            double vRef = double(vel[i].s[c]) + acc[c] * double(dt);
            double pRef = double(p.s[c]) + vRef * double(dt);
            double tolV = 1e-4 * magnitudes * double(dt) + 1e-6 * std::fabs(vel[i].s[c]);
            double tolP = tolV * double(dt) + 4e-7 * (std::fabs(p.s[c]) + 1e-3);
            double errV = std::fabs(double(vel1[i].s[c]) - vRef);
            double errP = std::fabs(double(pos1[i].s[c]) - pRef);
            if (!(errV <= tolV) || !(errP <= tolP)) {
                std::ostringstream o;
                o << "body " << i << " axis " << c << ": velocity " << vel1[i].s[c] << " (host "
                  << vRef << "), position " << pos1[i].s[c] << " (host " << pRef << ")";
                bad = o.str();
            }
        }
    }
    if (!bad.empty()) {
        out["nbody_first_ms"] = failFigure("wrong result: " + bad);
        out["nbody_ginter"] = failFigure("wrong result: " + bad);
        out["nbody_gflops"] = failFigure("wrong result: " + bad);
        return;
    }
    out["nbody_first_ms"] = okFigure(firstMs);

    double best = std::numeric_limits<double>::infinity();
    int from = 1;
    for (int r = 0; r < cfg.nbodySteps; ++r, from = 1 - from) {
        auto t = Clock::now();
        step(from);
        check(clFinish(s.queue), "clFinish");
        best = std::min(best, secondsSince(t));
    }
    // The timed steps are not checked body by body; they must at least stay finite.
    readBuffer(s.queue, posBuf[from], bytes, pos1.data());
    for (uint32_t i = 0; i < n; ++i) {
        for (int c = 0; c < 4; ++c) {
            if (!std::isfinite(pos1[i].s[c])) {
                out["nbody_ginter"] = failFigure("non-finite position after the timed steps");
                out["nbody_gflops"] = out["nbody_ginter"];
                return;
            }
        }
    }
    double interactions = double(n) * double(n) / best;
    std::ostringstream detail;
    detail << "best of " << cfg.nbodySteps << " steps " << best * 1e3 << " ms, local " << local
           << ", " << checked << " bodies checked";
    out["nbody_ginter"] = okFigure(interactions * 1e-9, detail.str());
    out["nbody_gflops"] = okFigure(interactions * 20 * 1e-9);
}

// ---------------------------------------------------------------------------------------------
// STREAM triad.

void benchTriad(Session& s, cl_program program, const Config& cfg, Figures& out) {
    const size_t n = cfg.triadElements;
    const float scalar = 3.0f;
    Kernel kernel = createKernel(program, "triad");
    // Small integers: b + 3c is exact in float with or without fma contraction, so the check
    // can demand equality.
    std::vector<float> b(n), c(n);
    for (size_t i = 0; i < n; ++i) {
        b[i] = float(i & 1023);
        c[i] = float((i >> 10) & 511);
    }
    Buffer aBuf = makeBuffer(s.context, CL_MEM_WRITE_ONLY, n * sizeof(float), nullptr, "a");
    Buffer bBuf = makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float),
                             b.data(), "b");
    Buffer cBuf = makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float),
                             c.data(), "c");
    const float poison = std::numeric_limits<float>::quiet_NaN();
    check(clEnqueueFillBuffer(s.queue, aBuf, &poison, sizeof poison, 0, n * sizeof(float), 0,
                              nullptr, nullptr),
          "clEnqueueFillBuffer");
    setArg(kernel, 0, aBuf.get());
    setArg(kernel, 1, bBuf.get());
    setArg(kernel, 2, cBuf.get());
    setArg(kernel, 3, scalar);

    warmUp(s, [&] { enqueue1D(s.queue, kernel, n, nullptr, "triad"); });
    double best = std::numeric_limits<double>::infinity();
    for (int r = 0; r < cfg.repeats; ++r) {
        auto t = Clock::now();
        enqueue1D(s.queue, kernel, n, nullptr, "triad");
        check(clFinish(s.queue), "clFinish");
        best = std::min(best, secondsSince(t));
    }
    std::vector<float> a(n);
    readBuffer(s.queue, aBuf, n * sizeof(float), a.data());
    for (size_t i = 0; i < n; ++i) {
        float want = b[i] + scalar * c[i];
        if (a[i] != want) {
            std::ostringstream o;
            o << "wrong result: a[" << i << "] = " << a[i] << ", want " << want;
            out["triad_gbs"] = failFigure(o.str());
            return;
        }
    }
    std::ostringstream detail;
    detail << "best of " << cfg.repeats << " runs " << best * 1e3 << " ms, 3 arrays counted";
    out["triad_gbs"] = okFigure(3.0 * n * sizeof(float) / best * 1e-9, detail.str());
}

// ---------------------------------------------------------------------------------------------
// Parallel min: the seed's kernels and host code.

void benchMin(Session& s, cl_program program, const Config& cfg, Figures& out) {
    const size_t n = cfg.minElements;
    std::vector<cl_uint> data(n);
    std::mt19937 rng(2009);
    for (auto& v : data)
        v = rng();
    const cl_uint want = *std::min_element(data.begin(), data.end());
    Buffer src = makeBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_uint),
                            data.data(), "src");
    ParallelMin pmin(s.context, s.device, program, src, n);

    warmUp(s, [&] { pmin.enqueue(s.queue); });
    double best = std::numeric_limits<double>::infinity();
    for (int r = 0; r < cfg.repeats; ++r) { // every run checked
        auto t = Clock::now();
        pmin.enqueue(s.queue);
        check(clFinish(s.queue), "clFinish");
        double sec = secondsSince(t);
        cl_uint got = pmin.read(s.queue);
        if (got != want) {
            out["min_gbs"] = failFigure("wrong result: min " + std::to_string(got) + ", want " +
                                        std::to_string(want));
            return;
        }
        best = std::min(best, sec);
    }
    std::ostringstream detail;
    detail << "best of " << cfg.repeats << " runs " << best * 1e3 << " ms, " << pmin.plan.groups
           << " groups x " << pmin.plan.local << (pmin.plan.chunked ? " chunked" : " interleaved");
    out["min_gbs"] = okFigure(double(n) * sizeof(cl_uint) / best * 1e-9, detail.str());
}

// ---------------------------------------------------------------------------------------------
// Launch latency: a queue full of one-work-item launches, and one launch at a time.

void benchLaunch(Session& s, cl_program program, const Config& cfg, Figures& out) {
    Kernel kernel = createKernel(program, "launch_probe");
    Buffer counter = makeBuffer(s.context, CL_MEM_READ_WRITE, sizeof(cl_uint), nullptr, "count");
    const cl_uint zero = 0;
    check(clEnqueueFillBuffer(s.queue, counter, &zero, sizeof zero, 0, sizeof zero, 0, nullptr,
                              nullptr),
          "clEnqueueFillBuffer");
    setArg(kernel, 0, counter.get());
    const size_t one = 1;
    size_t launched = 0;

    const size_t warmUpLaunches = 64;
    for (size_t i = 0; i < warmUpLaunches; ++i)
        enqueue1D(s.queue, kernel, 1, &one, "launch_probe");
    check(clFinish(s.queue), "clFinish");
    launched += warmUpLaunches;

    const int samples = 3;
    double best = std::numeric_limits<double>::infinity();
    for (int r = 0; r < samples; ++r) {
        auto t = Clock::now();
        for (size_t i = 0; i < cfg.launches; ++i)
            enqueue1D(s.queue, kernel, 1, &one, "launch_probe");
        check(clFinish(s.queue), "clFinish");
        best = std::min(best, secondsSince(t));
        launched += cfg.launches;
    }

    std::vector<double> trips;
    trips.reserve(cfg.roundTrips);
    for (size_t i = 0; i < cfg.roundTrips; ++i) {
        auto t = Clock::now();
        enqueue1D(s.queue, kernel, 1, &one, "launch_probe");
        check(clFinish(s.queue), "clFinish");
        trips.push_back(secondsSince(t));
    }
    launched += cfg.roundTrips;

    // In an in-order queue every launch sees the previous one's increment.
    cl_uint count = 0;
    readBuffer(s.queue, counter, sizeof count, &count);
    if (count != launched) {
        std::string why = "wrong result: " + std::to_string(count) + " of " +
                          std::to_string(launched) + " launches counted";
        out["launch_us"] = failFigure(why);
        out["roundtrip_us"] = failFigure(why);
        out["cycle_us"] = failFigure(why);
        return;
    }
    std::ostringstream detail;
    detail << "best of " << samples << " batches; all " << launched << " launches counted";
    out["launch_us"] = okFigure(best / double(cfg.launches) * 1e6, detail.str());
    std::ostringstream trip;
    trip << cfg.roundTrips << " trips, min " << *std::min_element(trips.begin(), trips.end()) * 1e6
         << " us";
    out["roundtrip_us"] = okFigure(median(trips) * 1e6, trip.str());

    // The pattern of a test harness: set the input (blocking write), launch, read the result
    // back (blocking), then work on the host (checking it) before the next cycle. The host work
    // is timed alone too and subtracted: what is left is what the platform adds, including
    // whatever its waiting threads take from the host thread's work.
    std::vector<cl_uint> table(1024);
    auto hostWork = [&table](cl_uint seed) {
        cl_uint x = seed;
        for (int i = 0; i < 40000; ++i) {
            x = x * 1664525u + 1013904223u;
            table[x & 1023] += x >> 16;
        }
        return x;
    };
    std::vector<double> hostAlone, cycles;
    hostAlone.reserve(cfg.roundTrips);
    cycles.reserve(cfg.roundTrips);
    volatile cl_uint sink = 0;
    for (size_t i = 0; i < cfg.roundTrips; ++i) {
        auto t = Clock::now();
        sink = sink + hostWork(cl_uint(i));
        hostAlone.push_back(secondsSince(t));
    }
    size_t wrong = 0;
    for (size_t i = 0; i < cfg.roundTrips; ++i) {
        auto t = Clock::now();
        const cl_uint in = cl_uint(i) * 7u;
        check(
            clEnqueueWriteBuffer(s.queue, counter, CL_TRUE, 0, sizeof in, &in, 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
        enqueue1D(s.queue, kernel, 1, &one, "launch_probe");
        readBuffer(s.queue, counter, sizeof count, &count);
        wrong += count != in + 1;
        sink = sink + hostWork(count);
        cycles.push_back(secondsSince(t));
    }
    if (wrong) {
        out["cycle_us"] = failFigure("wrong result in " + std::to_string(wrong) + " of the cycles");
        return;
    }
    std::ostringstream cycle;
    cycle << cfg.roundTrips << " cycles, median " << median(cycles) * 1e6
          << " us with the host work, which alone takes " << median(hostAlone) * 1e6 << " us";
    out["cycle_us"] =
        okFigure(std::max(0.0, median(cycles) - median(hostAlone)) * 1e6, cycle.str());
}

} // namespace duet::bench
