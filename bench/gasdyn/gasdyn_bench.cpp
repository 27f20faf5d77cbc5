// duet-gasdyn-bench: the gas-dynamics solver (samples/gasdyn's library, kernels/gasdyn) on two
// OpenCL platforms in one run: cell updates per second at 1024^2 (one full X + Y step, with its
// CFL reduction and ghost fills, is one update per cell), the sweeps and the reduction alone,
// and the demo's headless frames/s from its --stats. Prints both columns and the ratio.
#include "gasdyn_sim.hpp"
#include "duet/data_paths.hpp"
#include "duet/interop/interop.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>

namespace gasdyn = duet::gasdyn;
namespace interop = duet::interop;

namespace {

struct Config {
    int n = 1024;   ///< grid n x n
    int steps = 10; ///< timed full steps (best of `repeats` batches)
    int repeats = 3;
    int demoFrames = 60; ///< frames of the headless demo run
    int demoResolution = 512;
    std::string limiter = "mc", riemann = "hllc";
};

struct Figure {
    double value = 0;
    bool ok = false;
    std::string detail;
};

struct Column {
    std::string requested, name, device;
    bool opened = false;
    std::map<std::string, Figure> figures;
};

struct FigureInfo {
    const char* key;
    std::string label;
    const char* unit;
    bool higherIsBetter;
};

std::vector<FigureInfo> figureInfos(const Config& c) {
    std::string grid = std::to_string(c.n) + "^2";
    return {
        {"build_ms", "clBuildProgram(gasdyn.cl)", "ms", false},
        {"step_mcells", "full step (reduce + X + Y sweeps), " + grid, "Mcell/s", true},
        {"step_ms", "full step, " + grid, "ms", false},
        {"step_cpu_ms", "full step, CPU time of all threads", "ms", false},
        {"sweep_x_ms", "X sweep alone, " + grid, "ms", false},
        {"sweep_x_cpu_ms", "X sweep alone, CPU time", "ms", false},
        {"sweep_y_ms", "Y sweep alone, " + grid, "ms", false},
        {"sweep_y_cpu_ms", "Y sweep alone, CPU time", "ms", false},
        {"reduce_ms", "CFL reduction (2 stages), " + grid, "ms", false},
        {"reduce_cpu_ms", "CFL reduction, CPU time", "ms", false},
        {"demo_fps",
         "duet-gasdyn headless, " + std::to_string(c.demoResolution) + "^2, 1 step/frame",
         "frames/s", true},
        {"demo_step_ms", "duet-gasdyn solver step (from --stats)", "ms", false},
    };
}

struct Cl {
    cl_platform_id platform = nullptr;
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

std::string platformName(cl_platform_id p) {
    char text[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof text - 1, text, nullptr);
    return text;
}

// The first platform whose name contains `substring`, and its first CPU device (else any).
bool open(Cl& cl, const std::string& substring, std::string& why) {
    cl_uint n = 0;
    clGetPlatformIDs(0, nullptr, &n);
    std::vector<cl_platform_id> platforms(n);
    clGetPlatformIDs(n, platforms.data(), nullptr);
    for (cl_platform_id p : platforms)
        if (platformName(p).find(substring) != std::string::npos) {
            cl.platform = p;
            break;
        }
    if (!cl.platform) {
        why = "no platform named like \"" + substring + "\"";
        return false;
    }
    if (clGetDeviceIDs(cl.platform, CL_DEVICE_TYPE_CPU, 1, &cl.device, nullptr) != CL_SUCCESS &&
        clGetDeviceIDs(cl.platform, CL_DEVICE_TYPE_ALL, 1, &cl.device, nullptr) != CL_SUCCESS) {
        why = "no device";
        return false;
    }
    cl_int err;
    cl.context = clCreateContext(nullptr, 1, &cl.device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
        why = "clCreateContext: " + interop::errorName(err);
        return false;
    }
    cl.queue = clCreateCommandQueueWithProperties(cl.context, cl.device, nullptr, &err);
    if (err != CL_SUCCESS) {
        why = "clCreateCommandQueueWithProperties: " + interop::errorName(err);
        return false;
    }
    return true;
}

double seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

// CPU time (user + system, all threads) this process has used.
double cpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Timing {
    double wall = 1e300; ///< best batch, seconds
    double cpu = 1e300;  ///< CPU seconds of the batch with the least CPU time
};

// Best of `repeats` batches of `count` calls of `body`, each batch ended by clFinish. The CPU
// time (every thread of the process) goes beside the wall time: on a shared machine it still
// says how much work a step costs when other processes stretch the wall clock.
Timing bestOf(cl_command_queue queue, int repeats, int count, const std::function<void()>& body) {
    Timing best;
    for (int r = 0; r < repeats; ++r) {
        double c0 = cpuSeconds();
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < count; ++k)
            body();
        interop::check(clFinish(queue), "clFinish");
        best.wall = std::min(best.wall, seconds(std::chrono::steady_clock::now() - t0));
        best.cpu = std::min(best.cpu, cpuSeconds() - c0);
    }
    return best;
}

double mass(const std::vector<cl_float4>& cells) {
    double m = 0;
    for (const cl_float4& c : cells)
        m += c.s[0];
    return m;
}

gasdyn::SolverOptions solverOptions(const Config& cfg) {
    gasdyn::SolverOptions o;
    o.limiter = cfg.limiter == "minmod"     ? gasdyn::Limiter::Minmod
                : cfg.limiter == "van-leer" ? gasdyn::Limiter::VanLeer
                                            : gasdyn::Limiter::MC;
    o.riemann = cfg.riemann == "exact" ? gasdyn::RiemannSolver::Exact : gasdyn::RiemannSolver::Hllc;
    if (const char* g = std::getenv("DUET_GASDYN_ROW_GROUP"))
        o.rowGroup = std::atoi(g);
    if (const char* x = std::getenv("DUET_GASDYN_BUILD_OPTIONS"))
        o.extraBuildOptions = x;
    return o;
}

void solverFigures(Column& col, Cl& cl, const Config& cfg) {
    auto t0 = std::chrono::steady_clock::now();
    gasdyn::Simulator sim(cl.context, cl.device, cl.queue, solverOptions(cfg));
    col.figures["build_ms"] = {seconds(std::chrono::steady_clock::now() - t0) * 1e3, true, ""};
    // Kelvin-Helmholtz: periodic, every cell active, nothing hits a floor.
    gasdyn::Setup setup = gasdyn::makeProblem(gasdyn::Problem::KelvinHelmholtz, cfg.n, cfg.n);
    const double cells = double(cfg.n) * cfg.n;
    sim.load(setup);
    double before = mass(setup.cells);
    // Warm-up: the first launches of each kernel (PoCL compiles machine code there).
    for (int s = 0; s < 2; ++s)
        sim.step(0.8f);
    interop::check(clFinish(cl.queue), "clFinish");
    Timing full = bestOf(cl.queue, cfg.repeats, cfg.steps, [&] { sim.step(0.8f); });
    std::vector<cl_float4> after = sim.state();
    double m = mass(after);
    bool finite = true;
    for (const cl_float4& c : after)
        for (int k = 0; k < 4; ++k)
            finite = finite && std::isfinite(c.s[k]);
    std::string why;
    if (!finite)
        why = "the state is not finite after the timed steps";
    else if (std::abs(m - before) > 1e-6 * before)
        why = "mass changed by " + std::to_string((m - before) / before) + " (relative)";
    bool ok = why.empty();
    double step = full.wall / cfg.steps;
    col.figures["step_mcells"] = {cells / step / 1e6, ok, ok ? "KH, periodic" : why};
    col.figures["step_ms"] = {step * 1e3, ok, why};
    col.figures["step_cpu_ms"] = {full.cpu / cfg.steps * 1e3, ok, why};
    // The parts, each from the state the last step left (sweeps ping-pong; dt stays set).
    Timing sx = bestOf(cl.queue, cfg.repeats, cfg.steps, [&] { sim.sweep(gasdyn::Axis::X); });
    col.figures["sweep_x_ms"] = {sx.wall / cfg.steps * 1e3, ok, why};
    col.figures["sweep_x_cpu_ms"] = {sx.cpu / cfg.steps * 1e3, ok, why};
    Timing sy = bestOf(cl.queue, cfg.repeats, cfg.steps, [&] { sim.sweep(gasdyn::Axis::Y); });
    col.figures["sweep_y_ms"] = {sy.wall / cfg.steps * 1e3, ok, why};
    col.figures["sweep_y_cpu_ms"] = {sy.cpu / cfg.steps * 1e3, ok, why};
    Timing rd = bestOf(cl.queue, cfg.repeats, cfg.steps, [&] { sim.reduce(0.8f); });
    col.figures["reduce_ms"] = {rd.wall / cfg.steps * 1e3, ok, why};
    col.figures["reduce_cpu_ms"] = {rd.cpu / cfg.steps * 1e3, ok, why};
}

// Runs the demo headless with --stats and reads its median frame and solver-step times.
void demoFigures(Column& col, const Config& cfg, const std::string& demo) {
    std::string command = demo + " --headless --frames " + std::to_string(cfg.demoFrames) +
                          " --size 640x640 --no-overlay --stats --set problem=kelvin-helmholtz" +
                          " --set resolution=" + std::to_string(cfg.demoResolution) +
                          " --set 'steps per frame=1' --set limiter=" + cfg.limiter +
                          " --set riemann=" + cfg.riemann + " --platform '" + col.requested +
                          "' 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    if (pipe) {
        char buffer[4096];
        size_t n;
        while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
            out.append(buffer, n);
    }
    int status = pipe ? pclose(pipe) : -1;
    auto fail = [&](const std::string& why) {
        col.figures["demo_fps"] = {0, false, why};
        col.figures["demo_step_ms"] = {0, false, why};
    };
    if (!pipe || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::string last = out.substr(out.rfind('\n', out.size() > 1 ? out.size() - 2 : 0) + 1);
        fail("the demo failed: " + last);
        return;
    }
    // "<phase> <count> <mean ms> <min ms> <median ms> ..." lines of the --stats table. The
    // median: a few first frames (code generation, the driver's JIT, first-touch allocations)
    // weigh on the mean of a short run, and NVIDIA's OpenCL has them cached on disk.
    auto median = [&](const std::string& phase) {
        std::smatch m;
        std::regex line("\n" + phase + " +[0-9]+ +[0-9.]+ +[0-9.]+ +([0-9.]+)");
        return std::regex_search(out, m, line) ? std::stod(m[1]) : -1.0;
    };
    double frame = median("frame"), step = median("solver step");
    if (frame <= 0 || step <= 0) {
        fail("no frame / solver step line in the demo's --stats");
        return;
    }
    std::string detail = std::to_string(cfg.demoFrames) + " frames";
    col.figures["demo_fps"] = {1e3 / frame, true, detail};
    col.figures["demo_step_ms"] = {step, true, detail};
}

