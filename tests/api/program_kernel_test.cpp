// Programs and kernels: build, logs, binaries, compile+link, arguments, NDRange checks.
#include "support/cl_test.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace duet::test;

namespace {
const char* kSource = R"CL(
typedef struct { float scale; int offset; } Params;
__kernel void axpy(__global float* y, __global const float* x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
__kernel void ids(__global uint* out) {
    size_t w = get_global_size(0), h = get_global_size(1);
    size_t x = get_global_id(0) - get_global_offset(0);
    size_t y = get_global_id(1) - get_global_offset(1);
    size_t z = get_global_id(2) - get_global_offset(2);
    out[(z * h + y) * w + x] = (uint)(get_global_id(0) + 100 * get_global_id(1) + 10000 * get_global_id(2));
}
__kernel void with_struct(__global float* out, Params p) {
    out[get_global_id(0)] = p.scale * (float)(get_global_id(0) + p.offset);
}
__kernel void reverse_local(__global int* data, __local int* tmp) {
    size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
    tmp[l] = data[g * n + l];
    barrier(CLK_LOCAL_MEM_FENCE);
    data[g * n + l] = tmp[n - 1 - l];
}
__kernel __attribute__((reqd_work_group_size(4, 1, 1))) void fixed(__global int* out) {
    out[get_global_id(0)] = (int)get_local_size(0);
}
)CL";
} // namespace

