// Sub-group functions (get_sub_group_*, sub_group_barrier, all/any/broadcast/reduce/scan, the
// cl_khr_subgroup_* extensions, the non-uniform ones under divergent branches and loops) against
// host results over shapes with partial groups, clGetKernelSubGroupInfo's answers and errors,
// and the queries and macro agreeing, on the device under test (CPU, GCN with DUET_DEVICES=gcn,
// the NVIDIA GPU with DUET_DEVICES=nvidia). Sub-group sizes come from the kernel's
// CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, never assumed. Also independent forward progress
// where the device reports it, and cl_khr_subgroups' macro, pragma and OpenCL C 2.0 functions
// following CL_DEVICE_EXTENSIONS.
#include "collective_reference.hpp"
#include "kernel_harness.hpp"
#include "support/cl_test.hpp"
#include "support/scoped_env.hpp"

#include <CL/cl_ext.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace duet::test;

namespace {

cl_uint maxNumSubGroups() {
    cl_uint n = 0;
    REQUIRE_CL(clGetDeviceInfo(KernelEnv::get().device, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof n, &n,
                               nullptr));
    return n;
}

/// CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE (or COUNT) for a 1D-3D local size.
size_t subGroupQuery(cl_kernel k, cl_kernel_sub_group_info q, const std::vector<size_t>& local) {
    size_t v = 0, ret = 0;
    REQUIRE_CL(clGetKernelSubGroupInfo(k, KernelEnv::get().device, q, local.size() * sizeof(size_t),
                                       local.data(), sizeof v, &v, &ret));
    CHECK(ret == sizeof(size_t));
    return v;
}

/// Runs `k(in, out)` over in.size() work-items in groups of `local` and returns `out`
/// (`outPerItem` ints a work-item).
std::vector<int> runInOut(cl_kernel k, const std::vector<int>& in, size_t local,
                          size_t outPerItem = 1) {
    KernelEnv& env = KernelEnv::get();
    const size_t n = in.size();
    Buffer bin(in), bout(outPerItem * n * sizeof(int));
    setArgs(k, bin, bout);
    REQUIRE_CL(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &n, &local, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(env.queue));
    return bout.read<int>(outPerItem * n);
}

enum Out {
    kSize,
    kMaxSize,
    kNum,
    kEnqNum,
    kId,
    kLocalId,
    kReduceAdd,
    kReduceMin,
    kReduceMax,
    kInclAdd,
    kInclMin,
    kInclMax,
    kExclAdd,
    kExclMin,
    kExclMax,
    kBroadcast,
    kAll,
    kAny,
    kOuts
};

std::string source(const char* type) {
    std::string s = "#define T " + std::string(type) + "\n";
    if (std::string(type) == "double")
        s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    s += R"CLC(
kernel void sg(global const T* in, global T* out) {
    size_t gid = get_global_id(0) +
                 get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
    T x = in[gid];
    global T* o = out + 18 * gid;
    o[0] = (T)get_sub_group_size();
    o[1] = (T)get_max_sub_group_size();
    o[2] = (T)get_num_sub_groups();
    o[3] = (T)get_enqueued_num_sub_groups();
    o[4] = (T)get_sub_group_id();
    o[5] = (T)get_sub_group_local_id();
    o[6] = sub_group_reduce_add(x);
    o[7] = sub_group_reduce_min(x);
    o[8] = sub_group_reduce_max(x);
    o[9] = sub_group_scan_inclusive_add(x);
    o[10] = sub_group_scan_inclusive_min(x);
    o[11] = sub_group_scan_inclusive_max(x);
    o[12] = sub_group_scan_exclusive_add(x);
    o[13] = sub_group_scan_exclusive_min(x);
    o[14] = sub_group_scan_exclusive_max(x);
    o[15] = sub_group_broadcast(x, get_sub_group_size() - 1);
    o[16] = (T)sub_group_all(x != (T)0);
    o[17] = (T)sub_group_any(x != (T)0);
}
)CLC";
    return s;
}

template <class T> void check(Program& prog, const char* type, const Shape& shape, Rng& rng) {
    const size_t gx = shape.global[0], gy = shape.global[1], gz = shape.global[2];
    const size_t n = gx * gy * gz;
    cl_kernel k = prog.kernel("sg");
    const std::vector<size_t> enqLocal(shape.local.begin(), shape.local.begin() + shape.dims);
    const size_t width = subGroupQuery(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, enqLocal);
    const size_t enqItems = shape.local[0] * shape.local[1] * shape.local[2];
    REQUIRE(width >= 1);
    REQUIRE(subGroupQuery(k, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, enqLocal) ==
            (enqItems + width - 1) / width);

    // Small integers (exact in float in any order); some all-zero and no-zero runs for all/any.
    std::vector<T> in(n);
    for (size_t i = 0; i < n; ++i) {
        long v = long(rng.next() % 17) - (std::numeric_limits<T>::is_signed ? 8 : 0);
        if (i / 8 % 3 == 0 && v == 0)
            v = 3;
        if (i / 8 % 3 == 1)
            v = 0;
        in[i] = T(v);
    }
    Buffer bin(in), bout(n * kOuts * sizeof(T));
    setArgs(k, bin, bout);
    REQUIRE_CL(clEnqueueNDRangeKernel(KernelEnv::get().queue, k, shape.dims, nullptr,
                                      shape.global.data(), shape.local.data(), 0, nullptr,
                                      nullptr));
    REQUIRE_CL(clFinish(KernelEnv::get().queue));
    const std::vector<T> out = bout.read<T>(n * kOuts);

    size_t checked = 0;
    for (size_t g = 0; g < shape.groupCount(); ++g) {
        const Group group(shape, g);
        const std::vector<size_t>& items = group.items;
        const size_t numSg = (items.size() + width - 1) / width;
        for (size_t s = 0; s < numSg; ++s) {
            const size_t b = s * width, e = std::min(items.size(), b + width);
            Totals<T> total, run;
            for (size_t j = b; j < e; ++j)
                total.add(in[items[j]]);
            for (size_t j = b; j < e; ++j) {
                const size_t i = items[j];
                T o[kOuts];
                std::copy_n(&out[i * kOuts], kOuts, o);
                o[kAll] = T(o[kAll] != T(0));
                o[kAny] = T(o[kAny] != T(0));
                T want[kOuts];
                want[kSize] = T(e - b);
                want[kMaxSize] = T(std::min(width, enqItems));
                want[kNum] = T(numSg);
                want[kEnqNum] = T((enqItems + width - 1) / width);
                want[kId] = T(s);
                want[kLocalId] = T(j - b);
                want[kExclAdd] = run.sum;
                want[kExclMin] = run.min;
                want[kExclMax] = run.max;
                run.add(in[i]);
                want[kInclAdd] = run.sum;
                want[kInclMin] = run.min;
                want[kInclMax] = run.max;
                want[kReduceAdd] = total.sum;
                want[kReduceMin] = total.min;
                want[kReduceMax] = total.max;
                want[kBroadcast] = in[items[e - 1]];
                want[kAll] = T(total.all);
                want[kAny] = T(total.any);
                ++checked;
                if (std::equal(want, want + kOuts, o))
                    continue;
                INFO(type << " " << shape.dims << "D global " << gx << "x" << gy << "x" << gz
                          << " local " << shape.local[0] << "x" << shape.local[1] << "x"
                          << shape.local[2] << ", group " << g << ", sub-group " << s
                          << ", local linear id " << j);
                for (int w = 0; w < kOuts; ++w) {
                    INFO("output " << w);
                    CHECK(o[w] == want[w]);
                }
                return;
            }
        }
    }
    CHECK(checked == n);
}

