// seed-parallel-min: the minimum of 16 Mi uints in two kernels (local, then global atom_min),
// built with -save-temps, checked against std::min_element.
#include "parallel_min.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

using namespace duet::seeds;

// Builds with -save-temps where the platform knows it; a platform that rejects the option gets
// a second build without it, and the program says so.
static Program buildSavingTemps(cl_context context, cl_device_id device, bool& savedTemps) {
    const char* text = kParallelMinSource;
    cl_int err = CL_SUCCESS;
    Program program(clCreateProgramWithSource(context, 1, &text, nullptr, &err));
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device, "-save-temps", nullptr, nullptr);
    savedTemps = err == CL_SUCCESS;
    if (err == CL_INVALID_BUILD_OPTIONS || err == CL_BUILD_PROGRAM_FAILURE) {
        std::string log = buildLog(program, device);
        std::printf("note: -save-temps rejected (%s%s%s); building without it\n",
                    errorName(err).c_str(), log.empty() ? "" : ": ",
                    log.substr(0, log.find('\n')).c_str());
        program = Program(buildProgram(context, device, kParallelMinSource, ""));
    } else {
        check(err, "clBuildProgram(-save-temps)");
    }
    return program;
}

int main(int argc, char** argv) {
    std::string platformSubstr = "Duet";
    size_t count = size_t(16) << 20;
    unsigned seed = 2009;
    CLI::App app{"Parallel minimum of a uint array in two atomic kernels."};
    app.add_option("--platform", platformSubstr, "platform whose name contains this")
        ->capture_default_str();
    app.add_option("-n,--count", count, "number of uints (a multiple of 4)")
        ->capture_default_str()
        ->check(CLI::Range(size_t(4), size_t(1) << 31));
    std::string access = "auto";
    app.add_option("--access", access,
                   "how work-items read: auto (by device type), chunked, "
                   "interleaved")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "chunked", "interleaved"}));
    app.add_option("--seed", seed, "random seed of the input")->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    if (count % 4 != 0) {
        std::fprintf(stderr, "seed-parallel-min: --count must be a multiple of 4 (uint4 loads)\n");
        return 2;
    }

    return runMain("seed-parallel-min", [&] {
        cl_platform_id platform = findPlatform(platformSubstr);
        cl_device_id device = firstDevice(platform, CL_DEVICE_TYPE_CPU, true);
        Context context = createContext(platform, device);
        Queue queue(createQueue(context, device, 0));
        bool savedTemps = false;
        Program program = buildSavingTemps(context, device, savedTemps);

        std::vector<cl_uint> data(count);
        std::mt19937 rng(seed);
        for (auto& v : data)
            v = rng();
        cl_int err = CL_SUCCESS;
        Buffer src(clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                  count * sizeof(cl_uint), data.data(), &err));
        check(err, "clCreateBuffer(src)");

        ParallelMin pmin(context, device, program, src, count);
        if (access != "auto")
            pmin.setChunked(access == "chunked");
        auto t0 = std::chrono::steady_clock::now();
        pmin.enqueue(queue);
        cl_uint got = pmin.read(queue);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count();
        cl_uint want = *std::min_element(data.begin(), data.end());

        std::string where = platformName(platform) + " / " + deviceName(device);
        if (got != want) {
            std::printf("seed-parallel-min: FAIL min of %zu uints is %u, device said %u on %s\n",
                        count, want, got, where.c_str());
            return 1;
        }
        std::printf("seed-parallel-min: PASS min of %zu uints = %u (%zu groups x %zu, %s, "
                    "%.2f ms%s) on %s\n",
                    count, got, pmin.plan.groups, pmin.plan.local,
                    pmin.plan.chunked ? "chunked" : "interleaved", ms,
                    savedTemps ? ", -save-temps" : "", where.c_str());
        return 0;
    });
}
