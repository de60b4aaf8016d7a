// streamlike/ordering.hpp and stream_view::wait on a device: after wait(consumer, producer) the
// consumer's work sees everything the producer had queued (a long-running producer that writes a
// flag at its end; a gate that holds the producer), on one device and across two; wait(s, s) is a
// no-op; no event is created per call (the per-thread cache, counted by interposing cudaEvent*);
// and 8 threads waiting at once each get their own cached event, released when they exit.
// (The cache after cudaDeviceReset is tested in device_reset.cu: a reset ends every stream.)
#include "call_counters.hpp"
#include "gpu_support.hpp"
#include "ordering_checks.hpp"
#include "timed_kernels.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/ordering.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

using streamlike::shared_stream;
using streamlike::stream_view;

// Gate version: the consumer's work must not run while the producer is held. Returns whether
// the consumer's write appeared while the producer was held (checked by the callers).
bool consumer_ran_while_producer_held(stream_view producer, stream_view consumer, bool with_wait) {
  using namespace std::chrono_literals;
  gpu_test::mapped_ints value{1};
  {
    // Load the consumer's kernel on its device before the gate closes: CUDA loads kernels lazily
    // (CUDA_MODULE_LOADING=LAZY, the default), and the first launch on a device may wait for
    // work already running, here the held producer (seen across two H200s: the launch returned
    // only when the gate timed out).
    const streamlike::device_guard on_consumer(consumer);
    GPU_REQUIRE_CUDA(gpu_test::launch_write(consumer.get(), value.device(), 0));
    consumer.sync();
  }
  gpu_test::gate g; // last: opens first on the way out
  {
    const streamlike::device_guard on_producer(producer);
    GPU_REQUIRE_CUDA(g.close(producer.get()));
  }
  if (with_wait) streamlike::wait(consumer, producer);
  {
    const streamlike::device_guard on_consumer(consumer);
    GPU_REQUIRE_CUDA(gpu_test::launch_write(consumer.get(), value.device(), 7));
  }
  bool ran = false;
  if (with_wait) {
    // Unheld, the consumer's kernel would be done in microseconds.
    std::this_thread::sleep_for(50ms);
    ran = value.read(0) == 7;
    CHECK_FALSE(consumer.is_done());
  } else {
    // Unordered, it runs at once; poll (other programs of the suite may share the GPU).
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (!(ran = value.read(0) == 7) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  }
  g.open();
  consumer.sync();
  producer.sync();
  CHECK_FALSE(g.timed_out());
  CHECK_MESSAGE(value.read(0) == 7, "the consumer's kernel did not run after the producer was released");
  return ran;
}

} // namespace

TEST_CASE(
    "wait(consumer, producer): the consumer sees the flag a long-running producer writes at its end, 100 rounds") {
  SUBCASE("two shared_streams") {
    const shared_stream producer = shared_stream::create();
    const shared_stream consumer = shared_stream::create();
    gpu_test::check_ordered_rounds(producer.view(), consumer.view());
  }
  SUBCASE("a unique_stream waits for a foreign raw cudaStream_t, through streamlike::wait's stream_like arguments") {
    gpu_test::owned_stream producer;
    const streamlike::unique_stream consumer = streamlike::unique_stream::create();
    gpu_test::mapped_ints flag{1};
    gpu_test::mapped_ints seen{1};
    GPU_REQUIRE_CUDA(gpu_test::launch_spin_then_write(producer.get(), flag.device(), 1, 20'000'000)); // 20 ms
    streamlike::wait(consumer, producer.get());
    GPU_REQUIRE_CUDA(gpu_test::launch_observe(consumer.get(), flag.device(), 1, seen.device()));
    consumer.view().sync();
    CHECK_MESSAGE(seen.read(0) == 1, "the consumer saw " << seen.read(0) << " (1: flag set, 2: unset, 0: never ran)");
  }
}

TEST_CASE("wait(consumer, producer): the consumer's work is held while the producer is held") {
  const shared_stream producer = shared_stream::create();
  const shared_stream consumer = shared_stream::create();
  CHECK_FALSE_MESSAGE(consumer_ran_while_producer_held(producer.view(), consumer.view(), true),
                      "after wait(consumer, producer), the consumer's kernel ran while the producer was held");
  // The control: without wait the two streams are independent and the consumer's kernel runs at
  // once, so the check above can fail.
  CHECK_MESSAGE(consumer_ran_while_producer_held(producer.view(), consumer.view(), false),
                "without wait the consumer's kernel did not run while the producer was held: the gate experiment "
                "cannot tell ordered from unordered");
}