template <class T> void checkShapes(const char* type) {
    Rng rng(0x5ab + sizeof(T));
    Program prog(source(type), "-cl-std=CL3.0");
    const Shape shapes[] = {
        {1, {1000, 1, 1}, {128, 1, 1}}, // full groups and a last one of 104
        {1, {50, 1, 1}, {7, 1, 1}},     // groups smaller than a sub-group, a last one of 1
        {1, {300, 1, 1}, {100, 1, 1}},  // a partial last sub-group in every group
        {2, {37, 11, 1}, {8, 4, 1}},    // partial in both dimensions
        {2, {40, 20, 1}, {16, 8, 1}},   {3, {9, 7, 5}, {4, 3, 2}}, // partial in all three
    };
    for (const Shape& s : shapes)
        check<T>(prog, type, s, rng);
}

} // namespace

TEST_CASE("sub-group functions match the host", "[kernels][sub_group]") {
    if (maxNumSubGroups() == 0) {
        WARN("CL_DEVICE_MAX_NUM_SUB_GROUPS is 0 on this device");
        return;
    }
    checkShapes<cl_int>("int");
    checkShapes<cl_uint>("uint");
    checkShapes<cl_long>("long");
    checkShapes<cl_ulong>("ulong");
    checkShapes<cl_float>("float");
    if (KernelEnv::get().fp64)
        checkShapes<cl_double>("double");
}

TEST_CASE("sub_group_barrier under a sub-group-uniform branch", "[kernels][sub_group]") {
    if (maxNumSubGroups() == 0)
        return;
    // Sub-group 0 reverses its values through __local memory; the others do not reach the
    // barrier (as in the CTS's barrier_functions). The spec allows it: on the CPU device the
    // regions become resumable, on GCN it is the wave's own barrier.
    Program prog(R"CLC(
kernel void rev(global const int* in, global int* out) {
    local int tmp[256];
    size_t gid = get_global_id(0);
    uint lid = get_sub_group_local_id(), n = get_sub_group_size();
    if (get_sub_group_id() == 0) {
        tmp[lid] = in[gid];
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        out[gid] = tmp[n - 1 - lid];
    } else {
        out[gid] = -in[gid];
    }
}
)CLC",
                 "-cl-std=CL3.0");
    cl_kernel k = prog.kernel("rev");
    const size_t n = 512, local = 256;
    std::vector<int> in(n);
    for (size_t i = 0; i < n; ++i)
        in[i] = int(i * 3 + 1);
    const std::vector<int> out = runInOut(k, in, local);
    const size_t width = subGroupQuery(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {local});
    for (size_t i = 0; i < n; ++i) {
        const size_t l = i % local;
        INFO("work-item " << i);
        CHECK(out[i] == (l < width ? in[i - l + width - 1 - l] : -in[i]));
    }
}

