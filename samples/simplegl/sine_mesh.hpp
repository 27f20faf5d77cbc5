// SimpleGL's mesh apart from GL: the OpenCL kernel (kernels/simplegl/sine_wave.cl) that writes
// vertex positions and colours, and the host formula the tests compare its output with.
#pragma once

#include <CL/cl.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace duet::simplegl {

/// Where the sample looks at the mesh from (the tests project vertices with the same numbers).
inline constexpr float kCameraDistance = 3.2f;
inline constexpr float kCameraYaw = 0.5f;
inline constexpr float kCameraPitch = 0.55f;

/// What the kernel needs for one frame.
struct Wave {
    int width = 256, height = 256; ///< vertices per row, rows
    float time = 0.0f;             ///< phase in radians (animation time x speed)
    float frequency = 4.0f;        ///< radians per unit of grid ([-1, 1] across)
    float amplitude = 0.5f;        ///< height of a crest
};

/// The vertex (x, height, z, 1) and RGBA8 colour the kernel writes for grid point (x, y), computed
/// on the host in float.
cl_float4 referencePosition(const Wave& wave, int x, int y);
std::array<std::uint8_t, 4> referenceColor(const Wave& wave, int x, int y);

/// kernels/simplegl/sine_wave.cl from $DUET_KERNEL_DIR, else the source tree's kernels/ folder.
std::string kernelSource();

/// Builds sine_wave for one device and runs it. Throws interop::Error on OpenCL failures (with
/// the build log when the program does not build). Thread affinity: the caller's; not shared.
class SineMesh {
public:
    SineMesh(cl_context context, cl_device_id device, cl_command_queue queue);
    ~SineMesh();
    SineMesh(const SineMesh&) = delete;
    SineMesh& operator=(const SineMesh&) = delete;

    /// Enqueues the kernel writing width*height float4 positions and uchar4 colours. Returns its
    /// event (the caller releases it) when `event` is not null.
    void write(cl_mem positions, cl_mem colors, const Wave& wave, cl_event* event = nullptr);

private:
    cl_command_queue m_queue;
    cl_program m_program = nullptr;
    cl_kernel m_kernel = nullptr;
    size_t m_tile = 16; ///< work-group m_tile x m_tile
};

} // namespace duet::simplegl
