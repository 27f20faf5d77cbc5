// Every test program's PTX through NVIDIA's assembler (ptxas of a CUDA toolkit, found at
// configure time) for sm_90 and sm_80: what the driver's JIT would take. Without ptxas the test
// says SKIPPED and exits 77 (ctest: skipped). No GPU needed.
#define CATCH_CONFIG_RUNNER
#include "build_util.hpp"
#include "kernels.hpp"
#include "support/xvfb.hpp" // skipTest

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace duet;
using namespace duet::nvidia::test;

namespace {

std::string ptxas() {
#ifdef DUET_PTXAS
    return DUET_PTXAS;
#else
    return {};
#endif
}

struct Assembled {
    int status = -1;
    std::string output;
};

/// ptxas -arch=<sm> on `ptx` (written to a temporary file); its exit status and messages.
Assembled assemble(const std::string& ptx, const std::string& sm, const std::string& extra = "") {
    char dir[] = "/tmp/duet-ptxas-XXXXXX";
    REQUIRE(mkdtemp(dir));
    const std::string in = std::string(dir) + "/module.ptx",
                      out = std::string(dir) + "/module.cubin", log = std::string(dir) + "/log.txt";
    std::ofstream(in) << ptx;
    const std::string cmd = "'" + ptxas() + "' -arch=" + sm + " " + extra + " -o " + out + " " +
                            in + " > " + log + " 2>&1";
    Assembled r;
    const int raw = std::system(cmd.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    std::ostringstream text;
    text << std::ifstream(log).rdbuf();
    r.output = text.str();
    std::remove(in.c_str());
    std::remove(out.c_str());
    std::remove(log.c_str());
    rmdir(dir);
    return r;
}

} // namespace

TEST_CASE("ptxas accepts the PTX of every test program for sm_90 and sm_80", "[nvidia][ptxas]") {
    for (const char* sm : {"sm_90", "sm_80"}) {
        for (const Program& p : programs()) {
            INFO("program " << p.name << " for " << sm);
            Built b = build(p.source, p.options, target(sm, 80));
            Assembled a = assemble(b.exe->ptx(), sm);
            INFO("ptxas:\n" << a.output << "\nPTX:\n" << b.exe->ptx());
            CHECK(a.status == 0);
        }
    }
}

/// The registers ptxas -v reports for `entry` (-1: not reported).
int registersOf(const std::string& verbose, const std::string& entry) {
    const size_t at = verbose.find("Compiling entry function '" + entry + "'");
    if (at == std::string::npos)
        return -1;
    const size_t used = verbose.find("Used ", at);
    return used == std::string::npos ? -1 : std::atoi(verbose.c_str() + used + 5);
}

TEST_CASE("a texture-only variant needs far fewer registers than its kernel", "[nvidia][ptxas]") {
    // The shape of duet-bench's image figure: bilinear reads of a read_only image. The kernel
    // keeps the software read for images textures cannot serve, and ptxas sizes the kernel for
    // it; its variant has the texture reads alone (texture_variants.cpp).
    Built b = build(R"CL(
__kernel void resample(read_only image2d_t src, sampler_t s, __global float* out, uint w, uint h) {
    uint x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    float2 c = ((float2)(x, y) + 0.5f) / (float2)(w, h), d = 0.25f / (float2)(w, h);
    float4 v = read_imagef(src, s, c) + read_imagef(src, s, c + (float2)(d.x, 0.0f)) +
               read_imagef(src, s, c + (float2)(0.0f, d.y)) + read_imagef(src, s, c + d);
    out[y * w + x] = dot(v, (float4)(0.0625f));
}
)CL",
                    "", target("sm_90", 80));
    Assembled a = assemble(b.exe->ptx(), "sm_90", "-v");
    INFO("ptxas:\n" << a.output);
    REQUIRE(a.status == 0);
    const int kernel = registersOf(a.output, "resample");
    const int variant = registersOf(a.output, "__duet_textured_resample");
    REQUIRE((kernel > 0 && variant > 0));
    // 56 and 28 with CUDA 13's ptxas: twice the warps per multiprocessor.
    CHECK(variant * 3 <= kernel * 2);
    CHECK(variant <= 40);
}

TEST_CASE("ptxas accepts the timer polls of DUET_KERNEL_TIMEOUT", "[nvidia][ptxas][timeout]") {
    ScopedEnv timeout("DUET_KERNEL_TIMEOUT", "1");
    for (const char* sm : {"sm_90", "sm_80"}) {
        std::vector<Program> sources = {{"spin", "", kSpinSource}};
        for (const Program& p : programs())
            sources.push_back(p);
        for (const Program& p : sources) {
            INFO("program " << p.name << " for " << sm);
            Built b = build(p.source, p.options, target(sm, 80));
            Assembled a = assemble(b.exe->ptx(), sm);
            INFO("ptxas:\n" << a.output << "\nPTX:\n" << b.exe->ptx());
            CHECK(a.status == 0);
        }
    }
}

