// Batched complex FFTs (float2) along one axis: Stockham autosort, radix-8 passes (one radix-2 or
// radix-4 pass first when log2 N is not a multiple of 3), a work-group transforming whole
// sequences in __local memory. Built by kernels/fft/fft.cpp with, per axis A in {X, Y}:
//   FFT_NA  points along the axis (a power of two, 2 and up)
//   FFT_GA  sequences per work-group
// (FFT_GT and FFT_TILE for columns by transposition, below)
// and FFT_LOCAL_POINTS = max over the axes of FFT_GA * FFT_NA (each half of the __local array).
//
// X kernels ("row" layout): local id 0 walks the butterflies of one sequence, local id 1 picks the
// sequence, so neighbouring work-items touch neighbouring points — unit stride when the points
// are contiguous (rows). Y kernels ("column" layout): local id 0 picks the sequence, local id 1
// the butterfly, so neighbouring work-items touch neighbouring sequences — unit stride when the
// sequences are adjacent columns. Either way a SIMD-across-work-items device (Duet's CPU) gets
// contiguous vector loads and stores, and a GPU gets coalesced ones.
//
// Every work-item holds 8 points (fewer when N < 8) through a pass; the first pass reads global
// memory, the last writes it, the ones between go through two halves of __local memory in turn. A work-group
// reads all its points before it writes any, and no two work-groups share a sequence, so the
// transform may run in place (in == out).
//
// Sequence t (0 <= t < count) starts at (t / inner) * slabDist + (t % inner) * dist and its
// points are `stride` apart: rows of a batch of 2D arrays are inner = count, dist = NX,
// stride = 1; its columns are inner = NX, dist = 1, stride = NX, slabDist = NX * NY.