TEST_CASE("a program builds, lists its kernels and runs them", "[api][program]") {
    WithQueue f;
    cl_program p = buildProgram(f.context, f.device, kSource);
    size_t n = 0;
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof n, &n, nullptr));
    CHECK(n == 5);
    char names[256];
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, nullptr));
    CHECK(std::string(names).find("axpy") != std::string::npos);
    cl_build_status st;
    REQUIRE_CL(
        clGetProgramBuildInfo(p, f.device, CL_PROGRAM_BUILD_STATUS, sizeof st, &st, nullptr));
    CHECK(st == CL_BUILD_SUCCESS);

    cl_int err;
    cl_kernel k = clCreateKernel(p, "axpy", &err);
    REQUIRE(err == CL_SUCCESS);
    const size_t N = 1000;
    std::vector<float> x(N), y(N);
    std::iota(x.begin(), x.end(), 0.f);
    std::fill(y.begin(), y.end(), 1.f);
    cl_mem bx = f.buffer(N * 4, CL_MEM_COPY_HOST_PTR, x.data());
    cl_mem by = f.buffer(N * 4, CL_MEM_COPY_HOST_PTR, y.data());
    float a = 2.f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof(cl_mem), &by));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof(cl_mem), &bx));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof a, &a));
    REQUIRE_CL(clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &N, nullptr, 0, nullptr, nullptr));
    auto out = f.read<float>(by, N);
    for (size_t i = 0; i < N; ++i)
        REQUIRE(out[i] == 2.f * float(i) + 1.f);

    CHECK(clCreateKernel(p, "nope", &err) == nullptr);
    CHECK(err == CL_INVALID_KERNEL_NAME);
    CHECK(clCreateKernel(p, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    // Kernels attached: rebuilding is refused.
    CHECK_CL_ERR(CL_INVALID_OPERATION, clBuildProgram(p, 0, nullptr, "", nullptr, nullptr));
    clReleaseKernel(k);
    clReleaseMemObject(bx);
    clReleaseMemObject(by);
    clReleaseProgram(p);
}

TEST_CASE("build failures keep clang's diagnostics in the log", "[api][program]") {
    WithQueue f;
    const char* bad = "__kernel void k(__global int* p) {\n  p[0] = undeclared_thing;\n}\n";
    cl_int err;
    cl_program p = clCreateProgramWithSource(f.context, 1, &bad, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK_CL_ERR(CL_BUILD_PROGRAM_FAILURE,
                 clBuildProgram(p, 1, &f.device, nullptr, nullptr, nullptr));
    std::string log = buildLog(p, f.device);
    CHECK(log.find("undeclared_thing") != std::string::npos);
    CHECK(log.find("2:10") != std::string::npos);
    cl_build_status st;
    REQUIRE_CL(
        clGetProgramBuildInfo(p, f.device, CL_PROGRAM_BUILD_STATUS, sizeof st, &st, nullptr));
    CHECK(st == CL_BUILD_ERROR);
    cl_kernel k = clCreateKernel(p, "k", &err);
    CHECK(k == nullptr);
    CHECK(err == CL_INVALID_PROGRAM_EXECUTABLE);
    CHECK_CL_ERR(CL_INVALID_BUILD_OPTIONS,
                 clBuildProgram(p, 1, &f.device, "-fbogus-option", nullptr, nullptr));
    clReleaseProgram(p);
    CHECK(clCreateProgramWithSource(f.context, 0, &bad, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
}

// Found by fuzz_build_source: a kernel no path of which returns left the CPU device's work-group
// pass without an exit block, and the build crashed. It is a build failure with a reason now;
// other devices may build it (it would only ever run until a timeout stops it).
TEST_CASE("a kernel that never returns fails to build on the CPU device, with a reason",
          "[api][program]") {
    WithQueue f;
    const char* src = "kernel void spin(global float* x, int n) {\n"
                      "    for (int i = 0; i < 4; -+i) if (i < n) x[i] = 1.0f;\n"
                      "}\n";
    cl_int err;
    cl_program p = clCreateProgramWithSource(f.context, 1, &src, nullptr, &err);
    REQUIRE_CL(err);
    cl_device_type type = 0;
    REQUIRE_CL(clGetDeviceInfo(f.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr));
    err = clBuildProgram(p, 1, &f.device, nullptr, nullptr, nullptr);
    if (type & CL_DEVICE_TYPE_CPU) {
        CHECK(err == CL_BUILD_PROGRAM_FAILURE);
        CHECK(buildLog(p, f.device).find("spin never returns") != std::string::npos);
    } else {
        CHECK((err == CL_SUCCESS || err == CL_BUILD_PROGRAM_FAILURE));
    }
    clReleaseProgram(p);
}

TEST_CASE("-cl-std builds exactly the versions CL_DEVICE_OPENCL_C_ALL_VERSIONS lists",
          "[api][program]") {
    WithQueue f;
    size_t size = 0;
    REQUIRE_CL(clGetDeviceInfo(f.device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, 0, nullptr, &size));
    std::vector<cl_name_version> versions(size / sizeof(cl_name_version));
    REQUIRE_CL(
        clGetDeviceInfo(f.device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, size, versions.data(), nullptr));
    const char* src = "kernel void k(global int* p) { *p = __OPENCL_C_VERSION__; }\n";
    for (const char* v : {"1.0", "1.1", "1.2", "2.0", "3.0"}) {
        const cl_version want = CL_MAKE_VERSION(v[0] - '0', v[2] - '0', 0);
        const bool listed = std::any_of(versions.begin(), versions.end(), [&](auto& nv) {
            return CL_MAKE_VERSION(CL_VERSION_MAJOR(nv.version), CL_VERSION_MINOR(nv.version), 0) ==
                   want;
        });
        const std::string opt = std::string("-cl-std=CL") + v;
        INFO(opt << (listed ? " (listed)" : " (not listed)"));
        cl_int err;
        cl_program p = clCreateProgramWithSource(f.context, 1, &src, nullptr, &err);
        REQUIRE_CL(err);
        err = clBuildProgram(p, 1, &f.device, opt.c_str(), nullptr, nullptr);
        const std::string log = buildLog(p, f.device);
        INFO(log);
        if (listed) {
            CHECK(err == CL_SUCCESS);
        } else {
            CHECK(err == CL_BUILD_PROGRAM_FAILURE);
            CHECK(log.find(opt + ": the device does not support this OpenCL C version") !=
                  std::string::npos);
        }
        clReleaseProgram(p);
    }
}

TEST_CASE("kernels see the macro of every language extension the device lists, and no other",
          "[api][program]") {
    WithQueue f;
    const std::string listed = " " + deviceString(f.device, CL_DEVICE_EXTENSIONS) + " ";
    size_t size = 0;
    REQUIRE_CL(clGetDeviceInfo(f.device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, 0, nullptr, &size));
    std::vector<cl_name_version> versions(size / sizeof(cl_name_version));
    REQUIRE_CL(
        clGetDeviceInfo(f.device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, size, versions.data(), nullptr));
    // Extensions with an OpenCL C macro (OpenCL C 3.0 §6.1) that every language version has;
    // the sub-group ones come with OpenCL C 2.0 and later (kernels_sub_group tests).
    std::string src;
    for (const char* e :
         {"cl_khr_byte_addressable_store", "cl_khr_fp64", "cl_khr_global_int32_base_atomics",
          "cl_khr_global_int32_extended_atomics", "cl_khr_local_int32_base_atomics",
          "cl_khr_local_int32_extended_atomics", "cl_khr_int64_base_atomics",
          "cl_khr_int64_extended_atomics", "cl_khr_3d_image_writes", "cl_khr_depth_images",
          "cl_khr_gl_depth_images", "cl_khr_srgb_image_writes", "cl_khr_gl_msaa_sharing",
          "cl_khr_mipmap_image", "cl_khr_fp16"}) {
        const bool has = listed.find(std::string(" ") + e + " ") != std::string::npos;
        src += std::string(has ? "#ifndef " : "#ifdef ") + e + "\n#error " + e +
               (has ? " is listed but not defined" : " is defined but not listed") + "\n#endif\n";
    }
    src += "kernel void k(global int* p) { *p = 1; }\n";
    const char* text = src.c_str();
    for (const cl_name_version& v : versions) {
        const unsigned major = CL_VERSION_MAJOR(v.version), minor = CL_VERSION_MINOR(v.version);
        if (major * 10 + minor < 12)
            continue;
        const std::string opt = "-cl-std=CL" + std::to_string(major) + "." + std::to_string(minor);
        INFO(opt);
        cl_int err;
        cl_program p = clCreateProgramWithSource(f.context, 1, &text, nullptr, &err);
        REQUIRE_CL(err);
        err = clBuildProgram(p, 1, &f.device, opt.c_str(), nullptr, nullptr);
        INFO(buildLog(p, f.device));
        CHECK(err == CL_SUCCESS);
        clReleaseProgram(p);
    }
}

TEST_CASE("build options: -D, -Werror, -cl-kernel-arg-info", "[api][program]") {
    WithQueue f;
    const char* src =
        "__kernel void k(__global int* restrict out, const int v) { out[0] = VALUE + v; }\n";
    cl_program p = buildProgram(f.context, f.device, src, "-D VALUE=40 -cl-kernel-arg-info");
    cl_int err;
    cl_kernel k = clCreateKernel(p, "k", &err);
    char name[64];
    REQUIRE_CL(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, sizeof name, name, nullptr));
    CHECK(std::string(name) == "out");
    REQUIRE_CL(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_TYPE_NAME, sizeof name, name, nullptr));
    CHECK(std::string(name) == "int*");
    cl_kernel_arg_address_qualifier aq;
    REQUIRE_CL(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, nullptr));
    CHECK(aq == CL_KERNEL_ARG_ADDRESS_GLOBAL);
    cl_kernel_arg_type_qualifier tq;
    REQUIRE_CL(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, nullptr));
    CHECK((tq & CL_KERNEL_ARG_TYPE_RESTRICT));
    CHECK_CL_ERR(CL_INVALID_ARG_INDEX,
                 clGetKernelArgInfo(k, 2, CL_KERNEL_ARG_NAME, sizeof name, name, nullptr));
    cl_mem out = f.buffer(4);
    int v = 2;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof v, &v));
    REQUIRE_CL(clEnqueueTask(f.queue, k, 0, nullptr, nullptr));
    CHECK(f.read<int>(out, 1)[0] == 42);
    clReleaseKernel(k);
    clReleaseProgram(p);

    p = buildProgram(f.context, f.device, "__kernel void k(__global int* o) { o[0] = 1; }");
    k = clCreateKernel(p, "k", &err);
    CHECK_CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
                 clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, sizeof name, name, nullptr));
    clReleaseKernel(k);
    clReleaseProgram(p);

    const char* warn =
        "#warning this is only a warning\n__kernel void k(__global int* o) { o[0] = 1; }";
    p = clCreateProgramWithSource(f.context, 1, &warn, nullptr, &err);
    REQUIRE_CL(clBuildProgram(p, 1, &f.device, "", nullptr, nullptr));
    CHECK(buildLog(p, f.device).find("this is only a warning") != std::string::npos);
    CHECK_CL_ERR(CL_BUILD_PROGRAM_FAILURE,
                 clBuildProgram(p, 1, &f.device, "-Werror", nullptr, nullptr));
    clReleaseProgram(p);
    clReleaseMemObject(out);
}

