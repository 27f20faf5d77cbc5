// 2D compressible Euler equations (ideal gas) by MUSCL-Hancock finite volumes, in the structure
// of the LANL gas-dynamics code of the SC09 OpenCL tutorial: per-cell primitive slopes with a
// limiter, half-step predictors, face states, a Riemann solver (HLLC, or exact with -D
// RIEMANN_EXACT), flux differences; dimensionally split X and Y sweeps (the host alternates
// XY / YX, Strang), ghost-cell boundary kernels, and the CFL time step from a two-stage
// max-reduction that leaves dt on the device (no host round trip per step).
//
// State: float4 per cell, conserved (rho, rho*u, rho*v, E), rows of `pitch = nx + 2*G` cells
// with G ghost cells on every side, so cell (i, j) of the interior is at (j + G) * pitch + i + G.
// The buffer has at least PAD benign cells after the last row: kernels let work-items past the
// grid's edge read their neighbours' memory (results unused, writes guarded), so that loads stay
// contiguous across work-items, which is what the CPU device turns into SIMD loads.
//
// Build options: -D LIMITER=0|1|2 (minmod, van Leer, MC), -D RIEMANN_EXACT, -D TILE=<x sweep
// work-group size>, -D STRIP=<rows per work-item in the y sweep>.

#ifndef LIMITER
#define LIMITER 2
#endif
#ifndef TILE
#define TILE 64
#endif
#ifndef STRIP
#define STRIP 32
#endif
#define G 2

// Floors that keep a state physical where a strong rarefaction's reconstruction undershoots.
#define RHO_FLOOR 1e-6f
#define P_FLOOR 1e-6f

// Components of a state are named for the sweep direction: x = rho, y = normal (n) velocity or
// momentum, z = tangential (t), w = pressure or total energy. The y sweep swaps .y and .z when
// it loads and stores, so every function below serves both sweeps.
static inline float4 rotate(float4 u, int swap) { return swap ? u.xzyw : u; }

// Conserved (rho, m_n, m_t, E) to primitive (rho, u_n, u_t, p).
static inline float4 toPrimitive(float4 u, float gamma) {
    float rho = fmax(u.x, RHO_FLOOR);
    float inv = 1.0f / rho;
    float un = u.y * inv, ut = u.z * inv;
    float p = (gamma - 1.0f) * (u.w - 0.5f * rho * (un * un + ut * ut));
    return (float4)(rho, un, ut, fmax(p, P_FLOOR));
}

static inline float4 toConserved(float4 w, float gamma) {
    float e = w.w / (gamma - 1.0f) + 0.5f * w.x * (w.y * w.y + w.z * w.z);
    return (float4)(w.x, w.x * w.y, w.x * w.z, e);
}

// Flux of the conserved variables through a face normal to the sweep, for primitive state w.
static inline float4 physicalFlux(float4 w, float gamma) {
    float e = w.w / (gamma - 1.0f) + 0.5f * w.x * (w.y * w.y + w.z * w.z);
    float m = w.x * w.y;
    return (float4)(m, m * w.y + w.w, m * w.z, w.y * (e + w.w));
}

// Limited slope from the backward difference a and forward difference b, per component,
// branch-free so work-items stay in SIMD lanes.
static inline float4 limitedSlope(float4 a, float4 b) {
#if LIMITER == 0
    // minmod
    return 0.5f * (sign(a) + sign(b)) * fmin(fabs(a), fabs(b));
#elif LIMITER == 1
    // van Leer (harmonic mean)
    float4 ab = a * b;
    float4 s = 2.0f * ab / (a + b);
    return select((float4)(0.0f), s, ab > 0.0f);
#else
    // monotonised central
    float4 m = fmin(fmin(2.0f * fabs(a), 2.0f * fabs(b)), 0.5f * fabs(a + b));
    return select((float4)(0.0f), sign(a) * m, a * b > 0.0f);
#endif
}

