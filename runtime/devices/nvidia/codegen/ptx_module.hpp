// What the NVIDIA code generator tells the launcher about a PTX module: the kernel ABI (launch
// block, __local arguments as dynamic shared memory offsets), each kernel's shared memory and
// block-size requirements, printf formats; and the Duet comment header that carries them inside
// the PTX text of a program binary. No LLVM headers: the device and tests include it.
#pragma once

#include "core/printf_buffer.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace duet::nvidia {

/// The hidden last parameter of every kernel (PTX `.param .align 8 .b8 <kernel>_param_<n>[96]`,
/// passed by value through cuLaunchKernel's kernelParams). The work-item functions
/// (runtime/builtins/nvidia/workitem.cl, DuetNvLaunch there: keep both in step) read it.
///
/// An NDRange runs as one CUDA grid per combination of "full blocks" and "the partial last
/// work-group" along each dimension (at most 8 grids): blockDim is always the real work-group
/// size, so get_local_size is %ntid and barriers need no masking. `groupOffset` is the
/// work-group id of the grid's first block. Dimensions at or above workDim have size 1,
/// offset 0.
struct LaunchBlock {
    uint64_t globalOffset[3];      ///< get_global_offset
    uint64_t globalSize[3];        ///< get_global_size
    uint32_t enqueuedLocalSize[3]; ///< get_enqueued_local_size (the full work-group size)
    uint32_t groupOffset[3];       ///< work-group id of this grid's block (0,0,0)
    uint32_t numGroups[3];         ///< get_num_groups of the whole NDRange
    uint32_t workDim;              ///< get_work_dim
    uint64_t printfBuffer;         ///< device address of the printf buffer; 0: printf returns -1
};
static_assert(sizeof(LaunchBlock) == 96);
static_assert(offsetof(LaunchBlock, globalSize) == 24);
static_assert(offsetof(LaunchBlock, enqueuedLocalSize) == 48);
static_assert(offsetof(LaunchBlock, groupOffset) == 60);
static_assert(offsetof(LaunchBlock, numGroups) == 72);
static_assert(offsetof(LaunchBlock, workDim) == 84);
static_assert(offsetof(LaunchBlock, printfBuffer) == 88);

/// The launch's dynamic shared memory (the module's `.extern .shared .align 16 .b8
/// __duet_local_args[]`; a wider alignment when a __local variable needs it) holds, per kernel,
/// first its kernel-scope __local variables (KernelEntry::localVariableBytes, laid out by the
/// code generator at offsets fixed in the code), then its __local arguments. Each `__local T*`
/// kernel argument is a `.param .u64`: its byte offset into that memory. The launcher gives the
/// arguments consecutive offsets after the variables, each rounded up to this alignment (the
/// widest PTX shared access, ld.shared.v4.b32 / v2.b64), and passes the total as
/// sharedMemBytes (launch_plan.hpp). No kernel has static `.shared` variables.
inline constexpr uint32_t kLocalArgAlign = 16;

/// printf: LaunchBlock::printfBuffer is the address of a buffer laid out as
/// core/printf_buffer.hpp says (the GCN device's layout too); the formats are the module's
/// (PtxModule::printf), in the PTX header.
using rt::PrintfFormat;

/// What a kernel's texture-only variant needs of one image it reads: the launch may run the
/// variant only where, for every requirement, the image argument's descriptor has texture class
/// `textureClass` (texture_objects.hpp) and a texture object for the sampler's key.
struct TextureRequirement {
    uint32_t image = 0;        ///< the image argument
    uint32_t textureClass = 0; ///< what the read asks for (1 float, 2 signed, 3 unsigned)
    int32_t samplerArg = -1;   ///< the sampler argument, or -1: the constant below
    uint32_t samplerBits = 0;  ///< CLK_* bits of a sampler literal (or a sampler-less read's)
    bool operator==(const TextureRequirement&) const = default;
};

/// What the launcher needs per kernel beyond the OpenCL argument list (KernelDesc).
struct KernelEntry {
    std::string name; ///< the PTX .entry name (the OpenCL kernel name)
    /// PTX parameters: the OpenCL arguments, then LaunchBlock, then in guarded builds the guard
    /// record's address (GuardRecord).
    uint32_t params = 0;
    std::vector<uint32_t> localArgs; ///< indices of __local pointer arguments (u64 offsets)
    /// Bytes at the start of the dynamic shared memory that the kernel's __local variables take
    /// (also those of the functions it calls), each at its alignment; the __local arguments
    /// follow. Static `.shared` (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) comes on top, 0 for
    /// Duet's PTX.
    uint64_t localVariableBytes = 0;
    /// reqd_work_group_size; all 0 when the kernel has none. Emitted as `.maxntid`, not
    /// `.reqntid`: the partial last work-group of a non-uniform NDRange runs as a smaller block,
    /// which .reqntid would refuse. Without it no bound is emitted, and the launcher takes
    /// CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK as the kernel's work-group limit.
    std::array<uint32_t, 3> reqdWorkGroupSize{0, 0, 0};
    bool usesPrintf = false;
    /// The kernel's texture-only variant (codegen/texture_variants.cpp): the same code, with
    /// each software read of an image replaced by nothing, so that it needs far fewer registers
    /// (the software reads set the register count of the whole kernel). Empty: none. The
    /// launcher runs it where every requirement holds, so that no read it makes could have
    /// needed the software path.
    std::string texturedName;
    std::vector<TextureRequirement> textureRequirements;
    /// DUET_KERNEL_CHECKS: the names a failed check's message gives, by its id: each argument's
    /// (empty when unknown), then each program variable's (kernel-scope __local, program-scope)
    /// whose bounds the kernel checks (the header's `duet-check-names` line; empty: no checks).
    std::vector<std::string> checkNames;
};

