// The software GCN model's dispatch: COMPUTE_* register state to work-groups on host threads,
// occupancy, and the statistics a dispatch reports.
#include "model.hpp"

#include "wave.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace duet::gcn {

struct Model::Impl {
    ModelConfig config;
};

Model::Model(ModelConfig config) : m_impl(std::make_unique<Impl>()) {
    if (config.hostThreads == 0)
        config.hostThreads = std::max(1u, std::thread::hardware_concurrency());
    if (config.computeUnits == 0)
        config.computeUnits = 1;
    m_impl->config = config;
}
Model::~Model() = default;

const ModelConfig& Model::config() const {
    return m_impl->config;
}

double DispatchStats::modelledSeconds(unsigned computeUnits, double clockHz) const {
    uint64_t cycles = ldsBankConflictCycles;
    for (size_t c = 0; c < wavefrontInstructions.size(); ++c) {
        const InstClass k = static_cast<InstClass>(c);
        const bool vector = k == InstClass::Valu || k == InstClass::Vmem || k == InstClass::Flat ||
                            k == InstClass::Lds;
        cycles += wavefrontInstructions[c] * (vector ? 4 : 1);
    }
    const uint64_t simds =
        std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(computeUnits) * 4, wavefronts));
    const double compute = double(cycles) / double(simds) / clockHz;
    const double memory = double(vmemBytes) / kModelledBandwidth;
    return std::max(compute, memory) + kModelledLaunchSeconds;
}

std::string DispatchStats::summary() const {
    std::string out;
    char line[256];
    snprintf(line, sizeof line, "work-groups %llu, wavefronts %llu, wave instructions %llu\n",
             static_cast<unsigned long long>(workGroups),
             static_cast<unsigned long long>(wavefronts),
             static_cast<unsigned long long>(totalInstructions()));
    out += line;
    out += "  by class:";
    for (size_t c = 0; c < wavefrontInstructions.size(); ++c) {
        if (!wavefrontInstructions[c])
            continue;
        snprintf(line, sizeof line, " %s %llu", instClassName(static_cast<InstClass>(c)),
                 static_cast<unsigned long long>(wavefrontInstructions[c]));
        out += line;
    }
    snprintf(line, sizeof line,
             "\n  VALU lane utilisation %.1f%% (%llu lane ops / %llu instructions)\n"
             "  LDS bank conflict cycles %llu\n"
             "  occupancy %u waves/SIMD (limit: %s; %u VGPRs, %u SGPRs, %u bytes LDS per group)\n"
             "  model time %.3f ms on %u host threads (%.2f M wave-instructions/s)\n",
             100.0 * laneUtilisation(), static_cast<unsigned long long>(valuLaneOps),
             static_cast<unsigned long long>(valuInstructions),
             static_cast<unsigned long long>(ldsBankConflictCycles), wavesPerSimd,
             occupancyLimit.c_str(), vgprs, sgprs, ldsBytesPerGroup, seconds * 1e3, hostThreads,
             seconds > 0 ? double(totalInstructions()) / seconds / 1e6 : 0.0);
    out += line;
    return out;
}

