// Fuzzes OpenCL C source through clBuildProgram on Duet's CPU device (the real runtime, linked
// directly): a build succeeds, with kernels that can be created and queried, or fails with
// CL_BUILD_PROGRAM_FAILURE and a non-empty build log; never a crash, hang or sanitizer report.
#include "fuzz_check.hpp"
#include "fuzz_runtime.hpp"

#include <string>
#include <vector>

using duet::fuzz::bumpFeature;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    duet::fuzz::openCpuDevice();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // Short sources only: the front end's time per input is the fuzzer's speed.
    if (size > 4096)
        return -1;
    const duet::fuzz::Runtime& rt = duet::fuzz::runtime();
    // With an explicit length any bytes are a source string, NULs included; a zero length
    // would mean "NUL-terminated", so the empty input is the empty string.
    const char* text = size ? reinterpret_cast<const char*>(data) : "";
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(rt.context, 1, &text, &size, &err);
    FUZZ_CHECK(err == CL_SUCCESS && program, "clCreateProgramWithSource rejected a source");
    err = clBuildProgram(program, 1, &rt.device, "", nullptr, nullptr);
    FUZZ_CHECK(err == CL_SUCCESS || err == CL_BUILD_PROGRAM_FAILURE,
               "clBuildProgram returned neither success nor CL_BUILD_PROGRAM_FAILURE");
    bumpFeature(err == CL_SUCCESS ? 1 : 2);

    cl_build_status status = CL_BUILD_NONE;
    FUZZ_CHECK(clGetProgramBuildInfo(program, rt.device, CL_PROGRAM_BUILD_STATUS, sizeof status,
                                     &status, nullptr) == CL_SUCCESS,
               "CL_PROGRAM_BUILD_STATUS");
    std::string log = duet::fuzz::buildLog(program, rt.device);
    if (err != CL_SUCCESS) {
        FUZZ_CHECK(status == CL_BUILD_ERROR, "a failed build's status is not CL_BUILD_ERROR");
        FUZZ_CHECK(log.find_first_not_of(" \n\t") != std::string::npos,
                   "a failed build has an empty build log");
        // Kernels of a failed build: CL_INVALID_PROGRAM_EXECUTABLE, never a crash.
        cl_uint n = 0;
        FUZZ_CHECK(clCreateKernelsInProgram(program, 0, nullptr, &n) ==
                       CL_INVALID_PROGRAM_EXECUTABLE,
                   "kernels of a failed build");
    } else {
        FUZZ_CHECK(status == CL_BUILD_SUCCESS, "a successful build's status");
        size_t numKernels = 0;
        FUZZ_CHECK(clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof numKernels, &numKernels,
                                    nullptr) == CL_SUCCESS,
                   "CL_PROGRAM_NUM_KERNELS");
        bumpFeature(16 + std::min<size_t>(numKernels, 15));
        std::vector<cl_kernel> kernels(numKernels);
        cl_uint got = 0;
        if (numKernels)
            FUZZ_CHECK(clCreateKernelsInProgram(program, cl_uint(numKernels), kernels.data(),
                                                &got) == CL_SUCCESS &&
                           got == numKernels,
                       "clCreateKernelsInProgram of a built program");
        for (cl_kernel k : kernels) {
            std::string name = duet::fuzz::kernelName(k);
            FUZZ_CHECK(!name.empty(), "a kernel without a name");
            // The same kernel by name, as applications create it.
            cl_kernel again = clCreateKernel(program, name.c_str(), &err);
            FUZZ_CHECK(err == CL_SUCCESS && again, "clCreateKernel of a listed kernel name");
            clReleaseKernel(again);
            cl_uint numArgs = 0;
            FUZZ_CHECK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof numArgs, &numArgs, nullptr) ==
                           CL_SUCCESS,
                       "CL_KERNEL_NUM_ARGS");
            bumpFeature(32 + std::min<cl_uint>(numArgs, 31));
            for (cl_uint a = 0; a < numArgs; ++a) {
                cl_kernel_arg_address_qualifier q = 0;
                cl_int e = clGetKernelArgInfo(k, a, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q,
                                              nullptr);
                FUZZ_CHECK(e == CL_SUCCESS || e == CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
                           "clGetKernelArgInfo");
                if (e == CL_SUCCESS)
                    bumpFeature(64 + (q & 0xf));
            }
            cl_kernel_arg_address_qualifier q = 0;
            FUZZ_CHECK(clGetKernelArgInfo(k, numArgs, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q,
                                          nullptr) == CL_INVALID_ARG_INDEX,
                       "clGetKernelArgInfo past the last argument");
            size_t wg = 0;
            FUZZ_CHECK(clGetKernelWorkGroupInfo(k, rt.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg,
                                                &wg, nullptr) == CL_SUCCESS &&
                           wg >= 1,
                       "CL_KERNEL_WORK_GROUP_SIZE");
            clReleaseKernel(k);
        }
    }
    // What the compiler said, as coverage: the front end is not instrumented, so its diagnostics
    // (positions and quoted names stripped) tell the fuzzer which paths an input reached.
    duet::fuzz::diagnosticFeatures(log);
    clReleaseProgram(program);
    return 0;
}
