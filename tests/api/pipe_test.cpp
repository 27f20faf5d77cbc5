// Pipes through the API: device queries, clCreatePipe and clGetPipeInfo, pipe kernel arguments,
// the OpenCL C pipe functions (with and without reservations, work-group reservations, queries)
// in producer/consumer kernels on two queues, and bad inputs. Run on the CPU device (pipe_test)
// and the GCN model (pipe_gcn_test); on a device without pipes (NVIDIA, with the fake driver:
// pipe_nvidia_test) the hidden [refused] case checks that pipes are refused the spec's way.
#include "support/cl_test.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

bool pipeSupport(cl_device_id d) {
    cl_bool b = CL_FALSE;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_PIPE_SUPPORT, sizeof b, &b, nullptr));
    return b == CL_TRUE;
}

cl_uint deviceUint(cl_device_id d, cl_device_info what) {
    cl_uint v = 0;
    REQUIRE_CL(clGetDeviceInfo(d, what, sizeof v, &v, nullptr));
    return v;
}

bool hasFeature(cl_device_id d, const std::string& name) {
    size_t bytes = 0;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &bytes));
    std::vector<cl_name_version> features(bytes / sizeof(cl_name_version));
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_FEATURES, bytes, features.data(), nullptr));
    return std::any_of(features.begin(), features.end(),
                       [&](const cl_name_version& f) { return name == f.name; });
}

/// A context with two in-order queues on the device under test, which must support pipes.
/// "-cl-std=CL2.0" where the device lists OpenCL C 2.0 (pipes are core there), else
/// "-cl-std=CL3.0" (pipes are the __opencl_c_pipes feature).
std::string pipeStd(cl_device_id d) {
    size_t bytes = 0;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_ALL_VERSIONS, 0, nullptr, &bytes));
    std::vector<cl_name_version> versions(bytes / sizeof(cl_name_version));
    REQUIRE_CL(
        clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_ALL_VERSIONS, bytes, versions.data(), nullptr));
    for (const cl_name_version& v : versions)
        if (CL_VERSION_MAJOR(v.version) == 2)
            return "-cl-std=CL2.0";
    return "-cl-std=CL3.0";
}

struct WithPipes : WithQueue {
    cl_command_queue second = nullptr;
    std::vector<cl_program> programs;
    std::string std20; ///< the OpenCL C version option the kernels below build with
    WithPipes() {
        INFO("the device under test must support pipes (pipe_nvidia_test runs [query],[refused])");
        REQUIRE(pipeSupport(device));
        cl_int err;
        second = clCreateCommandQueue(context, device, 0, &err);
        REQUIRE_CL(err);
        std20 = pipeStd(device);
    }
    ~WithPipes() {
        if (second) {
            clFinish(second);
            clReleaseCommandQueue(second);
        }
        for (cl_program p : programs)
            clReleaseProgram(p);
    }
    /// `source` built with the device's pipe OpenCL C version (pipeStd) and `opts`.
    cl_kernel kernel(const std::string& source, const char* name, const std::string& opts = "") {
        cl_program p = buildProgram(context, device, source, std20 + " " + opts);
        REQUIRE(p);
        programs.push_back(p);
        cl_int err;
        cl_kernel k = clCreateKernel(p, name, &err);
        REQUIRE_CL(err);
        return k;
    }
    cl_mem pipe(cl_uint packetSize, cl_uint packets) {
        cl_int err;
        cl_mem m = clCreatePipe(context, 0, packetSize, packets, nullptr, &err);
        REQUIRE_CL(err);
        return m;
    }
    void arg(cl_kernel k, cl_uint i, cl_mem m) { REQUIRE_CL(clSetKernelArg(k, i, sizeof m, &m)); }
    /// Enqueues `k` on `q` over `global` work-items (groups of `local`, 0: the device's
    /// choice) after `wait`; returns its event.
    cl_event launch(cl_command_queue q, cl_kernel k, size_t global, size_t local = 0,
                    cl_event wait = nullptr) {
        cl_event e = nullptr;
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, local ? &local : nullptr,
                                          wait ? 1 : 0, wait ? &wait : nullptr, &e));
        return e;
    }
};

/// Producer: every work-item writes one packet (its value) with write_pipe, and records whether
/// it went in. Consumer: every work-item reads one, records it and whether it came out.
const char* kPlain = R"CLC(
kernel void produce(global const int* in, write_only pipe int p, global int* ok) {
    size_t i = get_global_id(0);
    ok[i] = write_pipe(p, &in[i]) == 0;
}
kernel void consume(read_only pipe int p, global int* out, global int* ok) {
    size_t i = get_global_id(0);
    int v = -1;
    ok[i] = read_pipe(p, &v) == 0;
    out[i] = v;
}
kernel void count(read_only pipe int p, global uint* out) {
    out[0] = get_pipe_num_packets(p);
    out[1] = get_pipe_max_packets(p);
}
)CLC";

} // namespace

