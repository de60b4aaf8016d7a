// streamcheck's capture rules (src/streamcheck/capture_rules.hpp), fed synthetic driver calls (no
// GPU): each rule as a sequence of calls, the streams forked into a capture and the events recorded
// in one, and several captures at once, each followed until it ends and no longer. What CUDA
// itself answers is test/streamcheck/capture_verdicts.cu's (suite gpu).
#include "../../src/streamcheck/capture_rules.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

using namespace streamlike::check;

namespace {

constexpr std::uintptr_t captured = 0x7000;  // a created stream a capture begins on
constexpr std::uintptr_t unrelated = 0x8000; // a created stream in no capture
constexpr std::uintptr_t forked = 0x9000;    // a created stream that waits on an event of the capture
constexpr std::uintptr_t event_in = 0xe100;  // an event
constexpr std::uintptr_t event_out = 0xe200; // another
constexpr std::uint64_t capturer = 11;
constexpr std::uint64_t other = 22;
constexpr std::uint64_t third = 33;

constexpr std::array<cudaStreamCaptureMode, 3> all_modes{cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
                                                         cudaStreamCaptureModeRelaxed};

call_event on_stream(const char* api, std::uintptr_t handle, std::uint64_t thread = capturer, int device = 0) {
  call_event e;
  e.api = api;
  e.kind = classify(api);
  e.has_stream = true;
  e.stream = canonical_stream(api, handle);
  e.thread = thread;
  e.device = device;
  return e;
}

// A call that takes no stream (the CUPTI layer leaves has_stream false).
call_event plain(const char* api, std::uint64_t thread = capturer, int device = 0) {
  call_event e = on_stream(api, 0, thread, device);
  e.has_stream = false;
  return e;
}

call_event on_event(const char* api, std::uintptr_t event, std::uint64_t thread = capturer) {
  call_event e = plain(api, thread);
  e.object = event;
  return e;
}

call_event record(std::uintptr_t event, std::uintptr_t stream, std::uint64_t thread = capturer) {
  call_event e = on_stream("cuEventRecord", stream, thread);
  e.object = event;
  return e;
}

call_event wait(std::uintptr_t stream, std::uintptr_t event, std::uint64_t thread = capturer) {
  call_event e = on_stream("cuStreamWaitEvent", stream, thread);
  e.object = event;
  return e;
}

// The tracker with the calls made to it, as the checker makes them: captures noted after they
// return, everything else judged (and followed) before it runs.
struct process {
  capture_tracker tracker;

  void begin(std::uintptr_t stream, cudaStreamCaptureMode mode, std::uint64_t thread = capturer, bool blocking = false,
             int device = 0, const char* api = "cuStreamBeginCapture_v2") {
    call_event e = on_stream(api, stream, thread, device);
    e.mode = mode;
    e.blocking = blocking;
    tracker.note(e);
  }
  void end(std::uintptr_t stream, std::uint64_t thread = capturer, bool succeeded = true) {
    call_event e = on_stream("cuStreamEndCapture", stream, thread);
    e.succeeded = succeeded;
    tracker.note(e);
  }
  void exchange(cudaStreamCaptureMode mode, std::uint64_t thread) {
    call_event e = plain("cuThreadExchangeStreamCaptureMode", thread);
    e.mode = mode;
    tracker.note(e);
  }
  std::string judge(const call_event& e) { return tracker.breaker(e); }
  bool breaks(const call_event& e) { return !judge(e).empty(); }
  // Records event_in on `from` (a stream of the capture) and makes `into` wait on it.
  void fork(std::uintptr_t from, std::uintptr_t into, std::uint64_t thread = capturer) {
    CHECK_FALSE(breaks(record(event_in, from, thread)));
    CHECK_FALSE(breaks(wait(into, event_in, thread)));
  }
};

} // namespace

