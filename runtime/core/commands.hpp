// Enqueued commands: core's side of every clEnqueue* call. Arguments come validated by the API
// (api/*.cpp); these put the command on its queue and run it through the queue's device.
#pragma once

#include "core/command_payload.hpp"
#include "core/event.hpp"

#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace duet::rt {

class Kernel;
struct ArgValue;
class Mem;
class Queue;

/// How a command joins its queue and what its caller waits for; the same for every enqueue.
struct Submit {
    std::span<Event* const> waitList; ///< events of the queue's context, already checked
    bool blocking = false;            ///< return once the command has finished
    bool wantEvent = false;           ///< the caller takes the command's event
};

/// What an enqueue hands back. The command is on its queue either way: `status` is
/// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST when the command of a blocking enqueue failed
/// (an event it waited for did), else CL_SUCCESS; `event` is the command's event when the
/// caller asked for it (even when `status` is an error, as rusticl does), else null.
struct [[nodiscard]] Enqueued {
    Ref<Event> event;
    cl_int status = CL_SUCCESS;
};

/// A map's outcome: the host pointer to the mapped region as well, and for images the pitches
/// the host sees it with (the slice pitch is 0 for images without slices or layers).
struct [[nodiscard]] Mapped : Enqueued {
    void* ptr = nullptr;
    size_t rowPitch = 0, slicePitch = 0;
};

/// Puts `run` on `queue` after `how.waitList` (and, out of order, after the last fence); it
/// runs on the queue's worker thread and returns CL_SUCCESS or the command's (negative)
/// execution status. `fence`: on an out-of-order queue the command also waits for every
/// earlier command and holds back every later one. `payload`: what `run` works on when it holds
/// references (CommandPayload). The building block of the functions below.
Enqueued enqueueCommand(Queue& queue, cl_command_type type, const Submit& how,
                        std::function<cl_int()> run, bool fence = false,
                        std::unique_ptr<CommandPayload> payload = nullptr);

/// Markers, barriers and clEnqueueWaitForEvents: commands that only order (`fence` as above).
Enqueued enqueueMarker(Queue& queue, cl_command_type type, bool fence, const Submit& how);

// ---- Buffers --------------------------------------------------------------------------------
// Offsets, origins and regions are in bytes (region[1], region[2]: rows and slices) and lie
// inside their objects; rect pitches are normalised (never 0). `ptr` is host memory that stays
// valid until the command has run.

Enqueued enqueueReadBuffer(Queue& queue, Ref<Mem> buffer, size_t offset, size_t size, void* ptr,
                           const Submit& how);
Enqueued enqueueWriteBuffer(Queue& queue, Ref<Mem> buffer, size_t offset, size_t size,
                            const void* ptr, const Submit& how);
/// The two ranges do not overlap.
Enqueued enqueueCopyBuffer(Queue& queue, Ref<Mem> src, Ref<Mem> dst, size_t srcOffset,
                           size_t dstOffset, size_t size, const Submit& how);
Enqueued enqueueReadBufferRect(Queue& queue, Ref<Mem> buffer, const size_t* bufferOrigin,
                               const size_t* hostOrigin, const size_t* region,
                               size_t bufferRowPitch, size_t bufferSlicePitch, size_t hostRowPitch,
                               size_t hostSlicePitch, void* ptr, const Submit& how);
Enqueued enqueueWriteBufferRect(Queue& queue, Ref<Mem> buffer, const size_t* bufferOrigin,
                                const size_t* hostOrigin, const size_t* region,
                                size_t bufferRowPitch, size_t bufferSlicePitch, size_t hostRowPitch,
                                size_t hostSlicePitch, const void* ptr, const Submit& how);
/// No row of the source overlaps a row of the destination.
Enqueued enqueueCopyBufferRect(Queue& queue, Ref<Mem> src, Ref<Mem> dst, const size_t* srcOrigin,
                               const size_t* dstOrigin, const size_t* region, size_t srcRowPitch,
                               size_t srcSlicePitch, size_t dstRowPitch, size_t dstSlicePitch,
                               const Submit& how);
