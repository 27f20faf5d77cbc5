// The CPU device's run-time guards through the API: checked kernels (DUET_CPU_CHECKS, set by
// this test's ctest entry) and the kernel timeout (DUET_KERNEL_TIMEOUT, set around builds here).
#include "support/guarded_context.hpp"
#include "support/scoped_env.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

using duet::test::buildLog;
using duet::test::errorName;
using duet::test::GuardedContext;
using duet::test::ScopedEnv;
using duet::test::setArg;

/// A context on the CPU device (support/guarded_context.hpp).
struct Guarded : GuardedContext {
    Guarded() : GuardedContext(CL_DEVICE_TYPE_CPU) {}
};

const char* kOverruns = R"CL(
__kernel void fill(__global int* out, int shift) { out[get_global_id(0) + shift] = 7; }
__kernel void shifted_copy(__global int* out, __global const int* in) {
    size_t i = get_global_id(0);
    out[i] = in[(int)i - 1];
}
__kernel void tile_sum(__global float* out, __local float* tile) {
    size_t l = get_local_id(0);
    tile[l + 1] = (float)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[l];
}
__kernel void sums(__global int* out) {
    __local int part[16];
    part[get_local_id(0)] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = part[0];
}
__kernel void add(__global int* data, int v) { data[get_global_id(0)] += v; }
)CL";

} // namespace

TEST_CASE("checked kernels stop at a write one past the end of a buffer", "[cpu][checks]") {
    Guarded g;
    cl_program p = g.build(kOverruns);
    cl_kernel fill = g.kernel(p, "fill");
    std::vector<int> zeros(1024, 0);
    cl_mem out = g.buffer(zeros.size() * sizeof(int), zeros.data());
    setArg(fill, 0, out);
    setArg(fill, 1, 1);
    cl_int status = g.run(fill, 1024, 64);
    INFO(errorName(status));
    CHECK(status == CL_OUT_OF_RESOURCES);
    const std::string m = g.allMessages();
    INFO(m);
    CHECK(m.find("kernel 'fill': out-of-bounds write of 4 bytes at byte offset 4096 of argument "
                 "0 'out' (__global int*, a buffer of 4096 bytes) by work-item 1023") !=
          std::string::npos);
    CHECK(g.messagesWith("out-of-bounds") == 1); // the first fault only

    // The queue goes on: the next kernel runs, and one waiting for the failed one fails.
    cl_kernel add = g.kernel(p, "add");
    cl_mem data = g.buffer(zeros.size() * sizeof(int), zeros.data());
    setArg(add, 0, data);
    setArg(add, 1, 5);
    CHECK(g.run(add, 1024, 64) == CL_COMPLETE);
    std::vector<int> after = g.read<int>(data, 1024);
    CHECK(std::count(after.begin(), after.end(), 5) == 1024);

    cl_event failed = nullptr, dependent = nullptr;
    size_t global = 1024, local = 64;
    REQUIRE(clEnqueueNDRangeKernel(g.queue, fill, 1, nullptr, &global, &local, 0, nullptr,
                                   &failed) == CL_SUCCESS);
    REQUIRE(clEnqueueNDRangeKernel(g.queue, add, 1, nullptr, &global, &local, 1, &failed,
                                   &dependent) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &dependent) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    cl_int depStatus = CL_COMPLETE;
    clGetEventInfo(dependent, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof depStatus, &depStatus,
                   nullptr);
    CHECK(depStatus < 0);
    CHECK(clFinish(g.queue) == CL_SUCCESS);
    clReleaseEvent(failed);
    clReleaseEvent(dependent);
    clReleaseMemObject(data);
    clReleaseMemObject(out);
    clReleaseKernel(add);
    clReleaseKernel(fill);
    clReleaseProgram(p);
}

