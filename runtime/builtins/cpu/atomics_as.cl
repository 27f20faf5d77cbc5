// Atomic builtins: OpenCL 1.x atomic_* and atom_* (cl_khr_{global,local}_int32_*,
// cl_khr_int64_*), OpenCL 2.0+ C11-style atomics with memory order and scope (incl.
// cl_ext_float_atomics add/sub/min/max), atomic_flag, and the fences. Clang's atomic builtins
// become LLVM atomics; order and scope may be runtime values (clang emits a switch), and on
// x86 every scope of __global memory is the whole machine. On the CPU device atomics on __local
// memory become plain memory operations in code generation (devices/cpu/jit/local_atomics.hpp),
// and so do __global ones in a launch that one thread runs, where no other agent may share their
// memory in their scope.
#include "builtins.h"

// The CPU device (spir64) must tell the code generator which atomics have the system's scope
// (memory_scope_all_svm_devices, = all_devices, and the 1.x functions, which name none): they
// must stay atomic with respect to the host and other devices on SVM memory with
// CL_MEM_SVM_ATOMICS, where device-scope ones need only be atomic with respect to this device's
// work-items. clang's spir64 atomics carry no scope, so those atomics take their pointer through
// __duet_scope_all, an identity the code generator removes once it has looked
// (devices/cpu/jit/local_atomics.hpp, plainUnsharedAtomics). GCN and NVIDIA build this file too,
// without the marker.
#if defined(__SPIR__)
DUET_CONST volatile __global void* __duet_scope_all(volatile __global void* p);
DUET_CONST volatile __local void* __duet_scope_all(volatile __local void* p);
#if __OPENCL_C_VERSION__ >= 200
DUET_CONST volatile void* __duet_scope_all(volatile void* p);
#endif
#define DUET_SCOPE_ALL(AS, T, p) ((volatile AS T*)__duet_scope_all((volatile AS void*)(p)))
#else
#define DUET_SCOPE_ALL(AS, T, p) (p)
#endif
// `p` marked when the scope `s` is the system's.
#define DUET_SCOPED(AS, T, p, s)                                                               \
    ((s) == __OPENCL_MEMORY_SCOPE_ALL_SVM_DEVICES ? DUET_SCOPE_ALL(AS, T, p) : (p))

#if !DUET_GENERIC_PASS
// ---- OpenCL 1.x: named address spaces only ----
#define DUET_RMW11(AS, T, NAME, BUILTIN)                                                       \
    DUET_OVL T NAME(volatile AS T* p, T v) {                                                  \
        return BUILTIN(DUET_SCOPE_ALL(AS, T, p), v, __ATOMIC_SEQ_CST);                         \
    }
