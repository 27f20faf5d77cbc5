// The N-body physics of duet-nbody, apart from GL: initial conditions, the OpenCL step (kernels/
// nbody/nbody.cl) and a double-precision host reference the tests compare it with.
#pragma once

#include <CL/cl.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace duet::nbody {

/// Where the sample looks at the bodies from (the tests project bodies with the same numbers).
inline constexpr float kCameraDistance = 4.0f;
inline constexpr float kCameraYaw = 0.0f;
inline constexpr float kCameraPitch = 0.6f;

/// Bodies as the kernel sees them: position xyz with mass in w, velocity xyz (w unused).
struct State {
    std::vector<cl_float4> pos;
    std::vector<cl_float4> vel;
};

enum class Scene { Galaxy, Collision };

/// A rotating disc galaxy (a heavy centre, bodies on near-circular orbits) or two clusters on a
/// collision course; total mass 1 (G = 1), deterministic for a given seed.
State makeScene(Scene scene, int n, float eps2, std::uint32_t seed = 1);

/// kernels/nbody/nbody.cl from $DUET_KERNEL_DIR, else the source tree's kernels/ folder.
std::string kernelSource();

/// Builds nbody_step for one device and runs it. Throws interop::Error on OpenCL failures (with
/// the build log when the program does not build).
class Simulator {
public:
    Simulator(cl_context context, cl_device_id device, cl_command_queue queue);
    ~Simulator();
    Simulator(const Simulator&) = delete;
    Simulator& operator=(const Simulator&) = delete;

    /// Enqueues one step reading posIn and writing posOut and vel. Returns the kernel's event
    /// (the caller releases it) when `event` is not null.
    void step(cl_mem posIn, cl_mem posOut, cl_mem vel, int n, float dt, float eps2, float damping,
              cl_event* event = nullptr);
    /// Work-group (tile) size used.
    size_t localSize() const { return m_local; }

private:
    cl_command_queue m_queue;
    cl_program m_program = nullptr;
    cl_kernel m_kernel = nullptr;
    size_t m_local = 64;
};

/// Double-precision bodies for the host reference.
struct ReferenceState {
    std::vector<std::array<double, 4>> pos; ///< xyz, mass
    std::vector<std::array<double, 3>> vel;
};

ReferenceState toReference(const State& state);
/// The same step as the kernel, in double precision.
void referenceStep(ReferenceState& s, double dt, double eps2, double damping);
/// Kinetic plus (softened) potential energy.
double totalEnergy(const ReferenceState& s, double eps2);

} // namespace duet::nbody
