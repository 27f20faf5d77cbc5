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

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
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

/// The largest object that goes through imported device memory (DUET_GL_SHADOW_MAX bytes;
/// default 8 MiB, 0 turns the path off). Measured on an H100: the
/// driver's map + unmap pair costs ~500 us per acquire + release whatever the size, GL copies run
/// at ~84 GB/s: an 8 MiB buffer's pair costs ~240 us through copies, a 16 MiB one about as much
/// as maps.
size_t shadowLimit() {
    static const size_t limit = [] {
        const char* env = std::getenv("DUET_GL_SHADOW_MAX");
        return env && *env ? size_t(std::strtoull(env, nullptr, 0)) : size_t(8) << 20;
    }();
    return limit;
}

/// On the GL thread: whether the runtime's context has GL_EXT_memory_object_fd (asked once per
/// share; a failed import turns it off for the share).
bool importsMemory(Share& share) {
    if (share.importsMemory >= 0)
        return share.importsMemory == 1;
    const GlFunctions& f = glFunctions();
    bool has = false;
    GLint count = 0;
    if (f.glCreateMemoryObjectsEXT && f.glImportMemoryFdEXT && f.glBufferStorageMemEXT &&
        f.glDeleteMemoryObjectsEXT && f.glCopyBufferSubData && f.glGetStringi && f.glGetIntegerv) {
        f.glGetIntegerv(GL_NUM_EXTENSIONS, &count);
        for (GLint i = 0; i < count && !has; ++i)
            if (auto* e = f.glGetStringi(GL_EXTENSIONS, GLuint(i)))
                has =
                    std::string_view(reinterpret_cast<const char*>(e)) == "GL_EXT_memory_object_fd";
    }
    while (f.glGetError() != GL_NO_ERROR) {
    }
    share.importsMemory = has ? 1 : 0;
    return has;
}

/// In the current GL context: memory object `mo` made from file descriptor `fd` of `size` bytes
/// (a dedicated import; GL owns the descriptor when it took it). GL's error, GL_NO_ERROR when
/// imported.
GLenum importFd(int fd, size_t size, GLuint& mo) {
    const GlFunctions& f = glFunctions();
    f.glCreateMemoryObjectsEXT(1, &mo);
    // CUDA's allocation is one object of its own: GL maps it right only when told so.
    const GLint dedicated = GL_TRUE;
    if (f.glMemoryObjectParameterivEXT)
        f.glMemoryObjectParameterivEXT(mo, kGlDedicatedMemoryObject, &dedicated);
    f.glImportMemoryFdEXT(mo, size, kGlHandleTypeOpaqueFd, fd);
    return f.glGetError();
}

/// importFd of `mem`'s descriptor, which is GL's from then on when imported.
GLenum importExported(GlInterop::ExportedMemory& mem, GLuint& mo) {
    GLenum error = importFd(mem.fd, mem.size, mo);
    if (error == GL_NO_ERROR)
        mem.fd = -1;
    return error;
}

/// On the GL thread: `o` through device memory GL imports, when the device exports some and GL
/// takes it. False (with `why`) when not; the caller registers `o` instead.
bool attachShadow(Share& share, GlInterop& interop, GlObject& o, size_t bytes,
                  const std::string& name, std::string& why) {
    auto made = interop.exportMemory(bytes, name);
    if (!made) {
        why = made.error().message;
        share.importsMemory = 0; // the device cannot: don't ask for every object
        return false;
    }
    GlInterop::ExportedMemory& mem = **made;
    const GlFunctions& f = glFunctions();
    while (f.glGetError() != GL_NO_ERROR) {
    }
    GLuint mo = 0;
    GLenum error = importExported(mem, mo);
    GLuint buffer = 0;
    if (error == GL_NO_ERROR) {
        f.glGenBuffers(1, &buffer);
        f.glBindBuffer(GL_COPY_WRITE_BUFFER, buffer);
        f.glBufferStorageMemEXT(GL_COPY_WRITE_BUFFER, GLsizeiptr(bytes), mo, 0);
        f.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        error = f.glGetError();
    }
    if (error != GL_NO_ERROR) {
        deleteShadow(buffer, mo);
        why = name + ": GL did not take the device's memory (GL_EXT_memory_object_fd, GL error " +
              std::to_string(error) + ")";
        share.importsMemory = 0;
        return false;
    }
    // The application's context uses the buffer too (appSideAcquire/appSideRelease): GL makes
    // an object's new state visible to another context once the commands that made it have
    // completed.
    f.glFinish();
    o.shadowBuffer = buffer;
    o.memoryObject = mo;
    o.resource = std::move(*made);
    return true;
}

