// RAII owners of GL object names: deleted when the owner dies, moved but never copied.
#pragma once

#include "duet/engine/gfx/gl.hpp"

#include <utility>

namespace duet::engine::gl {

/// Owns one GL name of the kind Traits creates and deletes. The GL context that made it must be
/// current when it is destroyed or reset.
template <typename Traits> class Object {
public:
    /// Owns nothing (id() is 0, operator bool is false).
    Object() = default;
    /// Takes ownership of an existing name.
    explicit Object(GLuint id) : m_id(id) {}
    ~Object() { reset(); }
    Object(Object&& other) noexcept : m_id(std::exchange(other.m_id, 0)) {}
    Object& operator=(Object&& other) noexcept {
        if (this != &other) {
            reset();
            m_id = std::exchange(other.m_id, 0);
        }
        return *this;
    }
    Object(const Object&) = delete;
    Object& operator=(const Object&) = delete;

    /// A fresh name (glGen* / glCreate*).
    template <typename... Args> static Object create(Args... args) {
        return Object(Traits::create(args...));
    }

    /// The GL name, 0 when empty; the owner keeps it.
    GLuint id() const { return m_id; }
    explicit operator bool() const { return m_id != 0; }
    /// Gives up ownership without deleting.
    GLuint release() { return std::exchange(m_id, 0); }
    void reset() {
        if (m_id)
            Traits::destroy(m_id);
        m_id = 0;
    }

private:
    GLuint m_id = 0;
};

/// How each kind of name is made (glGen*/glCreate*) and deleted (glDelete*).
struct BufferTraits {
    static GLuint create();
    static void destroy(GLuint id);
};
struct VertexArrayTraits {
    static GLuint create();
    static void destroy(GLuint id);
};
struct TextureTraits {
    static GLuint create();
    static void destroy(GLuint id);
};
struct FramebufferTraits {
    static GLuint create();
    static void destroy(GLuint id);
};
struct RenderbufferTraits {
    static GLuint create();
    static void destroy(GLuint id);
};
struct QueryTraits {
    static GLuint create();
    static void destroy(GLuint id);
};
struct ShaderTraits {
    static GLuint create(GLenum stage);
    static void destroy(GLuint id);
};
struct ProgramTraits {
    static GLuint create();
    static void destroy(GLuint id);
};

/// Owners of each kind of GL name: e.g. gl::Buffer::create(), buffer.id(), buffer.reset().
using Buffer = Object<BufferTraits>;
using VertexArray = Object<VertexArrayTraits>;
using Texture = Object<TextureTraits>;
using Framebuffer = Object<FramebufferTraits>;
using Renderbuffer = Object<RenderbufferTraits>;
using Query = Object<QueryTraits>;
using Shader = Object<ShaderTraits>;
using Program = Object<ProgramTraits>;

} // namespace duet::engine::gl
