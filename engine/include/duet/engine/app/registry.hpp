// The sample registry and the entry point every sample executable shares.
#pragma once

#include "duet/engine/app/sample.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace duet::engine {

/// A registered sample: what --list prints and how to make one.
struct SampleInfo {
    std::string name;                                ///< what --sample selects, e.g. "duet-nbody"
    std::string description;                         ///< one line for --list
    std::function<std::unique_ptr<Sample>()> create; ///< a new instance per run
};

/// Samples register themselves at static-initialisation time (DUET_REGISTER_SAMPLE). Not
/// thread-safe: registration happens before main(), lookups from the main thread.
class SampleRegistry {
public:
    /// The process-wide registry.
    static SampleRegistry& instance();
    /// Adds a sample; returns true (a value for DUET_REGISTER_SAMPLE's static to hold).
    bool add(SampleInfo info);
    /// Every registered sample, in registration order.
    const std::vector<SampleInfo>& samples() const { return m_samples; }
    /// The sample registered as `name`, or nullptr.
    const SampleInfo* find(const std::string& name) const;

private:
    std::vector<SampleInfo> m_samples;
};

/// Parses the command line, picks the sample (--sample NAME, or the only one registered) and
/// runs it. Returns the process exit code: 0 success, 1 runtime failure (no GL, sample error,
/// PNG not written), kUsageError (2) for a bad command line.
int runMain(int argc, const char* const* argv);

/// Runs one sample with parsed options; returns the exit code as runMain does.
int runSample(Sample& sample, const std::string& name, const Options& options);

} // namespace duet::engine

/// Registers `Type` (default-constructible Sample) under `name`. Put it in the sample's .cpp.
#define DUET_REGISTER_SAMPLE(Type, name, description)                                              \
    static const bool duetRegistered##Type = ::duet::engine::SampleRegistry::instance().add(       \
        {name, description, [] { return std::unique_ptr<::duet::engine::Sample>(new Type()); }})
