// Tiered compilation of CPU kernels (devices/cpu/tiered_code.hpp): quick code first, the same
// results from the optimised code, the budget's account, the switches that turn it off.
#include "compiler/front_end.hpp"
#include "devices/cpu/jit/cpu_toolchain.hpp"
#include "devices/cpu/jit/jit_memo.hpp"
#include "devices/cpu/jit/tier_up_queue.hpp"
#include "devices/cpu/tiered_code.hpp"
#include "devices/cpu/work_group_abi.hpp"

#include <catch.hpp>

#include <sched.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace duet::rt;

namespace {

/// DUET_CPU_TIER_UP_MS set for one scope (unset: the default), DUET_CPU_TIER_UP_SYNC unset
/// (the background compile thread) unless `sync`, DUET_CPU_TIER_UP_EAGER 0 (nothing compiled
/// ahead of need, whatever the machine's cores) unless `eager`.
struct TierEnv {
    explicit TierEnv(const char* value, bool sync = false, bool eager = false) {
        if (value)
            setenv("DUET_CPU_TIER_UP_MS", value, 1);
        else
            unsetenv("DUET_CPU_TIER_UP_MS");
        if (sync)
            setenv("DUET_CPU_TIER_UP_SYNC", "1", 1);
        else
            unsetenv("DUET_CPU_TIER_UP_SYNC");
        setenv("DUET_CPU_TIER_UP_EAGER", eager ? "1" : "0", 1);
        // One compile thread, whatever the host: the cases check the order jobs run in.
        setenv("DUET_CPU_TIER_UP_THREADS", "1", 1);
        // No optimised code from an earlier run's code cache (as ctest sets it, also by hand).
        setenv("DUET_CACHE", "0", 1);
    }
    ~TierEnv() {
        unsetenv("DUET_CPU_TIER_UP_MS");
        unsetenv("DUET_CPU_TIER_UP_SYNC");
        unsetenv("DUET_CPU_TIER_UP_EAGER");
        unsetenv("DUET_CPU_TIER_UP_THREADS");
    }
};

/// The longest a test waits for a background compile (tens of milliseconds alone; a loaded
/// 2-core machine running the suite may take far longer, and the thread runs at nice 10).
constexpr double kWaitMs = 120000;

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

/// Runs `entry` over `items` work-items in groups of `local` on this thread, `args` its
/// argument slots.
void run1D(void* entry, std::vector<void*>& args, size_t items, size_t local) {
    WorkGroupContext ctx{};
    ctx.workDim = 1;
    ctx.globalSize[0] = items;
    ctx.enqueuedLocalSize[0] = local;
    ctx.numGroups[0] = (items + local - 1) / local;
    for (int d = 1; d < 3; ++d)
        ctx.globalSize[d] = ctx.enqueuedLocalSize[d] = ctx.numGroups[d] = ctx.localSize[d] = 1;
    for (size_t g = 0; g < ctx.numGroups[0]; ++g) {
        ctx.groupId[0] = g;
        ctx.localSize[0] = std::min(local, items - g * local);
        reinterpret_cast<WorkGroupFn>(entry)(args.data(), &ctx);
    }
}

/// Runs `fn` over `in.size()` work-items in groups of 16 on this thread.
std::vector<uint32_t> runHash(void* entry, const std::vector<uint32_t>& in, uint32_t n) {
    std::vector<uint32_t> out(in.size(), 0xdeadbeefu);
    void* outPtr = out.data();
    void* inPtr = const_cast<uint32_t*>(in.data());
    std::vector<void*> args = {&outPtr, &inPtr, &n};
    run1D(entry, args, in.size(), 16);
    return out;
}

/// A program of `count` hash kernels, `prefix`0, `prefix`1, ...: checks it holds them all.
std::shared_ptr<DeviceExecutable> buildHashKernels(const std::string& prefix, size_t count) {
    std::string source;
    for (size_t k = 0; k < count; ++k)
        source += hashKernel(prefix + std::to_string(k));
    auto exe = build(source);
    REQUIRE(exe->kernels().size() == count);
    return exe;
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

/// Runs a kernel's work-group function `entry` as one work-group of one work-item.
void callOneItem(void* entry, std::vector<void*> args) {
    REQUIRE(entry);
    WorkGroupContext ctx{};
    ctx.workDim = 1;
    for (int d = 0; d < 3; ++d) {
        ctx.globalSize[d] = ctx.enqueuedLocalSize[d] = ctx.numGroups[d] = 1;
        ctx.localSize[d] = 1;
    }
    reinterpret_cast<WorkGroupFn>(entry)(args.data(), &ctx);
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

TEST_CASE("tiering: a launch's quick-code time is predicted from earlier launches",
          "[cpu][tiering]") {
    TierEnv env(nullptr);
    auto exe = build(hashKernel("tier_predict"));
    const cpu::TieredCode* tiered = exe->tieredCode();
    REQUIRE(tiered);
    CHECK(tiered->predictQuickMs(0, 100000) == 0.0); // no launch measured yet
    tiered->addQuickTime(0, 2.0, 1000);              // 2 us a work-item
    CHECK(tiered->predictQuickMs(0, 100000) == Approx(200.0));
    CHECK(tiered->predictQuickMs(0, 500) == Approx(1.0));
    tiered->addQuickTime(0, 8.0, 1000); // one slow launch (the machine's load)...
    CHECK(tiered->predictQuickMs(0, 100000) == Approx(200.0)); // ...is not the prediction
    tiered->addQuickTime(0, 1.0, 1000);
    CHECK(tiered->predictQuickMs(0, 100000) == Approx(100.0));
    tiered->addQuickTime(0, 50.0); // work-items unknown: the budget's account only
    CHECK(tiered->predictQuickMs(0, 100000) == Approx(100.0));
    tiered->addQuickTime(0, 0.5, 10); // under a millisecond: mostly the launch's own cost
    CHECK(tiered->predictQuickMs(0, 100000) == Approx(100.0));
    CHECK(tiered->quickBudgetLeftMs(0) < 0.0);
    CHECK(tiered->predictQuickMs(7, 100000) == 0.0); // no such kernel
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

namespace {

/// A copy kernel whose stores can stream (its output is not read), and an in-place update
/// whose stores stay plain, written to their own names (no other test shares their memo
/// entries).
std::string streamKernels(const std::string& tag) {
    return "__kernel void copy_" + tag +
           R"((__global float* out, __global const float* in, float s) {
    size_t i = get_global_id(0);
    out[i] = in[i] * s + 1.0f;
}
__kernel void update_)" +
           tag + R"((__global float* y, float s) {
    size_t i = get_global_id(0);
    y[i] = y[i] * s;
}
)";
}

/// Runs a copy kernel's code over `in` in groups of 64 on this thread, then fences (the
/// streaming variant's stores are weakly ordered).
std::vector<float> runCopy(void* entry, const std::vector<float>& in, float s) {
    std::vector<float> out(in.size(), -1.0f);
    void* outPtr = out.data();
    void* inPtr = const_cast<float*>(in.data());
    std::vector<void*> args = {&outPtr, &inPtr, &s};
    run1D(entry, args, in.size(), 64);
#if defined(__x86_64__)
    __builtin_ia32_sfence();
#endif
    return out;
}

} // namespace

