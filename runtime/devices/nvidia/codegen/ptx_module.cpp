// The Duet header of NVIDIA PTX modules: writing and reading the "// duet-..." comment lines.
#include "devices/nvidia/codegen/ptx_module.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace duet::nvidia {
namespace {

/// The header's first line; the number is the kernel ABI's version (2: __local variables in
/// dynamic shared memory; 3: guarded builds take the guard record, GuardRecord).
constexpr const char* kMagicPrefix = "// duet-nvidia-ptx ";
constexpr const char* kMagic = "// duet-nvidia-ptx 3";

std::string hex(std::string_view s) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(s.size() * 2);
    for (unsigned char c : s) {
        out.push_back(digits[c >> 4]);
        out.push_back(digits[c & 15]);
    }
    return out;
}

bool unhex(std::string_view s, std::string& out) {
    if (s.size() % 2)
        return false;
    out.clear();
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9')
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        return -1;
    };
    for (size_t i = 0; i < s.size(); i += 2) {
        int hi = nibble(s[i]), lo = nibble(s[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out.push_back(char(hi * 16 + lo));
    }
    return true;
}

template <class T> bool number(std::string_view s, T& out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

/// "a,b,c" of numbers (or "-" for none).
template <class T> bool numberList(std::string_view s, std::vector<T>& out) {
    out.clear();
    if (s == "-")
        return true;
    while (true) {
        size_t comma = s.find(',');
        T v{};
        if (!number(s.substr(0, comma), v))
            return false;
        out.push_back(v);
        if (comma == std::string_view::npos)
            return true;
        s.remove_prefix(comma + 1);
    }
}

template <class T> std::string listText(const std::vector<T>& v) {
    if (v.empty())
        return "-";
    std::string out;
    for (size_t i = 0; i < v.size(); ++i)
        out += (i ? "," : "") + std::to_string(v[i]);
    return out;
}

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            ++i;
        size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r')
            ++j;
        if (j > i)
            out.push_back(line.substr(i, j - i));
        i = j;
    }
    return out;
}

/// A texture requirement as "image.class.aN" (sampler argument N) or "image.class.bN" (CLK_*
/// bits N).
std::string requirementText(const TextureRequirement& r) {
    return std::to_string(r.image) + "." + std::to_string(r.textureClass) + "." +
           (r.samplerArg >= 0 ? "a" + std::to_string(r.samplerArg)
                              : "b" + std::to_string(r.samplerBits));
}

bool readRequirement(std::string_view s, TextureRequirement& r) {
    const size_t a = s.find('.');
    const size_t b = a == std::string_view::npos ? a : s.find('.', a + 1);
    if (b == std::string_view::npos || b + 2 > s.size())
        return false;
    if (!number(s.substr(0, a), r.image) || !number(s.substr(a + 1, b - a - 1), r.textureClass) ||
        r.textureClass < 1 || r.textureClass > 3)
        return false;
    const std::string_view sampler = s.substr(b + 2);
    if (s[b + 1] == 'a') {
        uint32_t arg = 0;
        if (!number(sampler, arg) || arg > 0x7fffffffu)
            return false;
        r.samplerArg = int32_t(arg);
        r.samplerBits = 0;
        return true;
    }
    r.samplerArg = -1;
    return s[b + 1] == 'b' && number(sampler, r.samplerBits);
}

} // namespace

std::string ptxHeader(const PtxModule& m) {
    std::ostringstream os;
    os << kMagic << "\n";
    os << "// duet-target " << m.target << " ptx " << m.ptxVersion << " globals " << m.globalBytes
       << "\n";
    if (m.timeoutMicroseconds)
        os << "// duet-timeout " << m.timeoutMicroseconds << "\n";
    if (m.boundsChecks)
        os << "// duet-checks\n";
    for (const KernelEntry& k : m.kernels)
        os << "// duet-kernel " << k.name << " params " << k.params << " local-args "
           << listText(k.localArgs) << " local-vars " << k.localVariableBytes << " reqd "
           << k.reqdWorkGroupSize[0] << "," << k.reqdWorkGroupSize[1] << ","
           << k.reqdWorkGroupSize[2] << " printf " << (k.usesPrintf ? 1 : 0) << "\n";
    for (const KernelEntry& k : m.kernels) {
        if (k.texturedName.empty())
            continue;
        os << "// duet-textured " << k.name << " " << k.texturedName << " ";
        for (size_t i = 0; i < k.textureRequirements.size(); ++i)
            os << (i ? "," : "") << requirementText(k.textureRequirements[i]);
        os << "\n";
    }
    for (const KernelEntry& k : m.kernels) {
        if (k.checkNames.empty())
            continue;
        os << "// duet-check-names " << k.name << " ";
        for (size_t i = 0; i < k.checkNames.size(); ++i)
            os << (i ? "," : "") << (k.checkNames[i].empty() ? "-" : hex(k.checkNames[i]));
        os << "\n";
    }
    for (const PrintfFormat& f : m.printf)
        os << "// duet-printf " << f.id << " " << listText(f.argSizes) << " "
           << (f.format.empty() ? "-" : hex(f.format)) << "\n";
    return os.str();
}

