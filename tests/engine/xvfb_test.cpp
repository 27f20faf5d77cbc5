// A GLFW window with a GLX context on an Xvfb server this test starts on a free display number.
// Exits 77 (ctest: skipped) with a clear message when Xvfb is not installed.
#define CATCH_CONFIG_RUNNER
#include "engine_test_support.hpp"

#include "engine/platform/surface.hpp"

#include <catch.hpp>

#include <csignal>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace duet::engine;
using namespace duet::engine::test;

namespace {

std::string findInPath(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (size_t start = 0; start <= dirs.size();) {
        size_t end = dirs.find(':', start);
        if (end == std::string::npos)
            end = dirs.size();
        std::string candidate = dirs.substr(start, end - start) + "/" + program;
        if (access(candidate.c_str(), X_OK) == 0)
            return candidate;
        start = end + 1;
    }
    return {};
}

bool exists(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

/// Starts Xvfb on the first display from :90 whose lock and socket are free, and waits for its
/// socket. Returns the child's pid and sets `display`, or -1 when none starts.
pid_t startXvfb(const std::string& xvfb, std::string& display) {
    for (int n = 90 + int(getpid() % 50); n < 300; ++n) {
        std::string number = std::to_string(n);
        if (exists("/tmp/.X" + number + "-lock") || exists("/tmp/.X11-unix/X" + number))
            continue;
        pid_t pid = fork();
        if (pid == 0) {
            execl(xvfb.c_str(), "Xvfb", (":" + number).c_str(), "-screen", "0", "1024x768x24",
                  "-nolisten", "tcp", "-noreset", static_cast<char*>(nullptr));
            _exit(127);
        }
        if (pid < 0)
            return -1;
        // Up to 10 s for the socket; a server that exits lost a race for this number.
        for (int i = 0; i < 200; ++i) {
            int status = 0;
            if (waitpid(pid, &status, WNOHANG) == pid)
                break;
            if (exists("/tmp/.X11-unix/X" + number)) {
                display = ":" + number;
                return pid;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
    }
    return -1;
}

} // namespace

TEST_CASE("GLFW window with a GLX context renders and reads back the expected pixels", "[xvfb]") {
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

TEST_CASE("demo runs in a window and captures the triangle and the overlay", "[xvfb][demo]") {
    std::remove("window.png");
    CommandResult r = runCommand(std::string(DUET_ENGINE_DEMO) +
                                 " --frames 5 --size 800x600 --screenshot window.png --stats");
    INFO(r.output);
    REQUIRE(r.exitCode == 0);
    CHECK(r.output.find("GLFW window on X11") != std::string::npos);
    CHECK(r.output.find("wrote window.png (800x600)") != std::string::npos);
    checkDemoPicture(readPng("window.png"), 800, 600, true);
}

int main(int argc, char** argv) {
    std::string xvfb = findInPath("Xvfb");
    if (xvfb.empty()) {
        std::printf("SKIPPED: Xvfb is not installed (apt-get install xvfb); the GLFW window "
                    "tests need an X server.\n");
        return 77;
    }
    std::string display;
    pid_t server = startXvfb(xvfb, display);
    if (server < 0) {
        std::printf("FAILED: Xvfb is installed but did not start on any display from :90\n");
        return 1;
    }
    setenv("DISPLAY", display.c_str(), 1);
    unsetenv("DUET_EGL_PLATFORM");
    std::printf("Xvfb on %s (pid %d)\n", display.c_str(), int(server));
    int result = Catch::Session().run(argc, argv);
    kill(server, SIGTERM);
    waitpid(server, nullptr, 0);
    return result;
}
