// OpenCL 1.x atomic functions for the NVIDIA device: atomic_* and atom_* on 32-bit integers
// (cl_khr_{global,local}_int32_{base,extended}_atomics) and atom_* on 64-bit ones
// (cl_khr_int64_{base,extended}_atomics), which libclc's nvptx library lacks. OpenCL 2.0
// (§6.13.11) defines the 1.x functions as relaxed: libclc asks LLVM for seq_cst, which the
// NVIDIA code generator would honour with fences around every one (codegen/legalize.cpp), so
// these relaxed versions are linked ahead of libclc and replace its 32-bit ones too.
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

#define DUET_OVL __attribute__((overloadable))
#define DUET_RELAXED __ATOMIC_RELAXED

#define DUET_RMW(AS, T, NAME, BUILTIN)                                                         \
    DUET_OVL T NAME(volatile AS T* p, T v) { return BUILTIN(p, v, DUET_RELAXED); }
#define DUET_ATOMIC(AS, T, P)                                                                  \
    DUET_RMW(AS, T, P##add, __atomic_fetch_add)                                                \
    DUET_RMW(AS, T, P##sub, __atomic_fetch_sub)                                                \
    DUET_RMW(AS, T, P##xchg, __atomic_exchange_n)                                              \
    DUET_RMW(AS, T, P##min, __atomic_fetch_min)                                                \
    DUET_RMW(AS, T, P##max, __atomic_fetch_max)                                                \
    DUET_RMW(AS, T, P##and, __atomic_fetch_and)                                                \
    DUET_RMW(AS, T, P##or, __atomic_fetch_or)                                                  \
    DUET_RMW(AS, T, P##xor, __atomic_fetch_xor)                                                \
    DUET_OVL T P##inc(volatile AS T* p) { return __atomic_fetch_add(p, (T)1, DUET_RELAXED); } \
    DUET_OVL T P##dec(volatile AS T* p) { return __atomic_fetch_sub(p, (T)1, DUET_RELAXED); } \
    DUET_OVL T P##cmpxchg(volatile AS T* p, T cmp, T v) {                                      \
        __atomic_compare_exchange_n(p, &cmp, v, false, DUET_RELAXED, DUET_RELAXED);            \
        return cmp;                                                                            \
    }
#define DUET_XCHG_FLOAT(AS, P)                                                                 \
    DUET_OVL float P##xchg(volatile AS float* p, float v) {                                    \
        return __builtin_astype(                                                               \
            __atomic_exchange_n((volatile AS uint*)p, __builtin_astype(v, uint), DUET_RELAXED), \
            float);                                                                            \
    }

DUET_ATOMIC(__global, int, atomic_)
DUET_ATOMIC(__global, uint, atomic_)
DUET_ATOMIC(__local, int, atomic_)
DUET_ATOMIC(__local, uint, atomic_)
DUET_XCHG_FLOAT(__global, atomic_)
DUET_XCHG_FLOAT(__local, atomic_)
DUET_ATOMIC(__global, int, atom_)
DUET_ATOMIC(__global, uint, atom_)
DUET_ATOMIC(__local, int, atom_)
DUET_ATOMIC(__local, uint, atom_)
DUET_ATOMIC(__global, long, atom_)
DUET_ATOMIC(__global, ulong, atom_)
DUET_ATOMIC(__local, long, atom_)
DUET_ATOMIC(__local, ulong, atom_)