TEST_CASE("sub-group collectives in sub-group-uniform loops and branches, then the group's barrier",
          "[kernels][sub_group]") {
    if (maxNumSubGroups() == 0)
        return;
    // Sub-group s runs the loop s % 3 + 1 times, even sub-groups also scan; then the group's
    // barrier and an exchange across sub-groups through __local memory. The CPU device must
    // run each sub-group to its own barriers and still hold the group's barrier for everyone.
    Program prog(R"CLC(
kernel void k(global const int* in, global int* out) {
    local int tmp[256];
    size_t gid = get_global_id(0);
    uint lid = get_local_id(0), sg = get_sub_group_id();
    int x = in[gid], acc = 0;
    for (uint r = 0; r <= sg % 3; ++r) {
        acc += sub_group_reduce_add(x + (int)r);
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (sg % 2 == 0)
        acc += sub_group_scan_inclusive_add(x);
    tmp[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[gid] = tmp[get_local_size(0) - 1 - lid];
}
)CLC",
                 "-cl-std=CL3.0");
    cl_kernel k = prog.kernel("k");
    const size_t n = 600, local = 200;
    std::vector<int> in(n);
    Rng rng(5);
    for (int& v : in)
        v = int(rng.next() % 21) - 10;
    const std::vector<int> out = runInOut(k, in, local);
    const size_t width = subGroupQuery(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {local});
    std::vector<int> acc(n);
    for (size_t g = 0; g < n; g += local)
        for (size_t b = g; b < g + local; b += width) {
            const size_t s = (b - g) / width, size = std::min(width, g + local - b);
            int sum = 0;
            for (size_t j = 0; j < size; ++j)
                sum += in[b + j];
            int prefix = 0;
            for (size_t j = 0; j < size; ++j) {
                int a = 0;
                for (size_t r = 0; r <= s % 3; ++r)
                    a += sum + int(size * r);
                prefix += in[b + j];
                acc[b + j] = a + (s % 2 == 0 ? prefix : 0);
            }
        }
    for (size_t i = 0; i < n; ++i) {
        const size_t g = i / local * local, l = i - g;
        INFO("work-item " << i);
        REQUIRE(out[i] == acc[g + local - 1 - l]);
    }
}

TEST_CASE("clGetKernelSubGroupInfo answers and errors", "[kernels][sub_group]") {
    KernelEnv& env = KernelEnv::get();
    Program prog("kernel void k(global int* p) { p[get_global_id(0)] = 1; }\n", "-cl-std=CL3.0");
    cl_kernel k = prog.kernel("k");
    const size_t local1[1] = {64};
    size_t v = 0;
    if (maxNumSubGroups() == 0) {
        // CL_INVALID_OPERATION: the device has no sub-groups.
        CHECK_CL_ERR(CL_INVALID_OPERATION,
                     clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0,
                                             nullptr, sizeof v, &v, nullptr));
        return;
    }
    const size_t width = subGroupQuery(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {4096});
    REQUIRE(width >= 1);
    size_t most = 0;
    REQUIRE_CL(clGetKernelWorkGroupInfo(k, env.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most,
                                        &most, nullptr));
    CHECK(subGroupQuery(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {1}) == 1);
    CHECK(subGroupQuery(k, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, {width, 3, 2}) == 6);
    CHECK(subGroupQuery(k, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, {width + 1}) == 2);
    REQUIRE_CL(clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, nullptr,
                                       sizeof v, &v, nullptr));
    CHECK(v == (most + width - 1) / width);
    CHECK(v <= maxNumSubGroups());
    REQUIRE_CL(clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_COMPILE_NUM_SUB_GROUPS, 0, nullptr,
                                       sizeof v, &v, nullptr));
    CHECK(v == 0);
    // The local size for a count: count sub-groups of full width, or 0s where none fits.
    size_t count = 2, local[3] = {9, 9, 9}, ret = 0;
    REQUIRE_CL(clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                                       sizeof count, &count, sizeof local, local, &ret));
    CHECK(ret == sizeof local);
    if (2 * width <= most) {
        CHECK(local[0] == 2 * width);
        CHECK(local[1] == 1);
        CHECK(local[2] == 1);
    }
    count = most + 1;
    REQUIRE_CL(clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                                       sizeof count, &count, sizeof(size_t), local, &ret));
    CHECK(ret == sizeof(size_t));
    CHECK(local[0] == 0);
    // The KHR entry point through the platform gives the same answers.
    auto khr = reinterpret_cast<clGetKernelSubGroupInfoKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(env.platform, "clGetKernelSubGroupInfoKHR"));
    REQUIRE(khr);
    REQUIRE_CL(khr(k, env.device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof local1, local1,
                   sizeof v, &v, nullptr));
    CHECK(v == std::min<size_t>(64, width));

    // Bad inputs, with the spec's codes.
    CHECK_CL_ERR(CL_INVALID_KERNEL,
                 clGetKernelSubGroupInfo(nullptr, env.device, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0,
                                         nullptr, sizeof v, &v, nullptr));
    // A live handle of another type as the device (a pointer to any 8-byte variable would be
    // read past its end: a handle is an object, ASan saw the runtime read its type tag there).
    CHECK_CL_ERR(CL_INVALID_DEVICE, clGetKernelSubGroupInfo(k, reinterpret_cast<cl_device_id>(k),
                                                            CL_KERNEL_MAX_NUM_SUB_GROUPS, 0,
                                                            nullptr, sizeof v, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, env.device, 0x7777, 0, nullptr, sizeof v, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, nullptr,
                                         sizeof v - 1, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                                         sizeof local1, nullptr, sizeof v, &v, nullptr));
    const size_t four[4] = {1, 1, 1, 1};
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                         sizeof four, four, sizeof v, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, 3,
                                         local1, sizeof v, &v, nullptr));
    const size_t zero[2] = {8, 0};
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                                         sizeof zero, zero, sizeof v, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                                         2 * sizeof count, &count, sizeof local, local, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, env.device, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                                         sizeof count, &count, 4 * sizeof(size_t), local, nullptr));
}

TEST_CASE("sub-groups are reported truthfully", "[kernels][sub_group]") {
    KernelEnv& env = KernelEnv::get();
    size_t size = 0;
    REQUIRE_CL(clGetDeviceInfo(env.device, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &size));
    std::vector<cl_name_version> features(size / sizeof(cl_name_version));
    REQUIRE_CL(
        clGetDeviceInfo(env.device, CL_DEVICE_OPENCL_C_FEATURES, size, features.data(), nullptr));
    const bool listed = std::any_of(features.begin(), features.end(), [](const cl_name_version& f) {
        return std::string(f.name) == "__opencl_c_subgroups";
    });
    const bool supported = maxNumSubGroups() > 0;
    CHECK(listed == supported);
    // cl_khr_subgroups requires independent forward progress.
    cl_bool ifp = CL_TRUE;
    REQUIRE_CL(clGetDeviceInfo(env.device, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
                               sizeof ifp, &ifp, nullptr));
    if (env.hasExtension("cl_khr_subgroups"))
        CHECK(ifp == CL_TRUE);
    if (!supported)
        CHECK(ifp == CL_FALSE);
    // The feature macro follows the query in OpenCL C 3.0.
    Program prog(std::string(supported ? "#ifndef" : "#ifdef") +
                     " __opencl_c_subgroups\n#error the macro disagrees with "
                     "CL_DEVICE_MAX_NUM_SUB_GROUPS\n#endif\n"
                     "kernel void k(global int* p) { *p = 1; }\n",
                 "-cl-std=CL3.0");
    CHECK(prog.kernel("k"));
    // The sub-group extensions' macros (header-only in clang, which defines them all for SPIR
    // targets) follow CL_DEVICE_EXTENSIONS.
    for (const char* ext : {"cl_khr_subgroup_extended_types", "cl_khr_subgroup_non_uniform_vote",
                            "cl_khr_subgroup_ballot", "cl_khr_subgroup_non_uniform_arithmetic",
                            "cl_khr_subgroup_shuffle", "cl_khr_subgroup_shuffle_relative",
                            "cl_khr_subgroup_clustered_reduce", "cl_khr_subgroup_rotate"}) {
        INFO(ext);
        Program p(std::string(env.hasExtension(ext) ? "#ifndef " : "#ifdef ") + ext +
                      "\n#error the macro disagrees with CL_DEVICE_EXTENSIONS\n#endif\n"
                      "kernel void k(global int* p) { *p = 1; }\n",
                  "-cl-std=CL3.0");
        CHECK(p.kernel("k"));
    }
}