void printFigure(const FigureInfo& info, const Figure& f) {
    if (f.ok)
        std::printf("  %-50s %12.4g %-9s %s\n", info.label.c_str(), f.value, info.unit,
                    f.detail.c_str());
    else
        std::printf("  %-50s %12s %-9s %s\n", info.label.c_str(), "FAIL", info.unit,
                    f.detail.c_str());
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"duet-gasdyn-bench: gas-dynamics cell updates/s and demo frames/s on two OpenCL "
                 "platforms"};
    Config cfg;
    std::vector<std::string> platforms = {"Duet", "Portable Computing Language"};
    bool quick = false, noDemo = false;
    std::string json, demo = duet::programPath(DUET_GASDYN);
    app.add_option("--platforms", platforms, "platform name substrings, in column order");
    app.add_flag("--quick", quick, "512^2, fewer steps and frames");
    app.add_option("--size", cfg.n, "grid n x n")->check(CLI::Range(16, 8192));
    app.add_option("--steps", cfg.steps, "timed steps per batch")->check(CLI::Range(1, 10000));
    app.add_option("--limiter", cfg.limiter, "minmod, van-leer or mc")
        ->check(CLI::IsMember({"minmod", "van-leer", "mc"}));
    app.add_option("--riemann", cfg.riemann, "hllc or exact")
        ->check(CLI::IsMember({"hllc", "exact"}));
    app.add_flag("--no-demo", noDemo, "skip the headless demo run");
    app.add_option("--demo", demo, "the duet-gasdyn executable");
    app.add_option("--json", json, "also write the figures as JSON to this file");
    CLI11_PARSE(app, argc, argv);
    if (quick) {
        cfg.n = std::min(cfg.n, 512);
        cfg.steps = std::min(cfg.steps, 4);
        cfg.repeats = 2;
        cfg.demoFrames = 20;
        cfg.demoResolution = 256;
    }
    // As duet-bench does: no PoCL program cache, set before the loader loads any platform.
    setenv("POCL_KERNEL_CACHE", "0", 1);
    std::printf("duet-gasdyn-bench: %dx%d Kelvin-Helmholtz, limiter %s, Riemann %s, best of %d "
                "batches of %d steps\n",
                cfg.n, cfg.n, cfg.limiter.c_str(), cfg.riemann.c_str(), cfg.repeats, cfg.steps);
    std::vector<FigureInfo> infos = figureInfos(cfg);
    std::vector<Column> columns;
    for (const std::string& p : platforms) {
        Column col;
        col.requested = p;
        col.name =
            p.find("Portable Computing Language") != std::string::npos ? "PoCL" : p.substr(0, 12);
        std::printf("\n[%s] opening platform \"%s\"\n", col.name.c_str(), p.c_str());
        std::fflush(stdout);
        Cl cl;
        std::string why;
        if (!open(cl, p, why)) {
            std::printf("  cannot open: %s\n", why.c_str());
            for (const FigureInfo& info : infos)
                col.figures[info.key] = {0, false, why};
            columns.push_back(col);
            continue;
        }
        col.opened = true;
        char device[256] = {};
        clGetDeviceInfo(cl.device, CL_DEVICE_NAME, sizeof device - 1, device, nullptr);
        col.device = device;
        std::printf("  platform \"%s\", device \"%s\"\n", platformName(cl.platform).c_str(),
                    device);
        try {
            solverFigures(col, cl, cfg);
        } catch (const std::exception& e) {
            for (const FigureInfo& info : infos)
                if (!col.figures.count(info.key) && std::string(info.key).rfind("demo", 0) != 0)
                    col.figures[info.key] = {0, false, e.what()};
        }
        if (!noDemo)
            demoFigures(col, cfg, demo);
        for (const FigureInfo& info : infos)
            if (col.figures.count(info.key))
                printFigure(info, col.figures[info.key]);
        columns.push_back(col);
    }

    std::printf("\n%-52s", "figure");
    for (const Column& c : columns)
        std::printf(" %12s", c.name.c_str());
    if (columns.size() == 2)
        std::printf(" %12s", (columns[0].name + "/" + columns[1].name).c_str());
    std::printf("\n");
    nlohmann::json out;
    for (const FigureInfo& info : infos) {
        bool any = false;
        for (const Column& c : columns)
            any = any || c.figures.count(info.key);
        if (!any)
            continue;
        std::printf("%-52s", (info.label + " [" + info.unit + "]").c_str());
        for (const Column& c : columns) {
            auto it = c.figures.find(info.key);
            if (it != c.figures.end() && it->second.ok)
                std::printf(" %12.4g", it->second.value);
            else
                std::printf(" %12s", "FAIL");
            if (it != c.figures.end())
                out["platforms"][c.name]["figures"][info.key] = {{"value", it->second.value},
                                                                 {"ok", it->second.ok},
                                                                 {"detail", it->second.detail}};
        }
        if (columns.size() == 2) {
            auto a = columns[0].figures.find(info.key), b = columns[1].figures.find(info.key);
            if (a != columns[0].figures.end() && b != columns[1].figures.end() && a->second.ok &&
                b->second.ok && b->second.value > 0)
                std::printf(" %12.3f", a->second.value / b->second.value);
            else
                std::printf(" %12s", "-");
        }
        std::printf("\n");
    }
    std::printf("(ratio = first / second column; higher is better for Mcell/s and frames/s, "
                "lower for ms)\n");
    if (!json.empty()) {
        for (const Column& c : columns)
            out["platforms"][c.name]["device"] = c.device;
        out["grid"] = cfg.n;
        out["steps"] = cfg.steps;
        std::ofstream(json) << out.dump(2) << "\n";
    }
    return 0;
}
