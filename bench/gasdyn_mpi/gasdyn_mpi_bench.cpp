// duet-gasdyn-mpi-bench: one point of a scaling curve of duet-gasdyn's distributed solver, run
// under mpirun (bench/gasdyn_mpi_run.sh runs it for each rank count and prints efficiencies).
// Kelvin-Helmholtz (periodic), a fixed n x n grid (strong scaling) or an n x n block per rank
// (weak scaling); the time of a step (slowest rank), the share of it in halo exchange and in the
// time step's MPI_Allreduce, and cell updates per second. One line of JSON on rank 0. The mode
// "alone" is weak scaling's ceiling on the host: every rank steps its own n x n periodic grid
// (MPI_COMM_SELF: no halos, no Allreduce) on the same cores at the same time, so T(1) / T(P)
// there is what the machine itself loses when P ranks run (shared memory bandwidth and caches,
// clock, the hypervisor), apart from anything the decomposition costs.
#include "gasdyn_mpi.hpp"
#include "duet/interop/interop.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace gasdyn = duet::gasdyn;
namespace gmpi = duet::gasdyn::mpi;

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Mass of this rank's block in double, and whether every value is finite.
std::pair<double, bool> massOf(gmpi::DistributedSimulator& sim) {
    double mass = 0;
    bool finite = true;
    for (const cl_float4& c : sim.blockState()) {
        mass += c.s[0];
        for (float v : c.s)
            finite = finite && std::isfinite(v);
    }
    return {mass, finite};
}

} // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    CLI::App app{"One point of duet-gasdyn's MPI scaling (run under mpirun; see "
                 "bench/gasdyn_mpi_run.sh)"};
    std::string mode = "weak", platform, device, staging = "host";
    int n = 256, steps = 20, warmup = 20;
    unsigned coresPerRank = 0;
    bool shareCores = true, overlap = false, verify = false;
    app.add_option("--mode", mode,
                   "weak: an n x n block per rank; strong: an n x n grid; alone: every rank its "
                   "own n x n grid, no communication (weak scaling's ceiling on this host)")
        ->check(CLI::IsMember({"weak", "strong", "alone"}));
    app.add_option("--n", n, "cells per side (of a block or of the grid)")
        ->check(CLI::Range(8, 65536));
    app.add_option("--steps", steps, "timed steps")->check(CLI::Range(1, 100000));
    app.add_option("--warmup", warmup,
                   "untimed steps first (enough for the CPU device to optimise every kernel: "
                   "16 launches each)")
        ->check(CLI::Range(0, 1000));
    app.add_option("--platform", platform,
                   "OpenCL platform whose name contains this (default: Duet's)");
    app.add_option("--device", device,
                   "OpenCL device whose name contains this (default: the "
                   "host's devices round-robin)");
    app.add_flag("!--no-share-cores", shareCores,
                 "keep every rank's full CPU affinity (by default the host's cores are divided "
                 "among its ranks, which sizes the CPU device's thread pool)");
    app.add_option("--cores-per-rank", coresPerRank,
                   "cores each rank keeps (0: the host's cores divided among its ranks); start "
                   "mpirun with --bind-to none so that every rank sees the host's cores")
        ->check(CLI::Range(0, 4096));
    app.add_flag("--overlap", overlap,
                 "update each block's interior while its halos travel (default: wait for the "
                 "halos before each sweep)");
    app.add_flag("--verify", verify,
                 "afterwards, rank 0 runs the whole grid as one process on its device for the "
                 "same steps and compares the fields bit for bit (valid only when equal)");
    app.add_option("--staging", staging,
                   "where the halos stop on the host: plain host memory, or a mapped "
                   "CL_MEM_ALLOC_HOST_PTR buffer kept mapped")
        ->check(CLI::IsMember({"host", "mapped"}));
    try {
        app.parse(argc, argv);
        if (verify && mode == "alone")
            throw CLI::ValidationError("--verify", "compares a decomposed field; alone has none");
    } catch (const CLI::ParseError& e) {
        int code = rank == 0 ? app.exit(e) : e.get_exit_code();
        MPI_Finalize();
        return code;
    }

    gmpi::HostRanks host = gmpi::hostRanks(MPI_COMM_WORLD);
    unsigned cores = shareCores ? gmpi::shareHostCores(host, coresPerRank) : 0;
    int code = 0;
    try {
        cl_device_id dev = gmpi::pickRankDevice(platform, device, host.index);
        if (!dev)
            throw std::runtime_error("no OpenCL device" +
                                     (device.empty() ? "" : " named like '" + device + "'"));
        char devName[256] = {};
        clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof devName, devName, nullptr);
        cl_int err;
        cl_context context = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
        duet::interop::check(err, "clCreateContext");
        cl_command_queue queue = clCreateCommandQueueWithProperties(context, dev, nullptr, &err);
        duet::interop::check(err, "clCreateCommandQueueWithProperties");
        {
            const bool alone = mode == "alone";
            gmpi::DistributedSimulator sim(alone ? MPI_COMM_SELF : MPI_COMM_WORLD, context, dev,
                                           queue);
            sim.setOverlap(overlap);
            sim.setStaging(staging == "mapped" ? gmpi::DistributedSimulator::Staging::Mapped
                                               : gmpi::DistributedSimulator::Staging::Host);
            const gmpi::Block& b = sim.block();
            int nx = mode == "weak" ? n * b.px : n, ny = mode == "weak" ? n * b.py : n;
            const int gx = alone ? n * size : nx; // the cells stepped by all ranks together
            sim.load(gasdyn::makeProblem(gasdyn::Problem::KelvinHelmholtz, nx, ny));
            auto [mass0, finite0] = massOf(sim);
            for (int s = 0; s < warmup; ++s)
                sim.step(0.8f);
            clFinish(queue);
            double halo0 = sim.haloSeconds(), reduce0 = sim.reduceSeconds();
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now();
            for (int s = 0; s < steps; ++s)
                sim.step(0.8f);
            clFinish(queue);
            double mine = now() - t0;
            MPI_Barrier(MPI_COMM_WORLD);
            double wall = now() - t0;
            double halo = sim.haloSeconds() - halo0, reduce = sim.reduceSeconds() - reduce0;
            auto [mass1, finite1] = massOf(sim);
            // The distributed field against one process's, bit for bit (rank 0's device).
            long differing = -1;
            if (verify) {
                std::vector<cl_float4> field = sim.gather(0);
                if (rank == 0) {
                    gasdyn::Simulator single(context, dev, queue);
                    single.load(gasdyn::makeProblem(gasdyn::Problem::KelvinHelmholtz, nx, ny));
                    for (long s = 0; s < sim.steps(); ++s)
                        single.step(0.8f);
                    std::vector<cl_float4> expected = single.state();
                    differing = 0;
                    for (size_t k = 0; k < expected.size(); ++k)
                        differing += std::memcmp(&expected[k], &field[k], sizeof field[k]) != 0;
                }
            }
            double local[3] = {mass0, mass1, double(finite0 && finite1)}, total[3];
            MPI_Reduce(local, total, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            MPI_Reduce(&local[2], &total[2], 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
            double shares[5] = {halo / mine, reduce / mine, mine, halo / steps, mine / steps},
                   maxShares[5], sumShares[5];
            MPI_Reduce(shares, maxShares, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            MPI_Reduce(shares, sumShares, 5, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                bool ok = total[2] > 0 && std::abs(total[1] - total[0]) <= 1e-6 * total[0] &&
                          differing <= 0;
                double stepMs = 1000.0 * wall / steps;
                std::printf(
                    "{\"mode\": \"%s\", \"ranks\": %d, \"layout\": \"%dx%d\", \"nx\": %d, "
                    "\"ny\": %d, \"device\": \"%s\", \"cores_per_rank\": %u, \"steps\": %d, "
                    "\"step_ms\": %.4f, \"mcells\": %.3f, \"halo_share_mean\": %.4f, "
                    "\"halo_share_max\": %.4f, \"halo_ms_mean\": %.4f, "
                    "\"allreduce_share_mean\": %.4f, \"waits_per_step\": %d, \"valid\": %s, "
                    "\"mass_drift\": %.3g, \"overlap\": %s, \"staging\": \"%s\", "
                    "\"differing_cells\": %ld, \"rank_step_ms_mean\": %.4f, "
                    "\"rank_step_ms_max\": %.4f}\n",
                    mode.c_str(), size, alone ? size : b.px, b.py, gx, ny, devName, cores, steps,
                    stepMs, double(gx) * ny / (stepMs * 1e3), sumShares[0] / size, maxShares[0],
                    1000.0 * sumShares[3] / size, sumShares[1] / size, sim.lastStepWaits(),
                    ok ? "true" : "false", std::abs(total[1] - total[0]) / total[0],
                    overlap ? "true" : "false", staging.c_str(), differing,
                    1000.0 * sumShares[4] / size, 1000.0 * maxShares[4]);
                std::fflush(stdout);
                code = ok ? 0 : 1;
            }
        }
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "duet-gasdyn-mpi-bench (rank %d): %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return code;
}
