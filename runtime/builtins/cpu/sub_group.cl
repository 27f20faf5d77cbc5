// Sub-group functions (OpenCL C 3.0 __opencl_c_subgroups) for the CPU device.
//
// A sub-group is a run of __duet_sub_group_width() consecutive local linear ids (the vector width
// in 32-bit lanes the code is generated for: WorkGroupContext::subGroupSize, which the work-group
// pass loads); the last one of a group may be smaller. The work-group pass runs a group one
// barrier-free region at a time, each a loop over all of its work-items, so a sub-group cannot
// wait for its own members alone: sub_group_barrier is the group's barrier
// (__duet_sub_group_barrier, which the pass treats as barrier()), and the collectives are those
// of work_group.cl restricted to each sub-group's slice of the same scratch, with the group's
// barriers between their steps. Hence the whole work-group must reach them, not only the
// sub-group as the spec allows; the pass refuses a kernel that calls them under a branch that
// depends on the work-item (runtime/devices/cpu/README.md).
#include "builtins.h"

__local ulong* __duet_wg_scratch(void);
uint __duet_sub_group_width(void);
void __duet_sub_group_barrier(cl_mem_fence_flags flags);

DUET_INLINE uint duet_sg_lid(void) {
    return (uint)((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) +
                  get_local_id(0));
}