TEST_CASE("pipe device queries agree with the feature macro", "[api][pipes][query]") {
    cl_platform_id platform = platformUnderTest();
    cl_uint n = 0;
    REQUIRE_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    std::vector<cl_device_id> devices(n);
    REQUIRE_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr));
    for (cl_device_id d : devices) {
        INFO(deviceString(d, CL_DEVICE_NAME));
        const bool pipes = pipeSupport(d);
        CHECK(hasFeature(d, "__opencl_c_pipes") == pipes);
        cl_device_type type = 0;
        REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, nullptr));
        // The CPU device and the GCN model have pipes (builtins/cpu/pipe.cl on both).
        if ((type & CL_DEVICE_TYPE_CPU) ||
            deviceString(d, CL_DEVICE_NAME).find("GCN") != std::string::npos)
            CHECK(pipes);
        if (pipes) { // the spec's minimums for a device with pipes
            CHECK(deviceUint(d, CL_DEVICE_MAX_PIPE_ARGS) >= 16);
            CHECK(deviceUint(d, CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS) >= 1);
            CHECK(deviceUint(d, CL_DEVICE_PIPE_MAX_PACKET_SIZE) >= 1024);
        } else { // "0 if pipes are not supported"
            CHECK(deviceUint(d, CL_DEVICE_MAX_PIPE_ARGS) == 0);
            CHECK(deviceUint(d, CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS) == 0);
            CHECK(deviceUint(d, CL_DEVICE_PIPE_MAX_PACKET_SIZE) == 0);
        }
    }
}

