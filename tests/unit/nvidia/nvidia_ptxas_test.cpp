// Every test program's PTX through NVIDIA's assembler (ptxas of a CUDA toolkit, found at
// configure time) for sm_90 and sm_80: what the driver's JIT would take. Without ptxas the test
// says SKIPPED and exits 77 (ctest: skipped). No GPU needed.
#define CATCH_CONFIG_RUNNER
#include "build_util.hpp"
#include "kernels.hpp"
#include "support/xvfb.hpp" // skipTest

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace duet;
using namespace duet::nvidia::test;

namespace {

std::string ptxas() {
#ifdef DUET_PTXAS
    return DUET_PTXAS;
#else
    return {};
#endif
}

struct Assembled {
    int status = -1;
    std::string output;
};

/// ptxas -arch=<sm> on `ptx` (written to a temporary file); its exit status and messages.
Assembled assemble(const std::string& ptx, const std::string& sm) {
    char dir[] = "/tmp/duet-ptxas-XXXXXX";
    REQUIRE(mkdtemp(dir));
    const std::string in = std::string(dir) + "/module.ptx",
                      out = std::string(dir) + "/module.cubin", log = std::string(dir) + "/log.txt";
    std::ofstream(in) << ptx;
    const std::string cmd =
        "'" + ptxas() + "' -arch=" + sm + " -o " + out + " " + in + " > " + log + " 2>&1";
    Assembled r;
    const int raw = std::system(cmd.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    std::ostringstream text;
    text << std::ifstream(log).rdbuf();
    r.output = text.str();
    std::remove(in.c_str());
    std::remove(out.c_str());
    std::remove(log.c_str());
    rmdir(dir);
    return r;
}

} // namespace

TEST_CASE("ptxas accepts the PTX of every test program for sm_90 and sm_80", "[nvidia][ptxas]") {
    for (const char* sm : {"sm_90", "sm_80"}) {
        for (const Program& p : programs()) {
            INFO("program " << p.name << " for " << sm);
            Built b = build(p.source, p.options, target(sm, 80));
            Assembled a = assemble(b.exe->ptx(), sm);
            INFO("ptxas:\n" << a.output << "\nPTX:\n" << b.exe->ptx());
            CHECK(a.status == 0);
        }
    }
}

TEST_CASE("ptxas accepts PTX 7.8 for sm_90 (drivers of CUDA 11.8)", "[nvidia][ptxas]") {
    Built b = build(programs().front().source, programs().front().options, target("sm_90", 78));
    REQUIRE(contains(b.exe->ptx(), ".version 7.8"));
    Assembled a = assemble(b.exe->ptx(), "sm_90");
    INFO("ptxas:\n" << a.output);
    CHECK(a.status == 0);
}

TEST_CASE("ptxas accepts PTX with debug information and without optimisation", "[nvidia][ptxas]") {
    for (const char* options : {"-g", "-cl-opt-disable", "-g -cl-opt-disable"})
        for (const Program& p : programs()) {
            INFO("program " << p.name << " with " << options);
            Built b = build(p.source, std::string(p.options) + " " + options);
            Assembled a = assemble(b.exe->ptx(), "sm_90");
            INFO("ptxas:\n" << a.output);
            CHECK(a.status == 0);
        }
}

TEST_CASE("every builtin the device declares compiles to PTX that ptxas accepts",
          "[nvidia][ptxas][builtins]") {
    // The calls builtins-completeness-nvidia generates (one function per overload of
    // opencl-c.h for the device's features, images and samplers included), each made a kernel
    // and built without optimisation, so that every builtin reaches the NVPTX backend and ptxas.
#ifdef DUET_COMPLETENESS_DIR
    for (const char* std : {"CL12", "CL30"}) {
        std::ifstream in(std::string(DUET_COMPLETENESS_DIR) + "/calls." + std + ".cl");
        if (!in) {
            WARN("no calls." << std << ".cl: run ctest -R builtins-completeness-nvidia first");
            continue;
        }
        std::string source, line;
        size_t kernels = 0;
        size_t imageKernels = 0;
        while (std::getline(in, line)) {
            if (line.rfind("void duet_call_", 0) == 0) {
                line = "__kernel " + line;
                ++kernels;
            } else if (line.rfind("kernel void duet_call_", 0) == 0) {
                ++kernels; // image and sampler parameters: generated as a kernel already
                ++imageKernels;
            }
            source += line + "\n";
        }
        CHECK(imageKernels > 0); // the image builtins are among them
        INFO(std << ": " << kernels << " kernels");
        Built b = build(source,
                        std::string(std == std::string("CL30") ? "-cl-std=CL3.0 " : "") +
                            "-cl-opt-disable",
                        target("sm_90", 80));
        CHECK(b.exe->kernels().size() == kernels);
        Assembled a = assemble(b.exe->ptx(), "sm_90");
        INFO("ptxas:\n" << a.output.substr(0, 4000));
        CHECK(a.status == 0);
    }
#else
    WARN("built without DUET_COMPLETENESS_DIR");
#endif
}

int main(int argc, char** argv) {
    const std::string tool = ptxas();
    if (tool.empty() || access(tool.c_str(), X_OK) != 0) {
        return duet::test::skipTest("no ptxas (CUDA toolkit) found at configure time; the PTX "
                                    "of the NVIDIA code generator is not assembled");
    }
    std::printf("assembling with %s\n", tool.c_str());
    return Catch::Session().run(argc, argv);
}
