// CUDA–GL interop for the NVIDIA device: GL context affinity, cuGraphicsGL* registration, maps
// and array copies, and host-side commands on storage that a GL mapping put on the device.
#include "devices/nvidia/cuda_gl.hpp"

#include "core/memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace duet::rt::nvidia_device {

namespace cu = nvidia::cu;

namespace {

bool isNvidia(const std::string& vendor) {
    return vendor.find("NVIDIA") != std::string::npos;
}

std::string uuidText(const uint8_t* b) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out += '-';
        out += hex[b[i] >> 4];
        out += hex[b[i] & 15];
    }
    return out;
}

unsigned registerFlags(GlAccess access) {
    switch (access) {
    case GlAccess::ReadOnly:
        return cu::kGraphicsRegisterReadOnly;
    case GlAccess::WriteOnly:
        return cu::kGraphicsRegisterWriteDiscard;
    default:
        return cu::kGraphicsRegisterNone;
    }
}

cu::DevicePtr address(const void* p) {
    return cu::DevicePtr(reinterpret_cast<uintptr_t>(p));
}

} // namespace

GlAffinity cudaGlAffinity(const CudaExecutor& executor, const std::string& name,
                          const GlContextFacts& facts) {
    using Kind = GlAffinity::Kind;
    const nvidia::CudaDriver& cuda = executor.cuda();
    const cu::Device self = executor.cudaDevice();
    const std::string who = name + " (CUDA device " + std::to_string(self) + ")";
    const char* env = std::getenv("DUET_GL_INTEROP");
    const std::string knob = env ? env : "";
    if (knob == "copy")
        return {Kind::Copies, who + ": CUDA-GL interop off (DUET_GL_INTEROP=copy)"};
    if (!cuda.glInteropMissing.empty())
        return {Kind::Copies, who + ": the CUDA driver lacks " + cuda.glInteropMissing};
    const std::string gl = facts.describe();
    // The EGL display's device names its CUDA device: the surest answer.
    if (facts.cudaDevice >= 0) {
        if (facts.cudaDevice == self)
            return {Kind::Interop, who + " runs " + gl + " (EGL_NV_device_cuda)"};
        return {Kind::Foreign, who + " cannot share with " + gl +
                                   ": the GL context runs on another GPU, CUDA device " +
                                   std::to_string(facts.cudaDevice) + " (EGL_NV_device_cuda)"};
    }
    // GL_EXT_memory_object's device UUIDs are CUDA's.
    cu::Uuid uuid{};
    if (!facts.uuids.empty() && cuda.deviceGetUuid(&uuid, self) == cu::kSuccess) {
        for (const auto& u : facts.uuids)
            if (std::memcmp(u.data(), uuid.bytes, 16) == 0)
                return {Kind::Interop, who + " runs " + gl + " (GL_DEVICE_UUID_EXT)"};
        if (isNvidia(facts.vendor))
            return {Kind::Foreign, who + " cannot share with " + gl +
                                       ": the GL context runs on another GPU (GL device UUID " +
                                       uuidText(facts.uuids.front().data()) + ", this one " +
                                       uuidText(uuid.bytes) + ")"};
    }
    const bool forced = knob == "cuda";
    if (!forced && !facts.vendor.empty() && !isNvidia(facts.vendor))
        return {Kind::Copies,
                who + " shares " + gl + " through host copies: CUDA-GL interop needs NVIDIA's GL"};
    // Ask the driver about the current GL context.
    if (facts.current) {
        unsigned count = 0;
        cu::Device devices[16] = {};
        cu::Result r = cuda.glGetDevices(&count, devices, 16, cu::kGlDeviceListAll);
        if (r == cu::kSuccess && count > 0) {
            count = std::min(count, 16u);
            if (std::find(devices, devices + count, self) != devices + count)
                return {Kind::Interop, who + " runs " + gl + " (cuGLGetDevices)"};
            return {Kind::Foreign, who + " cannot share with " + gl +
                                       ": the GL context runs on another GPU, CUDA device " +
                                       std::to_string(devices[0]) + " (cuGLGetDevices)"};
        }
        return {Kind::Copies, who + " shares " + gl + " through host copies: " +
                                  executor.cudaError("cuGLGetDevices", r)};
    }
    if (forced || isNvidia(facts.vendor))
        return {Kind::Interop,
                who + " is taken to run " + gl +
                    " (NVIDIA's GL; which GPU is not known while the context is not current)"};
    return {Kind::Copies, who + " shares " + gl +
                              " through host copies: which GPU runs the GL context is unknown "
                              "(make it current before asking)"};
}

