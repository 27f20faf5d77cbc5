// Sample registry and selection of the sample to run.
#include "duet/engine/app/registry.hpp"

#include <cstdio>

namespace duet::engine {

SampleRegistry& SampleRegistry::instance() {
    static SampleRegistry registry;
    return registry;
}

bool SampleRegistry::add(SampleInfo info) {
    m_samples.push_back(std::move(info));
    return true;
}

const SampleInfo* SampleRegistry::find(const std::string& name) const {
    for (const SampleInfo& s : m_samples)
        if (s.name == name)
            return &s;
    return nullptr;
}

int runMain(int argc, const char* const* argv) {
    Options options;
    ParseResult parsed = parseCommandLine(argc, argv, options);
    if (parsed.exit) {
        std::fprintf(parsed.exitCode ? stderr : stdout, "%s\n", parsed.message.c_str());
        return parsed.exitCode;
    }
    const auto& samples = SampleRegistry::instance().samples();
    if (options.list) {
        for (const SampleInfo& s : samples)
            std::printf("%-20s %s\n", s.name.c_str(), s.description.c_str());
        return 0;
    }
    const SampleInfo* info = nullptr;
    if (!options.sample.empty()) {
        info = SampleRegistry::instance().find(options.sample);
        if (!info) {
            std::fprintf(stderr, "duet: no sample named '%s' (--list shows them)\n",
                         options.sample.c_str());
            return kUsageError;
        }
    } else if (samples.size() == 1) {
        info = &samples.front();
    } else {
        std::fprintf(stderr, "duet: %s; choose one with --sample NAME (--list shows them)\n",
                     samples.empty() ? "no sample is registered" : "several samples registered");
        return kUsageError;
    }
    std::unique_ptr<Sample> sample = info->create();
    return runSample(*sample, info->name, options);
}

} // namespace duet::engine
