// Thread safety: concurrent builds and enqueues on one context, releases with work pending.
#include "support/cl_test.hpp"

#include <atomic>
#include <chrono>
#include <thread>

using namespace duet::test;

TEST_CASE("threads build, enqueue and count concurrently on one context", "[api][threads]") {
    WithQueue f;
    cl_mem counter = f.buffer(sizeof(cl_uint));
    cl_uint zero = 0;
    REQUIRE_CL(clEnqueueWriteBuffer(f.queue, counter, CL_TRUE, 0, 4, &zero, 0, nullptr, nullptr));
    constexpr int kThreads = 4, kLaunches = 100;
    constexpr size_t kGlobal = 64;
    std::vector<std::thread> threads;
    std::vector<cl_int> results(kThreads, CL_SUCCESS);
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            // Each thread its own program (compiled concurrently), kernel and queue.
            std::string src =
                "__kernel void inc(__global uint* c) { atomic_inc(c); } // " + std::to_string(t);
            const char* s = src.c_str();
            cl_int e;
            cl_program p = clCreateProgramWithSource(f.context, 1, &s, nullptr, &e);
            if (e == CL_SUCCESS)
                e = clBuildProgram(p, 1, &f.device, "", nullptr, nullptr);
            cl_kernel k = e == CL_SUCCESS ? clCreateKernel(p, "inc", &e) : nullptr;
            cl_command_queue q =
                e == CL_SUCCESS ? clCreateCommandQueue(f.context, f.device, 0, &e) : nullptr;
            if (e == CL_SUCCESS)
                e = clSetKernelArg(k, 0, sizeof counter, &counter);
            for (int i = 0; i < kLaunches && e == CL_SUCCESS; ++i)
                e = clEnqueueNDRangeKernel(q, k, 1, nullptr, &kGlobal, nullptr, 0, nullptr,
                                           nullptr);
            if (e == CL_SUCCESS)
                e = clFinish(q);
            results[t] = e;
            if (q)
                clReleaseCommandQueue(q);
            if (k)
                clReleaseKernel(k);
            clReleaseProgram(p);
        });
    for (auto& th : threads)
        th.join();
    for (cl_int r : results)
        CHECK(r == CL_SUCCESS);
    CHECK(f.read<cl_uint>(counter, 1)[0] == kThreads * kLaunches * kGlobal);
    clReleaseMemObject(counter);
}

TEST_CASE("released queues, kernels and buffers finish the work already enqueued",
          "[api][threads]") {
    WithQueue f;
    cl_int err;
    cl_program p =
        buildProgram(f.context, f.device,
                     "__kernel void set(__global int* o, int v) { o[get_global_id(0)] = v; }");
    cl_kernel k = clCreateKernel(p, "set", &err);
    cl_mem out = f.buffer(16 * sizeof(int));
    cl_event gate = clCreateUserEvent(f.context, &err);
    cl_command_queue q = clCreateCommandQueue(f.context, f.device, 0, &err);
    int v = 5;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof v, &v));
    size_t g = 16;
    cl_event done;
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 1, &gate, &done));
    // Everything released while the command waits; it must still run, with the values set
    // at enqueue time.
    v = 6;
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof v, &v));
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    REQUIRE_CL(clSetUserEventStatus(gate, CL_COMPLETE));
    REQUIRE_CL(clWaitForEvents(1, &done));
    auto r = f.read<int>(out, 16);
    for (int x : r)
        CHECK(x == 5);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clReleaseMemObject(out);
}

TEST_CASE("releasing a queue whose command without an event waits for a user event returns at "
          "once; the command runs when the event is set",
          "[api][threads]") {
    // The spec deletes the queue once its commands have finished; the release itself must not
    // wait for them (it did: the application set the user event only after the release
    // returned, and the release waited for the worker, which waited for that event).
    WithQueue f;
    cl_int err;
    std::vector<cl_int> seven(16, 7);
    cl_mem src = f.buffer(64, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, seven.data());
    cl_mem dst = f.buffer(64);
    static std::atomic<bool> srcGone;
    srcGone = false;
    REQUIRE_CL(
        clSetMemObjectDestructorCallback(src, [](cl_mem, void*) { srcGone = true; }, nullptr));
    cl_event gate = clCreateUserEvent(f.context, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_command_queue q = clCreateCommandQueue(f.context, f.device, 0, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clEnqueueCopyBuffer(q, src, dst, 0, 0, 64, 1, &gate, nullptr)); // no event
    clReleaseMemObject(src); // the copy holds it: destroyed once the copy ran
    std::atomic<bool> released{false};
    std::thread release([&] {
        clReleaseCommandQueue(q);
        released = true;
    });
    for (int i = 0; i < 1000 && !released; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const bool releasedFirst = released;
    REQUIRE_CL(clSetUserEventStatus(gate, CL_COMPLETE)); // also frees a release that hung
    release.join();
    CHECK(releasedFirst);
    for (int i = 0; i < 2500 && !srcGone; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    CHECK(srcGone);
    CHECK(f.read<cl_int>(dst, 16) == seven);
    clReleaseEvent(gate);
    clReleaseMemObject(dst);
}

TEST_CASE("a buffer released while its kernel is enqueued on another thread: a launch or a "
          "reason, never a crash",
          "[api][threads][memory]") {
    // The kernel holds its arguments weakly (core/memory.hpp, WeakMemRef): the enqueue either
    // retains the buffer before the release drops the last reference (and runs with it) or
    // finds it gone (CL_INVALID_KERNEL_ARGS). Every buffer is destroyed exactly once.
    WithQueue f;
    cl_program p = buildProgram(f.context, f.device,
                                "kernel void one(global int* a) { a[get_global_id(0)] = 1; }");
    cl_int err;
    cl_kernel k = clCreateKernel(p, "one", &err);
    REQUIRE(err == CL_SUCCESS);
    static std::atomic<int> destroyed;
    destroyed = 0;
    constexpr int kRounds = 200;
    int launched = 0, refused = 0;
    for (int round = 0; round < kRounds; ++round) {
        cl_mem b = f.buffer(256 * sizeof(int));
        REQUIRE_CL(clSetMemObjectDestructorCallback(
            b, [](cl_mem, void*) { destroyed.fetch_add(1); }, nullptr));
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof b, &b));
        std::thread release([b] { clReleaseMemObject(b); });
        const size_t n = 256;
        cl_int e = clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
        release.join();
        INFO("round " << round << ": " << errorName(e));
        REQUIRE((e == CL_SUCCESS || e == CL_INVALID_KERNEL_ARGS));
        (e == CL_SUCCESS ? launched : refused)++;
    }
    REQUIRE_CL(clFinish(f.queue));
    for (int i = 0; i < 500 && destroyed.load() < kRounds; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    CHECK(destroyed.load() == kRounds);
    CHECK(launched + refused == kRounds);
    clReleaseKernel(k);
    clReleaseProgram(p);
}
