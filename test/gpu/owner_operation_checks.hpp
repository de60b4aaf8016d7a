// The checks of the operations shared_stream and unique_stream share with stream_view (is_done,
// sync, wait, record), run on real streams by shared_stream.cu and unique_stream.cu. Header-only;
// links with gpu_support and timed_kernels.
#ifndef STREAMLIKE_TEST_GPU_OWNER_OPERATION_CHECKS_HPP
#define STREAMLIKE_TEST_GPU_OWNER_OPERATION_CHECKS_HPP

#include "gpu_support.hpp"
#include "timed_kernels.hpp"

#include <streamlike/event.hpp>
#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace gpu_test {

// `producer` and `consumer` own two distinct live streams of the current device.
template <class Owner>
void check_owner_operations(const Owner& producer, const Owner& consumer) {
  REQUIRE(producer.get() != consumer.get());
  constexpr unsigned long long spin_ns = 20'000'000; // 20 ms of device time, for the timed events

  SUBCASE("is_done is false while work is held, sync waits for it, and is_done is true after") {
    gate held;
    GPU_REQUIRE_CUDA(held.close(producer.get()));
    mapped_ints flag{1};
    GPU_REQUIRE_CUDA(launch_write(producer.get(), flag.device(), 7));
    if (held.holds("is_done() says false and the kernel waits while the stream is held")) {
      CHECK_FALSE(producer.is_done());
      CHECK(flag.read(0) == 0);
    }
    held.open();
    producer.sync();
    CHECK_FALSE(held.timed_out());
    CHECK(flag.read(0) == 7); // sync returned only after the kernel ran
    CHECK(producer.is_done());
  }

  SUBCASE("sync waits for work held on the device: its write is visible when sync returns") {
    mapped_ints flag{1};
    gate held;
    GPU_REQUIRE_CUDA(launch_held_write(held, producer.get(), flag.device(), 1));
    std::atomic<bool> opened{false};
    std::thread opener([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      opened = true;
      held.open();
    });
    producer.sync(); // returns only once the gate opened and the write ran
    const bool opened_before_return = opened;
    opener.join();
    if (held.holds("sync returns only once the held work ran")) CHECK(opened_before_return);
    CHECK(flag.read(0) == 1);
    CHECK(producer.is_done());
    CHECK_FALSE(held.timed_out());
  }

  SUBCASE("wait(producer owner) orders the consumer's work after the producer's") {
    mapped_ints flag{1};
    mapped_ints seen{1};
    gate held;
    GPU_REQUIRE_CUDA(launch_held_write(held, producer.get(), flag.device(), 1));
    consumer.wait(producer);
    GPU_REQUIRE_CUDA(launch_observe(consumer.get(), flag.device(), 1, seen.device()));
    if (held.holds("the consumer waits while the producer is held")) CHECK_FALSE(let_unordered_work_run(seen, 1));
    held.open();
    consumer.sync();
    CHECK_FALSE(held.timed_out());
    CHECK_MESSAGE(seen.read(0) == 1, "the consumer saw " << seen.read(0) << " (1: flag set, 2: unset, 0: never ran)");
  }

  SUBCASE("wait(a raw handle and a view of the producer) orders the same way") {
    mapped_ints flag{2};
    mapped_ints seen{2};
    gate held;
    GPU_REQUIRE_CUDA(launch_held_write(held, producer.get(), flag.device(), 1));
    consumer.wait(producer.get());
    GPU_REQUIRE_CUDA(launch_observe(consumer.get(), flag.device(), 1, seen.device()));
    GPU_REQUIRE_CUDA(launch_write(producer.get(), flag.device() + 1, 1)); // behind the same gate
    consumer.wait(streamlike::stream_view{producer.get()});
    GPU_REQUIRE_CUDA(launch_observe(consumer.get(), flag.device() + 1, 1, seen.device() + 1));
    if (held.holds("the consumer waits while the producer is held")) CHECK_FALSE(let_unordered_work_run(seen, 2));
    held.open();
    consumer.sync();
    CHECK_FALSE(held.timed_out());
    CHECK(seen.read(0) == 1);
    CHECK(seen.read(1) == 1);
  }

  SUBCASE("wait on its own stream is a no-op and the stream still works") {
    producer.wait(producer);
    mapped_ints flag{1};
    GPU_REQUIRE_CUDA(launch_write(producer.get(), flag.device(), 3));
    producer.sync();
    CHECK(flag.read(0) == 3);
  }

  SUBCASE("record gives an event holding the work so far: done after sync; wait(event) orders on it") {
    mapped_ints flag{1};
    mapped_ints seen{1};
    gate held;
    GPU_REQUIRE_CUDA(launch_held_write(held, producer.get(), flag.device(), 1));
    const streamlike::event recorded = producer.record();
    REQUIRE(recorded);
    consumer.wait(recorded.get());
    GPU_REQUIRE_CUDA(launch_observe(consumer.get(), flag.device(), 1, seen.device()));
    if (held.holds("the event is not done and the consumer waits while the producer is held")) {
      CHECK_FALSE(recorded.is_done());
      CHECK_FALSE(let_unordered_work_run(seen, 1));
    }
    held.open();
    recorded.sync();
    CHECK(recorded.is_done());
    CHECK(flag.read(0) == 1);
    consumer.sync();
    CHECK_MESSAGE(seen.read(0) == 1, "the consumer saw " << seen.read(0) << " (1: flag set, 2: unset, 0: never ran)");
  }

  SUBCASE("record with timing: two events measure the work between them") {
    const streamlike::event start = producer.record({.timing = true});
    GPU_REQUIRE_CUDA(launch_spin(producer.get(), spin_ns));
    const streamlike::event stop = producer.record({.timing = true});
    producer.sync();
    CHECK(start.is_done());
    CHECK(stop.is_done());
    CHECK(streamlike::elapsed_ms(start, stop) >= 15.0f); // at least most of the 20 ms spin
  }
}

} // namespace gpu_test

#endif // STREAMLIKE_TEST_GPU_OWNER_OPERATION_CHECKS_HPP