TEST_CASE("potentially unsafe calls: CUDA's interaction-mode rule, for each call") {
  // cuThreadExchangeStreamCaptureMode's documented rule: a thread in global interaction mode may not
  // make them while it has a global or thread-local capture under way or another thread has a
  // global one; in thread-local mode only its own capture counts; in relaxed mode nothing does.
  struct row {
    cudaStreamCaptureMode capture_mode;
    bool same_thread;
    cudaStreamCaptureMode thread_mode;
    bool breaks;
  };
  const row rows[] = {
      {cudaStreamCaptureModeGlobal, true, cudaStreamCaptureModeGlobal, true},
      {cudaStreamCaptureModeGlobal, true, cudaStreamCaptureModeThreadLocal, true},
      {cudaStreamCaptureModeGlobal, true, cudaStreamCaptureModeRelaxed, false},
      {cudaStreamCaptureModeThreadLocal, true, cudaStreamCaptureModeGlobal, true},
      {cudaStreamCaptureModeThreadLocal, true, cudaStreamCaptureModeThreadLocal, true},
      {cudaStreamCaptureModeThreadLocal, true, cudaStreamCaptureModeRelaxed, false},
      {cudaStreamCaptureModeRelaxed, true, cudaStreamCaptureModeGlobal, false},
      {cudaStreamCaptureModeRelaxed, true, cudaStreamCaptureModeThreadLocal, false},
      {cudaStreamCaptureModeRelaxed, true, cudaStreamCaptureModeRelaxed, false},
      {cudaStreamCaptureModeGlobal, false, cudaStreamCaptureModeGlobal, true},
      {cudaStreamCaptureModeGlobal, false, cudaStreamCaptureModeThreadLocal, false},
      {cudaStreamCaptureModeGlobal, false, cudaStreamCaptureModeRelaxed, false},
      {cudaStreamCaptureModeThreadLocal, false, cudaStreamCaptureModeGlobal, false},
      {cudaStreamCaptureModeThreadLocal, false, cudaStreamCaptureModeThreadLocal, false},
      {cudaStreamCaptureModeThreadLocal, false, cudaStreamCaptureModeRelaxed, false},
      {cudaStreamCaptureModeRelaxed, false, cudaStreamCaptureModeGlobal, false},
      {cudaStreamCaptureModeRelaxed, false, cudaStreamCaptureModeThreadLocal, false},
      {cudaStreamCaptureModeRelaxed, false, cudaStreamCaptureModeRelaxed, false},
  };
  const std::uint64_t caller = capturer;
  for (const row& r : rows) {
    const call_event calls[] = {
        on_stream("cuStreamSynchronize", unrelated, caller),
        on_stream("cuStreamQuery_v2_ptsz", unrelated, caller),
        on_stream("cuStreamSynchronize", 0, caller, 0), // the legacy stream, with no blocking stream captured
        on_event("cuEventSynchronize", event_out, caller),
        on_event("cuEventQuery", event_out, caller),
        plain("cuMemAlloc_v2", caller),
        plain("cuMemFree_v2", caller),
        plain("cuMemHostAlloc", caller),
        plain("cuMemFreeHost", caller),
        on_stream("cuMemAllocAsync", unrelated, caller), // stream-ordered, on a stream outside the capture
        on_stream("cuMemFreeAsync_ptsz", unrelated, caller),
    };
    for (const call_event& call : calls) {
      CAPTURE(call.api);
      CAPTURE(static_cast<int>(r.capture_mode));
      CAPTURE(r.same_thread);
      CAPTURE(static_cast<int>(r.thread_mode));
      process p;
      p.begin(captured, r.capture_mode, r.same_thread ? caller : other);
      p.exchange(r.thread_mode, caller);
      const std::string why = p.judge(call);
      CHECK(!why.empty() == r.breaks);
      if (r.breaks) {
        CHECK(why.find(r.same_thread ? "begun by this thread" : "begun by thread 22") != std::string::npos);
        CHECK(why.find("capture interaction mode") != std::string::npos);
      }
    }
  }
}

TEST_CASE("stream-ordered allocation on a stream of the capture becomes its graph's, in every mode") {
  for (const cudaStreamCaptureMode mode :
       {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed}) {
    CAPTURE(static_cast<int>(mode));
    process p;
    p.begin(captured, mode, capturer);
    CHECK_FALSE(p.breaks(on_stream("cuMemAllocAsync", captured)));
    CHECK_FALSE(p.breaks(on_stream("cuMemFreeAsync", captured)));
    CHECK(p.breaks(on_stream("cuMemAllocAsync", unrelated)) == (mode != cudaStreamCaptureModeRelaxed));
  }
}

