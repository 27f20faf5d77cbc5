// Pipe functions for the CPU device (OpenCL C 3.0 §6.15.17, core in 2.0) under the names clang
// lowers them to: __read_pipe_2/4, __write_pipe_2/4, __reserve_{read,write}_pipe,
// __commit_{read,write}_pipe, their __work_group_ forms and __get_pipe_{num,max}_packets_{ro,wo}
// (packet size and alignment as the last two arguments), plus is_valid_reserve_id, and the
// __sub_group_ forms where the library is built with sub-groups.
//
// The pipe's storage is core/pipe.hpp's PipeHeader (struct duet_pipe below: keep the two in
// step), its slot states and its packets. Positions count packets modulo `modulus`; packet q
// lives in slot q % capacity, whose state is 2q while free for the writer of position q and
// 2q + 1 once that writer committed it (for the reader of position q). A reservation checks the
// states of its slots, then claims the positions with one compare-and-swap on the head; a commit
// sets the states. So nothing ever waits: a reservation whose slots are not ready fails at once
// (the pipe is full or empty as far as committed packets go), as the spec's non-blocking pipe
// functions do, and no work-item depends on another's progress. That matters on the CPU device,
// where a work-group's work-items run one after another in one thread.
//
// A reserve_id_t holds (first position << 32) | packet count; the count is never 0 in a valid
// one, and CLK_NULL_RESERVE_ID (all ones) has a count no pipe reaches.
//
// The same source is the GCN device's (compiled for amdgcn, runtime/builtins/CMakeLists.txt):
// atomics are clang's __opencl_atomic_* builtins (device scope, inline on both targets), the
// work-group forms use work_group_broadcast and barrier, which both libraries have, and
// amdgcn's extra entry points (__read_pipe_2_<size> ...) are at the end.
#include "builtins.h"

typedef struct {
    uint packetSize, capacity, modulus, dataOffset;
    uint pad0[12];
    atomic_uint writePos, committed;
    uint pad1[14];
    atomic_uint readPos, taken;
    uint pad2[14];
} duet_pipe;

#define DUET_PIPE_SLOTS_OFFSET 256
#define DUET_NO_RESERVATION (~0ul)

// Declared, not defined: the CPU code generator's opaque-type lowering
// (devices/cpu/jit/opaque_types) makes a pipe value the pointer the executor passes for a pipe
// argument (the pipe's storage) and a reserve_id_t a 64-bit value, and turns these into casts.
global duet_pipe* __duet_pipe_ptr_ro(read_only pipe char p);
global duet_pipe* __duet_pipe_ptr_wo(write_only pipe char p);
reserve_id_t __duet_make_reserve_id(ulong bits);
ulong __duet_reserve_id_bits(reserve_id_t id);

#define DUET_PIPE_LOAD(p, order) __opencl_atomic_load(p, order, __OPENCL_MEMORY_SCOPE_DEVICE)
#define DUET_PIPE_STORE(p, v, order)                                                           \
    __opencl_atomic_store(p, v, order, __OPENCL_MEMORY_SCOPE_DEVICE)
#define DUET_PIPE_ADD(p, v) __opencl_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __OPENCL_MEMORY_SCOPE_DEVICE)

DUET_INLINE uint duet_pipe_advance(global duet_pipe* p, uint pos, uint k) {
    return (uint)(((ulong)pos + k) % p->modulus);
}

DUET_INLINE global atomic_uint* duet_pipe_slot(global duet_pipe* p, uint pos) {
    return (global atomic_uint*)((global char*)p + DUET_PIPE_SLOTS_OFFSET) + pos % p->capacity;
}

DUET_INLINE global char* duet_pipe_packet(global duet_pipe* p, uint pos) {
    return (global char*)p + p->dataOffset + (size_t)(pos % p->capacity) * p->packetSize;
}

DUET_INLINE uint duet_reservation_count(ulong bits) {
    return bits == DUET_NO_RESERVATION ? 0u : (uint)bits;
}

