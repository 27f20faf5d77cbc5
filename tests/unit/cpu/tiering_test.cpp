// Tiered compilation of CPU kernels (devices/cpu/tiered_code.hpp): quick code first, the same
// results from the optimised code, the budget's account, the switches that turn it off.
#include "compiler/front_end.hpp"
#include "devices/cpu/jit/cpu_toolchain.hpp"
#include "devices/cpu/jit/jit_memo.hpp"
#include "devices/cpu/tiered_code.hpp"
#include "devices/cpu/work_group_abi.hpp"

#include <catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace duet::rt;

namespace {

/// DUET_CPU_TIER_UP_MS set for one scope (unset: the default).
struct TierEnv {
    explicit TierEnv(const char* value) {
        if (value)
            setenv("DUET_CPU_TIER_UP_MS", value, 1);
        else
            unsetenv("DUET_CPU_TIER_UP_MS");
    }
    ~TierEnv() { unsetenv("DUET_CPU_TIER_UP_MS"); }
};

std::shared_ptr<DeviceExecutable> build(const std::string& source,
                                        const std::string& options = "-cl-std=CL3.0") {
    TargetSpec target = withCpuFrontEnd(TargetSpec{});
    target.clStdVersions.push_back(200); // program-scope variables (as the CPU device lists)
    CompileResult c = compileSource(source, options, {}, target);
    INFO(c.log);
    REQUIRE(c.status == CL_SUCCESS);
    FinalizeResult f = finalizeForCpu(c.bitcode, options, source, target);
    INFO(f.log);
    REQUIRE(f.status == CL_SUCCESS);
    REQUIRE(f.executable);
    return f.executable;
}

/// A kernel whose work-items loop a data-dependent number of times and call builtins (min,
/// rotate, a division), written to its own name so no other test shares its memo entries.
std::string hashKernel(const std::string& name) {
    return "__kernel void " + name + R"((__global uint* out, __global const uint* in, uint n) {
    size_t i = get_global_id(0);
    uint h = in[i];
    for (uint k = 0; k < min(n, h % 37u + 3u); ++k)
        h = rotate(h * 2654435761u + k, 7u) ^ (h / (k + 1u));
    out[i] = h;
}
)";
}

std::vector<uint32_t> hashReference(const std::vector<uint32_t>& in, uint32_t n) {
    std::vector<uint32_t> out(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        uint32_t h = in[i];
        for (uint32_t k = 0; k < std::min(n, h % 37u + 3u); ++k) { // h changes the bound
            const uint32_t x = h * 2654435761u + k;
            h = ((x << 7) | (x >> 25)) ^ (h / (k + 1u));
        }
        out[i] = h;
    }
    return out;
}

/// Runs `fn` over `in.size()` work-items in groups of 16 on this thread.
std::vector<uint32_t> runHash(void* entry, const std::vector<uint32_t>& in, uint32_t n) {
    std::vector<uint32_t> out(in.size(), 0xdeadbeefu);
    void* outPtr = out.data();
    void* inPtr = const_cast<uint32_t*>(in.data());
    std::vector<void*> args = {&outPtr, &inPtr, &n};
    WorkGroupContext ctx{};
    ctx.workDim = 1;
    ctx.globalSize[0] = in.size();
    ctx.enqueuedLocalSize[0] = 16;
    ctx.numGroups[0] = (in.size() + 15) / 16;
    for (int d = 1; d < 3; ++d) {
        ctx.globalSize[d] = 1;
        ctx.enqueuedLocalSize[d] = 1;
        ctx.numGroups[d] = 1;
        ctx.localSize[d] = 1;
    }
    for (size_t g = 0; g < ctx.numGroups[0]; ++g) {
        ctx.groupId[0] = g;
        ctx.localSize[0] = std::min<size_t>(16, in.size() - g * 16);
        reinterpret_cast<WorkGroupFn>(entry)(args.data(), &ctx);
    }
    return out;
}

