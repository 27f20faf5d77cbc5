// The fake libcuda's virtual memory management (cuMemCreate and its kin): an allocation is a
// memfd, exported as a duplicate of it, and mapped with mmap at an address range reserved with
// PROT_NONE, so the fake "GPU" (the host) reaches it where CUDA would put it. Every call is
// counted (duetFakeCalls); duetFakeLiveAllocations says how many are not released yet.
#include "fake_cuda.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

extern "C" int duetFakeEnter(const char* name); // fake_cuda.cpp: counts, injected failures

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2;
constexpr size_t kGranularity = 64 * 1024;
std::atomic<int> live{0};

/// CUmemAllocationProp as cuda.h lays it out.
struct Prop {
    int type, handleTypes;
    int locationType, locationId;
    void* win32;
    unsigned char flags[8];
};

} // namespace

extern "C" {

int cuMemGetAllocationGranularity(size_t* granularity, const Prop* prop, int) {
    if (int e = duetFakeEnter("cuMemGetAllocationGranularity"))
        return e;
    if (!granularity || !prop)
        return kInvalidValue;
    *granularity = kGranularity;
    return kSuccess;
}

int cuMemCreate(unsigned long long* handle, size_t bytes, const Prop* prop, unsigned long long) {
    if (int e = duetFakeEnter("cuMemCreate"))
        return e;
    if (!handle || !prop || !bytes || bytes % kGranularity || prop->type != 1 ||
        prop->handleTypes != 1 || prop->locationType != 1)
        return kInvalidValue;
    int fd = memfd_create("duet-fake-cuda", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, off_t(bytes)) != 0) {
        if (fd >= 0)
            close(fd);
        return kOutOfMemory;
    }
    *handle = unsigned(fd);
    ++live;
    return kSuccess;
}

int cuMemRelease(unsigned long long handle) {
    if (int e = duetFakeEnter("cuMemRelease"))
        return e;
    close(int(handle));
    --live;
    return kSuccess;
}

int cuMemExportToShareableHandle(void* shareable, unsigned long long handle, int type,
                                 unsigned long long) {
    if (int e = duetFakeEnter("cuMemExportToShareableHandle"))
        return e;
    if (!shareable || type != 1)
        return kInvalidValue;
    *static_cast<int*>(shareable) = fcntl(int(handle), F_DUPFD_CLOEXEC, 0);
    return kSuccess;
}

int cuMemAddressReserve(uint64_t* pointer, size_t bytes, size_t, uint64_t, unsigned long long) {
    if (int e = duetFakeEnter("cuMemAddressReserve"))
        return e;
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return kOutOfMemory;
    *pointer = reinterpret_cast<uintptr_t>(p);
    return kSuccess;
}

int cuMemAddressFree(uint64_t pointer, size_t bytes) {
    if (int e = duetFakeEnter("cuMemAddressFree"))
        return e;
    munmap(reinterpret_cast<void*>(uintptr_t(pointer)), bytes);
    return kSuccess;
}

int cuMemMap(uint64_t pointer, size_t bytes, size_t offset, unsigned long long handle,
             unsigned long long) {
    if (int e = duetFakeEnter("cuMemMap"))
        return e;
    void* p = mmap(reinterpret_cast<void*>(uintptr_t(pointer)), bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED, int(handle), off_t(offset));
    return p == MAP_FAILED ? kInvalidValue : kSuccess;
}

int cuMemUnmap(uint64_t pointer, size_t bytes) {
    if (int e = duetFakeEnter("cuMemUnmap"))
        return e;
    // Back to a reservation, as CUDA leaves it.
    mmap(reinterpret_cast<void*>(uintptr_t(pointer)), bytes, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    return kSuccess;
}

int cuMemSetAccess(uint64_t, size_t, const void* desc, size_t count) {
    if (int e = duetFakeEnter("cuMemSetAccess"))
        return e;
    return desc && count ? kSuccess : kInvalidValue;
}

int duetFakeLiveAllocations() {
    return live.load();
}
}
