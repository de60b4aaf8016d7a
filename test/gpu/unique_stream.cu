// streamlike/unique_stream.hpp on a device: the move-only owner destroys exactly the streams it
// owns, exactly once (counted by interposing cudaStreamCreate*/cudaStreamDestroy), never one it
// released or was moved out of, and work runs on the streams it creates and adopts.
#include "call_counters.hpp"
#include "gpu_support.hpp"
#include "owner_operation_checks.hpp"
#include "ownership_checks.hpp"
#include "timed_kernels.hpp"

#include <streamlike/get_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <utility>

namespace {
using streamlike::unique_stream;
} // namespace

TEST_CASE("the interposer sees libstreamlike's own calls (or every count in this program is vacuous)") {
  const call_counters::counts before = call_counters::now();
  { const unique_stream u = unique_stream::create(); }
  const call_counters::counts d = call_counters::since(before, call_counters::now());
  REQUIRE_MESSAGE(d.stream_creates == 1,
                  "unique_stream::create: the interposer saw " << d.stream_creates << " creations, expected 1");
  REQUIRE_MESSAGE(d.stream_destroys == 1,
                  "~unique_stream: the interposer saw " << d.stream_destroys << " destroys, expected 1");
}

TEST_CASE("lifecycle: unique_stream::create and two moves, 100,000 times") {
  gpu_test::check_lifecycle("unique_stream::create", gpu_test::lifecycle_streams(), [](long) {
    unique_stream u = unique_stream::create();
    const cudaStream_t handle = u.get();
    unique_stream v = std::move(u); // the moved-from owner must not destroy it
    unique_stream w;
    w = std::move(v);
    return !u && !v && w && w.get() == handle && call_counters::is_live(handle);
  });
}

TEST_CASE("lifecycle: unique_stream::adopt of a cudaStreamCreateWithFlags'd handle, 100,000 times") {
  gpu_test::check_lifecycle("unique_stream::adopt", gpu_test::lifecycle_streams(), [](long) {
    cudaStream_t handle{};
    if (cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking) != cudaSuccess) return false;
    const unique_stream u = unique_stream::adopt(handle);
    return u.get() == handle;
  });
}

TEST_CASE("lifecycle: release() hands the stream back; the owner no longer destroys it") {
  // Each stream is destroyed once, by the test after release(): had ~unique_stream destroyed it
  // too, the interposer would count a destroy of a handle no longer live.
  gpu_test::check_lifecycle("unique_stream::release", gpu_test::lifecycle_streams() / 10, [](long) {
    cudaStream_t handle{};
    {
      unique_stream u = unique_stream::create();
      handle = u.release();
      if (u) return false;
    }
    const bool alive = call_counters::is_live(handle);
    return cudaStreamDestroy(handle) == cudaSuccess && alive;
  });
}

TEST_CASE("move-assigning over an owner destroys the stream it owned, at once") {
  unique_stream a = unique_stream::create();
  unique_stream b = unique_stream::create();
  const cudaStream_t old = a.get();
  const cudaStream_t kept = b.get();
  const long long destroys_before = call_counters::destroy_calls_for(old);
  a = std::move(b);
  CHECK(call_counters::destroy_calls_for(old) - destroys_before == 1);
  CHECK_FALSE(call_counters::is_live(old));
  CHECK(a.get() == kept);
  CHECK(call_counters::is_live(kept));
}

TEST_CASE("work runs on created and adopted unique_streams") {
  SUBCASE("created") {
    const unique_stream u = unique_stream::create();
    gpu_test::check_work_runs_on(streamlike::get_stream(u));
  }
  SUBCASE("created blocking") {
    const unique_stream u = unique_stream::create({.non_blocking = false});
    unsigned int flags = 99;
    GPU_REQUIRE_CUDA(cudaStreamGetFlags(u.get(), &flags));
    CHECK(flags == cudaStreamDefault);
    gpu_test::check_work_runs_on(streamlike::get_stream(u));
  }
  SUBCASE("adopted") {
    cudaStream_t handle{};
    GPU_REQUIRE_CUDA(cudaStreamCreate(&handle));
    const unique_stream u = unique_stream::adopt(handle);
    gpu_test::check_work_runs_on(streamlike::get_stream(u));
    gpu_test::check_runs_on(handle, u.view());
  }
}

TEST_CASE("the stream's operations on the owner: is_done, sync, wait and record on two unique_streams") {
  const streamlike::unique_stream producer = streamlike::unique_stream::create();
  const streamlike::unique_stream consumer = streamlike::unique_stream::create();
  gpu_test::check_owner_operations(producer, consumer);
}

TEST_CASE("a unique_stream waits for a shared_stream and the reverse") {
  const streamlike::unique_stream unique = streamlike::unique_stream::create();
  const streamlike::shared_stream shared = streamlike::shared_stream::create();
  gpu_test::mapped_ints flag{2};
  gpu_test::mapped_ints seen{2};
  // Each producer held by a gate until both waits and observers are queued: only the waits order them.
  gpu_test::gate held_shared;
  GPU_REQUIRE_CUDA(gpu_test::launch_held_write(held_shared, shared.get(), flag.device(), 1));
  unique.wait(shared);
  GPU_REQUIRE_CUDA(gpu_test::launch_observe(unique.get(), flag.device(), 1, seen.device()));
  gpu_test::gate held_unique;
  GPU_REQUIRE_CUDA(gpu_test::launch_held_write(held_unique, unique.get(), flag.device() + 1, 1));
  shared.wait(unique);
  GPU_REQUIRE_CUDA(gpu_test::launch_observe(shared.get(), flag.device() + 1, 1, seen.device() + 1));
  if (held_shared.holds("each consumer waits while its producer is held"))
    CHECK_FALSE(gpu_test::let_unordered_work_run(seen, 2));
  held_unique.open(); // unique's gate sits behind shared's write: opening order does not matter
  held_shared.open();
  shared.sync();
  unique.sync();
  CHECK_FALSE(held_shared.timed_out());
  CHECK_FALSE(held_unique.timed_out());
  CHECK(seen.read(0) == 1);
  CHECK(seen.read(1) == 1);
}
