// The hooks checked and cancellable CPU kernels call (guards.hpp): leave the work-group by
// longjmp back to runGuarded on the same thread.
#include "devices/cpu/jit/guards.hpp"

namespace duet::rt::cpu {
namespace {

/// The calling thread's guarded launch and where its runGuarded resumes.
struct ThreadGuard {
    LaunchGuard* launch = nullptr;
    std::jmp_buf resume;
};

thread_local ThreadGuard t_guard;

} // namespace

bool runGuarded(LaunchGuard& guard, void (*body)(void*), void* data) {
    ThreadGuard& t = t_guard;
    LaunchGuard* const outer = t.launch; // launches do not nest on one thread; be safe anyway
    t.launch = &guard;
    if (setjmp(t.resume) != 0) {
        t_guard.launch = outer;
        return false;
    }
    body(data);
    t.launch = outer;
    return true;
}

} // namespace duet::rt::cpu

using duet::rt::cpu::t_guard;

namespace {

/// Records `fault` as the launch's first, cancels the launch and leaves the work-group.
[[noreturn]] void failLaunch(const duet::rt::cpu::CheckFault& fault) {
    duet::rt::cpu::LaunchGuard* g = t_guard.launch;
    if (!g)
        __builtin_trap(); // generated code runs only under runGuarded: our bug
    bool expected = false;
    if (g->faulted.compare_exchange_strong(expected, true))
        g->fault = fault;
    g->cancel.store(1, std::memory_order_release);
    std::longjmp(t_guard.resume, 1);
}

} // namespace

extern "C" void __duet_check_fail(uint32_t id, uint32_t kind, uint64_t address, uint64_t low,
                                  uint64_t high, uint64_t bytes, const char* names, uint64_t gid0,
                                  uint64_t gid1, uint64_t gid2) {
    duet::rt::cpu::CheckFault f;
    f.id = id;
    f.kind = static_cast<duet::rt::cpu::AccessKind>(kind);
    f.address = address;
    f.low = low;
    f.high = high;
    f.bytes = bytes;
    f.names = names;
    f.globalId[0] = gid0;
    f.globalId[1] = gid1;
    f.globalId[2] = gid2;
    failLaunch(f);
}

extern "C" void __duet_cancelled() {
    if (!t_guard.launch)
        __builtin_trap();
    std::longjmp(t_guard.resume, 1);
}

extern "C" void __duet_check_fail_deferred(const duet::rt::cpu::DeferredCheckSite* sites,
                                           const char* names, const duet::rt::WorkGroupContext* ctx,
                                           uint32_t code, uint64_t address, uint64_t gid0,
                                           uint64_t gid1, uint64_t gid2) {
    const duet::rt::cpu::DeferredCheckSite& s = sites[code - 1];
    uint64_t low = 0, high = 0; // NULL: empty bounds
    if (s.id != duet::rt::kCheckNullId) {
        low = ctx->argBounds[2 * s.id];
        high = ctx->argBounds[2 * s.id + 1];
    }
    __duet_check_fail(s.id, s.kind, address, low, high, s.bytes, names, gid0, gid1, gid2);
}

extern "C" void __duet_check_scan(const duet::rt::cpu::DeferredCheckSite* sites, const char* names,
                                  const duet::rt::WorkGroupContext* ctx, uint64_t n,
                                  const uint8_t* codes, const uint64_t* addresses,
                                  const uint64_t* gids0, const uint64_t* gids1,
                                  const uint64_t* gids2, uint64_t gid0, uint64_t gid1,
                                  uint64_t gid2, uint64_t step0, uint64_t step1, uint64_t step2) {
    for (uint64_t i = 0; i < n; ++i)
        if (codes[i] != 0)
            __duet_check_fail_deferred(
                sites, names, ctx, codes[i], addresses[i], gids0 ? gids0[i] : gid0 + i * step0,
                gids1 ? gids1[i] : gid1 + i * step1, gids2 ? gids2[i] : gid2 + i * step2);
    __builtin_trap(); // the loop's flag said some work-item failed: our bug
}

extern "C" void __duet_check_barriers(const duet::rt::WorkGroupContext* ctx,
                                      const uint32_t* reached) {
    const uint64_t nx = ctx->localSize[0], ny = ctx->localSize[1];
    const uint64_t n = nx * ny * ctx->localSize[2];
    uint64_t i = 1;
    while (i < n && reached[i] == reached[0])
        ++i;
    if (i >= n)
        return;
    using duet::rt::BarrierStop;
    duet::rt::cpu::CheckFault f;
    f.what = duet::rt::FaultKind::BarrierDivergence;
    for (unsigned d = 0; d < 3; ++d)
        f.groupId[d] = ctx->groupId[d];
    f.localId[1][0] = i % nx;
    f.localId[1][1] = i / nx % ny;
    f.localId[1][2] = i / (nx * ny);
    f.stop[0] = reached[0] == duet::rt::cpu::kReachedEnd ? BarrierStop::End : BarrierStop::Barrier;
    f.stop[1] = reached[i] == duet::rt::cpu::kReachedEnd ? BarrierStop::End : BarrierStop::Barrier;
    failLaunch(f);
}
