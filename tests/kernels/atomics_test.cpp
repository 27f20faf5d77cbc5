// Atomic builtins under contention (every work-item on one counter: exact final values,
// unique old values from atomic_inc), global and local, 32- and 64-bit, OpenCL 1.x and C11
// forms; async work-group copies and wait_group_events.
#include "kernel_harness.hpp"

#include <algorithm>
#include <numeric>

using namespace duet::test;

namespace {
constexpr size_t kItems = 1 << 15;
constexpr size_t kGroup = 64;
} // namespace

TEST_CASE("32-bit global atomics under contention give exact results", "[kernels][atomics]") {
    Program prog(R"(
kernel void k(volatile global int* c, volatile global uint* u, global int* old,
              volatile global float* f, global float* fold) {
    int i = (int)get_global_id(0);
    atomic_add(&c[0], 1);
    old[i] = atomic_inc(&c[1]);
    atomic_sub(&c[2], i);
    atomic_dec(&c[3]);
    atomic_min(&c[4], i - 1000);
    atomic_max(&c[5], i * 3);
    atomic_or(&u[0], 1u << (i % 32));
    atomic_and(&u[1], ~(1u << (i % 32)));
    atomic_xor(&u[2], (uint)i);
    atomic_min(&u[3], (uint)i + 7u);
    atomic_max(&u[4], (uint)i ^ 0x5555u);
    int prev, next;
    do {
        prev = c[6];
        next = prev + 2;
    } while (atomic_cmpxchg(&c[6], prev, next) != prev);
    fold[i] = atomic_xchg(&f[0], (float)i);
    old[get_global_size(0) + i] = atomic_xchg(&c[7], i);
}
)");
    std::vector<int> c = {0, 0, 0, 0, 0, 0, 0, -1};
    std::vector<unsigned> u = {0, 0xffffffffu, 0, 0xffffffffu, 0};
    std::vector<float> f = {-1.0f};
    Buffer bc(c), bu(u), bold(2 * kItems * sizeof(int)), bf(f), bfold(kItems * sizeof(float));
    cl_kernel k = prog.kernel("k");
    setArgs(k, bc, bu, bold, bf, bfold);
    run1D(k, kItems, kGroup);
    c = bc.read<int>(8);
    u = bu.read<unsigned>(5);
    const int n = static_cast<int>(kItems);
    CHECK(c[0] == n);
    CHECK(c[1] == n);
    CHECK(c[2] == -(n * (n - 1) / 2));
    CHECK(c[3] == -n);
    CHECK(c[4] == -1000);
    CHECK(c[5] == (n - 1) * 3);
    CHECK(c[6] == 2 * n);
    CHECK(u[0] == 0xffffffffu);
    CHECK(u[1] == 0u);
    unsigned x = 0, mx = 0;
    for (int i = 0; i < n; ++i) {
        x ^= static_cast<unsigned>(i);
        mx = std::max(mx, static_cast<unsigned>(i) ^ 0x5555u);
    }
    CHECK(u[2] == x);
    CHECK(u[3] == 7u);
    CHECK(u[4] == mx);
    // atomic_inc handed out every old value exactly once.
    std::vector<int> old = bold.read<int>(2 * kItems);
    std::vector<int> incs(old.begin(), old.begin() + n);
    std::sort(incs.begin(), incs.end());
    std::vector<int> iota(n);
    std::iota(iota.begin(), iota.end(), 0);
    CHECK(incs == iota);
    // xchg: the old values plus the final value are the initial value and every i, once.
    std::vector<int> xs(old.begin() + n, old.end());
    xs.push_back(bc.read<int>(8)[7]);
    std::sort(xs.begin(), xs.end());
    std::vector<int> wantX(n + 1);
    std::iota(wantX.begin(), wantX.end(), -1);
    CHECK(xs == wantX);
    std::vector<float> fo = bfold.read<float>(kItems);
    fo.push_back(bf.read<float>(1)[0]);
    std::sort(fo.begin(), fo.end());
    bool fok = true;
    for (int i = 0; i <= n; ++i)
        fok &= fo[i] == static_cast<float>(i - 1);
    CHECK(fok);
}