std::vector<uint32_t> inputs(size_t count) {
    std::vector<uint32_t> in(count);
    uint32_t x = 12345;
    for (uint32_t& v : in) {
        x = x * 1664525u + 1013904223u;
        v = x;
    }
    return in;
}

} // namespace

TEST_CASE("tiering: quick code first, the optimised code gives the same results",
          "[cpu][tiering]") {
    TierEnv env(nullptr);
    auto exe = build(hashKernel("tier_hash"));
    const cpu::TieredCode* tiered = exe->tieredCode();
    REQUIRE(tiered);
    void* quick = exe->entry(0);
    REQUIRE(quick);
    CHECK(exe->entry(0) == quick); // compiled once
    CHECK(tiered->optimisedEntry(0) == nullptr);
    const std::vector<uint32_t> in = inputs(1000); // a partial last group
    const std::vector<uint32_t> expected = hashReference(in, 50);
    CHECK(runHash(quick, in, 50) == expected);

    void* optimised = tiered->optimiseKernel(0);
    REQUIRE(optimised);
    CHECK(optimised != quick);
    CHECK(tiered->optimisedEntry(0) == optimised);
    CHECK(tiered->optimiseKernel(0) == optimised); // once
    CHECK(runHash(optimised, in, 50) == expected);
    CHECK(runHash(quick, in, 50) == expected); // the quick code stays valid (launches in flight)
    CHECK(tiered->optimisedEntry(1) == nullptr);
    CHECK(tiered->optimiseKernel(1) == nullptr); // no such kernel
}

TEST_CASE("tiering: the budget's account", "[cpu][tiering]") {
    SECTION("the default, 20 ms") {
        TierEnv env(nullptr);
        CHECK(cpu::tierUpBudgetMs() == 20.0);
        auto exe = build(hashKernel("tier_budget"));
        const cpu::TieredCode* tiered = exe->tieredCode();
        REQUIRE(tiered);
        CHECK(tiered->quickBudgetLeftMs(0) == 20.0);
        tiered->addQuickTime(0, 15.0);
        CHECK(tiered->quickBudgetLeftMs(0) == 5.0);
        tiered->addQuickTime(0, 6.0);
        CHECK(tiered->quickBudgetLeftMs(0) < 0.0);
        CHECK(tiered->quickBudgetLeftMs(7) <= 0.0); // no such kernel: nothing to wait for
    }
    SECTION("or kTierUpLaunches launches, however short") {
        TierEnv env(nullptr);
        auto exe = build(hashKernel("tier_launches"));
        const cpu::TieredCode* tiered = exe->tieredCode();
        REQUIRE(tiered);
        for (unsigned i = 0; i + 1 < cpu::kTierUpLaunches; ++i)
            tiered->addQuickTime(0, 0.01);
        CHECK(tiered->quickBudgetLeftMs(0) > 19.0);
        tiered->addQuickTime(0, 0.01);
        CHECK(tiered->quickBudgetLeftMs(0) <= 0.0);
    }
    SECTION("DUET_CPU_TIER_UP_MS") {
        {
            TierEnv env("2.5");
            CHECK(cpu::tierUpBudgetMs() == 2.5);
        }
        {
            TierEnv env("-1");
            CHECK(cpu::tierUpBudgetMs() == 0.0);
        }
        {
            TierEnv env("fast"); // not a number: the default
            CHECK(cpu::tierUpBudgetMs() == 20.0);
        }
    }
}

