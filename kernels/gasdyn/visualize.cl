// duet-gasdyn's picture: density, pressure or a numerical schlieren image of the state
// (kernels/gasdyn/gasdyn.cl's layout) written by one work-item per cell into an RGBA image, the
// CL view of the GL texture the sample draws. Ranges come from the device-side reduction's
// figures (no host round trip): s1/-s2 density, s3/-s4 pressure, s5 the largest |grad rho|.

#define G 2
#define FRONT 64 // spare cells before the first ghost row (gasdyn.cl)
#define FIELD_DENSITY 0
#define FIELD_PRESSURE 1
#define FIELD_SCHLIEREN 2

// Duet's colour map (samples/gasdyn/gasdyn_sim.cpp has the same stops for the tests):
// piecewise linear through six colours, dark indigo to pale yellow, brightness rising.
__constant float3 kStops[6] = {(float3)(0.05f, 0.03f, 0.20f), (float3)(0.10f, 0.25f, 0.65f),
                               (float3)(0.10f, 0.60f, 0.75f), (float3)(0.45f, 0.80f, 0.35f),
                               (float3)(0.95f, 0.55f, 0.15f), (float3)(1.00f, 0.95f, 0.60f)};

static inline float3 colorMap(float t) {
    float x = clamp(t, 0.0f, 1.0f) * 5.0f;
    int k = min((int)x, 4);
    float f = x - (float)k;
    return mix(kStops[k], kStops[k + 1], f);
}

// Global size (>= nx, >= ny); texel (i, j) shows interior cell (i, j) (row 0 at the bottom,
// as GL's texture coordinates have it).
__kernel void render_field(__global const float4 *state, int nx, int ny, int pitch, float gamma,
                           int field,
                           __global const float8 *figures, float rdx, float rdy, float contrast,
                           __write_only image2d_t image) {
    const int i = get_global_id(0), j = get_global_id(1);
    if (i >= nx || j >= ny)
        return;
    const size_t at = FRONT + (size_t)(j + G) * pitch + i + G;
    const float8 r = figures[0];
    float4 u = state[at];
    float3 rgb;
    if (field == FIELD_SCHLIEREN) {
        // Neighbours clamped to the interior: ghost cells may lag a sweep behind.
        const int il = max(i - 1, 0) - i, ih = min(i + 1, nx - 1) - i;
        const int jl = max(j - 1, 0) - j, jh = min(j + 1, ny - 1) - j;
        float gx = (state[at + ih].x - state[at + il].x) * rdx / (float)max(ih - il, 1);
        float gy = (state[at + jh * pitch].x - state[at + jl * pitch].x) * rdy /
                   (float)max(jh - jl, 1);
        float g = sqrt(gx * gx + gy * gy) / fmax(r.s5, 1e-20f);
        rgb = exp(-contrast * g) * (float3)(0.96f, 0.96f, 0.92f);
    } else {
        float v, lo, hi;
        if (field == FIELD_DENSITY) {
            v = u.x;
            lo = -r.s2;
            hi = r.s1;
        } else {
            float rho = fmax(u.x, 1e-6f);
            v = (gamma - 1.0f) * (u.w - 0.5f * (u.y * u.y + u.z * u.z) / rho);
            lo = -r.s4;
            hi = r.s3;
        }
        float span = hi - lo;
        rgb = colorMap(span > 1e-12f * fabs(hi) ? (v - lo) / span : 0.5f);
    }
    write_imagef(image, (int2)(i, j), (float4)(rgb, 1.0f));
}
