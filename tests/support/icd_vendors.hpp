// Test support: an ICD vendors folder holding Duet's and PoCL's .icd files (as bench/run.sh
// makes), so the loader sees both platforms and tests pick one by name.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace duet::test {

inline constexpr const char* kPoclIcd = "/etc/OpenCL/vendors/pocl.icd";

/// True when PoCL's .icd is installed.
inline bool havePocl() {
    return std::filesystem::exists(kPoclIcd);
}

/// Points OCL_ICD_VENDORS (ocl-icd) and OCL_ICD_FILENAMES (Khronos loader) at a temporary folder
/// with the build's duet.icd (or $DUET_TEST_DUET_ICD, e.g. another build's) and the system's
/// pocl.icd. Must run before the first OpenCL call.
inline void useDuetAndPocl() {
    static bool done = false;
    if (done)
        return;
    done = true;
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("duet-vendors-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const char* override = std::getenv("DUET_TEST_DUET_ICD");
    fs::path duetIcd = override && *override ? override : DUET_ICD_FILE;
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

} // namespace duet::test
