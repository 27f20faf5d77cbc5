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
    int elementSize, order, type, imageType, channels, readPath;
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

// Unsigned comparisons joined without short-circuits: one test and one branch per texel.
DUET_INLINE bool duet_inside(global duet_image* d, int x, int y, int z) {
    return ((uint)x < (uint)d->width) & ((uint)y < (uint)d->height) &
           ((uint)z < (uint)(d->depth * d->arraySize));
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

// sRGB <-> linear for 8-bit channels by table, instead of a pow per channel per texel: the
// decoded value of each byte, and the 255 linear values where the encoded byte steps up
// (linear((k + 0.5) / 255): encoding is a binary search). Both computed in double and
// rounded to float once (python3: c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055)**2.4).
constant float duet_srgb_decode[256] = {
    0.0f, 0x1.3e4568p-12f, 0x1.3e4568p-11f, 0x1.dd681cp-11f,
    0x1.3e4568p-10f, 0x1.8dd6c2p-10f, 0x1.dd681cp-10f,
    0x1.167cbap-9f, 0x1.3e4568p-9f, 0x1.660e14p-9f, 0x1.8dd6c2p-9f,
    0x1.b6a31cp-9f, 0x1.e1e31ep-9f, 0x1.07c38cp-8f, 0x1.1fcc2cp-8f,
    0x1.390ffap-8f, 0x1.53936cp-8f, 0x1.6f5adep-8f, 0x1.8c6a94p-8f,
    0x1.aac6cp-8f, 0x1.ca7382p-8f, 0x1.eb74e2p-8f, 0x1.06e76cp-7f,
    0x1.18c2a6p-7f, 0x1.2b4e0ap-7f, 0x1.3e8b7cp-7f, 0x1.527cd6p-7f,
    0x1.6723eep-7f, 0x1.7c8292p-7f, 0x1.929a88p-7f, 0x1.a96d92p-7f,
    0x1.c0fd68p-7f, 0x1.d94bbep-7f, 0x1.f25a44p-7f, 0x1.061552p-6f,
    0x1.135f3ep-6f, 0x1.210bb8p-6f, 0x1.2f1b8cp-6f, 0x1.3d8f84p-6f,
    0x1.4c6866p-6f, 0x1.5ba6fap-6f, 0x1.6b4c04p-6f, 0x1.7b5842p-6f,
    0x1.8bcc74p-6f, 0x1.9ca958p-6f, 0x1.adefaap-6f, 0x1.bfa02p-6f,
    0x1.d1bb74p-6f, 0x1.e4425ap-6f, 0x1.f73586p-6f, 0x1.054ad4p-5f,
    0x1.0f31bap-5f, 0x1.194fccp-5f, 0x1.23a55ep-5f, 0x1.2e32c8p-5f,
    0x1.38f86p-5f, 0x1.43f678p-5f, 0x1.4f2d64p-5f, 0x1.5a9d76p-5f,
    0x1.664702p-5f, 0x1.722a56p-5f, 0x1.7e47c8p-5f, 0x1.8a9fa4p-5f,
    0x1.97323ap-5f, 0x1.a3ffd8p-5f, 0x1.b108dp-5f, 0x1.be4d6cp-5f,
    0x1.cbcdfap-5f, 0x1.d98ac6p-5f, 0x1.e7841cp-5f, 0x1.f5ba48p-5f,
    0x1.0216cap-4f, 0x1.096f26p-4f, 0x1.10e65cp-4f, 0x1.187c9p-4f,
    0x1.2031e8p-4f, 0x1.280688p-4f, 0x1.2ffa92p-4f, 0x1.380e2ap-4f,
    0x1.404174p-4f, 0x1.489494p-4f, 0x1.5107acp-4f, 0x1.599adep-4f,
    0x1.624e4ep-4f, 0x1.6b221ep-4f, 0x1.74167p-4f, 0x1.7d2b66p-4f,
    0x1.86612p-4f, 0x1.8fb7cp-4f, 0x1.992f68p-4f, 0x1.a2c83ap-4f,
    0x1.ac8256p-4f, 0x1.b65ddcp-4f, 0x1.c05aecp-4f, 0x1.ca79a8p-4f,
    0x1.d4ba3p-4f, 0x1.df1ca2p-4f, 0x1.e9a12p-4f, 0x1.f447cap-4f,
    0x1.ff10bcp-4f, 0x1.04fe0cp-3f, 0x1.0a84fep-3f, 0x1.101d44p-3f,
    0x1.15c6eep-3f, 0x1.1b8208p-3f, 0x1.214ea6p-3f, 0x1.272cd4p-3f,
    0x1.2d1ca2p-3f, 0x1.331e1ep-3f, 0x1.393158p-3f, 0x1.3f566p-3f,
    0x1.458d42p-3f, 0x1.4bd60ep-3f, 0x1.5230d4p-3f, 0x1.589dap-3f,
    0x1.5f1c84p-3f, 0x1.65ad8ap-3f, 0x1.6c50c4p-3f, 0x1.73063ep-3f,
    0x1.79ce06p-3f, 0x1.80a82ep-3f, 0x1.8794cp-3f, 0x1.8e93ccp-3f,
    0x1.95a55ep-3f, 0x1.9cc986p-3f, 0x1.a40052p-3f, 0x1.ab49cep-3f,
    0x1.b2a60ap-3f, 0x1.ba1512p-3f, 0x1.c196f4p-3f, 0x1.c92bbep-3f,
    0x1.d0d37cp-3f, 0x1.d88e3ep-3f, 0x1.e05c0ep-3f, 0x1.e83cfcp-3f,
    0x1.f03116p-3f, 0x1.f83866p-3f, 0x1.00297ep-2f, 0x1.044072p-2f,
    0x1.086116p-2f, 0x1.0c8b7p-2f, 0x1.10bf86p-2f, 0x1.14fd6p-2f,
    0x1.194502p-2f, 0x1.1d9676p-2f, 0x1.21f1bep-2f, 0x1.2656e4p-2f,
    0x1.2ac5ecp-2f, 0x1.2f3edep-2f, 0x1.33c1cp-2f, 0x1.384e98p-2f,
    0x1.3ce56cp-2f, 0x1.418642p-2f, 0x1.46312p-2f, 0x1.4ae60ep-2f,
    0x1.4fa51p-2f, 0x1.546e2cp-2f, 0x1.59416cp-2f, 0x1.5e1edp-2f,
    0x1.630664p-2f, 0x1.67f82ap-2f, 0x1.6cf428p-2f, 0x1.71fa68p-2f,
    0x1.770aecp-2f, 0x1.7c25bcp-2f, 0x1.814adcp-2f, 0x1.867a54p-2f,
    0x1.8bb428p-2f, 0x1.90f86p-2f, 0x1.9647p-2f, 0x1.9ba01p-2f,
    0x1.a10394p-2f, 0x1.a67192p-2f, 0x1.abea1p-2f, 0x1.b16d14p-2f,
    0x1.b6faa4p-2f, 0x1.bc92c6p-2f, 0x1.c2357ep-2f, 0x1.c7e2d2p-2f,
    0x1.cd9acap-2f, 0x1.d35d6ap-2f, 0x1.d92ab6p-2f, 0x1.df02b8p-2f,
    0x1.e4e57p-2f, 0x1.ead2e8p-2f, 0x1.f0cb26p-2f, 0x1.f6ce2cp-2f,
    0x1.fcdcp-2f, 0x1.017a56p-1f, 0x1.048c18p-1f, 0x1.07a34ap-1f,
    0x1.0abfeep-1f, 0x1.0de208p-1f, 0x1.11099ap-1f, 0x1.1436a8p-1f,
    0x1.176932p-1f, 0x1.1aa13ep-1f, 0x1.1ddecap-1f, 0x1.2121dep-1f,
    0x1.246a7ap-1f, 0x1.27b8ap-1f, 0x1.2b0c54p-1f, 0x1.2e6598p-1f,
    0x1.31c46ep-1f, 0x1.3528dcp-1f, 0x1.3892ep-1f, 0x1.3c028p-1f,
    0x1.3f77bcp-1f, 0x1.42f29ap-1f, 0x1.467318p-1f, 0x1.49f93ep-1f,
    0x1.4d850ap-1f, 0x1.511682p-1f, 0x1.54ada4p-1f, 0x1.584a78p-1f,
    0x1.5becfep-1f, 0x1.5f9538p-1f, 0x1.634328p-1f, 0x1.66f6d4p-1f,
    0x1.6ab03ap-1f, 0x1.6e6f6p-1f, 0x1.723448p-1f, 0x1.75fef4p-1f,
    0x1.79cf64p-1f, 0x1.7da59ep-1f, 0x1.8181a4p-1f, 0x1.856378p-1f,
    0x1.894b1cp-1f, 0x1.8d3892p-1f, 0x1.912bdep-1f, 0x1.9525p-1f,
    0x1.9923fep-1f, 0x1.9d28d8p-1f, 0x1.a13392p-1f, 0x1.a5442cp-1f,
    0x1.a95aacp-1f, 0x1.ad771p-1f, 0x1.b1995ep-1f, 0x1.b5c198p-1f,
    0x1.b9efbep-1f, 0x1.be23d4p-1f, 0x1.c25ddep-1f, 0x1.c69ddcp-1f,
    0x1.cae3d2p-1f, 0x1.cf2fcp-1f, 0x1.d381aap-1f, 0x1.d7d994p-1f,
    0x1.dc377ep-1f, 0x1.e09b6ap-1f, 0x1.e5055cp-1f, 0x1.e97556p-1f,
    0x1.edeb5cp-1f, 0x1.f2676cp-1f, 0x1.f6e98cp-1f, 0x1.fb71bcp-1f,
    0x1p+0f};
constant float duet_srgb_steps[255] = {
    0x1.3e4568p-13f, 0x1.dd681cp-12f, 0x1.8dd6c2p-11f,
    0x1.167cbap-10f, 0x1.660e14p-10f, 0x1.b59f6ep-10f,
    0x1.029864p-9f, 0x1.2a6112p-9f, 0x1.5229bep-9f, 0x1.79f26ap-9f,
    0x1.a1e5ap-9f, 0x1.cbf734p-9f, 0x1.f86806p-9f, 0x1.13a0bep-8f,
    0x1.2c4666p-8f, 0x1.46297ap-8f, 0x1.614e6p-8f, 0x1.7db96cp-8f,
    0x1.9b6edap-8f, 0x1.ba72cep-8f, 0x1.dac95ep-8f, 0x1.fc768ap-8f,
    0x1.0fbf22p-7f, 0x1.21f234p-7f, 0x1.34d662p-7f, 0x1.486d8ep-7f,
    0x1.5cb98ep-7f, 0x1.71bc32p-7f, 0x1.877748p-7f, 0x1.9dec9p-7f,
    0x1.b51dc8p-7f, 0x1.cd0ca8p-7f, 0x1.e5baep-7f, 0x1.ff2a1ep-7f,
    0x1.0cae04p-6f, 0x1.1a291cp-6f, 0x1.28072ap-6f, 0x1.3648f6p-6f,
    0x1.44ef4cp-6f, 0x1.53faeep-6f, 0x1.636ca4p-6f, 0x1.73453p-6f,
    0x1.83855p-6f, 0x1.942dc4p-6f, 0x1.a53f48p-6f, 0x1.b6ba94p-6f,
    0x1.c8a062p-6f, 0x1.daf168p-6f, 0x1.edae5cp-6f, 0x1.006bf6p-5f,
    0x1.0a3768p-5f, 0x1.1439d8p-5f, 0x1.1e73ap-5f, 0x1.28e514p-5f,
    0x1.338e8ap-5f, 0x1.3e7056p-5f, 0x1.498acep-5f, 0x1.54de42p-5f,
    0x1.606b08p-5f, 0x1.6c316ep-5f, 0x1.7831c6p-5f, 0x1.846c62p-5f,
    0x1.90e192p-5f, 0x1.9d91a4p-5f, 0x1.aa7ce4p-5f, 0x1.b7a3a4p-5f,
    0x1.c5063p-5f, 0x1.d2a4d4p-5f, 0x1.e07fdcp-5f, 0x1.ee9794p-5f,
    0x1.fcec46p-5f, 0x1.05bf2p-4f, 0x1.0d26e4p-4f, 0x1.14ad94p-4f,
    0x1.1c5356p-4f, 0x1.24184cp-4f, 0x1.2bfc9cp-4f, 0x1.34006ap-4f,
    0x1.3c23d6p-4f, 0x1.446708p-4f, 0x1.4cca1ep-4f, 0x1.554d4p-4f,
    0x1.5df08ep-4f, 0x1.66b428p-4f, 0x1.6f9836p-4f, 0x1.789cd4p-4f,
    0x1.81c228p-4f, 0x1.8b085p-4f, 0x1.946f72p-4f, 0x1.9df7aap-4f,
    0x1.a7a11cp-4f, 0x1.b16beap-4f, 0x1.bb583p-4f, 0x1.c56612p-4f,
    0x1.cf95bp-4f, 0x1.d9e72ap-4f, 0x1.e45a9ep-4f, 0x1.eef02ep-4f,
    0x1.f9a7f8p-4f, 0x1.02410ep-3f, 0x1.07bf5cp-3f, 0x1.0d4ef6p-3f,
    0x1.12efecp-3f, 0x1.18a24cp-3f, 0x1.1e6626p-3f, 0x1.243b8ap-3f,
    0x1.2a2286p-3f, 0x1.301b2ap-3f, 0x1.362582p-3f, 0x1.3c41a2p-3f,
    0x1.426f94p-3f, 0x1.48af6ap-3f, 0x1.4f0132p-3f, 0x1.5564f8p-3f,
    0x1.5bdacep-3f, 0x1.6262cp-3f, 0x1.68fcep-3f, 0x1.6fa938p-3f,
    0x1.7667d8p-3f, 0x1.7d38cep-3f, 0x1.841c28p-3f, 0x1.8b11f6p-3f,
    0x1.921a42p-3f, 0x1.99351ep-3f, 0x1.a06296p-3f, 0x1.a7a2bap-3f,
    0x1.aef594p-3f, 0x1.b65b34p-3f, 0x1.bdd3a6p-3f, 0x1.c55efap-3f,
    0x1.ccfd3ep-3f, 0x1.d4ae7cp-3f, 0x1.dc72c2p-3f, 0x1.e44a2p-3f,
    0x1.ec34a4p-3f, 0x1.f43256p-3f, 0x1.fc4348p-3f, 0x1.0233c2p-2f,
    0x1.064f8ep-2f, 0x1.0a750cp-2f, 0x1.0ea442p-2f, 0x1.12dd3ap-2f,
    0x1.171ff8p-2f, 0x1.1b6c82p-2f, 0x1.1fc2dep-2f, 0x1.242316p-2f,
    0x1.288d2cp-2f, 0x1.2d0128p-2f, 0x1.317f12p-2f, 0x1.3606eep-2f,
    0x1.3a98c2p-2f, 0x1.3f3496p-2f, 0x1.43da7p-2f, 0x1.488a54p-2f,
    0x1.4d444cp-2f, 0x1.52085ap-2f, 0x1.56d688p-2f, 0x1.5baed8p-2f,
    0x1.609154p-2f, 0x1.657ep-2f, 0x1.6a74e2p-2f, 0x1.6f76p-2f,
    0x1.74816p-2f, 0x1.79970ap-2f, 0x1.7eb7p-2f, 0x1.83e14cp-2f,
    0x1.8915f2p-2f, 0x1.8e54f8p-2f, 0x1.939e64p-2f, 0x1.98f23ap-2f,
    0x1.9e5084p-2f, 0x1.a3b944p-2f, 0x1.a92c8p-2f, 0x1.aeaa42p-2f,
    0x1.b4328ap-2f, 0x1.b9c562p-2f, 0x1.bf62cep-2f, 0x1.c50ad4p-2f,
    0x1.cabd7ap-2f, 0x1.d07ac4p-2f, 0x1.d642bap-2f, 0x1.dc156p-2f,
    0x1.e1f2bcp-2f, 0x1.e7dad4p-2f, 0x1.edcdaep-2f, 0x1.f3cb4ep-2f,
    0x1.f9d3bcp-2f, 0x1.ffe6fap-2f, 0x1.030288p-1f, 0x1.061702p-1f,
    0x1.0930eep-1f, 0x1.0c504cp-1f, 0x1.0f7522p-1f, 0x1.129f72p-1f,
    0x1.15cf3ep-1f, 0x1.190488p-1f, 0x1.1c3f54p-1f, 0x1.1f7fa4p-1f,
    0x1.22c57ap-1f, 0x1.2610dap-1f, 0x1.2961c8p-1f, 0x1.2cb844p-1f,
    0x1.30145p-1f, 0x1.3375f2p-1f, 0x1.36dd2ap-1f, 0x1.3a49fcp-1f,
    0x1.3dbc6ap-1f, 0x1.413476p-1f, 0x1.44b224p-1f, 0x1.483576p-1f,
    0x1.4bbe6ep-1f, 0x1.4f4d1p-1f, 0x1.52e15ep-1f, 0x1.567b58p-1f,
    0x1.5a1b04p-1f, 0x1.5dc064p-1f, 0x1.616b7ap-1f, 0x1.651c46p-1f,
    0x1.68d2dp-1f, 0x1.6c8f16p-1f, 0x1.70511cp-1f, 0x1.7418e6p-1f,
    0x1.77e672p-1f, 0x1.7bb9c8p-1f, 0x1.7f92e8p-1f, 0x1.8371d4p-1f,
    0x1.87569p-1f, 0x1.8b411cp-1f, 0x1.8f317cp-1f, 0x1.9327b4p-1f,
    0x1.9723c4p-1f, 0x1.9b25bp-1f, 0x1.9f2d7ap-1f, 0x1.a33b22p-1f,
    0x1.a74ebp-1f, 0x1.ab682p-1f, 0x1.af877ap-1f, 0x1.b3acbep-1f,
    0x1.b7d7ecp-1f, 0x1.bc090cp-1f, 0x1.c0401ap-1f, 0x1.c47d1ep-1f,
    0x1.c8c018p-1f, 0x1.cd090ap-1f, 0x1.d157f6p-1f, 0x1.d5acep-1f,
    0x1.da07c8p-1f, 0x1.de68b4p-1f, 0x1.e2cfa2p-1f, 0x1.e73c98p-1f,
    0x1.ebaf98p-1f, 0x1.f028a2p-1f, 0x1.f4a7bap-1f, 0x1.f92ce2p-1f,
    0x1.fdb81cp-1f};

/// Linear -> sRGB, quantised to the 8-bit step the channel will store (as k / 255).
DUET_INLINE float duet_linear_to_srgb(float c) {
    if (!(c > 0.0f))
        return 0.0f; // NaN and negatives
    uint k = 0;
    for (uint step = 128; step; step >>= 1)
        k = c >= duet_srgb_steps[k + step - 1] ? k + step : k;
    return (float)k * (1.0f / 255.0f);
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
    case DUET_SIGNED_INT32: // read_imagef of a 32-bit integer channel: its bits (duet_channel_i)
    case DUET_UNSIGNED_INT32:
        return as_float(((global uint*)p)[i]);
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
    case DUET_FLOAT:
        // The spec leaves read_imagei/ui of a float image undefined (6.15.15); GPUs and PoCL
        // return the stored bits, and GPU codes rely on it (a double kept as a CL_RG/CL_FLOAT
        // texel and read back with as_double2(read_imagei(...))). So 32-bit channels read with
        // the other type's function give their bits, never a conversion or zero.
        return ((global int*)p)[i];
    default:
        return 0;
    }
}

