// The Duet program binary: a small ELF64 container with .source, .llvmir, .text, .note.duet.
// No LLVM headers: the core, the code generators and tests may include it.
#pragma once

#include "compiler/front_end.hpp"

#include <cstdint>
#include <span>
#include <string>

namespace duet::rt {

/// Layout (all little-endian ELF64, e_type ET_REL, no program headers), followed by an
/// integrity trailer (below) that is checked before any parser looks at the ELF image:
///   .shstrtab   section names
///   .note.duet  notes owned by "Duet": format version, binary type, target kind and name,
///               build options
///   .source     OpenCL C text (may be empty: programs made from binaries)
///   .llvmir     spir64 LLVM bitcode (compiled object, library, or the executable's input)
///   .text       device code (executables only; optional)
struct ProgramBinary {
    cl_program_binary_type type = CL_PROGRAM_BINARY_TYPE_NONE;
    uint32_t targetKind = 0; ///< the device kind's TargetSpec::binaryKind (0 CPU, 1 GCN)
    std::string targetName;  ///< LLVM CPU name; empty for device-independent objects
    std::string options;     ///< build options the executable was made with (re-JIT uses them)
    std::string source;
    std::string bitcode;
    std::string text;
    uint16_t machine = 0; ///< ELF e_machine of .text (EM_X86_64, EM_AMDGPU), 0 when none
};

/// Note types inside .note.duet (owner "Duet").
enum : uint32_t {
    kDuetNoteVersion = 1,    ///< u32 format version
    kDuetNoteBinaryType = 2, ///< u32 cl_program_binary_type
    kDuetNoteTargetKind = 3, ///< u32: TargetSpec::binaryKind of the device kind
    kDuetNoteTargetName = 4, ///< NUL-terminated string
    kDuetNoteOptions = 5,    ///< NUL-terminated string
};
/// Largest target kind a reader accepts (0 CPU, 1 GCN, 2 NVIDIA); each device's loader
/// rejects the kinds that are not its own.
inline constexpr uint32_t kDuetMaxTargetKind = 2;
/// "compiled object", "library", "executable" (for messages).
const char* binaryTypeName(cl_program_binary_type type);
/// A target kind's name for messages ("CPU", "GCN", "NVIDIA").
std::string targetKindName(uint32_t kind);
inline constexpr uint32_t kDuetBinaryVersion =
    2; ///< 2: GCN printf records (devices/gcn/codegen/printf_lowering.cpp)

/// The integrity trailer: the last kBinaryTrailerSize bytes of every binary Duet writes are
/// kBinaryTrailerMagic (8 bytes), the size of the ELF image before the trailer (u64) and the
/// BLAKE3-256 hash of that image. Binaries come from caches and files the application does not
/// control; a truncated, extended or corrupted one is rejected on its hash before the ELF reader,
/// and long before LLVM's bitcode reader (which is not hardened against corrupt input), sees it.
/// It detects corruption, not forgery: a hand-made binary with a matching hash is parsed.
inline constexpr size_t kBinaryTrailerSize = 48;
inline constexpr char kBinaryTrailerMagic[8] = {'D', 'u', 'e', 't', 'S', 'u', 'm', '\1'};

/// Serialises a binary, trailer included. Never fails.
std::string writeProgramBinary(const ProgramBinary& binary);

/// `elfImage` followed by its integrity trailer. writeProgramBinary uses it; tests and fuzzers
/// use it to get a deliberately malformed container past the hash to the ELF reader.
std::string sealProgramBinary(std::string_view elfImage);

struct ReadProgramBinaryResult {
    cl_int status = CL_SUCCESS; ///< CL_SUCCESS or CL_INVALID_BINARY
    std::string reason;         ///< why the bytes are not a Duet binary
    ProgramBinary binary;
};

/// Checks the integrity trailer, then parses and validates the ELF image: every offset and size
/// is checked, so truncated, corrupted or foreign input gives CL_INVALID_BINARY with a reason.
/// Bitcode is not parsed here.
ReadProgramBinaryResult readProgramBinary(std::span<const unsigned char> bytes);

} // namespace duet::rt
