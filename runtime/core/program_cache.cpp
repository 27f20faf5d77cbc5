// The persistent program cache: entry files (checked container, atomic writes, size bound).
#include "core/program_cache.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace duet::rt::program_cache {
namespace {

namespace fs = std::filesystem;

// An entry file: magic, the key's length, the log's, the binary's (little-endian u64 each),
// the key, the log, the binary, then FNV-1a 64 of everything before it.
constexpr char kMagic[8] = {'D', 'U', 'E', 'T', 'P', 'C', '0', '1'};
constexpr const char* kSuffix = ".duetpc";       ///< Shelf::Programs
constexpr const char* kCodeSuffix = ".duetcode"; ///< Shelf::Code
constexpr size_t kHeaderSize = sizeof(kMagic) + 3 * 8;

struct Counters {
    std::atomic<uint64_t> hits{0}, misses{0}, stores{0}, rejected{0};
};
Counters g_counters[2]; ///< per Shelf

Counters& counters(const Settings& s) {
    return g_counters[s.shelf == Shelf::Code ? 1 : 0];
}

uint64_t fnv1a(const char* data, size_t size) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; ++i) {
        h ^= static_cast<unsigned char>(data[i]);
        h *= 1099511628211ull;
    }
    return h;
}

void putU64(std::string& out, uint64_t v) {
    for (int i = 0; i < 8; ++i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t getU64(const char* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    return v;
}

void say(const Settings& s, const std::string& message) {
    if (logEnabled())
        std::fprintf(stderr, "duet: %s cache: %s\n", s.shelf == Shelf::Code ? "code" : "program",
                     message.c_str());
}

std::string shortKey(const std::string& key) {
    return key.substr(0, 16);
}

fs::path entryPath(const Settings& s, const std::string& key) {
    return s.directory / (key + (s.shelf == Shelf::Code ? kCodeSuffix : kSuffix));
}

/// Keys are what the toolchain hashed: hex digits only, so a key never names another path.
bool validKey(const std::string& key) {
    return !key.empty() && key.size() <= 128 && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
}

/// Removes the oldest entries (by modification time, which a hit refreshes) while the folder
/// holds more than `maxBytes`; temporary files a crashed writer left an hour ago go too.
void evict(const Settings& s) {
    struct Item {
        fs::path path;
        fs::file_time_type time;
        uint64_t size;
    };
    std::vector<Item> items;
    uint64_t total = 0;
    std::error_code ec;
    const auto now = fs::file_time_type::clock::now();
    for (fs::directory_iterator it(s.directory, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e;
        const fs::path& p = it->path();
        const std::string name = p.filename().string();
        const auto time = fs::last_write_time(p, e);
        if (e)
            continue;
        if (name.rfind(".tmp.", 0) == 0) {
            if (now - time > std::chrono::hours(1))
                fs::remove(p, e);
            continue;
        }
        if (p.extension() != kSuffix && p.extension() != kCodeSuffix)
            continue;
        const uint64_t size = fs::file_size(p, e);
        if (e)
            continue;
        items.push_back({p, time, size});
        total += size;
    }
    if (total <= s.maxBytes)
        return;
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.time < b.time; });
    for (const Item& item : items) {
        if (total <= s.maxBytes)
            break;
        std::error_code e;
        if (fs::remove(item.path, e))
            say(s, "evicted " + item.path.filename().string());
        total -= item.size;
    }
}

} // namespace

bool logEnabled() {
    const char* v = std::getenv("DUET_LOG");
    return v && *v && std::strcmp(v, "0") != 0;
}

Settings settings(Shelf shelf) {
    Settings s;
    s.shelf = shelf;
    if (const char* v = std::getenv("DUET_CACHE"); v && std::strcmp(v, "0") == 0)
        return s;
    if (const char* v = std::getenv("DUET_CACHE_DIR"); v && *v)
        s.directory = v;
    else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/')
        s.directory = fs::path(x) / "duet";
    else if (const char* h = std::getenv("HOME"); h && *h == '/')
        s.directory = fs::path(h) / ".cache" / "duet";
    else
        return s;
    if (const char* v = std::getenv("DUET_CACHE_MAX_MB"); v && *v) {
        char* end = nullptr;
        const unsigned long long mb = std::strtoull(v, &end, 10);
        if (end && *end == '\0' && mb > 0 && mb < (1ull << 40))
            s.maxBytes = mb << 20;
        else
            say(s, std::string("DUET_CACHE_MAX_MB=") + v + " is not a positive number; using 256");
    }
    s.enabled = true;
    return s;
}

