// Problems, the OpenCL solver and the field renderer of duet-gasdyn (see gasdyn_sim.hpp).
#include "gasdyn_sim.hpp"

#include "duet/data_paths.hpp"
#include "duet/interop/interop.hpp"
#include "duet/interop/program.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace duet::gasdyn {

namespace {

constexpr size_t kFigures = 6;    // floats per work-item in the reduction's local memory
constexpr size_t kReduceRows = 8; // rows per work-item of reduce_cells (REDUCE_ROWS)
constexpr double kPi = 3.14159265358979323846;

cl_program buildProgram(cl_context context, cl_device_id device, const std::string& file,
                        const std::string& options) {
    return interop::buildProgram(context, {device}, kernelSource(file), options, file);
}

cl_kernel createKernel(cl_program program, const char* name) {
    cl_int err;
    cl_kernel kernel = clCreateKernel(program, name, &err);
    interop::check(err, (std::string("clCreateKernel(") + name + ")").c_str());
    return kernel;
}

template <typename T> void setArg(cl_kernel kernel, cl_uint index, const T& value) {
    interop::check(clSetKernelArg(kernel, index, sizeof(T), &value), "clSetKernelArg");
}

Setup gridFor(Problem problem, int nx, int ny, float gamma, double width, double height, double x0,
              double y0) {
    if (nx < 1 || ny < 1)
        throw std::invalid_argument("gasdyn: grid sizes must be at least 1, got " +
                                    std::to_string(nx) + " x " + std::to_string(ny));
    if (!(gamma > 1.0f) || !std::isfinite(gamma))
        throw std::invalid_argument("gasdyn: gamma must exceed 1, got " + std::to_string(gamma));
    Setup s;
    s.problem = problem;
    s.gamma = gamma;
    s.grid.nx = nx;
    s.grid.ny = ny;
    s.grid.x0 = x0;
    s.grid.y0 = y0;
    s.grid.dx = width / nx;
    s.grid.dy = height / ny;
    s.cells.resize(size_t(nx) * size_t(ny));
    return s;
}

template <typename F> void fill(Setup& s, F primitiveAt) {
    for (int j = 0; j < s.grid.ny; ++j)
        for (int i = 0; i < s.grid.nx; ++i)
            s.cells[size_t(j) * s.grid.nx + i] =
                toConserved(primitiveAt(s.grid.x(i), s.grid.y(j)), s.gamma);
}

void setBoundaries(Setup& s, Boundary all) {
    s.xLow = s.xHigh = s.yLow = s.yHigh = all;
}

// The four quadrant states of a Lax-Liu configuration, counter-clockwise from the upper right.
Setup quadrants(Problem problem, int nx, int ny, float gamma, const Primitive (&q)[4],
                double tEnd) {
    Setup s = gridFor(problem, nx, ny, gamma, 1.0, 1.0, 0.0, 0.0);
    fill(s, [&](double x, double y) {
        if (y > 0.5)
            return x > 0.5 ? q[0] : q[1];
        return x > 0.5 ? q[3] : q[2];
    });
    setBoundaries(s, Boundary::Outflow);
    s.tEnd = tEnd;
    return s;
}

} // namespace

cl_float4 toConserved(const Primitive& w, double gamma) {
    double e = w.p / (gamma - 1.0) + 0.5 * w.rho * (w.u * w.u + w.v * w.v);
    return {{float(w.rho), float(w.rho * w.u), float(w.rho * w.v), float(e)}};
}

Primitive toPrimitive(const cl_float4& u, double gamma) {
    Primitive w;
    w.rho = u.s[0];
    w.u = u.s[1] / w.rho;
    w.v = u.s[2] / w.rho;
    w.p = (gamma - 1.0) * (u.s[3] - 0.5 * w.rho * (w.u * w.u + w.v * w.v));
    return w;
}

