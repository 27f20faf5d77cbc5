// retargetSpirModule: a spir64 module like the SPIR-V translator's, taken to amdgcn and nvptx64
// (address spaces, builtin names as clang mangles them there, conventions, NULL, refusals).
#include "compiler/front_end.hpp"
#include "compiler/spirv_retarget.hpp"

#include <catch.hpp>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

using namespace duet::rt;

namespace {

// What llvm-spirv-15 -r gives (spir_func calls, SPIR address spaces, byval struct arguments).
const char* kSpirModule = R"IR(
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-G1"
target triple = "spir64-unknown-unknown"

%struct.P = type { i32, float }

@table = addrspace(2) constant [2 x i32] [i32 3, i32 4]
@lds = internal addrspace(3) global [4 x i32] undef

define spir_kernel void @k(ptr addrspace(1) %out, ptr addrspace(3) %l, ptr byval(%struct.P) %p) !kernel_arg_addr_space !0 {
  %priv = alloca [4 x i32]
  call void @llvm.lifetime.start.p0(i64 16, ptr %priv)
  %g = addrspacecast ptr %priv to ptr addrspace(4)
  %v = call spir_func <4 x float> @_Z6vload4mPU3AS4Kf(i64 0, ptr addrspace(4) %g)
  %c = call spir_func <4 x float> @_Z6vload4mPU3AS2Kf(i64 0, ptr addrspace(2) @table)
  %q = call spir_func <4 x float> @_Z6vload4mPKf(i64 0, ptr %priv)
  %lg = addrspacecast ptr addrspace(3) %l to ptr addrspace(4)
  %a = call spir_func i32 @_Z25atomic_fetch_add_explicitPU3AS4VU7_Atomicii12memory_order12memory_scope(ptr addrspace(4) %lg, i32 1, i32 0, i32 1)
  %isnull = icmp eq ptr addrspace(3) %l, null
  %z = zext i1 %isnull to i32
  %x = load i32, ptr %p
  %s = add i32 %x, %z
  store i32 %s, ptr addrspace(1) %out
  store i32 %a, ptr addrspace(3) @lds
  call void @llvm.lifetime.end.p0(i64 16, ptr %priv)
  ret void
}

declare spir_func <4 x float> @_Z6vload4mPU3AS4Kf(i64, ptr addrspace(4))
declare spir_func <4 x float> @_Z6vload4mPU3AS2Kf(i64, ptr addrspace(2))
declare spir_func <4 x float> @_Z6vload4mPKf(i64, ptr)
declare spir_func i32 @_Z25atomic_fetch_add_explicitPU3AS4VU7_Atomicii12memory_order12memory_scope(ptr addrspace(4), i32, i32, i32)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture)

!0 = !{i32 1, i32 3, i32 0}
)IR";

std::unique_ptr<llvm::Module> parse(llvm::LLVMContext& c, const char* ir) {
    llvm::SMDiagnostic err;
    std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(ir, err, c);
    std::string why;
    llvm::raw_string_ostream os(why);
    err.print("test", os);
    INFO(os.str());
    REQUIRE(m);
    return m;
}

TargetSpec target(const char* triple, const char* cpu) {
    TargetSpec t;
    t.triple = triple;
    t.cpuName = cpu;
    return t;
}

std::string text(const llvm::Module& m) {
    std::string s;
    llvm::raw_string_ostream os(s);
    m.print(os, nullptr);
    return os.str();
}

} // namespace

TEST_CASE("a spir64 module retargeted to amdgcn is what clang gives amdgcn", "[spirv]") {
    llvm::LLVMContext c;
    std::unique_ptr<llvm::Module> m = parse(c, kSpirModule);
    REQUIRE(retargetSpirModule(m, target("amdgcn-amd-amdhsa", "gfx900")) == "");
    const std::string ir = text(*m);
    INFO(ir);
    CHECK(m->getTargetTriple() == "amdgcn-amd-amdhsa");
    CHECK(m->getDataLayout().getAllocaAddrSpace() == 5);
    // clang-19's names for amdgcn: generic U3AS0, constant U3AS4, private U3AS5.
    CHECK(m->getFunction("_Z6vload4mPU3AS0Kf"));
    CHECK(m->getFunction("_Z6vload4mPU3AS4Kf"));
    CHECK(m->getFunction("_Z6vload4mPU3AS5Kf"));
    CHECK(m->getFunction(
        "_Z25atomic_fetch_add_explicitPU3AS0VU7_Atomicii12memory_order12memory_scope"));
    CHECK(m->getFunction("llvm.lifetime.start.p5"));
    CHECK(m->getNamedGlobal("table")->getAddressSpace() == 4);
    CHECK(m->getNamedGlobal("lds")->getAddressSpace() == 3);
    llvm::Function* k = m->getFunction("k");
    REQUIRE(k);
    CHECK(k->getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL);
    CHECK(k->getFnAttribute("amdgpu-flat-work-group-size").getValueAsString() == "1,256");
    // The byval struct is a by-value argument, copied to a private slot.
    CHECK(k->getArg(2)->getType()->isStructTy());
    CHECK_FALSE(k->getArg(2)->hasByValAttr());
    CHECK(k->getMetadata("kernel_arg_addr_space"));
    for (llvm::Instruction& i : llvm::instructions(*k)) {
        if (auto* a = llvm::dyn_cast<llvm::AllocaInst>(&i))
            CHECK(a->getAddressSpace() == 5);
        if (auto* call = llvm::dyn_cast<llvm::CallInst>(&i))
            CHECK(call->getCallingConv() == llvm::CallingConv::C);
    }
    // __local NULL is the cast of the generic NULL, as clang writes it.
    CHECK(ir.find("icmp eq ptr addrspace(3) %l, addrspacecast (ptr null to ptr addrspace(3))") !=
          std::string::npos);
}

