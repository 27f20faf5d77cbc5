// Image and sampler API tests: formats list, creation (every descriptor error), info, read/
// write/copy/fill/map round trips and their argument checks, images over buffers, samplers.
#include "support/cl_test.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

using namespace duet::test;

namespace {

cl_image_desc desc2d(size_t w, size_t h, size_t rowPitch = 0) {
    cl_image_desc d{};
    d.image_type = CL_MEM_OBJECT_IMAGE2D;
    d.image_width = w;
    d.image_height = h;
    d.image_row_pitch = rowPitch;
    return d;
}

cl_image_desc desc3d(size_t w, size_t h, size_t dp) {
    cl_image_desc d{};
    d.image_type = CL_MEM_OBJECT_IMAGE3D;
    d.image_width = w;
    d.image_height = h;
    d.image_depth = dp;
    return d;
}

constexpr cl_image_format kRgba8{CL_RGBA, CL_UNORM_INT8};

cl_int createError(cl_context ctx, cl_mem_flags flags, const cl_image_format* f,
                   const cl_image_desc* d, void* host) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateImage(ctx, flags, f, d, host, &err);
    if (m)
        clReleaseMemObject(m);
    return err;
}

template <class T> T imageInfo(cl_mem m, cl_image_info p) {
    T v{};
    size_t size = 0;
    REQUIRE_CL(clGetImageInfo(m, p, sizeof v, &v, &size));
    CHECK(size == sizeof v);
    return v;
}

} // namespace

TEST_CASE("the device reports image support and the image extensions", "[image][api]") {
    cl_device_id d = defaultDevice();
    cl_bool images = CL_FALSE;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr));
    CHECK(images == CL_TRUE);
    std::string ext = deviceString(d, CL_DEVICE_EXTENSIONS);
    for (const char* e : {"cl_khr_3d_image_writes", "cl_khr_depth_images",
                          "cl_khr_image2d_from_buffer", "cl_khr_srgb_image_writes"})
        CHECK(ext.find(e) != std::string::npos);
    size_t w2 = 0;
    REQUIRE_CL(clGetDeviceInfo(d, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof w2, &w2, nullptr));
    CHECK(w2 >= 8192);
}

TEST_CASE("clGetSupportedImageFormats lists exactly the formats that can be created",
          "[image][api]") {
    WithQueue w;
    const cl_mem_object_type types[] = {CL_MEM_OBJECT_IMAGE1D,       CL_MEM_OBJECT_IMAGE1D_BUFFER,
                                        CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_MEM_OBJECT_IMAGE2D,
                                        CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE3D};
    cl_mem buffer = w.buffer(4096);
    for (cl_mem_object_type t : types) {
        cl_uint n = 0;
        REQUIRE_CL(clGetSupportedImageFormats(w.context, CL_MEM_READ_WRITE, t, 0, nullptr, &n));
        std::vector<cl_image_format> list(n);
        cl_uint n2 = 0;
        REQUIRE_CL(
            clGetSupportedImageFormats(w.context, CL_MEM_READ_WRITE, t, n, list.data(), &n2));
        CHECK(n2 == n);
        const bool depthType = t == CL_MEM_OBJECT_IMAGE2D || t == CL_MEM_OBJECT_IMAGE2D_ARRAY;
        // R, RG, RGBA x 12 types; BGRA x 4; sRGBA, sBGRA; depth x 2 on 2D types.
        CHECK(n == 3 * 12 + 4 + 2 + (depthType ? 2 : 0));
        // The 1.2 minimum list is in it.
        auto has = [&](cl_channel_order o, cl_channel_type ty) {
            return std::any_of(list.begin(), list.end(), [&](const cl_image_format& f) {
                return f.image_channel_order == o && f.image_channel_data_type == ty;
            });
        };
        for (cl_channel_type ty :
             {CL_UNORM_INT8, CL_UNORM_INT16, CL_SIGNED_INT8, CL_SIGNED_INT16, CL_SIGNED_INT32,
              CL_UNSIGNED_INT8, CL_UNSIGNED_INT16, CL_UNSIGNED_INT32, CL_HALF_FLOAT, CL_FLOAT})
            CHECK(has(CL_RGBA, ty));
        CHECK(has(CL_BGRA, CL_UNORM_INT8));
        CHECK(has(CL_DEPTH, CL_FLOAT) == depthType);
        // Every listed format creates an image of that type.
        for (const cl_image_format& f : list) {
            cl_image_desc d{};
            d.image_type = t;
            d.image_width = 4;
            d.image_height = 2;
            d.image_depth = 2;
            d.image_array_size = 2;
            if (t == CL_MEM_OBJECT_IMAGE1D_BUFFER)
                d.buffer = buffer;
            INFO("type 0x" << std::hex << t << " order 0x" << f.image_channel_order << " type 0x"
                           << f.image_channel_data_type);
            CHECK_CL_ERR(CL_SUCCESS, createError(w.context, CL_MEM_READ_WRITE, &f, &d, nullptr));
        }
    }
    // Truncated answers and argument errors.
    cl_image_format one{};
    cl_uint n = 0;
    REQUIRE_CL(clGetSupportedImageFormats(w.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 1,
                                          &one, &n));
    CHECK(n > 1);
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetSupportedImageFormats(w.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0,
                                            &one, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetSupportedImageFormats(w.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_BUFFER, 0,
                                            nullptr, &n));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clGetSupportedImageFormats(w.context, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
                                            CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &n));
    CHECK_CL_ERR(CL_INVALID_CONTEXT,
                 clGetSupportedImageFormats(nullptr, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0,
                                            nullptr, &n));
    clReleaseMemObject(buffer);
}

