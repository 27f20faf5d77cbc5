// The NVIDIA device through the OpenCL API (ICD loader), without a GPU. [no-driver]: with
// DUET_DEVICES=nvidia and no CUDA driver library, the platform has no device and says so with
// the spec's code. [fake-driver]: with tests/devices/nvidia/fake_cuda.cpp as the driver, the
// device info of what the driver reports, programs built to PTX through clBuildProgram, binaries,
// and launches: the fake records each cuLaunchKernel (grid, block, dynamic shared memory, the
// parameters' bytes) so that the kernel ABI's marshalling is checked without a GPU; buffers and
// images in managed memory, image descriptors and sampler bits, USE_HOST_PTR registration, JIT
// failures; printf, with the test playing the kernel's part (records written into the launch's
// printf buffer at cuLaunchKernel).
#include "fake_cuda.hpp"
#include "support/capture.hpp"
#include "support/cl_test.hpp"
#include "support/scoped_env.hpp"

#include <CL/cl_ext.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace duet::test;

namespace {

template <class T> T deviceValue(cl_device_id d, cl_device_info what) {
    T v{};
    REQUIRE_CL(clGetDeviceInfo(d, what, sizeof v, &v, nullptr));
    return v;
}

std::vector<cl_device_id> devices(cl_device_type type, cl_int& status) {
    cl_uint n = 0;
    status = clGetDeviceIDs(platformUnderTest(), type, 0, nullptr, &n);
    std::vector<cl_device_id> out(n);
    if (status == CL_SUCCESS && n)
        REQUIRE_CL(clGetDeviceIDs(platformUnderTest(), type, n, out.data(), nullptr));
    return out;
}

constexpr const char* kNbody = R"CL(
__kernel void nbody(__global const float4* pos, __global float4* acc, __local float4* tile,
                    float eps2) {
    size_t i = get_global_id(0), l = get_local_id(0), n = get_global_size(0);
    float4 p = pos[i];
    float3 a = (float3)(0.0f);
    for (size_t t = 0; t < n; t += get_local_size(0)) {
        tile[l] = pos[t + l];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (size_t j = 0; j < get_local_size(0); ++j) {
            float3 d = tile[j].xyz - p.xyz;
            float inv = rsqrt(dot(d, d) + eps2);
            a += d * (tile[j].w * inv * inv * inv);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc[i] = (float4)(a, 0.0f);
}
)CL";

/// kNbody built for the H100 in a context of its own, with its arguments set: `pos` and `acc`
/// (1024 float4 each), 256 float4 of __local, eps2.
struct NbodyOnH100 {
    cl_device_id dev = nullptr;
    cl_context ctx = nullptr;
    cl_program program = nullptr;
    cl_kernel kernel = nullptr;
    cl_mem pos = nullptr, acc = nullptr;
    static constexpr size_t kBytes = 1024 * 16;

    explicit NbodyOnH100(cl_device_id device) : dev(device) {
        cl_int err = CL_SUCCESS;
        ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        program = buildProgram(ctx, dev, kNbody, "");
        kernel = clCreateKernel(program, "nbody", &err);
        REQUIRE(err == CL_SUCCESS);
        for (cl_mem* m : {&pos, &acc}) {
            *m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, kBytes, nullptr, &err);
            REQUIRE(err == CL_SUCCESS);
        }
        const float eps2 = 0.01f;
        REQUIRE(clSetKernelArg(kernel, 0, sizeof pos, &pos) == CL_SUCCESS);
        REQUIRE(clSetKernelArg(kernel, 1, sizeof acc, &acc) == CL_SUCCESS);
        REQUIRE(clSetKernelArg(kernel, 2, 256 * 16, nullptr) == CL_SUCCESS);
        REQUIRE(clSetKernelArg(kernel, 3, sizeof eps2, &eps2) == CL_SUCCESS);
    }
    ~NbodyOnH100() {
        clReleaseMemObject(pos);
        clReleaseMemObject(acc);
        clReleaseKernel(kernel);
        clReleaseProgram(program);
        clReleaseContext(ctx);
    }
    cl_command_queue queue(const cl_queue_properties* properties = nullptr) const {
        cl_int err = CL_SUCCESS;
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, properties, &err);
        REQUIRE(err == CL_SUCCESS);
        return q;
    }
};

/// The fake driver the runtime loaded (same path: the same library), and its test entry points.
struct Fake {
    void* handle = nullptr;
    template <class Fn> Fn get(const char* name) {
        return reinterpret_cast<Fn>(dlsym(handle, name));
    }
    Fake() {
        const char* path = std::getenv("DUET_CUDA_LIBRARY");
        REQUIRE(path);
        handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        REQUIRE(handle); // the platform (devices()) loaded it first
        launchCount = get<DuetFakeLaunchCountFn>("duetFakeLaunchCount");
        launchAt = get<DuetFakeLaunchAtFn>("duetFakeLaunchAt");
        calls = get<DuetFakeCallsFn>("duetFakeCalls");
        fail = get<DuetFakeFailFn>("duetFakeFail");
        reset = get<DuetFakeResetFn>("duetFakeReset");
        funcAttribute = get<DuetFakeFuncAttributeFn>("duetFakeFuncAttribute");
        setFuncAttribute = get<DuetFakeSetFuncAttributeFn>("duetFakeSetFuncAttribute");
        onLaunch = get<DuetFakeOnLaunchFn>("duetFakeOnLaunch");
        liveTextures = get<DuetFakeLiveTexturesFn>("duetFakeLiveTextures");
        texture = get<DuetFakeTextureFn>("duetFakeTexture");
        REQUIRE((launchCount && launchAt && calls && fail && reset && funcAttribute &&
                 setFuncAttribute && onLaunch && liveTextures && texture));
        reset();
    }
    /// What hookLaunches() returns: the hook stays until it ends.
    struct Hooked {
        Fake& fake;
        ~Hooked() { fake.onLaunch(nullptr, nullptr); }
    };
    /// Calls `hook` with `user` at each launch for as long as the result lives, so that no hook
    /// outlives what it writes to, even when a REQUIRE ends the test early.
    [[nodiscard]] Hooked hookLaunches(DuetFakeLaunchHook hook, void* user) {
        onLaunch(hook, user);
        return Hooked{*this};
    }
    DuetFakeLaunchCountFn launchCount;
    DuetFakeLaunchAtFn launchAt;
    DuetFakeCallsFn calls;
    DuetFakeFailFn fail;
    DuetFakeResetFn reset;
    DuetFakeFuncAttributeFn funcAttribute;
    DuetFakeSetFuncAttributeFn setFuncAttribute;
    DuetFakeOnLaunchFn onLaunch;
    DuetFakeLiveTexturesFn liveTextures;
    DuetFakeTextureFn texture;
};

// CUfunction_attribute values (devices/nvidia/cuda_driver.hpp).
constexpr int kFuncMaxThreads = 0, kFuncSharedSize = 1, kFuncLocalSize = 3,
              kFuncMaxDynamicShared = 8;

template <class T> T workGroupInfo(cl_kernel k, cl_device_id d, cl_kernel_work_group_info what) {
    T v{};
    REQUIRE_CL(clGetKernelWorkGroupInfo(k, d, what, sizeof v, &v, nullptr));
    return v;
}

template <class T> T paramAs(const DuetFakeLaunch& l, unsigned i) {
    T v{};
    REQUIRE(l.paramBytes[i] == sizeof v);
    std::memcpy(&v, l.param[i], sizeof v);
    return v;
}

/// Launch block fields (devices/nvidia/codegen/ptx_module.hpp, LaunchBlock).
struct Block {
    uint64_t globalOffset[3], globalSize[3];
    uint32_t enqueuedLocalSize[3], groupOffset[3], numGroups[3], workDim;
    uint64_t printfBuffer;
};
static_assert(sizeof(Block) == 96);

/// Messages the context's notification callback got (from any thread).
struct Notes {
    std::mutex mutex;
    std::string text;
    static void CL_CALLBACK add(const char* message, const void*, size_t, void* self) {
        auto* n = static_cast<Notes*>(self);
        std::lock_guard lock(n->mutex);
        n->text += std::string(message) + "\n";
    }
    std::string get() {
        std::lock_guard lock(mutex);
        return text;
    }
};

cl_device_id h100() {
    cl_int status = CL_SUCCESS;
    std::vector<cl_device_id> gpus = devices(CL_DEVICE_TYPE_GPU, status);
    REQUIRE(gpus.size() == 2);
    return gpus[0];
}

/// A context on the H100 whose notify callback collects `notes`, released at the end of the
/// scope; queue() makes in-order queues on it (the caller releases them).
struct H100Context {
    cl_device_id dev = h100();
    Notes notes;
    cl_context ctx = nullptr;
    H100Context() {
        cl_int err = CL_SUCCESS;
        ctx = clCreateContext(nullptr, 1, &dev, &Notes::add, &notes, &err);
        REQUIRE(err == CL_SUCCESS);
    }
    ~H100Context() { clReleaseContext(ctx); }
    H100Context(const H100Context&) = delete;
    cl_command_queue queue() const {
        cl_int err = CL_SUCCESS;
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        return q;
    }
};

/// An event's CL_EVENT_COMMAND_EXECUTION_STATUS.
cl_int eventStatus(cl_event ev) {
    cl_int s = CL_COMPLETE;
    REQUIRE_CL(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr));
    return s;
}

} // namespace

TEST_CASE("without a CUDA driver, DUET_DEVICES=nvidia gives no device", "[nvidia][no-driver]") {
    cl_int status = CL_SUCCESS;
    std::vector<cl_device_id> all = devices(CL_DEVICE_TYPE_ALL, status);
    CHECK(status == CL_DEVICE_NOT_FOUND);
    CHECK(all.empty());
    devices(CL_DEVICE_TYPE_GPU, status);
    CHECK(status == CL_DEVICE_NOT_FOUND);
    // The platform itself is fine.
    CHECK(platformString(platformUnderTest(), CL_PLATFORM_NAME).find("Duet") != std::string::npos);
    cl_int err = CL_SUCCESS;
    cl_context_properties cp[] = {CL_CONTEXT_PLATFORM, cl_context_properties(platformUnderTest()),
                                  0};
    cl_context ctx = clCreateContextFromType(cp, CL_DEVICE_TYPE_GPU, nullptr, nullptr, &err);
    CHECK(ctx == nullptr);
    CHECK(err == CL_DEVICE_NOT_FOUND);
}

TEST_CASE("a driver's GPUs become devices with what the driver reports", "[nvidia][fake-driver]") {
    cl_int status = CL_SUCCESS;
    std::vector<cl_device_id> gpus = devices(CL_DEVICE_TYPE_GPU, status);
    REQUIRE(status == CL_SUCCESS);
    REQUIRE(gpus.size() == 2);
    cl_device_id h100 = gpus[0], kepler = gpus[1];

    CHECK(deviceString(h100, CL_DEVICE_NAME) == "NVIDIA H100 80GB HBM3 (fake)");
    CHECK(deviceString(h100, CL_DEVICE_VENDOR) == "NVIDIA Corporation");
    CHECK(deviceValue<cl_uint>(h100, CL_DEVICE_VENDOR_ID) == 0x10de);
    CHECK(deviceValue<cl_device_type>(h100, CL_DEVICE_TYPE) == CL_DEVICE_TYPE_GPU);
    CHECK(deviceValue<cl_bool>(h100, CL_DEVICE_AVAILABLE) == CL_TRUE);
    CHECK(deviceValue<cl_uint>(h100, CL_DEVICE_MAX_COMPUTE_UNITS) == 132);
    CHECK(deviceValue<cl_uint>(h100, CL_DEVICE_MAX_CLOCK_FREQUENCY) == 1980);
    CHECK(deviceValue<size_t>(h100, CL_DEVICE_MAX_WORK_GROUP_SIZE) == 1024);
    size_t sizes[3] = {};
    REQUIRE_CL(clGetDeviceInfo(h100, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, nullptr));
    CHECK(sizes[0] == 1024);
    CHECK(sizes[2] == 64);
    CHECK(deviceValue<cl_ulong>(h100, CL_DEVICE_GLOBAL_MEM_SIZE) == 85031714816ull);
    CHECK(deviceValue<cl_ulong>(h100, CL_DEVICE_LOCAL_MEM_SIZE) == 232448);
    CHECK(deviceValue<cl_device_local_mem_type>(h100, CL_DEVICE_LOCAL_MEM_TYPE) == CL_LOCAL);
    CHECK(deviceValue<cl_ulong>(h100, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE) == 52428800);
    CHECK(deviceValue<cl_bool>(h100, CL_DEVICE_ERROR_CORRECTION_SUPPORT) == CL_TRUE);
    CHECK(deviceValue<size_t>(h100, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE) == 32);
    CHECK(deviceString(h100, CL_DEVICE_VERSION).rfind("OpenCL 3.0", 0) == 0);
    const std::string ext = deviceString(h100, CL_DEVICE_EXTENSIONS);
    CHECK(ext.find("cl_khr_fp64") != std::string::npos);
    CHECK(ext.find("cl_khr_int64_base_atomics") != std::string::npos);
    // GL sharing (CUDA-GL interop, or host copies with another vendor's GL), depth images with
    // image support.
    CHECK(ext.find("cl_khr_gl_sharing") != std::string::npos);
    CHECK(ext.find("cl_khr_gl_event") != std::string::npos);
    CHECK(ext.find("cl_khr_gl_depth_images") != std::string::npos);
    size_t bytes = 0;
    REQUIRE_CL(clGetDeviceInfo(h100, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &bytes));
    std::vector<cl_name_version> features(bytes / sizeof(cl_name_version));
    REQUIRE_CL(clGetDeviceInfo(h100, CL_DEVICE_OPENCL_C_FEATURES, bytes, features.data(), nullptr));
    std::string names;
    for (const cl_name_version& f : features)
        names += std::string(f.name) + " ";
    CHECK(names.find("__opencl_c_generic_address_space") != std::string::npos);
    CHECK(names.find("__opencl_c_fp64") != std::string::npos);
    CHECK(deviceValue<cl_bool>(h100, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT) == CL_TRUE);

    // The Kepler board is listed, not available, with the reason in the logs.
    CHECK(deviceString(kepler, CL_DEVICE_NAME) == "Tesla K40m (fake)");
    CHECK(deviceValue<cl_bool>(kepler, CL_DEVICE_AVAILABLE) == CL_FALSE);
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &kepler, nullptr, nullptr, &err);
    CHECK(ctx == nullptr);
    CHECK(err == CL_DEVICE_NOT_AVAILABLE);
}

