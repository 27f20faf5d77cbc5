// The interpreter's wave loop: runs a work-group's waves, hands each instruction to its family.
#include "wave_exec.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace duet::gcn::model {

// ---- Decoded-code cache ---------------------------------------------------------------------

struct Executor::Page {
    static constexpr unsigned kDwords = 256;
    Inst inst[kDwords];
    bool valid[kDwords] = {};
};

Executor::Executor(DispatchCtx& ctx, unsigned thread) : m_ctx(ctx), m_thread(thread) {}
Executor::~Executor() = default;

// Inline hit path: the same page as the previous instruction, already decoded.
inline const Inst* Executor::fetch(uint64_t pc) {
    unsigned i = (pc >> 2) & (Page::kDwords - 1);
    if ((pc >> 10) == m_lastPageKey && m_lastPage->valid[i]) [[likely]]
        return &m_lastPage->inst[i];
    return fetchSlow(pc);
}

const Inst* Executor::fetchSlow(uint64_t pc) {
    uint64_t key = pc >> 10;
    Page* page = m_lastPage;
    if (key != m_lastPageKey) {
        auto& slot = m_pages[key];
        if (!slot)
            slot = std::make_unique<Page>();
        page = m_lastPage = slot.get();
        m_lastPageKey = key;
    }
    unsigned i = (pc >> 2) & (Page::kDwords - 1);
    if (!page->valid[i]) {
        page->inst[i] = decode(reinterpret_cast<const uint32_t*>(pc));
        page->valid[i] = true;
    }
    return &page->inst[i];
}

bool Executor::fail(const Wave& w, const Inst& in, const std::string& why) {
    if (m_fault) {
        m_fault->instruction = in.name;
        m_fault->kernelOffset = w.pc - m_ctx.state->pgmAddress;
    }
    m_ctx.fail(why + " (" + in.name + ") at " + hex(w.pc) + " (kernel offset " +
                   hex(w.pc - m_ctx.state->pgmAddress) + ")",
               std::move(m_fault));
    m_fault.reset();
    return false;
}

bool Executor::poll() {
    if (m_ctx.failed.load(std::memory_order_relaxed))
        return false;
    if (m_ctx.deadlineNs && std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                    .count() > m_ctx.deadlineNs) {
        m_ctx.fail("the dispatch ran past its deadline and was stopped", {}, true);
        return false;
    }
    return true;
}

bool Executor::inMemory(uint64_t a, uint64_t bytes) {
    const auto& r = m_ctx.memory;
    auto inside = [&](size_t i) {
        return a - r[i].first < r[i].second - r[i].first && bytes <= r[i].second - a;
    };
    if (m_lastRange < r.size() && inside(m_lastRange)) [[likely]]
        return true;
    // The last range that starts at or below a (the ranges are merged: no other can hold it).
    auto it = std::upper_bound(r.begin(), r.end(), a,
                               [](uint64_t x, const auto& range) { return x < range.first; });
    if (it != r.begin() && inside(size_t(it - r.begin()) - 1)) {
        m_lastRange = size_t(it - r.begin()) - 1;
        return true;
    }
    return m_ctx.accept && *m_ctx.accept && (*m_ctx.accept)(a, bytes);
}

std::array<uint32_t, 3> Executor::localIdOf(unsigned wave, unsigned lane) const {
    const unsigned t = wave * 64 + lane; // local linear id, x fastest
    return {t % m_groupSize[0], (t / m_groupSize[0]) % m_groupSize[1],
            t / (m_groupSize[0] * m_groupSize[1])};
}

bool Executor::skippedBarrier(const Wave& w, uint64_t pc) {
    BarrierDivergence d;
    d.groupId = {m_groupId[0], m_groupId[1], m_groupId[2]};
    const uint64_t at = w.exec() & w.items, off = w.items & ~w.exec(); // neither is 0
    d.localId[0] = localIdOf(w.id, unsigned(std::countr_zero(at)));
    d.localId[1] = localIdOf(w.id, unsigned(std::countr_zero(off)));
    d.stop[0] = BarrierDivergence::Stop::Barrier;
    d.stop[1] = BarrierDivergence::Stop::Skipped;
    m_ctx.fail("barrier divergence: s_barrier at kernel offset " +
                   hex(pc - m_ctx.state->pgmAddress) + " with some of the wave's work-items off",
               {}, false, d);
    return false;
}