/// Stored channels -> RGBA, missing colour channels 0 and a missing alpha 1.
#define DUET_GATHER(T, CH, ZERO, ONE)                                                         \
    T r = (T)(ZERO, ZERO, ZERO, ONE);                                                          \
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

// The common formats are read inline, at about the cost of a buffer load: which load a format
// takes (KernelImageDesc::readPath, kImageRead* in core/image.hpp) and log2 of its element size
// are computed on the host per launch, so a read tests one descriptor field that LLVM hoists out
// of a loop of reads (the CPU work-group pass marks an image argument dereferenceable), and the
// texel's offset is a shift, not a multiplication by the element size.
// Bits, tested one at a time: LLVM turns a chain of tests of one value into a switch, which it
// neither unswitches a loop of reads on nor vectorises.
#define DUET_READ_PLAIN32 1u // CL_R, CL_RG, CL_RGBA of CL_FLOAT, CL_SIGNED_INT32, CL_UNSIGNED_INT32
#define DUET_READ_UNORM8X4 2u // CL_RGBA and CL_BGRA of CL_UNORM_INT8
#define DUET_READ_BGRA 4u     // with DUET_READ_UNORM8X4: bytes 0 and 2 swapped

DUET_INLINE uint duet_read_path(global duet_image* d) { return (uint)d->readPath & 15u; }

