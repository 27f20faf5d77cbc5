// Device-side enqueue on the GCN device, its front: the ring that builtins/gcn/device_enqueue.cl
// writes launch records and device events into, laid out per host launch and decoded after each
// dispatch's fence into the launch's DeviceEnqueueSession (core/device_enqueue.hpp).
#pragma once

#include "core/device_enqueue.hpp"
#include "devices/gcn/dispatch.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace duet::rt::gcn_device {

/// The ring's header (duet_ring in device_enqueue.cl), what hidden_default_queue points at.
struct RingHeader {
    uint32_t magic;       ///< kRingMagic
    uint32_t recordBytes; ///< room for records in this dispatch
    uint32_t head;        ///< bytes reserved so far (device-scope atomic)
    uint32_t full;        ///< calls refused with CLK_DEVICE_QUEUE_FULL
    uint32_t eventCount;  ///< slots in the event pool
    uint32_t eventNext;   ///< slots handed out so far (device-scope atomic)
    uint64_t eventsOffset, recordsOffset;
    uint32_t freeCount; ///< slots free again (released, complete), listed before the dispatch
    uint32_t freeNext;  ///< of those, handed out (device-scope atomic)
    uint64_t freeOffset;
};
static_assert(sizeof(RingHeader) == 56);
inline constexpr uint32_t kRingMagic = 0x44524e47u; // "DRNG"

/// One event slot (duet_ring_event).
struct RingEvent {
    int32_t refs;
    int32_t status; ///< the kernels' view; arm() writes it once the event completed
    uint32_t user;
    uint32_t pad;
    uint64_t profileOut;             ///< capture_event_profiling_info's destination, or 0
    uint64_t execTime, completeTime; ///< written with a completed status
};
static_assert(sizeof(RingEvent) == 40);

/// One record's fixed part (duet_ring_record); wait slots, __local sizes and the block literal
/// (8-aligned) follow.
struct RingRecord {
    uint32_t bytes; ///< the whole record's length, published last
    uint32_t kind;  ///< kRecord*
    uint64_t handle;
    int32_t flags;
    uint32_t workDim;
    uint64_t offsets[3], globals[3], locals[3];
    uint32_t waitCount, localCount, blockBytes;
    int32_t event; ///< the returned event's slot, -1 if none
};
static_assert(sizeof(RingRecord) == 112);
enum : uint32_t { kRecordNone = 0, kRecordKernel = 1, kRecordMarker = 2 };

/// The ring of one host launch and the map from its event slots to the session's events. Owned
/// by the GCN backend and used under its launch lock.
class DeviceEnqueueRing {
public:
    /// Lays a ring out for a host launch: `queueBytes` (CL_QUEUE_SIZE) of records at most and
    /// `events` pool slots (CL_DEVICE_MAX_ON_DEVICE_EVENTS). False when out of memory.
    bool begin(size_t queueBytes, uint32_t events);
    bool active() const { return m_active; }
    /// Ends the host launch: the next launch without begin() gets no ring.
    void end() { m_active = false; }
    /// Makes room for the next dispatch's records: what CL_QUEUE_SIZE leaves beside the
    /// commands `session` holds queued; tells the kernels which events completed since (status
    /// and times, for capture_event_profiling_info). Returns the address for
    /// hidden_default_queue.
    uint64_t arm(DeviceEnqueueSession& session);
    /// The ring's memory, for a checked dispatch's list of host ranges.
    std::pair<const void*, uint64_t> range() const { return {m_memory.data(), m_bytes}; }
    /// After a dispatch's fence: its records become `session`'s commands (children of
    /// session.current()), new event slots the session's events, user events set by the
    /// kernels complete, capture_event_profiling_info destinations are kept. `executable`'s
    /// entries name the block kernels by their handles.
    void collect(DeviceEnqueueSession& session, const DeviceExecutable& executable);

private:
    RingHeader& header() const { return *reinterpret_cast<RingHeader*>(m_memory.data()); }
    RingEvent* events() const;
    /// The name of the block kernel whose runtime handle is at `handle`, or empty.
    std::string kernelOf(uint64_t handle, const DeviceExecutable& executable) const;
    /// One record at `rec` (its `bytes` already read) as a command; null for kRecordNone.
    std::unique_ptr<DeviceCommand> decode(const unsigned char* rec, uint32_t bytes,
                                          DeviceEnqueueSession& session,
                                          const DeviceExecutable& executable);
    void syncEvents(DeviceEnqueueSession& session);
    /// A new session event for slot `slot` as the kernels just made it.
    DeviceEvent* slotEvent(DeviceEnqueueSession& session, uint32_t slot);

    HostBlock m_memory;
    size_t m_bytes = 0;      ///< header, pool and records
    size_t m_queueBytes = 0; ///< CL_QUEUE_SIZE
    uint32_t m_eventCount = 0;
    bool m_active = false;
    bool m_dirty = true;                    ///< records may be written past what collect() cleared
    std::vector<DeviceEvent*> m_slotEvents; ///< the session's event of each slot handed out
};

} // namespace duet::rt::gcn_device