/// Guarded builds (DUET_KERNEL_CHECKS, DUET_KERNEL_TIMEOUT): every kernel has one more PTX
/// parameter after the launch block, a `.param .u64`: the device address of its launch's guard
/// record, this header followed by the bounds of each argument (two u64, [low, high), per
/// argument in order: a buffer's bytes, an image's descriptor; for a __local argument [0, its
/// size), relative to the pointer the kernel gets; 0, 0 for the others). The launcher writes
/// the record (the header zeroed) on the stream before the grids of each launch, one record per
/// launch, and reads the header back after them. Every grid of the launch shares it.
struct GuardRecord {
    /// Why the launch stopped: kStoppedByTimeout, kStoppedByCheck (bits; 0: it did not). A
    /// work-item that sees it non-zero at a poll exits.
    uint32_t stopped;
    uint32_t faultTaken; ///< 0 until the first failed check claims the fault fields below
    /// %globaltimer (ns) when the launch's first poll ran, the start its deadline counts from
    /// (0: no poll yet); the first poller sets it (atom.cas).
    uint64_t start;
    // The first failed check (rt::CheckFault's fields).
    uint32_t faultId; ///< argument index, argument count + variable index, or rt::kCheckNullId
    uint32_t faultKind;
    uint64_t faultAddress, faultLow, faultHigh, faultBytes;
    uint64_t faultGlobalId[3];
};
static_assert(sizeof(GuardRecord) == 80);
static_assert(offsetof(GuardRecord, start) == 8);
static_assert(offsetof(GuardRecord, faultId) == 16);
static_assert(offsetof(GuardRecord, faultAddress) == 24);
static_assert(offsetof(GuardRecord, faultGlobalId) == 56);
inline constexpr uint32_t kStoppedByTimeout = 1;
inline constexpr uint32_t kStoppedByCheck = 2;
/// GuardRecord::faultKind of a barrier divergence (an access's is an rt::AccessKind, 0-2); then
/// faultGlobalId is the work-group's id, faultLow and faultHigh two work-items' local ids packed
/// `z << 32 | y << 16 | x` (the first is work-item 0), faultAddress and faultBytes where each
/// stopped (rt::BarrierStop).
inline constexpr uint32_t kFaultBarrierDivergence = 0xbd;
/// Bytes of the guard record of a kernel with `arguments` OpenCL arguments.
inline constexpr size_t guardRecordBytes(size_t arguments) {
    return sizeof(GuardRecord) + 16 * arguments;
}

/// A PTX module and what Duet knows about it.
struct PtxModule {
    std::string target;       ///< "sm_90"
    unsigned ptxVersion = 0;  ///< PTX ISA as major*10 + minor (80 for 8.0)
    uint64_t globalBytes = 0; ///< program-scope __global variables (CL_PROGRAM_BUILD_GLOBAL_...)
    /// DUET_KERNEL_TIMEOUT the code polls for, in microseconds (the header's `duet-timeout`
    /// line); 0: no polls.
    uint64_t timeoutMicroseconds = 0;
    /// DUET_KERNEL_CHECKS: accesses are bounds-checked (the header's `duet-checks` line).
    bool boundsChecks = false;
    /// Whether the kernels take the guard record parameter (GuardRecord).
    bool guarded() const { return boundsChecks || timeoutMicroseconds; }
    std::vector<KernelEntry> kernels;
    std::vector<PrintfFormat> printf;
};

/// PTX comment lines ("// duet-...") that describe `m`; the code generator puts them in front
/// of the PTX text. ptxas and the driver's JIT ignore them.
std::string ptxHeader(const PtxModule& m);

struct ReadPtxResult {
    std::string error; ///< empty on success
    /// The text has a Duet header of another version (another kernel ABI, e.g. a binary made
    /// before __local variables moved to dynamic shared memory): rebuild from the bitcode.
    bool otherVersion = false;
    PtxModule module;
};
/// Reads the Duet header and the `.version` / `.target` directives of PTX text made by
/// ptxHeader + the code generator. Bad input gives an error, never a crash.
ReadPtxResult readPtxModule(std::string_view ptx);

} // namespace duet::nvidia
