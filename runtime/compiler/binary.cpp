// Program binaries: the ELF container (write, validate, read) and loading one for the CPU.
#include "compiler/binary.hpp"
#include "compiler/llvm_util.hpp"

#include <llvm/Support/BLAKE3.h>

#include <elf.h>

#include <array>
#include <bit>
#include <cstring>
#include <limits>

namespace duet::rt {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the binary format is little-endian and written with plain copies");

constexpr char kNoteOwner[] = "Duet"; // with its NUL: namesz 5

size_t align4(size_t v) {
    return (v + 3) & ~size_t(3);
}

void appendRaw(std::string& out, const void* p, size_t n) {
    out.append(static_cast<const char*>(p), n);
}

void appendNote(std::string& out, uint32_t type, const void* desc, uint32_t descSize) {
    Elf64_Nhdr h{};
    h.n_namesz = sizeof(kNoteOwner);
    h.n_descsz = descSize;
    h.n_type = type;
    appendRaw(out, &h, sizeof h);
    appendRaw(out, kNoteOwner, sizeof kNoteOwner);
    out.resize(align4(out.size()), '\0');
    appendRaw(out, desc, descSize);
    out.resize(align4(out.size()), '\0');
}

void appendNoteU32(std::string& out, uint32_t type, uint32_t value) {
    appendNote(out, type, &value, sizeof value);
}

void appendNoteString(std::string& out, uint32_t type, const std::string& s) {
    appendNote(out, type, s.c_str(), uint32_t(s.size() + 1));
}

struct SectionIn {
    const char* name;
    uint32_t type;
    uint64_t flags;
    uint64_t align;
    const std::string* data;
};

bool validBinaryType(uint32_t t) {
    return t == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT || t == CL_PROGRAM_BINARY_TYPE_LIBRARY ||
           t == CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
}

ReadProgramBinaryResult invalid(std::string reason) {
    ReadProgramBinaryResult r;
    r.status = CL_INVALID_BINARY;
    r.reason = std::move(reason);
    return r;
}

using Digest = std::array<uint8_t, 32>;
static_assert(sizeof kBinaryTrailerMagic + sizeof(uint64_t) + sizeof(Digest) == kBinaryTrailerSize);

Digest imageDigest(const unsigned char* image, size_t size) {
    return llvm::BLAKE3::hash<32>(llvm::ArrayRef<uint8_t>(image, size));
}

/// Why `bytes` fail the integrity check, or empty when the trailer matches the image.
std::string integrityError(std::span<const unsigned char> bytes) {
    const size_t size = bytes.size();
    if (size < SELFMAG || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
        return "binary is not an ELF file (bad magic)";
    if (size < sizeof(Elf64_Ehdr) + kBinaryTrailerSize)
        return "binary is too small to be a Duet program binary (" + std::to_string(size) +
               " bytes)";
    const unsigned char* trailer = bytes.data() + size - kBinaryTrailerSize;
    if (std::memcmp(trailer, kBinaryTrailerMagic, sizeof kBinaryTrailerMagic) != 0)
        return "binary does not end with Duet's integrity trailer: it is truncated, has bytes "
               "appended, or was not written by this version of Duet";
    uint64_t imageSize = 0;
    std::memcpy(&imageSize, trailer + sizeof kBinaryTrailerMagic, sizeof imageSize);
    if (imageSize != size - kBinaryTrailerSize)
        return "binary's integrity trailer records " + std::to_string(imageSize) + " bytes but " +
               std::to_string(size - kBinaryTrailerSize) +
               " precede it: the binary was cut or spliced";
    Digest stored;
    std::memcpy(stored.data(), trailer + sizeof kBinaryTrailerMagic + sizeof imageSize,
                stored.size());
    if (imageDigest(bytes.data(), imageSize) != stored)
        return "binary is corrupted: its BLAKE3 checksum does not match its contents";
    return {};
}

/// A NUL-terminated string inside [p, p + n), or nullopt.
std::optional<std::string> boundedString(const unsigned char* p, size_t n) {
    const void* nul = std::memchr(p, 0, n);
    if (!nul)
        return std::nullopt;
    return std::string(reinterpret_cast<const char*>(p),
                       size_t(static_cast<const unsigned char*>(nul) - p));
}

} // namespace

const char* binaryTypeName(cl_program_binary_type t) {
    switch (t) {
    case CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT:
        return "compiled object";
    case CL_PROGRAM_BINARY_TYPE_LIBRARY:
        return "library";
    case CL_PROGRAM_BINARY_TYPE_EXECUTABLE:
        return "executable";
    default:
        return "unknown";
    }
}

std::string targetKindName(uint32_t kind) {
    static const char* const kNames[] = {"CPU", "GCN", "NVIDIA"};
    return kind <= kDuetMaxTargetKind ? kNames[kind] : "kind " + std::to_string(kind);
}

std::string writeProgramBinary(const ProgramBinary& b) {
    std::string notes;
    appendNoteU32(notes, kDuetNoteVersion, kDuetBinaryVersion);
    appendNoteU32(notes, kDuetNoteBinaryType, uint32_t(b.type));
    appendNoteU32(notes, kDuetNoteTargetKind, b.targetKind);
    appendNoteString(notes, kDuetNoteTargetName, b.targetName);
    appendNoteString(notes, kDuetNoteOptions, b.options);

    std::vector<SectionIn> sections = {
        {".note.duet", SHT_NOTE, 0, 4, &notes},
        {".source", SHT_PROGBITS, 0, 1, &b.source},
        {".llvmir", SHT_PROGBITS, 0, 16, &b.bitcode},
    };
    if (!b.text.empty())
        sections.push_back({".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 16, &b.text});

    // Section name table: index 0 is the empty name.
    std::string shstrtab(1, '\0');
    std::vector<uint32_t> nameOffsets;
    const uint32_t shstrtabName = uint32_t(shstrtab.size());
    shstrtab += ".shstrtab";
    shstrtab += '\0';
    for (const SectionIn& s : sections) {
        nameOffsets.push_back(uint32_t(shstrtab.size()));
        shstrtab += s.name;
        shstrtab += '\0';
    }

    std::string out(sizeof(Elf64_Ehdr), '\0');
    std::vector<Elf64_Shdr> headers(1); // SHN_UNDEF
    auto place = [&](uint32_t name, uint32_t type, uint64_t flags, uint64_t align,
                     const std::string& data) {
        out.resize((out.size() + align - 1) / align * align, '\0');
        Elf64_Shdr h{};
        h.sh_name = name;
        h.sh_type = type;
        h.sh_flags = flags;
        h.sh_offset = out.size();
        h.sh_size = data.size();
        h.sh_addralign = align;
        out += data;
        headers.push_back(h);
    };
    place(shstrtabName, SHT_STRTAB, 0, 1, shstrtab);
    for (size_t i = 0; i < sections.size(); ++i)
        place(nameOffsets[i], sections[i].type, sections[i].flags, sections[i].align,
              *sections[i].data);

    out.resize((out.size() + 7) / 8 * 8, '\0');
    const uint64_t shoff = out.size();
    for (const Elf64_Shdr& h : headers)
        appendRaw(out, &h, sizeof h);

    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
    eh.e_type = ET_REL;
    eh.e_machine = b.machine;
    eh.e_version = EV_CURRENT;
    eh.e_ehsize = sizeof(Elf64_Ehdr);
    eh.e_shoff = shoff;
    eh.e_shentsize = sizeof(Elf64_Shdr);
    eh.e_shnum = uint16_t(headers.size());
    eh.e_shstrndx = 1;
    std::memcpy(out.data(), &eh, sizeof eh);
    return sealProgramBinary(out);
}

std::string sealProgramBinary(std::string_view image) {
    std::string out(image);
    const auto* begin = reinterpret_cast<const unsigned char*>(image.data());
    const Digest digest = imageDigest(begin, image.size());
    const uint64_t imageSize = image.size();
    appendRaw(out, kBinaryTrailerMagic, sizeof kBinaryTrailerMagic);
    appendRaw(out, &imageSize, sizeof imageSize);
    appendRaw(out, digest.data(), digest.size());
    return out;
}

ReadProgramBinaryResult readProgramBinary(std::span<const unsigned char> bytes) {
    if (std::string why = integrityError(bytes); !why.empty())
        return invalid(std::move(why));
    // From here on only the ELF image: the trailer is not part of it.
    const size_t size = bytes.size() - kBinaryTrailerSize;
    const unsigned char* base = bytes.data();
    if (size < sizeof(Elf64_Ehdr))
        return invalid("binary is too small to be an ELF file (" + std::to_string(size) +
                       " bytes)");
    Elf64_Ehdr eh;
    std::memcpy(&eh, base, sizeof eh);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return invalid("binary is not an ELF file (bad magic)");
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_ident[EI_VERSION] != EV_CURRENT)
        return invalid("binary is not a little-endian ELF64 file");
    if (eh.e_type != ET_REL)
        return invalid("binary is an ELF file but not a Duet program binary (e_type " +
                       std::to_string(eh.e_type) + ")");
    if (eh.e_ehsize != sizeof(Elf64_Ehdr) || eh.e_phnum != 0)
        return invalid("ELF header size or program header count is not that of a Duet binary");
    if (eh.e_shentsize != sizeof(Elf64_Shdr))
        return invalid("ELF section header size is " + std::to_string(eh.e_shentsize));
    if (eh.e_shnum == 0 || eh.e_shnum > 64)
        return invalid("ELF section count " + std::to_string(eh.e_shnum) + " is out of range");
    if (eh.e_shoff > size || (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
        return invalid("ELF section headers lie outside the binary (truncated?)");
    if (eh.e_shstrndx == SHN_UNDEF || eh.e_shstrndx >= eh.e_shnum)
        return invalid("ELF section name table index is invalid");

    std::vector<Elf64_Shdr> sh(eh.e_shnum);
    std::memcpy(sh.data(), base + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
    for (size_t i = 1; i < sh.size(); ++i) {
        if (sh[i].sh_type == SHT_NOBITS)
            continue;
        if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset)
            return invalid("ELF section " + std::to_string(i) +
                           " lies outside the binary (truncated?)");
    }
    const Elf64_Shdr& strtab = sh[eh.e_shstrndx];
    if (strtab.sh_type != SHT_STRTAB)
        return invalid("ELF section name table has the wrong type");

    ReadProgramBinaryResult result;
    ProgramBinary& b = result.binary;
    b.machine = eh.e_machine;
    bool haveNote = false, haveIr = false;
    bool seenSource = false, seenText = false;
    for (size_t i = 1; i < sh.size(); ++i) {
        if (sh[i].sh_name >= strtab.sh_size)
            return invalid("ELF section " + std::to_string(i) + " has a bad name offset");
        auto name =
            boundedString(base + strtab.sh_offset + sh[i].sh_name, strtab.sh_size - sh[i].sh_name);
        if (!name)
            return invalid("ELF section " + std::to_string(i) + " has an unterminated name");
        if (sh[i].sh_type == SHT_NOBITS)
            continue;
        const auto* data = reinterpret_cast<const char*>(base + sh[i].sh_offset);
        std::string content(data, sh[i].sh_size);
        auto duplicate = [&](bool& seen) {
            if (seen)
                return true;
            seen = true;
            return false;
        };
        if (*name == ".source") {
            if (duplicate(seenSource))
                return invalid("binary has two .source sections");
            b.source = std::move(content);
        } else if (*name == ".llvmir") {
            if (duplicate(haveIr))
                return invalid("binary has two .llvmir sections");
            b.bitcode = std::move(content);
        } else if (*name == ".text") {
            if (duplicate(seenText))
                return invalid("binary has two .text sections");
            b.text = std::move(content);
        } else if (*name == ".note.duet") {
            if (duplicate(haveNote))
                return invalid("binary has two .note.duet sections");
            // Walk the notes with every length checked against what is left.
            bool haveVersion = false, haveType = false;
            size_t pos = 0;
            const size_t n = content.size();
            const auto* p = reinterpret_cast<const unsigned char*>(content.data());
            while (pos < n) {
                if (n - pos < sizeof(Elf64_Nhdr))
                    return invalid(".note.duet is truncated");
                Elf64_Nhdr nh;
                std::memcpy(&nh, p + pos, sizeof nh);
                pos += sizeof nh;
                const size_t nameSize = align4(nh.n_namesz);
                if (nh.n_namesz > n || nameSize > n - pos)
                    return invalid(".note.duet has a note name past its end");
                const bool ours = nh.n_namesz == sizeof(kNoteOwner) &&
                                  std::memcmp(p + pos, kNoteOwner, sizeof(kNoteOwner)) == 0;
                pos += nameSize;
                const size_t descSize = align4(nh.n_descsz);
                if (nh.n_descsz > n || descSize > n - pos)
                    return invalid(".note.duet has a note description past its end");
                const unsigned char* desc = p + pos;
                pos += descSize;
                if (!ours)
                    continue;
                auto u32 = [&](uint32_t& v) {
                    if (nh.n_descsz != 4)
                        return false;
                    std::memcpy(&v, desc, 4);
                    return true;
                };
                uint32_t v = 0;
                switch (nh.n_type) {
                case kDuetNoteVersion:
                    if (!u32(v))
                        return invalid(".note.duet version note is malformed");
                    if (v != kDuetBinaryVersion)
                        return invalid("binary format version " + std::to_string(v) +
                                       " is not supported (expected " +
                                       std::to_string(kDuetBinaryVersion) + ")");
                    haveVersion = true;
                    break;
                case kDuetNoteBinaryType:
                    if (!u32(v) || !validBinaryType(v))
                        return invalid(".note.duet binary type is invalid");
                    b.type = v;
                    haveType = true;
                    break;
                case kDuetNoteTargetKind:
                    if (!u32(v) || v > kDuetMaxTargetKind)
                        return invalid(".note.duet target kind is invalid");
                    b.targetKind = v;
                    break;
                case kDuetNoteTargetName:
                case kDuetNoteOptions: {
                    auto s = boundedString(desc, nh.n_descsz);
                    if (!s)
                        return invalid(".note.duet string note is not terminated");
                    (nh.n_type == kDuetNoteTargetName ? b.targetName : b.options) = *s;
                    break;
                }
                default:
                    break; // newer notes are ignored
                }
            }
            if (!haveVersion || !haveType)
                return invalid(".note.duet lacks the format version or binary type");
        }
    }
    if (!haveNote)
        return invalid("binary has no .note.duet section: not a Duet program binary");
    if (!haveIr)
        return invalid("binary has no .llvmir section");
    if (!looksLikeBitcode(b.bitcode))
        return invalid(".llvmir does not hold LLVM bitcode");
    return result;
}

bool looksLikeBitcode(std::string_view b) {
    auto at = [&](size_t i) { return static_cast<unsigned char>(b[i]); };
    if (b.size() < 4)
        return false;
    if (at(0) == 'B' && at(1) == 'C' && at(2) == 0xC0 && at(3) == 0xDE)
        return true;
    return at(0) == 0xDE && at(1) == 0xC0 && at(2) == 0x17 && at(3) == 0x0B; // wrapper
}

std::string makeObjectBinary(const std::string& bitcode, std::string_view source,
                             cl_program_binary_type type) {
    ProgramBinary b;
    b.type = type;
    b.source = std::string(source);
    b.bitcode = bitcode;
    return writeProgramBinary(b);
}

} // namespace duet::rt
