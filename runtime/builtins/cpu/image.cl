// Image builtins (OpenCL C 3.0 §6.15.15, cl_khr_depth_images, cl_khr_3d_image_writes,
// cl_khr_srgb_image_writes): sampled and sampler-less reads, writes and queries for every
// image type, following the addressing and filtering rules of the OpenCL C spec §8.
//
// How an image reaches this code: the CPU code generator's opaque-type lowering
// (devices/cpu/jit/opaque_types) turns every image value into the pointer the executor stores
// for an image argument, the descriptor it builds per launch (struct duet_image below =
// KernelImageDesc in core/image.hpp), and every sampler into its CLK_* bits. Here, images keep
// their OpenCL types, so that the definitions get the mangled names user code calls; the
// declaration-only accessors __duet_image_ptr(image) and __duet_sampler_bits(sampler) are
// replaced by that lowering with the descriptor pointer and the sampler bits.
#include "builtins.h"

typedef struct {
    global uchar* data;
    ulong rowPitch;
    ulong slicePitch; // 3D slices and array layers (1D arrays: layers)
    int width, height, depth, arraySize;
    int elementSize, order, type, imageType, channels, reserved;
} duet_image;

#define DUET_IMAGE_TYPES(X, ACC)                                                               \
    X(ACC, image1d_t)                                                                          \
    X(ACC, image1d_buffer_t)                                                                   \
    X(ACC, image1d_array_t)                                                                    \
    X(ACC, image2d_t)                                                                          \
    X(ACC, image2d_array_t)                                                                    \
    X(ACC, image3d_t)                                                                          \
    X(ACC, image2d_depth_t)                                                                    \
    X(ACC, image2d_array_depth_t)

#define DUET_DESC_DECL(ACC, T) global void* DUET_OVL __duet_image_ptr(ACC T);
DUET_IMAGE_TYPES(DUET_DESC_DECL, read_only)
DUET_IMAGE_TYPES(DUET_DESC_DECL, write_only)
DUET_IMAGE_TYPES(DUET_DESC_DECL, read_write)
uint DUET_OVL __duet_sampler_bits(sampler_t);

// Values of cl.h, as the descriptor carries them.
#define DUET_R 0x10B0
#define DUET_A 0x10B1
#define DUET_RG 0x10B2
#define DUET_RA 0x10B3
#define DUET_RGBA 0x10B5
#define DUET_BGRA 0x10B6
#define DUET_DEPTH 0x10BD
#define DUET_DEPTH_STENCIL 0x10BE
#define DUET_SRGBA 0x10C1
#define DUET_SBGRA 0x10C2

#define DUET_SNORM_INT8 0x10D0
#define DUET_SNORM_INT16 0x10D1
#define DUET_UNORM_INT8 0x10D2
#define DUET_UNORM_INT16 0x10D3
#define DUET_SIGNED_INT8 0x10D7
#define DUET_SIGNED_INT16 0x10D8
#define DUET_SIGNED_INT32 0x10D9
#define DUET_UNSIGNED_INT8 0x10DA
#define DUET_UNSIGNED_INT16 0x10DB
#define DUET_UNSIGNED_INT32 0x10DC
#define DUET_HALF_FLOAT 0x10DD
#define DUET_FLOAT 0x10DE
#define DUET_UNORM_INT24 0x10DF

// Sampler bits (same values as clang's CLK_* literals).
#define DUET_S_NORMALIZED 0x1
#define DUET_S_ADDRESS_MASK 0xE
#define DUET_S_CLAMP_TO_EDGE 0x2
#define DUET_S_CLAMP 0x4
#define DUET_S_REPEAT 0x6
#define DUET_S_MIRRORED 0x8
#define DUET_S_LINEAR 0x20

// ---- Texel access ---------------------------------------------------------------------------

DUET_INLINE bool duet_inside(global duet_image* d, int x, int y, int z) {
    return x >= 0 && y >= 0 && z >= 0 && x < d->width && y < d->height &&
           z < d->depth * d->arraySize;
}

DUET_INLINE global uchar* duet_texel(global duet_image* d, int x, int y, int z) {
    return d->data + (size_t)x * (size_t)d->elementSize + (size_t)y * d->rowPitch +
           (size_t)z * d->slicePitch;
}

