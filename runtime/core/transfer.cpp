// Host-memory data movement: box copies and fills, and the DeviceBackend defaults built on them.
#include "core/transfer.hpp"
#include "core/device.hpp"
#include "core/memory.hpp"

#include <cstring>

namespace duet::rt {

void copyBox(char* dst, const Strided& dstAt, const char* src, const Strided& srcAt,
             const BoxSize& box) {
    dst += dstAt.offset;
    src += srcAt.offset;
    for (size_t z = 0; z < box.slices; ++z)
        for (size_t y = 0; y < box.rows; ++y)
            std::memmove(dst + z * dstAt.slicePitch + y * dstAt.rowPitch,
                         src + z * srcAt.slicePitch + y * srcAt.rowPitch, box.width);
}

void fillBox(char* dst, const Strided& at, const BoxSize& box, const void* pattern,
             size_t patternSize) {
    dst += at.offset;
    const auto* pat = static_cast<const unsigned char*>(pattern);
    for (size_t z = 0; z < box.slices; ++z)
        for (size_t y = 0; y < box.rows; ++y) {
            char* row = dst + z * at.slicePitch + y * at.rowPitch;
            if (patternSize == 1) {
                std::memset(row, pat[0], box.width);
                continue;
            }
            for (size_t x = 0; x < box.width; x += patternSize)
                std::memcpy(row + x, pat, patternSize);
        }
}

// ---- DeviceBackend defaults: the device's memory is the host's ----------------------------
// Each resolves Mem::data() when the command runs, never earlier: a GL buffer shared in place
// moves between acquire and release.

cl_int DeviceBackend::read(const Mem& src, size_t offset, size_t size, void* host) {
    const char* from = src.data() + offset;
    if (from != host) // a USE_HOST_PTR buffer may be read into its own host memory
        std::memcpy(host, from, size);
    return CL_SUCCESS;
}

cl_int DeviceBackend::write(Mem& dst, size_t offset, size_t size, const void* host) {
    char* to = dst.data() + offset;
    if (to != host)
        std::memcpy(to, host, size);
    return CL_SUCCESS;
}

cl_int DeviceBackend::copy(const Mem& src, size_t srcOffset, Mem& dst, size_t dstOffset,
                           size_t size) {
    std::memcpy(dst.data() + dstOffset, src.data() + srcOffset, size);
    return CL_SUCCESS;
}

cl_int DeviceBackend::readRect(const Mem& src, const Strided& srcAt, void* host,
                               const Strided& hostAt, const BoxSize& box) {
    copyBox(static_cast<char*>(host), hostAt, src.data(), srcAt, box);
    return CL_SUCCESS;
}

cl_int DeviceBackend::writeRect(Mem& dst, const Strided& dstAt, const void* host,
                                const Strided& hostAt, const BoxSize& box) {
    copyBox(dst.data(), dstAt, static_cast<const char*>(host), hostAt, box);
    return CL_SUCCESS;
}

cl_int DeviceBackend::copyRect(const Mem& src, const Strided& srcAt, Mem& dst, const Strided& dstAt,
                               const BoxSize& box) {
    copyBox(dst.data(), dstAt, src.data(), srcAt, box);
    return CL_SUCCESS;
}

cl_int DeviceBackend::fill(Mem& dst, const Strided& at, const BoxSize& box, const void* pattern,
                           size_t patternSize) {
    fillBox(dst.data(), at, box, pattern, patternSize);
    return CL_SUCCESS;
}

cl_int DeviceBackend::map(Mem&, const Strided&, const BoxSize&, cl_map_flags) {
    return CL_SUCCESS;
}

cl_int DeviceBackend::unmap(Mem&, void*) {
    return CL_SUCCESS;
}

cl_int DeviceBackend::migrate(Mem&, cl_mem_migration_flags) {
    return CL_SUCCESS;
}

} // namespace duet::rt