TEST_CASE("images: every query answered, formats as the CPU and GCN devices",
          "[nvidia][fake-driver][image]") {
    cl_device_id dev = h100();
    CHECK(deviceValue<cl_bool>(dev, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE);
    CHECK(deviceValue<cl_uint>(dev, CL_DEVICE_MAX_READ_IMAGE_ARGS) >= 128);
    CHECK(deviceValue<cl_uint>(dev, CL_DEVICE_MAX_WRITE_IMAGE_ARGS) >= 64);
    CHECK(deviceValue<cl_uint>(dev, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS) >= 64);
    CHECK(deviceValue<cl_uint>(dev, CL_DEVICE_MAX_SAMPLERS) >= 16);
    // Core's sizes (the full profile's minimums or more): the fake H100's texture limits
    // (CUDA's, 131072 x 65536 2D, 16384 3D, 2^28 texels from linear memory) are not stricter.
    CHECK(deviceValue<size_t>(dev, CL_DEVICE_IMAGE2D_MAX_WIDTH) == 16384);
    CHECK(deviceValue<size_t>(dev, CL_DEVICE_IMAGE2D_MAX_HEIGHT) == 16384);
    CHECK(deviceValue<size_t>(dev, CL_DEVICE_IMAGE3D_MAX_WIDTH) == 2048);
    CHECK(deviceValue<size_t>(dev, CL_DEVICE_IMAGE3D_MAX_HEIGHT) == 2048);
    CHECK(deviceValue<size_t>(dev, CL_DEVICE_IMAGE3D_MAX_DEPTH) == 2048);
    CHECK(deviceValue<size_t>(dev, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE) == 65536 * 1024);
    CHECK(deviceValue<size_t>(dev, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE) == 2048);
    CHECK(deviceValue<cl_uint>(dev, CL_DEVICE_IMAGE_PITCH_ALIGNMENT) == 1);
    CHECK(deviceValue<cl_uint>(dev, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT) == 1);
    const std::string ext = deviceString(dev, CL_DEVICE_EXTENSIONS);
    for (const char* e : {"cl_khr_3d_image_writes", "cl_khr_depth_images",
                          "cl_khr_image2d_from_buffer", "cl_khr_srgb_image_writes"})
        CHECK(ext.find(e) != std::string::npos);
    size_t bytes = 0;
    REQUIRE_CL(clGetDeviceInfo(dev, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &bytes));
    std::vector<cl_name_version> features(bytes / sizeof(cl_name_version));
    REQUIRE_CL(clGetDeviceInfo(dev, CL_DEVICE_OPENCL_C_FEATURES, bytes, features.data(), nullptr));
    std::string names;
    for (const cl_name_version& f : features)
        names += std::string(f.name) + " ";
    for (const char* f :
         {"__opencl_c_images ", "__opencl_c_read_write_images ", "__opencl_c_3d_image_writes "})
        CHECK(names.find(f) != std::string::npos);

    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    auto formats = [&](cl_mem_object_type type) {
        cl_uint n = 0;
        REQUIRE_CL(clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, type, 0, nullptr, &n));
        std::vector<cl_image_format> list(n);
        REQUIRE_CL(clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, type, n, list.data(), &n));
        return list;
    };
    auto has = [](const std::vector<cl_image_format>& list, cl_channel_order o, cl_channel_type t) {
        return std::any_of(list.begin(), list.end(), [&](const cl_image_format& f) {
            return f.image_channel_order == o && f.image_channel_data_type == t;
        });
    };
    const std::vector<cl_image_format> two = formats(CL_MEM_OBJECT_IMAGE2D);
    CHECK(has(two, CL_RGBA, CL_UNORM_INT8));
    CHECK(has(two, CL_RGBA, CL_FLOAT));
    CHECK(has(two, CL_BGRA, CL_UNORM_INT8));
    CHECK(has(two, CL_sRGBA, CL_UNORM_INT8));
    CHECK(has(two, CL_DEPTH, CL_FLOAT));
    CHECK(has(two, CL_DEPTH, CL_UNORM_INT16));
    CHECK_FALSE(has(formats(CL_MEM_OBJECT_IMAGE3D), CL_DEPTH, CL_FLOAT));
    clReleaseContext(ctx);
}

/// KernelImageDesc (runtime/core/image.hpp): what an image argument's word points at.
struct ImageDesc {
    char* data;
    uint64_t rowPitch, slicePitch;
    int32_t width, height, depth, arraySize, elementSize, channelOrder, channelType, imageType,
        channels, reserved;
};
static_assert(sizeof(ImageDesc) == 64);

TEST_CASE("image and sampler arguments: descriptors in managed memory, sampler bits; image "
          "commands on managed storage",
          "[nvidia][fake-driver][image]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    cl_program p = buildProgram(on.ctx, on.dev, R"CL(
constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
__kernel void copy(read_only image2d_t src, sampler_t s, write_only image2d_t dst, float k,
                   read_only image3d_t vol) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 c = read_imagef(src, s, p) + read_imagef(src, nearest, p) +
               read_imagef(vol, nearest, (int4)(p, 0, 0));
    write_imagef(dst, p, c * k);
}
)CL",
                                "-cl-std=CL3.0");
    cl_kernel k = clCreateKernel(p, "copy", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_command_queue q = on.queue();
    Fake fake;

    const cl_image_format rgba8{CL_RGBA, CL_UNORM_INT8};
    cl_image_desc d2{};
    d2.image_type = CL_MEM_OBJECT_IMAGE2D;
    d2.image_width = 37;
    d2.image_height = 19;
    cl_mem src = clCreateImage(on.ctx, CL_MEM_READ_WRITE, &rgba8, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem dst = clCreateImage(on.ctx, CL_MEM_READ_WRITE, &rgba8, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_image_desc d3{};
    d3.image_type = CL_MEM_OBJECT_IMAGE3D;
    d3.image_width = d3.image_height = d3.image_depth = 4;
    const cl_image_format r32f{CL_R, CL_FLOAT};
    cl_mem vol = clCreateImage(on.ctx, CL_MEM_READ_ONLY, &r32f, &d3, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(fake.calls("cuMemAllocManaged") == 3); // images live in managed memory too

    // Writes, reads, fills, copies and maps of image regions work on that storage.
    const size_t origin[3] = {0, 0, 0}, region[3] = {37, 19, 1};
    std::vector<unsigned char> texels(37 * 19 * 4), back(texels.size());
    for (size_t i = 0; i < texels.size(); ++i)
        texels[i] = static_cast<unsigned char>(i * 7);
    REQUIRE_CL(clEnqueueWriteImage(q, src, CL_TRUE, origin, region, 0, 0, texels.data(), 0, nullptr,
                                   nullptr));
    REQUIRE_CL(clEnqueueCopyImage(q, src, dst, origin, origin, region, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueReadImage(q, dst, CL_TRUE, origin, region, 0, 0, back.data(), 0, nullptr,
                                  nullptr));
    CHECK(back == texels);
    const float red[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    const size_t at[3] = {3, 2, 0}, box[3] = {2, 2, 1};
    REQUIRE_CL(clEnqueueFillImage(q, dst, red, at, box, 0, nullptr, nullptr));
    size_t rowPitch = 0;
    auto* mapped = static_cast<unsigned char*>(clEnqueueMapImage(q, dst, CL_TRUE, CL_MAP_READ,
                                                                 origin, region, &rowPitch, nullptr,
                                                                 0, nullptr, nullptr, &err));
    REQUIRE(err == CL_SUCCESS);
    CHECK(rowPitch == 160); // 37 * 4 bytes, padded to the texture pitch alignment (32)
    const unsigned char* texel = mapped + 2 * rowPitch + 3 * 4;
    CHECK((texel[0] == 255 && texel[1] == 0 && texel[2] == 0 && texel[3] == 255));
    CHECK(mapped[0] == texels[0]);
    REQUIRE_CL(clEnqueueUnmapMemObject(q, dst, mapped, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    // The image's storage is the managed allocation the map handed out.
    const uintptr_t dstData = reinterpret_cast<uintptr_t>(mapped);

    cl_sampler s = clCreateSampler(on.ctx, CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, &err);
    REQUIRE(err == CL_SUCCESS);
    const float scale = 0.5f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof src, &src));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof s, &s));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof dst, &dst));
    REQUIRE_CL(clSetKernelArg(k, 3, sizeof scale, &scale));
    REQUIRE_CL(clSetKernelArg(k, 4, sizeof vol, &vol));
    fake.reset();
    const size_t global[2] = {37, 19};
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() >= 1);
    // Descriptors go to slots of managed memory (one chunk, kept for later launches), each
    // written on the stream.
    CHECK(fake.calls("cuMemAllocManaged") <= 1);
    CHECK(fake.calls("cuMemcpyAsync") == 3);
    const DuetFakeLaunch& l = *fake.launchAt(0);
    REQUIRE(l.params == 6);
    // The sampler: its CLK_* bits, CLK_NORMALIZED_COORDS_TRUE (1) | CLK_ADDRESS_REPEAT (6) |
    // CLK_FILTER_LINEAR (0x20) as OpenCL C spells them.
    CHECK(paramAs<uint64_t>(l, 1) == 0x27);
    CHECK(paramAs<float>(l, 3) == scale);
    // Each image: the address of its descriptor.
    const auto* srcDesc = reinterpret_cast<const ImageDesc*>(paramAs<uint64_t>(l, 0));
    const auto* dstDesc = reinterpret_cast<const ImageDesc*>(paramAs<uint64_t>(l, 2));
    const auto* volDesc = reinterpret_cast<const ImageDesc*>(paramAs<uint64_t>(l, 4));
    REQUIRE((srcDesc && dstDesc && volDesc));
    CHECK((srcDesc != dstDesc && dstDesc != volDesc && srcDesc != volDesc));
    CHECK(reinterpret_cast<uintptr_t>(dstDesc->data) == dstData);
    CHECK((srcDesc->width == 37 && srcDesc->height == 19 && srcDesc->depth == 1));
    CHECK((srcDesc->rowPitch == 160 && srcDesc->elementSize == 4 && srcDesc->channels == 4));
    CHECK((srcDesc->channelOrder == CL_RGBA && srcDesc->channelType == CL_UNORM_INT8));
    CHECK(srcDesc->imageType == CL_MEM_OBJECT_IMAGE2D);
    CHECK((volDesc->width == 4 && volDesc->height == 4 && volDesc->depth == 4));
    CHECK((volDesc->rowPitch == 32 && volDesc->slicePitch == 32 * 4)); // rows padded to 32
    CHECK(volDesc->channelType == CL_FLOAT);
    CHECK(volDesc->imageType == CL_MEM_OBJECT_IMAGE3D);

    // Launches on the same images read the same slots and write none: launches in flight may
    // still read them. An image read (through textures) and written has a slot for each use.
    fake.reset();
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    CHECK(fake.calls("cuMemcpyAsync") == 0);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof dst, &dst));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof src, &src));
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    CHECK(fake.calls("cuMemcpyAsync") == 2); // dst's read slot, src's write slot
    const uint64_t dstRead = paramAs<uint64_t>(*fake.launchAt(1), 0);
    const uint64_t srcWritten = paramAs<uint64_t>(*fake.launchAt(1), 2);
    CHECK((dstRead != reinterpret_cast<uintptr_t>(dstDesc) &&
           srcWritten != reinterpret_cast<uintptr_t>(srcDesc)));
    fake.reset();
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() >= 2);
    CHECK(fake.calls("cuMemcpyAsync") == 0);
    CHECK(fake.calls("cuMemAllocManaged") == 0);
    for (int i = 0; i < 2; ++i) {
        CHECK(paramAs<uint64_t>(*fake.launchAt(i), 0) == dstRead);
        CHECK(paramAs<uint64_t>(*fake.launchAt(i), 2) == srcWritten);
        CHECK(paramAs<uint64_t>(*fake.launchAt(i), 4) == reinterpret_cast<uintptr_t>(volDesc));
    }
    // Another image: one more descriptor, written once.
    cl_mem other = clCreateImage(on.ctx, CL_MEM_READ_WRITE, &rgba8, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof other, &other));
    fake.reset();
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    CHECK(fake.calls("cuMemcpyAsync") == 1);
    const auto* otherDesc =
        reinterpret_cast<const ImageDesc*>(paramAs<uint64_t>(*fake.launchAt(0), 2));
    CHECK((otherDesc != srcDesc && otherDesc != dstDesc && otherDesc != volDesc));
    CHECK((otherDesc->width == 37 && otherDesc->data != srcDesc->data));
    clReleaseMemObject(other);

    clReleaseSampler(s);
    clReleaseMemObject(vol);
    clReleaseMemObject(dst);
    clReleaseMemObject(src);
    clReleaseCommandQueue(q);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

/// DeviceImageDesc (devices/nvidia/texture_objects.hpp): the descriptor, then the textures.
struct TexturedImageDesc {
    ImageDesc image;
    uint32_t textureClass, swizzle;
    uint64_t reserved;
    uint64_t textures[16];
};
static_assert(sizeof(TexturedImageDesc) == 208);

