// Which images the NVIDIA device samples through CUDA texture objects, and with which CUDA
// resource and texture descriptors (no driver calls: the executor creates the objects).
#pragma once

#include "core/image.hpp"
#include "devices/nvidia/cuda_driver.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace duet::rt::nvidia_device {

/// One texture object per sampler key: normalized coordinates (bit 0), the addressing mode
/// (bits 1-2: none or clamp to edge, clamp, repeat, mirrored repeat) and linear filtering
/// (bit 3). builtins/nvidia/texture.h computes the same key from a sampler's CLK_* bits.
inline constexpr unsigned kSamplerKeys = 16;
unsigned samplerKey(uint32_t clkBits);

/// What a texture read returns, as the image library checks it against the builtin called
/// (a read_imagef of an integer image, say, stays in software: its result is the stored bits).
enum TextureClass : uint32_t {
    kNoTexture = 0,       ///< the image is not sampled through textures
    kFloatTexture = 1,    ///< normalized integer, half and float channels: read_imagef
    kSignedTexture = 2,   ///< signed integer channels: read_imagei
    kUnsignedTexture = 3, ///< unsigned integer channels: read_imageui
};
/// How the image library completes the four values a texture read returns.
enum TextureSwizzle : uint32_t {
    kSwizzleRgba = 0, ///< four channels as stored
    kSwizzleBgra = 1, ///< four channels, red and blue exchanged
    kSwizzleR = 2,    ///< one channel: (x, 0, 0, 1) (CL_R, CL_DEPTH)
    kSwizzleRg = 3,   ///< two channels: (x, y, 0, 1)
    /// sRGB (CL_sRGBA, CL_sBGRA): the stored bytes, read as integers (nearest only) and decoded
    /// by the image library's table. CUDA's own sRGB decoding is off by up to 2e-3, beyond what
    /// OpenCL allows.
    kSwizzleSrgba = 4,
    kSwizzleSbgra = 5,
};

/// What an image argument's word points at on the NVIDIA device: core's descriptor, then what
/// the image library needs to sample it through textures (builtins/nvidia/texture.h reads the
/// fields at these offsets). A texture handle of 0: that sampler reads texels in software.
struct DeviceImageDesc {
    KernelImageDesc image;
    uint32_t textureClass = kNoTexture; ///< offset 64
    uint32_t swizzle = kSwizzleRgba;    ///< offset 68
    uint64_t reserved = 0;
    uint64_t textures[kSamplerKeys] = {}; ///< offset 80, by samplerKey
};
static_assert(sizeof(DeviceImageDesc) == 208, "layout shared with builtins/nvidia/texture.h");

/// The GPU's limits on pitch-linear textures (CU_DEVICE_ATTRIBUTE_TEXTURE_* and
/// MAXIMUM_TEXTURE2D_LINEAR_*); all 0: no textures. The array limits (MAXIMUM_TEXTURE3D_*,
/// MAXIMUM_TEXTURE1D_LAYERED_*, MAXIMUM_TEXTURE2D_LAYERED_*), all 0 where the driver has no CUDA
/// arrays for Duet: 3D images and image arrays then read in software.
struct TextureLimits {
    uint64_t alignment = 0, pitchAlignment = 0;
    uint64_t maxWidth = 0, maxHeight = 0, maxPitch = 0;
    uint64_t max3d[3] = {};        ///< width, height, depth
    uint64_t maxLayered1d[2] = {}; ///< width, layers
    uint64_t maxLayered2d[3] = {}; ///< width, height, layers
};

/// How an image's linear storage is copied into the CUDA array its textures read: the array's
/// descriptor and the source's layout for cuMemcpy3D (the executor fills in the array).
struct ArrayCopy {
    nvidia::cu::Array3DDescriptor array{};
    nvidia::cu::Memcpy3D copy{}; ///< unified source at the image's data, destination an array
};

/// How an image is sampled through textures: its pitch-linear resource, class and swizzle.
struct TextureSource {
    nvidia::cu::ResourceDesc resource{};
    TextureClass cls = kNoTexture;
    TextureSwizzle swizzle = kSwizzleRgba;
    bool srgb = false;
    /// Whether linear filtering goes through the texture: not for sRGB (decoded after the
    /// fetch) nor 8-bit signed normalized channels (the hardware's result is off by up to 0.07
    /// there, seen on an H200 with the Khronos CTS).
    bool filterable = true;
    /// Set for 3D images and 1D/2D arrays: the textures read a CUDA array (resource.res.array,
    /// which the executor makes) holding a copy of the linear storage, made as this says.
    std::optional<ArrayCopy> array;
};

/// The texture source of an image argument, or nothing (`why` says why), for images of one,
/// two or four 8/16/32-bit channels or half/float: 1D and 2D images (2D depth too) whose
/// storage and row pitch meet the GPU's alignment, as pitch-linear textures; 3D images and 1D
/// and 2D arrays (2D depth arrays too) within the GPU's array limits, whose slice pitch is a
/// whole number of rows, through a CUDA array (a layered one for arrays). 1D image buffers and
/// packed formats stay with the image library's software reads.
std::optional<TextureSource> textureSource(const KernelImageDesc& image,
                                           const TextureLimits& limits, std::string* why = nullptr);

/// The texture descriptor for sampler key `key`, or false where that sampler gets no texture
/// object: repeat and mirrored repeat without normalized coordinates (undefined in OpenCL,
/// refused by CUDA), linear filtering of integer channels (undefined in OpenCL) and of what
/// TextureSource::filterable excludes.
bool textureDesc(const TextureSource& source, unsigned key, nvidia::cu::TextureDesc& out);

} // namespace duet::rt::nvidia_device
