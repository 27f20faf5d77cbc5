// The OpenCL C of the generic address space check: to_global, to_local, to_private and get_fence
// on pointers into every address space, the answers as bits in 16 ints per work-item (kernel
// `kinds(global int* g, local int* la, global int* out)`, OpenCL C 3.0). Run and checked by
// tests/kernels/misc_test.cpp on every device; compiled for the NVIDIA device, PTX assembled
// by ptxas, by tests/unit/nvidia.
#pragma once

namespace duet::test {

inline constexpr const char* kGenericKindsSource = R"CL(
global int counter = 5;
int kindOf(const int* p) {
    return (to_global(p) != NULL ? 1 : 0) | (to_local(p) != NULL ? 2 : 0) |
           (to_private(p) != NULL ? 4 : 0) | (get_fence(p) == CLK_LOCAL_MEM_FENCE ? 8 : 0) |
           (get_fence(p) == CLK_GLOBAL_MEM_FENCE ? 16 : 0);
}
kernel void kinds(global int* g, local int* la, global int* out) {
    local int l[64];
    int priv[4];
    int one = (int)get_global_id(0);
    size_t i = get_global_id(0), li = get_local_id(0);
    l[li] = (int)i * 3;
    la[li] = (int)i * 5;
    for (int j = 0; j < 4; ++j)
        priv[j] = (int)i + j;
    barrier(CLK_LOCAL_MEM_FENCE);
    int* pg = &g[i];
    int* pl = &l[(li + 1) % get_local_size(0)];
    int* pa = &la[li];
    int* pp = &priv[(int)i & 3];
    int* pn = NULL;
    int* pc = &counter;
    int* po = &one;
    global int* out8 = out + 16 * i;
    out8[0] = kindOf(pg);
    out8[1] = kindOf(pl);
    out8[2] = kindOf(pa);
    out8[3] = kindOf(pp);
    out8[4] = (to_global(pn) == NULL) | (to_local(pn) == NULL) << 1 | (to_private(pn) == NULL) << 2;
    out8[5] = kindOf(pc);
    out8[6] = kindOf(po);
    global int* bg = to_global(pg);
    local int* bl = to_local(pl);
    private int* bp = to_private(pp);
    out8[7] = bg ? *bg : -1;
    out8[8] = bl ? *bl : -1;
    out8[9] = bp ? *bp : -1;
    out8[10] = *to_global(pc);
    // A private array that lives across a barrier moves to per-work-item storage on the CPU.
    barrier(CLK_LOCAL_MEM_FENCE);
    out8[11] = kindOf(priv) | (priv[3] << 8);
    out8[12] = to_private(pl) == NULL && to_global(pl) == NULL && to_local(pg) == NULL;
}
)CL";

} // namespace duet::test