TEST_CASE("program binaries round-trip and bad binaries are rejected", "[api][program]") {
    WithQueue f;
    cl_program p = buildProgram(f.context, f.device, kSource);
    size_t size = 0;
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
    REQUIRE(size > 64);
    std::vector<unsigned char> bin(size);
    unsigned char* ptr = bin.data();
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr));
    CHECK(bin[0] == 0x7f);
    CHECK(bin[1] == 'E');
    const unsigned char* cbin = bin.data();
    cl_int status, err;
    cl_program p2 = clCreateProgramWithBinary(f.context, 1, &f.device, &size, &cbin, &status, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clBuildProgram(p2, 1, &f.device, nullptr, nullptr, nullptr));
    cl_kernel k = clCreateKernel(p2, "with_struct", &err);
    REQUIRE(err == CL_SUCCESS);
    struct {
        float scale;
        int offset;
    } params{0.5f, 10};
    cl_mem out = f.buffer(64 * 4);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof params, &params));
    size_t g = 64;
    REQUIRE_CL(clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
    auto r = f.read<float>(out, 64);
    for (int i = 0; i < 64; ++i)
        REQUIRE(r[i] == 0.5f * float(i + 10));
    clReleaseKernel(k);
    clReleaseProgram(p2);

    std::vector<unsigned char> junk(100, 0x42);
    const unsigned char* jp = junk.data();
    size_t js = junk.size();
    CHECK(clCreateProgramWithBinary(f.context, 1, &f.device, &js, &jp, &status, &err) == nullptr);
    CHECK(err == CL_INVALID_BINARY);
    CHECK(status == CL_INVALID_BINARY);
    bin.resize(bin.size() / 2);
    size_t half = bin.size();
    cbin = bin.data();
    CHECK(clCreateProgramWithBinary(f.context, 1, &f.device, &half, &cbin, &status, &err) ==
          nullptr);
    CHECK(err == CL_INVALID_BINARY);
    clReleaseMemObject(out);
    clReleaseProgram(p);
}

TEST_CASE("randomly mutated binaries are CL_INVALID_BINARY with a reason, never a crash",
          "[api][program][binary]") {
    cl_device_id device = defaultDevice();
    std::vector<std::string> notes;
    auto collect = [](const char* msg, const void*, size_t, void* user) {
        static_cast<std::vector<std::string>*>(user)->push_back(msg);
    };
    cl_int err;
    cl_context context = clCreateContext(nullptr, 1, &device, collect, &notes, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_program p = buildProgram(context, device, kSource);
    size_t size = 0;
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
    std::vector<unsigned char> good(size);
    unsigned char* ptr = good.data();
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr));

    // Mutations a libFuzzer run starts with: bit flips, byte overwrites, truncation, insertion
    // and erasure, anywhere in the binary (bitcode included). Before the integrity check, a few
    // thousand of these crashed inside LLVM's bitcode reader.
    std::mt19937 rng(14);
    for (int round = 0; round < 2000; ++round) {
        std::vector<unsigned char> bad = good;
        size_t at = rng() % bad.size();
        switch (round % 5) {
        case 0:
            bad[at] ^= uint8_t(1u << (rng() % 8));
            break;
        case 1:
            bad[at] = uint8_t(rng());
            break;
        case 2:
            bad.resize(at);
            break;
        case 3:
            bad.insert(bad.begin() + long(at), uint8_t(rng()));
            break;
        default:
            bad.erase(bad.begin() + long(at),
                      bad.begin() + long(std::min(bad.size(), at + 1 + rng() % 64)));
            break;
        }
        if (bad.empty() || bad == good)
            continue;
        INFO("round " << round);
        const unsigned char* data = bad.data();
        size_t length = bad.size();
        cl_int status = CL_SUCCESS;
        notes.clear();
        cl_program q =
            clCreateProgramWithBinary(context, 1, &device, &length, &data, &status, &err);
        REQUIRE(q == nullptr);
        REQUIRE(err == CL_INVALID_BINARY);
        REQUIRE(status == CL_INVALID_BINARY);
        REQUIRE(notes.size() == 1);
        CHECK(notes[0].find("binaries[0]: ") != std::string::npos);
    }
    // The untouched binary still loads.
    const unsigned char* data = good.data();
    cl_program q = clCreateProgramWithBinary(context, 1, &device, &size, &data, nullptr, &err);
    CHECK(err == CL_SUCCESS);
    if (q)
        clReleaseProgram(q);
    clReleaseProgram(p);
    clReleaseContext(context);
}

