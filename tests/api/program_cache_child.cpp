// A separate process for program_cache_test: builds and runs one kernel with the program cache
// as its environment sets it, so that several processes can share a cache folder at once.
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: program_cache_child FACTOR\n");
        return 2;
    }
    const int factor = std::atoi(argv[1]);
    cl_platform_id platforms[8];
    cl_uint count = 0;
    clGetPlatformIDs(8, platforms, &count);
    cl_platform_id platform = nullptr;
    for (cl_uint i = 0; i < count; ++i) {
        char name[256] = {};
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, nullptr);
        if (std::string(name).find("Duet") != std::string::npos)
            platform = platforms[i];
    }
    cl_device_id device = nullptr;
    if (!platform || clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr)) {
        std::fprintf(stderr, "no Duet device\n");
        return 1;
    }
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, nullptr, &err);
    const char* source = "__kernel void scale(__global int* out) {\n"
                         "    size_t i = get_global_id(0);\n"
                         "    out[i] = (int)i * FACTOR;\n"
                         "}\n";
    cl_program p = clCreateProgramWithSource(ctx, 1, &source, nullptr, &err);
    const std::string options = "-D FACTOR=" + std::to_string(factor);
    if (clBuildProgram(p, 1, &device, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
        std::fprintf(stderr, "build failed\n");
        return 1;
    }
    cl_kernel k = clCreateKernel(p, "scale", &err);
    const size_t n = 64;
    cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof(int), nullptr, &err);
    clSetKernelArg(k, 0, sizeof out, &out);
    clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
    std::vector<int> result(n);
    clEnqueueReadBuffer(q, out, CL_TRUE, 0, n * sizeof(int), result.data(), 0, nullptr, nullptr);
    for (size_t i = 0; i < n; ++i)
        if (result[i] != static_cast<int>(i) * factor) {
            std::fprintf(stderr, "wrong result at %zu: %d\n", i, result[i]);
            return 1;
        }
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    std::printf("ok\n");
    return 0;
}