std::optional<Entry> load(const Settings& s, const std::string& key) {
    if (!s.enabled || !validKey(key))
        return std::nullopt;
    const fs::path path = entryPath(s, key);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        counters(s).misses.fetch_add(1);
        say(s, "miss " + shortKey(key));
        return std::nullopt;
    }
    auto bad = [&](const char* why) -> std::optional<Entry> {
        counters(s).rejected.fetch_add(1);
        counters(s).misses.fetch_add(1);
        say(s, "ignored " + path.filename().string() + ": " + why + "; building again");
        return std::nullopt;
    };
    // No entry is stored larger than the bound: a larger file is not read into memory.
    std::error_code ec;
    const uint64_t fileSize = fs::file_size(path, ec);
    if (ec || fileSize > s.maxBytes)
        return bad("larger than DUET_CACHE_MAX_MB");
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.size() < kHeaderSize + 8 || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0)
        return bad("not a Duet cache entry");
    const uint64_t keySize = getU64(data.data() + 8);
    const uint64_t logSize = getU64(data.data() + 16);
    const uint64_t binSize = getU64(data.data() + 24);
    const uint64_t body = data.size() - kHeaderSize - 8;
    if (keySize > body || logSize > body - keySize || binSize != body - keySize - logSize)
        return bad("sizes do not match the file");
    if (fnv1a(data.data(), data.size() - 8) != getU64(data.data() + data.size() - 8))
        return bad("checksum mismatch");
    const char* p = data.data() + kHeaderSize;
    if (std::string_view(p, keySize) != key)
        return bad("written for another key");
    Entry e;
    e.log.assign(p + keySize, logSize);
    e.binary.assign(p + keySize + logSize, binSize);
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec); // recently used
    counters(s).hits.fetch_add(1);
    say(s, "hit " + shortKey(key));
    return e;
}

void store(const Settings& s, const std::string& key, const std::string& binary,
           const std::string& log) {
    if (!s.enabled || !validKey(key) || binary.empty())
        return;
    std::string data(kMagic, sizeof(kMagic));
    putU64(data, key.size());
    putU64(data, log.size());
    putU64(data, binary.size());
    data += key;
    data += log;
    data += binary;
    putU64(data, fnv1a(data.data(), data.size()));
    if (data.size() > s.maxBytes) {
        say(s, "not stored " + shortKey(key) + ": larger than DUET_CACHE_MAX_MB");
        return;
    }

    std::error_code ec;
    fs::create_directories(s.directory, ec);
    static std::atomic<uint64_t> serial{0};
    const fs::path tmp = s.directory / (".tmp." + shortKey(key) + "." + std::to_string(getpid()) +
                                        "." + std::to_string(serial.fetch_add(1)));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        out.close();
        if (!out) {
            fs::remove(tmp, ec);
            say(s, "not stored " + shortKey(key) + ": cannot write in " + s.directory.string() +
                       ": " + std::strerror(errno));
            return;
        }
    }
    fs::rename(tmp, entryPath(s, key), ec);
    if (ec) {
        std::error_code e2;
        fs::remove(tmp, e2);
        say(s, "not stored " + shortKey(key) + ": " + ec.message());
        return;
    }
    counters(s).stores.fetch_add(1);
    say(s, "stored " + shortKey(key) + " (" + std::to_string(data.size()) + " bytes) in " +
               s.directory.string());
    evict(s);
}

void reject(const Settings& s, const std::string& key, const std::string& reason) {
    // load() counted a hit; the build goes on as a miss.
    counters(s).hits.fetch_sub(1);
    counters(s).misses.fetch_add(1);
    counters(s).rejected.fetch_add(1);
    say(s, "ignored " + shortKey(key) + ": " + reason + "; building again");
    if (!s.enabled || !validKey(key))
        return;
    std::error_code ec;
    fs::remove(entryPath(s, key), ec);
}

Stats stats(Shelf shelf) {
    const Counters& c = g_counters[shelf == Shelf::Code ? 1 : 0];
    return {c.hits.load(), c.misses.load(), c.stores.load(), c.rejected.load()};
}

} // namespace duet::rt::program_cache
