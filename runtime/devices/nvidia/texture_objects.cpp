// Images as CUDA texture objects: which images qualify (pitch-linear, or a CUDA array copy for 3D
// images and arrays) and their descriptors.
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

namespace {

/// Whether the image fits the GPU's CUDA arrays of its kind: 3D, 1D layered or 2D layered.
bool fitsArrayLimits(const KernelImageDesc& d, const TextureLimits& limits) {
    const uint64_t w = uint64_t(d.width), h = uint64_t(d.height);
    switch (d.imageType) {
    case CL_MEM_OBJECT_IMAGE3D:
        return w <= limits.max3d[0] && h <= limits.max3d[1] && uint64_t(d.depth) <= limits.max3d[2];
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        return w <= limits.maxLayered1d[0] && uint64_t(d.arraySize) <= limits.maxLayered1d[1];
    default: // CL_MEM_OBJECT_IMAGE2D_ARRAY
        return w <= limits.maxLayered2d[0] && h <= limits.maxLayered2d[1] &&
               uint64_t(d.arraySize) <= limits.maxLayered2d[2];
    }
}

/// The CUDA array copy of a 3D image or an image array (`s` has its format and class).
std::optional<TextureSource> arraySource(const KernelImageDesc& d, const TextureLimits& limits,
                                         TextureSource s, int format, unsigned channels,
                                         std::string* why) {
    if (!limits.max3d[0] || !limits.maxLayered1d[0] || !limits.maxLayered2d[0])
        return refuse(why, [&] { return std::string("the driver has no CUDA arrays for Duet"); });
    const bool oneD = d.imageType == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    const bool layered = d.imageType != CL_MEM_OBJECT_IMAGE3D;
    if (!fitsArrayLimits(d, limits))
        return refuse(why, [&] {
            return std::string("larger than the GPU's ") +
                   (layered ? "layered textures" : "3D textures") + " (" + std::to_string(d.width) +
                   "x" + std::to_string(d.height) + "x" +
                   std::to_string(layered ? d.arraySize : d.depth) + ")";
        });
    const uint64_t rowBytes = uint64_t(d.width) * uint64_t(d.elementSize);
    // The copy reads rows `pitch` apart and slices `pitch * rows` apart: a 1D array's layers are
    // its rows; elsewhere a slice must be a whole number of rows.
    const uint64_t pitch = oneD ? d.slicePitch : d.rowPitch;
    const uint64_t rows = oneD ? 1 : (d.rowPitch ? d.slicePitch / d.rowPitch : 0);
    if (!d.data || pitch < rowBytes ||
        (!oneD && (d.slicePitch % d.rowPitch || rows < uint64_t(d.height))))
        return refuse(why, [&] {
            return std::string("slice pitch ") + std::to_string(d.slicePitch) +
                   " not a whole number of rows of " + std::to_string(d.rowPitch) + " bytes";
        });
    ArrayCopy a;
    a.array.width = size_t(d.width);
    a.array.height = oneD ? 0 : size_t(d.height); // 0: 1D layers
    a.array.depth = size_t(layered ? d.arraySize : d.depth);
    a.array.format = format;
    a.array.numChannels = channels;
    a.array.flags = layered ? cu::kArray3dLayered : 0u;
    a.copy.srcMemoryType = cu::kMemoryTypeUnified;
    a.copy.srcDevice = uint64_t(reinterpret_cast<uintptr_t>(d.data));
    a.copy.srcPitch = size_t(pitch);
    a.copy.srcHeight = size_t(rows);
    a.copy.dstMemoryType = cu::kMemoryTypeArray;
    a.copy.widthInBytes = size_t(rowBytes);
    a.copy.height = oneD ? 1 : size_t(d.height);
    a.copy.depth = a.array.depth;
    s.resource.resType = cu::kResourceTypeArray;
    s.array = a;
    return s;
}

} // namespace

std::optional<TextureSource> textureSource(const KernelImageDesc& d, const TextureLimits& limits,
                                           std::string* why) {
    if (!limits.alignment || !limits.pitchAlignment)
        return refuse(why, [&] { return std::string("the GPU reports no texture alignment"); });
    const bool inArray = d.imageType == CL_MEM_OBJECT_IMAGE3D ||
                         d.imageType == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
                         d.imageType == CL_MEM_OBJECT_IMAGE2D_ARRAY;
    if (d.imageType != CL_MEM_OBJECT_IMAGE2D && d.imageType != CL_MEM_OBJECT_IMAGE1D && !inArray)
        return refuse(why, [&] { return std::string("1D image buffers are not textures"); });
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
    if (inArray)
        return arraySource(d, limits, s, format, channels, why);
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
