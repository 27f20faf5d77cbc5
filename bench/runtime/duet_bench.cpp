// duet-bench: one process runs the same host code and kernels on two OpenCL platforms (Duet and
// PoCL by default) and prints their figures side by side with the ratio, plus optional JSON.
#include "benchmarks.hpp"
#include "machine_limits.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace duet::bench;
using duet::seeds::ClError;
using duet::seeds::errorName;

namespace {

struct PlatformRun {
    std::string requested;
    std::string column; ///< short name for the table
    bool opened = false;
    std::string openError;
    std::string platformName, platformVersion, deviceName, deviceVersion, driverVersion;
    cl_uint computeUnits = 0;
    Figures figures;
};

std::string shortName(const std::string& requested) {
    if (requested.find("Portable Computing Language") != std::string::npos)
        return "PoCL";
    return requested.size() <= 12 ? requested : requested.substr(0, 12);
}

std::string cpuModel() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(colon + 2);
        }
    }
    return "unknown";
}

// Runs one benchmark; an exception fails every one of `keys` it did not already fill.
void guarded(Figures& out, std::initializer_list<const char*> keys,
             const std::function<void()>& body) {
    std::string why;
    try {
        body();
        return;
    } catch (const ClError& e) {
        why = e.what();
    } catch (const std::exception& e) {
        why = e.what();
    }
    for (const char* k : keys) {
        if (!out.count(k))
            out[k] = Figure{0, false, why};
    }
}

void printFigure(const FigureInfo& info, const Figure& f) {
    if (f.ok)
        std::printf("  %-52s %12.4g %-9s  %s\n", info.label.c_str(), f.value, info.unit.c_str(),
                    f.detail.c_str());
    else
        std::printf("  %-52s %12s %-9s  %s\n", info.label.c_str(), "FAIL", info.unit.c_str(),
                    f.detail.c_str());
    std::fflush(stdout);
}

void runPlatform(PlatformRun& run, const Config& cfg, const std::vector<FigureInfo>& infos) {
    std::printf("\n[%s] opening platform \"%s\"\n", run.column.c_str(), run.requested.c_str());
    std::fflush(stdout);
    Session s;
    try {
        s = Session::open(run.requested, cfg.deviceType);
    } catch (const std::exception& e) {
        run.openError = e.what();
        std::printf("  cannot open: %s\n", e.what());
        return;
    }
    run.opened = true;
    run.platformName = s.platformName;
    run.platformVersion = s.platformVersion;
    run.deviceName = s.deviceName;
    run.deviceVersion = s.deviceVersion;
    run.driverVersion = s.driverVersion;
    run.computeUnits = s.computeUnits;
    std::printf("  platform \"%s\" (%s), device \"%s\" (%s, driver %s, %u compute units)\n",
                s.platformName.c_str(), s.platformVersion.c_str(), s.deviceName.c_str(),
                s.deviceVersion.c_str(), s.driverVersion.c_str(), s.computeUnits);

    auto show = [&](std::initializer_list<const char*> keys) {
        for (const char* k : keys)
            for (const FigureInfo& info : infos)
                if (info.key == k && run.figures.count(k))
                    printFigure(info, run.figures[k]);
    };

    // With --only, `infos` holds the chosen figures: a group runs when it has one of them.
    auto wanted = [&](std::initializer_list<const char*> keys) {
        for (const char* k : keys)
            for (const FigureInfo& info : infos)
                if (info.key == k)
                    return true;
        return false;
    };
    const std::initializer_list<const char*> nbody = {"nbody_first_ms", "nbody_ginter",
                                                      "nbody_gflops"},
                                             portable = {"fft_gflops",      "fv_mcells",
                                                         "transpose_gbs",   "saxpy_gbs",
                                                         "image_gsamples",  "volume_gsamples",
                                                         "layered_gsamples"},
                                             divergent = {"mandel_mpix", "spmv_gflops"},
                                             launch = {"launch_us", "roundtrip_us", "cycle_us"};
    duet::seeds::Program program;
    if (wanted({"build_ms", "triad_gbs", "min_gbs"}) || wanted(nbody) || wanted(launch)) {
        guarded(run.figures, {"build_ms"}, [&] { program = benchBuild(s, cfg, run.figures); });
        show({"build_ms"});
        if (!program) {
            for (const FigureInfo& info : infos)
                if (!run.figures.count(info.key))
                    run.figures[info.key] = Figure{0, false, "no program (the build failed)"};
            return;
        }
    }
    if (wanted(nbody)) {
        guarded(run.figures, nbody, [&] { benchNbody(s, program, cfg, run.figures); });
        show(nbody);
    }
    if (wanted({"triad_gbs"})) {
        guarded(run.figures, {"triad_gbs"}, [&] { benchTriad(s, program, cfg, run.figures); });
        show({"triad_gbs"});
    }
    if (wanted({"min_gbs"})) {
        guarded(run.figures, {"min_gbs"}, [&] { benchMin(s, program, cfg, run.figures); });
        show({"min_gbs"});
    }
    if (wanted(portable)) {
        guarded(run.figures, portable, [&] { benchPortable(s, cfg, run.figures); });
        show(portable);
    }
    if (wanted(divergent)) {
        guarded(run.figures, divergent, [&] { benchDivergent(s, cfg, run.figures); });
        show(divergent);
    }
    if (wanted(launch)) {
        guarded(run.figures, launch, [&] { benchLaunch(s, program, cfg, run.figures); });
        show(launch);
    }
}

