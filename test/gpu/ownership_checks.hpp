// Checks shared by the ownership programs of the gpu suite (shared_stream, unique_stream,
// export_stream, stream_pool):
//  - check_lifecycle: make and drop many streams through one way in, and show, with the
//    interposer of call_counters.hpp, that every stream created was destroyed exactly once;
//  - check_work_runs_on: a kernel queued on a stream runs there, after the work already queued,
//    and the host sees its result after the library's sync().
// Header-only; a program that includes it links call_counters.cpp (for the first) and
// gpu_support (for the second).
#ifndef STREAMLIKE_TEST_GPU_OWNERSHIP_CHECKS_HPP
#define STREAMLIKE_TEST_GPU_OWNERSHIP_CHECKS_HPP

#include "call_counters.hpp"
#include "gpu_support.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <set>
#include <thread>

namespace gpu_test {

// Calls make_and_drop(i) for i in [0, n): each call must create `creates_per_call` streams
// (through the library or the raw API) and leave them all destroyed when it returns, and return
// true if what it saw along the way was right. Checks, with exact counts:
//  - the interposer saw n * creates_per_call creations: none means libstreamlike's calls do not
//    reach the interposer, and the rest would pass vacuously;
//  - as many destroys, each of a live handle (no double destroy), none failed;
//  - no creation returned a handle still live (a destroy the interposer never saw);
//  - the set of live handles is what it was before, and empty.
template <class F>
void check_lifecycle(const char* way, long n, F&& make_and_drop, long creates_per_call = 1) {
  const std::set<cudaStream_t> live_before = call_counters::live_streams();
  const call_counters::counts before = call_counters::now();
  const auto start = std::chrono::steady_clock::now();
  long wrong = 0;
  for (long i = 0; i < n; ++i) wrong += make_and_drop(i) ? 0 : 1;
  const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
  const call_counters::counts d = call_counters::since(before, call_counters::now());
  const long long expected = static_cast<long long>(n) * creates_per_call;

  MESSAGE(way << ": " << expected << " streams made and dropped in " << took.count() / 1e6 << " s ("
              << took.count() / static_cast<double>(expected) << " us per create+destroy); calls seen: " << d);
  CHECK_MESSAGE(wrong == 0, way << ": " << wrong << " of " << n << " iterations saw a wrong state (see the test)");
  REQUIRE_MESSAGE(d.stream_creates > 0,
                  way << ": the interposer saw no stream creation at all: cudaStreamCreate* calls do not reach "
                         "it (is the program linked with export_dynamic and a shared cudart?)");
  CHECK_MESSAGE(d.stream_creates == expected,
                way << ": expected " << expected << " stream creations, the interposer saw " << d.stream_creates);
  CHECK_MESSAGE(d.stream_destroys == expected,
                way << ": expected " << expected << " destroys of live streams, saw " << d.stream_destroys);
  CHECK_MESSAGE(d.destroys_not_live == 0,
                way << ": " << d.destroys_not_live << " cudaStreamDestroy calls on a handle already destroyed");
  CHECK_MESSAGE(d.creates_while_live == 0,
                way << ": " << d.creates_while_live << " creations returned a handle whose destroy was never seen");
  CHECK_MESSAGE(d.stream_destroys_failed == 0,
                way << ": " << d.stream_destroys_failed << " cudaStreamDestroy calls failed");
  const std::set<cudaStream_t> live_after = call_counters::live_streams();
  CHECK_MESSAGE(live_after == live_before, way << ": " << live_before.size() << " streams were live before, "
                                               << live_after.size()
                                               << " after (a leak, or a stream destroyed that "
                                                  "was not made here)");
  // The programs keep no stream from one test case to the next: nothing may be left at all.
  CHECK_MESSAGE(live_after.empty(), way << ": " << live_after.size() << " streams created and never destroyed");
}

// A kernel queued on `stream` runs on that very stream: a gate holds the stream, and while it is
// closed the kernel's write must not appear and is_done() must say false (a kernel that went to
// any other stream would have run within microseconds); once it opens, the library's sync() must
// return with the write in place. Runs with the stream's device current (device_guard), so a
// stream of a device that is not current works too; the caller's current device is restored.
inline void check_work_runs_on(streamlike::stream_view stream) {
  using namespace std::chrono_literals;
  const streamlike::device_guard on_device(stream);
  mapped_ints value{1};
  gate g; // declared last, destroyed first: it opens before anything above waits for the device
  GPU_REQUIRE_CUDA(g.close(stream.get()));
  GPU_REQUIRE_CUDA(launch_write(stream.get(), value.device(), 42));
  std::this_thread::sleep_for(20ms);
  if (g.holds("the kernel waits, and is_done() says false, while the stream is held")) {
    CHECK_MESSAGE(value.read(0) == 0, "the kernel ran while its stream was held by the gate: it did not go to stream "
                                          << static_cast<void*>(stream.get()));
    CHECK_MESSAGE(!stream.is_done(), "is_done() said true while the stream was held by the gate");
  }
  g.open();
  stream.sync();
  CHECK_FALSE_MESSAGE(g.timed_out(), "the gate opened by its 10 s timeout, not by open()");
  CHECK(stream.is_done());
  CHECK_MESSAGE(value.read(0) == 42, "after sync() the kernel's write is " << value.read(0) << ", expected 42");
}

} // namespace gpu_test

#endif // STREAMLIKE_TEST_GPU_OWNERSHIP_CHECKS_HPP