TEST_CASE("clCreateImage argument errors", "[image][api]") {
    WithQueue w;
    cl_context c = w.context;
    cl_image_desc d = desc2d(8, 8);
    unsigned char host[8 * 8 * 4 * 2] = {};

    CHECK_CL_ERR(CL_INVALID_CONTEXT, createError(nullptr, 0, &kRgba8, &d, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 createError(c, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, &kRgba8, &d, nullptr));
    // Format descriptor.
    CHECK_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, createError(c, 0, nullptr, &d, nullptr));
    cl_image_format bad{CL_BGRA, CL_UNORM_INT16}; // BGRA is 8-bit only
    CHECK_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, createError(c, 0, &bad, &d, nullptr));
    bad = {0x1234, CL_FLOAT};
    CHECK_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, createError(c, 0, &bad, &d, nullptr));
    bad = {CL_RGBA, 0x1234};
    CHECK_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, createError(c, 0, &bad, &d, nullptr));
    // Valid formats the device does not support.
    cl_image_format unsupported{CL_RGB, CL_UNORM_SHORT_565};
    CHECK_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED, createError(c, 0, &unsupported, &d, nullptr));
    unsupported = {CL_INTENSITY, CL_FLOAT};
    CHECK_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED, createError(c, 0, &unsupported, &d, nullptr));
    cl_image_format depth{CL_DEPTH, CL_FLOAT};
    cl_image_desc d3 = desc3d(4, 4, 4);
    CHECK_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED, createError(c, 0, &depth, &d3, nullptr));
    CHECK_CL_ERR(CL_SUCCESS, createError(c, 0, &depth, &d, nullptr));

    // Image descriptor.
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, nullptr, nullptr));
    cl_image_desc e = d;
    e.image_type = CL_MEM_OBJECT_BUFFER;
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, &e, nullptr));
    e = d;
    e.image_width = 0;
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, &e, nullptr));
    e = d;
    e.image_height = 0;
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, &e, nullptr));
    e = d3;
    e.image_depth = 0;
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, &e, nullptr));
    e = d;
    e.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY; // array size 0
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, &e, nullptr));
    e = d;
    e.num_mip_levels = 1;
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, &e, nullptr));
    e = d;
    e.num_samples = 2;
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, &e, nullptr));
    e = d;
    e.image_row_pitch = 64; // pitch without host_ptr
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, &e, nullptr));
    e.image_row_pitch = 16; // < width * 4
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR,
                 createError(c, CL_MEM_COPY_HOST_PTR, &kRgba8, &e, host));
    e.image_row_pitch = 34; // not a multiple of the element size
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR,
                 createError(c, CL_MEM_COPY_HOST_PTR, &kRgba8, &e, host));
    e.image_row_pitch = 36;
    CHECK_CL_ERR(CL_SUCCESS, createError(c, CL_MEM_COPY_HOST_PTR, &kRgba8, &e, host));
    e = desc3d(2, 2, 2);
    e.image_slice_pitch = 8; // < row pitch * height
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR,
                 createError(c, CL_MEM_COPY_HOST_PTR, &kRgba8, &e, host));
    cl_mem buffer = w.buffer(1024);
    e = d;
    e.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY;
    e.image_array_size = 2;
    e.buffer = buffer; // only 1D buffer and 2D images may name a buffer
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, &e, nullptr));
    e = {};
    e.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    e.image_width = 16; // no buffer
    CHECK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR, createError(c, 0, &kRgba8, &e, nullptr));

    // Sizes beyond the device limits.
    size_t max2d = 0;
    REQUIRE_CL(
        clGetDeviceInfo(w.device, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof max2d, &max2d, nullptr));
    e = desc2d(max2d + 1, 1);
    CHECK_CL_ERR(CL_INVALID_IMAGE_SIZE, createError(c, 0, &kRgba8, &e, nullptr));
    e = desc3d(4, 4, 1 << 20);
    CHECK_CL_ERR(CL_INVALID_IMAGE_SIZE, createError(c, 0, &kRgba8, &e, nullptr));

    // Host pointer rules.
    CHECK_CL_ERR(CL_INVALID_HOST_PTR, createError(c, CL_MEM_COPY_HOST_PTR, &kRgba8, &d, nullptr));
    CHECK_CL_ERR(CL_INVALID_HOST_PTR, createError(c, CL_MEM_USE_HOST_PTR, &kRgba8, &d, nullptr));
    CHECK_CL_ERR(CL_INVALID_HOST_PTR, createError(c, 0, &kRgba8, &d, host));
    clReleaseMemObject(buffer);

    // Deprecated entry points.
    cl_int err;
    cl_mem m = clCreateImage2D(c, 0, &kRgba8, 0, 4, 0, nullptr, &err);
    CHECK(m == nullptr);
    CHECK(err == CL_INVALID_IMAGE_SIZE);
    m = clCreateImage3D(c, 0, &kRgba8, 4, 4, 1, 0, 0, nullptr, &err);
    CHECK(m == nullptr);
    CHECK(err == CL_INVALID_IMAGE_SIZE);
    m = clCreateImage2D(c, CL_MEM_COPY_HOST_PTR, &kRgba8, 4, 4, 20, host, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(imageInfo<size_t>(m, CL_IMAGE_WIDTH) == 4);
    clReleaseMemObject(m);
    m = clCreateImage3D(c, 0, &kRgba8, 4, 4, 3, 0, 0, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(imageInfo<size_t>(m, CL_IMAGE_DEPTH) == 3);
    clReleaseMemObject(m);
}

TEST_CASE("clGetImageInfo answers every query for every image type", "[image][api]") {
    WithQueue w;
    cl_mem buffer = w.buffer(4096);
    struct Case {
        cl_mem_object_type type;
        size_t w, h, d, layers;
        size_t wantH, wantD, wantLayers, wantSlice;
    };
    const size_t e = 4, row = 5 * e;
    const Case cases[] = {
        {CL_MEM_OBJECT_IMAGE1D, 5, 9, 9, 9, 0, 0, 0, 0},
        {CL_MEM_OBJECT_IMAGE1D_BUFFER, 5, 9, 9, 9, 0, 0, 0, 0},
        {CL_MEM_OBJECT_IMAGE1D_ARRAY, 5, 9, 9, 3, 0, 0, 3, row},
        {CL_MEM_OBJECT_IMAGE2D, 5, 4, 9, 9, 4, 0, 0, 0},
        {CL_MEM_OBJECT_IMAGE2D_ARRAY, 5, 4, 9, 3, 4, 0, 3, row * 4},
        {CL_MEM_OBJECT_IMAGE3D, 5, 4, 2, 9, 4, 2, 0, row * 4},
    };
    for (const Case& k : cases) {
        cl_image_desc d{};
        d.image_type = k.type;
        d.image_width = k.w;
        d.image_height = k.h;
        d.image_depth = k.d;
        d.image_array_size = k.layers;
        if (k.type == CL_MEM_OBJECT_IMAGE1D_BUFFER)
            d.buffer = buffer;
        cl_int err;
        cl_mem m = clCreateImage(w.context, CL_MEM_READ_WRITE, &kRgba8, &d, nullptr, &err);
        INFO("type 0x" << std::hex << k.type);
        REQUIRE(err == CL_SUCCESS);
        cl_image_format f = imageInfo<cl_image_format>(m, CL_IMAGE_FORMAT);
        CHECK(f.image_channel_order == CL_RGBA);
        CHECK(f.image_channel_data_type == CL_UNORM_INT8);
        CHECK(imageInfo<size_t>(m, CL_IMAGE_ELEMENT_SIZE) == 4);
        // Made without a host pointer, the device picks the pitches: at least the texels (the
        // CPU device and the GCN model store rows tight, the NVIDIA device pads them for its
        // texture units), whole texels, the slice a whole number of rows.
        const size_t rowPitch = imageInfo<size_t>(m, CL_IMAGE_ROW_PITCH);
        CHECK(rowPitch >= row);
        CHECK(rowPitch % e == 0);
        CHECK(imageInfo<size_t>(m, CL_IMAGE_SLICE_PITCH) == k.wantSlice / row * rowPitch);
        CHECK(imageInfo<size_t>(m, CL_IMAGE_WIDTH) == 5);
        CHECK(imageInfo<size_t>(m, CL_IMAGE_HEIGHT) == k.wantH);
        CHECK(imageInfo<size_t>(m, CL_IMAGE_DEPTH) == k.wantD);
        CHECK(imageInfo<size_t>(m, CL_IMAGE_ARRAY_SIZE) == k.wantLayers);
        CHECK(imageInfo<cl_mem>(m, CL_IMAGE_BUFFER) ==
              (k.type == CL_MEM_OBJECT_IMAGE1D_BUFFER ? buffer : nullptr));
        CHECK(imageInfo<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS) == 0);
        CHECK(imageInfo<cl_uint>(m, CL_IMAGE_NUM_SAMPLES) == 0);
        cl_mem_object_type t = 0;
        REQUIRE_CL(clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof t, &t, nullptr));
        CHECK(t == k.type);
        size_t small = 0;
        CHECK_CL_ERR(CL_INVALID_VALUE, clGetImageInfo(m, CL_IMAGE_FORMAT, 2, &small, nullptr));
        CHECK_CL_ERR(CL_INVALID_VALUE, clGetImageInfo(m, 0x7777, sizeof small, &small, nullptr));
        clReleaseMemObject(m);
    }
    size_t v;
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT,
                 clGetImageInfo(buffer, CL_IMAGE_WIDTH, sizeof v, &v, nullptr));
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT,
                 clGetImageInfo(nullptr, CL_IMAGE_WIDTH, sizeof v, &v, nullptr));
    clReleaseMemObject(buffer);
}

