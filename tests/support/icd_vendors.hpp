// Test support: an ICD vendors folder holding Duet's and PoCL's .icd files (as bench/run.sh
// makes), so the loader sees both platforms and tests pick one by name.
#pragma once

#include <string>
#include <vector>

namespace duet::test {

inline constexpr const char* kPoclIcd = "/etc/OpenCL/vendors/pocl.icd";

/// True when PoCL's .icd is installed.
bool havePocl();

/// The duet.icd under test: $DUET_TEST_DUET_ICD (another build's, a relocatable bundle's) or the
/// build's.
std::string duetIcdFile();

/// Points OCL_ICD_VENDORS (ocl-icd) and OCL_ICD_FILENAMES (Khronos loader) at a temporary folder
/// with the build's duet.icd (or $DUET_TEST_DUET_ICD, e.g. another build's) and the system's
/// pocl.icd. Must run before the first OpenCL call; later calls do nothing.
void useDuetAndPocl();

/// The platforms a multi-platform test runs on, as platform names: Duet always, PoCL
/// ("Portable Computing Language") where its ICD is installed. Calls useDuetAndPocl().
std::vector<std::string> platformsUnderTest();

} // namespace duet::test
