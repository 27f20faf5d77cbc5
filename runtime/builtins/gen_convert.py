#!/usr/bin/env python3
"""Generates the OpenCL C conversion builtins (OpenCL C 3.0 §6.4.3):
convert_<dst><n>[_sat][_rte|_rtz|_rtp|_rtn](<src><n>) for every pair of char..ulong, float,
double and every width. Rounding is exact without touching the FP environment: float->int
rounds with roundeven/ceil/floor/trunc first; int->float and double->float round to nearest
and then step one ulp when the nearest result lies on the wrong side of the exact value,
found by comparing exactly in the source domain.

Usage: gen_convert.py OUTPUT.cl
"""
import sys

INTS = {  # name: (bits, signed)
    "char": (8, True), "uchar": (8, False), "short": (16, True), "ushort": (16, False),
    "int": (32, True), "uint": (32, False), "long": (64, True), "ulong": (64, False),
}
FLOATS = {"float": (24, "uint", 32), "double": (53, "ulong", 64)}  # mantissa, bits type
TYPES = list(INTS) + list(FLOATS)
WIDTHS = ["", "2", "3", "4", "8", "16"]
MODES = ["", "_rte", "_rtz", "_rtp", "_rtn"]


def int_range(t):
    bits, signed = INTS[t]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def int_lit(v, t):
    """A literal of value v usable in type t's context."""
    if v == -(1 << 63):
        return "(long)(-9223372036854775807L - 1)"
    if v == -(1 << 31):
        return "(-2147483647 - 1)"
    suffix = "ul" if v > (1 << 63) - 1 else ("l" if abs(v) > (1 << 31) - 1 else "")
    return f"({t}){v}{suffix}"


def fp_lit(v):
    """An exact double literal for a power of two or small integer."""
    return f"{float(v).hex()}" if v else "0.0"


ROUND = {"float": {"": "__builtin_truncf", "_rtz": "__builtin_truncf",
                   "_rte": "__builtin_roundevenf", "_rtp": "__builtin_ceilf",
                   "_rtn": "__builtin_floorf"},
         "double": {"": "__builtin_trunc", "_rtz": "__builtin_trunc",
                    "_rte": "__builtin_roundeven", "_rtp": "__builtin_ceil",
                    "_rtn": "__builtin_floor"}}


def is_plain_cast(dst, src, sat, mode):
    """True when the C cast (LLVM's conversion instruction) is exactly the conversion."""
    if dst == src:
        return True
    if dst in INTS and src in INTS:
        if not sat:
            return True
        (dlo, dhi), (slo, shi) = int_range(dst), int_range(src)
        return dlo <= slo and shi <= dhi
    if dst in INTS:  # from floating point: C casts truncate
        return not sat and mode in ("", "_rtz")
    if src in INTS:  # to floating point: C casts round to nearest
        bits, _ = INTS[src]
        if bits <= FLOATS[dst][0]:
            return True  # every value exact
        return mode in ("", "_rte")
    if src == "float":
        return True  # float -> double is exact
    return mode in ("", "_rte")  # double -> float


def through_int(dst, src, sat):
    """Unsaturated floating point -> char/short goes through int, so an out-of-range element
    (undefined in C) wraps on its own instead of letting the compiler assume it cannot happen:
    LLVM's AMDGPU backend packs fptoui-to-i8 lanes with ORs that let one out-of-range lane
    corrupt its neighbours."""
    return dst in INTS and INTS[dst][0] < 32 and src in FLOATS and not sat


