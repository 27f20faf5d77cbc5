// duet-fft-bench: the same libduet-fft 2D transforms on two OpenCL platforms (Duet and PoCL by
// default) in one run: GFLOP/s at 5 N log2 N per transform (N = points), side by side with ratios.
#include "duet/fft/fft.hpp"

#include <CL/cl.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace fft = duet::fft;

namespace {

struct Figure {
    bool ok = false;
    double gflops = 0, ms = 0;
    size_t groupX = 0, groupY = 0;
    std::string detail;
};

struct PlatformRun {
    std::string requested, column, device, openError;
    bool opened = false;
    std::map<std::string, Figure> figures;
};

std::string info(cl_device_id d, cl_device_info what) {
    size_t n = 0;
    clGetDeviceInfo(d, what, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetDeviceInfo(d, what, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

struct Cl {
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    ~Cl() {
        if (queue)
            clReleaseCommandQueue(queue);
        if (context)
            clReleaseContext(context);
    }
};

// The first CPU device (else the first device) of the platform whose name contains `name`.
bool open(const std::string& name, Cl& cl, std::string& why) {
    cl_uint n = 0;
    clGetPlatformIDs(0, nullptr, &n);
    std::vector<cl_platform_id> ps(n);
    if (n)
        clGetPlatformIDs(n, ps.data(), nullptr);
    for (cl_platform_id p : ps) {
        char text[256] = {};
        clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof text - 1, text, nullptr);
        if (std::string(text).find(name) == std::string::npos)
            continue;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &cl.device, nullptr) != CL_SUCCESS &&
            clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &cl.device, nullptr) != CL_SUCCESS) {
            why = "no device";
            return false;
        }
        cl_int err;
        cl.context = clCreateContext(nullptr, 1, &cl.device, nullptr, nullptr, &err);
        if (err != CL_SUCCESS) {
            why = "clCreateContext failed (" + std::to_string(err) + ")";
            return false;
        }
        cl.queue = clCreateCommandQueueWithProperties(cl.context, cl.device, nullptr, &err);
        if (err != CL_SUCCESS) {
            why = "clCreateCommandQueue failed (" + std::to_string(err) + ")";
            return false;
        }
        return true;
    }
    why = "no platform named like '" + name + "'";
    return false;
}

// One bin of the 2D forward DFT of `x` (nx by ny), in double precision.
std::complex<double> dftBin(const std::vector<cl_float2>& x, size_t nx, size_t ny, size_t kx,
                            size_t ky) {
    std::complex<double> sum = 0;
    std::vector<std::complex<double>> wx(nx), wy(ny);
    for (size_t i = 0; i < nx; ++i)
        wx[i] = std::polar(1.0, -2.0 * std::numbers::pi * double((i * kx) % nx) / double(nx));
    for (size_t i = 0; i < ny; ++i)
        wy[i] = std::polar(1.0, -2.0 * std::numbers::pi * double((i * ky) % ny) / double(ny));
    for (size_t y = 0; y < ny; ++y) {
        std::complex<double> row = 0;
        for (size_t xx = 0; xx < nx; ++xx)
            row += std::complex<double>(x[y * nx + xx].s[0], x[y * nx + xx].s[1]) * wx[xx];
        sum += row * wy[y];
    }
    return sum;
}

