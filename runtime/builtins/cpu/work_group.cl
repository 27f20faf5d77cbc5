// Work-group collective functions (work_group_all/any/broadcast/reduce_*/scan_*) for the CPU
// device, written as barrier-separated steps over a per-work-group scratch array so that each
// step is one loop over the work-items that the work-group pass forms and the vectoriser widens:
// no work-item loops over the others' values while the group waits.
//
// The scratch (16 bytes per work-item of the largest group) comes from __duet_wg_scratch(),
// which the CPU work-group pass lowers to WorkGroupContext::collectiveScratch. Every function
// starts with a barrier (the previous collective's readers are done with the scratch) and ends
// with one (everyone's value is in place), and so is itself a barrier, as the spec says
// (OpenCL C 3.0 §6.15.16: they must be encountered by all work-items of the group).
#include "builtins.h"

__local ulong* __duet_wg_scratch(void);

DUET_INLINE uint duet_wg_lid(void) {
    return (uint)((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) +
                  get_local_id(0));
}

DUET_INLINE uint duet_wg_items(void) {
    return (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
}

// ---- all, any -------------------------------------------------------------------------------
// One flag: initialised by work-item 0, cleared (all) or set (any) by whoever decides it.

DUET_OVL int work_group_all(int predicate) {
    __local int* flag = (__local int*)__duet_wg_scratch();
    barrier(CLK_LOCAL_MEM_FENCE);
    if (duet_wg_lid() == 0)
        *flag = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!predicate)
        *flag = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    return *flag;
}

DUET_OVL int work_group_any(int predicate) {
    __local int* flag = (__local int*)__duet_wg_scratch();
    barrier(CLK_LOCAL_MEM_FENCE);
    if (duet_wg_lid() == 0)
        *flag = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (predicate)
        *flag = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    return *flag;
}

// ---- broadcast ------------------------------------------------------------------------------

#define DUET_WG_BROADCAST(T)                                                                   \
    DUET_OVL T work_group_broadcast(T a, size_t x) {                                           \
        __local T* s = (__local T*)__duet_wg_scratch();                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        if (get_local_id(0) == x)                                                              \
            *s = a;                                                                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        return *s;                                                                             \
    }                                                                                          \
    DUET_OVL T work_group_broadcast(T a, size_t x, size_t y) {                                 \
        __local T* s = (__local T*)__duet_wg_scratch();                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        if (get_local_id(0) == x && get_local_id(1) == y)                                      \
            *s = a;                                                                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        return *s;                                                                             \
    }                                                                                          \
    DUET_OVL T work_group_broadcast(T a, size_t x, size_t y, size_t z) {                       \
        __local T* s = (__local T*)__duet_wg_scratch();                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        if (get_local_id(0) == x && get_local_id(1) == y && get_local_id(2) == z)              \
            *s = a;                                                                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        return *s;                                                                             \
    }

// ---- reduce and scan ------------------------------------------------------------------------
// Reduce: a halving tree, in place: step k folds the upper part of the live range onto the
// lower (ceil(w/2) survivors), one loop over the work-items per step, log2(n) steps.
// Scan: Hillis-Steele over two halves of the scratch (each step reads one, writes the other),
// log2(n) steps; the exclusive scan reads its left neighbour's inclusive result.

#define DUET_OP_add(a, b) ((a) + (b))
#define DUET_OP_min(a, b) ((b) < (a) ? (b) : (a))
#define DUET_OP_max(a, b) ((b) > (a) ? (b) : (a))

#define DUET_WG_REDUCE_SCAN(T, OP, IDENTITY)                                                   \
    DUET_OVL T work_group_reduce_##OP(T x) {                                                   \
        __local T* s = (__local T*)__duet_wg_scratch();                                        \
        const uint lid = duet_wg_lid();                                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        s[lid] = x;                                                                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        for (uint w = duet_wg_items(); w > 1;) {                                               \
            const uint h = (w + 1) >> 1;                                                       \
            if (lid + h < w)                                                                   \
                s[lid] = DUET_OP_##OP(s[lid], s[lid + h]);                                     \
            barrier(CLK_LOCAL_MEM_FENCE);                                                      \
            w = h;                                                                             \
        }                                                                                      \
        return s[0];                                                                           \
    }                                                                                          \
    DUET_INLINE __local T* duet_wg_scan_##OP##_##T(T x, uint lid) {                            \
        const uint n = duet_wg_items();                                                        \
        __local T* a = (__local T*)__duet_wg_scratch();                                        \
        __local T* b = a + n;                                                                  \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        a[lid] = x;                                                                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        for (uint off = 1; off < n; off <<= 1) {                                               \
            T v = a[lid];                                                                      \
            if (lid >= off)                                                                    \
                v = DUET_OP_##OP(a[lid - off], v);                                             \
            b[lid] = v;                                                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                                      \
            __local T* t = a;                                                                  \
            a = b;                                                                             \
            b = t;                                                                             \
        }                                                                                      \
        return a;                                                                              \
    }                                                                                          \
    DUET_OVL T work_group_scan_inclusive_##OP(T x) {                                           \
        const uint lid = duet_wg_lid();                                                        \
        return duet_wg_scan_##OP##_##T(x, lid)[lid];                                           \
    }                                                                                          \
    DUET_OVL T work_group_scan_exclusive_##OP(T x) {                                           \
        const uint lid = duet_wg_lid();                                                        \
        __local T* a = duet_wg_scan_##OP##_##T(x, lid);                                        \
        return lid ? a[lid - 1] : (T)(IDENTITY);                                               \
    }

#define DUET_WG_ALL(T, MIN, MAX)                                                               \
    DUET_WG_BROADCAST(T)                                                                       \
    DUET_WG_REDUCE_SCAN(T, add, 0)                                                             \
    DUET_WG_REDUCE_SCAN(T, min, MAX)                                                           \
    DUET_WG_REDUCE_SCAN(T, max, MIN)

DUET_WG_ALL(int, INT_MIN, INT_MAX)
DUET_WG_ALL(uint, 0, UINT_MAX)
DUET_WG_ALL(long, LONG_MIN, LONG_MAX)
DUET_WG_ALL(ulong, 0, ULONG_MAX)
DUET_WG_ALL(float, -INFINITY, INFINITY)
DUET_WG_ALL(double, -INFINITY, INFINITY)
