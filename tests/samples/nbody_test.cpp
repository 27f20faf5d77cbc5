// duet-nbody: the CL step against a double-precision host reference (N = 256, on Duet and PoCL),
// energy drift, and the sample run headless with its PNG checked for bodies where physics puts
// them.
#include "duet/data_paths.hpp"
#include "support/cl_test.hpp"
#include "support/icd_vendors.hpp"
#include "support/process.hpp"

#include "duet/engine/app/event.hpp"
#include "duet/engine/gfx/capture.hpp"
#include "duet/engine/gfx/orbit_camera.hpp"
#include "nbody_sim.hpp"

#include <catch.hpp>
#include <glm/glm.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace nbody = duet::nbody;
using duet::test::CommandResult;
using duet::test::runCommand;

namespace {

using duet::test::ClOn;
using duet::test::platformsUnderTest;

// Runs `steps` CL steps from `state` and returns the final positions and velocities.
nbody::State runCl(ClOn& cl, const nbody::State& state, int steps, float dt, float eps2) {
    size_t bytes = state.pos.size() * sizeof(cl_float4);
    cl_int err;
    cl_mem pos[2], vel;
    for (cl_mem& p : pos) {
        p = clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                           const_cast<cl_float4*>(state.pos.data()), &err);
        REQUIRE(err == CL_SUCCESS);
    }
    vel = clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                         const_cast<cl_float4*>(state.vel.data()), &err);
    REQUIRE(err == CL_SUCCESS);
    nbody::Simulator sim(cl.context, cl.device, cl.queue);
    int n = int(state.pos.size());
    for (int s = 0; s < steps; ++s)
        sim.step(pos[s % 2], pos[(s + 1) % 2], vel, n, dt, eps2, 1.0f);
    nbody::State out;
    out.pos.resize(n);
    out.vel.resize(n);
    REQUIRE(clEnqueueReadBuffer(cl.queue, pos[steps % 2], CL_TRUE, 0, bytes, out.pos.data(), 0,
                                nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueReadBuffer(cl.queue, vel, CL_TRUE, 0, bytes, out.vel.data(), 0, nullptr,
                                nullptr) == CL_SUCCESS);
    clReleaseMemObject(pos[0]);
    clReleaseMemObject(pos[1]);
    clReleaseMemObject(vel);
    return out;
}

int brightness(const duet::engine::Image& image, int x, int y) {
    auto p = image.at(x, y);
    return std::max({int(p[0]), int(p[1]), int(p[2])});
}

} // namespace

TEST_CASE("the N-body step matches a double-precision host reference for N = 256",
          "[samples][nbody]") {
    const int n = 256;
    const float dt = 0.002f, eps = 0.05f, eps2 = eps * eps;
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        ClOn cl(platform);
        for (nbody::Scene scene : {nbody::Scene::Galaxy, nbody::Scene::Collision}) {
            INFO("scene " << int(scene));
            nbody::State start = nbody::makeScene(scene, n, eps2);
            const int steps = 10;
            nbody::State got = runCl(cl, start, steps, dt, eps2);
            nbody::ReferenceState ref = nbody::toReference(start);
            for (int s = 0; s < steps; ++s)
                nbody::referenceStep(ref, dt, eps2, 1.0);
            double worstPos = 0, worstVel = 0, moved = 0;
            for (int i = 0; i < n; ++i)
                for (int k = 0; k < 3; ++k) {
                    worstPos = std::max(worstPos, std::abs(got.pos[i].s[k] - ref.pos[i][k]));
                    worstVel = std::max(worstVel, std::abs(got.vel[i].s[k] - ref.vel[i][k]));
                    moved = std::max(moved, std::abs(double(start.pos[i].s[k]) - ref.pos[i][k]));
                }
            INFO("worst position error " << worstPos << ", velocity " << worstVel
                                         << ", largest move " << moved);
            CHECK(moved > 1e-3); // the bodies do move, so matching means something
            CHECK(worstPos < 5e-6);
            CHECK(worstVel < 1e-5);
            for (int i = 0; i < n; ++i)
                CHECK(got.pos[i].s[3] == start.pos[i].s[3]); // masses ride along unchanged
        }
    }
}

