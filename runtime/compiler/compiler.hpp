// The compiler's door: OpenCL C source -> LLVM bitcode -> device code. No LLVM headers here.
#pragma once

#include <CL/cl.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace duet::rt {

/// How a kernel argument reaches the kernel (decides what clSetKernelArg accepts).
enum class KernelArgKind : uint8_t {
    Value,          ///< scalar, vector or struct passed by value; `size` bytes
    GlobalBuffer,   ///< `__global T*`: a cl_mem buffer (or NULL)
    ConstantBuffer, ///< `__constant T*`: a cl_mem buffer (or NULL)
    LocalBuffer,    ///< `__local T*`: size given to clSetKernelArg, allocated per work-group
    Image,          ///< image*_t: a cl_mem image
    Sampler,        ///< sampler_t: a cl_sampler
};

struct KernelArgDesc {
    KernelArgKind kind = KernelArgKind::Value;
    uint32_t size = 0;  ///< Value: bytes expected by clSetKernelArg; pointers/images: 8
    uint32_t align = 1; ///< Value: alignment of the type in the kernel
    cl_kernel_arg_address_qualifier addressQualifier = CL_KERNEL_ARG_ADDRESS_PRIVATE;
    cl_kernel_arg_access_qualifier accessQualifier = CL_KERNEL_ARG_ACCESS_NONE;
    cl_kernel_arg_type_qualifier typeQualifier = CL_KERNEL_ARG_TYPE_NONE;
    std::string typeName; ///< as CL_KERNEL_ARG_TYPE_NAME: "float4*", "image2d_t", "uint"
    std::string name;     ///< empty unless built with -cl-kernel-arg-info
    /// Image: CL_MEM_OBJECT_IMAGE1D ... IMAGE3D; 0 otherwise.
    cl_mem_object_type imageType = 0;
    bool imageDepth = false; ///< image2d_depth_t / image2d_array_depth_t
};

struct KernelDesc {
    std::string name;
    std::vector<KernelArgDesc> args;
    bool argInfoAvailable = false;                    ///< built with -cl-kernel-arg-info
    std::array<size_t, 3> reqdWorkGroupSize{0, 0, 0}; ///< all 0 when not given
    std::array<size_t, 3> workGroupSizeHint{0, 0, 0};
    std::string attributes;          ///< CL_KERNEL_ATTRIBUTES, as written in the source
    uint64_t staticLocalMemSize = 0; ///< bytes of kernel-scope __local variables
    uint64_t privateMemSize = 0;     ///< per work-item stack estimate
    bool hasBarrier = false;
    bool usesPrintf = false;
};

/// The CPU device's largest work-group (CL_DEVICE_MAX_WORK_GROUP_SIZE and every
/// CL_DEVICE_MAX_WORK_ITEM_SIZES entry). Generated code relies on it: local sizes and ids
/// are known to fit, so index arithmetic in int stays affine for the vectoriser.
inline constexpr size_t kCpuMaxWorkGroupSize = 4096;

/// Per-work-group launch context, read by generated code at fixed offsets. POD, keep in sync
/// with the work-group pass (runtime/devices/cpu).
struct WorkGroupContext {
    uint32_t workDim;
    uint32_t reserved;
    uint64_t globalOffset[3];
    uint64_t globalSize[3];
    uint64_t enqueuedLocalSize[3]; ///< the local size of the NDRange
    uint64_t localSize[3];         ///< this group's size (smaller for a trailing partial group)
    uint64_t numGroups[3];
    uint64_t groupId[3];
    char* localMem;  ///< this thread's block for kernel-scope __local variables
    void* printfCtx; ///< opaque, handed to the host printf hook
    /// End of this group's __local blocks (kernel-scope variables and __local arguments):
    /// to_local() and get_fence() answer from [localMem, localMemEnd).
    char* localMemEnd;
    /// The stack span that holds every work-item's private memory: from the running thread's
    /// lowest stack address up to the frame that calls the WorkGroupFn (stacks grow down).
    /// to_private() answers from [stackLow, stackHigh).
    char* stackLow;
    char* stackHigh;
};

/// Entry of one kernel compiled for the CPU: runs every work-item of one work-group.
/// `args[i]` points at the storage of argument i: the value bytes for Value; a `void*` holding
/// the address for buffers, __local blocks, images; a `uint32_t` sampler value for Sampler.
using WorkGroupFn = void (*)(void* const* args, const WorkGroupContext* ctx);

/// What a build needs to know about the target device.
struct TargetSpec {
    enum class Kind : uint8_t { Cpu, Gcn } kind = Kind::Cpu;
    std::string cpuName;     ///< LLVM CPU name for code generation ("znver4", "gfx900")
    std::string cpuFeatures; ///< LLVM feature string ("+avx512f,...")
    /// OpenCL C features and extensions the device reports, passed to clang as -cl-ext.
    std::vector<std::string> clExtensions;
    bool fp64 = true;
    bool images = true;
};

