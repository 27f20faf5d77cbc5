// GL internal formats <-> OpenCL image formats for images shared with GL (the AMD OpenCL
// guide's GL table, plus sRGB and the cl_khr_gl_depth_images depth formats).
#pragma once

#include <CL/cl.h>

#include <optional>

namespace duet::rt::gl {

/// One shareable GL internal format: its CL format and the client format/type that moves a
/// texel unchanged through glGetTexImage / glTexSubImage.
struct GlFormat {
    unsigned internalFormat; ///< GLenum, e.g. GL_RGBA8
    cl_image_format cl;
    unsigned transferFormat; ///< GLenum, e.g. GL_RGBA or GL_RGBA_INTEGER
    unsigned transferType;   ///< GLenum, e.g. GL_UNSIGNED_BYTE
    unsigned bytesPerTexel;
};

/// The entry for a GL internal format; nullopt when CL cannot share it
/// (clCreateFromGLTexture then fails with CL_INVALID_IMAGE_FORMAT_DESCRIPTOR).
std::optional<GlFormat> formatFromGl(unsigned internalFormat);

/// The GL internal format a CL image format corresponds to (the first in the table); nullopt
/// when there is none.
std::optional<unsigned> glFromFormat(const cl_image_format& format);

} // namespace duet::rt::gl
