// The vector comparisons: v_cmp(x)_<cond>_<type> and v_cmp(x)_class_<type> write a lane mask.
#include "wave_exec.hpp"

namespace duet::gcn::model {

namespace {

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

} // namespace

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

} // namespace duet::gcn::model