std::string isoNow() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

// A platform's run as JSON: what a child process (--isolate) hands back to the parent.
nlohmann::json runToJson(const PlatformRun& run) {
    nlohmann::json j;
    j["opened"] = run.opened;
    j["open_error"] = run.openError;
    j["platform"] = run.platformName;
    j["platform_version"] = run.platformVersion;
    j["device"] = run.deviceName;
    j["device_version"] = run.deviceVersion;
    j["driver_version"] = run.driverVersion;
    j["compute_units"] = run.computeUnits;
    for (const auto& [key, f] : run.figures)
        j["figures"][key] = {{"value", f.value}, {"ok", f.ok}, {"detail", f.detail}};
    return j;
}

void runFromJson(PlatformRun& run, const nlohmann::json& j) {
    run.opened = j.at("opened").get<bool>();
    run.openError = j.at("open_error").get<std::string>();
    run.platformName = j.at("platform").get<std::string>();
    run.platformVersion = j.at("platform_version").get<std::string>();
    run.deviceName = j.at("device").get<std::string>();
    run.deviceVersion = j.at("device_version").get<std::string>();
    run.driverVersion = j.at("driver_version").get<std::string>();
    run.computeUnits = j.at("compute_units").get<cl_uint>();
    if (j.contains("figures"))
        for (const auto& [key, f] : j["figures"].items())
            run.figures[key] = Figure{f.at("value").get<double>(), f.at("ok").get<bool>(),
                                      f.at("detail").get<std::string>()};
}