/// Byte offset of texel (x, y, z), which must be inside the image: the coordinates are then
/// non-negative, and zero extension is free where sign extension is an instruction.
DUET_INLINE size_t duet_offset(global duet_image* d, int x, int y, int z) {
    const uint shift = ((uint)d->readPath >> 4) & 15u;
    return ((size_t)(uint)x << shift) + (size_t)(uint)y * d->rowPitch +
           (size_t)(uint)z * d->slicePitch;
}

// Texels of 32-bit channels in the order they are returned in (buffers kept as images, doubles
// as CL_RG texels): the channels' words, 0 for a missing colour channel and 1 for a missing
// alpha, as DUET_GATHER gives. Word 0 is loaded the same way for every channel count and the
// pairs as one 8-byte load (a double kept in a CL_RG texel is one load), so that a read whose
// caller uses .x (or .xy) alone is that load, with no test of the channel count left.
typedef float __attribute__((aligned(4))) duet_float2_u __attribute__((ext_vector_type(2)));
typedef int __attribute__((aligned(4))) duet_int2_u __attribute__((ext_vector_type(2)));
typedef uint __attribute__((aligned(1))) duet_uint_u;
#define DUET_PLAIN32(T, ST, ST2, ZERO, ONE)                                                    \
    global ST* q = (global ST*)p;                                                              \
    if (n == 1)                                                                                \
        return (T)(q[0], ZERO, ZERO, ONE);                                                     \
    const ST2 lo = *(global ST2*)q;                                                            \
    if (n == 2)                                                                                \
        return (T)(lo, ZERO, ONE);                                                             \
    return (T)(lo, *(global ST2*)(q + 2)); /* CL_RGBA: CL_RGB has packed types only */

