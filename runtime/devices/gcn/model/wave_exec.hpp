// The interpreter's shared internals: WaveExec (operands, writeback) and the lane-loop helpers.
#pragma once

#include "wave.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace duet::gcn::model {

using f16 = _Float16;

/// For the small helpers of the lane loops, which both clones (default, AVX2) of every family
/// must inline: GCC does not inline ordinary functions early into an always_inline body (the
/// parts of ds, vmem and salu are), and the large clones use up the inliner's growth budget;
/// without the attribute such helpers can stay calls.
#define DUET_GCN_ALWAYS_INLINE __attribute__((always_inline)) inline

/// An AVX2 clone beside the default one, picked when the library is loaded (an ifunc). Not in
/// ThreadSanitizer builds: GCC instruments the clone resolver, which the dynamic linker runs
/// while relocating the library, before libtsan is initialised, so a program linked directly
/// against the runtime (the fuzz seed replays) crashed before main. The default clone runs there.
#if defined(__SANITIZE_THREAD__)
#define DUET_GCN_AVX2_CLONE
#else
#define DUET_GCN_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#endif

template <class To, class From> To bc(From f) {
    return std::bit_cast<To>(f);
}

inline std::string hex(uint64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

// ---- Float helpers -----------------------------------------------------------------------

// Branch-free so that lane loops vectorise: a zero exponent field keeps only the sign.
DUET_GCN_ALWAYS_INLINE float flushF32(float x) {
    uint32_t b = bc<uint32_t>(x);
    return bc<float>((b & 0x7f800000u) ? b : (b & 0x80000000u));
}
DUET_GCN_ALWAYS_INLINE double flushF64(double x) {
    uint64_t b = bc<uint64_t>(x);
    return bc<double>((b & 0x7ff0000000000000ull) ? b : (b & 0x8000000000000000ull));
}
DUET_GCN_ALWAYS_INLINE f16 flushF16(f16 x) {
    uint16_t b = bc<uint16_t>(x);
    return (b & 0x7c00) == 0 ? bc<f16>(uint16_t(b & 0x8000)) : x;
}

/// Signalling NaN (quiet bit clear).
template <class T> DUET_GCN_ALWAYS_INLINE bool isSnan(T x) {
    if (!std::isnan(x))
        return false;
    if constexpr (sizeof(T) == 8)
        return !((std::bit_cast<uint64_t>(x) >> 51) & 1);
    else if constexpr (sizeof(T) == 4)
        return !((std::bit_cast<uint32_t>(x) >> 22) & 1);
    else
        return !((std::bit_cast<uint16_t>(x) >> 9) & 1);
}

/// IEEE-mode min/max (IEEE 754-2008 minNum/maxNum, as the ISA's v_min/v_max with MODE.IEEE):
/// a signalling NaN operand gives a quiet NaN; a quiet NaN operand yields the other operand;
/// -0 < +0.
template <class T> DUET_GCN_ALWAYS_INLINE T fminIeee(T a, T b) {
    if (isSnan(a) || isSnan(b))
        return std::numeric_limits<T>::quiet_NaN();
    if (std::isnan(a))
        return std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : b;
    if (std::isnan(b))
        return a;
    if (a == b)
        return std::signbit(a) ? a : b;
    return a < b ? a : b;
}
template <class T> DUET_GCN_ALWAYS_INLINE T fmaxIeee(T a, T b) {
    if (isSnan(a) || isSnan(b))
        return std::numeric_limits<T>::quiet_NaN();
    if (std::isnan(a))
        return std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : b;
    if (std::isnan(b))
        return a;
    if (a == b)
        return std::signbit(a) ? b : a;
    return a > b ? a : b;
}

/// EXEC-style mask from 64 lane bytes that are 0 or 1.
DUET_GCN_ALWAYS_INLINE uint64_t packLaneBits(const uint8_t* c) {
    uint64_t m = 0;
#ifdef __SSE2__
    for (int i = 0; i < 4; ++i) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 16 * i));
        m |= uint64_t(uint16_t(_mm_movemask_epi8(_mm_slli_epi16(v, 7)))) << (16 * i);
    }
