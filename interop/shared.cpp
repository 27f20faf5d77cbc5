// Shared objects: CL views of GL buffers, textures and renderbuffers, either created by
// cl_khr_gl_sharing or kept as CL copies that acquire/release move through host memory.
#include "duet/interop/interop.hpp"

#include "duet/cl_error_name.hpp"
#include "duet/interop/cl_ext_duet.h"

#include <glad/gl.h>

#include <cstdio>
#include <string>
#include <vector>

namespace duet::interop {

SharedObject::~SharedObject() {
    if (m_mem)
        clReleaseMemObject(m_mem);
}

namespace {

// A CL object made by clCreateFromGL*: acquire/release is all the synchronisation there is.
class SharedByKhr final : public SharedObject {
public:
    explicit SharedByKhr(cl_mem mem, bool deviceMemory = false) : m_deviceMemory(deviceMemory) {
        m_mem = mem;
    }
    bool hostCopy() const override { return false; }
    bool inDeviceMemory() const override { return m_deviceMemory; }

private:
    bool m_deviceMemory;
};

class HostCopyBuffer final : public SharedObject {
public:
    HostCopyBuffer(cl_context context, cl_command_queue queue, GLuint buffer, cl_mem_flags flags,
                   bool glWrites)
        : m_buffer(buffer), m_flags(flags), m_glWrites(glWrites) {
        GLint previous = 0;
        glGetIntegerv(GL_COPY_READ_BUFFER, &previous);
        for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) { // earlier errors
        }
        glBindBuffer(GL_COPY_READ_BUFFER, buffer);
        GLint size = 0;
        glGetBufferParameteriv(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &size);
        glBindBuffer(GL_COPY_READ_BUFFER, GLuint(previous));
        if (glGetError() != GL_NO_ERROR || size <= 0)
            throw Error("interop: GL buffer " + std::to_string(buffer) +
                            " is not a buffer object with storage",
                        CL_INVALID_GL_OBJECT);
        m_size = size_t(size);
        cl_int err;
        m_mem = clCreateBuffer(context, flags, m_size, nullptr, &err);
        check(err, "interop: clCreateBuffer for a GL buffer");
        copyToCl(queue);
    }
    void upload(cl_command_queue queue) override {
        // Write-only: CL overwrites it. GL never writes: the CL copy is still what GL holds.
        if ((m_flags & CL_MEM_WRITE_ONLY) || !m_glWrites)
            return;
        copyToCl(queue);
    }
    void download(cl_command_queue queue) override {
        if (m_flags & CL_MEM_READ_ONLY)
            return;
        cl_int err;
        void* p = clEnqueueMapBuffer(queue, m_mem, CL_TRUE, CL_MAP_READ, 0, m_size, 0, nullptr,
                                     nullptr, &err);
        check(err, "interop: clEnqueueMapBuffer (host copy to GL)");
        GLint previous = 0;
        glGetIntegerv(GL_COPY_WRITE_BUFFER, &previous);
        glBindBuffer(GL_COPY_WRITE_BUFFER, m_buffer);
        for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) { // earlier errors
        }
        glBufferSubData(GL_COPY_WRITE_BUFFER, 0, GLsizeiptr(m_size), p);
        bool written = glGetError() == GL_NO_ERROR;
        if (!written) {
            // Immutable storage made without GL_DYNAMIC_STORAGE_BIT refuses glBufferSubData;
            // a copy on the GPU from a scratch buffer works on every buffer.
            GLint previousRead = 0;
            glGetIntegerv(GL_COPY_READ_BUFFER, &previousRead);
            GLuint scratch = 0;
            glGenBuffers(1, &scratch);
            glBindBuffer(GL_COPY_READ_BUFFER, scratch);
            glBufferData(GL_COPY_READ_BUFFER, GLsizeiptr(m_size), p, GL_STREAM_DRAW);
            glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0,
                                GLsizeiptr(m_size));
            written = glGetError() == GL_NO_ERROR;
            glBindBuffer(GL_COPY_READ_BUFFER, GLuint(previousRead));
            glDeleteBuffers(1, &scratch);
        }
        glBindBuffer(GL_COPY_WRITE_BUFFER, GLuint(previous));
        check(clEnqueueUnmapMemObject(queue, m_mem, p, 0, nullptr, nullptr),
              "interop: clEnqueueUnmapMemObject");
        if (!written)
            throw Error("interop: GL refused the host copy into buffer " + std::to_string(m_buffer),
                        CL_INVALID_GL_OBJECT);
    }