TEST_CASE("a kernel argument does not keep its memory object alive; commands in flight do",
          "[api][kernel][memory]") {
    // clReleaseMemObject: "After the memobj reference count becomes zero and commands queued for
    // execution on a command-queue(s) that use memobj have finished, the memory object is
    // deleted." The CTS (api: retain_mem_object_set_kernel_arg) waits for the destructor
    // callback right after the release, with the kernel still holding the argument.
    WithQueue f;
    const char* src = "kernel void copy(global const int* in, global int* out) {\n"
                      "    out[get_global_id(0)] = in[get_global_id(0)] + 1;\n}\n";
    cl_program p = buildProgram(f.context, f.device, src);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "copy", &err);
    REQUIRE(err == CL_SUCCESS);
    const size_t n = 256;
    std::vector<int> init(n);
    std::iota(init.begin(), init.end(), 0);
    static std::atomic<int> destroyed;
    destroyed = 0;
    auto onDestroy = [](cl_mem, void*) { destroyed.fetch_add(1); };

    SECTION("released after clSetKernelArg: destroyed at once, the launch is refused") {
        cl_mem in =
            f.buffer(n * sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.data());
        cl_mem out = f.buffer(n * sizeof(int));
        REQUIRE_CL(clSetMemObjectDestructorCallback(in, onDestroy, nullptr));
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof in, &in));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof out, &out));
        REQUIRE_CL(clReleaseMemObject(in));
        CHECK(destroyed.load() == 1);
        CHECK_CL_ERR(CL_INVALID_KERNEL_ARGS, clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &n,
                                                                    nullptr, 0, nullptr, nullptr));
        // A new argument makes the kernel usable again.
        cl_mem in2 =
            f.buffer(n * sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.data());
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof in2, &in2));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        auto r = f.read<int>(out, n);
        for (size_t i = 0; i < n; ++i)
            REQUIRE(r[i] == int(i) + 1);
        clReleaseMemObject(in2);
        clReleaseMemObject(out);
    }
    SECTION("released while a launch that uses it waits: destroyed when the launch is done") {
        cl_mem in =
            f.buffer(n * sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.data());
        cl_mem out = f.buffer(n * sizeof(int));
        REQUIRE_CL(clSetMemObjectDestructorCallback(in, onDestroy, nullptr));
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof in, &in));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof out, &out));
        cl_event gate = clCreateUserEvent(f.context, &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE_CL(clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &n, nullptr, 1, &gate, nullptr));
        REQUIRE_CL(clReleaseMemObject(in));
        CHECK(destroyed.load() == 0); // the launch still needs it
        REQUIRE_CL(clSetUserEventStatus(gate, CL_COMPLETE));
        REQUIRE_CL(clFinish(f.queue));
        auto r = f.read<int>(out, n);
        for (size_t i = 0; i < n; ++i)
            REQUIRE(r[i] == int(i) + 1);
        // The command's reference goes when it completes, on the queue's thread.
        for (int i = 0; i < 500 && destroyed.load() == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        CHECK(destroyed.load() == 1);
        clReleaseEvent(gate);
        clReleaseMemObject(out);
    }
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("separate compilation and linking", "[api][program]") {
    WithQueue f;
    const char* lib = "#include \"helper.h\"\nint twice(int x) { return HELPER_FACTOR * x; }\n";
    const char* hdr = "#define HELPER_FACTOR 2\n";
    const char* main = "int twice(int x);\n__kernel void k(__global int* o) { o[get_global_id(0)] "
                       "= twice((int)get_global_id(0)); }\n";
    cl_int err;
    cl_program pl = clCreateProgramWithSource(f.context, 1, &lib, nullptr, &err);
    cl_program ph = clCreateProgramWithSource(f.context, 1, &hdr, nullptr, &err);
    cl_program pm = clCreateProgramWithSource(f.context, 1, &main, nullptr, &err);
    const char* hname = "helper.h";
    REQUIRE_CL(clCompileProgram(pl, 1, &f.device, nullptr, 1, &ph, &hname, nullptr, nullptr));
    REQUIRE_CL(clCompileProgram(pm, 1, &f.device, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
    cl_program_binary_type bt;
    REQUIRE_CL(
        clGetProgramBuildInfo(pm, f.device, CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt, nullptr));
    CHECK(bt == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
    cl_program objs[] = {pm, pl};
    cl_program linked =
        clLinkProgram(f.context, 1, &f.device, nullptr, 2, objs, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel k = clCreateKernel(linked, "k", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem out = f.buffer(16 * 4);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    size_t g = 16;
    REQUIRE_CL(clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
    auto r = f.read<int>(out, 16);
    for (int i = 0; i < 16; ++i)
        CHECK(r[i] == 2 * i);
    clReleaseKernel(k);
    clReleaseProgram(linked);

    // Linking the main object alone leaves `twice` undefined.
    cl_program alone =
        clLinkProgram(f.context, 1, &f.device, nullptr, 1, &pm, nullptr, nullptr, &err);
    CHECK(err == CL_LINK_PROGRAM_FAILURE);
    if (alone) {
        CHECK(buildLog(alone, f.device).find("twice") != std::string::npos);
        clReleaseProgram(alone);
    }
    CHECK(clLinkProgram(f.context, 1, &f.device, "-bogus", 1, &pl, nullptr, nullptr, &err) ==
          nullptr);
    CHECK(err == CL_INVALID_LINKER_OPTIONS);
    CHECK(clLinkProgram(f.context, 0, nullptr, nullptr, 1, &ph, nullptr, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_OPERATION);
    for (cl_program p : {pl, ph, pm})
        clReleaseProgram(p);
    clReleaseMemObject(out);
}

TEST_CASE("kernel arguments are checked", "[api][kernel]") {
    WithQueue f;
    cl_program p = buildProgram(f.context, f.device, kSource);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "axpy", &err);
    cl_mem m = f.buffer(64);
    float a = 1;
    CHECK_CL_ERR(CL_INVALID_ARG_INDEX, clSetKernelArg(k, 3, sizeof a, &a));
    CHECK_CL_ERR(CL_INVALID_ARG_SIZE, clSetKernelArg(k, 2, sizeof(double), &a));
    CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArg(k, 2, sizeof a, nullptr));
    CHECK_CL_ERR(CL_INVALID_ARG_SIZE, clSetKernelArg(k, 0, 4, &m));
    cl_mem fake = reinterpret_cast<cl_mem>(f.queue); // a live handle of another type
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 0, sizeof fake, &fake));
    CHECK_CL_ERR(CL_INVALID_KERNEL, clSetKernelArg(nullptr, 0, sizeof m, &m));
    // Not all arguments set.
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof m, &m));
    size_t g = 16;
    CHECK_CL_ERR(CL_INVALID_KERNEL_ARGS,
                 clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
    cl_kernel rl = clCreateKernel(p, "reverse_local", &err);
    CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArg(rl, 1, 64, &m));
    CHECK_CL_ERR(CL_INVALID_ARG_SIZE, clSetKernelArg(rl, 1, 0, nullptr));
    cl_uint nargs;
    REQUIRE_CL(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, nullptr));
    CHECK(nargs == 3);
    clReleaseKernel(rl);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseMemObject(m);
}

