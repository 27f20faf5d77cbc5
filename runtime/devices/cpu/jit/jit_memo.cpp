// The in-process memo of JIT-compiled kernels (jit_memo.hpp): a bounded map, first in first out.
#include "devices/cpu/jit/jit_memo.hpp"

#include <cstdlib>
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

} // namespace

bool jitMemoEnabled() {
    const char* env = std::getenv("DUET_CPU_JIT_MEMO");
    return !(env && env[0] == '0');
}

std::shared_ptr<const JitMemoEntry> findJitMemo(const std::string& key) {
    Memo& m = memo();
    std::lock_guard lock(m.mutex);
    auto it = m.entries.find(key);
    if (it == m.entries.end())
        return nullptr;
    ++m.hits;
    return it->second;
}

size_t jitMemoHits() {
    Memo& m = memo();
    std::lock_guard lock(m.mutex);
    return m.hits;
}

void storeJitMemo(const std::string& key, JitMemoEntry entry) {
    const size_t bytes = sizeOf(key, entry);
    if (bytes > kMemoBytes / 4)
        return;
    Memo& m = memo();
    std::lock_guard lock(m.mutex);
    if (m.entries.count(key))
        return;
    while (m.bytes + bytes > kMemoBytes && !m.order.empty()) {
        auto it = m.entries.find(m.order.front());
        m.bytes -= sizeOf(it->first, *it->second);
        m.entries.erase(it);
        m.order.pop_front();
    }
    m.entries.emplace(key, std::make_shared<const JitMemoEntry>(std::move(entry)));
    m.order.push_back(key);
    m.bytes += bytes;
}

} // namespace duet::rt::cpu
