// streamcheck's order of stream work, fed synthetic call sequences (no GPU): one case per way CUDA
// orders work (events, host waits, the legacy stream's implicit synchronization, per-thread default
// streams, memory words, devices), and what the order forgets (destroyed streams, exited threads).
#include "../../src/streamcheck/stream_order.hpp"

#include "../../src/streamcheck/call_kind.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <thread>

using streamlike::check::legacy_stream;
using streamlike::check::per_thread_stream;
using streamlike::check::stream_at;
using streamlike::check::stream_order;

namespace {

constexpr std::uint64_t host = 1;
constexpr std::uint64_t other_host = 2;
constexpr std::uintptr_t event = 0xe1;
constexpr std::uintptr_t event2 = 0xe2;

const stream_at current{0x7000, 0, host};
const stream_at side{0x8000, 0, host};
const stream_at third{0x9000, 0, host};
const stream_at legacy{legacy_stream, 0, host};

// Made non-blocking (as torch's streams are) unless told otherwise.
void make_streams(stream_order& order, bool blocking = false) {
  for (std::uintptr_t s : {current.stream, side.stream, third.stream}) order.stream_created(s, 0, blocking, false);
}

// Work queued on `on`, judged against `current`.
stream_order::judgment work(stream_order& order, const stream_at& on) { return order.queue(on, &current); }

} // namespace

TEST_CASE("work on another stream that nothing orders after the current stream's is not ordered") {
  stream_order order;
  make_streams(order);
  CHECK(work(order, side).ordered); // nothing queued on the current stream yet
  CHECK_FALSE(work(order, side).current_has_work);
  (void)order.queue(current, nullptr);
  (void)order.queue(current, nullptr);
  const stream_order::judgment j = work(order, side);
  CHECK_FALSE(j.ordered);
  CHECK(j.current_has_work);
  CHECK(j.unseen == 2);
}

TEST_CASE("an event recorded on the current stream and waited on orders what follows, up to the record") {
  stream_order order;
  make_streams(order);
  (void)order.queue(current, nullptr);
  order.event_recorded(event, current);
  CHECK_FALSE(work(order, side).ordered); // the wait is not made yet
  order.event_waited(event, side);
  CHECK(work(order, side).ordered);
  (void)order.queue(current, nullptr); // queued after the record: not waited for
  const stream_order::judgment j = work(order, side);
  CHECK_FALSE(j.ordered);
  CHECK(j.unseen == 1);
  // A wait on an event never recorded orders nothing; a destroyed event is forgotten.
  order.event_waited(0xdead, side);
  CHECK_FALSE(work(order, side).ordered);
  order.event_recorded(event2, current);
  order.event_destroyed(event2);
  order.event_waited(event2, side);
  CHECK_FALSE(work(order, side).ordered);
}

TEST_CASE("order passes on: the current stream before a second stream before a third") {
  stream_order order;
  make_streams(order);
  (void)order.queue(current, nullptr);
  order.event_recorded(event, current);
  order.event_waited(event, side);
  (void)order.queue(side, nullptr);
  order.event_recorded(event2, side);
  order.event_waited(event2, third);
  CHECK(work(order, third).ordered);
}

TEST_CASE("the host's waits order the work it queues next: stream, event and device synchronization") {
  SUBCASE("stream") {
    stream_order order;
    make_streams(order);
    (void)order.queue(current, nullptr);
    order.host_waited_stream(host, current);
    // Another thread did not wait; this one did.
    CHECK_FALSE(order.queue({side.stream, 0, other_host}, &current).ordered);
    CHECK(work(order, side).ordered);
  }
  SUBCASE("event") {
    stream_order order;
    make_streams(order);
    (void)order.queue(current, nullptr);
    order.event_recorded(event, current);
    order.host_waited_event(host, event);
    CHECK(work(order, side).ordered);
  }
  SUBCASE("device: every stream of it, and none of another device") {
    stream_order order;
    make_streams(order);
    order.stream_created(0xa000, 1, false, false);
    const stream_at on_device1{0xa000, 1, host};
    (void)order.queue(current, nullptr);
    (void)order.queue(on_device1, nullptr);
    order.host_waited_device(host, 1);
    CHECK_FALSE(work(order, side).ordered);
    CHECK(order.queue(side, &on_device1).ordered);
    order.host_waited_device(host, 0);
    CHECK(work(order, side).ordered);
  }
}

TEST_CASE("the legacy default stream and the blocking streams of its context wait for each other") {
  SUBCASE("legacy work after a blocking current stream's") {
    stream_order order;
    make_streams(order, /*blocking=*/true);
    (void)order.queue(current, nullptr);
    const stream_order::judgment j = work(order, legacy);
    CHECK(j.ordered);
    CHECK(j.implicit);
  }
  SUBCASE("not after a non-blocking one's") {
    stream_order order;
    make_streams(order, /*blocking=*/false);
    (void)order.queue(current, nullptr);
    const stream_order::judgment j = work(order, legacy);
    CHECK_FALSE(j.ordered);
    CHECK_FALSE(j.implicit);
  }
  SUBCASE("a blocking stream's work after the legacy stream's, which came after the current's") {
    stream_order order;
    make_streams(order, /*blocking=*/true);
    (void)order.queue(current, nullptr);
    (void)order.queue(legacy, nullptr);
    CHECK(work(order, side).ordered);
  }
  SUBCASE("the legacy stream of another device is another stream") {
    stream_order order;
    make_streams(order, /*blocking=*/true);
    (void)order.queue(current, nullptr);
    CHECK_FALSE(work(order, {legacy_stream, 1, host}).implicit);
  }
  SUBCASE("waiting for the legacy stream waits for the blocking streams too") {
    stream_order order;
    make_streams(order, /*blocking=*/true);
    (void)order.queue(current, nullptr);
    order.host_waited_stream(host, legacy);
    order.stream_created(0xb000, 0, false, false);
    CHECK(order.queue({0xb000, 0, host}, &current).ordered);
  }
}