TEST_CASE("ptxas accepts the bounds checks of DUET_KERNEL_CHECKS, with and without a timeout",
          "[nvidia][ptxas][checks]") {
    ScopedEnv checks("DUET_KERNEL_CHECKS", "1");
    for (const char* timeout : {"", "1"}) {
        ScopedEnv withTimeout("DUET_KERNEL_TIMEOUT", timeout);
        for (const char* sm : {"sm_90", "sm_80"}) {
            std::vector<Program> sources = {{"spin", "", kSpinSource}};
            for (const Program& p : programs())
                sources.push_back(p);
            for (const Program& p : sources) {
                INFO("program " << p.name << " for " << sm << " timeout '" << timeout << "'");
                Built b = build(p.source, p.options, target(sm, 80));
                REQUIRE(b.exe->guards().boundsChecks);
                Assembled a = assemble(b.exe->ptx(), sm);
                INFO("ptxas:\n" << a.output << "\nPTX:\n" << b.exe->ptx());
                CHECK(a.status == 0);
            }
        }
    }
}

TEST_CASE("registers of checked kernels against unchecked ones (sm_90)",
          "[nvidia][ptxas][checks]") {
    // The overhead the checks cost in registers, printed for the README (CUDA 13's ptxas: at
    // most 24 more, mostly the bounds of each argument, loaded once and kept).
    std::map<std::string, int> plain, checked;
    for (int withChecks = 0; withChecks < 2; ++withChecks) {
        ScopedEnv checks("DUET_KERNEL_CHECKS", withChecks ? "1" : "0");
        for (const Program& p : programs()) {
            Built b = build(p.source, p.options);
            Assembled a = assemble(b.exe->ptx(), "sm_90", "-v");
            INFO("program " << p.name << "\nptxas:\n" << a.output);
            REQUIRE(a.status == 0);
            for (const rt::KernelDesc& k : b.exe->kernels())
                (withChecks ? checked : plain)[std::string(p.name) + "/" + k.name] =
                    registersOf(a.output, k.name);
        }
    }
    for (const auto& [kernel, registers] : plain) {
        INFO(kernel);
        REQUIRE(checked.count(kernel));
        CHECK(registers > 0);
        CHECK(checked[kernel] > 0);
        CHECK(checked[kernel] <= registers + 32);
        std::printf("registers %-40s unchecked %3d checked %3d\n", kernel.c_str(), registers,
                    checked[kernel]);
    }
}

TEST_CASE("ptxas accepts PTX 7.8 for sm_90 (drivers of CUDA 11.8)", "[nvidia][ptxas]") {
    Built b = build(programs().front().source, programs().front().options, target("sm_90", 78));
    REQUIRE(contains(b.exe->ptx(), ".version 7.8"));
    Assembled a = assemble(b.exe->ptx(), "sm_90");
    INFO("ptxas:\n" << a.output);
    CHECK(a.status == 0);
}

TEST_CASE("ptxas accepts PTX with debug information and without optimisation", "[nvidia][ptxas]") {
    for (const char* options : {"-g", "-cl-opt-disable", "-g -cl-opt-disable"})
        for (const Program& p : programs()) {
            INFO("program " << p.name << " with " << options);
            Built b = build(p.source, std::string(p.options) + " " + options);
            Assembled a = assemble(b.exe->ptx(), "sm_90");
            INFO("ptxas:\n" << a.output);
            CHECK(a.status == 0);
        }
}

