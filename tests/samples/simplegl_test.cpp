// duet-simplegl: the kernel's VBO contents read back from GL with glGetBufferSubData against the
// host formula (Duet sharing, PoCL host copies), and the sample run headless with its PNG checked
// for the mesh where the sine wave puts it.
#include "duet/data_paths.hpp"
#include "support/icd_vendors.hpp"
#include "support/process.hpp"

#include "duet/engine/gfx/capture.hpp"
#include "duet/engine/gfx/gl.hpp"
#include "duet/engine/gfx/orbit_camera.hpp"
#include "duet/engine/platform/surface.hpp"
#include "duet/interop/interop.hpp"
#include "sine_mesh.hpp"

#include <catch.hpp>
#include <glm/glm.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace simplegl = duet::simplegl;
using duet::test::runCommand;

namespace {

using duet::test::platformsUnderTest;

std::unique_ptr<duet::engine::Surface>& surface() {
    static std::unique_ptr<duet::engine::Surface> s;
    if (!s) {
        duet::test::useDuetAndPocl();
        duet::engine::SurfaceDesc desc;
        desc.width = 64;
        desc.height = 64;
        s = duet::engine::createEglSurface(desc);
    }
    return s;
}

std::unique_ptr<duet::interop::Context> contextOn(const std::string& platform) {
    duet::engine::NativeGL n = surface()->native();
    duet::interop::GLHandles h;
    h.api = n.api == duet::engine::NativeGL::Api::Egl ? duet::interop::GLHandles::Api::Egl
                                                      : duet::interop::GLHandles::Api::Glx;
    h.display = n.display;
    h.context = n.context;
    duet::interop::Options options;
    options.platform = platform;
    return duet::interop::Context::create(h, options);
}

GLuint makeBuffer(size_t bytes) {
    GLuint b = 0;
    glGenBuffers(1, &b);
    glBindBuffer(GL_ARRAY_BUFFER, b);
    // Garbage the kernel must overwrite everywhere.
    std::vector<unsigned char> fill(bytes, 0xCD);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(bytes), fill.data(), GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return b;
}

template <typename T> std::vector<T> readBuffer(GLuint b, size_t count) {
    std::vector<T> out(count);
    glBindBuffer(GL_ARRAY_BUFFER, b);
    glGetBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(count * sizeof(T)), out.data());
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return out;
}

int difference(const std::array<std::uint8_t, 4>& a, const std::array<std::uint8_t, 4>& b) {
    return std::max({std::abs(a[0] - b[0]), std::abs(a[1] - b[1]), std::abs(a[2] - b[2])});
}

} // namespace

TEST_CASE("the sine-wave kernel's vertex buffers, read back from GL, match the host formula",
          "[samples][simplegl]") {
    REQUIRE(surface());
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        std::unique_ptr<duet::interop::Context> ctx = contextOn(platform);
        INFO(ctx->description());
        simplegl::SineMesh mesh(ctx->context(), ctx->device(), ctx->queue());
        // Odd sizes: not multiples of the 16x16 work-group, so the bounds check matters.
        simplegl::Wave waves[2];
        waves[0].width = 37;
        waves[0].height = 23;
        waves[0].time = 0.7f;
        waves[0].frequency = 5.0f;
        waves[0].amplitude = 0.6f;
        waves[1] = waves[0];
        waves[1].time = 2.1f;
        waves[1].amplitude = 0.3f;
        size_t count = size_t(waves[0].width) * waves[0].height;
        GLuint positions = makeBuffer(count * sizeof(cl_float4));
        GLuint colors = makeBuffer(count * 4);
        {
            auto sharedPositions = ctx->shareBuffer(positions, CL_MEM_WRITE_ONLY, false);
            auto sharedColors = ctx->shareBuffer(colors, CL_MEM_WRITE_ONLY, false);
            for (const simplegl::Wave& wave : waves) {
                INFO("time " << wave.time << ", amplitude " << wave.amplitude);
                {
                    duet::interop::AcquireScope scope(*ctx,
                                                      {sharedPositions.get(), sharedColors.get()});
                    mesh.write(sharedPositions->mem(), sharedColors->mem(), wave);
                }
                auto gotPos = readBuffer<cl_float4>(positions, count);
                auto gotColor = readBuffer<std::array<std::uint8_t, 4>>(colors, count);
                double worst = 0, highest = 0;
                int worstColor = 0;
                for (int y = 0; y < wave.height; ++y)
                    for (int x = 0; x < wave.width; ++x) {
                        size_t i = size_t(y) * wave.width + x;
                        cl_float4 want = simplegl::referencePosition(wave, x, y);
                        for (int k = 0; k < 4; ++k)
                            worst = std::max(worst, double(std::abs(gotPos[i].s[k] - want.s[k])));
                        highest = std::max(highest, double(want.s[1]));
                        worstColor =
                            std::max(worstColor,
                                     difference(gotColor[i], simplegl::referenceColor(wave, x, y)));
                        CHECK(int(gotColor[i][3]) == 255);
                    }
                INFO("worst position error " << worst << ", colour " << worstColor
                                             << ", highest crest " << highest);
                CHECK(highest > 0.5 * wave.amplitude); // a real wave, so matching means something
                CHECK(worst < 1e-5);
                CHECK(worstColor <= 1); // rounding at .5 boundaries may differ
            }
        }
        glDeleteBuffers(1, &positions);
        glDeleteBuffers(1, &colors);
        CHECK(glGetError() == GL_NO_ERROR);
    }
}

