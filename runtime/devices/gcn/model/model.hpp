// The software GCN model's interface: what the compute pipe of a gfx9 GPU holds when a
// DISPATCH_DIRECT packet arrives, and the model that runs it. The PM4 decoder
// (devices/gcn/pm4) fills DispatchState from the same command stream the amdgpu sink
// submits; the model never sees the runtime's objects.
//
// Addresses are host virtual addresses: the model's GPU VA space is the process's own, so
// buffers, kernarg segments, code objects and scratch are plain host memory.
//
// What the model does with the registers (the contract for the PM4 decoder / device backend):
// - Work-group size: COMPUTE_NUM_THREAD_*[15:0]. Work-groups: DIM_* (or, with the initiator's
//   USE_THREAD_DIMENSIONS bit 5, ceil(DIM / size) with a partial last group), ids from START_*.
// - Each wave starts with s[0..USER_SGPR-1] = userData, then (when enabled by RSRC2) the
//   work-group id X, Y, Z, work-group info (wave count) and, with SCRATCH_EN, the private
//   segment wave byte offset = slot * TMPRING_SIZE.WAVESIZE * 1 KiB, where slot < TMPRING.WAVES
//   is unique among the waves running at once. v0/v1/v2 hold the work-item ids (TIDIG_COMP_CNT);
//   EXEC has the wave's live lanes; VCC, M0, FLAT_SCRATCH start at 0.
// - Scratch: the backend allocates WAVES * WAVESIZE KiB and passes the private segment buffer
//   V# in user SGPRs (gfx9 layout: swizzle_enable, ADD_TID_ENABLE, INDEX_STRIDE 64,
//   ELEMENT_SIZE 4 as AMDGPUUsage describes); MUBUF addresses it with the ISA's swizzle formula.
//   FLAT/SCRATCH accesses to private memory use FLAT_SCRATCH (which the kernel prologue sets
//   from FLAT_SCRATCH_INIT + wave offset) with the same 4-byte x 64-lane interleave.
// - Flat apertures: src_shared_base = 0x0001'0000'0000'0000 (LDS), src_private_base =
//   0x0002'0000'0000'0000 (scratch); both lie outside user-space host addresses.
// - MODE starts from RSRC1 FLOAT_MODE (denormals honoured per mode), DX10_CLAMP, IEEE_MODE;
//   non-default round modes are reported as unsupported.
// - LDS: RSRC2.LDS_SIZE * 512 bytes per work-group, zero-filled, at most 64 KiB.
#pragma once

