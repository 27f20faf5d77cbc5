// Builtins whose pointer parameter the user's program declares without an address space.
// -fdeclare-opencl-builtins gives wait_group_events an unqualified `event_t *`, which on
// amdgcn mangles as a flat (AS0) pointer, while the library's OpenCL C 1.2 definition
// (cpu/async_as.cl) takes a private (AS5) one. Compiled a second time as OpenCL C 2.0, where
// the unqualified pointer is the generic (flat) one; empty in the OpenCL C 1.2 pass.
#if __OPENCL_C_VERSION__ >= 200
__attribute__((overloadable)) void wait_group_events(int count, event_t* events) {
    (void)count;
    (void)events;
    // As in cpu/async_as.cl: the copies were made at once; the barrier publishes them.
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}
#endif
