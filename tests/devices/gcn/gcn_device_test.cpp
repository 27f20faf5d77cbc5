// The GCN device through the public API (DUET_DEVICES=gcn, DUET_GCN_CUS=8): device info,
// builds for gfx900, -save-temps, binaries, and kernels run on the software GCN model.
#include "support/cl_test.hpp"
#include "support/process.hpp"

#include <CL/cl_ext.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <unistd.h>

using namespace duet::test;

namespace {

template <class T> T info(cl_device_id d, cl_device_info what) {
    T v{};
    REQUIRE_CL(clGetDeviceInfo(d, what, sizeof v, &v, nullptr));
    return v;
}

cl_kernel kernel(cl_program p, const char* name) {
    cl_int e = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, name, &e);
    REQUIRE_CL(e);
    return k;
}

void run(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* global, const size_t* local,
         const size_t* offset = nullptr) {
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, dims, offset, global, local, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
}

const char* kSource = R"CL(
kernel void vadd(global const float* a, global const float* b, global float* c, float s) {
    size_t i = get_global_id(0);
    c[i] = a[i] + s * b[i];
}
kernel void ids(global uint* out, uint width) {
    size_t x = get_global_id(0), y = get_global_id(1);
    out[(y - get_global_offset(1)) * width + (x - get_global_offset(0))] =
        (uint)(x * 1000 + y) + (uint)get_local_size(0) * 1000000u;
}
kernel void reduce(global const int* in, global int* out, local int* scratch) {
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s /= 2) {
        if (l < s)
            scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        out[get_group_id(0)] = scratch[0];
}
kernel void privateArray(global const int* sel, global int* out) {
    int t[48];
    for (int i = 0; i < 48; ++i)
        t[i] = i * i;
    size_t g = get_global_id(0);
    out[g] = t[sel[g] % 48];
}
)CL";

} // namespace

TEST_CASE("the modelled GCN device reports what GCN is", "[gcn][info]") {
    cl_platform_id p = platformUnderTest();
    cl_device_id d = nullptr;
    REQUIRE_CL(clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU, 1, &d, nullptr));
    CHECK(deviceString(d, CL_DEVICE_NAME) == "GCN gfx900 (software model)");
    CHECK(info<cl_device_type>(d, CL_DEVICE_TYPE) == CL_DEVICE_TYPE_GPU);
    CHECK(info<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS) == 8); // DUET_GCN_CUS
    CHECK(info<cl_uint>(d, CL_DEVICE_WAVEFRONT_WIDTH_AMD) == 64);
    CHECK(info<cl_uint>(d, CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD) == 4);
    CHECK(info<cl_uint>(d, CL_DEVICE_GFXIP_MAJOR_AMD) == 9);
    CHECK(info<cl_uint>(d, CL_DEVICE_GFXIP_MINOR_AMD) == 0);
    CHECK(info<cl_uint>(d, CL_DEVICE_LOCAL_MEM_SIZE_PER_COMPUTE_UNIT_AMD) == 65536);
    CHECK(info<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE) == 32768);
    CHECK(info<cl_device_local_mem_type>(d, CL_DEVICE_LOCAL_MEM_TYPE) == CL_LOCAL);
    CHECK(info<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE) == 256);
    CHECK(info<size_t>(d, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE) == 64);
    // Images are plain memory read by the shared image library (builtins/cpu/image.cl).
    CHECK(info<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE);
    CHECK(info<size_t>(d, CL_DEVICE_IMAGE2D_MAX_WIDTH) >= 8192);
    CHECK(info<cl_uint>(d, CL_DEVICE_MAX_READ_IMAGE_ARGS) >= 128);
    CHECK(info<cl_uint>(d, CL_DEVICE_MAX_SAMPLERS) >= 16);
    CHECK(deviceString(d, CL_DEVICE_EXTENSIONS).find("cl_khr_depth_images") != std::string::npos);
    CHECK(info<cl_bool>(d, CL_DEVICE_AVAILABLE) == CL_TRUE);
    cl_device_topology_amd topo = info<cl_device_topology_amd>(d, CL_DEVICE_TOPOLOGY_AMD);
    CHECK(topo.raw.type == 0); // a model has no PCI location
    CHECK(deviceString(d, CL_DEVICE_BOARD_NAME_AMD).find("gfx900") != std::string::npos);
    CHECK(deviceString(d, CL_DEVICE_EXTENSIONS).find("cl_amd_device_attribute_query") !=
          std::string::npos);
    // A sub-group is the wave; the model's time slices give waves independent forward progress,
    // so cl_khr_subgroups is listed (kernels_sub_group_gcn_test runs its cases).
    CHECK(info<cl_uint>(d, CL_DEVICE_MAX_NUM_SUB_GROUPS) == 4);
    CHECK(info<cl_bool>(d, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS) == CL_TRUE);
    CHECK((" " + deviceString(d, CL_DEVICE_EXTENSIONS) + " ").find(" cl_khr_subgroups ") !=
          std::string::npos);
    // It is the only device here, so CL_DEVICE_TYPE_DEFAULT names it; no CPU device exists.
    cl_device_id def = nullptr;
    REQUIRE_CL(clGetDeviceIDs(p, CL_DEVICE_TYPE_DEFAULT, 1, &def, nullptr));
    CHECK(def == d);
    cl_uint n = 0;
    CHECK_CL_ERR(CL_DEVICE_NOT_FOUND, clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 0, nullptr, &n));
}

