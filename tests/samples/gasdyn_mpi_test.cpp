// duet-gasdyn under mpirun with a display rank: rank 0's headless picture equals the single-
// process program's (UI settings broadcast to every rank), a grid larger than the window is
// shown down-sampled, and bad decompositions end the run with a message.
#include "duet/data_paths.hpp"
#include "support/process.hpp"

#include "duet/engine/gfx/capture.hpp"

#include <catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

namespace {

using duet::test::CommandResult;
using duet::test::runCommand;

std::string mpirun(int ranks) {
    return std::string(DUET_MPIEXEC) + " --allow-run-as-root --oversubscribe -np " +
           std::to_string(ranks) + " ";
}

std::string gasdyn() {
    return duet::programPath(DUET_GASDYN);
}

// Fraction of pixels that differ by more than `tolerance` in some channel.
double differingPixels(const duet::engine::Image& a, const duet::engine::Image& b, int tolerance) {
    long n = 0;
    for (int y = 0; y < a.height; ++y)
        for (int x = 0; x < a.width; ++x) {
            auto p = a.at(x, y), q = b.at(x, y);
            for (int c = 0; c < 3; ++c)
                if (std::abs(int(p[c]) - int(q[c])) > tolerance) {
                    ++n;
                    break;
                }
        }
    return double(n) / (double(a.width) * a.height);
}

} // namespace

TEST_CASE("duet-gasdyn on 3 ranks draws the single-process picture", "[samples][gasdyn][mpi]") {
    const std::string settings =
        " --headless --no-overlay --frames 8 --size 320x240 --set problem=lax-liu-3"
        " --set resolution=96 --set limiter=minmod --set riemann=exact --set cfl=0.6"
        " --set 'steps per frame=3' --screenshot ";
    std::string one = std::filesystem::absolute("gasdyn_mpi_single.png");
    std::string three = std::filesystem::absolute("gasdyn_mpi_3.png");
    std::filesystem::remove(one);
    std::filesystem::remove(three);
    CommandResult single = runCommand(gasdyn() + settings + one);
    INFO(single.output);
    REQUIRE(single.exitCode == 0);
    CommandResult run = runCommand(mpirun(3) + gasdyn() + settings + three);
    INFO(run.output);
    REQUIRE(run.exitCode == 0);
    CHECK(run.output.find("lax-liu-3 96x96 on 3 ranks") != std::string::npos);
    CHECK(run.output.find("after 24 steps") != std::string::npos);
    duet::engine::Image a = duet::engine::readPng(one), b = duet::engine::readPng(three);
    REQUIRE(a.width == 320);
    REQUIRE(b.width == 320);
    REQUIRE(a.height == b.height);
    CHECK(differingPixels(a, b, 0) == 0.0);
    // Not a blank picture either: the quadrants' colours.
    int distinct = 0;
    for (int x = 0; x < 320; x += 4)
        distinct += a.at(x, 120) != a.at(160, 120);
    CHECK(distinct > 10);
}

TEST_CASE("duet-gasdyn on 4 ranks shows a grid larger than the window down-sampled",
          "[samples][gasdyn][mpi]") {
    // 192 cells in a 64-pixel window: every third cell. The single-process picture filters the
    // whole texture instead, so the two agree only loosely.
    const std::string settings = " --headless --no-overlay --frames 3 --size 64x64"
                                 " --set problem=lax-liu-3 --set resolution=192 --screenshot ";
    std::string one = std::filesystem::absolute("gasdyn_mpi_small_single.png");
    std::string four = std::filesystem::absolute("gasdyn_mpi_small_4.png");
    CommandResult single = runCommand(gasdyn() + settings + one);
    INFO(single.output);
    REQUIRE(single.exitCode == 0);
    CommandResult run = runCommand(mpirun(4) + gasdyn() + " --ranks 2x2" + settings + four);
    INFO(run.output);
    REQUIRE(run.exitCode == 0);
    CHECK(run.output.find("on 4 ranks (2x2)") != std::string::npos);
    duet::engine::Image a = duet::engine::readPng(one), b = duet::engine::readPng(four);
    REQUIRE(a.width == 64);
    REQUIRE(b.width == 64);
    double differ = differingPixels(a, b, 24);
    INFO(differ << " of the pixels differ by more than 24");
    CHECK(differ < 0.1);
    CHECK(differingPixels(a, b, 0) > 0.0); // sampled, not the same picture
}

