// cl_khr_gl_event: CL events made from GL sync objects, completed by polling on the GL thread.
#include "gl/gl_functions.hpp"
#include "gl/gl_object.hpp"
#include "gl/gl_share.hpp"

#include <chrono>
#include <thread>

namespace duet::rt::gl {

namespace {

/// A GL sync object an event waits for.
struct SyncPoll {
    Ref<Event> event;
    GLsync sync = nullptr;
    Share* share = nullptr; ///< alive while the event (and so its context) is
};

/// Polls on the GL thread without blocking it, so acquires queued behind still run.
void pollSync(std::shared_ptr<SyncPoll> st) {
    st->share->post([st] {
        GLenum r = glFunctions().glClientWaitSync(st->sync, GL_SYNC_FLUSH_COMMANDS_BIT, 0);
        if (r == GL_TIMEOUT_EXPIRED) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            pollSync(st);
            return;
        }
        Ref<Event> e = std::move(st->event);
        e->setStatus(r == GL_WAIT_FAILED ? CL_OUT_OF_RESOURCES : CL_COMPLETE);
        // The last reference may take the context and its GL thread with it: drop it on
        // another thread, never on the GL thread it would join.
        std::thread([e = std::move(e)] {}).detach();
    });
}

} // namespace

Result<Event*> createEventFromSync(Context& context, std::shared_ptr<Share> share, void* sync) {
    bool valid = false;
    auto s = static_cast<GLsync>(sync);
    share->run([&] { valid = s && glFunctions().glIsSync(s); });
    if (!valid)
        return makeError(CL_INVALID_GL_OBJECT, "sync is not a GL sync object of the share group");
    Event* e = makeObject<Event>(retainRef(&context), nullptr, CL_COMMAND_GL_FENCE_SYNC_OBJECT_KHR);
    auto state = std::make_shared<SyncPoll>();
    state->event = retainRef(e);
    state->sync = s;
    state->share = share.get();
    pollSync(state);
    return e;
}

} // namespace duet::rt::gl
