// Device-side enqueue (OpenCL C 2.0 enqueue_kernel) through the API: on-device queue creation,
// queries and errors, clSetDefaultDeviceCommandQueue, and kernels that enqueue children (blocks
// with captures and __local arguments, events, markers, user events, the get_kernel_* queries,
// a recursive subdivision, a kernel that enqueues its own next pass, a queue_t argument), with
// bad inputs (a full queue, an invalid ndrange, a host queue as queue_t, a released event and an
// event kept from an earlier launch in wait lists, capture_event_profiling_info given NULL, a name
// it does not know and, with DUET_KERNEL_CHECKS, a destination past the end of a buffer). Runs on
// the CPU device (device_enqueue_test) and on the GCN model (device_enqueue_gcn_test); on a device
// without device-side enqueue the [refused] case checks that on-device queues are refused the
// spec's way.
#include "support/cl_test.hpp"
#include "support/guarded_context.hpp"
#include "support/scoped_env.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

cl_device_device_enqueue_capabilities enqueueCaps(cl_device_id d) {
    cl_device_device_enqueue_capabilities c = 0;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, sizeof c, &c, nullptr));
    return c;
}

bool hasFeature(cl_device_id d, const std::string& name) {
    size_t bytes = 0;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &bytes));
    std::vector<cl_name_version> features(bytes / sizeof(cl_name_version));
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_FEATURES, bytes, features.data(), nullptr));
    return std::any_of(features.begin(), features.end(),
                       [&](const cl_name_version& f) { return name == f.name; });
}

cl_uint deviceUint(cl_device_id d, cl_device_info what) {
    cl_uint v = 0;
    REQUIRE_CL(clGetDeviceInfo(d, what, sizeof v, &v, nullptr));
    return v;
}

size_t deviceSize(cl_device_id d, cl_device_info what) {
    size_t v = 0;
    REQUIRE_CL(clGetDeviceInfo(d, what, sizeof v, &v, nullptr));
    return v;
}

/// A host queue plus the default on-device queue (CL_QUEUE_SIZE `size`, 0: the device's
/// preferred size).
struct WithDeviceQueue : WithQueue {
    cl_command_queue deviceQueue = nullptr;
    explicit WithDeviceQueue(cl_uint size = 0) {
        REQUIRE((enqueueCaps(device) & CL_DEVICE_QUEUE_SUPPORTED));
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                       CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT |
                                           CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                       size ? cl_queue_properties(CL_QUEUE_SIZE) : 0, size, 0};
        cl_int err = CL_SUCCESS;
        deviceQueue = clCreateCommandQueueWithProperties(context, device, props, &err);
        REQUIRE(err == CL_SUCCESS);
    }
    ~WithDeviceQueue() { clReleaseCommandQueue(deviceQueue); }

    /// Runs kernel `name` of `source` (built as OpenCL C 2.0) over `global` work-items with
    /// `args` (cl_mem or by-value ints given as {pointer, size}).
    void run(const std::string& source, const char* name, size_t global,
             std::vector<std::pair<const void*, size_t>> args, size_t local = 0,
             const char* options = "-cl-std=CL2.0") {
        cl_program p = buildProgram(context, device, source, options);
        cl_int err = CL_SUCCESS;
        cl_kernel k = clCreateKernel(p, name, &err);
        REQUIRE(err == CL_SUCCESS);
        for (cl_uint i = 0; i < args.size(); ++i)
            REQUIRE_CL(clSetKernelArg(k, i, args[i].second, args[i].first));
        cl_event done = nullptr;
        REQUIRE_CL(clEnqueueNDRangeKernel(queue, k, 1, nullptr, &global, local ? &local : nullptr,
                                          0, nullptr, &done));
        REQUIRE_CL(clWaitForEvents(1, &done));
        cl_int status = 1;
        REQUIRE_CL(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                  nullptr));
        CHECK(status == CL_COMPLETE);
        clReleaseEvent(done);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
};

} // namespace

TEST_CASE("device enqueue: device queries", "[api][device_enqueue][query]") {
    cl_device_id d = defaultDevice();
    const auto caps = enqueueCaps(d);
    cl_command_queue_properties props = 0;
    REQUIRE_CL(
        clGetDeviceInfo(d, CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, sizeof props, &props, nullptr));
    const cl_uint preferred = deviceUint(d, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE);
    const cl_uint max = deviceUint(d, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE);
    const cl_uint queues = deviceUint(d, CL_DEVICE_MAX_ON_DEVICE_QUEUES);
    const cl_uint events = deviceUint(d, CL_DEVICE_MAX_ON_DEVICE_EVENTS);
    if (caps & CL_DEVICE_QUEUE_SUPPORTED) {
        // The full profile's minimums (OpenCL 3.0 table of device queries).
        CHECK((props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE));
        CHECK((props & CL_QUEUE_PROFILING_ENABLE));
        CHECK(preferred >= 16 * 1024);
        CHECK(max >= 256 * 1024);
        CHECK(preferred <= max);
        CHECK(queues >= 1);
        CHECK(events >= 1024);
        CHECK(hasFeature(d, "__opencl_c_device_enqueue"));
    } else {
        CHECK(caps == 0);
        CHECK(props == 0);
        CHECK(preferred == 0);
        CHECK(max == 0);
        CHECK(queues == 0);
        CHECK(events == 0);
        CHECK_FALSE(hasFeature(d, "__opencl_c_device_enqueue"));
    }
}

