// Checkpoints of duet-gasdyn's distributed solver in parallel HDF5 (see gasdyn_checkpoint.hpp).
#include "gasdyn_checkpoint.hpp"

#include <hdf5.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace duet::gasdyn::mpi {

namespace {

const char* const kComponents[4] = {"density", "momentum_x", "momentum_y", "energy"};
const char* const kFormat = "duet-gasdyn checkpoint 1";

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error("duet-gasdyn: checkpoint " + path + ": " + what);
}

// HDF5 handles closed at scope exit.
class Handle {
public:
    Handle(hid_t id, herr_t (*close)(hid_t)) : m_id(id), m_close(close) {}
    ~Handle() {
        if (m_id >= 0)
            m_close(m_id);
    }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    hid_t get() const { return m_id; }
    bool ok() const { return m_id >= 0; }

private:
    hid_t m_id;
    herr_t (*m_close)(hid_t);
};

// HDF5's own error stack printing off while in scope (the exceptions say what failed).
class QuietErrors {
public:
    QuietErrors() {
        H5Eget_auto2(H5E_DEFAULT, &m_func, &m_data);
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    }
    ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, m_func, m_data); }

private:
    H5E_auto2_t m_func = nullptr;
    void* m_data = nullptr;
};

template <typename T> void writeAttribute(hid_t file, const char* name, hid_t type, T value) {
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle attr(H5Acreate2(file, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!attr.ok() || H5Awrite(attr.get(), type, &value) < 0)
        throw std::runtime_error(std::string("H5Awrite(") + name + ") failed");
}

template <typename T>
T readAttribute(hid_t file, const char* name, hid_t type, const std::string& path) {
    Handle attr(H5Aopen(file, name, H5P_DEFAULT), H5Aclose);
    T value{};
    if (!attr.ok() || H5Aread(attr.get(), type, &value) < 0)
        fail(path, std::string("no attribute '") + name + "' (not a duet-gasdyn checkpoint?)");
    return value;
}

std::string baseName(const std::string& path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

std::string xdmfDescription(const std::string& h5Name, const CheckpointInfo& info, const Grid& g) {
    std::ostringstream x;
    x.precision(17);
    x << "<?xml version=\"1.0\" ?>\n"
      << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
      << "<Xdmf Version=\"3.0\">\n"
      << "  <Domain>\n"
      << "    <Grid Name=\"" << problemNames()[size_t(info.problem)] << "\" GridType=\"Uniform\">\n"
      << "      <Time Value=\"" << info.time << "\"/>\n"
      << "      <Topology TopologyType=\"2DCoRectMesh\" Dimensions=\"" << g.ny + 1 << " "
      << g.nx + 1 << "\"/>\n"
      << "      <Geometry GeometryType=\"ORIGIN_DXDY\">\n"
      << "        <DataItem Format=\"XML\" Dimensions=\"2\">" << g.y0 << " " << g.x0
      << "</DataItem>\n"
      << "        <DataItem Format=\"XML\" Dimensions=\"2\">" << g.dy << " " << g.dx
      << "</DataItem>\n"
      << "      </Geometry>\n";
    for (const char* name : kComponents)
        x << "      <Attribute Name=\"" << name << "\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
          << "        <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"4\" Dimensions=\""
          << g.ny << " " << g.nx << "\">" << h5Name << ":/" << name << "</DataItem>\n"
          << "      </Attribute>\n";
    x << "    </Grid>\n"
      << "  </Domain>\n"
      << "</Xdmf>\n";
    return x.str();
}

void writeCheckpoint(DistributedSimulator& sim, const std::string& path, CheckpointInfo info) {
    const Grid& g = sim.grid();
    const Block& b = sim.block();
    info.nx = g.nx;
    info.ny = g.ny;
    info.time = float(sim.time());
    info.steps = sim.steps();
    std::vector<cl_float4> cells = sim.blockState();
    const std::string part = path + ".part";
    int failed = 0;
    std::string why;
    try {
        Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
        H5Pset_fapl_mpio(fapl.get(), sim.comm(), MPI_INFO_NULL);
        Handle file(H5Fcreate(part.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
        if (!file.ok())
            throw std::runtime_error("cannot create " + part);
        Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
        H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE);
        const hsize_t dims[2] = {hsize_t(g.ny), hsize_t(g.nx)};
        const hsize_t start[2] = {hsize_t(b.j0), hsize_t(b.i0)};
        const hsize_t count[2] = {hsize_t(b.ny), hsize_t(b.nx)};
        std::vector<float> component(cells.size());
        for (int c = 0; c < 4; ++c) {
            for (size_t k = 0; k < cells.size(); ++k)
                component[k] = cells[k].s[c];
            Handle fileSpace(H5Screate_simple(2, dims, nullptr), H5Sclose);
            Handle set(H5Dcreate2(file.get(), kComponents[c], H5T_NATIVE_FLOAT, fileSpace.get(),
                                  H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                       H5Dclose);
            Handle memSpace(H5Screate_simple(2, count, nullptr), H5Sclose);
            if (!set.ok() ||
                H5Sselect_hyperslab(fileSpace.get(), H5S_SELECT_SET, start, nullptr, count,
                                    nullptr) < 0 ||
                H5Dwrite(set.get(), H5T_NATIVE_FLOAT, memSpace.get(), fileSpace.get(), dxpl.get(),
                         component.data()) < 0)
                throw std::runtime_error(std::string("writing ") + kComponents[c] + " failed");
        }
        {
            Handle strType(H5Tcopy(H5T_C_S1), H5Tclose);
            H5Tset_size(strType.get(), std::string(kFormat).size() + 1);
            Handle space(H5Screate(H5S_SCALAR), H5Sclose);
            Handle attr(H5Acreate2(file.get(), "format", strType.get(), space.get(), H5P_DEFAULT,
                                   H5P_DEFAULT),
                        H5Aclose);
            if (!attr.ok() || H5Awrite(attr.get(), strType.get(), kFormat) < 0)
                throw std::runtime_error("H5Awrite(format) failed");
        }
        writeAttribute(file.get(), "problem", H5T_NATIVE_INT, info.problem);
        writeAttribute(file.get(), "resolution", H5T_NATIVE_INT, info.resolution);
        writeAttribute(file.get(), "gamma", H5T_NATIVE_FLOAT, info.gamma);
        writeAttribute(file.get(), "nx", H5T_NATIVE_INT, info.nx);
        writeAttribute(file.get(), "ny", H5T_NATIVE_INT, info.ny);
        writeAttribute(file.get(), "time", H5T_NATIVE_FLOAT, info.time);
        writeAttribute(file.get(), "steps", H5T_NATIVE_LONG, info.steps);
        writeAttribute(file.get(), "limiter", H5T_NATIVE_INT, info.limiter);
        writeAttribute(file.get(), "riemann", H5T_NATIVE_INT, info.riemann);
    } catch (const std::exception& e) {
        failed = 1;
        why = e.what();
    }
    int anyFailed = 0;
    MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, sim.comm());
    if (anyFailed)
        fail(path, why.empty() ? "another rank failed to write its block" : why);
    if (sim.rank() == 0) {
        if (std::rename(part.c_str(), path.c_str()) != 0)
            failed = 1;
        std::ofstream xmf(path + ".xmf");
        xmf << xdmfDescription(baseName(path), info, g);
        failed |= !xmf;
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, sim.comm());
    if (failed)
        fail(path, "cannot rename " + part + " or write " + path + ".xmf");
}

CheckpointInfo readCheckpointInfo(MPI_Comm comm, const std::string& path) {
    QuietErrors quiet;
    Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL);
    Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
    if (!file.ok())
        fail(path, "cannot open it as an HDF5 file");
    CheckpointInfo info;
    info.problem = readAttribute<int>(file.get(), "problem", H5T_NATIVE_INT, path);
    info.resolution = readAttribute<int>(file.get(), "resolution", H5T_NATIVE_INT, path);
    info.gamma = readAttribute<float>(file.get(), "gamma", H5T_NATIVE_FLOAT, path);
    info.nx = readAttribute<int>(file.get(), "nx", H5T_NATIVE_INT, path);
    info.ny = readAttribute<int>(file.get(), "ny", H5T_NATIVE_INT, path);
    info.time = readAttribute<float>(file.get(), "time", H5T_NATIVE_FLOAT, path);
    info.steps = readAttribute<long>(file.get(), "steps", H5T_NATIVE_LONG, path);
    info.limiter = readAttribute<int>(file.get(), "limiter", H5T_NATIVE_INT, path);
    info.riemann = readAttribute<int>(file.get(), "riemann", H5T_NATIVE_INT, path);
    if (info.problem < 0 || size_t(info.problem) >= problemNames().size())
        fail(path, "unknown problem " + std::to_string(info.problem));
    return info;
}

CheckpointInfo restartFromCheckpoint(DistributedSimulator& sim, const std::string& path) {
    CheckpointInfo info = readCheckpointInfo(sim.comm(), path);
    Setup setup;
    try {
        setup = makeSampleProblem(Problem(info.problem), info.resolution, info.gamma);
    } catch (const std::invalid_argument& e) {
        fail(path, e.what());
    }
    if (setup.grid.nx != info.nx || setup.grid.ny != info.ny)
        fail(path, "its " + std::to_string(info.nx) + " x " + std::to_string(info.ny) +
                       " cells are not the grid of " + problemNames()[size_t(info.problem)] +
                       " at resolution " + std::to_string(info.resolution));
    // The block this rank gets on this communicator.
    const Grid& g = setup.grid;
    const Block& b0 = sim.block();
    auto [i0, nx] = splitCells(g.nx, b0.px, b0.cx);
    auto [j0, ny] = splitCells(g.ny, b0.py, b0.cy);
    std::vector<cl_float4> cells(size_t(nx) * size_t(ny));
    int failed = 0;
    std::string why;
    {
        QuietErrors quiet;
        Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
        H5Pset_fapl_mpio(fapl.get(), sim.comm(), MPI_INFO_NULL);
        Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
        Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
        H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE);
        const hsize_t start[2] = {hsize_t(j0), hsize_t(i0)};
        const hsize_t count[2] = {hsize_t(ny), hsize_t(nx)};
        std::vector<float> component(cells.size());
        for (int c = 0; c < 4 && !failed; ++c) {
            Handle set(H5Dopen2(file.get(), kComponents[c], H5P_DEFAULT), H5Dclose);
            Handle fileSpace(set.ok() ? H5Dget_space(set.get()) : -1, H5Sclose);
            Handle memSpace(H5Screate_simple(2, count, nullptr), H5Sclose);
            hsize_t dims[2] = {0, 0};
            if (!set.ok() || !fileSpace.ok() ||
                H5Sget_simple_extent_dims(fileSpace.get(), dims, nullptr) != 2 ||
                dims[0] != hsize_t(g.ny) || dims[1] != hsize_t(g.nx)) {
                failed = 1;
                why = std::string("no ") + std::to_string(g.ny) + " x " + std::to_string(g.nx) +
                      " dataset '" + kComponents[c] + "'";
                break;
            }
            if (H5Sselect_hyperslab(fileSpace.get(), H5S_SELECT_SET, start, nullptr, count,
                                    nullptr) < 0 ||
                H5Dread(set.get(), H5T_NATIVE_FLOAT, memSpace.get(), fileSpace.get(), dxpl.get(),
                        component.data()) < 0) {
                failed = 1;
                why = std::string("reading ") + kComponents[c] + " failed";
                break;
            }
            for (size_t k = 0; k < cells.size(); ++k)
                cells[k].s[c] = component[k];
        }
    }
    int anyFailed = 0;
    MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, sim.comm());
    if (anyFailed)
        fail(path, why.empty() ? "another rank could not read its block" : why);
    sim.loadBlock(setup, cells, info.time, info.steps);
    return info;
}

} // namespace duet::gasdyn::mpi