inline float2 cmul(float2 a, float2 b) {
    return (float2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// a * (-i) forward, a * i inverse: the radix-4 rotation.
inline float2 rot4(float2 a, bool inv) {
    return inv ? (float2)(-a.y, a.x) : (float2)(a.y, -a.x);
}

inline void fft2(float2 *v) {
    float2 a = v[0];
    v[0] = a + v[1];
    v[1] = a - v[1];
}

inline void fft4(float2 *v, bool inv) {
    float2 t0 = v[0] + v[2], t1 = v[0] - v[2];
    float2 t2 = v[1] + v[3], t3 = rot4(v[1] - v[3], inv);
    v[0] = t0 + t2;
    v[2] = t0 - t2;
    v[1] = t1 + t3;
    v[3] = t1 - t3;
}

// Radix 8 as two radix-4 halves (even and odd points) joined by the eighth roots of unity.
inline void fft8(float2 *v, bool inv) {
    float2 e[4] = {v[0], v[2], v[4], v[6]};
    float2 o[4] = {v[1], v[3], v[5], v[7]};
    fft4(e, inv);
    fft4(o, inv);
    const float c = M_SQRT1_2_F;
    // o1 * w8, o2 * w8^2, o3 * w8^3 with w8 = e^(-i pi/4) forward, its conjugate inverse.
    float2 o1 = inv ? (float2)(c * (o[1].x - o[1].y), c * (o[1].x + o[1].y))
                    : (float2)(c * (o[1].x + o[1].y), c * (o[1].y - o[1].x));
    float2 o2 = rot4(o[2], inv);
    float2 o3 = inv ? (float2)(-c * (o[3].x + o[3].y), c * (o[3].x - o[3].y))
                    : (float2)(c * (o[3].y - o[3].x), -c * (o[3].x + o[3].y));
    v[0] = e[0] + o[0];
    v[4] = e[0] - o[0];
    v[1] = e[1] + o1;
    v[5] = e[1] - o1;
    v[2] = e[2] + o2;
    v[6] = e[2] - o2;
    v[3] = e[3] + o3;
    v[7] = e[3] - o3;
}

inline void butterfly(float2 *v, int r, bool inv) {
    if (r == 2)
        fft2(v);
    else if (r == 4)
        fft4(v, inv);
    else
        fft8(v, inv);
}

inline int ilog2(int n) {
    int l = 0;
    while ((1 << l) < n)
        ++l;
    return l;
}

// One axis: n points, g sequences per work-group, cols selects the layout (see the top).
// tw holds e^(-2 pi i k / n) for k < n (host-computed in double precision).
static __attribute__((always_inline)) inline void
fftAxis(__global const float2 *in, __global float2 *out, __global const float2 *tw,
        __local float2 *lm, uint count, uint stride, uint dist, uint inner, uint slabDist,
        float scale, const int n, const int g, const bool cols, const bool inv) {
    const int points = n < 8 ? n : 8;   // per work-item
    const int threads = n / points;     // work-items per sequence
    const int log2n = ilog2(n);
    const int passes = (log2n + 2) / 3; // radix-8 passes, the first one smaller if need be
    const int firstRadix = 1 << (log2n - 3 * (passes - 1));

    int tid, s;
    uint t;
    if (cols) {
        s = get_local_id(0);
        tid = get_local_id(1);
        t = get_group_id(0) * g + s;
    } else {
        tid = get_local_id(0);
        s = get_local_id(1);
        t = get_group_id(1) * g + s;
    }
    const bool valid = t < count;
    const size_t base = (size_t)(t / inner) * slabDist + (size_t)(t % inner) * dist;

    float2 v[8];
    int ns = 1; // length of the sub-transforms done so far
#pragma unroll
    for (int p = 0; p < passes; ++p) {
        const int r = p == 0 ? firstRadix : 8;
        const int per = points / r; // butterflies per work-item in this pass
        const int span = n / r;     // distance between a butterfly's inputs
        __local const float2 *src = lm + ((p - 1) & 1) * (FFT_LOCAL_POINTS);
#pragma unroll
        for (int b = 0; b < per; ++b) {
            int j = tid + b * threads;
#pragma unroll
            for (int q = 0; q < r; ++q) {
                int idx = j + q * span;
                if (p == 0)
                    v[b * r + q] = valid ? in[base + (size_t)idx * stride] : (float2)(0.0f);
                else
                    v[b * r + q] = cols ? src[idx * g + s] : src[s * n + idx];
            }
            if (p > 0) {
                // Twiddles e^(-2 pi i (j mod ns) q / (ns r)): entry (j mod ns) q n / (ns r).
                int k = (j & (ns - 1)) * (n / (ns * r));
#pragma unroll
                for (int q = 1; q < r; ++q) {
                    float2 w = tw[k * q];
                    if (inv)
                        w.y = -w.y;
                    v[b * r + q] = cmul(v[b * r + q], w);
                }
            }
            butterfly(v + b * r, r, inv);
        }
        if (p == passes - 1) {
            if (valid) {
#pragma unroll
                for (int b = 0; b < per; ++b) {
                    int j = tid + b * threads;
                    int d = (j / ns) * ns * r + (j & (ns - 1));
#pragma unroll
                    for (int q = 0; q < r; ++q)
                        out[base + (size_t)(d + q * ns) * stride] = v[b * r + q] * scale;
                }
            }
        } else {
            // Ping-pong halves: pass p writes half p % 2 while others may still read the other
            // half, so one barrier per pass suffices and no value lives across it (on a CPU
            // device that compiles barriers into loops, nothing to keep per work-item).
            __local float2 *dst = lm + (p & 1) * (FFT_LOCAL_POINTS);
#pragma unroll
            for (int b = 0; b < per; ++b) {
                int j = tid + b * threads;
                int d = (j / ns) * ns * r + (j & (ns - 1));
#pragma unroll
                for (int q = 0; q < r; ++q) {
                    int idx = d + q * ns;
                    if (cols)
                        dst[idx * g + s] = v[b * r + q];
                    else
                        dst[s * n + idx] = v[b * r + q];
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        ns *= r;
    }
}

#define FFT_KERNEL(name, N, G, COLS, INV)                                                         \
    __kernel void name(__global const float2 *in, __global float2 *out,                           \
                       __global const float2 *tw, uint count, uint stride, uint dist, uint inner, \
                       uint slabDist, float scale) {                                             \
        __local float2 lm[2 * FFT_LOCAL_POINTS];                                                  \
        fftAxis(in, out, tw, lm, count, stride, dist, inner, slabDist, scale, N, G, COLS, INV);   \
    }

#ifdef FFT_NX
FFT_KERNEL(fft_x_forward, FFT_NX, FFT_GX, false, false)
FFT_KERNEL(fft_x_inverse, FFT_NX, FFT_GX, false, true)
#endif
#ifdef FFT_GY
FFT_KERNEL(fft_y_forward, FFT_NY, FFT_GY, true, false)
FFT_KERNEL(fft_y_inverse, FFT_NY, FFT_GY, true, true)
#endif

// The other way to do columns: transpose, transform rows (the T kernels: FFT_NY points, FFT_GT
// sequences per group, row layout), transpose back.
#ifdef FFT_TILE
FFT_KERNEL(fft_t_forward, FFT_NY, FFT_GT, false, false)
FFT_KERNEL(fft_t_inverse, FFT_NY, FFT_GT, false, true)

// out (batch of nx x ny) = the transpose of in (batch of ny x nx), through a local tile so that
// both the reads and the writes are contiguous along work-item dimension 0. The tile's rows are
// padded by one against bank conflicts on GPUs.
__kernel void fft_transpose(__global const float2 *in, __global float2 *out, uint nx, uint ny) {
    __local float2 tile[FFT_TILE][FFT_TILE + 1];
    uint lx = get_local_id(0), ly = get_local_id(1);
    uint x0 = get_group_id(0) * FFT_TILE, y0 = get_group_id(1) * FFT_TILE;
    size_t slab = (size_t)get_global_id(2) * nx * ny;
    if (x0 + lx < nx && y0 + ly < ny)
        tile[ly][lx] = in[slab + (size_t)(y0 + ly) * nx + x0 + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (y0 + lx < ny && x0 + ly < nx)
        out[slab + (size_t)(x0 + ly) * ny + y0 + lx] = tile[lx][ly];
}
#endif