TEST_CASE("image read/write round trips with pitches and sub-regions", "[image][api]") {
    WithQueue w;
    cl_int err;
    cl_image_desc d = desc3d(6, 5, 4);
    cl_mem im = clCreateImage(w.context, CL_MEM_READ_WRITE, &kRgba8, &d, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    // Whole image, tightly packed.
    std::vector<unsigned char> all(6 * 5 * 4 * 4);
    std::iota(all.begin(), all.end(), 0);
    const size_t o0[3] = {0, 0, 0}, full[3] = {6, 5, 4};
    REQUIRE_CL(
        clEnqueueWriteImage(w.queue, im, CL_TRUE, o0, full, 0, 0, all.data(), 0, nullptr, nullptr));
    // A sub-region read with padded host pitches.
    const size_t o[3] = {1, 2, 1}, r[3] = {3, 2, 2}, hostRow = 20, hostSlice = 64;
    std::vector<unsigned char> sub(hostSlice * 2, 0xee);
    REQUIRE_CL(clEnqueueReadImage(w.queue, im, CL_TRUE, o, r, hostRow, hostSlice, sub.data(), 0,
                                  nullptr, nullptr));
    for (size_t z = 0; z < 2; ++z)
        for (size_t y = 0; y < 2; ++y)
            for (size_t x = 0; x < 12; ++x)
                CHECK(sub[z * hostSlice + y * hostRow + x] ==
                      all[((z + 1) * 5 + (y + 2)) * 24 + 4 + x]);
    CHECK(sub[12] == 0xee); // padding untouched
    // Write the sub-region back shifted and check the whole image.
    const size_t o2[3] = {0, 0, 2};
    REQUIRE_CL(clEnqueueWriteImage(w.queue, im, CL_TRUE, o2, r, hostRow, hostSlice, sub.data(), 0,
                                   nullptr, nullptr));
    std::vector<unsigned char> back(all.size());
    REQUIRE_CL(
        clEnqueueReadImage(w.queue, im, CL_TRUE, o0, full, 0, 0, back.data(), 0, nullptr, nullptr));
    CHECK(back[(2 * 5 + 0) * 24 + 0] == all[((1) * 5 + 2) * 24 + 4]);
    CHECK(back[(2 * 5 + 1) * 24 + 11] == all[((1) * 5 + 3) * 24 + 4 + 11]);
    CHECK(back[0] == all[0]);

    // Argument errors.
    unsigned char px[64];
    const size_t one[3] = {1, 1, 1};
    const size_t outside[3] = {6, 0, 0}, zero[3] = {1, 0, 1};
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueReadImage(w.queue, im, CL_TRUE, outside, one, 0, 0, px,
                                                      0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueReadImage(w.queue, im, CL_TRUE, o0, zero, 0, 0, px, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueReadImage(w.queue, im, CL_TRUE, nullptr, one, 0, 0, px,
                                                      0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueReadImage(w.queue, im, CL_TRUE, o0, one, 0, 0, nullptr,
                                                      0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueReadImage(w.queue, im, CL_TRUE, o0, one, 2, 0, px, 0,
                                                      nullptr, nullptr)); // row pitch < 4
    cl_image_desc d2 = desc2d(4, 4);
    cl_mem im2 = clCreateImage(w.context, CL_MEM_HOST_READ_ONLY, &kRgba8, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const size_t deep[3] = {1, 1, 2}, z1[3] = {0, 0, 1};
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueReadImage(w.queue, im2, CL_TRUE, o0, deep, 0, 0, px, 0,
                                                      nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueReadImage(w.queue, im2, CL_TRUE, z1, one, 0, 0, px, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueReadImage(w.queue, im2, CL_TRUE, o0, one, 0, 4, px, 0,
                                                      nullptr, nullptr)); // 2D: slice pitch 0
    CHECK_CL_ERR(CL_INVALID_OPERATION, clEnqueueWriteImage(w.queue, im2, CL_TRUE, o0, one, 0, 0, px,
                                                           0, nullptr, nullptr));
    CHECK_CL_ERR(CL_SUCCESS,
                 clEnqueueReadImage(w.queue, im2, CL_TRUE, o0, one, 0, 0, px, 0, nullptr, nullptr));
    cl_mem buf = w.buffer(64);
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT,
                 clEnqueueReadImage(w.queue, buf, CL_TRUE, o0, one, 0, 0, px, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE,
                 clEnqueueReadImage(nullptr, im, CL_TRUE, o0, one, 0, 0, px, 0, nullptr, nullptr));
    clReleaseMemObject(buf);
    clReleaseMemObject(im2);
    clReleaseMemObject(im);
}

TEST_CASE("1D array images take layers as the second coordinate", "[image][api]") {
    WithQueue w;
    cl_image_desc d{};
    d.image_type = CL_MEM_OBJECT_IMAGE1D_ARRAY;
    d.image_width = 4;
    d.image_array_size = 3;
    cl_image_format f{CL_R, CL_UNSIGNED_INT8};
    unsigned char px[12];
    std::iota(px, px + 12, 1);
    cl_int err;
    cl_mem im = clCreateImage(w.context, CL_MEM_COPY_HOST_PTR, &f, &d, px, &err);
    REQUIRE(err == CL_SUCCESS);
    const size_t o[3] = {1, 1, 0}, r[3] = {2, 2, 1};
    unsigned char out[16] = {};
    // Host slice pitch steps layers for a 1D array.
    REQUIRE_CL(clEnqueueReadImage(w.queue, im, CL_TRUE, o, r, 2, 8, out, 0, nullptr, nullptr));
    CHECK(out[0] == 6);
    CHECK(out[1] == 7);
    CHECK(out[8] == 10);
    CHECK(out[9] == 11);
    const size_t badLayer[3] = {0, 3, 0}, one[3] = {1, 1, 1};
    CHECK_CL_ERR(CL_INVALID_VALUE, clEnqueueReadImage(w.queue, im, CL_TRUE, badLayer, one, 0, 0,
                                                      out, 0, nullptr, nullptr));
    clReleaseMemObject(im);
}

TEST_CASE("image copies, fills and image<->buffer copies", "[image][api]") {
    WithQueue w;
    cl_int err;
    cl_image_desc d2 = desc2d(8, 6), d3 = desc3d(4, 4, 3);
    std::vector<unsigned char> px(8 * 6 * 4);
    std::iota(px.begin(), px.end(), 0);
    cl_mem a = clCreateImage(w.context, CL_MEM_COPY_HOST_PTR, &kRgba8, &d2, px.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem b = clCreateImage(w.context, 0, &kRgba8, &d3, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const size_t o0[3] = {0, 0, 0};

    // 2D -> slice 2 of a 3D image.
    const size_t so[3] = {2, 1, 0}, dz[3] = {1, 0, 2}, r[3] = {3, 4, 1};
    REQUIRE_CL(clEnqueueCopyImage(w.queue, a, b, so, dz, r, 0, nullptr, nullptr));
    std::vector<unsigned char> got(4 * 4 * 3 * 4);
    const size_t full3[3] = {4, 4, 3};
    REQUIRE_CL(
        clEnqueueReadImage(w.queue, b, CL_TRUE, o0, full3, 0, 0, got.data(), 0, nullptr, nullptr));
    for (size_t y = 0; y < 4; ++y)
        for (size_t x = 0; x < 12; ++x)
            CHECK(got[(2 * 4 + y) * 16 + 4 + x] == px[(1 + y) * 32 + 8 + x]);

    // Errors: format mismatch, overlap, bounds.
    cl_image_format other{CL_RGBA, CL_SIGNED_INT8};
    cl_mem c = clCreateImage(w.context, 0, &other, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK_CL_ERR(CL_IMAGE_FORMAT_MISMATCH,
                 clEnqueueCopyImage(w.queue, a, c, o0, o0, r, 0, nullptr, nullptr));
    const size_t near[3] = {1, 1, 0};
    CHECK_CL_ERR(CL_MEM_COPY_OVERLAP,
                 clEnqueueCopyImage(w.queue, a, a, o0, near, r, 0, nullptr, nullptr));
    const size_t far[3] = {4, 0, 0}, r2[3] = {4, 6, 1};
    CHECK_CL_ERR(CL_SUCCESS, clEnqueueCopyImage(w.queue, a, a, o0, far, r2, 0, nullptr, nullptr));
    const size_t tooFar[3] = {5, 0, 0};
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueCopyImage(w.queue, a, a, o0, tooFar, r2, 0, nullptr, nullptr));

    // Fill: float colour into UNORM8, int colour into SINT8.
    const float red[4] = {1.0f, 0.0f, 0.5f, 0.25f};
    const size_t fo[3] = {1, 1, 0}, fr[3] = {2, 2, 1};
    REQUIRE_CL(clEnqueueFillImage(w.queue, a, red, fo, fr, 0, nullptr, nullptr));
    unsigned char texel[4];
    const size_t one[3] = {1, 1, 1}, at[3] = {2, 2, 0};
    REQUIRE_CL(clEnqueueReadImage(w.queue, a, CL_TRUE, at, one, 0, 0, texel, 0, nullptr, nullptr));
    CHECK(texel[0] == 255);
    CHECK(texel[1] == 0);
    CHECK(texel[2] == 128);
    CHECK(texel[3] == 64);
    const cl_int ints[4] = {-300, 5, 127, -1};
    REQUIRE_CL(clEnqueueFillImage(w.queue, c, ints, o0, one, 0, nullptr, nullptr));
    signed char st[4];
    REQUIRE_CL(clEnqueueReadImage(w.queue, c, CL_TRUE, o0, one, 0, 0, st, 0, nullptr, nullptr));
    CHECK(st[0] == -128);
    CHECK(st[1] == 5);
    CHECK(st[2] == 127);
    CHECK(st[3] == -1);
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueFillImage(w.queue, a, nullptr, o0, one, 0, nullptr, nullptr));
    // Depth fill takes one float.
    cl_image_format depth{CL_DEPTH, CL_UNORM_INT16};
    cl_mem dm = clCreateImage(w.context, 0, &depth, &d2, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const float half = 0.5f;
    REQUIRE_CL(clEnqueueFillImage(w.queue, dm, &half, o0, one, 0, nullptr, nullptr));
    uint16_t dv = 0;
    REQUIRE_CL(clEnqueueReadImage(w.queue, dm, CL_TRUE, o0, one, 0, 0, &dv, 0, nullptr, nullptr));
    CHECK(dv == 32768);

    // Image -> buffer -> image.
    cl_mem buf = w.buffer(256);
    const size_t io[3] = {1, 1, 0}, ir[3] = {3, 2, 1};
    REQUIRE_CL(clEnqueueCopyImageToBuffer(w.queue, a, buf, io, ir, 8, 0, nullptr, nullptr));
    auto bytes = w.read<unsigned char>(buf, 8 + 24);
    std::vector<unsigned char> region(24);
    REQUIRE_CL(
        clEnqueueReadImage(w.queue, a, CL_TRUE, io, ir, 0, 0, region.data(), 0, nullptr, nullptr));
    CHECK(std::equal(region.begin(), region.end(), bytes.begin() + 8));
    REQUIRE_CL(clEnqueueCopyBufferToImage(w.queue, buf, b, 8, o0, ir, 0, nullptr, nullptr));
    std::vector<unsigned char> region2(24);
    REQUIRE_CL(
        clEnqueueReadImage(w.queue, b, CL_TRUE, o0, ir, 0, 0, region2.data(), 0, nullptr, nullptr));
    CHECK(region2 == region);
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueCopyImageToBuffer(w.queue, a, buf, io, ir, 240, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 clEnqueueCopyBufferToImage(w.queue, buf, b, 250, o0, ir, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT,
                 clEnqueueCopyImageToBuffer(w.queue, buf, buf, io, ir, 0, 0, nullptr, nullptr));
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT,
                 clEnqueueCopyBufferToImage(w.queue, a, b, 0, o0, ir, 0, nullptr, nullptr));
    for (cl_mem m : {a, b, c, dm, buf})
        clReleaseMemObject(m);
}

TEST_CASE("mapping an image gives its texels and pitches", "[image][api]") {
    WithQueue w;
    cl_int err;
    cl_image_desc d = desc3d(4, 3, 2);
    cl_mem im = clCreateImage(w.context, 0, &kRgba8, &d, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const size_t o[3] = {1, 1, 1}, r[3] = {2, 2, 1};
    size_t row = 0, slice = 0;
    auto* p = static_cast<unsigned char*>(clEnqueueMapImage(
        w.queue, im, CL_TRUE, CL_MAP_WRITE, o, r, &row, &slice, 0, nullptr, nullptr, &err));
    REQUIRE(err == CL_SUCCESS);
    // The image's own pitches (a device may pad rows: clGetImageInfo says by how much).
    CHECK(row >= 16);
    CHECK(row == imageInfo<size_t>(im, CL_IMAGE_ROW_PITCH));
    CHECK(slice == row * 3);
    CHECK(slice == imageInfo<size_t>(im, CL_IMAGE_SLICE_PITCH));
    cl_uint count = 0;
    REQUIRE_CL(clGetMemObjectInfo(im, CL_MEM_MAP_COUNT, sizeof count, &count, nullptr));
    CHECK(count == 1);
    p[0] = 42;
    p[row + 4] = 43;
    REQUIRE_CL(clEnqueueUnmapMemObject(w.queue, im, p, 0, nullptr, nullptr));
    REQUIRE_CL(clFinish(w.queue));
    unsigned char t[16];
    REQUIRE_CL(clEnqueueReadImage(w.queue, im, CL_TRUE, o, r, 0, 0, t, 0, nullptr, nullptr));
    CHECK(t[0] == 42);
    CHECK(t[12] == 43);
    // Pitches must be asked for; the slice pitch for 3D images and arrays.
    CHECK(clEnqueueMapImage(w.queue, im, CL_TRUE, CL_MAP_READ, o, r, nullptr, &slice, 0, nullptr,
                            nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    CHECK(clEnqueueMapImage(w.queue, im, CL_TRUE, CL_MAP_READ, o, r, &row, nullptr, 0, nullptr,
                            nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    const size_t big[3] = {4, 3, 2};
    CHECK(clEnqueueMapImage(w.queue, im, CL_TRUE, CL_MAP_READ, o, big, &row, &slice, 0, nullptr,
                            nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    clReleaseMemObject(im);
}

TEST_CASE("images over buffers and host memory share their bytes", "[image][api]") {
    WithQueue w;
    cl_int err;
    // cl_khr_image2d_from_buffer with a padded row pitch.
    std::vector<unsigned char> bytes(10 * 3 * 4);
    std::iota(bytes.begin(), bytes.end(), 0);
    cl_mem buf = w.buffer(bytes.size(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes.data());
    cl_image_desc d = desc2d(8, 3, 40);
    d.buffer = buf;
    cl_mem im = clCreateImage(w.context, 0, &kRgba8, &d, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(imageInfo<size_t>(im, CL_IMAGE_ROW_PITCH) == 40);
    cl_mem assoc = nullptr;
    REQUIRE_CL(clGetMemObjectInfo(im, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, nullptr));
    CHECK(assoc == buf);
    unsigned char t[4];
    const size_t o[3] = {1, 2, 0}, one[3] = {1, 1, 1};
    REQUIRE_CL(clEnqueueReadImage(w.queue, im, CL_TRUE, o, one, 0, 0, t, 0, nullptr, nullptr));
    CHECK(t[0] == 84);
    // Too small a buffer, host-pointer flags, contradicting access.
    d = desc2d(8, 4, 40);
    d.buffer = buf;
    CHECK_CL_ERR(CL_INVALID_IMAGE_SIZE, createError(w.context, 0, &kRgba8, &d, nullptr));
    d = desc2d(8, 3, 40);
    d.buffer = buf;
    CHECK_CL_ERR(CL_INVALID_VALUE,
                 createError(w.context, CL_MEM_COPY_HOST_PTR, &kRgba8, &d, bytes.data()));
    cl_mem ro = w.buffer(256, CL_MEM_READ_ONLY);
    d.buffer = ro;
    CHECK_CL_ERR(CL_INVALID_VALUE, createError(w.context, CL_MEM_WRITE_ONLY, &kRgba8, &d, nullptr));
    cl_image_desc b1{};
    b1.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    b1.image_width = 65;
    b1.buffer = ro;
    CHECK_CL_ERR(CL_INVALID_IMAGE_SIZE, createError(w.context, 0, &kRgba8, &b1, nullptr));
    b1.image_width = 64;
    CHECK_CL_ERR(CL_SUCCESS, createError(w.context, 0, &kRgba8, &b1, nullptr));

    // CL_MEM_USE_HOST_PTR: the image is the application's memory, with its pitch.
    std::vector<unsigned char> host(12 * 2, 0);
    cl_image_desc hd = desc2d(2, 2, 12);
    cl_mem hm = clCreateImage(w.context, CL_MEM_USE_HOST_PTR, &kRgba8, &hd, host.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(imageInfo<size_t>(hm, CL_IMAGE_ROW_PITCH) == 12);
    host[12 + 4] = 77;
    const size_t at[3] = {1, 1, 0};
    REQUIRE_CL(clEnqueueReadImage(w.queue, hm, CL_TRUE, at, one, 0, 0, t, 0, nullptr, nullptr));
    CHECK(t[0] == 77);
    for (cl_mem m : {buf, im, ro, hm})
        clReleaseMemObject(m);
}

TEST_CASE("samplers: creation, properties, info and errors", "[image][api][sampler]") {
    WithQueue w;
    cl_int err;
    cl_sampler s =
        clCreateSampler(w.context, CL_TRUE, CL_ADDRESS_MIRRORED_REPEAT, CL_FILTER_LINEAR, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_bool norm = CL_FALSE;
    cl_addressing_mode am = 0;
    cl_filter_mode fm = 0;
    REQUIRE_CL(clGetSamplerInfo(s, CL_SAMPLER_NORMALIZED_COORDS, sizeof norm, &norm, nullptr));
    REQUIRE_CL(clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof am, &am, nullptr));
    REQUIRE_CL(clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, nullptr));
    CHECK(norm == CL_TRUE);
    CHECK(am == CL_ADDRESS_MIRRORED_REPEAT);
    CHECK(fm == CL_FILTER_LINEAR);
    cl_context ctx = nullptr;
    REQUIRE_CL(clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sizeof ctx, &ctx, nullptr));
    CHECK(ctx == w.context);
    clReleaseSampler(s);

    const cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE,
                                           CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, 0};
    s = clCreateSamplerWithProperties(w.context, props, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE_CL(clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof am, &am, nullptr));
    CHECK(am == CL_ADDRESS_CLAMP); // default
    size_t size = 0;
    REQUIRE_CL(clGetSamplerInfo(s, CL_SAMPLER_PROPERTIES, 0, nullptr, &size));
    CHECK(size == sizeof props);
    clReleaseSampler(s);

    CHECK(clCreateSampler(nullptr, CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err) == nullptr);
    CHECK(err == CL_INVALID_CONTEXT);
    CHECK(clCreateSampler(w.context, CL_TRUE, 0x1200, CL_FILTER_NEAREST, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    CHECK(clCreateSampler(w.context, CL_TRUE, CL_ADDRESS_CLAMP, 0x1200, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    CHECK(clCreateSampler(w.context, CL_FALSE, CL_ADDRESS_REPEAT, CL_FILTER_NEAREST, &err) ==
          nullptr);
    CHECK(err == CL_INVALID_VALUE);
    const cl_sampler_properties twice[] = {CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR,
                                           CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0};
    CHECK(clCreateSamplerWithProperties(w.context, twice, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    const cl_sampler_properties unknown[] = {0x7777, 1, 0};
    CHECK(clCreateSamplerWithProperties(w.context, unknown, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    CHECK_CL_ERR(CL_INVALID_SAMPLER, clRetainSampler(nullptr));
    CHECK_CL_ERR(CL_INVALID_SAMPLER,
                 clGetSamplerInfo(nullptr, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, nullptr));
}

TEST_CASE("image and sampler kernel arguments are checked", "[image][api]") {
    WithQueue w;
    cl_program p = buildProgram(w.context, w.device,
                                "kernel void k(read_only image2d_t a, write_only image3d_t b, "
                                "sampler_t s) {}");
    cl_int err;
    cl_kernel k = clCreateKernel(p, "k", &err);
    REQUIRE(err == CL_SUCCESS);
    cl_image_desc d2 = desc2d(4, 4), d3 = desc3d(2, 2, 2);
    cl_mem a = clCreateImage(w.context, CL_MEM_READ_ONLY, &kRgba8, &d2, nullptr, &err);
    cl_mem b = clCreateImage(w.context, CL_MEM_READ_WRITE, &kRgba8, &d3, nullptr, &err);
    cl_mem wo = clCreateImage(w.context, CL_MEM_WRITE_ONLY, &kRgba8, &d2, nullptr, &err);
    cl_sampler s = clCreateSampler(w.context, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err);
    CHECK_CL_ERR(CL_SUCCESS, clSetKernelArg(k, 0, sizeof a, &a));
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 0, sizeof b, &b));  // wrong type
    CHECK_CL_ERR(CL_INVALID_ARG_VALUE, clSetKernelArg(k, 0, sizeof wo, &wo)); // write-only
    CHECK_CL_ERR(CL_SUCCESS, clSetKernelArg(k, 1, sizeof b, &b));
    CHECK_CL_ERR(CL_SUCCESS, clSetKernelArg(k, 2, sizeof s, &s));
    CHECK_CL_ERR(CL_INVALID_SAMPLER, clSetKernelArg(k, 2, sizeof a, &a));
    const size_t one = 1;
    CHECK_CL_ERR(CL_SUCCESS, clEnqueueNDRangeKernel(w.queue, k, 1, nullptr, &one, nullptr, 0,
                                                    nullptr, nullptr));
    REQUIRE_CL(clFinish(w.queue));
    clReleaseSampler(s);
    for (cl_mem m : {a, b, wo})
        clReleaseMemObject(m);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

TEST_CASE("depth and colour images only bind to their own kernel argument types", "[image][api]") {
    duet::test::WithQueue f;
    const char* src = "__kernel void colour(read_only image2d_t i, __global float* o) { o[0] = "
                      "read_imagef(i, (int2)(0, 0)).x; }\n"
                      "__kernel void depth(read_only image2d_depth_t i, __global float* o) { o[0] "
                      "= read_imagef(i, (int2)(0, 0)); }\n";
    cl_program p = duet::test::buildProgram(f.context, f.device, src);
    cl_int err;
    cl_kernel colour = clCreateKernel(p, "colour", &err);
    cl_kernel depth = clCreateKernel(p, "depth", &err);
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 4;
    desc.image_height = 4;
    cl_image_format rgba{CL_RGBA, CL_UNORM_INT8}, dfmt{CL_DEPTH, CL_FLOAT};
    cl_mem ci = clCreateImage(f.context, CL_MEM_READ_ONLY, &rgba, &desc, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem di = clCreateImage(f.context, CL_MEM_READ_ONLY, &dfmt, &desc, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(colour, 0, sizeof di, &di));
    CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(depth, 0, sizeof ci, &ci));
    REQUIRE_CL(clSetKernelArg(colour, 0, sizeof ci, &ci));
    REQUIRE_CL(clSetKernelArg(depth, 0, sizeof di, &di));
    clReleaseMemObject(ci);
    clReleaseMemObject(di);
    clReleaseKernel(colour);
    clReleaseKernel(depth);
    clReleaseProgram(p);
}