DUET_INLINE float4 duet_plain32_f(global uchar* p, int n) {
    DUET_PLAIN32(float4, float, duet_float2_u, 0.0f, 1.0f)
}
DUET_INLINE int4 duet_plain32_i(global uchar* p, int n) {
    DUET_PLAIN32(int4, int, duet_int2_u, 0, 1)
}

// On the CPU the other formats' texel loads are out of line: inlined into a loop, their
// switches cost registers and the loop's size (LLVM then neither keeps the loop's values in
// registers nor unswitches it on the format test); a call's cost is small beside them. They are
// `cold` as well, which the CPU code generator reads as "call with preserve_most"
// (normaliseForCpu): the call clobbers no register the loop keeps a value in, so the inline
// paths' loop keeps the descriptor's fields in registers rather than on the stack.
#ifdef __SPIR__
#define DUET_ANY_FORMAT static __attribute__((noinline, cold))
#else
#define DUET_ANY_FORMAT DUET_INLINE
#endif

DUET_ANY_FORMAT float4 duet_load_any_f(global duet_image* d, global uchar* p) {
    if (duet_is_srgb(d->order)) { // 4 x UNORM_INT8, the only sRGB type
        float4 r = (float4)(duet_srgb_decode[p[0]], duet_srgb_decode[p[1]],
                            duet_srgb_decode[p[2]], (float)p[3] * (1.0f / 255.0f));
        return d->order == DUET_SBGRA ? r.zyxw : r;
    }
    const int n = d->channels;
    DUET_GATHER(float4, duet_channel_f, 0.0f, 1.0f)
    return r;
}

