// __global atomics of a launch one thread runs: the code generator's plain paths
// (devices/cpu/jit/local_atomics.hpp, plainUnsharedAtomics) and the masks that pick them.
#include "compiler/front_end.hpp"
#include "devices/cpu/jit/cpu_toolchain.hpp"
#include "devices/cpu/jit/local_atomics.hpp"
#include "devices/cpu/work_group_abi.hpp"

#include <catch.hpp>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace duet::rt;

namespace {

// A work-group function as the work-group pass leaves it: argument i is loaded from the slot
// args[i] points at. Atomics on: argument 0 (device scope), argument 1 through the library's
// system-scope marker, a program-scope variable, a select of arguments 0 and 1 (a seq_cst
// store), and a pointer loaded from argument 2's memory; plus a relaxed store.
const char* kWorkGroupFunction = R"IR(
@prog = addrspace(1) global i32 0

declare ptr addrspace(1) @_Z16__duet_scope_allPU3AS1Vv(ptr addrspace(1)) memory(none)

define void @__duet_wg_k(ptr noalias %args, ptr noalias %ctx) {
entry:
  %s0 = load ptr, ptr %args, align 8
  %a0 = load ptr addrspace(1), ptr %s0, align 1
  %g1 = getelementptr inbounds ptr, ptr %args, i64 1
  %s1 = load ptr, ptr %g1, align 8
  %a1 = load ptr addrspace(1), ptr %s1, align 1
  %g2 = getelementptr inbounds i8, ptr %args, i64 16
  %s2 = load ptr, ptr %g2, align 8
  %a2 = load ptr addrspace(1), ptr %s2, align 1
  %far = load ptr addrspace(1), ptr addrspace(1) %a2, align 8
  %p0 = getelementptr inbounds i8, ptr addrspace(1) %a0, i64 4
  %r0 = atomicrmw add ptr addrspace(1) %p0, i32 1 monotonic, align 4
  %m1 = call ptr addrspace(1) @_Z16__duet_scope_allPU3AS1Vv(ptr addrspace(1) %a1)
  %r1 = atomicrmw xchg ptr addrspace(1) %m1, i32 %r0 seq_cst, align 4
  %c = cmpxchg ptr addrspace(1) @prog, i32 %r1, i32 5 seq_cst seq_cst, align 4
  %cv = extractvalue { i32, i1 } %c, 0
  %odd = trunc i32 %cv to i1
  %either = select i1 %odd, ptr addrspace(1) %a0, ptr addrspace(1) %a1
  store atomic i32 %cv, ptr addrspace(1) %either seq_cst, align 4
  store atomic i32 %cv, ptr addrspace(1) %a0 monotonic, align 4
  %r2 = atomicrmw add ptr addrspace(1) %far, i32 1 monotonic, align 4
  ret void
}
)IR";

std::unique_ptr<llvm::Module> parse(llvm::LLVMContext& ctx) {
    llvm::SMDiagnostic err;
    std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(kWorkGroupFunction, err, ctx);
    std::string text;
    llvm::raw_string_ostream os(text);
    err.print("unshared_atomics_test", os);
    INFO(text);
    REQUIRE(m);
    return m;
}

std::string print(const llvm::Module& m) {
    std::string text;
    llvm::raw_string_ostream os(text);
    m.print(os, nullptr);
    return text;
}

} // namespace

