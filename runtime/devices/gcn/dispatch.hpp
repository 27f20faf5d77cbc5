// The GCN device's dispatch builder: a kernel launch laid out as an amdhsa dispatch in PM4.
// No LLVM headers.
#pragma once

#include "core/image.hpp"
#include "core/kernel.hpp"
#include "core/printf_buffer.hpp"
#include "devices/gcn/code_object.hpp"
#include "devices/gcn/pm4.hpp"

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace duet::rt::gcn_device {

inline constexpr unsigned kWaveSize = 64;
inline constexpr unsigned kLdsPerGroup = 32 * 1024;   ///< what a work-group may allocate (AMD's)
inline constexpr size_t kPrintfBufferBytes = 1 << 20; ///< CL_DEVICE_PRINTF_BUFFER_SIZE

/// The on-device queue a queue_t argument's value names (a live handle), or null.
Queue* onDeviceQueueArgument(const ArgValue& v);

/// A growable host block, zero-initialised, aligned for PM4/HSA structures.
class HostBlock {
public:
    bool reserve(size_t bytes, size_t align = 256);
    unsigned char* data() const { return m_p.get(); }
    uint64_t address() const { return reinterpret_cast<uint64_t>(m_p.get()); }

private:
    struct Free {
        void operator()(unsigned char* p) const;
    };
    std::unique_ptr<unsigned char, Free> m_p;
    size_t m_capacity = 0;
};

/// Lays kernel launches out as amdhsa dispatches and encodes each as one PM4 stream: the
/// kernarg segment as the metadata describes it, the AQL dispatch packet, the queue stand-in,
/// scratch, the printf buffer, the user SGPRs and dispatch registers, and the end-of-pipe fence.
/// Owns that host memory, reused from launch to launch. Not thread-safe: the caller builds,
/// runs and drains one launch at a time.
class DispatchBuilder {
public:
    /// `computeUnits` sizes scratch. `forHardware`: the dispatch goes to a real GPU, so the
    /// fence gets a page of its own and hostRanges() lists the host memory it refers to.
    DispatchBuilder(unsigned computeUnits, bool forHardware)
        : m_computeUnits(computeUnits), m_forHardware(forHardware) {}
    DispatchBuilder(const DispatchBuilder&) = delete; // m_fence may point into the builder
    DispatchBuilder& operator=(const DispatchBuilder&) = delete;

    /// Builds `launch` (whose entry is a gcn::KernelEntry). Returns CL_SUCCESS and the stream in
    /// dwords(), or an error code and in `why` the reason to report (empty: nothing to add).
    /// `listHostRanges`: fill hostRanges() on the model too (checked dispatches).
    /// `defaultQueue`: the ring hidden_default_queue points at (device_enqueue_ring.hpp), its
    /// address and bytes; null: none (get_default_queue() returns a null queue).
    /// `inherited`: for a child launch, the host ranges its host launch was given (pointers
    /// captured in its block literal lead there), listed too.
    /// A `queue_t` argument holding one of `device`'s on-device queues gets the same address
    /// (the launch's commands share one ring), any other value null.
    struct DefaultQueue {
        uint64_t address = 0;
        std::pair<const void*, uint64_t> range{nullptr, 0};
        const std::vector<std::pair<const void*, uint64_t>>* inherited = nullptr;
        const Device* device = nullptr;
    };
    cl_int build(const KernelLaunch& launch, std::string& why, bool listHostRanges = false,
                 const DefaultQueue* defaultQueue = nullptr);
    /// Whether `launch`'s kernel may enqueue (gcn::KernelInfo::mayEnqueue).
    static bool wantsDefaultQueue(const KernelLaunch& launch);

    /// The PM4 stream of the last build.
    const std::vector<uint32_t>& dwords() const { return m_pm4.dwords(); }
    /// The queue's scratch (COMPUTE_TMPRING_SIZE's memory), as a driver sets it up.
    uint64_t scratchAddress() const { return m_scratch.address(); }
    /// On hardware (or when build was asked to list them), every host range the dispatch reads
    /// or writes: buffers, SVM allocations, image texels and descriptors, the blocks above, the
    /// loaded code object.
    const std::vector<std::pair<const void*, uint64_t>>& hostRanges() const { return m_hostRanges; }
    bool usesPrintf() const { return m_usesPrintf; }
    /// Whether the dispatch's end-of-pipe fence has been written (the dispatch finished).
    bool fenceWritten() const { return *m_fence == m_fenceValue; }
    uint64_t workGroups() const { return uint64_t(m_groups[0]) * m_groups[1] * m_groups[2]; }
    /// What the dispatch's printf calls recorded, decoded with `code`'s formats; empties the
    /// buffer for the next dispatch.
    PrintfOutput drainPrintf(const gcn::CodeObject& code);

private:
    cl_int writeKernargs(const KernelLaunch& launch, const gcn::KernelInfo& ki, std::string& why);
    cl_int putExplicitArg(const KernelLaunch& launch, const gcn::KernelArgMeta& a, size_t index,
                          std::string& why);
    cl_int putHiddenArg(const KernelLaunch& launch, const gcn::KernelInfo& ki,
                        const gcn::KernelArgMeta& a, std::string& why);
    bool putImageOrSampler(const gcn::KernelArgMeta& a, const ArgValue& v, size_t index);
    uint64_t printfBuffer();
    /// The ring address for a queue_t argument's value `v`, or 0 (DefaultQueue).
    uint64_t queueArgument(const ArgValue& v) const;
    cl_int setUpScratch(const gcn::KernelInfo& ki, std::string& why);
    void writePacket(const KernelLaunch& launch, const gcn::KernelEntry& entry);
    unsigned putUserSgprs(const gcn::KernelDescriptor& kd, gcn::DispatchState& st) const;
    cl_int emitStream(const gcn::DispatchState& st, unsigned userSgprs,
                      const gcn::KernelEntry& entry);

    unsigned m_computeUnits;
    bool m_forHardware;
    bool m_listRanges = false; ///< this build fills m_hostRanges (hardware, or checks)
    HostBlock m_kernarg, m_packet, m_scratch, m_queue, m_printf;
    HostBlock m_hwFence; ///< the RELEASE_MEM target on hardware: a page of its own
    bool m_printfReady = false;
    /// Per-argument image descriptors of the launch in flight (host memory the model reads
    /// directly, as it reads buffers).
    std::vector<KernelImageDesc> m_imageDescs;
    std::vector<std::pair<const void*, uint64_t>> m_hostRanges;
    uint64_t m_dispatchId = 0;
    alignas(8) uint64_t m_modelFence = 0; ///< the RELEASE_MEM target on the model
    gcn::pm4::Builder m_pm4;

    // The launch being built.
    uint32_t m_groups[3] = {}, m_remainders[3] = {};
    uint32_t m_kernargBytes = 0, m_lds = 0, m_privateBytes = 0, m_tmpring = 0;
    uint64_t m_scratchBase = 0, m_scratchBytes = 0;
    bool m_usesPrintf = false;
    const DefaultQueue* m_defaultQueue = nullptr; ///< during build() only
    uint64_t* m_fence = &m_modelFence;
    uint64_t m_fenceValue = 0;
};

} // namespace duet::rt::gcn_device
