// printf, program-scope variables and the generic address space on the GCN device
// (DUET_DEVICES=cpu,gcn): the software model runs what LLVM's AMDGPU backend emits, and its
// results (and printed text) match the CPU device's.
#include "support/cl_test.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace duet::test;

namespace {

/// Runs `body` with file descriptor `fd` (1: stdout, 2: stderr) sent to a file; returns what
/// was written there.
template <class F> std::string capture(int which, F&& body) {
    std::fflush(stdout);
    std::fflush(stderr);
    char path[] = "/tmp/duet-gcn-features-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    int saved = dup(which);
    dup2(fd, which);
    body();
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(saved, which);
    close(saved);
    close(fd);
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    unlink(path);
    return ss.str();
}

std::vector<std::string> sortedLines(const std::string& text) {
    std::vector<std::string> lines;
    std::stringstream ss(text);
    for (std::string l; std::getline(ss, l);)
        lines.push_back(l);
    std::sort(lines.begin(), lines.end());
    return lines;
}

struct OnDevice {
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    cl_program program = nullptr;
    OnDevice(cl_device_id d, const std::string& source, const std::string& options = "")
        : device(d) {
        cl_int e = CL_SUCCESS;
        context = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &e);
        REQUIRE_CL(e);
        queue = clCreateCommandQueueWithProperties(context, d, nullptr, &e);
        REQUIRE_CL(e);
        program = buildProgram(context, d, source, options);
        REQUIRE(program);
    }
    ~OnDevice() {
        clReleaseProgram(program);
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
    cl_kernel kernel(const char* name) {
        cl_int e = CL_SUCCESS;
        cl_kernel k = clCreateKernel(program, name, &e);
        REQUIRE_CL(e);
        return k;
    }
    cl_mem buffer(size_t bytes, const void* init = nullptr) {
        cl_int e = CL_SUCCESS;
        cl_mem m = clCreateBuffer(context, init ? CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE, bytes,
                                  const_cast<void*>(init), &e);
        REQUIRE_CL(e);
        return m;
    }
    template <class T> std::vector<T> read(cl_mem m, size_t count) {
        std::vector<T> v(count);
        REQUIRE_CL(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, count * sizeof(T), v.data(), 0,
                                       nullptr, nullptr));
        return v;
    }
    void run(cl_kernel k, size_t global, size_t local = 0) {
        REQUIRE_CL(clEnqueueNDRangeKernel(queue, k, 1, nullptr, &global, local ? &local : nullptr,
                                          0, nullptr, nullptr));
        REQUIRE_CL(clFinish(queue));
    }
};

cl_device_id deviceOfType(cl_device_type type) {
    cl_device_id d = nullptr;
    REQUIRE_CL(clGetDeviceIDs(platformUnderTest(), type, 1, &d, nullptr));
    return d;
}

/// What one program's kernel prints on `device`.
std::string printed(cl_device_id device, const std::string& src, size_t global,
                    const std::string& options = "") {
    OnDevice on(device, src, options);
    cl_kernel k = on.kernel("p");
    cl_mem out = on.buffer(sizeof(int) * global);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    std::string text = capture(1, [&] { on.run(k, global); });
    clReleaseMemObject(out);
    clReleaseKernel(k);
    return text;
}

} // namespace