TEST_CASE("plain paths for the atomics whose memory is only arguments and program variables",
          "[cpu][atomics]") {
    ::unsetenv("DUET_CPU_PLAIN_UNSHARED_ATOMICS");
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = parse(ctx);
    // Guarded: the argument 0 add, the marked exchange, the program variable's compare-exchange
    // and the seq_cst store through the select. Not: the relaxed store (a plain move already)
    // and the add through a pointer loaded from memory.
    CHECK(cpu::plainUnsharedAtomics(*m) == 4);
    std::string verify;
    llvm::raw_string_ostream vs(verify);
    INFO(verify);
    REQUIRE_FALSE(llvm::verifyModule(*m, &vs));
    const std::string ir = print(*m);
    INFO(ir);
    // The marker is gone: nothing for the JIT to resolve.
    CHECK(ir.find("__duet_scope_all") == std::string::npos);
    // Each guard reads the mask of its scope: device scope the device-only mask, the marked
    // exchange the unshared one; bit i for argument i, bit 63 for program variables.
    const std::string device = "getelementptr inbounds i8, ptr %ctx, i64 " +
                               std::to_string(offsetof(WorkGroupContext, deviceOnlyMemory));
    const std::string unshared = "getelementptr inbounds i8, ptr %ctx, i64 " +
                                 std::to_string(offsetof(WorkGroupContext, unsharedMemory));
    CHECK(ir.find(device) != std::string::npos);
    CHECK(ir.find(unshared) != std::string::npos);
    CHECK(ir.find("and i64 %device_only_memory, 1\n") != std::string::npos);
    CHECK(ir.find("and i64 %unshared_memory, 2\n") != std::string::npos);
    CHECK(ir.find("and i64 %device_only_memory, -9223372036854775808\n") != std::string::npos);
    CHECK(ir.find("and i64 %device_only_memory, 3\n") != std::string::npos);
    // Each guarded atomic keeps its locked form on the other path; the two unguarded ones stay.
    size_t rmws = 0;
    for (size_t at = ir.find("atomicrmw"); at != std::string::npos;
         at = ir.find("atomicrmw", at + 1))
        ++rmws;
    CHECK(rmws == 3);
    CHECK(ir.find("cmpxchg ptr addrspace(1) @prog") != std::string::npos);
    CHECK(ir.find("store atomic i32 %cv, ptr addrspace(1) %a0 monotonic") != std::string::npos);
}

TEST_CASE("DUET_CPU_PLAIN_UNSHARED_ATOMICS=0 guards nothing and still removes the markers",
          "[cpu][atomics]") {
    ::setenv("DUET_CPU_PLAIN_UNSHARED_ATOMICS", "0", 1);
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = parse(ctx);
    CHECK(cpu::plainUnsharedAtomics(*m) == 0);
    ::unsetenv("DUET_CPU_PLAIN_UNSHARED_ATOMICS");
    REQUIRE_FALSE(llvm::verifyModule(*m, &llvm::errs()));
    const std::string ir = print(*m);
    CHECK(ir.find("__duet_scope_all") == std::string::npos);
    CHECK(ir.find("unshared_memory") == std::string::npos);
}

namespace {

// The optimised tier's shape: the body in an internal function the work-group function calls,
// buffer pointers and the context passed as parameters (argument promotion). `@other` calls
// `@shared` too, so its parameter could be anything.
const char* kPromoted = R"IR(
define internal void @__duet_wg_k.simd(ptr addrspace(1) %p, i32 %n, ptr %ctx) {
  %r = atomicrmw add ptr addrspace(1) %p, i32 %n monotonic, align 4
  ret void
}
define internal void @shared(ptr addrspace(1) %p, ptr %ctx) {
  %r = atomicrmw add ptr addrspace(1) %p, i32 1 monotonic, align 4
  ret void
}
define void @other(ptr addrspace(1) %q, ptr %ctx) {
  call void @shared(ptr addrspace(1) %q, ptr %ctx)
  ret void
}
define void @__duet_wg_k(ptr noalias %args, ptr noalias %ctx) {
entry:
  %s0 = load ptr, ptr %args, align 8
  %a0 = load ptr addrspace(1), ptr %s0, align 1
  call void @__duet_wg_k.simd(ptr addrspace(1) %a0, i32 1, ptr %ctx)
  call void @shared(ptr addrspace(1) %a0, ptr %ctx)
  ret void
}
)IR";

} // namespace

TEST_CASE("atomics in an internal function the work-group function passes a buffer to",
          "[cpu][atomics]") {
    ::unsetenv("DUET_CPU_PLAIN_UNSHARED_ATOMICS");
    llvm::LLVMContext ctx;
    llvm::SMDiagnostic err;
    std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(kPromoted, err, ctx);
    REQUIRE(m);
    CHECK(cpu::plainUnsharedAtomics(*m) == 1);
    REQUIRE_FALSE(llvm::verifyModule(*m, &llvm::errs()));
    const std::string simd = [&] {
        std::string text;
        llvm::raw_string_ostream os(text);
        m->getFunction("__duet_wg_k.simd")->print(os);
        return text;
    }();
    INFO(simd);
    // The guard reads the context the function was given.
    CHECK(simd.find("getelementptr inbounds i8, ptr %ctx, i64 " +
                    std::to_string(offsetof(WorkGroupContext, deviceOnlyMemory))) !=
          std::string::npos);
    CHECK(simd.find("and i64 %device_only_memory, 1\n") != std::string::npos);
}