DUET_ANY_FORMAT int4 duet_load_any_i(global duet_image* d, global uchar* p) {
    const int n = d->channels;
    DUET_GATHER(int4, duet_channel_i, 0, 1)
    return r;
}

/// A texel of 4 x CL_UNORM_INT8 as float4, its bytes 0 and 2 swapped for CL_BGRA. The swap is
/// arithmetic with a mask, not a select between two swizzles: LLVM would unswitch a loop of
/// reads on such a select first and keep the test of the format in every other version.
DUET_INLINE float4 duet_unorm8x4(global uchar* p, uint path) {
    const uint w = *(global duet_uint_u*)p;
    const uint mask = (0u - ((path / DUET_READ_BGRA) & 1u)) & 0xFFu;
    const uint t = (w ^ (w >> 16)) & mask;
    return convert_float4(as_uchar4(w ^ (t | t << 16))) * (1.0f / 255.0f);
}

/// Texel (x, y, z) as float4; the border colour outside the image unless `inside` says the
/// coordinates are inside (clamp to edge): then there is no test at all.
DUET_INLINE float4 duet_load_f(global duet_image* d, int x, int y, int z, bool inside) {
    const uint path = duet_read_path(d);
    const int n = d->channels;
    if (!inside && !duet_inside(d, x, y, z))
        return duet_border_f(d);
    global uchar* p = d->data + duet_offset(d, x, y, z);
    // The words of integer channels as float: their bits.
    if (__builtin_expect((path & DUET_READ_PLAIN32) != 0u, 1))
        return duet_plain32_f(p, n);
    if ((path & DUET_READ_UNORM8X4) != 0u) // RGBA or BGRA of CL_UNORM_INT8, the colour formats
        return duet_unorm8x4(p, path);
    return duet_load_any_f(d, duet_texel(d, x, y, z));
}

DUET_INLINE int4 duet_load_i(global duet_image* d, int x, int y, int z, bool inside) {
    const uint path = duet_read_path(d);
    const int n = d->channels;
    if (!inside && !duet_inside(d, x, y, z))
        return duet_border_i(d);
    // CL_FLOAT read as integers: its bits (duet_channel_i).
    if (__builtin_expect((path & DUET_READ_PLAIN32) != 0u, 1))
        return duet_plain32_i(d->data + duet_offset(d, x, y, z), n);
    return duet_load_any_i(d, duet_texel(d, x, y, z));
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
    // Clamp to edge keeps every coordinate inside: no bounds test (the layer is clamped too).
    const bool in = (smp & DUET_S_ADDRESS_MASK) == DUET_S_CLAMP_TO_EDGE;
    if (!(smp & DUET_S_LINEAR)) {
        int i[3] = {0, 0, zl};
        for (int k = 0; k < dims; ++k)
            i[k] = duet_nearest(cc[k], size[k], smp);
        return duet_load_f(d, i[0], i[1], i[2], in);
    }
    int i0[3] = {0, 0, zl}, i1[3] = {0, 0, zl};
    float a[3] = {0.0f, 0.0f, 0.0f};
    for (int k = 0; k < dims; ++k)
        a[k] = duet_linear(cc[k], size[k], smp, &i0[k], &i1[k]);
    if (dims == 1)
        return (1.0f - a[0]) * duet_load_f(d, i0[0], 0, zl, in) +
               a[0] * duet_load_f(d, i1[0], 0, zl, in);
    float4 r = (1.0f - a[0]) * (1.0f - a[1]) * duet_load_f(d, i0[0], i0[1], i0[2], in) +
               a[0] * (1.0f - a[1]) * duet_load_f(d, i1[0], i0[1], i0[2], in) +
               (1.0f - a[0]) * a[1] * duet_load_f(d, i0[0], i1[1], i0[2], in) +
               a[0] * a[1] * duet_load_f(d, i1[0], i1[1], i0[2], in);
    if (dims == 2)
        return r;
    return (1.0f - a[2]) * r +
           a[2] * ((1.0f - a[0]) * (1.0f - a[1]) * duet_load_f(d, i0[0], i0[1], i1[2], in) +
                   a[0] * (1.0f - a[1]) * duet_load_f(d, i1[0], i0[1], i1[2], in) +
                   (1.0f - a[0]) * a[1] * duet_load_f(d, i0[0], i1[1], i1[2], in) +
                   a[0] * a[1] * duet_load_f(d, i1[0], i1[1], i1[2], in));
}