// Best-of-`reps` forward 2D FFT of n x n points, validated first: 8 bins against a double DFT
// and the round trip (forward, scaled inverse) against the input.
Figure measure(Cl& cl, size_t n, int reps, size_t groupX, size_t groupY, bool transpose) {
    Figure f;
    fft::Desc desc;
    desc.columns = transpose ? fft::Desc::Columns::Transpose : fft::Desc::Columns::Auto;
    desc.nx = n;
    desc.ny = n;
    desc.groupX = groupX;
    desc.groupY = groupY;
    std::unique_ptr<fft::Plan> plan;
    fft::Status s = fft::Plan::create(cl.context, cl.device, desc, plan);
    if (!s) {
        f.detail = s.message;
        return f;
    }
    f.groupX = plan->groupX();
    f.groupY = plan->groupY();
    std::vector<cl_float2> x(plan->points());
    std::mt19937 rng{static_cast<unsigned>(n)};
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : x)
        v = {{u(rng), u(rng)}};
    cl_int err;
    cl_mem a = clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, plan->bytes(),
                              x.data(), &err);
    cl_mem b = clCreateBuffer(cl.context, CL_MEM_READ_WRITE, plan->bytes(), nullptr, &err);
    cl_mem c = clCreateBuffer(cl.context, CL_MEM_READ_WRITE, plan->bytes(), nullptr, &err);
    auto cleanup = [&] {
        for (cl_mem m : {a, b, c})
            if (m)
                clReleaseMemObject(m);
    };
    if (!a || !b || !c) {
        f.detail = "clCreateBuffer failed";
        cleanup();
        return f;
    }
    // Validation (also the warm-up: first launches may compile).
    s = plan->enqueue(cl.queue, fft::Direction::Forward, a, b);
    if (s)
        s = plan->enqueue(cl.queue, fft::Direction::Inverse, b, c, 1.0f / float(n * n));
    if (!s) {
        f.detail = s.message;
        cleanup();
        return f;
    }
    std::vector<cl_float2> spectrum(x.size()), back(x.size());
    clEnqueueReadBuffer(cl.queue, b, CL_TRUE, 0, plan->bytes(), spectrum.data(), 0, nullptr,
                        nullptr);
    clEnqueueReadBuffer(cl.queue, c, CL_TRUE, 0, plan->bytes(), back.data(), 0, nullptr, nullptr);
    double worstTrip = 0, worstBin = 0;
    for (size_t i = 0; i < x.size(); ++i)
        worstTrip = std::max({worstTrip, double(std::abs(back[i].s[0] - x[i].s[0])),
                              double(std::abs(back[i].s[1] - x[i].s[1]))});
    std::mt19937 pick(7);
    double scale = std::sqrt(double(n * n)); // the typical magnitude of a bin of random data
    for (int i = 0; i < 8; ++i) {
        size_t kx = pick() % n, ky = pick() % n;
        std::complex<double> ref = dftBin(x, n, n, kx, ky);
        std::complex<double> got(spectrum[ky * n + kx].s[0], spectrum[ky * n + kx].s[1]);
        worstBin = std::max(worstBin, std::abs(got - ref) / scale);
    }
    if (!(worstTrip < 1e-5) || !(worstBin < 1e-5)) {
        char text[160];
        std::snprintf(text, sizeof text, "wrong result: round trip %.3g, DFT bins %.3g", worstTrip,
                      worstBin);
        f.detail = text;
        cleanup();
        return f;
    }
    using clock = std::chrono::steady_clock;
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        auto t0 = clock::now();
        s = plan->enqueue(cl.queue, fft::Direction::Forward, a, b);
        clFinish(cl.queue);
        double t = std::chrono::duration<double>(clock::now() - t0).count();
        if (!s) {
            f.detail = s.message;
            cleanup();
            return f;
        }
        best = std::min(best, t);
    }
    cleanup();
    f.ok = true;
    f.ms = best * 1e3;
    f.gflops = fft::flops(desc) / best * 1e-9;
    char text[160];
    std::snprintf(text, sizeof text, "best of %d, groups %zu/%zu%s, round trip err %.2g", reps,
                  f.groupX, f.groupY, plan->transposes() ? " (transposed columns)" : "", worstTrip);
    f.detail = text;
    return f;
}

