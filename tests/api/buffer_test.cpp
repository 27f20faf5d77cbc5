// Buffers: creation flags, sub-buffers, transfers (+rect), fill, map/unmap, host access, errors.
#include "support/cl_test.hpp"

#include <cstring>
#include <numeric>

using namespace duet::test;

TEST_CASE("buffer creation flags and their errors", "[api][buffer]") {
    WithQueue f;
    cl_int err;
    std::vector<int> host(256);
    std::iota(host.begin(), host.end(), 0);

    cl_mem m = clCreateBuffer(f.context, CL_MEM_COPY_HOST_PTR, 1024, host.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(f.read<int>(m, 256) == host);
    cl_mem_flags flags = 0;
    REQUIRE_CL(clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof flags, &flags, nullptr));
    CHECK((flags & CL_MEM_COPY_HOST_PTR));
    clReleaseMemObject(m);

    // USE_HOST_PTR is zero copy on the CPU device: maps return the application's pointer.
    m = clCreateBuffer(f.context, CL_MEM_USE_HOST_PTR, 1024, host.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    void* hp = nullptr;
    REQUIRE_CL(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof hp, &hp, nullptr));
    CHECK(hp == host.data());
    void* mapped =
        clEnqueueMapBuffer(f.queue, m, CL_TRUE, CL_MAP_READ, 16, 64, 0, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(mapped == reinterpret_cast<char*>(host.data()) + 16);
    REQUIRE_CL(clEnqueueUnmapMemObject(f.queue, m, mapped, 0, nullptr, nullptr));
    clReleaseMemObject(m);

    struct Bad {
        cl_mem_flags flags;
        size_t size;
        void* ptr;
        cl_int want;
    } cases[] = {
        {CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, nullptr, CL_INVALID_VALUE},
        {CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR, 64, host.data(), CL_INVALID_VALUE},
        {CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR, 64, host.data(), CL_INVALID_VALUE},
        {CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS, 64, nullptr, CL_INVALID_VALUE},
        {cl_mem_flags(1) << 40, 64, nullptr, CL_INVALID_VALUE},
        {CL_MEM_READ_WRITE, 0, nullptr, CL_INVALID_BUFFER_SIZE},
        {CL_MEM_READ_WRITE, ~size_t(0), nullptr, CL_INVALID_BUFFER_SIZE},
        {CL_MEM_COPY_HOST_PTR, 64, nullptr, CL_INVALID_HOST_PTR},
        {CL_MEM_READ_WRITE, 64, host.data(), CL_INVALID_HOST_PTR},
    };
    for (const Bad& b : cases) {
        INFO("flags " << b.flags << " size " << b.size);
        CHECK(clCreateBuffer(f.context, b.flags, b.size, b.ptr, &err) == nullptr);
        CHECK(err == b.want);
    }
    CHECK(clCreateBuffer(nullptr, 0, 64, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_CONTEXT);
    cl_mem_properties props[] = {0x4242, 0, 0};
    CHECK(clCreateBufferWithProperties(f.context, props, 0, 64, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_PROPERTY);
}

TEST_CASE("read, write, copy, fill and their bounds", "[api][buffer]") {
    WithQueue f;
    cl_mem a = f.buffer(4096), b = f.buffer(4096);
    std::vector<unsigned char> src(4096);
    for (size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<unsigned char>(i * 7);
    REQUIRE_CL(
        clEnqueueWriteBuffer(f.queue, a, CL_FALSE, 0, 4096, src.data(), 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueCopyBuffer(f.queue, a, b, 100, 200, 1000, 0, nullptr, nullptr));
    auto out = f.read<unsigned char>(b, 4096);
    CHECK(std::equal(out.begin() + 200, out.begin() + 1200, src.begin() + 100));

    cl_uint pattern = 0xdeadbeef;
    REQUIRE_CL(clEnqueueFillBuffer(f.queue, b, &pattern, 4, 64, 128, 0, nullptr, nullptr));
    auto words = f.read<cl_uint>(b, 1024);
    for (int i = 16; i < 48; ++i)
        CHECK(words[i] == 0xdeadbeef);

    char tmp[16];
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueReadBuffer(f.queue, a, CL_TRUE, 4090, 16, tmp, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueReadBuffer(f.queue, a, CL_TRUE, 0, 16, nullptr, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT,
                 clEnqueueReadBuffer(f.queue, nullptr, CL_TRUE, 0, 16, tmp, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE,
                 clEnqueueReadBuffer(nullptr, a, CL_TRUE, 0, 16, tmp, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_EVENT_WAIT_LIST,
                 clEnqueueReadBuffer(f.queue, a, CL_TRUE, 0, 16, tmp, 1, nullptr, nullptr));
    CHECK_CL_ERR(CL_MEM_COPY_OVERLAP,
                 clEnqueueCopyBuffer(f.queue, a, a, 0, 8, 64, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueCopyBuffer(f.queue, a, b, 4000, 0, 200, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueFillBuffer(f.queue, b, &pattern, 3, 0, 12, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueFillBuffer(f.queue, b, &pattern, 4, 2, 12, 0, nullptr, nullptr));
    clReleaseMemObject(a);
    clReleaseMemObject(b);
}

// The CPU device spreads copies of 2 MiB and more over its threads, in 256 KiB pieces: every
// byte must land once, whatever the offsets and the size's remainder, and two queues may copy
// while the other launches.
TEST_CASE("large reads, writes and copies land whole at any offset", "[api][buffer]") {
    WithQueue f;
    const size_t size = (size_t(9) << 20) + 123, span = size + 64;
    cl_mem a = f.buffer(span), b = f.buffer(span);
    std::vector<unsigned char> src(size);
    for (size_t i = 0; i < size; ++i)
        src[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
    REQUIRE_CL(
        clEnqueueWriteBuffer(f.queue, a, CL_FALSE, 37, size, src.data(), 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueCopyBuffer(f.queue, a, b, 37, 5, size, 0, nullptr, nullptr));
    std::vector<unsigned char> back(size + 2, 0xee);
    REQUIRE_CL(
        clEnqueueReadBuffer(f.queue, b, CL_TRUE, 5, size, back.data() + 1, 0, nullptr, nullptr));
    CHECK(back.front() == 0xee);
    CHECK(back.back() == 0xee);
    CHECK(std::equal(src.begin(), src.end(), back.begin() + 1));
    // A second queue copies while the first runs a kernel over the same context.
    cl_int err;
    cl_command_queue q2 = clCreateCommandQueueWithProperties(f.context, f.device, nullptr, &err);
    REQUIRE_CL(err);
    cl_program p = buildProgram(f.context, f.device,
                                "kernel void inc(global uint* p) { p[get_global_id(0)] += 1u; }");
    cl_kernel k = clCreateKernel(p, "inc", &err);
    REQUIRE_CL(err);
    cl_mem c = f.buffer(size_t(4) << 20);
    const cl_uchar zero = 0;
    REQUIRE_CL(clEnqueueFillBuffer(f.queue, c, &zero, 1, 0, size_t(4) << 20, 0, nullptr, nullptr));
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof c, &c));
    const size_t items = size_t(1) << 20;
    for (int round = 0; round < 4; ++round) {
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &items, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueCopyBuffer(q2, a, b, 37 + round, 5, size - 4, 0, nullptr, nullptr));
    }
    REQUIRE_CL(clFinish(q2));
    REQUIRE_CL(clFinish(f.queue));
    REQUIRE_CL(
        clEnqueueReadBuffer(f.queue, b, CL_TRUE, 5, size - 4, back.data(), 0, nullptr, nullptr));
    CHECK(std::equal(src.begin() + 3, src.end() - 1, back.begin()));
    CHECK(f.read<cl_uint>(c, items) == std::vector<cl_uint>(items, 4u));
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseMemObject(c);
    clReleaseCommandQueue(q2);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
}

TEST_CASE("rectangular transfers", "[api][buffer]") {
    WithQueue f;
    // A 16x8x2 byte box inside the buffer, row pitch 32, slice pitch 32*10.
    const size_t rowPitch = 32, slicePitch = 320;
    cl_mem m = f.buffer(slicePitch * 3);
    std::vector<unsigned char> host(16 * 8 * 2);
    for (size_t i = 0; i < host.size(); ++i)
        host[i] = static_cast<unsigned char>(i + 1);
    size_t bufOrigin[3] = {4, 1, 1}, hostOrigin[3] = {0, 0, 0}, region[3] = {16, 8, 2};
    std::vector<unsigned char> zero(slicePitch * 3, 0);
    REQUIRE_CL(clEnqueueWriteBuffer(f.queue, m, CL_TRUE, 0, zero.size(), zero.data(), 0, nullptr,
                                    nullptr));
    REQUIRE_CL(clEnqueueWriteBufferRect(f.queue, m, CL_TRUE, bufOrigin, hostOrigin, region,
                                        rowPitch, slicePitch, 0, 0, host.data(), 0, nullptr,
                                        nullptr));
    auto all = f.read<unsigned char>(m, slicePitch * 3);
    for (size_t z = 0; z < 2; ++z)
        for (size_t y = 0; y < 8; ++y)
            for (size_t x = 0; x < 16; ++x)
                REQUIRE(all[(z + 1) * slicePitch + (y + 1) * rowPitch + x + 4] ==
                        host[z * 128 + y * 16 + x]);
    CHECK(all[0] == 0);
    std::vector<unsigned char> back(host.size());
    REQUIRE_CL(clEnqueueReadBufferRect(f.queue, m, CL_TRUE, bufOrigin, hostOrigin, region, rowPitch,
                                       slicePitch, 0, 0, back.data(), 0, nullptr, nullptr));
    CHECK(back == host);
    cl_mem m2 = f.buffer(slicePitch * 3);
    size_t dstOrigin[3] = {0, 0, 0};
    REQUIRE_CL(clEnqueueCopyBufferRect(f.queue, m, m2, bufOrigin, dstOrigin, region, rowPitch,
                                       slicePitch, 16, 128, 0, nullptr, nullptr));
    auto packed = f.read<unsigned char>(m2, 256);
    CHECK(std::equal(packed.begin(), packed.end(), host.begin()));
    size_t bad[3] = {16, 8, 0};
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueReadBufferRect(f.queue, m, CL_TRUE, bufOrigin, hostOrigin, bad, rowPitch,
                                         slicePitch, 0, 0, back.data(), 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueReadBufferRect(f.queue, m, CL_TRUE, bufOrigin, hostOrigin, region, 8,
                                         slicePitch, 0, 0, back.data(), 0, nullptr, nullptr));
    size_t far[3] = {4, 1, 5};
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueReadBufferRect(f.queue, m, CL_TRUE, far, hostOrigin, region, rowPitch,
                                         slicePitch, 0, 0, back.data(), 0, nullptr, nullptr));
    clReleaseMemObject(m);
    clReleaseMemObject(m2);
}

TEST_CASE("sub-buffers share storage and check alignment and flags", "[api][buffer]") {
    WithQueue f;
    cl_uint align = 0;
    REQUIRE_CL(
        clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align, &align, nullptr));
    size_t alignBytes = align / 8;
    cl_mem parent = f.buffer(alignBytes * 4, CL_MEM_READ_ONLY);
    cl_buffer_region region{alignBytes, alignBytes};
    cl_int err;
    cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem_flags flags;
    REQUIRE_CL(clGetMemObjectInfo(sub, CL_MEM_FLAGS, sizeof flags, &flags, nullptr));
    CHECK((flags & CL_MEM_READ_ONLY)); // inherited
    size_t off = 0;
    REQUIRE_CL(clGetMemObjectInfo(sub, CL_MEM_OFFSET, sizeof off, &off, nullptr));
    CHECK(off == alignBytes);
    cl_mem assoc;
    REQUIRE_CL(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, nullptr));
    CHECK(assoc == parent);
    std::vector<unsigned char> data(alignBytes, 0x5a);
    REQUIRE_CL(clEnqueueWriteBuffer(f.queue, sub, CL_TRUE, 0, alignBytes, data.data(), 0, nullptr,
                                    nullptr));
    auto whole = f.read<unsigned char>(parent, alignBytes * 4);
    CHECK(whole[alignBytes] == 0x5a);
    CHECK(whole[alignBytes * 2 - 1] == 0x5a);

    cl_buffer_region misaligned{1, 16};
    CHECK(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &misaligned, &err) == nullptr);
    CHECK(err == CL_MISALIGNED_SUB_BUFFER_OFFSET);
    cl_buffer_region outside{alignBytes * 3, alignBytes * 2};
    CHECK(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &outside, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    CHECK(clCreateSubBuffer(parent, CL_MEM_WRITE_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region,
                            &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    CHECK(clCreateSubBuffer(sub, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err) == nullptr);
    CHECK(err == CL_INVALID_MEM_OBJECT);
    cl_buffer_region empty{0, 0};
    CHECK(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &empty, &err) == nullptr);
    CHECK(err == CL_INVALID_BUFFER_SIZE);
    clReleaseMemObject(sub);
    clReleaseMemObject(parent);
}

TEST_CASE("host access flags, map counts and destructor callbacks", "[api][buffer]") {
    WithQueue f;
    char tmp[16];
    cl_mem noRead = f.buffer(64, CL_MEM_HOST_WRITE_ONLY);
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clEnqueueReadBuffer(f.queue, noRead, CL_TRUE, 0, 16, tmp, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueWriteBuffer(f.queue, noRead, CL_TRUE, 0, 16, tmp, 0, nullptr, nullptr));
    cl_int err;
    CHECK(clEnqueueMapBuffer(f.queue, noRead, CL_TRUE, CL_MAP_READ, 0, 16, 0, nullptr, nullptr,
                             &err) == nullptr);
    CHECK(err == CL_INVALID_OPERATION);
    CHECK(clEnqueueMapBuffer(f.queue, noRead, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION,
                             0, 16, 0, nullptr, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    cl_mem noWrite = f.buffer(64, CL_MEM_HOST_READ_ONLY);
    CHECK_CL_ERR(CL_INVALID_OPERATION,
                 clEnqueueWriteBuffer(f.queue, noWrite, CL_TRUE, 0, 16, tmp, 0, nullptr, nullptr));

    cl_mem m = f.buffer(256);
    void* p =
        clEnqueueMapBuffer(f.queue, m, CL_TRUE, CL_MAP_WRITE, 0, 256, 0, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    std::memset(p, 0x11, 256);
    cl_uint count = 0;
    REQUIRE_CL(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, nullptr));
    CHECK(count == 1);
    int notMapped;
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueUnmapMemObject(f.queue, m, &notMapped, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueUnmapMemObject(f.queue, m, p, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(f.queue));
    REQUIRE_CL(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, nullptr));
    CHECK(count == 0);
    CHECK(f.read<unsigned char>(m, 256)[255] == 0x11);

    static std::string order;
    order.clear();
    REQUIRE_CL(clSetMemObjectDestructorCallback(m, [](cl_mem, void*) { order += "1"; }, nullptr));
    REQUIRE_CL(clSetMemObjectDestructorCallback(m, [](cl_mem, void*) { order += "2"; }, nullptr));
    clReleaseMemObject(m);
    CHECK(order == "21");
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clRetainMemObject(m));
    clReleaseMemObject(noRead);
    clReleaseMemObject(noWrite);
}