TEST_CASE("tiering: a kernel's streaming launches get a streaming-store variant with its "
          "optimised code, however made",
          "[cpu][tiering]") {
    TierEnv env(nullptr);
    const std::string source = streamKernels("stream_tier");
    std::vector<float> in(1000); // a partial last group
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i) * 0.5f - 7.0f;
    std::vector<float> expected(in.size());
    for (size_t i = 0; i < in.size(); ++i)
        expected[i] = in[i] * 3.0f + 1.0f;

    auto exe = build(source);
    const cpu::TieredCode* tiered = exe->tieredCode();
    REQUIRE(tiered);
    // Quick code has none: a streaming launch runs quick code, with plain stores, until the
    // optimised code is there (no compile of its own on the launch's path).
    void* quick = exe->entry(0);
    REQUIRE(quick);
    tiered->noteStreamingLaunch(0);
    CHECK(exe->streamingEntry(0) == nullptr);
    CHECK(runCopy(quick, in, 3.0f) == expected);
    // Made in the background with the optimised code, as launches ask for it.
    CHECK(tiered->requestOptimised(0) == nullptr);
    void* optimised = tiered->waitOptimised(0, kWaitMs);
    REQUIRE(optimised);
    void* streaming = exe->streamingEntry(0);
    REQUIRE(streaming);
    CHECK(streaming != optimised);
    CHECK(exe->streamingEntry(0) == streaming); // made once
    CHECK(runCopy(streaming, in, 3.0f) == expected);
    CHECK(runCopy(optimised, in, 3.0f) == expected);
    // An in-place update has none (its load brought the line into the cache).
    REQUIRE(exe->entry(1));
    tiered->noteStreamingLaunch(1);
    REQUIRE(tiered->optimiseKernel(1));
    CHECK(exe->streamingEntry(1) == nullptr);
    // The same kernels built again take the optimised code from the JIT memo (the code cache
    // between processes), the variant with it, before any launch.
    auto again = build(source + "// the same kernels\n");
    void* cached = again->entry(0);
    REQUIRE(cached);
    CHECK(again->tieredCode()->optimisedEntry(0) == cached); // no quick code
    void* cachedStreaming = again->streamingEntry(0);
    REQUIRE(cachedStreaming);
    CHECK(cachedStreaming != cached);
    CHECK(runCopy(cachedStreaming, in, 3.0f) == expected);
    // Without a streaming launch before its optimised code, a kernel gets none (its code
    // serves such launches with plain stores); compiled on a launch's path, as
    // DUET_CPU_TIER_UP_SYNC=1 or a long launch does, it gets one like in the background.
    TierEnv sync(nullptr, true);
    auto plain = build(streamKernels("stream_tier_plain"));
    REQUIRE(plain->entry(0));
    REQUIRE(plain->tieredCode()->requestOptimised(0));
    CHECK(plain->streamingEntry(0) == nullptr);
    auto third = build(streamKernels("stream_tier_sync"));
    REQUIRE(third->entry(0));
    third->tieredCode()->noteStreamingLaunch(0);
    REQUIRE(third->tieredCode()->requestOptimised(0));
    void* syncStreaming = third->streamingEntry(0);
    REQUIRE(syncStreaming);
    CHECK(runCopy(syncStreaming, in, 3.0f) == expected);
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
    int out = -1;
    void* outPtr = &out;
    void* quickGet = exe->entry(get);
    void* quickSet = exe->entry(set);
    CHECK(tiered->optimisedEntry(get) == nullptr);
    callOneItem(quickGet, {&outPtr});
    CHECK(out == 3); // the initialiser
    int v = 5;
    callOneItem(quickSet, {&v});
    void* optimisedGet = tiered->optimiseKernel(get);
    REQUIRE(optimisedGet);
    CHECK(optimisedGet != quickGet);
    callOneItem(optimisedGet, {&outPtr});
    CHECK(out == 5); // written by the quick code, read by the optimised code
    void* optimisedSet = tiered->optimiseKernel(set);
    REQUIRE(optimisedSet);
    v = 7;
    callOneItem(optimisedSet, {&v});
    callOneItem(quickGet, {&outPtr});
    CHECK(out == 7);                 // and the other way round
    CHECK(exe->binary().size() > 0); // the binary's machine code: the optimised tier's
}