TEST_CASE("device enqueue: refused without support", "[api][device_enqueue][refused]") {
    WithQueue f;
    if (enqueueCaps(f.device) != 0) {
        WARN("the device under test has device-side enqueue");
        return;
    }
    cl_int err = CL_SUCCESS;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                   CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    CHECK(clCreateCommandQueueWithProperties(f.context, f.device, props, &err) == nullptr);
    CHECK(err == CL_INVALID_QUEUE_PROPERTIES);
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clSetDefaultDeviceCommandQueue(f.context, f.device, f.queue));
    // enqueue_kernel is not declared for OpenCL C 3.0 without __opencl_c_device_enqueue.
    const char* src = "kernel void k(global int* p) {\n"
                      "  enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT,\n"
                      "                 ndrange_1D(1), ^{ p[0] = 1; });\n"
                      "}\n";
    cl_program p = clCreateProgramWithSource(f.context, 1, &src, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(clBuildProgram(p, 1, &f.device, "-cl-std=CL3.0", nullptr, nullptr) ==
          CL_BUILD_PROGRAM_FAILURE);
    clReleaseProgram(p);
}

TEST_CASE("device enqueue: on-device queues, queries and errors", "[api][device_enqueue]") {
    WithQueue f;
    if (!(enqueueCaps(f.device) & CL_DEVICE_QUEUE_SUPPORTED)) {
        WARN("no device-side enqueue on the device under test");
        return;
    }
    cl_int err = CL_SUCCESS;
    const cl_uint maxSize = deviceUint(f.device, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE);
    const cl_uint preferred = deviceUint(f.device, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE);

    // Bad combinations: CL_INVALID_VALUE.
    cl_queue_properties inOrder[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE, 0};
    CHECK(clCreateCommandQueueWithProperties(f.context, f.device, inOrder, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    cl_queue_properties defaultOnly[] = {
        CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE_DEFAULT | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        0};
    CHECK(clCreateCommandQueueWithProperties(f.context, f.device, defaultOnly, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    cl_queue_properties sizeOnHost[] = {CL_QUEUE_SIZE, 4096, 0};
    CHECK(clCreateCommandQueueWithProperties(f.context, f.device, sizeOnHost, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    cl_queue_properties tooBig[] = {CL_QUEUE_PROPERTIES,
                                    CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                    CL_QUEUE_SIZE, cl_queue_properties(maxSize) + 1, 0};
    CHECK(clCreateCommandQueueWithProperties(f.context, f.device, tooBig, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    // clCreateCommandQueue (OpenCL 1.x) makes host queues only.
    CHECK(clCreateCommandQueue(f.context, f.device,
                               CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                               &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);

    // A plain on-device queue: its size, no default yet.
    cl_queue_properties plain[] = {CL_QUEUE_PROPERTIES,
                                   CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue q1 = clCreateCommandQueueWithProperties(f.context, f.device, plain, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_uint size = 0;
    REQUIRE_CL(clGetCommandQueueInfo(q1, CL_QUEUE_SIZE, sizeof size, &size, nullptr));
    CHECK(size == preferred);
    cl_command_queue def = q1;
    REQUIRE_CL(clGetCommandQueueInfo(q1, CL_QUEUE_DEVICE_DEFAULT, sizeof def, &def, nullptr));
    CHECK(def == nullptr);
    // The host enqueues nothing on an on-device queue.
    CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE, clFinish(q1));
    CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE, clEnqueueMarkerWithWaitList(q1, 0, nullptr, nullptr));
    cl_mem b = f.buffer(16);
    int zero = 0;
    CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE,
                 clEnqueueFillBuffer(q1, b, &zero, sizeof zero, 0, 16, 0, nullptr, nullptr));
    // CL_QUEUE_SIZE of a host queue: CL_INVALID_COMMAND_QUEUE.
    CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE,
                 clGetCommandQueueInfo(f.queue, CL_QUEUE_SIZE, sizeof size, &size, nullptr));

    // The default one, with a size; asking again gives the same queue.
    cl_queue_properties withDefault[] = {CL_QUEUE_PROPERTIES,
                                         CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT |
                                             CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                         CL_QUEUE_SIZE, 64 * 1024, 0};
    cl_command_queue q2 =
        clCreateCommandQueueWithProperties(f.context, f.device, withDefault, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clGetCommandQueueInfo(q2, CL_QUEUE_SIZE, sizeof size, &size, nullptr));
    CHECK(size == 64 * 1024);
    REQUIRE_CL(clGetCommandQueueInfo(q1, CL_QUEUE_DEVICE_DEFAULT, sizeof def, &def, nullptr));
    CHECK(def == q2);
    cl_command_queue again =
        clCreateCommandQueueWithProperties(f.context, f.device, withDefault, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(again == q2);
    clReleaseCommandQueue(again);

    // clSetDefaultDeviceCommandQueue: replaceable default; errors.
    REQUIRE((enqueueCaps(f.device) & CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT));
    REQUIRE_CL(clSetDefaultDeviceCommandQueue(f.context, f.device, q1));
    REQUIRE_CL(clGetCommandQueueInfo(q2, CL_QUEUE_DEVICE_DEFAULT, sizeof def, &def, nullptr));
    CHECK(def == q1);
    CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE,
                 clSetDefaultDeviceCommandQueue(f.context, f.device, f.queue));
    CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE,
                 clSetDefaultDeviceCommandQueue(f.context, f.device, nullptr));
    CHECK_CL_ERR(CL_INVALID_CONTEXT, clSetDefaultDeviceCommandQueue(nullptr, f.device, q1));
    CHECK_CL_ERR(CL_INVALID_DEVICE, clSetDefaultDeviceCommandQueue(f.context, nullptr, q1));

    clReleaseMemObject(b);
    clReleaseCommandQueue(q1);
    clReleaseCommandQueue(q2);
    // The default went away with its queue.
    cl_command_queue q3 = clCreateCommandQueueWithProperties(f.context, f.device, plain, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clGetCommandQueueInfo(q3, CL_QUEUE_DEVICE_DEFAULT, sizeof def, &def, nullptr));
    CHECK(def == nullptr);
    clReleaseCommandQueue(q3);

    // CL_DEVICE_MAX_ON_DEVICE_QUEUES besides the default one; one more: CL_OUT_OF_RESOURCES.
    cl_command_queue dq =
        clCreateCommandQueueWithProperties(f.context, f.device, withDefault, &err);
    REQUIRE(err == CL_SUCCESS);
    std::vector<cl_command_queue> all;
    for (cl_uint i = 0; i < deviceUint(f.device, CL_DEVICE_MAX_ON_DEVICE_QUEUES); ++i) {
        all.push_back(clCreateCommandQueueWithProperties(f.context, f.device, plain, &err));
        REQUIRE(err == CL_SUCCESS);
    }
    CHECK(clCreateCommandQueueWithProperties(f.context, f.device, plain, &err) == nullptr);
    CHECK(err == CL_OUT_OF_RESOURCES);
    for (cl_command_queue q : all)
        clReleaseCommandQueue(q);
    clReleaseCommandQueue(dq);
}

TEST_CASE("device enqueue: blocks with captures, __local arguments, flags",
          "[api][device_enqueue][kernels]") {
    WithDeviceQueue f;
    const size_t n = 1000;
    cl_mem out = f.buffer(n * sizeof(int));
    cl_mem status = f.buffer(8 * sizeof(int));
    const char* src = R"(
kernel void parent(global int* out, global int* status, int n) {
  if (get_global_id(0) != 0) return;
  queue_t q = get_default_queue();
  int scale = 3;
  // WAIT_KERNEL: a block capturing a pointer and a value.
  status[0] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(n),
                             ^{ out[get_global_id(0)] = scale * (int)get_global_id(0); });
  // A block with two __local arguments: every group sums its ids in local memory.
  status[1] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(64, 16),
      ^(local void* a, local void* b) {
        local int* la = (local int*)a;
        local int* lb = (local int*)b;
        la[get_local_id(0)] = (int)get_global_id(0);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) == 0) {
          int s = 0;
          for (int i = 0; i < 16; ++i) s += la[i];
          lb[0] = s;
          status[4 + get_group_id(0)] = lb[0];
        }
      }, 16u * sizeof(int), 4u);
  status[2] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP, ndrange_1D(1),
                             ^{ status[3] = get_global_size(0) + 41; });
}
)";
    int nn = int(n);
    f.run(src, "parent", 4, {{&out, sizeof out}, {&status, sizeof status}, {&nn, sizeof nn}});
    auto got = f.read<int>(out, n);
    for (size_t i = 0; i < n; ++i)
        REQUIRE(got[i] == int(3 * i));
    auto st = f.read<int>(status, 8);
    CHECK(st[0] == 0);
    CHECK(st[1] == 0);
    CHECK(st[2] == 0);
    CHECK(st[3] == 42);
    for (int g = 0; g < 4; ++g) // sum of 16g .. 16g+15
        CHECK(st[4 + g] == 16 * 16 * g + 120);
    clReleaseMemObject(out);
    clReleaseMemObject(status);
}

