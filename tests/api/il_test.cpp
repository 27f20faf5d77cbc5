// SPIR-V through the API: CL_DEVICE_IL_VERSION, clCreateProgramWithIL with modules made at test
// build time (clang-15 -cl-std=CL2.0 | llvm-spirv-15, and spirv-as), kernels run and checked,
// CL_PROGRAM_IL, specialisation constants, clCompileProgram/clLinkProgram, the translator's
// failures and time-out, and bad modules. [il] cases run kernels (the CPU device, the GCN
// model); [il-build] cases only build (also the NVIDIA device through the fake driver, whose PTX
// goes through ptxas where a CUDA toolkit is installed). [absent]: a device or a runtime without
// SPIR-V.
#define CATCH_CONFIG_RUNNER
#include "support/cl_test.hpp"
#include "devices/standalone_device.hpp" // deviceUnderTest
#include "support/xvfb.hpp"              // skipTest

#include <sys/wait.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unistd.h>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

/// This program's folder (a bundle's tests/).
std::filesystem::path programDir() {
    std::error_code ec;
    return std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
}

/// Where the modules made at build time are: $DUET_TEST_IL_DIR, else the build tree's folder,
/// else il/ beside this program (a relocatable bundle carries them in tests/il).
std::string moduleDir() {
    if (const char* e = std::getenv("DUET_TEST_IL_DIR"))
        return e;
    std::error_code ec;
    if (std::filesystem::is_directory(DUET_IL_DIR, ec))
        return DUET_IL_DIR;
    return (programDir() / "il").string();
}

std::string readModule(const std::string& name) {
    static const std::string dir = moduleDir();
    std::ifstream in(dir + "/" + name, std::ios::binary);
    INFO("test input " << dir << "/" << name);
    REQUIRE(in.good());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string deviceIlVersion(cl_device_id d) {
    return deviceString(d, CL_DEVICE_IL_VERSION);
}

/// The notify callback's last reason.
void CL_CALLBACK keepReason(const char* why, const void*, size_t, void* user) {
    *static_cast<std::string*>(user) = why;
}

/// A context on the device under test whose notify callback keeps the last reason.
struct WithReasons : WithQueue {
    cl_context noisy = nullptr;
    std::string reason;
    WithReasons() {
        cl_int e = CL_SUCCESS;
        noisy = clCreateContext(nullptr, 1, &device, keepReason, &reason, &e);
        REQUIRE(e == CL_SUCCESS);
    }
    ~WithReasons() { clReleaseContext(noisy); }
    /// clCreateProgramWithIL's error for `il` in the noisy context (NULL program expected).
    cl_int create(const std::string& il) {
        cl_int e = CL_SUCCESS;
        cl_program p = clCreateProgramWithIL(noisy, il.data(), il.size(), &e);
        if (p)
            clReleaseProgram(p);
        return e;
    }
};

cl_program programFromIl(cl_context c, const std::string& il) {
    cl_int e = CL_SUCCESS;
    cl_program p = clCreateProgramWithIL(c, il.data(), il.size(), &e);
    REQUIRE_CL(e);
    REQUIRE(p != nullptr);
    return p;
}

/// Writes an executable shell script standing in for the translator.
std::string fakeTranslator(const std::string& name, const std::string& body) {
    auto path = std::filesystem::temp_directory_path() /
                ("duet-il-test-" + std::to_string(::getpid()) + "-" + name);
    {
        std::ofstream f(path);
        f << "#!/bin/sh\n" << body << "\n";
    }
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path.string();
}

/// Sets an environment variable for one scope, then restores what it was (the translator a GPU
/// host's run names in DUET_LLVM_SPIRV must outlive the cases that replace it).
struct ScopedEnv {
    std::string name;
    std::optional<std::string> before;
    ScopedEnv(const char* n, const std::string& v) : name(n) {
        if (const char* old = std::getenv(n))
            before = old;
        ::setenv(n, v.c_str(), 1);
    }
    ~ScopedEnv() {
        if (before)
            ::setenv(name.c_str(), before->c_str(), 1);
        else
            ::unsetenv(name.c_str());
    }
};

} // namespace

