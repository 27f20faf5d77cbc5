// The NVIDIA code generator without a GPU: the test programs (kernels.hpp) to PTX, the kernel
// ABI as the PTX shows it (launch block, __local offsets, .maxntid, shared memory, printf
// formats), program binaries, -save-temps, bad input, the same PTX whatever was built before,
// the target choice, the Duet PTX header and the CUDA driver loader.
#include "build_util.hpp"
#include "kernels.hpp"

#include "compiler/binary.hpp"
#include "devices/nvidia/cuda_driver.hpp"
#include "devices/nvidia/image_slots.hpp"
#include "devices/nvidia/launch_plan.hpp"
#include "support/checked_kernels.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace duet;
using namespace duet::nvidia::test;
using nvidia::KernelEntry;

namespace {

const Program& program(const std::string& name) {
    for (const Program& p : programs())
        if (p.name == name)
            return p;
    FAIL("no test program " << name);
    throw 0;
}

Built buildProgram(const std::string& name, const rt::TargetSpec& t = target()) {
    const Program& p = program(name);
    return build(p.source, p.options, t);
}

const KernelEntry& entryOf(const rt::NvidiaExecutable& exe, const std::string& kernel) {
    for (size_t i = 0; i < exe.kernels().size(); ++i)
        if (exe.kernels()[i].name == kernel) {
            const auto* e = static_cast<const KernelEntry*>(exe.entry(i));
            REQUIRE(e);
            REQUIRE(e->name == kernel);
            return *e;
        }
    FAIL("no kernel " << kernel);
    throw 0;
}

/// The `.param` lines of an entry's parameter list.
std::vector<std::string> paramsOf(const std::string& entry) {
    std::vector<std::string> out;
    std::istringstream in(entry.substr(0, entry.find(')')));
    for (std::string line; std::getline(in, line);)
        if (line.find(".param") != std::string::npos)
            out.push_back(line);
    return out;
}

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

rt::FinalizeResult finalizeSource(const std::string& source, const std::string& options = "") {
    rt::CompileResult c = rt::compileSource(source, options, {}, target());
    INFO(c.log);
    REQUIRE(c.status == CL_SUCCESS);
    return rt::finalizeForNvidia(c.bitcode, options, source, target());
}

std::span<const unsigned char> bytes(const std::string& s) {
    return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}

} // namespace

TEST_CASE("every test program builds to PTX for sm_90 and sm_80 with the kernel ABI",
          "[nvidia][codegen]") {
    for (const auto& [sm, ptx] : {std::pair<const char*, unsigned>{"sm_90", 80}, {"sm_80", 80}}) {
        for (const Program& p : programs()) {
            INFO("program " << p.name << " for " << sm);
            Built b = build(p.source, p.options, target(sm, ptx));
            const std::string& text = b.exe->ptx();
            if (std::getenv("DUET_TEST_DUMP_PTX"))
                std::printf("==== %s %s\n%s\n", p.name, sm, text.c_str());
            // DUET_TEST_PTX_DIR: the PTX for nvidia_gpu_abi_run, which runs it on a GPU.
            if (const char* dir = std::getenv("DUET_TEST_PTX_DIR"); dir && *dir)
                std::ofstream(std::string(dir) + "/" + p.name + "." + sm + ".ptx") << text;
            CHECK(contains(text, ".version 8.0\n"));
            CHECK(contains(text, std::string(".target ") + sm + "\n"));
            CHECK(b.exe->module().target == sm);
            CHECK(b.exe->module().ptxVersion == 80);
            // Everything resolved in the module: no external functions, not CUDA's vprintf.
            CHECK_FALSE(contains(text, ".extern .func"));
            CHECK_FALSE(contains(text, "vprintf"));
            CHECK_FALSE(contains(text, ".reqntid"));
            // The header reads back as the module the executable carries.
            nvidia::ReadPtxResult read = nvidia::readPtxModule(text);
            REQUIRE(read.error.empty());
            REQUIRE(read.module.kernels.size() == b.exe->kernels().size());
            for (size_t i = 0; i < b.exe->kernels().size(); ++i) {
                const rt::KernelDesc& desc = b.exe->kernels()[i];
                const KernelEntry& e = entryOf(*b.exe, desc.name);
                const KernelEntry& r = read.module.kernels[i];
                INFO("kernel " << desc.name);
                CHECK(r.name == e.name);
                CHECK(r.params == e.params);
                CHECK(r.localArgs == e.localArgs);
                CHECK(r.localVariableBytes == e.localVariableBytes);
                CHECK(r.reqdWorkGroupSize == e.reqdWorkGroupSize);
                CHECK(r.usesPrintf == e.usesPrintf);
                // Parameters: the OpenCL arguments (a __local one as a u64 offset), then the
                // 96-byte launch block.
                const std::string entry = entryText(text, desc.name);
                REQUIRE_FALSE(entry.empty());
                std::vector<std::string> params = paramsOf(entry);
                REQUIRE(params.size() == desc.args.size() + 1);
                CHECK(e.params == params.size());
                CHECK(contains(params.back(), ".param .align 8 .b8 " + desc.name + "_param_" +
                                                  std::to_string(desc.args.size()) + "[96]"));
                for (size_t a = 0; a < desc.args.size(); ++a) {
                    const bool local = desc.args[a].kind == rt::KernelArgKind::LocalBuffer;
                    CHECK(local == (std::find(e.localArgs.begin(), e.localArgs.end(), a) !=
                                    e.localArgs.end()));
                    if (local)
                        CHECK(contains(params[a], ".param .u64"));
                }
                CHECK(desc.staticLocalMemSize == e.localVariableBytes);
            }
            CHECK(read.module.printf.size() == b.exe->module().printf.size());
        }
    }
}

TEST_CASE("N-body: __local tile argument as a dynamic shared memory offset, fast rsqrt",
          "[nvidia][codegen]") {
    Built b = buildProgram("nbody");
    const KernelEntry& e = entryOf(*b.exe, "nbody");
    CHECK(e.localArgs == std::vector<uint32_t>{3});
    CHECK(e.params == 8);
    CHECK(e.localVariableBytes == 0);
    const std::string entry = entryText(b.exe->ptx(), "nbody");
    CHECK(contains(b.exe->ptx(), ".extern .shared .align 16 .b8 __duet_local_args[];"));
    CHECK(contains(entry, "__duet_local_args;"));
    CHECK(contains(entry, "ld.shared.v4.f32"));
    CHECK(contains(entry, "st.shared.v4.f32"));
    CHECK(contains(entry, "bar.sync"));
    CHECK(contains(entry, "rsqrt.approx.f32")); // -cl-fast-relaxed-math
    CHECK(b.exe->kernels()[0].args[3].kind == rt::KernelArgKind::LocalBuffer);
}

TEST_CASE("reductions: static __local size, reqd_work_group_size as .maxntid, two __local args",
          "[nvidia][codegen]") {
    Built b = buildProgram("reduce");
    const KernelEntry& s = entryOf(*b.exe, "reduce_static");
    CHECK(s.reqdWorkGroupSize == std::array<uint32_t, 3>{256, 1, 1});
    CHECK(s.localVariableBytes == 256 * sizeof(float));
    CHECK(b.exe->kernels()[0].staticLocalMemSize == 256 * sizeof(float));
    CHECK(s.localArgs.empty());
    CHECK(contains(entryText(b.exe->ptx(), "reduce_static"), ".maxntid 256, 1, 1"));
    CHECK_FALSE(contains(b.exe->ptx(), ".reqntid"));
    // The __local variable is dynamic shared memory (local_memory.cpp), not a .shared array.
    CHECK_FALSE(contains(b.exe->ptx(), "reduce_static_$_part"));
    CHECK(contains(b.exe->ptx(), ".extern .shared .align 16 .b8 __duet_local_args[];"));
    CHECK(contains(entryText(b.exe->ptx(), "reduce_static"), "[__duet_local_args]"));
    const KernelEntry& a = entryOf(*b.exe, "reduce_arg");
    CHECK(a.localArgs == std::vector<uint32_t>{2, 3});
    CHECK(a.reqdWorkGroupSize == std::array<uint32_t, 3>{0, 0, 0});
    CHECK(a.localVariableBytes == 0);
    CHECK_FALSE(contains(entryText(b.exe->ptx(), "reduce_arg"), ".maxntid"));
}

TEST_CASE("__local variables: dynamic shared memory, over 48 KiB, before the __local arguments",
          "[nvidia][codegen]") {
    Built b = buildProgram("local_variables");
    const std::string& ptx = b.exe->ptx();
    // No static .shared at all: one extern array, aligned for the widest variable (double16).
    CHECK_FALSE(contains(ptx, "\n.shared"));
    CHECK(contains(ptx, ".extern .shared .align 128 .b8 __duet_local_args[];"));

    // float[16384] at 0, uchar[3] at 65536, double16 at the next multiple of 128: 65664 + 128.
    const KernelEntry& big = entryOf(*b.exe, "big_locals");
    CHECK(big.localVariableBytes == 65792);
    CHECK(big.localArgs == std::vector<uint32_t>{1});
    const std::string bigText = entryText(ptx, "big_locals");
    CHECK(contains(bigText, "[__duet_local_args+65536]")); // odd[0]
    CHECK(contains(bigText, "[__duet_local_args+65664]")); // wide.s01
    CHECK(contains(bigText, "[__duet_local_args+65784]")); // wide.sf
    // The __local argument's offset is a parameter: the launcher places it after 65792.
    CHECK(contains(bigText, "ld.param.u64"));

    // `stage`'s variable in each kernel that calls it: after the caller's own variable (first
    // in module order), so at another offset in each; staged[5] shows where.
    CHECK(entryOf(*b.exe, "stage").localVariableBytes == 256);
    CHECK(entryOf(*b.exe, "stage_after_floats").localVariableBytes == 128 + 256);
    CHECK(entryOf(*b.exe, "stage_after_doubles").localVariableBytes == 64 + 256);
    CHECK(contains(entryText(ptx, "stage"), "[__duet_local_args+20]"));
    CHECK(contains(entryText(ptx, "stage_after_floats"), "[__duet_local_args+148]"));
    CHECK(contains(entryText(ptx, "stage_after_doubles"), "[__duet_local_args+84]"));
    for (const char* k : {"stage", "stage_after_floats", "stage_after_doubles"})
        CHECK_FALSE(contains(entryText(ptx, k), "call"));
    // What CL_KERNEL_LOCAL_MEM_SIZE starts from.
    for (const rt::KernelDesc& d : b.exe->kernels())
        CHECK(d.staticLocalMemSize == entryOf(*b.exe, d.name).localVariableBytes);
}

TEST_CASE("__local variables reached through helpers the optimiser specialised",
          "[nvidia][codegen]") {
    // A noinline helper that every call passes the same __local array (`two` calls kernel
    // `one`, which is inlined into it): interprocedural constant propagation puts the array
    // into the helper's body, a function called from two kernels that lay the array out at
    // different offsets. It is inlined into both, each with its own offset. Unoptimised, the
    // helper takes the pointer and stays a function.
    const char* source = R"CL(
__attribute__((noinline)) void fill(__local int* p, int v) { p[get_local_id(0)] = v; p[9] = v; }
__kernel void one(__global int* out);
__kernel void two(__global int* out) {
    __local int pad[7];
    pad[get_local_id(0) & 7] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    int extra = pad[1];
    one(out);
    out[get_global_id(0)] += extra;
}
__kernel void one(__global int* out) {
    __local int a[64];
    fill(a, 3);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = a[63 - get_local_id(0)];
}
)CL";
    for (const char* options : {"", "-cl-opt-disable"}) {
        INFO("options: " << options);
        Built b = build(source, options);
        const std::string& ptx = b.exe->ptx();
        CHECK(entryOf(*b.exe, "one").localVariableBytes == 256);
        CHECK(entryOf(*b.exe, "two").localVariableBytes == 28 + 256);
        CHECK_FALSE(contains(ptx, "\n.shared"));
        CHECK(contains(ptx, ".extern .shared .align 16 .b8 __duet_local_args[];"));
        if (*options)
            continue;
        CHECK_FALSE(contains(ptx, ".func"));
        CHECK(contains(entryText(ptx, "one"), "[__duet_local_args+36]")); // a[9]
        CHECK(contains(entryText(ptx, "two"), "[__duet_local_args+64]")); // a[9] after pad
    }
}