// ---- CudaGlInterop --------------------------------------------------------------------------

/// A registered GL object.
struct CudaResource final : GlInterop::Resource {
    CudaResource(CudaGlInterop& owner, cu::GraphicsResource h, std::string name)
        : interop(owner), handle(h), what(std::move(name)) {}
    ~CudaResource() override { interop.forget(handle, mapped); }
    CudaGlInterop& interop;
    cu::GraphicsResource handle;
    std::string what;
    bool mapped = false;
};

namespace {

CudaResource& cudaResource(GlInterop::Resource& r) {
    // Every Resource this device sees is one it made; the runtime is built without RTTI in
    // the code generators only, but a static_cast is all that is needed here.
    return static_cast<CudaResource&>(r);
}

Error failure(const Outcome& o) {
    return makeError(o.status == CL_SUCCESS ? CL_OUT_OF_RESOURCES : o.status, o.why);
}

} // namespace

Result<std::unique_ptr<GlInterop::Resource>>
CudaGlInterop::registerBuffer(unsigned buffer, GlAccess access, const std::string& what) {
    cu::GraphicsResource handle = nullptr;
    Outcome o = m_executor.onStream([&](cu::StreamHandle) -> Outcome {
        cu::Result r =
            m_executor.cuda().graphicsGLRegisterBuffer(&handle, buffer, registerFlags(access));
        if (r != cu::kSuccess)
            return {CL_INVALID_GL_OBJECT,
                    m_executor.cudaError("cuGraphicsGLRegisterBuffer", r) + " for " + what};
        return {};
    });
    if (!o.why.empty())
        return failure(o);
    return std::unique_ptr<Resource>(std::make_unique<CudaResource>(*this, handle, what));
}

Result<std::unique_ptr<GlInterop::Resource>> CudaGlInterop::registerImage(unsigned name,
                                                                          unsigned target,
                                                                          GlAccess access,
                                                                          const std::string& what) {
    cu::GraphicsResource handle = nullptr;
    Outcome o = m_executor.onStream([&](cu::StreamHandle) -> Outcome {
        cu::Result r =
            m_executor.cuda().graphicsGLRegisterImage(&handle, name, target, registerFlags(access));
        if (r != cu::kSuccess)
            return {CL_INVALID_GL_OBJECT,
                    m_executor.cudaError("cuGraphicsGLRegisterImage", r) + " for " + what};
        return {};
    });
    if (!o.why.empty())
        return failure(o);
    return std::unique_ptr<Resource>(std::make_unique<CudaResource>(*this, handle, what));
}

void CudaGlInterop::forget(cu::GraphicsResource handle, bool mapped) {
    Outcome o = m_executor.onStream([&](cu::StreamHandle stream) -> Outcome {
        const nvidia::CudaDriver& cuda = m_executor.cuda();
        if (mapped)
            cuda.graphicsUnmapResources(1, &handle, stream);
        if (cu::Result r = cuda.graphicsUnregisterResource(handle); r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES, m_executor.cudaError("cuGraphicsUnregisterResource", r)};
        return {};
    });
    if (!o.why.empty())
        nvidia::logNvidia("NVIDIA: " + o.why);
}

