// Image descriptor slots of the NVIDIA device: placement by content, least recently used reuse.
#include "devices/nvidia/image_slots.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace duet::rt::nvidia_device {

ImageSlots::Placement ImageSlots::place(const KernelImageDesc& desc, bool sampled) {
    const std::string key = keyOf(desc, sampled);
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
            Slot& old = at(victim);
            // A dropped slot's descriptor may be placed again elsewhere: erase only its own.
            if (auto it = m_where.find(keyOf(old.desc.image, old.sampled));
                it != m_where.end() && it->second == victim)
                m_where.erase(it);
            std::copy(std::begin(old.desc.textures), std::end(old.desc.textures), p.retired);
        }
    }
    Slot& s = at(p.slot);
    s.desc = DeviceImageDesc{};
    s.desc.image = desc;
    s.sampled = sampled;
    s.lastLaunch = m_launch;
    m_where[key] = p.slot;
    return p;
}

const DeviceImageDesc& ImageSlots::content(size_t slot) const {
    return at(slot).desc;
}

void ImageSlots::setTextures(size_t slot, TextureClass cls, TextureSwizzle swizzle,
                             const uint64_t (&textures)[kSamplerKeys]) {
    DeviceImageDesc& d = at(slot).desc;
    d.textureClass = cls;
    d.swizzle = swizzle;
    std::copy(std::begin(textures), std::end(textures), d.textures);
}

std::vector<uint64_t> ImageSlots::drop(const KernelImageDesc& desc, bool sampled) {
    std::vector<uint64_t> out;
    auto it = m_where.find(keyOf(desc, sampled));
    if (it == m_where.end())
        return out;
    for (uint64_t& t : at(it->second).desc.textures)
        if (t)
            out.push_back(std::exchange(t, 0));
    m_where.erase(it);
    return out;
}

std::vector<uint64_t> ImageSlots::allTextures() const {
    std::vector<uint64_t> out;
    for (size_t slot = 0; slot < m_next; ++slot)
        for (uint64_t t : at(slot).desc.textures)
            if (t)
                out.push_back(t);
    return out;
}

void ImageSlots::forget(const Placement& p) {
    Slot& s = at(p.slot);
    m_where.erase(keyOf(s.desc.image, s.sampled));
    s = Slot{};
    if (p.grow) { // the chunk was never allocated: take it back
        m_slots.pop_back();
        --m_chunks;
        m_next = p.slot;
    }
}

} // namespace duet::rt::nvidia_device
