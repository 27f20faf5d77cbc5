// Decodes the printf records GPU kernels write (layout in printf_buffer.hpp) and formats them
// with core's formatter, so that every device prints alike.
#include "core/printf_buffer.hpp"

#include "core/printf_format.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <deque>

namespace duet::rt {

uint32_t PrintfFormat::recordBytes() const {
    uint32_t bytes = 4;
    for (uint32_t size : argSizes)
        bytes += size;
    return bytes;
}

std::vector<PrintfConversion> printfConversions(std::string_view f) {
    std::vector<PrintfConversion> out;
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

void initPrintfBuffer(unsigned char* buffer, uint64_t capacity) {
    const uint64_t zero = 0;
    std::memcpy(buffer, &zero, 8);
    std::memcpy(buffer + 8, &capacity, 8);
}

PrintfOutput decodePrintfRecords(std::span<const unsigned char> records, uint64_t offset,
                                 std::span<const PrintfFormat> formats) {
    PrintfOutput out;
    const unsigned char* data = records.data();
    const uint64_t used = std::min<uint64_t>(offset, records.size());
    std::vector<char> args;
    std::vector<uint32_t> layout;
    std::deque<std::string> strings; // stable addresses for the %s pointers in `args`
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
                        ", which the program's printf formats do not list";
            break;
        }
        if (p + f->recordBytes() > used)
            break;
        const std::vector<PrintfConversion> convs = printfConversions(f->format);
        if (convs.size() != f->argSizes.size()) {
            out.error = "printf format \"" + f->format + "\" has " + std::to_string(convs.size()) +
                        " conversions but the record has " + std::to_string(f->argSizes.size()) +
                        " arguments";
            break;
        }
        args.clear();
        layout.clear();
        strings.clear();
        uint64_t at = p + 4;
        bool torn = false;
        for (size_t i = 0; i < convs.size() && !torn; ++i) {
            const uint32_t size = f->argSizes[i];
            if (at + size > used) {
                torn = true;
                break;
            }
            const unsigned char* arg = data + at;
            at += size;
            layout.push_back(uint32_t(args.size()));
            if (convs[i].letter == 's' && convs[i].vector == 1 && size == 4) {
                uint32_t length;
                std::memcpy(&length, arg, 4);
                const char* s = nullptr;
                if (length != kPrintfNullString) {
                    if (length > kPrintfMaxString || at + length > used) {
                        torn = true;
                        break;
                    }
                    strings.emplace_back(reinterpret_cast<const char*>(data + at), length);
                    s = strings.back().c_str();
                    at += (uint64_t(length) + 3) & ~uint64_t(3);
                }
                args.insert(args.end(), reinterpret_cast<const char*>(&s),
                            reinterpret_cast<const char*>(&s) + sizeof s);
                layout.push_back(sizeof s);
                continue;
            }
            args.insert(args.end(), arg, arg + size); // a 3-vector as 4, as the formatter expects
            layout.push_back(size);
        }
        if (torn) {
            out.error = "a printf record of format \"" + f->format +
                        "\" runs past the data the kernel wrote";
            break;
        }
        at = (at + 3) & ~uint64_t(3);
        if (!formatOpenClPrintf(f->format.c_str(), args.data(), layout.data(),
                                uint32_t(convs.size()), out.text)) {
            out.error = "printf format \"" + f->format + "\" is malformed";
            break;
        }
        ++out.records;
        p = at;
    }
    if (offset > records.size())
        out.lostBytes = offset - p;
    return out;
}

PrintfOutput drainPrintfBuffer(unsigned char* buffer, std::span<const PrintfFormat> formats) {
    uint64_t offset, capacity;
    std::memcpy(&offset, buffer, 8);
    std::memcpy(&capacity, buffer + 8, 8);
    const uint64_t used = std::min(offset, capacity);
    unsigned char* data = buffer + kPrintfHeaderBytes;
    PrintfOutput out = decodePrintfRecords({data, size_t(used)}, offset, formats);
    std::memset(data, 0, size_t(used));
    initPrintfBuffer(buffer, capacity);
    return out;
}

void writePrintfOutput(const PrintfOutput& out) {
    if (out.text.empty())
        return;
    // One write per launch, so that another thread's output does not cut into a line.
    std::fwrite(out.text.data(), 1, out.text.size(), stdout);
    std::fflush(stdout);
}

std::vector<std::string> printfProblems(const PrintfOutput& out, uint64_t capacity) {
    std::vector<std::string> problems;
    if (out.lostBytes)
        problems.push_back(
            "printf output overflowed the " + std::to_string(capacity) +
            "-byte printf buffer (CL_DEVICE_PRINTF_BUFFER_SIZE): " + std::to_string(out.lostBytes) +
            " bytes of records were dropped after " + std::to_string(out.records) + " records");
    if (!out.error.empty())
        problems.push_back("printf buffer: " + out.error);
    return problems;
}

} // namespace duet::rt