TEST_CASE("ptxas accepts printf: strings from every address space, helpers, vectors, -O0",
          "[nvidia][ptxas][printf]") {
    // What the printf lowering (compiler/printf_lowering.cpp) makes of the shapes api_test's
    // [printf] cases print on a GPU: %s from __constant, __global, __local, private memory and
    // null, a string after a 2-byte vector (its length word not 4-aligned), printf in a helper
    // whose result flows on, several formats per kernel, a long private string.
    const std::string src = R"CL(
__constant char names[3][8] = {"one", "two", "three"};
int say(__constant char* who, int i) {
    uchar2 h = (uchar2)((uchar)i, (uchar)200);
    return printf("%s %% %v2hhu %s%c\n", who, h, (i & 1) ? "odd" : "even", 'A' + i);
}
__kernel void strings(__global const char* text, __global int* r) {
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
__kernel void formats(int i, float x, __global int* r) {
    float4 v = (float4)(1.0f, 2.5f, -3.0f, 4.0f);
    printf("i=%d x=%.2f hex=%#x str=%s c=%c\n", i, x, 255, "abc", 'Z');
    printf("v=%.1v4hlf iv=%v2hld cv=%v4hhu d=%f p=%p\n", v, (int2)(7, -8), (uchar4)(1, 2, 3, 255),
           (double)x, r);
    char big[300];
    for (int n = 0; n < 299; ++n)
        big[n] = (char)('a' + n % 26);
    big[299] = 0;
    r[0] = printf("[%s]\n", big);
}
)CL";
    for (const char* options : {"", "-cl-opt-disable", "-g"})
        for (const char* sm : {"sm_90", "sm_80"}) {
            INFO("options '" << options << "' for " << sm);
            Built b = build(src, options, target(sm, 80));
            CHECK(b.exe->module().printf.size() == 5);
            for (const nvidia::KernelEntry& k : b.exe->module().kernels)
                CHECK(k.usesPrintf);
            CHECK_FALSE(contains(b.exe->ptx(), "vprintf"));
            CHECK(contains(entryText(b.exe->ptx(), "strings"), "atom.global.add.u64"));
            Assembled a = assemble(b.exe->ptx(), sm);
            INFO("ptxas:\n" << a.output << "\nPTX:\n" << b.exe->ptx());
            CHECK(a.status == 0);
        }
}

/// Sub-group kernels: the core functions and one kernel per cl_khr_subgroup_* extension, as
/// users write them (reductions, compaction by ballot, votes in branches), with the instruction
/// each must come down to.
struct SubGroupCase {
    const char* name;
    const char* instruction; ///< in the PTX
    const char* source;
};
const SubGroupCase kSubGroupCases[] = {
    {"core", "shfl.sync.idx.b32", R"CL(
kernel void core(global const float* in, global float* out, global double* d, global long* l) {
    size_t i = get_global_id(0);
    float x = in[i];
    out[i] = sub_group_reduce_add(x) + sub_group_scan_inclusive_min(x) +
             sub_group_scan_exclusive_max(x) + sub_group_broadcast(x, 3u) +
             (float)(get_sub_group_size() + get_max_sub_group_size() + get_num_sub_groups() +
                     get_enqueued_num_sub_groups() + get_sub_group_id() +
                     get_sub_group_local_id()) +
             (float)(sub_group_all(x > 0) + sub_group_any(x < 0));
    d[i] = sub_group_reduce_max(d[i]) + sub_group_scan_inclusive_add(d[i]);
    l[i] = sub_group_scan_exclusive_add(l[i]) + sub_group_reduce_min(l[i]);
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    sub_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_device);
}
)CL"},
    {"barrier", "bar.warp.sync", R"CL(
kernel void barrier_(global int* out) {
    local int tmp[256];
    uint l = get_sub_group_local_id();
    if (get_sub_group_id() == 0) {
        tmp[l] = (int)l;
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        out[l] = tmp[get_sub_group_size() - 1 - l];
    }
}
)CL"},
    {"ballot", "vote.sync.ballot.b32", R"CL(
kernel void ballot(global const int* in, global uint* out) {
    size_t i = get_global_id(0);
    uint4 b = sub_group_ballot(in[i] > 0);
    out[i] = sub_group_ballot_bit_count(b) + sub_group_ballot_inclusive_scan(b) +
             sub_group_ballot_exclusive_scan(b) + sub_group_ballot_find_lsb(b) +
             sub_group_ballot_find_msb(b) + sub_group_ballot_bit_extract(b, 5u) +
             sub_group_inverse_ballot(get_sub_group_lt_mask()) +
             get_sub_group_eq_mask().x + get_sub_group_ge_mask().x + get_sub_group_gt_mask().x +
             get_sub_group_le_mask().x;
    if (in[i] & 1)
        out[i] += sub_group_non_uniform_broadcast(in[i], 0u) + sub_group_broadcast_first(in[i]);
}
)CL"},
    {"vote", "activemask.b32", R"CL(
kernel void vote(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    if (in[i] & 1)
        out[i] = sub_group_elect() + sub_group_non_uniform_all(in[i] > 0) +
                 sub_group_non_uniform_any(in[i] > 4) + sub_group_non_uniform_all_equal(in[i]) +
                 sub_group_non_uniform_all_equal((double)in[i]);
}
)CL"},
    {"arithmetic", "activemask.b32", R"CL(
kernel void arithmetic(global const int* in, global int* out, global float* f) {
    size_t i = get_global_id(0);
    if (in[i] & 1) {
        out[i] = sub_group_non_uniform_reduce_add(in[i]) +
                 sub_group_non_uniform_scan_inclusive_mul(in[i]) +
                 sub_group_non_uniform_scan_exclusive_xor(in[i]) +
                 sub_group_non_uniform_reduce_logical_and(in[i]) +
                 (int)sub_group_non_uniform_reduce_max((ulong)in[i]);
        f[i] = sub_group_non_uniform_scan_inclusive_min(f[i]);
    }
}
)CL"},
    {"shuffle", "shfl.sync.idx.b32", R"CL(
kernel void shuffle(global const long* in, global long* out) {
    size_t i = get_global_id(0);
    uint l = get_sub_group_local_id();
    out[i] = sub_group_shuffle(in[i], 31u - l) + sub_group_shuffle_xor(in[i], 1u);
}
)CL"},
    {"shuffle_relative", "shfl.sync.idx.b32", R"CL(
kernel void shuffle_relative(global const float* in, global float* out) {
    size_t i = get_global_id(0);
    out[i] = sub_group_shuffle_up(in[i], 1u) + sub_group_shuffle_down(in[i], 2u);
}
)CL"},
    {"clustered_reduce", "shfl.sync.idx.b32", R"CL(
kernel void clustered(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    out[i] = sub_group_clustered_reduce_add(in[i], 4u) + sub_group_clustered_reduce_or(in[i], 8u);
}
)CL"},
    {"extended_types", "shfl.sync.idx.b32", R"CL(
kernel void extended(global const short* in, global short* out, global float4* v) {
    size_t i = get_global_id(0);
    out[i] = sub_group_reduce_add(in[i]) + sub_group_scan_exclusive_max((char)in[i]) +
             sub_group_broadcast(in[i], 1u);
    v[i] = sub_group_broadcast(v[i], 2u);
}
)CL"},
};

