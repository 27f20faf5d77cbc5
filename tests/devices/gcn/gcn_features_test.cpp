// printf, program-scope variables and the generic address space on the GCN device
// (DUET_DEVICES=cpu,gcn): the software model runs what LLVM's AMDGPU backend emits, and its
// results (and printed text) match the CPU device's.
#include "support/on_device.hpp"
#include "support/capture.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

std::vector<std::string> sortedLines(const std::string& text) {
    std::vector<std::string> lines;
    std::stringstream ss(text);
    for (std::string l; std::getline(ss, l);)
        lines.push_back(l);
    std::sort(lines.begin(), lines.end());
    return lines;
}

/// What one program's kernel prints on `device`.
std::string printed(cl_device_id device, const std::string& src, size_t global,
                    const std::string& options = "") {
    OnDevice on(device, src, options);
    cl_kernel k = on.kernel("p");
    cl_mem out = on.buffer(sizeof(int) * global);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    std::string text = captureStdout([&] { on.run(k, global); });
    clReleaseMemObject(out);
    clReleaseKernel(k);
    return text;
}

} // namespace

TEST_CASE("printf on the GCN device prints what the CPU device prints", "[gcn][printf]") {
    const cl_device_id cpu = deviceOfType(CL_DEVICE_TYPE_CPU),
                       gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
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
    std::string err = captureFd(2, [&] { text = captureStdout([&] { on.run(k, n, 256); }); });
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
    err = captureFd(2, [&] { again = captureStdout([&] { on.run(k, 8); }); });
    CHECK(sortedLines(again).size() == 8);
    CHECK(err.find("overflowed") == std::string::npos);
    clReleaseMemObject(out);
    clReleaseKernel(k);
}

TEST_CASE("program-scope __constant tables on the GCN device", "[gcn][globals]") {
    const cl_device_id cpu = deviceOfType(CL_DEVICE_TYPE_CPU),
                       gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    const std::string src = R"CL(
__constant int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__constant float scale = 0.5f;
__constant struct { int a; float b[2]; } pair = {7, {1.5f, -2.0f}};
__constant int* __constant pointerToTable = &table[2]; // needs a relocation
__kernel void k(__global float* out) {
    int i = (int)get_global_id(0);
    out[i] = table[i % 8] * scale + pair.a * pair.b[i & 1] + pointerToTable[i % 4];
}
)CL";
    std::vector<float> results[2];
    cl_device_id devices[2] = {cpu, gpu};
    for (int d = 0; d < 2; ++d) {
        OnDevice on(devices[d], src);
        cl_kernel k = on.kernel("k");
        cl_mem out = on.buffer(64 * sizeof(float));
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
        on.run(k, 64);
        results[d] = on.read<float>(out, 64);
        size_t total = 1;
        REQUIRE_CL(clGetProgramBuildInfo(on.program, devices[d],
                                         CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE, sizeof total,
                                         &total, nullptr));
        CHECK(total == 0); // __constant variables are not in the global address space
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    const int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
    for (int i = 0; i < 64; ++i)
        CHECK(results[1][i] == table[i % 8] * 0.5f + 7 * (i & 1 ? -2.0f : 1.5f) + table[2 + i % 4]);
    CHECK(results[1] == results[0]);
}

