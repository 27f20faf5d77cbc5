// libduet-fft: 1D (every power of two 2..1024, several batch counts) and 2D (256^2..1024^2 and
// uneven shapes) transforms against double-precision host references, round trips, in place,
// and the errors bad sizes and bad buffers give.
#include "support/cl_test.hpp"
#include "support/icd_vendors.hpp"

#include "duet/fft/fft.hpp"

#include <catch.hpp>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace fft = duet::fft;
using cplx = std::complex<double>;

namespace {

// The platforms under test: $DUET_TEST_PLATFORM alone when set, else Duet and PoCL (installed).
std::vector<std::string> platformsUnderTest() {
    std::vector<std::string> names = duet::test::platformsUnderTest();
    const char* env = std::getenv("DUET_TEST_PLATFORM");
    if (env && *env)
        return {env};
    return names;
}

// The platform's default device, a context and a queue, and the device's name for the log.
struct Cl : duet::test::ClOn {
    std::string name;
    explicit Cl(const std::string& platformName)
        : duet::test::ClOn(platformName, CL_DEVICE_TYPE_DEFAULT),
          name(duet::test::deviceString(device, CL_DEVICE_NAME)) {}
};

std::vector<cl_float2> randomData(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<cl_float2> v(n);
    for (auto& x : v)
        x = {{u(rng), u(rng)}};
    return v;
}

// Direct DFT of `n` points `stride` apart starting at `first`; sign -1 forward, +1 inverse.
void dft(const std::vector<cplx>& in, std::vector<cplx>& out, size_t first, size_t n, size_t stride,
         int sign) {
    std::vector<cplx> w(n);
    for (size_t k = 0; k < n; ++k)
        w[k] = std::polar(1.0, sign * 2.0 * std::numbers::pi * double(k) / double(n));
    for (size_t k = 0; k < n; ++k) {
        cplx sum = 0;
        for (size_t j = 0; j < n; ++j)
            sum += in[first + j * stride] * w[(j * k) % n];
        out[first + k * stride] = sum;
    }
}

// Host radix-2 FFT in double (in place, `n` points `stride` apart), for 2D references too big
// for the DFT; checked against dft() below.
void hostFft(std::vector<cplx>& a, size_t first, size_t n, size_t stride, int sign) {
    std::vector<cplx> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = a[first + i * stride];
    for (size_t i = 1, j = 0; i < n; ++i) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j)
            std::swap(v[i], v[j]);
    }
    for (size_t len = 2; len <= n; len <<= 1) {
        for (size_t i = 0; i < n; i += len)
            for (size_t k = 0; k < len / 2; ++k) {
                cplx w = std::polar(1.0, sign * 2.0 * std::numbers::pi * double(k) / double(len));
                cplx x = v[i + k], y = v[i + k + len / 2] * w;
                v[i + k] = x + y;
                v[i + k + len / 2] = x - y;
            }
    }
    for (size_t i = 0; i < n; ++i)
        a[first + i * stride] = v[i];
}

std::vector<cplx> toDouble(const std::vector<cl_float2>& v) {
    std::vector<cplx> out(v.size());
    for (size_t i = 0; i < v.size(); ++i)
        out[i] = {v[i].s[0], v[i].s[1]};
    return out;
}

// Relative L2 error of `got` against `ref`, per transform of `len` points (the worst one).
double worstRelativeError(const std::vector<cl_float2>& got, const std::vector<cplx>& ref,
                          size_t len) {
    double worst = 0;
    for (size_t t = 0; t < ref.size() / len; ++t) {
        double err = 0, norm = 0;
        for (size_t i = t * len; i < (t + 1) * len; ++i) {
            cplx g(got[i].s[0], got[i].s[1]);
            err += std::norm(g - ref[i]);
            norm += std::norm(ref[i]);
        }
        worst = std::max(worst, std::sqrt(err / std::max(norm, 1e-300)));
        if (!std::isfinite(err))
            return INFINITY;
    }
    return worst;
}