bool Executor::sameBarrier(unsigned nWaves) {
    // Wave 0's first work-item is the group's work-item 0; the first wave that did otherwise
    // names the other.
    const Wave& first = m_waves[0];
    for (unsigned i = 1; i < nWaves; ++i) {
        const Wave& w = m_waves[i];
        if (w.done == first.done && (w.done || w.barrierPc == first.barrierPc))
            continue;
        BarrierDivergence d;
        d.groupId = {m_groupId[0], m_groupId[1], m_groupId[2]};
        d.localId[0] = localIdOf(0, 0);
        d.localId[1] = localIdOf(i, 0);
        using Stop = BarrierDivergence::Stop;
        d.stop[0] = first.done ? Stop::End : Stop::Barrier;
        d.stop[1] = w.done ? Stop::End : Stop::Barrier;
        m_ctx.fail("barrier divergence: the waves of a work-group did not all reach one s_barrier",
                   {}, false, d);
        return false;
    }
    return true;
}

void Executor::outOfBounds(const Wave& w, unsigned lane, uint64_t a, uint64_t bytes,
                           MemoryFault::Kind kind) {
    if (m_fault)
        return;
    MemoryFault f;
    f.address = a;
    f.bytes = uint32_t(bytes);
    f.kind = kind;
    f.localId = localIdOf(w.id, lane);
    f.groupId = {m_groupId[0], m_groupId[1], m_groupId[2]};
    m_fault = std::move(f);
}

// ---- Wave and work-group loops ------------------------------------------------------------

