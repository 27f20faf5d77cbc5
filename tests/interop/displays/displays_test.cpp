// duet-displays and interop's enumeration on an Xvfb server with two screens started here:
// both screens with a GLX context (llvmpipe), Duet's CPU device able to share with each (both
// queries), Mesa's EGL devices, libdrm's GPU list, the JSON against the table, a bad display name,
// platforms without cl_khr_gl_sharing, and Context::create choosing the device the listing names.
#define CATCH_CONFIG_RUNNER
#include "duet/data_paths.hpp"
#include "duet/interop/displays.hpp"
#include "duet/interop/gl_devices.hpp"
#include "duet/interop/interop.hpp"
#include "report_format.hpp"
#include "support/icd_vendors.hpp"
#include "support/process.hpp"
#include "support/xvfb.hpp"

#include <catch.hpp>

#include <GL/glx.h>
#include <X11/Xlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace duet;
using duet::test::readFile;
using nlohmann::json;

namespace {

std::string g_display; // ":N" of the Xvfb server this test runs
fs::path g_dir;        // scratch folder for output files and vendor folders

struct Run {
    int exitCode = -1; ///< -1: killed by a signal (a crash)
    std::string out, err;
};

/// Runs duet-displays with `args`, stdout and stderr kept apart; `env` is prefixed (VAR=value ...).
Run runTool(const std::string& args, const std::string& env = "") {
    fs::path out = g_dir / "stdout.txt", err = g_dir / "stderr.txt";
    std::string command = env + " " + duet::programPath(DUET_DISPLAYS) + " " + args + " >" +
                          out.string() + " 2>" + err.string();
    int status = std::system(command.c_str());
    Run r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = readFile(out);
    r.err = readFile(err);
    return r;
}

/// A vendors folder with only the given .icd files (for OCL_ICD_VENDORS).
std::string vendorsWith(const std::string& name, const std::vector<std::string>& icds) {
    fs::path dir = g_dir / name;
    fs::create_directories(dir);
    for (const std::string& icd : icds)
        fs::copy_file(icd, dir / fs::path(icd).filename(), fs::copy_options::overwrite_existing);
    return dir.string();
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

const interop::PlatformSharing* platformNamed(const interop::GLContextReport& gl,
                                              const std::string& name) {
    for (const auto& p : gl.sharing)
        if (p.platform == name)
            return &p;
    return nullptr;
}

/// Duet's answer for a GL context: the current device is one Duet device, and the device list
/// holds Duet's CPU device.
void checkDuetShares(const interop::GLContextReport& gl) {
    const interop::PlatformSharing* duet = platformNamed(gl, "Duet");
    REQUIRE(duet);
    CHECK(duet->unsupported.empty());
    CHECK(duet->currentError.empty());
    CHECK(duet->devicesError.empty());
    REQUIRE(duet->current.size() == 1);
    CHECK(duet->current[0].platform == "Duet");
    bool cpu = false;
    for (const auto& d : duet->devices)
        cpu |= d.platform == "Duet" && (d.type & CL_DEVICE_TYPE_CPU) != 0;
    CHECK(cpu);
    bool currentListed = false;
    for (const auto& d : duet->devices)
        currentListed |= d.device == duet->current[0].device;
    CHECK(currentListed);
    CHECK(gl.canShare());
}

} // namespace

TEST_CASE("both Xvfb screens are listed, each with a llvmpipe GLX context Duet can share with",
          "[displays][x]") {
    interop::XDisplayReport x = interop::listXScreens(g_display);
    INFO(x.error);
    REQUIRE(x.opened);
    CHECK(x.error.empty());
    CHECK_FALSE(x.glxVersion.empty());
    REQUIRE(x.screens.size() == 2);
    CHECK(x.screens[0].name == g_display + ".0");
    CHECK(x.screens[1].name == g_display + ".1");
    CHECK(x.screens[0].width == 640);
    CHECK(x.screens[0].height == 480);
    CHECK(x.screens[1].width == 800);
    CHECK(x.screens[1].height == 600);
    for (const auto& screen : x.screens) {
        INFO(screen.name << ": " << screen.gl.error);
        REQUIRE(screen.gl.made);
        CHECK(contains(screen.gl.renderer, "llvmpipe"));
        CHECK_FALSE(screen.gl.version.empty());
        checkDuetShares(screen.gl);
    }
}

TEST_CASE("the X display defaults to $DISPLAY; a screen name like :N.1 lists the same display",
          "[displays][x]") {
    interop::XDisplayReport fromEnv = interop::listXScreens("");
    CHECK(fromEnv.name == g_display);
    CHECK(fromEnv.screens.size() == 2);
    interop::XDisplayReport fromScreen = interop::listXScreens(g_display + ".1");
    REQUIRE(fromScreen.screens.size() == 2);
    CHECK(fromScreen.screens[0].name == g_display + ".0");
}

TEST_CASE("a display that does not exist is a readable error, not a crash",
          "[displays][x][errors]") {
    interop::XDisplayReport x = interop::listXScreens(":1999");
    CHECK_FALSE(x.opened);
    CHECK(x.screens.empty());
    CHECK(contains(x.error, "cannot open X display ':1999'"));

    Run r = runTool("--display :1999");
    INFO(r.out << r.err);
    CHECK(r.exitCode == 1);
    CHECK(contains(r.err, "duet-displays: X: cannot open X display ':1999'"));
    CHECK(contains(r.out, "error: cannot open X display ':1999'"));
    // The rest is still listed.
    CHECK(contains(r.out, "OpenCL platforms"));
    CHECK(contains(r.out, "EGL devices"));

    Run garbage = runTool("--display 'no such display'");
    CHECK(garbage.exitCode == 1);
    CHECK(contains(garbage.err, "cannot open X display 'no such display'"));

    Run badJson = runTool("--no-egl --json " + (g_dir / "no-such-folder" / "x.json").string());
    CHECK(badJson.exitCode == 1);
    CHECK(contains(badJson.err, "duet-displays: cannot write JSON to '"));

    Run badOption = runTool("--frobnicate");
    CHECK(badOption.exitCode != 0);
    CHECK(badOption.exitCode != -1);
    CHECK(contains(badOption.err, "frobnicate"));

    Run unset = runTool("--no-egl", "env -u DISPLAY");
    INFO(unset.out << unset.err);
    CHECK(unset.exitCode == 0);
    CHECK(contains(unset.out, "X display: not listed (DISPLAY is not set"));
    CHECK(contains(unset.out, "no GL context to share with"));
}

TEST_CASE("an X server without GLX: each screen says so, the tool still exits 0",
          "[displays][x][errors]") {
    duet::test::XvfbServer server({"-extension", "GLX"}, 620);
    REQUIRE(server.running());
    const std::string display = server.display();
    interop::XDisplayReport x = interop::listXScreens(display);
    CHECK(x.opened);
    CHECK(x.error == "X display '" + display + "' has no GLX extension");
    REQUIRE(x.screens.size() == 1);
    CHECK_FALSE(x.screens[0].gl.made);
    CHECK(x.screens[0].gl.error == x.error);

    Run r = runTool("--no-egl --display " + display);
    INFO(r.out << r.err);
    CHECK(r.exitCode == 0);
    CHECK(contains(r.out, "  screen " + display +
                              ".0  1280x1024x24\n    no GL context: X display '" + display +
                              "' has no GLX extension"));
    CHECK(contains(r.err, "duet-displays: X: X display '" + display + "' has no GLX extension"));
    CHECK(contains(r.out, "Summary: 0 GL contexts made; no GL context to share with."));
}

TEST_CASE("EGL devices: each gets a GL context that Duet can share with; Mesa's software device "
          "has no DRM node",
          "[displays][egl]") {
    interop::GpuList gpus = interop::listGpus();
    interop::EglDeviceReport egl = interop::listEglDevices(gpus);
    INFO(egl.error);
    REQUIRE(egl.error.empty());
    REQUIRE_FALSE(egl.devices.empty());
    bool software = false;
    for (const auto& d : egl.devices) {
        INFO("EGL device " << d.index << ": " << d.gl.error);
        CHECK_FALSE(d.extensions.empty());
        bool isSoftware = false;
        for (const auto& e : d.extensions)
            isSoftware |= e == "EGL_MESA_device_software";
        if (isSoftware) {
            software = true;
            CHECK(d.drmDeviceFile.empty());
            CHECK(d.gpu == -1);
            REQUIRE(d.gl.made);
            CHECK(contains(d.gl.renderer, "llvmpipe"));
            CHECK(d.eglVendor == "Mesa Project");
        }
        // A device with a DRM node belongs to a GPU libdrm lists.
        if (!d.drmDeviceFile.empty())
            CHECK(d.gpu >= 0);
        if (d.gl.made)
            checkDuetShares(d.gl);
    }
    CHECK(software);
}

TEST_CASE("GPUs from libdrm: an empty list with a reason where there is no /dev/dri",
          "[displays][drm]") {
    interop::GpuList gpus = interop::listGpus();
    if (!duet::test::pathExists("/dev/dri")) {
        CHECK(gpus.gpus.empty());
        CHECK(contains(gpus.note, "/dev/dri"));
    }
    for (const auto& g : gpus.gpus) {
        CHECK((!g.primaryNode.empty() || !g.renderNode.empty()));
        if (g.bus == "pci") {
            CHECK(g.busId.size() == 12); // 0000:01:00.0
            CHECK(g.vendorId != 0);
        }
        CHECK((!g.driver.empty() || !g.driverError.empty()));
    }
}

TEST_CASE("duet-displays: the JSON parses and says what the table says", "[displays][tool]") {
    fs::path jsonPath = g_dir / "displays.json";
    Run r = runTool("--display " + g_display + " --json " + jsonPath.string());
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    json j = json::parse(readFile(jsonPath)); // throws (fails the test) if it does not parse
    const std::string& table = r.out;

    REQUIRE(j["platforms"].is_array());
    bool duet = false;
    for (const auto& p : j["platforms"]) {
        CHECK(contains(table, "  " + p["name"].get<std::string>()));
        duet |= p["name"] == "Duet" && p["gl_sharing"] == true;
    }
    CHECK(duet);

    REQUIRE(j["x"].is_object());
    CHECK(j["x"]["display"] == g_display);
    REQUIRE(j["x"]["screens"].size() == 2);
    for (const auto& s : j["x"]["screens"]) {
        std::string line = "  screen " + s["name"].get<std::string>() + "  " +
                           std::to_string(s["width"].get<int>()) + "x" +
                           std::to_string(s["height"].get<int>()) + "x24";
        CHECK(contains(table, line));
        REQUIRE(s["gl"]["made"] == true);
        CHECK(contains(s["gl"]["renderer"].get<std::string>(), "llvmpipe"));
        CHECK(contains(table, "GL renderer  " + s["gl"]["renderer"].get<std::string>()));
        CHECK(s["gl"]["can_share"] == true);
        bool shared = false;
        for (const auto& p : s["gl"]["sharing"])
            if (p["platform"] == "Duet") {
                REQUIRE(p["current"]["devices"].size() == 1);
                std::string name = p["current"]["devices"][0]["name"];
                CHECK(contains(table, "current: " + name));
                CHECK(p["devices"]["devices"].size() >= 1);
                CHECK(p["current"]["error"].is_null());
                shared = true;
            }
        CHECK(shared);
    }

    REQUIRE(j["egl"].is_object());
    CHECK(j["egl"]["error"].is_null());
    REQUIRE(j["egl"]["devices"].size() >= 1);
    for (const auto& d : j["egl"]["devices"]) {
        std::string head = "  device " + std::to_string(d["index"].get<int>()) + "  ";
        CHECK(contains(table, head));
        if (d["gl"]["made"] == true)
            CHECK(contains(table, "GL renderer  " + d["gl"]["renderer"].get<std::string>()));
    }

    if (j["gpus"]["list"].empty())
        CHECK(contains(table, "GPUs (libdrm)\n  none"));
    for (const auto& g : j["gpus"]["list"])
        if (g["bus_id"].is_string())
            CHECK(contains(table, g["bus_id"].get<std::string>() + "  " +
                                      g["vendor_id"].get<std::string>() + ":" +
                                      g["device_id"].get<std::string>()));

    size_t contexts = 2 + j["egl"]["devices"].size();
    CHECK(j["gl_contexts"] == contexts);
    CHECK(j["gl_contexts_sharing"] == contexts);
    CHECK(j["any_sharing"] == true);
    CHECK(contains(table, "Summary: " + std::to_string(contexts) + " GL contexts made; " +
                              std::to_string(contexts) + " can share with an OpenCL device."));

    // --json - : JSON alone on stdout, the same document.
    Run alone = runTool("--display " + g_display + " --json -");
    REQUIRE(alone.exitCode == 0);
    json j2 = json::parse(alone.out);
    CHECK(j2["x"]["screens"].size() == 2);
    CHECK(j2["gl_contexts_sharing"] == contexts);
}

TEST_CASE("duet-displays with $DISPLAY and no --display lists the same screens",
          "[displays][tool]") {
    Run r = runTool("--no-egl --json -");
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    json j = json::parse(r.out);
    CHECK(j["x"]["display"] == g_display);
    CHECK(j["x"]["screens"].size() == 2);
    CHECK(j["egl"].is_null());
}

TEST_CASE("a platform without cl_khr_gl_sharing is named as such; nothing sharing is said, exit 0",
          "[displays][tool][pocl]") {
    const std::string pocl = "/etc/OpenCL/vendors/pocl.icd";
    if (duet::test::pathExists(pocl)) {
        std::string vendors = vendorsWith("pocl-only", {pocl});
        Run r = runTool("--display " + g_display, "OCL_ICD_VENDORS=" + vendors);
        INFO(r.out << r.err);
        CHECK(r.exitCode == 0);
        CHECK(contains(r.out, "Portable Computing Language"));
        CHECK(contains(r.out, "no cl_khr_gl_sharing"));
        CHECK(contains(r.out, "no OpenCL device can share with any of them"));
        CHECK(contains(r.err, "no OpenCL device can share with any GL context listed"));

        // Both platforms: Duet shares, PoCL is reported per GL context without the extension.
        std::string both = vendorsWith("duet-and-pocl", {duet::test::duetIcdFile(), pocl});
        Run b = runTool("--display " + g_display + " --no-egl --json -", "OCL_ICD_VENDORS=" + both);
        REQUIRE(b.exitCode == 0);
        json j = json::parse(b.out);
        for (const auto& s : j["x"]["screens"]) {
            bool poclSeen = false;
            for (const auto& p : s["gl"]["sharing"])
                if (p["platform"] == "Portable Computing Language") {
                    poclSeen = true;
                    CHECK(p["unsupported"] == "no cl_khr_gl_sharing");
                    CHECK(p["devices"]["devices"].empty());
                }
            CHECK(poclSeen);
            CHECK(s["gl"]["can_share"] == true);
        }
    }
    // No platform at all.
    std::string none = vendorsWith("none", {});
    Run r = runTool("--display " + g_display + " --no-egl", "OCL_ICD_VENDORS=" + none);
    INFO(r.out << r.err);
    CHECK(r.exitCode == 0);
    CHECK(contains(r.out, "none (the ICD loader found no platform)"));
    CHECK(contains(r.out, "CL           no OpenCL platform to ask"));
    CHECK(contains(r.out, "Summary: 2 GL contexts made; no OpenCL device can share"));
}

TEST_CASE("Context::create picks the device the listing names as current for the same GLX "
          "context",
          "[displays][interop]") {
    Display* dpy = XOpenDisplay((g_display + ".1").c_str());
    REQUIRE(dpy);
    const int attrs[] = {
        GLX_DRAWABLE_TYPE, GLX_PBUFFER_BIT, GLX_RENDER_TYPE, GLX_RGBA_BIT, GLX_RED_SIZE, 8, None};
    int n = 0;
    GLXFBConfig* configs = glXChooseFBConfig(dpy, DefaultScreen(dpy), attrs, &n);
    REQUIRE((configs && n > 0));
    GLXContext ctx = glXCreateNewContext(dpy, configs[0], GLX_RGBA_TYPE, nullptr, True);
    const int pb[] = {GLX_PBUFFER_WIDTH, 4, GLX_PBUFFER_HEIGHT, 4, None};
    GLXPbuffer pbuffer = glXCreatePbuffer(dpy, configs[0], pb);
    XFree(configs);
    REQUIRE(ctx);
    REQUIRE(glXMakeContextCurrent(dpy, pbuffer, pbuffer, ctx));
    {
        interop::GLHandles gl{interop::GLHandles::Api::Glx, dpy, ctx};
        cl_device_id listed = nullptr;
        for (cl_platform_id p : interop::platformIds()) {
            interop::GLContextDevices answer = interop::queryGLContextDevices(gl, p);
            if (!answer.current.empty() && !listed)
                listed = answer.current[0];
        }
        REQUIRE(listed);
        interop::Options options;
        options.allowHostCopy = false;
        auto context = interop::Context::create(gl, options);
        CHECK(context->mode() == interop::Mode::Sharing);
        CHECK(context->device() == listed);
    }
    glXMakeContextCurrent(dpy, None, None, nullptr);
    glXDestroyPbuffer(dpy, pbuffer);
    glXDestroyContext(dpy, ctx);
    XCloseDisplay(dpy);
}

int main(int argc, char** argv) {
    if (duet::test::xvfbPath().empty())
        return duet::test::skipTest("Xvfb is not installed (apt-get install xvfb)");
    duet::test::XvfbServer xvfb({"-screen", "0", "640x480x24", "-screen", "1", "800x600x24"}, 400);
    if (!xvfb.running()) {
        std::fprintf(stderr, "FAILED: Xvfb is installed but did not start on any display from "
                             ":400\n");
        return 1;
    }
    g_display = xvfb.display();
    setenv("DISPLAY", g_display.c_str(), 1);
    g_dir = fs::temp_directory_path() / ("duet-displays-test-" + std::to_string(getpid()));
    fs::create_directories(g_dir);
    std::printf("Xvfb on %s (pid %d)\n", g_display.c_str(), int(xvfb.pid()));
    int rc = Catch::Session().run(argc, argv);
    std::error_code ignored;
    fs::remove_all(g_dir, ignored);
    return rc;
}
