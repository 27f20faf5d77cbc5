// 2D compressible Euler equations (ideal gas) by MUSCL-Hancock finite volumes, in the structure
// of the LANL gas-dynamics code of the SC09 OpenCL tutorial: per-cell primitive slopes with a
// limiter, half-step predictors, face states, a Riemann solver (HLLC, or exact with -D
// RIEMANN_EXACT), flux differences; dimensionally split X and Y sweeps (the host alternates
// XY / YX, Strang), ghost-cell boundary kernels, and the CFL time step from a two-stage
// max-reduction that leaves dt on the device (no host round trip per step).
//
// State: float4 per cell, conserved (rho, rho*u, rho*v, E), FRONT spare cells, then rows of
// `pitch` cells (at least nx + 2*G, a multiple of the sweeps' work-group width) with G ghost
// cells on every side, so cell (i, j) of the interior is at FRONT + (j + G) * pitch + i + G. The
// spare cells let an X sweep run over the ghost rows too (an MPI rank's redundant update of its
// neighbours' border rows): its first work-items read two cells before the first row. The sweeps run one work-item per
// column of the row, ghost and padding columns included, and store every result: no condition
// around a store, so the CPU device's vectoriser sees straight-line code with contiguous loads
// and stores across work-items. What they write into ghost and padding columns is refilled by
// the boundary kernels before anything reads it as data.
//
// Build options: -D LIMITER=0|1|2 (minmod, van Leer, MC), -D RIEMANN_EXACT.

#ifndef LIMITER
#define LIMITER 2
#endif
#define G 2
#define FRONT 64 // spare cells before the first ghost row (gasdyn_sim.hpp: kFront)

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
    // minmod (copysign rather than sign: the builtin's branches on zero are not needed, since a
    // zero difference makes the minimum zero anyway)
    float4 m = fmin(fabs(a), fabs(b));
    return select((float4)(0.0f), copysign(m, a), a * b > 0.0f);
#elif LIMITER == 1
    // van Leer (harmonic mean)
    float4 ab = a * b;
    float4 s = 2.0f * ab / (a + b);
    return select((float4)(0.0f), s, ab > 0.0f);
#else
    // monotonised central
    float4 m = fmin(fmin(2.0f * fabs(a), 2.0f * fabs(b)), 0.5f * fabs(a + b));
    return select((float4)(0.0f), copysign(m, a), a * b > 0.0f);
#endif
}