TEST_CASE("the device lists SPIR-V 1.0 to 1.4", "[il][il-build]") {
    WithQueue q;
    CHECK(deviceIlVersion(q.device) == "SPIR-V_1.0 SPIR-V_1.1 SPIR-V_1.2 SPIR-V_1.3 SPIR-V_1.4");
    size_t bytes = 0;
    REQUIRE_CL(clGetDeviceInfo(q.device, CL_DEVICE_ILS_WITH_VERSION, 0, nullptr, &bytes));
    std::vector<cl_name_version> ils(bytes / sizeof(cl_name_version));
    REQUIRE(ils.size() == 5);
    REQUIRE_CL(clGetDeviceInfo(q.device, CL_DEVICE_ILS_WITH_VERSION, bytes, ils.data(), nullptr));
    for (cl_uint i = 0; i < 5; ++i) {
        CHECK(std::string(ils[i].name) == "SPIR-V");
        CHECK(ils[i].version == CL_MAKE_VERSION(1, i, 0));
    }
}

TEST_CASE("a module from clang -cl-std=CL2.0 | llvm-spirv builds and runs", "[il]") {
    WithQueue q;
    const std::string il = readModule("kernels.spv");
    cl_program p = programFromIl(q.context, il);
    REQUIRE_CL(clBuildProgram(p, 1, &q.device, "", nullptr, nullptr));
    INFO(buildLog(p, q.device));

    // CL_PROGRAM_IL gives the module back as it was given.
    size_t bytes = 0;
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_IL, 0, nullptr, &bytes));
    std::string back(bytes, '\0');
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_IL, bytes, back.data(), nullptr));
    CHECK(back == il);
    char names[256] = {};
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, nullptr));
    CHECK(std::string(names) == "add;reduce;vectors");

    const size_t n = 256;
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
        a[i] = float(i);
        b[i] = float(3 * i) + 0.5f;
    }
    cl_int e = CL_SUCCESS;
    {
        cl_kernel k = clCreateKernel(p, "add", &e);
        REQUIRE_CL(e);
        cl_mem A = q.buffer(n * 4, CL_MEM_COPY_HOST_PTR, a.data());
        cl_mem B = q.buffer(n * 4, CL_MEM_COPY_HOST_PTR, b.data());
        cl_mem C = q.buffer(n * 4);
        float s = 0.25f;
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof A, &A));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof B, &B));
        REQUIRE_CL(clSetKernelArg(k, 2, sizeof C, &C));
        REQUIRE_CL(clSetKernelArg(k, 3, sizeof s, &s));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        auto c = q.read<float>(C, n);
        for (size_t i = 0; i < n; ++i)
            CHECK(c[i] == a[i] + b[i] * s);
        // clang-15 names no arguments in the module: nothing to report (spec).
        char name[64];
        CHECK_CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
                     clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, sizeof name, name, nullptr));
        for (cl_mem m : {A, B, C})
            clReleaseMemObject(m);
        clReleaseKernel(k);
    }
    {
        cl_kernel k = clCreateKernel(p, "reduce", &e);
        REQUIRE_CL(e);
        std::vector<int> in(n);
        long expect = 0;
        for (size_t i = 0; i < n; ++i)
            expect += in[i] = int(i * 7 % 31) - 9;
        cl_mem In = q.buffer(n * 4, CL_MEM_COPY_HOST_PTR, in.data());
        int zero = 0;
        cl_mem Sum = q.buffer(4, CL_MEM_COPY_HOST_PTR, &zero);
        const size_t local = 64;
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof In, &In));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof Sum, &Sum));
        REQUIRE_CL(clSetKernelArg(k, 2, local * sizeof(int), nullptr));
        REQUIRE_CL(clEnqueueNDRangeKernel(q.queue, k, 1, nullptr, &n, &local, 0, nullptr, nullptr));
        CHECK(q.read<int>(Sum, 1)[0] == expect);
        clReleaseMemObject(In);
        clReleaseMemObject(Sum);
        clReleaseKernel(k);
    }
    {
        cl_kernel k = clCreateKernel(p, "vectors", &e);
        REQUIRE_CL(e);
        cl_mem In = q.buffer(n * 4, CL_MEM_COPY_HOST_PTR, a.data());
        cl_mem Out = q.buffer(n * 4);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof In, &In));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof Out, &Out));
        const size_t quads = n / 4;
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q.queue, k, 1, nullptr, &quads, nullptr, 0, nullptr, nullptr));
        auto out = q.read<float>(Out, n);
        for (size_t i = 0; i < n; ++i)
            CHECK(out[i] == Approx(std::sqrt(a[i]) + std::fmax(a[i], 2.0f)).epsilon(1e-6));
        clReleaseMemObject(In);
        clReleaseMemObject(Out);
        clReleaseKernel(k);
    }
    clReleaseProgram(p);
}

