// Shared helpers for the CPU builtin library (OpenCL C, compiled to spir64 bitcode).
#pragma once

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define DUET_OVL __attribute__((overloadable))
// Only for functions that read no memory: lets LLVM hoist and vectorise calls.
#define DUET_CONST __attribute__((overloadable, const))
#define DUET_INLINE static inline __attribute__((always_inline))

// True in the pass that builds generic-address-space overloads (CL3.0); false in the pass
// that builds the named-address-space overloads (CL1.2). Sources that take no pointers are
// only built in the generic pass.
#if __OPENCL_C_VERSION__ >= 200
#define DUET_GENERIC_PASS 1
#else
#define DUET_GENERIC_PASS 0
#endif

// Vector forms from scalar ones. Each width splits into halves (3 into components), so a
// vector function is the scalar function applied per component; LLVM re-vectorises where it
// pays. R is the scalar result type, A/B/C the scalar argument types; V means "same width
// vector", S means "scalar argument kept as is".
#define DUET_VEC_1(ATTR, R, F, A)                                                              \
    ATTR R##2 F(A##2 x) { return (R##2)(F(x.lo), F(x.hi)); }                                   \
    ATTR R##3 F(A##3 x) { return (R##3)(F(x.x), F(x.y), F(x.z)); }                             \
    ATTR R##4 F(A##4 x) { return (R##4)(F(x.lo), F(x.hi)); }                                   \
    ATTR R##8 F(A##8 x) { return (R##8)(F(x.lo), F(x.hi)); }                                   \
    ATTR R##16 F(A##16 x) { return (R##16)(F(x.lo), F(x.hi)); }

#define DUET_VEC_2VV(ATTR, R, F, A, B)                                                         \
    ATTR R##2 F(A##2 x, B##2 y) { return (R##2)(F(x.lo, y.lo), F(x.hi, y.hi)); }               \
    ATTR R##3 F(A##3 x, B##3 y) { return (R##3)(F(x.x, y.x), F(x.y, y.y), F(x.z, y.z)); }      \
    ATTR R##4 F(A##4 x, B##4 y) { return (R##4)(F(x.lo, y.lo), F(x.hi, y.hi)); }               \
    ATTR R##8 F(A##8 x, B##8 y) { return (R##8)(F(x.lo, y.lo), F(x.hi, y.hi)); }               \
    ATTR R##16 F(A##16 x, B##16 y) { return (R##16)(F(x.lo, y.lo), F(x.hi, y.hi)); }

#define DUET_VEC_2VS(ATTR, R, F, A, B)                                                         \
    ATTR R##2 F(A##2 x, B y) { return (R##2)(F(x.lo, y), F(x.hi, y)); }                        \
    ATTR R##3 F(A##3 x, B y) { return (R##3)(F(x.x, y), F(x.y, y), F(x.z, y)); }               \
    ATTR R##4 F(A##4 x, B y) { return (R##4)(F(x.lo, y), F(x.hi, y)); }                        \
    ATTR R##8 F(A##8 x, B y) { return (R##8)(F(x.lo, y), F(x.hi, y)); }                        \
    ATTR R##16 F(A##16 x, B y) { return (R##16)(F(x.lo, y), F(x.hi, y)); }

#define DUET_VEC_3VVV(ATTR, R, F, A, B, C)                                                     \
    ATTR R##2 F(A##2 x, B##2 y, C##2 z) {                                                      \
        return (R##2)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi));                               \
    }                                                                                          \
    ATTR R##3 F(A##3 x, B##3 y, C##3 z) {                                                      \
        return (R##3)(F(x.x, y.x, z.x), F(x.y, y.y, z.y), F(x.z, y.z, z.z));                   \
    }                                                                                          \
    ATTR R##4 F(A##4 x, B##4 y, C##4 z) {                                                      \
        return (R##4)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi));                               \
    }                                                                                          \
    ATTR R##8 F(A##8 x, B##8 y, C##8 z) {                                                      \
        return (R##8)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi));                               \
    }                                                                                          \
    ATTR R##16 F(A##16 x, B##16 y, C##16 z) {                                                  \
        return (R##16)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi));                              \
    }

// Vector first argument, scalar second and third (clamp(floatn, float, float)).
#define DUET_VEC_3VSS(ATTR, R, F, A, B, C)                                                     \
    ATTR R##2 F(A##2 x, B y, C z) { return (R##2)(F(x.lo, y, z), F(x.hi, y, z)); }             \
    ATTR R##3 F(A##3 x, B y, C z) { return (R##3)(F(x.x, y, z), F(x.y, y, z), F(x.z, y, z)); } \
    ATTR R##4 F(A##4 x, B y, C z) { return (R##4)(F(x.lo, y, z), F(x.hi, y, z)); }             \
    ATTR R##8 F(A##8 x, B y, C z) { return (R##8)(F(x.lo, y, z), F(x.hi, y, z)); }             \
    ATTR R##16 F(A##16 x, B y, C z) { return (R##16)(F(x.lo, y, z), F(x.hi, y, z)); }

// Scalar first and second argument, vector third (smoothstep(float, float, floatn)).
#define DUET_VEC_3SSV(ATTR, R, F, A, B, C)                                                     \
    ATTR R##2 F(A x, B y, C##2 z) { return (R##2)(F(x, y, z.lo), F(x, y, z.hi)); }             \
    ATTR R##3 F(A x, B y, C##3 z) { return (R##3)(F(x, y, z.x), F(x, y, z.y), F(x, y, z.z)); } \
    ATTR R##4 F(A x, B y, C##4 z) { return (R##4)(F(x, y, z.lo), F(x, y, z.hi)); }             \
    ATTR R##8 F(A x, B y, C##8 z) { return (R##8)(F(x, y, z.lo), F(x, y, z.hi)); }             \
    ATTR R##16 F(A x, B y, C##16 z) { return (R##16)(F(x, y, z.lo), F(x, y, z.hi)); }