TEST_CASE("builds for gfx900 log occupancy and -save-temps writes .ll and .isa", "[gcn][build]") {
    WithQueue w;
    char dir[] = "/tmp/duet-gcn-XXXXXX";
    REQUIRE(mkdtemp(dir));
    const std::string prefix = std::string(dir) + "/t";
    cl_program p = buildProgram(w.context, w.device, kSource, "-save-temps=" + prefix);
    std::string log = buildLog(p, w.device);
    CHECK(log.find("kernel vadd:") != std::string::npos);
    CHECK(log.find("waves per SIMD") != std::string::npos);
    std::string isa = readFile(prefix + "_vadd.isa");
    CHECK(isa.find("s_endpgm") != std::string::npos);
    CHECK(isa.find("global_load_dword") != std::string::npos);
    CHECK(isa.find("hidden_block_count_x") != std::string::npos);
    std::string ll = readFile(prefix + "_reduce.ll");
    CHECK(ll.find("amdgpu_kernel void @reduce") != std::string::npos);
    CHECK(readFile(prefix + "_privateArray.isa").find("buffer_store_dword") != std::string::npos);
    for (const char* k : {"vadd", "ids", "reduce", "privateArray"})
        for (const char* ext : {".ll", ".isa"})
            std::remove((prefix + "_" + k + ext).c_str());
    rmdir(dir);
    clReleaseProgram(p);
}

TEST_CASE("what the GCN device does not support fails with the spec's error", "[gcn][build]") {
    WithQueue w;
    const char* src = "kernel void k(global int* a) { a[0] = work_group_reduce_add(a[1]); }\n";
    cl_int e = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(w.context, 1, &src, nullptr, &e);
    REQUIRE_CL(e);
    // The model lists OpenCL C 2.0 (device-side enqueue completed what 2.0 needs): it builds.
    CHECK_CL_ERR(CL_SUCCESS, clBuildProgram(p, 1, &w.device, "-cl-std=CL2.0", nullptr, nullptr));
    // The same program as OpenCL C 3.0: the device reports the work-group collective functions.
    CHECK_CL_ERR(CL_SUCCESS, clBuildProgram(p, 1, &w.device, "-cl-std=CL3.0", nullptr, nullptr));
    clReleaseProgram(p);
    // No cl_khr_fp16: a kernel computing in half fails the build, the log saying why.
    const char* half = "kernel void h(global float* a) { half x = 1.0h; a[0] = (float)(x + x); }\n";
    p = clCreateProgramWithSource(w.context, 1, &half, nullptr, &e);
    REQUIRE_CL(e);
    CHECK_CL_ERR(CL_BUILD_PROGRAM_FAILURE,
                 clBuildProgram(p, 1, &w.device, "-cl-std=CL3.0", nullptr, nullptr));
    std::string log = buildLog(p, w.device);
    INFO(log);
    CHECK(log.find("half") != std::string::npos);
    clReleaseProgram(p);
}

