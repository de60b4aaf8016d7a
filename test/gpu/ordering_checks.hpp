// The ordering experiments shared by ordering.cu, multi_gpu.cu and device_reset.cu:
// producer/consumer rounds in which the consumer reads a flag that a held producer writes once the
// test releases it, and the gate experiment (the consumer held while the producer is).
// Header-only; links with gpu_support and timed_kernels.
#ifndef STREAMLIKE_TEST_GPU_ORDERING_CHECKS_HPP
#define STREAMLIKE_TEST_GPU_ORDERING_CHECKS_HPP

#include "gpu_support.hpp"
#include "timed_kernels.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/ordering.hpp>
#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <ostream>
#include <thread>

namespace gpu_test {

struct rounds_seen {
  int set = 0;       // the consumer saw the producer's flag: ordered
  int unset = 0;     // the consumer ran before the producer finished
  int never_ran = 0; // the consumer's kernel did not run at all
  int rounds = 0;
};

inline std::ostream& operator<<(std::ostream& os, const rounds_seen& r) {
  return os << r.set << " of " << r.rounds << " consumer reads saw the flag set, " << r.unset << " saw it unset, "
            << r.never_ran << " never ran";
}

// Queues `rounds` rounds without waiting in between, while the producer is held by a gate: a
// producer kernel that sets flag[i]; then, if `with_wait`, streamlike::wait(consumer, producer);
// then a consumer kernel that records whether it saw flag[i] set. Each round uses a fresh flag, and
// each wait re-records the cached event while the earlier rounds are still queued (a wait must
// capture the event's state when it is queued). With the rounds queued, unordered consumer work is
// given its chance to run (let_unordered_work_run) before the gate opens: with wait() none may run,
// however slow the host; without it they run at once and see their flags unset. Every launch runs
// with its stream's device current; the wait() calls alternate between the caller's current
// device and the consumer's, so across devices waits run with either one current. Returns what
// the consumers saw.
inline rounds_seen run_rounds(streamlike::stream_view producer, streamlike::stream_view consumer, int rounds,
                              bool with_wait) {
  mapped_ints flags{static_cast<std::size_t>(rounds)}; // zeroed; mapped host memory: any device reaches it
  mapped_ints seen{static_cast<std::size_t>(rounds)};
  {
    // Load both kernels on their devices before the gate closes: CUDA loads kernels lazily, and a
    // first launch may wait for the work already running, here the held producer.
    const streamlike::device_guard on_producer(producer);
    GPU_REQUIRE_CUDA(launch_write(producer.get(), flags.device(), 0));
    producer.sync();
  }
  {
    const streamlike::device_guard on_consumer(consumer);
    GPU_REQUIRE_CUDA(launch_observe(consumer.get(), flags.device(), 0, seen.device()));
    consumer.sync();
    seen.write(0, 0);
  }
  gate held; // opened below, or by its destructor if a REQUIRE leaves early
  {
    const streamlike::device_guard on_producer(producer);
    GPU_REQUIRE_CUDA(held.close(producer.get()));
  }
  for (int i = 0; i < rounds; ++i) {
    {
      const streamlike::device_guard on_producer(producer);
      GPU_REQUIRE_CUDA(launch_write(producer.get(), flags.device() + i, i + 1));
    }
    if (with_wait) {
      if (i % 2 == 0) {
        streamlike::wait(consumer, producer); // whatever device is current
      } else {
        const streamlike::device_guard on_consumer(consumer);
        streamlike::wait(consumer, producer);
      }
    }
    {
      const streamlike::device_guard on_consumer(consumer);
      GPU_REQUIRE_CUDA(launch_observe(consumer.get(), flags.device() + i, i + 1, seen.device() + i));
    }
  }
  const bool ran_while_held = let_unordered_work_run(seen, static_cast<std::size_t>(rounds));
  if (with_wait && held.holds("no consumer read runs while the producer is held")) CHECK_FALSE(ran_while_held);
  held.open();
  consumer.sync();
  producer.sync();
  CHECK_FALSE(held.timed_out());
  rounds_seen result;
  result.rounds = rounds;
  for (int i = 0; i < rounds; ++i) {
    switch (seen.read(static_cast<std::size_t>(i))) {
      case 1: ++result.set; break;
      case 2: ++result.unset; break;
      default: ++result.never_ran; break;
    }
  }
  return result;
}

// The assertion: with wait(), every round is ordered. Without it the same rounds are allowed to
// race; their outcome is only reported (it shows the experiment can tell the difference).
inline void check_ordered_rounds(streamlike::stream_view producer, streamlike::stream_view consumer, int rounds = 100) {
  const rounds_seen ordered = run_rounds(producer, consumer, rounds, true);
  CHECK_MESSAGE(ordered.set == rounds, "with wait(consumer, producer): " << ordered);
  const rounds_seen unordered = run_rounds(producer, consumer, rounds, false);
  MESSAGE("for comparison, without wait (allowed to race, not asserted): " << unordered);
}

// The gate experiment: the consumer's work must not run while the producer is held. Returns
// whether the consumer's write appeared while the producer was held, or nothing when that cannot
// be observed in this process (gpu_support.hpp: concurrency; the skip is reported).
inline std::optional<bool> consumer_ran_while_producer_held(streamlike::stream_view producer,
                                                            streamlike::stream_view consumer, bool with_wait) {
  using namespace std::chrono_literals;
  mapped_ints value{1};
  {
    // Load the consumer's kernel on its device before the gate closes: CUDA loads kernels lazily
    // (CUDA_MODULE_LOADING=LAZY, the default), and the first launch on a device may wait for
    // work already running, here the held producer (seen across two H200s: the launch returned
    // only when the gate timed out).
    const streamlike::device_guard on_consumer(consumer);
    GPU_REQUIRE_CUDA(launch_write(consumer.get(), value.device(), 0));
    consumer.sync();
  }
  gate g; // last: opens first on the way out
  {
    const streamlike::device_guard on_producer(producer);
    GPU_REQUIRE_CUDA(g.close(producer.get()));
  }
  if (with_wait) streamlike::wait(consumer, producer);
  {
    const streamlike::device_guard on_consumer(consumer);
    GPU_REQUIRE_CUDA(launch_write(consumer.get(), value.device(), 7));
  }
  std::optional<bool> ran;
  if (!g.holds(with_wait ? "the consumer waits while the producer is held"
                         : "without wait the consumer runs while the producer is held")) {
  } else if (with_wait) {
    // Unheld, the consumer's kernel would be done in microseconds.
    std::this_thread::sleep_for(50ms);
    ran = value.read(0) == 7;
    CHECK_FALSE(consumer.is_done());
  } else if (check_possible(measure_concurrency().kernels_overlap,
                            "without wait the consumer runs while the producer is held")) {
    // Unordered, it runs at once; poll (other programs of the suite may share the GPU).
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    bool seen = false;
    while (!(seen = value.read(0) == 7) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    ran = seen;
  }
  g.open();
  consumer.sync();
  producer.sync();
  CHECK_FALSE(g.timed_out());
  CHECK_MESSAGE(value.read(0) == 7, "the consumer's kernel did not run after the producer was released");
  return ran;
}

// After wait(consumer, producer) the consumer's kernel does not run while the producer is held;
// and the control: without wait the two streams are independent and the consumer's kernel runs at
// once, so the first check can fail.
inline void check_consumer_held_by_producer(streamlike::stream_view producer, streamlike::stream_view consumer) {
  if (const std::optional<bool> ran = consumer_ran_while_producer_held(producer, consumer, true)) {
    CHECK_FALSE_MESSAGE(*ran, "after wait(consumer, producer), the consumer's kernel ran while the producer was held");
  }
  if (const std::optional<bool> ran = consumer_ran_while_producer_held(producer, consumer, false)) {
    CHECK_MESSAGE(*ran, "without wait the consumer's kernel did not run while the producer was held: the gate "
                        "experiment cannot tell ordered from unordered");
  }
}

} // namespace gpu_test

#endif // STREAMLIKE_TEST_GPU_ORDERING_CHECKS_HPP
