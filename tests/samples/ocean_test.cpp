// duet-ocean: the Phillips spectrum kernel against the host formula and its noise statistics,
// the FFT'd height field's variance against the spectrum (Parseval, exactly and in expectation),
// the displacement kernel's output, and the sample run headless with its sRGB PNG checked for
// sky and water where the camera puts them; on Duet and PoCL.
#include "duet/data_paths.hpp"
#include "support/cl_test.hpp"
#include "support/icd_vendors.hpp"
#include "support/process.hpp"

#include "duet/engine/gfx/capture.hpp"
#include "duet/engine/gfx/orbit_camera.hpp"
#include "ocean_sim.hpp"

#include <catch.hpp>
#include <glm/glm.hpp>

#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

namespace ocean = duet::ocean;

namespace {

using duet::test::CommandResult;
using duet::test::platformsUnderTest;
using duet::test::runCommand;

// A context on the platform's first device with two queues, as the sample has when the context
// holds one device: the spectrum task's (cpuQueue) and the frame's (queue).
struct ClOn : duet::test::ClOn {
    cl_command_queue cpuQueue = nullptr;
    explicit ClOn(const std::string& name) : duet::test::ClOn(name) {
        cl_int err;
        cpuQueue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
    }
    ~ClOn() {
        if (cpuQueue)
            clReleaseCommandQueue(cpuQueue);
    }
};

double waveNumber(int i, int n, double patch) {
    return 2.0 * std::numbers::pi * ocean::waveIndex(i, n) / patch;
}

double srgbEncode(double linear) {
    linear = std::clamp(linear, 0.0, 1.0);
    return linear <= 0.0031308 ? 12.92 * linear : 1.055 * std::pow(linear, 1 / 2.4) - 0.055;
}

} // namespace

TEST_CASE("the Phillips spectrum kernel matches the host formula with standard normal noise",
          "[samples][ocean]") {
    const int n = 256;
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        ClOn cl(platform);
        ocean::Simulator sim(cl.context, cl.device, cl.queue, cl.device, cl.cpuQueue, n);
        ocean::SpectrumParams p;
        sim.requestSpectrum(p);
        CHECK(sim.spectrumGeneration() == 0);
        sim.waitSpectrum();
        REQUIRE(sim.spectrumGeneration() == 1);
        CHECK(!sim.spectrumPending());
        auto h0 = cl.read<cl_float4>(sim.h0(), size_t(n) * n);
        double maxP = 0;
        for (int iy = 0; iy < n; ++iy)
            for (int ix = 0; ix < n; ++ix)
                maxP = std::max(maxP, ocean::phillips(waveNumber(ix, n, p.patch),
                                                      waveNumber(iy, n, p.patch), p));
        REQUIRE(maxP > 0);
        double worstP = 0, sumRatio = 0, sumX = 0, sumX2 = 0, sumX4 = 0;
        int used = 0;
        for (int iy = 0; iy < n; ++iy)
            for (int ix = 0; ix < n; ++ix) {
                const cl_float4& v = h0[size_t(iy) * n + ix];
                double ref =
                    ocean::phillips(waveNumber(ix, n, p.patch), waveNumber(iy, n, p.patch), p);
                worstP = std::max(worstP, std::abs(v.s[2] - ref) / maxP);
                if (ref < 1e-6 * maxP)
                    continue; // float underflow territory; the noise is checked where P is real
                ++used;
                double scale = std::sqrt(ref / 2);
                sumRatio += (double(v.s[0]) * v.s[0] + double(v.s[1]) * v.s[1]) / ref;
                for (double x : {v.s[0] / scale, v.s[1] / scale}) {
                    sumX += x;
                    sumX2 += x * x;
                    sumX4 += x * x * x * x;
                }
            }
        INFO("worst |P - host P| / max P " << worstP << " over " << used << " wave vectors");
        CHECK(worstP < 1e-5);
        CHECK(h0[0].s[0] == 0.0f); // no mean level: P(0) = 0
        CHECK(h0[0].s[1] == 0.0f);
        REQUIRE(used > 10000);
        // |h0|^2 / P is exponential with mean 1; the parts are N(0, 1): mean 0, variance 1,
        // kurtosis 3. Tolerances are about 5 standard errors.
        double m = 2.0 * used;
        double mean = sumX / m, var = sumX2 / m - mean * mean, kurt = sumX4 / m / (var * var);
        INFO("mean |h0|^2/P " << sumRatio / used << ", noise mean " << mean << " variance " << var
                              << " kurtosis " << kurt);
        CHECK(std::abs(sumRatio / used - 1.0) < 5.0 / std::sqrt(double(used)));
        CHECK(std::abs(mean) < 5.0 / std::sqrt(m));
        CHECK(std::abs(var - 1.0) < 5.0 * std::sqrt(2.0 / m));
        CHECK(std::abs(kurt - 3.0) < 5.0 * std::sqrt(24.0 / m) + 0.02);

        // Another seed draws another ocean; the same seed the same one.
        ocean::SpectrumParams other = p;
        other.seed = 7;
        sim.requestSpectrum(other);
        sim.waitSpectrum();
        CHECK(sim.spectrumGeneration() == 2);
        CHECK(sim.params() == other);
        auto h1 = cl.read<cl_float4>(sim.h0(), size_t(n) * n);
        int differ = 0;
        for (size_t i = 0; i < h0.size(); ++i)
            differ += h0[i].s[0] != h1[i].s[0];
        CHECK(differ > n * n / 2);
    }
}

