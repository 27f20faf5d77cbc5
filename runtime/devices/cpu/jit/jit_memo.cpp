// The memo of JIT-compiled kernels (jit_memo.hpp): in memory a bounded map, first in first out;
// on disk entries of the program cache's folder (core/program_cache.hpp, the Code shelf).
#include "devices/cpu/jit/jit_memo.hpp"

#include "compiler/front_end.hpp"
#include "core/environment.hpp"
#include "core/program_cache.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>

namespace duet::rt::cpu {
namespace {

constexpr size_t kMemoBytes = size_t(64) << 20;

struct Memo {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<const JitMemoEntry>> entries;
    std::deque<std::string> order; ///< keys, oldest first
    size_t bytes = 0;
    size_t hits = 0;
};

Memo& memo() {
    static Memo* m = new Memo; // never destroyed: kernels may compile while the process exits
    return *m;
}

size_t sizeOf(const std::string& key, const JitMemoEntry& e) {
    size_t n = key.size() + e.object.size();
    for (const std::string& l : e.report)
        n += l.size();
    return n;
}

/// A disk entry: the object as the binary, the report lines as the log (one per line).
std::string joinLines(const std::vector<std::string>& lines) {
    std::string s;
    for (const std::string& l : lines)
        s += l + "\n";
    return s;
}

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
        lines.push_back(text.substr(start, end - start));
    return lines;
}

void remember(Memo& m, const std::string& key, std::shared_ptr<const JitMemoEntry> entry) {
    const size_t bytes = sizeOf(key, *entry);
    if (bytes > kMemoBytes / 4 || m.entries.count(key))
        return;
    while (m.bytes + bytes > kMemoBytes && !m.order.empty()) {
        auto it = m.entries.find(m.order.front());
        m.bytes -= sizeOf(it->first, *it->second);
        m.entries.erase(it);
        m.order.pop_front();
    }
    m.entries.emplace(key, std::move(entry));
    m.order.push_back(key);
    m.bytes += bytes;
}

} // namespace

bool jitMemoEnabled() {
    return envSwitchOn("DUET_CPU_JIT_MEMO");
}

bool codeCacheOn() {
    return jitMemoEnabled() && program_cache::settings(program_cache::Shelf::Code).enabled;
}

std::shared_ptr<const JitMemoEntry> findJitMemo(const std::string& key, MemoReach reach,
                                                bool* fromDisk) {
    Memo& m = memo();
    if (fromDisk)
        *fromDisk = false;
    {
        std::lock_guard lock(m.mutex);
        if (auto it = m.entries.find(key); it != m.entries.end()) {
            ++m.hits;
            return it->second;
        }
    }
    if (reach != MemoReach::Disk)
        return nullptr;
    const program_cache::Settings s = program_cache::settings(program_cache::Shelf::Code);
    if (!s.enabled)
        return nullptr;
    std::optional<program_cache::Entry> stored = program_cache::load(s, codeCacheKey(key));
    if (!stored || stored->binary.empty())
        return nullptr;
    auto entry = std::make_shared<const JitMemoEntry>(
        JitMemoEntry{std::move(stored->binary), splitLines(stored->log)});
    std::lock_guard lock(m.mutex);
    ++m.hits;
    remember(m, key, entry);
    if (fromDisk)
        *fromDisk = true;
    return entry;
}

size_t jitMemoHits() {
    Memo& m = memo();
    std::lock_guard lock(m.mutex);
    return m.hits;
}

void storeJitMemo(const std::string& key, JitMemoEntry entry, MemoReach reach) {
    auto shared = std::make_shared<const JitMemoEntry>(std::move(entry));
    {
        Memo& m = memo();
        std::lock_guard lock(m.mutex);
        remember(m, key, shared);
    }
    if (reach != MemoReach::Disk)
        return;
    const program_cache::Settings s = program_cache::settings(program_cache::Shelf::Code);
    if (s.enabled)
        program_cache::store(s, codeCacheKey(key), shared->object, joinLines(shared->report));
}

void rejectJitMemo(const std::string& key, bool fromDisk, const std::string& reason) {
    Memo& m = memo();
    {
        std::lock_guard lock(m.mutex);
        if (auto it = m.entries.find(key); it != m.entries.end()) {
            m.bytes -= sizeOf(it->first, *it->second);
            m.entries.erase(it);
            m.order.erase(std::find(m.order.begin(), m.order.end(), key));
        }
    }
    const program_cache::Settings s = program_cache::settings(program_cache::Shelf::Code);
    if (fromDisk && s.enabled)
        program_cache::reject(s, codeCacheKey(key), reason);
}

} // namespace duet::rt::cpu
