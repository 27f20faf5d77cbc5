// CUDA–GL interop for the NVIDIA device: which GL contexts it runs (EGL_NV_device_cuda, GL
// device UUIDs, cuGLGetDevices), GL objects registered, mapped and copied through the CUDA
// driver's graphics API (core/gl_interop.hpp), and the host-side commands on memory objects whose
// storage is such a mapping (device memory the host cannot touch).
#pragma once

#include "core/device.hpp"
#include "devices/nvidia/cuda_executor.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace duet::rt::nvidia_device {

/// The NVIDIA device's DeviceBackend::glAffinity: Interop when the GL context runs on this GPU
/// (asked in this order: EGL_NV_device_cuda, the GL device UUIDs, cuGLGetDevices with the context
/// current), Foreign when it runs on another one, Copies when it is not NVIDIA's GL (Mesa) or the
/// driver lacks the graphics entry points. DUET_GL_INTEROP=copy always answers Copies;
/// DUET_GL_INTEROP=cuda asks cuGLGetDevices whatever the GL vendor (the fake driver's tests).
/// `name` is the device's, for messages. Any thread.
GlAffinity cudaGlAffinity(const CudaExecutor& executor, const std::string& name,
                          const GlContextFacts& facts);

/// GlInterop through cuGraphicsGL* on the executor's primary context and stream. Every call on
/// runtime/gl's GL thread (core/gl_interop.hpp).
class CudaGlInterop final : public GlInterop {
public:
    explicit CudaGlInterop(CudaExecutor& executor) : m_executor(executor) {}

    Result<std::unique_ptr<Resource>> registerBuffer(unsigned buffer, GlAccess access,
                                                     const std::string& what) override;
    Result<std::unique_ptr<Resource>> registerImage(unsigned name, unsigned target, GlAccess access,
                                                    const std::string& what) override;
    Status map(std::span<Resource* const> resources) override;
    Status unmap(std::span<Resource* const> resources) override;
    Result<std::pair<char*, size_t>> mappedPointer(Resource& buffer) override;
    Status copyImage(Resource& image, unsigned face, unsigned level, char* linear,
                     const Strided& at, const BoxSize& box, bool toImage) override;
    Status copyBox(char* dst, const Strided& dstAt, const char* src, const Strided& srcAt,
                   const BoxSize& box) override;
    Status finish() override;
    /// cuMemCreate'd device memory exported as a POSIX file descriptor, mapped at an address of
    /// its own readable and writable by this device.
    Result<std::unique_ptr<ExportedMemory>> exportMemory(size_t bytes,
                                                         const std::string& what) override;

private:
    friend struct CudaResource;
    /// Unmaps (when mapped) and unregisters a resource being destroyed.
    void forget(nvidia::cu::GraphicsResource handle, bool mapped);
    Status mapAll(std::span<Resource* const> resources, bool map);

    CudaExecutor& m_executor;
};

/// Host-side commands on memory objects whose storage is on the device (Mem::storageOnDevice: a
/// GL buffer acquired through CUDA–GL interop): rects staged through host memory, maps through
/// the object's host storage (Mem::hostData), all with the executor's copies. (Buffer fills are
/// memsets on the GPU, which reach that memory as they are.)
/// Thread-safe.
class DeviceStorageStaging {
public:
    explicit DeviceStorageStaging(CudaExecutor& executor) : m_executor(executor) {}

    Outcome readRect(const Mem& src, const Strided& srcAt, void* host, const Strided& hostAt,
                     const BoxSize& box);
    Outcome writeRect(Mem& dst, const Strided& dstAt, const void* host, const Strided& hostAt,
                      const BoxSize& box);
    Outcome copyRect(const Mem& src, const Strided& srcAt, Mem& dst, const Strided& dstAt,
                     const BoxSize& box);
    /// Copies the mapped region from the device into the host storage (unless the map
    /// invalidates it) and remembers the map.
    Outcome map(Mem& m, const Strided& at, const BoxSize& box, cl_map_flags flags);
    /// Writes a remembered map's region back to the device (when it was mapped for writing and
    /// the storage is still there).
    Outcome unmap(Mem& m, void* ptr);

private:
    struct Mapping {
        const Mem* mem;
        void* ptr;
        size_t begin, bytes;
        bool writes;
    };
    /// The bytes of a box from its first to its last, in `at`'s layout.
    static size_t span(const Strided& at, const BoxSize& box);

    CudaExecutor& m_executor;
    std::mutex m_mutex; ///< m_maps; a leaf
    std::vector<Mapping> m_maps;
};

} // namespace duet::rt::nvidia_device