TEST_CASE("images and samplers: u64 parameters (descriptor address, CLK_* bits), plain loads",
          "[nvidia][codegen][image]") {
    Built b = buildProgram("images");
    const std::string& ptx = b.exe->ptx();
    for (const char* kernel : {"blur", "volume"}) {
        INFO("kernel " << kernel);
        const rt::KernelDesc& desc = b.exe->kernels()[kernel == std::string("blur") ? 0 : 1];
        REQUIRE(desc.name == kernel);
        const std::vector<std::string> params = paramsOf(entryText(ptx, kernel));
        REQUIRE(params.size() == desc.args.size() + 1);
        for (size_t a = 0; a < desc.args.size(); ++a)
            if (desc.args[a].kind == rt::KernelArgKind::Image ||
                desc.args[a].kind == rt::KernelArgKind::Sampler)
                CHECK(contains(params[a], ".param .u64 " + std::string(kernel) + "_param_" +
                                              std::to_string(a)));
        CHECK(entryOf(*b.exe, kernel).localArgs.empty());
    }
    CHECK(b.exe->kernels()[0].args[2].kind == rt::KernelArgKind::Sampler);
    CHECK(b.exe->kernels()[1].args[2].kind == rt::KernelArgKind::Image);
    // Reads of read_only images try a texture object first (unified mode: the handle is a
    // 64-bit register loaded from the descriptor), then software on linear memory; nothing
    // reads through texture or surface references, read_write images stay in software, and the
    // sampler literals are resolved in the module.
    CHECK(contains(entryText(ptx, "blur"), "tex.2d.v4.f32.f32"));
    CHECK(contains(entryText(ptx, "blur"), "ld.global.nc.u64"));
    CHECK(contains(entryText(ptx, "volume"), "tex.2d.v4.f32.f32")); // the depth image
    // The 3D image and the 2D array through their CUDA arrays' textures (the array layer an
    // integer operand).
    CHECK(contains(entryText(ptx, "volume"), "tex.3d.v4.u32.f32"));
    CHECK(contains(entryText(ptx, "volume"), "tex.a2d.v4.f32.f32"));
    for (const char* texture : {"suld.", "sust.", ".texref", ".surfref", ".samplerref"})
        CHECK_FALSE(contains(ptx, texture));
    CHECK_FALSE(contains(ptx, "__translate_sampler_initializer"));
    CHECK_FALSE(contains(ptx, "__duet_image_ptr"));
    CHECK(contains(ptx, "ld.global"));
}

TEST_CASE("texture-only variants: a copy without the software reads, and what it needs",
          "[nvidia][codegen][image]") {
    Built b = buildProgram("images");
    const std::string& ptx = b.exe->ptx();
    // blur reads its one read_only 2D image with the sampler argument and two literals: its
    // variant has the texture reads and no call of the software read, which blur keeps.
    const KernelEntry& blur = entryOf(*b.exe, "blur");
    REQUIRE(blur.texturedName == "__duet_textured_blur");
    const std::string variant = entryText(ptx, "__duet_textured_blur");
    CHECK(contains(variant, "tex.2d.v4.f32.f32"));
    CHECK_FALSE(contains(variant, "call"));
    CHECK(contains(entryText(ptx, "blur"), "call"));
    CHECK(paramsOf(variant).size() == paramsOf(entryText(ptx, "blur")).size());
    // Nothing the library marked the reads with is left.
    CHECK_FALSE(contains(ptx, "__duet_software_read"));
    const uint32_t nearest = 0x4 | 0x10; // CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST
    const uint32_t repeat = 0x6 | 0x1;   // CLK_ADDRESS_REPEAT | CLK_NORMALIZED_COORDS_TRUE
    std::vector<nvidia::TextureRequirement> want = {
        {0, 1, 2, 0}, {0, 1, -1, nearest}, {0, 1, -1, repeat}};
    CHECK(blur.textureRequirements.size() == want.size());
    for (const nvidia::TextureRequirement& r : want) {
        INFO("image " << r.image << " class " << r.textureClass << " sampler " << r.samplerArg
                      << "/" << r.samplerBits);
        CHECK(std::count(blur.textureRequirements.begin(), blur.textureRequirements.end(), r) == 1);
    }
    // volume reads a 3D image (sampler-less), a depth image and a 2D array: its variant reads
    // all three through textures (the image buffer and the read_write image are not sampled).
    const KernelEntry& volume = entryOf(*b.exe, "volume");
    REQUIRE(volume.texturedName == "__duet_textured_volume");
    const std::string volumeVariant = entryText(ptx, "__duet_textured_volume");
    CHECK(contains(volumeVariant, "tex.3d.v4.u32.f32"));
    CHECK(contains(volumeVariant, "tex.a2d.v4.f32.f32"));
    want = {{0, 3, -1, 0x10}, {3, 1, -1, nearest}, {5, 1, -1, nearest}};
    CHECK(volume.textureRequirements.size() == want.size());
    for (const nvidia::TextureRequirement& r : want) {
        INFO("volume: image " << r.image << " class " << r.textureClass << " sampler "
                              << r.samplerArg << "/" << r.samplerBits);
        CHECK(std::count(volume.textureRequirements.begin(), volume.textureRequirements.end(), r) ==
              1);
    }

    // Integer reads ask for their class, sampler-less reads for the fetch sampler.
    rt::FinalizeResult f = finalizeSource(R"CL(
__kernel void ints(read_only image2d_t a, read_only image1d_t b, sampler_t s, __global int4* o) {
    int i = get_global_id(0);
    o[i] = read_imagei(a, s, (int2)(i, 0)) + as_int4(read_imageui(b, i));
}
__attribute__((noinline)) float4 helper(read_only image2d_t img, sampler_t s, float2 c) {
    return read_imagef(img, s, c) * 2.0f;
}
__kernel void throughHelper(read_only image2d_t img, sampler_t s, __global float4* o) {
    o[get_global_id(0)] = helper(img, s, (float2)(0.5f)) + helper(img, s, (float2)(1.5f));
}
__kernel void noImages(__global int* o) { o[0] = 1; }
__kernel void resample(read_only image2d_t src, sampler_t s, __global float4* o, float2 d) {
    float2 c = (float2)(get_global_id(0), get_global_id(1)) * d;
    o[get_global_id(0)] = read_imagef(src, s, c) + read_imagef(src, s, c + (float2)(d.x, 0.0f)) +
                          read_imagef(src, s, c + (float2)(0.0f, d.y)) + read_imagef(src, s, c + d);
}
)CL",
                                          "-cl-std=CL3.0");
    REQUIRE(f.status == CL_SUCCESS);
    const auto& exe = static_cast<const rt::NvidiaExecutable&>(*f.executable);
    const KernelEntry& ints = entryOf(exe, "ints");
    REQUIRE(ints.texturedName == "__duet_textured_ints");
    CHECK(ints.textureRequirements ==
          std::vector<nvidia::TextureRequirement>{{0, 2, 2, 0}, {1, 3, -1, 0x10}});
    // A read in a function the optimiser kept out of line stays in that function: no variant.
    CHECK(entryOf(exe, "throughHelper").texturedName.empty());
    CHECK(entryOf(exe, "noImages").texturedName.empty());
    // In the variant the four reads of one image are one descriptor load each for the class
    // and the texture, then four fetches with no branch between them: the GPU issues them all
    // before it waits for the first.
    REQUIRE(entryOf(exe, "resample").texturedName == "__duet_textured_resample");
    const std::string fetches = entryText(exe.ptx(), "__duet_textured_resample");
    const size_t first = fetches.find("tex.2d"), last = fetches.rfind("tex.2d");
    CHECK(count(fetches, "tex.2d.v4.f32.f32") == 4);
    CHECK(count(fetches, "ld.global.nc.u64") == 2);
    CHECK(fetches.substr(first, last - first).find("bra") == std::string::npos);
    CHECK_FALSE(contains(fetches, "call"));

    // The variants travel in program binaries.
    rt::LoadBinaryResult again = rt::loadNvidiaBinary(bytes(b.exe->binary()), target());
    REQUIRE(again.executable);
    const auto& reloaded = static_cast<const rt::NvidiaExecutable&>(*again.executable);
    CHECK(entryOf(reloaded, "blur").texturedName == blur.texturedName);
    CHECK(entryOf(reloaded, "blur").textureRequirements == blur.textureRequirements);
}

TEST_CASE("OpenCL 1.x atomics are relaxed atom instructions, 32- and 64-bit, global and local",
          "[nvidia][codegen]") {
    Built b = buildProgram("atomics");
    const std::string& ptx = b.exe->ptx();
    const std::string a32 = entryText(ptx, "atomics32"), a64 = entryText(ptx, "atomics64"),
                      hist = entryText(ptx, "histogram");
    for (const char* op : {"atom.global.add.u32", "atom.global.exch.b32", "atom.global.min.s32",
                           "atom.global.max.s32", "atom.global.and.b32", "atom.global.or.b32",
                           "atom.global.xor.b32", "atom.global.cas.b32"})
        CHECK(contains(a32, op));
    for (const char* op :
         {"atom.global.add.u64", "atom.global.exch.b64", "atom.global.min.s64",
          "atom.global.max.s64", "atom.global.and.b64", "atom.global.or.b64", "atom.global.xor.b64",
          "atom.global.cas.b64", "atom.shared.add.u64", "atom.global.max.u64"})
        CHECK(contains(a64, op));
    CHECK(contains(hist, "atom.shared.add.u32"));
    CHECK(contains(hist, "atom.global.add.u32"));
    // Relaxed: no fences around them.
    CHECK_FALSE(contains(a32, "membar"));
    CHECK_FALSE(contains(a64, "membar"));
    CHECK_FALSE(contains(hist, "membar"));
}

TEST_CASE("OpenCL C 3.0 atomics: orders and scopes become fences around relaxed atom",
          "[nvidia][codegen]") {
    Built b = buildProgram("c11_atomics");
    const std::string c11 = entryText(b.exe->ptx(), "c11");
    CHECK(contains(c11, "membar.gl"));
    CHECK((contains(c11, "atom.add.u32") || contains(c11, "atom.global.add.u32")));
    CHECK((contains(c11, "atom.max.s64") || contains(c11, "atom.global.max.s64")));
    CHECK(count(c11, "membar.gl") >= 6);
    // Neither IR fences nor ordered loads and stores reach the backend, which cannot select
    // them: only relaxed (volatile) accesses between membar instructions.
    CHECK_FALSE(contains(c11, "ld.acquire"));
    CHECK_FALSE(contains(c11, "st.release"));
    CHECK(contains(c11, "ld.volatile"));
}

TEST_CASE("fences and ordered atomics become membar instructions by scope", "[nvidia][codegen]") {
    Built b = build(R"CL(
__kernel void f(volatile __global atomic_int* g, volatile __local atomic_int* l,
                __global int* out) {
    atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_acq_rel, memory_scope_work_group);
    out[0] = 1;
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);
    out[1] = 2;
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_relaxed, memory_scope_device);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    out[2] = atomic_load_explicit(g, memory_order_relaxed, memory_scope_device);
}
)CL",
                    "-cl-std=CL3.0");
    const std::string f = entryText(b.exe->ptx(), "f");
    CHECK(count(f, "membar.cta") == 2); // work-group fence, mem_fence
    CHECK(count(f, "membar.gl") == 1);  // device release fence; the relaxed one is none
    CHECK_FALSE(contains(f, "membar.sys"));
}

