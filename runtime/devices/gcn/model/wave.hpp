// Internal state of the interpreter: a dispatch's constants, a wavefront's registers, and the
// per-host-thread executor that runs work-groups (exec.cpp).
#pragma once

#include "isa.hpp"
#include "model.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace duet::gcn::model {

/// Flat-address apertures the model reports through src_shared_base / src_private_base. They
/// lie above the 47-bit user address space, so they never alias host memory.
inline constexpr uint64_t kSharedAperture = 0x0001'0000'0000'0000ull;
inline constexpr uint64_t kPrivateAperture = 0x0002'0000'0000'0000ull;

/// What every wave of one dispatch shares (read-only while it runs, except the error).
struct DispatchCtx {
    const DispatchState* state = nullptr;
    unsigned vgprs = 0, sgprs = 0; ///< allocated counts (RSRC1 granules)
    unsigned userSgprs = 0;
    unsigned ldsBytes = 0; ///< per work-group
    unsigned groupSize[3] = {1, 1, 1};
    unsigned wavesPerGroup = 1;
    uint32_t mode = 0;             ///< initial MODE register (FLOAT_MODE, DX10_CLAMP, IEEE)
    uint64_t scratchWaveBytes = 0; ///< TMPRING_SIZE.WAVESIZE in bytes
    unsigned scratchSlots = 0;     ///< TMPRING_SIZE.WAVES
    uint64_t scratchBase = 0;      ///< DispatchState::scratchBase (0: unchecked)
    bool trace = false;
    unsigned traceLane = 0;
    uint64_t maxWaveInstructions = 0; ///< 0: unlimited
    int64_t deadlineNs = 0;           ///< DispatchGuards::deadlineNs (0: none)
    /// DispatchGuards' checked memory: sorted, overlapping ranges merged.
    bool checkMemory = false;
    std::vector<std::pair<uint64_t, uint64_t>> memory;
    const std::function<bool(uint64_t, uint64_t)>* accept = nullptr;
    std::atomic<bool> failed{false};
    std::mutex errorMutex;
    std::string error;
    bool timedOut = false;                       ///< with error: the deadline passed
    std::optional<MemoryFault> fault;            ///< with error: a checked access failed
    bool checkBarriers = false;                  ///< DispatchGuards::checkBarriers
    std::optional<BarrierDivergence> divergence; ///< with error: a checked barrier failed
    /// Records the dispatch's first failure (later ones are dropped) and stops every thread.
    void fail(std::string message, std::optional<MemoryFault> why = {}, bool timeout = false,
              std::optional<BarrierDivergence> diverged = {}) {
        std::lock_guard lock(errorMutex);
        if (error.empty()) {
            error = std::move(message);
            fault = std::move(why);
            timedOut = timeout;
            divergence = diverged;
        }
        failed.store(true, std::memory_order_relaxed);
    }
};

struct Wave {
    /// Scalar operand space 0..127: s0..s101, FLAT_SCRATCH (102-103), XNACK_MASK (104-105),
    /// VCC (106-107), TTMP0-15 (108-123), M0 (124), EXEC (126-127).
    alignas(8) uint32_t s[128];
    uint32_t* v = nullptr; ///< 256 VGPRs x 64 lanes, register-major
    uint64_t pc = 0;
    uint32_t mode = 0;
    bool scc = false;
    bool done = false, atBarrier = false;
    unsigned id = 0;        ///< wave index within the work-group
    uint64_t items = 0;     ///< the lanes that hold work-items (EXEC at the start)
    uint64_t barrierPc = 0; ///< the s_barrier it waits at (atBarrier)
    unsigned scratchSlot = 0;
    uint64_t executed = 0; ///< instructions so far (for the hang guard)

    uint64_t exec() const { return uint64_t(s[126]) | uint64_t(s[127]) << 32; }
    void setExec(uint64_t e) { s[126] = uint32_t(e), s[127] = uint32_t(e >> 32); }
    uint64_t vcc() const { return uint64_t(s[106]) | uint64_t(s[107]) << 32; }
    uint64_t sreg64(unsigned i) const { return uint64_t(s[i]) | uint64_t(s[i + 1]) << 32; }
    void setSreg64(unsigned i, uint64_t x) { s[i] = uint32_t(x), s[i + 1] = uint32_t(x >> 32); }
    uint32_t* vrow(unsigned r) { return v + size_t(r) * 64; }
};