// MUSCL-Hancock for one cell: limited primitive slopes from its neighbours, the half-step
// predictor (primitive form: w - dt/(2 dx) A(w) dw, plus half the gravity `gn` along the normal)
// and the face states at the low (*lo) and high (*hi) faces of the cell.
static inline void predict(float4 wm, float4 w, float4 wp, float dtdx, float dt, float gamma, float gn,
                    float4 *lo, float4 *hi) {
    float4 d = limitedSlope(w - wm, wp - w);
    float inv = 1.0f / w.x;
    float4 adw = (float4)(w.y * d.x + w.x * d.y,
                          w.y * d.y + d.w * inv,
                          w.y * d.z,
                          gamma * w.w * d.y + w.y * d.w);
    float4 mid = w - 0.5f * dtdx * adw;
    mid.y += 0.5f * dt * gn;
    float4 l = mid - 0.5f * d, h = mid + 0.5f * d;
    l.x = fmax(l.x, RHO_FLOOR);
    l.w = fmax(l.w, P_FLOOR);
    h.x = fmax(h.x, RHO_FLOOR);
    h.w = fmax(h.w, P_FLOOR);
    *lo = l;
    *hi = h;
}

#ifndef RIEMANN_EXACT

// HLLC (Toro, Spruce and Speares) with Davis wave-speed bounds; l and r are primitive states on
// either side of the face. Both star fluxes are computed and the upwind one selected, no branch.
static inline float4 riemannFlux(float4 l, float4 r, float gamma) {
    float cl = sqrt(gamma * l.w / l.x), cr = sqrt(gamma * r.w / r.x);
    float sl = fmin(l.y - cl, r.y - cr);
    float sr = fmax(l.y + cl, r.y + cr);
    float ml = l.x * (sl - l.y), mr = r.x * (sr - r.y); // mass fluxes relative to the waves
    float ss = (r.w - l.w + l.y * ml - r.y * mr) / (ml - mr);
    float4 ul = toConserved(l, gamma), ur = toConserved(r, gamma);
    float4 fl = physicalFlux(l, gamma), fr = physicalFlux(r, gamma);
    float4 usl = (ml / (sl - ss)) *
                 (float4)(1.0f, ss, l.z, ul.w / l.x + (ss - l.y) * (ss + l.w / ml));
    float4 usr = (mr / (sr - ss)) *
                 (float4)(1.0f, ss, r.z, ur.w / r.x + (ss - r.y) * (ss + r.w / mr));
    float4 fsl = fl + sl * (usl - ul);
    float4 fsr = fr + sr * (usr - ur);
    float4 f = ss >= 0.0f ? fsl : fsr;
    f = sl >= 0.0f ? fl : f;
    f = sr <= 0.0f ? fr : f;
    return f;
}

#else

// Toro's pressure function f_K(p) and its derivative for one side (K = L or R).
static inline float2 pressureFunction(float p, float4 k, float ck, float gamma) {
    float a = 2.0f / ((gamma + 1.0f) * k.x);
    float b = (gamma - 1.0f) / (gamma + 1.0f) * k.w;
    float sq = sqrt(a / (p + b));
    float2 shock = (float2)((p - k.w) * sq, sq * (1.0f - 0.5f * (p - k.w) / (p + b)));
    float ratio = p / k.w;
    float pw = pow(ratio, 0.5f * (gamma - 1.0f) / gamma);
    float2 fan = (float2)(2.0f * ck / (gamma - 1.0f) * (pw - 1.0f), pw / (ratio * k.x * ck));
    return p > k.w ? shock : fan;
}

// The state on the ray x/t = 0 of the exact solution, seen from side K with velocities mirrored
// so that K is on the left (the right side passes its mirror image and mirrors the result).
static inline float4 sampleLeft(float4 k, float ck, float ps, float us, float gamma) {
    float g1 = 0.5f * (gamma - 1.0f) / gamma, g6 = (gamma - 1.0f) / (gamma + 1.0f);
    float ratio = ps / k.w;
    // Shock: speed and the shocked density behind it.
    float sk = k.y - ck * sqrt(0.5f * (gamma + 1.0f) / gamma * ratio + g1);
    float4 shocked = (float4)(k.x * (ratio + g6) / (g6 * ratio + 1.0f), us, k.z, ps);
    float4 shock = sk >= 0.0f ? k : shocked;
    // Rarefaction: head, tail, and the fan's state on the ray.
    float head = k.y - ck;
    float cs = ck * pow(ratio, g1);
    float tail = us - cs;
    float4 star = (float4)(k.x * pow(ratio, 1.0f / gamma), us, k.z, ps);
    float c = 2.0f / (gamma + 1.0f) * (ck + 0.5f * (gamma - 1.0f) * k.y);
    float4 fan = (float4)(k.x * pow(c / ck, 2.0f / (gamma - 1.0f)), c, k.z,
                          k.w * pow(c / ck, 2.0f * gamma / (gamma - 1.0f)));
    float4 rare = head >= 0.0f ? k : (tail <= 0.0f ? star : fan);
    return ps > k.w ? shock : rare;
}

