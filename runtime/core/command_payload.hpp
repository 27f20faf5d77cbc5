// What a queued command works on, kept apart from its function (core/queue.hpp).
#pragma once

#include <vector>

namespace duet::rt {

struct Object;

/// The data of an enqueued command that holds references (a launch's kernel, memory objects and
/// samplers). When the command completes, its queue drops the references at once (a release
/// right after a wait must be the last one) but frees the storage later, off the path of the
/// thread waiting for the command: that storage was written by the application's thread and read
/// by the queue's, and freeing it costs a cache-line transfer per block on a large host.
class CommandPayload {
public:
    virtual ~CommandPayload() = default;
    /// Appends the objects whose references the payload holds to `out`: the queue releases them
    /// when the command completes (those of several commands together), then calls forgetRefs
    /// before it destroys the payload.
    virtual void collectRefs(std::vector<Object*>& out) const = 0;
    /// Clears the pointers collectRefs gave, without releasing them.
    virtual void forgetRefs() = 0;
};

} // namespace duet::rt
