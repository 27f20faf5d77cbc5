// duet-gasdyn run headless on Duet and PoCL: the PNG shows Sod's shock tube with the colours the
// exact solution gives at the time the sample reports, a schlieren picture of a 2D Riemann problem
// has its dark shock lines on a light ground, and a bad platform gives one line and a failure.
#include "duet/data_paths.hpp"
#include "support/icd_vendors.hpp"
#include "support/process.hpp"

#include "duet/engine/gfx/capture.hpp"
#include "exact_riemann.hpp"
#include "gasdyn_sim.hpp"

#include <catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace gasdyn = duet::gasdyn;

namespace {

using duet::test::platformsUnderTest;

using duet::test::CommandResult;
using duet::test::runCommand;

int colourDistance(const std::array<std::uint8_t, 4>& p, const std::array<float, 3>& rgb) {
    int worst = 0;
    for (int c = 0; c < 3; ++c)
        worst = std::max(worst, std::abs(int(p[c]) - int(std::lround(rgb[c] * 255.0f))));
    return worst;
}

// The simulated time and step count the sample prints at exit.
bool parseTime(const std::string& output, double& t, long& steps) {
    std::smatch m;
    static const std::regex line("t = ([0-9.]+) after ([0-9]+) steps");
    if (!std::regex_search(output, m, line))
        return false;
    t = std::stod(m[1]);
    steps = std::stol(m[2]);
    return true;
}

} // namespace

TEST_CASE("duet-gasdyn draws Sod's shock tube in the colours of the exact solution",
          "[samples][gasdyn]") {
    duet::test::useDuetAndPocl();
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        std::string png = std::filesystem::absolute("gasdyn_sod_" + platform.substr(0, 4) + ".png");
        std::filesystem::remove(png);
        const int w = 320, h = 240, frames = 6, resolution = 256;
        CommandResult run = runCommand(
            duet::programPath(DUET_GASDYN) + " --headless --frames " + std::to_string(frames) +
            " --size 320x240 --no-overlay --set problem=sod-x --set resolution=" +
            std::to_string(resolution) + " --set 'steps per frame=10' --set field=density" +
            " --platform '" + platform + "' --screenshot " + png + " --stats");
        INFO(run.output);
        REQUIRE(run.exitCode == 0);
        CHECK(run.output.find("duet-gasdyn: OpenCL " + platform + " / ") != std::string::npos);
        CHECK(run.output.find("solver step") != std::string::npos);
        double t = 0;
        long steps = 0;
        REQUIRE(parseTime(run.output, t, steps));
        CHECK(steps == frames * 10);
        CHECK(t > 0.02); // the waves have moved several cells
        CHECK(t < 0.2);  // and not reached the ends of the tube
        REQUIRE(std::filesystem::exists(png));
        duet::engine::Image image = duet::engine::readPng(png);
        REQUIRE(image.width == w);
        REQUIRE(image.height == h);

        // The 4:1 tube fills the width, centred vertically; the bands above and below are the
        // dark clear colour.
        gasdyn::Rect r = gasdyn::letterbox(4.0, w, h);
        REQUIRE(r.w == w);
        CHECK(colourDistance(image.at(w / 2, 5), {0.02f, 0.02f, 0.03f}) <= 2);
        CHECK(colourDistance(image.at(w / 2, h - 6), {0.02f, 0.02f, 0.03f}) <= 2);

        // Along the middle row, away from the waves' edges, each pixel has the colour map's
        // colour for the exact density (range 0.125..1, the untouched end states).
        gasdyn::ExactRiemann exact({1.0, 0.0, 1.0}, {0.125, 0.0, 0.1}, 1.4);
        const double c = std::sqrt(1.4), us = exact.velocityStar();
        const double shock = 0.5 + t * 1.7522, contact = 0.5 + t * us;
        const double cStar = std::sqrt(1.4 * exact.pressureStar() / exact.sample(us - 1e-9).rho);
        const double head = 0.5 - t * c, tail = 0.5 + t * (us - cStar);
        const double edges[4] = {head, tail, contact, shock};
        const double margin = 6.0 / resolution; // numerical smearing, in cells
        int checked = 0, matched = 0, worst = 0;
        std::set<int> colours;
        int row = h / 2;
        for (int px = 0; px < w; ++px) {
            double x = (px + 0.5) / w;
            auto p = image.at(px, row);
            colours.insert(p[0] << 16 | p[1] << 8 | p[2]);
            bool nearEdge = x < margin || x > 1 - margin;
            for (double e : edges)
                nearEdge = nearEdge || std::abs(x - e) < margin;
            if (nearEdge)
                continue;
            double rho = exact.sample((x - 0.5) / t).rho;
            int d = colourDistance(p, gasdyn::colorMap(float((rho - 0.125) / 0.875)));
            ++checked;
            matched += d <= 16;
            worst = std::max(worst, d);
        }
        INFO("t " << t << ": " << matched << " of " << checked
                  << " pixels match the exact solution's colour, worst difference " << worst);
        CHECK(checked > w / 2);
        CHECK(matched >= checked * 95 / 100);
        CHECK(colours.size() > 20); // the fan is a gradient, not a few flat colours
        // Every row of the tube shows the same (1D) picture (PNG rows run from the top).
        int rowsDiffer = 0;
        for (int y = h - r.y - r.h + 2; y < h - r.y - 2; ++y)
            for (int px : {w / 5, w / 2, 4 * w / 5})
                rowsDiffer += image.at(px, y) != image.at(px, row);
        CHECK(rowsDiffer == 0);
    }
}

TEST_CASE("duet-gasdyn's schlieren picture shows dark shock lines on a light ground",
          "[samples][gasdyn]") {
    duet::test::useDuetAndPocl();
    std::string png = std::filesystem::absolute("gasdyn_schlieren.png");
    std::filesystem::remove(png);
    CommandResult run = runCommand(
        duet::programPath(DUET_GASDYN) + " --headless --frames 4 --size 256x256 --no-overlay" +
        " --set problem=lax-liu-3 --set resolution=128 --set 'steps per frame=10'" +
        " --set field=schlieren --platform Duet --screenshot " + png);
    INFO(run.output);
    REQUIRE(run.exitCode == 0);
    duet::engine::Image image = duet::engine::readPng(png);
    REQUIRE(image.width == 256);
    int light = 0, dark = 0, grey = 0;
    for (int y = 0; y < image.height; ++y)
        for (int x = 0; x < image.width; ++x) {
            auto p = image.at(x, y);
            // Schlieren is grey: red and green equal, blue a touch lower.
            grey += std::abs(int(p[0]) - int(p[1])) <= 1 && p[2] <= p[0];
            light += p[0] > 200;
            dark += p[0] < 100;
        }
    int all = image.width * image.height;
    INFO(light << " light, " << dark << " dark, " << grey << " grey of " << all);
    CHECK(grey == all);
    CHECK(light > all / 2);  // smooth flow: almost white
    CHECK(dark > all / 200); // shocks: dark lines
    CHECK(dark < all / 4);
}

TEST_CASE("duet-gasdyn with no usable CL device prints one line and exits non-zero",
          "[samples][gasdyn]") {
    duet::test::useDuetAndPocl();
    CommandResult run = runCommand(duet::programPath(DUET_GASDYN) +
                                   " --headless --frames 1 --size 64x64 --platform 'no such'");
    INFO(run.output);
    CHECK(run.exitCode != 0);
    CHECK(run.output.find("duet-gasdyn: interop: no OpenCL device can share with GL renderer") !=
          std::string::npos);
}
