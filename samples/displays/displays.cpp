// duet-displays: which GPUs, X screens and EGL devices this machine has, a GL context made on
// each, and which OpenCL devices (every ICD platform) can share with it; a table, and JSON.
#include "report_format.hpp"

#include "duet/version.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"duet-displays: GPUs (libdrm), X screens (GLX), EGL devices, and for each GL "
                 "context the OpenCL devices that can share with it (clGetGLContextInfoKHR)"};
    std::string display, jsonFile;
    bool noX = false, noEgl = false;
    app.add_option("--display", display, "X display to list, e.g. :0 (default: $DISPLAY)");
    app.add_option("--json", jsonFile, "also write JSON to FILE ('-': JSON alone on stdout)");
    app.add_flag("--no-x", noX, "do not list X screens");
    app.add_flag("--no-egl", noEgl, "do not list EGL devices");
    app.set_version_flag("--version", "duet-displays (Duet) " DUET_VERSION,
                         "print the program's name and the Duet version, and exit");
    CLI11_PARSE(app, argc, argv);

    duet::interop::DisplayOptions options;
    options.xDisplay = display;
    options.listX = !noX;
    options.listEgl = !noEgl;
    duet::interop::DisplayReport report = duet::interop::enumerateDisplays(options);

    // Whole sections that could not be listed go to stderr; per-screen and per-device failures
    // are part of the listing.
    int status = 0;
    if (!report.platformsError.empty())
        std::fprintf(stderr, "duet-displays: OpenCL: %s\n", report.platformsError.c_str());
    if (report.xAsked && !report.x.error.empty()) {
        std::fprintf(stderr, "duet-displays: X: %s\n", report.x.error.c_str());
        // A display the user named on the command line that cannot be listed is a failure; one
        // inherited from $DISPLAY is only reported.
        if (!display.empty() && !report.x.opened)
            status = 1;
    }
    if (report.eglAsked && !report.egl.error.empty())
        std::fprintf(stderr, "duet-displays: EGL: %s\n", report.egl.error.c_str());

    if (jsonFile != "-")
        std::fputs(duet::displays::toTable(report).c_str(), stdout);
    if (!jsonFile.empty()) {
        std::string text = duet::displays::toJson(report).dump(2) + "\n";
        if (jsonFile == "-") {
            std::fputs(text.c_str(), stdout);
        } else {
            std::ofstream out(jsonFile);
            out << text;
            out.close();
            if (!out) {
                std::fprintf(stderr, "duet-displays: cannot write JSON to '%s'\n",
                             jsonFile.c_str());
                return 1;
            }
        }
    }
    if (!report.anythingShares())
        std::fprintf(stderr, "duet-displays: no OpenCL device can share with any GL context "
                             "listed\n");
    return status;
}