TEST_CASE("wait(s, s) is a no-op: no CUDA call, and the stream still works") {
  const shared_stream s = shared_stream::create();
  const shared_stream copy = s;
  const call_counters::counts before = call_counters::now();
  streamlike::wait(s, s);
  streamlike::wait(s, copy);
  streamlike::wait(s.view(), s.get());
  s.view().wait(s.view());
  const call_counters::counts d = call_counters::since(before, call_counters::now());
  CHECK_MESSAGE(d.event_records + d.stream_wait_events + d.event_creates == 0,
                "wait on the same stream called CUDA: " << d);
  // Same-stream work is ordered anyway: a kernel after the no-op sees the one before.
  gpu_test::mapped_ints flag{1};
  gpu_test::mapped_ints seen{1};
  GPU_REQUIRE_CUDA(gpu_test::launch_spin_then_write(s.get(), flag.device(), 1, 5'000'000));
  streamlike::wait(s, copy);
  GPU_REQUIRE_CUDA(gpu_test::launch_observe(s.get(), flag.device(), 1, seen.device()));
  s.view().sync();
  CHECK(seen.read(0) == 1);
}

TEST_CASE("no event is created per call: one cudaEventRecord and one cudaStreamWaitEvent per wait") {
  const shared_stream producer = shared_stream::create();
  const shared_stream consumer = shared_stream::create();
  streamlike::wait(consumer, producer); // warms this thread's cache
  REQUIRE_MESSAGE(call_counters::active(), "the interposer saw no call: the counts below would be vacuous");

  constexpr int waits = 1000;
  const call_counters::counts before = call_counters::now();
  for (int i = 0; i < waits; ++i) streamlike::wait(consumer, producer);
  const call_counters::counts d = call_counters::since(before, call_counters::now());
  CHECK_MESSAGE(d.event_creates == 0, waits << " waits created " << d.event_creates << " events");
  CHECK_MESSAGE(d.event_records == waits, "expected one cudaEventRecord per wait: " << d);
  CHECK_MESSAGE(d.stream_wait_events == waits, "expected one cudaStreamWaitEvent per wait: " << d);
  CHECK(d.event_destroys == 0);
}

TEST_CASE("8 threads wait at once: each its own cached event, each ordered, each event released at thread exit") {
  constexpr int threads = 8;
  constexpr int rounds = 20;
  constexpr int bare_waits = 1000;
  std::atomic<int> ordered{0};
  std::atomic<int> failures{0};
  std::atomic<bool> go{false};
  const call_counters::counts before = call_counters::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      try {
        const shared_stream producer = shared_stream::create();
        const shared_stream consumer = shared_stream::create();
        while (!go.load()) std::this_thread::yield();
        // Bare waits first, racing with the other threads' waits on their own events.
        for (int i = 0; i < bare_waits; ++i) streamlike::wait(consumer, producer);
        const gpu_test::rounds_seen seen =
            gpu_test::run_rounds(producer.view(), consumer.view(), rounds, true, 1'000'000);
        ordered += seen.set;
      } catch (...) {
        ++failures; // a failed REQUIRE throws: it must not escape the thread; counted, checked below
      }
    });
  }
  go = true;
  for (std::thread& w : workers) w.join();
  const call_counters::counts d = call_counters::since(before, call_counters::now());

  CHECK(failures.load() == 0);
  CHECK_MESSAGE(ordered.load() == threads * rounds,
                ordered.load() << " of " << threads * rounds << " consumer reads saw the producer's flag");
  CHECK_MESSAGE(d.event_creates == threads, "expected one cached event per thread (one device): " << d);
  CHECK_MESSAGE(d.event_destroys == threads, "expected each thread's cached event destroyed at its exit: " << d);
  CHECK(d.event_records == threads * (rounds + bare_waits));
  CHECK(d.stream_wait_events == threads * (rounds + bare_waits));
}

TEST_CASE("across devices: producer on device 0, consumer on device 1, and back (needs two GPUs)") {
  if (gpu_test::device_count() < 2) {
    MESSAGE("skipped: one CUDA device; ordering across devices needs two");
    return;
  }
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  const shared_stream on_0 = shared_stream::create({.device = 0});
  const shared_stream on_1 = shared_stream::create({.device = 1});
  REQUIRE(on_1.device() == 1);

  SUBCASE("0 -> 1, flag rounds") { gpu_test::check_ordered_rounds(on_0.view(), on_1.view()); }
  SUBCASE("1 -> 0, flag rounds") { gpu_test::check_ordered_rounds(on_1.view(), on_0.view()); }
  SUBCASE("0 -> 1, gate") {
    CHECK_FALSE(consumer_ran_while_producer_held(on_0.view(), on_1.view(), true));
    CHECK(consumer_ran_while_producer_held(on_0.view(), on_1.view(), false)); // the control
  }
  SUBCASE("a cached event per device: a second device adds one event, then none") {
    // This thread already holds an event for device 0 from earlier tests, or makes it now.
    streamlike::wait(on_1, on_0);
    streamlike::wait(on_0, on_1);
    const call_counters::counts before = call_counters::now();
    for (int i = 0; i < 100; ++i) {
      streamlike::wait(on_1, on_0);
      streamlike::wait(on_0, on_1);
    }
    const call_counters::counts d = call_counters::since(before, call_counters::now());
    CHECK_MESSAGE(d.event_creates == 0, d);
    CHECK(d.event_records == 200);
  }
  int current = -1;
  GPU_REQUIRE_CUDA(cudaGetDevice(&current));
  CHECK(current == 0); // wait() leaves the current device alone
}