TEST_CASE("duet-gasdyn restarted from a checkpoint on another rank count draws the "
          "uninterrupted picture",
          "[samples][gasdyn][mpi][checkpoint]") {
    // 3 ranks write checkpoints every 8 steps (2 per frame: steps 8 and 16 in 10 frames); 2
    // ranks resume from step 16 with the checkpoint's problem, limiter and resolution and take
    // 10 more; one process takes 26 straight.
    const std::string problem = " --headless --no-overlay --size 160x160"
                                " --set problem=kelvin-helmholtz --set resolution=64"
                                " --set limiter=van-leer";
    std::string h5 = std::filesystem::absolute("gasdyn_kh.h5");
    std::string restarted = std::filesystem::absolute("gasdyn_kh_restarted.png");
    std::string straight = std::filesystem::absolute("gasdyn_kh_single.png");
    for (const std::string& f : {h5, h5 + ".xmf", restarted, straight})
        std::filesystem::remove(f);
    CommandResult first = runCommand(mpirun(3) + gasdyn() + problem +
                                     " --frames 10 --checkpoint-every 8 --checkpoint " + h5);
    INFO(first.output);
    REQUIRE(first.exitCode == 0);
    CHECK(first.output.find("checkpoint " + h5 + " at step 16") != std::string::npos);
    CHECK(std::filesystem::exists(h5 + ".xmf"));
    CHECK(!std::filesystem::exists(h5 + ".part"));
    // The restart names no problem: the file says which.
    CommandResult second = runCommand(mpirun(2) + gasdyn() +
                                      " --headless --no-overlay --size 160x160 --frames 5"
                                      " --restart " +
                                      h5 + " --screenshot " + restarted);
    INFO(second.output);
    REQUIRE(second.exitCode == 0);
    CHECK(second.output.find("kelvin-helmholtz at resolution 64, t = ") != std::string::npos);
    CHECK(second.output.find("after 16 steps") != std::string::npos);
    CommandResult single = runCommand(gasdyn() + problem + " --frames 13 --screenshot " + straight);
    INFO(single.output);
    REQUIRE(single.exitCode == 0);
    std::smatch m, n;
    static const std::regex line("t = ([0-9.]+) after ([0-9]+) steps\\n");
    std::string tail = second.output.substr(second.output.rfind("kelvin-helmholtz 64x64"));
    REQUIRE(std::regex_search(tail, m, line));
    REQUIRE(std::regex_search(single.output, n, line));
    CHECK(m[2] == "26");
    CHECK(m[1] == n[1]);
    duet::engine::Image a = duet::engine::readPng(straight), b = duet::engine::readPng(restarted);
    REQUIRE(a.width == 160);
    REQUIRE(b.width == 160);
    CHECK(differingPixels(a, b, 0) == 0.0);

    CommandResult missing =
        runCommand(mpirun(2) + gasdyn() + " --headless --frames 1 --restart no-such-file.h5");
    CHECK(missing.exitCode != 0);
    CHECK(missing.output.find("no-such-file.h5: cannot open it as an HDF5 file") !=
          std::string::npos);
}

TEST_CASE("duet-gasdyn under mpirun: paused, --help and bad decompositions",
          "[samples][gasdyn][mpi]") {
    // Paused from the start: no step on any rank, the clock as the single-process program
    // leaves it (its first reduction has set the pending step's time).
    const std::string pausedRun = " --headless --frames 2 --size 64x64 --set paused=true";
    CommandResult paused = runCommand(mpirun(2) + gasdyn() + pausedRun);
    CommandResult pausedSingle = runCommand(gasdyn() + pausedRun);
    INFO(paused.output);
    INFO(pausedSingle.output);
    CHECK(paused.exitCode == 0);
    std::smatch m, n;
    static const std::regex line("t = ([0-9.]+) after ([0-9]+) steps");
    REQUIRE(std::regex_search(paused.output, m, line));
    REQUIRE(std::regex_search(pausedSingle.output, n, line));
    CHECK(m[2] == "0");
    CHECK(m[1] == n[1]);

    CommandResult help = runCommand(mpirun(2) + gasdyn() + " --help");
    CHECK(help.exitCode == 0);
    CHECK(help.output.find("--checkpoint-every") != std::string::npos);
    CHECK(help.output.find("--screenshot") != std::string::npos);

    CommandResult badRanks =
        runCommand(mpirun(3) + gasdyn() + " --headless --frames 1 --ranks 2x2");
    INFO(badRanks.output);
    CHECK(badRanks.exitCode != 0);
    CHECK(badRanks.output.find("do not divide the 3 ranks") != std::string::npos);

    CommandResult badValue = runCommand(mpirun(2) + gasdyn() + " --headless --ranks 2by1");
    CHECK(badValue.exitCode != 0);
    CHECK(badValue.output.find("--ranks: expected XxY") != std::string::npos);

    CommandResult thin = runCommand(mpirun(3) + gasdyn() +
                                    " --headless --frames 1 --ranks 3x1 --set problem=sod-y"
                                    " --set resolution=16");
    INFO(thin.output);
    CHECK(thin.exitCode != 0);
    CHECK(thin.output.find("thinner than the stencil") != std::string::npos);
}