/// Claims `n` positions for writing (slots free) or reading (slots committed): the reservation
/// bits, or DUET_NO_RESERVATION when the slots are not all ready.
DUET_INLINE ulong duet_pipe_reserve(global duet_pipe* p, uint n, bool write) {
    if (n == 0 || n > p->capacity)
        return DUET_NO_RESERVATION;
    global atomic_uint* head = write ? &p->writePos : &p->readPos;
    uint pos = DUET_PIPE_LOAD(head, __ATOMIC_RELAXED);
    for (;;) {
        bool ready = true;
        for (uint i = 0; i < n && ready; ++i) {
            const uint q = duet_pipe_advance(p, pos, i);
            ready = DUET_PIPE_LOAD(duet_pipe_slot(p, q), __ATOMIC_ACQUIRE) == 2 * q + (write ? 0 : 1);
        }
        if (!ready) {
            // Not ready at this head: full (writers) or empty (readers), unless another
            // reservation moved the head meanwhile.
            const uint now = DUET_PIPE_LOAD(head, __ATOMIC_RELAXED);
            if (now == pos)
                return DUET_NO_RESERVATION;
            pos = now;
            continue;
        }
        if (__opencl_atomic_compare_exchange_weak(head, &pos, duet_pipe_advance(p, pos, n),
                                                  __ATOMIC_ACQ_REL, __ATOMIC_RELAXED,
                                                  __OPENCL_MEMORY_SCOPE_DEVICE)) {
            if (!write)
                DUET_PIPE_ADD(&p->taken, n);
            return ((ulong)pos << 32) | n;
        }
    }
}

/// Publishes a reservation's packets (writers) or frees its slots for the next lap (readers).
DUET_INLINE void duet_pipe_commit(global duet_pipe* p, ulong bits, bool write) {
    const uint n = duet_reservation_count(bits);
    const uint pos = (uint)(bits >> 32);
    for (uint i = 0; i < n; ++i) {
        const uint q = duet_pipe_advance(p, pos, i);
        const uint state = write ? 2 * q + 1 : 2 * duet_pipe_advance(p, q, p->capacity);
        DUET_PIPE_STORE(duet_pipe_slot(p, q), state, __ATOMIC_RELEASE);
    }
    if (write && n)
        DUET_PIPE_ADD(&p->committed, n);
}

DUET_INLINE void duet_pipe_copy(generic char* to, const generic char* from, uint size) {
    for (uint i = 0; i < size; ++i)
        to[i] = from[i];
}

/// Packet `index` of a reservation, or null when the reservation does not hold it.
DUET_INLINE global char* duet_reserved_packet(global duet_pipe* p, ulong bits, uint index) {
    if (index >= duet_reservation_count(bits))
        return 0;
    return duet_pipe_packet(p, duet_pipe_advance(p, (uint)(bits >> 32), index));
}

DUET_INLINE uint duet_copy_size(global duet_pipe* p, uint size) {
    return min(size, p->packetSize);
}

// ---- read_pipe and write_pipe without a reservation: one packet, 0 or -1 -----------------------

int __read_pipe_2(read_only pipe char pipe_, generic void* ptr, uint size, uint align) {
    global duet_pipe* p = __duet_pipe_ptr_ro(pipe_);
    const ulong r = duet_pipe_reserve(p, 1, false);
    if (r == DUET_NO_RESERVATION)
        return -1;
    duet_pipe_copy((generic char*)ptr, duet_reserved_packet(p, r, 0), duet_copy_size(p, size));
    duet_pipe_commit(p, r, false);
    return 0;
}

int __write_pipe_2(write_only pipe char pipe_, const generic void* ptr, uint size, uint align) {
    global duet_pipe* p = __duet_pipe_ptr_wo(pipe_);
    const ulong r = duet_pipe_reserve(p, 1, true);
    if (r == DUET_NO_RESERVATION)
        return -1;
    duet_pipe_copy(duet_reserved_packet(p, r, 0), (const generic char*)ptr,
                   duet_copy_size(p, size));
    duet_pipe_commit(p, r, true);
    return 0;
}

// ---- With a reservation: packet `index` of it ---------------------------------------------------

int __read_pipe_4(read_only pipe char pipe_, reserve_id_t id, uint index, generic void* ptr,
                  uint size, uint align) {
    global duet_pipe* p = __duet_pipe_ptr_ro(pipe_);
    global char* packet = duet_reserved_packet(p, __duet_reserve_id_bits(id), index);
    if (!packet)
        return -1;
    duet_pipe_copy((generic char*)ptr, packet, duet_copy_size(p, size));
    return 0;
}

