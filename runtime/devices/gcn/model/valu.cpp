// The vector ALU (VOP1/VOP2/VOP3/VOP3P except comparisons), one function per operation family.
#include "wave_exec.hpp"

namespace duet::gcn::model {

namespace {

using I = int32_t;
using U = uint32_t;

DUET_GCN_ALWAYS_INLINE int64_t sx24(U x) {
    return int64_t(int32_t(x << 8) >> 8);
}
DUET_GCN_ALWAYS_INLINE uint64_t ux24(U x) {
    return uint64_t(x & 0xffffff);
}

/// Canonical quiet NaN the hardware produces.
constexpr uint32_t kQnanF32 = 0x7fc00000;

template <class T> T fmed3(T a, T b, T c) {
    if (std::isnan(a) || std::isnan(b) || std::isnan(c))
        return fminIeee(fminIeee(a, b), c);
    T mx = fmaxIeee(fmaxIeee(a, b), c);
    if (mx == a)
        return fmaxIeee(b, c);
    if (mx == b)
        return fmaxIeee(a, c);
    return fmaxIeee(a, b);
}

/// v_div_fmas: a * b + c, and for the lanes v_div_scale flagged (`scaled`) scaled back by
/// 2^+-`scale` (up when c is at least 2). Scaled lanes compute the fma and the scaling in the
/// wider type `Wide`, then round once, so a quotient that lands in the denormal range is not
/// rounded twice.
template <class T, class Wide>
DUET_GCN_ALWAYS_INLINE T divFmas(T a, T b, T c, bool scaled, int scale) {
    if (!scaled)
        return std::fma(a, b, c);
    return T(
        std::ldexp(std::fma(Wide(a), Wide(b), Wide(c)), std::fabs(c) >= T(2) ? scale : -scale));
}

/// v_div_fixup: the IEEE special cases of num / den around the quotient `q` that the fdiv
/// expansion computed (NaN, 0/0, inf/inf, x/0, x/inf), and otherwise |q| with the sign of the
/// division (q NaN: an overflowed division, infinity).
template <class T> T divFixup(T q, T den, T num, T qnan) {
    const T sign = std::signbit(den) != std::signbit(num) ? T(-1) : T(1);
    if (std::isnan(den))
        return den;
    if (std::isnan(num))
        return num;
    if ((den == 0 && num == 0) || (std::isinf(den) && std::isinf(num)))
        return qnan;
    if (den == 0 || std::isinf(num))
        return sign * std::numeric_limits<T>::infinity();
    if (std::isinf(den) || num == 0)
        return sign * T(0);
    return std::isnan(q) ? sign * std::numeric_limits<T>::infinity() : sign * std::fabs(q);
}

/// Float to integer as the ISA converts: round toward zero, clamp to the range, NaN -> 0.
template <class I, class F> DUET_GCN_ALWAYS_INLINE I cvtSat(F x) {
    if (std::isnan(x))
        return 0;
    if (x <= F(std::numeric_limits<I>::min()))
        return std::numeric_limits<I>::min();
    if (x >= F(std::numeric_limits<I>::max()))
        return std::numeric_limits<I>::max();
    return static_cast<I>(x);
}

DUET_GCN_ALWAYS_INLINE int frexpExp(double x) {
    if (!std::isfinite(x) || x == 0)
        return 0;
    int e;
    std::frexp(x, &e);
    return e;
}
template <class F> DUET_GCN_ALWAYS_INLINE F frexpMant(F x) {
    if (!std::isfinite(x) || x == 0)
        return x;
    int e;
    return std::frexp(x, &e);
}
template <class F> DUET_GCN_ALWAYS_INLINE F fractOf(F x) {
    if (std::isinf(x))
        return std::numeric_limits<F>::quiet_NaN();
    F f = x - std::floor(x);
    return std::min(f, std::nextafter(F(1), F(0)));
}

/// 2/pi in 1201 bits, as v_trig_preop_f64 reads it: 53-bit segments of the fraction.
uint64_t twoOverPiBits(int start) {
    // The first 1152 fraction bits of 2/pi (hex digits), enough for every shift the op allows.
    static const char* const kDigits =
        "A2F9836E4E441529FC2757D1F534DDC0DB6295993C439041FE5163ABDEBBC561B7246E3A424DD2E006492EEA09"
        "D1921CFE1DEB1CB129A73EE88235F52EBB4484E99C7026B45F7E413991D639835339F49C845F8BBDF9283B1FF8"
        "97FFDE05980FEF2F118B5A0A6D1F6D367ECF27CB09B74F463F669E5FEA2D7527BAC7EBE5F17B3D0739F78A5292"
        "EA6BFB5FB11F8D5D0856033046FC7B6BABF0CFBC209AF4361DA9E391615EE61B086599855F14A068408DFFD880"
        "4D73273106061556CA73A8C960E27BC08C6B";
    uint64_t r = 0;
    for (int i = 0; i < 53; ++i) {
        int bit = start + i;
        int digit = bit / 4;
        if (digit >= static_cast<int>(strlen(kDigits))) {
            r <<= 1;
            continue;
        }
        char c = kDigits[digit];
        int val = c <= '9' ? c - '0' : c - 'A' + 10;
        r = r << 1 | ((val >> (3 - bit % 4)) & 1);
    }
    return r;
}

// ---- Fused multiply-add over a wave ----------------------------------------------------------
// std::fma is a libm call per lane unless the compiler may assume FMA hardware; choose an
// FMA3 build of the lane loop at run time when the host has it (exact either way).

template <class T> void fmaLanesGeneric(T* r, const T* a, const T* b, const T* c) {
    for (int l = 0; l < 64; ++l)
        r[l] = std::fma(a[l], b[l], c[l]);
}
__attribute__((target("fma"))) void fmaLanesF32Hw(float* r, const float* a, const float* b,
                                                  const float* c) {
    for (int l = 0; l < 64; ++l)
        r[l] = __builtin_fmaf(a[l], b[l], c[l]);
}
__attribute__((target("fma"))) void fmaLanesF64Hw(double* r, const double* a, const double* b,
                                                  const double* c) {
    for (int l = 0; l < 64; ++l)
        r[l] = __builtin_fma(a[l], b[l], c[l]);
}
const bool kHostFma = __builtin_cpu_supports("fma");
DUET_GCN_ALWAYS_INLINE void fmaLanes(float* r, const float* a, const float* b, const float* c) {
    kHostFma ? fmaLanesF32Hw(r, a, b, c) : fmaLanesGeneric(r, a, b, c);
}
DUET_GCN_ALWAYS_INLINE void fmaLanes(double* r, const double* a, const double* b, const double* c) {
    kHostFma ? fmaLanesF64Hw(r, a, b, c) : fmaLanesGeneric(r, a, b, c);
}

/// The inverse: lane l's byte is bit l of `m`. Each mask byte's bits are spread to eight
/// bytes (multiply, keep bit i in byte i), then a nonzero byte becomes 1.
DUET_GCN_ALWAYS_INLINE void unpackLaneBits(uint64_t m, uint8_t* c) {
    static_assert(std::endian::native == std::endian::little);
    for (int i = 0; i < 8; ++i) {
        uint64_t x = ((m >> (8 * i)) & 0xff) * 0x0101010101010101ull & 0x8040201008040201ull;
        x = ((x + 0x7f7f7f7f7f7f7f7full) >> 7) & 0x0101010101010101ull;
        memcpy(c + 8 * i, &x, 8);
    }
}

/// The 16-bit result of a packed (VOP3P) operation for one half: `x` holds the operand halves
/// op_sel / op_sel_hi chose, `ng` the half's neg bits.
__attribute__((always_inline)) inline uint16_t packedHalf(Op op, const uint16_t* x, uint8_t ng,
                                                          bool clamp) {
    auto hf = [&](int i) {
        f16 h = bc<f16>(x[i]);
        return (ng >> i) & 1 ? -h : h;
    };
    uint16_t r;
    switch (op) {
    case Op::v_pk_add_f16:
        r = bc<uint16_t>(f16(hf(0) + hf(1)));
        break;
    case Op::v_pk_mul_f16:
        r = bc<uint16_t>(f16(hf(0) * hf(1)));
        break;
    case Op::v_pk_fma_f16:
        r = bc<uint16_t>(f16(std::fma(double(hf(0)), double(hf(1)), double(hf(2)))));
        break;
    case Op::v_pk_min_f16:
        r = bc<uint16_t>(f16(fminIeee(float(hf(0)), float(hf(1)))));
        break;
    case Op::v_pk_max_f16:
        r = bc<uint16_t>(f16(fmaxIeee(float(hf(0)), float(hf(1)))));
        break;
    // clamp saturates the integer adds and subtracts (add_sat/sub_sat on short2..4).
    case Op::v_pk_add_u16:
        r = uint16_t(clamp ? std::min(uint32_t(x[0]) + x[1], 0xffffu) : x[0] + x[1]);
        break;
    case Op::v_pk_add_i16:
        r = uint16_t(clamp ? std::clamp(int(int16_t(x[0])) + int16_t(x[1]), -32768, 32767)
                           : x[0] + x[1]);
        break;
    case Op::v_pk_sub_u16:
        r = uint16_t(clamp ? (x[0] < x[1] ? 0 : x[0] - x[1]) : x[0] - x[1]);
        break;
    case Op::v_pk_sub_i16:
        r = uint16_t(clamp ? std::clamp(int(int16_t(x[0])) - int16_t(x[1]), -32768, 32767)
                           : x[0] - x[1]);
        break;
    case Op::v_pk_mul_lo_u16:
        r = x[0] * x[1];
        break;
    case Op::v_pk_mad_u16:
    case Op::v_pk_mad_i16:
        r = x[0] * x[1] + x[2];
        break;
    case Op::v_pk_lshlrev_b16:
        r = x[1] << (x[0] & 15);
        break;
    case Op::v_pk_lshrrev_b16:
        r = x[1] >> (x[0] & 15);
        break;
    case Op::v_pk_ashrrev_i16:
        r = uint16_t(int16_t(x[1]) >> (x[0] & 15));
        break;
    case Op::v_pk_max_i16:
        r = uint16_t(std::max(int16_t(x[0]), int16_t(x[1])));
        break;
    case Op::v_pk_min_i16:
        r = uint16_t(std::min(int16_t(x[0]), int16_t(x[1])));
        break;
    case Op::v_pk_max_u16:
        r = std::max(x[0], x[1]);
        break;
    case Op::v_pk_min_u16:
        r = std::min(x[0], x[1]);
        break;
    default:
        r = 0;
        break;
    }
    return r;
}

} // namespace

// Shorthands: unary/binary/ternary float and integer lane loops. LANE_OPn reads n
// operands through SRC as lanes of type T (x, y, z), stores CAST(expr) into BUF seen as
// R lanes (CAST empty: the implicit conversion) and writes them back with WR.
#define LANE_OP1(T, SRC, R, BUF, CAST, WR, expr)                                                   \
    {                                                                                              \
        const auto* a = SRC(0);                                                                    \
        R* r = reinterpret_cast<R*>(BUF);                                                          \
        LANES {                                                                                    \
            T x = T(a[l]);                                                                         \
            r[l] = CAST(expr);                                                                     \
        }                                                                                          \
        WR(r);                                                                                     \
        return true;                                                                               \
    }
#define LANE_OP2(T, SRC, R, BUF, CAST, WR, expr)                                                   \
    {                                                                                              \
        const auto* a = SRC(0);                                                                    \
        const auto* b = SRC(1);                                                                    \
        R* r = reinterpret_cast<R*>(BUF);                                                          \
        LANES {                                                                                    \
            T x = T(a[l]), y = T(b[l]);                                                            \
            r[l] = CAST(expr);                                                                     \
        }                                                                                          \
        WR(r);                                                                                     \
        return true;                                                                               \
    }
#define LANE_OP3(T, SRC, R, BUF, CAST, WR, expr)                                                   \
    {                                                                                              \
        const auto* a = SRC(0);                                                                    \
        const auto* b = SRC(1);                                                                    \
        const auto* c = SRC(2);                                                                    \
        R* r = reinterpret_cast<R*>(BUF);                                                          \
        LANES {                                                                                    \
            T x = T(a[l]), y = T(b[l]), z = T(c[l]);                                               \
            r[l] = CAST(expr);                                                                     \
        }                                                                                          \
        WR(r);                                                                                     \
        return true;                                                                               \
    }
#define F32_1(expr) LANE_OP1(float, f32, float, res, , wrF32, expr)
#define F32_2(expr) LANE_OP2(float, f32, float, res, , wrF32, expr)
#define F32_3(expr) LANE_OP3(float, f32, float, res, , wrF32, expr)
#define F64_1(expr) LANE_OP1(double, f64, double, res64, , wrF64, expr)
#define F64_2(expr) LANE_OP2(double, f64, double, res64, , wrF64, expr)
#define F64_3(expr) LANE_OP3(double, f64, double, res64, , wrF64, expr)
#define F16_1(expr) LANE_OP1(f16, h16, f16, res64, f16, wrF16, expr)
#define F16_2(expr) LANE_OP2(f16, h16, f16, res64, f16, wrF16, expr)
#define F16_3(expr) LANE_OP3(f16, h16, f16, res64, f16, wrF16, expr)
#define I32_1(expr) LANE_OP1(uint32_t, src32, uint32_t, res, , wr32, expr)
#define I32_2(expr) LANE_OP2(uint32_t, src32, uint32_t, res, , wr32, expr)
#define I32_3(expr) LANE_OP3(uint32_t, src32, uint32_t, res, , wr32, expr)
#define I16_2(expr) LANE_OP2(uint16_t, src16, uint32_t, res, uint16_t, wr16, expr)
#define I16_3(expr) LANE_OP3(uint16_t, src16, uint32_t, res, uint16_t, wr16, expr)
#define CVT_F32_TO(expr) LANE_OP1(float, f32, uint32_t, res, , wr32, expr)
#define F32_FROM(expr) LANE_OP1(uint32_t, src32, float, res, , wrF32, expr)

// v_div_scale (model's scheme, self-consistent with v_div_fmas below; hardware-exact
// only on the paths LLVM's fdiv expansion takes for normal operands):
//  exponent(num) - exponent(den) >= BIG: VCC, scale the denominator up (fmas scales back up);
//  quotient below the normal range: VCC, scale the numerator up (fmas scales back down);
//  denormal denominator or tiny numerator: scale both up; huge denominator: both down.
// Zero, infinite and NaN operands pass through; v_div_fixup produces the IEEE result.
#define F32_DIV_SCALE(T, BIG, EMIN, SCALE, TINY, MANT)                                             \
    {                                                                                              \
        const T* a = fsrc<T>(0);                                                                   \
        const T* b = fsrc<T>(1);                                                                   \
        const T* c = fsrc<T>(2);                                                                   \
        T* r = sizeof(T) == 4 ? reinterpret_cast<T*>(res) : reinterpret_cast<T*>(res64);           \
        uint64_t vccOut = 0;                                                                       \
        LANES {                                                                                    \
            T s0 = a[l], den = b[l], num = c[l];                                                   \
            r[l] = s0;                                                                             \
            if (den == 0 || num == 0 || !std::isfinite(den) || !std::isfinite(num))                \
                continue;                                                                          \
            int eNum = std::ilogb(num), eDen = std::ilogb(den);                                    \
            if (eNum - eDen >= BIG) {                                                              \
                vccOut |= 1ull << l;                                                               \
                if (s0 == den)                                                                     \
                    r[l] = std::ldexp(s0, SCALE);                                                  \
            } else if (eNum - eDen <= -(EMIN)) {                                                   \
                vccOut |= 1ull << l;                                                               \
                if (s0 == num)                                                                     \
                    r[l] = std::ldexp(s0, SCALE);                                                  \
            } else if (eDen < -(EMIN) || eNum <= TINY - (EMIN + 1)) {                              \
                r[l] = std::ldexp(s0, SCALE);                                                      \
            } else if (eDen >= EMIN) {                                                             \
                r[l] = std::ldexp(s0, -(SCALE));                                                   \
            }                                                                                      \
        }                                                                                          \
        wrMaskSgpr(in.sdst, vccOut& execMask);                                                     \
        if constexpr (sizeof(T) == 4)                                                              \
            wrF32(reinterpret_cast<float*>(r));                                                    \
        else                                                                                       \
            wrF64(reinterpret_cast<double*>(r));                                                   \
        return true;                                                                               \
    }

// Each family has an AVX2 clone chosen at load time where the host has it: the lane loops run
// 8 wide. Same results (no fast-math; fp-contract stays off, and AVX2 has no FMA anyway).

/// f32 arithmetic, fused and unfused multiply-adds, transcendentals, rounding, the fdiv helpers.
DUET_GCN_AVX2_CLONE bool WaveExec::valuF32() {
    switch (in.op) {
    case Op::v_add_f32:
        F32_2(x + y)
    case Op::v_sub_f32:
        F32_2(x - y)
    case Op::v_subrev_f32:
        F32_2(y - x)
    case Op::v_mul_f32:
        F32_2(x * y)
    case Op::v_mul_legacy_f32:
        F32_2((x == 0 || y == 0) ? 0.0f : x * y)
    case Op::v_min_f32:
        F32_2(fminIeee(x, y))
    case Op::v_max_f32:
        F32_2(fmaxIeee(x, y))
    case Op::v_min3_f32:
        F32_3(fminIeee(fminIeee(x, y), z))
    case Op::v_max3_f32:
        F32_3(fmaxIeee(fmaxIeee(x, y), z))
    case Op::v_med3_f32:
        F32_3(fmed3(x, y, z))
    case Op::v_fma_f32: {
        const float* a = f32(0);
        const float* b = f32(1);
        const float* c = f32(2);
        float* r = reinterpret_cast<float*>(res);
        fmaLanes(r, a, b, c);
        wrF32(r);
        return true;
    }
    // v_mad/v_mac: multiply rounded, then add rounded; f32 denormals always flushed (gfx9).
    case Op::v_mad_f32:
    case Op::v_mac_f32: {
        const float* a = f32(0, true);
        const float* b = f32(1, true);
        const float* c = f32(2, true);
        float* r = reinterpret_cast<float*>(res);
        LANES r[l] = flushF32(flushF32(a[l] * b[l]) + c[l]);
        wrF32(r, true);
        return true;
    }
    case Op::v_mad_legacy_f32: {
        const float* a = f32(0, true);
        const float* b = f32(1, true);
        const float* c = f32(2, true);
        float* r = reinterpret_cast<float*>(res);
        LANES r[l] = flushF32(((a[l] == 0 || b[l] == 0) ? 0.0f : flushF32(a[l] * b[l])) + c[l]);
        wrF32(r, true);
        return true;
    }
    case Op::v_madmk_f32: { // D = S0 * K + S1
        const float* a = f32(0, true);
        const float* b = f32(1, true);
        float k = flushF32(bc<float>(in.literal));
        float* r = reinterpret_cast<float*>(res);
        LANES r[l] = flushF32(flushF32(a[l] * k) + b[l]);
        wrF32(r, true);
        return true;
    }
    case Op::v_madak_f32: { // D = S0 * S1 + K
        const float* a = f32(0, true);
        const float* b = f32(1, true);
        float k = flushF32(bc<float>(in.literal));
        float* r = reinterpret_cast<float*>(res);
        LANES r[l] = flushF32(flushF32(a[l] * b[l]) + k);
        wrF32(r, true);
        return true;
    }
    case Op::v_ldexp_f32: {
        const float* a = f32(0);
        const uint32_t* b = src32(1);
        float* r = reinterpret_cast<float*>(res);
        LANES r[l] = std::ldexp(a[l], std::clamp(I(b[l]), -1000, 1000));
        wrF32(r);
        return true;
    }
    // Transcendentals: correctly rounded host results (hardware: ~1 ulp).
    case Op::v_rcp_f32:
    case Op::v_rcp_iflag_f32:
        F32_1(1.0f / x)
    case Op::v_rsq_f32:
        F32_1(float(1.0 / std::sqrt(double(x))))
    case Op::v_sqrt_f32:
        F32_1(std::sqrt(x))
    case Op::v_exp_f32:
        F32_1(std::exp2(x))
    case Op::v_log_f32:
        F32_1(std::log2(x))
    case Op::v_sin_f32:
        F32_1(std::isinf(x) ? std::numeric_limits<float>::quiet_NaN()
                            : float(std::sin(double(x) * 6.283185307179586)))
    case Op::v_cos_f32:
        F32_1(std::isinf(x) ? std::numeric_limits<float>::quiet_NaN()
                            : float(std::cos(double(x) * 6.283185307179586)))
    case Op::v_fract_f32:
        F32_1(fractOf(x))
    case Op::v_trunc_f32:
        F32_1(std::trunc(x))
    case Op::v_ceil_f32:
        F32_1(std::ceil(x))
    case Op::v_floor_f32:
        F32_1(std::floor(x))
    case Op::v_rndne_f32:
        F32_1(std::nearbyint(x))
    case Op::v_frexp_mant_f32:
        F32_1(frexpMant(x))
    case Op::v_frexp_exp_i32_f32:
        CVT_F32_TO(U(frexpExp(x)))
    // div expansion (LLVM's fdiv lowering: div_scale, rcp, fma chain, div_fmas, div_fixup)
    case Op::v_div_scale_f32: {
        F32_DIV_SCALE(float, 96, 126, 64, 23, 24)
    }
    case Op::v_div_fmas_f32: {
        const uint64_t vccIn = w.vcc();
        F32_3((divFmas<float, double>(x, y, z, (vccIn >> l) & 1, 64)))
    }
    case Op::v_div_fixup_f32:
        F32_3(divFixup(x, y, z, bc<float>(kQnanF32)))
    case Op::v_exp_legacy_f32:
        F32_1(std::exp2(x))
    case Op::v_log_legacy_f32:
        F32_1(x < 0 ? std::numeric_limits<float>::quiet_NaN() : std::log2(x))
    default:
        return false;
    }
}

/// 32-bit integer arithmetic: adds with carries and clamp, multiplies, min/max/median,
/// v_mad_u64_u32.
DUET_GCN_AVX2_CLONE bool WaveExec::valuInt32() {
    // Integer ops that honour clamp saturate; the rest must not carry it. The clamp bit is
    // VOP3's or, for SDWA, the SDWA word's (LLVM emits v_sub_u16_sdwa ... clamp for sub_sat).
    const bool clampBit = in.clamp || sdwaClamp();
    switch (in.op) {
    case Op::v_add_u32:
        I32_2(clampBit ? U(std::min<uint64_t>(uint64_t(x) + y, 0xffffffffu)) : x + y)
    case Op::v_sub_u32:
        I32_2(clampBit ? (x < y ? 0 : x - y) : x - y)
    case Op::v_subrev_u32:
        I32_2(clampBit ? (y < x ? 0 : y - x) : y - x)
    case Op::v_add_i32:
        I32_2(clampBit ? U(std::clamp<int64_t>(int64_t(I(x)) + I(y), INT32_MIN, INT32_MAX)) : x + y)
    case Op::v_sub_i32:
        I32_2(clampBit ? U(std::clamp<int64_t>(int64_t(I(x)) - I(y), INT32_MIN, INT32_MAX)) : x - y)
    case Op::v_add_co_u32:
    case Op::v_sub_co_u32:
    case Op::v_subrev_co_u32:
    case Op::v_addc_co_u32:
    case Op::v_subb_co_u32:
    case Op::v_subbrev_co_u32: {
        const uint32_t* a = src32(0);
        const uint32_t* b = src32(1);
        bool withCarry = in.op == Op::v_addc_co_u32 || in.op == Op::v_subb_co_u32 ||
                         in.op == Op::v_subbrev_co_u32;
        bool add = in.op == Op::v_add_co_u32 || in.op == Op::v_addc_co_u32;
        bool rev = in.op == Op::v_subrev_co_u32 || in.op == Op::v_subbrev_co_u32;
        if (rev)
            std::swap(a, b);
        uint64_t cin = withCarry ? sread64(in.src[2], false) : 0;
        uint64_t cout = 0;
        // Separate branch-free loops per operation: this is every 64-bit address computation.
        // Carries go through bytes so that the lane loops vectorise.
        alignas(16) uint8_t cb[64], co[64];
        if (withCarry)
            unpackLaneBits(cin, cb);
        else
            std::fill_n(cb, 64, 0);
        if (add) {
            LANES {
                U s = a[l] + b[l], r = s + cb[l];
                res[l] = r;
                co[l] = (s < a[l]) | (r < s);
            }
        } else {
            LANES {
                U d = a[l] - b[l], r = d - cb[l];
                res[l] = r;
                co[l] = (a[l] < b[l]) | (d < cb[l]); // b + c > a
            }
        }
        cout = packLaneBits(co);
        if (clampBit) // saturate the lanes that carried / borrowed
            LANES if ((cout >> l) & 1) res[l] = add ? 0xffffffffu : 0;
        wrMaskSgpr(in.sdst, cout & execMask);
        wr32(res);
        return true;
    }
    case Op::v_mul_lo_u32:
        I32_2(x * y)
    case Op::v_mul_hi_u32:
        I32_2(U((uint64_t(x) * y) >> 32))
    case Op::v_mul_hi_i32:
        I32_2(U((int64_t(I(x)) * I(y)) >> 32))
    case Op::v_mul_i32_i24:
        I32_2(U(sx24(x) * sx24(y)))
    case Op::v_mul_hi_i32_i24:
        I32_2(U((sx24(x) * sx24(y)) >> 32))
    case Op::v_mul_u32_u24:
        I32_2(U(ux24(x) * ux24(y)))
    case Op::v_mul_hi_u32_u24:
        I32_2(U((ux24(x) * ux24(y)) >> 32))
    case Op::v_mad_i32_i24:
        I32_3(U(sx24(x) * sx24(y)) + z)
    case Op::v_mad_u32_u24:
        I32_3(U(ux24(x) * ux24(y)) + z)
    case Op::v_min_i32:
        I32_2(U(std::min(I(x), I(y))))
    case Op::v_max_i32:
        I32_2(U(std::max(I(x), I(y))))
    case Op::v_min_u32:
        I32_2(std::min(x, y))
    case Op::v_max_u32:
        I32_2(std::max(x, y))
    case Op::v_min3_i32:
        I32_3(U(std::min({I(x), I(y), I(z)})))
    case Op::v_max3_i32:
        I32_3(U(std::max({I(x), I(y), I(z)})))
    case Op::v_med3_i32:
        I32_3(U(std::max(std::min(I(x), I(y)), std::min(std::max(I(x), I(y)), I(z)))))
    case Op::v_min3_u32:
        I32_3(std::min({x, y, z}))
    case Op::v_max3_u32:
        I32_3(std::max({x, y, z}))
    case Op::v_med3_u32:
        I32_3(std::max(std::min(x, y), std::min(std::max(x, y), z)))
    case Op::v_sad_u32:
        I32_3((x > y ? x - y : y - x) + z)
    case Op::v_mad_u64_u32:
    case Op::v_mad_i64_i32: {
        const uint32_t* a = src32(0);
        const uint32_t* b = src32(1);
        const uint64_t* c = src64(2, false);
        LANES {
            res64[l] = in.op == Op::v_mad_u64_u32 ? uint64_t(a[l]) * b[l] + c[l]
                                                  : uint64_t(int64_t(I(a[l])) * I(b[l])) + c[l];
        }
        wrMaskSgpr(in.sdst, 0); // carry-out: overflow of the 64-bit add
        uint64_t carry = 0;
        LANES {
            if (in.op == Op::v_mad_u64_u32) {
                unsigned __int128 f = (unsigned __int128)(uint64_t(a[l]) * b[l]) + c[l];
                if (f >> 64)
                    carry |= 1ull << l;
            }
        }
        wrMaskSgpr(in.sdst, carry & execMask);
        wr64(res64);
        return true;
    }
    default:
        return false;
    }
}

/// Bitwise operations: logic, shifts (64-bit ones too), bit fields, counts, permutes, byte sums.
DUET_GCN_AVX2_CLONE bool WaveExec::valuBits() {
    switch (in.op) {
    case Op::v_not_b32:
        I32_1(~x)
    case Op::v_bfrev_b32:
        I32_1([](U v) {
            U r = 0;
            for (int i = 0; i < 32; ++i)
                r |= ((v >> i) & 1) << (31 - i);
            return r;
        }(x))
    case Op::v_ffbh_u32:
        I32_1(x ? U(std::countl_zero(x)) : ~0u)
    case Op::v_ffbl_b32:
        I32_1(x ? U(std::countr_zero(x)) : ~0u)
    case Op::v_ffbh_i32:
        I32_1((x == 0 || x == ~0u) ? ~0u : U(std::countl_zero(I(x) < 0 ? ~x : x)))
    case Op::v_lshrrev_b32:
        I32_2(y >> (x & 31))
    case Op::v_ashrrev_i32:
        I32_2(U(I(y) >> (x & 31)))
    case Op::v_lshlrev_b32:
        I32_2(y << (x & 31))
    case Op::v_and_b32:
        I32_2(x & y)
    case Op::v_or_b32:
        I32_2(x | y)
    case Op::v_xor_b32:
        I32_2(x ^ y)
    case Op::v_bfe_u32:
        I32_3((z & 31) == 0 ? 0 : (x >> (y & 31)) & (0xffffffffu >> (32 - (z & 31))))
    case Op::v_bfe_i32:
        I32_3((z & 31) == 0 ? 0 : U(I((x >> (y & 31)) << (32 - (z & 31))) >> (32 - (z & 31))))
    case Op::v_bfi_b32:
        I32_3((x & y) | (~x & z))
    case Op::v_bfm_b32:
        I32_2(((1u << (x & 31)) - 1) << (y & 31))
    case Op::v_alignbit_b32:
        I32_3(U(((uint64_t(x) << 32) | y) >> (z & 31)))
    case Op::v_alignbyte_b32:
        I32_3(U(((uint64_t(x) << 32) | y) >> (8 * (z & 3))))
    case Op::v_bcnt_u32_b32:
        I32_2(U(std::popcount(x)) + y)
    case Op::v_mbcnt_lo_u32_b32: {
        const uint32_t* a = src32(0);
        const uint32_t* b = src32(1);
        LANES res[l] = U(std::popcount(a[l] & U((1ull << std::min(l, 32)) - 1))) + b[l];
        wr32(res);
        return true;
    }
    case Op::v_mbcnt_hi_u32_b32: {
        const uint32_t* a = src32(0);
        const uint32_t* b = src32(1);
        LANES res[l] = U(std::popcount(a[l] & U(l <= 32 ? 0 : (1ull << (l - 32)) - 1))) + b[l];
        wr32(res);
        return true;
    }
    case Op::v_perm_b32: {
        const uint32_t* a = src32(0);
        const uint32_t* b = src32(1);
        const uint32_t* c = src32(2);
        LANES {
            uint64_t bytes = (uint64_t(a[l]) << 32) | b[l];
            U r = 0;
            for (int i = 0; i < 4; ++i) {
                unsigned sel = (c[l] >> (8 * i)) & 0xff, out;
                if (sel <= 7)
                    out = (bytes >> (8 * sel)) & 0xff;
                else if (sel <= 11) {
                    unsigned byteIdx = 2 * (sel - 8) + 1; // sign of the 16-bit halves
                    out = ((bytes >> (8 * byteIdx)) & 0x80) ? 0xff : 0;
                } else
                    out = sel == 12 ? 0 : 0xff;
                r |= out << (8 * i);
            }
            res[l] = r;
        }
        wr32(res);
        return true;
    }
    case Op::v_xad_u32:
        I32_3((x ^ y) + z)
    case Op::v_sad_u8:
        I32_3([](U a, U b, U c) {
            for (int i = 0; i < 4; ++i) {
                int d = int((a >> 8 * i) & 255) - int((b >> 8 * i) & 255);
                c += U(d < 0 ? -d : d);
            }
            return c;
        }(x, y, z))
    case Op::v_sad_hi_u8:
        I32_3([](U a, U b, U c) {
            U s = 0;
            for (int i = 0; i < 4; ++i) {
                int d = int((a >> 8 * i) & 255) - int((b >> 8 * i) & 255);
                s += U(d < 0 ? -d : d);
            }
            return (s << 16) + c;
        }(x, y, z))
    case Op::v_sad_u16:
        I32_3([](U a, U b, U c) {
            for (int i = 0; i < 2; ++i) {
                int d = int((a >> 16 * i) & 0xffff) - int((b >> 16 * i) & 0xffff);
                c += U(d < 0 ? -d : d);
            }
            return c;
        }(x, y, z))
    case Op::v_msad_u8:
        I32_3([](U a, U b, U c) {
            for (int i = 0; i < 4; ++i) {
                int bb = int((b >> 8 * i) & 255);
                if (!bb)
                    continue;
                int d = int((a >> 8 * i) & 255) - bb;
                c += U(d < 0 ? -d : d);
            }
            return c;
        }(x, y, z))
    case Op::v_lerp_u8:
        I32_3([](U a, U b, U c) {
            U r = 0;
            for (int i = 0; i < 4; ++i) {
                U s = ((a >> 8 * i) & 255) + ((b >> 8 * i) & 255) + ((c >> 8 * i) & 1);
                r |= ((s >> 1) & 255) << 8 * i;
            }
            return r;
        }(x, y, z))
    case Op::v_lshl_add_u32:
        I32_3((x << (y & 31)) + z)
    case Op::v_add_lshl_u32:
        I32_3((x + y) << (z & 31))
    case Op::v_add3_u32:
        I32_3(x + y + z)
    case Op::v_lshl_or_b32:
        I32_3((x << (y & 31)) | z)
    case Op::v_and_or_b32:
        I32_3((x & y) | z)
    case Op::v_or3_b32:
        I32_3(x | y | z)
    case Op::v_lshlrev_b64: {
        const uint32_t* a = src32(0);
        const uint64_t* b = src64(1, false);
        LANES res64[l] = b[l] << (a[l] & 63);
        wr64(res64);
        return true;
    }
    case Op::v_lshrrev_b64: {
        const uint32_t* a = src32(0);
        const uint64_t* b = src64(1, false);
        LANES res64[l] = b[l] >> (a[l] & 63);
        wr64(res64);
        return true;
    }
    case Op::v_ashrrev_i64: {
        const uint32_t* a = src32(0);
        const uint64_t* b = src64(1, false);
        LANES res64[l] = uint64_t(int64_t(b[l]) >> (a[l] & 63));
        wr64(res64);
        return true;
    }
    default:
        return false;
    }
}

/// Moves, lane reads and writes, and v_cndmask.
DUET_GCN_AVX2_CLONE bool WaveExec::valuMove() {
    switch (in.op) {
    case Op::v_nop:
    case Op::v_clrexcp:
        return true; // no exception state is modelled
    case Op::v_mov_b32:
        I32_1(x)
    case Op::v_swap_b32: {
        checkVgpr(in.vdst);
        checkVgpr(in.src[0] - opnd::kVgpr);
        uint32_t* a = w.vrow(in.vdst);
        uint32_t* b = w.vrow(in.src[0] - opnd::kVgpr);
        LANES if ((execMask >> l) & 1) std::swap(a[l], b[l]);
        return true;
    }
    case Op::v_readfirstlane_b32: {
        const uint32_t* a = src32(0);
        int lane = execMask ? std::countr_zero(execMask) : 0;
        wrSgpr(in.vdst, a[lane]);
        return true;
    }
    case Op::v_readlane_b32: {
        const uint32_t* a = src32(0);
        wrSgpr(in.vdst, a[sread(in.src[1]) & 63]);
        return true;
    }
    case Op::v_writelane_b32: {
        checkVgpr(in.vdst);
        w.vrow(in.vdst)[sread(in.src[1]) & 63] = sread(in.src[0]);
        return true;
    }
    case Op::v_cndmask_b32: {
        const uint32_t* a = src32(0);
        const uint32_t* b = src32(1);
        uint64_t m = sread64(in.src[2], false);
        if (in.abs || in.neg) { // float modifiers on VOP3 cndmask
            const float* fa = f32(0);
            const float* fb = f32(1);
            float* r = reinterpret_cast<float*>(res);
            LANES r[l] = ((m >> l) & 1) ? fb[l] : fa[l];
            wr32(res);
            return true;
        }
        LANES res[l] = ((m >> l) & 1) ? b[l] : a[l];
        wr32(res);
        return true;
    }
    default:
        return false;
    }
}

/// Conversions between float and integer formats, packing and normalising.
DUET_GCN_AVX2_CLONE bool WaveExec::valuConvert() {
    switch (in.op) {
    case Op::v_cvt_f32_i32:
        F32_FROM(float(I(x)))
    case Op::v_cvt_f32_u32:
        F32_FROM(float(x))
    case Op::v_cvt_f32_ubyte0:
        F32_FROM(float(x & 0xff))
    case Op::v_cvt_f32_ubyte1:
        F32_FROM(float((x >> 8) & 0xff))
    case Op::v_cvt_f32_ubyte2:
        F32_FROM(float((x >> 16) & 0xff))
    case Op::v_cvt_f32_ubyte3:
        F32_FROM(float(x >> 24))
    case Op::v_cvt_u32_f32:
        CVT_F32_TO(cvtSat<U>(x))
    case Op::v_cvt_i32_f32:
        CVT_F32_TO(U(cvtSat<I>(x)))
    case Op::v_cvt_rpi_i32_f32:
        CVT_F32_TO(U(cvtSat<I>(std::floor(x + 0.5f))))
    case Op::v_cvt_flr_i32_f32:
        CVT_F32_TO(U(cvtSat<I>(std::floor(x))))
    case Op::v_cvt_f16_f32:
        CVT_F32_TO(U(bc<uint16_t>(f16(x)))) // round to nearest even
    case Op::v_cvt_f32_f16:
        LANE_OP1(f16, h16, float, res, float, wrF32, x)
    case Op::v_cvt_pkrtz_f16_f32: {
        const float* a = f32(0);
        const float* b = f32(1);
        auto rtz = [](float x) {
            f16 h = f16(x);
            if (std::isfinite(x) && std::fabs(float(h)) > std::fabs(x))
                h = bc<f16>(uint16_t(bc<uint16_t>(h) - 1)); // one step toward zero
            return bc<uint16_t>(h);
        };
        LANES res[l] = rtz(a[l]) | U(rtz(b[l])) << 16;
        wr32(res);
        return true;
    }
    case Op::v_cvt_pknorm_i16_f32: {
        const float* a = f32(0);
        const float* b = f32(1);
        auto n = [](float x) {
            return U(uint16_t(int16_t(cvtSat<int16_t>(
                std::nearbyint(std::clamp(std::isnan(x) ? 0.f : x, -1.f, 1.f) * 32767.f)))));
        };
        LANES res[l] = n(a[l]) | n(b[l]) << 16;
        wr32(res);
        return true;
    }
    case Op::v_cvt_pknorm_u16_f32: {
        const float* a = f32(0);
        const float* b = f32(1);
        auto n = [](float x) {
            return U(
                uint16_t(std::nearbyint(std::clamp(std::isnan(x) ? 0.f : x, 0.f, 1.f) * 65535.f)));
        };
        LANES res[l] = n(a[l]) | n(b[l]) << 16;
        wr32(res);
        return true;
    }
    case Op::v_cvt_pk_u16_u32:
        I32_2(std::min(x, 0xffffu) | std::min(y, 0xffffu) << 16)
    case Op::v_cvt_pk_i16_i32:
        I32_2(U(uint16_t(std::clamp(I(x), -32768, 32767))) |
              U(uint16_t(std::clamp(I(y), -32768, 32767))) << 16)
    case Op::v_pack_b32_f16: {
        const uint32_t* a = src16(0);
        const uint32_t* b = src16(1);
        LANES res[l] = ((a[l] & 0xffff) ^ (negOf(0) ? 0x8000u : 0u)) |
                       ((b[l] & 0xffff) ^ (negOf(1) ? 0x8000u : 0u)) << 16;
        wr32(res);
        return true;
    }
    case Op::v_cvt_f64_f32:
        LANE_OP1(float, f32, double, res64, , wrF64, x)
    case Op::v_cvt_f32_f64:
        LANE_OP1(double, f64, float, res, float, wrF32, x)
    case Op::v_cvt_f64_i32:
        LANE_OP1(uint32_t, src32, double, res64, , wrF64, I(x))
    case Op::v_cvt_f64_u32:
        LANE_OP1(uint32_t, src32, double, res64, , wrF64, x)
    case Op::v_cvt_i32_f64: {
        const double* a = f64(0);
        LANES res[l] = U(cvtSat<I>(a[l]));
        wr32(res);
        return true;
    }
    case Op::v_cvt_u32_f64: {
        const double* a = f64(0);
        LANES res[l] = cvtSat<U>(a[l]);
        wr32(res);
        return true;
    }
    case Op::v_cvt_f16_u16:
        LANE_OP1(uint32_t, src16, f16, res64, f16, wrF16, float(uint16_t(x)))
    case Op::v_cvt_f16_i16:
        LANE_OP1(uint32_t, src16, f16, res64, f16, wrF16, float(int16_t(x)))
    case Op::v_cvt_u16_f16: {
        const f16* a = h16(0);
        LANES res[l] = cvtSat<uint16_t>(float(a[l]));
        wr16(res);
        return true;
    }
    case Op::v_cvt_i16_f16: {
        const f16* a = h16(0);
        LANES res[l] = uint16_t(cvtSat<int16_t>(float(a[l])));
        wr16(res);
        return true;
    }
    case Op::v_cvt_pk_u8_f32: {
        const float* a = f32(0);
        const uint32_t* b = src32(1);
        const uint32_t* c = src32(2);
        LANES {
            unsigned sh = 8 * (b[l] & 3);
            U byte = U(cvtSat<uint8_t>(std::nearbyint(a[l])));
            res[l] = (c[l] & ~(255u << sh)) | byte << sh;
        }
        wr32(res);
        return true;
    }
    case Op::v_cvt_off_f32_i4:
        F32_FROM(float(int32_t(x << 28) >> 28) / 16.0f)
    case Op::v_cvt_norm_i16_f16: {
        const f16* a = h16(0);
        LANES res[l] = uint16_t(int16_t(std::nearbyint(
            std::clamp(std::isnan(float(a[l])) ? 0.f : float(a[l]), -1.f, 1.f) * 32767.f)));
        wr16(res);
        return true;
    }
    case Op::v_cvt_norm_u16_f16: {
        const f16* a = h16(0);
        LANES res[l] = uint16_t(std::nearbyint(
            std::clamp(std::isnan(float(a[l])) ? 0.f : float(a[l]), 0.f, 1.f) * 65535.f));
        wr16(res);
        return true;
    }
    case Op::v_sat_pk_u8_i16:
        I32_1(U(std::clamp(int(int16_t(x)), 0, 255)) | U(std::clamp(int(int16_t(x >> 16)), 0, 255))
                                                           << 8)
    case Op::v_cvt_pknorm_i16_f16:
    case Op::v_cvt_pknorm_u16_f16: {
        const f16* a = h16(0);
        const f16* b = h16(1);
        bool sgn = in.op == Op::v_cvt_pknorm_i16_f16;
        auto n = [&](f16 h) {
            float x = std::isnan(float(h)) ? 0.f : float(h);
            return sgn ? U(uint16_t(int16_t(std::nearbyint(std::clamp(x, -1.f, 1.f) * 32767.f))))
                       : U(uint16_t(std::nearbyint(std::clamp(x, 0.f, 1.f) * 65535.f)));
        };
        LANES res[l] = n(a[l]) | n(b[l]) << 16;
        wr32(res);
        return true;
    }
    default:
        return false;
    }
}

/// f64 arithmetic, rounding, the fdiv helpers and v_trig_preop.
DUET_GCN_AVX2_CLONE bool WaveExec::valuF64() {
    switch (in.op) {
    case Op::v_add_f64:
        F64_2(x + y)
    case Op::v_mul_f64:
        F64_2(x * y)
    case Op::v_min_f64:
        F64_2(fminIeee(x, y))
    case Op::v_max_f64:
        F64_2(fmaxIeee(x, y))
    case Op::v_fma_f64: {
        const double* a = f64(0);
        const double* b = f64(1);
        const double* c = f64(2);
        double* r = reinterpret_cast<double*>(res64);
        fmaLanes(r, a, b, c);
        wrF64(r);
        return true;
    }
    case Op::v_rcp_f64:
        F64_1(1.0 / x)
    case Op::v_rsq_f64:
        F64_1(1.0 / std::sqrt(x))
    case Op::v_sqrt_f64:
        F64_1(std::sqrt(x))
    case Op::v_trunc_f64:
        F64_1(std::trunc(x))
    case Op::v_ceil_f64:
        F64_1(std::ceil(x))
    case Op::v_floor_f64:
        F64_1(std::floor(x))
    case Op::v_rndne_f64:
        F64_1(std::nearbyint(x))
    case Op::v_fract_f64:
        F64_1(fractOf(x))
    case Op::v_frexp_mant_f64:
        F64_1(frexpMant(x))
    case Op::v_frexp_exp_i32_f64: {
        const double* a = f64(0);
        LANES res[l] = U(frexpExp(a[l]));
        wr32(res);
        return true;
    }
    case Op::v_ldexp_f64: {
        const double* a = f64(0);
        const uint32_t* b = src32(1);
        double* r = reinterpret_cast<double*>(res64);
        LANES r[l] = std::ldexp(a[l], std::clamp(I(b[l]), -5000, 5000));
        wrF64(r);
        return true;
    }
    case Op::v_div_scale_f64: {
        F32_DIV_SCALE(double, 768, 1022, 128, 53, 53)
    }
    case Op::v_div_fmas_f64: {
        const uint64_t vccIn = w.vcc();
        F64_3((divFmas<double, long double>(x, y, z, (vccIn >> l) & 1, 128)))
    }
    case Op::v_div_fixup_f64:
        F64_3(divFixup(x, y, z, std::numeric_limits<double>::quiet_NaN()))
    case Op::v_trig_preop_f64: {
        const double* a = f64(0);
        const uint32_t* b = src32(1);
        double* r = reinterpret_cast<double*>(res64);
        // 53 bits of 2/pi from fraction bit `shift` on (segment S1[4:0], pushed further for
        // inputs with biased exponent > 1077), scaled to their place; inputs with biased
        // exponent >= 1968 get 2^128 more to stay clear of denormals.
        LANES {
            int biased = int((bc<uint64_t>(a[l]) >> 52) & 0x7ff);
            int shift = int(b[l] & 31) * 53;
            if (biased > 1077)
                shift += biased - 1077;
            uint64_t bits = twoOverPiBits(shift);
            int scale = -53 - shift + (biased >= 1968 ? 128 : 0);
            r[l] = std::ldexp(double(bits), scale);
        }
        wrF64(r);
        return true;
    }
    default:
        return false;
    }
}

/// f16 arithmetic, multiply-adds, transcendentals and rounding.
DUET_GCN_AVX2_CLONE bool WaveExec::valuF16() {
    switch (in.op) {
    case Op::v_add_f16:
        F16_2(float(x) + float(y))
    case Op::v_sub_f16:
        F16_2(float(x) - float(y))
    case Op::v_subrev_f16:
        F16_2(float(y) - float(x))
    case Op::v_mul_f16:
        F16_2(float(x) * float(y))
    case Op::v_max_f16:
        F16_2(fmaxIeee(float(x), float(y)))
    case Op::v_min_f16:
        F16_2(fminIeee(float(x), float(y)))
    case Op::v_mac_f16:
    case Op::v_mad_f16:
        F16_3(f16(float(x) * float(y)) + z)
    case Op::v_fma_f16:
        F16_3(std::fma(double(x), double(y), double(z)))
    case Op::v_min3_f16:
        F16_3(fminIeee(fminIeee(float(x), float(y)), float(z)))
    case Op::v_max3_f16:
        F16_3(fmaxIeee(fmaxIeee(float(x), float(y)), float(z)))
    case Op::v_med3_f16:
        F16_3(fmed3(float(x), float(y), float(z)))
    case Op::v_madmk_f16: {
        const f16* a = h16(0);
        const f16* b = h16(1);
        f16 k = bc<f16>(uint16_t(in.literal));
        f16* r = reinterpret_cast<f16*>(res64);
        LANES r[l] = f16(a[l] * k) + b[l];
        wrF16(r);
        return true;
    }
    case Op::v_madak_f16: {
        const f16* a = h16(0);
        const f16* b = h16(1);
        f16 k = bc<f16>(uint16_t(in.literal));
        f16* r = reinterpret_cast<f16*>(res64);
        LANES r[l] = f16(a[l] * b[l]) + k;
        wrF16(r);
        return true;
    }
    case Op::v_ldexp_f16: {
        const f16* a = h16(0);
        const uint32_t* b = src16(1);
        f16* r = reinterpret_cast<f16*>(res64);
        LANES r[l] = f16(std::ldexp(float(a[l]), int16_t(b[l])));
        wrF16(r);
        return true;
    }
    case Op::v_rcp_f16:
        F16_1(1.0f / float(x))
    case Op::v_sqrt_f16:
        F16_1(std::sqrt(float(x)))
    case Op::v_rsq_f16:
        F16_1(1.0f / std::sqrt(float(x)))
    case Op::v_log_f16:
        F16_1(std::log2(float(x)))
    case Op::v_exp_f16:
        F16_1(std::exp2(float(x)))
    case Op::v_sin_f16:
        F16_1(std::sin(float(x) * 6.2831853f))
    case Op::v_cos_f16:
        F16_1(std::cos(float(x) * 6.2831853f))
    case Op::v_floor_f16:
        F16_1(std::floor(float(x)))
    case Op::v_ceil_f16:
        F16_1(std::ceil(float(x)))
    case Op::v_trunc_f16:
        F16_1(std::trunc(float(x)))
    case Op::v_rndne_f16:
        F16_1(std::nearbyint(float(x)))
    case Op::v_fract_f16:
        F16_1(fractOf(float(x)))
    case Op::v_frexp_mant_f16:
        F16_1(frexpMant(float(x)))
    case Op::v_frexp_exp_i16_f16: {
        const f16* a = h16(0);
        LANES res[l] = uint16_t(frexpExp(float(a[l])));
        wr16(res);
        return true;
    }
    case Op::v_div_fixup_f16: {
        const f16* a = h16(0);
        const f16* b = h16(1);
        const f16* c = h16(2);
        f16* r = reinterpret_cast<f16*>(res64);
        LANES {
            float q = a[l], den = b[l], num = c[l];
            float sign = std::signbit(den) != std::signbit(num) ? -1.f : 1.f;
            float v = std::isnan(den)                                                    ? den
                      : std::isnan(num)                                                  ? num
                      : ((den == 0 && num == 0) || (std::isinf(den) && std::isinf(num))) ? NAN
                      : (den == 0 || std::isinf(num)) ? sign * INFINITY
                      : (std::isinf(den) || num == 0) ? sign * 0.f
                                                      : sign * std::fabs(q);
            r[l] = f16(v);
        }
        wrF16(r);
        return true;
    }
    default:
        return false;
    }
}

/// 16-bit integer arithmetic (and the 16 x 16 + 32 multiply-adds).
DUET_GCN_AVX2_CLONE bool WaveExec::valuInt16() {
    // Integer ops that honour clamp saturate; the rest must not carry it. The clamp bit is
    // VOP3's or, for SDWA, the SDWA word's (LLVM emits v_sub_u16_sdwa ... clamp for sub_sat).
    const bool clampBit = in.clamp || sdwaClamp();
    switch (in.op) {
    case Op::v_add_u16:
        I16_2(clampBit ? std::min(uint32_t(x) + y, 0xffffu) : x + y)
    case Op::v_sub_u16:
        I16_2(clampBit ? (x < y ? 0 : x - y) : x - y)
    case Op::v_subrev_u16:
        I16_2(clampBit ? (y < x ? 0 : y - x) : y - x)
    case Op::v_mul_lo_u16:
        I16_2(x * y)
    case Op::v_lshlrev_b16:
        I16_2(y << (x & 15))
    case Op::v_lshrrev_b16:
        I16_2(y >> (x & 15))
    case Op::v_ashrrev_i16:
        I16_2(int16_t(y) >> (x & 15))
    case Op::v_max_u16:
        I16_2(std::max(x, y))
    case Op::v_min_u16:
        I16_2(std::min(x, y))
    case Op::v_max_i16:
        I16_2(std::max(int16_t(x), int16_t(y)))
    case Op::v_min_i16:
        I16_2(std::min(int16_t(x), int16_t(y)))
    case Op::v_add_i16:
        I16_2(clampBit ? std::clamp(int(int16_t(x)) + int16_t(y), -32768, 32767) : x + y)
    case Op::v_sub_i16:
        I16_2(clampBit ? std::clamp(int(int16_t(x)) - int16_t(y), -32768, 32767) : x - y)
    case Op::v_mad_u16:
        I16_3(x * y + z)
    case Op::v_mad_i16:
        I16_3(int16_t(x) * int16_t(y) + int16_t(z))
    case Op::v_min3_i16:
        I16_3(std::min({int16_t(x), int16_t(y), int16_t(z)}))
    case Op::v_max3_i16:
        I16_3(std::max({int16_t(x), int16_t(y), int16_t(z)}))
    case Op::v_med3_i16:
        I16_3(std::max(std::min(int16_t(x), int16_t(y)),
                       std::min(std::max(int16_t(x), int16_t(y)), int16_t(z))))
    case Op::v_min3_u16:
        I16_3(std::min({x, y, z}))
    case Op::v_max3_u16:
        I16_3(std::max({x, y, z}))
    case Op::v_med3_u16:
        I16_3(std::max(std::min(x, y), std::min(std::max(x, y), z)))
    case Op::v_mad_u32_u16: {
        const uint32_t* a = src16(0);
        const uint32_t* b = src16(1);
        const uint32_t* c = src32(2);
        LANES res[l] = a[l] * b[l] + c[l];
        wr32(res);
        return true;
    }
    case Op::v_mad_i32_i16: {
        const uint32_t* a = src16(0);
        const uint32_t* b = src16(1);
        const uint32_t* c = src32(2);
        LANES res[l] = U(int16_t(a[l]) * int16_t(b[l])) + c[l];
        wr32(res);
        return true;
    }
    default:
        return false;
    }
}

/// v_mad_mix*: op_sel_hi[i] = 1 makes operand i f16 (the half op_sel picks), else f32; the fma
/// is f32, written as f32 or to one f16 half.
__attribute__((always_inline)) inline bool WaveExec::valuMadMix(const uint32_t* const* s) {
    float* r = reinterpret_cast<float*>(res);
    LANES {
        float v[3];
        for (unsigned i = 0; i < 3; ++i) {
            uint32_t x = s[i][l];
            bool isF16 = (in.opselHi >> i) & 1;
            v[i] =
                isF16 ? float(bc<f16>(uint16_t((in.opsel >> i) & 1 ? x >> 16 : x))) : bc<float>(x);
            if ((in.negHi >> i) & 1)
                v[i] = std::fabs(v[i]);
            if ((in.neg >> i) & 1)
                v[i] = -v[i];
        }
        r[l] = std::fma(v[0], v[1], v[2]);
        if (in.clamp)
            r[l] = std::clamp(r[l], 0.0f, 1.0f);
    }
    if (in.op == Op::v_mad_mix_f32) {
        wr32(res);
        return true;
    }
    checkVgpr(in.vdst);
    uint32_t* d = w.vrow(in.vdst);
    LANES if ((execMask >> l) & 1) {
        uint32_t h = bc<uint16_t>(f16(r[l]));
        d[l] = in.op == Op::v_mad_mixlo_f16 ? (d[l] & 0xffff0000u) | h : (d[l] & 0xffff) | h << 16;
    }
    return true;
}

/// VOP3P: the packed 16-bit operations, each half from the operand halves op_sel (low result) or
/// op_sel_hi (high) select, and the mixed-precision mads.
DUET_GCN_AVX2_CLONE bool WaveExec::valuPacked() {
    // Packed: each half takes its operand half from op_sel (low result) / op_sel_hi (high).
    unsigned n =
        (in.op == Op::v_pk_mad_i16 || in.op == Op::v_pk_mad_u16 || in.op == Op::v_pk_fma_f16 ||
         in.op == Op::v_mad_mix_f32 || in.op == Op::v_mad_mixlo_f16 || in.op == Op::v_mad_mixhi_f16)
            ? 3
            : 2;
    const uint32_t* s[3];
    for (unsigned i = 0; i < n; ++i) {
        unsigned code = in.src[i];
        if (code < opnd::kVgpr && code >= 240 && code <= 248) {
            // Inline float constants are f16 for packed f16 ops (low half only).
            std::fill_n(buf[i], 64, uint32_t(f16Const(code)));
            s[i] = buf[i];
        } else {
            uint32_t* tmp = reinterpret_cast<uint32_t*>(buf64[i]);
            const uint32_t* p = src32(i);
            std::copy_n(p, 64, tmp);
            s[i] = tmp;
        }
    }
    if (in.op == Op::v_mad_mix_f32 || in.op == Op::v_mad_mixlo_f16 || in.op == Op::v_mad_mixhi_f16)
        return valuMadMix(s);
    LANES {
        uint32_t out = 0;
        for (int half = 0; half < 2; ++half) {
            uint16_t x[3] = {0, 0, 0};
            uint8_t sel = half ? in.opselHi : in.opsel;
            uint8_t ng = half ? in.negHi : in.neg;
            for (unsigned i = 0; i < n; ++i)
                x[i] = uint16_t((sel >> i) & 1 ? s[i][l] >> 16 : s[i][l]);
            out |= uint32_t(packedHalf(in.op, x, ng, in.clamp)) << (16 * half);
        }
        res[l] = out;
    }
    wr32(res);
    return true;
}

// A VALU instruction's first execution (per host thread and code address): finds the family
// that implements its operation, keeps it in Inst::valuFamily for Executor::runVector, and runs
// it. A family that does not implement the operation returns false before doing anything.
bool WaveExec::valu() {
    if (in.op == Op::v_cmp || in.op == Op::v_cmp_class) {
        in.valuFamily = kValuCmp;
        return vcmp();
    }
    if (in.enc == Enc::Vop3p) { // only VOP3P encodes the packed operations
        in.valuFamily = kValuPacked;
        return valuPacked();
    }
    const uint8_t family = valuF32()       ? kValuF32
                           : valuInt32()   ? kValuInt32
                           : valuBits()    ? kValuBits
                           : valuMove()    ? kValuMove
                           : valuConvert() ? kValuConvert
                           : valuF64()     ? kValuF64
                           : valuF16()     ? kValuF16
                           : valuInt16()   ? kValuInt16
                                           : kValuUnknown;
    in.valuFamily = family;
    return family != kValuUnknown;
}

#undef LANE_OP1
#undef LANE_OP2
#undef LANE_OP3
#undef F32_1
#undef F32_2
#undef F32_3
#undef F64_1
#undef F64_2
#undef F64_3
#undef F16_1
#undef F16_2
#undef F16_3
#undef I32_1
#undef I32_2
#undef I32_3
#undef I16_2
#undef I16_3
#undef CVT_F32_TO
#undef F32_FROM
#undef F32_DIV_SCALE

} // namespace duet::gcn::model