// Runs one platform in a child process: a runtime that crashes or hangs loses only its own
// column. The parent never loads an OpenCL platform itself.
void runPlatformIsolated(PlatformRun& run, const Config& cfg,
                         const std::vector<FigureInfo>& infos) {
    int fds[2];
    if (pipe(fds) != 0) {
        run.openError = "pipe failed";
        return;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t child = fork();
    if (child < 0) {
        run.openError = "fork failed";
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (child == 0) {
        close(fds[0]);
        runPlatform(run, cfg, infos);
        std::string text = runToJson(run).dump();
        size_t done = 0;
        while (done < text.size()) {
            ssize_t n = write(fds[1], text.data() + done, text.size() - done);
            if (n <= 0)
                break;
            done += size_t(n);
        }
        close(fds[1]);
        std::fflush(stdout);
        _exit(0);
    }
    close(fds[1]);
    std::string text;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        text.append(buf, size_t(n));
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    std::string crash;
    if (WIFSIGNALED(status))
        crash = "child process killed by signal " + std::to_string(WTERMSIG(status));
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        crash = "child process exited with status " + std::to_string(WEXITSTATUS(status));
    if (!text.empty()) {
        try {
            runFromJson(run, nlohmann::json::parse(text));
        } catch (const std::exception& e) {
            crash += (crash.empty() ? "" : "; ") + std::string("bad report: ") + e.what();
        }
    } else if (crash.empty()) {
        crash = "child process sent no report";
    }
    if (crash.empty())
        return;
    std::printf("  [%s] %s\n", run.column.c_str(), crash.c_str());
    if (!run.opened && run.openError.empty()) {
        // It died before it could say anything: count it as run and failed, not as absent.
        run.opened = true;
    }
    for (const FigureInfo& info : infos)
        if (run.opened && !run.figures.count(info.key))
            run.figures[info.key] = Figure{0, false, crash};
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> platforms = {"Duet", "Portable Computing Language"};
    bool quick = false;
    std::string jsonPath;
    uint32_t bodies = 0;
    CLI::App app{"Runs the same OpenCL host code and kernels on two platforms and compares them."};
    app.add_option("--platforms", platforms,
                   "comma-separated platform name substrings; the first is the numerator of "
                   "the ratio")
        ->delimiter(',')
        ->capture_default_str();
    app.add_flag("--quick", quick, "smaller problems and fewer repetitions");
    bool isolate = false;
    app.add_flag("--isolate", isolate,
                 "run each platform in its own child process (a runtime that crashes loses "
                 "only its own column)");
    app.add_option("--json", jsonPath, "also write the results to this JSON file");
    unsigned rounds = 1;
    app.add_option("--rounds", rounds,
                   "run the platforms in turn this many times and keep each figure's best")
        ->check(CLI::Range(1u, 20u));
    app.add_option("--bodies", bodies, "N-body size (a multiple of 64; default 16384, quick 4096)")
        ->check(CLI::Range(uint32_t(64), uint32_t(1) << 20));
    uint32_t nbodyLocal = 0;
    app.add_option("--nbody-local", nbodyLocal,
                   "N-body work-group size (default 256, the N-body demo's; 64 until session 28)")
        ->check(CLI::Range(uint32_t(1), uint32_t(1024)));
    std::vector<std::string> only;
    app.add_option("--only", only,
                   "comma-separated figure keys (as in the JSON, e.g. mandel_mpix,spmv_gflops): "
                   "run only the benchmarks that produce them")
        ->delimiter(',');
    std::string deviceType = "cpu";
    app.add_option("--device", deviceType,
                   "device type each platform runs on: its first device of this type")
        ->check(CLI::IsMember({"cpu", "gpu", "accelerator"}))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    // PoCL keeps compiled kernels in ~/.cache/pocl; the build benchmark must not hit it. The
    // ICD loader loads the platforms at the first clGetPlatformIDs, which has not happened yet.
    const char* previousCache = std::getenv("POCL_KERNEL_CACHE");
    std::string previousCacheText = previousCache ? previousCache : "";
    setenv("POCL_KERNEL_CACHE", "0", 1);
    setenv("DUET_CACHE", "0", 1); // Duet's: nonce builds would only fill it
    // The figures are kernels' steady speed: Duet's CPU tier-up on the launch path (the warm-up
    // launch or the first timed one pays for it), not in the background, where what a timed
    // run gets depends on when the compile thread finishes (seconds on a loaded 2-core host:
    // quick code measured). DUET_CPU_TIER_UP_SYNC=0 in the environment keeps the background.
    setenv("DUET_CPU_TIER_UP_SYNC", "1", 0);
    const std::string tierUpSync = std::getenv("DUET_CPU_TIER_UP_SYNC");

    Config cfg = quick ? Config::quick() : Config{};
    if (bodies) {
        if (bodies % 64) {
            std::fprintf(stderr, "duet-bench: --bodies must be a multiple of 64\n");
            return 2;
        }
        cfg.bodies = bodies;
    }
    if (nbodyLocal)
        cfg.nbodyLocal = nbodyLocal;
    cfg.deviceType = deviceType == "gpu"           ? CL_DEVICE_TYPE_GPU
                     : deviceType == "accelerator" ? CL_DEVICE_TYPE_ACCELERATOR
                                                   : CL_DEVICE_TYPE_CPU;
    std::vector<FigureInfo> infos = figureInfos(cfg);
    if (!only.empty()) {
        for (const std::string& key : only) {
            auto it = std::find_if(infos.begin(), infos.end(),
                                   [&](const FigureInfo& info) { return info.key == key; });
            if (it == infos.end()) {
                std::fprintf(stderr,
                             "duet-bench: --only: no figure \"%s\"; the keys are:", key.c_str());
                for (const FigureInfo& info : infos)
                    std::fprintf(stderr, " %s", info.key.c_str());
                std::fprintf(stderr, "\n");
                return 2;
            }
        }
        std::erase_if(infos, [&](const FigureInfo& info) {
            return std::find(only.begin(), only.end(), info.key) == only.end();
        });
    }

    std::printf("duet-bench: %s run on %u CPUs (%s)\n", quick ? "quick" : "full",
                std::thread::hardware_concurrency(), cpuModel().c_str());
    std::printf(
        "env: POCL_KERNEL_CACHE=0 DUET_CACHE=0 set before any platform loads%s, "
        "DUET_CPU_TIER_UP_SYNC=%s; every build's source and options carry a fresh random nonce, "
        "so no program cache can hit\n",
        previousCache ? (" (was \"" + previousCacheText + "\")").c_str() : "", tierUpSync.c_str());

    // The machine's own limits, for a CPU device's streaming and N-body figures: measured
    // before any platform loads (no runtime threads about), only when those figures run.
    const char* const kOfBandwidth[] = {"triad_gbs", "saxpy_gbs"};
    const char* const kOfPeak[] = {"nbody_gflops"};
    auto wanted = [&](const char* key) {
        return std::any_of(infos.begin(), infos.end(),
                           [&](const FigureInfo& info) { return info.key == key; });
    };
    std::optional<MachineLimits> machine;
    if (cfg.deviceType == CL_DEVICE_TYPE_CPU &&
        (std::any_of(std::begin(kOfBandwidth), std::end(kOfBandwidth), wanted) ||
         std::any_of(std::begin(kOfPeak), std::end(kOfPeak), wanted))) {
        machine = measureMachine(cfg.triadElements, cfg.repeats);
        std::printf("machine: %u host threads: STREAM triad %.1f GB/s (ordinary stores), %.1f GB/s "
                    "(non-temporal stores), %zu floats an array; FP32 peak %.1f GFLOP/s (%s, "
                    "independent chains on every thread); load average %.1f before\n",
                    machine->threads, machine->streamGBs, machine->streamNtGBs, cfg.triadElements,
                    machine->peakGflops, machine->isa.c_str(), machine->loadAverage);
    }

    std::vector<PlatformRun> runs;
    for (const std::string& p : platforms) {
        PlatformRun run;
        run.requested = p;
        run.column = shortName(p);
        runs.push_back(std::move(run));
    }
    // Rounds alternate the platforms (A B A B ...) and keep each figure's best: on a machine
    // whose memory bandwidth and free cores come and go, a slow spell then costs both columns
    // alike instead of deciding the ratio.
    for (unsigned round = 0; round < rounds; ++round) {
        if (rounds > 1)
            std::printf("\n=== round %u of %u\n", round + 1, rounds);
        for (PlatformRun& run : runs) {
            PlatformRun fresh;
            fresh.requested = run.requested;
            fresh.column = run.column;
            if (isolate)
                runPlatformIsolated(fresh, cfg, infos);
            else
                runPlatform(fresh, cfg, infos);
            if (round == 0 || !run.opened) {
                run = std::move(fresh);
                continue;
            }
            for (const FigureInfo& info : infos) {
                auto n = fresh.figures.find(info.key);
                if (n == fresh.figures.end() || !n->second.ok)
                    continue;
                Figure& best = run.figures[info.key];
                bool better = info.higherIsBetter ? n->second.value > best.value
                                                  : n->second.value < best.value;
                if (!best.ok || better)
                    best = n->second;
            }
        }
    }

    // The table: one column per platform, then first/second where both have a figure.
    const bool ratio = runs.size() >= 2;
    std::string ratioName = ratio ? runs[0].column + "/" + runs[1].column : "";
    std::printf("\n%-52s %-9s", "figure", "unit");
    for (const PlatformRun& run : runs)
        std::printf(" %12s", run.column.c_str());
    if (ratio)
        std::printf(" %12s", ratioName.c_str());
    std::printf("\n");
    bool anyFail = false, anyMissing = false;
    nlohmann::ordered_json ratios = nlohmann::ordered_json::object();
    for (const FigureInfo& info : infos) {
        std::printf("%-52s %-9s", info.label.c_str(), info.unit.c_str());
        for (const PlatformRun& run : runs) {
            auto it = run.figures.find(info.key);
            if (!run.opened) {
                std::printf(" %12s", "n/a");
                anyMissing = true;
            } else if (it == run.figures.end() || !it->second.ok) {
                std::printf(" %12s", "FAIL");
                anyFail = true;
            } else {
                std::printf(" %12.4g", it->second.value);
            }
        }
        if (ratio) {
            auto a = runs[0].figures.find(info.key), b = runs[1].figures.find(info.key);
            if (a != runs[0].figures.end() && b != runs[1].figures.end() && a->second.ok &&
                b->second.ok && b->second.value > 0) {
                double r = a->second.value / b->second.value;
                ratios[info.key] = r;
                std::printf(" %12.3f  (%s is better)", r, info.higherIsBetter ? "higher" : "lower");
            } else {
                std::printf(" %12s", "-");
            }
        }
        std::printf("\n");
    }

    // A CPU device's figures against the machine: streaming kernels against the better
    // triad, N-body against the FMA peak.
    auto ofMachine = [&](const PlatformRun& run) {
        nlohmann::ordered_json of = nlohmann::ordered_json::object();
        if (!machine || !run.opened)
            return of;
        auto add = [&](const char* key, double limit) {
            auto it = run.figures.find(key);
            if (it != run.figures.end() && it->second.ok && limit > 0)
                of[key] = it->second.value / limit;
        };
        for (const char* key : kOfBandwidth)
            add(key, machine->bandwidthGBs());
        for (const char* key : kOfPeak)
            add(key, machine->peakGflops);
        return of;
    };
    if (machine) {
        std::printf("\nagainst the machine (streaming: of %.1f GB/s, the better triad; N-body: of "
                    "the %.1f GFLOP/s peak)\n",
                    machine->bandwidthGBs(), machine->peakGflops);
        for (const PlatformRun& run : runs) {
            nlohmann::ordered_json of = ofMachine(run);
            if (of.empty())
                continue;
            std::printf("  %-12s", run.column.c_str());
            for (auto& [key, value] : of.items())
                std::printf("  %s %.0f%%", key.c_str(), value.get<double>() * 100);
            std::printf("\n");
        }
    }

    if (!jsonPath.empty()) {
        nlohmann::ordered_json j;
        j["tool"] = "duet-bench";
        j["time"] = isoNow();
        j["quick"] = quick;
        j["rounds"] = rounds;
        j["host"] = {{"cpus", std::thread::hardware_concurrency()}, {"cpu", cpuModel()}};
        j["env"] = {{"POCL_KERNEL_CACHE", "0"},
                    {"DUET_CACHE", "0"},
                    {"DUET_CPU_TIER_UP_SYNC", tierUpSync},
                    {"note", "set by duet-bench before loading platforms; builds use a fresh "
                             "nonce per build"}};
        j["config"] = {{"nbody_bodies", cfg.bodies},
                       {"nbody_local", cfg.nbodyLocal},
                       {"nbody_steps", cfg.nbodySteps},
                       {"nbody_checked", cfg.nbodyChecked},
                       {"triad_elements", cfg.triadElements},
                       {"min_elements", cfg.minElements},
                       {"repeats", cfg.repeats},
                       {"launches", cfg.launches},
                       {"round_trips", cfg.roundTrips},
                       {"builds", cfg.builds},
                       {"fft_groups", cfg.fftGroups},
                       {"fv_size", cfg.fvSize},
                       {"transpose_size", cfg.transposeSize},
                       {"saxpy_elements", cfg.saxpyElements},
                       {"image_size", cfg.imageSize},
                       {"volume_size", cfg.volumeSize},
                       {"mandel_size", cfg.mandelSize},
                       {"mandel_iterations", cfg.mandelIterations},
                       {"spmv_rows", cfg.spmvRows},
                       {"spmv_row_mean", cfg.spmvRowMean}};
        if (machine)
            j["machine"] = {{"threads", machine->threads},
                            {"stream_triad_gbs", machine->streamGBs},
                            {"stream_triad_nt_gbs", machine->streamNtGBs},
                            {"fp32_peak_gflops", machine->peakGflops},
                            {"peak_isa", machine->isa},
                            {"load_average", machine->loadAverage}};
        j["platforms"] = nlohmann::ordered_json::array();
        for (const PlatformRun& run : runs) {
            nlohmann::ordered_json p;
            p["requested"] = run.requested;
            p["column"] = run.column;
            p["opened"] = run.opened;
            if (!run.opened) {
                p["error"] = run.openError;
            } else {
                p["platform"] = run.platformName;
                p["platform_version"] = run.platformVersion;
                p["device"] = run.deviceName;
                p["device_version"] = run.deviceVersion;
                p["driver_version"] = run.driverVersion;
                p["compute_units"] = run.computeUnits;
                nlohmann::ordered_json results = nlohmann::ordered_json::object();
                for (const FigureInfo& info : infos) {
                    auto it = run.figures.find(info.key);
                    nlohmann::ordered_json r;
                    r["label"] = info.label;
                    r["unit"] = info.unit;
                    r["higher_is_better"] = info.higherIsBetter;
                    if (it != run.figures.end() && it->second.ok) {
                        r["status"] = "ok";
                        r["value"] = it->second.value;
                    } else {
                        r["status"] = "FAIL";
                        r["value"] = nullptr;
                    }
                    r["detail"] = it != run.figures.end() ? it->second.detail : "not run";
                    results[info.key] = r;
                }
                p["results"] = results;
                if (machine)
                    p["of_machine"] = ofMachine(run);
            }
            j["platforms"].push_back(p);
        }
        if (ratio) {
            j["ratio_of"] = ratioName;
            j["ratios"] = ratios;
        }
        std::ofstream out(jsonPath);
        out << j.dump(2) << "\n";
        if (!out) {
            std::fprintf(stderr, "duet-bench: cannot write %s\n", jsonPath.c_str());
            return 1;
        }
        std::printf("\nJSON written to %s\n", jsonPath.c_str());
    }
    if (anyFail)
        std::printf("duet-bench: some figures FAILED (wrong result or OpenCL error; see above)\n");
    if (anyMissing)
        std::printf("duet-bench: some platforms could not be opened (see above)\n");
    return anyFail || anyMissing ? 1 : 0;
}
