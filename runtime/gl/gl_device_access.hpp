// GL objects that the context's interop device reaches itself (core/gl_interop.hpp: CUDA-GL on
// the NVIDIA device): registration at creation, and the GL side of acquire and release around the
// device's maps and copies. GL thread, except attachInterop.
#pragma once

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
/// True when `o` goes through the device from now on; false, with the reason under DUET_LOG,
/// when it stays on host copies (no interop device, DUET_GL_BUFFERS=copy for buffers, buffer
/// textures, a registration the driver refused). `internalFormat`: GL's, 0 for buffers. Any
/// thread but the GL thread (runs its GL work there).
bool attachInterop(Share& share, Mem& m, GlObject& o, unsigned internalFormat);

/// One object of an acquire or release that goes through the device.
struct DeviceObject {
    Mem* mem;
    GlObject* gl;
    bool clReads, clWrites;
};

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

/// Deletes a pixel buffer of attachInterop's (0: none). GL thread.
void deletePixelBuffer(unsigned buffer);

} // namespace duet::rt::gl
