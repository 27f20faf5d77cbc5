// Pipe memory objects: the storage layout that the builtin library's pipe functions share with
// the host (builtins/cpu/pipe.cl, struct duet_pipe), and making one.
#pragma once

#include "core/result.hpp"

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>

namespace duet::rt {

class Context;
class Mem;

/// The head of a pipe's storage. After it: `capacity` 32-bit slot states at kPipeSlotsOffset,
/// then the packets at `dataOffset`. Positions count packets modulo `modulus` (a multiple of
/// `capacity`, at least twice it, below 2^31); packet q lives in slot q % capacity. A slot's
/// state says which position may use it next: 2q (free for the writer of position q), 2q + 1
/// (packet q committed, for the reader of position q); a reader's commit sets it to
/// 2 (q + capacity), freeing it for the next lap. Readers and writers reserve positions by
/// compare-and-swap on `readPos`/`writePos` after checking the slots, so no work-item ever waits
/// for another: a reservation that finds its slots taken fails at once, as the spec's
/// non-blocking pipe functions do. Keep in step with builtins/cpu/pipe.cl.
struct PipeHeader {
    uint32_t packetSize; ///< bytes per packet (clCreatePipe's pipe_packet_size)
    uint32_t capacity;   ///< clCreatePipe's pipe_max_packets
    uint32_t modulus;    ///< positions wrap here: capacity * k, k >= 2
    uint32_t dataOffset; ///< bytes from the header to packet slot 0
    uint32_t pad0[12];
    uint32_t writePos;  ///< next position a writer reserves (atomic)
    uint32_t committed; ///< packets committed by writers, modulo 2^32 (atomic)
    uint32_t pad1[14];
    uint32_t readPos; ///< next position a reader reserves (atomic)
    uint32_t taken;   ///< packets reserved by readers, modulo 2^32 (atomic)
    uint32_t pad2[14];
};
static_assert(sizeof(PipeHeader) == 192, "layout shared with the OpenCL C library");

/// Where the slot states start (one uint32_t per packet).
inline constexpr size_t kPipeSlotsOffset = 256;
/// The largest pipe_max_packets a pipe can have (slot states 2q + 1 < 2^32, modulus >= 2
/// capacity).
inline constexpr uint32_t kPipeMaxPackets = 1u << 29;

/// Bytes of storage for a pipe of `capacity` packets of `packetSize` bytes (0 when it does not
/// fit in a size_t).
size_t pipeStorageSize(uint32_t packetSize, uint32_t capacity);

/// A new pipe of `context` (storage from Context::allocateStorage, laid out and empty). The
/// arguments are checked by the caller (api/svm_pipe.cpp): packetSize and capacity > 0,
/// capacity <= kPipeMaxPackets. Errors: CL_MEM_OBJECT_ALLOCATION_FAILURE.
Result<Mem*> createPipe(Context& context, cl_mem_flags flags, uint32_t packetSize,
                        uint32_t capacity);

} // namespace duet::rt