TEST_CASE("NDRange in 1, 2 and 3 dimensions with offsets and chosen local sizes", "[api][kernel]") {
    WithQueue f;
    cl_program p = buildProgram(f.context, f.device, kSource);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "ids", &err);
    const size_t W = 12, H = 5, D = 3;
    cl_mem out = f.buffer(W * H * D * 4);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    size_t offset[3] = {1, 2, 3}, global[3] = {W, H, D};
    for (cl_uint dims = 1; dims <= 3; ++dims) {
        std::vector<cl_uint> zero(W * H * D, 0);
        REQUIRE_CL(clEnqueueWriteBuffer(f.queue, out, CL_TRUE, 0, zero.size() * 4, zero.data(), 0,
                                        nullptr, nullptr));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, dims, offset, global, nullptr, 0, nullptr, nullptr));
        auto r = f.read<cl_uint>(out, W * H * D);
        size_t h = dims > 1 ? H : 1, d = dims > 2 ? D : 1;
        for (size_t z = 0; z < d; ++z)
            for (size_t y = 0; y < h; ++y)
                for (size_t x = 0; x < W; ++x) {
                    cl_uint gx = cl_uint(x + 1), gy = dims > 1 ? cl_uint(y + 2) : 0,
                            gz = dims > 2 ? cl_uint(z + 3) : 0;
                    INFO("dims " << dims << " at " << x << "," << y << "," << z);
                    REQUIRE(r[(z * h + y) * W + x] == gx + 100 * gy + 10000 * gz);
                }
    }
    size_t local[3] = {4, 5, 1};
    REQUIRE_CL(clEnqueueNDRangeKernel(f.queue, k, 2, nullptr, global, local, 0, nullptr, nullptr));
    size_t badLocal[3] = {5, 5, 1};
    CHECK_CL_ERR(CL_INVALID_WORK_GROUP_SIZE, clEnqueueNDRangeKernel(f.queue, k, 2, nullptr, global,
                                                                    badLocal, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_WORK_DIMENSION, clEnqueueNDRangeKernel(f.queue, k, 4, nullptr, global,
                                                                   nullptr, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_WORK_DIMENSION, clEnqueueNDRangeKernel(f.queue, k, 0, nullptr, global,
                                                                   nullptr, 0, nullptr, nullptr));
    CHECK_CL_ERR(
        CL_INVALID_GLOBAL_WORK_SIZE,
        clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, nullptr, nullptr, 0, nullptr, nullptr));
    size_t huge[3] = {1 << 20, 1, 1};
    size_t hugeLocal[3] = {1 << 20, 1, 1};
    CHECK_CL_ERR(CL_INVALID_WORK_ITEM_SIZE, clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, huge,
                                                                   hugeLocal, 0, nullptr, nullptr));
    size_t bigOffset[3] = {~size_t(0) - 2, 0, 0};
    CHECK_CL_ERR(CL_INVALID_GLOBAL_OFFSET, clEnqueueNDRangeKernel(f.queue, k, 1, bigOffset, global,
                                                                  nullptr, 0, nullptr, nullptr));
    clReleaseKernel(k);

    // reqd_work_group_size: enforced, and used when no local size is given.
    cl_kernel fixed = clCreateKernel(p, "fixed", &err);
    cl_mem o2 = f.buffer(16 * 4);
    REQUIRE_CL(clSetKernelArg(fixed, 0, sizeof o2, &o2));
    size_t g16 = 16, l8 = 8;
    CHECK_CL_ERR(
        CL_INVALID_WORK_GROUP_SIZE,
        clEnqueueNDRangeKernel(f.queue, fixed, 1, nullptr, &g16, &l8, 0, nullptr, nullptr));
    REQUIRE_CL(
        clEnqueueNDRangeKernel(f.queue, fixed, 1, nullptr, &g16, nullptr, 0, nullptr, nullptr));
    CHECK(f.read<int>(o2, 16)[7] == 4);
    size_t cwgs[3];
    REQUIRE_CL(clGetKernelWorkGroupInfo(fixed, f.device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                        sizeof cwgs, cwgs, nullptr));
    CHECK(cwgs[0] == 4);
    char attrs[128];
    REQUIRE_CL(clGetKernelInfo(fixed, CL_KERNEL_ATTRIBUTES, sizeof attrs, attrs, nullptr));
    CHECK(std::string(attrs).find("reqd_work_group_size(4,1,1)") != std::string::npos);
    clReleaseKernel(fixed);
    clReleaseMemObject(o2);
    clReleaseMemObject(out);
    clReleaseProgram(p);
}

