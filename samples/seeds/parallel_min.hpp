// The parallel-min kernels and their host side, shared by seed-parallel-min and duet-bench.
#pragma once

#include "seed_common.hpp"

namespace duet::seeds {

/// OpenCL C source of `min_stage1` (uint4 loads, __local then global atom_min per work-group)
/// and `min_reduce` (folds the global slots into one value with atom_min).
extern const char* const kParallelMinSource;

/// Work sizes for one device.
struct ParallelMinPlan {
    size_t local = 0;    ///< work-group size of min_stage1
    size_t groups = 0;   ///< number of work-groups of min_stage1
    size_t slots = 0;    ///< global partial minima (work-groups fold into slot group % slots)
    cl_uint chunked = 0; ///< 1: each work-item reads one contiguous chunk (CPU caches);
                         ///< 0: work-items interleave (GPU coalescing)
};

/// Picks work sizes for `device` from its compute units, type and the kernel's limits.
ParallelMinPlan planParallelMin(cl_device_id device, cl_kernel stage1);

/// The kernels and buffers of one parallel-min run over `count` uints (a multiple of 4).
struct ParallelMin {
    Kernel stage1, reduce;
    Buffer slots, result;
    ParallelMinPlan plan;
    cl_uint vec4Count = 0;

    /// Creates the kernels from a built `program` and the small buffers, and sets every
    /// argument; `src` is the input buffer of `count` uints.
    ParallelMin(cl_context context, cl_device_id device, cl_program program, cl_mem src,
                size_t count);

    /// Overrides the plan's access pattern (tests both on one device).
    void setChunked(bool chunked);

    /// Enqueues the slot and result resets and both kernels; does not wait.
    void enqueue(cl_command_queue queue) const;

    /// Blocking read of the result (after enqueue()).
    cl_uint read(cl_command_queue queue) const;
};

} // namespace duet::seeds
