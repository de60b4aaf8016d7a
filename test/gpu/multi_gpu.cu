// What needs two devices, in a program of its own that exits 77 (meson's SKIP) on a machine with
// fewer (gpu_suite.cpp, device_presence.hpp), so a one-GPU run reports these cases as skipped
// rather than as passes: device_guard nesting across devices; shared_stream, unique_stream,
// stream_pool and stream_view's queries on a device that is not current; an event recorded on
// another device's stream; wait() ordering across devices, with one cached event per device.
#include "call_counters.hpp"
#include "gpu_support.hpp"
#include "ordering_checks.hpp"
#include "ownership_checks.hpp"
#include "query_checks.hpp"
#include "timed_kernels.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/event.hpp>
#include <streamlike/ordering.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <cstddef>

namespace {

using streamlike::event;
using streamlike::shared_stream;
using streamlike::stream_pool;
using streamlike::stream_view;
using streamlike::unique_stream;

int current_device() {
  int device = -1;
  GPU_REQUIRE_CUDA(cudaGetDevice(&device));
  return device;
}

} // namespace

int main(int argc, char** argv) { return gpu_test::run_suite(argc, argv, 2); }

TEST_CASE("the interposer sees libstreamlike's own calls (or every count in this program is vacuous)") {
  const call_counters::counts before = call_counters::now();
  {
    const shared_stream s = shared_stream::create({.device = 1});
    CHECK(call_counters::is_live(s.get()));
  }
  const call_counters::counts d = call_counters::since(before, call_counters::now());
  REQUIRE_MESSAGE(d.stream_creates == 1,
                  "shared_stream::create made " << d.stream_creates << " calls the interposer saw, expected 1");
  REQUIRE_MESSAGE(d.stream_destroys == 1, "dropping the shared_stream made "
                                              << d.stream_destroys
                                              << " cudaStreamDestroy calls the interposer saw, expected 1");
}

TEST_CASE("device_guard: guards nest and each restores its own previous device") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  {
    const streamlike::device_guard outer(1);
    CHECK(outer.previous() == 0);
    CHECK(current_device() == 1);
    {
      const shared_stream on_0 = shared_stream::create({.device = 0});
      const streamlike::device_guard inner(on_0.view());
      CHECK(inner.previous() == 1);
      CHECK(current_device() == 0);
    }
    CHECK(current_device() == 1);
  }
  CHECK(current_device() == 0);
}

TEST_CASE("event: record on a stream of a device that is not current") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  const shared_stream s = shared_stream::create({.device = 1});
  // The event must be made on device 1: an event of device 0 cannot be recorded on s.
  const event e = streamlike::record(s);
  e.sync();
  CHECK(e.is_done());
  CHECK(current_device() == 0);
  // And a consumer on device 0 can wait on it.
  const shared_stream consumer = shared_stream::create({.device = 0});
  consumer.view().wait(e.get());
  consumer.view().sync();
  CHECK(consumer.view().is_done());
}

TEST_CASE("ordering across devices: producer on device 0, consumer on device 1, and back") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  const shared_stream on_0 = shared_stream::create({.device = 0});
  const shared_stream on_1 = shared_stream::create({.device = 1});
  REQUIRE(on_1.device() == 1);

  SUBCASE("0 -> 1, flag rounds") { gpu_test::check_ordered_rounds(on_0.view(), on_1.view()); }
  SUBCASE("1 -> 0, flag rounds") { gpu_test::check_ordered_rounds(on_1.view(), on_0.view()); }
  SUBCASE("0 -> 1, gate") { gpu_test::check_consumer_held_by_producer(on_0.view(), on_1.view()); }
  SUBCASE("a cached event per device: a second device adds one event, then none") {
    // This thread already holds an event for device 0 from earlier subcases, or makes it now.
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
  CHECK(current_device() == 0); // wait() leaves the current device alone
}

TEST_CASE("shared_stream: create on a device that is not current") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  const shared_stream s = shared_stream::create({.device = 1});
  CHECK(current_device() == 0); // created there, but device 0 stays current
  CHECK(s.device() == 1);
  int raw = -1;
  GPU_REQUIRE_CUDA(cudaStreamGetDevice(s.get(), &raw));
  CHECK(raw == 1);
  gpu_test::check_work_runs_on(s.view());
  CHECK(current_device() == 0);

  SUBCASE("adopted from device 1, dropped while device 0 is current") {
    const call_counters::counts before = call_counters::now();
    {
      cudaStream_t handle{};
      {
        const streamlike::device_guard on_1(1);
        GPU_REQUIRE_CUDA(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking));
      }
      const shared_stream adopted = shared_stream::adopt(handle);
      CHECK(adopted.device() == 1);
      gpu_test::check_work_runs_on(adopted.view());
    }
    const call_counters::counts d = call_counters::since(before, call_counters::now());
    CHECK(d.stream_destroys == 1);
    CHECK(d.stream_destroys_failed == 0); // destroyed on its own device, without an error
    CHECK(current_device() == 0);
  }
}

TEST_CASE("stream_pool: a pool on a device that is not current") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  {
    stream_pool pool{4, {.device = 1}};
    CHECK(current_device() == 0);
    CHECK(pool.device() == 1);
    for (std::size_t i = 0; i < pool.size(); ++i) {
      CHECK(pool.at(i).device() == 1);
      CHECK(pool.at(i).view().device() == 1);
    }
    gpu_test::check_work_runs_on(pool.get().view());
  }
  CHECK(current_device() == 0);
}

TEST_CASE("stream_view queries on a stream of a device that is not current") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  const shared_stream s = shared_stream::create({.device = 1});
  gpu_test::check_shared_agrees(s, "created on device 1 while device 0 is current");
  CHECK(s.view().device() == 1);
  // The default streams answer for whichever device is current.
  {
    const streamlike::device_guard on_1(1);
    CHECK(stream_view::legacy_default().device() == 1);
  }
  CHECK(stream_view::legacy_default().device() == 0);
}

TEST_CASE("unique_stream on a device that is not current") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  const call_counters::counts before = call_counters::now();
  {
    const unique_stream u = unique_stream::create({.device = 1});
    CHECK(current_device() == 0);
    CHECK(u.view().device() == 1);
    gpu_test::check_work_runs_on(u.view());
  }
  const call_counters::counts d = call_counters::since(before, call_counters::now());
  CHECK(d.stream_destroys == 1);
  CHECK(d.stream_destroys_failed == 0); // destroyed on its own device
  CHECK(current_device() == 0);
}