TEST_CASE("OpenCL C 3.0 program-scope __global variables on the GCN device", "[gcn][globals]") {
    const std::string std = "-cl-std=CL3.0"; // the device does not list OpenCL C 2.0
    const cl_device_id cpu = deviceOfType(CL_DEVICE_TYPE_CPU),
                       gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    size_t maxSize = 0;
    REQUIRE_CL(clGetDeviceInfo(gpu, CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE, sizeof maxSize, &maxSize,
                               nullptr));
    CHECK(maxSize >= 65536);
    // Initialised and zero-initialised variables, a pointer initialised to another variable
    // (a relocation), and state kept between launches of different kernels.
    const std::string src = R"CL(
__global int counter = 100;
__global float history[16];
__global int* __global cursor = &counter;
static __global long hidden = -7;
__global int untouched[4]; // zero-initialised (.bss), never written
__kernel void bump(__global int* out) {
    int i = (int)get_global_id(0);
    atomic_add(&counter, 1);
    history[i] = (float)i * 0.25f;
    out[i] = (int)hidden;
}
__kernel void report(__global int* out) {
    out[0] = *cursor;
    float s = 0.0f;
    for (int i = 0; i < 16; ++i)
        s += history[i];
    out[1] = (int)(s * 4.0f);
    hidden += 1;
    out[2] = (int)hidden + untouched[2] + untouched[3];
}
)CL";
    std::vector<int> results[2];
    cl_device_id devices[2] = {cpu, gpu};
    for (int d = 0; d < 2; ++d) {
        OnDevice on(devices[d], src, std);
        size_t total = 0;
        REQUIRE_CL(clGetProgramBuildInfo(on.program, devices[d],
                                         CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE, sizeof total,
                                         &total, nullptr));
        CHECK(total >= 4 + 16 * 4 + 8 + 8 + 16);
        CHECK(total <= 4 + 16 * 4 + 8 + 8 + 16 + 32); // padding at most
        cl_kernel bump = on.kernel("bump"), report = on.kernel("report");
        cl_mem out = on.buffer(16 * sizeof(int));
        REQUIRE_CL(clSetKernelArg(bump, 0, sizeof out, &out));
        REQUIRE_CL(clSetKernelArg(report, 0, sizeof out, &out));
        on.run(bump, 16);
        CHECK(on.read<int>(out, 16) == std::vector<int>(16, -7));
        on.run(report, 1);
        std::vector<int> first = on.read<int>(out, 3);
        on.run(bump, 16);
        on.run(report, 1);
        std::vector<int> second = on.read<int>(out, 3);
        results[d] = {first[0], first[1], first[2], second[0], second[1], second[2]};
        clReleaseMemObject(out);
        clReleaseKernel(bump);
        clReleaseKernel(report);
    }
    CHECK(results[1] == std::vector<int>{116, 120, -6, 132, 120, -5});
    CHECK(results[1] == results[0]);
}

TEST_CASE("generic address space on the GCN device", "[gcn][generic]") {
    const cl_device_id cpu = deviceOfType(CL_DEVICE_TYPE_CPU),
                       gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    cl_bool generic = CL_FALSE;
    REQUIRE_CL(clGetDeviceInfo(gpu, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, sizeof generic,
                               &generic, nullptr));
    CHECK(generic == CL_TRUE);
    size_t bytes = 0;
    REQUIRE_CL(clGetDeviceInfo(gpu, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &bytes));
    std::vector<cl_name_version> features(bytes / sizeof(cl_name_version));
    REQUIRE_CL(clGetDeviceInfo(gpu, CL_DEVICE_OPENCL_C_FEATURES, bytes, features.data(), nullptr));
    bool listed = false;
    for (const cl_name_version& f : features)
        listed = listed || std::string(f.name) == "__opencl_c_generic_address_space";
    CHECK(listed);

    // Generic pointers into each space (FLAT through the private and shared apertures), the
    // casts back, and a function called with pointers of all three spaces.
    const std::string src = R"CL(
int sum3(const int* p) { return p[0] + p[1] + p[2]; }
void scaleAll(int* p, int n, int by) { for (int i = 0; i < n; ++i) p[i] *= by; }
int kindOf(int* p) {
    return (to_global(p) != NULL ? 1 : 0) | (to_local(p) != NULL ? 2 : 0) |
           (to_private(p) != NULL ? 4 : 0);
}
__kernel void k(__global int* g, __global int* out) {
    __local int l[64 * 3];
    int priv[3];
    int i = (int)get_local_id(0), gid = (int)get_global_id(0);
    for (int j = 0; j < 3; ++j) {
        l[3 * i + j] = gid + 10 * j;
        priv[j] = gid * j;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int* pg = &g[3 * gid];
    int* pl = &l[3 * ((i + 1) % (int)get_local_size(0))];
    int* pp = priv;
    scaleAll(pp, 3, 2);
    int r = sum3(pg) + 1000 * sum3(pl) + 100000 * sum3(pp);
    out[4 * gid + 0] = r;
    out[4 * gid + 1] = kindOf(pg) | (kindOf(pl) << 3) | (kindOf(pp) << 6) |
                       ((get_fence(pl) == CLK_LOCAL_MEM_FENCE) << 9) |
                       ((get_fence(pg) == CLK_GLOBAL_MEM_FENCE) << 10);
    __global int* back = to_global(pg);
    out[4 * gid + 2] = back ? back[1] : -1;
    int* choose = (gid & 1) ? pl : pp; // one generic pointer, divergent spaces
    out[4 * gid + 3] = choose[2];
}
)CL";
    const size_t n = 128, local = 64;
    std::vector<int> g(3 * n);
    for (size_t i = 0; i < g.size(); ++i)
        g[i] = int(i * 7 % 23);
    std::vector<int> results[2];
    cl_device_id devices[2] = {cpu, gpu};
    for (int d = 0; d < 2; ++d) {
        OnDevice on(devices[d], src, "-cl-std=CL3.0");
        cl_kernel k = on.kernel("k");
        cl_mem gb = on.buffer(g.size() * sizeof(int), g.data()),
               out = on.buffer(4 * n * sizeof(int));
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof gb, &gb));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof out, &out));
        on.run(k, n, local);
        results[d] = on.read<int>(out, 4 * n);
        clReleaseMemObject(gb);
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    for (int gid = 0; gid < int(n); ++gid) {
        const int i = gid % int(local), base = gid - i, next = base + (i + 1) % int(local);
        const int sg = g[3 * gid] + g[3 * gid + 1] + g[3 * gid + 2];
        const int sl = 3 * next + 30, sp = 2 * (gid * 0 + gid * 1 + gid * 2);
        INFO("work-item " << gid);
        CHECK(results[1][4 * gid + 0] == sg + 1000 * sl + 100000 * sp);
        CHECK(results[1][4 * gid + 1] == (1 | (2 << 3) | (4 << 6) | (1 << 9) | (1 << 10)));
        CHECK(results[1][4 * gid + 2] == g[3 * gid + 1]);
        CHECK(results[1][4 * gid + 3] == ((gid & 1) ? next + 20 : 2 * gid * 2));
    }
    CHECK(results[1] == results[0]);
}

