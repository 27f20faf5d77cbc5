// Headless EGL context, pixels read back, PNG round trip, shader logs, camera maths, and the
// advice a bundle's programs give when the host lacks libEGL.
#include "engine_test_support.hpp"

#include "duet/data_paths.hpp"
#include "duet/engine/app/event.hpp"
#include "duet/engine/error.hpp"
#include "duet/engine/gfx/gl_objects.hpp"
#include "duet/engine/gfx/orbit_camera.hpp"
#include "duet/engine/gfx/shader.hpp"
#include "duet/engine/platform/surface.hpp"

#include <catch.hpp>

#include <glm/glm.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace duet::engine;
using namespace duet::engine::test;

namespace {

/// A headless surface with DUET_EGL_SURFACE set to `mode` while it is created.
std::unique_ptr<Surface> headless(int w, int h, const char* surfaceMode = nullptr) {
    if (surfaceMode)
        setenv("DUET_EGL_SURFACE", surfaceMode, 1);
    else
        unsetenv("DUET_EGL_SURFACE");
    SurfaceDesc desc;
    desc.width = w;
    desc.height = h;
    auto surface = createEglSurface(desc);
    unsetenv("DUET_EGL_SURFACE");
    return surface;
}

} // namespace

TEST_CASE("headless EGL context renders and reads back the expected pixels", "[engine][egl]") {
    std::string mode = GENERATE(as<std::string>{}, "pbuffer", "fbo");
    INFO("DUET_EGL_SURFACE=" << mode);
    auto surface = headless(64, 48, mode.c_str());
    REQUIRE(surface->headless());
    NativeGL native = surface->native();
    CHECK(native.api == NativeGL::Api::Egl);
    CHECK(native.display != nullptr);
    CHECK(native.context != nullptr);
    int w = 0, h = 0;
    surface->framebufferSize(w, h);
    CHECK(w == 64);
    CHECK(h == 48);
    CHECK((surface->framebuffer() != 0) == (mode == "fbo"));
    CHECK(surface->description().find(mode == "fbo" ? "FBO" : "pbuffer") != std::string::npos);

    GLint major = 0;
    glGetIntegerv(GL_MAJOR_VERSION, &major);
    CHECK(major >= 3);
    glBindFramebuffer(GL_FRAMEBUFFER, surface->framebuffer());
    drawTestScene(w, h);
    checkTestScene(readFramebuffer(surface->framebuffer(), surface->readBuffer(), w, h), w, h);
}

TEST_CASE("forced EGL platforms: device and surfaceless work, an unknown one says why",
          "[engine][egl]") {
    setenv("DUET_EGL_PLATFORM", "surfaceless", 1);
    CHECK(headless(8, 8)->description().find("surfaceless") != std::string::npos);
    setenv("DUET_EGL_PLATFORM", "device", 1);
    CHECK(headless(8, 8)->description().find("EGL device") != std::string::npos);
    setenv("DUET_EGL_PLATFORM", "nonsense", 1);
    CHECK_THROWS_WITH(headless(8, 8), Catch::Contains("no OpenGL") &&
                                          Catch::Contains("DUET_EGL_PLATFORM=nonsense"));
    unsetenv("DUET_EGL_PLATFORM");
    CHECK_THROWS_AS(headless(0, 8), Error);
}

TEST_CASE("PNG written and decoded back is the same image", "[engine][png]") {
    Image image{7, 5, {}};
    for (int y = 0; y < image.height; ++y)
        for (int x = 0; x < image.width; ++x)
            for (int c = 0; c < 4; ++c)
                image.rgba.push_back(std::uint8_t(x * 37 + y * 11 + c * 60));
    writePng("roundtrip.png", image);
    Image back = readPng("roundtrip.png");
    CHECK(back.width == 7);
    CHECK(back.height == 5);
    CHECK(back.rgba == image.rgba);
    CHECK(back.at(6, 4) == image.at(6, 4));

    CHECK_THROWS_WITH(writePng("/nonexistent-dir/x.png", image),
                      Catch::Contains("/nonexistent-dir/x.png"));
    CHECK_THROWS_WITH(readPng("missing.png"), Catch::Contains("missing.png"));
    CHECK_THROWS_AS(writePng("empty.png", Image{}), Error);
}

TEST_CASE("a rendered frame captured to PNG decodes to the rendered pixels", "[engine][png][egl]") {
    auto surface = headless(40, 30);
    drawTestScene(40, 30);
    writePng("frame.png", readFramebuffer(surface->framebuffer(), surface->readBuffer(), 40, 30));
    checkTestScene(readPng("frame.png"), 40, 30);
}

