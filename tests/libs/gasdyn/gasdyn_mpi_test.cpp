// duet-gasdyn's solver over MPI ranks (samples/gasdyn/gasdyn_mpi.hpp), started by mpirun with
// any rank count: every problem after the same steps bit for bit equal to the single-process
// Simulator run by rank 0 on the same device ("decomposition"), Sod's tube against the exact
// solution ("sod"), Lax-Liu configuration 3 against its own mirror image ("riemann"), and a
// restart from a parallel-HDF5 checkpoint on fewer ranks against the uninterrupted run
// ("checkpoint").
// Prints one PASS or FAIL line per check on rank 0; exits non-zero when any check failed.
#include "exact_riemann.hpp"
#include "gasdyn_mpi.hpp"
#ifdef DUET_GASDYN_HDF5
#include "gasdyn_checkpoint.hpp"
#endif
#include "duet/interop/interop.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace gasdyn = duet::gasdyn;
namespace gmpi = duet::gasdyn::mpi;
using gasdyn::Problem;

namespace {

int g_rank = 0;
int g_failures = 0;

// Every rank calls it with the same verdict (rank 0's, broadcast), so all exit alike.
void report(bool ok, const std::string& what) {
    int verdict = ok ? 1 : 0;
    MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!verdict)
        ++g_failures;
    if (g_rank == 0) {
        std::printf("%s: %s\n", verdict ? "PASS" : "FAIL", what.c_str());
        std::fflush(stdout);
    }
}