TEST_CASE("printf on the GCN device prints what the CPU device prints", "[gcn][printf]") {
    const cl_device_id cpu = deviceOfType(CL_DEVICE_TYPE_CPU), gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    size_t bufferSize = 0;
    REQUIRE_CL(clGetDeviceInfo(gpu, CL_DEVICE_PRINTF_BUFFER_SIZE, sizeof bufferSize, &bufferSize,
                               nullptr));
    CHECK(bufferSize >= 1024 * 1024); // the full profile's minimum

    const std::string src = R"CL(
__kernel void p(__global int* r) {
    int i = (int)get_global_id(0);
    float4 v = (float4)(1.0f, 2.5f, -3.0f, (float)i);
    int3 t = (int3)(i, -i, 7);
    short2 s = (short2)(-4, 5);
    uchar4 c = (uchar4)(1, 2, 3, 255);
    printf("i=%d x=%.3f hex=%#x str=%s c=%c pct=%% colon:%s\n", i, 0.5f * i, 255, "abc", 'Z', "x:y");
    printf("v=%.1v4hlf t=%v3d s=%v2hd c=%v4hhu\n", v, t, s, c);
    printf("long=%ld ulong=%lu double=%.4f e=%e g=%g\n", (long)i - 5000000000l, (ulong)i << 40,
           1.0 / 3.0 + i, 12345.678f, 0.0001f);
    if (i == 3)
        printf("only three\n");
    r[i] = printf("%s", "");
}
)CL";
    const std::string onCpu = printed(cpu, src, 40), onGcn = printed(gpu, src, 40);
    INFO("CPU printed:\n" << onCpu << "GCN printed:\n" << onGcn);
    CHECK(onGcn.find("i=3 x=1.500 hex=0xff str=abc c=Z pct=% colon:x:y\n") != std::string::npos);
    CHECK(onGcn.find("v=1.0,2.5,-3.0,3.0 t=3,-3,7 s=-4,5 c=1,2,3,255\n") != std::string::npos);
    CHECK(onGcn.find("only three\n") != std::string::npos);
    // Work-items run in parallel on both devices: the same lines, in some order.
    CHECK(sortedLines(onGcn) == sortedLines(onCpu));
    CHECK(sortedLines(onGcn).size() == 3 * 40 + 1);
}

TEST_CASE("a work-item's printf lines keep their order on the GCN device", "[gcn][printf]") {
    const cl_device_id gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    const std::string src = R"CL(
__kernel void p(__global int* r) {
    for (int n = 0; n < 5; ++n)
        printf("step %d\n", n);
    r[0] = 0;
}
)CL";
    CHECK(printed(gpu, src, 1) == "step 0\nstep 1\nstep 2\nstep 3\nstep 4\n");
}

TEST_CASE("printf buffer overflow on the GCN device is reported, whole lines kept",
          "[gcn][printf]") {
    const cl_device_id gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    // 4 + 4 * 4 bytes per record: 65536 records are 1.25 MiB, beyond the 1 MiB buffer.
    const std::string src = R"CL(
__kernel void p(__global int* r) {
    int i = (int)get_global_id(0);
    printf("%d %d %d %d\n", i, i + 1, i + 2, i + 3);
    r[i] = i;
}
)CL";
    const size_t n = 65536;
    OnDevice on(gpu, src);
    cl_kernel k = on.kernel("p");
    cl_mem out = on.buffer(sizeof(int) * n);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    std::string text;
    std::string err = capture(2, [&] { text = capture(1, [&] { on.run(k, n, 256); }); });
    INFO("stderr: " << err);
    CHECK(err.find("overflowed") != std::string::npos);
    CHECK(err.find("1048576-byte printf buffer") != std::string::npos);
    std::vector<std::string> lines = sortedLines(text);
    CHECK(lines.size() == (1u << 20) / 20); // every record that fit, none torn
    CHECK(lines.size() < n);
    for (const std::string& l : lines) {
        int a = -1, b = -1, c = -1, d = -1;
        REQUIRE(std::sscanf(l.c_str(), "%d %d %d %d", &a, &b, &c, &d) == 4);
        CHECK((b == a + 1 && c == a + 2 && d == a + 3));
    }
    // The kernel's own results are intact, and the next dispatch prints in full again.
    std::vector<int> r = on.read<int>(out, n);
    for (size_t i = 0; i < n; ++i)
        if (r[i] != int(i))
            FAIL("r[" << i << "] = " << r[i]);
    std::string again;
    err = capture(2, [&] { again = capture(1, [&] { on.run(k, 8); }); });
    CHECK(sortedLines(again).size() == 8);
    CHECK(err.find("overflowed") == std::string::npos);
    clReleaseMemObject(out);
    clReleaseKernel(k);
}
