// The gas dynamics of duet-gasdyn, apart from GL: problems (initial and boundary conditions),
// the OpenCL MUSCL-Hancock solver (kernels/gasdyn/gasdyn.cl) and the colour-mapped picture
// (kernels/gasdyn/visualize.cl), shared by the sample, its tests and its benchmark.
#pragma once

#include <CL/cl.h>

#include <array>
#include <limits>
#include <string>
#include <vector>

namespace duet::gasdyn {

/// Ghost cells on every side of the grid (the MUSCL stencil reaches two cells).
inline constexpr int kGhost = 2;
/// Rows are padded to a multiple of this many cells: the sweeps run one work-item per column,
/// in work-groups of a width that divides it.
inline constexpr int kRowAlign = 64;
/// Benign cells after the last row (read, never used, by work-items of the last row's edge).
inline constexpr int kPad = 64;
/// Spare cells before the first ghost row: an X sweep over the ghost rows (an MPI rank updating
/// its neighbours' border rows, gasdyn_mpi.hpp) reads two cells before its first cell. A whole
/// row's alignment, so rows stay aligned.
inline constexpr int kFront = kRowAlign;

enum class Problem { SodX, SodY, LaxLiu3, LaxLiu12, KelvinHelmholtz, RayleighTaylor };
/// Names in Problem order, as the sample's "problem" parameter shows them.
inline const std::vector<std::string>& problemNames() {
    static const std::vector<std::string> names = {
        "sod-x", "sod-y", "lax-liu-3", "lax-liu-12", "kelvin-helmholtz", "rayleigh-taylor"};
    return names;
}

enum class Limiter { Minmod = 0, VanLeer = 1, MC = 2 };
enum class RiemannSolver { Hllc, Exact };
/// Numbered as the kernels' BC_* constants.
enum class Boundary { Reflective = 0, Outflow = 1, Periodic = 2 };
enum class Field { Density = 0, Pressure = 1, Schlieren = 2 };
enum class Axis { X, Y };

/// Cell-centred grid over [x0, x0 + nx dx] x [y0, y0 + ny dy], stored after kFront spare cells
/// with kGhost ghost cells around it, rows padded to kRowAlign cells, and kPad cells after it.
struct Grid {
    int nx = 0, ny = 0;
    double x0 = 0, y0 = 0, dx = 1, dy = 1;

    int pitch() const { return (nx + 2 * kGhost + kRowAlign - 1) / kRowAlign * kRowAlign; }
    /// float4 elements of a state buffer.
    size_t cells() const { return kFront + size_t(pitch()) * size_t(ny + 2 * kGhost) + kPad; }
    /// Buffer index of interior cell (i, j); i and j may reach into the ghost cells.
    size_t index(int i, int j) const {
        return kFront + size_t(j + kGhost) * size_t(pitch()) + size_t(i + kGhost);
    }
    double x(int i) const { return x0 + (i + 0.5) * dx; }
    double y(int j) const { return y0 + (j + 0.5) * dy; }
    double width() const { return nx * dx; }
    double height() const { return ny * dy; }
};

/// An initial value problem: grid, gas, gravity, boundaries and the interior cells.
struct Setup {
    Problem problem = Problem::SodX;
    Grid grid;
    float gamma = 1.4f;
    float gravity = 0; ///< acceleration along y (negative: down)
    Boundary xLow = Boundary::Outflow, xHigh = Boundary::Outflow;
    Boundary yLow = Boundary::Outflow, yHigh = Boundary::Outflow;
    double tEnd = 0; ///< the time the problem is usually shown at
    /// Conserved (rho, rho u, rho v, E), cell (i, j) at j * nx + i.
    std::vector<cl_float4> cells;
};

/// Primitive variables of one cell.
struct Primitive {
    double rho = 1, u = 0, v = 0, p = 1;
};
cl_float4 toConserved(const Primitive& w, double gamma);
Primitive toPrimitive(const cl_float4& u, double gamma);

/// The problem on an nx x ny grid: Sod's shock tube along x or y (left/bottom rho 1, p 1;
/// right/top rho 0.125, p 0.1; t = 0.2), the Lax-Liu 2D Riemann configurations 3 and 12
/// (quadrants about (0.5, 0.5), t = 0.3 and 0.25), Kelvin-Helmholtz (periodic, a dense band
/// moving right through a light one moving left, a seeded sine mode) and Rayleigh-Taylor (heavy
/// over light in hydrostatic balance under g = -0.1 on [-0.25, 0.25] x [-0.75, 0.75], periodic in
/// x, reflective in y). Throws std::invalid_argument for sizes below 1 or gamma <= 1.
Setup makeProblem(Problem problem, int nx, int ny, float gamma = 1.4f);
/// The grid the sample uses for a resolution n: n x n, but n x n/4 for Sod along x, n/4 x n for
/// Sod along y and n/3 x n for Rayleigh-Taylor (the domains' aspect ratios).
Setup makeSampleProblem(Problem problem, int resolution, float gamma = 1.4f);

/// Solver choices that change the program (a rebuild).
struct SolverOptions {
    Limiter limiter = Limiter::MC;
    RiemannSolver riemann = RiemannSolver::Hllc;
    int rowGroup = 64; ///< sweep work-group width (cells along x): a power of two <= kRowAlign
    std::string extraBuildOptions; ///< appended to clBuildProgram's options
};

/// What the reduction kernels find over the interior cells.
struct Figures {
    double rate = 0; ///< max((|u| + c) / dx, (|v| + c) / dy): dt = cfl / rate
    double rhoMin = 0, rhoMax = 0, pMin = 0, pMax = 0;
    double gradRhoMax = 0; ///< central differences inside the grid; 0 unless asked for
};

/// The reduction's running maxima as reduce_final folds them (float8): the rate, density max and
/// -min, pressure max and -min, max |grad rho|, two unused.
using Maxima = std::array<cl_float, 8>;

/// kernels/gasdyn/<file> from $DUET_KERNEL_DIR, else the source tree's kernels/ folder.
std::string kernelSource(const std::string& file);

/// The solver on one OpenCL device and in-order queue (which it does not own). Two state
/// buffers (ping-pong: a step's X and Y sweeps go A -> B -> A), the clock (dt, t, rate) and the
/// reduction's figures stay on the device; nothing waits for the host between steps. Throws
/// interop::Error on OpenCL failures (with the build log when the program does not build).
/// Not thread-safe.
class Simulator {
public:
    Simulator(cl_context context, cl_device_id device, cl_command_queue queue,
              SolverOptions options = {});
    ~Simulator();
    Simulator(const Simulator&) = delete;
    Simulator& operator=(const Simulator&) = delete;

