// Initial conditions, the OpenCL N-body step and the host reference for duet-nbody and its tests.
#include "nbody_sim.hpp"

#include "duet/data_paths.hpp"
#include "duet/interop/interop.hpp"
#include "duet/interop/program.hpp"

#include <cmath>
#include <cstdlib>
#include <random>

namespace duet::nbody {

namespace {

void addDisc(State& s, int n, float cx, float vx, float mass, float eps2, std::mt19937& rng,
             float radius, bool heavyCentre) {
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float> thick(0.0f, 0.02f * radius);
    float centreMass = heavyCentre ? 0.4f * mass : 0.0f;
    int first = 0;
    if (heavyCentre && n > 0) {
        s.pos.push_back({{cx, 0.0f, 0.0f, centreMass}});
        s.vel.push_back({{vx, 0.0f, 0.0f, 0.0f}});
        first = 1;
    }
    float discMass = mass - centreMass;
    int count = n - first;
    for (int i = 0; i < count; ++i) {
        // Uniform in area between 0.1 R and R, so few bodies sit on the centre.
        float r = radius * std::sqrt(0.01f + 0.99f * u(rng));
        float a = 6.2831853f * u(rng);
        float x = r * std::cos(a), z = r * std::sin(a);
        // Circular speed for the mass inside r (softened like the kernel); counter-clockwise.
        float enclosed = centreMass + discMass * (r * r) / (radius * radius);
        float speed = std::sqrt(enclosed * r * r / std::pow(r * r + eps2, 1.5f));
        s.pos.push_back({{cx + x, thick(rng), z, discMass / float(count)}});
        s.vel.push_back({{vx - speed * std::sin(a), 0.0f, speed * std::cos(a), 0.0f}});
    }
}

} // namespace

State makeScene(Scene scene, int n, float eps2, std::uint32_t seed) {
    State s;
    std::mt19937 rng(seed);
    if (scene == Scene::Galaxy) {
        addDisc(s, n, 0.0f, 0.0f, 1.0f, eps2, rng, 1.0f, true);
    } else {
        int half = n / 2;
        addDisc(s, half, -1.2f, 0.25f, 0.5f, eps2, rng, 0.6f, true);
        addDisc(s, n - half, 1.2f, -0.25f, 0.5f, eps2, rng, 0.6f, true);
    }
    return s;
}

std::string kernelSource() {
    std::string path = duet::dataDirectory("DUET_KERNEL_DIR", "kernels", DUET_KERNEL_SOURCE_DIR) +
                       "/nbody/nbody.cl";
    return interop::readTextFile(path);
}

Simulator::Simulator(cl_context context, cl_device_id device, cl_command_queue queue)
    : m_queue(queue) {
    m_program = interop::buildProgram(context, {device}, kernelSource(), "-cl-fast-relaxed-math",
                                      "nbody.cl");
    cl_int err;
    m_kernel = clCreateKernel(m_program, "nbody_step", &err);
    interop::check(err, "clCreateKernel(nbody_step)");
    size_t maxLocal = 0;
    interop::check(clGetKernelWorkGroupInfo(m_kernel, device, CL_KERNEL_WORK_GROUP_SIZE,
                                            sizeof maxLocal, &maxLocal, nullptr),
                   "clGetKernelWorkGroupInfo");
    m_local = 256;
    while (m_local > maxLocal && m_local > 1)
        m_local /= 2;
}

Simulator::~Simulator() {
    if (m_kernel)
        clReleaseKernel(m_kernel);
    if (m_program)
        clReleaseProgram(m_program);
}

void Simulator::step(cl_mem posIn, cl_mem posOut, cl_mem vel, int n, float dt, float eps2,
                     float damping, cl_event* event) {
    auto arg = [&](cl_uint i, size_t size, const void* value) {
        interop::check(clSetKernelArg(m_kernel, i, size, value), "clSetKernelArg(nbody_step)");
    };
    arg(0, sizeof posIn, &posIn);
    arg(1, sizeof posOut, &posOut);
    arg(2, sizeof vel, &vel);
    arg(3, m_local * sizeof(cl_float4), nullptr);
    arg(4, sizeof n, &n);
    arg(5, sizeof dt, &dt);
    arg(6, sizeof eps2, &eps2);
    arg(7, sizeof damping, &damping);
    size_t global = (size_t(n) + m_local - 1) / m_local * m_local;
    interop::check(
        clEnqueueNDRangeKernel(m_queue, m_kernel, 1, nullptr, &global, &m_local, 0, nullptr, event),
        "clEnqueueNDRangeKernel(nbody_step)");
}

ReferenceState toReference(const State& state) {
    ReferenceState r;
    for (size_t i = 0; i < state.pos.size(); ++i) {
        const cl_float4 &p = state.pos[i], &v = state.vel[i];
        r.pos.push_back({p.s[0], p.s[1], p.s[2], p.s[3]});
        r.vel.push_back({v.s[0], v.s[1], v.s[2]});
    }
    return r;
}

void referenceStep(ReferenceState& s, double dt, double eps2, double damping) {
    size_t n = s.pos.size();
    std::vector<std::array<double, 4>> next(n);
    for (size_t i = 0; i < n; ++i) {
        double a[3] = {0, 0, 0};
        for (size_t j = 0; j < n; ++j) {
            double d[3] = {s.pos[j][0] - s.pos[i][0], s.pos[j][1] - s.pos[i][1],
                           s.pos[j][2] - s.pos[i][2]};
            double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
            double f = s.pos[j][3] / (r2 * std::sqrt(r2));
            for (int k = 0; k < 3; ++k)
                a[k] += d[k] * f;
        }
        for (int k = 0; k < 3; ++k) {
            s.vel[i][k] = (s.vel[i][k] + a[k] * dt) * damping;
            next[i][k] = s.pos[i][k] + s.vel[i][k] * dt;
        }
        next[i][3] = s.pos[i][3];
    }
    s.pos = std::move(next);
}

double totalEnergy(const ReferenceState& s, double eps2) {
    double kinetic = 0, potential = 0;
    size_t n = s.pos.size();
    for (size_t i = 0; i < n; ++i) {
        const auto& v = s.vel[i];
        kinetic += 0.5 * s.pos[i][3] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (size_t j = i + 1; j < n; ++j) {
            double d[3] = {s.pos[j][0] - s.pos[i][0], s.pos[j][1] - s.pos[i][1],
                           s.pos[j][2] - s.pos[i][2]};
            potential -= s.pos[i][3] * s.pos[j][3] /
                         std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2);
        }
    }
    return kinetic + potential;
}

} // namespace duet::nbody
