// GL objects that the context's interop device reaches itself (core/gl_interop.hpp: CUDA-GL on
// the NVIDIA device): registration at creation, and the GL side of acquire and release around the
// device's maps and copies. GL thread, except attachInterop.
#pragma once

#include "core/result.hpp"

#include <CL/cl.h>

#include <span>

namespace duet::rt {
class Mem;
} // namespace duet::rt

namespace duet::rt::gl {

class GlObject;
class Share;

/// Registers GL object `o` of CL object `m` (being made, not handed out yet) with the share's
/// interop device: buffers as they are, images the device can register (colour formats of 2D,
/// rectangle, cube-face, 3D and 2D-array textures and renderbuffers) as images, other images
/// (depth, depth-stencil, sRGB, 1D) through a pixel buffer that GL packs and unpacks on the GPU.
/// Objects of at most DUET_GL_SHADOW_MAX bytes (default 8 MiB; 0: never) go instead through
/// device memory GL imports (GlObject::shadowBuffer) where the device exports memory and GL has
/// GL_EXT_memory_object_fd: GL copies replace the driver's map and unmap, whose fixed cost is
/// larger than such copies. True when `o` goes through the device from now on; false, with the
/// reason under DUET_LOG, when it stays on host copies (no interop device, DUET_GL_BUFFERS=copy for
/// buffers, buffer textures, a registration the driver refused). `internalFormat`: GL's, 0 for
/// buffers. Any thread but the GL thread (runs its GL work there).
bool attachInterop(Share& share, Mem& m, GlObject& o, unsigned internalFormat);

/// For clCreateFromGLBufferInDeviceMemoryDUET, on the application's thread with its GL context
/// current: `bytes` of memory the share's interop device exports become GL buffer `buffer`'s data
/// store (GL_EXT_memory_object_fd, imported in the application's context); the contents travel
/// through `staging` (`bytes` of host-visible memory the device reaches: the CL buffer's own
/// storage) and a copy on the device. `o` keeps the memory and the memory object
/// (GlObject::deviceStore). The buffer keeps its name and bindings; its storage is immutable from
/// now on. Errors: CL_INVALID_OPERATION (the device exports no memory, GL imports none: the buffer
/// then stays as it was), CL_OUT_OF_RESOURCES / CL_MEM_OBJECT_ALLOCATION_FAILURE (the device's
/// memory; after the move, the device's copy).
Status moveBufferToDevice(Share& share, GlObject& o, size_t bytes, char* staging);

/// One object of an acquire or release that goes through the device.
struct DeviceObject {
    Mem* mem;
    GlObject* gl;
    bool clReads, clWrites;
    /// GL's part of it (copies between the object and its shadow) is done in the application's
    /// context on its own thread (appSideAcquire/appSideRelease), not by the runtime's context.
    bool glByApp = false;
};

/// Whether GL's part of moving `o` through its shadow can run in the application's GL context,
/// current on the calling thread: a buffer (both ways) or a 2D texture level (release), with the
/// application's bindings put back as they were. Work of two GL
/// contexts orders on the GPU only through a switch between them, which costs about 150 us on
/// NVIDIA's GL; one context's work costs none. Not for GL ES.
bool appSideCapable(const Share& share, const GlObject& o, bool acquire);
/// On the application's thread, its context current, when appSideCapable: GL copies the buffer
/// into its shadow (acquire; the application's fence after it covers the copy) or the shadow
/// back into the object (release, once the device's part has run).
void appSideAcquire(const Mem& m, const GlObject& o);
void appSideRelease(const Mem& m, const GlObject& o);

/// Acquire, on the GL thread after the application's GL work: GL packs pixel buffers, the
/// device maps every registration at once, and the data reaches CL's storage on the device (a
/// buffer's storage is its mapping when `zeroCopy`: the acquiring queue is the interop
/// device's; otherwise a copy on the device). Objects left with viaInterop false (their map
/// failed; the reason goes to DUET_LOG) are for the caller to copy on the host. Returns the
/// command's status.
cl_int acquireThroughDevice(Share& share, std::span<const DeviceObject> objects, bool zeroCopy);

/// Release of the objects acquired through the device (viaInterop): storage back to the host
/// copy, CL's writes into GL's memory, one unmap, GL unpacks pixel buffers. `glWork` is set
/// when GL commands were issued that the release must finish. Returns the command's status.
cl_int releaseThroughDevice(Share& share, std::span<const DeviceObject> objects, bool& glWork);

/// Deletes a shadow buffer of attachInterop's and its memory object (0: none). GL thread.
void deleteShadow(unsigned buffer, unsigned memoryObject);

/// Deletes a pixel buffer of attachInterop's (0: none). GL thread.
void deletePixelBuffer(unsigned buffer);

} // namespace duet::rt::gl