TEST_CASE("device enqueue: events, markers, user events, queries",
          "[api][device_enqueue][kernels]") {
    WithDeviceQueue f;
    cl_mem out = f.buffer(16 * sizeof(long));
    const char* src = R"(
kernel void parent(global long* out, global long* data) {
  queue_t q = get_default_queue();
  clk_event_t first, second, marker;
  clk_event_t user = create_user_event();
  out[0] = is_valid_event(user);
  // first writes, second (after first and the user event) reads what first wrote.
  out[1] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(8), 0, NULL, &first,
                          ^{ data[get_global_id(0)] = 10 + get_global_id(0); });
  clk_event_t deps[2] = {first, user};
  out[2] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(8), 2, deps, &second,
                          ^{ data[8 + get_global_id(0)] = 2 * data[get_global_id(0)]; });
  out[3] = enqueue_marker(q, 1, &second, &marker);
  out[4] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &marker, NULL,
                          ^{ out[5] = data[15]; });
  capture_event_profiling_info(second, CLK_PROFILING_COMMAND_EXEC_TIME, &out[8]);
  set_user_event_status(user, CL_COMPLETE);
  release_event(user);
  out[6] = is_valid_event(user);
  release_event(first);
  release_event(second);
  release_event(marker);
  out[7] = get_kernel_work_group_size(^{ data[0] = 0; });
  out[10] = get_kernel_preferred_work_group_size_multiple(^{ data[0] = 0; });
  out[13] = is_valid_event(CLK_NULL_EVENT);
  out[14] = enqueue_marker(q, 0, NULL, &marker);
}
)";
    cl_mem data = f.buffer(16 * sizeof(long));
    f.run(src, "parent", 1, {{&out, sizeof out}, {&data, sizeof data}});
    auto got = f.read<cl_long>(out, 16);
    CHECK(got[0] == 1);
    CHECK(got[1] == 0);
    CHECK(got[2] == 0);
    CHECK(got[3] == 0);
    CHECK(got[4] == 0);
    CHECK(got[5] == 2 * (10 + 7));
    CHECK(got[6] == 0);
    CHECK(got[7] >= 1);
    CHECK(got[10] == cl_long(deviceSize(f.device, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)));
    // The sub-group queries: OpenCL C 3.0 with __opencl_c_subgroups (no cl_khr_subgroups).
    const char* sg = R"(