TEST_CASE("math builtins: libclc float and double, native_ functions on the PTX approximations",
          "[nvidia][codegen]") {
    Built b = buildProgram("math");
    const std::string f = entryText(b.exe->ptx(), "math_f"), d = entryText(b.exe->ptx(), "math_d");
    CHECK(contains(f, "sin.approx.f32"));
    CHECK(contains(f, "cos.approx.f32"));
    CHECK(contains(f, "ex2.approx"));
    CHECK(contains(f, "lg2.approx"));
    CHECK(contains(d, ".f64"));
    CHECK(contains(d, "fma.rn.f64"));
    CHECK_FALSE(contains(d, "sin.approx"));
    // Float division to the spec's 2.5 ulp: div.full.f32 (2 ulp), correctly rounded only under
    // -cl-fp32-correctly-rounded-divide-sqrt; the program's sqrt on sqrt.approx.f32 (3 ulp
    // allowed, within 1 measured), correctly rounded only under that option; rsqrt on the
    // special-function unit (2 ulp, its limit).
    const char* divide =
        "__kernel void k(__global float* x) { x[0] = x[1] / x[2] + sqrt(x[3]) + rsqrt(x[4]); }";
    Built plain = build(divide);
    CHECK(contains(plain.exe->ptx(), "div.full.f32"));
    CHECK_FALSE(contains(plain.exe->ptx(), "div.rn.f32"));
    // (A tab before the opcode: "rsqrt.approx.f32" contains "sqrt.approx.f32".)
    CHECK(contains(plain.exe->ptx(), "\tsqrt.approx.f32"));
    CHECK_FALSE(contains(plain.exe->ptx(), "\tsqrt.rn.f32"));
    CHECK(contains(plain.exe->ptx(), "rsqrt.approx.f32"));
    Built exact = build(divide, "-cl-fp32-correctly-rounded-divide-sqrt");
    CHECK(contains(exact.exe->ptx(), "div.rn.f32"));
    CHECK_FALSE(contains(exact.exe->ptx(), "div.full.f32"));
    CHECK(contains(exact.exe->ptx(), "\tsqrt.rn.f32"));
    CHECK_FALSE(contains(exact.exe->ptx(), "\tsqrt.approx.f32"));
    // The divisions touch no memory: the loads of a float4 whose components they divide stay
    // one vector load each (a division between its components' loads used to split them).
    Built loads = build(R"CL(
__kernel void k(__global const float4* restrict in, __global float4* restrict out) {
    const size_t i = get_global_id(0);
    float4 a = in[i], b = in[i + 1];
    float ra = 1.0f / a.x, rb = 1.0f / b.x;
    out[i] = (float4)(a.y * ra, a.z * ra, b.y * rb, b.w * rb + a.w * b.z);
})CL");
    CHECK(count(loads.exe->ptx(), "ld.global.nc.v4.f32") == 2);
    CHECK(count(loads.exe->ptx(), "ld.global") == 2);
    CHECK(count(loads.exe->ptx(), "div.full.f32") == 2);
    Built fast = build("__kernel void k(__global float* x) { x[0] = x[1] / x[2] + sqrt(x[3]); }",
                       "-cl-fast-relaxed-math");
    CHECK_FALSE(contains(fast.exe->ptx(), "div.rn.f32"));
    CHECK(contains(fast.exe->ptx(), "sqrt.approx"));
    Built ftz =
        build("__kernel void k(__global float* x) { x[0] = x[1] * x[2]; }", "-cl-denorms-are-zero");
    CHECK(contains(ftz.exe->ptx(), ".ftz.f32"));
}

TEST_CASE("GPU math (builtins/gpu/math.cl) replaces libclc's and keeps denormals",
          "[nvidia][codegen][math]") {
    // libclc's nvptx float exp, exp2, half_exp return 0 for denormal results and its fmod,
    // remainder, remquo flush denormal operands; Duet's replacements must win the link and
    // nothing in them may flush (.ftz) unless the options ask for it.
    struct Case {
        const char* call;
        const char* mark; // what only Duet's version has: 1/7! of exp's series, a double
    };
    for (const Case& c : {Case{"exp(a)", "0f39500D01"}, Case{"exp2(a)", "0f39500D01"},
                          Case{"half_exp(a)", "0f39500D01"}, Case{"half_exp2(a)", "0f39500D01"},
                          Case{"fmod(a, b)", "cvt.f64.f32"}, Case{"remainder(a, b)", "cvt.f64.f32"},
                          Case{"remquo(a, b, q)", "cvt.f64.f32"}, Case{"erfc(a)", "cvt.f64.f32"},
                          Case{"tgamma(a)", "cvt.f64.f32"}}) {
        for (const char* type : {"float", "float4"}) {
            INFO(c.call << " on " << type);
            const bool vector = type == std::string("float4");
            const std::string source = std::string("__kernel void k(__global ") + type +
                                       "* x, __global " + (vector ? "int4" : "int") + "* q) { " +
                                       type + " a = x[1], b = x[2]; x[0] = " + c.call + "; }";
            Built b = build(source);
            const std::string& ptx = b.exe->ptx();
            CHECK_FALSE(contains(ptx, ".ftz"));
            CHECK_FALSE(contains(ptx, "ex2.approx"));
            CHECK(contains(ptx, c.mark));
        }
    }
    // The whole program (scalars, vectors, every remquo pointer, double tgamma/pow/powr).
    Built all = buildProgram("gpu_math");
    CHECK_FALSE(contains(all.exe->ptx(), ".ftz"));
    // Flushing is still there when the options ask for it.
    Built ftz = build("__kernel void k(__global float* x) { x[0] = exp(x[1]) * x[2]; }",
                      "-cl-denorms-are-zero");
    CHECK(contains(ftz.exe->ptx(), ".ftz.f32"));
}

TEST_CASE("printf: records in the launch's printf buffer, formats in the PTX header",
          "[nvidia][codegen]") {
    Built b = buildProgram("printf");
    const auto& formats = b.exe->module().printf;
    REQUIRE(formats.size() == 3);
    std::map<std::string, std::vector<uint32_t>> byFormat;
    for (const nvidia::PrintfFormat& f : formats) {
        CHECK(f.id >= 1);
        CHECK(f.id <= 3);
        byFormat[f.format] = f.argSizes;
    }
    CHECK(byFormat.at("work-item %u of %u: x = %f, as vector %v4hlf, name %s, literal %s, "
                      "pointer %p\n") == std::vector<uint32_t>{4, 4, 8, 16, 4, 4, 8});
    CHECK(byFormat.at("%d%c%ld\n") == std::vector<uint32_t>{4, 4, 8});
    CHECK(byFormat.at("full\n").empty());
    CHECK(entryOf(*b.exe, "hello").usesPrintf);
    CHECK(b.exe->kernels()[0].usesPrintf);
    const std::string hello = entryText(b.exe->ptx(), "hello");
    CHECK(contains(hello, "atom.global.add.u64")); // reserving a record
    CHECK(contains(hello, "+88]"));                // LaunchBlock::printfBuffer
    // A kernel without printf says so.
    Built quiet = buildProgram("triad");
    CHECK_FALSE(entryOf(*quiet.exe, "triad").usesPrintf);
    CHECK(quiet.exe->module().printf.empty());
}

TEST_CASE("OpenCL C 3.0 generic pointers, program-scope variables, __constant arguments",
          "[nvidia][codegen]") {
    Built b = buildProgram("generic_globals");
    const std::string& ptx = b.exe->ptx();
    const std::string g = entryText(ptx, "generic_ptrs");
    CHECK(contains(g, "isspacep.global"));
    CHECK(contains(g, "isspacep.shared"));
    CHECK(contains(ptx, ".visible .global .align 4 .u32 counter = 7;"));
    CHECK(contains(ptx, ".visible .global .align 4 .b8 table[16]"));
    CHECK(contains(ptx, ".visible .const .align 4 .b8 coeffs[12]"));
    CHECK(b.exe->globalVariableTotalSize() == 4 + 16);
    CHECK(b.exe->module().globalBytes == 20);
    // The __constant argument is a buffer in global memory, never read with ld.const.
    CHECK_FALSE(contains(g, "ld.const"));
    CHECK(contains(g, "ld.global.f32"));

    // __constant data of the program stays in the constant bank; a __constant argument and a
    // __constant helper parameter are read as global memory.
    Built c = build(R"CL(
__constant float k[4] = {1.0f, 2.0f, 3.0f, 4.0f};
float pick(__constant float* p, int i) { return p[i]; }
__kernel void f(__constant float* w, __constant float4* v, __global float* o, int i) {
    o[0] = w[i] * k[i & 3] + pick(w, i + 1) + v[i].y + pick(k, i & 1);
    o[1] = vload4(0, w + i).z;
}
)CL");
    const std::string f = entryText(c.exe->ptx(), "f");
    CHECK(contains(f, "ld.const.f32"));
    CHECK(contains(f, "ld.global.f32"));
    CHECK(count(f, "ld.const") <= 2); // k only
}

TEST_CASE("to_global/to_local/to_private/get_fence on pointers of every address space",
          "[nvidia][codegen][generic]") {
    // tests/kernels/misc_test.cpp's kernel: after inlining, the optimiser sees through the
    // generic pointer to where it came from (a global buffer, shared memory, a private array);
    // to_local of a global pointer must not become a cast from global to shared, on which
    // NVPTX's instruction selector aborts the process.
    Built b = buildProgram("generic_kinds");
    const std::string k = entryText(b.exe->ptx(), "kinds");
    REQUIRE_FALSE(k.empty());
    CHECK(contains(k, "isspacep.global"));
    CHECK(contains(k, "isspacep.shared"));
    CHECK(contains(k, "isspacep.local"));
    // to_local of a pointer that came from a global buffer: back through generic.
    CHECK(contains(k, "cvta.to.shared.u64"));
}

TEST_CASE("casts between named address spaces through generic build instead of aborting",
          "[nvidia][codegen][generic]") {
    // Legal OpenCL C whose optimised IR casts straight from one named space to another (NVPTX's
    // instruction selector would abort: "Cannot cast between two non-generic address spaces"):
    // explicit casts out of generic on paths where the pointer is not in that space, of
    // instructions, constants and phis. Each goes through generic again (cvta, cvta.to).
    const Program& p = program("named_casts");
    for (const char* extra : {"", " -cl-opt-disable", " -g", " -cl-fast-relaxed-math"}) {
        INFO(extra);
        Built b = build(p.source, std::string(p.options) + extra);
        const std::string k = entryText(b.exe->ptx(), "named_casts");
        REQUIRE_FALSE(k.empty());
        CHECK(contains(k, "cvta.to.shared.u64"));
        CHECK(contains(k, "cvta.to.global.u64"));
    }
}

TEST_CASE("a kernel called by another kernel: an .entry and an inlined copy", "[nvidia][codegen]") {
    Built b = buildProgram("kernel_calls_kernel");
    CHECK_FALSE(entryText(b.exe->ptx(), "scale").empty());
    const std::string twice = entryText(b.exe->ptx(), "scale_twice");
    REQUIRE_FALSE(twice.empty());
    CHECK_FALSE(contains(twice, "call"));
    CHECK(count(twice, "mul.rn.f32") == 2);
}

TEST_CASE("work-item functions read the launch block and the grid registers", "[nvidia][codegen]") {
    Built b = buildProgram("offsets_nonuniform");
    const std::string ids = entryText(b.exe->ptx(), "ids");
    for (const char* reg :
         {"%ctaid.x", "%ctaid.y", "%ctaid.z", "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y"})
        CHECK(contains(ids, reg));
    // get_num_groups(0) and get_work_dim() are launch block fields (offsets 72 and 84).
    CHECK(contains(ids, "[ids_param_1+72]"));
    CHECK(contains(ids, "[ids_param_1+84]"));
    CHECK_FALSE(contains(ids, "%nctaid")); // the NDRange's groups, not this grid's
    CHECK_FALSE(contains(ids, "call"));

    // Unoptimised helpers that read work-item state are inlined all the same.
    Built h = buildProgram("noinline_helpers");
    CHECK_FALSE(contains(entryText(h.exe->ptx(), "helpers"), "call"));
}

TEST_CASE("loops that wait on global memory are unrolled by 4 at run time, others are not",
          "[nvidia][codegen]") {
    rt::FinalizeResult f = finalizeSource(R"CL(
#define FOLD(space, name, extra)                                                           \
    __kernel void name(space const float8* in, int count, __global float8* out) {          \
        float8 m = (float8)(0.0f);                                                         \
        const int lsz = get_local_size(0);                                                 \
        for (int k = get_local_id(0); k < count; k += lsz) {                               \
            m = fmax(m, in[k]);                                                            \
            extra;                                                                         \
        }                                                                                  \
        out[get_global_id(0)] = m;                                                         \
    }
FOLD(__global, fold_global, )
FOLD(__constant, fold_constant, )
FOLD(__local, fold_local, )
FOLD(__global, fold_barrier, barrier(CLK_GLOBAL_MEM_FENCE))
__kernel void fold_size_t(__global const float* in, uint count, __global float* out) {
    float m = 0.0f;
    for (size_t k = get_local_id(0); k < count; k += get_local_size(0))
        m = fmax(m, in[k]);
    out[get_global_id(0)] = m;
}
__kernel void fold_pragma(__global const float* in, int count, __global float* out) {
    float m = 0.0f;
    #pragma unroll 1
    for (int k = get_local_id(0); k < count; k += get_local_size(0))
        m = fmax(m, in[k]);
    out[get_global_id(0)] = m;
}
__kernel void fold_until(__global const float* in, __global float* out) {
    float m = 0.0f;
    for (int k = get_local_id(0); in[k] >= 0.0f; k += get_local_size(0)) // count unknown
        m = fmax(m, in[k]);
    out[get_global_id(0)] = m;
}
)CL");
    REQUIRE(f.status == CL_SUCCESS);
    const auto& exe = static_cast<const rt::NvidiaExecutable&>(*f.executable);
    // Four iterations in one body: 4 x 2 vector loads of a float8 there, 2 in the remainder,
    // the count computed once (a division by the local size).
    for (const char* k : {"fold_global", "fold_constant"}) {
        INFO(k);
        const std::string ptx = entryText(exe.ptx(), k);
        CHECK(count(ptx, "ld.global") == 10);
        CHECK(contains(ptx, "div.u32"));
    }
    // The same with a size_t index: one float per iteration.
    CHECK(count(entryText(exe.ptx(), "fold_size_t"), "ld.global") == 5);
    // __local loads do not wait on DRAM; a barrier, the program's own pragma and a count the
    // loop's entry cannot compute keep the loop as written.
    CHECK(count(entryText(exe.ptx(), "fold_local"), "ld.shared") == 2);
    CHECK(count(entryText(exe.ptx(), "fold_barrier"), "ld.global") == 2);
    CHECK(count(entryText(exe.ptx(), "fold_pragma"), "ld.global") == 1);
    CHECK(count(entryText(exe.ptx(), "fold_until"), "ld.global") <= 2);
    for (const char* k : {"fold_local", "fold_barrier", "fold_pragma", "fold_until"}) {
        INFO(k);
        CHECK_FALSE(contains(entryText(exe.ptx(), k), "div.u32"));
    }
}