/// Counters one host thread accumulates; summed into DispatchStats at the end.
struct ThreadStats {
    uint64_t cls[static_cast<size_t>(InstClass::Count)] = {};
    uint64_t valuLaneOps = 0, valuInstructions = 0, ldsConflictCycles = 0, vmemBytes = 0;
    uint64_t workGroups = 0, wavefronts = 0;
};

/// Runs work-groups of one dispatch on the calling thread; owns the decoded-code cache.
class Executor {
public:
    Executor(DispatchCtx& ctx, unsigned thread);
    ~Executor();
    /// Runs one work-group to completion; false when the dispatch failed.
    bool runGroup(const uint32_t groupId[3], const uint32_t groupSize[3]);
    /// `s_waitcnt` with VM_CNT 0: every earlier vector-memory access of the wave has completed
    /// (on gfx9, stores and atomics included) before any later one starts. The model performs
    /// each access when its instruction runs, so completion is immediate; what is left is the
    /// order other host threads (other work-groups) see: a full host fence when this thread
    /// stored to global memory since its last one (a store followed by a load needs it on
    /// x86-64 too), else an acquire fence. memory.cpp.
    void waitVectorMemory();
    /// `buffer_wbinvl1(_vol)`: L1 invalidation, the acquire half of gfx9's agent- and
    /// system-scope atomics and fences. No caches here; an acquire fence keeps later loads
    /// after earlier ones on the host.
    void invalidateL1();
    ThreadStats stats;

private:
    struct Page;
    const Inst* fetch(uint64_t pc);
    const Inst* fetchSlow(uint64_t pc); ///< page change or first visit: decodes
    /// Runs `w` until s_endpgm, s_barrier, an error or, in a group of several waves, the end of
    /// its time slice (kSliceInstructions) or s_sleep; false on an error.
    bool runWave(Wave& w);
    bool runVector(Wave& w, const Inst& in); ///< one VALU/VOPC/memory instruction
    bool fail(const Wave& w, const Inst& in, const std::string& why);
    /// Every DispatchGuards::kPollInstructions instructions: false when the dispatch must stop
    /// (another thread failed, or the deadline passed: then recorded here).
    bool poll();
    /// Checked dispatches: whether [a, a + bytes) lies in the dispatch's memory.
    bool inMemory(uint64_t a, uint64_t bytes);
    /// Records the checked access of `lane` of `w` that fell outside (the first one wins).
    void outOfBounds(const Wave& w, unsigned lane, uint64_t a, uint64_t bytes,
                     MemoryFault::Kind kind);
    void trace(const Wave& w, const Inst& in);
    /// Checked barriers: `w` executes an s_barrier at `pc` with some of its work-items' lanes
    /// on and some off; stops the dispatch. Returns false.
    bool skippedBarrier(const Wave& w, uint64_t pc);
    /// Checked barriers, when every running wave of the group waits at a barrier: false (the
    /// dispatch stopped) when a wave has ended or the waves wait at different barriers.
    bool sameBarrier(unsigned nWaves);
    /// Local id of lane `lane` of wave `wave` in the running group.
    std::array<uint32_t, 3> localIdOf(unsigned wave, unsigned lane) const;

    DispatchCtx& m_ctx;
    unsigned m_thread;
    std::unordered_map<uint64_t, std::unique_ptr<Page>> m_pages;
    uint64_t m_lastPageKey = ~0ull;
    Page* m_lastPage = nullptr;
    std::vector<Wave> m_waves;
    std::vector<uint32_t> m_vgprs;
    std::vector<uint8_t> m_lds;
    unsigned m_ldsSize = 0;
    uint32_t m_groupWaves = 0;
    uint32_t m_groupId[3] = {}, m_groupSize[3] = {1, 1, 1}; ///< of the group running
    /// A wave of a multi-wave group runs at most this many instructions before the group's next
    /// wave gets its turn (runGroup round-robins), so a wave spinning on another's store cannot
    /// starve it: independent forward progress of sub-groups. Large enough that switching costs
    /// nothing measurable (README, "Execution").
    static constexpr uint64_t kSliceInstructions = 4096;
    /// Wave instructions left before the next poll(), across waves and groups.
    uint64_t m_pollBudget = DispatchGuards::kPollInstructions;
    size_t m_lastRange = 0;             ///< inMemory's last hit in m_ctx.memory
    std::optional<MemoryFault> m_fault; ///< set with the error of a failed checked access
    /// A global (non-LDS, non-scratch) store or atomic ran since the last full host fence.
    bool m_globalStoresUnfenced = false;
    int m_traceVdst = -1; ///< VGPR the previous traced instruction wrote (-1: none)

    friend struct WaveExec;
    friend struct MemExec;
};

} // namespace duet::gcn::model
