// linkBitcode: cross-object calls, undefined user functions, duplicates, libraries, options.
#include "front_util.hpp"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <llvm/Support/MemoryBuffer.h>

using namespace duet::rt;
using namespace duet::rt::test;

namespace {

const char* kHelperDef = "float helper(float x) { return x * 3.0f; }\n";
const char* kKernelUsingHelper = "float helper(float x);\n"
                                 "kernel void k(global float* a) { a[0] = helper(a[0]); }\n";

std::unique_ptr<llvm::Module> parse(const std::string& bc, llvm::LLVMContext& ctx) {
    auto m = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bc, "t"), ctx);
    REQUIRE(bool(m));
    return std::move(*m);
}

LinkResult link(std::vector<std::string> objects, const char* options = "", bool library = false) {
    return linkBitcode(objects, options, library);
}

} // namespace

TEST_CASE("linking two objects resolves a cross-object call", "[compiler][link]") {
    std::string a = compileOk(kHelperDef);
    std::string b = compileOk(kKernelUsingHelper);
    LinkResult r = link({a, b});
    INFO(r.log);
    REQUIRE(r.status == CL_SUCCESS);
    llvm::LLVMContext ctx;
    auto m = parse(r.bitcode, ctx);
    llvm::Function* helper = m->getFunction("helper");
    REQUIRE(helper);
    CHECK_FALSE(helper->isDeclaration());
    // The kernel's call now targets the definition from the other object.
    bool callsHelper = false;
    for (llvm::Instruction& i : m->getFunction("k")->getEntryBlock())
        if (auto* call = llvm::dyn_cast<llvm::CallInst>(&i))
            callsHelper |= call->getCalledFunction() == helper;
    CHECK(callsHelper);
    auto kernels = describeKernels(r.bitcode);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].name == "k");
}

TEST_CASE("a declared but undefined user function fails the link", "[compiler][link]") {
    std::string b = compileOk(kKernelUsingHelper);
    LinkResult r = link({b});
    CHECK(r.status == CL_LINK_PROGRAM_FAILURE);
    CHECK(r.bitcode.empty());
    INFO(r.log);
    CHECK(r.log.find("undefined function 'helper'") != std::string::npos);

    // Overloadable user functions are mangled; the log shows the readable name.
    std::string c = compileOk("__attribute__((overloadable)) float g(float);\n"
                              "kernel void k(global float* a) { a[0] = g(a[0]); }\n");
    LinkResult rc = link({c});
    CHECK(rc.status == CL_LINK_PROGRAM_FAILURE);
    INFO(rc.log);
    CHECK(rc.log.find("'g(float)' (_Z1gf)") != std::string::npos);
}

TEST_CASE("calls to builtins are not unresolved user functions", "[compiler][link]") {
    std::string o = compileOk("kernel void k(global float* a) {\n"
                              "  size_t i = get_global_id(0);\n"
                              "  a[i] = sqrt(a[i]) + native_sin(a[i]) + mad(a[i], a[i], 1.0f);\n"
                              "  barrier(CLK_GLOBAL_MEM_FENCE);\n"
                              "}\n");
    LinkResult r = link({o});
    INFO(r.log);
    CHECK(r.status == CL_SUCCESS);
}

TEST_CASE("duplicate definitions fail the link with a readable log", "[compiler][link]") {
    std::string a = compileOk(kHelperDef);
    std::string b = compileOk(kKernelUsingHelper);
    LinkResult r = link({a, b, a});
    CHECK(r.status == CL_LINK_PROGRAM_FAILURE);
    INFO(r.log);
    CHECK(r.log.find("helper") != std::string::npos);
    CHECK(r.log.find("multiply defined") != std::string::npos);

    std::string k1 = compileOk("kernel void same(global int* a) { a[0] = 1; }");
    std::string k2 = compileOk("kernel void same(global int* a) { a[0] = 2; }");
    CHECK(link({k1, k2}).status == CL_LINK_PROGRAM_FAILURE);
}

TEST_CASE("libraries may leave user functions open until the final link",
          "[compiler][link][library]") {
    std::string a = compileOk(kHelperDef);
    std::string b = compileOk(kKernelUsingHelper);
    LinkResult lib = link({b}, "", /*library=*/true);
    INFO(lib.log);
    REQUIRE(lib.status == CL_SUCCESS);
    LinkResult libByOption = link({b}, "-create-library");
    REQUIRE(libByOption.status == CL_SUCCESS);

    // The library still knows helper is a user function: linking it alone fails...
    LinkResult alone = link({lib.bitcode});
    CHECK(alone.status == CL_LINK_PROGRAM_FAILURE);
    CHECK(alone.log.find("helper") != std::string::npos);
    // ...and with the object that defines it, succeeds.
    LinkResult full = link({lib.bitcode, a});
    INFO(full.log);
    CHECK(full.status == CL_SUCCESS);
    CHECK(describeKernels(full.bitcode).size() == 1);
}

TEST_CASE("linker options", "[compiler][link][options]") {
    std::string o = compileOk("kernel void k(global float* a) { a[0] = a[1] * a[2] + a[3]; }");
    const char* good[] = {"",
                          "-cl-denorms-are-zero",
                          "-cl-no-signed-zeros",
                          "-cl-unsafe-math-optimizations",
                          "-cl-finite-math-only",
                          "-cl-fast-relaxed-math",
                          "-cl-no-subgroup-ifp",
                          "-create-library -enable-link-options"};
    for (const char* opt : good) {
        LinkResult r = link({o}, opt);
        INFO(opt << ": " << r.log);
        CHECK(r.status == CL_SUCCESS);
    }
    const char* bad[] = {"-cl-bogus", "-DX=1",         "-cl-mad-enable",
                         "-I.",       "-cl-std=CL1.2", "-enable-link-options"};
    for (const char* opt : bad) {
        LinkResult r = link({o}, opt);
        INFO(opt << ": " << r.log);
        CHECK(r.status == CL_INVALID_LINKER_OPTIONS);
        CHECK_FALSE(r.log.empty());
    }
    CHECK(link({o}, "-cl-bogus").log.find("-cl-bogus") != std::string::npos);

    // Link-time math options take effect on the executable's code.
    LinkResult fast = link({o}, "-cl-fast-relaxed-math");
    llvm::LLVMContext ctx;
    auto m = parse(fast.bitcode, ctx);
    llvm::Function* k = m->getFunction("k");
    CHECK(k->getFnAttribute("unsafe-fp-math").getValueAsString() == "true");
    bool sawFast = false;
    for (llvm::Instruction& i : k->getEntryBlock())
        if (llvm::isa<llvm::FPMathOperator>(i))
            sawFast |= i.getFastMathFlags().noNaNs() && i.getFastMathFlags().allowReassoc();
    CHECK(sawFast);
}

TEST_CASE("garbage input fails the link without crashing", "[compiler][link]") {
    CHECK(link({}).status == CL_LINK_PROGRAM_FAILURE);
    CHECK(link({std::string("not bitcode at all")}).status == CL_LINK_PROGRAM_FAILURE);
    std::string o = compileOk("kernel void k(){}");
    std::string truncated = o.substr(0, o.size() / 2);
    LinkResult r = link({o, truncated});
    CHECK(r.status == CL_LINK_PROGRAM_FAILURE);
    CHECK(r.log.find("input 1") != std::string::npos);
}
