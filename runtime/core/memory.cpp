// Memory objects and samplers.
#include "core/memory.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

namespace duet::rt {

constexpr size_t kStorageAlign = 128; // >= CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8 and a cache line

constexpr size_t kHugePage = 2u << 20;

char* allocateStorage(size_t size) {
    // Each allocation starts at a different offset within a 4 KiB page (a multiple of the
    // 128-byte base alignment): buffers that all start at the same offset make a kernel's
    // loads from one look like they alias its stores to another (4K aliasing), stalling
    // streaming kernels. The offset also leaves room to remember the
    // block's start. Large buffers go on transparent huge pages (where the system grants them
    // on request) to spare the TLB.
    static std::atomic<unsigned> counter{0};
    const size_t offset =
        kStorageAlign * (1 + counter.fetch_add(1, std::memory_order_relaxed) % 31);
    const bool huge = size >= kHugePage;
    const size_t align = huge ? kHugePage : kStorageAlign;
    const size_t rounded = (size + offset + align - 1) / align * align;
    char* base = static_cast<char*>(std::aligned_alloc(align, rounded));
    if (!base)
        return nullptr;
    if (huge)
        madvise(base, rounded, MADV_HUGEPAGE);
    char* p = base + offset;
    std::memcpy(p - sizeof(char*), &base, sizeof(char*));
    return p;
}

void freeStorage(char* p) {
    if (!p)
        return;
    char* base;
    std::memcpy(&base, p - sizeof(char*), sizeof(char*));
    std::free(base);
}

Mem::Mem(Ref<Context> context, cl_mem_object_type type, cl_mem_flags flags, size_t size,
         void* hostPtr, char* storage, bool owns)
    : _cl_mem(kTag), m_context(std::move(context)), m_type(type), m_flags(flags), m_size(size),
      m_hostPtr(hostPtr), m_home(storage), m_storage(storage), m_owns(owns),
      m_anchor(std::make_shared<Anchor>()) {
    m_anchor->mem = this;
}

Mem::~Mem() {
    // First, so that no weak reference can retain the object from here on; a WeakMemRef::lock
    // racing with the last release holds the mutex, which keeps the object in one piece until
    // its tryRetain has seen the count at zero.
    {
        std::lock_guard lock(m_anchor->mutex);
        m_anchor->mem = nullptr;
    }
    // Spec: destructor callbacks run in reverse order, before the memory is released.
    for (auto it = m_destructorCallbacks.rbegin(); it != m_destructorCallbacks.rend(); ++it)
        it->first(this, it->second);
    // After the application's callbacks (GL state: a released-while-acquired buffer is handed
    // back to GL here), before the storage goes.
    m_attachment.reset();
    if (m_owns)
        m_context->freeStorage(m_home);
    if (m_hostRegistered)
        m_context->unregisterHostMemory(m_hostPtr);
}

Ref<Mem> WeakMemRef::lock() const {
    if (!m_anchor)
        return {};
    std::lock_guard lock(m_anchor->mutex);
    if (m_anchor->mem && m_anchor->mem->tryRetain())
        return adoptRef(m_anchor->mem);
    return {};
}

void Mem::settleStorage() const {
    const Mem* owner = this;
    while (owner->parent() || owner->bufferRef)
        owner = owner->parent() ? owner->parent() : owner->bufferRef.get();
    if (owner->m_attachment)
        owner->m_attachment->settleStorage();
}

void Mem::addDestructorCallback(DestructorFn fn, void* userData) {
    std::lock_guard lock(m_mutex);
    m_destructorCallbacks.emplace_back(fn, userData);
}

uint32_t Sampler::kernelValue() const {
    // Same bit layout as clang's sampler_t literals (CLK_* values of opencl-c-base.h):
    // normalized coords 0x1, addressing mode << 1 (CL_ADDRESS_* - 0x1130), filter 0x10/0x20.
    uint32_t v = normalizedCoords ? 0x1 : 0x0;
    v |= uint32_t(addressingMode - CL_ADDRESS_NONE) << 1;
    v |= filterMode == CL_FILTER_LINEAR ? 0x20 : 0x10;
    return v;
}

} // namespace duet::rt
