// Where the NVIDIA device keeps image descriptors: slots of device-visible memory shared by
// every launch and keyed by content, so that a program that launches on the same images keeps
// reading the same slots and writes none. Bookkeeping only: no CUDA (the executor allocates the
// memory and writes the slots, stream-ordered).
#pragma once

#include "core/image.hpp"
#include "devices/nvidia/texture_objects.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace duet::rt::nvidia_device {

/// Image descriptor slots, in chunks of kSlotsPerChunk. A slot is (re)assigned only by place();
/// the writes it asks for must be ordered after every launch already queued that may read the
/// slot (`reused`) and before the launch being placed (the executor writes on its shared stream
/// and makes every lane wait for it). Not thread-safe: the executor calls it under its stream
/// mutex.
class ImageSlots {
public:
    static constexpr size_t kSlotsPerChunk = 64; ///< 4 KiB of descriptors per allocation
    /// Past this many slots, the least recently used one (not used by the launch being placed)
    /// takes a new descriptor instead of the pool growing.
    static constexpr size_t kMaxSlots = 1024;

    struct Placement {
        size_t slot = 0;     ///< chunk slot / kSlotsPerChunk, index slot % kSlotsPerChunk
        bool write = false;  ///< the slot does not hold the descriptor yet: write content(slot)
        bool grow = false;   ///< the slot is the first of a chunk not yet allocated
        bool reused = false; ///< the slot held another descriptor, which launches may read
        /// reused: the texture objects of the descriptor it held, for the executor to destroy
        /// once no launch reads them (0 where none)
        uint64_t retired[kSamplerKeys] = {};
    };

    /// Starts placing the images of a new launch.
    void beginLaunch() { ++m_launch; }
    /// The slot for `desc` in the current launch; `sampled`: the kernel reads the image (a
    /// read_only argument), so the slot's descriptor carries texture objects, which the
    /// executor makes (setTextures) before it writes the slot. An image bound both ways has a
    /// slot for each.
    Placement place(const KernelImageDesc& desc, bool sampled);
    /// What slot `slot` holds (or will, once written): the source of the write, stable until
    /// place() assigns the slot again.
    const DeviceImageDesc& content(size_t slot) const;
    /// The texture part of a slot just placed (p.write): class, swizzle and handles.
    void setTextures(size_t slot, TextureClass cls, TextureSwizzle swizzle,
                     const uint64_t (&textures)[kSamplerKeys]);
    /// Forgets the slot that holds (`desc`, `sampled`), if one does, and returns the texture
    /// objects it held for the executor to destroy (the CUDA array they read is going away).
    /// The slot stays allocated, unreachable, until it is least recently used.
    std::vector<uint64_t> drop(const KernelImageDesc& desc, bool sampled);
    /// Every texture object the slots hold (for the executor's teardown).
    std::vector<uint64_t> allTextures() const;
    /// The write (or the chunk) that place() asked for failed: the slot holds nothing, and a
    /// chunk it asked to grow by does not exist.
    void forget(const Placement& p);
    /// Slots in allocated chunks.
    size_t capacity() const { return m_chunks * kSlotsPerChunk; }

private:
    struct Slot {
        DeviceImageDesc desc{};
        bool sampled = false;
        uint64_t lastLaunch = 0; ///< 0: holds nothing
    };
    static std::string keyOf(const KernelImageDesc& d, bool sampled) {
        return std::string(reinterpret_cast<const char*>(&d), sizeof d) + (sampled ? 's' : 'w');
    }
    Slot& at(size_t slot) { return m_slots[slot / kSlotsPerChunk][slot % kSlotsPerChunk]; }
    const Slot& at(size_t slot) const {
        return m_slots[slot / kSlotsPerChunk][slot % kSlotsPerChunk];
    }

    std::vector<std::unique_ptr<Slot[]>> m_slots; ///< host mirror per chunk: stable addresses
    size_t m_chunks = 0;
    size_t m_next = 0; ///< slots below have been assigned once
    uint64_t m_launch = 0;
    std::unordered_map<std::string, size_t> m_where; ///< descriptor bytes -> slot
};

} // namespace duet::rt::nvidia_device