TEST_CASE("sub-group extensions the device lists match the host", "[kernels][sub_group]") {
    KernelEnv& env = KernelEnv::get();
    if (maxNumSubGroups() == 0)
        return;
    // Each part runs where its extension is listed; a group of 100 has a partial last
    // sub-group on every device.
    const size_t n = 300, local = 100;
    std::vector<int> in(n);
    Rng rng(11);
    for (int& v : in)
        v = int(rng.next() % 9) - 4;
    struct Part {
        const char* ext;
        const char* expr; // of x (this work-item's input) and l (its sub-group local id)
        bool nonUniform;  // evaluated only by the work-items with odd x
    };
    const Part parts[] = {
        {"cl_khr_subgroup_shuffle", "sub_group_shuffle(x, s - 1 - l)", false},
        {"cl_khr_subgroup_shuffle", "sub_group_shuffle_xor(x, 1u) * (l + 1 < s || l % 2)", false},
        // Every lane shuffles (the functions are not non-uniform); lanes with no source drop it.
        {"cl_khr_subgroup_shuffle_relative", "sub_group_shuffle_up(x, 2u) * (l >= 2)", false},
        {"cl_khr_subgroup_shuffle_relative", "sub_group_shuffle_down(x, 1u) * (l + 1 < s)", false},
        // Rotations: modulo the sub-group's width; a partial sub-group's missing lanes drop it.
        {"cl_khr_subgroup_rotate",
         "sub_group_rotate(x, 3) * ((l + 3) % get_max_sub_group_size() < s)", false},
        {"cl_khr_subgroup_rotate",
         "sub_group_clustered_rotate(x, -1, 4u) * ((l & ~3u) + (l + 3u) % 4u < s)", false},
        {"cl_khr_subgroup_clustered_reduce", "sub_group_clustered_reduce_add(x, 4u)", false},
        {"cl_khr_subgroup_clustered_reduce", "sub_group_clustered_reduce_max(x, 2u)", false},
        {"cl_khr_subgroup_extended_types", "(int)sub_group_reduce_add((short)x)", false},
        {"cl_khr_subgroup_extended_types", "(int)sub_group_scan_inclusive_min((char)x)", false},
        {"cl_khr_subgroup_extended_types", "sub_group_broadcast((int2)(x, -x), 1u).y", false},
        {"cl_khr_subgroup_ballot", "(int)sub_group_ballot_bit_count(sub_group_ballot(x > 0))",
         false},
        {"cl_khr_subgroup_ballot", "(int)sub_group_ballot_exclusive_scan(sub_group_ballot(x > 0))",
         false},
        {"cl_khr_subgroup_ballot", "sub_group_inverse_ballot(get_sub_group_lt_mask())", false},
        {"cl_khr_subgroup_ballot", "sub_group_broadcast_first(x * 10 + (int)l)", true},
        {"cl_khr_subgroup_non_uniform_vote", "sub_group_elect()", true},
        {"cl_khr_subgroup_non_uniform_vote", "sub_group_non_uniform_all(x > 0)", true},
        {"cl_khr_subgroup_non_uniform_arithmetic", "sub_group_non_uniform_reduce_add(x)", true},
        {"cl_khr_subgroup_non_uniform_arithmetic", "sub_group_non_uniform_scan_exclusive_mul(x)",
         true},
    };
    size_t width = 0;
    for (const Part& part : parts) {
        if (!env.hasExtension(part.ext))
            continue;
        const std::string src =
            std::string("kernel void e(global const int* in, global int* out) {\n"
                        "    size_t i = get_global_id(0);\n"
                        "    int x = in[i];\n"
                        "    uint l = get_sub_group_local_id(), s = get_sub_group_size();\n"
                        "    out[i] = -99;\n") +
            (part.nonUniform ? "    if (x & 1)\n" : "") + "        out[i] = " + part.expr +
            ";\n}\n";
        Program prog(src, "-cl-std=CL3.0");
        cl_kernel k = prog.kernel("e");
        width = subGroupQuery(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {local});
        const std::vector<int> out = runInOut(k, in, local);
        const std::string expr = part.expr;
        for (size_t g = 0; g < n; g += local)
            for (size_t b = g; b < g + local; b += width) {
                const size_t s = std::min(width, g + local - b);
                std::vector<size_t> active; // the lanes that evaluate the expression
                for (size_t l = 0; l < s; ++l)
                    if (!part.nonUniform || (in[b + l] & 1))
                        active.push_back(l);
                for (size_t l = 0; l < s; ++l) {
                    const int x = in[b + l];
                    int want = -99;
                    const bool on = !part.nonUniform || (x & 1);
                    if (on) {
                        auto at = [&](size_t j) { return in[b + j]; };
                        if (expr.starts_with("sub_group_shuffle(x"))
                            want = at(s - 1 - l);
                        else if (expr.starts_with("sub_group_shuffle_xor"))
                            want = (l + 1 < s || l % 2) ? at(l ^ 1) : 0;
                        else if (expr.starts_with("sub_group_shuffle_up"))
                            want = l >= 2 ? at(l - 2) : 0;
                        else if (expr.starts_with("sub_group_shuffle_down"))
                            want = l + 1 < s ? at(l + 1) : 0;
                        else if (expr.starts_with("sub_group_rotate")) {
                            const size_t j = (l + 3) % width;
                            want = j < s ? at(j) : 0;
                        } else if (expr.starts_with("sub_group_clustered_rotate")) {
                            const size_t j = (l & ~size_t(3)) + (l + 3) % 4;
                            want = j < s ? at(j) : 0;
                        } else if (expr.find("clustered_reduce_add") != std::string::npos) {
                            want = 0;
                            for (size_t j = l / 4 * 4; j < std::min(s, l / 4 * 4 + 4); ++j)
                                want += at(j);
                        } else if (expr.find("clustered_reduce_max") != std::string::npos) {
                            want = std::numeric_limits<int>::min();
                            for (size_t j = l / 2 * 2; j < std::min(s, l / 2 * 2 + 2); ++j)
                                want = std::max(want, at(j));
                        } else if (expr.find("reduce_add((short)") != std::string::npos) {
                            want = 0;
                            for (size_t j = 0; j < s; ++j)
                                want += at(j);
                        } else if (expr.find("scan_inclusive_min((char)") != std::string::npos) {
                            want = 127;
                            for (size_t j = 0; j <= l; ++j)
                                want = std::min(want, at(j));
                        } else if (expr.find("(int2)") != std::string::npos)
                            want = -at(1);
                        else if (expr.find("bit_count") != std::string::npos) {
                            want = 0;
                            for (size_t j = 0; j < s; ++j)
                                want += at(j) > 0;
                        } else if (expr.find("exclusive_scan(sub_group_ballot") !=
                                   std::string::npos) {
                            want = 0;
                            for (size_t j = 0; j < l; ++j)
                                want += at(j) > 0;
                        } else if (expr.find("lt_mask") != std::string::npos)
                            want = 0; // a lane is never below itself
                        else if (expr.find("broadcast_first") != std::string::npos)
                            want = at(active[0]) * 10 + int(active[0]);
                        else if (expr.find("elect") != std::string::npos)
                            want = l == active[0];
                        else if (expr.find("non_uniform_all") != std::string::npos) {
                            want = 1;
                            for (size_t j : active)
                                want = want && at(j) > 0;
                        } else if (expr.find("non_uniform_reduce_add") != std::string::npos) {
                            want = 0;
                            for (size_t j : active)
                                want += at(j);
                        } else if (expr.find("scan_exclusive_mul") != std::string::npos) {
                            want = 1;
                            for (size_t j : active)
                                if (j < l)
                                    want *= at(j);
                        }
                    }
                    INFO(part.ext << ": " << expr << ", work-item " << b + l
                                  << ", sub-group local id " << l);
                    if (expr.find("elect") != std::string::npos ||
                        expr.find("non_uniform_all") != std::string::npos ||
                        expr.find("lt_mask") != std::string::npos)
                        REQUIRE((out[b + l] != 0) == (want != 0)); // "non-zero" when true
                    else
                        REQUIRE(out[b + l] == want);
                }
            }
    }
}