// Hidden: run by pipe_nvidia_test on the NVIDIA device (fake driver), which has no pipes.
TEST_CASE("a device without pipes refuses them", "[api][pipes][.refused]") {
    WithQueue f;
    REQUIRE_FALSE(pipeSupport(f.device));
    cl_int err = CL_SUCCESS;
    CHECK(clCreatePipe(f.context, 0, 4, 16, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_OPERATION);
    // The pipe qualifier is not OpenCL C 3.0 without __opencl_c_pipes.
    const char* src = "kernel void k(read_only pipe int p) {}";
    cl_program p = clCreateProgramWithSource(f.context, 1, &src, nullptr, &err);
    REQUIRE_CL(err);
    CHECK(clBuildProgram(p, 1, &f.device, "-cl-std=CL3.0", nullptr, nullptr) ==
          CL_BUILD_PROGRAM_FAILURE);
    CHECK(buildLog(p, f.device).find("pipe") != std::string::npos);
    clReleaseProgram(p);
}

TEST_CASE("clCreatePipe and clGetPipeInfo", "[api][pipes]") {
    WithPipes f;
    const cl_uint maxPacket = deviceUint(f.device, CL_DEVICE_PIPE_MAX_PACKET_SIZE);
    cl_int err = CL_SUCCESS;

    SECTION("good pipes answer their queries") {
        cl_mem p = clCreatePipe(f.context, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, 12, 100,
                                nullptr, &err);
        REQUIRE_CL(err);
        cl_uint v = 0;
        REQUIRE_CL(clGetPipeInfo(p, CL_PIPE_PACKET_SIZE, sizeof v, &v, nullptr));
        CHECK(v == 12);
        size_t size = 0;
        REQUIRE_CL(clGetPipeInfo(p, CL_PIPE_MAX_PACKETS, sizeof v, &v, &size));
        CHECK(v == 100);
        CHECK(size == sizeof(cl_uint));
        REQUIRE_CL(clGetPipeInfo(p, CL_PIPE_PROPERTIES, 0, nullptr, &size));
        CHECK(size == 0); // created with NULL properties
        cl_mem_object_type type = 0;
        REQUIRE_CL(clGetMemObjectInfo(p, CL_MEM_TYPE, sizeof type, &type, nullptr));
        CHECK(type == CL_MEM_OBJECT_PIPE);
        cl_mem_flags flags = 0;
        REQUIRE_CL(clGetMemObjectInfo(p, CL_MEM_FLAGS, sizeof flags, &flags, nullptr));
        CHECK(flags == (CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS));
        // Flags 0 mean the default, which CL_MEM_FLAGS reports; given flags are reported as is.
        for (cl_mem_flags given : {cl_mem_flags(0), cl_mem_flags(CL_MEM_HOST_NO_ACCESS)}) {
            cl_mem q = clCreatePipe(f.context, given, 4, 4, nullptr, &err);
            REQUIRE_CL(err);
            REQUIRE_CL(clGetMemObjectInfo(q, CL_MEM_FLAGS, sizeof flags, &flags, nullptr));
            CHECK(flags == (given ? given : CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS));
            clReleaseMemObject(q);
        }
        size_t bytes = 0;
        REQUIRE_CL(clGetMemObjectInfo(p, CL_MEM_SIZE, sizeof bytes, &bytes, nullptr));
        CHECK(bytes >= 12 * 100);

        // Bad queries: a short answer buffer, an unknown name, an object that is not a pipe.
        unsigned char small = 0;
        CHECK_CL_ERR(CL_INVALID_VALUE, clGetPipeInfo(p, CL_PIPE_PACKET_SIZE, 1, &small, nullptr));
        CHECK_CL_ERR(CL_INVALID_VALUE, clGetPipeInfo(p, CL_MEM_SIZE, sizeof v, &v, nullptr));
        cl_mem buf = f.buffer(64);
        CHECK_CL_ERR(CL_INVALID_MEM_OBJECT,
                     clGetPipeInfo(buf, CL_PIPE_PACKET_SIZE, sizeof v, &v, nullptr));
        CHECK_CL_ERR(CL_INVALID_MEM_OBJECT,
                     clGetPipeInfo(nullptr, CL_PIPE_PACKET_SIZE, sizeof v, &v, nullptr));
        // A pipe is not a buffer: host transfers refuse it.
        int host[4];
        CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clEnqueueReadBuffer(f.queue, p, CL_TRUE, 0, sizeof host,
                                                                host, 0, nullptr, nullptr));
        clReleaseMemObject(buf);
        clReleaseMemObject(p);
    }
    SECTION("the largest packet the device reports is accepted") {
        cl_mem p = clCreatePipe(f.context, 0, maxPacket, 2, nullptr, &err);
        CHECK_CL_ERR(CL_SUCCESS, err);
        clReleaseMemObject(p);
        const cl_pipe_properties empty[] = {0};
        p = clCreatePipe(f.context, 0, 4, 2, empty, &err);
        CHECK_CL_ERR(CL_SUCCESS, err);
        clReleaseMemObject(p);
    }
    SECTION("bad arguments get the spec's errors") {
        CHECK(clCreatePipe(nullptr, 0, 4, 16, nullptr, &err) == nullptr);
        CHECK(err == CL_INVALID_CONTEXT);
        for (cl_mem_flags bad :
             std::vector<cl_mem_flags>{CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_MEM_USE_HOST_PTR,
                                       CL_MEM_HOST_READ_ONLY, cl_mem_flags(1) << 40}) {
            INFO("flags " << bad);
            CHECK(clCreatePipe(f.context, bad, 4, 16, nullptr, &err) == nullptr);
            CHECK(err == CL_INVALID_VALUE);
        }
        const cl_pipe_properties props[] = {1, 0};
        CHECK(clCreatePipe(f.context, 0, 4, 16, props, &err) == nullptr);
        CHECK(err == CL_INVALID_VALUE);
        CHECK(clCreatePipe(f.context, 0, 0, 16, nullptr, &err) == nullptr);
        CHECK(err == CL_INVALID_PIPE_SIZE);
        CHECK(clCreatePipe(f.context, 0, maxPacket + 1, 16, nullptr, &err) == nullptr);
        CHECK(err == CL_INVALID_PIPE_SIZE);
        CHECK(clCreatePipe(f.context, 0, 4, 0, nullptr, &err) == nullptr);
        CHECK(err == CL_INVALID_PIPE_SIZE);
        // More than any memory object may hold.
        CHECK(clCreatePipe(f.context, 0, maxPacket, 0xffffffffu, nullptr, &err) == nullptr);
        CHECK(err == CL_MEM_OBJECT_ALLOCATION_FAILURE);
    }
}