TEST_CASE("a context synchronization breaks every capture of its device, whatever the modes and the thread") {
  for (cudaStreamCaptureMode capture_mode : all_modes) {
    for (cudaStreamCaptureMode thread_mode : all_modes) {
      for (std::uint64_t caller : {capturer, other}) {
        CAPTURE(static_cast<int>(capture_mode));
        CAPTURE(static_cast<int>(thread_mode));
        CAPTURE(caller);
        process p;
        p.begin(captured, capture_mode);
        p.exchange(thread_mode, caller);
        const std::string why = p.judge(plain("cuCtxSynchronize", caller));
        CHECK(why.find("synchronizes every stream of the context") != std::string::npos);
        CHECK(why.find("a capture of stream 0x7000") != std::string::npos);
        // A capture on another device is not in this context; a device unknown counts as this one.
        CHECK_FALSE(p.breaks(plain("cuCtxSynchronize", caller, 1)));
        CHECK(p.breaks(plain("cuCtxSynchronize", caller, -1)));
      }
    }
  }
}

TEST_CASE("a stream of the capture, the one it began on or one forked into it, may not be waited on or asked") {
  for (cudaStreamCaptureMode capture_mode : all_modes) {
    for (std::uint64_t caller : {capturer, other}) {
      CAPTURE(static_cast<int>(capture_mode));
      CAPTURE(caller);
      process p;
      p.begin(captured, capture_mode);
      p.exchange(cudaStreamCaptureModeRelaxed, caller); // the interaction mode does not matter
      CHECK_FALSE(p.breaks(on_stream("cuStreamSynchronize", forked, caller)));
      p.fork(captured, forked);
      for (std::uintptr_t stream : {captured, forked}) {
        CHECK(p.breaks(on_stream("cuStreamSynchronize", stream, caller)));
        CHECK(p.breaks(on_stream("cuStreamQuery", stream, caller)));
        CHECK(p.breaks(on_stream("cuStreamSynchronize_ptsz", stream, caller)));
      }
      const std::string why = p.judge(on_stream("cuStreamSynchronize", forked, caller));
      CHECK(why.find("stream 0x9000, forked into a capture of stream 0x7000") != std::string::npos);
      CHECK(p.judge(on_stream("cuStreamQuery", captured, caller))
                .find("waits on or asks about a capture of stream "
                      "0x7000") != std::string::npos);
      // Work on a stream of the capture is what it captures.
      CHECK_FALSE(p.breaks(on_stream("cuLaunchKernel", forked, caller)));
      CHECK_FALSE(p.breaks(on_stream("cuMemAllocAsync", captured, caller)));
      CHECK_FALSE(p.breaks(on_stream("cuStreamSynchronize", unrelated, caller)));
    }
  }
}

TEST_CASE("forks: only a wait on an event recorded in the capture, by a stream outside every capture") {
  constexpr std::uintptr_t grandchild = 0xa000;
  process p;
  p.begin(captured, cudaStreamCaptureModeRelaxed);
  // A fork of a fork joins the same capture, whichever thread makes it.
  p.fork(captured, forked);
  p.fork(forked, grandchild, other);
  CHECK(p.breaks(on_stream("cuStreamQuery", grandchild, third)));
  // An event recorded outside the capture forks nothing; recording it outside again makes it no
  // longer the capture's.
  constexpr std::uintptr_t outside = 0xb000;
  CHECK_FALSE(p.breaks(record(event_out, unrelated)));
  CHECK_FALSE(p.breaks(wait(outside, event_out)));
  CHECK_FALSE(p.breaks(on_stream("cuStreamSynchronize", outside)));
  CHECK_FALSE(p.breaks(record(event_in, unrelated)));
  CHECK_FALSE(p.breaks(wait(outside, event_in)));
  CHECK_FALSE(p.breaks(on_stream("cuStreamSynchronize", outside)));
  // A wait whose event the CUPTI layer did not say forks nothing.
  CHECK_FALSE(p.breaks(record(event_in, captured)));
  CHECK_FALSE(p.breaks(wait(outside, 0)));
  CHECK_FALSE(p.breaks(on_stream("cuStreamSynchronize", outside)));
  // The legacy stream cannot be captured.
  CHECK_FALSE(p.breaks(wait(0, event_in)));
  CHECK_FALSE(p.breaks(on_stream("cuStreamSynchronize", 0)));
  // A destroyed stream leaves the capture: its handle may name a new stream next.
  CHECK_FALSE(p.breaks(on_stream("cuStreamDestroy_v2", grandchild)));
  CHECK_FALSE(p.breaks(on_stream("cuStreamQuery", grandchild)));
  CHECK(p.breaks(on_stream("cuStreamQuery", forked)));
  // The end of the capture ends every fork (another capture keeps the tracker looking).
  p.begin(unrelated, cudaStreamCaptureModeRelaxed, other);
  p.end(captured);
  CHECK_FALSE(p.breaks(on_stream("cuStreamQuery", forked)));
  CHECK_FALSE(p.breaks(on_stream("cuStreamQuery", captured)));
  CHECK(p.breaks(on_stream("cuStreamQuery", unrelated)));
}

