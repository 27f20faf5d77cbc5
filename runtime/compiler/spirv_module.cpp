// SPIR-V module checks and specialisation for clCreateProgramWithIL (no LLVM; fuzzed).
#include "compiler/spirv_module.hpp"

#include <cstring>
#include <string>
#include <unordered_map>

#if DUET_HAVE_SPIRV_TOOLS
#include <spirv-tools/libspirv.h>
#endif

namespace duet::rt {
namespace {

constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kMagicSwapped = 0x03022307;

// Opcodes, capabilities and enumerants of the SPIR-V specification used below.
enum : uint32_t {
    OpMemoryModel = 14,
    OpCapability = 17,
    OpTypeBool = 20,
    OpTypeInt = 21,
    OpTypeFloat = 22,
    OpSpecConstantTrue = 48,
    OpSpecConstantFalse = 49,
    OpSpecConstant = 50,
    OpDecorate = 71,
    CapabilityShader = 1,
    CapabilityKernel = 6,
    AddressingPhysical32 = 1,
    AddressingPhysical64 = 2,
    MemoryModelOpenCL = 2,
    DecorationSpecId = 1,
};

uint32_t swap32(uint32_t v) {
    return __builtin_bswap32(v);
}

/// The module as host-order words; empty when it is no whole number of words or lacks the magic.
std::vector<uint32_t> hostWords(std::span<const unsigned char> il) {
    std::vector<uint32_t> w(il.size() / 4);
    if (!w.empty())
        std::memcpy(w.data(), il.data(), w.size() * 4);
    if (!w.empty() && w[0] == kMagicSwapped)
        for (uint32_t& x : w)
            x = swap32(x);
    return w;
}

std::string hex(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

/// What the walk over the instructions learns.
struct Scan {
    bool kernel = false, shader = false, memoryModel = false;
    uint32_t addressing = 0, memory = 0;
    std::unordered_map<uint32_t, uint32_t> typeBytes;     ///< bool/int/float type id -> bytes
    std::unordered_map<uint32_t, uint32_t> specType;      ///< spec constant id -> its type id
    std::unordered_map<uint32_t, uint32_t> specIdOfValue; ///< spec constant id -> SpecId
};

/// Walks every instruction; false with `why` when one runs past the end or is malformed.
bool scan(const std::vector<uint32_t>& w, Scan& s, std::string& why) {
    for (size_t i = 5; i < w.size();) {
        const uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
        if (count == 0 || count > w.size() - i) {
            why = "instruction at word " + std::to_string(i) + " (opcode " + std::to_string(op) +
                  ") has word count " + std::to_string(count) + ", running past the module's " +
                  std::to_string(w.size()) + " words";
            return false;
        }
        const uint32_t* a = &w[i + 1]; // operands
        const uint32_t n = count - 1;
        auto need = [&](uint32_t k) {
            if (n >= k)
                return true;
            why = "instruction at word " + std::to_string(i) + " (opcode " + std::to_string(op) +
                  ") has too few operands";
            return false;
        };
        switch (op) {
        case OpCapability:
            if (!need(1))
                return false;
            s.kernel |= a[0] == CapabilityKernel;
            s.shader |= a[0] == CapabilityShader;
            break;
        case OpMemoryModel:
            if (!need(2))
                return false;
            s.memoryModel = true;
            s.addressing = a[0];
            s.memory = a[1];
            break;
        case OpTypeBool:
            if (!need(1))
                return false;
            s.typeBytes[a[0]] = 1;
            break;
        case OpTypeInt:
        case OpTypeFloat:
            if (!need(2))
                return false;
            s.typeBytes[a[0]] = a[1] / 8;
            break;
        case OpSpecConstantTrue:
        case OpSpecConstantFalse:
        case OpSpecConstant:
            if (!need(2))
                return false;
            s.specType[a[1]] = a[0];
            break;
        case OpDecorate:
            if (!need(2))
                return false;
            if (a[1] == DecorationSpecId) {
                if (!need(3))
                    return false;
                s.specIdOfValue[a[0]] = a[2];
            }
            break;
        default:
            break;
        }
        i += count;
    }
    return true;
}

#if DUET_HAVE_SPIRV_TOOLS
/// SPIRV-Tools' validator for the OpenCL environment of the module's version; "" when valid.
std::string validate(const std::vector<uint32_t>& w, uint32_t minor) {
    // OpenCL 2.2's environment takes SPIR-V up to 1.2; 1.3 and 1.4 have no OpenCL environment
    // in SPIRV-Tools, so the universal rules of that version apply (the checks above add the
    // OpenCL ones that matter here: Kernel, Physical64, the OpenCL memory model).
    spv_target_env env = minor <= 2   ? SPV_ENV_OPENCL_2_2
                         : minor == 3 ? SPV_ENV_UNIVERSAL_1_3
                                      : SPV_ENV_UNIVERSAL_1_4;
    spv_context ctx = spvContextCreate(env);
    if (!ctx)
        return "";
    spv_const_binary_t binary{w.data(), w.size()};
    spv_diagnostic diag = nullptr;
    spv_result_t r = spvValidate(ctx, &binary, &diag);
    std::string why;
    // llvm-spirv (every version up to 15 at least) writes optimised loops' blocks out of
    // dominance order, which SPIR-V 2.16.1 forbids and the validator stops at. The translator
    // reads them correctly, and refusing them would refuse what `clang | llvm-spirv` makes, so
    // that one rule is waived (the validator cannot skip it and go on: the rest of such a
    // module gets the structural checks above only).
    const bool blockOrder = r == SPV_ERROR_INVALID_CFG && diag && diag->error &&
                            std::strstr(diag->error, "before its dominator");
    if (r != SPV_SUCCESS && !blockOrder) {
        why = diag && diag->error ? diag->error
                                  : "validation failed (code " + std::to_string(r) + ")";
        if (diag && diag->isTextSource == false && diag->position.index)
            why += " (at word " + std::to_string(diag->position.index) + ")";
    }
    spvDiagnosticDestroy(diag);
    spvContextDestroy(ctx);
    return why;
}
#endif

} // namespace

ILCheckResult checkSpirvModule(std::span<const unsigned char> il) {
    ILCheckResult r;
    auto refuse = [&](std::string why) {
        r.status = CL_INVALID_VALUE;
        r.reason = "the SPIR-V module " + why;
        return r;
    };
    if (il.size() % 4 != 0)
        return refuse("is " + std::to_string(il.size()) + " bytes, not a whole number of words");
    if (il.size() < 20)
        return refuse("is " + std::to_string(il.size()) +
                      " bytes, shorter than the 5-word SPIR-V header");
    std::vector<uint32_t> w = hostWords(il);
    if (w[0] != kMagic)
        return refuse("starts with " + hex(w[0]) + ", not the SPIR-V magic number 0x07230203");
    const uint32_t version = w[1], major = (version >> 16) & 0xff, minor = (version >> 8) & 0xff;
    if ((version & 0xff0000ffu) != 0 || major != 1 || minor >= kSpirvMinorVersions)
        return refuse("has version word " + hex(version) + " (SPIR-V " + std::to_string(major) +
                      "." + std::to_string(minor) +
                      "); the devices build SPIR-V 1.0 to 1.4 (CL_DEVICE_IL_VERSION)");
    if (w[3] == 0)
        return refuse("declares an id bound of 0");
    if (w[4] != 0)
        return refuse("has schema word " + hex(w[4]) + ", not 0");
    Scan s;
    std::string why;
    if (!scan(w, s, why))
        return refuse("is malformed: " + why);
    if (s.shader)
        return refuse("declares the Shader capability: it is a Vulkan or OpenGL module, not one "
                      "of the OpenCL environment");
    if (!s.kernel)
        return refuse("does not declare the Kernel capability the OpenCL environment requires");
    if (!s.memoryModel)
        return refuse("has no OpMemoryModel");
    if (s.memory != MemoryModelOpenCL)
        return refuse("uses memory model " + std::to_string(s.memory) + ", not OpenCL (2)");
    if (s.addressing == AddressingPhysical32)
        return refuse("uses Physical32 addressing; the devices have 64-bit addresses "
                      "(CL_DEVICE_ADDRESS_BITS is 64): compile for spir64");
    if (s.addressing != AddressingPhysical64)
        return refuse("uses addressing model " + std::to_string(s.addressing) +
                      ", not Physical64 (2)");
#if DUET_HAVE_SPIRV_TOOLS
    if (std::string v = validate(w, minor); !v.empty())
        return refuse("does not validate: " + v);
#endif
    for (auto [value, specId] : s.specIdOfValue) {
        auto t = s.specType.find(value);
        if (t == s.specType.end())
            continue; // SpecId on something that is not a scalar spec constant
        auto bytes = s.typeBytes.find(t->second);
        if (bytes == s.typeBytes.end() || bytes->second == 0 || bytes->second > 8)
            return refuse("is malformed: specialisation constant %" + std::to_string(value) +
                          " (SpecId " + std::to_string(specId) +
                          ") is no boolean, integer or float of at most 64 bits");
        r.specConstantSizes[specId] = bytes->second;
    }
    r.version = version;
    return r;
}

std::vector<uint32_t> specialiseSpirvModule(std::span<const unsigned char> il,
                                            const SpecConstantValues& values) {
    std::vector<uint32_t> w = hostWords(il);
    if (values.empty() || w.size() < 5)
        return w;
    Scan s;
    std::string why;
    if (!scan(w, s, why))
        return w;
    for (size_t i = 5; i < w.size();) {
        const uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
        if (count == 0 || count > w.size() - i)
            break;
        if ((op == OpSpecConstant || op == OpSpecConstantTrue || op == OpSpecConstantFalse) &&
            count >= 3) {
            auto id = s.specIdOfValue.find(w[i + 2]);
            auto bytes = s.typeBytes.find(w[i + 1]);
            auto value = id == s.specIdOfValue.end() ? values.end() : values.find(id->second);
            if (value != values.end() && bytes != s.typeBytes.end() &&
                value->second.size() == bytes->second) {
                if (op != OpSpecConstant) {
                    const bool on = value->second[0] != 0;
                    w[i] = (count << 16) | (on ? OpSpecConstantTrue : OpSpecConstantFalse);
                } else if (value->second.size() <= 8 &&
                           size_t(count - 3) * 4 >= value->second.size()) {
                    // Literals are words, low-order word first; the high bits of a narrow
                    // type are zero filled (llvm-spirv reads only the type's width).
                    uint32_t lit[2] = {0, 0};
                    std::memcpy(lit, value->second.data(), value->second.size());
                    for (uint32_t k = 0; k < count - 3 && k < 2; ++k)
                        w[i + 3 + k] = lit[k];
                }
            }
        }
        i += count;
    }
    return w;
}

} // namespace duet::rt
