// Decodes the records AMDGPU's printf lowering writes (see printf_buffer.hpp) and formats them
// with the CPU device's formatter, so both devices print alike.
#include "devices/gcn/printf_buffer.hpp"

#include "devices/cpu/jit/printf.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <vector>

namespace duet::gcn {
namespace {

/// The conversions of a format, in argument order: the letter and the vector length (1 for
/// scalars). The lowering packs a %s argument's characters into the record; the formatter
/// wants a pointer, so the decoder needs to know which arguments are strings.
struct Conversion {
    char letter;
    unsigned vector;
};

std::vector<Conversion> conversions(const std::string& f) {
    std::vector<Conversion> out;
    for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] != '%')
            continue;
        if (i + 1 < f.size() && f[i + 1] == '%') {
            ++i;
            continue;
        }
        unsigned vector = 1;
        size_t j = i + 1;
        while (j < f.size() && !std::isalpha(static_cast<unsigned char>(f[j])))
            ++j; // flags, width, precision
        if (j < f.size() && f[j] == 'v') {
            vector = 0;
            for (++j; j < f.size() && std::isdigit(static_cast<unsigned char>(f[j])); ++j)
                vector = vector * 10 + unsigned(f[j] - '0');
        }
        while (j < f.size() && (f[j] == 'h' || f[j] == 'l'))
            ++j; // length modifiers
        out.push_back({j < f.size() ? f[j] : '\0', vector});
        i = j;
    }
    return out;
}

} // namespace

void initPrintfBuffer(unsigned char* buffer, uint64_t capacity) {
    const uint64_t zero = 0;
    std::memcpy(buffer, &zero, 8);
    std::memcpy(buffer + 8, &capacity, 8);
}

PrintfOutput drainPrintfBuffer(unsigned char* buffer, std::span<const PrintfFormat> formats) {
    PrintfOutput out;
    uint64_t offset, capacity;
    std::memcpy(&offset, buffer, 8);
    std::memcpy(&capacity, buffer + 8, 8);
    const uint64_t used = std::min(offset, capacity);
    unsigned char* data = buffer + kPrintfHeaderBytes;

    std::vector<char> args;
    std::vector<uint32_t> layout;
    std::deque<std::string> strings;
    uint64_t p = 0;
    while (p + 4 <= used) {
        uint32_t id;
        std::memcpy(&id, data + p, 4);
        if (id == 0)
            break; // a record that did not fit: nothing was written from here on
        auto f = std::find_if(formats.begin(), formats.end(),
                              [&](const PrintfFormat& x) { return x.id == id; });
        if (f == formats.end()) {
            out.error = "a printf record has id " + std::to_string(id) +
                        ", which the code object's amdhsa.printf does not list";
            break;
        }
        if (p + f->recordBytes > used)
            break;
        const std::vector<Conversion> convs = conversions(f->format);
        if (convs.size() != f->argSizes.size()) {
            out.error = "printf format \"" + f->format + "\" has " +
                        std::to_string(convs.size()) + " conversions but the record has " +
                        std::to_string(f->argSizes.size()) + " arguments";
            break;
        }
        args.clear();
        layout.clear();
        strings.clear();
        uint64_t at = p + 4;
        for (size_t i = 0; i < convs.size(); ++i) {
            const unsigned char* arg = data + at;
            const uint32_t size = f->argSizes[i];
            at += size;
            layout.push_back(uint32_t(args.size()));
            if (convs[i].letter == 's' && convs[i].vector == 1) {
                const auto* chars = reinterpret_cast<const char*>(arg);
                strings.emplace_back(chars, strnlen(chars, size));
                const char* s = strings.back().c_str();
                args.insert(args.end(), reinterpret_cast<const char*>(&s),
                            reinterpret_cast<const char*>(&s) + sizeof s);
                layout.push_back(sizeof s);
                continue;
            }
            args.insert(args.end(), arg, arg + size); // a 3-vector as 4, as the formatter expects
            layout.push_back(size);
        }
        if (!duet::rt::formatOpenClPrintf(f->format.c_str(), args.data(), layout.data(),
                                          uint32_t(convs.size()), out.text)) {
            out.error = "printf format \"" + f->format + "\" is malformed";
            break;
        }
        ++out.records;
        p += f->recordBytes;
    }
    if (offset > capacity)
        out.lostBytes = offset - p;
    std::memset(data, 0, size_t(used));
    initPrintfBuffer(buffer, capacity);
    return out;
}

} // namespace duet::gcn