DUET_INLINE bool duet_has_alpha(int order) {
    return order == DUET_A || order == DUET_RA || order == DUET_RGBA || order == DUET_BGRA ||
           order == DUET_SRGBA || order == DUET_SBGRA;
}

DUET_INLINE bool duet_is_bgra(int order) { return order == DUET_BGRA || order == DUET_SBGRA; }

DUET_INLINE bool duet_is_srgb(int order) { return order == DUET_SRGBA || order == DUET_SBGRA; }

DUET_INLINE float duet_srgb_to_linear(float c) {
    return c <= 0.04045f ? c / 12.92f : pow((c + 0.055f) / 1.055f, 2.4f);
}

DUET_INLINE float duet_linear_to_srgb(float c) {
    if (!(c > 0.0f))
        return 0.0f; // NaN and negatives
    if (c >= 1.0f)
        return 1.0f;
    return c <= 0.0031308f ? 12.92f * c : 1.055f * pow(c, 1.0f / 2.4f) - 0.055f;
}

/// Stored channel i as float (normalized and float types).
DUET_INLINE float duet_channel_f(global duet_image* d, global uchar* p, int i) {
    switch (d->type) {
    case DUET_UNORM_INT8:
        return (float)p[i] * (1.0f / 255.0f);
    case DUET_UNORM_INT16:
        return (float)((global ushort*)p)[i] * (1.0f / 65535.0f);
    case DUET_SNORM_INT8:
        return fmax((float)((global char*)p)[i] * (1.0f / 127.0f), -1.0f);
    case DUET_SNORM_INT16:
        return fmax((float)((global short*)p)[i] * (1.0f / 32767.0f), -1.0f);
    case DUET_HALF_FLOAT:
        return vload_half(i, (global half*)p);
    case DUET_FLOAT:
        return ((global float*)p)[i];
    case DUET_UNORM_INT24: // CL_DEPTH_STENCIL from GL: depth in the top 24 bits, stencil below
        return (float)(((global uint*)p)[0] >> 8) * (1.0f / 16777215.0f);
    default:
        return 0.0f;
    }
}

DUET_INLINE int duet_channel_i(global duet_image* d, global uchar* p, int i) {
    switch (d->type) {
    case DUET_SIGNED_INT8:
        return ((global char*)p)[i];
    case DUET_SIGNED_INT16:
        return ((global short*)p)[i];
    case DUET_SIGNED_INT32:
        return ((global int*)p)[i];
    case DUET_UNSIGNED_INT8:
        return p[i];
    case DUET_UNSIGNED_INT16:
        return ((global ushort*)p)[i];
    case DUET_UNSIGNED_INT32:
        return ((global int*)p)[i];
    default:
        return 0;
    }
}

/// Stored channels -> RGBA, missing colour channels 0 and a missing alpha 1.
#define DUET_GATHER(T, CH, ZERO, ONE)                                                         \
    T r = (T)(ZERO, ZERO, ZERO, ONE);                                                          \
    int n = d->channels;                                                                       \
    if (d->order == DUET_A) {                                                                  \
        r.w = CH(d, p, 0);                                                                     \
    } else {                                                                                   \
        r.x = CH(d, p, 0);                                                                     \
        if (n > 1) {                                                                           \
            if (d->order == DUET_RA)                                                           \
                r.w = CH(d, p, 1);                                                             \
            else                                                                               \
                r.y = CH(d, p, 1);                                                             \
        }                                                                                      \
        if (n > 2)                                                                             \
            r.z = CH(d, p, 2);                                                                 \
        if (n > 3)                                                                             \
            r.w = CH(d, p, 3);                                                                 \
        if (duet_is_bgra(d->order))                                                            \
            r = r.zyxw;                                                                        \
    }

/// Border colour (§8.3): (0,0,0,0) for orders with alpha, (0,0,0,1) otherwise.
DUET_INLINE float4 duet_border_f(global duet_image* d) {
    return (float4)(0.0f, 0.0f, 0.0f, duet_has_alpha(d->order) ? 0.0f : 1.0f);
}
DUET_INLINE int4 duet_border_i(global duet_image* d) {
    return (int4)(0, 0, 0, duet_has_alpha(d->order) ? 0 : 1);
}

