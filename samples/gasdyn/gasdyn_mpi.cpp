// duet-gasdyn's solver over MPI ranks (see gasdyn_mpi.hpp).
#include "gasdyn_mpi.hpp"

#include "duet/interop/interop.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace duet::gasdyn::mpi {

namespace {

void mpiCheck(int code, const char* what) {
    if (code == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw std::runtime_error(std::string("duet-gasdyn: ") + what +
                             " failed: " + std::string(text, size_t(length)));
}

template <typename T> void setArg(cl_kernel kernel, cl_uint index, const T& value) {
    interop::check(clSetKernelArg(kernel, index, sizeof(T), &value), "clSetKernelArg(halo)");
}

double seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

} // namespace

bool launchedByMpi() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
        if (const char* v = std::getenv(name); v && *v)
            return true;
    return false;
}

HostRanks hostRanks(MPI_Comm comm) {
    MPI_Comm host;
    mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host),
             "MPI_Comm_split_type");
    HostRanks r;
    MPI_Comm_rank(host, &r.index);
    MPI_Comm_size(host, &r.count);
    MPI_Comm_free(&host);
    return r;
}

unsigned shareHostCores(const HostRanks& ranks, unsigned perRank) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    std::vector<int> cores;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set))
            cores.push_back(c);
    if (cores.empty() || ranks.count < 1)
        return 0;
    const int n = int(cores.size()), count = ranks.count, index = ranks.index % count;
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (perRank > 0) {
        const size_t keep = std::min(size_t(perRank), cores.size());
        for (size_t k = 0; k < keep; ++k)
            CPU_SET(cores[(size_t(index) * keep + k) % cores.size()], &mine);
    } else if (n >= count) {
        auto [first, kept] = splitCells(n, count, index);
        for (int k = first; k < first + kept; ++k)
            CPU_SET(cores[size_t(k)], &mine);
    } else {
        CPU_SET(cores[size_t(index % n)], &mine);
    }
    if (sched_setaffinity(0, sizeof mine, &mine) != 0)
        return 0;
    return unsigned(CPU_COUNT(&mine));
}

std::array<int, 2> splitCells(int n, int parts, int index) {
    const int base = n / parts, extra = n % parts;
    return {index * base + std::min(index, extra), base + (index < extra ? 1 : 0)};
}

DistributedSimulator::DistributedSimulator(MPI_Comm comm, cl_context context, cl_device_id device,
                                           cl_command_queue queue, SolverOptions options,
                                           std::array<int, 2> dims)
    : m_context(context), m_queue(queue), m_sim(context, device, queue, std::move(options)) {
    MPI_Comm_dup(comm, &m_world);
    setDims(dims);

    std::string source = kernelSource("halo.cl");
    const char* text = source.c_str();
    cl_int err;
    m_haloProgram = clCreateProgramWithSource(context, 1, &text, nullptr, &err);
    interop::check(err, "clCreateProgramWithSource(halo.cl)");
    interop::check(clBuildProgram(m_haloProgram, 1, &device, "", nullptr, nullptr),
                   "clBuildProgram(halo.cl)");
    const char* names[4] = {"pack_x", "pack_y", "unpack_x", "unpack_y"};
    cl_kernel* kernels[4] = {&m_pack[0], &m_pack[1], &m_unpack[0], &m_unpack[1]};
    for (int k = 0; k < 4; ++k) {
        *kernels[k] = clCreateKernel(m_haloProgram, names[k], &err);
        interop::check(err, (std::string("clCreateKernel(") + names[k] + ")").c_str());
    }
}

