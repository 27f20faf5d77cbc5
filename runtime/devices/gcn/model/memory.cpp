// Memory instructions: scalar loads (SMEM), LDS and cross-lane DS, MUBUF/FLAT/GLOBAL/SCRATCH.
#include "wave_exec.hpp"

#include <atomic>
#include <chrono>
#include <optional>

namespace duet::gcn::model {

namespace {

// ---- Atomics on host memory ----------------------------------------------------------------

template <class T> T atomicRmw(T* p, AtomicOp op, T data, T cmp, bool shared) {
    using S = std::make_signed_t<T>;
    auto apply = [&](T old) -> T {
        switch (op) {
        case AtomicOp::Swap:
            return data;
        case AtomicOp::CmpSwap:
            return old == cmp ? data : old;
        case AtomicOp::Add:
            return old + data;
        case AtomicOp::Sub:
            return old - data;
        case AtomicOp::Rsub:
            return data - old;
        case AtomicOp::Smin:
            return T(std::min(S(old), S(data)));
        case AtomicOp::Umin:
            return std::min(old, data);
        case AtomicOp::Smax:
            return T(std::max(S(old), S(data)));
        case AtomicOp::Umax:
            return std::max(old, data);
        case AtomicOp::And:
            return old & data;
        case AtomicOp::Or:
            return old | data;
        case AtomicOp::Xor:
            return old ^ data;
        case AtomicOp::Inc:
            return old >= data ? 0 : old + 1;
        case AtomicOp::Mskor:
            return (old & ~data) | cmp;
        case AtomicOp::Dec:
            return (old == 0 || old > data) ? data : old - 1;
        case AtomicOp::Fmin:
        case AtomicOp::Fmax:
        case AtomicOp::Fadd: {
            if constexpr (sizeof(T) == 4) {
                float a = bc<float>(old), b = bc<float>(data);
                float r = op == AtomicOp::Fadd   ? a + b
                          : op == AtomicOp::Fmin ? fminIeee(a, b)
                                                 : fmaxIeee(a, b);
                return bc<T>(r);
            } else {
                double a = bc<double>(old), b = bc<double>(data);
                double r = op == AtomicOp::Fadd   ? a + b
                           : op == AtomicOp::Fmin ? fminIeee(a, b)
                                                  : fmaxIeee(a, b);
                return bc<T>(r);
            }
        }
        }
        return old;
    };
    if (!shared) { // LDS: a work-group's waves run on one host thread
        T old;
        memcpy(&old, p, sizeof(T));
        T nv = apply(old);
        memcpy(p, &nv, sizeof(T));
        return old;
    }
    std::atomic_ref<T> ref(*p);
    switch (op) {
    case AtomicOp::Add:
        return ref.fetch_add(data);
    case AtomicOp::Sub:
        return ref.fetch_sub(data);
    case AtomicOp::And:
        return ref.fetch_and(data);
    case AtomicOp::Or:
        return ref.fetch_or(data);
    case AtomicOp::Xor:
        return ref.fetch_xor(data);
    case AtomicOp::Swap:
        return ref.exchange(data);
    default:
        break;
    }
    T old = ref.load();
    while (!ref.compare_exchange_weak(old, apply(old))) {
    }
    return old;
}

/// A buffer resource (V#) as gfx9 lays it out.
struct BufferRsrc {
    uint64_t base;
    uint32_t stride, numRecords, elementSize, indexStride;
    bool swizzle, addTid;
    explicit BufferRsrc(const uint32_t* d) {
        base = d[0] | (uint64_t(d[1] & 0xffff) << 32);
        stride = (d[1] >> 16) & 0x3fff;
        swizzle = (d[1] >> 31) & 1;
        numRecords = d[2];
        elementSize = 2u << ((d[3] >> 19) & 3);
        indexStride = 8u << ((d[3] >> 21) & 3);
        addTid = (d[3] >> 23) & 1;
    }
};

bool badHostAddress(uint64_t a) {
    return a < 4096 || a >= (1ull << 47);
}

uint32_t loadBytes(const uint8_t* p, unsigned n, bool sext) {
    uint32_t v = 0;
    memcpy(&v, p, n);
    if (sext)
        v = n == 1 ? uint32_t(int32_t(int8_t(v))) : uint32_t(int32_t(int16_t(v)));
    return v;
}

} // namespace

/// One memory instruction on one wave: the address spaces (LDS, scratch, host) and the three
/// instruction kinds. WaveExec::smem/ds/vmem run it; its functions are inlined into them.
struct MemExec {
    WaveExec& x;
    Executor& ex;
    Wave& w;
    const Inst& in;

