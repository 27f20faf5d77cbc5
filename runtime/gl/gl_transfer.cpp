// Copies between GL objects and CL storage (buffers, buffer textures, textures through
// glGetTexImage or a read framebuffer, renderbuffers through a blit; depth, depth-stencil and
// packed formats move in GL's own packing) and in-place mapping of GL buffers. GL thread only.
#include "gl/gl_transfer.hpp"

#include "core/image.hpp"
#include "core/memory.hpp"
#include "gl/gl_functions.hpp"
#include "gl/gl_object.hpp"
#include "gl/gl_share.hpp"

#include <algorithm>
#include <cstdint>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

namespace duet::rt::gl {

namespace {

/// Tightly packed texels of `m` <-> its storage (whose rows may be padded).
void packedToImage(const Mem& m, const std::vector<unsigned char>& packed, bool toImage,
                   std::vector<unsigned char>* out) {
    ImageBox b = imageBox(m);
    size_t row = b.extent[0] * m.elementSize;
    for (size_t z = 0; z < b.extent[2]; ++z)
        for (size_t y = 0; y < b.extent[1]; ++y) {
            char* img = m.data() + z * b.stride[2] + y * b.stride[1];
            size_t at = (z * b.extent[1] + y) * row;
            if (toImage)
                std::memcpy(img, packed.data() + at, row);
            else
                std::memcpy(out->data() + at, img, row);
        }
}

bool isDepth(GLenum format) {
    return format == GL_DEPTH_COMPONENT || format == GL_DEPTH_STENCIL;
}

/// The framebuffer attachment for data of client format `format`.
GLenum attachmentFor(GLenum format) {
    return format == GL_DEPTH_STENCIL     ? GL_DEPTH_STENCIL_ATTACHMENT
           : format == GL_DEPTH_COMPONENT ? GL_DEPTH_ATTACHMENT
                                          : GL_COLOR_ATTACHMENT0;
}

/// A framebuffer reading renderbuffer `rb` (on the GL thread).
GLuint readFramebuffer(const GlFunctions& f, GLuint rb, GLenum format) {
    GLuint fbo = 0;
    f.glGenFramebuffers(1, &fbo);
    f.glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
    f.glFramebufferRenderbuffer(GL_READ_FRAMEBUFFER, attachmentFor(format), GL_RENDERBUFFER, rb);
    return fbo;
}

/// OpenGL ES has no glGetTexImage: each layer of the shared level is attached to a read
/// framebuffer and read with glReadPixels, tightly packed into `out` (GL thread).
void readTextureThroughFramebuffer(const GlFunctions& f, const Mem& m, const GlObject& o,
                                   void* out) {
    ImageBox b = imageBox(m);
    const size_t layerBytes = b.extent[0] * b.extent[1] * m.elementSize;
    const bool layered = o.target == GL_TEXTURE_2D_ARRAY || o.target == GL_TEXTURE_3D;
    const GLenum attach = attachmentFor(o.transferFormat);
    GLuint fbo = 0;
    f.glGenFramebuffers(1, &fbo);
    f.glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
    for (size_t z = 0; z < b.extent[2]; ++z) {
        if (layered)
            f.glFramebufferTextureLayer(GL_READ_FRAMEBUFFER, attach, o.name, o.level, GLint(z));
        else
            f.glFramebufferTexture2D(GL_READ_FRAMEBUFFER, attach, o.target, o.name, o.level);
        // `out` may be an offset into a pixel pack buffer: arithmetic on the integer.
        f.glReadPixels(0, 0, GLsizei(b.extent[0]), GLsizei(b.extent[1]), o.transferFormat,
                       o.transferType,
                       reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(out) + z * layerBytes));
    }
    f.glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    f.glDeleteFramebuffers(1, &fbo);
}

/// The buffer object (and byte offset) behind a buffer texture, as of now (GL thread).
void textureBufferStore(const GlFunctions& f, GLuint texture, GLint& buffer, GLint& offset) {
    f.glBindTexture(GL_TEXTURE_BUFFER, texture);
    f.glGetTexLevelParameteriv(GL_TEXTURE_BUFFER, 0, GL_TEXTURE_BUFFER_DATA_STORE_BINDING, &buffer);
    f.glGetTexLevelParameteriv(GL_TEXTURE_BUFFER, 0, GL_TEXTURE_BUFFER_OFFSET, &offset);
    f.glBindTexture(GL_TEXTURE_BUFFER, 0);
}

/// Drops GL errors left by earlier calls, so that the next check sees only its own.
void clearGlErrors(const GlFunctions& f) {
    for (int i = 0; i < 16 && f.glGetError() != GL_NO_ERROR; ++i) {
    }
}

/// Reads `bytes` at `offset` of GL buffer `name` into `dst`: mapped, or where the buffer refuses
/// a map (immutable storage made without GL_MAP_READ_BIT), copied on the GPU into a scratch
/// buffer of the runtime's first (glCopyBufferSubData works on every buffer). False when GL
/// refuses both.
bool readGlBuffer(const GlFunctions& f, GLuint name, GLintptr offset, size_t bytes, void* dst) {
    clearGlErrors(f);
    f.glBindBuffer(GL_COPY_READ_BUFFER, name);
    void* p = f.glMapBufferRange(GL_COPY_READ_BUFFER, offset, GLsizeiptr(bytes), GL_MAP_READ_BIT);
    if (p) {
        std::memcpy(dst, p, bytes);
        f.glUnmapBuffer(GL_COPY_READ_BUFFER);
    } else if (f.glCopyBufferSubData) {
        clearGlErrors(f);
        GLuint scratch = 0;
        f.glGenBuffers(1, &scratch);
        f.glBindBuffer(GL_COPY_WRITE_BUFFER, scratch);
        f.glBufferData(GL_COPY_WRITE_BUFFER, GLsizeiptr(bytes), nullptr, GL_STREAM_READ);
        f.glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, offset, 0,
                              GLsizeiptr(bytes));
        p = f.glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, GLsizeiptr(bytes), GL_MAP_READ_BIT);
        if (p) {
            std::memcpy(dst, p, bytes);
            f.glUnmapBuffer(GL_COPY_WRITE_BUFFER);
        }
        f.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        f.glDeleteBuffers(1, &scratch);
    }
    f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
    return p != nullptr;
}