kernel void sg(global long* out, global long* data) {
  out[11] = get_kernel_sub_group_count_for_ndrange(ndrange_1D(64, 32), ^{ data[0] = 0; });
  out[12] = get_kernel_max_sub_group_size_for_ndrange(ndrange_1D(64, 32), ^{ data[0] = 0; });
}
)";
    f.run(sg, "sg", 1, {{&out, sizeof out}, {&data, sizeof data}}, 0, "-cl-std=CL3.0");
    got = f.read<cl_long>(out, 16);
    const cl_long sgSize =
        std::min<cl_long>(32, deviceSize(f.device, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE));
    CHECK(got[12] == sgSize);
    CHECK(got[11] == (32 + sgSize - 1) / sgSize);
    CHECK(got[13] == 0);
    CHECK(got[14] == -57); // CLK_INVALID_EVENT_WAIT_LIST
    // Execution time, then time to completion including children: both set, in order.
    CHECK(got[8] > 0);
    CHECK(got[9] >= got[8]);
    clReleaseMemObject(out);
    clReleaseMemObject(data);
}

TEST_CASE("device enqueue: recursive subdivision (the AMD guide's example)",
          "[api][device_enqueue][kernels]") {
    // Each kernel instance owns a range; it splits ranges above the threshold in two and
    // enqueues a child for each half, and sums small ones into the total with an atomic.
    WithDeviceQueue f(1024 * 1024);
    const int n = 1 << 15;
    std::vector<int> host(n);
    std::iota(host.begin(), host.end(), 1);
    cl_mem in = f.buffer(n * sizeof(int), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, host.data());
    cl_mem total = f.buffer(2 * sizeof(int));
    const char* src = R"(
void split(global const int* in, global int* total, int begin, int end) {
  if (end - begin <= 256) {
    int s = 0;
    for (int i = begin; i < end; ++i) s += in[i];
    atomic_add(&total[0], s);
    atomic_add(&total[1], 1);
    return;
  }
  int mid = begin + (end - begin) / 2;
  queue_t q = get_default_queue();
  int a = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),
                         ^{ split(in, total, begin, mid); });
  int b = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),
                         ^{ split(in, total, mid, end); });
  if (a != CLK_SUCCESS || b != CLK_SUCCESS) atomic_add(&total[1], 1000000);
}
kernel void root(global const int* in, global int* total, int n) {
  split(in, total, 0, n);
}
)";
    int zero[2] = {0, 0};
    REQUIRE_CL(
        clEnqueueWriteBuffer(f.queue, total, CL_TRUE, 0, sizeof zero, zero, 0, nullptr, nullptr));
    int nn = n;
    f.run(src, "root", 1, {{&in, sizeof in}, {&total, sizeof total}, {&nn, sizeof nn}});
    auto got = f.read<int>(total, 2);
    CHECK(got[0] == int(cl_long(n) * (n + 1) / 2));
    CHECK(got[1] == n / 256); // leaves, and no failed enqueue
    clReleaseMemObject(in);
    clReleaseMemObject(total);
}