private:
    void copyToCl(cl_command_queue queue) {
        m_staging.resize(m_size);
        GLint previous = 0;
        glGetIntegerv(GL_COPY_READ_BUFFER, &previous);
        glBindBuffer(GL_COPY_READ_BUFFER, m_buffer);
        glGetBufferSubData(GL_COPY_READ_BUFFER, 0, GLsizeiptr(m_size), m_staging.data());
        glBindBuffer(GL_COPY_READ_BUFFER, GLuint(previous));
        check(clEnqueueWriteBuffer(queue, m_mem, CL_TRUE, 0, m_size, m_staging.data(), 0, nullptr,
                                   nullptr),
              "interop: clEnqueueWriteBuffer (host copy from GL)");
    }
    GLuint m_buffer;
    cl_mem_flags m_flags;
    bool m_glWrites;
    size_t m_size = 0;
    std::vector<unsigned char> m_staging;
};

// How one GL internal format looks to CL and to glGetTexImage/glTexSubImage2D.
struct FormatMap {
    GLenum internal;
    cl_image_format cl;
    GLenum glFormat, glType;
    size_t bytes;
    bool depth;
};

const FormatMap* findFormat(GLint internal) {
    static const FormatMap formats[] = {
        {GL_RGBA8, {CL_RGBA, CL_UNORM_INT8}, GL_RGBA, GL_UNSIGNED_BYTE, 4, false},
        {GL_SRGB8_ALPHA8, {CL_sRGBA, CL_UNORM_INT8}, GL_RGBA, GL_UNSIGNED_BYTE, 4, false},
        {GL_RGBA16F, {CL_RGBA, CL_HALF_FLOAT}, GL_RGBA, GL_HALF_FLOAT, 8, false},
        {GL_RGBA32F, {CL_RGBA, CL_FLOAT}, GL_RGBA, GL_FLOAT, 16, false},
        {GL_R32F, {CL_R, CL_FLOAT}, GL_RED, GL_FLOAT, 4, false},
        {GL_RG32F, {CL_RG, CL_FLOAT}, GL_RG, GL_FLOAT, 8, false},
        {GL_DEPTH_COMPONENT32F, {CL_DEPTH, CL_FLOAT}, GL_DEPTH_COMPONENT, GL_FLOAT, 4, true},
        {GL_DEPTH_COMPONENT16,
         {CL_DEPTH, CL_UNORM_INT16},
         GL_DEPTH_COMPONENT,
         GL_UNSIGNED_SHORT,
         2,
         true},
    };
    for (const FormatMap& f : formats)
        if (GLint(f.internal) == internal)
            return &f;
    return nullptr;
}

