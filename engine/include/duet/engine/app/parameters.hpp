// A sample's tunable parameters: shown as ImGui widgets and settable with --set NAME=VALUE.
#pragma once

#include <string>
#include <variant>
#include <vector>

namespace duet::engine {

/// Parameters point into the sample's own variables, which must outlive the registration
/// (the sample's lifetime). Main thread only.
class Parameters {
public:
    struct Float {
        float* value;
        float min, max;
    };
    struct Int {
        int* value;
        int min, max;
    };
    struct Bool {
        bool* value;
    };
    struct Choice {
        int* value;
        std::vector<std::string> names;
    };
    struct Entry {
        std::string name;
        std::variant<Float, Int, Bool, Choice> kind;
    };

    void addFloat(std::string name, float* value, float min, float max);
    void addInt(std::string name, int* value, int min, int max);
    void addBool(std::string name, bool* value);
    /// An index into `names`, shown as a combo box and set by name or index.
    void addChoice(std::string name, int* value, std::vector<std::string> names);

    /// Applies "NAME=VALUE". Returns false with the reason (unknown name, not a number, out of
    /// range, unknown choice) in `error`, leaving the value unchanged.
    bool set(const std::string& assignment, std::string& error);

    const std::vector<Entry>& entries() const { return m_entries; }

private:
    std::vector<Entry> m_entries;
};

} // namespace duet::engine
