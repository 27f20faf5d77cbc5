// Test/bench helper without LLVM: a DispatchState laid out from a kernel descriptor the way
// the GCN backend does it (user SGPRs, scratch V#, dispatch packet, LDS), and kernels rebuilt
// from saved code.
#include "gcn_compile.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gcntest {

Kernel loadKernel(const uint8_t* blob, size_t size, uint64_t entryOffset, const Kernel& fields) {
    Kernel k = fields;
    size_t alloc = (size + 4096 + 255) / 256 * 256;
    uint8_t* mem = static_cast<uint8_t*>(std::aligned_alloc(256, alloc));
    std::memset(mem, 0, alloc);
    std::memcpy(mem, blob, size);
    k.text = std::shared_ptr<uint8_t>(mem, [](uint8_t* p) { std::free(p); });
    k.textSize = size;
    k.entry = reinterpret_cast<uint64_t>(mem) + entryOffset;
    return k;
}

void prepare(Launch& l, const Kernel& k, const uint32_t global[3], const uint32_t local[3],
             unsigned scratchWaves) {
    using duet::gcn::DispatchState;
    DispatchState& st = l.state;
    st = DispatchState{};
    st.pgmAddress = k.entry;
    st.pgmRsrc1 = k.rsrc1;
    // The CP takes LDS from the dispatch packet's group segment size (granule 512 bytes).
    st.pgmRsrc2 = (k.rsrc2 & ~(0x1ffu << 15)) | (((k.groupSegmentSize + 511) / 512) << 15);
    st.pgmRsrc3 = k.rsrc3;
    for (int d = 0; d < 3; ++d) {
        st.numThread[d] = local[d];
        st.dim[d] = global[d];
    }
    st.initiator = 1 | 1u << 1 | 1u << 5; // COMPUTE_SHADER_EN, PARTIAL_TG_EN, USE_THREAD_DIMENSIONS

    // Scratch: WAVESIZE in 1 KiB units per wave (64 lanes x private size, rounded up).
    uint32_t waveBytes = (k.privateSegmentSize * 64 + 1023) / 1024 * 1024;
    if (k.rsrc2 & 1) {
        st.tmpringSize = scratchWaves | (waveBytes / 1024) << 12;
        l.scratch.assign(size_t(scratchWaves) * waveBytes + 256, 0);
    }
    uint64_t scratchBase = reinterpret_cast<uint64_t>(l.scratch.data());

    // hsa_kernel_dispatch_packet_t: sizes for kernels that read the dispatch pointer.
    auto put16 = [&](size_t at, uint16_t v) { memcpy(l.dispatchPacket.data() + at, &v, 2); };
    auto put32 = [&](size_t at, uint32_t v) { memcpy(l.dispatchPacket.data() + at, &v, 4); };
    put16(4, uint16_t(local[0]));
    put16(6, uint16_t(local[1]));
    put16(8, uint16_t(local[2]));
    put32(12, global[0]);
    put32(16, global[1]);
    put32(20, global[2]);
    put32(24, k.privateSegmentSize);
    put32(28, k.groupSegmentSize);
    // Room for the hidden (implicit) arguments after the explicit ones, zeroed: global
    // offsets 0.
    l.kernargs.resize(std::max<size_t>(l.kernargs.size(), k.kernargSize) + 256, 0);
    uint64_t kernargs = reinterpret_cast<uint64_t>(l.kernargs.data());
    uint64_t packet = reinterpret_cast<uint64_t>(l.dispatchPacket.data());
    memcpy(l.dispatchPacket.data() + 40, &kernargs, 8);

    unsigned n = 0;
    auto user = [&](uint32_t v) { st.userData[n++] = v; };
    uint16_t p = k.codeProperties;
    if (p & 1) { // private segment buffer V#: swizzled, ADD_TID, index stride 64, element 4
        user(uint32_t(scratchBase));
        user(uint32_t(scratchBase >> 32) | 1u << 31);
        user(0xffffffffu);
        user(1u << 23 | 3u << 21 | 1u << 19);
    }
    if (p & 2)
        user(uint32_t(packet)), user(uint32_t(packet >> 32));
    if (p & 4)
        user(0), user(0); // queue ptr: none
    if (p & 8)
        user(uint32_t(kernargs)), user(uint32_t(kernargs >> 32));
    if (p & 16)
        user(0), user(0); // dispatch id
    if (p & 32)
        user(uint32_t(scratchBase)), user(uint32_t(scratchBase >> 32));
    if (p & 64)
        user(k.privateSegmentSize);
}

} // namespace gcntest