GlInterop::ExportedMemory& shadowOf(GlObject& o) {
    return static_cast<GlInterop::ExportedMemory&>(*o.resource);
}

/// On the GL thread: a GL copy of a buffer's first `bytes` between two buffers.
void copyBuffer(unsigned from, unsigned to, size_t bytes) {
    const GlFunctions& f = glFunctions();
    f.glBindBuffer(GL_COPY_READ_BUFFER, from);
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, to);
    f.glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, GLsizeiptr(bytes));
    f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
}

/// On the GL thread: the bytes of GL buffer `buffer` (0 when it has no store).
size_t glBufferSize(unsigned buffer) {
    const GlFunctions& f = glFunctions();
    GLint size = 0;
    f.glBindBuffer(GL_COPY_READ_BUFFER, buffer);
    f.glGetBufferParameteriv(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &size);
    f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
    return size > 0 ? size_t(size) : 0;
}

} // namespace

bool appSideCapable(const Share& share, const GlObject& o, bool acquire) {
    const GlFunctions& f = glFunctions();
    if (!o.shadowBuffer || share.gles() || !f.glGetNamedBufferParameteriv)
        return false;
    if (o.type == CL_GL_OBJECT_BUFFER)
        return true;
    return !acquire && o.type == CL_GL_OBJECT_TEXTURE2D && o.target == GL_TEXTURE_2D &&
           f.glTextureSubImage2D;
}

namespace {

size_t namedBufferSize(unsigned buffer) {
    GLint size = 0;
    glFunctions().glGetNamedBufferParameteriv(buffer, GL_BUFFER_SIZE, &size);
    return size > 0 ? size_t(size) : 0;
}

/// In the application's context: a copy of a buffer's first bytes between `from` and `to` through
/// the copy binding points, which are put back as they were. Binding, not direct state access:
/// the shadow's storage was set in the runtime's context, and GL makes such a change visible in
/// another context only once that context binds the object again (seen on the H100: after
/// buffer names had been reused, the application's DSA copies went to the old storage).
void copyInAppContext(const Mem& m, unsigned from, unsigned to, unsigned app) {
    const GlFunctions& f = glFunctions();
    GLint read = 0, write = 0;
    f.glGetIntegerv(GL_COPY_READ_BUFFER_BINDING, &read);
    f.glGetIntegerv(GL_COPY_WRITE_BUFFER_BINDING, &write);
    f.glBindBuffer(GL_COPY_READ_BUFFER, from);
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, to);
    f.glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0,
                          GLsizeiptr(std::min(m.size(), namedBufferSize(app))));
    f.glBindBuffer(GL_COPY_READ_BUFFER, GLuint(read));
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, GLuint(write));
}

} // namespace

void appSideAcquire(const Mem& m, const GlObject& o) {
    copyInAppContext(m, o.name, o.shadowBuffer, o.name);
}