TEST_CASE("ptxas accepts sub-group kernels, core and each extension, for sm_90 and sm_80",
          "[nvidia][ptxas][sub_group]") {
    for (const char* sm : {"sm_90", "sm_80"})
        for (const SubGroupCase& c : kSubGroupCases) {
            INFO(c.name << " for " << sm);
            Built b = build(c.source, "-cl-std=CL3.0", target(sm, 80));
            const std::string& ptx = b.exe->ptx();
            // Inlined: no call to a sub-group function is left, the warp instruction is there.
            CHECK(ptx.find("call.uni") == std::string::npos);
            CHECK(ptx.find("sub_group") == std::string::npos);
            CHECK(ptx.find(c.instruction) != std::string::npos);
            Assembled a = assemble(ptx, sm);
            INFO("ptxas:\n" << a.output << "\nPTX:\n" << ptx);
            CHECK(a.status == 0);
        }
}

TEST_CASE("every builtin the device declares compiles to PTX that ptxas accepts",
          "[nvidia][ptxas][builtins]") {
    // The calls builtins-completeness-nvidia generates (one function per overload of
    // opencl-c.h for the device's features, images and samplers included), each made a kernel
    // and built without optimisation, so that every builtin reaches the NVPTX backend and ptxas.
#ifdef DUET_COMPLETENESS_DIR
    for (const char* std : {"CL12", "CL30"}) {
        std::ifstream in(std::string(DUET_COMPLETENESS_DIR) + "/calls." + std + ".cl");
        if (!in) {
            WARN("no calls." << std << ".cl: run ctest -R builtins-completeness-nvidia first");
            continue;
        }
        std::string source, line;
        size_t kernels = 0;
        size_t imageKernels = 0;
        while (std::getline(in, line)) {
            if (line.rfind("void duet_call_", 0) == 0) {
                line = "__kernel " + line;
                ++kernels;
            } else if (line.rfind("kernel void duet_call_", 0) == 0) {
                ++kernels; // image and sampler parameters: generated as a kernel already
                ++imageKernels;
            }
            source += line + "\n";
        }
        CHECK(imageKernels > 0); // the image builtins are among them
        INFO(std << ": " << kernels << " kernels");
        Built b = build(source,
                        std::string(std == std::string("CL30") ? "-cl-std=CL3.0 " : "") +
                            "-cl-opt-disable",
                        target("sm_90", 80));
        CHECK(b.exe->kernels().size() == kernels);
        Assembled a = assemble(b.exe->ptx(), "sm_90");
        INFO("ptxas:\n" << a.output.substr(0, 4000));
        CHECK(a.status == 0);
    }
#else
    WARN("built without DUET_COMPLETENESS_DIR");
#endif
}

int main(int argc, char** argv) {
    const std::string tool = ptxas();
    if (tool.empty() || access(tool.c_str(), X_OK) != 0) {
        return duet::test::skipTest("no ptxas (CUDA toolkit) found at configure time; the PTX "
                                    "of the NVIDIA code generator is not assembled");
    }
    std::printf("assembling with %s\n", tool.c_str());
    return Catch::Session().run(argc, argv);
}