void DistributedSimulator::setDims(std::array<int, 2> dims) {
    int size = 1;
    MPI_Comm_size(m_world, &size);
    // MPI_Dims_create orders its answer largest first; ours is {x, y}: more ranks along y
    // (rows), so that blocks stay wide along x, the contiguous axis the sweeps vectorise over.
    int d[2] = {dims[1], dims[0]};
    if (d[0] < 0 || d[1] < 0)
        throw std::invalid_argument("duet-gasdyn: rank counts along x and y must be positive");
    if ((d[0] > 0 && size % d[0]) || (d[1] > 0 && size % d[1]) ||
        (d[0] > 0 && d[1] > 0 && d[0] * d[1] != size))
        throw std::invalid_argument("duet-gasdyn: " + std::to_string(dims[0]) + " x " +
                                    std::to_string(dims[1]) + " ranks do not divide the " +
                                    std::to_string(size) + " ranks there are");
    mpiCheck(MPI_Dims_create(size, 2, d), "MPI_Dims_create");
    if (m_cart != MPI_COMM_NULL)
        MPI_Comm_free(&m_cart);
    m_dims = {d[1], d[0]};
    // Periodic in both directions: neighbours across an edge that the problem does not wrap
    // are dropped at load (the boundaries belong to the problem, the communicator to us).
    int cartDims[2] = {m_dims[1], m_dims[0]}, periods[2] = {1, 1};
    mpiCheck(MPI_Cart_create(m_world, 2, cartDims, periods, 0, &m_cart), "MPI_Cart_create");
    MPI_Comm_rank(m_cart, &m_rank);
    MPI_Comm_size(m_cart, &m_size);
    int coords[2];
    MPI_Cart_coords(m_cart, m_rank, 2, coords);
    m_block = Block{};
    m_block.px = m_dims[0];
    m_block.py = m_dims[1];
    m_block.cy = coords[0];
    m_block.cx = coords[1];
}

DistributedSimulator::~DistributedSimulator() {
    for (cl_mem m : m_halo)
        if (m)
            clReleaseMemObject(m);
    for (cl_kernel k : {m_pack[0], m_pack[1], m_unpack[0], m_unpack[1]})
        if (k)
            clReleaseKernel(k);
    if (m_haloProgram)
        clReleaseProgram(m_haloProgram);
    if (m_cart != MPI_COMM_NULL)
        MPI_Comm_free(&m_cart);
    if (m_world != MPI_COMM_NULL)
        MPI_Comm_free(&m_world);
}

void DistributedSimulator::loadBlock(const Setup& global, const std::vector<cl_float4>& cells,
                                     float t, long steps) {
    const Grid& g = global.grid;
    Block& b = m_block;
    auto [i0, nx] = splitCells(g.nx, b.px, b.cx);
    auto [j0, ny] = splitCells(g.ny, b.py, b.cy);
    // Every rank checks every block's size (the smallest is the last's), so all throw alike.
    int thinnestX = g.nx / b.px, thinnestY = g.ny / b.py;
    if ((b.px > 1 && thinnestX < kGhost) || (b.py > 1 && thinnestY < kGhost))
        throw std::invalid_argument("duet-gasdyn: " + std::to_string(g.nx) + " x " +
                                    std::to_string(g.ny) + " cells over " + std::to_string(b.px) +
                                    " x " + std::to_string(b.py) +
                                    " ranks leave blocks thinner than the stencil's " +
                                    std::to_string(kGhost) + " ghost cells");
    if (cells.size() != size_t(nx) * size_t(ny))
        throw std::invalid_argument("duet-gasdyn: a block's cells do not fill the block");
    b.i0 = i0;
    b.j0 = j0;
    b.nx = nx;
    b.ny = ny;
    int west, east, south, north;
    mpiCheck(MPI_Cart_shift(m_cart, 1, 1, &west, &east), "MPI_Cart_shift(x)");
    mpiCheck(MPI_Cart_shift(m_cart, 0, 1, &south, &north), "MPI_Cart_shift(y)");
    const bool wrapX = global.xLow == Boundary::Periodic, wrapY = global.yLow == Boundary::Periodic;
    b.west = (b.cx > 0 || (wrapX && b.px > 1)) ? west : MPI_PROC_NULL;
    b.east = (b.cx < b.px - 1 || (wrapX && b.px > 1)) ? east : MPI_PROC_NULL;
    b.south = (b.cy > 0 || (wrapY && b.py > 1)) ? south : MPI_PROC_NULL;
    b.north = (b.cy < b.py - 1 || (wrapY && b.py > 1)) ? north : MPI_PROC_NULL;

    // The block as a problem of its own: the same cell sizes, the domain's boundaries on its
    // edges and, where a neighbour supplies the ghosts, outflow (filled, then overwritten by the
    // exchange; anything but reflective, which would put a wall into the sweeps).
    Setup local;
    local.problem = global.problem;
    local.gamma = global.gamma;
    local.gravity = global.gravity;
    local.tEnd = global.tEnd;
    local.grid.nx = nx;
    local.grid.ny = ny;
    local.grid.dx = g.dx;
    local.grid.dy = g.dy;
    local.grid.x0 = g.x0 + i0 * g.dx;
    local.grid.y0 = g.y0 + j0 * g.dy;
    local.xLow = b.west == MPI_PROC_NULL ? global.xLow : Boundary::Outflow;
    local.xHigh = b.east == MPI_PROC_NULL ? global.xHigh : Boundary::Outflow;
    local.yLow = b.south == MPI_PROC_NULL ? global.yLow : Boundary::Outflow;
    local.yHigh = b.north == MPI_PROC_NULL ? global.yHigh : Boundary::Outflow;
    local.cells = cells;
    m_sim.load(local);
    m_sim.setTime(t);
    m_global = global;
    m_global.cells.clear();
    m_steps = steps;

    size_t haloCells = size_t(kGhost) * size_t(std::max(nx, ny));
    if (haloCells > m_haloCells) {
        for (cl_mem& m : m_halo) {
            if (m)
                clReleaseMemObject(m);
            cl_int err;
            m = clCreateBuffer(m_context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                               haloCells * sizeof(cl_float4), nullptr, &err);
            interop::check(err, "clCreateBuffer(halo)");
        }
        m_haloCells = haloCells;
    }
}