// A texture level or renderbuffer mirrored by a CL image.
class HostCopyImage final : public SharedObject {
public:
    // target 0 means `name` is a renderbuffer.
    HostCopyImage(cl_context context, cl_command_queue queue, GLenum target, GLint level,
                  GLuint name, cl_mem_flags flags)
        : m_target(target), m_level(level), m_name(name), m_flags(flags) {
        GLint internal = 0;
        if (target) {
            GLint previous = 0;
            glGetIntegerv(bindingOf(target), &previous);
            glBindTexture(target, name);
            glGetTexLevelParameteriv(target, level, GL_TEXTURE_WIDTH, &m_width);
            glGetTexLevelParameteriv(target, level, GL_TEXTURE_HEIGHT, &m_height);
            glGetTexLevelParameteriv(target, level, GL_TEXTURE_INTERNAL_FORMAT, &internal);
            glBindTexture(target, GLuint(previous));
        } else {
            GLint previous = 0;
            glGetIntegerv(GL_RENDERBUFFER_BINDING, &previous);
            glBindRenderbuffer(GL_RENDERBUFFER, name);
            glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_WIDTH, &m_width);
            glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_HEIGHT, &m_height);
            glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_INTERNAL_FORMAT,
                                         &internal);
            glBindRenderbuffer(GL_RENDERBUFFER, GLuint(previous));
        }
        std::string what = target ? "texture " : "renderbuffer ";
        if (glGetError() != GL_NO_ERROR || m_width <= 0 || m_height <= 0)
            throw Error("interop: GL " + what + std::to_string(name) + " (level " +
                            std::to_string(level) + ") has no storage",
                        target ? CL_INVALID_MIP_LEVEL : CL_INVALID_GL_OBJECT);
        m_format = findFormat(internal);
        if (!m_format)
            throw Error("interop: GL " + what + std::to_string(name) + " has internal format 0x" +
                            hex(internal) + ", which has no CL image format here",
                        CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
        if (!deviceSupports(context, flags, m_format->cl))
            throw Error("interop: GL " + what + std::to_string(name) + " has internal format 0x" +
                            hex(internal) + ", whose CL image format this device does not support",
                        CL_IMAGE_FORMAT_NOT_SUPPORTED);
        cl_image_desc desc{};
        desc.image_type = CL_MEM_OBJECT_IMAGE2D;
        desc.image_width = size_t(m_width);
        desc.image_height = size_t(m_height);
        cl_int err;
        m_mem = clCreateImage(context, flags, &m_format->cl, &desc, nullptr, &err);
        check(err, "interop: clCreateImage for a GL image");
        m_staging.resize(size_t(m_width) * size_t(m_height) * m_format->bytes);
        copyToCl(queue);
    }
    void upload(cl_command_queue queue) override {
        if (!(m_flags & CL_MEM_WRITE_ONLY))
            copyToCl(queue);
    }
    void download(cl_command_queue queue) override {
        if (m_flags & CL_MEM_READ_ONLY)
            return;
        size_t origin[3] = {0, 0, 0}, region[3] = {size_t(m_width), size_t(m_height), 1};
        check(clEnqueueReadImage(queue, m_mem, CL_TRUE, origin, region, 0, 0, m_staging.data(), 0,
                                 nullptr, nullptr),
              "interop: clEnqueueReadImage (host copy to GL)");
        GLint align = 4;
        glGetIntegerv(GL_UNPACK_ALIGNMENT, &align);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        if (m_target) {
            GLint previous = 0;
            glGetIntegerv(bindingOf(m_target), &previous);
            glBindTexture(m_target, m_name);
            glTexSubImage2D(m_target, m_level, 0, 0, m_width, m_height, m_format->glFormat,
                            m_format->glType, m_staging.data());
            glBindTexture(m_target, GLuint(previous));
        } else {
            // A renderbuffer takes no pixel uploads: fill a texture and blit it across.
            GLuint tex = 0, fbo[2] = {0, 0};
            GLint prevTex = 0, prevRead = 0, prevDraw = 0;
            glGetIntegerv(GL_TEXTURE_BINDING_2D, &prevTex);
            glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &prevRead);
            glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &prevDraw);
            glGenTextures(1, &tex);
            glBindTexture(GL_TEXTURE_2D, tex);
            glTexImage2D(GL_TEXTURE_2D, 0, GLint(m_format->internal), m_width, m_height, 0,
                         m_format->glFormat, m_format->glType, m_staging.data());
            glGenFramebuffers(2, fbo);
            GLenum attachment = m_format->depth ? GL_DEPTH_ATTACHMENT : GL_COLOR_ATTACHMENT0;
            glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo[0]);
            glFramebufferTexture2D(GL_READ_FRAMEBUFFER, attachment, GL_TEXTURE_2D, tex, 0);
            glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fbo[1]);
            glFramebufferRenderbuffer(GL_DRAW_FRAMEBUFFER, attachment, GL_RENDERBUFFER, m_name);
            glBlitFramebuffer(0, 0, m_width, m_height, 0, 0, m_width, m_height,
                              m_format->depth ? GL_DEPTH_BUFFER_BIT : GL_COLOR_BUFFER_BIT,
                              GL_NEAREST);
            glBindFramebuffer(GL_READ_FRAMEBUFFER, GLuint(prevRead));
            glBindFramebuffer(GL_DRAW_FRAMEBUFFER, GLuint(prevDraw));
            glDeleteFramebuffers(2, fbo);
            glBindTexture(GL_TEXTURE_2D, GLuint(prevTex));
            glDeleteTextures(1, &tex);
        }
        glPixelStorei(GL_UNPACK_ALIGNMENT, align);
    }

