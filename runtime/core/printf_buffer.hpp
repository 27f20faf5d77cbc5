// The printf buffer of the GPU devices (GCN, NVIDIA): the record layout their kernels write
// (compiler/printf_lowering.hpp lowers each printf call into one record) and the host-side
// decoder that formats the records with core's formatter (printf_format.hpp). No LLVM.
//
// The buffer: a 16-byte header {u64 offset, u64 capacity}, then `capacity` bytes of records.
// Kernels reserve a record by adding its size to the offset atomically; the offset advances
// also for a record that does not fit (printf then returns -1 and writes nothing), so the host
// sees how much output was lost. The bytes of the data area must be zero before a launch up to
// where the previous one wrote: the decoder stops at an id of 0 (space reserved by a record
// that did not fit).
//
// A record: the format's id (u32, never 0), then each argument in order, packed with no
// padding: a scalar or vector at its in-memory size (a 3-vector as 4 elements, a pointer as a
// 64-bit generic address); a %s string as a u32 length (kPrintfNullString for a null pointer)
// followed by that many characters, padded to a multiple of 4. A record's size is a multiple of
// 4. Each device lists the formats with their ids in its binary (the GCN code object's
// `amdhsa.printf`, the NVIDIA PTX header's `duet-printf` lines), a string's size there being 4
// (its length word).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace duet::rt {

/// The header in front of the records: the offset the kernels advance, the data capacity.
inline constexpr size_t kPrintfHeaderBytes = 16;
/// The length word of a %s argument whose pointer was null (printed "(null)").
inline constexpr uint32_t kPrintfNullString = 0xffffffffu;
/// The longest string a %s argument copies (a longer one, or one with no terminator, is cut).
inline constexpr uint32_t kPrintfMaxString = 64 * 1024;

/// One printf format of a program, as the code generator numbered it.
struct PrintfFormat {
    uint32_t id = 0;                ///< what its records start with (from 1)
    std::vector<uint32_t> argSizes; ///< bytes of each argument in a record (4 for a string)
    std::string format;
    /// The least a record of this format takes: the id and the arguments (strings empty).
    uint32_t recordBytes() const;
};

/// One conversion of a printf format, in argument order: its letter ('d', 'f', 's', ...) and
/// vector length (1 for scalars, from "%v4f"). "%%" is not a conversion.
struct PrintfConversion {
    char letter;
    unsigned vector;
};
/// The conversions of `format`; the lowering and the decoder agree through it on which
/// arguments are strings.
std::vector<PrintfConversion> printfConversions(std::string_view format);

/// What a buffer's records said.
struct PrintfOutput {
    std::string text;       ///< every record that fit, formatted, in buffer order
    uint64_t lostBytes = 0; ///< bytes of records that did not fit (0: no overflow)
    uint64_t records = 0;   ///< records formatted
    std::string error;      ///< a record the decoder could not read (unknown id, bad format)
};

/// Zeroes the header's offset and sets its capacity (the data part is left as it is).
void initPrintfBuffer(unsigned char* buffer, uint64_t capacity);

/// Formats the records of a buffer whose header said `offset`: `records` holds its first
/// min(offset, capacity) data bytes (a copy is fine). Stops at the first record that is not
/// there whole (an id of 0: reserved but not written because it did not fit) or cannot be
/// read (`error`); an offset past `records` is overflow (`lostBytes`).
PrintfOutput decodePrintfRecords(std::span<const unsigned char> records, uint64_t offset,
                                 std::span<const PrintfFormat> formats);

/// decodePrintfRecords on a buffer in host memory (header included), then resets it for the
/// next launch: the data zeroed up to what was used, the offset 0.
PrintfOutput drainPrintfBuffer(unsigned char* buffer, std::span<const PrintfFormat> formats);

/// Writes `out.text` to stdout in one piece and flushes it: a device calls it before the
/// command's event completes (OpenCL C 3.0 §6.15.14.1: a kernel's printf output is flushed
/// when its event completes).
void writePrintfOutput(const PrintfOutput& out);

/// What went wrong with a launch's printf output, as one line per problem for the device to
/// report (stderr, the context's callback): overflow of the `capacity`-byte buffer
/// (CL_DEVICE_PRINTF_BUFFER_SIZE), a record the decoder could not read. Empty when none.
std::vector<std::string> printfProblems(const PrintfOutput& out, uint64_t capacity);

} // namespace duet::rt