namespace {

const char* kCounters = R"CL(
global atomic_int prog = ATOMIC_VAR_INIT(0);
kernel void count(volatile global atomic_int* dev, volatile global atomic_int* sys,
                  volatile global int* old, global int* tickets, int iters) {
    int id = (int)get_global_id(0);
    for (int k = 0; k < iters; ++k) {
        atomic_fetch_add_explicit(&dev[0], 1, memory_order_relaxed, memory_scope_device);
        atomic_fetch_add_explicit(&sys[0], 1, memory_order_acq_rel, memory_scope_all_svm_devices);
        atomic_inc(&old[0]);
        int e = atomic_load_explicit(&dev[1], memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(&dev[1], &e, e + 2, memory_order_relaxed,
                                                      memory_order_relaxed, memory_scope_device))
            ;
        atomic_fetch_add(&prog, 1);
        atomic_store(&sys[1], id);
    }
    tickets[id] = atomic_exchange_explicit(&dev[2], id, memory_order_acq_rel,
                                           memory_scope_work_group);
}
kernel void take(global int* out) { out[0] = atomic_exchange(&prog, 0); }
)CL";

} // namespace

TEST_CASE("counters are exact on the plain paths and on the locked ones", "[cpu][atomics]") {
    const std::string options = "-cl-std=CL3.0";
    TargetSpec target = withCpuFrontEnd(TargetSpec{});
    target.clExtensions = {"__opencl_c_program_scope_global_variables",
                           "__opencl_c_atomic_order_acq_rel",
                           "__opencl_c_atomic_order_seq_cst",
                           "__opencl_c_atomic_scope_device",
                           "__opencl_c_atomic_scope_all_devices",
                           "__opencl_c_generic_address_space",
                           "__opencl_c_int64"};
    CompileResult c = compileSource(kCounters, options, {}, target);
    INFO(c.log);
    REQUIRE(c.status == CL_SUCCESS);
    FinalizeResult fin = finalizeForCpu(c.bitcode, options, kCounters, target);
    INFO(fin.log);
    REQUIRE(fin.status == CL_SUCCESS);
    WorkGroupFn count = nullptr, take = nullptr;
    for (size_t i = 0; i < fin.executable->kernels().size(); ++i) {
        auto fn = reinterpret_cast<WorkGroupFn>(fin.executable->entry(i));
        (fin.executable->kernels()[i].name == "count" ? count : take) = fn;
    }
    REQUIRE(count);
    REQUIRE(take);
    constexpr int items = 256, iters = 50;
    // Masks all set (every atomic on its plain path), then none (every one locked).
    for (uint64_t mask : {~uint64_t(0), uint64_t(0)}) {
        INFO("mask " << mask);
        std::vector<int> dev{0, 0, -1}, sys{0, -1}, old{0}, tickets(items, -2);
        int iterations = iters;
        void* ptrs[4] = {dev.data(), sys.data(), old.data(), tickets.data()};
        void* args[5] = {&ptrs[0], &ptrs[1], &ptrs[2], &ptrs[3], &iterations};
        WorkGroupContext ctx{};
        ctx.workDim = 1;
        ctx.subGroupSize = 1;
        for (int d = 0; d < 3; ++d) {
            ctx.globalSize[d] = ctx.enqueuedLocalSize[d] = ctx.localSize[d] = 1;
            ctx.numGroups[d] = 1;
        }
        ctx.globalSize[0] = ctx.enqueuedLocalSize[0] = ctx.localSize[0] = items;
        ctx.unsharedMemory = ctx.deviceOnlyMemory = mask;
        count(args, &ctx);
        CHECK(dev[0] == items * iters);
        CHECK(dev[1] == 2 * items * iters);
        CHECK(sys[0] == items * iters);
        CHECK(old[0] == items * iters);
        CHECK((sys[1] >= 0 && sys[1] < items));
        // The exchanges handed each id on exactly once: -1 and every id but the last one held.
        std::vector<int> seen(items + 1, 0);
        for (int t : tickets)
            if (t >= -1 && t < items)
                ++seen[size_t(t + 1)];
        ++seen[size_t(dev[2] + 1)];
        CHECK(std::count(seen.begin(), seen.end(), 1) == items + 1);
        int total = -1;
        void* outPtr = &total;
        void* takeArgs[1] = {&outPtr};
        ctx.globalSize[0] = ctx.enqueuedLocalSize[0] = ctx.localSize[0] = 1;
        take(takeArgs, &ctx);
        CHECK(total == items * iters);
    }
}
