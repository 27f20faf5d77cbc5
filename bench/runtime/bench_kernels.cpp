// Kernel sources of duet-bench: the measured kernels plus compile-only ones for build timing.
#include "bench_kernels.hpp"

#include "parallel_min.hpp"

namespace duet::bench {

namespace {

const char* const kMeasuredKernels = R"CLC(
// All-pairs gravity, one body per work-item. Bodies are visited one work-group-sized tile at a
// time; each tile is staged in __local memory, so a position is read from global memory once
// per work-group instead of once per work-item. pos.w is the mass; eps2 softens close
// encounters (and makes the self-interaction contribute exactly zero).
__kernel void nbody_step(__global const float4 *pos, __global const float4 *vel,
                         __global float4 *posOut, __global float4 *velOut,
                         __local float4 *tile, uint bodies, float dt, float eps2)
{
    uint i = (uint)get_global_id(0);
    uint lid = (uint)get_local_id(0);
    uint tileSize = (uint)get_local_size(0);
    float4 me = pos[i];
    float3 acc = (float3)(0.0f);
    for (uint base = 0; base < bodies; base += tileSize) {
        tile[lid] = pos[base + lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint j = 0; j < tileSize; ++j) {
            float4 other = tile[j];
            float3 d = other.xyz - me.xyz;
            float invR = rsqrt(dot(d, d) + eps2);
            acc += (other.w * invR * invR * invR) * d;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float4 v = vel[i];
    v.xyz += acc * dt;
    me.xyz += v.xyz * dt;
    posOut[i] = me;
    velOut[i] = v;
}

// STREAM's triad.
__kernel void triad(__global float *a, __global const float *b, __global const float *c,
                    float s)
{
    size_t i = get_global_id(0);
    a[i] = b[i] + s * c[i];
}

// Nearly empty: one increment, so the host can prove that every launch ran.
__kernel void launch_probe(__global uint *count)
{
    if (get_global_id(0) == 0)
        count[0] += 1u;
}
)CLC";

const char* const kCompileOnlyKernels = R"CLC(
#define MM_TILE 16

// C = A * B for square n x n matrices (n a multiple of MM_TILE), 16x16 tiles in __local.
__kernel __attribute__((reqd_work_group_size(MM_TILE, MM_TILE, 1)))
void matmul_tiled(__global const float *A, __global const float *B, __global float *C, uint n)
{
    __local float tileA[MM_TILE][MM_TILE];
    __local float tileB[MM_TILE][MM_TILE];
    uint col = (uint)get_global_id(0), row = (uint)get_global_id(1);
    uint lx = (uint)get_local_id(0), ly = (uint)get_local_id(1);
    float sum = 0.0f;
    for (uint k0 = 0; k0 < n; k0 += MM_TILE) {
        tileA[ly][lx] = A[row * n + k0 + lx];
        tileB[ly][lx] = B[(k0 + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < MM_TILE; ++k)
            sum = fma(tileA[ly][k], tileB[k][lx], sum);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = sum;
}

// Exclusive prefix sum of each work-group's slice (power-of-two group size), up-sweep then
// down-sweep in __local memory; the slice total goes to sums[group] for a second pass.
__kernel void scan_workgroup(__global const uint *in, __global uint *out, __global uint *sums,
                             __local uint *tmp)
{
    uint lid = (uint)get_local_id(0);
    uint n = (uint)get_local_size(0);
    tmp[lid] = in[get_global_id(0)];
    for (uint stride = 1; stride < n; stride <<= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        uint idx = (lid + 1) * stride * 2 - 1;
        if (idx < n)
            tmp[idx] += tmp[idx - stride];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        sums[get_group_id(0)] = tmp[n - 1];
        tmp[n - 1] = 0;
    }
    for (uint stride = n >> 1; stride > 0; stride >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        uint idx = (lid + 1) * stride * 2 - 1;
        if (idx < n) {
            uint left = tmp[idx - stride];
            tmp[idx - stride] = tmp[idx];
            tmp[idx] += left;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[lid];
}

// Five-point Laplacian smoothing step with clamped borders.
__kernel void stencil5(__global const float *src, __global float *dst, uint width, uint height,
                       float alpha)
{
    int x = (int)get_global_id(0), y = (int)get_global_id(1);
    if (x >= (int)width || y >= (int)height)
        return;
    int w = (int)width;
    int xl = max(x - 1, 0), xr = min(x + 1, w - 1);
    int yu = max(y - 1, 0), yd = min(y + 1, (int)height - 1);
    float c = src[y * w + x];
    float lap = src[y * w + xl] + src[y * w + xr] + src[yu * w + x] + src[yd * w + x] - 4.0f * c;
    dst[y * w + x] = c + alpha * lap;
}

// 256-bin byte histogram: private counts merged per work-group in __local, then globally.
__kernel void histogram256(__global const uchar4 *data, uint count4, __global uint *bins)
{
    __local uint local_bins[256];
    for (uint b = get_local_id(0); b < 256; b += get_local_size(0))
        local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = get_global_id(0); i < count4; i += get_global_size(0)) {
        uchar4 v = data[i];
        atomic_inc(&local_bins[v.x]);
        atomic_inc(&local_bins[v.y]);
        atomic_inc(&local_bins[v.z]);
        atomic_inc(&local_bins[v.w]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = get_local_id(0); b < 256; b += get_local_size(0))
        if (local_bins[b])
            atomic_add(&bins[b], local_bins[b]);
}
)CLC";

} // namespace

std::string benchSource(uint64_t nonce) {
    std::string s = "// duet-bench build nonce " + std::to_string(nonce) + "\n";
    s += seeds::kParallelMinSource;
    s += kMeasuredKernels;
    s += kCompileOnlyKernels;
    return s;
}

std::string benchBuildOptions(uint64_t nonce) {
    return "-D DUET_BENCH_NONCE=" + std::to_string(nonce) + "UL";
}

const std::vector<std::string>& benchKernelNames() {
    static const std::vector<std::string> names = {
        "min_stage1",   "min_reduce",     "nbody_step", "triad",       "launch_probe",
        "matmul_tiled", "scan_workgroup", "stencil5",   "histogram256"};
    return names;
}

} // namespace duet::bench