Status CudaGlInterop::mapAll(std::span<Resource* const> resources, bool map) {
    std::vector<cu::GraphicsResource> handles;
    for (Resource* r : resources)
        if (cudaResource(*r).mapped != map)
            handles.push_back(cudaResource(*r).handle);
    if (handles.empty())
        return Status::success();
    Outcome o = m_executor.onStream([&](cu::StreamHandle stream) -> Outcome {
        const nvidia::CudaDriver& cuda = m_executor.cuda();
        cu::Result r =
            map ? cuda.graphicsMapResources(unsigned(handles.size()), handles.data(), stream)
                : cuda.graphicsUnmapResources(unsigned(handles.size()), handles.data(), stream);
        if (r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES,
                    m_executor.cudaError(
                        map ? "cuGraphicsMapResources" : "cuGraphicsUnmapResources", r) +
                        " (" + cudaResource(*resources.front()).what +
                        (resources.size() > 1 ? " and others" : "") + ")"};
        return {};
    });
    if (!o.why.empty())
        return failure(o);
    for (Resource* r : resources)
        cudaResource(*r).mapped = map;
    return Status::success();
}

Status CudaGlInterop::map(std::span<Resource* const> resources) {
    return mapAll(resources, true);
}

Status CudaGlInterop::unmap(std::span<Resource* const> resources) {
    return mapAll(resources, false);
}

Result<std::pair<char*, size_t>> CudaGlInterop::mappedPointer(Resource& buffer) {
    cu::DevicePtr p = 0;
    size_t size = 0;
    Outcome o = m_executor.onStream([&](cu::StreamHandle) -> Outcome {
        cu::Result r = m_executor.cuda().graphicsResourceGetMappedPointer(
            &p, &size, cudaResource(buffer).handle);
        if (r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES,
                    m_executor.cudaError("cuGraphicsResourceGetMappedPointer", r) + " for " +
                        cudaResource(buffer).what};
        return {};
    });
    if (!o.why.empty())
        return failure(o);
    return std::pair<char*, size_t>(reinterpret_cast<char*>(uintptr_t(p)), size);
}

namespace {

/// A 2D copy between array `array` and unified memory at `mem` (pitch `pitch`).
cu::Memcpy2D arrayCopy2D(cu::Array array, cu::DevicePtr mem, size_t pitch, const BoxSize& box,
                         bool toArray) {
    cu::Memcpy2D c{};
    (toArray ? c.srcMemoryType : c.dstMemoryType) = cu::kMemoryTypeUnified;
    (toArray ? c.srcDevice : c.dstDevice) = mem;
    (toArray ? c.srcPitch : c.dstPitch) = pitch;
    (toArray ? c.dstMemoryType : c.srcMemoryType) = cu::kMemoryTypeArray;
    (toArray ? c.dstArray : c.srcArray) = array;
    c.widthInBytes = box.width;
    c.height = box.rows;
    return c;
}

/// A 3D copy between a 3D or layered array and unified memory laid out as `at`.
cu::Memcpy3D arrayCopy3D(cu::Array array, cu::DevicePtr mem, const Strided& at, const BoxSize& box,
                         bool toArray) {
    cu::Memcpy3D c{};
    (toArray ? c.srcMemoryType : c.dstMemoryType) = cu::kMemoryTypeUnified;
    (toArray ? c.srcDevice : c.dstDevice) = mem;
    (toArray ? c.srcPitch : c.dstPitch) = at.rowPitch;
    (toArray ? c.srcHeight : c.dstHeight) = at.rowPitch ? at.slicePitch / at.rowPitch : box.rows;
    (toArray ? c.dstMemoryType : c.srcMemoryType) = cu::kMemoryTypeArray;
    (toArray ? c.dstArray : c.srcArray) = array;
    c.widthInBytes = box.width;
    c.height = box.rows;
    c.depth = box.slices;
    return c;
}

/// Bytes from a box's first to its last, laid out as `at` says.
size_t boxExtent(const Strided& at, const BoxSize& box) {
    if (!box.bytes())
        return 0;
    return (box.slices - 1) * at.slicePitch + (box.rows - 1) * at.rowPitch + box.width;
}

} // namespace