void appSideRelease(const Mem& m, const GlObject& o) {
    const GlFunctions& f = glFunctions();
    if (o.type == CL_GL_OBJECT_BUFFER) {
        copyInAppContext(m, o.shadowBuffer, o.name, o.name);
        return;
    }
    // The unpack state is the application's: kept, changed for the copy, put back.
    const GLenum names[] = {GL_PIXEL_UNPACK_BUFFER_BINDING, GL_UNPACK_ALIGNMENT,
                            GL_UNPACK_ROW_LENGTH, GL_UNPACK_SKIP_ROWS, GL_UNPACK_SKIP_PIXELS};
    GLint saved[5] = {};
    for (int i = 0; i < 5; ++i)
        f.glGetIntegerv(names[i], &saved[i]);
    f.glBindBuffer(GL_PIXEL_UNPACK_BUFFER, o.shadowBuffer);
    f.glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    f.glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    f.glPixelStorei(GL_UNPACK_SKIP_ROWS, 0);
    f.glPixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
    f.glTextureSubImage2D(o.name, o.level, 0, 0, GLsizei(m.desc.image_width),
                          GLsizei(m.desc.image_height), o.transferFormat, o.transferType, nullptr);
    f.glBindBuffer(GL_PIXEL_UNPACK_BUFFER, GLuint(saved[0]));
    for (int i = 1; i < 5; ++i)
        f.glPixelStorei(names[i], saved[i]);
}

namespace {

/// In the current GL context: whether GL takes `mem` as a buffer's store, asked of a scratch
/// buffer over a second import (a duplicate of the descriptor), both deleted again, so that the
/// application's buffer is touched only once GL is known to take the memory: Mesa refuses
/// foreign memory at glBufferStorageMemEXT (GL_OUT_OF_MEMORY) and leaves that buffer immutable
/// with no store. GL's error, GL_NO_ERROR when it took it. The bindings are put back.
GLenum probeImport(const GlInterop::ExportedMemory& mem, size_t bytes) {
    const GlFunctions& f = glFunctions();
    const int fd = dup(mem.fd);
    if (fd < 0)
        return GL_OUT_OF_MEMORY;
    GLuint mo = 0, buffer = 0;
    GLenum error = importFd(fd, mem.size, mo);
    if (error != GL_NO_ERROR) {
        close(fd);
    } else {
        GLint write = 0;
        f.glGetIntegerv(GL_COPY_WRITE_BUFFER_BINDING, &write);
        f.glGenBuffers(1, &buffer);
        f.glBindBuffer(GL_COPY_WRITE_BUFFER, buffer);
        f.glBufferStorageMemEXT(GL_COPY_WRITE_BUFFER, GLsizeiptr(bytes), mo, 0);
        error = f.glGetError();
        f.glBindBuffer(GL_COPY_WRITE_BUFFER, GLuint(write));
        f.glDeleteBuffers(1, &buffer);
    }
    if (mo)
        f.glDeleteMemoryObjectsEXT(1, &mo);
    return error;
}

} // namespace