TEST_CASE("producer and consumer kernels on two queues", "[api][pipes]") {
    WithPipes f;
    constexpr size_t n = 4096;
    std::vector<int> in(n);
    for (size_t i = 0; i < n; ++i)
        in[i] = int(i * 7 + 3);
    cl_mem src = f.buffer(n * sizeof(int), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in.data());
    cl_mem out = f.buffer(n * sizeof(int));
    cl_mem wrote = f.buffer(n * sizeof(int));
    cl_mem read = f.buffer(n * sizeof(int));
    cl_mem counts = f.buffer(2 * sizeof(cl_uint));
    cl_mem p = f.pipe(sizeof(int), n);

    cl_kernel produce = f.kernel(kPlain, "produce");
    cl_kernel consume = f.kernel(kPlain, "consume");
    cl_kernel count = f.kernel(kPlain, "count");
    f.arg(produce, 0, src);
    f.arg(produce, 1, p);
    f.arg(produce, 2, wrote);
    f.arg(consume, 0, p);
    f.arg(consume, 1, out);
    f.arg(consume, 2, read);
    f.arg(count, 0, p);
    f.arg(count, 1, counts);

    // Producer on the first queue; the packet count after it on the same queue; the consumer
    // on the second queue, after the count (so after the producer) by its event.
    cl_event produced = f.launch(f.queue, produce, n, 64);
    cl_event counted = f.launch(f.queue, count, 1, 1, produced);
    cl_event consumed = f.launch(f.second, consume, n, 64, counted);
    REQUIRE_CL(clWaitForEvents(1, &consumed));
    for (cl_event e : {produced, counted, consumed})
        clReleaseEvent(e);

    const auto okW = f.read<int>(wrote, n);
    const auto okR = f.read<int>(read, n);
    CHECK(std::count(okW.begin(), okW.end(), 1) == n);
    CHECK(std::count(okR.begin(), okR.end(), 1) == n);
    const auto c = f.read<cl_uint>(counts, 2);
    CHECK(c[0] == n); // every packet was in the pipe between the two kernels
    CHECK(c[1] == n);
    // Every packet came out exactly once (work-groups run concurrently: order is free).
    auto got = f.read<int>(out, n);
    std::sort(got.begin(), got.end());
    CHECK(got == in);

    // The pipe is empty now: another consumer gets nothing.
    cl_event again = f.launch(f.second, consume, 16, 16);
    REQUIRE_CL(clWaitForEvents(1, &again));
    clReleaseEvent(again);
    const auto none = f.read<int>(read, 16);
    CHECK(std::count(none.begin(), none.end(), 0) == 16);

    for (cl_kernel k : {produce, consume, count})
        clReleaseKernel(k);
    for (cl_mem m : {src, out, wrote, read, counts, p})
        clReleaseMemObject(m);
}

TEST_CASE("a full pipe refuses writes and an empty one reads", "[api][pipes]") {
    WithPipes f;
    constexpr size_t capacity = 10, n = 64;
    std::vector<int> in(n);
    std::iota(in.begin(), in.end(), 100);
    cl_mem src = f.buffer(n * sizeof(int), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in.data());
    cl_mem out = f.buffer(n * sizeof(int));
    cl_mem wrote = f.buffer(n * sizeof(int));
    cl_mem read = f.buffer(n * sizeof(int));
    cl_mem counts = f.buffer(2 * sizeof(cl_uint));
    cl_mem p = f.pipe(sizeof(int), capacity);
    cl_kernel produce = f.kernel(kPlain, "produce");
    cl_kernel consume = f.kernel(kPlain, "consume");
    cl_kernel count = f.kernel(kPlain, "count");
    f.arg(produce, 0, src);
    f.arg(produce, 1, p);
    f.arg(produce, 2, wrote);
    f.arg(consume, 0, p);
    f.arg(consume, 1, out);
    f.arg(consume, 2, read);
    f.arg(count, 0, p);
    f.arg(count, 1, counts);

    for (int round = 0; round < 3; ++round) { // the ring wraps around
        INFO("round " << round);
        clReleaseEvent(f.launch(f.queue, produce, n, 16));
        clReleaseEvent(f.launch(f.queue, count, 1, 1));
        clReleaseEvent(f.launch(f.queue, consume, n, 16));
        REQUIRE_CL(clFinish(f.queue));
        const auto okW = f.read<int>(wrote, n);
        const auto okR = f.read<int>(read, n);
        CHECK(std::count(okW.begin(), okW.end(), 1) == capacity);
        CHECK(std::count(okR.begin(), okR.end(), 1) == capacity);
        const auto c = f.read<cl_uint>(counts, 2);
        CHECK(c[0] == capacity);
        CHECK(c[1] == capacity);
        // What came out is what went in.
        const auto values = f.read<int>(out, n);
        std::vector<int> sent, got;
        for (size_t i = 0; i < n; ++i) {
            if (okW[i])
                sent.push_back(in[i]);
            if (okR[i])
                got.push_back(values[i]);
        }
        std::sort(sent.begin(), sent.end());
        std::sort(got.begin(), got.end());
        CHECK(got == sent);
    }
    for (cl_kernel k : {produce, consume, count})
        clReleaseKernel(k);
    for (cl_mem m : {src, out, wrote, read, counts, p})
        clReleaseMemObject(m);
}

