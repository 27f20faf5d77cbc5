// Work-group collective functions (work_group_all/any/broadcast/reduce_*/scan_*) against host
// results, for every type the device supports, over 1D/2D/3D shapes with partial last groups;
// and the feature's queries and macro where the device does not support it.
#include "collective_reference.hpp"
#include "kernel_harness.hpp"
#include "support/cl_test.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace duet::test;

namespace {

bool collectivesSupported() {
    cl_bool on = CL_FALSE;
    REQUIRE_CL(clGetDeviceInfo(KernelEnv::get().device,
                               CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT, sizeof on, &on,
                               nullptr));
    return on == CL_TRUE;
}

/// Per work-item outputs, in this order.
enum Out {
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

/// The collectives; `dims` (uniform: a kernel argument) picks the broadcast's form.
std::string source(const char* type) {
    std::string s = "#define T " + std::string(type) + "\n";
    if (std::string(type) == "double")
        s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    s += R"CLC(
kernel void wg(global const T* in, global T* out, uint dims) {
    size_t gid = get_global_id(0) +
                 get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
    T x = in[gid];
    global T* o = out + 12 * gid;
    o[0] = work_group_reduce_add(x);
    o[1] = work_group_reduce_min(x);
    o[2] = work_group_reduce_max(x);
    o[3] = work_group_scan_inclusive_add(x);
    o[4] = work_group_scan_inclusive_min(x);
    o[5] = work_group_scan_inclusive_max(x);
    o[6] = work_group_scan_exclusive_add(x);
    o[7] = work_group_scan_exclusive_min(x);
    o[8] = work_group_scan_exclusive_max(x);
    if (dims == 1)
        o[9] = work_group_broadcast(x, get_local_size(0) - 1);
    else if (dims == 2)
        o[9] = work_group_broadcast(x, get_local_size(0) - 1, get_local_size(1) / 2);
    else
        o[9] = work_group_broadcast(x, get_local_size(0) - 1, get_local_size(1) / 2,
                                    get_local_size(2) - 1);
    o[10] = (T)work_group_all(x != (T)0);
    o[11] = (T)work_group_any(x != (T)0);
}
)CLC";
    return s;
}

/// Runs the kernel for `T` over `shape` and checks every output against the host.
template <class T> void check(Program& prog, const char* type, const Shape& shape, Rng& rng) {
    const size_t gx = shape.global[0], gy = shape.global[1], gz = shape.global[2];
    const size_t n = gx * gy * gz;
    const std::array<size_t, 3> groups = shape.groups();
    // Small integers (exact in float whatever order the sums take); every third group all
    // non-zero, every third all zero, the rest mixed, for all/any.
    std::vector<T> in(n);
    for (size_t z = 0; z < gz; ++z)
        for (size_t y = 0; y < gy; ++y)
            for (size_t x = 0; x < gx; ++x) {
                const size_t g =
                    x / shape.local[0] +
                    groups[0] * (y / shape.local[1] + groups[1] * (z / shape.local[2]));
                long v = long(rng.next() % 17) - (std::numeric_limits<T>::is_signed ? 8 : 0);
                if (g % 3 == 0 && v == 0)
                    v = 5;
                if (g % 3 == 1)
                    v = 0;
                in[x + gx * (y + gy * z)] = T(v);
            }

    cl_kernel k = prog.kernel("wg");
    Buffer bin(in), bout(n * kOuts * sizeof(T));
    setArgs(k, bin, bout, cl_uint(shape.dims));
    REQUIRE_CL(clEnqueueNDRangeKernel(KernelEnv::get().queue, k, shape.dims, nullptr,
                                      shape.global.data(), shape.local.data(), 0, nullptr,
                                      nullptr));
    REQUIRE_CL(clFinish(KernelEnv::get().queue));
    const std::vector<T> out = bout.read<T>(n * kOuts);

    size_t checked = 0;
    for (size_t g = 0; g < shape.groupCount(); ++g) {
        const Group group(shape, g);
        Totals<T> total, run;
        for (size_t i : group.items)
            total.add(in[i]);
        const size_t bx = group.size[0] - 1, by = shape.dims >= 2 ? group.size[1] / 2 : 0,
                     bz = shape.dims == 3 ? group.size[2] - 1 : 0;
        const T broadcast = in[group.index(bx, by, bz, shape)];
        for (size_t j = 0; j < group.items.size(); ++j) {
            const size_t i = group.items[j];
            T o[kOuts];
            std::copy_n(&out[i * kOuts], kOuts, o);
            o[kAll] = T(o[kAll] != T(0)); // "non-zero" when true
            o[kAny] = T(o[kAny] != T(0));
            T want[kOuts];
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
            want[kBroadcast] = broadcast;
            want[kAll] = T(total.all);
            want[kAny] = T(total.any);
            ++checked;
            if (std::equal(want, want + kOuts, o))
                continue;
            INFO(type << " " << shape.dims << "D global " << gx << "x" << gy << "x" << gz
                      << " local " << shape.local[0] << "x" << shape.local[1] << "x"
                      << shape.local[2] << ", group " << g << ", local linear id " << j);
            for (int w = 0; w < kOuts; ++w) {
                INFO("output " << w);
                CHECK(o[w] == want[w]);
            }
            return; // one wrong work-item is enough to read
        }
    }
    CHECK(checked == n); // every work-item's outputs were compared
}

template <class T> void checkShapes(const char* type) {
    Rng rng(0x5eed + sizeof(T));
    Program prog(source(type), KernelEnv::get().clStd20);
    size_t most = 0; // the largest group this kernel takes on the device
    REQUIRE_CL(clGetKernelWorkGroupInfo(prog.kernel("wg"), KernelEnv::get().device,
                                        CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, nullptr));
    const size_t large = std::min<size_t>(1024, most); // 32 warps on NVIDIA
    const Shape shapes[] = {
        {1, {1000, 1, 1}, {64, 1, 1}}, // 15 full groups and one of 40
        {1, {50, 1, 1}, {7, 1, 1}},    // odd sizes, a last group of 1
        {1, {300, 1, 1}, {1, 1, 1}},   // single-item groups
        // Large groups; the last holds 7/8 of one less 3 (several wave64s and a partial one).
        {1, {3 * large + large - large / 8 - 3, 1, 1}, {large, 1, 1}},
        {2, {37, 11, 1}, {8, 4, 1}},  // partial in both dimensions
        {2, {40, 20, 1}, {16, 8, 1}}, // two wave64s per full group, partial ones of 64 and 32
        {3, {9, 7, 5}, {4, 3, 2}},    // partial in all three
    };
    for (const Shape& s : shapes)
        check<T>(prog, type, s, rng);
}

} // namespace