Status moveBufferToDevice(Share& share, GlObject& o, size_t bytes, char* staging) {
    GlInterop& interop = *share.interop();
    const std::string name = "GL buffer " + std::to_string(o.name);
    bool imports = false;
    share.run([&] { imports = importsMemory(share); }); // the same GL as the application's
    if (!imports)
        return makeError(CL_INVALID_OPERATION,
                         name + ": GL imports no memory of " + share.interopDevice()->info().name +
                             " (no GL_EXT_memory_object_fd, or it refused the device's memory)");
    auto made = interop.exportMemory(bytes, name);
    if (!made)
        return made.error();
    GlInterop::ExportedMemory& mem = **made;
    // In the application's context: the buffer's store is replaced where its bindings (vertex
    // arrays) live, so they follow it as they follow glBufferData. Its contents go through
    // `staging` (host-visible memory the device reaches) and the device, not through a second
    // GL buffer over the memory, which is a dedicated allocation (EXT_external_objects warns about
    // aliasing one). The application's pending GL errors are cleared, so that GL's answer here is
    // about these calls.
    const GlFunctions& f = glFunctions();
    while (f.glGetError() != GL_NO_ERROR) {
    }
    GLint read = 0;
    f.glGetIntegerv(GL_COPY_READ_BUFFER_BINDING, &read);
    if (GLenum error = probeImport(mem, bytes); error != GL_NO_ERROR) {
        // As a refused shadow does: later objects of the share do not ask again.
        share.run([&] { share.importsMemory = 0; });
        return makeError(CL_INVALID_OPERATION,
                         name + ": GL did not take memory of " +
                             share.interopDevice()->info().name +
                             " as a buffer's store (GL_EXT_memory_object_fd, GL error " +
                             std::to_string(error) + ")");
    }
    f.glBindBuffer(GL_COPY_READ_BUFFER, o.name);
    if (const void* p =
            f.glMapBufferRange(GL_COPY_READ_BUFFER, 0, GLsizeiptr(bytes), GL_MAP_READ_BIT)) {
        std::memcpy(staging, p, bytes);
        f.glUnmapBuffer(GL_COPY_READ_BUFFER);
    }
    GLuint mo = 0;
    GLenum error = f.glGetError();
    if (error == GL_NO_ERROR)
        error = importExported(mem, mo);
    if (error == GL_NO_ERROR) {
        f.glBufferStorageMemEXT(GL_COPY_READ_BUFFER, GLsizeiptr(bytes), mo, 0);
        error = f.glGetError();
    }
    f.glBindBuffer(GL_COPY_READ_BUFFER, GLuint(read));
    f.glFlush(); // the runtime's thread waits for the application's fences, not this context
    if (error != GL_NO_ERROR) {
        if (mo)
            f.glDeleteMemoryObjectsEXT(1, &mo);
        return makeError(CL_INVALID_OPERATION,
                         name + ": GL did not take memory of " +
                             share.interopDevice()->info().name +
                             " as the buffer's store (GL_EXT_memory_object_fd, GL error " +
                             std::to_string(error) + ")");
    }
    // GL's buffer is the device's memory now, still empty: the contents follow on the device,
    // done before the application's next GL command can read them.
    Status copied = interop.copyBox(mem.address, {}, staging, {}, {bytes});
    if (copied)
        copied = interop.finish();
    o.memoryObject = mo; // deleted with the CL object, as a shadow's (deleteShadow)
    o.resource = std::move(*made);
    o.deviceStore = true;
    return copied;
}