TEST_CASE("shader compile errors carry the driver log and the offending line", "[engine][shader]") {
    auto surface = headless(8, 8);
    const char* source = "#version 330 core\n"
                         "out vec4 fragColor;\n"
                         "void main() {\n"
                         "    fragColor = vec4(undefinedThing, 1.0);\n"
                         "}\n";
    try {
        gl::compileShader(GL_FRAGMENT_SHADER, source, "broken.frag");
        FAIL("a shader with an undeclared identifier compiled");
    } catch (const Error& e) {
        std::string text = e.what();
        INFO(text);
        CHECK(text.find("broken.frag") != std::string::npos);
        CHECK(text.find("fragment") != std::string::npos);
        CHECK(text.find("undefinedThing") != std::string::npos);
        // Mesa names the line as 0:4(...), NVIDIA as 0(4); the engine quotes line 4 after it.
        CHECK((text.find("0:4") != std::string::npos || text.find("0(4)") != std::string::npos));
        CHECK(text.find("    4 |     fragColor = vec4(undefinedThing, 1.0);") != std::string::npos);
    }

    // Compiles alone, but a program needs a main() in its vertex stage.
    gl::Shader vs = gl::compileShader(GL_VERTEX_SHADER, "#version 330 core\nvoid helper() {}\n",
                                      "no-main.vert");
    gl::Shader fs = gl::compileShader(
        GL_FRAGMENT_SHADER, "#version 330 core\nout vec4 c;\nvoid main() { c = vec4(1); }\n",
        "plain.frag");
    // Mesa says the vertex stage lacks main(); NVIDIA "no program defined".
    CHECK_THROWS_WITH(gl::linkProgram({&vs, &fs}, "mismatch"),
                      Catch::Contains("mismatch") && Catch::Contains("does not link") &&
                          (Catch::Contains("main") || Catch::Contains("no program")));
}

TEST_CASE("shader files load from shaders/ and bad names say why", "[engine][shader]") {
    auto surface = headless(8, 8);
    // The source tree's shaders/, or a relocatable bundle's copy of it.
    CHECK(std::filesystem::exists(gl::shaderDirectory() + "/engine_demo/triangle.vert.glsl"));
    gl::Program program =
        gl::loadProgram({"engine_demo/triangle.vert.glsl", "engine_demo/triangle.frag.glsl"});
    CHECK(program.id() != 0);
    CHECK(glGetUniformLocation(program.id(), "mvp") >= 0);
    CHECK_THROWS_WITH(gl::loadProgram({"engine_demo/missing.frag"}),
                      Catch::Contains("cannot open"));
    CHECK_THROWS_WITH(gl::loadProgram({"engine_demo/triangle.txt"}),
                      Catch::Contains("cannot tell the stage"));
}

TEST_CASE("shader log annotation understands Mesa and NVIDIA line references", "[engine][shader]") {
    std::string source = "line one\nline two\nline three\n";
    std::string mesa = gl::annotateShaderLog("0:2(5): error: bad thing\n", source);
    CHECK(mesa == "0:2(5): error: bad thing\n    2 | line two\n");
    std::string nvidia = gl::annotateShaderLog("0(3) : error C1008: undefined variable\n", source);
    CHECK(nvidia == "0(3) : error C1008: undefined variable\n    3 | line three\n");
    // A reference past the end quotes nothing rather than crashing.
    CHECK(gl::annotateShaderLog("0:99(1): error: x\n", source) == "0:99(1): error: x\n");
}

TEST_CASE("RAII GL objects delete their names and move ownership", "[engine][gl]") {
    auto surface = headless(8, 8);
    GLuint id = 0;
    {
        gl::Buffer a = gl::Buffer::create();
        glBindBuffer(GL_ARRAY_BUFFER, a.id());
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        id = a.id();
        REQUIRE(glIsBuffer(id));
        gl::Buffer b = std::move(a);
        CHECK(a.id() == 0);
        CHECK(b.id() == id);
        CHECK(glIsBuffer(id));
    }
    CHECK_FALSE(glIsBuffer(id));
}

