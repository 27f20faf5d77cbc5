// Per-phase frame timings: compute, acquire/release, render, frame, and any a sample adds.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace duet::engine {

/// Phase names the engine and samples share. The engine times update, render, ui and frame;
/// samples report compute (e.g. CL kernel times from profiling events) and acquire/release.
namespace phase {
inline constexpr std::string_view Compute = "compute";
inline constexpr std::string_view AcquireRelease = "acquire/release";
inline constexpr std::string_view Update = "update";
inline constexpr std::string_view Render = "render";
inline constexpr std::string_view Ui = "ui";
inline constexpr std::string_view Frame = "frame";
} // namespace phase

/// Collects durations per named phase. Main thread only.
class Stats {
public:
    /// Starts with the four standard phases (compute, acquire/release, render, frame), empty.
    Stats();

    /// Records one duration of `seconds` for `phase` (created on first use).
    void add(std::string_view phase, double seconds);

    /// Times a scope on the CPU clock and records it on destruction.
    class Scope {
    public:
        Scope(Stats& stats, std::string_view phase)
            : m_stats(stats), m_phase(phase), m_start(std::chrono::steady_clock::now()) {}
        ~Scope() {
            m_stats.add(
                m_phase,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count());
        }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        Stats& m_stats;
        std::string m_phase; // a copy: callers may pass a temporary name
        std::chrono::steady_clock::time_point m_start;
    };
    /// A Scope recording into this for `phase`.
    Scope scope(std::string_view phase) { return Scope(*this, phase); }

    /// One phase's figures over the run.
    struct Summary {
        std::string name;
        size_t count = 0;
        double last = 0, mean = 0, min = 0, median = 0, max = 0, total = 0; ///< seconds
    };
    /// One entry per phase: the four standard ones first (even if empty), then in first-use order.
    std::vector<Summary> summarize() const;
    /// The table --stats prints, in milliseconds.
    std::string table() const;

private:
    struct Series {
        std::string name;
        std::vector<double> samples;
    };
    std::vector<Series> m_series;
};

} // namespace duet::engine
