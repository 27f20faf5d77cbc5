// duet-gasdyn under mpirun: frame commands, the worker ranks' loop and device choice, and the
// MPI run's options (see gasdyn_mpi_app.hpp).
#include "gasdyn_mpi_app.hpp"

#include "duet/interop/interop.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace duet::gasdyn::mpi {

namespace {

bool parseInt(const std::string& text, int& out) {
    try {
        size_t used = 0;
        long v = std::stol(text, &used);
        if (used != text.size() || v < 0 || v > 1000000000)
            return false;
        out = int(v);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

std::string deviceName(cl_device_id d) {
    char name[256] = {};
    clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, nullptr);
    return name;
}

} // namespace

std::string takeRunOptions(std::vector<std::string>& args, RunOptions& out) {
    std::vector<std::string> kept;
    for (size_t k = 0; k < args.size(); ++k) {
        std::string a = args[k], value;
        bool hasValue = false;
        if (size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = a.substr(eq + 1);
            a = a.substr(0, eq);
            hasValue = true;
        }
        const bool ours =
            a == "--ranks" || a == "--checkpoint" || a == "--checkpoint-every" || a == "--restart";
        const bool shared = a == "--platform" || a == "--device";
        if (!ours && !shared) {
            kept.push_back(args[k]);
            continue;
        }
        if (!hasValue) {
            if (k + 1 >= args.size())
                return a + ": a value is required";
            value = args[++k];
        }
        if (shared) { // left for the engine too
            kept.push_back(a);
            kept.push_back(value);
            (a == "--platform" ? out.platform : out.device) = value;
        } else if (a == "--ranks") {
            size_t x = value.find('x');
            int px = 0, py = 0;
            if (x == std::string::npos || !parseInt(value.substr(0, x), px) ||
                !parseInt(value.substr(x + 1), py))
                return "--ranks: expected XxY such as 4x2 (0 lets MPI choose), got '" + value + "'";
            out.dims = {px, py};
        } else if (a == "--checkpoint") {
            out.checkpoint = value;
        } else if (a == "--checkpoint-every") {
            if (!parseInt(value, out.checkpointEvery))
                return "--checkpoint-every: expected a step count, got '" + value + "'";
        } else {
            out.restart = value;
        }
    }
    args = kept;
#ifndef DUET_GASDYN_HDF5
    if (!out.checkpoint.empty() || out.checkpointEvery || !out.restart.empty())
        return "--checkpoint, --checkpoint-every and --restart need parallel HDF5, which this "
               "build of duet-gasdyn was made without (libhdf5-openmpi-dev)";
#else
    if (out.checkpointEvery && out.checkpoint.empty())
        out.checkpoint = "duet-gasdyn.h5";
#endif
    return {};
}

std::string runOptionsHelp() {
    return "Under mpirun (mpirun -np N duet-gasdyn ...): rank 0 shows the field, every rank "
           "computes a block.\n"
           "  --ranks XxY             ranks along x and y (default: MPI_Dims_create's choice)\n"
           "  --checkpoint FILE       checkpoint file (parallel HDF5, FILE.xmf beside it; default\n"
           "                          duet-gasdyn.h5)\n"
           "  --checkpoint-every N    write a checkpoint every N steps (0: only on request, the\n"
           "                          'checkpoint' parameter)\n"
           "  --restart FILE          resume from a checkpoint, on any number of ranks (problem,\n"
           "                          resolution, gamma, limiter and solver from the file)\n"
           "  --platform / --device   every rank's (default: Duet's platform); without --device,\n"
           "                          ranks take the host's devices of the platform's default\n"
           "                          device's type round-robin (DUET_DEVICES=nvidia: the GPUs)\n";
}

RankDevice::RankDevice(const RunOptions& options, int hostIndex)
    : device(pickRankDevice(options.platform, options.device, hostIndex)) {
    if (!device)
        throw interop::Error(
            "duet-gasdyn: no OpenCL device" +
                (options.device.empty() ? std::string() : " named like '" + options.device + "'") +
                (options.platform.empty() ? std::string()
                                          : " on a platform named like '" + options.platform + "'"),
            CL_DEVICE_NOT_FOUND);
    name = deviceName(device);
    cl_int err;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    interop::check(err, "clCreateContext");
    queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
    if (err != CL_SUCCESS)
        clReleaseContext(context);
    interop::check(err, "clCreateCommandQueueWithProperties");
}

RankDevice::~RankDevice() {
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}

FrameRunner::FrameRunner(MPI_Comm comm, cl_context context, cl_device_id device,
                         cl_command_queue queue, RunOptions options)
    : m_comm(comm), m_context(context), m_device(device), m_queue(queue),
      m_options(std::move(options)), m_restartPending(!m_options.restart.empty()) {}

FrameRunner::~FrameRunner() = default;

FrameCommand FrameRunner::broadcast(FrameCommand command, MPI_Comm comm) {
    MPI_Bcast(&command, int(sizeof command), MPI_BYTE, 0, comm);
    return command;
}

void FrameRunner::load(const FrameCommand& c) {
    Setup setup = makeSampleProblem(Problem(c.problem), c.resolution, c.gamma);
    m_endTime = setup.tEnd;
    m_sim->load(setup);
    m_problem = c.problem;
    m_resolution = c.resolution;
    m_gamma = c.gamma;
}

void FrameRunner::restart() {
#ifdef DUET_GASDYN_HDF5
    CheckpointInfo info = restartFromCheckpoint(*m_sim, m_options.restart);
    m_restarted = info;
    if (info.limiter != m_limiter || info.riemann != m_riemann) {
        SolverOptions o;
        o.limiter = Limiter(info.limiter);
        o.riemann = info.riemann ? RiemannSolver::Exact : RiemannSolver::Hllc;
        m_sim->setOptions(o);
        m_limiter = info.limiter;
        m_riemann = info.riemann;
    }
    m_endTime = m_sim->setup().tEnd;
    m_problem = info.problem;
    m_resolution = info.resolution;
    m_gamma = info.gamma;
    int rank = 0;
    MPI_Comm_rank(m_comm, &rank);
    if (rank == 0) {
        std::printf("duet-gasdyn: restarted from %s: %s at resolution %d, t = %.6f after %ld "
                    "steps\n",
                    m_options.restart.c_str(), problemNames()[size_t(info.problem)].c_str(),
                    info.resolution, double(info.time), info.steps);
        std::fflush(stdout);
    }
#endif
}

void FrameRunner::checkpoint() {
#ifdef DUET_GASDYN_HDF5
    CheckpointInfo info;
    info.problem = m_problem;
    info.resolution = m_resolution;
    info.gamma = m_gamma;
    info.limiter = m_limiter;
    info.riemann = m_riemann;
    const std::string path = m_options.checkpoint.empty() ? "duet-gasdyn.h5" : m_options.checkpoint;
    writeCheckpoint(*m_sim, path, info);
    ++m_checkpoints;
    if (m_sim->rank() == 0) {
        std::printf("duet-gasdyn: checkpoint %s at step %ld\n", path.c_str(), m_sim->steps());
        std::fflush(stdout);
    }
#endif
}

void FrameRunner::execute(const FrameCommand& c) {
    SolverOptions o;
    o.limiter = Limiter(c.limiter);
    o.riemann = c.riemann ? RiemannSolver::Exact : RiemannSolver::Hllc;
    if (!m_sim) {
        m_sim = std::make_unique<DistributedSimulator>(m_comm, m_context, m_device, m_queue, o,
                                                       m_options.dims);
        m_limiter = c.limiter;
        m_riemann = c.riemann;
    } else if (c.limiter != m_limiter || c.riemann != m_riemann) {
        m_sim->setOptions(o); // the state is kept
        m_limiter = c.limiter;
        m_riemann = c.riemann;
    }
    const bool schlieren = c.field == int(Field::Schlieren);
    if (c.rebuild && m_restartPending) {
        m_restartPending = false;
        restart();
        // The first picture's ranges; the reduction moves the clock on by the pending step,
        // which the checkpoint's clock already includes: put it back.
        float t = float(m_sim->time());
        m_sim->reduce(c.cfl, m_endTime, true);
        m_sim->local().setTime(t);
    } else if (c.rebuild) {
        load(c);
        m_sim->reduce(c.cfl, m_endTime, true); // the first picture's ranges
    }
    double tEnd = c.stopAtEnd ? m_endTime : std::numeric_limits<double>::infinity();
    if (c.steps == 0 && schlieren)
        m_sim->reduce(c.cfl, tEnd, true);
    for (int s = 0; s < c.steps; ++s) {
        m_sim->step(c.cfl, tEnd, schlieren);
        if (m_options.checkpointEvery > 0 && m_sim->steps() % m_options.checkpointEvery == 0)
            checkpoint();
    }
    if (c.checkpoint)
        checkpoint();

    // The display: every stride-th cell, so that the shown grid fits the window.
    const Grid& g = m_sim->grid();
    int stride = 1;
    if (c.viewWidth > 0 && c.viewHeight > 0)
        stride = std::max(
            {1, (g.nx + c.viewWidth - 1) / c.viewWidth, (g.ny + c.viewHeight - 1) / c.viewHeight});
    m_view = m_sim->gatherSampled(stride, 0);
    m_viewGrid = g;
    m_viewGrid.nx = (g.nx + stride - 1) / stride;
    m_viewGrid.ny = (g.ny + stride - 1) / stride;
    m_viewGrid.dx = g.dx * stride;
    m_viewGrid.dy = g.dy * stride;
}

int runWorker(MPI_Comm comm, const RunOptions& options, const HostRanks& host) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    std::unique_ptr<RankDevice> device;
    std::unique_ptr<FrameRunner> runner;
    try {
        device = std::make_unique<RankDevice>(options, host.index);
        std::printf("duet-gasdyn rank %d: OpenCL %s\n", rank, device->name.c_str());
        std::fflush(stdout);
        runner = std::make_unique<FrameRunner>(comm, device->context, device->device, device->queue,
                                               options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "duet-gasdyn rank %d: %s\n", rank, e.what());
        MPI_Abort(comm, 1);
    }
    for (;;) {
        FrameCommand c = FrameRunner::broadcast({}, comm);
        if (c.op == FrameCommand::Quit)
            break;
        try {
            runner->execute(c);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "duet-gasdyn rank %d: %s\n", rank, e.what());
            MPI_Abort(comm, 1);
        }
    }
    return 0;
}

} // namespace duet::gasdyn::mpi
