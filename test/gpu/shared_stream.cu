// streamlike/shared_stream.hpp on a device: every stream created or adopted is destroyed exactly
// once (counted by interposing cudaStreamCreate*/cudaStreamDestroy, call_counters.hpp), work runs
// on the streams it hands out, copies from many threads keep the count right, and create's
// options (device, priority, non_blocking) reach the driver.
#include "call_counters.hpp"
#include "gpu_support.hpp"
#include "owner_operation_checks.hpp"
#include "ownership_checks.hpp"
#include "timed_kernels.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/shared_stream.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using streamlike::shared_stream;
using streamlike::stream_view;
using gpu_test::device_priorities;
using gpu_test::priority_range;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

int current_device() {
  int device = -1;
  GPU_REQUIRE_CUDA(cudaGetDevice(&device));
  return device;
}

} // namespace

TEST_CASE("the interposer sees libstreamlike's own calls (or every count in this program is vacuous)") {
  const call_counters::counts before = call_counters::now();
  cudaStream_t handle{};
  {
    const shared_stream s = shared_stream::create();
    handle = s.get();
    CHECK(call_counters::is_live(handle));
  }
  const call_counters::counts d = call_counters::since(before, call_counters::now());
  REQUIRE_MESSAGE(d.stream_creates == 1, "shared_stream::create made "
                                             << d.stream_creates
                                             << " calls the interposer saw, expected 1: libstreamlike's "
                                                "cudaStreamCreateWithPriority does not reach the test's definition");
  REQUIRE_MESSAGE(d.stream_destroys == 1, "dropping the shared_stream made "
                                              << d.stream_destroys
                                              << " cudaStreamDestroy calls the interposer saw, expected 1");
  CHECK_FALSE(call_counters::is_live(handle));
}

TEST_CASE("lifecycle: shared_stream::create, 100,000 times, each stream destroyed exactly once") {
  gpu_test::check_lifecycle("shared_stream::create", gpu_test::lifecycle_streams(), [](long) {
    const shared_stream s = shared_stream::create();
    const shared_stream copy = s; // two references, one destroy: by whichever drops last
    return s.use_count() == 2 && copy.get() == s.get() && call_counters::is_live(s.get());
  });
}

TEST_CASE("lifecycle: shared_stream::adopt of a cudaStreamCreate'd handle, 100,000 times") {
  gpu_test::check_lifecycle("shared_stream::adopt", gpu_test::lifecycle_streams(), [](long) {
    cudaStream_t handle{};
    if (cudaStreamCreate(&handle) != cudaSuccess) return false;
    const shared_stream s = shared_stream::adopt(handle); // now the only owner: it destroys the handle
    return s.get() == handle && s.use_count() == 1;
  });
}

TEST_CASE("work runs on created and adopted streams") {
  SUBCASE("created, default options") {
    const shared_stream s = shared_stream::create();
    gpu_test::check_work_runs_on(streamlike::get_stream(s));
  }
  SUBCASE("created blocking, with the greatest priority") {
    const shared_stream s = shared_stream::create({.priority = device_priorities().greatest, .non_blocking = false});
    gpu_test::check_work_runs_on(streamlike::get_stream(s));
  }
  SUBCASE("adopted") {
    cudaStream_t handle{};
    GPU_REQUIRE_CUDA(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking));
    const shared_stream s = shared_stream::adopt(handle);
    gpu_test::check_work_runs_on(streamlike::get_stream(s));
    // check_runs_on's fill and copy too, gated on the raw handle the stream was adopted from.
    gpu_test::check_runs_on(handle, s.view());
  }
}

