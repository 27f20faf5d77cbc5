// Enqueued commands: submission, markers, buffer and image transfers, maps, kernel launches.
#include "core/commands.hpp"
#include "core/image.hpp"
#include "core/kernel.hpp"
#include "core/queue.hpp"
#include "core/transfer.hpp"

#include <array>
#include <cassert>
#include <cstring>
#include <vector>

namespace duet::rt {

namespace {

/// A fill pattern copied at enqueue: buffer patterns are at most 128 bytes (spec), texels 16.
struct Pattern {
    std::array<unsigned char, 128> bytes;
    size_t size;
};

Pattern copyPattern(const void* p, size_t size) {
    assert(size <= sizeof(Pattern::bytes) && "the API checks pattern_size");
    Pattern out{{}, size};
    std::memcpy(out.bytes.data(), p, size);
    return out;
}

/// Where a rect of a buffer or host layout starts, with its pitches.
Strided rectAt(const size_t* origin, size_t rowPitch, size_t slicePitch) {
    return {origin[2] * slicePitch + origin[1] * rowPitch + origin[0], rowPitch, slicePitch};
}

/// The backend that runs a queue's commands. Devices are never freed.
DeviceBackend* backendOf(const Queue& queue) {
    return &queue.device()->backend();
}

/// Whether image type `t` has slices or layers (a slice pitch the host sees).
bool hasSlices(cl_mem_object_type t) {
    return t == CL_MEM_OBJECT_IMAGE3D || t == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
           t == CL_MEM_OBJECT_IMAGE2D_ARRAY;
}

/// The map command of a buffer or image region: makes the host bytes current, counts the map.
Mapped enqueueMap(Queue& queue, cl_command_type type, Ref<Mem> mem, cl_map_flags flags,
                  const Strided& at, const BoxSize& box, const Submit& how) {
    Mapped out;
    // Host storage: the device's map makes it current when the storage is on the device.
    out.ptr = mem->hostData() + at.offset;
    static_cast<Enqueued&>(out) = enqueueCommand(
        queue, type, how, [dev = backendOf(queue), mem = std::move(mem), flags, at, box] {
            cl_int status = dev->map(*mem, at, box, flags);
            if (status == CL_SUCCESS)
                mem->mapCount.fetch_add(1);
            return status;
        });
    return out;
}

} // namespace

// ---- Submission -----------------------------------------------------------------------------

Enqueued enqueueCommand(Queue& queue, cl_command_type type, const Submit& how,
                        std::function<cl_int()> run, bool fence,
                        std::unique_ptr<CommandPayload> payload) {
    Enqueued out;
    out.event = queue.enqueue(type, how.waitList, std::move(run), fence,
                              how.blocking || how.wantEvent, how.blocking, std::move(payload));
    if (how.blocking && out.event->wait() < 0)
        out.status = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    if (!how.wantEvent)
        out.event = {};
    return out;
}

Enqueued enqueueMarker(Queue& queue, cl_command_type type, bool fence, const Submit& how) {
    return enqueueCommand(queue, type, how, [] { return CL_SUCCESS; }, fence);
}

// ---- Buffers --------------------------------------------------------------------------------

Enqueued enqueueReadBuffer(Queue& queue, Ref<Mem> buffer, size_t offset, size_t size, void* ptr,
                           const Submit& how) {
    return enqueueCommand(queue, CL_COMMAND_READ_BUFFER, how,
                          [dev = backendOf(queue), buffer = std::move(buffer), offset, size, ptr] {
                              return dev->read(*buffer, offset, size, ptr);
                          });
}

Enqueued enqueueWriteBuffer(Queue& queue, Ref<Mem> buffer, size_t offset, size_t size,
                            const void* ptr, const Submit& how) {
    return enqueueCommand(queue, CL_COMMAND_WRITE_BUFFER, how,
                          [dev = backendOf(queue), buffer = std::move(buffer), offset, size, ptr] {
                              return dev->write(*buffer, offset, size, ptr);
                          });
}

Enqueued enqueueCopyBuffer(Queue& queue, Ref<Mem> src, Ref<Mem> dst, size_t srcOffset,
                           size_t dstOffset, size_t size, const Submit& how) {
    return enqueueCommand(queue, CL_COMMAND_COPY_BUFFER, how,
                          [dev = backendOf(queue), src = std::move(src), dst = std::move(dst),
                           srcOffset, dstOffset,
                           size] { return dev->copy(*src, srcOffset, *dst, dstOffset, size); });
}

Enqueued enqueueReadBufferRect(Queue& queue, Ref<Mem> buffer, const size_t* bufferOrigin,
                               const size_t* hostOrigin, const size_t* region,
                               size_t bufferRowPitch, size_t bufferSlicePitch, size_t hostRowPitch,
                               size_t hostSlicePitch, void* ptr, const Submit& how) {
    Strided at = rectAt(bufferOrigin, bufferRowPitch, bufferSlicePitch);
    Strided hostAt = rectAt(hostOrigin, hostRowPitch, hostSlicePitch);
    BoxSize box{region[0], region[1], region[2]};
    return enqueueCommand(queue, CL_COMMAND_READ_BUFFER_RECT, how,
                          [dev = backendOf(queue), buffer = std::move(buffer), at, hostAt, box,
                           ptr] { return dev->readRect(*buffer, at, ptr, hostAt, box); });
}

Enqueued enqueueWriteBufferRect(Queue& queue, Ref<Mem> buffer, const size_t* bufferOrigin,
                                const size_t* hostOrigin, const size_t* region,
                                size_t bufferRowPitch, size_t bufferSlicePitch, size_t hostRowPitch,
                                size_t hostSlicePitch, const void* ptr, const Submit& how) {
    Strided at = rectAt(bufferOrigin, bufferRowPitch, bufferSlicePitch);
    Strided hostAt = rectAt(hostOrigin, hostRowPitch, hostSlicePitch);
    BoxSize box{region[0], region[1], region[2]};
    return enqueueCommand(queue, CL_COMMAND_WRITE_BUFFER_RECT, how,
                          [dev = backendOf(queue), buffer = std::move(buffer), at, hostAt, box,
                           ptr] { return dev->writeRect(*buffer, at, ptr, hostAt, box); });
}

Enqueued enqueueCopyBufferRect(Queue& queue, Ref<Mem> src, Ref<Mem> dst, const size_t* srcOrigin,
                               const size_t* dstOrigin, const size_t* region, size_t srcRowPitch,
                               size_t srcSlicePitch, size_t dstRowPitch, size_t dstSlicePitch,
                               const Submit& how) {
    Strided srcAt = rectAt(srcOrigin, srcRowPitch, srcSlicePitch);
    Strided dstAt = rectAt(dstOrigin, dstRowPitch, dstSlicePitch);
    BoxSize box{region[0], region[1], region[2]};
    return enqueueCommand(queue, CL_COMMAND_COPY_BUFFER_RECT, how,
                          [dev = backendOf(queue), src = std::move(src), dst = std::move(dst),
                           srcAt, dstAt,
                           box] { return dev->copyRect(*src, srcAt, *dst, dstAt, box); });
}

Enqueued enqueueFillBuffer(Queue& queue, Ref<Mem> buffer, const void* pattern, size_t patternSize,
                           size_t offset, size_t size, const Submit& how) {
    return enqueueCommand(queue, CL_COMMAND_FILL_BUFFER, how,
                          [dev = backendOf(queue), buffer = std::move(buffer),
                           pat = copyPattern(pattern, patternSize), offset, size] {
                              return dev->fill(*buffer, {offset, size, size}, {size},
                                               pat.bytes.data(), pat.size);
                          });
}

Mapped enqueueMapBuffer(Queue& queue, Ref<Mem> buffer, cl_map_flags flags, size_t offset,
                        size_t size, const Submit& how) {
    return enqueueMap(queue, CL_COMMAND_MAP_BUFFER, std::move(buffer), flags, {offset, size, size},
                      {size}, how);
}

Enqueued enqueueUnmap(Queue& queue, Ref<Mem> mem, void* ptr, const Submit& how) {
    return enqueueCommand(queue, CL_COMMAND_UNMAP_MEM_OBJECT, how,
                          [dev = backendOf(queue), mem = std::move(mem), ptr] {
                              cl_int status = dev->unmap(*mem, ptr);
                              cl_uint c = mem->mapCount.load();
                              while (c && !mem->mapCount.compare_exchange_weak(c, c - 1)) {
                              }
                              return status;
                          });
}

Enqueued enqueueMigrate(Queue& queue, std::span<Mem* const> mems, cl_mem_migration_flags flags,
                        const Submit& how) {
    std::vector<Ref<Mem>> keep;
    keep.reserve(mems.size());
    for (Mem* m : mems)
        keep.push_back(retainRef(m));
    return enqueueCommand(queue, CL_COMMAND_MIGRATE_MEM_OBJECTS, how,
                          [dev = backendOf(queue), keep = std::move(keep), flags] {
                              for (const Ref<Mem>& m : keep)
                                  if (cl_int status = dev->migrate(*m, flags))
                                      return status;
                              return CL_SUCCESS;
                          });
}

// ---- Images ---------------------------------------------------------------------------------

namespace {

/// The host side of an image read or write: rows along y, except for a 1D array, whose layers
/// (y) step by the slice pitch.
Strided hostImageLayout(const Mem& image, size_t rowPitch, size_t slicePitch) {
    const size_t y = image.type() == CL_MEM_OBJECT_IMAGE1D_ARRAY ? slicePitch : rowPitch;
    return {0, y, slicePitch};
}

} // namespace

Enqueued enqueueReadImage(Queue& queue, Ref<Mem> image, const size_t* origin, const size_t* region,
                          size_t rowPitch, size_t slicePitch, void* ptr, const Submit& how) {
    Strided at = imageRegion(*image, origin);
    Strided hostAt = hostImageLayout(*image, rowPitch, slicePitch);
    BoxSize box = imageRegionSize(*image, region);
    return enqueueCommand(queue, CL_COMMAND_READ_IMAGE, how,
                          [dev = backendOf(queue), image = std::move(image), at, hostAt, box, ptr] {
                              return dev->readRect(*image, at, ptr, hostAt, box);
                          });
}

Enqueued enqueueWriteImage(Queue& queue, Ref<Mem> image, const size_t* origin, const size_t* region,
                           size_t rowPitch, size_t slicePitch, const void* ptr, const Submit& how) {
    Strided at = imageRegion(*image, origin);
    Strided hostAt = hostImageLayout(*image, rowPitch, slicePitch);
    BoxSize box = imageRegionSize(*image, region);
    return enqueueCommand(queue, CL_COMMAND_WRITE_IMAGE, how,
                          [dev = backendOf(queue), image = std::move(image), at, hostAt, box, ptr] {
                              return dev->writeRect(*image, at, ptr, hostAt, box);
                          });
}

Enqueued enqueueCopyImage(Queue& queue, Ref<Mem> src, Ref<Mem> dst, const size_t* srcOrigin,
                          const size_t* dstOrigin, const size_t* region, const Submit& how) {
    Strided srcAt = imageRegion(*src, srcOrigin), dstAt = imageRegion(*dst, dstOrigin);
    BoxSize box = imageRegionSize(*src, region);
    return enqueueCommand(queue, CL_COMMAND_COPY_IMAGE, how,
                          [dev = backendOf(queue), src = std::move(src), dst = std::move(dst),
                           srcAt, dstAt,
                           box] { return dev->copyRect(*src, srcAt, *dst, dstAt, box); });
}

Enqueued enqueueFillImage(Queue& queue, Ref<Mem> image, const void* color, const size_t* origin,
                          const size_t* region, const Submit& how) {
    // cl_khr_depth_images: a depth image's fill colour is one float; read it as such.
    float rgba[4] = {};
    if (image->format.image_channel_order == CL_DEPTH) {
        std::memcpy(rgba, color, sizeof(float));
        color = rgba;
    }
    Pattern texel{{}, image->elementSize};
    packFillColor(image->format, color, texel.bytes.data());
    Strided at = imageRegion(*image, origin);
    BoxSize box = imageRegionSize(*image, region);
    return enqueueCommand(queue, CL_COMMAND_FILL_IMAGE, how,
                          [dev = backendOf(queue), image = std::move(image), texel, at, box] {
                              return dev->fill(*image, at, box, texel.bytes.data(), texel.size);
                          });
}

Enqueued enqueueCopyImageToBuffer(Queue& queue, Ref<Mem> src, Ref<Mem> dst, const size_t* srcOrigin,
                                  const size_t* region, size_t dstOffset, const Submit& how) {
    Strided srcAt = imageRegion(*src, srcOrigin);
    BoxSize box = imageRegionSize(*src, region);
    Strided dstAt{dstOffset, box.width, box.width * box.rows};
    return enqueueCommand(queue, CL_COMMAND_COPY_IMAGE_TO_BUFFER, how,
                          [dev = backendOf(queue), src = std::move(src), dst = std::move(dst),
                           srcAt, dstAt,
                           box] { return dev->copyRect(*src, srcAt, *dst, dstAt, box); });
}

Enqueued enqueueCopyBufferToImage(Queue& queue, Ref<Mem> src, Ref<Mem> dst, size_t srcOffset,
                                  const size_t* dstOrigin, const size_t* region,
                                  const Submit& how) {
    Strided dstAt = imageRegion(*dst, dstOrigin);
    BoxSize box = imageRegionSize(*dst, region);
    Strided srcAt{srcOffset, box.width, box.width * box.rows};
    return enqueueCommand(queue, CL_COMMAND_COPY_BUFFER_TO_IMAGE, how,
                          [dev = backendOf(queue), src = std::move(src), dst = std::move(dst),
                           srcAt, dstAt,
                           box] { return dev->copyRect(*src, srcAt, *dst, dstAt, box); });
}

Mapped enqueueMapImage(Queue& queue, Ref<Mem> image, cl_map_flags flags, const size_t* origin,
                       const size_t* region, const Submit& how) {
    const size_t rowPitch = image->rowPitch;
    const size_t slicePitch = hasSlices(image->type()) ? image->slicePitch : 0;
    Strided at = imageRegion(*image, origin);
    BoxSize box = imageRegionSize(*image, region);
    Mapped out = enqueueMap(queue, CL_COMMAND_MAP_IMAGE, std::move(image), flags, at, box, how);
    out.rowPitch = rowPitch;
    out.slicePitch = slicePitch;
    return out;
}

// ---- Kernels --------------------------------------------------------------------------------

namespace {

Enqueued launch(Queue& queue, cl_command_type type, Kernel& kernel, std::vector<ArgValue> args,
                cl_uint dims, const size_t* offset, const size_t* global, const size_t* local,
                const Submit& how) {
    Device* dev = queue.device();
    for (cl_uint d = 0; d < dims; ++d)
        if (global[d] == 0) // OpenCL 2.1+: a zero-sized NDRange does nothing
            return enqueueMarker(queue, type, false, how);
    // The command's payload (CommandPayload): its references are dropped when it completes,
    // its storage freed later. The function object only points at it (no allocation of its own).
    auto payload = std::make_unique<KernelLaunch>();
    KernelLaunch& launch = *payload;
    launch.workDim = dims;
    for (cl_uint d = 0; d < dims; ++d) {
        launch.global[d] = global[d];
        launch.offset[d] = offset ? offset[d] : 0;
    }
    const auto& reqd = kernel.desc().reqdWorkGroupSize;
    if (local) {
        for (cl_uint d = 0; d < dims; ++d)
            launch.local[d] = local[d];
    } else if (reqd[0]) {
        for (cl_uint d = 0; d < dims; ++d)
            launch.local[d] = reqd[d];
    } else {
        size_t picked[3] = {1, 1, 1};
        dev->backend().pickLocalSize(*dev, kernel, dims, launch.global.data(), picked);
        for (cl_uint d = 0; d < dims; ++d)
            launch.local[d] = picked[d];
    }
    launch.entry = kernel.entry(dev);
    assert(launch.entry && "the API checks that the kernel has an executable for the device");
    launch.executable = kernel.executable(dev).get();
    launch.kernel = retainRef(&kernel);
    launch.args = std::move(args);
    launch.svmIndirectPointers = kernel.svmIndirectPointers;
    return enqueueCommand(
        queue, type, how, [dev = &dev->backend(), l = &launch] { return dev->runNDRange(*l); },
        false, std::move(payload));
}

} // namespace

Enqueued enqueueNDRange(Queue& queue, Kernel& kernel, std::vector<ArgValue> args, cl_uint dims,
                        const size_t* offset, const size_t* global, const size_t* local,
                        const Submit& how) {
    return launch(queue, CL_COMMAND_NDRANGE_KERNEL, kernel, std::move(args), dims, offset, global,
                  local, how);
}

Enqueued enqueueTask(Queue& queue, Kernel& kernel, std::vector<ArgValue> args, const Submit& how) {
    const size_t one = 1;
    return launch(queue, CL_COMMAND_TASK, kernel, std::move(args), 1, nullptr, &one, &one, how);
}

Enqueued enqueueNativeKernel(Queue& queue, void(CL_CALLBACK* fn)(void*), const void* args,
                             size_t argsSize, std::span<Mem* const> mems,
                             const void* const* memLocs, const Submit& how) {
    // The arguments are copied now (spec); memory objects become their host storage when the
    // command runs (a GL buffer shared in place has its storage from the acquire on).
    const auto* bytes = static_cast<const unsigned char*>(args);
    std::vector<unsigned char> copy(bytes, bytes + argsSize);
    std::vector<std::pair<Ref<Mem>, size_t>> slots;
    slots.reserve(mems.size());
    for (size_t i = 0; i < mems.size(); ++i)
        slots.emplace_back(retainRef(mems[i]),
                           static_cast<const unsigned char*>(memLocs[i]) - bytes);
    return enqueueCommand(queue, CL_COMMAND_NATIVE_KERNEL, how,
                          [fn, copy = std::move(copy), slots = std::move(slots)]() mutable {
                              for (const auto& [mem, at] : slots) {
                                  void* p = mem->data();
                                  std::memcpy(copy.data() + at, &p, sizeof p);
                              }
                              fn(copy.empty() ? nullptr : copy.data());
                              return CL_SUCCESS;
                          });
}

} // namespace duet::rt