std::vector<cl_float2> run(Cl& cl, const fft::Desc& desc, fft::Direction dir,
                           const std::vector<cl_float2>& input, bool inPlace, float scale = 1) {
    std::unique_ptr<fft::Plan> plan;
    fft::Status s = fft::Plan::create(cl.context, cl.device, desc, plan);
    INFO(s.message);
    REQUIRE(s.ok());
    size_t bytes = plan->bytes();
    REQUIRE(bytes == input.size() * sizeof(cl_float2));
    cl_mem in = cl.buffer(bytes);
    cl_mem out = inPlace ? in : cl.buffer(bytes);
    REQUIRE_CL(
        clEnqueueWriteBuffer(cl.queue, in, CL_TRUE, 0, bytes, input.data(), 0, nullptr, nullptr));
    if (!inPlace) { // poison the output so a point the kernels never write shows
        std::vector<cl_float2> nan(input.size(), {{NAN, NAN}});
        REQUIRE_CL(clEnqueueWriteBuffer(cl.queue, out, CL_TRUE, 0, bytes, nan.data(), 0, nullptr,
                                        nullptr));
    }
    cl_event done = nullptr;
    s = plan->enqueue(cl.queue, dir, in, out, scale, 0, nullptr, &done);
    INFO(s.message);
    REQUIRE(s.ok());
    REQUIRE(done);
    REQUIRE_CL(clWaitForEvents(1, &done));
    clReleaseEvent(done);
    std::vector<cl_float2> result(input.size());
    REQUIRE_CL(
        clEnqueueReadBuffer(cl.queue, out, CL_TRUE, 0, bytes, result.data(), 0, nullptr, nullptr));
    clReleaseMemObject(in);
    if (!inPlace)
        clReleaseMemObject(out);
    return result;
}

// Float FFTs are accurate to a few float epsilons times log2 N in the relative L2 norm.
double tolerance(size_t points) {
    return 2e-7 * (4 + std::log2(double(points)));
}

} // namespace

TEST_CASE("the host FFT reference agrees with the DFT", "[fft]") {
    for (size_t n : {2, 8, 64, 512}) {
        std::vector<cplx> a = toDouble(randomData(n, 7));
        std::vector<cplx> ref(n), fast = a;
        dft(a, ref, 0, n, 1, -1);
        hostFft(fast, 0, n, 1, -1);
        double err = 0;
        for (size_t i = 0; i < n; ++i)
            err = std::max(err, std::abs(fast[i] - ref[i]));
        CHECK(err < 1e-9 * double(n));
    }
}

TEST_CASE("1D batched transforms of every power of two 2..1024 match a double DFT", "[fft]") {
    for (const std::string& platform : platformsUnderTest()) {
        Cl cl(platform);
        INFO("platform " << platform << " / " << cl.name);
        for (size_t n = 2; n <= 1024; n *= 2) {
            for (size_t batch : {size_t(1), size_t(3), size_t(64), size_t(129)}) {
                if (n * n * batch > (size_t(1) << 26)) // keep the host DFT quick
                    continue;
                INFO("n " << n << " batch " << batch);
                fft::Desc desc;
                desc.nx = n;
                desc.batch = batch;
                std::vector<cl_float2> x = randomData(n * batch, unsigned(n * 131 + batch));
                std::vector<cplx> xd = toDouble(x);
                for (fft::Direction dir : {fft::Direction::Forward, fft::Direction::Inverse}) {
                    int sign = dir == fft::Direction::Forward ? -1 : 1;
                    INFO((sign < 0 ? "forward" : "inverse"));
                    std::vector<cplx> ref(xd.size());
                    for (size_t b = 0; b < batch; ++b)
                        dft(xd, ref, b * n, n, 1, sign);
                    std::vector<cl_float2> got = run(cl, desc, dir, x, false);
                    double err = worstRelativeError(got, ref, n);
                    INFO("relative L2 error " << err);
                    CHECK(err < tolerance(n));
                }
            }
        }
    }
}