TEST_CASE("orbit camera looks at its target from its distance", "[engine][camera]") {
    OrbitCamera camera;
    camera.target = glm::vec3(1, 2, 3);
    camera.distance = 5;
    camera.yaw = 0.7f;
    camera.pitch = 0.4f;
    CHECK(glm::length(camera.eye() - camera.target) == Approx(5.0f));
    glm::vec4 t = camera.view() * glm::vec4(camera.target, 1);
    CHECK(t.x == Approx(0).margin(1e-4));
    CHECK(t.y == Approx(0).margin(1e-4));
    CHECK(t.z == Approx(-5.0f));
    camera.zoom(1);
    CHECK(camera.distance == Approx(4.5f));
    camera.orbit(0, 1e6f); // clamped short of the pole
    CHECK(camera.pitch < 1.571f);
}

TEST_CASE("orbit camera follows left drag, right drag and scroll events", "[engine][camera]") {
    OrbitCamera camera;
    float yaw = camera.yaw, pitch = camera.pitch, distance = camera.distance;
    auto move = [&](double x, double y) {
        return camera.handle(Event{Event::Type::MouseMove, 0, 0, 0, x, y});
    };
    CHECK_FALSE(move(100, 100)); // no button held: not used
    CHECK(camera.handle(Event{Event::Type::MouseButton, 0, keys::Press, 0, 0, 0}));
    CHECK(move(140, 120));
    CHECK(camera.yaw == Approx(yaw - 40 * 0.005f));
    CHECK(camera.pitch == Approx(pitch + 20 * 0.005f));
    camera.handle(Event{Event::Type::MouseButton, 0, keys::Release, 0, 0, 0});
    CHECK_FALSE(move(200, 200));
    glm::vec3 target = camera.target;
    camera.handle(Event{Event::Type::MouseButton, 1, keys::Press, 0, 0, 0});
    CHECK(move(220, 200));
    CHECK(glm::length(camera.target - target) > 0);
    CHECK(camera.handle(Event{Event::Type::Scroll, 0, 0, 0, 0, 2}));
    CHECK(camera.distance == Approx(distance * 0.81f));
}

TEST_CASE("a bundle's programs point at its setup-env.sh for the libraries the host lacks",
          "[engine][bundle]") {
    // duet/data_paths.hpp: what "no OpenGL: cannot load libEGL.so.1" adds in a relocatable
    // bundle (scripts/bundle.sh) run without its setup-env.sh.
    namespace fs = std::filesystem;
    const fs::path top =
        fs::temp_directory_path() / ("duet-bundle-test-" + std::to_string(getpid()));
    fs::remove_all(top);
    const fs::path bundle = top / "duet-0.1.0";
    fs::create_directories(bundle / "bin");
    fs::create_directories(bundle / "lib" / "glvnd");
    fs::create_directories(top / "elsewhere" / "bin");
    std::ofstream(bundle / "setup-env.sh") << "# not a real one\n";
    std::ofstream(bundle / "lib" / "libduet-opencl.so") << "";

    CHECK(duet::bundleDirectory(bundle / "bin") == bundle);
    CHECK(duet::bundleDirectory(bundle / "tests") == bundle); // need not exist: only its parent
    CHECK(duet::bundleDirectory(top / "elsewhere" / "bin").empty());
    CHECK(duet::bundleDirectory(fs::path()).empty());

    const std::string script = (bundle / "setup-env.sh").string();
    const std::string advice = duet::bundleSetupAdvice(bundle, "glvnd", nullptr);
    CHECK(advice == "this program is in a Duet bundle: source its setup-env.sh first (. " + script +
                        ", or run " + script +
                        " PROGRAM ...), which adds the bundle's lib/glvnd where the host lacks "
                        "its libraries");
    CHECK(duet::bundleSetupAdvice(bundle, "glvnd", "/usr/lib:/opt/x") == advice);
    CHECK(duet::bundleSetupAdvice(bundle, "glvnd", "") == advice);
    // setup-env.sh ran (however it spelt the folder): nothing to advise.
    const std::string glvnd = (bundle / "lib" / "glvnd").string();
    CHECK(duet::bundleSetupAdvice(bundle, "glvnd", ("/usr/lib:" + glvnd).c_str()).empty());
    CHECK(duet::bundleSetupAdvice(bundle, "glvnd", (glvnd + "/").c_str()).empty());
    CHECK(duet::bundleSetupAdvice(bundle, "glvnd", (bundle.string() + "/bin/../lib/glvnd").c_str())
              .empty());
    // A folder the bundle does not carry, or no bundle: nothing to advise either.
    CHECK(duet::bundleSetupAdvice(bundle, "x11", nullptr).empty());
    CHECK(duet::bundleSetupAdvice(fs::path(), "glvnd", nullptr).empty());
    // This test program is not in a bundle.
    CHECK(duet::bundleDirectory().empty());
    fs::remove_all(top);
}