/// A program header for clCompileProgram's input_headers.
struct HeaderSource {
    std::string includeName;
    std::string source;
};

struct CompileResult {
    cl_int status =
        CL_SUCCESS;      ///< CL_SUCCESS, CL_INVALID_COMPILER_OPTIONS, CL_COMPILE_PROGRAM_FAILURE
    std::string log;     ///< clang's diagnostics, verbatim
    std::string bitcode; ///< LLVM bitcode of the compiled object
};

/// clCompileProgram (and the first half of clBuildProgram): OpenCL C -> bitcode.
/// Thread-safe: each call builds its own clang instance.
CompileResult compileSource(std::string_view source, std::string_view options,
                            std::span<const HeaderSource> headers, const TargetSpec& target);

struct LinkResult {
    cl_int status = CL_SUCCESS; ///< CL_SUCCESS, CL_INVALID_LINKER_OPTIONS, CL_LINK_PROGRAM_FAILURE
    std::string log;
    std::string bitcode; ///< the linked module (library or executable input)
};

/// clLinkProgram: bitcode objects -> one module. `createLibrary` skips the final checks.
LinkResult linkBitcode(std::span<const std::string> objects, std::string_view options,
                       bool createLibrary);

/// Kernel metadata of a compiled or linked module (for CL_PROGRAM_KERNEL_NAMES and clCreateKernel).
/// Returns an empty vector on unreadable input.
std::vector<KernelDesc> describeKernels(const std::string& bitcode);

/// Executable code for one device: what clBuildProgram/clLinkProgram produce in the end.
/// Thread-safe after creation; lives as long as any kernel made from it.
class DeviceExecutable {
public:
    virtual ~DeviceExecutable() = default;
    virtual const std::vector<KernelDesc>& kernels() const = 0;
    /// CPU: the WorkGroupFn of kernel `index` (in kernels() order). GCN: its code object entry.
    virtual void* entry(size_t index) const = 0;
    /// CPU: kernel `index` with non-temporal stores, for launches whose buffers exceed the
    /// last-level cache; null when that variant would be the same code (or is not made).
    /// The thread that runs it must execute a store fence (sfence) after its last call.
    virtual void* streamingEntry(size_t /*index*/) const { return nullptr; }
    /// The program binary for CL_PROGRAM_BINARIES: an ELF with .source, .llvmir, .text.
    virtual const std::string& binary() const = 0;
    /// Bytes of program-scope __global variables (CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE).
    virtual size_t globalVariableTotalSize() const { return 0; }
};

struct FinalizeResult {
    cl_int status = CL_SUCCESS; ///< CL_SUCCESS, CL_BUILD_PROGRAM_FAILURE, CL_LINK_PROGRAM_FAILURE
    std::string log;
    std::shared_ptr<DeviceExecutable> executable;
};

/// Bitcode -> machine code for the CPU (work-group functions, optimisation, JIT).
/// `options` are the build options (for -cl-* flags, -save-temps). `source` is kept in the binary.
FinalizeResult finalizeForCpu(const std::string& bitcode, std::string_view options,
                              std::string_view source, const TargetSpec& target);

/// Bitcode (amdgcn) -> libclc and Duet's GCN additions linked -> optimised -> AMDGPU machine
/// code -> lld -> an amdhsa code object (v5) loaded into host memory. The executable's entry()
/// is a `const gcn::KernelEntry*` (devices/gcn/code_object.hpp). Implemented in
/// finalize_gcn.cpp.
FinalizeResult finalizeForGcn(const std::string& bitcode, std::string_view options,
                              std::string_view source, const TargetSpec& target);

/// clCreateProgramWithBinary: recreate an executable (or a compiled object) from binary().
/// On success exactly one of `executable` or `bitcode` is set: a compiled-object binary
/// gives bitcode only.
struct LoadBinaryResult {
    cl_int status = CL_SUCCESS; ///< CL_SUCCESS or CL_INVALID_BINARY
    std::string log;
    std::shared_ptr<DeviceExecutable> executable;
    std::string bitcode;
    std::string source;
    cl_program_binary_type binaryType = CL_PROGRAM_BINARY_TYPE_NONE;
};
LoadBinaryResult loadCpuBinary(std::span<const unsigned char> binary, const TargetSpec& target);
/// The GCN device's binaries: executables carry the code object in .text (e_machine
/// EM_AMDGPU) and are loaded from it without recompiling.
LoadBinaryResult loadGcnBinary(std::span<const unsigned char> binary, const TargetSpec& target);

/// Wraps bitcode of a compiled object or library as a binary (ELF with .llvmir [+ .source]).
std::string makeObjectBinary(const std::string& bitcode, std::string_view source,
                             cl_program_binary_type type);

} // namespace duet::rt
