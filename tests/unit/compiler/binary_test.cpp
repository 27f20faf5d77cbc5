// Program binaries: ELF container round trips, loading for the CPU, corrupted input rejected.
#include "front_util.hpp"

#include "compiler/binary.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

using namespace duet::rt;
using namespace duet::rt::test;

namespace {

const char* kSource = "kernel void k(global int* a) { a[get_global_id(0)] = 7; }\n";

std::span<const unsigned char> bytes(const std::string& s) {
    return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}

ReadProgramBinaryResult read(const std::string& s) {
    return readProgramBinary(bytes(s));
}

/// The ELF image of a sealed binary: what the container reader parses once the hash matched.
std::string image(const std::string& sealed) {
    return sealed.substr(0, sealed.size() - kBinaryTrailerSize);
}

Elf64_Ehdr header(const std::string& s) {
    Elf64_Ehdr h;
    std::memcpy(&h, s.data(), sizeof h);
    return h;
}

} // namespace

TEST_CASE("object binaries round-trip", "[compiler][binary]") {
    std::string bc = compileOk(kSource);
    for (cl_program_binary_type type :
         {CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, CL_PROGRAM_BINARY_TYPE_LIBRARY}) {
        std::string bin = makeObjectBinary(bc, kSource, type);
        REQUIRE(bin.size() > sizeof(Elf64_Ehdr));
        CHECK(std::memcmp(bin.data(), ELFMAG, SELFMAG) == 0);
        CHECK(header(bin).e_ident[EI_CLASS] == ELFCLASS64);

        ReadProgramBinaryResult r = read(bin);
        INFO(r.reason);
        REQUIRE(r.status == CL_SUCCESS);
        CHECK(r.binary.type == type);
        CHECK(r.binary.source == kSource);
        CHECK(r.binary.bitcode == bc);
        CHECK(r.binary.text.empty());

        LoadBinaryResult load = loadCpuBinary(bytes(bin), cpuTarget());
        INFO(load.log);
        REQUIRE(load.status == CL_SUCCESS);
        CHECK(load.binaryType == type);
        CHECK(load.bitcode == bc);
        CHECK(load.source == kSource);
        CHECK_FALSE(load.executable);
        // What comes back is usable: same kernels.
        auto kernels = describeKernels(load.bitcode);
        REQUIRE(kernels.size() == 1);
        CHECK(kernels[0].name == "k");
    }
}

TEST_CASE("every field of the container round-trips", "[compiler][binary]") {
    ProgramBinary b;
    b.type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
    b.targetKind = 1; // the GCN device's kind
    b.targetName = "gfx900";
    b.options = "-cl-fast-relaxed-math -DX=1";
    b.source = "kernel void k(){}";
    b.bitcode = compileOk(b.source);
    b.text = std::string("\x7f"
                         "ELF machine code \0 with NULs",
                         30);
    b.machine = EM_AMDGPU;
    std::string bin = writeProgramBinary(b);
    ReadProgramBinaryResult r = read(bin);
    INFO(r.reason);
    REQUIRE(r.status == CL_SUCCESS);
    CHECK(r.binary.type == b.type);
    CHECK(r.binary.targetKind == 1);
    CHECK(r.binary.targetName == b.targetName);
    CHECK(r.binary.options == b.options);
    CHECK(r.binary.source == b.source);
    CHECK(r.binary.bitcode == b.bitcode);
    CHECK(r.binary.text == b.text);
    CHECK(r.binary.machine == EM_AMDGPU);
    CHECK(header(bin).e_machine == EM_AMDGPU);

    // A GCN binary is not loadable on the CPU.
    LoadBinaryResult load = loadCpuBinary(bytes(bin), cpuTarget());
    CHECK(load.status == CL_INVALID_BINARY);
    CHECK(load.log.find("GCN") != std::string::npos);
}

