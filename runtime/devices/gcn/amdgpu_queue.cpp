// Command submission to a real AMD GPU through libdrm_amdgpu. UNTESTED ON HARDWARE: every
// call follows libdrm's documented API (amdgpu.h), every failure becomes a readable string.
//
// Addressing: the runtime lays out kernargs, the dispatch packet, scratch, the printf buffer,
// image descriptors and buffers in ordinary host memory and writes their host addresses into
// kernargs and user SGPRs (the software model reads them directly). Rather than translate
// every such pointer, host memory is wrapped as userptr buffer objects mapped at GPU VA ==
// host VA (amdgpu_va_range_alloc with va_base_required, then amdgpu_bo_va_op): x86-64 user
// addresses lie below 2^47, inside the low half of a gfx9 GPU's 48-bit VM, so the very same
// pointers work on the GPU. The command buffer itself is a driver-owned GTT BO whose GPU VA
// comes from the high range (AMDGPU_VA_RANGE_HIGH), which never collides with a host address.
// libdrm shares one device handle, VM and VA manager among all users of a GPU in a process;
// Mesa's drivers allocate from the high range too, so the low range is left to host addresses.
#include "devices/gcn/amdgpu_queue.hpp"
#include "devices/gcn/amdgpu_target.hpp"
#include "devices/gcn/pm4.hpp"

#include <amdgpu.h>
#include <amdgpu_drm.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

namespace duet::gcn {

static_assert(kAmdgpuFamilyAi == AMDGPU_FAMILY_AI && kAmdgpuFamilyRv == AMDGPU_FAMILY_RV);

namespace {

/// libdrm returns negative errno values (and, for the VA manager, occasionally positive
/// ones): either way the text of that errno.
std::string drmError(const char* call, int r) {
    return std::string(call) + " failed: " + std::strerror(r < 0 ? -r : r);
}

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

constexpr uint64_t k4GiB = 1ull << 32;

} // namespace

struct AmdgpuQueue::Impl {
    /// One userptr BO over whole host pages [start, end), mapped at the same GPU VA.
    struct Mapping {
        uint64_t end = 0;
        amdgpu_bo_handle bo = nullptr;
        amdgpu_va_handle va = nullptr;
        uint64_t lastUse = 0; ///< submission serial that last listed it
    };

    int fd = -1;
    amdgpu_device_handle dev = nullptr;
    amdgpu_context_handle ctx = nullptr;
    uint64_t pageSize = 4096;
    uint64_t vaStart = 0, vaEnd = 0; ///< the general (low) VA range host addresses must lie in

    amdgpu_bo_handle ib = nullptr;
    amdgpu_va_handle ibVa = nullptr;
    uint64_t ibGpu = 0, ibBytes = 0;
    void* ibCpu = nullptr;

    std::map<uint64_t, Mapping> maps;                   ///< by start page; never overlapping
    std::vector<std::pair<uint64_t, uint64_t>> pending; ///< page ranges of the next submission
    uint64_t serial = 1;
    std::string broken;

    ~Impl() {
        for (auto& [start, m] : maps)
            release(start, m);
        freeIb();
        if (ctx)
            amdgpu_cs_ctx_free(ctx);
        if (dev)
            amdgpu_device_deinitialize(dev);
        if (fd >= 0)
            close(fd);
    }

    void release(uint64_t start, Mapping& m) {
        if (m.bo) {
            amdgpu_bo_va_op(m.bo, 0, m.end - start, start, 0, AMDGPU_VA_OP_UNMAP);
            amdgpu_bo_free(m.bo);
        }
        if (m.va)
            amdgpu_va_range_free(m.va);
        m = Mapping{};
    }

    void freeIb() {
        if (ib) {
            if (ibCpu)
                amdgpu_bo_cpu_unmap(ib);
            if (ibGpu)
                amdgpu_bo_va_op(ib, 0, ibBytes, ibGpu, 0, AMDGPU_VA_OP_UNMAP);
            amdgpu_bo_free(ib);
        }
        if (ibVa)
            amdgpu_va_range_free(ibVa);
        ib = nullptr;
        ibVa = nullptr;
        ibCpu = nullptr;
        ibGpu = ibBytes = 0;
    }