struct Cl {
    cl_context context = nullptr;
    cl_device_id device = nullptr;
    cl_command_queue queue = nullptr;
    Cl() {
        // The devices' default choice: Duet's platform, the default device's type, round-robin.
        device = gmpi::pickRankDevice("", "", gmpi::hostRanks(MPI_COMM_WORLD).index);
        if (!device)
            throw std::runtime_error("no Duet platform device (OCL_ICD_VENDORS?)");
        cl_int err;
        context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
        duet::interop::check(err, "clCreateContext");
        queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
        duet::interop::check(err, "clCreateCommandQueueWithProperties");
    }
    ~Cl() {
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
};

bool sameBits(const std::vector<cl_float4>& a, const std::vector<cl_float4>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
}

// Cells that differ, for the report.
size_t differingCells(const std::vector<cl_float4>& a, const std::vector<cl_float4>& b) {
    if (a.size() != b.size())
        return std::max(a.size(), b.size());
    size_t n = 0;
    for (size_t k = 0; k < a.size(); ++k)
        n += std::memcmp(&a[k], &b[k], sizeof a[k]) != 0;
    return n;
}

std::string describe(const gasdyn::Setup& s, const gmpi::DistributedSimulator& d) {
    return gasdyn::problemNames()[size_t(s.problem)] + " " + std::to_string(s.grid.nx) + "x" +
           std::to_string(s.grid.ny) + " on " + std::to_string(d.block().px) + "x" +
           std::to_string(d.block().py) + " ranks";
}

// The distributed run and rank 0's single-process run of `steps` steps, compared bit for bit:
// the field, the clock and the reduction's figures. `single` is null on the other ranks.
void compareWithSingle(gmpi::DistributedSimulator& dist, gasdyn::Simulator* single,
                       const gasdyn::Setup& setup, int steps, double tEnd) {
    dist.load(setup);
    for (int s = 0; s < steps; ++s)
        dist.step(0.8f, tEnd);
    std::vector<cl_float4> field = dist.gather(0);
    std::vector<cl_float4> sampled = dist.gatherSampled(3, 0); // a display's down-sampling
    double t = dist.time();
    gasdyn::Figures f = dist.figures();
    std::string what = describe(setup, dist) + ", " + std::to_string(steps) + " steps";
    bool ok = true;
    std::string why;
    if (single) {
        single->load(setup);
        for (int s = 0; s < steps; ++s)
            single->step(0.8f, tEnd);
        std::vector<cl_float4> expected = single->state();
        gasdyn::Figures e = single->figures();
        size_t bad = differingCells(field, expected);
        const int snx = (setup.grid.nx + 2) / 3, sny = (setup.grid.ny + 2) / 3;
        std::vector<cl_float4> expectedSampled;
        for (int j = 0; j < sny; ++j)
            for (int i = 0; i < snx; ++i)
                expectedSampled.push_back(expected[size_t(3 * j) * setup.grid.nx + size_t(3 * i)]);
        bad += differingCells(sampled, expectedSampled);
        ok = bad == 0 && single->time() == t && e.rate == f.rate && e.rhoMax == f.rhoMax &&
             e.rhoMin == f.rhoMin && e.pMax == f.pMax && e.pMin == f.pMin;
        // A frozen state would compare equal too: the flow must have moved.
        bool moved = !sameBits(expected, setup.cells);
        ok = ok && moved;
        why = ", t " + std::to_string(t) + " (single " + std::to_string(single->time()) + "), " +
              std::to_string(bad) + " cells differ" + (moved ? "" : ", the state did not move");
    }
    report(ok, "bit-identical to one process: " + what + why);
}

void decomposition(Cl& cl) {
    // One program build per solver variant and decomposition (builds dominate the run time).
    gasdyn::SolverOptions mc, exact;
    exact.limiter = gasdyn::Limiter::Minmod;
    exact.riemann = gasdyn::RiemannSolver::Exact;
    std::unique_ptr<gasdyn::Simulator> singleMc, singleExact;
    if (g_rank == 0) {
        singleMc = std::make_unique<gasdyn::Simulator>(cl.context, cl.device, cl.queue, mc);
        singleExact = std::make_unique<gasdyn::Simulator>(cl.context, cl.device, cl.queue, exact);
    }
    gmpi::DistributedSimulator dist(MPI_COMM_WORLD, cl.context, cl.device, cl.queue, mc);
    // Interiors updated while the halos travel (off by default), then, last, without.
    dist.setOverlap(true);
    // Outflow edges, cut at an end time reached mid-run (later steps have dt = 0).
    compareWithSingle(dist, singleMc.get(), gasdyn::makeProblem(Problem::LaxLiu3, 50, 38), 24,
                      0.06);
    // Periodic in both directions.
    compareWithSingle(dist, singleMc.get(), gasdyn::makeProblem(Problem::KelvinHelmholtz, 44, 36),
                      20, INFINITY);
    // Periodic along x, reflective walls and gravity along y.
    compareWithSingle(dist, singleMc.get(), gasdyn::makeProblem(Problem::RayleighTaylor, 20, 54),
                      20, INFINITY);
    // The exact Riemann solver and minmod: a rebuild of the same simulators.
    dist.setOptions(exact);
    compareWithSingle(dist, singleExact.get(), gasdyn::makeProblem(Problem::SodY, 12, 60), 16,
                      INFINITY);
    // All ranks along x, then all along y.
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dist.setDims({size, 1});
    compareWithSingle(dist, singleExact.get(), gasdyn::makeProblem(Problem::LaxLiu12, 40, 24), 12,
                      INFINITY);
    dist.setDims({1, size});
    compareWithSingle(dist, singleExact.get(), gasdyn::makeProblem(Problem::LaxLiu12, 24, 40), 12,
                      INFINITY);
    // Blocks over two 64-cell work-groups wide, so that the X sweep's interior work-groups run
    // while the halos travel (the narrower blocks above overlap only along y); then, the default,
    // every sweep waiting for its halos first.
    dist.setDims({size, 1});
    compareWithSingle(dist, singleExact.get(),
                      gasdyn::makeProblem(Problem::KelvinHelmholtz, 140 * size, 10), 8, INFINITY);
    dist.setOverlap(false);
    dist.setDims({0, 0});
    compareWithSingle(dist, singleExact.get(), gasdyn::makeProblem(Problem::LaxLiu3, 50, 38), 12,
                      INFINITY);
    // One wait for the device per step, exchange or not: the halos' read shares the
    // reduction's.
    int waits = dist.lastStepWaits(), most = 0;
    MPI_Allreduce(&waits, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    report(most == 1, "one blocking wait per step on every rank: " + std::to_string(most));
    // The halos staged in a mapped CL_MEM_ALLOC_HOST_PTR buffer instead of host memory, with
    // neighbours across every edge and corner (periodic both ways).
    dist.setStaging(gmpi::DistributedSimulator::Staging::Mapped);
    dist.setOptions(mc);
    compareWithSingle(dist, singleMc.get(), gasdyn::makeProblem(Problem::KelvinHelmholtz, 44, 36),
                      10, INFINITY);
}

void sod(Cl& cl) {
    const int n = 200;
    gasdyn::Setup setup = gasdyn::makeProblem(Problem::SodX, n, 8);
    gmpi::DistributedSimulator dist(MPI_COMM_WORLD, cl.context, cl.device, cl.queue);
    dist.load(setup);
    int guard = 0;
    while (float(dist.time()) < 0.2f && guard++ < 10000)
        dist.step(0.8f, 0.2);
    std::vector<cl_float4> cells = dist.gather(0);
    bool ok = true;
    std::string why;
    if (g_rank == 0) {
        gasdyn::ExactRiemann exact({1.0, 0.0, 1.0}, {0.125, 0.0, 0.1}, 1.4);
        const gasdyn::Grid& g = setup.grid;
        double l1 = 0, spread = 0, t = dist.time();
        for (int i = 0; i < n; ++i) {
            l1 += std::abs(cells[size_t(i)].s[0] - exact.sample((g.x(i) - 0.5) / t).rho) * g.dx;
            for (int j = 1; j < g.ny; ++j)
                spread = std::max(spread, double(std::abs(cells[size_t(j) * n + i].s[0] -
                                                          cells[size_t(i)].s[0])));
        }
        // The single-process test's bound at N = 200 (8e-3 at 100, error order near 1).
        ok = std::abs(t - 0.2) < 1e-6 && l1 < 5e-3 && spread == 0.0;
        why = ": t " + std::to_string(t) + ", L1(rho) " + std::to_string(l1) +
              ", largest row difference " + std::to_string(spread);
    }
    report(ok, "Sod's tube against the exact solution on " + std::to_string(dist.block().px) + "x" +
                   std::to_string(dist.block().py) + " ranks" + why);
}

void riemann(Cl& cl) {
    // Configuration 3 is symmetric about the diagonal: the run equals the run of its transpose
    // (X and Y swapped, the other axis first) up to fused multiply-adds.
    const int n = 64;
    gasdyn::Setup a = gasdyn::makeProblem(Problem::LaxLiu3, n, n);
    std::vector<cl_float4> ra, rb;
    long steps = 0;
    for (int pass = 0; pass < 2; ++pass) {
        gmpi::DistributedSimulator dist(MPI_COMM_WORLD, cl.context, cl.device, cl.queue);
        dist.setFirstAxis(pass ? gasdyn::Axis::Y : gasdyn::Axis::X);
        dist.load(a);
        int guard = 0;
        while (float(dist.time()) < float(a.tEnd) && guard++ < 10000)
            dist.step(0.8f, a.tEnd);
        (pass ? rb : ra) = dist.gather(0);
        steps = dist.steps();
    }
    bool ok = true;
    std::string why;
    if (g_rank == 0) {
        double worst = 0, rhoMin = 1e30, rhoMax = 0;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                const cl_float4& p = ra[size_t(j) * n + i];
                const cl_float4& q = rb[size_t(i) * n + j];
                worst = std::max({worst, double(std::abs(p.s[0] - q.s[0])),
                                  double(std::abs(p.s[1] - q.s[2])),
                                  double(std::abs(p.s[3] - q.s[3]))});
                rhoMin = std::min(rhoMin, double(p.s[0]));
                rhoMax = std::max(rhoMax, double(p.s[0]));
            }
        // Positive, bounded density (the initial range is 0.138 .. 1.5; the compressed jet
        // reaches about 1.8 on coarse grids), and the mirror symmetry.
        ok = worst < 1e-4 && rhoMin > 0.1 && rhoMax < 2.5 && rhoMax > 1.5 && steps > 20;
        why = ": " + std::to_string(steps) + " steps, rho in [" + std::to_string(rhoMin) + ", " +
              std::to_string(rhoMax) + "], largest transpose difference " + std::to_string(worst);
    }
    report(ok, "Lax-Liu 3 to t = 0.3 is mirror-symmetric" + why);
}

#ifdef DUET_GASDYN_HDF5
// A run on every rank writes a checkpoint and goes on; a run on fewer ranks (all but the last,
// or the one when alone) restarts from it and must reach the same field bit for bit.
void checkpointRestart(Cl& cl) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::string path = "gasdyn_mpi_test_" + std::to_string(size) + ".h5";
    const gasdyn::Problem problem = Problem::RayleighTaylor;
    const int resolution = 48, before = 9, after = 7;
    gasdyn::Setup setup = gasdyn::makeSampleProblem(problem, resolution);
    std::vector<cl_float4> reference;
    long stepsAtCheckpoint = 0;
    {
        gmpi::DistributedSimulator dist(MPI_COMM_WORLD, cl.context, cl.device, cl.queue);
        dist.load(setup);
        for (int s = 0; s < before; ++s)
            dist.step(0.8f);
        gmpi::CheckpointInfo info;
        info.problem = int(problem);
        info.resolution = resolution;
        info.limiter = int(gasdyn::Limiter::MC);
        gmpi::writeCheckpoint(dist, path, info);
        stepsAtCheckpoint = dist.steps();
        for (int s = 0; s < after; ++s)
            dist.step(0.8f);
        reference = dist.gather(0);
    }
    MPI_Comm fewer;
    const int restartRanks = size > 1 ? size - 1 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank < restartRanks ? 0 : MPI_UNDEFINED, g_rank, &fewer);
    std::vector<cl_float4> restarted;
    std::string layout;
    bool infoOk = false;
    if (fewer != MPI_COMM_NULL) {
        gmpi::DistributedSimulator dist(fewer, cl.context, cl.device, cl.queue);
        gmpi::CheckpointInfo info = gmpi::restartFromCheckpoint(dist, path);
        infoOk = info.steps == stepsAtCheckpoint && info.problem == int(problem) &&
                 info.resolution == resolution && info.nx == setup.grid.nx &&
                 dist.steps() == stepsAtCheckpoint;
        for (int s = 0; s < after; ++s)
            dist.step(0.8f);
        restarted = dist.gather(0);
        layout = std::to_string(dist.block().px) + "x" + std::to_string(dist.block().py);
        MPI_Comm_free(&fewer);
    }
    std::string why;
    bool ok = true;
    if (g_rank == 0) {
        size_t bad = differingCells(restarted, reference);
        ok = bad == 0 && infoOk && !reference.empty();
        why = ": " + std::to_string(bad) + " cells differ";
    }
    report(ok, "checkpoint on " + std::to_string(size) + " ranks, restart on " +
                   std::to_string(restartRanks) + " (" + layout + "), " + std::to_string(after) +
                   " more steps equal the uninterrupted run" + why);

    // The XDMF description beside it names the datasets.
    if (g_rank == 0) {
        std::FILE* f = std::fopen((path + ".xmf").c_str(), "r");
        std::string text;
        char buffer[4096];
        for (size_t n; f && (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;)
            text.append(buffer, n);
        if (f)
            std::fclose(f);
        ok = text.find(path + ":/density") != std::string::npos &&
             text.find("2DCoRectMesh") != std::string::npos;
    }
    report(ok, "the XDMF description names the checkpoint's datasets");

    // Bad files: missing, and not HDF5.
    std::string missing, notHdf5;
    gmpi::DistributedSimulator dist(MPI_COMM_WORLD, cl.context, cl.device, cl.queue);
    try {
        gmpi::restartFromCheckpoint(dist, "no-such-checkpoint.h5");
    } catch (const std::runtime_error& e) {
        missing = e.what();
    }
    if (g_rank == 0) {
        std::FILE* f = std::fopen("not-a-checkpoint.h5", "w");
        std::fputs("plain text\n", f);
        std::fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    try {
        gmpi::restartFromCheckpoint(dist, "not-a-checkpoint.h5");
    } catch (const std::runtime_error& e) {
        notHdf5 = e.what();
    }
    report(missing.find("cannot open it as an HDF5 file") != std::string::npos &&
               notHdf5.find("cannot open it as an HDF5 file") != std::string::npos,
           "bad checkpoint files are refused: " + missing);
}
#endif

// How ranks pick their device when several runtimes and kinds of device are listed: Duet's
// platform, and without --device only devices of its default device's type (this entry lists the
// CPU device and the software GCN model: the GPU model is never a rank's device by default).
void devices() {
    auto typeOf = [](cl_device_id d) {
        cl_device_type t = 0;
        clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, nullptr);
        return t;
    };
    auto nameOf = [](cl_device_id d) {
        char name[256] = {};
        clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, nullptr);
        return std::string(name);
    };
    bool allCpu = true, onDuet = true;
    for (int index = 0; index < 5; ++index) {
        cl_device_id d = gmpi::pickRankDevice("", "", index);
        allCpu = allCpu && d && (typeOf(d) & CL_DEVICE_TYPE_CPU);
        cl_platform_id p = nullptr;
        char platform[64] = {};
        if (d && clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof p, &p, nullptr) == CL_SUCCESS)
            clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof platform, platform, nullptr);
        onDuet = onDuet && std::strstr(platform, "Duet");
    }
    report(allCpu, "without --device every host index takes a CPU device, never the GCN model");
    report(onDuet, "without --platform the ranks' devices are Duet's");
    cl_device_id gcn = gmpi::pickRankDevice("Duet", "software model", 3);
    report(gcn && (typeOf(gcn) & CL_DEVICE_TYPE_GPU) &&
               nameOf(gcn).find("gfx") != std::string::npos,
           "--device picks the named device whatever its type");
    report(!gmpi::pickRankDevice("", "no such device", 0), "an unknown --device finds none");
    report(!gmpi::pickRankDevice("no such platform", "", 0), "an unknown --platform finds none");
}