TEST_CASE("non-uniform sub-group functions act on the work-items that reach them",
          "[kernels][sub_group]") {
    KernelEnv& env = KernelEnv::get();
    if (maxNumSubGroups() == 0 || !env.hasExtension("cl_khr_subgroup_ballot") ||
        !env.hasExtension("cl_khr_subgroup_non_uniform_vote") ||
        !env.hasExtension("cl_khr_subgroup_non_uniform_arithmetic"))
        return;
    // Work-item-dependent branches and a loop with a per-work-item trip count: each call must see
    // exactly the lanes of its sub-group that reach it (on a GPU: the lanes the branch leaves
    // on). On the CPU device the regions become resumable and each call a region boundary.
    Program prog(R"CLC(
kernel void nu(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    uint lid = get_local_id(0), l = get_sub_group_local_id();
    int x = in[i];
    global int* o = out + 8 * i;
    for (int j = 0; j < 8; ++j)
        o[j] = -99;
    if (lid % 3) {
        o[0] = sub_group_non_uniform_reduce_add(x);
        o[1] = sub_group_non_uniform_scan_inclusive_max(x);
    } else {
        o[2] = (int)sub_group_non_uniform_scan_exclusive_add((long)x * 1000000007L % 1000);
        o[3] = sub_group_broadcast_first(x * 100 + (int)l);
    }
    uint acc = 0;
    for (uint r = 0; r < lid % 5; ++r) {
        uint4 b = sub_group_ballot((x >> r) & 1);
        acc = acc * 31u + (b.x ^ (b.y * 7u));
    }
    o[4] = (int)acc;
    if (x > 0) {
        if (sub_group_elect())
            o[5] = sub_group_non_uniform_reduce_add(x) + 1000 * (int)l;
        o[6] = (sub_group_non_uniform_all(x > 2) != 0) + 2 * (sub_group_non_uniform_any(x > 9) != 0);
    }
    o[7] = (int)sub_group_non_uniform_reduce_xor((uchar)x) +
           256 * (sub_group_non_uniform_all_equal(x > -100) != 0);
}
)CLC",
                 "-cl-std=CL3.0");
    cl_kernel k = prog.kernel("nu");
    const size_t n = 300, local = 100; // a partial last sub-group in every group
    std::vector<int> in(n);
    Rng rng(23);
    for (int& v : in)
        v = int(rng.next() % 16) - 3;
    const std::vector<int> out = runInOut(k, in, local, 8);
    const size_t width = subGroupQuery(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {local});
    for (size_t g = 0; g < n; g += local)
        for (size_t b = g; b < g + local; b += width) {
            const size_t s = std::min(width, g + local - b);
            auto lidOf = [&](size_t j) { return b + j - g; };
            // The lanes of this sub-group for which `on` holds, in lane order.
            auto lanes = [&](auto&& on) {
                std::vector<size_t> v;
                for (size_t j = 0; j < s; ++j)
                    if (on(j))
                        v.push_back(j);
                return v;
            };
            const auto odd = lanes([&](size_t j) { return lidOf(j) % 3 != 0; });
            const auto third = lanes([&](size_t j) { return lidOf(j) % 3 == 0; });
            const auto positive = lanes([&](size_t j) { return in[b + j] > 0; });
            for (size_t l = 0; l < s; ++l) {
                const int x = in[b + l];
                const size_t lid = lidOf(l);
                int want[8] = {-99, -99, -99, -99, -99, -99, -99, -99};
                if (lid % 3) {
                    want[0] = 0;
                    want[1] = std::numeric_limits<int>::min();
                    for (size_t j : odd) {
                        want[0] += in[b + j];
                        if (j <= l)
                            want[1] = std::max(want[1], in[b + j]);
                    }
                } else {
                    long long sum = 0;
                    for (size_t j : third)
                        if (j < l)
                            sum += (long long)in[b + j] * 1000000007LL % 1000;
                    want[2] = int(sum);
                    want[3] = in[b + third[0]] * 100 + int(third[0]);
                }
                uint32_t acc = 0;
                for (uint32_t r = 0; r < lid % 5; ++r) {
                    uint64_t bits = 0;
                    for (size_t j = 0; j < s; ++j)
                        if (lidOf(j) % 5 > r && ((in[b + j] >> r) & 1))
                            bits |= uint64_t(1) << j;
                    acc = acc * 31u + (uint32_t(bits) ^ (uint32_t(bits >> 32) * 7u));
                }
                want[4] = int(acc);
                if (x > 0) {
                    if (l == positive[0])
                        want[5] = x + 1000 * int(l); // the elected lane reduces alone
                    bool all = true, any = false;
                    for (size_t j : positive) {
                        all = all && in[b + j] > 2;
                        any = any || in[b + j] > 9;
                    }
                    want[6] = int(all) + 2 * int(any);
                }
                uint8_t bitsXor = 0;
                for (size_t j = 0; j < s; ++j)
                    bitsXor ^= uint8_t(in[b + j]);
                want[7] = int(bitsXor) + 256;
                for (int c = 0; c < 8; ++c) {
                    INFO("work-item " << b + l << ", sub-group local id " << l << ", output " << c);
                    REQUIRE(out[8 * (b + l) + size_t(c)] == want[c]);
                }
            }
        }
}

