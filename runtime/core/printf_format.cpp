// OpenCL C printf on the host: formats a kernel's printf arguments with OpenCL's rules.
#include "core/printf_format.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace duet::rt {
namespace {

float halfToFloat(uint16_t h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { // subnormal half: a normal float
            float f = std::ldexp(float(mant), -24);
            std::memcpy(&bits, &f, 4);
            bits |= sign;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

template <typename T> T readAs(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

bool isFlag(char c) {
    return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0';
}

void appendFormatted(std::string& out, const std::string& spec, auto value) {
    char buf[512];
    int n = std::snprintf(buf, sizeof buf, spec.c_str(), value);
    if (n < 0)
        return;
    if (size_t(n) < sizeof buf) {
        out.append(buf, size_t(n));
        return;
    }
    std::string big(size_t(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), spec.c_str(), value);
    out.append(big.data(), size_t(n));
}

} // namespace

bool formatOpenClPrintf(const char* format, const char* args, const uint32_t* layout,
                        uint32_t count, std::string& out) {
    uint32_t next = 0;
    for (const char* p = format; *p;) {
        if (*p != '%') {
            out.push_back(*p++);
            continue;
        }
        if (p[1] == '%') {
            out.push_back('%');
            p += 2;
            continue;
        }
        // %[flags][width][.precision][vn][length]conversion
        const char* q = p + 1;
        std::string flagsWidthPrec = "%";
        while (isFlag(*q))
            flagsWidthPrec.push_back(*q++);
        while (*q >= '0' && *q <= '9')
            flagsWidthPrec.push_back(*q++);
        if (*q == '.') {
            flagsWidthPrec.push_back(*q++);
            while (*q >= '0' && *q <= '9')
                flagsWidthPrec.push_back(*q++);
        }
        unsigned vecLen = 0;
        if (*q == 'v') {
            ++q;
            if (q[0] == '1' && q[1] == '6') {
                vecLen = 16;
                q += 2;
            } else if (*q == '2' || *q == '3' || *q == '4' || *q == '8') {
                vecLen = unsigned(*q++ - '0');
            } else {
                return false;
            }
        }
        // Length modifier: hh, h, hl, l (ll is not OpenCL, accepted as l).
        unsigned lengthBytes = 0; // 0: none
        if (q[0] == 'h' && q[1] == 'h') {
            lengthBytes = 1;
            q += 2;
        } else if (q[0] == 'h' && q[1] == 'l') {
            // hl (32-bit elements) is only defined with a vector specifier; on a scalar it is
            // taken as no modifier rather than failing the whole call.
            lengthBytes = vecLen ? 4 : 0;
            q += 2;
        } else if (q[0] == 'h') {
            lengthBytes = 2;
            q += 1;
        } else if (q[0] == 'l') {
            lengthBytes = 8;
            q += (q[1] == 'l') ? 2 : 1;
        }
        const char conv = *q;
        if (!conv || !std::strchr("diouxXfFeEgGaAcsp", conv))
            return false;
        p = q + 1;
        if (next >= count)
            return false;
        const char* arg = args + layout[2 * next];
        const uint32_t size = layout[2 * next + 1];
        ++next;

        if (conv == 's' || conv == 'p' || conv == 'c') {
            if (vecLen)
                return false;
            if (conv == 's') {
                const char* s = size == 8 ? readAs<const char*>(arg) : nullptr;
                appendFormatted(out, flagsWidthPrec + "s", s ? s : "(null)");
            } else if (conv == 'p') {
                appendFormatted(out, flagsWidthPrec + "p",
                                size == 8 ? readAs<void*>(arg) : nullptr);
            } else {
                int c = size >= 4 ? readAs<int>(arg) : size == 1 ? readAs<char>(arg) : 0;
                appendFormatted(out, flagsWidthPrec + "c", c);
            }
            continue;
        }

        const unsigned n = vecLen ? vecLen : 1;
        // 3-component vectors occupy the storage of 4.
        const unsigned slots = n == 3 ? 4 : n;
        if (size == 0 || size % slots != 0)
            return false;
        const unsigned elem = size / slots;
        const bool isFloat = std::strchr("fFeEgGaA", conv) != nullptr;
        for (unsigned i = 0; i < n; ++i) {
            if (i)
                out.push_back(',');
            const char* e = arg + i * elem;
            if (isFloat) {
                double v;
                if (elem == 2)
                    v = halfToFloat(readAs<uint16_t>(e));
                else if (elem == 4)
                    v = readAs<float>(e);
                else if (elem == 8)
                    v = readAs<double>(e);
                else
                    return false;
                appendFormatted(out, flagsWidthPrec + conv, v);
                continue;
            }
            const bool isSigned = conv == 'd' || conv == 'i';
            uint64_t raw = 0;
            if (elem == 1 || elem == 2 || elem == 4 || elem == 8)
                std::memcpy(&raw, e, elem); // little-endian host
            else
                return false;
            // The argument's own width, then the length modifier's (%hhd of an int prints a
            // char).
            unsigned bits = elem * 8;
            if (lengthBytes && lengthBytes < elem)
                bits = lengthBytes * 8;
            long long value;
            if (bits < 64) {
                uint64_t mask = (uint64_t(1) << bits) - 1;
                raw &= mask;
                if (isSigned && (raw >> (bits - 1)) & 1)
                    raw |= ~mask;
            }
            value = static_cast<long long>(raw);
            if (isSigned)
                appendFormatted(out, flagsWidthPrec + "ll" + conv, value);
            else
                appendFormatted(out, flagsWidthPrec + "ll" + conv,
                                static_cast<unsigned long long>(raw));
        }
    }
    return true;
}

} // namespace duet::rt
