// cl_khr_kernel_clock: the x86 time-stamp counter, which is invariant and shared by every core
// on current CPUs, so one clock serves the device, work-group and sub-group scopes.
#include "builtins.h"

#define DUET_CLOCK(SCOPE)                                                                      \
    DUET_OVL ulong clock_read_##SCOPE(void) { return __builtin_readcyclecounter(); }           \
    DUET_OVL uint2 clock_read_hilo_##SCOPE(void) {                                             \
        ulong t = __builtin_readcyclecounter();                                                \
        return (uint2)((uint)t, (uint)(t >> 32));                                              \
    }
DUET_CLOCK(device)
DUET_CLOCK(work_group)
DUET_CLOCK(sub_group)
