// Images as CUDA pitch-linear texture objects: which images qualify and their descriptors.
#include "devices/nvidia/texture_objects.hpp"

namespace duet::rt::nvidia_device {

namespace cu = nvidia::cu;

unsigned samplerKey(uint32_t bits) {
    // OpenCL C's CLK_* bits (core/memory.cpp's Sampler::kernelValue): normalized coordinates 0x1,
    // addressing 0xE (none 0, clamp to edge 2, clamp 4, repeat 6, mirrored repeat 8), linear
    // filtering 0x20.
    const uint32_t mode = bits & 0xE;
    const unsigned addressing = mode <= 2 ? 0 : mode / 2 - 1;
    return (bits & 0x1 ? 1u : 0u) | addressing << 1 | (bits & 0x20 ? 8u : 0u);
}

namespace {

/// The CUDA channel format and the class of what reads return, for a channel type.
bool channelFormat(int32_t type, int& format, TextureClass& cls) {
    switch (type) {
    case CL_UNORM_INT8:
        format = cu::kFormatUnsignedInt8, cls = kFloatTexture;
        return true;
    case CL_UNORM_INT16:
        format = cu::kFormatUnsignedInt16, cls = kFloatTexture;
        return true;
    case CL_SNORM_INT8:
        format = cu::kFormatSignedInt8, cls = kFloatTexture;
        return true;
    case CL_SNORM_INT16:
        format = cu::kFormatSignedInt16, cls = kFloatTexture;
        return true;
    case CL_HALF_FLOAT:
        format = cu::kFormatHalf, cls = kFloatTexture;
        return true;
    case CL_FLOAT:
        format = cu::kFormatFloat, cls = kFloatTexture;
        return true;
    case CL_SIGNED_INT8:
        format = cu::kFormatSignedInt8, cls = kSignedTexture;
        return true;
    case CL_SIGNED_INT16:
        format = cu::kFormatSignedInt16, cls = kSignedTexture;
        return true;
    case CL_SIGNED_INT32:
        format = cu::kFormatSignedInt32, cls = kSignedTexture;
        return true;
    case CL_UNSIGNED_INT8:
        format = cu::kFormatUnsignedInt8, cls = kUnsignedTexture;
        return true;
    case CL_UNSIGNED_INT16:
        format = cu::kFormatUnsignedInt16, cls = kUnsignedTexture;
        return true;
    case CL_UNSIGNED_INT32:
        format = cu::kFormatUnsignedInt32, cls = kUnsignedTexture;
        return true;
    default:
        return false;
    }
}

/// The swizzle and channel count of a channel order (sRGB ones set `srgb`).
bool channelOrder(int32_t order, TextureSwizzle& swizzle, unsigned& channels, bool& srgb) {
    srgb = order == CL_sRGBA || order == CL_sBGRA;
    switch (order) {
    case CL_R:
    case CL_DEPTH:
        swizzle = kSwizzleR, channels = 1;
        return true;
    case CL_RG:
        swizzle = kSwizzleRg, channels = 2;
        return true;
    case CL_RGBA:
    case CL_sRGBA:
        swizzle = kSwizzleRgba, channels = 4;
        return true;
    case CL_BGRA:
    case CL_sBGRA:
        swizzle = kSwizzleBgra, channels = 4;
        return true;
    default:
        return false;
    }
}

/// No texture source; the reason (made only when asked for: this runs at every launch) in `why`.
template <class Reason> std::optional<TextureSource> refuse(std::string* why, Reason reason) {
    if (why)
        *why = reason();
    return std::nullopt;
}

} // namespace

std::optional<TextureSource> textureSource(const KernelImageDesc& d, const TextureLimits& limits,
                                           std::string* why) {
    if (!limits.alignment || !limits.pitchAlignment)
        return refuse(why, [&] { return std::string("the GPU reports no texture alignment"); });
    if (d.imageType != CL_MEM_OBJECT_IMAGE2D && d.imageType != CL_MEM_OBJECT_IMAGE1D)
        return refuse(
            why, [&] { return std::string("only 1D and 2D images are pitch-linear textures"); });
    TextureSource s;
    int format = 0;
    unsigned channels = 0;
    if (!channelFormat(d.channelType, format, s.cls) ||
        !channelOrder(d.channelOrder, s.swizzle, channels, s.srgb))
        return refuse(why,
                      [&] { return std::string("a channel order or type CUDA textures lack"); });
    if (s.srgb && d.channelType != CL_UNORM_INT8)
        return refuse(why, [&] { return std::string("sRGB textures are 8-bit"); });
    if (s.srgb)
        s.swizzle = s.swizzle == kSwizzleBgra ? kSwizzleSbgra : kSwizzleSrgba;
    s.filterable = !s.srgb && d.channelType != CL_SNORM_INT8;
    const uint64_t address = uint64_t(reinterpret_cast<uintptr_t>(d.data));
    const uint64_t rowBytes = uint64_t(d.width) * uint64_t(d.elementSize);
    uint64_t pitch = d.imageType == CL_MEM_OBJECT_IMAGE2D
                         ? d.rowPitch
                         // One row: any pitch that covers it (nothing below it is read).
                         : (rowBytes + limits.pitchAlignment - 1) / limits.pitchAlignment *
                               limits.pitchAlignment;
    if (!address || address % limits.alignment)
        return refuse(why, [&] {
            return std::string("storage not aligned to " + std::to_string(limits.alignment) +
                               " bytes");
        });
    if (pitch % limits.pitchAlignment)
        return refuse(why, [&] {
            return std::string("row pitch " + std::to_string(pitch) + " not a multiple of " +
                               std::to_string(limits.pitchAlignment));
        });
    if (uint64_t(d.width) > limits.maxWidth || uint64_t(d.height) > limits.maxHeight ||
        pitch > limits.maxPitch)
        return refuse(why,
                      [&] { return std::string("larger than the GPU's pitch-linear textures"); });
    s.resource.resType = cu::kResourceTypePitch2d;
    s.resource.res.pitch2D.devPtr = address;
    s.resource.res.pitch2D.format = format;
    s.resource.res.pitch2D.numChannels = channels;
    s.resource.res.pitch2D.width = size_t(d.width);
    s.resource.res.pitch2D.height = d.imageType == CL_MEM_OBJECT_IMAGE2D ? size_t(d.height) : 1;
    s.resource.res.pitch2D.pitchInBytes = size_t(pitch);
    return s;
}

bool textureDesc(const TextureSource& s, unsigned key, cu::TextureDesc& out) {
    const bool normalized = key & 1, linear = key & 8;
    const unsigned addressing = key >> 1 & 3;
    if (key >= kSamplerKeys || (!normalized && addressing >= 2) ||
        (linear && (s.cls != kFloatTexture || !s.filterable)))
        return false;
    out = cu::TextureDesc{};
    static constexpr int kModes[4] = {cu::kAddressClamp, cu::kAddressBorder, cu::kAddressWrap,
                                      cu::kAddressMirror};
    for (int& mode : out.addressMode)
        mode = kModes[addressing];
    out.filterMode = linear ? cu::kFilterLinear : cu::kFilterPoint;
    // The border colour is 0 in every channel the texture has; the library completes the rest
    // as the channel order says, so CL_R's border reads (0, 0, 0, 1) as OpenCL requires.
    // sRGB bytes are read as integers and decoded by the image library.
    out.flags = (normalized ? cu::kTrsfNormalizedCoordinates : 0u) |
                (s.cls == kFloatTexture && !s.srgb ? 0u : cu::kTrsfReadAsInteger);
    return true;
}

} // namespace duet::rt::nvidia_device
