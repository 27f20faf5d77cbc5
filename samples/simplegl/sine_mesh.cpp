// The SimpleGL kernel wrapper and its host reference.
#include "sine_mesh.hpp"

#include "duet/data_paths.hpp"
#include "duet/interop/interop.hpp"
#include "duet/interop/program.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace duet::simplegl {

namespace {

void gridCoordinates(const Wave& wave, int x, int y, float& u, float& v) {
    u = wave.width > 1 ? float(x) / float(wave.width - 1) * 2.0f - 1.0f : 0.0f;
    v = wave.height > 1 ? float(y) / float(wave.height - 1) * 2.0f - 1.0f : 0.0f;
}

float height(const Wave& wave, float u, float v) {
    return wave.amplitude * std::sin(u * wave.frequency + wave.time) *
           std::cos(v * wave.frequency + wave.time);
}

} // namespace

cl_float4 referencePosition(const Wave& wave, int x, int y) {
    float u, v;
    gridCoordinates(wave, x, y, u, v);
    return {{u, height(wave, u, v), v, 1.0f}};
}

std::array<std::uint8_t, 4> referenceColor(const Wave& wave, int x, int y) {
    float u, v;
    gridCoordinates(wave, x, y, u, v);
    float h = height(wave, u, v);
    float s =
        wave.amplitude > 0.0f ? std::clamp(0.5f + 0.5f * h / wave.amplitude, 0.0f, 1.0f) : 0.5f;
    float c[3] = {0.15f + 0.85f * s, 0.35f + 0.4f * (1.0f - std::fabs(2.0f * s - 1.0f)),
                  1.0f - 0.8f * s};
    std::array<std::uint8_t, 4> out{0, 0, 0, 255};
    for (int k = 0; k < 3; ++k)
        out[k] = std::uint8_t(std::clamp(std::nearbyint(c[k] * 255.0f), 0.0f, 255.0f));
    return out;
}

std::string kernelSource() {
    std::string path = duet::dataDirectory("DUET_KERNEL_DIR", "kernels", DUET_KERNEL_SOURCE_DIR) +
                       "/simplegl/sine_wave.cl";
    return interop::readTextFile(path);
}

SineMesh::SineMesh(cl_context context, cl_device_id device, cl_command_queue queue)
    : m_queue(queue) {
    m_program = interop::buildProgram(context, {device}, kernelSource(), "", "sine_wave.cl");
    cl_int err;
    m_kernel = clCreateKernel(m_program, "sine_wave", &err);
    interop::check(err, "clCreateKernel(sine_wave)");
    size_t maxLocal = 0;
    interop::check(clGetKernelWorkGroupInfo(m_kernel, device, CL_KERNEL_WORK_GROUP_SIZE,
                                            sizeof maxLocal, &maxLocal, nullptr),
                   "clGetKernelWorkGroupInfo(sine_wave)");
    while (m_tile > 1 && m_tile * m_tile > maxLocal)
        m_tile /= 2;
}

SineMesh::~SineMesh() {
    if (m_kernel)
        clReleaseKernel(m_kernel);
    if (m_program)
        clReleaseProgram(m_program);
}

void SineMesh::write(cl_mem positions, cl_mem colors, const Wave& wave, cl_event* event) {
    auto arg = [&](cl_uint i, size_t size, const void* value) {
        interop::check(clSetKernelArg(m_kernel, i, size, value), "clSetKernelArg(sine_wave)");
    };
    arg(0, sizeof positions, &positions);
    arg(1, sizeof colors, &colors);
    arg(2, sizeof wave.width, &wave.width);
    arg(3, sizeof wave.height, &wave.height);
    arg(4, sizeof wave.time, &wave.time);
    arg(5, sizeof wave.frequency, &wave.frequency);
    arg(6, sizeof wave.amplitude, &wave.amplitude);
    // Square tiles as large as the kernel allows (globals rounded up to them; the kernel's bounds
    // check drops the extra work-items).
    size_t local[2] = {m_tile, m_tile};
    size_t global[2] = {(size_t(wave.width) + m_tile - 1) / m_tile * m_tile,
                        (size_t(wave.height) + m_tile - 1) / m_tile * m_tile};
    interop::check(
        clEnqueueNDRangeKernel(m_queue, m_kernel, 2, nullptr, global, local, 0, nullptr, event),
        "clEnqueueNDRangeKernel(sine_wave)");
}

} // namespace duet::simplegl
