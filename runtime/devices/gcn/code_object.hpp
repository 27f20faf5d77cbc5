// AMDGPU code objects (amdhsa, code object v5): what the GCN device needs from the ELF LLVM
// and lld produce — kernel descriptors, the msgpack metadata note, loading into host memory,
// and occupancy. No LLVM headers here: the device and the tests include it.
#pragma once

#include "core/printf_buffer.hpp"
#include "devices/gcn/model/occupancy.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace duet::gcn {

/// The 64-byte kernel descriptor (`<kernel>.kd`, AMDGPUUsage "Kernel Descriptor").
struct KernelDescriptor {
    uint32_t groupSegmentFixedSize = 0;
    uint32_t privateSegmentFixedSize = 0;
    uint32_t kernargSize = 0;
    int64_t kernelCodeEntryByteOffset = 0; ///< from the descriptor's own address
    uint32_t computePgmRsrc3 = 0;
    uint32_t computePgmRsrc1 = 0;
    uint32_t computePgmRsrc2 = 0;
    uint16_t kernelCodeProperties = 0;
    uint16_t kernargPreload = 0;
};
static_assert(sizeof(KernelDescriptor) <= 64);

/// kernel_code_properties bits: which user SGPRs the kernel expects, in this order.
enum KernelCodeProperty : uint16_t {
    kEnableSgprPrivateSegmentBuffer = 1u << 0, ///< 4 SGPRs: scratch V#
    kEnableSgprDispatchPtr = 1u << 1,          ///< 2 SGPRs: hsa_kernel_dispatch_packet_t*
    kEnableSgprQueuePtr = 1u << 2,             ///< 2 SGPRs: amd_queue_t*
    kEnableSgprKernargSegmentPtr = 1u << 3,    ///< 2 SGPRs
    kEnableSgprDispatchId = 1u << 4,           ///< 2 SGPRs
    kEnableSgprFlatScratchInit = 1u << 5,      ///< 2 SGPRs
    kEnableSgprPrivateSegmentSize = 1u << 6,   ///< 1 SGPR
    kEnableWavefrontSize32 = 1u << 10,
    kUsesDynamicStack = 1u << 11,
};

/// COMPUTE_PGM_RSRC1/2 fields the runtime reads (gfx9 layout).
namespace rsrc {
constexpr uint32_t rsrc1Vgprs(uint32_t r) {
    return r & 0x3f;
} ///< granulated, 4 per unit
constexpr uint32_t rsrc1Sgprs(uint32_t r) {
    return (r >> 6) & 0xf;
} ///< granulated, 8 per unit
constexpr uint32_t rsrc2ScratchEn(uint32_t r) {
    return r & 1;
}
constexpr uint32_t rsrc2UserSgprs(uint32_t r) {
    return (r >> 1) & 0x1f;
}
constexpr uint32_t rsrc2TgidEn(uint32_t r, int d) {
    return (r >> (7 + d)) & 1;
}
constexpr uint32_t rsrc2TidigCompCnt(uint32_t r) {
    return (r >> 11) & 3;
}
constexpr uint32_t kRsrc2LdsSizeShift = 15;
constexpr uint32_t kRsrc2LdsSizeMask = 0x1ffu << kRsrc2LdsSizeShift;
} // namespace rsrc

/// One entry of a kernel's `.args` in the metadata.
struct KernelArgMeta {
    std::string name; ///< `.name` (empty unless built with -cl-kernel-arg-info)
    std::string
        valueKind; ///< `.value_kind`: by_value, global_buffer, dynamic_shared_pointer, hidden_*...
    std::string addressSpace; ///< `.address_space` for pointers: global, constant, local, ...
    uint32_t offset = 0;      ///< byte offset in the kernarg segment
    uint32_t size = 0;
    uint32_t pointeeAlign = 0; ///< `.pointee_align` (dynamic_shared_pointer), 0 when absent
};

/// One kernel: the descriptor plus its `amdhsa.kernels` metadata entry.
struct KernelInfo {
    std::string name;   ///< `.name`: the OpenCL kernel name
    std::string symbol; ///< `.symbol`: "<name>.kd"
    KernelDescriptor descriptor;
    uint64_t descriptorAddress = 0; ///< virtual address of the descriptor in the code object
    uint64_t codeAddress = 0;       ///< descriptor address + entry offset
    uint64_t codeSize = 0;          ///< size of the kernel's function symbol (0 if unknown)
    std::vector<KernelArgMeta> args;
    uint32_t kernargSegmentSize = 0, kernargSegmentAlign = 0;
    uint32_t groupSegmentFixedSize = 0, privateSegmentFixedSize = 0;
    uint32_t wavefrontSize = 64, sgprCount = 0, vgprCount = 0;
    uint32_t sgprSpillCount = 0, vgprSpillCount = 0;
    uint32_t maxFlatWorkgroupSize = 0;
    std::array<uint32_t, 3> reqdWorkgroupSize{0, 0, 0}; ///< all 0 when absent
    bool dynamicStack = false;
    /// `.device_enqueue_symbol` of a block kernel (`<name>.runtime_handle`, which the code of
    /// enqueue_kernel passes to name it) and that symbol's address; empty and 0 otherwise.
    std::string runtimeHandle;
    uint64_t runtimeHandleAddress = 0;
    /// The kernel has a hidden_default_queue argument (it calls get_default_queue or
    /// enqueue_kernel) or a queue_t one (`.value_kind: queue`): it may enqueue kernels.
    bool mayEnqueue = false;
};