    /// A userptr BO over [start, end) (page-aligned) mapped at GPU VA `start`.
    std::string map(uint64_t start, uint64_t end, Mapping& out) {
        const uint64_t bytes = end - start;
        if (start < vaStart || end > vaEnd)
            return "host range " + hex(start) + ".." + hex(end) +
                   " lies outside the GPU's virtual address range " + hex(vaStart) + ".." +
                   hex(vaEnd) + ", so it cannot be mapped at the same GPU address";
        if (start < k4GiB && end > k4GiB)
            return "host range " + hex(start) + ".." + hex(end) +
                   " straddles 4 GiB, which splits libdrm's VA ranges";
        Mapping m;
        m.end = end;
        // Anonymous memory only (libdrm passes USERPTR_ANONONLY): heap and mmap'd buffers are;
        // a file-backed CL_MEM_USE_HOST_PTR region is refused here with the errno.
        int r = amdgpu_create_bo_from_user_mem(dev, reinterpret_cast<void*>(start), bytes, &m.bo);
        if (r)
            return drmError("amdgpu_create_bo_from_user_mem", r) + " (host range " + hex(start) +
                   ".." + hex(end) + ")";
        uint64_t got = 0;
        r = amdgpu_va_range_alloc(dev, amdgpu_gpu_va_range_general, bytes, pageSize, start, &got,
                                  &m.va, end <= k4GiB ? AMDGPU_VA_RANGE_32_BIT : 0);
        if (r || got != start) {
            std::string why = r ? drmError("amdgpu_va_range_alloc", r)
                                : "amdgpu_va_range_alloc returned " + hex(got);
            if (!r)
                amdgpu_va_range_free(m.va);
            amdgpu_bo_free(m.bo); // never mapped: nothing to unmap
            return why + " (GPU VA " + hex(start) + " for a host range of " +
                   std::to_string(bytes) + " bytes is not free)";
        }
        r = amdgpu_bo_va_op(m.bo, 0, bytes, start, 0, AMDGPU_VA_OP_MAP);
        if (r) {
            amdgpu_va_range_free(m.va);
            m.va = nullptr;
            amdgpu_bo_free(m.bo);
            return drmError("amdgpu_bo_va_op(MAP)", r) + " at " + hex(start);
        }
        out = m;
        return {};
    }

    /// Makes sure one mapping covers the pages [start, end); overlapping mappings are merged
    /// into one over their union (two small allocations often share a page, and one GPU VA
    /// can be mapped only once).
    std::string cover(uint64_t start, uint64_t end) {
        auto it = maps.upper_bound(start);
        if (it != maps.begin()) {
            auto prev = std::prev(it);
            if (prev->second.end > start)
                it = prev;
        }
        if (it != maps.end() && it->first <= start && it->second.end >= end) {
            it->second.lastUse = serial;
            return {};
        }
        // Nothing is in flight between submissions (submitAndWait waits), so mappings may go.
        uint64_t lo = start, hi = end;
        while (it != maps.end() && it->first < end) {
            lo = std::min(lo, it->first);
            hi = std::max(hi, it->second.end);
            release(it->first, it->second);
            it = maps.erase(it);
        }
        Mapping m;
        std::string err = map(lo, hi, m);
        if (!err.empty() && (lo != start || hi != end)) {
            // The union may include pages freed since (a stale mapping): map just this range.
            lo = start;
            hi = end;
            err = map(lo, hi, m);
        }
        if (!err.empty())
            return err;
        m.lastUse = serial;
        maps.emplace(lo, m);
        return {};
    }

    const Mapping* find(uint64_t start, uint64_t end) const {
        auto it = maps.upper_bound(start);
        if (it == maps.begin())
            return nullptr;
        --it;
        return it->second.end >= end ? &it->second : nullptr;
    }

