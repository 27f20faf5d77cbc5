#!/usr/bin/env python3
"""Retargets linked spir64 LLVM IR text to the host (x86-64 Linux) for the native test:
new triple and data layout, SPIR calling conventions dropped, and the `arcp` flags of rsqrt's
division and square root dropped as the CPU JIT does where it does not use AVX-512's estimate
(runtime/devices/cpu/jit/rsqrt_estimates.hpp; llc would otherwise make its own estimate, which
gives NaN for rsqrt(0)). Usage: retarget.py IN.ll OUT.ll"""
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
open(sys.argv[2], "w").write(text)
