// streamlike/ordering.hpp and stream_view::wait on a device: after wait(consumer, producer) the
// consumer's work sees everything the producer had queued (a long-running producer that writes a
// flag at its end; a gate that holds the producer), on one device (across two: multi_gpu.cu); wait(s, s) is a
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
#include <mutex>
#include <thread>
#include <vector>

namespace {

using streamlike::shared_stream;
using streamlike::stream_view;

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
    gpu_test::gate held;
    GPU_REQUIRE_CUDA(gpu_test::launch_held_write(held, producer.get(), flag.device(), 1));
    streamlike::wait(consumer, producer.get());
    GPU_REQUIRE_CUDA(gpu_test::launch_observe(consumer.get(), flag.device(), 1, seen.device()));
    if (held.holds("the consumer waits while the producer is held"))
      CHECK_FALSE(gpu_test::let_unordered_work_run(seen, 1));
    held.open();
    consumer.view().sync();
    CHECK_FALSE(held.timed_out());
    CHECK_MESSAGE(seen.read(0) == 1, "the consumer saw " << seen.read(0) << " (1: flag set, 2: unset, 0: never ran)");
  }
}

TEST_CASE("wait(consumer, producer): the consumer's work is held while the producer is held") {
  const shared_stream producer = shared_stream::create();
  const shared_stream consumer = shared_stream::create();
  gpu_test::check_consumer_held_by_producer(producer.view(), consumer.view());
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
  gpu_test::gate held;
  GPU_REQUIRE_CUDA(gpu_test::launch_held_write(held, s.get(), flag.device(), 1));
  streamlike::wait(s, copy);
  GPU_REQUIRE_CUDA(gpu_test::launch_observe(s.get(), flag.device(), 1, seen.device()));
  held.open();
  s.view().sync();
  CHECK_FALSE(held.timed_out());
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
  CHECK_MESSAGE(d.event_records == waits,
                "expected one event record (cuEventRecord or cudaEventRecord) per wait: " << d);
  CHECK_MESSAGE(d.stream_wait_events == waits,
                "expected one stream wait (cuStreamWaitEvent or cudaStreamWaitEvent) per wait: " << d);
  CHECK(d.event_destroys == 0);
}

TEST_CASE("8 threads wait at once: each its own cached event, each ordered, each event released at thread exit") {
  constexpr int threads = 8;
  constexpr int rounds = 20;
  constexpr int bare_waits = 1000;
  std::atomic<int> ordered{0};
  std::atomic<int> failures{0};
  std::atomic<bool> go{false};
  // The gated rounds run one thread at a time: run_rounds allocates and frees mapped memory and
  // the gate device memory, which synchronize the device, so a thread allocating while another
  // holds its gate would wait for that gate, and two such threads for each other, until both
  // gates time out. The bare waits, the part that races, run on all threads at once.
  std::mutex one_gate_at_a_time;
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
        const std::lock_guard<std::mutex> gated(one_gate_at_a_time);
        const gpu_test::rounds_seen seen = gpu_test::run_rounds(producer.view(), consumer.view(), rounds, true);
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