bool Executor::runWave(Wave& w) {
    uint64_t* cls = stats.cls;
    // Loop invariants kept in locals: the stores to the counters could alias m_ctx's fields.
    const uint64_t maxInstructions = m_ctx.maxWaveInstructions ? m_ctx.maxWaveInstructions : ~0ull;
    // One compare per instruction serves the hang guard, the polls (deadline, another thread's
    // failure) and the time slice: `limit` is whichever comes first. The poll budget spans waves
    // and groups, so waves that stop at barriers every few instructions are polled too. The
    // slice gives the waves of a group independent forward progress (cl_khr_subgroups): a wave
    // spinning on a flag another wave of its group sets hands over after kSliceInstructions.
    uint64_t pollAt = w.executed + m_pollBudget;
    const uint64_t sliceEnd = m_groupWaves > 1 ? w.executed + kSliceInstructions : ~0ull;
    uint64_t limit = std::min({maxInstructions, pollAt, sliceEnd});
    struct Spend {
        uint64_t& budget;
        const uint64_t& executed;
        uint64_t from;
        ~Spend() { budget -= std::min(budget - 1, executed - from); }
    } spend{m_pollBudget, w.executed, w.executed};
    const bool tracing = m_ctx.trace && w.id == 0 && stats.workGroups == 1 && m_thread == 0;
    for (;;) {
        if (w.pc & 3) [[unlikely]] {
            m_ctx.fail("misaligned program counter " + hex(w.pc));
            return false;
        }
        const Inst& in = *fetch(w.pc);
        ++cls[in.cls];
        if (++w.executed > limit) [[unlikely]] {
            if (w.executed > maxInstructions)
                return fail(w, in,
                            "wave exceeded " + std::to_string(m_ctx.maxWaveInstructions) +
                                " instructions (ModelConfig::maxWaveInstructions)");
            if (w.executed > pollAt) {
                if (!poll())
                    return false;
                m_pollBudget = DispatchGuards::kPollInstructions;
                spend.from = w.executed;
                pollAt = w.executed + m_pollBudget;
            }
            if (w.executed > sliceEnd) {
                // End of the slice: the group's next wave runs; this instruction runs when this
                // wave's turn comes again, so it is not counted yet (nor spent, if polled here).
                --w.executed;
                --cls[in.cls];
                spend.from = std::min(spend.from, w.executed);
                return true;
            }
            limit = std::min({maxInstructions, pollAt, sliceEnd});
        }
        if (tracing) [[unlikely]]
            trace(w, in);
        w.pc += in.words * 4;
        switch (in.enc) {
        case Enc::Sopp: {
            int64_t target = int64_t(w.pc) + int64_t(in.imm) * 4;
            switch (in.op) {
            case Op::s_endpgm:
                w.done = true;
                return true;
            case Op::s_barrier:
                if (m_ctx.checkBarriers && w.exec() != w.items) [[unlikely]] {
                    if (w.exec() & w.items)
                        return skippedBarrier(w, w.pc - in.words * 4);
                    // None of its work-items executes this barrier (the compiler did not branch
                    // around it): the wave goes on as if it were not there, and where it stops
                    // next is compared with the others.
                    continue;
                }
                if (m_groupWaves > 1) {
                    w.atBarrier = true;
                    w.barrierPc = w.pc;
                    return true;
                }
                continue;
            case Op::s_branch:
                w.pc = target;
                continue;
            case Op::s_cbranch_scc0:
                if (!w.scc)
                    w.pc = target;
                continue;
            case Op::s_cbranch_scc1:
                if (w.scc)
                    w.pc = target;
                continue;
            case Op::s_cbranch_vccz:
                if (w.vcc() == 0)
                    w.pc = target;
                continue;
            case Op::s_cbranch_vccnz:
                if (w.vcc() != 0)
                    w.pc = target;
                continue;
            case Op::s_cbranch_execz:
                if (w.exec() == 0)
                    w.pc = target;
                continue;
            case Op::s_cbranch_execnz:
                if (w.exec() != 0)
                    w.pc = target;
                continue;
            case Op::s_waitcnt:
                // VM_CNT is SIMM16[3:0] and [15:14] on gfx9.
                if ((in.imm & 0xc00f) == 0)
                    waitVectorMemory();
                continue;
            case Op::s_sleep:
                // A wave that sleeps (a polite spin loop) lets the group's other waves run.
                if (m_groupWaves > 1)
                    return true;
                continue;
            case Op::s_nop:
            case Op::s_setprio:
            case Op::s_icache_inv:
            case Op::s_incperflevel:
            case Op::s_decperflevel:
            case Op::s_ttracedata:
            case Op::s_wakeup:
                continue;
            case Op::s_trap:
                w.pc -= in.words * 4;
                return fail(w, in, "kernel executed s_trap " + std::to_string(in.imm & 0xff));
            default:
                w.pc -= in.words * 4;
                return fail(w, in, "instruction not implemented by the GCN model");
            }
        }
        case Enc::Sop1:
        case Enc::Sop2:
        case Enc::Sopk:
        case Enc::Sopc: {
            WaveExec x(*this, w, in, 0);
            x.salu();
            if (!x.err.empty()) {
                w.pc -= in.words * 4;
                return fail(w, in,
                            x.err == "not implemented"
                                ? "instruction not implemented by the GCN model"
                                : x.err);
            }
            continue;
        }
        default:
            break;
        }
        if (in.op == Op::Unimplemented) {
            w.pc -= in.words * 4;
            return fail(w, in, "instruction not implemented by the GCN model");
        }
        if (!runVector(w, in))
            return false;
    }
}

