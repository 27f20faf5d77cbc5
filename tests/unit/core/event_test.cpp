// Event watchers (Event::onComplete): run once with the final status, or freed with the event.
#include "core/event.hpp"

#include <catch.hpp>

#include <atomic>
#include <memory>
#include <thread>

namespace duet::rt {
/// The API layer's dispatch table (api/icd.cpp), which duet-runtime-internals leaves out: no
/// handle of this test reaches the ICD loader, so an empty table serves.
const cl_icd_dispatch g_dispatch{};
} // namespace duet::rt

using duet::rt::adoptRef;
using duet::rt::Event;
using duet::rt::makeObject;
using duet::rt::Ref;

namespace {

/// A user event (no context: nothing here reads it).
Ref<Event> userEvent() {
    return adoptRef(makeObject<Event>(Ref<duet::rt::Context>(), nullptr, CL_COMMAND_USER));
}

} // namespace

TEST_CASE("a watcher of an event that never completes is freed with the event", "[event]") {
    // What an out-of-order queue leaves on a user event the application releases unset: the
    // watcher and what it holds (the queue's state, weakly) must go with the event. Before the
    // event owned its watchers, the queue's `new std::weak_ptr` leaked here.
    auto held = std::make_shared<int>(7);
    std::weak_ptr<int> probe = held;
    int runs = 0;
    {
        Ref<Event> ev = userEvent();
        ev->onComplete([held, &runs](cl_int) { ++runs; });
        held.reset();
        REQUIRE_FALSE(probe.expired()); // the event holds the watcher
    }
    CHECK(probe.expired());
    CHECK(runs == 0);
}

TEST_CASE("a watcher runs once with the final status and is then freed", "[event]") {
    for (cl_int final : {cl_int(CL_COMPLETE), cl_int(-5)}) {
        auto held = std::make_shared<int>(1);
        std::weak_ptr<int> probe = held;
        Ref<Event> ev = userEvent();
        int runs = 0;
        cl_int seen = 1;
        ev->onComplete([held, &runs, &seen](cl_int s) {
            ++runs;
            seen = s;
        });
        held.reset();
        ev->setStatus(CL_RUNNING); // not final: nothing runs
        CHECK(runs == 0);
        ev->setStatus(final);
        CHECK(runs == 1);
        CHECK(seen == final);
        CHECK(probe.expired());     // run once, then dropped, while the event lives on
        ev->setStatus(CL_COMPLETE); // already final: nothing runs again
        CHECK(runs == 1);
    }
}

TEST_CASE("a watcher of a completed event runs at once", "[event]") {
    Ref<Event> ev = userEvent();
    ev->setStatus(-3);
    cl_int seen = 1;
    ev->onComplete([&](cl_int s) { seen = s; });
    CHECK(seen == -3);
}

TEST_CASE("watchers and callbacks registered while another thread completes the event", "[event]") {
    // Each watcher runs exactly once, whether registered before the event completed (run by the
    // completing thread) or after (run at once); none is lost between the two.
    for (int round = 0; round < 200; ++round) {
        Ref<Event> ev = userEvent();
        std::atomic<int> runs{0};
        std::thread completer([&] { ev->setStatus(CL_COMPLETE); });
        for (int i = 0; i < 8; ++i)
            ev->onComplete([&runs](cl_int s) {
                if (s == CL_COMPLETE)
                    runs.fetch_add(1);
            });
        completer.join();
        REQUIRE(runs.load() == 8);
    }
}