TEST_CASE("34 non-uniform reductions in one branch", "[kernels][sub_group]") {
    KernelEnv& env = KernelEnv::get();
    if (maxNumSubGroups() == 0 || !env.hasExtension("cl_khr_subgroup_non_uniform_arithmetic"))
        return;
    // 68 sub-group boundaries under a work-item-dependent branch: more regions than the CPU
    // device's dispatcher once kept as bits of one 64-bit word.
    std::string src = "kernel void many(global const int* in, global int* out) {\n"
                      "    size_t i = get_global_id(0);\n"
                      "    int x = in[i];\n"
                      "    uint a = ~0u;\n"
                      "    if (get_local_id(0) % 4 != 2) {\n"
                      "        a = 0;\n";
    for (int j = 0; j < 34; ++j)
        src += "        a = a * 3u + (uint)sub_group_non_uniform_reduce_add(x + " +
               std::to_string(j) + ");\n";
    src += "    }\n    out[i] = (int)a;\n}\n";
    Program prog(src, "-cl-std=CL3.0");
    cl_kernel k = prog.kernel("many");
    const size_t n = 256, local = 64;
    std::vector<int> in(n);
    Rng rng(31);
    for (int& v : in)
        v = int(rng.next() % 100) - 50;
    const std::vector<int> out = runInOut(k, in, local);
    const size_t width = subGroupQuery(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {local});
    for (size_t b = 0; b < n; b += std::min(width, local)) {
        const size_t s = std::min(width, local - b % local);
        int sum = 0, count = 0;
        for (size_t j = 0; j < s; ++j)
            if ((b + j) % local % 4 != 2) {
                sum += in[b + j];
                ++count;
            }
        uint32_t a = 0; // the kernel's int arithmetic, wrapping
        for (int j = 0; j < 34; ++j)
            a = a * 3u + uint32_t(sum + count * j);
        for (size_t j = 0; j < s; ++j) {
            INFO("work-item " << b + j);
            REQUIRE(out[b + j] == ((b + j) % local % 4 != 2 ? int(a) : -1));
        }
    }
}

TEST_CASE("a vector kernel argument indexed per work-item", "[kernels][sub_group]") {
    // LLVM 19's AMDGPU backend read v[i] with a varying i as one load at the first lane's i
    // (runtime/devices/gcn/codegen/finalize.cpp works around it); every device must get it
    // right.
    Program prog("kernel void k(global int* out, uint4 v) {\n"
                 "    size_t i = get_global_id(0);\n"
                 "    out[i] = v[get_local_id(0) % 64 > 31] + v[(get_local_id(0) >> 2) & 3];\n"
                 "}\n");
    cl_kernel k = prog.kernel("k");
    const size_t n = 256, local = 128;
    Buffer bout(n * sizeof(int));
    const cl_uint4 v = {{1, 10, 100, 1000}};
    setArgs(k, bout, v);
    REQUIRE_CL(clEnqueueNDRangeKernel(KernelEnv::get().queue, k, 1, nullptr, &n, &local, 0, nullptr,
                                      nullptr));
    REQUIRE_CL(clFinish(KernelEnv::get().queue));
    const std::vector<int> out = bout.read<int>(n);
    for (size_t i = 0; i < n; ++i) {
        const size_t l = i % local;
        INFO("work-item " << i);
        REQUIRE(out[i] == int(v.s[l % 64 > 31] + v.s[(l >> 2) & 3]));
    }
}

namespace {

/// Whether CL_DEVICE_OPENCL_C_ALL_VERSIONS lists OpenCL C `major`.`minor`.
bool listsOpenClC(cl_uint major, cl_uint minor) {
    KernelEnv& env = KernelEnv::get();
    size_t size = 0;
    REQUIRE_CL(clGetDeviceInfo(env.device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, 0, nullptr, &size));
    std::vector<cl_name_version> versions(size / sizeof(cl_name_version));
    REQUIRE_CL(clGetDeviceInfo(env.device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, size, versions.data(),
                               nullptr));
    return std::any_of(versions.begin(), versions.end(), [&](const cl_name_version& v) {
        return CL_VERSION_MAJOR(v.version) == major && CL_VERSION_MINOR(v.version) == minor;
    });
}

/// Builds `source` with `options` without failing the test: the status and the log.
std::pair<cl_int, std::string> tryBuild(const std::string& source, const std::string& options) {
    KernelEnv& env = KernelEnv::get();
    const char* text = source.c_str();
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(env.context, 1, &text, nullptr, &err);
    REQUIRE_CL(err);
    const cl_int built = clBuildProgram(p, 1, &env.device, options.c_str(), nullptr, nullptr);
    std::string log = buildLog(p, env.device);
    clReleaseProgram(p);
    return {built, log};
}

/// Whether the device has sub-groups that make independent forward progress.
bool forwardProgress() {
    cl_bool ifp = CL_FALSE;
    REQUIRE_CL(clGetDeviceInfo(KernelEnv::get().device,
                               CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS, sizeof ifp, &ifp,
                               nullptr));
    return maxNumSubGroups() > 0 && ifp;
}

} // namespace