/// Writes `bytes` from `src` at `offset` of GL buffer `name`: glBufferSubData, or where the
/// buffer refuses it (immutable storage made without GL_DYNAMIC_STORAGE_BIT), through a scratch
/// buffer and glCopyBufferSubData. False when GL refuses both.
bool writeGlBuffer(const GlFunctions& f, GLuint name, GLintptr offset, size_t bytes,
                   const void* src) {
    clearGlErrors(f);
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, name);
    f.glBufferSubData(GL_COPY_WRITE_BUFFER, offset, GLsizeiptr(bytes), src);
    bool ok = f.glGetError() == GL_NO_ERROR;
    if (!ok && f.glCopyBufferSubData) {
        GLuint scratch = 0;
        f.glGenBuffers(1, &scratch);
        f.glBindBuffer(GL_COPY_READ_BUFFER, scratch);
        f.glBufferData(GL_COPY_READ_BUFFER, GLsizeiptr(bytes), src, GL_STREAM_DRAW);
        f.glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, offset,
                              GLsizeiptr(bytes));
        ok = f.glGetError() == GL_NO_ERROR;
        f.glBindBuffer(GL_COPY_READ_BUFFER, 0);
        f.glDeleteBuffers(1, &scratch);
    }
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    return ok;
}

} // namespace

size_t packedSize(const Mem& m) {
    ImageBox b = imageBox(m);
    return b.extent[0] * b.extent[1] * b.extent[2] * m.elementSize;
}