TEST_CASE("__local arguments and barriers", "[api][kernel]") {
    WithQueue f;
    cl_program p = buildProgram(f.context, f.device, kSource);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "reverse_local", &err);
    const size_t N = 256, L = 64;
    std::vector<int> data(N);
    std::iota(data.begin(), data.end(), 0);
    cl_mem m = f.buffer(N * 4, CL_MEM_COPY_HOST_PTR, data.data());
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof m, &m));
    REQUIRE_CL(clSetKernelArg(k, 1, L * sizeof(int), nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &N, &L, 0, nullptr, nullptr));
    auto r = f.read<int>(m, N);
    for (size_t g = 0; g < N / L; ++g)
        for (size_t l = 0; l < L; ++l)
            REQUIRE(r[g * L + l] == int(g * L + (L - 1 - l)));
    cl_ulong localSize = 0;
    REQUIRE_CL(clGetKernelWorkGroupInfo(k, f.device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof localSize,
                                        &localSize, nullptr));
    CHECK(localSize >= L * sizeof(int));
    cl_ulong devLocal;
    REQUIRE_CL(
        clGetDeviceInfo(f.device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof devLocal, &devLocal, nullptr));
    REQUIRE_CL(clSetKernelArg(k, 1, devLocal + 1, nullptr));
    CHECK_CL_ERR(CL_OUT_OF_RESOURCES,
                 clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &N, &L, 0, nullptr, nullptr));
    clReleaseKernel(k);
    clReleaseMemObject(m);
    clReleaseProgram(p);
}

TEST_CASE("native kernels see memory objects as pointers", "[api][kernel]") {
    WithQueue f;
    cl_mem m = f.buffer(16);
    struct Args {
        cl_mem mem;
        int value;
    } args{m, 77};
    const void* loc = &args.mem;
    cl_device_exec_capabilities caps = 0;
    REQUIRE_CL(
        clGetDeviceInfo(f.device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, nullptr));
    if (!(caps & CL_EXEC_NATIVE_KERNEL)) { // the GCN device: the spec's error, nothing run
        CHECK_CL_ERR(CL_INVALID_OPERATION, clEnqueueNativeKernel(
                                               f.queue, [](void*) { FAIL("ran"); }, &args,
                                               sizeof args, 1, &m, &loc, 0, nullptr, nullptr));
        clReleaseMemObject(m);
        return;
    }
    REQUIRE_CL(clEnqueueNativeKernel(
        f.queue,
        [](void* a) {
            auto* p = static_cast<Args*>(a);
            reinterpret_cast<int*>(p->mem)[0] = p->value;
        },
        &args, sizeof args, 1, &m, &loc, 0, nullptr, nullptr));
    CHECK(f.read<int>(m, 1)[0] == 77);
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueNativeKernel(f.queue, nullptr, &args, sizeof args, 0,
                                                         nullptr, nullptr, 0, nullptr, nullptr));
    clReleaseMemObject(m);
}

TEST_CASE("-save-temps writes each kernel's LLVM IR and assembly", "[api][program][cpu]") {
    WithQueue f;
    char dir[] = "/tmp/duet-save-temps-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    std::string prefix = std::string(dir) + "/t";
    cl_program p = buildProgram(f.context, f.device, kSource, "-save-temps=" + prefix);
    for (const char* k : {"axpy", "ids", "with_struct", "reverse_local", "fixed"}) {
        for (const char* ext : {".ll", ".s"}) {
            std::string path = prefix + "_" + k + ext;
            std::ifstream in(path);
            INFO(path);
            REQUIRE(in.good());
            std::stringstream ss;
            ss << in.rdbuf();
            std::string text = ss.str();
            // The IR holds the kernel's work-group function; the assembly is x86-64 code.
            if (std::string(ext) == ".ll")
                CHECK(text.find(std::string("__duet_wg_") + k) != std::string::npos);
            else
                CHECK(text.find("ret") != std::string::npos);
            std::remove(path.c_str());
        }
    }
    rmdir(dir);
    clReleaseProgram(p);
}

TEST_CASE("-save-temps=folder/ names the files inside the folder", "[api][program][cpu]") {
    WithQueue f;
    char dir[] = "/tmp/duet-save-temps-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string folder = std::string(dir) + "/";
    cl_program p = buildProgram(f.context, f.device, kSource, "-save-temps=" + folder);
    // Every file has a name of its own before the kernel's: none starts with '_' + kernel or '.'.
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    CHECK(names.size() >= 10); // .ll and .s of five kernels
    for (const std::string& n : names) {
        INFO(n);
        CHECK(n.rfind("_temp_", 0) == 0);
        CHECK(n.find("_cpu") != std::string::npos);
    }
    std::filesystem::remove_all(dir);
    clReleaseProgram(p);
}