DUET_INLINE float4 duet_load_f(global duet_image* d, int x, int y, int z) {
    if (!duet_inside(d, x, y, z))
        return duet_border_f(d);
    global uchar* p = duet_texel(d, x, y, z);
    DUET_GATHER(float4, duet_channel_f, 0.0f, 1.0f)
    if (duet_is_srgb(d->order)) {
        r.x = duet_srgb_to_linear(r.x);
        r.y = duet_srgb_to_linear(r.y);
        r.z = duet_srgb_to_linear(r.z);
    }
    return r;
}

DUET_INLINE int4 duet_load_i(global duet_image* d, int x, int y, int z) {
    if (!duet_inside(d, x, y, z))
        return duet_border_i(d);
    global uchar* p = duet_texel(d, x, y, z);
    DUET_GATHER(int4, duet_channel_i, 0, 1)
    return r;
}

DUET_INLINE void duet_store_channel_f(global duet_image* d, global uchar* p, int i, float v) {
    switch (d->type) {
    case DUET_UNORM_INT8:
        p[i] = convert_uchar_sat_rte(v * 255.0f);
        break;
    case DUET_UNORM_INT16:
        ((global ushort*)p)[i] = convert_ushort_sat_rte(v * 65535.0f);
        break;
    case DUET_SNORM_INT8:
        ((global char*)p)[i] = convert_char_sat_rte(v * 127.0f);
        break;
    case DUET_SNORM_INT16:
        ((global short*)p)[i] = convert_short_sat_rte(v * 32767.0f);
        break;
    case DUET_HALF_FLOAT:
        vstore_half_rte(v, i, (global half*)p);
        break;
    case DUET_FLOAT:
        ((global float*)p)[i] = v; // CL_DEPTH_STENCIL: the stencil word after it stays
        break;
    case DUET_UNORM_INT24: { // CL_DEPTH_STENCIL from GL: keeps the stencil byte
        global uint* w = (global uint*)p;
        uint depth = convert_uint_rte((v > 0.0f ? fmin(v, 1.0f) : 0.0f) * 16777215.0f);
        *w = (depth << 8) | (*w & 0xFFu);
        break;
    }
    }
}

DUET_INLINE void duet_store_channel_i(global duet_image* d, global uchar* p, int i, int v) {
    switch (d->type) {
    case DUET_SIGNED_INT8:
        ((global char*)p)[i] = convert_char_sat(v);
        break;
    case DUET_SIGNED_INT16:
        ((global short*)p)[i] = convert_short_sat(v);
        break;
    case DUET_SIGNED_INT32:
        ((global int*)p)[i] = v;
        break;
    }
}

DUET_INLINE void duet_store_channel_u(global duet_image* d, global uchar* p, int i, uint v) {
    switch (d->type) {
    case DUET_UNSIGNED_INT8:
        p[i] = convert_uchar_sat(v);
        break;
    case DUET_UNSIGNED_INT16:
        ((global ushort*)p)[i] = convert_ushort_sat(v);
        break;
    case DUET_UNSIGNED_INT32:
        ((global uint*)p)[i] = v;
        break;
    }
}

/// RGBA -> stored channels (the inverse of DUET_GATHER).
#define DUET_SCATTER(STORE)                                                                    \
    if (!duet_inside(d, x, y, z))                                                              \
        return; /* undefined by the spec; never outside the image */                           \
    global uchar* p = duet_texel(d, x, y, z);                                                  \
    if (duet_is_bgra(d->order))                                                                \
        v = v.zyxw;                                                                            \
    int n = d->channels;                                                                       \
    if (d->order == DUET_A) {                                                                  \
        STORE(d, p, 0, v.w);                                                                   \
        return;                                                                                \
    }                                                                                          \
    STORE(d, p, 0, v.x);                                                                       \
    if (n > 1)                                                                                 \
        STORE(d, p, 1, d->order == DUET_RA ? v.w : v.y);                                       \
    if (n > 2)                                                                                 \
        STORE(d, p, 2, v.z);                                                                   \
    if (n > 3)                                                                                 \
        STORE(d, p, 3, v.w);

