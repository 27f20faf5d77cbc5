// duet-gasdyn's solver over MPI ranks (see gasdyn_mpi.hpp).
#include "gasdyn_mpi.hpp"

#include "duet/interop/interop.hpp"
#include "duet/interop/program.hpp"

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

cl_device_id pickRankDevice(const std::string& platform, const std::string& device, int hostIndex) {
    auto nameOf = [](auto query, auto object, cl_uint what) {
        size_t size = 0;
        query(object, what, 0, nullptr, &size);
        std::string name(size, '\0');
        query(object, what, size, name.data(), nullptr);
        return name;
    };
    cl_uint count = 0;
    clGetPlatformIDs(0, nullptr, &count);
    std::vector<cl_platform_id> platforms(count);
    if (count)
        clGetPlatformIDs(count, platforms.data(), nullptr);
    const std::string wanted = platform.empty() ? "Duet" : platform;
    auto duetFirst = std::stable_partition(platforms.begin(), platforms.end(), [&](auto p) {
        return nameOf(clGetPlatformInfo, p, CL_PLATFORM_NAME).find(wanted) != std::string::npos;
    });
    if (!platform.empty()) // named: only those platforms
        platforms.erase(duetFirst, platforms.end());
    for (cl_platform_id p : platforms) {
        cl_uint n = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0)
            continue;
        std::vector<cl_device_id> devices(n);
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr);
        if (device.empty()) {
            // Round-robin over the devices of the platform's default device's type (Duet: the
            // CPU device when listed), so that no rank lands on a slower kind of device, e.g.
            // the software GCN model listed beside the CPU device, or the CPU beside GPUs.
            cl_device_id first = nullptr;
            cl_device_type kind = 0;
            if (clGetDeviceIDs(p, CL_DEVICE_TYPE_DEFAULT, 1, &first, nullptr) == CL_SUCCESS &&
                clGetDeviceInfo(first, CL_DEVICE_TYPE, sizeof kind, &kind, nullptr) == CL_SUCCESS) {
                kind &= ~cl_device_type(CL_DEVICE_TYPE_DEFAULT);
                std::erase_if(devices, [&](cl_device_id d) {
                    cl_device_type t = 0;
                    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, nullptr);
                    return (t & kind) == 0;
                });
            }
            if (devices.empty())
                devices.push_back(first);
            return devices[size_t(hostIndex) % devices.size()];
        }
        for (cl_device_id d : devices)
            if (nameOf(clGetDeviceInfo, d, CL_DEVICE_NAME).find(device) != std::string::npos)
                return d;
    }
    return nullptr;
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

    m_haloProgram =
        interop::buildProgram(context, {device}, kernelSource("halo.cl"), "", "halo.cl");
    cl_int err;
    m_pack = clCreateKernel(m_haloProgram, "pack", &err);
    interop::check(err, "clCreateKernel(pack)");
    m_unpack = clCreateKernel(m_haloProgram, "unpack", &err);
    interop::check(err, "clCreateKernel(unpack)");
    m_peer.fill(MPI_PROC_NULL);
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
    releaseHalo();
    for (cl_mem m : {m_packTable, m_unpackTable})
        if (m)
            clReleaseMemObject(m);
    for (cl_kernel k : {m_pack, m_unpack})
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
    planHalo();
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

namespace {

// Direction offsets along x and y in Direction order, and the direction facing each one.
constexpr int kStepX[8] = {-1, 1, 0, 0, -1, 1, -1, 1};
constexpr int kStepY[8] = {0, 0, -1, 1, -1, -1, 1, 1};
constexpr int kOpposite[8] = {1, 0, 3, 2, 7, 6, 5, 4};

// A region of halo.cl's tables: state index, width, halo buffer index and row pitch, then the
// first work-item (numbered later) and the cell count.
using Region = std::array<cl_int, 8>;

Region region(size_t state, int width, int rows, size_t buf, int bufPitch) {
    return {cl_int(state), width, cl_int(buf), bufPitch, 0, width * rows, 0, 0};
}

// Numbers the regions' work-items one after the other; returns the cells of all.
size_t numberRegions(std::vector<Region>& table) {
    size_t first = 0;
    for (Region& r : table) {
        r[4] = cl_int(first);
        first += size_t(r[5]);
    }
    return first;
}

} // namespace