TEST_CASE("printf %s prints strings from every address space on the GCN device", "[gcn][printf]") {
    const cl_device_id cpu = deviceOfType(CL_DEVICE_TYPE_CPU),
                       gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    // Strings known only at run time: an indexed __constant table, a __global buffer, __local
    // and private arrays, with width, precision and an empty string; vectors and a long after
    // a string (the record's later arguments move with the string's length).
    const std::string src = R"CL(
__constant char names[3][8] = {"one", "two", "three"};
__kernel void p(__global const char* text, __global int* r) {
    __local char shared[8];
    int i = (int)get_global_id(0);
    char mine[8] = {'i', 't', 'e', 'm', (char)('0' + i), 0, 0, 0};
    if (get_local_id(0) == 0) {
        shared[0] = 'l'; shared[1] = 'd'; shared[2] = 's'; shared[3] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    r[i] = printf("%s|%s|%s|%s|%-7s|%.3s|%s|%v2d|%ld\n", names[i % 3], text + 2 * i, shared,
                  mine, names[(i + 1) % 3], mine, text + 8, (int2)(i, -i), (long)i << 33);
}
)CL";
    const char text[] = "aabbccdd";
    auto run = [&](cl_device_id d, std::vector<int>& result) {
        OnDevice on(d, src);
        cl_kernel k = on.kernel("p");
        cl_mem t = on.buffer(sizeof text, text);
        cl_mem out = on.buffer(sizeof(int) * 4);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof t, &t));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof out, &out));
        std::string printedText = captureStdout([&] { on.run(k, 4, 2); });
        result = on.read<int>(out, 4);
        clReleaseMemObject(t);
        clReleaseMemObject(out);
        clReleaseKernel(k);
        CHECK(buildLog(on.program, d).find("???") == std::string::npos);
        return printedText;
    };
    std::vector<int> onCpuResult, onGcnResult;
    const std::string onCpu = run(cpu, onCpuResult), onGcn = run(gpu, onGcnResult);
    INFO("CPU printed:\n" << onCpu << "GCN printed:\n" << onGcn);
    CHECK(sortedLines(onGcn) ==
          std::vector<std::string>{"one|aabbccdd|lds|item0|two    |ite||0,0|0",
                                   "one|dd|lds|item3|two    |ite||3,-3|25769803776",
                                   "three|ccdd|lds|item2|one    |ite||2,-2|17179869184",
                                   "two|bbccdd|lds|item1|three  |ite||1,-1|8589934592"});
    CHECK(sortedLines(onGcn) == sortedLines(onCpu));
    CHECK(onGcnResult == std::vector<int>{0, 0, 0, 0}); // printf's result: success
}