TEST_CASE("2D transforms match a double-precision host 2D FFT", "[fft]") {
    struct Shape {
        size_t nx, ny, batch;
    };
    const Shape shapes[] = {{256, 256, 1}, {512, 512, 1}, {1024, 1024, 1}, {2, 2, 5},
                            {8, 4, 3},     {1024, 2, 2},  {2, 1024, 2},    {64, 128, 3},
                            {16, 256, 1},  {128, 32, 2}};
    for (const std::string& platform : platformsUnderTest()) {
        Cl cl(platform);
        INFO("platform " << platform << " / " << cl.name);
        for (auto columns : {fft::Desc::Columns::Auto, fft::Desc::Columns::Transpose})
            for (const Shape& sh : shapes) {
                INFO("shape " << sh.nx << " x " << sh.ny << " batch " << sh.batch << ", columns "
                              << (columns == fft::Desc::Columns::Auto ? "auto (strided)"
                                                                      : "transposed"));
                fft::Desc desc;
                desc.nx = sh.nx;
                desc.ny = sh.ny;
                desc.batch = sh.batch;
                desc.columns = columns;
                size_t points = sh.nx * sh.ny;
                std::vector<cl_float2> x =
                    randomData(points * sh.batch, unsigned(sh.nx + 7 * sh.ny));
                for (fft::Direction dir : {fft::Direction::Forward, fft::Direction::Inverse}) {
                    int sign = dir == fft::Direction::Forward ? -1 : 1;
                    INFO((sign < 0 ? "forward" : "inverse"));
                    std::vector<cplx> ref = toDouble(x);
                    for (size_t b = 0; b < sh.batch; ++b) {
                        for (size_t y = 0; y < sh.ny; ++y)
                            hostFft(ref, b * points + y * sh.nx, sh.nx, 1, sign);
                        for (size_t c = 0; c < sh.nx; ++c)
                            hostFft(ref, b * points + c, sh.ny, sh.nx, sign);
                    }
                    for (bool inPlace : {false, true}) {
                        INFO("in place " << inPlace);
                        std::vector<cl_float2> got = run(cl, desc, dir, x, inPlace);
                        double err = worstRelativeError(got, ref, points);
                        INFO("relative L2 error " << err);
                        CHECK(err < tolerance(points));
                    }
                }
            }
    }
}

TEST_CASE("forward then scaled inverse gives the input back", "[fft]") {
    for (const std::string& platform : platformsUnderTest()) {
        Cl cl(platform);
        INFO("platform " << platform << " / " << cl.name);
        struct Shape {
            size_t nx, ny, batch;
        };
        for (auto columns : {fft::Desc::Columns::Strided, fft::Desc::Columns::Transpose})
            for (Shape sh :
                 {Shape{1024, 1, 9}, Shape{32, 1, 1000}, Shape{512, 256, 1}, Shape{256, 256, 2}}) {
                INFO("shape " << sh.nx << " x " << sh.ny << " batch " << sh.batch << " transposed "
                              << (columns == fft::Desc::Columns::Transpose));
                fft::Desc desc;
                desc.nx = sh.nx;
                desc.ny = sh.ny;
                desc.batch = sh.batch;
                desc.columns = columns;
                std::unique_ptr<fft::Plan> plan;
                fft::Status s = fft::Plan::create(cl.context, cl.device, desc, plan);
                INFO(s.message);
                REQUIRE(s.ok());
                std::vector<cl_float2> x = randomData(plan->points(), 99);
                cl_mem a = cl.buffer(plan->bytes()), b = cl.buffer(plan->bytes());
                REQUIRE_CL(clEnqueueWriteBuffer(cl.queue, a, CL_TRUE, 0, plan->bytes(), x.data(), 0,
                                                nullptr, nullptr));
                float scale = 1.0f / float(sh.nx * sh.ny);
                s = plan->enqueue(cl.queue, fft::Direction::Forward, a, b);
                REQUIRE(s.ok());
                s = plan->enqueue(cl.queue, fft::Direction::Inverse, b, b, scale);
                REQUIRE(s.ok());
                std::vector<cl_float2> back(x.size()), spectrum(x.size());
                REQUIRE_CL(clEnqueueReadBuffer(cl.queue, b, CL_TRUE, 0, plan->bytes(), back.data(),
                                               0, nullptr, nullptr));
                double worst = 0;
                for (size_t i = 0; i < x.size(); ++i)
                    worst = std::max({worst, double(std::abs(back[i].s[0] - x[i].s[0])),
                                      double(std::abs(back[i].s[1] - x[i].s[1]))});
                INFO("worst round-trip error " << worst);
                CHECK(worst < 1e-5);
                clReleaseMemObject(a);
                clReleaseMemObject(b);
            }
    }
}

