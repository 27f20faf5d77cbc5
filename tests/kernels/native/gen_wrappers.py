#!/usr/bin/env python3
"""Generates OpenCL C wrappers around builtins (plain C-named functions over arrays) and the
C++ table that names them, for the native test of the CPU builtin library: the wrappers are
compiled like user code, linked with the library, retargeted to the host and called directly.

Usage: gen_wrappers.py OUT.cl OUT.inc
"""
import sys

UNARY = ["acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atanh", "atanpi",
         "cbrt", "ceil", "cos", "cosh", "cospi", "erfc", "erf", "exp", "exp2", "exp10", "expm1",
         "fabs", "floor", "log", "log2", "log10", "log1p", "logb", "rint", "round", "rsqrt",
         "sin", "sinh", "sinpi", "sqrt", "tan", "tanh", "tanpi", "tgamma", "trunc"]
UNARY_FLOAT_ONLY = ["half_cos", "half_exp", "half_log", "half_sqrt", "half_recip"]
BINARY = ["atan2", "atan2pi", "copysign", "fdim", "fmax", "fmin", "fmod", "hypot", "maxmag",
          "minmag", "pow", "powr", "remainder"]
BINARY_FLOAT_ONLY = ["half_divide"]
WIDTHS = [1, 3, 4, 16]
TYPES = ["char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double"]
MODES = ["", "_rte", "_rtz", "_rtp", "_rtn"]
INT_FNS = ["abs", "abs_diff", "add_sat", "sub_sat", "hadd", "rhadd", "clamp", "clz", "ctz",
           "popcount", "mad_hi", "mad_sat", "max", "min", "mul_hi", "rotate", "mul24", "mad24"]
INTS = ["char", "uchar", "short", "ushort", "int", "uint", "long", "ulong"]


def ld(w, p):
    return f"{p}[i]" if w == 1 else f"vload{w}(i, {p})"


def st(w, v, p):
    return f"{p}[i] = {v};" if w == 1 else f"vstore{w}({v}, i, {p});"