private:
    static GLenum bindingOf(GLenum target) {
        return target == GL_TEXTURE_RECTANGLE ? GL_TEXTURE_BINDING_RECTANGLE
                                              : GL_TEXTURE_BINDING_2D;
    }
    // Asked first: implementations disagree on what clCreateImage returns for an unsupported one.
    static bool deviceSupports(cl_context context, cl_mem_flags flags, cl_image_format format) {
        cl_uint count = 0;
        if (clGetSupportedImageFormats(context, flags, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &count) !=
            CL_SUCCESS)
            return false;
        std::vector<cl_image_format> formats(count);
        clGetSupportedImageFormats(context, flags, CL_MEM_OBJECT_IMAGE2D, count, formats.data(),
                                   nullptr);
        for (const cl_image_format& f : formats)
            if (f.image_channel_order == format.image_channel_order &&
                f.image_channel_data_type == format.image_channel_data_type)
                return true;
        return false;
    }
    static std::string hex(GLint v) {
        char text[16];
        std::snprintf(text, sizeof text, "%X", unsigned(v));
        return text;
    }
    void copyToCl(cl_command_queue queue) {
        GLint align = 4;
        glGetIntegerv(GL_PACK_ALIGNMENT, &align);
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        if (m_target) {
            GLint previous = 0;
            glGetIntegerv(bindingOf(m_target), &previous);
            glBindTexture(m_target, m_name);
            glGetTexImage(m_target, m_level, m_format->glFormat, m_format->glType,
                          m_staging.data());
            glBindTexture(m_target, GLuint(previous));
        } else {
            GLuint fbo = 0;
            GLint prevRead = 0;
            glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &prevRead);
            glGenFramebuffers(1, &fbo);
            glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
            glFramebufferRenderbuffer(GL_READ_FRAMEBUFFER,
                                      m_format->depth ? GL_DEPTH_ATTACHMENT : GL_COLOR_ATTACHMENT0,
                                      GL_RENDERBUFFER, m_name);
            glReadPixels(0, 0, m_width, m_height, m_format->glFormat, m_format->glType,
                         m_staging.data());
            glBindFramebuffer(GL_READ_FRAMEBUFFER, GLuint(prevRead));
            glDeleteFramebuffers(1, &fbo);
        }
        glPixelStorei(GL_PACK_ALIGNMENT, align);
        size_t origin[3] = {0, 0, 0}, region[3] = {size_t(m_width), size_t(m_height), 1};
        check(clEnqueueWriteImage(queue, m_mem, CL_TRUE, origin, region, 0, 0, m_staging.data(), 0,
                                  nullptr, nullptr),
              "interop: clEnqueueWriteImage (host copy from GL)");
    }
    GLenum m_target;
    GLint m_level;
    GLuint m_name;
    cl_mem_flags m_flags;
    GLint m_width = 0, m_height = 0;
    const FormatMap* m_format = nullptr;
    std::vector<unsigned char> m_staging;
};

} // namespace

void Context::reportImageFallback(const char* api) {
    if (m_imageFallbackReported)
        return;
    m_imageFallbackReported = true;
    std::fprintf(stderr,
                 "interop: %s shares GL buffers but %s says CL_INVALID_OPERATION; using host "
                 "copies for GL textures and renderbuffers\n",
                 m_platformName.c_str(), api);
}