TEST_CASE("an event recorded in a capture may not be waited on or asked, in any mode, from any thread") {
  for (cudaStreamCaptureMode capture_mode : all_modes) {
    for (std::uint64_t caller : {capturer, other}) {
      CAPTURE(static_cast<int>(capture_mode));
      CAPTURE(caller);
      process p;
      p.begin(captured, capture_mode);
      p.exchange(cudaStreamCaptureModeRelaxed, caller);
      CHECK_FALSE(p.breaks(record(event_in, captured)));
      CHECK_FALSE(p.breaks(record(event_out, unrelated)));
      const std::string why = p.judge(on_event("cuEventSynchronize", event_in, caller));
      CHECK(why.find("event 0xe100, recorded in a capture of stream 0x7000") != std::string::npos);
      CHECK(p.breaks(on_event("cuEventQuery", event_in, caller)));
      // Outside the capture: the interaction-mode rule (relaxed here: allowed).
      CHECK_FALSE(p.breaks(on_event("cuEventQuery", event_out, caller)));
      // Recorded on a forked stream: the capture's too.
      p.fork(captured, forked);
      CHECK_FALSE(p.breaks(record(event_out, forked)));
      CHECK(p.breaks(on_event("cuEventQuery", event_out, caller)));
      // Recorded outside again, or destroyed: no longer the capture's.
      CHECK_FALSE(p.breaks(record(event_out, unrelated)));
      CHECK_FALSE(p.breaks(on_event("cuEventQuery", event_out, caller)));
      CHECK_FALSE(p.breaks(on_event("cuEventDestroy_v2", event_in, caller)));
      CHECK_FALSE(p.breaks(on_event("cuEventSynchronize", event_in, caller)));
    }
  }
}

TEST_CASE("synchronous copies and memsets break a capture only through the legacy stream") {
  const char* const calls[] = {"cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2",
                               "cuMemcpy",        "cuMemsetD8_v2",   "cuMemsetD32_v2"};
  for (const char* api : calls) {
    for (cudaStreamCaptureMode capture_mode : all_modes) {
      for (cudaStreamCaptureMode thread_mode : all_modes) {
        for (std::uint64_t caller : {capturer, other}) {
          CAPTURE(api);
          CAPTURE(static_cast<int>(capture_mode));
          CAPTURE(static_cast<int>(thread_mode));
          CAPTURE(caller);
          // A non-blocking capturing stream does not synchronize with the legacy stream: allowed
          // (CUDA lets a synchronous copy run during a global capture of one).
          process non_blocking;
          non_blocking.begin(captured, capture_mode, capturer, /*blocking=*/false);
          non_blocking.exchange(thread_mode, caller);
          CHECK_FALSE(non_blocking.breaks(plain(api, caller)));
          // A blocking one does.
          process blocking;
          blocking.begin(captured, capture_mode, capturer, /*blocking=*/true);
          blocking.exchange(thread_mode, caller);
          const std::string why = blocking.judge(plain(api, caller));
          CHECK(why.find("uses the legacy default stream") != std::string::npos);
          CHECK(why.find("cudaErrorStreamCaptureImplicit") != std::string::npos);
          // Not a blocking stream of another device's.
          CHECK_FALSE(blocking.breaks(plain(api, caller, 1)));
        }
      }
    }
  }
}

TEST_CASE("a per-thread synchronous copy runs on the caller's per-thread stream") {
  // _ptsz: the calling thread's per-thread default stream, which synchronizes with the legacy
  // stream alone.
  process p;
  p.begin(captured, cudaStreamCaptureModeGlobal, other, /*blocking=*/true);
  CHECK_FALSE(p.breaks(plain("cuMemcpyHtoD_v2_ptds", capturer)));
  CHECK_FALSE(p.breaks(plain("cuMemsetD8_v2_ptds", capturer)));
  // While that thread's per-thread stream captures, the synchronous copy waits on it.
  p.begin(per_thread_stream, cudaStreamCaptureModeRelaxed, capturer, /*blocking=*/true);
  const std::string why = p.judge(plain("cuMemcpyDtoH_v2_ptds", capturer));
  CHECK(why.find("this thread's per-thread default stream") != std::string::npos);
  CHECK(p.breaks(plain("cuMemsetD8_v2_ptds", capturer)));
  // Another thread's per-thread stream is not this one's.
  CHECK_FALSE(p.breaks(plain("cuMemcpyDtoH_v2_ptds", third)));
}