TEST_CASE("sub-groups make independent forward progress where the device says so",
          "[kernels][sub_group][ifp]") {
    KernelEnv& env = KernelEnv::get();
    if (!forwardProgress()) {
        WARN("no independent forward progress of sub-groups on this device");
        return;
    }
    // Sub-group s first spins on a __global flag that sub-group s + 1 sets after a loop of its
    // own, so the last sub-group must run first; then on a __local flag that s - 1 sets, the
    // other way round. Each sub-group's first work-item takes a ticket after each wait. Without
    // progress guarantees the first wait never ends: DUET_KERNEL_TIMEOUT stops it on Duet's
    // devices, and the event fails instead of the test hanging.
    const std::string source = R"CLC(
#define MAX_SG 64
kernel void chain(global atomic_uint* flags, global uint* tickets, global atomic_uint* counters,
                  global uint* out, uint iters) {
    local atomic_uint lflags[MAX_SG];
    const uint s = get_sub_group_id(), n = get_num_sub_groups(), g = get_group_id(0);
    const uint lid = get_local_id(0);
    if (lid < MAX_SG)
        atomic_store_explicit(&lflags[lid], 0u, memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    global atomic_uint* gflags = flags + g * n;
    global atomic_uint* counter = counters + g;
    const bool first = get_sub_group_local_id() == 0;
    if (s + 1 < n)
        while (atomic_load_explicit(&gflags[s + 1], memory_order_acquire,
                                    memory_scope_work_group) == 0u) { }
    if (first)
        tickets[g * 2 * n + s] = atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed,
                                                           memory_scope_work_group);
    uint x = get_global_id(0);
    for (uint i = 0; i < iters; ++i)
        x = x * 1664525u + 1013904223u;
    out[get_global_id(0)] = x;
    atomic_store_explicit(&gflags[s], 1u, memory_order_release, memory_scope_work_group);
    if (s > 0)
        while (atomic_load_explicit(&lflags[s - 1], memory_order_acquire,
                                    memory_scope_work_group) == 0u) { }
    if (first)
        tickets[g * 2 * n + n + s] = atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed,
                                                               memory_scope_work_group);
    atomic_store_explicit(&lflags[s], 1u, memory_order_release, memory_scope_work_group);
}
)CLC";
    size_t maxLocal = 0;
    REQUIRE_CL(clGetDeviceInfo(env.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxLocal,
                               &maxLocal, nullptr));
    ScopedEnv timeout("DUET_KERNEL_TIMEOUT", "30");
    Program prog(source, "-cl-std=CL3.0");
    cl_kernel k = prog.kernel("chain");
    size_t kernelMax = 0;
    REQUIRE_CL(clGetKernelWorkGroupInfo(k, env.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernelMax,
                                        &kernelMax, nullptr));
    const size_t local = std::min<size_t>({maxLocal, kernelMax, 256});
    const size_t width = subGroupQuery(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {local});
    const size_t n = subGroupQuery(k, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, {local});
    if (n < 2 || n > 64) {
        WARN("a group of " << local << " work-items has " << n << " sub-groups of up to " << width
                           << ": nothing to wait for");
        return;
    }
    const size_t groups = 4, global = groups * local;
    const cl_uint iters = 3000; // a few thousand instructions: several of the model's time slices
    Buffer flags(std::vector<cl_uint>(groups * n, 0)), counters(std::vector<cl_uint>(groups, 0));
    Buffer tickets(std::vector<cl_uint>(groups * 2 * n, ~0u)), out(global * sizeof(cl_uint));
    setArgs(k, flags, tickets, counters, out, iters);
    cl_event ev = nullptr;
    REQUIRE_CL(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &global, &local, 0, nullptr, &ev));
    const cl_int waited = clWaitForEvents(1, &ev); // a stopped kernel fails the wait
    cl_int status = CL_QUEUED;
    REQUIRE_CL(
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr));
    clReleaseEvent(ev);
    REQUIRE(status == CL_COMPLETE);
    REQUIRE(waited == CL_SUCCESS);
    const std::vector<cl_uint> t = tickets.read<cl_uint>(groups * 2 * n);
    for (size_t g = 0; g < groups; ++g)
        for (size_t s = 0; s < n; ++s) {
            INFO("group " << g << ", sub-group " << s << " of " << n);
            CHECK(t[g * 2 * n + s] == n - 1 - s);
            CHECK(t[g * 2 * n + n + s] == n + s);
        }
    const std::vector<cl_uint> o = out.read<cl_uint>(global);
    for (size_t i = 0; i < global; ++i) {
        cl_uint x = cl_uint(i);
        for (cl_uint j = 0; j < iters; ++j)
            x = x * 1664525u + 1013904223u;
        INFO("work-item " << i);
        REQUIRE(o[i] == x);
    }
}