// Vector, vector, scalar (mix(floatn, floatn, float)).
#define DUET_VEC_3VVS(ATTR, R, F, A, B, C)                                                     \
    ATTR R##2 F(A##2 x, B##2 y, C z) { return (R##2)(F(x.lo, y.lo, z), F(x.hi, y.hi, z)); }    \
    ATTR R##3 F(A##3 x, B##3 y, C z) {                                                         \
        return (R##3)(F(x.x, y.x, z), F(x.y, y.y, z), F(x.z, y.z, z));                         \
    }                                                                                          \
    ATTR R##4 F(A##4 x, B##4 y, C z) { return (R##4)(F(x.lo, y.lo, z), F(x.hi, y.hi, z)); }    \
    ATTR R##8 F(A##8 x, B##8 y, C z) { return (R##8)(F(x.lo, y.lo, z), F(x.hi, y.hi, z)); }    \
    ATTR R##16 F(A##16 x, B##16 y, C z) { return (R##16)(F(x.lo, y.lo, z), F(x.hi, y.hi, z)); }

// Apply M(type) to every scalar type of a family.
#define DUET_FOREACH_SINT(M) M(char) M(short) M(int) M(long)
#define DUET_FOREACH_UINT(M) M(uchar) M(ushort) M(uint) M(ulong)
#define DUET_FOREACH_INT(M) DUET_FOREACH_SINT(M) DUET_FOREACH_UINT(M)
#define DUET_FOREACH_FLOAT(M) M(float) M(double)

// Apply M(vector type) to every width of a scalar type, and to the scalar itself.
#define DUET_FOREACH_WIDTH(M, T) M(T) M(T##2) M(T##3) M(T##4) M(T##8) M(T##16)

// Bit-level views without a conversion.
#define DUET_AS(T, x) __builtin_astype((x), T)

// Builtins with pointer out-parameters, for one address space AS (math_as.cl; the GCN
// device's math overrides too).
// F(Tn x, AS Un* p) from the scalar core; vectors split into halves through private temps.
#define DUET_OUT1(AS, F, T, U, CORE)                                                           \
    DUET_OVL T F(T x, AS U* p) {                                                               \
        U o;                                                                                   \
        T r = CORE(x, &o);                                                                     \
        *p = o;                                                                                \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T##2 F(T##2 x, AS U##2* p) {                                                      \
        U a, b;                                                                                \
        T##2 r = (T##2)(CORE(x.x, &a), CORE(x.y, &b));                                         \
        *p = (U##2)(a, b);                                                                     \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T##3 F(T##3 x, AS U##3* p) {                                                      \
        U a, b, c;                                                                             \
        T##3 r = (T##3)(CORE(x.x, &a), CORE(x.y, &b), CORE(x.z, &c));                          \
        *p = (U##3)(a, b, c);                                                                  \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T##4 F(T##4 x, AS U##4* p) {                                                      \
        U##2 a, b;                                                                             \
        T##4 r = (T##4)(F(x.lo, &a), F(x.hi, &b));                                             \
        *p = (U##4)(a, b);                                                                     \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T##8 F(T##8 x, AS U##8* p) {                                                      \
        U##4 a, b;                                                                             \
        T##8 r = (T##8)(F(x.lo, &a), F(x.hi, &b));                                             \
        *p = (U##8)(a, b);                                                                     \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T##16 F(T##16 x, AS U##16* p) {                                                   \
        U##8 a, b;                                                                             \
        T##16 r = (T##16)(F(x.lo, &a), F(x.hi, &b));                                           \
        *p = (U##16)(a, b);                                                                    \
        return r;                                                                              \
    }

// remquo(Tn x, Tn y, AS intn* quo).
#define DUET_OUT2(AS, F, T, U, CORE)                                                           \
    DUET_OVL T F(T x, T y, AS U* p) {                                                          \
        U o;                                                                                   \
        T r = CORE(x, y, &o);                                                                  \
        *p = o;                                                                                \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T##2 F(T##2 x, T##2 y, AS U##2* p) {                                              \
        U a, b;                                                                                \
        T##2 r = (T##2)(CORE(x.x, y.x, &a), CORE(x.y, y.y, &b));                               \
        *p = (U##2)(a, b);                                                                     \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T##3 F(T##3 x, T##3 y, AS U##3* p) {                                              \
        U a, b, c;                                                                             \
        T##3 r = (T##3)(CORE(x.x, y.x, &a), CORE(x.y, y.y, &b), CORE(x.z, y.z, &c));           \
        *p = (U##3)(a, b, c);                                                                  \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T##4 F(T##4 x, T##4 y, AS U##4* p) {                                              \
        U##2 a, b;                                                                             \
        T##4 r = (T##4)(F(x.lo, y.lo, &a), F(x.hi, y.hi, &b));                                 \
        *p = (U##4)(a, b);                                                                     \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T##8 F(T##8 x, T##8 y, AS U##8* p) {                                              \
        U##4 a, b;                                                                             \
        T##8 r = (T##8)(F(x.lo, y.lo, &a), F(x.hi, y.hi, &b));                                 \
        *p = (U##8)(a, b);                                                                     \
        return r;                                                                              \
    }                                                                                          \
    DUET_OVL T##16 F(T##16 x, T##16 y, AS U##16* p) {                                          \
        U##8 a, b;                                                                             \
        T##16 r = (T##16)(F(x.lo, y.lo, &a), F(x.hi, y.hi, &b));                               \
        *p = (U##16)(a, b);                                                                    \
        return r;                                                                              \
    }
