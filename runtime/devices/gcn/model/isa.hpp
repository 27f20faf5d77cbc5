// The model's decoded form of a gfx900 instruction: decode.cpp turns machine words into an
// Inst once per code address, the interpreter (exec.cpp) switches on Inst::op.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace duet::gcn::model {

/// Machine encodings (gfx9 / "VI" layouts).
enum class Enc : uint8_t { Sop2, Sopk, Sop1, Sopc, Sopp, Smem, Vop2, Vop1, Vopc, Vop3, Vop3p, Ds, Mubuf, Flat, Other };

/// Operations the interpreter implements. Comparisons and memory operations are
/// parametric (Inst::cmp*, Inst::mem*), everything else is one enumerator per mnemonic.
#define DUET_GCN_OPS(X)                                                                            \
    /* SOP2 */ X(s_add_u32) X(s_sub_u32) X(s_add_i32) X(s_sub_i32) X(s_addc_u32) X(s_subb_u32)    \
    X(s_min_i32) X(s_min_u32) X(s_max_i32) X(s_max_u32) X(s_cselect_b32) X(s_cselect_b64)           \
    X(s_and_b32) X(s_and_b64) X(s_or_b32) X(s_or_b64) X(s_xor_b32) X(s_xor_b64) X(s_andn2_b32)     \
    X(s_andn2_b64) X(s_orn2_b32) X(s_orn2_b64) X(s_nand_b32) X(s_nand_b64) X(s_nor_b32)             \
    X(s_nor_b64) X(s_xnor_b32) X(s_xnor_b64) X(s_lshl_b32) X(s_lshl_b64) X(s_lshr_b32)              \
    X(s_lshr_b64) X(s_ashr_i32) X(s_ashr_i64) X(s_bfm_b32) X(s_bfm_b64) X(s_mul_i32) X(s_bfe_u32)   \
    X(s_bfe_i32) X(s_bfe_u64) X(s_bfe_i64) X(s_absdiff_i32) X(s_mul_hi_u32) X(s_mul_hi_i32)        \
    X(s_lshl1_add_u32) X(s_lshl2_add_u32) X(s_lshl3_add_u32) X(s_lshl4_add_u32) X(s_pack_ll_b32_b16) \
    X(s_pack_lh_b32_b16) X(s_pack_hh_b32_b16)                                                      \
    /* SOPK */ X(s_movk_i32) X(s_cmovk_i32) X(s_cmpk_eq_i32) X(s_cmpk_lg_i32) X(s_cmpk_gt_i32)      \
    X(s_cmpk_ge_i32) X(s_cmpk_lt_i32) X(s_cmpk_le_i32) X(s_cmpk_eq_u32) X(s_cmpk_lg_u32)            \
    X(s_cmpk_gt_u32) X(s_cmpk_ge_u32) X(s_cmpk_lt_u32) X(s_cmpk_le_u32) X(s_addk_i32) X(s_mulk_i32) \
    X(s_getreg_b32) X(s_setreg_b32) X(s_setreg_imm32_b32) X(s_call_b64)                            \
    /* SOP1 */ X(s_mov_b32) X(s_mov_b64) X(s_cmov_b32) X(s_cmov_b64) X(s_not_b32) X(s_not_b64)      \
    X(s_brev_b32) X(s_brev_b64) X(s_bcnt0_i32_b32) X(s_bcnt0_i32_b64) X(s_bcnt1_i32_b32)           \
    X(s_bcnt1_i32_b64) X(s_ff0_i32_b32) X(s_ff0_i32_b64) X(s_ff1_i32_b32) X(s_ff1_i32_b64)          \
    X(s_flbit_i32_b32) X(s_flbit_i32_b64) X(s_flbit_i32) X(s_flbit_i32_i64) X(s_sext_i32_i8)        \
    X(s_sext_i32_i16) X(s_bitset0_b32) X(s_bitset0_b64) X(s_bitset1_b32) X(s_bitset1_b64)           \
    X(s_getpc_b64) X(s_setpc_b64) X(s_swappc_b64) X(s_and_saveexec_b64) X(s_or_saveexec_b64)        \
    X(s_xor_saveexec_b64) X(s_andn2_saveexec_b64) X(s_orn2_saveexec_b64) X(s_nand_saveexec_b64)    \
    X(s_nor_saveexec_b64) X(s_xnor_saveexec_b64) X(s_andn1_saveexec_b64) X(s_orn1_saveexec_b64)    \
    X(s_andn1_wrexec_b64) X(s_andn2_wrexec_b64) X(s_movrels_b32) X(s_movrels_b64) X(s_movreld_b32)  \
    X(s_movreld_b64) X(s_abs_i32) X(s_wqm_b64) X(s_quadmask_b64) X(s_wqm_b32) X(s_quadmask_b32) \
    X(s_bitreplicate_b64_b32)                                   \
    /* SOPC */ X(s_cmp_eq_i32) X(s_cmp_lg_i32) X(s_cmp_gt_i32) X(s_cmp_ge_i32) X(s_cmp_lt_i32)      \
    X(s_cmp_le_i32) X(s_cmp_eq_u32) X(s_cmp_lg_u32) X(s_cmp_gt_u32) X(s_cmp_ge_u32) X(s_cmp_lt_u32) \
    X(s_cmp_le_u32) X(s_bitcmp0_b32) X(s_bitcmp1_b32) X(s_bitcmp0_b64) X(s_bitcmp1_b64)             \
    X(s_cmp_eq_u64) X(s_cmp_lg_u64)                                                                \
    /* SOPP */ X(s_nop) X(s_endpgm) X(s_branch) X(s_cbranch_scc0) X(s_cbranch_scc1)                 \
    X(s_cbranch_vccz) X(s_cbranch_vccnz) X(s_cbranch_execz) X(s_cbranch_execnz) X(s_barrier)       \
    X(s_waitcnt) X(s_sleep) X(s_setprio) X(s_icache_inv) X(s_incperflevel) X(s_decperflevel)       \
    X(s_ttracedata) X(s_wakeup) X(s_trap)                                             \
    /* SMEM */ X(s_load) X(s_buffer_load) X(s_dcache_inv) X(s_dcache_wb)                 \
    X(s_dcache_inv_vol) X(s_dcache_wb_vol) X(s_memtime) X(s_memrealtime)                           \
    /* VOP2 */ X(v_cndmask_b32) X(v_add_f32) X(v_sub_f32) X(v_subrev_f32) X(v_mul_legacy_f32)       \
    X(v_mul_f32) X(v_mul_i32_i24) X(v_mul_hi_i32_i24) X(v_mul_u32_u24) X(v_mul_hi_u32_u24)         \
    X(v_min_f32) X(v_max_f32) X(v_min_i32) X(v_max_i32) X(v_min_u32) X(v_max_u32) X(v_lshrrev_b32) \
    X(v_ashrrev_i32) X(v_lshlrev_b32) X(v_and_b32) X(v_or_b32) X(v_xor_b32) X(v_mac_f32)            \
    X(v_madmk_f32) X(v_madak_f32) X(v_add_co_u32) X(v_sub_co_u32) X(v_subrev_co_u32)                \
    X(v_addc_co_u32) X(v_subb_co_u32) X(v_subbrev_co_u32) X(v_add_f16) X(v_sub_f16)                \
    X(v_subrev_f16) X(v_mul_f16) X(v_mac_f16) X(v_madmk_f16) X(v_madak_f16) X(v_add_u16)           \
    X(v_sub_u16) X(v_subrev_u16) X(v_mul_lo_u16) X(v_lshlrev_b16) X(v_lshrrev_b16) X(v_ashrrev_i16) \
    X(v_max_f16) X(v_min_f16) X(v_max_u16) X(v_max_i16) X(v_min_u16) X(v_min_i16) X(v_ldexp_f16)    \
    X(v_add_u32) X(v_sub_u32) X(v_subrev_u32)                                                      \
    /* VOP1 */ X(v_nop) X(v_mov_b32) X(v_readfirstlane_b32) X(v_cvt_i32_f64) X(v_cvt_f64_i32)       \
    X(v_cvt_f32_i32) X(v_cvt_f32_u32) X(v_cvt_u32_f32) X(v_cvt_i32_f32) X(v_cvt_f16_f32)            \
    X(v_cvt_f32_f16) X(v_cvt_rpi_i32_f32) X(v_cvt_flr_i32_f32) X(v_cvt_f32_f64) X(v_cvt_f64_f32)    \
    X(v_cvt_f32_ubyte0) X(v_cvt_f32_ubyte1) X(v_cvt_f32_ubyte2) X(v_cvt_f32_ubyte3)                 \
    X(v_cvt_u32_f64) X(v_cvt_f64_u32) X(v_trunc_f64) X(v_ceil_f64) X(v_rndne_f64) X(v_floor_f64)    \
    X(v_fract_f32) X(v_trunc_f32) X(v_ceil_f32) X(v_rndne_f32) X(v_floor_f32) X(v_exp_f32)          \
    X(v_log_f32) X(v_rcp_f32) X(v_rcp_iflag_f32) X(v_rsq_f32) X(v_rcp_f64) X(v_rsq_f64)             \
    X(v_sqrt_f32) X(v_sqrt_f64) X(v_sin_f32) X(v_cos_f32) X(v_not_b32) X(v_bfrev_b32) X(v_ffbh_u32) \
    X(v_ffbl_b32) X(v_ffbh_i32) X(v_frexp_exp_i32_f64) X(v_frexp_mant_f64) X(v_fract_f64)           \
    X(v_frexp_exp_i32_f32) X(v_frexp_mant_f32) X(v_cvt_f16_u16) X(v_cvt_f16_i16) X(v_cvt_u16_f16)   \
    X(v_cvt_i16_f16) X(v_rcp_f16) X(v_sqrt_f16) X(v_rsq_f16) X(v_log_f16) X(v_exp_f16)              \
    X(v_frexp_mant_f16) X(v_frexp_exp_i16_f16) X(v_floor_f16) X(v_ceil_f16) X(v_trunc_f16)          \
    X(v_rndne_f16) X(v_fract_f16) X(v_sin_f16) X(v_cos_f16) X(v_swap_b32) X(v_clrexcp)                          \
    /* VOP3 */ X(v_mad_legacy_f32) X(v_mad_f32) X(v_mad_i32_i24) X(v_mad_u32_u24) X(v_bfe_u32)      \
    X(v_bfe_i32) X(v_bfi_b32) X(v_fma_f32) X(v_fma_f64) X(v_alignbit_b32) X(v_alignbyte_b32)        \
    X(v_min3_f32) X(v_min3_i32) X(v_min3_u32) X(v_max3_f32) X(v_max3_i32) X(v_max3_u32)             \
    X(v_med3_f32) X(v_med3_i32) X(v_med3_u32) X(v_sad_u32) X(v_div_fixup_f32) X(v_div_fixup_f64)   \
    X(v_div_scale_f32) X(v_div_scale_f64) X(v_div_fmas_f32) X(v_div_fmas_f64) X(v_mad_u64_u32)     \
    X(v_mad_i64_i32) X(v_perm_b32) X(v_mad_u32_u16) X(v_mad_i32_i16) X(v_xad_u32) X(v_min3_f16)     \
    X(v_max3_f16) X(v_med3_f16) X(v_min3_i16) X(v_max3_i16) X(v_med3_i16) X(v_min3_u16)             \
    X(v_max3_u16) X(v_med3_u16) X(v_lshl_add_u32) X(v_add_lshl_u32) X(v_add3_u32) X(v_lshl_or_b32)  \
    X(v_and_or_b32) X(v_or3_b32) X(v_mad_f16) X(v_mad_u16) X(v_mad_i16) X(v_fma_f16)                \
    X(v_div_fixup_f16) X(v_add_f64) X(v_mul_f64) X(v_min_f64) X(v_max_f64) X(v_ldexp_f64)           \
    X(v_mul_lo_u32) X(v_mul_hi_u32) X(v_mul_hi_i32) X(v_ldexp_f32) X(v_readlane_b32)                \
    X(v_writelane_b32) X(v_bcnt_u32_b32) X(v_mbcnt_lo_u32_b32) X(v_mbcnt_hi_u32_b32)               \
    X(v_lshlrev_b64) X(v_lshrrev_b64) X(v_ashrrev_i64) X(v_trig_preop_f64) X(v_bfm_b32)            \
    X(v_cvt_pkrtz_f16_f32) X(v_cvt_pk_u16_u32) X(v_cvt_pk_i16_i32) X(v_add_i32) X(v_sub_i32)        \
    X(v_add_i16) X(v_sub_i16) X(v_pack_b32_f16) X(v_cvt_pknorm_i16_f32) X(v_cvt_pknorm_u16_f32) \
    X(v_sad_u8) X(v_sad_hi_u8) X(v_sad_u16) X(v_msad_u8) X(v_lerp_u8) X(v_cvt_pk_u8_f32)            \
    X(v_cvt_off_f32_i4) X(v_exp_legacy_f32) X(v_log_legacy_f32) X(v_cvt_norm_i16_f16)              \
    X(v_cvt_norm_u16_f16) X(v_sat_pk_u8_i16) X(v_cvt_pknorm_i16_f16) X(v_cvt_pknorm_u16_f16)     \
    /* VOP3P */ X(v_pk_mad_i16) X(v_pk_mul_lo_u16) X(v_pk_add_i16) X(v_pk_sub_i16)                  \
    X(v_pk_lshlrev_b16) X(v_pk_lshrrev_b16) X(v_pk_ashrrev_i16) X(v_pk_max_i16) X(v_pk_min_i16)     \
    X(v_pk_mad_u16) X(v_pk_add_u16) X(v_pk_sub_u16) X(v_pk_max_u16) X(v_pk_min_u16) X(v_pk_fma_f16) \
    X(v_pk_add_f16) X(v_pk_mul_f16) X(v_pk_min_f16) X(v_pk_max_f16) X(v_mad_mix_f32)               \
    X(v_mad_mixlo_f16) X(v_mad_mixhi_f16)                                                          \
    /* parametric */ X(v_cmp) X(v_cmp_class) X(ds_read) X(ds_write) X(ds_read2) X(ds_write2)         \
    X(ds_atomic) X(ds_bpermute_b32) X(ds_permute_b32) X(ds_swizzle_b32) X(ds_nop)                  \
    X(mem_load) X(mem_store) X(mem_atomic) X(buffer_wbinvl1) X(buffer_wbinvl1_vol)

