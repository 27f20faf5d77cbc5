#!/usr/bin/env python3
"""Completeness check of the CPU builtin library: every builtin that clang declares for the
device's feature set must be defined by the library.

For each OpenCL C version, clang's full builtin header (opencl-c.h, which clang keeps in step
with its TableGen'd -fdeclare-opencl-builtins declarations) is preprocessed with the device's
-cl-ext set; every overloadable function declaration in it becomes one call in a generated
kernel, compiled the way user code is (-fdeclare-opencl-builtins). The module is linked with
the library; any mangled (_Z) symbol left undefined is a builtin the library lacks. Families
that the library leaves to others on purpose (work-item functions, barriers, printf: lowered by
the compiler) are excluded by name and listed in the output.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

# Families not defined by the library, with the reason (regex on the function name).
EXCLUDED = [
    (r"^get_(global|local|group|num_groups|enqueued_local|work_dim|global_offset)\w*$|"
     r"^get_(global|local)_linear_id$|^get_(local|global|enqueued_local)_size$",
     "work-item function, lowered by the compiler"),
    (r"^(barrier|work_group_barrier)$", "barrier, lowered by the compiler"),
    (r"^printf$", "printf, lowered by the compiler"),
    (r"^(intel_sub_group|intel_)\w*", "Intel sub-groups: not supported"),
    (r"^(enqueue_kernel|enqueue_marker|retain_event|release_event|create_user_event|"
     r"is_valid_event|set_user_event_status|capture_event_profiling_info|"
     r"get_default_queue|ndrange_[123]D|get_kernel_\w+)$",
     "device-side enqueue: not supported"),
    (r"^(amd_|mad24hi)\w*", "vendor extension: not supported"),
    (r"^(get_fence|to_global|to_local|to_private)$",
     "generic address space queries: clang builtins"),
]

TYPE_WORD = re.compile(
    r"^(u?(char|short|int|long)|float|double|half|bool|void|unsigned|signed|size_t|ptrdiff_t|"
    r"u?intptr_t|event_t|memory_order|memory_scope|cl_mem_fence_flags|atomic_\w+|sampler_t|"
    r"image\w+|queue_t|clk_event_t|ndrange_t|reserve_id_t|clk_profiling_info|"
    r"kernel_enqueue_flags_t|const|volatile|__\w+|struct|enum)\d*$")


def parse_decls(text):
    text = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", " __ATTR__ ", text)
    decls = []
    for stmt in text.split(";"):
        if "__ATTR__" not in stmt or "{" in stmt or "typedef" in stmt:
            continue
        stmt = " ".join(stmt.split("}")[-1].split())
        m = re.match(r"^(.*?)\b([A-Za-z_]\w*)\s*\((.*)\)\s*(__ATTR__\s*)*$", stmt)
        if not m:
            continue
        ret = m.group(1).replace("__ATTR__", "").strip()
        name = m.group(2)
        params = [p.strip() for p in m.group(3).split(",")] if m.group(3).strip() else []
        if params == ["void"]:
            params = []
        types = []
        for p in params:
            p = p.replace("__ATTR__", "").strip()
            if "*" in p:
                p = p[: p.rindex("*") + 1]
            else:
                toks = p.split()
                if len(toks) > 1 and not TYPE_WORD.match(toks[-1]):
                    toks = toks[:-1]
                p = " ".join(toks)
            types.append(p)
        decls.append((ret, name, tuple(types)))
    return decls


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clang", required=True)
    ap.add_argument("--llvm-link", required=True)
    ap.add_argument("--llvm-nm", required=True)
    ap.add_argument("--library", required=True,
                    help="bitcode library; several, comma separated, are linked in that order")
    ap.add_argument("--target", default="spir64-unknown-unknown",
                    help="the triple user code is compiled for")
    ap.add_argument("--define", action="append", default=[],
                    help="a macro the device's front end defines (-D)")
    ap.add_argument("--unsupported", action="append", default=[],
                    help="REGEX=REASON: a family the device does not support (excluded)")
    ap.add_argument("--ext", required=True, help="value of -cl-ext for the device")
    ap.add_argument("--std", action="append", default=[])
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    resource = run([args.clang, "-print-resource-dir"]).stdout.strip()
    header = os.path.join(resource, "include", "opencl-c.h")
    excluded_re = [(re.compile(r), why) for r, why in EXCLUDED]
    for u in args.unsupported:
        r, _, why = u.partition("=")
        excluded_re.append((re.compile(r), why or "not supported by this device"))
    failed = False

    for std in args.std or ["CL1.2", "CL3.0"]:
        tag = std.replace(".", "")
        base = [args.clang, "-target", args.target, "-cl-std=" + std,
                "-Xclang", "-cl-ext=" + args.ext] + ["-D" + d for d in args.define]
        pre = run(base + ["-E", "-P", "-x", "cl", header])
        if pre.returncode:
            print(pre.stderr)
            return 2
        decls = sorted(set(parse_decls(pre.stdout)))
        kept, skipped = [], collections.Counter()
        for d in decls:
            why = next((w for r, w in excluded_re if r.search(d[1])), None)
            if why:
                skipped[why] += 1
            else:
                kept.append(d)

        # One function per declaration; declarations that clang's TableGen'd builtins do not
        # have (compile errors) are dropped and reported.
        dropped = []
        while True:
            lines = ["#pragma OPENCL EXTENSION all : enable"]
            where = {}
            for i, (ret, name, types) in enumerate(kept):
                # Images and samplers cannot be local variables: they become kernel
                # parameters; everything else is a local.
                opaque = [j for j, t in enumerate(types) if re.search(r"image|sampler_t", t)]
                params = ", ".join(f"{types[j]} a{j}" for j in opaque) or "void"
                decl = "; ".join(f"{t} a{j}" if "*" not in t else f"{t} a{j} = 0"
                                 for j, t in enumerate(types) if j not in opaque)
                call = f"{name}({', '.join(f'a{j}' for j in range(len(types)))})"
                where[len(lines) + 1] = i
                kind = "kernel void" if opaque else "void"
                lines.append(f"{kind} duet_call_{i}({params}) {{ {decl}; (void){call}; }}")
            src = os.path.join(args.workdir, f"calls.{tag}.cl")
            with open(src, "w") as f:
                f.write("\n".join(lines) + "\n")
            bc = os.path.join(args.workdir, f"calls.{tag}.bc")
            res = run(base + ["-Xclang", "-finclude-default-header", "-Xclang",
                              "-fdeclare-opencl-builtins", "-emit-llvm", "-c", "-O0",
                              "-ferror-limit=0", "-w", src, "-o", bc])
            if res.returncode == 0:
                break
            bad = set()
            for m in re.finditer(r"calls\.\w+\.cl:(\d+):\d+: error", res.stderr):
                if int(m.group(1)) in where:
                    bad.add(where[int(m.group(1))])
            if not bad:
                print(res.stderr[:4000])
                return 2
            dropped += [kept[i] for i in sorted(bad)]
            kept = [d for i, d in enumerate(kept) if i not in bad]

        called = {l.split()[-1] for l in run([args.llvm_nm, "--undefined-only", bc]).stdout
                  .splitlines() if l.split()[-1].startswith("_Z")}
        linked = os.path.join(args.workdir, f"linked.{tag}.bc")
        res = run([args.llvm_link, bc] + args.library.split(",") + ["-o", linked])
        if res.returncode:
            print(res.stderr)
            return 2
        undefined = {l.split()[-1] for l in run([args.llvm_nm, "--undefined-only", linked])
                     .stdout.splitlines()}
        missing = sorted(s for s in undefined & called)
        print(f"[{std}] opencl-c.h declarations: {len(decls)}; excluded families: "
              f"{sum(skipped.values())}; not declared by -fdeclare-opencl-builtins: "
              f"{len(dropped)}; checked: {len(kept)} declarations = {len(called)} mangled "
              f"symbols; defined by the library: {len(called) - len(missing)}; "
              f"missing: {len(missing)}")
        for why, n in sorted(skipped.items()):
            print(f"    excluded {n:5d}: {why}")
        # A declaration the generated call cannot reach is not checked: fail rather than
        # skip it silently (it would hide a generator gap, as local image variables did).
        for d in dropped:
            print(f"    NOT CHECKED (call does not compile with TableGen builtins): {d}")
        failed |= bool(dropped)
        if missing:
            failed = True
            demangled = run(["c++filt"], input="\n".join(missing)).stdout.splitlines()
            for m, d in zip(missing, demangled):
                print(f"    MISSING {m}  {d}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