TEST_CASE("build options: -g, -cl-opt-disable, -cl-kernel-arg-info, -D", "[nvidia][codegen]") {
    for (const char* options : {"-g", "-cl-opt-disable", "-g -cl-opt-disable",
                                "-cl-kernel-arg-info -DSCALE=2.0f", "-cl-std=CL3.0 -g"}) {
        INFO("options " << options);
        Built b = build(program("nbody").source, options);
        CHECK_FALSE(entryText(b.exe->ptx(), "nbody").empty());
        Built c = build("#ifndef SCALE\n#define SCALE 1.0f\n#endif\n"
                        "__kernel void k(__global float* x, __local float* t) {"
                        " t[get_local_id(0)] = x[get_global_id(0)] * SCALE;"
                        " barrier(CLK_LOCAL_MEM_FENCE); x[get_global_id(0)] = t[0]; }",
                        options);
        CHECK(entryOf(*c.exe, "k").localArgs == std::vector<uint32_t>{1});
    }
    Built named =
        build("__kernel void k(__global float* data, float gain) {}", "-cl-kernel-arg-info");
    CHECK(named.exe->kernels()[0].argInfoAvailable);
    CHECK(named.exe->kernels()[0].args[1].name == "gain");

    // -g with optimisation and a call left in the PTX: DWARF call-site entries would crash
    // LLVM 19's DWARF writer (SIGSEGV), so the front end asks for DWARF 2, which has none.
    const std::string calls =
        "__attribute__((noinline)) float f(float x) { return x * x + 2.0f; }\n"
        "__kernel void k(__global float* o) { o[0] = f(o[1]); o[2] = f(o[3]); }";
    Built g = build(calls, "-g");
    CHECK(contains(g.exe->ptx(), "call.uni"));
    CHECK(contains(g.exe->ptx(), ".section\t.debug_info"));
    // Bitcode that asks for them anyway (DWARF 5 from another front end) loses its debug
    // information, with a warning, rather than the process.
    rt::TargetSpec dwarf5 = target();
    dwarf5.dwarfVersion = 5;
    rt::CompileResult c = rt::compileSource(calls, "-g", {}, dwarf5);
    REQUIRE(c.status == CL_SUCCESS);
    rt::FinalizeResult f = rt::finalizeForNvidia(c.bitcode, "-g", calls, target());
    INFO(f.log);
    REQUIRE(f.status == CL_SUCCESS);
    CHECK(contains(f.log, "warning: debug information dropped"));
}

TEST_CASE("DUET_KERNEL_TIMEOUT: loops poll the GPU timer only when it is set",
          "[nvidia][timeout]") {
    Built plain;
    {
        ScopedEnv unset("DUET_KERNEL_TIMEOUT", nullptr);
        plain = build(kSpinSource);
    }
    CHECK_FALSE(contains(plain.exe->ptx(), "globaltimer"));
    CHECK_FALSE(contains(plain.exe->ptx(), "duet-timeout"));
    CHECK(plain.exe->guards().timeoutSeconds == 0);
    CHECK_FALSE(contains(plain.log, "DUET_KERNEL_CHECKS"));
    // No guard record: the arguments and the launch block.
    CHECK(entryOf(*plain.exe, "spin").params == 3);
    CHECK(paramsOf(entryText(plain.exe->ptx(), "spin")).size() == 3);

    Built timed;
    {
        ScopedEnv timeout("DUET_KERNEL_TIMEOUT", "0.5");
        timed = build(kSpinSource);
    }
    const std::string& ptx = timed.exe->ptx();
    INFO(ptx);
    CHECK(contains(ptx, "// duet-timeout 500000\n"));
    CHECK(timed.exe->guards().timeoutSeconds == 0.5);
    // The launch's own record, not a flag of the module: a .u64 parameter after the launch block.
    CHECK_FALSE(contains(ptx, ".global .align 4 .u32"));
    CHECK(entryOf(*timed.exe, "spin").params == 4);
    const std::string body = entryText(ptx, "spin");
    const std::vector<std::string> params = paramsOf(body);
    REQUIRE(params.size() == 4);
    CHECK(contains(params[3], ".u64 spin_param_3"));
    CHECK(contains(ptx, "exit;"));
    // The spinning loop is polled, the 16-iteration one is not (nor unrolled into polls).
    CHECK(contains(timed.log, "note: DUET_KERNEL_TIMEOUT: 1 loops poll the GPU timer"));
    // One read of the timer, in the poll: the deadline counts from the launch's start, which
    // the first poll of the launch claims (a 64-bit compare-and-swap on the record).
    CHECK(count(body, "%globaltimer") == 1);
    CHECK(contains(body, "atom.global.cas.b64"));
    CHECK(contains(body, "atom.global.or.b32"));
    // The 1024-iteration counter: an and with 1023 on the back-edge.
    CHECK(contains(body, "1023;"));

    // A binary keeps its timeout; loaded under another DUET_KERNEL_TIMEOUT it is rebuilt.
    {
        ScopedEnv timeout("DUET_KERNEL_TIMEOUT", "0.5");
        rt::LoadBinaryResult same = rt::loadNvidiaBinary(bytes(timed.exe->binary()), target());
        REQUIRE(same.status == CL_SUCCESS);
        CHECK(std::static_pointer_cast<rt::NvidiaExecutable>(same.executable)->ptx() == ptx);
    }
    {
        ScopedEnv unset("DUET_KERNEL_TIMEOUT", nullptr);
        rt::LoadBinaryResult other = rt::loadNvidiaBinary(bytes(timed.exe->binary()), target());
        INFO(other.log);
        REQUIRE(other.status == CL_SUCCESS);
        auto exe = std::static_pointer_cast<rt::NvidiaExecutable>(other.executable);
        CHECK_FALSE(contains(exe->ptx(), "globaltimer"));
        CHECK(exe->guards().timeoutSeconds == 0);
        CHECK(exe->ptx() == plain.exe->ptx());
    }
}

namespace {

/// Out-of-bounds accesses of every kind the checks know: a buffer argument, a __local
/// argument, a kernel-scope __local variable (support/checked_kernels.hpp), a program-scope
/// __constant variable, an atomic.
const std::string kChecked = std::string(R"CL(
__constant int table[4] = {1, 2, 3, 4};)CL") +
                             duet::test::kOverrunKernels + R"CL(
__kernel void lookup(__global int* out, int i) { out[get_global_id(0)] = table[i]; }
__kernel void count(__global int* counter, int at) { atomic_inc(&counter[at]); }
)CL";

} // namespace

TEST_CASE("DUET_KERNEL_CHECKS: every access through an argument or a variable is checked, only "
          "when it is set",
          "[nvidia][checks]") {
    Built plain, off, checked;
    {
        ScopedEnv unset("DUET_KERNEL_CHECKS", nullptr);
        plain = build(kChecked);
    }
    {
        ScopedEnv zero("DUET_KERNEL_CHECKS", "0");
        off = build(kChecked);
    }
    {
        ScopedEnv checks("DUET_KERNEL_CHECKS", "1");
        checked = build(kChecked);
    }
    // Unchecked builds are the same code, without a guard record or an exit.
    CHECK(off.exe->ptx() == plain.exe->ptx());
    CHECK_FALSE(plain.exe->guards().boundsChecks);
    CHECK_FALSE(contains(plain.exe->ptx(), "duet-checks"));
    CHECK_FALSE(contains(plain.exe->ptx(), "exit;"));
    CHECK(entryOf(*plain.exe, "fill").params == 3);

    const std::string& ptx = checked.exe->ptx();
    INFO(checked.log << ptx);
    CHECK(checked.exe->guards().boundsChecks);
    CHECK(contains(ptx, "// duet-checks\n"));
    // Every access has a known origin: no note about unchecked ones.
    CHECK_FALSE(contains(checked.log, "not checked"));
    for (const char* k : {"fill", "tile_sum", "sums", "lookup", "count"}) {
        INFO("kernel " << k);
        const std::string body = entryText(ptx, k);
        REQUIRE_FALSE(body.empty());
        CHECK(entryOf(*checked.exe, k).params == entryOf(*plain.exe, k).params + 1);
        CHECK(contains(paramsOf(body).back(), ".u64"));
        // A failed check claims the fault record, marks the launch stopped and exits.
        CHECK(contains(body, "atom.global.cas.b32"));
        CHECK(contains(body, "atom.global.or.b32"));
        CHECK(contains(body, "exit;"));
    }
    // The names the checks report, the arguments' then the variables', in the PTX header.
    using Names = std::vector<std::string>;
    CHECK(entryOf(*checked.exe, "sums").checkNames == Names{"out", "sums.part"});
    CHECK(entryOf(*checked.exe, "lookup").checkNames == Names{"out", "i", "table"});
    CHECK(entryOf(*checked.exe, "fill").checkNames == Names{"out", "shift"});
    CHECK(entryOf(*plain.exe, "fill").checkNames.empty());
    nvidia::ReadPtxResult read = nvidia::readPtxModule(ptx);
    REQUIRE(read.error.empty());
    CHECK(read.module.boundsChecks);
    CHECK(read.module.kernels.size() == 5);

    // The printf buffer is the runtime's: printf's stores into it are neither checked nor
    // counted as unchecked.
    {
        ScopedEnv checks("DUET_KERNEL_CHECKS", "1");
        Built printing = buildProgram("printf");
        INFO(printing.log);
        CHECK(printing.exe->guards().boundsChecks);
        CHECK_FALSE(contains(printing.log, "not checked"));
    }

    // Pointers made from integers cannot be checked: the build log says how many accesses.
    Built loose;
    {
        ScopedEnv checks("DUET_KERNEL_CHECKS", "1");
        loose = build("__kernel void poke(__global int* out, ulong at) {\n"
                      "    *(__global int*)at = out[0];\n"
                      "}\n");
    }
    CHECK(contains(loose.log, "note: DUET_KERNEL_CHECKS: kernel poke: 1 of 2 memory accesses "
                              "are not checked"));

    // A binary keeps its checks; loaded without DUET_KERNEL_CHECKS it is rebuilt without them.
    {
        ScopedEnv checks("DUET_KERNEL_CHECKS", "1");
        rt::LoadBinaryResult same = rt::loadNvidiaBinary(bytes(checked.exe->binary()), target());
        REQUIRE(same.status == CL_SUCCESS);
        CHECK(std::static_pointer_cast<rt::NvidiaExecutable>(same.executable)->ptx() == ptx);
    }
    {
        ScopedEnv unset("DUET_KERNEL_CHECKS", nullptr);
        rt::LoadBinaryResult other = rt::loadNvidiaBinary(bytes(checked.exe->binary()), target());
        REQUIRE(other.status == CL_SUCCESS);
        auto exe = std::static_pointer_cast<rt::NvidiaExecutable>(other.executable);
        CHECK_FALSE(exe->guards().boundsChecks);
        CHECK(exe->ptx() == plain.exe->ptx());
    }
}

TEST_CASE("the PTX header's check lines: written, read back, malformed ones refused",
          "[nvidia][checks][header]") {
    nvidia::PtxModule m;
    m.target = "sm_90";
    m.ptxVersion = 80;
    m.boundsChecks = true;
    KernelEntry k;
    k.name = "sums";
    k.params = 3;
    k.checkNames = {"out", "", "sums.part"};
    m.kernels.push_back(k);
    const std::string header = nvidia::ptxHeader(m) + ".version 8.0\n.target sm_90\n";
    nvidia::ReadPtxResult r = nvidia::readPtxModule(header);
    INFO(header);
    REQUIRE(r.error.empty());
    CHECK(r.module.boundsChecks);
    REQUIRE(r.module.kernels.size() == 1);
    CHECK(r.module.kernels[0].checkNames == k.checkNames);
    CHECK(contains(header, "// duet-check-names sums 6f7574,-,73756d732e70617274\n"));
    for (const char* bad : {"// duet-check-names sums zz\n", "// duet-check-names other 6162\n",
                            "// duet-checks 1\n"}) {
        std::string text = header;
        text.insert(text.find(".version"), bad);
        CHECK_FALSE(nvidia::readPtxModule(text).error.empty());
    }
}