#define DUET_ATOMIC11(AS, T, P)                                                                \
    DUET_RMW11(AS, T, P##add, __atomic_fetch_add)                                              \
    DUET_RMW11(AS, T, P##sub, __atomic_fetch_sub)                                              \
    DUET_RMW11(AS, T, P##xchg, __atomic_exchange_n)                                            \
    DUET_RMW11(AS, T, P##min, __atomic_fetch_min)                                              \
    DUET_RMW11(AS, T, P##max, __atomic_fetch_max)                                              \
    DUET_RMW11(AS, T, P##and, __atomic_fetch_and)                                              \
    DUET_RMW11(AS, T, P##or, __atomic_fetch_or)                                                \
    DUET_RMW11(AS, T, P##xor, __atomic_fetch_xor)                                              \
    DUET_OVL T P##inc(volatile AS T* p) {                                                      \
        return __atomic_fetch_add(DUET_SCOPE_ALL(AS, T, p), (T)1, __ATOMIC_SEQ_CST);                                  \
    }                                                                                          \
    DUET_OVL T P##dec(volatile AS T* p) {                                                      \
        return __atomic_fetch_sub(DUET_SCOPE_ALL(AS, T, p), (T)1, __ATOMIC_SEQ_CST);                                  \
    }                                                                                          \
    DUET_OVL T P##cmpxchg(volatile AS T* p, T cmp, T v) {                                      \
        __atomic_compare_exchange_n(DUET_SCOPE_ALL(AS, T, p), &cmp, v, false, __ATOMIC_SEQ_CST,     \
                                    __ATOMIC_SEQ_CST);    \
        return cmp;                                                                            \
    }
#define DUET_ATOMIC11_XCHG_FLOAT(AS, P)                                                        \
    DUET_OVL float P##xchg(volatile AS float* p, float v) {                                    \
        return DUET_AS(float, __atomic_exchange_n(DUET_SCOPE_ALL(AS, uint, p), DUET_AS(uint, v),       \
                                                  __ATOMIC_SEQ_CST));                          \
    }

DUET_ATOMIC11(__global, int, atomic_)
DUET_ATOMIC11(__global, uint, atomic_)
DUET_ATOMIC11(__local, int, atomic_)
DUET_ATOMIC11(__local, uint, atomic_)
DUET_ATOMIC11_XCHG_FLOAT(__global, atomic_)
DUET_ATOMIC11_XCHG_FLOAT(__local, atomic_)
DUET_ATOMIC11(__global, int, atom_)
DUET_ATOMIC11(__global, uint, atom_)
DUET_ATOMIC11(__local, int, atom_)
DUET_ATOMIC11(__local, uint, atom_)
DUET_ATOMIC11(__global, long, atom_)
DUET_ATOMIC11(__global, ulong, atom_)
DUET_ATOMIC11(__local, long, atom_)
DUET_ATOMIC11(__local, ulong, atom_)
#endif

#if DUET_GENERIC_PASS
// ---- OpenCL 2.0+ C11-style atomics ----
#define DUET_SEQ __ATOMIC_SEQ_CST
#define DUET_DEV __OPENCL_MEMORY_SCOPE_DEVICE

// Operations every atomic type has. AS: the object's space.
#define DUET_C11_BASIC(AS, A, T)                                                               \
    DUET_OVL void atomic_init(volatile AS A* p, T v) { __opencl_atomic_init(p, v); }           \
    DUET_OVL void atomic_store(volatile AS A* p, T v) {                                        \
        __opencl_atomic_store(p, v, DUET_SEQ, DUET_DEV);                                       \
    }                                                                                          \
    DUET_OVL void atomic_store_explicit(volatile AS A* p, T v, memory_order o) {               \
        __opencl_atomic_store(p, v, o, DUET_DEV);                                              \
    }                                                                                          \
    DUET_OVL void atomic_store_explicit(volatile AS A* p, T v, memory_order o,                 \
                                        memory_scope s) {                                      \
        __opencl_atomic_store(DUET_SCOPED(AS, A, p, s), v, o, s);                                                     \
    }                                                                                          \
    DUET_OVL T atomic_load(volatile AS A* p) {                                                 \
        return __opencl_atomic_load(p, DUET_SEQ, DUET_DEV);                                    \
    }                                                                                          \
    DUET_OVL T atomic_load_explicit(volatile AS A* p, memory_order o) {                        \
        return __opencl_atomic_load(p, o, DUET_DEV);                                           \
    }                                                                                          \
    DUET_OVL T atomic_load_explicit(volatile AS A* p, memory_order o, memory_scope s) {        \
        return __opencl_atomic_load(p, o, s);                                                  \
    }                                                                                          \
    DUET_OVL T atomic_exchange(volatile AS A* p, T v) {                                        \
        return __opencl_atomic_exchange(p, v, DUET_SEQ, DUET_DEV);                             \
    }                                                                                          \
    DUET_OVL T atomic_exchange_explicit(volatile AS A* p, T v, memory_order o) {               \
        return __opencl_atomic_exchange(p, v, o, DUET_DEV);                                    \
    }                                                                                          \
    DUET_OVL T atomic_exchange_explicit(volatile AS A* p, T v, memory_order o,                 \
                                        memory_scope s) {                                      \
        return __opencl_atomic_exchange(DUET_SCOPED(AS, A, p, s), v, o, s);                                           \
    }

// compare_exchange with the expected value in space EAS (copied through a private temporary,
// so every pairing of spaces works the same way).
#define DUET_C11_CAS1(AS, EAS, A, T, KIND)                                                     \
    DUET_OVL bool atomic_compare_exchange_##KIND(volatile AS A* p, EAS T* e, T d) {            \
        T x = *e;                                                                              \
        bool ok = __opencl_atomic_compare_exchange_##KIND(p, &x, d, DUET_SEQ, DUET_SEQ,        \
                                                          DUET_DEV);                           \
        *e = x;                                                                                \
        return ok;                                                                             \
    }                                                                                          \
    DUET_OVL bool atomic_compare_exchange_##KIND##_explicit(volatile AS A* p, EAS T* e, T d,   \
                                                             memory_order so,                  \
                                                             memory_order fo) {                \
        T x = *e;                                                                              \
        bool ok = __opencl_atomic_compare_exchange_##KIND(p, &x, d, so, fo, DUET_DEV);         \
        *e = x;                                                                                \
        return ok;                                                                             \
    }                                                                                          \
    DUET_OVL bool atomic_compare_exchange_##KIND##_explicit(volatile AS A* p, EAS T* e, T d,   \
                                                             memory_order so, memory_order fo, \
                                                             memory_scope s) {                 \
        T x = *e;                                                                              \
        bool ok = __opencl_atomic_compare_exchange_##KIND(DUET_SCOPED(AS, A, p, s), &x, d, so, fo, \
                                                          s);                \
        *e = x;                                                                                \
        return ok;                                                                             \
    }
