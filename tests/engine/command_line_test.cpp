// The common command line: parser, parameters, --stats, and the demo binary run headless.
#include "engine_test_support.hpp"

#include "duet/engine/app/options.hpp"
#include "duet/engine/app/parameters.hpp"
#include "duet/engine/app/stats.hpp"

#include <catch.hpp>

using namespace duet::engine;
using namespace duet::engine::test;

namespace {

ParseResult parse(std::vector<const char*> args, Options& options) {
    args.insert(args.begin(), "demo");
    return parseCommandLine(int(args.size()), args.data(), options);
}

const std::string demo = duet::programPath(DUET_ENGINE_DEMO);

} // namespace

TEST_CASE("--size accepts WIDTHxHEIGHT and rejects anything else", "[engine][cli]") {
    int w = 0, h = 0;
    std::string error;
    CHECK(parseSize("640x480", w, h, error));
    CHECK(w == 640);
    CHECK(h == 480);
    CHECK(parseSize("1X2", w, h, error));
    CHECK(w == 1);
    for (const char* bad : {"", "640", "640x", "x480", "640x480x3", "-640x480", "0x480", "a x b",
                            "640 x 480", "99999x10"}) {
        INFO(bad);
        error.clear();
        CHECK_FALSE(parseSize(bad, w, h, error));
        CHECK(error.find("--size") != std::string::npos);
    }
}

TEST_CASE("the command line fills Options", "[engine][cli]") {
    Options o;
    ParseResult r = parse({"--headless", "--frames", "12", "--size", "320x200", "--screenshot",
                           "a.png", "--platform", "Duet", "--device", "CPU", "--stats",
                           "--no-overlay", "--set", "speed=1", "--set", "spin=0"},
                          o);
    REQUIRE_FALSE(r.exit);
    CHECK(o.mode == Options::Mode::Headless);
    CHECK(o.frames == 12);
    CHECK(o.width == 320);
    CHECK(o.height == 200);
    CHECK(o.screenshot == "a.png");
    CHECK(o.platform == "Duet");
    CHECK(o.device == "CPU");
    CHECK(o.stats);
    CHECK_FALSE(o.overlay);
    CHECK(o.set == std::vector<std::string>{"speed=1", "spin=0"});

    Options d;
    REQUIRE_FALSE(parse({}, d).exit);
    CHECK(d.mode == Options::Mode::Auto);
    CHECK(d.frames == 0);
    CHECK(d.width == 1280);
    CHECK(d.height == 720);
    CHECK(d.overlay);
}

TEST_CASE("bad command lines give a clear error and exit code 2", "[engine][cli]") {
    struct Case {
        std::vector<const char*> args;
        const char* says;
    };
    for (const Case& c : std::vector<Case>{{{"--size", "big"}, "--size: expected WIDTHxHEIGHT"},
                                           {{"--size", "0x5"}, "--size"},
                                           {{"--frames", "-1"}, "--frames"},
                                           {{"--frames", "ten"}, "--frames"},
                                           {{"--headless", "--window"}, "exclude"},
                                           {{"--set", "novalue"}, "NAME=VALUE"},
                                           {{"--bogus"}, "--bogus"}}) {
        Options o;
        ParseResult r = parse(c.args, o);
        INFO(r.message);
        CHECK(r.exit);
        CHECK(r.exitCode == kUsageError);
        CHECK(r.message.find(c.says) != std::string::npos);
    }
    Options o;
    ParseResult help = parse({"--help"}, o);
    CHECK(help.exit);
    CHECK(help.exitCode == 0);
    CHECK(help.message.find("--screenshot") != std::string::npos);
}

TEST_CASE("parameters are set by name with range and type checks", "[engine][cli]") {
    float speed = 1;
    int count = 4, mode = 0;
    bool spin = true;
    Parameters p;
    p.addFloat("speed", &speed, 0, 2);
    p.addInt("count", &count, 1, 8);
    p.addBool("spin", &spin);
    p.addChoice("mode", &mode, {"fast", "exact"});
    std::string error;
    CHECK(p.set("speed=1.5", error));
    CHECK(speed == 1.5f);
    CHECK(p.set("count=8", error));
    CHECK(count == 8);
    CHECK(p.set("spin=off", error));
    CHECK_FALSE(spin);
    CHECK(p.set("mode=exact", error));
    CHECK(mode == 1);
    CHECK(p.set("mode=0", error));
    CHECK(mode == 0);
    CHECK_FALSE(p.set("speed=3", error));
    CHECK(error.find("[0.000000, 2.000000]") != std::string::npos);
    CHECK(speed == 1.5f);
    CHECK_FALSE(p.set("count=2.5", error));
    CHECK_FALSE(p.set("spin=maybe", error));
    CHECK_FALSE(p.set("mode=slow", error));
    CHECK(error.find("fast, exact") != std::string::npos);
    CHECK_FALSE(p.set("missing=1", error));
    CHECK(error.find("known: speed, count, spin, mode") != std::string::npos);
}

