// The samples' kernels on both of Duet's devices (DUET_DEVICES=cpu,gcn): the N-body step and
// SimpleGL's sine wave computed by the software GCN model match the CPU device.
#include "duet/data_paths.hpp"
#include "support/on_device.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

std::string kernelSource(const std::string& relative) {
    std::ifstream in(duet::dataDirectory("DUET_KERNEL_DIR", "kernels", DUET_KERNEL_SOURCE_DIR) +
                     "/" + relative);
    REQUIRE(in);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

TEST_CASE("the N-body step on the GCN model matches the CPU device", "[gcn][samples]") {
    auto [cpu, gpu] = cpuAndGcn();
    const std::string src = kernelSource("nbody/nbody.cl");
    const int n = 1000; // not a multiple of the group: the last tile is partly empty
    std::vector<float> pos(4 * n), vel(4 * n);
    for (int i = 0; i < n; ++i) {
        float a = 0.37f * float(i), r = 1.0f + 0.01f * float(i % 97);
        pos[4 * i + 0] = r * std::cos(a);
        pos[4 * i + 1] = r * std::sin(a);
        pos[4 * i + 2] = 0.02f * float(i % 13) - 0.1f;
        pos[4 * i + 3] = 0.5f + 0.001f * float(i % 31);
        vel[4 * i + 0] = -0.1f * std::sin(a);
        vel[4 * i + 1] = 0.1f * std::cos(a);
    }
    std::vector<float> outPos[2], outVel[2];
    cl_device_id devices[2] = {cpu, gpu};
    for (int d = 0; d < 2; ++d) {
        OnDevice on(devices[d], src);
        cl_int e = CL_SUCCESS;
        cl_kernel k = clCreateKernel(on.program, "nbody_step", &e);
        REQUIRE_CL(e);
        cl_mem pIn = on.buffer(pos.size() * 4, pos.data()),
               pOut = on.buffer(pos.size() * 4, nullptr);
        cl_mem v = on.buffer(vel.size() * 4, vel.data());
        const size_t local = 64, global = (n + local - 1) / local * local;
        float dt = 0.005f, eps2 = 0.01f, damping = 0.999f;
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof pIn, &pIn));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof pOut, &pOut));
        REQUIRE_CL(clSetKernelArg(k, 2, sizeof v, &v));
        REQUIRE_CL(clSetKernelArg(k, 3, local * 16, nullptr));
        REQUIRE_CL(clSetKernelArg(k, 4, sizeof n, &n));
        REQUIRE_CL(clSetKernelArg(k, 5, sizeof dt, &dt));
        REQUIRE_CL(clSetKernelArg(k, 6, sizeof eps2, &eps2));
        REQUIRE_CL(clSetKernelArg(k, 7, sizeof damping, &damping));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(on.queue, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
        outPos[d] = on.read<float>(pOut, pos.size());
        outVel[d] = on.read<float>(v, vel.size());
        for (cl_mem m : {pIn, pOut, v})
            clReleaseMemObject(m);
        clReleaseKernel(k);
    }
    // Same float operations in a different order (and the CPU's rsqrt vs v_rsq): a few ulp per
    // interaction, summed over 1000 bodies.
    double worstV = 0, worstP = 0;
    for (size_t i = 0; i < vel.size(); ++i) {
        worstV = std::max(worstV, std::fabs(double(outVel[0][i]) - outVel[1][i]) /
                                      (std::fabs(double(outVel[0][i])) + 1e-2));
        worstP = std::max(worstP, std::fabs(double(outPos[0][i]) - outPos[1][i]));
    }
    INFO("worst relative velocity difference " << worstV << ", position " << worstP);
    CHECK(worstV < 1e-4);
    CHECK(worstP < 1e-5);
    // And the step moved something: velocities differ from the initial ones.
    CHECK(outVel[1][0] != vel[0]);
}

TEST_CASE("SimpleGL's sine wave on the GCN model matches the CPU device", "[gcn][samples]") {
    auto [cpu, gpu] = cpuAndGcn();
    const std::string src = kernelSource("simplegl/sine_wave.cl");
    const int width = 37, height = 23;
    std::vector<float> pos[2];
    std::vector<cl_uchar> col[2];
    cl_device_id devices[2] = {cpu, gpu};
    for (int d = 0; d < 2; ++d) {
        OnDevice on(devices[d], src);
        cl_int e = CL_SUCCESS;
        cl_kernel k = clCreateKernel(on.program, "sine_wave", &e);
        REQUIRE_CL(e);
        cl_mem p = on.buffer(size_t(width) * height * 16, nullptr);
        cl_mem c = on.buffer(size_t(width) * height * 4, nullptr);
        float t = 0.7f, frequency = 4.0f, amplitude = 0.25f;
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof p, &p));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof c, &c));
        REQUIRE_CL(clSetKernelArg(k, 2, sizeof width, &width));
        REQUIRE_CL(clSetKernelArg(k, 3, sizeof height, &height));
        REQUIRE_CL(clSetKernelArg(k, 4, sizeof t, &t));
        REQUIRE_CL(clSetKernelArg(k, 5, sizeof frequency, &frequency));
        REQUIRE_CL(clSetKernelArg(k, 6, sizeof amplitude, &amplitude));
        const size_t local[2] = {8, 8}, global[2] = {40, 24}; // partial groups are masked
        REQUIRE_CL(
            clEnqueueNDRangeKernel(on.queue, k, 2, nullptr, global, local, 0, nullptr, nullptr));
        pos[d] = on.read<float>(p, size_t(width) * height * 4);
        col[d] = on.read<cl_uchar>(c, size_t(width) * height * 4);
        clReleaseMemObject(p);
        clReleaseMemObject(c);
        clReleaseKernel(k);
    }
    double worst = 0;
    for (size_t i = 0; i < pos[0].size(); ++i)
        worst = std::max(worst, std::fabs(double(pos[0][i]) - pos[1][i]));
    CHECK(worst < 1e-5); // sin/cos within their ulp limits on both
    int worstColour = 0;
    for (size_t i = 0; i < col[0].size(); ++i)
        worstColour = std::max(worstColour, std::abs(int(col[0][i]) - int(col[1][i])));
    CHECK(worstColour <= 1);
    // The mesh is not flat.
    float lo = 1, hi = -1;
    for (size_t i = 1; i < pos[1].size(); i += 4) {
        lo = std::min(lo, pos[1][i]);
        hi = std::max(hi, pos[1][i]);
    }
    CHECK(hi - lo > 0.3f);
}