std::string shortName(const std::string& requested) {
    if (requested.find("Portable Computing Language") != std::string::npos)
        return "PoCL";
    return requested.size() <= 12 ? requested : requested.substr(0, 12);
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> platforms = {"Duet", "Portable Computing Language"};
    bool quick = false;
    std::string jsonPath;
    std::vector<size_t> sizes = {256, 512, 1024};
    size_t groupX = 0, groupY = 0;
    CLI::App app{"libduet-fft 2D FFT GFLOP/s on two OpenCL platforms, side by side."};
    app.add_option("--platforms", platforms, "platform name substrings, in column order");
    app.add_flag("--quick", quick, "fewer repetitions");
    app.add_option("--sizes", sizes, "2D sizes (n for n x n)");
    app.add_option("--group-x", groupX, "rows per work-group in the x pass (0: the plan's choice)");
    app.add_option("--group-y", groupY,
                   "columns per work-group in the y pass (0: the plan's choice)");
    app.add_option("--json", jsonPath, "also write the results to this JSON file");
    bool transpose = false;
    app.add_flag("--transpose", transpose,
                 "y pass by transpose + rows + transpose (default: strided column kernel)");
    CLI11_PARSE(app, argc, argv);
    // No on-disk kernel cache: PoCL reads this when the loader loads it (not yet).
    setenv("POCL_KERNEL_CACHE", "0", 1);
    int reps = quick ? 5 : 20;

    std::vector<PlatformRun> runs;
    for (const std::string& p : platforms) {
        PlatformRun run;
        run.requested = p;
        run.column = shortName(p);
        Cl cl;
        run.opened = open(p, cl, run.openError);
        if (run.opened) {
            run.device = info(cl.device, CL_DEVICE_NAME);
            std::printf("%s: %s\n", run.column.c_str(), run.device.c_str());
            for (size_t n : sizes) {
                std::string key = "fft2d_" + std::to_string(n);
                Figure f = measure(cl, n, reps, groupX, groupY, transpose);
                std::printf(
                    "  %-12s %-6s %10s GFLOP/s %9s ms  %s\n", key.c_str(), run.column.c_str(),
                    f.ok ? std::to_string(f.gflops).substr(0, 8).c_str() : "FAIL",
                    f.ok ? std::to_string(f.ms).substr(0, 8).c_str() : "-", f.detail.c_str());
                std::fflush(stdout);
                run.figures[key] = f;
            }
        } else {
            std::printf("%s: not opened: %s\n", run.column.c_str(), run.openError.c_str());
        }
        runs.push_back(std::move(run));
    }

    std::printf("\n%-14s", "GFLOP/s");
    for (const PlatformRun& r : runs)
        std::printf(" %12s", r.column.c_str());
    if (runs.size() >= 2)
        std::printf("   %s/%s", runs[0].column.c_str(), runs[1].column.c_str());
    std::printf("\n");
    nlohmann::ordered_json j;
    j["bench"] = "duet-fft-bench";
    j["flops_per_transform"] = "5 N log2 N, N = nx * ny";
    j["repetitions"] = reps;
    j["columns"] = transpose ? "transpose" : "strided";
    for (size_t n : sizes) {
        std::string key = "fft2d_" + std::to_string(n);
        std::printf("%-14s", (std::to_string(n) + "^2").c_str());
        for (const PlatformRun& r : runs) {
            auto it = r.figures.find(key);
            if (it != r.figures.end() && it->second.ok)
                std::printf(" %12.3f", it->second.gflops);
            else
                std::printf(" %12s", "FAIL");
        }
        if (runs.size() >= 2) {
            auto a = runs[0].figures.find(key), b = runs[1].figures.find(key);
            if (a != runs[0].figures.end() && b != runs[1].figures.end() && a->second.ok &&
                b->second.ok)
                std::printf("   %.2f", a->second.gflops / b->second.gflops);
        }
        std::printf("\n");
    }
    for (const PlatformRun& r : runs) {
        nlohmann::ordered_json p;
        p["platform"] = r.requested;
        p["opened"] = r.opened;
        if (!r.opened)
            p["error"] = r.openError;
        p["device"] = r.device;
        for (const auto& [key, f] : r.figures)
            p["results"][key] = {{"ok", f.ok},          {"gflops", f.gflops},
                                 {"ms", f.ms},          {"group_x", f.groupX},
                                 {"group_y", f.groupY}, {"detail", f.detail}};
        j["platforms"].push_back(p);
    }
    if (!jsonPath.empty()) {
        std::ofstream out(jsonPath);
        out << j.dump(2) << "\n";
        std::printf("\nJSON written to %s\n", jsonPath.c_str());
    }
    return 0;
}