TEST_CASE("the legacy stream: every use while a blocking stream captures, in every mode") {
  const call_event uses[] = {
      on_stream("cuLaunchKernel", 0),
      on_stream("cuMemcpyHtoDAsync_v2", legacy_stream),
      on_stream("cuMemAllocAsync", 0),
      on_stream("cuStreamSynchronize", 0),
      on_stream("cuStreamQuery", legacy_stream),
      record(event_out, 0),
      wait(0, event_out),
  };
  for (const call_event& use : uses) {
    for (cudaStreamCaptureMode capture_mode : all_modes) {
      for (std::uint64_t caller : {capturer, other}) {
        CAPTURE(use.api);
        CAPTURE(static_cast<int>(capture_mode));
        CAPTURE(caller);
        call_event e = use;
        e.thread = caller;
        process blocking;
        blocking.begin(captured, capture_mode, capturer, /*blocking=*/true);
        blocking.exchange(cudaStreamCaptureModeRelaxed, caller);
        CHECK(blocking.judge(e).find("cudaErrorStreamCaptureImplicit") != std::string::npos);
        // A non-blocking capturing stream is not touched (a sync or query of the legacy stream is
        // then an ordinary potentially unsafe call: allowed in relaxed interaction mode).
        process non_blocking;
        non_blocking.begin(captured, capture_mode, capturer, /*blocking=*/false);
        non_blocking.exchange(cudaStreamCaptureModeRelaxed, caller);
        CHECK_FALSE(non_blocking.breaks(e));
      }
    }
  }
  // The per-thread default stream does not synchronize with other streams.
  process p;
  p.begin(captured, cudaStreamCaptureModeRelaxed, other, /*blocking=*/true);
  CHECK_FALSE(p.breaks(on_stream("cuLaunchKernel_ptsz", 0)));
  CHECK_FALSE(p.breaks(on_stream("cuLaunchKernel", per_thread_stream)));
}

TEST_CASE("per-thread default streams: one per thread, each captured on its own") {
  process p;
  // The capturer captures its per-thread stream (through a _ptsz entry point, handle 0).
  p.begin(0, cudaStreamCaptureModeGlobal, capturer, /*blocking=*/true, 0, "cuStreamBeginCapture_v2_ptsz");
  CHECK(p.breaks(on_stream("cuStreamSynchronize", per_thread_stream, capturer)));
  CHECK(p.breaks(on_stream("cuStreamQuery_ptsz", 0, capturer)));
  // Another thread's per-thread stream is another stream: the interaction-mode rule only.
  p.exchange(cudaStreamCaptureModeRelaxed, other);
  CHECK_FALSE(p.breaks(on_stream("cuStreamSynchronize", per_thread_stream, other)));
  CHECK_FALSE(p.breaks(on_stream("cuStreamQuery_ptsz", 0, other)));
  // That thread captures its own too; ending it (by handle 0x2, on that thread) ends only its own.
  p.begin(per_thread_stream, cudaStreamCaptureModeThreadLocal, other, /*blocking=*/true);
  CHECK(p.breaks(on_stream("cuStreamSynchronize", per_thread_stream, other)));
  p.end(per_thread_stream, other);
  CHECK_FALSE(p.breaks(on_stream("cuStreamSynchronize", per_thread_stream, other)));
  CHECK(p.breaks(on_stream("cuStreamSynchronize", per_thread_stream, capturer)));
  CHECK(p.breaks(plain("cuCtxSynchronize", other)));
  // A third thread's stream waiting on an event of the capturer's joins the capturer's capture.
  CHECK_FALSE(p.breaks(record(event_in, per_thread_stream, capturer)));
  p.exchange(cudaStreamCaptureModeRelaxed, third);
  CHECK_FALSE(p.breaks(wait(per_thread_stream, event_in, third)));
  CHECK(p.breaks(on_stream("cuStreamQuery", per_thread_stream, third)));
  CHECK_FALSE(p.breaks(on_stream("cuStreamQuery", per_thread_stream, other)));
  p.end(per_thread_stream, capturer);
  CHECK_FALSE(p.tracker.any());
}

