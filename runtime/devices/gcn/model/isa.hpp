// The model's decoded form of a gfx900 instruction: decode.cpp turns machine words into an
// Inst once per code address, the interpreter (exec.cpp) switches on Inst::op.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace duet::gcn::model {

/// Machine encodings (gfx9 / "VI" layouts).
enum class Enc : uint8_t {
    Sop2,
    Sopk,
    Sop1,
    Sopc,
    Sopp,
    Smem,
    Vop2,
    Vop1,
    Vopc,
    Vop3,
    Vop3p,
    Ds,
    Mubuf,
    Flat,
    Other
};

/// Operations the interpreter implements. Comparisons and memory operations are
/// parametric (Inst::cmp*, Inst::mem*), everything else is one enumerator per mnemonic.
enum class Op : uint16_t {
    Unimplemented,
#define X(name) name,
#include "ops.inc"
#undef X
    Count
};

/// Comparison conditions of VOPC: the float ones are the ISA's 16 (f, lt, eq, le, gt, lg, ge,
/// o, u, nge, nlg, ngt, nle, neq, nlt, tru); the integer ones map onto f..tru of the 8 integer
/// conditions (f, lt, eq, le, gt, ne, ge, t).
enum class CmpType : uint8_t { F16, F32, F64, I16, U16, I32, U32, I64, U64 };

/// Read-modify-write operations of DS, FLAT/GLOBAL and MUBUF atomics.
enum class AtomicOp : uint8_t {
    Swap,
    CmpSwap,
    Add,
    Sub,
    Rsub,
    Smin,
    Umin,
    Smax,
    Umax,
    And,
    Or,
    Xor,
    Inc,
    Dec,
    Fmin,
    Fmax,
    Fadd,
    Mskor ///< (old & ~data) | data2 (DS only)
};

/// FLAT segment / which memory a vector memory instruction addresses.
enum class Space : uint8_t { Flat, Scratch, Global, Buffer, Lds };

/// Operand codes of the scalar source field (and the low 256 of the vector source field).
namespace opnd {
inline constexpr unsigned kVcc = 106, kM0 = 124, kExec = 126, kFlatScr = 102;
inline constexpr unsigned kZero = 128, kSharedBase = 235, kSharedLimit = 236, kPrivateBase = 237,
                          kPrivateLimit = 238, kVccz = 251, kExecz = 252, kScc = 253, kLds = 254,
                          kLiteral = 255, kSdwa = 249, kDpp = 250, kVgpr = 256;
} // namespace opnd

struct Inst {
    Op op = Op::Unimplemented;
    Enc enc = Enc::Other;
    uint8_t words = 1;           ///< instruction size in dwords (literal included)
    uint8_t cls = 0;             ///< InstClass (statistics)
    uint16_t src[3] = {0, 0, 0}; ///< operand codes (0..511), kLiteral uses `literal`
    uint16_t vdst = 0;           ///< VGPR index, or scalar operand code for SALU/readlane
    uint8_t sdst = opnd::kVcc;   ///< scalar destination of VOPC / carry-out / VOP3b
    uint8_t abs = 0, neg = 0, negHi = 0, opsel = 0, opselHi = 0;
    uint8_t clamp = 0, omod = 0;
    bool cmpx = false;     ///< v_cmpx_*: also writes EXEC
    bool keepHi16 = false; ///< 16-bit result keeps the other half (gfx9 opsel mads)
    uint8_t cmpCond = 0;   ///< condition index (see CmpType)
    CmpType cmpType = CmpType::F32;
    // Memory
    Space space = Space::Global;
    AtomicOp atomic = AtomicOp::Add;
    uint8_t memBytes = 4; ///< bytes per lane and element (1, 2, 4, 8, 12, 16)
    bool memSigned = false, memRtn = false, glc = false, offen = false, idxen = false;
    bool memD16 = false, memD16Hi = false;
    bool st64 = false;    ///< ds_*2st64 (offsets in units of 64 elements)
    uint8_t saddr = 0x7f; ///< GLOBAL/SCRATCH scalar base (0x7f: off); MUBUF srsrc; SMEM sbase
    uint8_t soffset = 0;  ///< MUBUF / SMEM scalar offset operand code
    bool smemImm = true;
    uint8_t offset1 = 0; ///< DS offset1
    int32_t imm = 0;     ///< simm16, memory offset, DS offset0
    uint32_t literal = 0;
    // SDWA / DPP (the second dword as encoded; 0 when absent)
    uint8_t ext = 0; ///< 0 none, 1 SDWA, 2 DPP
    uint32_t extWord = 0;
    const char* name = ""; ///< mnemonic, for errors and statistics
    /// Which of the interpreter's VALU functions runs this instruction (WaveExec::ValuFamily;
    /// 0: unknown). Filled in on the first execution: decoded instructions are cached per host
    /// thread, so no other thread sees the write.
    mutable uint8_t valuFamily = 0;
};

const char* opName(Op op);

/// Every gfx900 mnemonic the decoder knows, by encoding, with whether the interpreter
/// implements it (for coverage reports).
struct OpcodeCoverage {
    const char* encoding;
    unsigned opcode;
    const char* mnemonic;
    bool implemented;
};
std::vector<OpcodeCoverage> opcodeCoverage();
/// Decodes the instruction at `words` (at least 3 readable dwords). On an encoding the model
/// does not know, returns an Inst with op Unimplemented and a name describing the encoding.
Inst decode(const uint32_t* words);

} // namespace duet::gcn::model
