// async_work_group_copy, async_work_group_strided_copy, wait_group_events and prefetch
// (OpenCL C 3.0 §6.15.13). The copy is done at once, each work-item moving the elements
// i = lid, lid + size, ... of the group's share (lid: local linear id); wait_group_events is a
// work-group barrier, after which every element is in place. Work-item functions and barrier
// are lowered by the compiler after this library is linked.
#include "builtins.h"

DUET_INLINE size_t duet_local_linear_id(void) {
    return (get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) +
           get_local_id(0);
}
DUET_INLINE size_t duet_local_count(void) {
    return get_local_size(0) * get_local_size(1) * get_local_size(2);
}

#if !DUET_GENERIC_PASS
#define DUET_ASYNC(T)                                                                          \
    DUET_OVL event_t async_work_group_copy(__local T* dst, const __global T* src, size_t n,    \
                                           event_t e) {                                        \
        for (size_t i = duet_local_linear_id(), s = duet_local_count(); i < n; i += s)         \
            dst[i] = src[i];                                                                   \
        return e;                                                                              \
    }                                                                                          \
    DUET_OVL event_t async_work_group_copy(__global T* dst, const __local T* src, size_t n,    \
                                           event_t e) {                                        \
        for (size_t i = duet_local_linear_id(), s = duet_local_count(); i < n; i += s)         \
            dst[i] = src[i];                                                                   \
        return e;                                                                              \
    }                                                                                          \
    DUET_OVL event_t async_work_group_strided_copy(__local T* dst, const __global T* src,      \
                                                   size_t n, size_t stride, event_t e) {       \
        for (size_t i = duet_local_linear_id(), s = duet_local_count(); i < n; i += s)         \
            dst[i] = src[i * stride];                                                          \
        return e;                                                                              \
    }                                                                                          \
    DUET_OVL event_t async_work_group_strided_copy(__global T* dst, const __local T* src,      \
                                                   size_t n, size_t stride, event_t e) {       \
        for (size_t i = duet_local_linear_id(), s = duet_local_count(); i < n; i += s)         \
            dst[i * stride] = src[i];                                                          \
        return e;                                                                              \
    }                                                                                          \
    DUET_OVL void prefetch(const __global T* p, size_t n) {                                    \
        (void)p;                                                                               \
        (void)n;                                                                               \
    }
#define DUET_ASYNC_WIDTHS(S) DUET_FOREACH_WIDTH(DUET_ASYNC, S)
DUET_FOREACH_INT(DUET_ASYNC_WIDTHS)
DUET_FOREACH_FLOAT(DUET_ASYNC_WIDTHS)
#endif

// The event list lives in private (CL1.2) or generic (CL2.0+) memory: one form per pass.
DUET_OVL void wait_group_events(int count, event_t* events) {
    (void)count;
    (void)events;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}
