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

/// AVX-512 cores whose code is generated for 512-bit vectors by default: those where
/// duet-bench's kernels measured faster with them (runtime/devices/cpu/README.md, "Vector
/// width"). Zen 5 executes 512-bit operations whole: there, with the full-mask paths of
/// guarded accesses (full_masks.cpp), N-body ran 1.07-1.29x as fast as with 256 bits, finite
/// volumes 1.01-1.15x, the 16x16 transposes 1.10-1.46x, the FFT 0.95-1.0x, the streaming
/// kernels 0.9-1.26x (the 32 Mi-float triad the only one below 1 in most runs). Intel's
/// AVX-512 cores from Ice Lake on: on the lent GPU host's Xeon (a VM; CPUID family 6 model 207,
/// Emerald Rapids, which LLVM 19 names `sapphirerapids` and PoCL's LLVM 16 `skylake-avx512`),
/// duet-bench with both widths alternating measured 512 faster on nearly every row (N-body
/// 1.10-1.19x, FFT 1.33-1.36x, saxpy 1.25-1.40x, triad 1.14-1.34x, finite volumes and the
/// bilinear image 0.89-1.07x, within that VM's spread; bench/README.md). Those cores lose little
/// clock at 512 bits; LLVM's own tuning (256) is for code that mixes a few vector loops with
/// scalar code. Xeon Phi's vector unit is 512 bits wide. Not here, not measured: Skylake-SP,
/// Cascade Lake, Cooper Lake and Cannon Lake, whose 512-bit licence costs more clock; Zen 4
/// (`znver4`), which splits 512-bit operations in two (commit 944b2f2 measured 256 bits as fast
/// or faster).
constexpr std::string_view kWide512Cpus[] = {
    "znver5",
    // Intel, server: Ice Lake-SP and its successors.
    "icelake-server", "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d",
    "diamondrapids",
    // Intel, client cores with AVX-512 from Ice Lake on, and Xeon Phi.
    "icelake-client", "tigerlake", "rocketlake", "knl", "knm"};

CpuVectorWidth defaultWidth(std::string_view cpu, bool avx512, bool avx) {
    if (!avx512)
        return {avx ? 256u : 128u, avx ? "AVX's registers" : "SSE's registers"};
    for (std::string_view wide : kWide512Cpus)
        if (cpu == wide)
            return {512, "the default on " + std::string(cpu) + ", where 512 bits measured faster"};
    return {256, "the default on AVX-512 cores but Zen 5 and Intel's from Ice Lake on (512 bits "
                 "not measured faster on " +
                     std::string(cpu) + ")"};
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
