// Tiered compilation through the API: a kernel's launches run quick code until they have spent
// its budget (DUET_CPU_TIER_UP_MS, set here around each build), then the optimised code, also
// from the middle of a launch; results are the same either way. The optimised code is compiled
// by the background compile thread while launches go on with quick code, or on the launch path
// under DUET_CPU_TIER_UP_SYNC=1 (set around the builds of the tests that count launches).
// DUET_LOG=1 (this test's ctest entry) says when a kernel is optimised; the test reads it from
// its own stderr.
#include "support/cl_test.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using duet::test::buildLog;
using duet::test::errorName;

/// Everything written to stderr (fd 2) while it lives, for `text()`.
class StderrCapture {
public:
    StderrCapture() {
        std::fflush(stderr);
        m_file = std::tmpfile();
        REQUIRE(m_file);
        m_saved = dup(2);
        REQUIRE(dup2(fileno(m_file), 2) == 2);
    }
    ~StderrCapture() { restore(); }
    StderrCapture(const StderrCapture&) = delete;
    std::string text() {
        restore();
        std::string all;
        std::rewind(m_file);
        char buf[4096];
        for (size_t n; (n = std::fread(buf, 1, sizeof buf, m_file)) > 0;)
            all.append(buf, n);
        return all;
    }

private:
    void restore() {
        if (m_saved < 0)
            return;
        std::fflush(stderr);
        dup2(m_saved, 2);
        close(m_saved);
        m_saved = -1;
    }
    std::FILE* m_file = nullptr;
    int m_saved = -1;
};

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

/// Each work-item loops `n` times: enough for a launch of many groups to outlast a 1 ms budget
/// in quick code.
const char* kSource = R"(
__kernel void churn(__global uint* out, uint n) {
    uint h = (uint)get_global_id(0);
    if (n == 1000000000u + SALT) // never (n is small): only makes each salt's code its own
        h = 0;
    for (uint k = 0; k < n; ++k)
        h = (h ^ (h >> 13)) * 2654435761u + k;
    out[get_global_id(0)] = h;
}
)";

uint32_t churnReference(uint32_t i, uint32_t n) {
    uint32_t h = i;
    for (uint32_t k = 0; k < n; ++k)
        h = (h ^ (h >> 13)) * 2654435761u + k;
    return h;
}

struct Cpu {
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    Cpu() {
        REQUIRE(clGetDeviceIDs(duet::test::platformUnderTest(), CL_DEVICE_TYPE_CPU, 1, &device,
                               nullptr) == CL_SUCCESS);
        cl_int e = CL_SUCCESS;
        context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &e);
        REQUIRE(e == CL_SUCCESS);
        queue = clCreateCommandQueue(context, device, 0, &e);
        REQUIRE(e == CL_SUCCESS);
    }
    ~Cpu() {
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
    Cpu(const Cpu&) = delete;

    /// Builds kSource under DUET_CPU_TIER_UP_MS=`budget` and DUET_CPU_TIER_UP_SYNC=1 if `sync`
    /// (a comment makes each build's source its own), creates `churn`. `salt` (not 0) makes
    /// the kernel's code its own: no JIT memo entry from an earlier build of it.
    cl_kernel kernel(const char* budget, cl_program& program, bool sync = true, unsigned salt = 0) {
        setenv("DUET_CPU_TIER_UP_MS", budget, 1);
        if (sync)
            setenv("DUET_CPU_TIER_UP_SYNC", "1", 1);
        const std::string source = std::string("// budget ") + budget + (sync ? " sync" : "") +
                                   "\n#define SALT " + std::to_string(salt) + "u\n" + kSource;
        const char* text = source.c_str();
        cl_int e = CL_SUCCESS;
        program = clCreateProgramWithSource(context, 1, &text, nullptr, &e);
        REQUIRE(e == CL_SUCCESS);
        e = clBuildProgram(program, 1, &device, "", nullptr, nullptr);
        unsetenv("DUET_CPU_TIER_UP_MS");
        unsetenv("DUET_CPU_TIER_UP_SYNC");
        INFO(buildLog(program, device));
        REQUIRE(e == CL_SUCCESS);
        cl_kernel k = clCreateKernel(program, "churn", &e);
        REQUIRE(e == CL_SUCCESS);
        return k;
    }
    /// One launch of `items` work-items in groups of 16; checks every result.
    void run(cl_kernel k, size_t items, uint32_t n) {
        cl_int e = CL_SUCCESS;
        cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, items * 4, nullptr, &e);
        REQUIRE(e == CL_SUCCESS);
        REQUIRE(clSetKernelArg(k, 0, sizeof out, &out) == CL_SUCCESS);
        REQUIRE(clSetKernelArg(k, 1, sizeof n, &n) == CL_SUCCESS);
        const size_t local = 16;
        e = clEnqueueNDRangeKernel(queue, k, 1, nullptr, &items, &local, 0, nullptr, nullptr);
        INFO(errorName(e));
        REQUIRE(e == CL_SUCCESS);
        std::vector<uint32_t> got(items);
        REQUIRE(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, items * 4, got.data(), 0, nullptr,
                                    nullptr) == CL_SUCCESS);
        clReleaseMemObject(out);
        for (size_t i = 0; i < items; ++i) {
            INFO("work-item " << i);
            REQUIRE(got[i] == churnReference(uint32_t(i), n));
        }
    }
};

} // namespace