void badInput(Cl& cl) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return;
    // Blocks of one cell along x: thinner than the stencil's ghost layers.
    bool threw = false;
    std::string message;
    try {
        gmpi::DistributedSimulator dist(MPI_COMM_WORLD, cl.context, cl.device, cl.queue, {},
                                        {size, 1});
        dist.load(gasdyn::makeProblem(Problem::SodX, size, 4));
    } catch (const std::invalid_argument& e) {
        threw = true;
        message = e.what();
    }
    report(threw && message.find("thinner") != std::string::npos,
           "blocks thinner than the ghost layers are refused: " + message);
}

} // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    std::string what = argc > 1 ? argv[1] : "decomposition";
    int code = 0;
    try {
        // Duet's CPU device: one pool thread per core this rank keeps.
        gmpi::shareHostCores(gmpi::hostRanks(MPI_COMM_WORLD));
        if (what == "devices") {
            devices();
            MPI_Finalize();
            return g_failures ? 1 : 0;
        }
        Cl cl;
        if (what == "decomposition") {
            decomposition(cl);
            badInput(cl);
        } else if (what == "sod") {
            sod(cl);
        } else if (what == "riemann") {
            riemann(cl);
#ifdef DUET_GASDYN_HDF5
        } else if (what == "checkpoint") {
            checkpointRestart(cl);
#endif
        } else {
            if (g_rank == 0)
                std::fprintf(
                    stderr,
                    "usage: gasdyn_mpi_test [decomposition|sod|riemann|checkpoint|devices]\n");
            code = 2;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gasdyn_mpi_test (rank %d): %s\n", g_rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return code ? code : g_failures ? 1 : 0;
}