void DistributedSimulator::load(const Setup& global) {
    const Grid& g = global.grid;
    if (global.cells.size() != size_t(g.nx) * size_t(g.ny))
        throw std::invalid_argument("gasdyn: the setup's cells do not fill its grid");
    auto [i0, nx] = splitCells(g.nx, m_dims[0], m_block.cx);
    auto [j0, ny] = splitCells(g.ny, m_dims[1], m_block.cy);
    std::vector<cl_float4> cells(size_t(std::max(nx, 0)) * size_t(std::max(ny, 0)));
    for (int j = 0; j < ny; ++j)
        std::copy_n(&global.cells[size_t(j0 + j) * size_t(g.nx) + size_t(i0)], nx,
                    &cells[size_t(j) * size_t(nx)]);
    loadBlock(global, cells, 0.0f, 0);
}

void DistributedSimulator::reduce(float cfl, double tEnd, bool gradient) {
    Maxima mine = m_sim.localMaxima(gradient), all;
    auto t0 = std::chrono::steady_clock::now();
    mpiCheck(MPI_Allreduce(mine.data(), all.data(), int(all.size()), MPI_FLOAT, MPI_MAX, m_cart),
             "MPI_Allreduce(maxima)");
    m_reduceSeconds += seconds(t0);
    m_sim.reduceFrom(all, cfl, tEnd);
}

bool DistributedSimulator::beginExchange(Axis axis) {
    const bool x = axis == Axis::X;
    const int a = x ? 0 : 1;
    const int low = x ? m_block.west : m_block.south, high = x ? m_block.east : m_block.north;
    if (low == MPI_PROC_NULL && high == MPI_PROC_NULL)
        return false;
    // What the queue holds (the previous sweep, this one's ghost fill) is the update's time,
    // not the exchange's: wait for it before the clock starts (the map below would wait anyway).
    interop::check(clFinish(m_queue), "clFinish(before the halo exchange)");
    auto t0 = std::chrono::steady_clock::now();
    const Grid& g = m_sim.grid();
    const int n = x ? g.ny : g.nx; // strip length
    const size_t cells = size_t(kGhost) * size_t(n);
    const size_t global[2] = {x ? size_t(kGhost) : size_t(n), x ? size_t(n) : size_t(kGhost)};
    // Buffer columns (x) or rows (y): the first G interior ones go to the low neighbour, the
    // last G to the high one.
    const int extent = x ? g.nx : g.ny;
    const int sendAt[2] = {kGhost, extent};
    const int peer[2] = {low, high};
    cl_mem state = m_sim.current();
    for (int side = 0; side < 2; ++side) {
        if (peer[side] == MPI_PROC_NULL)
            continue;
        cl_kernel k = m_pack[a];
        setArg(k, 0, state);
        setArg(k, 1, cl_int(g.pitch()));
        setArg(k, 2, cl_int(sendAt[side]));
        setArg(k, 3, m_halo[side]);
        interop::check(
            clEnqueueNDRangeKernel(m_queue, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr),
            "clEnqueueNDRangeKernel(pack)");
    }
    Pending& p = m_pending;
    p = Pending{};
    p.axis = a;
    cl_int err;
    for (int side = 0; side < 2; ++side) {
        if (peer[side] == MPI_PROC_NULL)
            continue;
        p.mapped[2 + side] =
            clEnqueueMapBuffer(m_queue, m_halo[2 + side], CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION,
                               0, cells * sizeof(cl_float4), 0, nullptr, nullptr, &err);
        interop::check(err, "clEnqueueMapBuffer(halo receive)");
        // Tag: the direction the strip travels (0 towards low, 1 towards high), so a rank that
        // is both neighbours (two ranks, periodic) tells the strips apart.
        mpiCheck(MPI_Irecv(p.mapped[2 + side], int(cells * 4), MPI_FLOAT, peer[side], 1 - side,
                           m_cart, &p.requests[p.count++]),
                 "MPI_Irecv(halo)");
    }
    for (int side = 0; side < 2; ++side) {
        if (peer[side] == MPI_PROC_NULL)
            continue;
        p.mapped[side] = clEnqueueMapBuffer(m_queue, m_halo[side], CL_TRUE, CL_MAP_READ, 0,
                                            cells * sizeof(cl_float4), 0, nullptr, nullptr, &err);
        interop::check(err, "clEnqueueMapBuffer(halo send)");
        mpiCheck(MPI_Isend(p.mapped[side], int(cells * 4), MPI_FLOAT, peer[side], side, m_cart,
                           &p.requests[p.count++]),
                 "MPI_Isend(halo)");
    }
    p.active = true;
    m_haloSeconds += seconds(t0);
    return true;
}