TEST_CASE("work-group collective functions match the host", "[kernels][work_group]") {
    if (!collectivesSupported()) {
        WARN("CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT is CL_FALSE on this device");
        return;
    }
    REQUIRE(!KernelEnv::get().clStd20.empty());
    checkShapes<cl_int>("int");
    checkShapes<cl_uint>("uint");
    checkShapes<cl_long>("long");
    checkShapes<cl_ulong>("ulong");
    checkShapes<cl_float>("float");
    if (KernelEnv::get().fp64)
        checkShapes<cl_double>("double");
}

TEST_CASE("collectives in a loop and after divergent code reuse the scratch safely",
          "[kernels][work_group]") {
    if (!collectivesSupported())
        return;
    // Back-to-back collectives of different types, in a uniform loop, with private state
    // that lives across them.
    Program prog(R"CLC(
kernel void k(global const int* in, global long* out, int rounds) {
    size_t i = get_global_id(0);
    int x = in[i];
    long acc = 0;
    for (int r = 0; r < rounds; ++r) {
        int s = work_group_scan_inclusive_add(x);
        long m = work_group_reduce_max((long)s);
        float f = work_group_broadcast((float)x, (size_t)r % get_local_size(0));
        acc += m + (long)f;
        x = (x * 7 + r) % 13;
    }
    out[i] = acc;
}
)CLC",
                 KernelEnv::get().clStd20);
    cl_kernel k = prog.kernel("k");
    const size_t n = 777, local = 100;
    std::vector<int> in(n);
    Rng rng(3);
    for (int& v : in)
        v = int(rng.next() % 13);
    Buffer bin(in), bout(n * sizeof(cl_long));
    const int rounds = 5;
    setArgs(k, bin, bout, rounds);
    REQUIRE_CL(clEnqueueNDRangeKernel(KernelEnv::get().queue, k, 1, nullptr, &n, &local, 0, nullptr,
                                      nullptr));
    REQUIRE_CL(clFinish(KernelEnv::get().queue));
    std::vector<cl_long> out = bout.read<cl_long>(n);
    for (size_t g0 = 0; g0 < n; g0 += local) {
        const size_t size = std::min(local, n - g0);
        std::vector<int> x(in.begin() + g0, in.begin() + g0 + size);
        long acc = 0;
        for (int r = 0; r < rounds; ++r) {
            long run = 0, m = std::numeric_limits<long>::min();
            for (int v : x)
                m = std::max(m, run += v);
            acc += m + x[size_t(r) % size];
            for (int& v : x)
                v = (v * 7 + r) % 13;
        }
        for (size_t j = 0; j < size; ++j) {
            INFO("work-item " << g0 + j);
            REQUIRE(out[g0 + j] == acc);
        }
    }
}

TEST_CASE("work-group collectives are reported truthfully", "[kernels][work_group]") {
    KernelEnv& env = KernelEnv::get();
    size_t size = 0;
    REQUIRE_CL(clGetDeviceInfo(env.device, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &size));
    std::vector<cl_name_version> features(size / sizeof(cl_name_version));
    REQUIRE_CL(
        clGetDeviceInfo(env.device, CL_DEVICE_OPENCL_C_FEATURES, size, features.data(), nullptr));
    const bool listed = std::any_of(features.begin(), features.end(), [](const cl_name_version& f) {
        return std::string(f.name) == "__opencl_c_work_group_collective_functions";
    });
    CHECK(listed == collectivesSupported());
    // The feature macro follows the query in OpenCL C 3.0.
    Program prog(std::string(collectivesSupported() ? "#ifndef" : "#ifdef") +
                     " __opencl_c_work_group_collective_functions\n#error the macro disagrees "
                     "with CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT\n#endif\n"
                     "kernel void k(global int* p) { *p = 1; }\n",
                 "-cl-std=CL3.0");
    CHECK(prog.kernel("k"));
}
