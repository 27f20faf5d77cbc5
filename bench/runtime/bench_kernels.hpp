// The OpenCL C source duet-bench builds and runs on every platform.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace duet::bench {

/// The whole benchmark program: N-body, triad, parallel min, launch probe, and a few kernels
/// that are only compiled (tiled matrix multiply, work-group scan, stencil, histogram) so the
/// build benchmark compiles a medium-sized, realistic source. `nonce` goes into a comment and
/// a macro so that no platform's program cache can recognise the source.
std::string benchSource(uint64_t nonce);

/// Build options that go with benchSource(nonce) (the nonce again, as -D).
std::string benchBuildOptions(uint64_t nonce);

/// Every kernel benchSource defines, for checking a build.
const std::vector<std::string>& benchKernelNames();

} // namespace duet::bench
