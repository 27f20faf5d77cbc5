// duet-starter: the smallest complete Duet application, to copy and grow. An OpenCL kernel writes a
// ring of vertices into a GL vertex buffer shared with OpenCL (no copy where the platform has
// cl_khr_gl_sharing), GL draws it, and the ImGui overlay has sliders for the ring's wave.
//
//   duet-starter                                   a window when $DISPLAY is set
//   duet-starter --headless --frames 60 --screenshot ring.png --set amplitude=0.2
//   duet-starter --help                            every option the engine gives an application
#include <duet/engine/app/compute.hpp>  // createInteropContext, announceDevice
#include <duet/engine/app/registry.hpp> // DUET_REGISTER_SAMPLE (Duet::engine-main has main())
#include <duet/engine/gfx/gl_objects.hpp>
#include <duet/engine/gfx/shader.hpp>
#include <duet/interop/interop.hpp>

#include <memory>
#include <string>

namespace {

using namespace duet::engine;
namespace interop = duet::interop;

constexpr int kVertices = 2048;

// OpenCL C: one work-item per vertex, on a circle whose radius follows a travelling wave.
const char* kKernelSource = R"CLC(
__kernel void ring(__global float4* position, float time, float amplitude, int waves) {
    int i = get_global_id(0);
    float angle = 2.0f * M_PI_F * (float)i / (float)get_global_size(0);
    float radius = 0.6f + amplitude * sin((float)waves * angle - 2.0f * time);
    position[i] = (float4)(radius * cos(angle), radius * sin(angle), 0.0f, 1.0f);
}
)CLC";

const char* const kVertexShader = R"GLSL(#version 330 core
layout(location = 0) in vec4 position;
uniform float aspect;
uniform int count;
out vec3 colour;
void main() {
    float hue = 6.2831853 * float(gl_VertexID) / float(count);
    colour = 0.55 + 0.45 * cos(hue + vec3(0.0, 2.1, 4.2));
    gl_Position = vec4(position.x / aspect, position.y, 0.0, 1.0);
}
)GLSL";

const char* const kFragmentShader = R"GLSL(#version 330 core
in vec3 colour;
out vec4 fragment;
void main() { fragment = vec4(colour, 1.0); }
)GLSL";

class Starter final : public Sample {
public:
    // GL first: shaders and the vertex buffer the kernel will write.
    void initializeGL(Context&) override {
        gl::Shader vs = gl::compileShader(GL_VERTEX_SHADER, kVertexShader, "ring.vert");
        gl::Shader fs = gl::compileShader(GL_FRAGMENT_SHADER, kFragmentShader, "ring.frag");
        m_program = gl::linkProgram({&vs, &fs}, "ring");
        m_vao = gl::VertexArray::create();
        m_vbo = gl::Buffer::create();
        glBindVertexArray(m_vao.id());
        glBindBuffer(GL_ARRAY_BUFFER, m_vbo.id());
        glBufferData(GL_ARRAY_BUFFER, kVertices * sizeof(cl_float4), nullptr, GL_DYNAMIC_DRAW);
        glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, sizeof(cl_float4), nullptr);
        glEnableVertexAttribArray(0);
        glBindVertexArray(0);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
    }

    // Then OpenCL: the device that shares with this GL context, the buffer seen from CL, the
    // kernel.
    void initializeCompute(Context& ctx) override {
        m_cl = createInteropContext(ctx); // honours --platform and --device
        announceDevice(ctx, "duet-starter", *m_cl);
        m_shared = m_cl->shareBuffer(m_vbo.id(), CL_MEM_WRITE_ONLY, /*glWrites=*/false);
        cl_int err = CL_SUCCESS;
        m_clProgram = clCreateProgramWithSource(m_cl->context(), 1, &kKernelSource, nullptr, &err);
        interop::check(err, "clCreateProgramWithSource");
        cl_device_id device = m_cl->device();
        if (clBuildProgram(m_clProgram, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
            size_t size = 0;
            clGetProgramBuildInfo(m_clProgram, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
            std::string log(size, '\0');
            clGetProgramBuildInfo(m_clProgram, device, CL_PROGRAM_BUILD_LOG, size, log.data(),
                                  nullptr);
            throw Error("the ring kernel does not build:\n" + log);
        }
        m_kernel = clCreateKernel(m_clProgram, "ring", &err);
        interop::check(err, "clCreateKernel(ring)");
    }

    // Each becomes an overlay slider and a --set NAME=VALUE option.
    void parameters(Parameters& p) override {
        p.addFloat("amplitude", &m_amplitude, 0.0f, 0.35f);
        p.addInt("waves", &m_waves, 0, 24);
    }

    // CL owns the buffer between acquire and release; GL must not touch it meanwhile.
    void update(Context& ctx, double) override {
        interop::AcquireScope scope(*m_cl, {m_shared.get()});
        cl_mem position = m_shared->mem();
        float time = float(ctx.time());
        interop::check(clSetKernelArg(m_kernel, 0, sizeof position, &position), "arg position");
        interop::check(clSetKernelArg(m_kernel, 1, sizeof time, &time), "arg time");
        interop::check(clSetKernelArg(m_kernel, 2, sizeof m_amplitude, &m_amplitude), "arg amp");
        interop::check(clSetKernelArg(m_kernel, 3, sizeof m_waves, &m_waves), "arg waves");
        size_t global = kVertices;
        interop::check(clEnqueueNDRangeKernel(m_cl->queue(), m_kernel, 1, nullptr, &global, nullptr,
                                              0, nullptr, nullptr),
                       "clEnqueueNDRangeKernel(ring)");
        scope.release(); // hands the buffer back to GL (and reports errors by exception)
    }

    void render(Context& ctx) override {
        glClearColor(0.04f, 0.04f, 0.06f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        glUseProgram(m_program.id());
        gl::setUniform(m_program.id(), "aspect", ctx.aspect());
        gl::setUniform(m_program.id(), "count", kVertices);
        glBindVertexArray(m_vao.id());
        glDrawArrays(GL_LINE_LOOP, 0, kVertices);
        glBindVertexArray(0);
        glUseProgram(0);
    }

    // CL objects before the GL objects they share, while the GL context is current.
    void shutdown(Context&) override {
        if (m_kernel)
            clReleaseKernel(m_kernel);
        if (m_clProgram)
            clReleaseProgram(m_clProgram);
        m_shared.reset();
        m_cl.reset();
        m_vao.reset();
        m_vbo.reset();
        m_program.reset();
    }

private:
    gl::Program m_program;
    gl::VertexArray m_vao;
    gl::Buffer m_vbo;
    std::unique_ptr<interop::Context> m_cl;
    std::unique_ptr<interop::SharedObject> m_shared;
    cl_program m_clProgram = nullptr;
    cl_kernel m_kernel = nullptr;
    float m_amplitude = 0.12f;
    int m_waves = 7;
};

} // namespace

DUET_REGISTER_SAMPLE(Starter, "duet-starter", "a ring of vertices an OpenCL kernel writes into GL");