/// Integer formats: nearest filtering only (§8.2: linear is undefined for them).
DUET_INLINE int4 duet_read_i(global duet_image* d, uint smp, float4 c, int dims, int layer) {
    const float cc[4] = {c.x, c.y, c.z, c.w};
    const int size[3] = {d->width, d->height, d->depth};
    int i[3] = {0, 0, layer >= 0 ? duet_layer(d, cc[layer]) : 0};
    for (int k = 0; k < dims; ++k)
        i[k] = duet_nearest(cc[k], size[k], smp);
    return duet_load_i(d, i[0], i[1], i[2],
                       (smp & DUET_S_ADDRESS_MASK) == DUET_S_CLAMP_TO_EDGE);
}

/// Sampled reads at integer coordinates. The spec defines them for unnormalised coordinates,
/// nearest filtering and CLK_ADDRESS_NONE, _CLAMP or _CLAMP_TO_EDGE (§6.15.15.2); for those the
/// texel is the one duet_nearest picks, without the trip through float (a coordinate that float
/// rounds, beyond 2^24, is outside any image either way). Clamp to edge clamps; the other two
/// modes read the border colour outside the image, which the unclamped coordinate gives as well
/// as the one clamped to [-1, size]. Other samplers keep the float path, whatever it gives.
DUET_INLINE bool duet_int_sampler(uint smp) {
    const uint mode = smp & DUET_S_ADDRESS_MASK;
    return !(smp & (DUET_S_NORMALIZED | DUET_S_LINEAR)) &&
           (mode == 0 || mode == DUET_S_CLAMP || mode == DUET_S_CLAMP_TO_EDGE);
}

DUET_INLINE int duet_nearest_int(int i, int size, uint smp) {
    return (smp & DUET_S_ADDRESS_MASK) == DUET_S_CLAMP_TO_EDGE ? clamp(i, 0, size - 1) : i;
}

#define DUET_INT_SAMPLED_COORDS                                                                \
    const int cc[4] = {c.x, c.y, c.z, c.w};                                                    \
    const int size[3] = {d->width, d->height, d->depth};                                       \
    int i[3] = {0, 0, layer >= 0 ? clamp(cc[layer], 0, d->arraySize - 1) : 0};                 \
    for (int k = 0; k < dims; ++k)                                                             \
        i[k] = duet_nearest_int(cc[k], size[k], smp);

DUET_INLINE float4 duet_read_int_f(global duet_image* d, uint smp, int4 c, int dims, int layer) {
    if (!duet_int_sampler(smp))
        return duet_read_f(d, smp, convert_float4(c), dims, layer);
    DUET_INT_SAMPLED_COORDS
    return duet_load_f(d, i[0], i[1], i[2], (smp & DUET_S_ADDRESS_MASK) == DUET_S_CLAMP_TO_EDGE);
}