Status CudaGlInterop::copyImage(Resource& image, unsigned face, unsigned level, char* linear,
                                const Strided& at, const BoxSize& box, bool toImage) {
    CudaResource& res = cudaResource(image);
    if (!toImage) // CUDA arrays copied from the linear image are stale
        m_executor.noteWritten(linear + at.offset, boxExtent(at, box));
    Outcome o = m_executor.onStream([&](cu::StreamHandle stream) -> Outcome {
        const nvidia::CudaDriver& cuda = m_executor.cuda();
        auto subresource = [&](unsigned index, cu::Array& array) -> Outcome {
            if (cu::Result r =
                    cuda.graphicsSubResourceGetMappedArray(&array, res.handle, index, level);
                r != cu::kSuccess)
                return {CL_OUT_OF_RESOURCES,
                        m_executor.cudaError("cuGraphicsSubResourceGetMappedArray", r) + " for " +
                            res.what + " (index " + std::to_string(index) + ", level " +
                            std::to_string(level) + ")"};
            return {};
        };
        cu::Array array = nullptr;
        if (Outcome f = subresource(face, array); !f.why.empty())
            return f;
        const cu::DevicePtr mem = address(linear + at.offset);
        const char* call = "cuMemcpy2DAsync";
        cu::Result r = cu::kSuccess;
        cu::Array3DDescriptor d{};
        if (box.slices <= 1) {
            cu::Memcpy2D c = arrayCopy2D(array, mem, at.rowPitch, box, toImage);
            r = cuda.memcpy2DAsync(&c, stream);
        } else if (cuda.array3DGetDescriptor(&d, array) == cu::kSuccess && d.depth >= box.slices) {
            // A 3D texture, or an array texture mapped as one layered array.
            call = "cuMemcpy3DAsync";
            cu::Memcpy3D c = arrayCopy3D(array, mem, at, box, toImage);
            r = cuda.memcpy3DAsync(&c, stream);
        } else {
            // An array texture mapped one layer per array index.
            const BoxSize layer{box.width, box.rows, 1};
            for (size_t z = 0; z < box.slices && r == cu::kSuccess; ++z) {
                if (z > 0)
                    if (Outcome f = subresource(unsigned(z), array); !f.why.empty())
                        return f;
                cu::Memcpy2D c =
                    arrayCopy2D(array, mem + z * at.slicePitch, at.rowPitch, layer, toImage);
                r = cuda.memcpy2DAsync(&c, stream);
            }
        }
        if (r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES,
                    m_executor.cudaError(call, r) + (toImage ? " into " : " from ") + res.what};
        return {};
    });
    if (!o.why.empty())
        return failure(o);
    return Status::success();
}

Status CudaGlInterop::copyBox(char* dst, const Strided& dstAt, const char* src,
                              const Strided& srcAt, const BoxSize& box) {
    if (!box.bytes())
        return Status::success();
    m_executor.noteWritten(dst + dstAt.offset, boxExtent(dstAt, box));
    Outcome o = m_executor.onStream([&](cu::StreamHandle stream) -> Outcome {
        const nvidia::CudaDriver& cuda = m_executor.cuda();
        const bool rowsPacked =
            (box.rows == 1 || (dstAt.rowPitch == box.width && srcAt.rowPitch == box.width)) &&
            box.slices == 1;
        cu::Result r = cu::kSuccess;
        if (rowsPacked) {
            r = cuda.memcpyAsync(address(dst + dstAt.offset), address(src + srcAt.offset),
                                 box.width * box.rows, stream);
        } else {
            // One 2D copy per slice: pitched copies between any two unified addresses.
            for (size_t z = 0; z < box.slices && r == cu::kSuccess; ++z) {
                cu::Memcpy2D c{};
                c.srcMemoryType = c.dstMemoryType = cu::kMemoryTypeUnified;
                c.srcDevice = address(src + srcAt.offset + z * srcAt.slicePitch);
                c.srcPitch = srcAt.rowPitch;
                c.dstDevice = address(dst + dstAt.offset + z * dstAt.slicePitch);
                c.dstPitch = dstAt.rowPitch;
                c.widthInBytes = box.width;
                c.height = box.rows;
                r = cuda.memcpy2DAsync(&c, stream);
            }
        }
        if (r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES,
                    m_executor.cudaError("cuMemcpy", r) + " (a GL object's copy on the GPU)"};
        return {};
    });
    if (!o.why.empty())
        return failure(o);
    return Status::success();
}