TEST_CASE("build options are checked and honoured for IL programs", "[il][il-build]") {
    WithQueue q;
    cl_program p = programFromIl(q.context, readModule("device.spv"));
    // As for OpenCL C programs: clBuildProgram's own code (OpenCL 3.0 section 5.8.3).
    CHECK_CL_ERR(CL_INVALID_BUILD_OPTIONS,
                 clBuildProgram(p, 1, &q.device, "-no-such-option", nullptr, nullptr));
    REQUIRE_CL(
        clBuildProgram(p, 1, &q.device, "-cl-fast-relaxed-math -cl-opt-disable", nullptr, nullptr));
    char opts[128] = {};
    REQUIRE_CL(
        clGetProgramBuildInfo(p, q.device, CL_PROGRAM_BUILD_OPTIONS, sizeof opts, opts, nullptr));
    CHECK(std::string(opts) == "-cl-fast-relaxed-math -cl-opt-disable");
    clReleaseProgram(p);
}

TEST_CASE("specialisation constants", "[il]") {
    WithQueue q;
    const std::string il = readModule("spec_constants.spv");
    const size_t n = 16;
    auto run = [&](cl_program p, std::vector<cl_uint>& out, std::vector<cl_ulong>& flags) {
        REQUIRE_CL(clBuildProgram(p, 1, &q.device, "", nullptr, nullptr));
        cl_int e = CL_SUCCESS;
        cl_kernel k = clCreateKernel(p, "spec", &e);
        REQUIRE_CL(e);
        cl_mem O = q.buffer(n * 4), F = q.buffer(n * 8);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof O, &O));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof F, &F));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        out = q.read<cl_uint>(O, n);
        flags = q.read<cl_ulong>(F, n);
        // The module names its arguments: the kernel reports them.
        char name[16] = {};
        REQUIRE_CL(clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_NAME, sizeof name, name, nullptr));
        CHECK(std::string(name) == "flags");
        clReleaseMemObject(O);
        clReleaseMemObject(F);
        clReleaseKernel(k);
    };
    std::vector<cl_uint> out;
    std::vector<cl_ulong> flags;

    cl_program p = programFromIl(q.context, il);
    run(p, out, flags); // the defaults: 3, false, 5
    for (size_t i = 0; i < n; ++i) {
        CHECK(out[i] == 3 * i);
        CHECK(flags[i] == 5);
    }
    clReleaseProgram(p);

    p = programFromIl(q.context, il);
    cl_uint scale = 11;
    cl_uchar on = 1;
    cl_ulong big = 0x123456789ull;
    REQUIRE_CL(clSetProgramSpecializationConstant(p, 7, sizeof scale, &scale));
    REQUIRE_CL(clSetProgramSpecializationConstant(p, 8, sizeof on, &on));
    REQUIRE_CL(clSetProgramSpecializationConstant(p, 9, sizeof big, &big));
    // Bad inputs: an id the module does not have, a wrong size, no value.
    CHECK_CL_ERR(CL_INVALID_SPEC_ID, clSetProgramSpecializationConstant(p, 10, 4, &scale));
    CHECK_CL_ERR(CL_INVALID_VALUE, clSetProgramSpecializationConstant(p, 7, 8, &big));
    CHECK_CL_ERR(CL_INVALID_VALUE, clSetProgramSpecializationConstant(p, 8, 4, &scale));
    CHECK_CL_ERR(CL_INVALID_VALUE, clSetProgramSpecializationConstant(p, 7, 4, nullptr));
    run(p, out, flags);
    for (size_t i = 0; i < n; ++i) {
        CHECK(out[i] == 11 * i);
        CHECK(flags[i] == big + 1);
    }
    clReleaseProgram(p);

    // A program from OpenCL C (on a device that takes IL) has no specialisation constants.
    cl_program src = buildProgram(q.context, q.device, "kernel void k(){}");
    CHECK_CL_ERR(CL_INVALID_PROGRAM, clSetProgramSpecializationConstant(src, 7, 4, &scale));
    CHECK_CL_ERR(CL_INVALID_PROGRAM, clSetProgramSpecializationConstant(nullptr, 7, 4, &scale));
    clReleaseProgram(src);
}

