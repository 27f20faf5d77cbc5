// Shared virtual memory: clSVMAlloc's allocations, which context owns each, and the lookups the
// API needs (is this pointer inside an allocation, and of which context).
#pragma once

#include "core/commands.hpp"

#include <CL/cl.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace duet::rt {

class Context;

/// One clSVMAlloc allocation. Its bytes are host memory that every SVM-capable device of the
/// context addresses at the same address (the CPU and GCN-model devices run in the host's
/// address space).
struct SvmAllocation {
    const Context* context = nullptr;
    char* base = nullptr;
    size_t size = 0;
    cl_svm_mem_flags flags = 0;
};

/// The largest alignment clSVMAlloc accepts (a page).
inline constexpr size_t kSvmMaxAlignment = 4096;

/// `size` bytes for `context`, aligned to `alignment` (a power of two up to kSvmMaxAlignment;
/// 0 means 128, enough for any OpenCL C type), recorded with `flags`. Null when out of memory.
/// Thread-safe.
void* svmAllocate(const Context& context, cl_svm_mem_flags flags, size_t size, size_t alignment);

/// Frees the allocation of `context` that starts at `ptr`. False (nothing freed) when `ptr` does
/// not start one of that context's allocations. Thread-safe.
bool svmFree(const Context& context, void* ptr);

/// The allocation whose bytes hold `ptr` (of any context), or nullopt. Thread-safe.
std::optional<SvmAllocation> svmFind(const void* ptr);

/// Frees every allocation `context` still has (the context is being destroyed).
void svmFreeAll(const Context& context);

} // namespace duet::rt

// ---- Commands (arguments checked by api/svm_pipe.cpp) ---------------------------------------
// SVM lives in host memory that the SVM-capable devices address directly, so maps, unmaps and
// migrations only order; copies and fills are the host's.

namespace duet::rt {

using SvmFreeFn = void(CL_CALLBACK*)(cl_command_queue, cl_uint, void**, void*);

/// clEnqueueSVMFree: calls `fn` with the pointers when it runs, or frees them (svmFree).
Enqueued enqueueSvmFree(Queue& queue, std::vector<void*> pointers, SvmFreeFn fn, void* userData,
                        const Submit& how);
/// clEnqueueSVMMemcpy: the ranges do not overlap.
Enqueued enqueueSvmMemcpy(Queue& queue, void* dst, const void* src, size_t size, const Submit& how);
/// clEnqueueSVMMemFill: `pattern` (`patternSize` bytes, dividing `size`) is copied now.
Enqueued enqueueSvmMemFill(Queue& queue, void* dst, const void* pattern, size_t patternSize,
                           size_t size, const Submit& how);
/// clEnqueueSVMMap, clEnqueueSVMUnmap, clEnqueueSVMMigrateMem: order only.
Enqueued enqueueSvmOrderOnly(Queue& queue, cl_command_type type, const Submit& how);

} // namespace duet::rt
