// Fuzzes program binaries as clCreateProgramWithBinary receives them (readProgramBinary: the
// integrity trailer, then the ELF container), and the container reader behind the trailer on
// inputs sealed with a matching hash. Bitcode is not handed to LLVM here: that happens only
// behind the integrity check, for bytes Duet wrote (compiler/binary.hpp).
#include "compiler/binary.hpp"
#include "fuzz_check.hpp"

#include <cstring>

using namespace duet::rt;

namespace {

std::span<const unsigned char> bytes(const std::string& s) {
    return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}

/// Every rejection is CL_INVALID_BINARY with a reason; an accepted binary writes back to a
/// binary that reads the same.
void checkRead(std::span<const unsigned char> in) {
    ReadProgramBinaryResult r = readProgramBinary(in);
    if (r.status != CL_SUCCESS) {
        FUZZ_CHECK(r.status == CL_INVALID_BINARY, "rejected with another code");
        FUZZ_CHECK(!r.reason.empty(), "rejected without a reason");
        return;
    }
    const ProgramBinary& b = r.binary;
    std::string again = writeProgramBinary(b);
    ReadProgramBinaryResult r2 = readProgramBinary(bytes(again));
    FUZZ_CHECK(r2.status == CL_SUCCESS, r2.reason.c_str());
    const ProgramBinary& c = r2.binary;
    FUZZ_CHECK(c.type == b.type && c.targetKind == b.targetKind && c.targetName == b.targetName &&
                   c.options == b.options && c.source == b.source && c.bitcode == b.bitcode &&
                   c.text == b.text && c.machine == b.machine,
               "a binary read back differs from the one written");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // As given: almost every mutation must stop at the integrity trailer.
    checkRead({data, size});
    // Sealed: the container reader sees the mutated image itself. A seed that is a whole
    // binary is resealed without its old trailer.
    std::string_view image(reinterpret_cast<const char*>(data), size);
    if (size >= kBinaryTrailerSize &&
        std::memcmp(data + size - kBinaryTrailerSize, kBinaryTrailerMagic,
                    sizeof kBinaryTrailerMagic) == 0)
        image.remove_suffix(kBinaryTrailerSize);
    checkRead(bytes(sealProgramBinary(image)));
    return 0;
}