Setup makeProblem(Problem problem, int nx, int ny, float gamma) {
    switch (problem) {
    case Problem::SodX:
    case Problem::SodY: {
        bool alongX = problem == Problem::SodX;
        int n = alongX ? nx : ny;
        double h = 1.0 / std::max(n, 1);
        Setup s = alongX ? gridFor(problem, nx, ny, gamma, 1.0, ny * h, 0.0, 0.0)
                         : gridFor(problem, nx, ny, gamma, nx * h, 1.0, 0.0, 0.0);
        fill(s, [&](double x, double y) {
            double d = alongX ? x : y;
            return d < 0.5 ? Primitive{1.0, 0.0, 0.0, 1.0} : Primitive{0.125, 0.0, 0.0, 0.1};
        });
        setBoundaries(s, Boundary::Outflow);
        s.tEnd = 0.2;
        return s;
    }
    case Problem::LaxLiu3: {
        const Primitive q[4] = {{1.5, 0.0, 0.0, 1.5},
                                {0.5323, 1.206, 0.0, 0.3},
                                {0.138, 1.206, 1.206, 0.029},
                                {0.5323, 0.0, 1.206, 0.3}};
        return quadrants(problem, nx, ny, gamma, q, 0.3);
    }
    case Problem::LaxLiu12: {
        const Primitive q[4] = {{0.5313, 0.0, 0.0, 0.4},
                                {1.0, 0.7276, 0.0, 1.0},
                                {0.8, 0.0, 0.0, 1.0},
                                {1.0, 0.0, 0.7276, 1.0}};
        return quadrants(problem, nx, ny, gamma, q, 0.25);
    }
    case Problem::KelvinHelmholtz: {
        Setup s = gridFor(problem, nx, ny, gamma, 1.0, 1.0, 0.0, 0.0);
        const double sigma2 = 2.0 * (0.05 / std::sqrt(2.0)) * (0.05 / std::sqrt(2.0));
        fill(s, [&](double x, double y) {
            bool band = std::abs(y - 0.5) < 0.25;
            double v = 0.01 * std::sin(4.0 * kPi * x) *
                       (std::exp(-(y - 0.25) * (y - 0.25) / sigma2) +
                        std::exp(-(y - 0.75) * (y - 0.75) / sigma2));
            return Primitive{band ? 2.0 : 1.0, band ? 0.5 : -0.5, v, 2.5};
        });
        setBoundaries(s, Boundary::Periodic);
        s.tEnd = 2.0;
        return s;
    }
    case Problem::RayleighTaylor: {
        Setup s = gridFor(problem, nx, ny, gamma, 0.5, 1.5, -0.25, -0.75);
        s.gravity = -0.1f;
        fill(s, [&](double x, double y) {
            double rho = y > 0.0 ? 2.0 : 1.0;
            double v =
                0.01 * (1.0 + std::cos(4.0 * kPi * x)) * (1.0 + std::cos(3.0 * kPi * y)) / 4.0;
            return Primitive{rho, 0.0, v, 2.5 - 0.1 * rho * y};
        });
        s.xLow = s.xHigh = Boundary::Periodic;
        s.yLow = s.yHigh = Boundary::Reflective;
        s.tEnd = 12.75;
        return s;
    }
    }
    throw std::invalid_argument("gasdyn: unknown problem " + std::to_string(int(problem)));
}

Setup makeSampleProblem(Problem problem, int n, float gamma) {
    switch (problem) {
    case Problem::SodX:
        return makeProblem(problem, n, std::max(n / 4, 1), gamma);
    case Problem::SodY:
        return makeProblem(problem, std::max(n / 4, 1), n, gamma);
    case Problem::RayleighTaylor:
        return makeProblem(problem, std::max(n / 3, 1), n, gamma);
    default:
        return makeProblem(problem, n, n, gamma);
    }
}

std::string kernelSource(const std::string& file) {
    std::string path = duet::dataDirectory("DUET_KERNEL_DIR", "kernels", DUET_KERNEL_SOURCE_DIR) +
                       "/gasdyn/" + file;
    return interop::readTextFile(path);
}

