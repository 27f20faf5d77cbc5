// PM4 command streams for a gfx9 compute queue: one builder (type-3 packets: SET_SH_REG,
// DISPATCH_DIRECT, ACQUIRE_MEM, RELEASE_MEM, EVENT_WRITE) and the decoder the software sink
// uses to walk the very same dwords. Register offsets and packet layouts are gfx9's
// (AMD's soc15 register headers, AMDGPUUsage, the Vega ISA guide); no hardware needed.
#pragma once

#include "devices/gcn/model/model.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace duet::gcn::pm4 {

/// Type-3 packet opcodes.
enum Opcode : uint32_t {
    kNop = 0x10,
    kDispatchDirect = 0x15,
    kEventWrite = 0x46,
    kReleaseMem = 0x49,
    kAcquireMem = 0x58,
    kSetShReg = 0x76,
};

/// SH registers by byte address (gfx9); SET_SH_REG names them by dword index from kShRegBase.
enum Register : uint32_t {
    kShRegBase = 0xB000, ///< dword 0x2C00: first SH register
    kShRegEnd = 0xC000,  ///< dword 0x3000: one past the last
    kComputeDispatchInitiator = 0xB800,
    kComputeDimX = 0xB804,
    kComputeStartX = 0xB810,
    kComputeNumThreadX = 0xB81C,
    kComputePgmLo = 0xB830,
    kComputePgmHi = 0xB834,
    kComputePgmRsrc1 = 0xB848,
    kComputePgmRsrc2 = 0xB84C,
    kComputeResourceLimits = 0xB854,
    kComputeStaticThreadMgmtSe0 = 0xB858,
    kComputeTmpringSize = 0xB860,
    kComputePgmRsrc3 = 0xB8B4, ///< gfx90a+; absent on gfx900, so written only when non-zero
    kComputeUserData0 = 0xB900,
};

/// COMPUTE_DISPATCH_INITIATOR bits.
enum Initiator : uint32_t {
    kComputeShaderEn = 1u << 0,
    kPartialTgEn = 1u << 1,
    kForceStartAt000 = 1u << 2,
    kUseThreadDimensions = 1u << 5, ///< DIM_X/Y/Z count work-items, not work-groups
    kOrderMode = 1u << 6,
};

/// CP_COHER_CNTL bits for ACQUIRE_MEM (gfx9).
enum CoherCntl : uint32_t {
    kTcWbActionEna = 1u << 18,
    kTcl1ActionEna = 1u << 22,
    kTcActionEna = 1u << 23,
    kShKcacheActionEna = 1u << 27,
    kShIcacheActionEna = 1u << 29,
    /// What a kernel launch needs: instruction, scalar (K$), vector L1 and L2 caches coherent
    /// with memory the host wrote (kernargs, code, buffers).
    kCoherAllCaches =
        kShIcacheActionEna | kShKcacheActionEna | kTcActionEna | kTcl1ActionEna | kTcWbActionEna,
};

/// RELEASE_MEM / EVENT_WRITE event types and fields (gfx9).
enum Event : uint32_t {
    kCsPartialFlush = 0x07,
    kCacheFlushAndInvTsEvent = 0x14,
    kEventIndexPartialFlush = 4,
    kEventIndexEop = 5,
    kEopTcWbActionEn = 1u << 15,
    kEopTcl1ActionEn = 1u << 16,
    kEopTcActionEn = 1u << 17,
    kDataSelNone = 0,
    kDataSel32 = 1,
    kDataSel64 = 2,
    kDataSelGpuClock = 3,
    kIntSelNone = 0,
};

/// A type-3 header: `count` is the number of body dwords minus one; the shader-type bit marks
/// compute packets, as a driver sets it on compute queues.
constexpr uint32_t header(uint32_t opcode, uint32_t bodyDwords) {
    return (3u << 30) | (((bodyDwords - 1) & 0x3fff) << 16) | ((opcode & 0xff) << 8) | (1u << 1);
}

/// Builds one command buffer. Not thread-safe; reuse it with clear() to keep allocations.
class Builder {
public:
    void clear() { m_dwords.clear(); }
    const std::vector<uint32_t>& dwords() const { return m_dwords; }

    /// SET_SH_REG of consecutive registers starting at byte address `reg`.
    void setShRegs(uint32_t reg, std::span<const uint32_t> values);
    void setShReg(uint32_t reg, uint32_t value) { setShRegs(reg, {&value, 1}); }
    void dispatchDirect(uint32_t dimX, uint32_t dimY, uint32_t dimZ, uint32_t initiator);
    /// ACQUIRE_MEM over the whole address space with the given CP_COHER_CNTL actions.
    void acquireMem(uint32_t coherCntl);
    /// RELEASE_MEM at end of pipe after flushing L2/L1: writes `value` (32 or 64 bits) to
    /// `address` once every earlier dispatch finished — the fence a queue waits on.
    void releaseMemFence(uint64_t address, uint64_t value, bool value64);
    void eventWrite(uint32_t eventType, uint32_t eventIndex);
    void nop(uint32_t bodyDwords);

    /// Everything one dispatch programs, in a driver's order: PGM_LO/HI, RSRC1/2 (and RSRC3
    /// when non-zero), TMPRING_SIZE, RESOURCE_LIMITS, START_X/Y/Z, NUM_THREAD_X/Y/Z,
    /// USER_DATA_0.. (`userSgprs` of them), then DISPATCH_DIRECT.
    void dispatch(const DispatchState& state, unsigned userSgprs);

private:
    std::vector<uint32_t> m_dwords;
};

/// A RELEASE_MEM (or EVENT_WRITE_EOP-style) memory write the sink must perform.
struct FenceWrite {
    uint64_t address = 0;
    uint64_t value = 0;
    uint32_t dataSel = kDataSel32; ///< kDataSel32, kDataSel64 or kDataSelGpuClock
};

/// One command the decoder found, in stream order.
struct Command {
    enum class Kind : uint8_t { Dispatch, Fence, Acquire, Event } kind = Kind::Dispatch;
    size_t dwordOffset = 0; ///< where its packet starts
    DispatchState dispatch; ///< Kind::Dispatch: the register state at DISPATCH_DIRECT
    FenceWrite fence;       ///< Kind::Fence
    uint32_t value = 0;     ///< Acquire: CP_COHER_CNTL; Event: EVENT_TYPE | EVENT_INDEX << 8
};

struct DecodeResult {
    std::string error; ///< empty on success; names the packet and dword offset otherwise
    std::vector<Command> commands;
    explicit operator bool() const { return error.empty(); }
};

/// Walks a stream: keeps the SH register file SET_SH_REG writes, yields a DispatchState at
/// every DISPATCH_DIRECT, and the fences, cache actions and events. Rejects what a gfx9
/// compute queue would not accept or what this runtime never emits (type-0/1 packets,
/// predicated packets, unknown opcodes, truncated packets, registers outside SH space).
DecodeResult decode(std::span<const uint32_t> dwords);

} // namespace duet::gcn::pm4
