// Shared helpers for the compiler front-end tests: a CPU target and one-call compile/link.
#pragma once

#include "compiler/front_end.hpp"
#include "devices/cpu/jit/cpu_toolchain.hpp"

#include <catch.hpp>

#include <string>
#include <vector>

namespace duet::rt::test {

/// A CPU target like the one the core describes: OpenCL C 3.0 features of a full profile CPU.
inline TargetSpec cpuTarget() {
    TargetSpec t;
    t.cpuName = "x86-64";
    t.clStdVersions = {100, 110, 120, 200, 300};
    t.clExtensions = {"cl_khr_byte_addressable_store",
                      "cl_khr_global_int32_base_atomics",
                      "cl_khr_global_int32_extended_atomics",
                      "cl_khr_local_int32_base_atomics",
                      "cl_khr_local_int32_extended_atomics",
                      "cl_khr_int64_base_atomics",
                      "cl_khr_int64_extended_atomics",
                      "cl_khr_3d_image_writes",
                      "__opencl_c_3d_image_writes",
                      "__opencl_c_read_write_images",
                      "__opencl_c_atomic_order_acq_rel",
                      "__opencl_c_atomic_scope_device",
                      "__opencl_c_generic_address_space",
                      "__opencl_c_program_scope_global_variables",
                      "__opencl_c_int64"};
    return t;
}

/// Compiles and fails the test (showing the log) unless it succeeds.
inline std::string compileOk(const std::string& src, const std::string& options = "",
                             const std::vector<HeaderSource>& headers = {}) {
    CompileResult r = compileSource(src, options, headers, cpuTarget());
    INFO("options: " << options << "\nlog:\n" << r.log);
    REQUIRE(r.status == CL_SUCCESS);
    REQUIRE_FALSE(r.bitcode.empty());
    return r.bitcode;
}

} // namespace duet::rt::test