TEST_CASE("program binaries round-trip and rebuild for another target", "[nvidia][binary]") {
    Built b = buildProgram("nbody");
    const std::string& binary = b.exe->binary();
    rt::ReadProgramBinaryResult read = rt::readProgramBinary(bytes(binary));
    REQUIRE(read.status == CL_SUCCESS);
    CHECK(read.binary.type == CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    CHECK(read.binary.targetKind == rt::kNvidiaBinaryKind);
    CHECK(rt::targetKindName(read.binary.targetKind) == "NVIDIA");
    CHECK(read.binary.targetName == "sm_90");
    CHECK(read.binary.machine == rt::kEmCuda);
    CHECK(read.binary.text == b.exe->ptx());
    CHECK_FALSE(read.binary.bitcode.empty());
    CHECK(contains(read.binary.source, "__kernel void nbody"));

    SECTION("same target: the PTX is used as it is") {
        rt::LoadBinaryResult l = rt::loadNvidiaBinary(bytes(binary), target());
        INFO(l.log);
        REQUIRE(l.status == CL_SUCCESS);
        REQUIRE(l.executable);
        auto exe = std::static_pointer_cast<rt::NvidiaExecutable>(l.executable);
        CHECK(exe->ptx() == b.exe->ptx());
        CHECK(exe->binary() == binary);
        CHECK(l.binaryType == CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
        REQUIRE(exe->kernels().size() == 1);
        CHECK(exe->kernels()[0].name == "nbody");
        CHECK(exe->kernels()[0].args.size() == 7);
        CHECK(entryOf(*exe, "nbody").localArgs == std::vector<uint32_t>{3});
    }
    SECTION("another processor: rebuilt from the bitcode") {
        rt::LoadBinaryResult l = rt::loadNvidiaBinary(bytes(binary), target("sm_80", 80));
        INFO(l.log);
        REQUIRE(l.status == CL_SUCCESS);
        auto exe = std::static_pointer_cast<rt::NvidiaExecutable>(l.executable);
        CHECK(contains(exe->ptx(), ".target sm_80"));
    }
    SECTION("an older kernel ABI (2: DUET_KERNEL_TIMEOUT's flag in the module): rebuilt") {
        rt::ProgramBinary old = read.binary;
        const std::string magic = "// duet-nvidia-ptx 3";
        REQUIRE(old.text.rfind(magic, 0) == 0);
        old.text.replace(0, magic.size(), "// duet-nvidia-ptx 2");
        nvidia::ReadPtxResult r = nvidia::readPtxModule(old.text);
        CHECK(r.otherVersion);
        CHECK_FALSE(r.error.empty());
        rt::LoadBinaryResult l = rt::loadNvidiaBinary(bytes(rt::writeProgramBinary(old)), target());
        INFO(l.log);
        REQUIRE(l.status == CL_SUCCESS);
        auto exe = std::static_pointer_cast<rt::NvidiaExecutable>(l.executable);
        CHECK(exe->ptx().rfind(magic, 0) == 0);
        CHECK(entryOf(*exe, "nbody").localArgs == std::vector<uint32_t>{3});
    }
    SECTION("a driver that takes only an older PTX ISA: rebuilt") {
        rt::LoadBinaryResult l = rt::loadNvidiaBinary(bytes(binary), target("sm_90", 78));
        INFO(l.log);
        REQUIRE(l.status == CL_SUCCESS);
        auto exe = std::static_pointer_cast<rt::NvidiaExecutable>(l.executable);
        CHECK(contains(exe->ptx(), ".version 7.8"));
        CHECK(exe->module().ptxVersion == 78);
    }
    SECTION("compiled objects through the Toolchain") {
        auto tc = rt::makeNvidiaToolchain(rt::nvidiaTarget("sm_90", 80));
        rt::CompileResult c = tc->compile(program("triad").source, "", {});
        REQUIRE(c.status == CL_SUCCESS);
        std::string object =
            tc->objectBinary(c.bitcode, "src", CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        rt::LoadBinaryResult l = tc->loadBinary(bytes(object));
        REQUIRE(l.status == CL_SUCCESS);
        CHECK(l.binaryType == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        CHECK(l.bitcode == c.bitcode);
        CHECK_FALSE(l.executable);
        rt::LinkResult linked = tc->link(std::vector<std::string>{c.bitcode}, "", false);
        REQUIRE(linked.status == CL_SUCCESS);
        rt::FinalizeResult f = tc->finalize(linked.bitcode, "", "src");
        INFO(f.log);
        CHECK(f.status == CL_SUCCESS);
    }
}

TEST_CASE("binaries that are not this device's are CL_INVALID_BINARY with a reason",
          "[nvidia][binary]") {
    Built b = buildProgram("triad");
    rt::ReadProgramBinaryResult read = rt::readProgramBinary(bytes(b.exe->binary()));
    REQUIRE(read.status == CL_SUCCESS);
    auto load = [](const std::string& blob) { return rt::loadNvidiaBinary(bytes(blob), target()); };

    SECTION("garbage and truncation") {
        CHECK(load("not a binary").status == CL_INVALID_BINARY);
        const std::string& blob = b.exe->binary();
        for (size_t cut : {size_t(0), size_t(16), blob.size() / 2, blob.size() - 1})
            CHECK(load(blob.substr(0, cut)).status == CL_INVALID_BINARY);
    }
    SECTION("another device kind's executable") {
        rt::ProgramBinary other = read.binary;
        other.targetKind = 0;
        rt::LoadBinaryResult l = load(rt::writeProgramBinary(other));
        CHECK(l.status == CL_INVALID_BINARY);
        CHECK(contains(l.log, "CPU"));
    }
    SECTION("bitcode of another target") {
        rt::CompileResult spir =
            rt::compileSource("__kernel void k(__global int* p) { *p = 1; }", "", {}, {});
        REQUIRE(spir.status == CL_SUCCESS);
        rt::ProgramBinary other = read.binary;
        other.bitcode = spir.bitcode;
        rt::LoadBinaryResult l = load(rt::writeProgramBinary(other));
        CHECK(l.status == CL_INVALID_BINARY);
        CHECK(contains(l.log, "not nvptx64"));
    }
    SECTION("PTX without Duet's header, or whose kernels disagree with the bitcode") {
        rt::ProgramBinary other = read.binary;
        other.text = other.text.substr(other.text.find(".version"));
        rt::LoadBinaryResult l = load(rt::writeProgramBinary(other));
        CHECK(l.status == CL_INVALID_BINARY);
        CHECK(contains(l.log, "header"));
        other = read.binary;
        const size_t at = other.text.find("params 5");
        REQUIRE(at != std::string::npos);
        other.text.replace(at, 8, "params 4");
        l = load(rt::writeProgramBinary(other));
        CHECK(l.status == CL_INVALID_BINARY);
        CHECK(contains(l.log, "PTX parameters"));
    }
}

TEST_CASE("-save-temps writes each kernel's .ll and the module's .ptx", "[nvidia][codegen]") {
    char dir[] = "/tmp/duet-nvidia-temps-XXXXXX";
    REQUIRE(mkdtemp(dir));
    const std::string prefix = std::string(dir) + "/k";
    const Program& p = program("reduce");
    Built b = build(p.source, "-save-temps=" + prefix);
    CHECK_FALSE(contains(b.log, "warning"));
    for (const char* kernel : {"reduce_static", "reduce_arg"}) {
        std::ifstream ll(prefix + "_" + kernel + ".ll");
        REQUIRE(ll.good());
        std::stringstream text;
        text << ll.rdbuf();
        CHECK(contains(text.str(), std::string("@") + kernel + "("));
        CHECK(contains(text.str(), "nvptx64-nvidia-cuda"));
    }
    std::ifstream ptx(prefix + ".ptx");
    REQUIRE(ptx.good());
    std::stringstream text;
    text << ptx.rdbuf();
    CHECK(text.str() == b.exe->ptx());
    std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: options, syntax, unsupported features, wrong bitcode", "[nvidia][errors]") {
    auto tc = rt::makeNvidiaToolchain(rt::nvidiaTarget("sm_90", 80));
    SECTION("a bad option") {
        rt::CompileResult c = tc->compile("__kernel void k() {}", "-cl-no-such-option", {});
        CHECK(c.status == CL_INVALID_COMPILER_OPTIONS);
        CHECK(contains(c.log, "-cl-no-such-option"));
    }
    SECTION("a syntax error: clang's diagnostics verbatim") {
        rt::CompileResult c = tc->compile("__kernel void k(__global int* p) { *p = ; }", "", {});
        CHECK(c.status == CL_COMPILE_PROGRAM_FAILURE); // CL_BUILD_PROGRAM_FAILURE at the API
        CHECK(contains(c.log, "input.cl:1:"));
        CHECK(contains(c.log, "error: expected expression"));
    }
    SECTION("an image accessor of a shape the code generator does not know") {
        // A user declaration that takes the library accessor's name but not its shape is left
        // undefined, and reported.
        rt::FinalizeResult f = finalizeSource(
            "uint __duet_sampler_bits(float x) __attribute__((overloadable));\n"
            "__kernel void k(__global uint* o) { o[0] = __duet_sampler_bits(1.0f); }");
        CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
        CHECK(contains(f.log, "__duet_sampler_bits"));
    }
    SECTION("a function nothing defines") {
        rt::FinalizeResult f = finalizeSource(
            "float helper(float);\n__kernel void k(__global float* x) { x[0] = helper(x[1]); }");
        CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
        CHECK(contains(f.log, "helper"));
    }
    SECTION("recursion through work-item functions") {
        rt::FinalizeResult f = finalizeSource(
            "size_t r(size_t n) { return n > 1 ? r(n - 1) * r(n - 2) + get_global_id(0) : 1; }\n"
            "__kernel void k(__global ulong* x) { x[0] = r(x[1]); }");
        CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
        CHECK(contains(f.log, "recursi"));
        f = finalizeSource("int r(int n) { return n > 1 ? r(n - 1) * r(n - 2) + 1 : 1; }\n"
                           "__kernel void k(__global int* x) { x[0] = r(x[1]); }");
        CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
        CHECK(contains(f.log, "'r' is recursive"));
    }
    SECTION("more __local variables than PTX's static .shared takes: dynamic shared memory") {
        // Any size builds (the GPU's limit is checked at launch, CL_OUT_OF_RESOURCES).
        rt::FinalizeResult f = finalizeSource(
            "__kernel void k(__global float* x) { __local float big[65536];"
            " big[get_local_id(0)] = x[0]; barrier(CLK_LOCAL_MEM_FENCE); x[1] = big[3]; }");
        INFO(f.log);
        REQUIRE(f.status == CL_SUCCESS);
        auto exe = std::static_pointer_cast<rt::NvidiaExecutable>(f.executable);
        CHECK(entryOf(*exe, "k").localVariableBytes == 262144);
        CHECK(exe->kernels()[0].staticLocalMemSize == 262144);
    }
    SECTION("a recursive kernel that uses __local variables") {
        rt::FinalizeResult f = finalizeSource(
            "__kernel void k(__global int* x, int n) { __local int t[4]; t[n & 3] = n;"
            " if (n > 0) k(x, n - 1); x[n] = t[0]; }");
        CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
        CHECK(contains(f.log, "recursive"));
    }
    SECTION("a program-scope variable initialised with a __local pointer") {
        // The NVPTX asm printer aborts on an initial value cast to a non-generic space
        // ("Unsupported expression in static initializer"); a build error instead.
        for (const char* init : {"NULL", "(local int*)(int*)&g"}) {
            INFO(init);
            rt::FinalizeResult f =
                finalizeSource(std::string("global int g;\nlocal int* global p = ") + init +
                                   ";\n__kernel void k(__global int* o) { o[0] = p == NULL; }",
                               "-cl-std=CL3.0");
            CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
            CHECK(contains(f.log, "error: program-scope variable 'p' is initialised with a "
                                  "value that holds a __local pointer"));
            CHECK_FALSE(f.executable);
        }
        // The same in clang's constant copy of a local struct's initial value (left as such
        // without optimisation): named after the function.
        rt::FinalizeResult copy = finalizeSource(
            "typedef struct { local int* p; int n[4]; } S;\n"
            "__kernel void k(__global S* o) { S s = {NULL, {1, 2, 3, 4}}; o[1] = s; }",
            "-cl-std=CL3.0 -cl-opt-disable");
        CHECK(copy.status == CL_BUILD_PROGRAM_FAILURE);
        CHECK(contains(copy.log, "error: in function 'k': the initial value of a local variable "
                                 "(clang's constant '__const.k.s') holds a __local pointer"));
        // A __global or generic pointer there is fine.
        rt::FinalizeResult f =
            finalizeSource("global int g;\nglobal int* global p = &g;\nint* global q = &g;\n"
                           "__kernel void k(__global int* o) { o[0] = *p + *q; }",
                           "-cl-std=CL3.0");
        INFO(f.log);
        CHECK(f.status == CL_SUCCESS);
    }
    SECTION("printf with a format that is not a literal") {
        rt::FinalizeResult f =
            finalizeSource("__kernel void k(__constant char* fmt) { printf(fmt); }");
        CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
        CHECK(contains(f.log, "not a constant string"));
    }
    SECTION("bitcode for another device, or no bitcode at all") {
        rt::CompileResult spir = rt::compileSource("__kernel void k() {}", "", {}, {});
        REQUIRE(spir.status == CL_SUCCESS);
        rt::FinalizeResult f = tc->finalize(spir.bitcode, "", "");
        CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
        CHECK(contains(f.log, "not for the NVIDIA device"));
        f = tc->finalize("garbage", "", "");
        CHECK(f.status == CL_BUILD_PROGRAM_FAILURE);
        CHECK(contains(f.log, "invalid program bitcode"));
    }
}

TEST_CASE("a program's PTX does not depend on the builds before it, failed ones included",
          "[nvidia][codegen][determinism]") {
    // LLVM 19's NVPTX backend caches nvvm.annotations by the addresses of the Module and the
    // function; a module that went through its passes but not its asm printer (every front end
    // module, a build that fails after optimisation) used to leave its entries to whatever
    // module malloc put at its address next: a builtin in a dead kernel's memory became an
    // .entry that ptxas rejects (finalize.cpp: releaseNvptxModule). Hundreds of kernels die
    // before each build here, so that their memory goes to the build's builtins (before the
    // fix, about every other round went wrong).
    std::string many;
    for (int k = 0; k < 300; ++k)
        many += "__kernel void many" + std::to_string(k) + "(__global float* p) { p[" +
                std::to_string(k) + "] = sin(p[0]); }\n";
    const std::string recursive = many +
                                  "int r(int n) { return n > 1 ? r(n - 1) * r(n - 2) : 1; }\n"
                                  "__kernel void rec(__global int* x) { x[0] = r(x[1]); }\n";
    // Without optimisation each builtin stays a function the kernel calls.
    const std::string calls = R"CL(
__kernel void calls(__global float* p, __global int* q) {
    p[0] = sin(p[1]) + cos(p[2]) + tan(p[3]) + exp(p[4]) + log(p[5]) + sqrt(p[6]) + cbrt(p[7]);
    p[8] = erf(p[9]) + tgamma(p[10]) + lgamma(p[11]) + asin(p[12]) + acos(p[13]) + atan(p[14]);
    p[15] = sinh(p[16]) + cosh(p[17]) + tanh(p[18]) + expm1(p[19]) + log1p(p[20]) + log2(p[21]);
    q[0] = popcount(q[1]) + clz(q[2]) + abs(q[3]) + mul_hi(q[4], q[5]) + rotate(q[6], q[7]);
    q[8] = add_sat(q[9], q[10]) + hadd(q[11], q[12]) + rhadd(q[13], q[14]);
    q[16] = mad_hi(q[17], q[18], q[19]) + mad_sat(q[20], q[21], q[22]) + sub_sat(q[23], q[24]);
    q[25] = abs_diff(q[26], q[27]) + (int)upsample((short)q[28], (ushort)q[29]);
}
)CL";
    // The PTX without the call sequence numbers of its comments ("// callseq 12"), which count
    // the process's calls so far.
    auto withoutCallSeq = [](const std::string& ptx) {
        std::string out;
        std::istringstream in(ptx);
        for (std::string line; std::getline(in, line);)
            out += line.substr(0, line.find("// callseq")) + "\n";
        return out;
    };
    std::string first;
    for (int round = 0; round < 16; ++round) {
        INFO("round " << round);
        rt::CompileResult c = rt::compileSource(many, "-cl-opt-disable", {}, target());
        REQUIRE(c.status == CL_SUCCESS);
        rt::FinalizeResult failed = finalizeSource(recursive, "-cl-opt-disable");
        REQUIRE(failed.status == CL_BUILD_PROGRAM_FAILURE);
        REQUIRE(contains(failed.log, "'r' is recursive"));
        Built b = build(calls, "-cl-opt-disable");
        const std::string ptx = withoutCallSeq(b.exe->ptx());
        CHECK(count(ptx, ".entry") == 1);
        CHECK(contains(ptx, ".entry calls("));
        CHECK(count(ptx, ".func ") >= 10); // the builtins: what a dead kernel's entry could hit
        if (round == 0)
            first = ptx;
        // The same text each time; on a difference, the first line that differs.
        size_t at = 0;
        while (at < ptx.size() && at < first.size() && ptx[at] == first[at])
            ++at;
        const size_t line = ptx.rfind('\n', at == 0 ? 0 : at - 1);
        const size_t from = line == std::string::npos ? 0 : line + 1;
        INFO("first difference: '" << ptx.substr(from, ptx.find('\n', from) - from) << "', was '"
                                   << first.substr(from, first.find('\n', from) - from) << "'");
        const bool same = ptx == first;
        CHECK(same);
    }
}

TEST_CASE("target choice: processor from the compute capability, PTX ISA from the driver",
          "[nvidia][target]") {
    auto choose = [](int major, int minor, int driver) {
        rt::NvptxTargetChoice c = rt::chooseNvptxTarget(major, minor, driver);
        return c.sm.empty() ? "none: " + c.reason : c.sm + "/" + std::to_string(c.ptx);
    };
    CHECK(choose(9, 0, 13000) == "sm_90/80"); // H100/H200, driver 580
    CHECK(choose(9, 0, 12000) == "sm_90/80");
    CHECK(choose(9, 0, 11080) == "sm_90/78"); // CUDA 11.8 driver: PTX 7.8 at most
    CHECK(choose(8, 0, 11000) == "sm_80/70"); // A100 on CUDA 11.0
    CHECK(choose(8, 6, 0) == "sm_86/80");     // driver version unknown
    CHECK(choose(8, 9, 12040) == "sm_89/80");
    CHECK(choose(7, 5, 12000) == "sm_75/80");
    CHECK(choose(10, 0, 12080) == "sm_90/80"); // newer GPUs run sm_90 PTX through the JIT
    CHECK(choose(12, 0, 12080) == "sm_90/80");
    CHECK(choose(8, 7, 0) == "sm_87/80");
    CHECK(contains(choose(3, 5, 11040), "older than Maxwell"));
    CHECK(contains(choose(9, 0, 11040), "needs 7.8"));
    CHECK(rt::maxPtxForDriver(0) == 0);
    CHECK(rt::maxPtxForDriver(12020) == 82);
    CHECK(rt::maxPtxForDriver(13000) == 90);
}

TEST_CASE("the Duet PTX header: round trip and malformed text", "[nvidia][header]") {
    nvidia::PtxModule m;
    m.target = "sm_80";
    m.ptxVersion = 78;
    m.globalBytes = 12;
    KernelEntry k;
    k.name = "k";
    k.params = 4;
    k.localArgs = {0, 2};
    k.localVariableBytes = 4096;
    k.reqdWorkGroupSize = {8, 4, 2};
    k.usesPrintf = true;
    k.texturedName = "__duet_textured_k";
    k.textureRequirements = {{1, 1, 2, 0}, {1, 3, -1, 0x16}};
    m.kernels = {k};
    m.printf = {{1, {4, 8}, "a %d\n%s \"quoted\" %% é"}, {2, {}, ""}};
    const std::string ptx = nvidia::ptxHeader(m) + ".version 7.8\n.target sm_80\n";
    nvidia::ReadPtxResult r = nvidia::readPtxModule(ptx);
    REQUIRE(r.error.empty());
    CHECK(r.module.target == "sm_80");
    CHECK(r.module.ptxVersion == 78);
    CHECK(r.module.globalBytes == 12);
    REQUIRE(r.module.kernels.size() == 1);
    CHECK(r.module.kernels[0].localArgs == k.localArgs);
    CHECK(r.module.kernels[0].reqdWorkGroupSize == k.reqdWorkGroupSize);
    CHECK(r.module.kernels[0].localVariableBytes == 4096);
    CHECK(r.module.kernels[0].usesPrintf);
    CHECK(r.module.kernels[0].texturedName == "__duet_textured_k");
    CHECK(r.module.kernels[0].textureRequirements == k.textureRequirements);
    REQUIRE(r.module.printf.size() == 2);
    CHECK(r.module.printf[0].format == m.printf[0].format);
    CHECK(r.module.printf[0].argSizes == m.printf[0].argSizes);
    CHECK(r.module.printf[1].format.empty());

    // Every prefix and every single-byte corruption of the text reads or fails, never crashes.
    for (size_t cut = 0; cut < ptx.size(); ++cut)
        (void)nvidia::readPtxModule(ptx.substr(0, cut));
    for (size_t at = 0; at < ptx.size(); ++at) {
        std::string bad = ptx;
        bad[at] = char(bad[at] ^ 0x5a);
        (void)nvidia::readPtxModule(bad);
    }
    CHECK_FALSE(nvidia::readPtxModule(".version 8.0\n.target sm_90\n").error.empty());
    CHECK_FALSE(nvidia::readPtxModule(".version 8.0\n.target sm_90\n").otherVersion);
    CHECK(contains(ptx, "local-vars 4096"));
    std::string wrongArg = ptx;
    wrongArg.replace(wrongArg.find("local-args 0,2"), 14, "local-args 0,3");
    CHECK(contains(nvidia::readPtxModule(wrongArg).error, "__local argument 3"));
    // A texture requirement naming a parameter the kernel lacks, a class that does not exist,
    // a kernel the header does not list, a second variant: refused.
    for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"1.1.a2", "3.1.a2"},
             {"1.1.a2", "1.1.a3"},
             {"1.1.a2", "1.4.a2"},
             {"1.1.a2", "1.1.x2"},
             {"1.1.a2", "1..a2"},
             {"duet-textured k ", "duet-textured q "}}) {
        std::string bad = ptx;
        REQUIRE(bad.find(from) != std::string::npos);
        bad.replace(bad.find(from), from.size(), to);
        INFO(to);
        CHECK(contains(nvidia::readPtxModule(bad).error, "malformed duet-textured line"));
    }
    {
        const size_t line = ptx.find("// duet-textured");
        const std::string twice = ptx.substr(0, line) +
                                  ptx.substr(line, ptx.find('\n', line) + 1 - line) +
                                  ptx.substr(line);
        CHECK(contains(nvidia::readPtxModule(twice).error, "malformed duet-textured line"));
    }
    std::string disagree = ptx;
    disagree.replace(disagree.find(".target sm_80"), 13, ".target sm_90");
    CHECK(contains(nvidia::readPtxModule(disagree).error, "disagrees"));

    const auto convs = rt::printfConversions("%d %% %5.2f %v4hlf %s %-08lx %c%");
    REQUIRE(convs.size() == 7);
    CHECK(convs[0].letter == 'd');
    CHECK(convs[2].letter == 'f');
    CHECK(convs[2].vector == 4);
    CHECK(convs[3].letter == 's');
    CHECK(convs[4].letter == 'x');
    CHECK(convs[6].letter == '\0');
}

