// Duet as a dependency, checked the way a user meets it: `cmake --install` into a scratch prefix,
// then what lies there (GNUInstallDirs layout, the ICD file, headers that compile on their own),
// examples/starter configured and built against that prefix with find_package(Duet) and run
// headless (its PNG checked), a pkg-config user compiled and linked, and the installed samples'
// --version and data lookup (share/duet, never the source tree).
#include "support/process.hpp"

#include "duet/engine/gfx/capture.hpp"

#include <catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using duet::test::CommandResult;
using duet::test::pathExists;
using duet::test::readFile;
using duet::test::runCommand;

namespace {

const std::string kVersion = DUET_PROJECT_VERSION;
const std::string kLibDir = DUET_INSTALL_LIBDIR;
const std::vector<std::string> kSamples = {"duet-nbody",  "duet-simplegl", "duet-ocean",
                                           "duet-gasdyn", "duet-displays", "duet-engine-demo"};

std::string quote(const std::string& s) {
    return "'" + s + "'";
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
        s.pop_back();
    return s;
}

/// The scratch prefix, installed once per run (from a clean folder).
const fs::path& prefix() {
    static fs::path p = [] {
        fs::path work = fs::current_path() / "work";
        fs::remove_all(work);
        fs::create_directories(work);
        fs::path dir = work / "prefix";
        CommandResult r = runCommand(quote(DUET_CMAKE) + " --install " + quote(DUET_BUILD_DIR) +
                                     " --prefix " + quote(dir.string()));
        INFO(r.output);
        REQUIRE(r.exitCode == 0);
        return fs::canonical(dir); // as /proc/self/exe will name it
    }();
    return p;
}

/// Environment that makes the ICD loader see the installed Duet (and only it).
std::string icdEnv() {
    return "OCL_ICD_VENDORS=" + quote((prefix() / "etc/OpenCL/vendors").string()) +
           " OCL_ICD_FILENAMES= ";
}

/// Every file under `root` whose name ends with `suffix`, relative to `root`.
std::vector<fs::path> filesUnder(const fs::path& root, const std::string& suffix) {
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file() && e.path().string().ends_with(suffix))
            out.push_back(fs::relative(e.path(), root));
    return out;
}

} // namespace

TEST_CASE("cmake --install puts libraries, headers, package files, samples and data in "
          "GNUInstallDirs places",
          "[install][layout]") {
    const fs::path& p = prefix();
    for (std::string lib : {"duet-interop", "duet-interop-displays", "duet-engine",
                            "duet-engine-main", "duet-fft", "duet-glad"})
        CHECK(fs::is_regular_file(p / kLibDir / ("lib" + lib + ".a")));
    CHECK(fs::is_regular_file(p / kLibDir / ("libduet-opencl.so." + kVersion)));
    CHECK(fs::is_symlink(p / kLibDir / "libduet-opencl.so.0"));
    for (const char* f : {"DuetConfig.cmake", "DuetConfigVersion.cmake", "DuetTargets.cmake"})
        CHECK(fs::is_regular_file(p / kLibDir / "cmake/Duet" / f));
    for (const char* f : {"duet-interop.pc", "duet-engine.pc"})
        CHECK(fs::is_regular_file(p / kLibDir / "pkgconfig" / f));
    for (const std::string& s : kSamples)
        CHECK(fs::is_regular_file(p / "bin" / s));
    CHECK(fs::is_regular_file(p / "include/duet/version.hpp"));
    CHECK(fs::is_regular_file(p / "include/duet/glad/glad/gl.h"));
    CHECK(fs::is_regular_file(p / "share/doc/duet/CHANGELOG.md"));
    CHECK(fs::is_regular_file(p / "share/doc/duet/examples/starter/CMakeLists.txt"));

    // Every public header of the three include roots, under one root, include/duet/.
    const fs::path source = DUET_SOURCE_DIR;
    int headers = 0;
    for (const char* root : {"interop/include", "engine/include", "kernels/fft/include"})
        for (const fs::path& h : filesUnder(source / root, ".hpp")) {
            INFO(h);
            CHECK(fs::is_regular_file(p / "include" / h));
            ++headers;
        }
    CHECK(headers >= 15);
    // Every kernel and shader the samples load.
    for (const fs::path& k : filesUnder(source / "kernels", ".cl")) {
        INFO(k);
        CHECK(fs::is_regular_file(p / "share/duet/kernels" / k));
    }
    for (const fs::path& s : filesUnder(source / "shaders", ".glsl")) {
        INFO(s);
        CHECK(fs::is_regular_file(p / "share/duet/shaders" / s));
    }
}