int __write_pipe_4(write_only pipe char pipe_, reserve_id_t id, uint index,
                   const generic void* ptr, uint size, uint align) {
    global duet_pipe* p = __duet_pipe_ptr_wo(pipe_);
    global char* packet = duet_reserved_packet(p, __duet_reserve_id_bits(id), index);
    if (!packet)
        return -1;
    duet_pipe_copy(packet, (const generic char*)ptr, duet_copy_size(p, size));
    return 0;
}

reserve_id_t __reserve_read_pipe(read_only pipe char pipe_, uint n, uint size, uint align) {
    return __duet_make_reserve_id(duet_pipe_reserve(__duet_pipe_ptr_ro(pipe_), n, false));
}

reserve_id_t __reserve_write_pipe(write_only pipe char pipe_, uint n, uint size, uint align) {
    return __duet_make_reserve_id(duet_pipe_reserve(__duet_pipe_ptr_wo(pipe_), n, true));
}

void __commit_read_pipe(read_only pipe char pipe_, reserve_id_t id, uint size, uint align) {
    duet_pipe_commit(__duet_pipe_ptr_ro(pipe_), __duet_reserve_id_bits(id), false);
}

void __commit_write_pipe(write_only pipe char pipe_, reserve_id_t id, uint size, uint align) {
    duet_pipe_commit(__duet_pipe_ptr_wo(pipe_), __duet_reserve_id_bits(id), true);
}

DUET_OVL bool is_valid_reserve_id(reserve_id_t id) {
    return duet_reservation_count(__duet_reserve_id_bits(id)) != 0;
}

// ---- Work-group reservations --------------------------------------------------------------------
// Encountered by every work-item of the group (OpenCL C 3.0 §6.15.17.3): work-item (0,0,0)
// reserves for the group and work_group_broadcast hands the reservation to the others; it
// commits after a barrier, which makes every work-item's writes (or reads) of the reserved
// packets happen before the commit.

DUET_INLINE bool duet_pipe_wg_leader(void) {
    return get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0;
}

DUET_INLINE ulong duet_pipe_wg_reserve(global duet_pipe* p, uint n, bool write) {
    const ulong r = duet_pipe_wg_leader() ? duet_pipe_reserve(p, n, write) : 0;
    return work_group_broadcast(r, (size_t)0, (size_t)0, (size_t)0);
}

