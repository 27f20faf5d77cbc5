// Device-side enqueue on the GCN device, its front: the ring laid out per host launch and its
// records decoded into the launch's DeviceEnqueueSession after each dispatch.
#include "devices/gcn/device_enqueue_ring.hpp"

#include "devices/gcn/code_object.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace duet::rt::gcn_device {
namespace {

/// What the front names a command it cannot run (a record the kernels' code did not write as
/// device_enqueue.cl writes them): the session finds no such kernel and fails the command.
constexpr const char* kUndecodable = "(an undecodable device-enqueue record)";

template <class T> T load(const unsigned char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

} // namespace

bool DeviceEnqueueRing::begin(size_t queueBytes, uint32_t events) {
    const bool samePool = events == m_eventCount;
    m_queueBytes = queueBytes;
    m_eventCount = events;
    const size_t eventsOffset = sizeof(RingHeader);
    const size_t freeOffset = eventsOffset + size_t(events) * sizeof(RingEvent);
    const size_t recordsOffset = (freeOffset + size_t(events) * 4 + 63) / 64 * 64;
    const unsigned char* before = m_memory.data();
    const size_t bytes = recordsOffset + queueBytes;
    if (!m_memory.reserve(bytes, 4096))
        return false;
    // Records are cleared as they are collected: only new memory, a larger ring or one a failed
    // dispatch left written needs clearing in full (an 8 MiB CL_QUEUE_SIZE is 8 MiB per launch).
    const bool clean = m_memory.data() == before && samePool && !m_dirty && bytes <= m_bytes;
    std::memset(m_memory.data(), 0, clean ? recordsOffset : bytes);
    m_bytes = bytes;
    m_dirty = false;
    RingHeader& h = header();
    h.magic = kRingMagic;
    h.eventCount = events;
    h.eventsOffset = eventsOffset;
    h.recordsOffset = recordsOffset;
    h.freeOffset = freeOffset;
    m_slotEvents.clear();
    m_active = true;
    return true;
}

RingEvent* DeviceEnqueueRing::events() const {
    return reinterpret_cast<RingEvent*>(m_memory.data() + header().eventsOffset);
}

uint64_t DeviceEnqueueRing::arm(DeviceEnqueueSession& session) {
    std::lock_guard lock(session.mutex());
    RingHeader& h = header();
    RingEvent* pool = events();
    auto* free = reinterpret_cast<uint32_t*>(m_memory.data() + h.freeOffset);
    h.freeCount = 0;
    h.freeNext = 0;
    for (size_t i = 0; i < m_slotEvents.size(); ++i) {
        const DeviceEvent* e = m_slotEvents[i];
        if (e->status > CL_COMPLETE)
            continue;
        // Completed and no kernel holds it: the slot can be handed out again (so that, as on
        // the CPU device, CL_DEVICE_MAX_ON_DEVICE_EVENTS bounds the events held at once).
        if (pool[i].refs <= 0)
            free[h.freeCount++] = uint32_t(i);
        if (e->user || pool[i].status == e->status)
            continue;
        pool[i].execTime = e->end - e->start;
        pool[i].completeTime = e->complete - e->start;
        pool[i].status = e->status;
    }
    const size_t used = std::min(session.usedBytes(), m_queueBytes);
    h.recordBytes = uint32_t(m_queueBytes - used);
    h.head = 0;
    h.full = 0;
    m_dirty = true;
    return m_memory.address();
}

std::string DeviceEnqueueRing::kernelOf(uint64_t handle, const DeviceExecutable& executable) const {
    const auto& kernels = executable.kernels();
    for (size_t i = 0; i < kernels.size(); ++i) {
        const auto* entry = static_cast<const gcn::KernelEntry*>(executable.entry(i));
        if (entry && entry->kernel && entry->kernel->runtimeHandleAddress &&
            entry->loadBase + entry->kernel->runtimeHandleAddress == handle)
            return kernels[i].name;
    }
    return {};
}

std::unique_ptr<DeviceCommand> DeviceEnqueueRing::decode(const unsigned char* p, uint32_t bytes,
                                                         DeviceEnqueueSession& session,
                                                         const DeviceExecutable& executable) {
    const auto rec = load<RingRecord>(p);
    if (rec.kind == kRecordNone)
        return nullptr;
    auto cmd = std::make_unique<DeviceCommand>();
    cmd->charge = bytes;
    bool good = rec.kind == kRecordKernel || rec.kind == kRecordMarker;
    const uint64_t tailBytes = uint64_t(rec.waitCount + uint64_t(rec.localCount)) * 4;
    const uint64_t literalAt = (sizeof(RingRecord) + tailBytes + 7) / 8 * 8;
    good = good && literalAt + rec.blockBytes <= bytes;
    const unsigned char* tail = p + sizeof(RingRecord);
    for (uint32_t i = 0; good && i < rec.waitCount; ++i) {
        const uint32_t slot = load<uint32_t>(tail + 4 * i);
        good = slot < m_slotEvents.size();
        if (good)
            cmd->waits.push_back(m_slotEvents[slot]);
    }
    if (rec.event >= 0 && size_t(rec.event) < m_slotEvents.size())
        cmd->event = m_slotEvents[size_t(rec.event)];
    else
        cmd->event = session.newEvent();
    if (rec.kind == kRecordMarker && good)
        return cmd;
    // A kernel: its block kernel, ndrange, __local sizes and block literal.
    cmd->kernelName = good ? kernelOf(rec.handle, executable) : std::string();
    good = good && !cmd->kernelName.empty() && rec.workDim >= 1 && rec.workDim <= 3 &&
           rec.blockBytes >= 8 && load<uint32_t>(p + literalAt) == rec.blockBytes &&
           cmd->copyBlock(p + literalAt);
    if (!good) {
        cmd->kernelName = kUndecodable;
        cmd->waits.clear();
        return cmd;
    }
    cmd->nd.workDim = rec.workDim;
    for (int d = 0; d < 3; ++d) {
        cmd->nd.offset[d] = rec.offsets[d];
        cmd->nd.global[d] = rec.globals[d];
        cmd->nd.local[d] = rec.locals[d];
    }
    for (uint32_t i = 0; i < rec.localCount; ++i)
        cmd->localSizes.push_back(load<uint32_t>(tail + 4 * (rec.waitCount + i)));
    return cmd;
}

DeviceEvent* DeviceEnqueueRing::slotEvent(DeviceEnqueueSession& session, uint32_t slot) {
    DeviceEvent* e = session.newEvent();
    if (events()[slot].user) {
        e->user = true;
        e->status = CL_SUBMITTED;
        e->start = deviceEnqueueNowNs();
    }
    return e;
}

void DeviceEnqueueRing::syncEvents(DeviceEnqueueSession& session) {
    RingHeader& h = header();
    RingEvent* pool = events();
    // Slots handed out again: new events (the old ones stay the session's, for the commands
    // that still wait on them).
    const auto* free = reinterpret_cast<const uint32_t*>(m_memory.data() + h.freeOffset);
    for (uint32_t f = 0; f < std::min(h.freeNext, h.freeCount); ++f)
        m_slotEvents[free[f]] = slotEvent(session, free[f]);
    h.freeCount = 0;
    h.freeNext = 0;
    const uint32_t handedOut = std::min(h.eventNext, m_eventCount);
    while (m_slotEvents.size() < handedOut)
        m_slotEvents.push_back(slotEvent(session, uint32_t(m_slotEvents.size())));
    for (size_t i = 0; i < m_slotEvents.size(); ++i) {
        DeviceEvent* e = m_slotEvents[i];
        const RingEvent& slot = pool[i];
        // set_user_event_status: CL_COMPLETE or an error, once.
        if (e->user && e->status > CL_COMPLETE && slot.status <= CL_COMPLETE)
            session.settle(e, slot.status < 0 ? slot.status : 0);
        if (!e->user && slot.profileOut && !e->profileOut) {
            e->profileOut = reinterpret_cast<uint64_t*>(slot.profileOut);
            if (e->status == CL_COMPLETE) {
                e->profileOut[0] = e->end - e->start;
                e->profileOut[1] = e->complete - e->start;
            }
        }
    }
}

void DeviceEnqueueRing::collect(DeviceEnqueueSession& session, const DeviceExecutable& executable) {
    std::lock_guard lock(session.mutex());
    // Slots first: a record waits on events handed out in the same dispatch; user events set
    // by the dispatch complete, profiling destinations are kept.
    syncEvents(session);
    RingHeader& h = header();
    unsigned char* records = m_memory.data() + h.recordsOffset;
    const uint32_t end = std::min(h.head, h.recordBytes);
    uint32_t at = 0;
    while (at + sizeof(RingRecord) <= end) {
        const uint32_t bytes = load<uint32_t>(records + at);
        if (bytes < sizeof(RingRecord) || bytes > end - at)
            break; // not published: nothing after it was either
        if (std::unique_ptr<DeviceCommand> cmd = decode(records + at, bytes, session, executable))
            session.queue(std::move(cmd));
        at += bytes;
    }
    std::memset(records, 0, end);
    m_dirty = false;
}

} // namespace duet::rt::gcn_device
