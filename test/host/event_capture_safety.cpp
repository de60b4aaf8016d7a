// Events under CUDA graph capture (docs/cuda-graphs.md, "Events under capture"), checked without a
// GPU: the program carries the fake CUDA of test/fake_cuda (fake_cuda.h), exported so that
// libstreamlike's CUDA calls reach it. The fake puts a stream in a capture as a framework would
// (fake_cuda_set_capture) or as capture_scope does (cudaStreamBeginCapture), remembers where each
// event was recorded, and records every call that would invalidate a capture. Each row of the
// events' tables: a refused call throws a streamlike::error naming itself with the documented code,
// a working call works; no call that would invalidate a capture reaches CUDA, and the capture is as
// it was. The GPU suite checks the same rows against the real driver (test/gpu/event_capture.cu).
#include "../fake_cuda/fake_cuda.h"
#include "fake_cuda_support.hpp"

#include <streamlike/capture.hpp>
#include <streamlike/current_stream.hpp>
#include <streamlike/error.hpp>
#include <streamlike/event.hpp>
#include <streamlike/graph.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <thread>

namespace {

using host_test::new_stream;
using host_test::invalidations;

using streamlike::event;
using streamlike::stream_view;

struct mode_case {
  int mode; // cudaStreamCaptureMode
  const char* name;
};

constexpr mode_case modes[] = {{cudaStreamCaptureModeGlobal, "global"},
                               {cudaStreamCaptureModeThreadLocal, "thread-local"},
                               {cudaStreamCaptureModeRelaxed, "relaxed"}};

// A stream of the fake, destroyed (out of any capture) with the object.
struct fake_stream {
  cudaStream_t handle = new_stream();
  fake_stream() = default;
  fake_stream(const fake_stream&) = delete;
  fake_stream& operator=(const fake_stream&) = delete;
  ~fake_stream() {
    (void)fake_cuda_set_capture(handle, fake_cuda_none, 0);
    (void)cudaStreamDestroy(handle);
  }
};

unsigned long long capture_id(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  REQUIRE(cudaStreamGetCaptureInfo(s, &status, &id) == cudaSuccess);
  return id;
}

// `call` must throw a streamlike::error with `code` whose message names `name` and holds `part`
// (outcome refuses), or not throw (works); either way no call that invalidates a capture reaches
// CUDA.
enum class outcome { works, refuses };

void check_call(const char* name, outcome expected, const std::function<void()>& call, cudaError_t code = cudaSuccess,
                const char* part = "") {
  INFO(name);
  fake_cuda_reset_log();
  bool refused = false;
  std::string message;
  cudaError_t thrown = cudaSuccess;
  try {
    call();
  } catch (const streamlike::error& e) {
    refused = true;
    message = e.what();
    thrown = e.code();
  }
  CHECK_MESSAGE(fake_cuda_invalidations() == 0, "calls that invalidate a capture reached CUDA: ", invalidations());
  CHECK_MESSAGE(refused == (expected == outcome::refuses), "refused: ", refused, ", message: ", message);
  if (refused) {
    CHECK_MESSAGE(message.find(name) != std::string::npos, message);
    CHECK_MESSAGE(message.find(part) != std::string::npos, message);
    CHECK_MESSAGE(thrown == code, "expected ", cudaGetErrorName(code), ", got ", cudaGetErrorName(thrown));
  }
}

constexpr const char* in_capture = "last recorded in a CUDA graph capture";

} // namespace

TEST_CASE("the fake CUDA is in front of the runtime") { REQUIRE(fake_cuda_present() == 1); }

TEST_CASE("an event recorded in a framework's capture refuses sync, is_done and elapsed_ms, in every mode") {
  for (const mode_case& m : modes) {
    INFO(m.name, " capture");
    fake_stream s;
    REQUIRE(fake_cuda_set_capture(s.handle, fake_cuda_active, m.mode) == 0);
    const unsigned long long id = capture_id(s.handle);
    REQUIRE(id != 0);
    event member = event::create({.timing = true});
    member.record(stream_view{s.handle});
    const event recorded = streamlike::record(s.handle, {.timing = true});
    // A view's record() is the owners' (one body): it asks the device capture-safely and
    // remembers the capture.
    const event of_view = stream_view{s.handle}.record();
    const event timed_of_view = stream_view{s.handle}.record({.timing = true});
    const streamlike::shared_stream owner = streamlike::shared_stream::adopt(new_stream());
    CHECK(member.capture_id() == id);
    CHECK(recorded.capture_id() == id);
    CHECK(of_view.capture_id() == id);
    CHECK(timed_of_view.capture_id() == id);
    check_call(
        "event::sync", outcome::refuses, [&] { of_view.sync(); }, cudaErrorCapturedEvent, in_capture);
    check_call(
        "event::sync", outcome::refuses, [&] { member.sync(); }, cudaErrorCapturedEvent, in_capture);
    check_call(
        "event::is_done", outcome::refuses, [&] { (void)recorded.is_done(); }, cudaErrorCapturedEvent, in_capture);
    check_call(
        "event::elapsed_ms (start)", outcome::refuses, [&] { (void)streamlike::elapsed_ms(member, recorded); },
        cudaErrorCapturedEvent, in_capture);
    CHECK(fake_cuda_capture_status(s.handle) == fake_cuda_active);

    // An owner's record() on a capturing stream remembers the capture too.
    REQUIRE(fake_cuda_set_capture(owner.get(), fake_cuda_active, m.mode) == 0);
    const event of_owner = owner.record();
    CHECK(of_owner.capture_id() == capture_id(owner.get()));
    check_call(
        "event::sync", outcome::refuses, [&] { of_owner.sync(); }, cudaErrorCapturedEvent, in_capture);
    REQUIRE(fake_cuda_set_capture(owner.get(), fake_cuda_none, 0) == 0);

    // After the capture: still refused (CUDA answers cudaErrorCapturedEvent), until recorded again.
    REQUIRE(fake_cuda_set_capture(s.handle, fake_cuda_none, 0) == 0);
    check_call(
        "event::sync", outcome::refuses, [&] { member.sync(); }, cudaErrorCapturedEvent, in_capture);
    member.record(stream_view{s.handle});
    CHECK(member.capture_id() == 0);
    check_call("event::sync", outcome::works, [&] { member.sync(); });
    check_call("event::is_done", outcome::works, [&] { CHECK(member.is_done()); });
  }
}

