// Fences and barriers with a memory scope (OpenCL C 2.0), which libclc's nvptx library lacks,
// and the 1.x fences, which replace the CPU library's in the link (atomics_as.cl: IR fences at
// system scope) with libclc's choice, membar.cta. libclc's barrier (bar.sync) stays. Clang gives every
// OpenCL scope the system scope on nvptx, and LLVM 19's NVPTX backend cannot select an IR
// fence at all, so these call the membar intrinsics directly (membar.cta is fence.sc.cta,
// membar.gl fence.sc.gpu on sm_70 and later). bar.sync orders every memory access of the
// block's threads, so a work-group barrier needs a fence of its own only to order memory at
// device scope.

#define DUET_OVL __attribute__((overloadable))

static inline void fenceAt(memory_scope scope) {
    switch (scope) {
    case memory_scope_work_item:
        break;
    case memory_scope_work_group:
        __nvvm_membar_cta();
        break;
    default: // device: the widest scope the device reports
        __nvvm_membar_gl();
        break;
    }
}

// OpenCL 1.x fences order a work-item's accesses as seen by its work-group.
DUET_OVL void mem_fence(cl_mem_fence_flags flags) {
    if (flags & (CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE))
        __nvvm_membar_cta();
}
DUET_OVL void read_mem_fence(cl_mem_fence_flags flags) { mem_fence(flags); }
DUET_OVL void write_mem_fence(cl_mem_fence_flags flags) { mem_fence(flags); }

DUET_OVL void atomic_work_item_fence(cl_mem_fence_flags flags, memory_order order,
                                     memory_scope scope) {
    if (order != memory_order_relaxed && flags)
        fenceAt(scope);
}

DUET_OVL void work_group_barrier(cl_mem_fence_flags flags) { barrier(flags); }

DUET_OVL void work_group_barrier(cl_mem_fence_flags flags, memory_scope scope) {
    // Writes before the barrier become visible at `scope` to work-items after it.
    if ((flags & CLK_GLOBAL_MEM_FENCE) && scope != memory_scope_work_group &&
        scope != memory_scope_work_item)
        __nvvm_membar_gl();
    barrier(flags);
}