void DistributedSimulator::endExchange() {
    Pending& p = m_pending;
    if (!p.active)
        return;
    auto t0 = std::chrono::steady_clock::now();
    p.active = false;
    mpiCheck(MPI_Waitall(p.count, p.requests, MPI_STATUSES_IGNORE), "MPI_Waitall(halo)");
    for (int k = 0; k < 4; ++k)
        if (p.mapped[k])
            interop::check(
                clEnqueueUnmapMemObject(m_queue, m_halo[k], p.mapped[k], 0, nullptr, nullptr),
                "clEnqueueUnmapMemObject(halo)");
    const bool x = p.axis == 0;
    const Grid& g = m_sim.grid();
    const int n = x ? g.ny : g.nx, extent = x ? g.nx : g.ny;
    const size_t global[2] = {x ? size_t(kGhost) : size_t(n), x ? size_t(n) : size_t(kGhost)};
    // The low ghosts start at buffer column / row 0, the high ones after the interior.
    const int recvAt[2] = {0, extent + kGhost};
    cl_mem state = m_sim.current();
    for (int side = 0; side < 2; ++side) {
        if (!p.mapped[2 + side])
            continue;
        cl_kernel k = m_unpack[p.axis];
        setArg(k, 0, state);
        setArg(k, 1, cl_int(g.pitch()));
        setArg(k, 2, cl_int(recvAt[side]));
        setArg(k, 3, m_halo[2 + side]);
        interop::check(
            clEnqueueNDRangeKernel(m_queue, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr),
            "clEnqueueNDRangeKernel(unpack)");
    }
    m_haloSeconds += seconds(t0);
}

void DistributedSimulator::sweep(Axis axis) {
    m_sim.fillGhosts(axis); // the domain's edges (and placeholders where the exchange writes)
    if (!beginExchange(axis)) {
        m_sim.sweep(axis);
        return;
    }
    const Grid& g = m_sim.grid();
    const size_t group = size_t(m_sim.options().rowGroup), pitch = size_t(g.pitch());
    const size_t ny = size_t(g.ny), ghost = size_t(kGhost);
    // The work-groups whose cells read no ghost cell along the axis: along x those whose columns
    // all lie in [2G, nx) (buffer columns; the interior is [G, nx + G)), along y the rows
    // [G, ny - G). The rest, before and after them, wait for the halos.
    std::array<size_t, 2> columns{0, pitch}, rows{0, ny};
    std::array<size_t, 2>& split = axis == Axis::X ? columns : rows;
    if (axis == Axis::X)
        split = {(2 * ghost + group - 1) / group * group, size_t(g.nx) / group * group};
    else
        split = {ghost, ny > ghost ? ny - ghost : 0};
    if (!m_overlap || split[0] >= split[1]) {
        endExchange();
        m_sim.sweep(axis);
        return;
    }
    cl_event interior = nullptr;
    m_sim.sweepPart(axis, columns, rows, &interior);
    // Let MPI match the strips that have arrived (a rendezvous needs the receiver's answer) while
    // the interior runs, then wait for the interior without spinning on the cores it runs on:
    // MPI_Waitall polls, and a rank's device may have a single core.
    interop::check(clFlush(m_queue), "clFlush(interior sweep)");
    int done = 0;
    mpiCheck(MPI_Testall(m_pending.count, m_pending.requests, &done, MPI_STATUSES_IGNORE),
             "MPI_Testall(halo)");
    cl_int waited = clWaitForEvents(1, &interior);
    clReleaseEvent(interior);
    interop::check(waited, "clWaitForEvents(interior sweep)");
    endExchange();
    const size_t whole = axis == Axis::X ? pitch : ny;
    const std::array<size_t, 2> low{0, split[0]}, high{split[1], whole};
    for (const auto& part : {low, high}) {
        if (part[0] >= part[1])
            continue;
        split = part;
        m_sim.sweepPart(axis, columns, rows);
    }
    m_sim.endSweep();
}

