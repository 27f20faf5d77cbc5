// What a built program says about its kernels: names, argument kinds and qualifiers, attributes.
#pragma once

#include <CL/cl.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
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
    /// Pipe (typeQualifier has CL_KERNEL_ARG_TYPE_PIPE; kind GlobalBuffer): the packet size
    /// the kernel's pipe functions use on it, 0 when the compiler saw none.
    uint32_t pipePacketSize = 0;
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
    /// Whether the kernel may tell how its work-items are grouped (local ids and sizes, group
    /// ids, barriers, __local memory, sub-group and work-group functions). A device whose code
    /// generator proves it cannot (the CPU device) may pick any grouping when no local size is
    /// given, a smaller last group included, even for OpenCL 1.x programs.
    bool observesGroups = true;
};

} // namespace duet::rt