TEST_CASE("tiering off: DUET_CPU_TIER_UP_MS=0 and -cl-opt-disable give one code at once",
          "[cpu][tiering]") {
    const std::vector<uint32_t> in = inputs(64);
    const std::vector<uint32_t> expected = hashReference(in, 9);
    SECTION("DUET_CPU_TIER_UP_MS=0: optimised at the first entry()") {
        TierEnv env("0");
        auto exe = build(hashKernel("tier_off"));
        void* entry = exe->entry(0);
        REQUIRE(entry);
        REQUIRE(exe->tieredCode());
        CHECK(exe->tieredCode()->optimisedEntry(0) == entry);
        CHECK(exe->tieredCode()->optimiseKernel(0) == entry);
        CHECK(runHash(entry, in, 9) == expected);
    }
    SECTION("-cl-opt-disable: its code is quick already") {
        TierEnv env(nullptr);
        auto exe = build(hashKernel("tier_o0"), "-cl-std=CL3.0 -cl-opt-disable");
        void* entry = exe->entry(0);
        REQUIRE(entry);
        CHECK(exe->tieredCode()->optimisedEntry(0) == entry);
        CHECK(runHash(entry, in, 9) == expected);
    }
}

TEST_CASE("tiering: quick code of a kernel compiled before comes from the JIT memo",
          "[cpu][tiering]") {
    TierEnv env(nullptr);
    const std::string source = hashKernel("tier_memo");
    const std::vector<uint32_t> in = inputs(100);
    const std::vector<uint32_t> expected = hashReference(in, 20);
    const size_t before = cpu::jitMemoHits();
    auto first = build(source);
    CHECK(runHash(first->entry(0), in, 20) == expected);
    CHECK(cpu::jitMemoHits() == before);
    auto second = build(source + "// the same kernel\n");
    void* quick = second->entry(0);
    CHECK(cpu::jitMemoHits() == before + 1);
    CHECK(runHash(quick, in, 20) == expected);
    // The optimised code is another memo entry: compiled for the first, taken by the second.
    REQUIRE(first->tieredCode()->optimiseKernel(0));
    CHECK(cpu::jitMemoHits() == before + 1);
    void* optimised = second->tieredCode()->optimiseKernel(0);
    REQUIRE(optimised);
    CHECK(cpu::jitMemoHits() == before + 2);
    CHECK(runHash(optimised, in, 20) == expected);
}

TEST_CASE("tiering: kernels sharing program-scope variables see one copy in both tiers",
          "[cpu][tiering]") {
    TierEnv env(nullptr);
    auto exe = build(R"(
global int shared_value = 3;
__kernel void tier_set(int v) { shared_value = v; }
__kernel void tier_get(__global int* out) { out[0] = shared_value; }
)",
                     "-cl-std=CL2.0");
    const cpu::TieredCode* tiered = exe->tieredCode();
    REQUIRE(tiered);
    const auto& ks = exe->kernels();
    REQUIRE(ks.size() == 2);
    const size_t set = ks[0].name == "tier_set" ? 0 : 1;
    const size_t get = 1 - set;
    auto call = [](void* entry, std::vector<void*> args) {
        REQUIRE(entry);
        WorkGroupContext ctx{};
        ctx.workDim = 1;
        for (int d = 0; d < 3; ++d) {
            ctx.globalSize[d] = ctx.enqueuedLocalSize[d] = ctx.numGroups[d] = 1;
            ctx.localSize[d] = 1;
        }
        reinterpret_cast<WorkGroupFn>(entry)(args.data(), &ctx);
    };
    int out = -1;
    void* outPtr = &out;
    void* quickGet = exe->entry(get);
    void* quickSet = exe->entry(set);
    CHECK(tiered->optimisedEntry(get) == nullptr);
    call(quickGet, {&outPtr});
    CHECK(out == 3); // the initialiser
    int v = 5;
    call(quickSet, {&v});
    void* optimisedGet = tiered->optimiseKernel(get);
    REQUIRE(optimisedGet);
    CHECK(optimisedGet != quickGet);
    call(optimisedGet, {&outPtr});
    CHECK(out == 5); // written by the quick code, read by the optimised code
    void* optimisedSet = tiered->optimiseKernel(set);
    REQUIRE(optimisedSet);
    v = 7;
    call(optimisedSet, {&v});
    call(quickGet, {&outPtr});
    CHECK(out == 7);                 // and the other way round
    CHECK(exe->binary().size() > 0); // the binary's machine code: the optimised tier's
}