DUET_INLINE int4 duet_read_int_i(global duet_image* d, uint smp, int4 c, int dims, int layer) {
    if (!duet_int_sampler(smp))
        return duet_read_i(d, smp, convert_float4(c), dims, layer);
    DUET_INT_SAMPLED_COORDS
    return duet_load_i(d, i[0], i[1], i[2], (smp & DUET_S_ADDRESS_MASK) == DUET_S_CLAMP_TO_EDGE);
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
    return duet_load_f(d, x, y, z, false);
}
DUET_INLINE int4 duet_fetch_i(global duet_image* d, int4 c, int dims, int layer) {
    DUET_INT_COORDS
    return duet_load_i(d, x, y, z, false);
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

// A device may read some images through texture hardware first: builtins/nvidia/texture.h
// (included for the NVIDIA device) defines DUET_TEX_F/DUET_TEX_I to do so and return true;
// elsewhere they are false and every read below is software.
// With textures, the software reads are out of line, so that a read through a texture stays
// small enough to inline into the kernel. Each is preceded by a call of
// __duet_software_read(image, sampler bits, class wanted, dims, layer), which no library defines:
// the code generator reads what each software read would need of the textures from it, to make
// the kernel's texture-only variant, and then deletes it
// (devices/nvidia/codegen/texture_variants.cpp).
#ifdef DUET_NVIDIA_TEXTURES
#include "../nvidia/texture.h"
#define DUET_SOFTWARE_READ static __attribute__((noinline, cold))
void __duet_software_read(global duet_image* d, uint smp, uint cls, int dims, int layer);
#define DUET_SOFTWARE_MARK(d, smp, cls, dims, layer) __duet_software_read(d, smp, cls, dims, layer)
#else
#define DUET_TEX_F(d, smp, c, dims, layer, out) false
#define DUET_TEX_I(d, smp, c, dims, layer, cls, out) false
#define DUET_TEX_FLOAT 1u
#define DUET_TEX_SIGNED 2u
#define DUET_TEX_UNSIGNED 3u
#define DUET_TEX_FETCH_SAMPLER 0x10u
#define DUET_SOFTWARE_READ DUET_INLINE
#define DUET_SOFTWARE_MARK(d, smp, cls, dims, layer)
#endif

DUET_SOFTWARE_READ float4 duet_soft_read_f(global duet_image* d, uint smp, float4 c, int dims,
                                           int layer) {
    return duet_read_f(d, smp, c, dims, layer);
}
DUET_SOFTWARE_READ int4 duet_soft_read_i(global duet_image* d, uint smp, float4 c, int dims,
                                         int layer) {
    return duet_read_i(d, smp, c, dims, layer);
}
DUET_SOFTWARE_READ float4 duet_soft_read_int_f(global duet_image* d, uint smp, int4 c, int dims,
                                               int layer) {
    return duet_read_int_f(d, smp, c, dims, layer);
}
DUET_SOFTWARE_READ int4 duet_soft_read_int_i(global duet_image* d, uint smp, int4 c, int dims,
                                             int layer) {
    return duet_read_int_i(d, smp, c, dims, layer);
}
DUET_SOFTWARE_READ float4 duet_soft_fetch_f(global duet_image* d, int4 c, int dims, int layer) {
    return duet_fetch_f(d, c, dims, layer);
}
DUET_SOFTWARE_READ int4 duet_soft_fetch_i(global duet_image* d, int4 c, int dims, int layer) {
    return duet_fetch_i(d, c, dims, layer);
}

DUET_INLINE float4 duet_sampled_f(global duet_image* d, uint smp, float4 c, int dims, int layer) {
    float4 t;
    if (DUET_TEX_F(d, smp, c, dims, layer, &t))
        return t;
    DUET_SOFTWARE_MARK(d, smp, DUET_TEX_FLOAT, dims, layer);
    return duet_soft_read_f(d, smp, c, dims, layer);
}
DUET_INLINE int4 duet_sampled_i(global duet_image* d, uint smp, float4 c, int dims, int layer,
                                uint cls) {
    int4 t;
    if (DUET_TEX_I(d, smp, c, dims, layer, cls, &t))
        return t;
    DUET_SOFTWARE_MARK(d, smp, cls, dims, layer);
    return duet_soft_read_i(d, smp, c, dims, layer);
}

DUET_INLINE float4 duet_sampled_int_f(global duet_image* d, uint smp, int4 c, int dims,
                                      int layer) {
    float4 t;
    if (DUET_TEX_F(d, smp, convert_float4(c), dims, layer, &t))
        return t;
    DUET_SOFTWARE_MARK(d, smp, DUET_TEX_FLOAT, dims, layer);
    return duet_soft_read_int_f(d, smp, c, dims, layer);
}
DUET_INLINE int4 duet_sampled_int_i(global duet_image* d, uint smp, int4 c, int dims, int layer,
                                    uint cls) {
    int4 t;
    if (DUET_TEX_I(d, smp, convert_float4(c), dims, layer, cls, &t))
        return t;
    DUET_SOFTWARE_MARK(d, smp, cls, dims, layer);
    return duet_soft_read_int_i(d, smp, c, dims, layer);
}

// Sampled reads of colour images: float and int coordinates.
#define DUET_SAMPLED(T, W, DIMS, LAYER)                                                        \
    DUET_OVL float4 read_imagef(read_only T i, sampler_t s, float##W c) {                      \
        return duet_sampled_f(DESC(i), SBITS(s), DUET_F4_##W(c), DIMS, LAYER);                 \
    }                                                                                          \
    DUET_OVL float4 read_imagef(read_only T i, sampler_t s, int##W c) {                        \
        return duet_sampled_int_f(DESC(i), SBITS(s), DUET_I4_##W(c), DIMS, LAYER);             \
    }                                                                                          \
    DUET_OVL int4 read_imagei(read_only T i, sampler_t s, float##W c) {                        \
        return duet_sampled_i(DESC(i), SBITS(s), DUET_F4_##W(c), DIMS, LAYER,                  \
                              DUET_TEX_SIGNED);                                                \
    }                                                                                          \
    DUET_OVL int4 read_imagei(read_only T i, sampler_t s, int##W c) {                          \
        return duet_sampled_int_i(DESC(i), SBITS(s), DUET_I4_##W(c), DIMS, LAYER,              \
                                  DUET_TEX_SIGNED);                                            \
    }                                                                                          \
    DUET_OVL uint4 read_imageui(read_only T i, sampler_t s, float##W c) {                      \
        return as_uint4(duet_sampled_i(DESC(i), SBITS(s), DUET_F4_##W(c), DIMS, LAYER,         \
                                       DUET_TEX_UNSIGNED));                                    \
    }                                                                                          \
    DUET_OVL uint4 read_imageui(read_only T i, sampler_t s, int##W c) {                        \
        return as_uint4(duet_sampled_int_i(DESC(i), SBITS(s), DUET_I4_##W(c), DIMS, LAYER,     \
                                           DUET_TEX_UNSIGNED));                                \
    }

DUET_SAMPLED(image1d_t, 1, 1, -1)
DUET_SAMPLED(image1d_array_t, 2, 1, 1)
DUET_SAMPLED(image2d_t, 2, 2, -1)
DUET_SAMPLED(image2d_array_t, 4, 2, 2)
DUET_SAMPLED(image3d_t, 4, 3, -1)

// Sampled reads of depth images return the depth alone.
#define DUET_SAMPLED_DEPTH(T, W, LAYER)                                                        \
    DUET_OVL float read_imagef(read_only T i, sampler_t s, float##W c) {                       \
        return duet_sampled_f(DESC(i), SBITS(s), DUET_F4_##W(c), 2, LAYER).x;                  \
    }                                                                                          \
    DUET_OVL float read_imagef(read_only T i, sampler_t s, int##W c) {                         \
        return duet_sampled_int_f(DESC(i), SBITS(s), DUET_I4_##W(c), 2, LAYER).x;              \
    }

DUET_SAMPLED_DEPTH(image2d_depth_t, 2, -1)
DUET_SAMPLED_DEPTH(image2d_array_depth_t, 4, 2)

// Sampler-less reads (read_only and read_write images) and writes (write_only, read_write).
// Only read_only images may go through textures (TEX 1): a read_write image's texels may
// change in the same launch.
/// The texel centre of integer coordinates `c` for a texture read; an array layer stays the
/// integer it is (a layer coordinate is rounded, not floored).
DUET_INLINE float4 duet_texel_centre(int4 c, int layer) {
    const float4 f = convert_float4(c);
    const float4 centre = f + 0.5f;
    return layer == 1   ? (float4)(centre.x, f.y, centre.zw)
           : layer == 2 ? (float4)(centre.xy, f.z, centre.w)
                        : centre;
}
DUET_INLINE float4 duet_fetch_tex_f(global duet_image* d, int4 c, int dims, int layer, int tex) {
    float4 t;
    if (tex && DUET_TEX_F(d, DUET_TEX_FETCH_SAMPLER, duet_texel_centre(c, layer), dims, layer, &t))
        return t;
    if (!tex)
        return duet_fetch_f(d, c, dims, layer);
    DUET_SOFTWARE_MARK(d, DUET_TEX_FETCH_SAMPLER, DUET_TEX_FLOAT, dims, layer);
    return duet_soft_fetch_f(d, c, dims, layer);
}
DUET_INLINE int4 duet_fetch_tex_i(global duet_image* d, int4 c, int dims, int layer, int tex,
                                  uint cls) {
    int4 t;
    if (tex &&
        DUET_TEX_I(d, DUET_TEX_FETCH_SAMPLER, duet_texel_centre(c, layer), dims, layer, cls, &t))
        return t;
    if (!tex)
        return duet_fetch_i(d, c, dims, layer);
    DUET_SOFTWARE_MARK(d, DUET_TEX_FETCH_SAMPLER, cls, dims, layer);
    return duet_soft_fetch_i(d, c, dims, layer);
}
#define DUET_FETCH(ACC, T, W, DIMS, LAYER, TEX)                                                \
    DUET_OVL float4 read_imagef(ACC T i, int##W c) {                                           \
        return duet_fetch_tex_f(DESC(i), DUET_I4_##W(c), DIMS, LAYER, TEX);                    \
    }                                                                                          \
    DUET_OVL int4 read_imagei(ACC T i, int##W c) {                                             \
        return duet_fetch_tex_i(DESC(i), DUET_I4_##W(c), DIMS, LAYER, TEX, DUET_TEX_SIGNED);   \
    }                                                                                          \
    DUET_OVL uint4 read_imageui(ACC T i, int##W c) {                                           \
        return as_uint4(                                                                       \
            duet_fetch_tex_i(DESC(i), DUET_I4_##W(c), DIMS, LAYER, TEX, DUET_TEX_UNSIGNED));   \
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
#define DUET_FETCH_DEPTH(ACC, T, W, LAYER, TEX)                                                \
    DUET_OVL float read_imagef(ACC T i, int##W c) {                                            \
        return duet_fetch_tex_f(DESC(i), DUET_I4_##W(c), 2, LAYER, TEX).x;                     \
    }
#define DUET_WRITE_DEPTH(ACC, T, W, LAYER)                                                     \
    DUET_OVL void write_imagef(ACC T i, int##W c, float v) {                                   \
        duet_write_f(DESC(i), DUET_I4_##W(c), 2, LAYER, (float4)(v, 0.0f, 0.0f, 1.0f));        \
    }

// 1D image buffers never go through textures (a buffer's bytes; no texture object is made).
#define DUET_ALL_FETCH(ACC, TEX)                                                               \
    DUET_FETCH(ACC, image1d_t, 1, 1, -1, TEX)                                                  \
    DUET_FETCH(ACC, image1d_buffer_t, 1, 1, -1, 0)                                             \
    DUET_FETCH(ACC, image1d_array_t, 2, 1, 1, TEX)                                             \
    DUET_FETCH(ACC, image2d_t, 2, 2, -1, TEX)                                                  \
    DUET_FETCH(ACC, image2d_array_t, 4, 2, 2, TEX)                                             \
    DUET_FETCH(ACC, image3d_t, 4, 3, -1, TEX)                                                  \
    DUET_FETCH_DEPTH(ACC, image2d_depth_t, 2, -1, TEX)                                         \
    DUET_FETCH_DEPTH(ACC, image2d_array_depth_t, 4, 2, TEX)
#define DUET_ALL_WRITE(ACC)                                                                    \
    DUET_WRITE(ACC, image1d_t, 1, 1, -1)                                                       \
    DUET_WRITE(ACC, image1d_buffer_t, 1, 1, -1)                                                \
    DUET_WRITE(ACC, image1d_array_t, 2, 1, 1)                                                  \
    DUET_WRITE(ACC, image2d_t, 2, 2, -1)                                                       \
    DUET_WRITE(ACC, image2d_array_t, 4, 2, 2)                                                  \
    DUET_WRITE(ACC, image3d_t, 4, 3, -1)                                                       \
    DUET_WRITE_DEPTH(ACC, image2d_depth_t, 2, -1)                                              \
    DUET_WRITE_DEPTH(ACC, image2d_array_depth_t, 4, 2)

DUET_ALL_FETCH(read_only, 1)
DUET_ALL_FETCH(read_write, 0)
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
