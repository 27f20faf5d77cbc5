// The GCN device's printf buffer: what the kernel's printf records (codegen/printf_lowering.cpp)
// are written into, and the decoder that turns them into text with the CPU device's formatter.
// No LLVM headers.
//
// A record: the format's id (u32, never 0), then each argument in order, packed with no
// padding: a scalar or vector at its in-memory size (a 3-vector as 4 elements, a pointer as a
// 64-bit flat address); a %s string as a u32 length (0xffffffff for a null pointer) followed by
// that many characters, padded to a multiple of 4. A record's size is a multiple of 4. Each
// format is listed in the code object's `amdhsa.printf` as "id:argument count:sizes:format",
// where a string's size is 4 (its length word).
#pragma once

#include "devices/gcn/code_object.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace duet::gcn {

/// Buffer layout, shared with the __duet_printf_alloc the compiler defines: a 64-bit offset the
/// kernel advances atomically for every record (also for those that do not fit, so overflow is
/// visible), the 64-bit data capacity, then the records.
inline constexpr size_t kPrintfHeaderBytes = 16;
/// Where code object v5 puts hidden_printf_buffer, from the implicit-argument pointer.
inline constexpr uint32_t kImplicitPrintfBufferOffset = 72;
/// The length word of a %s argument whose pointer was null (printed "(null)").
inline constexpr uint32_t kPrintfNullString = 0xffffffffu;
/// The longest string a %s argument copies (a longer one, or one with no terminator, is cut).
inline constexpr uint32_t kPrintfMaxString = 64 * 1024;

/// Zeroes the header and sets the capacity: `buffer` holds kPrintfHeaderBytes + `capacity`
/// bytes whose data part is zero.
void initPrintfBuffer(unsigned char* buffer, uint64_t capacity);

struct PrintfOutput {
    std::string text;       ///< every record that fit, formatted, in buffer order
    uint64_t lostBytes = 0; ///< bytes of records that did not fit (0: no overflow)
    uint64_t records = 0;
    std::string error; ///< a record the decoder could not read (unknown id, bad format)
};

/// Formats the buffer's records and resets it (data zeroed up to what was used, offset 0) for
/// the next dispatch.
PrintfOutput drainPrintfBuffer(unsigned char* buffer, std::span<const PrintfFormat> formats);

} // namespace duet::gcn
