// GL buffer helpers shared by the NVIDIA GL tests (nvidia_gl_test, nvidia_gl_gpu_test): a buffer
// made from floats, and what GL reads back from one. Include after the GL headers (with
// GL_GLEXT_PROTOTYPES: the GL 1.5+ entry points are called directly).
#pragma once

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

} // namespace duet::test
