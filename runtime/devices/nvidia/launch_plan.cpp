// NDRange -> CUDA grids, launch blocks and __local offsets (see launch_plan.hpp).
#include "devices/nvidia/launch_plan.hpp"

#include <algorithm>

namespace duet::nvidia {

uint64_t layOutSharedMemory(const SharedMemory& shared, std::vector<uint64_t>* offsets) {
    // The variables' offsets are in the code; the arguments follow, consecutive, each at
    // kLocalArgAlign. clSetKernelArg takes any size: the total saturates rather than wraps.
    constexpr uint64_t kCap = uint64_t(1) << 62; // far beyond any GPU; sums below cannot wrap
    uint64_t bytes = std::min<uint64_t>(shared.variables, kCap);
    for (size_t size : shared.arguments) {
        bytes = (bytes + kLocalArgAlign - 1) / kLocalArgAlign * kLocalArgAlign;
        if (offsets)
            offsets->push_back(bytes);
        bytes = std::min<uint64_t>(bytes + std::min<uint64_t>(size, kCap), kCap);
    }
    return bytes;
}

LaunchPlan planLaunch(unsigned workDim, std::span<const size_t> offset,
                      std::span<const size_t> global, std::span<const size_t> local,
                      const SharedMemory& sharedMemory, uint64_t printfBuffer,
                      const GridLimits& limits) {
    LaunchPlan plan;
    if (workDim < 1 || workDim > 3 || offset.size() < workDim || global.size() < workDim ||
        local.size() < workDim) {
        plan.error = "work_dim must be 1, 2 or 3 with that many sizes";
        return plan;
    }
    const uint64_t shared = layOutSharedMemory(sharedMemory, &plan.localOffsets);
    if (shared > UINT32_MAX) {
        plan.error = "the __local variables and arguments need more than 4 GiB of shared memory";
        return plan;
    }
    plan.dynamicSharedBytes = uint32_t(shared);

    LaunchBlock base{};
    base.workDim = workDim;
    base.printfBuffer = printfBuffer;
    std::array<uint64_t, 3> full{}, rest{}, size{1, 1, 1};
    for (unsigned d = 0; d < 3; ++d) {
        const bool used = d < workDim;
        const uint64_t g = used ? global[d] : 1, l = used ? local[d] : 1;
        if (g == 0 || l == 0 || l > UINT32_MAX) {
            plan.error = "global and local sizes must be positive (local below 2^32)";
            return plan;
        }
        size[d] = l;
        full[d] = g / l;
        rest[d] = g % l;
        const uint64_t groups = full[d] + (rest[d] ? 1 : 0);
        if (groups > UINT32_MAX) {
            plan.error = "more than 2^32 work-groups in dimension " + std::to_string(d);
            return plan;
        }
        if (full[d] > limits.maxBlocks[d]) {
            plan.error = "dimension " + std::to_string(d) + " has " + std::to_string(full[d]) +
                         " work-groups; the GPU's grid takes at most " +
                         std::to_string(limits.maxBlocks[d]);
            return plan;
        }
        base.globalOffset[d] = used ? offset[d] : 0;
        base.globalSize[d] = g;
        base.enqueuedLocalSize[d] = uint32_t(l);
        base.numGroups[d] = uint32_t(groups);
    }
    // One grid per choice of "the full work-groups" or "the partial last one" along each
    // dimension that has them.
    for (unsigned mask = 0; mask < 8; ++mask) {
        Grid g;
        g.launch = base;
        bool empty = false;
        for (unsigned d = 0; d < 3; ++d) {
            const bool partial = mask & (1u << d);
            if (partial) {
                if (!rest[d]) {
                    empty = true;
                    break;
                }
                g.blocks[d] = 1;
                g.threads[d] = uint32_t(rest[d]);
                g.launch.groupOffset[d] = uint32_t(full[d]);
            } else {
                if (!full[d]) {
                    empty = true;
                    break;
                }
                g.blocks[d] = uint32_t(full[d]);
                g.threads[d] = uint32_t(size[d]);
                g.launch.groupOffset[d] = 0;
            }
        }
        if (!empty)
            plan.grids.push_back(g);
    }
    return plan;
}

} // namespace duet::nvidia
