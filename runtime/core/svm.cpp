// The SVM allocation registry: one process-wide map from address to allocation.
#include "core/svm.hpp"
#include "core/queue.hpp"

#include <cstring>

#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <vector>

namespace duet::rt {
namespace {

/// Allocations by base address. The mutex is a leaf: held only to read or change the map.
struct Registry {
    std::mutex mutex;
    std::map<const char*, SvmAllocation> byBase;
};

Registry& registry() {
    static Registry* r = new Registry; // never destroyed: frees may come from static destructors
    return *r;
}

} // namespace

void* svmAllocate(const Context& context, cl_svm_mem_flags flags, size_t size, size_t alignment) {
    const size_t align = alignment < 128 ? 128 : alignment;
    const size_t rounded = (size + align - 1) / align * align; // aligned_alloc wants a multiple
    char* p = static_cast<char*>(std::aligned_alloc(align, rounded));
    if (!p)
        return nullptr;
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.byBase[p] = SvmAllocation{&context, p, size, flags};
    return p;
}

bool svmFree(const Context& context, void* ptr) {
    Registry& r = registry();
    {
        std::lock_guard lock(r.mutex);
        auto it = r.byBase.find(static_cast<const char*>(ptr));
        if (it == r.byBase.end() || it->second.context != &context)
            return false;
        r.byBase.erase(it);
    }
    std::free(ptr);
    return true;
}

std::optional<SvmAllocation> svmFind(const void* ptr) {
    const char* p = static_cast<const char*>(ptr);
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.byBase.upper_bound(p);
    if (it == r.byBase.begin())
        return std::nullopt;
    --it;
    const SvmAllocation& a = it->second;
    if (p >= a.base + a.size) // one past the end belongs to no allocation
        return std::nullopt;
    return a;
}

void svmFreeAll(const Context& context) {
    std::vector<char*> mine;
    Registry& r = registry();
    {
        std::lock_guard lock(r.mutex);
        for (auto it = r.byBase.begin(); it != r.byBase.end();)
            if (it->second.context == &context) {
                mine.push_back(it->second.base);
                it = r.byBase.erase(it);
            } else {
                ++it;
            }
    }
    for (char* p : mine)
        std::free(p);
}

Enqueued enqueueSvmFree(Queue& queue, std::vector<void*> pointers, SvmFreeFn fn, void* userData,
                        const Submit& how) {
    Queue* q = &queue;
    return enqueueCommand(queue, CL_COMMAND_SVM_FREE, how,
                          [q, pointers = std::move(pointers), fn, userData]() mutable -> cl_int {
                              if (fn) {
                                  fn(q, cl_uint(pointers.size()), pointers.data(), userData);
                                  return CL_SUCCESS;
                              }
                              for (void* p : pointers)
                                  if (p)
                                      svmFree(*q->context(), p);
                              return CL_SUCCESS;
                          });
}

Enqueued enqueueSvmMemcpy(Queue& queue, void* dst, const void* src, size_t size,
                          const Submit& how) {
    return enqueueCommand(queue, CL_COMMAND_SVM_MEMCPY, how, [dst, src, size]() -> cl_int {
        std::memcpy(dst, src, size);
        return CL_SUCCESS;
    });
}

Enqueued enqueueSvmMemFill(Queue& queue, void* dst, const void* pattern, size_t patternSize,
                           size_t size, const Submit& how) {
    std::vector<unsigned char> bytes(static_cast<const unsigned char*>(pattern),
                                     static_cast<const unsigned char*>(pattern) + patternSize);
    return enqueueCommand(queue, CL_COMMAND_SVM_MEMFILL, how,
                          [dst, bytes = std::move(bytes), size]() -> cl_int {
                              auto* d = static_cast<unsigned char*>(dst);
                              const size_t n = bytes.size();
                              if (n == 1) {
                                  std::memset(d, bytes[0], size);
                                  return CL_SUCCESS;
                              }
                              for (size_t off = 0; off < size; off += n)
                                  std::memcpy(d + off, bytes.data(), n);
                              return CL_SUCCESS;
                          });
}

Enqueued enqueueSvmOrderOnly(Queue& queue, cl_command_type type, const Submit& how) {
    return enqueueCommand(queue, type, how, []() -> cl_int { return CL_SUCCESS; });
}

} // namespace duet::rt