TEST_CASE("read_only 1D and 2D images are sampled through CUDA texture objects, one per sampler "
          "key; other images and samplers read in software",
          "[nvidia][fake-driver][image]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    cl_program p = buildProgram(on.ctx, on.dev, R"CL(
__kernel void blur(read_only image2d_t src, sampler_t s, write_only image2d_t dst,
                   read_only image2d_t narrow) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 c = read_imagef(src, s, (float2)(p.x + 0.5f, p.y + 0.5f)) + read_imagef(src, p) +
               read_imagef(narrow, p);
    write_imagef(dst, p, c);
}
)CL",
                                "-cl-std=CL3.0");
    cl_kernel k = clCreateKernel(p, "blur", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_command_queue q = on.queue();
    Fake fake;
    const int texturesBefore = fake.liveTextures();

    // Images the runtime allocates have rows padded to the 32-byte texture pitch alignment; an
    // application's memory (CL_MEM_USE_HOST_PTR) with 37-byte rows stays with software reads.
    const cl_image_format bgra8{CL_BGRA, CL_UNORM_INT8}, r8{CL_R, CL_UNORM_INT8};
    cl_image_desc d2{};
    d2.image_type = CL_MEM_OBJECT_IMAGE2D;
    d2.image_width = 64;
    d2.image_height = 16;
    cl_mem src = clCreateImage(on.ctx, CL_MEM_READ_WRITE, &bgra8, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem dst = clCreateImage(on.ctx, CL_MEM_WRITE_ONLY, &bgra8, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    d2.image_width = 37;
    std::vector<unsigned char> narrowTexels(37 * 16);
    cl_mem narrow = clCreateImage(on.ctx, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, &r8, &d2,
                                  narrowTexels.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    cl_sampler s = clCreateSampler(on.ctx, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof src, &src));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof s, &s));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof dst, &dst));
    REQUIRE_CL(clSetKernelArg(k, 3, sizeof narrow, &narrow));
    fake.reset();
    const size_t global[2] = {64, 16};
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() >= 1);
    const DuetFakeLaunch& l = *fake.launchAt(0);
    const auto* srcDesc = reinterpret_cast<const TexturedImageDesc*>(paramAs<uint64_t>(l, 0));
    const auto* dstDesc = reinterpret_cast<const TexturedImageDesc*>(paramAs<uint64_t>(l, 2));
    const auto* narrowDesc = reinterpret_cast<const TexturedImageDesc*>(paramAs<uint64_t>(l, 3));
    REQUIRE((srcDesc && dstDesc && narrowDesc));

    // The read_only image: float reads (class 1), red and blue exchanged (swizzle 1), a texture
    // object for each of the 12 sampler keys CUDA and OpenCL both define.
    CHECK((srcDesc->textureClass == 1 && srcDesc->swizzle == 1));
    int made = 0;
    for (uint64_t t : srcDesc->textures)
        made += t != 0;
    CHECK(made == 12);
    CHECK(fake.calls("cuTexObjectCreate") == 12);
    CHECK(fake.liveTextures() == texturesBefore + 12);
    // The sampler's key: unnormalized (0), clamp (1 << 1), linear (8).
    FakeResourceDesc res{};
    FakeTextureDesc tex{};
    REQUIRE(fake.texture(srcDesc->textures[2 | 8], &res, &tex));
    CHECK((res.resType == 3 && res.pitch2D.devPtr == uint64_t(uintptr_t(srcDesc->image.data))));
    CHECK((res.pitch2D.format == 0x01 && res.pitch2D.numChannels == 4)); // 8-bit unsigned
    CHECK((res.pitch2D.width == 64 && res.pitch2D.height == 16 && res.pitch2D.pitchInBytes == 256));
    CHECK((tex.addressMode[0] == 3 && tex.addressMode[1] == 3)); // border, colour 0
    CHECK((tex.filterMode == 1 && tex.flags == 0));              // linear, float reads
    // Sampler-less reads use key 0: unnormalized, clamp to edge, nearest.
    REQUIRE(fake.texture(srcDesc->textures[0], &res, &tex));
    CHECK((tex.addressMode[0] == 1 && tex.filterMode == 0 && tex.flags == 0));
    // Repeat without normalized coordinates: no texture (OpenCL leaves it undefined, CUDA
    // refuses it), that sampler reads in software.
    CHECK(srcDesc->textures[4] == 0);

    // The written image and the one whose rows are not aligned: no textures.
    CHECK(dstDesc->textureClass == 0);
    CHECK(narrowDesc->textureClass == 0);
    for (int i = 0; i < 16; ++i)
        CHECK((dstDesc->textures[i] == 0 && narrowDesc->textures[i] == 0));

    // Later launches reuse the slot and its textures.
    fake.reset();
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    CHECK(fake.calls("cuTexObjectCreate") == 0);
    CHECK(fake.calls("cuMemcpyAsync") == 0);
    CHECK(paramAs<uint64_t>(*fake.launchAt(0), 0) == reinterpret_cast<uintptr_t>(srcDesc));

    // The same image written by a launch: a slot without textures (the read slot stays).
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof src, &src));
    fake.reset();
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    const auto* srcWritten =
        reinterpret_cast<const TexturedImageDesc*>(paramAs<uint64_t>(*fake.launchAt(0), 2));
    CHECK(srcWritten != srcDesc);
    CHECK((srcWritten->textureClass == 0 && srcWritten->image.data == srcDesc->image.data));

    // When the driver refuses texture objects, the image reads in software and the launch runs.
    cl_mem other = clCreateImage(on.ctx, CL_MEM_READ_ONLY, &bgra8, &d2, nullptr, &err);
    d2.image_width = 64;
    cl_mem refused = clCreateImage(on.ctx, CL_MEM_READ_ONLY, &bgra8, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof refused, &refused));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof dst, &dst));
    fake.reset();
    fake.fail("cuTexObjectCreate", 2); // CUDA_ERROR_OUT_OF_MEMORY
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    fake.fail("cuTexObjectCreate", 0);
    const auto* refusedDesc =
        reinterpret_cast<const TexturedImageDesc*>(paramAs<uint64_t>(*fake.launchAt(0), 0));
    CHECK(fake.calls("cuTexObjectCreate") == 12);
    for (uint64_t t : refusedDesc->textures)
        CHECK(t == 0);

    clReleaseMemObject(refused);
    clReleaseMemObject(other);
    clReleaseSampler(s);
    clReleaseMemObject(narrow);
    clReleaseMemObject(dst);
    clReleaseMemObject(src);
    clReleaseCommandQueue(q);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("3D images and image arrays are sampled through CUDA array copies, copied again only "
          "when their contents may have changed",
          "[nvidia][fake-driver][image]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    cl_program p = buildProgram(on.ctx, on.dev, R"CL(
__kernel void sample(read_only image3d_t vol, read_only image2d_array_t layers,
                     read_only image1d_array_t lines, sampler_t s, __global float4* out) {
    out[0] = read_imagef(vol, s, (float4)(0.5f, 0.5f, 0.5f, 0.0f)) +
             read_imagef(layers, s, (float4)(0.5f, 0.5f, 1.0f, 0.0f)) +
             read_imagef(lines, s, (float2)(0.5f, 1.0f));
}
__kernel void stamp(write_only image3d_t vol) {
    write_imagef(vol, (int4)(0), (float4)(1.0f));
}
)CL",
                                "-cl-std=CL3.0");
    cl_kernel k = clCreateKernel(p, "sample", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel stamp = clCreateKernel(p, "stamp", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_command_queue q = on.queue();
    Fake fake;
    auto liveArrays = fake.get<DuetFakeLiveArraysFn>("duetFakeLiveArrays");
    auto arrayBytes = fake.get<DuetFakeArrayBytesFn>("duetFakeArrayBytes");
    REQUIRE((liveArrays && arrayBytes));
    const int arraysBefore = liveArrays();

    // An 8x4x3 RGBA8 volume (rows of 32 bytes), a 4x4x2 float 2D array, a 16x3 RG16 1D array.
    const cl_image_format rgba8{CL_RGBA, CL_UNORM_INT8}, rf{CL_R, CL_FLOAT},
        rg16{CL_RG, CL_UNORM_INT16};
    std::vector<unsigned char> texels(8 * 4 * 3 * 4);
    for (size_t i = 0; i < texels.size(); ++i)
        texels[i] = static_cast<unsigned char>(i * 7);
    cl_image_desc d3{};
    d3.image_type = CL_MEM_OBJECT_IMAGE3D;
    d3.image_width = 8;
    d3.image_height = 4;
    d3.image_depth = 3;
    cl_mem vol = clCreateImage(on.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &rgba8, &d3,
                               texels.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    cl_image_desc da{};
    da.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY;
    da.image_width = da.image_height = 4;
    da.image_array_size = 2;
    cl_mem layers = clCreateImage(on.ctx, CL_MEM_READ_ONLY, &rf, &da, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_image_desc dl{};
    dl.image_type = CL_MEM_OBJECT_IMAGE1D_ARRAY;
    dl.image_width = 16;
    dl.image_array_size = 3;
    cl_mem lines = clCreateImage(on.ctx, CL_MEM_READ_ONLY, &rg16, &dl, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem out = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 16, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_sampler s = clCreateSampler(on.ctx, CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof vol, &vol));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof layers, &layers));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof lines, &lines));
    REQUIRE_CL(clSetKernelArg(k, 3, sizeof s, &s));
    REQUIRE_CL(clSetKernelArg(k, 4, sizeof out, &out));
    REQUIRE_CL(clSetKernelArg(stamp, 0, sizeof vol, &vol));
    const size_t one = 1;
    auto launch = [&] {
        fake.reset();
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(q));
        REQUIRE(fake.launchCount() >= 1);
    };
    auto descOf = [&](unsigned arg) {
        return reinterpret_cast<const TexturedImageDesc*>(
            paramAs<uint64_t>(*fake.launchAt(0), arg));
    };

    // First launch: an array per image (layered for the two arrays), filled from the linear
    // storage, and texture objects on them.
    launch();
    CHECK(fake.calls("cuArray3DCreate_v2") == 3);
    CHECK(fake.calls("cuMemcpy3DAsync_v2") == 3);
    CHECK(liveArrays() == arraysBefore + 3);
    const TexturedImageDesc* volDesc = descOf(0);
    CHECK((volDesc->textureClass == 1 && volDesc->swizzle == 0));
    const unsigned key = 1 | (2 << 1) | 8; // normalized, repeat, linear
    FakeResourceDesc res{};
    FakeTextureDesc tex{};
    REQUIRE(fake.texture(volDesc->textures[key], &res, &tex));
    CHECK(res.resType == 0); // CU_RESOURCE_TYPE_ARRAY
    CHECK((tex.addressMode[0] == 0 && tex.addressMode[2] == 0 && tex.filterMode == 1));
    size_t bytes = 0;
    const unsigned char* copied = arrayBytes(res.array.hArray, &bytes);
    REQUIRE(copied);
    REQUIRE(bytes == texels.size());
    CHECK(std::equal(texels.begin(), texels.end(), copied));
    CHECK(descOf(1)->textureClass == 1);
    CHECK(descOf(2)->textureClass == 1);
    CHECK(descOf(2)->swizzle == 3); // RG

    // Nothing changed: no copy, no new array.
    launch();
    CHECK(fake.calls("cuMemcpy3DAsync_v2") == 0);
    CHECK(fake.calls("cuArray3DCreate_v2") == 0);

    // A write to the volume: its copy (only) follows, with the new bytes.
    std::vector<unsigned char> slice(8 * 4 * 4, 0xA5);
    const size_t origin[3] = {0, 0, 1}, region[3] = {8, 4, 1};
    REQUIRE_CL(clEnqueueWriteImage(q, vol, CL_TRUE, origin, region, 0, 0, slice.data(), 0, nullptr,
                                   nullptr));
    launch();
    CHECK(fake.calls("cuMemcpy3DAsync_v2") == 1);
    copied = arrayBytes(res.array.hArray, &bytes);
    REQUIRE(copied);
    CHECK(copied[8 * 4 * 4] == 0xA5);
    CHECK(copied[0] == texels[0]);

    // A kernel that writes the volume, a fill of the 2D array, a map for writing of the 1D
    // array: each makes one copy stale.
    REQUIRE_CL(clEnqueueNDRangeKernel(q, stamp, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
    launch();
    CHECK(fake.calls("cuMemcpy3DAsync_v2") == 1);
    const float zero[4] = {};
    const size_t layerRegion[3] = {4, 4, 2}, none[3] = {0, 0, 0};
    REQUIRE_CL(clEnqueueFillImage(q, layers, zero, none, layerRegion, 0, nullptr, nullptr));
    launch();
    CHECK(fake.calls("cuMemcpy3DAsync_v2") == 1);
    const size_t lineRegion[3] = {16, 3, 1};
    size_t rowPitch = 0, slicePitch = 0;
    void* mapped = clEnqueueMapImage(q, lines, CL_TRUE, CL_MAP_WRITE, none, lineRegion, &rowPitch,
                                     &slicePitch, 0, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clEnqueueUnmapMemObject(q, lines, mapped, 0, nullptr, nullptr));
    launch();
    CHECK(fake.calls("cuMemcpy3DAsync_v2") == 1);
    launch();
    CHECK(fake.calls("cuMemcpy3DAsync_v2") == 0);

    // Releasing an image (once no kernel holds it) frees its array and the texture objects on it.
    cl_mem other = clCreateImage(on.ctx, CL_MEM_READ_WRITE, &rgba8, &d3, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof other, &other));
    REQUIRE_CL(clSetKernelArg(stamp, 0, sizeof other, &other));
    const int texturesBefore = fake.liveTextures();
    clReleaseMemObject(vol);
    CHECK(liveArrays() == arraysBefore + 2);
    CHECK(fake.liveTextures() == texturesBefore - 12);

    // Where the driver will not make an array, the image reads in software and the launch runs.
    fake.fail("cuArray3DCreate_v2", 2); // CUDA_ERROR_OUT_OF_MEMORY
    launch();
    fake.fail("cuArray3DCreate_v2", 0);
    CHECK(fake.calls("cuArray3DCreate_v2") == 1);
    CHECK(descOf(0)->textureClass == 0);
    CHECK(fake.calls("cuMemcpy3DAsync_v2") == 0);

    clReleaseMemObject(other);
    clReleaseSampler(s);
    clReleaseMemObject(out);
    clReleaseMemObject(lines);
    clReleaseMemObject(layers);
    clReleaseCommandQueue(q);
    clReleaseKernel(stamp);
    clReleaseKernel(k);
    clReleaseProgram(p);
    CHECK(liveArrays() == arraysBefore);
}