TEST_CASE("background tier-up: quick code serves while the optimised code compiles, then the "
          "switch",
          "[cpu][tiering][background]") {
    TierEnv env(nullptr);
    auto exe = build(hashKernel("bg_hash"));
    const cpu::TieredCode* tiered = exe->tieredCode();
    REQUIRE(tiered);
    void* quick = exe->entry(0);
    REQUIRE(quick);
    const std::vector<uint32_t> in = inputs(1000);
    const std::vector<uint32_t> expected = hashReference(in, 50);
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    CHECK(tiered->requestOptimised(0) == nullptr); // queued: the caller does not wait
    tiered->requestOptimised(0);                   // queued once
    CHECK(runHash(quick, in, 50) == expected);     // quick code meanwhile
    void* optimised = tiered->waitOptimised(0, kWaitMs);
    REQUIRE(optimised);
    CHECK(optimised != quick);
    CHECK(tiered->optimisedEntry(0) == optimised);
    CHECK(tiered->requestOptimised(0) == optimised);
    CHECK(tiered->optimiseKernel(0) == optimised); // not compiled again
    CHECK(runHash(optimised, in, 50) == expected);
    CHECK(runHash(quick, in, 50) == expected); // launches still on quick code finish there
    const cpu::TierUpCounts after = cpu::tierUpCounts();
    CHECK(after.submitted == before.submitted + 1);
    CHECK(after.installed == before.installed + 1);
    CHECK(after.failed == before.failed);
}