    /// Rebuilds the program for new options (the state is kept).
    void setOptions(const SolverOptions& options);
    const SolverOptions& options() const { return m_options; }

    /// Uploads a problem (ghost cells filled by the boundary kernels), t = 0, step count 0.
    void load(const Setup& setup);
    const Setup& setup() const { return m_setup; }
    const Grid& grid() const { return m_setup.grid; }
    void setGamma(float gamma) { m_setup.gamma = gamma; }

    /// Enqueues one time step: the reduction (dt = cfl / rate, cut so that t reaches tEnd and no
    /// further), then the X and Y sweeps, in the order X, Y on even steps and Y, X on odd ones
    /// (Strang's alternation; setFirstAxis(Axis::Y) swaps the two). Each sweep is preceded by
    /// the ghost fill it needs. `gradient` adds max |grad rho| to the figures (schlieren's scale;
    /// it costs the reduction about a third more).
    void step(float cfl, double tEnd = std::numeric_limits<double>::infinity(),
              bool gradient = false);
    void setFirstAxis(Axis axis) { m_firstAxis = axis; }
    long steps() const { return m_steps; }

    // The parts of a step, for tests and benchmarks.
    /// Enqueues the two-stage reduction over the current state and sets the clock's dt.
    void reduce(float cfl, double tEnd = std::numeric_limits<double>::infinity(),
                bool gradient = false);
    /// Blocking: the first reduction stage over this grid's cells, folded on the host. Several
    /// grids' maxima (MPI ranks' blocks) fold with fmax into the whole domain's.
    Maxima localMaxima(bool gradient = false);
    /// The same in two halves, so that the wait can be shared with other transfers: enqueues the
    /// first stage and a non-blocking read of its results; foldLocalMaxima() folds them once
    /// the caller has waited for the queue (clFinish). Wait before the next call.
    void enqueueLocalMaxima(bool gradient = false);
    Maxima foldLocalMaxima() const;
    /// Enqueues reduce_final over `maxima` alone: figures, dt and t as reduce() sets them from
    /// the same maxima (the same kernel, so the same float arithmetic). Does not wait: the
    /// maxima are copied first.
    void reduceFrom(const Maxima& maxima, float cfl,
                    double tEnd = std::numeric_limits<double>::infinity());
    /// Overwrites the clock's dt (the sweeps read it from the device).
    void setTimeStep(float dt);
    /// Overwrites the clock's t (a restart from a checkpoint).
    void setTime(float t);
    /// Enqueues the ghost fill along `axis` of the current state: both sides, or the low (west
    /// or south) or the high one alone.
    void fillGhosts(Axis axis, bool low = true, bool high = true);
    /// Enqueues one sweep from the current state into the other buffer, which becomes current.
    void sweep(Axis axis);
    /// Enqueues the work-groups of a sweep that cover buffer columns [columns[0], columns[1])
    /// (multiples of the work-group width, options().rowGroup, up to grid().pitch()) of interior
    /// rows [rows[0], rows[1]); nothing becomes current. Parts that cover the whole launch once,
    /// then endSweep(), compute what sweep() computes bit for bit (the same work-groups): an MPI
    /// rank updates the cells that need no ghost cell while its halos travel. An X sweep may
    /// also cover ghost rows (rows from -kGhost to ny + kGhost): an MPI rank computes the rows
    /// its Y sweep needs from its neighbours itself. Returns the launch's event when `event` is
    /// set.
    void sweepPart(Axis axis, std::array<size_t, 2> columns, std::array<int, 2> rows,
                   cl_event* event = nullptr);
    /// Makes the buffer that sweepPart() wrote current.
    void endSweep() { m_current = 1 - m_current; }

