// Implementation of the kernel test helpers (platform choice, builds, buffers, launches).
#include "kernel_harness.hpp"

#include "support/cl_test.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace duet::test {

KernelEnv& KernelEnv::get() {
    static std::unique_ptr<KernelEnv> env;
    if (env)
        return *env;
    auto e = std::make_unique<KernelEnv>();
    e->platform = platformUnderTest(); // fails, listing the platforms there are, when missing
    e->platformName = platformString(e->platform, CL_PLATFORM_NAME);
    cl_uint nd = 0;
    const cl_int found = clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, 1, &e->device, &nd);
    // The GPU entries (DUET_DEVICES=nvidia, DUET_TEST_SKIP_WITHOUT_DEVICE=1) on a host without
    // the GPU: skipped (ctest's SKIP_RETURN_CODE 77), not failed.
    if (found == CL_DEVICE_NOT_FOUND && std::getenv("DUET_TEST_SKIP_WITHOUT_DEVICE")) {
        const char* devices = std::getenv("DUET_DEVICES");
        std::printf("SKIPPED: the platform has no device here (DUET_DEVICES=%s)\n",
                    devices ? devices : "");
        std::fflush(stdout);
        std::_Exit(77);
    }
    REQUIRE(found == CL_SUCCESS);
    cl_int err = CL_SUCCESS;
    e->context = clCreateContext(nullptr, 1, &e->device, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    e->queue = clCreateCommandQueue(e->context, e->device, 0, &err);
    REQUIRE(err == CL_SUCCESS);
    e->extensions = deviceString(e->device, CL_DEVICE_EXTENSIONS);
    e->deviceVersion = deviceString(e->device, CL_DEVICE_OPENCL_C_VERSION);
    e->fp64 = e->hasExtension("cl_khr_fp64");
    e->int64Atomics = e->hasExtension("cl_khr_int64_base_atomics") &&
                      e->hasExtension("cl_khr_int64_extended_atomics");
    // "OpenCL C 3.0 ...": 2.0 and 3.0 compilers both accept the C11 atomics we use
    // (3.0 only with the generic address space and seq_cst/device-scope features).
    int major = 0, minor = 0;
    std::sscanf(e->deviceVersion.c_str(), "OpenCL C %d.%d", &major, &minor);
    // OpenCL 3.0 devices report 1.2 there and list what they accept in ALL_VERSIONS.
    size_t nv = 0;
    if (clGetDeviceInfo(e->device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, 0, nullptr, &nv) ==
            CL_SUCCESS &&
        nv) {
        std::vector<cl_name_version> vs(nv / sizeof(cl_name_version));
        clGetDeviceInfo(e->device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, nv, vs.data(), nullptr);
        for (auto& v : vs)
            major = std::max(major, static_cast<int>(CL_VERSION_MAJOR(v.version)));
    }
    if (major >= 2) {
        std::string feats = e->extensions;
        size_t nf = 0;
        if (clGetDeviceInfo(e->device, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &nf) ==
                CL_SUCCESS &&
            nf) {
            std::vector<cl_name_version> fv(nf / sizeof(cl_name_version));
            clGetDeviceInfo(e->device, CL_DEVICE_OPENCL_C_FEATURES, nf, fv.data(), nullptr);
            for (auto& f : fv)
                feats += std::string(" ") + f.name;
        }
        auto has = [&](const char* f) { return feats.find(f) != std::string::npos; };
        e->openclC20 =
            major == 2 ||
            (has("__opencl_c_generic_address_space") && has("__opencl_c_atomic_order_seq_cst") &&
             has("__opencl_c_atomic_order_acq_rel") && has("__opencl_c_atomic_scope_device"));
        e->clStd20 = major == 2 ? "-cl-std=CL2.0" : "-cl-std=CL3.0";
    }
    std::fprintf(stderr, "kernel tests on platform '%s', device '%s' (%s; C11 atomics: %s)\n",
                 e->platformName.c_str(), deviceString(e->device, CL_DEVICE_NAME).c_str(),
                 e->deviceVersion.c_str(), e->openclC20 ? e->clStd20.c_str() : "no");
    env = std::move(e);
    return *env;
}

Program::Program(const std::string& source, const std::string& options) {
    KernelEnv& env = KernelEnv::get();
    const char* src = source.c_str();
    size_t len = source.size();
    cl_int err = CL_SUCCESS;
    m_program = clCreateProgramWithSource(env.context, 1, &src, &len, &err);
    REQUIRE(err == CL_SUCCESS);
    err = clBuildProgram(m_program, 1, &env.device, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS)
        FAIL("clBuildProgram failed (" << errorName(err) << ") with options '" << options << "':\n"
                                       << buildLog(m_program, env.device) << "\nsource:\n"
                                       << source.substr(0, 4000));
}

Program::~Program() {
    for (cl_kernel k : m_kernels)
        clReleaseKernel(k);
    if (m_program)
        clReleaseProgram(m_program);
}

cl_kernel Program::kernel(const std::string& name) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(m_program, name.c_str(), &err);
    INFO("kernel " << name);
    REQUIRE(err == CL_SUCCESS);
    m_kernels.push_back(k);
    return k;
}

Buffer::Buffer(size_t bytes, const void* init) {
    KernelEnv& env = KernelEnv::get();
    cl_int err = CL_SUCCESS;
    cl_mem_flags flags = CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0);
    m_mem = clCreateBuffer(env.context, flags, bytes ? bytes : 1, const_cast<void*>(init), &err);
    REQUIRE(err == CL_SUCCESS);
}

Buffer::~Buffer() {
    if (m_mem)
        clReleaseMemObject(m_mem);
}

void Buffer::read(void* dst, size_t bytes) const {
    cl_int err = clEnqueueReadBuffer(KernelEnv::get().queue, m_mem, CL_TRUE, 0, bytes, dst, 0,
                                     nullptr, nullptr);
    REQUIRE(err == CL_SUCCESS);
}

void setArg(cl_kernel k, cl_uint i, const Buffer& b) {
    cl_mem m = b.handle();
    REQUIRE(clSetKernelArg(k, i, sizeof(cl_mem), &m) == CL_SUCCESS);
}

void setArg(cl_kernel k, cl_uint i, LocalBytes l) {
    REQUIRE(clSetKernelArg(k, i, l.bytes, nullptr) == CL_SUCCESS);
}

void run1D(cl_kernel k, size_t global, size_t local) {
    cl_command_queue q = KernelEnv::get().queue;
    cl_int err = clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, local ? &local : nullptr, 0,
                                        nullptr, nullptr);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(clFinish(q) == CL_SUCCESS);
}

} // namespace duet::test