TEST_CASE("a new spectrum is generated on the CPU queue while frames go on with the old one",
          "[samples][ocean]") {
    const int n = 64;
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        ClOn cl(platform);
        ocean::Simulator sim(cl.context, cl.device, cl.queue, cl.device, cl.cpuQueue, n);
        ocean::SpectrumParams first;
        sim.requestSpectrum(first);
        sim.waitSpectrum();
        REQUIRE(sim.spectrumGeneration() == 1);
        auto before = cl.read<cl_float4>(sim.h0(), size_t(n) * n);

        // Hold the CPU queue with a user event, so the next spectrum task cannot start.
        cl_int err;
        cl_event gate = clCreateUserEvent(cl.context, &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(clEnqueueMarkerWithWaitList(cl.cpuQueue, 1, &gate, nullptr) == CL_SUCCESS);
        ocean::SpectrumParams second = first;
        second.windSpeed = 9.0f;
        second.seed = 3;
        sim.requestSpectrum(second);
        CHECK(sim.spectrumPending());

        // Frames neither wait for it nor see a half-written spectrum.
        cl_mem pos = cl.buffer(size_t(n) * n * sizeof(cl_float4));
        cl_mem nrm = cl.buffer(size_t(n) * n * sizeof(cl_float4));
        for (int frame = 0; frame < 3; ++frame) {
            cl_event last = nullptr;
            sim.step(0.1f * frame, 1.0f, pos, nrm, nullptr, &last);
            REQUIRE(clWaitForEvents(1, &last) == CL_SUCCESS);
            clReleaseEvent(last);
            CHECK(sim.spectrumGeneration() == 1);
            CHECK(sim.params() == first);
        }
        auto during = cl.read<cl_float4>(sim.h0(), size_t(n) * n);
        int same = 0;
        for (size_t i = 0; i < during.size(); ++i)
            same += during[i].s[0] == before[i].s[0] && during[i].s[1] == before[i].s[1];
        CHECK(same == n * n);

        // Open the gate: the task runs and the next frame swaps the new spectrum in.
        REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
        REQUIRE(clFinish(cl.cpuQueue) == CL_SUCCESS);
        cl_event last = nullptr;
        sim.step(0.5f, 1.0f, pos, nrm, nullptr, &last);
        REQUIRE(clWaitForEvents(1, &last) == CL_SUCCESS);
        clReleaseEvent(last);
        CHECK(sim.spectrumGeneration() == 2);
        CHECK(sim.params() == second);
        CHECK(!sim.spectrumPending());
        auto after = cl.read<cl_float4>(sim.h0(), size_t(n) * n);
        double worst = 0, maxP = 0;
        for (int iy = 0; iy < n; ++iy)
            for (int ix = 0; ix < n; ++ix) {
                double ref = ocean::phillips(waveNumber(ix, n, second.patch),
                                             waveNumber(iy, n, second.patch), second);
                maxP = std::max(maxP, ref);
                worst = std::max(worst, std::abs(after[size_t(iy) * n + ix].s[2] - ref));
            }
        INFO("worst P error of the new spectrum " << worst << " (max P " << maxP << ")");
        CHECK(maxP > 0);
        CHECK(worst < 1e-5 * maxP);
        clReleaseEvent(gate);
        clReleaseMemObject(pos);
        clReleaseMemObject(nrm);
    }
}