DUET_INLINE void duet_pipe_wg_commit(global duet_pipe* p, ulong bits, bool write) {
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (duet_pipe_wg_leader())
        duet_pipe_commit(p, bits, write);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

reserve_id_t __work_group_reserve_read_pipe(read_only pipe char pipe_, uint n, uint size,
                                            uint align) {
    return __duet_make_reserve_id(duet_pipe_wg_reserve(__duet_pipe_ptr_ro(pipe_), n, false));
}

reserve_id_t __work_group_reserve_write_pipe(write_only pipe char pipe_, uint n, uint size,
                                             uint align) {
    return __duet_make_reserve_id(duet_pipe_wg_reserve(__duet_pipe_ptr_wo(pipe_), n, true));
}

void __work_group_commit_read_pipe(read_only pipe char pipe_, reserve_id_t id, uint size,
                                   uint align) {
    duet_pipe_wg_commit(__duet_pipe_ptr_ro(pipe_), __duet_reserve_id_bits(id), false);
}

void __work_group_commit_write_pipe(write_only pipe char pipe_, reserve_id_t id, uint size,
                                    uint align) {
    duet_pipe_wg_commit(__duet_pipe_ptr_wo(pipe_), __duet_reserve_id_bits(id), true);
}

// ---- Sub-group reservations ---------------------------------------------------------------------
// Only where the device has sub-groups (__opencl_c_subgroups in the library's -cl-ext): the same
// as the work-group forms over the sub-group, whatever the device makes a sub-group.

#ifdef __opencl_c_subgroups
DUET_INLINE ulong duet_pipe_sg_reserve(global duet_pipe* p, uint n, bool write) {
    const ulong r = get_sub_group_local_id() == 0 ? duet_pipe_reserve(p, n, write) : 0;
    return sub_group_broadcast(r, 0u);
}

DUET_INLINE void duet_pipe_sg_commit(global duet_pipe* p, ulong bits, bool write) {
    sub_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (get_sub_group_local_id() == 0)
        duet_pipe_commit(p, bits, write);
    sub_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

reserve_id_t __sub_group_reserve_read_pipe(read_only pipe char pipe_, uint n, uint size,
                                           uint align) {
    return __duet_make_reserve_id(duet_pipe_sg_reserve(__duet_pipe_ptr_ro(pipe_), n, false));
}

reserve_id_t __sub_group_reserve_write_pipe(write_only pipe char pipe_, uint n, uint size,
                                            uint align) {
    return __duet_make_reserve_id(duet_pipe_sg_reserve(__duet_pipe_ptr_wo(pipe_), n, true));
}

void __sub_group_commit_read_pipe(read_only pipe char pipe_, reserve_id_t id, uint size,
                                  uint align) {
    duet_pipe_sg_commit(__duet_pipe_ptr_ro(pipe_), __duet_reserve_id_bits(id), false);
}

void __sub_group_commit_write_pipe(write_only pipe char pipe_, reserve_id_t id, uint size,
                                   uint align) {
    duet_pipe_sg_commit(__duet_pipe_ptr_wo(pipe_), __duet_reserve_id_bits(id), true);
}
#endif

// ---- Queries ------------------------------------------------------------------------------------
// Packets committed and not yet reserved by a reader: exact when no kernel is using the pipe,
// "immediately stale" otherwise, as the spec says.

DUET_INLINE uint duet_pipe_num_packets(global duet_pipe* p) {
    const uint taken = DUET_PIPE_LOAD(&p->taken, __ATOMIC_RELAXED);
    const uint committed = DUET_PIPE_LOAD(&p->committed, __ATOMIC_RELAXED);
    const int n = (int)(committed - taken);
    return n < 0 ? 0u : min((uint)n, p->capacity);
}

uint __get_pipe_num_packets_ro(read_only pipe char pipe_, uint size, uint align) {
    return duet_pipe_num_packets(__duet_pipe_ptr_ro(pipe_));
}

uint __get_pipe_num_packets_wo(write_only pipe char pipe_, uint size, uint align) {
    return duet_pipe_num_packets(__duet_pipe_ptr_wo(pipe_));
}

uint __get_pipe_max_packets_ro(read_only pipe char pipe_, uint size, uint align) {
    return __duet_pipe_ptr_ro(pipe_)->capacity;
}

uint __get_pipe_max_packets_wo(write_only pipe char pipe_, uint size, uint align) {
    return __duet_pipe_ptr_wo(pipe_)->capacity;
}

// ---- amdgcn: read_pipe/write_pipe of a power-of-two packet ------------------------------------
// LLVM's AMDGPU library-call pass turns __read_pipe_2(p, ptr, N, N) (size = alignment = N, a power
// of two up to 128) into __read_pipe_2_N(p, ptr), and the _4 forms likewise.

#ifdef __AMDGCN__
#define DUET_PIPE_SIZED(N)                                                                     \
    int __read_pipe_2_##N(read_only pipe char pipe_, generic void* ptr) {                      \
        return __read_pipe_2(pipe_, ptr, N, N);                                                \
    }                                                                                          \
    int __write_pipe_2_##N(write_only pipe char pipe_, const generic void* ptr) {              \
        return __write_pipe_2(pipe_, ptr, N, N);                                               \
    }                                                                                          \
    int __read_pipe_4_##N(read_only pipe char pipe_, reserve_id_t id, uint index,              \
                          generic void* ptr) {                                                 \
        return __read_pipe_4(pipe_, id, index, ptr, N, N);                                     \
    }                                                                                          \
    int __write_pipe_4_##N(write_only pipe char pipe_, reserve_id_t id, uint index,            \
                           const generic void* ptr) {                                          \
        return __write_pipe_4(pipe_, id, index, ptr, N, N);                                    \
    }
DUET_PIPE_SIZED(1)
DUET_PIPE_SIZED(2)
DUET_PIPE_SIZED(4)
DUET_PIPE_SIZED(8)
DUET_PIPE_SIZED(16)
DUET_PIPE_SIZED(32)
DUET_PIPE_SIZED(64)
DUET_PIPE_SIZED(128)
#endif