TEST_CASE("checked kernels stop at a read before the start of a buffer", "[cpu][checks]") {
    Guarded g;
    cl_program p = g.build(kOverruns);
    cl_kernel k = g.kernel(p, "shifted_copy");
    std::vector<int> init(256, 3);
    cl_mem out = g.buffer(init.size() * sizeof(int), init.data());
    cl_mem in = g.buffer(init.size() * sizeof(int), init.data());
    setArg(k, 0, out);
    setArg(k, 1, in);
    CHECK(g.run(k, 256, 16) == CL_OUT_OF_RESOURCES);
    const std::string m = g.allMessages();
    INFO(m);
    CHECK(m.find("kernel 'shifted_copy': out-of-bounds read of 4 bytes at byte offset -4 of "
                 "argument 1 'in' (__global int*, a buffer of 1024 bytes) by work-item 0") !=
          std::string::npos);
    clReleaseMemObject(out);
    clReleaseMemObject(in);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("checked kernels stop at a __local overrun", "[cpu][checks]") {
    Guarded g;
    cl_program p = g.build(kOverruns);
    SECTION("a __local argument") {
        cl_kernel k = g.kernel(p, "tile_sum");
        cl_mem out = g.buffer(64 * sizeof(float));
        setArg(k, 0, out);
        REQUIRE(clSetKernelArg(k, 1, 64 * sizeof(float), nullptr) == CL_SUCCESS);
        CHECK(g.run(k, 64, 64) == CL_OUT_OF_RESOURCES); // one group: one faulting work-item
        const std::string m = g.allMessages();
        INFO(m);
        CHECK(m.find("kernel 'tile_sum': out-of-bounds write of 4 bytes at byte offset 256 of "
                     "argument 1 'tile' (__local float*, 256 bytes per work-group) by work-item "
                     "63") != std::string::npos);
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    SECTION("a kernel-scope __local variable") {
        cl_kernel k = g.kernel(p, "sums");
        cl_mem out = g.buffer(32 * sizeof(int));
        setArg(k, 0, out);
        CHECK(g.run(k, 32, 32) == CL_OUT_OF_RESOURCES);
        const std::string m = g.allMessages();
        INFO(m);
        // clang names a kernel-scope variable <kernel>.<name>.
        CHECK(m.find("kernel 'sums': out-of-bounds write of 4 bytes at byte offset 64 of "
                     "variable 'sums.part' (64 bytes) by work-item 16") != std::string::npos);
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    clReleaseProgram(p);
}

TEST_CASE("checked kernels stop at a sub-buffer overrun inside the parent buffer",
          "[cpu][checks]") {
    Guarded g;
    cl_program p = g.build(kOverruns);
    cl_kernel fill = g.kernel(p, "fill");
    std::vector<int> init(2048, -1);
    cl_mem parent = g.buffer(init.size() * sizeof(int), init.data());
    cl_buffer_region region{1024, 512 * sizeof(int)}; // bytes 1024..3071 of 8192
    cl_int e = CL_SUCCESS;
    cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
    REQUIRE(e == CL_SUCCESS);
    setArg(fill, 0, sub);
    setArg(fill, 1, 1);
    CHECK(g.run(fill, 512, 64) == CL_OUT_OF_RESOURCES);
    const std::string m = g.allMessages();
    INFO(m);
    CHECK(m.find("out-of-bounds write of 4 bytes at byte offset 2048 of argument 0 'out' "
                 "(__global int*, a sub-buffer of 2048 bytes) by work-item 511") !=
          std::string::npos);
    // The parent's bytes right after the sub-buffer were never written.
    std::vector<int> after = g.read<int>(parent, 2048);
    CHECK(after[256 + 512] == -1);
    for (size_t i = 0; i < 256; ++i)
        REQUIRE(after[i] == -1);
    clReleaseMemObject(sub);
    clReleaseMemObject(parent);
    clReleaseKernel(fill);
    clReleaseProgram(p);
}

TEST_CASE("checked kernels stop at an access through a NULL buffer", "[cpu][checks]") {
    Guarded g;
    cl_program p = g.build(kOverruns);
    cl_kernel fill = g.kernel(p, "fill");
    REQUIRE(clSetKernelArg(fill, 0, sizeof(cl_mem), nullptr) == CL_SUCCESS);
    setArg(fill, 1, 0);
    CHECK(g.run(fill, 64, 64) == CL_OUT_OF_RESOURCES);
    const std::string m = g.allMessages();
    INFO(m);
    CHECK(m.find("kernel 'fill': out-of-bounds write of 4 bytes at byte offset 0 of argument 0 "
                 "'out' (__global int*, NULL) by work-item 0") != std::string::npos);
    clReleaseKernel(fill);
    clReleaseProgram(p);
}

TEST_CASE("checked kernels bound an SVM pointer by its allocation", "[cpu][checks]") {
    Guarded g;
    cl_program p = g.build(kOverruns);
    cl_kernel fill = g.kernel(p, "fill");
    auto* base = static_cast<int*>(clSVMAlloc(g.context, CL_MEM_READ_WRITE, 1024, 0));
    REQUIRE(base);
    // 256 bytes into the allocation: from there, 192 ints fit and one before the pointer too.
    REQUIRE(clSetKernelArgSVMPointer(fill, 0, base + 64) == CL_SUCCESS);
    setArg(fill, 1, -1);
    CHECK(g.run(fill, 192, 64) == CL_COMPLETE);
    setArg(fill, 1, 1);
    CHECK(g.run(fill, 192, 64) == CL_OUT_OF_RESOURCES);
    const std::string m = g.allMessages();
    INFO(m);
    CHECK(m.find("kernel 'fill': out-of-bounds write of 4 bytes at byte offset 768 of argument 0 "
                 "'out' (__global int*, an SVM pointer 256 bytes into an allocation of 1024 "
                 "bytes) by work-item 191") != std::string::npos);
    clSVMFree(g.context, base);
    clReleaseKernel(fill);
    clReleaseProgram(p);
}

TEST_CASE("checked builds say which accesses they cannot check", "[cpu][checks]") {
    Guarded g;
    // A pointer made from an integer read from memory derives from no argument.
    cl_program p = g.build(R"CL(
__kernel void chase(__global const ulong* table, __global int* out) {
    __global const int* p = (__global const int*)table[0];
    out[0] = *p;
}
__kernel void plain(__global int* out) { out[get_global_id(0)] = 1; }
)CL");
    const std::string log = buildLog(p, g.device);
    INFO(log);
    CHECK(log.find("note: DUET_CPU_CHECKS: kernel chase: 1 of 3 memory accesses are not checked") !=
          std::string::npos);
    CHECK(log.find("kernel plain:") == std::string::npos);
    clReleaseProgram(p);
}

namespace {

const char* kInBounds = R"CL(
typedef struct { float4 a; int b[3]; } Rec;
__kernel void vectors(__global float4* out, __global const float* in, __global Rec* recs,
                      __local float4* scratch) {
    size_t i = get_global_id(0), l = get_local_id(0);
    float4 v = vload4(i, in);
    scratch[l] = v * 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    float4 w = scratch[get_local_size(0) - 1 - l];
    out[i] = w + (float4)(1.0f);
    vstore4(v, i, (__global float*)(out + get_global_size(0)));
    Rec r = recs[i];
    r.b[i % 3] += 1;
    recs[i] = r;
}
__kernel void atomics(__global int* counter, __global int* hist, __global const int* keys) {
    __local int localCount;
    if (get_local_id(0) == 0)
        localCount = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&localCount);
    atomic_add(&hist[keys[get_global_id(0)] & 15], 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        atomic_add(counter, localCount);
}
__kernel void pick(__global int* out, __global const int* a, __global const int* b, int n) {
    size_t i = get_global_id(0);
    __global const int* src = (i & 1) ? a : b;
    int sum = 0;
    for (int j = 0; j < n; ++j)
        sum += src[(i + j) % get_global_size(0)];
    out[i] = sum;
}
)CL";

struct InBoundsResult {
    std::vector<float> vectors;
    std::vector<float> recs;
    std::vector<int> counter, hist, picked;
    std::string messages;
    std::string log;
};

InBoundsResult runInBounds() {
    Guarded g;
    cl_program p = g.build(kInBounds);
    InBoundsResult r;
    r.log = buildLog(p, g.device);
    constexpr size_t n = 256;
    std::vector<float> in(4 * n);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i) * 0.25f;
    std::vector<float> recInit(n * 8, 0.0f); // Rec: float4 + int[3], 32 bytes with padding
    cl_mem out = g.buffer(2 * n * 4 * sizeof(float));
    cl_mem inBuf = g.buffer(in.size() * sizeof(float), in.data());
    cl_mem recs = g.buffer(recInit.size() * sizeof(float), recInit.data());
    cl_kernel vectors = g.kernel(p, "vectors");
    setArg(vectors, 0, out);
    setArg(vectors, 1, inBuf);
    setArg(vectors, 2, recs);
    REQUIRE(clSetKernelArg(vectors, 3, 32 * 4 * sizeof(float), nullptr) == CL_SUCCESS);
    REQUIRE(g.run(vectors, n, 32) == CL_COMPLETE);
    r.vectors = g.read<float>(out, 2 * n * 4);
    r.recs = g.read<float>(recs, n * 8);

    std::vector<int> keys(n), zero(16, 0);
    for (size_t i = 0; i < n; ++i)
        keys[i] = int(i * 7 + 3);
    cl_mem counter = g.buffer(sizeof(int), zero.data());
    cl_mem hist = g.buffer(16 * sizeof(int), zero.data());
    cl_mem keyBuf = g.buffer(n * sizeof(int), keys.data());
    cl_kernel atomics = g.kernel(p, "atomics");
    setArg(atomics, 0, counter);
    setArg(atomics, 1, hist);
    setArg(atomics, 2, keyBuf);
    REQUIRE(g.run(atomics, n, 64) == CL_COMPLETE);
    r.counter = g.read<int>(counter, 1);
    r.hist = g.read<int>(hist, 16);

    cl_mem picked = g.buffer(n * sizeof(int));
    cl_kernel pick = g.kernel(p, "pick");
    setArg(pick, 0, picked);
    std::vector<int> ones(n, 1);
    cl_mem onesBuf = g.buffer(n * sizeof(int), ones.data());
    setArg(pick, 1, keyBuf);
    setArg(pick, 2, onesBuf);
    setArg(pick, 3, 5);
    REQUIRE(g.run(pick, n, 16) == CL_COMPLETE);
    r.picked = g.read<int>(picked, n);
    r.messages = g.allMessages();
    for (cl_mem m : {out, inBuf, recs, counter, hist, keyBuf, picked, onesBuf})
        clReleaseMemObject(m);
    for (cl_kernel k : {vectors, atomics, pick})
        clReleaseKernel(k);
    clReleaseProgram(p);
    return r;
}

} // namespace

TEST_CASE("in-bounds kernels give the same results with and without checks", "[cpu][checks]") {
    InBoundsResult checked = runInBounds();
    InBoundsResult plain;
    {
        ScopedEnv off("DUET_CPU_CHECKS", "0");
        plain = runInBounds();
    }
    INFO(checked.messages);
    CHECK(checked.messages.empty());
    CHECK(checked.log.find("not checked") == std::string::npos);
    CHECK(checked.vectors == plain.vectors);
    CHECK(checked.recs == plain.recs);
    CHECK(checked.counter == plain.counter);
    CHECK(checked.hist == plain.hist);
    CHECK(checked.picked == plain.picked);
    // And both are right.
    constexpr size_t n = 256;
    CHECK(checked.counter[0] == int(n));
    int histTotal = 0;
    for (int h : checked.hist)
        histTotal += h;
    CHECK(histTotal == int(n));
    for (size_t i = 0; i < n; ++i) {
        const size_t group = i / 32, l = i % 32, mirror = group * 32 + (31 - l);
        for (size_t c = 0; c < 4; ++c) {
            REQUIRE(checked.vectors[4 * i + c] == float(4 * mirror + c) * 0.25f * 2.0f + 1.0f);
            REQUIRE(checked.vectors[4 * n + 4 * i + c] == float(4 * i + c) * 0.25f);
        }
        int expected = 0;
        for (size_t j = 0; j < 5; ++j)
            expected += (i & 1) ? int(((i + j) % n) * 7 + 3) : 1;
        REQUIRE(checked.picked[i] == expected);
    }
}

TEST_CASE("a kernel running past DUET_KERNEL_TIMEOUT fails and the queue goes on",
          "[cpu][timeout]") {
    Guarded g;
    cl_program p;
    {
        ScopedEnv timeout("DUET_KERNEL_TIMEOUT", "1");
        p = g.build(R"CL(
__kernel void spin(__global const int* stop, __global int* out) {
    int i = 0;
    while (stop[0] == 0)
        i++;
    out[get_global_id(0)] = i;
}
__kernel void add(__global int* data, int v) { data[get_global_id(0)] += v; }
)CL");
    }
    cl_kernel spin = g.kernel(p, "spin");
    cl_kernel add = g.kernel(p, "add");
    std::vector<int> zeros(1024, 0);
    cl_mem stop = g.buffer(sizeof(int), zeros.data());
    cl_mem out = g.buffer(zeros.size() * sizeof(int), zeros.data());
    cl_mem data = g.buffer(zeros.size() * sizeof(int), zeros.data());
    setArg(spin, 0, stop);
    setArg(spin, 1, out);
    setArg(add, 0, data);
    setArg(add, 1, 3);

    const auto t0 = std::chrono::steady_clock::now();
    cl_event spun = nullptr, added = nullptr;
    size_t global = 1024, local = 16;
    REQUIRE(clEnqueueNDRangeKernel(g.queue, spin, 1, nullptr, &global, &local, 0, nullptr, &spun) ==
            CL_SUCCESS);
    REQUIRE(clEnqueueNDRangeKernel(g.queue, add, 1, nullptr, &global, &local, 0, nullptr, &added) ==
            CL_SUCCESS);
    CHECK(clFinish(g.queue) == CL_SUCCESS);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(seconds >= 0.9);
    CHECK(seconds < 5.0);
    cl_int status = CL_COMPLETE;
    clGetEventInfo(spun, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    INFO(errorName(status));
    CHECK(status == CL_OUT_OF_RESOURCES);
    clGetEventInfo(added, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    CHECK(status == CL_COMPLETE);
    std::vector<int> after = g.read<int>(data, 1024);
    CHECK(std::count(after.begin(), after.end(), 3) == 1024);
    const std::string m = g.allMessages();
    INFO(m);
    CHECK(m.find("kernel 'spin' ran longer than DUET_KERNEL_TIMEOUT=1 s and was stopped after") !=
          std::string::npos);
    clReleaseEvent(spun);
    clReleaseEvent(added);
    for (cl_mem mem : {stop, out, data})
        clReleaseMemObject(mem);
    clReleaseKernel(spin);
    clReleaseKernel(add);
    clReleaseProgram(p);
}

TEST_CASE("a bad DUET_KERNEL_TIMEOUT is reported in the build log", "[cpu][timeout]") {
    Guarded g;
    ScopedEnv timeout("DUET_KERNEL_TIMEOUT", "soon");
    cl_program p = g.build("__kernel void k(__global int* a) { a[0] = 1; }");
    CHECK(buildLog(p, g.device)
              .find("warning: DUET_KERNEL_TIMEOUT=soon is not a number of "
                    "seconds") != std::string::npos);
    clReleaseProgram(p);
}