TEST_CASE("background tier-up: DUET_CPU_TIER_UP_SYNC=1 compiles on the caller's thread",
          "[cpu][tiering][background]") {
    TierEnv env(nullptr, true);
    auto exe = build(hashKernel("bg_sync"));
    const cpu::TieredCode* tiered = exe->tieredCode();
    void* quick = exe->entry(0);
    REQUIRE(quick);
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    void* optimised = tiered->requestOptimised(0);
    REQUIRE(optimised);
    CHECK(optimised != quick);
    CHECK(tiered->optimisedEntry(0) == optimised);
    CHECK(cpu::tierUpCounts().submitted == before.submitted); // no background job
    const std::vector<uint32_t> in = inputs(100);
    CHECK(runHash(optimised, in, 30) == hashReference(in, 30));
}

TEST_CASE("background tier-up: many kernels queued at once", "[cpu][tiering][background]") {
    TierEnv env(nullptr);
    constexpr size_t kKernels = 8;
    auto exe = buildHashKernels("bg_many_", kKernels);
    const cpu::TieredCode* tiered = exe->tieredCode();
    const std::vector<uint32_t> in = inputs(300);
    const std::vector<uint32_t> expected = hashReference(in, 40);
    std::vector<void*> quick(kKernels);
    for (size_t k = 0; k < kKernels; ++k) {
        quick[k] = exe->entry(k);
        REQUIRE(quick[k]);
    }
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    for (size_t k = 0; k < kKernels; ++k)
        CHECK(tiered->requestOptimised(k) == nullptr);
    for (size_t k = 0; k < kKernels; ++k) // quick code runs while they compile
        CHECK(runHash(quick[k], in, 40) == expected);
    for (size_t k = 0; k < kKernels; ++k) {
        INFO("kernel " << exe->kernels()[k].name);
        void* optimised = tiered->waitOptimised(k, kWaitMs);
        REQUIRE(optimised);
        CHECK(optimised != quick[k]);
        CHECK(runHash(optimised, in, 40) == expected);
    }
    const cpu::TierUpCounts after = cpu::tierUpCounts();
    CHECK(after.submitted == before.submitted + kKernels);
    CHECK(after.installed == before.installed + kKernels);
}

TEST_CASE("background tier-up: a program released with its compile queued or running",
          "[cpu][tiering][background]") {
    TierEnv env(nullptr);
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    constexpr int kTrials = 6;
    std::vector<std::weak_ptr<DeviceExecutable>> released;
    for (int t = 0; t < kTrials; ++t) {
        auto exe = build(hashKernel("bg_release_" + std::to_string(t)));
        REQUIRE(exe->entry(0));
        REQUIRE(exe->tieredCode()->requestOptimised(0) == nullptr);
        // Odd trials give the thread up to t ms to take the job (released while it compiles,
        // or after); even ones release it at once (queued, or being read).
        if (t % 2)
            exe->tieredCode()->waitOptimised(0, t);
        released.push_back(exe);
        exe.reset(); // clReleaseProgram's last reference: does not wait for the compile
    }
    // The thread runs jobs in order: once this one is done, every job above has run.
    auto fence = build(hashKernel("bg_release_fence"));
    REQUIRE(fence->entry(0));
    fence->tieredCode()->requestOptimised(0);
    REQUIRE(fence->tieredCode()->waitOptimised(0, kWaitMs));
    for (const auto& weak : released)
        CHECK(weak.expired()); // nothing kept a released program alive
    const cpu::TierUpCounts after = cpu::tierUpCounts();
    CHECK(after.submitted == before.submitted + kTrials + 1);
    // Each job either installed its code before the release or was dropped; none failed.
    CHECK(after.installed + after.dropped == before.installed + before.dropped + kTrials + 1);
    CHECK(after.dropped >= before.dropped + 1); // trial 0 at least: released while queued
    CHECK(after.failed == before.failed);
}