/// The buffer moved into the device's memory (cl_duet_gl_device_memory), null where the device
/// lacks the extension or the move failed (reported once).
cl_mem Context::bufferInDeviceMemory(unsigned buffer, cl_mem_flags flags) {
    if (m_deviceMemory < 0) {
        size_t size = 0;
        std::string extensions;
        if (clGetDeviceInfo(m_device, CL_DEVICE_EXTENSIONS, 0, nullptr, &size) == CL_SUCCESS) {
            extensions.resize(size);
            clGetDeviceInfo(m_device, CL_DEVICE_EXTENSIONS, size, extensions.data(), nullptr);
            extensions.resize(extensions.find('\0') == std::string::npos ? extensions.size()
                                                                         : extensions.find('\0'));
        }
        m_deviceMemory =
            (" " + extensions + " ").find(" " CL_DUET_GL_DEVICE_MEMORY_EXTENSION_NAME " ") !=
            std::string::npos;
    }
    auto create = m_deviceMemory == 1
                      ? reinterpret_cast<clCreateFromGLBufferInDeviceMemoryDUET_fn>(
                            clGetExtensionFunctionAddressForPlatform(
                                m_platform, "clCreateFromGLBufferInDeviceMemoryDUET"))
                      : nullptr;
    if (!create)
        return nullptr;
    cl_int err = CL_SUCCESS;
    cl_mem mem = create(m_context, flags, buffer, &err);
    if (err == CL_SUCCESS)
        return mem;
    // The buffer stays GL's as it was, and the context's callback has the reason.
    // CL_INVALID_GL_OBJECT: not this buffer (immutable storage, or not a buffer: the standard
    // call reports that); CL_INVALID_OPERATION: not in this context, said once.
    if (err == CL_INVALID_GL_OBJECT)
        return nullptr;
    if (err != CL_INVALID_OPERATION)
        check(err, "clCreateFromGLBufferInDeviceMemoryDUET");
    m_deviceMemory = 0;
    std::fprintf(stderr,
                 "interop: %s cannot move GL buffers into its memory "
                 "(clCreateFromGLBufferInDeviceMemoryDUET: %s); sharing them as they are\n",
                 m_deviceName.c_str(), clErrorName(err));
    return nullptr;
}

std::unique_ptr<SharedObject> Context::shareBuffer(unsigned buffer, cl_mem_flags flags,
                                                   bool glWrites) {
    if (m_mode == Mode::HostCopy)
        return std::make_unique<HostCopyBuffer>(m_context, m_queue, buffer, flags, glWrites);
    if (!glWrites)
        if (cl_mem mem = bufferInDeviceMemory(buffer, flags))
            return std::make_unique<SharedByKhr>(mem, true);
    cl_int err;
    cl_mem mem = clCreateFromGLBuffer(m_context, flags, buffer, &err);
    check(err, "clCreateFromGLBuffer");
    return std::make_unique<SharedByKhr>(mem);
}

std::unique_ptr<SharedObject> Context::shareTexture(unsigned target, int level, unsigned texture,
                                                    cl_mem_flags flags) {
    if (target != GL_TEXTURE_2D && target != GL_TEXTURE_RECTANGLE)
        throw Error("interop: shareTexture takes GL_TEXTURE_2D or GL_TEXTURE_RECTANGLE",
                    CL_INVALID_VALUE);
    if (m_mode == Mode::HostCopy)
        return std::make_unique<HostCopyImage>(m_context, m_queue, target, level, texture, flags);
    cl_int err;
    cl_mem mem = clCreateFromGLTexture(m_context, flags, target, level, texture, &err);
    if (err == CL_INVALID_OPERATION) {
        reportImageFallback("clCreateFromGLTexture");
        return std::make_unique<HostCopyImage>(m_context, m_queue, target, level, texture, flags);
    }
    check(err, "clCreateFromGLTexture");
    return std::make_unique<SharedByKhr>(mem);
}

std::unique_ptr<SharedObject> Context::shareRenderbuffer(unsigned renderbuffer,
                                                         cl_mem_flags flags) {
    if (m_mode == Mode::HostCopy)
        return std::make_unique<HostCopyImage>(m_context, m_queue, 0, 0, renderbuffer, flags);
    cl_int err;
    cl_mem mem = clCreateFromGLRenderbuffer(m_context, flags, renderbuffer, &err);
    if (err == CL_INVALID_OPERATION) {
        reportImageFallback("clCreateFromGLRenderbuffer");
        return std::make_unique<HostCopyImage>(m_context, m_queue, 0, 0, renderbuffer, flags);
    }
    check(err, "clCreateFromGLRenderbuffer");
    return std::make_unique<SharedByKhr>(mem);
}

} // namespace duet::interop
