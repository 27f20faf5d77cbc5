// The depth fog pass of duet-nbody: FBO, shared depth and sRGB textures, the CL kernel, display.
#include "depth_fog.hpp"

#include "duet/data_paths.hpp"
#include "duet/engine/gfx/shader.hpp"
#include "duet/interop/program.hpp"

#include <chrono>
#include <cstdlib>
#include <vector>

namespace duet::nbody {

namespace gl = engine::gl;

namespace {

std::string deviceName(cl_device_id device) {
    char name[256] = {};
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
    return name;
}

bool supports(cl_context context, cl_mem_flags flags, cl_channel_order order,
              cl_channel_type type) {
    cl_uint count = 0;
    if (clGetSupportedImageFormats(context, flags, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &count) !=
        CL_SUCCESS)
        return false;
    std::vector<cl_image_format> formats(count);
    clGetSupportedImageFormats(context, flags, CL_MEM_OBJECT_IMAGE2D, count, formats.data(),
                               nullptr);
    for (const cl_image_format& f : formats)
        if (f.image_channel_order == order && f.image_channel_data_type == type)
            return true;
    return false;
}

GLuint makeTexture(GLenum internal, GLenum format, GLenum type, int width, int height) {
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
    glTexImage2D(GL_TEXTURE_2D, 0, GLint(internal), width, height, 0, format, type, nullptr);
    glBindTexture(GL_TEXTURE_2D, 0);
    return t;
}

} // namespace

std::string depthFogSource() {
    std::string path = duet::dataDirectory("DUET_KERNEL_DIR", "kernels", DUET_KERNEL_SOURCE_DIR) +
                       "/nbody/depth_fog.cl";
    return interop::readTextFile(path);
}

DepthFog::DepthFog(interop::Context& cl) : m_cl(cl) {
    // Asked before anything is made, so the reason names what is missing rather than a symptom.
    std::string device = deviceName(cl.device());
    cl_bool images = CL_FALSE;
    clGetDeviceInfo(cl.device(), CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
    if (!images)
        throw interop::Error(device + " has no image support");
    std::string missing;
    if (!supports(cl.context(), CL_MEM_READ_ONLY, CL_DEPTH, CL_FLOAT))
        missing += "CL_DEPTH/CL_FLOAT images (cl_khr_depth_images) to read GL's depth texture";
    if (!supports(cl.context(), CL_MEM_READ_ONLY, CL_sRGBA, CL_UNORM_INT8) ||
        !supports(cl.context(), CL_MEM_WRITE_ONLY, CL_sRGBA, CL_UNORM_INT8))
        missing += std::string(missing.empty() ? "" : " and ") +
                   "CL_sRGBA/CL_UNORM_INT8 images to read and write GL's sRGB textures";
    if (!missing.empty())
        throw interop::Error(device + " lacks " + missing);

    m_program =
        interop::buildProgram(cl.context(), {cl.device()}, depthFogSource(), "", "depth_fog.cl");
    cl_int err;
    m_kernel = clCreateKernel(m_program, "depth_fog", &err);
    interop::check(err, "clCreateKernel(depth_fog)");
    m_present = gl::loadProgram({"nbody/present.vert.glsl", "nbody/present.frag.glsl"});
    m_emptyVao = gl::VertexArray::create();
}

DepthFog::~DepthFog() {
    m_sharedColor.reset();
    m_sharedDepth.reset();
    m_sharedOutput.reset();
    if (m_kernel)
        clReleaseKernel(m_kernel);
    if (m_program)
        clReleaseProgram(m_program);
}

void DepthFog::bindScene(int width, int height) {
    if (width != m_width || height != m_height) {
        clFinish(m_cl.queue());
        m_sharedColor.reset();
        m_sharedDepth.reset();
        m_sharedOutput.reset();
        m_color =
            gl::Texture(makeTexture(GL_SRGB8_ALPHA8, GL_RGBA, GL_UNSIGNED_BYTE, width, height));
        m_depth = gl::Texture(
            makeTexture(GL_DEPTH_COMPONENT32F, GL_DEPTH_COMPONENT, GL_FLOAT, width, height));
        m_output =
            gl::Texture(makeTexture(GL_SRGB8_ALPHA8, GL_RGBA, GL_UNSIGNED_BYTE, width, height));
        m_fbo = gl::Framebuffer::create();
        glBindFramebuffer(GL_FRAMEBUFFER, m_fbo.id());
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, m_color.id(),
                               0);
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_TEXTURE_2D, m_depth.id(), 0);
        if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
            throw interop::Error("the fog pass's framebuffer (GL_SRGB8_ALPHA8 + "
                                 "GL_DEPTH_COMPONENT32F) is incomplete on this GL");
        // CL reads the scene and writes only the output: the flags spare host copies the
        // direction they do not need.
        m_sharedColor = m_cl.shareTexture(GL_TEXTURE_2D, 0, m_color.id(), CL_MEM_READ_ONLY);
        m_sharedDepth = m_cl.shareTexture(GL_TEXTURE_2D, 0, m_depth.id(), CL_MEM_READ_ONLY);
        m_sharedOutput = m_cl.shareTexture(GL_TEXTURE_2D, 0, m_output.id(), CL_MEM_WRITE_ONLY);
        m_width = width;
        m_height = height;
    }
    glBindFramebuffer(GL_FRAMEBUFFER, m_fbo.id());
    glViewport(0, 0, width, height);
}