TEST_CASE("background tier-up: kernels sharing program-scope variables, compiled as a whole",
          "[cpu][tiering][background]") {
    TierEnv env(nullptr);
    auto exe = build(R"(
global int bg_value = 3;
__kernel void bg_set(int v) { bg_value = v; }
__kernel void bg_get(__global int* out) { out[0] = bg_value; }
)",
                     "-cl-std=CL2.0");
    const cpu::TieredCode* tiered = exe->tieredCode();
    const size_t set = exe->kernels()[0].name == "bg_set" ? 0 : 1;
    const size_t get = 1 - set;
    int out = -1;
    void* outPtr = &out;
    void* quickGet = exe->entry(get);
    void* quickSet = exe->entry(set);
    int v = 5;
    callOneItem(quickSet, {&v});
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    CHECK(tiered->requestOptimised(get) == nullptr);
    CHECK(tiered->requestOptimised(set) == nullptr); // the same whole-program compile
    void* optimisedGet = tiered->waitOptimised(get, kWaitMs);
    REQUIRE(optimisedGet);
    void* optimisedSet = tiered->waitOptimised(set, kWaitMs); // published with the other
    REQUIRE(optimisedSet);
    CHECK(cpu::tierUpCounts().submitted == before.submitted + 1);
    callOneItem(optimisedGet, {&outPtr});
    CHECK(out == 5); // written by the quick code, read by the optimised code
    v = 9;
    callOneItem(optimisedSet, {&v});
    callOneItem(quickGet, {&outPtr});
    CHECK(out == 9);
}

TEST_CASE("background tier-up: the process exits with compiles queued and running",
          "[cpu][tiering][background]") {
    // The helper queues `kernels` compiles, waits `ms`, then leaves main (or calls exit());
    // exit must neither crash nor hang (static destruction with the compile thread running).
    struct Case {
        int kernels, ms;
        const char* how;
    };
    for (const Case c : {Case{8, 0, "return"}, Case{8, 3, "exit"}, Case{4, 15, "return"},
                         Case{2, 40, "exit"}, Case{1, 0, "exit"}}) {
        const std::string cmd = "DUET_CPU_TIER_UP_EAGER=0 " + std::string(DUET_TIER_EXIT_HELPER) +
                                " " + std::to_string(c.kernels) + " " + std::to_string(c.ms) + " " +
                                c.how + " 2>&1";
        INFO(cmd);
        FILE* pipe = popen(cmd.c_str(), "r");
        REQUIRE(pipe);
        std::string output;
        char buf[512];
        for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;)
            output.append(buf, n);
        const int status = pclose(pipe);
        INFO(output);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        CHECK(output.find("tier-exit: " + std::to_string(c.kernels) + " queued") !=
              std::string::npos);
    }
}

namespace {

/// Keeps the background compile thread busy with a job of its own while it lives, so that the
/// jobs queued meanwhile are queued and not started.
class ParkedThread {
public:
    ParkedThread() {
        std::promise<void> parked;
        std::future<void> isParked = parked.get_future();
        std::shared_future<void> go = m_go.get_future().share();
        cpu::submitTierUp([&parked, go] {
            parked.set_value();
            go.wait();
        });
        isParked.wait();
    }
    ~ParkedThread() { release(); }
    void release() {
        if (!m_released) {
            m_go.set_value();
            m_released = true;
        }
    }

private:
    std::promise<void> m_go;
    bool m_released = false;
};

/// Returns once the background thread has run every job queued before this call.
void drainTierUpQueue() {
    std::promise<void> done;
    std::future<void> isDone = done.get_future();
    cpu::submitTierUp([&done] { done.set_value(); });
    isDone.wait();
}

} // namespace

