// The run-time guard tests of every device with them (CPU, GCN model), compiled into each
// device's guard test with its kGuardDevice and DUET_GUARDS_TAG (guards_cases.hpp): checked
// kernels (the variable kGuardDevice names, set by the ctest entry) and the kernel timeout
// (DUET_KERNEL_TIMEOUT, set around the builds that need it).
#include "devices/guards_cases.hpp"
#include "support/scoped_env.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#ifndef DUET_GUARDS_TAG
#error "compile guards_cases.cpp with DUET_GUARDS_TAG, the device's test tag (\"[cpu]\")"
#endif

using namespace duet::test;

TEST_CASE("checked kernels stop at a write one past the end of a buffer",
          DUET_GUARDS_TAG "[checks]") {
    Guarded g;
    cl_program p = g.build(guardKernels());
    cl_kernel fill = g.kernel(p, "fill");
    std::vector<int> zeros(1024, 0);
    cl_mem out = g.buffer(zeros.size() * sizeof(int), zeros.data());
    setArg(fill, 0, out);
    setArg(fill, 1, 1);
    const std::string m = g.runStopped(
        fill, 1024, 64,
        "kernel 'fill': out-of-bounds write of 4 bytes at byte offset 4096 of argument 0 'out' "
        "(__global int*, a buffer of 4096 bytes) by work-item 1023 (global id)");
    // Where the device has more to say (the GCN model: the instruction), it comes before this.
    CHECK_THAT(m, Catch::Contains("; the launch was stopped (DUET_KERNEL_CHECKS)"));
    CHECK(g.messagesWith("out-of-bounds") == 1); // the first fault only
    // The other work-items' writes before the stop are the kernel's; none went past the end.
    CHECK(g.read<int>(out, 1024)[0] == 0);

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

TEST_CASE("checked kernels stop at a read before the start of a buffer",
          DUET_GUARDS_TAG "[checks]") {
    Guarded g;
    cl_program p = g.build(guardKernels());
    cl_kernel k = g.kernel(p, "shifted_copy");
    std::vector<int> init(256, 3);
    cl_mem out = g.buffer(init.size() * sizeof(int), init.data());
    cl_mem in = g.buffer(init.size() * sizeof(int), init.data());
    setArg(k, 0, out);
    setArg(k, 1, in);
    g.runStopped(k, 256, kGuardDevice.group,
                 "kernel 'shifted_copy': out-of-bounds read of 4 bytes at byte offset -4 of "
                 "argument 1 'in' (__global int*, a buffer of 1024 bytes) by work-item 0 (global "
                 "id)");
    clReleaseMemObject(out);
    clReleaseMemObject(in);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("checked kernels stop at a sub-buffer overrun inside the parent buffer",
          DUET_GUARDS_TAG "[checks]") {
    Guarded g;
    cl_program p = g.build(guardKernels());
    cl_kernel fill = g.kernel(p, "fill");
    std::vector<int> init(2048, -1);
    cl_mem parent = g.buffer(init.size() * sizeof(int), init.data());
    cl_buffer_region region{1024, 512 * sizeof(int)}; // bytes 1024..3071 of 8192
    cl_int e = CL_SUCCESS;
    cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
    REQUIRE(e == CL_SUCCESS);
    setArg(fill, 0, sub);
    setArg(fill, 1, 1);
    g.runStopped(fill, 512, 64,
                 "kernel 'fill': out-of-bounds write of 4 bytes at byte offset 2048 of argument 0 "
                 "'out' (__global int*, a sub-buffer of 2048 bytes) by work-item 511 (global id)");
    // The parent's bytes right after the sub-buffer, and those before it, were never written.
    std::vector<int> after = g.read<int>(parent, 2048);
    CHECK(after[256 + 512] == -1);
    for (size_t i = 0; i < 256; ++i)
        REQUIRE(after[i] == -1);
    clReleaseMemObject(sub);
    clReleaseMemObject(parent);
    clReleaseKernel(fill);
    clReleaseProgram(p);
}

TEST_CASE("checked kernels stop at an access through a NULL buffer", DUET_GUARDS_TAG "[checks]") {
    Guarded g;
    cl_program p = g.build(guardKernels());
    cl_kernel fill = g.kernel(p, "fill");
    REQUIRE(clSetKernelArg(fill, 0, sizeof(cl_mem), nullptr) == CL_SUCCESS);
    setArg(fill, 1, 0);
    g.runStopped(fill, 64, 64,
                 "kernel 'fill': out-of-bounds write of 4 bytes at byte offset 0 of argument 0 "
                 "'out' (__global int*, NULL) by work-item 0 (global id)");
    clReleaseKernel(fill);
    clReleaseProgram(p);
}

TEST_CASE("checked kernels bound an SVM pointer by its allocation", DUET_GUARDS_TAG "[checks]") {
    Guarded g;
    cl_program p = g.build(guardKernels());
    cl_kernel fill = g.kernel(p, "fill");
    auto* base = static_cast<int*>(clSVMAlloc(g.context, CL_MEM_READ_WRITE, 1024, 0));
    REQUIRE(base);
    // 256 bytes into the allocation: from there, 192 ints fit and one before the pointer too.
    REQUIRE(clSetKernelArgSVMPointer(fill, 0, base + 64) == CL_SUCCESS);
    setArg(fill, 1, -1);
    CHECK(g.run(fill, 192, 64) == CL_COMPLETE);
    setArg(fill, 1, 1);
    g.runStopped(fill, 192, 64,
                 "kernel 'fill': out-of-bounds write of 4 bytes at byte offset 768 of argument 0 "
                 "'out' (__global int*, an SVM pointer 256 bytes into an allocation of 1024 "
                 "bytes) by work-item 191 (global id)");
    clSVMFree(g.context, base);
    clReleaseKernel(fill);
    clReleaseProgram(p);
}

namespace {

/// In-bounds kernels that touch every kind of memory: vectors, structs, __local, __constant
/// arguments and program-scope variables, atomics, a pointer chosen per work-item, printf and an
/// image.
const char* kInBounds = R"CL(
typedef struct { float4 a; int b[3]; } Rec;
__constant float kScale[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__global int programScope[16];
__kernel void vectors(__global float4* out, __global const float* in, __global Rec* recs,
                      __local float4* scratch, __constant float* bias) {
    size_t i = get_global_id(0), l = get_local_id(0);
    float4 v = vload4(i, in);
    scratch[l] = v * kScale[i % 4];
    barrier(CLK_LOCAL_MEM_FENCE);
    float4 w = scratch[get_local_size(0) - 1 - l];
    out[i] = w + (float4)(bias[0]);
    vstore4(v, i, (__global float*)(out + get_global_size(0)));
    Rec r = recs[i];
    r.b[i % 3] += 1;
    recs[i] = r;
    programScope[i % 16] = (int)i;
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
    if (i == 3)
        printf("pick %d\n", sum);
}
__kernel void image_copy(__read_only image2d_t src, __global float4* out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_image_width(src) + x] = read_imagef(src, (int2)(x, y));
}
)CL";

constexpr size_t kItems = 256;

struct InBoundsResult {
    std::vector<float> vectors, recs, image;
    std::vector<int> counter, hist, picked;
    std::string messages, log;
};

void runVectors(Guarded& g, cl_program p, InBoundsResult& r) {
    const size_t group = kGuardDevice.group;
    std::vector<float> in(4 * kItems);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i) * 0.25f;
    std::vector<float> recInit(kItems * 8, 0.0f); // Rec: float4 + int[3], 32 bytes with padding
    const float bias = 1.0f;
    cl_mem out = g.buffer(2 * kItems * 4 * sizeof(float));
    cl_mem inBuf = g.buffer(in.size() * sizeof(float), in.data());
    cl_mem recs = g.buffer(recInit.size() * sizeof(float), recInit.data());
    cl_mem biasBuf = g.buffer(sizeof bias, &bias);
    cl_kernel vectors = g.kernel(p, "vectors");
    setArg(vectors, 0, out);
    setArg(vectors, 1, inBuf);
    setArg(vectors, 2, recs);
    REQUIRE(clSetKernelArg(vectors, 3, group * 4 * sizeof(float), nullptr) == CL_SUCCESS);
    setArg(vectors, 4, biasBuf);
    REQUIRE(g.run(vectors, kItems, group) == CL_COMPLETE);
    r.vectors = g.read<float>(out, 2 * kItems * 4);
    r.recs = g.read<float>(recs, kItems * 8);
    for (cl_mem m : {out, inBuf, recs, biasBuf})
        clReleaseMemObject(m);
    clReleaseKernel(vectors);
}

void runAtomicsAndPick(Guarded& g, cl_program p, InBoundsResult& r) {
    std::vector<int> keys(kItems), zero(16, 0);
    for (size_t i = 0; i < kItems; ++i)
        keys[i] = int(i * 7 + 3);
    cl_mem counter = g.buffer(sizeof(int), zero.data());
    cl_mem hist = g.buffer(16 * sizeof(int), zero.data());
    cl_mem keyBuf = g.buffer(kItems * sizeof(int), keys.data());
    cl_kernel atomics = g.kernel(p, "atomics");
    setArg(atomics, 0, counter);
    setArg(atomics, 1, hist);
    setArg(atomics, 2, keyBuf);
    REQUIRE(g.run(atomics, kItems, 64) == CL_COMPLETE);
    r.counter = g.read<int>(counter, 1);
    r.hist = g.read<int>(hist, 16);

    cl_mem picked = g.buffer(kItems * sizeof(int));
    cl_kernel pick = g.kernel(p, "pick");
    setArg(pick, 0, picked);
    std::vector<int> ones(kItems, 1);
    cl_mem onesBuf = g.buffer(kItems * sizeof(int), ones.data());
    setArg(pick, 1, keyBuf);
    setArg(pick, 2, onesBuf);
    setArg(pick, 3, 5);
    REQUIRE(g.run(pick, kItems, kGuardDevice.group) == CL_COMPLETE);
    r.picked = g.read<int>(picked, kItems);
    for (cl_mem m : {counter, hist, keyBuf, picked, onesBuf})
        clReleaseMemObject(m);
    clReleaseKernel(atomics);
    clReleaseKernel(pick);
}

void runImageCopy(Guarded& g, cl_program p, InBoundsResult& r) {
    std::vector<float> texels(8 * 4 * 4);
    for (size_t i = 0; i < texels.size(); ++i)
        texels[i] = float(i);
    cl_image_format format{CL_RGBA, CL_FLOAT};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 8;
    desc.image_height = 4;
    cl_int e = CL_SUCCESS;
    cl_mem image = clCreateImage(g.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, &desc,
                                 texels.data(), &e);
    REQUIRE(e == CL_SUCCESS);
    cl_mem imageOut = g.buffer(texels.size() * sizeof(float));
    cl_kernel copy = g.kernel(p, "image_copy");
    setArg(copy, 0, image);
    setArg(copy, 1, imageOut);
    size_t global[2] = {8, 4};
    REQUIRE(clEnqueueNDRangeKernel(g.queue, copy, 2, nullptr, global, nullptr, 0, nullptr,
                                   nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(g.queue) == CL_SUCCESS);
    r.image = g.read<float>(imageOut, texels.size());
    CHECK(r.image == texels);
    clReleaseMemObject(image);
    clReleaseMemObject(imageOut);
    clReleaseKernel(copy);
}

InBoundsResult runInBounds() {
    Guarded g;
    cl_program p = g.build(kInBounds, "-cl-std=CL3.0"); // program-scope __global variables
    InBoundsResult r;
    r.log = buildLog(p, g.device);
    runVectors(g, p, r);
    runAtomicsAndPick(g, p, r);
    runImageCopy(g, p, r);
    r.messages = g.allMessages();
    clReleaseProgram(p);
    return r;
}

} // namespace

TEST_CASE("checked kernels report a barrier inside a branch some work-items skip",
          DUET_GUARDS_TAG "[checks][barrier]") {
    Guarded g;
    cl_program p = g.build(kGuardedSwapKernel);
    cl_kernel k = g.kernel(p, "guarded_swap");
    const std::vector<int> init(128, -7);
    cl_mem out = g.buffer(init.size() * sizeof(int), init.data());
    setArg(k, 0, out);
    setArg(k, 1, 100); // group 1 (global ids 64-127): local ids 0-35 take the branch
    g.runStopped(
        k, 128, 64,
        std::string("kernel 'guarded_swap': barrier divergence in work-group (1, 0, 0): ") +
            kGuardDevice.guardedSwapDivergence);
    CHECK(g.messagesWith("barrier divergence") == 1);
    CHECK(g.messagesWith("the launch was stopped (DUET_KERNEL_CHECKS)") == 1);
    // The queue goes on: the same kernel with whole groups in range runs, and right.
    setArg(k, 1, 128);
    REQUIRE(g.run(k, 128, 64) == CL_COMPLETE);
    CHECK(g.read<int>(out, 128) == guardedSwapWanted(128, 128));
    CHECK(g.messagesWith("barrier divergence") == 1);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("in-bounds kernels give the same results with and without checks",
          DUET_GUARDS_TAG "[checks]") {
    InBoundsResult checked = runInBounds();
    InBoundsResult plain;
    {
        ScopedEnv off(kGuardDevice.checksVariable, "0");
        plain = runInBounds();
    }
    INFO(checked.messages);
    CHECK(checked.messages.empty());
    INFO(checked.log);
    CHECK(checked.log.find("not checked") == std::string::npos);
    CHECK(checked.vectors == plain.vectors);
    CHECK(checked.recs == plain.recs);
    CHECK(checked.counter == plain.counter);
    CHECK(checked.hist == plain.hist);
    CHECK(checked.picked == plain.picked);
    CHECK(checked.image == plain.image);
    // And both are right.
    CHECK(checked.counter[0] == int(kItems));
    int histTotal = 0;
    for (int h : checked.hist)
        histTotal += h;
    CHECK(histTotal == int(kItems));
    const size_t group = kGuardDevice.group;
    for (size_t i = 0; i < kItems; ++i) {
        const size_t mirror = i / group * group + (group - 1 - i % group);
        for (size_t c = 0; c < 4; ++c) {
            REQUIRE(checked.vectors[4 * i + c] ==
                    float(4 * mirror + c) * 0.25f * float(mirror % 4 + 1) + 1.0f);
            REQUIRE(checked.vectors[4 * kItems + 4 * i + c] == float(4 * i + c) * 0.25f);
        }
        int expected = 0;
        for (size_t j = 0; j < 5; ++j)
            expected += (i & 1) ? int(((i + j) % kItems) * 7 + 3) : 1;
        REQUIRE(checked.picked[i] == expected);
    }
}

TEST_CASE("a kernel running past DUET_KERNEL_TIMEOUT fails and the queue goes on",
          DUET_GUARDS_TAG "[timeout]") {
    Guarded g;
    cl_program p;
    {
        ScopedEnv timeout("DUET_KERNEL_TIMEOUT", "1");
        p = g.build(std::string(kAddKernel) + R"CL(
__kernel void spin(__global const int* stop, __global int* out) {
    int i = 0;
    while (stop[0] == 0)
        i++;
    out[get_global_id(0)] = i;
}
__kernel void spin_at_barrier(__global const int* stop, __local int* flag) {
    do {
        flag[get_local_id(0)] = stop[0];
        barrier(CLK_LOCAL_MEM_FENCE);
    } while (flag[0] == 0);
}
)CL");
    }
    cl_kernel spin = g.kernel(p, "spin");
    cl_kernel spinBarrier = g.kernel(p, "spin_at_barrier");
    cl_kernel add = g.kernel(p, "add");
    std::vector<int> zeros(1024, 0);
    cl_mem stop = g.buffer(sizeof(int), zeros.data());
    cl_mem out = g.buffer(zeros.size() * sizeof(int), zeros.data());
    cl_mem data = g.buffer(zeros.size() * sizeof(int), zeros.data());
    const size_t global = 1024, local = kGuardDevice.timeoutGroup;
    setArg(spin, 0, stop);
    setArg(spin, 1, out);
    setArg(spinBarrier, 0, stop);
    REQUIRE(clSetKernelArg(spinBarrier, 1, local * sizeof(int), nullptr) == CL_SUCCESS);
    setArg(add, 0, data);
    setArg(add, 1, 3);

    for (cl_kernel k : {spin, spinBarrier}) {
        const auto t0 = std::chrono::steady_clock::now();
        cl_event spun = nullptr, added = nullptr;
        REQUIRE(clEnqueueNDRangeKernel(g.queue, k, 1, nullptr, &global, &local, 0, nullptr,
                                       &spun) == CL_SUCCESS);
        REQUIRE(clEnqueueNDRangeKernel(g.queue, add, 1, nullptr, &global, &local, 0, nullptr,
                                       &added) == CL_SUCCESS);
        CHECK(clFinish(g.queue) == CL_SUCCESS);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CHECK(seconds >= 0.9);
        CHECK(seconds < kGuardDevice.timeoutLimit);
        cl_int status = CL_COMPLETE;
        clGetEventInfo(spun, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
        INFO(errorName(status));
        CHECK(status == CL_OUT_OF_RESOURCES);
        clGetEventInfo(added, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
        CHECK(status == CL_COMPLETE);
        clReleaseEvent(spun);
        clReleaseEvent(added);
    }
    std::vector<int> after = g.read<int>(data, 1024);
    CHECK(std::count(after.begin(), after.end(), 6) == 1024);
    const std::string m = g.allMessages();
    INFO(m);
    CHECK(m.find("kernel 'spin' ran longer than DUET_KERNEL_TIMEOUT=1 s and was stopped after") !=
          std::string::npos);
    CHECK(m.find("kernel 'spin_at_barrier' ran longer than DUET_KERNEL_TIMEOUT=1 s") !=
          std::string::npos);
    for (cl_mem mem : {stop, out, data})
        clReleaseMemObject(mem);
    for (cl_kernel k : {spin, spinBarrier, add})
        clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("a bad DUET_KERNEL_TIMEOUT is reported in the build log", DUET_GUARDS_TAG "[timeout]") {
    Guarded g;
    ScopedEnv timeout("DUET_KERNEL_TIMEOUT", "soon");
    cl_program p = g.build("__kernel void k(__global int* a) { a[0] = 1; }");
    CHECK(buildLog(p, g.device)
              .find("warning: DUET_KERNEL_TIMEOUT=soon is not a number of "
                    "seconds") != std::string::npos);
    clReleaseProgram(p);
}