TEST_CASE("an IL program compiles and links with an OpenCL C one", "[il]") {
    WithQueue q;
    cl_program lib = programFromIl(q.context, readModule("library.spv"));
    REQUIRE_CL(clCompileProgram(lib, 1, &q.device, "", 0, nullptr, nullptr, nullptr, nullptr));
    const char* src = "float twice(float x);\n"
                      "kernel void use(global float* v) { v[get_global_id(0)] = "
                      "twice(v[get_global_id(0)]); }\n";
    cl_int e = CL_SUCCESS;
    cl_program user = clCreateProgramWithSource(q.context, 1, &src, nullptr, &e);
    REQUIRE_CL(e);
    REQUIRE_CL(clCompileProgram(user, 1, &q.device, "", 0, nullptr, nullptr, nullptr, nullptr));
    cl_program both[] = {lib, user};
    cl_program linked = clLinkProgram(q.context, 1, &q.device, "", 2, both, nullptr, nullptr, &e);
    REQUIRE_CL(e);
    cl_kernel k = clCreateKernel(linked, "use", &e);
    REQUIRE_CL(e);
    std::vector<float> v = {1.0f, 2.5f, -4.0f, 8.0f};
    cl_mem V = q.buffer(v.size() * 4, CL_MEM_COPY_HOST_PTR, v.data());
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof V, &V));
    const size_t n = v.size();
    REQUIRE_CL(clEnqueueNDRangeKernel(q.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    auto out = q.read<float>(V, n);
    for (size_t i = 0; i < n; ++i)
        CHECK(out[i] == 2.0f * v[i] + 1.0f);
    clReleaseMemObject(V);
    clReleaseKernel(k);
    for (cl_program p : {lib, user, linked})
        clReleaseProgram(p);
}

TEST_CASE("bad modules are CL_INVALID_VALUE with a reason", "[il][il-build]") {
    WithReasons q;
    const std::string good = readModule("kernels.spv");
    cl_int e = CL_SUCCESS;
    CHECK(clCreateProgramWithIL(q.noisy, nullptr, 20, &e) == nullptr);
    CHECK(e == CL_INVALID_VALUE);
    CHECK(clCreateProgramWithIL(q.noisy, good.data(), 0, &e) == nullptr);
    CHECK(e == CL_INVALID_VALUE);
    CHECK(clCreateProgramWithIL(nullptr, good.data(), good.size(), &e) == nullptr);
    CHECK(e == CL_INVALID_CONTEXT);

    SECTION("truncated: not a whole number of words") {
        CHECK(q.create(good.substr(0, good.size() - 3)) == CL_INVALID_VALUE);
        CHECK(q.reason.find("not a whole number of words") != std::string::npos);
    }
    SECTION("truncated: an instruction runs past the end") {
        CHECK(q.create(good.substr(0, good.size() / 2 & ~size_t(3))) == CL_INVALID_VALUE);
        CHECK(q.reason.find("running past") != std::string::npos);
    }
    SECTION("shorter than the header") {
        CHECK(q.create(good.substr(0, 12)) == CL_INVALID_VALUE);
        CHECK(q.reason.find("header") != std::string::npos);
    }
    SECTION("wrong magic") {
        std::string bad = good;
        bad[0] ^= 0x40;
        CHECK(q.create(bad) == CL_INVALID_VALUE);
        CHECK(q.reason.find("magic") != std::string::npos);
    }
    SECTION("SPIR-V 1.5") {
        std::string bad = good;
        bad[5] = 5; // version word, little-endian: 0x00010500
        CHECK(q.create(bad) == CL_INVALID_VALUE);
        CHECK(q.reason.find("SPIR-V 1.5") != std::string::npos);
    }
    SECTION("a module that does not validate") {
        CHECK(q.create(readModule("invalid.spv")) == CL_INVALID_VALUE);
        CHECK(q.reason.find("does not validate") != std::string::npos);
        CHECK(q.reason.find("IMul") != std::string::npos);
    }
    SECTION("a Vulkan (Shader capability) module") {
        CHECK(q.create(readModule("vulkan.spv")) == CL_INVALID_VALUE);
        CHECK(q.reason.find("Shader") != std::string::npos);
    }
    SECTION("32-bit addressing (clang -target spir)") {
        CHECK(q.create(readModule("kernels32.spv")) == CL_INVALID_VALUE);
        CHECK(q.reason.find("Physical32") != std::string::npos);
    }
}

TEST_CASE("translator failures are build failures with its message in the log", "[il][il-build]") {
    WithQueue q;
    const std::string il = readModule("kernels.spv");
    SECTION("it fails") {
        ScopedEnv env("DUET_LLVM_SPIRV",
                      fakeTranslator("fails", "echo 'InvalidModule: fake translator says no' >&2; "
                                              "exit 3"));
        cl_program p = programFromIl(q.context, il);
        CHECK_CL_ERR(CL_BUILD_PROGRAM_FAILURE,
                     clBuildProgram(p, 1, &q.device, "", nullptr, nullptr));
        std::string log = buildLog(p, q.device);
        CHECK(log.find("fake translator says no") != std::string::npos);
        CHECK(log.find("exited with status 3") != std::string::npos);
        cl_build_status status = CL_BUILD_NONE;
        REQUIRE_CL(clGetProgramBuildInfo(p, q.device, CL_PROGRAM_BUILD_STATUS, sizeof status,
                                         &status, nullptr));
        CHECK(status == CL_BUILD_ERROR);
        clReleaseProgram(p);
        std::filesystem::remove(getenv("DUET_LLVM_SPIRV"));
    }
    SECTION("it hangs and is stopped") {
        ScopedEnv env("DUET_LLVM_SPIRV", fakeTranslator("hangs", "exec sleep 60"));
        ScopedEnv timeout("DUET_SPIRV_TIMEOUT", "1");
        cl_program p = programFromIl(q.context, il);
        CHECK_CL_ERR(CL_BUILD_PROGRAM_FAILURE,
                     clBuildProgram(p, 1, &q.device, "", nullptr, nullptr));
        CHECK(buildLog(p, q.device).find("did not finish within 1 s") != std::string::npos);
        clReleaseProgram(p);
        std::filesystem::remove(getenv("DUET_LLVM_SPIRV"));
    }
    SECTION("it writes garbage") {
        ScopedEnv env("DUET_LLVM_SPIRV",
                      fakeTranslator("garbage", "for a; do out=$prev; prev=$a; done\n"
                                                "echo not bitcode > \"$out\""));
        cl_program p = programFromIl(q.context, il);
        CHECK_CL_ERR(CL_BUILD_PROGRAM_FAILURE,
                     clBuildProgram(p, 1, &q.device, "", nullptr, nullptr));
        CHECK(buildLog(p, q.device).find("not readable bitcode") != std::string::npos);
        clReleaseProgram(p);
        std::filesystem::remove(getenv("DUET_LLVM_SPIRV"));
    }
}

TEST_CASE("every address space, barriers and atomics: device.spv runs", "[il]") {
    WithQueue q;
    cl_program p = programFromIl(q.context, readModule("device.spv"));
    REQUIRE_CL(clBuildProgram(p, 1, &q.device, "", nullptr, nullptr));
    INFO(buildLog(p, q.device));
    const int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
    cl_int e = CL_SUCCESS;
    {
        const size_t n = 256, local = 64;
        std::vector<int> in(n), bins(8, 0);
        for (size_t g = 0; g < n; ++g)
            in[g] = int((g * 37 + 11) % 101);
        cl_kernel k = clCreateKernel(p, "histogram", &e);
        REQUIRE_CL(e);
        cl_mem In = q.buffer(n * 4, CL_MEM_COPY_HOST_PTR, in.data());
        cl_mem Bins = q.buffer(8 * 4, CL_MEM_COPY_HOST_PTR, bins.data());
        cl_mem Out = q.buffer(4 * n * 4);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof In, &In));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof Bins, &Bins));
        REQUIRE_CL(clSetKernelArg(k, 2, local * sizeof(int), nullptr));
        REQUIRE_CL(clSetKernelArg(k, 3, sizeof Out, &Out));
        REQUIRE_CL(clEnqueueNDRangeKernel(q.queue, k, 1, nullptr, &n, &local, 0, nullptr, nullptr));
        auto gotBins = q.read<int>(Bins, 8);
        auto out = q.read<int>(Out, 4 * n);
        for (size_t g = 0; g < n; ++g)
            ++bins[in[g] & 7];
        for (size_t b = 0; b < 8; ++b)
            CHECK(gotBins[b] == bins[b]);
        for (size_t g = 0; g < n; ++g) {
            INFO("work-item " << g);
            const size_t base = g / local * local;
            CHECK(out[4 * g] == table[in[g] & 7] * int(g + 1));         // private array
            CHECK(out[4 * g + 1] == 4 * int(g + 1) + in[g] + in[base]); // generic pointers
            CHECK(out[4 * g + 2] == in[base + (g + 1) % local]);        // __local, barrier
            CHECK(out[4 * g + 3] == ((g & 1) ? 1 : 10));                // to_local, to_global
        }
        for (cl_mem m : {In, Bins, Out})
            clReleaseMemObject(m);
        clReleaseKernel(k);
    }
    {
        struct Params {
            cl_int scale;
            cl_float offset;
            cl_int pick[3];
        } params = {3, 0.5f, {2, -1, 7}};
        const float weights[4] = {1, 2, 4, 8};
        const size_t n = 24;
        cl_kernel k = clCreateKernel(p, "params", &e);
        REQUIRE_CL(e);
        cl_mem Out = q.buffer(n * 4);
        cl_mem W = q.buffer(sizeof weights, CL_MEM_COPY_HOST_PTR, const_cast<float*>(weights));
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof Out, &Out));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof params, &params));
        REQUIRE_CL(clSetKernelArg(k, 2, sizeof W, &W));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        auto out = q.read<float>(Out, n);
        for (size_t i = 0; i < n; ++i)
            CHECK(out[i] == float(params.scale * params.pick[i % 3]) + 0.5f * weights[i % 4]);
        clReleaseMemObject(Out);
        clReleaseMemObject(W);
        clReleaseKernel(k);
    }
    {
        const size_t n = 128;
        const int empty = -1;
        cl_kernel k = clCreateKernel(p, "claim", &e);
        REQUIRE_CL(e);
        cl_mem Slot = q.buffer(4, CL_MEM_COPY_HOST_PTR, const_cast<int*>(&empty));
        cl_mem Won = q.buffer(n * 4);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof Slot, &Slot));
        REQUIRE_CL(clSetKernelArg(k, 1, sizeof Won, &Won));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        const int slot = q.read<int>(Slot, 1)[0];
        auto won = q.read<int>(Won, n);
        REQUIRE(slot >= 0);
        REQUIRE(slot < int(n));
        for (size_t i = 0; i < n; ++i)
            CHECK(won[i] == (int(i) == slot ? 1 : 0));
        clReleaseMemObject(Slot);
        clReleaseMemObject(Won);
        clReleaseKernel(k);
    }
    clReleaseProgram(p);
}