TEST_CASE("duet-simplegl runs headless and draws the mesh where the sine wave puts it",
          "[samples][simplegl]") {
    duet::test::useDuetAndPocl();
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        std::string png = std::filesystem::absolute("simplegl_" + platform.substr(0, 4) + ".png");
        std::filesystem::remove(png);
        const int w = 320, h = 240, frames = 7;
        simplegl::Wave wave;
        wave.width = 40;
        wave.height = 28;
        wave.frequency = 5.0f;
        wave.amplitude = 0.8f;
        const float speed = 3.0f;
        auto run = runCommand(
            duet::programPath(DUET_SIMPLEGL) + " --headless --frames " + std::to_string(frames) +
            " --size 320x240 --no-overlay --set 'mesh width=40' --set 'mesh height=28'" +
            " --set frequency=5 --set amplitude=0.8 --set speed=3 --set draw=points" +
            " --set 'point size=3' --platform '" + platform + "' --screenshot " + png + " --stats");
        INFO(run.output);
        REQUIRE(run.exitCode == 0);
        CHECK(run.output.find("duet-simplegl: OpenCL " + platform + " / ") != std::string::npos);
        CHECK(run.output.find("compute") != std::string::npos);
        REQUIRE(std::filesystem::exists(png));
        duet::engine::Image image = duet::engine::readPng(png);
        REQUIRE(image.width == w);
        REQUIRE(image.height == h);

        // The phase the sample reached: it adds dt x speed each frame, dt = 1/60 with --frames.
        double phase = 0;
        for (int i = 0; i < frames; ++i)
            phase += (1.0 / 60.0) * double(speed);
        wave.time = float(phase);
        duet::engine::OrbitCamera camera;
        camera.distance = simplegl::kCameraDistance;
        camera.yaw = simplegl::kCameraYaw;
        camera.pitch = simplegl::kCameraPitch;
        glm::mat4 mvp = camera.projection(float(w) / float(h)) * camera.view();
        auto project = [&](const cl_float4& p, int& x, int& y) {
            glm::vec4 c = mvp * glm::vec4(p.s[0], p.s[1], p.s[2], 1.0f);
            x = int((c.x / c.w * 0.5f + 0.5f) * w);
            y = int((0.5f - c.y / c.w * 0.5f) * h);
            return x >= 2 && y >= 2 && x < w - 2 && y < h - 2;
        };
        const std::array<std::uint8_t, 4> background = image.at(1, 1);
        CHECK(int(background[0]) < 30); // the clear colour, dark
        auto isLit = [&](int x, int y) { return difference(image.at(x, y), background) > 30; };
        std::vector<unsigned char> nearWave(size_t(w) * h, 0), nearFlat(size_t(w) * h, 0);
        auto mark = [&](std::vector<unsigned char>& mask, int x, int y) {
            for (int dy = -3; dy <= 3; ++dy)
                for (int dx = -3; dx <= 3; ++dx) {
                    int xx = x + dx, yy = y + dy;
                    if (xx >= 0 && yy >= 0 && xx < w && yy < h)
                        mask[size_t(yy) * w + xx] = 1;
                }
        };
        simplegl::Wave flat = wave;
        flat.amplitude = 0.0f;
        int inView = 0, colourMatch = 0;
        for (int gy = 0; gy < wave.height; ++gy)
            for (int gx = 0; gx < wave.width; ++gx) {
                int x, y, fx, fy;
                if (project(simplegl::referencePosition(flat, gx, gy), fx, fy))
                    mark(nearFlat, fx, fy);
                if (!project(simplegl::referencePosition(wave, gx, gy), x, y))
                    continue;
                ++inView;
                mark(nearWave, x, y);
                // The point's own colour (the kernel's) near its projection; a nearer point may
                // cover it, so the test asks this of most vertices, not all.
                auto want = simplegl::referenceColor(wave, gx, gy);
                int best = 255;
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx)
                        best = std::min(best, difference(image.at(x + dx, y + dy), want));
                colourMatch += best <= 12;
            }
        int lit = 0, stray = 0, offFlat = 0;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                if (isLit(x, y)) {
                    ++lit;
                    stray += !nearWave[size_t(y) * w + x];
                    offFlat += !nearFlat[size_t(y) * w + x];
                }
        int vertices = wave.width * wave.height;
        INFO(inView << " of " << vertices << " vertices in view, " << colourMatch
                    << " with their colour; " << lit << " lit pixels, " << stray
                    << " away from every vertex, " << offFlat << " away from the flat grid");
        CHECK(inView > vertices * 9 / 10);
        CHECK(colourMatch >= inView * 85 / 100);
        CHECK(lit > vertices * 3); // not blank: 3x3 points
        CHECK(stray <= lit / 100); // nothing drawn where no vertex is
        CHECK(offFlat >= lit / 5); // and the heights are there: a flat grid would not pass

        if (platform == "Duet") {
            // The same run on the GCN model (--device GCN): its kernel fills the GL buffers, so
            // the picture is the CPU device's up to float rounding of the sine (a vertex a
            // pixel away at most).
            std::string gcnPng = std::filesystem::absolute("simplegl_gcn.png");
            std::filesystem::remove(gcnPng);
            auto gcnRun = runCommand(
                duet::programPath(DUET_SIMPLEGL) + " --headless --frames " +
                std::to_string(frames) +
                " --size 320x240 --no-overlay --set 'mesh width=40' --set 'mesh height=28'" +
                " --set frequency=5 --set amplitude=0.8 --set speed=3 --set draw=points" +
                " --set 'point size=3' --platform Duet --device GCN --screenshot " + gcnPng);
            INFO(gcnRun.output);
            REQUIRE(gcnRun.exitCode == 0);
            CHECK(gcnRun.output.find("duet-simplegl: OpenCL Duet / GCN gfx900") !=
                  std::string::npos);
            duet::engine::Image gcn = duet::engine::readPng(gcnPng);
            REQUIRE(gcn.width == w);
            REQUIRE(gcn.height == h);
            int differ = 0;
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x)
                    differ += difference(gcn.at(x, y), image.at(x, y)) > 12;
            INFO("GCN vs CPU: " << differ << " of " << lit << " lit pixels differ");
            CHECK(differ <= lit / 100);
        }
    }
}

