// Timing series and their summary table.
#include "duet/engine/app/stats.hpp"

#include <algorithm>
#include <cstdio>

namespace duet::engine {

Stats::Stats() {
    for (std::string_view p : {phase::Compute, phase::AcquireRelease, phase::Render, phase::Frame})
        m_series.push_back({std::string(p), {}});
}

void Stats::add(std::string_view phase, double seconds) {
    for (Series& s : m_series)
        if (s.name == phase) {
            s.samples.push_back(seconds);
            return;
        }
    m_series.push_back({std::string(phase), {seconds}});
}

std::vector<Stats::Summary> Stats::summarize() const {
    std::vector<Summary> out;
    for (const Series& s : m_series) {
        Summary sum{s.name};
        sum.count = s.samples.size();
        if (sum.count) {
            std::vector<double> sorted = s.samples;
            std::sort(sorted.begin(), sorted.end());
            for (double v : sorted)
                sum.total += v;
            sum.last = s.samples.back();
            sum.mean = sum.total / double(sum.count);
            sum.min = sorted.front();
            sum.max = sorted.back();
            sum.median = sorted.size() % 2
                             ? sorted[sorted.size() / 2]
                             : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
        }
        out.push_back(sum);
    }
    return out;
}

std::string Stats::table() const {
    std::string out;
    char line[160];
    std::snprintf(line, sizeof line, "%-18s %6s %10s %10s %10s %10s %11s\n", "phase", "count",
                  "mean ms", "min ms", "median ms", "max ms", "total ms");
    out += line;
    for (const Summary& s : summarize()) {
        if (s.count == 0)
            std::snprintf(line, sizeof line, "%-18s %6zu %10s %10s %10s %10s %11s\n",
                          s.name.c_str(), s.count, "-", "-", "-", "-", "-");
        else
            std::snprintf(line, sizeof line, "%-18s %6zu %10.3f %10.3f %10.3f %10.3f %11.3f\n",
                          s.name.c_str(), s.count, s.mean * 1e3, s.min * 1e3, s.median * 1e3,
                          s.max * 1e3, s.total * 1e3);
        out += line;
    }
    return out;
}

} // namespace duet::engine