TEST_CASE("32-bit local atomics within each work-group", "[kernels][atomics]") {
    Program prog(R"(
kernel void k(global int* out, global int* olds) {
    local int counter[3];
    size_t l = get_local_id(0);
    if (l == 0) { counter[0] = 0; counter[1] = 100; counter[2] = 0; }
    barrier(CLK_LOCAL_MEM_FENCE);
    olds[get_global_id(0)] = atomic_inc(&counter[0]);
    atomic_sub(&counter[1], 2);
    atomic_max(&counter[2], (int)l);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        out[3 * get_group_id(0)] = counter[0];
        out[3 * get_group_id(0) + 1] = counter[1];
        out[3 * get_group_id(0) + 2] = counter[2];
    }
}
)");
    const size_t groups = 64;
    Buffer bout(3 * groups * sizeof(int)), bold(groups * kGroup * sizeof(int));
    cl_kernel k = prog.kernel("k");
    setArgs(k, bout, bold);
    run1D(k, groups * kGroup, kGroup);
    std::vector<int> out = bout.read<int>(3 * groups), olds = bold.read<int>(groups * kGroup);
    size_t bad = 0;
    for (size_t g = 0; g < groups; ++g) {
        bad += out[3 * g] != static_cast<int>(kGroup);
        bad += out[3 * g + 1] != 100 - 2 * static_cast<int>(kGroup);
        bad += out[3 * g + 2] != static_cast<int>(kGroup) - 1;
        std::vector<int> o(olds.begin() + g * kGroup, olds.begin() + (g + 1) * kGroup);
        std::sort(o.begin(), o.end());
        for (size_t i = 0; i < kGroup; ++i)
            bad += o[i] != static_cast<int>(i);
    }
    CHECK(bad == 0);
}

TEST_CASE("64-bit atom_* under contention (cl_khr_int64_*_atomics)", "[kernels][atomics]") {
    if (!KernelEnv::get().int64Atomics) {
        SUCCEED("device without 64-bit atomics");
        return;
    }
    Program prog(R"(
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
kernel void k(volatile global long* c, volatile global ulong* u, global long* old) {
    long i = (long)get_global_id(0);
    atom_add(&c[0], 1L << 33);
    old[i] = atom_inc(&c[1]);
    atom_min(&c[2], -i * 3000000000L);
    atom_max(&c[3], i << 20);
    atom_or(&u[0], 1UL << (i % 64));
    atom_xor(&u[1], (ulong)i << 31);
    long prev;
    do { prev = c[4]; } while (atom_cmpxchg(&c[4], prev, prev + 5) != prev);
}
)");
    std::vector<int64_t> c = {0, 0, 0, 0, 0};
    std::vector<uint64_t> u = {0, 0};
    Buffer bc(c), bu(u), bold(kItems * sizeof(int64_t));
    cl_kernel k = prog.kernel("k");
    setArgs(k, bc, bu, bold);
    run1D(k, kItems, kGroup);
    c = bc.read<int64_t>(5);
    u = bu.read<uint64_t>(2);
    const int64_t n = kItems;
    CHECK(c[0] == n << 33);
    CHECK(c[1] == n);
    CHECK(c[2] == -(n - 1) * 3000000000LL);
    CHECK(c[3] == (n - 1) << 20);
    CHECK(c[4] == 5 * n);
    CHECK(u[0] == ~0ull);
    uint64_t x = 0;
    for (int64_t i = 0; i < n; ++i)
        x ^= static_cast<uint64_t>(i) << 31;
    CHECK(u[1] == x);
    std::vector<int64_t> old = bold.read<int64_t>(kItems);
    std::sort(old.begin(), old.end());
    bool unique = true;
    for (int64_t i = 0; i < n; ++i)
        unique &= old[i] == i;
    CHECK(unique);
}