TEST_CASE("stats summarise each phase", "[engine][stats]") {
    Stats stats;
    for (double ms : {4.0, 1.0, 3.0, 2.0})
        stats.add(phase::Render, ms / 1e3);
    stats.add("kernel", 0.5e-3);
    auto summary = stats.summarize();
    REQUIRE(summary.size() == 5);
    CHECK(summary[0].name == "compute");
    CHECK(summary[0].count == 0);
    CHECK(summary[1].name == "acquire/release");
    CHECK(summary[2].name == "render");
    CHECK(summary[2].count == 4);
    CHECK(summary[2].mean == Approx(2.5e-3));
    CHECK(summary[2].median == Approx(2.5e-3));
    CHECK(summary[2].min == Approx(1e-3));
    CHECK(summary[2].max == Approx(4e-3));
    CHECK(summary[2].last == Approx(2e-3));
    CHECK(summary[3].name == "frame");
    CHECK(summary[4].name == "kernel");
    std::string table = stats.table();
    CHECK(table.find("render                  4      2.500      1.000      2.500      4.000") !=
          std::string::npos);
    CHECK(table.find("compute                 0          -") != std::string::npos);
}

TEST_CASE("demo: bad --size is one clear line and exit code 2", "[engine][demo]") {
    CommandResult r = runCommand(demo + " --headless --size 640by480");
    CHECK(r.exitCode == 2);
    CHECK(r.output == "--size: expected WIDTHxHEIGHT such as 1280x720, got '640by480'\n");
    r = runCommand(demo + " --headless --frames 1 --set speed=99");
    CHECK(r.exitCode == 2);
    CHECK(r.output.find("--set speed: must be in") != std::string::npos);
}

TEST_CASE("demo: no GL is one clear line and a non-zero exit", "[engine][demo]") {
    CommandResult r = runCommand("DUET_EGL_PLATFORM=none " + demo + " --headless --frames 1");
    CHECK(r.exitCode == 1);
    CHECK(r.output.rfind("engine-demo: no OpenGL: ", 0) == 0);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    r = runCommand("env -u DUET_EGL_PLATFORM DISPLAY=:9999 " + demo + " --window --frames 1");
    CHECK(r.exitCode == 1);
    CHECK(r.output.find("no OpenGL window") != std::string::npos);
}

TEST_CASE("demo: headless 10 frames write a PNG with the triangle and the overlay",
          "[engine][demo]") {
    std::remove("demo.png");
    CommandResult r =
        runCommand(demo + " --headless --frames 10 --size 800x600 --screenshot demo.png --stats");
    INFO(r.output);
    REQUIRE(r.exitCode == 0);
    CHECK(r.output.find("wrote demo.png (800x600)") != std::string::npos);
    CHECK(r.output.find("10 frames") != std::string::npos);
    for (const char* p : {"compute", "acquire/release", "render ", "frame ", "ui "})
        CHECK(r.output.find(std::string("\n") + p) != std::string::npos);
    checkDemoPicture(readPng("demo.png"), 800, 600, true);

    std::remove("demo-plain.png");
    r = runCommand(demo + " --headless --frames 3 --size 800x600 --no-overlay --screenshot "
                          "demo-plain.png --set background=dark");
    REQUIRE(r.exitCode == 0);
    checkDemoPicture(readPng("demo-plain.png"), 800, 600, false);
}

TEST_CASE("demo: the sample registry lists and selects samples by name", "[engine][demo]") {
    CommandResult r = runCommand(demo + " --list");
    CHECK(r.exitCode == 0);
    CHECK(r.output.rfind("engine-demo ", 0) == 0);
    r = runCommand(demo + " --sample no-such-sample --headless");
    CHECK(r.exitCode == 2);
    CHECK(r.output == "duet: no sample named 'no-such-sample' (--list shows them)\n");
    r = runCommand(demo + " --sample engine-demo --headless --frames 1 --no-overlay");
    CHECK(r.exitCode == 0);
}
