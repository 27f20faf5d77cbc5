// OpenCL C 2.0 image kernels for il_test, compiled to SPIR-V at test build time with clang-15
// and llvm-spirv-15: image reads with a sampler argument, without a sampler, and image writes.
kernel void sampled(read_only image2d_t src, sampler_t s, global float4* out) {
    const int x = (int)get_global_id(0), y = (int)get_global_id(1);
    out[y * get_global_size(0) + x] = read_imagef(src, s, (int2)(x, y));
}

kernel void copy(read_only image2d_t src, write_only image2d_t dst) {
    const int2 p = (int2)((int)get_global_id(0), (int)get_global_id(1));
    write_imagef(dst, p, read_imagef(src, p) * 2.0f);
}
