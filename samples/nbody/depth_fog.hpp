// duet-nbody's depth fog pass: bodies drawn into an FBO with a GL depth texture and an sRGB
// colour texture; a CL kernel (kernels/nbody/depth_fog.cl) reads both through interop
// (image2d_depth_t, CL_sRGBA) and writes a shared sRGB texture that GL then shows.
#pragma once

#include "duet/engine/gfx/gl_objects.hpp"
#include "duet/interop/interop.hpp"

#include <glm/vec3.hpp>

#include <memory>
#include <string>

namespace duet::nbody {

/// GL thread only; the GL context current for every call. Needs images of CL_DEPTH/CL_FLOAT
/// (cl_khr_depth_images) and CL_sRGBA/CL_UNORM_INT8 on the interop context's device.
class DepthFog {
public:
    /// Builds the kernel. Throws interop::Error saying what the device lacks (one line) when the
    /// pass cannot run there.
    explicit DepthFog(interop::Context& cl);
    ~DepthFog();
    DepthFog(const DepthFog&) = delete;
    DepthFog& operator=(const DepthFog&) = delete;

    /// Makes the FBO and the shared textures `width` x `height` (no-op when already so) and binds
    /// the FBO for drawing: colour GL_SRGB8_ALPHA8 written without GL_FRAMEBUFFER_SRGB (the
    /// bodies' shader values are display values, so they are stored as sRGB-encoded already) and
    /// depth GL_DEPTH_COMPONENT32F.
    void bindScene(int width, int height);

    struct Settings {
        float zNear = 0.01f, zFar = 1000.0f; ///< the projection the scene was drawn with
        float start = 3.0f;                  ///< eye distance where fog begins
        float density = 0.4f;                ///< per unit of eye distance beyond start
        glm::vec3 color{0.0f};               ///< fog colour, linear RGB
    };
    struct Timing {
        double kernel = 0;         ///< seconds, from the kernel's profiling event when there is one
        double acquireRelease = 0; ///< seconds of wall time
    };
    /// Runs the fog kernel from the scene textures into the output texture.
    Timing apply(const Settings& settings);

    /// Draws the output texture into `framebuffer` (viewport already set).
    void present(unsigned framebuffer);

private:
    interop::Context& m_cl;
    cl_program m_program = nullptr;
    cl_kernel m_kernel = nullptr;
    engine::gl::Program m_present;
    engine::gl::VertexArray m_emptyVao;
    engine::gl::Framebuffer m_fbo;
    engine::gl::Texture m_color, m_depth, m_output;
    std::unique_ptr<interop::SharedObject> m_sharedColor, m_sharedDepth, m_sharedOutput;
    int m_width = 0, m_height = 0;
};

/// The depth fog kernel source: kernels/nbody/depth_fog.cl ($DUET_KERNEL_DIR or the source tree).
std::string depthFogSource();

} // namespace duet::nbody
