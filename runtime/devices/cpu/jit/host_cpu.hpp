// Host CPU name and features as LLVM spells them, and the vector width code is generated for.
#pragma once

#include <string>
#include <string_view>

namespace duet::rt {

/// LLVM's name for the host CPU ("znver5", "sapphirerapids").
std::string hostCpuName();
/// The host's features as LLVM spells them: "+avx2,+avx512f,-amx-tile,...".
std::string hostCpuFeatures();

/// The vector width the CPU device generates code for (`prefer-vector-width`), and why.
struct CpuVectorWidth {
    unsigned bits = 256; ///< 128, 256 or 512
    std::string why;     ///< one phrase for DUET_LOG
};

/// The vector width for code on `cpu` (an LLVM CPU name) with AVX-512F (`avx512`) or AVX
/// (`avx`): DUET_CPU_VECTOR_WIDTH (128, 256 or 512, no wider than the ISA's registers) when
/// set, else 512 bits on the AVX-512 cores where they measured faster (Zen 5, Intel's AVX-512
/// cores; runtime/devices/cpu/README.md, "Vector width", has the figures), else 256 with AVX or
/// AVX-512 (Zen 4), else 128.
/// The device's preferred vector widths and sub-group size follow it. Reads the environment at
/// each call; thread-safe.
CpuVectorWidth cpuVectorWidth(std::string_view cpu, bool avx512, bool avx);

} // namespace duet::rt
