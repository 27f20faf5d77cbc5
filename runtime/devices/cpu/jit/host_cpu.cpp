// Host CPU name and features as LLVM spells them, and the vector width code is generated for.
#include "devices/cpu/jit/host_cpu.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace duet::rt {

std::string hostCpuName() {
    return llvm::sys::getHostCPUName().str();
}

std::string hostCpuFeatures() {
    const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    std::string out;
    for (const auto& f : features) {
        if (!out.empty())
            out += ',';
        out += (f.second ? "+" : "-") + f.first().str();
    }
    return out;
}

namespace {

/// 256-bit vectors on every AVX-512 core measured so far. Zen 5 (`znver5`, which executes
/// 512-bit operations whole; runtime/devices/cpu/README.md, "Vector width"): with 512 bits
/// duet-bench's compute-bound kernels ran 5-17% faster and an in-cache transpose 1.4-1.6x, but
/// the transpose of matrices larger than the cache ran at 0.55-0.67 of the speed, and the rest
/// within the noise: no net gain. Zen 4 splits 512-bit operations in two (commit 944b2f2 measured
/// 256 as fast or faster), and LLVM's own tuning prefers 256 bits on Intel's AVX-512 cores,
/// which were not measured here. A core that measures faster gets its branch here.
CpuVectorWidth defaultWidth(std::string_view cpu, bool avx512, bool avx) {
    if (!avx512)
        return {avx ? 256u : 128u, avx ? "AVX's registers" : "SSE's registers"};
    return {256, "the default on AVX-512 cores (" + std::string(cpu) +
                     "): 512 bits measured no faster overall; DUET_CPU_VECTOR_WIDTH=512 for them"};
}

} // namespace

CpuVectorWidth cpuVectorWidth(std::string_view cpu, bool avx512, bool avx) {
    const unsigned widest = avx512 ? 512 : avx ? 256 : 128;
    const char* env = std::getenv("DUET_CPU_VECTOR_WIDTH");
    if (!env || !*env)
        return defaultWidth(cpu, avx512, avx);
    for (unsigned bits : {128u, 256u, 512u})
        if (std::strcmp(env, std::to_string(bits).c_str()) == 0)
            return {std::min(bits, widest),
                    bits <= widest ? "DUET_CPU_VECTOR_WIDTH"
                                   : "DUET_CPU_VECTOR_WIDTH, capped at the ISA's registers"};
    // Anything else is ignored, and said so.
    CpuVectorWidth d = defaultWidth(cpu, avx512, avx);
    d.why =
        std::string("DUET_CPU_VECTOR_WIDTH=") + env + " ignored (not 128, 256 or 512); " + d.why;
    return d;
}

} // namespace duet::rt