TEST_CASE("an executable binary is rebuilt for the CPU", "[compiler][binary][executable]") {
    ProgramBinary b;
    b.type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
    b.source = kSource;
    b.bitcode = linkBitcode(std::vector<std::string>{compileOk(kSource)}, "", false).bitcode;
    std::string bin = writeProgramBinary(b);
    LoadBinaryResult load = loadCpuBinary(bytes(bin), cpuTarget());
    INFO(load.log);
    REQUIRE(load.status == CL_SUCCESS);
    CHECK(load.binaryType == CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    REQUIRE(load.executable);
    REQUIRE(load.executable->kernels().size() == 1);
    CHECK(load.executable->kernels()[0].name == "k");
    CHECK(load.executable->entry(0) != nullptr);
}

TEST_CASE("truncated binaries are rejected at every length", "[compiler][binary][corrupt]") {
    std::string bin =
        makeObjectBinary(compileOk(kSource), kSource, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
    for (size_t n = 0; n < bin.size(); n += (n < 256 ? 1 : 97)) {
        INFO("length " << n);
        std::string cut = bin.substr(0, n);
        ReadProgramBinaryResult r = read(cut);
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK_FALSE(r.reason.empty());
        CHECK(loadCpuBinary(bytes(cut), cpuTarget()).status == CL_INVALID_BINARY);
    }
    CHECK(readProgramBinary({}).status == CL_INVALID_BINARY);
}

TEST_CASE("any corruption is caught by the integrity trailer", "[compiler][binary][corrupt]") {
    std::string good =
        makeObjectBinary(compileOk(kSource), kSource, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
    REQUIRE(good.size() > kBinaryTrailerSize);
    CHECK(std::memcmp(good.data() + good.size() - kBinaryTrailerSize, kBinaryTrailerMagic,
                      sizeof kBinaryTrailerMagic) == 0);
    CHECK(sealProgramBinary(image(good)) == good);
    // One flipped bit anywhere (ELF header, notes, bitcode, section table, trailer) is rejected
    // before the ELF reader or LLVM sees the bytes.
    for (size_t pos = 0; pos < good.size(); pos += (pos < 4096 ? 1 : 61)) {
        std::string bad = good;
        bad[pos] = char(bad[pos] ^ (1 << (pos % 8)));
        ReadProgramBinaryResult r = read(bad);
        INFO("byte " << pos);
        REQUIRE(r.status == CL_INVALID_BINARY);
        if (pos >= SELFMAG)
            CHECK((r.reason.find("checksum") != std::string::npos ||
                   r.reason.find("trailer") != std::string::npos));
        CHECK(loadCpuBinary(bytes(bad), cpuTarget()).status == CL_INVALID_BINARY);
    }
    SECTION("bytes appended") {
        ReadProgramBinaryResult r = read(good + "x");
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK(r.reason.find("trailer") != std::string::npos);
    }
    SECTION("a trailer spliced onto a shorter image") {
        std::string bad =
            image(good).substr(0, 400) + good.substr(good.size() - kBinaryTrailerSize);
        ReadProgramBinaryResult r = read(bad);
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK(r.reason.find("cut or spliced") != std::string::npos);
    }
    SECTION("an unsealed image (a binary from before the trailer)") {
        ReadProgramBinaryResult r = read(image(good));
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK(r.reason.find("integrity trailer") != std::string::npos);
    }
}

TEST_CASE("corrupted headers never crash the reader", "[compiler][binary][corrupt]") {
    // Resealed after each change, so the container reader itself sees the corruption.
    const std::string good = image(
        makeObjectBinary(compileOk(kSource), kSource, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT));
    const Elf64_Ehdr eh = header(good);
    // Flip every byte of the ELF header and of the section header table, one at a time.
    std::vector<size_t> positions;
    for (size_t i = 0; i < sizeof(Elf64_Ehdr); ++i)
        positions.push_back(i);
    for (size_t i = eh.e_shoff; i < good.size(); ++i)
        positions.push_back(i);
    // Bytes whose every change must be caught: magic, class, data, version, type, header
    // size, program and section header counts, section entry size, section name table index.
    auto mustReject = [](size_t pos) {
        return pos < 7 || (pos >= 16 && pos < 18) || (pos >= 52 && pos < 54) ||
               (pos >= 56 && pos < 64);
    };
    size_t rejected = 0;
    for (size_t pos : positions) {
        for (unsigned char x : {0x01, 0x80, 0xff}) {
            std::string bad = good;
            bad[pos] = char(bad[pos] ^ x);
            bad = sealProgramBinary(bad);
            ReadProgramBinaryResult r = read(bad);
            if (mustReject(pos)) {
                INFO("byte " << pos << " ^ " << int(x));
                CHECK(r.status == CL_INVALID_BINARY);
            }
            if (r.status != CL_SUCCESS) {
                ++rejected;
                CHECK(r.status == CL_INVALID_BINARY);
                CHECK_FALSE(r.reason.empty());
            }
            LoadBinaryResult load = loadCpuBinary(bytes(bad), cpuTarget());
            CHECK((load.status == CL_SUCCESS || load.status == CL_INVALID_BINARY));
        }
    }
    CHECK(rejected > positions.size() / 4);
}

TEST_CASE("specific corruptions give a reason", "[compiler][binary][corrupt]") {
    std::string bc = compileOk(kSource);
    std::string good = makeObjectBinary(bc, kSource, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);

    SECTION("not ELF") {
        ReadProgramBinaryResult r = read(std::string(200, 'x'));
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK(r.reason.find("not an ELF") != std::string::npos);
    }
    SECTION("ELF32") {
        std::string bad = image(good);
        bad[EI_CLASS] = ELFCLASS32;
        ReadProgramBinaryResult r = read(sealProgramBinary(bad));
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK(r.reason.find("ELF64") != std::string::npos);
    }
    SECTION("section table past the end") {
        std::string bad = image(good);
        Elf64_Ehdr h = header(bad);
        h.e_shoff = bad.size() - 8;
        std::memcpy(bad.data(), &h, sizeof h);
        ReadProgramBinaryResult r = read(sealProgramBinary(bad));
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK(r.reason.find("outside") != std::string::npos);
    }
    SECTION("a section past the end") {
        std::string bad = image(good);
        Elf64_Ehdr h = header(bad);
        Elf64_Shdr sh;
        size_t at = h.e_shoff + 3 * sizeof(Elf64_Shdr);
        std::memcpy(&sh, bad.data() + at, sizeof sh);
        sh.sh_size = ~uint64_t(0) - 4;
        std::memcpy(bad.data() + at, &sh, sizeof sh);
        ReadProgramBinaryResult r = read(sealProgramBinary(bad));
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK(r.reason.find("outside the binary") != std::string::npos);
    }
    SECTION("a foreign ELF file (this test executable)") {
        std::ifstream f("/proc/self/exe", std::ios::binary);
        std::string self((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        REQUIRE(self.size() > 64);
        ReadProgramBinaryResult r = read(self);
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK_FALSE(r.reason.empty());
        // Sealed, it gets past the hash and the container reader rejects it.
        r = read(sealProgramBinary(self));
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK(r.reason.find("not a Duet program binary") != std::string::npos);
    }
    SECTION(".llvmir is not bitcode") {
        std::string bad = makeObjectBinary("this is not bitcode", kSource,
                                           CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        CHECK(read(bad).status == CL_INVALID_BINARY);
        CHECK(read(bad).reason.find("bitcode") != std::string::npos);
    }
    SECTION("bitcode truncated inside a valid container") {
        std::string bad = makeObjectBinary(bc.substr(0, bc.size() / 2), kSource,
                                           CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        CHECK(read(bad).status == CL_SUCCESS); // the container itself is fine
        LoadBinaryResult load = loadCpuBinary(bytes(bad), cpuTarget());
        CHECK(load.status == CL_INVALID_BINARY);
        CHECK(load.log.find(".llvmir") != std::string::npos);
    }
    SECTION("bad binary type") {
        std::string bad = makeObjectBinary(bc, kSource, 0x77);
        ReadProgramBinaryResult r = read(bad);
        CHECK(r.status == CL_INVALID_BINARY);
        CHECK(r.reason.find("binary type") != std::string::npos);
    }
}
