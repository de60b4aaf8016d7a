// streamlike/event.hpp on a device: an event captures the work queued so far (is_done() false
// while that work is held, sync() waits for it), a consumer can wait on it, timed events measure
// the work between them, and streamlike::record(stream) makes the event on the stream's device.
#include "gpu_support.hpp"
#include "timed_kernels.hpp"

#include <streamlike/error.hpp>
#include <streamlike/event.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace {

using namespace std::chrono_literals;
using streamlike::event;
using streamlike::shared_stream;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("record, is_done and sync follow the work queued before the record") {
  const shared_stream s = shared_stream::create();
  event e = event::create();
  REQUIRE(e);
  gpu_test::gate g;
  GPU_REQUIRE_CUDA(g.close(s.get()));
  e.record(s.view());
  const bool held = g.holds("an event recorded behind a held stream is not done, and sync waits for it");
  if (held) {
    CHECK_FALSE(e.is_done());
    (void)cudaGetLastError(); // start clean: the next check is about is_done alone
    CHECK_FALSE(e.is_done());
    CHECK(cudaGetLastError() == cudaSuccess); // "not ready" is an answer, not an error left behind
  }

  const auto start = std::chrono::steady_clock::now();
  std::thread opener([&] {
    std::this_thread::sleep_for(200ms);
    g.open();
  });
  e.sync();
  const auto waited = std::chrono::steady_clock::now() - start;
  opener.join();
  if (held) {
    CHECK_MESSAGE(waited >= 150ms, "event::sync returned after "
                                       << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
                                       << " ms; the gate opened after 200 ms");
  }
  CHECK(e.is_done());
  CHECK_FALSE(g.timed_out());
}

TEST_CASE("an event records a point: work queued after the record does not hold it") {
  const shared_stream s = shared_stream::create();
  const event e = streamlike::record(s);
  gpu_test::gate g;
  GPU_REQUIRE_CUDA(g.close(s.get())); // after the record
  e.sync();                           // returns while the stream is still held
  CHECK(e.is_done());
  if (g.holds("the stream is still held after the event it recorded earlier is done")) CHECK_FALSE(s.view().is_done());
  g.open();
  s.view().sync();
}

TEST_CASE("streamlike::record(stream) on any stream_like argument") {
  const shared_stream shared = shared_stream::create();
  const streamlike::unique_stream unique = streamlike::unique_stream::create();
  gpu_test::owned_stream raw;
  const auto check = [](cudaStream_t stream, auto record_it) {
    gpu_test::gate g;
    GPU_REQUIRE_CUDA(g.close(stream));
    const event e = record_it();
    if (g.holds("an event recorded behind the gate is not done")) CHECK_FALSE(e.is_done()); // on that stream
    g.open();
    e.sync();
    CHECK(e.is_done());
    CHECK_FALSE(g.timed_out());
  };
  check(shared.get(), [&] { return streamlike::record(shared); });
  check(unique.get(), [&] { return streamlike::record(unique); });
  check(raw.get(), [&] { return streamlike::record(raw.get()); });
}

TEST_CASE("stream_view::wait(event): work queued after the wait runs after the recorded point") {
  const shared_stream producer = shared_stream::create();
  const shared_stream consumer = shared_stream::create();
  gpu_test::mapped_ints value{1};
  gpu_test::gate g;
  GPU_REQUIRE_CUDA(g.close(producer.get()));
  const event e = streamlike::record(producer);
  consumer.view().wait(e.get());
  GPU_REQUIRE_CUDA(gpu_test::launch_write(consumer.get(), value.device(), 3));
  std::this_thread::sleep_for(50ms);
  if (g.holds("the consumer waits while the producer is held")) {
    CHECK_MESSAGE(value.read(0) == 0, "the consumer ran before the event it waits on completed");
    CHECK_FALSE(consumer.view().is_done());
  }
  g.open();
  consumer.view().sync();
  CHECK(value.read(0) == 3);
  CHECK_FALSE(g.timed_out());
}

TEST_CASE("elapsed_ms measures the work between two timed events") {
  const shared_stream s = shared_stream::create();
  event start = event::create({.timing = true});
  event stop = event::create({.timing = true});
  start.record(s.view());
  GPU_REQUIRE_CUDA(gpu_test::launch_spin(s.get(), 20'000'000)); // 20 ms of device time
  stop.record(s.view());
  stop.sync();
  const float ms = elapsed_ms(start, stop);
  MESSAGE("a 20 ms kernel took " << ms << " ms between the events");
  CHECK(ms >= 19.0f);
  CHECK(ms < 2000.0f);

  SUBCASE("events without timing (the default) cannot be timed: streamlike::error names the call") {
    event a = event::create();
    event b = event::create();
    a.record(s.view());
    b.record(s.view());
    b.sync();
    std::optional<streamlike::error> e;
    try {
      (void)elapsed_ms(a, b);
    } catch (const streamlike::error& caught) {
      e = caught;
    }
    REQUIRE_MESSAGE(e.has_value(), "elapsed_ms of two events without timing did not throw");
    CHECK_MESSAGE(contains(e->what(), "elapsed_ms"), e->what());
    CHECK_MESSAGE(contains(e->what(), cudaGetErrorName(e->code())), e->what());
    (void)cudaGetLastError(); // the failed call's error is reported by the exception; see error.cu
  }
}

TEST_CASE("a moved-from event is empty; the moved-to one records") {
  event a = event::create();
  const cudaEvent_t handle = a.get();
  event b = std::move(a);
  CHECK_FALSE(a);
  CHECK(b.get() == handle);
  const shared_stream s = shared_stream::create();
  b.record(s.view());
  b.sync();
  CHECK(b.is_done());
}