Simulator::Simulator(cl_context context, cl_device_id device, cl_command_queue queue,
                     SolverOptions options)
    : m_context(context), m_device(device), m_queue(queue), m_options(std::move(options)) {
    build();
    cl_int err;
    m_clock = clCreateBuffer(context, CL_MEM_READ_WRITE, 4 * sizeof(cl_float), nullptr, &err);
    interop::check(err, "clCreateBuffer(clock)");
    m_figures = clCreateBuffer(context, CL_MEM_READ_WRITE, 8 * sizeof(cl_float), nullptr, &err);
    interop::check(err, "clCreateBuffer(figures)");
}

Simulator::~Simulator() {
    if (m_maximaWritten) {
        clWaitForEvents(1, &m_maximaWritten);
        clReleaseEvent(m_maximaWritten);
    }
    release();
    for (cl_mem m : {m_state[0], m_state[1], m_clock, m_partial, m_figures})
        if (m)
            clReleaseMemObject(m);
}

void Simulator::release() {
    for (cl_kernel* k : {&m_sweepX, &m_sweepY, &m_boundX, &m_boundY, &m_reduceCells,
                         &m_reduceCellsGradient, &m_reduceFinal}) {
        if (*k)
            clReleaseKernel(*k);
        *k = nullptr;
    }
    if (m_program)
        clReleaseProgram(m_program);
    m_program = nullptr;
}

void Simulator::build() {
    const SolverOptions& o = m_options;
    if (o.rowGroup < 1 || o.rowGroup > kRowAlign || (o.rowGroup & (o.rowGroup - 1)))
        throw std::invalid_argument("gasdyn: the sweep work-group width must be a power of two "
                                    "up to " +
                                    std::to_string(kRowAlign) + ", got " +
                                    std::to_string(o.rowGroup));
    std::string options = "-D LIMITER=" + std::to_string(int(o.limiter));
    if (o.riemann == RiemannSolver::Exact)
        options += " -D RIEMANN_EXACT";
    if (!o.extraBuildOptions.empty())
        options += " " + o.extraBuildOptions;
    cl_program program = buildProgram(m_context, m_device, "gasdyn.cl", options);
    release();
    m_program = program;
    m_sweepX = createKernel(m_program, "sweep_x");
    m_sweepY = createKernel(m_program, "sweep_y");
    m_boundX = createKernel(m_program, "boundary_x");
    m_boundY = createKernel(m_program, "boundary_y");
    m_reduceCells = createKernel(m_program, "reduce_cells");
    m_reduceCellsGradient = createKernel(m_program, "reduce_cells_gradient");
    m_reduceFinal = createKernel(m_program, "reduce_final");
    for (cl_kernel k : {m_sweepX, m_sweepY}) {
        size_t maxLocal = 0;
        interop::check(clGetKernelWorkGroupInfo(k, m_device, CL_KERNEL_WORK_GROUP_SIZE,
                                                sizeof maxLocal, &maxLocal, nullptr),
                       "clGetKernelWorkGroupInfo(sweep)");
        if (maxLocal < size_t(o.rowGroup))
            throw interop::Error("gasdyn: the device runs at most " + std::to_string(maxLocal) +
                                 " work-items of a sweep per group; asked for " +
                                 std::to_string(o.rowGroup));
    }
    size_t reduceMax = 0;
    for (cl_kernel k : {m_reduceCells, m_reduceCellsGradient, m_reduceFinal}) {
        size_t n = 0;
        interop::check(
            clGetKernelWorkGroupInfo(k, m_device, CL_KERNEL_WORK_GROUP_SIZE, sizeof n, &n, nullptr),
            "clGetKernelWorkGroupInfo(reduce)");
        reduceMax = reduceMax ? std::min(reduceMax, n) : n;
    }
    m_reduceLocal = kRowAlign;
    while (m_reduceLocal > reduceMax && m_reduceLocal > 1)
        m_reduceLocal /= 2;
}

void Simulator::setOptions(const SolverOptions& options) {
    SolverOptions old = m_options;
    m_options = options;
    try {
        build();
    } catch (...) {
        m_options = old;
        throw;
    }
}

