// Parameter registration and --set parsing.
#include "duet/engine/app/parameters.hpp"

#include <charconv>
#include <cstdlib>

namespace duet::engine {

void Parameters::addFloat(std::string name, float* value, float min, float max) {
    m_entries.push_back({std::move(name), Float{value, min, max}});
}
void Parameters::addInt(std::string name, int* value, int min, int max) {
    m_entries.push_back({std::move(name), Int{value, min, max}});
}
void Parameters::addBool(std::string name, bool* value) {
    m_entries.push_back({std::move(name), Bool{value}});
}
void Parameters::addChoice(std::string name, int* value, std::vector<std::string> names) {
    m_entries.push_back({std::move(name), Choice{value, std::move(names)}});
}

bool Parameters::set(const std::string& assignment, std::string& error) {
    size_t eq = assignment.find('=');
    std::string name = assignment.substr(0, eq);
    std::string text = eq == std::string::npos ? "" : assignment.substr(eq + 1);
    for (Entry& e : m_entries) {
        if (e.name != name)
            continue;
        auto bad = [&](const std::string& why) {
            error = "--set " + name + ": " + why + ", got '" + text + "'";
            return false;
        };
        if (auto* f = std::get_if<Float>(&e.kind)) {
            char* end = nullptr;
            float v = std::strtof(text.c_str(), &end);
            if (text.empty() || *end)
                return bad("expected a number");
            if (v < f->min || v > f->max)
                return bad("must be in [" + std::to_string(f->min) + ", " + std::to_string(f->max) +
                           "]");
            *f->value = v;
        } else if (auto* i = std::get_if<Int>(&e.kind)) {
            int v = 0;
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (text.empty() || ec != std::errc() || end != text.data() + text.size())
                return bad("expected an integer");
            if (v < i->min || v > i->max)
                return bad("must be in [" + std::to_string(i->min) + ", " + std::to_string(i->max) +
                           "]");
            *i->value = v;
        } else if (auto* b = std::get_if<Bool>(&e.kind)) {
            if (text == "1" || text == "true" || text == "on")
                *b->value = true;
            else if (text == "0" || text == "false" || text == "off")
                *b->value = false;
            else
                return bad("expected true/false/1/0/on/off");
        } else if (auto* c = std::get_if<Choice>(&e.kind)) {
            for (size_t k = 0; k < c->names.size(); ++k)
                if (c->names[k] == text || std::to_string(k) == text) {
                    *c->value = int(k);
                    return true;
                }
            std::string all;
            for (const std::string& n : c->names)
                all += (all.empty() ? "" : ", ") + n;
            return bad("expected one of " + all);
        }
        return true;
    }
    std::string known;
    for (const Entry& e : m_entries)
        known += (known.empty() ? "" : ", ") + e.name;
    error = "--set: no parameter named '" + name + "'" +
            (known.empty() ? " (this sample has none)" : " (known: " + known + ")");
    return false;
}

} // namespace duet::engine