TEST_CASE("each thread has its own per-thread default stream, which synchronizes with the legacy one") {
  stream_order order;
  make_streams(order, /*blocking=*/false);
  const stream_at mine{per_thread_stream, 0, host};
  const stream_at theirs{per_thread_stream, 0, other_host};
  (void)order.queue(mine, nullptr);
  order.event_recorded(event, mine);
  order.event_waited(event, current);
  // Only this thread's per-thread stream was waited on.
  CHECK(order.queue(current, &mine).ordered);
  CHECK(order.queue(current, &theirs).ordered); // nothing queued on theirs yet
  (void)order.queue(theirs, nullptr);
  CHECK_FALSE(order.queue(current, &theirs).ordered);
  // A per-thread stream's work waits for the legacy stream's, which waited for nothing here.
  (void)order.queue(legacy, nullptr);
  CHECK(order.queue(mine, &legacy).ordered);
}

TEST_CASE("a memory word written in stream order and waited on orders like an event") {
  stream_order order;
  make_streams(order);
  constexpr std::uintptr_t word = 0x5000;
  (void)order.queue(current, nullptr);
  (void)order.queue(current, nullptr); // the write itself, queued
  order.value_written(word, current);
  CHECK_FALSE(work(order, side).ordered);
  order.value_waited(word, side);
  CHECK(work(order, side).ordered);
}

TEST_CASE("what the order forgets: a destroyed stream's handle made again, an exited thread") {
  SUBCASE("a stream made again with the handle of a destroyed one waited for nothing") {
    stream_order order;
    make_streams(order);
    (void)order.queue(current, nullptr);
    order.event_recorded(event, current);
    order.event_waited(event, side);
    CHECK(work(order, side).ordered);
    order.stream_destroyed(side.stream);
    order.stream_created(side.stream, 0, false, false);
    CHECK_FALSE(work(order, side).ordered);
  }
  SUBCASE("so is a stream made with the handle of one whose destruction went unseen") {
    stream_order order;
    make_streams(order);
    (void)order.queue(current, nullptr);
    order.event_recorded(event, current);
    order.event_waited(event, side);
    CHECK(work(order, side).ordered);
    order.stream_created(side.stream, 0, false, false);
    CHECK_FALSE(work(order, side).ordered);
  }
  SUBCASE("a thread's host waits and per-thread stream are not inherited by a new thread of its id") {
    stream_order order;
    make_streams(order);
    (void)order.queue(current, nullptr);
    order.host_waited_stream(host, current);
    (void)order.queue({per_thread_stream, 0, host}, nullptr);
    const std::size_t streams = order.streams();
    order.forget_thread(host);
    CHECK(order.streams() == streams - 1);
    CHECK_FALSE(work(order, side).ordered);
  }
}

TEST_CASE("calls that went unseen: everything queued before is taken as ordered") {
  stream_order order;
  make_streams(order);
  (void)order.queue(current, nullptr);
  CHECK_FALSE(work(order, side).ordered);
  order.assume_all_ordered();
  CHECK(work(order, side).ordered);
  (void)order.queue(current, nullptr);
  CHECK_FALSE(work(order, side).ordered); // what comes after is judged again
}

TEST_CASE("a stream made by a library that orders its own streams says so in every judgment") {
  stream_order order;
  make_streams(order);
  order.stream_created(0xc000, 0, false, /*library_stream=*/true);
  (void)order.queue(current, nullptr);
  const stream_order::judgment j = work(order, {0xc000, 0, host});
  CHECK_FALSE(j.ordered);
  CHECK(j.library_stream);
  CHECK_FALSE(work(order, side).library_stream);
}

TEST_CASE("the host's order passes through the work it queues to a thread that waits for that work") {
  // This thread queues on the side stream (its last stream: the lock-free path), waits for the
  // current stream, queues on the side stream again; another thread waits for the side stream, and
  // what it queues next comes after the current stream's work too.
  stream_order order;
  make_streams(order);
  std::thread([&] { (void)order.queue(current, nullptr); }).join();
  order.host_waited_stream(host, third); // this thread's host clock exists from here on
  (void)order.queue(side, nullptr);
  (void)order.queue(side, nullptr);
  order.host_waited_stream(host, current);
  (void)order.queue(side, nullptr);
  order.host_waited_stream(other_host, side);
  order.stream_created(0xb000, 0, /*blocking=*/false, false);
  CHECK(order.queue({0xb000, 0, other_host}, &current).ordered);
}

TEST_CASE("the legacy stream's order passes through a blocking stream's lock-free work") {
  stream_order order;
  make_streams(order, /*blocking=*/true);
  std::thread([&] { (void)order.queue(legacy, nullptr); }).join(); // the legacy stream exists
  (void)order.queue(side, nullptr);
  (void)order.queue(side, nullptr); // the lock-free path from now on
  const stream_at legacy_elsewhere{legacy_stream, 0, other_host};
  std::thread([&] { (void)order.queue(legacy_elsewhere, nullptr); }).join();
  (void)order.queue(side, nullptr); // after the legacy stream's new work
  order.host_waited_stream(other_host, side);
  order.stream_created(0xb000, 0, /*blocking=*/false, false);
  CHECK(order.queue({0xb000, 0, other_host}, &legacy_elsewhere).ordered);
}
