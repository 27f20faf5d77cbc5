// duet-ocean's simulation: kernels/ocean/ocean.cl and libduet-fft driven on one CL context, and
// the host formulas (Phillips spectrum, sky) the tests and shaders agree with.
#include "ocean_sim.hpp"

#include "duet/data_paths.hpp"
#include "duet/interop/interop.hpp"
#include "duet/interop/program.hpp"

#include <cmath>
#include <cstdlib>
#include <numbers>
#include <vector>

namespace duet::ocean {

double phillips(double kx, double kz, const SpectrumParams& p) {
    double k2 = kx * kx + kz * kz;
    if (k2 < 1e-12)
        return 0.0;
    double lw = double(p.windSpeed) * p.windSpeed / kGravity;
    double a = double(p.windDirection) * std::numbers::pi / 180.0;
    double kw = kx * std::cos(a) + kz * std::sin(a);
    double l = lw * 0.001;
    return p.amplitude * std::exp(-1.0 / (k2 * lw * lw)) / (k2 * k2) * (kw * kw / k2) *
           std::exp(-k2 * l * l);
}

void skyColor(const Sky& sky, const float dir[3], float rgb[3]) {
    // Elevation gradient: horizon haze below ~10 degrees blending into the zenith colour.
    float up = std::max(dir[1], 0.0f);
    float t = 1.0f - std::exp(-up * 4.0f);
    float sun[3] = {std::cos(sky.sunElevation) * std::cos(sky.sunAzimuth),
                    std::sin(sky.sunElevation),
                    std::cos(sky.sunElevation) * std::sin(sky.sunAzimuth)};
    float cosSun = std::max(dir[0] * sun[0] + dir[1] * sun[1] + dir[2] * sun[2], 0.0f);
    float glow = 0.25f * std::pow(cosSun, 8.0f) + (cosSun > 0.9995f ? 20.0f : 0.0f);
    for (int i = 0; i < 3; ++i)
        rgb[i] = sky.horizon[i] + (sky.zenith[i] - sky.horizon[i]) * t + sky.sunColor[i] * glow;
}

std::string kernelSource() {
    std::string path = duet::dataDirectory("DUET_KERNEL_DIR", "kernels", DUET_KERNEL_SOURCE_DIR) +
                       "/ocean/ocean.cl";
    return interop::readTextFile(path);
}

namespace {

void check(const fft::Status& s) {
    if (!s)
        throw interop::Error(s.message, s.code);
}

} // namespace

Simulator::Simulator(cl_context context, cl_device_id gpuDevice, cl_command_queue gpuQueue,
                     cl_device_id cpuDevice, cl_command_queue cpuQueue, int n)
    : m_context(context), m_gpuQueue(gpuQueue), m_cpuQueue(cpuQueue), m_n(n) {
    if (n < 16 || n > 1024 || (n & (n - 1)))
        throw interop::Error("duet-ocean: the grid must be a power of two from 16 to 1024, not " +
                                 std::to_string(n),
                             CL_INVALID_VALUE);
    std::vector<cl_device_id> devices{gpuDevice};
    if (cpuDevice != gpuDevice)
        devices.push_back(cpuDevice);
    m_program = interop::buildProgram(context, devices, kernelSource(), "", "ocean.cl");
    cl_int err;
    m_phillips = clCreateKernel(m_program, "phillips_spectrum", &err);
    interop::check(err, "clCreateKernel(phillips_spectrum)");
    m_evolve = clCreateKernel(m_program, "ocean_evolve", &err);
    interop::check(err, "clCreateKernel(ocean_evolve)");
    m_displace = clCreateKernel(m_program, "ocean_displace", &err);
    interop::check(err, "clCreateKernel(ocean_displace)");

    fft::Desc desc;
    desc.nx = size_t(n);
    desc.ny = size_t(n);
    desc.batch = 2; // h + i Dx, and Dz
    check(fft::Plan::create(context, gpuDevice, desc, m_plan));

    size_t points = size_t(n) * size_t(n);
    for (cl_mem& h : m_h0) {
        h = clCreateBuffer(context, CL_MEM_READ_WRITE, points * sizeof(cl_float4), nullptr, &err);
        interop::check(err, "clCreateBuffer(h0)");
    }
    m_spectrum = clCreateBuffer(context, CL_MEM_READ_WRITE, m_plan->bytes(), nullptr, &err);
    interop::check(err, "clCreateBuffer(spectrum)");
    m_fields = clCreateBuffer(context, CL_MEM_READ_WRITE, m_plan->bytes(), nullptr, &err);
    interop::check(err, "clCreateBuffer(fields)");
}

Simulator::~Simulator() {
    if (m_cpuQueue)
        clFinish(m_cpuQueue);
    if (m_gpuQueue)
        clFinish(m_gpuQueue);
    for (cl_event e : {m_pending, m_lastRead})
        if (e)
            clReleaseEvent(e);
    for (cl_mem m : {m_h0[0], m_h0[1], m_spectrum, m_fields})
        if (m)
            clReleaseMemObject(m);
    for (cl_kernel k : {m_phillips, m_evolve, m_displace})
        if (k)
            clReleaseKernel(k);
    if (m_program)
        clReleaseProgram(m_program);
}

void Simulator::requestSpectrum(const SpectrumParams& p) {
    int back = 1 - m_front;
    float angle = float(double(p.windDirection) * std::numbers::pi / 180.0);
    cl_float2 wind = {{std::cos(angle), std::sin(angle)}};
    cl_uint seed = p.seed;
    cl_int err = CL_SUCCESS;
    err |= clSetKernelArg(m_phillips, 0, sizeof(cl_mem), &m_h0[back]);
    err |= clSetKernelArg(m_phillips, 1, sizeof(int), &m_n);
    err |= clSetKernelArg(m_phillips, 2, sizeof(float), &p.patch);
    err |= clSetKernelArg(m_phillips, 3, sizeof(float), &p.amplitude);
    err |= clSetKernelArg(m_phillips, 4, sizeof(float), &p.windSpeed);
    err |= clSetKernelArg(m_phillips, 5, sizeof(cl_float2), &wind);
    err |= clSetKernelArg(m_phillips, 6, sizeof(cl_uint), &seed);
    interop::check(err, "clSetKernelArg(phillips_spectrum)");
    // The back buffer was the front one until the last swap: the GPU queue's last evolve may
    // still read it, so the task waits for that (an event of the other queue).
    size_t global[2] = {size_t(m_n), size_t(m_n)};
    cl_event done = nullptr;
    err = clEnqueueNDRangeKernel(m_cpuQueue, m_phillips, 2, nullptr, global, nullptr,
                                 m_lastRead ? 1 : 0, m_lastRead ? &m_lastRead : nullptr, &done);
    interop::check(err, "clEnqueueNDRangeKernel(phillips_spectrum)");
    interop::check(clFlush(m_cpuQueue), "clFlush(CPU queue)");
    if (m_pending)
        clReleaseEvent(m_pending); // the in-order CPU queue finishes it before `done`
    m_pending = done;
    m_pendingParams = p;
}

void Simulator::swapIfReady(bool wait) {
    if (!m_pending)
        return;
    cl_int status = CL_QUEUED;
    if (wait)
        interop::check(clWaitForEvents(1, &m_pending), "clWaitForEvents(phillips_spectrum)");
    interop::check(clGetEventInfo(m_pending, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                  &status, nullptr),
                   "clGetEventInfo(phillips_spectrum)");
    if (status < 0)
        throw interop::Error("duet-ocean: the spectrum task failed", status);
    if (status != CL_COMPLETE)
        return;
    clReleaseEvent(m_pending);
    m_pending = nullptr;
    m_front = 1 - m_front;
    m_params = m_pendingParams;
    ++m_generation;
}

void Simulator::waitSpectrum() {
    swapIfReady(true);
}

void Simulator::step(float t, float lambda, cl_mem positions, cl_mem normals, cl_event* first,
                     cl_event* last) {
    swapIfReady(false);
    if (m_generation == 0)
        throw interop::Error("duet-ocean: step() before any spectrum was generated");
    size_t global[2] = {size_t(m_n), size_t(m_n)};
    cl_int err = CL_SUCCESS;
    err |= clSetKernelArg(m_evolve, 0, sizeof(cl_mem), &m_h0[m_front]);
    err |= clSetKernelArg(m_evolve, 1, sizeof(cl_mem), &m_spectrum);
    err |= clSetKernelArg(m_evolve, 2, sizeof(int), &m_n);
    err |= clSetKernelArg(m_evolve, 3, sizeof(float), &m_params.patch);
    err |= clSetKernelArg(m_evolve, 4, sizeof(float), &t);
    interop::check(err, "clSetKernelArg(ocean_evolve)");
    cl_event evolved = nullptr;
    interop::check(clEnqueueNDRangeKernel(m_gpuQueue, m_evolve, 2, nullptr, global, nullptr, 0,
                                          nullptr, &evolved),
                   "clEnqueueNDRangeKernel(ocean_evolve)");
    if (m_lastRead)
        clReleaseEvent(m_lastRead);
    m_lastRead = evolved;
    clRetainEvent(evolved);
    if (first)
        *first = evolved;
    else
        clReleaseEvent(evolved);

    // Tessendorf's sum: the unnormalised inverse transform.
    check(m_plan->enqueue(m_gpuQueue, fft::Direction::Inverse, m_spectrum, m_fields, 1.0f, 1,
                          &m_lastRead, nullptr));

    err = CL_SUCCESS;
    err |= clSetKernelArg(m_displace, 0, sizeof(cl_mem), &m_fields);
    err |= clSetKernelArg(m_displace, 1, sizeof(cl_mem), &positions);
    err |= clSetKernelArg(m_displace, 2, sizeof(cl_mem), &normals);
    err |= clSetKernelArg(m_displace, 3, sizeof(int), &m_n);
    err |= clSetKernelArg(m_displace, 4, sizeof(float), &m_params.patch);
    err |= clSetKernelArg(m_displace, 5, sizeof(float), &lambda);
    interop::check(err, "clSetKernelArg(ocean_displace)");
    interop::check(clEnqueueNDRangeKernel(m_gpuQueue, m_displace, 2, nullptr, global, nullptr, 0,
                                          nullptr, last),
                   "clEnqueueNDRangeKernel(ocean_displace)");
}

} // namespace duet::ocean
