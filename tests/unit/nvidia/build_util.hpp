// Shared by the NVIDIA code generator tests: OpenCL C -> PTX in one call, PTX text queries.
#pragma once

#include "devices/nvidia/codegen/nvidia_toolchain.hpp"
#include "support/scoped_env.hpp"

#include <catch.hpp>

#include <cstdlib>
#include <memory>
#include <string>

namespace duet::nvidia::test {

inline rt::TargetSpec target(const std::string& sm = "sm_90", unsigned ptx = 80) {
    return rt::withNvidiaFrontEnd(rt::nvidiaTarget(sm, ptx));
}

struct Built {
    std::shared_ptr<rt::NvidiaExecutable> exe;
    std::string log;
};

/// OpenCL C -> NVIDIA executable (front end, then finalize), failing the test with the logs
/// otherwise.
inline Built build(const std::string& source, const std::string& options = "",
                   const rt::TargetSpec& t = target()) {
    rt::CompileResult c = rt::compileSource(source, options, {}, t);
    INFO("compile log:\n" << c.log);
    REQUIRE(c.status == CL_SUCCESS);
    rt::FinalizeResult f = rt::finalizeForNvidia(c.bitcode, options, source, t);
    INFO("finalize log:\n" << f.log);
    REQUIRE(f.status == CL_SUCCESS);
    REQUIRE(f.executable);
    auto exe = std::static_pointer_cast<rt::NvidiaExecutable>(f.executable);
    return {exe, f.log};
}

/// The PTX of one .entry, from its header to the closing brace at the start of a line.
inline std::string entryText(const std::string& ptx, const std::string& kernel) {
    const std::string head = ".entry " + kernel + "(";
    size_t at = ptx.find(head);
    if (at == std::string::npos)
        return {};
    size_t end = ptx.find("\n}\n", at);
    return ptx.substr(at, end == std::string::npos ? std::string::npos : end - at + 3);
}

/// DUET_KERNEL_TIMEOUT and the like, set for one scope (the code generator reads them per build).
using duet::test::ScopedEnv;

/// A kernel that spins until another work-item (or the host) writes `stop`, beside a loop of
/// constant trip count: DUET_KERNEL_TIMEOUT polls the first only.
inline const char* kSpinSource = R"CL(
__kernel void spin(__global const volatile int* stop, __global int* out) {
    int i = 0;
    while (stop[0] == 0)
        i++;
    int s = 0;
    for (int j = 0; j < 16; ++j)
        s += out[j];
    out[get_global_id(0)] = i + s;
}
)CL";

inline bool contains(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
}

} // namespace duet::nvidia::test