DUET_INLINE uint duet_sg_items(void) {
    return (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
}

DUET_INLINE uint duet_sg_enqueued_items(void) {
    return (uint)(get_enqueued_local_size(0) * get_enqueued_local_size(1) *
                  get_enqueued_local_size(2));
}

// ---- work-item functions --------------------------------------------------------------------

DUET_OVL uint get_max_sub_group_size(void) {
    const uint w = __duet_sub_group_width(), n = duet_sg_enqueued_items();
    return n < w ? n : w;
}

DUET_OVL uint get_num_sub_groups(void) {
    const uint w = __duet_sub_group_width();
    return (duet_sg_items() + w - 1) / w;
}

DUET_OVL uint get_enqueued_num_sub_groups(void) {
    const uint w = __duet_sub_group_width();
    return (duet_sg_enqueued_items() + w - 1) / w;
}

DUET_OVL uint get_sub_group_id(void) {
    return duet_sg_lid() / __duet_sub_group_width();
}

DUET_OVL uint get_sub_group_local_id(void) {
    return duet_sg_lid() % __duet_sub_group_width();
}

DUET_OVL uint get_sub_group_size(void) {
    const uint w = __duet_sub_group_width();
    const uint rest = duet_sg_items() - duet_sg_lid() / w * w;
    return rest < w ? rest : w;
}

// ---- barrier --------------------------------------------------------------------------------

DUET_OVL void sub_group_barrier(cl_mem_fence_flags flags) {
    __duet_sub_group_barrier(flags);
}

DUET_OVL void sub_group_barrier(cl_mem_fence_flags flags, memory_scope scope) {
    (void)scope;
    __duet_sub_group_barrier(flags);
}

// ---- broadcast, reduce, scan ----------------------------------------------------------------
// Each value goes to the scratch at its local linear id; a sub-group's values are then
// s[base .. base + n). Reduce: a pairwise tree over the slice (step k folds lane i + 2^k into lane
// i for i a multiple of 2^(k+1)), log2(width) steps, each one loop over the group's work-items.
// Scan: Hillis-Steele over two halves of the scratch, each step reading lanes of its own slice
// only. The step counts depend on the width alone, so every work-item meets the same barriers.

#define DUET_SG_SYNC() __duet_sub_group_barrier(CLK_LOCAL_MEM_FENCE)

#define DUET_OP_add(a, b) ((a) + (b))
#define DUET_OP_min(a, b) ((b) < (a) ? (b) : (a))
#define DUET_OP_max(a, b) ((b) > (a) ? (b) : (a))

#define DUET_SG_BROADCAST(T)                                                                   \
    DUET_OVL T sub_group_broadcast(T x, uint sub_group_local_id) {                             \
        __local T* s = (__local T*)__duet_wg_scratch();                                        \
        const uint lid = duet_sg_lid(), w = __duet_sub_group_width();                          \
        DUET_SG_SYNC();                                                                        \
        s[lid] = x;                                                                            \
        DUET_SG_SYNC();                                                                        \
        return s[lid / w * w + sub_group_local_id];                                            \
    }

#define DUET_SG_REDUCE_SCAN(T, OP, IDENTITY)                                                   \
    DUET_OVL T sub_group_reduce_##OP(T x) {                                                    \
        __local T* s = (__local T*)__duet_wg_scratch();                                        \
        const uint lid = duet_sg_lid(), w = __duet_sub_group_width();                          \
        const uint base = lid / w * w, lane = lid - base;                                      \
        const uint rest = duet_sg_items() - base, n = rest < w ? rest : w;                     \
        DUET_SG_SYNC();                                                                        \
        s[lid] = x;                                                                            \
        DUET_SG_SYNC();                                                                        \
        for (uint off = 1; off < w; off <<= 1) {                                               \
            if ((lane & (2 * off - 1)) == 0 && lane + off < n)                                 \
                s[lid] = DUET_OP_##OP(s[lid], s[lid + off]);                                   \
            DUET_SG_SYNC();                                                                    \
        }                                                                                      \
        return s[base];                                                                        \
    }                                                                                          \
    DUET_INLINE __local T* duet_sg_scan_##OP##_##T(T x, uint lid, uint lane) {                 \
        const uint w = __duet_sub_group_width();                                               \
        __local T* a = (__local T*)__duet_wg_scratch();                                        \
        __local T* b = a + duet_sg_items();                                                    \
        DUET_SG_SYNC();                                                                        \
        a[lid] = x;                                                                            \
        DUET_SG_SYNC();                                                                        \
        for (uint off = 1; off < w; off <<= 1) {                                               \
            T v = a[lid];                                                                      \
            if (lane >= off)                                                                   \
                v = DUET_OP_##OP(a[lid - off], v);                                             \
            b[lid] = v;                                                                        \
            DUET_SG_SYNC();                                                                    \
            __local T* t = a;                                                                  \
            a = b;                                                                             \
            b = t;                                                                             \
        }                                                                                      \
        return a;                                                                              \
    }                                                                                          \
    DUET_OVL T sub_group_scan_inclusive_##OP(T x) {                                            \
        const uint lid = duet_sg_lid(), lane = lid % __duet_sub_group_width();                 \
        return duet_sg_scan_##OP##_##T(x, lid, lane)[lid];                                     \
    }                                                                                          \
    DUET_OVL T sub_group_scan_exclusive_##OP(T x) {                                            \
        const uint lid = duet_sg_lid(), lane = lid % __duet_sub_group_width();                 \
        __local T* a = duet_sg_scan_##OP##_##T(x, lid, lane);                                  \
        return lane ? a[lid - 1] : (T)(IDENTITY);                                              \
    }

#define DUET_SG_ALL(T, MIN, MAX)                                                               \
    DUET_SG_BROADCAST(T)                                                                       \
    DUET_SG_REDUCE_SCAN(T, add, 0)                                                             \
    DUET_SG_REDUCE_SCAN(T, min, MAX)                                                           \
    DUET_SG_REDUCE_SCAN(T, max, MIN)

DUET_SG_ALL(int, INT_MIN, INT_MAX)
DUET_SG_ALL(uint, 0, UINT_MAX)
DUET_SG_ALL(long, LONG_MIN, LONG_MAX)
DUET_SG_ALL(ulong, 0, ULONG_MAX)
DUET_SG_ALL(float, -INFINITY, INFINITY)
DUET_SG_ALL(double, -INFINITY, INFINITY)

// ---- all, any -------------------------------------------------------------------------------

DUET_OVL int sub_group_all(int predicate) {
    return sub_group_reduce_min(predicate != 0 ? 1 : 0);
}

DUET_OVL int sub_group_any(int predicate) {
    return sub_group_reduce_max(predicate != 0 ? 1 : 0);
}