namespace {

/// ptxas -arch=sm_90 on a PTX file: "" when it assembles, else its messages. Empty too, with
/// `ran` false, where no CUDA toolkit was found at configure time.
std::string assemblePtx(const std::string& path, bool& ran) {
#ifdef DUET_PTXAS
    ran = true;
    const std::string log = path + ".ptxas.log";
    const std::string cmd = std::string("'") + DUET_PTXAS + "' -arch=sm_90 -o " + path + ".cubin " +
                            path + " > " + log + " 2>&1";
    const int raw = std::system(cmd.c_str());
    std::ostringstream text;
    text << std::ifstream(log).rdbuf();
    return WIFEXITED(raw) && WEXITSTATUS(raw) == 0 ? "" : "ptxas failed:\n" + text.str();
#else
    (void)path;
    ran = false;
    return "";
#endif
}

bool isNvidia(cl_device_id d) {
    return deviceString(d, CL_DEVICE_VENDOR).find("NVIDIA") != std::string::npos;
}

} // namespace

TEST_CASE("IL programs on every device: kernels, argument info, binaries, -save-temps",
          "[il][il-build]") {
    WithQueue q;
    cl_program p = programFromIl(q.context, readModule("device.spv"));
    auto dir = std::filesystem::temp_directory_path() /
               ("duet-il-save-temps-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string options = "-save-temps=" + (dir / "il").string();
    REQUIRE_CL(clBuildProgram(p, 1, &q.device, options.c_str(), nullptr, nullptr));
    const std::string log = buildLog(p, q.device);
    INFO(log);
    char names[64] = {};
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, nullptr));
    CHECK(std::string(names) == "histogram;params;claim");
    cl_int e = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, "params", &e);
    REQUIRE_CL(e);
    cl_uint args = 0;
    REQUIRE_CL(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr));
    CHECK(args == 3);
    // clang-15 names no arguments in the module: nothing to report, on every device.
    char name[64];
    CHECK_CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
                 clGetKernelArgInfo(k, 2, CL_KERNEL_ARG_NAME, sizeof name, name, nullptr));
    clReleaseKernel(k);

    // -save-temps: each kernel's IR, and on the NVIDIA device the module's PTX, which NVIDIA's
    // assembler takes.
    for (const char* kernel : {"histogram", "params"})
        CHECK(std::filesystem::exists(dir / ("il_" + std::string(kernel) + ".ll")));
    if (isNvidia(q.device)) {
        const auto ptx = dir / "il.ptx";
        REQUIRE(std::filesystem::exists(ptx));
        bool ran = false;
        const std::string failure = assemblePtx(ptx.string(), ran);
        INFO(failure);
        CHECK(failure.empty());
        if (!ran)
            WARN("ptxas not found at configure time: the IL program's PTX was not assembled");
    }
    std::filesystem::remove_all(dir);

    // The executable's binary gives the program back without the module.
    size_t size = 0;
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
    std::vector<unsigned char> binary(size);
    unsigned char* binaries[] = {binary.data()};
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof binaries, binaries, nullptr));
    const unsigned char* bin = binary.data();
    cl_int status = CL_SUCCESS;
    cl_program fromBinary =
        clCreateProgramWithBinary(q.context, 1, &q.device, &size, &bin, &status, &e);
    REQUIRE_CL(e);
    REQUIRE_CL(status);
    REQUIRE_CL(clBuildProgram(fromBinary, 1, &q.device, "", nullptr, nullptr));
    char again[64] = {};
    REQUIRE_CL(clGetProgramInfo(fromBinary, CL_PROGRAM_KERNEL_NAMES, sizeof again, again, nullptr));
    CHECK(std::string(again) == "histogram;params;claim");
    clReleaseProgram(fromBinary);
    clReleaseProgram(p);
}

