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

extern "C" void __duet_check_fail(uint32_t id, uint32_t kind, uint64_t address, uint64_t low,
                                  uint64_t high, uint64_t bytes, const char* names, uint64_t gid0,
                                  uint64_t gid1, uint64_t gid2) {
    duet::rt::cpu::LaunchGuard* g = t_guard.launch;
    if (!g)
        __builtin_trap(); // generated code runs only under runGuarded: our bug
    bool expected = false;
    if (g->faulted.compare_exchange_strong(expected, true)) {
        duet::rt::cpu::CheckFault& f = g->fault;
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
    }
    g->cancel.store(1, std::memory_order_release);
    std::longjmp(t_guard.resume, 1);
}

extern "C" void __duet_cancelled() {
    if (!t_guard.launch)
        __builtin_trap();
    std::longjmp(t_guard.resume, 1);
}
