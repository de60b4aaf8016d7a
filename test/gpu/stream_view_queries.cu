// stream_view's and shared_stream's queries on a device: device(), id(), flags() and priority()
// agree with the raw CUDA calls (cudaStreamGetDevice/GetId/GetFlags/GetPriority) for created,
// adopted, pooled and foreign streams, and shared_stream's cached facts equal the live ones;
// is_done() agrees with cudaStreamQuery and leaves no error behind; sync() waits.
#include "gpu_support.hpp"
#include "query_checks.hpp"
#include "timed_kernels.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace {

using streamlike::shared_stream;
using streamlike::stream_view;
using gpu_test::device_priorities;
using gpu_test::priority_range;
using gpu_test::check_shared_agrees;
using gpu_test::check_view_agrees;

} // namespace

TEST_CASE("created streams: queries agree with the raw calls, with every option") {
  const priority_range range = device_priorities();
  for (const bool non_blocking : {true, false}) {
    for (const int priority : {range.least, range.greatest}) {
      const std::string what =
          "non_blocking " + std::to_string(non_blocking) + ", priority " + std::to_string(priority);
      const shared_stream s = shared_stream::create({.priority = priority, .non_blocking = non_blocking});
      check_shared_agrees(s, "shared_stream::create, " + what);
      CHECK(s.flags() == (non_blocking ? cudaStreamNonBlocking : cudaStreamDefault));
      CHECK(s.priority() == priority);

      const streamlike::unique_stream u =
          streamlike::unique_stream::create({.priority = priority, .non_blocking = non_blocking});
      check_view_agrees(u.view(), "unique_stream::create, " + what);
      CHECK(u.view().priority() == priority);
    }
  }
}

TEST_CASE("adopted streams: the facts cached at adoption are the stream's") {
  const priority_range range = device_priorities();
  cudaStream_t handle{};
  GPU_REQUIRE_CUDA(cudaStreamCreateWithPriority(&handle, cudaStreamDefault, range.greatest));
  const shared_stream s = shared_stream::adopt(handle);
  check_shared_agrees(s, "shared_stream::adopt");
  CHECK(s.flags() == cudaStreamDefault);
  CHECK(s.priority() == range.greatest);
}

TEST_CASE("pooled streams") {
  streamlike::stream_pool pool{4, {.priority = device_priorities().greatest}};
  for (std::size_t i = 0; i < pool.size(); ++i) check_shared_agrees(pool.at(i), "pool.at(" + std::to_string(i) + ")");
}

TEST_CASE("a foreign stream, created by the raw API and only viewed (or kept alive by someone else)") {
  const priority_range range = device_priorities();
  gpu_test::owned_stream foreign; // non-blocking, default priority
  check_view_agrees(stream_view{foreign.get()}, "stream_view of a foreign stream");

  cudaStream_t prioritized{};
  GPU_REQUIRE_CUDA(cudaStreamCreateWithPriority(&prioritized, cudaStreamDefault, range.greatest));
  check_view_agrees(stream_view{prioritized}, "stream_view of a foreign stream with the greatest priority");
  {
    // keep_alive with a token that owns nothing: the shared_stream only caches what it views.
    const shared_stream kept = shared_stream::keep_alive(stream_view{prioritized}, 0);
    check_shared_agrees(kept, "keep_alive of a foreign stream");
  }
  GPU_REQUIRE_CUDA(cudaStreamDestroy(prioritized)); // still ours to destroy: keep_alive took no ownership
}

TEST_CASE("the default streams answer for the current device, live") {
  int current = -1;
  GPU_REQUIRE_CUDA(cudaGetDevice(&current));
  for (const stream_view view : {stream_view::legacy_default(), stream_view::per_thread_default()}) {
    check_view_agrees(view, "default stream " + std::to_string(reinterpret_cast<std::uintptr_t>(view.get())));
    CHECK(view.device() == current);
  }
  const shared_stream legacy = shared_stream::legacy_default();
  CHECK(legacy.device() == current);
  CHECK(legacy.id() == gpu_test::stream_id(cudaStreamLegacy));
  CHECK(shared_stream::per_thread_default().id() == gpu_test::stream_id(cudaStreamPerThread));
}

TEST_CASE("is_done() is false while the stream is held and true after; sync() waits") {
  using namespace std::chrono_literals;
  const shared_stream s = shared_stream::create();
  const stream_view view = s.view();
  CHECK(view.is_done()); // nothing queued yet

  gpu_test::gate g;
  GPU_REQUIRE_CUDA(g.close(view.get()));
  const bool held = g.holds("is_done() says false while the stream is held, and sync() waits for it");
  if (held) {
    CHECK_FALSE(view.is_done());
    CHECK(cudaStreamQuery(view.get()) == cudaErrorNotReady); // the raw call agrees
    (void)cudaGetLastError();
    CHECK_FALSE(view.is_done());
    // "Not ready" is an answer, not an error: nothing may be left for the next cudaGetLastError.
    CHECK(cudaGetLastError() == cudaSuccess);
  }

  // sync() must block until the gate opens, 200 ms from now on another thread.
  const auto start = std::chrono::steady_clock::now();
  std::thread opener([&] {
    std::this_thread::sleep_for(200ms);
    g.open();
  });
  view.sync();
  const auto waited = std::chrono::steady_clock::now() - start;
  opener.join();
  if (held) {
    CHECK_MESSAGE(waited >= 150ms, "sync() returned after "
                                       << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
                                       << " ms; the gate opened after 200 ms");
  }
  CHECK_FALSE(g.timed_out());
  CHECK(view.is_done());
  CHECK(cudaStreamQuery(view.get()) == cudaSuccess);
}

TEST_CASE("is_done() leaves an unrelated pending error alone: it clears at most its own \"not ready\"") {
  // The runtime keeps the last failed call's error for cudaGetLastError(). A caller may have one
  // pending (a launch it has not checked yet) when it asks is_done(); that error is the caller's.
  // What the raw cudaStreamQuery does to it is the reference: is_done() may differ only by not
  // leaving cudaErrorNotReady itself behind.
  const int missing = gpu_test::device_count();
  const shared_stream s = shared_stream::create();
  gpu_test::gate g;
  GPU_REQUIRE_CUDA(g.close(s.get()));
  if (!g.holds("is_done() answering false keeps a pending error (it needs a held stream)")) return;

  (void)cudaGetLastError();
  REQUIRE(cudaSetDevice(missing) == cudaErrorInvalidDevice); // now pending
  REQUIRE(cudaStreamQuery(s.get()) == cudaErrorNotReady);
  const cudaError_t raw_after = cudaGetLastError();
  const cudaError_t expected = raw_after == cudaErrorNotReady ? cudaSuccess : raw_after;
  MESSAGE("a pending cudaErrorInvalidDevice, then a raw cudaStreamQuery answering not ready: cudaGetLastError() says "
          << cudaGetErrorName(raw_after));

  REQUIRE(cudaSetDevice(missing) == cudaErrorInvalidDevice); // pending again
  CHECK_FALSE(s.view().is_done());
  const cudaError_t library_after = cudaGetLastError();
  CHECK_MESSAGE(library_after == expected, "after is_done() answered false, cudaGetLastError() says "
                                               << cudaGetErrorName(library_after) << ", expected "
                                               << cudaGetErrorName(expected)
                                               << ": is_done() swallowed the caller's pending error");
  g.open();
  s.view().sync();
}