void Simulator::load(const Setup& setup) {
    const Grid& g = setup.grid;
    if (g.nx < 1 || g.ny < 1 || setup.cells.size() != size_t(g.nx) * size_t(g.ny))
        throw std::invalid_argument("gasdyn: the setup's cells do not fill its grid");
    bool sameSize = m_state[0] && m_setup.grid.cells() == g.cells();
    m_setup = setup;
    m_setup.cells.clear(); // the device holds the state from here on
    cl_int err;
    if (!sameSize) {
        for (cl_mem& m : m_state) {
            if (m)
                clReleaseMemObject(m);
            m = clCreateBuffer(m_context, CL_MEM_READ_WRITE, g.cells() * sizeof(cl_float4), nullptr,
                               &err);
            interop::check(err, "clCreateBuffer(state)");
        }
    }
    // Ghost, padding and pad cells start as a gas at rest (read as neighbours by work-items whose
    // results are never used as data).
    std::vector<cl_float4> host(g.cells(), toConserved(Primitive{}, setup.gamma));
    for (int j = 0; j < g.ny; ++j)
        std::copy_n(&setup.cells[size_t(j) * g.nx], g.nx, &host[g.index(0, j)]);
    for (cl_mem m : m_state)
        interop::check(clEnqueueWriteBuffer(m_queue, m, CL_TRUE, 0, host.size() * sizeof(cl_float4),
                                            host.data(), 0, nullptr, nullptr),
                       "clEnqueueWriteBuffer(state)");
    const cl_float clock[4] = {0, 0, 0, 0};
    interop::check(clEnqueueWriteBuffer(m_queue, m_clock, CL_TRUE, 0, sizeof clock, clock, 0,
                                        nullptr, nullptr),
                   "clEnqueueWriteBuffer(clock)");
    const cl_float figures[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    interop::check(clEnqueueWriteBuffer(m_queue, m_figures, CL_TRUE, 0, sizeof figures, figures, 0,
                                        nullptr, nullptr),
                   "clEnqueueWriteBuffer(figures)");
    m_current = 0;
    m_steps = 0;
    fillGhosts(Axis::X);
    fillGhosts(Axis::Y);
}

void Simulator::enqueue(cl_kernel kernel, cl_uint dims, const size_t* global, const size_t* local,
                        const char* name, const size_t* offset, cl_event* event) {
    cl_int err =
        clEnqueueNDRangeKernel(m_queue, kernel, dims, offset, global, local, 0, nullptr, event);
    if (err != CL_SUCCESS)
        throw interop::Error(std::string("clEnqueueNDRangeKernel(") + name +
                                 ") failed: " + interop::errorName(err),
                             err);
}

void Simulator::fillGhosts(Axis axis, bool low, bool high) {
    if (!low && !high)
        return;
    const Grid& g = m_setup.grid;
    cl_kernel k = axis == Axis::X ? m_boundX : m_boundY;
    setArg(k, 0, m_state[m_current]);
    setArg(k, 1, cl_int(g.nx));
    setArg(k, 2, cl_int(g.ny));
    setArg(k, 3, cl_int(g.pitch()));
    setArg(k, 4, cl_int(axis == Axis::X ? m_setup.xLow : m_setup.yLow));
    setArg(k, 5, cl_int(axis == Axis::X ? m_setup.xHigh : m_setup.yHigh));
    // Work-items side * G + k along the axis's dimension: one side alone is half the range.
    const size_t sides = low && high ? 2 : 1, first = low ? 0 : size_t(kGhost);
    const size_t along = sides * size_t(kGhost);
    const bool x = axis == Axis::X;
    size_t global[2] = {x ? along : size_t(g.nx), x ? size_t(g.ny) : along};
    size_t offset[2] = {x ? first : 0, x ? 0 : first};
    enqueue(k, 2, global, nullptr, x ? "boundary_x" : "boundary_y", offset);
}

void Simulator::sweep(Axis axis) {
    const Grid& g = m_setup.grid;
    sweepPart(axis, {0, size_t(g.pitch())}, {0, g.ny});
    endSweep();
}

void Simulator::sweepPart(Axis axis, std::array<size_t, 2> columns, std::array<int, 2> rows,
                          cl_event* event) {
    const Grid& g = m_setup.grid;
    const size_t group = size_t(m_options.rowGroup);
    bool x = axis == Axis::X;
    // The Y sweep reads two rows either side: its rows stay inside; the X sweep's may be ghosts.
    const int reach = x ? kGhost : 0;
    if (columns[0] % group || columns[1] % group || columns[0] >= columns[1] ||
        columns[1] > size_t(g.pitch()) || rows[0] >= rows[1] || rows[0] < -reach ||
        rows[1] > g.ny + reach)
        throw std::invalid_argument("gasdyn: a sweep part must be whole work-groups inside the "
                                    "grid's rows (the X sweep's: ghost rows too) and pitch");
    cl_kernel k = x ? m_sweepX : m_sweepY;
    setArg(k, 0, m_state[m_current]);
    setArg(k, 1, m_state[1 - m_current]);
    setArg(k, 2, cl_int(g.nx));
    setArg(k, 3, cl_int(g.ny));
    setArg(k, 4, cl_int(g.pitch()));
    setArg(k, 5, m_clock);
    setArg(k, 6, cl_float(x ? g.dx : g.dy));
    setArg(k, 7, cl_float(m_setup.gamma));
    setArg(k, 8, cl_float(x ? 0.0f : m_setup.gravity));
    setArg(k, 9, cl_int((x ? m_setup.xLow : m_setup.yLow) == Boundary::Reflective));
    setArg(k, 10, cl_int((x ? m_setup.xHigh : m_setup.yHigh) == Boundary::Reflective));
    // The kernels' second dimension counts buffer rows (interior row 0 is buffer row G).
    const size_t offset[2] = {columns[0], size_t(rows[0] + kGhost)};
    const size_t global[2] = {columns[1] - columns[0], size_t(rows[1] - rows[0])};
    const size_t local[2] = {group, 1};
    enqueue(k, 2, global, local, x ? "sweep_x" : "sweep_y", offset, event);
}

void Simulator::reduceCells(bool gradient) {
    const Grid& g = m_setup.grid;
    m_reduceRows = (size_t(g.ny) + kReduceRows - 1) / kReduceRows;
    m_reduceGroups = m_reduceRows * (size_t(g.pitch()) / m_reduceLocal);
    if (m_partialCapacity < m_reduceGroups) {
        if (m_partial)
            clReleaseMemObject(m_partial);
        m_partial = nullptr;
        m_partialCapacity = 0;
        cl_int err;
        m_partial = clCreateBuffer(m_context, CL_MEM_READ_WRITE,
                                   m_reduceGroups * 8 * sizeof(cl_float), nullptr, &err);
        interop::check(err, "clCreateBuffer(partial maxima)");
        m_partialCapacity = m_reduceGroups;
    }
    cl_kernel k = gradient ? m_reduceCellsGradient : m_reduceCells;
    setArg(k, 0, m_state[m_current]);
    setArg(k, 1, cl_int(g.nx));
    setArg(k, 2, cl_int(g.ny));
    setArg(k, 3, cl_int(g.pitch()));
    setArg(k, 4, cl_float(g.dx));
    setArg(k, 5, cl_float(g.dy));
    setArg(k, 6, cl_float(m_setup.gamma));
    setArg(k, 7, m_partial);
    interop::check(clSetKernelArg(k, 8, m_reduceLocal * kFigures * sizeof(cl_float), nullptr),
                   "clSetKernelArg(reduce_cells scratch)");
    size_t global[2] = {size_t(g.pitch()), m_reduceRows};
    size_t local[2] = {m_reduceLocal, 1};
    enqueue(k, 2, global, local, "reduce_cells");
}

void Simulator::reduceFinal(size_t count, float cfl, double tEnd) {
    cl_kernel k = m_reduceFinal;
    setArg(k, 0, m_partial);
    setArg(k, 1, cl_int(count));
    setArg(k, 2, cl_float(cfl));
    setArg(k, 3, cl_float(std::isfinite(tEnd) ? float(tEnd) : INFINITY));
    setArg(k, 4, m_figures);
    setArg(k, 5, m_clock);
    interop::check(clSetKernelArg(k, 6, m_reduceLocal * kFigures * sizeof(cl_float), nullptr),
                   "clSetKernelArg(reduce_final scratch)");
    enqueue(k, 1, &m_reduceLocal, &m_reduceLocal, "reduce_final");
}

void Simulator::reduce(float cfl, double tEnd, bool gradient) {
    reduceCells(gradient);
    reduceFinal(m_reduceGroups, cfl, tEnd);
}

Maxima Simulator::localMaxima(bool gradient) {
    enqueueLocalMaxima(gradient);
    interop::check(clFinish(m_queue), "clFinish(partial maxima)");
    return foldLocalMaxima();
}

void Simulator::enqueueLocalMaxima(bool gradient) {
    reduceCells(gradient);
    m_partialHost.resize(m_reduceGroups * 8);
    interop::check(clEnqueueReadBuffer(m_queue, m_partial, CL_FALSE, 0,
                                       m_partialHost.size() * sizeof(cl_float),
                                       m_partialHost.data(), 0, nullptr, nullptr),
                   "clEnqueueReadBuffer(partial maxima)");
}

Maxima Simulator::foldLocalMaxima() const {
    // reduce_final's starting values and fold (fmax, which ignores NaN as OpenCL's does).
    Maxima m = {0.0f, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 0.0f, 0.0f, 0.0f};
    for (size_t g = 0; g < m_partialHost.size() / 8; ++g)
        for (size_t c = 0; c < m.size(); ++c)
            m[c] = std::fmax(m[c], m_partialHost[g * 8 + c]);
    return m;
}

void Simulator::reduceFrom(const Maxima& maxima, float cfl, double tEnd) {
    if (m_partialCapacity == 0)
        reduceCells(false); // allocates the partial buffer (its contents are overwritten)
    if (m_maximaWritten) {  // the last write still reads the host copy until it completed
        cl_int err = clWaitForEvents(1, &m_maximaWritten);
        clReleaseEvent(m_maximaWritten);
        m_maximaWritten = nullptr;
        interop::check(err, "clWaitForEvents(maxima written)");
    }
    m_maximaHost = maxima;
    interop::check(clEnqueueWriteBuffer(m_queue, m_partial, CL_FALSE, 0, sizeof(Maxima),
                                        m_maximaHost.data(), 0, nullptr, &m_maximaWritten),
                   "clEnqueueWriteBuffer(maxima)");
    reduceFinal(1, cfl, tEnd);
}

void Simulator::setTimeStep(float dt) {
    interop::check(
        clEnqueueWriteBuffer(m_queue, m_clock, CL_TRUE, 0, sizeof dt, &dt, 0, nullptr, nullptr),
        "clEnqueueWriteBuffer(dt)");
}

void Simulator::setTime(float t) {
    interop::check(clEnqueueWriteBuffer(m_queue, m_clock, CL_TRUE, sizeof(cl_float), sizeof t, &t,
                                        0, nullptr, nullptr),
                   "clEnqueueWriteBuffer(t)");
}

void Simulator::step(float cfl, double tEnd, bool gradient) {
    reduce(cfl, tEnd, gradient);
    Axis first = m_firstAxis;
    if (m_steps % 2)
        first = first == Axis::X ? Axis::Y : Axis::X;
    Axis second = first == Axis::X ? Axis::Y : Axis::X;
    fillGhosts(first);
    sweep(first);
    fillGhosts(second);
    sweep(second);
    ++m_steps;
}

double Simulator::time() {
    cl_float clock[4];
    interop::check(
        clEnqueueReadBuffer(m_queue, m_clock, CL_TRUE, 0, sizeof clock, clock, 0, nullptr, nullptr),
        "clEnqueueReadBuffer(clock)");
    return clock[1];
}

double Simulator::timeStep() {
    cl_float dt;
    interop::check(
        clEnqueueReadBuffer(m_queue, m_clock, CL_TRUE, 0, sizeof dt, &dt, 0, nullptr, nullptr),
        "clEnqueueReadBuffer(clock)");
    return dt;
}

Figures Simulator::figures() {
    cl_float f[8];
    interop::check(
        clEnqueueReadBuffer(m_queue, m_figures, CL_TRUE, 0, sizeof f, f, 0, nullptr, nullptr),
        "clEnqueueReadBuffer(figures)");
    Figures out;
    out.rate = f[0];
    out.rhoMax = f[1];
    out.rhoMin = -f[2];
    out.pMax = f[3];
    out.pMin = -f[4];
    out.gradRhoMax = f[5];
    return out;
}

std::vector<cl_float4> Simulator::state() {
    const Grid& g = m_setup.grid;
    std::vector<cl_float4> all(g.cells());
    interop::check(clEnqueueReadBuffer(m_queue, m_state[m_current], CL_TRUE, 0,
                                       all.size() * sizeof(cl_float4), all.data(), 0, nullptr,
                                       nullptr),
                   "clEnqueueReadBuffer(state)");
    std::vector<cl_float4> out(size_t(g.nx) * size_t(g.ny));
    for (int j = 0; j < g.ny; ++j)
        std::copy_n(&all[g.index(0, j)], g.nx, &out[size_t(j) * g.nx]);
    return out;
}

Renderer::Renderer(cl_context context, cl_device_id device, cl_command_queue queue)
    : m_queue(queue) {
    m_program = buildProgram(context, device, "visualize.cl", "");
    m_kernel = createKernel(m_program, "render_field");
}

Renderer::~Renderer() {
    if (m_kernel)
        clReleaseKernel(m_kernel);
    if (m_program)
        clReleaseProgram(m_program);
}

void Renderer::render(Simulator& sim, cl_mem image, Field field, float contrast, cl_event* event) {
    render(sim.current(), sim.grid(), sim.setup().gamma, sim.figuresBuffer(), image, field,
           contrast, event);
}

void Renderer::render(cl_mem state, const Grid& g, float gamma, cl_mem figures, cl_mem image,
                      Field field, float contrast, cl_event* event) {
    setArg(m_kernel, 0, state);
    setArg(m_kernel, 1, cl_int(g.nx));
    setArg(m_kernel, 2, cl_int(g.ny));
    setArg(m_kernel, 3, cl_int(g.pitch()));
    setArg(m_kernel, 4, cl_float(gamma));
    setArg(m_kernel, 5, cl_int(field));
    setArg(m_kernel, 6, figures);
    setArg(m_kernel, 7, cl_float(1.0 / g.dx));
    setArg(m_kernel, 8, cl_float(1.0 / g.dy));
    setArg(m_kernel, 9, cl_float(contrast));
    setArg(m_kernel, 10, image);
    size_t global[2] = {size_t(g.nx), size_t(g.ny)};
    cl_int err =
        clEnqueueNDRangeKernel(m_queue, m_kernel, 2, nullptr, global, nullptr, 0, nullptr, event);
    interop::check(err, "clEnqueueNDRangeKernel(render_field)");
}

std::array<float, 3> colorMap(float t) {
    static const float stops[6][3] = {{0.05f, 0.03f, 0.20f}, {0.10f, 0.25f, 0.65f},
                                      {0.10f, 0.60f, 0.75f}, {0.45f, 0.80f, 0.35f},
                                      {0.95f, 0.55f, 0.15f}, {1.00f, 0.95f, 0.60f}};
    float x = std::clamp(t, 0.0f, 1.0f) * 5.0f;
    int k = std::min(int(x), 4);
    float f = x - float(k);
    std::array<float, 3> rgb;
    for (int c = 0; c < 3; ++c)
        rgb[c] = stops[k][c] + (stops[k + 1][c] - stops[k][c]) * f;
    return rgb;
}

std::array<float, 3> schlierenColor(float g, float contrast) {
    float s = std::exp(-contrast * g);
    return {0.96f * s, 0.96f * s, 0.92f * s};
}

Rect letterbox(double aspect, int w, int h) {
    Rect r;
    if (w <= 0 || h <= 0 || !(aspect > 0))
        return r;
    if (double(w) / h > aspect) {
        r.h = h;
        r.w = std::max(1, int(std::lround(h * aspect)));
    } else {
        r.w = w;
        r.h = std::max(1, int(std::lround(w / aspect)));
    }
    r.x = (w - r.w) / 2;
    r.y = (h - r.h) / 2;
    return r;
}

} // namespace duet::gasdyn