void DistributedSimulator::step(float cfl, double tEnd, bool gradient) {
    reduce(cfl, tEnd, gradient);
    Axis first = m_firstAxis;
    if (m_steps % 2)
        first = first == Axis::X ? Axis::Y : Axis::X;
    sweep(first);
    sweep(first == Axis::X ? Axis::Y : Axis::X);
    ++m_steps;
}

namespace {

// The sampled cells of part [first, first + count) of an axis: first sample index and count.
std::array<int, 2> sampledRange(int first, int count, int stride) {
    int lo = (first + stride - 1) / stride, hi = (first + count + stride - 1) / stride;
    return {lo, hi - lo};
}

} // namespace

std::vector<cl_float4> DistributedSimulator::gatherSampled(int stride, int root) {
    if (stride < 1)
        throw std::invalid_argument("duet-gasdyn: the sampling stride must be at least 1");
    const Grid& g = m_global.grid;
    std::vector<cl_float4> block = m_sim.state(), mine;
    {
        auto [si, sn] = sampledRange(m_block.i0, m_block.nx, stride);
        auto [sj, sm] = sampledRange(m_block.j0, m_block.ny, stride);
        mine.reserve(size_t(sn) * size_t(sm));
        for (int J = sj; J < sj + sm; ++J)
            for (int I = si; I < si + sn; ++I)
                mine.push_back(block[size_t(J * stride - m_block.j0) * size_t(m_block.nx) +
                                     size_t(I * stride - m_block.i0)]);
    }
    const int snx = (g.nx + stride - 1) / stride, sny = (g.ny + stride - 1) / stride;
    std::vector<int> counts, displs;
    std::vector<cl_float4> all;
    auto blockOf = [&](int r) {
        int coords[2];
        MPI_Cart_coords(m_cart, r, 2, coords);
        auto [i0, nx] = splitCells(g.nx, m_dims[0], coords[1]);
        auto [j0, ny] = splitCells(g.ny, m_dims[1], coords[0]);
        auto [si, sn] = sampledRange(i0, nx, stride);
        auto [sj, sm] = sampledRange(j0, ny, stride);
        return std::array<int, 4>{si, sn, sj, sm};
    };
    if (m_rank == root) {
        counts.resize(size_t(m_size));
        displs.resize(size_t(m_size));
        int offset = 0;
        for (int r = 0; r < m_size; ++r) {
            auto b = blockOf(r);
            counts[size_t(r)] = b[1] * b[3] * 4;
            displs[size_t(r)] = offset;
            offset += counts[size_t(r)];
        }
        all.resize(size_t(offset / 4));
    }
    mpiCheck(MPI_Gatherv(mine.data(), int(mine.size() * 4), MPI_FLOAT, all.data(), counts.data(),
                         displs.data(), MPI_FLOAT, root, m_cart),
             "MPI_Gatherv(state)");
    if (m_rank != root)
        return {};
    std::vector<cl_float4> field(size_t(snx) * size_t(sny));
    for (int r = 0; r < m_size; ++r) {
        auto [si, sn, sj, sm] = blockOf(r);
        const cl_float4* part = all.data() + displs[size_t(r)] / 4;
        for (int J = 0; J < sm; ++J)
            std::copy_n(part + size_t(J) * size_t(sn), sn,
                        &field[size_t(sj + J) * size_t(snx) + size_t(si)]);
    }
    return field;
}

} // namespace duet::gasdyn::mpi
