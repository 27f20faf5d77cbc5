// duet-ocean: Tessendorf ocean waves. The Phillips spectrum is a task on the CPU device's queue
// (regenerated, double-buffered, when the wind or patch change); time evolution, inverse 2D FFTs
// (libduet-fft) and the displacement/normal kernel run on the default device's queue and write
// GL buffers shared through libduet-interop, which GL draws with Fresnel, sky reflection and sun
// specular into an sRGB framebuffer.
#include "ocean_sim.hpp"

#include "duet/engine/app/compute.hpp"
#include "duet/engine/app/registry.hpp"
#include "duet/engine/error.hpp"
#include "duet/engine/gfx/gl_objects.hpp"
#include "duet/engine/gfx/shader.hpp"
#include "duet/interop/interop.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace duet::engine;
namespace interop = duet::interop;
namespace ocean = duet::ocean;

constexpr int kGridSizes[] = {128, 256, 512, 1024};

std::string deviceName(cl_device_id d) {
    size_t n = 0;
    clGetDeviceInfo(d, CL_DEVICE_NAME, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetDeviceInfo(d, CL_DEVICE_NAME, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

cl_device_type deviceType(cl_device_id d) {
    cl_device_type t = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, nullptr);
    return t;
}

double eventSeconds(cl_event from, cl_event to) {
    cl_ulong start = 0, end = 0;
    if (clGetEventProfilingInfo(from, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr) !=
            CL_SUCCESS ||
        clGetEventProfilingInfo(to, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) !=
            CL_SUCCESS ||
        end < start)
        return -1;
    return double(end - start) * 1e-9;
}

class OceanSample final : public Sample {
public:
    void initializeGL(Context& ctx) override {
        m_sky = gl::loadProgram({"ocean/sky.vert.glsl", "ocean/sky.frag.glsl"});
        m_water = gl::loadProgram({"ocean/water.vert.glsl", "ocean/water.frag.glsl"});
        m_emptyVao = gl::VertexArray::create();
        ctx.setInfo("renderer", reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
        ocean::View view;
        ctx.camera().distance = view.distance;
        ctx.camera().yaw = view.yaw;
        ctx.camera().pitch = view.pitch;
        ctx.camera().nearPlane = view.nearPlane;
        ctx.camera().farPlane = view.farPlane;
    }

    void initializeCompute(Context& ctx) override {
        // One context over every device that shares with GL: the spectrum task can then run on
        // the CPU device while the FFTs run on the chosen one (--device GCN puts them on the
        // GCN device).
        m_cl = createInteropContext(ctx, /*spanSharingDevices=*/true);
        try {
            pickCpuQueue();
        } catch (const interop::Error& e) {
            throw Error(e.what()); // the engine prefixes the sample name
        }
        ctx.setInfo("device", m_cl->description());
        ctx.setInfo("spectrum task", m_cpuDescription);
        std::printf("duet-ocean: OpenCL %s; spectrum task on %s\n", m_cl->description().c_str(),
                    m_cpuDescription.c_str());
        std::fflush(stdout);
    }

    void parameters(Parameters& p) override {
        p.addChoice("grid", &m_gridChoice, {"128", "256", "512", "1024"});
        p.addFloat("wind speed", &m_spectrum.windSpeed, 1.0f, 40.0f);
        p.addFloat("wind direction", &m_spectrum.windDirection, -180.0f, 180.0f);
        p.addFloat("amplitude", &m_spectrum.amplitude, 0.0f, 1e-5f);
        p.addFloat("patch size", &m_spectrum.patch, 16.0f, 2000.0f);
        // ImGui::SliderInt asserts that its range lies within +-(2^30 - 1).
        p.addInt("seed", &m_seed, 0, (1 << 30) - 1);
        p.addFloat("choppiness", &m_choppiness, 0.0f, 3.0f);
        p.addFloat("time scale", &m_timeScale, 0.0f, 4.0f);
        p.addInt("tiles", &m_tiles, 1, 8);
        p.addBool("paused", &m_paused);
    }

    void update(Context& ctx, double dt) override {
        try {
            int n = kGridSizes[m_gridChoice];
            if (!m_sim || n != m_sim->n())
                rebuild(ctx, n);
            ocean::SpectrumParams want = m_spectrum;
            want.seed = std::uint32_t(m_seed);
            if (!(want == m_requested)) {
                m_sim->requestSpectrum(want);
                m_requested = want;
                ctx.setInfo("spectrum", "regenerating");
            }
            if (m_sim->spectrumGeneration() == 0)
                m_sim->waitSpectrum(); // nothing to draw yet
            if (!m_paused)
                m_time += dt * m_timeScale;
            step(ctx);
        } catch (const interop::Error& e) {
            throw Error(e.what()); // the engine prefixes the sample name
        }
    }

    void render(Context& ctx) override {
        int w = ctx.width(), h = ctx.height();
        ensureTarget(w, h);
        // Everything is shaded in linear light into an sRGB texture, GL encoding on write.
        glBindFramebuffer(GL_FRAMEBUFFER, m_fbo.id());
        glViewport(0, 0, w, h);
        glEnable(GL_FRAMEBUFFER_SRGB);
        glClearColor(0, 0, 0, 1);
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);

        const OrbitCamera& cam = ctx.camera();
        glm::mat4 viewProjection = cam.projection(ctx.aspect()) * cam.view();
        glm::vec3 eye = cam.eye();
        ocean::Sky sky;
        glm::vec3 sunDir(std::cos(sky.sunElevation) * std::cos(sky.sunAzimuth),
                         std::sin(sky.sunElevation),
                         std::cos(sky.sunElevation) * std::sin(sky.sunAzimuth));
        auto skyUniforms = [&](GLuint program) {
            gl::setUniform(program, "eye", eye);
            gl::setUniform(program, "zenith",
                           glm::vec3(sky.zenith[0], sky.zenith[1], sky.zenith[2]));
            gl::setUniform(program, "horizon",
                           glm::vec3(sky.horizon[0], sky.horizon[1], sky.horizon[2]));
            gl::setUniform(program, "sunColor",
                           glm::vec3(sky.sunColor[0], sky.sunColor[1], sky.sunColor[2]));
            gl::setUniform(program, "sunDir", sunDir);
        };

        glDisable(GL_DEPTH_TEST);
        glUseProgram(m_sky.id());
        gl::setUniform(m_sky.id(), "invViewProjection", glm::inverse(viewProjection));
        skyUniforms(m_sky.id());
        glBindVertexArray(m_emptyVao.id());
        glDrawArrays(GL_TRIANGLES, 0, 3);

        glEnable(GL_DEPTH_TEST);
        glDepthFunc(GL_LESS);
        glUseProgram(m_water.id());
        skyUniforms(m_water.id());
        gl::setUniform(m_water.id(), "viewProjection", viewProjection);
        gl::setUniform(m_water.id(), "n", m_builtN);
        gl::setUniform(m_water.id(), "tiles", m_tiles);
        gl::setUniform(m_water.id(), "patchSize", m_sim->params().patch);
        gl::setUniform(m_water.id(), "deepColor", glm::vec3(0.004f, 0.03f, 0.06f));
        gl::setUniform(m_water.id(), "haze", 0.0008f);
        gl::setUniform(m_water.id(), "positions", 0);
        gl::setUniform(m_water.id(), "normals", 1);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_BUFFER, m_posTex.id());
        glActiveTexture(GL_TEXTURE1);
        glBindTexture(GL_TEXTURE_BUFFER, m_nrmTex.id());
        glBindVertexArray(m_gridVao.id());
        glDrawElementsInstanced(GL_TRIANGLES, m_indexCount, GL_UNSIGNED_INT, nullptr,
                                m_tiles * m_tiles);
        glBindVertexArray(0);
        glBindTexture(GL_TEXTURE_BUFFER, 0);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_BUFFER, 0);
        glUseProgram(0);
        glDisable(GL_DEPTH_TEST);

        // Copy the encoded bytes as they are (no sRGB conversion with FRAMEBUFFER_SRGB off) to
        // the engine's framebuffer, which captures and the overlay use.
        glDisable(GL_FRAMEBUFFER_SRGB);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, m_fbo.id());
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, ctx.framebuffer());
        glBlitFramebuffer(0, 0, w, h, 0, 0, w, h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
        glBindFramebuffer(GL_FRAMEBUFFER, ctx.framebuffer());
    }

    void shutdown(Context&) override {
        m_positions.reset();
        m_normals.reset();
        m_sim.reset();
        if (m_cpuQueue && m_ownCpuQueue)
            clReleaseCommandQueue(m_cpuQueue);
        m_cpuQueue = nullptr;
        m_cl.reset();
        m_posTex.reset();
        m_nrmTex.reset();
        m_posVbo.reset();
        m_nrmVbo.reset();
        m_indices.reset();
        m_gridVao.reset();
        m_emptyVao.reset();
        m_colorTex.reset();
        m_depthRb.reset();
        m_fbo.reset();
        m_sky.reset();
        m_water.reset();
    }

