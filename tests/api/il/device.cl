// OpenCL C 2.0 kernels for il_test's runs on every device (CPU, GCN model, NVIDIA through the
// fake driver to PTX), compiled to SPIR-V at test build time with clang-15 and llvm-spirv-15:
// every address space (a __local array and argument, a __constant table and argument, private
// arrays, generic pointers through a function that is not inlined, to_global/to_local),
// vload/vstore on __constant and private pointers, barriers, 1.x and C11 atomics (compare-exchange
// too) on global and local memory, and a struct passed by value. No work-group collective
// functions: the NVIDIA device has none (kernels.cl has one).

constant int kTable[8] = {3, 1, 4, 1, 5, 9, 2, 6};

typedef struct {
    int scale;
    float offset;
    int pick[3];
} Params;

// Generic pointers: called with private, global and __local arguments. (No loop: llvm-spirv-15
// places the OpLoopMerge of a single-block loop where the validator refuses it.)
__attribute__((noinline)) int sumOf(const int* p, int n) {
    return n > 1 ? p[0] + p[1] : p[0];
}

// Per work-group histogram of in[] % 8 in __local atomics, added to the global bins; each
// item also writes a private-array result and the generic-pointer sums.
kernel void histogram(global const int* in, global int* bins, local int* scratch,
                      global int* out) {
    local atomic_int counts[8];
    const int l = (int)get_local_id(0);
    const int g = (int)get_global_id(0);
    if (l < 8)
        atomic_store_explicit(&counts[l], 0, memory_order_relaxed, memory_scope_work_group);
    scratch[l] = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_fetch_add_explicit(&counts[in[g] & 7], 1, memory_order_relaxed,
                              memory_scope_work_group);
    // A private array indexed by data: it stays in private memory. vload8 of the __constant
    // table and vstore8 to the private array: builtins with pointers in both spaces.
    int priv[8];
    vstore8(vload8(0, kTable) * (g + 1), 0, priv);
    const int neighbour = scratch[(l + 1) % (int)get_local_size(0)];
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 8)
        atomic_add(&bins[l], atomic_load_explicit(&counts[l], memory_order_relaxed,
                                                  memory_scope_work_group));
    out[4 * g + 0] = priv[in[g] & 7];
    out[4 * g + 1] = sumOf(priv, 2) + sumOf(in + g, 1) + sumOf(scratch, 1);
    out[4 * g + 2] = neighbour;
    // to_global / to_local of generic pointers, NULL when they point elsewhere.
    int* any = (g & 1) ? (int*)(scratch + l) : (int*)(out + 4 * g + 3);
    out[4 * g + 3] = 0;
    out[4 * g + 3] = (to_global(any) != NULL) * 10 + (to_local(any) != NULL);
}

// A struct by value and a __constant buffer argument.
kernel void params(global float* out, Params p, constant float* weights) {
    const int i = (int)get_global_id(0);
    out[i] = (float)(p.scale * p.pick[i % 3]) + p.offset * weights[i % 4];
}

// C11 compare-exchange (two generic pointers: the object and the expected value, a private
// variable): exactly one work-item claims the slot.
kernel void claim(global atomic_int* slot, global int* won) {
    const int i = (int)get_global_id(0);
    int expected = -1;
    won[i] = atomic_compare_exchange_strong_explicit(slot, &expected, i, memory_order_relaxed,
                                                     memory_order_relaxed, memory_scope_device);
}