/// `pattern` is copied now; `patternSize` is a power of two up to 128 dividing offset and size.
Enqueued enqueueFillBuffer(Queue& queue, Ref<Mem> buffer, const void* pattern, size_t patternSize,
                           size_t offset, size_t size, const Submit& how);
/// The pointer is known at once: the host sees the buffer's host storage (Mem::data()), which
/// the command makes current (DeviceBackend::map).
Mapped enqueueMapBuffer(Queue& queue, Ref<Mem> buffer, cl_map_flags flags, size_t offset,
                        size_t size, const Submit& how);
/// Ends the map of buffer or image `mem` that returned `ptr`.
Enqueued enqueueUnmap(Queue& queue, Ref<Mem> mem, void* ptr, const Submit& how);
Enqueued enqueueMigrate(Queue& queue, std::span<Mem* const> mems, cl_mem_migration_flags flags,
                        const Submit& how);

// ---- Images ---------------------------------------------------------------------------------
// Origins and regions are in texels (y: rows or 1D-array layers, z: slices or layers) and lie
// inside the image; host pitches are normalised (row pitch never 0; slice pitch never 0 for
// images with slices or layers).

Enqueued enqueueReadImage(Queue& queue, Ref<Mem> image, const size_t* origin, const size_t* region,
                          size_t rowPitch, size_t slicePitch, void* ptr, const Submit& how);
Enqueued enqueueWriteImage(Queue& queue, Ref<Mem> image, const size_t* origin, const size_t* region,
                           size_t rowPitch, size_t slicePitch, const void* ptr, const Submit& how);
/// Same format; the regions do not overlap.
Enqueued enqueueCopyImage(Queue& queue, Ref<Mem> src, Ref<Mem> dst, const size_t* srcOrigin,
                          const size_t* dstOrigin, const size_t* region, const Submit& how);
/// `color` as clEnqueueFillImage reads it (float4, int4 or uint4; one float for CL_DEPTH),
/// packed into a texel now.
Enqueued enqueueFillImage(Queue& queue, Ref<Mem> image, const void* color, const size_t* origin,
                          const size_t* region, const Submit& how);
/// The buffer side is tightly packed: region[0] texels per row, region[1] rows per slice.
Enqueued enqueueCopyImageToBuffer(Queue& queue, Ref<Mem> src, Ref<Mem> dst, const size_t* srcOrigin,
                                  const size_t* region, size_t dstOffset, const Submit& how);
Enqueued enqueueCopyBufferToImage(Queue& queue, Ref<Mem> src, Ref<Mem> dst, size_t srcOffset,
                                  const size_t* dstOrigin, const size_t* region, const Submit& how);
/// As enqueueMapBuffer, with the image's own pitches.
Mapped enqueueMapImage(Queue& queue, Ref<Mem> image, cl_map_flags flags, const size_t* origin,
                       const size_t* region, const Submit& how);

// ---- Kernels --------------------------------------------------------------------------------

/// Launches `kernel` over `dims` dimensions: the API has checked the kernel (built for the
/// queue's device, every argument set), the sizes and the local size against the device and
/// the kernel. `args` is the kernel's arguments as Kernel::snapshotArgs took them (the command
/// keeps their memory objects alive until it is done); `offset` null means 0; `local` null takes
/// the kernel's reqd_work_group_size or else the device's pick (DeviceBackend::pickLocalSize). A
/// zero-sized range only orders.
Enqueued enqueueNDRange(Queue& queue, Kernel& kernel, std::vector<ArgValue> args, cl_uint dims,
                        const size_t* offset, const size_t* global, const size_t* local,
                        const Submit& how);
/// clEnqueueTask: one work-item in one work-group.
Enqueued enqueueTask(Queue& queue, Kernel& kernel, std::vector<ArgValue> args, const Submit& how);
/// clEnqueueNativeKernel: `args` (`argsSize` bytes) is copied now; when the command runs, the
/// copy's pointer at each `memLocs[i]` (a pointer into `args`) becomes mems[i]'s host storage.
Enqueued enqueueNativeKernel(Queue& queue, void(CL_CALLBACK* fn)(void*), const void* args,
                             size_t argsSize, std::span<Mem* const> mems,
                             const void* const* memLocs, const Submit& how);

} // namespace duet::rt
