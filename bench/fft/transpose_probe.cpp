// duet-fft-transpose-probe: a 16x16 local-tile transpose, a naive transpose and a copy of 1024x1024
// float2 on one platform (argv[1], a name substring), GB/s: the reproducer for the slow tiled
// transpose on Duet's CPU device that made libduet-fft keep its strided column kernel.
#include <CL/cl.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
const char* src = R"(
__kernel void tiled(__global const float2 *in, __global float2 *out, uint nx, uint ny) {
    __local float2 tile[16][17];
    uint lx = get_local_id(0), ly = get_local_id(1);
    uint x0 = get_group_id(0) * 16, y0 = get_group_id(1) * 16;
    tile[ly][lx] = in[(size_t)(y0 + ly) * nx + x0 + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(size_t)(x0 + ly) * ny + y0 + lx] = tile[lx][ly];
}
__kernel void naive(__global const float2 *in, __global float2 *out, uint nx, uint ny) {
    uint x = get_global_id(0), y = get_global_id(1);
    out[(size_t)x * ny + y] = in[(size_t)y * nx + x];
}
__kernel void copy(__global const float2 *in, __global float2 *out, uint nx, uint ny) {
    uint x = get_global_id(0), y = get_global_id(1);
    out[(size_t)y * nx + x] = in[(size_t)y * nx + x];
}
)";
int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: duet-fft-transpose-probe PLATFORM\n");
        return 2;
    }
    const char* want = argv[1];
    cl_uint np;
    clGetPlatformIDs(0, nullptr, &np);
    std::vector<cl_platform_id> ps(np);
    clGetPlatformIDs(np, ps.data(), nullptr);
    cl_platform_id p = nullptr;
    for (auto q : ps) {
        char t[256];
        clGetPlatformInfo(q, CL_PLATFORM_NAME, 256, t, nullptr);
        if (strstr(t, want))
            p = q;
    }
    if (!p) {
        std::fprintf(stderr, "no platform named like %s\n", want);
        return 1;
    }
    cl_device_id d;
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr);
    cl_int e;
    cl_context c = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &e);
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, nullptr, &e);
    cl_program pr = clCreateProgramWithSource(c, 1, &src, nullptr, &e);
    e = clBuildProgram(pr, 1, &d, "", nullptr, nullptr);
    if (e) {
        printf("build %d\n", e);
        return 1;
    }
    cl_uint n = 1024;
    size_t bytes = size_t(n) * n * 8;
    cl_mem a = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, nullptr, &e),
           b = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, nullptr, &e);
    std::vector<float> z(size_t(n) * n * 2);
    for (size_t i = 0; i < z.size(); ++i)
        z[i] = float(i);
    clEnqueueWriteBuffer(q, a, CL_TRUE, 0, bytes, z.data(), 0, 0, 0);
    for (const char* name : {"tiled", "naive", "copy"}) {
        cl_kernel k = clCreateKernel(pr, name, &e);
        clSetKernelArg(k, 0, sizeof a, &a);
        clSetKernelArg(k, 1, sizeof b, &b);
        clSetKernelArg(k, 2, 4, &n);
        clSetKernelArg(k, 3, 4, &n);
        size_t g[2] = {n, n}, l[2] = {16, 16};
        double best = 1e9;
        for (int r = 0; r < 10; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            clEnqueueNDRangeKernel(q, k, 2, nullptr, g, l, 0, 0, 0);
            clFinish(q);
            best = std::min(
                best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::vector<float> o(z.size());
        clEnqueueReadBuffer(q, b, CL_TRUE, 0, bytes, o.data(), 0, 0, 0);
        bool ok = strcmp(name, "copy") == 0 ? o[2 * (5 * n + 7)] == z[2 * (5 * n + 7)]
                                            : o[2 * (7 * n + 5)] == z[2 * (5 * n + 7)];
        printf("%-5s %-6s %8.3f ms  %6.2f GB/s %s\n", want, name, best * 1e3,
               2 * bytes / best * 1e-9, ok ? "ok" : "WRONG");
        clReleaseKernel(k);
    }
}