DUET_INLINE void duet_store_f(global duet_image* d, int x, int y, int z, float4 v) {
    if (duet_is_srgb(d->order)) {
        v.x = duet_linear_to_srgb(v.x);
        v.y = duet_linear_to_srgb(v.y);
        v.z = duet_linear_to_srgb(v.z);
    }
    DUET_SCATTER(duet_store_channel_f)
}
DUET_INLINE void duet_store_i(global duet_image* d, int x, int y, int z, int4 v) {
    DUET_SCATTER(duet_store_channel_i)
}
DUET_INLINE void duet_store_u(global duet_image* d, int x, int y, int z, uint4 v) {
    DUET_SCATTER(duet_store_channel_u)
}

// ---- Coordinates ----------------------------------------------------------------------------
// Coordinates arrive as 4-vectors: (x, y, z) for the spatial dimensions the image has, and the
// array layer at index `layer` (1 for 1D arrays, 2 for 2D arrays, -1 without). Texel indices
// use (x, y, z) where z is the 3D slice or the array layer.

/// Float -> int without undefined conversions for huge or NaN values (all far outside).
DUET_INLINE int duet_floor_i(float f) { return (int)floor(fmin(fmax(f, -1.0e8f), 1.0e8f)); }

DUET_INLINE int duet_nearest(float s, int size, uint smp) {
    const uint mode = smp & DUET_S_ADDRESS_MASK;
    if (mode == DUET_S_REPEAT) {
        int i = duet_floor_i((s - floor(s)) * (float)size);
        return i > size - 1 ? i - size : i;
    }
    if (mode == DUET_S_MIRRORED) {
        float sp = fabs(s - 2.0f * rint(0.5f * s));
        return min(duet_floor_i(sp * (float)size), size - 1);
    }
    float u = (smp & DUET_S_NORMALIZED) ? s * (float)size : s;
    int i = duet_floor_i(u);
    // Clamp to edge stays inside; clamp (and none, whose outside is undefined) may step one
    // texel out, which reads as the border colour.
    return mode == DUET_S_CLAMP_TO_EDGE ? clamp(i, 0, size - 1) : clamp(i, -1, size);
}

DUET_INLINE float duet_linear(float s, int size, uint smp, int* i0, int* i1) {
    const uint mode = smp & DUET_S_ADDRESS_MASK;
    float u;
    if (mode == DUET_S_REPEAT) {
        u = (s - floor(s)) * (float)size;
        *i0 = duet_floor_i(u - 0.5f);
        *i1 = *i0 + 1;
        if (*i0 < 0)
            *i0 += size;
        if (*i1 > size - 1)
            *i1 -= size;
    } else if (mode == DUET_S_MIRRORED) {
        u = fabs(s - 2.0f * rint(0.5f * s)) * (float)size;
        *i0 = duet_floor_i(u - 0.5f);
        *i1 = *i0 + 1;
        *i0 = max(*i0, 0);
        *i1 = min(*i1, size - 1);
    } else {
        u = (smp & DUET_S_NORMALIZED) ? s * (float)size : s;
        *i0 = duet_floor_i(u - 0.5f);
        *i1 = *i0 + 1;
        int lo = mode == DUET_S_CLAMP_TO_EDGE ? 0 : -1;
        int hi = mode == DUET_S_CLAMP_TO_EDGE ? size - 1 : size;
        *i0 = clamp(*i0, lo, hi);
        *i1 = clamp(*i1, lo, hi);
    }
    float t = u - 0.5f;
    return t - floor(t);
}

DUET_INLINE int duet_layer(global duet_image* d, float v) {
    return clamp(duet_floor_i(rint(v)), 0, d->arraySize - 1);
}

