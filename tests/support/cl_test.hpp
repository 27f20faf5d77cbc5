// Test support: pick the platform under test by name, fixtures, and CL error assertions.
#pragma once

#include <CL/cl.h>
#include <catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace duet::test {

const char* errorName(cl_int code);

/// The platform whose CL_PLATFORM_NAME contains $DUET_TEST_PLATFORM (default "Duet"); fails the
/// test, listing the platforms there are, when there is none.
cl_platform_id platformUnderTest();
/// The first platform whose CL_PLATFORM_NAME contains `name`; fails the test when there is none.
cl_platform_id platformNamed(const std::string& name);
cl_device_id defaultDevice();
std::string platformString(cl_platform_id p, cl_platform_info what);
std::string deviceString(cl_device_id d, cl_device_info what);

/// Builds `source`; on failure the test fails with the build log.
cl_program buildProgram(cl_context ctx, cl_device_id dev, const std::string& source,
                        const std::string& options = "");
std::string buildLog(cl_program p, cl_device_id d);

/// A context and an in-order queue on the device under test.
struct WithQueue {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    explicit WithQueue(cl_command_queue_properties props = 0);
    ~WithQueue();
    WithQueue(const WithQueue&) = delete;
    cl_mem buffer(size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE, void* host = nullptr);
    template <class T> std::vector<T> read(cl_mem m, size_t count) {
        std::vector<T> out(count);
        cl_int e = clEnqueueReadBuffer(queue, m, CL_TRUE, 0, count * sizeof(T), out.data(), 0,
                                       nullptr, nullptr);
        REQUIRE(e == CL_SUCCESS);
        return out;
    }
};

/// A context and an in-order queue on the first device of `type` of the platform named
/// `platformName` (as platformsUnderTest() lists them), for the tests that run on Duet and PoCL.
/// Calls useDuetAndPocl() first (support/icd_vendors.hpp).
struct ClOn {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    explicit ClOn(const std::string& platformName, cl_device_type type = CL_DEVICE_TYPE_ALL);
    ~ClOn();
    ClOn(const ClOn&) = delete;
    ClOn& operator=(const ClOn&) = delete;
    cl_mem buffer(size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
    template <class T> std::vector<T> read(cl_mem m, size_t count) {
        std::vector<T> out(count);
        cl_int e = clEnqueueReadBuffer(queue, m, CL_TRUE, 0, count * sizeof(T), out.data(), 0,
                                       nullptr, nullptr);
        REQUIRE(e == CL_SUCCESS);
        return out;
    }
};

} // namespace duet::test

/// Asserts an OpenCL call's status and names both codes on failure.
#define CHECK_CL_ERR(expected, expr)                                                               \
    do {                                                                                           \
        cl_int duet_err_ = (expr);                                                                 \
        INFO(#expr << " returned " << ::duet::test::errorName(duet_err_) << ", expected "          \
                   << ::duet::test::errorName(expected));                                          \
        CHECK(duet_err_ == (expected));                                                            \
    } while (0)
#define REQUIRE_CL(expr)                                                                           \
    do {                                                                                           \
        cl_int duet_err_ = (expr);                                                                 \
        INFO(#expr << " returned " << ::duet::test::errorName(duet_err_));                         \
        REQUIRE(duet_err_ == CL_SUCCESS);                                                          \
    } while (0)