    /// Blocking reads.
    double time();
    double timeStep();
    Figures figures();
    /// The interior cells (j * nx + i), conserved.
    std::vector<cl_float4> state();

    /// The buffer holding the latest state, and the figures buffer (one float8).
    cl_mem current() const { return m_state[m_current]; }
    cl_mem figuresBuffer() const { return m_figures; }
    /// Group sizes in use (for reports).
    size_t reduceGroups() const { return m_reduceGroups; }

private:
    void build();
    void release();
    void reduceCells(bool gradient);
    void reduceFinal(size_t count, float cfl, double tEnd);
    void enqueue(cl_kernel kernel, cl_uint dims, const size_t* global, const size_t* local,
                 const char* name, const size_t* offset = nullptr, cl_event* event = nullptr);

    cl_context m_context;
    cl_device_id m_device;
    cl_command_queue m_queue;
    SolverOptions m_options;
    Setup m_setup;
    cl_program m_program = nullptr;
    cl_kernel m_sweepX = nullptr, m_sweepY = nullptr, m_boundX = nullptr, m_boundY = nullptr;
    cl_kernel m_reduceCells = nullptr, m_reduceCellsGradient = nullptr, m_reduceFinal = nullptr;
    cl_mem m_state[2] = {nullptr, nullptr};
    cl_mem m_clock = nullptr, m_partial = nullptr, m_figures = nullptr;
    int m_current = 0;
    long m_steps = 0;
    Axis m_firstAxis = Axis::X;
    size_t m_reduceLocal = 64, m_reduceRows = 1, m_reduceGroups = 1, m_partialCapacity = 0;
    // Host copies of the partial maxima (read without waiting) and of the maxima reduceFrom
    // writes without waiting (its write's event: the copy is not touched before it completed).
    std::vector<cl_float> m_partialHost;
    Maxima m_maximaHost{};
    cl_event m_maximaWritten = nullptr;
};

/// Writes the field into an RGBA image (CL_RGBA, CL_UNORM_INT8 or float; nx x ny) with
/// kernels/gasdyn/visualize.cl. Ranges come from the simulator's figures buffer, so call after
/// a step or reduce (with gradient set for schlieren).
class Renderer {
public:
    Renderer(cl_context context, cl_device_id device, cl_command_queue queue);
    ~Renderer();
    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;

    void render(Simulator& sim, cl_mem image, Field field, float contrast = 8.0f,
                cl_event* event = nullptr);
    /// The same from a state buffer in the solver's layout for `grid` (interior cells only are
    /// read) and a figures buffer (one float8 as the reduction leaves it): a field gathered from
    /// MPI ranks.
    void render(cl_mem state, const Grid& grid, float gamma, cl_mem figures, cl_mem image,
                Field field, float contrast = 8.0f, cl_event* event = nullptr);

private:
    cl_command_queue m_queue;
    cl_program m_program = nullptr;
    cl_kernel m_kernel = nullptr;
};

/// The colour map of visualize.cl, on the host (t clamped to [0, 1]; RGB in [0, 1]).
std::array<float, 3> colorMap(float t);
/// The schlieren grey of visualize.cl for |grad rho| / max |grad rho| = g.
std::array<float, 3> schlierenColor(float g, float contrast = 8.0f);

/// Where a domain of the given aspect ratio (width / height) is drawn in a w x h window:
/// centred, as large as fits. GL convention (y from the bottom).
struct Rect {
    int x = 0, y = 0, w = 0, h = 0;
};
Rect letterbox(double aspect, int w, int h);

} // namespace duet::gasdyn
