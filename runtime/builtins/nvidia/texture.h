// NVIDIA: reads of read_only images through CUDA texture objects (pitch-linear for 1D and 2D
// images, CUDA arrays for 3D images and 1D/2D arrays), tried before the software reads of
// cpu/image.cl, which includes this file when built for the NVIDIA device.
//
// An image argument points at the executor's DeviceImageDesc
// (devices/nvidia/texture_objects.hpp): the 64-byte descriptor, the texture class at offset 64
// (0: no textures, 1 float, 2 signed, 3 unsigned integer reads), the swizzle at 68 (4 and 5: sRGB
// and sBGRA, whose bytes this file decodes), and from 80
// one texture object per sampler key (0: that sampler reads in software). A read through a
// texture runs only where the builtin's result type matches the class: read_imagei of a float
// image, say, returns the stored bits, which only the software path gives.

#define DUET_TEX_FLOAT 1u
#define DUET_TEX_SIGNED 2u
#define DUET_TEX_UNSIGNED 3u

/// 8 bytes of the descriptor, through the non-coherent (read-only) cache: the descriptor does
/// not change during a launch. An intrinsic, not an asm, so that the optimiser merges the loads
/// of several reads of one image (OpenCL C makes every asm statement convergent, which it does
/// not merge).
DUET_INLINE ulong duet_tex_word(global duet_image* d, uint offset) {
    return (ulong)__nvvm_ldg_l((const long*)((ulong)d + offset));
}

/// Whether an sRGB image may reach this read: false in a kernel's texture-only variant, which
/// the executor runs only on other images, true elsewhere. Nothing defines it: the code
/// generator replaces each call (devices/nvidia/codegen/texture_variants.cpp). `const`: it
/// neither reads nor writes memory, so the optimiser merges and moves it freely.
bool __duet_textures_srgb(void) __attribute__((const));
/// Whether every read reaching here goes through a texture (no class mismatch, a texture object
/// for the sampler): true in a kernel's texture-only variant, which the executor runs only where
/// that holds, so that its reads have no branch to the software path; false elsewhere. Replaced
/// like __duet_textures_srgb.
bool __duet_textures_only(void) __attribute__((const));

/// The texture object index of a sampler (texture_objects.cpp: samplerKey).
DUET_INLINE uint duet_tex_key(uint smp) {
    const uint mode = smp & DUET_S_ADDRESS_MASK;
    const uint addressing = mode <= DUET_S_CLAMP_TO_EDGE ? 0u : mode / 2u - 1u;
    return (smp & DUET_S_NORMALIZED) | addressing << 1 | ((smp & DUET_S_LINEAR) ? 8u : 0u);
}

/// The texture object for (image, sampler) when the image's class is `cls`, else 0.
DUET_INLINE ulong duet_tex_handle(global duet_image* d, uint smp, uint cls, uint* swizzle) {
    const ulong info = duet_tex_word(d, 64);
    if ((uint)info != cls && !__duet_textures_only())
        return 0;
    *swizzle = (uint)(info >> 32);
    return duet_tex_word(d, 80 + 8 * duet_tex_key(smp));
}

// The swizzles are selects, not branches: a branch between one read's texture fetch and the
// next would make the GPU wait for the first fetch before it issues the second. One select per
// lane that changes (x and z for BGRA, y, z and w for R and RG): five, where whole-vector
// selects per swizzle made eight. (OpenCL C's select, not ?: chains, which the optimiser turns
// into switches.)
#define DUET_TEX_SWIZZLE(NAME, VT, T)                                                          \
    DUET_INLINE VT NAME(VT v, uint swizzle) {                                                  \
        const int bgra = swizzle == 1, fewer = swizzle - 2u < 2u, r = swizzle == 2;            \
        VT out;                                                                                \
        out.x = select(v.x, v.z, bgra);                                                        \
        out.y = select(v.y, (T)0, r);                                                          \
        out.z = select(select(v.z, v.x, bgra), (T)0, fewer);                                   \
        out.w = select(v.w, (T)1, fewer);                                                      \
        return out;                                                                            \
    }
DUET_TEX_SWIZZLE(duet_tex_swizzle_f, float4, float)
DUET_TEX_SWIZZLE(duet_tex_swizzle_i, int4, int)

/// The array layer a read of layered image `d` samples (`layer`: which coordinate holds it, 1
/// or 2): clamp(rint(c), 0, layers - 1), as OpenCL rounds it for every sampler.
DUET_INLINE int duet_tex_layer(global duet_image* d, float4 c, int layer) {
    const int layers = (int)(duet_tex_word(d, 32) >> 32); // KernelImageDesc::arraySize
    return clamp((int)rint(layer == 1 ? c.y : c.z), 0, layers - 1);
}