TEST_CASE("C11 atomics with memory order and scope (OpenCL C 2.0+)", "[kernels][atomics]") {
    if (!KernelEnv::get().openclC20) {
        SUCCEED("device without OpenCL C 2.0 atomics");
        return;
    }
    Program prog(R"(
kernel void k(volatile global atomic_int* c, volatile global atomic_long* l,
              volatile global atomic_uint* u, global int* old, volatile global atomic_int* flag,
              global int* firsts) {
    int i = (int)get_global_id(0);
    atomic_fetch_add_explicit(&c[0], 1, memory_order_relaxed, memory_scope_device);
    old[i] = atomic_fetch_add(&c[1], 1);
    atomic_fetch_sub_explicit(&c[2], 3, memory_order_acq_rel);
    atomic_fetch_max(&c[3], i);
    atomic_fetch_min_explicit(&c[4], -i, memory_order_seq_cst, memory_scope_device);
    atomic_fetch_add(&l[0], 1L << 40);
    atomic_fetch_or(&u[0], 1u << (i % 32));
    int expected = atomic_load(&c[5]);
    while (!atomic_compare_exchange_weak(&c[5], &expected, expected + 7))
        ;
    if (!atomic_flag_test_and_set_explicit((volatile global atomic_flag*)flag,
                                           memory_order_acq_rel, memory_scope_device))
        atomic_fetch_add(&c[6], 1);
    local atomic_int lc;
    if (get_local_id(0) == 0)
        atomic_init(&lc, 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_fetch_add_explicit(&lc, 2, memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        firsts[get_group_id(0)] = atomic_load(&lc);
}
)",
                 KernelEnv::get().clStd20);
    std::vector<int> c = {0, 0, 0, 0, 0, 0, 0};
    std::vector<int64_t> l = {0};
    std::vector<unsigned> u = {0};
    std::vector<int> flag = {0};
    Buffer bc(c), bl(l), bu(u), bold(kItems * sizeof(int)), bflag(flag),
        bfirst(kItems * sizeof(int));
    cl_kernel k = prog.kernel("k");
    setArgs(k, bc, bl, bu, bold, bflag, bfirst);
    run1D(k, kItems, kGroup);
    c = bc.read<int>(7);
    const int n = static_cast<int>(kItems);
    CHECK(c[0] == n);
    CHECK(c[1] == n);
    CHECK(c[2] == -3 * n);
    CHECK(c[3] == n - 1);
    CHECK(c[4] == -(n - 1));
    CHECK(c[5] == 7 * n);
    CHECK(c[6] == 1);
    CHECK(bl.read<int64_t>(1)[0] == static_cast<int64_t>(n) << 40);
    CHECK(bu.read<unsigned>(1)[0] == 0xffffffffu);
    std::vector<int> old = bold.read<int>(kItems);
    std::sort(old.begin(), old.end());
    std::vector<int> iota(n);
    std::iota(iota.begin(), iota.end(), 0);
    CHECK(old == iota);
    std::vector<int> perGroup = bfirst.read<int>(kItems / kGroup);
    CHECK(std::all_of(perGroup.begin(), perGroup.end(),
                      [](int v) { return v == 2 * static_cast<int>(kGroup); }));
}

TEST_CASE("__local atomics of one work-group of up to 1024 work-items are exact",
          "[kernels][atomics]") {
    if (!KernelEnv::get().openclC20) {
        SUCCEED("device without OpenCL C 2.0 atomics");
        return;
    }
    // The shape of the CTS's c11_atomics on __local memory: one large group hammering a few
    // counters in loops, OpenCL 1.x and C11 forms at each order, through kernel-scope variables,
    // a __local argument and a generic pointer in a function. On the CPU device these are plain
    // memory operations (a group runs on one thread); results must stay exact in both tiers
    // (kernels_misc_test: quick code; kernels_misc_optimised_test: optimised code).
    Program prog(R"(
#define ITERS 50
void bump(volatile atomic_int* p, int v) {
    atomic_fetch_add_explicit(p, v, memory_order_acq_rel, memory_scope_work_group);
}
kernel void k(global int* out, global int* olds, global long* lout,
              volatile local atomic_int* arg) {
    local int c[4];
    local atomic_int a[6];
    local atomic_long al;
    uint l = get_local_id(0);
    size_t gid = get_global_id(0), g = get_group_id(0);
    if (l == 0) {
        c[0] = 0; c[1] = 0; c[2] = 0; c[3] = -1;
        for (int j = 0; j < 6; ++j)
            atomic_init(&a[j], 0);
        atomic_init(&al, 0);
        atomic_init(&arg[0], 0);
        atomic_init(&arg[1], 0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    olds[2 * gid] = atomic_inc(&c[0]);
    for (int i = 0; i < ITERS; ++i) {
        atomic_add(&c[1], (int)l);
        int prev;
        do {
            prev = c[2];
        } while (atomic_cmpxchg(&c[2], prev, prev + 3) != prev);
        atomic_fetch_add_explicit(&a[0], 1, memory_order_relaxed, memory_scope_work_group);
        atomic_fetch_add_explicit(&a[1], 1, memory_order_acquire, memory_scope_work_group);
        atomic_fetch_add_explicit(&a[2], 1, memory_order_release, memory_scope_work_group);
        atomic_fetch_sub_explicit(&a[3], 1, memory_order_acq_rel, memory_scope_work_group);
        atomic_fetch_add_explicit(&a[4], 2, memory_order_seq_cst, memory_scope_work_group);
        int e = atomic_load_explicit(&a[5], memory_order_acquire, memory_scope_work_group);
        while (!atomic_compare_exchange_weak_explicit(&a[5], &e, e + 1, memory_order_acq_rel,
                                                      memory_order_acquire,
                                                      memory_scope_work_group))
            ;
        atomic_fetch_add(&al, 1L << 33);
        atomic_fetch_max_explicit(&arg[0], (int)(l * ITERS + i), memory_order_relaxed,
                                  memory_scope_work_group);
        bump(&arg[1], 1);
        atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_seq_cst,
                               memory_scope_work_group);
    }
    olds[2 * gid + 1] = atomic_xchg(&c[3], (int)l);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        global int* o = out + 12 * g;
        for (int j = 0; j < 4; ++j)
            o[j] = c[j];
        for (int j = 0; j < 6; ++j)
            o[4 + j] = atomic_load_explicit(&a[j], memory_order_relaxed, memory_scope_work_group);
        o[10] = atomic_load(&arg[0]);
        o[11] = atomic_load(&arg[1]);
        lout[g] = atomic_load(&al);
    }
}
)",
                 KernelEnv::get().clStd20);
    cl_kernel k = prog.kernel("k");
    size_t maxGroup = 0;
    REQUIRE(clGetKernelWorkGroupInfo(k, KernelEnv::get().device, CL_KERNEL_WORK_GROUP_SIZE,
                                     sizeof(maxGroup), &maxGroup, nullptr) == CL_SUCCESS);
    const size_t n = std::min<size_t>(1024, maxGroup), groups = 2;
    const int iters = 50, ni = static_cast<int>(n);
    INFO("group size " << n);
    Buffer bout(12 * groups * sizeof(int)), bold(2 * n * groups * sizeof(int)),
        bl(groups * sizeof(int64_t));
    setArgs(k, bout, bold, bl, LocalBytes{2 * sizeof(int)});
    run1D(k, n * groups, n);
    std::vector<int> out = bout.read<int>(12 * groups), olds = bold.read<int>(2 * n * groups);
    std::vector<int64_t> lout = bl.read<int64_t>(groups);
    for (size_t g = 0; g < groups; ++g) {
        INFO("group " << g);
        const int* o = out.data() + 12 * g;
        CHECK(o[0] == ni);
        CHECK(o[1] == iters * ni * (ni - 1) / 2);
        CHECK(o[2] == 3 * iters * ni);
        CHECK(o[4] == iters * ni);
        CHECK(o[5] == iters * ni);
        CHECK(o[6] == iters * ni);
        CHECK(o[7] == -iters * ni);
        CHECK(o[8] == 2 * iters * ni);
        CHECK(o[9] == iters * ni);
        CHECK(o[10] == (ni - 1) * iters + iters - 1);
        CHECK(o[11] == iters * ni);
        CHECK(lout[g] == (static_cast<int64_t>(iters) * ni) << 33);
        // atomic_inc handed out 0..n-1 once each; the exchanges passed on -1 and every id.
        std::vector<int> incs, xchgs;
        for (size_t i = 0; i < n; ++i) {
            incs.push_back(olds[2 * (g * n + i)]);
            xchgs.push_back(olds[2 * (g * n + i) + 1]);
        }
        xchgs.push_back(o[3]);
        std::sort(incs.begin(), incs.end());
        std::sort(xchgs.begin(), xchgs.end());
        std::vector<int> want(n), wantX(n + 1);
        std::iota(want.begin(), want.end(), 0);
        std::iota(wantX.begin(), wantX.end(), -1);
        CHECK(incs == want);
        CHECK(xchgs == wantX);
    }
}

