// Pipe memory objects: storage size, layout and the empty state (see pipe.hpp).
#include "core/pipe.hpp"

#include "core/context.hpp"
#include "core/memory.hpp"

#include <cstring>
#include <limits>

namespace duet::rt {

size_t pipeStorageSize(uint32_t packetSize, uint32_t capacity) {
    constexpr size_t kMax = std::numeric_limits<size_t>::max();
    const size_t slots = kPipeSlotsOffset + size_t(capacity) * sizeof(uint32_t);
    const size_t dataOffset = (slots + 127) / 128 * 128;
    if (capacity && size_t(packetSize) > (kMax - dataOffset) / capacity)
        return 0;
    return dataOffset + size_t(packetSize) * capacity;
}

Result<Mem*> createPipe(Context& context, cl_mem_flags flags, uint32_t packetSize,
                        uint32_t capacity) {
    const size_t size = pipeStorageSize(packetSize, capacity);
    const size_t dataOffset = size - size_t(packetSize) * capacity;
    if (size == 0 || dataOffset > std::numeric_limits<uint32_t>::max())
        return Error{CL_MEM_OBJECT_ALLOCATION_FAILURE,
                     "a pipe of " + std::to_string(capacity) + " packets of " +
                         std::to_string(packetSize) + " bytes is too large to address"};
    char* storage = context.allocateStorage(size, /*hostFills=*/true);
    if (!storage)
        return Error{CL_MEM_OBJECT_ALLOCATION_FAILURE,
                     "could not allocate " + std::to_string(size) + " bytes for the pipe"};
    PipeHeader h{};
    h.packetSize = packetSize;
    h.capacity = capacity;
    // The largest multiple of the capacity below 2^31 (slot states are 2 * position + 1 in 32
    // bits): at least 2 * capacity because capacity <= 2^29, so a slot's states for one lap
    // never coincide with the previous lap's.
    h.modulus = uint32_t(0x7fffffffu / capacity * capacity);
    h.dataOffset = uint32_t(dataOffset);
    std::memset(storage, 0, kPipeSlotsOffset);
    std::memcpy(storage, &h, sizeof h);
    auto* slots = reinterpret_cast<uint32_t*>(storage + kPipeSlotsOffset);
    for (uint32_t i = 0; i < capacity; ++i)
        slots[i] = 2 * i; // slot i is free for the writer of position i
    context.hostFilled(storage, size);
    Mem* m = makeObject<Mem>(retainRef(&context), CL_MEM_OBJECT_PIPE, flags, size, nullptr, storage,
                             true);
    m->pipePacketSize = packetSize;
    m->pipeMaxPackets = capacity;
    return m;
}

} // namespace duet::rt