DispatchResult Model::dispatch(const DispatchState& st, DispatchStats* statsOut,
                               const DispatchGuards* guards) {
    using namespace model;
    auto t0 = std::chrono::steady_clock::now();
    DispatchResult result;
    DispatchCtx ctx;
    ctx.state = &st;
    ctx.vgprs = ((st.pgmRsrc1 & 63) + 1) * 4;
    ctx.sgprs = std::min(102u, (((st.pgmRsrc1 >> 6) & 15) + 1) * 8);
    ctx.userSgprs = (st.pgmRsrc2 >> 1) & 31;
    ctx.ldsBytes = ((st.pgmRsrc2 >> 15) & 0x1ff) * 512;
    // MODE: FP_ROUND and FP_DENORM from FLOAT_MODE, DX10_CLAMP (bit 8), IEEE (bit 9).
    ctx.mode = ((st.pgmRsrc1 >> 12) & 0xff) | ((st.pgmRsrc1 >> 21) & 1) << 8 |
               ((st.pgmRsrc1 >> 23) & 1) << 9;
    ctx.scratchSlots = st.tmpringSize & 0xfff;
    ctx.scratchWaveBytes = uint64_t((st.tmpringSize >> 12) & 0x1fff) * 1024;
    ctx.scratchBase = st.scratchBase;
    const bool scratch = st.pgmRsrc2 & 1;
    static const bool traceEnv = [] {
        const char* e = std::getenv("DUET_GCN_TRACE");
        return e && *e && *e != '0';
    }();
    ctx.trace = m_impl->config.trace || traceEnv;
    static const char* traceLaneEnv = std::getenv("DUET_GCN_TRACE_LANE");
    ctx.traceLane = (traceLaneEnv ? unsigned(std::strtoul(traceLaneEnv, nullptr, 0))
                                  : m_impl->config.traceLane) &
                    63u;
    ctx.maxWaveInstructions = m_impl->config.maxWaveInstructions;
    if (guards) {
        ctx.deadlineNs = guards->deadlineNs;
        ctx.checkMemory = guards->checkMemory;
        ctx.checkBarriers = guards->checkBarriers;
        if (guards->checkMemory) {
            // Sorted and merged, so that one binary search finds the only range that can hold
            // an address (Executor::inMemory).
            for (auto [lo, hi] : guards->memory)
                if (hi > lo)
                    ctx.memory.emplace_back(lo, hi);
            std::sort(ctx.memory.begin(), ctx.memory.end());
            size_t n = 0;
            for (size_t i = 0; i < ctx.memory.size(); ++i) {
                if (n && ctx.memory[i].first <= ctx.memory[n - 1].second)
                    ctx.memory[n - 1].second =
                        std::max(ctx.memory[n - 1].second, ctx.memory[i].second);
                else
                    ctx.memory[n++] = ctx.memory[i];
            }
            ctx.memory.resize(n);
            ctx.accept = &guards->accept;
        }
    }

    uint32_t size[3];
    for (int d = 0; d < 3; ++d)
        size[d] = st.numThread[d] & 0xffff;
    const bool threadDims = (st.initiator >> 5) & 1;
    uint32_t groups[3];
    for (int d = 0; d < 3; ++d)
        groups[d] = threadDims ? (size[d] ? (st.dim[d] + size[d] - 1) / size[d] : 0) : st.dim[d];
    const unsigned items = size[0] * size[1] * size[2];
    const unsigned wavesPerGroup = (items + 63) / 64;

    auto fail = [&](std::string why) {
        result.error = std::move(why);
        return result;
    };
    if (st.pgmAddress == 0 || (st.pgmAddress & 0xff))
        return fail("COMPUTE_PGM_LO/HI: no 256-byte aligned program address");
    if (items == 0 || items > 1024)
        return fail("work-group size " + std::to_string(items) + " outside 1..1024");
    if (ctx.userSgprs > 16)
        return fail("USER_SGPR count above 16");
    if (ctx.ldsBytes > 65536)
        return fail("LDS_SIZE above 64 KiB");
    if ((st.pgmRsrc2 >> 11 & 3) == 3)
        return fail("TIDIG_COMP_CNT 3 is reserved");
    if (ctx.mode & 0xf)
        return fail("non-default float round mode (FLOAT_MODE) not modelled");
    const unsigned systemSgprs = ((st.pgmRsrc2 >> 7) & 1) + ((st.pgmRsrc2 >> 8) & 1) +
                                 ((st.pgmRsrc2 >> 9) & 1) + ((st.pgmRsrc2 >> 10) & 1) + scratch;
    if (ctx.userSgprs + systemSgprs > ctx.sgprs)
        return fail("user and system SGPRs (" + std::to_string(ctx.userSgprs + systemSgprs) +
                    ") exceed the kernel's " + std::to_string(ctx.sgprs) + " SGPRs");

    const uint64_t totalGroups = uint64_t(groups[0]) * groups[1] * groups[2];
    unsigned threads = std::max(1u, m_impl->config.hostThreads);
    threads = unsigned(std::min<uint64_t>(threads, std::max<uint64_t>(1, totalGroups)));
    if (scratch) {
        if (ctx.scratchWaveBytes == 0)
            return fail("SCRATCH_EN without COMPUTE_TMPRING_SIZE.WAVESIZE");
        if (ctx.scratchSlots < wavesPerGroup)
            return fail("COMPUTE_TMPRING_SIZE.WAVES (" + std::to_string(ctx.scratchSlots) +
                        ") below the waves of one work-group (" + std::to_string(wavesPerGroup) +
                        ")");
        threads = std::min(threads, ctx.scratchSlots / wavesPerGroup);
    }

    std::atomic<uint64_t> next{0};
    std::vector<std::unique_ptr<Executor>> executors;
    for (unsigned t = 0; t < threads; ++t)
        executors.push_back(std::make_unique<Executor>(ctx, t));
    auto work = [&](unsigned t) {
        Executor& ex = *executors[t];
        for (;;) {
            uint64_t g = next.fetch_add(1, std::memory_order_relaxed);
            if (g >= totalGroups || ctx.failed.load(std::memory_order_relaxed))
                return;
            uint32_t local[3] = {uint32_t(g % groups[0]), uint32_t((g / groups[0]) % groups[1]),
                                 uint32_t(g / (uint64_t(groups[0]) * groups[1]))};
            uint32_t id[3], gsize[3];
            for (int d = 0; d < 3; ++d) {
                id[d] = st.start[d] + local[d];
                gsize[d] = size[d];
                if (threadDims && uint64_t(local[d] + 1) * size[d] > st.dim[d])
                    gsize[d] = st.dim[d] - local[d] * size[d]; // partial work-group
            }
            if (!ex.runGroup(id, gsize))
                return;
        }
    };
    if (threads == 1) {
        work(0);
    } else {
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back(work, t);
        for (auto& th : pool)
            th.join();
    }
    if (ctx.failed) {
        result.error = ctx.error;
        result.timedOut = ctx.timedOut;
        result.fault = ctx.fault;
        result.divergence = ctx.divergence;
    }

    if (statsOut) {
        DispatchStats s;
        for (auto& ex : executors) {
            for (size_t c = 0; c < s.wavefrontInstructions.size(); ++c)
                s.wavefrontInstructions[c] += ex->stats.cls[c];
            s.valuLaneOps += ex->stats.valuLaneOps;
            s.valuInstructions += ex->stats.valuInstructions;
            s.ldsBankConflictCycles += ex->stats.ldsConflictCycles;
            s.vmemBytes += ex->stats.vmemBytes;
            s.workGroups += ex->stats.workGroups;
            s.wavefronts += ex->stats.wavefronts;
        }
        s.vgprs = ctx.vgprs;
        s.sgprs = ctx.sgprs;
        s.ldsBytesPerGroup = ctx.ldsBytes;
        Occupancy o = computeOccupancy(ctx.vgprs, ctx.sgprs, ctx.ldsBytes, items);
        s.wavesPerSimd = o.wavesPerSimd;
        s.occupancyLimit = o.limit;
        s.hostThreads = threads;
        s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        *statsOut = std::move(s);
    }
    return result;
}

} // namespace duet::gcn