TEST_CASE("images and samplers in an IL program", "[il][il-build]") {
    WithQueue q;
    cl_program p = programFromIl(q.context, readModule("images.spv"));
    REQUIRE_CL(clBuildProgram(p, 1, &q.device, "", nullptr, nullptr));
    INFO(buildLog(p, q.device));
    char names[64] = {};
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, nullptr));
    CHECK(std::string(names) == "sampled;copy");
    if (isNvidia(q.device)) { // the fake driver runs no kernel: built is what can be checked
        clReleaseProgram(p);
        return;
    }
    const size_t w = 8, h = 4;
    std::vector<float> texels(w * h * 4);
    for (size_t i = 0; i < texels.size(); ++i)
        texels[i] = float(i) * 0.25f;
    cl_image_format format = {CL_RGBA, CL_FLOAT};
    cl_image_desc desc = {};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = w;
    desc.image_height = h;
    cl_int e = CL_SUCCESS;
    cl_mem src = clCreateImage(q.context, CL_MEM_COPY_HOST_PTR | CL_MEM_READ_ONLY, &format, &desc,
                               texels.data(), &e);
    REQUIRE_CL(e);
    cl_mem dst = clCreateImage(q.context, CL_MEM_WRITE_ONLY, &format, &desc, nullptr, &e);
    REQUIRE_CL(e);
    const cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS,
                                           CL_FALSE,
                                           CL_SAMPLER_ADDRESSING_MODE,
                                           CL_ADDRESS_CLAMP_TO_EDGE,
                                           CL_SAMPLER_FILTER_MODE,
                                           CL_FILTER_NEAREST,
                                           0};
    cl_sampler sampler = clCreateSamplerWithProperties(q.context, props, &e);
    REQUIRE_CL(e);
    cl_mem Out = q.buffer(texels.size() * 4);
    const size_t global[2] = {w, h};
    cl_kernel sampled = clCreateKernel(p, "sampled", &e);
    REQUIRE_CL(e);
    REQUIRE_CL(clSetKernelArg(sampled, 0, sizeof src, &src));
    REQUIRE_CL(clSetKernelArg(sampled, 1, sizeof sampler, &sampler));
    REQUIRE_CL(clSetKernelArg(sampled, 2, sizeof Out, &Out));
    REQUIRE_CL(
        clEnqueueNDRangeKernel(q.queue, sampled, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    CHECK(q.read<float>(Out, texels.size()) == texels);
    cl_kernel copy = clCreateKernel(p, "copy", &e);
    REQUIRE_CL(e);
    REQUIRE_CL(clSetKernelArg(copy, 0, sizeof src, &src));
    REQUIRE_CL(clSetKernelArg(copy, 1, sizeof dst, &dst));
    REQUIRE_CL(
        clEnqueueNDRangeKernel(q.queue, copy, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    std::vector<float> back(texels.size());
    const size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
    REQUIRE_CL(clEnqueueReadImage(q.queue, dst, CL_TRUE, origin, region, 0, 0, back.data(), 0,
                                  nullptr, nullptr));
    for (size_t i = 0; i < texels.size(); ++i)
        CHECK(back[i] == 2.0f * texels[i]);
    clReleaseKernel(sampled);
    clReleaseKernel(copy);
    clReleaseSampler(sampler);
    for (cl_mem m : {src, dst, Out})
        clReleaseMemObject(m);
    clReleaseProgram(p);
}

TEST_CASE("what a device lacks is a build failure with a log saying so", "[il][il-build]") {
    // subgroups.spv calls sub_group_reduce_add: it builds where the device has sub-groups
    // (CL_DEVICE_MAX_NUM_SUB_GROUPS > 0: every Duet device now, NVIDIA's warps included) and
    // fails with the function named where it has not.
    WithQueue q;
    cl_uint subGroups = 0;
    REQUIRE_CL(clGetDeviceInfo(q.device, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof subGroups, &subGroups,
                               nullptr));
    cl_program p = programFromIl(q.context, readModule("subgroups.spv"));
    const cl_int built = clBuildProgram(p, 1, &q.device, "", nullptr, nullptr);
    const std::string log = buildLog(p, q.device);
    INFO(log);
    if (subGroups > 0) {
        CHECK(built == CL_SUCCESS);
    } else {
        CHECK(built == CL_BUILD_PROGRAM_FAILURE);
        CHECK(log.find("sub_group_reduce_add") != std::string::npos);
    }
    clReleaseProgram(p);
}

TEST_CASE("without SPIR-V support the IL entry points refuse the spec's way", "[.][absent]") {
    WithQueue q;
    CHECK(deviceIlVersion(q.device).empty());
    size_t bytes = 1;
    REQUIRE_CL(clGetDeviceInfo(q.device, CL_DEVICE_ILS_WITH_VERSION, 0, nullptr, &bytes));
    CHECK(bytes == 0);
    // A module header is enough (no device looks further), and the build tree's modules need not
    // be there (a bundle on a host without the translator).
    const uint32_t header[5] = {0x07230203u, 0x00010000u, 0, 1, 0};
    const std::string il(reinterpret_cast<const char*>(header), sizeof header);
    cl_int e = CL_SUCCESS;
    CHECK(clCreateProgramWithIL(q.context, il.data(), il.size(), &e) == nullptr);
    CHECK(e == CL_INVALID_OPERATION);
    // No device of the program takes IL: CL_INVALID_OPERATION before CL_INVALID_PROGRAM.
    cl_program src = buildProgram(q.context, q.device, "kernel void k(){}");
    cl_uint v = 0;
    CHECK_CL_ERR(CL_INVALID_OPERATION, clSetProgramSpecializationConstant(src, 1, 4, &v));
    clReleaseProgram(src);
}

int main(int argc, char** argv) {
    // Everything but the [absent] cases needs the translator. Where it is not installed (the GPU
    // host's bundle) the test says so and ctest counts it skipped; with the translator present a
    // device that lists no IL fails the cases above.
    bool absentOnly = false;
    for (int i = 1; i < argc; ++i)
        absentOnly |= std::string(argv[i]) == "[absent]";
    // The translator the runtime finds: $DUET_LLVM_SPIRV, a bundle's lib/spirv/llvm-spirv (the
    // runtime looks beside itself; the tests are in the bundle's tests/), Debian's.
    const char* env = std::getenv("DUET_LLVM_SPIRV");
    std::string translator = env ? env : DUET_IL_TRANSLATOR;
    const std::string bundled = (programDir() / "../lib/spirv/llvm-spirv").string();
    if (!env && ::access(bundled.c_str(), X_OK) == 0)
        translator = bundled;
    if (!absentOnly && (translator.empty() || ::access(translator.c_str(), X_OK) != 0))
        return duet::test::skipTest("the SPIR-V translator '" + translator +
                                    "' (llvm-spirv-15, DUET_LLVM_SPIRV) is not installed: "
                                    "CL_DEVICE_IL_VERSION is empty and there is nothing to test");
    // The GPU entries (DUET_DEVICES=nvidia with the real driver) on a host without the GPU.
    std::string deviceName;
    if (!duet::test::deviceUnderTest(deviceName)) {
        const char* which = std::getenv("DUET_DEVICES");
        return duet::test::skipTest(std::string("Duet has no device here (DUET_DEVICES=") +
                                    (which ? which : "") + ")");
    }
    return Catch::Session().run(argc, argv);
}
