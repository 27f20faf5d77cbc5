// printf from kernels on any device: formats, vector specifiers, strings from every address
// space, printf's result, whole lines, output in command order by the time a command completes.
#include "support/capture.hpp"
#include "support/cl_test.hpp"

#include <algorithm>
#include <set>
#include <sstream>

using namespace duet::test;

TEST_CASE("printf prints scalars, strings and vectors as OpenCL C specifies", "[api][printf]") {
    WithQueue f;
    const char* src = R"CL(
__kernel void p(int i, float x) {
    float4 v = (float4)(1.0f, 2.5f, -3.0f, 4.0f);
    int2 iv = (int2)(7, -8);
    uchar4 cv = (uchar4)(1, 2, 3, 255);
    printf("i=%d x=%.2f hex=%#x str=%s c=%c\n", i, x, 255, "abc", 'Z');
    printf("v=%.1v4hlf iv=%v2hld cv=%v4hhu\n", v, iv, cv);
    printf("long=%ld unsigned=%u pct=%%\n", (long)-5000000000, 42u);
}
)CL";
    cl_program p = buildProgram(f.context, f.device, src);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "p", &err);
    REQUIRE(err == CL_SUCCESS);
    int i = -12;
    float x = 3.14159f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof i, &i));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof x, &x));
    std::string out = captureStdout([&] {
        REQUIRE_CL(clEnqueueTask(f.queue, k, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(f.queue));
    });
    INFO("printed:\n" << out);
    CHECK(out.find("i=-12 x=3.14 hex=0xff str=abc c=Z\n") != std::string::npos);
    CHECK(out.find("v=1.0,2.5,-3.0,4.0 iv=7,-8 cv=1,2,3,255\n") != std::string::npos);
    CHECK(out.find("long=-5000000000 unsigned=42 pct=%\n") != std::string::npos);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("each work-item's printf lines arrive whole", "[api][printf]") {
    WithQueue f;
    const char* src = "__kernel void p() { printf(\"item %d of %d\\n\", (int)get_global_id(0), "
                      "(int)get_global_size(0)); }";
    cl_program p = buildProgram(f.context, f.device, src);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "p", &err);
    size_t g = 64;
    std::string out = captureStdout([&] {
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(f.queue));
    });
    for (int item = 0; item < 64; ++item)
        CHECK(out.find("item " + std::to_string(item) + " of 64\n") != std::string::npos);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("printf %s prints strings from every address space, from helpers too", "[api][printf]") {
    WithQueue f;
    // Strings known only at run time (the GPU devices copy them into their printf buffer): a
    // __constant table, a __global buffer, __local and private arrays, a null pointer; a string
    // chosen per work-item in a helper whose printf result the kernel stores.
    const char* src = R"CL(
__constant char names[3][8] = {"one", "two", "three"};
int say(__constant char* who, int i) {
    return printf("%s says %s%c\n", who, (i & 1) ? "odd" : "even", 'A' + i);
}
__kernel void p(__global const char* text, __global int* r) {
    __local char shared[4];
    int i = (int)get_global_id(0);
    char mine[8] = {'i', 't', 'e', 'm', (char)('0' + i), 0, 0, 0};
    if (get_local_id(0) == 0) {
        shared[0] = 'l'; shared[1] = 'd'; shared[2] = 's'; shared[3] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __global const char* none = (__global const char*)0;
    r[i] = printf("%d: %s|%s|%s|%s|%.3s|%s|%v2d|%ld\n", i, names[i % 3], text + 2 * i, shared,
                  mine, mine, none, (int2)(i, -i), (long)i << 33) + say(names[i % 3], i);
}
)CL";
    cl_program p = buildProgram(f.context, f.device, src);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "p", &err);
    REQUIRE(err == CL_SUCCESS);
    const char text[] = "aabbccdd";
    cl_mem t =
        f.buffer(sizeof text, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, const_cast<char*>(text));
    cl_mem r = f.buffer(4 * sizeof(int));
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof t, &t));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof r, &r));
    const size_t global = 4, local = 2;
    std::string out = captureStdout([&] {
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(f.queue));
    });
    INFO("printed:\n" << out);
    for (const char* line :
         {"0: one|aabbccdd|lds|item0|ite|(null)|0,0|0\n",
          "1: two|bbccdd|lds|item1|ite|(null)|1,-1|8589934592\n",
          "2: three|ccdd|lds|item2|ite|(null)|2,-2|17179869184\n",
          "3: one|dd|lds|item3|ite|(null)|3,-3|25769803776\n", "one says evenA\n",
          "two says oddB\n", "three says evenC\n", "one says oddD\n"})
        CHECK(out.find(line) != std::string::npos);
    CHECK(f.read<int>(r, 4) == std::vector<int>{0, 0, 0, 0}); // printf's result: success
    clReleaseMemObject(r);
    clReleaseMemObject(t);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("printf output arrives in command order, each command's by the time it completes",
          "[api][printf]") {
    WithQueue f;
    const char* src = "__kernel void p(int n, __global int* r) { printf(\"command %d\\n\", n); }\n"
                      "__kernel void q(__global int* r) { r[get_global_id(0)] += 1; }\n";
    cl_program p = buildProgram(f.context, f.device, src);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "p", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel quiet = clCreateKernel(p, "q", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem r = f.buffer(64 * sizeof(int));
    const int zero = 0;
    REQUIRE_CL(clEnqueueFillBuffer(f.queue, r, &zero, sizeof zero, 0, 64 * sizeof(int), 0, nullptr,
                                   nullptr));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof r, &r));
    REQUIRE_CL(clSetKernelArg(quiet, 0, sizeof r, &r));
    const size_t one = 1, many = 64;
    std::string out = captureStdout([&] {
        cl_event third = nullptr;
        for (int n = 0; n < 3; ++n) {
            // A kernel that does not print between those that do.
            REQUIRE_CL(clEnqueueNDRangeKernel(f.queue, quiet, 1, nullptr, &many, nullptr, 0,
                                              nullptr, nullptr));
            REQUIRE_CL(clSetKernelArg(k, 0, sizeof n, &n));
            REQUIRE_CL(clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &one, nullptr, 0, nullptr,
                                              n == 2 ? &third : nullptr));
        }
        REQUIRE_CL(clWaitForEvents(1, &third)); // flushed when its event completes
        clReleaseEvent(third);
    });
    CHECK(out == "command 0\ncommand 1\ncommand 2\n");
    CHECK(f.read<int>(r, 64) == std::vector<int>(64, 3));
    clReleaseMemObject(r);
    clReleaseKernel(quiet);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("printf beyond the printf buffer: a call that returned 0 printed its line whole, one "
          "that returned -1 nothing",
          "[api][printf]") {
    WithQueue f;
    size_t bufferSize = 0;
    REQUIRE_CL(clGetDeviceInfo(f.device, CL_DEVICE_PRINTF_BUFFER_SIZE, sizeof bufferSize,
                               &bufferSize, nullptr));
    REQUIRE(bufferSize >= 1024 * 1024); // the full profile's minimum
    // Half as much again as the buffer holds, at the 52 bytes a GPU device's record of this
    // format takes; a device that prints as it goes (the CPU) prints every line.
    const char* src =
        "__kernel void p(__global int* r) {\n"
        "    int i = (int)get_global_id(0);\n"
        "    r[i] = printf(\"%s %d\\n\", \"0123456789012345678901234567890123456789\","
        " i);\n"
        "}\n";
    cl_program p = buildProgram(f.context, f.device, src);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "p", &err);
    REQUIRE(err == CL_SUCCESS);
    const size_t n = (bufferSize / 52 * 3 / 2 + 255) / 256 * 256, local = 256;
    cl_mem r = f.buffer(n * sizeof(int));
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof r, &r));
    std::string out;
    // stderr: the GPU devices' report of what was dropped.
    captureFd(2, [&] {
        out = captureStdout([&] {
            REQUIRE_CL(
                clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &n, &local, 0, nullptr, nullptr));
            REQUIRE_CL(clFinish(f.queue));
        });
    });
    const std::vector<int> result = f.read<int>(r, n);
    std::multiset<std::string> printed, expected;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
        printed.insert(line);
    for (size_t i = 0; i < n; ++i) {
        CHECK((result[i] == 0 || result[i] == -1));
        if (result[i] == 0)
            expected.insert("0123456789012345678901234567890123456789 " + std::to_string(i));
    }
    CHECK(expected.size() >= bufferSize / 52); // at least what fits
    CHECK(printed == expected);
    clReleaseMemObject(r);
    clReleaseKernel(k);
    clReleaseProgram(p);
}