Status CudaGlInterop::finish() {
    Outcome o = m_executor.onStream([&](cu::StreamHandle stream) -> Outcome {
        if (cu::Result r = m_executor.cuda().streamSynchronize(stream); r != cu::kSuccess)
            return {CL_OUT_OF_RESOURCES, m_executor.cudaError("cuStreamSynchronize", r) +
                                             " (after a GL object's copies)"};
        return {};
    });
    if (!o.why.empty())
        return failure(o);
    return Status::success();
}

namespace {

/// Exported device memory: unmapped, its address range freed and the allocation released when
/// GL no longer uses it.
struct CudaExportedMemory final : GlInterop::ExportedMemory {
    CudaExportedMemory(CudaExecutor& executor, cu::MemHandle h) : m_executor(executor), handle(h) {}
    ~CudaExportedMemory() override {
        if (fd >= 0)
            close(fd);
        const nvidia::CudaDriver& cuda = m_executor.cuda();
        m_executor.onStream([&](cu::StreamHandle) -> Outcome {
            if (mapped)
                cuda.memUnmap(address_(), size);
            if (reserved)
                cuda.memAddressFree(address_(), size);
            cuda.memRelease(handle);
            return {};
        });
    }
    cu::DevicePtr address_() const { return cu::DevicePtr(reinterpret_cast<uintptr_t>(address)); }

    CudaExecutor& m_executor;
    cu::MemHandle handle;
    bool reserved = false, mapped = false;
};

} // namespace

Result<std::unique_ptr<GlInterop::ExportedMemory>>
CudaGlInterop::exportMemory(size_t bytes, const std::string& what) {
    const nvidia::CudaDriver& cuda = m_executor.cuda();
    if (!cuda.memoryExportMissing.empty())
        return makeError(CL_INVALID_OPERATION,
                         what + ": the CUDA driver lacks " + cuda.memoryExportMissing);
    const cu::Device device = m_executor.cudaDevice();
    int vmm = 0, posix = 0;
    cuda.deviceGetAttribute(&vmm, cu::kVirtualMemoryManagement, device);
    cuda.deviceGetAttribute(&posix, cu::kPosixFdHandles, device);
    if (!vmm || !posix)
        return makeError(CL_INVALID_OPERATION,
                         what +
                             ": the GPU exports no memory as file descriptors (virtual memory "
                             "management " +
                             std::to_string(vmm) + ", POSIX handles " + std::to_string(posix) +
                             ")");
    std::unique_ptr<CudaExportedMemory> made;
    Outcome o = m_executor.onStream([&](cu::StreamHandle) -> Outcome {
        cu::MemAllocationProp prop{};
        prop.type = cu::kMemAllocationPinned;
        prop.requestedHandleTypes = cu::kMemHandlePosixFd;
        prop.location = {cu::kMemLocationDevice, device};
        auto failed = [&](const char* call, cu::Result r) -> Outcome {
            return {r == cu::kErrorOutOfMemory ? CL_MEM_OBJECT_ALLOCATION_FAILURE
                                               : CL_OUT_OF_RESOURCES,
                    m_executor.cudaError(call, r) + " (memory for " + what + " that GL imports)"};
        };
        size_t granularity = 0;
        if (cu::Result r =
                cuda.memGetAllocationGranularity(&granularity, &prop, cu::kMemGranularityMinimum);
            r != cu::kSuccess || !granularity)
            return failed("cuMemGetAllocationGranularity", r);
        const size_t size =
            (std::max<size_t>(bytes, 1) + granularity - 1) / granularity * granularity;
        cu::MemHandle handle = 0;
        if (cu::Result r = cuda.memCreate(&handle, size, &prop, 0); r != cu::kSuccess)
            return failed("cuMemCreate", r);
        made = std::make_unique<CudaExportedMemory>(m_executor, handle);
        made->size = size;
        if (cu::Result r =
                cuda.memExportToShareableHandle(&made->fd, handle, cu::kMemHandlePosixFd, 0);
            r != cu::kSuccess)
            return failed("cuMemExportToShareableHandle", r);
        cu::DevicePtr at = 0;
        if (cu::Result r = cuda.memAddressReserve(&at, size, 0, 0, 0); r != cu::kSuccess)
            return failed("cuMemAddressReserve", r);
        made->address = reinterpret_cast<char*>(uintptr_t(at));
        made->reserved = true;
        if (cu::Result r = cuda.memMap(at, size, 0, handle, 0); r != cu::kSuccess)
            return failed("cuMemMap", r);
        made->mapped = true;
        const cu::MemAccessDesc access{{cu::kMemLocationDevice, device}, cu::kMemAccessReadWrite};
        if (cu::Result r = cuda.memSetAccess(at, size, &access, 1); r != cu::kSuccess)
            return failed("cuMemSetAccess", r);
        return {};
    });
    if (!o.why.empty())
        return failure(o);
    return std::unique_ptr<ExportedMemory>(std::move(made));
}