DepthFog::Timing DepthFog::apply(const Settings& s) {
    using clock = std::chrono::steady_clock;
    Timing timing;
    auto t0 = clock::now();
    interop::AcquireScope scope(m_cl,
                                {m_sharedColor.get(), m_sharedDepth.get(), m_sharedOutput.get()});
    auto t1 = clock::now();
    auto arg = [&](cl_uint i, size_t size, const void* value) {
        interop::check(clSetKernelArg(m_kernel, i, size, value), "clSetKernelArg(depth_fog)");
    };
    cl_mem color = m_sharedColor->mem(), depth = m_sharedDepth->mem(),
           output = m_sharedOutput->mem();
    cl_float4 fog = {{s.color.r, s.color.g, s.color.b, 1.0f}};
    arg(0, sizeof color, &color);
    arg(1, sizeof depth, &depth);
    arg(2, sizeof output, &output);
    arg(3, sizeof s.zNear, &s.zNear);
    arg(4, sizeof s.zFar, &s.zFar);
    arg(5, sizeof s.start, &s.start);
    arg(6, sizeof s.density, &s.density);
    arg(7, sizeof fog, &fog);
    size_t global[2] = {size_t(m_width + 15) / 16 * 16, size_t(m_height + 15) / 16 * 16};
    cl_event event = nullptr;
    interop::check(clEnqueueNDRangeKernel(m_cl.queue(), m_kernel, 2, nullptr, global, nullptr, 0,
                                          nullptr, &event),
                   "clEnqueueNDRangeKernel(depth_fog)");
    interop::check(clWaitForEvents(1, &event), "clWaitForEvents(depth_fog)");
    auto t2 = clock::now();
    timing.kernel = std::chrono::duration<double>(t2 - t1).count();
    cl_ulong start = 0, end = 0;
    if (clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) ==
            CL_SUCCESS &&
        end >= start)
        timing.kernel = double(end - start) * 1e-9;
    clReleaseEvent(event);
    scope.release();
    timing.acquireRelease = std::chrono::duration<double>((t1 - t0) + (clock::now() - t2)).count();
    return timing;
}

void DepthFog::present(unsigned framebuffer) {
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
    // Where the target stores sRGB, GL encodes; elsewhere the shader does (a pbuffer or a window
    // without an sRGB visual is linear).
    GLint encoding = GL_LINEAR;
    glGetFramebufferAttachmentParameteriv(GL_FRAMEBUFFER,
                                          framebuffer ? GL_COLOR_ATTACHMENT0 : GL_BACK_LEFT,
                                          GL_FRAMEBUFFER_ATTACHMENT_COLOR_ENCODING, &encoding);
    if (glGetError() != GL_NO_ERROR)
        encoding = GL_LINEAR;
    bool srgbTarget = encoding == GL_SRGB;
    if (srgbTarget)
        glEnable(GL_FRAMEBUFFER_SRGB);
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_BLEND);
    glUseProgram(m_present.id());
    gl::setUniform(m_present.id(), "encode", srgbTarget ? 0 : 1);
    gl::setUniform(m_present.id(), "frame", 0);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, m_output.id());
    glBindVertexArray(m_emptyVao.id());
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glBindVertexArray(0);
    glBindTexture(GL_TEXTURE_2D, 0);
    glUseProgram(0);
    if (srgbTarget)
        glDisable(GL_FRAMEBUFFER_SRGB);
}

} // namespace duet::nbody
