// The GCN device's hardware sink: one compute queue on a real AMD GPU through libdrm's amdgpu
// interface (device handle, context, buffer objects, GPU VA mappings, one indirect buffer per
// submission, fence wait). libdrm's headers stay in amdgpu_queue.cpp.
//
// UNTESTED ON HARDWARE: written against libdrm's documented API (amdgpu.h) on a machine
// without an AMD GPU; discovery only enables it with DUET_AMDGPU_SUBMIT=1.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace duet::gcn {

class AmdgpuQueue {
public:
    /// Opens `renderNode` (/dev/dri/renderD*), initialises libdrm's device and creates a
    /// context. On failure returns null and sets `error` to a readable reason.
    static std::unique_ptr<AmdgpuQueue> open(const std::string& renderNode, std::string& error);
    ~AmdgpuQueue();
    AmdgpuQueue(const AmdgpuQueue&) = delete;
    AmdgpuQueue& operator=(const AmdgpuQueue&) = delete;

    /// Makes host memory [p, p + bytes) GPU-visible at GPU VA == host VA (a userptr buffer
    /// object, cached across submissions) and adds it to the next submission's BO list.
    /// Returns an empty string on success, or why not.
    std::string useHostRange(const void* p, uint64_t bytes);
    /// Forgets the ranges useHostRange added since the last submission (a launch that failed
    /// before it was submitted).
    void dropPending();
    /// Submits `dwords` as one indirect buffer on the compute ring with every range used since
    /// the last submission, then waits for the kernel's fence for at most `timeoutNs`.
    /// After a timeout or a GPU error the queue refuses further work (the GPU may still be
    /// writing host memory the runtime would reuse).
    std::string submitAndWait(std::span<const uint32_t> dwords, uint64_t timeoutNs);
    /// Why the queue refuses work; empty while it works.
    const std::string& broken() const;

private:
    struct Impl;
    explicit AmdgpuQueue(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m;
};

} // namespace duet::gcn
