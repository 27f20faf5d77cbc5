// The Duet + PoCL vendors folder for the tests that run on both platforms.
#include "support/icd_vendors.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace duet::test {

bool havePocl() {
    return std::filesystem::exists(kPoclIcd);
}

std::string duetIcdFile() {
    const char* override = std::getenv("DUET_TEST_DUET_ICD");
    return override && *override ? override : DUET_ICD_FILE;
}

void useDuetAndPocl() {
    static bool done = false;
    if (done)
        return;
    done = true;
    namespace fs = std::filesystem;
    static const fs::path dir =
        fs::temp_directory_path() / ("duet-vendors-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    // Gone when the test process ends (every process made one; hundreds piled up in /tmp).
    std::atexit([] {
        std::error_code ignored;
        fs::remove_all(dir, ignored);
    });
    fs::path duetIcd = duetIcdFile();
    fs::copy_file(duetIcd, dir / "duet.icd", fs::copy_options::overwrite_existing);
    std::ifstream duet(duetIcd);
    std::string libraries;
    std::getline(duet, libraries);
    if (havePocl()) {
        fs::copy_file(kPoclIcd, dir / "pocl.icd", fs::copy_options::overwrite_existing);
        std::ifstream icd(kPoclIcd);
        std::string pocl;
        std::getline(icd, pocl);
        libraries += ":" + pocl;
    }
    setenv("OCL_ICD_VENDORS", dir.c_str(), 1);
    setenv("OCL_ICD_FILENAMES", libraries.c_str(), 1);
}

std::vector<std::string> platformsUnderTest() {
    useDuetAndPocl();
    std::vector<std::string> names = {"Duet"};
    if (havePocl())
        names.push_back("Portable Computing Language");
    return names;
}

} // namespace duet::test