TEST_CASE("a kernel whose image reads all go through textures launches its texture-only variant",
          "[nvidia][fake-driver][image]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    cl_program p = buildProgram(on.ctx, on.dev, R"CL(
__kernel void resample(read_only image2d_t src, sampler_t s, __global float4* out) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    out[p.y * 16 + p.x] = read_imagef(src, s, (float2)(p.x + 0.5f, p.y + 0.5f)) + read_imagef(src, p);
}
__kernel void asInts(read_only image2d_t src, sampler_t s, __global int4* out) {
    out[get_global_id(0)] = read_imagei(src, s, (int2)(get_global_id(0), 0));
}
)CL",
                                "-cl-std=CL3.0");
    cl_kernel k = clCreateKernel(p, "resample", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel ints = clCreateKernel(p, "asInts", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_command_queue q = on.queue();
    Fake fake;
    cl_image_desc d2{};
    d2.image_type = CL_MEM_OBJECT_IMAGE2D;
    d2.image_width = 16;
    d2.image_height = 16;
    const cl_image_format rgba8{CL_RGBA, CL_UNORM_INT8}, srgba8{CL_sRGBA, CL_UNORM_INT8};
    cl_mem img = clCreateImage(on.ctx, CL_MEM_READ_ONLY, &rgba8, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem srgb = clCreateImage(on.ctx, CL_MEM_READ_ONLY, &srgba8, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem out = clCreateBuffer(on.ctx, CL_MEM_WRITE_ONLY, 16 * 16 * 16, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    auto sampler = [&](cl_bool normalized, cl_addressing_mode mode, cl_filter_mode filter) {
        cl_sampler s = clCreateSampler(on.ctx, normalized, mode, filter, &err);
        REQUIRE(err == CL_SUCCESS);
        return s;
    };
    cl_sampler linear = sampler(CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_LINEAR);
    // Which function each launch ran.
    auto launched = [&](cl_kernel kernel, cl_mem image, cl_sampler s) {
        REQUIRE_CL(clSetKernelArg(kernel, 0, sizeof image, &image));
        REQUIRE_CL(clSetKernelArg(kernel, 1, sizeof s, &s));
        REQUIRE_CL(clSetKernelArg(kernel, 2, sizeof out, &out));
        fake.reset();
        const size_t global[2] = {16, 16};
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q, kernel, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(q));
        REQUIRE(fake.launchCount() == 1);
        return std::string(fake.launchAt(0)->kernel);
    };
    // Both reads (the sampler's and the sampler-less one) have a texture object.
    CHECK(launched(k, img, linear) == "__duet_textured_resample");
    // 8-bit signed normalized channels are filtered in software (texture_objects.hpp): the
    // kernel as it is, whose software read serves them.
    const cl_image_format snorm8{CL_RGBA, CL_SNORM_INT8};
    cl_mem snorm = clCreateImage(on.ctx, CL_MEM_READ_ONLY, &snorm8, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(launched(k, snorm, linear) == "resample");
    // sRGB is filtered in software (texture_objects.hpp); its nearest reads go through textures
    // whose bytes the kernel decodes, which the variant leaves out (texture.h).
    CHECK(launched(k, srgb, linear) == "resample");
    cl_sampler nearest = sampler(CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST);
    CHECK(launched(k, srgb, nearest) == "resample");
    CHECK(launched(k, img, nearest) == "__duet_textured_resample");
    // read_imagei of a float image returns the stored bits, which only software gives.
    CHECK(launched(ints, img, nearest) == "asInts");
    // An image whose rows do not meet the texture pitch alignment has no textures at all.
    d2.image_width = 13;
    std::vector<unsigned char> texels(13 * 16 * 4);
    cl_mem unaligned = clCreateImage(on.ctx, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, &rgba8, &d2,
                                     texels.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(launched(k, unaligned, linear) == "resample");
    // And back: the variant again.
    CHECK(launched(k, img, linear) == "__duet_textured_resample");

    for (cl_sampler s : {linear, nearest})
        clReleaseSampler(s);
    for (cl_mem m : {img, srgb, snorm, out, unaligned})
        clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    clReleaseKernel(ints);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("programs build to PTX through the API and launch by the kernel ABI",
          "[nvidia][fake-driver]") {
    cl_int status = CL_SUCCESS;
    std::vector<cl_device_id> gpus = devices(CL_DEVICE_TYPE_GPU, status);
    REQUIRE(gpus.size() == 2);
    cl_device_id dev = gpus[0];
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);

    // A build failure keeps clang's log.
    const char* bad = "__kernel void k(__global int* p) { *p = ; }";
    cl_program broken = clCreateProgramWithSource(ctx, 1, &bad, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK_CL_ERR(CL_BUILD_PROGRAM_FAILURE, clBuildProgram(broken, 1, &dev, "", nullptr, nullptr));
    CHECK(buildLog(broken, dev).find("error: expected expression") != std::string::npos);
    clReleaseProgram(broken);
    // So does code the NVPTX backend would abort the process on (a __local pointer in a
    // program-scope variable's initial value): the reason in the log.
    const char* unselectable = "global int g;\nlocal int* global p = NULL;\n"
                               "__kernel void k(__global int* o) { o[0] = p == NULL; }";
    cl_program refused = clCreateProgramWithSource(ctx, 1, &unselectable, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK_CL_ERR(CL_BUILD_PROGRAM_FAILURE,
                 clBuildProgram(refused, 1, &dev, "-cl-std=CL3.0", nullptr, nullptr));
    CHECK(buildLog(refused, dev).find("error: program-scope variable 'p'") != std::string::npos);
    clReleaseProgram(refused);

    cl_program p = buildProgram(ctx, dev, kNbody, "-cl-fast-relaxed-math");
    size_t size = 0;
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
    std::vector<unsigned char> binary(size);
    unsigned char* ptr = binary.data();
    REQUIRE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr));
    const std::string text(binary.begin(), binary.end());
    CHECK(text.rfind("\x7f"
                     "ELF",
                     0) == 0);
    CHECK(text.find(".target sm_90") != std::string::npos);
    CHECK(text.find(".entry nbody(") != std::string::npos);

    // The binary makes the same program again, without recompiling.
    const unsigned char* in = binary.data();
    cl_int binStatus = CL_SUCCESS;
    cl_program again = clCreateProgramWithBinary(ctx, 1, &dev, &size, &in, &binStatus, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(binStatus == CL_SUCCESS);
    REQUIRE_CL(clBuildProgram(again, 1, &dev, "", nullptr, nullptr));

    cl_kernel k = clCreateKernel(again, "nbody", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_ulong localBytes = 0;
    REQUIRE_CL(clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof localBytes,
                                        &localBytes, nullptr));
    CHECK(localBytes == 0);
    Fake fake;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1024 * 16, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(fake.calls("cuMemAllocManaged") == 1); // memory objects live in managed memory
    const float eps2 = 0.01f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof buf, &buf));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof buf, &buf));
    REQUIRE_CL(clSetKernelArg(k, 2, 256 * 16, nullptr));
    REQUIRE_CL(clSetKernelArg(k, 3, sizeof eps2, &eps2));
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    // The buffer's device address: managed memory is the same address on the host.
    void* mapped =
        clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_READ, 0, 16, 0, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clEnqueueUnmapMemObject(q, buf, mapped, 0, nullptr, nullptr));
    const uint64_t address = uint64_t(reinterpret_cast<uintptr_t>(mapped));

    const size_t global = 1024, local = 256;
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() == 1);
    const DuetFakeLaunch& l = *fake.launchAt(0);
    CHECK(std::string(l.kernel) == "nbody");
    CHECK((l.grid[0] == 4 && l.grid[1] == 1 && l.grid[2] == 1));
    CHECK((l.block[0] == 256 && l.block[1] == 1 && l.block[2] == 1));
    CHECK(l.sharedMemBytes == 256 * 16);
    REQUIRE(l.params == 5);
    CHECK(paramAs<uint64_t>(l, 0) == address);
    CHECK(paramAs<uint64_t>(l, 1) == address);
    CHECK(paramAs<uint64_t>(l, 2) == 0); // the __local argument's offset
    CHECK(paramAs<float>(l, 3) == eps2);
    const Block b = paramAs<Block>(l, 4);
    CHECK(b.globalSize[0] == 1024);
    CHECK((b.globalSize[1] == 1 && b.globalSize[2] == 1));
    CHECK(b.enqueuedLocalSize[0] == 256);
    CHECK(b.numGroups[0] == 4);
    CHECK(b.groupOffset[0] == 0);
    CHECK(b.workDim == 1);
    CHECK(b.printfBuffer == 0);

    // No local size: the backend picks one that divides the global size (whole warps).
    fake.reset();
    const size_t global2 = 4096;
    REQUIRE_CL(clSetKernelArg(k, 2, 16, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global2, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() == 1);
    CHECK(fake.launchAt(0)->block[0] == 256);
    CHECK(fake.launchAt(0)->grid[0] == 16);
    CHECK(fake.launchAt(0)->sharedMemBytes == 16);
    clReleaseCommandQueue(q);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(again);
    clReleaseProgram(p);
    clReleaseContext(ctx);
}

TEST_CASE("__local arguments: consecutive aligned offsets, opt-in above 48 KiB; 2D offsets",
          "[nvidia][fake-driver]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    cl_program p = buildProgram(on.ctx, on.dev, R"CL(
__kernel void two_locals(__global int* out, __local int* a, char c, __local float4* b) {
    a[get_local_id(0)] = c;
    b[get_local_id(1)] = (float4)(1.0f);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = a[0] + (int)b[0].x;
}
)CL",
                                "-cl-std=CL3.0");
    cl_kernel k = clCreateKernel(p, "two_locals", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem out = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 64 * 64 * 4, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const cl_char c = 7;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    REQUIRE_CL(clSetKernelArg(k, 1, 100, nullptr));
    REQUIRE_CL(clSetKernelArg(k, 2, sizeof c, &c));
    REQUIRE_CL(clSetKernelArg(k, 3, 60000, nullptr));
    cl_command_queue q = on.queue();
    Fake fake;
    // 40 = 2 x 16 + 8 rows: a grid of full work-groups, one of the partial last row.
    const size_t offset[2] = {5, 9}, global[2] = {64, 40}, local[2] = {16, 16};
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 2, offset, global, local, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() == 2);
    for (int i = 0; i < 2; ++i) {
        CAPTURE(i);
        const DuetFakeLaunch& l = *fake.launchAt(i);
        CHECK((l.grid[0] == 4 && l.grid[1] == (i == 0 ? 2u : 1u) && l.grid[2] == 1));
        CHECK((l.block[0] == 16 && l.block[1] == (i == 0 ? 16u : 8u) && l.block[2] == 1));
        REQUIRE(l.params == 5);
        CHECK(paramAs<uint64_t>(l, 1) == 0);
        CHECK(paramAs<cl_char>(l, 2) == 7);
        CHECK(paramAs<uint64_t>(l, 3) == 112); // 100 rounded up to 16
        CHECK(l.sharedMemBytes == 112 + 60000);
        const Block b = paramAs<Block>(l, 4);
        CHECK((b.globalOffset[0] == 5 && b.globalOffset[1] == 9 && b.globalOffset[2] == 0));
        CHECK((b.globalSize[0] == 64 && b.globalSize[1] == 40));
        CHECK((b.enqueuedLocalSize[0] == 16 && b.enqueuedLocalSize[1] == 16));
        CHECK((b.numGroups[0] == 4 && b.numGroups[1] == 3 && b.numGroups[2] == 1));
        CHECK((b.groupOffset[0] == 0 && b.groupOffset[1] == (i == 0 ? 0u : 2u)));
        CHECK(b.workDim == 2);
    }
    // Above 48 KiB the kernel opts in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
    CHECK(fake.funcAttribute(8) == 112 + 60000);

    // Transfers go through the driver and land in the buffer.
    std::vector<int> in(64 * 64), back(64 * 64);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = int(i * 3);
    REQUIRE_CL(
        clEnqueueWriteBuffer(q, out, CL_TRUE, 0, in.size() * 4, in.data(), 0, nullptr, nullptr));
    REQUIRE_CL(
        clEnqueueReadBuffer(q, out, CL_TRUE, 0, back.size() * 4, back.data(), 0, nullptr, nullptr));
    CHECK(back == in);
    CHECK(fake.calls("cuMemcpyAsync") >= 2);
    clReleaseCommandQueue(q);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("USE_HOST_PTR memory is registered; a refusal is an allocation failure with the reason",
          "[nvidia][fake-driver]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    Fake fake;
    std::vector<float> host(1024);
    cl_mem ok = clCreateBuffer(on.ctx, CL_MEM_USE_HOST_PTR, host.size() * 4, host.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(fake.calls("cuMemHostRegister_v2") == 1);
    clReleaseMemObject(ok);
    CHECK(fake.calls("cuMemHostUnregister") == 1);

    fake.fail("cuMemHostRegister_v2", 1); // CUDA_ERROR_INVALID_VALUE
    cl_mem bad = clCreateBuffer(on.ctx, CL_MEM_USE_HOST_PTR, host.size() * 4, host.data(), &err);
    fake.fail("cuMemHostRegister_v2", 0);
    CHECK(bad == nullptr);
    CHECK(err == CL_MEM_OBJECT_ALLOCATION_FAILURE);
    CHECK(on.notes.get().find("CUDA_ERROR_INVALID_VALUE") != std::string::npos);
    CHECK(on.notes.get().find("cuMemHostRegister") != std::string::npos);

    // Managed allocation refused: the buffer's creation fails too.
    fake.fail("cuMemAllocManaged", 2); // CUDA_ERROR_OUT_OF_MEMORY
    cl_mem none = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    fake.fail("cuMemAllocManaged", 0);
    CHECK(none == nullptr);
    CHECK(err == CL_MEM_OBJECT_ALLOCATION_FAILURE);
}

TEST_CASE("a PTX the driver's JIT refuses fails the launch with the JIT log",
          "[nvidia][fake-driver]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    // The fake's JIT refuses any module with a kernel of this name.
    cl_program p =
        buildProgram(on.ctx, on.dev, "__kernel void fake_jit_error(__global int* p) { p[0] = 1; }");
    cl_kernel k = clCreateKernel(p, "fake_jit_error", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem buf = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof buf, &buf));
    cl_command_queue q = on.queue();
    Fake fake;
    const size_t global = 64;
    cl_event ev = nullptr;
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, &ev));
    clFinish(q);
    CHECK(eventStatus(ev) == CL_OUT_OF_RESOURCES);
    CHECK(fake.launchCount() == 0);
    const std::string text = on.notes.get();
    CHECK(text.find("CUDA_ERROR_INVALID_PTX") != std::string::npos);
    CHECK(text.find("ptxas fatal   : fake JIT failure") != std::string::npos);
    clReleaseEvent(ev);
    clReleaseCommandQueue(q);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("__local variables over 48 KiB: dynamic shared memory ahead of the __local arguments, "
          "the launch opts in",
          "[nvidia][fake-driver]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    // 64 KiB of kernel-scope __local variables: more than PTX's static .shared takes.
    cl_program p = buildProgram(on.ctx, on.dev, R"CL(
__kernel void tiles(__global float* out, __local float* arg) {
    __local float big[16384];
    size_t l = get_local_id(0);
    big[l] = (float)l;
    arg[l] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = big[get_local_size(0) - 1 - l] + arg[0];
}
)CL");
    cl_kernel k = clCreateKernel(p, "tiles", &err);
    REQUIRE(err == CL_SUCCESS);
    // The variables alone, then with the argument after them (16-byte aligned).
    CHECK(workGroupInfo<cl_ulong>(k, on.dev, CL_KERNEL_LOCAL_MEM_SIZE) == 65536);
    cl_mem out = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    REQUIRE_CL(clSetKernelArg(k, 1, 1000, nullptr));
    CHECK(workGroupInfo<cl_ulong>(k, on.dev, CL_KERNEL_LOCAL_MEM_SIZE) == 65536 + 1000);
    cl_command_queue q = on.queue();
    Fake fake;
    const size_t global = 1024, local = 256;
    for (int i = 0; i < 2; ++i)
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() == 2);
    for (int i = 0; i < 2; ++i) {
        const DuetFakeLaunch& l = *fake.launchAt(i);
        CHECK(l.sharedMemBytes == 65536 + 1000);
        REQUIRE(l.params == 3);
        CHECK(paramAs<uint64_t>(l, 1) == 65536); // the argument after the variables
    }
    // Opted in once: the function keeps the larger limit.
    CHECK(fake.calls("cuFuncSetAttribute") == 1);
    CHECK(fake.funcAttribute(kFuncMaxDynamicShared) == 65536 + 1000);
    // A larger argument: opted in again, for the new size.
    REQUIRE_CL(clSetKernelArg(k, 1, 8000, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() == 3);
    CHECK(fake.launchAt(2)->sharedMemBytes == 65536 + 8000);
    CHECK(fake.calls("cuFuncSetAttribute") == 2);
    CHECK(fake.funcAttribute(kFuncMaxDynamicShared) == 65536 + 8000);
    clReleaseCommandQueue(q);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("more local memory than the GPU has: CL_OUT_OF_RESOURCES with the reason, no launch",
          "[nvidia][fake-driver]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    // The fake H100's limit: 232448 bytes (227 KiB, CL_DEVICE_LOCAL_MEM_SIZE).
    cl_program p = buildProgram(on.ctx, on.dev, R"CL(
__kernel void near_limit(__global float* out, __local float* arg) {
    __local float big[51200]; // 200 KiB
    big[get_local_id(0)] = 1.0f;
    arg[get_local_id(0)] = 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = big[0] + arg[0];
}
__kernel void over_limit(__global float* out) {
    __local float huge[65536]; // 256 KiB
    huge[get_local_id(0)] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = huge[0];
}
)CL");
    cl_mem out = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_command_queue q = on.queue();
    Fake fake;
    const size_t global = 256, local = 64;

    cl_kernel near = clCreateKernel(p, "near_limit", &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(near, 0, sizeof out, &out));
    // 200 KiB + 40 KiB: over 227 KiB only with the argument.
    REQUIRE_CL(clSetKernelArg(near, 1, 40 * 1024, nullptr));
    CHECK(workGroupInfo<cl_ulong>(near, on.dev, CL_KERNEL_LOCAL_MEM_SIZE) == 240 * 1024);
    CHECK_CL_ERR(CL_OUT_OF_RESOURCES,
                 clEnqueueNDRangeKernel(q, near, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    std::string text = on.notes.get();
    CHECK(text.find("near_limit needs 245760 bytes of local memory") != std::string::npos);
    CHECK(text.find("232448") != std::string::npos);
    // 200 KiB + 20 KiB fits: it runs, opted in.
    REQUIRE_CL(clSetKernelArg(near, 1, 20 * 1024, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(q, near, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() == 1);
    CHECK(fake.launchAt(0)->sharedMemBytes == 220 * 1024);
    CHECK(fake.funcAttribute(kFuncMaxDynamicShared) == 220 * 1024);

    // Variables alone over the limit: the build succeeds (the PTX does not depend on the GPU),
    // every enqueue fails.
    cl_kernel over = clCreateKernel(p, "over_limit", &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(over, 0, sizeof out, &out));
    CHECK(workGroupInfo<cl_ulong>(over, on.dev, CL_KERNEL_LOCAL_MEM_SIZE) == 256 * 1024);
    CHECK_CL_ERR(CL_OUT_OF_RESOURCES,
                 clEnqueueNDRangeKernel(q, over, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_OUT_OF_RESOURCES, clEnqueueTask(q, over, 0, nullptr, nullptr));
    CHECK(on.notes.get().find("over_limit needs 262144 bytes") != std::string::npos);
    CHECK(fake.launchCount() == 1);
    clReleaseKernel(over);
    clReleaseKernel(near);
    clReleaseCommandQueue(q);
    clReleaseMemObject(out);
    clReleaseProgram(p);
}

TEST_CASE("kernel work-group info is the driver's word on the compiled function",
          "[nvidia][fake-driver]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    Fake fake;
    // As ptxas might leave a register-hungry kernel that spills: at most 128 threads a block,
    // 208 bytes of local memory per thread, 1 KiB of static shared memory.
    fake.setFuncAttribute("heavy", kFuncMaxThreads, 128);
    fake.setFuncAttribute("heavy", kFuncLocalSize, 208);
    fake.setFuncAttribute("heavy", kFuncSharedSize, 1024);
    cl_program p = buildProgram(on.ctx, on.dev, R"CL(
__kernel void heavy(__global float* out, __local float* scratch) {
    scratch[get_local_id(0)] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = scratch[0];
}
__kernel void light(__global float* out) { out[get_global_id(0)] = 1.0f; }
)CL");
    cl_kernel heavy = clCreateKernel(p, "heavy", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel light = clCreateKernel(p, "light", &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(workGroupInfo<size_t>(heavy, on.dev, CL_KERNEL_WORK_GROUP_SIZE) == 128);
    CHECK(workGroupInfo<size_t>(light, on.dev, CL_KERNEL_WORK_GROUP_SIZE) == 1024);
    CHECK(workGroupInfo<cl_ulong>(heavy, on.dev, CL_KERNEL_PRIVATE_MEM_SIZE) == 208);
    CHECK(workGroupInfo<cl_ulong>(light, on.dev, CL_KERNEL_PRIVATE_MEM_SIZE) == 0);
    CHECK(workGroupInfo<cl_ulong>(heavy, on.dev, CL_KERNEL_LOCAL_MEM_SIZE) == 1024);
    CHECK(workGroupInfo<size_t>(heavy, on.dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE) == 32);
    CHECK(fake.calls("cuFuncGetAttribute") > 0);

    cl_mem out = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 4096 * 4, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(heavy, 0, sizeof out, &out));
    REQUIRE_CL(clSetKernelArg(heavy, 1, 512, nullptr));
    REQUIRE_CL(clSetKernelArg(light, 0, sizeof out, &out));
    // Static shared memory from the driver, then the __local argument.
    CHECK(workGroupInfo<cl_ulong>(heavy, on.dev, CL_KERNEL_LOCAL_MEM_SIZE) == 1024 + 512);
    cl_command_queue q = on.queue();

    // More work-items than the function takes: CL_INVALID_WORK_GROUP_SIZE at the enqueue.
    const size_t global = 4096, tooMany = 256, fits = 128;
    CHECK_CL_ERR(CL_INVALID_WORK_GROUP_SIZE, clEnqueueNDRangeKernel(q, heavy, 1, nullptr, &global,
                                                                    &tooMany, 0, nullptr, nullptr));
    CHECK(on.notes.get().find("more than CL_KERNEL_WORK_GROUP_SIZE (128)") != std::string::npos);
    CHECK(fake.launchCount() == 0);
    // The same local size is fine for the other kernel; the limit for this one.
    REQUIRE_CL(
        clEnqueueNDRangeKernel(q, light, 1, nullptr, &global, &tooMany, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(q, heavy, 1, nullptr, &global, &fits, 0, nullptr, nullptr));
    // No local size: the backend's choice stays within the function's limit.
    REQUIRE_CL(clEnqueueNDRangeKernel(q, heavy, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() == 3);
    CHECK(fake.launchAt(0)->block[0] == 256);
    CHECK(fake.launchAt(1)->block[0] == 128);
    CHECK(fake.launchAt(2)->block[0] == 128);
    CHECK(fake.launchAt(2)->grid[0] == 32);
    CHECK(fake.launchAt(2)->sharedMemBytes == 512); // the static 1 KiB is the driver's
    clReleaseCommandQueue(q);
    clReleaseMemObject(out);
    clReleaseKernel(light);
    clReleaseKernel(heavy);
    clReleaseProgram(p);
}

TEST_CASE("sub-groups are warps: device queries, the macros, clGetKernelSubGroupInfo on the "
          "driver's word",
          "[nvidia][fake-driver][sub_group]") {
    H100Context on;
    // 1024 threads a block: 32 warps; warps of a block progress independently.
    CHECK(deviceValue<cl_uint>(on.dev, CL_DEVICE_MAX_NUM_SUB_GROUPS) == 32);
    CHECK(deviceValue<cl_bool>(on.dev, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS) ==
          CL_TRUE);
    const std::string ext = " " + deviceString(on.dev, CL_DEVICE_EXTENSIONS) + " ";
    const char* const listed[] = {"cl_khr_subgroups",
                                  "cl_khr_subgroup_ballot",
                                  "cl_khr_subgroup_non_uniform_vote",
                                  "cl_khr_subgroup_non_uniform_arithmetic",
                                  "cl_khr_subgroup_shuffle",
                                  "cl_khr_subgroup_shuffle_relative",
                                  "cl_khr_subgroup_clustered_reduce",
                                  "cl_khr_subgroup_extended_types",
                                  "cl_khr_subgroup_rotate"};
    size_t bytes = 0;
    REQUIRE_CL(clGetDeviceInfo(on.dev, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &bytes));
    std::vector<cl_name_version> versioned(bytes / sizeof(cl_name_version));
    REQUIRE_CL(clGetDeviceInfo(on.dev, CL_DEVICE_EXTENSIONS_WITH_VERSION, bytes, versioned.data(),
                               nullptr));
    std::string source = "kernel void k(global int* p) { *p = 1; }\n";
    for (const char* e : listed) {
        INFO(e);
        CHECK(ext.find(" " + std::string(e) + " ") != std::string::npos);
        CHECK(std::any_of(versioned.begin(), versioned.end(),
                          [&](const cl_name_version& v) { return std::string(v.name) == e; }));
        // The macro of each listed extension is defined for OpenCL C 3.0 programs.
        source += std::string("#ifndef ") + e + "\n#error " + e + " is not defined\n#endif\n";
    }
    source += "#ifndef __opencl_c_subgroups\n#error no __opencl_c_subgroups\n#endif\n";
    REQUIRE_CL(clGetDeviceInfo(on.dev, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &bytes));
    std::vector<cl_name_version> features(bytes / sizeof(cl_name_version));
    REQUIRE_CL(
        clGetDeviceInfo(on.dev, CL_DEVICE_OPENCL_C_FEATURES, bytes, features.data(), nullptr));
    CHECK(std::any_of(features.begin(), features.end(), [](const cl_name_version& f) {
        return std::string(f.name) == "__opencl_c_subgroups";
    }));
    clReleaseProgram(buildProgram(on.ctx, on.dev, source, "-cl-std=CL3.0"));

    // A kernel ptxas limits to 128 threads a block: 4 warps at most.
    Fake fake;
    fake.setFuncAttribute("sg", kFuncMaxThreads, 128);
    cl_program p = buildProgram(on.ctx, on.dev, R"CL(
kernel void sg(global int* out) {
    size_t i = get_global_id(0);
    out[i] = sub_group_reduce_add((int)get_sub_group_local_id()) +
             (int)sub_group_ballot_bit_count(sub_group_ballot(out[i] > 0));
}
)CL",
                                "-cl-std=CL3.0");
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, "sg", &err);
    REQUIRE(err == CL_SUCCESS);
    auto query = [&](cl_kernel_sub_group_info q, std::vector<size_t> in) {
        size_t v = 0, ret = 0;
        REQUIRE_CL(clGetKernelSubGroupInfo(k, on.dev, q, in.size() * sizeof(size_t), in.data(),
                                           sizeof v, &v, &ret));
        CHECK(ret == sizeof v);
        return v;
    };
    CHECK(query(CL_KERNEL_MAX_NUM_SUB_GROUPS, {}) == 4);
    CHECK(query(CL_KERNEL_COMPILE_NUM_SUB_GROUPS, {}) == 0);
    CHECK(query(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {16}) == 16);
    CHECK(query(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {8, 8}) == 32);
    CHECK(query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, {100}) == 4);
    CHECK(query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, {33, 2}) == 3);
    CHECK(query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, {4, 4, 4}) == 2);
    size_t count = 3, local[3] = {}, ret = 0;
    REQUIRE_CL(clGetKernelSubGroupInfo(k, on.dev, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                                       sizeof count, &count, sizeof local, local, &ret));
    CHECK(ret == sizeof local);
    CHECK((local[0] == 96 && local[1] == 1 && local[2] == 1));
    count = 5; // 160 threads: more than the function takes
    REQUIRE_CL(clGetKernelSubGroupInfo(k, on.dev, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                                       sizeof count, &count, sizeof local, local, nullptr));
    CHECK(local[0] == 0);

    // Bad inputs get the spec's errors.
    size_t v = 0;
    const size_t four[4] = {1, 1, 1, 1}, zero[2] = {32, 0};
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, on.dev, 0x7777, 0, nullptr, sizeof v, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, on.dev, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                                         sizeof four, four, sizeof v, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, on.dev, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                                         sizeof zero, zero, sizeof v, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetKernelSubGroupInfo(k, on.dev, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                         sizeof(size_t), nullptr, sizeof v, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clGetKernelSubGroupInfo(k, on.dev, CL_KERNEL_MAX_NUM_SUB_GROUPS,
                                                           0, nullptr, sizeof v - 1, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_KERNEL,
                 clGetKernelSubGroupInfo(nullptr, on.dev, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, nullptr,
                                         sizeof v, &v, nullptr));
    cl_int status = CL_SUCCESS;
    const cl_device_id kepler = devices(CL_DEVICE_TYPE_GPU, status).at(1);
    CHECK_CL_ERR(CL_INVALID_DEVICE, clGetKernelSubGroupInfo(k, kepler, CL_KERNEL_MAX_NUM_SUB_GROUPS,
                                                            0, nullptr, sizeof v, &v, nullptr));

    // Launched as a block of 100 threads: 4 warps, the last of 4 threads (the member mask the
    // builtins compute from the block's size).
    cl_mem out = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 400 * sizeof(int), nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof out, &out));
    cl_command_queue q = on.queue();
    const size_t global = 400, group = 100;
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &group, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() == 1);
    CHECK(fake.launchAt(0)->block[0] == 100);
    CHECK(fake.launchAt(0)->grid[0] == 4);
    clReleaseCommandQueue(q);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("back-to-back launches share one wait for the GPU; profiled ones take its timer",
          "[nvidia][fake-driver]") {
    NbodyOnH100 nb(h100());
    cl_kernel k = nb.kernel;
    cl_int err = CL_SUCCESS;
    const cl_queue_properties profiled[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    for (bool profiling : {false, true}) {
        CAPTURE(profiling);
        cl_command_queue q = nb.queue(profiling ? profiled : nullptr);
        Fake fake;
        // The first launch waits for a user event, so the queue holds all three when it starts:
        // they go to the stream one after the other, and the waits come after the last.
        cl_event gate = clCreateUserEvent(nb.ctx, &err);
        REQUIRE(err == CL_SUCCESS);
        const size_t global = 1024, local = 256;
        cl_event last = nullptr;
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 1, &gate, nullptr));
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, &last));
        REQUIRE_CL(clSetUserEventStatus(gate, CL_COMPLETE));
        REQUIRE_CL(clWaitForEvents(1, &last));
        CHECK(eventStatus(last) == CL_COMPLETE);
        REQUIRE_CL(clFinish(q));
        CHECK(fake.launchCount() == 3);
        if (profiling) {
            // The launch whose event the caller asked for runs between two CUDA events and is
            // waited for on its end event; the others (no event to time) on the stream.
            CHECK(fake.calls("cuEventRecord") == 2);
            CHECK(fake.calls("cuEventSynchronize") == 1);
            CHECK(fake.calls("cuEventDestroy_v2") == 2);
            // The first wait on the stream covers the second launch too.
            CHECK(fake.calls("cuStreamSynchronize") == 1);
            cl_ulong start = 0, end = 0;
            REQUIRE_CL(clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_START, sizeof start,
                                               &start, nullptr));
            REQUIRE_CL(
                clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr));
            CHECK(end - start == 1000); // the stand-in's cuEventElapsedTime: 1 us
        } else {
            CHECK(fake.calls("cuEventCreate") == 0);
            // One wait on the stream covers all three (it runs them in order).
            CHECK(fake.calls("cuStreamSynchronize") == 1);
        }
        // No wait between the launches: each went to the stream without waiting for the last.
        REQUIRE(fake.launchCount() == 3);
        CHECK(fake.launchAt(2)->waitsBefore == fake.launchAt(0)->waitsBefore);
        clReleaseEvent(last);
        clReleaseEvent(gate);
        clReleaseCommandQueue(q);
    }
}

