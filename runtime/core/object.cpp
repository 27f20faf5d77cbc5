// Quarantine of released handles, so a stale handle reads as dead instead of as reused memory.
#include "core/object.hpp"

#include <array>
#include <mutex>

namespace duet::rt {

namespace {
struct Quarantine {
    static constexpr size_t kSlots = 4096;
    std::mutex mutex;
    std::array<void*, kSlots> slots{};
    size_t next = 0;
    ~Quarantine() {
        for (void* p : slots)
            ::operator delete(p);
    }
};
Quarantine& quarantineStore() {
    static Quarantine* q = new Quarantine; // never destroyed: handles may die during exit
    return *q;
}
} // namespace

void quarantine(void* memory) {
    Quarantine& q = quarantineStore();
    void* evicted;
    {
        std::lock_guard lock(q.mutex);
        evicted = std::exchange(q.slots[q.next], memory);
        q.next = (q.next + 1) % Quarantine::kSlots;
    }
    ::operator delete(evicted);
}

} // namespace duet::rt
