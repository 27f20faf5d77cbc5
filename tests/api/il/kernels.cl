// OpenCL C 2.0 kernels for il_test, compiled to SPIR-V at test build time with clang-15 and
// llvm-spirv-15 (tests/api/CMakeLists.txt): one that names its arguments, one with local memory,
// barriers, C11 atomics on generic pointers, vector loads and a work-group reduction.
kernel void add(global const float* a, global const float* b, global float* c, float s) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i] * s;
}

kernel void reduce(global const int* in, global atomic_int* sum, local int* scratch) {
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (l < s)
            scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int all = work_group_reduce_add(in[get_global_id(0)]);
    if (l == 0)
        atomic_fetch_add_explicit(sum, scratch[0] - all + scratch[0], memory_order_relaxed,
                                  memory_scope_device);
}

kernel void vectors(global const float* in, global float* out) {
    size_t i = get_global_id(0);
    generic const float* g = in;
    float4 v = vload4(i, g);
    vstore4(sqrt(v) + fmax(v, 2.0f), i, out);
}
