// The sample command line, parsed with CLI11.
#include "duet/engine/app/options.hpp"

#include "duet/version.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <filesystem>

namespace duet::engine {

std::string versionText(const char* argv0) {
    std::string program = argv0 && *argv0 ? std::filesystem::path(argv0).filename().string()
                                          : std::string("duet-sample");
    return program + " (Duet) " DUET_VERSION;
}

bool parseSize(std::string_view text, int& width, int& height, std::string& error) {
    size_t x = text.find_first_of("xX");
    auto number = [](std::string_view s, int& out) {
        if (s.empty())
            return false;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        return ec == std::errc() && end == s.data() + s.size();
    };
    int w = 0, h = 0;
    if (x == std::string_view::npos || !number(text.substr(0, x), w) ||
        !number(text.substr(x + 1), h)) {
        error = "--size: expected WIDTHxHEIGHT such as 1280x720, got '" + std::string(text) + "'";
        return false;
    }
    if (w <= 0 || h <= 0 || w > 16384 || h > 16384) {
        error = "--size: width and height must be 1 to 16384, got '" + std::string(text) + "'";
        return false;
    }
    width = w;
    height = h;
    return true;
}

ParseResult parseCommandLine(int argc, const char* const* argv, Options& options) {
    CLI::App app{"Duet sample: OpenGL with OpenCL compute, windowed (GLFW/X11) or headless (EGL)."};
    app.name(argc > 0 && argv[0] ? argv[0] : "duet-sample");
    bool headless = false, window = false, noOverlay = false, noVsync = false;
    std::string size;
    app.add_flag("--headless", headless, "render with EGL, no window (default when no $DISPLAY)");
    app.add_flag("--window", window,
                 "open a GLFW window on $DISPLAY (default when $DISPLAY is set)");
    app.add_option("--frames", options.frames,
                   "frames to render, then exit (0: until the window closes; headless default " +
                       std::to_string(Options::kDefaultHeadlessFrames) +
                       "); a fixed 1/60 s step is used when set, so output is reproducible")
        ->check(CLI::Range(0, 100000000));
    app.add_option("--size", size, "framebuffer size WIDTHxHEIGHT (default 1280x720)");
    app.add_option("--screenshot", options.screenshot, "write the last frame to this PNG file");
    app.add_option("--platform", options.platform, "OpenCL platform whose name contains this");
    app.add_option("--device", options.device, "OpenCL device whose name contains this");
    app.add_flag("--stats", options.stats,
                 "print a per-phase timing summary at exit (compute, acquire/release, render, "
                 "frame)");
    app.add_flag("--no-overlay", noOverlay, "do not draw the ImGui overlay");
    app.add_flag("--no-vsync", noVsync, "do not wait for vertical sync (windowed)");
    app.add_option("--sample", options.sample, "which registered sample to run");
    app.add_flag("--list", options.list, "list the registered samples and exit");
    app.add_option("--set", options.set, "set a sample parameter: NAME=VALUE (repeatable)")
        ->allow_extra_args(false);
    app.set_version_flag("--version", versionText(argc > 0 ? argv[0] : nullptr),
                         "print the program's name and the Duet version, and exit");
    app.get_formatter()->column_width(24);

    ParseResult result;
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        return ParseResult{true, 0, app.help()};
    } catch (const CLI::CallForVersion&) {
        return ParseResult{true, 0, versionText(argc > 0 ? argv[0] : nullptr)};
    } catch (const CLI::ParseError& e) {
        return ParseResult{true, kUsageError,
                           std::string(e.what()) + "\nRun with --help for the options."};
    }
    if (headless && window)
        return ParseResult{true, kUsageError, "--headless and --window exclude each other"};
    options.mode = headless ? Options::Mode::Headless
                   : window ? Options::Mode::Window
                            : Options::Mode::Auto;
    options.overlay = !noOverlay;
    options.vsync = !noVsync;
    if (!size.empty()) {
        std::string error;
        if (!parseSize(size, options.width, options.height, error))
            return ParseResult{true, kUsageError, error};
    }
    for (const std::string& s : options.set)
        if (s.find('=') == std::string::npos || s.front() == '=')
            return ParseResult{true, kUsageError, "--set: expected NAME=VALUE, got '" + s + "'"};
    return result;
}

} // namespace duet::engine