TEST_CASE("8 threads copy and drop one shared_stream a million times each") {
  constexpr int threads = 8;
  constexpr long copies = 1'000'000;
  const shared_stream s = shared_stream::create();
  const long count_before = s.use_count();
  const call_counters::counts before = call_counters::now();

  std::atomic<bool> go{false};
  std::atomic<long> wrong{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      shared_stream kept;
      long seen_wrong = 0;
      for (long i = 0; i < copies; ++i) {
        shared_stream copy = s;                // copy: +1
        shared_stream moved = std::move(copy); // move: no change
        kept = moved;                          // copy-assign: +1, and the previous `kept` drops
        // At least `s`, `moved` and `kept` hold it; a lost increment would show as less.
        seen_wrong += (moved.get() != s.get() || copy || moved.use_count() < 3) ? 1 : 0;
      }
      wrong += seen_wrong;
    });
  }
  go = true;
  for (std::thread& w : workers) w.join();

  CHECK_MESSAGE(wrong.load() == 0, wrong.load() << " copies saw a wrong handle or count");
  CHECK_MESSAGE(s.use_count() == count_before,
                "use_count is " << s.use_count() << " after every copy dropped, expected " << count_before);
  const call_counters::counts d = call_counters::since(before, call_counters::now());
  CHECK_MESSAGE(d.stream_destroys == 0, "the stream was destroyed while references remained: " << d);
  CHECK(call_counters::is_live(s.get()));
  gpu_test::check_work_runs_on(s.view()); // still a working stream
}

TEST_CASE("the last reference may drop on any thread: the stream is destroyed once, there") {
  constexpr int threads = 8;
  shared_stream s = shared_stream::create();
  const cudaStream_t handle = s.get();
  const long long destroys_before = call_counters::destroy_calls_for(handle);

  std::vector<shared_stream> copies(threads, s);
  s.reset(); // the threads now hold every reference
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < 10'000; ++i) shared_stream(copies[t]).swap(copies[t]);
      copies[t].reset(); // one of these is the last reference
    });
  }
  go = true;
  for (std::thread& w : workers) w.join();
  CHECK(call_counters::destroy_calls_for(handle) - destroys_before == 1);
  CHECK_FALSE(call_counters::is_live(handle));
}

TEST_CASE("create: priority is validated against the device's range, never clamped") {
  const priority_range range = device_priorities();
  MESSAGE("device stream priorities: " << range.greatest << " (greatest) to " << range.least << " (least)");

  for (const int bad : {range.greatest - 1, range.least + 1}) {
    CAPTURE(bad);
    const call_counters::counts before = call_counters::now();
    std::string what;
    try {
      (void)shared_stream::create({.priority = bad});
    } catch (const std::invalid_argument& e) {
      what = e.what();
    }
    REQUIRE_MESSAGE(!what.empty(), "create with priority " << bad << " did not throw std::invalid_argument");
    // The message names the value and the range, so the caller can fix the call.
    CHECK_MESSAGE(contains(what, std::to_string(bad)), what);
    CHECK_MESSAGE(contains(what, std::to_string(range.greatest)), what);
    CHECK_MESSAGE(contains(what, std::to_string(range.least)), what);
    CHECK(call_counters::since(before, call_counters::now()).stream_creates == 0); // refused before creating
  }

  for (const int good : {range.greatest, range.least}) {
    CAPTURE(good);
    const shared_stream s = shared_stream::create({.priority = good});
    CHECK(s.priority() == good);
    CHECK(s.view().priority() == good);
    int raw = 0;
    GPU_REQUIRE_CUDA(cudaStreamGetPriority(s.get(), &raw));
    CHECK(raw == good);
  }
  if (range.greatest == range.least) MESSAGE("this device has a single stream priority");
}