TEST_CASE("the CUDA driver loader reports a missing library or entry point", "[nvidia][driver]") {
    std::string reason;
    CHECK_FALSE(nvidia::loadCudaDriver("/nonexistent/libcuda.so.1", reason));
    CHECK(contains(reason, "/nonexistent/libcuda.so.1"));
    CHECK(contains(reason, "cannot load"));

    reason.clear();
    CHECK_FALSE(nvidia::loadCudaDriver("libm.so.6", reason)); // a library, not the driver
    CHECK(contains(reason, "cuInit"));
    CHECK(contains(reason, "cuLaunchKernel"));

    // The process's driver: on a machine without NVIDIA's driver (this test's usual home) it is
    // absent with a reason; where libcuda.so.1 loads, every entry point must resolve.
    void* real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    reason.clear();
    const nvidia::CudaDriver* d = nvidia::CudaDriver::get(&reason);
    if (!real && !std::getenv("DUET_CUDA_LIBRARY")) {
        CHECK_FALSE(d);
        CHECK(contains(reason, "libcuda.so.1"));
    } else if (real) {
        INFO(reason);
        CHECK(d);
        dlclose(real);
    }
}

TEST_CASE("image descriptor slots: by content, written once, least recently used reassigned",
          "[nvidia][image]") {
    using rt::nvidia_device::ImageSlots;
    auto image = [](int width) {
        rt::KernelImageDesc d{};
        d.width = width;
        return d;
    };
    ImageSlots slots;
    slots.beginLaunch();
    ImageSlots::Placement a = slots.place(image(1), false);
    CHECK((a.slot == 0 && a.write && a.grow)); // the first chunk
    ImageSlots::Placement b = slots.place(image(2), false);
    CHECK((b.slot == 1 && b.write && !b.grow));
    CHECK(slots.content(1).image.width == 2);
    slots.beginLaunch();
    ImageSlots::Placement again =
        slots.place(image(1), false); // same descriptor: same slot, no write
    CHECK((again.slot == 0 && !again.write && !again.grow));
    CHECK(slots.capacity() == ImageSlots::kSlotsPerChunk);

    // Up to kMaxSlots the pool grows; then the least recently used slot takes a new
    // descriptor, never one the launch being placed reads.
    for (int w = 3; size_t(w) <= ImageSlots::kMaxSlots; ++w) {
        slots.beginLaunch();
        slots.place(image(1), false); // slot 0 stays in use
        CHECK(slots.place(image(w), false).slot == size_t(w - 1));
    }
    CHECK(slots.capacity() == ImageSlots::kMaxSlots);
    slots.beginLaunch();
    slots.place(image(1), false);
    ImageSlots::Placement reused = slots.place(image(5000), false);
    CHECK((reused.slot == 1 && reused.write && !reused.grow)); // image(2): least recently used
    CHECK(slots.content(1).image.width == 5000);
    CHECK(slots.place(image(2), false).slot == 2); // image(3) was next least recently used
    CHECK(slots.place(image(5000), false).slot == 1);

    // A failed write leaves the slot empty: the descriptor is written again next time.
    slots.beginLaunch();
    ImageSlots::Placement failed = slots.place(image(6000), false);
    REQUIRE(failed.write);
    slots.forget(failed);
    ImageSlots::Placement retried = slots.place(image(6000), false);
    CHECK((retried.write && retried.slot == failed.slot));

    // The same image read by one launch and written by another: two slots, the read one with
    // texture objects, which a reassignment hands back for destruction.
    slots.beginLaunch();
    ImageSlots::Placement written = slots.place(image(7000), false);
    ImageSlots::Placement read = slots.place(image(7000), true);
    CHECK(written.slot != read.slot);
    const uint64_t handles[rt::nvidia_device::kSamplerKeys] = {11, 0, 13};
    slots.setTextures(read.slot, rt::nvidia_device::kFloatTexture, rt::nvidia_device::kSwizzleR,
                      handles);
    CHECK(slots.content(read.slot).textures[2] == 13);
    CHECK(slots.content(read.slot).textureClass == rt::nvidia_device::kFloatTexture);
    CHECK(slots.content(written.slot).textures[0] == 0);
    CHECK(slots.allTextures() == std::vector<uint64_t>{11, 13});
    // Every other slot taken by later launches: the read slot is reassigned at last.
    ImageSlots::Placement taken;
    for (int w = 8000; !taken.reused || taken.slot != read.slot; ++w) {
        slots.beginLaunch();
        taken = slots.place(image(w), false);
        REQUIRE(w < 8000 + int(ImageSlots::kMaxSlots) + 1);
    }
    CHECK((taken.retired[0] == 11 && taken.retired[1] == 0 && taken.retired[2] == 13));
    CHECK(slots.content(read.slot).textures[0] == 0);
}