unsigned bindTarget(unsigned target) {
    if (target >= GL_TEXTURE_CUBE_MAP_POSITIVE_X && target <= GL_TEXTURE_CUBE_MAP_NEGATIVE_Z)
        return GL_TEXTURE_CUBE_MAP;
    return target;
}

cl_int copyFromGl(Mem& m, const GlObject& o) {
    const auto& f = glFunctions();
    if (o.type == CL_GL_OBJECT_BUFFER)
        return readGlBuffer(f, o.name, 0, m.size(), m.data()) ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
    if (o.type == CL_GL_OBJECT_TEXTURE_BUFFER) {
        GLint buffer = 0, offset = 0;
        textureBufferStore(f, o.name, buffer, offset);
        return readGlBuffer(f, GLuint(buffer), offset, packedSize(m), m.data())
                   ? CL_SUCCESS
                   : CL_OUT_OF_RESOURCES;
    }
    std::vector<unsigned char> packed(packedSize(m));
    readPacked(m, o, packed.data());
    packedToImage(m, packed, true, nullptr);
    return f.glGetError() == GL_NO_ERROR ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
}

void readPacked(const Mem& m, const GlObject& o, void* dst) {
    const auto& f = glFunctions();
    f.glPixelStorei(GL_PACK_ALIGNMENT, 1);
    if (o.type == CL_GL_OBJECT_RENDERBUFFER) {
        GLuint fbo = readFramebuffer(f, o.name, o.transferFormat);
        f.glReadPixels(0, 0, GLsizei(m.desc.image_width), GLsizei(m.desc.image_height),
                       o.transferFormat, o.transferType, dst);
        f.glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        f.glDeleteFramebuffers(1, &fbo);
    } else if (o.share->gles()) {
        readTextureThroughFramebuffer(f, m, o, dst);
    } else {
        f.glBindTexture(bindTarget(o.target), o.name);
        f.glGetTexImage(o.target, o.level, o.transferFormat, o.transferType, dst);
        f.glBindTexture(bindTarget(o.target), 0);
    }
}

cl_int copyToGl(Mem& m, const GlObject& o) {
    const auto& f = glFunctions();
    if (o.type == CL_GL_OBJECT_BUFFER)
        return writeGlBuffer(f, o.name, 0, m.size(), m.data()) ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
    if (o.type == CL_GL_OBJECT_TEXTURE_BUFFER) {
        GLint buffer = 0, offset = 0;
        textureBufferStore(f, o.name, buffer, offset);
        return writeGlBuffer(f, GLuint(buffer), offset, packedSize(m), m.data())
                   ? CL_SUCCESS
                   : CL_OUT_OF_RESOURCES;
    }
    std::vector<unsigned char> packed(packedSize(m));
    packedToImage(m, packed, false, &packed);
    writePacked(m, o, packed.data());
    return CL_SUCCESS;
}

