// duet-simplegl: the classic SimpleGL. A kernel (kernels/simplegl) moves a sine-wave mesh each
// frame by writing vertex positions and colours into GL vertex buffers shared through
// libduet-interop; GL draws them as a lit surface, a wireframe or points with an orbit camera.
#include "sine_mesh.hpp"

#include "duet/engine/app/compute.hpp"
#include "duet/engine/app/registry.hpp"
#include "duet/engine/error.hpp"
#include "duet/engine/gfx/gl_objects.hpp"
#include "duet/engine/gfx/shader.hpp"
#include "duet/interop/interop.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace duet::engine;
namespace interop = duet::interop;
namespace simplegl = duet::simplegl;

enum class Draw { Surface, Wireframe, Points };

class SimpleGLSample final : public Sample {
public:
    void initializeGL(Context& ctx) override {
        m_program = gl::loadProgram({"simplegl/mesh.vert.glsl", "simplegl/mesh.frag.glsl"});
        ctx.camera().distance = simplegl::kCameraDistance;
        ctx.camera().yaw = simplegl::kCameraYaw;
        ctx.camera().pitch = simplegl::kCameraPitch;
        ctx.setInfo("renderer", reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
    }

    void initializeCompute(Context& ctx) override {
        m_cl = createInteropContext(ctx);
        try {
            m_mesh = std::make_unique<simplegl::SineMesh>(m_cl->context(), m_cl->device(),
                                                          m_cl->queue());
        } catch (const interop::Error& e) {
            throw Error(e.what()); // the engine prefixes the sample name
        }
        announceDevice(ctx, "duet-simplegl", *m_cl);
    }

    void parameters(Parameters& p) override {
        p.addInt("mesh width", &m_wave.width, 2, 1024);
        p.addInt("mesh height", &m_wave.height, 2, 1024);
        p.addFloat("frequency", &m_wave.frequency, 0.0f, 32.0f);
        p.addFloat("amplitude", &m_wave.amplitude, 0.0f, 1.5f);
        p.addFloat("speed", &m_speed, 0.0f, 10.0f);
        p.addChoice("draw", &m_draw, {"surface", "wireframe", "points"});
        p.addFloat("point size", &m_pointSize, 1.0f, 16.0f);
        p.addBool("paused", &m_paused);
    }

    void update(Context& ctx, double dt) override {
        try {
            if (m_wave.width != m_builtWidth || m_wave.height != m_builtHeight)
                rebuild(ctx);
            if (!m_paused)
                m_phase += dt * double(m_speed);
            // The mesh is rewritten every frame, paused or not, so parameter changes show.
            writeMesh(ctx);
        } catch (const interop::Error& e) {
            throw Error(e.what()); // the engine prefixes the sample name
        }
    }

    void render(Context& ctx) override {
        glClearColor(0.05f, 0.05f, 0.08f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        glEnable(GL_DEPTH_TEST);
        glDepthFunc(GL_LESS);
        glEnable(GL_PROGRAM_POINT_SIZE);
        glUseProgram(m_program.id());
        gl::setUniform(m_program.id(), "view", ctx.camera().view());
        gl::setUniform(m_program.id(), "projection", ctx.camera().projection(ctx.aspect()));
        gl::setUniform(m_program.id(), "pointSize", m_pointSize);
        gl::setUniform(m_program.id(), "lit", Draw(m_draw) == Draw::Surface ? 1 : 0);
        glBindVertexArray(m_vao.id());
        if (Draw(m_draw) == Draw::Points) {
            glDrawArrays(GL_POINTS, 0, m_builtWidth * m_builtHeight);
        } else {
            if (Draw(m_draw) == Draw::Wireframe)
                glPolygonMode(GL_FRONT_AND_BACK, GL_LINE);
            glDrawElements(GL_TRIANGLES, GLsizei(m_indexCount), GL_UNSIGNED_INT, nullptr);
            glPolygonMode(GL_FRONT_AND_BACK, GL_FILL);
        }
        glBindVertexArray(0);
        glUseProgram(0);
        glDisable(GL_PROGRAM_POINT_SIZE);
        glDisable(GL_DEPTH_TEST);
    }

    void shutdown(Context&) override {
        m_sharedPositions.reset();
        m_sharedColors.reset();
        m_mesh.reset();
        m_cl.reset();
        m_vao.reset();
        m_positions.reset();
        m_colors.reset();
        m_indices.reset();
        m_program.reset();
    }

private:
    // (Re)creates the vertex buffers for the grid size, their CL views (after the CL context, as
    // the AMD guide asks) and the triangle indices, which only depend on the grid.
    void rebuild(Context& ctx) {
        clFinish(m_cl->queue());
        m_sharedPositions.reset();
        m_sharedColors.reset();
        int w = m_wave.width, h = m_wave.height;
        size_t vertices = size_t(w) * size_t(h);
        std::vector<GLuint> indices;
        indices.reserve(size_t(w - 1) * size_t(h - 1) * 6);
        for (int y = 0; y + 1 < h; ++y)
            for (int x = 0; x + 1 < w; ++x) {
                GLuint i = GLuint(y * w + x);
                indices.insert(indices.end(),
                               {i, i + 1, i + GLuint(w), i + 1, i + GLuint(w) + 1, i + GLuint(w)});
            }
        m_indexCount = indices.size();
        m_vao = gl::VertexArray::create();
        m_positions = gl::Buffer::create();
        m_colors = gl::Buffer::create();
        m_indices = gl::Buffer::create();
        glBindVertexArray(m_vao.id());
        glBindBuffer(GL_ARRAY_BUFFER, m_positions.id());
        glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(vertices * sizeof(cl_float4)), nullptr,
                     GL_DYNAMIC_DRAW);
        glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, sizeof(cl_float4), nullptr);
        glEnableVertexAttribArray(0);
        glBindBuffer(GL_ARRAY_BUFFER, m_colors.id());
        glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(vertices * 4), nullptr, GL_DYNAMIC_DRAW);
        glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, 4, nullptr);
        glEnableVertexAttribArray(1);
        glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m_indices.id());
        glBufferData(GL_ELEMENT_ARRAY_BUFFER, GLsizeiptr(indices.size() * sizeof(GLuint)),
                     indices.data(), GL_STATIC_DRAW);
        glBindVertexArray(0);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, 0);
        // The kernel writes every vertex each frame and GL only reads: write-only, never uploaded.
        m_sharedPositions = m_cl->shareBuffer(m_positions.id(), CL_MEM_WRITE_ONLY, false);
        m_sharedColors = m_cl->shareBuffer(m_colors.id(), CL_MEM_WRITE_ONLY, false);
        m_builtWidth = w;
        m_builtHeight = h;
        ctx.setInfo("mesh", std::to_string(w) + " x " + std::to_string(h) + " vertices");
    }

    void writeMesh(Context& ctx) {
        using clock = std::chrono::steady_clock;
        simplegl::Wave wave = m_wave;
        wave.time = float(m_phase);
        auto t0 = clock::now();
        interop::AcquireScope scope(*m_cl, {m_sharedPositions.get(), m_sharedColors.get()});
        auto t1 = clock::now();
        cl_event event = nullptr;
        m_mesh->write(m_sharedPositions->mem(), m_sharedColors->mem(), wave, &event);
        interop::check(clWaitForEvents(1, &event), "clWaitForEvents(sine_wave)");
        auto t2 = clock::now();
        double compute = std::chrono::duration<double>(t2 - t1).count();
        cl_ulong start = 0, end = 0;
        if (clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                    nullptr) == CL_SUCCESS &&
            clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) ==
                CL_SUCCESS &&
            end >= start)
            compute = double(end - start) * 1e-9;
        clReleaseEvent(event);
        scope.release();
        auto t3 = clock::now();
        ctx.stats().add(phase::Compute, compute);
        ctx.stats().add(phase::AcquireRelease,
                        std::chrono::duration<double>((t1 - t0) + (t3 - t2)).count());
        ctx.setInfo("kernel sine_wave", std::to_string(compute * 1e3) + " ms");
    }

    std::unique_ptr<interop::Context> m_cl;
    std::unique_ptr<simplegl::SineMesh> m_mesh;
    gl::Program m_program;
    gl::VertexArray m_vao;
    gl::Buffer m_positions, m_colors, m_indices;
    std::unique_ptr<interop::SharedObject> m_sharedPositions, m_sharedColors;
    size_t m_indexCount = 0;
    int m_builtWidth = 0, m_builtHeight = 0;
    double m_phase = 0; // animation phase in radians: simulated time x speed

    simplegl::Wave m_wave;
    float m_speed = 1.0f;
    float m_pointSize = 2.0f;
    int m_draw = int(Draw::Surface);
    bool m_paused = false;
};

} // namespace

DUET_REGISTER_SAMPLE(SimpleGLSample, "duet-simplegl",
                     "a sine-wave mesh moved by an OpenCL kernel in shared GL vertex buffers");
