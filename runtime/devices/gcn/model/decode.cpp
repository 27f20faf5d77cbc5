// gfx900 instruction decoding: machine words to model::Inst, once per code address.
#include "isa.hpp"

#include "model.hpp"

#include <array>
#include <cstring>
#include <string_view>
#include <unordered_map>

namespace duet::gcn::model {
namespace {

struct OpcodeName {
    unsigned op;
    const char* name;
};
#include "opcode_names.inc"

/// Opcode number -> mnemonic for one encoding, as a dense array.
template <size_t N, size_t M> struct NameTable {
    std::array<const char*, N> names{};
    explicit NameTable(const OpcodeName (&list)[M]) {
        for (const OpcodeName& e : list)
            if (e.op < N)
                names[e.op] = e.name;
    }
    const char* operator[](unsigned op) const { return op < N ? names[op] : nullptr; }
};
template <size_t N, size_t M> NameTable<N, M> makeTable(const OpcodeName (&list)[M]) {
    return NameTable<N, M>(list);
}

const auto& tables() {
    static const struct {
        decltype(makeTable<128>(kSop2Names)) sop2 = makeTable<128>(kSop2Names);
        decltype(makeTable<32>(kSopkNames)) sopk = makeTable<32>(kSopkNames);
        decltype(makeTable<256>(kSop1Names)) sop1 = makeTable<256>(kSop1Names);
        decltype(makeTable<128>(kSopcNames)) sopc = makeTable<128>(kSopcNames);
        decltype(makeTable<128>(kSoppNames)) sopp = makeTable<128>(kSoppNames);
        decltype(makeTable<256>(kSmemNames)) smem = makeTable<256>(kSmemNames);
        decltype(makeTable<64>(kVop2Names)) vop2 = makeTable<64>(kVop2Names);
        decltype(makeTable<256>(kVop1Names)) vop1 = makeTable<256>(kVop1Names);
        decltype(makeTable<256>(kVopcNames)) vopc = makeTable<256>(kVopcNames);
        decltype(makeTable<1024>(kVop3Names)) vop3 = makeTable<1024>(kVop3Names);
        decltype(makeTable<128>(kVop3pNames)) vop3p = makeTable<128>(kVop3pNames);
        decltype(makeTable<256>(kDsNames)) ds = makeTable<256>(kDsNames);
        decltype(makeTable<128>(kMubufNames)) mubuf = makeTable<128>(kMubufNames);
        decltype(makeTable<128>(kFlatNames)) flat = makeTable<128>(kFlatNames);
        decltype(makeTable<128>(kScratchNames)) scratch = makeTable<128>(kScratchNames);
        decltype(makeTable<128>(kGlobalNames)) global = makeTable<128>(kGlobalNames);
    } t;
    return t;
}

const char* const kOpNames[] = {
    "unimplemented",
#define X(name) #name,
#include "ops.inc"
#undef X
};

const std::unordered_map<std::string_view, Op>& opByName() {
    static const std::unordered_map<std::string_view, Op> map = [] {
        std::unordered_map<std::string_view, Op> m;
        for (unsigned i = 1; i < static_cast<unsigned>(Op::Count); ++i)
            m.emplace(kOpNames[i], static_cast<Op>(i));
        return m;
    }();
    return map;
}

bool startsWith(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}
bool endsWith(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

/// v_cmp[x]_<cond>_<type> and v_cmp[x]_class_<type>.
bool parseCompare(std::string_view n, Inst& in) {
    if (!startsWith(n, "v_cmp"))
        return false;
    n.remove_prefix(5);
    in.cmpx = !n.empty() && n[0] == 'x';
    if (in.cmpx)
        n.remove_prefix(1);
    if (n.empty() || n[0] != '_')
        return false;
    n.remove_prefix(1);
    size_t us = n.rfind('_');
    if (us == std::string_view::npos)
        return false;
    std::string_view cond = n.substr(0, us), type = n.substr(us + 1);
    static const std::pair<std::string_view, CmpType> types[] = {
        {"f16", CmpType::F16}, {"f32", CmpType::F32}, {"f64", CmpType::F64},
        {"i16", CmpType::I16}, {"u16", CmpType::U16}, {"i32", CmpType::I32},
        {"u32", CmpType::U32}, {"i64", CmpType::I64}, {"u64", CmpType::U64}};
    bool found = false;
    for (auto& [s, t] : types)
        if (s == type)
            in.cmpType = t, found = true;
    if (!found)
        return false;
    bool isFloat = in.cmpType <= CmpType::F64;
    if (cond == "class") {
        if (!isFloat)
            return false;
        in.op = Op::v_cmp_class;
        return true;
    }
    static const std::string_view fconds[] = {"f", "lt",  "eq",  "le",  "gt",  "lg",  "ge",  "o",
                                              "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru"};
    static const std::string_view iconds[] = {"f", "lt", "eq", "le", "gt", "ne", "ge", "t"};
    const std::string_view* list = isFloat ? fconds : iconds;
    unsigned count = isFloat ? 16 : 8;
    for (unsigned i = 0; i < count; ++i)
        if (list[i] == cond) {
            in.cmpCond = static_cast<uint8_t>(i);
            in.op = Op::v_cmp;
            return true;
        }
    return false;
}

bool parseAtomicName(std::string_view a, Inst& in) {
    static const std::pair<std::string_view, AtomicOp> ops[] = {
        {"swap", AtomicOp::Swap},     {"wrxchg", AtomicOp::Swap}, {"cmpswap", AtomicOp::CmpSwap},
        {"cmpst", AtomicOp::CmpSwap}, {"add", AtomicOp::Add},     {"sub", AtomicOp::Sub},
        {"rsub", AtomicOp::Rsub},     {"smin", AtomicOp::Smin},   {"umin", AtomicOp::Umin},
        {"smax", AtomicOp::Smax},     {"umax", AtomicOp::Umax},   {"and", AtomicOp::And},
        {"or", AtomicOp::Or},         {"xor", AtomicOp::Xor},     {"inc", AtomicOp::Inc},
        {"dec", AtomicOp::Dec}};
    for (auto& [s, op] : ops)
        if (s == a) {
            in.atomic = op;
            return true;
        }
    return false;
}

/// Loads/stores/atomics of FLAT, GLOBAL, SCRATCH and MUBUF (after the segment prefix).
bool parseVmem(std::string_view n, Inst& in) {
    if (startsWith(n, "load_") || startsWith(n, "store_")) {
        bool load = n[0] == 'l';
        n.remove_prefix(load ? 5 : 6);
        if (startsWith(n, "format"))
            return false;
        if (endsWith(n, "_d16_hi")) {
            in.memD16 = in.memD16Hi = true;
            n.remove_suffix(7);
        } else if (endsWith(n, "_d16")) {
            in.memD16 = true;
            n.remove_suffix(4);
        }
        static const std::pair<std::string_view, std::pair<uint8_t, bool>> sizes[] = {
            {"ubyte", {1, false}},   {"sbyte", {1, true}},    {"byte", {1, false}},
            {"ushort", {2, false}},  {"sshort", {2, true}},   {"short", {2, false}},
            {"dword", {4, false}},   {"dwordx2", {8, false}}, {"dwordx3", {12, false}},
            {"dwordx4", {16, false}}};
        for (auto& [s, v] : sizes)
            if (s == n) {
                in.memBytes = v.first;
                in.memSigned = v.second;
                in.op = load ? Op::mem_load : Op::mem_store;
                return true;
            }
        return false;
    }
    if (startsWith(n, "atomic_")) {
        n.remove_prefix(7);
        in.memBytes = 4;
        if (endsWith(n, "_x2")) {
            in.memBytes = 8;
            n.remove_suffix(3);
        }
        if (!parseAtomicName(n, in) || in.atomic == AtomicOp::Rsub)
            return false;
        in.op = Op::mem_atomic;
        return true;
    }
    return false;
}

/// ds_* mnemonics.
bool parseDs(std::string_view n, Inst& in) {
    if (Op op; opByName().count(n) && (op = opByName().at(n), true)) {
        in.op = op; // ds_bpermute_b32, ds_permute_b32, ds_swizzle_b32, ds_nop
        return true;
    }
    n.remove_prefix(3);
    auto widthOf = [&](std::string_view t) -> int {
        if (t == "b32" || t == "u32" || t == "i32" || t == "f32")
            return 4;
        if (t == "b64" || t == "u64" || t == "i64" || t == "f64")
            return 8;
        if (t == "b96")
            return 12;
        if (t == "b128")
            return 16;
        return 0;
    };
    if (startsWith(n, "read") || startsWith(n, "write")) {
        bool read = n[0] == 'r';
        n.remove_prefix(read ? 4 : 5);
        bool two = false;
        if (startsWith(n, "2st64_")) {
            two = in.st64 = true;
            n.remove_prefix(6);
        } else if (startsWith(n, "2_")) {
            two = true;
            n.remove_prefix(2);
        } else if (startsWith(n, "_")) {
            n.remove_prefix(1);
        } else {
            return false;
        }
        if (startsWith(n, "addtid"))
            return false;
        if (endsWith(n, "_d16_hi")) {
            in.memD16 = in.memD16Hi = true;
            n.remove_suffix(7);
        } else if (endsWith(n, "_d16")) {
            in.memD16 = true;
            n.remove_suffix(4);
        }
        int w = widthOf(n);
        if (!w && !two) {
            if (n == "u8" || n == "b8")
                w = 1;
            else if (n == "i8")
                w = 1, in.memSigned = true;
            else if (n == "u16" || n == "b16")
                w = 2;
            else if (n == "i16")
                w = 2, in.memSigned = true;
        }
        if (!w)
            return false;
        in.memBytes = static_cast<uint8_t>(w);
        in.op = read ? (two ? Op::ds_read2 : Op::ds_read) : (two ? Op::ds_write2 : Op::ds_write);
        return true;
    }
    // Atomics: <op>[_rtn]_<type>, with wrxchg/cmpst/min_f32... variants.
    size_t us = n.rfind('_');
    if (us == std::string_view::npos)
        return false;
    std::string_view type = n.substr(us + 1), head = n.substr(0, us);
    int w = widthOf(type);
    if (!w || w > 8)
        return false;
    in.memBytes = static_cast<uint8_t>(w);
    if (endsWith(head, "_rtn")) {
        in.memRtn = true;
        head.remove_suffix(4);
    }
    if (head == "mskor") {
        in.atomic = AtomicOp::Mskor;
        in.op = Op::ds_atomic;
        return true;
    }
    if (startsWith(head, "wrxchg2") || endsWith(head, "src2") || head == "wrap" ||
        head == "condxchg32")
        return false;
    bool isF = type[0] == 'f';
    if (head == "min" || head == "max") {
        if (isF)
            in.atomic = head == "min" ? AtomicOp::Fmin : AtomicOp::Fmax;
        else if (type[0] == 'i')
            in.atomic = head == "min" ? AtomicOp::Smin : AtomicOp::Smax;
        else
            in.atomic = head == "min" ? AtomicOp::Umin : AtomicOp::Umax;
    } else if (head == "add" && isF) {
        in.atomic = AtomicOp::Fadd;
    } else if (head == "cmpst") {
        in.atomic = AtomicOp::CmpSwap; // f32/f64 variants compare bits too (NaN aside)
    } else if (!parseAtomicName(head, in)) {
        return false;
    }
    in.op = Op::ds_atomic;
    return true;
}

uint8_t classOf(const Inst& in) {
    using C = InstClass;
    auto c = [](C x) { return static_cast<uint8_t>(x); };
    switch (in.enc) {
    case Enc::Sop2:
    case Enc::Sopk:
    case Enc::Sop1:
    case Enc::Sopc:
        return in.op == Op::s_setpc_b64 || in.op == Op::s_swappc_b64 || in.op == Op::s_call_b64
                   ? c(C::Branch)
                   : c(C::Salu);
    case Enc::Sopp:
        switch (in.op) {
        case Op::s_branch:
        case Op::s_cbranch_scc0:
        case Op::s_cbranch_scc1:
        case Op::s_cbranch_vccz:
        case Op::s_cbranch_vccnz:
        case Op::s_cbranch_execz:
        case Op::s_cbranch_execnz:
            return c(C::Branch);
        case Op::s_barrier:
            return c(C::Barrier);
        case Op::s_waitcnt:
            return c(C::Waitcnt);
        default:
            return c(C::Other);
        }
    case Enc::Smem:
        return c(C::Smem);
    case Enc::Vop2:
    case Enc::Vop1:
    case Enc::Vopc:
    case Enc::Vop3:
    case Enc::Vop3p:
        return c(C::Valu);
    case Enc::Ds:
        return c(C::Lds);
    case Enc::Mubuf:
        return c(C::Vmem);
    case Enc::Flat:
        return in.space == Space::Flat ? c(C::Flat) : c(C::Vmem);
    default:
        return c(C::Other);
    }
}

void setName(Inst& in, const char* name, const char* fallback) {
    in.name = name ? name : fallback;
    if (!name)
        return;
    std::string_view n(name);
    auto& map = opByName();
    if (auto it = map.find(n); it != map.end()) {
        in.op = it->second;
        // gfx9 changed these (and only these) 16-bit ops to keep the unused half of the
        // destination; their "legacy" gfx8 encodings, and all other 16-bit ops, zero it.
        in.keepHi16 = in.op == Op::v_mad_f16 || in.op == Op::v_mad_u16 || in.op == Op::v_mad_i16 ||
                      in.op == Op::v_fma_f16 || in.op == Op::v_div_fixup_f16;
        return;
    }
    // gfx9's "legacy" 16-bit mads are the gfx8 encodings: same arithmetic, no op_sel (the
    // result goes to the low half, the high half zeroed, as wr16 does without op_sel).
    static const std::pair<std::string_view, Op> legacy16[] = {
        {"v_mad_legacy_u16", Op::v_mad_u16},
        {"v_mad_legacy_i16", Op::v_mad_i16},
        {"v_mad_legacy_f16", Op::v_mad_f16},
        {"v_fma_legacy_f16", Op::v_fma_f16},
        {"v_div_fixup_legacy_f16", Op::v_div_fixup_f16}};
    for (auto& [legacyName, op] : legacy16)
        if (n == legacyName) {
            in.op = op;
            return;
        }
    if (parseCompare(n, in))
        return;
    if (startsWith(n, "ds_")) {
        if (!parseDs(n, in))
            in.op = Op::Unimplemented;
        return;
    }
    if (n == "buffer_wbinvl1" || n == "buffer_wbinvl1_vol")
        return; // found by opByName
    for (std::string_view p : {"flat_", "global_", "scratch_", "buffer_"})
        if (startsWith(n, p)) {
            if (!parseVmem(n.substr(p.size()), in))
                in.op = Op::Unimplemented;
            return;
        }
    if (startsWith(n, "s_load_dword"))
        in.op = Op::s_load;
    else if (startsWith(n, "s_buffer_load_dword"))
        in.op = Op::s_buffer_load;
}

unsigned smemDwords(std::string_view n) {
    if (endsWith(n, "x16"))
        return 16;
    if (endsWith(n, "x8"))
        return 8;
    if (endsWith(n, "x4"))
        return 4;
    if (endsWith(n, "x2"))
        return 2;
    return 1;
}

} // namespace

const char* opName(Op op) {
    return kOpNames[static_cast<unsigned>(op)];
}

std::vector<OpcodeCoverage> opcodeCoverage() {
    std::vector<OpcodeCoverage> out;
    auto add = [&](const char* enc, const auto& list, Enc e) {
        for (const OpcodeName& n : list) {
            Inst in;
            in.enc = e;
            setName(in, n.name, "");
            out.push_back({enc, n.op, n.name, in.op != Op::Unimplemented});
        }
    };
    add("SOP2", kSop2Names, Enc::Sop2);
    add("SOPK", kSopkNames, Enc::Sopk);
    add("SOP1", kSop1Names, Enc::Sop1);
    add("SOPC", kSopcNames, Enc::Sopc);
    add("SOPP", kSoppNames, Enc::Sopp);
    add("SMEM", kSmemNames, Enc::Smem);
    add("VOP2", kVop2Names, Enc::Vop2);
    add("VOP1", kVop1Names, Enc::Vop1);
    add("VOPC", kVopcNames, Enc::Vopc);
    add("VOP3", kVop3Names, Enc::Vop3);
    add("VOP3P", kVop3pNames, Enc::Vop3p);
    add("DS", kDsNames, Enc::Ds);
    add("MUBUF", kMubufNames, Enc::Mubuf);
    add("FLAT", kFlatNames, Enc::Flat);
    add("SCRATCH", kScratchNames, Enc::Flat);
    add("GLOBAL", kGlobalNames, Enc::Flat);
    return out;
}

namespace {

/// `n` bits of `v` from bit `lo`.
uint32_t bits(uint32_t v, unsigned lo, unsigned n) {
    return (v >> lo) & ((1u << n) - 1);
}

/// Takes the literal dword that follows the instruction if one of its first `nsrc` sources
/// names it.
void literalIf(const uint32_t* w, Inst& in, unsigned nsrc) {
    for (unsigned i = 0; i < nsrc; ++i)
        if (in.src[i] == opnd::kLiteral) {
            in.literal = w[1];
            in.words = 2;
            return;
        }
}

/// SOP1, SOPC, SOPP, SOPK and SOP2 (w[0] bits 31:30 are 0b10).
void decodeScalar(const uint32_t* w, Inst& in) {
    const auto& t = tables();
    uint32_t w0 = w[0];
    unsigned top9 = w0 >> 23;
    if (top9 == 0b101111101) {
        in.enc = Enc::Sop1;
        setName(in, t.sop1[bits(w0, 8, 8)], "SOP1");
        in.vdst = bits(w0, 16, 7);
        in.src[0] = bits(w0, 0, 8);
        literalIf(w, in, 1);
    } else if (top9 == 0b101111110) {
        in.enc = Enc::Sopc;
        setName(in, t.sopc[bits(w0, 16, 7)], "SOPC");
        in.src[0] = bits(w0, 0, 8);
        in.src[1] = bits(w0, 8, 8);
        literalIf(w, in, 2);
    } else if (top9 == 0b101111111) {
        in.enc = Enc::Sopp;
        setName(in, t.sopp[bits(w0, 16, 7)], "SOPP");
        in.imm = static_cast<int16_t>(w0 & 0xffff);
    } else if ((w0 >> 28) == 0b1011) {
        in.enc = Enc::Sopk;
        unsigned op = bits(w0, 23, 5);
        setName(in, t.sopk[op], "SOPK");
        in.vdst = bits(w0, 16, 7);
        in.imm = static_cast<int16_t>(w0 & 0xffff);
        if (in.op == Op::s_setreg_imm32_b32) {
            in.literal = w[1];
            in.words = 2;
        }
    } else {
        in.enc = Enc::Sop2;
        setName(in, t.sop2[bits(w0, 23, 7)], "SOP2");
        in.vdst = bits(w0, 16, 7);
        in.src[0] = bits(w0, 0, 8);
        in.src[1] = bits(w0, 8, 8);
        literalIf(w, in, 2);
    }
}

/// VOP1, VOPC and VOP2 (w[0] bit 31 is 0), with their SDWA/DPP dword or literal.
void decodeVector32(const uint32_t* w, Inst& in) {
    const auto& t = tables();
    uint32_t w0 = w[0];
    unsigned top7 = w0 >> 25;
    in.src[0] = bits(w0, 0, 9);
    if (top7 == 0b0111111) {
        in.enc = Enc::Vop1;
        setName(in, t.vop1[bits(w0, 9, 8)], "VOP1");
        in.vdst = bits(w0, 17, 8);
        if (in.op == Op::v_readfirstlane_b32)
            in.vdst = bits(w0, 17, 8); // SGPR code
    } else if (top7 == 0b0111110) {
        in.enc = Enc::Vopc;
        setName(in, t.vopc[bits(w0, 17, 8)], "VOPC");
        in.src[1] = opnd::kVgpr + bits(w0, 9, 8);
        in.sdst = opnd::kVcc;
    } else {
        in.enc = Enc::Vop2;
        setName(in, t.vop2[bits(w0, 25, 6)], "VOP2");
        in.vdst = bits(w0, 17, 8);
        in.src[1] = opnd::kVgpr + bits(w0, 9, 8);
        // Implicit operands of the 32-bit forms.
        switch (in.op) {
        case Op::v_cndmask_b32:
        case Op::v_addc_co_u32:
        case Op::v_subb_co_u32:
        case Op::v_subbrev_co_u32:
            in.src[2] = opnd::kVcc;
            break;
        case Op::v_mac_f32:
        case Op::v_mac_f16:
            in.src[2] = opnd::kVgpr + in.vdst;
            break;
        default:
            break;
        }
    }
    if (in.src[0] == opnd::kSdwa || in.src[0] == opnd::kDpp) {
        in.ext = in.src[0] == opnd::kSdwa ? 1 : 2;
        in.extWord = w[1];
        in.words = 2;
        unsigned s0 = bits(w[1], 0, 8);
        // SDWA's S0 flag (bit 23) selects an SGPR/constant source instead of a VGPR.
        in.src[0] = (in.ext == 1 && (w[1] >> 23 & 1)) ? s0 : opnd::kVgpr + s0;
        if (in.ext == 1 && in.enc == Enc::Vopc && (w[1] >> 15 & 1))
            in.sdst = bits(w[1], 8, 7);
        // S1 (bit 31): the vsrc1 field names an SGPR/constant instead of a VGPR.
        if (in.ext == 1 && in.enc != Enc::Vop1 && (w[1] >> 31 & 1))
            in.src[1] = static_cast<uint16_t>(in.src[1] - opnd::kVgpr);
    } else {
        literalIf(w, in, 1);
        if (in.op == Op::v_madmk_f32 || in.op == Op::v_madak_f32 || in.op == Op::v_madmk_f16 ||
            in.op == Op::v_madak_f16) {
            in.literal = w[1];
            in.words = 2;
        }
    }
}

void decodeSmem(const uint32_t* w, Inst& in) {
    uint32_t w0 = w[0], w1 = w[1];
    in.enc = Enc::Smem;
    in.words = 2;
    const char* name = tables().smem[bits(w0, 18, 8)];
    setName(in, name, "SMEM");
    in.saddr = bits(w0, 0, 6) * 2;
    in.vdst = bits(w0, 6, 7);
    in.glc = bits(w0, 16, 1);
    in.smemImm = bits(w0, 17, 1);
    if (in.smemImm)
        in.imm = static_cast<int32_t>(w1 & 0xfffff);
    else
        in.soffset = w1 & 0xff;
    if (name)
        in.memBytes = static_cast<uint8_t>(smemDwords(name)); // dwords, for SMEM
}

/// VOP3a, VOP3b (an SGPR carry-out in place of abs/op_sel) or VOP3P.
void decodeVop3(const uint32_t* w, Inst& in) {
    const auto& t = tables();
    uint32_t w0 = w[0], w1 = w[1];
    in.words = 2;
    in.src[0] = bits(w1, 0, 9);
    in.src[1] = bits(w1, 9, 9);
    in.src[2] = bits(w1, 18, 9);
    in.neg = bits(w1, 29, 3);
    in.vdst = bits(w0, 0, 8);
    in.clamp = bits(w0, 15, 1);
    if ((w0 >> 23) == 0b110100111) {
        in.enc = Enc::Vop3p;
        setName(in, t.vop3p[bits(w0, 16, 7)], "VOP3P");
        in.negHi = bits(w0, 8, 3);
        in.opsel = bits(w0, 11, 3);
        in.opselHi = static_cast<uint8_t>(bits(w1, 27, 2) | bits(w0, 14, 1) << 2);
        return;
    }
    unsigned op = bits(w0, 16, 10);
    in.enc = Enc::Vop3;
    setName(in, t.vop3[op], "VOP3");
    in.omod = bits(w1, 27, 2);
    bool vop3b = (op >= 256 + 25 && op <= 256 + 30) || in.op == Op::v_div_scale_f32 ||
                 in.op == Op::v_div_scale_f64 || in.op == Op::v_mad_u64_u32 ||
                 in.op == Op::v_mad_i64_i32;
    if (vop3b) {
        in.sdst = bits(w0, 8, 7);
    } else {
        in.abs = bits(w0, 8, 3);
        in.opsel = bits(w0, 11, 4);
        if (op < 256)
            in.sdst = bits(w0, 0, 8); // VOPC in VOP3: vdst is the SGPR pair
    }
}

void decodeDs(const uint32_t* w, Inst& in) {
    uint32_t w0 = w[0], w1 = w[1];
    in.enc = Enc::Ds;
    in.words = 2;
    in.space = Space::Lds;
    if (bits(w0, 16, 1)) {
        in.name = "ds (GDS)";
        return;
    }
    setName(in, tables().ds[bits(w0, 17, 8)], "DS");
    in.imm = bits(w0, 0, 8);
    in.offset1 = bits(w0, 8, 8);
    in.src[0] = bits(w1, 0, 8);  // addr
    in.src[1] = bits(w1, 8, 8);  // data0
    in.src[2] = bits(w1, 16, 8); // data1
    in.vdst = bits(w1, 24, 8);
    if (in.op == Op::ds_read || in.op == Op::ds_write || in.op == Op::ds_atomic ||
        in.op == Op::ds_bpermute_b32 || in.op == Op::ds_permute_b32 || in.op == Op::ds_swizzle_b32)
        in.imm = static_cast<int32_t>(bits(w0, 0, 16));
}

void decodeMubuf(const uint32_t* w, Inst& in) {
    uint32_t w0 = w[0], w1 = w[1];
    in.enc = Enc::Mubuf;
    in.words = 2;
    in.space = Space::Buffer;
    setName(in, tables().mubuf[bits(w0, 18, 7)], "MUBUF");
    if (bits(w0, 16, 1)) {
        in.op = Op::Unimplemented; // lds: direct load to LDS
        in.name = "buffer_* lds";
    }
    in.imm = bits(w0, 0, 12);
    in.offen = bits(w0, 12, 1);
    in.idxen = bits(w0, 13, 1);
    in.glc = bits(w0, 14, 1);
    in.memRtn = in.glc;
    in.src[0] = bits(w1, 0, 8); // vaddr
    in.src[1] = bits(w1, 8, 8); // vdata
    in.vdst = in.src[1];
    in.saddr = bits(w1, 16, 5) * 4;
    in.soffset = bits(w1, 24, 8);
}

/// FLAT, GLOBAL and SCRATCH (one encoding, told apart by the segment field).
void decodeFlat(const uint32_t* w, Inst& in) {
    const auto& t = tables();
    uint32_t w0 = w[0], w1 = w[1];
    in.enc = Enc::Flat;
    in.words = 2;
    unsigned seg = bits(w0, 14, 2), op = bits(w0, 18, 7);
    in.glc = bits(w0, 16, 1);
    in.memRtn = in.glc;
    if (seg == 0) {
        in.space = Space::Flat;
        setName(in, t.flat[op], "FLAT");
        in.imm = bits(w0, 0, 12);
    } else {
        in.space = seg == 1 ? Space::Scratch : Space::Global;
        setName(in, seg == 1 ? t.scratch[op] : t.global[op], "GLOBAL/SCRATCH");
        in.imm = static_cast<int32_t>(bits(w0, 0, 13) << 19) >> 19;
    }
    if (bits(w0, 13, 1)) {
        in.op = Op::Unimplemented;
        in.name = "global/scratch lds";
    }
    in.src[0] = bits(w1, 0, 8); // addr
    in.src[1] = bits(w1, 8, 8); // data
    in.saddr = bits(w1, 16, 7);
    in.vdst = bits(w1, 24, 8);
}

/// The encodings with w[0] bits 31:30 = 0b11, told apart by bits 31:26.
void decodeWide(const uint32_t* w, Inst& in) {
    switch (w[0] >> 26) {
    case 0b110000:
        decodeSmem(w, in);
        break;
    case 0b110100:
        decodeVop3(w, in);
        break;
    case 0b110110:
        decodeDs(w, in);
        break;
    case 0b111000:
        decodeMubuf(w, in);
        break;
    case 0b110111:
        decodeFlat(w, in);
        break;
    case 0b111010:
        in.name = "MTBUF (typed buffer)";
        in.words = 2;
        break;
    case 0b111100:
        in.name = "MIMG (image)";
        in.words = 2;
        break;
    case 0b110101:
        in.name = "VINTRP";
        break;
    case 0b110010:
        in.name = "EXP";
        in.words = 2;
        break;
    default:
        in.name = "unknown encoding";
        break;
    }
}

} // namespace

Inst decode(const uint32_t* w) {
    Inst in;
    uint32_t w0 = w[0];
    if ((w0 >> 30) == 0b10) // scalar ALU / SOPP
        decodeScalar(w, in);
    else if ((w0 >> 31) == 0) // VOP2 / VOP1 / VOPC
        decodeVector32(w, in);
    else
        decodeWide(w, in);
    in.cls = classOf(in);
    return in;
}

} // namespace duet::gcn::model