// VALU, VOPC and memory instructions. A VALU instruction that ran before goes straight to its
// family (Inst::valuFamily, one switch); its first execution finds the family (WaveExec::valu).
__attribute__((always_inline)) inline bool Executor::runVector(Wave& w, const Inst& in) {
    const uint64_t exec = w.exec();
    WaveExec x(*this, w, in, exec);
    auto countValu = [&] {
        ++stats.valuInstructions;
        // std::popcount is a libgcc call without POPCNT in the baseline ISA.
        stats.valuLaneOps += exec == ~0ull ? 64 : std::popcount(exec);
    };
    bool ok = true;
    switch (in.valuFamily) {
    case WaveExec::kValuF32:
        countValu();
        ok = x.valuF32();
        break;
    case WaveExec::kValuInt32:
        countValu();
        ok = x.valuInt32();
        break;
    case WaveExec::kValuBits:
        countValu();
        ok = x.valuBits();
        break;
    case WaveExec::kValuMove:
        countValu();
        ok = x.valuMove();
        break;
    case WaveExec::kValuConvert:
        countValu();
        ok = x.valuConvert();
        break;
    case WaveExec::kValuF64:
        countValu();
        ok = x.valuF64();
        break;
    case WaveExec::kValuF16:
        countValu();
        ok = x.valuF16();
        break;
    case WaveExec::kValuInt16:
        countValu();
        ok = x.valuInt16();
        break;
    case WaveExec::kValuPacked:
        countValu();
        ok = x.valuPacked();
        break;
    case WaveExec::kValuCmp:
        countValu();
        ok = x.vcmp();
        break;
    default: // not a VALU instruction, or its first execution
        switch (in.enc) {
        case Enc::Vop1:
        case Enc::Vop2:
        case Enc::Vopc:
        case Enc::Vop3:
        case Enc::Vop3p:
            countValu();
            ok = x.valu();
            break;
        case Enc::Smem:
            x.smem();
            break;
        case Enc::Ds:
            x.ds();
            break;
        case Enc::Mubuf:
        case Enc::Flat:
            x.vmem();
            break;
        default:
            ok = false;
            break;
        }
    }
    if (!ok || !x.err.empty()) {
        w.pc -= in.words * 4;
        return fail(w, in,
                    ok ? x.err : std::string("instruction not implemented by the GCN model"));
    }
    return true;
}

void Executor::trace(const Wave& w, const Inst& in) {
    // Printed before the instruction runs, so the previous one's result is shown first: its
    // destination VGPR and the next (both halves of a 64-bit result) in the traced lane.
    const unsigned lane = m_ctx.traceLane;
    if (m_traceVdst >= 0)
        fprintf(stderr, "[gcn]        => v%d=%08x v%d=%08x\n", m_traceVdst,
                w.v[m_traceVdst * 64 + lane], m_traceVdst + 1,
                m_traceVdst < 255 ? w.v[(m_traceVdst + 1) * 64 + lane] : 0u);
    const bool valu =
        in.enc == Enc::Vop1 || in.enc == Enc::Vop2 || in.enc == Enc::Vop3 || in.enc == Enc::Vop3p;
    const bool toSgpr = in.op == Op::v_readlane_b32 || in.op == Op::v_readfirstlane_b32 ||
                        in.op == Op::v_cmp || in.op == Op::v_cmp_class;
    const bool memory = in.enc == Enc::Mubuf || in.enc == Enc::Flat || in.enc == Enc::Ds;
    const bool writesVgpr = (valu && !toSgpr) || memory;
    m_traceVdst = writesVgpr ? int(in.vdst) : -1;
    fprintf(stderr, "[gcn] %6llx %-24s words=%u exec=%016llx scc=%d vcc=%016llx",
            static_cast<unsigned long long>(w.pc - m_ctx.state->pgmAddress), in.name, in.words,
            static_cast<unsigned long long>(w.exec()), int(w.scc),
            static_cast<unsigned long long>(w.vcc()));
    for (int i = 0; i < 3; ++i)
        if (in.src[i] >= opnd::kVgpr)
            fprintf(stderr, " v%u=%08x", in.src[i] - opnd::kVgpr,
                    w.v[(in.src[i] - opnd::kVgpr) * 64 + lane]);
        else if (in.src[i] < 102)
            fprintf(stderr, " s%u=%08x", in.src[i], w.s[in.src[i]]);
    fprintf(stderr, "\n");
}