void deleteShadow(unsigned buffer, unsigned memoryObject) {
    const GlFunctions& f = glFunctions();
    // The runtime's context finishes before it deletes: without this, on NVIDIA's GL, the next
    // shadow (given the same buffer name, in the next CL context) was copied to and from by the
    // application's context in the freed import's memory, not in its own (seen on the H100 after
    // 16 MiB shadows were freed: later 1 MiB VBOs came back unchanged). Deleting at most once per
    // CL object, so the wait costs nothing per frame.
    if (buffer || memoryObject)
        f.glFinish();
    if (buffer) {
        GLuint b = buffer;
        f.glDeleteBuffers(1, &b);
    }
    if (memoryObject && f.glDeleteMemoryObjectsEXT) {
        GLuint mo = memoryObject;
        f.glDeleteMemoryObjectsEXT(1, &mo);
    }
    if (buffer || memoryObject)
        f.glFlush(); // the deletes reach GL before the device frees the memory
}

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
        const size_t bytes = o.type == CL_GL_OBJECT_BUFFER ? m.size() : packedSize(m);
        if (bytes <= shadowLimit() && importsMemory(share)) {
            std::string why;
            if (attachShadow(share, *interop, o, bytes, name, why)) {
                how = "GL objects of up to " + std::to_string(shadowLimit()) +
                      " bytes are copied by GL into and out of memory of " + device +
                      " that GL imports (GL_EXT_memory_object_fd), on the GPU";
                return;
            }
            logOnce(why + "; GL objects are registered with " + device + " instead");
        }
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
    if (o.shadowBuffer) {
        logOnce(how);
        return true;
    }
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
    bool shadowed = false;
    for (const DeviceObject& d : objects) {
        GlObject& o = *d.gl;
        if (o.shadowBuffer && d.glByApp)
            continue; // copied by the application's context; its fence has signalled
        if (o.shadowBuffer && needsGl(d)) {
            if (o.type == CL_GL_OBJECT_BUFFER) {
                copyBuffer(o.name, o.shadowBuffer, std::min(d.mem->size(), glBufferSize(o.name)));
            } else {
                f.glBindBuffer(GL_PIXEL_PACK_BUFFER, o.shadowBuffer);
                readPacked(*d.mem, o, nullptr);
                f.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
            }
            shadowed = true;
        } else if (o.pixelBuffer && needsGl(d)) {
            f.glBindBuffer(GL_PIXEL_PACK_BUFFER, o.pixelBuffer);
            readPacked(*d.mem, o, nullptr);
            f.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        }
    }
    // The device reads what GL wrote into its memory: nothing orders the two but this wait.
    if (shadowed) {
        GLsync fence = f.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        while (f.glClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, 1000000000) ==
               GL_TIMEOUT_EXPIRED) {
        }
        f.glDeleteSync(fence);
    }
    // One map for all the registered ones: the driver orders it after the GL work above.
    std::vector<GlInterop::Resource*> resources;
    for (const DeviceObject& d : objects)
        if (!d.gl->shadowBuffer && !d.gl->deviceStore)
            resources.push_back(d.gl->resource.get());
    if (Status s = resources.empty() ? Status::success() : interop.map(resources); !s) {
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
        if (o.shadowBuffer || o.deviceStore) {
            char* p = shadowOf(o).address;
            if (o.type != CL_GL_OBJECT_BUFFER) {
                if (needsGl(d))
                    copied(interop.copyBox(m.data(), storageLayout(m), p, packedLayout(m),
                                           texelBox(m)));
            } else if (zeroCopy) {
                m.setStorage(p, true); // kernels of this device use it where it is
                o.zeroCopy = true;
            } else if (d.clReads) {
                copied(interop.copyBox(m.data(), {}, p, {}, {m.size()}));
            }
            continue;
        }
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
    bool shadowWrites = false; // GL copies out of imported memory once the device is done
    for (const DeviceObject& d : objects) {
        Mem& m = *d.mem;
        GlObject& o = *d.gl;
        if (o.shadowBuffer || o.deviceStore) {
            // GL copies out of a shadow once the device is done; a store of the device's own
            // is GL's when the release has run (after the queue's kernels), unless copied here.
            shadowWrites |= d.clWrites && (o.shadowBuffer || !o.zeroCopy);
            if (o.zeroCopy) {
                m.setStorage(nullptr);
                o.zeroCopy = false;
            } else if (d.clWrites) {
                char* p = shadowOf(o).address;
                Status s = o.type == CL_GL_OBJECT_BUFFER
                               ? interop.copyBox(p, {}, m.data(), {}, {m.size()})
                               : interop.copyBox(p, packedLayout(m), m.data(), storageLayout(m),
                                                 texelBox(m));
                if (!s)
                    fail(s.error());
            }
            continue;
        }
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
    // unmap after both: nothing to wait for here. Imported memory has no such order: GL copies
    // from it once the device's copies (and the kernels before the release) have finished.
    if (!resources.empty())
        if (Status s = interop.unmap(resources); !s)
            fail(s.error());
    if (shadowWrites)
        if (Status s = interop.finish(); !s)
            fail(s.error());
    // GL's part last: pixel buffers unpacked into their textures and renderbuffers.
    for (const DeviceObject& d : objects) {
        d.gl->viaInterop = false;
        GlObject& o = *d.gl;
        if (o.shadowBuffer && d.glByApp) {
            o.appCopyDue = d.clWrites; // the application's context copies once this has run
            continue;
        }
        if (o.shadowBuffer && d.clWrites) {
            if (o.type == CL_GL_OBJECT_BUFFER) {
                copyBuffer(o.shadowBuffer, o.name, std::min(d.mem->size(), glBufferSize(o.name)));
            } else {
                f.glBindBuffer(GL_PIXEL_UNPACK_BUFFER, o.shadowBuffer);
                writePacked(*d.mem, o, nullptr);
                f.glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
            }
            glWork = true;
            continue;
        }
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
