// What a device may do for cl_khr_gl_sharing beyond host copies: say whether it runs an
// application's GL context, and reach GL objects' memory itself (CUDA–GL interop on the NVIDIA
// device). Core knows no GL: GL names and enums are plain integers here, and runtime/gl decides
// when each hook runs.
#pragma once

#include "core/result.hpp"
#include "core/transfer.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace duet::rt {

/// What runtime/gl could find out about the device behind an application's GL context, on the
/// thread that asked (clGetGLContextInfoKHR, clCreateContext). Empty fields are unknown.
struct GlContextFacts {
    std::string vendor;   ///< GL_VENDOR, else the EGL display's EGL_VENDOR or GLX's server vendor
    std::string renderer; ///< GL_RENDERER (only when the context was current)
    /// EGL_NV_device_cuda: the CUDA ordinal of the EGL display's device; -1 when unknown.
    int cudaDevice = -1;
    /// GL_EXT_memory_object: GL_DEVICE_UUID_EXT of each device the context runs on.
    std::vector<std::array<uint8_t, 16>> uuids;
    /// The application's GL context is current on the calling thread, so a device may ask its
    /// driver about "the current GL context" (cuGLGetDevices).
    bool current = false;
    /// "NVIDIA H200/PCIe/SSE2 (NVIDIA Corporation)", or what is known, for messages.
    std::string describe() const;
};

/// How a device can share a GL context's objects.
struct GlAffinity {
    enum class Kind {
        Copies,  ///< through host copies (or Mesa's in-place mappings); the default
        Interop, ///< it runs the GL context and reaches its objects itself (glInterop())
        Foreign, ///< it cannot share with this GL context (another GPU runs it)
    };
    Kind kind = Kind::Copies;
    /// Copies: why not Interop, when the device could have (for DUET_LOG); Foreign: why not.
    std::string why;
};

/// Access a CL object made from a GL object has: what the driver may skip.
enum class GlAccess { ReadWrite, ReadOnly, WriteOnly };

/// A device's access to GL objects' memory, for a device whose glAffinity is Interop. Every
/// call runs on runtime/gl's GL thread, where the runtime's GL context (in the application's
/// share group) is current: graphics-interop drivers want their calls there. Copies are
/// queued on the device's stream; finish() waits for them. Thread-safe like the device.
class GlInterop {
public:
    /// A GL object registered with the device (once, at clCreateFromGL*). Destroying it
    /// unmaps (if mapped) and unregisters it: on the GL thread too.
    class Resource {
    public:
        virtual ~Resource() = default;
    };

    /// Device memory that GL can import as a buffer's storage (GL_EXT_memory_object_fd): the
    /// device reaches it at a fixed address with no map, and GL copies between it and the
    /// application's objects. Destroying it frees the memory: after GL let go of it.
    class ExportedMemory : public Resource {
    public:
        char* address = nullptr; ///< the device's address of the memory (unified addressing)
        size_t size = 0;         ///< bytes, at least those asked for
        /// The opaque file descriptor for glImportMemoryFdEXT; the caller owns it (a
        /// successful import hands it to GL).
        int fd = -1;
    };

    virtual ~GlInterop() = default;

    /// `bytes` of device memory exported for GL to import. Errors: CL_INVALID_OPERATION when the
    /// driver cannot export memory (the reason for DUET_LOG), CL_OUT_OF_RESOURCES.
    virtual Result<std::unique_ptr<ExportedMemory>> exportMemory(size_t bytes,
                                                                 const std::string& what) {
        (void)bytes;
        return makeError(CL_INVALID_OPERATION, what + ": the device exports no memory to GL");
    }

    /// Registers GL buffer object `buffer` (the application's, or a pixel buffer of the
    /// runtime's). `what` names it in messages.
    virtual Result<std::unique_ptr<Resource>> registerBuffer(unsigned buffer, GlAccess access,
                                                             const std::string& what) = 0;
    /// Registers texture or renderbuffer `name` of GL target `target` (GL_TEXTURE_2D,
    /// GL_TEXTURE_RECTANGLE, GL_TEXTURE_CUBE_MAP, GL_TEXTURE_3D, GL_TEXTURE_2D_ARRAY,
    /// GL_RENDERBUFFER). Fails for internal formats the driver cannot register (depth, sRGB).
    virtual Result<std::unique_ptr<Resource>>
    registerImage(unsigned name, unsigned target, GlAccess access, const std::string& what) = 0;
    /// Maps `resources` for the device (one driver call): GL work issued before on this
    /// thread's GL context completes before the device's work after it.
    virtual Status map(std::span<Resource* const> resources) = 0;
    /// Unmaps them after the device's work issued so far: GL work issued after sees it.
    virtual Status unmap(std::span<Resource* const> resources) = 0;
    /// A mapped buffer's device address and size (the address may change at every map).
    virtual Result<std::pair<char*, size_t>> mappedPointer(Resource& buffer) = 0;
    /// Copies between a box of device-addressable memory `linear` (at `at`) and mip level
    /// `level` of a mapped image (`face`: the cube map face, else 0): `box.width` bytes of
    /// `box.rows` rows of `box.slices` slices (a 3D texture's slices or an array texture's
    /// layers), from texel (0, 0, 0).
    virtual Status copyImage(Resource& image, unsigned face, unsigned level, char* linear,
                             const Strided& at, const BoxSize& box, bool toImage) = 0;
    /// Copies a box between two ranges of device-addressable memory, on the device.
    virtual Status copyBox(char* dst, const Strided& dstAt, const char* src, const Strided& srcAt,
                           const BoxSize& box) = 0;
    /// Waits for the copies queued so far.
    virtual Status finish() = 0;
};

} // namespace duet::rt