// MUSCL-Hancock for one cell: limited primitive slopes from its neighbours, the half-step
// predictor (primitive form: w - dt/(2 dx) A(w) dw, plus half the gravity `gn` along the normal)
// and the face states at the low (*lo) and high (*hi) faces of the cell.
static inline void predict(float4 wm, float4 w, float4 wp, float dtdx, float dt, float gamma,
                           float gn, float4 *lo, float4 *hi) {
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
// either side of the face. The contact's side picks the one star state needed (so one is
// computed, not two), and selects rather than branches keep work-items in SIMD lanes.
static inline float4 riemannFlux(float4 l, float4 r, float gamma) {
    float il = 1.0f / l.x, ir = 1.0f / r.x;
    float cl = sqrt(gamma * l.w * il), cr = sqrt(gamma * r.w * ir);
    float sl = fmin(l.y - cl, r.y - cr);
    float sr = fmax(l.y + cl, r.y + cr);
    float ml = l.x * (sl - l.y), mr = r.x * (sr - r.y); // mass fluxes relative to the waves
    float ss = (r.w - l.w + l.y * ml - r.y * mr) / (ml - mr);
    const int left = ss >= 0.0f;
    float4 k = left ? l : r;
    float sk = left ? sl : sr, mk = left ? ml : mr, ik = left ? il : ir;
    float4 uk = toConserved(k, gamma), fk = physicalFlux(k, gamma);
    float4 star = (mk / (sk - ss)) *
                  (float4)(1.0f, ss, k.z, uk.w * ik + (ss - k.y) * (ss + k.w / mk));
    float4 f = fk + sk * (star - uk);
    // Supersonic: every wave leaves the face on one side, the flux is that side's own.
    const int upwind = left ? sl >= 0.0f : sr <= 0.0f;
    return upwind ? fk : f;
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

// One cell's update by a sweep along the axis whose neighbours are `stride` elements apart
// (1: x, pitch: y; swap: the y sweep's rotation of the momenta). Cell k of n along the axis.
// Everything from the five-cell stencil: three predictors (the outer two only for one face
// state each), the fluxes through the cell's two faces, the flux difference. Neighbouring
// work-items recompute each other's faces (two Riemann solves per cell instead of one), which
// buys kernels without barriers or loops: on the CPU device each is one loop over the
// work-items that the compiler turns into SIMD code, with contiguous loads along x.
static inline float4 updateCell(__global const float4 *restrict in, size_t at, size_t stride,
                                int swap, int k, int n, float dtdx, float dt, float gamma,
                                float gn, int wallLow, int wallHigh) {
    float4 u0 = rotate(in[at], swap);
    float4 wm2 = toPrimitive(rotate(in[at - 2 * stride], swap), gamma);
    float4 wm1 = toPrimitive(rotate(in[at - stride], swap), gamma);
    float4 w0 = toPrimitive(u0, gamma);
    float4 wp1 = toPrimitive(rotate(in[at + stride], swap), gamma);
    float4 wp2 = toPrimitive(rotate(in[at + 2 * stride], swap), gamma);
    float4 lo, hi, loM, hiM, loP, hiP;
    predict(wm2, wm1, w0, dtdx, dt, gamma, gn, &loM, &hiM);
    predict(wm1, w0, wp1, dtdx, dt, gamma, gn, &lo, &hi);
    predict(w0, wp1, wp2, dtdx, dt, gamma, gn, &loP, &hiP);
    float4 fLow = faceFlux(hiM, lo, k, n, wallLow, wallHigh, gamma);
    float4 fHigh = faceFlux(hi, loP, k + 1, n, wallLow, wallHigh, gamma);
    float4 u1 = u0 - dtdx * (fHigh - fLow);
    return rotate(addGravity(u0, u1, dt, gn), swap);
}

// The X sweep: global size (pitch, rows), one work-item per column of each row; rows are buffer
// rows (the global offset G for interior row 0; from 0, the ghost rows too).
__kernel void sweep_x(__global const float4 *restrict in, __global float4 *restrict out, int nx,
                      int ny, int pitch, __global const float *restrict clock, float dx,
                      float gamma, float gn, int wallLow, int wallHigh) {
    const size_t c = get_global_id(0), row = get_global_id(1);
    const size_t at = FRONT + row * (size_t)pitch + c;
    const float dt = clock[0];
    out[at] = updateCell(in, at, 1, 0, (int)c - G, nx, dt / dx, dt, gamma, gn, wallLow, wallHigh);
}

// The Y sweep: as the X sweep with neighbours a row apart (work-items still run along x, the
// contiguous axis, so their loads are SIMD vectors); interior rows only (offset G and more).
__kernel void sweep_y(__global const float4 *restrict in, __global float4 *restrict out, int nx,
                      int ny, int pitch, __global const float *restrict clock, float dy,
                      float gamma, float gn, int wallLow, int wallHigh) {
    const size_t c = get_global_id(0), row = get_global_id(1);
    const size_t at = FRONT + row * (size_t)pitch + c;
    const float dt = clock[0];
    out[at] = updateCell(in, at, pitch, 1, (int)row - G, ny, dt / dy, dt, gamma, gn, wallLow, wallHigh);
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
__kernel void boundary_x(__global float4 *state, int nx, int ny, int pitch, int low,
                         int high) {
    const int k = get_global_id(0) % G;
    const int side = get_global_id(0) / G;
    const int j = get_global_id(1);
    const int kind = side ? high : low;
    __global float4 *row = state + FRONT + (size_t)(j + G) * pitch + G; // interior column 0
    const int ghost = side ? nx + k : -1 - k;
    float4 u = row[ghostSource(kind, side, k, nx)];
    if (kind == BC_REFLECTIVE)
        u.y = -u.y;
    row[ghost] = u;
}

// Fills the y ghost rows of the interior columns: global size (>= nx, 2 * G); work-item
// (i, side * G + k) fills ghost k of that side in column i.
__kernel void boundary_y(__global float4 *state, int nx, int ny, int pitch, int low,
                         int high) {
    const int i = get_global_id(0);
    const int k = get_global_id(1) % G;
    const int side = get_global_id(1) / G;
    if (i >= nx)
        return;
    const int kind = side ? high : low;
    __global float4 *column = state + FRONT + (size_t)G * pitch + G + i; // interior row 0
    const int ghost = side ? ny + k : -1 - k;
    float4 u = column[(ptrdiff_t)ghostSource(kind, side, k, ny) * pitch];
    if (kind == BC_REFLECTIVE)
        u.z = -u.z;
    column[(ptrdiff_t)ghost * pitch] = u;
}

// The reduction's figures, each a maximum (minima as maxima of negatives): the CFL rate
// max((|u|+c)/dx, (|v|+c)/dy), density max and -min, pressure max and -min, and max |grad rho|
// (central differences; at the edges from ghost cells, which may lag a sweep behind).
#define FIGURES 6

// Tree reduction (maximum) of the FIGURES arrays of n floats at s (array c at s + c * n) into
// element 0 of each; n a power of two.
static inline void treeMax(__local float *s, int n) {
    for (int h = n / 2; h > 0; h >>= 1) {
        const int lid = get_local_id(0);
        if (lid < h) {
            s[lid] = fmax(s[lid], s[lid + h]);
            s[n + lid] = fmax(s[n + lid], s[n + lid + h]);
            s[2 * n + lid] = fmax(s[2 * n + lid], s[2 * n + lid + h]);
            s[3 * n + lid] = fmax(s[3 * n + lid], s[3 * n + lid + h]);
            s[4 * n + lid] = fmax(s[4 * n + lid], s[4 * n + lid + h]);
            s[5 * n + lid] = fmax(s[5 * n + lid], s[5 * n + lid + h]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// Running maxima of one work-item.
typedef struct {
    float rate, rhoMax, rhoNeg, pMax, pNeg, grad;
} Maxima;

// Folds interior cell (i, j) at buffer index `at` into m; columns outside the interior (ghost
// and padding) leave m alone. Central differences for the gradient inside, none across the
// edges (ghost cells may hold anything between a sweep and the next boundary fill).
static inline void visitCell(__global const float4 *state, size_t at, int i, int j, int nx,
                             int ny, int pitch, float rdx, float rdy, float gamma,
                             const int gradient, Maxima *m) {
    float4 w = toPrimitive(state[at], gamma);
    float sound = sqrt(gamma * w.w / w.x);
    float r = fmax((fabs(w.y) + sound) * rdx, (fabs(w.z) + sound) * rdy);
    float gx = 0.0f, gy = 0.0f;
    if (gradient) { // a constant: the kernels below are the two cases
        gx = (state[at + 1].x - state[at - 1].x) * 0.5f * rdx;
        gy = (state[at + pitch].x - state[at - pitch].x) * 0.5f * rdy;
    }
    // Masks as factors rather than conditions: the compiler keeps arithmetic in SIMD lanes,
    // where selects on the running maxima tended to become branches. Columns outside the
    // interior contribute 0 to maxima of positive figures and -1e30 to the negated ones (and
    // whatever NaN their garbage makes, which fmax ignores).
    const float inx = (float)(i > 0 && i < nx - 1), iny = (float)(j > 0 && j < ny - 1);
    gx *= inx;
    gy *= iny;
    float g = sqrt(gx * gx + gy * gy);
    const float inside = (float)(i >= 0 && i < nx), outside = 1e30f * (1.0f - inside);
    m->rate = fmax(m->rate, r * inside);
    m->rhoMax = fmax(m->rhoMax, w.x * inside);
    m->rhoNeg = fmax(m->rhoNeg, -w.x * inside - outside);
    m->pMax = fmax(m->pMax, w.w * inside);
    m->pNeg = fmax(m->pNeg, -w.w * inside - outside);
    m->grad = fmax(m->grad, g * inside);
}

#define REDUCE_ROWS 8

// Reduction, stage 1: global size (pitch, ceil(ny / REDUCE_ROWS)), local (L, 1), L a power of
// two dividing pitch. Work-item (c, r) takes buffer column c of the interior rows
// r * REDUCE_ROWS ... + REDUCE_ROWS - 1 (past the top, the top row again: a maximum does not
// mind), written out rather than looped so that each is one SIMD pass with contiguous loads on
// the CPU device. Each group folds its maxima in local memory (scratch: FIGURES * L floats)
// and writes them to partial[group] (float8, components 0..5). reduce_cells leaves the gradient
// at 0 (the solver needs only the rate); reduce_cells_gradient adds it (for schlieren pictures).
static inline void reduceCells(__global const float4 *state, int nx, int ny, int pitch, float dx,
                               float dy, float gamma, __global float8 *partial,
                               __local float *scratch, const int gradient) {
    const float rdx = 1.0f / dx, rdy = 1.0f / dy;
    const size_t c = get_global_id(0);
    const int i = (int)c - G;
    state += FRONT; // indices below count from the first ghost row
    const int j0 = get_group_id(1) * REDUCE_ROWS;
    Maxima m = {0.0f, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 0.0f};
#define VISIT(k)                                                                               \
    {                                                                                          \
        const int j = min(j0 + (k), ny - 1);                                                   \
        visitCell(state, (size_t)(j + G) * (size_t)pitch + c, i, j, nx, ny, pitch, rdx, rdy,   \
                  gamma, gradient, &m);                                                        \
    }
    VISIT(0)
    VISIT(1)
    VISIT(2)
    VISIT(3)
    VISIT(4)
    VISIT(5)
    VISIT(6)
    VISIT(7)
#undef VISIT
    float rate = m.rate, rhoMax = m.rhoMax, rhoNeg = m.rhoNeg, pMax = m.pMax, pNeg = m.pNeg;
    float grad = m.grad;
    // Not needed for correctness: it keeps the stores to local memory out of the loop over the
    // cells on the CPU device, whose vectoriser could not prove them apart from the loads.
    barrier(CLK_LOCAL_MEM_FENCE);
    const int lid = get_local_id(0), n = get_local_size(0);
    scratch[lid] = rate;
    scratch[n + lid] = rhoMax;
    scratch[2 * n + lid] = rhoNeg;
    scratch[3 * n + lid] = pMax;
    scratch[4 * n + lid] = pNeg;
    scratch[5 * n + lid] = grad;
    barrier(CLK_LOCAL_MEM_FENCE);
    treeMax(scratch, n);
    if (get_local_id(0) == 0) {
        float8 out = (float8)(scratch[0], scratch[n], scratch[2 * n], scratch[3 * n],
                              scratch[4 * n], scratch[5 * n], 0.0f, 0.0f);
        partial[get_group_id(1) * get_num_groups(0) + get_group_id(0)] = out;
    }
}

__kernel void reduce_cells(__global const float4 *state, int nx, int ny, int pitch, float dx,
                           float dy, float gamma, __global float8 *partial,
                           __local float *scratch) {
    reduceCells(state, nx, ny, pitch, dx, dy, gamma, partial, scratch, 0);
}

__kernel void reduce_cells_gradient(__global const float4 *state, int nx, int ny, int pitch,
                                    float dx, float dy, float gamma, __global float8 *partial,
                                    __local float *scratch) {
    reduceCells(state, nx, ny, pitch, dx, dy, gamma, partial, scratch, 1);
}

// Reduction, stage 2: one work-group of L (a power of two) folds the `count` partial maxima,
// writes them to figures[0], and sets the step: clock[0] = dt = cfl / rate (cut to reach tEnd
// exactly, 0 once there), clock[1] = t + dt (the time after the step), clock[2] = the rate.
__kernel void reduce_final(__global const float8 *partial, int count, float cfl, float tEnd,
                           __global float8 *figures, __global float *clock,
                           __local float *scratch) {
    const int lid = get_local_id(0), n = get_local_size(0);
    float8 m = (float8)(0.0f, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 0.0f, 0.0f, 0.0f);
    for (int k = lid; k < count; k += n)
        m = fmax(m, partial[k]);
    scratch[lid] = m.s0;
    scratch[n + lid] = m.s1;
    scratch[2 * n + lid] = m.s2;
    scratch[3 * n + lid] = m.s3;
    scratch[4 * n + lid] = m.s4;
    scratch[5 * n + lid] = m.s5;
    barrier(CLK_LOCAL_MEM_FENCE);
    treeMax(scratch, n);
    if (get_local_id(0) == 0) {
        float8 r = (float8)(scratch[0], scratch[n], scratch[2 * n], scratch[3 * n],
                            scratch[4 * n], scratch[5 * n], 0.0f, 0.0f);
        figures[0] = r;
        float t = clock[1];
        float dt = r.s0 > 0.0f ? cfl / r.s0 : 0.0f;
        dt = fmax(fmin(dt, tEnd - t), 0.0f);
        clock[0] = dt;
        clock[1] = t + dt;
        clock[2] = r.s0;
    }
}