void DistributedSimulator::planHalo() {
    const Block& b = m_block;
    const Grid& g = m_sim.grid();
    const int G = kGhost, nx = g.nx, ny = g.ny;
    // Across a corner only where both neighbours on that side exist (the Cartesian
    // communicator wraps the coordinates where the problem does).
    m_peer = {b.west,        b.east,        b.south,       b.north,
              MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL};
    for (int d = SouthWest; d <= NorthEast; ++d) {
        const int xSide = kStepX[d] < 0 ? West : East, ySide = kStepY[d] < 0 ? South : North;
        if (m_peer[size_t(xSide)] == MPI_PROC_NULL || m_peer[size_t(ySide)] == MPI_PROC_NULL)
            continue;
        int coords[2] = {b.cy + kStepY[d], b.cx + kStepX[d]};
        mpiCheck(MPI_Cart_rank(m_cart, coords, &m_peer[size_t(d)]), "MPI_Cart_rank(corner)");
    }
    // What goes to each neighbour: the G interior columns or rows beside it, the strips with
    // the ghost cells at their ends (the domain's boundary there, which the receiver's corner
    // needs when no rank lies across it), and the G x G interior corners.
    const int width[8] = {G, G, nx + 2 * G, nx + 2 * G, G, G, G, G};
    const int rows[8] = {ny + 2 * G, ny + 2 * G, G, G, G, G, G, G};
    const int fromI[8] = {0, nx - G, -G, -G, 0, nx - G, 0, nx - G};
    const int fromJ[8] = {-G, -G, 0, ny - G, 0, 0, ny - G, ny - G};
    std::vector<Region> pack, unpack;
    size_t at = 0;
    for (size_t d = 0; d < kDirections; ++d) {
        m_at[d] = at;
        m_cells[d] = 0;
        if (m_peer[d] == MPI_PROC_NULL)
            continue;
        m_cells[d] = size_t(width[d]) * size_t(rows[d]);
        pack.push_back(region(g.index(fromI[d], fromJ[d]), width[d], rows[d], at, width[d]));
        at += m_cells[d];
    }
    m_haloCells = numberRegions(pack);
    m_packRegions = cl_int(pack.size());
    if (!m_haloCells)
        return;

    // What arrives lands in the ghost cells, each written once: the strips' middles beside the
    // block, and each corner from the rank across it, else from the strip of the one neighbour
    // on that side (its ghost cells there: the domain's boundary, filled as ours would be),
    // else nowhere (a corner of the domain, which no update reads).
    auto has = [&](int d) { return m_peer[size_t(d)] != MPI_PROC_NULL; };
    auto add = [&](int i, int j, int w, int h, size_t buf, int pitch) {
        unpack.push_back(region(g.index(i, j), w, h, buf, pitch));
    };
    const int sp = nx + 2 * G;             // row pitch of a strip from the south or the north
    const size_t top = size_t(ny + G) * G; // the upper corner of a strip from the west or east
    if (has(West))
        add(-G, 0, G, ny, m_at[West] + G * G, G);
    if (has(East))
        add(nx, 0, G, ny, m_at[East] + G * G, G);
    if (has(South))
        add(0, -G, nx, G, m_at[South] + G, sp);
    if (has(North))
        add(0, ny, nx, G, m_at[North] + G, sp);
    struct Corner {
        int across, side, other, i, j;
        size_t inSide, inOther;
    };
    const Corner corners[4] = {{SouthWest, West, South, -G, -G, 0, 0},
                               {SouthEast, East, South, nx, -G, 0, size_t(nx + G)},
                               {NorthWest, West, North, -G, ny, top, 0},
                               {NorthEast, East, North, nx, ny, top, size_t(nx + G)}};
    for (const Corner& c : corners) {
        if (has(c.across))
            add(c.i, c.j, G, G, m_at[size_t(c.across)], G);
        else if (has(c.side))
            add(c.i, c.j, G, G, m_at[size_t(c.side)] + c.inSide, G);
        else if (has(c.other))
            add(c.i, c.j, G, G, m_at[size_t(c.other)] + c.inOther, sp);
    }
    m_unpackCells = numberRegions(unpack);
    m_unpackRegions = cl_int(unpack.size());

    cl_int err;
    for (cl_mem* table : {&m_packTable, &m_unpackTable}) {
        if (*table)
            continue;
        *table = clCreateBuffer(m_context, CL_MEM_READ_ONLY, kDirections * sizeof(Region), nullptr,
                                &err);
        interop::check(err, "clCreateBuffer(halo table)");
    }
    interop::check(clEnqueueWriteBuffer(m_queue, m_packTable, CL_TRUE, 0,
                                        pack.size() * sizeof(Region), pack.data(), 0, nullptr,
                                        nullptr),
                   "clEnqueueWriteBuffer(pack table)");
    interop::check(clEnqueueWriteBuffer(m_queue, m_unpackTable, CL_TRUE, 0,
                                        unpack.size() * sizeof(Region), unpack.data(), 0, nullptr,
                                        nullptr),
                   "clEnqueueWriteBuffer(unpack table)");
    if (m_haloCells > m_haloCapacity || m_staging != m_stagingInUse)
        allocateHalo(m_haloCells);
}