TEST_CASE("background tier-up: a long launch takes a compile queued and not started",
          "[cpu][tiering][background]") {
    TierEnv env(nullptr);
    auto exe = build(hashKernel("bg_take"));
    const cpu::TieredCode* tiered = exe->tieredCode();
    void* quick = exe->entry(0);
    REQUIRE(quick);
    ParkedThread parked;
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    CHECK(tiered->requestOptimised(0) == nullptr); // a short launch: queued behind the parked job
    void* optimised = tiered->requestOptimised(0, true); // a long one: compiles it here
    REQUIRE(optimised);
    CHECK(optimised != quick);
    CHECK(tiered->optimisedEntry(0) == optimised);
    CHECK(tiered->requestOptimised(0, true) == optimised); // once
    const cpu::TierUpCounts taken = cpu::tierUpCounts();
    CHECK(taken.launchPath == before.launchPath + 1);
    CHECK(taken.taken == before.taken + 1);
    CHECK(taken.started == before.started);
    parked.release();
    drainTierUpQueue();
    const cpu::TierUpCounts after = cpu::tierUpCounts();
    CHECK(after.started == before.started); // its queued job did nothing
    CHECK(after.installed == before.installed);
    CHECK(after.failed == before.failed);
    CHECK(after.submitted == before.submitted + 2); // the kernel's job and the drain's
    CHECK(tiered->optimisedEntry(0) == optimised);
    const std::vector<uint32_t> in = inputs(500);
    CHECK(runHash(optimised, in, 20) == hashReference(in, 20));
}

