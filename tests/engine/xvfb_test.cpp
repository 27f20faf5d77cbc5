// A GLFW window with a GLX context on an Xvfb server this test starts on a free display number.
// Exits 77 (ctest: skipped) with a clear message when Xvfb is not installed.
#define CATCH_CONFIG_RUNNER
#include "engine_test_support.hpp"

#include "duet/engine/platform/surface.hpp"
#include "support/xvfb.hpp"

#include <catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace duet::engine;
using namespace duet::engine::test;

TEST_CASE("GLFW window with a GLX context renders and reads back the expected pixels",
          "[engine][xvfb]") {
    SurfaceDesc desc;
    desc.width = 320;
    desc.height = 240;
    desc.vsync = false;
    auto surface = createGlfwSurface(desc);
    REQUIRE_FALSE(surface->headless());
    CHECK(surface->glfwWindow() != nullptr);
    NativeGL native = surface->native();
    CHECK(native.api == NativeGL::Api::Glx);
    CHECK(native.display != nullptr);
    CHECK(native.context != nullptr);
    CHECK(native.drawable != 0);
    CHECK(surface->framebuffer() == 0);
    CHECK(surface->description().find("GLFW window on X11 " + std::string(getenv("DISPLAY"))) == 0);
    int w = 0, h = 0;
    surface->framebufferSize(w, h);
    REQUIRE(w == 320);
    REQUIRE(h == 240);
    for (int frame = 0; frame < 2; ++frame) {
        surface->pollEvents();
        CHECK_FALSE(surface->shouldClose());
        drawTestScene(w, h);
        checkTestScene(readFramebuffer(0, surface->readBuffer(), w, h), w, h);
        surface->swapBuffers();
    }
}

TEST_CASE("demo runs in a window and captures the triangle and the overlay",
          "[engine][xvfb][demo]") {
    std::remove("window.png");
    CommandResult r = runCommand(duet::programPath(DUET_ENGINE_DEMO) +
                                 " --frames 5 --size 800x600 --screenshot window.png --stats");
    INFO(r.output);
    REQUIRE(r.exitCode == 0);
    CHECK(r.output.find("GLFW window on X11") != std::string::npos);
    CHECK(r.output.find("wrote window.png (800x600)") != std::string::npos);
    checkDemoPicture(readPng("window.png"), 800, 600, true);
}

int main(int argc, char** argv) {
    if (duet::test::xvfbPath().empty())
        return duet::test::skipTest("Xvfb is not installed (apt-get install xvfb); the GLFW "
                                    "window tests need an X server.");
    duet::test::XvfbServer server({"-screen", "0", "1024x768x24"}, 90);
    if (!server.running()) {
        std::printf("FAILED: Xvfb is installed but did not start on any display from :90\n");
        return 1;
    }
    setenv("DISPLAY", server.display().c_str(), 1);
    unsetenv("DUET_EGL_PLATFORM");
    std::printf("Xvfb on %s (pid %d)\n", server.display().c_str(), int(server.pid()));
    return Catch::Session().run(argc, argv);
}