    std::string ensureIb(uint64_t bytes) {
        if (ib && ibBytes >= bytes)
            return {};
        freeIb();
        bytes = std::max<uint64_t>(64 * 1024, (bytes + pageSize - 1) / pageSize * pageSize);
        amdgpu_bo_alloc_request req{};
        req.alloc_size = bytes;
        req.phys_alignment = pageSize;
        req.preferred_heap = AMDGPU_GEM_DOMAIN_GTT;
        req.flags = AMDGPU_GEM_CREATE_CPU_GTT_USWC; // the CPU only writes command buffers
        int r = amdgpu_bo_alloc(dev, &req, &ib);
        if (r) {
            ib = nullptr;
            return drmError("amdgpu_bo_alloc (command buffer, GTT)", r);
        }
        ibBytes = bytes;
        r = amdgpu_bo_cpu_map(ib, &ibCpu);
        if (r) {
            ibCpu = nullptr;
            freeIb();
            return drmError("amdgpu_bo_cpu_map (command buffer)", r);
        }
        uint64_t va = 0;
        r = amdgpu_va_range_alloc(dev, amdgpu_gpu_va_range_general, bytes, pageSize, 0, &va, &ibVa,
                                  AMDGPU_VA_RANGE_HIGH);
        if (r) {
            ibVa = nullptr;
            freeIb();
            return drmError("amdgpu_va_range_alloc (command buffer, high range)", r);
        }
        r = amdgpu_bo_va_op(ib, 0, bytes, va, 0, AMDGPU_VA_OP_MAP);
        if (r) {
            freeIb();
            return drmError("amdgpu_bo_va_op(MAP) (command buffer)", r);
        }
        ibGpu = va;
        return {};
    }