DUET_INLINE float4 duet_read_f(global duet_image* d, uint smp, float4 c, int dims, int layer) {
    const float cc[4] = {c.x, c.y, c.z, c.w};
    const int size[3] = {d->width, d->height, d->depth};
    int zl = layer >= 0 ? duet_layer(d, cc[layer]) : 0;
    if (!(smp & DUET_S_LINEAR)) {
        int i[3] = {0, 0, zl};
        for (int k = 0; k < dims; ++k)
            i[k] = duet_nearest(cc[k], size[k], smp);
        return duet_load_f(d, i[0], i[1], i[2]);
    }
    int i0[3] = {0, 0, zl}, i1[3] = {0, 0, zl};
    float a[3] = {0.0f, 0.0f, 0.0f};
    for (int k = 0; k < dims; ++k)
        a[k] = duet_linear(cc[k], size[k], smp, &i0[k], &i1[k]);
    if (dims == 1)
        return (1.0f - a[0]) * duet_load_f(d, i0[0], 0, zl) + a[0] * duet_load_f(d, i1[0], 0, zl);
    float4 r = (1.0f - a[0]) * (1.0f - a[1]) * duet_load_f(d, i0[0], i0[1], i0[2]) +
               a[0] * (1.0f - a[1]) * duet_load_f(d, i1[0], i0[1], i0[2]) +
               (1.0f - a[0]) * a[1] * duet_load_f(d, i0[0], i1[1], i0[2]) +
               a[0] * a[1] * duet_load_f(d, i1[0], i1[1], i0[2]);
    if (dims == 2)
        return r;
    return (1.0f - a[2]) * r +
           a[2] * ((1.0f - a[0]) * (1.0f - a[1]) * duet_load_f(d, i0[0], i0[1], i1[2]) +
                   a[0] * (1.0f - a[1]) * duet_load_f(d, i1[0], i0[1], i1[2]) +
                   (1.0f - a[0]) * a[1] * duet_load_f(d, i0[0], i1[1], i1[2]) +
                   a[0] * a[1] * duet_load_f(d, i1[0], i1[1], i1[2]));
}

/// Integer formats: nearest filtering only (§8.2: linear is undefined for them).
DUET_INLINE int4 duet_read_i(global duet_image* d, uint smp, float4 c, int dims, int layer) {
    const float cc[4] = {c.x, c.y, c.z, c.w};
    const int size[3] = {d->width, d->height, d->depth};
    int i[3] = {0, 0, layer >= 0 ? duet_layer(d, cc[layer]) : 0};
    for (int k = 0; k < dims; ++k)
        i[k] = duet_nearest(cc[k], size[k], smp);
    return duet_load_i(d, i[0], i[1], i[2]);
}

/// Texel indices of integer coordinates (sampler-less reads and writes).
#define DUET_INT_COORDS                                                                        \
    int x = c.x, y = dims > 1 ? c.y : 0, z = dims > 2 ? c.z : 0;                               \
    if (layer == 1)                                                                            \
        z = c.y;                                                                               \
    else if (layer == 2)                                                                       \
        z = c.z;

DUET_INLINE float4 duet_fetch_f(global duet_image* d, int4 c, int dims, int layer) {
    DUET_INT_COORDS
    return duet_load_f(d, x, y, z);
}
DUET_INLINE int4 duet_fetch_i(global duet_image* d, int4 c, int dims, int layer) {
    DUET_INT_COORDS
    return duet_load_i(d, x, y, z);
}
DUET_INLINE void duet_write_f(global duet_image* d, int4 c, int dims, int layer, float4 v) {
    DUET_INT_COORDS
    duet_store_f(d, x, y, z, v);
}
DUET_INLINE void duet_write_i(global duet_image* d, int4 c, int dims, int layer, int4 v) {
    DUET_INT_COORDS
    duet_store_i(d, x, y, z, v);
}
DUET_INLINE void duet_write_u(global duet_image* d, int4 c, int dims, int layer, uint4 v) {
    DUET_INT_COORDS
    duet_store_u(d, x, y, z, v);
}

// ---- Builtins -------------------------------------------------------------------------------

#define DUET_F4_1(c) ((float4)((c), 0.0f, 0.0f, 0.0f))
#define DUET_F4_2(c) ((float4)((c), 0.0f, 0.0f))
#define DUET_F4_4(c) (c)
#define DUET_I4_1(c) ((int4)((c), 0, 0, 0))
#define DUET_I4_2(c) ((int4)((c), 0, 0))
#define DUET_I4_4(c) (c)

typedef int int1;
typedef float float1;

#define DESC(i) ((global duet_image*)__duet_image_ptr(i))
#define SBITS(s) __duet_sampler_bits(s)

