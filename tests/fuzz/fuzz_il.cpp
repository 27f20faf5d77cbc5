// Fuzzes clCreateProgramWithIL's module check (checkSpirvModule: header, instruction walk,
// capabilities, SPIRV-Tools' validator) and the specialisation that precedes translation.
#include "compiler/spirv_module.hpp"
#include "fuzz_check.hpp"

#include <cstring>
#include <span>

using namespace duet::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::span<const unsigned char> il(data, size);
    ILCheckResult r = checkSpirvModule(il);
    FUZZ_CHECK(r.status == CL_SUCCESS || r.status == CL_INVALID_VALUE,
               "a module check answered neither success nor CL_INVALID_VALUE");
    FUZZ_CHECK((r.status == CL_SUCCESS) == r.reason.empty(), "status and reason disagree");
    if (r.status != CL_SUCCESS)
        return 0;
    FUZZ_CHECK(size % 4 == 0 && size >= 20, "a module that is no whole header was accepted");
    // Give every specialisation constant a value made of the input's first bytes: the
    // specialised module keeps its length and still passes the check with the same constants.
    SpecConstantValues values;
    for (auto [id, bytes] : r.specConstantSizes) {
        FUZZ_CHECK(bytes >= 1 && bytes <= 8, "a specialisation constant of impossible size");
        values[id] = std::string(reinterpret_cast<const char*>(data), bytes);
    }
    std::vector<uint32_t> words = specialiseSpirvModule(il, values);
    FUZZ_CHECK(words.size() * 4 == size, "specialisation changed the module's length");
    ILCheckResult again =
        checkSpirvModule({reinterpret_cast<const unsigned char*>(words.data()), words.size() * 4});
    FUZZ_CHECK(again.status == CL_SUCCESS, "the specialised module no longer passes the check");
    FUZZ_CHECK(again.specConstantSizes == r.specConstantSizes,
               "specialisation changed the constants");
    return 0;
}