TEST_CASE("N-body energy drift stays within bounds over 300 steps", "[samples][nbody]") {
    const int n = 256;
    const float dt = 0.001f, eps = 0.05f, eps2 = eps * eps;
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        ClOn cl(platform);
        nbody::State start = nbody::makeScene(nbody::Scene::Galaxy, n, eps2);
        double e0 = nbody::totalEnergy(nbody::toReference(start), eps2);
        nbody::State end = runCl(cl, start, 300, dt, eps2);
        double e1 = nbody::totalEnergy(nbody::toReference(end), eps2);
        double drift = std::abs(e1 - e0) / std::abs(e0);
        INFO("E0 " << e0 << " E1 " << e1 << " relative drift " << drift);
        CHECK(e0 < 0); // a bound system
        CHECK(drift < 1e-3);
    }
}

TEST_CASE("duet-nbody runs headless and draws the bodies where the physics puts them",
          "[samples][nbody]") {
    duet::test::useDuetAndPocl();
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        std::string png = std::filesystem::absolute("nbody_" + platform.substr(0, 4) + ".png");
        std::filesystem::remove(png);
        const int n = 1024, frames = 5, w = 320, h = 240;
        CommandResult run =
            runCommand(duet::programPath(DUET_NBODY) + " --headless --frames " +
                       std::to_string(frames) + " --size 320x240 --no-overlay" +
                       " --set N=" + std::to_string(n) + " --set dt=0.02 --set fog=1 --platform '" +
                       platform + "' --screenshot " + png + " --stats");
        INFO(run.output);
        REQUIRE(run.exitCode == 0);
        CHECK(run.output.find("duet-nbody: OpenCL " + platform + " / ") != std::string::npos);
        CHECK(run.output.find("compute") != std::string::npos);
        CHECK(run.output.find("acquire/release") != std::string::npos);
        if (platform == "Duet") {
            CHECK(run.output.find("fog kernel") != std::string::npos); // the fog pass ran
        } else {
            // PoCL has neither CL_DEPTH nor CL_sRGBA images: the pass is off and says why.
            CHECK(run.output.find("duet-nbody: depth fog off: ") != std::string::npos);
            CHECK(run.output.find("CL_DEPTH") != std::string::npos);
        }
        REQUIRE(std::filesystem::exists(png));
        duet::engine::Image image = duet::engine::readPng(png);
        REQUIRE(image.width == w);
        REQUIRE(image.height == h);

        // Where the bodies are after `frames` steps (dt large enough that they move several
        // pixels, so a picture of the starting positions would not pass).
        const float eps = 0.05f, dt = 0.02f;
        nbody::State start = nbody::makeScene(nbody::Scene::Galaxy, n, eps * eps);
        nbody::ReferenceState ref = nbody::toReference(start);
        for (int s = 0; s < frames; ++s)
            nbody::referenceStep(ref, dt, eps * eps, 1.0);
        duet::engine::OrbitCamera camera;
        camera.distance = nbody::kCameraDistance;
        camera.yaw = nbody::kCameraYaw;
        camera.pitch = nbody::kCameraPitch;
        glm::mat4 mvp = camera.projection(float(w) / float(h)) * camera.view();
        std::vector<unsigned char> nearBody(size_t(w) * h, 0);
        int inView = 0, lit = 0;
        for (const auto& p : ref.pos) {
            glm::vec4 c = mvp * glm::vec4(p[0], p[1], p[2], 1.0);
            int x = int((c.x / c.w * 0.5f + 0.5f) * w), y = int((0.5f - c.y / c.w * 0.5f) * h);
            if (x < 2 || y < 2 || x >= w - 2 || y >= h - 2)
                continue;
            ++inView;
            int best = 0;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx)
                    best = std::max(best, brightness(image, x + dx, y + dy));
            lit += best > 40;
            for (int dy = -4; dy <= 4; ++dy)
                for (int dx = -4; dx <= 4; ++dx) {
                    int xx = x + dx, yy = y + dy;
                    if (xx >= 0 && yy >= 0 && xx < w && yy < h)
                        nearBody[size_t(yy) * w + xx] = 1;
                }
        }
        int bright = 0, strayBright = 0;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                if (brightness(image, x, y) > 40) {
                    ++bright;
                    strayBright += !nearBody[size_t(y) * w + x];
                }
        INFO(inView << " bodies in view, " << lit << " drawn lit; " << bright << " bright pixels, "
                    << strayBright << " away from every body");
        CHECK(inView > n * 9 / 10);
        CHECK(lit >= inView * 95 / 100);
        CHECK(bright > 500);                 // not blank
        CHECK(strayBright <= bright / 100);  // nothing drawn where no body is
        CHECK(brightness(image, 2, 2) < 20); // dark background in the corners
        CHECK(brightness(image, w - 3, h - 3) < 20);

        if (platform == "Duet") {
            // The same run on the GCN model (--device GCN): the bodies' step in GL buffers and
            // the fog pass over GL's depth texture into an sRGB texture both run there, so the
            // picture is the CPU device's up to float rounding.
            std::string gcnPng = std::filesystem::absolute("nbody_gcn.png");
            std::filesystem::remove(gcnPng);
            CommandResult gcnRun = runCommand(
                duet::programPath(DUET_NBODY) + " --headless --frames " + std::to_string(frames) +
                " --size 320x240 --no-overlay --set N=" + std::to_string(n) +
                " --set dt=0.02 --set fog=1 --platform Duet --device GCN --screenshot " + gcnPng +
                " --stats");
            INFO(gcnRun.output);
            REQUIRE(gcnRun.exitCode == 0);
            CHECK(gcnRun.output.find("duet-nbody: OpenCL Duet / GCN gfx900") != std::string::npos);
            CHECK(gcnRun.output.find("fog kernel") != std::string::npos);
            duet::engine::Image gcn = duet::engine::readPng(gcnPng);
            REQUIRE(gcn.width == w);
            REQUIRE(gcn.height == h);
            int differ = 0;
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x)
                    for (int c = 0; c < 3; ++c)
                        differ += std::abs(int(gcn.at(x, y)[c]) - int(image.at(x, y)[c])) > 8;
            INFO("GCN vs CPU: " << differ << " channel values off by more than 8 (" << bright
                                << " bright pixels)");
            CHECK(differ <= bright / 50);
        }
    }
}

