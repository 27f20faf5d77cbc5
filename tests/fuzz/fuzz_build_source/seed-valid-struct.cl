typedef struct { float4 p; int n; } item;
constant float scale = 2.0f;
inline float4 f(float4 x) { return mad(x, (float4)(scale), (float4)(1.0f)); }
kernel void k(global item *it, global uint *cnt) {
    it[get_global_id(0)].p = f(vload4(0, (global float *)it));
    atomic_inc(cnt);
}