    /// Mappings not listed by the latest submission go once the cache grows large (their
    /// host memory may have been freed; each holds GPU VA and an MMU notifier).
    void trim() {
        constexpr size_t kKeep = 256;
        if (maps.size() <= kKeep)
            return;
        for (auto it = maps.begin(); it != maps.end();) {
            if (it->second.lastUse < serial) {
                release(it->first, it->second);
                it = maps.erase(it);
            } else {
                ++it;
            }
        }
    }
};

AmdgpuQueue::AmdgpuQueue(std::unique_ptr<Impl> impl) : m(std::move(impl)) {}
AmdgpuQueue::~AmdgpuQueue() = default;

std::unique_ptr<AmdgpuQueue> AmdgpuQueue::open(const std::string& renderNode, std::string& error) {
    auto impl = std::make_unique<Impl>();
    impl->fd = ::open(renderNode.c_str(), O_RDWR | O_CLOEXEC);
    if (impl->fd < 0) {
        error = "cannot open " + renderNode + ": " + std::strerror(errno);
        return nullptr;
    }
    uint32_t major = 0, minor = 0;
    if (int r = amdgpu_device_initialize(impl->fd, &major, &minor, &impl->dev)) {
        impl->dev = nullptr;
        error = drmError("amdgpu_device_initialize", r) + " on " + renderNode;
        return nullptr;
    }
    if (int r = amdgpu_cs_ctx_create(impl->dev, &impl->ctx)) {
        impl->ctx = nullptr;
        error = drmError("amdgpu_cs_ctx_create", r) + " on " + renderNode;
        return nullptr;
    }
    if (int r = amdgpu_va_range_query(impl->dev, amdgpu_gpu_va_range_general, &impl->vaStart,
                                      &impl->vaEnd)) {
        error = drmError("amdgpu_va_range_query", r) + " on " + renderNode;
        return nullptr;
    }
    const long page = sysconf(_SC_PAGESIZE);
    impl->pageSize = page > 0 ? uint64_t(page) : 4096;
    if (std::string e = impl->ensureIb(64 * 1024); !e.empty()) {
        error = e + " on " + renderNode;
        return nullptr;
    }
    return std::unique_ptr<AmdgpuQueue>(new AmdgpuQueue(std::move(impl)));
}

std::string AmdgpuQueue::useHostRange(const void* p, uint64_t bytes) {
    if (!m->broken.empty())
        return m->broken;
    if (!bytes)
        return {};
    const uint64_t address = reinterpret_cast<uint64_t>(p);
    const uint64_t start = address / m->pageSize * m->pageSize;
    const uint64_t end = (address + bytes + m->pageSize - 1) / m->pageSize * m->pageSize;
    if (std::string e = m->cover(start, end); !e.empty())
        return e;
    m->pending.emplace_back(start, end);
    return {};
}

void AmdgpuQueue::dropPending() {
    m->pending.clear();
}

const std::string& AmdgpuQueue::broken() const {
    return m->broken;
}

std::string AmdgpuQueue::submitAndWait(std::span<const uint32_t> dwords, uint64_t timeoutNs) {
    Impl& q = *m;
    if (!q.broken.empty())
        return q.broken;
    struct Clear {
        Impl& q;
        ~Clear() {
            q.pending.clear();
            ++q.serial;
        }
    } clear{q};

    // The compute ring fetches IBs in 8-dword units (Mesa and the kernel pad compute IBs to
    // a multiple of 8): pad with one NOP packet, or gfx9's single-dword NOP (count 0x3fff).
    const size_t pad = (8 - dwords.size() % 8) % 8;
    const size_t total = dwords.size() + pad;
    if (std::string e = q.ensureIb(total * 4); !e.empty())
        return e;
    auto* ibDwords = static_cast<uint32_t*>(q.ibCpu);
    std::memcpy(ibDwords, dwords.data(), dwords.size() * 4);
    if (pad == 1) {
        ibDwords[dwords.size()] = 0xffff1000u;
    } else if (pad > 1) {
        ibDwords[dwords.size()] = pm4::header(pm4::kNop, uint32_t(pad - 1));
        std::memset(ibDwords + dwords.size() + 1, 0, (pad - 1) * 4);
    }

    // Every BO the IB may touch: the command buffer and the host ranges the launch used
    // (merges in cover() may have replaced an earlier range's BO; look each up again).
    std::vector<amdgpu_bo_handle> bos{q.ib};
    for (auto [start, end] : q.pending) {
        const Impl::Mapping* mapping = q.find(start, end);
        if (!mapping) {
            if (std::string e = q.cover(start, end); !e.empty())
                return e;
            mapping = q.find(start, end);
            if (!mapping)
                return "host range " + hex(start) + ".." + hex(end) +
                       " could not be kept mapped together with the launch's other ranges";
        }
        if (std::find(bos.begin(), bos.end(), mapping->bo) == bos.end())
            bos.push_back(mapping->bo);
    }
    amdgpu_bo_list_handle list = nullptr;
    if (int r = amdgpu_bo_list_create(q.dev, uint32_t(bos.size()), bos.data(), nullptr, &list))
        return drmError("amdgpu_bo_list_create", r);

    amdgpu_cs_ib_info ib{};
    ib.ib_mc_address = q.ibGpu;
    ib.size = uint32_t(total);
    amdgpu_cs_request request{};
    request.ip_type = AMDGPU_HW_IP_COMPUTE;
    request.ip_instance = 0;
    request.ring = 0;
    request.resources = list;
    request.number_of_ibs = 1;
    request.ibs = &ib;
    int r = amdgpu_cs_submit(q.ctx, 0, &request, 1);
    amdgpu_bo_list_destroy(list); // the kernel holds its own references once submitted
    if (r)
        return drmError("amdgpu_cs_submit (compute ring 0)", r);

    amdgpu_cs_fence fence{};
    fence.context = q.ctx;
    fence.ip_type = AMDGPU_HW_IP_COMPUTE;
    fence.ip_instance = 0;
    fence.ring = 0;
    fence.fence = request.seq_no;
    uint32_t expired = 0;
    r = amdgpu_cs_query_fence_status(&fence, timeoutNs, 0, &expired);
    if (r) {
        q.broken = drmError("amdgpu_cs_query_fence_status", r) +
                   "; the GCN device stops submitting (the GPU may have been reset)";
        return q.broken;
    }
    if (!expired) {
        q.broken = "the dispatch did not finish within " + std::to_string(timeoutNs / 1000000) +
                   " ms (DUET_AMDGPU_TIMEOUT_MS); the GCN device stops submitting, since the "
                   "GPU may still write host memory the runtime reuses";
        return q.broken;
    }
    uint64_t resetFlags = 0;
    if (amdgpu_cs_query_reset_state2(q.ctx, &resetFlags) == 0 &&
        (resetFlags & AMDGPU_CTX_QUERY2_FLAGS_RESET)) {
        q.broken = "the GPU was reset while the dispatch ran (a hang or a fault in the kernel); "
                   "the GCN device stops submitting";
        return q.broken;
    }
    q.trim();
    return {};
}

} // namespace duet::gcn
