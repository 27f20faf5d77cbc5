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
    /// A slider over [min, max].
    struct Float {
        float* value;
        float min, max;
    };
    /// An integer slider over [min, max].
    struct Int {
        int* value;
        int min, max;
    };
    /// A checkbox; --set takes 0/1, true/false, on/off.
    struct Bool {
        bool* value;
    };
    /// A combo box over `names`; *value is the index.
    struct Choice {
        int* value;
        std::vector<std::string> names;
    };
    /// One registered parameter: its name (the overlay label and --set's NAME) and kind.
    struct Entry {
        std::string name;
        std::variant<Float, Int, Bool, Choice> kind;
    };

    /// Registers a float slider over [min, max] bound to *value.
    void addFloat(std::string name, float* value, float min, float max);
    /// Registers an integer slider over [min, max] bound to *value.
    void addInt(std::string name, int* value, int min, int max);
    /// Registers a checkbox bound to *value.
    void addBool(std::string name, bool* value);
    /// An index into `names`, shown as a combo box and set by name or index.
    void addChoice(std::string name, int* value, std::vector<std::string> names);

    /// Applies "NAME=VALUE". Returns false with the reason (unknown name, not a number, out of
    /// range, unknown choice) in `error`, leaving the value unchanged.
    bool set(const std::string& assignment, std::string& error);

    /// Every parameter in registration order (the overlay draws them in this order).
    const std::vector<Entry>& entries() const { return m_entries; }

private:
    std::vector<Entry> m_entries;
};

} // namespace duet::engine