    /// Host address of `bytes` at lane's memory location `addr` in `space`; null on a fault
    /// (x.err set).
    uint8_t* lds(uint64_t off, unsigned bytes) {
        if (off + bytes > ex.m_ldsSize) {
            if (x.err.empty())
                x.err = "LDS access at " + hex(off) + " beyond the work-group's " +
                        std::to_string(ex.m_ldsSize) + " bytes";
            return nullptr;
        }
        return ex.m_lds.data() + off;
    }
    /// Private (scratch) memory of a lane, swizzled as the scratch V# / FLAT_SCRATCH define:
    /// 4-byte elements interleaved over the wave's 64 lanes.
    uint8_t* priv(uint64_t off, int lane) {
        uint64_t base = w.sreg64(opnd::kFlatScr);
        uint64_t a = base + (off / 4) * 256 + uint64_t(lane) * 4 + (off & 3);
        if (!inScratchSlot(a)) [[unlikely]] {
            privateOverflow(off);
            return nullptr;
        }
        return host(a, 1);
    }
    /// Whether a private-memory address lies in this wave's scratch slot. The kernel prologue
    /// folds the wave's offset into FLAT_SCRATCH or the private segment V#, so only the
    /// absolute address tells.
    bool inScratchSlot(uint64_t a) const {
        const DispatchCtx& c = ex.m_ctx;
        if (!c.scratchBase)
            return true;
        return a - (c.scratchBase + uint64_t(w.scratchSlot) * c.scratchWaveBytes) <
               c.scratchWaveBytes;
    }
    /// A private access outside the wave's scratch slot: a deep call chain or an out-of-bounds
    /// private array. Hardware would fault or corrupt another wave's private memory.
    void privateOverflow(uint64_t laneOffset) {
        if (x.err.empty())
            x.err = "private memory access at offset " + hex(laneOffset) +
                    " beyond the work-item's " + std::to_string(ex.m_ctx.scratchWaveBytes / 64) +
                    " bytes of scratch (call stack overflow, e.g. deep recursion, or a private "
                    "array indexed out of bounds)";
    }
    uint8_t* host(uint64_t a, unsigned) {
        if (badHostAddress(a)) {
            if (x.err.empty())
                x.err = "memory fault at address " + hex(a);
            return nullptr;
        }
        return reinterpret_cast<uint8_t*>(a);
    }
    MemoryFault::Kind accessKind() const {
        return in.op == Op::mem_store    ? MemoryFault::Kind::Write
               : in.op == Op::mem_atomic ? MemoryFault::Kind::Atomic
                                         : MemoryFault::Kind::Read;
    }
    /// Global memory (not LDS, not scratch) of `lane`: in a checked dispatch (DUET_KERNEL_CHECKS)
    /// only inside the memory the dispatch was given.
    uint8_t* global(uint64_t a, unsigned bytes, int lane) {
        if (ex.m_ctx.checkMemory && !ex.inMemory(a, bytes)) [[unlikely]] {
            if (x.err.empty()) {
                x.err = "access of " + std::to_string(bytes) + " bytes at " + hex(a) +
                        " outside the memory the dispatch was given";
                ex.outOfBounds(w, unsigned(lane), a, bytes, accessKind());
            }
            return nullptr;
        }
        return host(a, bytes);
    }
    /// FLAT address: LDS and private apertures, else global memory.
    uint8_t* flat(uint64_t a, unsigned bytes, int lane, bool& isLds) {
        isLds = false;
        if ((a >> 32) == (kSharedAperture >> 32)) {
            isLds = true;
            return lds(uint32_t(a), bytes);
        }
        if ((a >> 32) == (kPrivateAperture >> 32))
            return priv(uint32_t(a), lane);
        return global(a, bytes, lane);
    }

    /// What a vector memory instruction moves, and where from / to.
    struct VmemAccess {
        bool isBuffer, isLoad, isStore, isAtomic, cmp;
        unsigned bytes, dwords; ///< per lane and element; dwords at least 1
        unsigned dataReg, dstReg;
        uint64_t exec;
    };
    /// A DS read, write or atomic: the lanes' addresses and the data/destination registers.
    struct DsAccess {
        uint64_t exec;
        const uint32_t* addr;
        unsigned d0, d1, dst;
        unsigned bytes, dwords, lanesPerCycle;
        bool two; ///< ds_read2 / ds_write2
    };

