// glGen*/glDelete* behind the RAII owners, so callers never pair them by hand.
#include "duet/engine/gfx/gl_objects.hpp"

namespace duet::engine::gl {

#define DUET_GL_GEN_TRAITS(Traits, gen, del)                                                       \
    GLuint Traits::create() {                                                                      \
        GLuint id = 0;                                                                             \
        gen(1, &id);                                                                               \
        return id;                                                                                 \
    }                                                                                              \
    void Traits::destroy(GLuint id) {                                                              \
        del(1, &id);                                                                               \
    }

DUET_GL_GEN_TRAITS(BufferTraits, glGenBuffers, glDeleteBuffers)
DUET_GL_GEN_TRAITS(VertexArrayTraits, glGenVertexArrays, glDeleteVertexArrays)
DUET_GL_GEN_TRAITS(TextureTraits, glGenTextures, glDeleteTextures)
DUET_GL_GEN_TRAITS(FramebufferTraits, glGenFramebuffers, glDeleteFramebuffers)
DUET_GL_GEN_TRAITS(RenderbufferTraits, glGenRenderbuffers, glDeleteRenderbuffers)
DUET_GL_GEN_TRAITS(QueryTraits, glGenQueries, glDeleteQueries)
#undef DUET_GL_GEN_TRAITS

GLuint ShaderTraits::create(GLenum stage) {
    return glCreateShader(stage);
}
void ShaderTraits::destroy(GLuint id) {
    glDeleteShader(id);
}
GLuint ProgramTraits::create() {
    return glCreateProgram();
}
void ProgramTraits::destroy(GLuint id) {
    glDeleteProgram(id);
}

} // namespace duet::engine::gl
