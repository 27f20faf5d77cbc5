// duet-nbody: all-pairs gravitational N-body on OpenCL (kernels/nbody), positions in GL vertex
// buffers shared through libduet-interop and drawn as additive point sprites (shaders/nbody),
// then depth fog by a CL pass over the shared depth and sRGB textures (depth_fog.hpp).
#include "depth_fog.hpp"
#include "nbody_sim.hpp"

#include "duet/engine/app/compute.hpp"
#include "duet/engine/app/registry.hpp"
#include "duet/engine/error.hpp"
#include "duet/engine/gfx/gl_objects.hpp"
#include "duet/engine/gfx/shader.hpp"
#include "duet/interop/interop.hpp"

#include <glm/gtc/color_space.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace {

using namespace duet::engine;
namespace interop = duet::interop;
namespace nbody = duet::nbody;

class NBodySample final : public Sample {
public:
    void initializeGL(Context& ctx) override {
        m_program = gl::loadProgram({"nbody/bodies.vert.glsl", "nbody/bodies.frag.glsl"});
        m_depthProgram = gl::loadProgram({"nbody/bodies.vert.glsl", "nbody/depth.frag.glsl"});
        ctx.camera().distance = nbody::kCameraDistance;
        ctx.camera().yaw = nbody::kCameraYaw;
        ctx.camera().pitch = nbody::kCameraPitch;
        ctx.setInfo("renderer", reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
    }

    void initializeCompute(Context& ctx) override {
        m_cl = createInteropContext(ctx);
        try {
            m_sim =
                std::make_unique<nbody::Simulator>(m_cl->context(), m_cl->device(), m_cl->queue());
        } catch (const interop::Error& e) {
            throw Error(e.what()); // the engine prefixes the sample name
        }
        announceDevice(ctx, "duet-nbody", *m_cl);
        rebuild(ctx);
    }

    void parameters(Parameters& p) override {
        p.addInt("N", &m_n, 2, 262144);
        p.addFloat("dt", &m_dt, 0.0f, 0.05f);
        p.addFloat("softening", &m_softening, 0.001f, 0.5f);
        p.addFloat("damping", &m_damping, 0.9f, 1.0f);
        p.addFloat("point size", &m_pointSize, 1.0f, 64.0f);
        p.addChoice("scene", &m_scene, {"galaxy", "collision"});
        p.addBool("paused", &m_paused);
        p.addBool("fog", &m_fogOn);
        p.addFloat("fog start", &m_fogStart, 0.0f, 20.0f);
        p.addFloat("fog density", &m_fogDensity, 0.0f, 4.0f);
    }

    void update(Context& ctx, double) override {
        try {
            if (m_n != m_builtN || m_scene != m_builtScene)
                rebuild(ctx);
            if (!m_paused)
                step(ctx);
        } catch (const interop::Error& e) {
            throw Error(e.what()); // the engine prefixes the sample name
        }
    }

    void render(Context& ctx) override {
        bool fog = m_fogOn && fogAvailable(ctx);
        if (fog) {
            try {
                m_fog->bindScene(ctx.width(), ctx.height());
            } catch (const interop::Error& e) {
                throw Error(e.what());
            }
        }
        glClearColor(kBackground.r, kBackground.g, kBackground.b, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        if (fog)
            drawDepth(ctx);
        drawBodies(ctx);
        if (!fog)
            return;
        try {
            nbody::DepthFog::Settings settings;
            settings.zNear = ctx.camera().nearPlane;
            settings.zFar = ctx.camera().farPlane;
            settings.start = m_fogStart;
            settings.density = m_fogDensity;
            // Fog the colour of the background, so distant bodies fade into it.
            settings.color = glm::convertSRGBToLinear(kBackground);
            nbody::DepthFog::Timing t = m_fog->apply(settings);
            ctx.stats().add(kFogKernel, t.kernel);
            ctx.stats().add(kFogAcquireRelease, t.acquireRelease);
            ctx.setInfo("kernel depth_fog", std::to_string(t.kernel * 1e3) + " ms");
        } catch (const interop::Error& e) {
            throw Error(e.what());
        }
        glViewport(0, 0, ctx.width(), ctx.height());
        m_fog->present(ctx.framebuffer());
    }

    void shutdown(Context&) override {
        m_fog.reset();
        m_shared[0].reset();
        m_shared[1].reset();
        if (m_vel)
            clReleaseMemObject(m_vel);
        m_vel = nullptr;
        m_sim.reset();
        m_cl.reset();
        for (int i = 0; i < 2; ++i) {
            m_vao[i].reset();
            m_vbo[i].reset();
        }
        m_program.reset();
        m_depthProgram.reset();
    }

private:
    // The CL fog pass runs inside render; its parts are timed apart so a split of the frame can
    // take them out of "render" (bench/samples_fps.sh does).
    static constexpr std::string_view kFogKernel = "fog kernel";
    static constexpr std::string_view kFogAcquireRelease = "fog interop";
    static constexpr glm::vec3 kBackground{0.0f, 0.0f, 0.02f};

    // Creates the fog pass on first use; where the device cannot run it, says why once and turns
    // the fog off (the bodies are still drawn).
    bool fogAvailable(Context& ctx) {
        if (m_fog)
            return true;
        if (m_fogTried) {
            m_fogOn = false; // the overlay's checkbox cannot turn on what the device lacks
            return false;
        }
        m_fogTried = true;
        try {
            m_fog = std::make_unique<nbody::DepthFog>(*m_cl);
            ctx.setInfo("depth fog", "CL pass: GL depth (CL_DEPTH) + sRGB textures");
            return true;
        } catch (const interop::Error& e) {
            std::string reason = e.what();
            std::fprintf(stderr, "duet-nbody: depth fog off: %s\n", reason.c_str());
            ctx.setInfo("depth fog", "off: " + reason.substr(0, reason.find('\n')));
            m_fogOn = false;
            return false;
        }
    }

    // The fog path's depth pre-pass: every sprite's disc writes its depth, no colour.
    void drawDepth(Context& ctx) {
        glEnable(GL_DEPTH_TEST);
        glDepthFunc(GL_LESS);
        glDepthMask(GL_TRUE);
        glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_FALSE);
        drawPoints(ctx, m_depthProgram);
        glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
    }

    void drawBodies(Context& ctx) {
        glDisable(GL_DEPTH_TEST);
        glEnable(GL_BLEND);
        glBlendFunc(GL_ONE, GL_ONE);
        drawPoints(ctx, m_program);
        glDisable(GL_BLEND);
    }

    void drawPoints(Context& ctx, const gl::Program& program) {
        glEnable(GL_PROGRAM_POINT_SIZE);
        glUseProgram(program.id());
        gl::setUniform(program.id(), "view", ctx.camera().view());
        gl::setUniform(program.id(), "projection", ctx.camera().projection(ctx.aspect()));
        gl::setUniform(program.id(), "pointSize", m_pointSize);
        gl::setUniform(program.id(), "massScale", float(m_builtN));
        gl::setUniform(program.id(), "intensity", m_intensity);
        gl::setUniform(program.id(), "color", glm::vec3(0.55f, 0.7f, 1.0f));
        glBindVertexArray(m_vao[m_current].id());
        glDrawArrays(GL_POINTS, 0, m_builtN);
        glBindVertexArray(0);
        glUseProgram(0);
        glDisable(GL_PROGRAM_POINT_SIZE);
    }

    // (Re)creates bodies, vertex buffers and their CL views; GL buffers are made after the CL
    // context, and their CL objects after them.
    void rebuild(Context& ctx) {
        if (m_cl)
            clFinish(m_cl->queue());
        m_shared[0].reset();
        m_shared[1].reset();
        if (m_vel)
            clReleaseMemObject(m_vel);
        m_vel = nullptr;
        float eps2 = m_softening * m_softening;
        nbody::State state = nbody::makeScene(nbody::Scene(m_scene), m_n, eps2);
        size_t bytes = state.pos.size() * sizeof(cl_float4);
        for (int i = 0; i < 2; ++i) {
            m_vao[i] = gl::VertexArray::create();
            m_vbo[i] = gl::Buffer::create();
            glBindVertexArray(m_vao[i].id());
            glBindBuffer(GL_ARRAY_BUFFER, m_vbo[i].id());
            glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(bytes), state.pos.data(), GL_DYNAMIC_DRAW);
            glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, sizeof(cl_float4), nullptr);
            glEnableVertexAttribArray(0);
            glBindVertexArray(0);
            glBindBuffer(GL_ARRAY_BUFFER, 0);
            // GL only draws these, so host copies never need uploading after the first.
            m_shared[i] = m_cl->shareBuffer(m_vbo[i].id(), CL_MEM_READ_WRITE, false);
        }
        cl_int err;
        m_vel = clCreateBuffer(m_cl->context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                               state.vel.data(), &err);
        interop::check(err, "clCreateBuffer(velocities)");
        m_current = 0;
        m_builtN = m_n;
        m_builtScene = m_scene;
        ctx.setInfo("bodies", std::to_string(m_n) + " (work-group " +
                                  std::to_string(m_sim->localSize()) + ")");
    }

    void step(Context& ctx) {
        using clock = std::chrono::steady_clock;
        int next = 1 - m_current;
        auto t0 = clock::now();
        std::optional<interop::AcquireScope> scope;
        scope.emplace(*m_cl, std::initializer_list<interop::SharedObject*>{
                                 m_shared[m_current].get(), m_shared[next].get()});
        auto t1 = clock::now();
        cl_event event = nullptr;
        m_sim->step(m_shared[m_current]->mem(), m_shared[next]->mem(), m_vel, m_builtN, m_dt,
                    m_softening * m_softening, m_damping, &event);
        interop::check(clWaitForEvents(1, &event), "clWaitForEvents(nbody_step)");
        auto t2 = clock::now();
        cl_ulong start = 0, end = 0;
        double compute = std::chrono::duration<double>(t2 - t1).count();
        if (clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                    nullptr) == CL_SUCCESS &&
            clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) ==
                CL_SUCCESS &&
            end >= start)
            compute = double(end - start) * 1e-9;
        clReleaseEvent(event);
        scope->release();
        auto t3 = clock::now();
        ctx.stats().add(phase::Compute, compute);
        ctx.stats().add(phase::AcquireRelease,
                        std::chrono::duration<double>((t1 - t0) + (t3 - t2)).count());
        ctx.setInfo("kernel nbody_step", std::to_string(compute * 1e3) + " ms");
        m_current = next;
    }

    std::unique_ptr<interop::Context> m_cl;
    std::unique_ptr<nbody::Simulator> m_sim;
    gl::Program m_program, m_depthProgram;
    std::unique_ptr<nbody::DepthFog> m_fog;
    bool m_fogTried = false;
    gl::VertexArray m_vao[2];
    gl::Buffer m_vbo[2];
    std::unique_ptr<interop::SharedObject> m_shared[2];
    cl_mem m_vel = nullptr;
    int m_current = 0; // the buffer holding the latest positions
    int m_builtN = 0, m_builtScene = -1;

    int m_n = 16384;
    float m_dt = 0.002f;
    float m_softening = 0.05f;
    float m_damping = 1.0f;
    float m_pointSize = 20.0f;
    float m_intensity = 0.8f;
    int m_scene = 0;
    bool m_paused = false;
    // Off by default: at 16,384 bodies and 1280x720 on llvmpipe + the CPU device the pass (depth
    // pre-pass, kernel, copies, present) adds about half to a frame (bench/samples_fps.sh).
    bool m_fogOn = false;
    float m_fogStart = 3.0f;   // the galaxy's near edge from the default camera
    float m_fogDensity = 0.4f; // its far edge keeps about half its light
};

} // namespace

DUET_REGISTER_SAMPLE(NBodySample, "duet-nbody",
                     "all-pairs N-body in OpenCL, bodies drawn from shared GL vertex buffers");
