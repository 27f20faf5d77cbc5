// Every sample as users start it: its defaults headless (EGL) and in a GLFW window under Xvfb,
// UI drawn, PNG written with content; every --set parameter at both ends of its range; --help;
// bad command lines answered with one clear message and exit code 2.
#define CATCH_CONFIG_RUNNER
#include "duet/data_paths.hpp"
#include "duet/engine/gfx/capture.hpp"
#include "support/process.hpp"
#include "support/xvfb.hpp"

#include <catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

using duet::test::CommandResult;
using duet::test::runCommand;

namespace {

struct Sample {
    const char* name;
    const char* path;
};
const Sample kSamples[] = {
    {"nbody", DUET_NBODY},
    {"simplegl", DUET_SIMPLEGL},
    {"ocean", DUET_OCEAN},
    {"gasdyn", DUET_GASDYN},
};

/// A shell word: single-quoted, so parameter names with blanks ("wind speed") stay one word.
std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

CommandResult run(const Sample& s, const std::string& args) {
    return runCommand(duet::programPath(s.path) + " " + args);
}

/// The PNG has content: not one colour all over.
bool hasContent(const std::string& png) {
    duet::engine::Image img = duet::engine::readPng(png);
    std::set<std::array<std::uint8_t, 4>> colours;
    for (int y = 0; y < img.height; y += 7)
        for (int x = 0; x < img.width; x += 7)
            colours.insert(img.at(x, y));
    return colours.size() > 8;
}

/// What the sample's error for `--set name=value` says, or "" when the value was taken.
std::string setError(const Sample& s, const std::string& name, const std::string& value) {
    CommandResult r =
        run(s, "--headless --frames 1 --size 32x32 --set " + quote(name + "=" + value));
    return r.exitCode == 2 ? r.output : "";
}

/// The sample's parameters, from the message for an unknown one ("known: a, b, c").
std::vector<std::string> parameters(const Sample& s) {
    std::string out = setError(s, "no such parameter", "1");
    std::smatch m;
    std::vector<std::string> names;
    if (!std::regex_search(out, m, std::regex("known: ([^)]*)\\)")))
        return names;
    std::string list = m[1];
    for (size_t at = 0; at <= list.size();) {
        size_t comma = list.find(", ", at);
        names.push_back(list.substr(at, comma - at));
        if (comma == std::string::npos)
            break;
        at = comma + 2;
    }
    return names;
}

/// Both ends of a parameter's range, from what the sample says to values out of range.
std::vector<std::string> extremes(const Sample& s, const std::string& name) {
    std::string kind = setError(s, name, "?");
    std::smatch m;
    if (kind.find("expected true/false") != std::string::npos)
        return {"0", "1"};
    if (std::regex_search(kind, m, std::regex("expected one of ([^\\n]*), got")))
        return {"0", std::to_string(std::count(m[1].first, m[1].second, ','))};
    // Numbers: a value past any range makes the sample name its range.
    std::string range = setError(s, name, "2000000000");
    if (range.empty())
        range = setError(s, name, "-2000000000");
    if (std::regex_search(range, m, std::regex("must be in \\[([-0-9.e+]+), ([-0-9.e+]+)\\]")))
        return {m[1], m[2]};
    return {};
}

} // namespace

TEST_CASE("samples run with their defaults, headless and in a window", "[samples][cli]") {
    for (const Sample& s : kSamples) {
        INFO("duet-" << s.name);
        for (const char* mode : {"--headless", "--window"}) {
            INFO(mode);
            std::string png = std::filesystem::absolute(std::string(s.name) + mode + ".png");
            std::filesystem::remove(png);
            CommandResult r = run(s, std::string(mode) + " --frames 3 --screenshot " + png);
            INFO(r.output);
            REQUIRE(r.exitCode == 0);
            REQUIRE(std::filesystem::exists(png));
            CHECK(hasContent(png));
        }
    }
}

TEST_CASE("--help lists the options and exits 0", "[samples][cli]") {
    for (const Sample& s : kSamples) {
        INFO("duet-" << s.name);
        CommandResult r = run(s, "--help");
        CHECK(r.exitCode == 0);
        for (const char* option : {"--headless", "--window", "--frames", "--size", "--set"})
            CHECK(r.output.find(option) != std::string::npos);
    }
}

TEST_CASE("bad command lines give one clear message and exit 2", "[samples][cli]") {
    const std::pair<const char*, const char*> bad[] = {
        {"--bogus", "--bogus"},   {"--frames -1", "--frames"},    {"--frames many", "--frames"},
        {"--size 0x0", "--size"}, {"--size 99999x10", "--size"},  {"--size wide", "--size"},
        {"--set", "--set"},       {"--set nothing=1", "nothing"},
    };
    for (const Sample& s : kSamples) {
        for (const auto& [args, mention] : bad) {
            INFO("duet-" << s.name << " " << args);
            CommandResult r = run(s, std::string("--headless ") + args);
            INFO(r.output);
            CHECK(r.exitCode == 2);
            CHECK(r.output.find(mention) != std::string::npos);
            CHECK(r.output.size() < 2000); // a message, not a dump
        }
    }
}

TEST_CASE("every --set parameter runs at both ends of its range", "[samples][cli][extremes]") {
    for (const Sample& s : kSamples) {
        std::vector<std::string> names = parameters(s);
        INFO("duet-" << s.name);
        CHECK_FALSE(names.empty());
        for (const std::string& name : names) {
            std::vector<std::string> ends = extremes(s, name);
            INFO("parameter '" << name << "'");
            REQUIRE(ends.size() == 2);
            for (const std::string& v : ends) {
                INFO("= " << v);
                CommandResult r =
                    run(s, "--headless --frames 2 --size 96x64 --set " + quote(name + "=" + v));
                INFO(r.output);
                CHECK(r.exitCode == 0);
            }
        }
    }
}

int main(int argc, char** argv) {
    if (duet::test::xvfbPath().empty())
        return duet::test::skipTest("Xvfb is not installed (apt-get install xvfb)");
    duet::test::XvfbServer xvfb({"-screen", "0", "1280x1024x24"}, 700);
    if (!xvfb.running()) {
        std::printf("FAILED: Xvfb is installed but did not start\n");
        return 1;
    }
    setenv("DISPLAY", xvfb.display().c_str(), 1);
    return Catch::Session().run(argc, argv);
}
