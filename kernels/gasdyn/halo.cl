// Halo exchange of duet-gasdyn over MPI (samples/gasdyn/gasdyn_mpi.cpp): the G-cell-wide strips
// of a rank's block that its neighbours need, packed into a small contiguous buffer (which the
// host maps and hands to MPI), and the strips received from them unpacked into the ghost cells.
// State layout as kernels/gasdyn/gasdyn.cl: rows of `pitch` float4, G ghost cells on each side,
// buffer column c / row r counted from the buffer's first (ghost) column / row.

#define G 2

// Columns col .. col + G - 1 of the interior rows: global size (G, ny); buf[j * G + k].
__kernel void pack_x(__global const float4 *state, int pitch, int col, __global float4 *buf) {
    const int k = get_global_id(0), j = get_global_id(1);
    buf[j * G + k] = state[(size_t)(j + G) * pitch + col + k];
}

__kernel void unpack_x(__global float4 *state, int pitch, int col, __global const float4 *buf) {
    const int k = get_global_id(0), j = get_global_id(1);
    state[(size_t)(j + G) * pitch + col + k] = buf[j * G + k];
}

// Rows row .. row + G - 1 of the interior columns: global size (nx, G); buf[k * nx + i].
__kernel void pack_y(__global const float4 *state, int pitch, int row, __global float4 *buf) {
    const int i = get_global_id(0), k = get_global_id(1), nx = get_global_size(0);
    buf[k * nx + i] = state[(size_t)(row + k) * pitch + G + i];
}

__kernel void unpack_y(__global float4 *state, int pitch, int row, __global const float4 *buf) {
    const int i = get_global_id(0), k = get_global_id(1), nx = get_global_size(0);
    state[(size_t)(row + k) * pitch + G + i] = buf[k * nx + i];
}