// ---- DeviceStorageStaging -------------------------------------------------------------------

size_t DeviceStorageStaging::span(const Strided& at, const BoxSize& box) {
    if (!box.width || !box.rows || !box.slices)
        return 0;
    return (box.slices - 1) * at.slicePitch + (box.rows - 1) * at.rowPitch + box.width;
}

Outcome DeviceStorageStaging::readRect(const Mem& src, const Strided& srcAt, void* host,
                                       const Strided& hostAt, const BoxSize& box) {
    std::vector<char> staged(span(srcAt, box));
    if (Outcome o = m_executor.copy(staged.data(), src.data() + srcAt.offset, staged.size());
        !o.why.empty())
        return o;
    rt::copyBox(static_cast<char*>(host), hostAt, staged.data(),
                {0, srcAt.rowPitch, srcAt.slicePitch}, box);
    return {};
}

Outcome DeviceStorageStaging::writeRect(Mem& dst, const Strided& dstAt, const void* host,
                                        const Strided& hostAt, const BoxSize& box) {
    // Read first: the gaps between the box's rows stay as they are.
    std::vector<char> staged(span(dstAt, box));
    char* at = dst.data() + dstAt.offset;
    if (Outcome o = m_executor.copy(staged.data(), at, staged.size()); !o.why.empty())
        return o;
    rt::copyBox(staged.data(), {0, dstAt.rowPitch, dstAt.slicePitch},
                static_cast<const char*>(host), hostAt, box);
    return m_executor.copy(at, staged.data(), staged.size());
}

Outcome DeviceStorageStaging::copyRect(const Mem& src, const Strided& srcAt, Mem& dst,
                                       const Strided& dstAt, const BoxSize& box) {
    std::vector<char> from(span(srcAt, box));
    if (Outcome o = m_executor.copy(from.data(), src.data() + srcAt.offset, from.size());
        !o.why.empty())
        return o;
    return writeRect(dst, dstAt, from.data(), {0, srcAt.rowPitch, srcAt.slicePitch}, box);
}

Outcome DeviceStorageStaging::map(Mem& m, const Strided& at, const BoxSize& box,
                                  cl_map_flags flags) {
    const size_t bytes = span(at, box);
    char* host = m.hostData() + at.offset;
    if (!(flags & CL_MAP_WRITE_INVALIDATE_REGION))
        if (Outcome o = m_executor.copy(host, m.data() + at.offset, bytes); !o.why.empty())
            return o;
    std::lock_guard lock(m_mutex);
    m_maps.push_back({&m, host, at.offset, bytes,
                      (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0});
    return {};
}

Outcome DeviceStorageStaging::unmap(Mem& m, void* ptr) {
    Mapping found{};
    {
        std::lock_guard lock(m_mutex);
        auto it = std::find_if(m_maps.begin(), m_maps.end(),
                               [&](const Mapping& x) { return x.mem == &m && x.ptr == ptr; });
        if (it == m_maps.end())
            return {}; // mapped while the storage was the host's
        found = *it;
        m_maps.erase(it);
    }
    char* device = m.data() + found.begin;
    if (!found.writes || device == found.ptr) // released meanwhile: the host storage is it
        return {};
    return m_executor.copy(device, found.ptr, found.bytes);
}

} // namespace duet::rt::nvidia_device
