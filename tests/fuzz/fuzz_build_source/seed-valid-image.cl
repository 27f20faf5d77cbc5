__kernel void img(read_only image2d_t src, write_only image2d_t dst, sampler_t s) {
    int2 c = (int2)(get_global_id(0), get_global_id(1));
    write_imagef(dst, c, read_imagef(src, s, c) * 0.5f);
}
