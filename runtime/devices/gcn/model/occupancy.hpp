// Occupancy of a kernel on a gfx9 compute unit: the one computation the build log (through
// the code-object reader) and the model's dispatch statistics share. Header-only, no LLVM.
#pragma once

#include <algorithm>

namespace duet::gcn {

/// Waves per SIMD a kernel's resources allow, and what limits them.
struct Occupancy {
    unsigned wavesPerSimd = 10; ///< 0 when the work-group cannot run at all
    unsigned byVgprs = 10, bySgprs = 10, byLds = 10, byWorkGroups = 10;
    const char* limit = "none"; ///< "VGPRs", "SGPRs", "LDS", "work-group size" or "none"
};

/// gfx9 limits: 4 SIMDs per CU and 10 waves per SIMD; 256 VGPRs per lane in granules of 4;
/// 800 SGPRs per SIMD in granules of 16 (as LLVM's AMDGPU backend counts them); 64 KiB of LDS
/// per CU in granules of 512 bytes; at most 16 work-groups per CU when a group has more than
/// one wave (barrier resources), 40 single-wave ones.
inline Occupancy computeOccupancy(unsigned vgprs, unsigned sgprs, unsigned ldsBytes,
                                  unsigned groupItems) {
    constexpr unsigned kMaxWaves = 10, kSimds = 4, kLdsPerCu = 64 * 1024;
    Occupancy o;
    o.byVgprs = std::min(kMaxWaves, 256 / std::max(4u, (vgprs + 3) / 4 * 4));
    o.bySgprs = std::min(kMaxWaves, 800 / std::max(16u, (sgprs + 15) / 16 * 16));
    const unsigned wavesPerGroup = std::max(1u, (groupItems + 63) / 64);
    const unsigned maxGroups = wavesPerGroup == 1 ? 40 : std::min(16u, 40 / wavesPerGroup);
    auto groupsToWaves = [&](unsigned groups) {
        // A group's waves share one CU; round up: one group still gives a SIMD a wave.
        return groups ? std::min(kMaxWaves, std::max(1u, groups * wavesPerGroup / kSimds)) : 0u;
    };
    o.byWorkGroups = groupsToWaves(maxGroups);
    const unsigned lds = (ldsBytes + 511) / 512 * 512;
    o.byLds =
        lds > kLdsPerCu ? 0 : groupsToWaves(lds ? std::min(maxGroups, kLdsPerCu / lds) : maxGroups);
    o.wavesPerSimd = kMaxWaves;
    const std::pair<unsigned, const char*> limits[] = {{o.byVgprs, "VGPRs"},
                                                       {o.bySgprs, "SGPRs"},
                                                       {o.byLds, "LDS"},
                                                       {o.byWorkGroups, "work-group size"}};
    for (auto& [n, name] : limits)
        if (n < o.wavesPerSimd)
            o.wavesPerSimd = n, o.limit = name;
    return o;
}

} // namespace duet::gcn