def main():
    cl = ["#pragma OPENCL EXTENSION cl_khr_fp64 : enable"]
    inc = []
    for t in ["float", "double"]:
        for arity, names in ((1, UNARY + (UNARY_FLOAT_ONLY if t == "float" else [])),
                             (2, BINARY + (BINARY_FLOAT_ONLY if t == "float" else []))):
            for f in names:
                for w in WIDTHS:
                    n = f"n_{f}_{t}_{w}"
                    args = ld(w, "x") + (", " + ld(w, "x2") if arity == 2 else "")
                    cl.append(f"void {n}(const {t}* x, const {t}* x2, {t}* y, int n) {{ "
                              f"for (int i = 0; i < n / {w}; ++i) {{ {st(w, f'{f}({args})', 'y')} }} }}")
                    inc.append(f'W("{f}", "{t}", {w}, {n})')
        # int-argument and pointer forms, as in the kernel test.
        cl.append(f"""void n_mixed_{t}(const {t}* x, const {t}* x2, const int* nn, {t}* y, int* iy, int n) {{
  for (int i = 0; i < n; ++i) {{
    y[9*i+0] = pown(x[i], nn[i]); y[9*i+1] = rootn(x[i], nn[i]); y[9*i+2] = ldexp(x[i], nn[i]);
    iy[4*i+0] = ilogb(x[i]);
    int e; y[9*i+3] = frexp(x[i], &e); iy[4*i+1] = e;
    {t} ip; y[9*i+4] = fract(x[i], &ip); y[9*i+5] = ip;
    {t} c; y[9*i+6] = sincos(x[i], &c); y[9*i+7] = c;
    int q; y[9*i+8] = remquo(x[i], x2[i], &q); iy[4*i+2] = q;
  }}
}}""")
    # Conversions.
    for d in TYPES:
        for s in TYPES:
            for sat in (["", "_sat"] if d not in ("float", "double") else [""]):
                for m in MODES:
                    for w in [1, 3, 4, 16]:
                        fn = f"convert_{d}{w if w > 1 else ''}{sat}{m}"
                        n = f"n_cv_{d}_{s}{sat}{m}_{w}"
                        cl.append(f"void {n}(const {s}* x, {d}* y, int n) {{ for (int i = 0; i < n / {w}; ++i) {{ "
                                  f"{st(w, f'{fn}({ld(w, chr(120))})', 'y')} }} }}")
                        inc.append(f'C("{d}", "{s}", {1 if sat else 0}, {MODES.index(m)}, {w}, {n})')
    # Integer functions.
    for t in INTS:
        for w in [1, 3, 4]:
            T = t + (str(w) if w > 1 else "")
            is32 = t in ("int", "uint")
            body = [f"{T} x = {ld(w, 'a')}, y = {ld(w, 'b')}, z = {ld(w, 'c')};",
                    f"{T} lo = min(y, z), hi = max(y, z);"]
            for j, f in enumerate(INT_FNS):
                if f == "abs": call = f"as_{T}(abs(x))"
                elif f == "abs_diff": call = f"as_{T}(abs_diff(x, y))"
                elif f == "clamp": call = "clamp(x, lo, hi)"
                elif f in ("clz", "ctz", "popcount"): call = f"{f}(x)"
                elif f in ("mad_hi", "mad_sat"): call = f"{f}(x, y, z)"
                elif f == "mul24": call = "mul24(x >> 17, y >> 17)" if is32 else "x"
                elif f == "mad24": call = "mad24(x >> 17, y >> 17, z)" if is32 else "x"
                else: call = f"{f}(x, y)"
                body.append(st(w, call, f"(out + {j} * (size_t)n)"))
            n = f"n_int_{t}_{w}"
            cl.append(f"void {n}(const {t}* a, const {t}* b, const {t}* c, {t}* out, int n) {{ "
                      f"for (int i = 0; i < n / {w}; ++i) {{ {' '.join(body)} }} }}")
            inc.append(f'I("{t}", {w}, {n})')
    # Half loads and stores.
    for j, m in enumerate(MODES):
        for t in ["float", "double"]:
            cl.append(f"void n_vsh_{t}{m}(const {t}* x, half* h, int n) {{ for (int i = 0; i < n; ++i) "
                      f"vstore_half{m}(x[i], i, h); for (int i = 0; i < n / 4; ++i) "
                      f"vstore_half4{m}(vload4(i, x), i, h + n); }}")
            inc.append(f'H("{t}", {j}, n_vsh_{t}{m})')
    cl.append("void n_vlh(const half* h, float* f, float* f4, float* fa3, int n) { "
              "for (int i = 0; i < n; ++i) f[i] = vload_half(i, h); "
              "for (int i = 0; i < n / 4; ++i) { vstore4(vload_half4(i, h), i, f4); "
              "vstore3(vloada_half3(i, h), i, fa3); } }")
    # Relational, scalar and vector.
    rel = ["isequal", "isnotequal", "isgreater", "isgreaterequal", "isless", "islessequal",
           "islessgreater", "isfinite", "isinf", "isnan", "isnormal", "isordered",
           "isunordered", "signbit"]
    body = []
    for j, f in enumerate(rel):
        one = f in ("isfinite", "isinf", "isnan", "isnormal", "signbit")
        a1, a4 = ("x", "x4") if one else ("x, y", "x4, y4")
        body.append(f"s[i*14+{j}] = {f}({a1}); {{ int4 q = {f}({a4}); "
                    f"v[i*14+{j}] = (q.x == q.w) ? (q.x & q.y & q.z & q.w) : 99; }}")
    cl.append("void n_rel(const float* a, const float* b, int* s, int* v, int n) { "
              "for (int i = 0; i < n; ++i) { float x = a[i], y = b[i]; float4 x4 = (float4)(x), "
              "y4 = (float4)(y); " + " ".join(body) + " } }")
    # Atomics: each call does `iters` operations of every kind on shared counters, so
    # concurrent host threads contend on them. Generic pointers are cast to __global for the
    # OpenCL 1.x names.
    cl.append("""void n_atomics(int* c, long* l, int* olds, int iters, int tid) {
  volatile __global int* g = (volatile __global int*)c;
  volatile __global long* gl = (volatile __global long*)l;
  volatile atomic_int* a = (volatile atomic_int*)(c + 8);
  volatile atomic_long* al = (volatile atomic_long*)(l + 4);
  for (int i = 0; i < iters; ++i) {
    olds[i] = atomic_inc(&g[0]);
    atomic_add(&g[1], 3);
    atomic_sub(&g[2], 2);
    atomic_max(&g[3], tid * iters + i);
    atomic_min(&g[4], -(tid * iters + i));
    atomic_or(&g[5], 1 << (i % 31));
    atomic_xor(&g[6], tid * iters + i);
    int prev; do { prev = g[7]; } while (atomic_cmpxchg(&g[7], prev, prev + 1) != prev);
    atom_add(&gl[0], 1L << 34);
    atom_inc(&gl[1]);
    long p2; do { p2 = gl[2]; } while (atom_cmpxchg(&gl[2], p2, p2 + 5) != p2);
    atomic_fetch_add_explicit(&a[0], 2, memory_order_relaxed, memory_scope_device);
    atomic_fetch_sub(&a[1], 1);
    int e = atomic_load(&a[2]);
    while (!atomic_compare_exchange_weak(&a[2], &e, e + 3)) {}
    atomic_fetch_add(&al[0], 7L);
    atomic_fetch_max(&al[1], (long)(tid * iters + i));
  }
}""")
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(cl) + "\n")
    with open(sys.argv[2], "w") as f:
        f.write("// Generated by gen_wrappers.py.\n" + "\n".join(inc) + "\n")


if __name__ == "__main__":
    main()
