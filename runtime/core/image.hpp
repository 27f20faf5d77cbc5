// Images on the host: the supported format table, pixel packing for fills, and the descriptor
// that kernels receive for an image argument (and the argument words of the GPU devices).
#pragma once

#include "core/transfer.hpp"

#include <CL/cl.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace duet::rt {

class Mem;
struct ArgValue;

/// What a kernel sees for an image argument: the lowering pass (compiler/lower_opencl_types)
/// turns every image value into a pointer to one of these, and the builtin library
/// (builtins/cpu/image.cl, struct duet_image) reads it. Keep the two layouts identical.
struct KernelImageDesc {
    char* data;          ///< texel (0,0,0) of layer 0
    uint64_t rowPitch;   ///< bytes between rows
    uint64_t slicePitch; ///< bytes between 3D slices or array layers (1D array: layers)
    int32_t width, height, depth, arraySize; ///< 1 for the dimensions the type lacks
    int32_t elementSize;                     ///< bytes per texel
    int32_t channelOrder;                    ///< CL_R, CL_RGBA, ... (cl_channel_order)
    int32_t channelType;                     ///< CL_UNORM_INT8, ... (cl_channel_type)
    int32_t imageType;                       ///< CL_MEM_OBJECT_IMAGE2D, ...
    int32_t channels;                        ///< channels stored per texel
    int32_t readPath; ///< how the builtins load a texel, precomputed per launch (imageReadPath)
};
static_assert(sizeof(KernelImageDesc) == 64, "layout shared with the OpenCL C library");

/// Number of channels stored for `order`, 0 for an order Duet does not know.
unsigned channelCount(cl_channel_order order);
/// Bytes of one channel of `type`, 0 for a type Duet does not know (or a packed type).
unsigned channelSize(cl_channel_type type);
/// Whether (order, type) is a combination the specification defines (valid descriptor).
bool isValidFormat(const cl_image_format& f);
/// Bytes per texel of a valid format.
size_t elementSize(const cl_image_format& f);
/// Whether the CPU device supports `f` for image type `type` with `flags`: the list that
/// clGetSupportedImageFormats reports is exactly the formats for which this is true.
bool isSupportedFormat(const cl_image_format& f, cl_mem_object_type type, cl_mem_flags flags);
/// Every format the CPU device supports for `type` and `flags`, in a fixed order.
std::vector<cl_image_format> supportedFormats(cl_mem_object_type type, cl_mem_flags flags);

/// Packs an RGBA fill colour (float4 for normalized/float types, int4 or uint4 for integer
/// types, as clEnqueueFillImage reads it) into one texel of `f`. `out` holds elementSize bytes.
void packFillColor(const cl_image_format& f, const void* color, unsigned char* out);

/// Float -> half, round to nearest even (as write_imagef and the fill do).
uint16_t floatToHalf(float v);
float halfToFloat(uint16_t h);

/// Image geometry as a 3D box: x texels, y rows (1D array: layers), z slices or layers.
struct ImageBox {
    std::array<size_t, 3> extent; ///< sizes along x, y, z
    std::array<size_t, 3> stride; ///< bytes between neighbours along x, y, z
};
ImageBox imageBox(const Mem& image);
/// Byte offset of texel `origin` (x, y or layer, z or layer) of `image` from its data().
size_t texelOffset(const Mem& image, const size_t* origin);
/// Where the region of `image` that starts at texel `origin` lies in its storage: offset of
/// that texel, steps along y and z.
Strided imageRegion(const Mem& image, const size_t* origin);
/// The bytes of an image region of `region` texels: region[0] texels per row.
BoxSize imageRegionSize(const Mem& image, const size_t* region);

// KernelImageDesc::readPath: bits 0-3 name the inline load the image builtins use for a texel
// of the format, one bit each (the builtins test bits, not values: LLVM turns a chain of value
// tests into a switch, which it neither unswitches a loop on nor vectorises), bits 4-7 hold
// log2 of its element size (every format Duet supports has a power-of-two size; the other
// formats get kImageReadAny and a zero shift).
constexpr int32_t kImageReadAny = 0;       ///< the general, out-of-line texel load
constexpr int32_t kImageReadPlain32 = 1;   ///< CL_R, CL_RG, CL_RGBA of 32-bit channels
constexpr int32_t kImageReadRgba8 = 2;     ///< CL_RGBA of CL_UNORM_INT8
constexpr int32_t kImageReadBgra8 = 2 | 4; ///< CL_BGRA of CL_UNORM_INT8: bytes 0 and 2 swapped
/// The readPath word of an image of format `f` and `elementSize` bytes per texel.
int32_t imageReadPath(const cl_image_format& f, size_t elementSize);

/// Fills `out` for a kernel argument bound to `image`.
void makeKernelImageDesc(const Mem& image, KernelImageDesc& out);

// How the GPU devices (GCN, NVIDIA) pass image and sampler arguments: one 64-bit word each,
// which the image library (builtins/cpu/image.cl) reads as plain memory. An image's word is the
// device address of its descriptor, wherever the device keeps it.

/// The descriptor of an image argument; all zero for an unset one.
KernelImageDesc imageArgDesc(const ArgValue& arg);
/// A sampler argument's word: its CLK_* bits (as clSetKernelArg stored them).
uint64_t samplerArgWord(const ArgValue& arg);

} // namespace duet::rt