TEST_CASE("reservations keep a work-item's packets together", "[api][pipes]") {
    WithPipes f;
    // Each work-item reserves 4 packets, writes them out of order, commits; readers reserve 4
    // at a time, so each gets one writer's 4 packets (positions are claimed in blocks of 4).
    const char* src = R"CLC(
typedef struct { int item; short part; char tag; double weight; } Packet;
kernel void produce(write_only pipe Packet p, global int* ok) {
    int i = (int)get_global_id(0);
    reserve_id_t r = reserve_write_pipe(p, 4);
    ok[i] = is_valid_reserve_id(r);
    if (!is_valid_reserve_id(r))
        return;
    for (int k = 3; k >= 0; --k) {
        Packet v = {i, (short)k, (char)(i & 127), i * 0.5 + k};
        ok[i] &= write_pipe(p, r, (uint)k, &v) == 0;
    }
    commit_write_pipe(p, r);
}
kernel void consume(read_only pipe Packet p, global int* items, global int* ok) {
    int i = (int)get_global_id(0);
    reserve_id_t r = reserve_read_pipe(p, 4);
    ok[i] = is_valid_reserve_id(r);
    if (!is_valid_reserve_id(r))
        return;
    int good = 1;
    Packet first;
    read_pipe(p, r, 0, &first);
    for (uint k = 0; k < 4; ++k) {
        Packet v;
        good &= read_pipe(p, r, k, &v) == 0;
        good &= v.item == first.item && v.part == (short)k && v.tag == (char)(first.item & 127) &&
                v.weight == first.item * 0.5 + k;
    }
    // Beyond the reservation: nothing.
    Packet beyond;
    good &= read_pipe(p, r, 4, &beyond) != 0;
    commit_read_pipe(p, r);
    items[i] = first.item;
    ok[i] &= good;
}
kernel void invalid(write_only pipe Packet p, global int* out) {
    reserve_id_t none = CLK_NULL_RESERVE_ID;
    out[0] = is_valid_reserve_id(none);
    out[1] = is_valid_reserve_id(reserve_write_pipe(p, get_pipe_max_packets(p) + 1));
    out[2] = is_valid_reserve_id(reserve_write_pipe(p, 0));
    out[3] = get_pipe_num_packets(p);
}
)CLC";
    constexpr size_t n = 1024;
    cl_mem p = f.pipe(16, 4 * n); // sizeof(Packet)
    cl_mem okW = f.buffer(n * sizeof(int));
    cl_mem okR = f.buffer(n * sizeof(int));
    cl_mem items = f.buffer(n * sizeof(int));
    cl_mem flags = f.buffer(4 * sizeof(int));
    cl_kernel produce = f.kernel(src, "produce");
    cl_kernel consume = f.kernel(src, "consume");
    cl_kernel invalid = f.kernel(src, "invalid");
    f.arg(produce, 0, p);
    f.arg(produce, 1, okW);
    f.arg(consume, 0, p);
    f.arg(consume, 1, items);
    f.arg(consume, 2, okR);
    f.arg(invalid, 0, p);
    f.arg(invalid, 1, flags);
    // The invalid reservations first, on the empty pipe (so that they fail for their own
    // reasons, not because the pipe is full).
    cl_event checked = f.launch(f.queue, invalid, 1, 1);
    cl_event produced = f.launch(f.queue, produce, n, 32, checked);
    cl_event consumed = f.launch(f.second, consume, n, 32, produced);
    REQUIRE_CL(clWaitForEvents(1, &consumed));
    for (cl_event e : {checked, produced, consumed})
        clReleaseEvent(e);
    const auto w = f.read<int>(okW, n);
    const auto r = f.read<int>(okR, n);
    CHECK(std::count(w.begin(), w.end(), 1) == n);
    CHECK(std::count(r.begin(), r.end(), 1) == n);
    auto got = f.read<int>(items, n);
    std::sort(got.begin(), got.end());
    std::vector<int> want(n);
    std::iota(want.begin(), want.end(), 0);
    CHECK(got == want);
    const auto fl = f.read<int>(flags, 4);
    CHECK(fl[0] == 0); // CLK_NULL_RESERVE_ID
    CHECK(fl[1] == 0); // more than the pipe holds
    CHECK(fl[2] == 0); // no packets
    CHECK(fl[3] == 0); // nothing was written yet
    for (cl_kernel k : {produce, consume, invalid})
        clReleaseKernel(k);
    for (cl_mem m : {p, okW, okR, items, flags})
        clReleaseMemObject(m);
}