#define DUET_C11_CAS(AS, EAS, A, T)                                                            \
    DUET_C11_CAS1(AS, EAS, A, T, strong) DUET_C11_CAS1(AS, EAS, A, T, weak)

// fetch_<op>: OP is the clang builtin suffix; V the operand type.
#define DUET_C11_FETCH(AS, A, T, V, OP)                                                        \
    DUET_OVL T atomic_fetch_##OP(volatile AS A* p, V v) {                                      \
        return __opencl_atomic_fetch_##OP(p, v, DUET_SEQ, DUET_DEV);                           \
    }                                                                                          \
    DUET_OVL T atomic_fetch_##OP##_explicit(volatile AS A* p, V v, memory_order o) {           \
        return __opencl_atomic_fetch_##OP(p, v, o, DUET_DEV);                                  \
    }                                                                                          \
    DUET_OVL T atomic_fetch_##OP##_explicit(volatile AS A* p, V v, memory_order o,             \
                                            memory_scope s) {                                  \
        return __opencl_atomic_fetch_##OP(DUET_SCOPED(AS, A, p, s), v, o, s);                                         \
    }

#define DUET_C11_INT(AS, A, T)                                                                 \
    DUET_C11_BASIC(AS, A, T)                                                                   \
    DUET_C11_FETCH(AS, A, T, T, add) DUET_C11_FETCH(AS, A, T, T, sub)                          \
    DUET_C11_FETCH(AS, A, T, T, or) DUET_C11_FETCH(AS, A, T, T, xor)                           \
    DUET_C11_FETCH(AS, A, T, T, and) DUET_C11_FETCH(AS, A, T, T, min)                          \
    DUET_C11_FETCH(AS, A, T, T, max)
#define DUET_C11_FLOAT(AS, A, T)                                                               \
    DUET_C11_BASIC(AS, A, T)                                                                   \
    DUET_C11_FETCH(AS, A, T, T, add) DUET_C11_FETCH(AS, A, T, T, sub)                          \
    DUET_C11_FETCH(AS, A, T, T, min) DUET_C11_FETCH(AS, A, T, T, max)

#define DUET_C11_FLAG(AS)                                                                      \
    DUET_OVL bool atomic_flag_test_and_set(volatile AS atomic_flag* p) {                       \
        return __opencl_atomic_exchange(p, 1, DUET_SEQ, DUET_DEV) != 0;                        \
    }                                                                                          \
    DUET_OVL bool atomic_flag_test_and_set_explicit(volatile AS atomic_flag* p,                \
                                                    memory_order o) {                          \
        return __opencl_atomic_exchange(p, 1, o, DUET_DEV) != 0;                               \
    }                                                                                          \
    DUET_OVL bool atomic_flag_test_and_set_explicit(volatile AS atomic_flag* p,                \
                                                    memory_order o, memory_scope s) {          \
        return __opencl_atomic_exchange(DUET_SCOPED(AS, atomic_flag, p, s), 1, o, s) != 0;                                      \
    }                                                                                          \
    DUET_OVL void atomic_flag_clear(volatile AS atomic_flag* p) {                              \
        __opencl_atomic_store(p, 0, DUET_SEQ, DUET_DEV);                                       \
    }                                                                                          \
    DUET_OVL void atomic_flag_clear_explicit(volatile AS atomic_flag* p, memory_order o) {     \
        __opencl_atomic_store(p, 0, o, DUET_DEV);                                              \
    }                                                                                          \
    DUET_OVL void atomic_flag_clear_explicit(volatile AS atomic_flag* p, memory_order o,       \
                                             memory_scope s) {                                 \
        __opencl_atomic_store(DUET_SCOPED(AS, atomic_flag, p, s), 0, o, s);                                                     \
    }