TEST_CASE("images sampled through CUDA texture objects: which ones, with which descriptors",
          "[nvidia][image]") {
    namespace nd = rt::nvidia_device;
    namespace cu = nvidia::cu;
    const nd::TextureLimits h100{512, 32, 131072, 65000, 2097120};
    alignas(512) static char storage[4096];
    auto image = [&](cl_channel_order order, cl_channel_type type, int width, int height,
                     cl_mem_object_type kind = CL_MEM_OBJECT_IMAGE2D) {
        rt::KernelImageDesc d{};
        d.data = storage;
        d.channelOrder = order;
        d.channelType = type;
        d.imageType = int32_t(kind);
        d.width = width;
        d.height = height;
        d.depth = d.arraySize = 1;
        const cl_image_format f{order, type};
        d.elementSize = int32_t(rt::elementSize(f));
        d.rowPitch = uint64_t(width) * uint64_t(d.elementSize);
        return d;
    };
    std::string why;

    auto rgba8 = nd::textureSource(image(CL_RGBA, CL_UNORM_INT8, 64, 16), h100, &why);
    REQUIRE(rgba8);
    CHECK(rgba8->resource.resType == cu::kResourceTypePitch2d);
    CHECK(rgba8->resource.res.pitch2D.devPtr == uint64_t(reinterpret_cast<uintptr_t>(storage)));
    CHECK(rgba8->resource.res.pitch2D.format == cu::kFormatUnsignedInt8);
    CHECK(rgba8->resource.res.pitch2D.numChannels == 4);
    CHECK(rgba8->resource.res.pitch2D.width == 64);
    CHECK(rgba8->resource.res.pitch2D.height == 16);
    CHECK(rgba8->resource.res.pitch2D.pitchInBytes == 256);
    CHECK((rgba8->cls == nd::kFloatTexture && rgba8->swizzle == nd::kSwizzleRgba && !rgba8->srgb));

    auto srgb = nd::textureSource(image(CL_sBGRA, CL_UNORM_INT8, 64, 1), h100);
    REQUIRE(srgb);
    CHECK((srgb->srgb && srgb->swizzle == nd::kSwizzleSbgra && !srgb->filterable));
    auto depth = nd::textureSource(image(CL_DEPTH, CL_FLOAT, 8, 8), h100);
    REQUIRE(depth);
    CHECK((depth->swizzle == nd::kSwizzleR && depth->resource.res.pitch2D.numChannels == 1));
    auto u16 = nd::textureSource(image(CL_RG, CL_UNSIGNED_INT16, 8, 8), h100);
    REQUIRE(u16);
    CHECK((u16->cls == nd::kUnsignedTexture && u16->swizzle == nd::kSwizzleRg));
    CHECK(nd::textureSource(image(CL_R, CL_SIGNED_INT32, 8, 8), h100)->cls == nd::kSignedTexture);
    // 1D: one row, its pitch rounded up to the alignment.
    auto line = nd::textureSource(image(CL_R, CL_FLOAT, 3, 1, CL_MEM_OBJECT_IMAGE1D), h100);
    REQUIRE(line);
    CHECK(
        (line->resource.res.pitch2D.height == 1 && line->resource.res.pitch2D.pitchInBytes == 32));

    // Software reads for the rest, with the reason.
    CHECK_FALSE(nd::textureSource(image(CL_R, CL_UNORM_INT8, 33, 2), h100, &why));
    CHECK(why.find("row pitch 33") != std::string::npos);
    rt::KernelImageDesc shifted = image(CL_RGBA, CL_FLOAT, 8, 8);
    shifted.data += 16;
    CHECK_FALSE(nd::textureSource(shifted, h100, &why));
    CHECK(why.find("aligned") != std::string::npos);
    CHECK_FALSE(nd::textureSource(image(CL_RGBA, CL_FLOAT, 8, 8, CL_MEM_OBJECT_IMAGE3D), h100));
    CHECK_FALSE(
        nd::textureSource(image(CL_RGBA, CL_FLOAT, 8, 8, CL_MEM_OBJECT_IMAGE2D_ARRAY), h100));
    CHECK_FALSE(nd::textureSource(image(CL_RGB, CL_UNORM_SHORT_565, 16, 8), h100));
    CHECK_FALSE(nd::textureSource(image(CL_RGBA, CL_UNORM_INT8, 200000, 1), h100));
    CHECK_FALSE(nd::textureSource(image(CL_RGBA, CL_UNORM_INT8, 64, 16), nd::TextureLimits{}));

    // Sampler keys: CLK_* bits as core/memory.cpp makes them.
    CHECK(nd::samplerKey(0x10) == 0);                       // unnormalized, none, nearest
    CHECK(nd::samplerKey(0x2 | 0x10) == 0);                 // clamp to edge = none
    CHECK(nd::samplerKey(0x4 | 0x10) == 2);                 // clamp
    CHECK(nd::samplerKey(0x1 | 0x6 | 0x20) == (1 | 4 | 8)); // normalized, repeat, linear
    CHECK(nd::samplerKey(0x1 | 0x8 | 0x10) == (1 | 6));     // normalized, mirrored repeat

    cu::TextureDesc t{};
    REQUIRE(nd::textureDesc(*rgba8, nd::samplerKey(0x4 | 0x20), t)); // clamp, linear
    CHECK((t.addressMode[0] == cu::kAddressBorder && t.addressMode[1] == cu::kAddressBorder));
    CHECK(t.filterMode == cu::kFilterLinear);
    CHECK(t.flags == 0);
    for (float c : t.borderColor)
        CHECK(c == 0.0f);
    // sRGB: the bytes, read as integers (the library decodes them), nearest only.
    REQUIRE(nd::textureDesc(*srgb, nd::samplerKey(0x1 | 0x8 | 0x10), t));
    CHECK((t.addressMode[0] == cu::kAddressMirror && t.filterMode == cu::kFilterPoint));
    CHECK(t.flags == (cu::kTrsfNormalizedCoordinates | cu::kTrsfReadAsInteger));
    CHECK_FALSE(nd::textureDesc(*srgb, nd::samplerKey(0x1 | 0x2 | 0x20), t));
    // 8-bit signed normalized: no linear filtering in the texture unit either.
    auto snorm8 = nd::textureSource(image(CL_RGBA, CL_SNORM_INT8, 8, 8), h100);
    REQUIRE(snorm8);
    CHECK(nd::textureDesc(*snorm8, nd::samplerKey(0x1 | 0x2 | 0x10), t));
    CHECK_FALSE(nd::textureDesc(*snorm8, nd::samplerKey(0x1 | 0x2 | 0x20), t));
    REQUIRE(nd::textureDesc(*u16, nd::samplerKey(0x1 | 0x6 | 0x10), t));
    CHECK((t.addressMode[0] == cu::kAddressWrap &&
           t.flags == (cu::kTrsfNormalizedCoordinates | cu::kTrsfReadAsInteger)));
    CHECK_FALSE(nd::textureDesc(*u16, nd::samplerKey(0x20), t));         // linear integers
    CHECK_FALSE(nd::textureDesc(*rgba8, nd::samplerKey(0x6 | 0x10), t)); // repeat, unnormalized
    int keys = 0;
    for (unsigned k = 0; k < nd::kSamplerKeys; ++k)
        keys += nd::textureDesc(*rgba8, k, t);
    CHECK(keys == 12);
}