TEST_CASE("a lock and compare-exchange loops between sub-groups", "[kernels][sub_group][ifp]") {
    KernelEnv& env = KernelEnv::get();
    if (!forwardProgress()) {
        WARN("no independent forward progress of sub-groups on this device");
        return;
    }
    // Each sub-group's first work-item takes a __local lock by exchange, holding it across a
    // sub-group barrier while it adds to plain __local counters, and every work-item adds its
    // value to a __local float by a compare-exchange loop; the group's barriers around both.
    // Groups are 2D, with a last sub-group that is not full (the CTS's groups of 200).
    const std::string source = R"CLC(
kernel void locked(global const int* in, global int* out, global float* sums) {
    local atomic_int lock;
    local int plain[2];
    local atomic_int fsum;
    const uint lid = get_local_linear_id();
    if (lid == 0) {
        atomic_init(&lock, 0);
        atomic_init(&fsum, as_int(0.0f));
        plain[0] = plain[1] = 0;
    }
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    const int v = in[get_global_linear_id()];
    const bool leader = get_sub_group_local_id() == 0;
    if (leader)
        while (atomic_exchange_explicit(&lock, 1, memory_order_acquire, memory_scope_work_group))
            ;
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    if (leader) {
        int seen = plain[0];
        for (int i = 0; i < 50; ++i)
            plain[1] += i; // another sub-group inside the lock would break the sum
        plain[0] = seen + (int)get_sub_group_size();
        atomic_store_explicit(&lock, 0, memory_order_release, memory_scope_work_group);
    }
    int expected = atomic_load_explicit(&fsum, memory_order_relaxed, memory_scope_work_group);
    while (!atomic_compare_exchange_weak_explicit(&fsum, &expected,
               as_int(as_float(expected) + (float)v), memory_order_relaxed,
               memory_order_relaxed, memory_scope_work_group))
        ;
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_linear_id()] = plain[0] * 100000 + plain[1];
    if (lid == 0)
        sums[get_group_id(1) * get_num_groups(0) + get_group_id(0)] =
            as_float(atomic_load_explicit(&fsum, memory_order_relaxed, memory_scope_work_group));
}
)CLC";
    ScopedEnv timeout("DUET_KERNEL_TIMEOUT", "30");
    Program prog(source, "-cl-std=CL3.0");
    cl_kernel k = prog.kernel("locked");
    const size_t local[2] = {40, 5}, groups[2] = {3, 2};
    const size_t global[2] = {local[0] * groups[0], local[1] * groups[1]};
    const size_t items = local[0] * local[1], n = global[0] * global[1];
    const size_t subGroups =
        subGroupQuery(k, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, {local[0], local[1]});
    std::vector<int> in(n);
    for (size_t i = 0; i < n; ++i)
        in[i] = int(i * 37 % 1000); // small integers: every float sum is exact
    Buffer bin(in), bout(n * sizeof(int)), bsums(groups[0] * groups[1] * sizeof(float));
    setArgs(k, bin, bout, bsums);
    cl_event ev = nullptr;
    REQUIRE_CL(clEnqueueNDRangeKernel(env.queue, k, 2, nullptr, global, local, 0, nullptr, &ev));
    const cl_int waited = clWaitForEvents(1, &ev); // a stopped kernel fails the wait
    clReleaseEvent(ev);
    REQUIRE(waited == CL_SUCCESS);
    const std::vector<int> out = bout.read<int>(n);
    for (size_t i = 0; i < n; ++i) {
        INFO("work-item " << i << ", " << subGroups << " sub-groups a group");
        REQUIRE(out[i] == int(items) * 100000 + int(subGroups) * (49 * 50 / 2));
    }
    const std::vector<float> sums = bsums.read<float>(groups[0] * groups[1]);
    for (size_t gy = 0; gy < groups[1]; ++gy)
        for (size_t gx = 0; gx < groups[0]; ++gx) {
            double want = 0;
            for (size_t y = 0; y < local[1]; ++y)
                for (size_t x = 0; x < local[0]; ++x)
                    want += in[(gy * local[1] + y) * global[0] + gx * local[0] + x];
            INFO("group " << gx << ", " << gy);
            CHECK(sums[gy * groups[0] + gx] == float(want));
        }
}

TEST_CASE("cl_khr_subgroups: macro, pragma and OpenCL C 2.0 follow CL_DEVICE_EXTENSIONS",
          "[kernels][sub_group]") {
    KernelEnv& env = KernelEnv::get();
    const bool listed = env.hasExtension("cl_khr_subgroups");
    if (listed) {
        // The extension requires sub-groups and their independent forward progress.
        cl_bool ifp = CL_FALSE;
        REQUIRE_CL(clGetDeviceInfo(env.device, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
                                   sizeof ifp, &ifp, nullptr));
        CHECK(ifp == CL_TRUE);
        CHECK(maxNumSubGroups() > 0);
    }
    // The macro, in OpenCL C 3.0 (clang defines it from 2.0 on).
    Program macro(std::string(listed ? "#ifndef" : "#ifdef") +
                      " cl_khr_subgroups\n#error the macro disagrees with CL_DEVICE_EXTENSIONS\n"
                      "#endif\nkernel void k(global int* p) { *p = 1; }\n",
                  "-cl-std=CL3.0");
    CHECK(macro.kernel("k"));
    // The pragma: accepted where listed, a warning that says so where not.
    const std::string source = R"CLC(
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
kernel void rev(global const int* in, global int* out) {
    local int tmp[256];
    size_t gid = get_global_id(0);
    uint lid = get_sub_group_local_id(), n = get_sub_group_size();
    tmp[get_local_id(0)] = in[gid];
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    out[gid] = tmp[get_local_id(0) - lid + n - 1 - lid] * 1000 + (int)get_sub_group_id();
}
)CLC";
    auto run = [&](const std::string& options) {
        Program prog(source, options);
        cl_kernel k = prog.kernel("rev");
        const size_t n = 512, local = 128;
        std::vector<int> in(n);
        for (size_t i = 0; i < n; ++i)
            in[i] = int(i * 7 % 101);
        const std::vector<int> out = runInOut(k, in, local);
        const size_t width = subGroupQuery(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {local});
        for (size_t i = 0; i < n; ++i) {
            const size_t l = i % local, s = l / width, b = i - l + s * width;
            const size_t size = std::min(width, local - s * width);
            INFO(options << ", work-item " << i);
            REQUIRE(out[i] == in[b + size - 1 - (l - s * width)] * 1000 + int(s));
        }
    };
    const auto [built30, log30] = tryBuild(source, "-cl-std=CL3.0");
    INFO(log30);
    CHECK((log30.find("unsupported OpenCL extension 'cl_khr_subgroups'") == std::string::npos) ==
          listed);
    // OpenCL C 3.0 declares the functions with __opencl_c_subgroups, pragma or not.
    CHECK((built30 == CL_SUCCESS) == (maxNumSubGroups() > 0));
    if (maxNumSubGroups() > 0)
        run("-cl-std=CL3.0");
    // OpenCL C 2.0 has sub-groups only through the extension.
    const auto [built20, log20] = tryBuild(source, "-cl-std=CL2.0");
    INFO(log20);
    if (!listsOpenClC(2, 0)) {
        // §5.8.6.5: -cl-std names a version the device does not list.
        CHECK(built20 == CL_BUILD_PROGRAM_FAILURE);
        CHECK(log20.find("-cl-std=CL2.0") != std::string::npos);
    } else if (listed) {
        CHECK(built20 == CL_SUCCESS);
        CHECK(log20.find("unsupported OpenCL extension") == std::string::npos);
        run("-cl-std=CL2.0");
    } else {
        CHECK(built20 == CL_BUILD_PROGRAM_FAILURE);
        CHECK(log20.find("unsupported OpenCL extension 'cl_khr_subgroups'") != std::string::npos);
        CHECK(log20.find("get_sub_group_size") != std::string::npos);
    }
}
