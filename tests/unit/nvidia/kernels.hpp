// OpenCL C programs the NVIDIA code generator is checked on: what Duet's samples and the usual
// GPU benchmarks do (tiles in __local memory, reductions, atomics, math, printf, structs,
// vectors, offsets, non-uniform work-groups, OpenCL C 3.0 features, images and samplers).
#pragma once

#include "kernels/generic_kinds.hpp"

#include <string>
#include <vector>

namespace duet::nvidia::test {

struct Program {
    const char* name;
    const char* options;
    const char* source;
};

inline const std::vector<Program>& programs() {
    static const std::vector<Program> list = {
        {"nbody", "-cl-fast-relaxed-math", R"CL(
// All-pairs N-body with the bodies tiled through __local memory (samples/nbody's kernel shape).
__kernel void nbody(__global const float4* pos, __global float4* vel, __global float4* outPos,
                    __local float4* tile, float dt, float eps2, uint n) {
    size_t i = get_global_id(0);
    size_t lid = get_local_id(0), lsz = get_local_size(0);
    float4 p = i < n ? pos[i] : (float4)(0.0f);
    float3 a = (float3)(0.0f);
    for (uint base = 0; base < n; base += lsz) {
        tile[lid] = base + lid < n ? pos[base + lid] : (float4)(0.0f);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint j = 0; j < lsz; ++j) {
            float4 q = tile[j];
            float3 d = q.xyz - p.xyz;
            float inv = rsqrt(dot(d, d) + eps2);
            a += d * (q.w * inv * inv * inv);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < n) {
        float4 v = vel[i];
        v.xyz += a * dt;
        vel[i] = v;
        outPos[i] = (float4)(p.xyz + v.xyz * dt, p.w);
    }
}
)CL"},
        {"triad", "", R"CL(
__kernel void triad(__global const double* b, __global const double* c, __global double* a,
                    double s) {
    size_t i = get_global_id(0);
    a[i] = b[i] + s * c[i];
}
__kernel void triad_f4(__global const float4* b, __global const float4* c, __global float4* a,
                       float s) {
    size_t i = get_global_id(0);
    a[i] = mad((float4)(s), c[i], b[i]);
}
)CL"},
        {"reduce", "", R"CL(
// Work-group tree reduction in __local memory (a static tile and an argument tile).
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void reduce_static(__global const float* in, __global float* out, uint n) {
    __local float part[256];
    size_t lid = get_local_id(0), gid = get_global_id(0);
    part[lid] = gid < n ? in[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s)
            part[lid] += part[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = part[0];
}
__kernel void reduce_arg(__global const int* in, __global long* out, __local long* part,
                         __local int* flags) {
    size_t lid = get_local_id(0);
    part[lid] = in[get_global_id(0)];
    flags[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s)
            part[lid] += part[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0) + get_num_groups(0) * get_group_id(1)] = part[0] + flags[0];
}
)CL"},
        {"atomics", "", R"CL(
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
__kernel void histogram(__global const uchar* data, __global uint* bins, __local uint* local_bins,
                        uint n) {
    size_t lid = get_local_id(0);
    for (size_t b = lid; b < 256; b += get_local_size(0))
        local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_bins[data[i]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t b = lid; b < 256; b += get_local_size(0))
        atomic_add(&bins[b], local_bins[b]);
}
__kernel void atomics32(__global int* p, __global uint* u, __global float* f) {
    atomic_add(p, 1); atomic_sub(p + 1, 2); atomic_xchg(p + 2, 3); atomic_min(p + 3, -4);
    atomic_max(p + 4, 5); atomic_and(u, 6u); atomic_or(u + 1, 7u); atomic_xor(u + 2, 8u);
    atomic_cmpxchg(u + 3, 9u, 10u); atomic_dec(u + 4); atomic_xchg(f, 1.5f);
}
__kernel void atomics64(__global long* p, __global ulong* u, __local long* l) {
    atom_add(p, 1L); atom_sub(p + 1, 2L); atom_xchg(p + 2, 3L); atom_min(p + 3, -4L);
    atom_max(p + 4, 5L); atom_and(u, 6ul); atom_or(u + 1, 7ul); atom_xor(u + 2, 8ul);
    atom_cmpxchg(u + 3, 9ul, 10ul); atom_inc(u + 4); atom_dec(u + 5);
    if (get_local_id(0) == 0) *l = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atom_add(l, (long)get_local_id(0));
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) atom_max(u + 6, (ulong)*l);
}
)CL"},
        {"c11_atomics", "-cl-std=CL3.0", R"CL(
__kernel void c11(volatile __global atomic_int* counter, volatile __global atomic_long* wide,
                  __global int* out, volatile __local atomic_int* lc) {
    if (get_local_id(0) == 0)
        atomic_init(lc, 0);
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    int a = atomic_fetch_add(counter, 1);
    int b = atomic_fetch_add_explicit(counter, 1, memory_order_relaxed, memory_scope_work_group);
    long c = atomic_fetch_max_explicit(wide, (long)a, memory_order_acq_rel, memory_scope_device);
    int d = atomic_load_explicit(counter, memory_order_acquire, memory_scope_device);
    atomic_store_explicit(counter + 1, b, memory_order_release, memory_scope_device);
    int expected = 0;
    bool swapped = atomic_compare_exchange_strong(counter + 2, &expected, 1);
    atomic_fetch_add_explicit(lc, 1, memory_order_relaxed, memory_scope_work_group);
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_device);
    work_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE, memory_scope_device);
    out[get_global_id(0)] = a + b + (int)c + d + swapped + atomic_load(lc);
}
)CL"},
        {"math", "", R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void math_f(__global float* x, __global float4* v) {
    size_t i = get_global_id(0);
    float a = x[i];
    x[i] = sin(a) + cos(a) + tan(a) + exp(a) + log(a + 2.0f) + pow(a, 1.5f) + sqrt(a) +
           rsqrt(a + 1.0f) + atan2(a, 2.0f) + erf(a) + tgamma(a + 1.0f) + fma(a, a, a) +
           native_sin(a) + native_cos(a) + native_exp(a) + native_log(a + 3.0f) +
           native_exp2(a) + native_log2(a + 1.0f) + native_exp10(a) + native_log10(a + 1.0f) +
           native_tan(a) + half_sin(a) + half_exp(a) + native_powr(a + 1.0f, 0.5f) +
           native_divide(a, 3.0f) + native_recip(a + 1.0f) + native_sqrt(a) + cbrt(a) +
           hypot(a, 1.0f) + fmod(a, 0.3f) + remainder(a, 0.7f) + ldexp(a, 3) + logb(a + 1.0f);
    float4 w = v[i];
    v[i] = sin(w) + native_sin(w) + exp(w) + native_exp(w) + clamp(w, 0.0f, 1.0f) +
           mix(w, w * 2.0f, 0.25f) + normalize(w) + (float4)(length(w), distance(w, w + 1.0f),
           dot(w, w), fast_length(w));
}
__kernel void math_d(__global double* x, __global double2* v) {
    size_t i = get_global_id(0);
    double a = x[i];
    x[i] = sin(a) + cos(a) + exp(a) + log(a + 2.0) + pow(a, 2.5) + sqrt(a) + rsqrt(a + 1.0) +
           tgamma(a + 1.0) + erfc(a) + sinpi(a) + atan(a) + fma(a, a, 1.0) + cbrt(a) +
           fmod(a, 0.3) + lgamma(a + 1.0) + expm1(a) + log1p(a);
    double2 w = v[i];
    v[i] = sin(w) + exp(w) + floor(w) + (double2)(dot(w, w));
}
__kernel void integer(__global int* x, __global uint4* y, __global long* z) {
    size_t i = get_global_id(0);
    x[i] = mad_hi(x[i], 3, 4) + mul24(x[i], 5) + mad24(x[i], 6, 7) + popcount(x[i]) +
           clz(x[i]) + rotate(x[i], 3) + abs_diff(x[i], 9) + add_sat(x[i], 10) + hadd(x[i], 11);
    y[i] = mad_sat(y[i], (uint4)(2), (uint4)(3)) + upsample((ushort4)(1), (ushort4)(2)) +
           convert_uint4_sat(convert_float4(y[i]) * 1.5f);
    z[i] = mul_hi(z[i], 12L) + convert_long_rte((double)z[i] * 0.5) + clz(z[i]);
}
)CL"},
        {"printf", "", R"CL(
__kernel void hello(__global const float* x, __constant char* names) {
    size_t i = get_global_id(0);
    printf("work-item %u of %u: x = %f, as vector %v4hlf, name %s, literal %s, pointer %p\n",
           (uint)i, (uint)get_global_size(0), x[i], (float4)(x[i]), names, "ok", x);
    if (printf("%d%c%ld\n", 1, 'a', 2L) < 0)
        printf("full\n");
}
)CL"},
        {"structs_vectors", "", R"CL(
typedef struct {
    float4 center;
    float radius;
    int id;
    double mass;
    char tag[3];
} Body;
typedef struct {
    uchar2 a;
    short3 b;
    ulong c;
} Mixed;
__kernel void structs(__global float4* out, Body body, Mixed m, float3 v3, double2 d2,
                      char16 c16) {
    size_t i = get_global_id(0);
    out[i] = body.center * body.radius + (float4)(body.id, body.mass, body.tag[1], m.c) +
             (float4)(m.a.x, m.b.z, v3.y, d2.y) + convert_float4(c16.s0123);
}
__kernel void vectors(__global float16* a, __global int8* b, __global uchar3* c,
                      __global double4* d, __global short2* e, ulong2 k) {
    size_t i = get_global_id(0);
    a[i] = a[i] * 2.0f + (float16)(k.x);
    b[i] = b[i].s76543210 + (int8)(1);
    c[i] = c[i].zyx;
    d[i] = d[i] + (double4)(k.y);
    e[i] = e[i] >> (short2)(1);
    vstore4(vload4(0, (__global float*)a + i), 1, (__global float*)a + i);
    vstore_half(a[i].s0, i, (__global half*)b);
}
)CL"},
        {"offsets_nonuniform", "-cl-std=CL3.0", R"CL(
// get_global_offset, work dimensions and the sizes of partial (non-uniform) work-groups.
__kernel void ids(__global ulong* out) {
    size_t gx = get_global_id(0), gy = get_global_id(1), gz = get_global_id(2);
    size_t lin = get_global_linear_id();
    __global ulong* o = out + lin * 16;
    o[0] = gx; o[1] = gy; o[2] = gz;
    o[3] = get_global_offset(0); o[4] = get_global_offset(1); o[5] = get_global_offset(2);
    o[6] = get_local_size(0); o[7] = get_enqueued_local_size(0);
    o[8] = get_num_groups(0); o[9] = get_group_id(0); o[10] = get_work_dim();
    o[11] = get_local_linear_id(); o[12] = get_global_size(0); o[13] = get_local_id(1);
    o[14] = get_global_size(3); o[15] = get_local_size(7);
}
)CL"},
        {"generic_globals", "-cl-std=CL3.0", R"CL(
// OpenCL C 3.0: generic pointers (to_global & co), program-scope variables, __constant data.
__global int counter = 7;
__global float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__constant float coeffs[3] = {0.25f, 0.5f, 0.25f};
void bump(int* p) { *p += 1; }
float sum3(__constant float* c) { return c[0] + c[1] + c[2]; }
__kernel void generic_ptrs(__global int* g, __local int* l, __global float* out,
                      __constant float* weights) {
    int priv = 3;
    int* p = get_local_id(0) & 1 ? (int*)g : (int*)l;
    if (get_local_id(0) == 0) l[0] = 0;
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    bump(&priv);
    __global int* asGlobal = to_global(p);
    __local int* asLocal = to_local(p);
    int* asPrivate = to_private(&priv);
    cl_mem_fence_flags f = get_fence(p);
    if (asGlobal) atomic_add(asGlobal, 1);
    if (asLocal) atomic_add(asLocal, 1);
    counter += priv + *asPrivate + (int)f;
    size_t i = get_global_id(0);
    out[i] = table[i & 3] * weights[i & 7] + sum3(coeffs) + sum3(weights);
}
)CL"},
        {"generic_kinds", "-cl-std=CL3.0", duet::test::kGenericKindsSource},
        {"named_casts", "-cl-std=CL3.0", R"CL(
// Casts out of generic into a named space on paths where the pointer is elsewhere: the
// optimiser folds each pair of casts into one between two named spaces.
global int counter = 5;
kernel void named_casts(global int* g, local int* l, global int* out, int which) {
    int priv[2] = {which, 1};
    int* pg = g + get_global_id(0);
    int* pl = l + get_local_id(0);
    int* pp = &priv[which & 1];
    if (which == 1) {
        *(local int*)pg = 1;            // global -> local
        *(global int*)pl = 2;           // local -> global
        *(local int*)(int*)&counter = 3; // a constant: global -> local
    }
    if (which == 2)
        *(global int*)pp = 4;           // private -> global
    int* either = which > 3 ? pg : pl;  // a phi of two spaces
    local int* asLocal = (local int*)either;
    global int* asGlobal = (global int*)either;
    out[get_global_id(0)] = (which & 4 ? *asLocal : *asGlobal) + *to_global(&counter) +
                            (to_local(&counter) == NULL) + priv[1];
}
)CL"},
        {"gpu_math", "", R"CL(
// builtins/gpu/math.cl, which replaces libclc's float exp, exp2, half_exp, half_exp2, fmod,
// remainder, remquo, erfc, tgamma and double tgamma, pow, powr (denormals kept, no .ftz).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void gpu_math_f(__global float* x, __global float4* v, __global int* q,
                         __local int* lq) {
    size_t i = get_global_id(0);
    float a = x[i], b = x[i + 1];
    int pq;
    x[i] = exp(a) + exp2(a) + half_exp(a) + half_exp2(a) + fmod(a, b) + remainder(a, b) +
           remquo(a, b, &pq) + remquo(b, a, q + i) + remquo(a, 3.0f, lq) + erfc(a) + tgamma(a);
    q[i] += pq + lq[0];
    float4 w = v[i];
    v[i] = exp(w) + exp2(w) + half_exp(w) + fmod(w, w.yzwx) + remainder(w, 2.0f) + erfc(w) +
           tgamma(w);
    float3 t = vload3(i, x);
    vstore3(exp(t) + fmod(t, t.zxy), i + 1, x);
}
__kernel void gpu_math_d(__global double* x, __global double2* v) {
    size_t i = get_global_id(0);
    double a = x[i], b = x[i + 1];
    x[i] = tgamma(a) + pow(a, b) + powr(a, b);
    v[i] = tgamma(v[i]) + pow(v[i], v[i + 1]) + powr(v[i], 0.5);
}
)CL"},
        {"kernel_calls_kernel", "", R"CL(
__kernel void scale(__global float* x, float s) { x[get_global_id(0)] *= s; }
__kernel void scale_twice(__global float* x, float s) {
    scale(x, s);
    scale(x, s);
}
)CL"},
        {"noinline_helpers", "-cl-opt-disable", R"CL(
// Helpers that read work-item state, built without optimisation: inlined all the same.
__attribute__((noinline)) size_t where(void) { return get_global_id(0) + get_global_offset(0); }
size_t twice(void) { return 2 * where(); }
__kernel void helpers(__global ulong* out) { out[get_global_id(0)] = twice() + where(); }
)CL"},
        {"local_variables", "", R"CL(
// Kernel-scope __local variables beyond PTX's 48 KiB of static .shared (kernels/fft sizes its
// arrays from CL_DEVICE_LOCAL_MEM_SIZE, 227 KiB on Hopper): dynamic shared memory, laid out
// ahead of a __local argument, one of them aligned wider than 16 bytes.
__kernel void big_locals(__global float* out, __local float* arg) {
    __local float big[16384]; // 64 KiB
    __local uchar odd[3];
    __local double16 wide; // 128-byte alignment
    size_t l = get_local_id(0), n = get_local_size(0);
    for (size_t i = l; i < 16384; i += n)
        big[i] = (float)i;
    if (l < 3)
        odd[l] = (uchar)(l + 1);
    if (l == 0)
        wide = (double16)((double)n);
    arg[l] = (float)(2 * l);
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = 0.0f;
    for (size_t i = l; i < 16384; i += n)
        s += big[16383 - i];
    out[get_global_id(0)] = s + arg[n - 1 - l] + (float)(odd[0] + odd[1] + odd[2]) + (float)wide.sf;
}

// A kernel with a __local variable called from two kernels that have variables of their own:
// each caller lays the callee's variable out after its own (declared first, so first in module
// order), at a different offset.
__kernel void stage(__global int* out);
__kernel void stage_after_floats(__global int* out) {
    __local float before[32];
    before[get_local_id(0) & 31] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    int extra = (int)before[31 - (get_local_id(0) & 31)];
    barrier(CLK_LOCAL_MEM_FENCE);
    stage(out);
    out[get_global_id(0)] += extra;
}
__kernel void stage_after_doubles(__global int* out) {
    __local double before[8];
    before[get_local_id(0) & 7] = 2.0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int extra = (int)before[7 - (get_local_id(0) & 7)];
    barrier(CLK_LOCAL_MEM_FENCE);
    stage(out);
    out[get_global_id(0)] += extra;
}
__kernel void stage(__global int* out) {
    __local int staged[64];
    staged[get_local_id(0)] = (int)get_local_id(0) * 3;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = staged[get_local_size(0) - 1 - get_local_id(0)] + staged[5];
}
)CL"},
        {"images", "-cl-std=CL3.0", R"CL(
// Images as plain memory: a descriptor per image argument, samplers as CLK_* bits (arguments and
// literals), every image type, read-write and depth images, 3D writes, queries.
constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
float4 fetch(read_only image2d_t img, sampler_t s, float2 at) { return read_imagef(img, s, at); }
__kernel void blur(read_only image2d_t src, write_only image2d_t dst, sampler_t linear) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float2 at = ((float2)(p.x, p.y) + 0.5f) / (float2)(get_image_width(src), get_image_height(src));
    float4 c = fetch(src, linear, at) + read_imagef(src, nearest, p) +
               read_imagef(src, CLK_ADDRESS_REPEAT | CLK_NORMALIZED_COORDS_TRUE, at);
    write_imagef(dst, p, c / 3.0f);
}
__kernel void volume(read_only image3d_t src, write_only image3d_t dst, read_write image2d_t rw,
                     read_only image2d_depth_t depth, read_only image1d_buffer_t texels,
                     read_only image2d_array_t layers, __global int4* dims) {
    int4 p = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);
    uint4 u = read_imageui(src, p);
    write_imageui(dst, p, u + (uint4)(1));
    float d = read_imagef(depth, nearest, p.xy);
    float4 t = read_imagef(texels, p.x);
    float4 l = read_imagef(layers, nearest, (float4)(p.x, p.y, p.z, 0.0f));
    write_imagef(rw, p.xy, read_imagef(rw, p.xy) + d + t + l);
    dims[0] = (int4)(get_image_dim(src).xyz, get_image_channel_order(dst));
    dims[1] = (int4)(get_image_dim(rw), get_image_array_size(layers), get_image_width(texels));
}
)CL"},
    };
    return list;
}

} // namespace duet::nvidia::test