private:
    // The spectrum task's queue: on a CPU device of the interop context other than the default
    // one when there is one (the tutorial's queueCPU), else a second queue on the same device.
    void pickCpuQueue() {
        cl_context context = m_cl->context();
        cl_uint count = 0;
        interop::check(
            clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof count, &count, nullptr),
            "clGetContextInfo(CL_CONTEXT_NUM_DEVICES)");
        std::vector<cl_device_id> devices(count);
        interop::check(clGetContextInfo(context, CL_CONTEXT_DEVICES, count * sizeof(cl_device_id),
                                        devices.data(), nullptr),
                       "clGetContextInfo(CL_CONTEXT_DEVICES)");
        m_cpuDevice = m_cl->device();
        for (cl_device_id d : devices)
            if (d != m_cl->device() && (deviceType(d) & CL_DEVICE_TYPE_CPU))
                m_cpuDevice = d;
        cl_int err;
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        m_cpuQueue = clCreateCommandQueueWithProperties(context, m_cpuDevice, props, &err);
        interop::check(err, "clCreateCommandQueueWithProperties(CPU queue)");
        m_ownCpuQueue = true;
        m_cpuDescription = deviceName(m_cpuDevice) + (m_cpuDevice == m_cl->device()
                                                          ? " (same device, its own queue)"
                                                          : " (a second device of the context)");
    }

    // (Re)creates the simulation, the shared vertex buffers and the grid for n x n points. GL
    // buffers come after the CL context and their CL objects after them.
    void rebuild(Context& ctx, int n) {
        clFinish(m_cl->queue());
        m_positions.reset();
        m_normals.reset();
        m_sim.reset();
        m_sim = std::make_unique<ocean::Simulator>(m_cl->context(), m_cl->device(), m_cl->queue(),
                                                   m_cpuDevice, m_cpuQueue, n);
        m_requested = ocean::SpectrumParams{};
        m_requested.seed = ~0u; // forces the first request
        size_t bytes = size_t(n) * n * sizeof(cl_float4);
        std::vector<float> zero(size_t(n) * n * 4, 0.0f);
        for (auto* pair : {&m_posVbo, &m_nrmVbo}) {
            *pair = gl::Buffer::create();
            glBindBuffer(GL_TEXTURE_BUFFER, pair->id());
            glBufferData(GL_TEXTURE_BUFFER, GLsizeiptr(bytes), zero.data(), GL_DYNAMIC_DRAW);
        }
        glBindBuffer(GL_TEXTURE_BUFFER, 0);
        m_posTex = gl::Texture::create();
        glBindTexture(GL_TEXTURE_BUFFER, m_posTex.id());
        glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA32F, m_posVbo.id());
        m_nrmTex = gl::Texture::create();
        glBindTexture(GL_TEXTURE_BUFFER, m_nrmTex.id());
        glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA32F, m_nrmVbo.id());
        glBindTexture(GL_TEXTURE_BUFFER, 0);
        // CL writes every point each frame and GL only reads: never upload to CL.
        m_positions = m_cl->shareBuffer(m_posVbo.id(), CL_MEM_WRITE_ONLY, false);
        m_normals = m_cl->shareBuffer(m_nrmVbo.id(), CL_MEM_WRITE_ONLY, false);

        // Two triangles per cell of the (n+1) x (n+1) grid (the last row and column wrap).
        std::vector<GLuint> indices;
        indices.reserve(size_t(n) * n * 6);
        GLuint row = GLuint(n + 1);
        for (GLuint y = 0; y < GLuint(n); ++y)
            for (GLuint x = 0; x < GLuint(n); ++x) {
                GLuint a = y * row + x, b = a + 1, c = a + row, d = c + 1;
                indices.insert(indices.end(), {a, c, b, b, c, d});
            }
        m_gridVao = gl::VertexArray::create();
        m_indices = gl::Buffer::create();
        glBindVertexArray(m_gridVao.id());
        glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m_indices.id());
        glBufferData(GL_ELEMENT_ARRAY_BUFFER, GLsizeiptr(indices.size() * sizeof(GLuint)),
                     indices.data(), GL_STATIC_DRAW);
        glBindVertexArray(0);
        m_indexCount = GLsizei(indices.size());
        m_builtN = n;
        ctx.setInfo("grid", std::to_string(n) + " x " + std::to_string(n) + " (FFT groups " +
                                std::to_string(m_sim->plan().groupX()) + " / " +
                                std::to_string(m_sim->plan().groupY()) + ")");
    }

    void step(Context& ctx) {
        using clock = std::chrono::steady_clock;
        auto t0 = clock::now();
        std::optional<interop::AcquireScope> scope;
        scope.emplace(*m_cl, std::initializer_list<interop::SharedObject*>{m_positions.get(),
                                                                           m_normals.get()});
        auto t1 = clock::now();
        cl_event first = nullptr, last = nullptr;
        m_sim->step(float(m_time), m_choppiness, m_positions->mem(), m_normals->mem(), &first,
                    &last);
        interop::check(clWaitForEvents(1, &last), "clWaitForEvents(ocean_displace)");
        auto t2 = clock::now();
        double compute = eventSeconds(first, last);
        if (compute < 0)
            compute = std::chrono::duration<double>(t2 - t1).count();
        clReleaseEvent(first);
        clReleaseEvent(last);
        scope->release();
        auto t3 = clock::now();
        ctx.stats().add(phase::Compute, compute);
        ctx.stats().add(phase::AcquireRelease,
                        std::chrono::duration<double>((t1 - t0) + (t3 - t2)).count());
        ctx.setInfo("kernels (evolve, FFT, displace)", std::to_string(compute * 1e3) + " ms");
        if (!m_sim->spectrumPending())
            ctx.setInfo("spectrum", "generation " + std::to_string(m_sim->spectrumGeneration()));
        ctx.camera().target = glm::vec3(0.5f * m_tiles * m_sim->params().patch, 0.0f,
                                        0.5f * m_tiles * m_sim->params().patch);
    }

    void ensureTarget(int w, int h) {
        if (m_fbo && w == m_targetW && h == m_targetH)
            return;
        m_colorTex = gl::Texture::create();
        glBindTexture(GL_TEXTURE_2D, m_colorTex.id());
        glTexImage2D(GL_TEXTURE_2D, 0, GL_SRGB8_ALPHA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                     nullptr);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glBindTexture(GL_TEXTURE_2D, 0);
        m_depthRb = gl::Renderbuffer::create();
        glBindRenderbuffer(GL_RENDERBUFFER, m_depthRb.id());
        glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, w, h);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        m_fbo = gl::Framebuffer::create();
        glBindFramebuffer(GL_FRAMEBUFFER, m_fbo.id());
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, m_colorTex.id(),
                               0);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER,
                                  m_depthRb.id());
        GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
        if (status != GL_FRAMEBUFFER_COMPLETE)
            throw Error("the sRGB render target is incomplete (status " + std::to_string(status) +
                        ")");
        GLint encoding = 0;
        glGetFramebufferAttachmentParameteriv(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0,
                                              GL_FRAMEBUFFER_ATTACHMENT_COLOR_ENCODING, &encoding);
        if (encoding != GL_SRGB)
            throw Error("the GL driver gives no sRGB colour encoding for GL_SRGB8_ALPHA8");
        m_targetW = w;
        m_targetH = h;
    }

    std::unique_ptr<interop::Context> m_cl;
    cl_device_id m_cpuDevice = nullptr;
    cl_command_queue m_cpuQueue = nullptr;
    bool m_ownCpuQueue = false;
    std::string m_cpuDescription;
    std::unique_ptr<ocean::Simulator> m_sim;
    std::unique_ptr<interop::SharedObject> m_positions, m_normals;

    gl::Program m_sky, m_water;
    gl::VertexArray m_emptyVao, m_gridVao;
    gl::Buffer m_posVbo, m_nrmVbo, m_indices;
    gl::Texture m_posTex, m_nrmTex, m_colorTex;
    gl::Renderbuffer m_depthRb;
    gl::Framebuffer m_fbo;
    int m_targetW = 0, m_targetH = 0;
    GLsizei m_indexCount = 0;
    int m_builtN = 0;

    ocean::SpectrumParams m_spectrum, m_requested;
    int m_gridChoice = 1; // 256
    int m_seed = 1;
    float m_choppiness = 1.0f;
    float m_timeScale = 1.0f;
    int m_tiles = ocean::View{}.tiles;
    bool m_paused = false;
    double m_time = 0;
};

} // namespace

DUET_REGISTER_SAMPLE(
    OceanSample, "duet-ocean",
    "Tessendorf ocean: Phillips spectrum task, our OpenCL FFTs, shared GL buffers");