// uintptr_t arithmetic takes a ptrdiff_t operand (same bits as ulong's).
#define DUET_C11_ALL(AS)                                                                       \
    DUET_C11_INT(AS, atomic_int, int)                                                          \
    DUET_C11_INT(AS, atomic_uint, uint)                                                        \
    DUET_C11_INT(AS, atomic_long, long)                                                        \
    DUET_C11_INT(AS, atomic_ulong, ulong)                                                      \
    DUET_C11_FLOAT(AS, atomic_float, float)                                                    \
    DUET_C11_FLOAT(AS, atomic_double, double)                                                  \
    DUET_C11_FETCH(AS, atomic_uintptr_t, uintptr_t, ptrdiff_t, add)                            \
    DUET_C11_FETCH(AS, atomic_uintptr_t, uintptr_t, ptrdiff_t, sub)                            \
    DUET_C11_FLAG(AS)
#define DUET_C11_CAS_ALL(AS, EAS)                                                              \
    DUET_C11_CAS(AS, EAS, atomic_int, int)                                                     \
    DUET_C11_CAS(AS, EAS, atomic_uint, uint)                                                   \
    DUET_C11_CAS(AS, EAS, atomic_long, long)                                                   \
    DUET_C11_CAS(AS, EAS, atomic_ulong, ulong)                                                 \
    DUET_C11_CAS(AS, EAS, atomic_float, float)                                                 \
    DUET_C11_CAS(AS, EAS, atomic_double, double)

DUET_C11_ALL()
DUET_C11_ALL(__global)
DUET_C11_ALL(__local)
DUET_C11_CAS_ALL(, )
DUET_C11_CAS_ALL(__global, __global)
DUET_C11_CAS_ALL(__global, __local)
DUET_C11_CAS_ALL(__global, __private)
DUET_C11_CAS_ALL(__local, __global)
DUET_C11_CAS_ALL(__local, __local)
DUET_C11_CAS_ALL(__local, __private)

// ---- fences (no pointers: built in this pass only) ----
// On the CPU device (spir64) a work-group runs on one thread from its first work-item to its
// last, and its __local memory is that thread's alone: ordering among the work-items of a group,
// or of __local memory only, needs nothing from the hardware, only that the compiler keeps the
// order (a signal fence). Wider scopes over __global or image memory get the thread fence.
// GCN and NVIDIA build this file too: their work-groups are many threads, so they keep the
// thread fence (NVIDIA's link replaces these with scoped membar: builtins/nvidia/sync.cl).
#if defined(__SPIR__)
#define DUET_GROUP_LOCAL_FENCE(flags, s)                                                       \
    ((s) == memory_scope_work_item || (s) == memory_scope_work_group ||                        \
     !((flags) & (CLK_GLOBAL_MEM_FENCE | CLK_IMAGE_MEM_FENCE)))
#else
#define DUET_GROUP_LOCAL_FENCE(flags, s) false
#endif
DUET_OVL void atomic_work_item_fence(cl_mem_fence_flags flags, memory_order o, memory_scope s) {
    if (o == memory_order_relaxed)
        return;
    if (DUET_GROUP_LOCAL_FENCE(flags, s))
        __c11_atomic_signal_fence(o);
    else
        __c11_atomic_thread_fence(o);
}
// The 1.x fences order a work-item's accesses as its work-group sees them.
DUET_OVL void mem_fence(cl_mem_fence_flags flags) {
    if (DUET_GROUP_LOCAL_FENCE(flags, memory_scope_device))
        __c11_atomic_signal_fence(__ATOMIC_SEQ_CST);
    else
        __c11_atomic_thread_fence(__ATOMIC_SEQ_CST);
}
DUET_OVL void read_mem_fence(cl_mem_fence_flags flags) {
    if (DUET_GROUP_LOCAL_FENCE(flags, memory_scope_device))
        __c11_atomic_signal_fence(__ATOMIC_ACQUIRE);
    else
        __c11_atomic_thread_fence(__ATOMIC_ACQUIRE);
}
DUET_OVL void write_mem_fence(cl_mem_fence_flags flags) {
    if (DUET_GROUP_LOCAL_FENCE(flags, memory_scope_device))
        __c11_atomic_signal_fence(__ATOMIC_RELEASE);
    else
        __c11_atomic_thread_fence(__ATOMIC_RELEASE);
}
#endif
