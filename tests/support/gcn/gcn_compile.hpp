// Test-only helper: OpenCL C -> gfx900 amdhsa code object (in-process clang/LLVM), and a
// DispatchState built from the kernel descriptor the way the GCN backend lays it out.
#pragma once

#include "model.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace gcntest {

/// One kernel of a compiled program: its code in 256-byte aligned host memory (the model
/// executes host addresses) and its kernel descriptor fields.
struct Kernel {
    std::shared_ptr<uint8_t> text; ///< the whole .text section
    uint64_t entry = 0;            ///< host address of the first instruction
    uint32_t groupSegmentSize = 0, privateSegmentSize = 0, kernargSize = 0;
    uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;
    uint16_t codeProperties = 0;
    size_t textSize = 0; ///< bytes of `text` (the loaded sections)
};

/// Compiles `source` (OpenCL C) for amdgcn-amd-amdhsa gfx900 at -O2 with `options`, and
/// returns kernel `name`. Throws std::runtime_error with the build log on failure.
Kernel compileKernel(const std::string& source, const std::string& name,
                     const std::vector<std::string>& options = {});

/// A kernel rebuilt from `size` bytes of loaded code, the entry's offset in them and the
/// descriptor fields of `fields` (for replaying code objects without LLVM).
Kernel loadKernel(const uint8_t* blob, size_t size, uint64_t entryOffset, const Kernel& fields);

/// Memory the model's dispatch needs beside the kernel's own buffers.
struct Launch {
    std::vector<uint8_t> kernargs;
    std::vector<uint8_t> scratch; ///< WAVES * WAVESIZE
    std::vector<uint8_t> dispatchPacket = std::vector<uint8_t>(64);
    duet::gcn::DispatchState state;
};

/// Fills DispatchState for a 1-D (or up to 3-D) dispatch of `globalSize` work-items in groups
/// of `localSize`: user SGPRs per the descriptor's enable bits (private segment buffer V#,
/// dispatch ptr, kernarg ptr, flat scratch init, private segment size), LDS from the group
/// segment, scratch slots for `scratchWaves` waves.
void prepare(Launch& launch, const Kernel& k, const uint32_t globalSize[3],
             const uint32_t localSize[3], unsigned scratchWaves = 256);

template <class T> void pushArg(Launch& l, const T& value) {
    size_t align = alignof(T) < 8 ? alignof(T) : 8;
    size_t at = (l.kernargs.size() + align - 1) / align * align;
    l.kernargs.resize(at + sizeof(T));
    memcpy(l.kernargs.data() + at, &value, sizeof(T));
}

} // namespace gcntest