TEST_CASE("device enqueue: a kernel that enqueues its own next pass",
          "[api][device_enqueue][kernels]") {
    // Jacobi smoothing of a 1D array until no value changes by more than a tolerance: each
    // pass's single-work-item controller (the last work-item) checks the change flag and
    // enqueues the next pass (WAIT_KERNEL) or stops.
    WithDeviceQueue f;
    const int n = 64;
    std::vector<float> host(n, 0.0f);
    host[0] = 1.0f;
    host[n - 1] = 1.0f;
    cl_mem a = f.buffer(n * sizeof(float), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.data());
    cl_mem b = f.buffer(n * sizeof(float), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.data());
    cl_mem state = f.buffer(4 * sizeof(int));
    const char* src = R"(
void step(global float* from, global float* to, global int* state, int n);
void pass(global float* from, global float* to, global int* state, int n) {
  state[1] = 0; // changed flag, written before the pass's kernel runs
  state[0] += 1; // passes
  enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(n),
                 ^{ step(from, to, state, n); });
}
void step(global float* from, global float* to, global int* state, int n) {
  int i = get_global_id(0);
  float v = from[i];
  if (i > 0 && i < n - 1) v = 0.5f * (from[i - 1] + from[i + 1]);
  to[i] = v;
  if (fabs(v - from[i]) > 1e-3f) atomic_or(&state[1], 1);
  // Every work-item of the pass has run before its children: the last one's child checks.
  if (i == n - 1)
    enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(1), ^{
      if (state[1] && state[0] < 100000) pass(to, from, state, n);
      else state[2] = 1;
    });
}
kernel void start(global float* a, global float* b, global int* state, int n) {
  pass(a, b, state, n);
}
)";
    int zero[4] = {0, 0, 0, 0};
    REQUIRE_CL(
        clEnqueueWriteBuffer(f.queue, state, CL_TRUE, 0, sizeof zero, zero, 0, nullptr, nullptr));
    int nn = n;
    f.run(src, "start", 1,
          {{&a, sizeof a}, {&b, sizeof b}, {&state, sizeof state}, {&nn, sizeof nn}});
    auto st = f.read<int>(state, 4);
    CHECK(st[2] == 1); // converged
    CHECK(st[0] > 10);
    CHECK(st[0] < 100000);
    // Converged towards the straight line between the two fixed ends (all 1.0): every value
    // rose from 0 and none passed 1.
    auto va = f.read<float>(st[0] % 2 ? b : a, n);
    CHECK(va[0] == 1.0f);
    CHECK(va[n / 2] > 0.1f);
    CHECK(va[n / 2] <= 1.0f);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(state);
}

TEST_CASE("device enqueue: bad inputs in kernels", "[api][device_enqueue][kernels]") {
    // A small queue: 4 KiB holds a handful of commands; many work-items enqueue at once.
    WithDeviceQueue f(4096);
    const size_t n = 256;
    cl_mem codes = f.buffer(n * sizeof(int));
    cl_mem count = f.buffer(sizeof(int));
    const char* src = R"(
kernel void flood(global int* codes, global int* count) {
  codes[get_global_id(0)] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT,
                                           ndrange_1D(1), ^{ atomic_inc(count); });
}
kernel void bad(global int* codes) {
  queue_t q = get_default_queue();
  ndrange_t zero = ndrange_1D(0);
  codes[0] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, zero, ^{ codes[9] = 1; });
  codes[1] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(64, 65536),
                            ^{ codes[9] = 1; });
  codes[2] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(4),
                            ^(local void* l) { codes[9] = 1; }, 0u);
  clk_event_t none = CLK_NULL_EVENT;
  codes[3] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(4), 1, &none, NULL,
                            ^{ codes[9] = 1; });
}
)";
    int zero = 0;
    REQUIRE_CL(
        clEnqueueWriteBuffer(f.queue, count, CL_TRUE, 0, sizeof zero, &zero, 0, nullptr, nullptr));
    f.run(src, "flood", n, {{&codes, sizeof codes}, {&count, sizeof count}}, 64);
    auto got = f.read<int>(codes, n);
    const int ok = int(std::count(got.begin(), got.end(), 0));
    const int full = int(std::count(got.begin(), got.end(), -161)); // CLK_DEVICE_QUEUE_FULL
    CHECK(ok + full == int(n));
    CHECK(full > 0);
    CHECK(ok > 0);
    CHECK(f.read<int>(count, 1)[0] == ok); // every accepted child ran, no refused one did

    std::vector<int> clear(n, 7);
    REQUIRE_CL(clEnqueueWriteBuffer(f.queue, codes, CL_TRUE, 0, n * sizeof(int), clear.data(), 0,
                                    nullptr, nullptr));
    f.run(src, "bad", 1, {{&codes, sizeof codes}});
    got = f.read<int>(codes, 10);
    CHECK(got[0] == -160); // CLK_INVALID_NDRANGE: global size 0
    CHECK(got[1] == -160); // CLK_INVALID_NDRANGE: local size beyond the device's
    CHECK(got[2] == -51);  // CLK_INVALID_ARG_SIZE: a __local block of 0 bytes
    CHECK(got[3] == -57);  // CLK_INVALID_EVENT_WAIT_LIST
    CHECK(got[9] == 7);    // none of them ran
    clReleaseMemObject(codes);
    clReleaseMemObject(count);
}

