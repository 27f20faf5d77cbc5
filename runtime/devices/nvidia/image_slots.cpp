// Image descriptor slots of the NVIDIA device: placement by content, least recently used reuse.
#include "devices/nvidia/image_slots.hpp"

namespace duet::rt::nvidia_device {

ImageSlots::Placement ImageSlots::place(const KernelImageDesc& desc) {
    const std::string key = keyOf(desc);
    if (auto it = m_where.find(key); it != m_where.end()) {
        at(it->second).lastLaunch = m_launch;
        return {it->second, false, false};
    }
    Placement p;
    p.write = true;
    if (m_next < capacity()) {
        p.slot = m_next++;
    } else {
        // The least recently used slot, unless the launch being placed reads every slot.
        size_t victim = capacity();
        for (size_t s = 0; s < capacity(); ++s)
            if (at(s).lastLaunch != m_launch &&
                (victim == capacity() || at(s).lastLaunch < at(victim).lastLaunch))
                victim = s;
        if (capacity() < kMaxSlots || victim == capacity()) {
            m_slots.push_back(std::make_unique<Slot[]>(kSlotsPerChunk));
            ++m_chunks;
            p.slot = m_next++;
            p.grow = true;
        } else {
            p.slot = victim;
            p.reused = true;
            m_where.erase(keyOf(at(victim).desc));
        }
    }
    Slot& s = at(p.slot);
    s.desc = desc;
    s.lastLaunch = m_launch;
    m_where[key] = p.slot;
    return p;
}

const KernelImageDesc& ImageSlots::content(size_t slot) const {
    return at(slot).desc;
}

void ImageSlots::forget(const Placement& p) {
    Slot& s = at(p.slot);
    m_where.erase(keyOf(s.desc));
    s = Slot{};
    if (p.grow) { // the chunk was never allocated: take it back
        m_slots.pop_back();
        --m_chunks;
        m_next = p.slot;
    }
}

} // namespace duet::rt::nvidia_device