TEST_CASE("printf from a helper function, with byte vectors and pointers, at -O0 and -O2 on "
          "the GCN device",
          "[gcn][printf]") {
    const cl_device_id cpu = deviceOfType(CL_DEVICE_TYPE_CPU),
                       gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    // A divergent string choice, a string after a 2-byte vector (so its length word is not
    // 4-aligned), %c and %%, and a helper that printf's result flows through.
    const std::string src = R"CL(
int say(__constant char* who, int i) {
    uchar2 h = (uchar2)((uchar)i, (uchar)200);
    return printf("%s %% %v2hhu %s%c\n", who, h, (i & 1) ? "odd" : "even", 'A' + i);
}
__constant char names[2][6] = {"north", "south"};
__kernel void p(__global int* r) {
    int i = (int)get_global_id(0);
    r[i] = say(names[i & 1], i) + (printf("%p\n", (void*)0) < 0);
}
)CL";
    for (const char* options : {"", "-cl-opt-disable"}) {
        INFO("options: " << options);
        const std::string onCpu = printed(cpu, src, 6, options),
                          onGcn = printed(gpu, src, 6, options);
        INFO("CPU printed:\n" << onCpu << "GCN printed:\n" << onGcn);
        CHECK(onGcn.find("south % 3,200 oddD\n") != std::string::npos);
        CHECK(onGcn.find("north % 4,200 evenE\n") != std::string::npos);
        CHECK(sortedLines(onGcn) == sortedLines(onCpu));
    }
}

TEST_CASE("printf on the GCN device: a null %s, a long string, a full buffer's -1",
          "[gcn][printf]") {
    const cl_device_id gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    // A 5000-character private string runs through the copy loop; null prints "(null)" as
    // on the CPU device.
    const std::string src = R"CL(
__kernel void p(__global int* r) {
    char big[5001];
    for (int n = 0; n < 5000; ++n)
        big[n] = (char)('a' + n % 26);
    big[5000] = 0;
    __global const char* none = (__global const char*)0;
    r[0] = printf("[%s][%s]\n", none, big);
}
)CL";
    std::string expected = "[(null)][";
    for (int n = 0; n < 5000; ++n)
        expected += char('a' + n % 26);
    expected += "]\n";
    CHECK(printed(gpu, src, 1) == expected);

    // Records past the buffer's end are dropped and their printf returns -1.
    const std::string full = R"CL(
__kernel void p(__global int* r) {
    int i = (int)get_global_id(0);
    r[i] = printf("%s %d\n", "0123456789012345678901234567890123456789", i);
}
)CL";
    const size_t n = 32768; // 52-byte records: 1.6 MiB, beyond the 1 MiB buffer
    OnDevice on(gpu, full);
    cl_kernel k = on.kernel("p");
    cl_mem out = on.buffer(sizeof(int) * n);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    std::string text;
    std::string err = captureFd(2, [&] { text = captureStdout([&] { on.run(k, n, 256); }); });
    CHECK(err.find("overflowed") != std::string::npos);
    const std::vector<int> r = on.read<int>(out, n);
    const size_t ok = size_t(std::count(r.begin(), r.end(), 0));
    CHECK(ok == (1u << 20) / 52);
    CHECK(size_t(std::count(r.begin(), r.end(), -1)) == n - ok);
    CHECK(sortedLines(text).size() == ok);
    clReleaseMemObject(out);
    clReleaseKernel(k);
}

TEST_CASE("printf whose format is not a constant string is a GCN build error", "[gcn][printf]") {
    const cl_device_id gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    cl_int e = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &gpu, nullptr, nullptr, &e);
    REQUIRE_CL(e);
    const char* src = "__constant char f[2][4] = {\"%d\\n\", \"%x\\n\"};\n"
                      "__kernel void p(__global int* r) { printf(f[r[0] & 1], r[1]); }\n";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &e);
    REQUIRE_CL(e);
    CHECK(clBuildProgram(prog, 1, &gpu, "", nullptr, nullptr) == CL_BUILD_PROGRAM_FAILURE);
    const std::string log = buildLog(prog, gpu);
    INFO(log);
    CHECK(log.find("printf: the format is not a constant string") != std::string::npos);
    clReleaseProgram(prog);
    clReleaseContext(ctx);
}