// Godunov flux from the exact Riemann solution: Newton iterations for the star pressure from
// the two-rarefaction guess, a fixed count so that all work-items run the same loop.
static inline float4 riemannFlux(float4 l, float4 r, float gamma) {
    float cl = sqrt(gamma * l.w / l.x), cr = sqrt(gamma * r.w / r.x);
    float du = r.y - l.y;
    float z = 0.5f * (gamma - 1.0f) / gamma;
    float p = pow(fmax(cl + cr - 0.5f * (gamma - 1.0f) * du, 1e-6f) /
                      (cl / pow(l.w, z) + cr / pow(r.w, z)),
                  1.0f / z);
    p = fmax(p, P_FLOOR);
    for (int it = 0; it < 6; ++it) {
        float2 fl = pressureFunction(p, l, cl, gamma), fr = pressureFunction(p, r, cr, gamma);
        p = fmax(p - (fl.x + fr.x + du) / (fl.y + fr.y), P_FLOOR);
    }
    float2 fl = pressureFunction(p, l, cl, gamma), fr = pressureFunction(p, r, cr, gamma);
    float us = 0.5f * (l.y + r.y) + 0.5f * (fr.x - fl.x);
    float4 wl = sampleLeft(l, cl, p, us, gamma);
    float4 mr = (float4)(r.x, -r.y, r.z, r.w);
    float4 wr = sampleLeft(mr, cr, p, -us, gamma);
    wr.y = -wr.y;
    float4 w = us >= 0.0f ? wl : wr;
    return physicalFlux(w, gamma);
}

#endif

// The flux through face `face` (0 is the low edge of the grid, n the high edge) between the
// face states l and r. At a reflective wall (wallLow / wallHigh set and the face on that edge)
// the ghost side's state is replaced by the mirror image of the inner one, and only the normal
// momentum flux (the wall pressure) is kept: exactly no mass or energy crosses a wall, whatever
// source terms did to the ghost cell's predicted state.
static inline float4 faceFlux(float4 l, float4 r, int face, int n, int wallLow, int wallHigh,
                              float gamma) {
    const int low = wallLow && face == 0, high = wallHigh && face == n;
    l = low ? (float4)(r.x, -r.y, r.z, r.w) : l;
    r = high ? (float4)(l.x, -l.y, l.z, l.w) : r;
    float4 f = riemannFlux(l, r, gamma);
    return low || high ? (float4)(0.0f, f.y, 0.0f, 0.0f) : f;
}

// Gravity source over a step for the new state u1 from u0 (momentum gets g times the mean
// density, energy g times the mean normal momentum).
static inline float4 addGravity(float4 u0, float4 u1, float dt, float gn) {
    u1.y += dt * gn * 0.5f * (u0.x + u1.x);
    u1.w += dt * gn * 0.5f * (u0.y + u1.y);
    return u1;
}