TEST_CASE("device enqueue: queue_t arguments and events from elsewhere",
          "[api][device_enqueue][kernels]") {
    WithDeviceQueue f;
    cl_mem out = f.buffer(4 * sizeof(int));
    cl_mem store = f.buffer(sizeof(cl_ulong));
    const char* src = R"(
kernel void viaArg(queue_t q, global int* out) {
  out[0] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(4),
                          ^{ atomic_add(&out[1], 1); });
}
kernel void released(global int* out) {
  queue_t q = get_default_queue();
  clk_event_t e;
  out[0] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 0, NULL, &e,
                          ^{ atomic_add(&out[1], 1); });
  release_event(e);
  out[2] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &e, NULL,
                          ^{ atomic_add(&out[1], 100); });
  out[3] = is_valid_event(e);
}
kernel void keep(global ulong* store, global int* out) {
  clk_event_t e = create_user_event();
  *(global clk_event_t*)store = e;
  out[0] = is_valid_event(e);
  set_user_event_status(e, CL_COMPLETE);
}
kernel void reuse(global ulong* store, global int* out) {
  clk_event_t e = *(global clk_event_t*)store;
  out[0] = is_valid_event(e);
  out[1] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &e,
                          NULL, ^{ out[2] = 1; });
}
)";
    auto clear = [&] {
        const int zero[4] = {0, 0, 0, 0};
        REQUIRE_CL(
            clEnqueueWriteBuffer(f.queue, out, CL_TRUE, 0, sizeof zero, zero, 0, nullptr, nullptr));
    };
    // The on-device queue as a queue_t argument: the children run.
    clear();
    f.run(src, "viaArg", 1, {{&f.deviceQueue, sizeof f.deviceQueue}, {&out, sizeof out}});
    auto got = f.read<int>(out, 4);
    CHECK(got[0] == 0);
    CHECK(got[1] == 4);
    // A host queue is no queue_t: CLK_INVALID_QUEUE, nothing runs.
    clear();
    f.run(src, "viaArg", 1, {{&f.queue, sizeof f.queue}, {&out, sizeof out}});
    got = f.read<int>(out, 4);
    CHECK(got[0] == -102); // CLK_INVALID_QUEUE
    CHECK(got[1] == 0);
    // A released event in a wait list: CLK_INVALID_EVENT_WAIT_LIST; its own command still ran.
    clear();
    f.run(src, "released", 1, {{&out, sizeof out}});
    got = f.read<int>(out, 4);
    CHECK(got[0] == 0);
    CHECK(got[1] == 1);
    CHECK(got[2] == -57);
    CHECK(got[3] == 0);
    // An event kept in memory from an earlier host launch is not an event of this one.
    clear();
    f.run(src, "keep", 1, {{&store, sizeof store}, {&out, sizeof out}});
    CHECK(f.read<int>(out, 1)[0] == 1);
    clear();
    f.run(src, "reuse", 1, {{&store, sizeof store}, {&out, sizeof out}});
    got = f.read<int>(out, 4);
    CHECK(got[0] == 0);
    CHECK(got[1] == -57);
    CHECK(got[2] == 0);
    clReleaseMemObject(out);
    clReleaseMemObject(store);
}

TEST_CASE("device enqueue: non-uniform child work-groups, profiling of a completed event",
          "[api][device_enqueue][kernels]") {
    WithDeviceQueue f;
    cl_mem out = f.buffer(8 * sizeof(cl_long));
    const char* src = R"(
kernel void parent(global long* out) {
  queue_t q = get_default_queue();
  // 100 work-items in groups of 32 (OpenCL C 2.0): the last group has 4.
  out[0] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(100, 32), ^{
    atom_inc(&out[1]);
    if (get_local_size(0) != 32) atom_inc(&out[2]);
    if (get_enqueued_local_size(0) != 32) atom_inc(&out[3]);
  });
  // A child reads the times of an event that completed before it started.
  clk_event_t e;
  out[4] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 0, NULL, &e,
                          ^{ out[5] = 1; });
  enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &e, NULL, ^{
    capture_event_profiling_info(e, CLK_PROFILING_COMMAND_EXEC_TIME, (global void*)&out[6]);
    out[5] = out[6] > 0 && out[7] >= out[6] ? 2 : -2;
    release_event(e);
  });
}
)";
    const cl_long zero[8] = {};
    REQUIRE_CL(
        clEnqueueWriteBuffer(f.queue, out, CL_TRUE, 0, sizeof zero, zero, 0, nullptr, nullptr));
    f.run(src, "parent", 1, {{&out, sizeof out}});
    auto got = f.read<cl_long>(out, 8);
    CHECK(got[0] == 0);
    CHECK(got[1] == 100);
    CHECK(got[2] == 4);
    CHECK(got[3] == 0);
    CHECK(got[4] == 0);
    CHECK(got[5] == 2);
    clReleaseMemObject(out);
}

