// A GL context on one GPU of a host with two (the lent 2-GPU host): the GL context runs on the
// second GPU's EGL device, Duet lists both GPUs (DUET_DEVICES=nvidia). clGetGLContextInfoKHR
// names the second GPU and only it; clCreateContext with the first GPU fails with
// CL_INVALID_OPERATION and says why through pfn_notify (the CUDA device that runs GL); by type,
// the context holds the second GPU only; on it, kernels write a shared VBO that GL reads back.
// Skipped (77) with fewer than two NVIDIA EGL devices or two GPUs in Duet.
#define CATCH_CONFIG_RUNNER
#include "support/cl_test.hpp"

#define EGL_NO_X11
#include <EGL/egl.h>
#include <EGL/eglext.h>
#define GL_GLEXT_PROTOTYPES
#include <GL/glcorearb.h>

#include <CL/cl_gl.h>

#include "egl_gpu_context.hpp"
#include "gl_buffers.hpp"

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

EglGpuContext g_gl; // on the second GPU

std::vector<cl_device_id> gpus() {
    cl_uint n = 0;
    if (clGetDeviceIDs(platformUnderTest(), CL_DEVICE_TYPE_GPU, 0, nullptr, &n) != CL_SUCCESS)
        return {};
    std::vector<cl_device_id> out(n);
    clGetDeviceIDs(platformUnderTest(), CL_DEVICE_TYPE_GPU, n, out.data(), nullptr);
    return out;
}

std::vector<cl_context_properties> glProperties() {
    return g_gl.properties(platformUnderTest());
}

std::vector<cl_device_id> glDevices(cl_gl_context_info what) {
    return glContextDevices(glProperties(), what);
}

void collect(const char* message, const void*, size_t, void* notes) {
    *static_cast<std::string*>(notes) += std::string(message) + "\n";
}

} // namespace

int main(int argc, char** argv) {
    if (const size_t egl = eglGpus().size(); egl < 2) {
        std::printf("skipped: needs two NVIDIA GPUs, EGL lists %zu with EGL_NV_device_cuda\n", egl);
        return 77;
    }
    if (const size_t cl = gpus().size(); cl < 2) {
        std::printf("skipped: needs two NVIDIA GPUs, Duet lists %zu (DUET_DEVICES=nvidia, "
                    "libcuda)\n",
                    cl);
        return 77;
    }
    if (std::string why = makeEglGpuContext(g_gl, 1); !why.empty()) {
        std::printf("skipped: %s\n", why.c_str());
        return 77;
    }
    std::printf("GL: %s on CUDA device %d\n", g_gl.renderer.c_str(), g_gl.cudaDevice);
    return Catch::Session().run(argc, argv);
}

TEST_CASE("the GPU that runs the GL context is the only device for it", "[nvidia-two-gpu]") {
    // Duet lists CUDA devices in ordinal order: the second GPU is CUDA device 1.
    const std::vector<cl_device_id> all = gpus();
    CHECK(glDevices(CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR) == std::vector<cl_device_id>{all[1]});
    CHECK(glDevices(CL_DEVICES_FOR_GL_CONTEXT_KHR) == std::vector<cl_device_id>{all[1]});
}

TEST_CASE("a context of the other GPU is refused with the reason", "[nvidia-two-gpu]") {
    const std::vector<cl_device_id> all = gpus();
    auto props = glProperties();
    for (const std::vector<cl_device_id>& devices :
         {std::vector<cl_device_id>{all[0]}, std::vector<cl_device_id>{all[0], all[1]}}) {
        std::string notes;
        cl_int err = CL_SUCCESS;
        cl_context ctx = clCreateContext(props.data(), cl_uint(devices.size()), devices.data(),
                                         collect, &notes, &err);
        INFO(devices.size() << " device(s); notes: " << notes);
        CHECK(ctx == nullptr);
        CHECK_CL_ERR(CL_INVALID_OPERATION, err);
        CHECK(notes.find("the GL context runs on another GPU, CUDA device 1") != std::string::npos);
    }
    // By type: the GPU that runs GL, and only it.
    cl_int err = CL_SUCCESS;
    cl_context ctx =
        clCreateContextFromType(props.data(), CL_DEVICE_TYPE_GPU, nullptr, nullptr, &err);
    REQUIRE_CL(err);
    size_t size = 0;
    REQUIRE_CL(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 0, nullptr, &size));
    std::vector<cl_device_id> held(size / sizeof(cl_device_id));
    REQUIRE_CL(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, size, held.data(), nullptr));
    CHECK(held == std::vector<cl_device_id>{all[1]});
    clReleaseContext(ctx);
}

TEST_CASE("on the GL context's GPU, kernels write a shared VBO that GL reads", "[nvidia-two-gpu]") {
    const std::vector<cl_device_id> all = gpus();
    cl_device_id gpu = all[1];
    auto props = glProperties();
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(props.data(), 1, &gpu, nullptr, nullptr, &err);
    REQUIRE_CL(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(ctx, gpu, nullptr, &err);
    REQUIRE_CL(err);
    const char* source =
        "kernel void scale(global float* v, float k) { v[get_global_id(0)] *= k; }";
    cl_program program = clCreateProgramWithSource(ctx, 1, &source, nullptr, &err);
    REQUIRE_CL(err);
    REQUIRE_CL(clBuildProgram(program, 1, &gpu, "", nullptr, nullptr));
    cl_kernel scale = clCreateKernel(program, "scale", &err);
    REQUIRE_CL(err);

    const size_t n = 1 << 20;
    std::vector<float> values(n);
    std::iota(values.begin(), values.end(), 0.0f);
    GLuint vbo = glBuffer(values);
    glFinish();
    cl_mem mem = clCreateFromGLBuffer(ctx, CL_MEM_READ_WRITE, vbo, &err);
    REQUIRE_CL(err);
    const float k = 3.0f;
    REQUIRE_CL(clSetKernelArg(scale, 0, sizeof mem, &mem));
    REQUIRE_CL(clSetKernelArg(scale, 1, sizeof k, &k));
    for (int frame = 0; frame < 2; ++frame) {
        REQUIRE_CL(clEnqueueAcquireGLObjects(queue, 1, &mem, 0, nullptr, nullptr));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(queue, scale, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueReleaseGLObjects(queue, 1, &mem, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(queue));
        for (float& v : values)
            v *= k;
    }
    std::vector<float> back = glBufferContentsOnGpu(vbo, n);
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i)
        wrong += back[i] != values[i];
    CHECK(wrong == 0);

    clReleaseMemObject(mem);
    glDeleteBuffers(1, &vbo);
    clReleaseKernel(scale);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
}
