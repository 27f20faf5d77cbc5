// Code-object reader (llvm::object + llvm::msgpack), host-memory loader and occupancy maths.
#include "devices/gcn/code_object.hpp"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/BinaryFormat/MsgPackReader.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace duet::gcn {
namespace {

using namespace llvm;
using ELFT = object::ELF64LE;

constexpr size_t kDescriptorSize = 64;

template <class T> T readLE(const unsigned char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

KernelDescriptor parseDescriptor(const unsigned char* p) {
    KernelDescriptor d;
    d.groupSegmentFixedSize = readLE<uint32_t>(p + 0);
    d.privateSegmentFixedSize = readLE<uint32_t>(p + 4);
    d.kernargSize = readLE<uint32_t>(p + 8);
    d.kernelCodeEntryByteOffset = readLE<int64_t>(p + 16);
    d.computePgmRsrc3 = readLE<uint32_t>(p + 44);
    d.computePgmRsrc1 = readLE<uint32_t>(p + 48);
    d.computePgmRsrc2 = readLE<uint32_t>(p + 52);
    d.kernelCodeProperties = readLE<uint16_t>(p + 56);
    d.kernargPreload = readLE<uint16_t>(p + 58);
    return d;
}

/// Why `blob` is not msgpack that msgpack::Document may be given, or "". The Document reader
/// trusts its input in one place: map keys are ordered by DocNode's operator<, which reaches
/// llvm_unreachable for two keys that are both maps, arrays or extensions (SIGILL in a release
/// LLVM; found by fuzz_gcn_code_object). So the blob is walked first with the bounds-checked
/// msgpack::Reader: every map key must be a string (AMDGPU metadata has no other), and no
/// container may claim more elements than there are bytes left.
std::string unsafeMsgpack(StringRef blob) {
    msgpack::Reader reader(blob);
    struct Level {
        uint64_t left;   ///< elements (arrays) or pairs (maps) still to come
        bool map;        ///< a map: the next object is a key when `key`
        bool key = true; ///< maps only
    };
    std::vector<Level> open;
    msgpack::Object obj;
    for (;;) {
        Expected<bool> got = reader.read(obj);
        if (!got)
            return toString(got.takeError());
        if (!*got)
            return "";
        if (!open.empty()) {
            Level& l = open.back();
            if (l.map && l.key) {
                if (obj.Kind != msgpack::Type::String)
                    return "a map key is not a string";
                l.key = false;
            } else {
                l.key = true;
                --l.left;
            }
        }
        if (obj.Kind == msgpack::Type::Array || obj.Kind == msgpack::Type::Map) {
            if (obj.Length > blob.size())
                return "a container claims more elements than the blob has bytes";
            if (obj.Length)
                open.push_back({obj.Length, obj.Kind == msgpack::Type::Map});
        }
        while (!open.empty() && open.back().left == 0)
            open.pop_back();
        if (open.empty())
            return ""; // the root is complete; readFromBlob reads no further (Multi = false)
    }
}

/// Takes what `sym` tells of the kernels: a kernel's code size (its own symbol) or its
/// descriptor (the `.kd` symbol), read from inside its section.
Error readKernelSymbol(const object::ELFFile<ELFT>& elf, const ELFT::Sym& sym, StringRef name,
                       std::vector<KernelInfo>& kernels) {
    for (KernelInfo& k : kernels) {
        if (!k.runtimeHandle.empty() && name == k.runtimeHandle) {
            k.runtimeHandleAddress = sym.st_value;
            continue;
        }
        if (name == k.name) {
            k.codeSize = sym.st_size;
            continue;
        }
        if (name != k.symbol)
            continue;
        auto fail = [&](const std::string& why) {
            return createStringError("kernel descriptor " + k.symbol + " " + why);
        };
        if (sym.st_shndx == ELF::SHN_UNDEF || sym.st_shndx >= ELF::SHN_LORESERVE)
            return fail("has no section");
        auto sec = elf.getSection(sym.st_shndx);
        if (!sec)
            return fail("has no section: " + toString(sec.takeError()));
        auto contents = elf.getSectionContents(**sec);
        if (!contents)
            return fail("has no contents: " + toString(contents.takeError()));
        const uint64_t addr = sym.st_value, secAddr = (*sec)->sh_addr;
        if (addr < secAddr || addr - secAddr > contents->size() ||
            contents->size() - (addr - secAddr) < kDescriptorSize)
            return fail("lies outside its section");
        k.descriptor = parseDescriptor(contents->data() + (addr - secAddr));
        k.descriptorAddress = addr;
        k.codeAddress = addr + uint64_t(k.descriptor.kernelCodeEntryByteOffset);
    }
    return Error::success();
}

/// Map lookup that does not insert (MapDocNode::operator[] would).
const msgpack::DocNode* field(msgpack::DocNode& map, StringRef key) {
    if (!map.isMap())
        return nullptr;
    msgpack::MapDocNode& m = map.getMap();
    auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
}

std::optional<uint64_t> uintField(msgpack::DocNode& map, StringRef key) {
    const msgpack::DocNode* n = field(map, key);
    if (!n)
        return std::nullopt;
    if (n->getKind() == msgpack::Type::UInt)
        return n->getUInt();
    if (n->getKind() == msgpack::Type::Int && n->getInt() >= 0)
        return uint64_t(n->getInt());
    return std::nullopt;
}

std::string stringField(msgpack::DocNode& map, StringRef key) {
    const msgpack::DocNode* n = field(map, key);
    return n && n->isString() ? n->getString().str() : std::string();
}

/// Reads one `amdhsa.kernels` entry; returns an error or "".
std::string parseKernelMeta(msgpack::DocNode& k, KernelInfo& out) {
    if (!k.isMap())
        return "an amdhsa.kernels entry is not a map";
    out.name = stringField(k, ".name");
    out.symbol = stringField(k, ".symbol");
    if (out.name.empty() || out.symbol.empty())
        return "a kernel's metadata lacks .name or .symbol";
    out.runtimeHandle = stringField(k, ".device_enqueue_symbol");
    auto u32 = [&](StringRef key, uint32_t& v) {
        if (auto x = uintField(k, key))
            v = uint32_t(*x);
    };
    u32(".kernarg_segment_size", out.kernargSegmentSize);
    u32(".kernarg_segment_align", out.kernargSegmentAlign);
    u32(".group_segment_fixed_size", out.groupSegmentFixedSize);
    u32(".private_segment_fixed_size", out.privateSegmentFixedSize);
    u32(".wavefront_size", out.wavefrontSize);
    u32(".sgpr_count", out.sgprCount);
    u32(".vgpr_count", out.vgprCount);
    u32(".sgpr_spill_count", out.sgprSpillCount);
    u32(".vgpr_spill_count", out.vgprSpillCount);
    u32(".max_flat_workgroup_size", out.maxFlatWorkgroupSize);
    if (const msgpack::DocNode* n = field(k, ".uses_dynamic_stack"))
        out.dynamicStack = n->getKind() == msgpack::Type::Boolean && n->getBool();
    if (msgpack::DocNode* n = const_cast<msgpack::DocNode*>(field(k, ".reqd_workgroup_size"))) {
        if (!n->isArray() || n->getArray().size() != 3)
            return "kernel " + out.name + ": .reqd_workgroup_size is not 3 numbers";
        for (unsigned d = 0; d < 3; ++d) {
            msgpack::DocNode& e = n->getArray()[d];
            if (e.getKind() != msgpack::Type::UInt)
                return "kernel " + out.name + ": .reqd_workgroup_size is not 3 numbers";
            out.reqdWorkgroupSize[d] = uint32_t(e.getUInt());
        }
    }
    msgpack::DocNode* args = const_cast<msgpack::DocNode*>(field(k, ".args"));
    if (!args)
        return "";
    if (!args->isArray())
        return "kernel " + out.name + ": .args is not an array";
    for (msgpack::DocNode& a : args->getArray()) {
        if (!a.isMap())
            return "kernel " + out.name + ": an .args entry is not a map";
        KernelArgMeta m;
        m.name = stringField(a, ".name");
        m.valueKind = stringField(a, ".value_kind");
        m.addressSpace = stringField(a, ".address_space");
        auto offset = uintField(a, ".offset");
        auto size = uintField(a, ".size");
        if (m.valueKind.empty() || !offset || !size)
            return "kernel " + out.name + ": an argument lacks .value_kind, .offset or .size";
        m.offset = uint32_t(*offset);
        m.size = uint32_t(*size);
        m.pointeeAlign = uint32_t(uintField(a, ".pointee_align").value_or(0));
        if (uint64_t(m.offset) + m.size > out.kernargSegmentSize)
            return "kernel " + out.name + ": argument at offset " + std::to_string(m.offset) +
                   " lies outside the kernarg segment";
        out.mayEnqueue =
            out.mayEnqueue || m.valueKind == "hidden_default_queue" || m.valueKind == "queue";
        out.args.push_back(std::move(m));
    }
    return "";
}

} // namespace

const KernelInfo* CodeObject::find(std::string_view name) const {
    for (const KernelInfo& k : kernels)
        if (k.name == name)
            return &k;
    return nullptr;
}

std::string parsePrintfFormat(std::string_view text, rt::PrintfFormat& out) {
    // Fields up to the format are decimal numbers; the format itself may hold ':' freely.
    auto number = [&](uint32_t& v) -> bool {
        size_t colon = text.find(':');
        if (colon == std::string_view::npos || colon == 0 || colon > 9)
            return false;
        v = 0;
        for (char c : text.substr(0, colon)) {
            if (c < '0' || c > '9')
                return false;
            v = v * 10 + uint32_t(c - '0');
        }
        text.remove_prefix(colon + 1);
        return true;
    };
    uint32_t argc = 0;
    if (!number(out.id) || !number(argc))
        return "not \"id:argument count:sizes:format\"";
    if (argc > 1024)
        return "too many arguments";
    out.argSizes.resize(argc);
    for (uint32_t& size : out.argSizes)
        if (!number(size) || size == 0 || size > 4096)
            return "an argument size is missing or not a size";
    // The rest is the format, verbatim (Duet's printf lowering escapes nothing).
    out.format.assign(text.begin(), text.end());
    return {};
}

std::string printfFormatEntry(const rt::PrintfFormat& f) {
    std::string entry = std::to_string(f.id) + ":" + std::to_string(f.argSizes.size());
    for (uint32_t size : f.argSizes)
        entry += ":" + std::to_string(size);
    return entry + ":" + f.format;
}

ReadCodeObjectResult readCodeObject(std::span<const unsigned char> bytes) {
    ReadCodeObjectResult r;
    auto fail = [&](std::string why) {
        ReadCodeObjectResult f;
        f.error = std::move(why);
        return f;
    };
    StringRef data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    auto file = object::ELF64LEObjectFile::create(MemoryBufferRef(data, "code object"));
    if (!file)
        return fail("not an ELF64 little-endian file: " + toString(file.takeError()));
    const object::ELFFile<ELFT>& elf = file->getELFFile();
    const auto& eh = elf.getHeader();
    if (eh.e_machine != ELF::EM_AMDGPU)
        return fail("ELF machine is " + std::to_string(eh.e_machine) + ", not EM_AMDGPU");
    if (eh.e_ident[ELF::EI_OSABI] != ELF::ELFOSABI_AMDGPU_HSA)
        return fail("ELF OS ABI is not AMDGPU HSA");
    if (eh.e_type != ELF::ET_DYN)
        return fail("code object is not a shared object (ET_DYN)");
    r.object.abiVersion = eh.e_ident[ELF::EI_ABIVERSION];
    r.object.elfFlags = eh.e_flags;

    // The metadata note: owner "AMDGPU", type NT_AMDGPU_METADATA, msgpack description.
    std::string metadata;
    bool haveMetadata = false;
    auto sections = elf.sections();
    if (!sections)
        return fail("bad section table: " + toString(sections.takeError()));
    for (const auto& sh : *sections) {
        if (sh.sh_type != ELF::SHT_NOTE)
            continue;
        // ELFFile::notes() checks sh_offset + sh_size against the file with a sum that can wrap
        // (LLVM 19; a heap overflow found by fuzz_gcn_code_object): check without one first.
        if (sh.sh_offset > bytes.size() || sh.sh_size > bytes.size() - sh.sh_offset)
            return fail("a note section lies outside the file");
        Error err = Error::success();
        for (const auto& note : elf.notes(sh, err)) {
            if (note.getName() != "AMDGPU" || note.getType() != ELF::NT_AMDGPU_METADATA)
                continue;
            ArrayRef<uint8_t> desc = note.getDesc(sh.sh_addralign ? sh.sh_addralign : 4);
            metadata.assign(reinterpret_cast<const char*>(desc.data()), desc.size());
            haveMetadata = true;
        }
        if (err)
            return fail("bad note section: " + toString(std::move(err)));
    }
    if (!haveMetadata)
        return fail("code object has no AMDGPU metadata note");

    if (std::string why = unsafeMsgpack(metadata); !why.empty())
        return fail("AMDGPU metadata note is not usable msgpack: " + why);
    msgpack::Document doc;
    if (!doc.readFromBlob(metadata, /*Multi=*/false))
        return fail("AMDGPU metadata note is not valid msgpack");
    msgpack::DocNode& root = doc.getRoot();
    if (!root.isMap())
        return fail("AMDGPU metadata is not a map");
    r.object.target = stringField(root, "amdhsa.target");
    if (msgpack::DocNode* v = const_cast<msgpack::DocNode*>(field(root, "amdhsa.version"))) {
        if (v->isArray() && v->getArray().size() >= 2)
            for (unsigned i = 0; i < 2; ++i)
                if (v->getArray()[i].getKind() == msgpack::Type::UInt)
                    r.object.version[i] = uint32_t(v->getArray()[i].getUInt());
    }
    if (msgpack::DocNode* p = const_cast<msgpack::DocNode*>(field(root, "amdhsa.printf"))) {
        if (p->isArray())
            for (msgpack::DocNode& s : p->getArray())
                if (s.isString()) {
                    r.object.printfFormats.push_back(s.getString().str());
                    rt::PrintfFormat f;
                    if (std::string e = parsePrintfFormat(s.getString(), f); !e.empty())
                        return fail("amdhsa.printf entry '" + s.getString().str() + "': " + e);
                    r.object.printf.push_back(std::move(f));
                }
    }
    msgpack::DocNode* kernels = const_cast<msgpack::DocNode*>(field(root, "amdhsa.kernels"));
    if (!kernels || !kernels->isArray())
        return fail("AMDGPU metadata has no amdhsa.kernels array");
    for (msgpack::DocNode& k : kernels->getArray()) {
        KernelInfo info;
        if (std::string e = parseKernelMeta(k, info); !e.empty())
            return fail(e);
        r.object.kernels.push_back(std::move(info));
    }

    // Descriptors and code sizes from the symbol table, through ELFFile's checked accessors:
    // ELFObjectFile::symbols() names a section symbol by a section header it does not check
    // lies inside the file (a heap overflow in LLVM 19, found by fuzz_gcn_code_object).
    for (const auto& sh : *sections) {
        if (sh.sh_type != ELF::SHT_SYMTAB)
            continue;
        auto symbols = elf.symbols(&sh);
        if (!symbols)
            return fail("bad symbol table: " + toString(symbols.takeError()));
        auto strtab = elf.getStringTableForSymtab(sh);
        if (!strtab)
            return fail("bad symbol string table: " + toString(strtab.takeError()));
        for (const auto& sym : *symbols) {
            if (sym.getType() == ELF::STT_SECTION)
                continue;
            auto name = sym.getName(*strtab);
            if (!name) {
                consumeError(name.takeError());
                continue;
            }
            if (Error e = readKernelSymbol(elf, sym, *name, r.object.kernels))
                return fail(toString(std::move(e)));
        }
    }
    for (const KernelInfo& k : r.object.kernels)
        if (!k.descriptorAddress)
            return fail("kernel " + k.name + " has no descriptor symbol " + k.symbol);
        else if (!k.runtimeHandle.empty() && !k.runtimeHandleAddress)
            return fail("block kernel " + k.name + " has no runtime handle symbol " +
                        k.runtimeHandle);
    return r;
}

LoadedCodeObject::~LoadedCodeObject() {
    std::free(m_memory);
}

std::string LoadedCodeObject::load(std::span<const unsigned char> bytes) {
    StringRef data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    auto file = object::ELF64LEObjectFile::create(MemoryBufferRef(data, "code object"));
    if (!file)
        return "not an ELF64 file: " + toString(file.takeError());
    const object::ELFFile<ELFT>& elf = file->getELFFile();
    auto phdrs = elf.program_headers();
    if (!phdrs)
        return "bad program headers: " + toString(phdrs.takeError());
    // A code object is kernels and their constants: far below kMaxImage. Larger claims (and
    // sums that wrap) are corruption, not something to allocate and clear.
    constexpr uint64_t kMaxImage = uint64_t(256) << 20;
    uint64_t end = 0;
    for (const auto& ph : *phdrs) {
        if (ph.p_type != ELF::PT_LOAD)
            continue;
        if (ph.p_vaddr > kMaxImage || ph.p_memsz > kMaxImage - ph.p_vaddr)
            return "a loadable segment has an implausible address or size";
        end = std::max<uint64_t>(end, ph.p_vaddr + ph.p_memsz);
    }
    if (end == 0)
        return "code object has no loadable segment";
    // Kernel entries must be 256-byte aligned (COMPUTE_PGM_LO holds address >> 8); pages keep
    // the code apart from anything else.
    const size_t size = (end + 4095) & ~size_t(4095);
    auto* mem = static_cast<unsigned char*>(std::aligned_alloc(4096, size));
    if (!mem)
        return "out of host memory for the code object";
    std::memset(mem, 0, size);
    for (const auto& ph : *phdrs) {
        if (ph.p_type != ELF::PT_LOAD)
            continue;
        if (ph.p_offset > bytes.size() || ph.p_filesz > bytes.size() - ph.p_offset ||
            ph.p_filesz > ph.p_memsz) {
            std::free(mem);
            return "a loadable segment lies outside the file";
        }
        std::memcpy(mem + ph.p_vaddr, bytes.data() + ph.p_offset, ph.p_filesz);
    }
    // Dynamic relocations: lld leaves R_AMDGPU_RELATIVE64 (and ABS64 against defined
    // symbols) for addresses of globals stored in memory.
    auto sections = elf.sections();
    if (!sections) {
        std::free(mem);
        return "bad section table: " + toString(sections.takeError());
    }
    for (const auto& sh : *sections) {
        if (sh.sh_type != ELF::SHT_RELA)
            continue;
        auto relas = elf.relas(sh);
        if (!relas) {
            std::free(mem);
            return "bad relocation section: " + toString(relas.takeError());
        }
        auto symtab = elf.getSection(sh.sh_link);
        for (const auto& rel : *relas) {
            const uint32_t type = rel.getType(false);
            const uint64_t at = rel.r_offset;
            if (at > size || size - at < 8) {
                std::free(mem);
                return "a relocation lies outside the loaded image";
            }
            uint64_t value = 0;
            if (type == ELF::R_AMDGPU_RELATIVE64) {
                value = reinterpret_cast<uint64_t>(mem) + uint64_t(rel.r_addend);
            } else if (type == ELF::R_AMDGPU_ABS64) {
                if (!symtab) {
                    consumeError(symtab.takeError());
                    std::free(mem);
                    return "a relocation has no symbol table";
                }
                auto sym = elf.getRelocationSymbol(rel, *symtab);
                if (!sym || !*sym || (*sym)->st_shndx == ELF::SHN_UNDEF) {
                    if (!sym)
                        consumeError(sym.takeError());
                    std::free(mem);
                    return "a relocation refers to an undefined symbol";
                }
                value = reinterpret_cast<uint64_t>(mem) + (*sym)->st_value + uint64_t(rel.r_addend);
            } else if (type == ELF::R_AMDGPU_NONE) {
                continue;
            } else {
                std::free(mem);
                return "unsupported dynamic relocation type " + std::to_string(type);
            }
            std::memcpy(mem + at, &value, 8);
        }
    }
    std::free(m_memory);
    m_memory = mem;
    m_size = size;
    return "";
}

std::string kernelsOutsideImage(const CodeObject& object, const LoadedCodeObject& loaded) {
    const uint64_t size = loaded.size();
    for (const KernelInfo& k : object.kernels) {
        if (k.descriptorAddress > size || size - k.descriptorAddress < kDescriptorSize)
            return "kernel descriptor " + k.symbol + " lies outside the loaded code object";
        if (k.codeAddress >= size || k.codeSize > size - k.codeAddress)
            return "the code of kernel " + k.name + " lies outside the loaded code object";
        if (k.codeAddress % 256)
            return "the code of kernel " + k.name + " is not 256-byte aligned";
        // The runtime writes a block kernel's 16-byte handle (device enqueue) in place.
        if (k.runtimeHandleAddress &&
            (k.runtimeHandleAddress > size || size - k.runtimeHandleAddress < 16))
            return "the runtime handle " + k.runtimeHandle + " lies outside the loaded code object";
    }
    return "";
}

std::string occupancyLine(const KernelInfo& k, unsigned workGroupSize) {
    Occupancy o =
        computeOccupancy(k.vgprCount, k.sgprCount, k.groupSegmentFixedSize, workGroupSize);
    std::string s = "kernel " + k.name + ": " + std::to_string(k.vgprCount) + " VGPRs, " +
                    std::to_string(k.sgprCount) + " SGPRs, " +
                    std::to_string(k.groupSegmentFixedSize) + " bytes LDS, " +
                    std::to_string(k.privateSegmentFixedSize) + " bytes scratch per work-item";
    if (k.sgprSpillCount || k.vgprSpillCount)
        s += " (spills: " + std::to_string(k.sgprSpillCount) + " SGPRs, " +
             std::to_string(k.vgprSpillCount) + " VGPRs)";
    s += "; occupancy " + std::to_string(o.wavesPerSimd) + "/10 waves per SIMD at " +
         std::to_string(workGroupSize) + " work-items per group (limited by " + o.limit + ")";
    return s;
}

} // namespace duet::gcn