#else
    for (int l = 0; l < 64; ++l)
        m |= uint64_t(c[l]) << l;
#endif
    return m;
}

/// The lane loop of the VALU files: every lane, active or not (writeback masks with EXEC).
#define LANES for (int l = 0; l < 64; ++l)

/// One instruction on one wave: operand fetch with modifiers, the operation, writeback.
struct WaveExec {
    Executor& ex;
    Wave& w;
    const Inst& in;
    uint64_t execMask;
    std::string err;
    // The scratch arrays below stay uninitialised: every use writes before it reads.
    WaveExec(Executor& e, Wave& wave, const Inst& inst, uint64_t mask)
        : ex(e), w(wave), in(inst), execMask(mask) {}

    alignas(64) uint32_t buf[3][64];
    alignas(64) uint64_t buf64[3][64];
    alignas(64) uint32_t res[64];
    alignas(64) uint32_t sdwaBuf[2][64];
    alignas(64) uint32_t dppBuf[64];
    uint64_t dppSkip = 0; ///< lanes a DPP instruction leaves unwritten
    alignas(64) uint64_t res64[64];

    // Scalar operand values.
    __attribute__((always_inline)) uint32_t sread(unsigned code) {
        if (code < 128) [[likely]] {
            if (code < 102 && code >= ex.m_ctx.sgprs) [[unlikely]]
                sgprError(code);
            return w.s[code];
        }
        return sreadConst(code);
    }
    uint32_t sreadConst(unsigned code) {
        if (code <= 192)
            return code - 128;
        if (code <= 208)
            return static_cast<uint32_t>(-static_cast<int32_t>(code - 192));
        switch (code) {
        case 240:
            return bc<uint32_t>(0.5f);
        case 241:
            return bc<uint32_t>(-0.5f);
        case 242:
            return bc<uint32_t>(1.0f);
        case 243:
            return bc<uint32_t>(-1.0f);
        case 244:
            return bc<uint32_t>(2.0f);
        case 245:
            return bc<uint32_t>(-2.0f);
        case 246:
            return bc<uint32_t>(4.0f);
        case 247:
            return bc<uint32_t>(-4.0f);
        case 248:
            return 0x3e22f983; // 1/(2*pi)
        case opnd::kSharedBase:
            return uint32_t(kSharedAperture);
        case opnd::kPrivateBase:
            return uint32_t(kPrivateAperture);
        case opnd::kSharedLimit:
        case opnd::kPrivateLimit:
            return 0xffffffff;
        case opnd::kVccz:
            return w.vcc() == 0;
        case opnd::kExecz:
            return w.exec() == 0;
        case opnd::kScc:
            return w.scc;
        case opnd::kLiteral:
            return in.literal;
        default:
            if (err.empty())
                err = "invalid scalar operand " + std::to_string(code);
            return 0;
        }
    }
    /// 64-bit scalar operand: register pairs, sign-extended integer constants, f64 float
    /// constants when `fp`, and a 32-bit literal (high half for f64, zero-extended otherwise).
    uint64_t sread64(unsigned code, bool fp) {
        if (code < 128)
            return uint64_t(sread(code)) | uint64_t(sread(code + 1)) << 32;
        if (code <= 208)
            return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(sread(code))));
        if (code >= 240 && code <= 248) {
            if (!fp)
                return sread(code); // integer ops see the f32 bit pattern
            static const double k[] = {
                0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 0.15915494309189535};
            return bc<uint64_t>(k[code - 240]);
        }
        if (code == opnd::kSharedBase)
            return kSharedAperture;
        if (code == opnd::kPrivateBase)
            return kPrivateAperture;
        if (code == opnd::kSharedLimit)
            return kSharedAperture + 0xffffffffull;
        if (code == opnd::kPrivateLimit)
            return kPrivateAperture + 0xffffffffull;
        if (code == opnd::kLiteral)
            return fp ? uint64_t(in.literal) << 32 : in.literal;
        return sread(code);
    }
    uint16_t f16Const(unsigned code) {
        static const float k[] = {0.5f, -0.5f, 1.0f, -1.0f, 2.0f, -2.0f, 4.0f, -4.0f};
        if (code >= 240 && code <= 247)
            return bc<uint16_t>(f16(k[code - 240]));
        if (code == 248)
            return 0x3118;
        return uint16_t(sread(code));
    }

    __attribute__((always_inline)) void checkVgpr(unsigned r, unsigned n = 1) {
        if (r + n > ex.m_ctx.vgprs) [[unlikely]]
            vgprError(r + n - 1);
    }
    __attribute__((noinline, cold)) void vgprError(unsigned r) {
        if (err.empty())
            err = "VGPR v" + std::to_string(r) + " beyond the kernel's " +
                  std::to_string(ex.m_ctx.vgprs) + " VGPRs";
    }
    __attribute__((noinline, cold)) void sgprError(unsigned code) {
        if (err.empty())
            err = "SGPR s" + std::to_string(code) + " beyond the kernel's " +
                  std::to_string(ex.m_ctx.sgprs) + " SGPRs";
    }

    /// Raw 32-bit source i for all lanes (SDWA/DPP applied). Inline for the common case, a
    /// plain VGPR.
    __attribute__((always_inline)) const uint32_t* src32(int i) {
        unsigned code = in.src[i];
        if (code >= opnd::kVgpr && in.ext == 0) [[likely]] {
            checkVgpr(code - opnd::kVgpr);
            return w.vrow(code - opnd::kVgpr);
        }
        return src32Slow(i);
    }
    const uint32_t* src32Slow(int i) {
        unsigned code = in.src[i];
        const uint32_t* p;
        if (code >= opnd::kVgpr) {
            checkVgpr(code - opnd::kVgpr);
            p = w.vrow(code - opnd::kVgpr);
        } else {
            uint32_t x = sread(code);
            std::fill_n(buf[i], 64, x);
            p = buf[i];
        }
        if (in.ext == 2 && i == 0)
            p = dpp(p);
        if (in.ext == 1 && i < 2)
            p = sdwaSel(p, i);
        return p;
    }
    const uint32_t* dpp(const uint32_t* p) {
        unsigned ctrl = (in.extWord >> 8) & 0x1ff;
        bool boundCtrl = (in.extWord >> 19) & 1;
        uint32_t* out = dppBuf;
        for (int l = 0; l < 64; ++l) {
            int srcLane = -1;
            if (ctrl <= 0xff)
                srcLane = (l & ~3) + ((ctrl >> ((l & 3) * 2)) & 3);
            else if (ctrl >= 0x101 && ctrl <= 0x10f) { // row_shl
                int s = l + int(ctrl & 15);
                srcLane = (s >> 4) == (l >> 4) ? s : -1;
            } else if (ctrl >= 0x111 && ctrl <= 0x11f) { // row_shr
                int s = l - int(ctrl & 15);
                srcLane = s >= 0 && (s >> 4) == (l >> 4) ? s : -1;
            } else if (ctrl >= 0x121 && ctrl <= 0x12f) { // row_ror
                srcLane = (l & ~15) + ((l + 16 - int(ctrl & 15)) & 15);
            } else if (ctrl == 0x130)
                srcLane = l + 1 < 64 ? l + 1 : -1; // wave_shl1
            else if (ctrl == 0x134)
                srcLane = (l + 1) & 63; // wave_rol1
            else if (ctrl == 0x138)
                srcLane = l - 1; // wave_shr1
            else if (ctrl == 0x13c)
                srcLane = (l + 63) & 63; // wave_ror1
            else if (ctrl == 0x140)
                srcLane = (l & ~15) + 15 - (l & 15); // row_mirror
            else if (ctrl == 0x141)
                srcLane = (l & ~7) + 7 - (l & 7); // row_half_mirror
            else if (ctrl == 0x142)
                srcLane = (l & 31) >= 16 ? ((l & ~15) - 1) : -2; // bcast15
            else if (ctrl == 0x143)
                srcLane = l >= 32 ? 31 : -2; // bcast31
            else if (err.empty())
                err = "DPP control " + hex(ctrl) + " not modelled";
            if (srcLane == -2) {
                out[l] = p[l];
                continue;
            } // broadcast rows keep their value
            if (srcLane < 0 || !((execMask >> srcLane) & 1)) {
                // Invalid or inactive source: 0 with bound_ctrl, else the lane is not written.
                out[l] = 0;
                if (!boundCtrl)
                    dppSkip |= 1ull << l;
            } else {
                out[l] = p[srcLane];
            }
        }
        return out;
    }
    /// DPP row/bank masks: lanes the instruction leaves untouched.
    uint64_t dppWriteMask() const {
        if (in.ext != 2)
            return ~0ull;
        unsigned rowMask = (in.extWord >> 28) & 15, bankMask = (in.extWord >> 24) & 15;
        uint64_t m = 0;
        for (int l = 0; l < 64; ++l)
            if (((rowMask >> (l >> 4)) & 1) && ((bankMask >> ((l >> 2) & 3)) & 1))
                m |= 1ull << l;
        return m & ~dppSkip;
    }
    const uint32_t* sdwaSel(const uint32_t* p, int i) {
        unsigned shift = i == 0 ? 16 : 24;
        unsigned sel = (in.extWord >> shift) & 7;
        bool sext = (in.extWord >> (shift + 3)) & 1;
        if (sel >= 6)
            return p;
        uint32_t* out = sdwaBuf[i];
        for (int l = 0; l < 64; ++l) {
            uint32_t x = p[l];
            if (sel <= 3) {
                uint32_t b = (x >> (8 * sel)) & 0xff;
                out[l] = sext ? uint32_t(int32_t(int8_t(b))) : b;
            } else {
                uint32_t h = (x >> (16 * (sel - 4))) & 0xffff;
                out[l] = sext ? uint32_t(int32_t(int16_t(h))) : h;
            }
        }
        return out;
    }
    /// SDWA float source modifiers (neg/abs bits of the SDWA word).
    DUET_GCN_ALWAYS_INLINE bool sdwaAbs(int i) const {
        return in.ext == 1 && ((in.extWord >> (i == 0 ? 21 : 29)) & 1);
    }
    DUET_GCN_ALWAYS_INLINE bool sdwaNeg(int i) const {
        return in.ext == 1 && ((in.extWord >> (i == 0 ? 20 : 28)) & 1);
    }
    DUET_GCN_ALWAYS_INLINE bool absOf(int i) const { return ((in.abs >> i) & 1) || sdwaAbs(i); }
    DUET_GCN_ALWAYS_INLINE bool negOf(int i) const { return ((in.neg >> i) & 1) || sdwaNeg(i); }
    DUET_GCN_ALWAYS_INLINE bool sdwa() const { return in.ext == 1; }

    DUET_GCN_ALWAYS_INLINE bool f32DenormIn() const { return (w.mode >> 4) & 1; }
    DUET_GCN_ALWAYS_INLINE bool f32DenormOut() const { return (w.mode >> 5) & 1; }
    DUET_GCN_ALWAYS_INLINE bool f64DenormIn() const { return (w.mode >> 6) & 1; }
    DUET_GCN_ALWAYS_INLINE bool f64DenormOut() const { return (w.mode >> 7) & 1; }

    /// Float source with abs/neg and the MODE register's input denormal flush.
    __attribute__((always_inline)) const float* f32(int i, bool forceFlush = false) {
        if (!forceFlush && in.ext == 0 && !(((in.abs | in.neg) >> i) & 1) && f32DenormIn())
            [[likely]]
            return reinterpret_cast<const float*>(src32(i));
        return f32Slow(i, forceFlush);
    }
    const float* f32Slow(int i, bool forceFlush) {
        const uint32_t* p = src32(i);
        bool a = absOf(i), n = negOf(i), fl = forceFlush || !f32DenormIn();
        if (!a && !n && !fl)
            return reinterpret_cast<const float*>(p);
        float* out = reinterpret_cast<float*>(buf[i] == p ? buf[i] : buf[i]);
        for (int l = 0; l < 64; ++l) {
            float x = bc<float>(p[l]);
            if (a)
                x = std::fabs(x);
            if (n)
                x = -x;
            if (fl)
                x = flushF32(x);
            out[l] = x;
        }
        return out;
    }
    template <class T> const T* fsrc(int i) {
        if constexpr (sizeof(T) == 4)
            return f32(i);
        else
            return f64(i);
    }
    const uint64_t* src64(int i, bool fp) {
        unsigned code = in.src[i];
        uint64_t* out = buf64[i];
        if (code >= opnd::kVgpr) {
            checkVgpr(code - opnd::kVgpr, 2);
            const uint32_t* lo = w.vrow(code - opnd::kVgpr);
            const uint32_t* hi = w.vrow((code - opnd::kVgpr + 1) & 255);
            for (int l = 0; l < 64; ++l)
                out[l] = uint64_t(lo[l]) | uint64_t(hi[l]) << 32;
        } else {
            std::fill_n(out, 64, sread64(code, fp));
        }
        return out;
    }
    const double* f64(int i) {
        uint64_t* p = const_cast<uint64_t*>(src64(i, true));
        bool a = (in.abs >> i) & 1, n = (in.neg >> i) & 1, fl = !f64DenormIn();
        double* d = reinterpret_cast<double*>(p);
        if (a || n || fl)
            for (int l = 0; l < 64; ++l) {
                double x = d[l];
                if (a)
                    x = std::fabs(x);
                if (n)
                    x = -x;
                if (fl)
                    x = flushF64(x);
                d[l] = x;
            }
        return d;
    }
    /// 16-bit source: low half, or high half when VOP3 op_sel selects it.
    const uint32_t* src16(int i) {
        unsigned code = in.src[i];
        uint32_t* out = buf[i];
        bool hi = (in.opsel >> i) & 1;
        if (code < opnd::kVgpr && code >= 240 && code <= 248) {
            std::fill_n(out, 64, f16Const(code));
            return out;
        }
        const uint32_t* p = src32(i);
        for (int l = 0; l < 64; ++l)
            out[l] = hi ? p[l] >> 16 : p[l] & 0xffff;
        return out;
    }
    const f16* h16(int i) {
        const uint32_t* p = src16(i);
        f16* out = reinterpret_cast<f16*>(buf64[i]);
        bool a = absOf(i), n = negOf(i), fl = !f64DenormIn();
        for (int l = 0; l < 64; ++l) {
            f16 x = bc<f16>(uint16_t(p[l]));
            if (a)
                x = bc<f16>(uint16_t(bc<uint16_t>(x) & 0x7fff));
            if (n)
                x = bc<f16>(uint16_t(bc<uint16_t>(x) ^ 0x8000));
            if (fl)
                x = flushF16(x);
            out[l] = x;
        }
        return out;
    }

    // Writeback. Only EXEC lanes (and DPP's row/bank masks) are written.
    void wr32(const uint32_t* r) {
        if (sdwa())
            return wrSdwa(r);
        checkVgpr(in.vdst);
        uint32_t* d = w.vrow(in.vdst);
        uint64_t m = execMask & dppWriteMask();
        if (m == ~0ull) {
            std::copy_n(r, 64, d);
            return;
        }
        for (int l = 0; l < 64; ++l)
            if ((m >> l) & 1)
                d[l] = r[l];
    }
    void wrSdwa(const uint32_t* r) {
        unsigned sel = (in.extWord >> 8) & 7, unused = (in.extWord >> 11) & 3;
        checkVgpr(in.vdst);
        uint32_t* d = w.vrow(in.vdst);
        for (int l = 0; l < 64; ++l) {
            if (!((execMask >> l) & 1))
                continue;
            uint32_t x = r[l];
            if (sel >= 6) {
                d[l] = x;
                continue;
            }
            uint32_t mask = sel <= 3 ? 0xffu : 0xffffu;
            uint32_t shift = sel <= 3 ? 8 * sel : 16 * (sel - 4);
            uint32_t field = (x & mask) << shift;
            if (unused == 2)
                d[l] = (d[l] & ~(mask << shift)) | field; // UNUSED_PRESERVE
            else if (unused == 1) // UNUSED_SEXT: the field's sign fills the bits above it
                d[l] = uint32_t((sel <= 3 ? int32_t(int8_t(x)) : int32_t(int16_t(x)))) << shift;
            else
                d[l] = field; // UNUSED_PAD
        }
    }
    void wrF32(float* r, bool forceFlush = false) {
        float scale = in.omod == 1 ? 2.0f : in.omod == 2 ? 4.0f : in.omod == 3 ? 0.5f : 1.0f;
        bool fl = forceFlush || !f32DenormOut();
        if (in.omod || in.clamp || fl || sdwaClamp())
            for (int l = 0; l < 64; ++l) {
                float x = r[l] * scale;
                if (in.clamp || sdwaClamp())
                    x = std::isnan(x) ? 0.0f : std::clamp(x, 0.0f, 1.0f);
                if (fl)
                    x = flushF32(x);
                r[l] = x;
            }
        wr32(reinterpret_cast<uint32_t*>(r));
    }
    DUET_GCN_ALWAYS_INLINE bool sdwaClamp() const { return sdwa() && ((in.extWord >> 13) & 1); }
    void wr64(const uint64_t* r) {
        checkVgpr(in.vdst, 2);
        uint32_t* lo = w.vrow(in.vdst);
        uint32_t* hi = w.vrow((in.vdst + 1) & 255);
        for (int l = 0; l < 64; ++l)
            if ((execMask >> l) & 1)
                lo[l] = uint32_t(r[l]), hi[l] = uint32_t(r[l] >> 32);
    }
    void wrF64(double* r) {
        double scale = in.omod == 1 ? 2.0 : in.omod == 2 ? 4.0 : in.omod == 3 ? 0.5 : 1.0;
        bool fl = !f64DenormOut();
        for (int l = 0; l < 64; ++l) {
            double x = r[l] * scale;
            if (in.clamp)
                x = std::isnan(x) ? 0.0 : std::clamp(x, 0.0, 1.0);
            if (fl)
                x = flushF64(x);
            r[l] = x;
        }
        wr64(reinterpret_cast<uint64_t*>(r));
    }
    /// 16-bit results: op_sel[3] writes the high half and keeps the low one; otherwise the low
    /// half is written and the high half zeroed, except by the gfx9 opsel mads (keepHi16),
    /// which keep it.
    void wr16(const uint32_t* r) {
        if (sdwa())
            return wrSdwa(r);
        checkVgpr(in.vdst);
        uint32_t* d = w.vrow(in.vdst);
        bool hi = in.enc == Enc::Vop3 && ((in.opsel >> 3) & 1);
        for (int l = 0; l < 64; ++l)
            if ((execMask >> l) & 1)
                d[l] = hi            ? (d[l] & 0xffff) | (r[l] << 16)
                       : in.keepHi16 ? (d[l] & 0xffff0000u) | (r[l] & 0xffff)
                                     : (r[l] & 0xffff);
    }

    void wrF16(f16* r) {
        float scale = in.omod == 1 ? 2.0f : in.omod == 2 ? 4.0f : in.omod == 3 ? 0.5f : 1.0f;
        bool fl = !f64DenormOut();
        for (int l = 0; l < 64; ++l) {
            f16 x = in.omod ? f16(float(r[l]) * scale) : r[l];
            if (in.clamp || sdwaClamp())
                x = std::isnan(float(x)) ? f16(0) : f16(std::clamp(float(x), 0.0f, 1.0f));
            if (fl)
                x = flushF16(x);
            res[l] = bc<uint16_t>(x);
        }
        wr16(res);
    }
    DUET_GCN_ALWAYS_INLINE void wrMaskSgpr(unsigned code, uint64_t bits) {
        if (code == opnd::kExec)
            w.setExec(bits);
        else if (code < 127)
            w.setSreg64(code, bits);
    }
    void wrSgpr(unsigned code, uint32_t x) {
        if (code < 128) [[likely]] {
            if (code < 102 && code >= ex.m_ctx.sgprs) [[unlikely]]
                sgprError(code);
            w.s[code] = x;
        } else if (err.empty()) {
            err = "invalid scalar destination " + std::to_string(code);
        }
    }
    void wrSgpr64(unsigned code, uint64_t x) {
        wrSgpr(code, uint32_t(x));
        wrSgpr(code + 1, uint32_t(x >> 32));
    }

    // Scalar ALU shorthands: sources 0 and 1 as 32 or 64 bits; the destination (EXEC as a
    // 64-bit one), and with SCC set to result != 0 by the *scc forms.
    DUET_GCN_ALWAYS_INLINE uint32_t a32() { return sread(in.src[0]); }
    DUET_GCN_ALWAYS_INLINE uint32_t b32() { return sread(in.src[1]); }
    DUET_GCN_ALWAYS_INLINE uint64_t a64() { return sread64(in.src[0], false); }
    DUET_GCN_ALWAYS_INLINE uint64_t b64() { return sread64(in.src[1], false); }
    DUET_GCN_ALWAYS_INLINE void d32(uint32_t x) { wrSgpr(in.vdst, x); }
    DUET_GCN_ALWAYS_INLINE void d64(uint64_t x) {
        if (in.vdst == opnd::kExec)
            w.setExec(x);
        else
            wrSgpr64(in.vdst, x);
    }
    DUET_GCN_ALWAYS_INLINE void d32scc(uint32_t x) { d32(x), w.scc = x != 0; }
    DUET_GCN_ALWAYS_INLINE void d64scc(uint64_t x) { d64(x), w.scc = x != 0; }

    // The instruction families, each in its own file: they return false (or set `err`) for
    // an operation they do not implement.
    bool valu(); ///< a VALU instruction's first execution: finds its family (valu.cpp)
    bool vcmp(); ///< v_cmp*, v_cmpx*, v_cmp_class (vcmp.cpp)
    void salu(); ///< SOP1/SOP2/SOPK/SOPC (salu.cpp)
    void smem(); ///< scalar memory (memory.cpp)
    void ds();   ///< LDS and the DS cross-lane operations (memory.cpp)
    void vmem(); ///< MUBUF, FLAT, GLOBAL and SCRATCH (memory.cpp)

    /// The VALU families (valu.cpp; kValuCmp: vcmp.cpp), by their number in Inst::valuFamily,
    /// which valu() sets on an instruction's first execution and Executor::runVector switches
    /// on later. A family returns false for an operation outside it. Each has an AVX2 clone.
    enum ValuFamily : uint8_t {
        kValuUnknown,
        kValuF32,
        kValuInt32,
        kValuBits,
        kValuMove,
        kValuConvert,
        kValuF64,
        kValuF16,
        kValuInt16,
        kValuPacked,
        kValuCmp,
    };
    bool valuF32();
    bool valuInt32();
    bool valuBits();
    bool valuMove();
    bool valuConvert();
    bool valuF64();
    bool valuF16();
    bool valuInt16();
    bool valuPacked();
    inline bool valuMadMix(const uint32_t* const* s);

    // salu() picks one of these by encoding (salu.cpp).
    inline void sop2();
    inline void sopk();
    inline void sop1();
    inline void sopc();
    inline void sopBfe();
    inline void sopSaveexec();
};

} // namespace duet::gcn::model
