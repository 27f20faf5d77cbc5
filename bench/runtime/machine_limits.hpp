// What the host machine itself can do, measured by plain C++ on host threads: STREAM's triad
// bandwidth and the FP32 fused multiply-add peak. duet-bench states a CPU device's streaming
// and N-body figures as fractions of these (issue 15's goals are set that way).
#pragma once

#include <cstddef>
#include <string>

namespace duet::bench {

struct MachineLimits {
    double streamGBs = 0;   ///< triad with ordinary stores, as a compiled STREAM measures it
    double streamNtGBs = 0; ///< the same with non-temporal stores (no read for ownership)
    double peakGflops = 0;  ///< FP32 FMA throughput of every thread at once
    unsigned threads = 0;
    std::string isa; ///< the vector instructions the peak loop used ("AVX-512F", "AVX2+FMA", ...)
    /// The 1-minute load average before the measurement (-1: unknown). Other processes' threads
    /// take cores from both the machine's figures and the platforms': on a loaded host the
    /// fractions compare two different shares of it.
    double loadAverage = -1;

    /// The higher of the two triads: the bandwidth a streaming kernel can be held to.
    double bandwidthGBs() const { return streamGBs > streamNtGBs ? streamGBs : streamNtGBs; }
};

/// Measures both on `threads` host threads (one per hardware thread when 0): the triad over
/// `elements` floats per array (three arrays counted, STREAM's convention), best of `repeats`;
/// the peak as the best of three 0.1 s runs of independent FMA chains in the widest vector
/// registers the host has, every thread at once.
MachineLimits measureMachine(size_t elements, int repeats, unsigned threads = 0);

} // namespace duet::bench