TEST_CASE("work-group reservations", "[api][pipes]") {
    WithPipes f;
    // A group reserves one packet per work-item; work-item l writes packet l. The consumer's
    // groups (another size) read theirs the same way and check that the blocks of 64 they see
    // are whole producer groups, in order.
    const char* src = R"CLC(
kernel void produce(write_only pipe uint p, global int* ok) {
    uint l = (uint)get_local_id(0);
    reserve_id_t r = work_group_reserve_write_pipe(p, (uint)get_local_size(0));
    if (is_valid_reserve_id(r)) {
        uint v = (uint)get_global_id(0);
        ok[get_global_id(0)] = write_pipe(p, r, l, &v) == 0;
        work_group_commit_write_pipe(p, r);
    } else {
        ok[get_global_id(0)] = 0;
    }
}
kernel void consume(read_only pipe uint p, global uint* out, global int* ok) {
    uint l = (uint)get_local_id(0);
    reserve_id_t r = work_group_reserve_read_pipe(p, (uint)get_local_size(0));
    uint v = ~0u;
    if (is_valid_reserve_id(r)) {
        ok[get_global_id(0)] = read_pipe(p, r, l, &v) == 0;
        work_group_commit_read_pipe(p, r);
    } else {
        ok[get_global_id(0)] = 0;
    }
    out[get_global_id(0)] = v;
}
)CLC";
    constexpr size_t n = 64 * 64;
    cl_mem p = f.pipe(sizeof(cl_uint), n);
    cl_mem okW = f.buffer(n * sizeof(int));
    cl_mem okR = f.buffer(n * sizeof(int));
    cl_mem out = f.buffer(n * sizeof(cl_uint));
    cl_kernel produce = f.kernel(src, "produce");
    cl_kernel consume = f.kernel(src, "consume");
    f.arg(produce, 0, p);
    f.arg(produce, 1, okW);
    f.arg(consume, 0, p);
    f.arg(consume, 1, out);
    f.arg(consume, 2, okR);
    cl_event produced = f.launch(f.queue, produce, n, 64);
    cl_event consumed = f.launch(f.second, consume, n, 128, produced);
    REQUIRE_CL(clWaitForEvents(1, &consumed));
    clReleaseEvent(produced);
    clReleaseEvent(consumed);
    const auto w = f.read<int>(okW, n);
    const auto r = f.read<int>(okR, n);
    CHECK(std::count(w.begin(), w.end(), 1) == n);
    CHECK(std::count(r.begin(), r.end(), 1) == n);
    const auto got = f.read<cl_uint>(out, n);
    // Each aligned block of 64 is one producer group's ids, in work-item order.
    std::vector<bool> seen(n / 64, false);
    for (size_t b = 0; b < n; b += 64) {
        INFO("block at " << b);
        const cl_uint first = got[b];
        REQUIRE(first % 64 == 0);
        REQUIRE(first < n);
        CHECK_FALSE(seen[first / 64]);
        seen[first / 64] = true;
        for (size_t l = 0; l < 64; ++l)
            REQUIRE(got[b + l] == first + l);
    }
    for (cl_kernel k : {produce, consume})
        clReleaseKernel(k);
    for (cl_mem m : {p, okW, okR, out})
        clReleaseMemObject(m);
}