// One texture fetch with coordinates `c` (and array layer `idx`) by geometry: tex.3d for 3D
// images (a CUDA array), tex.a1d and tex.a2d for 1D and 2D arrays (layered CUDA arrays),
// tex.2d for 1D and 2D images (pitch-linear; 1D images read row 0 of a one-row texture).
// `dims` and `layer` are constants once inlined, so each read keeps one fetch.
#define DUET_TEX_FETCH(NAME, VT, RT, K)                                                        \
    DUET_INLINE VT NAME(ulong h, float4 c, int dims, int layer, int idx) {                     \
        VT v;                                                                                  \
        if (dims == 3)                                                                         \
            __asm__("tex.3d.v4." RT ".f32 {%0, %1, %2, %3}, [%4, {%5, %6, %7, %7}];"           \
                    : "=" K(v.x), "=" K(v.y), "=" K(v.z), "=" K(v.w)                           \
                    : "l"(h), "f"(c.x), "f"(c.y), "f"(c.z));                                   \
        else if (layer == 1)                                                                   \
            __asm__("tex.a1d.v4." RT ".f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"                  \
                    : "=" K(v.x), "=" K(v.y), "=" K(v.z), "=" K(v.w)                           \
                    : "l"(h), "r"(idx), "f"(c.x));                                             \
        else if (layer == 2)                                                                   \
            __asm__("tex.a2d.v4." RT ".f32 {%0, %1, %2, %3}, [%4, {%5, %6, %7, %7}];"          \
                    : "=" K(v.x), "=" K(v.y), "=" K(v.z), "=" K(v.w)                           \
                    : "l"(h), "r"(idx), "f"(c.x), "f"(c.y));                                   \
        else                                                                                   \
            __asm__("tex.2d.v4." RT ".f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"                   \
                    : "=" K(v.x), "=" K(v.y), "=" K(v.z), "=" K(v.w)                           \
                    : "l"(h), "f"(c.x), "f"(dims == 2 ? c.y : 0.5f));                          \
        return v;                                                                              \
    }
DUET_TEX_FETCH(duet_tex_fetch_f32, float4, "f32", "f")
DUET_TEX_FETCH(duet_tex_fetch_s32, int4, "s32", "r")
DUET_TEX_FETCH(duet_tex_fetch_u32, uint4, "u32", "r")

/// read_imagef through a texture: false when this image or sampler has none.
DUET_INLINE bool duet_tex_f(global duet_image* d, uint smp, float4 c, int dims, int layer,
                            float4* out) {
    uint swizzle = 0;
    const ulong h = duet_tex_handle(d, smp, DUET_TEX_FLOAT, &swizzle);
    if (!h && !__duet_textures_only())
        return false;
    const int idx = layer >= 0 ? duet_tex_layer(d, c, layer) : 0;
    if (swizzle >= 4 && __duet_textures_srgb()) {
        // sRGB: the stored bytes (an integer-read texture, nearest only), decoded by the
        // library's table, exactly as the software path does.
        const uint4 u = duet_tex_fetch_u32(h, c, dims, layer, idx);
        const float4 v = (float4)(duet_srgb_decode[u.x & 0xFF], duet_srgb_decode[u.y & 0xFF],
                                  duet_srgb_decode[u.z & 0xFF], (float)(u.w & 0xFF) * (1.0f / 255.0f));
        *out = swizzle == 5 ? v.zyxw : v;
        return true;
    }
    *out = duet_tex_swizzle_f(duet_tex_fetch_f32(h, c, dims, layer, idx), swizzle);
    return true;
}

/// read_imagei (cls DUET_TEX_SIGNED) and read_imageui (DUET_TEX_UNSIGNED) through a texture.
DUET_INLINE bool duet_tex_i(global duet_image* d, uint smp, float4 c, int dims, int layer,
                            uint cls, int4* out) {
    uint swizzle = 0;
    const ulong h = duet_tex_handle(d, smp, cls, &swizzle);
    if (!h && !__duet_textures_only())
        return false;
    const int idx = layer >= 0 ? duet_tex_layer(d, c, layer) : 0;
    const int4 v = cls == DUET_TEX_SIGNED ? duet_tex_fetch_s32(h, c, dims, layer, idx)
                                          : as_int4(duet_tex_fetch_u32(h, c, dims, layer, idx));
    *out = duet_tex_swizzle_i(v, swizzle);
    return true;
}

// Sampler-less reads: texel centres with the unnormalized, clamp-to-edge, nearest sampler
// (key 0; out-of-range coordinates are undefined in OpenCL).
#define DUET_TEX_FETCH_SAMPLER 0x10u

#define DUET_TEX_F(d, smp, c, dims, layer, out) duet_tex_f(d, smp, c, dims, layer, out)
#define DUET_TEX_I(d, smp, c, dims, layer, cls, out) duet_tex_i(d, smp, c, dims, layer, cls, out)
