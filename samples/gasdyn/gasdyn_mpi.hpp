// duet-gasdyn's solver over MPI ranks: a 2D Cartesian decomposition of the grid, one Simulator
// per rank on its own block, ghost exchange with the neighbours before each sweep and the time
// step from an MPI_Allreduce, so that every cell computes what the single-process Simulator
// computes (bit for bit, whatever the rank count). Built when CMake finds MPI.
#pragma once

#include "gasdyn_sim.hpp"

#include <mpi.h>

#include <array>
#include <memory>
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
    /// into dt, then the X and Y sweeps (Strang's alternation), each after its ghost fill:
    /// boundary kernels on the domain's edges, halo exchange with the neighbours elsewhere.
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
    /// Whether a sweep updates the cells that need no ghost cell while its halos travel: the
    /// sweep's work-groups split into an interior launch, enqueued as soon as the halos are
    /// posted, and the border launches after they arrive. The same work-groups either way, so
    /// the same bits; off (the default), each sweep waits for its halos first. Off because it did
    /// not pay where measured (bench/gasdyn_mpi/README.md: 2 ranks of one core each, 5-10 %
    /// slower: the extra launches and the wake-up cost more than the exposed exchange saves).
    /// Not collective.
    void setOverlap(bool overlap) { m_overlap = overlap; }
    bool overlap() const { return m_overlap; }
    /// Seconds this rank spent in halo exchanges since construction: packing, posting and
    /// finishing the transfers and unpacking, with the wait for the neighbours' strips, but not
    /// the interior update that overlaps them (so: the exchange's cost that the step sees).
    /// And the time step's MPI_Allreduce.
    double haloSeconds() const { return m_haloSeconds; }
    double reduceSeconds() const { return m_reduceSeconds; }

private:
    // The halo exchange along one axis in two halves: begin packs the strips, maps the halo
    // buffers and posts MPI_Irecv/MPI_Isend; end waits for them, unmaps and unpacks.
    bool beginExchange(Axis axis);
    void endExchange();
    void sweep(Axis axis);

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
    cl_kernel m_pack[2] = {nullptr, nullptr}, m_unpack[2] = {nullptr, nullptr};
    // Halo buffers (CL_MEM_ALLOC_HOST_PTR, mapped while MPI reads or fills them): send low,
    // send high, receive low, receive high.
    cl_mem m_halo[4] = {nullptr, nullptr, nullptr, nullptr};
    size_t m_haloCells = 0;
    // The exchange in flight between beginExchange and endExchange.
    struct Pending {
        int axis = 0, count = 0;
        MPI_Request requests[4];
        void* mapped[4] = {nullptr, nullptr, nullptr, nullptr};
        bool active = false;
    } m_pending;
    bool m_overlap = false;
    double m_haloSeconds = 0, m_reduceSeconds = 0;
};

} // namespace duet::gasdyn::mpi