TEST_CASE("the FFT'd height field's variance matches the spectrum (Parseval)", "[samples][ocean]") {
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        ClOn cl(platform);
        for (int n : {256, 512}) {
            INFO("grid " << n);
            ocean::Simulator sim(cl.context, cl.device, cl.queue, cl.device, cl.cpuQueue, n);
            ocean::SpectrumParams p;
            // Short waves on a wide patch: the spectrum's peak spans many modes, so the sum of
            // |h(k)|^2 is close to its expectation (sigma about 5%).
            p.windSpeed = 8.0f;
            p.patch = 400.0f;
            sim.requestSpectrum(p);
            sim.waitSpectrum();
            size_t points = size_t(n) * n;
            cl_mem pos = cl.buffer(points * sizeof(cl_float4));
            cl_mem nrm = cl.buffer(points * sizeof(cl_float4));
            const float t = 3.7f, lambda = 1.0f;
            cl_event first = nullptr, last = nullptr;
            sim.step(t, lambda, pos, nrm, &first, &last);
            REQUIRE(clWaitForEvents(1, &last) == CL_SUCCESS);
            clReleaseEvent(first);
            clReleaseEvent(last);
            auto spec = cl.read<cl_float2>(sim.spectrum(), 2 * points);
            auto field = cl.read<cl_float2>(sim.fields(), 2 * points);
            auto h0 = cl.read<cl_float4>(sim.h0(), points);

            // h(k) from F = h + i Dx: h(k) = (F(k) + conj(F(-k))) / 2.
            double spectralPower = 0, expected = 0, expectedVar = 0;
            for (int iy = 0; iy < n; ++iy)
                for (int ix = 0; ix < n; ++ix) {
                    size_t i = size_t(iy) * n + ix;
                    size_t mirror = size_t((n - iy) & (n - 1)) * n + ((n - ix) & (n - 1));
                    std::complex<double> f(spec[i].s[0], spec[i].s[1]);
                    std::complex<double> g(spec[mirror].s[0], -spec[mirror].s[1]);
                    spectralPower += std::norm((f + g) * 0.5);
                    double q = double(h0[i].s[2]) + double(h0[mirror].s[2]);
                    expected += q;
                    expectedVar += 2 * q * q;
                }
            double sumH2 = 0, worstImag = 0, sumDx2 = 0;
            for (size_t i = 0; i < points; ++i) {
                sumH2 += double(field[i].s[0]) * field[i].s[0];
                sumDx2 += double(field[i].s[1]) * field[i].s[1];
                worstImag = std::max(worstImag, double(std::abs(field[points + i].s[1])));
            }
            double heightVar = sumH2 / double(points);
            double sigma = std::sqrt(expectedVar);
            INFO("mean h^2 " << heightVar << ", sum |h(k)|^2 " << spectralPower
                             << ", expected sum P(k) + P(-k) " << expected << " +- " << sigma);
            // Parseval, exactly (to float round-off): what the FFTs did.
            CHECK(std::abs(heightVar - spectralPower) < 1e-3 * spectralPower);
            // In expectation: what the spectrum and noise kernels did.
            CHECK(sigma < 0.2 * expected);
            CHECK(std::abs(spectralPower - expected) < 5 * sigma);
            CHECK(heightVar > 0.01); // waves tens of centimetres high at least
            CHECK(sumDx2 > 0);
            // Dz is real: its imaginary part is round-off.
            CHECK(worstImag < 1e-4 * std::sqrt(heightVar));

            // The displacement kernel: positions are the grid moved by (-lambda Dx, h,
            // -lambda Dz); normals are unit and point up.
            auto positions = cl.read<cl_float4>(pos, points);
            auto normals = cl.read<cl_float4>(nrm, points);
            double cell = p.patch / n, worstPos = 0, worstLen = 0;
            int up = 0, folded = 0;
            for (int iy = 0; iy < n; ++iy)
                for (int ix = 0; ix < n; ++ix) {
                    size_t i = size_t(iy) * n + ix;
                    double want[3] = {ix * cell - lambda * field[i].s[1], field[i].s[0],
                                      iy * cell - lambda * field[points + i].s[0]};
                    for (int c = 0; c < 3; ++c)
                        worstPos = std::max(worstPos, std::abs(positions[i].s[c] - want[c]));
                    const cl_float4& nv = normals[i];
                    double len = std::sqrt(double(nv.s[0]) * nv.s[0] + double(nv.s[1]) * nv.s[1] +
                                           double(nv.s[2]) * nv.s[2]);
                    worstLen = std::max(worstLen, std::abs(len - 1));
                    up += nv.s[1] > 0.5f;
                    folded += positions[i].s[3] < 0.0f;
                }
            INFO("worst position error " << worstPos << " m, normal length error " << worstLen
                                         << ", " << up << " normals up, " << folded
                                         << " folded points");
            CHECK(worstPos < 1e-3 * p.patch);
            CHECK(worstLen < 1e-4);
            CHECK(up > int(points * 95 / 100));
            clReleaseMemObject(pos);
            clReleaseMemObject(nrm);
        }
    }
}