TEST_CASE("the installed ICD file names the installed runtime; clinfo lists it with the version",
          "[install][icd]") {
    const fs::path& p = prefix();
    fs::path icd = p / "etc/OpenCL/vendors/duet.icd";
    REQUIRE(fs::is_regular_file(icd));
    std::string library = trim(readFile(icd.string()));
    CHECK(library == (p / kLibDir / "libduet-opencl.so.0").string());
    CHECK(fs::is_regular_file(library));

    std::string clinfo = duet::test::findInPath("clinfo");
    if (clinfo.empty()) {
        WARN("clinfo is not installed (apt-get install clinfo): its listing is not checked");
        return;
    }
    CommandResult r = runCommand(icdEnv() + quote(clinfo));
    INFO(r.output);
    REQUIRE(r.exitCode == 0);
    CHECK(r.output.find("Platform Version                                OpenCL 3.0 Duet " +
                        kVersion) != std::string::npos);
    // Every device's CL_DRIVER_VERSION starts with the project version.
    size_t devices = 0;
    for (size_t at = r.output.find("Driver Version"); at != std::string::npos;
         at = r.output.find("Driver Version", at + 1)) {
        size_t value = r.output.find_first_not_of(' ', at + 14);
        CHECK(r.output.compare(value, kVersion.size(), kVersion) == 0);
        ++devices;
    }
    CHECK(devices >= 1);
}

TEST_CASE("every installed public header compiles on its own from the installed include root",
          "[install][headers]") {
    const fs::path& p = prefix();
    fs::path dir = p.parent_path() / "headers";
    fs::create_directories(dir);
    std::string list;
    for (const fs::path& h : filesUnder(p / "include/duet", ".hpp")) {
        if (h.string().starts_with("glad/"))
            continue;
        fs::path tu = dir / (h.stem().string() + "_" + std::to_string(list.size()) + ".cpp");
        std::ofstream(tu) << "#include <duet/" << h.generic_string() << ">\n";
        list += quote(tu.string()) + " ";
    }
    std::string flags = "-std=c++20 -fsyntax-only -Wall -Wextra -Werror -I" +
                        quote((p / "include").string()) + " -I" +
                        quote((p / "include/duet/glad").string());
    CommandResult r = runCommand("printf '%s\\n' " + list + "| xargs -P2 -n1 " +
                                 quote(DUET_CXX_COMPILER) + " " + flags);
    INFO(r.output);
    CHECK(r.exitCode == 0);
}

TEST_CASE("examples/starter builds against the installed tree with find_package(Duet) and draws "
          "its ring headless",
          "[install][starter]") {
    const fs::path& p = prefix();
    fs::path build = p.parent_path() / "starter";
    CommandResult configure = runCommand(
        quote(DUET_CMAKE) + " -S " + quote(DUET_SOURCE_DIR "/examples/starter") + " -B " +
        quote(build.string()) + " -G " + quote(DUET_CMAKE_GENERATOR) + " -DCMAKE_MAKE_PROGRAM=" +
        quote(DUET_MAKE_PROGRAM) + " -DCMAKE_CXX_COMPILER=" + quote(DUET_CXX_COMPILER) +
        " -DCMAKE_PREFIX_PATH=" + quote(p.string()) + " -DCMAKE_EXPORT_COMPILE_COMMANDS=ON");
    INFO(configure.output);
    REQUIRE(configure.exitCode == 0);
    CommandResult compile = runCommand(quote(DUET_CMAKE) + " --build " + quote(build.string()));
    INFO(compile.output);
    REQUIRE(compile.exitCode == 0);
    // It used the installed tree, not this build or its sources.
    std::string commands = readFile((build / "compile_commands.json").string());
    CHECK(commands.find((p / "include").string()) != std::string::npos);
    CHECK(commands.find(DUET_SOURCE_DIR "/engine") == std::string::npos);
    CHECK(commands.find(DUET_SOURCE_DIR "/interop") == std::string::npos);
    std::string ninja = readFile((build / "build.ninja").string());
    for (const char* dir : {"/engine/", "/interop/", "/kernels/", "/runtime/"}) {
        INFO(dir);
        CHECK(ninja.find(DUET_BUILD_DIR + std::string(dir)) == std::string::npos);
    }

    fs::path exe = build / "duet-starter";
    CommandResult version = runCommand(quote(exe.string()) + " --version");
    CHECK(version.exitCode == 0);
    CHECK(trim(version.output) == "duet-starter (Duet) " + kVersion);

    fs::path png = build / "ring.png";
    CommandResult run = runCommand(icdEnv() + quote(exe.string()) +
                                   " --headless --frames 3 --size 320x240 --no-overlay"
                                   " --set amplitude=0.3 --set waves=5 --screenshot " +
                                   quote(png.string()));
    INFO(run.output);
    REQUIRE(run.exitCode == 0);
    // On the installed Duet, sharing the VBO with GL (not host copies).
    CHECK(run.output.find("duet-starter: OpenCL Duet / ") != std::string::npos);
    CHECK(run.output.find("GL sharing") != std::string::npos);

    // The ring the kernel wrote: drawn pixels only between radius 0.3 and 0.9 of the half height
    // (0.6 +- amplitude), plenty of them, and none near the centre. An unwritten buffer draws
    // nothing (or one point at the centre).
    duet::engine::Image image = duet::engine::readPng(png.string());
    REQUIRE(image.width == 320);
    REQUIRE(image.height == 240);
    int drawn = 0, outside = 0;
    for (int y = 0; y < image.height; ++y)
        for (int x = 0; x < image.width; ++x) {
            const std::uint8_t* px = &image.rgba[(size_t(y) * size_t(image.width) + size_t(x)) * 4];
            if (px[0] + px[1] + px[2] < 120)
                continue; // background (0.04, 0.04, 0.06)
            ++drawn;
            double dx = (x + 0.5 - image.width / 2.0) / (image.height / 2.0);
            double dy = (y + 0.5 - image.height / 2.0) / (image.height / 2.0);
            double r = std::sqrt(dx * dx + dy * dy);
            if (r < 0.27 || r > 0.93)
                ++outside;
        }
    CHECK(drawn > 400);
    CHECK(outside == 0);
}

