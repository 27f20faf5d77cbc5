// Fuzzes AMDGPU code objects as the GCN device reads and loads them (readCodeObject: ELF, the
// msgpack metadata note, kernel descriptors; LoadedCodeObject::load: segments, relocations).
#include "devices/gcn/code_object.hpp"
#include "fuzz_check.hpp"

using namespace duet::gcn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::span<const unsigned char> in(data, size);
    ReadCodeObjectResult r = readCodeObject(in);
    if (r) {
        for (const KernelInfo& k : r.object.kernels) {
            FUZZ_CHECK(k.descriptorAddress != 0, "a kernel without its descriptor was accepted");
            (void)occupancyLine(k, 64);
        }
    }
    LoadedCodeObject loaded;
    std::string why = loaded.load(in);
    if (!why.empty())
        return 0;
    FUZZ_CHECK(loaded.base() % 4096 == 0 && loaded.size() % 4096 == 0, "misaligned image");
    if (!r || !kernelsOutsideImage(r.object, loaded).empty())
        return 0;
    // Accepted: what a dispatch reads, each kernel's descriptor and code, is inside the image
    // (ASan checks every byte).
    const auto* image = reinterpret_cast<const volatile unsigned char*>(loaded.base());
    unsigned sum = 0;
    for (const KernelInfo& k : r.object.kernels) {
        for (size_t i = 0; i < 64; ++i) // a kernel descriptor is 64 bytes (AMDGPUUsage)
            sum += image[k.descriptorAddress + i];
        for (size_t i = 0; i < k.codeSize; i += 64)
            sum += image[k.codeAddress + i];
    }
    (void)sum;
    return 0;
}