/// What the runtime writes into a block kernel's runtime handle (`KernelInfo::runtimeHandle`,
/// 16 bytes) when the code object is loaded: builtins/gcn/device_enqueue.cl's duet_block_handle,
/// which get_kernel_work_group_size and enqueue_kernel's ndrange check read.
struct BlockHandle {
    uint32_t kernelIndex;       ///< in the executable's kernels()
    uint32_t workGroupSize;     ///< the block kernel's work-group size limit
    uint32_t preferredMultiple; ///< the wave
    uint32_t pad;
};
static_assert(sizeof(BlockHandle) == 16);

/// Where code object v5 puts hidden_printf_buffer, from the implicit-argument pointer.
inline constexpr uint32_t kImplicitPrintfBufferOffset = 72;

/// Parses one `amdhsa.printf` entry, "id:argc:size0:...:sizeN-1:format" (written by Duet's printf
/// lowering, codegen/printf_lowering.cpp, with printfFormatEntry; the record layout is in
/// core/printf_buffer.hpp); returns an empty string on success, or why not.
std::string parsePrintfFormat(std::string_view text, rt::PrintfFormat& out);
/// The `amdhsa.printf` entry of `f` (what parsePrintfFormat reads back).
std::string printfFormatEntry(const rt::PrintfFormat& f);

/// What the reader extracts from a code object.
struct CodeObject {
    std::string target;                    ///< `amdhsa.target`, e.g. "amdgcn-amd-amdhsa--gfx900"
    std::array<uint32_t, 2> version{0, 0}; ///< `amdhsa.version` (1.2 for code object v5)
    unsigned abiVersion = 0;               ///< ELF EI_ABIVERSION (3 for v5)
    uint32_t elfFlags = 0;                 ///< e_flags: EF_AMDGPU_MACH_* and feature bits
    std::vector<KernelInfo> kernels;
    std::vector<std::string> printfFormats; ///< `amdhsa.printf`, when the program calls printf
    std::vector<rt::PrintfFormat> printf;   ///< the same, parsed, indexed by nothing (ids inside)
    const KernelInfo* find(std::string_view name) const;
};

struct ReadCodeObjectResult {
    std::string error; ///< empty on success; otherwise why the bytes are not a usable code object
    CodeObject object;
    explicit operator bool() const { return error.empty(); }
};

/// Parses an amdhsa shared-object code object with llvm::object and llvm::msgpack: every
/// kernel's descriptor and metadata. Never crashes on malformed input.
ReadCodeObjectResult readCodeObject(std::span<const unsigned char> elf);

/// What DeviceExecutable::entry() returns for a GCN kernel: its code object entry, loaded.
struct KernelEntry {
    const CodeObject* codeObject = nullptr;
    const KernelInfo* kernel = nullptr;
    uint64_t loadBase = 0; ///< host address the code object's virtual address 0 is loaded at
    uint64_t loadSize = 0; ///< bytes loaded there (what a GPU must be able to read)
};

/// A code object loaded into host memory (the software model's GPU VA space is the process's):
/// PT_LOAD segments copied to one 256-byte aligned block, dynamic relocations applied.
class LoadedCodeObject {
public:
    LoadedCodeObject() = default;
    LoadedCodeObject(const LoadedCodeObject&) = delete;
    LoadedCodeObject& operator=(const LoadedCodeObject&) = delete;
    ~LoadedCodeObject();
    uint64_t base() const { return reinterpret_cast<uint64_t>(m_memory); }
    size_t size() const { return m_size; }

    /// Loads `elf`; returns an empty string on success, or why not.
    std::string load(std::span<const unsigned char> elf);

private:
    unsigned char* m_memory = nullptr;
    size_t m_size = 0;
};

/// Why a kernel of `object` does not lie inside `loaded` (its descriptor, its code, the code's
/// 256-byte alignment COMPUTE_PGM_LO needs), or an empty string when every kernel does. What a
/// dispatch reads from the image, checked once at load: a code object whose symbols point
/// elsewhere would otherwise have the model (or a GPU) read memory that is not the kernel's.
std::string kernelsOutsideImage(const CodeObject& object, const LoadedCodeObject& loaded);

/// The build log's line for one kernel: "kernel k: 12 VGPRs, 18 SGPRs, 0 bytes LDS, ...".
std::string occupancyLine(const KernelInfo& kernel, unsigned workGroupSize);

} // namespace duet::gcn
