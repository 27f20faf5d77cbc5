// printf from kernels: formats, vector specifiers, strings, ordering within a work-item.
#include "support/capture.hpp"
#include "support/cl_test.hpp"

using namespace duet::test;

TEST_CASE("printf prints scalars, strings and vectors as OpenCL C specifies", "[api][printf]") {
    WithQueue f;
    const char* src = R"CL(
__kernel void p(int i, float x) {
    float4 v = (float4)(1.0f, 2.5f, -3.0f, 4.0f);
    int2 iv = (int2)(7, -8);
    uchar4 cv = (uchar4)(1, 2, 3, 255);
    printf("i=%d x=%.2f hex=%#x str=%s c=%c\n", i, x, 255, "abc", 'Z');
    printf("v=%.1v4hlf iv=%v2hld cv=%v4hhu\n", v, iv, cv);
    printf("long=%ld unsigned=%u pct=%%\n", (long)-5000000000, 42u);
}
)CL";
    cl_program p = buildProgram(f.context, f.device, src);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "p", &err);
    REQUIRE(err == CL_SUCCESS);
    int i = -12;
    float x = 3.14159f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof i, &i));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof x, &x));
    std::string out = captureStdout([&] {
        REQUIRE_CL(clEnqueueTask(f.queue, k, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(f.queue));
    });
    INFO("printed:\n" << out);
    CHECK(out.find("i=-12 x=3.14 hex=0xff str=abc c=Z\n") != std::string::npos);
    CHECK(out.find("v=1.0,2.5,-3.0,4.0 iv=7,-8 cv=1,2,3,255\n") != std::string::npos);
    CHECK(out.find("long=-5000000000 unsigned=42 pct=%\n") != std::string::npos);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("each work-item's printf lines arrive whole", "[api][printf]") {
    WithQueue f;
    const char* src = "__kernel void p() { printf(\"item %d of %d\\n\", (int)get_global_id(0), "
                      "(int)get_global_size(0)); }";
    cl_program p = buildProgram(f.context, f.device, src);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "p", &err);
    size_t g = 64;
    std::string out = captureStdout([&] {
        REQUIRE_CL(
            clEnqueueNDRangeKernel(f.queue, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(f.queue));
    });
    for (int item = 0; item < 64; ++item)
        CHECK(out.find("item " + std::to_string(item) + " of 64\n") != std::string::npos);
    clReleaseKernel(k);
    clReleaseProgram(p);
}