enum class Op : uint16_t {
    Unimplemented,
#define DUET_GCN_ENUM(name) name,
    DUET_GCN_OPS(DUET_GCN_ENUM)
#undef DUET_GCN_ENUM
        Count
};

/// Comparison conditions of VOPC: the float ones are the ISA's 16 (f, lt, eq, le, gt, lg, ge,
/// o, u, nge, nlg, ngt, nle, neq, nlt, tru); the integer ones map onto f..tru of the 8 integer
/// conditions (f, lt, eq, le, gt, ne, ge, t).
enum class CmpType : uint8_t { F16, F32, F64, I16, U16, I32, U32, I64, U64 };

/// Read-modify-write operations of DS, FLAT/GLOBAL and MUBUF atomics.
enum class AtomicOp : uint8_t {
    Swap, CmpSwap, Add, Sub, Rsub, Smin, Umin, Smax, Umax, And, Or, Xor, Inc, Dec, Fmin, Fmax, Fadd,
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
    uint8_t words = 1;             ///< instruction size in dwords (literal included)
    uint8_t cls = 0;               ///< InstClass (statistics)
    uint16_t src[3] = {0, 0, 0};   ///< operand codes (0..511), kLiteral uses `literal`
    uint16_t vdst = 0;             ///< VGPR index, or scalar operand code for SALU/readlane
    uint8_t sdst = opnd::kVcc;     ///< scalar destination of VOPC / carry-out / VOP3b
    uint8_t abs = 0, neg = 0, negHi = 0, opsel = 0, opselHi = 0;
    uint8_t clamp = 0, omod = 0;
    bool cmpx = false;             ///< v_cmpx_*: also writes EXEC
    uint8_t cmpCond = 0;           ///< condition index (see CmpType)
    CmpType cmpType = CmpType::F32;
    // Memory
    Space space = Space::Global;
    AtomicOp atomic = AtomicOp::Add;
    uint8_t memBytes = 4;          ///< bytes per lane and element (1, 2, 4, 8, 12, 16)
    bool memSigned = false, memRtn = false, glc = false, offen = false, idxen = false;
    bool memD16 = false, memD16Hi = false;
    bool st64 = false;             ///< ds_*2st64 (offsets in units of 64 elements)
    uint8_t saddr = 0x7f;          ///< GLOBAL/SCRATCH scalar base (0x7f: off); MUBUF srsrc; SMEM sbase
    uint8_t soffset = 0;           ///< MUBUF / SMEM scalar offset operand code
    bool smemImm = true;
    uint8_t offset1 = 0;           ///< DS offset1
    int32_t imm = 0;               ///< simm16, memory offset, DS offset0
    uint32_t literal = 0;
    // SDWA / DPP (the second dword as encoded; 0 when absent)
    uint8_t ext = 0;               ///< 0 none, 1 SDWA, 2 DPP
    uint32_t extWord = 0;
    const char* name = "";         ///< mnemonic, for errors and statistics
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