TEST_CASE("vector add runs on the software GCN model", "[gcn][run]") {
    WithQueue w;
    cl_program p = buildProgram(w.context, w.device, kSource);
    cl_kernel k = kernel(p, "vadd");
    const size_t n = 1000; // not a multiple of 64: the picked local size must divide it
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
        a[i] = float(i);
        b[i] = float(2 * i + 1);
    }
    cl_mem ma = w.buffer(n * 4, CL_MEM_COPY_HOST_PTR, a.data());
    cl_mem mb = w.buffer(n * 4, CL_MEM_COPY_HOST_PTR, b.data());
    cl_mem mc = w.buffer(n * 4);
    float s = 0.5f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof ma, &ma));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof mb, &mb));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof mc, &mc));
    REQUIRE_CL(clSetKernelArg(k, 3, sizeof s, &s));
    run(w.queue, k, 1, &n, nullptr);
    std::vector<float> c = w.read<float>(mc, n);
    for (size_t i = 0; i < n; ++i)
        REQUIRE(c[i] == a[i] + s * b[i]);
    clReleaseMemObject(ma);
    clReleaseMemObject(mb);
    clReleaseMemObject(mc);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("work-item functions see offsets, 2D ranges and partial work-groups", "[gcn][run]") {
    WithQueue w;
    // CL3.0 on a device with CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT: non-uniform work-groups
    // (global 100 x 7 with 64 x 2 groups).
    cl_program p = buildProgram(w.context, w.device, kSource, "-cl-std=CL3.0");
    cl_kernel k = kernel(p, "ids");
    const size_t global[2] = {100, 7}, local[2] = {64, 2}, offset[2] = {5, 3};
    const cl_uint width = 100;
    cl_mem out = w.buffer(100 * 7 * 4);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof width, &width));
    run(w.queue, k, 2, global, local, offset);
    std::vector<cl_uint> r = w.read<cl_uint>(out, 100 * 7);
    for (size_t y = 0; y < 7; ++y)
        for (size_t x = 0; x < 100; ++x) {
            const size_t gx = x + 5, gy = y + 3;
            const cl_uint lsize = x < 64 ? 64 : 36; // the last group along x is partial
            INFO("x " << x << " y " << y);
            REQUIRE(r[y * 100 + x] == cl_uint(gx * 1000 + gy) + lsize * 1000000u);
        }
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("a local-memory reduction with barriers runs on the model", "[gcn][run]") {
    WithQueue w;
    cl_program p = buildProgram(w.context, w.device, kSource);
    cl_kernel k = kernel(p, "reduce");
    const size_t n = 4096, group = 256;
    std::vector<cl_int> in(n);
    std::iota(in.begin(), in.end(), -100);
    cl_mem mi = w.buffer(n * 4, CL_MEM_COPY_HOST_PTR, in.data());
    cl_mem mo = w.buffer(n / group * 4);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof mi, &mi));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof mo, &mo));
    REQUIRE_CL(clSetKernelArg(k, 2, group * 4, nullptr));
    run(w.queue, k, 1, &n, &group);
    std::vector<cl_int> r = w.read<cl_int>(mo, n / group);
    for (size_t g = 0; g < n / group; ++g)
        REQUIRE(r[g] == std::accumulate(in.begin() + g * group, in.begin() + (g + 1) * group, 0));
    clReleaseMemObject(mi);
    clReleaseMemObject(mo);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("private arrays live in scratch on the model", "[gcn][run]") {
    WithQueue w;
    cl_program p = buildProgram(w.context, w.device, kSource);
    cl_kernel k = kernel(p, "privateArray");
    const size_t n = 512;
    std::vector<cl_int> sel(n);
    for (size_t i = 0; i < n; ++i)
        sel[i] = cl_int((i * 37) % 101);
    cl_mem ms = w.buffer(n * 4, CL_MEM_COPY_HOST_PTR, sel.data());
    cl_mem mo = w.buffer(n * 4);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof ms, &ms));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof mo, &mo));
    run(w.queue, k, 1, &n, nullptr);
    std::vector<cl_int> r = w.read<cl_int>(mo, n);
    for (size_t i = 0; i < n; ++i)
        REQUIRE(r[i] == (sel[i] % 48) * (sel[i] % 48));
    clReleaseMemObject(ms);
    clReleaseMemObject(mo);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("a GCN program binary round-trips and runs", "[gcn][binary]") {
    WithQueue w;
    cl_program p = buildProgram(w.context, w.device, kSource);
    size_t size = 0;
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
    REQUIRE(size > 0);
    std::vector<unsigned char> bin(size);
    unsigned char* ptr = bin.data();
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr));
    clReleaseProgram(p);

    const unsigned char* bins[] = {bin.data()};
    cl_int status = CL_SUCCESS, e = CL_SUCCESS;
    cl_program q = clCreateProgramWithBinary(w.context, 1, &w.device, &size, bins, &status, &e);
    REQUIRE_CL(e);
    REQUIRE_CL(status);
    REQUIRE_CL(clBuildProgram(q, 1, &w.device, "", nullptr, nullptr));
    cl_kernel k = kernel(q, "vadd");
    const size_t n = 256;
    std::vector<float> a(n, 1.5f), b(n, 2.0f);
    cl_mem ma = w.buffer(n * 4, CL_MEM_COPY_HOST_PTR, a.data());
    cl_mem mb = w.buffer(n * 4, CL_MEM_COPY_HOST_PTR, b.data());
    cl_mem mc = w.buffer(n * 4);
    float s = 3.0f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof ma, &ma));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof mb, &mb));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof mc, &mc));
    REQUIRE_CL(clSetKernelArg(k, 3, sizeof s, &s));
    run(w.queue, k, 1, &n, nullptr);
    for (float v : w.read<float>(mc, n))
        REQUIRE(v == 7.5f);

    // Corrupted bytes are CL_INVALID_BINARY, not a crash.
    std::vector<unsigned char> bad(bin.begin(), bin.begin() + bin.size() / 3);
    const unsigned char* badBins[] = {bad.data()};
    size_t badSize = bad.size();
    cl_program r =
        clCreateProgramWithBinary(w.context, 1, &w.device, &badSize, badBins, &status, &e);
    CHECK(r == nullptr);
    CHECK(e == CL_INVALID_BINARY);
    clReleaseMemObject(ma);
    clReleaseMemObject(mb);
    clReleaseMemObject(mc);
    clReleaseKernel(k);
    clReleaseProgram(q);
}