TEST_CASE("pkg-config users compile and link against duet-interop and duet-engine",
          "[install][pkgconfig]") {
    const fs::path& p = prefix();
    std::string env =
        "export PKG_CONFIG_PATH=" + quote((p / kLibDir / "pkgconfig").string()) + "; ";
    CommandResult modversion = runCommand(env + "pkg-config --modversion duet-interop duet-engine");
    INFO(modversion.output);
    REQUIRE(modversion.exitCode == 0);
    CHECK(modversion.output == kVersion + "\n" + kVersion + "\n");

    fs::path dir = p.parent_path() / "pkgconfig-user";
    fs::create_directories(dir);
    std::ofstream(dir / "user.cpp")
        << "#include <duet/engine/app/options.hpp>\n"
           "#include <duet/interop/interop.hpp>\n"
           "#include <duet/version.hpp>\n"
           "#include <cstdio>\n"
           "int main(int, char** argv) {\n"
           "    std::printf(\"%s|%s|%s\\n\", duet::engine::versionText(argv[0]).c_str(),\n"
           "                duet::interop::errorName(CL_INVALID_VALUE).c_str(), DUET_VERSION);\n"
           "}\n";
    fs::path exe = dir / "pc-user";
    CommandResult compile = runCommand(
        env + quote(DUET_CXX_COMPILER) + " -std=c++20 " + quote((dir / "user.cpp").string()) +
        " -o " + quote(exe.string()) + " $(pkg-config --cflags --libs duet-engine)");
    INFO(compile.output);
    REQUIRE(compile.exitCode == 0);
    CommandResult run = runCommand(quote(exe.string()));
    CHECK(run.exitCode == 0);
    CHECK(run.output == "pc-user (Duet) " + kVersion + "|CL_INVALID_VALUE|" + kVersion + "\n");
}

TEST_CASE("installed samples print the version and read kernels from share/duet, not the source "
          "tree",
          "[install][samples]") {
    const fs::path& p = prefix();
    // Every installed program, not only the ones this test knows by name.
    int programs = 0;
    for (const auto& entry : fs::directory_iterator(p / "bin")) {
        std::string s = entry.path().filename().string();
        ++programs;
        CommandResult r = runCommand(quote(entry.path().string()) + " --version");
        INFO(s << ": " << r.output);
        CHECK(r.exitCode == 0);
        CHECK(trim(r.output) == s + " (Duet) " + kVersion);
    }
    CHECK(programs >= int(kSamples.size()));

    std::string simplegl = icdEnv() + quote((p / "bin/duet-simplegl").string()) +
                           " --headless --frames 2 --size 64x64 --no-overlay";
    CommandResult ok = runCommand(simplegl);
    INFO(ok.output);
    CHECK(ok.exitCode == 0);
    // Without its installed kernels it fails, naming the installed folder: it never falls back
    // to the source tree's kernels/, which still exist.
    fs::path kernels = p / "share/duet/kernels/simplegl";
    fs::path hidden = p / "share/duet/kernels/simplegl.hidden";
    fs::rename(kernels, hidden);
    CommandResult missing = runCommand(simplegl);
    fs::rename(hidden, kernels);
    INFO(missing.output);
    CHECK(missing.exitCode != 0);
    CHECK(missing.output.find(kernels.string()) != std::string::npos);
}
