// The GCN device's printf buffer: what the kernel's __printf_alloc (finalize_gcn.cpp) writes
// into, and the decoder that turns its records into text with the CPU device's formatter.
// No LLVM headers.
#pragma once

#include "devices/gcn/code_object.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace duet::gcn {

/// Buffer layout, shared with the __printf_alloc the finalizer defines: a 64-bit offset the
/// kernel advances atomically for every record (also for those that do not fit, so overflow is
/// visible), the 64-bit data capacity, then the records.
inline constexpr size_t kPrintfHeaderBytes = 16;
/// Where code object v5 puts hidden_printf_buffer, from the implicit-argument pointer.
inline constexpr uint32_t kImplicitPrintfBufferOffset = 72;

/// Zeroes the header and sets the capacity: `buffer` holds kPrintfHeaderBytes + `capacity`
/// bytes whose data part is zero.
void initPrintfBuffer(unsigned char* buffer, uint64_t capacity);

struct PrintfOutput {
    std::string text;          ///< every record that fit, formatted, in buffer order
    uint64_t lostBytes = 0;    ///< bytes of records that did not fit (0: no overflow)
    uint64_t records = 0;
    std::string error;         ///< a record the decoder could not read (unknown id, bad format)
};

/// Formats the buffer's records and resets it (data zeroed up to what was used, offset 0) for
/// the next dispatch.
PrintfOutput drainPrintfBuffer(unsigned char* buffer, std::span<const PrintfFormat> formats);

} // namespace duet::gcn