TEST_CASE("duet-ocean runs headless and draws sky and water where the camera puts them",
          "[samples][ocean]") {
    duet::test::useDuetAndPocl();
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        const int w = 320, h = 240;
        auto runOcean = [&](const std::string& png, const std::string& extra) {
            std::filesystem::remove(png);
            CommandResult run = runCommand(duet::programPath(DUET_OCEAN) +
                                           " --headless --frames 3 --size 320x240 --no-overlay"
                                           " --platform '" +
                                           platform + "' --screenshot " + png + " --stats" + extra);
            INFO(run.output);
            REQUIRE(run.exitCode == 0);
            CHECK(run.output.find("duet-ocean: OpenCL " + platform + " / ") != std::string::npos);
            CHECK(run.output.find("spectrum task on ") != std::string::npos);
            CHECK(run.output.find("compute") != std::string::npos);
            REQUIRE(std::filesystem::exists(png));
            duet::engine::Image image = duet::engine::readPng(png);
            REQUIRE(image.width == w);
            REQUIRE(image.height == h);
            return image;
        };
        std::string tag = platform.substr(0, 4);
        duet::engine::Image image =
            runOcean(std::filesystem::absolute("ocean_" + tag + ".png"), "");

        // The camera the sample uses, looking at the middle of its tiles.
        ocean::View view;
        ocean::SpectrumParams params;
        duet::engine::OrbitCamera camera;
        camera.distance = view.distance;
        camera.yaw = view.yaw;
        camera.pitch = view.pitch;
        camera.nearPlane = view.nearPlane;
        camera.farPlane = view.farPlane;
        camera.target =
            glm::vec3(0.5f * view.tiles * params.patch, 0.0f, 0.5f * view.tiles * params.patch);
        glm::mat4 inv = glm::inverse(camera.projection(float(w) / float(h)) * camera.view());
        glm::vec3 eye = camera.eye();
        auto rayAt = [&](int x, int y) {
            glm::vec4 p = inv * glm::vec4((x + 0.5f) / w * 2 - 1, 1 - (y + 0.5f) / h * 2, 1, 1);
            return glm::normalize(glm::vec3(p) / p.w - eye);
        };

        // Sky: every pixel whose ray points 3 degrees or more above the horizon shows the sky
        // formula, encoded to sRGB by GL (GL_FRAMEBUFFER_SRGB): a linear framebuffer would be
        // far darker.
        ocean::Sky sky;
        int skyPixels = 0, skyWrong = 0, worstSky = 0;
        for (int y = 0; y < h; y += 3)
            for (int x = 0; x < w; x += 3) {
                glm::vec3 d = rayAt(x, y);
                if (d.y < std::sin(0.05f))
                    continue;
                float dir[3] = {d.x, d.y, d.z}, rgb[3];
                ocean::skyColor(sky, dir, rgb);
                auto px = image.at(x, y);
                int err = 0;
                for (int c = 0; c < 3; ++c)
                    err = std::max(
                        err, std::abs(int(px[c]) - int(std::lround(255 * srgbEncode(rgb[c])))));
                ++skyPixels;
                skyWrong += err > 4;
                worstSky = std::max(worstSky, err);
            }
        INFO(skyPixels << " sky pixels, " << skyWrong << " off by more than 4, worst " << worstSky);
        CHECK(skyPixels > 500);
        CHECK(skyWrong == 0);

        // Water: rays 8 degrees or more below the horizon meet the ocean; its pixels are bluish,
        // darker than the sky on average, and vary from pixel to pixel (waves, glints), which
        // a flat sea's smooth Fresnel gradient does not.
        auto waterStats = [&](const duet::engine::Image& img, double& meanR, double& meanG,
                              double& meanB, double& texture) {
            double sum[3] = {}, steps = 0;
            int count = 0, pairs = 0;
            auto luma = [&](int x, int y) {
                auto px = img.at(x, y);
                return 0.2126 * px[0] + 0.7152 * px[1] + 0.0722 * px[2];
            };
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x) {
                    if (rayAt(x, y).y > -std::sin(0.14f))
                        continue;
                    auto px = img.at(x, y);
                    for (int c = 0; c < 3; ++c)
                        sum[c] += px[c];
                    ++count;
                    if (x + 1 < w) {
                        steps += std::abs(luma(x + 1, y) - luma(x, y));
                        ++pairs;
                    }
                }
            REQUIRE(count > w * h / 4);
            meanR = sum[0] / count, meanG = sum[1] / count, meanB = sum[2] / count;
            texture = steps / pairs;
        };
        double r, g, b, texture;
        waterStats(image, r, g, b, texture);
        INFO("water mean RGB " << r << " " << g << " " << b << ", mean |luma step| " << texture);
        CHECK(b > r + 10);
        CHECK(g > r);
        CHECK(b < 200);        // darker than the bright haze of the sky
        CHECK(r + g + b > 60); // not black
        CHECK(texture > 2);

        if (platform == "Duet") {
            // A calm sea (amplitude 0): the same view, flat water, far less variation.
            duet::engine::Image calm =
                runOcean(std::filesystem::absolute("ocean_calm.png"), " --set amplitude=0");
            double cr, cg, cb, calmTexture;
            waterStats(calm, cr, cg, cb, calmTexture);
            INFO("calm water mean |luma step| " << calmTexture);
            CHECK(calmTexture < texture / 4);

            // The tutorial's two-device context: FFTs, evolution and displacement on the GCN
            // device (--device GCN), the spectrum task on the CPU device of the same context.
            // Same simulation, same picture up to float rounding.
            duet::engine::Image gcn =
                runOcean(std::filesystem::absolute("ocean_gcn.png"), " --device GCN");
            CommandResult run = runCommand(duet::programPath(DUET_OCEAN) +
                                           " --headless --frames 1 --size 64x64 --device GCN");
            INFO(run.output);
            CHECK(run.output.find("duet-ocean: OpenCL Duet / GCN gfx900") != std::string::npos);
            CHECK(run.output.find("(a second device of the context)") != std::string::npos);
            double diff = 0;
            int differ = 0;
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x)
                    for (int c = 0; c < 3; ++c) {
                        int d = std::abs(int(gcn.at(x, y)[c]) - int(image.at(x, y)[c]));
                        diff += d;
                        differ += d > 8;
                    }
            INFO("GCN vs CPU: mean |difference| " << diff / (3.0 * w * h) << ", " << differ
                                                  << " channel values off by more than 8");
            CHECK(diff / (3.0 * w * h) < 1.0);
            CHECK(differ < w * h / 100);
        }
    }
}

TEST_CASE("duet-ocean with no usable CL device prints one line and exits non-zero",
          "[samples][ocean]") {
    duet::test::useDuetAndPocl();
    CommandResult run = runCommand(duet::programPath(DUET_OCEAN) +
                                   " --headless --frames 1 --size 64x64 --platform 'no such'");
    INFO(run.output);
    CHECK(run.exitCode != 0);
    CHECK(run.output.find("duet-ocean: interop: no OpenCL device can share with GL renderer") !=
          std::string::npos);
}