ReadPtxResult readPtxModule(std::string_view ptx) {
    ReadPtxResult r;
    auto fail = [&](std::string why) {
        ReadPtxResult f;
        f.error = std::move(why);
        return f;
    };
    const std::string_view first = ptx.substr(0, ptx.find('\n'));
    if (first != kMagic) {
        ReadPtxResult f =
            fail("the PTX text does not start with Duet's header (" + std::string(kMagic) + ")");
        f.otherVersion = first.substr(0, std::string_view(kMagicPrefix).size()) == kMagicPrefix;
        return f;
    }
    bool haveTarget = false, haveVersion = false;
    size_t pos = 0;
    while (pos < ptx.size()) {
        size_t nl = ptx.find('\n', pos);
        std::string_view line =
            ptx.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? ptx.size() : nl + 1;
        std::vector<std::string_view> w = words(line);
        if (w.empty())
            continue;
        if (w[0] == ".version") {
            // .version major.minor
            unsigned major = 0, minor = 0;
            size_t dot = w.size() > 1 ? w[1].find('.') : std::string_view::npos;
            if (dot == std::string_view::npos || !number(w[1].substr(0, dot), major) ||
                !number(w[1].substr(dot + 1), minor) || minor > 9)
                return fail("malformed .version directive");
            r.module.ptxVersion = major * 10 + minor;
            haveVersion = true;
            continue;
        }
        if (w[0] == ".target") {
            if (w.size() < 2)
                return fail("malformed .target directive");
            std::string_view t = w[1];
            if (!t.empty() && t.back() == ',')
                t.remove_suffix(1);
            if (haveTarget && r.module.target != t)
                return fail("the .target directive (" + std::string(t) +
                            ") disagrees with Duet's header (" + r.module.target + ")");
            r.module.target = std::string(t);
            haveTarget = true;
            continue;
        }
        if (w[0] != "//" || w.size() < 2 || w[1].substr(0, 5) != "duet-")
            continue;
        if (w[1] == "duet-target") {
            unsigned ptxv = 0;
            if (w.size() != 7 || w[3] != "ptx" || !number(w[4], ptxv) || w[5] != "globals" ||
                !number(w[6], r.module.globalBytes))
                return fail("malformed duet-target line");
            r.module.target = std::string(w[2]);
            haveTarget = true;
        } else if (w[1] == "duet-timeout") {
            if (w.size() != 3 || !number(w[2], r.module.timeoutMicroseconds) ||
                !r.module.timeoutMicroseconds)
                return fail("malformed duet-timeout line");
        } else if (w[1] == "duet-checks") {
            if (w.size() != 2)
                return fail("malformed duet-checks line");
            r.module.boundsChecks = true;
        } else if (w[1] == "duet-check-names") {
            // After the kernel's own line: the names its checks report ("-": none).
            auto k =
                std::find_if(r.module.kernels.begin(), r.module.kernels.end(),
                             [&](const KernelEntry& e) { return w.size() > 2 && e.name == w[2]; });
            if (w.size() != 4 || k == r.module.kernels.end() || !k->checkNames.empty())
                return fail("malformed duet-check-names line: " + std::string(line));
            for (std::string_view list = w[3]; !list.empty();) {
                const size_t comma = list.find(',');
                std::string name;
                const std::string_view word = list.substr(0, comma);
                if (word != "-" && (!unhex(word, name) || name.empty()))
                    return fail("malformed duet-check-names line: " + std::string(line));
                k->checkNames.push_back(std::move(name));
                list =
                    comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
            }
        } else if (w[1] == "duet-kernel") {
            KernelEntry k;
            std::vector<uint32_t> reqd;
            unsigned printf = 0;
            if (w.size() != 13 || w[3] != "params" || !number(w[4], k.params) ||
                w[5] != "local-args" || !numberList(w[6], k.localArgs) || w[7] != "local-vars" ||
                !number(w[8], k.localVariableBytes) || w[9] != "reqd" || !numberList(w[10], reqd) ||
                reqd.size() != 3 || w[11] != "printf" || !number(w[12], printf) || printf > 1)
                return fail("malformed duet-kernel line: " + std::string(line));
            k.name = std::string(w[2]);
            for (uint32_t a : k.localArgs)
                if (a + 1 >= k.params)
                    return fail("kernel " + k.name + ": __local argument " + std::to_string(a) +
                                " is not one of its " + std::to_string(k.params) +
                                " parameters before the launch block");
            k.reqdWorkGroupSize = {reqd[0], reqd[1], reqd[2]};
            k.usesPrintf = printf == 1;
            r.module.kernels.push_back(std::move(k));
        } else if (w[1] == "duet-textured") {
            // After the kernel's own line: its texture-only variant and what that needs.
            auto k =
                std::find_if(r.module.kernels.begin(), r.module.kernels.end(),
                             [&](const KernelEntry& e) { return w.size() > 2 && e.name == w[2]; });
            if (w.size() != 5 || k == r.module.kernels.end() || !k->texturedName.empty() ||
                w[3] == w[2])
                return fail("malformed duet-textured line: " + std::string(line));
            std::string_view list = w[4];
            std::vector<TextureRequirement> reqs;
            while (!list.empty()) {
                const size_t comma = list.find(',');
                TextureRequirement t;
                if (!readRequirement(list.substr(0, comma), t) || t.image + 1 >= k->params ||
                    (t.samplerArg >= 0 && uint32_t(t.samplerArg) + 1 >= k->params))
                    return fail("malformed duet-textured line: " + std::string(line));
                reqs.push_back(t);
                list =
                    comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
            }
            if (reqs.empty())
                return fail("malformed duet-textured line: " + std::string(line));
            k->texturedName = std::string(w[3]);
            k->textureRequirements = std::move(reqs);
        } else if (w[1] == "duet-printf") {
            PrintfFormat f;
            if (w.size() != 5 || !number(w[2], f.id) || f.id == 0 ||
                !numberList(w[3], f.argSizes) || !unhex(w[4] == "-" ? "" : w[4], f.format))
                return fail("malformed duet-printf line");
            r.module.printf.push_back(std::move(f));
        }
    }
    if (!haveVersion)
        return fail("the PTX text has no .version directive");
    if (!haveTarget)
        return fail("the PTX text has no .target directive");
    return r;
}

} // namespace duet::nvidia