/// What DUET_LOG says over `launches` short launches of `churn` under a budget (a minute) that
/// their time never reaches.
static std::string shortLaunchesLog(int launches) {
    Cpu cpu;
    StderrCapture log;
    cl_program p = nullptr;
    cl_kernel k = cpu.kernel("60000", p);
    for (int i = 0; i < launches; ++i)
        cpu.run(k, 64, 10);
    clReleaseKernel(k);
    clReleaseProgram(p);
    return log.text();
}

TEST_CASE("tiering: launches under the budget keep the quick code", "[cpu][tiering]") {
    const std::string text = shortLaunchesLog(3);
    INFO(text);
    CHECK(count(text, "kernel churn: quick code") == 1);
    CHECK(count(text, "kernel churn: optimised") == 0);
}

TEST_CASE("tiering: a kernel launched again and again is optimised however short its launches",
          "[cpu][tiering]") {
    const std::string text = shortLaunchesLog(24); // more than kTierUpLaunches (16)
    INFO(text);
    CHECK(count(text, "kernel churn: quick code") == 1);
    CHECK(count(text, "kernel churn: optimised in") == 1); // DUET_CPU_TIER_UP_SYNC: at the 17th
}

TEST_CASE("tiering: a long launch is optimised while it runs, later launches start optimised",
          "[cpu][tiering]") {
    Cpu cpu;
    StderrCapture log;
    cl_program p = nullptr;
    cl_kernel k = cpu.kernel("1", p, false, 10); // 1 ms; the background compile thread
    // 4,096 groups of 16 work-items of 4,000 iterations: far more than 1 ms of quick code, and
    // what is left of it when the budget is spent far longer than the compile: one participant
    // compiles while the others go on, no background compile.
    cpu.run(k, 65536, 4000);
    const std::string first = log.text();
    INFO(first);
    CHECK(count(first, "kernel churn: quick code") == 1);
    CHECK(count(first, "kernel churn: optimised on the launch path") == 1);
    CHECK(count(first, "kernel churn: optimised in") == 1);
    CHECK(count(first, "background compile") == 0);
    CHECK(count(first, "kernel churn: launches switch to the optimised code (between two") == 1);
    StderrCapture later;
    cpu.run(k, 1024, 7);
    clReleaseKernel(k);
    clReleaseProgram(p);
    const std::string text = later.text();
    INFO(first << text);
    CHECK(count(text, "kernel churn:") == 0); // nothing compiled again
}