TEST_CASE("program-scope global variables are shared by kernels and counted", "[api][program]") {
    WithQueue f;
    const char* src =
        "global int counter = 5;\nglobal float table[100];\n"
        "__kernel void bump() { counter += 1; table[3] = 2.0f; }\n"
        "__kernel void get(__global int* o) { o[0] = counter; o[1] = (int)table[3]; }\n";
    cl_program p = buildProgram(f.context, f.device, src, "-cl-std=CL3.0");
    size_t total = 0;
    REQUIRE_CL(clGetProgramBuildInfo(p, f.device, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
                                     sizeof total, &total, nullptr));
    CHECK(total >= sizeof(int) + 100 * sizeof(float));
    cl_int err;
    cl_kernel bump = clCreateKernel(p, "bump", &err);
    cl_kernel get = clCreateKernel(p, "get", &err);
    cl_mem out = f.buffer(2 * sizeof(int));
    REQUIRE_CL(clSetKernelArg(get, 0, sizeof out, &out));
    REQUIRE_CL(clEnqueueTask(f.queue, bump, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueTask(f.queue, bump, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueTask(f.queue, get, 0, nullptr, nullptr));
    auto r = f.read<int>(out, 2);
    CHECK(r[0] == 7); // one variable, seen by both kernels
    CHECK(r[1] == 2);
    clReleaseKernel(bump);
    clReleaseKernel(get);
    clReleaseMemObject(out);
    clReleaseProgram(p);
}

TEST_CASE("plain inline functions build at every optimisation level and link from two objects",
          "[api][program]") {
    WithQueue f;
    // C99 gives a plain `inline` definition no external body; programs written for other
    // OpenCL implementations expect it to work like C++ inline.
    const char* hdr = "inline int triple(int x) { return 3 * x; }\n"
                      "inline float half_of(float x) { return 0.5f * x; }\n";
    const std::string src =
        std::string(hdr) +
        "__kernel void k(__global int* o, __global float* p) {\n"
        "    size_t i = get_global_id(0); o[i] = triple((int)i); p[i] = half_of((float)i); }\n";
    for (const char* opts : {"", "-cl-opt-disable", "-cl-std=CL3.0"}) {
        INFO("options: " << opts);
        cl_program p = buildProgram(f.context, f.device, src, opts);
        REQUIRE(p);
        cl_int err;
        cl_kernel k = clCreateKernel(p, "k", &err);
        REQUIRE(err == CL_SUCCESS);
        cl_mem o = f.buffer(8 * 4), q = f.buffer(8 * 4);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof o, &o));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof q, &q));
        size_t g = 8;
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
        auto ro = f.read<int>(o, 8);
        auto rq = f.read<float>(q, 8);
        for (int i = 0; i < 8; ++i) {
            CHECK(ro[i] == 3 * i);
            CHECK(rq[i] == 0.5f * float(i));
        }
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseMemObject(o);
        clReleaseMemObject(q);
    }

    // Two objects that both carry the header's inline definitions link into one program.
    const char* hname = "inl.h";
    const char* a = "#include \"inl.h\"\nint from_a(int x) { return triple(x) + 1; }\n";
    const char* b = "#include \"inl.h\"\nint from_a(int x);\n"
                    "__kernel void k(__global int* o) { size_t i = get_global_id(0);"
                    " o[i] = from_a((int)i) + triple((int)i); }\n";
    cl_int err;
    cl_program ph = clCreateProgramWithSource(f.context, 1, &hdr, nullptr, &err);
    cl_program pa = clCreateProgramWithSource(f.context, 1, &a, nullptr, &err);
    cl_program pb = clCreateProgramWithSource(f.context, 1, &b, nullptr, &err);
    for (const char* opts : {"", "-cl-opt-disable"}) {
        INFO("options: " << opts);
        REQUIRE_CL(clCompileProgram(pa, 1, &f.device, opts, 1, &ph, &hname, nullptr, nullptr));
        REQUIRE_CL(clCompileProgram(pb, 1, &f.device, opts, 1, &ph, &hname, nullptr, nullptr));
        cl_program objs[] = {pa, pb};
        cl_program linked =
            clLinkProgram(f.context, 1, &f.device, nullptr, 2, objs, nullptr, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        cl_kernel k = clCreateKernel(linked, "k", &err);
        REQUIRE(err == CL_SUCCESS);
        cl_mem o = f.buffer(8 * 4);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof o, &o));
        size_t g = 8;
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
        auto r = f.read<int>(o, 8);
        for (int i = 0; i < 8; ++i)
            CHECK(r[i] == 6 * i + 1);
        clReleaseKernel(k);
        clReleaseProgram(linked);
        clReleaseMemObject(o);
    }
    for (cl_program p : {ph, pa, pb})
        clReleaseProgram(p);
}

TEST_CASE("with no local size, a 1.2 kernel blind to its groups runs each work-item once",
          "[api][kernel][cpu]") {
    // A kernel that uses only global ids cannot tell how it is grouped, so the CPU device picks
    // large groups and a smaller last one even for a 1.2 program (KernelDesc::observesGroups);
    // a prime global size used to mean groups of one work-item. What the user can check: every
    // work-item ran, exactly once, with its own id, and the global size is the one enqueued.
    WithQueue f;
    const char* src = R"CL(
__kernel void ids(__global uint* out) {
    size_t i = get_global_id(0);
    out[i] += (uint)i + 1u + (get_global_size(0) == 100003 ? 0u : 0x40000000u);
}
)CL";
    const size_t n = 100003; // a prime
    for (const char* options : {"", "-cl-std=CL1.2", "-cl-std=CL1.1"}) {
        INFO("options: '" << options << "'");
        cl_program p = buildProgram(f.context, f.device, src, options);
        cl_int err;
        cl_kernel k = clCreateKernel(p, "ids", &err);
        REQUIRE_CL(err);
        cl_mem out = f.buffer(n * 4);
        std::vector<cl_uint> zero(n, 0);
        REQUIRE_CL(clEnqueueWriteBuffer(f.queue, out, CL_TRUE, 0, n * 4, zero.data(), 0, nullptr,
                                        nullptr));
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        auto r = f.read<cl_uint>(out, n);
        size_t wrong = 0;
        for (size_t i = 0; i < n; ++i)
            wrong += r[i] != cl_uint(i + 1);
        CHECK(wrong == 0);
        clReleaseMemObject(out);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}

