// Which NVPTX processor and PTX ISA the code generator targets for a GPU and its driver.
#include "devices/nvidia/codegen/nvidia_toolchain.hpp"

#include <sstream>

namespace duet::rt {
namespace {

/// The processors LLVM 19's NVPTX backend knows from Maxwell on, with the PTX ISA each needs
/// (PTX ISA manual, "PTX Module Directives: .target"). Arch-specific targets (sm_90a) are left
/// out: their code runs on that GPU only.
struct Processor {
    int cc; ///< compute capability, major*10 + minor
    unsigned minPtx;
};
constexpr Processor kProcessors[] = {
    {50, 40}, {52, 41}, {53, 42}, {60, 50}, {61, 50}, {62, 50}, {70, 60},
    {72, 61}, {75, 63}, {80, 70}, {86, 71}, {87, 74}, {89, 78}, {90, 78},
};

/// CUDA driver version -> newest PTX ISA its JIT accepts (CUDA release notes / PTX ISA manual
/// "Release history").
struct DriverPtx {
    int version;
    unsigned ptx;
};
constexpr DriverPtx kDriverPtx[] = {
    {9000, 60},  {9010, 61},  {9020, 62},  {10000, 63}, {10010, 64}, {10020, 65}, {11000, 70},
    {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74}, {11050, 75}, {11060, 76}, {11070, 77},
    {11080, 78}, {12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84}, {12050, 85},
    {12060, 85}, {12080, 87}, {12090, 88}, {13000, 90},
};

std::string ptxText(unsigned ptx) {
    return std::to_string(ptx / 10) + "." + std::to_string(ptx % 10);
}

} // namespace

const char* const kNvidiaExtensions =
    "cl_khr_byte_addressable_store cl_khr_fp64 cl_khr_global_int32_base_atomics "
    "cl_khr_global_int32_extended_atomics cl_khr_local_int32_base_atomics "
    "cl_khr_local_int32_extended_atomics cl_khr_int64_base_atomics "
    "cl_khr_int64_extended_atomics cl_khr_icd cl_khr_extended_versioning "
    "cl_khr_3d_image_writes cl_khr_depth_images cl_khr_image2d_from_buffer "
    "cl_khr_srgb_image_writes "
    // Sub-groups are warps (builtins/nvidia/sub_group.c, sub_group_ext.cl); warps of a block
    // make independent forward progress, which cl_khr_subgroups requires.
    "cl_khr_subgroups cl_khr_subgroup_ballot cl_khr_subgroup_non_uniform_vote "
    "cl_khr_subgroup_non_uniform_arithmetic cl_khr_subgroup_shuffle "
    "cl_khr_subgroup_shuffle_relative cl_khr_subgroup_clustered_reduce "
    "cl_khr_subgroup_extended_types cl_khr_subgroup_rotate";
// 64-bit integers and doubles; generic pointers (PTX generic addressing; legalize.cpp defines
// to_global & co); program-scope globals (.global in the module); acquire-release and
// sequentially consistent atomics up to device scope (fences around relaxed atom instructions,
// legalize.cpp); images, read-write images and 3D image writes (descriptors and texels in
// plain memory, builtins/cpu/image.cl built for nvptx64: linear memory read by software); the
// work-group collective functions (builtins/nvidia/work_group.c: warp shuffles, shared memory);
// sub-groups (builtins/nvidia/sub_group.c: a sub-group is the warp).
const char* const kNvidiaFeatures =
    "__opencl_c_int64 __opencl_c_fp64 __opencl_c_generic_address_space "
    "__opencl_c_program_scope_global_variables __opencl_c_atomic_order_acq_rel "
    "__opencl_c_atomic_order_seq_cst __opencl_c_atomic_scope_device __opencl_c_images "
    "__opencl_c_read_write_images __opencl_c_3d_image_writes "
    "__opencl_c_work_group_collective_functions __opencl_c_subgroups";

TargetSpec nvidiaTarget(const std::string& sm, unsigned ptx) {
    TargetSpec t;
    t.cpuName = sm;
    t.cpuFeatures = "+ptx" + std::to_string(ptx);
    t.fp64 = true;
    t.images = true;
    std::istringstream words(std::string(kNvidiaExtensions) + " " + kNvidiaFeatures);
    for (std::string w; words >> w;)
        // Extensions of the API, not of the language; fp64 and images come with TargetSpec's
        // flags.
        if (w != "cl_khr_icd" && w != "cl_khr_extended_versioning" && w != "cl_khr_fp64" &&
            w != "__opencl_c_fp64" && w != "cl_khr_image2d_from_buffer" && w != "__opencl_c_images")
            t.clExtensions.push_back(w);
    // The device lists it with GL sharing (nvidia_device.cpp); its macro comes from the
    // compiler's extension header (compiler/compile.cpp, kMacroOnlyExtensions).
    t.clExtensions.push_back("cl_khr_gl_depth_images");
    return t;
}

unsigned maxPtxForDriver(int driverVersion) {
    unsigned ptx = 0;
    for (const DriverPtx& d : kDriverPtx)
        if (driverVersion >= d.version)
            ptx = d.ptx;
    return ptx;
}

NvptxTargetChoice chooseNvptxTarget(int major, int minor, int driverVersion) {
    NvptxTargetChoice r;
    const int cc = major * 10 + minor;
    const Processor* pick = nullptr;
    for (const Processor& p : kProcessors)
        if (p.cc <= cc)
            pick = &p;
    if (!pick || major < 5) {
        r.reason = "compute capability " + std::to_string(major) + "." + std::to_string(minor) +
                   " is older than Maxwell (5.0), the oldest GPU Duet generates PTX for";
        return r;
    }
    const unsigned driverPtx = maxPtxForDriver(driverVersion);
    unsigned ptx = std::max(kPreferredPtx, pick->minPtx);
    if (driverVersion > 0) {
        if (driverPtx < pick->minPtx) {
            r.reason = "the CUDA driver (version " + std::to_string(driverVersion / 1000) + "." +
                       std::to_string(driverVersion % 1000 / 10) + ") accepts PTX ISA up to " +
                       (driverPtx ? ptxText(driverPtx) : std::string("an unknown version")) +
                       ", but sm_" + std::to_string(pick->cc) + " needs " + ptxText(pick->minPtx);
            return r;
        }
        ptx = std::min(ptx, std::max(driverPtx, pick->minPtx));
    }
    r.sm = "sm_" + std::to_string(pick->cc);
    r.ptx = ptx;
    return r;
}

} // namespace duet::rt
