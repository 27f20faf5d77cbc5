// Checkpoints of duet-gasdyn's distributed solver: one HDF5 file written collectively by every
// rank with parallel HDF5 (MPI-IO), an XDMF description beside it for ParaView and VisIt, and the
// restart from it on any number of ranks. Built when CMake finds parallel HDF5.
#pragma once

#include "gasdyn_mpi.hpp"

#include <string>

namespace duet::gasdyn::mpi {

/// What a checkpoint says about its run besides the cells.
struct CheckpointInfo {
    int problem = 0;    ///< Problem
    int resolution = 0; ///< makeSampleProblem's resolution that gave the grid
    float gamma = 1.4f;
    int nx = 0, ny = 0;
    float time = 0; ///< the device clock's t, bit for bit
    long steps = 0; ///< steps taken (Strang's alternation continues from its parity)
    int limiter = 0, riemann = 0;
};

/// Writes the state of every rank's block into `path` (datasets density, momentum_x,
/// momentum_y, energy: ny x nx floats, conserved variables; attributes as CheckpointInfo) and
/// `path`.xmf. Collective. The file is written as `path`.part and renamed when complete, so a
/// run killed while writing leaves the previous checkpoint. Throws std::runtime_error with
/// the reason on failure.
void writeCheckpoint(DistributedSimulator& sim, const std::string& path, CheckpointInfo info);

/// Reads the attributes of a checkpoint (collective over `comm`). Throws std::runtime_error
/// when the file cannot be read or is not a duet-gasdyn checkpoint.
CheckpointInfo readCheckpointInfo(MPI_Comm comm, const std::string& path);

/// Loads this rank's block of the checkpoint into `sim` (collective): the problem's setup from
/// its problem, resolution and gamma, the cells, the clock and the step count. Returns what the
/// file says. Throws std::runtime_error when the grid in the file is not that problem's.
CheckpointInfo restartFromCheckpoint(DistributedSimulator& sim, const std::string& path);

/// The XDMF text describing a checkpoint (h5 file name relative to the .xmf's folder).
std::string xdmfDescription(const std::string& h5Name, const CheckpointInfo& info,
                            const Grid& grid);

} // namespace duet::gasdyn::mpi
