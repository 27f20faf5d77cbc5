// describeKernels: argument kinds, sizes, qualifiers, names, attributes, local memory.
#include "front_util.hpp"

using namespace duet::rt;
using namespace duet::rt::test;

namespace {

const char* kKernels = R"CL(
typedef struct { float x; int y; char z; } S;
typedef struct { double d; char c; } D;

__attribute__((reqd_work_group_size(16, 16, 1)))
kernel void k1(global float4* restrict out, constant float* c, local int* l, S s, float3 f3,
               uint u, const global volatile int* v, D d, char ch, ulong8 big) {
    local float tile[256];
    local int cnt[3];
    tile[get_local_id(0)] = c[0];
    cnt[get_local_id(0) % 3] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[0] = (float4)(tile[255 - get_local_id(0)] + s.x + f3.x + cnt[u % 3] + *v + d.d + ch +
                      big.s0);
    l[0] = 1;
}

kernel void inner(global int* o) {
    local int buf[64];
    buf[get_local_id(0)] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    o[0] = buf[63 - get_local_id(0)];
}

__attribute__((work_group_size_hint(8, 4, 1))) __attribute__((vec_type_hint(uint4)))
kernel void outer(global int* o) { inner(o); printf("%d\n", o[0]); }
)CL";

const char* kImages = R"CL(
kernel void img(read_only image2d_t a, write_only image2d_array_depth_t b,
                read_write image3d_t c, image1d_buffer_t d, image1d_array_t e, image1d_t f,
                image2d_array_t g, image2d_depth_t h, sampler_t s, global float4* out) {
    out[0] = read_imagef(a, s, (int2)(0, 0));
}
)CL";

} // namespace

TEST_CASE("kernel argument kinds, sizes and qualifiers", "[compiler][metadata]") {
    auto kernels = describeKernels(compileOk(kKernels, "-cl-kernel-arg-info"));
    REQUIRE(kernels.size() == 3);
    CHECK(kernels[0].name == "k1");
    CHECK(kernels[1].name == "inner");
    CHECK(kernels[2].name == "outer");

    const KernelDesc& k = kernels[0];
    CHECK(k.argInfoAvailable);
    REQUIRE(k.args.size() == 10);
    struct Expect {
        KernelArgKind kind;
        uint32_t size, align;
        cl_kernel_arg_address_qualifier as;
        cl_kernel_arg_type_qualifier tq;
        const char* type;
        const char* name;
    };
    const Expect expect[] = {
        {KernelArgKind::GlobalBuffer, 8, 8, CL_KERNEL_ARG_ADDRESS_GLOBAL,
         CL_KERNEL_ARG_TYPE_RESTRICT, "float4*", "out"},
        {KernelArgKind::ConstantBuffer, 8, 8, CL_KERNEL_ARG_ADDRESS_CONSTANT,
         CL_KERNEL_ARG_TYPE_CONST, "float*", "c"},
        {KernelArgKind::LocalBuffer, 8, 8, CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_TYPE_NONE,
         "int*", "l"},
        {KernelArgKind::Value, 12, 4, CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE, "S",
         "s"},
        {KernelArgKind::Value, 16, 16, CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE,
         "float3", "f3"},
        {KernelArgKind::Value, 4, 4, CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE, "uint",
         "u"},
        {KernelArgKind::GlobalBuffer, 8, 8, CL_KERNEL_ARG_ADDRESS_GLOBAL,
         CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_VOLATILE, "int*", "v"},
        {KernelArgKind::Value, 16, 8, CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE, "D",
         "d"},
        {KernelArgKind::Value, 1, 1, CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE, "char",
         "ch"},
        {KernelArgKind::Value, 64, 64, CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE,
         "ulong8", "big"},
    };
    for (size_t i = 0; i < k.args.size(); ++i) {
        INFO("argument " << i << " (" << expect[i].name << ")");
        const KernelArgDesc& a = k.args[i];
        CHECK(a.kind == expect[i].kind);
        CHECK(a.size == expect[i].size);
        CHECK(a.align == expect[i].align);
        CHECK(a.addressQualifier == expect[i].as);
        CHECK(a.accessQualifier == CL_KERNEL_ARG_ACCESS_NONE);
        CHECK(a.typeQualifier == expect[i].tq);
        CHECK(a.typeName == expect[i].type);
        CHECK(a.name == expect[i].name);
        CHECK(a.imageType == 0);
    }
}