TEST_CASE("3D images and image arrays sampled through CUDA array copies: descriptors, limits",
          "[nvidia][image]") {
    namespace nd = rt::nvidia_device;
    namespace cu = nvidia::cu;
    // An H100's limits (cuDeviceGetAttribute): pitch-linear, then 3D, 1D layered, 2D layered.
    nd::TextureLimits h100{512, 32, 131072, 65000, 2097120};
    const uint64_t max3d[3] = {16384, 16384, 16384}, layered1d[2] = {32768, 2048},
                   layered2d[3] = {32768, 32768, 2048};
    std::copy(max3d, max3d + 3, h100.max3d);
    std::copy(layered1d, layered1d + 2, h100.maxLayered1d);
    std::copy(layered2d, layered2d + 3, h100.maxLayered2d);
    static char storage[64];
    auto image = [&](cl_mem_object_type kind, cl_channel_order order, cl_channel_type type,
                     int width, int height, int depthOrLayers) {
        rt::KernelImageDesc d{};
        d.data = storage + 4; // arrays are copies: no alignment asked of the storage
        d.channelOrder = order;
        d.channelType = type;
        d.imageType = int32_t(kind);
        d.width = width;
        d.height = kind == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : height;
        d.depth = kind == CL_MEM_OBJECT_IMAGE3D ? depthOrLayers : 1;
        d.arraySize = kind == CL_MEM_OBJECT_IMAGE3D ? 1 : depthOrLayers;
        d.elementSize = int32_t(rt::elementSize(cl_image_format{order, type}));
        d.rowPitch = uint64_t(width) * uint64_t(d.elementSize);
        d.slicePitch = d.rowPitch * uint64_t(d.height);
        return d;
    };
    const uint64_t base = uint64_t(reinterpret_cast<uintptr_t>(storage + 4));
    std::string why;

    // A 3D image: a 3D array (not layered), copied row by row from the linear storage.
    auto volume = nd::textureSource(image(CL_MEM_OBJECT_IMAGE3D, CL_RGBA, CL_UNORM_INT8, 33, 7, 5),
                                    h100, &why);
    REQUIRE(volume);
    REQUIRE(volume->array);
    CHECK(volume->resource.resType == cu::kResourceTypeArray);
    CHECK(volume->cls == nd::kFloatTexture);
    const cu::Array3DDescriptor& a = volume->array->array;
    CHECK((a.width == 33 && a.height == 7 && a.depth == 5 && a.flags == 0));
    CHECK((a.format == cu::kFormatUnsignedInt8 && a.numChannels == 4));
    const cu::Memcpy3D& c = volume->array->copy;
    CHECK((c.srcMemoryType == cu::kMemoryTypeUnified && c.srcDevice == base));
    CHECK((c.srcPitch == 132 && c.srcHeight == 7 && c.dstMemoryType == cu::kMemoryTypeArray));
    CHECK((c.widthInBytes == 132 && c.height == 7 && c.depth == 5));
    // An odd row pitch (33 bytes) is no reason for software here, unlike pitch-linear textures.
    CHECK(nd::textureSource(image(CL_MEM_OBJECT_IMAGE3D, CL_R, CL_UNORM_INT8, 33, 2, 2), h100));

    // A 2D array: layered, its layers the depth; slices a whole number of padded rows.
    rt::KernelImageDesc padded = image(CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_RG, CL_FLOAT, 10, 4, 3);
    padded.rowPitch = 96;
    padded.slicePitch = 96 * 6;
    auto layers = nd::textureSource(padded, h100);
    REQUIRE((layers && layers->array));
    CHECK((layers->array->array.width == 10 && layers->array->array.height == 4 &&
           layers->array->array.depth == 3));
    CHECK(layers->array->array.flags == cu::kArray3dLayered);
    CHECK((layers->array->array.format == cu::kFormatFloat &&
           layers->array->array.numChannels == 2 && layers->swizzle == nd::kSwizzleRg));
    CHECK((layers->array->copy.srcPitch == 96 && layers->array->copy.srcHeight == 6 &&
           layers->array->copy.widthInBytes == 80 && layers->array->copy.height == 4));
    // A 2D depth array, an integer one.
    auto depth =
        nd::textureSource(image(CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_DEPTH, CL_FLOAT, 8, 8, 2), h100);
    REQUIRE((depth && depth->array && depth->swizzle == nd::kSwizzleR));
    CHECK(nd::textureSource(image(CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_RGBA, CL_SIGNED_INT16, 4, 4, 4),
                            h100)
              ->cls == nd::kSignedTexture);

    // A 1D array: a layered array of height 0; each layer one row, the slice pitch apart.
    rt::KernelImageDesc lines =
        image(CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_R, CL_UNSIGNED_INT16, 100, 1, 6);
    lines.slicePitch = 256;
    auto rows = nd::textureSource(lines, h100);
    REQUIRE((rows && rows->array));
    CHECK((rows->array->array.width == 100 && rows->array->array.height == 0 &&
           rows->array->array.depth == 6 && rows->array->array.flags == cu::kArray3dLayered));
    CHECK((rows->array->copy.srcPitch == 256 && rows->array->copy.srcHeight == 1 &&
           rows->array->copy.widthInBytes == 200 && rows->array->copy.height == 1 &&
           rows->array->copy.depth == 6));
    CHECK(rows->cls == nd::kUnsignedTexture);

    // Texture descriptors as for 2D: every addressing mode on all three axes, trilinear where
    // the channels are filterable.
    cu::TextureDesc t{};
    REQUIRE(nd::textureDesc(*volume, 1 | 4 | 8, t)); // normalized, repeat, linear
    CHECK((t.addressMode[2] == cu::kAddressWrap && t.filterMode == cu::kFilterLinear));
    CHECK((t.flags & cu::kTrsfNormalizedCoordinates));
    CHECK_FALSE(nd::textureDesc(*rows, 8, t)); // no linear filtering of integers

    // Beyond the GPU's array limits, with a slice that is not whole rows, or without arrays:
    // software, with the reason.
    CHECK_FALSE(
        nd::textureSource(image(CL_MEM_OBJECT_IMAGE3D, CL_R, CL_FLOAT, 16385, 2, 2), h100, &why));
    CHECK(why.find("larger than the GPU's 3D textures (16385x2x2)") != std::string::npos);
    CHECK_FALSE(nd::textureSource(image(CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_R, CL_FLOAT, 40000, 2, 2),
                                  h100, &why));
    CHECK(why.find("layered textures") != std::string::npos);
    CHECK_FALSE(nd::textureSource(image(CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_R, CL_FLOAT, 64, 1, 2049),
                                  h100, &why));
    CHECK(why.find("layered textures") != std::string::npos);
    rt::KernelImageDesc ragged = image(CL_MEM_OBJECT_IMAGE3D, CL_R, CL_FLOAT, 8, 8, 2);
    ragged.slicePitch += 4;
    CHECK_FALSE(nd::textureSource(ragged, h100, &why));
    CHECK(why.find("not a whole number of rows") != std::string::npos);
    nd::TextureLimits noArrays{512, 32, 131072, 65000, 2097120};
    CHECK_FALSE(
        nd::textureSource(image(CL_MEM_OBJECT_IMAGE3D, CL_R, CL_FLOAT, 8, 8, 2), noArrays, &why));
    CHECK(why.find("no CUDA arrays") != std::string::npos);
    CHECK_FALSE(
        nd::textureSource(image(CL_MEM_OBJECT_IMAGE3D, CL_RGB, CL_UNORM_SHORT_565, 8, 8, 2), h100));
    rt::KernelImageDesc buffer = image(CL_MEM_OBJECT_IMAGE2D, CL_R, CL_FLOAT, 8, 1, 1);
    buffer.imageType = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    CHECK_FALSE(nd::textureSource(buffer, h100, &why));
    CHECK(why.find("1D image buffers") != std::string::npos);
}

TEST_CASE("launch plans: grids, launch blocks and __local offsets of an NDRange",
          "[nvidia][launch]") {
    using nvidia::planLaunch;
    SECTION("uniform 1D") {
        const size_t off[] = {0}, global[] = {1024}, local[] = {256};
        auto plan = planLaunch(1, off, global, local, {}, 0x1000);
        REQUIRE(plan.error.empty());
        REQUIRE(plan.grids.size() == 1);
        const nvidia::Grid& g = plan.grids[0];
        CHECK(g.blocks == std::array<uint32_t, 3>{4, 1, 1});
        CHECK(g.threads == std::array<uint32_t, 3>{256, 1, 1});
        CHECK(g.launch.workDim == 1);
        CHECK(g.launch.globalSize[0] == 1024);
        CHECK(g.launch.globalSize[1] == 1);
        CHECK(g.launch.numGroups[0] == 4);
        CHECK(g.launch.enqueuedLocalSize[0] == 256);
        CHECK(g.launch.printfBuffer == 0x1000);
        CHECK(plan.dynamicSharedBytes == 0);
    }
    SECTION("3D with partial work-groups: every work-item once, with the ids OpenCL gives") {
        const size_t off[] = {5, 7, 11}, global[] = {13, 6, 3}, local[] = {4, 4, 2};
        auto plan = planLaunch(3, off, global, local, {});
        REQUIRE(plan.error.empty());
        CHECK(plan.grids.size() == 8);
        std::map<std::array<size_t, 3>, int> seen;
        for (const nvidia::Grid& g : plan.grids)
            for (uint32_t bz = 0; bz < g.blocks[2]; ++bz)
                for (uint32_t by = 0; by < g.blocks[1]; ++by)
                    for (uint32_t bx = 0; bx < g.blocks[0]; ++bx)
                        for (uint32_t tz = 0; tz < g.threads[2]; ++tz)
                            for (uint32_t ty = 0; ty < g.threads[1]; ++ty)
                                for (uint32_t tx = 0; tx < g.threads[0]; ++tx) {
                                    const uint32_t b[3] = {bx, by, bz}, t[3] = {tx, ty, tz};
                                    std::array<size_t, 3> id{};
                                    for (int d = 0; d < 3; ++d) {
                                        const size_t group = g.launch.groupOffset[d] + b[d];
                                        id[d] = group * g.launch.enqueuedLocalSize[d] + t[d] +
                                                g.launch.globalOffset[d];
                                        // get_local_size: the real size of this group.
                                        const size_t expect =
                                            std::min(local[d], global[d] - group * local[d]);
                                        CHECK(g.threads[d] == expect);
                                        CHECK(g.launch.numGroups[d] ==
                                              (global[d] + local[d] - 1) / local[d]);
                                    }
                                    ++seen[id];
                                }
        CHECK(seen.size() == 13 * 6 * 3);
        for (const auto& [id, n] : seen) {
            CHECK(n == 1);
            for (int d = 0; d < 3; ++d) {
                CHECK(id[d] >= off[d]);
                CHECK(id[d] < off[d] + global[d]);
            }
        }
    }
    SECTION("__local arguments: consecutive, 16-byte aligned") {
        const size_t off[] = {0}, global[] = {64}, local[] = {64}, bytes[] = {4096, 1, 100};
        auto plan = planLaunch(1, off, global, local, {0, bytes});
        REQUIRE(plan.error.empty());
        CHECK(plan.localOffsets == std::vector<uint64_t>{0, 4096, 4112});
        CHECK(plan.dynamicSharedBytes == 4212);
    }
    SECTION("__local variables first, the arguments after them at 16-byte alignment") {
        const size_t off[] = {0}, global[] = {64}, local[] = {64}, bytes[] = {100, 8};
        auto plan = planLaunch(1, off, global, local, {65539, bytes});
        REQUIRE(plan.error.empty());
        CHECK(plan.localOffsets == std::vector<uint64_t>{65552, 65664});
        CHECK(plan.dynamicSharedBytes == 65672);
        CHECK(nvidia::layOutSharedMemory({65539, bytes}) == 65672);
        // Variables only: their size, nothing after them.
        CHECK(planLaunch(1, off, global, local, {65536, {}}).dynamicSharedBytes == 65536);
    }
    SECTION("what cannot be launched") {
        const size_t off[] = {0, 0}, global[] = {64, 65536 * 2}, local[] = {64, 1}, zero[] = {0, 1};
        CHECK_FALSE(planLaunch(0, off, global, local, {}).error.empty());
        CHECK_FALSE(planLaunch(2, off, global, zero, {}).error.empty());
        CHECK(contains(planLaunch(2, off, global, local, {}).error, "at most 65535"));
        // __local sizes as clSetKernelArg takes them (any size_t): no wrap-around.
        const size_t huge[] = {~size_t(0) - 8, 64};
        CHECK(contains(planLaunch(1, off, global, local, {16, huge}).error, "4 GiB"));
        CHECK(nvidia::layOutSharedMemory({16, huge}) >= (uint64_t(1) << 62));
    }
}

TEST_CASE("three-element vectors in initializers keep their padding in the PTX",
          "[nvidia][codegen]") {
    // LLVM 19's asm printer packs <3 x float> elements of an initializer to 12 bytes while every
    // access strides 16: the colour table of duet-gasdyn's visualize.cl read shifted on an H100.
    Built b = build("__constant float3 kStops[3] = {(float3)(1.f, 2.f, 3.f), (float3)(4.f, 5.f, "
                    "6.f), (float3)(7.f, 8.f, 9.f)};\n"
                    "typedef struct { float3 a; int b; } S;\n"
                    "__constant S kS[2] = {{(float3)(1.f, 2.f, 3.f), 7}, {(float3)(4.f, 5.f, "
                    "6.f), 8}};\n"
                    "__kernel void k(__global float* o, int i) {\n"
                    "  float3 v = kStops[i]; o[0] = v.x; o[1] = v.y; o[2] = v.z;\n"
                    "  o[3] = kS[i].a.y + (float)kS[i].b; }");
    const std::string& ptx = b.exe->ptx();
    // 1.0f, 2.0f, 3.0f, padding, 4.0f: 0x3f800000 0x40000000 0x40400000 0 0x40800000.
    CHECK(contains(ptx, "kStops[48] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 0, 0, 0, "
                        "0, 128, 64,"));
    // The struct: a (16 bytes, padded), b at offset 16, 12 bytes of tail padding.
    CHECK(contains(ptx, "kS[64] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 0, 0, 7, 0, "
                        "0, 0,"));
}