TEST_CASE("background tier-up: a launch never compiles what the thread is compiling",
          "[cpu][tiering][background]") {
    TierEnv env(nullptr);
    auto exe = build(hashKernel("bg_running"));
    const cpu::TieredCode* tiered = exe->tieredCode();
    REQUIRE(exe->entry(0));
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    REQUIRE(tiered->requestOptimised(0) == nullptr);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(kWaitMs);
    while (cpu::tierUpCounts().started == before.started &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    REQUIRE(cpu::tierUpCounts().started == before.started + 1);
    // A long launch now: the compile is the thread's (the launch goes on with quick code), or
    // done already.
    void* here = tiered->requestOptimised(0, true);
    void* optimised = tiered->waitOptimised(0, kWaitMs);
    REQUIRE(optimised);
    CHECK((here == nullptr || here == optimised));
    const cpu::TierUpCounts after = cpu::tierUpCounts();
    CHECK(after.launchPath == before.launchPath);
    CHECK(after.taken == before.taken);
    CHECK(after.installed == before.installed + 1);
}

TEST_CASE("eager tier-up: the optimised code is compiled ahead of need", "[cpu][tiering][eager]") {
    TierEnv env(nullptr, false, true);
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    auto exe = build(hashKernel("eager_ahead"));
    const cpu::TieredCode* tiered = exe->tieredCode();
    void* quick = exe->entry(0); // clCreateKernel: quick code, and the optimised one queued
    REQUIRE(quick);
    CHECK(cpu::tierUpCounts().eager == before.eager + 1);
    // No launch spent any budget, yet the optimised code comes.
    void* optimised = tiered->waitOptimised(0, kWaitMs);
    REQUIRE(optimised);
    CHECK(optimised != quick);
    CHECK(tiered->requestOptimised(0) == optimised); // not compiled again
    const std::vector<uint32_t> in = inputs(700);
    CHECK(runHash(optimised, in, 45) == hashReference(in, 45));
    const cpu::TierUpCounts after = cpu::tierUpCounts();
    CHECK(after.submitted == before.submitted + 1);
    CHECK(after.installed == before.installed + 1);
    CHECK(after.promoted == before.promoted);
    CHECK(after.failed == before.failed);
}

TEST_CASE("eager tier-up: a kernel whose launches wait for it goes before the other eager ones",
          "[cpu][tiering][eager]") {
    TierEnv env(nullptr, false, true);
    constexpr size_t kKernels = 4;
    auto exe = buildHashKernels("eager_order_", kKernels);
    const cpu::TieredCode* tiered = exe->tieredCode();
    auto parked = std::make_unique<ParkedThread>(); // nothing starts meanwhile
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    for (size_t k = 0; k < kKernels; ++k)
        REQUIRE(exe->entry(k)); // each queued in the eager lane, in order
    CHECK(cpu::tierUpCounts().eager == before.eager + kKernels);
    // The last kernel's launches spent the budget: its compile moves to the launch lane.
    CHECK(tiered->requestOptimised(kKernels - 1) == nullptr);
    CHECK(tiered->requestOptimised(kKernels - 1) == nullptr); // moved once
    CHECK(cpu::tierUpCounts().promoted == before.promoted + 1);
    // Behind it in the launch lane, a second parked job: once the thread reaches that one, the
    // promoted compile is done and no eager one has started.
    std::promise<void> second;
    std::future<void> atSecond = second.get_future();
    std::promise<void> go;
    std::shared_future<void> goOn = go.get_future().share();
    cpu::submitTierUp([&second, goOn] {
        second.set_value();
        goOn.wait();
    });
    parked->release();
    atSecond.wait();
    CHECK(tiered->optimisedEntry(kKernels - 1) != nullptr);
    for (size_t k = 0; k + 1 < kKernels; ++k)
        CHECK(tiered->optimisedEntry(k) == nullptr);
    CHECK(cpu::tierUpCounts().started == before.started + 1);
    go.set_value();
    const std::vector<uint32_t> in = inputs(200);
    for (size_t k = 0; k < kKernels; ++k) {
        void* optimised = tiered->waitOptimised(k, kWaitMs);
        REQUIRE(optimised);
        CHECK(runHash(optimised, in, 25) == hashReference(in, 25));
    }
    const cpu::TierUpCounts after = cpu::tierUpCounts();
    CHECK(after.installed == before.installed + kKernels);
    CHECK(after.failed == before.failed);
}

TEST_CASE("eager tier-up: a program released before its compile ahead of need",
          "[cpu][tiering][eager]") {
    TierEnv env(nullptr, false, true);
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    std::weak_ptr<DeviceExecutable> released;
    {
        ParkedThread parked;
        auto exe = build(hashKernel("eager_released"));
        REQUIRE(exe->entry(0));
        released = exe;
    } // released while its job waits in the eager lane, then the thread goes on
    drainTierUpQueue(); // the launch lane: runs before the eager job
    auto fence = build(hashKernel("eager_released_fence"));
    REQUIRE(fence->entry(0));
    REQUIRE(fence->tieredCode()->waitOptimised(0, kWaitMs)); // eager jobs run in order
    CHECK(released.expired());                               // the queued job kept nothing alive
    const cpu::TierUpCounts after = cpu::tierUpCounts();
    CHECK(after.dropped == before.dropped + 1);
    CHECK(after.installed == before.installed + 1); // the fence's only
}

TEST_CASE("eager tier-up: DUET_CPU_TIER_UP_EAGER", "[cpu][tiering][eager]") {
    {
        TierEnv env(nullptr, false, true);
        CHECK(cpu::tierUpEager());
    }
    {
        TierEnv env(nullptr, false, false);
        CHECK_FALSE(cpu::tierUpEager());
        const cpu::TierUpCounts before = cpu::tierUpCounts();
        auto exe = build(hashKernel("eager_off"));
        REQUIRE(exe->entry(0));
        CHECK(cpu::tierUpCounts().submitted == before.submitted); // nothing ahead of need
        CHECK(exe->tieredCode()->optimisedEntry(0) == nullptr);
    }
    { // the default: on with 4 cores or more to run on
        unsetenv("DUET_CPU_TIER_UP_EAGER");
        cpu_set_t set;
        CPU_ZERO(&set);
        REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
        CHECK(cpu::tierUpEager() == (CPU_COUNT(&set) >= 4));
    }
    { // with no compile thread needed: tiering off, or every compile on the launch path
        TierEnv env("0", false, true);
        const cpu::TierUpCounts before = cpu::tierUpCounts();
        auto exe = build(hashKernel("eager_untiered"));
        REQUIRE(exe->entry(0));
        TierEnv sync(nullptr, true, true);
        auto exe2 = build(hashKernel("eager_sync"));
        REQUIRE(exe2->entry(0));
        CHECK(cpu::tierUpCounts().submitted == before.submitted);
    }
}

TEST_CASE("tiering: the expected compile follows the optimised-to-quick ratio measured",
          "[cpu][tiering]") {
    TierEnv env(nullptr);
    const double start = cpu::optimiseToQuickRatio();
    CHECK(start > 1.0);
    for (int i = 0; i < 10; ++i) // a kernel type 40 times slower to optimise than to quick-compile
        cpu::noteOptimiseToQuick(15.0, 600.0);
    const double ratio = cpu::optimiseToQuickRatio();
    CHECK(ratio > 38.0);
    CHECK(ratio < 40.5);
    cpu::noteOptimiseToQuick(0.4, 600.0); // a quick compile from the memo: says nothing
    cpu::noteOptimiseToQuick(15.0, 2.0);  // an optimised one from the memo: neither
    CHECK(cpu::optimiseToQuickRatio() == ratio);
    cpu::noteOptimiseToQuick(15.0, 150.0); // one at 10 moves it halfway (geometrically)
    CHECK(cpu::optimiseToQuickRatio() == Approx(std::sqrt(ratio * 10.0)).epsilon(1e-9));
    // The expected compile is the kernel's quick compile (its own name: no memo hit, so a
    // tenth of a millisecond at least) times the ratio.
    auto exe = build(hashKernel("expected_ratio"));
    REQUIRE(exe->entry(0));
    for (int i = 0; i < 20; ++i)
        cpu::noteOptimiseToQuick(10.0, 10000.0);
    const double r1 = cpu::optimiseToQuickRatio(), e1 = exe->tieredCode()->expectedOptimiseMs(0);
    cpu::noteOptimiseToQuick(10.0, 1000.0);
    const double r2 = cpu::optimiseToQuickRatio(), e2 = exe->tieredCode()->expectedOptimiseMs(0);
    CHECK(r2 < r1);
    REQUIRE(e2 > 30.0); // above the floor
    CHECK(e2 / e1 == Approx(r2 / r1).epsilon(1e-9));
    for (int i = 0; i < 40; ++i) // back near where it was, for the tests after this one
        cpu::noteOptimiseToQuick(10.0, 10.0 * start);
    CHECK(cpu::optimiseToQuickRatio() == Approx(start).epsilon(1e-3));
}

TEST_CASE("eager tier-up: a second compile thread optimises while the first is busy",
          "[cpu][tiering][eager]") {
    TierEnv env(nullptr, false, true);
    auto exe = build(hashKernel("eager_second_thread"));
    const cpu::TieredCode* tiered = exe->tieredCode();
    ParkedThread parked; // the first thread: busy until the end of the case
    setenv("DUET_CPU_TIER_UP_THREADS", "2", 1);
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    REQUIRE(exe->entry(0)); // queued in the eager lane: the second thread takes it
    void* optimised = tiered->waitOptimised(0, kWaitMs);
    REQUIRE(optimised);
    const std::vector<uint32_t> in = inputs(200);
    CHECK(runHash(optimised, in, 25) == hashReference(in, 25));
    CHECK(cpu::tierUpCounts().installed == before.installed + 1);
    CHECK(cpu::tierUpThreads() == 2);
    setenv("DUET_CPU_TIER_UP_THREADS", "1", 1);
    CHECK(cpu::tierUpThreads() == 1);
}

TEST_CASE("code cache: a compile running when its program is released is kept on disk",
          "[cpu][tiering][eager][code-cache]") {
    TierEnv env(nullptr, false, true);
    // An earlier case's compile may still be storing its code (the store follows the install
    // that case waited for): it must not land in this case's folder.
    cpu::waitTierUpIdle();
    char tmpl[] = "/tmp/duet-code-cache-XXXXXX";
    REQUIRE(mkdtemp(tmpl));
    const std::filesystem::path dir(tmpl);
    setenv("DUET_CACHE", "1", 1);
    setenv("DUET_CACHE_DIR", tmpl, 1);
    auto codeEntries = [&dir] {
        size_t n = 0;
        for (const auto& e : std::filesystem::directory_iterator(dir))
            n += e.path().extension() == ".duetcode";
        return n;
    };
    const cpu::TierUpCounts before = cpu::tierUpCounts();
    {
        ParkedThread parked; // the job waits until it is released
        auto exe = build(hashKernel("code_cache_released"));
        REQUIRE(exe->entry(0)); // quick code; the optimised compile queued ahead of need
        parked.release();
        // Released as soon as the compile has started (tens of milliseconds of work).
        while (cpu::tierUpCounts().started == before.started)
            std::this_thread::yield();
    } // the program goes while its compile runs
    drainTierUpQueue(); // one thread: runs once that compile is over
    const cpu::TierUpCounts after = cpu::tierUpCounts();
    // Dropped (the usual case) or installed (the compile won the race): stored either way.
    CHECK(after.dropped + after.installed == before.dropped + before.installed + 1);
    CHECK(codeEntries() == 1);
    setenv("DUET_CACHE", "0", 1);
    unsetenv("DUET_CACHE_DIR");
    std::filesystem::remove_all(dir);
}