TEST_CASE("sub-group reservations where the device has sub-groups", "[api][pipes]") {
    WithPipes f;
    const char* src = R"CLC(
kernel void produce(write_only pipe uint p, global int* ok) {
    reserve_id_t r = sub_group_reserve_write_pipe(p, get_sub_group_size());
    uint v = (uint)get_global_id(0);
    ok[get_global_id(0)] = is_valid_reserve_id(r) &&
                           write_pipe(p, r, get_sub_group_local_id(), &v) == 0;
    sub_group_commit_write_pipe(p, r);
}
kernel void consume(read_only pipe uint p, global uint* out, global uint* lane,
                    global int* ok) {
    reserve_id_t r = sub_group_reserve_read_pipe(p, get_sub_group_size());
    uint v = ~0u;
    ok[get_global_id(0)] = is_valid_reserve_id(r) &&
                           read_pipe(p, r, get_sub_group_local_id(), &v) == 0;
    sub_group_commit_read_pipe(p, r);
    out[get_global_id(0)] = v;
    lane[get_global_id(0)] = get_sub_group_local_id();
}
)CLC";
    if (!hasFeature(f.device, "__opencl_c_subgroups")) {
        // No sub-groups: the front end refuses the sub-group pipe functions.
        cl_int err;
        cl_program p = clCreateProgramWithSource(f.context, 1, &src, nullptr, &err);
        REQUIRE_CL(err);
        CHECK(clBuildProgram(p, 1, &f.device, "-cl-std=CL3.0", nullptr, nullptr) ==
              CL_BUILD_PROGRAM_FAILURE);
        CHECK(buildLog(p, f.device).find("sub_group_reserve_write_pipe") != std::string::npos);
        clReleaseProgram(p);
        return;
    }
    constexpr size_t n = 64 * 32;
    cl_mem p = f.pipe(sizeof(cl_uint), n);
    cl_mem okW = f.buffer(n * sizeof(int));
    cl_mem okR = f.buffer(n * sizeof(int));
    cl_mem out = f.buffer(n * sizeof(cl_uint));
    cl_mem lanes = f.buffer(n * sizeof(cl_uint));
    cl_kernel produce = f.kernel(src, "produce", "-cl-std=CL3.0");
    cl_kernel consume = f.kernel(src, "consume", "-cl-std=CL3.0");
    f.arg(produce, 0, p);
    f.arg(produce, 1, okW);
    f.arg(consume, 0, p);
    f.arg(consume, 1, out);
    f.arg(consume, 2, lanes);
    f.arg(consume, 3, okR);
    cl_event produced = f.launch(f.queue, produce, n, 64);
    cl_event consumed = f.launch(f.second, consume, n, 64, produced);
    REQUIRE_CL(clWaitForEvents(1, &consumed));
    clReleaseEvent(produced);
    clReleaseEvent(consumed);
    const auto w = f.read<int>(okW, n);
    const auto r = f.read<int>(okR, n);
    CHECK(std::count(w.begin(), w.end(), 1) == n);
    CHECK(std::count(r.begin(), r.end(), 1) == n);
    // Both kernels have the same sub-groups: each consumer sub-group gets one producer
    // sub-group's ids, consecutive, in lane order.
    const auto got = f.read<cl_uint>(out, n);
    const auto lane = f.read<cl_uint>(lanes, n);
    std::vector<cl_uint> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < n; ++i)
        REQUIRE(sorted[i] == i);
    for (size_t i = 0; i < n; ++i) {
        INFO("work-item " << i << " lane " << lane[i]);
        const size_t first = i - lane[i];
        REQUIRE(got[i] == got[first] + lane[i]);
    }
    for (cl_kernel k : {produce, consume})
        clReleaseKernel(k);
    for (cl_mem m : {p, okW, okR, out, lanes})
        clReleaseMemObject(m);
}

TEST_CASE("a kernel passes packets from one pipe to another", "[api][pipes]") {
    WithPipes f;
    // OpenCL C 3.0 with the feature macro; two pipe arguments of different packet types.
    const char* src = R"CLC(
#ifndef __opencl_c_pipes
#error "no __opencl_c_pipes"
#endif
kernel void fill(global const float4* in, write_only pipe float4 a) {
    write_pipe(a, &in[get_global_id(0)]);
}
kernel void relay(read_only pipe float4 a, write_only pipe float b) {
    float4 v;
    if (read_pipe(a, &v) == 0) {
        float s = v.x + v.y + v.z + v.w;
        write_pipe(b, &s);
    }
}
kernel void drain(read_only pipe float b, global float* out) {
    float s = -1.0f;
    read_pipe(b, &s);
    out[get_global_id(0)] = s;
}
)CLC";
    constexpr size_t n = 2000;
    std::vector<cl_float4> in(n);
    std::vector<float> want(n);
    for (size_t i = 0; i < n; ++i) {
        in[i] = {{float(i), 1.0f, 2.0f, 0.5f}};
        want[i] = float(i) + 3.5f;
    }
    cl_mem src4 =
        f.buffer(n * sizeof(cl_float4), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in.data());
    cl_mem out = f.buffer(n * sizeof(float));
    cl_mem a = f.pipe(sizeof(cl_float4), n);
    cl_mem b = f.pipe(sizeof(float), n);
    cl_kernel fill = f.kernel(src, "fill", "-cl-std=CL3.0"); // the later option wins
    cl_kernel relay = f.kernel(src, "relay", "-cl-std=CL3.0");
    cl_kernel drain = f.kernel(src, "drain", "-cl-std=CL3.0");
    f.arg(fill, 0, src4);
    f.arg(fill, 1, a);
    f.arg(relay, 0, a);
    f.arg(relay, 1, b);
    f.arg(drain, 0, b);
    f.arg(drain, 1, out);
    cl_event e1 = f.launch(f.queue, fill, n);
    cl_event e2 = f.launch(f.second, relay, n, 0, e1);
    cl_event e3 = f.launch(f.queue, drain, n, 0, e2);
    REQUIRE_CL(clWaitForEvents(1, &e3));
    for (cl_event e : {e1, e2, e3})
        clReleaseEvent(e);
    auto got = f.read<float>(out, n);
    std::sort(got.begin(), got.end());
    CHECK(got == want);
    for (cl_kernel k : {fill, relay, drain})
        clReleaseKernel(k);
    for (cl_mem m : {src4, out, a, b})
        clReleaseMemObject(m);
}