TEST_CASE("wait(stream, event): outside the capture refused, same capture and forks work, external explicit") {
  for (const mode_case& m : modes) {
    INFO(m.name, " capture");
    fake_stream capturing;
    fake_stream eager;
    const event before = streamlike::record(eager.handle); // outside any capture
    const event never = event::create();
    REQUIRE(fake_cuda_set_capture(capturing.handle, fake_cuda_active, m.mode) == 0);
    check_call(
        "wait(stream, event)", outcome::refuses, [&] { streamlike::wait(capturing.handle, before); },
        cudaErrorStreamCaptureIsolation, "outside that capture");
    check_call(
        "wait(stream, event)", outcome::refuses, [&] { streamlike::wait(capturing.handle, never); },
        cudaErrorStreamCaptureIsolation, "outside any capture, or never");
    const event inside = streamlike::record(capturing.handle);
    check_call("wait(stream, event)", outcome::works, [&] { streamlike::wait(capturing.handle, inside); });
    check_call("wait_external(stream, event)", outcome::works,
               [&] { streamlike::wait_external(capturing.handle, before); });
    CHECK(fake_cuda_capture_status(capturing.handle) == fake_cuda_active);
    // A stream outside the capture waiting on an event of it joins the capture (a fork).
    check_call("wait(stream, event)", outcome::works, [&] { streamlike::wait(eager.handle, inside); });
    CHECK(capture_id(eager.handle) == capture_id(capturing.handle));
    REQUIRE(fake_cuda_set_capture(eager.handle, fake_cuda_none, 0) == 0);
    // An invalidated capture: refused by name, before CUDA.
    REQUIRE(fake_cuda_set_capture(capturing.handle, fake_cuda_invalidated, m.mode) == 0);
    check_call(
        "wait(stream, event)", outcome::refuses, [&] { streamlike::wait(capturing.handle, inside); },
        cudaErrorStreamCaptureUnsupported, "invalidated");
    CHECK(fake_cuda_capture_status(capturing.handle) == fake_cuda_invalidated);
  }
}

TEST_CASE("sync and is_done of an event recorded outside any capture, during a capture_scope") {
  fake_stream other;
  const event done = streamlike::record(other.handle);
  for (const mode_case& m : modes) {
    INFO(m.name, " capture");
    fake_stream s;
    {
      auto scope = streamlike::capture_scope::begin(s.handle, static_cast<streamlike::capture_mode>(m.mode));
      const outcome here = m.mode == cudaStreamCaptureModeRelaxed ? outcome::works : outcome::refuses;
      check_call(
          "event::sync", here, [&] { done.sync(); }, cudaErrorStreamCaptureUnsupported, "this thread began");
      check_call(
          "event::is_done", here, [&] { (void)done.is_done(); }, cudaErrorStreamCaptureUnsupported, "cudaEventQuery");
      // Another thread: CUDA prohibits the call there only during a global capture.
      const outcome there = m.mode == cudaStreamCaptureModeGlobal ? outcome::refuses : outcome::works;
      std::thread([&] {
        check_call(
            "event::sync", there, [&] { done.sync(); }, cudaErrorStreamCaptureUnsupported,
            "another thread began a CUDA graph capture in global mode");
      }).join();
      CHECK(fake_cuda_capture_status(s.handle) == fake_cuda_active);
      streamlike::graph g = scope.end();
      CHECK(g);
    }
    check_call("event::sync", outcome::works, [&] { done.sync(); }); // the capture is over
  }
}

TEST_CASE("a capture streamlike did not begin: seen through the current stream, else only CUDA can judge") {
  // Its stream current (as torch.cuda.graph and CuPy's capture make it): refused by name, the
  // capture intact. docs/cuda-graphs.md lists the other case: streamlike cannot know the capture
  // runs, so the call reaches CUDA, which (in global mode) refuses it and invalidates the capture.
  // This row pins that limit down; test/host/capture_interaction.cpp has the whole table.
  fake_stream other;
  fake_stream s;
  const event done = streamlike::record(other.handle);
  REQUIRE(fake_cuda_set_capture(s.handle, fake_cuda_active, cudaStreamCaptureModeGlobal) == 0);
  {
    const streamlike::scoped_current_stream current{stream_view{s.handle}};
    check_call(
        "event::sync", outcome::refuses, [&] { done.sync(); }, cudaErrorStreamCaptureUnsupported,
        "the calling thread's current stream is capturing");
    CHECK(fake_cuda_capture_status(s.handle) == fake_cuda_active);
  }
  fake_cuda_reset_log();
  CHECK_THROWS_AS(done.sync(), streamlike::error); // CUDA's refusal
  CHECK(fake_cuda_invalidations() == 1);
  CHECK(fake_cuda_capture_status(s.handle) == fake_cuda_invalidated);
}