TEST_CASE("a spir64 module retargeted to nvptx64 is what clang gives nvptx64", "[spirv]") {
    llvm::LLVMContext c;
    std::unique_ptr<llvm::Module> m = parse(c, kSpirModule);
    REQUIRE(retargetSpirModule(m, target("nvptx64-nvidia-cuda", "sm_90")) == "");
    const std::string ir = text(*m);
    INFO(ir);
    CHECK(m->getDataLayout().getAllocaAddrSpace() == 0);
    // Private and generic are one space: their overloads are one declaration, no cast remains.
    CHECK(m->getFunction("_Z6vload4mPKf"));
    CHECK_FALSE(m->getFunction("_Z6vload4mPU3AS4Kf") == nullptr); // the constant one
    CHECK(m->getFunction("_Z6vload4mPU3AS4Kf")->getArg(1)->getType()->getPointerAddressSpace() ==
          4);
    CHECK(m->getFunction("_Z25atomic_fetch_add_explicitPVU7_Atomicii12memory_order12memory_scope"));
    CHECK(ir.find("addrspacecast ptr %") == std::string::npos);
    llvm::Function* k = m->getFunction("k");
    REQUIRE(k);
    CHECK(k->getCallingConv() == llvm::CallingConv::SPIR_KERNEL);
    CHECK(k->getArg(2)->hasByValAttr()); // as clang passes structs to NVPTX kernels
    llvm::NamedMDNode* annotations = m->getNamedMetadata("nvvm.annotations");
    REQUIRE(annotations);
    REQUIRE(annotations->getNumOperands() == 1);
    CHECK(ir.find("!{ptr @k, !\"kernel\", i32 1}") != std::string::npos);
}

TEST_CASE("what a GPU target cannot lay out as SPIR did is refused with a reason", "[spirv]") {
    llvm::LLVMContext c;
    // A struct holding a __local pointer: 16 bytes in SPIR, 8 on AMDGPU (32-bit LDS pointers).
    const char* ir = R"IR(
target triple = "spir64-unknown-unknown"
%struct.H = type { ptr addrspace(3), i32 }
define spir_kernel void @k(ptr addrspace(3) %l, ptr addrspace(1) %o) {
  %h = alloca %struct.H
  store ptr addrspace(3) %l, ptr %h
  %v = load i32, ptr addrspace(3) %l
  store i32 %v, ptr addrspace(1) %o
  ret void
}
)IR";
    std::unique_ptr<llvm::Module> m = parse(c, ir);
    llvm::Module* before = m.get();
    const std::string why = retargetSpirModule(m, target("amdgcn-amd-amdhsa", "gfx900"));
    CHECK(why.find("layout differs") != std::string::npos);
    CHECK(m.get() == before); // left as it was
    // NVPTX's pointers are all 64 bits: the same module is fine there.
    std::unique_ptr<llvm::Module> n = parse(c, ir);
    CHECK(retargetSpirModule(n, target("nvptx64-nvidia-cuda", "sm_90")) == "");
    // An address space SPIR does not have, and a triple with no retargeting.
    std::unique_ptr<llvm::Module> odd = parse(c, R"IR(
@g = addrspace(7) global i32 0
)IR");
    CHECK(retargetSpirModule(odd, target("amdgcn-amd-amdhsa", "gfx900")).find("address space 7") !=
          std::string::npos);
    std::unique_ptr<llvm::Module> x = parse(c, kSpirModule);
    CHECK(retargetSpirModule(x, target("x86_64-unknown-linux-gnu", "x86-64")).find("no SPIR-V") !=
          std::string::npos);
}

TEST_CASE("mangled names: address space qualifiers respelled, other grammar left alone",
          "[spirv]") {
    const std::string amdgcn[5] = {"U3AS5", "U3AS1", "U3AS4", "U3AS3", "U3AS0"};
    CHECK(respellAddressSpaces("_Z5fractfPU3AS4f", amdgcn) == "_Z5fractfPU3AS0f");
    CHECK(respellAddressSpaces("_Z6sincosDv4_fPS_", amdgcn) == "_Z6sincosDv4_fPU3AS5S_");
    CHECK(respellAddressSpaces("_Z8vstore16Dv16_hmPU3AS1h", amdgcn) == "_Z8vstore16Dv16_hmPU3AS1h");
    CHECK(respellAddressSpaces("_Z13get_global_idj", amdgcn) == "_Z13get_global_idj");
    CHECK(respellAddressSpaces("_Z11read_imagef14ocl_image2d_ro11ocl_samplerDv2_f", amdgcn) ==
          "_Z11read_imagef14ocl_image2d_ro11ocl_samplerDv2_f");
    // Grammar the parser does not follow (nested names, function types, bad spaces): not renamed.
    CHECK(respellAddressSpaces("_ZN2ns1fEPU3AS4i", amdgcn).empty());
    CHECK(respellAddressSpaces("_Z1fPU3AS9i", amdgcn).empty());
    CHECK(respellAddressSpaces("_Z1fU13block_pointerFvvE", amdgcn).empty());
    CHECK(respellAddressSpaces("_Z", amdgcn).empty());
}
