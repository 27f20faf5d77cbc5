// Tessendorf ocean (duet-ocean): the Phillips spectrum with Gaussian noise, its time evolution
// with choppy displacement, and the partial differences that turn the inverse-FFT'd fields into
// displaced vertex positions and normals. Grids are n x n, x fastest; array index i along an
// axis stands for wave number 2 pi m / L with m = i for i < n/2, else i - n (FFT order), so
// the inverse FFT sums exactly Tessendorf's h(x) = sum_k h(k) e^(i k.x) with no shift.

#define GRAVITY 9.81f

inline int waveIndex(int i, int n) { return i < n / 2 ? i : i - n; }

// A 32-bit integer hash (PCG's output permutation): per-k random numbers that do not depend on
// the order work-items run in, so every device and platform draws the same ocean.
inline uint hash32(uint v) {
    uint state = v * 747796405u + 2891336453u;
    uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

// Uniform in (0, 1]: never 0, so log() below is finite.
inline float uniform01(uint h) { return ((float)(h >> 8) + 1.0f) * (1.0f / 16777216.0f); }

// The Phillips spectrum P(k) = A exp(-1/(k Lw)^2) / k^4 |k.w|^2 exp(-k^2 l^2), Lw = V^2 / g the
// largest wave the wind makes, l = Lw / 1000 damping the smallest. Same formula as the host's
// phillips() in samples/ocean/ocean_sim.cpp (the tests compare them).
inline float phillips(float kx, float kz, float amplitude, float windSpeed, float2 windDir) {
    float k2 = kx * kx + kz * kz;
    if (k2 < 1e-12f)
        return 0.0f;
    float lw = windSpeed * windSpeed / GRAVITY;
    float kw = (kx * windDir.x + kz * windDir.y);
    float l = lw * 0.001f;
    return amplitude * exp(-1.0f / (k2 * lw * lw)) / (k2 * k2) * (kw * kw / k2) * exp(-k2 * l * l);
}

// One work-item per wave vector: h0(k) = (xi_r + i xi_i) sqrt(P(k) / 2), xi standard normal
// (Box-Muller on hashed uniforms). Written as float4 (h0.re, h0.im, P(k), 0).
__kernel void phillips_spectrum(__global float4 *h0, int n, float patch, float amplitude,
                                float windSpeed, float2 windDir, uint seed) {
    int ix = get_global_id(0), iy = get_global_id(1);
    if (ix >= n || iy >= n)
        return;
    float kx = 2.0f * M_PI_F * (float)waveIndex(ix, n) / patch;
    float kz = 2.0f * M_PI_F * (float)waveIndex(iy, n) / patch;
    float p = phillips(kx, kz, amplitude, windSpeed, windDir);
    uint id = (uint)(iy * n + ix);
    uint h1 = hash32(id * 2u + hash32(seed));
    uint h2 = hash32(h1 ^ 0x9e3779b9u);
    float r = sqrt(-2.0f * log(uniform01(h1)));
    float a = 2.0f * M_PI_F * uniform01(h2);
    float s = sqrt(p * 0.5f);
    h0[id] = (float4)(r * cos(a) * s, r * sin(a) * s, p, 0.0f);
}

inline float2 cmul(float2 a, float2 b) {
    return (float2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// h(k, t) = h0(k) e^(i w t) + conj(h0(-k)) e^(-i w t), w = sqrt(g k), and the choppy
// displacements D(k) = -i k / |k| h(k). h, Dx and Dz are Hermitian, so their inverse FFTs are
// real and two share one complex FFT: spectrum[0] = h + i Dx, spectrum[1] = Dz (n^2 each).
__kernel void ocean_evolve(__global const float4 *h0, __global float2 *spectrum, int n,
                           float patch, float t) {
    int ix = get_global_id(0), iy = get_global_id(1);
    if (ix >= n || iy >= n)
        return;
    float kx = 2.0f * M_PI_F * (float)waveIndex(ix, n) / patch;
    float kz = 2.0f * M_PI_F * (float)waveIndex(iy, n) / patch;
    float k = sqrt(kx * kx + kz * kz);
    float w = sqrt(GRAVITY * k);
    float c, s = sincos(w * t, &c);
    int mx = (n - ix) & (n - 1), my = (n - iy) & (n - 1);
    float4 a = h0[iy * n + ix], b = h0[my * n + mx];
    float2 h = cmul(a.xy, (float2)(c, s)) + cmul((float2)(b.x, -b.y), (float2)(c, -s));
    float2 dx = (float2)(0.0f), dz = (float2)(0.0f);
    // -i (k / |k|) h. On the Nyquist row or column (index n/2) a wave vector is its own mirror
    // along that axis, where -i k h cannot be Hermitian: that component is left out there, so the
    // displacements stay real.
    if (k > 0.0f) {
        if (ix != n / 2)
            dx = (float2)(h.y, -h.x) * (kx / k);
        if (iy != n / 2)
            dz = (float2)(h.y, -h.x) * (kz / k);
    }
    // h + i dx
    spectrum[iy * n + ix] = (float2)(h.x - dx.y, h.y + dx.x);
    spectrum[n * n + iy * n + ix] = dz;
}

// Displaced position of grid point (ix, iy), either coordinate possibly one past the edge
// (periodic: the point of the next patch). Points move by -lambda D: towards the crests, which
// sharpens them (for h = cos(k x), D = sin(k x)).
inline float3 displaced(__global const float2 *field, int ix, int iy, int n, float cell,
                        float lambda) {
    int x = ix & (n - 1), y = iy & (n - 1);
    float2 f0 = field[y * n + x];
    float dz = field[n * n + y * n + x].x;
    return (float3)((float)ix * cell - lambda * f0.y, f0.x, (float)iy * cell - lambda * dz);
}

// Positions (xyz, w = the Jacobian of the horizontal displacement: < 1 where waves fold, for
// foam) and normals (xyz, w = 0) from central differences of the displaced surface.
__kernel void ocean_displace(__global const float2 *field, __global float4 *positions,
                             __global float4 *normals, int n, float patch, float lambda) {
    int ix = get_global_id(0), iy = get_global_id(1);
    if (ix >= n || iy >= n)
        return;
    float cell = patch / (float)n;
    float3 p = displaced(field, ix, iy, n, cell, lambda);
    float3 east = displaced(field, ix + 1, iy, n, cell, lambda);
    float3 west = displaced(field, ix - 1 + n, iy, n, cell, lambda) - (float3)(patch, 0.0f, 0.0f);
    float3 north = displaced(field, ix, iy + 1, n, cell, lambda);
    float3 south = displaced(field, ix, iy - 1 + n, n, cell, lambda) - (float3)(0.0f, 0.0f, patch);
    float3 du = east - west, dv = north - south;
    float3 nrm = normalize(cross(dv, du));
    // Jacobian of (x + lambda Dx, z + lambda Dz) over (x, z), by the same differences.
    float jxx = du.x / (2.0f * cell), jzz = dv.z / (2.0f * cell);
    float jxz = dv.x / (2.0f * cell), jzx = du.z / (2.0f * cell);
    positions[iy * n + ix] = (float4)(p, jxx * jzz - jxz * jzx);
    normals[iy * n + ix] = (float4)(nrm, 0.0f);
}