TEST_CASE("bad sizes and bad buffers give errors, not crashes", "[fft]") {
    for (const std::string& platform : platformsUnderTest()) {
        Cl cl(platform);
        INFO("platform " << platform << " / " << cl.name);
        std::unique_ptr<fft::Plan> plan;
        auto createError = [&](size_t nx, size_t ny, size_t batch) {
            fft::Desc d;
            d.nx = nx;
            d.ny = ny;
            d.batch = batch;
            fft::Status s = fft::Plan::create(cl.context, cl.device, d, plan);
            INFO(nx << " x " << ny << " batch " << batch << ": " << s.message);
            CHECK(!plan);
            CHECK(!s.message.empty());
            return s.code;
        };
        CHECK_CL_ERR(CL_INVALID_VALUE, createError(3, 1, 1));
        CHECK_CL_ERR(CL_INVALID_VALUE, createError(0, 1, 1));
        CHECK_CL_ERR(CL_INVALID_VALUE, createError(1, 1, 1));
        CHECK_CL_ERR(CL_INVALID_VALUE, createError(1000, 1, 1));
        CHECK_CL_ERR(CL_INVALID_VALUE, createError(256, 96, 1));
        CHECK_CL_ERR(CL_INVALID_VALUE, createError(256, 0, 1));
        CHECK_CL_ERR(CL_INVALID_VALUE, createError(256, 256, 0));
        fft::Desc good;
        good.nx = 64;
        good.ny = 64;
        {
            fft::Status s = fft::Plan::create(nullptr, cl.device, good, plan);
            CHECK_CL_ERR(CL_INVALID_CONTEXT, s.code);
            s = fft::Plan::create(cl.context, nullptr, good, plan);
            CHECK_CL_ERR(CL_INVALID_DEVICE, s.code);
        }
        fft::Status s = fft::Plan::create(cl.context, cl.device, good, plan);
        REQUIRE(s.ok());
        cl_mem ok = cl.buffer(plan->bytes());
        cl_mem small = cl.buffer(plan->bytes() / 2);
        auto enqueueError = [&](cl_command_queue q, cl_mem in, cl_mem out) {
            fft::Status e = plan->enqueue(q, fft::Direction::Forward, in, out);
            INFO(e.message);
            CHECK(!e.message.empty());
            return e.code;
        };
        CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, enqueueError(cl.queue, nullptr, ok));
        CHECK_CL_ERR(CL_INVALID_MEM_OBJECT, enqueueError(cl.queue, ok, nullptr));
        CHECK_CL_ERR(CL_INVALID_BUFFER_SIZE, enqueueError(cl.queue, small, ok));
        CHECK_CL_ERR(CL_INVALID_BUFFER_SIZE, enqueueError(cl.queue, ok, small));
        CHECK_CL_ERR(CL_INVALID_COMMAND_QUEUE, enqueueError(nullptr, ok, ok));
        {
            // A buffer and a queue of another context.
            Cl other(platform);
            cl_mem foreign = other.buffer(plan->bytes());
            CHECK_CL_ERR(CL_INVALID_CONTEXT, enqueueError(cl.queue, foreign, ok));
            CHECK_CL_ERR(CL_INVALID_CONTEXT, enqueueError(other.queue, ok, ok));
            clReleaseMemObject(foreign);
        }
        // The plan still works after the failed calls.
        fft::Status after = plan->enqueue(cl.queue, fft::Direction::Forward, ok, ok);
        INFO(after.message);
        CHECK(after.ok());
        clFinish(cl.queue);
        clReleaseMemObject(ok);
        clReleaseMemObject(small);
    }
}

TEST_CASE("sizes past 1024 work where the device's work-group and local memory hold them",
          "[fft]") {
    for (const std::string& platform : platformsUnderTest()) {
        Cl cl(platform);
        INFO("platform " << platform << " / " << cl.name);
        for (size_t n : {size_t(2048), size_t(4096), size_t(8192)}) {
            INFO("n " << n);
            fft::Desc desc;
            desc.nx = n;
            desc.batch = 3;
            std::unique_ptr<fft::Plan> plan;
            fft::Status s = fft::Plan::create(cl.context, cl.device, desc, plan);
            if (!s) {
                // Unsupported here: said so, in the words of the device's limits.
                INFO(s.message);
                CHECK(s.code == CL_INVALID_VALUE);
                CHECK(s.message.find("the device allows") != std::string::npos);
                continue;
            }
            std::vector<cl_float2> x = randomData(n * desc.batch, unsigned(n));
            std::vector<cplx> ref = toDouble(x);
            for (size_t b = 0; b < desc.batch; ++b)
                hostFft(ref, b * n, n, 1, -1);
            std::vector<cl_float2> got = run(cl, desc, fft::Direction::Forward, x, false);
            double err = worstRelativeError(got, ref, n);
            INFO("relative L2 error " << err);
            CHECK(err < tolerance(n));
        }
    }
}