TEST_CASE("pipe kernel arguments: info and bad values", "[api][pipes]") {
    WithPipes f;
    const char* src = R"CLC(
kernel void k(read_only pipe int in, write_only pipe int out, global int* buf) {
    int v;
    if (read_pipe(in, &v) == 0)
        write_pipe(out, &v);
    buf[0] = 1;
}
)CLC";
    cl_kernel k = f.kernel(src, "k", "-cl-kernel-arg-info");
    cl_kernel_arg_type_qualifier tq = 0;
    REQUIRE_CL(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, nullptr));
    CHECK(tq == CL_KERNEL_ARG_TYPE_PIPE);
    cl_kernel_arg_access_qualifier aq = 0;
    REQUIRE_CL(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof aq, &aq, nullptr));
    CHECK(aq == CL_KERNEL_ARG_ACCESS_READ_ONLY);
    REQUIRE_CL(clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof aq, &aq, nullptr));
    CHECK(aq == CL_KERNEL_ARG_ACCESS_WRITE_ONLY);
    cl_kernel_arg_address_qualifier addr = 0;
    REQUIRE_CL(
        clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof addr, &addr, nullptr));
    CHECK(addr == CL_KERNEL_ARG_ADDRESS_GLOBAL);
    char type[32] = {};
    REQUIRE_CL(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_TYPE_NAME, sizeof type, type, nullptr));
    CHECK(std::string(type) == "int");

    cl_mem good = f.pipe(sizeof(int), 8);
    cl_mem wrongSize = f.pipe(8, 8);
    cl_mem buf = f.buffer(64);
    f.arg(k, 0, good);
    f.arg(k, 1, good);
    // A buffer where a pipe belongs, and a pipe where a buffer belongs.
    CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 2, sizeof good, &good));
    // A pipe whose packets are not the kernel's pipe type (int: 4 bytes).
    CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArg(k, 1, sizeof wrongSize, &wrongSize));
    // No pipe, a wrong size, something that is not a memory object.
    CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArg(k, 0, sizeof(cl_mem), nullptr));
    cl_mem null = nullptr;
    CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArg(k, 0, sizeof null, &null));
    CHECK_CL_ERR(CL_INVALID_ARG_SIZE, clSetKernelArg(k, 0, 4, &good));
    cl_mem notMem = reinterpret_cast<cl_mem>(f.queue);
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 0, sizeof notMem, &notMem));
    // An SVM pointer is no pipe.
    cl_device_svm_capabilities caps = 0;
    REQUIRE_CL(clGetDeviceInfo(f.device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr));
    if (caps) {
        void* svm = clSVMAlloc(f.context, CL_MEM_READ_WRITE, 64, 0);
        REQUIRE(svm);
        CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArgSVMPointer(k, 0, svm));
        clSVMFree(f.context, svm);
    }
    // A pipe of another context.
    {
        WithQueue other;
        cl_int err;
        cl_mem foreign = clCreatePipe(other.context, 0, sizeof(int), 8, nullptr, &err);
        REQUIRE_CL(err);
        CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 0, sizeof foreign, &foreign));
        clReleaseMemObject(foreign);
    }
    // A program made from this one's binary knows its pipes' packet size too.
    {
        cl_program built = nullptr;
        REQUIRE_CL(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof built, &built, nullptr));
        size_t size = 0;
        REQUIRE_CL(clGetProgramInfo(built, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
        std::vector<unsigned char> binary(size);
        unsigned char* bits = binary.data();
        REQUIRE_CL(clGetProgramInfo(built, CL_PROGRAM_BINARIES, sizeof bits, &bits, nullptr));
        const unsigned char* in = binary.data();
        cl_int err, status;
        cl_program again =
            clCreateProgramWithBinary(f.context, 1, &f.device, &size, &in, &status, &err);
        REQUIRE_CL(err);
        REQUIRE_CL(clBuildProgram(again, 1, &f.device, nullptr, nullptr, nullptr));
        cl_kernel k2 = clCreateKernel(again, "k", &err);
        REQUIRE_CL(err);
        CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArg(k2, 1, sizeof wrongSize, &wrongSize));
        CHECK_CL_ERR(CL_SUCCESS, clSetKernelArg(k2, 1, sizeof good, &good));
        clReleaseKernel(k2);
        clReleaseProgram(again);
    }
    // The failed calls left the good arguments in place: the kernel runs.
    f.arg(k, 2, buf);
    clReleaseEvent(f.launch(f.queue, k, 4, 1));
    REQUIRE_CL(clFinish(f.queue));
    CHECK(f.read<int>(buf, 1)[0] == 1);
    clReleaseKernel(k);
    for (cl_mem m : {good, wrongSize, buf})
        clReleaseMemObject(m);
}
