// The OpenCL C of the checked-kernel tests (DUET_KERNEL_CHECKS) on every device: one copy of the
// kernels that overrun, for the guard tests (devices/), the standalone kernel_checks_test and the
// NVIDIA code generator's test. Header only, no OpenCL: plain programs include it too.
#pragma once

#include <cstddef>
#include <vector>

namespace duet::test {

/// Kernels that overrun what they were given, one per kind of memory the checks bound:
/// `fill` writes out[gid + shift] (shift 1: one past the end, the last work-item), `tile_sum`
/// writes its __local argument at [lid + 1] (one past the end for the group's last work-item
/// when the argument holds one float per work-item), `sums` writes the kernel-scope __local
/// array part[16] at [lid] (past its end from work-item 16 on).
inline constexpr const char* kOverrunKernels = R"CL(
__kernel void fill(__global int* out, int shift) { out[get_global_id(0) + shift] = 7; }
__kernel void tile_sum(__global float* out, __local float* tile) {
    size_t l = get_local_id(0);
    tile[l + 1] = (float)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[l];
}
__kernel void sums(__global int* out) {
    __local int part[16];
    part[get_local_id(0)] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = part[0];
}
)CL";

/// `add`, in bounds: data[gid] += v. The kernel enqueued after a stopped one, to show the queue
/// goes on.
inline constexpr const char* kAddKernel = R"CL(
__kernel void add(__global int* data, int v) { data[get_global_id(0)] += v; }
)CL";

/// `guarded_swap`: a barrier inside `if (gid < n)`, so a group the bound cuts through diverges at
/// it (the barrier-divergence checks of the CPU and GCN devices). Groups of 64 at most.
inline constexpr const char* kGuardedSwapKernel = R"CL(
__kernel void guarded_swap(__global int* out, int n) {
    __local int t[64];
    int gid = get_global_id(0), lid = get_local_id(0);
    if (gid < n) {
        t[lid] = gid * 2;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[gid] = t[lid ^ 1] + 1;
    }
}
)CL";

/// guarded_swap's result for `n` over `count` work-items, whose groups lie wholly below `n` or
/// wholly at or past it (every item below `n` swapped with its neighbour; -7, the fill, past it).
inline std::vector<int> guardedSwapWanted(int n, int count) {
    std::vector<int> want(std::size_t(count), -7);
    for (int i = 0; i < n && i < count; ++i)
        want[std::size_t(i)] = (i ^ 1) * 2 + 1;
    return want;
}

} // namespace duet::test
