// libduet-interop's program helpers (duet/interop/program.hpp): a build that works, and the
// failures a user must be able to read: the compiler's diagnostic and the device in the message,
// the OpenCL error as the code, a missing kernel file named.
#include "support/cl_test.hpp"

#include "duet/interop/program.hpp"

#include <catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

using duet::interop::Error;

TEST_CASE("buildProgram builds a program whose kernel runs", "[interop][program]") {
    duet::test::WithQueue q;
    cl_program program = duet::interop::buildProgram(
        q.context, {q.device},
        "kernel void twice(global int* a) { a[get_global_id(0)] = 2 * VALUE; }", "-DVALUE=21",
        "twice.cl");
    REQUIRE(program);
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, "twice", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem out = q.buffer(4 * sizeof(int));
    REQUIRE(clSetKernelArg(kernel, 0, sizeof out, &out) == CL_SUCCESS);
    size_t global = 4;
    REQUIRE(clEnqueueNDRangeKernel(q.queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                   nullptr) == CL_SUCCESS);
    for (int v : q.read<int>(out, 4))
        CHECK(v == 42);
    CHECK(duet::interop::buildLog(program, q.device).find('\0') == std::string::npos);
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
}

TEST_CASE("a failed build throws the error, the options, the device and the compiler's log",
          "[interop][program]") {
    duet::test::WithQueue q;
    std::string device = duet::test::deviceString(q.device, CL_DEVICE_NAME);
    try {
        duet::interop::buildProgram(q.context, {q.device},
                                    "kernel void k(global int* a) { a[0] = undeclared_name; }",
                                    "-cl-fast-relaxed-math", "broken.cl");
        FAIL("buildProgram returned for a source that cannot compile");
    } catch (const Error& e) {
        std::string what = e.what();
        INFO(what);
        CHECK(e.code() == CL_BUILD_PROGRAM_FAILURE);
        CHECK(what.find("clBuildProgram(broken.cl, \"-cl-fast-relaxed-math\")") == 0);
        CHECK(what.find("CL_BUILD_PROGRAM_FAILURE") != std::string::npos);
        CHECK(what.find("on " + device + ":") != std::string::npos);
        CHECK(what.find("undeclared_name") != std::string::npos); // clang's diagnostic
        CHECK(what.back() != '\n');
    }
}

TEST_CASE("bad build options and a bad context are errors with their codes", "[interop][program]") {
    duet::test::WithQueue q;
    try {
        duet::interop::buildProgram(q.context, {q.device}, "kernel void k() {}", "-no-such-option",
                                    "options.cl");
        FAIL("buildProgram accepted an unknown option");
    } catch (const Error& e) {
        CHECK(e.code() == CL_INVALID_BUILD_OPTIONS);
        CHECK(std::string(e.what()).find("-no-such-option") != std::string::npos);
    }
    try {
        duet::interop::buildProgram(nullptr, {q.device}, "kernel void k() {}", "", "null.cl");
        FAIL("buildProgram accepted a null context");
    } catch (const Error& e) {
        CHECK(e.code() == CL_INVALID_CONTEXT);
        CHECK(std::string(e.what()).find("clCreateProgramWithSource(null.cl)") !=
              std::string::npos);
    }
}

TEST_CASE("readTextFile reads a file whole and names one it cannot read", "[interop][program]") {
    std::string path = "interop_program_test_" + std::to_string(::getpid()) + ".cl";
    std::string text = "kernel void k() {}\n// a second line\n";
    text.push_back('\0'); // binary-safe: the text comes back as it is
    text += "tail";
    {
        std::ofstream out(path, std::ios::binary);
        out << text;
    }
    CHECK(duet::interop::readTextFile(path) == text);
    std::remove(path.c_str());
    try {
        duet::interop::readTextFile(path);
        FAIL("readTextFile returned for a missing file");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "cannot read " + path);
    }
}
