// The scalar ALU: SOP2, SOPK, SOP1 and SOPC operations, one function per encoding.
#include "wave_exec.hpp"

namespace duet::gcn::model {

namespace {

using I = int32_t;
using U = uint32_t;
using U64 = uint64_t;

constexpr unsigned kHwRegMode = 1, kHwRegHwId = 4;

U ff1(U64 x) {
    return x ? U(std::countr_zero(x)) : ~0u;
}
U64 brev64(U64 x) {
    U64 r = 0;
    for (int i = 0; i < 64; ++i)
        r |= ((x >> i) & 1) << (63 - i);
    return r;
}

} // namespace

/// s_bfe_{u,i}{32,64}: the field at offset S1[5:0] (S1[4:0] for 32 bits) of width S1[22:16].
__attribute__((always_inline)) inline void WaveExec::sopBfe() {
    const Op op = in.op;
    switch (op) {
    case Op::s_bfe_u32:
    case Op::s_bfe_i32: {
        U x = a32(), ctl = b32(), off = ctl & 31, width = (ctl >> 16) & 0x7f;
        U r;
        if (width == 0)
            r = 0;
        else if (op == Op::s_bfe_u32)
            r = width >= 32 ? x >> off : (x >> off) & ((1u << width) - 1);
        else
            r = width >= 32 ? U(I(x) >> off) : U(I((x >> off) << (32 - width)) >> (32 - width));
        d32scc(r);
        return;
    }
    case Op::s_bfe_u64:
    case Op::s_bfe_i64: {
        U64 x = a64();
        U ctl = b32(), off = ctl & 63, width = (ctl >> 16) & 0x7f;
        U64 r;
        if (width == 0)
            r = 0;
        else if (op == Op::s_bfe_u64)
            r = width >= 64 ? x >> off : (x >> off) & ((1ull << width) - 1);
        else
            r = width >= 64 ? U64(int64_t(x) >> off)
                            : U64(int64_t((x >> off) << (64 - width)) >> (64 - width));
        d64scc(r);
        return;
    }
    default:
        return;
    }
}

/// SOP2: two-operand arithmetic, logic, shifts, multiplies and packing.
__attribute__((always_inline)) inline void WaveExec::sop2() {
    const Op op = in.op;
    switch (op) {
    case Op::s_add_u32: {
        U64 r = U64(a32()) + b32();
        d32(U(r));
        w.scc = r >> 32;
        return;
    }
    case Op::s_sub_u32: {
        U x = a32(), y = b32();
        d32(x - y);
        w.scc = y > x;
        return;
    }
    case Op::s_add_i32: {
        I x = I(a32()), y = I(b32());
        I r = I(U(x) + U(y));
        d32(U(r));
        w.scc = ((x >= 0) == (y >= 0)) && ((r >= 0) != (x >= 0));
        return;
    }
    case Op::s_sub_i32: {
        I x = I(a32()), y = I(b32());
        I r = I(U(x) - U(y));
        d32(U(r));
        w.scc = ((x >= 0) != (y >= 0)) && ((r >= 0) != (x >= 0));
        return;
    }
    case Op::s_addc_u32: {
        U64 r = U64(a32()) + b32() + w.scc;
        d32(U(r));
        w.scc = r >> 32;
        return;
    }
    case Op::s_subb_u32: {
        U x = a32(), y = b32();
        U64 t = U64(y) + w.scc;
        d32(U(x - t));
        w.scc = t > x;
        return;
    }
    case Op::s_min_i32: {
        I x = I(a32()), y = I(b32());
        w.scc = x < y;
        d32(U(std::min(x, y)));
        return;
    }
    case Op::s_min_u32: {
        U x = a32(), y = b32();
        w.scc = x < y;
        d32(std::min(x, y));
        return;
    }
    case Op::s_max_i32: {
        I x = I(a32()), y = I(b32());
        w.scc = x > y;
        d32(U(std::max(x, y)));
        return;
    }
    case Op::s_max_u32: {
        U x = a32(), y = b32();
        w.scc = x > y;
        d32(std::max(x, y));
        return;
    }
    case Op::s_cselect_b32:
        d32(w.scc ? a32() : b32());
        return;
    case Op::s_cselect_b64:
        d64(w.scc ? a64() : b64());
        return;
    case Op::s_and_b32:
        d32scc(a32() & b32());
        return;
    case Op::s_and_b64:
        d64scc(a64() & b64());
        return;
    case Op::s_or_b32:
        d32scc(a32() | b32());
        return;
    case Op::s_or_b64:
        d64scc(a64() | b64());
        return;
    case Op::s_xor_b32:
        d32scc(a32() ^ b32());
        return;
    case Op::s_xor_b64:
        d64scc(a64() ^ b64());
        return;
    case Op::s_andn2_b32:
        d32scc(a32() & ~b32());
        return;
    case Op::s_andn2_b64:
        d64scc(a64() & ~b64());
        return;
    case Op::s_orn2_b32:
        d32scc(a32() | ~b32());
        return;
    case Op::s_orn2_b64:
        d64scc(a64() | ~b64());
        return;
    case Op::s_nand_b32:
        d32scc(~(a32() & b32()));
        return;
    case Op::s_nand_b64:
        d64scc(~(a64() & b64()));
        return;
    case Op::s_nor_b32:
        d32scc(~(a32() | b32()));
        return;
    case Op::s_nor_b64:
        d64scc(~(a64() | b64()));
        return;
    case Op::s_xnor_b32:
        d32scc(~(a32() ^ b32()));
        return;
    case Op::s_xnor_b64:
        d64scc(~(a64() ^ b64()));
        return;
    case Op::s_lshl_b32:
        d32scc(a32() << (b32() & 31));
        return;
    case Op::s_lshl_b64:
        d64scc(a64() << (b32() & 63));
        return;
    case Op::s_lshr_b32:
        d32scc(a32() >> (b32() & 31));
        return;
    case Op::s_lshr_b64:
        d64scc(a64() >> (b32() & 63));
        return;
    case Op::s_ashr_i32:
        d32scc(U(I(a32()) >> (b32() & 31)));
        return;
    case Op::s_ashr_i64:
        d64scc(U64(int64_t(a64()) >> (b32() & 63)));
        return;
    case Op::s_bfm_b32:
        d32(((1u << (a32() & 31)) - 1) << (b32() & 31));
        return;
    case Op::s_bfm_b64:
        d64(((1ull << (a32() & 63)) - 1) << (b32() & 63));
        return;
    case Op::s_mul_i32:
        d32(a32() * b32());
        return;
    case Op::s_mul_hi_u32:
        d32(U((U64(a32()) * b32()) >> 32));
        return;
    case Op::s_mul_hi_i32:
        d32(U((int64_t(I(a32())) * I(b32())) >> 32));
        return;
    case Op::s_bfe_u32:
    case Op::s_bfe_i32:
    case Op::s_bfe_u64:
    case Op::s_bfe_i64:
        sopBfe();
        return;
    case Op::s_absdiff_i32: {
        I x = I(a32()), y = I(b32());
        d32scc(U(x > y ? int64_t(x) - y : int64_t(y) - x));
        return;
    }
    case Op::s_lshl1_add_u32:
    case Op::s_lshl2_add_u32:
    case Op::s_lshl3_add_u32:
    case Op::s_lshl4_add_u32: {
        unsigned sh = 1 + unsigned(op) - unsigned(Op::s_lshl1_add_u32);
        U64 r = (U64(a32()) << sh) + b32();
        d32(U(r));
        w.scc = r >> 32;
        return;
    }
    case Op::s_pack_ll_b32_b16:
        d32((a32() & 0xffff) | b32() << 16);
        return;
    case Op::s_pack_lh_b32_b16:
        d32((a32() & 0xffff) | (b32() & 0xffff0000u));
        return;
    case Op::s_pack_hh_b32_b16:
        d32((a32() >> 16) | (b32() & 0xffff0000u));
        return;
    default:
        err = "not implemented";
        return;
    }
}

/// SOPK: operations on a 16-bit immediate, s_call and the hardware registers.
__attribute__((always_inline)) inline void WaveExec::sopk() {
    const Op op = in.op;
    const U64 nextPc = w.pc; // already advanced past this instruction
    switch (op) {
    case Op::s_movk_i32:
        d32(U(in.imm));
        return;
    case Op::s_cmovk_i32:
        if (w.scc)
            d32(U(in.imm));
        return;
    case Op::s_cmpk_eq_i32:
        w.scc = I(sread(in.vdst)) == in.imm;
        return;
    case Op::s_cmpk_lg_i32:
        w.scc = I(sread(in.vdst)) != in.imm;
        return;
    case Op::s_cmpk_gt_i32:
        w.scc = I(sread(in.vdst)) > in.imm;
        return;
    case Op::s_cmpk_ge_i32:
        w.scc = I(sread(in.vdst)) >= in.imm;
        return;
    case Op::s_cmpk_lt_i32:
        w.scc = I(sread(in.vdst)) < in.imm;
        return;
    case Op::s_cmpk_le_i32:
        w.scc = I(sread(in.vdst)) <= in.imm;
        return;
    case Op::s_cmpk_eq_u32:
        w.scc = sread(in.vdst) == U(in.imm & 0xffff);
        return;
    case Op::s_cmpk_lg_u32:
        w.scc = sread(in.vdst) != U(in.imm & 0xffff);
        return;
    case Op::s_cmpk_gt_u32:
        w.scc = sread(in.vdst) > U(in.imm & 0xffff);
        return;
    case Op::s_cmpk_ge_u32:
        w.scc = sread(in.vdst) >= U(in.imm & 0xffff);
        return;
    case Op::s_cmpk_lt_u32:
        w.scc = sread(in.vdst) < U(in.imm & 0xffff);
        return;
    case Op::s_cmpk_le_u32:
        w.scc = sread(in.vdst) <= U(in.imm & 0xffff);
        return;
    case Op::s_addk_i32: {
        I x = I(sread(in.vdst)), y = in.imm;
        I r = I(U(x) + U(y));
        d32(U(r));
        w.scc = ((x >= 0) == (y >= 0)) && ((r >= 0) != (x >= 0));
        return;
    }
    case Op::s_mulk_i32:
        d32(sread(in.vdst) * U(in.imm));
        return;
    case Op::s_call_b64:
        wrSgpr64(in.vdst, nextPc);
        w.pc = nextPc + int64_t(in.imm) * 4;
        return;
    case Op::s_getreg_b32:
    case Op::s_setreg_b32:
    case Op::s_setreg_imm32_b32: {
        unsigned id = in.imm & 63, offset = (in.imm >> 6) & 31, size = ((in.imm >> 11) & 31) + 1;
        U mask = size >= 32 ? ~0u : ((1u << size) - 1);
        if (op == Op::s_getreg_b32) {
            U value;
            if (id == kHwRegMode)
                value = w.mode;
            else if (id == kHwRegHwId)
                value = (w.id & 15) | (((w.id >> 2) & 3) << 4) /* SIMD */;
            else {
                err = "s_getreg of hardware register " + std::to_string(id) + " not modelled";
                return;
            }
            d32((value >> offset) & mask);
            return;
        }
        if (id != kHwRegMode) {
            err = "s_setreg of hardware register " + std::to_string(id) + " not modelled";
            return;
        }
        U value = op == Op::s_setreg_b32 ? sread(in.vdst) : in.literal;
        U newMode = (w.mode & ~(mask << offset)) | ((value & mask) << offset);
        if (newMode & 0xf) {
            err = "non-default float round mode (MODE.FP_ROUND) not modelled";
            return;
        }
        w.mode = newMode;
        return;
    }
    default:
        err = "not implemented";
        return;
    }
}

/// The s_*_saveexec_b64 / s_*_wrexec_b64 family: EXEC from S0 and EXEC, the old EXEC (saveexec)
/// or the new one (wrexec) to the destination.
__attribute__((always_inline)) inline void WaveExec::sopSaveexec() {
    const Op op = in.op;
    U64 s0 = a64(), e = w.exec(), r = 0;
    switch (op) {
    case Op::s_and_saveexec_b64:
        r = s0 & e;
        break;
    case Op::s_or_saveexec_b64:
        r = s0 | e;
        break;
    case Op::s_xor_saveexec_b64:
        r = s0 ^ e;
        break;
    case Op::s_andn2_saveexec_b64:
        r = s0 & ~e;
        break;
    case Op::s_orn2_saveexec_b64:
        r = s0 | ~e;
        break;
    case Op::s_nand_saveexec_b64:
        r = ~(s0 & e);
        break;
    case Op::s_nor_saveexec_b64:
        r = ~(s0 | e);
        break;
    case Op::s_xnor_saveexec_b64:
        r = ~(s0 ^ e);
        break;
    case Op::s_andn1_saveexec_b64:
    case Op::s_andn1_wrexec_b64:
        r = ~s0 & e;
        break;
    case Op::s_orn1_saveexec_b64:
        r = ~s0 | e;
        break;
    case Op::s_andn2_wrexec_b64:
        r = s0 & ~e;
        break;
    default:
        break;
    }
    bool wr = op == Op::s_andn1_wrexec_b64 || op == Op::s_andn2_wrexec_b64;
    w.setExec(r);
    d64(wr ? r : e);
    w.scc = r != 0;
    return;
}

/// SOP1: one-operand moves, bit counts and scans, the program counter, EXEC updates and the
/// relative moves.
__attribute__((always_inline)) inline void WaveExec::sop1() {
    const Op op = in.op;
    const U64 nextPc = w.pc; // already advanced past this instruction
    switch (op) {
    case Op::s_mov_b32:
        d32(a32());
        return;
    case Op::s_mov_b64:
        d64(a64());
        return;
    case Op::s_cmov_b32:
        if (w.scc)
            d32(a32());
        return;
    case Op::s_cmov_b64:
        if (w.scc)
            d64(a64());
        return;
    case Op::s_not_b32:
        d32scc(~a32());
        return;
    case Op::s_not_b64:
        d64scc(~a64());
        return;
    case Op::s_brev_b32:
        d32(U(brev64(a32()) >> 32));
        return;
    case Op::s_brev_b64:
        d64(brev64(a64()));
        return;
    case Op::s_bcnt0_i32_b32:
        d32scc(U(32 - std::popcount(a32())));
        return;
    case Op::s_bcnt0_i32_b64:
        d32scc(U(64 - std::popcount(a64())));
        return;
    case Op::s_bcnt1_i32_b32:
        d32scc(U(std::popcount(a32())));
        return;
    case Op::s_bcnt1_i32_b64:
        d32scc(U(std::popcount(a64())));
        return;
    case Op::s_ff0_i32_b32:
        d32(ff1(U(~a32())));
        return;
    case Op::s_ff0_i32_b64:
        d32(ff1(~a64()));
        return;
    case Op::s_ff1_i32_b32:
        d32(ff1(a32()));
        return;
    case Op::s_ff1_i32_b64:
        d32(ff1(a64()));
        return;
    case Op::s_flbit_i32_b32: {
        U x = a32();
        d32(x ? U(std::countl_zero(x)) : ~0u);
        return;
    }
    case Op::s_flbit_i32_b64: {
        U64 x = a64();
        d32(x ? U(std::countl_zero(x)) : ~0u);
        return;
    }
    case Op::s_flbit_i32: {
        U x = a32();
        d32((x == 0 || x == ~0u) ? ~0u : U(std::countl_zero(I(x) < 0 ? ~x : x)));
        return;
    }
    case Op::s_flbit_i32_i64: {
        U64 x = a64();
        d32((x == 0 || x == ~0ull) ? ~0u : U(std::countl_zero(int64_t(x) < 0 ? ~x : x)));
        return;
    }
    case Op::s_sext_i32_i8:
        d32(U(I(int8_t(a32()))));
        return;
    case Op::s_sext_i32_i16:
        d32(U(I(int16_t(a32()))));
        return;
    case Op::s_bitset0_b32:
        d32(sread(in.vdst) & ~(1u << (a32() & 31)));
        return;
    case Op::s_bitset1_b32:
        d32(sread(in.vdst) | (1u << (a32() & 31)));
        return;
    case Op::s_bitset0_b64:
        d64(sread64(in.vdst, false) & ~(1ull << (a32() & 63)));
        return;
    case Op::s_bitset1_b64:
        d64(sread64(in.vdst, false) | (1ull << (a32() & 63)));
        return;
    case Op::s_getpc_b64:
        d64(nextPc);
        return;
    case Op::s_setpc_b64:
        w.pc = a64();
        return;
    case Op::s_swappc_b64: {
        U64 target = a64();
        d64(nextPc);
        w.pc = target;
        return;
    }
    case Op::s_and_saveexec_b64:
    case Op::s_or_saveexec_b64:
    case Op::s_xor_saveexec_b64:
    case Op::s_andn2_saveexec_b64:
    case Op::s_orn2_saveexec_b64:
    case Op::s_nand_saveexec_b64:
    case Op::s_nor_saveexec_b64:
    case Op::s_xnor_saveexec_b64:
    case Op::s_andn1_saveexec_b64:
    case Op::s_orn1_saveexec_b64:
    case Op::s_andn1_wrexec_b64:
    case Op::s_andn2_wrexec_b64:
        sopSaveexec();
        return;
    case Op::s_movrels_b32:
        d32(sread((in.src[0] + w.s[opnd::kM0]) & 127));
        return;
    case Op::s_movrels_b64:
        d64(sread64((in.src[0] + w.s[opnd::kM0]) & 127, false));
        return;
    case Op::s_movreld_b32:
        wrSgpr((in.vdst + w.s[opnd::kM0]) & 127, a32());
        return;
    case Op::s_movreld_b64:
        wrSgpr64((in.vdst + w.s[opnd::kM0]) & 127, a64());
        return;
    case Op::s_abs_i32: {
        I x = I(a32());
        d32scc(x < 0 ? U(0) - U(x) : U(x));
        return;
    }
    case Op::s_wqm_b64: {
        U64 x = a64(), r = 0;
        for (int q = 0; q < 16; ++q)
            if ((x >> (4 * q)) & 15)
                r |= 15ull << (4 * q);
        d64scc(r);
        return;
    }
    case Op::s_wqm_b32: {
        U x = a32(), r = 0;
        for (int q = 0; q < 8; ++q)
            if ((x >> (4 * q)) & 15)
                r |= 15u << (4 * q);
        d32scc(r);
        return;
    }
    case Op::s_quadmask_b32: {
        U x = a32(), r = 0;
        for (int q = 0; q < 8; ++q)
            if ((x >> (4 * q)) & 15)
                r |= 1u << q;
        d32scc(r);
        return;
    }
    case Op::s_bitreplicate_b64_b32: {
        U x = a32();
        U64 r = 0;
        for (int i = 0; i < 32; ++i)
            if ((x >> i) & 1)
                r |= 3ull << (2 * i);
        d64(r);
        return;
    }
    case Op::s_quadmask_b64: {
        U64 x = a64(), r = 0;
        for (int q = 0; q < 16; ++q)
            if ((x >> (4 * q)) & 15)
                r |= 1ull << q;
        d64scc(r);
        return;
    }
    default:
        err = "not implemented";
        return;
    }
}

/// SOPC: comparisons into SCC.
__attribute__((always_inline)) inline void WaveExec::sopc() {
    const Op op = in.op;
    switch (op) {
    case Op::s_cmp_eq_i32:
    case Op::s_cmp_eq_u32:
        w.scc = a32() == b32();
        return;
    case Op::s_cmp_lg_i32:
    case Op::s_cmp_lg_u32:
        w.scc = a32() != b32();
        return;
    case Op::s_cmp_gt_i32:
        w.scc = I(a32()) > I(b32());
        return;
    case Op::s_cmp_ge_i32:
        w.scc = I(a32()) >= I(b32());
        return;
    case Op::s_cmp_lt_i32:
        w.scc = I(a32()) < I(b32());
        return;
    case Op::s_cmp_le_i32:
        w.scc = I(a32()) <= I(b32());
        return;
    case Op::s_cmp_gt_u32:
        w.scc = a32() > b32();
        return;
    case Op::s_cmp_ge_u32:
        w.scc = a32() >= b32();
        return;
    case Op::s_cmp_lt_u32:
        w.scc = a32() < b32();
        return;
    case Op::s_cmp_le_u32:
        w.scc = a32() <= b32();
        return;
    case Op::s_bitcmp0_b32:
        w.scc = !((a32() >> (b32() & 31)) & 1);
        return;
    case Op::s_bitcmp1_b32:
        w.scc = (a32() >> (b32() & 31)) & 1;
        return;
    case Op::s_bitcmp0_b64:
        w.scc = !((a64() >> (b32() & 63)) & 1);
        return;
    case Op::s_bitcmp1_b64:
        w.scc = (a64() >> (b32() & 63)) & 1;
        return;
    case Op::s_cmp_eq_u64:
        w.scc = a64() == b64();
        return;
    case Op::s_cmp_lg_u64:
        w.scc = a64() != b64();
        return;
    default:
        err = "not implemented";
        return;
    }
}

void WaveExec::salu() {
    switch (in.enc) {
    case Enc::Sop2:
        return sop2();
    case Enc::Sopk:
        return sopk();
    case Enc::Sop1:
        return sop1();
    case Enc::Sopc:
        return sopc();
    default:
        err = "not implemented";
        return;
    }
}

} // namespace duet::gcn::model