    void smem();
    void ds();
    void vmem();
    bool dsCrossLane(uint64_t exec, const uint32_t* addr);
    bool dsPlain(const DsAccess& a);
    void dsLanes(const DsAccess& a);
    bool vmemPlain(const VmemAccess& a);
    void vmemLanes(const VmemAccess& a);
    /// Adds the LDS bank-conflict cycles of an access to the statistics: per lane, `nAddr`
    /// dword addresses in `dwAddr`; or `dwords` consecutive dwords from each EXEC lane's byte
    /// address `laneAddr`.
    void ldsConflicts(const uint32_t (*dwAddr)[8], const unsigned* nAddr, unsigned lanesPerCycle);
    void ldsConflicts(uint64_t exec, const uint32_t* laneAddr, unsigned dwords,
                      unsigned lanesPerCycle);
};

// ---- Vector memory ---------------------------------------------------------------------------

/// The fast path: global/flat dword loads and stores to plain host memory (the common case).
/// False when some lane needs the per-lane path (an aperture or a bad address).
__attribute__((always_inline)) inline bool MemExec::vmemPlain(const VmemAccess& a) {
    const bool isLoad = a.isLoad;
    const unsigned bytes = a.bytes, dwords = a.dwords, dataReg = a.dataReg, dstReg = a.dstReg;
    const uint64_t exec = a.exec;
    uint64_t addr[64];
    bool plain = true;
    const uint32_t* lo = w.vrow(in.src[0]);
    const uint32_t* hi = w.vrow(in.src[0] + 1);
    uint64_t base = 0;
    bool useSaddr = in.space == Space::Global && in.saddr != 0x7f;
    if (useSaddr)
        base = x.sread64(in.saddr, false);
    // Every lane's address (inactive ones unused), in loops without branches so they
    // vectorise.
    const uint64_t off = int64_t(in.imm);
    if (useSaddr)
        for (int l = 0; l < 64; ++l)
            addr[l] = base + lo[l] + off;
    else
        for (int l = 0; l < 64; ++l)
            addr[l] = (uint64_t(lo[l]) | uint64_t(hi[l]) << 32) + off;
    bool contiguous = false;
    if (exec == ~0ull) {
        // badHostAddress as OR-reductions (SSE2 has no 64-bit compares): a >= 2^47, or
        // a < 4096 (a - 4096 wraps to the top half; a >= 2^63 is caught by the first).
        // Contiguous: lanes at consecutive elements (a[i] with i the global id).
        uint64_t badBits = 0, strideDiff = 0;
        const uint64_t a0 = addr[0];
        for (int l = 0; l < 64; ++l) {
            badBits |= (addr[l] >> 47) | ((addr[l] - 4096) >> 63);
            strideDiff |= addr[l] ^ (a0 + uint64_t(l) * bytes);
        }
        plain = badBits == 0;
        contiguous = strideDiff == 0;
    } else {
        alignas(16) uint8_t bad[64];
        for (int l = 0; l < 64; ++l)
            bad[l] = badHostAddress(addr[l]); // apertures lie above 2^47 too
        plain = (packLaneBits(bad) & exec) == 0;
    }
    if (plain && ex.m_ctx.checkMemory) {
        // Checked dispatch: a lane outside the dispatch's memory goes to the per-lane path,
        // which reports it.
        if (contiguous)
            plain = ex.inMemory(addr[0], 64ull * bytes);
        else
            for (int l = 0; l < 64 && plain; ++l)
                if ((exec >> l) & 1)
                    plain = ex.inMemory(addr[l], bytes);
    }
    if (plain && contiguous) {
        // One block copy per register for dwords, no per-lane mask tests for wider
        // elements.
        auto* mem = reinterpret_cast<uint8_t*>(addr[0]);
        const unsigned reg = isLoad ? dstReg : dataReg;
        if (dwords == 1) {
            if (isLoad)
                memcpy(w.vrow(reg), mem, 256);
            else
                memcpy(mem, w.vrow(reg), 256);
            return true;
        }
        for (unsigned k = 0; k < dwords; ++k) {
            uint32_t* row = w.vrow(reg + k);
            for (int l = 0; l < 64; ++l) {
                if (isLoad)
                    memcpy(&row[l], mem + l * bytes + 4 * k, 4);
                else
                    memcpy(mem + l * bytes + 4 * k, &row[l], 4);
            }
        }
        return true;
    }
    if (plain) {
        for (unsigned k = 0; k < dwords; ++k) {
            uint32_t* row = w.vrow((isLoad ? dstReg : dataReg) + k);
            if (isLoad) {
                for (int l = 0; l < 64; ++l)
                    if ((exec >> l) & 1)
                        memcpy(&row[l], reinterpret_cast<const void*>(addr[l] + 4 * k), 4);
            } else {
                for (int l = 0; l < 64; ++l)
                    if ((exec >> l) & 1)
                        memcpy(reinterpret_cast<void*>(addr[l] + 4 * k), &row[l], 4);
            }
        }
        return true;
    }
    return false;
}

/// Lane by lane: buffer (V#) addressing and range checks, scratch swizzling, FLAT apertures,
/// sub-dword and d16 data, atomics.
__attribute__((always_inline)) inline void MemExec::vmemLanes(const VmemAccess& a) {
    const bool isBuffer = a.isBuffer, isLoad = a.isLoad, isStore = a.isStore;
    const bool isAtomic = a.isAtomic, cmp = a.cmp;
    const unsigned bytes = a.bytes, dwords = a.dwords, dataReg = a.dataReg, dstReg = a.dstReg;
    const uint64_t exec = a.exec;
    // Per-lane address of the first byte (and how to reach the following dwords).
    std::optional<BufferRsrc> rsrc;
    uint32_t soffset = 0;
    if (isBuffer) {
        uint32_t d[4];
        for (int i = 0; i < 4; ++i)
            d[i] = x.sread(in.saddr + i);
        rsrc.emplace(d);
        soffset = x.sread(in.soffset);
    }
    uint64_t saddrBase = 0;
    if (!isBuffer && in.saddr != 0x7f) {
        saddrBase = in.space == Space::Scratch ? x.sread(in.saddr) : x.sread64(in.saddr, false);
    }

    for (int l = 0; l < 64; ++l) {
        if (!((exec >> l) & 1))
            continue;
        // locate(k): host pointer of dword k (or of the sub-dword element)
        auto vreg = [&](unsigned r) { return w.vrow(r)[l]; };
        uint8_t* ptr[4] = {};
        bool isLds = false, contiguous = true, outOfRange = false;
        if (isBuffer) {
            const BufferRsrc& b = *rsrc;
            uint32_t vIndex = 0, vOffset = 0;
            unsigned a = in.src[0];
            if (in.idxen && in.offen)
                vIndex = vreg(a), vOffset = vreg(a + 1);
            else if (in.idxen)
                vIndex = vreg(a);
            else if (in.offen)
                vOffset = vreg(a);
            uint64_t index = uint64_t(vIndex) + (b.addTid ? l : 0);
            uint64_t offset = uint64_t(vOffset) + uint64_t(in.imm);
            if (!b.swizzle) {
                if (b.stride == 0 && offset + bytes > b.numRecords)
                    outOfRange = true;
                else if (b.stride != 0 && index >= b.numRecords)
                    outOfRange = true;
                if (!outOfRange)
                    ptr[0] = global(b.base + soffset + offset + index * b.stride, bytes, l);
            } else {
                // Swizzled: the private segment buffer (scratch).
                contiguous = false;
                for (unsigned k = 0; k < dwords; ++k) {
                    uint64_t off = offset + 4 * k;
                    uint64_t a2 = b.base + soffset +
                                  ((index / b.indexStride) * b.stride +
                                   (off / b.elementSize) * b.elementSize) *
                                      b.indexStride +
                                  (index % b.indexStride) * b.elementSize + off % b.elementSize;
                    if (!inScratchSlot(a2)) [[unlikely]] {
                        privateOverflow(off);
                        return;
                    }
                    ptr[k] = host(a2, bytes < 4 ? bytes : 4);
                }
            }
        } else if (in.space == Space::Scratch) {
            uint64_t off = (in.saddr != 0x7f ? saddrBase : vreg(in.src[0])) + int64_t(in.imm);
            if (in.saddr != 0x7f)
                off = uint32_t(saddrBase + int64_t(in.imm));
            contiguous = false;
            for (unsigned k = 0; k < dwords; ++k)
                ptr[k] = priv(off + 4 * k, l);
        } else {
            uint64_t a;
            if (in.space == Space::Global && in.saddr != 0x7f)
                a = saddrBase + vreg(in.src[0]) + int64_t(in.imm);
            else
                a = (uint64_t(vreg(in.src[0])) | uint64_t(vreg(in.src[0] + 1)) << 32) +
                    int64_t(in.imm);
            if (in.space == Space::Flat && (a >> 32) == (kPrivateAperture >> 32)) {
                contiguous = false;
                for (unsigned k = 0; k < dwords; ++k)
                    ptr[k] = priv(uint32_t(a) + 4 * k, l);
            } else {
                ptr[0] = flat(a, bytes, l, isLds);
            }
        }
        if (!x.err.empty())
            return;
        if (outOfRange) { // buffer range checking: loads return 0, stores and atomics are dropped
            if (isLoad || (isAtomic && in.memRtn))
                for (unsigned k = 0; k < dwords; ++k)
                    w.vrow(dstReg + k)[l] = 0;
            continue;
        }
        if (contiguous)
            for (unsigned k = 1; k < dwords; ++k)
                ptr[k] = ptr[0] + 4 * k;

        if (isLoad) {
            if (bytes < 4) {
                uint32_t v = loadBytes(ptr[0], bytes, in.memSigned);
                uint32_t& d = w.vrow(dstReg)[l];
                if (in.memD16Hi)
                    d = (d & 0xffff) | (v << 16);
                else if (in.memD16)
                    d = (d & 0xffff0000u) | (v & 0xffff);
                else
                    d = v;
            } else {
                for (unsigned k = 0; k < dwords; ++k)
                    memcpy(&w.vrow(dstReg + k)[l], ptr[k], 4);
            }
        } else if (isStore) {
            if (bytes < 4) {
                uint32_t v = w.vrow(dataReg)[l];
                if (in.memD16Hi)
                    v >>= 16;
                memcpy(ptr[0], &v, bytes);
            } else {
                for (unsigned k = 0; k < dwords; ++k)
                    memcpy(ptr[k], &w.vrow(dataReg + k)[l], 4);
            }
        } else {
            bool shared = !isLds;
            if (bytes == 4) {
                uint32_t data = w.vrow(dataReg)[l];
                uint32_t c = cmp ? w.vrow(dataReg + 1)[l] : 0;
                if (reinterpret_cast<uintptr_t>(ptr[0]) & 3) {
                    x.err = "misaligned atomic";
                    return;
                }
                uint32_t old = atomicRmw<uint32_t>(reinterpret_cast<uint32_t*>(ptr[0]), in.atomic,
                                                   data, c, shared);
                if (in.memRtn)
                    w.vrow(dstReg)[l] = old;
            } else {
                uint64_t data = w.vrow(dataReg)[l] | uint64_t(w.vrow(dataReg + 1)[l]) << 32;
                uint64_t c =
                    cmp ? (w.vrow(dataReg + 2)[l] | uint64_t(w.vrow(dataReg + 3)[l]) << 32) : 0;
                if (reinterpret_cast<uintptr_t>(ptr[0]) & 7) {
                    x.err = "misaligned atomic";
                    return;
                }
                uint64_t old = atomicRmw<uint64_t>(reinterpret_cast<uint64_t*>(ptr[0]), in.atomic,
                                                   data, c, shared);
                if (in.memRtn)
                    w.vrow(dstReg)[l] = uint32_t(old), w.vrow(dstReg + 1)[l] = uint32_t(old >> 32);
            }
        }
    }
}

__attribute__((always_inline)) inline void MemExec::vmem() {
    // L1 write-back/invalidate: the model has no caches, host memory is coherent; the order
    // it stands for is kept (Executor::invalidateL1).
    if (in.op == Op::buffer_wbinvl1 || in.op == Op::buffer_wbinvl1_vol) {
        ex.invalidateL1();
        return;
    }
    const bool isBuffer = in.enc == Enc::Mubuf;
    const unsigned bytes = in.memBytes;
    const unsigned dwords = bytes >= 4 ? bytes / 4 : 1;
    const unsigned dataReg = isBuffer ? in.src[1] : in.src[1];
    const unsigned dstReg = in.vdst;
    const uint64_t exec = x.execMask;
    const bool isLoad = in.op == Op::mem_load, isStore = in.op == Op::mem_store;
    const bool isAtomic = in.op == Op::mem_atomic;
    const bool cmp = isAtomic && in.atomic == AtomicOp::CmpSwap;
    // Stores and atomics that other work-groups (host threads) may read: the next s_waitcnt
    // vmcnt(0) fences them (scratch is the wave's own; FLAT into the LDS aperture is counted
    // too, harmlessly).
    if ((isStore || isAtomic) && in.space != Space::Scratch)
        ex.m_globalStoresUnfenced = true;
    ex.stats.vmemBytes += uint64_t(exec == ~0ull ? 64 : std::popcount(exec)) * bytes;
    const unsigned dataDwords = isAtomic ? dwords * (cmp ? 2 : 1) : dwords;
    if (isStore || isAtomic)
        x.checkVgpr(dataReg, dataDwords);
    if (isLoad || (isAtomic && in.memRtn))
        x.checkVgpr(dstReg, dwords);
    if (!x.err.empty())
        return;

    const VmemAccess access{isBuffer, isLoad, isStore, isAtomic, cmp,
                            bytes,    dwords, dataReg, dstReg,   exec};
    if (!isBuffer && in.space != Space::Scratch && bytes >= 4 && !isAtomic && vmemPlain(access))
        return;
    vmemLanes(access);
}

// ---- LDS -----------------------------------------------------------------------------------

/// ds_swizzle, ds_permute and ds_bpermute (and ds_nop): lanes exchange data, LDS untouched.
/// False for the other DS operations.
__attribute__((always_inline)) inline bool MemExec::dsCrossLane(uint64_t exec,
                                                                const uint32_t* addr) {
    const unsigned d0 = in.src[1], dst = in.vdst;
    switch (in.op) {
    case Op::ds_nop:
        return true;
    case Op::ds_swizzle_b32: {
        // The swizzled data comes from the ADDR operand (ds_swizzle_b32 vdst, vaddr offset:...).
        x.checkVgpr(dst);
        const uint32_t* src = addr;
        uint32_t out[64];
        unsigned off = uint32_t(in.imm);
        for (int l = 0; l < 64; ++l) {
            int s;
            if (off & 0x8000)
                s = (l & ~3) + ((off >> (2 * (l & 3))) & 3);
            else {
                unsigned andM = off & 31, orM = (off >> 5) & 31, xorM = (off >> 10) & 31;
                s = (l & 32) | ((((l & 31) & andM) | orM) ^ xorM);
            }
            out[l] = ((exec >> s) & 1) ? src[s] : 0;
        }
        for (int l = 0; l < 64; ++l)
            if ((exec >> l) & 1)
                w.vrow(dst)[l] = out[l];
        return true;
    }
    case Op::ds_bpermute_b32:
    case Op::ds_permute_b32: {
        x.checkVgpr(d0);
        x.checkVgpr(dst);
        const uint32_t* src = w.vrow(d0);
        uint32_t out[64] = {};
        for (int l = 0; l < 64; ++l) {
            if (!((exec >> l) & 1))
                continue;
            unsigned s = ((addr[l] + uint32_t(in.imm)) >> 2) & 63;
            if (in.op == Op::ds_bpermute_b32)
                out[l] = ((exec >> s) & 1) ? src[s] : 0;
            else
                out[s] = src[l];
        }
        for (int l = 0; l < 64; ++l)
            if ((exec >> l) & 1)
                w.vrow(dst)[l] = out[l];
        return true;
    }
    default:
        return false;
    }
}

/// The fast path: plain (non-d16) dword reads and writes with every lane in bounds. A read
/// from one address in all lanes (an LDS tile broadcast) is one load; it has no bank
/// conflicts (equal dwords broadcast). False when a lane is out of bounds: the per-lane path
/// reports the first failing lane.
__attribute__((always_inline)) inline bool MemExec::dsPlain(const DsAccess& a) {
    const uint64_t exec = a.exec;
    const uint32_t* addr = a.addr;
    const unsigned d0 = a.d0, dst = a.dst, bytes = a.bytes, dwords = a.dwords;
    const unsigned lanesPerCycle = a.lanesPerCycle;
    uint32_t laneAddr[64];
    const uint32_t first = addr[std::countr_zero(exec)] + uint32_t(in.imm);
    bool inBounds = true, uniform = true;
    if (exec == ~0ull) { // branch-free: the highest address decides the bounds
        uint32_t diff = 0, highest = 0;
        for (int l = 0; l < 64; ++l) {
            uint32_t a = addr[l] + uint32_t(in.imm);
            laneAddr[l] = a;
            diff |= a ^ first;
            highest = std::max(highest, a);
        }
        uniform = diff == 0;
        inBounds = uint64_t(highest) + bytes <= ex.m_ldsSize;
    } else {
        for (int l = 0; l < 64; ++l) {
            uint32_t a = addr[l] + uint32_t(in.imm);
            laneAddr[l] = a;
            bool on = (exec >> l) & 1;
            inBounds &= !on || uint64_t(a) + bytes <= ex.m_ldsSize;
            uniform &= !on || a == first;
        }
    }
    if (inBounds) {
        const bool isRead = in.op == Op::ds_read;
        const unsigned reg = isRead ? dst : d0;
        x.checkVgpr(reg, dwords);
        const uint8_t* base = ex.m_lds.data();
        if (isRead && uniform) {
            for (unsigned k = 0; k < dwords; ++k) {
                uint32_t v;
                memcpy(&v, base + first + 4 * k, 4);
                uint32_t* row = w.vrow(reg + k);
                if (exec == ~0ull)
                    std::fill_n(row, 64, v);
                else
                    for (int l = 0; l < 64; ++l)
                        if ((exec >> l) & 1)
                            row[l] = v;
            }
            return true; // one dword per bank: no conflicts
        }
        if (isRead) {
            for (unsigned k = 0; k < dwords; ++k) {
                uint32_t* row = w.vrow(reg + k);
                for (int l = 0; l < 64; ++l)
                    if ((exec >> l) & 1)
                        memcpy(&row[l], base + laneAddr[l] + 4 * k, 4);
            }
        } else { // lane by lane: where lanes overlap, the higher lane's data stays
            uint8_t* lds = ex.m_lds.data();
            for (int l = 0; l < 64; ++l) {
                if (!((exec >> l) & 1))
                    continue;
                for (unsigned k = 0; k < dwords; ++k)
                    memcpy(lds + laneAddr[l] + 4 * k, &w.vrow(reg + k)[l], 4);
            }
        }
        if (!uniform)
            ldsConflicts(exec, laneAddr, dwords, lanesPerCycle);
        return true;
    }
    return false;
}

/// Lane by lane: read2/write2, sub-dword and d16 data, atomics, bounds checks; then the bank
/// conflicts.
__attribute__((always_inline)) inline void MemExec::dsLanes(const DsAccess& a) {
    const uint64_t exec = a.exec;
    const uint32_t* addr = a.addr;
    const unsigned d0 = a.d0, d1 = a.d1, dst = a.dst, bytes = a.bytes, dwords = a.dwords;
    const unsigned lanesPerCycle = a.lanesPerCycle;
    const bool two = a.two;
    uint32_t dwAddr[64][8];
    unsigned nAddr[64] = {};

    for (int l = 0; l < 64; ++l) {
        if (!((exec >> l) & 1))
            continue;
        if (two) {
            unsigned scale = bytes * (in.st64 ? 64 : 1);
            uint32_t a0 = addr[l] + uint32_t(in.imm) * scale;
            uint32_t a1 = addr[l] + uint32_t(in.offset1) * scale;
            uint8_t* p0 = lds(a0, bytes);
            uint8_t* p1 = lds(a1, bytes);
            if (!p0 || !p1)
                return;
            if (in.op == Op::ds_read2) {
                x.checkVgpr(dst, 2 * dwords);
                for (unsigned k = 0; k < dwords; ++k) {
                    memcpy(&w.vrow(dst + k)[l], p0 + 4 * k, 4);
                    memcpy(&w.vrow(dst + dwords + k)[l], p1 + 4 * k, 4);
                }
            } else {
                x.checkVgpr(d0, dwords);
                x.checkVgpr(d1, dwords);
                for (unsigned k = 0; k < dwords; ++k) {
                    memcpy(p0 + 4 * k, &w.vrow(d0 + k)[l], 4);
                    memcpy(p1 + 4 * k, &w.vrow(d1 + k)[l], 4);
                }
            }
            for (unsigned k = 0; k < dwords; ++k) {
                dwAddr[l][nAddr[l]++] = (a0 >> 2) + k;
                dwAddr[l][nAddr[l]++] = (a1 >> 2) + k;
            }
            continue;
        }
        uint32_t a = addr[l] + uint32_t(in.imm);
        uint8_t* p = lds(a, bytes);
        if (!p)
            return;
        for (unsigned k = 0; k < dwords; ++k)
            dwAddr[l][nAddr[l]++] = (a >> 2) + k;
        if (in.op == Op::ds_read) {
            x.checkVgpr(dst, dwords);
            if (in.memD16) { // 16-bit result into one half, the other half kept
                uint32_t v = loadBytes(p, bytes, in.memSigned) & 0xffff;
                uint32_t& d = w.vrow(dst)[l];
                d = in.memD16Hi ? (d & 0xffff) | (v << 16) : (d & 0xffff0000u) | v;
            } else if (bytes < 4)
                w.vrow(dst)[l] = loadBytes(p, bytes, in.memSigned);
            else
                for (unsigned k = 0; k < dwords; ++k)
                    memcpy(&w.vrow(dst + k)[l], p + 4 * k, 4);
        } else if (in.op == Op::ds_write) {
            x.checkVgpr(d0, dwords);
            if (bytes < 4) {
                uint32_t v = w.vrow(d0)[l] >> (in.memD16Hi ? 16 : 0);
                memcpy(p, &v, bytes);
            } else
                for (unsigned k = 0; k < dwords; ++k)
                    memcpy(p + 4 * k, &w.vrow(d0 + k)[l], 4);
        } else { // ds_atomic
            // cmpst: DATA0 is the compare value, DATA1 the new one.
            // mskor: DATA0 is the mask, DATA1 the bits to set.
            bool cmp = in.atomic == AtomicOp::CmpSwap, mskor = in.atomic == AtomicOp::Mskor;
            if (bytes == 4) {
                uint32_t data = w.vrow(cmp ? d1 : d0)[l], c = cmp     ? w.vrow(d0)[l]
                                                              : mskor ? w.vrow(d1)[l]
                                                                      : 0;
                uint32_t old =
                    atomicRmw<uint32_t>(reinterpret_cast<uint32_t*>(p), in.atomic, data, c, false);
                if (in.memRtn)
                    w.vrow(dst)[l] = old;
            } else {
                auto rd = [&](unsigned r) {
                    return w.vrow(r)[l] | uint64_t(w.vrow(r + 1)[l]) << 32;
                };
                uint64_t data = rd(cmp ? d1 : d0), c = cmp ? rd(d0) : mskor ? rd(d1) : 0;
                uint64_t old =
                    atomicRmw<uint64_t>(reinterpret_cast<uint64_t*>(p), in.atomic, data, c, false);
                if (in.memRtn)
                    w.vrow(dst)[l] = uint32_t(old), w.vrow(dst + 1)[l] = uint32_t(old >> 32);
            }
        }
    }
    ldsConflicts(dwAddr, nAddr, lanesPerCycle);
}

__attribute__((always_inline)) inline void MemExec::ds() {
    const uint64_t exec = x.execMask;
    const unsigned addrReg = in.src[0], d0 = in.src[1], d1 = in.src[2], dst = in.vdst;
    x.checkVgpr(addrReg);
    if (!x.err.empty())
        return;
    const uint32_t* addr = w.vrow(addrReg);
    if (dsCrossLane(exec, addr))
        return;

    const unsigned bytes = in.memBytes;
    const unsigned dwords = bytes >= 4 ? bytes / 4 : 1;
    const bool two = in.op == Op::ds_read2 || in.op == Op::ds_write2;
    // Bank-conflict model: 32 banks of 4 bytes; each cycle serves 32 dword accesses, so a
    // b32 access takes one half-wave per cycle, a b64 (or read2/write2 of b32) a quarter-wave.
    // Within a cycle, distinct dwords in one bank serialise; equal dwords broadcast.
    const unsigned perLane = two ? 2 * dwords : dwords;
    const unsigned lanesPerCycle = std::max(1u, 32u / perLane);
    const DsAccess access{exec, addr, d0, d1, dst, bytes, dwords, lanesPerCycle, two};
    if ((in.op == Op::ds_read || in.op == Op::ds_write) && !in.memD16 && bytes >= 4 && exec &&
        dsPlain(access))
        return;
    dsLanes(access);
}

void MemExec::ldsConflicts(uint64_t exec, const uint32_t* laneAddr, unsigned dwords,
                           unsigned lanesPerCycle) {
    uint32_t dwAddr[64][8];
    unsigned nAddr[64] = {};
    for (int l = 0; l < 64; ++l) {
        if (!((exec >> l) & 1))
            continue;
        for (unsigned k = 0; k < dwords; ++k)
            dwAddr[l][nAddr[l]++] = (laneAddr[l] >> 2) + k;
    }
    ldsConflicts(dwAddr, nAddr, lanesPerCycle);
}

void MemExec::ldsConflicts(const uint32_t (*dwAddr)[8], const unsigned* nAddr,
                           unsigned lanesPerCycle) {
    // Bank conflicts. Fast path: every bank sees one dword (or several lanes the same dword);
    // otherwise count the distinct dwords per bank exactly (at most 32 accesses per cycle).
    uint64_t conflicts = 0;
    for (unsigned first = 0; first < 64; first += lanesPerCycle) {
        const unsigned last = std::min(64u, first + lanesPerCycle);
        uint32_t bankAddr[32];
        uint32_t used = 0;
        bool clash = false;
        for (unsigned l = first; l < last && !clash; ++l)
            for (unsigned k = 0; k < nAddr[l]; ++k) {
                uint32_t a = dwAddr[l][k];
                unsigned bank = a & 31;
                if (!((used >> bank) & 1)) {
                    used |= 1u << bank;
                    bankAddr[bank] = a;
                } else if (bankAddr[bank] != a) {
                    clash = true;
                    break;
                }
            }
        if (!clash)
            continue;
        uint64_t keys[64];
        unsigned n = 0;
        for (unsigned l = first; l < last; ++l)
            for (unsigned k = 0; k < nAddr[l] && n < 64; ++k)
                keys[n++] = uint64_t(dwAddr[l][k] & 31) << 32 | dwAddr[l][k];
        std::sort(keys, keys + n);
        unsigned worst = 1, run = 0;
        for (unsigned i = 0; i < n; ++i) {
            if (i > 0 && keys[i] == keys[i - 1])
                continue; // same dword: broadcast
            run = (i > 0 && (keys[i] >> 32) == (keys[i - 1] >> 32)) ? run + 1 : 1;
            worst = std::max(worst, run);
        }
        conflicts += worst - 1;
    }
    ex.stats.ldsConflictCycles += conflicts;
}

// ---- Scalar memory ---------------------------------------------------------------------------

__attribute__((always_inline)) inline void MemExec::smem() {
    switch (in.op) {
    case Op::s_dcache_inv:
    case Op::s_dcache_wb:
    case Op::s_dcache_inv_vol:
    case Op::s_dcache_wb_vol:
        return;
    case Op::s_memtime:
    case Op::s_memrealtime: {
        uint64_t t =
            static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
        x.wrSgpr64(in.vdst, in.op == Op::s_memrealtime ? t / 10 : t);
        return;
    }
    default:
        break;
    }
    if (in.op != Op::s_load && in.op != Op::s_buffer_load) {
        x.err = "not implemented";
        return;
    }
    uint64_t offset = in.smemImm ? uint64_t(in.imm) : x.sread(in.soffset);
    unsigned n = in.memBytes;
    uint64_t base;
    uint64_t limit = ~0ull;
    if (in.op == Op::s_load) {
        base = x.sread64(in.saddr, false);
    } else {
        uint32_t d[4];
        for (int i = 0; i < 4; ++i)
            d[i] = x.sread(in.saddr + i);
        BufferRsrc b(d);
        base = b.base;
        limit = b.numRecords;
    }
    uint64_t a = (base + offset) & ~3ull;
    // A scalar load is the wave's: its first active lane stands for it in a fault.
    const int lane = w.exec() ? std::countr_zero(w.exec()) : 0;
    for (unsigned k = 0; k < n; ++k) {
        uint32_t v = 0;
        if (offset + 4 * k < limit) {
            uint8_t* p = global(a + 4 * k, 4, lane);
            if (!p)
                return;
            memcpy(&v, p, 4);
        }
        x.wrSgpr(in.vdst + k, v);
    }
}

// ---- Entry points ----------------------------------------------------------------------------

void WaveExec::smem() {
    MemExec{*this, ex, w, in}.smem();
}

// AVX2 clones chosen at load time where the host has it: the lane loops (addresses, bounds,
// block copies) run 8 wide.
DUET_GCN_AVX2_CLONE void WaveExec::ds() {
    MemExec{*this, ex, w, in}.ds();
}

void Executor::waitVectorMemory() {
    // Real fences, since work-groups run concurrently on host threads: gfx9's agent- and
    // system-scope release and seq_cst sequences are "s_waitcnt vmcnt(0)" before the access
    // (and its acquire sequences one after it, then buffer_wbinvl1_vol), so this is where a
    // store must become visible before the wave's later loads.
    if (m_globalStoresUnfenced) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        m_globalStoresUnfenced = false;
    } else {
        std::atomic_thread_fence(std::memory_order_acquire);
    }
}

void Executor::invalidateL1() {
    std::atomic_thread_fence(std::memory_order_acquire);
}

DUET_GCN_AVX2_CLONE void WaveExec::vmem() {
    MemExec{*this, ex, w, in}.vmem();
}

} // namespace duet::gcn::model
