// Chip -> LLVM target and availability for the GCN device's hardware sink (no libdrm here).
#include "devices/gcn/amdgpu_target.hpp"

#include <cstdio>

namespace duet::gcn {
namespace {

bool inRange(uint32_t v, uint32_t lo, uint32_t hi) {
    return v >= lo && v < hi;
}

/// Family names for families the device does not run on: the reason names them.
const char* familyName(uint32_t family, unsigned& major) {
    struct Entry {
        uint32_t id;
        const char* name;
        unsigned major;
    };
    static constexpr Entry kFamilies[] = {
        {110, "SI (gfx6)", 6},
        {120, "CI (gfx7)", 7},
        {125, "KV (gfx7)", 7},
        {130, "VI (gfx8)", 8},
        {135, "CZ (gfx8)", 8},
        {141, "AI (gfx9)", 9},
        {142, "RV (gfx9)", 9},
        {143, "NV (gfx10)", 10},
        {144, "VGH (gfx10.3)", 10},
        {145, "GC 11.0.0 (gfx11)", 11},
        {146, "YC (gfx10.3)", 10},
        {148, "GC 11.0.1 (gfx11)", 11},
        {149, "GC 10.3.6 (gfx10.3)", 10},
        {150, "GC 11.5.0 (gfx11)", 11},
        {151, "GC 10.3.7 (gfx10.3)", 10},
        {152, "GC 12.0.0 (gfx12)", 12},
    };
    for (const Entry& e : kFamilies)
        if (e.id == family) {
            major = e.major;
            return e.name;
        }
    major = 0;
    return nullptr;
}

} // namespace

AmdgpuTargetChoice chooseAmdgpuTarget(uint32_t familyId, uint32_t rev, bool submitEnabled) {
    AmdgpuTargetChoice c;
    const char* name = familyName(familyId, c.gfxMajor);
    c.family = name ? name : "unknown family " + std::to_string(familyId);
    const std::string revText = " (chip_external_rev 0x" + [&] {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%x", rev);
        return std::string(buf);
    }() + ")";

    // chip_external_rev ranges within a family, as AMD's address library (amdgpu_asic_addr.h)
    // ranges them; half-open [lo, hi).
    if (familyId == kAmdgpuFamilyAi) {
        if (inRange(rev, 0x01, 0x14))
            c.target = "gfx900"; // Vega 10
        else if (inRange(rev, 0x14, 0x28))
            c.target = "gfx904"; // Vega 12
        else if (inRange(rev, 0x28, 0x32))
            c.target = "gfx906"; // Vega 20
        else if (inRange(rev, 0x32, 0x3c))
            c.target = "gfx908"; // Arcturus (MI100)
        else if (inRange(rev, 0x3c, 0x46))
            c.target = "gfx90a"; // Aldebaran (MI200)
        else if (rev >= 0x46) {
            // MI300 (GC 9.4.x): gfx940/941/942 are told apart by more than this revision, and
            // its queues and memory model differ; not a target this runtime guesses.
            c.gfxMinor = 4;
            c.reason = "AMD GPU family " + c.family + revText +
                       " is a gfx94x part (MI300), which the GCN device does not support";
            return c;
        }
    } else if (familyId == kAmdgpuFamilyRv) {
        if (inRange(rev, 0x01, 0x81))
            c.target = "gfx902"; // Raven, Picasso
        else if (inRange(rev, 0x81, 0x91))
            c.target = "gfx909"; // Raven2
        else if (rev >= 0x91)
            c.target = "gfx90c"; // Renoir, Lucienne, Cezanne
    }
    if (c.gfxMajor != 9) {
        c.reason = "AMD GPU family " + c.family +
                   " is not supported: the GCN device's PM4 command stream uses gfx9 register "
                   "offsets and packets";
        return c;
    }
    if (c.target.empty()) {
        c.reason = "AMD GPU family " + c.family + revText +
                   ": the chip revision maps to no known gfx9 target";
        return c;
    }
    if (!submitEnabled) {
        c.reason = "command submission through the amdgpu kernel driver "
                   "(devices/gcn/amdgpu_queue.cpp) has never been run on real hardware; set "
                   "DUET_AMDGPU_SUBMIT=1 to use this " +
                   c.target + " anyway";
        return c;
    }
    c.available = true;
    return c;
}

} // namespace duet::gcn