#include "occupancy.hpp"
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace duet::gcn {

/// The COMPUTE_* registers (gfx9 names and bit layouts) and the DISPATCH_DIRECT operands.
struct DispatchState {
    uint64_t pgmAddress = 0; ///< COMPUTE_PGM_LO/HI << 8: the kernel's first instruction
    uint32_t pgmRsrc1 = 0;   ///< COMPUTE_PGM_RSRC1: VGPRS, SGPRS, FLOAT_MODE, IEEE_MODE, ...
    uint32_t pgmRsrc2 = 0;   ///< COMPUTE_PGM_RSRC2: SCRATCH_EN, USER_SGPR, TGID_*_EN, TG_SIZE_EN,
                             ///< TIDIG_COMP_CNT, LDS_SIZE
    uint32_t pgmRsrc3 = 0;   ///< COMPUTE_PGM_RSRC3 (gfx90a+: ACCUM_OFFSET; 0 on gfx900)
    std::array<uint32_t, 16> userData{}; ///< COMPUTE_USER_DATA_0..15: the first USER_SGPR SGPRs
    std::array<uint32_t, 3> numThread{1, 1, 1}; ///< COMPUTE_NUM_THREAD_X/Y/Z: work-group size
    std::array<uint32_t, 3> start{};            ///< COMPUTE_START_X/Y/Z: first work-group id
    uint32_t tmpringSize =
        0; ///< COMPUTE_TMPRING_SIZE: WAVES (max waves with scratch), WAVESIZE (1 KiB units)
    uint32_t resourceLimits = 0;   ///< COMPUTE_RESOURCE_LIMITS
    std::array<uint32_t, 3> dim{}; ///< DISPATCH_DIRECT DIM_X/Y/Z (work-groups, or work-items when
                                   ///< the initiator's USE_THREAD_DIMENSIONS bit is set)
    uint32_t initiator = 0;        ///< COMPUTE_DISPATCH_INITIATOR
    /// Not a PM4 register: the scratch memory the queue was given (on hardware the kernel
    /// driver sets it per queue), WAVES slots of WAVESIZE each. With it the model stops any
    /// private access outside the wave's own slot; 0 leaves private accesses unchecked.
    uint64_t scratchBase = 0;
};

/// Instruction classes the statistics count.
enum class InstClass : uint8_t {
    Salu,
    Smem,
    Valu,
    Vmem,
    Flat,
    Lds,
    Branch,
    Barrier,
    Waitcnt,
    Other,
    Count
};

/// What one dispatch did: the AMD profiler's counters, as the model sees them.
struct DispatchStats {
    std::array<uint64_t, static_cast<size_t>(InstClass::Count)> wavefrontInstructions{};
    uint64_t valuLaneOps = 0; ///< sum over VALU instructions of active EXEC lanes
    uint64_t valuInstructions =
        0; ///< wave-level VALU instructions (denominator of lane utilisation)
    uint64_t ldsBankConflictCycles = 0;
    uint64_t vmemBytes = 0; ///< bytes vector memory instructions moved (active lanes x size)
    uint64_t workGroups = 0, wavefronts = 0;
    unsigned vgprs = 0, sgprs = 0, ldsBytesPerGroup = 0;
    unsigned wavesPerSimd = 0;  ///< occupancy: waves per SIMD the resources allow (max 10)
    std::string occupancyLimit; ///< "VGPRs", "SGPRs", "LDS", "work-group size" or "none"
    unsigned hostThreads = 0;   ///< host threads the dispatch ran on
    double seconds = 0;         ///< host time the model spent

    uint64_t totalInstructions() const {
        uint64_t n = 0;
        for (uint64_t c : wavefrontInstructions)
            n += c;
        return n;
    }
    /// VALU lane utilisation: active lanes per VALU instruction / 64.
    double laneUtilisation() const {
        return valuInstructions ? double(valuLaneOps) / (64.0 * double(valuInstructions)) : 0.0;
    }
    /// The time the dispatch would take on the modelled GPU (`computeUnits` CUs at `clockHz`),
    /// in seconds: the kernel's profiling time on the model. A first-order estimate from what
    /// the dispatch executed, so every run of the same dispatch gets the same figure, whatever
    /// the host: each SIMD issues one instruction per cycle; a VALU, vector-memory or LDS
    /// instruction holds its SIMD 4 cycles (64 lanes on 16), any other 1, and LDS bank
    /// conflicts add theirs; the waves' cycles spread over the CUs' 4 SIMDs each (over no more
    /// SIMDs than there are waves). Vector memory is bounded by kModelledBandwidth. The
    /// slower of the two, plus kModelledLaunchSeconds.
    double modelledSeconds(unsigned computeUnits, double clockHz) const;
    static constexpr double kModelledBandwidth = 484e9;    ///< bytes/s: Vega 10's HBM2
    static constexpr double kModelledLaunchSeconds = 2e-6; ///< dispatch to first wave, end
    /// One line per figure, as DUET_GCN_STATS prints them (the AMD profiler's counters).
    std::string summary() const;
};

/// Names of InstClass values, for statistics output.
inline const char* instClassName(InstClass c) {
    static const char* const names[] = {"SALU", "SMEM",   "VALU",    "VMEM",    "FLAT",
                                        "LDS",  "branch", "barrier", "waitcnt", "other"};
    return names[static_cast<size_t>(c)];
}

struct ModelConfig {
    unsigned computeUnits = 64;
    unsigned hostThreads = 0; ///< 0: one per host core
    /// Debugging: print every instruction wave 0 of work-group 0 executes (with one lane of its
    /// VGPR operands and results) to stderr. Also enabled by DUET_GCN_TRACE=1.
    bool trace = false;
    /// The lane the trace shows (0..63); DUET_GCN_TRACE_LANE overrides it.
    unsigned traceLane = 0;
    /// Stops a wave that executes more instructions than this (0: no limit), with an error
    /// naming the instruction it reached: a guard against kernels that never end.
    uint64_t maxWaveInstructions = 0;
};

/// Not PM4 state: what the runtime asks the model to watch over during one dispatch
/// (DUET_KERNEL_TIMEOUT and DUET_KERNEL_CHECKS). The defaults watch nothing.
struct DispatchGuards {
    /// Host time (std::chrono::steady_clock, nanoseconds since its epoch) after which the
    /// dispatch is stopped; 0: never. Each host thread looks at the clock once every
    /// kPollInstructions wave instructions it executes, never per instruction.
    int64_t deadlineNs = 0;
    static constexpr uint64_t kPollInstructions = 1u << 16;
    /// Checked accesses: every global, FLAT (outside the LDS and private apertures), unswizzled
    /// buffer (MUBUF) and scalar (SMEM) access must lie inside one of `memory`, [first, second)
    /// host address ranges (overlaps allowed), or be accepted by `accept`, which is asked only
    /// about accesses outside them (may be empty). The first access that is neither stops the
    /// dispatch with a MemoryFault. LDS and scratch have their own checks, always on.
    bool checkMemory = false;
    std::vector<std::pair<uint64_t, uint64_t>> memory;
    std::function<bool(uint64_t address, uint64_t bytes)> accept;
    /// Checked barriers: every work-item of a group must execute each s_barrier its group
    /// executes. The first group where one does not (its lane is off while the rest of its
    /// wave executes the barrier, its wave has ended while others wait at one, or waves wait
    /// at different ones) stops the dispatch with a BarrierDivergence. Hardware does not
    /// notice: an ended wave no longer counts at a barrier, and a barrier counts waves, not
    /// lanes or instructions.
    bool checkBarriers = false;
};

/// The first barrier divergence of a checked dispatch: the group, and two of its work-items
/// (local ids): [0] waits at a barrier (or has ended, when [1] waits), [1] did otherwise.
struct BarrierDivergence {
    enum class Stop : uint8_t { Barrier, End, Skipped };
    std::array<uint32_t, 3> groupId{};
    std::array<uint32_t, 3> localId[2]{};
    Stop stop[2] = {Stop::Barrier, Stop::Barrier};
};

/// The first access of a checked dispatch outside the memory it was given: where, what, and
/// which work-item (work-group id as the dispatch counts it, from COMPUTE_START; local id).
struct MemoryFault {
    uint64_t address = 0; ///< first byte of the access
    uint32_t bytes = 0;   ///< bytes the lane accessed
    enum class Kind : uint8_t { Read, Write, Atomic } kind = Kind::Read;
    std::array<uint32_t, 3> groupId{};
    std::array<uint32_t, 3> localId{};
    std::string instruction;   ///< mnemonic
    uint64_t kernelOffset = 0; ///< of the instruction, from COMPUTE_PGM
};

/// Result of a dispatch: empty error means success. An instruction the model does not
/// implement, a memory fault it can detect, or an invalid register state stops the
/// dispatch with an error naming it (instruction mnemonic or encoding and its address).
/// A dispatch stopped by its guards says so besides the error: `timedOut` (past
/// DispatchGuards::deadlineNs) or `fault` (a checked access outside its memory).
struct DispatchResult {
    std::string error;
    bool timedOut = false;
    std::optional<MemoryFault> fault;
    std::optional<BarrierDivergence> divergence; ///< checked barriers: what stopped it
    explicit operator bool() const { return error.empty(); }
};

class Model {
public:
    explicit Model(ModelConfig config);
    ~Model();
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    const ModelConfig& config() const;
    /// Runs every work-group of the dispatch; blocks until done. Thread-safe.
    /// `guards` (may be null): a deadline and checked accesses for this dispatch.
    DispatchResult dispatch(const DispatchState& state, DispatchStats* stats = nullptr,
                            const DispatchGuards* guards = nullptr);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace duet::gcn