// Sampled reads of colour images: float and int coordinates.
#define DUET_SAMPLED(T, W, DIMS, LAYER)                                                        \
    DUET_OVL float4 read_imagef(read_only T i, sampler_t s, float##W c) {                      \
        return duet_read_f(DESC(i), SBITS(s), DUET_F4_##W(c), DIMS, LAYER);                    \
    }                                                                                          \
    DUET_OVL float4 read_imagef(read_only T i, sampler_t s, int##W c) {                        \
        return duet_read_f(DESC(i), SBITS(s), convert_float4(DUET_I4_##W(c)), DIMS, LAYER);    \
    }                                                                                          \
    DUET_OVL int4 read_imagei(read_only T i, sampler_t s, float##W c) {                        \
        return duet_read_i(DESC(i), SBITS(s), DUET_F4_##W(c), DIMS, LAYER);                    \
    }                                                                                          \
    DUET_OVL int4 read_imagei(read_only T i, sampler_t s, int##W c) {                          \
        return duet_read_i(DESC(i), SBITS(s), convert_float4(DUET_I4_##W(c)), DIMS, LAYER);    \
    }                                                                                          \
    DUET_OVL uint4 read_imageui(read_only T i, sampler_t s, float##W c) {                      \
        return as_uint4(duet_read_i(DESC(i), SBITS(s), DUET_F4_##W(c), DIMS, LAYER));          \
    }                                                                                          \
    DUET_OVL uint4 read_imageui(read_only T i, sampler_t s, int##W c) {                        \
        return as_uint4(                                                                       \
            duet_read_i(DESC(i), SBITS(s), convert_float4(DUET_I4_##W(c)), DIMS, LAYER));      \
    }

DUET_SAMPLED(image1d_t, 1, 1, -1)
DUET_SAMPLED(image1d_array_t, 2, 1, 1)
DUET_SAMPLED(image2d_t, 2, 2, -1)
DUET_SAMPLED(image2d_array_t, 4, 2, 2)
DUET_SAMPLED(image3d_t, 4, 3, -1)

// Sampled reads of depth images return the depth alone.
#define DUET_SAMPLED_DEPTH(T, W, LAYER)                                                        \
    DUET_OVL float read_imagef(read_only T i, sampler_t s, float##W c) {                       \
        return duet_read_f(DESC(i), SBITS(s), DUET_F4_##W(c), 2, LAYER).x;                     \
    }                                                                                          \
    DUET_OVL float read_imagef(read_only T i, sampler_t s, int##W c) {                         \
        return duet_read_f(DESC(i), SBITS(s), convert_float4(DUET_I4_##W(c)), 2, LAYER).x;     \
    }

DUET_SAMPLED_DEPTH(image2d_depth_t, 2, -1)
DUET_SAMPLED_DEPTH(image2d_array_depth_t, 4, 2)

// Sampler-less reads (read_only and read_write images) and writes (write_only, read_write).
#define DUET_FETCH(ACC, T, W, DIMS, LAYER)                                                     \
    DUET_OVL float4 read_imagef(ACC T i, int##W c) {                                           \
        return duet_fetch_f(DESC(i), DUET_I4_##W(c), DIMS, LAYER);                             \
    }                                                                                          \
    DUET_OVL int4 read_imagei(ACC T i, int##W c) {                                             \
        return duet_fetch_i(DESC(i), DUET_I4_##W(c), DIMS, LAYER);                             \
    }                                                                                          \
    DUET_OVL uint4 read_imageui(ACC T i, int##W c) {                                           \
        return as_uint4(duet_fetch_i(DESC(i), DUET_I4_##W(c), DIMS, LAYER));                   \
    }
#define DUET_WRITE(ACC, T, W, DIMS, LAYER)                                                     \
    DUET_OVL void write_imagef(ACC T i, int##W c, float4 v) {                                  \
        duet_write_f(DESC(i), DUET_I4_##W(c), DIMS, LAYER, v);                                 \
    }                                                                                          \
    DUET_OVL void write_imagei(ACC T i, int##W c, int4 v) {                                    \
        duet_write_i(DESC(i), DUET_I4_##W(c), DIMS, LAYER, v);                                 \
    }                                                                                          \
    DUET_OVL void write_imageui(ACC T i, int##W c, uint4 v) {                                  \
        duet_write_u(DESC(i), DUET_I4_##W(c), DIMS, LAYER, v);                                 \
    }
#define DUET_FETCH_DEPTH(ACC, T, W, LAYER)                                                     \
    DUET_OVL float read_imagef(ACC T i, int##W c) {                                            \
        return duet_fetch_f(DESC(i), DUET_I4_##W(c), 2, LAYER).x;                              \
    }
#define DUET_WRITE_DEPTH(ACC, T, W, LAYER)                                                     \
    DUET_OVL void write_imagef(ACC T i, int##W c, float v) {                                   \
        duet_write_f(DESC(i), DUET_I4_##W(c), 2, LAYER, (float4)(v, 0.0f, 0.0f, 1.0f));        \
    }

#define DUET_ALL_FETCH(ACC)                                                                    \
    DUET_FETCH(ACC, image1d_t, 1, 1, -1)                                                       \
    DUET_FETCH(ACC, image1d_buffer_t, 1, 1, -1)                                                \
    DUET_FETCH(ACC, image1d_array_t, 2, 1, 1)                                                  \
    DUET_FETCH(ACC, image2d_t, 2, 2, -1)                                                       \
    DUET_FETCH(ACC, image2d_array_t, 4, 2, 2)                                                  \
    DUET_FETCH(ACC, image3d_t, 4, 3, -1)                                                       \
    DUET_FETCH_DEPTH(ACC, image2d_depth_t, 2, -1)                                              \
    DUET_FETCH_DEPTH(ACC, image2d_array_depth_t, 4, 2)
#define DUET_ALL_WRITE(ACC)                                                                    \
    DUET_WRITE(ACC, image1d_t, 1, 1, -1)                                                       \
    DUET_WRITE(ACC, image1d_buffer_t, 1, 1, -1)                                                \
    DUET_WRITE(ACC, image1d_array_t, 2, 1, 1)                                                  \
    DUET_WRITE(ACC, image2d_t, 2, 2, -1)                                                       \
    DUET_WRITE(ACC, image2d_array_t, 4, 2, 2)                                                  \
    DUET_WRITE(ACC, image3d_t, 4, 3, -1)                                                       \
    DUET_WRITE_DEPTH(ACC, image2d_depth_t, 2, -1)                                              \
    DUET_WRITE_DEPTH(ACC, image2d_array_depth_t, 4, 2)

DUET_ALL_FETCH(read_only)
DUET_ALL_FETCH(read_write)
DUET_ALL_WRITE(write_only)
DUET_ALL_WRITE(read_write)

// Queries, for every image type and access qualifier.
#define DUET_QUERY_ALL(ACC, T)                                                                 \
    DUET_OVL int get_image_width(ACC T i) { return DESC(i)->width; }                           \
    DUET_OVL int get_image_channel_data_type(ACC T i) { return DESC(i)->type; }                \
    DUET_OVL int get_image_channel_order(ACC T i) { return DESC(i)->order; }
#define DUET_QUERY_2D(ACC, T)                                                                  \
    DUET_OVL int get_image_height(ACC T i) { return DESC(i)->height; }                         \
    DUET_OVL int2 get_image_dim(ACC T i) { return (int2)(DESC(i)->width, DESC(i)->height); }
#define DUET_QUERY_ARRAY(ACC, T)                                                               \
    DUET_OVL size_t get_image_array_size(ACC T i) { return (size_t)DESC(i)->arraySize; }
#define DUET_QUERIES(ACC)                                                                      \
    DUET_IMAGE_TYPES(DUET_QUERY_ALL, ACC)                                                      \
    DUET_QUERY_2D(ACC, image2d_t)                                                              \
    DUET_QUERY_2D(ACC, image2d_array_t)                                                        \
    DUET_QUERY_2D(ACC, image2d_depth_t)                                                        \
    DUET_QUERY_2D(ACC, image2d_array_depth_t)                                                  \
    DUET_QUERY_ARRAY(ACC, image1d_array_t)                                                     \
    DUET_QUERY_ARRAY(ACC, image2d_array_t)                                                     \
    DUET_QUERY_ARRAY(ACC, image2d_array_depth_t)                                               \
    DUET_OVL int get_image_height(ACC image3d_t i) { return DESC(i)->height; }                 \
    DUET_OVL int get_image_depth(ACC image3d_t i) { return DESC(i)->depth; }                   \
    DUET_OVL int4 get_image_dim(ACC image3d_t i) {                                             \
        return (int4)(DESC(i)->width, DESC(i)->height, DESC(i)->depth, 0);                     \
    }

DUET_QUERIES(read_only)
DUET_QUERIES(write_only)
DUET_QUERIES(read_write)