void writePacked(const Mem& m, const GlObject& o, const void* src) {
    const auto& f = glFunctions();
    f.glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    GLsizei w = GLsizei(m.desc.image_width);
    GLsizei h = GLsizei(std::max<size_t>(1, m.desc.image_height));
    if (o.type == CL_GL_OBJECT_RENDERBUFFER) {
        // Through a scratch texture of the same format, blitted into the renderbuffer.
        GLint internal = 0;
        f.glBindRenderbuffer(GL_RENDERBUFFER, o.name);
        f.glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_INTERNAL_FORMAT, &internal);
        f.glBindRenderbuffer(GL_RENDERBUFFER, 0);
        GLuint tex = 0, fbos[2] = {0, 0};
        f.glGenTextures(1, &tex);
        f.glBindTexture(GL_TEXTURE_2D, tex);
        f.glTexImage2D(GL_TEXTURE_2D, 0, internal, w, h, 0, o.transferFormat, o.transferType, src);
        f.glBindTexture(GL_TEXTURE_2D, 0);
        bool depth = isDepth(o.transferFormat);
        GLenum attach = o.transferFormat == GL_DEPTH_STENCIL ? GL_DEPTH_STENCIL_ATTACHMENT
                        : depth                              ? GL_DEPTH_ATTACHMENT
                                                             : GL_COLOR_ATTACHMENT0;
        f.glGenFramebuffers(2, fbos);
        f.glBindFramebuffer(GL_READ_FRAMEBUFFER, fbos[0]);
        f.glFramebufferTexture2D(GL_READ_FRAMEBUFFER, attach, GL_TEXTURE_2D, tex, 0);
        f.glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fbos[1]);
        f.glFramebufferRenderbuffer(GL_DRAW_FRAMEBUFFER, attach, GL_RENDERBUFFER, o.name);
        GLbitfield mask = o.transferFormat == GL_DEPTH_STENCIL
                              ? GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT
                          : depth ? GL_DEPTH_BUFFER_BIT
                                  : GL_COLOR_BUFFER_BIT;
        f.glBlitFramebuffer(0, 0, w, h, 0, 0, w, h, mask, GL_NEAREST);
        f.glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        f.glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
        f.glDeleteFramebuffers(2, fbos);
        f.glDeleteTextures(1, &tex);
        return;
    }
    GLenum bt = bindTarget(o.target);
    f.glBindTexture(bt, o.name);
    switch (m.type()) {
    case CL_MEM_OBJECT_IMAGE1D:
        f.glTexSubImage1D(o.target, o.level, 0, w, o.transferFormat, o.transferType, src);
        break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        f.glTexSubImage2D(o.target, o.level, 0, 0, w, GLsizei(m.desc.image_array_size),
                          o.transferFormat, o.transferType, src);
        break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        f.glTexSubImage3D(o.target, o.level, 0, 0, 0, w, h, GLsizei(m.desc.image_array_size),
                          o.transferFormat, o.transferType, src);
        break;
    case CL_MEM_OBJECT_IMAGE3D:
        f.glTexSubImage3D(o.target, o.level, 0, 0, 0, w, h, GLsizei(m.desc.image_depth),
                          o.transferFormat, o.transferType, src);
        break;
    default:
        f.glTexSubImage2D(o.target, o.level, 0, 0, w, h, o.transferFormat, o.transferType, src);
    }
    f.glBindTexture(bt, 0);
}

bool mapInPlace(Mem& m, GlObject& o, bool clReads, bool clWrites) {
    const auto& f = glFunctions();
    // GL forbids unsynchronised maps for reading. Where CL only writes, the acquire's wait
    // for the application's GL work (or its glFinish) is all the synchronisation needed.
    GLbitfield access = (clReads ? GL_MAP_READ_BIT : 0) | (clWrites ? GL_MAP_WRITE_BIT : 0);
    if (!clReads)
        access |= GL_MAP_UNSYNCHRONIZED_BIT;
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, o.name);
    GLint size = 0;
    f.glGetBufferParameteriv(GL_COPY_WRITE_BUFFER, GL_BUFFER_SIZE, &size);
    void* p = size_t(size) >= m.size()
                  ? f.glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, GLsizeiptr(m.size()), access)
                  : nullptr;
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    if (!p) {
        while (f.glGetError() != GL_NO_ERROR) {
        }
        static std::atomic<bool> said{false};
        if (!said.exchange(true))
            logNote("GL buffer " + std::to_string(o.name) +
                    (size_t(size) < m.size() ? " shrank since clCreateFromGLBuffer"
                                             : " could not be mapped") +
                    "; this acquire copies instead");
        return false;
    }
    m.setStorage(static_cast<char*>(p));
    o.mapped = true;
    return true;
}

void unmapInPlace(Mem& m, GlObject& o) {
    m.setStorage(nullptr);
    unmapBuffer(o.name);
    o.mapped = false;
}

void unmapBuffer(unsigned name) {
    const auto& f = glFunctions();
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, name);
    f.glUnmapBuffer(GL_COPY_WRITE_BUFFER);
    f.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
}

} // namespace duet::rt::gl
