// duet-gasdyn under mpirun: the frame commands rank 0 (the display rank) broadcasts from its UI,
// what every rank does with them, the loop of the other ranks, their device choice, and the
// command-line options of the MPI run.
#pragma once

#include "gasdyn_mpi.hpp"
#ifdef DUET_GASDYN_HDF5
#include "gasdyn_checkpoint.hpp"
#endif

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace duet::gasdyn::mpi {

/// What rank 0 broadcasts before each frame: the UI's state. Every rank acts on it alike.
struct FrameCommand {
    enum Op : int { Frame = 0, Quit = 1 };
    int op = Frame;
    int problem = 0, resolution = 0, limiter = 0, riemann = 0, field = 0;
    int steps = 0;     ///< time steps this frame (0: paused)
    int rebuild = 0;   ///< load the problem afresh (problem, resolution or gamma changed, restart)
    int stopAtEnd = 0; ///< cut the clock at the problem's end time
    int viewWidth = 0; ///< the display's pixels: the field is down-sampled to fit them
    int viewHeight = 0;
    int checkpoint = 0; ///< write a checkpoint after this frame's steps
    float gamma = 1.4f, cfl = 0.8f;
};

/// The MPI run's own command-line options, taken off the command line before the engine parses
/// the rest (--platform and --device are read and left for it).
struct RunOptions {
    std::array<int, 2> dims{0, 0}; ///< --ranks XxY (0: MPI_Dims_create's choice)
    std::string platform, device;
    std::string checkpoint;  ///< --checkpoint FILE: where checkpoints go
    int checkpointEvery = 0; ///< --checkpoint-every N steps (0: only on request)
    std::string restart;     ///< --restart FILE
};
/// Removes the MPI options from `args` (argv[0] first) into `out`; returns an error message for
/// a bad value, empty when all is well.
std::string takeRunOptions(std::vector<std::string>& args, RunOptions& out);
/// The MPI options' part of --help.
std::string runOptionsHelp();

/// A context and in-order queue for a rank without GL: the platform whose name contains
/// `platform` (default: the first with devices), the device whose name contains `device`, else
/// device (host index mod count): round-robin over the host's devices.
struct RankDevice {
    cl_context context = nullptr;
    cl_device_id device = nullptr;
    cl_command_queue queue = nullptr;
    std::string name;
    RankDevice(const RunOptions& options, int hostIndex);
    ~RankDevice();
    RankDevice(const RankDevice&) = delete;
    RankDevice& operator=(const RankDevice&) = delete;
};

/// One rank's part of the distributed sample: the simulator (made at the first frame, by all
/// ranks together), the problem, and the display's gather.
class FrameRunner {
public:
    FrameRunner(MPI_Comm comm, cl_context context, cl_device_id device, cl_command_queue queue,
                RunOptions options);
    ~FrameRunner();
    /// Rank 0's command to every rank (collective; rank 0 passes its own, the others anything).
    static FrameCommand broadcast(FrameCommand command, MPI_Comm comm);
    /// Acts on a Frame command (collective): rebuild or options change, the steps, checkpoints,
    /// and on rank 0 the field down-sampled to the display in view().
    void execute(const FrameCommand& command);

    DistributedSimulator* sim() { return m_sim.get(); }
    double endTime() const { return m_endTime; }
    /// Rank 0, after execute: the shown grid (cell sizes scaled by the stride) and its cells.
    const Grid& viewGrid() const { return m_viewGrid; }
    const std::vector<cl_float4>& view() const { return m_view; }
    /// Checkpoint files written so far.
    int checkpointsWritten() const { return m_checkpoints; }
#ifdef DUET_GASDYN_HDF5
    /// After the first frame of a run started with --restart: what the checkpoint held (the
    /// problem, resolution, gamma, limiter and Riemann solver the run continues with).
    const std::optional<CheckpointInfo>& restarted() const { return m_restarted; }
#endif

private:
    void load(const FrameCommand& c);
    void restart();
    void checkpoint();

    MPI_Comm m_comm;
    cl_context m_context;
    cl_device_id m_device;
    cl_command_queue m_queue;
    RunOptions m_options;
    std::unique_ptr<DistributedSimulator> m_sim;
    int m_limiter = -1, m_riemann = -1;
    int m_problem = 0, m_resolution = 0;
    float m_gamma = 1.4f;
    double m_endTime = 0;
    bool m_restartPending = false;
    int m_checkpoints = 0;
#ifdef DUET_GASDYN_HDF5
    std::optional<CheckpointInfo> m_restarted;
#endif
    Grid m_viewGrid;
    std::vector<cl_float4> m_view;
};

/// The loop of every rank but 0: its device, then frames until rank 0 says Quit. Returns the
/// exit code.
int runWorker(MPI_Comm comm, const RunOptions& options, const HostRanks& host);

} // namespace duet::gasdyn::mpi
