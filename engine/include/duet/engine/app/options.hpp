// The one command line every sample takes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace duet::engine {

/// Parsed command line. Default-constructed means: choose window or headless automatically,
/// run until closed (windowed) or kDefaultHeadlessFrames frames (headless), 1280x720.
struct Options {
    /// --window, --headless, or neither (Auto).
    enum class Mode { Auto, Window, Headless };
    /// Frames a headless run renders when --frames is not given.
    static constexpr int kDefaultHeadlessFrames = 10;

    Mode mode = Mode::Auto;       ///< Auto: headless when $DISPLAY is unset or empty
    int frames = 0;               ///< 0: until the window closes (headless: kDefaultHeadlessFrames)
    int width = 1280;             ///< --size WxH: the framebuffer's width
    int height = 720;             ///< and height, in pixels
    std::string screenshot;       ///< PNG written from the last frame; empty: none
    std::string platform;         ///< OpenCL platform name substring, for the sample's CL set-up
    std::string device;           ///< OpenCL device name substring, for the sample's CL set-up
    bool stats = false;           ///< print the per-phase timing summary at exit
    bool overlay = true;          ///< draw the ImGui overlay
    bool vsync = true;            ///< wait for vertical sync in a window (--no-vsync: off)
    std::string sample;           ///< registered sample to run; empty: the only one there is
    bool list = false;            ///< print the registered samples and exit
    std::vector<std::string> set; ///< "name=value" parameter assignments
};

/// What parseCommandLine decided.
struct ParseResult {
    bool exit = false;   ///< true: do not run; exit with exitCode after printing message
    int exitCode = 0;    ///< 0 for --help, kUsageError for bad input
    std::string message; ///< help text or the error, one line per problem
};

/// Exit code for a bad command line.
inline constexpr int kUsageError = 2;

/// Parses argv (argv[0] is the program name). Never throws and never exits the process.
/// --help and --version end with exit set, exitCode 0 and the text to print in message.
ParseResult parseCommandLine(int argc, const char* const* argv, Options& options);

/// What --version prints: "<program> (Duet) <version>", the program being argv0's file name
/// (e.g. "duet-nbody (Duet) 0.1.0"); the version is DUET_VERSION of <duet/version.hpp>.
std::string versionText(const char* argv0);

/// Parses "WxH" (e.g. 1280x720) into positive width and height up to 16384; on failure returns
/// false with the reason in `error`.
bool parseSize(std::string_view text, int& width, int& height, std::string& error);

} // namespace duet::engine