// The X sweep. A work-group of TILE work-items covers TILE consecutive cells of one row and
// updates the TILE - 4 in the middle (neighbouring groups overlap by four cells, so no work-item
// computes more than one cell's slopes or one face's flux; every region of the kernel is one
// straight-line pass over the work-items). Local arrays are structure-of-arrays with one pad
// element in front, so neighbour reads are contiguous vectors.
__kernel __attribute__((reqd_work_group_size(TILE, 1, 1))) void
sweep_x(__global const float4 *restrict in, __global float4 *restrict out, int nx, int ny,
        __global const float *restrict clock, float dx, float gamma, float gn, int wallLow,
        int wallHigh) {
    __local float wr[TILE + 2], wu[TILE + 2], wv[TILE + 2], wp[TILE + 2];
    __local float lr[TILE + 2], lu[TILE + 2], lv[TILE + 2], lp[TILE + 2];
    __local float hr[TILE + 2], hu[TILE + 2], hv[TILE + 2], hp[TILE + 2];
    __local float fr[TILE + 2], fu[TILE + 2], fv[TILE + 2], fe[TILE + 2];
    const int lid = get_local_id(0);
    const int j = get_global_id(1);
    const int x0 = get_group_id(0) * (TILE - 4); // interior index of the first cell updated
    const int pitch = nx + 2 * G;
    // Cell x0 - 2 + lid of the interior is column x0 + lid of the buffer.
    const size_t at = (size_t)(j + G) * pitch + x0 + lid;
    const float dt = clock[0];
    const float dtdx = dt / dx;

    float4 w = toPrimitive(in[at], gamma);
    wr[lid + 1] = w.x;
    wu[lid + 1] = w.y;
    wv[lid + 1] = w.z;
    wp[lid + 1] = w.w;
    if (lid == 0) {
        // Pads: read only by the end work-items, whose results are discarded.
        wr[0] = wr[TILE + 1] = 1.0f;
        wu[0] = wu[TILE + 1] = 0.0f;
        wv[0] = wv[TILE + 1] = 0.0f;
        wp[0] = wp[TILE + 1] = 1.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    float4 wm = (float4)(wr[lid], wu[lid], wv[lid], wp[lid]);
    float4 w0 = (float4)(wr[lid + 1], wu[lid + 1], wv[lid + 1], wp[lid + 1]);
    float4 wq = (float4)(wr[lid + 2], wu[lid + 2], wv[lid + 2], wp[lid + 2]);
    float4 lo, hi;
    predict(wm, w0, wq, dtdx, dt, gamma, gn, &lo, &hi);
    lr[lid + 1] = lo.x;
    lu[lid + 1] = lo.y;
    lv[lid + 1] = lo.z;
    lp[lid + 1] = lo.w;
    hr[lid + 1] = hi.x;
    hu[lid + 1] = hi.y;
    hv[lid + 1] = hi.z;
    hp[lid + 1] = hi.w;
    if (lid == 0) {
        hr[0] = 1.0f;
        hu[0] = 0.0f;
        hv[0] = 0.0f;
        hp[0] = 1.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Face lid lies between cells lid - 1 and lid.
    float4 left = (float4)(hr[lid], hu[lid], hv[lid], hp[lid]);
    float4 right = (float4)(lr[lid + 1], lu[lid + 1], lv[lid + 1], lp[lid + 1]);
    float4 f = faceFlux(left, right, x0 - 2 + lid, nx, wallLow, wallHigh, gamma);
    fr[lid] = f.x;
    fu[lid] = f.y;
    fv[lid] = f.z;
    fe[lid] = f.w;
    if (lid == 0) {
        fr[TILE] = 0.0f;
        fu[TILE] = 0.0f;
        fv[TILE] = 0.0f;
        fe[TILE] = 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    float4 fl = (float4)(fr[lid], fu[lid], fv[lid], fe[lid]);
    float4 fh = (float4)(fr[lid + 1], fu[lid + 1], fv[lid + 1], fe[lid + 1]);
    const int i = x0 - 2 + lid;
    if (lid >= 2 && lid < TILE - 2 && i < nx) {
        float4 u0 = in[at];
        float4 u1 = u0 - dtdx * (fh - fl);
        out[at] = addGravity(u0, u1, dt, gn);
    }
}

// The Y sweep. Work-items run along x (the contiguous axis, so their loads are SIMD vectors)
// and each walks a strip of STRIP rows upwards with a sliding window: one new row per step, one
// slope and predictor, one face flux, one cell updated. Rows past the top are clamped (a
// uniform index); columns past the right edge compute on neighbouring memory and write nothing.
__kernel void sweep_y(__global const float4 *restrict in, __global float4 *restrict out, int nx,
                      int ny, __global const float *restrict clock, float dy, float gamma,
                      float gn, int wallLow, int wallHigh) {
    const int i = get_global_id(0);
    const int j0 = get_global_id(1) * STRIP;
    const int pitch = nx + 2 * G;
    const float dt = clock[0];
    const float dtdy = dt / dy;
    __global const float4 *column = in + i + G;
#define ROW(jj) ((size_t)(min((jj), ny + 1) + G) * pitch)

    float4 um2 = rotate(column[ROW(j0 - 2)], 1);
    float4 um1 = rotate(column[ROW(j0 - 1)], 1);
    float4 u0 = rotate(column[ROW(j0)], 1);
    float4 u1 = rotate(column[ROW(j0 + 1)], 1);
    float4 wm2 = toPrimitive(um2, gamma), wm1 = toPrimitive(um1, gamma);
    float4 w0 = toPrimitive(u0, gamma), w1 = toPrimitive(u1, gamma);
    float4 lo, hi, hiBelow;
    predict(wm2, wm1, w0, dtdy, dt, gamma, gn, &lo, &hiBelow);
    predict(wm1, w0, w1, dtdy, dt, gamma, gn, &lo, &hi);
    float4 fLow = faceFlux(hiBelow, lo, j0, ny, wallLow, wallHigh, gamma);

    for (int k = 0; k < STRIP; ++k) {
        const int j = j0 + k;
        float4 u2 = rotate(column[ROW(j + 2)], 1);
        float4 w2 = toPrimitive(u2, gamma);
        float4 loNext, hiNext;
        predict(w0, w1, w2, dtdy, dt, gamma, gn, &loNext, &hiNext);
        float4 fHigh = faceFlux(hi, loNext, j + 1, ny, wallLow, wallHigh, gamma);
        if (j < ny && i < nx) {
            float4 un = u0 - dtdy * (fHigh - fLow);
            out[(size_t)(j + G) * pitch + i + G] = rotate(addGravity(u0, un, dt, gn), 1);
        }
        u0 = u1;
        u1 = u2;
        w0 = w1;
        w1 = w2;
        hi = hiNext;
        fLow = fHigh;
    }
#undef ROW
}

// Boundary kinds, as the host's Boundary enum numbers them.
#define BC_REFLECTIVE 0
#define BC_OUTFLOW 1
#define BC_PERIODIC 2

// The interior cell (index along the axis, n cells) that ghost cell k of a side copies: k = 0
// is the ghost next to the edge. Reflective mirrors the cells inside, outflow repeats the edge
// cell, periodic wraps to the far side.
static inline int ghostSource(int kind, int side, int k, int n) {
    if (side == 0)
        return kind == BC_REFLECTIVE ? k : kind == BC_OUTFLOW ? 0 : n - 1 - k;
    return kind == BC_REFLECTIVE ? n - 1 - k : kind == BC_OUTFLOW ? n - 1 : k;
}

// Fills the x ghost columns of the interior rows: global size (2 * G, ny); work-item
// (side * G + k, j) fills ghost k of that side in row j.
__kernel void boundary_x(__global float4 *state, int nx, int ny, int low, int high) {
    const int k = get_global_id(0) % G;
    const int side = get_global_id(0) / G;
    const int j = get_global_id(1);
    const int kind = side ? high : low;
    __global float4 *row = state + (size_t)(j + G) * (nx + 2 * G) + G; // interior column 0
    const int ghost = side ? nx + k : -1 - k;
    float4 u = row[ghostSource(kind, side, k, nx)];
    if (kind == BC_REFLECTIVE)
        u.y = -u.y;
    row[ghost] = u;
}

// Fills the y ghost rows of the interior columns: global size (>= nx, 2 * G); work-item
// (i, side * G + k) fills ghost k of that side in column i.
__kernel void boundary_y(__global float4 *state, int nx, int ny, int low, int high) {
    const int i = get_global_id(0);
    const int k = get_global_id(1) % G;
    const int side = get_global_id(1) / G;
    if (i >= nx)
        return;
    const int pitch = nx + 2 * G;
    const int kind = side ? high : low;
    __global float4 *column = state + (size_t)G * pitch + G + i; // interior row 0
    const int ghost = side ? ny + k : -1 - k;
    float4 u = column[(ptrdiff_t)ghostSource(kind, side, k, ny) * pitch];
    if (kind == BC_REFLECTIVE)
        u.z = -u.z;
    column[(ptrdiff_t)ghost * pitch] = u;
}

// Per-cell figures the reduction takes the maximum of: s0 the CFL rate max((|u|+c)/dx,
// (|v|+c)/dy), s1/s2 max and -min density, s3/s4 max and -min pressure, s5 max |grad rho|
// (central differences, only when `gradient` is set).
static inline float8 cellFigures(__global const float4 *state, size_t at, int pitch, float rdx,
                          float rdy, float gamma, int gradient) {
    float4 w = toPrimitive(state[at], gamma);
    float c = sqrt(gamma * w.w / w.x);
    float rate = fmax((fabs(w.y) + c) * rdx, (fabs(w.z) + c) * rdy);
    float grad = 0.0f;
    if (gradient) {
        float gx = (state[at + 1].x - state[at - 1].x) * 0.5f * rdx;
        float gy = (state[at + pitch].x - state[at - pitch].x) * 0.5f * rdy;
        grad = sqrt(gx * gx + gy * gy);
    }
    return (float8)(rate, w.x, -w.x, w.w, -w.w, grad, 0.0f, 0.0f);
}

// Tree reduction (maximum) of one float8 per work-item in local memory; the result ends in
// scratch[0]. The local size must be a power of two.
static inline void reduceMax(__local float8 *scratch, float8 v) {
    const int lid = get_local_id(0);
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] = fmax(scratch[lid], scratch[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// Reduction, stage 1: global size (L, groups), local (L, 1). Group g takes the interior rows
// g, g + groups, ... and its work-items the columns lid, lid + L, ...; each group writes one
// float8 of maxima to partial[g].
__kernel void reduce_cells(__global const float4 *state, int nx, int ny, float dx, float dy,
                           float gamma, int gradient, __global float8 *partial,
                           __local float8 *scratch) {
    const int lid = get_local_id(0);
    const int lsize = get_local_size(0);
    const int group = get_group_id(1), groups = get_num_groups(1);
    const int pitch = nx + 2 * G;
    const float rdx = 1.0f / dx, rdy = 1.0f / dy;
    float8 m = (float8)(0.0f, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 0.0f, 0.0f, 0.0f);
    for (int j = group; j < ny; j += groups) {
        const size_t row = (size_t)(j + G) * pitch + G;
        for (int i0 = 0; i0 < nx; i0 += lsize) {
            const int i = i0 + lid;
            float8 f = cellFigures(state, row + i, pitch, rdx, rdy, gamma, gradient);
            m = i < nx ? fmax(m, f) : m;
        }
    }
    reduceMax(scratch, m);
    if (lid == 0)
        partial[group] = scratch[0];
}

// Reduction, stage 2: one work-group folds the `count` partial maxima, writes them to
// figures[0], and sets the step: clock[0] = dt = cfl / rate (cut to reach tEnd exactly, 0 once
// there), clock[1] = t + dt (the time after the step), clock[2] = the rate.
__kernel void reduce_final(__global const float8 *partial, int count, float cfl, float tEnd,
                           __global float8 *figures, __global float *clock,
                           __local float8 *scratch) {
    const int lid = get_local_id(0);
    float8 m = (float8)(0.0f, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 0.0f, 0.0f, 0.0f);
    for (int k = lid; k < count; k += get_local_size(0))
        m = fmax(m, partial[k]);
    reduceMax(scratch, m);
    if (lid == 0) {
        float8 r = scratch[0];
        figures[0] = r;
        float t = clock[1];
        float dt = r.s0 > 0.0f ? cfl / r.s0 : 0.0f;
        dt = fmax(fmin(dt, tEnd - t), 0.0f);
        clock[0] = dt;
        clock[1] = t + dt;
        clock[2] = r.s0;
    }
}
