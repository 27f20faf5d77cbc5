__kernel void sum(__global const int *in, __global int *out, __local int *tmp) {
    size_t l = get_local_id(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) { int s = 0; for (size_t k = 0; k < get_local_size(0); ++k) s += tmp[k]; out[get_group_id(0)] = s; }
}