TEST_CASE("several captures at once: ending one keeps every other followed") {
  // Three captures of three threads, each with a fork and an event of its own, ended in every order.
  // After each end, the ones still under way keep every breaker and the ended ones have none.
  struct one {
    std::uintptr_t stream, fork, event;
    std::uint64_t thread;
    cudaStreamCaptureMode mode;
    bool blocking;
  };
  const one captures[] = {
      {0x1000, 0x1100, 0xe001, 41, cudaStreamCaptureModeGlobal, false},
      {0x2000, 0x2100, 0xe002, 42, cudaStreamCaptureModeThreadLocal, false},
      {0x3000, 0x3100, 0xe003, 43, cudaStreamCaptureModeRelaxed, true},
  };
  constexpr std::uint64_t prober = 99; // relaxed: only what is the captures' own breaks
  std::array<int, 3> order{0, 1, 2};
  do {
    CAPTURE(order[0]);
    CAPTURE(order[1]);
    CAPTURE(order[2]);
    process p;
    for (const one& c : captures) {
      p.begin(c.stream, c.mode, c.thread, c.blocking);
      CHECK_FALSE(p.breaks(record(c.event, c.stream, c.thread)));
      CHECK_FALSE(p.breaks(wait(c.fork, c.event, c.thread)));
    }
    p.exchange(cudaStreamCaptureModeRelaxed, prober);
    std::array<bool, 3> active{true, true, true};
    for (int ended = 0; ended <= 3; ++ended) {
      if (ended > 0) {
        p.end(captures[order[ended - 1]].stream, captures[order[ended - 1]].thread);
        active[order[ended - 1]] = false;
      }
      CAPTURE(ended);
      for (int i = 0; i < 3; ++i) {
        CAPTURE(i);
        const one& c = captures[i];
        CHECK(p.breaks(on_stream("cuStreamSynchronize", c.stream, prober)) == active[i]);
        CHECK(p.breaks(on_stream("cuStreamQuery", c.fork, prober)) == active[i]);
        CHECK(p.breaks(on_event("cuEventQuery", c.event, prober)) == active[i]);
        // The interaction-mode rule of the capture's own thread (global interaction mode).
        CHECK(p.breaks(plain("cuMemAlloc_v2", c.thread)) ==
              ((active[i] && c.mode != cudaStreamCaptureModeRelaxed) || (active[0] && i != 0)));
      }
      CHECK(p.breaks(plain("cuCtxSynchronize", prober)) == (ended < 3));
      CHECK(p.breaks(on_stream("cuLaunchKernel", 0, prober)) == active[2]); // the blocking one's
      CHECK(p.tracker.any() == (ended < 3));
    }
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST_CASE("what ends nothing: an end from the wrong thread, a failed begin, an end of a forked stream") {
  process p;
  p.begin(captured, cudaStreamCaptureModeGlobal);
  p.end(captured, other, /*succeeded=*/false); // cudaErrorStreamCaptureWrongThread: still capturing
  CHECK(p.breaks(on_stream("cuStreamQuery", captured, other)));
  call_event failed_begin = on_stream("cuStreamBeginCapture_v2", unrelated);
  failed_begin.succeeded = false;
  p.tracker.note(failed_begin);
  p.exchange(cudaStreamCaptureModeRelaxed, other);
  CHECK_FALSE(p.breaks(on_stream("cuStreamQuery", unrelated, other)));
  // cuStreamEndCapture of a forked stream: the capture was not begun there (CUDA says unmatched).
  p.fork(captured, forked);
  p.end(forked);
  CHECK(p.breaks(on_stream("cuStreamQuery", forked, other)));
  CHECK(p.breaks(on_stream("cuStreamQuery", captured, other)));
  p.end(captured);
  CHECK_FALSE(p.tracker.any());
  CHECK_FALSE(p.breaks(plain("cuCtxSynchronize", other)));
}

TEST_CASE("a thread forgotten starts in global interaction mode again") {
  process p;
  p.begin(captured, cudaStreamCaptureModeGlobal, other);
  p.exchange(cudaStreamCaptureModeRelaxed, capturer);
  CHECK_FALSE(p.breaks(plain("cuMemAlloc_v2")));
  p.tracker.forget_thread(capturer);
  CHECK(p.breaks(plain("cuMemAlloc_v2")));
}