TEST_CASE("duet-simplegl draws a lit surface and rejects a bad mesh size", "[samples][simplegl]") {
    duet::test::useDuetAndPocl();
    std::string png = std::filesystem::absolute("simplegl_surface.png");
    std::filesystem::remove(png);
    auto run = runCommand(duet::programPath(DUET_SIMPLEGL) +
                          " --headless --frames 3 --size 160x120 --no-overlay --platform Duet"
                          " --screenshot " +
                          png);
    INFO(run.output);
    REQUIRE(run.exitCode == 0);
    duet::engine::Image image = duet::engine::readPng(png);
    auto background = image.at(0, 0);
    int covered = 0;
    for (int y = 0; y < image.height; ++y)
        for (int x = 0; x < image.width; ++x)
            covered += difference(image.at(x, y), background) > 30;
    INFO(covered << " of " << image.width * image.height << " pixels covered by the surface");
    CHECK(covered > image.width * image.height / 5);
    CHECK(difference(image.at(image.width / 2, image.height / 2), background) > 30);

    auto bad = runCommand(duet::programPath(DUET_SIMPLEGL) +
                          " --headless --frames 1 --size 64x64 --platform Duet"
                          " --set 'mesh width=1'");
    INFO(bad.output);
    CHECK(bad.exitCode == 2);
    CHECK(bad.output.find("mesh width") != std::string::npos);
}
