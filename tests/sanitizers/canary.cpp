// Sanitizer builds only: one bug of each kind the sanitizers must turn into a failed process, so
// that ctest shows the options of env.sh make a report fail its entry (sanitizer_canary_*), also
// for a race on a thread the runtime started.
#include <CL/cl.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

volatile int g_sink = 0;
int g_racy = 0;

// UBSan's object-size check would report the read first: this one is ASan's.
__attribute__((no_sanitize("undefined"))) int heapOverflow() {
    char* p = static_cast<char*>(std::malloc(16));
    std::memset(p, 0, 16);
    g_sink = p[16 + g_sink]; // one past the end
    std::free(p);
    return 0;
}

int leak() {
    void* volatile p = std::malloc(4096); // lost when main returns
    g_sink = p != nullptr;
    p = nullptr;
    return 0;
}

int undefinedBehaviour() {
    volatile int big = 0x7fffffff;
    g_sink = big + 1; // signed overflow
    return 0;
}

int race() {
    std::thread t([] { ++g_racy; });
    ++g_racy;
    t.join();
    return 0;
}

// A race on a thread the runtime starts, reached through the ICD loader: an out-of-order queue's
// worker runs a marker's completion callback. The callback and the main thread each write
// g_racy once, ordered only through relaxed atomics (no happens-before for TSan), so the report
// does not depend on timing: TSan must see the thread libduet-opencl created.
std::atomic<int> g_stage{0}; // 1: the callback is running; 2: main has written
std::thread::id g_mainThread;

void CL_CALLBACK onMarkerComplete(cl_event, cl_int, void* ranInline) {
    if (std::this_thread::get_id() == g_mainThread) {
        *static_cast<bool*>(ranInline) = true; // no second thread: nothing to race with
        return;
    }
    g_stage.store(1, std::memory_order_relaxed);
    while (g_stage.load(std::memory_order_relaxed) != 2)
        std::this_thread::yield();
    ++g_racy;
}

int runtimeThreadRace() {
    g_mainThread = std::this_thread::get_id();
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
        std::fprintf(stderr, "canary: no OpenCL device\n");
        return 3;
    }
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                         CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, props, &err);
    cl_event gate = clCreateUserEvent(context, &err);
    cl_event marker = nullptr;
    bool ranInline = false;
    if (err != CL_SUCCESS || clEnqueueMarkerWithWaitList(queue, 1, &gate, &marker) != CL_SUCCESS ||
        clSetEventCallback(marker, CL_COMPLETE, onMarkerComplete, &ranInline) != CL_SUCCESS ||
        clSetUserEventStatus(gate, CL_COMPLETE) != CL_SUCCESS) {
        std::fprintf(stderr, "canary: OpenCL setup failed\n");
        return 3;
    }
    while (g_stage.load(std::memory_order_relaxed) != 1 && !ranInline)
        std::this_thread::yield();
    if (ranInline) {
        std::fprintf(stderr, "canary: the callback ran on the main thread, no race to report\n");
        return 3; // non-zero, but without TSan's report the entry still fails
    }
    ++g_racy;
    g_stage.store(2, std::memory_order_relaxed);
    clFinish(queue);
    clReleaseEvent(marker);
    clReleaseEvent(gate);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "";
    if (!std::strcmp(what, "heap-overflow"))
        return heapOverflow();
    if (!std::strcmp(what, "leak"))
        return leak();
    if (!std::strcmp(what, "undefined"))
        return undefinedBehaviour();
    if (!std::strcmp(what, "race"))
        return race();
    if (!std::strcmp(what, "race-runtime-thread"))
        return runtimeThreadRace();
    std::fprintf(stderr, "usage: %s heap-overflow|leak|undefined|race|race-runtime-thread\n",
                 argv[0]);
    return 2;
}