TEST_CASE("async_work_group_copy and strided copies with wait_group_events", "[kernels][async]") {
    Program prog(R"(
kernel void k(global const float4* in, global float4* out, global const int* src,
              global int* dst, local float4* tile, local int* itile, uint per) {
    size_t g = get_group_id(0);
    event_t e = async_work_group_copy(tile, in + g * per, per, 0);
    event_t e2 = async_work_group_strided_copy(itile, src + g, per, get_num_groups(0), 0);
    event_t evs[2] = {e, e2};
    wait_group_events(2, evs);
    for (size_t i = get_local_id(0); i < per; i += get_local_size(0)) {
        tile[i] = tile[i] * 2.0f + (float4)(1, 2, 3, 4);
        itile[i] += 1000;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy(out + g * per, tile, per, 0);
    e = async_work_group_strided_copy(dst + g, itile, per, get_num_groups(0), e);
    wait_group_events(1, &e);
}
)");
    const size_t groups = 8, local = 16, per = 3 * local + 5; // more elements than work-items
    std::vector<float> in(groups * per * 4);
    std::vector<int> src(groups * per);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = static_cast<float>(i) * 0.5f;
    for (size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<int>(i * 7);
    Buffer bin(in), bout(in.size() * sizeof(float)), bsrc(src), bdst(src.size() * sizeof(int));
    cl_kernel k = prog.kernel("k");
    setArgs(k, bin, bout, bsrc, bdst, LocalBytes{per * 16}, LocalBytes{per * 4},
            static_cast<cl_uint>(per));
    run1D(k, groups * local, local);
    std::vector<float> out = bout.read<float>(in.size());
    std::vector<int> dst = bdst.read<int>(src.size());
    size_t bad = 0;
    for (size_t i = 0; i < in.size(); ++i)
        bad += out[i] != in[i] * 2.0f + static_cast<float>(i % 4 + 1);
    // Group g gathered src[g + j*groups] and scattered back to the same places.
    for (size_t i = 0; i < src.size(); ++i)
        bad += dst[i] != src[i] + 1000;
    CHECK(bad == 0);
}
