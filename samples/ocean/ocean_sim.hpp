// The Tessendorf ocean of duet-ocean apart from GL: the Phillips spectrum (a task on the CPU
// device's queue, double-buffered), time evolution, inverse 2D FFTs by libduet-fft and the
// partial-differences kernel, plus the host formulas the tests and the renderer share.
#pragma once

#include "duet/fft/fft.hpp"

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <string>

namespace duet::ocean {

inline constexpr double kGravity = 9.81;

/// What shapes the waves; the spectrum is regenerated when any of these change.
struct SpectrumParams {
    float patch = 250.0f;        ///< side of the periodic patch, metres
    float windSpeed = 14.0f;     ///< metres per second
    float windDirection = 30.0f; ///< degrees from +x towards +z
    float amplitude = 4e-7f;     ///< Phillips constant A (heights scale with its root)
    std::uint32_t seed = 1;
    bool operator==(const SpectrumParams&) const = default;
};

/// The Phillips spectrum P(k) in double precision, the same formula as kernels/ocean/ocean.cl.
double phillips(double kx, double kz, const SpectrumParams& p);

/// Wave number of array index i along an axis of n points (FFT order: i, or i - n past n/2).
inline int waveIndex(int i, int n) {
    return i < n / 2 ? i : i - n;
}

/// kernels/ocean/ocean.cl from $DUET_KERNEL_DIR, else the source tree's kernels/ folder.
std::string kernelSource();

/// Where duet-ocean looks from (the smoke test projects with the same numbers): an orbit camera
/// around the centre of the tiles x tiles patches, facing roughly towards the sun.
struct View {
    float distance = 110.0f;
    float yaw = 2.85f;
    float pitch = 0.22f;
    float nearPlane = 0.5f;
    float farPlane = 4000.0f;
    int tiles = 3;
};

/// Sky colours (linear RGB) the shaders get as uniforms and the tests recompute: a gradient from
/// horizon to zenith by elevation, plus the sun.
struct Sky {
    float zenith[3] = {0.10f, 0.28f, 0.65f};
    float horizon[3] = {0.62f, 0.72f, 0.82f};
    float sunColor[3] = {1.0f, 0.92f, 0.80f};
    float sunElevation = 0.35f; ///< radians
    float sunAzimuth = 2.2f;    ///< radians from +x towards +z
};
/// The linear sky colour seen along unit direction (dx, dy, dz): sky.glsl's skyColor().
void skyColor(const Sky& sky, const float dir[3], float rgb[3]);

/// Runs the ocean on one CL context: the spectrum on `cpuQueue`, everything per frame on
/// `gpuQueue` (they may be the same device, even the same queue). Throws interop::Error on
/// OpenCL failures. Main thread only; the context outlives it.
class Simulator {
public:
    Simulator(cl_context context, cl_device_id gpuDevice, cl_command_queue gpuQueue,
              cl_device_id cpuDevice, cl_command_queue cpuQueue, int n);
    ~Simulator();
    Simulator(const Simulator&) = delete;
    Simulator& operator=(const Simulator&) = delete;

    int n() const { return m_n; }

    /// Starts generating the spectrum for `p` into the back buffer on the CPU queue and returns;
    /// step() swaps it in once it has finished, so frames never wait for it.
    void requestSpectrum(const SpectrumParams& p);
    /// Blocks until the requested spectrum is done and swaps it in (before the first frame).
    void waitSpectrum();
    /// True when a requested spectrum is still being generated.
    bool spectrumPending() const { return m_pending != nullptr; }
    /// The parameters of the spectrum frames use now.
    const SpectrumParams& params() const { return m_params; }
    /// How many spectra have been swapped in.
    int spectrumGeneration() const { return m_generation; }

    /// Enqueues, for time t (seconds), the evolution, the inverse FFTs and the displacement
    /// (choppiness lambda) into `positions` and `normals` (n * n float4 each). Returns the
    /// events of the first and last kernels (the caller releases them).
    void step(float t, float lambda, cl_mem positions, cl_mem normals, cl_event* first,
              cl_event* last);

    /// h0 in use: n * n float4 (h0.re, h0.im, P(k), 0).
    cl_mem h0() const { return m_h0[m_front]; }
    /// The evolved spectra of the last step: 2 * n * n float2 (h + i Dx, then Dz).
    cl_mem spectrum() const { return m_spectrum; }
    /// Their inverse FFTs: 2 * n * n float2 (h + i Dx, then Dz + i 0), real space.
    cl_mem fields() const { return m_fields; }
    const fft::Plan& plan() const { return *m_plan; }

private:
    void swapIfReady(bool wait);

    cl_context m_context;
    cl_command_queue m_gpuQueue, m_cpuQueue;
    int m_n;
    cl_program m_program = nullptr; // built for the GPU device and (when different) the CPU one
    cl_kernel m_phillips = nullptr, m_evolve = nullptr, m_displace = nullptr;
    std::unique_ptr<fft::Plan> m_plan;
    cl_mem m_h0[2] = {};
    cl_mem m_spectrum = nullptr, m_fields = nullptr;
    int m_front = 0;
    cl_event m_pending = nullptr;  // the back buffer's generation
    cl_event m_lastRead = nullptr; // the last evolve (which read the front buffer)
    SpectrumParams m_params, m_pendingParams;
    int m_generation = 0;
};

} // namespace duet::ocean
