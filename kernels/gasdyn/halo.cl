// Halo exchange of duet-gasdyn over MPI (samples/gasdyn/gasdyn_mpi.cpp): every strip and corner
// of a rank's block that its eight neighbours need packed by one launch into one contiguous
// buffer (which the host reads in one transfer and hands to MPI), and everything received
// unpacked into the ghost cells by one launch.
//
// Both kernels walk a table of regions (int8 each): s0 the buffer index of the region's first
// state cell (the host's Grid::index, spare cells included), s1 its width in cells, s2 the index
// of its first cell in the halo buffer, s3 the halo buffer's row pitch for it, s4 the first
// work-item of the region (regions in order, s4 rising), s5 its cell count (a multiple of s1).
// Rows of the state are `pitch` cells apart. The global size is the regions' cell total: each
// work-item moves one float4, and no two regions of a table share a state cell.

static inline int8 regionOf(__global const int8 *regions, int count, int id) {
    int r = 0;
    for (int k = 1; k < count; ++k)
        r = id >= regions[k].s4 ? k : r;
    return regions[r];
}

__kernel void pack(__global const float4 *state, int pitch, __global const int8 *regions,
                   int count, __global float4 *buf) {
    const int id = get_global_id(0);
    const int8 r = regionOf(regions, count, id);
    const int k = id - r.s4, row = k / r.s1, col = k - row * r.s1;
    buf[r.s2 + row * r.s3 + col] = state[(size_t)r.s0 + (size_t)row * pitch + col];
}

__kernel void unpack(__global float4 *state, int pitch, __global const int8 *regions, int count,
                     __global const float4 *buf) {
    const int id = get_global_id(0);
    const int8 r = regionOf(regions, count, id);
    const int k = id - r.s4, row = k / r.s1, col = k - row * r.s1;
    state[(size_t)r.s0 + (size_t)row * pitch + col] = buf[r.s2 + row * r.s3 + col];
}
