#!/usr/bin/env python3
"""Retargets linked spir64 LLVM IR text to the host (x86-64 Linux) for the native test:
new triple and data layout, SPIR calling conventions dropped, and the `arcp` flags of rsqrt's
division and square root dropped as the CPU JIT does where it does not use AVX-512's estimate
(runtime/devices/cpu/jit/rsqrt_estimates.hpp; llc would otherwise make its own estimate, which
gives NaN for rsqrt(0)), and the builtin library's system-scope atomics marker
(`__duet_scope_all`, an identity the JIT removes: runtime/devices/cpu/jit/local_atomics.hpp)
defined as that identity. Usage: retarget.py IN.ll OUT.ll"""
import re
import sys

text = open(sys.argv[1]).read()
text = re.sub(r'^target datalayout = ".*"$',
              'target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-'
              'f80:128-n8:16:32:64-S128"', text, flags=re.M)
text = re.sub(r'^target triple = ".*"$', 'target triple = "x86_64-pc-linux-gnu"', text,
              flags=re.M)
text = text.replace("spir_func ", "").replace("spir_kernel ", "")
text = re.sub(r" arcp\b", "", text)
text = re.sub(r"^declare [^@\n]*(ptr addrspace\(\d+\)) (@_Z16__duet_scope_all\w*)\(ptr addrspace\(\d+\)"
              r"[^)]*\)[^\n]*$",
              lambda m: "define internal %s %s(%s %%p) {\n  ret %s %%p\n}" % (
                  m.group(1), m.group(2), m.group(1), m.group(1)),
              text, flags=re.M)
open(sys.argv[2], "w").write(text)