TEST_CASE("duet-nbody with no usable CL device prints one line and exits non-zero",
          "[samples][nbody]") {
    duet::test::useDuetAndPocl();
    CommandResult run = runCommand(duet::programPath(DUET_NBODY) +
                                   " --headless --frames 1 --size 64x64 --platform 'no such'");
    INFO(run.output);
    CHECK(run.exitCode != 0);
    CHECK(run.output.find("duet-nbody: interop: no OpenCL device can share with GL renderer") !=
          std::string::npos);
}

namespace {

double srgbToLinear(double v) {
    return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
}
double linearToSrgb(double v) {
    return v <= 0.0031308 ? v * 12.92 : 1.055 * std::pow(v, 1.0 / 2.4) - 0.055;
}

duet::engine::Image runNbody(const std::string& name, const std::string& settings) {
    std::string png = std::filesystem::absolute("fog_" + name + ".png");
    std::filesystem::remove(png);
    CommandResult run = runCommand(duet::programPath(DUET_NBODY) +
                                   " --headless --frames 5 --size 320x240 --no-overlay --set N=512"
                                   " --set dt=0.02 --set 'point size=12' --platform Duet " +
                                   settings + " --screenshot " + png);
    INFO(run.output);
    REQUIRE(run.exitCode == 0);
    REQUIRE(run.output.find("depth fog off") == std::string::npos);
    return duet::engine::readPng(png);
}

} // namespace