void DistributedSimulator::allocateHalo(size_t cells) {
    releaseHalo();
    const size_t bytes = cells * sizeof(cl_float4);
    cl_int err;
    for (cl_mem* m : {&m_send, &m_recv}) {
        *m = clCreateBuffer(m_context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
        interop::check(err, "clCreateBuffer(halo)");
    }
    m_stagingInUse = m_staging;
    if (m_staging == Staging::Mapped) {
        for (int k = 0; k < 2; ++k) {
            m_stageMem[k] = clCreateBuffer(m_context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                           bytes, nullptr, &err);
            interop::check(err, "clCreateBuffer(halo staging)");
            m_stage[k] = static_cast<cl_float4*>(
                clEnqueueMapBuffer(m_queue, m_stageMem[k], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                   bytes, 0, nullptr, nullptr, &err));
            interop::check(err, "clEnqueueMapBuffer(halo staging)");
        }
    } else {
        m_hostSend.assign(cells, cl_float4{});
        m_hostRecv.assign(cells, cl_float4{});
        m_stage[0] = m_hostSend.data();
        m_stage[1] = m_hostRecv.data();
    }
    m_haloCapacity = cells;
}

void DistributedSimulator::releaseHalo() {
    if (m_send || m_stageMem[0])
        clFinish(m_queue); // no transfer still reads or writes the staging
    for (int k = 0; k < 2; ++k)
        if (m_stageMem[k]) {
            clEnqueueUnmapMemObject(m_queue, m_stageMem[k], m_stage[k], 0, nullptr, nullptr);
            clFinish(m_queue);
            clReleaseMemObject(m_stageMem[k]);
            m_stageMem[k] = nullptr;
        }
    m_stage[0] = m_stage[1] = nullptr;
    for (cl_mem* m : {&m_send, &m_recv})
        if (*m) {
            clReleaseMemObject(*m);
            *m = nullptr;
        }
    m_haloCapacity = 0;
}

void DistributedSimulator::packHalo() {
    const Grid& g = m_sim.grid();
    setArg(m_pack, 0, m_sim.current());
    setArg(m_pack, 1, cl_int(g.pitch()));
    setArg(m_pack, 2, m_packTable);
    setArg(m_pack, 3, m_packRegions);
    setArg(m_pack, 4, m_send);
    interop::check(clEnqueueNDRangeKernel(m_queue, m_pack, 1, nullptr, &m_haloCells, nullptr, 0,
                                          nullptr, nullptr),
                   "clEnqueueNDRangeKernel(pack)");
    interop::check(clEnqueueReadBuffer(m_queue, m_send, CL_FALSE, 0,
                                       m_haloCells * sizeof(cl_float4), m_stage[0], 0, nullptr,
                                       nullptr),
                   "clEnqueueReadBuffer(halo)");
}

void DistributedSimulator::postHalo() {
    m_requestCount = 0;
    for (size_t d = 0; d < kDirections; ++d)
        if (m_cells[d])
            mpiCheck(MPI_Irecv(m_stage[1] + m_at[d], int(m_cells[d] * 4), MPI_FLOAT, m_peer[d],
                               kOpposite[d], m_cart, &m_requests[size_t(m_requestCount++)]),
                     "MPI_Irecv(halo)");
    // Tag: the direction the strip travels, so that a rank that is several neighbours (two or
    // four ranks, periodic) tells the strips apart.
    for (size_t d = 0; d < kDirections; ++d)
        if (m_cells[d])
            mpiCheck(MPI_Isend(m_stage[0] + m_at[d], int(m_cells[d] * 4), MPI_FLOAT, m_peer[d],
                               int(d), m_cart, &m_requests[size_t(m_requestCount++)]),
                     "MPI_Isend(halo)");
}

void DistributedSimulator::finishHalo() {
    auto t0 = std::chrono::steady_clock::now();
    mpiCheck(MPI_Waitall(m_requestCount, m_requests.data(), MPI_STATUSES_IGNORE),
             "MPI_Waitall(halo)");
    m_requestCount = 0;
    // Not waited for: the next step's read, later on the queue, is (and only then does MPI
    // write the staging again).
    interop::check(clEnqueueWriteBuffer(m_queue, m_recv, CL_FALSE, 0,
                                        m_haloCells * sizeof(cl_float4), m_stage[1], 0, nullptr,
                                        nullptr),
                   "clEnqueueWriteBuffer(halo)");
    const Grid& g = m_sim.grid();
    setArg(m_unpack, 0, m_sim.current());
    setArg(m_unpack, 1, cl_int(g.pitch()));
    setArg(m_unpack, 2, m_unpackTable);
    setArg(m_unpack, 3, m_unpackRegions);
    setArg(m_unpack, 4, m_recv);
    interop::check(clEnqueueNDRangeKernel(m_queue, m_unpack, 1, nullptr, &m_unpackCells, nullptr, 0,
                                          nullptr, nullptr),
                   "clEnqueueNDRangeKernel(unpack)");
    m_haloSeconds += seconds(t0);
}

void DistributedSimulator::firstSweep(Axis axis, bool pending) {
    const Grid& g = m_sim.grid();
    const bool x = axis == Axis::X;
    const size_t pitch = size_t(g.pitch()), group = size_t(m_sim.options().rowGroup);
    // An X sweep also updates the ghost rows that a neighbour below or above supplies: the Y
    // sweep after it reads them (a Y sweep covers every column, the ghost ones too).
    std::array<int, 2> rows{0, g.ny};
    if (x && m_peer[South] != MPI_PROC_NULL)
        rows[0] = -kGhost;
    if (x && m_peer[North] != MPI_PROC_NULL)
        rows[1] = g.ny + kGhost;
    // The work-groups whose cells read no ghost cell that the exchange brings: along x those
    // whose columns all lie in [2G, nx) (buffer columns; the interior is [G, nx + G)) of the
    // interior rows, along y the rows [G, ny - G), and where neighbours along x supply the ghost
    // columns (which the Y sweep updates too), only the interior columns.
    const size_t G = size_t(kGhost), nx = size_t(g.nx);
    std::array<size_t, 2> columns{0, pitch};
    std::array<int, 2> inner{0, g.ny};
    if (x) {
        columns = {(2 * G + group - 1) / group * group, nx / group * group};
    } else {
        inner = {kGhost, g.ny - kGhost};
        if (m_peer[West] != MPI_PROC_NULL)
            columns[0] = (G + group - 1) / group * group;
        if (m_peer[East] != MPI_PROC_NULL)
            columns[1] = (nx + G) / group * group;
    }
    if (!pending || !m_overlap || columns[0] >= columns[1] || inner[0] >= inner[1]) {
        if (pending)
            finishHalo();
        m_sim.sweepPart(axis, {0, pitch}, rows);
        m_sim.endSweep();
        return;
    }
    cl_event interior = nullptr;
    m_sim.sweepPart(axis, columns, inner, &interior);
    // Let MPI match the strips that have arrived while the interior runs, then wait for the
    // interior without spinning on the cores it runs on: MPI_Waitall polls, and a rank's device
    // may have a single core.
    interop::check(clFlush(m_queue), "clFlush(interior sweep)");
    int done = 0;
    mpiCheck(MPI_Testall(m_requestCount, m_requests.data(), &done, MPI_STATUSES_IGNORE),
             "MPI_Testall(halo)");
    cl_int waited = clWaitForEvents(1, &interior);
    clReleaseEvent(interior);
    interop::check(waited, "clWaitForEvents(interior sweep)");
    ++m_lastStepWaits;
    finishHalo();
    // The rest: the rows below and above the interior part, then its columns either side.
    if (rows[0] < inner[0])
        m_sim.sweepPart(axis, {0, pitch}, {rows[0], inner[0]});
    if (inner[1] < rows[1])
        m_sim.sweepPart(axis, {0, pitch}, {inner[1], rows[1]});
    if (columns[0] > 0)
        m_sim.sweepPart(axis, {0, columns[0]}, inner);
    if (columns[1] < pitch)
        m_sim.sweepPart(axis, {columns[1], pitch}, inner);
    m_sim.endSweep();
}

void DistributedSimulator::step(float cfl, double tEnd, bool gradient) {
    Axis first = m_firstAxis;
    if (m_steps % 2)
        first = first == Axis::X ? Axis::Y : Axis::X;
    const Axis second = first == Axis::X ? Axis::Y : Axis::X;
    const bool exchange = m_haloCells > 0;
    m_lastStepWaits = 0;
    // One wait for the device per step: the halos packed and read (after the domain's edges
    // are filled along both axes: the strips carry them to the corners) and the reduction's
    // first stage read. clFinish rather than clWaitForEvents on the two reads' events (the
    // same commands: they are the last ones queued): on Duet's CPU device with one core per
    // rank the event wait made steps 2-3x slower (bench/gasdyn_mpi/README.md).
    if (exchange) {
        m_sim.fillGhosts(Axis::X);
        m_sim.fillGhosts(Axis::Y);
        packHalo();
    }
    m_sim.enqueueLocalMaxima(gradient);
    interop::check(clFinish(m_queue), "clFinish(halo and maxima read)");
    ++m_lastStepWaits;
    if (exchange) {
        auto t0 = std::chrono::steady_clock::now();
        postHalo();
        m_haloSeconds += seconds(t0);
    }
    // The strips travel while the ranks agree on dt.
    Maxima mine = m_sim.foldLocalMaxima(), all;
    auto t1 = std::chrono::steady_clock::now();
    mpiCheck(MPI_Allreduce(mine.data(), all.data(), int(all.size()), MPI_FLOAT, MPI_MAX, m_cart),
             "MPI_Allreduce(maxima)");
    m_reduceSeconds += seconds(t1);
    m_sim.reduceFrom(all, cfl, tEnd);
    if (!exchange)
        m_sim.fillGhosts(first);
    firstSweep(first, exchange);
    // The second sweep's ghost cells: where a neighbour is, the first sweep computed them;
    // on the domain's edges the boundary kernel fills them.
    const bool x = second == Axis::X;
    m_sim.fillGhosts(second, m_peer[x ? West : South] == MPI_PROC_NULL,
                     m_peer[x ? East : North] == MPI_PROC_NULL);
    m_sim.sweep(second);
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