TEST_CASE("kernel attributes, barriers, printf and static local memory", "[compiler][metadata]") {
    for (const char* opts : {"", "-cl-opt-disable"}) {
        INFO("options: " << opts);
        auto kernels = describeKernels(compileOk(kKernels, opts));
        REQUIRE(kernels.size() == 3);
        const KernelDesc& k1 = kernels[0];
        CHECK(k1.reqdWorkGroupSize == std::array<size_t, 3>{16, 16, 1});
        CHECK(k1.workGroupSizeHint == std::array<size_t, 3>{0, 0, 0});
        CHECK(k1.attributes == "reqd_work_group_size(16,16,1)");
        CHECK(k1.staticLocalMemSize == 256 * 4 + 3 * 4);
        CHECK(k1.hasBarrier);
        CHECK_FALSE(k1.usesPrintf);
        // Without -cl-kernel-arg-info the names are not available (types still are).
        CHECK_FALSE(k1.argInfoAvailable);
        CHECK(k1.args[0].name.empty());
        CHECK(k1.args[0].typeName == "float4*");

        const KernelDesc& inner = kernels[1];
        CHECK(inner.staticLocalMemSize == 64 * 4);
        CHECK(inner.attributes.empty());
        CHECK(inner.reqdWorkGroupSize == std::array<size_t, 3>{0, 0, 0});

        // outer reaches inner's __local buffer through the call.
        const KernelDesc& outer = kernels[2];
        CHECK(outer.staticLocalMemSize == 64 * 4);
        CHECK(outer.hasBarrier);
        CHECK(outer.usesPrintf);
        CHECK(outer.workGroupSizeHint == std::array<size_t, 3>{8, 4, 1});
        CHECK(outer.attributes == "work_group_size_hint(8,4,1) vec_type_hint(uint4)");
    }
}

TEST_CASE("image and sampler arguments", "[compiler][metadata][images]") {
    auto kernels = describeKernels(compileOk(kImages, "-cl-std=CL3.0 -cl-kernel-arg-info"));
    REQUIRE(kernels.size() == 1);
    const auto& args = kernels[0].args;
    REQUIRE(args.size() == 10);
    struct Expect {
        cl_mem_object_type type;
        bool depth;
        cl_kernel_arg_access_qualifier access;
        const char* name;
    };
    const Expect expect[] = {
        {CL_MEM_OBJECT_IMAGE2D, false, CL_KERNEL_ARG_ACCESS_READ_ONLY, "image2d_t"},
        {CL_MEM_OBJECT_IMAGE2D_ARRAY, true, CL_KERNEL_ARG_ACCESS_WRITE_ONLY,
         "image2d_array_depth_t"},
        {CL_MEM_OBJECT_IMAGE3D, false, CL_KERNEL_ARG_ACCESS_READ_WRITE, "image3d_t"},
        {CL_MEM_OBJECT_IMAGE1D_BUFFER, false, CL_KERNEL_ARG_ACCESS_READ_ONLY, "image1d_buffer_t"},
        {CL_MEM_OBJECT_IMAGE1D_ARRAY, false, CL_KERNEL_ARG_ACCESS_READ_ONLY, "image1d_array_t"},
        {CL_MEM_OBJECT_IMAGE1D, false, CL_KERNEL_ARG_ACCESS_READ_ONLY, "image1d_t"},
        {CL_MEM_OBJECT_IMAGE2D_ARRAY, false, CL_KERNEL_ARG_ACCESS_READ_ONLY, "image2d_array_t"},
        {CL_MEM_OBJECT_IMAGE2D, true, CL_KERNEL_ARG_ACCESS_READ_ONLY, "image2d_depth_t"},
    };
    for (size_t i = 0; i < 8; ++i) {
        INFO("argument " << i);
        CHECK(args[i].kind == KernelArgKind::Image);
        CHECK(args[i].imageType == expect[i].type);
        CHECK(args[i].imageDepth == expect[i].depth);
        CHECK(args[i].accessQualifier == expect[i].access);
        CHECK(args[i].typeName == expect[i].name);
        CHECK(args[i].addressQualifier == CL_KERNEL_ARG_ADDRESS_GLOBAL);
        CHECK(args[i].size == 8);
    }
    CHECK(args[8].kind == KernelArgKind::Sampler);
    CHECK(args[8].typeName == "sampler_t");
    CHECK(args[8].name == "s");
    CHECK(args[9].kind == KernelArgKind::GlobalBuffer);
}