TEST_CASE("in 16x8 groups with an offset, a 2D kernel of global ids runs each work-item once, "
          "and one that reads its local ids sees the groups it was enqueued with",
          "[api][kernel][cpu]") {
    // What the user can check: every work-item of the offset range ran once with its own ids
    // and sizes, and a kernel that asks for its local or group ids gets those of the enqueued
    // groups (a device may run a kernel that cannot tell its grouping in groups of its own).
    WithQueue f;
    const char* src = R"CL(
__kernel void blind(__global uint* out, uint w) {
    size_t x = get_global_id(0) - get_global_offset(0), y = get_global_id(1) - get_global_offset(1);
    bool sizes = get_global_size(0) == 48 && get_global_size(1) == 40 && get_work_dim() == 2;
    out[y * w + x] += (uint)(get_global_id(1) * 1000 + get_global_id(0)) + (sizes ? 1u : 0x40000000u);
}
__kernel void seeing(__global uint* out, uint w) {
    size_t x = get_global_id(0) - get_global_offset(0), y = get_global_id(1) - get_global_offset(1);
    out[y * w + x] = (uint)(get_group_id(1) << 24 | get_group_id(0) << 16 |
                            get_local_id(1) << 8 | get_local_id(0));
}
)CL";
    const size_t global[2] = {48, 40}, local[2] = {16, 8}, offset[2] = {3, 5};
    const cl_uint w = 48, n = 48 * 40;
    for (const char* options : {"", "-cl-std=CL2.0"}) {
        INFO("options: '" << options << "'");
        cl_program p = buildProgram(f.context, f.device, src, options);
        cl_int err;
        cl_mem out = f.buffer(n * 4);
        for (const char* name : {"blind", "seeing"}) {
            INFO(name);
            const bool blind = std::string(name) == "blind";
            cl_kernel k = clCreateKernel(p, name, &err);
            REQUIRE_CL(err);
            std::vector<cl_uint> zero(n, 0);
            REQUIRE_CL(clEnqueueWriteBuffer(f.queue, out, CL_TRUE, 0, n * 4, zero.data(), 0,
                                            nullptr, nullptr));
            REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
            REQUIRE_CL(clSetKernelArg(k, 1, sizeof w, &w));
            REQUIRE_CL(
                clEnqueueNDRangeKernel(f.queue, k, 2, offset, global, local, 0, nullptr, nullptr));
            auto r = f.read<cl_uint>(out, n);
            size_t wrong = 0;
            for (cl_uint y = 0; y < 40; ++y)
                for (cl_uint x = 0; x < w; ++x) {
                    const cl_uint want =
                        blind ? (y + 5) * 1000 + (x + 3) + 1
                              : (y / 8) << 24 | (x / 16) << 16 | (y % 8) << 8 | (x % 16);
                    wrong += r[y * w + x] != want;
                }
            CHECK(wrong == 0);
            clReleaseKernel(k);
        }
        clReleaseMemObject(out);
        clReleaseProgram(p);
    }
}

TEST_CASE("with no local size, OpenCL C 2.0 programs get large groups whatever the global size",
          "[api][kernel][cpu]") {
    // ceil(2^18 / 3) = 2 x 43691 (a prime): the only uniform groups are of 1 or 2 work-items,
    // each a call of the CPU device's work-group function (the conversions CTS launches such
    // ranges). A CL2.0 program may get non-uniform groups; a 1.2 program still gets uniform ones.
    WithQueue f;
    const char* src = R"CL(
__kernel void sizes(__global uint* out) {
    size_t i = get_global_id(0);
    out[3 * i] = (uint)get_local_size(0);
    out[3 * i + 1] = (uint)get_group_id(0);
    out[3 * i + 2] = (uint)get_local_id(0) + 1;
}
)CL";
    const size_t n = 87382;
    for (const char* options :
         {"-cl-std=CL2.0", "-cl-std=CL1.2", "-cl-std=CL2.0 -cl-uniform-work-group-size"}) {
        INFO(options);
        const bool uniform = std::string(options) != "-cl-std=CL2.0";
        cl_program p = buildProgram(f.context, f.device, src, options);
        cl_int err;
        cl_kernel k = clCreateKernel(p, "sizes", &err);
        REQUIRE_CL(err);
        cl_mem out = f.buffer(3 * n * 4);
        std::vector<cl_uint> zero(3 * n, 0);
        REQUIRE_CL(clEnqueueWriteBuffer(f.queue, out, CL_TRUE, 0, zero.size() * 4, zero.data(), 0,
                                        nullptr, nullptr));
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        auto r = f.read<cl_uint>(out, 3 * n);
        // Every work-item ran, once, at the place its group and local id say.
        const size_t first = r[0];
        REQUIRE(first > 0);
        for (size_t i = 0; i < n; ++i) {
            INFO("work-item " << i);
            REQUIRE(r[3 * i + 2] != 0);
            REQUIRE(r[3 * i + 1] * first + r[3 * i + 2] - 1 == i);
            const size_t expected = std::min(first, n - r[3 * i + 1] * first);
            REQUIRE(r[3 * i] == expected);
        }
        if (uniform)
            CHECK(n % first == 0);
        else
            CHECK(first >= 16);
        clReleaseMemObject(out);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}
