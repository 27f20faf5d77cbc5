// Which LLVM target an AMD GPU is, and whether the GCN device may run kernels on it: pure
// functions of what amdgpu_query_gpu_info reports, kept free of libdrm so that they are
// unit-tested without hardware (tests/unit/gcn/gcn_unit_test.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace duet::gcn {

/// amdgpu_drm.h's AMDGPU_FAMILY_* values the decision needs (checked against libdrm's
/// header in amdgpu_queue.cpp).
enum AmdgpuFamily : uint32_t {
    kAmdgpuFamilyAi = 141, ///< Vega 10/12/20, Arcturus, Aldebaran, MI300 (gfx9 dGPUs)
    kAmdgpuFamilyRv = 142, ///< Raven, Raven2/Picasso, Renoir (gfx9 APUs)
};

struct AmdgpuTargetChoice {
    std::string target;    ///< LLVM's processor name ("gfx906"); empty when not known
    std::string family;    ///< readable family ("AI (Vega)", "NV (gfx10)", ...)
    unsigned gfxMajor = 0; ///< CL_DEVICE_GFXIP_MAJOR_AMD
    unsigned gfxMinor = 0; ///< CL_DEVICE_GFXIP_MINOR_AMD
    bool available = false;
    std::string reason; ///< why not available; empty when available
};

/// Maps the chip to a target (family_id and chip_external_rev ranges, as AMD's address
/// library ranges them) and decides availability: only gfx9 chips with a target this
/// runtime's PM4 stream fits (gfx9 SH register offsets), and only when `submitEnabled`
/// (DUET_AMDGPU_SUBMIT=1), because submission has never run on real hardware.
AmdgpuTargetChoice chooseAmdgpuTarget(uint32_t familyId, uint32_t chipExternalRev,
                                      bool submitEnabled);

} // namespace duet::gcn