TEST_CASE("device enqueue: each device of a context has its own default on-device queue",
          "[api][device_enqueue][devices]") {
    // device_enqueue_all_devices_test: DUET_DEVICES=cpu,gcn. A context of every device with
    // device-side enqueue; each gets its default on-device queue, and a kernel on each
    // enqueues through get_default_queue() into its own device's.
    cl_platform_id platform = platformUnderTest();
    cl_uint n = 0;
    REQUIRE_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    std::vector<cl_device_id> all(n), devices;
    REQUIRE_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, all.data(), nullptr));
    for (cl_device_id d : all)
        if (enqueueCaps(d) & CL_DEVICE_QUEUE_SUPPORTED)
            devices.push_back(d);
    if (devices.size() < 2) {
        WARN("fewer than two devices with device-side enqueue");
        return;
    }
    cl_int err = CL_SUCCESS;
    cl_context context =
        clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const char* src = R"(
kernel void parent(global int* out) {
  out[0] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(8),
                          ^{ atomic_inc(&out[1]); });
}
)";
    cl_program p = clCreateProgramWithSource(context, 1, &src, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clBuildProgram(p, cl_uint(devices.size()), devices.data(), "-cl-std=CL2.0", nullptr,
                              nullptr));
    std::vector<cl_command_queue> defaults;
    for (cl_device_id d : devices) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                       CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT |
                                           CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                       0};
        defaults.push_back(clCreateCommandQueueWithProperties(context, d, props, &err));
        REQUIRE(err == CL_SUCCESS);
        cl_device_id owner = nullptr;
        REQUIRE_CL(
            clGetCommandQueueInfo(defaults.back(), CL_QUEUE_DEVICE, sizeof owner, &owner, nullptr));
        CHECK(owner == d);
        cl_command_queue def = nullptr;
        REQUIRE_CL(clGetCommandQueueInfo(defaults.back(), CL_QUEUE_DEVICE_DEFAULT, sizeof def, &def,
                                         nullptr));
        CHECK(def == defaults.back());
    }
    for (size_t i = 1; i < defaults.size(); ++i)
        CHECK(defaults[i] != defaults[0]);
    for (cl_device_id d : devices) {
        INFO(deviceString(d, CL_DEVICE_NAME));
        cl_command_queue q = clCreateCommandQueueWithProperties(context, d, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 2 * sizeof(int), nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        const int zero[2] = {7, 0};
        REQUIRE_CL(
            clEnqueueWriteBuffer(q, out, CL_TRUE, 0, sizeof zero, zero, 0, nullptr, nullptr));
        cl_kernel k = clCreateKernel(p, "parent", &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
        const size_t one = 1;
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
        int got[2] = {-1, -1};
        REQUIRE_CL(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, nullptr, nullptr));
        CHECK(got[0] == 0);
        CHECK(got[1] == 8);
        clReleaseKernel(k);
        clReleaseMemObject(out);
        clReleaseCommandQueue(q);
    }
    for (cl_command_queue q : defaults)
        clReleaseCommandQueue(q);
    clReleaseProgram(p);
    clReleaseContext(context);
}

TEST_CASE("device enqueue: released events free their slots for later ones",
          "[api][device_enqueue][kernels]") {
    // A chain of passes, each making an event and releasing it once its successor waits on
    // it: more events in all than CL_DEVICE_MAX_ON_DEVICE_EVENTS, never more than two at once.
    WithDeviceQueue f;
    const cl_uint maxEvents = deviceUint(f.device, CL_DEVICE_MAX_ON_DEVICE_EVENTS);
    const int passes = int(maxEvents) + 200;
    cl_mem state = f.buffer(4 * sizeof(int));
    const char* src = R"(
void pass(global int* state, int left, clk_event_t prev);
void pass(global int* state, int left, clk_event_t prev) {
  state[0] += 1;
  if (left == 0) { release_event(prev); return; }
  clk_event_t mine;
  int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &prev,
                         &mine, ^{ state[2] += 1; });
  release_event(prev);
  if (r != CLK_SUCCESS) { state[1] = r; return; }
  enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),
                 ^{ pass(state, left - 1, mine); });
}
kernel void start(global int* state, int passes) {
  clk_event_t first = create_user_event();
  set_user_event_status(first, CL_COMPLETE);
  pass(state, passes, first);
}
)";
    const int zero[4] = {0, 0, 0, 0};
    REQUIRE_CL(
        clEnqueueWriteBuffer(f.queue, state, CL_TRUE, 0, sizeof zero, zero, 0, nullptr, nullptr));
    f.run(src, "start", 1, {{&state, sizeof state}, {&passes, sizeof passes}});
    auto got = f.read<int>(state, 4);
    CHECK(got[1] == 0); // no CLK_EVENT_ALLOCATION_FAILURE
    CHECK(got[0] == passes + 1);
    CHECK(got[2] == passes);
    clReleaseMemObject(state);
}

