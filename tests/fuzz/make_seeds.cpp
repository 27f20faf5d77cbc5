// Writes the seed corpora of fuzz_program_binary and fuzz_gcn_code_object from binaries Duet
// itself makes (README.md says how to run it). Not part of the build.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

const char* kSource = R"CL(
typedef struct { float scale; int offset; } Params;
constant float kTable[4] = {1.0f, 2.0f, 3.0f, 4.0f};
int helper(int x);
kernel void axpy(global float* y, global const float* x, float a, Params p) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i] * p.scale + kTable[i & 3] + (float)helper(p.offset);
}
kernel void reverse(global int* data, local int* tmp) {
    size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
    tmp[l] = data[g * n + l];
    barrier(CLK_LOCAL_MEM_FENCE);
    data[g * n + l] = tmp[n - 1 - l];
    if (l == 0 && g == 0) printf("n=%d %f\n", (int)n, 1.5f);
}
kernel void blur(read_only image2d_t in, write_only image2d_t out, sampler_t s) {
    int2 c = (int2)(get_global_id(0), get_global_id(1));
    write_imagef(out, c, read_imagef(in, s, c) * 0.5f);
}
)CL";
const char* kHelper = "int helper(int x) { return 2 * x; }\n";

void check(cl_int e, const char* what) {
    if (e != CL_SUCCESS) {
        std::fprintf(stderr, "%s failed: %d\n", what, e);
        std::exit(1);
    }
}

std::string binaryOf(cl_program p) {
    size_t size = 0;
    check(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr), "sizes");
    std::string bin(size, '\0');
    unsigned char* ptr = reinterpret_cast<unsigned char*>(bin.data());
    check(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr), "binaries");
    return bin;
}

void write(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
}

/// The .text section of a Duet program binary (a GCN executable's code object).
std::string textSection(const std::string& bin) {
    auto u16 = [&](size_t at) {
        uint16_t v;
        std::memcpy(&v, bin.data() + at, 2);
        return v;
    };
    auto u32 = [&](size_t at) {
        uint32_t v;
        std::memcpy(&v, bin.data() + at, 4);
        return v;
    };
    auto u64 = [&](size_t at) {
        uint64_t v;
        std::memcpy(&v, bin.data() + at, 8);
        return v;
    };
    const uint64_t shoff = u64(0x28);
    const uint16_t shnum = u16(0x3c), shstrndx = u16(0x3e);
    const uint64_t strtab = u64(shoff + 64 * shstrndx + 0x18);
    for (uint16_t i = 0; i < shnum; ++i) {
        const size_t sh = shoff + 64 * i;
        if (std::strcmp(bin.data() + strtab + u32(sh), ".text") == 0)
            return bin.substr(u64(sh + 0x18), u64(sh + 0x20));
    }
    return {};
}

} // namespace

int main(int argc, char** argv) {
    const std::string out = argc > 1 ? argv[1] : "tests/fuzz";
    cl_platform_id platforms[8];
    cl_uint n = 0;
    check(clGetPlatformIDs(8, platforms, &n), "platforms");
    cl_device_id devices[8];
    cl_uint nd = 0;
    check(clGetDeviceIDs(platforms[0], CL_DEVICE_TYPE_ALL, 8, devices, &nd), "devices");
    for (cl_uint d = 0; d < nd; ++d) {
        cl_device_type type;
        check(clGetDeviceInfo(devices[d], CL_DEVICE_TYPE, sizeof type, &type, nullptr), "type");
        const std::string kind = type == CL_DEVICE_TYPE_CPU ? "cpu" : "gpu";
        cl_int e;
        cl_context ctx = clCreateContext(nullptr, 1, &devices[d], nullptr, nullptr, &e);
        check(e, "context");
        cl_program main = clCreateProgramWithSource(ctx, 1, &kSource, nullptr, &e);
        cl_program help = clCreateProgramWithSource(ctx, 1, &kHelper, nullptr, &e);
        check(clCompileProgram(main, 1, &devices[d], "-cl-std=CL1.2", 0, nullptr, nullptr, nullptr,
                               nullptr),
              "compile");
        check(clCompileProgram(help, 1, &devices[d], "", 0, nullptr, nullptr, nullptr, nullptr),
              "compile helper");
        write(out + "/fuzz_program_binary/" + kind + "-object", binaryOf(main));
        cl_program lib =
            clLinkProgram(ctx, 1, &devices[d], "-create-library", 1, &help, nullptr, nullptr, &e);
        check(e, "library");
        write(out + "/fuzz_program_binary/" + kind + "-library", binaryOf(lib));
        cl_program both[] = {main, lib};
        cl_program exe = clLinkProgram(ctx, 1, &devices[d], "", 2, both, nullptr, nullptr, &e);
        check(e, "link");
        const std::string bin = binaryOf(exe);
        write(out + "/fuzz_program_binary/" + kind + "-executable", bin);
        if (kind == "gpu")
            write(out + "/fuzz_gcn_code_object/gfx900-code-object", textSection(bin));
        for (cl_program p : {main, help, lib, exe})
            clReleaseProgram(p);
        clReleaseContext(ctx);
    }
    return 0;
}
