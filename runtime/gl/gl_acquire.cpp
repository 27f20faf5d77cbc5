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
    bool glByApp = false; ///< GL's part in the application's context (DeviceObject::glByApp)
};

/// Waits on the GL thread until the application's fence has signalled, then deletes it: its GL
/// work is then complete, whatever context or device touches the objects next. (A server wait,
/// glWaitSync, would let the thread go on, but NVIDIA's driver neither ordered its CUDA-GL map
/// after one reliably (a texture uploaded just before read stale texels) nor made it cheap: a
/// wait across GL contexts costs about 160 us on the GPU, a fence seen from the host about 8.)
void waitForApp(const GlFunctions& f, void* fence) {
    auto s = static_cast<GLsync>(fence);
    while (f.glClientWaitSync(s, GL_SYNC_FLUSH_COMMANDS_BIT, 1000000000) == GL_TIMEOUT_EXPIRED) {
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
    // Only stores of the device's own (GlObject::deviceStore), the application's fence waited
    // for at enqueue: no GL call, so no trip to the GL thread either.
    if (!fence && !objects.empty() &&
        std::all_of(objects.begin(), objects.end(),
                    [](const Shared& s) { return s.gl->deviceStore; })) {
        std::vector<DeviceObject> viaDevice;
        for (const auto& [m, o, byApp] : objects)
            if (acquire || o->viaInterop)
                viaDevice.push_back({m.get(), o, !(m->flags() & CL_MEM_WRITE_ONLY),
                                     !(m->flags() & CL_MEM_READ_ONLY), false});
        bool glWork = false;
        return acquire ? acquireThroughDevice(share, viaDevice, zeroCopy)
                       : releaseThroughDevice(share, viaDevice, glWork);
    }
    share.run([&] {
        const auto& f = glFunctions();
        if (fence)
            waitForApp(f, fence);
        bool copied = false;
        std::vector<DeviceObject> viaDevice;
        for (const auto& [m, o, byApp] : objects)
            if (o->resource && (acquire || o->viaInterop))
                viaDevice.push_back({m.get(), o, !(m->flags() & CL_MEM_WRITE_ONLY),
                                     !(m->flags() & CL_MEM_READ_ONLY), byApp});
        if (!viaDevice.empty())
            status = acquire ? acquireThroughDevice(share, viaDevice, zeroCopy)
                             : releaseThroughDevice(share, viaDevice, copied);
        for (const auto& [m, o, byApp] : objects) {
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
                status = std::min(status, copyToGl(*m, *o));
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
    // With the application's context current here, GL's copies between small objects and their
    // shadows happen in that context (no switch between GL contexts on the GPU): an acquire's
    // now, before the fence below; a release's once the command has run, as this call returns
    // then anyway. Not while an earlier release of the object may still copy out of the shadow.
    const bool appCurrent = share->appContextCurrent();
    for (Mem* m : mems) {
        GlObject* o = glObjectOf(*m);
        const bool byApp =
            appCurrent && appSideCapable(*share, *o, acquire) && (!acquire || !o->releasePending());
        objects.push_back({retainRef(m), o, byApp});
        if (byApp && acquire && !(m->flags() & CL_MEM_WRITE_ONLY))
            appSideAcquire(*m, *o);
    }
    // Acquire: the application's GL work issued so far must be done before CL reads. Where
    // every object's store is the device's own, this thread waits for it now (about 8 us on an
    // H100, what glFinish would cost the application) and the command needs no GL thread.
    void* fence = acquire ? share->fenceAppContext() : nullptr;
    if (fence && !objects.empty() &&
        std::all_of(objects.begin(), objects.end(),
                    [](const Shared& s) { return s.gl->deviceStore; })) {
        waitForApp(glFunctions(), fence);
        fence = nullptr;
    }
    for (const Shared& s : objects)
        s.mem->glState.store(acquire ? Mem::GlState::Acquired : Mem::GlState::Released);
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
    std::vector<Shared> byApp; // release: copied out of the shadow here once the command ran
    bool shadows = false;      // release: acquires of these objects look at this one's event
    for (const Shared& s : objects) {
        shadows |= !acquire && s.gl->shadowBuffer;
        if (s.glByApp && !acquire)
            byApp.push_back(s);
    }
    // The command holds `objects`; the event (made whenever someone waits) outlives it.
    Ref<Event> event = queue.enqueue(
        type, waitList,
        [share, fence, acquire, zeroCopy, objects = std::move(objects)] {
            return runAcquireRelease(*share, fence, acquire, zeroCopy, objects);
        },
        false, wantEvent || waitHere || !inPlace.empty() || shadows);
    for (const Shared& s : inPlace)
        s.gl->noteAcquire(event);
    if (!acquire && shadows)
        for (Mem* m : mems)
            glObjectOf(*m)->noteRelease(event);
    if (waitHere)
        event->wait();
    for (const Shared& s : byApp)
        if (std::exchange(s.gl->appCopyDue, false))
            appSideRelease(*s.mem, *s.gl);
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