TEST_CASE("create: non_blocking shows in flags() and in how the stream orders with the legacy default stream") {
  const shared_stream non_blocking = shared_stream::create();
  const shared_stream blocking = shared_stream::create({.non_blocking = false});
  CHECK(non_blocking.flags() == cudaStreamNonBlocking);
  CHECK(blocking.flags() == cudaStreamDefault);
  unsigned int raw = 99;
  GPU_REQUIRE_CUDA(cudaStreamGetFlags(non_blocking.get(), &raw));
  CHECK(raw == cudaStreamNonBlocking);
  GPU_REQUIRE_CUDA(cudaStreamGetFlags(blocking.get(), &raw));
  CHECK(raw == cudaStreamDefault);

  // The flag reaches the driver: work on the blocking stream waits for the legacy default stream,
  // work on the non-blocking one does not.
  gpu_test::mapped_ints values{2};
  gpu_test::gate g; // last: opens first on the way out
  GPU_REQUIRE_CUDA(g.close(cudaStreamLegacy));
  GPU_REQUIRE_CUDA(gpu_test::launch_write(blocking.get(), values.device(), 1));
  GPU_REQUIRE_CUDA(gpu_test::launch_write(non_blocking.get(), values.device() + 1, 2));
  non_blocking.view().sync(); // returns while the legacy default stream is still held
  if (g.holds("work on the blocking stream waits while the legacy default stream is held")) {
    if (gpu_test::check_possible(gpu_test::measure_concurrency().kernels_overlap,
                                 "work on the non-blocking stream runs while the legacy default stream is held")) {
      CHECK(values.read(1) == 2);
    }
    CHECK_MESSAGE(values.read(0) == 0, "work on the blocking stream ran while the legacy default stream was held");
    CHECK_FALSE(blocking.view().is_done());
  }
  g.open();
  blocking.view().sync();
  CHECK(values.read(0) == 1);
  CHECK_FALSE(g.timed_out());
}

TEST_CASE("create: device() is the current device by default, or the one asked for") {
  const int current = current_device();
  const shared_stream s = shared_stream::create();
  CHECK(s.device() == current);
  int raw = -1;
  GPU_REQUIRE_CUDA(cudaStreamGetDevice(s.get(), &raw));
  CHECK(raw == current);
  CHECK(shared_stream::create({.device = 0}).device() == 0);

  const int count = gpu_test::device_count();
  std::string what;
  try {
    (void)shared_stream::create({.device = count});
  } catch (const std::invalid_argument& e) {
    what = e.what();
  }
  CHECK_MESSAGE(contains(what, "device " + std::to_string(count)),
                "expected std::invalid_argument naming device " << count << ", got: '" << what << "'");
  CHECK(current_device() == current);
}

TEST_CASE("id(): unique across live streams, and not reused when a handle is") {
  const shared_stream a = shared_stream::create();
  const shared_stream b = shared_stream::create();
  CHECK(a.id() != b.id());
  CHECK(a.id() == gpu_test::stream_id(a.get()));
  CHECK(b.id() == gpu_test::stream_id(b.get()));

  // The driver tends to hand a freed handle out again; the id must differ even then.
  std::set<unsigned long long> ids{a.id(), b.id()};
  bool reused = false;
  for (int attempt = 0; attempt < 64 && !reused; ++attempt) {
    shared_stream first = shared_stream::create();
    const cudaStream_t handle = first.get();
    const unsigned long long first_id = first.id();
    first.reset();
    const shared_stream second = shared_stream::create();
    CHECK(ids.insert(first_id).second);
    CHECK(ids.insert(second.id()).second);
    if (second.get() == handle) {
      reused = true;
      CHECK_MESSAGE(second.id() != first_id,
                    "the reused handle " << static_cast<void*>(handle) << " kept id " << first_id);
      CHECK(second.id() == gpu_test::stream_id(second.get())); // the cache holds the new stream's id
    }
  }
  if (!reused) MESSAGE("skipped the reuse check: the driver gave no handle out twice in 64 attempts");
}

TEST_CASE("the stream's operations on the owner: is_done, sync, wait and record on two shared_streams") {
  const shared_stream producer = shared_stream::create();
  const shared_stream consumer = shared_stream::create();
  gpu_test::check_owner_operations(producer, consumer);
}

TEST_CASE("the stream's operations on a shared_stream of a default stream and of a kept-alive stream") {
  const shared_stream per_thread = shared_stream::per_thread_default();
  const streamlike::event recorded = per_thread.record(); // no cached device: asks the stream
  recorded.sync();
  CHECK(recorded.is_done());
  per_thread.sync();
  CHECK(per_thread.is_done());

  gpu_test::owned_stream raw;
  const shared_stream kept = shared_stream::keep_alive(streamlike::stream_view{raw.get()}, 0);
  const shared_stream consumer = shared_stream::create();
  gpu_test::check_owner_operations(kept, consumer);
}
