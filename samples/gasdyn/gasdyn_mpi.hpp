// duet-gasdyn's solver over MPI ranks: a 2D Cartesian decomposition of the grid, one Simulator
// per rank on its own block, one ghost exchange with the eight neighbours per step (beside the
// time step's MPI_Allreduce), so that every cell computes what the single-process Simulator
// computes (bit for bit, whatever the rank count). Built when CMake finds MPI.
#pragma once

#include "gasdyn_sim.hpp"

#include <mpi.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace duet::gasdyn::mpi {

/// Whether an MPI launcher (mpirun, srun) started this process: Open MPI's, PMIx's or PMI's
/// rank variable is set. Programs call MPI_Init only then, so that a plain start stays the
/// single-process program.
bool launchedByMpi();

/// This rank among the ranks of its host (MPI_Comm_split_type, shared memory).
struct HostRanks {
    int index = 0, count = 1;
};
HostRanks hostRanks(MPI_Comm comm);

/// Narrows this process's CPU affinity to its share of the cores it may use (share `index` of
/// `count`, at least one core each, cores reused round-robin when there are fewer than ranks).
/// Duet's CPU device runs one pool thread per usable core (sched_getaffinity), so calling this
/// before the first OpenCL call divides the host's cores among its ranks. With `perRank` > 0
/// each rank keeps that many cores instead (share `index` of cores reused round-robin): a
/// scaling run whose resources grow with the ranks. Returns the number of cores this rank keeps
/// (0 when the affinity cannot be read or set).
unsigned shareHostCores(const HostRanks& ranks, unsigned perRank = 0);

/// The device a rank computes on: on the first platform whose name contains `platform` (empty:
/// Duet's platform when the loader lists one, else the first platform with devices), the first
/// device whose name contains `device`, or with `device` empty the host's ranks take that
/// platform's devices round-robin (`hostIndex`). nullptr when nothing matches. Duet first, as the
/// single-process program and rank 0 (libduet-interop) choose: a host with PoCL or a vendor
/// OpenCL installed beside Duet must not put the ranks on another runtime than rank 0's.
cl_device_id pickRankDevice(const std::string& platform, const std::string& device, int hostIndex);

/// Offset and count of part `index` of `n` cells split into `parts` (the first n % parts parts
/// one cell larger).
std::array<int, 2> splitCells(int n, int parts, int index);

/// One rank's block of the global grid and its neighbours (MPI_PROC_NULL on a physical edge).
struct Block {
    int px = 1, py = 1; ///< ranks along x and y
    int cx = 0, cy = 0; ///< this rank's coordinates
    int i0 = 0, j0 = 0; ///< global index of the block's cell (0, 0)
    int nx = 0, ny = 0; ///< cells of the block
    int west = MPI_PROC_NULL, east = MPI_PROC_NULL, south = MPI_PROC_NULL, north = MPI_PROC_NULL;
};

/// The single-process Simulator's arithmetic spread over the ranks of `comm`. Construction and
/// every member below except the accessors are collective: all ranks call them in the same
/// order with the same arguments. Throws std::invalid_argument when a block would be thinner
/// than the stencil's two ghost cells, interop::Error on OpenCL failures, std::runtime_error on
/// MPI failures.
class DistributedSimulator {
public:
    /// `dims` = {ranks along x, ranks along y}; zeros are chosen by MPI_Dims_create.
    DistributedSimulator(MPI_Comm comm, cl_context context, cl_device_id device,
                         cl_command_queue queue, SolverOptions options = {},
                         std::array<int, 2> dims = {0, 0});
    ~DistributedSimulator();
    DistributedSimulator(const DistributedSimulator&) = delete;
    DistributedSimulator& operator=(const DistributedSimulator&) = delete;

    /// A new decomposition ({x, y} as the constructor's); load a problem after it.
    void setDims(std::array<int, 2> dims);
    void setOptions(const SolverOptions& options) { m_sim.setOptions(options); }
    const SolverOptions& options() const { return m_sim.options(); }

    /// Loads this rank's block of `global` (the same setup on every rank), t = 0, step 0.
    void load(const Setup& global);
    /// Loads this rank's block from its cells (j * block.nx + i) at time t after `steps` steps
    /// (a restart); `global` gives the grid, gas and boundaries, its cells may be empty.
    void loadBlock(const Setup& global, const std::vector<cl_float4>& blockCells, float t,
                   long steps);
    /// The global setup (no cells) and this rank's block.
    const Setup& setup() const { return m_global; }
    const Grid& grid() const { return m_global.grid; }
    const Block& block() const { return m_block; }
    MPI_Comm comm() const { return m_cart; }
    int rank() const { return m_rank; }
    int size() const { return m_size; }

    /// One time step as Simulator::step: the ranks' maxima folded by MPI_Allreduce (MPI_MAX)
    /// into dt, then the X and Y sweeps (Strang's alternation). The ghost cells come from the
    /// boundary kernels on the domain's edges and from one halo exchange per step elsewhere:
    /// strips two cells deep and the corners, sent while the Allreduce runs. The first sweep also
    /// updates the ghost cells that the second one reads (an X sweep runs over the ghost rows
    /// too), with the neighbours' arithmetic, so the second sweep needs no exchange.
    void step(float cfl, double tEnd = std::numeric_limits<double>::infinity(),
              bool gradient = false);
    /// The reduction alone (figures and dt for the current state).
    void reduce(float cfl, double tEnd = std::numeric_limits<double>::infinity(),
                bool gradient = false);
    void setFirstAxis(Axis axis) { m_firstAxis = axis; }
    long steps() const { return m_steps; }

