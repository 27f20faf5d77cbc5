// PM4 builder and decoder for gfx9 compute queues.
#include "devices/gcn/pm4.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

namespace duet::gcn::pm4 {
namespace {

constexpr uint32_t kShDwordBase = kShRegBase / 4, kShDwordEnd = kShRegEnd / 4;

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

void Builder::setShRegs(uint32_t reg, std::span<const uint32_t> values) {
    m_dwords.push_back(header(kSetShReg, uint32_t(values.size()) + 1));
    m_dwords.push_back(reg / 4 - kShDwordBase);
    m_dwords.insert(m_dwords.end(), values.begin(), values.end());
}

void Builder::dispatchDirect(uint32_t dimX, uint32_t dimY, uint32_t dimZ, uint32_t initiator) {
    m_dwords.insert(m_dwords.end(), {header(kDispatchDirect, 4), dimX, dimY, dimZ, initiator});
}

void Builder::acquireMem(uint32_t coherCntl) {
    // CP_COHER_CNTL, CP_COHER_SIZE (256-byte units), CP_COHER_SIZE_HI, CP_COHER_BASE (address
    // >> 8), CP_COHER_BASE_HI, POLL_INTERVAL: the whole address space, as drivers flush.
    m_dwords.insert(m_dwords.end(),
                    {header(kAcquireMem, 6), coherCntl, 0xffffffffu, 0xffffffu, 0u, 0u, 0x0au});
}

void Builder::releaseMemFence(uint64_t address, uint64_t value, bool value64) {
    const uint32_t event = kCacheFlushAndInvTsEvent | (kEventIndexEop << 8) | kEopTcActionEn |
                           kEopTcl1ActionEn | kEopTcWbActionEn;
    const uint32_t sel = ((value64 ? kDataSel64 : kDataSel32) << 29) | (kIntSelNone << 24);
    m_dwords.insert(m_dwords.end(),
                    {header(kReleaseMem, 7), event, sel, uint32_t(address), uint32_t(address >> 32),
                     uint32_t(value), uint32_t(value >> 32), 0u});
}

void Builder::eventWrite(uint32_t eventType, uint32_t eventIndex) {
    m_dwords.insert(m_dwords.end(), {header(kEventWrite, 1), eventType | (eventIndex << 8)});
}

void Builder::nop(uint32_t bodyDwords) {
    if (bodyDwords == 0)
        bodyDwords = 1;
    m_dwords.push_back(header(kNop, bodyDwords));
    m_dwords.insert(m_dwords.end(), bodyDwords, 0u);
}

void Builder::dispatch(const DispatchState& s, unsigned userSgprs) {
    const uint64_t pgm = s.pgmAddress >> 8;
    const uint32_t pgmRegs[2] = {uint32_t(pgm), uint32_t(pgm >> 32)};
    setShRegs(kComputePgmLo, pgmRegs);
    const uint32_t rsrc[2] = {s.pgmRsrc1, s.pgmRsrc2};
    setShRegs(kComputePgmRsrc1, rsrc);
    if (s.pgmRsrc3)
        setShReg(kComputePgmRsrc3, s.pgmRsrc3);
    setShReg(kComputeResourceLimits, s.resourceLimits);
    setShReg(kComputeTmpringSize, s.tmpringSize);
    // START_X/Y/Z and NUM_THREAD_X/Y/Z are adjacent: one packet.
    const uint32_t startAndThreads[6] = {s.start[0],     s.start[1],     s.start[2],
                                         s.numThread[0], s.numThread[1], s.numThread[2]};
    setShRegs(kComputeStartX, startAndThreads);
    if (userSgprs)
        setShRegs(kComputeUserData0,
                  std::span<const uint32_t>(s.userData.data(), std::min<size_t>(userSgprs, 16)));
    dispatchDirect(s.dim[0], s.dim[1], s.dim[2], s.initiator);
}

DecodeResult decode(std::span<const uint32_t> dw) {
    DecodeResult r;
    auto fail = [&](size_t at, std::string why) {
        DecodeResult f;
        f.error = "PM4 stream, dword " + std::to_string(at) + ": " + why;
        return f;
    };
    // The SH register file, as the CP keeps it between packets.
    std::array<uint32_t, kShDwordEnd - kShDwordBase> regs{};
    auto reg = [&](uint32_t byteAddress) -> uint32_t& {
        return regs[byteAddress / 4 - kShDwordBase];
    };
    size_t pos = 0;
    while (pos < dw.size()) {
        const uint32_t h = dw[pos];
        const uint32_t type = h >> 30;
        if (type == 2) { // a one-dword filler
            ++pos;
            continue;
        }
        if (type != 3)
            return fail(pos, "type-" + std::to_string(type) + " packet (" + hex(h) +
                                 ") is not accepted on a compute queue");
        if (h & 1)
            return fail(pos, "predicated packet (" + hex(h) + ") is not supported");
        const uint32_t opcode = (h >> 8) & 0xff;
        const size_t body = ((h >> 16) & 0x3fff) + 1;
        if (body > dw.size() - pos - 1)
            return fail(pos, "packet " + hex(opcode) + " needs " + std::to_string(body) +
                                 " dwords but the stream ends after " +
                                 std::to_string(dw.size() - pos - 1));
        const uint32_t* p = dw.data() + pos + 1;
        Command c;
        c.dwordOffset = pos;
        switch (opcode) {
        case kNop:
            break;
        case kSetShReg: {
            const uint32_t first = kShDwordBase + (p[0] & 0xffff);
            const size_t n = body - 1;
            if (n == 0)
                return fail(pos, "SET_SH_REG writes no register");
            if (first + n > kShDwordEnd)
                return fail(pos, "SET_SH_REG of " + std::to_string(n) + " registers at " +
                                     hex(first * 4) + " runs past the SH register space");
            for (size_t i = 0; i < n; ++i)
                regs[first - kShDwordBase + i] = p[1 + i];
            break;
        }
        case kDispatchDirect: {
            if (body != 4)
                return fail(pos, "DISPATCH_DIRECT has " + std::to_string(body) +
                                     " body dwords, expected 4");
            DispatchState& s = c.dispatch;
            s.pgmAddress = ((uint64_t(reg(kComputePgmHi) & 0xff) << 32) | reg(kComputePgmLo)) << 8;
            s.pgmRsrc1 = reg(kComputePgmRsrc1);
            s.pgmRsrc2 = reg(kComputePgmRsrc2);
            s.pgmRsrc3 = reg(kComputePgmRsrc3);
            for (unsigned i = 0; i < 16; ++i)
                s.userData[i] = reg(kComputeUserData0 + 4 * i);
            for (unsigned d = 0; d < 3; ++d) {
                s.numThread[d] = reg(kComputeNumThreadX + 4 * d);
                s.start[d] = reg(kComputeStartX + 4 * d);
                s.dim[d] = p[d];
            }
            s.tmpringSize = reg(kComputeTmpringSize);
            s.resourceLimits = reg(kComputeResourceLimits);
            s.initiator = p[3];
            if (!(s.initiator & kComputeShaderEn))
                return fail(pos, "DISPATCH_DIRECT without COMPUTE_SHADER_EN");
            if (s.pgmAddress == 0)
                return fail(pos, "DISPATCH_DIRECT before COMPUTE_PGM_LO/HI were set");
            for (unsigned d = 0; d < 3; ++d)
                if ((s.numThread[d] & 0xffff) == 0)
                    return fail(pos, "DISPATCH_DIRECT with COMPUTE_NUM_THREAD_" +
                                         std::string(1, char('X' + d)) + " = 0");
            c.kind = Command::Kind::Dispatch;
            r.commands.push_back(c);
            break;
        }
        case kAcquireMem:
            if (body != 6)
                return fail(pos, "ACQUIRE_MEM has " + std::to_string(body) +
                                     " body dwords, expected 6 (gfx9)");
            c.kind = Command::Kind::Acquire;
            c.value = p[0];
            r.commands.push_back(c);
            break;
        case kReleaseMem: {
            if (body != 7)
                return fail(pos, "RELEASE_MEM has " + std::to_string(body) +
                                     " body dwords, expected 7 (gfx9)");
            const uint32_t dataSel = p[1] >> 29;
            if (dataSel == kDataSelNone)
                break; // a pure cache action: nothing to write
            if (dataSel > kDataSelGpuClock)
                return fail(pos, "RELEASE_MEM DATA_SEL " + std::to_string(dataSel) +
                                     " is not supported");
            c.kind = Command::Kind::Fence;
            c.fence.dataSel = dataSel;
            c.fence.address = uint64_t(p[2]) | (uint64_t(p[3]) << 32);
            c.fence.value = uint64_t(p[4]) | (uint64_t(p[5]) << 32);
            const uint64_t align = dataSel == kDataSel32 ? 4 : 8;
            if (c.fence.address == 0 || c.fence.address % align)
                return fail(pos, "RELEASE_MEM address " + hex(c.fence.address) +
                                     " is null or misaligned");
            r.commands.push_back(c);
            break;
        }
        case kEventWrite:
            c.kind = Command::Kind::Event;
            c.value = p[0] & 0xfff;
            r.commands.push_back(c);
            break;
        default:
            return fail(pos, "packet opcode " + hex(opcode) + " is not supported by this sink");
        }
        pos += 1 + body;
    }
    return r;
}

} // namespace duet::gcn::pm4
