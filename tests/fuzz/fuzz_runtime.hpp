// What the fuzz targets that drive the whole runtime (fuzz_build_source, fuzz_api_sequence)
// share: Duet's CPU device and a context opened once, build-log and name queries, and extra
// coverage features for code the fuzzer cannot see into (the runtime is linked as built).
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <string>

namespace duet::fuzz {

struct Runtime {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
};

/// Opens Duet's CPU device (DUET_DEVICES=cpu unless set) and one context on it; aborts with a
/// message when there is none. Call from LLVMFuzzerInitialize.
void openCpuDevice();
/// What openCpuDevice opened.
const Runtime& runtime();

std::string buildLog(cl_program program, cl_device_id device);
std::string kernelName(cl_kernel kernel);

/// Counts feature `id` in libFuzzer's extra counters (any id; folded into the table), so that an
/// input reaching a new outcome of the uninstrumented runtime is kept in the corpus.
void bumpFeature(size_t id);
/// One feature per distinct diagnostic in a build log: the message after "error:" or "warning:"
/// with positions and quoted names stripped.
void diagnosticFeatures(const std::string& log);

} // namespace duet::fuzz
