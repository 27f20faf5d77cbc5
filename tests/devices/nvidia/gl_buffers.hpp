// GL helpers shared by the NVIDIA GL tests (nvidia_gl_test, nvidia_gl_gpu_test,
// nvidia_gl_two_gpu_test): a buffer made from floats, what GL reads back from one, and what
// clGetGLContextInfoKHR answers. Include after the GL headers (with GL_GLEXT_PROTOTYPES: the GL
// 1.5+ entry points are called directly).
#pragma once

#include "support/cl_test.hpp"

#include <CL/cl_gl.h>

#include <vector>

namespace duet::test {

inline GLuint glBuffer(const std::vector<float>& data) {
    GLuint b = 0;
    glGenBuffers(1, &b);
    glBindBuffer(GL_ARRAY_BUFFER, b);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(data.size() * sizeof(float)), data.data(),
                 GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return b;
}

inline std::vector<float> glBufferContents(GLuint b, size_t n) {
    std::vector<float> out(n, -1.0f);
    glBindBuffer(GL_ARRAY_BUFFER, b);
    glGetBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(n * sizeof(float)), out.data());
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return out;
}

/// What GL's own GPU-side reads (draws, copies) see of buffer `b`: a GL copy into a fresh buffer,
/// read back. On NVIDIA's GL, glGetBufferSubData of a buffer made with glBufferData and then moved
/// onto imported memory (cl_duet_gl_device_memory) goes on returning its contents from before the
/// move, while draws and copies see the memory; a fresh buffer has no such history.
inline std::vector<float> glBufferContentsOnGpu(GLuint b, size_t n) {
    GLuint copy = glBuffer(std::vector<float>(n, -1.0f));
    glBindBuffer(GL_COPY_READ_BUFFER, b);
    glBindBuffer(GL_COPY_WRITE_BUFFER, copy);
    glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0,
                        GLsizeiptr(n * sizeof(float)));
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    std::vector<float> out = glBufferContents(copy, n);
    glDeleteBuffers(1, &copy);
    return out;
}

/// The devices clGetGLContextInfoKHR answers for `what` with these context properties.
inline std::vector<cl_device_id> glContextDevices(const std::vector<cl_context_properties>& props,
                                                  cl_gl_context_info what) {
    size_t size = 0;
    REQUIRE_CL(clGetGLContextInfoKHR(props.data(), what, 0, nullptr, &size));
    std::vector<cl_device_id> out(size / sizeof(cl_device_id));
    if (!out.empty())
        REQUIRE_CL(clGetGLContextInfoKHR(props.data(), what, size, out.data(), nullptr));
    return out;
}

} // namespace duet::test