TEST_CASE("device enqueue: capture_event_profiling_info with bad destinations and names",
          "[api][device_enqueue][kernels][profiling]") {
    // OpenCL C: `value` points at two 64-bit values, written once the event completes; the one
    // name is CLK_PROFILING_COMMAND_EXEC_TIME. NULL is ignored (as OpenCL's NULL destinations
    // are) and another name captures nothing, checked or not; with DUET_KERNEL_CHECKS a
    // destination outside the kernel's buffers stops the launch as any checked write does, and
    // nothing is written past the buffer when the child completes later.
    GuardedContext g(CL_DEVICE_TYPE_ALL);
    REQUIRE((enqueueCaps(g.device) & CL_DEVICE_QUEUE_SUPPORTED));
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                   CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT |
                                       CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                   0};
    cl_int err = CL_SUCCESS;
    cl_command_queue deviceQueue =
        clCreateCommandQueueWithProperties(g.context, g.device, props, &err);
    REQUIRE(err == CL_SUCCESS);
    const char* src = R"(
kernel void ignored(global long* out, global long* none) {
  queue_t q = get_default_queue();
  clk_event_t e;
  out[0] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 0, NULL, &e,
                          ^{ out[1] = 1; });
  capture_event_profiling_info(e, CLK_PROFILING_COMMAND_EXEC_TIME, 0);
  capture_event_profiling_info(e, CLK_PROFILING_COMMAND_EXEC_TIME, none); // a NULL argument
  capture_event_profiling_info(e, 7, &out[2]);   // not a clk_profiling_info
  capture_event_profiling_info(e, 7, &out[100]); // nothing written: nothing to check
  // The same where the event completed before the call (the times are at hand at once).
  enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &e, NULL, ^{
    capture_event_profiling_info(e, CLK_PROFILING_COMMAND_EXEC_TIME, 0);
    capture_event_profiling_info(e, 7, (global void*)&out[4]);
    out[6] = 1;
    release_event(e);
  });
}
kernel void overrun(global long* out) {
  clk_event_t e;
  out[0] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 0, NULL,
                          &e, ^{ out[1] = 1; });
  capture_event_profiling_info(e, CLK_PROFILING_COMMAND_EXEC_TIME, &out[3]); // 8 bytes past
  release_event(e);
}
)";
    const cl_long sentinel = 0x5a5a5a5a5a5a5a5a;
    for (const char* checks : {"0", "1"}) {
        DYNAMIC_SECTION("DUET_KERNEL_CHECKS=" << checks) {
            ScopedEnv env("DUET_KERNEL_CHECKS", checks);
            // Argument names in the messages on every device, whatever DUET_KERNEL_CHECKS was when
            // the device was created.
            cl_program p = g.build(src, "-cl-std=CL2.0 -cl-kernel-arg-info");
            std::vector<cl_long> init(8, sentinel);
            cl_mem out = g.buffer(8 * sizeof(cl_long), init.data());
            cl_kernel k = g.kernel(p, "ignored");
            setArg(k, 0, out);
            setArg(k, 1, cl_mem(nullptr));
            CHECK(g.run(k, 1) == CL_COMPLETE);
            INFO(g.allMessages());
            auto got = g.read<cl_long>(out, 8);
            CHECK(got[0] == 0);
            CHECK(got[1] == 1);
            for (int i = 2; i < 6; ++i)
                CHECK(got[i] == sentinel); // another name: nothing captured
            CHECK(got[6] == 1);
            clReleaseKernel(k);
            clReleaseMemObject(out);

            if (checks[0] == '1') {
                // `out`: the first 32 bytes of a buffer of 64; the other 32 must stay untouched.
                cl_mem both = g.buffer(8 * sizeof(cl_long), init.data());
                cl_buffer_region region{0, 4 * sizeof(cl_long)};
                cl_mem first =
                    clCreateSubBuffer(both, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
                REQUIRE(err == CL_SUCCESS);
                k = g.kernel(p, "overrun");
                setArg(k, 0, first);
                g.runStopped(k, 1, 0,
                             "kernel 'overrun': out-of-bounds write of 16 bytes at byte offset "
                             "24 of argument 0 'out' (__global long*, a sub-buffer of 32 bytes) "
                             "by work-item 0 (global id)");
                got = g.read<cl_long>(both, 8);
                for (int i = 4; i < 8; ++i)
                    CHECK(got[i] == sentinel);
                clReleaseKernel(k);
                clReleaseMemObject(first);
                clReleaseMemObject(both);
            }
            clReleaseProgram(p);
        }
    }
    clReleaseCommandQueue(deviceQueue);
}
