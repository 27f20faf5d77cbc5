// duet-engine-demo: proves the engine alone (no OpenCL): a rotating coloured triangle seen through
// the orbit camera, drawn with shaders from shaders/engine_demo, under the ImGui overlay.
#include "duet/engine/app/registry.hpp"
#include "duet/engine/gfx/gl_objects.hpp"
#include "duet/engine/gfx/shader.hpp"

#include <glm/gtc/matrix_transform.hpp>

namespace {

using namespace duet::engine;

class EngineDemo final : public Sample {
public:
    void initializeGL(Context& ctx) override {
        m_program =
            gl::loadProgram({"engine_demo/triangle.vert.glsl", "engine_demo/triangle.frag.glsl"});
        // Pure red, green and blue corners, so tests can find each colour in the picture.
        const float vertices[] = {
            -0.8f, -0.6f, 0.0f, 1.0f, 0.0f, 0.0f, //
            0.8f,  -0.6f, 0.0f, 0.0f, 1.0f, 0.0f, //
            0.0f,  0.8f,  0.0f, 0.0f, 0.0f, 1.0f, //
        };
        m_vao = gl::VertexArray::create();
        m_vbo = gl::Buffer::create();
        glBindVertexArray(m_vao.id());
        glBindBuffer(GL_ARRAY_BUFFER, m_vbo.id());
        glBufferData(GL_ARRAY_BUFFER, sizeof vertices, vertices, GL_STATIC_DRAW);
        glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), nullptr);
        glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float),
                              reinterpret_cast<void*>(3 * sizeof(float)));
        glEnableVertexAttribArray(0);
        glEnableVertexAttribArray(1);
        glBindVertexArray(0);
        ctx.camera().distance = 2.2f;
        ctx.camera().pitch = 0.0f;
        ctx.setInfo("renderer", reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
        ctx.setInfo("GL", reinterpret_cast<const char*>(glGetString(GL_VERSION)));
    }

    void parameters(Parameters& p) override {
        p.addFloat("speed", &m_speed, -3.0f, 3.0f);
        p.addFloat("brightness", &m_brightness, 0.0f, 1.0f);
        p.addBool("spin", &m_spin);
        p.addChoice("background", &m_background, {"dark", "grey", "white"});
    }

    void update(Context&, double dt) override {
        if (m_spin)
            m_angle += float(dt) * m_speed;
    }

    void render(Context& ctx) override {
        static const float backgrounds[][3] = {
            {0.08f, 0.08f, 0.10f}, {0.5f, 0.5f, 0.5f}, {1.0f, 1.0f, 1.0f}};
        const float* bg = backgrounds[m_background];
        glClearColor(bg[0], bg[1], bg[2], 1.0f);
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        glm::mat4 model = glm::rotate(glm::mat4(1.0f), m_angle, glm::vec3(0, 0, 1));
        glm::mat4 mvp = ctx.camera().projection(ctx.aspect()) * ctx.camera().view() * model;
        glUseProgram(m_program.id());
        gl::setUniform(m_program.id(), "mvp", mvp);
        gl::setUniform(m_program.id(), "brightness", m_brightness);
        glBindVertexArray(m_vao.id());
        glDrawArrays(GL_TRIANGLES, 0, 3);
        glBindVertexArray(0);
        glUseProgram(0);
    }

    void shutdown(Context&) override {
        m_vao.reset();
        m_vbo.reset();
        m_program.reset();
    }

private:
    gl::Program m_program;
    gl::VertexArray m_vao;
    gl::Buffer m_vbo;
    float m_angle = 0.0f, m_speed = 0.8f, m_brightness = 1.0f;
    bool m_spin = true;
    int m_background = 0;
};

} // namespace

DUET_REGISTER_SAMPLE(EngineDemo, "engine-demo", "rotating triangle + overlay, no OpenCL");
