// Float square-root family on the GPU's special-function unit where the spec's limits allow
// it. libclc's nvptx library computes rsqrt and even native_rsqrt/native_sqrt as a correctly
// rounded sqrt.rn followed by a correctly rounded division: two long instruction sequences
// where one MUFU instruction meets the limit.
// - rsqrt, half_rsqrt, native_rsqrt: rsqrt.approx.f32 (non-ftz: denormals supported), at most
//   2 ulp (the spec's limit for rsqrt, and CUDA's rsqrtf is the same instruction).
// - half_sqrt, native_sqrt: sqrt.approx.f32 (relative error 2^-23).
// - native_recip, native_divide: div.approx.f32 (2 ulp for divisors of magnitude within
//   [2^-126, 2^126]; native_ accuracy is implementation-defined).
// sqrt itself stays libclc's (3 ulp allowed, but libclc's own functions rely on it), and so do
// half_recip and half_divide (div.approx is wrong outside that divisor range).
#include "builtins.h"

DUET_CONST float rsqrt(float x) {
    return __nvvm_rsqrt_approx_f(x);
}
DUET_CONST float half_rsqrt(float x) {
    return __nvvm_rsqrt_approx_f(x);
}
DUET_CONST float native_rsqrt(float x) {
    return __nvvm_rsqrt_approx_f(x);
}
DUET_CONST float half_sqrt(float x) {
    return __nvvm_sqrt_approx_f(x);
}
DUET_CONST float native_sqrt(float x) {
    return __nvvm_sqrt_approx_f(x);
}
DUET_CONST float native_recip(float x) {
    return __nvvm_div_approx_f(1.0f, x);
}
DUET_CONST float native_divide(float x, float y) {
    return __nvvm_div_approx_f(x, y);
}

DUET_VEC_1(DUET_CONST, float, rsqrt, float)
DUET_VEC_1(DUET_CONST, float, half_rsqrt, float)
DUET_VEC_1(DUET_CONST, float, native_rsqrt, float)
DUET_VEC_1(DUET_CONST, float, half_sqrt, float)
DUET_VEC_1(DUET_CONST, float, native_sqrt, float)
DUET_VEC_1(DUET_CONST, float, native_recip, float)
DUET_VEC_2VV(DUET_CONST, float, native_divide, float, float)