TEST_CASE("duet-nbody's depth fog: a CL pass over GL's depth texture dims each body by its "
          "distance, in linear light through sRGB textures",
          "[samples][nbody]") {
    duet::test::useDuetAndPocl();
    const int w = 320, h = 240, n = 512, frames = 5;
    duet::engine::Image plain = runNbody("off", "--set fog=0");
    // Density 0: the pass decodes sRGB and encodes it again, so the picture must not change
    // (a runtime that skipped either conversion would darken or brighten it).
    duet::engine::Image clear = runNbody("clear", "--set fog=1 --set 'fog density=0'");
    const float start = 3.0f, density = 1.0f;
    duet::engine::Image fogged =
        runNbody("dense", "--set fog=1 --set 'fog start=3' --set 'fog density=1'");
    REQUIRE(plain.rgba.size() == size_t(w) * h * 4);
    REQUIRE(clear.rgba.size() == plain.rgba.size());
    REQUIRE(fogged.rgba.size() == plain.rgba.size());
    int worst = 0, lit = 0;
    for (size_t i = 0; i < plain.rgba.size(); ++i) {
        if (i % 4 == 3)
            continue;
        worst = std::max(worst, std::abs(int(plain.rgba[i]) - int(clear.rgba[i])));
        lit += plain.rgba[i] > 40;
    }
    INFO("density 0 against no fog: worst channel difference " << worst);
    CHECK(lit > 500);
    CHECK(worst <= 2);

    // Each body's predicted dimming: its eye distance z from the camera the sample uses, fog
    // keeping exp(-density (z - start)) of the light, mixed in linear light and encoded to sRGB.
    const float eps = 0.05f, dt = 0.02f;
    nbody::State startState = nbody::makeScene(nbody::Scene::Galaxy, n, eps * eps);
    nbody::ReferenceState ref = nbody::toReference(startState);
    for (int s = 0; s < frames; ++s)
        nbody::referenceStep(ref, dt, eps * eps, 1.0);
    duet::engine::OrbitCamera camera;
    camera.distance = nbody::kCameraDistance;
    camera.yaw = nbody::kCameraYaw;
    camera.pitch = nbody::kCameraPitch;
    glm::mat4 view = camera.view(), projection = camera.projection(float(w) / float(h));
    const double fogBlue = srgbToLinear(0.02);
    int measured = 0, predicted = 0;
    std::vector<std::pair<double, double>> keepByDistance; // (z, measured keep)
    for (const auto& p : ref.pos) {
        glm::vec4 eye = view * glm::vec4(p[0], p[1], p[2], 1.0);
        glm::vec4 c = projection * eye;
        int x = int((c.x / c.w * 0.5f + 0.5f) * w), y = int((0.5f - c.y / c.w * 0.5f) * h);
        if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
            continue;
        int before = plain.at(x, y)[2], after = fogged.at(x, y)[2]; // blue: the brightest
        if (before < 80)
            continue; // too dim to measure a ratio
        double z = -eye.z;
        double keep = std::exp(-density * std::max(z - start, 0.0));
        double lin = srgbToLinear(before / 255.0);
        int expected = int(std::lround(255.0 * linearToSrgb(lin * keep + fogBlue * (1 - keep))));
        ++measured;
        // A nearer body's sprite may cover this one's centre (its depth then rules), so not all.
        predicted += std::abs(after - expected) <= 8;
        keepByDistance.emplace_back(z, (srgbToLinear(after / 255.0) - fogBlue) / (lin - fogBlue));
    }
    std::sort(keepByDistance.begin(), keepByDistance.end());
    size_t third = keepByDistance.size() / 3;
    double nearKeep = 0, farKeep = 0;
    for (size_t i = 0; i < third; ++i) {
        nearKeep += keepByDistance[i].second / double(third);
        farKeep += keepByDistance[keepByDistance.size() - 1 - i].second / double(third);
    }
    INFO(measured << " bodies measured, " << predicted << " within 8 levels of the prediction; "
                  << "mean linear light kept: nearest third " << nearKeep << ", farthest third "
                  << farKeep);
    REQUIRE(measured > 100);
    CHECK(predicted >= measured * 9 / 10);
    CHECK(nearKeep > farKeep + 0.2); // depth matters
    CHECK(farKeep < 0.5);            // and fog does dim the far side
}