TEST_CASE("OpenCL C 3.0 pointer builtins on generic pointers on the GCN device", "[gcn][generic]") {
    const cl_device_id cpu = deviceOfType(CL_DEVICE_TYPE_CPU),
                       gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    // With the generic address space, clang declares fract/sincos/vload/vstore/
    // wait_group_events on generic pointers: each space must reach the right overload.
    const std::string src = R"CL(
float work(int* p, float x) {
    float whole;
    float f = fract(x, &whole);
    float c;
    float s = sincos(x, &c);
    float4 v = vload4(0, (float*)p);
    return f + whole * 10.0f + s + c + v.x + v.w;
}
__kernel void k(__global float* in, __global float* out) {
    __local float tile[64 * 4];
    int i = (int)get_local_id(0), gid = (int)get_global_id(0);
    event_t e = async_work_group_copy(tile, in + get_group_id(0) * 256, 256, 0);
    wait_group_events(1, &e);
    float priv[4] = {1.0f, 2.0f, 3.0f, (float)gid};
    float x = 0.37f * gid;
    float r = work((int*)&in[4 * gid], x) + 100.0f * work((int*)&tile[4 * i], x) +
              10000.0f * work((int*)priv, x);
    vstore2((float2)(r, -r), gid, out);
}
)CL";
    const size_t n = 128;
    std::vector<float> in(4 * n);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i % 17) * 0.5f;
    std::vector<float> results[2];
    cl_device_id devices[2] = {cpu, gpu};
    for (int d = 0; d < 2; ++d) {
        OnDevice on(devices[d], src, "-cl-std=CL3.0");
        cl_kernel k = on.kernel("k");
        cl_mem a = on.buffer(in.size() * sizeof(float), in.data());
        cl_mem out = on.buffer(2 * n * sizeof(float));
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof a, &a));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof out, &out));
        on.run(k, n, 64);
        results[d] = on.read<float>(out, 2 * n);
        clReleaseMemObject(a);
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    for (size_t i = 0; i < 2 * n; ++i) {
        INFO("element " << i);
        CHECK(std::abs(results[1][i] - results[0][i]) <= 1e-4f * std::abs(results[0][i]) + 1e-3f);
    }
}

TEST_CASE("profiling on the GCN model times the modelled GPU, the same on every run",
          "[gcn][profiling]") {
    const cl_device_id gpu = deviceOfType(CL_DEVICE_TYPE_GPU);
    cl_int e = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &gpu, nullptr, nullptr, &e);
    REQUIRE_CL(e);
    const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, gpu, props, &e);
    REQUIRE_CL(e);
    cl_program prog = buildProgram(ctx, gpu, R"CL(
__kernel void spin(__global float* a, int reps) {
    size_t i = get_global_id(0);
    float x = a[i];
    for (int r = 0; r < reps; ++r)
        x = x * 1.0001f + 0.5f;
    a[i] = x;
}
__kernel void triad(__global const float* a, __global const float* b, __global float* c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + 3.0f * b[i];
}
)CL");
    REQUIRE(prog);
    const size_t n = 1 << 22;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, nullptr, &e);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, nullptr, &e);
    cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, nullptr, &e);
    REQUIRE_CL(e);
    const float zero = 0;
    REQUIRE_CL(clEnqueueFillBuffer(q, a, &zero, 4, 0, n * 4, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueFillBuffer(q, b, &zero, 4, 0, n * 4, 0, nullptr, nullptr));
    cl_kernel spin = clCreateKernel(prog, "spin", &e);
    REQUIRE_CL(e);
    cl_kernel triad = clCreateKernel(prog, "triad", &e);
    REQUIRE_CL(e);
    // END - START of one launch, after checking the timestamps' order.
    auto timed = [&](cl_kernel k, size_t global) {
        cl_event ev = nullptr;
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, &ev));
        REQUIRE_CL(clWaitForEvents(1, &ev));
        cl_ulong t[4];
        for (int i = 0; i < 4; ++i)
            REQUIRE_CL(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED + i, sizeof t[i],
                                               &t[i], nullptr));
        clReleaseEvent(ev);
        CHECK(t[0] <= t[1]);
        CHECK(t[1] <= t[2]);
        CHECK(t[2] < t[3]);
        return t[3] - t[2];
    };
    int reps = 10;
    REQUIRE_CL(clSetKernelArg(spin, 0, sizeof a, &a));
    REQUIRE_CL(clSetKernelArg(spin, 1, sizeof reps, &reps));
    const cl_ulong short10 = timed(spin, 65536);
    reps = 100;
    REQUIRE_CL(clSetKernelArg(spin, 1, sizeof reps, &reps));
    const cl_ulong long100 = timed(spin, 65536), again = timed(spin, 65536);
    INFO("10 iterations " << short10 << " ns, 100 iterations " << long100 << " ns");
    CHECK(long100 == again); // modelled: no host noise
    CHECK(long100 > 2 * short10);

    // The triad moves 48 MiB: at least the 104 us they take at the modelled 484 GB/s (more
    // when few CUs make it compute-bound: DUET_GCN_CUS=8 here gives 119 us).
    REQUIRE_CL(clSetKernelArg(triad, 0, sizeof a, &a));
    REQUIRE_CL(clSetKernelArg(triad, 1, sizeof b, &b));
    REQUIRE_CL(clSetKernelArg(triad, 2, sizeof c, &c));
    const cl_ulong triadNs = timed(triad, n);
    INFO("triad " << triadNs << " ns");
    CHECK(triadNs >= 100000);
    CHECK(triadNs <= 1000000);

    clReleaseKernel(spin);
    clReleaseKernel(triad);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
}