TEST_CASE("buffer fills run on the GPU: memsets for 1, 2 and 4 bytes, copies for longer patterns",
          "[nvidia][fake-driver]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    cl_command_queue q = on.queue();
    cl_mem buf = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    Fake fake;
    const uint8_t byte = 0x5a;
    const uint16_t half = 0x1234;
    const uint32_t word = 0xdeadbeef;
    const uint64_t wide[2] = {0x0102030405060708ull, 0x1112131415161718ull};
    REQUIRE_CL(clEnqueueFillBuffer(q, buf, &byte, 1, 0, 1024, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueFillBuffer(q, buf, &half, 2, 1024, 1024, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueFillBuffer(q, buf, &word, 4, 2048, 1024, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueFillBuffer(q, buf, wide, 16, 3072, 1024, 0, nullptr, nullptr));
    std::vector<uint8_t> got(4096);
    REQUIRE_CL(
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, got.size(), got.data(), 0, nullptr, nullptr));
    CHECK(fake.calls("cuMemsetD8Async") == 1);
    CHECK(fake.calls("cuMemsetD16Async") == 1);
    CHECK(fake.calls("cuMemsetD32Async") == 1);
    for (size_t i = 0; i < 4096; ++i) {
        uint8_t want = 0;
        if (i < 1024)
            want = byte;
        else if (i < 2048)
            want = reinterpret_cast<const uint8_t*>(&half)[i % 2];
        else if (i < 3072)
            want = reinterpret_cast<const uint8_t*>(&word)[i % 4];
        else
            want = reinterpret_cast<const uint8_t*>(wide)[i % 16];
        if (got[i] != want) {
            FAIL_CHECK("byte " << i << " is " << int(got[i]) << ", want " << int(want));
            break;
        }
    }
    // A failing memset fails the command with the driver's reason.
    fake.fail("cuMemsetD32Async", 2);
    cl_event ev = nullptr;
    CHECK(clEnqueueFillBuffer(q, buf, &word, 4, 0, 64, 0, nullptr, &ev) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &ev) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    fake.fail("cuMemsetD32Async", 0);
    clReleaseEvent(ev);
    clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
}

TEST_CASE("managed memory moves to the GPU ahead of its kernels: new buffers at once, host-filled "
          "ones once filled, rect transfers and maps once the host is done; migrations both ways",
          "[nvidia][fake-driver]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    Fake fake;
    auto prefetched = fake.get<DuetFakePrefetchedFn>("duetFakePrefetched");
    REQUIRE(prefetched);
    const uint64_t toGpu = prefetched(0);
    // Written first by kernels: prefetched when made.
    const size_t mib = size_t(1) << 20;
    cl_mem out = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, mib, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(prefetched(0) == toGpu + mib);
    CHECK(prefetched(-1) == 0);
    // Filled from host_ptr: prefetched after the copy, with the data intact.
    std::vector<uint32_t> host(4096);
    for (size_t i = 0; i < host.size(); ++i)
        host[i] = uint32_t(i * 2654435761u);
    cl_mem in = clCreateBuffer(on.ctx, CL_MEM_COPY_HOST_PTR, host.size() * 4, host.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(prefetched(0) == toGpu + mib + host.size() * 4);
    cl_command_queue q = on.queue();
    std::vector<uint32_t> got(host.size());
    REQUIRE_CL(
        clEnqueueReadBuffer(q, in, CL_TRUE, 0, got.size() * 4, got.data(), 0, nullptr, nullptr));
    CHECK(got == host);
    // The application's memory never moves.
    uint64_t before = prefetched(0);
    cl_mem app = clCreateBuffer(on.ctx, CL_MEM_USE_HOST_PTR, host.size() * 4, host.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(prefetched(0) == before);
    // A map: the span it handed out goes back at the unmap, not before.
    void* p =
        clEnqueueMapBuffer(q, out, CL_TRUE, CL_MAP_WRITE, 4096, 8192, 0, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(prefetched(0) == before);
    std::memset(p, 7, 8192);
    REQUIRE_CL(clEnqueueUnmapMemObject(q, out, p, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    CHECK(prefetched(0) == before + 8192);
    // A rect write: the bytes it spans (3 rows of 128 bytes, 1024 apart).
    before = prefetched(0);
    const size_t bufferOrigin[3] = {64, 2, 0}, hostOrigin[3] = {0, 0, 0}, region[3] = {128, 3, 1};
    REQUIRE_CL(clEnqueueWriteBufferRect(q, out, CL_TRUE, bufferOrigin, hostOrigin, region, 1024, 0,
                                        128, 0, host.data(), 0, nullptr, nullptr));
    CHECK(prefetched(0) == before + 128 + 2 * 1024);
    // clEnqueueMigrateMemObjects: to the host, then back.
    before = prefetched(0);
    REQUIRE_CL(
        clEnqueueMigrateMemObjects(q, 1, &out, CL_MIGRATE_MEM_OBJECT_HOST, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    CHECK(prefetched(-1) == mib);
    REQUIRE_CL(clEnqueueMigrateMemObjects(q, 1, &out, 0, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q));
    CHECK(prefetched(0) == before + mib);
    // A prefetch is a hint: the driver refusing it fails nothing.
    fake.fail("cuMemPrefetchAsync", 1); // CUDA_ERROR_INVALID_VALUE
    cl_mem more = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    CHECK(err == CL_SUCCESS);
    CHECK(clEnqueueMigrateMemObjects(q, 1, &more, 0, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(q) == CL_SUCCESS);
    fake.fail("cuMemPrefetchAsync", 0);
    for (cl_mem m : {out, in, app, more})
        clReleaseMemObject(m);
    clReleaseCommandQueue(q);
}

TEST_CASE("each command queue runs on a stream of its own", "[nvidia][fake-driver]") {
    NbodyOnH100 nb(h100());
    cl_kernel k = nb.kernel;
    cl_command_queue q1 = nb.queue(), q2 = nb.queue();
    Fake fake;
    const size_t global = 1024, local = 256;
    for (cl_command_queue q : {q1, q2, q1, q2}) {
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(q));
    }
    REQUIRE(fake.launchCount() == 4);
    CHECK(fake.launchAt(0)->stream != 0);
    CHECK(fake.launchAt(0)->stream != fake.launchAt(1)->stream);
    CHECK(fake.launchAt(0)->stream == fake.launchAt(2)->stream);
    CHECK(fake.launchAt(1)->stream == fake.launchAt(3)->stream);
    // A queue released gives its stream to the next one: streams do not pile up.
    const unsigned second = fake.launchAt(1)->stream;
    const int made = fake.calls("cuStreamCreate");
    clReleaseCommandQueue(q2);
    cl_command_queue q3 = nb.queue();
    REQUIRE_CL(clEnqueueNDRangeKernel(q3, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(q3));
    REQUIRE(fake.launchCount() == 5);
    CHECK(fake.launchAt(4)->stream == second);
    CHECK(fake.calls("cuStreamCreate") == made);
    clReleaseCommandQueue(q1);
    clReleaseCommandQueue(q3);
}

namespace {
/// Which thread submitted each launch (the fake's launch hook runs in cuLaunchKernel).
struct LaunchThreads {
    std::mutex mutex;
    std::vector<std::thread::id> ids;
    static void hook(const DuetFakeLaunch*, void* user) {
        auto* self = static_cast<LaunchThreads*>(user);
        std::lock_guard lock(self->mutex);
        self->ids.push_back(std::this_thread::get_id());
    }
};
} // namespace

TEST_CASE("an idle queue launches in the enqueue call; a busy one, or one the application "
          "fills between waits, on its worker; on the same stream and in order",
          "[nvidia][fake-driver]") {
    NbodyOnH100 nb(h100());
    cl_kernel k = nb.kernel;
    cl_command_queue q = nb.queue();
    Fake fake;
    LaunchThreads threads;
    fake.onLaunch(&LaunchThreads::hook, &threads);
    const size_t global = 1024, local = 256;
    // Idle: the launch is on the stream when clEnqueueNDRangeKernel returns, submitted by the
    // caller; clFinish waits for the stream.
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    CHECK(fake.launchCount() == 1);
    REQUIRE_CL(clFinish(q));
    CHECK(fake.calls("cuStreamSynchronize") == 1);
    // Busy (a command waits for a user event): what follows queues behind it and goes to the
    // stream from the worker, in enqueue order, once the event completes.
    cl_int err = CL_SUCCESS;
    cl_event gate = clCreateUserEvent(nb.ctx, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 1, &gate, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    CHECK(fake.launchCount() == 1);
    REQUIRE_CL(clSetUserEventStatus(gate, CL_COMPLETE));
    REQUIRE_CL(clFinish(q));
    // Idle again, but the application enqueued two launches before its last wait: it keeps its
    // thread free, the worker submits. After a stretch of one launch, the caller's thread again.
    for (int i = 0; i < 2; ++i) {
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
        REQUIRE_CL(clFinish(q));
    }
    fake.onLaunch(nullptr, nullptr);
    REQUIRE(fake.launchCount() == 5);
    REQUIRE(threads.ids.size() == 5);
    const std::thread::id self = std::this_thread::get_id();
    CHECK(threads.ids[0] == self);
    CHECK(threads.ids[1] != self);
    CHECK(threads.ids[2] == threads.ids[1]);
    CHECK(threads.ids[3] == threads.ids[1]);
    CHECK(threads.ids[4] == self);
    // Whichever thread submitted them, one queue's launches share its stream.
    for (unsigned i = 1; i < 5; ++i)
        CHECK(fake.launchAt(i)->stream == fake.launchAt(0)->stream);
    clReleaseEvent(gate);
    clReleaseCommandQueue(q);
}

TEST_CASE("launches in flight hold their kernel and buffers; after clFinish the application's "
          "releases were the last",
          "[nvidia][fake-driver]") {
    cl_device_id dev = h100();
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_program program = buildProgram(ctx, dev, kNbody, "");
    cl_kernel k = clCreateKernel(program, "nbody", &err);
    REQUIRE(err == CL_SUCCESS);
    static std::atomic<int> destroyed;
    destroyed = 0;
    cl_mem bufs[2];
    for (cl_mem& m : bufs) {
        m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, NbodyOnH100::kBytes, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE_CL(clSetMemObjectDestructorCallback(
            m, [](cl_mem, void*) { destroyed.fetch_add(1); }, nullptr));
    }
    const float eps2 = 0.01f;
    REQUIRE_CL(clSetKernelArg(k, 0, sizeof bufs[0], &bufs[0]));
    REQUIRE_CL(clSetKernelArg(k, 1, sizeof bufs[1], &bufs[1]));
    REQUIRE_CL(clSetKernelArg(k, 2, 256 * 16, nullptr));
    REQUIRE_CL(clSetKernelArg(k, 3, sizeof eps2, &eps2));
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    Fake fake;
    // Behind a user event, so that the worker submits them all in one stretch: past the 256
    // commands a queue keeps in flight, so some are completed by the worker, in a batch, and
    // the rest by clFinish.
    cl_event gate = clCreateUserEvent(ctx, &err);
    REQUIRE(err == CL_SUCCESS);
    const size_t global = 1024, local = 256, launches = 300;
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 1, &gate, nullptr));
    for (size_t i = 1; i < launches; ++i)
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    for (cl_mem m : bufs)
        REQUIRE_CL(clReleaseMemObject(m));
    REQUIRE_CL(clReleaseKernel(k));
    // The launches hold them: nothing destroyed, and the kernel keeps its program from a rebuild.
    CHECK(destroyed.load() == 0);
    CHECK_CL_ERR(CL_INVALID_OPERATION, clBuildProgram(program, 1, &dev, "", nullptr, nullptr));
    REQUIRE_CL(clSetUserEventStatus(gate, CL_COMPLETE));
    REQUIRE_CL(clFinish(q));
    CHECK(fake.launchCount() == launches);
    // Every launch's references are gone by the time clFinish returns, none twice.
    CHECK(destroyed.load() == 2);
    CHECK_CL_ERR(CL_SUCCESS, clBuildProgram(program, 1, &dev, "", nullptr, nullptr));
    clReleaseEvent(gate);
    clReleaseCommandQueue(q);
    clReleaseProgram(program);
    clReleaseContext(ctx);
}

TEST_CASE("work nobody waits for completes by itself: events complete and callbacks run",
          "[nvidia][fake-driver]") {
    NbodyOnH100 nb(h100());
    cl_kernel k = nb.kernel;
    cl_command_queue q = nb.queue();
    Fake fake;
    const size_t global = 1024, local = 256;
    std::atomic<int> called{0};
    auto note = [](cl_event, cl_int status, void* data) {
        if (status == CL_COMPLETE)
            static_cast<std::atomic<int>*>(data)->fetch_add(1);
    };
    std::vector<cl_event> events(3);
    for (cl_event& e : events) {
        REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, &e));
        REQUIRE_CL(clSetEventCallback(e, CL_COMPLETE, note, &called));
    }
    // No clFinish, no wait: the queue's worker waits for the stream after a grace period.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (called.load() < 3 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(called.load() == 3);
    for (cl_event e : events) {
        CHECK(eventStatus(e) == CL_COMPLETE);
        clReleaseEvent(e);
    }
    clReleaseCommandQueue(q);
}

TEST_CASE("buffer writes, copies and fills before a launch go to the stream without a wait",
          "[nvidia][fake-driver]") {
    NbodyOnH100 nb(h100());
    cl_kernel k = nb.kernel;
    cl_mem a = nb.pos, b = nb.acc;
    cl_command_queue q = nb.queue();
    cl_int err = CL_SUCCESS;
    std::vector<float> host(1024 * 4);
    for (size_t i = 0; i < host.size(); ++i)
        host[i] = float(i);
    Fake fake;
    const uint32_t zero = 0;
    const size_t global = 1024, local = 256;
    // Held back by a user event so that the queue's thread finds all four at once.
    cl_event gate = clCreateUserEvent(nb.ctx, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clEnqueueFillBuffer(q, b, &zero, 4, 0, 1024 * 16, 1, &gate, nullptr));
    REQUIRE_CL(
        clEnqueueWriteBuffer(q, a, CL_FALSE, 0, 1024 * 16, host.data(), 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueCopyBuffer(q, a, b, 0, 0, 1024 * 16, 0, nullptr, nullptr));
    REQUIRE_CL(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    REQUIRE_CL(clSetUserEventStatus(gate, CL_COMPLETE));
    REQUIRE_CL(clFinish(q));
    REQUIRE(fake.launchCount() == 1);
    CHECK(fake.launchAt(0)->waitsBefore == 0); // nothing waited for before the launch
    CHECK(fake.calls("cuStreamSynchronize") == 1);
    // The data arrived in order: the copy saw the write, not the fill.
    std::vector<float> got(host.size());
    REQUIRE_CL(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 1024 * 16, got.data(), 0, nullptr, nullptr));
    CHECK(got == host);
    clReleaseEvent(gate);
    clReleaseCommandQueue(q);
}

namespace {

/// One printf record as core/printf_buffer.hpp lays it out, for the format "item %d: %s\n" (id
/// 1: the program's only format): the id, the int, the string's length word (0xffffffff for a
/// null pointer) and its characters padded to 4.
void addRecord(std::vector<unsigned char>& out, uint32_t id, int32_t value, const char* s) {
    auto put = [&](const void* p, size_t n) {
        out.insert(out.end(), static_cast<const unsigned char*>(p),
                   static_cast<const unsigned char*>(p) + n);
    };
    put(&id, 4);
    put(&value, 4);
    const uint32_t length = s ? uint32_t(std::strlen(s)) : 0xffffffffu;
    put(&length, 4);
    if (s) {
        put(s, length);
        out.resize((out.size() + 3) & ~size_t(3), 0);
    }
}

/// Plays a printing kernel for the fake driver: at each launch, checks that the printf buffer
/// the launch block names was reset (offset 0, the capacity, the data the last launch wrote
/// zeroed) and writes the next script: its records and the offset the kernels would have left.
struct PrintfPlayer {
    struct Script {
        std::vector<unsigned char> records;
        uint64_t offset; ///< past records.size(): records that did not fit
    };
    std::mutex mutex;
    std::deque<Script> scripts;
    std::vector<uint64_t> buffers; ///< each launch's LaunchBlock::printfBuffer
    std::string problems;          ///< what was wrong with a buffer at a launch
    uint64_t capacity = 0;         ///< CL_DEVICE_PRINTF_BUFFER_SIZE
    size_t written = 0;            ///< data bytes the last script wrote

    void add(std::vector<unsigned char> records, uint64_t offset = 0) {
        std::lock_guard lock(mutex);
        const uint64_t end = offset ? offset : records.size();
        scripts.push_back({std::move(records), end});
    }
    static void hook(const DuetFakeLaunch* l, void* self) {
        auto& p = *static_cast<PrintfPlayer*>(self);
        std::lock_guard lock(p.mutex);
        Block b{};
        std::memcpy(&b, l->param[l->params - 1], sizeof b);
        p.buffers.push_back(b.printfBuffer);
        if (!b.printfBuffer || p.scripts.empty())
            return;
        auto* buffer = reinterpret_cast<unsigned char*>(uintptr_t(b.printfBuffer));
        uint64_t header[2];
        std::memcpy(header, buffer, sizeof header);
        if (header[0] != 0 || header[1] != p.capacity)
            p.problems += "header {" + std::to_string(header[0]) + ", " +
                          std::to_string(header[1]) + "} at a launch\n";
        for (size_t i = 0; i < p.written; ++i)
            if (buffer[16 + i] != 0) {
                p.problems += "data byte " + std::to_string(i) + " not zeroed\n";
                break;
            }
        Script s = std::move(p.scripts.front());
        p.scripts.pop_front();
        std::memcpy(buffer + 16, s.records.data(), s.records.size());
        std::memcpy(buffer, &s.offset, 8);
        p.written = s.records.size();
    }
};

} // namespace

TEST_CASE("printf: records in the launch's printf buffer are printed in order when the kernel "
          "completes; overflow and bad records are reported",
          "[nvidia][fake-driver][printf]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    cl_command_queue q = on.queue();
    cl_program p = buildProgram(on.ctx, on.dev,
                                "__kernel void say(__global int* x) {\n"
                                "    printf(\"item %d: %s\\n\", x[get_global_id(0)], \"name\");\n"
                                "}\n"
                                "__kernel void quiet(__global int* x) { x[0] = 1; }\n");
    cl_kernel say = clCreateKernel(p, "say", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel quiet = clCreateKernel(p, "quiet", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem buf = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(say, 0, sizeof buf, &buf));
    REQUIRE_CL(clSetKernelArg(quiet, 0, sizeof buf, &buf));

    Fake fake;
    PrintfPlayer player;
    player.capacity = deviceValue<size_t>(on.dev, CL_DEVICE_PRINTF_BUFFER_SIZE);
    CHECK(player.capacity >= 1024 * 1024); // the full profile's minimum
    auto hooked = fake.hookLaunches(PrintfPlayer::hook, &player);
    const size_t global = 64;

    // First: the buffer is allocated once per GPU, at the first launch that prints.
    SECTION("a printf buffer the driver cannot allocate fails the launch with the reason") {
        fake.fail("cuMemAlloc_v2", 2);
        cl_event ev = nullptr;
        std::string err2 = captureFd(2, [&] {
            REQUIRE_CL(
                clEnqueueNDRangeKernel(q, say, 1, nullptr, &global, nullptr, 0, nullptr, &ev));
            CHECK(clWaitForEvents(1, &ev) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        });
        fake.fail("cuMemAlloc_v2", 0);
        CHECK(eventStatus(ev) == CL_OUT_OF_RESOURCES);
        CHECK(err2.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos);
        CHECK(err2.find("printf buffer (CL_DEVICE_PRINTF_BUFFER_SIZE)") != std::string::npos);
        clReleaseEvent(ev);
    }

    SECTION("records of several kernels, in buffer order and in command order") {
        std::vector<unsigned char> first, second;
        addRecord(first, 1, 7, "alpha");
        addRecord(first, 1, -3, nullptr);
        addRecord(first, 1, 12, "");
        addRecord(second, 1, 8, "beta gamma");
        player.add(first);
        player.add(second);
        std::string out = captureStdout([&] {
            REQUIRE_CL(
                clEnqueueNDRangeKernel(q, say, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
            REQUIRE_CL(clEnqueueNDRangeKernel(q, quiet, 1, nullptr, &global, nullptr, 0, nullptr,
                                              nullptr));
            cl_event done = nullptr;
            REQUIRE_CL(
                clEnqueueNDRangeKernel(q, say, 1, nullptr, &global, nullptr, 0, nullptr, &done));
            REQUIRE_CL(clWaitForEvents(1, &done)); // printed by the time its event completes
            clReleaseEvent(done);
        });
        CHECK(out == "item 7: alpha\nitem -3: (null)\nitem 12: \nitem 8: beta gamma\n");
        std::lock_guard lock(player.mutex);
        CHECK(player.problems.empty());
        REQUIRE(player.buffers.size() == 3);
        CHECK(player.buffers[0] != 0);
        CHECK(player.buffers[1] == 0); // a kernel that does not print gets no buffer
        CHECK(player.buffers[2] == player.buffers[0]);
        // Device memory, allocated once; reset on the stream before each printing launch.
        CHECK(fake.calls("cuMemAlloc_v2") == 1);
        CHECK(fake.calls("cuMemsetD32Async") == 2);
    }

    SECTION("overflow: what fit is printed, the rest reported; the next launch starts afresh") {
        std::vector<unsigned char> fits, next;
        addRecord(fits, 1, 1, "kept");
        addRecord(fits, 1, 2, "kept too");
        const uint64_t used = fits.size();
        // Then a record too large for the rest: reserved past the capacity, never written.
        player.add(fits, player.capacity + 40);
        addRecord(next, 1, 3, "after");
        player.add(next);
        std::string err2;
        std::string out = captureStdout([&] {
            err2 = captureFd(2, [&] {
                cl_event ev = nullptr;
                REQUIRE_CL(
                    clEnqueueNDRangeKernel(q, say, 1, nullptr, &global, nullptr, 0, nullptr, &ev));
                CHECK(clWaitForEvents(1, &ev) == CL_SUCCESS); // overflow is no failure
                clReleaseEvent(ev);
                REQUIRE_CL(clEnqueueNDRangeKernel(q, say, 1, nullptr, &global, nullptr, 0, nullptr,
                                                  nullptr));
                REQUIRE_CL(clFinish(q));
            });
        });
        CHECK(out == "item 1: kept\nitem 2: kept too\nitem 3: after\n");
        const std::string lost = std::to_string(player.capacity + 40 - used);
        CHECK(err2.find("kernel say: printf output overflowed the " +
                        std::to_string(player.capacity) +
                        "-byte printf buffer (CL_DEVICE_PRINTF_BUFFER_SIZE): " + lost +
                        " bytes of records were dropped after 2 records") != std::string::npos);
        CHECK(on.notes.get().find("printf output overflowed") != std::string::npos);
        std::lock_guard lock(player.mutex);
        CHECK(player.problems.empty()); // the whole data area was zeroed again
    }

    SECTION("a record the decoder cannot read: the ones before it are printed, it is reported") {
        std::vector<unsigned char> records;
        addRecord(records, 1, 5, "good");
        addRecord(records, 9, 6, "unknown id");
        player.add(records);
        std::string err2;
        std::string out = captureStdout([&] {
            err2 = captureFd(2, [&] {
                REQUIRE_CL(clEnqueueNDRangeKernel(q, say, 1, nullptr, &global, nullptr, 0, nullptr,
                                                  nullptr));
                REQUIRE_CL(clFinish(q));
            });
        });
        CHECK(out == "item 5: good\n");
        CHECK(err2.find("printf buffer: a printf record has id 9") != std::string::npos);
    }

    clReleaseMemObject(buf);
    clReleaseKernel(quiet);
    clReleaseKernel(say);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
}

TEST_CASE("DUET_KERNEL_TIMEOUT: each launch gets its own guard record, zeroed before it and read "
          "after it; a stopped one fails its launch only and the queues go on",
          "[nvidia][fake-driver][timeout]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    cl_command_queue q = on.queue();
    cl_command_queue q2 = on.queue();
    const char* source = "__kernel void spin(__global volatile int* x) {\n"
                         "    while (x[0] == 0) x[1]++;\n"
                         "}\n";
    cl_program timed = nullptr, plain = nullptr;
    {
        duet::test::ScopedEnv timeout("DUET_KERNEL_TIMEOUT", "2");
        timed = buildProgram(on.ctx, on.dev, source, "");
    }
    {
        duet::test::ScopedEnv none("DUET_KERNEL_TIMEOUT", nullptr);
        plain = buildProgram(on.ctx, on.dev, source, "");
    }
    cl_kernel spin = clCreateKernel(timed, "spin", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel unwatched = clCreateKernel(plain, "spin", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem buf = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clSetKernelArg(spin, 0, sizeof buf, &buf));
    REQUIRE_CL(clSetKernelArg(unwatched, 0, sizeof buf, &buf));

    Fake fake;
    // The test plays the kernel: a work-item past its deadline marks its launch's record.
    struct Player {
        std::atomic<int> stop{0}; ///< launches left to stop
        std::mutex mutex;
        std::vector<bool> recordClean; ///< per guarded launch: the header was zeroed
        std::vector<uint64_t> bounds;  ///< per guarded launch: argument 0's low, high
        static void hook(const DuetFakeLaunch* l, void* self) {
            auto* p = static_cast<Player*>(self);
            DuetFakeGuardRecord* r = duetFakeGuardRecordOf(l);
            if (!r)
                return;
            std::lock_guard lock(p->mutex);
            p->recordClean.push_back(r->stopped == 0 && r->faultTaken == 0 && r->start == 0);
            p->bounds.push_back(r->bounds(0)[0]);
            p->bounds.push_back(r->bounds(0)[1]);
            if (p->stop.load() > 0) {
                p->stop--;
                r->start = 1000;
                r->stopped = 1;
            }
        }
    } player;
    auto hooked = fake.hookLaunches(Player::hook, &player);

    const size_t global = 64;
    // Stopped: the event fails with CL_OUT_OF_RESOURCES and the message; the next launch of the
    // same kernel on the same queue and on another queue (records zeroed again) and the
    // unwatched one complete.
    player.stop = 1;
    cl_event stopped = nullptr, next = nullptr, beside = nullptr, other = nullptr;
    std::string err2 = captureFd(2, [&] {
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q, spin, 1, nullptr, &global, nullptr, 0, nullptr, &stopped));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q2, spin, 1, nullptr, &global, nullptr, 0, nullptr, &beside));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q, spin, 1, nullptr, &global, nullptr, 0, nullptr, &next));
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q, unwatched, 1, nullptr, &global, nullptr, 0, nullptr, &other));
        REQUIRE_CL(clFinish(q));
        REQUIRE_CL(clFinish(q2));
    });
    CHECK(eventStatus(stopped) == CL_OUT_OF_RESOURCES);
    CHECK(eventStatus(beside) == CL_COMPLETE);
    CHECK(eventStatus(next) == CL_COMPLETE);
    CHECK(eventStatus(other) == CL_COMPLETE);
    INFO(err2 << on.notes.get());
    CHECK(on.notes.get().find("kernel 'spin' ran longer than DUET_KERNEL_TIMEOUT=2 s and was "
                              "stopped after") != std::string::npos);
    // No module global: a record per launch, its header zeroed on the stream before the launch
    // (the fake copies at once), the buffer's bounds in it.
    CHECK(fake.calls("cuModuleGetGlobal_v2") == 0);
    CHECK(fake.launchCount() == 4);
    std::lock_guard lock(player.mutex);
    REQUIRE(player.recordClean.size() == 3);
    CHECK(player.recordClean == std::vector<bool>{true, true, true});
    for (size_t i = 0; i < player.bounds.size(); i += 2)
        CHECK(player.bounds[i + 1] - player.bounds[i] == 64);
    // The unwatched kernel's launch has no record: the launch block is its last parameter.
    CHECK(fake.launchAt(3)->paramBytes[fake.launchAt(3)->params - 1] == 96);
    clReleaseEvent(stopped);
    clReleaseEvent(next);
    clReleaseEvent(beside);
    clReleaseEvent(other);
    clReleaseMemObject(buf);
    clReleaseKernel(spin);
    clReleaseKernel(unwatched);
    clReleaseProgram(timed);
    clReleaseProgram(plain);
    clReleaseCommandQueue(q);
    clReleaseCommandQueue(q2);
}

TEST_CASE("DUET_KERNEL_CHECKS: the launch's bounds go into its guard record; a failure the "
          "kernel records there fails its event with the kernel, argument, offset and work-item",
          "[nvidia][fake-driver][checks]") {
    H100Context on;
    cl_int err = CL_SUCCESS;
    cl_command_queue q = on.queue();
    const char* source = "__kernel void fill(__global int* out, int shift, __local float* tile,\n"
                         "                   __constant int* table) {\n"
                         "    tile[get_local_id(0)] = 1.0f;\n"
                         "    out[get_global_id(0) + shift] = table[0] + (int)tile[0];\n"
                         "}\n"
                         "__kernel void sums(__global int* out) {\n"
                         "    __local int part[16];\n"
                         "    part[get_local_id(0)] = 1;\n"
                         "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                         "    out[get_global_id(0)] = part[0];\n"
                         "}\n";
    cl_program p = nullptr;
    {
        duet::test::ScopedEnv checks("DUET_KERNEL_CHECKS", "1");
        p = buildProgram(on.ctx, on.dev, source, "");
    }
    cl_kernel fill = clCreateKernel(p, "fill", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel sums = clCreateKernel(p, "sums", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem out = clCreateBuffer(on.ctx, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem table = clCreateBuffer(on.ctx, CL_MEM_READ_ONLY, 16, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_buffer_region region{1024, 1024};
    cl_mem part = clCreateSubBuffer(out, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    REQUIRE(err == CL_SUCCESS);
    const int shift = 1;
    REQUIRE_CL(clSetKernelArg(fill, 0, sizeof out, &out));
    REQUIRE_CL(clSetKernelArg(fill, 1, sizeof shift, &shift));
    REQUIRE_CL(clSetKernelArg(fill, 2, 256, nullptr));
    REQUIRE_CL(clSetKernelArg(fill, 3, sizeof table, &table));
    REQUIRE_CL(clSetKernelArg(sums, 0, sizeof part, &part));

    Fake fake;
    // The test plays the kernel: work-item 1023's write of out[1024] fails its check.
    struct Player {
        int plant = 0; ///< 1: a fault in `out`, 2: in the __local variable
        std::vector<uint64_t> fillBounds, sumsBounds;
        static void hook(const DuetFakeLaunch* l, void* self) {
            auto* p = static_cast<Player*>(self);
            DuetFakeGuardRecord* r = duetFakeGuardRecordOf(l);
            if (!r)
                return;
            const bool isFill = std::string(l->kernel) == "fill";
            std::vector<uint64_t>& b = isFill ? p->fillBounds : p->sumsBounds;
            for (unsigned i = 0; i < (isFill ? 4u : 1u); ++i) {
                b.push_back(r->bounds(i)[0]);
                b.push_back(r->bounds(i)[1]);
            }
            if (p->plant == 1 && isFill) {
                r->faultTaken = 1;
                r->faultId = 0;
                r->faultKind = 1; // a write
                r->faultLow = r->bounds(0)[0];
                r->faultHigh = r->bounds(0)[1];
                r->faultAddress = r->faultLow + 4096;
                r->faultBytes = 4;
                r->faultGlobalId[0] = 1023;
                r->stopped = 2;
            } else if (p->plant == 2 && !isFill) {
                r->faultTaken = 1;
                r->faultId = 1; // the argument count + 0: the first variable
                r->faultKind = 0;
                r->faultLow = 0x10;
                r->faultHigh = 0x10 + 64;
                r->faultAddress = 0x10 + 64;
                r->faultBytes = 4;
                r->faultGlobalId[0] = 16;
                r->stopped = 2;
            }
            p->plant = 0;
        }
    } player;
    auto hooked = fake.hookLaunches(Player::hook, &player);

    const size_t global = 1024, local = 64;
    cl_event failed = nullptr, next = nullptr, variable = nullptr;
    player.plant = 1;
    std::string err2 = captureFd(2, [&] {
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q, fill, 1, nullptr, &global, &local, 0, nullptr, &failed));
        REQUIRE_CL(clEnqueueNDRangeKernel(q, fill, 1, nullptr, &global, &local, 0, nullptr, &next));
        REQUIRE_CL(clFinish(q));
    });
    INFO(err2 << on.notes.get());
    CHECK(eventStatus(failed) == CL_OUT_OF_RESOURCES);
    CHECK(eventStatus(next) == CL_COMPLETE);
    // The CPU device's words, naming the kernel, the argument, the offset and the work-item.
    const std::string expected =
        "kernel 'fill': out-of-bounds write of 4 bytes at byte offset 4096 of argument 0 'out' "
        "(__global int*, a buffer of 4096 bytes) by work-item 1023 (global id); the launch was "
        "stopped (DUET_KERNEL_CHECKS)";
    CHECK(on.notes.get().find(expected) != std::string::npos);
    CHECK(err2.find(expected) != std::string::npos);
    // Each launch's bounds: the buffers' bytes, [0, size) of the __local argument, nothing for
    // the value.
    void* outData = nullptr;
    REQUIRE(player.fillBounds.size() == 16);
    for (size_t launch = 0; launch < 2; ++launch) {
        const uint64_t* b = player.fillBounds.data() + 8 * launch;
        CHECK(b[1] - b[0] == 4096);
        CHECK(b[2] == 0);
        CHECK(b[3] == 0);
        CHECK(b[4] == 0);
        CHECK(b[5] == 256);
        CHECK(b[7] - b[6] == 16);
        CHECK(b[0] != 0);
        if (!outData)
            outData = reinterpret_cast<void*>(uintptr_t(b[0]));
    }

    // A kernel-scope __local variable, by name; a sub-buffer's bounds are its own bytes.
    player.plant = 2;
    err2 = captureFd(2, [&] {
        REQUIRE_CL(
            clEnqueueNDRangeKernel(q, sums, 1, nullptr, &global, &local, 0, nullptr, &variable));
        REQUIRE_CL(clFinish(q));
    });
    CHECK(eventStatus(variable) == CL_OUT_OF_RESOURCES);
    CHECK(on.notes.get().find("kernel 'sums': out-of-bounds read of 4 bytes at byte offset 64 of "
                              "variable 'sums.part' (64 bytes) by work-item 16 (global id)") !=
          std::string::npos);
    REQUIRE(player.sumsBounds.size() == 2);
    CHECK(player.sumsBounds[0] == uint64_t(reinterpret_cast<uintptr_t>(outData)) + 1024);
    CHECK(player.sumsBounds[1] == player.sumsBounds[0] + 1024);

    clReleaseEvent(failed);
    clReleaseEvent(next);
    clReleaseEvent(variable);
    clReleaseMemObject(part);
    clReleaseMemObject(table);
    clReleaseMemObject(out);
    clReleaseKernel(fill);
    clReleaseKernel(sums);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
}