TEST_CASE("recursion is a build error on the GCN device", "[gcn][build]") {
    // OpenCL C forbids recursion; LLVM sizes a recursive chain's stack as one call deep, so a
    // kernel that built would overrun its scratch.
    WithQueue w;
    // (Two calls, so LLVM cannot turn it into a loop.)
    const char* src = "int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
                      "kernel void k(global int* a) { a[0] = fib(a[1]); }\n";
    cl_int e = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(w.context, 1, &src, nullptr, &e);
    REQUIRE_CL(e);
    CHECK_CL_ERR(CL_BUILD_PROGRAM_FAILURE, clBuildProgram(p, 1, &w.device, "", nullptr, nullptr));
    const std::string log = buildLog(p, w.device);
    INFO(log);
    CHECK(log.find("function 'fib' is recursive") != std::string::npos);
    clReleaseProgram(p);
}

TEST_CASE("a private access outside the work-item's scratch stops the dispatch", "[gcn][run]") {
    // Out of bounds in C, but the model must report it rather than write another wave's (or
    // the host's) memory.
    WithQueue w;
    cl_program p = buildProgram(w.context, w.device,
                                "kernel void k(global const int* at, global int* out) {\n"
                                "  volatile int t[16];\n"
                                "  for (int i = 0; i < 16; ++i) t[i] = i;\n"
                                "  t[at[0]] = 7;\n"
                                "  out[get_global_id(0)] = t[at[1]];\n}\n");
    cl_kernel k = kernel(p, "k");
    const cl_int at[2] = {1 << 22, 3};
    cl_mem ma = w.buffer(sizeof at, CL_MEM_COPY_HOST_PTR, const_cast<cl_int*>(at));
    cl_mem mo = w.buffer(64 * 4);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof ma, &ma));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof mo, &mo));
    const size_t n = 64;
    cl_event ev = nullptr;
    REQUIRE_CL(clEnqueueNDRangeKernel(w.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, &ev));
    clFinish(w.queue);
    cl_int status = CL_COMPLETE;
    REQUIRE_CL(
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr));
    CHECK(status < 0);
    clReleaseEvent(ev);
    clReleaseMemObject(ma);
    clReleaseMemObject(mo);
    clReleaseKernel(k);
    clReleaseProgram(p);
}