def scalar_body(dst, src, sat, mode):
    if is_plain_cast(dst, src, sat, mode):
        return f"return ({dst})(int)x;" if through_int(dst, src, sat) else f"return ({dst})x;"
    if dst in INTS and src in INTS:  # saturation
        (dlo, dhi), (slo, shi) = int_range(dst), int_range(src)
        lines = []
        if slo < dlo:
            lines.append(f"if (x < {int_lit(dlo, src)}) return {int_lit(dlo, dst)};")
        if shi > dhi:
            lines.append(f"if (x > {int_lit(dhi, src)}) return {int_lit(dhi, dst)};")
        lines.append(f"return ({dst})x;")
        return " ".join(lines)
    if dst in INTS:  # floating point -> integer
        r = ROUND[src][mode]
        lines = [f"{src} r = {r}(x);"]
        if sat:
            bits, signed = INTS[dst]
            dlo, dhi = int_range(dst)
            lim = 1 << (bits - 1 if signed else bits)
            lines.append("if (x != x) return 0;")
            lines.append(f"if (r >= {fp_lit(lim)}) return {int_lit(dhi, dst)};")
            lines.append(f"if (r < {fp_lit(dlo)}) return {int_lit(dlo, dst)};")
        lines.append(f"return ({dst})(int)r;" if through_int(dst, src, sat) else
                     f"return ({dst})r;")
        return " ".join(lines)
    if src in INTS:  # integer -> floating point with a directed rounding mode
        bits, signed = INTS[src]
        lim = 1 << (bits - 1 if signed else bits)
        return (f"{dst} r = ({dst})x; int cmp; "
                f"if (r >= {fp_lit(lim)}) cmp = 1; "
                f"else {{ {src} ri = ({src})r; cmp = ri > x ? 1 : (ri < x ? -1 : 0); }} "
                f"return duet_adjust_{dst}(r, cmp, x < 0, {mode_id(mode)});")
    # double -> float with a directed rounding mode
    return ("float r = (float)x; if (r != r) return r; double rd = (double)r; "
            "int cmp = rd > x ? 1 : (rd < x ? -1 : 0); "
            f"return duet_adjust_float(r, cmp, x < 0, {mode_id(mode)});")


def mode_id(mode):
    return {"_rtz": 0, "_rtp": 1, "_rtn": 2}[mode]


PRELUDE = r"""// Generated by gen_convert.py: OpenCL C conversion builtins. Do not edit.
#include "builtins.h"

// r is the round-to-nearest result, cmp the sign of (r - exact). Moves r one ulp where the
// directed mode (0 rtz, 1 rtp, 2 rtn) wants the other neighbour of the exact value.
#define DUET_ADJUST(T, U, MIN_DENORM_BITS)                                                     \
    DUET_INLINE T duet_nextup_##T(T r) {                                                       \
        if (r == 0)                                                                            \
            return DUET_AS(T, (U)MIN_DENORM_BITS);                                             \
        U b = DUET_AS(U, r);                                                                   \
        return DUET_AS(T, r > 0 ? b + 1 : b - 1);                                              \
    }                                                                                          \
    DUET_INLINE T duet_adjust_##T(T r, int cmp, bool negative, int mode) {                     \
        if (mode == 0)                                                                         \
            mode = negative ? 1 : 2;                                                           \
        if (mode == 1 && cmp < 0)                                                              \
            return duet_nextup_##T(r);                                                         \
        if (mode == 2 && cmp > 0)                                                              \
            return -duet_nextup_##T(-r);                                                       \
        return r;                                                                              \
    }
DUET_ADJUST(float, uint, 1u)
DUET_ADJUST(double, ulong, 1ul)
"""


def main():
    out = [PRELUDE]
    for dst in TYPES:
        for src in TYPES:
            for sat in ([False, True] if dst in INTS else [False]):
                for mode in MODES:
                    suffix = ("_sat" if sat else "") + mode
                    name = f"convert_{dst}{{n}}{suffix}"
                    out.append(f"DUET_CONST {dst} {name.format(n='')}({src} x) "
                               f"{{ {scalar_body(dst, src, sat, mode)} }}")
                    plain = is_plain_cast(dst, src, sat, mode)
                    for w in WIDTHS[1:]:
                        fn = name.format(n=w)
                        dt, st = dst + w, src + w
                        # Narrow unsaturated results from floating point go through int.
                        def cv(v):
                            if through_int(dst, src, sat):
                                v = f"__builtin_convertvector({v}, int{w})"
                            return f"return __builtin_convertvector({v}, {dt});"
                        if plain:
                            body = cv("x")
                        elif (dst in INTS and src in FLOATS and not sat):
                            r = ROUND[src][mode].replace("__builtin_", "").rstrip("f")
                            r = {"trunc": "trunc", "roundeven": "roundeven", "ceil": "ceil",
                                 "floor": "floor"}[r]
                            body = cv(f"__builtin_elementwise_{r}(x)")
                        elif w == "3":
                            body = (f"return ({dt})({name.format(n='')}(x.x), "
                                    f"{name.format(n='')}(x.y), {name.format(n='')}(x.z));")
                        else:
                            half = str(int(w) // 2) if w != "2" else ""
                            hn = name.format(n=half)
                            body = f"return ({dt})({hn}(x.lo), {hn}(x.hi));"
                        out.append(f"DUET_CONST {dt} {fn}({st} x) {{ {body} }}")
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
