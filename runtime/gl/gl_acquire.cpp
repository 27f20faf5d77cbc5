// clEnqueueAcquireGLObjects / clEnqueueReleaseGLObjects as commands: the objects' glState flips
// at enqueue, and the command, run by the queue's worker, maps or copies them on the GL thread.
#include "core/queue.hpp"
#include "gl/gl_device_access.hpp"
#include "gl/gl_functions.hpp"
#include "gl/gl_object.hpp"
#include "gl/gl_share.hpp"
#include "gl/gl_transfer.hpp"

#include <algorithm>
#include <vector>

namespace duet::rt::gl {

namespace {

/// One object of an acquire or release; the reference keeps its GL state alive.
struct Shared {
    Ref<Mem> mem;
    GlObject* gl;
};

/// Orders what the GL thread does next after the application's fence, then deletes it. `onGpu`:
/// only the runtime's own GL context's later commands (and the device's map, which the driver
/// orders after them) need to follow, so the GPU waits (glWaitSync) and the thread goes on;
/// otherwise the thread waits until the fence has signalled (host copies, in-place maps).
void waitForApp(const GlFunctions& f, void* fence, bool onGpu) {
    auto s = static_cast<GLsync>(fence);
    if (onGpu && f.glWaitSync) {
        f.glWaitSync(s, 0, GL_TIMEOUT_IGNORED);
    } else {
        while (f.glClientWaitSync(s, GL_SYNC_FLUSH_COMMANDS_BIT, 1000000000) ==
               GL_TIMEOUT_EXPIRED) {
        }
    }
    f.glDeleteSync(s);
}

/// The command body: on the GL thread, after the application's GL work (`fence`), maps or
/// copies each object in the directions its flags need: through the context's interop device
/// for the objects registered with it (gl_device_access.cpp; buffers in its memory when
/// `zeroCopy`, the queue being that device's), else here. Returns the command's status.
cl_int runAcquireRelease(Share& share, void* fence, bool acquire, bool zeroCopy,
                         const std::vector<Shared>& objects) {
    cl_int status = CL_SUCCESS;
    share.run([&] {
        const auto& f = glFunctions();
        // Objects that all go through the interop device: its map waits on the GPU for the
        // runtime context's GL work, which waits on the GPU for the application's.
        if (fence)
            waitForApp(f, fence, std::all_of(objects.begin(), objects.end(), [](const Shared& s) {
                           return s.gl->resource != nullptr;
                       }));
        bool copied = false;
        std::vector<DeviceObject> viaDevice;
        for (const auto& [m, o] : objects)
            if (o->resource && (acquire || o->viaInterop))
                viaDevice.push_back({m.get(), o, !(m->flags() & CL_MEM_WRITE_ONLY),
                                     !(m->flags() & CL_MEM_READ_ONLY)});
        if (!viaDevice.empty())
            status = acquire ? acquireThroughDevice(share, viaDevice, zeroCopy)
                             : releaseThroughDevice(share, viaDevice, copied);
        for (const auto& [m, o] : objects) {
            if (acquire ? o->viaInterop
                        : std::any_of(viaDevice.begin(), viaDevice.end(),
                                      [&](const DeviceObject& d) { return d.gl == o; }))
                continue;
            bool clReads = !(m->flags() & CL_MEM_WRITE_ONLY);
            bool clWrites = !(m->flags() & CL_MEM_READ_ONLY);
            if (o->inPlace) {
                if (acquire && mapInPlace(*m, *o, clReads, clWrites))
                    continue;
                if (!acquire && o->mapped) {
                    unmapInPlace(*m, *o);
                    continue;
                }
            }
            // A depth-stencil image's stencil is GL's alone: CL writes only depth, so the
            // copy written back at release must start from GL's texels even when CL never
            // reads them.
            bool keepsGl = m->format.image_channel_order == CL_DEPTH_STENCIL;
            if (acquire && (clReads || (keepsGl && clWrites))) {
                status = std::min(status, copyFromGl(*m, *o));
            } else if (!acquire && clWrites) {
                copyToGl(*m, *o);
                copied = true;
            }
        }
        // Release: GL commands after the release event see CL's writes. Copies are GL
        // commands to finish; unmapping leaves CL's writes in GL's own store already, so a
        // flush does.
        if (!acquire) {
            if (copied)
                f.glFinish();
            else
                f.glFlush();
        }
    });
    return status;
}

Ref<Event> enqueueGlObjects(Queue& queue, std::shared_ptr<Share> share, std::span<Mem* const> mems,
                            std::span<Event* const> waitList, bool wantEvent, bool acquire) {
    std::vector<Shared> objects;
    objects.reserve(mems.size());
    for (Mem* m : mems)
        objects.push_back({retainRef(m), glObjectOf(*m)});
    // Acquire: the application's GL work issued so far must be done before CL reads.
    void* fence = acquire ? share->fenceAppContext() : nullptr;
    for (const auto& [m, o] : objects)
        m->glState.store(acquire ? Mem::GlState::Acquired : Mem::GlState::Released);
    // Release with the application's GL context current here: GL commands the application
    // issues after this call must see CL's writes (cl_khr_gl_event's implicit
    // synchronisation), so the call returns once the release has run.
    const bool waitHere = !acquire && share->appContextCurrent();
    std::vector<Shared> inPlace; // acquire: settleStorage waits for this command
    if (acquire)
        for (const Shared& s : objects)
            if (s.gl->movesStorage())
                inPlace.push_back(s);
    // Buffers through the interop device live in its memory on its own queues.
    const bool zeroCopy = share->interopDevice() && queue.device() == share->interopDevice();
    const cl_command_type type =
        acquire ? CL_COMMAND_ACQUIRE_GL_OBJECTS : CL_COMMAND_RELEASE_GL_OBJECTS;
    Ref<Event> event = queue.enqueue(
        type, waitList,
        [share, fence, acquire, zeroCopy, objects = std::move(objects)] {
            return runAcquireRelease(*share, fence, acquire, zeroCopy, objects);
        },
        false, wantEvent || waitHere || !inPlace.empty());
    for (const Shared& s : inPlace)
        s.gl->noteAcquire(event);
    if (waitHere)
        event->wait();
    return event;
}

} // namespace

Ref<Event> enqueueAcquire(Queue& queue, std::shared_ptr<Share> share, std::span<Mem* const> objects,
                          std::span<Event* const> waitList, bool wantEvent) {
    return enqueueGlObjects(queue, std::move(share), objects, waitList, wantEvent, true);
}

Ref<Event> enqueueRelease(Queue& queue, std::shared_ptr<Share> share, std::span<Mem* const> objects,
                          std::span<Event* const> waitList, bool wantEvent) {
    return enqueueGlObjects(queue, std::move(share), objects, waitList, wantEvent, false);
}

} // namespace duet::rt::gl
