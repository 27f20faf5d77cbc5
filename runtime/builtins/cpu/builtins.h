// Shared helpers for the CPU builtin library (OpenCL C, compiled to spir64 bitcode).
#pragma once
#define DUET_OVL __attribute__((overloadable))
#define DUET_CONST __attribute__((overloadable, const))
