// The shared CPU builtin library: each build's closure links exactly what the whole library did.
#include "compiler/front_end.hpp"
#include "compiler/llvm_util.hpp"
#include "devices/cpu/jit/builtin_library.hpp"
#include "devices/cpu/jit/cpu_toolchain.hpp"

#include <catch.hpp>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace duet::rt;

namespace {

std::string frontEnd(const std::string& source) {
    CompileResult c = compileSource(source, "-cl-std=CL3.0", {}, withCpuFrontEnd(TargetSpec{}));
    INFO(c.log);
    REQUIRE(c.status == CL_SUCCESS);
    return c.bitcode;
}

/// `bitcode` with the builtin library linked the shared way or the whole-library way, printed.
std::string linked(const std::string& bitcode, bool shared, std::string* error = nullptr) {
    if (shared)
        unsetenv("DUET_CPU_SHARED_BUILTINS");
    else
        setenv("DUET_CPU_SHARED_BUILTINS", "0", 1);
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = parseBitcode(bitcode, ctx);
    REQUIRE(m);
    std::string e = cpu::linkBuiltinLibrary(*m);
    unsetenv("DUET_CPU_SHARED_BUILTINS");
    if (error)
        *error = e;
    else
        REQUIRE(e.empty());
    std::string text;
    llvm::raw_string_ostream os(text);
    m->print(os, nullptr);
    return text;
}

size_t definitions(const std::string& text) {
    size_t n = 0;
    for (size_t at = text.find("\ndefine "); at != std::string::npos;
         at = text.find("\ndefine ", at + 1))
        ++n;
    return n;
}

// Kernels that call into every part of the library: maths (libm, tables), conversions,
// integer, geometric, relational, vload/vstore, atomics (C11 and 1.x), images (the sRGB
// tables are library globals), work-group collectives, async copies, printf.
const char* const kSources[] = {
    R"(__kernel void maths(__global float4* a, __global double* d) {
        size_t i = get_global_id(0);
        a[i] = sin(a[i]) + pow(a[i], 2.5f) + native_exp(a[i]) + fma(a[i], a[i], a[i]);
        d[i] = lgamma(d[i]) + sincos(d[i], &d[i + 1]) + remquo(d[i], 3.0, (int*)0);
    })",
    R"(__kernel void conv(__global float* f, __global int8* v, __global uchar* c) {
        size_t i = get_global_id(0);
        v[i] = convert_int8_sat_rtn(vload8(i, f)) + popcount(v[i]) + mad_hi(v[i], v[i], v[i]);
        c[i] = convert_uchar_sat(f[i]) + (uchar)isnan(f[i]) + (uchar)length(vload3(i, f));
        vstore_half_rtz(f[i], i, (__global half*)c);
    })",
    R"(__kernel void atomics(__global atomic_int* a, __global int* b, __local int* l) {
        atomic_fetch_add_explicit(&a[0], 1, memory_order_acq_rel, memory_scope_device);
        atomic_compare_exchange_strong(&a[1], b, 3);
        atomic_max(b + 2, 5);
        b[3] = work_group_reduce_add(b[get_local_id(0)]) + work_group_scan_inclusive_max(b[4]);
        event_t e = async_work_group_copy(l, b, 16, 0);
        wait_group_events(1, &e);
        printf("%d %v4hlf\n", l[0], (float4)(1.0f));
    })",
    R"(__kernel void img(read_only image2d_t src, write_only image2d_t dst, sampler_t s) {
        int2 p = (int2)(get_global_id(0), get_global_id(1));
        float4 c = read_imagef(src, s, (float2)(p.x, p.y) + 0.5f);
        write_imagef(dst, p, c + read_imagef(src, p) + (float4)(get_image_width(src)));
    })",
    R"(__kernel void none(__global int* a) { a[get_global_id(0)] = 1; })",
};

} // namespace

TEST_CASE("the shared builtin library links what the whole library links", "[cpu][builtins]") {
    for (const char* source : kSources) {
        INFO(source);
        const std::string bitcode = frontEnd(source);
        const std::string whole = linked(bitcode, false);
        const std::string shared = linked(bitcode, true);
        CHECK(definitions(shared) == definitions(whole));
        CHECK(shared == whole);
        // A second time: the closure comes from the cache, and is still the same.
        CHECK(linked(bitcode, true) == whole);
    }
}

TEST_CASE("the shared builtin library leaves what it does not define declared", "[cpu][builtins]") {
    // A prototype the library does not define stays a declaration (finalize reports it as an
    // undefined function); a user's own definition of a builtin's name wins over the library's.
    const std::string bitcode = frontEnd(R"(
        int not_a_builtin(int);
        float __attribute__((overloadable)) cbrt(float x) { return x * 3.0f; }
        __kernel void k(__global float* a, __global int* b) {
            a[0] = cbrt(a[1]) + cos(a[2]);
            b[0] = not_a_builtin(b[1]);
        })");
    const std::string whole = linked(bitcode, false);
    const std::string shared = linked(bitcode, true);
    CHECK(shared == whole);
    CHECK(shared.find("declare") != std::string::npos);
    CHECK(shared.find("not_a_builtin") != std::string::npos);
    CHECK(shared.find("fmul") != std::string::npos); // the user's cbrt, not the library's
}

TEST_CASE("the shared builtin library serves builds on several threads at once",
          "[cpu][builtins]") {
    std::vector<std::string> bitcodes, expected;
    for (const char* source : kSources) {
        bitcodes.push_back(frontEnd(source));
        expected.push_back(linked(bitcodes.back(), false));
    }
    std::vector<std::string> results(4 * bitcodes.size());
    std::vector<std::thread> threads;
    for (size_t t = 0; t < results.size(); ++t)
        threads.emplace_back([&, t] {
            llvm::LLVMContext ctx;
            std::unique_ptr<llvm::Module> m = parseBitcode(bitcodes[t % bitcodes.size()], ctx);
            if (!m || !cpu::linkBuiltinLibrary(*m).empty())
                return;
            llvm::raw_string_ostream os(results[t]);
            m->print(os, nullptr);
        });
    for (std::thread& t : threads)
        t.join();
    for (size_t t = 0; t < results.size(); ++t)
        CHECK(results[t] == expected[t % bitcodes.size()]);
}