bool Executor::runGroup(const uint32_t groupId[3], const uint32_t size[3]) {
    const DispatchState& st = *m_ctx.state;
    const unsigned items = size[0] * size[1] * size[2];
    const unsigned nWaves = (items + 63) / 64;
    m_groupWaves = nWaves;
    for (int d = 0; d < 3; ++d)
        m_groupId[d] = groupId[d], m_groupSize[d] = std::max(1u, size[d]);
    if (m_waves.size() < nWaves) {
        m_waves.resize(nWaves);
        m_vgprs.assign(size_t(nWaves) * 256 * 64, 0);
    }
    m_ldsSize = m_ctx.ldsBytes;
    m_lds.assign(m_ldsSize, 0);
    const uint32_t rsrc2 = st.pgmRsrc2;
    const unsigned tidigCnt = (rsrc2 >> 11) & 3;
    for (unsigned i = 0; i < nWaves; ++i) {
        Wave& w = m_waves[i];
        memset(w.s, 0, sizeof w.s);
        w.v = m_vgprs.data() + size_t(i) * 256 * 64;
        w.pc = st.pgmAddress;
        w.mode = m_ctx.mode;
        w.scc = false;
        w.done = w.atBarrier = false;
        w.executed = 0;
        w.id = i;
        w.scratchSlot = m_thread * nWaves + i;
        unsigned lanes = std::min(64u, items - i * 64);
        w.items = lanes == 64 ? ~0ull : (1ull << lanes) - 1;
        w.setExec(w.items);
        unsigned sg = 0;
        for (; sg < m_ctx.userSgprs; ++sg)
            w.s[sg] = st.userData[sg];
        if ((rsrc2 >> 7) & 1)
            w.s[sg++] = groupId[0];
        if ((rsrc2 >> 8) & 1)
            w.s[sg++] = groupId[1];
        if ((rsrc2 >> 9) & 1)
            w.s[sg++] = groupId[2];
        if ((rsrc2 >> 10) & 1)
            w.s[sg++] = nWaves; // work-group info: wave count
        if (rsrc2 & 1)
            w.s[sg++] = uint32_t(uint64_t(w.scratchSlot) * m_ctx.scratchWaveBytes);
        uint32_t* v0 = w.vrow(0);
        uint32_t* v1 = w.vrow(1);
        uint32_t* v2 = w.vrow(2);
        // Work-item ids of lane l (item t = i * 64 + l; lanes past the group's end repeat the
        // last item), counted up from the wave's first item: divisions only once per wave.
        const unsigned t0 = i * 64, last = items - 1;
        unsigned x = t0 % size[0], y = (t0 / size[0]) % size[1], z = t0 / (size[0] * size[1]);
        const unsigned lastX = last % size[0], lastY = (last / size[0]) % size[1],
                       lastZ = last / (size[0] * size[1]);
        for (unsigned l = 0; l < 64; ++l) {
            const bool past = t0 + l >= items;
            v0[l] = past ? lastX : x;
            if (tidigCnt >= 1)
                v1[l] = past ? lastY : y;
            if (tidigCnt >= 2)
                v2[l] = past ? lastZ : z;
            if (++x == size[0]) {
                x = 0;
                if (++y == size[1])
                    y = 0, ++z;
            }
        }
    }
    stats.wavefronts += nWaves;
    ++stats.workGroups;
    // Round-robin: run each wave to its next barrier, its end or the end of its time slice
    // (runWave); release the barrier when every wave still running has reached it.
    for (;;) {
        unsigned running = 0, waiting = 0;
        for (unsigned i = 0; i < nWaves; ++i) {
            Wave& w = m_waves[i];
            if (w.done || w.atBarrier)
                continue;
            if (!runWave(w))
                return false;
            if (m_ctx.failed.load(std::memory_order_relaxed))
                return false;
        }
        for (unsigned i = 0; i < nWaves; ++i) {
            if (m_waves[i].done)
                continue;
            ++running;
            waiting += m_waves[i].atBarrier;
        }
        if (running == 0)
            return true;
        if (waiting == running) {
            if (m_ctx.checkBarriers && !sameBarrier(nWaves)) [[unlikely]]
                return false;
            for (unsigned i = 0; i < nWaves; ++i)
                m_waves[i].atBarrier = false;
        }
    }
}

} // namespace duet::gcn::model
