// The gfx900 interpreter: runs a work-group's wavefronts on one host thread, switching waves
// at s_barrier, and executes decoded instructions with the ISA's register and float semantics.
#include "wave.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace duet::gcn::model {

namespace {

using f16 = _Float16;

template <class To, class From> To bc(From f) {
    return std::bit_cast<To>(f);
}

std::string hex(uint64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

// ---- Float helpers -----------------------------------------------------------------------

// Branch-free so that lane loops vectorise: a zero exponent field keeps only the sign.
inline float flushF32(float x) {
    uint32_t b = bc<uint32_t>(x);
    return bc<float>((b & 0x7f800000u) ? b : (b & 0x80000000u));
}
inline double flushF64(double x) {
    uint64_t b = bc<uint64_t>(x);
    return bc<double>((b & 0x7ff0000000000000ull) ? b : (b & 0x8000000000000000ull));
}
f16 flushF16(f16 x) {
    uint16_t b = bc<uint16_t>(x);
    return (b & 0x7c00) == 0 ? bc<f16>(uint16_t(b & 0x8000)) : x;
}
/// Canonical quiet NaN the hardware produces.
constexpr uint32_t kQnanF32 = 0x7fc00000;

/// Signalling NaN (quiet bit clear).
template <class T> bool isSnan(T x) {
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
template <class T> T fminIeee(T a, T b) {
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
template <class T> T fmaxIeee(T a, T b) {
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

/// Float to integer as the ISA converts: round toward zero, clamp to the range, NaN -> 0.
/// v_div_fmas: a * b + c, and for the lanes v_div_scale flagged (`scaled`) scaled back by
/// 2^+-`scale` (up when c is at least 2). Scaled lanes compute the fma and the scaling in the
/// wider type `Wide`, then round once, so a quotient that lands in the denormal range is not
/// rounded twice.
template <class T, class Wide> T divFmas(T a, T b, T c, bool scaled, int scale) {
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

template <class I, class F> I cvtSat(F x) {
    if (std::isnan(x))
        return 0;
    if (x <= F(std::numeric_limits<I>::min()))
        return std::numeric_limits<I>::min();
    if (x >= F(std::numeric_limits<I>::max()))
        return std::numeric_limits<I>::max();
    return static_cast<I>(x);
}

int frexpExp(double x) {
    if (!std::isfinite(x) || x == 0)
        return 0;
    int e;
    std::frexp(x, &e);
    return e;
}
template <class F> F frexpMant(F x) {
    if (!std::isfinite(x) || x == 0)
        return x;
    int e;
    return std::frexp(x, &e);
}
template <class F> F fractOf(F x) {
    if (std::isinf(x))
        return std::numeric_limits<F>::quiet_NaN();
    F f = x - std::floor(x);
    return std::min(f, std::nextafter(F(1), F(0)));
}

/// v_cmp_class mask bits: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denorm, 5 -0, 6 +0, 7 +denorm,
/// 8 +normal, 9 +inf.
template <class F> unsigned classBit(F x) {
    bool neg = std::signbit(x);
    switch (std::fpclassify(x)) {
    case FP_NAN: {
        bool quiet;
        if constexpr (sizeof(F) == 8)
            quiet = (bc<uint64_t>(x) >> 51) & 1;
        else if constexpr (sizeof(F) == 4)
            quiet = (bc<uint32_t>(x) >> 22) & 1;
        else
            quiet = (bc<uint16_t>(x) >> 9) & 1;
        return quiet ? 1 : 0;
    }
    case FP_INFINITE:
        return neg ? 2 : 9;
    case FP_NORMAL:
        return neg ? 3 : 8;
    case FP_SUBNORMAL:
        return neg ? 4 : 7;
    default:
        return neg ? 5 : 6;
    }
}
template <class F> bool fcmp(unsigned cond, F a, F b) {
    bool u = std::isnan(a) || std::isnan(b);
    switch (cond) {
    case 0:
        return false;
    case 1:
        return a < b;
    case 2:
        return a == b;
    case 3:
        return a <= b;
    case 4:
        return a > b;
    case 5:
        return !u && a != b;
    case 6:
        return a >= b;
    case 7:
        return !u;
    case 8:
        return u;
    case 9:
        return !(a >= b);
    case 10:
        return !(!u && a != b);
    case 11:
        return !(a > b);
    case 12:
        return !(a <= b);
    case 13:
        return !(a == b);
    case 14:
        return !(a < b);
    default:
        return true;
    }
}
template <class I> bool icmp(unsigned cond, I a, I b) {
    switch (cond) {
    case 0:
        return false;
    case 1:
        return a < b;
    case 2:
        return a == b;
    case 3:
        return a <= b;
    case 4:
        return a > b;
    case 5:
        return a != b;
    case 6:
        return a >= b;
    default:
        return true;
    }
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
void fmaLanes(float* r, const float* a, const float* b, const float* c) {
    kHostFma ? fmaLanesF32Hw(r, a, b, c) : fmaLanesGeneric(r, a, b, c);
}
void fmaLanes(double* r, const double* a, const double* b, const double* c) {
    kHostFma ? fmaLanesF64Hw(r, a, b, c) : fmaLanesGeneric(r, a, b, c);
}

/// EXEC-style mask from 64 lane bytes that are 0 or 1.
uint64_t packLaneBits(const uint8_t* c) {
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

/// The inverse: lane l's byte is bit l of `m`. Each mask byte's bits are spread to eight
/// bytes (multiply, keep bit i in byte i), then a nonzero byte becomes 1.
void unpackLaneBits(uint64_t m, uint8_t* c) {
    static_assert(std::endian::native == std::endian::little);
    for (int i = 0; i < 8; ++i) {
        uint64_t x = ((m >> (8 * i)) & 0xff) * 0x0101010101010101ull & 0x8040201008040201ull;
        x = ((x + 0x7f7f7f7f7f7f7f7full) >> 7) & 0x0101010101010101ull;
        memcpy(c + 8 * i, &x, 8);
    }
}

// ---- Atomics on host memory ----------------------------------------------------------------

template <class T> T atomicRmw(T* p, AtomicOp op, T data, T cmp, bool shared) {
    using S = std::make_signed_t<T>;
    auto apply = [&](T old) -> T {
        switch (op) {
        case AtomicOp::Swap:
            return data;
        case AtomicOp::CmpSwap:
            return old == cmp ? data : old;
        case AtomicOp::Add:
            return old + data;
        case AtomicOp::Sub:
            return old - data;
        case AtomicOp::Rsub:
            return data - old;
        case AtomicOp::Smin:
            return T(std::min(S(old), S(data)));
        case AtomicOp::Umin:
            return std::min(old, data);
        case AtomicOp::Smax:
            return T(std::max(S(old), S(data)));
        case AtomicOp::Umax:
            return std::max(old, data);
        case AtomicOp::And:
            return old & data;
        case AtomicOp::Or:
            return old | data;
        case AtomicOp::Xor:
            return old ^ data;
        case AtomicOp::Inc:
            return old >= data ? 0 : old + 1;
        case AtomicOp::Mskor:
            return (old & ~data) | cmp;
        case AtomicOp::Dec:
            return (old == 0 || old > data) ? data : old - 1;
        case AtomicOp::Fmin:
        case AtomicOp::Fmax:
        case AtomicOp::Fadd: {
            if constexpr (sizeof(T) == 4) {
                float a = bc<float>(old), b = bc<float>(data);
                float r = op == AtomicOp::Fadd   ? a + b
                          : op == AtomicOp::Fmin ? fminIeee(a, b)
                                                 : fmaxIeee(a, b);
                return bc<T>(r);
            } else {
                double a = bc<double>(old), b = bc<double>(data);
                double r = op == AtomicOp::Fadd   ? a + b
                           : op == AtomicOp::Fmin ? fminIeee(a, b)
                                                  : fmaxIeee(a, b);
                return bc<T>(r);
            }
        }
        }
        return old;
    };
    if (!shared) { // LDS: a work-group's waves run on one host thread
        T old;
        memcpy(&old, p, sizeof(T));
        T nv = apply(old);
        memcpy(p, &nv, sizeof(T));
        return old;
    }
    std::atomic_ref<T> ref(*p);
    switch (op) {
    case AtomicOp::Add:
        return ref.fetch_add(data);
    case AtomicOp::Sub:
        return ref.fetch_sub(data);
    case AtomicOp::And:
        return ref.fetch_and(data);
    case AtomicOp::Or:
        return ref.fetch_or(data);
    case AtomicOp::Xor:
        return ref.fetch_xor(data);
    case AtomicOp::Swap:
        return ref.exchange(data);
    default:
        break;
    }
    T old = ref.load();
    while (!ref.compare_exchange_weak(old, apply(old))) {
    }
    return old;
}

} // namespace

// ---- Decoded-code cache ---------------------------------------------------------------------

struct Executor::Page {
    static constexpr unsigned kDwords = 256;
    Inst inst[kDwords];
    bool valid[kDwords] = {};
};

Executor::Executor(DispatchCtx& ctx, unsigned thread) : m_ctx(ctx), m_thread(thread) {}
Executor::~Executor() = default;

// Inline hit path: the same page as the previous instruction, already decoded.
inline const Inst* Executor::fetch(uint64_t pc) {
    unsigned i = (pc >> 2) & (Page::kDwords - 1);
    if ((pc >> 10) == m_lastPageKey && m_lastPage->valid[i]) [[likely]]
        return &m_lastPage->inst[i];
    return fetchSlow(pc);
}

const Inst* Executor::fetchSlow(uint64_t pc) {
    uint64_t key = pc >> 10;
    Page* page = m_lastPage;
    if (key != m_lastPageKey) {
        auto& slot = m_pages[key];
        if (!slot)
            slot = std::make_unique<Page>();
        page = m_lastPage = slot.get();
        m_lastPageKey = key;
    }
    unsigned i = (pc >> 2) & (Page::kDwords - 1);
    if (!page->valid[i]) {
        page->inst[i] = decode(reinterpret_cast<const uint32_t*>(pc));
        page->valid[i] = true;
    }
    return &page->inst[i];
}

bool Executor::fail(const Wave& w, const Inst& in, const std::string& why) {
    m_ctx.fail(why + " (" + in.name + ") at " + hex(w.pc) + " (kernel offset " +
               hex(w.pc - m_ctx.state->pgmAddress) + ")");
    return false;
}

// ---- The instruction semantics ---------------------------------------------------------------

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
    bool sdwaAbs(int i) const { return in.ext == 1 && ((in.extWord >> (i == 0 ? 21 : 29)) & 1); }
    bool sdwaNeg(int i) const { return in.ext == 1 && ((in.extWord >> (i == 0 ? 20 : 28)) & 1); }
    bool absOf(int i) const { return ((in.abs >> i) & 1) || sdwaAbs(i); }
    bool negOf(int i) const { return ((in.neg >> i) & 1) || sdwaNeg(i); }
    bool sdwa() const { return in.ext == 1; }

    bool f32DenormIn() const { return (w.mode >> 4) & 1; }
    bool f32DenormOut() const { return (w.mode >> 5) & 1; }
    bool f64DenormIn() const { return (w.mode >> 6) & 1; }
    bool f64DenormOut() const { return (w.mode >> 7) & 1; }

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
    bool sdwaClamp() const { return sdwa() && ((in.extWord >> 13) & 1); }
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
    void wrMaskSgpr(unsigned code, uint64_t bits) {
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

    bool valu();
    bool vcmp();
    void salu();
};

#define LANES for (int l = 0; l < 64; ++l)

bool WaveExec::vcmp() {
    uint64_t bits = 0;
    unsigned c = in.cmpCond;
    if (in.op == Op::v_cmp_class) {
        const uint32_t* mask = src32(1);
        switch (in.cmpType) {
        case CmpType::F32: {
            const uint32_t* a = src32(0);
            LANES if ((mask[l] >> classBit(bc<float>(a[l]) * (negOf(0) ? -1.0f : 1.0f))) & 1)
                bits |= 1ull << l;
            break;
        }
        case CmpType::F64: {
            const uint64_t* a = src64(0, true);
            LANES if ((mask[l] >> classBit(bc<double>(a[l]) * (negOf(0) ? -1.0 : 1.0))) & 1) bits |=
                1ull << l;
            break;
        }
        default: {
            const uint32_t* a = src16(0);
            LANES if ((mask[l] >> classBit(float(bc<f16>(uint16_t(a[l]))))) & 1) bits |= 1ull << l;
            break;
        }
        }
    } else {
        switch (in.cmpType) {
        case CmpType::F32: {
            const float* a = f32(0);
            const float* b = f32(1);
            LANES if (fcmp(c, a[l], b[l])) bits |= 1ull << l;
            break;
        }
        case CmpType::F64: {
            const double* a = f64(0);
            const double* b = f64(1);
            LANES if (fcmp(c, a[l], b[l])) bits |= 1ull << l;
            break;
        }
        case CmpType::F16: {
            const f16* a = h16(0);
            const f16* b = h16(1);
            LANES if (fcmp(c, float(a[l]), float(b[l]))) bits |= 1ull << l;
            break;
        }
        case CmpType::I32:
        case CmpType::U32: {
            const uint32_t* a = src32(0);
            const uint32_t* b = src32(1);
            if (in.cmpType == CmpType::I32) {
                LANES if (icmp(c, int32_t(a[l]), int32_t(b[l]))) bits |= 1ull << l;
            } else {
                LANES if (icmp(c, a[l], b[l])) bits |= 1ull << l;
            }
            break;
        }
        case CmpType::I64:
        case CmpType::U64: {
            const uint64_t* a = src64(0, false);
            const uint64_t* b = src64(1, false);
            if (in.cmpType == CmpType::I64) {
                LANES if (icmp(c, int64_t(a[l]), int64_t(b[l]))) bits |= 1ull << l;
            } else {
                LANES if (icmp(c, a[l], b[l])) bits |= 1ull << l;
            }
            break;
        }
        case CmpType::I16:
        case CmpType::U16: {
            const uint32_t* a = src16(0);
            const uint32_t* b = src16(1);
            if (in.cmpType == CmpType::I16) {
                LANES if (icmp(c, int16_t(a[l]), int16_t(b[l]))) bits |= 1ull << l;
            } else {
                LANES if (icmp(c, uint16_t(a[l]), uint16_t(b[l]))) bits |= 1ull << l;
            }
            break;
        }
        }
    }
    bits &= execMask;
    wrMaskSgpr(in.sdst, bits);
    if (in.cmpx)
        w.setExec(bits);
    return true;
}

// An AVX2 clone chosen at load time where the host has it: the lane loops run 8 wide. Same
// results (no fast-math; fp-contract stays off, and AVX2 has no FMA anyway).
__attribute__((target_clones("avx2", "default"))) bool WaveExec::valu() {
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
    using I = int32_t;
    using U = uint32_t;
    auto sx24 = [](U x) { return int64_t(int32_t(x << 8) >> 8); };
    auto ux24 = [](U x) { return uint64_t(x & 0xffffff); };

    // Integer ops that honour clamp saturate; the rest must not carry it. The clamp bit is
    // VOP3's or, for SDWA, the SDWA word's (LLVM emits v_sub_u16_sdwa ... clamp for sub_sat).
    const bool clampBit = in.clamp || sdwaClamp();
    switch (in.op) {
    case Op::v_add_u32:
    case Op::v_sub_u32:
    case Op::v_subrev_u32:
    case Op::v_add_co_u32:
    case Op::v_sub_co_u32:
    case Op::v_subrev_co_u32:
    case Op::v_addc_co_u32:
    case Op::v_subb_co_u32:
    case Op::v_subbrev_co_u32:
    case Op::v_add_i32:
    case Op::v_sub_i32:
    case Op::v_add_u16:
    case Op::v_sub_u16:
    case Op::v_mad_u64_u32:
    case Op::v_mad_i64_i32:
        break;
    default:
        break;
    }

    switch (in.op) {
    case Op::v_nop:
    case Op::v_clrexcp:
        return true; // no exception state is modelled
    case Op::v_mov_b32:
        I32_1(x)
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
    // f32 arithmetic
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
    // f64
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
    // f16
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
    // 16-bit integer
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
    // 32-bit integer
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
    case Op::v_exp_legacy_f32:
        F32_1(std::exp2(x))
    case Op::v_log_legacy_f32:
        F32_1(x < 0 ? std::numeric_limits<float>::quiet_NaN() : std::log2(x))
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
        break;
    }
    if (in.enc == Enc::Vop3p) {
        // Packed: each half takes its operand half from op_sel (low result) / op_sel_hi (high).
        unsigned n = (in.op == Op::v_pk_mad_i16 || in.op == Op::v_pk_mad_u16 ||
                      in.op == Op::v_pk_fma_f16 || in.op == Op::v_mad_mix_f32 ||
                      in.op == Op::v_mad_mixlo_f16 || in.op == Op::v_mad_mixhi_f16)
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
        if (in.op == Op::v_mad_mix_f32 || in.op == Op::v_mad_mixlo_f16 ||
            in.op == Op::v_mad_mixhi_f16) {
            // op_sel_hi[i] = 1: operand i is f16 (half chosen by op_sel), else f32.
            float* r = reinterpret_cast<float*>(res);
            LANES {
                float v[3];
                for (unsigned i = 0; i < 3; ++i) {
                    uint32_t x = s[i][l];
                    bool isF16 = (in.opselHi >> i) & 1;
                    v[i] = isF16 ? float(bc<f16>(uint16_t((in.opsel >> i) & 1 ? x >> 16 : x)))
                                 : bc<float>(x);
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
                d[l] = in.op == Op::v_mad_mixlo_f16 ? (d[l] & 0xffff0000u) | h
                                                    : (d[l] & 0xffff) | h << 16;
            }
            return true;
        }
        LANES {
            uint32_t out = 0;
            for (int half = 0; half < 2; ++half) {
                uint16_t x[3] = {0, 0, 0};
                uint8_t sel = half ? in.opselHi : in.opsel;
                uint8_t ng = half ? in.negHi : in.neg;
                for (unsigned i = 0; i < n; ++i)
                    x[i] = uint16_t((sel >> i) & 1 ? s[i][l] >> 16 : s[i][l]);
                auto hf = [&](int i) {
                    f16 h = bc<f16>(x[i]);
                    return (ng >> i) & 1 ? -h : h;
                };
                uint16_t r;
                switch (in.op) {
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
                    r = uint16_t(in.clamp ? std::min(uint32_t(x[0]) + x[1], 0xffffu) : x[0] + x[1]);
                    break;
                case Op::v_pk_add_i16:
                    r = uint16_t(in.clamp
                                     ? std::clamp(int(int16_t(x[0])) + int16_t(x[1]), -32768, 32767)
                                     : x[0] + x[1]);
                    break;
                case Op::v_pk_sub_u16:
                    r = uint16_t(in.clamp ? (x[0] < x[1] ? 0 : x[0] - x[1]) : x[0] - x[1]);
                    break;
                case Op::v_pk_sub_i16:
                    r = uint16_t(in.clamp
                                     ? std::clamp(int(int16_t(x[0])) - int16_t(x[1]), -32768, 32767)
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
                out |= uint32_t(r) << (16 * half);
            }
            res[l] = out;
        }
        wr32(res);
        return true;
    }
    return false;
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
}

// ---- Scalar ALU --------------------------------------------------------------------------------

namespace {
constexpr unsigned kHwRegMode = 1, kHwRegHwId = 4;
} // namespace

void WaveExec::salu() {
    using I = int32_t;
    using U = uint32_t;
    using U64 = uint64_t;
    const Op op = in.op;
    auto a32 = [&] { return sread(in.src[0]); };
    auto b32 = [&] { return sread(in.src[1]); };
    auto a64 = [&] { return sread64(in.src[0], false); };
    auto b64 = [&] { return sread64(in.src[1], false); };
    auto d32 = [&](U x) { wrSgpr(in.vdst, x); };
    auto d64 = [&](U64 x) {
        if (in.vdst == opnd::kExec)
            w.setExec(x);
        else
            wrSgpr64(in.vdst, x);
    };
    auto d32scc = [&](U x) { d32(x), w.scc = x != 0; };
    auto d64scc = [&](U64 x) { d64(x), w.scc = x != 0; };
    auto ff1 = [](U64 x) { return x ? U(std::countr_zero(x)) : ~0u; };
    auto brev64 = [](U64 x) {
        U64 r = 0;
        for (int i = 0; i < 64; ++i)
            r |= ((x >> i) & 1) << (63 - i);
        return r;
    };
    U64 nextPc = w.pc; // already advanced past this instruction
    switch (op) {
    // SOP2
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
    // SOPK
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
    // SOP1
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
    case Op::s_andn2_wrexec_b64: {
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
    // SOPC
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

#undef LANES

// ---- Memory
// --------------------------------------------------------------------------------------

namespace {

/// A buffer resource (V#) as gfx9 lays it out.
struct BufferRsrc {
    uint64_t base;
    uint32_t stride, numRecords, elementSize, indexStride;
    bool swizzle, addTid;
    explicit BufferRsrc(const uint32_t* d) {
        base = d[0] | (uint64_t(d[1] & 0xffff) << 32);
        stride = (d[1] >> 16) & 0x3fff;
        swizzle = (d[1] >> 31) & 1;
        numRecords = d[2];
        elementSize = 2u << ((d[3] >> 19) & 3);
        indexStride = 8u << ((d[3] >> 21) & 3);
        addTid = (d[3] >> 23) & 1;
    }
};

bool badHostAddress(uint64_t a) {
    return a < 4096 || a >= (1ull << 47);
}

} // namespace

struct MemExec {
    WaveExec& x;
    Executor& ex;
    Wave& w;
    const Inst& in;

    /// Host address of `bytes` at lane's memory location `addr` in `space`; null on a fault
    /// (x.err set).
    uint8_t* lds(uint64_t off, unsigned bytes) {
        if (off + bytes > ex.m_ldsSize) {
            if (x.err.empty())
                x.err = "LDS access at " + hex(off) + " beyond the work-group's " +
                        std::to_string(ex.m_ldsSize) + " bytes";
            return nullptr;
        }
        return ex.m_lds.data() + off;
    }
    /// Private (scratch) memory of a lane, swizzled as the scratch V# / FLAT_SCRATCH define:
    /// 4-byte elements interleaved over the wave's 64 lanes.
    uint8_t* priv(uint64_t off, int lane) {
        uint64_t base = w.sreg64(opnd::kFlatScr);
        uint64_t a = base + (off / 4) * 256 + uint64_t(lane) * 4 + (off & 3);
        if (!inScratchSlot(a)) [[unlikely]] {
            privateOverflow(off);
            return nullptr;
        }
        return host(a, 1);
    }
    /// Whether a private-memory address lies in this wave's scratch slot. The kernel prologue
    /// folds the wave's offset into FLAT_SCRATCH or the private segment V#, so only the
    /// absolute address tells.
    bool inScratchSlot(uint64_t a) const {
        const DispatchCtx& c = ex.m_ctx;
        if (!c.scratchBase)
            return true;
        return a - (c.scratchBase + uint64_t(w.scratchSlot) * c.scratchWaveBytes) <
               c.scratchWaveBytes;
    }
    /// A private access outside the wave's scratch slot: a deep call chain or an out-of-bounds
    /// private array. Hardware would fault or corrupt another wave's private memory.
    void privateOverflow(uint64_t laneOffset) {
        if (x.err.empty())
            x.err = "private memory access at offset " + hex(laneOffset) +
                    " beyond the work-item's " + std::to_string(ex.m_ctx.scratchWaveBytes / 64) +
                    " bytes of scratch (call stack overflow, e.g. deep recursion, or a private "
                    "array indexed out of bounds)";
    }
    uint8_t* host(uint64_t a, unsigned) {
        if (badHostAddress(a)) {
            if (x.err.empty())
                x.err = "memory fault at address " + hex(a);
            return nullptr;
        }
        return reinterpret_cast<uint8_t*>(a);
    }
    /// FLAT address: LDS and private apertures, else global memory.
    uint8_t* flat(uint64_t a, unsigned bytes, int lane, bool& isLds) {
        isLds = false;
        if ((a >> 32) == (kSharedAperture >> 32)) {
            isLds = true;
            return lds(uint32_t(a), bytes);
        }
        if ((a >> 32) == (kPrivateAperture >> 32))
            return priv(uint32_t(a), lane);
        return host(a, bytes);
    }

    void vmem();
    void ds();
    void smem();
    /// Adds the LDS bank-conflict cycles of an access to the statistics: per lane, `nAddr`
    /// dword addresses in `dwAddr`; or `dwords` consecutive dwords from each EXEC lane's byte
    /// address `laneAddr`.
    void ldsConflicts(const uint32_t (*dwAddr)[8], const unsigned* nAddr, unsigned lanesPerCycle);
    void ldsConflicts(uint64_t exec, const uint32_t* laneAddr, unsigned dwords,
                      unsigned lanesPerCycle);
};

namespace {
uint32_t loadBytes(const uint8_t* p, unsigned n, bool sext) {
    uint32_t v = 0;
    memcpy(&v, p, n);
    if (sext)
        v = n == 1 ? uint32_t(int32_t(int8_t(v))) : uint32_t(int32_t(int16_t(v)));
    return v;
}
} // namespace

__attribute__((target_clones("avx2", "default"))) void MemExec::vmem() {
    // L1 write-back/invalidate: the model has no caches, host memory is coherent.
    if (in.op == Op::buffer_wbinvl1 || in.op == Op::buffer_wbinvl1_vol)
        return;
    const bool isBuffer = in.enc == Enc::Mubuf;
    const unsigned bytes = in.memBytes;
    const unsigned dwords = bytes >= 4 ? bytes / 4 : 1;
    const unsigned dataReg = isBuffer ? in.src[1] : in.src[1];
    const unsigned dstReg = in.vdst;
    const uint64_t exec = x.execMask;
    const bool isLoad = in.op == Op::mem_load, isStore = in.op == Op::mem_store;
    const bool isAtomic = in.op == Op::mem_atomic;
    const bool cmp = isAtomic && in.atomic == AtomicOp::CmpSwap;
    ex.stats.vmemBytes += uint64_t(exec == ~0ull ? 64 : std::popcount(exec)) * bytes;
    const unsigned dataDwords = isAtomic ? dwords * (cmp ? 2 : 1) : dwords;
    if (isStore || isAtomic)
        x.checkVgpr(dataReg, dataDwords);
    if (isLoad || (isAtomic && in.memRtn))
        x.checkVgpr(dstReg, dwords);
    if (!x.err.empty())
        return;

    // Fast path: global/flat dword loads and stores to plain host memory (the common case).
    if (!isBuffer && in.space != Space::Scratch && bytes >= 4 && !isAtomic) {
        uint64_t addr[64];
        bool plain = true;
        const uint32_t* lo = w.vrow(in.src[0]);
        const uint32_t* hi = w.vrow(in.src[0] + 1);
        uint64_t base = 0;
        bool useSaddr = in.space == Space::Global && in.saddr != 0x7f;
        if (useSaddr)
            base = x.sread64(in.saddr, false);
        // Every lane's address (inactive ones unused), in loops without branches so they
        // vectorise.
        const uint64_t off = int64_t(in.imm);
        if (useSaddr)
            for (int l = 0; l < 64; ++l)
                addr[l] = base + lo[l] + off;
        else
            for (int l = 0; l < 64; ++l)
                addr[l] = (uint64_t(lo[l]) | uint64_t(hi[l]) << 32) + off;
        bool contiguous = false;
        if (exec == ~0ull) {
            // badHostAddress as OR-reductions (SSE2 has no 64-bit compares): a >= 2^47, or
            // a < 4096 (a - 4096 wraps to the top half; a >= 2^63 is caught by the first).
            // Contiguous: lanes at consecutive elements (a[i] with i the global id).
            uint64_t badBits = 0, strideDiff = 0;
            const uint64_t a0 = addr[0];
            for (int l = 0; l < 64; ++l) {
                badBits |= (addr[l] >> 47) | ((addr[l] - 4096) >> 63);
                strideDiff |= addr[l] ^ (a0 + uint64_t(l) * bytes);
            }
            plain = badBits == 0;
            contiguous = strideDiff == 0;
        } else {
            alignas(16) uint8_t bad[64];
            for (int l = 0; l < 64; ++l)
                bad[l] = badHostAddress(addr[l]); // apertures lie above 2^47 too
            plain = (packLaneBits(bad) & exec) == 0;
        }
        if (plain && contiguous) {
            // One block copy per register for dwords, no per-lane mask tests for wider
            // elements.
            auto* mem = reinterpret_cast<uint8_t*>(addr[0]);
            const unsigned reg = isLoad ? dstReg : dataReg;
            if (dwords == 1) {
                if (isLoad)
                    memcpy(w.vrow(reg), mem, 256);
                else
                    memcpy(mem, w.vrow(reg), 256);
                return;
            }
            for (unsigned k = 0; k < dwords; ++k) {
                uint32_t* row = w.vrow(reg + k);
                for (int l = 0; l < 64; ++l) {
                    if (isLoad)
                        memcpy(&row[l], mem + l * bytes + 4 * k, 4);
                    else
                        memcpy(mem + l * bytes + 4 * k, &row[l], 4);
                }
            }
            return;
        }
        if (plain) {
            for (unsigned k = 0; k < dwords; ++k) {
                uint32_t* row = w.vrow((isLoad ? dstReg : dataReg) + k);
                if (isLoad) {
                    for (int l = 0; l < 64; ++l)
                        if ((exec >> l) & 1)
                            memcpy(&row[l], reinterpret_cast<const void*>(addr[l] + 4 * k), 4);
                } else {
                    for (int l = 0; l < 64; ++l)
                        if ((exec >> l) & 1)
                            memcpy(reinterpret_cast<void*>(addr[l] + 4 * k), &row[l], 4);
                }
            }
            return;
        }
    }

    // Per-lane address of the first byte (and how to reach the following dwords).
    std::optional<BufferRsrc> rsrc;
    uint32_t soffset = 0;
    if (isBuffer) {
        uint32_t d[4];
        for (int i = 0; i < 4; ++i)
            d[i] = x.sread(in.saddr + i);
        rsrc.emplace(d);
        soffset = x.sread(in.soffset);
    }
    uint64_t saddrBase = 0;
    if (!isBuffer && in.saddr != 0x7f) {
        saddrBase = in.space == Space::Scratch ? x.sread(in.saddr) : x.sread64(in.saddr, false);
    }

    for (int l = 0; l < 64; ++l) {
        if (!((exec >> l) & 1))
            continue;
        // locate(k): host pointer of dword k (or of the sub-dword element)
        auto vreg = [&](unsigned r) { return w.vrow(r)[l]; };
        uint8_t* ptr[4] = {};
        bool isLds = false, contiguous = true, outOfRange = false;
        if (isBuffer) {
            const BufferRsrc& b = *rsrc;
            uint32_t vIndex = 0, vOffset = 0;
            unsigned a = in.src[0];
            if (in.idxen && in.offen)
                vIndex = vreg(a), vOffset = vreg(a + 1);
            else if (in.idxen)
                vIndex = vreg(a);
            else if (in.offen)
                vOffset = vreg(a);
            uint64_t index = uint64_t(vIndex) + (b.addTid ? l : 0);
            uint64_t offset = uint64_t(vOffset) + uint64_t(in.imm);
            if (!b.swizzle) {
                if (b.stride == 0 && offset + bytes > b.numRecords)
                    outOfRange = true;
                else if (b.stride != 0 && index >= b.numRecords)
                    outOfRange = true;
                if (!outOfRange)
                    ptr[0] = host(b.base + soffset + offset + index * b.stride, bytes);
            } else {
                // Swizzled: the private segment buffer (scratch).
                contiguous = false;
                for (unsigned k = 0; k < dwords; ++k) {
                    uint64_t off = offset + 4 * k;
                    uint64_t a2 = b.base + soffset +
                                  ((index / b.indexStride) * b.stride +
                                   (off / b.elementSize) * b.elementSize) *
                                      b.indexStride +
                                  (index % b.indexStride) * b.elementSize + off % b.elementSize;
                    if (!inScratchSlot(a2)) [[unlikely]] {
                        privateOverflow(off);
                        return;
                    }
                    ptr[k] = host(a2, bytes < 4 ? bytes : 4);
                }
            }
        } else if (in.space == Space::Scratch) {
            uint64_t off = (in.saddr != 0x7f ? saddrBase : vreg(in.src[0])) + int64_t(in.imm);
            if (in.saddr != 0x7f)
                off = uint32_t(saddrBase + int64_t(in.imm));
            contiguous = false;
            for (unsigned k = 0; k < dwords; ++k)
                ptr[k] = priv(off + 4 * k, l);
        } else {
            uint64_t a;
            if (in.space == Space::Global && in.saddr != 0x7f)
                a = saddrBase + vreg(in.src[0]) + int64_t(in.imm);
            else
                a = (uint64_t(vreg(in.src[0])) | uint64_t(vreg(in.src[0] + 1)) << 32) +
                    int64_t(in.imm);
            if (in.space == Space::Flat && (a >> 32) == (kPrivateAperture >> 32)) {
                contiguous = false;
                for (unsigned k = 0; k < dwords; ++k)
                    ptr[k] = priv(uint32_t(a) + 4 * k, l);
            } else {
                ptr[0] = flat(a, bytes, l, isLds);
            }
        }
        if (!x.err.empty())
            return;
        if (outOfRange) { // buffer range checking: loads return 0, stores and atomics are dropped
            if (isLoad || (isAtomic && in.memRtn))
                for (unsigned k = 0; k < dwords; ++k)
                    w.vrow(dstReg + k)[l] = 0;
            continue;
        }
        if (contiguous)
            for (unsigned k = 1; k < dwords; ++k)
                ptr[k] = ptr[0] + 4 * k;

        if (isLoad) {
            if (bytes < 4) {
                uint32_t v = loadBytes(ptr[0], bytes, in.memSigned);
                uint32_t& d = w.vrow(dstReg)[l];
                if (in.memD16Hi)
                    d = (d & 0xffff) | (v << 16);
                else if (in.memD16)
                    d = (d & 0xffff0000u) | (v & 0xffff);
                else
                    d = v;
            } else {
                for (unsigned k = 0; k < dwords; ++k)
                    memcpy(&w.vrow(dstReg + k)[l], ptr[k], 4);
            }
        } else if (isStore) {
            if (bytes < 4) {
                uint32_t v = w.vrow(dataReg)[l];
                if (in.memD16Hi)
                    v >>= 16;
                memcpy(ptr[0], &v, bytes);
            } else {
                for (unsigned k = 0; k < dwords; ++k)
                    memcpy(ptr[k], &w.vrow(dataReg + k)[l], 4);
            }
        } else {
            bool shared = !isLds;
            if (bytes == 4) {
                uint32_t data = w.vrow(dataReg)[l];
                uint32_t c = cmp ? w.vrow(dataReg + 1)[l] : 0;
                if (reinterpret_cast<uintptr_t>(ptr[0]) & 3) {
                    x.err = "misaligned atomic";
                    return;
                }
                uint32_t old = atomicRmw<uint32_t>(reinterpret_cast<uint32_t*>(ptr[0]), in.atomic,
                                                   data, c, shared);
                if (in.memRtn)
                    w.vrow(dstReg)[l] = old;
            } else {
                uint64_t data = w.vrow(dataReg)[l] | uint64_t(w.vrow(dataReg + 1)[l]) << 32;
                uint64_t c =
                    cmp ? (w.vrow(dataReg + 2)[l] | uint64_t(w.vrow(dataReg + 3)[l]) << 32) : 0;
                if (reinterpret_cast<uintptr_t>(ptr[0]) & 7) {
                    x.err = "misaligned atomic";
                    return;
                }
                uint64_t old = atomicRmw<uint64_t>(reinterpret_cast<uint64_t*>(ptr[0]), in.atomic,
                                                   data, c, shared);
                if (in.memRtn)
                    w.vrow(dstReg)[l] = uint32_t(old), w.vrow(dstReg + 1)[l] = uint32_t(old >> 32);
            }
        }
    }
}

__attribute__((target_clones("avx2", "default"))) void MemExec::ds() {
    const uint64_t exec = x.execMask;
    const unsigned addrReg = in.src[0], d0 = in.src[1], d1 = in.src[2], dst = in.vdst;
    x.checkVgpr(addrReg);
    if (!x.err.empty())
        return;
    const uint32_t* addr = w.vrow(addrReg);
    switch (in.op) {
    case Op::ds_nop:
        return;
    case Op::ds_swizzle_b32: {
        // The swizzled data comes from the ADDR operand (ds_swizzle_b32 vdst, vaddr offset:...).
        x.checkVgpr(dst);
        const uint32_t* src = addr;
        uint32_t out[64];
        unsigned off = uint32_t(in.imm);
        for (int l = 0; l < 64; ++l) {
            int s;
            if (off & 0x8000)
                s = (l & ~3) + ((off >> (2 * (l & 3))) & 3);
            else {
                unsigned andM = off & 31, orM = (off >> 5) & 31, xorM = (off >> 10) & 31;
                s = (l & 32) | ((((l & 31) & andM) | orM) ^ xorM);
            }
            out[l] = ((exec >> s) & 1) ? src[s] : 0;
        }
        for (int l = 0; l < 64; ++l)
            if ((exec >> l) & 1)
                w.vrow(dst)[l] = out[l];
        return;
    }
    case Op::ds_bpermute_b32:
    case Op::ds_permute_b32: {
        x.checkVgpr(d0);
        x.checkVgpr(dst);
        const uint32_t* src = w.vrow(d0);
        uint32_t out[64] = {};
        for (int l = 0; l < 64; ++l) {
            if (!((exec >> l) & 1))
                continue;
            unsigned s = ((addr[l] + uint32_t(in.imm)) >> 2) & 63;
            if (in.op == Op::ds_bpermute_b32)
                out[l] = ((exec >> s) & 1) ? src[s] : 0;
            else
                out[s] = src[l];
        }
        for (int l = 0; l < 64; ++l)
            if ((exec >> l) & 1)
                w.vrow(dst)[l] = out[l];
        return;
    }
    default:
        break;
    }

    const unsigned bytes = in.memBytes;
    const unsigned dwords = bytes >= 4 ? bytes / 4 : 1;
    const bool two = in.op == Op::ds_read2 || in.op == Op::ds_write2;
    // Bank-conflict model: 32 banks of 4 bytes; each cycle serves 32 dword accesses, so a
    // b32 access takes one half-wave per cycle, a b64 (or read2/write2 of b32) a quarter-wave.
    // Within a cycle, distinct dwords in one bank serialise; equal dwords broadcast.
    const unsigned perLane = two ? 2 * dwords : dwords;
    const unsigned lanesPerCycle = std::max(1u, 32u / perLane);

    // Fast path: plain (non-d16) dword reads and writes with every lane in bounds. A read
    // from one address in all lanes (an LDS tile broadcast) is one load; it has no bank
    // conflicts (equal dwords broadcast). Anything out of bounds takes the per-lane path
    // below, which reports the first failing lane.
    if ((in.op == Op::ds_read || in.op == Op::ds_write) && !in.memD16 && bytes >= 4 && exec) {
        uint32_t laneAddr[64];
        const uint32_t first = addr[std::countr_zero(exec)] + uint32_t(in.imm);
        bool inBounds = true, uniform = true;
        if (exec == ~0ull) { // branch-free: the highest address decides the bounds
            uint32_t diff = 0, highest = 0;
            for (int l = 0; l < 64; ++l) {
                uint32_t a = addr[l] + uint32_t(in.imm);
                laneAddr[l] = a;
                diff |= a ^ first;
                highest = std::max(highest, a);
            }
            uniform = diff == 0;
            inBounds = uint64_t(highest) + bytes <= ex.m_ldsSize;
        } else {
            for (int l = 0; l < 64; ++l) {
                uint32_t a = addr[l] + uint32_t(in.imm);
                laneAddr[l] = a;
                bool on = (exec >> l) & 1;
                inBounds &= !on || uint64_t(a) + bytes <= ex.m_ldsSize;
                uniform &= !on || a == first;
            }
        }
        if (inBounds) {
            const bool isRead = in.op == Op::ds_read;
            const unsigned reg = isRead ? dst : d0;
            x.checkVgpr(reg, dwords);
            const uint8_t* base = ex.m_lds.data();
            if (isRead && uniform) {
                for (unsigned k = 0; k < dwords; ++k) {
                    uint32_t v;
                    memcpy(&v, base + first + 4 * k, 4);
                    uint32_t* row = w.vrow(reg + k);
                    if (exec == ~0ull)
                        std::fill_n(row, 64, v);
                    else
                        for (int l = 0; l < 64; ++l)
                            if ((exec >> l) & 1)
                                row[l] = v;
                }
                return; // one dword per bank: no conflicts
            }
            if (isRead) {
                for (unsigned k = 0; k < dwords; ++k) {
                    uint32_t* row = w.vrow(reg + k);
                    for (int l = 0; l < 64; ++l)
                        if ((exec >> l) & 1)
                            memcpy(&row[l], base + laneAddr[l] + 4 * k, 4);
                }
            } else { // lane by lane: where lanes overlap, the higher lane's data stays
                uint8_t* lds = ex.m_lds.data();
                for (int l = 0; l < 64; ++l) {
                    if (!((exec >> l) & 1))
                        continue;
                    for (unsigned k = 0; k < dwords; ++k)
                        memcpy(lds + laneAddr[l] + 4 * k, &w.vrow(reg + k)[l], 4);
                }
            }
            if (!uniform)
                ldsConflicts(exec, laneAddr, dwords, lanesPerCycle);
            return;
        }
    }

    uint32_t dwAddr[64][8];
    unsigned nAddr[64] = {};

    for (int l = 0; l < 64; ++l) {
        if (!((exec >> l) & 1))
            continue;
        if (two) {
            unsigned scale = bytes * (in.st64 ? 64 : 1);
            uint32_t a0 = addr[l] + uint32_t(in.imm) * scale;
            uint32_t a1 = addr[l] + uint32_t(in.offset1) * scale;
            uint8_t* p0 = lds(a0, bytes);
            uint8_t* p1 = lds(a1, bytes);
            if (!p0 || !p1)
                return;
            if (in.op == Op::ds_read2) {
                x.checkVgpr(dst, 2 * dwords);
                for (unsigned k = 0; k < dwords; ++k) {
                    memcpy(&w.vrow(dst + k)[l], p0 + 4 * k, 4);
                    memcpy(&w.vrow(dst + dwords + k)[l], p1 + 4 * k, 4);
                }
            } else {
                x.checkVgpr(d0, dwords);
                x.checkVgpr(d1, dwords);
                for (unsigned k = 0; k < dwords; ++k) {
                    memcpy(p0 + 4 * k, &w.vrow(d0 + k)[l], 4);
                    memcpy(p1 + 4 * k, &w.vrow(d1 + k)[l], 4);
                }
            }
            for (unsigned k = 0; k < dwords; ++k) {
                dwAddr[l][nAddr[l]++] = (a0 >> 2) + k;
                dwAddr[l][nAddr[l]++] = (a1 >> 2) + k;
            }
            continue;
        }
        uint32_t a = addr[l] + uint32_t(in.imm);
        uint8_t* p = lds(a, bytes);
        if (!p)
            return;
        for (unsigned k = 0; k < dwords; ++k)
            dwAddr[l][nAddr[l]++] = (a >> 2) + k;
        if (in.op == Op::ds_read) {
            x.checkVgpr(dst, dwords);
            if (in.memD16) { // 16-bit result into one half, the other half kept
                uint32_t v = loadBytes(p, bytes, in.memSigned) & 0xffff;
                uint32_t& d = w.vrow(dst)[l];
                d = in.memD16Hi ? (d & 0xffff) | (v << 16) : (d & 0xffff0000u) | v;
            } else if (bytes < 4)
                w.vrow(dst)[l] = loadBytes(p, bytes, in.memSigned);
            else
                for (unsigned k = 0; k < dwords; ++k)
                    memcpy(&w.vrow(dst + k)[l], p + 4 * k, 4);
        } else if (in.op == Op::ds_write) {
            x.checkVgpr(d0, dwords);
            if (bytes < 4) {
                uint32_t v = w.vrow(d0)[l] >> (in.memD16Hi ? 16 : 0);
                memcpy(p, &v, bytes);
            } else
                for (unsigned k = 0; k < dwords; ++k)
                    memcpy(p + 4 * k, &w.vrow(d0 + k)[l], 4);
        } else { // ds_atomic
            // cmpst: DATA0 is the compare value, DATA1 the new one.
            // mskor: DATA0 is the mask, DATA1 the bits to set.
            bool cmp = in.atomic == AtomicOp::CmpSwap, mskor = in.atomic == AtomicOp::Mskor;
            if (bytes == 4) {
                uint32_t data = w.vrow(cmp ? d1 : d0)[l], c = cmp     ? w.vrow(d0)[l]
                                                              : mskor ? w.vrow(d1)[l]
                                                                      : 0;
                uint32_t old =
                    atomicRmw<uint32_t>(reinterpret_cast<uint32_t*>(p), in.atomic, data, c, false);
                if (in.memRtn)
                    w.vrow(dst)[l] = old;
            } else {
                auto rd = [&](unsigned r) {
                    return w.vrow(r)[l] | uint64_t(w.vrow(r + 1)[l]) << 32;
                };
                uint64_t data = rd(cmp ? d1 : d0), c = cmp ? rd(d0) : mskor ? rd(d1) : 0;
                uint64_t old =
                    atomicRmw<uint64_t>(reinterpret_cast<uint64_t*>(p), in.atomic, data, c, false);
                if (in.memRtn)
                    w.vrow(dst)[l] = uint32_t(old), w.vrow(dst + 1)[l] = uint32_t(old >> 32);
            }
        }
    }
    ldsConflicts(dwAddr, nAddr, lanesPerCycle);
}

void MemExec::ldsConflicts(uint64_t exec, const uint32_t* laneAddr, unsigned dwords,
                           unsigned lanesPerCycle) {
    uint32_t dwAddr[64][8];
    unsigned nAddr[64] = {};
    for (int l = 0; l < 64; ++l) {
        if (!((exec >> l) & 1))
            continue;
        for (unsigned k = 0; k < dwords; ++k)
            dwAddr[l][nAddr[l]++] = (laneAddr[l] >> 2) + k;
    }
    ldsConflicts(dwAddr, nAddr, lanesPerCycle);
}

void MemExec::ldsConflicts(const uint32_t (*dwAddr)[8], const unsigned* nAddr,
                           unsigned lanesPerCycle) {
    // Bank conflicts. Fast path: every bank sees one dword (or several lanes the same dword);
    // otherwise count the distinct dwords per bank exactly (at most 32 accesses per cycle).
    uint64_t conflicts = 0;
    for (unsigned first = 0; first < 64; first += lanesPerCycle) {
        const unsigned last = std::min(64u, first + lanesPerCycle);
        uint32_t bankAddr[32];
        uint32_t used = 0;
        bool clash = false;
        for (unsigned l = first; l < last && !clash; ++l)
            for (unsigned k = 0; k < nAddr[l]; ++k) {
                uint32_t a = dwAddr[l][k];
                unsigned bank = a & 31;
                if (!((used >> bank) & 1)) {
                    used |= 1u << bank;
                    bankAddr[bank] = a;
                } else if (bankAddr[bank] != a) {
                    clash = true;
                    break;
                }
            }
        if (!clash)
            continue;
        uint64_t keys[64];
        unsigned n = 0;
        for (unsigned l = first; l < last; ++l)
            for (unsigned k = 0; k < nAddr[l] && n < 64; ++k)
                keys[n++] = uint64_t(dwAddr[l][k] & 31) << 32 | dwAddr[l][k];
        std::sort(keys, keys + n);
        unsigned worst = 1, run = 0;
        for (unsigned i = 0; i < n; ++i) {
            if (i > 0 && keys[i] == keys[i - 1])
                continue; // same dword: broadcast
            run = (i > 0 && (keys[i] >> 32) == (keys[i - 1] >> 32)) ? run + 1 : 1;
            worst = std::max(worst, run);
        }
        conflicts += worst - 1;
    }
    ex.stats.ldsConflictCycles += conflicts;
}

void MemExec::smem() {
    switch (in.op) {
    case Op::s_dcache_inv:
    case Op::s_dcache_wb:
    case Op::s_dcache_inv_vol:
    case Op::s_dcache_wb_vol:
        return;
    case Op::s_memtime:
    case Op::s_memrealtime: {
        uint64_t t =
            static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
        x.wrSgpr64(in.vdst, in.op == Op::s_memrealtime ? t / 10 : t);
        return;
    }
    default:
        break;
    }
    if (in.op != Op::s_load && in.op != Op::s_buffer_load) {
        x.err = "not implemented";
        return;
    }
    uint64_t offset = in.smemImm ? uint64_t(in.imm) : x.sread(in.soffset);
    unsigned n = in.memBytes;
    uint64_t base;
    uint64_t limit = ~0ull;
    if (in.op == Op::s_load) {
        base = x.sread64(in.saddr, false);
    } else {
        uint32_t d[4];
        for (int i = 0; i < 4; ++i)
            d[i] = x.sread(in.saddr + i);
        BufferRsrc b(d);
        base = b.base;
        limit = b.numRecords;
    }
    uint64_t a = (base + offset) & ~3ull;
    for (unsigned k = 0; k < n; ++k) {
        uint32_t v = 0;
        if (offset + 4 * k < limit) {
            uint8_t* p = host(a + 4 * k, 4);
            if (!p)
                return;
            memcpy(&v, p, 4);
        }
        x.wrSgpr(in.vdst + k, v);
    }
}

// ---- Wave and work-group loops
// -------------------------------------------------------------------

bool Executor::runWave(Wave& w) {
    uint64_t* cls = stats.cls;
    // Loop invariants kept in locals: the stores to the counters could alias m_ctx's fields.
    const uint64_t limit = m_ctx.maxWaveInstructions ? m_ctx.maxWaveInstructions : ~0ull;
    const bool tracing = m_ctx.trace && w.id == 0 && stats.workGroups == 1 && m_thread == 0;
    for (;;) {
        if (w.pc & 3) [[unlikely]] {
            m_ctx.fail("misaligned program counter " + hex(w.pc));
            return false;
        }
        const Inst& in = *fetch(w.pc);
        ++cls[in.cls];
        if (++w.executed > limit) [[unlikely]]
            return fail(w, in,
                        "wave exceeded " + std::to_string(m_ctx.maxWaveInstructions) +
                            " instructions (ModelConfig::maxWaveInstructions)");
        if (tracing) [[unlikely]]
            trace(w, in);
        w.pc += in.words * 4;
        switch (in.enc) {
        case Enc::Sopp: {
            int64_t target = int64_t(w.pc) + int64_t(in.imm) * 4;
            switch (in.op) {
            case Op::s_endpgm:
                w.done = true;
                return true;
            case Op::s_barrier:
                if (m_groupWaves > 1) {
                    w.atBarrier = true;
                    return true;
                }
                continue;
            case Op::s_branch:
                w.pc = target;
                continue;
            case Op::s_cbranch_scc0:
                if (!w.scc)
                    w.pc = target;
                continue;
            case Op::s_cbranch_scc1:
                if (w.scc)
                    w.pc = target;
                continue;
            case Op::s_cbranch_vccz:
                if (w.vcc() == 0)
                    w.pc = target;
                continue;
            case Op::s_cbranch_vccnz:
                if (w.vcc() != 0)
                    w.pc = target;
                continue;
            case Op::s_cbranch_execz:
                if (w.exec() == 0)
                    w.pc = target;
                continue;
            case Op::s_cbranch_execnz:
                if (w.exec() != 0)
                    w.pc = target;
                continue;
            case Op::s_nop:
            case Op::s_waitcnt:
            case Op::s_sleep:
            case Op::s_setprio:
            case Op::s_icache_inv:
            case Op::s_incperflevel:
            case Op::s_decperflevel:
            case Op::s_ttracedata:
            case Op::s_wakeup:
                continue;
            case Op::s_trap:
                w.pc -= in.words * 4;
                return fail(w, in, "kernel executed s_trap " + std::to_string(in.imm & 0xff));
            default:
                w.pc -= in.words * 4;
                return fail(w, in, "instruction not implemented by the GCN model");
            }
        }
        case Enc::Sop1:
        case Enc::Sop2:
        case Enc::Sopk:
        case Enc::Sopc: {
            WaveExec x(*this, w, in, 0);
            x.salu();
            if (!x.err.empty()) {
                w.pc -= in.words * 4;
                return fail(w, in,
                            x.err == "not implemented"
                                ? "instruction not implemented by the GCN model"
                                : x.err);
            }
            continue;
        }
        default:
            break;
        }
        if (in.op == Op::Unimplemented) {
            w.pc -= in.words * 4;
            return fail(w, in, "instruction not implemented by the GCN model");
        }
        uint64_t exec = w.exec();
        WaveExec x(*this, w, in, exec);
        bool ok = true;
        switch (in.enc) {
        case Enc::Vop1:
        case Enc::Vop2:
        case Enc::Vopc:
        case Enc::Vop3:
        case Enc::Vop3p: {
            ++stats.valuInstructions;
            // std::popcount is a libgcc call without POPCNT in the baseline ISA.
            stats.valuLaneOps += exec == ~0ull ? 64 : std::popcount(exec);
            if (in.op == Op::v_cmp || in.op == Op::v_cmp_class)
                ok = x.vcmp();
            else
                ok = x.valu();
            break;
        }
        case Enc::Smem: {
            MemExec m{x, *this, w, in};
            m.smem();
            break;
        }
        case Enc::Ds: {
            MemExec m{x, *this, w, in};
            m.ds();
            break;
        }
        case Enc::Mubuf:
        case Enc::Flat: {
            MemExec m{x, *this, w, in};
            m.vmem();
            break;
        }
        default:
            ok = false;
            break;
        }
        if (!ok || !x.err.empty()) {
            w.pc -= in.words * 4;
            return fail(w, in,
                        ok ? x.err : std::string("instruction not implemented by the GCN model"));
        }
    }
}

void Executor::trace(const Wave& w, const Inst& in) {
    // Printed before the instruction runs, so the previous one's result is shown first: its
    // destination VGPR and the next (both halves of a 64-bit result) in the traced lane.
    const unsigned lane = m_ctx.traceLane;
    if (m_traceVdst >= 0)
        fprintf(stderr, "[gcn]        => v%d=%08x v%d=%08x\n", m_traceVdst,
                w.v[m_traceVdst * 64 + lane], m_traceVdst + 1,
                m_traceVdst < 255 ? w.v[(m_traceVdst + 1) * 64 + lane] : 0u);
    const bool valu =
        in.enc == Enc::Vop1 || in.enc == Enc::Vop2 || in.enc == Enc::Vop3 || in.enc == Enc::Vop3p;
    const bool toSgpr = in.op == Op::v_readlane_b32 || in.op == Op::v_readfirstlane_b32 ||
                        in.op == Op::v_cmp || in.op == Op::v_cmp_class;
    const bool memory = in.enc == Enc::Mubuf || in.enc == Enc::Flat || in.enc == Enc::Ds;
    const bool writesVgpr = (valu && !toSgpr) || memory;
    m_traceVdst = writesVgpr ? int(in.vdst) : -1;
    fprintf(stderr, "[gcn] %6llx %-24s words=%u exec=%016llx scc=%d vcc=%016llx",
            static_cast<unsigned long long>(w.pc - m_ctx.state->pgmAddress), in.name, in.words,
            static_cast<unsigned long long>(w.exec()), int(w.scc),
            static_cast<unsigned long long>(w.vcc()));
    for (int i = 0; i < 3; ++i)
        if (in.src[i] >= opnd::kVgpr)
            fprintf(stderr, " v%u=%08x", in.src[i] - opnd::kVgpr,
                    w.v[(in.src[i] - opnd::kVgpr) * 64 + lane]);
        else if (in.src[i] < 102)
            fprintf(stderr, " s%u=%08x", in.src[i], w.s[in.src[i]]);
    fprintf(stderr, "\n");
}

bool Executor::runGroup(const uint32_t groupId[3], const uint32_t size[3]) {
    const DispatchState& st = *m_ctx.state;
    const unsigned items = size[0] * size[1] * size[2];
    const unsigned nWaves = (items + 63) / 64;
    m_groupWaves = nWaves;
    if (m_waves.size() < nWaves) {
        m_waves.resize(nWaves);
        m_vgprs.assign(size_t(nWaves) * 256 * 64, 0);
    }
    m_ldsSize = m_ctx.ldsBytes;
    m_lds.assign(m_ldsSize, 0);
    const uint32_t rsrc2 = st.pgmRsrc2;
    const unsigned tidigCnt = (rsrc2 >> 11) & 3;
    for (unsigned i = 0; i < nWaves; ++i) {
        Wave& w = m_waves[i];
        memset(w.s, 0, sizeof w.s);
        w.v = m_vgprs.data() + size_t(i) * 256 * 64;
        w.pc = st.pgmAddress;
        w.mode = m_ctx.mode;
        w.scc = false;
        w.done = w.atBarrier = false;
        w.executed = 0;
        w.id = i;
        w.scratchSlot = m_thread * nWaves + i;
        unsigned lanes = std::min(64u, items - i * 64);
        w.setExec(lanes == 64 ? ~0ull : (1ull << lanes) - 1);
        unsigned sg = 0;
        for (; sg < m_ctx.userSgprs; ++sg)
            w.s[sg] = st.userData[sg];
        if ((rsrc2 >> 7) & 1)
            w.s[sg++] = groupId[0];
        if ((rsrc2 >> 8) & 1)
            w.s[sg++] = groupId[1];
        if ((rsrc2 >> 9) & 1)
            w.s[sg++] = groupId[2];
        if ((rsrc2 >> 10) & 1)
            w.s[sg++] = nWaves; // work-group info: wave count
        if (rsrc2 & 1)
            w.s[sg++] = uint32_t(uint64_t(w.scratchSlot) * m_ctx.scratchWaveBytes);
        uint32_t* v0 = w.vrow(0);
        uint32_t* v1 = w.vrow(1);
        uint32_t* v2 = w.vrow(2);
        // Work-item ids of lane l (item t = i * 64 + l; lanes past the group's end repeat the
        // last item), counted up from the wave's first item: divisions only once per wave.
        const unsigned t0 = i * 64, last = items - 1;
        unsigned x = t0 % size[0], y = (t0 / size[0]) % size[1], z = t0 / (size[0] * size[1]);
        const unsigned lastX = last % size[0], lastY = (last / size[0]) % size[1],
                       lastZ = last / (size[0] * size[1]);
        for (unsigned l = 0; l < 64; ++l) {
            const bool past = t0 + l >= items;
            v0[l] = past ? lastX : x;
            if (tidigCnt >= 1)
                v1[l] = past ? lastY : y;
            if (tidigCnt >= 2)
                v2[l] = past ? lastZ : z;
            if (++x == size[0]) {
                x = 0;
                if (++y == size[1])
                    y = 0, ++z;
            }
        }
    }
    stats.wavefronts += nWaves;
    ++stats.workGroups;
    // Run each wave to its next barrier (or end); release the barrier when every wave still
    // running has reached it.
    for (;;) {
        unsigned running = 0, waiting = 0;
        for (unsigned i = 0; i < nWaves; ++i) {
            Wave& w = m_waves[i];
            if (w.done || w.atBarrier)
                continue;
            if (!runWave(w))
                return false;
            if (m_ctx.failed.load(std::memory_order_relaxed))
                return false;
        }
        for (unsigned i = 0; i < nWaves; ++i) {
            if (m_waves[i].done)
                continue;
            ++running;
            waiting += m_waves[i].atBarrier;
        }
        if (running == 0)
            return true;
        if (waiting == running)
            for (unsigned i = 0; i < nWaves; ++i)
                m_waves[i].atBarrier = false;
    }
}

} // namespace duet::gcn::model