TEST_CASE("unreadable input gives no kernels", "[compiler][metadata]") {
    CHECK(describeKernels("").empty());
    CHECK(describeKernels("garbage that is not bitcode").empty());
    std::string bc = compileOk(kKernels);
    CHECK(describeKernels(bc.substr(0, bc.size() / 3)).empty());
    CHECK(describeKernels(compileOk("void f(void) {}")).empty());
}

TEST_CASE("pipe arguments are global memory objects", "[compiler][metadata][pipes]") {
    TargetSpec t = cpuTarget();
    t.clExtensions.push_back("__opencl_c_pipes");
    CompileResult r =
        compileSource("kernel void p(read_only pipe int in, write_only pipe float4 out,"
                      " global int* g) { }",
                      "-cl-std=CL2.0 -cl-kernel-arg-info", {}, t);
    INFO(r.log);
    REQUIRE(r.status == CL_SUCCESS);
    auto kernels = describeKernels(r.bitcode);
    REQUIRE(kernels.size() == 1);
    const auto& args = kernels[0].args;
    REQUIRE(args.size() == 3);
    for (size_t i = 0; i < 2; ++i) {
        INFO("argument " << i << " type " << args[i].typeName);
        CHECK(args[i].kind == KernelArgKind::GlobalBuffer);
        CHECK(args[i].addressQualifier == CL_KERNEL_ARG_ADDRESS_GLOBAL);
        CHECK((args[i].typeQualifier & CL_KERNEL_ARG_TYPE_PIPE) != 0);
        CHECK(args[i].size == 8);
    }
    CHECK(args[0].accessQualifier == CL_KERNEL_ARG_ACCESS_READ_ONLY);
    CHECK(args[1].accessQualifier == CL_KERNEL_ARG_ACCESS_WRITE_ONLY);
    // No pipe function is called: the packet size is not known.
    CHECK(args[0].pipePacketSize == 0);
    CHECK(args[2].pipePacketSize == 0);
}

TEST_CASE("a pipe argument's packet size comes from the pipe functions called on it",
          "[compiler][metadata][pipes]") {
    TargetSpec t = cpuTarget();
    t.clExtensions.push_back("__opencl_c_pipes");
    // Directly, through a helper function, and at -O0 (the argument spilled to the stack).
    const char* src = R"CLC(
typedef struct { int a; double b; } S;
void put(write_only pipe S p, S v) { write_pipe(p, &v); }
kernel void k(read_only pipe short in, write_only pipe S out, read_only pipe int unused) {
    short v;
    if (read_pipe(in, &v) == 0) {
        S s = {v, 1.0};
        put(out, s);
    }
}
)CLC";
    for (const char* opts : {"-cl-std=CL2.0", "-cl-std=CL2.0 -cl-opt-disable"}) {
        INFO(opts);
        CompileResult r = compileSource(src, opts, {}, t);
        INFO(r.log);
        REQUIRE(r.status == CL_SUCCESS);
        auto kernels = describeKernels(r.bitcode);
        REQUIRE(kernels.size() == 1);
        const auto& args = kernels[0].args;
        REQUIRE(args.size() == 3);
        CHECK(args[0].pipePacketSize == 2);
        CHECK(args[1].pipePacketSize == 16);
        CHECK(args[2].pipePacketSize == 0);
    }
}