TEST_CASE("tiering: a long launch after a short one is predicted long and optimised at its start",
          "[cpu][tiering]") {
    Cpu cpu;
    cl_program p = nullptr;
    cl_kernel k = cpu.kernel("250", p, false, 11); // 250 ms; the background compile thread
    StderrCapture shortLog;
    // A few ms (tens under TSan), far below the budget: quick code, nothing asked for.
    cpu.run(k, 256, 8000);
    const std::string first = shortLog.text();
    INFO(first);
    CHECK(count(first, "kernel churn: optimised") == 0);
    // 256 times the work-items at the same cost each: predicted at its start to run longer
    // than the budget and the compile, so its first participant compiles at once (not after
    // the budget's 250 ms, and not on the background thread).
    StderrCapture log;
    cpu.run(k, 65536, 8000);
    const std::string text = log.text();
    INFO(first << text);
    CHECK(count(text, "kernel churn: optimised on the launch path: the launch's") == 1);
    CHECK(count(text, "(predicted) outlast the compile") == 1);
    CHECK(count(text, "kernel churn: optimised in") == 1);
    CHECK(count(text, "background compile") == 0);
    CHECK(count(text, "kernel churn: launches switch to the optimised code (between two") == 1);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("tiering off: DUET_CPU_TIER_UP_MS=0 optimises at clCreateKernel", "[cpu][tiering]") {
    Cpu cpu;
    StderrCapture log;
    cl_program p = nullptr;
    cl_kernel k = cpu.kernel("0", p);
    const std::string atCreate = log.text();
    CHECK(count(atCreate, "kernel churn: optimised") == 1);
    CHECK(count(atCreate, "quick code") == 0);
    StderrCapture later;
    cpu.run(k, 4096, 100);
    clReleaseKernel(k);
    clReleaseProgram(p);
    const std::string text = later.text();
    INFO(atCreate << text);
    CHECK(count(text, "kernel churn:") == 0);
}

TEST_CASE("background tier-up: launches go on with quick code, then switch to the optimised code",
          "[cpu][tiering][background]") {
    Cpu cpu;
    StderrCapture log;
    cl_program p = nullptr;
    cl_kernel k = cpu.kernel("60000", p, false, 1);
    // kTierUpLaunches (16) short launches spend the budget; the 17th asks for the optimised
    // code and does not wait for it. Launches go on (results checked each time) until one
    // switched: bounded by a minute of launches, not a sleep.
    for (int i = 0; i < 17; ++i)
        cpu.run(k, 256, 50);
    std::string text;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    int launches = 17;
    for (; std::chrono::steady_clock::now() < deadline; ++launches) {
        StderrCapture round; // what this launch's log says (between rounds: into `log`)
        cpu.run(k, 256, 50);
        const std::string said = round.text();
        text += said;
        if (said.find("launches switch to the optimised code") != std::string::npos)
            break;
    }
    clReleaseKernel(k);
    clReleaseProgram(p);
    const std::string first = log.text();
    INFO(first << text << launches << " launches");
    CHECK(count(first + text, "kernel churn: quick code") == 1);
    CHECK(count(first + text, "kernel churn: optimised code queued for the background") == 1);
    CHECK(count(first + text, "kernel churn: background compile started") == 1);
    CHECK(count(first + text, "kernel churn: background compile finished") == 1);
    CHECK(count(first + text, "kernel churn: launches switch to the optimised code") == 1);
    // Under DUET_CPU_STREAMING_STORES=1 (cpu_tiering_launch_streaming_test) every launch is a
    // streaming one: the same tiers, quick code first, and the optimised code made with its
    // streaming-store variant; without it, no variant is made.
    const char* streaming = std::getenv("DUET_CPU_STREAMING_STORES");
    CHECK(count(first + text, "kernel churn: with its streaming-store variant") ==
          (streaming && std::string(streaming) == "1" ? 1u : 0u));
}

TEST_CASE("background tier-up: kernel and program released with the compile queued",
          "[cpu][tiering][background]") {
    Cpu cpu;
    for (int round = 0; round < 3; ++round) {
        cl_program p = nullptr;
        cl_kernel k = cpu.kernel("60000", p, false, 2 + round);
        for (int i = 0; i < 17; ++i) // the 17th queues the optimised compile
            cpu.run(k, 64, 20);
        // Released at once: no launch or release waits for the compile, whose result is
        // dropped; the next round's program builds and runs meanwhile.
        const auto start = std::chrono::steady_clock::now();
        REQUIRE(clReleaseKernel(k) == CL_SUCCESS);
        REQUIRE(clReleaseProgram(p) == CL_SUCCESS);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        CHECK(ms < 1000.0); // not a compile's wait (tens of ms) on a loaded machine either
    }
    cl_program p = nullptr;
    cl_kernel k = cpu.kernel("60000", p, false, 9);
    cpu.run(k, 1024, 30);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("tiering: DUET_LOG names each kernel of a program compiled as one module",
          "[cpu][tiering][log]") {
    // Kernels sharing a program-scope variable are compiled as one module, in both tiers: one
    // compile serves them all, so its lines name all of them, and its work-item loop report
    // puts each line under the kernel whose work-group function it is about.
    Cpu cpu;
    const char* source = R"(
global float tier_log_scale = 2.0f;
__kernel void tl_alpha(__global float* a) { a[get_global_id(0)] *= tier_log_scale; }
__kernel void tl_beta(__global float* a) { a[get_global_id(0)] += tier_log_scale; }
__kernel void tl_gamma(__global float* a) { tier_log_scale = a[get_global_id(0)] > 1e30f ? 1.0f : 2.0f; }
)";
    StderrCapture log;
    setenv("DUET_CPU_TIER_UP_MS", "60000", 1);
    setenv("DUET_CPU_TIER_UP_SYNC", "1", 1); // optimised at a known launch, on its path
    cl_int e = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(cpu.context, 1, &source, nullptr, &e);
    REQUIRE(e == CL_SUCCESS);
    e = clBuildProgram(p, 1, &cpu.device, "-cl-std=CL2.0", nullptr, nullptr);
    unsetenv("DUET_CPU_TIER_UP_MS");
    unsetenv("DUET_CPU_TIER_UP_SYNC");
    INFO(buildLog(p, cpu.device));
    REQUIRE(e == CL_SUCCESS);
    cl_kernel ks[3];
    const char* names[3] = {"tl_alpha", "tl_beta", "tl_gamma"};
    cl_mem buf = clCreateBuffer(cpu.context, CL_MEM_READ_WRITE, 256 * sizeof(float), nullptr, &e);
    REQUIRE(e == CL_SUCCESS);
    for (int i = 0; i < 3; ++i) {
        ks[i] = clCreateKernel(p, names[i], &e);
        REQUIRE(e == CL_SUCCESS);
        REQUIRE(clSetKernelArg(ks[i], 0, sizeof buf, &buf) == CL_SUCCESS);
    }
    // tl_alpha and tl_gamma once, then tl_beta until its 17th launch spends its budget
    // (kTierUpLaunches): the module is optimised.
    const size_t items = 256;
    for (int i = 0; i < 19; ++i)
        REQUIRE(clEnqueueNDRangeKernel(cpu.queue, ks[i < 2 ? i * 2 : 1], 1, nullptr, &items,
                                       nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(cpu.queue) == CL_SUCCESS);
    for (cl_kernel k : ks)
        clReleaseKernel(k);
    clReleaseMemObject(buf);
    clReleaseProgram(p);
    const std::string text = log.text();
    INFO(text);
    const std::string all = "kernels tl_alpha, tl_beta, tl_gamma (one module): ";
    CHECK(count(text, all + "quick code in") == 1);
    CHECK(count(text, all + "optimised in") == 1);
    CHECK(count(text, all + "launches switch to the optimised code") == 1);
    CHECK(count(text, "quick code in") == 1); // not a line per kernel
    CHECK(count(text, "optimised in") == 1);
    CHECK(count(text, "whole program") == 0);
    // Each report line: "duet: cpu: kernel <k>: __duet_wg_<k>[.<variant>]: work-item loop ...".
    int reportLines = 0;
    for (size_t at = text.find("__duet_wg_"); at != std::string::npos;
         at = text.find("__duet_wg_", at + 1)) {
        const size_t line = text.rfind('\n', at) + 1; // npos + 1 == 0: the first line
        const std::string head = text.substr(line, at - line);
        const size_t nameEnd = text.find_first_of(".:", at);
        const std::string function = text.substr(at + 10, nameEnd - at - 10);
        INFO(head << "__duet_wg_" << function);
        CHECK(head == "duet: cpu: kernel " + function + ": ");
        ++reportLines;
    }
    CHECK(reportLines >= 3);
    for (const char* name : names)
        CHECK(count(text, std::string("duet: cpu: kernel ") + name + ": __duet_wg_" + name) >= 1);
}
