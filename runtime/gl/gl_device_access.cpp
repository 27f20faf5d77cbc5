// GL objects through the context's interop device: what registers how (buffers, images, pixel
// buffers for what the device cannot register), and acquire/release as GL work around the
// device's map, copies and unmap. The device does its part on the GPU; nothing here touches
// texels on the host.
#include "gl/gl_device_access.hpp"

#include "core/device.hpp"
#include "core/image.hpp"
#include "core/memory.hpp"
#include "gl/gl_functions.hpp"
#include "gl/gl_object.hpp"
#include "gl/gl_share.hpp"
#include "gl/gl_transfer.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>
#include <vector>

namespace duet::rt::gl {

namespace {

void logOnce(const std::string& message) {
    static std::mutex mutex;
    static std::set<std::string> said;
    {
        std::lock_guard lock(mutex);
        if (!said.insert(message).second)
            return;
    }
    logNote(message);
}

GlAccess accessOf(const Mem& m) {
    if (m.flags() & CL_MEM_READ_ONLY)
        return GlAccess::ReadOnly;
    if (m.flags() & CL_MEM_WRITE_ONLY)
        return GlAccess::WriteOnly;
    return GlAccess::ReadWrite;
}

/// The target the device registers `o` with, 0 when it cannot register it as an image.
unsigned imageTarget(const GlObject& o) {
    if (o.type == CL_GL_OBJECT_RENDERBUFFER)
        return GL_RENDERBUFFER;
    switch (o.target) {
    case GL_TEXTURE_2D:
    case GL_TEXTURE_RECTANGLE:
    case GL_TEXTURE_3D:
    case GL_TEXTURE_2D_ARRAY:
        return o.target;
    default:
        return o.target >= GL_TEXTURE_CUBE_MAP_POSITIVE_X &&
                       o.target <= GL_TEXTURE_CUBE_MAP_NEGATIVE_Z
                   ? GL_TEXTURE_CUBE_MAP
                   : 0;
    }
}

/// The cube face of `o` (GL's face order is CUDA's), else 0.
unsigned faceOf(const GlObject& o) {
    if (o.target >= GL_TEXTURE_CUBE_MAP_POSITIVE_X && o.target <= GL_TEXTURE_CUBE_MAP_NEGATIVE_Z)
        return o.target - GL_TEXTURE_CUBE_MAP_POSITIVE_X;
    return 0;
}

/// Formats CUDA registers as images: 1, 2 or 4 channels of 8/16/32-bit integers, 16/32-bit
/// floats, 8/16-bit unorm. Not sRGB, BGRA, depth or depth-stencil.
bool registrableFormat(const GlObject& o, unsigned internalFormat) {
    switch (o.transferFormat) {
    case GL_RED:
    case GL_RG:
    case GL_RGBA:
    case GL_RED_INTEGER:
    case GL_RG_INTEGER:
    case GL_RGBA_INTEGER:
        return internalFormat != GL_SRGB8_ALPHA8 && internalFormat != GL_BGRA;
    default:
        return false;
    }
}

/// Where `m`'s texels lie in its storage, and their size as a box of bytes.
Strided storageLayout(const Mem& m) {
    ImageBox b = imageBox(m);
    return {0, b.stride[1], b.stride[2]};
}
BoxSize texelBox(const Mem& m) {
    ImageBox b = imageBox(m);
    return {b.extent[0] * m.elementSize, b.extent[1], b.extent[2]};
}
/// The tight packing GL uses in a pixel buffer (GL_PACK_ALIGNMENT 1).
Strided packedLayout(const Mem& m) {
    BoxSize box = texelBox(m);
    return {0, box.width, box.width * box.rows};
}

const char* what(const GlObject& o) {
    switch (o.type) {
    case CL_GL_OBJECT_BUFFER:
        return "GL buffer ";
    case CL_GL_OBJECT_RENDERBUFFER:
        return "renderbuffer ";
    default:
        return "texture ";
    }
}

/// On the GL thread: a pixel buffer of `bytes` for `o`, registered with the device.
Result<std::unique_ptr<GlInterop::Resource>> pixelBufferFor(GlInterop& interop, GlObject& o,
                                                            size_t bytes, const std::string& name) {
    const GlFunctions& f = glFunctions();
    while (f.glGetError() != GL_NO_ERROR) {
    }
    GLuint pbo = 0;
    f.glGenBuffers(1, &pbo);
    f.glBindBuffer(GL_PIXEL_PACK_BUFFER, pbo);
    f.glBufferData(GL_PIXEL_PACK_BUFFER, GLsizeiptr(bytes), nullptr, GL_DYNAMIC_COPY);
    f.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    if (GLenum e = f.glGetError(); e != GL_NO_ERROR) {
        f.glDeleteBuffers(1, &pbo);
        return makeError(CL_OUT_OF_RESOURCES, name + ": no pixel buffer of " +
                                                  std::to_string(bytes) + " bytes (GL error " +
                                                  std::to_string(e) + ")");
    }
    auto r = interop.registerBuffer(pbo, GlAccess::ReadWrite, name + "'s pixel buffer");
    if (!r) {
        f.glDeleteBuffers(1, &pbo);
        return r;
    }
    o.pixelBuffer = pbo;
    return r;
}

} // namespace

bool attachInterop(Share& share, Mem& m, GlObject& o, unsigned internalFormat) {
    GlInterop* interop = share.interop();
    if (!interop)
        return false;
    const std::string name = what(o) + std::to_string(o.name);
    const std::string device = share.interopDevice()->info().name;
    if (o.type == CL_GL_OBJECT_BUFFER) {
        const char* env = std::getenv("DUET_GL_BUFFERS");
        if (env && std::string_view(env) == "copy") {
            logOnce("GL buffers are copied at acquire/release (DUET_GL_BUFFERS=copy), not "
                    "mapped by " +
                    device);
            return false;
        }
    }
    if (o.type == CL_GL_OBJECT_TEXTURE_BUFFER) {
        logOnce("buffer textures are copied at acquire/release on the host, not mapped by " +
                device);
        return false;
    }
    Result<std::unique_ptr<GlInterop::Resource>> made =
        makeError(CL_INVALID_GL_OBJECT, name + ": not registered");
    std::string how;
    share.run([&] {
        if (o.type == CL_GL_OBJECT_BUFFER) {
            made = interop->registerBuffer(o.name, accessOf(m), name);
            how = "GL buffers are mapped by " + device +
                  " at acquire (CUDA-GL interop): its "
                  "kernels use GL's memory";
            return;
        }
        if (unsigned target = imageTarget(o); target && registrableFormat(o, internalFormat)) {
            made = interop->registerImage(o.name, target, accessOf(m), name);
            how = "GL textures and renderbuffers of colour formats are mapped by " + device +
                  " (CUDA-GL interop) and copied to and from the CL image on the GPU";
            if (made) {
                o.resourceIsImage = true;
                return;
            }
            logOnce(made.error().message + "; it goes through a pixel buffer instead");
        }
        made = pixelBufferFor(*interop, o, packedSize(m), name);
        how = "GL textures and renderbuffers " + device + " cannot map (depth, sRGB, 1D, ...) " +
              "are packed by GL into a pixel buffer it maps (CUDA-GL interop), on the GPU";
    });
    if (!made) {
        o.resourceIsImage = false;
        logOnce(made.error().message + "; " + name + " is copied on the host at acquire/release");
        return false;
    }
    o.resource = std::move(*made);
    logOnce(how);
    return true;
}

void deletePixelBuffer(unsigned buffer) {
    if (!buffer)
        return;
    GLuint b = buffer;
    glFunctions().glDeleteBuffers(1, &b);
}

cl_int acquireThroughDevice(Share& share, std::span<const DeviceObject> objects, bool zeroCopy) {
    GlInterop& interop = *share.interop();
    const GlFunctions& f = glFunctions();
    // GL's part first: images that travel through pixel buffers are packed there (on the GPU).
    // A depth-stencil image is read also when CL only writes, to keep GL's stencil.
    auto needsGl = [](const DeviceObject& d) {
        return d.clReads || (d.clWrites && d.mem->format.image_channel_order == CL_DEPTH_STENCIL);
    };
    for (const DeviceObject& d : objects)
        if (d.gl->pixelBuffer && needsGl(d)) {
            f.glBindBuffer(GL_PIXEL_PACK_BUFFER, d.gl->pixelBuffer);
            readPacked(*d.mem, *d.gl, nullptr);
            f.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        }
    // One map for all: the driver orders it after the GL work above.
    std::vector<GlInterop::Resource*> resources;
    for (const DeviceObject& d : objects)
        resources.push_back(d.gl->resource.get());
    if (Status s = interop.map(resources); !s) {
        logOnce(s.error().message + "; this acquire copies on the host");
        for (const DeviceObject& d : objects)
            d.gl->viaInterop = false;
        return CL_SUCCESS;
    }
    cl_int status = CL_SUCCESS;
    bool copies = false; // queued on the device: host-side commands and other devices wait
    auto fail = [&](const Error& e) {
        logNote(e.message);
        status = std::min(status, e.code < 0 ? e.code : CL_OUT_OF_RESOURCES);
    };
    auto copied = [&](Status s) {
        copies = true;
        if (!s)
            fail(s.error());
    };
    for (const DeviceObject& d : objects) {
        Mem& m = *d.mem;
        GlObject& o = *d.gl;
        o.viaInterop = true;
        if (o.type == CL_GL_OBJECT_BUFFER || o.pixelBuffer) {
            auto mapped = interop.mappedPointer(*o.resource);
            if (!mapped) {
                fail(mapped.error());
                continue;
            }
            auto [p, size] = *mapped;
            if (o.pixelBuffer) {
                if (needsGl(d))
                    copied(interop.copyBox(m.data(), storageLayout(m), p, packedLayout(m),
                                           texelBox(m)));
                continue;
            }
            if (zeroCopy && size >= m.size()) {
                // Kernels on this device use GL's memory directly; they run on the stream the
                // map was ordered on.
                m.setStorage(p, true);
                o.zeroCopy = true;
            } else if (d.clReads) {
                // Another device's queue (its kernels need the host-visible copy), or a
                // buffer that shrank since clCreateFromGLBuffer: a copy on the GPU.
                copied(interop.copyBox(m.data(), {}, p, {}, {std::min(size, m.size())}));
            }
            continue;
        }
        if (needsGl(d))
            copied(interop.copyImage(*o.resource, faceOf(o), unsigned(o.level), m.data(),
                                     storageLayout(m), texelBox(m), false));
    }
    if (copies)
        if (Status s = interop.finish(); !s)
            fail(s.error());
    return status;
}

cl_int releaseThroughDevice(Share& share, std::span<const DeviceObject> objects, bool& glWork) {
    GlInterop& interop = *share.interop();
    const GlFunctions& f = glFunctions();
    cl_int status = CL_SUCCESS;
    auto fail = [&](const Error& e) {
        logNote(e.message);
        status = std::min(status, e.code < 0 ? e.code : CL_OUT_OF_RESOURCES);
    };
    std::vector<GlInterop::Resource*> resources;
    for (const DeviceObject& d : objects) {
        Mem& m = *d.mem;
        GlObject& o = *d.gl;
        resources.push_back(o.resource.get());
        if (o.zeroCopy) {
            m.setStorage(nullptr); // CL's writes are in GL's memory already
            o.zeroCopy = false;
            continue;
        }
        if (!d.clWrites)
            continue;
        if (o.type == CL_GL_OBJECT_BUFFER || o.pixelBuffer) {
            auto mapped = interop.mappedPointer(*o.resource);
            if (!mapped) {
                fail(mapped.error());
                continue;
            }
            auto [p, size] = *mapped;
            Status s =
                o.pixelBuffer
                    ? interop.copyBox(p, packedLayout(m), m.data(), storageLayout(m), texelBox(m))
                    : interop.copyBox(p, {}, m.data(), {}, {std::min(size, m.size())});
            if (!s)
                fail(s.error());
            continue;
        }
        if (Status s = interop.copyImage(*o.resource, faceOf(o), unsigned(o.level), m.data(),
                                         storageLayout(m), texelBox(m), true);
            !s)
            fail(s.error());
    }
    // The unmap is ordered after the copies on the device's stream, and GL's work after the
    // unmap after both: nothing to wait for here.
    if (Status s = interop.unmap(resources); !s)
        fail(s.error());
    // GL's part last: pixel buffers unpacked into their textures and renderbuffers.
    for (const DeviceObject& d : objects) {
        d.gl->viaInterop = false;
        if (d.gl->pixelBuffer && d.clWrites) {
            f.glBindBuffer(GL_PIXEL_UNPACK_BUFFER, d.gl->pixelBuffer);
            writePacked(*d.mem, *d.gl, nullptr);
            f.glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
            glWork = true;
        }
    }
    return status;
}

} // namespace duet::rt::gl