    /// Blocking reads of this rank's clock and figures (the same on every rank).
    double time() { return m_sim.time(); }
    double timeStep() { return m_sim.timeStep(); }
    Figures figures() { return m_sim.figures(); }
    /// This rank's interior cells (j * block.nx + i).
    std::vector<cl_float4> blockState() { return m_sim.state(); }
    /// The whole interior (j * nx + i) on `root`, assembled from every block (MPI_Gatherv);
    /// empty on the other ranks.
    std::vector<cl_float4> gather(int root = 0) { return gatherSampled(1, root); }
    /// Every `stride`-th cell along x and y (global cells (I * stride, J * stride), J * ceil(nx /
    /// stride) + I) on `root`: the field down-sampled for a display smaller than the grid.
    std::vector<cl_float4> gatherSampled(int stride, int root = 0);

    /// The simulator of this rank's block (its own step() would skip the exchange).
    Simulator& local() { return m_sim; }
    /// Whether a step's first sweep updates the cells that need no ghost cell while the halos
    /// travel: its work-groups split into an interior launch, enqueued once dt is known (after
    /// the Allreduce), and the border launches after the halos arrive. The same work-groups
    /// either way, so the same bits; off (the default), the sweep waits for its halos first.
    /// Off because it did not pay where measured (bench/gasdyn_mpi/README.md). Not collective.
    void setOverlap(bool overlap) { m_overlap = overlap; }
    bool overlap() const { return m_overlap; }
    /// Where the halos stop on the host between the device and MPI: plain host memory (the
    /// default) or the pointer of a CL_MEM_ALLOC_HOST_PTR buffer mapped once and kept mapped
    /// (pinned memory on platforms that pin it). Either way one non-blocking read and one
    /// non-blocking write per step. Takes effect at the next load; not collective.
    enum class Staging { Host, Mapped };
    void setStaging(Staging staging) { m_staging = staging; }
    Staging staging() const { return m_staging; }
    /// Seconds this rank spent in halo exchanges since construction: posting the transfers,
    /// waiting for the neighbours' strips and enqueuing the write and the unpack, but neither
    /// the wait for the device (the pack and the read share it with the reduction's read and
    /// the previous step's sweeps), nor the Allreduce while they travel, nor the interior update
    /// that overlaps them: the exchange's cost that the step sees beyond those. And the time
    /// step's MPI_Allreduce (waiting for the slowest rank included).
    double haloSeconds() const { return m_haloSeconds; }
    double reduceSeconds() const { return m_reduceSeconds; }
    /// Blocking waits for the device in the last step (clFinish, clWaitForEvents, blocking
    /// transfers): 1 with an exchange as without (2 with the overlap: the interior's launch).
    /// For tests and reports.
    int lastStepWaits() const { return m_lastStepWaits; }

private:
    // The eight neighbours, in this order (also the MPI tag of a strip travelling that way).
    enum Direction { West, East, South, North, SouthWest, SouthEast, NorthWest, NorthEast };
    static constexpr int kDirections = 8;

    // Neighbours, messages and the pack / unpack tables of this block (at load).
    void planHalo();
    void allocateHalo(size_t cells);
    void releaseHalo();
    // Enqueues the pack and the non-blocking read into the host staging.
    void packHalo();
    void postHalo();
    // Waits for the strips, writes them to the device and unpacks them.
    void finishHalo();
    // The step's first sweep, with the halos in flight when `pending` (interior first when
    // overlapping, then the halos, then the rest).
    void firstSweep(Axis axis, bool pending);

    MPI_Comm m_world = MPI_COMM_NULL, m_cart = MPI_COMM_NULL;
    int m_rank = 0, m_size = 1;
    std::array<int, 2> m_dims{1, 1};
    cl_context m_context;
    cl_command_queue m_queue;
    Simulator m_sim;
    Setup m_global;
    Block m_block;
    long m_steps = 0;
    Axis m_firstAxis = Axis::X;
    cl_program m_haloProgram = nullptr;
    cl_kernel m_pack = nullptr, m_unpack = nullptr;
    // Per direction: the neighbour (MPI_PROC_NULL: none), and where its strip lies in the send
    // and in the receive buffer (the same layout: what goes west has the shape of what comes
    // from the west) and its cells.
    std::array<int, kDirections> m_peer{};
    std::array<size_t, kDirections> m_at{}, m_cells{};
    size_t m_haloCells = 0, m_haloCapacity = 0;
    // Device buffers: packed strips to send and received; the pack and unpack tables (int8
    // regions, halo.cl) with their region counts and cells.
    cl_mem m_send = nullptr, m_recv = nullptr, m_packTable = nullptr, m_unpackTable = nullptr;
    cl_int m_packRegions = 0, m_unpackRegions = 0;
    size_t m_unpackCells = 0;
    // Host staging (Staging::Mapped: two CL_MEM_ALLOC_HOST_PTR buffers, kept mapped).
    Staging m_staging = Staging::Host, m_stagingInUse = Staging::Host;
    std::vector<cl_float4> m_hostSend, m_hostRecv;
    cl_mem m_stageMem[2] = {nullptr, nullptr};
    cl_float4* m_stage[2] = {nullptr, nullptr}; // send, receive
    std::array<MPI_Request, 2 * kDirections> m_requests{};
    int m_requestCount = 0;
    bool m_overlap = false;
    double m_haloSeconds = 0, m_reduceSeconds = 0;
    int m_lastStepWaits = 0;
};

} // namespace duet::gasdyn::mpi
