// All-pairs gravitational N-body step with local-memory tiling: each work-group stages a tile
// of body positions in __local memory and every work-item accumulates its body's acceleration
// from the whole tile before the next one is loaded (the SC09 OpenCL tutorial's scheme).

// Acceleration on a body at `p` from body `q` (mass in q.w), softened by eps2.
inline float3 interact(float3 p, float4 q, float eps2, float3 acc) {
    float3 d = q.xyz - p;
    float r2 = dot(d, d) + eps2;
    float inv = rsqrt(r2);
    float s = q.w * inv * inv * inv;
    return acc + d * s;
}

// One semi-implicit Euler step: v += a dt, v *= damping, x += v dt. Positions are read from
// posIn and written to posOut (ping-pong buffers: other work-items still read posIn); velocity is
// per body, so it is updated in place. tile holds get_local_size(0) float4 values.
__kernel void nbody_step(__global const float4 *posIn, __global float4 *posOut,
                         __global float4 *vel, __local float4 *tile, int n, float dt, float eps2,
                         float damping) {
    int i = get_global_id(0);
    int lid = get_local_id(0);
    int tileSize = get_local_size(0);
    float4 me = i < n ? posIn[i] : (float4)(0.0f);
    float3 acc = (float3)(0.0f);
    for (int base = 0; base < n; base += tileSize) {
        int j = base + lid;
        // Bodies past the end weigh nothing, so the last tile needs no bounds in the inner loop.
        tile[lid] = j < n ? posIn[j] : (float4)(0.0f);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < tileSize; ++k)
            acc = interact(me.xyz, tile[k], eps2, acc);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < n) {
        float4 v = vel[i];
        v.xyz = (v.xyz + acc * dt) * damping;
        vel[i] = v;
        posOut[i] = (float4)(me.xyz + v.xyz * dt, me.w);
    }
}
